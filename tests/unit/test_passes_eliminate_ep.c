/* After partitioning the eliminations, prunes and fusions run once per EP and may change the nodes of that EP
 * only: a graph output taken over by the input's producer rewrites that producer, and a producer left without
 * uses is removed with the node — neither may happen to another EP's node (seed-1 suite findings
 * ep-assignment@eliminate_dropout/foreign-ep-modified and @eliminate_identity/...). Each case runs the pass
 * for the foreign setup (refused, the other EP's node unchanged, outputs equal on the reference executor) and
 * for a single-EP setup (done), then the whole pipeline on the repro's shape with a hook that checks, after
 * every per-EP step, that no node of another EP changed, and that optimizing twice gives the same bytes. */
#include "core/passes/pass.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

static pc_node *find_node(const pc_model *m, const char *name)
{
    for (pc_node *n = m->graph->first; n; n = n->next)
        if (strcmp(n->name, name) == 0) return n;
    return NULL;
}

/* "op|domain|ep|out,out" of a live node, or "" when it is gone. */
static void node_sig(const pc_node *n, char *buf, size_t size)
{
    if (!n) {
        buf[0] = '\0';
        return;
    }
    int k = snprintf(buf, size, "%s|%s|%s|", n->op_type, n->domain, n->ep ? n->ep : "");
    for (uint32_t i = 0; i < n->n_outputs && k > 0 && (size_t)k < size; i++)
        k += snprintf(buf + k, size - (size_t)k, "%s,", n->outputs[i] ? n->outputs[i]->name : "");
}

/* Runs fn with provider `provider`; returns whether it changed the graph, checks outputs against the
 * original. */
static bool run_for(pc_pass_fn fn, const char *pass, pc_model *m, const char *provider)
{
    pc_model *before = pt_clone(m);
    pc_pass_options o = pt_pass_options(pass);
    o.provider = provider;
    bool changed = pt_run_pass(fn, m, &o);
    char why[PT_WHY_SIZE] = "";
    CHECK_MSG(pt_equiv(before, m, 3, 0, 0, why, sizeof why) == 1, "%s for %s: %s", pass,
              provider ? provider : "-", why);
    pc_model_free(before);
    return changed;
}

/* x -> Neg 'p' (EP producer_ep) -> v -> OP 'n' (EP cpu) -> y (graph output), plus whatever `extra` adds. */
typedef void (*build_fn)(pc_model *m);

static pc_model *chain(const char *producer_ep, build_fn add_consumer)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    pc_node *p = pt_node(m, "Neg", "", "x", "v", NULL);
    p->ep = producer_ep;
    add_consumer(m);
    pt_output(m, "y");
    for (pc_node *n = m->graph->first; n; n = n->next)
        if (!n->ep) n->ep = "cpu";
    pc_error err;
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    return m;
}

static void add_dropout(pc_model *m)
{
    pt_node(m, "Dropout", "", "v", "y", NULL);
}
static void add_identity(pc_model *m)
{
    pt_node(m, "Identity", "", "v", "y", NULL);
}
static void add_mul_one(pc_model *m)
{
    pt_const_f(m, "one", 0, NULL, (float[]){1.0f});
    pt_node(m, "Mul", "", "v,one", "y", NULL);
}
/* CastLike(v2, v): v is read only by the CastLike, so removing it would leave 'p' dead */
static void add_castlike(pc_model *m)
{
    pt_node(m, "Abs", "", "x", "v2", NULL);
    pt_node(m, "CastLike", "", "v2,v", "y", NULL);
}
/* Reshape(x, Shape(v)) -> Reshape(., [6]): fusing drops the first shape and with it 'p' (through the Shape)
 */
static void add_reshapes(pc_model *m)
{
    pt_node(m, "Shape", "", "v", "s", NULL);
    pt_node(m, "Reshape", "", "x,s", "r", NULL);
    pt_const_i64(m, "flat", 1, (int64_t[]){6});
    pt_node(m, "Reshape", "", "r,flat", "y", NULL);
}

typedef struct elim_case {
    const char *pass;
    pc_pass_fn fn;
    build_fn build;
} elim_case;

static void test_foreign_nodes_untouched(void)
{
    const elim_case cases[] = {
        {"eliminate_dropout", pc_pass_eliminate_dropout, add_dropout},
        {"eliminate_identity", pc_pass_eliminate_identity, add_identity},
        {"prune_simple", pc_pass_prune_simple, add_mul_one},
        {"eliminate_cast", pc_pass_eliminate_cast, add_castlike},
        {"fuse_reshape", pc_pass_fuse_reshape, add_reshapes},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const elim_case *c = &cases[i];
        /* the producer is on nhwc, the rest on cpu: the cpu run must leave 'p' exactly as it was */
        pc_model *m = chain("nhwc", c->build);
        char before[256], after[256];
        node_sig(find_node(m, "v"), before, sizeof before);
        run_for(c->fn, c->pass, m, "cpu");
        node_sig(find_node(m, "v"), after, sizeof after);
        CHECK_MSG(strcmp(before, after) == 0, "%s for cpu changed the nhwc node: '%s' -> '%s'", c->pass,
                  before, after);
        /* nor may the nhwc run touch the cpu nodes */
        int n_nodes = (int)m->graph->n_nodes;
        CHECK_MSG(!run_for(c->fn, c->pass, m, "nhwc"), "%s for nhwc changed cpu nodes", c->pass);
        CHECK(n_nodes == (int)m->graph->n_nodes);
        pc_model_free(m);

        /* everything on cpu: the same rewrite happens */
        m = chain("cpu", c->build);
        CHECK_MSG(run_for(c->fn, c->pass, m, "cpu"), "%s did nothing with every node on cpu", c->pass);
        pc_model_free(m);
    }
}

/* x -> QuantizeLinear 'q0' (EP producer_ep) -> DequantizeLinear -> QuantizeLinear -> y (graph output), the
 * pair on cpu: removing it makes q0 produce y (the shape of the seed-3 finding
 * ep-assignment@remove_dq_q/...). */
static pc_model *dq_q_model(const char *producer_ep)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 1, (int64_t[]){6});
    pt_const_f(m, "s", 0, NULL, (float[]){0.5f});
    pt_const(m, "zp", PC_DTYPE_UINT8, 0, NULL, (uint8_t[]){3});
    pt_node(m, "QuantizeLinear", "", "x,s,zp", "q0", NULL)->ep = producer_ep;
    pt_node(m, "DequantizeLinear", "", "q0,s,zp", "d", NULL)->ep = "cpu";
    pt_node(m, "QuantizeLinear", "", "d,s,zp", "y", NULL)->ep = "cpu";
    pt_output(m, "y");
    pc_error err;
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    return m;
}

static void test_remove_dq_q_foreign(void)
{
    pc_model *m = dq_q_model("nhwc");
    char before[256], after[256];
    node_sig(find_node(m, "q0"), before, sizeof before);
    run_for(pc_pass_remove_dq_q, "remove_dq_q", m, "cpu");
    node_sig(find_node(m, "q0"), after, sizeof after);
    CHECK_MSG(strcmp(before, after) == 0, "remove_dq_q for cpu changed the nhwc node: '%s' -> '%s'", before,
              after);
    pc_model_free(m);
    m = dq_q_model("cpu");
    CHECK(run_for(pc_pass_remove_dq_q, "remove_dq_q", m, "cpu"));
    CHECK(pt_count_op(m, "DequantizeLinear") == 0 && pt_count_op(m, "QuantizeLinear") == 1);
    pc_model_free(m);
}

/* ---- the whole pipeline on the shape of the shrunk repro: Transpose (nhwc) feeding a BatchNormalization and
 * a Dropout whose output is a graph output */

typedef struct node_snap {
    char name[128], ep[64], sig[256];
} node_snap;

typedef struct foreign_hook {
    node_snap *prev; /* every node after the previous step */
    uint32_t n_prev;
    char bad[512];
} foreign_hook;

static node_snap *snapshot(const pc_model *m, uint32_t *n)
{
    node_snap *s = calloc(m->graph->n_nodes ? m->graph->n_nodes : 1, sizeof *s);
    *n = 0;
    if (!s) return NULL;
    for (const pc_node *x = m->graph->first; x; x = x->next, (*n)++) {
        snprintf(s[*n].name, sizeof s[*n].name, "%s", x->name);
        snprintf(s[*n].ep, sizeof s[*n].ep, "%s", x->ep ? x->ep : "");
        node_sig(x, s[*n].sig, sizeof s[*n].sig);
    }
    return s;
}

/* After each per-EP step: every node of another EP before it is still there, unchanged. */
static pc_status check_foreign(void *ctx, const char *pass, const char *provider, pc_model *model,
                               bool changed, pc_error *err)
{
    (void)changed;
    foreign_hook *h = ctx;
    uint32_t n = 0;
    node_snap *now = snapshot(model, &n);
    if (!now) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; provider && i < h->n_prev && !h->bad[0]; i++) {
        const node_snap *b = &h->prev[i];
        if (!b->ep[0] || strcmp(b->ep, provider) == 0) continue;
        bool same = false;
        for (uint32_t k = 0; k < n && !same; k++)
            same = strcmp(now[k].name, b->name) == 0 && strcmp(now[k].sig, b->sig) == 0;
        if (!same)
            snprintf(h->bad, sizeof h->bad, "%s for %s changed node '%s' (%s)", pass, provider, b->name,
                     b->sig);
    }
    free(h->prev);
    h->prev = now;
    h->n_prev = n;
    return PC_OK;
}

static void test_pipeline_repro(void)
{
    pc_error err;
    pc_model *m = pt_model(17);
    m->graph->name = "repro";
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 4, 5});
    pt_const_f(m, "scale", 1, (int64_t[]){4}, (float[]){1.5f, 0.5f, 1.0f, 2.0f});
    pt_const_f(m, "bias", 1, (int64_t[]){4}, (float[]){0.25f, -0.5f, 0.0f, 1.0f});
    pt_const_f(m, "mean", 1, (int64_t[]){4}, (float[]){0.125f, 0.5f, -0.25f, 0.0f});
    pt_const_f(m, "var", 1, (int64_t[]){4}, (float[]){2.0f, 0.5f, 1.0f, 0.25f});
    pt_node(m, "Transpose", "", "x", "t", NULL); /* default perm: reversed, [5,4,3,2] */
    pt_node(m, "BatchNormalization", "", "t,scale,bias,mean,var", "bn", NULL);
    pt_node(m, "Dropout", "", "t", "y", NULL);
    pt_output(m, "bn");
    pt_output(m, "y");
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    pc_model *original = pt_clone(m);

    pc_ep_registry *reg = NULL;
    CHECK_OK(pc_ep_registry_create(&reg, &err), &err);
    const pc_ep **eps = NULL;
    uint32_t n_eps = 0;
    CHECK_OK(pc_ep_registry_parse_list(reg, "nhwc,cpu", &eps, &n_eps, &err), &err);
    pc_optimize_options o;
    pc_optimize_options_default(&o);
    o.eps = eps;
    o.n_eps = n_eps;
    o.verify_each_pass = true;
    foreign_hook h = {0};
    o.after_pass = check_foreign;
    o.after_pass_ctx = &h;
    CHECK_OK(pc_model_optimize(m, &o, NULL, &err), &err);
    CHECK_MSG(!h.bad[0], "%s", h.bad);
    char why[PT_WHY_SIZE] = "";
    CHECK_MSG(pt_equiv(original, m, 9, 1e-6, 1e-6, why, sizeof why) == 1, "%s", why);

    /* and again: nothing changes, and still no foreign node is touched */
    uint8_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    CHECK_OK(pc_model_save_bytes(m, &a, &na, &err), &err);
    pc_model *again = pt_clone(m);
    CHECK_OK(pc_graph_infer_shapes(again->graph, &err), &err);
    free(h.prev);
    h.prev = NULL;
    h.n_prev = 0;
    CHECK_OK(pc_model_optimize(again, &o, NULL, &err), &err);
    CHECK_MSG(!h.bad[0], "second run: %s", h.bad);
    CHECK_OK(pc_model_save_bytes(again, &b, &nb, &err), &err);
    CHECK_MSG(na == nb && memcmp(a, b, na) == 0, "optimizing the optimized repro again changes it");
    free(a);
    free(b);
    free(h.prev);
    pc_model_free(again);
    pc_model_free(original);
    pc_model_free(m);
    pc_ep_registry_free(reg);
}

int main(void)
{
    test_foreign_nodes_untouched();
    test_remove_dq_q_foreign();
    test_pipeline_repro();
    return pc_test_finish("test_passes_eliminate_ep");
}
