/* The capability oracle (model in capability_oracle.h), written from docs/ep.md. */
#include <string.h>

#include "core/internal.h"
#include "properties/oracles/capability_oracle.h"

/* "ai.onnx" and "" name one domain. */
static bool same_domain(const char *a, const char *b)
{
    if (pc_name_eq(a, "ai.onnx")) a = "";
    if (pc_name_eq(b, "ai.onnx")) b = "";
    return pc_name_eq(a, b);
}

/* The model's opset for the domain; -1 when the model does not import it. */
static int64_t opset_of(const pc_model *m, const char *domain)
{
    for (uint32_t i = 0; i < m->n_opsets; i++)
        if (same_domain(m->opsets[i].domain, domain)) return m->opsets[i].version;
    return -1;
}

static bool is_standard_domain(const char *domain)
{
    return same_domain(domain, "") || pc_name_eq(domain, "ai.onnx.ml") ||
           pc_name_eq(domain, "ai.onnx.preview.training");
}

static bool calls_function(const pc_model *m, const char *domain, const char *op)
{
    for (uint32_t i = 0; i < m->n_functions; i++)
        if (same_domain(m->functions[i].domain, domain) && pc_name_eq(m->functions[i].name, op)) return true;
    return false;
}

static bool standard_claim(const pc_model *m, const char *domain, const char *op, int64_t opset)
{
    if (calls_function(m, domain, op)) return true;
    if (!is_standard_domain(domain) || opset < 1) return false;
    const pc_domain_info *info = pc_schema_domain(domain);
    if (!info || !info->has_schemas) return false;
    return opset > info->schema_max_opset || pc_schema_lookup(domain, op, opset) != NULL;
}

/* ---- groups (docs/ep.md, "group=dq-relu-q"): found by scanning the graph's nodes, not through the IR's
 * consumer lists core uses */

/* The node reading v when exactly one node input in v's graph does and v is not a graph output; else NULL. */
static const pc_node *sole_reader(const pc_value *v)
{
    if (!v || v->is_graph_output || v->n_subgraph_refs) return NULL;
    const pc_node *found = NULL;
    uint32_t uses = 0;
    for (const pc_node *n = v->graph->first; n; n = n->next)
        for (uint32_t i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] == v) {
                found = n;
                uses++;
            }
    return uses == 1 ? found : NULL;
}

static bool plain_op(const pc_node *n, const char *op)
{
    return n && same_domain(n->domain, "") && pc_name_eq(n->op_type, op);
}

/* Scale (one float) and zero point (one int8/uint8 value, absent: uint8 0) of a Q or DQ; false otherwise. */
static bool per_tensor(const pc_node *n, float *scale, pc_dtype *type, int64_t *zp)
{
    const pc_tensor *s = n->n_inputs > 1 && n->inputs[1] ? pc_value_const(n->inputs[1]) : NULL;
    if (!s || s->dtype != PC_DTYPE_FLOAT || s->n_elements != 1) return false;
    *scale = *(const float *)s->data;
    *type = PC_DTYPE_UINT8;
    *zp = 0;
    if (n->n_inputs < 3 || !n->inputs[2]) return true;
    const pc_tensor *z = pc_value_const(n->inputs[2]);
    if (!z || z->n_elements != 1) return false;
    *type = z->dtype;
    if (z->dtype == PC_DTYPE_UINT8)
        *zp = *(const uint8_t *)z->data;
    else if (z->dtype == PC_DTYPE_INT8)
        *zp = *(const int8_t *)z->data;
    else
        return false;
    return true;
}

static bool dq_relu_q_chain(const pc_node *dq, const pc_node *relu, const pc_node *q)
{
    if (!plain_op(dq, "DequantizeLinear") || !plain_op(relu, "Relu") || !plain_op(q, "QuantizeLinear"))
        return false;
    if (dq->n_outputs < 1 || relu->n_outputs < 1 || relu->n_inputs != 1 || q->n_inputs < 1) return false;
    if (sole_reader(dq->outputs[0]) != relu || relu->inputs[0] != dq->outputs[0]) return false;
    if (sole_reader(relu->outputs[0]) != q || q->inputs[0] != relu->outputs[0]) return false;
    float s1, s2;
    pc_dtype t1, t2;
    int64_t z1, z2;
    if (!per_tensor(dq, &s1, &t1, &z1) || !per_tensor(q, &s2, &t2, &z2)) return false;
    const pc_value *x = dq->inputs[0];
    return x && x->type.kind == PC_TYPE_TENSOR && x->type.elem == t1 && t1 == t2 && z1 == z2 &&
           memcmp(&s1, &s2, sizeof s1) == 0;
}

static const pc_node *producer_of(const pc_node *n)
{
    return n && n->n_inputs && n->inputs[0] ? n->inputs[0]->producer : NULL;
}

static bool in_group(pc_ep_group group, const pc_node *n)
{
    if (group == PC_EP_GROUP_NONE) return true;
    if (group != PC_EP_GROUP_DQ_RELU_Q) return false;
    if (plain_op(n, "DequantizeLinear")) {
        const pc_node *relu = n->n_outputs ? sole_reader(n->outputs[0]) : NULL;
        return relu && relu->n_outputs && dq_relu_q_chain(n, relu, sole_reader(relu->outputs[0]));
    }
    if (plain_op(n, "Relu"))
        return n->n_outputs && dq_relu_q_chain(producer_of(n), n, sole_reader(n->outputs[0]));
    if (plain_op(n, "QuantizeLinear")) return dq_relu_q_chain(producer_of(producer_of(n)), producer_of(n), n);
    return false;
}

/* Why a row whose op type and domain match does not claim the node (PC_CAPO_CLAIMS: it does). */
static pc_capo_reason row_refusal(const pc_ep_op *row, const pc_node *node, int64_t opset)
{
    if (opset < 0) return PC_CAPO_NOT_IMPORTED;
    if (opset < row->opset_min || opset > row->opset_max) return PC_CAPO_OPSET;
    if (row->dtypes) {
        const pc_value *v = node->n_inputs ? node->inputs[0] : node->n_outputs ? node->outputs[0] : NULL;
        if (!v || v->type.kind != PC_TYPE_TENSOR || v->type.elem == PC_DTYPE_UNDEFINED) return PC_CAPO_DTYPE;
        if ((unsigned)v->type.elem >= 64 || !((row->dtypes >> (unsigned)v->type.elem) & 1u))
            return PC_CAPO_DTYPE;
    }
    if (row->rank) {
        const pc_value *v = node->n_inputs ? node->inputs[0] : node->n_outputs ? node->outputs[0] : NULL;
        if (!v || v->type.kind != PC_TYPE_TENSOR || v->type.shape.rank != row->rank) return PC_CAPO_RANK;
    }
    for (uint32_t r = 0; r < row->n_attr_rules; r++) {
        const pc_ep_attr_rule *rule = &row->attr_rules[r];
        int64_t value = 0;
        bool have = false;
        for (uint32_t a = 0; a < node->n_attrs; a++)
            if (pc_name_eq(node->attrs[a].name, rule->name)) {
                if (node->attrs[a].type != PC_ATTR_INT) return PC_CAPO_ATTRIBUTE;
                value = node->attrs[a].i;
                have = true;
                break;
            }
        if (!have) {
            if (!rule->has_default) return PC_CAPO_ATTRIBUTE;
            value = rule->default_value;
        }
        bool listed = false;
        for (uint32_t k = 0; k < rule->n_values; k++)
            listed = listed || rule->values[k] == value;
        if (!listed) return PC_CAPO_ATTRIBUTE;
    }
    return in_group(row->group, node) ? PC_CAPO_CLAIMS : PC_CAPO_GROUP;
}

static bool row_matches_op(const pc_ep_op *row, const pc_node *node, const char *domain)
{
    return same_domain(row->domain, domain) &&
           (pc_name_eq(row->op_type, "*") || pc_name_eq(row->op_type, node->op_type));
}

pc_capo_reason pc_capo_decide(const pc_ep *ep, const pc_node *node)
{
    const char *domain = node->domain ? node->domain : "";
    const pc_model *m = node->graph ? node->graph->model : NULL;
    if (!m) return PC_CAPO_NOT_LISTED;
    int64_t opset = opset_of(m, domain);
    if (same_domain(domain, "") && pc_name_eq(node->op_type, "Transpose") && !ep->runs_transpose)
        return PC_CAPO_TRANSPOSE;
    if (ep->all_standard_ops && standard_claim(m, domain, node->op_type, opset)) return PC_CAPO_CLAIMS;
    /* any row claiming decides; otherwise the first row of the op says why */
    pc_capo_reason first = PC_CAPO_NOT_LISTED;
    for (uint32_t i = 0; i < ep->n_ops; i++) {
        if (!row_matches_op(&ep->ops[i], node, domain)) continue;
        pc_capo_reason r = row_refusal(&ep->ops[i], node, opset);
        if (r == PC_CAPO_CLAIMS) return r;
        if (first == PC_CAPO_NOT_LISTED) first = r;
    }
    return first;
}

bool pc_capo_claims(const pc_ep *ep, const pc_node *node)
{
    return pc_capo_decide(ep, node) == PC_CAPO_CLAIMS;
}

const char *pc_capo_reason_phrase(pc_capo_reason r)
{
    static const char *const phrases[PC_CAPO_REASON_COUNT] = {
        [PC_CAPO_CLAIMS] = "",
        [PC_CAPO_TRANSPOSE] = "does not run Transpose",
        [PC_CAPO_NOT_LISTED] = "is not in the EP's op list",
        [PC_CAPO_NOT_IMPORTED] = "is not imported by the model",
        [PC_CAPO_OPSET] = "opset ",
        [PC_CAPO_DTYPE] = "element type ",
        [PC_CAPO_ATTRIBUTE] = "attribute '",
        [PC_CAPO_GROUP] = "not part of a ",
        [PC_CAPO_RANK] = "rank ",
    };
    return (unsigned)r < PC_CAPO_REASON_COUNT ? phrases[r] : "?";
}
