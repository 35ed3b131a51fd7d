/* The properties numerics, annotations, ep-assignment, validity, idempotence, roundtrip and determinism: each
 * judges hand-made pass results — a broken one must FAIL with the right kind, a correct one must PASS — and
 * the two planted faults (fusion-drops-annotation, level2-forgets-ep) are caught on hand-built cases run
 * through the real pipeline. Also the annotation and random-EP generator layers: all-zero draws add nothing,
 * random draws give annotations, layer rules and EP files the parsers accept, and replay reproduces them.
 *
 * How a hand-made pair reaches a property: the case runner checks a tiny case (x -> Identity -> y) and stops
 * after eliminate_identity; an extra property, called there, hands the property under test a copy of the
 * runner's context with `before`/`after` (and pass, level, flags, EPs, rules) replaced by the pair. The
 * reference outputs then come from the runner's cache keyed by those models, as in a real run. */
#include <math.h>

#include "generators/gen.h"
#include "generators/gen_layers.h"
#include "tests/pass_test_util.h"
#include "properties/property.h"
#include "reference/reference.h"
#include "properties/match.h"
#include "tests/test_util.h"

/* ---------------------------------------------------------------------------------------------------------------
 * Hand-made pairs.
 */
typedef struct pair {
    const pc_property *prop;
    bool final;
    const char *pass;
    int level;
    bool changed;
    pc_model *before, *after;
    const pc_model *after_bytes_from; /* serialize this instead of `after` (a saver that loses something) */
    const pc_ep *const *eps;          /* NULL: the runner's (cpu) */
    uint32_t n_eps;
    const pc_layer_rules *rules;
    const char *layer_assignment;
    const char *provider; /* the EP a level-2+ run is for (NULL: none) */
    int config_level;
    /* results */
    bool ran;
    pc_prop_outcome outcome;
    char kind[32];
    char msg[2048];
} pair;

static pair *current;

static uint8_t *save(const pc_model *m, size_t *size)
{
    uint8_t *b = NULL;
    pc_error err;
    if (pc_model_save_bytes(m, &b, size, &err) != PC_OK) pt_die("save", &err);
    return b;
}

static pc_prop_outcome hand_over(pc_check_ctx *ctx, char *msg, size_t size, const char **kind)
{
    (void)msg;
    (void)size;
    (void)kind;
    pair *p = current;
    if (p->ran) return PC_PROP_PASS;
    p->ran = true;
    pc_check_ctx c = *ctx;
    pc_case k = *ctx->kase;
    pc_check_config cfg = *ctx->config;
    k.layer_assignment = (char *)p->layer_assignment;
    cfg.level = p->config_level;
    c.kase = &k;
    c.config = &cfg;
    c.pass = p->final ? "end-to-end" : p->pass;
    c.level = p->final ? -1 : p->level;
    c.is_final = p->final;
    c.changed = p->changed;
    c.before = p->before;
    c.after = p->after;
    if (p->final) c.original = p->before;
    if (p->eps) {
        c.eps = p->eps;
        c.n_eps = p->n_eps;
    }
    c.rules = p->rules;
    c.provider = p->provider;
    size_t bs = 0, as = 0;
    uint8_t *bb = save(p->before, &bs), *ab = save(p->after_bytes_from ? p->after_bytes_from : p->after, &as);
    c.before_bytes = bb;
    c.before_size = bs;
    c.after_bytes = ab;
    c.after_size = as;
    c.bytes_changed = bs != as || memcmp(bb, ab, bs) != 0;
    const char *kd = NULL;
    p->msg[0] = '\0';
    pc_prop_fn fn = p->final ? p->prop->final : p->prop->per_pass;
    p->outcome = fn(&c, p->msg, sizeof p->msg, &kd);
    snprintf(p->kind, sizeof p->kind, "%s", kd ? kd : "");
    free(bb);
    free(ab);
    return PC_PROP_PASS;
}

static const pc_property hand_over_property = {"hand-over", "test", hand_over, NULL};

/* The runner's case: x (float, dims) -> Identity -> Relu -> y (so eliminate_identity changes it), inputs from
 * a fixed seed. */
static void runner_case(pc_case *c, int32_t rank, const int64_t *dims)
{
    memset(c, 0, sizeof *c);
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, rank, dims);
    pt_node(m, "Identity", "", "x", "i", NULL);
    pt_node(m, "Relu", "", "i", "y", NULL);
    pt_output(m, "y");
    c->model = m;
    uint64_t seed = 11;
    c->inputs = calloc(1, sizeof *c->inputs);
    c->inputs[0] = pt_random_input(m->graph->inputs[0], &seed);
    c->n_inputs = 1;
    c->ep_list = strdup("cpu");
    c->family = "hand";
}

static const int64_t X4[4] = {1, 3, 4, 4};

/* Runs p through the runner; p->outcome/kind/msg hold the property's verdict. */
static void judge(pair *p)
{
    pc_case c;
    runner_case(&c, 4, X4);
    pc_check_config cc;
    pc_check_config_default(&cc);
    for (size_t i = 0; i < pc_property_count(); i++)
        cc.enabled[i] = false;
    cc.extra = &hand_over_property;
    cc.stop_after_pass = "eliminate_identity";
    if (!p->config_level) p->config_level = PC_LEVEL_MAX;
    p->ran = false;
    current = p;
    pc_check_result res;
    pc_error err;
    CHECK_STATUS(pc_case_check(&c, &cc, &res, &err), PC_OK, &err);
    CHECK_MSG(p->ran, "the hand-over property was not called");
    pc_check_result_free(&res);
    pc_case_free(&c);
}

#define EXPECT(p, want_outcome, want_kind)                                                                   \
    do {                                                                                                     \
        judge(p);                                                                                            \
        CHECK_MSG((p)->outcome == (want_outcome) && strcmp((p)->kind, (want_kind)) == 0,                     \
                  "%s %s: got %s/%s, want %s/%s: %s", (p)->prop->name, (p)->final ? "final" : (p)->pass,     \
                  pc_prop_outcome_name((p)->outcome), (p)->kind, pc_prop_outcome_name(want_outcome),         \
                  want_kind, (p)->msg);                                                                      \
    } while (0)

/* Shapes inferred, then saved and reloaded: the runner hands properties loaded graphs, and a graph built in
 * memory differs from its reloaded self in details the file cannot express (an absent graph name saves as
 * none and reloads as ""). */
static pc_model *typed(pc_model *m)
{
    pc_error err;
    if (pc_graph_infer_shapes(m->graph, &err) != PC_OK) pt_die("infer", &err);
    pc_model *c = pt_clone(m);
    pc_model_free(m);
    return c;
}

/* x -> Relu -> y, optionally through Identity first, or scaled by `factor` first (a numeric change). */
static pc_model *relu_graph(bool identity, float factor)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
    const char *in = "x";
    if (identity) {
        pt_node(m, "Identity", "", "x", "xi", NULL);
        in = "xi";
    }
    if (factor != 1.0f) {
        pt_const_f(m, "f", 0, NULL, &factor);
        char ins[32];
        snprintf(ins, sizeof ins, "%s,f", in);
        pt_node(m, "Mul", "", ins, "xs", NULL);
        in = "xs";
    }
    pt_node(m, "Relu", "", in, "y", NULL);
    pt_output(m, "y");
    return typed(m);
}

static void pair_free(pair *p)
{
    pc_model_free(p->before);
    pc_model_free(p->after);
    p->before = p->after = NULL;
}

/* ---------------------------------------------------------------------------------------------------------------
 * numerics
 */
static void test_numerics(void)
{
    pair p = {.prop = &pc_prop_numerics, .pass = "eliminate_identity", .level = 0, .changed = true};

    /* a correct data-movement rewrite */
    p.before = relu_graph(true, 1.0f);
    p.after = relu_graph(false, 1.0f);
    EXPECT(&p, PC_PROP_PASS, "");
    pair_free(&p);

    /* one ulp off: wrong for a data-movement pass, fine for a float fusion */
    p.before = relu_graph(false, 1.0f);
    p.after = relu_graph(false, 1.0000001f);
    EXPECT(&p, PC_PROP_FAIL, "values");
    p.pass = "fuse_conv_bn";
    EXPECT(&p, PC_PROP_PASS, "");
    pair_free(&p);

    /* 1% off: wrong even for a float fusion */
    p.before = relu_graph(false, 1.0f);
    p.after = relu_graph(false, 1.01f);
    EXPECT(&p, PC_PROP_FAIL, "values");
    /* and end to end (no pass recorded for this case: bit-exact) */
    p.final = true;
    EXPECT(&p, PC_PROP_FAIL, "values");
    p.final = false;
    pair_free(&p);

    /* a shape change */
    p.pass = "transpose_optimize";
    p.before = relu_graph(false, 1.0f);
    {
        pc_model *m = pt_model(17);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
        pt_node(m, "Relu", "", "x", "r", NULL);
        pt_const_i64(m, "shape", 2, (int64_t[]){3, 16});
        pt_node(m, "Reshape", "", "r,shape", "y", NULL);
        pt_output(m, "y");
        p.after = typed(m);
    }
    EXPECT(&p, PC_PROP_FAIL, "shape");
    pair_free(&p);

    /* a graph that no longer runs: Reshape to an impossible size */
    p.before = relu_graph(false, 1.0f);
    {
        pc_model *m = pt_model(17);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
        pt_node(m, "Relu", "", "x", "r", NULL);
        pt_const_i64(m, "shape", 1, (int64_t[]){5});
        pt_node(m, "Reshape", "", "r,shape", "y", NULL);
        pt_output(m, "y");
        p.after = m;
    }
    EXPECT(&p, PC_PROP_FAIL, "run-failed");
    pair_free(&p);

    /* NaN positions: Sqrt of negative inputs is NaN before; Sqrt(Abs(x)) after is not */
    {
        pc_model *b = pt_model(17), *a = pt_model(17);
        pt_input(b, "x", PC_DTYPE_FLOAT, 4, X4);
        pt_node(b, "Sqrt", "", "x", "y", NULL);
        pt_output(b, "y");
        pt_input(a, "x", PC_DTYPE_FLOAT, 4, X4);
        pt_node(a, "Abs", "", "x", "ax", NULL);
        pt_node(a, "Sqrt", "", "ax", "y", NULL);
        pt_output(a, "y");
        p.before = typed(b);
        p.after = typed(a);
    }
    p.pass = "eliminate_identity";
    EXPECT(&p, PC_PROP_FAIL, "nan-position");
    /* a tolerance cannot judge NaN in the reference: skipped, not passed */
    p.pass = "fuse_gelu";
    EXPECT(&p, PC_PROP_SKIP, "");
    pair_free(&p);

    /* an op the reference does not run: skipped */
    p.pass = "eliminate_identity";
    p.before = relu_graph(false, 1.0f);
    {
        pc_model *m = pt_model(17);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
        pt_node(m, "Sigmoid", "", "x", "s", NULL);
        pt_node(m, "Bernoulli", "", "s", "y", NULL);
        pt_output(m, "y");
        p.after = typed(m);
    }
    EXPECT(&p, PC_PROP_SKIP, "");
    pair_free(&p);

    /* quantized outputs: one step is what a QDQ -> QLinear rewrite may change, two are not; a data-movement
     * pass may change none */
    for (int steps = 0; steps <= 2; steps++) {
        for (int dq = 0; dq <= 1; dq++) {
            pc_model *ms[2];
            for (int side = 0; side < 2; side++) {
                pc_model *m = pt_model(17);
                pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
                float s = 0.05f;
                uint8_t zp = 100, add = (uint8_t)(side ? steps : 0);
                pt_const_f(m, "s", 0, NULL, &s);
                pt_const(m, "zp", PC_DTYPE_UINT8, 0, NULL, &zp);
                pt_const(m, "k", PC_DTYPE_UINT8, 0, NULL, &add);
                pt_node(m, "QuantizeLinear", "", "x,s,zp", "q", NULL);
                pt_node(m, "Add", "", "q,k", dq ? "q2" : "y", NULL);
                if (dq) pt_node(m, "DequantizeLinear", "", "q2,s,zp", "y", NULL);
                pt_output(m, "y");
                ms[side] = typed(m);
            }
            p.before = ms[0];
            p.after = ms[1];
            p.pass = "fuse_qdq_qlinear";
            EXPECT(&p, steps <= 1 ? PC_PROP_PASS : PC_PROP_FAIL, steps <= 1 ? "" : "values");
            p.pass = "remove_dq_q";
            EXPECT(&p, steps == 0 ? PC_PROP_PASS : PC_PROP_FAIL, steps == 0 ? "" : "values");
            pair_free(&p);
        }
    }

    /* a rewritten node's one step, requantized downstream: Q(s1) -> bump -> DQ(s1) -> Q(s2), s1 / s2 = 1.35,
     * moves the output by up to ceil(1.35) = 2 steps (suite seed 3 case 26142: QLinearConv -> DQ -> Q), which
     * one step per rewrite allows; two steps at the rewritten node (up to 3 at the output) do not. `bump` is
     * the rewritten node (renamed after the pass); the reference computes the rest. */
    for (int steps = 1; steps <= 2; steps++) {
        pc_model *ms[2];
        for (int side = 0; side < 2; side++) {
            pc_model *m = pt_model(17);
            pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
            float s1 = 0.027f, s2 = 0.02f;
            uint8_t zp = 100, add = (uint8_t)(side ? steps : 0);
            pt_const_f(m, "s1", 0, NULL, &s1);
            pt_const_f(m, "s2", 0, NULL, &s2);
            pt_const(m, "zp", PC_DTYPE_UINT8, 0, NULL, &zp);
            pt_const(m, "k", PC_DTYPE_UINT8, 0, NULL, &add);
            pt_node(m, "QuantizeLinear", "", "x,s1,zp", "q", NULL);
            pc_node *bump = pt_node(m, "Add", "", "q,k", "q2", NULL);
            bump->name = side ? "bump_rewritten" : "bump";
            pt_node(m, "DequantizeLinear", "", "q2,s1,zp", "d", NULL);
            pt_node(m, "QuantizeLinear", "", "d,s2,zp", "y", NULL);
            pt_output(m, "y");
            ms[side] = typed(m);
        }
        p.before = ms[0];
        p.after = ms[1];
        p.pass = "fuse_qdq_qlinear";
        EXPECT(&p, steps == 1 ? PC_PROP_PASS : PC_PROP_FAIL, steps == 1 ? "" : "values");
        pair_free(&p);
    }
}

/* ---------------------------------------------------------------------------------------------------------------
 * annotations
 */

/* x -> Reshape r1 -> Reshape r2 -> y (annotations a1, a2), or the fused x -> Reshape `fused_name` -> y. */
static pc_model *reshape_pair(const char *a1, const char *a2)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
    pt_const_i64(m, "s1", 2, (int64_t[]){3, 16});
    pt_const_i64(m, "s2", 1, (int64_t[]){48});
    pt_node(m, "Reshape", "", "x,s1", "r1", a1);
    pt_node(m, "Reshape", "", "r1,s2", "y", a2);
    pt_output(m, "y");
    return typed(m);
}

static pc_model *reshape_fused(const char *name, const char *ann)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
    pt_const_i64(m, "s2", 1, (int64_t[]){48});
    pc_node *n = pt_node(m, "Reshape", "", "x,s2", "y", ann);
    n->name = name;
    pt_output(m, "y");
    return typed(m);
}

static const pc_ep *const *nhwc_cpu(pc_ep_registry **reg, uint32_t *n, const char *extra_text)
{
    pc_error err;
    const pc_ep **eps = NULL;
    if (pc_ep_registry_create(reg, &err) != PC_OK) pt_die("registry", &err);
    if (extra_text && pc_ep_registry_load_text(*reg, extra_text, "test EPs", &err) != PC_OK)
        pt_die("ep text", &err);
    if (pc_ep_registry_parse_list(*reg, extra_text ? "npu,cpu" : "nhwc,cpu", &eps, n, &err) != PC_OK)
        pt_die("ep list", &err);
    return (const pc_ep *const *)eps;
}

/* x -> Relu 'relu' (annotation ann) -> TopK 'top' (annotation ann) -> y, EPs as given (NULL: unassigned). */
static pc_model *pinned_graph(const char *ann, const char *relu_ep, const char *topk_ep)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
    pt_const_i64(m, "k", 1, (int64_t[]){2});
    pc_node *r = pt_node(m, "Relu", "", "x", "relu", ann);
    pc_node *t = pt_node(m, "TopK", "", "relu,k", "y,idx", ann);
    r->ep = relu_ep;
    t->ep = topk_ep;
    pt_output(m, "y");
    pt_output(m, "idx");
    return typed(m);
}

/* A body value reading the outer value `name` (as the loader links a body's reference to an outer name). */
static pc_value *body_ref(pc_graph *body, pc_graph *outer, const char *name)
{
    pc_error err;
    pc_value *o = pc_graph_find_value(outer, name), *v = pc_graph_add_value(body, name, NULL, &err);
    if (!o || !v) pt_die(name, &err);
    v->outer = o;
    o->n_subgraph_refs++;
    return v;
}

static pc_node *body_node(pc_model *m, pc_graph *body, const char *op, pc_value *a, pc_value *b,
                          const char *out, const char *name, const char *ann)
{
    pc_error err;
    pc_node *n = pc_graph_new_node(body, op, "");
    pc_value *y = pc_graph_add_value(body, out, NULL, &err);
    if (!n || !y) pt_die(op, &err);
    n->name = pc_arena_strdup(&m->arena, name);
    if (pc_node_add_input(n, a, &err) != PC_OK || (b && pc_node_add_input(n, b, &err) != PC_OK) ||
        pc_node_append_output(n, y, &err) != PC_OK ||
        (ann && pc_node_set_metadata(n, PC_LAYER_ANN_KEY, ann, &err) != PC_OK))
        pt_die(op, &err);
    return n;
}

/* If(c) whose then-branch holds the Reshape pair (annotations a1, a2), or its fusion into one Reshape named
 * `fused`, and whose else-branch is Reshape(x, s2): fusion-sources must see the body as the main graph. */
static pc_model *reshape_pair_in_if(const char *fused, const char *a1, const char *a2)
{
    pc_error err;
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
    pt_input(m, "c", PC_DTYPE_BOOL, 0, NULL);
    pt_const_i64(m, "s1", 2, (int64_t[]){3, 16});
    pt_const_i64(m, "s2", 1, (int64_t[]){48});
    pc_node *iff = pt_node(m, "If", "", "c", "y", NULL);
    pc_attr *attrs = pc_arena_array(&m->arena, 2, sizeof *attrs);
    if (!attrs) pt_die("attrs", NULL);
    static const char *const names[2] = {"then_branch", "else_branch"};
    for (int b = 0; b < 2; b++) {
        pc_graph *body = pc_graph_create(m, m->graph, iff);
        if (!body) pt_die("body", NULL);
        pc_value *x = body_ref(body, m->graph, "x"), *s2 = body_ref(body, m->graph, "s2");
        pc_node *last;
        if (b == 1)
            last = body_node(m, body, "Reshape", x, s2, "ye", "ye", NULL);
        else if (fused)
            last = body_node(m, body, "Reshape", x, s2, "yt", fused, a2);
        else {
            pc_node *r1 = body_node(m, body, "Reshape", x, body_ref(body, m->graph, "s1"), "r1", "r1", a1);
            last = body_node(m, body, "Reshape", r1->outputs[0], s2, "yt", "yt", a2);
        }
        if (pc_graph_add_output(body, last->outputs[0], &err) != PC_OK) pt_die("body output", &err);
        attrs[b] = (pc_attr){.name = names[b], .type = PC_ATTR_GRAPH, .g = body};
    }
    iff->attrs = attrs;
    iff->n_attrs = iff->cap_attrs = 2;
    pt_output(m, "y");
    pc_model *c = pt_clone(m);
    pc_model_free(m);
    return c;
}

/* Sets the If's EP and its bodies' nodes' EPs (static strings). */
static pc_model *if_eps(pc_model *m, const char *owner_ep, const char *body_ep)
{
    for (pc_node *n = m->graph->first; n; n = n->next) {
        n->ep = owner_ep;
        for (uint32_t a = 0; a < n->n_attrs; a++)
            for (pc_node *x = n->attrs[a].type == PC_ATTR_GRAPH ? n->attrs[a].g->first : NULL; x; x = x->next)
                x->ep = body_ep;
    }
    return m;
}

static void test_annotations(void)
{
    pair p = {.prop = &pc_prop_annotations, .pass = "fuse_reshape", .level = 1, .changed = true};
    /* the fused node names its source (pc_pass_add_node's "<source>/<op>_pc<N>") */
    p.before = reshape_pair("enc.block0", "enc.block0");
    p.after = reshape_fused("y/Reshape_pc0", "enc.block0");
    EXPECT(&p, PC_PROP_PASS, "");
    pc_model_free(p.after);
    p.after = reshape_fused("y/Reshape_pc0", NULL);
    EXPECT(&p, PC_PROP_FAIL, "dropped");
    pc_model_free(p.after);
    p.after = reshape_fused("y/Reshape_pc0", "enc.block1");
    EXPECT(&p, PC_PROP_FAIL, "changed");
    pc_model_free(p.after);
    /* without a declared source the neighbourhood decides: both neighbours say enc.block0 */
    p.after = reshape_fused("fused", NULL);
    EXPECT(&p, PC_PROP_FAIL, "dropped");
    pc_model_free(p.after);
    p.after = reshape_fused("fused", "enc.block0");
    EXPECT(&p, PC_PROP_PASS, "");
    pc_model_free(p.after);
    /* an annotation nobody had */
    p.after = reshape_fused("fused", "decoder");
    EXPECT(&p, PC_PROP_FAIL, "gained");
    pair_free(&p);
    /* mixed neighbours: either annotation is allowed, a third is not */
    p.before = reshape_pair("enc", NULL);
    p.after = reshape_fused("fused", "enc");
    EXPECT(&p, PC_PROP_PASS, "");
    pc_model_free(p.after);
    p.after = reshape_fused("fused", NULL);
    EXPECT(&p, PC_PROP_PASS, "");
    pair_free(&p);
    /* a kept node may not change its annotation */
    p.pass = "eliminate_identity";
    p.level = 0;
    p.before = pinned_graph("enc", NULL, NULL);
    p.after = pinned_graph("dec", NULL, NULL);
    EXPECT(&p, PC_PROP_FAIL, "changed");
    pair_free(&p);

    /* partitioning: rules honoured, no annotation left */
    pc_ep_registry *reg = NULL;
    uint32_t n_eps = 0;
    const pc_ep *const *eps = nhwc_cpu(&reg, &n_eps, NULL);
    pc_layer_rules *rules = NULL;
    pc_error err;
    CHECK_OK(pc_layer_rules_parse("nhwc(enc); cpu(=dec)", eps, n_eps, &rules, &err), &err);
    p.pass = "partition";
    p.level = PC_LEVEL_LAYOUT;
    p.eps = eps;
    p.n_eps = n_eps;
    p.rules = rules;
    p.layer_assignment = "nhwc(enc); cpu(=dec)";
    p.before = pinned_graph("enc.block0", NULL, NULL);
    /* nhwc claims Relu (float) but not TopK: Relu must go to nhwc, TopK falls through to cpu */
    p.after = pinned_graph(NULL, "nhwc", "cpu");
    EXPECT(&p, PC_PROP_PASS, "");
    pc_model_free(p.after);
    p.after = pinned_graph(NULL, "cpu", "cpu");
    EXPECT(&p, PC_PROP_FAIL, "rule-ignored");
    pc_model_free(p.after);
    p.after = pinned_graph("enc.block0", "nhwc", "cpu");
    EXPECT(&p, PC_PROP_FAIL, "annotation-left");
    pair_free(&p);
    /* pinned to cpu (exact match): nhwc comes first but must not take it */
    p.before = pinned_graph("dec", NULL, NULL);
    p.after = pinned_graph(NULL, "nhwc", "cpu");
    EXPECT(&p, PC_PROP_FAIL, "rule-ignored");
    pc_model_free(p.after);
    p.after = pinned_graph(NULL, "cpu", "cpu");
    EXPECT(&p, PC_PROP_PASS, "");
    pair_free(&p);
    /* body nodes are not offered to EPs: pinned or not, they run where the If runs */
    p.before = reshape_pair_in_if(NULL, "enc.block0", "enc.block0");
    p.after = if_eps(reshape_pair_in_if(NULL, NULL, NULL), "cpu", "cpu");
    EXPECT(&p, PC_PROP_PASS, "");
    pc_model_free(p.after);
    p.after = if_eps(reshape_pair_in_if(NULL, NULL, NULL), "cpu", "nhwc");
    EXPECT(&p, PC_PROP_FAIL, "body-ep");
    pair_free(&p);
    /* the pin comes from the independent layer-rule oracle reading the case's text, not from core's matcher:
     * core rules that (wrongly) pin "dec" to nhwc change nothing */
    pc_layer_rules *wrong = NULL;
    CHECK_OK(pc_layer_rules_parse("nhwc(de)", eps, n_eps, &wrong, &err), &err);
    p.rules = wrong;
    p.before = pinned_graph("dec", NULL, NULL);
    p.after = pinned_graph(NULL, "nhwc", "cpu");
    EXPECT(&p, PC_PROP_FAIL, "rule-ignored");
    pair_free(&p);
    p.rules = rules;
    pc_layer_rules_free(wrong);
    /* unpinned: the rules say nothing */
    p.before = pinned_graph("post", NULL, NULL);
    p.after = pinned_graph(NULL, "cpu", "cpu");
    EXPECT(&p, PC_PROP_PASS, "");
    pair_free(&p);

    /* end to end: once partitioned, no annotation may be left */
    p.final = true;
    p.before = pinned_graph("enc", NULL, NULL);
    p.after = pinned_graph("enc", "cpu", "cpu");
    EXPECT(&p, PC_PROP_FAIL, "annotation-left");
    p.config_level = PC_LEVEL_EXTENDED;
    EXPECT(&p, PC_PROP_PASS, "");
    pc_model_free(p.after);
    p.after = pinned_graph("dec", NULL, NULL);
    EXPECT(&p, PC_PROP_FAIL, "gained");
    pair_free(&p);
    pc_layer_rules_free(rules);
    pc_ep_registry_free(reg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * ep-assignment
 */

/* x -> Conv 'c' -> Relu 'r' -> y on `ep`, or fused: x -> FusedConv `fused_name` (com.microsoft) on fused_ep.
 */
static pc_model *conv_graph(bool fused, const char *fused_name, const char *ep, const char *fused_ep)
{
    pc_model *m = pt_model(17);
    int64_t wd[4] = {2, 3, 3, 3};
    float w[54];
    for (int i = 0; i < 54; i++)
        w[i] = (float)(i % 7 - 3) / 4.0f;
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
    pt_const_f(m, "w", 4, wd, w);
    if (fused) {
        pc_node *f = pt_node(m, "FusedConv", "com.microsoft", "x,w", "y", NULL);
        pc_error err;
        if (pc_node_set_attr_string(f, "activation", "Relu", &err) != PC_OK) pt_die("attr", &err);
        f->name = fused_name;
        f->ep = fused_ep;
    } else {
        pt_node(m, "Conv", "", "x,w", "c", NULL)->ep = ep;
        pt_node(m, "Relu", "", "c", "y", NULL)->ep = ep;
    }
    pt_output(m, "y");
    return typed(m);
}

static void test_ep_assignment(void)
{
    pair p = {.prop = &pc_prop_ep_assignment, .pass = "fuse_conv_activation", .level = 2, .changed = true};
    p.before = conv_graph(false, NULL, "cpu", NULL);
    p.after = conv_graph(true, "c/FusedConv_pc0", NULL, "cpu");
    EXPECT(&p, PC_PROP_PASS, "");
    pc_model_free(p.after);
    p.after = conv_graph(true, "c/FusedConv_pc0", NULL, NULL);
    EXPECT(&p, PC_PROP_FAIL, "ep-not-inherited");
    pc_model_free(p.after);
    /* no declared source and no EP: the neighbours are all on cpu */
    p.after = conv_graph(true, "fc", NULL, NULL);
    EXPECT(&p, PC_PROP_FAIL, "ep-not-inherited");
    pair_free(&p);

    pc_ep_registry *reg = NULL;
    uint32_t n_eps = 0;
    const pc_ep *const *eps = nhwc_cpu(&reg, &n_eps, NULL);
    p.eps = eps;
    p.n_eps = n_eps;
    /* a kept node moved to another EP */
    p.before = conv_graph(false, NULL, "cpu", NULL);
    p.after = conv_graph(false, NULL, "nhwc", NULL);
    EXPECT(&p, PC_PROP_FAIL, "reassigned");
    pair_free(&p);
    /* one run touched nodes of two EPs: Relu (nhwc) and TopK (cpu) both removed */
    p.before = pinned_graph(NULL, "nhwc", "cpu");
    {
        pc_model *m = pt_model(17);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
        pt_node(m, "Identity", "", "x", "y", NULL)->ep = "cpu";
        pt_node(m, "Identity", "", "x", "idx", NULL)->ep = "cpu";
        pt_output(m, "y");
        pt_output(m, "idx");
        p.after = typed(m);
    }
    EXPECT(&p, PC_PROP_FAIL, "foreign-ep-modified");
    pair_free(&p);
    /* a run for one EP that touched only another EP's node: Relu (nhwc) removed while running for cpu; the
     * same edit in the nhwc run is fine */
    p.before = pinned_graph(NULL, "nhwc", "cpu");
    {
        pc_model *m = pt_model(17);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
        pt_const_i64(m, "k", 1, (int64_t[]){2});
        pt_node(m, "TopK", "", "x,k", "y,idx", NULL)->ep = "cpu";
        pt_output(m, "y");
        pt_output(m, "idx");
        p.after = typed(m);
    }
    p.provider = "cpu";
    EXPECT(&p, PC_PROP_FAIL, "foreign-ep-modified");
    CHECK_MSG(strstr(p.msg, "the run was for EP 'cpu'") != NULL, "message: %s", p.msg);
    p.provider = "nhwc";
    EXPECT(&p, PC_PROP_PASS, "");
    p.provider = NULL;
    pair_free(&p);

    /* partitioning: every node on a claiming EP of the case */
    p.pass = "partition";
    p.before = pinned_graph(NULL, NULL, NULL);
    p.after = pinned_graph(NULL, "nhwc", "cpu");
    EXPECT(&p, PC_PROP_PASS, "");
    pc_model_free(p.after);
    p.after = pinned_graph(NULL, "nhwc", NULL);
    EXPECT(&p, PC_PROP_FAIL, "unassigned");
    pc_model_free(p.after);
    p.after = pinned_graph(NULL, "nhwc", "nhwc");
    EXPECT(&p, PC_PROP_FAIL, "unclaimed");
    pc_model_free(p.after);
    p.after = pinned_graph(NULL, "gpu", "cpu");
    EXPECT(&p, PC_PROP_FAIL, "unknown-ep");
    pair_free(&p);
    /* and end to end */
    p.final = true;
    p.before = pinned_graph(NULL, NULL, NULL);
    p.after = pinned_graph(NULL, "cpu", "nhwc");
    EXPECT(&p, PC_PROP_FAIL, "unclaimed");
    p.final = false;
    pair_free(&p);
    pc_ep_registry_free(reg);

    /* an NCHW EP claiming an internal-NHWC-domain node */
    eps = nhwc_cpu(&reg, &n_eps, "ep npu layout=nchw\nop Relu domain=com.ms.internal.nhwc\nop Relu\n");
    p.eps = eps;
    p.n_eps = n_eps;
    p.before = pinned_graph(NULL, NULL, NULL);
    {
        pc_model *m = pt_model(17);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
        pt_node(m, "Relu", "com.ms.internal.nhwc", "x", "y", NULL)->ep = "npu";
        pt_output(m, "y");
        p.after = typed(m);
    }
    EXPECT(&p, PC_PROP_FAIL, "nhwc-domain");
    pair_free(&p);
    pc_ep_registry_free(reg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * validity
 */
static void test_validity(void)
{
    pair p = {.prop = &pc_prop_validity, .pass = "eliminate_identity", .level = 0, .changed = true};
    p.before = relu_graph(true, 1.0f);
    p.after = relu_graph(false, 1.0f);
    EXPECT(&p, PC_PROP_PASS, "");
    /* the same change reported as none */
    p.changed = false;
    EXPECT(&p, PC_PROP_FAIL, "changed-flag");
    p.changed = true;
    pair_free(&p);

    /* a declared shape shape inference contradicts */
    p.before = relu_graph(false, 1.0f);
    {
        pc_model *m = pt_model(17);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
        pt_node(m, "Relu", "", "x", "r", NULL);
        pt_node(m, "Neg", "", "r", "y", NULL);
        pt_output(m, "y");
        pc_error err;
        if (pt_set_tensor_type(pc_graph_find_value(m->graph, "r"), PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 5},
                               &err) != PC_OK)
            pt_die("type", &err);
        p.after = m;
    }
    judge(&p);
    CHECK_MSG(p.outcome == PC_PROP_FAIL &&
                  (!strcmp(p.kind, "shape-disagrees") || !strcmp(p.kind, "shape-contradiction")),
              "%s/%s: %s", pc_prop_outcome_name(p.outcome), p.kind, p.msg);
    CHECK_MSG(strstr(p.msg, "'r'") || strstr(p.msg, "Relu") || strstr(p.msg, "Neg"), "%s", p.msg);
    pc_model_free(p.after);
    /* a declared element type that is wrong: where the inputs bind it (Relu's T), the verifier's type
     * constraints refuse it; where nothing does (Shape's int64 output), inference finds it */
    {
        pc_model *m = pt_model(17);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
        pt_node(m, "Relu", "", "x", "y", NULL);
        pt_output(m, "y");
        pc_error err;
        if (pt_set_tensor_type(pc_graph_find_value(m->graph, "y"), PC_DTYPE_DOUBLE, 4, X4, &err) != PC_OK)
            pt_die("type", &err);
        p.after = m;
    }
    judge(&p);
    CHECK_MSG(p.outcome == PC_PROP_FAIL && !strcmp(p.kind, "verify") && strstr(p.msg, "bad-type") &&
                  strstr(p.msg, "output 0 'y' is tensor(double), but its type parameter is bound to "
                                "tensor(float) by input 0 'x'"),
              "%s/%s: %s", pc_prop_outcome_name(p.outcome), p.kind, p.msg);
    pc_model_free(p.after);
    {
        pc_model *m = pt_model(17);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
        pt_node(m, "Shape", "", "x", "y", NULL);
        pt_output(m, "y");
        pc_error err;
        if (pt_set_tensor_type(pc_graph_find_value(m->graph, "y"), PC_DTYPE_DOUBLE, 1, (int64_t[]){4},
                               &err) != PC_OK)
            pt_die("type", &err);
        p.after = m;
    }
    judge(&p);
    CHECK_MSG(p.outcome == PC_PROP_FAIL &&
                  (!strcmp(p.kind, "shape-disagrees") || !strcmp(p.kind, "shape-contradiction")),
              "%s/%s: %s", pc_prop_outcome_name(p.outcome), p.kind, p.msg);
    pc_model_free(p.after);
    /* a dangling input */
    {
        pc_model *m = pt_model(17);
        pc_error err;
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
        if (!pc_graph_add_value(m->graph, "ghost", NULL, &err)) pt_die("value", &err);
        pt_node(m, "Add", "", "x,ghost", "y", NULL);
        pt_output(m, "y");
        p.after = m;
    }
    EXPECT(&p, PC_PROP_FAIL, "verify");
    pair_free(&p);
}

/* ---------------------------------------------------------------------------------------------------------------
 * idempotence, roundtrip, determinism (end to end)
 */
static pc_model *optimized(const pc_model *m)
{
    pc_model *c = pt_clone(m);
    pc_optimize_options oo;
    pc_optimize_options_default(&oo);
    pc_error err;
    if (pc_model_optimize(c, &oo, NULL, &err) != PC_OK) pt_die("optimize", &err);
    return c;
}

static void test_final_properties(void)
{
    pair p = {.prop = &pc_prop_idempotence, .final = true, .changed = true};
    p.before = conv_graph(false, NULL, NULL, NULL);
    p.after = optimized(p.before);
    EXPECT(&p, PC_PROP_PASS, "");
    /* an "optimized" graph that still has work left: the second run changes it, and names the pass */
    pc_model_free(p.after);
    p.after = relu_graph(true, 1.0f);
    EXPECT(&p, PC_PROP_FAIL, "eliminate_identity");
    CHECK_MSG(strstr(p.msg, "eliminate_identity") != NULL, "%s", p.msg);
    pair_free(&p);

    p.prop = &pc_prop_determinism;
    p.before = conv_graph(false, NULL, NULL, NULL);
    p.after = optimized(p.before);
    EXPECT(&p, PC_PROP_PASS, "");
    /* a checked run whose result a fresh run does not reproduce */
    pc_model_free(p.after);
    p.after = pt_clone(p.before);
    EXPECT(&p, PC_PROP_FAIL, "differs-from-checked-run");
    pair_free(&p);

    p.prop = &pc_prop_roundtrip;
    p.before = relu_graph(true, 1.0f);
    p.after = relu_graph(false, 1.0f);
    EXPECT(&p, PC_PROP_PASS, "");
    p.final = false;
    p.pass = "eliminate_identity";
    EXPECT(&p, PC_PROP_PASS, "");
    /* a saver that loses the annotation: the reloaded graph differs from the one in memory */
    pc_model *lost = relu_graph(false, 1.0f);
    CHECK_OK(pc_node_set_metadata(p.after->graph->first, PC_LAYER_ANN_KEY, "enc", NULL), NULL);
    p.after_bytes_from = lost;
    EXPECT(&p, PC_PROP_FAIL, "graph-differs");
    p.final = true;
    EXPECT(&p, PC_PROP_FAIL, "graph-differs");
    p.after_bytes_from = NULL;
    pc_model_free(lost);
    pair_free(&p);
}

/* ---------------------------------------------------------------------------------------------------------------
 * The planted faults, through the real pipeline and the real runner.
 */
static const char *mine = "numerics,annotations,ep-assignment,validity,idempotence,roundtrip,determinism";

static void check_case(pc_case *c, const char *fault, const char *want_sig)
{
    pc_check_config cc;
    pc_check_config_default(&cc);
    pc_error err;
    CHECK_OK(pc_check_config_select(&cc, mine, &err), &err);
    pc_fault_reset();
    if (fault) CHECK_OK(pc_fault_enable_list(fault, &err), &err);
    pc_check_result res;
    CHECK_STATUS(pc_case_check(c, &cc, &res, &err), PC_OK, &err);
    pc_fault_reset();
    char sig[160] = "";
    if (res.failed) pc_failure_signature(&res.failure, sig, sizeof sig);
    if (want_sig)
        CHECK_MSG(res.failed && strcmp(sig, want_sig) == 0, "fault %s: got '%s' (%s), want %s", fault, sig,
                  res.failure.message, want_sig);
    else
        CHECK_MSG(!res.failed, "no fault: %s: %s", sig, res.failure.message);
    pc_check_result_free(&res);
}

static void hand_case(pc_case *c, pc_model *m)
{
    memset(c, 0, sizeof *c);
    c->model = m;
    uint64_t seed = 3;
    c->inputs = calloc(1, sizeof *c->inputs);
    c->inputs[0] = pt_random_input(m->graph->inputs[0], &seed);
    c->n_inputs = 1;
    c->ep_list = strdup("cpu");
    c->family = "hand";
}

static void test_faults(void)
{
    pc_case c;
    /* Reshape -> Reshape, both annotated: fuse_reshape must keep the annotation */
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
    pt_const_i64(m, "s1", 2, (int64_t[]){3, 16});
    pt_const_i64(m, "s2", 1, (int64_t[]){48});
    pt_node(m, "Reshape", "", "x,s1", "r1", "enc.block0");
    pt_node(m, "Reshape", "", "r1,s2", "r2", "enc.block0");
    pt_node(m, "Relu", "", "r2", "z", "enc.block0");
    pt_output(m, "z");
    hand_case(&c, typed(m));
    check_case(&c, NULL, NULL);
    check_case(&c, "fusion-drops-annotation", "annotations@fuse_reshape/dropped");
    /* with a layer assignment too (nhwc claims Reshape and Relu) */
    free(c.ep_list);
    c.ep_list = strdup("nhwc,cpu");
    c.layer_assignment = strdup("cpu(enc)");
    check_case(&c, NULL, NULL);
    check_case(&c, "fusion-drops-annotation", "annotations@fuse_reshape/dropped");
    pc_case_free(&c);

    /* Conv -> Relu on cpu: fuse_conv_activation's FusedConv must take the Conv's EP */
    hand_case(&c, conv_graph(false, NULL, NULL, NULL));
    check_case(&c, NULL, NULL);
    check_case(&c, "level2-forgets-ep", "ep-assignment@fuse_conv_activation/ep-not-inherited");
    /* the other fault does not touch this graph */
    check_case(&c, "fusion-drops-annotation", NULL);
    pc_case_free(&c);
}

/* ---------------------------------------------------------------------------------------------------------------
 * The annotation and random-EP layers, on a hand-built graph.
 */
typedef struct layered {
    pc_case out;
    pc_gen_config cfg;
    pc_gen g;
} layered;

static void layered_init(layered *l, pc_choices *ch)
{
    memset(l, 0, sizeof *l);
    pc_gen_config_default(&l->cfg);
    pc_model *m = conv_graph(false, NULL, NULL, NULL);
    pt_node(m, "Sigmoid", "", "y", "s", NULL);
    pt_node(m, "Add", "", "s,y", "z", NULL);
    pt_output(m, "z");
    m = typed(m);
    l->out.model = m;
    l->g = (pc_gen){.ch = ch, .cfg = &l->cfg, .model = m, .graph = m->graph, .out = &l->out};
}

static bool match_str_eq_test(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static int count_annotated(const pc_model *m)
{
    int k = 0;
    for (const pc_node *n = m->graph->first; n; n = n->next)
        k += pc_node_annotation(n) != NULL;
    return k;
}

/* The layers' output is usable: the EP text loads, the list parses, the rules parse over it, the case
 * optimizes. */
static void check_layered(layered *l, uint64_t seed)
{
    pc_error err;
    pc_ep_registry *reg = NULL;
    CHECK_OK(pc_ep_registry_create(&reg, &err), &err);
    if (l->out.ep_text) {
        pc_status st = pc_ep_registry_load_text(reg, l->out.ep_text, "generated", &err);
        CHECK_MSG(st == PC_OK, "seed %llu: EP text does not load: %s\n%s", (unsigned long long)seed,
                  err.message, l->out.ep_text);
    }
    const pc_ep **eps = NULL;
    uint32_t n = 0;
    const char *list = l->out.ep_list ? l->out.ep_list : "cpu";
    CHECK_MSG(pc_ep_registry_parse_list(reg, list, &eps, &n, &err) == PC_OK, "seed %llu: %s",
              (unsigned long long)seed, err.message);
    CHECK_MSG(n && strcmp(eps[n - 1]->name, "cpu") == 0, "seed %llu: '%s' does not end with cpu",
              (unsigned long long)seed, list);
    pc_layer_rules *rules = NULL;
    if (l->out.layer_assignment)
        CHECK_MSG(pc_layer_rules_parse(l->out.layer_assignment, (const pc_ep *const *)eps, n, &rules, &err) ==
                      PC_OK,
                  "seed %llu: rules '%s' over '%s': %s", (unsigned long long)seed, l->out.layer_assignment,
                  list, err.message);
    for (const pc_node *x = l->out.model->graph->first; x; x = x->next) {
        const char *a = pc_node_annotation(x);
        CHECK_MSG(!a || (a[0] && !strchr(a, ' ') && !strchr(a, ',') && !strchr(a, '(')), "annotation '%s'",
                  a);
    }
    /* the whole pipeline accepts the configuration */
    pc_model *c = pt_clone(l->out.model);
    pc_optimize_options oo;
    pc_optimize_options_default(&oo);
    oo.eps = (const pc_ep *const *)eps;
    oo.n_eps = n;
    oo.layer_assignment = l->out.layer_assignment;
    pc_status st = pc_model_optimize(c, &oo, NULL, &err);
    CHECK_MSG(st == PC_OK, "seed %llu: optimize with '%s' / '%s': %s\n%s", (unsigned long long)seed, list,
              l->out.layer_assignment ? l->out.layer_assignment : "", err.message,
              l->out.ep_text ? l->out.ep_text : "");
    pc_model_free(c);
    pc_layer_rules_free(rules);
    pc_ep_registry_free(reg);
}

static void test_layers(void)
{
    pc_error err;
    /* all-zero draws: no annotation, no rules, no extra EP */
    {
        pc_choices ch;
        pc_choices_init_replay(&ch, NULL, 0);
        layered l;
        layered_init(&l, &ch);
        CHECK_OK(pc_gen_annotate(&l.g, &err), &err);
        CHECK_OK(pc_gen_random_eps(&l.g, &err), &err);
        CHECK(count_annotated(l.out.model) == 0);
        CHECK(l.out.layer_assignment == NULL);
        CHECK(l.out.ep_text == NULL);
        CHECK(l.out.ep_list && strcmp(l.out.ep_list, "cpu") == 0);
        pc_case_free(&l.out);
        pc_choices_free(&ch);
    }
    int annotated = 0, with_rules = 0, with_eps = 0, nhwc_eps = 0, exact = 0;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        for (int which = 0; which < 3; which++) { /* annotate only, EPs only, both */
            pc_choices ch;
            pc_choices_init_random(&ch, seed * 3 + (uint64_t)which);
            layered l;
            layered_init(&l, &ch);
            if (which != 1) CHECK_OK(pc_gen_annotate(&l.g, &err), &err);
            if (which != 0) CHECK_OK(pc_gen_random_eps(&l.g, &err), &err);
            annotated += count_annotated(l.out.model) > 0;
            with_rules += l.out.layer_assignment != NULL;
            exact += l.out.layer_assignment && strchr(l.out.layer_assignment, '=');
            with_eps += l.out.ep_text != NULL;
            nhwc_eps += l.out.ep_text && strstr(l.out.ep_text, "layout=nhwc");
            check_layered(&l, seed);
            /* replay: the same choices give the same annotations, rules and EPs */
            pc_choices again;
            pc_choices_init_replay(&again, ch.values, ch.n);
            layered r;
            layered_init(&r, &again);
            if (which != 1) CHECK_OK(pc_gen_annotate(&r.g, &err), &err);
            if (which != 0) CHECK_OK(pc_gen_random_eps(&r.g, &err), &err);
            CHECK(pc_model_equal(l.out.model, r.out.model, NULL, 0));
            CHECK(match_str_eq_test(l.out.layer_assignment, r.out.layer_assignment));
            CHECK(match_str_eq_test(l.out.ep_text, r.out.ep_text));
            CHECK(match_str_eq_test(l.out.ep_list, r.out.ep_list));
            pc_case_free(&r.out);
            pc_case_free(&l.out);
            pc_choices_free(&again);
            pc_choices_free(&ch);
        }
    }
    /* the layers produce their features often enough to matter (120 annotate runs, 120 EP runs) */
    CHECK_MSG(annotated >= 60 && with_rules >= 30 && exact >= 5 && with_eps >= 50 && nhwc_eps >= 15,
              "annotated %d, rules %d (exact %d), EP files %d (nhwc %d)", annotated, with_rules, exact,
              with_eps, nhwc_eps);
    printf("layers: %d/120 annotated, %d with rules (%d exact), %d/120 with EP files (%d NHWC)\n", annotated,
           with_rules, exact, with_eps, nhwc_eps);
}

/* ---------------------------------------------------------------------------------------------------------------
 * fusion-sources: Reshape(r1) -> Reshape(y) fused into one Reshape named for y; r1 fed only y, so both are
 * its sources, and they must carry one annotation before partitioning.
 */
static void test_fusion_sources(void)
{
    pair p = {.prop = &pc_prop_fusion_sources, .pass = "fuse_reshape", .level = 1, .changed = true};
    p.before = reshape_pair("enc.block0", "enc.block0");
    p.after = reshape_fused("y/Reshape_pc0", "enc.block0");
    EXPECT(&p, PC_PROP_PASS, "");
    pair_free(&p);
    /* the two Reshapes belong to different layers: no single annotation is right for the fused node */
    p.before = reshape_pair("enc.block0", "dec.block0");
    p.after = reshape_fused("y/Reshape_pc0", "dec.block0");
    EXPECT(&p, PC_PROP_FAIL, "mixed-annotations");
    CHECK_MSG(strstr(p.msg, "enc.block0") && strstr(p.msg, "dec.block0"), "names both annotations: %s",
              p.msg);
    pc_model_free(p.after);
    p.after = reshape_fused("y/Reshape_pc0", "enc.block0");
    EXPECT(&p, PC_PROP_FAIL, "mixed-annotations");
    pair_free(&p);
    /* an annotated and an unannotated source are mixed too */
    p.before = reshape_pair("enc.block0", NULL);
    p.after = reshape_fused("y/Reshape_pc0", NULL);
    EXPECT(&p, PC_PROP_FAIL, "mixed-annotations");
    pair_free(&p);
}

/* Node names need not be unique model-wide: a body node named like the If that owns it is still the same node
 * after a pass that changed nothing (scoped identity). Unscoped, both names were ambiguous and both nodes
 * looked removed and new (the pipeline fuzzer's ep-assignment@eliminate_identity/foreign-ep-modified). */
static pc_model *rename_else_node(pc_model *m, const char *name)
{
    for (uint32_t a = 0; a < m->graph->first->n_attrs; a++)
        if (strcmp(m->graph->first->attrs[a].name, "else_branch") == 0)
            m->graph->first->attrs[a].g->first->name = name;
    return m;
}

static void test_match_scoped_names(void)
{
    pc_model *before = rename_else_node(reshape_pair_in_if(NULL, "a", "a"), "y");
    pc_model *after = rename_else_node(reshape_pair_in_if(NULL, "a", "a"), "y");
    CHECK(strcmp(before->graph->first->name, "y") == 0); /* the If, named after its output */
    node_match m;
    pc_error err;
    CHECK_OK(match_build(before->graph, after->graph, &m, &err), &err);
    CHECK(m.n_before == 4 && m.n_after == 4);
    for (uint32_t i = 0; i < m.n_after; i++)
        CHECK_MSG(m.after_to_before[i] >= 0 && m.before[m.after_to_before[i]]->graph != NULL &&
                      strcmp(m.after_scope[i], m.before_scope[m.after_to_before[i]]) == 0,
                  "after-node %u (%s in '%s') not matched to itself", i, m.after[i]->name, m.after_scope[i]);
    match_free(&m);
    pc_model_free(before);
    pc_model_free(after);
}

/* fusion-sources inside a body: before issue 14's third session the matcher saw main-graph nodes only, and
 * this merge across annotations passed. */
/* x -> Cast(int64) -> op -> y */
static pc_model *int_graph(const char *op)
{
    pc_error err;
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, X4);
    if (pc_node_set_attr_int(pt_node(m, "Cast", "", "x", "xi", NULL), "to", PC_DTYPE_INT64, &err) != PC_OK)
        pt_die("to", &err);
    pt_node(m, op, "", "xi", "y", NULL);
    pt_output(m, "y");
    return typed(m);
}

/* An integer output is compared exactly whatever the pass's float tolerance, and the message says so (it
 * said "float tolerance expected"). */
static void test_numerics_integer_message(void)
{
    pair p = {.prop = &pc_prop_numerics, .pass = "fuse_gelu", .level = 1, .changed = true};
    p.before = int_graph("Neg");
    p.after = int_graph("Abs");
    EXPECT(&p, PC_PROP_FAIL, "values");
    CHECK_MSG(strstr(p.msg, "bit-exact expected") && !strstr(p.msg, "float tolerance"), "%s", p.msg);
    pair_free(&p);
}

static void test_fusion_sources_in_body(void)
{
    pair p = {.prop = &pc_prop_fusion_sources, .pass = "fuse_reshape", .level = 1, .changed = true};
    p.before = reshape_pair_in_if(NULL, "enc.block0", "enc.block0");
    p.after = reshape_pair_in_if("yt/Reshape_pc0", "enc.block0", "enc.block0");
    EXPECT(&p, PC_PROP_PASS, "");
    pair_free(&p);
    p.before = reshape_pair_in_if(NULL, "enc.block0", "dec.block0");
    p.after = reshape_pair_in_if("yt/Reshape_pc0", NULL, "dec.block0");
    EXPECT(&p, PC_PROP_FAIL, "mixed-annotations");
    pair_free(&p);
}

int main(void)
{
    test_numerics();
    test_fusion_sources();
    test_fusion_sources_in_body();
    test_numerics_integer_message();
    test_match_scoped_names();
    test_annotations();
    test_ep_assignment();
    test_validity();
    test_final_properties();
    test_faults();
    test_layers();
    return pc_test_finish("test_properties");
}
