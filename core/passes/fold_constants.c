/* fold_constants (level 0): a node whose inputs are all constants is evaluated by core's constant evaluator
 * (core/eval, never the reference executor) and its outputs become new initializers. Skipped:
 * nondeterministic ops, nodes with subgraphs, nodes whose output is a graph output or referenced by a
 * subgraph (their names must stay), ops or forms the evaluator does not support (PC_ERR_UNSUPPORTED) and
 * results over max_fold_elements (PC_ERR_BUDGET). Any other evaluator error is a bad model and stops the
 * pass. Initializers left unused are pruned. */
#include "core/eval/eval.h"
#include "core/passes/pass_match.h"

enum { FOLD_DEFAULT_MAX_ELEMENTS = 1 << 16, FOLD_MAX_INPUTS = 64, FOLD_MAX_OUTPUTS = 64 };

/* Ops whose result is not a function of their inputs: never folded, whatever the evaluator says. */
static const char *const nondeterministic_ops[] = {
    "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike",
    "Multinomial",  "Bernoulli",        "Dropout",
};

/* *why: the near-miss reason when false although every input is a constant (PC_MISS_COUNT: none) */
static bool node_is_foldable(const pc_node *n, pc_miss_reason *why)
{
    *why = PC_MISS_COUNT;
    if (n->n_inputs > FOLD_MAX_INPUTS || n->n_outputs > FOLD_MAX_OUTPUTS) return false;
    if (n->domain[0] == '\0')
        for (size_t i = 0; i < sizeof nondeterministic_ops / sizeof nondeterministic_ops[0]; i++)
            if (pc_name_eq(n->op_type, nondeterministic_ops[i])) return false;
    for (uint32_t a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].type == PC_ATTR_GRAPH || n->attrs[a].type == PC_ATTR_GRAPHS) return false;
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] && !pc_value_const(n->inputs[i])) return false;
    bool any_used = false;
    for (uint32_t i = 0; i < n->n_outputs; i++) {
        const pc_value *v = n->outputs[i];
        if (!v) continue;
        if (v->is_graph_output || v->n_subgraph_refs) {
            *why = PC_MISS_SHARED;
            return false;
        }
        any_used |= v->n_consumers > 0;
    }
    if (!any_used) return false;
    if (!pc_eval_supports(n)) {
        *why = PC_MISS_OTHER;
        return false;
    }
    return true;
}

/* Evaluates n and rewires its used outputs to new initializers. *folded false: the evaluator declined. */
static pc_status fold_node(pc_graph *g, const pc_pass_options *opts, pc_node *n, uint64_t max_elements,
                           bool *folded, pc_error *err)
{
    *folded = false;
    const pc_tensor *ins[FOLD_MAX_INPUTS];
    for (uint32_t i = 0; i < n->n_inputs; i++)
        ins[i] = n->inputs[i] ? pc_value_const(n->inputs[i]) : NULL;
    pc_tensor *outs[FOLD_MAX_OUTPUTS] = {NULL};
    pc_status st = pc_eval_node(n, ins, n->n_inputs, outs, max_elements, err);
    /* planted bug (--inject fold-skips-errors): an allocation failure read as "cannot fold", so the pass
     * succeeds with the node left in place (only the alloc-failure property sees it) */
    bool skip_any = st != PC_OK && pc_fault_active(PC_FAULT_FOLD_SKIPS_ERRORS);
    if (st == PC_ERR_UNSUPPORTED || st == PC_ERR_BUDGET || skip_any) {
        pc_pass_near_miss(opts, PC_RW_CONST_FOLDED, st == PC_ERR_BUDGET ? PC_MISS_TYPE : PC_MISS_OTHER);
        pc_error_clear(err);
        return PC_OK;
    }
    for (uint32_t i = 0; st == PC_OK && i < n->n_outputs; i++) {
        pc_value *v = n->outputs[i];
        if (!v || !v->n_consumers) continue;
        if (!outs[i]) {
            st = pc_error_set(err, PC_ERR_INTERNAL, "constant evaluator gave no output %u for node '%s'", i,
                              pm_label(n));
            break;
        }
        pc_value *c = pc_pass_add_initializer(g, v->name, outs[i], err);
        if (!c) {
            st = err->status;
            break;
        }
        if ((st = pc_value_replace_uses(v, c)) != PC_OK)
            pc_error_set(err, st, "rewiring the uses of '%s'", v->name);
    }
    if (st != PC_OK) return st;
    *folded = true;
    return pc_pass_remove_dead(g, n, err);
}

pc_status pc_pass_fold_constants(pc_graph *graph, const pc_pass_options *opts, bool *changed, pc_error *err)
{
    *changed = false;
    uint64_t max_elements =
        opts && opts->max_fold_elements ? opts->max_fold_elements : FOLD_DEFAULT_MAX_ELEMENTS;
    pm_nodes nodes;
    pc_status st = pm_nodes_snapshot(graph, &nodes, err);
    for (uint32_t i = 0; st == PC_OK && i < nodes.n; i++) {
        pc_node *n = nodes.items[i];
        if (n->removed || !pc_pass_can_modify(opts, n)) continue;
        pc_miss_reason why;
        if (!node_is_foldable(n, &why)) {
            if (why != PC_MISS_COUNT) pc_pass_near_miss(opts, PC_RW_CONST_FOLDED, why);
            continue;
        }
        const char *label = pm_label(n), *op = n->op_type;
        bool folded = false;
        st = fold_node(graph, opts, n, max_elements, &folded, err);
        if (st == PC_OK && folded) {
            pc_pass_explain(opts, "folded %s '%s' into constants", op, label);
            pc_pass_note(opts, PC_RW_CONST_FOLDED);
            *changed = true;
        }
    }
    pm_nodes_free(&nodes);
    if (st == PC_OK && *changed) st = pc_graph_prune_initializers(graph, NULL, err);
    return st;
}
