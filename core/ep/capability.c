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

static bool rank_ok(const pc_ep_op *op, const pc_node *node, char *why, size_t why_size)
{
    if (!op->rank) return true;
    const pc_value *v = typed_value(node);
    int32_t r = v && v->type.kind == PC_TYPE_TENSOR ? v->type.shape.rank : -1;
    if (r == op->rank) return true;
    if (r < 0)
        return set_why(why, why_size, "the rank of '%s' is unknown (rank %d needed)",
                       v ? v->name : "(omitted input)", (int)op->rank);
    return set_why(why, why_size, "rank %d of '%s' is not %d", (int)r, v->name, (int)op->rank);
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

/* ---- groups: patterns a row claims a node only as part of (pc_ep_group) */

/* The only reader of v (an input of one node, no graph output, no subgraph reference), or NULL. */
static const pc_node *only_reader(const pc_value *v)
{
    if (!v || v->n_consumers != 1 || v->is_graph_output || v->n_subgraph_refs) return NULL;
    return v->consumers[0].node;
}

static bool is_default_op(const pc_node *n, const char *op)
{
    return n && !n->domain[0] && pc_name_eq(n->op_type, op);
}

/* A per-tensor quantization parameter pair: scale (input 1, one float) and zero point (input 2, one 8-bit
 * value; absent: uint8 0). */
typedef struct qpair {
    float scale;
    pc_dtype type;
    int32_t zp;
} qpair;

static bool qpair_read(const pc_node *n, qpair *q)
{
    const pc_tensor *s = n->n_inputs > 1 ? pc_value_const(n->inputs[1]) : NULL;
    if (!s || s->dtype != PC_DTYPE_FLOAT || s->n_elements != 1) return false;
    memcpy(&q->scale, s->data, sizeof q->scale);
    const pc_tensor *z = n->n_inputs > 2 && n->inputs[2] ? pc_value_const(n->inputs[2]) : NULL;
    if (n->n_inputs > 2 && n->inputs[2] && !z) return false;
    q->type = z ? z->dtype : PC_DTYPE_UINT8;
    if (z && z->n_elements != 1) return false;
    if (q->type == PC_DTYPE_INT8)
        q->zp = z ? ((const int8_t *)z->data)[0] : 0;
    else if (q->type == PC_DTYPE_UINT8)
        q->zp = z ? ((const uint8_t *)z->data)[0] : 0;
    else
        return false;
    return true;
}

/* DQ -> Relu -> Q around n, with equal parameters (pc_ep_group's PC_EP_GROUP_DQ_RELU_Q). */
static bool in_dq_relu_q(const pc_node *n)
{
    const pc_node *dq, *relu, *q;
    if (is_default_op(n, "DequantizeLinear")) {
        dq = n;
        relu = n->n_outputs ? only_reader(n->outputs[0]) : NULL;
        q = relu && relu->n_outputs ? only_reader(relu->outputs[0]) : NULL;
    } else if (is_default_op(n, "Relu")) {
        relu = n;
        dq = n->n_inputs && n->inputs[0] ? n->inputs[0]->producer : NULL;
        q = n->n_outputs ? only_reader(n->outputs[0]) : NULL;
    } else if (is_default_op(n, "QuantizeLinear")) {
        q = n;
        relu = n->n_inputs && n->inputs[0] ? n->inputs[0]->producer : NULL;
        dq = relu && relu->n_inputs && relu->inputs[0] ? relu->inputs[0]->producer : NULL;
    } else {
        return false;
    }
    if (!is_default_op(dq, "DequantizeLinear") || !is_default_op(relu, "Relu") ||
        !is_default_op(q, "QuantizeLinear") || dq->graph != n->graph || relu->graph != n->graph ||
        q->graph != n->graph)
        return false;
    /* the chain itself: each the only reader of the one before */
    if (!dq->n_outputs || !relu->n_outputs || !q->n_inputs || only_reader(dq->outputs[0]) != relu ||
        relu->n_inputs != 1 || relu->inputs[0] != dq->outputs[0] || only_reader(relu->outputs[0]) != q ||
        q->inputs[0] != relu->outputs[0])
        return false;
    qpair a, b;
    const pc_value *x = dq->inputs[0];
    return qpair_read(dq, &a) && qpair_read(q, &b) && x && x->type.kind == PC_TYPE_TENSOR &&
           x->type.elem == a.type && a.type == b.type && a.zp == b.zp &&
           memcmp(&a.scale, &b.scale, sizeof a.scale) == 0;
}

static bool group_ok(pc_ep_group group, const pc_node *node, char *why, size_t why_size)
{
    switch (group) {
    case PC_EP_GROUP_NONE:
        return true;
    case PC_EP_GROUP_DQ_RELU_Q:
        if (in_dq_relu_q(node)) return true;
        return set_why(why, why_size, "not part of a DQ -> Relu -> Q group with equal parameters");
    case PC_EP_GROUP_COUNT:
        break;
    }
    return set_why(why, why_size, "unknown group %d", (int)group);
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
        if (!dtype_ok(op, node, w, why_size) || !rank_ok(op, node, w, why_size) ||
            !attrs_ok(op, node, w, why_size) || !group_ok(op->group, node, w, why_size))
            continue;
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
