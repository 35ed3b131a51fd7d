/* Partitioner (pc_model_partition): GetCapability twice around the layout transformer (new Transposes claimed
 * by an EP that runs Transpose, left to cpu by one that does not), an NHWC EP that does not claim a node's
 * NHWC form keeping it in NCHW form, the no-EP error (also for a node already in the NHWC domain), existing
 * assignments (kept when still valid, so partitioning a partitioned graph changes nothing; cleared
 * otherwise), layer annotations (prefix, exact, leftmost wins, pins hide nodes from other EPs, a pin is
 * released when its EP does not claim the node, new nodes inherit pins), annotations gone afterwards,
 * subgraph bodies inheriting their owner's EP, and the compiled-subgraph list: every group connected, the
 * contraction acyclic (checked by brute force), deterministic. */
#include <string.h>

#include "tests/pass_test_util.h"
#include "tests/test_util.h"

static pc_ep_registry *reg;

static const char test_eps[] = "ep npu layout=nhwc compiles=yes transpose=no\n"
                               "op Conv opset=11..21 types=float\n"
                               "op Conv domain=com.ms.internal.nhwc types=float\n"
                               "op Relu types=float\n"
                               "op Add types=float\n"
                               "ep broken layout=nhwc compiles=yes transpose=yes\n"
                               "op Conv opset=11..21\n"
                               "op Transpose\n"
                               /* the finding's shape: an NCHW EP that runs Transpose, before an NHWC one */
                               "ep tr transpose=yes\n"
                               "op Transpose\n"
                               "ep lay layout=nhwc transpose=yes\n"
                               "op Transpose\n"
                               "op Conv\n"
                               "op Conv domain=com.ms.internal.nhwc\n"
                               "ep pool17 layout=nhwc transpose=yes\n"
                               "op AveragePool\n"
                               "op AveragePool domain=com.ms.internal.nhwc opset=1..17\n";

static void eps_of(const char *list, const pc_ep ***eps, uint32_t *n)
{
    pc_error err;
    if (pc_ep_registry_parse_list(reg, list, eps, n, &err) != PC_OK) pt_die(list, &err);
}

static pc_node *node_named(pc_model *m, const char *name)
{
    for (pc_node *n = m->graph->first; n; n = n->next)
        if (n->name && strcmp(n->name, name) == 0) return n;
    return NULL;
}

static bool ep_is(const pc_node *n, const char *ep)
{
    return n && n->ep && strcmp(n->ep, ep) == 0;
}

/* Checks the result against the graph: every node in exactly one entry of its own EP; single-node entries for
 * non-compiling EPs; each compiled group weakly connected; the graph with groups contracted acyclic. */
static void check_result(pc_model *m, const pc_partition_result *r, const char *label)
{
    pc_graph *g = m->graph;
    uint32_t n_ids = g->next_node_id;
    int32_t *group = malloc(n_ids * sizeof *group);
    for (uint32_t i = 0; i < n_ids; i++)
        group[i] = -1;
    uint32_t covered = 0;
    for (uint32_t s = 0; s < r->n_subgraphs; s++) {
        const pc_ep_subgraph *sg = &r->subgraphs[s];
        CHECK_MSG(sg->n_nodes > 0, "%s: empty subgraph %u", label, s);
        if (!sg->ep->compiles)
            CHECK_MSG(sg->n_nodes == 1, "%s: non-compiling EP with %u nodes", label, sg->n_nodes);
        for (uint32_t k = 0; k < sg->n_nodes; k++) {
            pc_node *x = sg->nodes[k];
            CHECK_MSG(group[x->id] == -1, "%s: node '%s' in two subgraphs", label, x->name);
            CHECK_MSG(ep_is(x, sg->ep->name), "%s: node '%s' of EP '%s' listed under '%s'", label, x->name,
                      x->ep, sg->ep->name);
            group[x->id] = (int32_t)s;
            covered++;
        }
    }
    CHECK_MSG(covered == g->n_nodes, "%s: %u of %u nodes listed", label, covered, g->n_nodes);
    /* connectivity: union within groups over producer→consumer edges, one component per group */
    uint32_t *comp = malloc(n_ids * sizeof *comp);
    for (uint32_t i = 0; i < n_ids; i++)
        comp[i] = i;
    for (int changed = 1; changed;) {
        changed = 0;
        for (pc_node *x = g->first; x; x = x->next)
            for (uint32_t i = 0; i < x->n_inputs; i++) {
                pc_node *p = x->inputs[i] ? x->inputs[i]->producer : NULL;
                if (!p || p->graph != g || group[p->id] != group[x->id]) continue;
                uint32_t lo = comp[p->id] < comp[x->id] ? comp[p->id] : comp[x->id];
                if (comp[p->id] != lo || comp[x->id] != lo) changed = 1;
                comp[p->id] = comp[x->id] = lo;
            }
    }
    for (uint32_t s = 0; s < r->n_subgraphs; s++) {
        const pc_ep_subgraph *sg = &r->subgraphs[s];
        for (uint32_t k = 1; k < sg->n_nodes; k++)
            CHECK_MSG(comp[sg->nodes[k]->id] == comp[sg->nodes[0]->id], "%s: subgraph %u is not connected",
                      label, s);
    }
    /* acyclic contraction: reachability between groups by repeated relaxation; a group reaching itself
     * through another group is a cycle */
    uint32_t ns = r->n_subgraphs;
    uint8_t *reach = calloc((size_t)ns * ns + 1, 1);
    for (pc_node *x = g->first; x; x = x->next)
        for (uint32_t i = 0; i < x->n_inputs; i++) {
            pc_node *p = x->inputs[i] ? x->inputs[i]->producer : NULL;
            if (p && p->graph == g && group[p->id] >= 0 && group[x->id] >= 0 && group[p->id] != group[x->id])
                reach[(size_t)group[p->id] * ns + (size_t)group[x->id]] = 1;
        }
    for (uint32_t k = 0; k < ns; k++)
        for (uint32_t i = 0; i < ns; i++)
            for (uint32_t j = 0; reach[(size_t)i * ns + k] && j < ns; j++)
                if (reach[(size_t)k * ns + j]) reach[(size_t)i * ns + j] = 1;
    for (uint32_t i = 0; i < ns; i++)
        CHECK_MSG(!reach[(size_t)i * ns + i], "%s: subgraph %u is on a cycle", label, i);
    free(reach);
    free(comp);
    free(group);
    /* annotations are gone everywhere */
    for (pc_node *x = g->first; x; x = x->next)
        CHECK_MSG(!pc_node_annotation(x), "%s: '%s' annotated", label, x->name);
}

static pc_model *conv_relu_model(const char *ann)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 4});
    float w[2 * 3 * 3 * 3];
    for (int i = 0; i < 54; i++)
        w[i] = (float)((i * 7) % 11 - 5) / 4.0f;
    pt_const_f(m, "w", 4, (int64_t[]){2, 3, 3, 3}, w);
    pt_node(m, "Conv", "", "x,w", "c", ann);
    pt_node(m, "Relu", "", "c", "y", ann);
    pt_output(m, "y");
    pc_error err;
    if (pc_graph_infer_shapes(m->graph, &err) != PC_OK) pt_die("infer", &err);
    return m;
}

static void test_nhwc_claims_transposes(void)
{
    const pc_ep **eps;
    uint32_t n;
    eps_of("nhwc,cpu", &eps, &n);
    pc_model *m = conv_relu_model("enc.0");
    pc_model *before = pt_clone(m);
    pc_partition_result r;
    pc_error err;
    CHECK_OK(pc_model_partition(m, eps, n, NULL, NULL, &r, &err), &err);
    CHECK_OK(pc_graph_verify(m->graph, &err), &err);
    pc_node *conv = node_named(m, "c");
    CHECK(conv && strcmp(conv->domain, "com.ms.internal.nhwc") == 0 && ep_is(conv, "nhwc"));
    CHECK(r.n_layout_changes == 1);
    /* GetCapability #2 gave the new Transposes to nhwc: every node is nhwc's, one compiled subgraph */
    CHECK(pt_count_op(m, "Transpose") >= 1);
    for (pc_node *x = m->graph->first; x; x = x->next)
        CHECK_MSG(ep_is(x, "nhwc"), "%s -> %s", x->name, x->ep);
    CHECK(r.n_subgraphs == 1 && r.subgraphs[0].n_nodes == m->graph->n_nodes);
    check_result(m, &r, "nhwc,cpu");
    char why[PT_WHY_SIZE];
    CHECK_MSG(pt_equiv(before, m, 7, 0, 0, why, sizeof why) == 1, "%s", why);
    pc_model_free(before);
    pc_model_free(m);

    /* cpu alone: nothing moves, one kernel entry per node */
    eps_of("cpu", &eps, &n);
    m = conv_relu_model(NULL);
    CHECK_OK(pc_model_partition(m, eps, n, NULL, NULL, &r, &err), &err);
    CHECK(r.n_layout_changes == 0 && r.n_subgraphs == 2 && pt_count_op(m, "Transpose") == 0);
    CHECK(pc_model_opset(m, "com.ms.internal.nhwc") < 0);
    for (pc_node *x = m->graph->first; x; x = x->next)
        CHECK(ep_is(x, "cpu"));
    check_result(m, &r, "cpu");
    pc_model_free(m);
}

static void test_ep_without_transpose(void)
{
    const pc_ep **eps;
    uint32_t n;
    eps_of("npu,cpu", &eps, &n);
    pc_model *m = conv_relu_model(NULL);
    pc_model *before = pt_clone(m);
    pc_partition_result r;
    pc_error err;
    CHECK_OK(pc_model_partition(m, eps, n, NULL, NULL, &r, &err), &err);
    pc_node *conv = node_named(m, "c"), *relu = node_named(m, "y");
    CHECK(conv && strcmp(conv->domain, "com.ms.internal.nhwc") == 0 && ep_is(conv, "npu"));
    CHECK(ep_is(relu, "npu"));
    /* npu does not run Transpose: the layout Transposes fell to cpu */
    uint32_t t = 0;
    for (pc_node *x = m->graph->first; x; x = x->next)
        if (strcmp(x->op_type, "Transpose") == 0) {
            t++;
            CHECK_MSG(ep_is(x, "cpu"), "Transpose '%s' -> %s", x->name, x->ep);
        }
    CHECK(t >= 1);
    /* Conv and Relu are separated by a cpu Transpose (unless the optimizer moved it): never one group across
     * it */
    check_result(m, &r, "npu,cpu");
    uint32_t npu_groups = 0;
    for (uint32_t s = 0; s < r.n_subgraphs; s++)
        npu_groups += strcmp(r.subgraphs[s].ep->name, "npu") == 0;
    CHECK(npu_groups >= 1);
    char why[PT_WHY_SIZE];
    CHECK_MSG(pt_equiv(before, m, 8, 0, 0, why, sizeof why) == 1, "%s", why);
    pc_model_free(before);
    pc_model_free(m);
}

static void test_errors(void)
{
    const pc_ep **eps;
    uint32_t n;
    pc_partition_result r;
    pc_error err;
    /* a node already in the NHWC domain that no EP claims: named, with each EP's reason */
    eps_of("pool17,cpu", &eps, &n);
    pc_model *m = pt_model(18);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 5, 5, 2});
    pc_node *pool = pt_node(m, "AveragePool", "com.ms.internal.nhwc", "x", "y", NULL);
    CHECK_OK(pc_node_set_attr_ints(pool, "kernel_shape", 2, (int64_t[]){2, 2}, &err), &err);
    pt_output(m, "y");
    CHECK_OK(pc_model_set_opset(m, "com.ms.internal.nhwc", 18, &err), &err);
    CHECK_STATUS(pc_model_partition(m, eps, n, NULL, NULL, &r, &err), PC_ERR_UNSUPPORTED, &err);
    CHECK_MSG(strstr(err.message,
                     "node 'y' (com.ms.internal.nhwc:AveragePool): no EP claims it (pool17: opset 18 "
                     "of 'com.ms.internal.nhwc' is outside 1..17; cpu: op "
                     "com.ms.internal.nhwc:AveragePool is not in the EP's op list)") != NULL,
              "%s", err.message);
    pc_model_free(m);

    /* no cpu in the list: an op nobody claims */
    eps_of("nhwc", &eps, &n);
    m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    pt_node(m, "Relu", "", "x", "r", NULL);
    pt_node(m, "Cos", "", "r", "y", NULL);
    pt_output(m, "y");
    CHECK_STATUS(pc_model_partition(m, eps, n, NULL, NULL, &r, &err), PC_ERR_UNSUPPORTED, &err);
    CHECK_MSG(strstr(err.message,
                     "node 'y' (Cos): no EP claims it (nhwc: op ai.onnx:Cos is not in the EP's op list)") !=
                  NULL,
              "%s", err.message);
    pc_model_free(m);

    CHECK_STATUS(pc_model_partition(NULL, eps, n, NULL, NULL, &r, &err), PC_ERR_USAGE, &err);
    m = pt_model(17);
    CHECK_STATUS(pc_model_partition(m, eps, 0, NULL, NULL, &r, &err), PC_ERR_USAGE, &err);
    pc_model_free(m);
}

/* An NHWC EP that claims a node but not its NHWC form (at the domain's opset) keeps it in NCHW form: the
 * layout transformer does not move what the EP would then refuse (before, the partitioner failed with "moved
 * to com.ms.internal.nhwc ... which did not claim it afterwards"). */
static void test_nhwc_form_refused(void)
{
    const pc_ep **eps;
    uint32_t n;
    pc_partition_result r;
    pc_error err;
    char why[PT_WHY_SIZE];
    /* 'broken' has no NHWC Conv row at all */
    eps_of("broken,cpu", &eps, &n);
    pc_model *m = conv_relu_model(NULL);
    pc_model *before = pt_clone(m);
    CHECK_OK(pc_model_partition(m, eps, n, NULL, NULL, &r, &err), &err);
    pc_node *conv = node_named(m, "c");
    CHECK(conv && conv->domain[0] == '\0' && ep_is(conv, "broken"));
    CHECK(ep_is(node_named(m, "y"), "cpu"));
    CHECK(r.n_layout_changes == 0 && pt_count_op(m, "Transpose") == 0);
    CHECK(pc_model_opset(m, "com.ms.internal.nhwc") < 0);
    check_result(m, &r, "broken,cpu");
    CHECK_MSG(pt_equiv(before, m, 9, 0, 0, why, sizeof why) == 1, "%s", why);
    pc_model_free(before);
    pc_model_free(m);

    /* 'pool17' claims AveragePool at any opset but its NHWC form only up to 17; the model is at 18 */
    eps_of("pool17,cpu", &eps, &n);
    m = pt_model(18);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 5, 5});
    pc_node *pool = pt_node(m, "AveragePool", "", "x", "y", NULL);
    CHECK_OK(pc_node_set_attr_ints(pool, "kernel_shape", 2, (int64_t[]){2, 2}, &err), &err);
    pt_output(m, "y");
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    before = pt_clone(m);
    CHECK_OK(pc_model_partition(m, eps, n, NULL, NULL, &r, &err), &err);
    CHECK(pool->domain[0] == '\0' && ep_is(pool, "pool17"));
    CHECK(r.n_layout_changes == 0 && m->graph->n_nodes == 1);
    check_result(m, &r, "pool17,cpu");
    CHECK_MSG(pt_equiv(before, m, 10, 0, 0, why, sizeof why) == 1, "%s", why);
    pc_model_free(before);
    pc_model_free(m);
}

/* Partitions m, then a reload of the result with the same EPs and rules: the second run must keep every
 * assignment (byte-identical graph), and both must compute what the original does. */
static void repartition_case(const char *label, const char *list, const char *rules_text, pc_model *m)
{
    const pc_ep **eps;
    uint32_t n;
    eps_of(list, &eps, &n);
    pc_error err;
    pc_layer_rules *rules = NULL;
    if (rules_text) CHECK_OK(pc_layer_rules_parse(rules_text, eps, n, &rules, &err), &err);
    pc_model *orig = pt_clone(m);
    pc_partition_result r;
    CHECK_OK(pc_model_partition(m, eps, n, rules, NULL, &r, &err), &err);
    check_result(m, &r, label);
    pc_model *again = pt_clone(m);
    CHECK_OK(pc_graph_infer_shapes(again->graph, &err), &err);
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t s1 = 0, s2 = 0;
    CHECK_OK(pc_model_save_bytes(again, &b1, &s1, &err), &err);
    CHECK_OK(pc_model_partition(again, eps, n, rules, NULL, &r, &err), &err);
    check_result(again, &r, label);
    /* node by node first, for a readable failure */
    const pc_node *a = m->graph->first, *b = again->graph->first;
    for (; a && b; a = a->next, b = b->next)
        CHECK_MSG(strcmp(a->name, b->name) == 0 && a->ep && b->ep && strcmp(a->ep, b->ep) == 0,
                  "%s: '%s' on %s first, '%s' on %s again", label, a->name, a->ep, b->name, b->ep);
    CHECK_MSG(!a && !b, "%s: node counts differ", label);
    CHECK_OK(pc_model_save_bytes(again, &b2, &s2, &err), &err);
    CHECK_MSG(s1 == s2 && b1 && b2 && memcmp(b1, b2, s1) == 0,
              "%s: the second partitioning changed the bytes", label);
    free(b1);
    free(b2);
    char why[PT_WHY_SIZE];
    CHECK_MSG(pt_equiv(orig, again, 11, 0, 0, why, sizeof why) == 1, "%s: %s", label, why);
    pc_model_free(again);
    pc_model_free(orig);
    pc_layer_rules_free(rules);
    pc_model_free(m);
}

/* Partitioning a partitioned graph with the same EPs and rules keeps every assignment that is still valid. */
static void test_repartition(void)
{
    /* the finding: 'lay' claims the Transposes its layout change inserted (GetCapability #2, after 'tr' had
     * its turn); offered again from scratch, 'tr' (earlier in the list) would take them */
    pc_model *m = conv_relu_model(NULL);
    pc_model *probe = pt_clone(m);
    const pc_ep **eps;
    uint32_t n;
    eps_of("tr,lay,cpu", &eps, &n);
    pc_error err;
    CHECK_OK(pc_graph_infer_shapes(probe->graph, &err), &err);
    CHECK_OK(pc_model_partition(probe, eps, n, NULL, NULL, NULL, &err), &err);
    uint32_t t = 0;
    for (pc_node *x = probe->graph->first; x; x = x->next)
        if (strcmp(x->op_type, "Transpose") == 0) {
            t++;
            CHECK_MSG(ep_is(x, "lay"), "Transpose '%s' -> %s", x->name, x->ep);
        }
    CHECK(t >= 1);
    pc_model_free(probe);
    repartition_case("tr,lay,cpu", "tr,lay,cpu", NULL, m);
    /* a layer rule pinned the nodes to cpu; the annotations are gone after the first run, the assignment
     * stays */
    repartition_case("pinned to cpu", "nhwc,cpu", "cpu(enc)", conv_relu_model("enc.0"));
    repartition_case("nhwc,cpu", "nhwc,cpu", NULL, conv_relu_model("enc.0"));
    repartition_case("npu,cpu", "npu,cpu", NULL, conv_relu_model(NULL));
}

/* Which existing assignments stay: valid ones (EP listed, claims the node, no rule pins the node elsewhere);
 * the others are cleared and the node is partitioned as if it had none. */
static void test_kept_assignments(void)
{
    const pc_ep **eps;
    uint32_t n;
    eps_of("nhwc,cpu", &eps, &n);
    static const struct {
        const char *name, *op, *ann, *ep, *want;
    } nodes[] = {
        {"a", "Relu", NULL, "cpu", "cpu"},    /* valid: kept although nhwc comes first */
        {"b", "Relu", NULL, "gone", "nhwc"},  /* EP not in the list */
        {"c", "Cos", NULL, "nhwc", "cpu"},    /* nhwc does not claim Cos */
        {"d", "Relu", "head", "cpu", "nhwc"}, /* a rule pins it to nhwc */
        {"e", "Relu", "post", "cpu", "cpu"},  /* a rule pins it to its own EP */
        {"f", "Relu", "head", NULL, "nhwc"},
    };
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
        pc_node *x = pt_node(m, nodes[i].op, "", "x", nodes[i].name, nodes[i].ann);
        x->ep = nodes[i].ep;
        pt_output(m, nodes[i].name);
    }
    pc_error err;
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    pc_layer_rules *rules = NULL;
    CHECK_OK(pc_layer_rules_parse("nhwc(head); cpu(post)", eps, n, &rules, &err), &err);
    pc_partition_result r;
    CHECK_OK(pc_model_partition(m, eps, n, rules, NULL, &r, &err), &err);
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
        pc_node *x = node_named(m, nodes[i].name);
        CHECK_MSG(ep_is(x, nodes[i].want), "node %s (on %s before) -> %s, want %s", nodes[i].name,
                  nodes[i].ep ? nodes[i].ep : "-", x ? x->ep : "?", nodes[i].want);
    }
    check_result(m, &r, "kept assignments");
    pc_layer_rules_free(rules);
    pc_model_free(m);
}

/* Layer rules: pins hide nodes from other EPs; unclaimed pins are released; leftmost rule wins. */
static void test_annotations(void)
{
    const pc_ep **eps;
    uint32_t n;
    eps_of("nhwc,cpu", &eps, &n);
    static const struct {
        const char *name, *ann, *op;
    } nodes[] = {
        {"a", "encoder.0", "Relu"}, {"b", "encoder.1", "Relu"}, {"c", "head", "Relu"},
        {"d", "header", "Relu"},    {"e", "post", "Relu"},      {"f", NULL, "Relu"},
        {"g", "header", "Cos"},
    };
    static const struct {
        const char *rules;
        const char *expect; /* EP per node a..g: n = nhwc, c = cpu */
    } cases[] = {
        {NULL, "nnnnnnc"},
        /* prefix 'enc' and exact '=head' pin to cpu; 'he' pins header to nhwc; Cos pinned to nhwc is released
         */
        {"cpu(=head, enc); nhwc(he)", "cccnnnc"},
        /* leftmost wins: nhwc's 'he' comes first, so head goes to nhwc too */
        {"nhwc(he); cpu(=head, enc)", "ccnnnnc"},
        {"cpu(encoder.1); nhwc(=encoder.1, enc)", "ncnnnnc"},
        /* exact does not match a longer annotation */
        {"cpu(=encoder)", "nnnnnnc"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pc_model *m = pt_model(17);
        pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
        for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
            pt_node(m, nodes[i].op, "", "x", nodes[i].name, nodes[i].ann);
            pt_output(m, nodes[i].name);
        }
        pc_error err;
        CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
        pc_layer_rules *rules = NULL;
        if (cases[k].rules) CHECK_OK(pc_layer_rules_parse(cases[k].rules, eps, n, &rules, &err), &err);
        pc_partition_result r;
        CHECK_OK(pc_model_partition(m, eps, n, rules, NULL, &r, &err), &err);
        for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
            pc_node *x = node_named(m, nodes[i].name);
            const char *want = cases[k].expect[i] == 'n' ? "nhwc" : "cpu";
            CHECK_MSG(ep_is(x, want), "rules '%s': node %s (%s) -> %s, want %s", cases[k].rules,
                      nodes[i].name, nodes[i].ann ? nodes[i].ann : "-", x ? x->ep : "?", want);
        }
        check_result(m, &r, cases[k].rules ? cases[k].rules : "no rules");
        pc_layer_rules_free(rules);
        pc_model_free(m);
    }

    /* new Transposes carry the Conv's annotation and so its pin: npu does not run Transpose, the pin is
     * released and cpu takes them; nhwc does, and claims them */
    for (int e = 0; e < 2; e++) {
        eps_of(e ? "nhwc,cpu" : "npu,cpu", &eps, &n);
        pc_model *m = conv_relu_model("enc.0");
        pc_error err;
        pc_layer_rules *rules = NULL;
        CHECK_OK(pc_layer_rules_parse(e ? "nhwc(enc)" : "npu(enc)", eps, n, &rules, &err), &err);
        pc_partition_result r;
        CHECK_OK(pc_model_partition(m, eps, n, rules, NULL, &r, &err), &err);
        for (pc_node *x = m->graph->first; x; x = x->next) {
            const char *want =
                strcmp(x->op_type, "Transpose") == 0 ? (e ? "nhwc" : "cpu") : (e ? "nhwc" : "npu");
            CHECK_MSG(ep_is(x, want), "%s: %s -> %s, want %s", e ? "nhwc" : "npu", x->name, x->ep, want);
        }
        check_result(m, &r, "pinned conv");
        pc_layer_rules_free(rules);
        pc_model_free(m);
    }

    /* pinned to cpu (later in the list): nhwc must not see the Conv, so no layout change */
    eps_of("nhwc,cpu", &eps, &n);
    pc_model *m = conv_relu_model("enc.0");
    pc_error err;
    pc_layer_rules *rules = NULL;
    CHECK_OK(pc_layer_rules_parse("cpu(enc)", eps, n, &rules, &err), &err);
    pc_partition_result r;
    CHECK_OK(pc_model_partition(m, eps, n, rules, NULL, &r, &err), &err);
    CHECK(r.n_layout_changes == 0 && pt_count_op(m, "Transpose") == 0);
    for (pc_node *x = m->graph->first; x; x = x->next)
        CHECK(ep_is(x, "cpu"));
    check_result(m, &r, "pinned to cpu");
    pc_layer_rules_free(rules);
    pc_model_free(m);
}

/* a (nhwc) feeds c (nhwc) directly and through b (cpu): {a, c} as one group would be a cycle through b. */
static void test_groups_acyclic(void)
{
    const pc_ep **eps;
    uint32_t n;
    eps_of("nhwc,cpu", &eps, &n);
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    pt_node(m, "Relu", "", "x", "a", NULL);
    pt_node(m, "Cos", "", "a", "b", NULL);
    pt_node(m, "Add", "", "a,b", "c", NULL);
    pt_node(m, "Neg", "", "c", "d", NULL);
    pt_node(m, "Abs", "", "x", "e", NULL); /* a separate branch joining at the end */
    pt_node(m, "Add", "", "d,e", "y", NULL);
    pt_output(m, "y");
    pc_error err;
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    pc_model *copy = pt_clone(m);
    CHECK_OK(pc_graph_infer_shapes(copy->graph, &err), &err); /* intermediate types are not saved */
    pc_partition_result r, r2;
    CHECK_OK(pc_model_partition(m, eps, n, NULL, NULL, &r, &err), &err);
    CHECK(ep_is(node_named(m, "b"), "cpu"));
    check_result(m, &r, "diamond");
    /* {a, e} may share level 0 but are not connected; {c, d, y} come after the cpu node */
    pc_node *a = node_named(m, "a"), *c = node_named(m, "c");
    int ga = -1, gc = -1;
    for (uint32_t s = 0; s < r.n_subgraphs; s++)
        for (uint32_t k = 0; k < r.subgraphs[s].n_nodes; k++) {
            if (r.subgraphs[s].nodes[k] == a) ga = (int)s;
            if (r.subgraphs[s].nodes[k] == c) gc = (int)s;
        }
    CHECK(ga >= 0 && gc >= 0 && ga != gc);
    CHECK(r.n_subgraphs == 4); /* nhwc {a}, {c, d, y}, {e}; cpu {b} */
    uint32_t sizes = 0;
    for (uint32_t s = 0; s < r.n_subgraphs; s++)
        sizes += r.subgraphs[s].n_nodes;
    CHECK(sizes == 6);
    /* deterministic: the same input partitions the same way */
    CHECK_OK(pc_model_partition(copy, eps, n, NULL, NULL, &r2, &err), &err);
    CHECK(r2.n_subgraphs == r.n_subgraphs);
    for (uint32_t s = 0; s < r.n_subgraphs && s < r2.n_subgraphs; s++) {
        CHECK(r.subgraphs[s].ep == r2.subgraphs[s].ep && r.subgraphs[s].n_nodes == r2.subgraphs[s].n_nodes);
        for (uint32_t k = 0; k < r.subgraphs[s].n_nodes && k < r2.subgraphs[s].n_nodes; k++)
            CHECK(strcmp(r.subgraphs[s].nodes[k]->name, r2.subgraphs[s].nodes[k]->name) == 0);
    }
    char diff[256];
    CHECK_MSG(pc_model_equal(m, copy, diff, sizeof diff), "%s", diff);
    pc_model_free(copy);
    pc_model_free(m);
}

/* If bodies take the If node's EP. */
static void test_subgraphs_inherit(void)
{
    const char *dir = getenv("PC_TESTDATA_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/node/test_if/model.onnx", dir ? dir : "/usr/share/libonnx-testdata/data");
    pc_model *m = NULL;
    pc_error err;
    if (pc_model_load_file(path, NULL, &m, &err) != PC_OK) {
        printf("skip: %s\n", err.message);
        return;
    }
    const pc_ep **eps;
    uint32_t n;
    eps_of("nhwc,cpu", &eps, &n);
    pc_partition_result r;
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    CHECK_OK(pc_model_partition(m, eps, n, NULL, NULL, &r, &err), &err);
    uint32_t inner = 0;
    for (pc_node *x = m->graph->first; x; x = x->next) {
        CHECK(ep_is(x, "cpu"));
        for (uint32_t a = 0; a < x->n_attrs; a++)
            if (x->attrs[a].type == PC_ATTR_GRAPH)
                for (pc_node *y = x->attrs[a].g->first; y; y = y->next, inner++)
                    CHECK_MSG(ep_is(y, x->ep), "body node '%s' -> %s", y->name, y->ep);
    }
    CHECK(inner >= 2);
    pc_model_free(m);
}

int main(void)
{
    pc_error err;
    if (pc_ep_registry_create(&reg, &err) != PC_OK) pt_die("registry", &err);
    if (pc_ep_registry_load_text(reg, test_eps, "test_eps", &err) != PC_OK) pt_die("test eps", &err);
    test_nhwc_claims_transposes();
    test_ep_without_transpose();
    test_errors();
    test_nhwc_form_refused();
    test_repartition();
    test_kept_assignments();
    test_annotations();
    test_groups_acyclic();
    test_subgraphs_inherit();
    pc_ep_registry_free(reg);
    return pc_test_finish("test_ep_partition");
}
