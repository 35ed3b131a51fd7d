/* The blocked EP (core/ep/registry.c) and its level-3 compile (core/passes/blocked_compile.c), on hand-built
 * float CNN graphs optimized with --ep blocked,cpu. Oracles: the reference executor on the original graph
 * (standard ops only) against the compiled one (its Subgraph body of blocked primitives, each defined by the
 * standard op on the zero-padded plain tensor) within the float bound; the reorders counted against the
 * activation edges crossing the subgraph's boundary, counted on the original graph; every node on the EP;
 * a second optimization changing nothing; the runtime (which inlines the body) against the reference. */
#include <string.h>

#include "properties/property.h"
#include "reference/reference.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

static const pc_ep *eps[2];

static const pc_node *only_subgraph(const pc_model *m)
{
    const pc_node *s = NULL;
    int k = 0;
    for (const pc_node *n = m->graph->first; n; n = n->next)
        if (strcmp(n->domain, PC_BLOCKED_DOMAIN) == 0 && strcmp(n->op_type, "Subgraph") == 0) {
            s = n;
            k++;
        }
    CHECK_MSG(k == 1, "%d Subgraph nodes, 1 expected", k);
    return s;
}

static const pc_graph *body_of(const pc_node *s)
{
    const pc_attr *a = s ? pc_node_attr(s, "body") : NULL;
    CHECK(a && a->type == PC_ATTR_GRAPH && a->g);
    return a && a->type == PC_ATTR_GRAPH ? a->g : NULL;
}

static void equal_on_reference(const pc_model *before, const pc_model *after, const char *what)
{
    char why[2048];
    for (uint64_t seed = 1; seed <= 3; seed++) {
        int r = pt_equiv(before, after, seed, 1e-4, 1e-5, why, sizeof why);
        CHECK_MSG(r == 1, "%s, seed %llu: %s", what, (unsigned long long)seed, why);
    }
}

static void weights(pc_model *m, const char *name, int64_t o, int64_t i, int64_t k, float scale)
{
    float w[4096];
    int64_t n = o * i * k * k;
    CHECK(n <= 4096);
    for (int64_t e = 0; e < n; e++)
        w[e] = scale * (float)((e * 37) % 23 - 11) / 11.0f;
    pt_const(m, name, PC_DTYPE_FLOAT, 4, (int64_t[]){o, i, k, k}, w);
}

static void vector(pc_model *m, const char *name, int64_t n, float base, float step)
{
    float v[256];
    CHECK(n <= 256);
    for (int64_t e = 0; e < n; e++)
        v[e] = base + step * (float)(e % 7);
    pt_const(m, name, PC_DTYPE_FLOAT, 1, (int64_t[]){n}, v);
}

/* Conv-BN-Relu, MaxPool, BN-Relu, 1x1 Conv, a residual Add, LRN, GlobalAveragePool: one subgraph; one reorder
 * in, one out. Level 1 folds the first BN into the conv's weights (fuse_conv_bn), so the blocked primitives
 * are Conv-Relu and BatchNormalization-Relu (MKL-DNN's fusions, attribute relu). */
static void test_cnn(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 8, 8});
    weights(m, "w1", 5, 3, 3, 0.5f);
    vector(m, "b1", 5, 0.1f, 0.05f);
    vector(m, "s", 5, 0.9f, 0.1f);
    vector(m, "bb", 5, -0.2f, 0.1f);
    vector(m, "mean", 5, 0.05f, 0.02f);
    vector(m, "var", 5, 1.0f, 0.3f);
    weights(m, "w2", 5, 5, 1, 0.7f);
    pc_error err;
    pc_node *c1 = pt_node(m, "Conv", "", "x,w1,b1", "c1", NULL);
    CHECK_OK(pc_node_set_attr_ints(c1, "pads", 4, (int64_t[]){1, 1, 1, 1}, &err), &err);
    pt_node(m, "BatchNormalization", "", "c1,s,bb,mean,var", "n1", NULL);
    pt_node(m, "Relu", "", "n1", "r1", NULL);
    pc_node *mp = pt_node(m, "MaxPool", "", "r1", "p0", NULL);
    CHECK_OK(pc_node_set_attr_ints(mp, "kernel_shape", 2, (int64_t[]){2, 2}, &err), &err);
    CHECK_OK(pc_node_set_attr_ints(mp, "strides", 2, (int64_t[]){2, 2}, &err), &err);
    pt_node(m, "BatchNormalization", "", "p0,s,bb,mean,var", "n2", NULL);
    pt_node(m, "Relu", "", "n2", "p1", NULL);
    pt_node(m, "Conv", "", "p1,w2", "c2", NULL);
    pt_node(m, "Add", "", "c2,p1", "a", NULL);
    pc_node *lrn = pt_node(m, "LRN", "", "a", "l", NULL);
    CHECK_OK(pc_node_set_attr_int(lrn, "size", 3, &err), &err);
    pt_node(m, "GlobalAveragePool", "", "l", "y", NULL);
    pt_output(m, "y");
    pc_model *o = pt_clone(m);
    pt_optimize_eps(o, eps, 2);
    const pc_node *s = only_subgraph(o);
    const pc_graph *b = body_of(s);
    CHECK(o->graph->n_nodes == 1 && s && s->n_inputs == 1 && s->n_outputs == 1);
    CHECK(s && pc_node_attr_int(s, "subgraph_id", -1) == 0);
    if (b) {
        CHECK_MSG(pt_count_in(b, PC_BLOCKED_DOMAIN, "ToBlocked") == 1 &&
                      pt_count_in(b, PC_BLOCKED_DOMAIN, "FromBlocked") == 1,
                  "reorders: %d in, %d out (1 and 1: one edge in, one out)",
                  pt_count_in(b, PC_BLOCKED_DOMAIN, "ToBlocked"),
                  pt_count_in(b, PC_BLOCKED_DOMAIN, "FromBlocked"));
        CHECK(pt_count_in(b, PC_BLOCKED_DOMAIN, "Conv") == 2 &&
              pt_count_in(b, PC_BLOCKED_DOMAIN, "BatchNormalization") == 1 &&
              pt_count_in(b, "", "Relu") == 0 && pt_count_in(b, PC_BLOCKED_DOMAIN, "Add") == 1 &&
              pt_count_in(b, PC_BLOCKED_DOMAIN, "LRN") == 1);
        pt_all_on(b, "blocked");
    }
    CHECK(s && pc_node_attr(s, "Conv-Relu-1-pads") &&
          pc_node_attr_int(s, "BatchNormalization-Relu-3-relu", 0) == 1);
    pt_all_on(o->graph, "blocked");
    equal_on_reference(m, o, "cnn");
    pt_runtime_equals_reference(o, 5, 1e-4, 1e-5, "cnn");
    pc_model *again = pt_clone(o);
    pt_optimize_eps(again, eps, 2);
    char diff[512];
    CHECK_MSG(pc_model_equal(o, again, diff, sizeof diff), "optimizing again changed the graph: %s", diff);
    pc_model_free(again);
    pc_model_free(o);
    pc_model_free(m);
}

/* A node the EP does not run (Tanh) between two convs: two subgraphs, each with one reorder in and one out;
 * a Conv output that is also a graph output leaves the first subgraph too. */
static void test_two_subgraphs(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 4, 5, 5});
    weights(m, "w1", 6, 4, 1, 0.5f);
    weights(m, "w2", 3, 6, 3, 0.3f);
    pt_node(m, "Conv", "", "x,w1", "c1", NULL);
    pt_node(m, "Relu", "", "c1", "r1", NULL);
    pt_node(m, "Tanh", "", "r1", "t", NULL);
    pt_node(m, "Conv", "", "t,w2", "c2", NULL);
    pt_output(m, "c2");
    pt_output(m, "c1");
    pc_model *o = pt_clone(m);
    pt_optimize_eps(o, eps, 2);
    int k = pt_count_in(o->graph, PC_BLOCKED_DOMAIN, "Subgraph");
    CHECK_MSG(k == 2, "%d subgraphs", k);
    int64_t ids = 0;
    for (const pc_node *n = o->graph->first; n; n = n->next) {
        if (strcmp(n->op_type, "Subgraph") != 0) continue;
        ids += 1 + pc_node_attr_int(n, "subgraph_id", -1);
        const pc_graph *b = body_of(n);
        int in = b ? pt_count_in(b, PC_BLOCKED_DOMAIN, "ToBlocked") : -1,
            out = b ? pt_count_in(b, PC_BLOCKED_DOMAIN, "FromBlocked") : -1;
        CHECK_MSG(in == (int)n->n_inputs && out == (int)n->n_outputs,
                  "subgraph with %u in, %u out: %d and %d reorders", n->n_inputs, n->n_outputs, in, out);
    }
    CHECK_MSG(ids == 3, "subgraph ids 0 and 1 (sum of id + 1: %lld)", (long long)ids);
    equal_on_reference(m, o, "two subgraphs");
    pt_runtime_equals_reference(o, 5, 1e-4, 1e-5, "two subgraphs");
    pc_model_free(o);
    pc_model_free(m);
}

/* A conv whose weight is a graph input runs plain inside the body, between a reorder back and one forth. */
static void test_plain_inside(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 4});
    pt_input(m, "wi", PC_DTYPE_FLOAT, 4, (int64_t[]){3, 3, 1, 1});
    weights(m, "w1", 3, 3, 1, 0.5f);
    pt_node(m, "Conv", "", "x,w1", "c1", NULL);
    pt_node(m, "Conv", "", "c1,wi", "c2", NULL);
    pt_node(m, "Relu", "", "c2", "y", NULL);
    pt_output(m, "y");
    pc_model *o = pt_clone(m);
    pt_optimize_eps(o, eps, 2);
    const pc_node *s = only_subgraph(o);
    const pc_graph *b = body_of(s);
    if (b) {
        CHECK(pt_count_in(b, "", "Conv") == 1 && pt_count_in(b, PC_BLOCKED_DOMAIN, "Conv") == 1);
        CHECK_MSG(pt_count_in(b, PC_BLOCKED_DOMAIN, "ToBlocked") == 1 &&
                      pt_count_in(b, PC_BLOCKED_DOMAIN, "FromBlocked") == 1,
                  "reorders %d in %d out: x in, c1 back to plain; the Relu runs plain",
                  pt_count_in(b, PC_BLOCKED_DOMAIN, "ToBlocked"),
                  pt_count_in(b, PC_BLOCKED_DOMAIN, "FromBlocked"));
    }
    uint64_t seed = 9;
    pc_data *ins[2] = {pt_random_input(m->graph->inputs[0], &seed),
                       pt_random_input(m->graph->inputs[1], &seed)};
    char why[2048];
    CHECK_MSG(pt_equiv_inputs(m, o, 2, ins, 1e-4, 1e-5, why, sizeof why) == 1, "plain inside: %s", why);
    pc_data_unref(ins[0]);
    pc_data_unref(ins[1]);
    pc_model_free(o);
    pc_model_free(m);
}

/* An EP file's blocked EP (block 8) that lists the compiled form but not the blocked Conv: the conv runs
 * plain in the body, and nothing its refused blocked form made (a reorder of x, the blocked weight) is left
 * behind. */
static void test_refused_form(pc_ep_registry *reg)
{
    pc_error err;
    CHECK_OK(pc_ep_registry_load_text(reg,
                                      "ep part layout=blocked block=8 compiles=yes\n"
                                      "op Conv\nop Relu\n"
                                      "op ToBlocked domain=com.passcheck.blocked\n"
                                      "op FromBlocked domain=com.passcheck.blocked\n"
                                      "op Relu domain=com.passcheck.blocked\n"
                                      "op Subgraph domain=com.passcheck.blocked\n",
                                      "part.ep", &err),
             &err);
    const pc_ep *saved = eps[0];
    eps[0] = pc_ep_registry_find(reg, "part");
    CHECK(eps[0] && eps[0]->block_size == 8);
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 4});
    weights(m, "w1", 4, 3, 3, 0.5f);
    pt_node(m, "Conv", "", "x,w1", "c1", NULL);
    pt_node(m, "Relu", "", "c1", "y", NULL);
    pt_output(m, "y");
    pc_model *o = pt_clone(m);
    pt_optimize_eps(o, eps, 2);
    const pc_graph *b = body_of(only_subgraph(o));
    if (b) {
        CHECK_MSG(pt_count_in(b, "", "Conv") == 1 && pt_count_in(b, "", "Relu") == 1 && b->n_nodes == 2,
                  "%u body nodes: the plain Conv and Relu only", b->n_nodes);
        CHECK_MSG(b->n_initializers == 1, "%u body initializers: the OIHW weight only", b->n_initializers);
    }
    equal_on_reference(m, o, "refused blocked form");
    pc_model_free(o);
    pc_model_free(m);
    eps[0] = saved;
}

/* transpose-minimal's reorder checks on a compiled body: a second ToBlocked of the same value is a
 * `duplicate`, a FromBlocked of a ToBlocked a `round-trip`. */
static void test_reorder_checks(void)
{
    for (int kind = 0; kind < 2; kind++) {
        pc_model *m = pt_model(13);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 4});
        weights(m, "w1", 4, 3, 1, 0.5f);
        pt_node(m, "Conv", "", "x,w1", "y", NULL);
        pt_output(m, "y");
        pt_optimize_eps(m, eps, 2);
        pc_graph *b = (pc_graph *)body_of(only_subgraph(m));
        pc_node *tb = NULL;
        for (pc_node *n = b ? b->first : NULL; n; n = n->next)
            if (strcmp(n->op_type, "ToBlocked") == 0) tb = n;
        CHECK(tb != NULL);
        if (!tb) {
            pc_model_free(m);
            continue;
        }
        pc_error err;
        pc_value *in = kind ? tb->outputs[0] : tb->inputs[0];
        pc_node *extra = pc_graph_add_node(b, kind ? "FromBlocked" : "ToBlocked", PC_BLOCKED_DOMAIN, 1, &in,
                                           1, NULL, &err);
        CHECK(extra != NULL);
        pc_check_ctx ctx;
        memset(&ctx, 0, sizeof ctx);
        ctx.pass = "ep_rewrites";
        ctx.before = ctx.after = ctx.original = m;
        char msg[512] = "";
        const char *k = "";
        pc_prop_outcome o = pc_prop_transpose_minimal.per_pass(&ctx, msg, sizeof msg, &k);
        const char *want = kind ? "round-trip" : "duplicate";
        CHECK_MSG(o == PC_PROP_FAIL && strcmp(k, want) == 0, "kind %s expected, got %s: %s", want, k, msg);
        pc_model_free(m);
    }
}

int main(void)
{
    pc_ep_registry *reg = NULL;
    pc_error err;
    if (pc_ep_registry_create(&reg, &err) != PC_OK) pt_die("registry", &err);
    eps[0] = pc_ep_registry_find(reg, "blocked");
    eps[1] = pc_ep_registry_find(reg, "cpu");
    CHECK(eps[0] && eps[1]);
    test_cnn();
    test_two_subgraphs();
    test_plain_inside();
    test_refused_form(reg);
    test_reorder_checks();
    pc_ep_registry_free(reg);
    return pc_test_finish("test_passes_blocked");
}
