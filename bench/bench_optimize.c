/* Optimizer benchmark: how the transpose optimizer and the level-1 pipeline scale on TF-style NHWC graphs.
 * bench/run_optimize.sh runs it at 10k/100k/1M nodes, next to ONNX Runtime's session creation on the same
 * files.
 *
 *   bench_optimize gen FILE NODES     writes a TF-style graph of about NODES nodes (blocks of 8, see
 * gen_block) bench_optimize time FILE [REPS]   optimize FILE nodes load_s infer_s transpose_s pipeline_s
 *                                     transposes_before after_transpose after_pipeline
 *                                     (each time the minimum over REPS fresh loads; default 3)
 *
 * Each timed step starts from a freshly loaded model (the passes edit it in place); the load itself is timed
 * separately and never included in the pass times.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/passcheck.h"
#include "properties/runner/util.h"

enum { CH = 8, HW = 8, BLOCK_NODES = 8 };

static int fail(const char *what, const pc_error *err)
{
    fprintf(stderr, "bench_optimize: %s: %s\n", what, err->message);
    return 1;
}

/* A float initializer of the given dims filled with a small deterministic pattern. */
static pc_value *add_const(pc_graph *g, int32_t rank, const int64_t *dims, float base, pc_error *err)
{
    pc_tensor *t = pc_tensor_create(g->model, NULL, PC_DTYPE_FLOAT, rank, dims, err);
    if (!t) return NULL;
    for (uint64_t i = 0; i < t->n_elements; i++)
        ((float *)t->data)[i] = base + 0.01f * (float)(i % 7);
    pc_value *v = pc_graph_add_value(g, NULL, "c", err);
    if (!v || pc_graph_set_initializer(g, v, t, err) != PC_OK) return NULL;
    return v;
}

static pc_node *add_op(pc_graph *g, const char *op, pc_value *a, pc_value *b, pc_error *err)
{
    pc_value *ins[2] = {a, b};
    return pc_graph_add_node(g, op, "", b ? 2 : 1, ins, 1, NULL, err);
}

static pc_node *add_transpose(pc_graph *g, pc_value *x, const int64_t perm[4], pc_error *err)
{
    pc_node *n = add_op(g, "Transpose", x, NULL, err);
    if (n && pc_node_set_attr_ints(n, "perm", 4, perm, err) != PC_OK) return NULL;
    return n;
}

/* One converter-style block on an NHWC value x (8 nodes):
 *   T(0,3,1,2) → Conv 1x1 (shared weights) → T(0,2,3,1) → Relu → Add(c[C]) → Mul(c[1,1,1,C]) → Sigmoid → last
 * where `last` is Tanh, or in every 8th block an Add of the block input (a residual branch, which keeps one
 * Transpose pair in place: neither side of the Add gets cheaper by moving it).
 * Per-block constants are tiny ([C]), so a 1M-node file stays near 100 MB. */
static pc_value *gen_block(pc_graph *g, pc_value *x, pc_value *w, pc_value *b, int index, pc_error *err)
{
    static const int64_t to_nchw[4] = {0, 3, 1, 2}, to_nhwc[4] = {0, 2, 3, 1};
    static const int64_t c1[1] = {CH}, c4[4] = {1, 1, 1, CH};
    pc_node *t1 = add_transpose(g, x, to_nchw, err);
    if (!t1) return NULL;
    pc_value *cin[3] = {t1->outputs[0], w, b};
    pc_node *conv = pc_graph_add_node(g, "Conv", "", 3, cin, 1, NULL, err);
    static const int64_t k11[2] = {1, 1};
    if (!conv || pc_node_set_attr_ints(conv, "kernel_shape", 2, k11, err) != PC_OK) return NULL;
    pc_node *t2 = add_transpose(g, conv->outputs[0], to_nhwc, err);
    pc_node *relu = t2 ? add_op(g, "Relu", t2->outputs[0], NULL, err) : NULL;
    pc_value *ka = relu ? add_const(g, 1, c1, 0.1f * (float)(index % 5), err) : NULL;
    pc_node *add = ka ? add_op(g, "Add", relu->outputs[0], ka, err) : NULL;
    pc_value *km = add ? add_const(g, 4, c4, 0.9f, err) : NULL;
    pc_node *mul = km ? add_op(g, "Mul", add->outputs[0], km, err) : NULL;
    pc_node *sig = mul ? add_op(g, "Sigmoid", mul->outputs[0], NULL, err) : NULL;
    pc_node *res = !sig             ? NULL
                   : index % 8 == 7 ? add_op(g, "Add", sig->outputs[0], x, err)
                                    : add_op(g, "Tanh", sig->outputs[0], NULL, err);
    return res ? res->outputs[0] : NULL;
}

static int gen(const char *path, long n_nodes)
{
    pc_error err;
    pc_model *m;
    if (pc_model_create(&m, &err) != PC_OK) return fail("create", &err);
    if (pc_model_set_opset(m, "", 13, &err) != PC_OK) return fail("opset", &err);
    pc_graph *g = m->graph;
    pc_dim dims[4] = {{PC_DIM_KNOWN, 1, NULL, NULL},
                      {PC_DIM_KNOWN, HW, NULL, NULL},
                      {PC_DIM_KNOWN, HW, NULL, NULL},
                      {PC_DIM_KNOWN, CH, NULL, NULL}};
    pc_type t = {.kind = PC_TYPE_TENSOR, .elem = PC_DTYPE_FLOAT, .shape = {4, dims}};
    pc_value *x = pc_graph_add_value(g, "x", NULL, &err);
    if (!x || pc_value_set_type(x, &t, &err) != PC_OK || pc_graph_add_input(g, x, &err) != PC_OK)
        return fail("input", &err);
    static const int64_t wd[4] = {CH, CH, 1, 1}, bd[1] = {CH};
    pc_value *w = add_const(g, 4, wd, -0.02f, &err);
    pc_value *b = w ? add_const(g, 1, bd, 0.0f, &err) : NULL;
    if (!b) return fail("weights", &err);
    pc_value *cur = x;
    long blocks = n_nodes / BLOCK_NODES > 0 ? n_nodes / BLOCK_NODES : 1;
    for (long i = 0; i < blocks; i++) {
        cur = gen_block(g, cur, w, b, (int)(i % 1000), &err); /* 1000: a multiple of 8 */
        if (!cur) return fail("block", &err);
    }
    if (pc_value_set_type(cur, &t, &err) != PC_OK || pc_graph_add_output(g, cur, &err) != PC_OK)
        return fail("output", &err);
    if (pc_graph_infer_shapes(g, &err) != PC_OK) return fail("shape inference", &err);
    if (pc_model_verify(m, &err) != PC_OK || pc_model_save_file(m, path, &err) != PC_OK)
        return fail(path, &err);
    printf("generated %s nodes=%u\n", path, g->n_nodes);
    pc_model_free(m);
    return 0;
}

static uint64_t count_transposes(const pc_graph *g)
{
    uint64_t n = 0;
    for (const pc_node *node = g->first; node; node = node->next)
        n += strcmp(node->op_type, "Transpose") == 0 && node->domain[0] == '\0';
    return n;
}

typedef struct timing {
    double load, infer, transpose, pipeline;
    uint32_t nodes;
    uint64_t transposes_before, after_transpose, after_pipeline;
} timing;

static double min_d(double a, double b)
{
    return a < b ? a : b;
}

/* One repetition: load twice (once per measured step) so each step starts from the file's graph. */
static int time_once(const char *path, timing *best, bool first)
{
    pc_error err;
    pc_model *m;
    double t0 = pc_now_seconds();
    if (pc_model_load_file(path, NULL, &m, &err) != PC_OK) return fail(path, &err);
    double load = pc_now_seconds() - t0;
    best->nodes = m->graph->n_nodes;
    best->transposes_before = count_transposes(m->graph);
    /* the transpose optimizer needs ranks; the file has value_info, this fills anything missing */
    t0 = pc_now_seconds();
    if (pc_graph_infer_shapes(m->graph, &err) != PC_OK) return fail("shape inference", &err);
    double infer = pc_now_seconds() - t0;
    pc_pass_options po;
    memset(&po, 0, sizeof po);
    po.max_fold_elements = 1u << 16;
    po.pass_name = "transpose_optimize";
    bool changed = false;
    t0 = pc_now_seconds();
    if (pc_transpose_optimize(m->graph, &po, &changed, &err) != PC_OK)
        return fail("pc_transpose_optimize", &err);
    double transpose = pc_now_seconds() - t0;
    best->after_transpose = count_transposes(m->graph);
    pc_model_free(m);

    if (pc_model_load_file(path, NULL, &m, &err) != PC_OK) return fail(path, &err);
    pc_optimize_options oo;
    pc_optimize_options_default(&oo);
    oo.level = PC_LEVEL_EXTENDED;
    oo.verify_each_pass = false; /* the Debug default; a benchmark measures the passes, not the verifier */
    t0 = pc_now_seconds();
    if (pc_model_optimize(m, &oo, NULL, &err) != PC_OK) return fail("pc_model_optimize", &err);
    double pipeline = pc_now_seconds() - t0;
    best->after_pipeline = count_transposes(m->graph);
    pc_model_free(m);

    if (first) {
        best->load = load, best->infer = infer, best->transpose = transpose, best->pipeline = pipeline;
    } else {
        best->load = min_d(best->load, load), best->infer = min_d(best->infer, infer);
        best->transpose = min_d(best->transpose, transpose), best->pipeline = min_d(best->pipeline, pipeline);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "gen") == 0) {
        char *end;
        long n = strtol(argv[3], &end, 10);
        if (*end || n < BLOCK_NODES || n > 100000000) {
            fprintf(stderr, "bench_optimize: bad NODES '%s'\n", argv[3]);
            return 2;
        }
        return gen(argv[2], n);
    }
    if (argc >= 3 && strcmp(argv[1], "time") == 0) {
        long reps = argc >= 4 ? strtol(argv[3], NULL, 10) : 3;
        if (reps < 1 || reps > 1000) {
            fprintf(stderr, "bench_optimize: bad REPS\n");
            return 2;
        }
        timing best;
        memset(&best, 0, sizeof best);
        for (long r = 0; r < reps; r++)
            if (time_once(argv[2], &best, r == 0)) return 1;
        printf("optimize %s %u %.6f %.6f %.6f %.6f %llu %llu %llu\n", argv[2], best.nodes, best.load,
               best.infer, best.transpose, best.pipeline, (unsigned long long)best.transposes_before,
               (unsigned long long)best.after_transpose, (unsigned long long)best.after_pipeline);
        return 0;
    }
    fprintf(stderr, "usage: bench_optimize gen FILE NODES | bench_optimize time FILE [REPS]\n");
    return 2;
}
