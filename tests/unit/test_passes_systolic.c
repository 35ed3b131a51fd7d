/* The systolic EP (core/ep/registry.c) and its level-3 rewrite (core/passes/systolic_nhwc.c), on hand-built
 * graphs optimized with --ep systolic,cpu. Oracles: the HWIO weight checked element by element against the
 * OIHW original (h, w, i, o) = (o, i, h, w); the reorders counted as the Systolic fork counts them (one per
 * NCHW source, one back per output still read in NCHW); every new node on the systolic EP; the reference
 * executor bit-exact between the original graph (standard QLinearConv) and the rewritten one (its composite
 * definition of QLinearConv_nhwc); the runtime bit-exact against the reference; relu = 1 against the
 * standard QLinearConv -> DequantizeLinear -> Relu -> QuantizeLinear it fuses; the refusals. */
#include <string.h>

#include "reference/reference.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

static const pc_ep *eps[2];

static void eps_init(pc_ep_registry **reg)
{
    pc_error err;
    if (pc_ep_registry_create(reg, &err) != PC_OK) pt_die("registry", &err);
    eps[0] = pc_ep_registry_find(*reg, "systolic");
    eps[1] = pc_ep_registry_find(*reg, "cpu");
    CHECK(eps[0] && eps[1]);
    CHECK(eps[0]->layout == PC_LAYOUT_NCHW && eps[0]->runs_transpose && !eps[0]->all_standard_ops);
}

/* x uint8 [1, c, h, w], the shared quantization parameters, and w int8 [m, c, k, k] with elements 1, 2, ...
 */
static pc_model *conv_model(int64_t c, int64_t hw, int64_t m, int64_t k)
{
    pc_model *md = pt_model(13);
    pt_input(md, "x", PC_DTYPE_UINT8, 4, (int64_t[]){1, c, hw, hw});
    float xs = 0.05f, ws = 0.02f, ys = 0.1f;
    uint8_t xz = 3, yz = 120;
    int8_t wz = 0;
    pt_const(md, "xs", PC_DTYPE_FLOAT, 0, NULL, &xs);
    pt_const(md, "xz", PC_DTYPE_UINT8, 0, NULL, &xz);
    pt_const(md, "ws", PC_DTYPE_FLOAT, 0, NULL, &ws);
    pt_const(md, "wz", PC_DTYPE_INT8, 0, NULL, &wz);
    pt_const(md, "ys", PC_DTYPE_FLOAT, 0, NULL, &ys);
    pt_const(md, "yz", PC_DTYPE_UINT8, 0, NULL, &yz);
    int8_t wv[1024];
    int64_t n = m * c * k * k;
    CHECK(n <= 1024);
    for (int64_t i = 0; i < n; i++)
        wv[i] = (int8_t)((i * 37) % 251 - 125);
    pt_const(md, "w", PC_DTYPE_INT8, 4, (int64_t[]){m, c, k, k}, wv);
    return md;
}

static void equal_on_reference(const pc_model *before, const pc_model *after, const char *what)
{
    char why[2048];
    for (uint64_t seed = 1; seed <= 4; seed++) {
        int r = pt_equiv(before, after, seed, 0, 0, why, sizeof why);
        CHECK_MSG(r == 1, "%s, seed %llu: %s", what, (unsigned long long)seed, why);
    }
}

static void test_one_conv(void)
{
    pc_model *m = conv_model(3, 5, 4, 3);
    pc_node *conv = pt_node(m, "QLinearConv", "", "x,xs,xz,w,ws,wz,ys,yz", "y", NULL);
    pc_error err;
    CHECK_OK(pc_node_set_attr_ints(conv, "pads", 4, (int64_t[]){1, 0, 1, 2}, &err), &err);
    pt_output(m, "y");
    pc_model *before = pt_clone(m);
    pt_optimize_eps(m, eps, 2);
    CHECK(pt_count_in(m->graph, PC_SYSTOLIC_DOMAIN, "QLinearConv_nhwc") == 1 &&
          pt_count_in(m->graph, "", "QLinearConv") == 0);
    CHECK_MSG(pt_count_in(m->graph, "", "Transpose") == 2, "%d Transposes: one reorder in, one back",
              pt_count_in(m->graph, "", "Transpose"));
    pt_all_on(m->graph, "systolic");
    CHECK(pc_model_opset(m, PC_SYSTOLIC_DOMAIN) == 1);
    const pc_value *old_w = pc_graph_find_value(m->graph, "w");
    CHECK_MSG(!old_w || !old_w->initializer, "the OIHW weight nothing reads any more is dropped");
    /* the weight: HWIO, element (h, w, i, o) = OIHW (o, i, h, w) */
    const pc_node *n = NULL;
    for (const pc_node *k = m->graph->first; k; k = k->next)
        if (strcmp(k->op_type, "QLinearConv_nhwc") == 0) n = k;
    const pc_tensor *wh = n ? pc_value_const(n->inputs[3]) : NULL,
                    *wo = pc_value_const(pc_graph_find_value(before->graph, "w"));
    CHECK(wh && wo && wh->dtype == PC_DTYPE_INT8 && wh->rank == 4);
    if (wh && wo && wh->rank == 4) {
        CHECK(wh->dims[0] == 3 && wh->dims[1] == 3 && wh->dims[2] == 3 && wh->dims[3] == 4);
        const int8_t *h = wh->data, *o = wo->data;
        int wrong = 0;
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 3; b++)
                for (int y = 0; y < 3; y++)
                    for (int x = 0; x < 3; x++)
                        wrong += h[((y * 3 + x) * 3 + b) * 4 + a] != o[((a * 3 + b) * 3 + y) * 3 + x];
        CHECK_MSG(wrong == 0, "%d HWIO elements differ from the OIHW ones they come from", wrong);
    }
    equal_on_reference(before, m, "one conv");
    pt_runtime_equals_reference(m, 7, 0, 0, "one conv");
    pc_model_free(before);
    pc_model_free(m);
}

/* x read by two convs (one reorder), conv a feeding conv b (no pair between them), a's output also a graph
 * output (one way back), the weight shared by a and c (one HWIO copy): Transposes = 1 + 3 outputs. */
static void test_reorder_counting(void)
{
    pc_model *m = conv_model(4, 5, 4, 3);
    int8_t w2[16];
    for (int i = 0; i < 16; i++)
        w2[i] = (int8_t)(i * 9 - 70);
    pt_const(m, "w2", PC_DTYPE_INT8, 4, (int64_t[]){4, 4, 1, 1}, w2);
    pc_error err;
    pc_node *a = pt_node(m, "QLinearConv", "", "x,xs,xz,w,ws,wz,ys,yz", "ya", NULL);
    CHECK_OK(pc_node_set_attr_ints(a, "pads", 4, (int64_t[]){1, 1, 1, 1}, &err), &err);
    pt_node(m, "QLinearConv", "", "ya,ys,yz,w2,ws,wz,ys,yz", "yb", NULL);
    pc_node *c = pt_node(m, "QLinearConv", "", "x,xs,xz,w,ws,wz,ys,yz", "yc", NULL);
    CHECK_OK(pc_node_set_attr_ints(c, "strides", 2, (int64_t[]){2, 2}, &err), &err);
    pt_output(m, "yb");
    pt_output(m, "yc");
    pt_output(m, "ya");
    pc_model *before = pt_clone(m);
    pt_optimize_eps(m, eps, 2);
    CHECK(pt_count_in(m->graph, PC_SYSTOLIC_DOMAIN, "QLinearConv_nhwc") == 3);
    CHECK_MSG(pt_count_in(m->graph, "", "Transpose") == 4,
              "%d Transposes, 4 expected (x in; ya, yb, yc back)", pt_count_in(m->graph, "", "Transpose"));
    pt_all_on(m->graph, "systolic");
    const pc_value *w33[4];
    int n33 = 0;
    for (const pc_node *n = m->graph->first; n; n = n->next) {
        const pc_tensor *t =
            strcmp(n->op_type, "QLinearConv_nhwc") == 0 ? pc_value_const(n->inputs[3]) : NULL;
        if (t && t->rank == 4 && t->dims[0] == 3 && n33 < 4) w33[n33++] = n->inputs[3];
    }
    CHECK_MSG(n33 == 2 && w33[0] == w33[1], "convs a and c share one HWIO copy of w (%d found)", n33);
    equal_on_reference(before, m, "three convs");
    pt_runtime_equals_reference(m, 7, 0, 0, "three convs");
    /* idempotent: a second run changes nothing */
    pc_model *again = pt_clone(m);
    pt_optimize_eps(again, eps, 2);
    char diff[512];
    CHECK_MSG(pc_model_equal(m, again, diff, sizeof diff), "optimizing again changed the graph: %s", diff);
    pc_model_free(again);
    pc_model_free(before);
    pc_model_free(m);
}

/* A chain whose first output nothing else reads: its way back is removed, one reorder in and one back out. */
static void test_chain_inside(void)
{
    pc_model *m = conv_model(4, 5, 4, 1);
    pt_node(m, "QLinearConv", "", "x,xs,xz,w,ws,wz,ys,yz", "ya", NULL);
    pt_node(m, "QLinearConv", "", "ya,ys,yz,w,ws,wz,ys,yz", "yb", NULL);
    pt_output(m, "yb");
    pc_model *before = pt_clone(m);
    pt_optimize_eps(m, eps, 2);
    CHECK(pt_count_in(m->graph, PC_SYSTOLIC_DOMAIN, "QLinearConv_nhwc") == 2);
    CHECK_MSG(pt_count_in(m->graph, "", "Transpose") == 2, "%d Transposes, 2 expected (x in, yb back)",
              pt_count_in(m->graph, "", "Transpose"));
    equal_on_reference(before, m, "chain inside");
    pc_model_free(before);
    pc_model_free(m);
}

/* Left as QLinearConv (on systolic, NCHW): a uint8 weight, a weight that is a graph input, a 3-D x. */
static void test_refusals(void)
{
    pc_model *m = conv_model(2, 4, 2, 1);
    uint8_t wu[4] = {1, 200, 3, 4}, wuz = 128;
    pt_const(m, "wu", PC_DTYPE_UINT8, 4, (int64_t[]){2, 2, 1, 1}, wu);
    pt_const(m, "wuz", PC_DTYPE_UINT8, 0, NULL, &wuz);
    pt_input(m, "wi", PC_DTYPE_INT8, 4, (int64_t[]){2, 2, 1, 1});
    pt_input(m, "x3", PC_DTYPE_UINT8, 3, (int64_t[]){1, 2, 6});
    int8_t w3[4] = {1, -2, 3, -4};
    pt_const(m, "w3", PC_DTYPE_INT8, 3, (int64_t[]){2, 2, 1}, w3);
    pt_node(m, "QLinearConv", "", "x,xs,xz,wu,ws,wuz,ys,yz", "y1", NULL);
    pt_node(m, "QLinearConv", "", "x,xs,xz,wi,ws,wz,ys,yz", "y2", NULL);
    pt_node(m, "QLinearConv", "", "x3,xs,xz,w3,ws,wz,ys,yz", "y3", NULL);
    pt_output(m, "y1");
    pt_output(m, "y2");
    pt_output(m, "y3");
    pt_optimize_eps(m, eps, 2);
    CHECK(pt_count_in(m->graph, "", "QLinearConv") == 3 &&
          pt_count_in(m->graph, PC_SYSTOLIC_DOMAIN, "QLinearConv_nhwc") == 0);
    CHECK(pt_count_in(m->graph, "", "Transpose") == 0 && pc_model_opset(m, PC_SYSTOLIC_DOMAIN) < 0);
    pt_all_on(m->graph, "systolic");
    pc_model_free(m);
}

/* relu = 1 is QLinearConv -> DequantizeLinear -> Relu -> QuantizeLinear with y's parameters (the Systolic
 * quantizer's QLinearRelu), computed by the standard ops; for every y zero point kind (low end, middle). */
static void test_relu_attribute(void)
{
    for (int zp_case = 0; zp_case < 2; zp_case++) {
        pc_model *a = conv_model(3, 4, 3, 2), *b = conv_model(3, 4, 3, 2);
        uint8_t yz2 = zp_case ? 120 : 0;
        pt_const(a, "yz2", PC_DTYPE_UINT8, 0, NULL, &yz2);
        pt_const(b, "yz2", PC_DTYPE_UINT8, 0, NULL, &yz2);
        pt_node(a, "QLinearConv", "", "x,xs,xz,w,ws,wz,ys,yz2", "c", NULL);
        pt_node(a, "DequantizeLinear", "", "c,ys,yz2", "d", NULL);
        pt_node(a, "Relu", "", "d", "r", NULL);
        pt_node(a, "QuantizeLinear", "", "r,ys,yz2", "y", NULL);
        pt_output(a, "y");
        /* b: the systolic form written by hand: reorder in, HWIO weight, relu = 1, reorder back */
        const pc_tensor *wo = pc_value_const(pc_graph_find_value(b->graph, "w"));
        int8_t wh[54];
        const int8_t *o = wo->data;
        for (int m = 0; m < 3; m++)
            for (int i = 0; i < 3; i++)
                for (int y = 0; y < 2; y++)
                    for (int x = 0; x < 2; x++)
                        wh[((y * 2 + x) * 3 + i) * 3 + m] = o[((m * 3 + i) * 2 + y) * 2 + x];
        pt_const(b, "wh", PC_DTYPE_INT8, 4, (int64_t[]){2, 2, 3, 3}, wh);
        pc_error err;
        pc_node *t = pt_node(b, "Transpose", "", "x", "xt", NULL);
        CHECK_OK(pc_node_set_attr_ints(t, "perm", 4, (int64_t[]){0, 2, 3, 1}, &err), &err);
        pc_node *c =
            pt_node(b, "QLinearConv_nhwc", PC_SYSTOLIC_DOMAIN, "xt,xs,xz,wh,ws,wz,ys,yz2", "ct", NULL);
        CHECK_OK(pc_node_set_attr_int(c, "relu", 1, &err), &err);
        pc_node *back = pt_node(b, "Transpose", "", "ct", "y", NULL);
        CHECK_OK(pc_node_set_attr_ints(back, "perm", 4, (int64_t[]){0, 3, 1, 2}, &err), &err);
        pt_output(b, "y");
        CHECK_OK(pc_model_verify(b, &err), &err);
        equal_on_reference(a, b, zp_case ? "relu = 1, y zero point 120" : "relu = 1, y zero point 0");
        pt_runtime_equals_reference(b, 7, 0, 0, "relu = 1");
        /* a relu other than 0 or 1 is refused by the reference and the runtime alike */
        CHECK_OK(pc_node_set_attr_int(c, "relu", 2, &err), &err);
        uint64_t seed = 3;
        pc_data *x = pt_random_input(b->graph->inputs[0], &seed), **outs = NULL;
        CHECK(pc_ref_run(b, 1, &x, &outs, &err) == PC_ERR_ATTRIBUTE);
        pc_session_options so;
        pc_session_options_default(&so);
        so.optimize = false;
        pc_session *s = NULL;
        pc_status st = pc_session_create(b, &so, &s, &err);
        if (st == PC_OK) st = pc_session_run(s, 1, &x, &outs, &err);
        CHECK_MSG(st == PC_ERR_ATTRIBUTE, "runtime with relu = 2: %s", pc_status_name(st));
        pc_session_free(s);
        pc_data_unref(x);
        pc_model_free(a);
        pc_model_free(b);
    }
}

static const pc_node *find_op(const pc_model *m, const char *domain, const char *op)
{
    for (const pc_node *n = m->graph->first; n; n = n->next)
        if (strcmp(n->domain, domain) == 0 && strcmp(n->op_type, op) == 0) return n;
    return NULL;
}

/* Optimizes a clone of `m` and checks it against the original on the reference and the runtime. */
static pc_model *optimized_checked(const pc_model *m, const char *what)
{
    pc_model *o = pt_clone(m);
    pt_optimize_eps(o, eps, 2);
    equal_on_reference(m, o, what);
    pt_runtime_equals_reference(o, 7, 0, 0, what);
    pt_all_on(o->graph, "systolic");
    /* idempotent: a second run changes nothing */
    pc_model *again = pt_clone(o);
    pt_optimize_eps(again, eps, 2);
    char diff[512];
    CHECK_MSG(pc_model_equal(o, again, diff, sizeof diff), "%s: optimizing again changed the graph: %s", what,
              diff);
    pc_model_free(again);
    return o;
}

/* The quantizer's QLinearRelu after a conv (QLinearConv -> DQ -> Relu -> Q, y's parameters): claimed by
 * systolic as a group, fused at level 2 (QLinearConvRelu), at level 3 one kernel with relu = 1. */
static void test_relu_group_fused(void)
{
    pc_model *m = conv_model(3, 4, 3, 2);
    pt_node(m, "QLinearConv", "", "x,xs,xz,w,ws,wz,ys,yz", "c", NULL);
    pt_node(m, "DequantizeLinear", "", "c,ys,yz", "d", NULL);
    pt_node(m, "Relu", "", "d", "r", NULL);
    pt_node(m, "QuantizeLinear", "", "r,ys,yz", "y", NULL);
    pt_output(m, "y");
    pc_model *o = optimized_checked(m, "conv + DQ/Relu/Q group");
    const pc_node *c = find_op(o, PC_SYSTOLIC_DOMAIN, "QLinearConv_nhwc");
    CHECK(c && pc_node_attr_int(c, "relu", 0) == 1);
    CHECK_MSG(pt_count_in(o->graph, "", "Transpose") == 2 && pt_count_in(o->graph, "", "Relu") == 0 &&
                  pt_count_in(o->graph, "", "QuantizeLinear") == 0,
              "%d Transposes, %d Relus", pt_count_in(o->graph, "", "Transpose"),
              pt_count_in(o->graph, "", "Relu"));
    pc_model_free(o);
    pc_model_free(m);
}

/* The fork's own QLinearRelu after a conv whose output nothing else reads: fused (relu = 1). When the conv's
 * output is also a graph output, or read by another conv converted before the QLinearRelu in the walk:
 * carried in NHWC (the conv's output must stay as it is for the other reader). */
static void test_fork_relu(void)
{
    static const char *const what[3] = {"QLinearRelu fused", "QLinearRelu carried (graph output)",
                                        "QLinearRelu carried (a conv reads the output too)"};
    for (int shared = 0; shared < 3; shared++) {
        pc_model *m = conv_model(3, 4, 3, 1);
        pc_error err;
        CHECK_OK(pc_model_set_opset(m, PC_SYSTOLIC_DOMAIN, 1, &err), &err);
        pt_node(m, "QLinearConv", "", "x,xs,xz,w,ws,wz,ys,yz", "c", NULL);
        if (shared == 2) pt_node(m, "QLinearConv", "", "c,ys,yz,w,ws,wz,ys,yz", "c2", NULL);
        pt_node(m, "QLinearRelu", PC_SYSTOLIC_DOMAIN, "c,yz", "y", NULL);
        pt_output(m, "y");
        if (shared == 1) pt_output(m, "c");
        if (shared == 2) pt_output(m, "c2");
        pc_model *o = optimized_checked(m, what[shared]);
        const pc_node *c = NULL;
        for (const pc_node *n = o->graph->first; n; n = n->next)
            if (strcmp(n->op_type, "QLinearConv_nhwc") == 0 && n->inputs[0]->producer &&
                strcmp(n->inputs[0]->producer->op_type, "Transpose") == 0)
                c = n;
        CHECK(c && pc_node_attr_int(c, "relu", 0) == (shared ? 0 : 1));
        CHECK(pt_count_in(o->graph, PC_SYSTOLIC_DOMAIN, "QLinearRelu") == (shared ? 1 : 0));
        CHECK_MSG(pt_count_in(o->graph, "", "Transpose") == 2 + (shared ? 1 : 0), "%s: %d Transposes",
                  what[shared], pt_count_in(o->graph, "", "Transpose"));
        const pc_node *r = find_op(o, PC_SYSTOLIC_DOMAIN, "QLinearRelu");
        CHECK(!r || (c && r->inputs[0] == c->outputs[0]));
        pc_model_free(o);
        pc_model_free(m);
    }
}

/* A DQ -> Relu -> Q group with equal parameters not after a conv: QLinearRelu (systolic claims the group). */
static void test_relu_group_alone(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_INT8, 2, (int64_t[]){3, 5});
    float s = 0.25f;
    int8_t z = 7;
    pt_const(m, "s", PC_DTYPE_FLOAT, 0, NULL, &s);
    pt_const(m, "z", PC_DTYPE_INT8, 0, NULL, &z);
    pt_node(m, "DequantizeLinear", "", "x,s,z", "d", NULL);
    pt_node(m, "Relu", "", "d", "r", NULL);
    pt_node(m, "QuantizeLinear", "", "r,s,z", "y", NULL);
    pt_output(m, "y");
    pc_model *o = optimized_checked(m, "DQ/Relu/Q alone");
    const pc_node *r = find_op(o, PC_SYSTOLIC_DOMAIN, "QLinearRelu");
    CHECK(r && o->graph->first == r && !r->next);
    pc_model_free(o);
    /* unequal parameters: no group, nothing on systolic, cpu runs the three as they are */
    float s2 = 0.5f;
    pt_const(m, "s2", PC_DTYPE_FLOAT, 0, NULL, &s2);
    pc_node *q = (pc_node *)find_op(m, "", "QuantizeLinear");
    pc_error err;
    CHECK_OK(pc_node_set_input(q, 1, pc_graph_find_value(m->graph, "s2"), &err), &err);
    o = pt_clone(m);
    pt_optimize_eps(o, eps, 2);
    CHECK(pt_count_in(o->graph, PC_SYSTOLIC_DOMAIN, "QLinearRelu") == 0 &&
          pt_count_in(o->graph, "", "Relu") == 1);
    pt_all_on(o->graph, "cpu");
    pc_model_free(o);
    pc_model_free(m);
}

/* Two convs of x added: the add carried in NHWC as the EP's own QLinearAdd (one reorder in, one back). With
 * B of another shape (broadcast) it stays NCHW; the fork's two TransformQLinearAdd bugs carry it anyway and
 * the verifier's shape inference names the mismatch. */
static void test_add(void)
{
    for (int broadcast = 0; broadcast < 2; broadcast++) {
        pc_model *m = conv_model(3, 5, 3, 1);
        int8_t w5[3 * 3 * 25];
        for (int i = 0; i < 3 * 3 * 25; i++)
            w5[i] = (int8_t)(i % 7 - 3);
        pt_const(m, "w5", PC_DTYPE_INT8, 4, (int64_t[]){3, 3, 5, 5}, w5);
        pt_node(m, "QLinearConv", "", "x,xs,xz,w,ws,wz,ys,yz", "a", NULL);
        pt_node(m, "QLinearConv", "", broadcast ? "x,xs,xz,w5,ws,wz,ys,yz" : "x,xs,xz,w,ws,wz,ys,yz", "b",
                NULL);
        pt_node(m, "QLinearAdd", PC_MS_DOMAIN, "a,ys,yz,b,ys,yz,xs,xz", "y", NULL);
        pc_error err;
        CHECK_OK(pc_model_set_opset(m, PC_MS_DOMAIN, 1, &err), &err);
        pt_output(m, "y");
        pc_model *o = optimized_checked(m, broadcast ? "broadcast add" : "add");
        CHECK(pt_count_in(o->graph, PC_SYSTOLIC_DOMAIN, "QLinearAdd") == !broadcast);
        CHECK(pt_count_in(o->graph, PC_MS_DOMAIN, "QLinearAdd") == broadcast);
        CHECK_MSG(pt_count_in(o->graph, "", "Transpose") == (broadcast ? 3 : 2), "%d Transposes",
                  pt_count_in(o->graph, "", "Transpose"));
        pc_model_free(o);
        for (int f = 0; broadcast && f < 2; f++) {
            CHECK_OK(pc_fault_enable_list(f ? "systolic-add-no-return" : "systolic-add-shape-copy", &err),
                     &err);
            o = pt_clone(m);
            pc_optimize_options opt;
            pc_optimize_options_default(&opt);
            opt.eps = eps;
            opt.n_eps = 2;
            opt.verify_each_pass = true;
            pc_status st = pc_model_optimize(o, &opt, NULL, &err);
            CHECK_MSG(st != PC_OK && strstr(err.message, "equal shapes"), "fault %d: %s", f,
                      st == PC_OK ? "optimized" : err.message);
            pc_fault_reset();
            pc_model_free(o);
        }
        pc_model_free(m);
    }
}

/* Bad QLinearRelu and systolic QLinearAdd nodes are refused by shape inference, naming the input. */
static void test_bad_nodes(void)
{
    pc_model *m = pt_model(13);
    pc_error err;
    CHECK_OK(pc_model_set_opset(m, PC_SYSTOLIC_DOMAIN, 1, &err), &err);
    pt_input(m, "x", PC_DTYPE_INT8, 2, (int64_t[]){2, 3});
    int8_t z2[2] = {1, 2};
    pt_const(m, "z2", PC_DTYPE_INT8, 1, (int64_t[]){2}, z2);
    pt_node(m, "QLinearRelu", PC_SYSTOLIC_DOMAIN, "x,z2", "y", NULL);
    pt_output(m, "y");
    CHECK_STATUS(pc_graph_infer_shapes(m->graph, &err), PC_ERR_SHAPE, &err);
    CHECK_MSG(strstr(err.message, "X_zero_point must be a scalar or a 1-D tensor of one element"), "%s",
              err.message);
    pc_model_free(m);
}

int main(void)
{
    pc_ep_registry *reg = NULL;
    eps_init(&reg);
    test_one_conv();
    test_reorder_counting();
    test_chain_inside();
    test_refusals();
    test_relu_attribute();
    test_relu_group_fused();
    test_fork_relu();
    test_relu_group_alone();
    test_add();
    test_bad_nodes();
    pc_ep_registry_free(reg);
    return pc_test_finish("test_passes_systolic");
}
