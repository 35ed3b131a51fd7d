/* Transpose optimizer, per handler: x -> Transpose(p) -> op -> Transpose(p^-1) ends with zero Transposes, the
 * exact remaining ops and rewritten attributes/constants are asserted, and the outputs equal the original
 * bit-exactly on the reference executor (pure data movement). Cases that must block are asserted unchanged.
 */
#include "tests/pass_test_util.h"
#include "tests/test_util.h"
#include "core/transpose/transpose_internal.h"

static pc_pass_options opts_plain(void)
{
    return pt_pass_options("transpose_optimize");
}

/* Runs the optimizer (shape inference first, as the pipeline does) and verifies the graph. */
static bool run_opts(pc_model *m, const pc_pass_options *o)
{
    pc_error err;
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    return pt_run_pass(pc_transpose_optimize, m, o);
}

static bool run(pc_model *m)
{
    pc_pass_options o = opts_plain();
    return run_opts(m, &o);
}

/* "Op,Op,..." in graph order */
static const char *ops(const pc_model *m)
{
    static char buf[1024];
    size_t k = 0;
    buf[0] = '\0';
    for (const pc_node *n = m->graph->first; n; n = n->next)
        k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s", k ? "," : "", n->op_type);
    return buf;
}

static pc_node *nth_op(const pc_model *m, const char *op, int nth)
{
    for (pc_node *n = m->graph->first; n; n = n->next)
        if (strcmp(n->op_type, op) == 0 && nth-- == 0) return n;
    return NULL;
}

static bool ints_eq(const pc_node *n, const char *name, size_t count, const int64_t *want)
{
    const pc_attr *a = n ? pc_node_attr(n, name) : NULL;
    if (!a || a->type != PC_ATTR_INTS || a->n != count) return false;
    for (size_t i = 0; i < count; i++)
        if (a->ints[i] != want[i]) return false;
    return true;
}

/* A constant input's values as int64 (int32/int64) */
static bool input_ints_eq(const pc_node *n, uint32_t i, size_t count, const int64_t *want)
{
    int64_t got[PC_MAX_RANK];
    size_t k;
    if (!n || i >= n->n_inputs || !n->inputs[i] || !n->inputs[i]->initializer) return false;
    if (!pc_tensor_read_ints(n->inputs[i]->initializer, got, PC_MAX_RANK, &k) || k != count) return false;
    for (size_t j = 0; j < count; j++)
        if (got[j] != want[j]) return false;
    return true;
}

static void check_exact(const pc_model *before, const pc_model *after, const char *what)
{
    char why[PT_WHY_SIZE];
    int r = pt_equiv(before, after, 7, 0, 0, why, sizeof why);
    CHECK_MSG(r == 1, "%s: %s", what, why);
}

static pc_node *transpose(pc_model *m, const char *in, const char *out, size_t rank, const int64_t *perm)
{
    pc_error err;
    pc_node *t = pt_node(m, "Transpose", "", in, out, NULL);
    if (pc_node_set_attr_ints(t, "perm", rank, perm, &err) != PC_OK) pt_die("perm", &err);
    return t;
}

static const int64_t P4_CL[] = {0, 2, 3, 1}, P4_CF[] = {0, 3, 1, 2};

/* x[2,3,4,5] -> T(0,2,3,1) -> op -> T(0,3,1,2) -> y: the usual NCHW<->NHWC sandwich */
static pc_model *sandwich(int64_t opset, pc_dtype dt, const char *op, pc_node **mid)
{
    pc_model *m = pt_model(opset);
    pt_input(m, "x", dt, 4, (int64_t[]){2, 3, 4, 5});
    transpose(m, "x", "t", 4, P4_CL);
    *mid = pt_node(m, op, "", "t", "u", NULL);
    return m;
}

static void sandwich_end(pc_model *m)
{
    transpose(m, "u", "y", 4, P4_CF);
    pt_output(m, "y");
}

static void test_simple_ops(void)
{
    static const char *const unary[] = {"Relu", "Sigmoid", "Neg",      "Abs", "Exp",
                                        "Tanh", "Floor",   "Softsign", "Erf"};
    for (size_t k = 0; k < sizeof unary / sizeof unary[0]; k++) {
        pc_node *mid;
        pc_model *m = sandwich(13, PC_DTYPE_FLOAT, unary[k], &mid);
        sandwich_end(m);
        pc_model *before = pt_clone(m);
        CHECK(run(m));
        CHECK_MSG(strcmp(ops(m), unary[k]) == 0, "%s: %s", unary[k], ops(m));
        CHECK(pc_graph_transpose_cost(m->graph) == 0);
        CHECK(strcmp(m->graph->outputs[0]->name, "y") == 0);
        check_exact(before, m, unary[k]);
        pc_model_free(before);
        pc_model_free(m);
    }
    /* Clip carries input 0 only (min/max scalars stay); Cast keeps its `to` */
    pc_node *mid;
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
    pt_const_f(m, "lo", 0, NULL, (float[]){-0.5f});
    pt_const_f(m, "hi", 0, NULL, (float[]){0.75f});
    transpose(m, "x", "t", 4, P4_CL);
    pt_node(m, "Clip", "", "t,lo,hi", "c", NULL);
    mid = pt_node(m, "Cast", "", "c", "u", NULL);
    pc_error err;
    CHECK_OK(pc_node_set_attr_int(mid, "to", PC_DTYPE_DOUBLE, &err), &err);
    sandwich_end(m);
    pc_model *before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Clip,Cast") == 0, "%s", ops(m));
    check_exact(before, m, "Clip+Cast");
    pc_model_free(before);
    pc_model_free(m);
}

/* Add with a lower-rank constant: reshaped to rank 4 (leading 1s) and permuted, no Unsqueeze node. Rank 3
 * and 5. */
static void test_broadcast_constant(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
    float b[5] = {1.5f, -2.0f, 0.25f, 4.0f, -0.5f};
    pt_const_f(m, "b", 3, (int64_t[]){5, 1, 1}, b);
    transpose(m, "x", "t", 4, P4_CF);        /* [2,5,3,4] */
    pt_node(m, "Add", "", "t,b", "u", NULL); /* b [5,1,1] is per channel of the NCHW view */
    transpose(m, "u", "y", 4, P4_CL);
    pt_output(m, "y");
    pc_model *before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Add") == 0, "%s", ops(m));
    pc_node *add = nth_op(m, "Add", 0);
    const pc_tensor *nb = add ? add->inputs[1]->initializer : NULL;
    /* [5,1,1] -> [1,5,1,1] -> permuted by (0,2,3,1) -> [1,1,1,5], values in order */
    CHECK(nb && nb->rank == 4 && nb->dims[0] == 1 && nb->dims[1] == 1 && nb->dims[2] == 1 &&
          nb->dims[3] == 5);
    CHECK(nb && memcmp(nb->data, b, sizeof b) == 0);
    check_exact(before, m, "Add const rank 4");
    pc_model_free(before);
    pc_model_free(m);

    /* rank 5, perm (0,4,1,2,3), Mul with a full-rank constant: data really permuted */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 5, (int64_t[]){1, 2, 3, 2, 4});
    float w[48];
    for (int i = 0; i < 48; i++)
        w[i] = (float)i - 20.0f;
    pt_const_f(m, "w", 5, (int64_t[]){1, 4, 2, 3, 2}, w);
    const int64_t p5[] = {0, 4, 1, 2, 3}, p5i[] = {0, 2, 3, 4, 1};
    transpose(m, "x", "t", 5, p5);
    pt_node(m, "Mul", "", "t,w", "u", NULL);
    transpose(m, "u", "y", 5, p5i);
    pt_output(m, "y");
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Mul") == 0, "%s", ops(m));
    check_exact(before, m, "Mul const rank 5");
    pc_model_free(before);
    pc_model_free(m);

    /* rank 3 with a scalar constant: the scalar is not a carrying input */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 4});
    pt_const_f(m, "s", 0, NULL, (float[]){3.0f});
    const int64_t p3[] = {2, 0, 1}, p3i[] = {1, 2, 0};
    transpose(m, "x", "t", 3, p3);
    pt_node(m, "Sub", "", "s,t", "u", NULL);
    transpose(m, "u", "y", 3, p3i);
    pt_output(m, "y");
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Sub") == 0, "%s", ops(m));
    pc_node *sub = nth_op(m, "Sub", 0);
    CHECK(sub && strcmp(sub->inputs[0]->name, "s") == 0 && sub->inputs[0]->initializer->rank == 0);
    check_exact(before, m, "Sub scalar rank 3");
    pc_model_free(before);
    pc_model_free(m);
}

/* A non-constant lower-rank input gets Unsqueeze then the inverse Transpose (the only one left); that
 * Transpose of [1,1,1,3] to [1,3,1,1] moves no data, so the run ends with it as a Reshape. */
static void test_broadcast_unsqueeze(void)
{
    for (int opset = 11; opset <= 13; opset += 2) {
        pc_model *m = pt_model(opset);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
        pt_input(m, "z", PC_DTYPE_FLOAT, 1, (int64_t[]){3});
        transpose(m, "x", "t", 4, P4_CL); /* [2,4,5,3] */
        pt_node(m, "Mul", "", "t,z", "u", NULL);
        transpose(m, "u", "y", 4, P4_CF);
        pt_output(m, "y");
        pc_model *before = pt_clone(m);
        CHECK(run(m));
        CHECK_MSG(strcmp(ops(m), "Unsqueeze,Reshape,Mul") == 0, "opset %d: %s", opset, ops(m));
        pc_node *u = nth_op(m, "Unsqueeze", 0), *t = nth_op(m, "Reshape", 0);
        const int64_t axes[] = {0, 1, 2};
        if (opset >= 13)
            CHECK(u && input_ints_eq(u, 1, 3, axes));
        else
            CHECK(u && ints_eq(u, "axes", 3, axes));
        CHECK(t && t->inputs[0] == u->outputs[0] && input_ints_eq(t, 1, 4, (int64_t[]){1, 3, 1, 1}));
        CHECK(pc_graph_transpose_cost(m->graph) == 0);
        check_exact(before, m, "Mul with unsqueezed input");
        pc_model_free(before);
        pc_model_free(m);
    }
}

static void test_concat_split(void)
{
    /* Concat of two transposed inputs, negative axis */
    pc_model *m = pt_model(13);
    pt_input(m, "a", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
    pt_input(m, "b", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 2, 4, 5});
    transpose(m, "a", "ta", 4, P4_CL);
    transpose(m, "b", "tb", 4, P4_CL);
    pc_error err;
    pc_node *c = pt_node(m, "Concat", "", "ta,tb", "u", NULL);
    CHECK_OK(pc_node_set_attr_int(c, "axis", -1, &err), &err);
    transpose(m, "u", "y", 4, P4_CF);
    pt_output(m, "y");
    pc_model *before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Concat") == 0, "%s", ops(m));
    CHECK(pc_node_attr_int(nth_op(m, "Concat", 0), "axis", 99) == 1);
    check_exact(before, m, "Concat");
    pc_model_free(before);
    pc_model_free(m);

    /* Split along axis 3 (channels-last) into two outputs, each transposed back */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 4, 3, 5});
    transpose(m, "x", "t", 4, P4_CL); /* [2,3,5,4] */
    pc_node *s = pt_node(m, "Split", "", "t", "s0,s1", NULL);
    CHECK_OK(pc_node_set_attr_int(s, "axis", 3, &err), &err);
    transpose(m, "s0", "y0", 4, P4_CF);
    transpose(m, "s1", "y1", 4, P4_CF);
    pt_output(m, "y0");
    pt_output(m, "y1");
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Split") == 0, "%s", ops(m));
    CHECK(pc_node_attr_int(nth_op(m, "Split", 0), "axis", 99) == 1);
    CHECK(strcmp(m->graph->outputs[0]->name, "y0") == 0 && strcmp(m->graph->outputs[1]->name, "y1") == 0);
    check_exact(before, m, "Split");
    pc_model_free(before);
    pc_model_free(m);
}

static void test_softmax(void)
{
    pc_error err;
    /* opset 13: axis remapped (axis 3 of the NHWC view is axis 1) */
    pc_node *mid;
    pc_model *m = sandwich(13, PC_DTYPE_FLOAT, "Softmax", &mid);
    CHECK_OK(pc_node_set_attr_int(mid, "axis", -1, &err), &err);
    sandwich_end(m);
    pc_model *before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Softmax") == 0, "%s", ops(m));
    CHECK(pc_node_attr_int(nth_op(m, "Softmax", 0), "axis", 99) == 1);
    check_exact(before, m, "Softmax 13");
    pc_model_free(before);
    pc_model_free(m);

    /* opset 11, axis 1 with perm (0,2,3,1): every axis stays on its side of the coercion point: pushed, axis
     * kept */
    m = sandwich(11, PC_DTYPE_FLOAT, "LogSoftmax", &mid);
    CHECK_OK(pc_node_set_attr_int(mid, "axis", 1, &err), &err);
    sandwich_end(m);
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "LogSoftmax") == 0, "%s", ops(m));
    CHECK(pc_node_attr_int(nth_op(m, "LogSoftmax", 0), "axis", 99) == 1);
    check_exact(before, m, "LogSoftmax 11");
    pc_model_free(before);
    pc_model_free(m);

    /* Hardmax 11, axis 1, perm (0,2,3,1): the sides hold but each row is read in another order, and the
     * first maximum of a row wins: with ties another element would win (suite seed 1, case 3730 of the
     * patterns family: a -0/0 tie). Blocked, graph unchanged */
    m = sandwich(11, PC_DTYPE_FLOAT, "Hardmax", &mid);
    sandwich_end(m);
    CHECK(!run(m));
    CHECK_MSG(strcmp(ops(m), "Transpose,Hardmax,Transpose") == 0, "%s", ops(m));
    pc_model_free(m);
    /* Hardmax 11, axis 2 of [2,3,4], perm (1,0,2): rows move, each row keeps its order: pushed, exact */
    m = pt_model(11);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 4});
    transpose(m, "x", "t", 3, (int64_t[]){1, 0, 2});
    mid = pt_node(m, "Hardmax", "", "t", "u", NULL);
    CHECK_OK(pc_node_set_attr_int(mid, "axis", 2, &err), &err);
    transpose(m, "u", "y", 3, (int64_t[]){1, 0, 2});
    pt_output(m, "y");
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Hardmax") == 0, "%s", ops(m));
    check_exact(before, m, "Hardmax 11, rows moved");
    pc_model_free(before);
    pc_model_free(m);

    /* opset 11, axis 2: perm (0,2,3,1) moves dim 1 across the coercion point: blocked, graph unchanged */
    m = sandwich(11, PC_DTYPE_FLOAT, "Softmax", &mid);
    CHECK_OK(pc_node_set_attr_int(mid, "axis", 2, &err), &err);
    sandwich_end(m);
    CHECK(!run(m));
    CHECK_MSG(strcmp(ops(m), "Transpose,Softmax,Transpose") == 0, "%s", ops(m));
    CHECK(ints_eq(nth_op(m, "Transpose", 0), "perm", 4, P4_CL) &&
          ints_eq(nth_op(m, "Transpose", 1), "perm", 4, P4_CF));
    pc_model_free(m);
}

static void test_argmax(void)
{
    pc_error err;
    /* keepdims 1: axis remapped, sandwich cancels */
    pc_node *mid;
    pc_model *m = sandwich(13, PC_DTYPE_FLOAT, "ArgMax", &mid);
    CHECK_OK(pc_node_set_attr_int(mid, "axis", 2, &err), &err);
    sandwich_end(m);
    pc_model *before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "ArgMax") == 0, "%s", ops(m));
    CHECK(pc_node_attr_int(nth_op(m, "ArgMax", 0), "axis", 99) == 3);
    check_exact(before, m, "ArgMax keepdims 1");
    pc_model_free(before);
    pc_model_free(m);

    /* keepdims 0 on the channel axis of NHWC: the squeezed perm is the identity, so nothing is left */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
    transpose(m, "x", "t", 4, P4_CL);
    pc_node *a = pt_node(m, "ArgMin", "", "t", "y", NULL);
    CHECK_OK(pc_node_set_attr_int(a, "axis", -1, &err), &err);
    CHECK_OK(pc_node_set_attr_int(a, "keepdims", 0, &err), &err);
    pt_output(m, "y");
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "ArgMin") == 0, "%s", ops(m));
    CHECK(pc_node_attr_int(nth_op(m, "ArgMin", 0), "axis", 99) == 1);
    check_exact(before, m, "ArgMin keepdims 0");
    pc_model_free(before);
    pc_model_free(m);
}

static void test_reduce(void)
{
    pc_error err;
    /* attribute axes (ReduceMean opset 13), keepdims 1, two axes: sorted remapped axes */
    pc_node *mid;
    pc_model *m = sandwich(13, PC_DTYPE_FLOAT, "ReduceMax", &mid);
    CHECK_OK(pc_node_set_attr_ints(mid, "axes", 2, (int64_t[]){1, -1}, &err), &err);
    sandwich_end(m);
    pc_model *before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "ReduceMax") == 0, "%s", ops(m));
    CHECK(ints_eq(nth_op(m, "ReduceMax", 0), "axes", 2, (int64_t[]){1, 2}));
    check_exact(before, m, "ReduceMax attr axes");
    pc_model_free(before);
    pc_model_free(m);

    /* input axes (ReduceSum opset 13), keepdims 0: output perm is the squeezed perm, which here is the
     * identity */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
    pt_const_i64(m, "ax", 1, (int64_t[]){3});
    transpose(m, "x", "t", 4, P4_CL);
    pc_node *r = pt_node(m, "ReduceSum", "", "t,ax", "y", NULL);
    CHECK_OK(pc_node_set_attr_int(r, "keepdims", 0, &err), &err);
    pt_output(m, "y");
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "ReduceSum") == 0, "%s", ops(m));
    CHECK(input_ints_eq(nth_op(m, "ReduceSum", 0), 1, 1, (int64_t[]){1}));
    check_exact(before, m, "ReduceSum input axes keepdims 0");
    pc_model_free(before);
    pc_model_free(m);

    /* keepdims 0 on a spatial axis, rank 3 perm (2,0,1): the rest needs the squeezed inverse perm (1,0) */
    m = pt_model(18);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 4});
    pt_const_i64(m, "ax", 1, (int64_t[]){0}); /* axis 0 of t is axis 2 of x */
    const int64_t p3[] = {2, 0, 1};
    transpose(m, "x", "t", 3, p3); /* [4,2,3] */
    r = pt_node(m, "ReduceMean", "", "t,ax", "u", NULL);
    CHECK_OK(pc_node_set_attr_int(r, "keepdims", 0, &err), &err); /* u [2,3] = x reduced over 2 */
    pt_node(m, "Relu", "", "u", "y", NULL);
    pt_output(m, "y");
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "ReduceMean,Relu") == 0, "%s", ops(m));
    CHECK(input_ints_eq(nth_op(m, "ReduceMean", 0), 1, 1, (int64_t[]){2}));
    check_exact(before, m, "ReduceMean opset 18 keepdims 0");
    pc_model_free(before);
    pc_model_free(m);

    /* noop_with_empty_axes: an identity, pushed through unchanged */
    m = sandwich(18, PC_DTYPE_FLOAT, "ReduceL2", &mid);
    CHECK_OK(pc_node_set_attr_int(mid, "noop_with_empty_axes", 1, &err), &err);
    sandwich_end(m);
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "ReduceL2") == 0, "%s", ops(m));
    check_exact(before, m, "ReduceL2 noop");
    pc_model_free(before);
    pc_model_free(m);

    /* non-constant axes input: blocked */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
    pt_input(m, "ax", PC_DTYPE_INT64, 1, (int64_t[]){1});
    transpose(m, "x", "t", 4, P4_CL);
    pt_node(m, "ReduceSum", "", "t,ax", "u", NULL);
    sandwich_end(m);
    CHECK(!run(m));
    CHECK_MSG(strcmp(ops(m), "Transpose,ReduceSum,Transpose") == 0, "%s", ops(m));
    pc_model_free(m);
}

static void test_squeeze_unsqueeze(void)
{
    pc_error err;
    for (int opset = 11; opset <= 13; opset += 2) {
        /* x[2,1,3,4] -T(0,2,3,1)-> [2,3,4,1] -Squeeze(-1)-> [2,3,4]: Squeeze(x, 1), nothing else */
        pc_model *m = pt_model(opset);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 1, 3, 4});
        transpose(m, "x", "t", 4, P4_CL);
        pc_node *sq;
        if (opset >= 13) {
            pt_const_i64(m, "sa", 1, (int64_t[]){-1});
            sq = pt_node(m, "Squeeze", "", "t,sa", "s", NULL);
        } else {
            sq = pt_node(m, "Squeeze", "", "t", "s", NULL);
            CHECK_OK(pc_node_set_attr_ints(sq, "axes", 1, (int64_t[]){-1}, &err), &err);
        }
        pt_node(m, "Relu", "", "s", "y", NULL);
        pt_output(m, "y");
        pc_model *before = pt_clone(m);
        CHECK(run(m));
        CHECK_MSG(strcmp(ops(m), "Squeeze,Relu") == 0, "opset %d: %s", opset, ops(m));
        sq = nth_op(m, "Squeeze", 0);
        if (opset >= 13)
            CHECK(input_ints_eq(sq, 1, 1, (int64_t[]){1}));
        else
            CHECK(ints_eq(sq, "axes", 1, (int64_t[]){1}));
        check_exact(before, m, "Squeeze");
        pc_model_free(before);
        pc_model_free(m);

        /* x[2,3,4] -T(0,2,1)-> [2,4,3] -Unsqueeze(1)-> [2,1,4,3] -T(0,1,3,2)-> y: the unsqueezed perm
         * (0,1,3,2) cancels the last Transpose; the axes stay (they index the output) */
        m = pt_model(opset);
        pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 4});
        transpose(m, "x", "t", 3, (int64_t[]){0, 2, 1});
        pc_node *un;
        if (opset >= 13) {
            pt_const_i64(m, "ua", 1, (int64_t[]){-3});
            un = pt_node(m, "Unsqueeze", "", "t,ua", "u", NULL);
        } else {
            un = pt_node(m, "Unsqueeze", "", "t", "u", NULL);
            CHECK_OK(pc_node_set_attr_ints(un, "axes", 1, (int64_t[]){1}, &err), &err);
        }
        transpose(m, "u", "y", 4, (int64_t[]){0, 1, 3, 2});
        pt_output(m, "y");
        before = pt_clone(m);
        CHECK(run(m));
        CHECK_MSG(strcmp(ops(m), "Unsqueeze") == 0, "opset %d: %s", opset, ops(m));
        CHECK(pc_graph_transpose_cost(m->graph) == 0);
        check_exact(before, m, "Unsqueeze");
        pc_model_free(before);
        pc_model_free(m);
    }
}

static void test_pad_slice_tile(void)
{
    pc_error err;
    /* Pad opset 13, constant pads permuted into the begins/ends groups */
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 4});
    pt_const_i64(m, "pads", 8, (int64_t[]){0, 1, 2, 0, 0, 3, 0, 1}); /* on t[1,3,4,2] */
    transpose(m, "x", "t", 4, P4_CL);
    pt_node(m, "Pad", "", "t,pads", "u", NULL);
    sandwich_end(m);
    pc_model *before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Pad") == 0, "%s", ops(m));
    /* t axis i is x axis perm[i]: x pads begin = [0,0,1,2], end = [0,1,3,0] */
    CHECK(input_ints_eq(nth_op(m, "Pad", 0), 1, 8, (int64_t[]){0, 0, 1, 2, 0, 1, 3, 0}));
    check_exact(before, m, "Pad 13");
    pc_model_free(before);
    pc_model_free(m);

    /* Pad opset 10: attribute */
    m = pt_model(10);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 4});
    transpose(m, "x", "t", 4, P4_CL);
    pc_node *pad = pt_node(m, "Pad", "", "t", "u", NULL);
    CHECK_OK(pc_node_set_attr_ints(pad, "pads", 8, (int64_t[]){0, 1, 2, 0, 0, 3, 0, 1}, &err), &err);
    sandwich_end(m);
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Pad") == 0, "%s", ops(m));
    CHECK(ints_eq(nth_op(m, "Pad", 0), "pads", 8, (int64_t[]){0, 0, 1, 2, 0, 1, 3, 0}));
    check_exact(before, m, "Pad 10");
    pc_model_free(before);
    pc_model_free(m);

    /* Slice opset 13 with negative axes, int32 axes kept int32 and unsorted (starts and ends share Tind) */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
    pt_const(m, "st", PC_DTYPE_INT32, 1, (int64_t[]){2}, (int32_t[]){1, 0});
    pt_const(m, "en", PC_DTYPE_INT32, 1, (int64_t[]){2}, (int32_t[]){3, 2});
    pt_const(m, "ax", PC_DTYPE_INT32, 1, (int64_t[]){2}, (int32_t[]){-1, 1});
    transpose(m, "x", "t", 4, P4_CL); /* [2,4,5,3] */
    pt_node(m, "Slice", "", "t,st,en,ax", "u", NULL);
    sandwich_end(m);
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Slice") == 0, "%s", ops(m));
    pc_node *sl = nth_op(m, "Slice", 0);
    CHECK(sl && sl->inputs[3]->initializer->dtype == PC_DTYPE_INT32 &&
          input_ints_eq(sl, 3, 2, (int64_t[]){1, 2}));
    check_exact(before, m, "Slice 13");
    pc_model_free(before);
    pc_model_free(m);

    /* Slice opset 13 without axes: synthesized from len(starts) */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
    pt_const_i64(m, "st", 2, (int64_t[]){1, 1});
    pt_const_i64(m, "en", 2, (int64_t[]){2, 3});
    transpose(m, "x", "t", 4, P4_CL);
    pt_node(m, "Slice", "", "t,st,en", "u", NULL);
    sandwich_end(m);
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Slice") == 0, "%s", ops(m));
    CHECK(input_ints_eq(nth_op(m, "Slice", 0), 3, 2, (int64_t[]){0, 2}));
    check_exact(before, m, "Slice synthesized axes");
    pc_model_free(before);
    pc_model_free(m);

    /* Tile with constant repeats */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 2});
    pt_const_i64(m, "rep", 4, (int64_t[]){1, 2, 3, 1}); /* on t[1,3,2,2] */
    transpose(m, "x", "t", 4, P4_CL);
    pt_node(m, "Tile", "", "t,rep", "u", NULL);
    sandwich_end(m);
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Tile") == 0, "%s", ops(m));
    CHECK(input_ints_eq(nth_op(m, "Tile", 0), 1, 4, (int64_t[]){1, 1, 2, 3}));
    check_exact(before, m, "Tile");
    pc_model_free(before);
    pc_model_free(m);
}

static void test_gather_shape(void)
{
    pc_error err;
    /* Gather with a constant scalar index drops axis perm[axis] */
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
    pt_const(m, "i", PC_DTYPE_INT64, 0, NULL, (int64_t[]){2});
    transpose(m, "x", "t", 4, P4_CL); /* [2,4,5,3] */
    pc_node *g = pt_node(m, "Gather", "", "t,i", "u", NULL);
    CHECK_OK(pc_node_set_attr_int(g, "axis", 3, &err), &err); /* x axis 1: u [2,4,5] = x[:,2] */
    pt_node(m, "Relu", "", "u", "y", NULL);
    pt_output(m, "y");
    pc_model *before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Gather,Relu") == 0, "%s", ops(m));
    CHECK(pc_node_attr_int(nth_op(m, "Gather", 0), "axis", 99) == 1);
    check_exact(before, m, "Gather scalar");
    pc_model_free(before);
    pc_model_free(m);

    /* Gather with a 1-D index: blocked */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
    pt_const_i64(m, "i", 1, (int64_t[]){2});
    transpose(m, "x", "t", 4, P4_CL);
    pt_node(m, "Gather", "", "t,i", "u", NULL);
    sandwich_end(m);
    CHECK(!run(m));
    CHECK_MSG(strcmp(ops(m), "Transpose,Gather,Transpose") == 0, "%s", ops(m));
    pc_model_free(m);

    /* Shape at opset 15 with start/end: Gather(Shape(x), perm[1:3]) */
    m = pt_model(15);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
    transpose(m, "x", "t", 4, P4_CL);
    pc_node *s = pt_node(m, "Shape", "", "t", "y", NULL);
    CHECK_OK(pc_node_set_attr_int(s, "start", 1, &err), &err);
    CHECK_OK(pc_node_set_attr_int(s, "end", -1, &err), &err);
    pt_output(m, "y");
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Shape,Gather") == 0, "%s", ops(m));
    s = nth_op(m, "Shape", 0);
    CHECK(s && !pc_node_attr(s, "start") && !pc_node_attr(s, "end"));
    CHECK(input_ints_eq(nth_op(m, "Gather", 0), 1, 2, (int64_t[]){2, 3}));
    CHECK(strcmp(m->graph->outputs[0]->name, "y") == 0);
    check_exact(before, m, "Shape 15");
    pc_model_free(before);
    pc_model_free(m);
}

static void test_transpose_merge(void)
{
    /* non-inverse pair: one Transpose with composed[i] = p1[p2[i]] */
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 4});
    transpose(m, "x", "t", 3, (int64_t[]){1, 2, 0});
    transpose(m, "t", "y", 3, (int64_t[]){0, 2, 1});
    pt_output(m, "y");
    pc_model *before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Transpose") == 0, "%s", ops(m));
    CHECK(ints_eq(nth_op(m, "Transpose", 0), "perm", 3, (int64_t[]){1, 0, 2}));
    CHECK(strcmp(m->graph->outputs[0]->name, "y") == 0);
    check_exact(before, m, "merge");
    pc_model_free(before);
    pc_model_free(m);

    /* cancelling pair where both values are graph outputs: the second becomes an Identity */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
    pt_node(m, "Relu", "", "x", "r", NULL);
    transpose(m, "r", "t", 4, P4_CL);
    transpose(m, "t", "y", 4, P4_CF);
    pt_output(m, "t");
    pt_output(m, "y");
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Relu,Transpose,Identity") == 0, "%s", ops(m));
    CHECK(strcmp(m->graph->outputs[0]->name, "t") == 0 && strcmp(m->graph->outputs[1]->name, "y") == 0);
    check_exact(before, m, "cancel at two graph outputs");
    pc_model_free(before);
    pc_model_free(m);

    /* an identity perm is removed; the producer takes the output name */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    pt_node(m, "Relu", "", "x", "r", NULL);
    transpose(m, "r", "y", 2, (int64_t[]){0, 1});
    pt_output(m, "y");
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Relu") == 0, "%s", ops(m));
    CHECK(strcmp(m->graph->outputs[0]->name, "y") == 0 &&
          nth_op(m, "Relu", 0)->outputs[0] == m->graph->outputs[0]);
    check_exact(before, m, "identity perm");
    pc_model_free(before);
    pc_model_free(m);
}

static void test_reshape(void)
{
    /* x[2,1,3] -T(1,0,2)-> [1,2,3] -Reshape[2,1,3]-> y: the Reshape only moves a size-1 dim: all cancels */
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){2, 1, 3});
    pt_const_i64(m, "shp", 3, (int64_t[]){2, 1, -1});
    pt_node(m, "Relu", "", "x", "r", NULL);
    transpose(m, "r", "t", 3, (int64_t[]){1, 0, 2});
    pt_node(m, "Reshape", "", "t,shp", "y", NULL);
    pt_output(m, "y");
    pc_model *before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Relu") == 0, "%s", ops(m));
    CHECK(strcmp(m->graph->outputs[0]->name, "y") == 0);
    check_exact(before, m, "Reshape cancels");
    pc_model_free(before);
    pc_model_free(m);

    /* Reshape as a Transpose that merges: x[2,1,3] -T(1,0,2)-> [1,2,3] -Reshape[2,3,1]-> one
     * Transpose(0,2,1), which moves only the size-1 dim: the run ends with it as one Reshape of x */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){2, 1, 3});
    pt_const_i64(m, "shp", 3, (int64_t[]){2, 3, 1});
    transpose(m, "x", "t", 3, (int64_t[]){1, 0, 2});
    pt_node(m, "Reshape", "", "t,shp", "y", NULL);
    pt_output(m, "y");
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Reshape") == 0, "%s", ops(m));
    pc_node *rs = nth_op(m, "Reshape", 0);
    CHECK(rs && strcmp(rs->inputs[0]->name, "x") == 0 && input_ints_eq(rs, 1, 3, (int64_t[]){2, 3, 1}));
    check_exact(before, m, "Reshape merges");
    pc_model_free(before);
    pc_model_free(m);

    /* a 0 in the shape copies the dim (allowzero absent): x[2,1,3] -T(1,0,2)-> [1,2,3] -Reshape[0,2,3]-> the
     * same dims, so the pair is the Transpose alone, which moves only the size-1 dim: one Reshape of x */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){2, 1, 3});
    pt_const_i64(m, "shp", 3, (int64_t[]){0, 2, 3});
    transpose(m, "x", "t", 3, (int64_t[]){1, 0, 2});
    pt_node(m, "Reshape", "", "t,shp", "y", NULL);
    pt_output(m, "y");
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Reshape") == 0, "%s", ops(m));
    rs = nth_op(m, "Reshape", 0);
    CHECK(rs && strcmp(rs->inputs[0]->name, "x") == 0);
    check_exact(before, m, "Reshape with a 0");
    pc_model_free(before);
    pc_model_free(m);

    /* a Reshape that merges dims is not a Transpose: stays */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 4});
    pt_const_i64(m, "shp", 2, (int64_t[]){2, 12});
    transpose(m, "x", "t", 3, (int64_t[]){0, 2, 1});
    pt_node(m, "Reshape", "", "t,shp", "y", NULL);
    pt_output(m, "y");
    CHECK(!run(m));
    CHECK_MSG(strcmp(ops(m), "Transpose,Reshape") == 0, "%s", ops(m));
    pc_model_free(m);
}

/* Reshapes that split or merge whole axis groups carry the Transpose (perm mapped over the groups) */
static void test_reshape_groups(void)
{
    /* ShuffleNet's channel shuffle between NHWC layers: x[1,4,5,8] -T(CF)-> Reshape [1,2,4,4,5]
     * -T(0,2,1,3,4)-> Reshape [1,8,4,5] -T(CL)-> y: the shuffle itself stays, in NHWC form, and nothing else
     */
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 4, 5, 8});
    pt_const_i64(m, "s5", 5, (int64_t[]){1, 2, 4, 4, 5});
    pt_const_i64(m, "s4", 4, (int64_t[]){1, 8, 4, 5});
    transpose(m, "x", "t", 4, P4_CF);
    pt_node(m, "Reshape", "", "t,s5", "a", NULL);
    transpose(m, "a", "b", 5, (int64_t[]){0, 2, 1, 3, 4});
    pt_node(m, "Reshape", "", "b,s4", "c", NULL);
    transpose(m, "c", "y", 4, P4_CL);
    pt_output(m, "y");
    pc_model *before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Reshape,Transpose,Reshape") == 0, "%s", ops(m));
    CHECK(ints_eq(nth_op(m, "Transpose", 0), "perm", 5, (int64_t[]){0, 1, 2, 4, 3}));
    CHECK(input_ints_eq(nth_op(m, "Reshape", 0), 1, 5, (int64_t[]){1, 4, 5, 2, 4}));
    CHECK(input_ints_eq(nth_op(m, "Reshape", 1), 1, 4, (int64_t[]){1, 4, 5, 8}));
    check_exact(before, m, "channel shuffle");
    pc_model_free(before);
    pc_model_free(m);

    /* a merge whose axes stay together in the stored tensor: x[2,3,4,5] -T(CL)-> [2,4,5,3] -Reshape
     * [2,20,3]-> -T(0,2,1)-> y: the Reshape runs on x ([2,3,20]) and both Transposes go */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
    pt_const_i64(m, "s3", 3, (int64_t[]){2, -1, 3});
    transpose(m, "x", "t", 4, P4_CL);
    pt_node(m, "Reshape", "", "t,s3", "a", NULL);
    transpose(m, "a", "y", 3, (int64_t[]){0, 2, 1});
    pt_output(m, "y");
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "Reshape") == 0, "%s", ops(m));
    CHECK(input_ints_eq(nth_op(m, "Reshape", 0), 1, 3, (int64_t[]){2, 3, 20}));
    check_exact(before, m, "merge carried");
    pc_model_free(before);
    pc_model_free(m);

    /* the merged axes swap places in the stored tensor: the data moves, so the Reshape stays pinned */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
    pt_const_i64(m, "s3", 3, (int64_t[]){2, 20, 3});
    transpose(m, "x", "t", 4, (int64_t[]){0, 3, 2, 1}); /* [2,5,4,3]: axes 1,2 are stored 3,2 */
    pt_node(m, "Reshape", "", "t,s3", "a", NULL);
    transpose(m, "a", "y", 3, (int64_t[]){0, 2, 1});
    pt_output(m, "y");
    CHECK(!run(m));
    CHECK_MSG(strcmp(ops(m), "Transpose,Reshape,Transpose") == 0, "%s", ops(m));
    pc_model_free(m);
}

/* The int writer keeps every bit of an int32 (negative values, high bytes) */
static void test_replace_ints(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 1, (int64_t[]){4});
    pt_const(m, "c", PC_DTYPE_INT32, 1, (int64_t[]){3}, (int32_t[]){0, 0, 0});
    pc_node *n = pt_node(m, "Slice", "", "x,c,c", "y", NULL);
    pt_output(m, "y");
    pc_error err;
    tp_ctx ctx = {.graph = m->graph, .opset = 13, .err = &err};
    static const int64_t want[3] = {-1, 1 << 24, -70000};
    CHECK_OK(tp_replace_input_ints(&ctx, n, 1, PC_DTYPE_INT32, 3, want), &err);
    const pc_tensor *t = n->inputs[1]->initializer;
    CHECK(t && t->dtype == PC_DTYPE_INT32 && t->n_elements == 3);
    for (size_t k = 0; t && k < 3; k++)
        CHECK_MSG(((const int32_t *)t->data)[k] == (int32_t)want[k], "element %zu: %d", k,
                  ((const int32_t *)t->data)[k]);
    pc_model_free(m);
}

static void test_qdq(void)
{
    pc_error err;
    /* per-axis DQ on the channel axis of the NCHW view: axis 1 becomes perm[1] = 3 in NHWC */
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_INT8, 4, (int64_t[]){1, 4, 5, 3});
    pt_const_f(m, "sc", 1, (int64_t[]){3}, (float[]){0.5f, 0.25f, 2.0f});
    pt_const(m, "zp", PC_DTYPE_INT8, 1, (int64_t[]){3}, (int8_t[]){1, -2, 0});
    transpose(m, "x", "t", 4, P4_CF); /* [1,3,4,5] */
    pc_node *dq = pt_node(m, "DequantizeLinear", "", "t,sc,zp", "u", NULL);
    CHECK_OK(pc_node_set_attr_int(dq, "axis", 1, &err), &err);
    transpose(m, "u", "y", 4, P4_CL);
    pt_output(m, "y");
    pc_model *before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "DequantizeLinear") == 0, "%s", ops(m));
    CHECK(pc_node_attr_int(nth_op(m, "DequantizeLinear", 0), "axis", 99) == 3);
    check_exact(before, m, "per-axis DQ");
    pc_model_free(before);
    pc_model_free(m);

    /* per-axis Q with a negative axis */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 4, 5, 3});
    pt_const_f(m, "sc", 1, (int64_t[]){5}, (float[]){0.5f, 0.25f, 2.0f, 1.0f, 0.125f});
    pt_const(m, "zp", PC_DTYPE_UINT8, 1, (int64_t[]){5}, (uint8_t[]){1, 2, 0, 128, 7});
    transpose(m, "x", "t", 4, P4_CF); /* [1,3,4,5] */
    pc_node *q = pt_node(m, "QuantizeLinear", "", "t,sc,zp", "u", NULL);
    CHECK_OK(pc_node_set_attr_int(q, "axis", -1, &err), &err);
    transpose(m, "u", "y", 4, P4_CL);
    pt_output(m, "y");
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "QuantizeLinear") == 0, "%s", ops(m));
    CHECK(pc_node_attr_int(nth_op(m, "QuantizeLinear", 0), "axis", 99) == 2);
    check_exact(before, m, "per-axis Q");
    pc_model_free(before);
    pc_model_free(m);

    /* blocked quantization (opset 21, block_size): never rewritten */
    m = pt_model(21);
    pt_input(m, "x", PC_DTYPE_INT8, 4, (int64_t[]){1, 4, 4, 2});
    pt_const_f(m, "sc", 4, (int64_t[]){1, 2, 2, 4}, NULL);
    transpose(m, "x", "t", 4, P4_CF);
    dq = pt_node(m, "DequantizeLinear", "", "t,sc", "u", NULL);
    CHECK_OK(pc_node_set_attr_int(dq, "axis", 2, &err), &err);
    CHECK_OK(pc_node_set_attr_int(dq, "block_size", 2, &err), &err);
    transpose(m, "u", "y", 4, P4_CL);
    pt_output(m, "y");
    pc_pass_options o = opts_plain();
    bool changed = false;
    CHECK_OK(pc_transpose_optimize(m->graph, &o, &changed, &err), &err);
    CHECK(!changed);
    CHECK_MSG(strcmp(ops(m), "Transpose,DequantizeLinear,Transpose") == 0, "%s", ops(m));
    CHECK(pc_node_attr_int(nth_op(m, "DequantizeLinear", 0), "axis", 99) == 2);
    pc_model_free(m);

    /* move above DQ: a Transpose reading a per-axis DQ of a constant folds into the weight; axis =
     * p_inv[axis] */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 2, 4, 2});
    int8_t wq[24];
    for (int i = 0; i < 24; i++)
        wq[i] = (int8_t)(i * 5 - 60);
    pt_const(m, "w", PC_DTYPE_INT8, 4, (int64_t[]){2, 3, 2, 2}, wq);
    pt_const_f(m, "ws", 1, (int64_t[]){3}, (float[]){0.5f, 0.25f, 0.125f});
    dq = pt_node(m, "DequantizeLinear", "", "w,ws", "wf", NULL);
    CHECK_OK(pc_node_set_attr_int(dq, "axis", 1, &err), &err);
    transpose(m, "wf", "wt", 4, P4_CL); /* [2,3,2,2] -> [2,2,2,3] */
    pt_node(m, "MatMul", "", "x,wt", "y", NULL);
    pt_output(m, "y");
    before = pt_clone(m);
    CHECK(run(m));
    CHECK_MSG(strcmp(ops(m), "DequantizeLinear,MatMul") == 0, "%s", ops(m));
    /* the DQ now reads the weight with its channel last: axis 1 -> p_inv[1] = 3 */
    CHECK(pc_node_attr_int(nth_op(m, "DequantizeLinear", 0), "axis", 99) == 3);
    CHECK(nth_op(m, "DequantizeLinear", 0)->inputs[0]->initializer->dims[3] == 3);
    check_exact(before, m, "move above DQ");
    pc_model_free(before);
    pc_model_free(m);

    /* a lower-rank DQ(constant) a broadcast reads: the constant is reshaped to [1,1,1,3] and then permuted
     * under the DQ (per-tensor and per-axis, whose axis 0 becomes 3 and then perm_inv[3] = 1); no Unsqueeze
     * or Reshape node is left, as in ORT */
    for (int per_axis = 0; per_axis < 2; per_axis++) {
        m = pt_model(13);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 5});
        pt_const(m, "q", PC_DTYPE_INT8, 1, (int64_t[]){3}, (int8_t[]){1, -2, 3});
        if (per_axis) {
            pt_const_f(m, "s", 1, (int64_t[]){3}, (float[]){0.5f, 0.25f, 2.0f});
            pt_const(m, "z", PC_DTYPE_INT8, 1, (int64_t[]){3}, (int8_t[]){0, 1, 2});
        } else {
            pt_const_f(m, "s", 0, NULL, (float[]){0.5f});
            pt_const(m, "z", PC_DTYPE_INT8, 0, NULL, (int8_t[]){1});
        }
        transpose(m, "x", "t", 4, P4_CL);
        dq = pt_node(m, "DequantizeLinear", "", "q,s,z", "d", NULL);
        if (per_axis) CHECK_OK(pc_node_set_attr_int(dq, "axis", 0, &err), &err);
        pt_node(m, "Add", "", "t,d", "a", NULL);
        pt_node(m, "Relu", "", "a", "u", NULL);
        sandwich_end(m);
        before = pt_clone(m);
        CHECK(run(m));
        CHECK_MSG(strcmp(ops(m), "DequantizeLinear,Add,Relu") == 0, "%s", ops(m));
        pc_node *d = nth_op(m, "DequantizeLinear", 0);
        const pc_tensor *w = d ? d->inputs[0]->initializer : NULL;
        CHECK(w && w->rank == 4 && w->dims[1] == 3 && w->n_elements == 3);
        if (per_axis) CHECK(pc_node_attr_int(d, "axis", 99) == 1);
        check_exact(before, m, per_axis ? "broadcast per-axis DQ(constant)" : "broadcast DQ(constant)");
        pc_model_free(before);
        pc_model_free(m);
    }
}

/* A 1-D int64 or float feed. */
static pc_data *feed_1d(pc_dtype dt, size_t n, const double *v)
{
    pc_error err;
    int64_t dim = (int64_t)n;
    pc_data *d = pc_data_new_tensor(dt, 1, &dim, &err);
    if (!d) pt_die("feed", &err);
    for (size_t k = 0; k < n; k++) {
        if (dt == PC_DTYPE_FLOAT)
            ((float *)d->data)[k] = (float)v[k];
        else if (dt == PC_DTYPE_INT32)
            ((int32_t *)d->data)[k] = (int32_t)v[k];
        else
            ((int64_t *)d->data)[k] = (int64_t)v[k];
    }
    return d;
}

/* Computed (graph input) pads, repeats, axes, starts and scales: the push puts a Gather of the perm on them
 * as ORT does, instead of blocking; outputs bit-exact with the inputs' real values. */
static void test_computed_inputs(void)
{
    pc_error err;
    enum { PAD, TILE, SLICE_AXES, SLICE_AXES_I32, SLICE_STARTS, RESIZE, N_CASES };
    static const char *const names[] = {"Pad",          "Tile",  "Slice axes", "Slice int32 axes",
                                        "Slice starts", "Resize"};
    for (int c = 0; c < N_CASES; c++) {
        pc_model *m = pt_model(13);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
        transpose(m, "x", "t", 4, P4_CL); /* [2,4,5,3] */
        pc_data *feeds[2] = {NULL, NULL};
        uint64_t seed = 3;
        feeds[0] = pt_random_input(m->graph->inputs[0], &seed);
        pc_node *mid = NULL;
        const char *op = names[c];
        switch (c) {
        case PAD:
            pt_input(m, "pads", PC_DTYPE_INT64, 1, (int64_t[]){8});
            mid = pt_node(m, "Pad", "", "t,pads", "u", NULL);
            feeds[1] = feed_1d(PC_DTYPE_INT64, 8, (double[]){0, 1, 2, 0, 1, 0, 0, 2});
            break;
        case TILE:
            pt_input(m, "reps", PC_DTYPE_INT64, 1, (int64_t[]){4});
            mid = pt_node(m, "Tile", "", "t,reps", "u", NULL);
            feeds[1] = feed_1d(PC_DTYPE_INT64, 4, (double[]){1, 2, 1, 3});
            break;
        case SLICE_AXES:
        case SLICE_AXES_I32: {
            pc_dtype dt = c == SLICE_AXES ? PC_DTYPE_INT64 : PC_DTYPE_INT32;
            pt_const(m, "st", dt, 1, (int64_t[]){2},
                     c == SLICE_AXES ? (void *)(int64_t[]){1, 0} : (void *)(int32_t[]){1, 0});
            pt_const(m, "en", dt, 1, (int64_t[]){2},
                     c == SLICE_AXES ? (void *)(int64_t[]){3, 2} : (void *)(int32_t[]){3, 2});
            pt_input(m, "ax", dt, 1, (int64_t[]){2});
            mid = pt_node(m, "Slice", "", "t,st,en,ax", "u", NULL);
            feeds[1] = feed_1d(dt, 2, (double[]){-2, 3}); /* axis 2 (W, 5) and 3 (C, 3) of T(x) */
            break;
        }
        case SLICE_STARTS:
            pt_input(m, "st", PC_DTYPE_INT64, 1, (int64_t[]){2});
            pt_const_i64(m, "en", 2, (int64_t[]){2, 3});
            mid = pt_node(m, "Slice", "", "t,st,en", "u", NULL);
            feeds[1] = feed_1d(PC_DTYPE_INT64, 2, (double[]){1, 1});
            break;
        case RESIZE:
            pt_const_f(m, "roi", 1, (int64_t[]){0}, NULL);
            pt_input(m, "sc", PC_DTYPE_FLOAT, 1, (int64_t[]){4});
            mid = pt_node(m, "Resize", "", "t,roi,sc", "u", NULL);
            CHECK_OK(pc_node_set_attr_string(mid, "mode", "nearest", &err), &err);
            feeds[1] = feed_1d(PC_DTYPE_FLOAT, 4, (double[]){1, 2, 1, 3});
            break;
        }
        sandwich_end(m);
        pc_model *before = pt_clone(m);
        CHECK_MSG(run(m), "%s", op);
        CHECK_MSG(pc_graph_transpose_cost(m->graph) == 0, "%s: %s", op, ops(m));
        /* one Gather, except for computed starts: their length fixes the constant axes, perm[0..2) */
        const pc_node *g = nth_op(m, "Gather", 0);
        if (c == SLICE_STARTS)
            CHECK_MSG(!g && input_ints_eq(nth_op(m, "Slice", 0), 3, 2, (int64_t[]){0, 2}), "%s", ops(m));
        else
            CHECK_MSG(g && !nth_op(m, "Gather", 1), "%s: %s", op, ops(m));
        char why[PT_WHY_SIZE];
        int r = pt_equiv_inputs(before, m, 2, feeds, 0, 0, why, sizeof why);
        CHECK_MSG(r == 1, "%s: %s", op, why);
        pc_data_unref(feeds[0]);
        pc_data_unref(feeds[1]);
        pc_model_free(before);
        pc_model_free(m);
    }
}

static void test_resize(void)
{
    pc_error err;
    for (int k = 0; k < 2; k++) {
        /* NHWC input -> T(0,3,1,2) -> Resize(nearest, scales [1,1,2,3]) -> T(0,2,3,1) */
        pc_model *m = pt_model(13);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 2});
        pt_const_f(m, "roi", 1, (int64_t[]){0}, NULL);
        if (k == 0)
            pt_const_f(m, "sc", 1, (int64_t[]){4}, (float[]){1, 1, 2, 3});
        else
            pt_const_i64(m, "sz", 4, (int64_t[]){1, 2, 4, 9});
        transpose(m, "x", "t", 4, P4_CF); /* [1,2,2,3] */
        pc_node *r = k == 0 ? pt_node(m, "Resize", "", "t,roi,sc", "u", NULL)
                            : pt_node(m, "Resize", "", "t,roi,,sz", "u", NULL);
        CHECK_OK(pc_node_set_attr_string(r, "mode", "nearest", &err), &err);
        transpose(m, "u", "y", 4, P4_CL);
        pt_output(m, "y");
        pc_model *before = pt_clone(m);
        CHECK(run(m));
        CHECK_MSG(strcmp(ops(m), "Resize") == 0, "%s", ops(m));
        r = nth_op(m, "Resize", 0);
        if (k == 0) {
            const pc_tensor *t = r->inputs[2]->initializer;
            const float *f = t ? t->data : NULL;
            CHECK(f && f[0] == 1 && f[1] == 2 && f[2] == 3 && f[3] == 1);
        } else {
            CHECK(input_ints_eq(r, 3, 4, (int64_t[]){1, 4, 9, 2}));
        }
        CHECK(strcmp(r->inputs[1]->name, "roi") == 0);
        check_exact(before, m, "Resize");
        pc_model_free(before);
        pc_model_free(m);
    }
    /* a perm that is not a channel move: blocked */
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 2});
    pt_const_f(m, "roi", 1, (int64_t[]){0}, NULL);
    pt_const_f(m, "sc", 1, (int64_t[]){4}, (float[]){1, 1, 2, 3});
    transpose(m, "x", "t", 4, (int64_t[]){0, 1, 3, 2});
    pt_node(m, "Resize", "", "t,roi,sc", "u", NULL);
    transpose(m, "u", "y", 4, (int64_t[]){0, 1, 3, 2});
    pt_output(m, "y");
    CHECK(!run(m));
    CHECK_MSG(strcmp(ops(m), "Transpose,Resize,Transpose") == 0, "%s", ops(m));
    pc_model_free(m);
}

static void test_stops(void)
{
    /* MatMul has no handler: nothing moves */
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    pt_input(m, "w", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 4});
    transpose(m, "x", "t", 2, (int64_t[]){1, 0});
    pt_node(m, "MatMul", "", "t,w", "u", NULL);
    transpose(m, "u", "y", 2, (int64_t[]){1, 0});
    pt_output(m, "y");
    CHECK(!run(m));
    CHECK_MSG(strcmp(ops(m), "Transpose,MatMul,Transpose") == 0, "%s", ops(m));
    pc_model_free(m);
}

int main(void)
{
    test_simple_ops();
    test_broadcast_constant();
    test_broadcast_unsqueeze();
    test_concat_split();
    test_softmax();
    test_argmax();
    test_reduce();
    test_squeeze_unsqueeze();
    test_pad_slice_tile();
    test_gather_shape();
    test_transpose_merge();
    test_reshape();
    test_reshape_groups();
    test_replace_ints();
    test_qdq();
    test_resize();
    test_computed_inputs();
    test_stops();
    return pc_test_finish("test_transpose_handlers");
}
