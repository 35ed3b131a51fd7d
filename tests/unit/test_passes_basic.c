/* Level-0 eliminations, prune_simple, fold_constants and remove_dq_q: for each pass a positive case
 * (structure checked exactly, outputs compared bit-exactly with the unoptimized graph on the reference
 * executor), negative cases that must not fire, and a second run that must report no change. */
#include <math.h>
#include <stdint.h>

#include "core/passes/pass.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

/* ---- harness ----------------------------------------------------------------------------------------------
 */

static pc_pass_options opts_basic(void)
{
    return pt_pass_options("test");
}

/* Runs the pass twice on m: the first run must change it, the second must not (idempotence); then the outputs
 * must equal the original's on the reference executor (rtol = atol = 0: bit-exact). */
static void check_fires_exact(pc_pass_fn fn, pc_model *m, const char *what)
{
    pc_pass_options o = opts_basic();
    pc_model *before = pt_clone(m);
    int logged = pt_log.n;
    CHECK_MSG(pt_run_pass(fn, m, &o), "%s: pass did not fire", what);
    CHECK_MSG(pt_log.n > logged, "%s: no --explain line", what);
    CHECK_MSG(!pt_run_pass(fn, m, &o), "%s: second run changed the graph again", what);
    char why[PT_WHY_SIZE] = "";
    for (uint64_t seed = 1; seed <= 3; seed++)
        CHECK_MSG(pt_equiv(before, m, seed, 0, 0, why, sizeof why) == 1, "%s: %s", what, why);
    pc_model_free(before);
}

/* The pass must leave m exactly as it was (pc_model_equal against a clone). */
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

static const int64_t d23[] = {2, 3};
static const int64_t d234[] = {2, 3, 4};

/* ---- eliminate_identity
 * ------------------------------------------------------------------------------------ */

static void test_identity(void)
{
    /* x -> Relu -> Identity -> Neg -> Identity -> y (graph output): both go, y keeps its name */
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    pt_node(m, "Relu", "", "x", "r", "enc");
    pt_node(m, "Identity", "", "r", "i1", "enc");
    pt_node(m, "Neg", "", "i1", "n", "enc");
    pt_node(m, "Identity", "", "n", "y", "enc");
    pt_output(m, "y");
    check_fires_exact(pc_pass_eliminate_identity, m, "identity");
    CHECK(pt_count_op(m, "Identity") == 0);
    CHECK(m->graph->n_nodes == 2);
    CHECK(strcmp(m->graph->outputs[0]->name, "y") == 0);
    CHECK(m->graph->outputs[0]->producer && strcmp(m->graph->outputs[0]->producer->op_type, "Neg") == 0);
    CHECK(find_op(m, "Neg")->inputs[0] == find_op(m, "Relu")->outputs[0]);
    pc_model_free(m);

    /* graph input straight to graph output: the Identity must stay (the output name needs a producer) */
    m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    pt_node(m, "Identity", "", "x", "y", NULL);
    pt_output(m, "y");
    pc_pass_options o = opts_basic();
    check_no_fire(pc_pass_eliminate_identity, m, &o, "identity input->output");
    pc_model_free(m);

    /* the Identity's output is read by a subgraph (simulated reference count): it is "used" by name, so kept
     */
    m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    pt_node(m, "Relu", "", "x", "r", NULL);
    pt_node(m, "Identity", "", "r", "i", NULL);
    pt_node(m, "Neg", "", "i", "y", NULL);
    pt_output(m, "y");
    pc_graph_find_value(m->graph, "i")->n_subgraph_refs = 1;
    CHECK(!pt_run_pass(pc_pass_eliminate_identity, m, &o));
    CHECK(pt_count_op(m, "Identity") == 1);
    pc_model_free(m);

    /* owned by another EP */
    m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    pt_node(m, "Relu", "", "x", "r", NULL);
    pc_node *id = pt_node(m, "Identity", "", "r", "i", NULL);
    pt_node(m, "Neg", "", "i", "y", NULL);
    pt_output(m, "y");
    id->ep = "other";
    o.provider = "cpu";
    check_no_fire(pc_pass_eliminate_identity, m, &o, "identity of another EP");
    pc_model_free(m);
}

/* A chain longer than the passes' in-struct node list (32) and the verifier's stack tables (1 KiB): the heap
 * forms of both are taken, and alternating Relu/Identity nodes keep every removal next to a survivor. */
static void test_identity_long_chain(void)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    char in[32] = "x", out[32];
    enum { N_PAIRS = 150 };
    for (int i = 0; i < N_PAIRS; i++) {
        snprintf(out, sizeof out, "r%d", i);
        pt_node(m, "Relu", "", in, out, NULL);
        snprintf(in, sizeof in, "i%d", i);
        pt_node(m, "Identity", "", out, in, NULL);
    }
    pt_output(m, in);
    CHECK(m->graph->n_nodes == 2 * N_PAIRS && m->graph->n_values > 256);
    pc_error err;
    CHECK(pc_model_verify(m, &err) == PC_OK);
    check_fires_exact(pc_pass_eliminate_identity, m, "identity, long chain");
    CHECK(pt_count_op(m, "Identity") == 0 && m->graph->n_nodes == N_PAIRS);
    CHECK(pc_model_verify(m, &err) == PC_OK);
    pc_model_free(m);
}

/* A Concat of N_FAN Negs of x, read by nothing: removing it removes all of them, so the dead-node worklist
 * grows past its in-place entries, as does pc_pass_may_remove's set for the same Concat. With each model
 * allocation failing in turn (the OOM-injection seam): out of memory is reported, never swallowed, and a run
 * that hit no failure removes everything. */
static pc_model *dead_fan(void)
{
    enum { N_FAN = 40 };
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    char ins[N_FAN * 8] = "", name[16];
    for (int i = 0; i < N_FAN; i++) {
        snprintf(name, sizeof name, "n%d", i);
        pt_node(m, "Neg", "", "x", name, NULL);
        strcat(ins, i ? "," : "");
        strcat(ins, name);
    }
    pc_error err;
    pc_node *c = pt_node(m, "Concat", "", ins, "c", NULL);
    CHECK_OK(pc_node_set_attr_int(c, "axis", 0, &err), &err);
    pt_node(m, "Relu", "", "x", "y", NULL);
    pt_output(m, "y");
    return m;
}

static void test_dead_fan_out_of_memory(void)
{
    int hits[2] = {0, 0};
    for (int what = 0; what < 2; what++)
        for (uint64_t k = 1; k <= 64; k++) {
            pc_model *m = dead_fan();
            pc_node *c = find_op(m, "Concat");
            pc_error err;
            pc_error_clear(&err);
            m->mem.fail_after = m->mem.n_allocs + k;
            pc_status st;
            bool ok = false;
            if (what == 0) {
                st = pc_pass_remove_dead(m->graph, c, &err);
            } else {
                pc_pass_options o = opts_basic();
                st = pc_pass_may_remove(&o, c, NULL, &ok, &err);
            }
            bool failed = m->mem.failed;
            m->mem.fail_after = 0;
            hits[what] += failed;
            if (failed) {
                CHECK_MSG(st == PC_ERR_NOMEM, "%s, allocation %llu failed: %s",
                          what ? "may_remove" : "remove_dead", (unsigned long long)k, pc_status_name(st));
                CHECK(!ok);
            } else {
                CHECK_MSG(st == PC_OK, "%s, no failure: %s", what ? "may_remove" : "remove_dead",
                          err.message);
                if (what == 0) CHECK(m->graph->n_nodes == 1 && pc_model_verify(m, &err) == PC_OK);
                if (what == 1) CHECK(ok);
            }
            pc_model_free(m);
        }
    CHECK_MSG(hits[0] > 0 && hits[1] > 0, "no injected failure reached: %d, %d", hits[0], hits[1]);
}

/* ---- eliminate_dropout
 * ------------------------------------------------------------------------------------- */

static void test_dropout(void)
{
    static const float ratio[] = {0.5f};
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    pt_const_f(m, "ratio", 0, NULL, ratio);
    pt_node(m, "Dropout", "", "x,ratio", "d", NULL);
    pt_node(m, "Relu", "", "d", "y", NULL);
    pt_output(m, "y");
    check_fires_exact(pc_pass_eliminate_dropout, m, "dropout opset 13");
    CHECK(pt_count_op(m, "Dropout") == 0);
    CHECK(find_op(m, "Relu")->inputs[0] == m->graph->inputs[0]);
    CHECK(m->graph->n_initializers == 0); /* the ratio went with it */
    pc_model_free(m);

    /* constant training_mode = false: removed */
    static const uint8_t f0[] = {0}, t1[] = {1};
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    pt_const_f(m, "ratio", 0, NULL, ratio);
    pt_const(m, "train", PC_DTYPE_BOOL, 0, NULL, f0);
    pt_node(m, "Dropout", "", "x,ratio,train", "d", NULL);
    pt_node(m, "Relu", "", "d", "y", NULL);
    pt_output(m, "y");
    check_fires_exact(pc_pass_eliminate_dropout, m, "dropout training_mode false");
    CHECK(pt_count_op(m, "Dropout") == 0);
    pc_model_free(m);

    pc_pass_options o = opts_basic();
    /* training_mode = true: stays */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    pt_const_f(m, "ratio", 0, NULL, ratio);
    pt_const(m, "train", PC_DTYPE_BOOL, 0, NULL, t1);
    pt_node(m, "Dropout", "", "x,ratio,train", "d", NULL);
    pt_node(m, "Relu", "", "d", "y", NULL);
    pt_output(m, "y");
    check_no_fire(pc_pass_eliminate_dropout, m, &o, "dropout training_mode true");
    pc_model_free(m);

    /* the mask is read: stays */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    pt_node(m, "Dropout", "", "x", "d,mask", NULL);
    pt_node(m, "Relu", "", "d", "y", NULL);
    pt_output(m, "y");
    pt_output(m, "mask");
    check_no_fire(pc_pass_eliminate_dropout, m, &o, "dropout mask used");
    pc_model_free(m);

    /* opset 6: is_test = 1 is inference (removed); without it the default means training (kept) */
    pc_error err;
    m = pt_model(6);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    pc_node *d = pt_node(m, "Dropout", "", "x", "d", NULL);
    CHECK_OK(pc_node_set_attr_int(d, "is_test", 1, &err), &err);
    pt_node(m, "Relu", "", "d", "y", NULL);
    pt_output(m, "y");
    check_fires_exact(pc_pass_eliminate_dropout, m, "dropout opset 6 is_test");
    CHECK(pt_count_op(m, "Dropout") == 0);
    pc_model_free(m);

    /* Dropout-6: "if nonzero, run in test mode": a negative is_test is inference too */
    m = pt_model(6);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    d = pt_node(m, "Dropout", "", "x", "d", NULL);
    CHECK_OK(pc_node_set_attr_int(d, "is_test", -1, &err), &err);
    pt_node(m, "Relu", "", "d", "y", NULL);
    pt_output(m, "y");
    check_fires_exact(pc_pass_eliminate_dropout, m, "dropout opset 6 is_test -1");
    CHECK(pt_count_op(m, "Dropout") == 0);
    pc_model_free(m);

    m = pt_model(6);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    pt_node(m, "Dropout", "", "x", "d", NULL);
    pt_node(m, "Relu", "", "d", "y", NULL);
    pt_output(m, "y");
    check_no_fire(pc_pass_eliminate_dropout, m, &o, "dropout opset 6 training");
    pc_model_free(m);
}

/* ---- eliminate_cast
 * ---------------------------------------------------------------------------------------- */

static void test_cast(void)
{
    pc_error err;
    static const float like[] = {0};
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    pc_node *c = pt_node(m, "Cast", "", "x", "c", "a");
    CHECK_OK(pc_node_set_attr_int(c, "to", PC_DTYPE_FLOAT, &err), &err);
    pt_node(m, "Relu", "", "c", "r", "a");
    pt_set_tensor_type(pc_graph_find_value(m->graph, "r"), PC_DTYPE_FLOAT, 2, d23, &err);
    pt_const_f(m, "like", 1, (int64_t[]){1}, like);
    pt_node(m, "CastLike", "", "r,like", "y", "a");
    pt_output(m, "y");
    check_fires_exact(pc_pass_eliminate_cast, m, "cast");
    CHECK(pt_count_op(m, "Cast") == 0 && pt_count_op(m, "CastLike") == 0);
    CHECK(m->graph->n_nodes == 1 && strcmp(m->graph->outputs[0]->name, "y") == 0);
    CHECK(m->graph->n_initializers == 0);
    pc_model_free(m);

    pc_pass_options o = opts_basic();
    /* a real conversion stays */
    m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    c = pt_node(m, "Cast", "", "x", "c", NULL);
    CHECK_OK(pc_node_set_attr_int(c, "to", PC_DTYPE_DOUBLE, &err), &err);
    pt_node(m, "Neg", "", "c", "y", NULL);
    pt_output(m, "y");
    check_no_fire(pc_pass_eliminate_cast, m, &o, "cast to double");
    pc_model_free(m);

    /* the input's type is unknown (no inference ran): stays */
    m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    pt_node(m, "Relu", "", "x", "r", NULL);
    c = pt_node(m, "Cast", "", "r", "c", NULL);
    CHECK_OK(pc_node_set_attr_int(c, "to", PC_DTYPE_FLOAT, &err), &err);
    pt_node(m, "Neg", "", "c", "y", NULL);
    pt_output(m, "y");
    check_no_fire(pc_pass_eliminate_cast, m, &o, "cast of unknown type");
    pc_model_free(m);
}

/* ---- eliminate_slice
 * --------------------------------------------------------------------------------------- */

static pc_model *slice_model(int64_t start, int64_t end, int64_t axis, int64_t step, const int64_t *xdims)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, xdims);
    pt_const_i64(m, "starts", 1, &start);
    pt_const_i64(m, "ends", 1, &end);
    pt_const_i64(m, "axes", 1, &axis);
    pt_const_i64(m, "steps", 1, &step);
    pt_node(m, "Slice", "", "x,starts,ends,axes,steps", "s", NULL);
    pt_node(m, "Relu", "", "s", "y", NULL);
    pt_output(m, "y");
    return m;
}

static void test_slice(void)
{
    static const int64_t unknown_last[] = {2, 3, -1};
    pc_model *m = slice_model(0, INT64_MAX, 1, 1, d234);
    check_fires_exact(pc_pass_eliminate_slice, m, "slice to INT64_MAX");
    CHECK(pt_count_op(m, "Slice") == 0 && m->graph->n_initializers == 0);
    pc_model_free(m);
    m = slice_model(-10, 100, -1, 1, d234); /* clamped bounds on a known dim */
    check_fires_exact(pc_pass_eliminate_slice, m, "slice clamped");
    CHECK(pt_count_op(m, "Slice") == 0);
    pc_model_free(m);
    m = slice_model(0, INT64_MAX, 2, 1, unknown_last); /* unknown dim, to the end */
    CHECK(pt_run_pass(pc_pass_eliminate_slice, m, &(pc_pass_options){0}));
    CHECK(pt_count_op(m, "Slice") == 0);
    pc_model_free(m);

    pc_pass_options o = opts_basic();
    m = slice_model(0, 3, 2, 1, d234);
    check_no_fire(pc_pass_eliminate_slice, m, &o, "slice that drops the last element");
    pc_model_free(m);
    m = slice_model(0, INT64_MAX, 2, 2, d234);
    check_no_fire(pc_pass_eliminate_slice, m, &o, "slice with step 2");
    pc_model_free(m);
    m = slice_model(0, 100, 2, 1, unknown_last);
    check_no_fire(pc_pass_eliminate_slice, m, &o, "slice to 100 on an unknown dim");
    pc_model_free(m);
    m = slice_model(1, INT64_MAX, 0, 1, d234);
    check_no_fire(pc_pass_eliminate_slice, m, &o, "slice from 1");
    pc_model_free(m);

    /* opset 9: attribute form */
    pc_error err;
    m = pt_model(9);
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, d234);
    pc_node *s = pt_node(m, "Slice", "", "x", "s", NULL);
    CHECK_OK(pc_node_set_attr_ints(s, "starts", 2, (int64_t[]){0, 0}, &err), &err);
    CHECK_OK(pc_node_set_attr_ints(s, "ends", 2, (int64_t[]){3, 4}, &err), &err);
    CHECK_OK(pc_node_set_attr_ints(s, "axes", 2, (int64_t[]){1, 2}, &err), &err);
    pt_node(m, "Relu", "", "s", "y", NULL);
    pt_output(m, "y");
    check_fires_exact(pc_pass_eliminate_slice, m, "slice opset 9");
    CHECK(pt_count_op(m, "Slice") == 0);
    pc_model_free(m);
}

/* ---- eliminate_unsqueeze
 * ----------------------------------------------------------------------------------- */

static void test_unsqueeze(void)
{
    static const float cv[] = {1.5f, -2.0f, 3.25f};
    static const int64_t axes[] = {0};
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    pt_const_f(m, "c", 1, (int64_t[]){3}, cv);
    pt_const_i64(m, "axes", 1, axes);
    pt_node(m, "Unsqueeze", "", "c,axes", "u", NULL);
    pt_node(m, "Add", "", "x,u", "y", NULL);
    pt_output(m, "y");
    check_fires_exact(pc_pass_eliminate_unsqueeze, m, "unsqueeze");
    CHECK(pt_count_op(m, "Unsqueeze") == 0);
    CHECK(m->graph->n_initializers == 1);
    pc_value *u = find_op(m, "Add")->inputs[1];
    CHECK(u->initializer && u->initializer->rank == 2 && u->initializer->dims[0] == 1 &&
          u->initializer->dims[1] == 3);
    CHECK(u->initializer && memcmp(u->initializer->data, cv, sizeof cv) == 0);
    pc_model_free(m);

    /* the initializer is read by another node too: it must not be rewritten */
    pc_pass_options o = opts_basic();
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    pt_const_f(m, "c", 1, (int64_t[]){3}, cv);
    pt_const_i64(m, "axes", 1, axes);
    pt_node(m, "Unsqueeze", "", "c,axes", "u", NULL);
    pt_node(m, "Add", "", "x,u", "y", NULL);
    pt_node(m, "Add", "", "x,c", "z", NULL);
    pt_output(m, "y");
    pt_output(m, "z");
    check_no_fire(pc_pass_eliminate_unsqueeze, m, &o, "unsqueeze of a shared initializer");
    pc_model_free(m);
}

/* ---- prune_simple
 * ------------------------------------------------------------------------------------------ */

static pc_model *binary_model(const char *op, pc_dtype dt, const void *cdata, int32_t crank,
                              const int64_t *cdims, bool const_first, const char *ann)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", dt, 2, d23);
    pt_const(m, "c", dt, crank, cdims, cdata);
    pt_node(m, "Relu", "", "x", "r", ann);
    pt_set_tensor_type(pc_graph_find_value(m->graph, "r"), dt, 2, d23, &(pc_error){0});
    pt_node(m, op, "", const_first ? "c,r" : "r,c", "b", ann);
    pt_node(m, "Neg", "", "b", "y", ann);
    pt_output(m, "y");
    return m;
}

/* Runs a one-input float model on x and returns output 0's bits at index i. */
static uint32_t run_bits(pc_model *m, const float *x, size_t n, size_t i)
{
    pc_error err;
    pc_data *in = pc_data_new_tensor(PC_DTYPE_FLOAT, 1, (int64_t[]){(int64_t)n}, &err);
    memcpy(in->data, x, n * sizeof *x);
    pc_data **outs = NULL;
    uint32_t bits = 0xdeadbeefu;
    CHECK_OK(pc_ref_run(m, 1, &in, &outs, &err), &err);
    if (outs) {
        memcpy(&bits, (const uint8_t *)outs[0]->data + i * 4, 4);
        pc_ref_free_outputs(m, outs);
    }
    pc_data_unref(in);
    return bits;
}

static void test_prune_simple(void)
{
    static const float ones[] = {1, 1, 1}, negz[] = {-0.0f}, posz[] = {0.0f}, zeros3[] = {0, 0, 0};
    static const int64_t izero[] = {0};
    static const int64_t d3[] = {3}, d1[] = {1}, d411[] = {4, 1, 1};
    struct {
        const char *op;
        pc_dtype dt;
        const void *c;
        int32_t crank;
        const int64_t *cdims;
        bool first;
    } fire[] = {
        {"Mul", PC_DTYPE_FLOAT, ones, 1, d3, false},   {"Mul", PC_DTYPE_FLOAT, ones, 1, d3, true},
        {"Div", PC_DTYPE_FLOAT, ones, 0, NULL, false}, {"Sub", PC_DTYPE_FLOAT, zeros3, 1, d3, false},
        {"Add", PC_DTYPE_FLOAT, negz, 1, d1, false},   {"Add", PC_DTYPE_FLOAT, negz, 0, NULL, true},
        {"Add", PC_DTYPE_INT64, izero, 1, d1, true},
    };
    for (size_t i = 0; i < sizeof fire / sizeof fire[0]; i++) {
        pc_model *m = binary_model(fire[i].op, fire[i].dt, fire[i].c, fire[i].crank, fire[i].cdims,
                                   fire[i].first, "blk");
        char what[64];
        snprintf(what, sizeof what, "prune %s #%zu", fire[i].op, i);
        check_fires_exact(pc_pass_prune_simple, m, what);
        CHECK_MSG(pt_count_op(m, fire[i].op) == 0 && m->graph->n_nodes == 2, "%s", what);
        CHECK_MSG(find_op(m, "Neg")->inputs[0] == find_op(m, "Relu")->outputs[0], "%s", what);
        CHECK_MSG(m->graph->n_initializers == 0, "%s: constant left behind", what);
        pc_model_free(m);
    }

    pc_pass_options o = opts_basic();
    static const float two[] = {2}, fzero[] = {0};
    struct {
        const char *op;
        pc_dtype dt;
        const void *c;
        int32_t crank;
        const int64_t *cdims;
        const char *why;
    } keep[] = {
        {"Add", PC_DTYPE_FLOAT, posz, 0, NULL, "x+(+0) on floats turns -0 into +0"},
        {"Sub", PC_DTYPE_FLOAT, negz, 0, NULL, "x-(-0) on floats"},
        {"Mul", PC_DTYPE_FLOAT, fzero, 0, NULL, "x*0 is not 0 for NaN/inf"},
        {"Mul", PC_DTYPE_FLOAT, two, 0, NULL, "x*2"},
        {"Mul", PC_DTYPE_FLOAT, (float[]){1, 1, 1, 1}, 3, d411, "x*1 broadcasting to [4,2,3]"},
        {"Div", PC_DTYPE_FLOAT, ones, 1, d3, "1/x is not x/1"},
    };
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        bool first = strcmp(keep[i].op, "Div") == 0;
        pc_model *m =
            binary_model(keep[i].op, keep[i].dt, keep[i].c, keep[i].crank, keep[i].cdims, first, NULL);
        check_no_fire(pc_pass_prune_simple, m, &o, keep[i].why);
        pc_model_free(m);
    }

    /* -0.0 survives x + (-0.0) removal by bits, and x + (+0.0) (kept) would have lost it */
    static const float xs[] = {-0.0f, 0.0f, 1.0f, -3.0f};
    for (int variant = 0; variant < 2; variant++) {
        pc_model *m = pt_model(17);
        pt_input(m, "x", PC_DTYPE_FLOAT, 1, (int64_t[]){4});
        pt_const_f(m, "c", 0, NULL, variant ? posz : negz);
        pt_node(m, "Add", "", "x,c", "y", NULL);
        pt_output(m, "y");
        bool changed = pt_run_pass(pc_pass_prune_simple, m, &o);
        CHECK(changed == (variant == 0));
        CHECK(run_bits(m, xs, 4, 0) == (variant ? 0u : 0x80000000u));
        CHECK(run_bits(m, xs, 4, 3) == 0xc0400000u);
        CHECK(strcmp(m->graph->outputs[0]->name, "y") == 0);
        pc_model_free(m);
    }

    /* Neg(Neg(x)) -> x, the graph output keeps its name; different annotations: kept */
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    pt_node(m, "Relu", "", "x", "r", "a");
    pt_node(m, "Neg", "", "r", "n1", "a");
    pt_node(m, "Neg", "", "n1", "y", "a");
    pt_output(m, "y");
    check_fires_exact(pc_pass_prune_simple, m, "neg neg");
    CHECK(pt_count_op(m, "Neg") == 0 && m->graph->n_nodes == 1);
    CHECK(strcmp(m->graph->outputs[0]->name, "y") == 0 &&
          m->graph->outputs[0]->producer == find_op(m, "Relu"));
    pc_model_free(m);

    m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    pt_node(m, "Neg", "", "x", "n1", "a");
    pt_node(m, "Neg", "", "n1", "y", "b");
    pt_output(m, "y");
    check_no_fire(pc_pass_prune_simple, m, &o, "neg neg across annotations");
    pc_model_free(m);

    /* another EP's node */
    m = binary_model("Mul", PC_DTYPE_FLOAT, ones, 1, d3, false, NULL);
    find_op(m, "Mul")->ep = "other";
    pc_pass_options po = opts_basic();
    po.provider = "cpu";
    check_no_fire(pc_pass_prune_simple, m, &po, "prune on another EP's node");
    pc_model_free(m);
}

/* ---- fold_constants
 * ---------------------------------------------------------------------------------------- */

static void test_fold_constants(void)
{
    static const float a[] = {1.5f, -2.25f, 3.0f}, b[] = {0.1f, 0.2f, -7.5f};
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, d23);
    pt_const_f(m, "a", 1, (int64_t[]){3}, a);
    pt_const_f(m, "b", 1, (int64_t[]){3}, b);
    pt_node(m, "Add", "", "a,b", "s", "k");
    pt_node(m, "Mul", "", "x,s", "y", "k");
    pt_output(m, "y");
    check_fires_exact(pc_pass_fold_constants, m, "fold Add");
    CHECK(pt_count_op(m, "Add") == 0 && m->graph->n_nodes == 1);
    const pc_value *s = find_op(m, "Mul")->inputs[1];
    CHECK(s->initializer && s->initializer->dtype == PC_DTYPE_FLOAT && s->initializer->n_elements == 3);
    for (int i = 0; i < 3 && s->initializer; i++) {
        float want = (float)((double)a[i] + (double)b[i]); /* IEEE single addition, rounded once */
        CHECK(memcmp((const float *)s->initializer->data + i, &want, 4) == 0);
    }
    CHECK(m->graph->n_initializers == 1); /* a and b pruned */
    pc_model_free(m);

    pc_pass_options o = opts_basic();
    /* the folded node's output is a graph output: kept */
    m = pt_model(17);
    pt_const_f(m, "a", 1, (int64_t[]){3}, a);
    pt_const_f(m, "b", 1, (int64_t[]){3}, b);
    pt_node(m, "Add", "", "a,b", "y", NULL);
    pt_output(m, "y");
    check_no_fire(pc_pass_fold_constants, m, &o, "fold into a graph output");
    pc_model_free(m);

    /* nondeterministic: RandomUniformLike of a constant */
    m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 1, (int64_t[]){3});
    pt_const_f(m, "a", 1, (int64_t[]){3}, a);
    pt_node(m, "RandomUniformLike", "", "a", "r", NULL);
    pt_node(m, "Add", "", "x,r", "y", NULL);
    pt_output(m, "y");
    check_no_fire(pc_pass_fold_constants, m, &o, "fold a random op");
    pc_model_free(m);

    /* over the element budget: ConstantOfShape([64, 64]) with max 1000 */
    static const int64_t shape[] = {64, 64};
    m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, shape);
    pt_const_i64(m, "shape", 2, shape);
    pt_node(m, "ConstantOfShape", "", "shape", "z", NULL);
    pt_node(m, "Add", "", "x,z", "y", NULL);
    pt_output(m, "y");
    pc_pass_options small = opts_basic();
    small.max_fold_elements = 1000;
    check_no_fire(pc_pass_fold_constants, m, &small, "fold over the budget");
    pc_model_free(m);

    /* a graph input with an initializer can be overridden: not a constant */
    m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 1, (int64_t[]){3});
    pc_value *bv = pt_const_f(m, "b", 1, (int64_t[]){3}, b);
    pc_error err;
    CHECK_OK(pc_graph_add_input(m->graph, bv, &err), &err);
    pt_const_f(m, "a", 1, (int64_t[]){3}, a);
    pt_node(m, "Add", "", "a,b", "s", NULL);
    pt_node(m, "Mul", "", "x,s", "y", NULL);
    pt_output(m, "y");
    check_no_fire(pc_pass_fold_constants, m, &o, "fold of an overridable initializer");
    pc_model_free(m);
}

/* ---- remove_dq_q
 * ------------------------------------------------------------------------------------------- */

static pc_model *dq_q_model(float s1, float s2, bool q_is_output)
{
    static const uint8_t zp[] = {128};
    pc_model *m = pt_model(13);
    pt_input(m, "xq", PC_DTYPE_UINT8, 2, d23);
    pt_const_f(m, "s1", 0, NULL, &s1);
    pt_const_f(m, "s2", 0, NULL, &s2);
    pt_const(m, "z1", PC_DTYPE_UINT8, 0, NULL, zp);
    pt_const(m, "z2", PC_DTYPE_UINT8, 0, NULL, zp);
    pt_node(m, "DequantizeLinear", "", "xq,s1,z1", "f", "q");
    pt_node(m, "QuantizeLinear", "", "f,s2,z2", "q2", "q");
    if (q_is_output) {
        pt_output(m, "q2");
    } else {
        pt_node(m, "DequantizeLinear", "", "q2,s1,z1", "y", "q");
        pt_output(m, "y");
    }
    return m;
}

static void test_remove_dq_q(void)
{
    pc_model *m = dq_q_model(0.05f, 0.05f, false);
    check_fires_exact(pc_pass_remove_dq_q, m, "dq q");
    CHECK(pt_count_op(m, "QuantizeLinear") == 0 && pt_count_op(m, "DequantizeLinear") == 1);
    CHECK(find_op(m, "DequantizeLinear")->inputs[0] == m->graph->inputs[0]);
    pc_model_free(m);

    /* Q output is the graph output and the DQ input a graph input: an Identity keeps the name */
    m = dq_q_model(0.05f, 0.05f, true);
    check_fires_exact(pc_pass_remove_dq_q, m, "dq q to output");
    CHECK(pt_count_op(m, "QuantizeLinear") == 0 && pt_count_op(m, "DequantizeLinear") == 0);
    CHECK(pt_count_op(m, "Identity") == 1 && strcmp(m->graph->outputs[0]->name, "q2") == 0);
    CHECK(pc_node_annotation(find_op(m, "Identity")) &&
          strcmp(pc_node_annotation(find_op(m, "Identity")), "q") == 0);
    pc_model_free(m);

    pc_pass_options o = opts_basic();
    m = dq_q_model(0.05f, 0.1f, false);
    check_no_fire(pc_pass_remove_dq_q, m, &o, "dq q with different scales");
    pc_model_free(m);
}

int main(void)
{
    test_identity();
    test_identity_long_chain();
    test_dead_fan_out_of_memory();
    test_dropout();
    test_cast();
    test_slice();
    test_unsqueeze();
    test_prune_simple();
    test_fold_constants();
    test_remove_dq_q();
    return pc_test_finish("test_passes_basic");
}
