/* schema.c — operator schema lookup over the generated table in onnx_ops.inc, plus the table of domains
 * passcheck accepts in opset_import.
 *
 * The table is sorted by (domain, op_type, since_version) with strings in strcmp order. A lookup hashes
 * (domain, op_type) into an index of each op's first entry, built once, confirms the candidate with strcmp
 * (a hash is never trusted alone) and walks the op's few versions: the verifier looks up every node after
 * every pass, and the binary search it replaces cost ~18 strcmp calls per lookup. pc_schema_check_table()
 * verifies the sort order and the other invariants the lookups rely on; debug builds (PC_DEBUG_CHECKS) run it
 * once before the first lookup and abort on a broken table, and test_schema calls it. */
#include "core/schema/schema.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <threads.h>

#include "core/base/strmap.h"

#ifdef PC_DEBUG_CHECKS
#include <stdatomic.h>
#endif

#include "core/schema/onnx_ops.inc"

enum { PC_ONNX_OPS_COUNT = sizeof pc_onnx_ops / sizeof pc_onnx_ops[0] };

/* Domains accepted in opset_import, with their canonical spelling ("" for ai.onnx; "ai.onnx" is an alias).
 * The opset ranges are what passcheck accepts, which can run ahead of the schema data: onnx 1.12 defines
 * ai.onnx up to opset 17 and ai.onnx.ml up to 3, and at newer opsets the newest known version of each op
 * applies. */
static const pc_domain_info pc_domains[] = {
    /* ONNX 1.12's definitions reach ai.onnx 17 and ai.onnx.ml 3: models at newer opsets are accepted, and
     * checked against schemas only where the table is current (see schema_max_opset). */
    {"", 1, 21, true, 17},
    {"ai.onnx.ml", 1, 5, true, 3},
    {"ai.onnx.preview.training", 1, 1, true, 1},
    {"com.microsoft", 1, 1, false, 0},
    {"com.ms.internal.nhwc", 1, 21, false, 0},
    {"com.passcheck", 1, 1, false, 0},
    {"com.passcheck.blocked", 1, 1, false, 0},
    {"com.passcheck.systolic", 1, 1, false, 0},
};

enum { PC_DOMAIN_COUNT = sizeof pc_domains / sizeof pc_domains[0] };

/* A domain as shown in messages. */
#define SHOW_DOMAIN(d) ((d)[0] ? (d) : "ai.onnx")

/* NULL and the "ai.onnx" alias both mean the default domain. */
static const char *canonical_domain(const char *domain)
{
    if (domain == NULL || strcmp(domain, "ai.onnx") == 0) return "";
    return domain;
}

/* Three-way comparison of an entry against the key (domain, op_type, version). */
static int key_compare(const pc_op_schema *s, const char *domain, const char *op_type, int64_t version)
{
    int c = strcmp(s->domain, domain);
    if (c != 0) return c;
    c = strcmp(s->op_type, op_type);
    if (c != 0) return c;
    return (s->since_version > version) - (s->since_version < version);
}

static bool same_op(const pc_op_schema *s, const char *domain, const char *op_type)
{
    return pc_name_eq(s->domain, domain) && pc_name_eq(s->op_type, op_type);
}

/* The op index: open addressing over the first entry of each (domain, op_type), at most half full. */
enum { OP_INDEX_SIZE = 4096, OP_INDEX_EMPTY = 0xffff };
_Static_assert((size_t)OP_INDEX_SIZE >= 2 * (size_t)PC_ONNX_OPS_COUNT,
               "the op index must stay at most half full");
_Static_assert((size_t)PC_ONNX_OPS_COUNT < (size_t)OP_INDEX_EMPTY,
               "entry indices must fit the index's uint16_t slots");
static uint16_t op_index[OP_INDEX_SIZE];
static uint16_t op_last[PC_ONNX_OPS_COUNT]; /* for an op's first entry: the index of its newest entry */
static once_flag op_index_once = ONCE_FLAG_INIT;

/* core's string hash (core/base/strmap.h) of each name; the domain is "" for almost every op */
static uint32_t op_hash(const char *domain, const char *op_type)
{
    uint64_t h = pc_str_hash(op_type) ^ pc_str_hash(domain) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h ^ h >> 32);
}

static void op_index_build(void)
{
    memset(op_index, 0xff, sizeof op_index);
    for (size_t i = 0; i < PC_ONNX_OPS_COUNT; i++) {
        const pc_op_schema *s = &pc_onnx_ops[i];
        if (i > 0 && same_op(&pc_onnx_ops[i - 1], s->domain, s->op_type)) continue;
        size_t last = i;
        while (last + 1 < PC_ONNX_OPS_COUNT && same_op(&pc_onnx_ops[last + 1], s->domain, s->op_type))
            last++;
        op_last[i] = (uint16_t)last;
        uint32_t slot = op_hash(s->domain, s->op_type) & (OP_INDEX_SIZE - 1);
        while (op_index[slot] != OP_INDEX_EMPTY)
            slot = (slot + 1) & (OP_INDEX_SIZE - 1);
        op_index[slot] = (uint16_t)i;
    }
}

/* Index of the op's oldest entry; PC_ONNX_OPS_COUNT when the table has no such op. */
static size_t op_first(const char *domain, const char *op_type)
{
    call_once(&op_index_once, op_index_build);
    uint32_t slot = op_hash(domain, op_type) & (OP_INDEX_SIZE - 1);
    for (; op_index[slot] != OP_INDEX_EMPTY; slot = (slot + 1) & (OP_INDEX_SIZE - 1))
        if (same_op(&pc_onnx_ops[op_index[slot]], domain, op_type)) return op_index[slot];
    return PC_ONNX_OPS_COUNT;
}

#ifdef PC_DEBUG_CHECKS
static void debug_check_once(void)
{
    static atomic_int checked; /* 0: not yet, 1: passed. Two threads may both check; that is harmless. */
    if (atomic_load_explicit(&checked, memory_order_acquire)) return;
    char diag[256];
    if (!pc_schema_check_table(diag, sizeof diag)) {
        fprintf(stderr, "passcheck: internal error: operator schema table: %s\n", diag);
        abort();
    }
    atomic_store_explicit(&checked, 1, memory_order_release);
}
#define DEBUG_CHECK_ONCE() debug_check_once()
#else
#define DEBUG_CHECK_ONCE() ((void)0)
#endif

const pc_op_schema *pc_schema_lookup(const char *domain, const char *op_type, int64_t opset)
{
    DEBUG_CHECK_ONCE();
    if (op_type == NULL) return NULL;
    domain = canonical_domain(domain);
    size_t i = op_first(domain, op_type);
    if (i == PC_ONNX_OPS_COUNT || pc_onnx_ops[i].since_version > opset) return NULL;
    /* the newest version <= opset: the op's entries are adjacent and sorted by since_version */
    for (size_t last = op_last[i]; i < last && pc_onnx_ops[i + 1].since_version <= opset;)
        i++;
    return &pc_onnx_ops[i];
}

/* Returns the oldest version, so a caller that got NULL from pc_schema_lookup can report the opset an op
 * first appeared in ("LayerNormalization needs opset >= 17"). */
const pc_op_schema *pc_schema_lookup_any(const char *domain, const char *op_type)
{
    DEBUG_CHECK_ONCE();
    if (op_type == NULL) return NULL;
    size_t i = op_first(canonical_domain(domain), op_type);
    return i == PC_ONNX_OPS_COUNT ? NULL : &pc_onnx_ops[i];
}

/* Attributes are few (at most a couple of dozen) and sorted by name; a linear scan with strcmp is enough. */
const pc_attr_schema *pc_schema_attr(const pc_op_schema *schema, const char *name)
{
    if (schema == NULL || name == NULL) return NULL;
    for (uint16_t i = 0; i < schema->n_attrs; i++) {
        int c = pc_name_cmp(schema->attrs[i].name, name);
        if (c == 0) return &schema->attrs[i];
        if (c > 0) break;
    }
    return NULL;
}

const pc_domain_info *pc_schema_domain(const char *domain)
{
    domain = canonical_domain(domain);
    for (size_t i = 0; i < PC_DOMAIN_COUNT; i++)
        if (pc_name_eq(pc_domains[i].domain, domain)) return &pc_domains[i];
    return NULL;
}

size_t pc_schema_count(void)
{
    return PC_ONNX_OPS_COUNT;
}

const pc_op_schema *pc_schema_at(size_t index)
{
    return index < PC_ONNX_OPS_COUNT ? &pc_onnx_ops[index] : NULL;
}

/* ----------------------------------------------------------------------------------------------------------
 * Table invariants. Not in schema.h: it is for debug builds and test_schema, which declares it itself.
 */
static bool check_fail(char *diag, size_t diag_size, const char *fmt, ...) PC_PRINTF(3, 4);

static bool check_fail(char *diag, size_t diag_size, const char *fmt, ...)
{
    if (diag != NULL && diag_size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(diag, diag_size, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool check_entry(const pc_op_schema *s, size_t i, char *diag, size_t diag_size)
{
    if (s->domain == NULL || s->op_type == NULL || s->op_type[0] == '\0')
        return check_fail(diag, diag_size, "entry %zu: missing domain or op_type", i);
    const char *dom = SHOW_DOMAIN(s->domain), *op = s->op_type;
    const pc_domain_info *d = pc_schema_domain(s->domain);
    if (d == NULL || strcmp(d->domain, s->domain) != 0 || !d->has_schemas)
        return check_fail(diag, diag_size, "entry %zu (%s): domain '%s' is not a schema domain", i, op, dom);
    if (s->since_version < 1 || s->since_version > d->max_opset)
        return check_fail(diag, diag_size, "%s %s-%d: since_version outside opsets %d..%d", dom, op,
                          (int)s->since_version, (int)d->min_opset, (int)d->max_opset);
    if (s->min_inputs > s->max_inputs || s->min_outputs > s->max_outputs)
        return check_fail(diag, diag_size, "%s %s-%d: min count above max", dom, op, (int)s->since_version);
    if ((s->n_attrs == 0) != (s->attrs == NULL))
        return check_fail(diag, diag_size, "%s %s-%d: n_attrs and attrs disagree", dom, op,
                          (int)s->since_version);
    for (uint16_t a = 0; a < s->n_attrs; a++) {
        const pc_attr_schema *at = &s->attrs[a];
        if (at->name == NULL || at->name[0] == '\0')
            return check_fail(diag, diag_size, "%s %s-%d: attribute %u has no name", dom, op,
                              (int)s->since_version, (unsigned)a);
        if (at->type <= PC_ATTR_UNDEFINED || at->type >= PC_ATTR_TYPE_COUNT)
            return check_fail(diag, diag_size, "%s %s-%d: attribute '%s' has type %d", dom, op,
                              (int)s->since_version, at->name, (int)at->type);
        if (a > 0 && strcmp(s->attrs[a - 1].name, at->name) >= 0)
            return check_fail(diag, diag_size, "%s %s-%d: attributes not sorted at '%s'", dom, op,
                              (int)s->since_version, at->name);
    }
    return true;
}

/* Checks that the schema table is strictly sorted by (domain, op_type, since_version) in strcmp order (what
 * the binary searches need), that each entry is well formed, and that the domain table has unique canonical
 * names. On failure writes the first problem to diag (may be NULL) and returns false. */
bool pc_schema_check_table(char *diag, size_t diag_size)
{
    for (size_t i = 0; i < PC_DOMAIN_COUNT; i++) {
        if (strcmp(pc_domains[i].domain, "ai.onnx") == 0)
            return check_fail(diag, diag_size, "domain table lists the alias 'ai.onnx'");
        if (pc_domains[i].min_opset < 1 || pc_domains[i].min_opset > pc_domains[i].max_opset)
            return check_fail(diag, diag_size, "domain '%s': bad opset range", pc_domains[i].domain);
        for (size_t j = 0; j < i; j++)
            if (strcmp(pc_domains[i].domain, pc_domains[j].domain) == 0)
                return check_fail(diag, diag_size, "domain '%s' listed twice", pc_domains[i].domain);
    }
    for (size_t i = 0; i < PC_ONNX_OPS_COUNT; i++) {
        const pc_op_schema *s = &pc_onnx_ops[i];
        if (!check_entry(s, i, diag, diag_size)) return false;
        if (i > 0 && key_compare(&pc_onnx_ops[i - 1], s->domain, s->op_type, s->since_version) >= 0)
            return check_fail(diag, diag_size, "entry %zu (%s %s-%d) is not after entry %zu (%s %s-%d)", i,
                              SHOW_DOMAIN(s->domain), s->op_type, (int)s->since_version, i - 1,
                              SHOW_DOMAIN(pc_onnx_ops[i - 1].domain), pc_onnx_ops[i - 1].op_type,
                              (int)pc_onnx_ops[i - 1].since_version);
    }
    if (diag != NULL && diag_size > 0) diag[0] = '\0';
    return true;
}
