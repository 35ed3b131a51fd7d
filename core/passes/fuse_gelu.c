/* fuse_gelu (level 1): the exact-erf GELU subgraph becomes one Gelu node:
 *     Div(x, sqrt2) | Mul(x, 1/sqrt2)  ->  Erf  ->  Add(., 1)  ->  Mul(x, .)  ->  Mul(., 0.5)
 *     ... or with the half taken first:  Mul(x, 0.5) -> Mul(., Add(...))
 * Operands of Add and Mul in either order; constants are one-element float tensors (scalar or rank <= x's)
 * within 1e-6 relative of sqrt(2), 1/sqrt(2), 1 and 0.5. Intermediate values must have one use, all nodes the
 * same annotation/EP. Emits ai.onnx Gelu (approximate "none") when the model's opset is >= 20, else
 * com.microsoft Gelu (importing com.microsoft version 1). After partitioning it runs again per EP, and only
 * where that EP runs the Gelu it would make. Not bit-exact: erf is evaluated once instead of through three
 * roundings. */
#include "core/passes/pass_match.h"

#define GELU_SQRT2     1.4142135623730951
#define GELU_INV_SQRT2 0.7071067811865476
#define GELU_RTOL      1e-6

typedef struct gelu_match {
    pc_node *nodes[5]; /* in graph order; the last one's output survives */
    pc_value *x;
} gelu_match;

/* The operand of binary node n that is not v, or NULL when v is not an operand (or both are v). */
static pc_value *other_operand(const pc_node *n, const pc_value *v)
{
    if (n->n_inputs != 2 || !n->inputs[0] || !n->inputs[1]) return NULL;
    if (n->inputs[0] == v && n->inputs[1] != v) return n->inputs[1];
    if (n->inputs[1] == v && n->inputs[0] != v) return n->inputs[0];
    return NULL;
}

/* v is a one-element constant of x's float type near `target`, whose broadcast leaves x's shape alone. */
static bool const_near(const pc_value *v, const pc_value *x, double target)
{
    const pc_tensor *t = pc_value_const(v);
    double c;
    if (!t || t->dtype != pm_elem(x) || !pm_scalar_f64(t, &c)) return false;
    if (t->rank > 0 && t->rank > pc_value_rank(x)) return false;
    return fabs(c - target) <= GELU_RTOL * fabs(target);
}

static bool const_operand_near(const pc_node *n, const pc_value *v, const pc_value *x, double target)
{
    const pc_value *o = other_operand(n, v);
    return o && const_near(o, x, target);
}

/* The single consumer of n's only output when it is an ai.onnx `op`. */
static pc_node *next_op(const pc_node *n, const char *op)
{
    if (n->n_outputs != 1 || !n->outputs[0]) return NULL;
    pc_node *c = pc_value_single_consumer(n->outputs[0]);
    return c && pm_is_op(c, op) && c->n_outputs == 1 && c->outputs[0] ? c : NULL;
}

static bool gelu_match_at(pc_node *erf, gelu_match *g)
{
    if (!pm_is_op(erf, "Erf") || erf->n_inputs != 1 || !erf->inputs[0]) return false;
    pc_node *d = erf->inputs[0]->producer;
    if (!d || d->graph != erf->graph || d->n_inputs != 2 || pc_value_single_consumer(d->outputs[0]) != erf)
        return false;
    pc_value *x;
    if (pm_is_op(d, "Div")) {
        x = d->inputs[0];
        if (!x || !const_near(d->inputs[1], x, GELU_SQRT2)) return false;
    } else if (pm_is_op(d, "Mul")) {
        x = pc_value_const(d->inputs[0]) ? d->inputs[1] : d->inputs[0];
        if (!x || !const_operand_near(d, x, x, GELU_INV_SQRT2)) return false;
    } else {
        return false;
    }
    if (!pm_dtype_is_float(pm_elem(x))) return false;
    pc_node *add = next_op(erf, "Add"), *m1 = add ? next_op(add, "Mul") : NULL;
    if (!m1 || !const_operand_near(add, erf->outputs[0], x, 1.0)) return false;
    pc_value *o = other_operand(m1, add->outputs[0]);
    if (!o) return false;
    pc_node **s = g->nodes;
    s[0] = d, s[1] = erf, s[2] = add;
    if (o == x) {
        /* x * (1 + erf) then * 0.5 */
        pc_node *m2 = next_op(m1, "Mul");
        if (!m2 || !const_operand_near(m2, m1->outputs[0], x, 0.5)) return false;
        s[3] = m1, s[4] = m2;
    } else {
        /* (x * 0.5) * (1 + erf) */
        pc_node *h = o->producer;
        if (!h || !pm_is_op(h, "Mul") || h->graph != erf->graph ||
            pc_value_single_consumer(h->outputs[0]) != m1 || !const_operand_near(h, x, x, 0.5))
            return false;
        s[3] = h, s[4] = m1;
    }
    g->x = x;
    return true;
}

pc_status pc_pass_fuse_gelu(pc_graph *graph, const pc_pass_options *opts, bool *changed, pc_error *err)
{
    *changed = false;
    pm_nodes nodes;
    pc_status st = pm_nodes_snapshot(graph, &nodes, err);
    for (uint32_t i = 0; st == PC_OK && i < nodes.n; i++) {
        gelu_match g;
        if (!gelu_match_at(nodes.items[i], &g)) continue;
        pc_node *last = g.nodes[4];
        bool ok = true;
        for (int k = 0; k < 5 && ok; k++)
            ok = pc_pass_can_modify(opts, g.nodes[k]) && pc_nodes_fusable(g.nodes[k], last);
        bool standard = pc_model_opset(graph->model, "") >= 20, imported = false;
        pc_rewrite_kind kind = standard ? PC_RW_GELU_FUSED : PC_RW_GELU_FUSED_MS;
        if (!ok) {
            pc_pass_near_miss(opts, kind, PC_MISS_ANNOTATION);
            continue;
        }
        const char *domain = standard ? "" : "com.microsoft";
        if ((st = pc_pass_import_domain(graph->model, domain, &imported, err)) != PC_OK) break;
        pc_node *gelu = pc_pass_add_node(graph, opts, "Gelu", domain, 1, &g.x, 1, last, err);
        if (!gelu) {
            st = err->status;
            break;
        }
        if (!pc_pass_ep_accepts(opts, gelu)) {
            /* after partitioning, an EP that runs the five nodes may not run Gelu: they stay */
            pc_pass_near_miss(opts, kind, PC_MISS_ANNOTATION);
            pc_pass_unimport_domain(graph->model, domain, imported);
            st = pc_pass_remove_dead(graph, gelu, err);
            continue;
        }
        if (pc_graph_move_output(last, 0, gelu, 0) != PC_OK) {
            st = pc_error_set(err, PC_ERR_INTERNAL, "moving output of node '%s'", pm_label(last));
            break;
        }
        pc_pass_explain(opts, "fused %s '%s' + Erf '%s' + Add '%s' + Mul '%s' + Mul '%s' -> %sGelu '%s'",
                        g.nodes[0]->op_type, pm_label(g.nodes[0]), pm_label(g.nodes[1]), pm_label(g.nodes[2]),
                        pm_label(g.nodes[3]), pm_label(g.nodes[4]), standard ? "" : "com.microsoft ",
                        gelu->name);
        pc_pass_note(opts, kind);
        st = pc_pass_remove_dead(graph, last, err);
        *changed = true;
    }
    pm_nodes_free(&nodes);
    if (st == PC_OK && *changed) st = pc_graph_sort(graph, err);
    return st;
}
