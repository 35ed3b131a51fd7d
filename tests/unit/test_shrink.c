/* The shrinker (properties/shrink/shrink.c, shrink_graph.c). Oracles are independent of it: a synthetic
 * failure predicate whose minimal answer is known by construction ("a Conv whose output feeds a Relu" is
 * exactly 2 nodes), the reference executor (a node's value on the original inputs must survive every cut),
 * the verifier, and the case runner re-checking the shrunk case (the same failure signature on replay).
 *
 * With --write-model DIR it only writes the models the CLI test (tests/cli/run_shrink_cli.sh) shrinks. */
#include <math.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#include "generators/gen.h"
#include "tests/pass_test_util.h"
#include "properties/property.h"
#include "reference/reference.h"
#include "properties/shrink/shrink_internal.h"
#include "tests/test_util.h"
#include "properties/runner/util.h"

/* ---- graphs
 * ----------------------------------------------------------------------------------------------------- */

/* A chain of `len` nodes over x: float[1,2,4,4] of unary ops, with an Add joining a value five steps back
 * every 7th node (a DAG, not a line), a side output every 50th node, and at `conv_at` a Conv (3x3, pads 1,
 * default-valued strides and dilations) whose output feeds a Relu. Annotated nodes on every 3rd; case EPs
 * "nhwc,cpu" with a layer assignment, none of which the synthetic predicate needs. */
static void build_chain(pc_case *c, int len, int conv_at, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    pc_model *m = pt_model(17);
    int64_t xd[4] = {1, 2, 4, 4}, wd[4] = {2, 2, 3, 3};
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, xd);
    float w[36];
    for (int i = 0; i < 36; i++)
        w[i] = (float)((i * 5) % 9 - 4) / 8.0f;
    pt_const_f(m, "w", 4, wd, w);
    static const char *const unary[] = {"Relu", "Neg", "Abs", "Sigmoid", "Tanh", "Softsign"};
    char names[1024][16];
    snprintf(names[0], 16, "x");
    int n = 0, k = 0;
    while (n < len && k + 1 < 1024) {
        char ann[32];
        snprintf(ann, sizeof ann, "enc.block%d", n / 10);
        const char *a = n % 3 == 0 ? ann : NULL;
        char out[16];
        snprintf(out, sizeof out, "v%d", k + 1);
        if (n == conv_at) {
            char in[40];
            snprintf(in, sizeof in, "%s,w", names[k]);
            pc_node *cv = pt_node(m, "Conv", "", in, out, a);
            pc_error err;
            int64_t pads[4] = {1, 1, 1, 1}, ones[2] = {1, 1}, ks[2] = {3, 3};
            if (pc_node_set_attr_ints(cv, "pads", 4, pads, &err) != PC_OK ||
                pc_node_set_attr_ints(cv, "strides", 2, ones, &err) != PC_OK ||
                pc_node_set_attr_ints(cv, "dilations", 2, ones, &err) != PC_OK ||
                pc_node_set_attr_ints(cv, "kernel_shape", 2, ks, &err) != PC_OK)
                pt_die("conv attrs", &err);
            snprintf(names[++k], 16, "%s", out);
            snprintf(out, sizeof out, "v%d", k + 1);
            pt_node(m, "Relu", "", names[k], out, a);
            n += 2;
        } else if (n % 7 == 6 && k >= 5) {
            char in[40];
            snprintf(in, sizeof in, "%s,%s", names[k], names[k - 5]);
            pt_node(m, "Add", "", in, out, a);
            n++;
        } else {
            pt_node(m, unary[(pt_rand(&seed) >> 7) % 6], "", names[k], out, a);
            n++;
        }
        snprintf(names[++k], 16, "%s", out);
        if (n % 50 == 0 && n < len) pt_output(m, names[k]);
    }
    pt_output(m, names[k]);
    pc_error err;
    if (pc_graph_infer_shapes(m->graph, &err) != PC_OK) pt_die("infer", &err);
    if (pc_model_verify(m, &err) != PC_OK) pt_die("verify", &err);
    c->model = m;
    c->n_inputs = 1;
    c->inputs = calloc(1, sizeof *c->inputs);
    uint64_t s = seed;
    c->inputs[0] = pt_random_input(m->graph->inputs[0], &s);
    c->ep_list = strdup("nhwc,cpu");
    c->layer_assignment = strdup("nhwc(enc)");
    c->family = "test";
    if (!c->inputs[0] || !c->ep_list || !c->layer_assignment) pt_die("case", NULL);
}

static bool has_conv_then_relu(const pc_model *m)
{
    for (const pc_node *n = m->graph->first; n; n = n->next) {
        if (strcmp(n->op_type, "Conv") != 0 || !n->outputs[0]) continue;
        const pc_value *o = n->outputs[0];
        for (uint32_t u = 0; u < o->n_consumers; u++)
            if (strcmp(o->consumers[u].node->op_type, "Relu") == 0) return true;
    }
    return false;
}

static int predicate_calls;

static pc_status conv_relu_pred(void *ctx, const pc_case *c, pc_check_result *res, bool *interesting,
                                pc_error *err)
{
    (void)ctx;
    (void)res;
    (void)err;
    predicate_calls++;
    *interesting = has_conv_then_relu(c->model);
    return PC_OK;
}

static int count_annotations(const pc_model *m)
{
    int k = 0;
    for (const pc_node *n = m->graph->first; n; n = n->next)
        k += pc_node_annotation(n) != NULL;
    return k;
}

static const pc_node *find_op(const pc_model *m, const char *op)
{
    for (const pc_node *n = m->graph->first; n; n = n->next)
        if (strcmp(n->op_type, op) == 0) return n;
    return NULL;
}

static void test_graph_phase_conv_relu(void)
{
    int sizes[] = {6, 40, 200};
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        pc_case c;
        build_chain(&c, sizes[t], sizes[t] * 3 / 5, 11 + t);
        CHECK(has_conv_then_relu(c.model));
        pc_shrink_options o;
        pc_shrink_options_default(&o);
        o.max_seconds = 60; /* a generous bound: the test measures, it does not time */
        o.isolate = false;
        pc_shrink_result r;
        pc_error err;
        predicate_calls = 0;
        CHECK_OK(pc_shrink_model_fn(&c, conv_relu_pred, NULL, &o, &r, &err), &err);
        /* the oracle is the predicate itself: its smallest witness is one Conv and one Relu */
        CHECK_MSG(r.kase.model && r.kase.model->graph->n_nodes == 2, "%d-node chain shrank to %u nodes",
                  sizes[t], r.kase.model ? r.kase.model->graph->n_nodes : 0);
        if (!r.kase.model) continue;
        CHECK(has_conv_then_relu(r.kase.model));
        CHECK_OK(pc_model_verify(r.kase.model, &err), &err);
        CHECK(r.nodes_before == c.model->graph->n_nodes && r.nodes_after == r.kase.model->graph->n_nodes);
        CHECK(r.graph_edited && r.choices == NULL && !r.budget_exhausted);
        CHECK(r.checks == (uint32_t)predicate_calls && r.accepted >= 1 && r.accepted < r.checks);
        /* what the predicate does not need goes: annotations, the nhwc EP, the layer assignment,
         * default-valued attributes (strides/dilations of 1, pads of 0 are not here: pads 1 changes the
         * output shape) */
        CHECK(count_annotations(r.kase.model) == 0);
        CHECK(r.kase.ep_list && strcmp(r.kase.ep_list, "cpu") == 0);
        CHECK(r.kase.layer_assignment == NULL);
        const pc_node *cv = find_op(r.kase.model, "Conv");
        CHECK(cv && !pc_node_attr(cv, "strides") && !pc_node_attr(cv, "dilations") &&
              !pc_node_attr(cv, "kernel_shape"));
        CHECK(cv && pc_node_attr(cv, "pads"));
        /* the repro still runs on its own inputs */
        pc_data **outs = NULL;
        CHECK_OK(pc_ref_run(r.kase.model, r.kase.n_inputs, r.kase.inputs, &outs, &err), &err);
        if (outs) pc_ref_free_outputs(r.kase.model, outs);
        printf("  conv+relu in a %3d-node chain: %u -> %u nodes, %u checks (%u accepted), %.3f s\n", sizes[t],
               r.nodes_before, r.nodes_after, r.checks, r.accepted, r.seconds);
        pc_shrink_result_free(&r);
        pc_case_free(&c);
    }
}

/* Replacing a value by a graph input or a constant must carry its reference value: the predicate holds only
 * while node `bad` still computes, on the candidate's own inputs, bit for bit what it computed in the
 * original graph. */
typedef struct same_value_ctx {
    pc_data *expected; /* bad's output in the original, from the reference */
    int runs_failed;
} same_value_ctx;

static pc_status output_of(const pc_case *c, const char *value, pc_data **out, pc_error *err)
{
    /* a copy whose only output is `value` */
    pc_case tmp;
    pc_status st = pc_shrink_case_copy(c, &tmp, err);
    if (st != PC_OK) return st;
    pc_value *v = pc_graph_find_value(tmp.model->graph, value);
    if (!v || !v->producer) {
        pc_case_free(&tmp);
        return pc_error_set(err, PC_ERR_VALUE, "no value '%s'", value);
    }
    for (uint32_t k = 0; k < tmp.model->graph->n_outputs; k++)
        tmp.model->graph->outputs[k]->is_graph_output = false;
    tmp.model->graph->n_outputs = 0;
    st = pc_graph_add_output(tmp.model->graph, v, err);
    pc_data **outs = NULL;
    if (st == PC_OK) st = pc_ref_run(tmp.model, tmp.n_inputs, tmp.inputs, &outs, err);
    if (st == PC_OK) {
        *out = pc_data_clone(outs[0], err);
        pc_ref_free_outputs(tmp.model, outs);
        if (!*out) st = err->status;
    }
    pc_case_free(&tmp);
    return st;
}

static pc_status same_value_pred(void *ctx, const pc_case *c, pc_check_result *res, bool *interesting,
                                 pc_error *err)
{
    (void)res;
    same_value_ctx *s = ctx;
    *interesting = false;
    pc_value *bv = pc_graph_find_value(c->model->graph, "bad_out");
    if (!bv || !bv->producer || strcmp(bv->producer->op_type, "Mul") != 0) return PC_OK;
    pc_data *d = NULL;
    if (output_of(c, "bad_out", &d, err) != PC_OK) {
        s->runs_failed++;
        return PC_OK;
    }
    pc_compare_result cr;
    *interesting = pc_data_compare(s->expected, d, 0, 0, &cr) == PC_COMPARE_EQUAL;
    pc_data_unref(d);
    return PC_OK;
}

static void test_replace_keeps_numerics(void)
{
    pc_case c;
    build_chain(&c, 30, 100, 5); /* no Conv */
    /* bad_out = Mul(v20, v25): two values deep in the chain */
    pc_node *mul = pt_node(c.model, "Mul", "", "v20,v25", "bad_out", NULL);
    (void)mul;
    pt_node(c.model, "Neg", "", "bad_out", "after_bad", NULL);
    pt_output(c.model, "after_bad");
    pc_error err;
    CHECK_OK(pc_graph_infer_shapes(c.model->graph, &err), &err);
    CHECK_OK(pc_graph_sort(c.model->graph, &err), &err);
    same_value_ctx s = {0};
    CHECK_OK(output_of(&c, "bad_out", &s.expected, &err), &err);
    pc_shrink_options o;
    pc_shrink_options_default(&o);
    o.max_seconds = 60;
    o.isolate = false;
    pc_shrink_result r;
    CHECK_OK(pc_shrink_model_fn(&c, same_value_pred, &s, &o, &r, &err), &err);
    /* the minimum: Mul alone, its operands graph inputs or constants holding their original values */
    CHECK_MSG(r.kase.model && r.kase.model->graph->n_nodes == 1, "shrank to %u nodes",
              r.kase.model ? r.kase.model->graph->n_nodes : 0);
    CHECK(s.runs_failed == 0);
    if (r.kase.model) {
        bool ok = false;
        CHECK_OK(same_value_pred(&s, &r.kase, NULL, &ok, &err), &err);
        CHECK(ok);
        printf("  Mul(v20, v25) in a 32-node chain: %u -> %u nodes, %u checks, %.3f s\n", r.nodes_before,
               r.nodes_after, r.checks, r.seconds);
    }
    pc_data_unref(s.expected);
    pc_shrink_result_free(&r);
    pc_case_free(&c);
}

static pc_status never_pred(void *ctx, const pc_case *c, pc_check_result *res, bool *interesting,
                            pc_error *err)
{
    (void)ctx, (void)c, (void)res, (void)err;
    *interesting = false;
    return PC_OK;
}

/* A starting case that does not fail is an error, and a budget of one check returns the start unchanged. */
static void test_start_and_budget(void)
{
    pc_case c;
    build_chain(&c, 20, 10, 3);
    pc_shrink_options o;
    pc_shrink_options_default(&o);
    o.isolate = false;
    pc_shrink_result r;
    pc_error err;
    CHECK_STATUS(pc_shrink_model_fn(&c, never_pred, NULL, &o, &r, &err), PC_ERR_CHECK_FAILED, &err);
    CHECK(strstr(err.message, "does not fail") != NULL);
    CHECK(r.kase.model == NULL);
    o.max_checks = 1;
    CHECK_OK(pc_shrink_model_fn(&c, conv_relu_pred, NULL, &o, &r, &err), &err);
    CHECK(r.budget_exhausted && r.checks == 1 && r.accepted == 0);
    CHECK(r.kase.model && r.kase.model->graph->n_nodes == c.model->graph->n_nodes);
    pc_shrink_result_free(&r);
    o.max_checks = 5000;
    o.max_seconds = 0;
    CHECK_OK(pc_shrink_model_fn(&c, conv_relu_pred, NULL, &o, &r, &err), &err);
    CHECK(r.budget_exhausted && r.checks == 1);
    pc_shrink_result_free(&r);
    pc_case_free(&c);
}

/* ---- through the case runner: a property that fails at a pass, the target signature, replay
 * ------------------- */

/* FAILs at the first pass or stage whose *after* graph still holds a Conv feeding a Relu (per-pass), or at
 * the end (final) — so its signature names a pass, as real properties' do. */
static pc_prop_outcome conv_relu_prop(pc_check_ctx *ctx, char *msg, size_t size, const char **kind)
{
    if (!has_conv_then_relu(ctx->after)) return PC_PROP_PASS;
    snprintf(msg, size, "Conv feeds Relu after %s", ctx->pass);
    *kind = "conv-relu";
    return PC_PROP_FAIL;
}
static const pc_property conv_relu_property = {"conv_relu", "test", NULL, conv_relu_prop};

static void test_through_runner(void)
{
    pc_case c;
    build_chain(&c, 200, 120, 9);
    pc_check_config cc;
    pc_check_config_default(&cc);
    pc_error err;
    /* numerics runs too (and passes): every candidate pays reference runs around every pass, as real ones do
     */
    CHECK_OK(pc_check_config_select(&cc, "numerics", &err), &err);
    cc.extra = &conv_relu_property;
    cc.level = 1;
    pc_check_result res;
    CHECK_OK(pc_case_check(&c, &cc, &res, &err), &err);
    CHECK(res.failed);
    pc_failure target = res.failure;
    pc_check_result_free(&res);
    pc_shrink_options o;
    pc_shrink_options_default(&o);
    o.max_seconds = 60;
    o.isolate = false;
    pc_shrink_result r;
    double t0 = pc_now_seconds();
    CHECK_OK(pc_shrink_model(&c, &cc, &target, &o, &r, &err), &err);
    double dt = pc_now_seconds() - t0;
    CHECK(r.kase.model && r.check.failed && pc_failure_same(&r.check.failure, &target));
    if (r.kase.model) {
        CHECK_MSG(r.kase.model->graph->n_nodes == 2, "%u nodes", r.kase.model->graph->n_nodes);
        /* replay: an independent run of the runner on the shrunk case fails the same way */
        CHECK_OK(pc_case_check(&r.kase, &cc, &res, &err), &err);
        CHECK(res.failed && pc_failure_same(&res.failure, &target));
        pc_check_result_free(&res);
        char sig[128];
        pc_failure_signature(&target, sig, sizeof sig);
        printf("  %s on a 200-node graph via pc_case_check (numerics on every pass too): %u -> %u nodes, "
               "%u checks, %.3f s\n",
               sig, r.nodes_before, r.nodes_after, r.checks, dt);
    }
    pc_shrink_result_free(&r);
    pc_case_free(&c);
}

/* ---- an alloc-failure target: judged at every allocation while shrinking
 * -------------------------------------- */

/* Transpose(c) + x, where c is a constant constant folding replaces (its allocations fail under the
 * injected fold-skips-errors, which ignores the failure), next to `pad` unary ops on x, each a graph output
 * of its own, that only add allocations (no rewrites: a later pass would redo a fold the fault skipped).
 * The repro is the fold: at most the Transpose and the Add; the shrinker removes the others one by one. */
static void build_fold_padded(pc_case *c, int pad)
{
    memset(c, 0, sizeof *c);
    pc_model *m = pt_model(17);
    int64_t cd[2] = {2, 3}, xd[2] = {3, 2};
    float cv[6] = {1, -2, 3, -4, 5, -6};
    pt_const_f(m, "c", 2, cd, cv);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, xd);
    pc_node *t = pt_node(m, "Transpose", "", "c", "ct", NULL);
    pc_error err;
    int64_t perm[2] = {1, 0};
    if (pc_node_set_attr_ints(t, "perm", 2, perm, &err) != PC_OK) pt_die("perm", &err);
    pt_node(m, "Add", "", "ct,x", "y", NULL);
    pt_output(m, "y");
    static const char *const unary[] = {"Relu", "Neg", "Abs", "Sigmoid", "Tanh"};
    for (int i = 0; i < pad; i++) {
        char out[16];
        snprintf(out, sizeof out, "p%d", i);
        pt_node(m, unary[i % 5], "", "x", out, NULL);
        pt_output(m, out);
    }
    if (pc_graph_infer_shapes(m->graph, &err) != PC_OK) pt_die("infer", &err);
    if (pc_model_verify(m, &err) != PC_OK) pt_die("verify", &err);
    c->model = m;
    c->n_inputs = 1;
    c->inputs = calloc(1, sizeof *c->inputs);
    uint64_t s = 7;
    c->inputs[0] = pt_random_input(m->graph->inputs[0], &s);
    c->ep_list = strdup("cpu");
    c->family = "test";
    if (!c->inputs[0] || !c->ep_list) pt_die("case", NULL);
}

/* With one drawn allocation per case, each candidate of a bigger model draws another point, and a smaller
 * graph with the bug passes by luck of the draw: a fold-skips-errors catch stayed at 10 nodes. The shrinker
 * judges an alloc-failure target at every allocation, and the repro replays that way. The target here is
 * found that way too: of these paddings, 11 and 16 fail at their drawn point, 6 and 20 do not (judged as
 * the suite judges, their starting case would not fail and nothing would shrink). */
static void test_alloc_failure_every(void)
{
    pc_error err;
    pc_fault_reset();
    CHECK_OK(pc_fault_enable_list("fold-skips-errors", &err), &err);
    pc_check_config cc, every;
    pc_check_config_default(&cc);
    CHECK_OK(pc_check_config_select(&cc, "alloc-failure", &err), &err);
    every = cc;
    every.alloc_every = true;
    static const int pads[] = {6, 11, 16, 20};
    for (size_t i = 0; i < sizeof pads / sizeof pads[0]; i++) {
        pc_case c;
        build_fold_padded(&c, pads[i]);
        pc_check_result res;
        CHECK_OK(pc_case_check(&c, &every, &res, &err), &err);
        pc_failure target = res.failure;
        CHECK_MSG(res.failed && strcmp(target.kind, "swallowed") == 0, "padding %d: %s", pads[i],
                  res.failed ? target.message : "passes");
        pc_check_result_free(&res);
        CHECK_OK(pc_case_check(&c, &cc, &res, &err), &err);
        bool drawn = res.failed;
        pc_check_result_free(&res);
        pc_shrink_options o;
        pc_shrink_options_default(&o);
        o.max_seconds = 30;
        o.isolate = false;
        pc_shrink_result r;
        CHECK_OK(pc_shrink_model(&c, &cc, &target, &o, &r, &err), &err);
        CHECK(r.alloc_every);
        CHECK_MSG(r.nodes_after <= 2, "padding %d: %u -> %u nodes", pads[i], r.nodes_before, r.nodes_after);
        if (r.kase.model) {
            CHECK_OK(pc_case_check(&r.kase, &every, &res, &err), &err);
            CHECK(res.failed && pc_failure_same(&res.failure, &target));
            pc_check_result_free(&res);
        }
        printf("  alloc-failure/swallowed, padding %d (%s at its drawn point): %u -> %u nodes, %u checks, "
               "%.2f s\n",
               pads[i], drawn ? "fails" : "passes", r.nodes_before, r.nodes_after, r.checks, r.seconds);
        pc_shrink_result_free(&r);
        pc_case_free(&c);
    }
    pc_fault_reset();
}

/* ---- phase 1 on generated cases
 * ----------------------------------------------------------------------------------- */

static const char *const families[] = {"float", "nhwc", "qdq", "qlinear", "annotated", "eps"};
#define N_FAMILIES (sizeof families / sizeof families[0])

static pc_status always_pred(void *ctx, const pc_case *c, pc_check_result *res, bool *interesting,
                             pc_error *err)
{
    (void)ctx, (void)res, (void)err;
    *interesting = c->model->graph->n_nodes >= 1;
    return PC_OK;
}

typedef struct op_ctx {
    const char *op;
} op_ctx;

static pc_status has_op_pred(void *ctx, const pc_case *c, pc_check_result *res, bool *interesting,
                             pc_error *err)
{
    (void)res, (void)err;
    *interesting = find_op(c->model, ((const op_ctx *)ctx)->op) != NULL;
    return PC_OK;
}

/* Generates the case of (family, seed); false when the generator refuses (reported as a failure). */
static bool gen_random(const char *family, uint64_t seed, pc_gen_config *cfg, pc_choices *ch, pc_case *c)
{
    pc_gen_config_default(cfg);
    cfg->family = family;
    pc_choices_init_random(ch, seed);
    pc_error err;
    memset(c, 0, sizeof *c);
    pc_status st = pc_case_generate(cfg, ch, c, &err);
    CHECK_MSG(st == PC_OK, "%s seed %llu: %s", family, (unsigned long long)seed, err.message);
    return st == PC_OK;
}

/* Regenerating from the result's choices must give the result's model exactly (phase 1 alone never edits it).
 */
static bool replays_exactly(const pc_gen_config *cfg, const pc_shrink_result *r)
{
    pc_choices ch;
    pc_choices_init_replay(&ch, r->choices, r->n_choices);
    pc_case c;
    memset(&c, 0, sizeof c);
    pc_error err;
    bool same = false;
    if (pc_case_generate(cfg, &ch, &c, &err) == PC_OK) {
        char diff[256] = "";
        same = pc_model_equal(c.model, r->kase.model, diff, sizeof diff);
        if (!same) fprintf(stderr, "replay differs: %s\n", diff);
    }
    pc_case_free(&c);
    pc_choices_free(&ch);
    return same;
}

/* The generator's contract: the all-zero sequence is the one-node case. With a predicate every case
 * satisfies, phase 1 must get there: no choices left at all (trailing zeros are dropped), one node. */
static void test_choices_to_zero(void)
{
    for (size_t f = 0; f < N_FAMILIES; f++) {
        for (uint64_t seed = 1; seed <= 3; seed++) {
            pc_gen_config cfg;
            pc_choices ch;
            pc_case c;
            if (!gen_random(families[f], seed * 7919 + f, &cfg, &ch, &c)) continue;
            pc_shrink_options o;
            pc_shrink_options_default(&o);
            o.max_seconds = 60;
            o.isolate = false;
            o.graph_phase = false;
            pc_shrink_result r;
            pc_error err;
            CHECK_OK(pc_shrink_case_fn(&cfg, ch.values, ch.n, always_pred, NULL, &o, &r, &err), &err);
            CHECK_MSG(r.n_choices == 0 && r.kase.model && r.kase.model->graph->n_nodes == 1,
                      "%s seed %llu: %zu choices, %u nodes left", families[f], (unsigned long long)seed,
                      r.n_choices, r.kase.model ? r.kase.model->graph->n_nodes : 0);
            CHECK(!r.graph_edited && r.nodes_before == c.model->graph->n_nodes);
            CHECK(replays_exactly(&cfg, &r));
            pc_shrink_result_free(&r);
            pc_case_free(&c);
            pc_choices_free(&ch);
        }
    }
}

/* A predicate on one op of the case: the result still has it, replays exactly from its choices, is no bigger;
 * with the graph phase as well it is at most as big again. Prints the node counts. */
static void test_choices_keep_op(void)
{
    uint32_t n_runs = 0, sum_before = 0, sum_p1 = 0, sum_p2 = 0, max_p2 = 0;
    for (size_t f = 0; f < N_FAMILIES; f++) {
        for (uint64_t seed = 1; seed <= 4; seed++) {
            pc_gen_config cfg;
            pc_choices ch;
            pc_case c;
            if (!gen_random(families[f], seed * 104729 + f, &cfg, &ch, &c)) continue;
            /* the op of the last node: usually not what an all-zero sequence makes */
            op_ctx oc = {c.model->graph->last->op_type};
            pc_shrink_options o;
            pc_shrink_options_default(&o);
            o.max_seconds = 60;
            o.isolate = false;
            o.graph_phase = false;
            pc_shrink_result r1, r2;
            pc_error err;
            CHECK_OK(pc_shrink_case_fn(&cfg, ch.values, ch.n, has_op_pred, &oc, &o, &r1, &err), &err);
            o.graph_phase = true;
            CHECK_OK(pc_shrink_case_fn(&cfg, ch.values, ch.n, has_op_pred, &oc, &o, &r2, &err), &err);
            if (r1.kase.model && r2.kase.model) {
                CHECK(find_op(r1.kase.model, oc.op) && find_op(r2.kase.model, oc.op));
                CHECK(r1.n_choices <= ch.n && r1.nodes_after <= r1.nodes_before);
                CHECK_MSG(replays_exactly(&cfg, &r1), "%s seed %llu", families[f], (unsigned long long)seed);
                CHECK(r2.nodes_after <= r1.nodes_after);
                CHECK_OK(pc_model_verify(r2.kase.model, &err), &err);
                n_runs++;
                sum_before += r1.nodes_before;
                sum_p1 += r1.nodes_after;
                sum_p2 += r2.nodes_after;
                if (r2.nodes_after > max_p2) max_p2 = r2.nodes_after;
            }
            pc_shrink_result_free(&r1);
            pc_shrink_result_free(&r2);
            pc_case_free(&c);
            pc_choices_free(&ch);
        }
    }
    printf(
        "  keep-one-op over %u generated cases: mean nodes %.1f -> %.1f (choices) -> %.1f (+graph), max %u\n",
        n_runs, n_runs ? (double)sum_before / n_runs : 0, n_runs ? (double)sum_p1 / n_runs : 0,
        n_runs ? (double)sum_p2 / n_runs : 0, max_p2);
}

/* ---- planted faults through the real properties: repro sizes and replay
 * ------------------------------------------ */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* For each planted fault: the first few generated cases (families round robin) that fail under it are shrunk
 * with every property on, as the suite does; each repro must fail with the same signature when checked again
 * (and, when the graph phase did not edit it, when regenerated from its choices). Sizes and times are
 * printed, not asserted. */
static void test_faults_shrink(void)
{
    enum { PER_FAULT = 3, TRIES = 60 };
    uint32_t sizes[PC_FAULT_COUNT * PER_FAULT], n_sizes = 0, replays = 0, replays_same = 0;
    double worst = 0;
    for (int f = 0; f < PC_FAULT_COUNT; f++) {
        pc_error err;
        pc_fault_reset();
        CHECK_OK(pc_fault_enable_list(pc_fault_name((pc_fault)f), &err), &err);
        /* the property that catches each fault (with every property on, an unrelated failure found first
         * would hide it) */
        static const char *const catcher[PC_FAULT_COUNT] = {[PC_FAULT_FUSION_DROPS_ANNOTATION] =
                                                                "annotations",
                                                            [PC_FAULT_LEVEL2_FORGETS_EP] = "ep-assignment",
                                                            [PC_FAULT_CONCAT_AXIS] = "numerics",
                                                            [PC_FAULT_SOFTMAX_OLD_OPSET] = "numerics",
                                                            [PC_FAULT_SKIP_CANCEL] = "transpose-minimal",
                                                            [PC_FAULT_QDQ_ROUNDING] = "numerics",
                                                            [PC_FAULT_RESHAPE_PUSH] = "numerics"};
        pc_check_config cc;
        pc_check_config_default(&cc);
        CHECK_OK(pc_check_config_select(&cc, catcher[f] ? catcher[f] : "numerics", &err), &err);
        int found = 0, tried = 0;
        for (uint64_t seed = 1; seed <= TRIES && found < PER_FAULT; seed++) {
            pc_gen_config cfg;
            pc_choices ch;
            pc_case c;
            tried++;
            if (!gen_random(families[seed % N_FAMILIES], seed * 31 + (uint64_t)f, &cfg, &ch, &c)) continue;
            pc_check_result res;
            CHECK_OK(pc_case_check(&c, &cc, &res, &err), &err);
            bool hit = res.failed && res.failure.outcome == PC_PROP_FAIL;
            pc_failure target = res.failure;
            pc_check_result_free(&res);
            if (hit) {
                /* a failure without the fault is a real finding, not this fault's: skip it */
                pc_fault_reset();
                CHECK_OK(pc_case_check(&c, &cc, &res, &err), &err);
                hit = !res.failed;
                pc_check_result_free(&res);
                CHECK_OK(pc_fault_enable_list(pc_fault_name((pc_fault)f), &err), &err);
            }
            if (hit) {
                found++;
                pc_shrink_options o;
                pc_shrink_options_default(&o);
                o.max_seconds = 60;
                o.isolate = false;
                pc_shrink_result r;
                CHECK_OK(pc_shrink_case(&cfg, ch.values, ch.n, &cc, &target, &o, &r, &err), &err);
                if (r.kase.model) {
                    sizes[n_sizes++] = r.nodes_after;
                    if (r.seconds > worst) worst = r.seconds;
                    char sig[128];
                    pc_failure_signature(&target, sig, sizeof sig);
                    printf("  %-24s %-52s %2u -> %u nodes, %4u checks, %.2f s\n", pc_fault_name((pc_fault)f),
                           sig, r.nodes_before, r.nodes_after, r.checks, r.seconds);
                    CHECK_OK(pc_case_check(&r.kase, &cc, &res, &err), &err);
                    replays++;
                    bool same = res.failed && pc_failure_same(&res.failure, &target);
                    replays_same += same;
                    CHECK_MSG(same, "%s: the repro does not fail as %s on replay", pc_fault_name((pc_fault)f),
                              sig);
                    pc_check_result_free(&res);
                    if (!r.graph_edited) {
                        pc_case again;
                        pc_choices rch;
                        pc_choices_init_replay(&rch, r.choices, r.n_choices);
                        CHECK_OK(pc_case_generate(&cfg, &rch, &again, &err), &err);
                        CHECK_OK(pc_case_check(&again, &cc, &res, &err), &err);
                        CHECK(res.failed && pc_failure_same(&res.failure, &target));
                        pc_check_result_free(&res);
                        pc_case_free(&again);
                        pc_choices_free(&rch);
                    }
                }
                pc_shrink_result_free(&r);
            }
            pc_case_free(&c);
            pc_choices_free(&ch);
        }
        if (!found) printf("  %-24s not caught in %d generated cases\n", pc_fault_name((pc_fault)f), tried);
    }
    pc_fault_reset();
    if (n_sizes) {
        qsort(sizes, n_sizes, sizeof sizes[0], cmp_u32);
        printf("  planted faults: %u repros, median %u nodes, max %u; %u/%u fail the same way on replay; "
               "slowest "
               "shrink %.2f s\n",
               n_sizes, sizes[n_sizes / 2], sizes[n_sizes - 1], replays_same, replays, worst);
    }
}

/* The biggest of the first 80 generated float cases (max_nodes 200; the generator stops with 12% odds per op,
 * so they run to a few dozen nodes) that fails under a planted fault: both phases, isolated checks as the
 * suite runs them. The time is printed for docs/shrinking.md, never asserted. */
static void test_big_generated(void)
{
    pc_error err;
    pc_fault_reset();
    CHECK_OK(pc_fault_enable_list("level2-forgets-ep", &err), &err);
    pc_check_config cc;
    pc_check_config_default(&cc);
    CHECK_OK(pc_check_config_select(&cc, "ep-assignment", &err), &err);
    pc_gen_config cfg;
    pc_gen_config_default(&cfg);
    cfg.max_nodes = 200;
    uint64_t best_seed = 0;
    uint32_t best_nodes = 0;
    for (uint64_t seed = 1; seed <= 80; seed++) {
        pc_choices ch;
        pc_choices_init_random(&ch, seed);
        pc_case c;
        if (pc_case_generate(&cfg, &ch, &c, &err) != PC_OK) {
            CHECK_MSG(false, "float seed %llu, 200 nodes: %s", (unsigned long long)seed, err.message);
            pc_choices_free(&ch);
            continue;
        }
        pc_check_result res;
        CHECK_OK(pc_case_check(&c, &cc, &res, &err), &err);
        if (res.failed && c.model->graph->n_nodes > best_nodes) {
            best_nodes = c.model->graph->n_nodes;
            best_seed = seed;
        }
        pc_check_result_free(&res);
        pc_case_free(&c);
        pc_choices_free(&ch);
    }
    CHECK_MSG(best_seed != 0, "no generated case failed under level2-forgets-ep");
    if (best_seed) {
        pc_choices ch;
        pc_choices_init_random(&ch, best_seed);
        pc_case c;
        pc_check_result res;
        memset(&res, 0, sizeof res);
        CHECK_OK(pc_case_generate(&cfg, &ch, &c, &err), &err);
        CHECK_OK(pc_case_check(&c, &cc, &res, &err), &err);
        pc_shrink_options o;
        pc_shrink_options_default(&o);
        o.max_seconds = 120;
#ifdef PC_SANITIZE_BUILD
        o.isolate =
            false; /* a fork of an ASan process costs ~0.2 s: 40 s of this test for nothing it checks */
#endif
        pc_shrink_result r;
        CHECK_OK(pc_shrink_case(&cfg, ch.values, ch.n, &cc, &res.failure, &o, &r, &err), &err);
        CHECK(r.kase.model && r.check.failed && pc_failure_same(&r.check.failure, &res.failure));
        char sig[128];
        pc_failure_signature(&res.failure, sig, sizeof sig);
        printf("  biggest failing generated case: %u nodes (%zu choices), %s -> %u nodes, %zu choices, %u "
               "checks, "
               "%.2f s (%s)\n",
               r.nodes_before, ch.n, sig, r.nodes_after, r.n_choices, r.checks, r.seconds,
               o.isolate ? "isolated" : "in process");
        pc_shrink_result_free(&r);
        pc_check_result_free(&res);
        pc_case_free(&c);
        pc_choices_free(&ch);
    }
    pc_fault_reset();
}

/* ---- the candidate worker (pc_iso_worker, shrink_internal.h)
 * ------------------------------------------------------------- */

/* A synthetic check steered by the case's EP list: "pass", "fail", "crash" (SIGSEGV), "hang", "exit" (status
 * 3, no result), "error" (the check's own error status), "echo" (fails with a digest of what it was handed:
 * inputs, EP text, layer assignment, family, node count — the request must carry the case exactly), "leak"
 * (passes, leaking 64 bytes). */
static uint64_t digest_case(const pc_case *c)
{
    uint64_t h = 0xcbf29ce484222325ull;
#define MIX(p, n)                                                                                            \
    do {                                                                                                     \
        const uint8_t *q_ = (const uint8_t *)(p);                                                            \
        for (size_t i_ = 0; i_ < (size_t)(n); i_++)                                                          \
            h = (h ^ q_[i_]) * 0x100000001b3ull;                                                             \
    } while (0)
    for (uint32_t i = 0; i < c->n_inputs; i++) {
        const pc_data *d = c->inputs[i];
        MIX(&d->dtype, sizeof d->dtype);
        MIX(d->dims, (size_t)d->rank * sizeof *d->dims);
        MIX(d->data, d->n_bytes);
    }
    if (c->ep_text) MIX(c->ep_text, strlen(c->ep_text));
    if (c->layer_assignment) MIX(c->layer_assignment, strlen(c->layer_assignment));
    if (c->family) MIX(c->family, strlen(c->family));
    MIX(&c->model->graph->n_nodes, sizeof c->model->graph->n_nodes);
#undef MIX
    return h;
}

static pc_status steered_check(const pc_case *c, const pc_check_config *cfg, pc_check_result *res,
                               pc_error *err)
{
    memset(res, 0, sizeof *res);
    const char *what = c->ep_list ? c->ep_list : "";
    if (cfg->on_pass) cfg->on_pass(cfg->on_pass_ctx, "steer");
    if (strcmp(what, "crash") == 0) {
        signal(SIGSEGV, SIG_DFL); /* a plain signal death, whatever handler a sanitizer installed */
        raise(SIGSEGV);
    }
    if (strcmp(what, "hang") == 0)
        for (;;)
            sleep(1);
    if (strcmp(what, "exit") == 0) exit(3);
    if (strcmp(what, "error") == 0) return pc_error_set(err, PC_ERR_INTERNAL, "steered error");
    if (strcmp(what, "leak") == 0) {
        volatile char *lost = malloc(64);
        if (lost) lost[0] = 1;
        lost = NULL;
    }
    if (strcmp(what, "fail") == 0 || strcmp(what, "echo") == 0) {
        res->failed = true;
        res->failure.outcome = PC_PROP_FAIL;
        snprintf(res->failure.property, sizeof res->failure.property, "numerics");
        snprintf(res->failure.pass, sizeof res->failure.pass, "steer");
        snprintf(res->failure.message, sizeof res->failure.message, "%016llx",
                 (unsigned long long)digest_case(c));
    }
    return PC_OK;
}

static void steer(pc_case *c, const char *what)
{
    free(c->ep_list);
    c->ep_list = strdup(what);
    if (!c->ep_list) pt_die("strdup", NULL);
}

/* Every outcome a forked child can have, through one worker: the same failures, the parent survives crashes
 * and hangs, a new worker after each, and a request carries the inputs and strings exactly. */
static void test_worker_outcomes(void)
{
    pc_case c;
    build_chain(&c, 6, 2, 5);
    c.ep_text = strdup("# no EPs\n");
    pc_check_config cc;
    pc_check_config_default(&cc);
    pc_iso_worker *w = NULL;
    pc_error err;
    CHECK_OK(pc_iso_worker_create(&cc, steered_check, 2.0, &w, &err), &err);
    static const struct {
        const char *what, *property, *kind;
        bool error;
    } steps[] = {{"pass", NULL, NULL, false},          {"fail", "numerics", "", false},
                 {"crash", "crash", "SIGSEGV", false}, {"pass", NULL, NULL, false},
                 {"hang", "timeout", "", false},       {"echo", "numerics", "", false},
                 {"exit", "crash", "exit-3", false},   {"error", NULL, NULL, true},
                 {"pass", NULL, NULL, false}};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        steer(&c, steps[i].what);
        pc_check_result r;
        pc_error e;
        pc_error_clear(&e);
        pc_status st = pc_iso_worker_check(w, &c, &r, &e);
        if (steps[i].error) {
            CHECK_MSG(st == PC_ERR_INTERNAL && strstr(e.message, "steered error"), "%s: status %d (%s)",
                      steps[i].what, (int)st, e.message);
            continue;
        }
        CHECK_OK(st, &e);
        if (!steps[i].property) {
            CHECK_MSG(!r.failed, "%s: failed as %s (%s)", steps[i].what, r.failure.property,
                      r.failure.message);
        } else {
            CHECK_MSG(r.failed && strcmp(r.failure.property, steps[i].property) == 0 &&
                          strcmp(r.failure.kind, steps[i].kind) == 0 && strcmp(r.failure.pass, "steer") == 0,
                      "%s: got %s@%s/%s (%s)", steps[i].what, r.failure.property, r.failure.pass,
                      r.failure.kind, r.failure.message);
        }
        if (strcmp(steps[i].what, "echo") == 0) {
            char want[32];
            snprintf(want, sizeof want, "%016llx", (unsigned long long)digest_case(&c));
            CHECK_MSG(strcmp(r.failure.message, want) == 0, "echo: the worker saw %s, the case is %s",
                      r.failure.message, want);
        }
        pc_check_result_free(&r);
    }
    pc_iso_worker_stats stats;
    int status = pc_iso_worker_destroy(w, &stats);
    CHECK_MSG(status == 0, "the worker ended with wait status %d", status);
    /* the first worker, one after the crash, one after the hang, one after the exit */
    CHECK_MSG(stats.forks == 4 && stats.fallbacks == 0, "%u workers, %u fallbacks", stats.forks,
              stats.fallbacks);
#ifdef PC_SANITIZE_BUILD
    /* a leak is not this check's failure (as in a forked child whose leak follows a property failure it
     * reported) but the worker's normal exit finds it */
    const char *lsan = getenv("ASAN_OPTIONS");
    if (!lsan || !strstr(lsan, "detect_leaks=0")) {
        CHECK_OK(pc_iso_worker_create(&cc, steered_check, 10.0, &w, &err), &err);
        steer(&c, "leak");
        pc_check_result r;
        CHECK_OK(pc_iso_worker_check(w, &c, &r, &err), &err);
        CHECK(!r.failed);
        pc_check_result_free(&r);
        fprintf(stderr, "test_shrink: a leak report of 64 bytes from steered_check is expected here:\n");
        status = pc_iso_worker_destroy(w, NULL);
        /* exit status 23, or SIGABRT with abort_on_error=1: what a forked child's exit gives */
        CHECK_MSG(status != 0, "the leaking worker ended with wait status %d", status);
    }
#endif
    pc_case_free(&c);
}

typedef struct iso_pred {
    const pc_check_config *cc;
    const pc_failure *target;
    pc_iso_worker *worker; /* NULL: a forked child per candidate */
} iso_pred;

static pc_status iso_pred_check(void *ctx, const pc_case *c, pc_check_result *res, bool *interesting,
                                pc_error *err)
{
    const iso_pred *p = ctx;
    pc_status st = p->worker ? pc_iso_worker_check(p->worker, c, res, err)
                             : pc_case_check_isolated(c, p->cc, 30, res, err);
    if (st != PC_OK) return st;
    *interesting = res->failed && pc_failure_same(&res->failure, p->target);
    return PC_OK;
}

/* A shrink through the worker takes exactly the steps of one that forks a child per candidate: same checks,
 * same accepted candidates, same choices, same model. Every property on, as the suite shrinks; budget by
 * checks, not time, so both runs stop at the same candidate. */
static void test_worker_same_shrink(void)
{
    static const struct {
        const char *fault, *family, *property;
    } runs[] = {{"concat-wrong-axis", "nhwc", "numerics"},
                {"fusion-drops-annotation", "annotated", "annotations"}};
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        pc_error err;
        pc_fault_reset();
        CHECK_OK(pc_fault_enable_list(runs[k].fault, &err), &err);
        pc_check_config cc;
        pc_check_config_default(&cc);
        pc_gen_config cfg;
        pc_choices ch;
        pc_case c;
        pc_check_result res;
        memset(&res, 0, sizeof res);
        bool found = false;
        for (uint64_t seed = 1; seed <= 1000 && !found; seed++) {
            if (!gen_random(runs[k].family, seed, &cfg, &ch, &c)) continue;
            CHECK_OK(pc_case_check(&c, &cc, &res, &err), &err);
            found = res.failed && strcmp(res.failure.property, runs[k].property) == 0 &&
                    c.model->graph->n_nodes >= 6;
            if (!found) {
                pc_check_result_free(&res);
                pc_case_free(&c);
                pc_choices_free(&ch);
            }
        }
        CHECK_MSG(found, "%s: no %s case failing %s in 1000 seeds", runs[k].fault, runs[k].family,
                  runs[k].property);
        if (!found) continue;
        pc_shrink_options o;
        pc_shrink_options_default(&o);
        o.max_seconds = 600;
        o.max_checks = 60;
        pc_shrink_result r[2];
        pc_iso_worker_stats stats = {0};
        for (int mode = 0; mode < 2; mode++) {
            iso_pred p = {&cc, &res.failure, NULL};
            if (mode) CHECK_OK(pc_iso_worker_create(&cc, NULL, 30, &p.worker, &err), &err);
            CHECK_OK(pc_shrink_case_fn(&cfg, ch.values, ch.n, iso_pred_check, &p, &o, &r[mode], &err), &err);
            if (mode) CHECK(pc_iso_worker_destroy(p.worker, &stats) == 0);
        }
        char sig[128];
        pc_failure_signature(&res.failure, sig, sizeof sig);
        printf("  worker vs a child per candidate, %s: %u -> %u / %u nodes, %u / %u checks, %u / %u accepted "
               "(%u workers, %u fallbacks)\n",
               sig, r[0].nodes_before, r[0].nodes_after, r[1].nodes_after, r[0].checks, r[1].checks,
               r[0].accepted, r[1].accepted, stats.forks, stats.fallbacks);
        CHECK(r[0].checks == r[1].checks && r[0].accepted == r[1].accepted &&
              r[0].nodes_after == r[1].nodes_after);
        CHECK(r[0].n_choices == r[1].n_choices &&
              (!r[0].n_choices ||
               memcmp(r[0].choices, r[1].choices, r[0].n_choices * sizeof *r[0].choices) == 0));
        char diff[256] = "";
        CHECK_MSG(r[0].kase.model && r[1].kase.model &&
                      pc_model_equal(r[0].kase.model, r[1].kase.model, diff, sizeof diff),
                  "%s: the shrunk models differ: %s", sig, diff);
        CHECK(strcmp(r[0].check.failure.message, r[1].check.failure.message) == 0);
        CHECK(stats.requests > 0 && stats.fallbacks == 0);
        pc_shrink_result_free(&r[0]);
        pc_shrink_result_free(&r[1]);
        pc_check_result_free(&res);
        pc_case_free(&c);
        pc_choices_free(&ch);
    }
    pc_fault_reset();
}

/* ---- --write-model DIR
 * --------------------------------------------------------------------------------------------- */

static int write_models(const char *dir)
{
    /* Conv -> Relu at node 30 of 60 and at node 120 of 200 (level2-forgets-ep breaks its fusion) */
    static const struct {
        const char *name;
        int len, conv_at;
    } models[] = {{"conv_relu_chain.onnx", 60, 30}, {"conv_relu_chain200.onnx", 200, 120}};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        pc_case c;
        build_chain(&c, models[i].len, models[i].conv_at, 21);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, models[i].name);
        pc_error err;
        pc_status st = pc_model_save_file(c.model, path, &err);
        pc_case_free(&c);
        if (st != PC_OK) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
    }
    /* a fold fault-skips-errors breaks at a few of its 20-odd allocations, none of them the drawn point */
    pc_case c;
    build_fold_padded(&c, 20);
    char path[4096];
    snprintf(path, sizeof path, "%s/fold_padded20.onnx", dir);
    pc_error err;
    pc_status st = pc_model_save_file(c.model, path, &err);
    pc_case_free(&c);
    if (st != PC_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-model") == 0) return write_models(argv[2]);
    test_graph_phase_conv_relu();
    test_replace_keeps_numerics();
    test_start_and_budget();
    test_through_runner();
    test_alloc_failure_every();
    test_choices_to_zero();
    test_choices_keep_op();
    test_faults_shrink();
    test_big_generated();
    test_worker_outcomes();
    test_worker_same_shrink();
    return pc_test_finish("test_shrink");
}
