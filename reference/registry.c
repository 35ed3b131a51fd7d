/* The op registry: every family's table merged into one array sorted by (domain, op_type), searched with
 * bsearch and a full string compare. Built once, on first use. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "reference/ref_internal.h"

/* Families: one table per ops_*.c. */
#define REF_FAMILIES(X)                                                                                      \
    X(ref_ops_elementwise)                                                                                   \
    X(ref_ops_tensor)                                                                                        \
    X(ref_ops_reduce)                                                                                        \
    X(ref_ops_nn)                                                                                            \
    X(ref_ops_conv)                                                                                          \
    X(ref_ops_quant)                                                                                         \
    X(ref_ops_control)                                                                                       \
    X(ref_ops_sequence)                                                                                      \
    X(ref_ops_rnn)                                                                                           \
    X(ref_ops_misc)                                                                                          \
    X(ref_ops_signal)                                                                                        \
    X(ref_ops_text)                                                                                          \
    X(ref_ops_internal)                                                                                      \
    X(ref_ops_blocked)

#define DECLARE(name) REF_OP_TABLE(name)
REF_FAMILIES(DECLARE)
#undef DECLARE

static ref_op *registry;
static size_t registry_count;
static pthread_once_t registry_once = PTHREAD_ONCE_INIT;

static int op_cmp(const void *a, const void *b)
{
    const ref_op *x = a, *y = b;
    int c = pc_name_cmp(x->domain, y->domain);
    return c ? c : pc_name_cmp(x->op_type, y->op_type);
}

static void registry_build(void)
{
    size_t n = 0;
#define COUNT(name) n += name##_count;
    REF_FAMILIES(COUNT)
#undef COUNT
    ref_op *ops = malloc(n * sizeof *ops);
    if (!ops) return; /* every lookup then reports the op as unsupported */
    size_t k = 0;
#define COPY(name)                                                                                           \
    memcpy(ops + k, name, name##_count * sizeof *ops);                                                       \
    k += name##_count;
    REF_FAMILIES(COPY)
#undef COPY
    qsort(ops, n, sizeof *ops, op_cmp);
    registry = ops;
    registry_count = n;
}

const ref_op *ref_op_find(const char *domain, const char *op_type)
{
    pthread_once(&registry_once, registry_build);
    if (!registry) return NULL;
    ref_op key = {domain, op_type, NULL};
    return bsearch(&key, registry, registry_count, sizeof *registry, op_cmp);
}

bool pc_ref_supports(const char *domain, const char *op_type)
{
    return ref_op_find(domain ? domain : "", op_type) != NULL;
}

size_t ref_registry_duplicates(char *first, size_t size)
{
    pthread_once(&registry_once, registry_build);
    size_t dups = 0;
    for (size_t i = 1; i < registry_count; i++)
        if (op_cmp(&registry[i - 1], &registry[i]) == 0 && dups++ == 0 && size)
            snprintf(first, size, "%s:%s", registry[i].domain, registry[i].op_type);
    return dups;
}

size_t ref_registry_size(void)
{
    pthread_once(&registry_once, registry_build);
    return registry_count;
}
