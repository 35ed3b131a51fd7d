/* Transpose optimizer: patterns where it used to stop above the exact oracle's optimum (properties/
 * transpose_oracle.c, written from the ONNX op definitions, not from the optimizer's handlers), raise the
 * cost, or edit another EP's node. Each graph is checked for bit-exact outputs (reference executor), for the
 * oracle's optimum, and for the specific shape of the fix. */
#include "tests/pass_test_util.h"
#include "tests/test_util.h"
#include "properties/oracles/transpose_oracle.h"

static const int64_t CL[] = {0, 2, 3, 1}, CF[] = {0, 3, 1, 2};

static pc_node *transpose(pc_model *m, const char *in, const char *out, size_t rank, const int64_t *perm)
{
    pc_error err;
    pc_node *t = pt_node(m, "Transpose", "", in, out, NULL);
    if (pc_node_set_attr_ints(t, "perm", rank, perm, &err) != PC_OK) pt_die("perm", &err);
    return t;
}

/* Runs the optimizer as the pipeline does (shapes first), checks outputs bit-exact against the original and
 * the Transpose count against the exact oracle's proven optimum. Returns the Transposes left. */
static int optimize_checked(pc_model *m, const pc_pass_options *o, const char *what)
{
    pc_error err;
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    pc_model *before = pt_clone(m);
    uint64_t cost0 = pc_graph_transpose_cost(m->graph);
    pt_run_pass(pc_transpose_optimize, m, o);
    char why[PT_WHY_SIZE];
    int eq = pt_equiv(before, m, 7, 0, 0, why, sizeof why);
    CHECK_MSG(eq == 1, "%s: %s", what, why);
    CHECK_MSG(pc_graph_transpose_cost(m->graph) <= cost0, "%s: cost %llu -> %llu", what,
              (unsigned long long)cost0, (unsigned long long)pc_graph_transpose_cost(m->graph));
    pc_tpo_result r;
    CHECK_OK(pc_tpo_solve(m->graph, NULL, &r, &err), &err);
    CHECK_MSG(r.proven && r.transposes <= r.optimum, "%s: %u Transposes left, the oracle needs %u (%s)", what,
              r.transposes, r.optimum, r.assignment ? r.assignment : "");
    pc_tpo_result_free(&r);
    pc_model_free(before);
    return pt_count_op(m, "Transpose");
}

/* NHWC producer -> T -> {graph output, Relu}: the Transpose must stay for the output, so the layout
 * transformer's push through Relu would only add a copy after it (the suite's first shrunk gap). */
static void test_shared_layout_push(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 5, 6, 4});
    transpose(m, "x", "t", 4, CF);
    pt_node(m, "Relu", "", "t", "y", NULL);
    pt_output(m, "t");
    pt_output(m, "y");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    o.layout_cost_check = true;
    CHECK(optimize_checked(m, &o, "shared layout push") == 1);
    pc_model_free(m);
}

/* The layout push through a two-output Split would put a Transpose on each output: 1 -> 2. */
static void test_layout_push_split(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 4, 6, 2});
    transpose(m, "x", "t", 4, CF);
    pc_error err;
    pc_node *s = pt_node(m, "Split", "", "t", "a,b", NULL);
    CHECK_OK(pc_node_set_attr_int(s, "axis", 1, &err), &err);
    pt_output(m, "a");
    pt_output(m, "b");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    o.layout_cost_check = true;
    CHECK(optimize_checked(m, &o, "layout push through Split") == 1);
    pc_model_free(m);
}

/* Concat reads one Transpose twice: cancelling it is one saving, not two (the push raised the cost 4 -> 7).
 */
static void test_concat_same_transpose_twice(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 6, 2, 4});
    pt_input(m, "z", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 2, 4, 1});
    transpose(m, "x", "t", 4, CL);
    pc_error err;
    pc_node *c = pt_node(m, "Concat", "", "t,t,z", "y", NULL);
    CHECK_OK(pc_node_set_attr_int(c, "axis", 3, &err), &err);
    pt_output(m, "y");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK(optimize_checked(m, &o, "Concat(t, t, z)") == 1);
    pc_model_free(m);
}

/* A Transpose of another EP is not this run's: not cancelled through this EP's Relu, not merged into this
 * EP's Transpose (the per-EP run removed it: ep-assignment foreign-ep-modified). */
static void test_foreign_transpose_kept(void)
{
    for (int merge = 0; merge < 2; merge++) {
        pc_model *m = pt_model(13);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 5});
        pc_node *t1 = transpose(m, "x", "t", 4, CL);
        pc_node *t2;
        if (merge) {
            t2 = transpose(m, "t", "y", 4, CF);
            t1->ep = "b";
            t2->ep = "a";
        } else {
            pc_node *r = pt_node(m, "Relu", "", "t", "u", NULL);
            t2 = transpose(m, "u", "y", 4, CF);
            t1->ep = "b";
            r->ep = t2->ep = "a";
        }
        pt_output(m, "y");
        pc_pass_options o = pt_pass_options("transpose_optimize_ep");
        o.provider = "a";
        pc_error err;
        CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
        pt_run_pass(pc_transpose_optimize, m, &o);
        CHECK_MSG(!t1->removed && t1->inputs[0] && strcmp(t1->inputs[0]->name, "x") == 0 &&
                      strcmp(t1->outputs[0]->name, "t") == 0 && t1->outputs[0]->n_consumers > 0,
                  "merge %d: the other EP's Transpose was edited or removed", merge);
        pc_model_free(m);
    }
}

/* A Transpose that moves only size-1 axes is a no-op on the data: removed (both sit in front of pinned ops
 * here, where no push can take them). */
static void test_unit_axes_transpose(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 1, 1});
    pt_node(m, "Sigmoid", "", "x", "s", NULL);
    transpose(m, "s", "t", 4, (const int64_t[]){0, 1, 3, 2});
    pc_error err;
    pc_node *p = pt_node(m, "MaxPool", "", "t", "y", NULL);
    CHECK_OK(pc_node_set_attr_ints(p, "kernel_shape", 2, (const int64_t[]){1, 1}, &err), &err);
    pt_output(m, "y");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK(optimize_checked(m, &o, "size-1 axes") == 0);
    pc_model_free(m);
}

/* x -> T -> out1 and x -> Relu -> T -> out2: moving the second Transpose above Relu shares the first (2 ->
 * 1). */
static void test_pull_up_shares(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){6, 3});
    transpose(m, "x", "out1", 2, (const int64_t[]){1, 0});
    pt_node(m, "Relu", "", "x", "r", NULL);
    transpose(m, "r", "out2", 2, (const int64_t[]){1, 0});
    pt_output(m, "out1");
    pt_output(m, "out2");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK(optimize_checked(m, &o, "pull up") == 1);
    pc_model_free(m);
}

/* A shared Transpose -> Clip -> Relu -> its inverse: Clip is an elementwise link of the cancel credit, so the
 * push through it pays (the Transpose stays for MaxPool; the inverse goes). */
static void test_clip_chain_cancel(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 5, 6, 4});
    transpose(m, "x", "t", 4, CF);
    pt_node(m, "Clip", "", "t", "c", NULL);
    pt_node(m, "Relu", "", "c", "r", NULL);
    transpose(m, "r", "out1", 4, CL);
    pc_error err;
    pc_node *p = pt_node(m, "MaxPool", "", "t", "out2", NULL);
    CHECK_OK(pc_node_set_attr_ints(p, "kernel_shape", 2, (const int64_t[]){1, 1}, &err), &err);
    pt_output(m, "out1");
    pt_output(m, "out2");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK(optimize_checked(m, &o, "Clip chain") == 1);
    pc_model_free(m);
}

/* constant -> Log -> LeakyRelu -> T -> output: the Transpose moves up two levels into the constant (1 -> 0);
 * the first move alone only trades it for a Transpose on Log's output, so it needs the look-ahead. The same
 * through a Pad with constant pads. */
static void test_pull_up_into_constant(void)
{
    static const float cv[] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
    pc_model *m = pt_model(13);
    pt_const_f(m, "c", 3, (int64_t[]){1, 2, 3}, cv);
    pt_node(m, "Log", "", "c", "l", NULL);
    pt_node(m, "LeakyRelu", "", "l", "k", NULL);
    transpose(m, "k", "y", 3, (const int64_t[]){1, 0, 2});
    pt_output(m, "y");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK(optimize_checked(m, &o, "pull up two levels") == 0);
    pc_model_free(m);

    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){5, 1, 4});
    pt_const_f(m, "c", 3, (int64_t[]){1, 2, 3}, cv);
    pt_const_i64(m, "pads", 6, (const int64_t[]){0, 1, 0, 0, 0, 2});
    pt_node(m, "Pad", "", "c,pads", "p", NULL);
    transpose(m, "p", "t", 3, (const int64_t[]){2, 1, 0});
    pt_node(m, "MatMul", "", "t,x", "y", NULL);
    pt_output(m, "y");
    CHECK(optimize_checked(m, &o, "pull up through Pad") == 0);
    pc_model_free(m);
}

/* T -> Pad -> Add(., z of lower rank) -> T2: the push through Pad counts its output Transpose as free (it
 * flows into T2); the move up must not take it back, or the two alternate forever (the optimizer was not
 * idempotent: a second run changed the graph again). */
static void test_no_push_pull_cycle(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 2, 1});
    pt_input(m, "z", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    transpose(m, "x", "t", 4, CF);
    pt_const_i64(m, "pads", 8, (const int64_t[]){0, 0, 0, 0, 0, 0, 1, 1});
    pt_node(m, "Pad", "", "t,pads", "p", NULL);
    pt_node(m, "Add", "", "p,z", "a", NULL);
    pt_node(m, "Transpose", "", "a", "y", NULL);
    pt_output(m, "y");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    optimize_checked(m, &o, "push/pull cycle");
    pc_error err;
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    CHECK_MSG(!pt_run_pass(pc_transpose_optimize, m, &o), "a second run changed the graph: %s", pt_log.last);
    pc_model_free(m);
}

/* x [2,1,1,1] -> T -> Squeeze (no axes) -> y [2]: the Squeeze drops every size-1 axis of the transposed
 * value, and its squeezed output perm is the identity, so the push removes the Transpose (1 -> 0). The
 * dropped axes came only from an axes list: with none the push looked like it needed a Transpose after. */
static void test_squeeze_all_after_transpose(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 1, 1, 1});
    transpose(m, "x", "t", 4, (const int64_t[]){3, 2, 1, 0});
    pt_node(m, "Squeeze", "", "t", "y", NULL);
    pt_output(m, "y");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK(optimize_checked(m, &o, "Squeeze without axes") == 0);
    pc_model_free(m);
}

/* x -> T -> out1 and x -> T -> out2 (same perm): both values are graph outputs, so neither Transpose could be
 * dropped for the other; the second becomes Identity(out1) (2 -> 1). */
static void test_twin_graph_outputs(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    transpose(m, "x", "out1", 2, (const int64_t[]){1, 0});
    transpose(m, "x", "out2", 2, (const int64_t[]){1, 0});
    pt_output(m, "out1");
    pt_output(m, "out2");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK(optimize_checked(m, &o, "twin graph outputs") == 1);
    pc_model_free(m);
}

/* Two consumers of x each end in the same Transpose: x -> Slice -> T -> out1, x -> Add(., c) -> T -> out2.
 * Moving one Transpose above its node alone only trades it for one on x; the sibling's move then shares
 * that one (2 -> 1). Also x -> Div(., c) = d, Mul(x, d) -> T -> out1, d -> T -> out2 (the sibling is the
 * other input's Transpose: 2 -> 1), and x -> T -> Slice -> out1, x -> Concat(x, c) -> T -> out2 (the push
 * through Slice first; 2 -> 1). */
static void test_sibling_pull_up(void)
{
    static const float cv[] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f};
    const int64_t p3[] = {0, 2, 1};
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){1, 3, 4});
    pt_const_i64(m, "starts", 1, (const int64_t[]){1});
    pt_const_i64(m, "ends", 1, (const int64_t[]){3});
    pt_const_i64(m, "axes", 1, (const int64_t[]){1});
    pt_const_f(m, "c", 0, NULL, cv);
    pt_node(m, "Slice", "", "x,starts,ends,axes", "s", NULL);
    transpose(m, "s", "out1", 3, p3);
    pt_node(m, "Add", "", "x,c", "a", NULL);
    transpose(m, "a", "out2", 3, p3);
    pt_output(m, "out1");
    pt_output(m, "out2");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK(optimize_checked(m, &o, "sibling pull up") == 1);
    pc_model_free(m);

    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 2, 2});
    pt_const_f(m, "c", 0, NULL, cv);
    pt_node(m, "Div", "", "x,c", "d", NULL);
    pt_node(m, "Mul", "", "x,d", "u", NULL);
    transpose(m, "u", "out1", 4, CL);
    transpose(m, "d", "out2", 4, CL);
    pt_output(m, "out1");
    pt_output(m, "out2");
    CHECK(optimize_checked(m, &o, "sibling pull up through Div") == 1);
    pc_model_free(m);

    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 2, 2});
    pt_const_f(m, "k", 4, (int64_t[]){1, 1, 2, 1}, cv);
    pt_const_i64(m, "starts", 1, (const int64_t[]){0});
    pt_const_i64(m, "ends", 1, (const int64_t[]){1});
    pt_const_i64(m, "axes", 1, (const int64_t[]){0});
    transpose(m, "x", "t", 4, (const int64_t[]){3, 2, 1, 0});
    pt_node(m, "Slice", "", "t,starts,ends,axes", "out1", NULL);
    pc_error err;
    pc_node *cat = pt_node(m, "Concat", "", "x,k", "cat", NULL);
    CHECK_OK(pc_node_set_attr_int(cat, "axis", 3, &err), &err);
    transpose(m, "cat", "out2", 4, (const int64_t[]){3, 2, 1, 0});
    pt_output(m, "out1");
    pt_output(m, "out2");
    CHECK(optimize_checked(m, &o, "sibling pull up after a push") == 1);
    pc_model_free(m);
}

/* x [1,1,1,2] -> T -> Relu -> Sub(., z) -> Squeeze: the Squeeze takes the Transpose with nothing after it
 * (its squeezed perm is the identity), but only a look-ahead past Relu and Sub sees that: each push alone
 * trades the Transpose for one after the op (1 -> 0). */
static void test_push_into_squeeze(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 1, 2});
    pt_input(m, "z", PC_DTYPE_FLOAT, 1, (int64_t[]){1});
    transpose(m, "x", "t", 4, (const int64_t[]){0, 1, 3, 2});
    pt_node(m, "Relu", "", "t", "r", NULL);
    pt_node(m, "Sub", "", "r,z", "s", NULL);
    pt_node(m, "Squeeze", "", "s", "y", NULL);
    pt_output(m, "y");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK(optimize_checked(m, &o, "T -> Relu -> Sub -> Squeeze") == 0);
    pc_model_free(m);

    /* with axes: x [3,1,4] -> T[1,0,2] -> Neg -> Squeeze(axes 0) */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){3, 1, 4});
    pt_const_i64(m, "axes", 1, (const int64_t[]){0});
    transpose(m, "x", "t", 3, (const int64_t[]){1, 0, 2});
    pt_node(m, "Neg", "", "t", "r", NULL);
    pt_node(m, "Squeeze", "", "r,axes", "y", NULL);
    pt_output(m, "y");
    CHECK(optimize_checked(m, &o, "T -> Neg -> Squeeze(axes)") == 0);
    pc_model_free(m);

    /* Concat(x, c) -> T -> Squeeze: the move up above Concat (T folds into c, one on x) must not come first
     */
    static const float cv[] = {0.5f, 1.5f};
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 2, 1});
    pt_const_f(m, "c", 4, (int64_t[]){1, 1, 2, 1}, cv);
    pc_error err;
    pc_node *cat = pt_node(m, "Concat", "", "x,c", "cat", NULL);
    CHECK_OK(pc_node_set_attr_int(cat, "axis", 3, &err), &err);
    transpose(m, "cat", "t", 4, (const int64_t[]){0, 2, 1, 3});
    pt_node(m, "Squeeze", "", "t", "y", NULL);
    pt_output(m, "y");
    CHECK(optimize_checked(m, &o, "Concat -> T -> Squeeze") == 0);
    pc_model_free(m);

    /* x -> T1 -> Concat(., c) -> T2 -> Squeeze: T1's push through Concat lets both go into the Squeeze; the
     * move of T2 above Concat (merging with T1) must not come first either */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 1, 2});
    pt_const_f(m, "c", 4, (int64_t[]){2, 1, 1, 1}, cv);
    transpose(m, "x", "t1", 4, (const int64_t[]){3, 2, 1, 0});
    cat = pt_node(m, "Concat", "", "t1,c", "cat", NULL);
    CHECK_OK(pc_node_set_attr_int(cat, "axis", 3, &err), &err);
    transpose(m, "cat", "t2", 4, (const int64_t[]){2, 3, 0, 1});
    pt_node(m, "Squeeze", "", "t2", "y", NULL);
    pt_output(m, "y");
    CHECK(optimize_checked(m, &o, "T -> Concat -> T -> Squeeze") == 0);
    pc_model_free(m);
}

static void test_twin_unit_axes(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){2, 1, 3});
    transpose(m, "x", "out1", 3, (const int64_t[]){2, 1, 0});
    transpose(m, "x", "out2", 3, (const int64_t[]){2, 0, 1});
    pt_output(m, "out1");
    pt_output(m, "out2");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK(optimize_checked(m, &o, "twin Transposes up to a size-1 axis") == 1);
    pc_model_free(m);
}

/* Split(c) -> {unused, s1 -> T -> y}: the Transpose moves above the Split (its other output is unused, so it
 * gets none) and folds into the constant (1 -> 0). Before, the move up took one-output ops only, and a push
 * through Split put a dead Transpose on an unused output. */
static void test_pull_up_split(void)
{
    static const float cv[] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
    pc_model *m = pt_model(13);
    pt_const_f(m, "c", 3, (int64_t[]){1, 2, 3}, cv);
    pt_const_i64(m, "split", 2, (const int64_t[]){1, 1});
    pc_error err;
    pc_node *sp = pt_node(m, "Split", "", "c,split", "s0,s1", NULL);
    CHECK_OK(pc_node_set_attr_int(sp, "axis", 1, &err), &err);
    transpose(m, "s1", "y", 3, (const int64_t[]){2, 0, 1});
    pt_output(m, "y");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK(optimize_checked(m, &o, "Split -> T") == 0);
    pc_model_free(m);
}

/* x[1,2,1,3] -> Split(axis 3) -> {s0[1,2,1,1] -> T(0,3,2,1) -> y0, s1 -> T(0,2,3,1) -> y1} (from the suite's
 * nhwc shrink of a Split pushed for size, whose Transposes differ there). s0's Transpose to [1,1,1,2] moves
 * only size-1 dims (no data): it ends as a Reshape, one Transpose left (2 before). */
static void test_split_unit_output_reshape(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 1, 3});
    pt_const_i64(m, "split", 2, (const int64_t[]){1, 2});
    pc_error err;
    pc_node *sp = pt_node(m, "Split", "", "x,split", "s0,s1", NULL);
    CHECK_OK(pc_node_set_attr_int(sp, "axis", 3, &err), &err);
    transpose(m, "s0", "y0", 4, (const int64_t[]){0, 3, 2, 1});
    transpose(m, "s1", "y1", 4, (const int64_t[]){0, 2, 3, 1});
    pt_output(m, "y0");
    pt_output(m, "y1");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK(optimize_checked(m, &o, "Split -> {T, T} with a size-1 output") == 1);
    CHECK(pt_count_op(m, "Reshape") == 1);
    pc_model_free(m);
}

/* x[1,2,2,3] -> Split(axis 3) -> {s0 -> T -> y0, s1 -> T -> y1}, both T(0,3,2,1) moving data (the suite's
 * nhwc shrink once size-1 Transposes became Reshapes: the second feeds an NHWC Conv there). One Transpose
 * above the Split replaces both (2 -> 1); the move up took a Split only when its other outputs were unused.
 */
static void test_pull_up_split_twins(void)
{
    for (int three = 0; three < 2; three++) {
        pc_model *m = pt_model(13);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 2, 4});
        if (three)
            pt_const_i64(m, "split", 3, (const int64_t[]){1, 2, 1});
        else
            pt_const_i64(m, "split", 2, (const int64_t[]){1, 3});
        pc_error err;
        pc_node *sp = pt_node(m, "Split", "", "x,split", three ? "s0,s1,s2" : "s0,s1", NULL);
        CHECK_OK(pc_node_set_attr_int(sp, "axis", 3, &err), &err);
        transpose(m, "s0", "y0", 4, (const int64_t[]){0, 3, 2, 1});
        transpose(m, "s1", "y1", 4, (const int64_t[]){0, 3, 2, 1});
        pt_output(m, "y0");
        pt_output(m, "y1");
        if (three) {
            transpose(m, "s2", "y2", 4, (const int64_t[]){0, 3, 2, 1});
            pt_output(m, "y2");
        }
        pc_pass_options o = pt_pass_options("transpose_optimize");
        CHECK_MSG(optimize_checked(m, &o, "Split -> {T, T}") == 1, "%d outputs", 2 + three);
        pc_model_free(m);
    }
}

/* c[1,2,1,2] -> ReduceMean(axes 2, keepdims) -> T -> y (suite seed 2, eps): a keepdims Reduce writes its
 * output in the pushed perm, so the Transpose moves above it and folds into c (1 -> 0; the move up skipped
 * every op with a rank-reducing form). Also ReduceSum with an axes input (opset 13). */
static void test_pull_up_reduce_keepdims(void)
{
    static const float cv[] = {0.75f, -0.125f, -0.5f, 1.5f};
    for (int sum = 0; sum < 2; sum++) {
        pc_model *m = pt_model(13);
        pt_const_f(m, "c", 4, (int64_t[]){1, 2, 1, 2}, cv);
        pc_node *r;
        if (sum) {
            pt_const_i64(m, "axes", 1, (const int64_t[]){2});
            r = pt_node(m, "ReduceSum", "", "c,axes", "u", NULL);
        } else {
            pc_error err;
            r = pt_node(m, "ReduceMean", "", "c", "u", NULL);
            CHECK_OK(pc_node_set_attr_ints(r, "axes", 1, (const int64_t[]){2}, &err), &err);
        }
        transpose(m, "u", "y", 4, CF);
        pt_output(m, "y");
        pc_pass_options o = pt_pass_options("transpose_optimize");
        CHECK_MSG(optimize_checked(m, &o, "Reduce(c) -> T") == 0, "%s", r->op_type);
        pc_model_free(m);
    }
}

/* x -> Split(axis 3) -> {s0 -> T -> y0, s1 -> Relu -> T -> y1} (suite seed 1 case 240, nhwc, after the twin
 * move): moving the second T above Relu alone only trades places; the look-ahead credits its next move above
 * the Split with s0's twin, so both go and one Transpose is left above the Split (2 -> 1). */
static void test_pull_up_split_twin_chain(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 2, 4});
    pt_const_i64(m, "split", 2, (const int64_t[]){1, 3});
    pc_error err;
    pc_node *sp = pt_node(m, "Split", "", "x,split", "s0,s1", NULL);
    CHECK_OK(pc_node_set_attr_int(sp, "axis", 3, &err), &err);
    transpose(m, "s0", "y0", 4, (const int64_t[]){0, 3, 2, 1});
    pt_node(m, "Relu", "", "s1", "r", NULL);
    transpose(m, "r", "y1", 4, (const int64_t[]){0, 3, 2, 1});
    pt_output(m, "y0");
    pt_output(m, "y1");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK(optimize_checked(m, &o, "Split -> {T, Relu -> T}") == 1);
    pc_model_free(m);
}

/* x -> T -> Relu -> ReduceMean(all axes) -> y (suite seed 1 case 1407, eps): a reduce-all takes any Transpose
 * with nothing after it, so the push through Relu is worth it (it alone traded the Transpose for one after
 * Relu): 1 -> 0. keepdims 1 and 0. */
static void test_push_into_reduce_all(void)
{
    for (int keep = 0; keep < 2; keep++) {
        pc_model *m = pt_model(13);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 4});
        transpose(m, "x", "t", 4, CL);
        pt_node(m, "Relu", "", "t", "r", NULL);
        pc_node *red = pt_node(m, "ReduceMean", "", "r", "y", NULL);
        pc_error err;
        CHECK_OK(pc_node_set_attr_int(red, "keepdims", keep, &err), &err);
        pt_output(m, "y");
        pc_pass_options o = pt_pass_options("transpose_optimize");
        CHECK_MSG(optimize_checked(m, &o, "T -> Relu -> ReduceMean(all)") == 0, "keepdims %d", keep);
        pc_model_free(m);
    }
}

/* x -> T -> {Relu -> T2 -> y1, ReduceMean(all) -> y2} (suite seed 1 case 1407, eps: T is the NHWC Conv's
 * output wrapper): each push alone keeps the shared T (the Relu push only trades it for one merged into T2),
 * so both waited. The push into the reduce-all is free (it reads x, nothing after it) and leaves T to the
 * Relu, whose push then removes it: 2 -> 1. Also with a Squeeze whose squeezed perm is the identity. */
static void test_shared_into_reduce_all(void)
{
    for (int squeeze = 0; squeeze < 2; squeeze++) {
        pc_model *m = pt_model(13);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, squeeze ? 1 : 2, 3, 4});
        transpose(m, "x", "t", 4, CL);
        pt_node(m, "Relu", "", "t", "r", NULL);
        transpose(m, "r", "y1", 4, (const int64_t[]){0, 2, 1, 3});
        if (squeeze) {
            /* t [1,3,4,1]: dropping its axis 3 (x's size-1 axis 1) leaves x's other axes in order */
            pt_const_i64(m, "axes", 1, (const int64_t[]){3});
            pt_node(m, "Squeeze", "", "t,axes", "y2", NULL);
        } else {
            pt_node(m, "ReduceMean", "", "t", "y2", NULL);
        }
        pt_output(m, "y1");
        pt_output(m, "y2");
        pc_pass_options o = pt_pass_options("transpose_optimize");
        int left =
            optimize_checked(m, &o, squeeze ? "T -> {Relu -> T2, Squeeze}" : "T -> {Relu -> T2, ReduceMean}");
        CHECK_MSG(left == 1, "%d Transposes", left);
        pc_model_free(m);
    }
}

/* x -> T -> {Clip -> c, Add(c, t)} -> T2 -> y (suite seed 2 case 2974, annotated: T the NHWC Conv's output
 * wrapper): the shared T has to go through Add and Clip together (each push alone keeps it and adds one).
 * The push through Add counts Clip's output free (t's push through Clip cancels the Transpose it gets) and t
 * as gone: 2 -> 1. Also with Relu (all inputs carry) and Mul(t, constant) as the chain. */
static void test_group_push(void)
{
    static const char *const chains[] = {"Clip", "Relu", "Mul"};
    for (int k = 0; k < 3; k++) {
        pc_model *m = pt_model(13);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 4});
        transpose(m, "x", "t", 4, CL);
        if (k == 2) {
            static const float cv[] = {0.5f, -1.0f};
            pt_const_f(m, "k", 1, (int64_t[]){2}, cv);
            pt_node(m, "Mul", "", "t,k", "c", NULL);
        } else {
            pt_node(m, chains[k], "", "t", "c", NULL);
        }
        pt_node(m, "Add", "", "c,t", "a", NULL);
        transpose(m, "a", "y", 4, (const int64_t[]){3, 2, 1, 0});
        pt_output(m, "y");
        pc_pass_options o = pt_pass_options("transpose_optimize");
        CHECK_MSG(optimize_checked(m, &o, "T -> {chain -> Add, Add} -> T2") == 1, "%s", chains[k]);
        pc_model_free(m);
    }
}

/* x[1,1,2,2] -> T -> Concat(t, t) -> {output c, T^-1 -> u} (suite seed 1 case 4822, nhwc: T^-1 is the NHWC
 * GlobalAveragePool's input wrapper): pushing T through Concat leaves one Transpose for the output c and
 * removes T^-1 (2 -> 1); the same when c is read by another op instead of being a graph output. The cancel
 * credit took elementwise ops only, and the output (larger than the pushed Transpose) was costed as a new
 * one. */
static void test_push_concat_cancel(void)
{
    /* shared: c is no graph output but also read by a Relu (suite seed 1 case 4822 after the first fix) */
    for (int shared = 0; shared < 2; shared++) {
        pc_model *m = pt_model(13);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 2, 2});
        transpose(m, "x", "t", 4, CF);
        pc_error err;
        pc_node *c = pt_node(m, "Concat", "", "t,t", "c", NULL);
        CHECK_OK(pc_node_set_attr_int(c, "axis", 0, &err), &err);
        transpose(m, "c", "u", 4, CL);
        pt_node(m, "Relu", "", "u", "y", NULL);
        if (shared) {
            pt_node(m, "Relu", "", "c", "y2", NULL);
            pt_output(m, "y2");
        } else {
            pt_output(m, "c");
        }
        pt_output(m, "y");
        pc_pass_options o = pt_pass_options("transpose_optimize");
        CHECK_MSG(optimize_checked(m, &o, "T -> Concat(t, t) -> {c, T^-1}") == 1, "shared %d", shared);
        pc_model_free(m);
    }
}

/* x -> {T -> y0, Add(x, c) -> a -> {ReduceMean(all, keepdims 0) -> y1, T -> y2}} (suite seed 1 case 27816,
 * cpu): the second T moves above Add (reusing the first as its input) although a reduce-all also reads a: it
 * takes any layout, so it reads Add's output as it comes (2 -> 1). The move up wanted the Transpose to be the
 * only reader. */
static void test_pull_up_past_reduce_all(void)
{
    static const float cv[] = {0.75f};
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 4});
    pt_const_f(m, "c", 0, NULL, cv);
    transpose(m, "x", "y0", 4, CF);
    pt_node(m, "Add", "", "x,c", "a", NULL);
    pc_error err;
    pc_node *red = pt_node(m, "ReduceMean", "", "a", "y1", NULL);
    CHECK_OK(pc_node_set_attr_int(red, "keepdims", 0, &err), &err);
    transpose(m, "a", "y2", 4, CF);
    pt_output(m, "y0");
    pt_output(m, "y1");
    pt_output(m, "y2");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK(optimize_checked(m, &o, "x -> {T, Add -> {ReduceMean(all), T}}") == 1);
    pc_model_free(m);
}

/* EP a's x[2,3,2] -> T -> Split -> {s0 -> output, s1 -> T2 of EP b} in a's run (suite seed 4 case 1915, eps):
 * the push through the Split counted s1's Transpose free because it flows into T2, but T2 is b's and cannot
 * merge: 2 -> 3 Transposes. Now it stays. */
static void test_no_push_into_foreign_transpose(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 2});
    pt_const_i64(m, "split", 2, (const int64_t[]){1, 2});
    pc_node *t1 = transpose(m, "x", "t", 3, (const int64_t[]){2, 1, 0});
    pc_error err;
    pc_node *sp = pt_node(m, "Split", "", "t,split", "s0,s1", NULL);
    CHECK_OK(pc_node_set_attr_int(sp, "axis", 1, &err), &err);
    pc_node *t2 = transpose(m, "s1", "y", 3, (const int64_t[]){0, 2, 1});
    pt_output(m, "s0");
    pt_output(m, "y");
    t1->ep = sp->ep = "a";
    t2->ep = "b";
    pc_pass_options o = pt_pass_options("transpose_optimize_ep");
    o.provider = "a";
    CHECK_MSG(optimize_checked(m, &o, "T -> Split -> {out, T2 of another EP}") == 2, "%d Transposes",
              pt_count_op(m, "Transpose"));
    pc_model_free(m);
}

/* EP a runs Transpose and Relu but no Identity (the 30-minute fuzz run's ep-assignment@transpose_optimize_ep/
 * unclaimed, corpus/pipeline/finding-identity-unclaimed-c6070da7). Where a graph output's name needs a copy,
 * a's run keeps it in a Transpose with the identity perm instead of an Identity a cannot run:
 *  - x -> T1 (b) -> t -> {T2 = T1^-1 (a) -> y, Relu (b) -> z}: T2 reads x as the identity, b's T1 stays;
 *  - twin Transposes of x on a, both graph outputs: both stay;
 *  - x -> Relu (a) -> v -> T -> T^-1 -> y, all on a: the name goes to the Relu, no copy at all.
 * The leftover check and the exact oracle, told a's op list, accept the copy; told nothing, the leftover
 * check still reports it. */
static void test_copy_without_identity(void)
{
    pc_error err;
    pc_ep_registry *reg = NULL;
    CHECK_OK(pc_ep_registry_create(&reg, &err), &err);
    CHECK_OK(pc_ep_registry_load_text(
                 reg,
                 "ep a transpose=yes\nop Transpose\nop Relu\nep b transpose=yes\nop Transpose\nop Relu\n",
                 "no-identity.ep", &err),
             &err);
    const pc_ep *eps[2] = {pc_ep_registry_find(reg, "a"), pc_ep_registry_find(reg, "b")};
    CHECK(eps[0] && eps[1]);
    pc_tpo_options topts = {.eps = eps, .n_eps = 2};
    for (int shape = 0; shape < 3; shape++) {
        pc_model *m = pt_model(13);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 5});
        if (shape == 0) {
            transpose(m, "x", "t", 4, CL)->ep = "b";
            transpose(m, "t", "y", 4, CF)->ep = "a";
            pt_node(m, "Relu", "", "t", "z", NULL)->ep = "b";
            pt_output(m, "y");
            pt_output(m, "z");
        } else if (shape == 1) {
            transpose(m, "x", "y", 4, CL)->ep = "a";
            transpose(m, "x", "z", 4, CL)->ep = "a";
            pt_output(m, "y");
            pt_output(m, "z");
        } else {
            pt_node(m, "Relu", "", "x", "v", NULL)->ep = "a";
            transpose(m, "v", "t", 4, CL)->ep = "a";
            transpose(m, "t", "y", 4, CF)->ep = "a";
            pt_output(m, "y");
        }
        CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
        pc_model *before = pt_clone(m);
        pc_pass_options o = pt_pass_options("transpose_optimize_ep");
        o.provider = "a";
        o.ep = eps[0];
        pt_run_pass(pc_transpose_optimize, m, &o);
        char why[PT_WHY_SIZE];
        CHECK_MSG(pt_equiv(before, m, 7, 0, 0, why, sizeof why) == 1, "shape %d: %s", shape, why);
        for (pc_node *n = m->graph->first; n; n = n->next)
            CHECK_MSG(!n->ep || pc_ep_claims_node(pc_ep_registry_find(reg, n->ep), n, why, sizeof why),
                      "shape %d: node '%s' (%s) on EP %s: %s", shape, n->name, n->op_type, n->ep, why);
        static const int want[] = {2, 2, 0};
        CHECK_MSG(pt_count_op(m, "Transpose") == want[shape], "shape %d: %d Transposes", shape,
                  pt_count_op(m, "Transpose"));
        char left[512] = "";
        CHECK_MSG(!pc_tpo_leftover_find(m->graph, &topts, left, sizeof left), "shape %d: %s", shape, left);
        if (shape == 0)
            CHECK_MSG(pc_tpo_leftover_find(m->graph, NULL, left, sizeof left),
                      "the identity Transpose is a leftover where Identity may run");
        pc_tpo_result r;
        CHECK_OK(pc_tpo_solve(m->graph, &topts, &r, &err), &err);
        CHECK_MSG(r.proven && r.transposes <= r.optimum,
                  "shape %d: %u Transposes left, the oracle needs %u (%s)", shape, r.transposes, r.optimum,
                  r.assignment ? r.assignment : "");
        pc_tpo_result_free(&r);
        pc_model_free(before);
        pc_model_free(m);
    }
    pc_ep_registry_free(reg);
}

/* x -> T -> Split -> {s0 output, s1 -> T^-1 -> Relu} (suite seed 1 case 22530, annotated: T^-1 the NHWC
 * Conv's input wrapper): the push through Split keeps one Transpose for s0 and cancels T^-1 (2 -> 1); s1's
 * Transpose was counted free ("it will merge") instead of as removing one, so the push came out even. */
static void test_push_split_cancel(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 4});
    pt_const_i64(m, "split", 2, (const int64_t[]){2, 2});
    transpose(m, "x", "t", 4, CF);
    pc_error err;
    pc_node *sp = pt_node(m, "Split", "", "t,split", "s0,s1", NULL);
    CHECK_OK(pc_node_set_attr_int(sp, "axis", 1, &err), &err);
    transpose(m, "s1", "u", 4, CL);
    pt_node(m, "Relu", "", "u", "y", NULL);
    pt_output(m, "s0");
    pt_output(m, "y");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK(optimize_checked(m, &o, "T -> Split -> {out, T^-1}") == 1);
    pc_model_free(m);
}

/* The same through an elementwise chain (tests/nhwc-models split_outputs, where ONNX Runtime leaves 3 and the
 * optimizer had come to leave 4): T -> Split -> {s0 -> Add -> out, s1 -> Relu -> T^-1 -> out}. Pushing T
 * through the Split costs one Transpose on s0 and one on s1 that travels through the Relu and cancels T^-1: 2
 * -> 1. */
static void test_push_split_chain_cancel(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 4});
    pt_const_i64(m, "split", 2, (const int64_t[]){2, 2});
    pt_const_f(m, "c", 1, (int64_t[]){1}, (const float[]){0.5f});
    transpose(m, "x", "t", 4, CF);
    pc_error err;
    pc_node *sp = pt_node(m, "Split", "", "t,split", "s0,s1", NULL);
    CHECK_OK(pc_node_set_attr_int(sp, "axis", 1, &err), &err);
    pt_node(m, "Add", "", "s0,c", "y0", NULL);
    pt_node(m, "Relu", "", "s1", "r", NULL);
    transpose(m, "r", "y1", 4, CL);
    pt_output(m, "y0");
    pt_output(m, "y1");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK(optimize_checked(m, &o, "T -> Split -> {Add -> out, Relu -> T^-1}") == 1);
    pc_model_free(m);
}

/* c -> Relu -> r -> {T(CL) -> y0, Add(r, k) -> T2 -> y1} (suite seed 1 case 16693, cpu): moving T above the
 * Relu folds it into c; the Add then reads T^-1 of the Relu's output, which goes through the Add and merges
 * into T2: 2 -> 1. The move up wanted T to be the Relu's only reader. */
static void test_pull_up_merging_reader(void)
{
    static const float cv[] = {0.5f, -1.f, 2.f, -0.25f, 3.f, 0.f, -2.f, 1.5f, -0.5f, 0.25f, 4.f, -3.f};
    static const float kv[] = {-0.75f};
    static const int64_t p2[] = {0, 3, 2, 1};
    pc_model *m = pt_model(13);
    pt_const_f(m, "c", 4, (const int64_t[]){1, 2, 2, 3}, cv);
    pt_const_f(m, "k", 0, NULL, kv);
    pt_node(m, "Relu", "", "c", "r", NULL);
    transpose(m, "r", "y0", 4, CL);
    pt_node(m, "Add", "", "r,k", "a", NULL);
    transpose(m, "a", "y1", 4, p2);
    pt_output(m, "y0");
    pt_output(m, "y1");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK_MSG(optimize_checked(m, &o, "c -> Relu -> {T -> y0, Add -> T2 -> y1}") == 1, "%d Transposes",
              pt_count_op(m, "Transpose"));
    pc_model_free(m);
}

/* x -> T -> y -> {Relu -> r, Add(r, y) -> output}, r -> T^-1 -> y1 (suite seed 1 case 18236, annotated: T the
 * NHWC Conv's output wrapper, T^-1 the next Conv's input one): pushed through the Add and then the Relu, T
 * goes and T^-1 cancels, one Transpose stays for the Add's output: 2 -> 1. The group push wanted the Relu's
 * output read only by the Add. */
static void test_group_push_cancel_reader(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 2});
    transpose(m, "x", "y", 4, CF);
    pt_node(m, "Relu", "", "y", "r", NULL);
    pt_node(m, "Add", "", "r,y", "a", NULL);
    transpose(m, "r", "y1", 4, CL);
    pt_output(m, "a");
    pt_output(m, "y1");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK_MSG(optimize_checked(m, &o, "T -> {Relu -> {Add, T^-1}, Add}") == 1, "%d Transposes",
              pt_count_op(m, "Transpose"));
    pc_model_free(m);
}

/* x -> {T -> y0, Add(x, c) -> a -> {ReduceMean(axes 1,2; keepdims 0) -> y1, T -> y2}} (suite seed 1 case
 * 27816, cpu): the second T moves above the Add reusing the first; the ReduceMean then reads T^-1 of the
 * Add's output, which it absorbs (its squeezed perm is the identity): 2 -> 1. The move up wanted the
 * ReduceMean to take any layout. */
static void test_pull_up_absorbing_reader(void)
{
    static const float cv[] = {0.75f};
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 4});
    pt_const_f(m, "c", 0, NULL, cv);
    transpose(m, "x", "y0", 4, CF);
    pt_node(m, "Add", "", "x,c", "a", NULL);
    pc_error err;
    pc_node *red = pt_node(m, "ReduceMean", "", "a", "y1", NULL);
    CHECK_OK(pc_node_set_attr_int(red, "keepdims", 0, &err), &err);
    CHECK_OK(pc_node_set_attr_ints(red, "axes", 2, (const int64_t[]){1, 2}, &err), &err);
    transpose(m, "a", "y2", 4, CF);
    pt_output(m, "y0");
    pt_output(m, "y1");
    pt_output(m, "y2");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK_MSG(optimize_checked(m, &o, "x -> {T, Add -> {ReduceMean(1,2), T}}") == 1, "%d Transposes",
              pt_count_op(m, "Transpose"));
    pc_model_free(m);
}

/* c -> Pad -> Add(., k) -> a -> {ReduceMean(axes 1,2; keepdims 0) -> y1, T -> y2} (suite seed 1 case 27816,
 * the full case's second shrink): T moves above the Add and on above the Pad into c, the ReduceMean absorbs
 * the T^-1 left for it: 1 -> 0. Moved above the Add alone, the Transpose left on the Pad's output was pushed
 * back through the Add (merging into the T^-1) round after round. */
static void test_pull_up_absorbing_reader_fold(void)
{
    static const float cv[] = {0.5f, -1.f, 2.f, -0.25f, 3.f, 0.f, -2.f, 1.5f, -0.5f, 0.25f, 4.f, -3.f};
    static const float kv[] = {0.75f};
    pc_model *m = pt_model(13);
    pt_const_f(m, "c", 4, (const int64_t[]){1, 2, 3, 2}, cv);
    pt_const_i64(m, "pads", 8, (const int64_t[]){0, 0, 1, 0, 0, 1, 0, 0});
    pt_const_f(m, "k", 0, NULL, kv);
    pt_node(m, "Pad", "", "c,pads", "p", NULL);
    pt_node(m, "Add", "", "p,k", "a", NULL);
    pc_error err;
    pc_node *red = pt_node(m, "ReduceMean", "", "a", "y1", NULL);
    CHECK_OK(pc_node_set_attr_int(red, "keepdims", 0, &err), &err);
    CHECK_OK(pc_node_set_attr_ints(red, "axes", 2, (const int64_t[]){1, 2}, &err), &err);
    transpose(m, "a", "y2", 4, CF);
    pt_output(m, "y1");
    pt_output(m, "y2");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK_MSG(optimize_checked(m, &o, "c -> Pad -> Add -> {ReduceMean(1,2), T}") == 0, "%d Transposes",
              pt_count_op(m, "Transpose"));
    pc_model_free(m);
}

/* x -> {T -> y0, Pad -> Add(., k) -> {ReduceMean(axes 1,2; keepdims 0), T -> y2}} (suite seed 1 case 27816's
 * third shrink): the second T moves above the Add and on above the Pad, reusing the first: 2 -> 1. */
static void test_pull_up_absorbing_reader_sibling(void)
{
    static const float kv[] = {0.75f};
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 2});
    pt_const_i64(m, "pads", 8, (const int64_t[]){0, 0, 1, 0, 0, 1, 0, 0});
    pt_const_f(m, "k", 0, NULL, kv);
    transpose(m, "x", "y0", 4, CF);
    pt_node(m, "Pad", "", "x,pads", "p", NULL);
    pt_node(m, "Add", "", "p,k", "a", NULL);
    pc_error err;
    pc_node *red = pt_node(m, "ReduceMean", "", "a", "y1", NULL);
    CHECK_OK(pc_node_set_attr_int(red, "keepdims", 0, &err), &err);
    CHECK_OK(pc_node_set_attr_ints(red, "axes", 2, (const int64_t[]){1, 2}, &err), &err);
    transpose(m, "a", "y2", 4, CF);
    pt_output(m, "y0");
    pt_output(m, "y1");
    pt_output(m, "y2");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK_MSG(optimize_checked(m, &o, "x -> {T, Pad -> Add -> {ReduceMean(1,2), T}}") == 1, "%d Transposes",
              pt_count_op(m, "Transpose"));
    pc_model_free(m);
}

/* x -> {T -> y0, Add(x, k) -> {ReduceMean(axes 1,2; keepdims 0), Relu -> T -> y2}} (suite seed 1 case 27816's
 * fourth shrink): the second T moves above the Relu because the look-ahead counts its move on above the Add
 * (whose ReduceMean absorbs the T^-1 left for it) reusing the first: 2 -> 1. */
static void test_pull_up_lookahead_merging(void)
{
    static const float kv[] = {0.75f};
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 2});
    pt_const_f(m, "k", 0, NULL, kv);
    transpose(m, "x", "y0", 4, CF);
    pt_node(m, "Add", "", "x,k", "a", NULL);
    pc_error err;
    pc_node *red = pt_node(m, "ReduceMean", "", "a", "y1", NULL);
    CHECK_OK(pc_node_set_attr_int(red, "keepdims", 0, &err), &err);
    CHECK_OK(pc_node_set_attr_ints(red, "axes", 2, (const int64_t[]){1, 2}, &err), &err);
    pt_node(m, "Relu", "", "a", "r", NULL);
    transpose(m, "r", "y2", 4, CF);
    pt_output(m, "y0");
    pt_output(m, "y1");
    pt_output(m, "y2");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK_MSG(optimize_checked(m, &o, "x -> {T, Add -> {ReduceMean(1,2), Relu -> T}}") == 1, "%d Transposes",
              pt_count_op(m, "Transpose"));
    pc_model_free(m);
}

/* x -> T -> Mul(., Erf(c)) -> m -> {output, T^-1 -> y1} (suite seed 1 case 19660, annotated: T the NHWC
 * BatchNormalization's output wrapper, T^-1 the Conv's input one): pushed through the Mul, T goes, T^-1
 * cancels (m keeps one Transpose as a graph output) and the Transpose on Erf's output moves above it into c:
 * 2 -> 1. The push counted a new Transpose for Erf(c) and no credit for T^-1 (m is a graph output). */
static void test_push_elementwise_output_cancel(void)
{
    static const float cv[] = {0.5f, -1.f, 2.f, -0.25f, 3.f, 0.f};
    static const int64_t p[] = {0, 2, 1};
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){1, 3, 2});
    pt_const_f(m, "c", 3, (const int64_t[]){1, 2, 3}, cv);
    transpose(m, "x", "b", 3, p);
    pt_node(m, "Erf", "", "c", "e", NULL);
    pt_node(m, "Mul", "", "b,e", "mm", NULL);
    transpose(m, "mm", "y1", 3, p);
    pt_output(m, "mm");
    pt_output(m, "y1");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK_MSG(optimize_checked(m, &o, "T -> Mul(., Erf(c)) -> {out, T^-1}") == 1, "%d Transposes",
              pt_count_op(m, "Transpose"));
    pc_model_free(m);
}

/* x -> T -> b -> {Div(b, k) -> Erf -> e, Mul(b, e) -> m -> {output, T^-1}} (suite seed 1 case 19660,
 * annotated: a GELU between NHWC wrappers): the group push through the Mul now takes the two-op chain Div ->
 * Erf; T goes, T^-1 cancels, m keeps one Transpose: 2 -> 1. Chains were one op long. */
static void test_group_push_long_chain(void)
{
    static const float kv[] = {1.4142135f};
    static const int64_t p[] = {0, 2, 1};
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){1, 3, 2});
    pt_const_f(m, "k", 0, NULL, kv);
    transpose(m, "x", "b", 3, p);
    pt_node(m, "Div", "", "b,k", "d", NULL);
    pt_node(m, "Erf", "", "d", "e", NULL);
    pt_node(m, "Mul", "", "b,e", "mm", NULL);
    transpose(m, "mm", "y1", 3, p);
    pt_output(m, "mm");
    pt_output(m, "y1");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK_MSG(optimize_checked(m, &o, "T -> {Div -> Erf, Mul} -> {out, T^-1}") == 1, "%d Transposes",
              pt_count_op(m, "Transpose"));
    pc_model_free(m);
}

/* c -> Q -> q -> {DQ -> T -> y1, DQ -> T2 -> y2} (suite seed 1 case 18524, eps): T moves above its DQ and on
 * above the Q into c, the other DQ (a per-tensor DQ takes the T^-1 left for it like an elementwise op) pushes
 * it on into T2: 2 -> 1. The look-ahead stopped at q's second reader. */
static void test_pull_up_merging_dq(void)
{
    float cv[24];
    for (int i = 0; i < 24; i++)
        cv[i] = (float)((i * 7) % 11) * 0.5f;
    static const float sv[] = {0.5f};
    static const int64_t p1[] = {3, 0, 1, 2}, p2[] = {1, 2, 3, 0};
    pc_model *m = pt_model(13);
    pt_const_f(m, "c", 4, (const int64_t[]){2, 3, 2, 2}, cv);
    pt_const_f(m, "s", 0, NULL, sv);
    pt_node(m, "QuantizeLinear", "", "c,s", "q", NULL);
    pt_node(m, "DequantizeLinear", "", "q,s", "d1", NULL);
    transpose(m, "d1", "y1", 4, p1);
    pt_node(m, "DequantizeLinear", "", "q,s", "d2", NULL);
    transpose(m, "d2", "y2", 4, p2);
    pt_output(m, "y1");
    pt_output(m, "y2");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK_MSG(optimize_checked(m, &o, "c -> Q -> {DQ -> T, DQ -> T2}") == 1, "%d Transposes",
              pt_count_op(m, "Transpose"));
    pc_model_free(m);
}

/* x -> T -> Q -> q -> {DQ -> T1 -> y1, DQ -> T2 -> y2} (suite seed 1 case 18524, eps): pushed through the Q,
 * T is shared by the two DQs, each of which leads only into a Transpose; pushed through both it merges into
 * T1 and T2: 3 -> 2. Each push alone kept the shared T and was refused. */
static void test_push_shared_into_merging_readers(void)
{
    static const float sv[] = {0.5f};
    static const int64_t p0[] = {2, 3, 0, 1}, p1[] = {3, 0, 1, 2}, p2[] = {1, 2, 3, 0};
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
    pt_const_f(m, "s", 0, NULL, sv);
    transpose(m, "x", "t", 4, p0);
    pt_node(m, "QuantizeLinear", "", "t,s", "q", NULL);
    pt_node(m, "DequantizeLinear", "", "q,s", "d1", NULL);
    transpose(m, "d1", "y1", 4, p1);
    pt_node(m, "DequantizeLinear", "", "q,s", "d2", NULL);
    transpose(m, "d2", "y2", 4, p2);
    pt_output(m, "y1");
    pt_output(m, "y2");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK_MSG(optimize_checked(m, &o, "T -> Q -> {DQ -> T1, DQ -> T2}") == 2, "%d Transposes",
              pt_count_op(m, "Transpose"));
    pc_model_free(m);
}

/* x -> T -> t -> {Split(t, axis 2) -> {s0 -> T^-1 -> y0, s1 -> {Sigmoid -> y1, T^-1 -> y2}}, Split(t, axis 1)
 * -> outputs} (suite seed 1 case 20828, nhwc: t the NHWC Conv's output wrapper, the Sigmoid another EP's):
 * the push through the first Split keeps T for the second, cancels both T^-1 and puts one Transpose on s1
 * for the Sigmoid: 3 -> 2. It was refused before the Split's per-output credits were counted, since t
 * stays. */
static void test_push_shared_split_cancel(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 4});
    pt_const_i64(m, "split_h", 2, (const int64_t[]){1, 1});
    pt_const_i64(m, "split_c", 2, (const int64_t[]){1, 3});
    transpose(m, "x", "t", 4, CF);
    pc_error err;
    pc_node *sp = pt_node(m, "Split", "", "t,split_h", "s0,s1", NULL);
    CHECK_OK(pc_node_set_attr_int(sp, "axis", 2, &err), &err);
    pc_node *sp2 = pt_node(m, "Split", "", "t,split_c", "c0,c1", NULL);
    CHECK_OK(pc_node_set_attr_int(sp2, "axis", 1, &err), &err);
    transpose(m, "s0", "y0", 4, CL);
    pc_node *sg = pt_node(m, "Sigmoid", "", "s1", "y1", NULL);
    transpose(m, "s1", "y2", 4, CL);
    pt_output(m, "y0");
    pt_output(m, "y1");
    pt_output(m, "y2");
    pt_output(m, "c0");
    pt_output(m, "c1");
    for (pc_node *n = m->graph->first; n; n = n->next)
        n->ep = "a";
    sg->ep = "b"; /* another EP's reader (the case's ReduceMean on cpu): this run cannot push into it */
    pc_pass_options o = pt_pass_options("transpose_optimize_ep");
    o.provider = "a";
    CHECK_MSG(optimize_checked(m, &o, "T -> {Split -> {T^-1, {Sigmoid, T^-1}}, Split}") == 2, "%d Transposes",
              pt_count_op(m, "Transpose"));
    pc_model_free(m);
}

/* x -> T -> b -> {Div(b, k) -> d, Mul(b, c) -> m}, m -> {Mul(m, d) -> out, T^-1 -> y} (suite seed 1 case
 * 19660, annotated: T^-1 an NHWC Conv's input wrapper): pushed through all three, T leaves one Transpose at
 * out and cancels T^-1 (2 -> 1). Each push alone keeps the shared T or costs m a Transpose; the region push
 * takes them together. */
static void test_region_push(void)
{
    static const float kv[] = {1.4142135f}, cv[] = {0.5f};
    static const int64_t p[] = {0, 2, 1};
    /* variant 2: x also feeds Relu -> out2, a node of the same region that must stay as it is (moved, it
     * would need a Transpose on its output); no single move pays, so the descent stays put, and the exact
     * search must try each variable's identity too (a search skipping it finds no assignment below 2) */
    static const char *const what[] = {"Mul(b, c)", "Mul(b, b)", "Mul(b, c), x -> Relu"};
    for (int variant = 0; variant < 3; variant++) {
        pc_model *m = pt_model(13);
        pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){1, 2, 3});
        pt_const_f(m, "k", 0, NULL, kv);
        pt_const_f(m, "c", 0, NULL, cv);
        transpose(m, "x", "b", 3, p);
        pt_node(m, "Div", "", "b,k", "d", NULL);
        pt_node(m, "Mul", "", variant == 1 ? "b,b" : "b,c", "mm", NULL);
        pt_node(m, "Mul", "", "mm,d", "out", NULL);
        transpose(m, "mm", "y", 3, p);
        pt_output(m, "out");
        pt_output(m, "y");
        if (variant == 2) {
            pt_node(m, "Relu", "", "x", "out2", NULL);
            pt_output(m, "out2");
        }
        pc_pass_options o = pt_pass_options("transpose_optimize");
        CHECK_MSG(optimize_checked(m, &o, "T -> {Div, Mul} -> Mul -> out, T^-1") == 1, "%d Transposes (%s)",
                  pt_count_op(m, "Transpose"), what[variant]);
        pc_model_free(m);
    }
}

/* The region push must not pay for a region that does not lower the cost: T -> {Relu -> out1, Neg -> out2}
 * stays one Transpose (pushed, it would be two). */
static void test_region_push_not_worse(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 4});
    transpose(m, "x", "t", 4, CF);
    pt_node(m, "Relu", "", "t", "y1", NULL);
    pt_node(m, "Neg", "", "t", "y2", NULL);
    pt_output(m, "y1");
    pt_output(m, "y2");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK_MSG(optimize_checked(m, &o, "T -> {Relu, Neg}") == 1, "%d Transposes", pt_count_op(m, "Transpose"));
    pc_model_free(m);
}

/* Mul(T_p(x), x), with and without a Transpose T_q on its output, for every perm p and q of rank 4 (the
 * pipeline fuzzer's find: AveragePool -> T -> Mul(., AveragePool), nhwc,cpu). Pushing T_p through the Mul
 * puts T_p^-1 on x, where a sibling Transpose with that perm, T_p itself, could be reused when p is its own
 * inverse; the cost counted both T_p's removal and the free reuse, so the push looked like a gain, repeated
 * round after round, and a second optimize changed the graph again. Every graph: exact outputs, the oracle's
 * optimum, and nothing left to change for a second run. */
static void test_push_reused_sibling_idempotent(void)
{
    static const int64_t shapes[][4] = {{1, 2, 2, 1}, {2, 2, 2, 2}};
    int64_t perms[24][4];
    size_t n = 0;
    for (int64_t a = 0; a < 4; a++)
        for (int64_t b = 0; b < 4; b++)
            for (int64_t c = 0; c < 4; c++)
                for (int64_t d = 0; d < 4; d++)
                    if (a != b && a != c && a != d && b != c && b != d && c != d) {
                        int64_t *q = perms[n++];
                        q[0] = a, q[1] = b, q[2] = c, q[3] = d;
                    }
    size_t graphs = 0, second_changed = 0;
    for (size_t s = 0; s < 2; s++)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j <= n; j++) /* j == n: no output Transpose */
                for (int layout = 0; layout < 2; layout++) {
                    pc_model *m = pt_model(13);
                    pt_input(m, "x", PC_DTYPE_FLOAT, 4, shapes[s]);
                    transpose(m, "x", "t", 4, perms[i]);
                    pt_node(m, "Mul", "", "t,x", j < n ? "m" : "y", NULL);
                    if (j < n) transpose(m, "m", "y", 4, perms[j]);
                    pt_output(m, "y");
                    pc_pass_options o = pt_pass_options("transpose_optimize");
                    o.layout_cost_check = layout;
                    char what[96];
                    snprintf(what, sizeof what, "shape %zu, p %zu, q %zu, layout %d", s, i, j, layout);
                    optimize_checked(m, &o, what);
                    /* after the layout transformer's walk, the pipeline runs the plain optimizer: that one
                     * must reach its fixed point at once (a layout walk pushes channel moves regardless of
                     * cost every time it runs) */
                    o.layout_cost_check = false;
                    if (layout) optimize_checked(m, &o, what);
                    bool again = pt_run_pass(pc_transpose_optimize, m, &o);
                    CHECK_MSG(!again, "%s: a second run changed the graph again", what);
                    second_changed += again;
                    graphs++;
                    pc_model_free(m);
                }
    printf("test_transpose_gaps: Mul(T_p(x), x): %zu graphs, %zu changed by a second run\n", graphs,
           second_changed);
}

/* x -> T -> y0 and x -> (Q -> DQ -> Relu) x n -> T -> y1 (suite seed 2 case 4273, annotated: two NHWC
 * QLinearConvs' input wrappers on x and on the end of a QDQ chain): the second T moves above the whole chain
 * and shares the first (2 -> 1). The look-ahead stopped 4 levels up; a chain longer than the rounds must be
 * moved up whole in one round (else it stays halfway, and a second run moves it on). */
static void test_pull_up_long_chain(void)
{
    static const float sv[] = {0.25f};
    static const int64_t p[] = {0, 2, 1};
    for (int n = 2; n <= 4; n += 2) {
        pc_model *m = pt_model(13);
        pt_input(m, "x", PC_DTYPE_FLOAT, 3, (int64_t[]){1, 2, 3});
        pt_const_f(m, "s", 0, NULL, sv);
        transpose(m, "x", "y0", 3, p);
        char in[16] = "x", q[16], d[16], r[16], ins[40];
        for (int i = 0; i < n; i++) {
            snprintf(q, sizeof q, "q%d", i);
            snprintf(d, sizeof d, "d%d", i);
            snprintf(r, sizeof r, "r%d", i);
            snprintf(ins, sizeof ins, "%s,s", in);
            pt_node(m, "QuantizeLinear", "", ins, q, NULL);
            snprintf(ins, sizeof ins, "%s,s", q);
            pt_node(m, "DequantizeLinear", "", ins, d, NULL);
            pt_node(m, "Relu", "", d, r, NULL);
            memcpy(in, r, sizeof in);
        }
        transpose(m, in, "y1", 3, p);
        pt_output(m, "y0");
        pt_output(m, "y1");
        pc_pass_options o = pt_pass_options("transpose_optimize");
        CHECK_MSG(optimize_checked(m, &o, "x -> {T, (Q -> DQ -> Relu) x n -> T}") == 1,
                  "%d links: %d Transposes", 3 * n, pt_count_op(m, "Transpose"));
        /* idempotent: a second run finds nothing left to move */
        CHECK_MSG(!pt_run_pass(pc_transpose_optimize, m, &o), "%d links: a second run changed the graph",
                  3 * n);
        pc_model_free(m);
    }
}

/* x -> T -> t -> {output, Relu -> Split(axis 3) -> {s0 -> output, s1 -> T^-1 -> y1, s2 -> T^-1 -> y2}} (suite
 * seed 3 case 6588, nhwc: T an NHWC Conv's output wrapper, the last T^-1 the next Conv's input one): pushed
 * through Relu and the Split, T stays for t and cancels both T^-1; s0 gets one (a Reshape when it moves only
 * size-1 dims): 3 -> 2, or 3 -> 1 with a Reshape. The push through Relu alone only added one (t stays); the
 * region push now takes the Split in. */
static void test_region_push_split(void)
{
    for (int unit = 0; unit < 2; unit++) {
        pc_model *m = pt_model(13);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, unit ? 1 : 2, 5, 2});
        pt_const_i64(m, "sizes", 3, (const int64_t[]){1, 2, 2});
        transpose(m, "x", "t", 4, CF);
        pt_node(m, "Relu", "", "t", "r", NULL);
        pc_error err;
        pc_node *sp = pt_node(m, "Split", "", "r,sizes", "s0,s1,s2", NULL);
        CHECK_OK(pc_node_set_attr_int(sp, "axis", 3, &err), &err);
        transpose(m, "s1", "y1", 4, CL);
        transpose(m, "s2", "y2", 4, CL);
        pt_output(m, "t");
        pt_output(m, "s0");
        pt_output(m, "y1");
        pt_output(m, "y2");
        pc_pass_options o = pt_pass_options("transpose_optimize");
        CHECK_MSG(optimize_checked(m, &o, "T -> {out, Relu -> Split -> {out, T^-1, T^-1}}") == 2 - unit,
                  "%s: %d Transposes", unit ? "size-1 s0" : "s0", pt_count_op(m, "Transpose"));
        pc_model_free(m);
    }
}

/* x -> T -> Pad -> Tanh -> Relu -> r -> {T^-1 -> y1, Tanh -> y2} (suite seed 2 case 15067, eps: T^-1 shared
 * by BatchNormalization and another EP's ReduceMax there): pushed through the Pad and the elementwise region
 * after it, T cancels T^-1 and leaves one at y2 (2 -> 1). The push through Pad alone only moved T to a larger
 * output (the Pad grows a size-1 dim; Relu's output is shared, so no cancel credit); the region push now
 * starts at such an op. */
static void test_region_push_from_pad(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 1});
    pt_const_i64(m, "pads", 8, (const int64_t[]){0, 0, 0, 1, 0, 2, 2, 2});
    transpose(m, "x", "t", 4, CL);
    pt_node(m, "Pad", "", "t,pads", "p", NULL);
    pt_node(m, "Tanh", "", "p", "h", NULL);
    pt_node(m, "Relu", "", "h", "r", NULL);
    transpose(m, "r", "y1", 4, CF);
    pt_node(m, "Tanh", "", "r", "y2", NULL);
    pt_output(m, "y1");
    pt_output(m, "y2");
    pc_pass_options o = pt_pass_options("transpose_optimize");
    CHECK_MSG(optimize_checked(m, &o, "T -> Pad -> Tanh -> Relu -> {T^-1, Tanh}") == 1, "%d Transposes",
              pt_count_op(m, "Transpose"));
    CHECK_MSG(!pt_run_pass(pc_transpose_optimize, m, &o), "a second run changed the graph");
    pc_model_free(m);
}

int main(void)
{
    test_push_reused_sibling_idempotent();
    test_shared_layout_push();
    test_layout_push_split();
    test_concat_same_transpose_twice();
    test_foreign_transpose_kept();
    test_unit_axes_transpose();
    test_pull_up_shares();
    test_clip_chain_cancel();
    test_pull_up_into_constant();
    test_no_push_pull_cycle();
    test_squeeze_all_after_transpose();
    test_twin_graph_outputs();
    test_sibling_pull_up();
    test_push_into_squeeze();
    test_twin_unit_axes();
    test_pull_up_split();
    test_split_unit_output_reshape();
    test_pull_up_split_twins();
    test_pull_up_reduce_keepdims();
    test_pull_up_split_twin_chain();
    test_push_into_reduce_all();
    test_shared_into_reduce_all();
    test_group_push();
    test_push_concat_cancel();
    test_pull_up_past_reduce_all();
    test_no_push_into_foreign_transpose();
    test_push_split_cancel();
    test_copy_without_identity();
    test_push_split_chain_cancel();
    test_pull_up_merging_reader();
    test_group_push_cancel_reader();
    test_pull_up_absorbing_reader();
    test_pull_up_absorbing_reader_fold();
    test_pull_up_absorbing_reader_sibling();
    test_pull_up_lookahead_merging();
    test_push_elementwise_output_cancel();
    test_group_push_long_chain();
    test_pull_up_merging_dq();
    test_push_shared_into_merging_readers();
    test_push_shared_split_cancel();
    test_region_push();
    test_region_push_not_worse();
    test_pull_up_long_chain();
    test_region_push_split();
    test_region_push_from_pad();
    return pc_test_finish("test_transpose_gaps");
}
