/* Structural equality of models, for round-trip tests: describes the first difference found. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ir/ir_internal.h"

typedef struct eq_ctx {
    char *diff;
    size_t size;
} eq_ctx;

static bool differ(eq_ctx *c, const char *fmt, ...) PC_PRINTF(2, 3);
static bool differ(eq_ctx *c, const char *fmt, ...)
{
    if (c->diff && c->size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->diff, c->size, fmt, ap);
        va_end(ap);
    }
    return false;
}

/* NULL and "" are the same string: protobuf has no way to tell an absent string from an empty one here. */
static bool s_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool kvs_eq(eq_ctx *c, const char *where, uint32_t na, const pc_kv *a, uint32_t nb, const pc_kv *b)
{
    if (na != nb) return differ(c, "%s: %u vs %u metadata entries", where, na, nb);
    for (uint32_t i = 0; i < na; i++)
        if (!s_eq(a[i].key, b[i].key) || !s_eq(a[i].value, b[i].value))
            return differ(c, "%s: metadata %u differs ('%s'='%s' vs '%s'='%s')", where, i, a[i].key,
                          a[i].value, b[i].key, b[i].value);
    return true;
}

static bool tensor_eq(eq_ctx *c, const char *where, const pc_tensor *a, const pc_tensor *b)
{
    if (!pc_tensor_equal(a, b)) return differ(c, "%s: tensor '%s' differs", where, a->name ? a->name : "");
    if (!s_eq(a->doc_string, b->doc_string)) return differ(c, "%s: tensor doc_string differs", where);
    return kvs_eq(c, where, a->n_metadata, a->metadata, b->n_metadata, b->metadata);
}

static bool graph_eq(eq_ctx *c, const pc_graph *a, const pc_graph *b);

static bool attr_eq(eq_ctx *c, const char *where, const pc_attr *a, const pc_attr *b)
{
    if (!s_eq(a->name, b->name) || a->type != b->type)
        return differ(c, "%s: attribute '%s' (%s) vs '%s' (%s)", where, a->name, pc_attr_type_name(a->type),
                      b->name, pc_attr_type_name(b->type));
    if (!s_eq(a->doc_string, b->doc_string))
        return differ(c, "%s: attribute '%s' doc_string differs", where, a->name);
    switch (a->type) {
    case PC_ATTR_FLOAT:
        if (memcmp(&a->f, &b->f, sizeof a->f) != 0)
            return differ(c, "%s: attribute '%s' float differs", where, a->name);
        return true;
    case PC_ATTR_INT:
        if (a->i != b->i)
            return differ(c, "%s: attribute '%s': %lld vs %lld", where, a->name, (long long)a->i,
                          (long long)b->i);
        return true;
    case PC_ATTR_STRING:
        if (a->s.len != b->s.len || (a->s.len && memcmp(a->s.data, b->s.data, a->s.len) != 0))
            return differ(c, "%s: attribute '%s' string differs", where, a->name);
        return true;
    case PC_ATTR_TENSOR:
        return tensor_eq(c, where, a->t, b->t);
    case PC_ATTR_GRAPH:
        return graph_eq(c, a->g, b->g);
    case PC_ATTR_TYPE_PROTO:
        if (!pc_type_equal(a->tp, b->tp)) return differ(c, "%s: attribute '%s' type differs", where, a->name);
        return true;
    default:
        break;
    }
    if (a->n != b->n)
        return differ(c, "%s: attribute '%s' has %zu vs %zu elements", where, a->name, a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        bool same = true;
        switch (a->type) {
        case PC_ATTR_FLOATS:
            same = memcmp(&a->floats[i], &b->floats[i], sizeof(float)) == 0;
            break;
        case PC_ATTR_INTS:
            same = a->ints[i] == b->ints[i];
            break;
        case PC_ATTR_STRINGS:
            same = a->strings[i].len == b->strings[i].len &&
                   (!a->strings[i].len ||
                    memcmp(a->strings[i].data, b->strings[i].data, a->strings[i].len) == 0);
            break;
        case PC_ATTR_TENSORS:
            if (!tensor_eq(c, where, a->tensors[i], b->tensors[i])) return false;
            break;
        case PC_ATTR_GRAPHS:
            if (!graph_eq(c, a->graphs[i], b->graphs[i])) return false;
            break;
        case PC_ATTR_TYPE_PROTOS:
            same = pc_type_equal(a->tps[i], b->tps[i]);
            break;
        default:
            same = false;
        }
        if (!same) return differ(c, "%s: attribute '%s' element %zu differs", where, a->name, i);
    }
    return true;
}

static bool value_eq(eq_ctx *c, const char *where, const pc_value *a, const pc_value *b)
{
    if (!a || !b) {
        if (a != b) return differ(c, "%s: one side omits the value", where);
        return true;
    }
    if (!s_eq(a->name, b->name)) return differ(c, "%s: value '%s' vs '%s'", where, a->name, b->name);
    if (!pc_type_equal(&a->type, &b->type))
        return differ(c, "%s: value '%s' has a different type", where, a->name);
    if (!s_eq(a->doc_string, b->doc_string))
        return differ(c, "%s: value '%s' doc_string differs", where, a->name);
    return kvs_eq(c, where, a->n_metadata, a->metadata, b->n_metadata, b->metadata);
}

static bool node_eq(eq_ctx *c, const pc_node *a, const pc_node *b)
{
    char where[256];
    snprintf(where, sizeof where, "node '%s' (%s)", a->name ? a->name : "", a->op_type);
    if (!s_eq(a->name, b->name) || !s_eq(a->op_type, b->op_type) || !s_eq(a->domain, b->domain))
        return differ(c, "%s vs node '%s' (%s.%s)", where, b->name ? b->name : "", b->domain, b->op_type);
    if (!s_eq(a->overload, b->overload) || !s_eq(a->doc_string, b->doc_string))
        return differ(c, "%s: overload or doc_string differs", where);
    if (!s_eq(a->ep, b->ep))
        return differ(c, "%s: EP '%s' vs '%s'", where, a->ep ? a->ep : "", b->ep ? b->ep : "");
    if (a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs || a->n_attrs != b->n_attrs)
        return differ(c, "%s: %u/%u/%u vs %u/%u/%u inputs/outputs/attributes", where, a->n_inputs,
                      a->n_outputs, a->n_attrs, b->n_inputs, b->n_outputs, b->n_attrs);
    for (uint32_t i = 0; i < a->n_inputs; i++) {
        const pc_value *x = a->inputs[i], *y = b->inputs[i];
        if ((x == NULL) != (y == NULL) || (x && !s_eq(x->name, y->name)))
            return differ(c, "%s: input %u '%s' vs '%s'", where, i, x ? x->name : "", y ? y->name : "");
    }
    for (uint32_t i = 0; i < a->n_outputs; i++)
        if (!value_eq(c, where, a->outputs[i], b->outputs[i])) return false;
    for (uint32_t i = 0; i < a->n_attrs; i++)
        if (!attr_eq(c, where, &a->attrs[i], &b->attrs[i])) return false;
    return kvs_eq(c, where, a->n_metadata, a->metadata, b->n_metadata, b->metadata);
}

static bool value_infos_eq(eq_ctx *c, const char *where, const pc_graph *a, const pc_graph *b)
{
    const pc_value **la = malloc((a->n_values ? a->n_values : 1) * sizeof *la);
    const pc_value **lb = malloc((b->n_values ? b->n_values : 1) * sizeof *lb);
    bool same = la && lb;
    if (!same) differ(c, "%s: out of memory comparing value_info", where);
    size_t na = same ? pc_graph_value_info_list(a, la) : 0, nb = same ? pc_graph_value_info_list(b, lb) : 0;
    if (same && na != nb) same = differ(c, "%s: %zu vs %zu value_info entries", where, na, nb);
    for (size_t i = 0; same && i < na; i++)
        same = value_eq(c, where, la[i], lb[i]);
    free(la);
    free(lb);
    return same;
}

static bool graph_eq(eq_ctx *c, const pc_graph *a, const pc_graph *b)
{
    const char *gn = a->name ? a->name : "";
    if (!s_eq(a->name, b->name)) return differ(c, "graph '%s' vs '%s'", gn, b->name ? b->name : "");
    if (!s_eq(a->doc_string, b->doc_string)) return differ(c, "graph '%s': doc_string differs", gn);
    if (a->n_nodes != b->n_nodes) return differ(c, "graph '%s': %u vs %u nodes", gn, a->n_nodes, b->n_nodes);
    if (a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs || a->n_initializers != b->n_initializers)
        return differ(c, "graph '%s': inputs/outputs/initializers %u/%u/%u vs %u/%u/%u", gn, a->n_inputs,
                      a->n_outputs, a->n_initializers, b->n_inputs, b->n_outputs, b->n_initializers);
    char where[256];
    snprintf(where, sizeof where, "graph '%s'", gn);
    for (uint32_t i = 0; i < a->n_inputs; i++)
        if (!value_eq(c, where, a->inputs[i], b->inputs[i])) return false;
    for (uint32_t i = 0; i < a->n_outputs; i++)
        if (!value_eq(c, where, a->outputs[i], b->outputs[i])) return false;
    for (uint32_t i = 0; i < a->n_initializers; i++) {
        if (!value_eq(c, where, a->initializers[i], b->initializers[i])) return false;
        if (!tensor_eq(c, where, a->initializers[i]->initializer, b->initializers[i]->initializer))
            return false;
    }
    for (const pc_node *x = a->first, *y = b->first; x && y; x = x->next, y = y->next)
        if (!node_eq(c, x, y)) return false;
    /* value_info entries in their canonical order (the saver's), not creation order, which depends on the
     * order of the file a loader read */
    if (!value_infos_eq(c, where, a, b)) return false;
    if (a->n_opaque != b->n_opaque) return differ(c, "graph '%s': opaque field counts differ", gn);
    for (uint32_t k = 0; k < a->n_opaque; k++)
        if (a->opaque[k].field_number != b->opaque[k].field_number ||
            a->opaque[k].bytes.len != b->opaque[k].bytes.len ||
            memcmp(a->opaque[k].bytes.data, b->opaque[k].bytes.data, a->opaque[k].bytes.len) != 0)
            return differ(c, "graph '%s': opaque field %u differs", gn, k);
    return kvs_eq(c, where, a->n_metadata, a->metadata, b->n_metadata, b->metadata);
}

bool pc_model_equal(const pc_model *a, const pc_model *b, char *diff, size_t diff_size)
{
    eq_ctx c = {diff, diff_size};
    if (diff && diff_size) diff[0] = '\0';
    if (a->ir_version != b->ir_version)
        return differ(&c, "ir_version %lld vs %lld", (long long)a->ir_version, (long long)b->ir_version);
    if (!s_eq(a->producer_name, b->producer_name) || !s_eq(a->producer_version, b->producer_version) ||
        !s_eq(a->domain, b->domain) || a->model_version != b->model_version ||
        !s_eq(a->doc_string, b->doc_string))
        return differ(&c, "model header fields differ");
    if (a->n_opsets != b->n_opsets) return differ(&c, "%u vs %u opset imports", a->n_opsets, b->n_opsets);
    for (uint32_t i = 0; i < a->n_opsets; i++)
        if (!s_eq(a->opsets[i].domain, b->opsets[i].domain) || a->opsets[i].version != b->opsets[i].version)
            return differ(&c, "opset import %u differs", i);
    if (!kvs_eq(&c, "model", a->n_metadata, a->metadata, b->n_metadata, b->metadata)) return false;
    if (a->n_opaque != b->n_opaque) return differ(&c, "opaque model field counts differ");
    for (uint32_t k = 0; k < a->n_opaque; k++)
        if (a->opaque[k].field_number != b->opaque[k].field_number ||
            a->opaque[k].bytes.len != b->opaque[k].bytes.len ||
            memcmp(a->opaque[k].bytes.data, b->opaque[k].bytes.data, a->opaque[k].bytes.len) != 0)
            return differ(&c, "opaque model field %u differs", k);
    return graph_eq(&c, a->graph, b->graph);
}
