/* GetCapability on one node: op and domain, the model's opset for the domain, the element type of the first
 * input, attribute rules. The first rejection reason is reported so `passcheck partition` can say why a node
 * fell through.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/base/strmap.h"
#include "core/ep/ep_internal.h"
#include "core/ir/ir_internal.h"
#include "core/schema/schema.h"

#define SHOW_DOMAIN(d) ((d)[0] ? (d) : "ai.onnx")

static bool set_why(char *why, size_t why_size, const char *fmt, ...) PC_PRINTF(3, 4);

static bool set_why(char *why, size_t why_size, const char *fmt, ...)
{
    if (why && why_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_size, fmt, ap);
        va_end(ap);
    }
    return false;
}

/* The type whose element type the EP's dtype list constrains: first input, or first output without inputs. */
static const pc_value *typed_value(const pc_node *node)
{
    if (node->n_inputs) return node->inputs[0];
    return node->n_outputs ? node->outputs[0] : NULL;
}

static bool dtype_ok(const pc_ep_op *op, const pc_node *node, char *why, size_t why_size)
{
    if (!op->dtypes) return true;
    const pc_value *v = typed_value(node);
    if (!v || v->type.kind != PC_TYPE_TENSOR || v->type.elem == PC_DTYPE_UNDEFINED)
        return set_why(why, why_size, "element type of '%s' is unknown", v ? v->name : "(omitted input)");
    if ((unsigned)v->type.elem < 64 && (op->dtypes >> v->type.elem & 1u)) return true;
    return set_why(why, why_size, "element type %s of '%s' is not supported", pc_dtype_name(v->type.elem),
                   v->name);
}

static bool attrs_ok(const pc_ep_op *op, const pc_node *node, char *why, size_t why_size)
{
    for (uint32_t r = 0; r < op->n_attr_rules; r++) {
        const pc_ep_attr_rule *rule = &op->attr_rules[r];
        const pc_attr *a = pc_node_attr(node, rule->name);
        int64_t value;
        if (!a) {
            if (!rule->has_default) return set_why(why, why_size, "attribute '%s' is absent", rule->name);
            value = rule->default_value;
        } else if (a->type != PC_ATTR_INT) {
            return set_why(why, why_size, "attribute '%s' is not an int (%s)", rule->name,
                           pc_attr_type_name(a->type));
        } else {
            value = a->i;
        }
        bool found = false;
        for (uint32_t i = 0; i < rule->n_values && !found; i++)
            found = rule->values[i] == value;
        if (!found)
            return set_why(why, why_size, "attribute '%s' = %lld is not supported", rule->name,
                           (long long)value);
    }
    return true;
}

/* cpu's blanket claim: ops of the standard domains (ai.onnx, ai.onnx.ml, ai.onnx.preview.training) the schema
 * knows at the model's opset; above the schema table's newest opset of the domain (ops added after ONNX 1.12)
 * every op the verifier accepted; calls of model-local functions. */
static bool standard_op(const pc_node *node, const char *domain, int64_t opset)
{
    const pc_domain_info *info = pc_schema_domain(domain);
    if (info && info->has_schemas && opset >= 1) {
        if (pc_schema_lookup(domain, node->op_type, opset)) return true;
        if (opset > info->schema_max_opset) return true;
    }
    return pc_model_function_index(node->graph->model, domain, node->op_type) >= 0;
}

bool pc_ep_claims_node(const pc_ep *ep, const pc_node *node, char *why, size_t why_size)
{
    const char *domain = node->domain ? node->domain : "";
    const pc_model *model = node->graph ? node->graph->model : NULL;
    return pc_ep_claims_node_as(ep, node, domain, model ? pc_model_opset(model, domain) : -1, why, why_size);
}

bool pc_ep_claims_node_as(const pc_ep *ep, const pc_node *node, const char *domain, int64_t opset, char *why,
                          size_t why_size)
{
    if (why && why_size) why[0] = '\0';
    const pc_model *model = node->graph ? node->graph->model : NULL;
    if (!ep->runs_transpose && domain[0] == '\0' && pc_name_eq(node->op_type, "Transpose"))
        return set_why(why, why_size, "EP does not run Transpose");
    if (ep->all_standard_ops && model && standard_op(node, domain, opset)) return true;
    bool op_known = false;
    for (uint32_t i = 0; i < ep->n_ops; i++) {
        const pc_ep_op *op = &ep->ops[i];
        if (!pc_name_eq(op->domain, domain)) continue;
        bool any_op = op->op_type[0] == '*' && op->op_type[1] == '\0';
        if (!any_op && !pc_name_eq(op->op_type, node->op_type)) continue;
        /* later rows may cover other opset ranges of the same op: the first failure is the reason given */
        bool first = !op_known;
        op_known = true;
        char *w = first ? why : NULL;
        /* planted bug (--inject capability-refuses-min-opset): the minimum off by one */
        int64_t min = op->opset_min + (pc_fault_active(PC_FAULT_CAPABILITY_OPSET_MIN) ? 1 : 0);
        if (opset < min || opset > op->opset_max) {
            if (opset < 0)
                set_why(w, why_size, "domain '%s' is not imported by the model", SHOW_DOMAIN(domain));
            else if (op->opset_max == INT64_MAX) /* written A.. in EP files: no maximum */
                set_why(w, why_size, "opset %lld of '%s' is below %lld..", (long long)opset,
                        SHOW_DOMAIN(domain), (long long)op->opset_min);
            else
                set_why(w, why_size, "opset %lld of '%s' is outside %lld..%lld", (long long)opset,
                        SHOW_DOMAIN(domain), (long long)op->opset_min, (long long)op->opset_max);
            continue;
        }
        if (!dtype_ok(op, node, w, why_size) || !attrs_ok(op, node, w, why_size)) continue;
        if (why && why_size) why[0] = '\0';
        return true;
    }
    if (!op_known)
        set_why(why, why_size, "op %s:%s is not in the EP's op list", SHOW_DOMAIN(domain), node->op_type);
    return false;
}

bool pc_ep_claims_new_node(const pc_ep *ep, pc_graph *graph, const char *op_type, pc_dtype first_input)
{
    /* a stand-in with no attributes: the claim reads op, domain, opset and the first input's element type */
    pc_value in = {0};
    in.name = "";
    in.type.kind = PC_TYPE_TENSOR;
    in.type.elem = first_input;
    in.type.shape.rank = -1;
    pc_value *ins[1] = {&in};
    pc_node stub = {0};
    stub.op_type = op_type;
    stub.domain = "";
    stub.n_inputs = 1;
    stub.inputs = ins;
    stub.graph = graph;
    return pc_ep_claims_node(ep, &stub, NULL, 0);
}
