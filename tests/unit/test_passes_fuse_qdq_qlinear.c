/* fuse_qdq_qlinear: hand-built QDQ groups and generated qdq/qlinear cases. Oracles are the reference executor
 * on the graph before and after the pass: the Conv/MatMul rewrites may move an output by one quantization
 * step (the step is read from the original graph's Q node, or 1 in the integer domain), the Relu rewrites
 * must be bit-exact. For generated graphs, where a one-step difference could grow through later ops, every
 * node of the rewritten graph is run alone on the values the original graph computed (by name), so each
 * rewrite is judged locally. With fault qdq-wrong-rounding on, some case must exceed the bound (the fault is
 * real). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ep/ep_internal.h"
#include "generators/gen.h"
#include "core/passes/pass.h"
#include "core/passes/pass_match.h"
#include "tests/pass_test_util.h"
#include "reference/reference.h"
#include "tests/test_util.h"

static double elem(const pc_data *d, uint64_t i)
{
    switch (d->dtype) {
    case PC_DTYPE_FLOAT:
        return ((const float *)d->data)[i];
    case PC_DTYPE_UINT8:
        return ((const uint8_t *)d->data)[i];
    case PC_DTYPE_INT8:
        return ((const int8_t *)d->data)[i];
    case PC_DTYPE_INT32:
        return ((const int32_t *)d->data)[i];
    default:
        return NAN;
    }
}

static pc_pass_options cpu_options(void)
{
    pc_pass_options o = pt_pass_options("fuse_qdq_qlinear");
    o.provider = "cpu";
    o.ep = pc_ep_builtin_cpu();
    return o;
}

static void assign_all(pc_model *m, const char *ep)
{
    for (pc_node *n = m->graph->first; n; n = n->next)
        n->ep = ep;
}

/* ---- hand-built groups
 * ------------------------------------------------------------------------------------------ */

typedef struct conv_spec {
    pc_dtype xt, wt, yt;
    float xs, ys, ws[4];
    int32_t xzp, yzp;
    int64_t m;
    bool w_per_axis, bias, bias_bad_scale, relu, dq_out, matmul;
} conv_spec;

static conv_spec conv_default(void)
{
    return (conv_spec){.xt = PC_DTYPE_UINT8,
                       .wt = PC_DTYPE_INT8,
                       .yt = PC_DTYPE_UINT8,
                       .xs = 2.0f / 200.0f,
                       .ys = 0.0731f,
                       .ws = {0.0113f, 0.0071f, 0.0154f, 0.009f},
                       .xzp = 128,
                       .yzp = 120,
                       .m = 3};
}

static void put_zp(pc_model *m, const char *name, pc_dtype t, int64_t n, const int32_t *v)
{
    uint8_t b[8];
    for (int64_t i = 0; i < n; i++)
        b[i] = (uint8_t)(t == PC_DTYPE_INT8 ? (uint8_t)(int8_t)v[i] : (uint8_t)v[i]);
    pt_const(m, name, t, n > 1 ? 1 : 0, &n, b);
}

/* x float [1, 2, 5, 5] -> Q -> DQ -> Conv(DQ(w)[, DQ(b)]) [-> Relu] -> Q -> y [-> DQ -> yf], or with matmul:
 * x [1, 2, 5, 5] -> Q -> DQ -> MatMul(DQ(w [5, m])) -> Q. */
static pc_model *group_model(const conv_spec *s)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 5, 5});
    pt_const_f(m, "xs", 0, NULL, &s->xs);
    put_zp(m, "xzp", s->xt, 1, &s->xzp);
    pt_node(m, "QuantizeLinear", "", "x,xs,xzp", "xq", NULL);
    pt_node(m, "DequantizeLinear", "", "xq,xs,xzp", "xf", NULL);
    int64_t wdims[4] = {s->m, 2, 3, 3}, mmdims[2] = {5, s->m};
    int32_t wrank = s->matmul ? 2 : 4;
    int64_t *dims = s->matmul ? mmdims : wdims;
    uint8_t wdata[3 * 2 * 3 * 3 * 4];
    uint64_t seed = 99;
    for (size_t i = 0; i < sizeof wdata; i++) {
        int v = (int)(pt_rand(&seed) % 201) - 100;
        wdata[i] = s->wt == PC_DTYPE_INT8 ? (uint8_t)(int8_t)v : (uint8_t)(v + 128);
    }
    pt_const(m, "w", s->wt, wrank, dims, wdata);
    int64_t nw = s->w_per_axis ? (s->matmul ? mmdims[1] : s->m) : 1;
    pt_const_f(m, "ws", nw > 1 ? 1 : 0, &nw, s->ws);
    int32_t wz[4] = {0, 0, 0, 0};
    if (s->wt == PC_DTYPE_UINT8) wz[0] = wz[1] = wz[2] = wz[3] = 128;
    put_zp(m, "wzp", s->wt, nw, wz);
    pc_node *dqw = pt_node(m, "DequantizeLinear", "", "w,ws,wzp", "wf", NULL);
    pc_error err;
    if (nw > 1) CHECK_OK(pc_node_set_attr_int(dqw, "axis", s->matmul ? 1 : 0, &err), &err);
    const char *target_in = s->matmul ? "xf,wf" : "xf,wf";
    if (s->bias) {
        int32_t b[4] = {300, -450, 77, 5};
        pt_const(m, "b", PC_DTYPE_INT32, 1, &s->m, b);
        float bs[4];
        for (int64_t i = 0; i < nw; i++)
            bs[i] = s->xs * s->ws[i] * (s->bias_bad_scale ? 1.01f : 1.0f);
        pt_const_f(m, "bs", nw > 1 ? 1 : 0, &nw, bs);
        pc_node *dqb = pt_node(m, "DequantizeLinear", "", "b,bs", "bf", NULL);
        if (nw > 1) CHECK_OK(pc_node_set_attr_int(dqb, "axis", 0, &err), &err);
        target_in = "xf,wf,bf";
    }
    pc_node *t = pt_node(m, s->matmul ? "MatMul" : "Conv", "", target_in, "c", NULL);
    if (!s->matmul) {
        CHECK_OK(pc_node_set_attr_ints(t, "kernel_shape", 2, (int64_t[]){3, 3}, &err), &err);
        CHECK_OK(pc_node_set_attr_ints(t, "pads", 4, (int64_t[]){1, 1, 1, 1}, &err), &err);
    }
    if (s->relu) pt_node(m, "Relu", "", "c", "r", NULL);
    pt_const_f(m, "ys", 0, NULL, &s->ys);
    put_zp(m, "yzp", s->yt, 1, &s->yzp);
    pt_node(m, "QuantizeLinear", "", s->relu ? "r,ys,yzp" : "c,ys,yzp", "y", NULL);
    if (s->dq_out) {
        pt_node(m, "DequantizeLinear", "", "y,ys,yzp", "yf", NULL);
        pt_output(m, "yf");
    } else {
        pt_output(m, "y");
    }
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    assign_all(m, "cpu");
    return m;
}

/* The size of one quantization step of graph output i of `before`: 1 for a quantized output (the integer
 * domain), the scale of the DequantizeLinear producing a float output. */
static double output_step(const pc_model *before, uint32_t i)
{
    const pc_value *v = before->graph->outputs[i];
    if (v->type.elem != PC_DTYPE_FLOAT) return 1.0;
    const pc_node *dq = v->producer;
    double s = 0;
    if (dq && strcmp(dq->op_type, "DequantizeLinear") == 0) pm_scalar_f64(pc_value_const(dq->inputs[1]), &s);
    return s;
}

/* Largest output difference of `after` from `before` in quantization steps over several random inputs (-1
 * when a run fails). */
static double max_steps(const pc_model *before, const pc_model *after, int n_seeds)
{
    double worst = 0;
    for (int k = 0; k < n_seeds; k++) {
        uint64_t seed = 1000 + (uint64_t)k;
        pc_data *x = pt_random_input(before->graph->inputs[0], &seed);
        pc_data **a = NULL, **b = NULL;
        pc_error err;
        if (pc_ref_run(before, 1, &x, &a, &err) != PC_OK || pc_ref_run(after, 1, &x, &b, &err) != PC_OK) {
            fprintf(stderr, "reference run failed: %s\n", err.message);
            worst = -1;
        }
        for (uint32_t o = 0; worst >= 0 && o < before->graph->n_outputs; o++) {
            double step = output_step(before, o);
            for (uint64_t i = 0; i < a[o]->n_elements; i++) {
                double d = fabs(elem(a[o], i) - elem(b[o], i)) / step;
                worst = d > worst ? d : worst;
            }
        }
        if (a) pc_ref_free_outputs(before, a);
        if (b) pc_ref_free_outputs(after, b);
        pc_data_unref(x);
        if (worst < 0) break;
    }
    return worst;
}

/* Runs the pass on a fresh group model; checks it fired (or not), the op that replaced the group, EPs, the
 * output name and the one-step bound. */
static void check_group(const char *what, const conv_spec *s, const char *domain, const char *op)
{
    pc_model *m = group_model(s), *before = pt_clone(m);
    pc_pass_options o = cpu_options();
    pt_log.n = 0;
    bool changed = pt_run_pass(pc_pass_fuse_qdq_qlinear, m, &o);
    CHECK_MSG(changed == (op != NULL), "%s: changed = %d", what, changed);
    if (op) {
        CHECK_MSG(pt_count_in(m->graph, domain, op) == 1, "%s: no %s", what, op);
        CHECK_MSG(pt_count_op(m, "Conv") + pt_count_op(m, "MatMul") + pt_count_op(m, "Relu") == 0 &&
                      pt_count_op(m, "DequantizeLinear") == (s->dq_out ? 1 : 0),
                  "%s: group nodes left", what);
        for (const pc_node *n = m->graph->first; n; n = n->next)
            CHECK_MSG(n->ep && strcmp(n->ep, "cpu") == 0, "%s: node '%s' has EP %s", what, n->name,
                      n->ep ? n->ep : "(none)");
        CHECK_MSG(pt_log.n == 1, "%s: %d explain lines", what, pt_log.n);
    } else {
        CHECK_MSG(m->graph->n_nodes == before->graph->n_nodes, "%s: nodes changed", what);
    }
    CHECK(strcmp(m->graph->outputs[0]->name, s->dq_out ? "yf" : "y") == 0);
    double d = max_steps(before, m, 8);
    CHECK_MSG(d >= 0 && d <= 1.0 + 1e-6, "%s: outputs differ by %.3g quantization steps", what, d);
    pc_model_free(before);
    pc_model_free(m);
}

static void test_conv_groups(void)
{
    conv_spec s = conv_default();
    check_group("conv uint8 per-tensor", &s, "", "QLinearConv");
    s.dq_out = true;
    check_group("conv, float output", &s, "", "QLinearConv");
    s = conv_default();
    s.xt = s.yt = PC_DTYPE_INT8;
    s.xzp = -3;
    s.yzp = 5;
    s.w_per_axis = s.bias = true;
    check_group("conv int8 per-channel + bias", &s, "", "QLinearConv");
    s.w_per_axis = false;
    check_group("conv int8 per-tensor + bias", &s, "", "QLinearConv");
    s = conv_default();
    s.wt = PC_DTYPE_UINT8;
    check_group("conv uint8 x, uint8 w", &s, "", "QLinearConv");
    s = conv_default();
    s.relu = true;
    s.yzp = 0;
    check_group("conv + redundant Relu (zero point 0)", &s, "", "QLinearConv");
    s.yzp = 40;
    check_group("conv + Relu (zero point 40)", &s, "com.microsoft", "QLinearConvRelu");
    s = conv_default();
    s.matmul = true;
    check_group("matmul per-tensor", &s, "", "QLinearMatMul");
    s.w_per_axis = true;
    s.xt = s.yt = PC_DTYPE_INT8;
    s.xzp = 0;
    s.yzp = -128;
    s.relu = true;
    check_group("matmul int8 per-column + redundant Relu", &s, "", "QLinearMatMul");

    /* refused: ORT's selector rules and the bias scale */
    s = conv_default();
    s.xt = s.yt = PC_DTYPE_INT8;
    s.xzp = s.yzp = 0;
    s.wt = PC_DTYPE_UINT8;
    check_group("int8 x with uint8 w", &s, NULL, NULL);
    s = conv_default();
    s.yt = PC_DTYPE_INT8;
    s.yzp = 0;
    check_group("x uint8, y int8", &s, NULL, NULL);
    s = conv_default();
    s.bias = s.bias_bad_scale = true;
    check_group("bias scale != x_scale * w_scale", &s, NULL, NULL);
    s = conv_default();
    s.matmul = s.relu = true;
    check_group("matmul + Relu above the low end", &s, NULL, NULL);
}

/* FusedConv(Relu) made by fuse_conv_activation (it runs first at level 2) is part of the group. */
static void test_after_fuse_conv_activation(void)
{
    conv_spec s = conv_default();
    s.relu = true;
    pc_model *m = group_model(&s), *before = pt_clone(m);
    pc_pass_options o = cpu_options();
    o.pass_name = "fuse_conv_activation";
    CHECK(pt_run_pass(pc_pass_fuse_conv_activation, m, &o));
    CHECK(pt_count_op(m, "FusedConv") == 1);
    o.pass_name = "fuse_qdq_qlinear";
    CHECK(pt_run_pass(pc_pass_fuse_qdq_qlinear, m, &o));
    CHECK(pt_count_in(m->graph, "com.microsoft", "QLinearConvRelu") == 1 && pt_count_op(m, "FusedConv") == 0);
    double d = max_steps(before, m, 8);
    CHECK_MSG(d >= 0 && d <= 1.0 + 1e-6, "FusedConv(Relu) group: %.3g steps", d);
    pc_model_free(before);
    pc_model_free(m);
}

static pc_model *relu_model(int kind, int32_t zp);

static const pc_ep_op qdq_only_ops[] = {
    {"", "Conv", 1, 30, 0, 0, NULL, PC_EP_GROUP_NONE, 0},
    {"", "DequantizeLinear", 1, 30, 0, 0, NULL, PC_EP_GROUP_NONE, 0},
    {"", "QuantizeLinear", 1, 30, 0, 0, NULL, PC_EP_GROUP_NONE, 0},
    {"", "Relu", 1, 30, 0, 0, NULL, PC_EP_GROUP_NONE, 0},
};
static const pc_ep qdq_only_ep = {"qdq_only", PC_LAYOUT_NCHW, 0, false, true, false, 4, qdq_only_ops};

/* Nodes of another EP, an EP that does not run the result, and no EP: nothing changes. */
static void test_other_eps(void)
{
    conv_spec s = conv_default();
    pc_model *m = group_model(&s);
    assign_all(m, "nhwc");
    pc_pass_options o = cpu_options();
    uint32_t n = m->graph->n_nodes;
    CHECK(!pt_run_pass(pc_pass_fuse_qdq_qlinear, m, &o) && m->graph->n_nodes == n);
    pc_model_free(m);

    m = group_model(&s);
    for (pc_node *x = m->graph->first; x; x = x->next)
        if (strcmp(x->op_type, "QuantizeLinear") == 0) x->ep = "nhwc"; /* only the Qs elsewhere */
    CHECK(!pt_run_pass(pc_pass_fuse_qdq_qlinear, m, &o) && pt_count_op(m, "Conv") == 1);
    pc_model_free(m);

    m = group_model(&s);
    for (pc_node *x = m->graph->first; x; x = x->next)
        if (strcmp(x->op_type, "DequantizeLinear") == 0 && strcmp(x->outputs[0]->name, "wf") == 0)
            x->ep = "nhwc";
    CHECK(!pt_run_pass(pc_pass_fuse_qdq_qlinear, m, &o) && pt_count_op(m, "Conv") == 1);
    pc_model_free(m);

    /* an EP that runs the QDQ form but not QLinearConv: the new node is dropped again, constants too */
    m = group_model(&s);
    assign_all(m, "qdq_only");
    o.provider = "qdq_only";
    o.ep = &qdq_only_ep;
    uint32_t inits = m->graph->n_initializers;
    CHECK(!pt_run_pass(pc_pass_fuse_qdq_qlinear, m, &o));
    CHECK(pt_count_op(m, "Conv") == 1 && pt_count_op(m, "QLinearConv") == 0 && m->graph->n_nodes == n &&
          m->graph->n_initializers == inits);
    pc_model_free(m);

    /* QLinearConvRelu refused: the com.microsoft import made for the claim check is undone too */
    conv_spec r = conv_default();
    r.relu = true;
    r.yzp = 40;
    m = group_model(&r);
    assign_all(m, "qdq_only");
    CHECK(!pt_run_pass(pc_pass_fuse_qdq_qlinear, m, &o));
    CHECK(pc_model_opset(m, "com.microsoft") < 0 && pt_count_op(m, "QLinearConvRelu") == 0);
    pc_model_free(m);

    /* DQ -> Relu -> Q (equal, low end) feeding a graph output from a graph input needs an Identity, which
     * this EP does not run: nothing changes (dropping only the Relu would leave a DQ -> Q pair behind) */
    m = relu_model(1, 0);
    assign_all(m, "qdq_only");
    CHECK(!pt_run_pass(pc_pass_fuse_qdq_qlinear, m, &o));
    CHECK(m->graph->n_nodes == 3 && pt_count_op(m, "Relu") == 1);
    pc_model_free(m);

    m = group_model(&s);
    pc_pass_options none = pt_pass_options("fuse_qdq_qlinear");
    CHECK(!pt_run_pass(pc_pass_fuse_qdq_qlinear, m, &none));
    pc_model_free(m);
}

/* Relu rules: Relu -> Q(low end) loses the Relu; DQ -> Relu -> Q (equal, low end) disappears; QLinearConv ->
 * DQ -> Relu -> Q (equal, above the low end) becomes QLinearConvRelu; unequal parameters above the low end
 * stay. All bit-exact. */
static pc_model *relu_model(int kind, int32_t zp)
{
    pc_model *m = pt_model(17);
    float s = 0.05f, one = 1.0f;
    int32_t z0 = 128, w1 = 1;
    if (kind == 0) {
        pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){3, 4});
        pt_node(m, "Relu", "", "x", "r", NULL);
    } else {
        pt_input(m, "xq", PC_DTYPE_UINT8, 4, (int64_t[]){1, 1, 3, 4});
        pt_const_f(m, "s", 0, NULL, &s);
        put_zp(m, "z", PC_DTYPE_UINT8, 1, &zp);
        const char *src = "xq";
        if (kind == 2 || kind == 5) {
            if (kind == 5) pt_input(m, "zin", PC_DTYPE_UINT8, 0, NULL); /* y_zero_point computed */
            pt_const_f(m, "one", 0, NULL, &one);
            put_zp(m, "z0", PC_DTYPE_UINT8, 1, &z0);
            uint8_t w = 1;
            pt_const(m, "w", PC_DTYPE_INT8, 4, (int64_t[]){1, 1, 1, 1}, &w);
            put_zp(m, "wz", PC_DTYPE_INT8, 1, (int32_t[]){0});
            (void)w1;
            pt_node(m, "QLinearConv", "", kind == 5 ? "xq,one,z0,w,one,wz,s,zin" : "xq,one,z0,w,one,wz,s,z",
                    "qc", NULL);
            src = "qc";
        }
        char in[64];
        snprintf(in, sizeof in, "%s,s,z", src);
        pt_node(m, "DequantizeLinear", "", in, "d", NULL);
        pt_node(m, "Relu", "", "d", "r", NULL);
    }
    if (kind == 0) {
        pt_const_f(m, "s", 0, NULL, &s);
        put_zp(m, "z", PC_DTYPE_UINT8, 1, &zp);
    }
    if (kind == 3) {
        float s2 = 0.04f;
        pt_const_f(m, "s2", 0, NULL, &s2);
        pt_node(m, "QuantizeLinear", "", "r,s2,z", "y", NULL);
    } else {
        pt_node(m, "QuantizeLinear", "", "r,s,z", "y", NULL);
    }
    pt_output(m, "y");
    if (kind == 4) pt_output(m, "d"); /* the DQ has another use */
    pc_error err;
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    assign_all(m, "cpu");
    return m;
}

static void test_relu_rules(void)
{
    struct {
        int kind;
        int32_t zp;
        bool fires;
        uint32_t nodes_after;
        const char *op;
    } cases[] = {
        {0, 0, true, 1, "QuantizeLinear"},  /* ReluQuantFusion */
        {0, 7, false, 2, "Relu"},           /* zero point above the low end: Relu stays */
        {1, 0, true, 1, "Identity"},        /* DQ -> Relu -> Q, equal, low end: an Identity keeps the name */
        {1, 7, false, 3, "Relu"},           /* equal, above the low end, no QLinearConv: stays */
        {2, 7, true, 1, "QLinearConvRelu"}, /* QLinearConv -> DQ -> Relu -> Q */
        {2, 0, true, 1, "QLinearConv"},     /* low end: the Relu triple goes, QLinearConv stays */
        {3, 7, false, 3, "Relu"},           /* unequal scales above the low end */
        {3, 0, true, 2, "QuantizeLinear"},  /* unequal but low end: only the Relu goes */
        {4, 0, true, 2, "Identity"},        /* shared DQ, equal, low end: the DQ stays for its other use */
        {4, 7, false, 3, "Relu"},
        {5, 7, false, 4,
         "Relu"}, /* QLinearConv's output zero point computed: nothing to compare, no fusion */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pc_model *m = relu_model(cases[i].kind, cases[i].zp), *before = pt_clone(m);
        pc_pass_options o = cpu_options();
        bool changed = pt_run_pass(pc_pass_fuse_qdq_qlinear, m, &o);
        CHECK_MSG(changed == cases[i].fires, "relu case %zu: changed %d", i, changed);
        CHECK_MSG(m->graph->n_nodes == cases[i].nodes_after, "relu case %zu: %u nodes", i, m->graph->n_nodes);
        if (cases[i].op) CHECK_MSG(pt_count_op(m, cases[i].op) == 1, "relu case %zu: no %s", i, cases[i].op);
        CHECK(strcmp(m->graph->outputs[0]->name, "y") == 0);
        char why[PT_WHY_SIZE];
        CHECK_MSG(pt_equiv(before, m, 7 + i, 0, 0, why, sizeof why) == 1, "relu case %zu: %s", i, why);
        pc_model_free(before);
        pc_model_free(m);
    }
}

/* ---- generated cases: every node of the rewritten graph judged alone on the original graph's values
 * ------------ */

typedef struct named_values {
    uint32_t n;
    const char **names;
    pc_data **data;
    pc_model *holder; /* the model whose names are referenced */
    pc_data **outs;
} named_values;

static const pc_data *named_find(const named_values *nv, const char *name)
{
    for (uint32_t i = 0; i < nv->n; i++)
        if (strcmp(nv->names[i], name) == 0) return nv->data[i];
    return NULL;
}

/* Every value `before` computes on the case's inputs, by name (graph inputs included). */
static bool named_compute(const pc_model *before, const pc_case *c, named_values *nv)
{
    memset(nv, 0, sizeof *nv);
    pc_model *all = pt_clone(before);
    pc_error err;
    for (pc_node *n = all->graph->first; n; n = n->next)
        for (uint32_t o = 0; o < n->n_outputs; o++)
            if (n->outputs[o] && !n->outputs[o]->is_graph_output &&
                pc_graph_add_output(all->graph, n->outputs[o], &err) != PC_OK)
                return false;
    if (pc_ref_run(all, c->n_inputs, c->inputs, &nv->outs, &err) != PC_OK) {
        fprintf(stderr, "reference run of the original failed: %s\n", err.message);
        pc_model_free(all);
        return false;
    }
    uint32_t n = all->graph->n_outputs + c->n_inputs;
    nv->names = calloc(n, sizeof *nv->names);
    nv->data = calloc(n, sizeof *nv->data);
    for (uint32_t i = 0; i < all->graph->n_outputs; i++) {
        nv->names[nv->n] = all->graph->outputs[i]->name;
        nv->data[nv->n++] = nv->outs[i];
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < all->graph->n_inputs; i++) {
        if (all->graph->inputs[i]->initializer) continue;
        nv->names[nv->n] = all->graph->inputs[i]->name;
        nv->data[nv->n++] = c->inputs[k++];
    }
    nv->holder = all;
    return true;
}

static void named_free(named_values *nv)
{
    if (nv->outs) pc_ref_free_outputs(nv->holder, nv->outs);
    free(nv->names);
    free(nv->data);
    pc_model_free(nv->holder);
}

/* Runs node n (of `after`) alone on the named values; *diff: its largest output difference from the
 * original's value of the same name. false when the node cannot be judged (an input the original never
 * computed). */
static bool node_alone(const pc_node *n, const named_values *nv, double *diff)
{
    pc_model *m = pt_model(pc_model_opset(n->graph->model, ""));
    pc_data *ins[16];
    uint32_t n_ins = 0;
    char names[1024] = "";
    bool ok = n->n_inputs <= 16;
    for (uint32_t i = 0; ok && i < n->n_inputs; i++) {
        const pc_value *v = n->inputs[i];
        size_t len = strlen(names);
        snprintf(names + len, sizeof names - len, "%s%s", i ? "," : "", v ? v->name : "");
        if (!v || pc_graph_find_value(m->graph, v->name)) continue;
        if (v->initializer) {
            pt_const(m, v->name, v->initializer->dtype, v->initializer->rank, v->initializer->dims,
                     v->initializer->data);
            continue;
        }
        const pc_data *d = named_find(nv, v->name);
        if (!d)
            ok = false;
        else {
            pt_input(m, v->name, d->dtype, d->rank, d->dims);
            ins[n_ins++] = (pc_data *)d;
        }
    }
    const pc_data *want =
        ok && n->n_outputs == 1 && n->outputs[0] ? named_find(nv, n->outputs[0]->name) : NULL;
    ok = ok && want;
    if (ok) {
        pc_node *x = pt_node(m, n->op_type, n->domain, names, n->outputs[0]->name, NULL);
        pc_error err;
        CHECK_OK(pm_copy_attrs(x, n, &err), &err);
        pt_output(m, n->outputs[0]->name);
        pc_data **outs = NULL;
        ok = pc_ref_run(m, n_ins, ins, &outs, &err) == PC_OK;
        CHECK_MSG(ok, "node '%s' (%s) alone: %s", n->name, n->op_type, err.message);
        *diff = 0;
        for (uint64_t i = 0; ok && i < want->n_elements; i++) {
            double d = fabs(elem(want, i) - elem(outs[0], i));
            *diff = d > *diff ? d : *diff;
        }
        if (outs) pc_ref_free_outputs(m, outs);
    }
    pc_model_free(m);
    return ok;
}

typedef struct gen_stats {
    int cases, fired, qlinear_nodes, judged, over_bound, exact_whole, one_step;
} gen_stats;

static void run_generated(const char *family, int n_seeds, gen_stats *gs)
{
    pc_gen_config cfg;
    pc_gen_config_default(&cfg);
    cfg.family = family;
    for (uint64_t seed = 1; seed <= (uint64_t)n_seeds; seed++) {
        pc_choices ch;
        pc_choices_init_random(&ch, seed * 7919);
        pc_case c;
        pc_error err;
        if (pc_case_generate(&cfg, &ch, &c, &err) != PC_OK) {
            CHECK_MSG(false, "%s seed %llu: %s", family, (unsigned long long)seed, err.message);
            pc_choices_free(&ch);
            continue;
        }
        gs->cases++;
        assign_all(c.model, "cpu");
        pc_model *before = pt_clone(c.model);
        int qlinear_before = pt_count_op(before, "QLinearConv") + pt_count_op(before, "QLinearMatMul");
        pc_pass_options o = cpu_options();
        bool changed = pt_run_pass(pc_pass_fuse_qdq_qlinear, c.model, &o);
        gs->fired += changed;
        int made = pt_count_op(c.model, "QLinearConv") + pt_count_op(c.model, "QLinearMatMul") +
                   pt_count_op(c.model, "QLinearConvRelu") - qlinear_before;
        for (const pc_node *n = c.model->graph->first; n; n = n->next)
            CHECK_MSG(n->ep && strcmp(n->ep, "cpu") == 0, "%s seed %llu: node '%s' lost its EP", family,
                      (unsigned long long)seed, n->name);
        named_values nv;
        if (changed && named_compute(before, &c, &nv)) {
            for (const pc_node *n = c.model->graph->first; n; n = n->next) {
                double d;
                if (!node_alone(n, &nv, &d)) continue;
                gs->judged++;
                bool rewritten = strncmp(n->op_type, "QLinear", 7) == 0;
                gs->qlinear_nodes += rewritten;
                /* quantized outputs: 1 step is 1 in the integer domain */
                double bound = rewritten ? 1.0 : 0.0;
                if (d > bound) gs->over_bound++;
                gs->one_step += rewritten && d == 1.0;
                if (!pc_fault_active(PC_FAULT_QDQ_ROUNDING))
                    CHECK_MSG(d <= bound, "%s seed %llu: node '%s' (%s) differs by %g (bound %g)", family,
                              (unsigned long long)seed, n->name, n->op_type, d, bound);
            }
            named_free(&nv);
        }
        if (changed && made <= 0 && !pc_fault_active(PC_FAULT_QDQ_ROUNDING)) {
            /* only exact (Relu) rewrites: the whole graph is bit-exact */
            char why[PT_WHY_SIZE];
            CHECK_MSG(pt_equiv_inputs(before, c.model, c.n_inputs, c.inputs, 0, 0, why, sizeof why) == 1,
                      "%s seed %llu: %s", family, (unsigned long long)seed, why);
            gs->exact_whole++;
        }
        pc_model_free(before);
        pc_case_free(&c);
        pc_choices_free(&ch);
    }
}

static void test_generated(void)
{
    gen_stats q = {0}, l = {0};
    run_generated("qdq", 150, &q);
    run_generated("qlinear", 100, &l);
    printf("qdq: %d cases, pass fired on %d, %d nodes judged alone (%d QLinear, %d of them exactly one step "
           "off), "
           "%d exact-only cases\n",
           q.cases, q.fired, q.judged, q.qlinear_nodes, q.one_step, q.exact_whole);
    printf("qlinear: %d cases, pass fired on %d, %d nodes judged alone (%d QLinear)\n", l.cases, l.fired,
           l.judged, l.qlinear_nodes);
    CHECK_MSG(q.fired >= 10 && q.qlinear_nodes >= 10, "qdq: the pass fired on %d cases, %d QLinear nodes",
              q.fired, q.qlinear_nodes);
    CHECK_MSG(l.fired >= 5, "qlinear: the pass fired on %d cases", l.fired);
    CHECK(q.over_bound == 0 && l.over_bound == 0);
}

/* With the fault on, the hand-built case and some generated case exceed the one-step bound. */
static void test_fault(void)
{
    pc_error err;
    CHECK_OK(pc_fault_enable_list("qdq-wrong-rounding", &err), &err);
    conv_spec s = conv_default();
    pc_model *m = group_model(&s), *before = pt_clone(m);
    pc_pass_options o = cpu_options();
    CHECK(pt_run_pass(pc_pass_fuse_qdq_qlinear, m, &o));
    double d = max_steps(before, m, 8);
    CHECK_MSG(d > 1.0, "fault: hand-built conv differs by only %.3g steps", d);
    printf("fault qdq-wrong-rounding: hand-built conv differs by %.0f steps\n", d);
    pc_model_free(before);
    pc_model_free(m);
    gen_stats q = {0};
    run_generated("qdq", 60, &q);
    printf("fault qdq-wrong-rounding: %d of %d QLinear nodes over the bound in %d qdq cases\n", q.over_bound,
           q.qlinear_nodes, q.cases);
    CHECK_MSG(q.over_bound > 0, "fault: no generated case exceeds the bound (%d QLinear nodes)",
              q.qlinear_nodes);
    pc_fault_reset();
}

/* DQ(a), DQ(b) -> Add -> Q: one QLinearAdd, bit-exact (b broadcast, zero points present or absent, int8 and
 * uint8); a per-axis DQ, or b of another type, is a near miss and nothing changes. */
static void test_add_group(void)
{
    for (int k = 0; k < 6; k++) {
        pc_dtype t = k % 2 ? PC_DTYPE_INT8 : PC_DTYPE_UINT8,
                 bt = k == 5 ? (k % 2 ? PC_DTYPE_UINT8 : PC_DTYPE_INT8) : t;
        bool per_axis = k == 4;
        pc_model *m = pt_model(13);
        pt_input(m, "a", t, 3, (int64_t[]){2, 3, 4});
        pt_input(m, "b", bt, 2, (int64_t[]){1, 4});
        float as = 0.037f * (float)(k + 1), bs = 0.011f, ys = 0.05f, axs[3] = {0.03f, 0.02f, 0.01f};
        int8_t zi = -3;
        uint8_t zu = 121;
        pt_const(m, "as", PC_DTYPE_FLOAT, per_axis ? 1 : 0, (int64_t[]){3},
                 per_axis ? (const void *)axs : &as);
        pt_const(m, "bs", PC_DTYPE_FLOAT, 0, NULL, &bs);
        pt_const(m, "ys", PC_DTYPE_FLOAT, 0, NULL, &ys);
        pt_const(m, "az", t, per_axis ? 1 : 0, (int64_t[]){3},
                 per_axis ? (const void *)(int8_t[3]){0, 0, 0}
                          : (t == PC_DTYPE_INT8 ? (const void *)&zi : &zu));
        pt_const(m, "bz", bt, 0, NULL, bt == PC_DTYPE_INT8 ? (const void *)&zi : &zu);
        pt_const(m, "yz", t, 0, NULL, t == PC_DTYPE_INT8 ? (const void *)&zi : &zu);
        pc_node *dqa = pt_node(m, "DequantizeLinear", "", k == 2 ? "a,as" : "a,as,az", "fa", NULL);
        if (per_axis) {
            pc_error aerr;
            CHECK_OK(pc_node_set_attr_int(dqa, "axis", 1, &aerr), &aerr);
        }
        pt_node(m, "DequantizeLinear", "", k == 3 ? "b,bs" : "b,bs,bz", "fb", NULL);
        pt_node(m, "Add", "", "fa,fb", "s", NULL);
        pt_node(m, "QuantizeLinear", "", "s,ys,yz", "y", NULL);
        pt_output(m, "y");
        /* an absent zero point is uint8 0: an int8 a or b then has a zero point of its own type only when
         * given */
        if ((k == 2 && t == PC_DTYPE_INT8) || (k == 3 && bt == PC_DTYPE_INT8)) {
            pc_model_free(m);
            continue;
        }
        pc_error err;
        CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err); /* the float side's type is checked */
        assign_all(m, "cpu");
        pc_model *before = pt_clone(m);
        pc_pass_options o = cpu_options();
        bool changed = pt_run_pass(pc_pass_fuse_qdq_qlinear, m, &o);
        bool fuse = k < 4;
        CHECK_MSG(changed == fuse && pt_count_in(m->graph, "com.microsoft", "QLinearAdd") == (fuse ? 1 : 0),
                  "Add group %d: changed %d, %d QLinearAdd", k, changed,
                  pt_count_in(m->graph, "com.microsoft", "QLinearAdd"));
        if (fuse) CHECK(pt_count_op(m, "DequantizeLinear") == 0 && pt_count_op(m, "QuantizeLinear") == 0);
        char why[2048];
        for (uint64_t seed = 1; seed <= 6; seed++)
            CHECK_MSG(pt_equiv(before, m, seed, 0, 0, why, sizeof why) == 1, "Add group %d, seed %llu: %s", k,
                      (unsigned long long)seed, why);
        pc_model_free(before);
        pc_model_free(m);
    }
}

int main(void)
{
    test_conv_groups();
    test_add_group();
    test_after_fuse_conv_activation();
    test_other_eps();
    test_relu_rules();
    test_generated();
    test_fault();
    return pc_test_finish("test_passes_fuse_qdq_qlinear");
}
