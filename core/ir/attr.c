/* Node attributes: lookup and typed setters. */
#include <string.h>

#include "core/base/strmap.h"
#include "core/ir/ir_internal.h"

static const char *const attr_type_names[PC_ATTR_TYPE_COUNT] = {
    [PC_ATTR_UNDEFINED] = "UNDEFINED",
    [PC_ATTR_FLOAT] = "FLOAT",
    [PC_ATTR_INT] = "INT",
    [PC_ATTR_STRING] = "STRING",
    [PC_ATTR_TENSOR] = "TENSOR",
    [PC_ATTR_GRAPH] = "GRAPH",
    [PC_ATTR_FLOATS] = "FLOATS",
    [PC_ATTR_INTS] = "INTS",
    [PC_ATTR_STRINGS] = "STRINGS",
    [PC_ATTR_TENSORS] = "TENSORS",
    [PC_ATTR_GRAPHS] = "GRAPHS",
    [PC_ATTR_SPARSE_TENSOR] = "SPARSE_TENSOR",
    [PC_ATTR_SPARSE_TENSORS] = "SPARSE_TENSORS",
    [PC_ATTR_TYPE_PROTO] = "TYPE_PROTO",
    [PC_ATTR_TYPE_PROTOS] = "TYPE_PROTOS",
};

const char *pc_attr_type_name(pc_attr_type type)
{
    if ((unsigned)type >= PC_ATTR_TYPE_COUNT) return "?";
    return attr_type_names[type];
}

const pc_attr *pc_node_attr(const pc_node *node, const char *name)
{
    for (uint32_t i = 0; i < node->n_attrs; i++)
        if (pc_name_eq(node->attrs[i].name, name)) return &node->attrs[i];
    return NULL;
}

pc_attr *pc_node_attr_mut(pc_node *node, const char *name)
{
    return (pc_attr *)pc_node_attr(node, name);
}

int64_t pc_node_attr_int(const pc_node *node, const char *name, int64_t fallback)
{
    const pc_attr *a = pc_node_attr(node, name);
    return a && a->type == PC_ATTR_INT ? a->i : fallback;
}

float pc_node_attr_float(const pc_node *node, const char *name, float fallback)
{
    const pc_attr *a = pc_node_attr(node, name);
    return a && a->type == PC_ATTR_FLOAT ? a->f : fallback;
}

const char *pc_node_attr_string(const pc_node *node, const char *name, const char *fallback)
{
    const pc_attr *a = pc_node_attr(node, name);
    /* attribute strings are stored NUL-terminated one past len */
    return a && a->type == PC_ATTR_STRING && a->s.data ? (const char *)a->s.data : fallback;
}

/* Returns the attribute slot for `name`, reset to `type`; creates it at the end when absent. */
static pc_attr *attr_slot(pc_node *node, const char *name, pc_attr_type type, pc_error *err)
{
    pc_model *m = node->graph->model;
    pc_attr *a = pc_node_attr_mut(node, name);
    if (!a) {
        if (node->n_attrs == node->cap_attrs) {
            uint32_t ncap = node->cap_attrs ? node->cap_attrs * 2 : 4;
            pc_attr *na = pc_arena_array(&m->arena, ncap, sizeof *na);
            if (!na) {
                pc_model_alloc_error(m, err, "an attribute");
                return NULL;
            }
            if (node->n_attrs) memcpy(na, node->attrs, node->n_attrs * sizeof *na);
            node->attrs = na;
            node->cap_attrs = ncap;
        }
        a = &node->attrs[node->n_attrs];
        const char *n = pc_arena_strdup(&m->arena, name);
        if (!n) {
            pc_model_alloc_error(m, err, "an attribute");
            return NULL;
        }
        node->n_attrs++;
        memset(a, 0, sizeof *a);
        a->name = n;
    } else {
        const char *n = a->name;
        memset(a, 0, sizeof *a);
        a->name = n;
    }
    a->type = type;
    return a;
}

pc_status pc_node_set_attr_int(pc_node *node, const char *name, int64_t value, pc_error *err)
{
    pc_attr *a = attr_slot(node, name, PC_ATTR_INT, err);
    if (!a) return err ? err->status : PC_ERR_NOMEM;
    a->i = value;
    return PC_OK;
}

pc_status pc_node_set_attr_float(pc_node *node, const char *name, float value, pc_error *err)
{
    pc_attr *a = attr_slot(node, name, PC_ATTR_FLOAT, err);
    if (!a) return err ? err->status : PC_ERR_NOMEM;
    a->f = value;
    return PC_OK;
}

pc_status pc_node_set_attr_string(pc_node *node, const char *name, const char *value, pc_error *err)
{
    pc_model *m = node->graph->model;
    char *s = pc_arena_strdup(&m->arena, value);
    if (!s) return pc_model_alloc_error(m, err, "an attribute");
    pc_attr *a = attr_slot(node, name, PC_ATTR_STRING, err);
    if (!a) return err ? err->status : PC_ERR_NOMEM;
    a->s.data = (uint8_t *)s;
    a->s.len = strlen(s);
    return PC_OK;
}

pc_status pc_node_set_attr_ints(pc_node *node, const char *name, size_t n, const int64_t *values,
                                pc_error *err)
{
    pc_model *m = node->graph->model;
    int64_t *v = n ? pc_arena_array(&m->arena, n, sizeof *v) : NULL;
    if (n && !v) return pc_model_alloc_error(m, err, "an attribute");
    if (n) memcpy(v, values, n * sizeof *v);
    pc_attr *a = attr_slot(node, name, PC_ATTR_INTS, err);
    if (!a) return err ? err->status : PC_ERR_NOMEM;
    a->n = n;
    a->ints = v;
    return PC_OK;
}

pc_status pc_node_set_attr_floats(pc_node *node, const char *name, size_t n, const float *values,
                                  pc_error *err)
{
    pc_model *m = node->graph->model;
    float *v = n ? pc_arena_array(&m->arena, n, sizeof *v) : NULL;
    if (n && !v) return pc_model_alloc_error(m, err, "an attribute");
    if (n) memcpy(v, values, n * sizeof *v);
    pc_attr *a = attr_slot(node, name, PC_ATTR_FLOATS, err);
    if (!a) return err ? err->status : PC_ERR_NOMEM;
    a->n = n;
    a->floats = v;
    return PC_OK;
}

pc_status pc_node_set_attr_tensor(pc_node *node, const char *name, pc_tensor *tensor, pc_error *err)
{
    pc_attr *a = attr_slot(node, name, PC_ATTR_TENSOR, err);
    if (!a) return err ? err->status : PC_ERR_NOMEM;
    a->t = tensor;
    return PC_OK;
}

bool pc_node_remove_attr(pc_node *node, const char *name)
{
    for (uint32_t i = 0; i < node->n_attrs; i++) {
        if (strcmp(node->attrs[i].name, name) == 0) {
            memmove(&node->attrs[i], &node->attrs[i + 1], (node->n_attrs - i - 1) * sizeof(pc_attr));
            node->n_attrs--;
            return true;
        }
    }
    return false;
}

pc_status pc_node_set_attr_graph(pc_node *node, const char *name, pc_graph *graph, pc_error *err)
{
    if (!graph || graph->model != node->graph->model || graph->owner != node)
        return pc_error_set(err, PC_ERR_INTERNAL,
                            "node '%s': attribute '%s' must be a graph owned by the node",
                            node->name ? node->name : "", name);
    pc_attr *a = attr_slot(node, name, PC_ATTR_GRAPH, err);
    if (!a) return err ? err->status : PC_ERR_NOMEM;
    a->g = graph;
    return PC_OK;
}

pc_status pc_node_copy_attrs(pc_node *dst, const pc_node *src, pc_error *err)
{
    if (!src->n_attrs) return PC_OK;
    pc_model *m = dst->graph->model;
    uint32_t n = dst->n_attrs + src->n_attrs;
    pc_attr *a = pc_arena_array(&m->arena, n, sizeof *a);
    if (!a) return pc_model_alloc_error(m, err, "the attributes of a copied node");
    if (dst->n_attrs) memcpy(a, dst->attrs, dst->n_attrs * sizeof *a);
    memcpy(a + dst->n_attrs, src->attrs, src->n_attrs * sizeof *a);
    dst->attrs = a;
    dst->n_attrs = dst->cap_attrs = n;
    return PC_OK;
}
