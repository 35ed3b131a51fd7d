/* The validity property's reference-type check (properties/prop_validity.c) on hand-built graphs that
 * declare a type the reference executor does not make, where shape inference cannot tell: a Reshape to a
 * shape that is a graph input, a Range in a Loop body, a Loop's output (no shape rule). The oracle is the
 * case's own input data, worked out by hand: Reshape(x[2,3], {3,2}) is [3,2]; Range(0, i, 1) in iteration i
 * of a 3-trip Loop is [i]. Also the cache that check reads (pc_check_ref_types): one entry per node output,
 * a Loop body's value again only when its type changes, and no second reference run for validity. */
#include "properties/property.h"
#include "tests/onnx_builder.h"
#include "tests/pass_test_util.h"

static pc_dim known(int64_t n)
{
    return (pc_dim){.kind = PC_DIM_KNOWN, .size = n};
}

static pc_dim sym(const char *name)
{
    return (pc_dim){.kind = PC_DIM_SYMBOLIC, .symbol = name};
}

static void declare(pc_model *m, const char *name, pc_dtype dt, pc_dim d0, pc_dim d1)
{
    pc_dim dims[2] = {d0, d1};
    pc_type t = {.kind = PC_TYPE_TENSOR, .elem = dt, .shape = {.rank = 2, .dims = dims}};
    pc_error err;
    if (pc_value_set_type(pc_graph_find_value(m->graph, name), &t, &err) != PC_OK) pt_die(name, &err);
}

static pc_data *i64_input(int64_t a, int64_t b)
{
    pc_error err;
    pc_data *d = pc_data_new_tensor(PC_DTYPE_INT64, 1, (int64_t[]){2}, &err);
    if (!d) pt_die("pc_data_new_tensor", &err);
    ((int64_t *)d->data)[0] = a;
    ((int64_t *)d->data)[1] = b;
    return d;
}

/* x[2,3] -> Identity -> a; r = Reshape(a, s) with s = {3,2}; q = Reshape(a, t) with t = {2,3}; s and t are
 * graph inputs, so shape inference knows only the ranks and the declared dims stand. eliminate_identity,
 * the first pass, changes the graph: validity judges the declared types there. */
static pc_case reshape_case(pc_dim r0, pc_dim r1, pc_dim q0, pc_dim q1)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    pt_input(m, "s", PC_DTYPE_INT64, 1, (int64_t[]){2});
    pt_input(m, "t", PC_DTYPE_INT64, 1, (int64_t[]){2});
    pt_node(m, "Identity", "", "x", "a", NULL);
    pt_node(m, "Reshape", "", "a,s", "r", NULL);
    pt_node(m, "Reshape", "", "a,t", "q", NULL);
    declare(m, "r", PC_DTYPE_FLOAT, r0, r1);
    declare(m, "q", PC_DTYPE_FLOAT, q0, q1);
    pt_output(m, "r");
    pt_output(m, "q");
    pc_error err;
    if (pc_graph_infer_shapes(m->graph, &err) != PC_OK) pt_die("infer", &err);
    pc_case c = {.model = m, .n_inputs = 3};
    c.inputs = calloc(3, sizeof *c.inputs);
    uint64_t seed = 7;
    c.inputs[0] = pt_random_input(m->graph->inputs[0], &seed);
    c.inputs[1] = i64_input(3, 2);
    c.inputs[2] = i64_input(2, 3);
    c.ep_list = strdup("cpu");
    c.family = "hand";
    return c;
}

/* Loop(M = 3, x[2]) with the body (i, c, v) -> (c, v + v) and w = Range(0, i, 1), a body value no output
 * uses, declared int64[w_dim] (w_dim < 0: an unknown dim); the Loop's output declared `out` [2]. x goes
 * through an Identity first, for eliminate_identity to change the graph. */
static pc_case loop_case(int64_t w_dim, int32_t out)
{
    ob_pool p = {0};
    Onnx__ModelProto *mp = ob_model(&p, 8);
    ob_opset(&p, mp, "", 17);
    Onnx__GraphProto *g = ob_graph(&p, mp, "main");
    const int32_t F = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, I64 = ONNX__TENSOR_PROTO__DATA_TYPE__INT64,
                  B = ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
    const int64_t two[1] = {2};
    ob_graph_input(&p, g, "x", ob_tensor_type(&p, F, 1, two));
    static const char *const scalar_names[3] = {"M", "zero", "one"};
    const int64_t scalar_values[3] = {3, 0, 1};
    for (int k = 0; k < 3; k++) {
        Onnx__TensorProto *t = ob_tensor(&p, scalar_names[k], I64, 0, NULL);
        ob_tensor_set_int64s(&p, t, 1, &scalar_values[k]);
        OB_APPEND(&p, g->initializer, g->n_initializer, t);
    }
    ob_node(&p, g, "Identity", "id", 1, (const char *[]){"x"}, 1, (const char *[]){"x1"});
    Onnx__NodeProto *loop =
        ob_node(&p, g, "Loop", "loop", 3, (const char *[]){"M", "", "x1"}, 1, (const char *[]){"vf"});
    Onnx__GraphProto *body = ob_graph(&p, NULL, "body");
    ob_graph_input(&p, body, "i", ob_tensor_type(&p, I64, 0, NULL));
    ob_graph_input(&p, body, "c", ob_tensor_type(&p, B, 0, NULL));
    ob_graph_input(&p, body, "v", ob_tensor_type(&p, F, 1, two));
    ob_node(&p, body, "Identity", "cond", 1, (const char *[]){"c"}, 1, (const char *[]){"c_out"});
    ob_node(&p, body, "Add", "add", 2, (const char *[]){"v", "v"}, 1, (const char *[]){"v_out"});
    ob_node(&p, body, "Range", "range", 3, (const char *[]){"zero", "i", "one"}, 1, (const char *[]){"w"});
    const int64_t wd[1] = {w_dim};
    Onnx__TypeProto *wt = ob_tensor_type(&p, I64, 1, wd);
    if (w_dim < 0) { /* an unknown dim: no dim_value */
        wt->tensor_type->shape->dim[0]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE__NOT_SET;
    }
    ob_graph_value_info(&p, body, "w", wt);
    ob_graph_output(&p, body, "c_out", ob_tensor_type(&p, B, 0, NULL));
    ob_graph_output(&p, body, "v_out", ob_tensor_type(&p, F, 1, two));
    ob_attr_graph(&p, loop, "body", body);
    ob_graph_output(&p, g, "vf", ob_tensor_type(&p, out, 1, two));
    size_t size;
    uint8_t *bytes = ob_pack(&p, &mp->base, &size);
    pc_model *m = NULL;
    pc_error err;
    if (pc_model_load_bytes(bytes, size, NULL, &m, &err) != PC_OK) pt_die("loading the Loop model", &err);
    ob_pool_free(&p);
    pc_case c = {.model = m, .n_inputs = 1};
    c.inputs = calloc(1, sizeof *c.inputs);
    uint64_t seed = 11;
    c.inputs[0] = pt_random_input(m->graph->inputs[0], &seed);
    c.ep_list = strdup("cpu");
    c.family = "hand";
    return c;
}

static size_t validity_index(void)
{
    size_t i = 0;
    while (pc_property_at(i) != &pc_prop_validity)
        i++;
    return i;
}

/* Checks c with the properties in `list` (and `extra`); the result is the caller's to free. */
static void check(const pc_case *c, const char *list, const pc_property *extra, pc_check_result *res)
{
    pc_check_config cc;
    pc_check_config_default(&cc);
    pc_error err;
    CHECK_STATUS(pc_check_config_select(&cc, list, &err), PC_OK, &err);
    cc.extra = extra;
    CHECK_STATUS(pc_case_check(c, &cc, res, &err), PC_OK, &err);
}

/* validity judged every pass it saw and found nothing (no skip either: the reference ran every time) */
static void check_passes(const pc_case *c, const char *what)
{
    pc_check_result res;
    check(c, "validity", NULL, &res);
    const uint32_t *n = res.counts[validity_index()];
    CHECK_MSG(!res.failed, "%s: %s@%s: %s", what, res.failure.property, res.failure.pass,
              res.failure.message);
    CHECK_MSG(n[PC_PROP_PASS] >= 1 && !n[PC_PROP_FAIL] && !n[PC_PROP_SKIP] && !n[PC_PROP_ERROR],
              "%s: pass %u fail %u skip %u error %u", what, n[PC_PROP_PASS], n[PC_PROP_FAIL], n[PC_PROP_SKIP],
              n[PC_PROP_ERROR]);
    /* validity's own judgement ran the reference: at least once, and at most once per changed pass */
    CHECK_MSG(res.stats.ref_runs >= 1 && res.stats.ref_runs <= res.stats.passes_changed,
              "%s: %u runs, %u passes", what, res.stats.ref_runs, res.stats.passes_changed);
    pc_check_result_free(&res);
}

/* validity fails at eliminate_identity with kind reference-type and exactly `want` as the message */
static void check_fails(const pc_case *c, const char *what, const char *want)
{
    pc_check_result res;
    check(c, "validity", NULL, &res);
    CHECK_MSG(res.failed, "%s: no failure", what);
    CHECK_MSG(strcmp(res.failure.property, "validity") == 0 &&
                  strcmp(res.failure.pass, "eliminate_identity") == 0 &&
                  strcmp(res.failure.kind, "reference-type") == 0 && res.failure.outcome == PC_PROP_FAIL,
              "%s: %s@%s/%s", what, res.failure.property, res.failure.pass, res.failure.kind);
    CHECK_MSG(strcmp(res.failure.message, want) == 0, "%s:\n  got  %s\n  want %s", what, res.failure.message,
              want);
    pc_check_result_free(&res);
}

static void test_reshape(void)
{
    /* (a) declared as the reference makes them: known dims, and symbols that name one size each */
    pc_case c = reshape_case(known(3), known(2), known(2), known(3));
    check_passes(&c, "known dims");
    pc_case_free(&c);
    c = reshape_case(sym("n"), sym("m"), sym("m"), sym("n"));
    check_passes(&c, "consistent symbols");
    pc_case_free(&c);

    /* (b, c) a wrong known dim: r is [3,2], not [2,3]; the first value the run makes is named */
    c = reshape_case(known(2), known(3), known(2), known(3));
    check_fails(&c, "wrong dim",
                "eliminate_identity: value 'r' (output of Reshape node 'r') is declared float[2,3] but the "
                "reference makes float[3,2]: a dim differs (dim 0)");
    pc_case_free(&c);
    /* a symbol bound by one value and contradicted by another: 'n' is r's 3, then q's 2 */
    c = reshape_case(sym("n"), known(2), sym("n"), known(3));
    check_fails(&c, "contradicted symbol",
                "eliminate_identity: value 'q' (output of Reshape node 'q') is declared float[n,3] but the "
                "reference makes float[2,3]: a symbolic dim differs (dim 0: 'n' is 3 in 'r' but 2 here)");
    pc_case_free(&c);

    /* with numerics too, validity reads numerics' cached run. Two passes change the graph
     * (eliminate_identity, partition): numerics runs the graph before the first (1) and after each (2), and
     * at the end the original and the optimized graph (2). Validity's own run after each pass made that 7. */
    c = reshape_case(known(3), known(2), known(2), known(3));
    pc_check_result res;
    check(&c, "numerics,validity", NULL, &res);
    CHECK_MSG(!res.failed, "%s", res.failure.message);
    CHECK_MSG(res.stats.passes_changed == 2 && res.stats.ref_runs == 5, "%u runs for %u changed passes",
              res.stats.ref_runs, res.stats.passes_changed);
    pc_check_result_free(&res);
    pc_case_free(&c);
}

/* An extra property that counts, in the cached run of the graph after each pass, the entries of the body's
 * Add and Range and of the Loop. */
static struct {
    uint32_t add, range, loop, calls;
    pc_status st;
    /* the graph before each pass too: entries carried over from the previous pass's "after" would point at
     * the live graph's nodes, not at this object's */
    uint32_t before_calls, before_foreign;
} seen;

static pc_prop_outcome count_types(pc_check_ctx *ctx, char *msg, size_t size, const char **kind)
{
    (void)msg;
    (void)size;
    (void)kind;
    const pc_check_ref_type *types;
    uint32_t n;
    pc_error err;
    if ((seen.st = pc_check_ref_types(ctx, ctx->before, &types, &n, &err)) != PC_OK) return PC_PROP_PASS;
    seen.before_calls++;
    for (uint32_t i = 0; i < n; i++)
        if (types[i].node->graph->model != ctx->before) seen.before_foreign++;
    if ((seen.st = pc_check_ref_types(ctx, ctx->after, &types, &n, &err)) != PC_OK) return PC_PROP_PASS;
    seen.calls++;
    seen.add = seen.range = seen.loop = 0;
    for (uint32_t i = 0; i < n; i++) {
        const char *op = types[i].node->op_type;
        if (strcmp(op, "Add") == 0) seen.add++;
        if (strcmp(op, "Range") == 0) {
            /* in the order the iterations ran: [0], [1], [2] */
            CHECK(types[i].kind == PC_TYPE_TENSOR && types[i].dtype == PC_DTYPE_INT64 && types[i].rank == 1 &&
                  types[i].dims[0] == (int64_t)seen.range);
            seen.range++;
        }
        if (strcmp(op, "Loop") == 0) seen.loop++;
    }
    return PC_PROP_PASS;
}

static const pc_property counter = {"count-types", "test", count_types, NULL};

static void test_loop(void)
{
    pc_case c = loop_case(-1, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    check_passes(&c, "loop");

    /* three iterations: Add makes float[2] each time (one entry), Range [0], [1], [2] (three) */
    memset(&seen, 0, sizeof seen);
    pc_check_result res;
    check(&c, "validity", &counter, &res);
    CHECK_MSG(!res.failed, "%s", res.failure.message);
    CHECK_MSG(seen.st == PC_OK && seen.calls >= 1, "%s, %u calls", pc_status_name(seen.st), seen.calls);
    CHECK_MSG(seen.add == 1 && seen.range == 3 && seen.loop == 1, "add %u range %u loop %u", seen.add,
              seen.range, seen.loop);
    CHECK_MSG(seen.before_calls == 2 && seen.before_foreign == 0, "%u calls, %u entries of another graph",
              seen.before_calls, seen.before_foreign);
    pc_check_result_free(&res);
    pc_case_free(&c);

    /* w declared [0]: right in the first iteration, wrong in the second */
    c = loop_case(0, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    check_fails(&c, "body dim",
                "eliminate_identity: value 'w' (output of Range node 'range') is declared int64[0] but the "
                "reference makes int64[1]: a dim differs (dim 0)");
    pc_case_free(&c);

    /* the Loop's output declared int32 where the body makes float: core's shape inference for Loop (which the
     * reference used to be the only judge of) refuses the case before any pass */
    c = loop_case(-1, ONNX__TENSOR_PROTO__DATA_TYPE__INT32);
    pc_check_config cc;
    pc_check_config_default(&cc);
    pc_error err;
    CHECK_STATUS(pc_check_config_select(&cc, "validity", &err), PC_OK, &err);
    CHECK_STATUS(pc_case_check(&c, &cc, &res, &err), PC_ERR_TYPE, &err);
    CHECK_MSG(strstr(err.message, "'vf'") && strstr(err.message, "loop"), "names the node and value: %s",
              err.message);
    pc_check_result_free(&res);
    pc_case_free(&c);
}

/* The changed flag both ways, on validity's per-pass function directly (no pass in the tree lies about it:
 * the mutant `*changed = false` -> `true` of bench/mutate does): a pass that reports a change but leaves the
 * serialized graph byte-identical fails, as does one that reports none but changed it; partitioning (which
 * always reports a change) is exempt. */
static void test_changed_flag(void)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 1, (int64_t[]){3});
    pt_node(m, "Relu", "", "x", "y", NULL);
    pt_output(m, "y");
    uint8_t b[4] = {1, 2, 3, 4}, c[4] = {1, 2, 3, 5};
    pc_check_ctx ctx = {.pass = "eliminate_cast",
                        .level = 0,
                        .before = m,
                        .after = m,
                        .before_bytes = b,
                        .after_bytes = b,
                        .before_size = 4,
                        .after_size = 4};
    char msg[512];
    const char *kind = NULL;
    ctx.changed = true;
    ctx.bytes_changed = false;
    CHECK(pc_prop_validity.per_pass(&ctx, msg, sizeof msg, &kind) == PC_PROP_FAIL);
    CHECK_MSG(kind && strcmp(kind, "changed-flag") == 0 && strstr(msg, "reported a change"), "%s", msg);
    ctx.changed = false;
    ctx.bytes_changed = true;
    ctx.after_bytes = c;
    kind = NULL;
    CHECK(pc_prop_validity.per_pass(&ctx, msg, sizeof msg, &kind) == PC_PROP_FAIL);
    CHECK_MSG(kind && strcmp(kind, "changed-flag") == 0 && strstr(msg, "reported no change"), "%s", msg);
    ctx.pass = "partition";
    ctx.level = 2;
    ctx.changed = true;
    ctx.bytes_changed = false;
    ctx.after_bytes = b;
    kind = NULL;
    pc_prop_outcome o = pc_prop_validity.per_pass(&ctx, msg, sizeof msg, &kind);
    CHECK_MSG(!kind || strcmp(kind, "changed-flag") != 0, "partition: %s", msg);
    (void)o;
    pc_model_free(m);
}

int main(void)
{
    test_changed_flag();
    test_reshape();
    test_loop();
    return pc_test_finish("test_properties_validity");
}
