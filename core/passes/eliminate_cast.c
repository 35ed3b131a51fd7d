/* eliminate_cast (level 0): Cast to the element type its input already has, and CastLike whose two inputs
 * have the same element type, are removed. The input's type must be known (initializer or declared/inferred
 * type). */
#include "core/passes/pass_match.h"

/* The element type the node casts to, or UNDEFINED when it is not a Cast/CastLike we understand. */
static pc_dtype cast_target(const pc_node *n)
{
    if (pm_is_op(n, "Cast")) {
        const pc_attr *to = pc_node_attr(n, "to");
        return to && to->type == PC_ATTR_INT && pc_dtype_is_valid((int32_t)to->i) ? (pc_dtype)to->i
                                                                                  : PC_DTYPE_UNDEFINED;
    }
    if (pm_is_op(n, "CastLike") && n->n_inputs >= 2) return pm_elem(n->inputs[1]);
    return PC_DTYPE_UNDEFINED;
}

pc_status pc_pass_eliminate_cast(pc_graph *graph, const pc_pass_options *opts, bool *changed, pc_error *err)
{
    *changed = false;
    pm_nodes nodes;
    pc_status st = pm_nodes_snapshot(graph, &nodes, err);
    for (uint32_t i = 0; st == PC_OK && i < nodes.n; i++) {
        pc_node *n = nodes.items[i];
        if (n->removed || n->n_inputs < 1 || !n->inputs[0] || n->n_outputs != 1) continue;
        pc_dtype to = cast_target(n);
        pc_dtype from = pm_elem(n->inputs[0]);
        pc_rewrite_kind kind = pm_is_op(n, "Cast") ? PC_RW_CAST_REMOVED : PC_RW_CASTLIKE_REMOVED;
        if (to != PC_DTYPE_UNDEFINED && from == PC_DTYPE_UNDEFINED && pc_pass_can_modify(opts, n))
            pc_pass_near_miss(opts, kind, PC_MISS_TYPE); /* the input's type is unknown */
        /* planted bug (--inject cast-same-width-removed): a Cast between two types of the same bit width
         * (int32 <-> float, int8 <-> uint8, int64 <-> double) is taken for a no-op and bypassed too */
        bool noop = from == to;
        if (!noop && pc_fault_active(PC_FAULT_CAST_SAME_WIDTH) && kind == PC_RW_CAST_REMOVED &&
            to != PC_DTYPE_UNDEFINED && from != PC_DTYPE_UNDEFINED &&
            pc_dtype_bits(from) == pc_dtype_bits(to))
            noop = true;
        if (to == PC_DTYPE_UNDEFINED || !noop || n->inputs[0]->type.kind == PC_TYPE_SEQUENCE ||
            !pc_pass_can_modify(opts, n))
            continue;
        const char *label = pm_label(n), *op = n->op_type;
        bool done = false;
        st = pm_bypass(graph, opts, n, &done, err);
        if (st == PC_OK && done) {
            pc_pass_explain(opts, "removed %s '%s' to %s (input already %s)", op, label, pc_dtype_name(to),
                            pc_dtype_name(from));
            pc_pass_note(opts, kind);
            *changed = true;
        } else if (st == PC_OK) {
            pc_pass_near_miss(opts, kind, PC_MISS_SHARED);
        }
    }
    pm_nodes_free(&nodes);
    return st;
}
