/* Rewrite coverage (issue 14): the rewrite-kind table names pipeline passes, and passes report through
 * pc_pass_options.rewrites the kind they commit and the near miss (kind and reason) when one condition of a
 * matched pattern refuses: Conv+BN (fired; BN scale not constant; Conv output shared; BN in training mode),
 * Relu+Clip (fired; lower bound 0 keeps -0), DQ->Q (fired; scales differ), Identity, Transpose cancel, and
 * the whole pipeline counting through pc_optimize_options without changing its result. */
#include <string.h>

#include "core/passes/pass.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

enum { CM = 2, CC = 2, CK = 3, CW = CM * CC * CK * CK };

/* counts of one pass run with counting on */
static pc_rewrite_counts run_counted(pc_pass_fn fn, pc_model *m, bool *changed)
{
    pc_rewrite_counts rc;
    memset(&rc, 0, sizeof rc);
    pc_pass_options o = pt_pass_options("test");
    o.rewrites = &rc;
    *changed = pt_run_pass(fn, m, &o);
    return rc;
}

static uint32_t total_fired(const pc_rewrite_counts *rc)
{
    uint32_t n = 0;
    for (size_t k = 0; k < PC_RW_COUNT; k++)
        n += rc->fired[k];
    return n;
}

static uint32_t total_near(const pc_rewrite_counts *rc)
{
    uint32_t n = 0;
    for (size_t k = 0; k < PC_RW_COUNT; k++)
        n += rc->near[k];
    return n;
}

/* x [1,2,4,4] -> Conv(W const or input) -> c -> BatchNormalization(scale const or input) -> y */
static pc_model *conv_bn_model(bool scale_input, bool w_input)
{
    static const int64_t xd[] = {1, CC, 4, 4}, wd[] = {CM, CC, CK, CK}, pd[] = {CM};
    static float w[CW], p[CM] = {1.0f, 0.5f}, var[CM] = {1.0f, 2.0f};
    for (int i = 0; i < CW; i++)
        w[i] = (float)(i % 7) / 7.0f - 0.5f;
    pc_model *m = pt_model(15);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, xd);
    if (w_input)
        pt_input(m, "W", PC_DTYPE_FLOAT, 4, wd);
    else
        pt_const_f(m, "W", 4, wd, w);
    pt_node(m, "Conv", "", "x,W", "c", NULL);
    if (scale_input)
        pt_input(m, "scale", PC_DTYPE_FLOAT, 1, pd);
    else
        pt_const_f(m, "scale", 1, pd, p);
    pt_const_f(m, "bias", 1, pd, p);
    pt_const_f(m, "mean", 1, pd, p);
    pt_const_f(m, "var", 1, pd, var);
    pt_node(m, "BatchNormalization", "", "c,scale,bias,mean,var", "y", NULL);
    pt_output(m, "y");
    return m;
}

static void test_conv_bn(void)
{
    bool changed;
    pc_model *m = conv_bn_model(false, false);
    pc_rewrite_counts rc = run_counted(pc_pass_fuse_conv_bn, m, &changed);
    CHECK(changed);
    CHECK(rc.fired[PC_RW_CONV_BN_FOLDED] == 1 && total_fired(&rc) == 1);
    CHECK(total_near(&rc) == 0);
    pc_model_free(m);

    /* the BN scale is a graph input: the pattern is there, one constant is not */
    m = conv_bn_model(true, false);
    rc = run_counted(pc_pass_fuse_conv_bn, m, &changed);
    CHECK(!changed && total_fired(&rc) == 0);
    CHECK(rc.near[PC_RW_CONV_BN_FOLDED] == 1 && total_near(&rc) == 1);
    CHECK(rc.near_reason[PC_RW_CONV_BN_FOLDED][PC_MISS_NOT_CONSTANT] == 1);
    pc_model_free(m);

    /* the Conv weights are a graph input */
    m = conv_bn_model(false, true);
    rc = run_counted(pc_pass_fuse_conv_bn, m, &changed);
    CHECK(!changed && rc.near_reason[PC_RW_CONV_BN_FOLDED][PC_MISS_NOT_CONSTANT] == 1);
    pc_model_free(m);

    /* the Conv output is also a graph output: shared */
    m = conv_bn_model(false, false);
    pt_output(m, "c");
    rc = run_counted(pc_pass_fuse_conv_bn, m, &changed);
    CHECK(!changed && rc.near_reason[PC_RW_CONV_BN_FOLDED][PC_MISS_SHARED] == 1 && total_near(&rc) == 1);
    pc_model_free(m);

    /* training mode: an attribute */
    m = conv_bn_model(false, false);
    pc_error err;
    pc_node *bn = NULL;
    for (pc_node *n = m->graph->first; n; n = n->next)
        if (strcmp(n->op_type, "BatchNormalization") == 0) bn = n;
    CHECK_OK(pc_node_set_attr_int(bn, "training_mode", 1, &err), &err);
    rc = run_counted(pc_pass_fuse_conv_bn, m, &changed);
    CHECK(!changed && rc.near_reason[PC_RW_CONV_BN_FOLDED][PC_MISS_ATTRIBUTE] == 1);
    pc_model_free(m);

    /* counting off (NULL): same result, nothing to count into */
    m = conv_bn_model(false, false);
    pc_pass_options o = pt_pass_options("test");
    CHECK(pt_run_pass(pc_pass_fuse_conv_bn, m, &o));
    pc_model_free(m);
}

/* x -> Relu -> Clip(min) -> y, opset 13 */
static pc_model *relu_clip_model(float lo)
{
    static const int64_t d[] = {2, 3};
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d);
    pt_const_f(m, "lo", 0, NULL, &lo);
    pt_node(m, "Relu", "", "x", "r", NULL);
    pt_node(m, "Clip", "", "r,lo", "y", NULL);
    pt_output(m, "y");
    return m;
}

static void test_relu_clip(void)
{
    bool changed;
    pc_model *m = relu_clip_model(0.25f);
    pc_rewrite_counts rc = run_counted(pc_pass_fuse_relu_clip, m, &changed);
    CHECK(changed && rc.fired[PC_RW_RELU_CLIP_MERGED] == 1 && total_fired(&rc) == 1);
    pc_model_free(m);
    /* lower bound 0: -0 would survive the fused Clip */
    m = relu_clip_model(0.0f);
    rc = run_counted(pc_pass_fuse_relu_clip, m, &changed);
    CHECK(!changed && total_fired(&rc) == 0);
    CHECK(rc.near_reason[PC_RW_RELU_CLIP_MERGED][PC_MISS_NOT_CONSTANT] == 1 && total_near(&rc) == 1);
    pc_model_free(m);
}

/* q [4] uint8 -> DequantizeLinear(s1) -> QuantizeLinear(s2) -> y */
static pc_model *dq_q_model(float s2)
{
    static const int64_t d[] = {4};
    float s1 = 0.5f;
    uint8_t zp = 3;
    pc_model *m = pt_model(13);
    pt_input(m, "q", PC_DTYPE_UINT8, 1, d);
    pt_const_f(m, "s1", 0, NULL, &s1);
    pt_const_f(m, "s2", 0, NULL, &s2);
    pt_const(m, "z1", PC_DTYPE_UINT8, 0, NULL, &zp);
    pt_const(m, "z2", PC_DTYPE_UINT8, 0, NULL, &zp);
    pt_node(m, "DequantizeLinear", "", "q,s1,z1", "f", NULL);
    pt_node(m, "QuantizeLinear", "", "f,s2,z2", "y", NULL);
    pt_node(m, "Identity", "", "y", "out", NULL); /* y is no graph output (Relu takes no uint8) */
    pt_output(m, "out");
    return m;
}

static void test_dq_q(void)
{
    bool changed;
    pc_model *m = dq_q_model(0.5f);
    pc_rewrite_counts rc = run_counted(pc_pass_remove_dq_q, m, &changed);
    CHECK(changed && rc.fired[PC_RW_DQ_Q_REMOVED] == 1);
    pc_model_free(m);
    m = dq_q_model(0.25f);
    rc = run_counted(pc_pass_remove_dq_q, m, &changed);
    CHECK(!changed && rc.near_reason[PC_RW_DQ_Q_REMOVED][PC_MISS_NOT_CONSTANT] == 1 && total_near(&rc) == 1);
    pc_model_free(m);
}

static void test_identity_and_transpose(void)
{
    static const int64_t d[] = {2, 3, 4};
    bool changed;
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, d);
    pt_node(m, "Identity", "", "x", "i", NULL);
    pt_node(m, "Relu", "", "i", "y", NULL);
    pt_output(m, "y");
    pc_rewrite_counts rc = run_counted(pc_pass_eliminate_identity, m, &changed);
    CHECK(changed && rc.fired[PC_RW_IDENTITY_REMOVED] == 1 && total_fired(&rc) == 1);
    pc_model_free(m);

    /* Transpose(0,2,1) -> Transpose(0,2,1): the push into the second cancels them */
    m = pt_model(13);
    pc_error err;
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, d);
    pc_node *t1 = pt_node(m, "Transpose", "", "x", "t1", NULL);
    pc_node *t2 = pt_node(m, "Transpose", "", "t1", "t2", NULL);
    CHECK_OK(pc_node_set_attr_ints(t1, "perm", 3, (int64_t[]){0, 2, 1}, &err), &err);
    CHECK_OK(pc_node_set_attr_ints(t2, "perm", 3, (int64_t[]){0, 2, 1}, &err), &err);
    pt_node(m, "Relu", "", "t2", "y", NULL);
    pt_output(m, "y");
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    rc = run_counted(pc_transpose_optimize, m, &changed);
    CHECK(changed && rc.fired[PC_RW_TP_CANCEL] == 1);
    CHECK(pt_count_op(m, "Transpose") == 0);
    pc_model_free(m);
}

/* A Cast whose input type is unknown (a value no shape inference has typed yet: the pipeline's own new
 * nodes between inference runs) cannot be judged a no-op: a near miss for the type, not a removal. */
static void test_cast_unknown_input(void)
{
    static const int64_t d[] = {2, 3};
    bool changed;
    pc_error err;
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d);
    pt_node(m, "Relu", "", "x", "u", NULL);
    pc_node *c = pt_node(m, "Cast", "", "u", "y", NULL);
    CHECK_OK(pc_node_set_attr_int(c, "to", PC_DTYPE_FLOAT, &err), &err);
    pt_output(m, "y");
    m->graph->first->outputs[0]->type.elem = PC_DTYPE_UNDEFINED;
    pc_rewrite_counts rc = run_counted(pc_pass_eliminate_cast, m, &changed);
    CHECK(!changed && rc.near_reason[PC_RW_CAST_REMOVED][PC_MISS_TYPE] == 1 && total_near(&rc) == 1);
    CHECK(pt_count_op(m, "Cast") == 1);
    pc_model_free(m);
}

/* The whole pipeline counts through pc_optimize_options.rewrites, and its result is the same either way. */
static void test_pipeline_counts(void)
{
    pc_model *m = conv_bn_model(false, false), *a = pt_clone(m), *b = pt_clone(m);
    pc_model_free(m);
    pc_rewrite_counts rc;
    memset(&rc, 0, sizeof rc);
    pc_optimize_options oo;
    pc_optimize_options_default(&oo);
    pc_error err;
    CHECK_OK(pc_model_optimize(a, &oo, NULL, &err), &err);
    oo.rewrites = &rc;
    CHECK_OK(pc_model_optimize(b, &oo, NULL, &err), &err);
    char diff[256] = "";
    CHECK_MSG(pc_model_equal(a, b, diff, sizeof diff), "counting changed the result: %s", diff);
    CHECK(rc.fired[PC_RW_CONV_BN_FOLDED] == 1);
    pc_model_free(a);
    pc_model_free(b);
}

/* Every kind names a pipeline pass (or partitioning, where the layout transformer runs), has a unique
 * "pass/kind" name and a description; every pipeline pass that rewrites declares a kind. */
static void test_table(void)
{
    CHECK(PC_RW_COUNT >= 30 && PC_RW_COUNT <= 64);
    for (size_t k = 0; k < PC_RW_COUNT; k++) {
        const char *name = pc_rewrite_kind_name((pc_rewrite_kind)k), *pass = pc_rewrite_kind_pass(k);
        CHECK_MSG(pc_pass_find(pass) || strcmp(pass, "partition") == 0, "kind %s: unknown pass %s", name,
                  pass);
        size_t n = strlen(pass);
        CHECK_MSG(strncmp(name, pass, n) == 0 && name[n] == '/' && name[n + 1], "kind %s: not 'pass/kind'",
                  name);
        CHECK_MSG(pc_rewrite_kind_description((pc_rewrite_kind)k)[0], "kind %s: no description", name);
        for (size_t j = 0; j < k; j++)
            CHECK_MSG(strcmp(name, pc_rewrite_kind_name((pc_rewrite_kind)j)) != 0, "kind %s twice", name);
    }
    for (size_t i = 0; i < pc_pass_count(); i++) {
        const char *pass = pc_pass_at(i)->name;
        bool declared = strcmp(pass, "ep_rewrites") == 0 || strcmp(pass, "transpose_optimize_ep") == 0;
        for (size_t k = 0; k < PC_RW_COUNT && !declared; k++)
            declared = strcmp(pc_rewrite_kind_pass((pc_rewrite_kind)k), pass) == 0;
        CHECK_MSG(declared, "pass %s declares no rewrite kind", pass);
    }
    for (size_t r = 0; r < PC_MISS_COUNT; r++)
        CHECK(strcmp(pc_miss_reason_name((pc_miss_reason)r), "?") != 0);
    /* out of range (PC_RW_COUNT itself included): "?", never a read past the tables */
    CHECK(strcmp(pc_rewrite_kind_name(PC_RW_COUNT), "?") == 0);
    CHECK(strcmp(pc_rewrite_kind_name((pc_rewrite_kind)(PC_RW_COUNT + 7)), "?") == 0);
    CHECK(strcmp(pc_rewrite_kind_pass(PC_RW_COUNT), "?") == 0);
    CHECK(strcmp(pc_rewrite_kind_description(PC_RW_COUNT), "?") == 0);
    CHECK(!pc_rewrite_kind_has_near_miss(PC_RW_COUNT));
    CHECK(strcmp(pc_miss_reason_name(PC_MISS_COUNT), "?") == 0);
    CHECK(strcmp(pc_rewrite_kind_name(PC_RW_CONV_BN_FOLDED), "fuse_conv_bn/conv_bn_folded") == 0);
}

int main(void)
{
    test_table();
    test_conv_bn();
    test_relu_clip();
    test_dq_q();
    test_identity_and_transpose();
    test_cast_unknown_input();
    test_pipeline_counts();
    return pc_test_finish("test_passes_rewrite_coverage");
}
