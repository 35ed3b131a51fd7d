/* The pipeline reaches a fixed point: optimizing its own output again (saved, reloaded, shapes inferred, same
 * options, as the idempotence property does) gives the same bytes. The cases are the shapes of the seed-1
 * suite findings idempotence@end-to-end/fuse_{gelu,relu_clip,reshape,conv_bn,conv_mul}: a pair that levels
 * 0/1 cannot fuse (different annotations, or a Transpose between them that only the layout transformer and
 * the transpose optimizer remove) becomes fusable after partitioning; the second optimize fused it before its
 * partitioning. Also: an EP that runs the five GELU nodes but not Gelu keeps them (a per-EP fusion must not
 * leave a node its EP refuses, and the second optimize must not fuse what the first refused). Outputs are
 * checked against the original on the reference executor. */
#include "core/passes/pass.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

typedef struct fix_case {
    const char *name;
    const char *eps;     /* --ep list */
    const char *ep_text; /* extra EP description (docs/ep.md), or NULL */
    double rtol, atol;   /* against the original */
} fix_case;

static const pc_ep *const *case_eps(pc_ep_registry *reg, const fix_case *c, uint32_t *n)
{
    pc_error err;
    if (c->ep_text) CHECK_OK(pc_ep_registry_load_text(reg, c->ep_text, "test.ep", &err), &err);
    const pc_ep **eps = NULL;
    CHECK_OK(pc_ep_registry_parse_list(reg, c->eps, &eps, n, &err), &err);
    return eps;
}

static uint8_t *save(const pc_model *m, size_t *size)
{
    pc_error err;
    uint8_t *bytes = NULL;
    CHECK_OK(pc_model_save_bytes(m, &bytes, size, &err), &err);
    return bytes;
}

/* The first step of the second run that changed the graph (the idempotence property's after_pass rule). */
typedef struct first_change {
    uint8_t *prev;
    size_t prev_size;
    char first[64];
} first_change;

static pc_status note_change(void *ctx, const char *pass, const char *provider, pc_model *model, bool changed,
                             pc_error *err)
{
    (void)provider;
    (void)changed;
    first_change *f = ctx;
    if (f->first[0]) return PC_OK;
    size_t size = 0;
    uint8_t *bytes = NULL;
    pc_status st = pc_model_save_bytes(model, &bytes, &size, err);
    if (st != PC_OK) return st;
    if (size != f->prev_size || memcmp(bytes, f->prev, size) != 0)
        snprintf(f->first, sizeof f->first, "%s", pass);
    free(f->prev);
    f->prev = bytes;
    f->prev_size = size;
    return PC_OK;
}

/* Optimizes m at level 3, checks outputs and EP claims, then optimizes the result again and compares bytes.
 * The optimized model is returned for case-specific checks. */
static pc_model *check_fixpoint(pc_model *m, const fix_case *c)
{
    pc_error err;
    pc_ep_registry *reg = NULL;
    CHECK_OK(pc_ep_registry_create(&reg, &err), &err);
    uint32_t n_eps = 0;
    const pc_ep *const *eps = case_eps(reg, c, &n_eps);
    pc_optimize_options o;
    pc_optimize_options_default(&o);
    o.level = PC_LEVEL_EP;
    o.eps = eps;
    o.n_eps = n_eps;
    o.verify_each_pass = true;
    m->graph->name = "fixpoint"; /* a saved empty name reloads as "" and saves differently */
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    pc_model *original = pt_clone(m);
    CHECK_OK(pc_model_optimize(m, &o, NULL, &err), &err);

    char why[PT_WHY_SIZE] = "";
    CHECK_MSG(pt_equiv(original, m, 5, c->rtol, c->atol, why, sizeof why) == 1, "%s: %s", c->name, why);
    for (const pc_node *n = m->graph->first; n; n = n->next) {
        const pc_ep *ep = n->ep ? pc_ep_registry_find(reg, n->ep) : NULL;
        char reason[256] = "";
        CHECK_MSG(ep && pc_ep_claims_node(ep, n, reason, sizeof reason), "%s: node '%s' (%s) on EP '%s': %s",
                  c->name, n->name, n->op_type, n->ep ? n->ep : "(none)", reason);
    }

    size_t size1 = 0;
    uint8_t *first = save(m, &size1);
    pc_model *again = pt_clone(m);
    CHECK_OK(pc_graph_infer_shapes(again->graph, &err), &err);
    first_change f = {0};
    f.prev = save(again, &f.prev_size);
    CHECK_MSG(f.prev_size == size1 && memcmp(f.prev, first, size1) == 0,
              "%s: reloading and inferring shapes changes the optimized graph (%zu -> %zu bytes)", c->name,
              size1, f.prev_size);
    o.after_pass = note_change;
    o.after_pass_ctx = &f;
    CHECK_OK(pc_model_optimize(again, &o, NULL, &err), &err);
    size_t size2 = 0;
    uint8_t *second = save(again, &size2);
    CHECK_MSG(size1 == size2 && memcmp(first, second, size1) == 0,
              "%s: optimizing the optimized graph again changes it (first at '%s')", c->name, f.first);
    free(f.prev);
    free(first);
    free(second);
    pc_model_free(again);
    pc_model_free(original);
    pc_ep_registry_free(reg);
    return m;
}

static int count_op_on(const pc_model *m, const char *op, const char *ep)
{
    int n = 0;
    for (const pc_node *x = m->graph->first; x; x = x->next)
        n += strcmp(x->op_type, op) == 0 && x->ep && strcmp(x->ep, ep) == 0;
    return n;
}

/* x -> Div(sqrt2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5), the annotations alternating so levels 0/1 cannot
 * fuse. */
static pc_model *gelu_model(void)
{
    pc_model *m = pt_model(20);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 8});
    pt_const_f(m, "sqrt2", 0, NULL, (float[]){1.4142135f});
    pt_const_f(m, "one", 0, NULL, (float[]){1.0f});
    pt_const_f(m, "half", 0, NULL, (float[]){0.5f});
    pt_node(m, "Div", "", "x,sqrt2", "d", "block0.a");
    pt_node(m, "Erf", "", "d", "e", "block0.b");
    pt_node(m, "Add", "", "e,one", "a", "block0.a");
    pt_node(m, "Mul", "", "x,a", "m1", "block0.b");
    pt_node(m, "Mul", "", "m1,half", "y", "block0.a");
    pt_output(m, "y");
    return m;
}

static void test_gelu_after_partition(void)
{
    fix_case c = {"gelu, annotations apart", "cpu", NULL, 1e-5, 1e-6};
    pc_model *m = check_fixpoint(gelu_model(), &c);
    CHECK_MSG(count_op_on(m, "Gelu", "cpu") == 1 && m->graph->n_nodes == 1, "%d nodes",
              (int)m->graph->n_nodes);
    pc_model_free(m);
}

/* An EP ahead of cpu runs the five nodes but not Gelu: they stay unfused on it, in both runs. */
static void test_gelu_refused_by_ep(void)
{
    fix_case c = {"gelu, EP without Gelu", "npu,cpu",
                  "ep npu\nop Div types=float\nop Erf types=float\nop Add types=float\nop Mul types=float\n",
                  0, 0};
    pc_model *m = check_fixpoint(gelu_model(), &c);
    CHECK(pt_count_op(m, "Gelu") == 0 && count_op_on(m, "Erf", "npu") == 1 && m->graph->n_nodes == 5);
    pc_model_free(m);
}

/* Relu -> Clip(min 0.5, max 6), annotated apart (min > 0: an exact fusion). */
static void test_relu_clip_after_partition(void)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 8});
    pt_const_f(m, "lo", 0, NULL, (float[]){0.5f});
    pt_const_f(m, "hi", 0, NULL, (float[]){6.0f});
    pt_node(m, "Relu", "", "x", "r", "enc.a");
    pt_node(m, "Clip", "", "r,lo,hi", "y", "enc.b");
    pt_output(m, "y");
    fix_case c = {"relu+clip, annotations apart", "cpu", NULL, 0, 0};
    m = check_fixpoint(m, &c);
    CHECK(pt_count_op(m, "Relu") == 0 && count_op_on(m, "Clip", "cpu") == 1);
    pc_model_free(m);
}

/* The shrunk repro of idempotence@end-to-end/fuse_relu_clip: GlobalAveragePool -> Clip -> Transpose -> Relu
 * with nhwc,cpu. The layout transformer moves the pool to NHWC and the transpose optimizer leaves Clip next
 * to Relu. */
static void test_relu_clip_after_layout(void)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 4});
    pt_const_f(m, "lo", 0, NULL, (float[]){0.25f});
    pt_node(m, "GlobalAveragePool", "", "x", "g", NULL);
    pt_node(m, "Clip", "", "g,lo", "c", NULL);
    pc_error err;
    pc_node *t = pt_node(m, "Transpose", "", "c", "t", NULL);
    CHECK_OK(pc_node_set_attr_ints(t, "perm", 4, (int64_t[]){0, 2, 3, 1}, &err), &err);
    pt_node(m, "Relu", "", "t", "y", NULL);
    pt_output(m, "y");
    fix_case c = {"clip, transpose, relu after the layout transformer", "nhwc,cpu", NULL, 0, 0};
    m = check_fixpoint(m, &c);
    pc_model_free(m);
}

/* Reshape -> Reshape annotated apart. */
static void test_reshape_after_partition(void)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 4});
    pt_const_i64(m, "s1", 2, (int64_t[]){6, 4});
    pt_const_i64(m, "s2", 1, (int64_t[]){24});
    pt_node(m, "Reshape", "", "x,s1", "r", "enc.a");
    pt_node(m, "Reshape", "", "r,s2", "y", "enc.b");
    pt_output(m, "y");
    fix_case c = {"reshape+reshape, annotations apart", "cpu", NULL, 0, 0};
    m = check_fixpoint(m, &c);
    CHECK(pt_count_op(m, "Reshape") == 1);
    pc_model_free(m);
}

/* Conv -> BatchNormalization and Conv -> Mul annotated apart (not exact: rounding moves). */
static void test_conv_after_partition(void)
{
    for (int mul = 0; mul < 2; mul++) {
        pc_model *m = pt_model(17);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 4, 4});
        float w[2 * 2 * 3 * 3];
        for (int i = 0; i < 36; i++)
            w[i] = (float)((i * 7) % 11 - 5) / 8.0f;
        pt_const_f(m, "w", 4, (int64_t[]){2, 2, 3, 3}, w);
        pt_node(m, "Conv", "", "x,w", "c", "enc.a");
        if (mul) {
            pt_const_f(m, "k", 3, (int64_t[]){2, 1, 1}, (float[]){0.5f, -1.25f});
            pt_node(m, "Mul", "", "c,k", "y", "enc.b");
        } else {
            pt_const_f(m, "scale", 1, (int64_t[]){2}, (float[]){1.5f, 0.75f});
            pt_const_f(m, "bias", 1, (int64_t[]){2}, (float[]){0.25f, -0.5f});
            pt_const_f(m, "mean", 1, (int64_t[]){2}, (float[]){0.125f, 0.5f});
            pt_const_f(m, "var", 1, (int64_t[]){2}, (float[]){2.0f, 0.5f});
            pt_node(m, "BatchNormalization", "", "c,scale,bias,mean,var", "y", "enc.b");
        }
        pt_output(m, "y");
        fix_case c = {mul ? "conv+mul, annotations apart" : "conv+bn, annotations apart", "cpu", NULL, 1e-5,
                      1e-5};
        m = check_fixpoint(m, &c);
        CHECK(pt_count_op(m, "Conv") == 1 && m->graph->n_nodes == 1);
        pc_model_free(m);
    }
}

int main(void)
{
    test_gelu_after_partition();
    test_gelu_refused_by_ep();
    test_relu_clip_after_partition();
    test_relu_clip_after_layout();
    test_reshape_after_partition();
    test_conv_after_partition();
    return pc_test_finish("test_passes_pipeline_fixpoint");
}
