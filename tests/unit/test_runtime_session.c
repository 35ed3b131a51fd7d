/* The runtime's session and its gemm kernels (core/runtime/session.c, kernels/conv.c) against the reference
 * executor: random Conv (1-D and 2-D; groups, depthwise and pointwise; strides, dilations, asymmetric pads,
 * auto_pad; with and without bias), FusedConv with each activation, the same convolutions in the internal
 * NHWC domain, MatMul with broadcast batch axes and 1-D operands, Gemm with transposes, alpha, beta and each
 * C broadcast — each as a one-node model run by a session (optimize off) and by pc_ref_run, floats within
 * rtol 1e-4, atol 1e-4. Then the session's contract: inputs checked (count, type, rank, static dims) with
 * messages naming the input, a node without a kernel refused at creation naming it, symbolic dims planned at
 * the first run and planned again for new sizes, and repeated runs giving the same bits; then profiling's
 * counts and FLOPs. */
#include <string.h>

#include "core/runtime/rt_internal.h"
#include "reference/reference.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

static uint64_t rng = 0xda942042e4dd58b5ull;

static uint32_t draw(uint32_t bound)
{
    return (uint32_t)(pc_splitmix64(&rng) % bound);
}

static pc_data *values(int32_t rank, const int64_t *dims)
{
    pc_error err;
    pc_data *d = pc_data_new_tensor(PC_DTYPE_FLOAT, rank, dims, &err);
    if (!d) pt_die("tensor", &err);
    for (uint64_t i = 0; i < d->n_elements; i++)
        ((float *)d->data)[i] = (float)((int)draw(17) - 8) / 4.0f + (float)draw(100) / 400.0f;
    return d;
}

/* Runs m on the session and the reference; true when both ran and agree. */
static bool agree(pc_model *m, uint32_t n, pc_data **in, const char *what, int t)
{
    pc_error err;
    pc_session_options so;
    pc_session_options_default(&so);
    so.optimize = false;
    pc_session *s = NULL;
    pc_data **got = NULL, **want = NULL;
    bool ok = false;
    pc_status st = pc_session_create(m, &so, &s, &err);
    CHECK_MSG(st == PC_OK, "case %d (%s): create: %s", t, what, err.message);
    if (st == PC_OK && (st = pc_session_run(s, n, in, &got, &err)) != PC_OK)
        CHECK_MSG(false, "case %d (%s): run: %s", t, what, err.message);
    pc_status rs = pc_ref_run(m, n, in, &want, &err);
    CHECK_MSG(rs == PC_OK, "case %d (%s): reference: %s", t, what, err.message);
    if (st == PC_OK && rs == PC_OK) {
        pc_compare_result cr;
        ok = pc_data_compare(want[0], got[0], 1e-4, 1e-4, &cr) == PC_COMPARE_EQUAL;
        CHECK_MSG(ok, "case %d (%s): runtime differs from the reference: %s (element %llu: %g, want %g)", t,
                  what, cr.detail, (unsigned long long)cr.worst_index, cr.worst_actual, cr.worst_expected);
    }
    if (got) pc_session_free_outputs(s, got);
    if (want) pc_ref_free_outputs(m, want);
    pc_session_free(s);
    return ok;
}

static pc_value *input(pc_model *m, const char *name, int32_t rank, const int64_t *dims)
{
    return pt_input(m, name, PC_DTYPE_FLOAT, rank, dims);
}

static int conv_cases(void)
{
    static const char *const acts[] = {"Relu", "Sigmoid", "Tanh", "LeakyRelu", "Clip", "HardSigmoid"};
    int passed = 0;
    for (int t = 0; t < 300; t++) {
        int nsp = 1 + (int)draw(2);
        bool nhwc = draw(3) == 0, fused = !nhwc && draw(4) == 0, bias = draw(2);
        int64_t group = draw(3) == 0 ? 1 + draw(4) : 1, cg = 1 + draw(4), mg = 1 + draw(3);
        if (draw(5) == 0) cg = mg = 1, group = 1 + draw(6); /* depthwise */
        /* one in 8 big enough that im2col runs in several strips of output rows (conv.c strip_rows) */
        bool big = draw(8) == 0;
        if (big && cg > 1) cg = 16 + draw(24);
        if (big) nhwc = draw(2), fused = !nhwc && fused;
        int64_t in[2], k[2], s[2], d[2], pb[2], pe[2];
        bool ok = true;
        for (int i = 0; i < nsp; i++) {
            in[i] = big ? 40 + draw(40) : 1 + draw(9);
            k[i] = draw(3) == 0 ? 1 : 1 + draw(3);
            s[i] = 1 + draw(2);
            d[i] = 1 + draw(2);
            pb[i] = draw((uint32_t)k[i]);
            pe[i] = draw((uint32_t)k[i]);
            ok = ok && in[i] + pb[i] + pe[i] >= (k[i] - 1) * d[i] + 1;
        }
        if (!ok) continue;
        int64_t n = 1 + draw(2), c = group * cg, mo = group * mg;
        int64_t xd[4], wd[4] = {mo, cg, k[0], k[1]}, bd[1] = {mo};
        xd[0] = n;
        for (int i = 0; i < nsp; i++)
            xd[nhwc ? 1 + i : 2 + i] = in[i];
        xd[nhwc ? 1 + nsp : 1] = c;
        pc_model *m = pt_model(13);
        pc_value *ins[3] = {input(m, "x", 2 + nsp, xd), input(m, "w", 2 + nsp, wd), NULL};
        if (bias) ins[2] = input(m, "b", 1, bd);
        pc_error err;
        const char *domain = nhwc ? PC_NHWC_DOMAIN : fused ? PC_MS_DOMAIN : "";
        if (nhwc || fused) CHECK_OK(pc_model_set_opset(m, domain, 1, &err), &err);
        pc_node *node = pc_graph_add_node(m->graph, fused ? "FusedConv" : "Conv", domain, bias ? 3 : 2, ins,
                                          1, NULL, &err);
        if (!node) pt_die("conv", &err);
        int64_t ks[2], st[2], dl[2], pads[4];
        for (int i = 0; i < nsp; i++) {
            ks[i] = k[i], st[i] = s[i], dl[i] = d[i], pads[i] = pb[i], pads[nsp + i] = pe[i];
        }
        CHECK_OK(pc_node_set_attr_ints(node, "kernel_shape", (size_t)nsp, ks, &err), &err);
        CHECK_OK(pc_node_set_attr_ints(node, "strides", (size_t)nsp, st, &err), &err);
        CHECK_OK(pc_node_set_attr_ints(node, "dilations", (size_t)nsp, dl, &err), &err);
        if (draw(4) == 0 && !nhwc) {
            CHECK_OK(pc_node_set_attr_string(node, "auto_pad", draw(2) ? "SAME_UPPER" : "SAME_LOWER", &err),
                     &err);
        } else {
            CHECK_OK(pc_node_set_attr_ints(node, "pads", (size_t)(2 * nsp), pads, &err), &err);
        }
        CHECK_OK(pc_node_set_attr_int(node, "group", group, &err), &err);
        const char *act = fused ? acts[draw(6)] : NULL;
        if (act) CHECK_OK(pc_node_set_attr_string(node, "activation", act, &err), &err);
        /* the parameters as fuse_conv_activation writes them: Clip (min, max), LeakyRelu (alpha), HardSigmoid
         * (alpha, beta) */
        float clip[2] = {-0.5f, 0.75f}, leaky[1] = {0.1f}, hsig[2] = {0.25f, 0.4f};
        if (act && strcmp(act, "Clip") == 0)
            CHECK_OK(pc_node_set_attr_floats(node, "activation_params", 2, clip, &err), &err);
        if (act && strcmp(act, "LeakyRelu") == 0)
            CHECK_OK(pc_node_set_attr_floats(node, "activation_params", 1, leaky, &err), &err);
        if (act && strcmp(act, "HardSigmoid") == 0)
            CHECK_OK(pc_node_set_attr_floats(node, "activation_params", 2, hsig, &err), &err);
        if (pc_graph_add_output(m->graph, node->outputs[0], &err) != PC_OK) pt_die("output", &err);
        pc_data *feed[3] = {values(2 + nsp, xd), values(2 + nsp, wd), bias ? values(1, bd) : NULL};
        char what[96];
        snprintf(what, sizeof what, "%s%s %d-D group %lld cg %lld mg %lld", nhwc ? "NHWC " : "",
                 fused ? "FusedConv" : "Conv", nsp, (long long)group, (long long)cg, (long long)mg);
        passed += agree(m, bias ? 3 : 2, feed, what, t);
        for (int i = 0; i < 3; i++)
            pc_data_unref(feed[i]);
        pc_model_free(m);
    }
    return passed;
}

/* ConvTranspose (NCHW and NHWC): groups, strides, dilations, pads or output_padding, bias or not. */
static int convt_cases(void)
{
    int passed = 0;
    for (int t = 0; t < 150; t++) {
        int nsp = 1 + (int)draw(2);
        bool nhwc = draw(3) == 0, bias = draw(2);
        int64_t group = draw(3) == 0 ? 1 + draw(3) : 1, cg = 1 + draw(3), mg = 1 + draw(3);
        int64_t in[2], k[2], s[2], d[2], pb[2], pe[2], op[2];
        bool ok = true, use_op = draw(3) == 0;
        for (int i = 0; i < nsp; i++) {
            in[i] = 1 + draw(6);
            k[i] = 1 + draw(3);
            s[i] = 1 + draw(3);
            d[i] = 1 + draw(2);
            pb[i] = use_op ? 0 : draw((uint32_t)k[i]);
            pe[i] = use_op ? 0 : draw((uint32_t)k[i]);
            op[i] = use_op ? draw((uint32_t)(s[i] > d[i] ? s[i] : d[i])) : 0;
            ok = ok && s[i] * (in[i] - 1) + op[i] + (k[i] - 1) * d[i] + 1 - pb[i] - pe[i] >= 1;
        }
        if (!ok) continue;
        int64_t n = 1 + draw(2), c = group * cg;
        int64_t xd[4], wd[4] = {c, mg, k[0], k[1]}, bd[1] = {group * mg};
        xd[0] = n;
        for (int i = 0; i < nsp; i++)
            xd[nhwc ? 1 + i : 2 + i] = in[i];
        xd[nhwc ? 1 + nsp : 1] = c;
        pc_model *m = pt_model(13);
        pc_value *ins[3] = {input(m, "x", 2 + nsp, xd), input(m, "w", 2 + nsp, wd), NULL};
        if (bias) ins[2] = input(m, "b", 1, bd);
        pc_error err;
        const char *domain = nhwc ? PC_NHWC_DOMAIN : "";
        if (nhwc) CHECK_OK(pc_model_set_opset(m, domain, 1, &err), &err);
        pc_node *node =
            pc_graph_add_node(m->graph, "ConvTranspose", domain, bias ? 3 : 2, ins, 1, NULL, &err);
        if (!node) pt_die("convt", &err);
        int64_t ks[2], st[2], dl[2], pads[4], ops[2];
        for (int i = 0; i < nsp; i++) {
            ks[i] = k[i], st[i] = s[i], dl[i] = d[i], pads[i] = pb[i], pads[nsp + i] = pe[i], ops[i] = op[i];
        }
        CHECK_OK(pc_node_set_attr_ints(node, "kernel_shape", (size_t)nsp, ks, &err), &err);
        CHECK_OK(pc_node_set_attr_ints(node, "strides", (size_t)nsp, st, &err), &err);
        CHECK_OK(pc_node_set_attr_ints(node, "dilations", (size_t)nsp, dl, &err), &err);
        CHECK_OK(pc_node_set_attr_ints(node, "pads", (size_t)(2 * nsp), pads, &err), &err);
        if (use_op) CHECK_OK(pc_node_set_attr_ints(node, "output_padding", (size_t)nsp, ops, &err), &err);
        CHECK_OK(pc_node_set_attr_int(node, "group", group, &err), &err);
        if (pc_graph_add_output(m->graph, node->outputs[0], &err) != PC_OK) pt_die("output", &err);
        pc_data *feed[3] = {values(2 + nsp, xd), values(2 + nsp, wd), bias ? values(1, bd) : NULL};
        char what[96];
        snprintf(what, sizeof what, "%sConvTranspose %d-D group %lld", nhwc ? "NHWC " : "", nsp,
                 (long long)group);
        passed += agree(m, bias ? 3 : 2, feed, what, t);
        for (int i = 0; i < 3; i++)
            pc_data_unref(feed[i]);
        pc_model_free(m);
    }
    return passed;
}

static int matmul_cases(void)
{
    int passed = 0;
    for (int t = 0; t < 200; t++) {
        int64_t M = 1 + draw(6), K = 1 + draw(7), N = 1 + draw(6);
        int64_t ad[4], bd[4];
        int32_t ra = 0, rb = 0, nb = (int32_t)draw(3);
        bool a1 = draw(8) == 0, b1 = !a1 && draw(8) == 0;
        int64_t batch[2] = {1 + draw(3), 1 + draw(3)};
        for (int32_t i = 0; i < nb && !a1; i++)
            ad[ra++] = draw(3) == 0 ? 1 : batch[i];
        if (!a1) ad[ra++] = M;
        ad[ra++] = K;
        int32_t nbb = b1 ? 0 : (int32_t)draw((uint32_t)nb + 1);
        for (int32_t i = nb - nbb; i < nb; i++)
            bd[rb++] = draw(3) == 0 ? 1 : batch[i];
        bd[rb++] = K;
        if (!b1) bd[rb++] = N;
        pc_model *m = pt_model(13);
        pc_value *ins[2] = {input(m, "a", ra, ad), input(m, "b", rb, bd)};
        pc_error err;
        pc_node *node = pc_graph_add_node(m->graph, "MatMul", "", 2, ins, 1, NULL, &err);
        if (!node || pc_graph_add_output(m->graph, node->outputs[0], &err) != PC_OK) pt_die("matmul", &err);
        pc_data *feed[2] = {values(ra, ad), values(rb, bd)};
        passed += agree(m, 2, feed, "MatMul", t);
        pc_data_unref(feed[0]);
        pc_data_unref(feed[1]);
        pc_model_free(m);
    }
    for (int t = 0; t < 100; t++) {
        int64_t M = 1 + draw(6), K = 1 + draw(7), N = 1 + draw(6);
        bool ta = draw(2), tb = draw(2), has_c = draw(4) != 0;
        int64_t ad[2] = {ta ? K : M, ta ? M : K}, bd[2] = {tb ? N : K, tb ? K : N}, cd[2];
        int32_t rc = (int32_t)draw(3);
        if (rc == 2) cd[0] = draw(2) ? M : 1, cd[1] = draw(2) ? N : 1;
        if (rc == 1) cd[0] = draw(2) ? N : 1;
        pc_model *m = pt_model(13);
        pc_value *ins[3] = {input(m, "a", 2, ad), input(m, "b", 2, bd), has_c ? input(m, "c", rc, cd) : NULL};
        pc_error err;
        pc_node *node = pc_graph_add_node(m->graph, "Gemm", "", has_c ? 3 : 2, ins, 1, NULL, &err);
        if (!node) pt_die("gemm", &err);
        CHECK_OK(pc_node_set_attr_int(node, "transA", ta, &err), &err);
        CHECK_OK(pc_node_set_attr_int(node, "transB", tb, &err), &err);
        CHECK_OK(pc_node_set_attr_float(node, "alpha", draw(2) ? 1.0f : 0.5f, &err), &err);
        CHECK_OK(pc_node_set_attr_float(node, "beta", draw(2) ? 1.0f : -2.0f, &err), &err);
        if (pc_graph_add_output(m->graph, node->outputs[0], &err) != PC_OK) pt_die("gemm", &err);
        pc_data *feed[3] = {values(2, ad), values(2, bd), has_c ? values(rc, cd) : NULL};
        passed += agree(m, has_c ? 3 : 2, feed, "Gemm", t);
        for (int i = 0; i < 3; i++)
            pc_data_unref(feed[i]);
        pc_model_free(m);
    }
    return passed;
}

static void contract(void)
{
    pc_error err;
    pc_session_options so;
    pc_session_options_default(&so);
    so.optimize = false;
    /* symbolic batch: planned at the first run, again for another batch */
    pc_model *m = pt_model(13);
    pc_dim dims[2] = {{PC_DIM_SYMBOLIC, 0, "batch", NULL}, {PC_DIM_KNOWN, 3, NULL, NULL}};
    pc_type ty = {.kind = PC_TYPE_TENSOR, .elem = PC_DTYPE_FLOAT, .shape = {2, dims}};
    pc_value *x = pc_graph_add_value(m->graph, "x", NULL, &err);
    if (!x || pc_value_set_type(x, &ty, &err) != PC_OK || pc_graph_add_input(m->graph, x, &err) != PC_OK)
        pt_die("x", &err);
    pt_const_f(m, "w", 2, (int64_t[]){3, 2}, (float[]){1, 2, 3, 4, 5, 6});
    pc_node *mm = pt_node(m, "MatMul", "", "x,w", "y", NULL);
    (void)mm;
    if (pc_graph_add_output(m->graph, mm->outputs[0], &err) != PC_OK) pt_die("y", &err);
    pc_session *s = NULL;
    CHECK_OK(pc_session_create(m, &so, &s, &err), &err);
    pc_session_stats st;
    pc_session_get_stats(s, &st);
    CHECK_MSG(!st.planned && st.n_nodes == 1, "symbolic: planned %d, %u nodes", st.planned, st.n_nodes);
    for (int64_t batch = 1; batch <= 3; batch += 2) {
        pc_data *in = values(2, (int64_t[]){batch, 3}), **out = NULL, **want = NULL;
        CHECK_OK(pc_session_run(s, 1, &in, &out, &err), &err);
        CHECK_OK(pc_ref_run(m, 1, &in, &want, &err), &err);
        pc_compare_result cr;
        CHECK(out && want && pc_data_compare(want[0], out[0], 1e-5, 1e-5, &cr) == PC_COMPARE_EQUAL);
        CHECK(out && out[0]->dims[0] == batch);
        /* the same run twice: the same bits */
        pc_data **again = NULL;
        CHECK_OK(pc_session_run(s, 1, &in, &again, &err), &err);
        CHECK(again && pc_data_compare_exact(out[0], again[0], &cr) == PC_COMPARE_EQUAL);
        pc_session_free_outputs(s, again);
        pc_session_free_outputs(s, out);
        pc_ref_free_outputs(m, want);
        pc_data_unref(in);
    }
    pc_session_get_stats(s, &st);
    CHECK(st.planned);
    /* bad inputs: count, type, rank, a static dim */
    pc_data *good = values(2, (int64_t[]){2, 3}), **out = NULL;
    CHECK(pc_session_run(s, 0, NULL, &out, &err) == PC_ERR_ARITY && strstr(err.message, "0 inputs given"));
    pc_data *i64 = pc_data_new_tensor(PC_DTYPE_INT64, 2, (int64_t[]){2, 3}, &err);
    CHECK(pc_session_run(s, 1, &i64, &out, &err) == PC_ERR_TYPE && strstr(err.message, "('x') is int64"));
    pc_data *r1 = values(1, (int64_t[]){3});
    CHECK(pc_session_run(s, 1, &r1, &out, &err) == PC_ERR_SHAPE && strstr(err.message, "has rank 1"));
    pc_data *d4 = values(2, (int64_t[]){2, 4});
    CHECK(pc_session_run(s, 1, &d4, &out, &err) == PC_ERR_SHAPE && strstr(err.message, "dim 1 = 4"));
    CHECK(out == NULL);
    pc_data_unref(good);
    pc_data_unref(i64);
    pc_data_unref(r1);
    pc_data_unref(d4);
    pc_session_free(s);
    pc_model_free(m);
    /* a rank-0 initializer (its dims NULL: UBSan caught a memcpy from it) and a Constant node's value_floats
     */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    pt_const_f(m, "two", 0, NULL, (float[]){2.0f});
    pc_node *cn = pt_node(m, "Constant", "", "", "c", NULL);
    CHECK_OK(pc_node_set_attr_floats(cn, "value_floats", 3, (float[]){1, 2, 3}, &err), &err);
    pt_node(m, "Mul", "", "x,two", "y2", NULL);
    pc_node *add = pt_node(m, "Add", "", "y2,c", "z", NULL);
    if (pc_graph_add_output(m->graph, add->outputs[0], &err) != PC_OK) pt_die("z", &err);
    {
        pc_data *in = values(2, (int64_t[]){2, 3}), **got = NULL, **want = NULL;
        s = NULL;
        CHECK_OK(pc_session_create(m, &so, &s, &err), &err);
        if (s) CHECK_OK(pc_session_run(s, 1, &in, &got, &err), &err);
        CHECK_OK(pc_ref_run(m, 1, &in, &want, &err), &err);
        pc_compare_result cr;
        CHECK(got && want && pc_data_compare_exact(want[0], got[0], &cr) == PC_COMPARE_EQUAL);
        if (got) pc_session_free_outputs(s, got);
        if (want) pc_ref_free_outputs(m, want);
        pc_session_free(s);
        pc_data_unref(in);
    }
    pc_model_free(m);
    /* a node without a kernel: refused at creation, named */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 1, (int64_t[]){4});
    pc_node *uniq = pt_node(m, "Unique", "", "x", "v", NULL); /* data-dependent output size: no kernel */
    uniq->name = "pick";
    if (pc_graph_add_output(m->graph, uniq->outputs[0], &err) != PC_OK) pt_die("v", &err);
    s = NULL;
    CHECK(pc_session_create(m, &so, &s, &err) == PC_ERR_UNSUPPORTED &&
          strstr(err.message, "node 'pick' (Unique)"));
    CHECK(s == NULL);
    pc_model_free(m);
}

/* m at 1, 2 and 3 threads: each run agrees with the reference within (rtol, atol) and with a second run of
 * the same session bit for bit; with same_across, every thread count gives the 1-thread run's bits. */
static void across_threads(pc_model *m, uint32_t n, pc_data **feed, const char *what, double rtol,
                           double atol, bool same_across)
{
    pc_error err;
    pc_data *first = NULL;
    for (int threads = 1; threads <= 3; threads++) {
        pc_session_options so;
        pc_session_options_default(&so);
        so.optimize = false;
        so.threads = threads;
        pc_session *s = NULL;
        pc_data **got = NULL, **again = NULL, **want = NULL;
        CHECK_OK(pc_session_create(m, &so, &s, &err), &err);
        if (s) CHECK_OK(pc_session_run(s, n, feed, &got, &err), &err);
        if (s) CHECK_OK(pc_session_run(s, n, feed, &again, &err), &err);
        CHECK_OK(pc_ref_run(m, n, feed, &want, &err), &err);
        pc_compare_result cr;
        if (got && want)
            CHECK_MSG(pc_data_compare(want[0], got[0], rtol, atol, &cr) == PC_COMPARE_EQUAL,
                      "%s at %d threads: differs from the reference: %s", what, threads, cr.detail);
        if (got && again)
            CHECK_MSG(pc_data_compare_exact(got[0], again[0], &cr) == PC_COMPARE_EQUAL,
                      "%s at %d threads: a second run differs: %s", what, threads, cr.detail);
        if (got && !first)
            first = pc_data_ref(got[0]);
        else if (got && same_across)
            CHECK_MSG(pc_data_compare_exact(first, got[0], &cr) == PC_COMPARE_EQUAL,
                      "%s: %d threads differ from 1: %s", what, threads, cr.detail);
        if (want) pc_ref_free_outputs(m, want);
        if (again) pc_session_free_outputs(s, again);
        if (got) pc_session_free_outputs(s, got);
        pc_session_free(s);
    }
    pc_data_unref(first);
}

/* Threads: the same convolutions (depthwise NCHW at stride 1 and 2, depthwise NHWC, im2col in several strips)
 * at 1, 2 and 3 threads: each thread count gives the same bits run after run and agrees with the reference;
 * the depthwise convs (our kernels, split by channels or rows) give the same bits at every thread count. The
 * gemm ones need not: OpenBLAS blocks an sgemm differently for another thread count. */
static void threads_same_bits(void)
{
    static const struct {
        bool nhwc;
        int64_t group, cg, k, s;
    } convs[] = {{false, 24, 1, 5, 1},
                 {false, 24, 1, 3, 2},
                 {true, 24, 1, 3, 1},
                 {false, 1, 40, 3, 1},
                 {false, 2, 24, 3, 2}};
    for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) {
        pc_error err;
        int64_t c = convs[i].group * convs[i].cg, mo = convs[i].group * (convs[i].cg == 1 ? 1 : 8);
        int64_t xd[4] = {1, c, 50, 60}, wd[4] = {mo, convs[i].cg, convs[i].k, convs[i].k};
        if (convs[i].nhwc) xd[1] = 50, xd[2] = 60, xd[3] = c;
        pc_model *m = pt_model(13);
        pc_value *ins[2] = {input(m, "x", 4, xd), input(m, "w", 4, wd)};
        const char *domain = convs[i].nhwc ? PC_NHWC_DOMAIN : "";
        if (convs[i].nhwc) CHECK_OK(pc_model_set_opset(m, domain, 1, &err), &err);
        pc_node *node = pc_graph_add_node(m->graph, "Conv", domain, 2, ins, 1, NULL, &err);
        if (!node) pt_die("conv", &err);
        int64_t st[2] = {convs[i].s, convs[i].s}, pads[4] = {1, 2, 1, 0};
        CHECK_OK(pc_node_set_attr_ints(node, "strides", 2, st, &err), &err);
        CHECK_OK(pc_node_set_attr_ints(node, "pads", 4, pads, &err), &err);
        CHECK_OK(pc_node_set_attr_int(node, "group", convs[i].group, &err), &err);
        if (pc_graph_add_output(m->graph, node->outputs[0], &err) != PC_OK) pt_die("output", &err);
        pc_data *feed[2] = {values(4, xd), values(4, wd)};
        char what[64];
        snprintf(what, sizeof what, "%sconv %zu", convs[i].cg == 1 ? "depthwise " : "", i);
        across_threads(m, 2, feed, what, 1e-4, 1e-4, convs[i].cg == 1);
        pc_data_unref(feed[0]);
        pc_data_unref(feed[1]);
        pc_model_free(m);
    }
    /* the split sgemm (pc_rt_sgemm: by columns when N >= M, else by rows): a batched MatMul, Gemm with both
     * transposes and one with M > N, and a ConvTranspose, at 1, 2 and 3 threads against the reference and
     * run twice */
    for (int op = 0; op < 4; op++) {
        pc_error err;
        pc_model *m = pt_model(13);
        pc_node *node;
        pc_data *feed[2];
        int64_t ad[3] = {2, 96, 200}, bd[2] = {200, 130}, ta[2] = {300, 120}, tb[2] = {90, 300},
                xd[4] = {1, 24, 30, 30}, wd[4] = {24, 8, 3, 3};
        if (op == 0) {
            input(m, "a", 3, ad);
            input(m, "b", 2, bd);
            node = pt_node(m, "MatMul", "", "a,b", "y", NULL);
            feed[0] = values(3, ad), feed[1] = values(2, bd);
        } else if (op < 3) {
            int64_t *a_dims = op == 1 ? ta : (int64_t[]){400, 300},
                    *b_dims = op == 1 ? tb : (int64_t[]){70, 300};
            input(m, "a", 2, a_dims);
            input(m, "b", 2, b_dims);
            node = pt_node(m, "Gemm", "", "a,b", "y", NULL);
            if (op == 1) CHECK_OK(pc_node_set_attr_int(node, "transA", 1, &err), &err);
            CHECK_OK(pc_node_set_attr_int(node, "transB", 1, &err), &err);
            feed[0] = values(2, a_dims), feed[1] = values(2, b_dims);
        } else {
            input(m, "x", 4, xd);
            input(m, "w", 4, wd);
            node = pt_node(m, "ConvTranspose", "", "x,w", "y", NULL);
            CHECK_OK(pc_node_set_attr_ints(node, "strides", 2, (int64_t[]){2, 2}, &err), &err);
            feed[0] = values(4, xd), feed[1] = values(4, wd);
        }
        if (pc_graph_add_output(m->graph, node->outputs[0], &err) != PC_OK) pt_die("y", &err);
        across_threads(m, 2, feed, node->op_type, 1e-4, 1e-4, false);
        pc_data_unref(feed[0]);
        pc_data_unref(feed[1]);
        pc_model_free(m);
    }
    /* the broadcasting walk split over threads (rows, or pieces of the one merged row): Add with a [300, 1]
     * operand (odometer rows), Add of equal shapes (one row), Sum of three with a scalar, at 1-3 threads: the
     * reference's values and the same bits at every thread count */
    for (int op = 0; op < 3; op++) {
        pc_error err;
        int64_t xd[3] = {4, 300, 200}, bd[2] = {300, 1};
        pc_model *m = pt_model(13);
        input(m, "x", 3, xd);
        input(m, "b", op == 0 ? 2 : 3, op == 0 ? bd : xd);
        pc_node *node;
        if (op < 2) {
            node = pt_node(m, "Add", "", "x,b", "y", NULL);
        } else {
            pt_const_f(m, "c", 0, NULL, (float[]){0.5f});
            node = pt_node(m, "Sum", "", "x,b,c", "y", NULL);
        }
        if (pc_graph_add_output(m->graph, node->outputs[0], &err) != PC_OK) pt_die("y", &err);
        pc_data *feed[2] = {values(3, xd), op == 0 ? values(2, bd) : values(3, xd)};
        char what[32];
        snprintf(what, sizeof what, "%s %d", node->op_type, op);
        across_threads(m, 2, feed, what, 1e-6, 1e-6, true);
        pc_data_unref(feed[0]);
        pc_data_unref(feed[1]);
        pc_model_free(m);
    }
    /* sliceable kernels (Sigmoid, Clip with its bound inputs) over 200,000 elements: cut into one slice per
     * thread by the session, the same bits as one thread, and the reference's values */
    for (int op = 0; op < 2; op++) {
        pc_error err;
        int64_t xd[2] = {4, 50000};
        pc_model *m = pt_model(13);
        input(m, "x", 2, xd);
        pc_node *node;
        if (op == 0) {
            node = pt_node(m, "Sigmoid", "", "x", "y", NULL);
        } else {
            pt_const_f(m, "lo", 0, NULL, (float[]){-0.5f});
            pt_const_f(m, "hi", 0, NULL, (float[]){0.25f});
            node = pt_node(m, "Clip", "", "x,lo,hi", "y", NULL);
        }
        if (pc_graph_add_output(m->graph, node->outputs[0], &err) != PC_OK) pt_die("y", &err);
        pc_data *x = values(2, xd);
        across_threads(m, 1, &x, node->op_type, 1e-5, 1e-6, true);
        pc_data_unref(x);
        pc_model_free(m);
    }
    /* row kernels split by row: Softmax and LayerNormalization (with scale and bias) over 300 rows of 700 */
    for (int op = 0; op < 2; op++) {
        pc_error err;
        int64_t xd[2] = {300, 700};
        pc_model *m = pt_model(17);
        input(m, "x", 2, xd);
        pc_node *node;
        if (op == 0) {
            node = pt_node(m, "Softmax", "", "x", "y", NULL);
        } else {
            pc_data *sc = values(1, (int64_t[]){700}), *bi = values(1, (int64_t[]){700});
            pt_const_f(m, "scale", 1, (int64_t[]){700}, sc->data);
            pt_const_f(m, "bias", 1, (int64_t[]){700}, bi->data);
            pc_data_unref(sc);
            pc_data_unref(bi);
            node = pt_node(m, "LayerNormalization", "", "x,scale,bias", "y", NULL);
        }
        if (pc_graph_add_output(m->graph, node->outputs[0], &err) != PC_OK) pt_die("y", &err);
        pc_data *x = values(2, xd);
        across_threads(m, 1, &x, node->op_type, 1e-5, 1e-5, true);
        pc_data_unref(x);
        pc_model_free(m);
    }
    /* pools, split by plane (channels first) or output row (channels last), each thread with its own row
     * scratch: MaxPool and AveragePool with padding and stride 2, both layouts, the same bits at every count
     */
    for (int op = 0; op < 4; op++) {
        pc_error err;
        bool nhwc = op >= 2;
        int64_t xd[4] = {2, 24, 37, 41};
        if (nhwc) xd[1] = 37, xd[2] = 41, xd[3] = 24;
        pc_model *m = pt_model(13);
        pc_value *in = input(m, "x", 4, xd);
        const char *domain = nhwc ? PC_NHWC_DOMAIN : "";
        if (nhwc) CHECK_OK(pc_model_set_opset(m, domain, 1, &err), &err);
        pc_node *node =
            pc_graph_add_node(m->graph, op % 2 ? "AveragePool" : "MaxPool", domain, 1, &in, 1, NULL, &err);
        if (!node) pt_die("pool", &err);
        int64_t ks[2] = {3, 3}, st[2] = {2, 2}, pads[4] = {1, 1, 1, 0};
        CHECK_OK(pc_node_set_attr_ints(node, "kernel_shape", 2, ks, &err), &err);
        CHECK_OK(pc_node_set_attr_ints(node, "strides", 2, st, &err), &err);
        CHECK_OK(pc_node_set_attr_ints(node, "pads", 4, pads, &err), &err);
        if (pc_graph_add_output(m->graph, node->outputs[0], &err) != PC_OK) pt_die("y", &err);
        pc_data *x = values(4, xd);
        char what[64];
        snprintf(what, sizeof what, "%s%s", nhwc ? "NHWC " : "", node->op_type);
        across_threads(m, 1, &x, what, 1e-5, 1e-6, true);
        pc_data_unref(x);
        pc_model_free(m);
    }
}

/* Profiling: one entry per node in run order, the runs counted, time summed, and the FLOP count of a Conv
 * (2 x outputs x products per output, whatever the weight layout) and a MatMul (2 x M x N x K). */
static void profile(void)
{
    pc_error err;
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 8, 8});
    pc_data *w = values(4, (int64_t[]){4, 3, 3, 3});
    pt_const_f(m, "w", 4, (int64_t[]){4, 3, 3, 3}, w->data);
    pc_data_unref(w);
    pc_node *conv = pt_node(m, "Conv", "", "x,w", "c", NULL);
    CHECK_OK(pc_node_set_attr_ints(conv, "pads", 4, (int64_t[]){1, 1, 1, 1}, &err), &err); /* [1,4,8,8] */
    pt_const_i64(m, "flat", 2, (int64_t[]){4, 64});
    pt_node(m, "Reshape", "", "c,flat", "r", NULL); /* [4, 64] */
    pt_const_f(m, "b", 2, (int64_t[]){64, 5}, (float[320]){0});
    pc_node *mm = pt_node(m, "MatMul", "", "r,b", "y", NULL); /* [4, 5]: K = 64 */
    if (pc_graph_add_output(m->graph, mm->outputs[0], &err) != PC_OK) pt_die("y", &err);
    pc_session_options so;
    pc_session_options_default(&so);
    so.optimize = false;
    pc_session *s = NULL;
    pc_session_profile_entry *e = NULL;
    uint32_t n = 0;
    CHECK_OK(pc_session_create(m, &so, &s, &err), &err);
    CHECK(s && pc_session_get_profile(s, &e, &n, &err) == PC_ERR_USAGE && strstr(err.message, "without"));
    pc_session_free(s);
    so.profile = true;
    s = NULL;
    CHECK_OK(pc_session_create(m, &so, &s, &err), &err);
    pc_data *in = values(4, (int64_t[]){1, 3, 8, 8}), **out = NULL;
    for (int r = 0; s && r < 3; r++) {
        CHECK_OK(pc_session_run(s, 1, &in, &out, &err), &err);
        if (out) pc_session_free_outputs(s, out);
        out = NULL;
    }
    CHECK_OK(pc_session_get_profile(s, &e, &n, &err), &err);
    CHECK_MSG(n == 3, "%u profile entries", n);
    if (n == 3) {
        CHECK(strcmp(e[0].node->op_type, "Conv") == 0 && e[0].runs == 3 && e[0].seconds > 0);
        CHECK_MSG(e[0].flops == 2.0 * 4 * 64 * 27, "Conv: %g FLOP", e[0].flops);
        CHECK(strcmp(e[1].node->op_type, "Reshape") == 0 && e[1].flops == 0);
        CHECK_MSG(e[2].flops == 2.0 * 4 * 5 * 64, "MatMul: %g FLOP", e[2].flops);
    }
    free(e);
    CHECK(pc_runtime_sgemm_gflops(1, 64) > 0 && pc_runtime_sgemm_gflops(0, 64) == 0);
    pc_data_unref(in);
    pc_session_free(s);
    pc_model_free(m);
}

/* In place: Neg, Relu and Add over 1024 floats share one buffer when each input dies at its reader (arena
 * 4096 bytes, not 8192); when the input lives on (t1 read again by the Add) Relu gets its own buffer. Both
 * against the reference, at 1 and 2 threads (the sliced Relu and the split Add write their own slices). */
static void inplace(void)
{
    static const struct {
        const char *add_inputs;
        size_t arena;
    } cases[] = {{"t2,x", 4096}, {"t2,t1", 8192}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int threads = 1; threads <= 2; threads++) {
            pc_error err;
            pc_model *m = pt_model(13);
            pt_input(m, "x", PC_DTYPE_FLOAT, 1, (int64_t[]){1024});
            pt_node(m, "Neg", "", "x", "t1", NULL);
            pt_node(m, "Relu", "", "t1", "t2", NULL);
            pt_node(m, "Add", "", cases[c].add_inputs, "t3", NULL);
            pt_node(m, "Sigmoid", "", "t3", "y", NULL);
            pt_output(m, "y");
            pc_session_options so;
            pc_session_options_default(&so);
            so.optimize = false;
            so.threads = threads;
            pc_session *s = NULL;
            CHECK_OK(pc_session_create(m, &so, &s, &err), &err);
            pc_session_stats st;
            pc_session_get_stats(s, &st);
            CHECK_MSG(st.arena_bytes == cases[c].arena, "in place, Add(%s): arena %zu bytes, want %zu",
                      cases[c].add_inputs, st.arena_bytes, cases[c].arena);
            pc_data *in = values(1, (int64_t[]){1024}), **out = NULL, **want = NULL;
            CHECK_OK(pc_session_run(s, 1, &in, &out, &err), &err);
            CHECK_OK(pc_ref_run(m, 1, &in, &want, &err), &err);
            pc_compare_result cr;
            CHECK_MSG(out && want && pc_data_compare(want[0], out[0], 1e-6, 1e-6, &cr) == PC_COMPARE_EQUAL,
                      "in place, Add(%s), %d threads: differs from the reference", cases[c].add_inputs,
                      threads);
            pc_session_free_outputs(s, out);
            pc_ref_free_outputs(m, want);
            pc_data_unref(in);
            pc_session_free(s);
            pc_model_free(m);
        }
}

int main(void)
{
    int conv = conv_cases() + convt_cases(), mm = matmul_cases();
    contract();
    profile();
    threads_same_bits();
    inplace();
    printf("test_runtime_session: %d convolutions, %d MatMul/Gemm agree with the reference\n", conv, mm);
    return pc_test_finish("test_runtime_session");
}
