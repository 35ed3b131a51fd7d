/* remove_dq_q (level 0): DequantizeLinear -> QuantizeLinear with equal constant scales, equal zero points
 * (both absent, or equal tensors), equal axis and block_size and the same quantized element type on both
 * ends: the consumers of the Q's output read the DQ's input. Exact for integer types: q = round((x - zp) * s
 * / s) + zp gives x back, as the rounding error of the product and quotient is far below 0.5 (ORT removes the
 * pair on the same grounds). A graph output keeps its name (an Identity takes it over when the DQ's input
 * cannot). */
#include "core/passes/pass_match.h"

static bool tensors_same(const pc_tensor *a, const pc_tensor *b)
{
    if (!a || !b || a->dtype != b->dtype || a->rank != b->rank || a->n_bytes != b->n_bytes) return false;
    for (int32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return a->n_bytes == 0 || memcmp(a->data, b->data, a->n_bytes) == 0;
}

static bool is_integer_quant_type(pc_dtype d)
{
    return d == PC_DTYPE_UINT8 || d == PC_DTYPE_INT8 || d == PC_DTYPE_UINT16 || d == PC_DTYPE_INT16 ||
           d == PC_DTYPE_INT32;
}

/* The element type Q produces: its zero point's, else output_dtype (opset 21), else uint8. */
static pc_dtype q_output_type(const pc_node *q)
{
    if (q->n_inputs > 2 && q->inputs[2]) return pm_elem(q->inputs[2]);
    int64_t od = pc_node_attr_int(q, "output_dtype", 0);
    return od ? (pc_dtype)od : PC_DTYPE_UINT8;
}

/* *why: the condition that refused (PC_MISS_COUNT: the nodes are malformed) */
static bool pair_matches(const pc_node *dq, const pc_node *q, pc_miss_reason *why)
{
    *why = PC_MISS_COUNT;
    if (dq->n_inputs < 2 || q->n_inputs < 2 || !dq->inputs[0] || !dq->inputs[1] || !q->inputs[1])
        return false;
    *why = PC_MISS_NOT_CONSTANT;
    if (!tensors_same(pc_value_const(dq->inputs[1]), pc_value_const(q->inputs[1]))) return false;
    const pc_value *zd = dq->n_inputs > 2 ? dq->inputs[2] : NULL, *zq = q->n_inputs > 2 ? q->inputs[2] : NULL;
    if ((zd == NULL) != (zq == NULL)) return false;
    if (zd && !tensors_same(pc_value_const(zd), pc_value_const(zq))) return false;
    *why = PC_MISS_ATTRIBUTE;
    if (pc_node_attr_int(dq, "axis", 1) != pc_node_attr_int(q, "axis", 1) ||
        pc_node_attr_int(dq, "block_size", 0) != pc_node_attr_int(q, "block_size", 0))
        return false;
    *why = PC_MISS_TYPE;
    pc_dtype in = pm_elem(dq->inputs[0]), out = q_output_type(q), declared = pm_elem(q->outputs[0]);
    if (in != out || !is_integer_quant_type(in)) return false;
    return declared == PC_DTYPE_UNDEFINED || declared == in;
}

pc_status pc_pass_remove_dq_q(pc_graph *graph, const pc_pass_options *opts, bool *changed, pc_error *err)
{
    *changed = false;
    bool added = false;
    pm_nodes nodes;
    pc_status st = pm_nodes_snapshot(graph, &nodes, err);
    for (uint32_t i = 0; st == PC_OK && i < nodes.n; i++) {
        pc_node *q = nodes.items[i];
        if (!pm_is_op(q, "QuantizeLinear") || q->n_outputs != 1 || !q->outputs[0] || !q->inputs[0] ||
            !pc_pass_can_modify(opts, q))
            continue;
        pc_node *dq = q->inputs[0]->producer;
        if (!dq || dq->graph != graph || !pm_is_op(dq, "DequantizeLinear")) continue;
        if (!pc_pass_can_modify(opts, dq) || !pc_nodes_fusable(dq, q)) {
            pc_pass_near_miss(opts, PC_RW_DQ_Q_REMOVED, PC_MISS_ANNOTATION);
            continue;
        }
        pc_miss_reason why;
        if (!pair_matches(dq, q, &why)) {
            if (why != PC_MISS_COUNT) pc_pass_near_miss(opts, PC_RW_DQ_Q_REMOVED, why);
            continue;
        }
        const char *ql = pm_label(q), *dql = pm_label(dq);
        bool done = false;
        st = pm_replace_output_for(graph, opts, q, 0, dq->inputs[0], &added, &done, err);
        if (!done) {
            if (st == PC_OK) pc_pass_near_miss(opts, PC_RW_DQ_Q_REMOVED, PC_MISS_SHARED);
            continue;
        }
        pc_pass_note(opts, PC_RW_DQ_Q_REMOVED);
        pc_pass_explain(opts, "removed DequantizeLinear '%s' -> QuantizeLinear '%s' (equal parameters)", dql,
                        ql);
        *changed = true;
    }
    pm_nodes_free(&nodes);
    if (st == PC_OK && added) st = pc_graph_sort(graph, err);
    return st;
}
