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
    return PC_CAPO_CLAIMS;
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
    };
    return (unsigned)r < PC_CAPO_REASON_COUNT ? phrases[r] : "?";
}
