/* Inlining a node's body into its graph (pc_graph_inline_body): how the runtime runs a compiled subgraph (the
 * blocked EP's Subgraph node) as the run of its nodes. */
#include <stdlib.h>
#include <string.h>

#include "core/ir/ir_internal.h"

/* What a body value becomes in the outer graph. */
static pc_value *mapped(pc_value *const *map, const pc_value *v)
{
    if (!v) return NULL;
    if (v->outer) return v->outer;
    return map[v->id];
}

pc_status pc_graph_inline_body(pc_graph *graph, pc_node *node, const char *attr, pc_error *err)
{
    const pc_attr *a = pc_node_attr(node, attr);
    if (!a || a->type != PC_ATTR_GRAPH || !a->g)
        return pc_error_set(err, PC_ERR_ATTRIBUTE, "node '%s': attribute '%s' (a graph) is required",
                            node->name, attr);
    pc_graph *body = a->g;
    if (body->n_inputs != node->n_inputs || body->n_outputs != node->n_outputs)
        return pc_error_set(err, PC_ERR_ARITY, "node '%s': %u inputs and %u outputs, its body %u and %u",
                            node->name, node->n_inputs, node->n_outputs, body->n_inputs, body->n_outputs);
    for (const pc_node *n = body->first; n; n = n->next)
        for (uint32_t k = 0; k < n->n_attrs; k++)
            if (n->attrs[k].type == PC_ATTR_GRAPH || n->attrs[k].type == PC_ATTR_GRAPHS)
                return pc_error_set(err, PC_ERR_UNSUPPORTED,
                                    "node '%s': body node '%s' has a graph attribute", node->name, n->name);
    pc_mem *mem = &graph->model->mem;
    pc_value **map = pc_mem_calloc(mem, body->n_values ? body->n_values : 1, sizeof *map);
    if (!map)
        return pc_error_set(err, PC_ERR_NOMEM, "node '%s': out of memory inlining its body", node->name);
    pc_status st = PC_OK;
    for (uint32_t i = 0; i < body->n_inputs; i++)
        map[body->inputs[i]->id] = node->inputs[i];
    for (uint32_t i = 0; i < body->n_initializers && st == PC_OK; i++) {
        pc_value *bv = body->initializers[i];
        if (map[bv->id]) continue; /* an initializer that is also an input: the node's input wins */
        pc_value *v = pc_graph_add_value(graph, NULL, bv->name, err);
        if (!v || pc_value_set_type(v, &bv->type, err) != PC_OK ||
            pc_graph_set_initializer(graph, v, bv->initializer, err) != PC_OK)
            st = err->status;
        map[bv->id] = v;
    }
    /* the body's nodes, in order; an output the body returns is written to the node's output value */
    for (pc_node *bn = body->first; bn && st == PC_OK; bn = bn->next) {
        pc_value *ins[16], **in = bn->n_inputs <= 16 ? ins : malloc(bn->n_inputs * sizeof *in);
        if (!in) {
            st = pc_error_set(err, PC_ERR_NOMEM, "node '%s': out of memory inlining its body", node->name);
            break;
        }
        for (uint32_t i = 0; i < bn->n_inputs; i++)
            in[i] = mapped(map, bn->inputs[i]);
        pc_node *n =
            pc_graph_add_node(graph, bn->op_type, bn->domain, bn->n_inputs, in, bn->n_outputs, NULL, err);
        if (in != ins) free(in);
        if (!n) {
            st = err->status;
            break;
        }
        const char *name = pc_graph_unique_name(graph, bn->name && bn->name[0] ? bn->name : bn->op_type);
        if (!name) {
            st = pc_model_alloc_error(graph->model, err, "a node name");
            break;
        }
        n->name = name;
        pc_node_copy_ep(n, bn);
        if ((st = pc_node_copy_attrs(n, bn, err)) != PC_OK) break;
        for (uint32_t o = 0; o < bn->n_outputs && st == PC_OK; o++) {
            pc_value *bo = bn->outputs[o];
            if (!bo) continue;
            if ((st = pc_value_set_type(n->outputs[o], &bo->type, err)) != PC_OK) break;
            map[bo->id] = n->outputs[o];
            for (uint32_t j = 0; j < body->n_outputs; j++)
                if (body->outputs[j] == bo && node->outputs[j] && node->outputs[j]->producer == node) {
                    if (pc_graph_move_output(node, j, n, o) != PC_OK)
                        st = pc_error_set(err, PC_ERR_INTERNAL, "node '%s': moving output %u", node->name, j);
                    map[bo->id] = n->outputs[o];
                    break;
                }
        }
    }
    /* a body output that is a body input or initializer: an Identity writes it */
    for (uint32_t j = 0; j < body->n_outputs && st == PC_OK; j++) {
        if (!node->outputs[j] || node->outputs[j]->producer != node) continue;
        pc_value *src = mapped(map, body->outputs[j]);
        pc_node *id = src ? pc_graph_add_node(graph, "Identity", "", 1, &src, 1, NULL, err) : NULL;
        if (!id)
            st = src ? err->status
                     : pc_error_set(err, PC_ERR_INTERNAL, "node '%s': body output %u has no source",
                                    node->name, j);
        else if (pc_graph_move_output(node, j, id, 0) != PC_OK)
            st = pc_error_set(err, PC_ERR_INTERNAL, "node '%s': moving output %u", node->name, j);
        else
            pc_node_copy_ep(id, node);
    }
    pc_mem_free(mem, map);
    if (st == PC_OK) st = pc_graph_remove_node(graph, node, err);
    if (st == PC_OK) st = pc_graph_sort(graph, err);
    return st;
}
