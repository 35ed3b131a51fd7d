/* Reference-executor benchmark: per-node overhead on a small float graph (what the property suite pays
 * thousands of times per second). bench/run_ref.sh runs it next to ONNX Runtime on the same model and prints
 * the ratio.
 *
 *   bench_ref gen FILE [NODES]     writes a chain of NODES (default 20) float ops on a [1,64] input
 *   bench_ref time FILE [RUNS [DIMS]]  ref_run FILE runs us_per_run us_per_node (median of 5 batches)
 *   bench_ref shape FILE           the first input's dims as ort_time.js takes them ("1x3x224x224")
 * The input: float, the first graph input's dims (DIMS when given, for models with symbolic dims; else
 * unknown ones 1), x[i] = ((i mod 64) - 32) / 16, as ort_time.js makes it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reference/reference.h"
#include "properties/runner/util.h"

static int fail(const char *what, const pc_error *err)
{
    fprintf(stderr, "bench_ref: %s: %s\n", what, err->message);
    return 1;
}

/* x:[1,64] → 20 nodes cycling Add(c), Mul(c), Relu, Sigmoid, Tanh → y. Constants are initializers. */
static int gen(const char *path, int n_nodes)
{
    pc_error err;
    pc_model *m;
    if (pc_model_create(&m, &err) != PC_OK) return fail("create", &err);
    pc_graph *g = m->graph;
    pc_dim dims[2] = {{PC_DIM_KNOWN, 1, NULL, NULL}, {PC_DIM_KNOWN, 64, NULL, NULL}};
    pc_type t = {.kind = PC_TYPE_TENSOR, .elem = PC_DTYPE_FLOAT, .shape = {2, dims}};
    pc_value *x = pc_graph_add_value(g, "x", NULL, &err);
    if (!x || pc_value_set_type(x, &t, &err) != PC_OK || pc_graph_add_input(g, x, &err) != PC_OK)
        return fail("input", &err);
    int64_t cdims[1] = {64};
    pc_tensor *ct = pc_tensor_create(m, "c", PC_DTYPE_FLOAT, 1, cdims, &err);
    pc_value *c = ct ? pc_graph_add_value(g, "c", NULL, &err) : NULL;
    if (!c) return fail("constant", &err);
    for (int i = 0; i < 64; i++)
        ((float *)ct->data)[i] = 0.5f + (float)i / 128.0f;
    if (pc_graph_set_initializer(g, c, ct, &err) != PC_OK) return fail("initializer", &err);
    static const char *const ops[5] = {"Add", "Mul", "Relu", "Sigmoid", "Tanh"};
    pc_value *cur = x;
    for (int i = 0; i < n_nodes; i++) {
        const char *op = ops[i % 5];
        pc_value *ins[2] = {cur, c};
        pc_node *n = pc_graph_add_node(g, op, "", i % 5 < 2 ? 2 : 1, ins, 1, NULL, &err);
        if (!n) return fail("node", &err);
        cur = n->outputs[0];
    }
    if (pc_graph_add_output(g, cur, &err) != PC_OK || pc_model_verify(m, &err) != PC_OK ||
        pc_model_save_file(m, path, &err) != PC_OK)
        return fail(path, &err);
    pc_model_free(m);
    printf("generated %s nodes=%d\n", path, n_nodes);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The first graph input's dims (unknown ones 1) into dims; its rank, or -1 when it has none. */
static int32_t input_dims(const pc_model *m, int64_t *dims)
{
    const pc_graph *g = m->graph;
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        const pc_type *t = &g->inputs[i]->type;
        if (g->inputs[i]->initializer || t->kind != PC_TYPE_TENSOR || t->shape.rank < 0) continue;
        for (int32_t d = 0; d < t->shape.rank; d++)
            dims[d] = t->shape.dims[d].kind == PC_DIM_KNOWN ? t->shape.dims[d].size : 1;
        return t->shape.rank;
    }
    return -1;
}

static int print_shape(const char *path)
{
    pc_error err;
    pc_model *m;
    if (pc_model_load_file(path, NULL, &m, &err) != PC_OK) return fail(path, &err);
    int64_t dims[PC_MAX_RANK];
    int32_t r = input_dims(m, dims);
    pc_model_free(m);
    if (r < 0) return fail(path, &(pc_error){.status = PC_ERR_UNSUPPORTED, .message = "no tensor input"});
    for (int32_t d = 0; d < r; d++)
        printf("%s%lld", d ? "x" : "", (long long)dims[d]);
    printf("\n");
    return 0;
}

/* "1x3x48x320" into dims; its rank, or -1 when it is not 1..PC_MAX_RANK positive sizes joined by 'x'. */
static int32_t parse_dims(const char *s, int64_t *dims)
{
    int32_t r = 0;
    for (;;) {
        char *end;
        if (*s < '0' || *s > '9' || r == PC_MAX_RANK) return -1;
        long long v = strtoll(s, &end, 10);
        if (v < 1 || v > INT32_MAX) return -1;
        dims[r++] = v;
        if (*end == '\0') return r;
        if (*end != 'x') return -1;
        s = end + 1;
    }
}

static int time_runs(const char *path, long runs, const char *dims_text)
{
    pc_error err;
    pc_model *m;
    if (pc_model_load_file(path, NULL, &m, &err) != PC_OK) return fail(path, &err);
    int64_t dims[PC_MAX_RANK];
    int32_t rank = dims_text ? parse_dims(dims_text, dims) : input_dims(m, dims);
    if (rank < 0 && dims_text)
        return fail(dims_text,
                    &(pc_error){.status = PC_ERR_USAGE, .message = "DIMS must be sizes like 1x3x48x320"});
    if (rank < 0) return fail(path, &(pc_error){.status = PC_ERR_UNSUPPORTED, .message = "no tensor input"});
    pc_data *x = pc_data_new_tensor(PC_DTYPE_FLOAT, rank, dims, &err);
    if (!x) return fail("input", &err);
    for (uint64_t i = 0; i < x->n_elements; i++)
        ((float *)x->data)[i] = (float)((int)(i % 64) - 32) / 16.0f;
    double batches[5];
    for (int b = 0; b < 5; b++) {
        double t0 = pc_now_seconds();
        for (long r = 0; r < runs; r++) {
            pc_data **outs;
            if (pc_ref_run(m, 1, &x, &outs, &err) != PC_OK) return fail("run", &err);
            pc_ref_free_outputs(m, outs);
        }
        batches[b] = (pc_now_seconds() - t0) / (double)runs;
    }
    qsort(batches, 5, sizeof batches[0], cmp_double);
    printf("ref_run %s %ld %.3f %.3f\n", path, runs, batches[2] * 1e6, batches[2] * 1e6 / m->graph->n_nodes);
    pc_data_unref(x);
    pc_model_free(m);
    return 0;
}

static bool parse_count(const char *s, long max, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s < '0' || *s > '9' || *end || v < 1 || v > max) return false;
    *out = v;
    return true;
}

int main(int argc, char **argv)
{
    long count = 0;
    bool is_gen = argc >= 3 && strcmp(argv[1], "gen") == 0,
         is_time = argc >= 3 && strcmp(argv[1], "time") == 0;
    if (argc == 3 && strcmp(argv[1], "shape") == 0) return print_shape(argv[2]);
    if ((is_gen || is_time) && argc <= 4 + is_time && (argc == 3 || parse_count(argv[3], 1000000, &count))) {
        if (is_gen) return gen(argv[2], count ? (int)count : 20);
        return time_runs(argv[2], count ? count : 2000, argc == 5 ? argv[4] : NULL);
    }
    fprintf(stderr,
            "usage: bench_ref gen FILE [NODES 1..1000000] | bench_ref time FILE [RUNS 1..1000000 [DIMS]] | "
            "bench_ref shape FILE\n");
    return 2;
}
