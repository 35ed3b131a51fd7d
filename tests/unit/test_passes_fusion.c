/* Fusions: Conv+BatchNormalization/Add/Mul (new weights against a double-precision computation written here),
 * Relu+Clip, Reshape chains, Gelu, and the level-2 Conv+activation -> FusedConv with EP checks. Each:
 * structure exactly (op counts, attributes, annotation or EP of the new node), outputs against the unfused
 * graph on the reference executor, negative cases, and a second run that reports no change. */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "core/passes/pass.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

/* Conv fusions change only where rounding happens (weights scaled before the accumulation); with inputs in
 * [-2, 2), 18-term dot products and O(1) weights the difference stays a few float ulps of the accumulated
 * magnitude. */
#define CONV_RTOL 1e-5
#define CONV_ATOL 1e-5
/* Gelu: erf evaluated on x/sqrt2 rounded to float, +1, *x, *0.5 each rounded, against one rounding. */
#define GELU_RTOL 1e-5
#define GELU_ATOL 1e-6

static pc_pass_options opts_basic(void)
{
    return pt_pass_options("test");
}

/* Fires once, then not again; outputs within rtol/atol of the original on the reference executor. */
static void check_fires(pc_pass_fn fn, pc_model *m, const pc_pass_options *o, double rtol, double atol,
                        const char *what)
{
    pc_model *before = pt_clone(m);
    int logged = pt_log.n;
    CHECK_MSG(pt_run_pass(fn, m, o), "%s: pass did not fire", what);
    CHECK_MSG(pt_log.n > logged, "%s: no --explain line", what);
    CHECK_MSG(!pt_run_pass(fn, m, o), "%s: second run changed the graph again", what);
    char why[PT_WHY_SIZE] = "";
    for (uint64_t seed = 1; seed <= 3; seed++)
        CHECK_MSG(pt_equiv(before, m, seed, rtol, atol, why, sizeof why) == 1, "%s: %s", what, why);
    pc_model_free(before);
}

static void check_no_fire(pc_pass_fn fn, pc_model *m, const pc_pass_options *o, const char *what)
{
    pc_model *before = pt_clone(m);
    CHECK_MSG(!pt_run_pass(fn, m, o), "%s: pass fired", what);
    pc_model *after = pt_clone(m);
    char diff[256] = "";
    CHECK_MSG(pc_model_equal(before, after, diff, sizeof diff), "%s: graph changed: %s", what, diff);
    pc_model_free(before);
    pc_model_free(after);
}

static pc_node *find_op(pc_model *m, const char *op)
{
    for (pc_node *n = m->graph->first; n; n = n->next)
        if (strcmp(n->op_type, op) == 0) return n;
    return NULL;
}

static bool ann_is(const pc_node *n, const char *want)
{
    const char *a = n ? pc_node_annotation(n) : NULL;
    return want ? a && strcmp(a, want) == 0 : a == NULL;
}

/* ---- Conv models
 * ------------------------------------------------------------------------------------------- */

enum { CM = 3, CC = 2, CK = 3, CW = CM * CC * CK * CK };
static float g_w[CW], g_b[CM], g_scale[CM], g_bias[CM], g_mean[CM], g_var[CM];

static void conv_params_init(void)
{
    uint64_t s = 42;
    for (int i = 0; i < CW; i++)
        g_w[i] = (float)((double)(pt_rand(&s) % 2001) / 1000.0 - 1.0);
    for (int m = 0; m < CM; m++) {
        g_b[m] = (float)((double)(pt_rand(&s) % 201) / 100.0 - 1.0);
        g_scale[m] = (float)(0.5 + (double)(pt_rand(&s) % 100) / 100.0);
        g_bias[m] = (float)((double)(pt_rand(&s) % 201) / 100.0 - 1.0);
        g_mean[m] = (float)((double)(pt_rand(&s) % 201) / 200.0 - 0.5);
        g_var[m] = (float)(0.25 + (double)(pt_rand(&s) % 100) / 50.0);
    }
}

/* x [1,2,5,5] -> Conv(W [3,2,3,3], B [3], pads 1) -> "c"; W a graph input when w_input. */
static pc_model *conv_model(int64_t opset, const char *ann, bool w_input)
{
    static const int64_t xd[] = {1, CC, 5, 5}, wd[] = {CM, CC, CK, CK}, bd[] = {CM};
    pc_error err;
    pc_model *m = pt_model(opset);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, xd);
    if (w_input)
        pt_input(m, "W", PC_DTYPE_FLOAT, 4, wd);
    else
        pt_const_f(m, "W", 4, wd, g_w);
    pt_const_f(m, "B", 1, bd, g_b);
    pc_node *c = pt_node(m, "Conv", "", "x,W,B", "c", ann);
    CHECK_OK(pc_node_set_attr_ints(c, "pads", 4, (int64_t[]){1, 1, 1, 1}, &err), &err);
    CHECK_OK(pt_set_tensor_type(c->outputs[0], PC_DTYPE_FLOAT, 4, (int64_t[]){1, CM, 5, 5}, &err), &err);
    return m;
}

static void add_bn(pc_model *m, const char *ann)
{
    static const int64_t d[] = {CM};
    pt_const_f(m, "scale", 1, d, g_scale);
    pt_const_f(m, "bias", 1, d, g_bias);
    pt_const_f(m, "mean", 1, d, g_mean);
    pt_const_f(m, "var", 1, d, g_var);
    pt_node(m, "BatchNormalization", "", "c,scale,bias,mean,var", "y", ann);
    pt_output(m, "y");
}

static bool float_near(float got, double want)
{
    return fabs((double)got - want) <= 1e-6 * fmax(1.0, fabs(want));
}

static void check_new_conv(pc_model *m, const double *w_want, const double *b_want, const char *ann,
                           const char *what)
{
    CHECK_MSG(pt_count_op(m, "Conv") == 1 && m->graph->n_nodes == 1, "%s: %u nodes", what, m->graph->n_nodes);
    pc_node *c = find_op(m, "Conv");
    if (!c) return;
    CHECK_MSG(ann_is(c, ann), "%s: annotation", what);
    CHECK_MSG(c->n_inputs == 3 && c->inputs[1]->initializer && c->inputs[2]->initializer, "%s: inputs", what);
    const pc_attr *pads = pc_node_attr(c, "pads");
    CHECK_MSG(pads && pads->n == 4 && pads->ints[0] == 1, "%s: attributes not copied", what);
    CHECK_MSG(strcmp(m->graph->outputs[0]->name, "y") == 0 && m->graph->outputs[0]->producer == c,
              "%s: graph output", what);
    if (c->n_inputs != 3 || !c->inputs[1]->initializer || !c->inputs[2]->initializer) return;
    const float *w = c->inputs[1]->initializer->data, *b = c->inputs[2]->initializer->data;
    int bad = 0;
    for (int i = 0; i < CW; i++)
        bad += !float_near(w[i], w_want[i]);
    for (int i = 0; i < CM; i++)
        bad += !float_near(b[i], b_want[i]);
    CHECK_MSG(bad == 0, "%s: %d weights differ from the double computation", what, bad);
    CHECK_MSG(strcmp(c->inputs[1]->name, "W") != 0, "%s: W edited in place", what);
    /* the original weights are gone with the old nodes */
    CHECK_MSG(m->graph->n_initializers == 2, "%s: %u initializers", what, m->graph->n_initializers);
}

static void test_conv_bn(void)
{
    pc_pass_options o = opts_basic();
    pc_model *m = conv_model(15, "enc", false);
    add_bn(m, "enc");
    check_fires(pc_pass_fuse_conv_bn, m, &o, CONV_RTOL, CONV_ATOL, "conv+bn");
    double w_want[CW], b_want[CM];
    for (int mm = 0; mm < CM; mm++) {
        double f = (double)g_scale[mm] / sqrt((double)g_var[mm] + (double)1e-5f);
        for (int k = 0; k < CW / CM; k++)
            w_want[mm * (CW / CM) + k] = (double)g_w[mm * (CW / CM) + k] * f;
        b_want[mm] = ((double)g_b[mm] - (double)g_mean[mm]) * f + (double)g_bias[mm];
    }
    check_new_conv(m, w_want, b_want, "enc", "conv+bn");
    CHECK(strstr(pt_log.last, "BatchNormalization 'y'") != NULL);
    pc_model_free(m);

    /* after partitioning (provider set): the new Conv takes the EP of the Conv */
    m = conv_model(15, NULL, false);
    add_bn(m, NULL);
    find_op(m, "Conv")->ep = "cpu";
    find_op(m, "BatchNormalization")->ep = "cpu";
    pc_pass_options cpu = opts_basic();
    cpu.provider = "cpu";
    check_fires(pc_pass_fuse_conv_bn, m, &cpu, CONV_RTOL, CONV_ATOL, "conv+bn on cpu");
    CHECK(m->graph->n_nodes == 1 && find_op(m, "Conv") && find_op(m, "Conv")->ep &&
          strcmp(find_op(m, "Conv")->ep, "cpu") == 0);
    pc_model_free(m);
    /* the Conv output is read by a subgraph (simulated reference count) */
    m = conv_model(15, NULL, false);
    add_bn(m, NULL);
    pc_graph_find_value(m->graph, "c")->n_subgraph_refs = 1;
    CHECK(!pt_run_pass(pc_pass_fuse_conv_bn, m, &o));
    CHECK(pt_count_op(m, "BatchNormalization") == 1);
    pc_model_free(m);

    /* different annotations */
    m = conv_model(15, "enc", false);
    add_bn(m, "dec");
    check_no_fire(pc_pass_fuse_conv_bn, m, &o, "conv+bn across annotations");
    pc_model_free(m);
    /* Conv output used twice */
    m = conv_model(15, NULL, false);
    add_bn(m, NULL);
    pt_node(m, "Relu", "", "c", "r", NULL);
    pt_output(m, "r");
    check_no_fire(pc_pass_fuse_conv_bn, m, &o, "conv+bn, conv output used twice");
    pc_model_free(m);
    /* Conv output is a graph output */
    m = conv_model(15, NULL, false);
    add_bn(m, NULL);
    pt_output(m, "c");
    check_no_fire(pc_pass_fuse_conv_bn, m, &o, "conv+bn, conv output is a graph output");
    pc_model_free(m);
    /* weights not constant */
    m = conv_model(15, NULL, true);
    add_bn(m, NULL);
    check_no_fire(pc_pass_fuse_conv_bn, m, &o, "conv+bn, W a graph input");
    pc_model_free(m);
    /* nodes owned by another EP */
    m = conv_model(15, NULL, false);
    add_bn(m, NULL);
    find_op(m, "Conv")->ep = "nhwc";
    find_op(m, "BatchNormalization")->ep = "nhwc";
    pc_pass_options po = opts_basic();
    po.provider = "cpu";
    check_no_fire(pc_pass_fuse_conv_bn, m, &po, "conv+bn of another EP");
    pc_model_free(m);
}

static void test_conv_add_mul(void)
{
    pc_pass_options o = opts_basic();
    static const float k[CM] = {0.5f, -1.25f, 3.0f};
    static const int64_t kd[] = {CM, 1, 1}, kd4[] = {1, CM, 1, 1};
    double w_want[CW], b_want[CM];

    /* Add of a [3,1,1] constant, constant first */
    pc_model *m = conv_model(17, "blk", false);
    pt_const_f(m, "k", 3, kd, k);
    pt_node(m, "Add", "", "k,c", "y", "blk");
    pt_output(m, "y");
    check_fires(pc_pass_fuse_conv_add, m, &o, CONV_RTOL, CONV_ATOL, "conv+add");
    for (int i = 0; i < CW; i++)
        w_want[i] = g_w[i];
    for (int mm = 0; mm < CM; mm++)
        b_want[mm] = (double)g_b[mm] + (double)k[mm];
    check_new_conv(m, w_want, b_want, "blk", "conv+add");
    pc_model_free(m);

    /* Mul of a [1,3,1,1] constant */
    m = conv_model(17, NULL, false);
    pt_const_f(m, "k", 4, kd4, k);
    pt_node(m, "Mul", "", "c,k", "y", NULL);
    pt_output(m, "y");
    check_fires(pc_pass_fuse_conv_mul, m, &o, CONV_RTOL, CONV_ATOL, "conv+mul");
    for (int mm = 0; mm < CM; mm++) {
        for (int i = 0; i < CW / CM; i++)
            w_want[mm * (CW / CM) + i] = (double)g_w[mm * (CW / CM) + i] * k[mm];
        b_want[mm] = (double)g_b[mm] * k[mm];
    }
    check_new_conv(m, w_want, b_want, NULL, "conv+mul");
    pc_model_free(m);

    /* a constant that is not per channel ([1,3,5,5]) must not be folded into the bias */
    static float full[CM * 25];
    for (int i = 0; i < CM * 25; i++)
        full[i] = (float)i;
    m = conv_model(17, NULL, false);
    pt_const_f(m, "k", 4, (int64_t[]){1, CM, 5, 5}, full);
    pt_node(m, "Add", "", "c,k", "y", NULL);
    pt_output(m, "y");
    check_no_fire(pc_pass_fuse_conv_add, m, &o, "conv+add of a full tensor");
    pc_model_free(m);

    /* a non-constant addend */
    m = conv_model(17, NULL, false);
    pt_input(m, "k", PC_DTYPE_FLOAT, 3, kd);
    pt_node(m, "Mul", "", "c,k", "y", NULL);
    pt_output(m, "y");
    check_no_fire(pc_pass_fuse_conv_mul, m, &o, "conv+mul of an input");
    pc_model_free(m);
}

/* ---- Relu + Clip
 * ------------------------------------------------------------------------------------------- */

static pc_model *relu_clip_model(bool relu_first, float lo, float hi, bool lo_input, const char *ann2)
{
    static const int64_t d[] = {2, 8};
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d);
    if (lo_input)
        pt_input(m, "lo", PC_DTYPE_FLOAT, 0, NULL);
    else
        pt_const_f(m, "lo", 0, NULL, &lo);
    pt_const_f(m, "hi", 0, NULL, &hi);
    if (relu_first) {
        pt_node(m, "Relu", "", "x", "r", "a");
        pt_node(m, "Clip", "", "r,lo,hi", "y", ann2);
    } else {
        pt_node(m, "Clip", "", "x,lo,hi", "r", "a");
        pt_node(m, "Relu", "", "r", "y", ann2);
    }
    pt_output(m, "y");
    return m;
}

static float const_scalar(const pc_value *v)
{
    float f = NAN;
    if (v && v->initializer && v->initializer->dtype == PC_DTYPE_FLOAT && v->initializer->n_elements == 1)
        memcpy(&f, v->initializer->data, 4);
    return f;
}

static void test_relu_clip(void)
{
    pc_pass_options o = opts_basic();
    /* a min at or below 0 would become a fused min of 0, which keeps the -0 that Relu turns into +0: refused
     * (test_passes_fuse_relu_clip checks every bound combination bit by bit, -0 included) */
    pc_model *m = relu_clip_model(true, -1.0f, 1.5f, false, "a");
    check_no_fire(pc_pass_fuse_relu_clip, m, &o, "relu+clip, min -1");
    pc_model_free(m);
    m = relu_clip_model(false, -3.0f, -0.5f, false, "a");
    check_no_fire(pc_pass_fuse_relu_clip, m, &o, "clip+relu, min -3");
    pc_model_free(m);

    /* a positive min stays as it is */
    m = relu_clip_model(true, 0.25f, 6.0f, false, "a");
    check_fires(pc_pass_fuse_relu_clip, m, &o, 0, 0, "relu+clip min 0.25");
    pc_node *c = find_op(m, "Clip");
    CHECK(pt_count_op(m, "Relu") == 0 && pt_count_op(m, "Clip") == 1 && m->graph->n_nodes == 1);
    CHECK(c && c->n_inputs == 3 && const_scalar(c->inputs[1]) == 0.25f && const_scalar(c->inputs[2]) == 6.0f);
    CHECK(ann_is(c, "a") && c && c->inputs[0] == m->graph->inputs[0]);
    pc_model_free(m);

    /* Relu, then Clip with a negative max: every value ends at max, so the min becomes max too (not 0 > max,
     * which ONNX Runtime's Clip-6 refuses) */
    m = relu_clip_model(true, -3.0f, -0.5f, false, "a");
    check_fires(pc_pass_fuse_relu_clip, m, &o, 0, 0, "relu+clip max -0.5");
    c = find_op(m, "Clip");
    CHECK(c && const_scalar(c->inputs[1]) == -0.5f && const_scalar(c->inputs[2]) == -0.5f);
    pc_model_free(m);

    /* Clip with a positive min and a negative max, then Relu: the max becomes +0 (all outputs +0) */
    m = relu_clip_model(false, 0.25f, -0.5f, false, "a");
    check_fires(pc_pass_fuse_relu_clip, m, &o, 0, 0, "clip+relu");
    c = find_op(m, "Clip");
    CHECK(pt_count_op(m, "Relu") == 0 && c && const_scalar(c->inputs[1]) == 0.25f &&
          const_scalar(c->inputs[2]) == 0.0f && !signbit(const_scalar(c->inputs[2])));
    pc_model_free(m);

    m = relu_clip_model(true, 0.25f, 1.5f, true, "a");
    check_no_fire(pc_pass_fuse_relu_clip, m, &o, "relu+clip, min not constant");
    pc_model_free(m);
    m = relu_clip_model(true, 0.25f, 1.5f, false, "b");
    check_no_fire(pc_pass_fuse_relu_clip, m, &o, "relu+clip across annotations");
    pc_model_free(m);

    /* opset 10: attribute form; a missing min (default -FLT_MAX) is refused, a positive one fuses */
    pc_error err;
    for (int with_min = 0; with_min < 2; with_min++) {
        m = pt_model(10);
        pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 8});
        pt_node(m, "Relu", "", "x", "r", NULL);
        pc_node *clip = pt_node(m, "Clip", "", "r", "y", NULL);
        CHECK_OK(pc_node_set_attr_float(clip, "max", 0.75f, &err), &err);
        if (with_min) CHECK_OK(pc_node_set_attr_float(clip, "min", 0.5f, &err), &err);
        pt_output(m, "y");
        if (!with_min) {
            check_no_fire(pc_pass_fuse_relu_clip, m, &o, "relu+clip opset 10, no min");
            pc_model_free(m);
            continue;
        }
        check_fires(pc_pass_fuse_relu_clip, m, &o, 0, 0, "relu+clip opset 10");
        c = find_op(m, "Clip");
        CHECK(c && c->n_inputs == 1 && pc_node_attr_float(c, "min", -1) == 0.5f &&
              pc_node_attr_float(c, "max", -1) == 0.75f);
        pc_model_free(m);
    }
}

/* ---- Reshape chains
 * ---------------------------------------------------------------------------------------- */

static void test_reshape(void)
{
    pc_pass_options o = opts_basic();
    static const int64_t s1[] = {6, 4}, s2[] = {3, 0, -1}, s3[] = {4, 6};
    pc_error err;
    /* [2,3,4] -> [6,4] -> [3,0,-1]: the 0 reads the intermediate dim 1 (4) */
    pc_model *m = pt_model(14);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 4});
    pt_const_i64(m, "s1", 2, s1);
    pt_const_i64(m, "s2", 3, s2);
    pt_node(m, "Reshape", "", "x,s1", "r1", "h");
    CHECK_OK(pt_set_tensor_type(pc_graph_find_value(m->graph, "r1"), PC_DTYPE_FLOAT, 2, s1, &err), &err);
    pt_node(m, "Reshape", "", "r1,s2", "y", "h");
    pt_output(m, "y");
    check_fires(pc_pass_fuse_reshape, m, &o, 0, 0, "reshape chain with 0");
    pc_node *r = find_op(m, "Reshape");
    CHECK(pt_count_op(m, "Reshape") == 1 && ann_is(r, "h") && r->inputs[0] == m->graph->inputs[0]);
    int64_t got[8];
    size_t n = 0;
    CHECK(r && pc_tensor_read_ints(r->inputs[1]->initializer, got, 8, &n) && n == 3 && got[0] == 3 &&
          got[1] == 4 && got[2] == -1);
    pc_model_free(m);

    /* three in a row, no zeros: one Reshape to the last shape */
    m = pt_model(14);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 4});
    pt_const_i64(m, "s1", 2, s1);
    pt_const_i64(m, "s3", 2, s3);
    pt_const_i64(m, "s4", 1, (int64_t[]){24});
    pt_node(m, "Reshape", "", "x,s1", "r1", NULL);
    pt_node(m, "Reshape", "", "r1,s3", "r2", NULL);
    pt_node(m, "Reshape", "", "r2,s4", "y", NULL);
    pt_output(m, "y");
    check_fires(pc_pass_fuse_reshape, m, &o, 0, 0, "reshape chain of three");
    r = find_op(m, "Reshape");
    CHECK(pt_count_op(m, "Reshape") == 1 && r && strcmp(r->inputs[1]->name, "s4") == 0);
    pc_model_free(m);

    /* 0 with the intermediate shape unknown */
    m = pt_model(14);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 4});
    pt_const_i64(m, "s1", 2, s1);
    pt_const_i64(m, "s2", 3, s2);
    pt_node(m, "Reshape", "", "x,s1", "r1", NULL);
    pt_node(m, "Reshape", "", "r1,s2", "y", NULL);
    pt_output(m, "y");
    check_no_fire(pc_pass_fuse_reshape, m, &o, "reshape chain, 0 unresolvable");
    pc_model_free(m);

    /* the second shape computed: nothing to fuse into (near miss "constant") */
    m = pt_model(14);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 4});
    pt_input(m, "s2in", PC_DTYPE_INT64, 1, (int64_t[]){2});
    pt_const_i64(m, "s1", 2, s1);
    pt_node(m, "Reshape", "", "x,s1", "r1", NULL);
    pt_node(m, "Reshape", "", "r1,s2in", "y", NULL);
    pt_output(m, "y");
    check_no_fire(pc_pass_fuse_reshape, m, &o, "reshape chain, second shape computed");
    pc_model_free(m);

    /* first output used twice */
    m = pt_model(14);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 4});
    pt_const_i64(m, "s1", 2, s1);
    pt_const_i64(m, "s3", 2, s3);
    pt_node(m, "Reshape", "", "x,s1", "r1", NULL);
    pt_node(m, "Reshape", "", "r1,s3", "y", NULL);
    pt_node(m, "Relu", "", "r1", "z", NULL);
    pt_output(m, "y");
    pt_output(m, "z");
    check_no_fire(pc_pass_fuse_reshape, m, &o, "reshape chain, middle used twice");
    pc_model_free(m);
}

/* ---- Gelu
 * -------------------------------------------------------------------------------------------------- */

/* form 0: Div(x, sqrt2) ... Mul(x, .) then Mul(., 0.5); form 1: Mul(x, 1/sqrt2), half first: Mul(x, 0.5) */
static pc_model *gelu_model(int64_t opset, int form, float sqrt2, const char *ann_last)
{
    static const int64_t d[] = {2, 8};
    float one = 1.0f, half = 0.5f, inv = (float)(1.0 / sqrt(2.0));
    pc_model *m = pt_model(opset);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d);
    pt_const_f(m, "one", 0, NULL, &one);
    pt_const_f(m, "half", 1, (int64_t[]){1}, &half);
    if (form == 0) {
        pt_const_f(m, "sqrt2", 0, NULL, &sqrt2);
        pt_node(m, "Div", "", "x,sqrt2", "d", "g");
    } else {
        pt_const_f(m, "inv", 0, NULL, &inv);
        pt_node(m, "Mul", "", "inv,x", "d", "g");
    }
    pt_node(m, "Erf", "", "d", "e", "g");
    pt_node(m, "Add", "", "one,e", "a", "g");
    if (form == 0) {
        pt_node(m, "Mul", "", "x,a", "m1", "g");
        pt_node(m, "Mul", "", "m1,half", "y", ann_last);
    } else {
        pt_node(m, "Mul", "", "x,half", "h", "g");
        pt_node(m, "Mul", "", "a,h", "y", ann_last);
    }
    pt_output(m, "y");
    return m;
}

static void test_gelu(void)
{
    pc_pass_options o = opts_basic();
    for (int form = 0; form < 2; form++) {
        pc_model *m = gelu_model(20, form, (float)sqrt(2.0), "g");
        check_fires(pc_pass_fuse_gelu, m, &o, GELU_RTOL, GELU_ATOL, form ? "gelu form 1" : "gelu form 0");
        pc_node *g = find_op(m, "Gelu");
        CHECK(m->graph->n_nodes == 1 && g && g->domain[0] == '\0' && ann_is(g, "g"));
        CHECK(g && g->inputs[0] == m->graph->inputs[0] && m->graph->outputs[0]->producer == g);
        CHECK(m->graph->n_initializers == 0);
        pc_model_free(m);
    }
    /* opset 17: com.microsoft Gelu, and the domain gets imported */
    pc_model *m = gelu_model(17, 0, 1.4142135f, "g");
    CHECK(pt_run_pass(pc_pass_fuse_gelu, m, &o));
    pc_node *g = find_op(m, "Gelu");
    CHECK(m->graph->n_nodes == 1 && g && strcmp(g->domain, "com.microsoft") == 0);
    CHECK(pc_model_opset(m, "com.microsoft") == 1);
    CHECK(!pt_run_pass(pc_pass_fuse_gelu, m, &o));
    pc_model_free(m);

    /* sqrt(2) off by 1e-4 relative, different annotation on the last Mul */
    m = gelu_model(20, 0, 1.4143549f, "g");
    check_no_fire(pc_pass_fuse_gelu, m, &o, "gelu with a wrong constant");
    pc_model_free(m);
    m = gelu_model(20, 0, (float)sqrt(2.0), "other");
    check_no_fire(pc_pass_fuse_gelu, m, &o, "gelu across annotations");
    pc_model_free(m);
    /* the Erf output is also a graph output */
    m = gelu_model(20, 1, (float)sqrt(2.0), "g");
    pt_output(m, "e");
    check_no_fire(pc_pass_fuse_gelu, m, &o, "gelu with the erf output used");
    pc_model_free(m);
}

/* ---- Conv + activation (level 2)
 * --------------------------------------------------------------------------- */

static const pc_ep_op test_ep_ops[] = {
    {"", "Conv", 1, 100, 0, 0, NULL, PC_EP_GROUP_NONE, 0},
    {"", "Relu", 1, 100, 0, 0, NULL, PC_EP_GROUP_NONE, 0},
    {"", "Clip", 1, 100, 0, 0, NULL, PC_EP_GROUP_NONE, 0},
    {"", "LeakyRelu", 1, 100, 0, 0, NULL, PC_EP_GROUP_NONE, 0},
    {"com.microsoft", "FusedConv", 1, 1, 0, 0, NULL, PC_EP_GROUP_NONE, 0},
};
static const pc_ep test_ep = {"fuser", PC_LAYOUT_NCHW, 0, false, true, false, 5, test_ep_ops};
static const pc_ep plain_ep = {"plain", PC_LAYOUT_NCHW, 0, false, true, false, 4, test_ep_ops};

static pc_model *conv_act_model(const char *act, const char *ep_conv, const char *ep_act, bool lo_input)
{
    pc_model *m = conv_model(13, NULL, false);
    if (strcmp(act, "Clip") == 0) {
        float hi = 6.0f, lo = 0.5f;
        if (lo_input)
            pt_input(m, "lo", PC_DTYPE_FLOAT, 0, NULL);
        else
            pt_const_f(m, "lo", 0, NULL, &lo);
        pt_const_f(m, "hi", 0, NULL, &hi);
        pt_node(m, "Clip", "", "c,lo,hi", "y", NULL);
    } else {
        pc_node *a = pt_node(m, act, "", "c", "y", NULL);
        pc_error err;
        if (strcmp(act, "LeakyRelu") == 0) CHECK_OK(pc_node_set_attr_float(a, "alpha", 0.125f, &err), &err);
    }
    pt_output(m, "y");
    find_op(m, "Conv")->ep = ep_conv;
    m->graph->last->ep = ep_act;
    return m;
}

static void test_conv_activation(void)
{
    pc_pass_options o = opts_basic();
    o.provider = "fuser";
    o.ep = &test_ep;
    struct {
        const char *act;
        uint32_t n_params;
        float p0, p1;
    } cases[] = {{"Relu", 0, 0, 0}, {"Clip", 2, 0.5f, 6.0f}, {"LeakyRelu", 1, 0.125f, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pc_model *m = conv_act_model(cases[i].act, "fuser", "fuser", false);
        /* FusedConv keeps the Conv rounding before the activation: exact for these activations */
        check_fires(pc_pass_fuse_conv_activation, m, &o, 0, 0, cases[i].act);
        pc_node *f = find_op(m, "FusedConv");
        CHECK_MSG(m->graph->n_nodes == 1 && f && strcmp(f->domain, "com.microsoft") == 0, "%s", cases[i].act);
        CHECK_MSG(f && f->ep && strcmp(f->ep, "fuser") == 0, "%s: EP not copied", cases[i].act);
        CHECK_MSG(f && strcmp(pc_node_attr_string(f, "activation", ""), cases[i].act) == 0, "%s",
                  cases[i].act);
        const pc_attr *p = f ? pc_node_attr(f, "activation_params") : NULL;
        CHECK_MSG(cases[i].n_params == 0 ? p == NULL
                                         : p && p->n == cases[i].n_params && p->floats[0] == cases[i].p0 &&
                                               (p->n < 2 || p->floats[1] == cases[i].p1),
                  "%s: activation_params", cases[i].act);
        CHECK_MSG(f && pc_node_attr(f, "pads") != NULL && f->n_inputs == 3, "%s: conv attributes",
                  cases[i].act);
        CHECK(strcmp(m->graph->outputs[0]->name, "y") == 0);
        pc_model_free(m);
    }

    /* activation on another EP; Clip with a non-constant min; an EP that does not run FusedConv; no EP */
    pc_model *m = conv_act_model("Relu", "fuser", "other", false);
    check_no_fire(pc_pass_fuse_conv_activation, m, &o, "conv+relu across EPs");
    pc_model_free(m);
    m = conv_act_model("Clip", "fuser", "fuser", true);
    check_no_fire(pc_pass_fuse_conv_activation, m, &o, "conv+clip, min not constant");
    pc_model_free(m);
    m = conv_act_model("Relu", "plain", "plain", false);
    pc_pass_options po = o;
    po.provider = "plain";
    po.ep = &plain_ep;
    CHECK(!pt_run_pass(pc_pass_fuse_conv_activation, m, &po));
    CHECK(pt_count_op(m, "FusedConv") == 0 && pt_count_op(m, "Conv") == 1 && pt_count_op(m, "Relu") == 1);
    pc_model_free(m);
    m = conv_act_model("Relu", NULL, NULL, false);
    check_no_fire(pc_pass_fuse_conv_activation, m, &(pc_pass_options){0}, "conv+relu without an EP");
    pc_model_free(m);
}

int main(void)
{
    conv_params_init();
    test_conv_bn();
    test_conv_add_mul();
    test_relu_clip();
    test_reshape();
    test_gelu();
    test_conv_activation();
    return pc_test_finish("test_passes_fusion");
}
