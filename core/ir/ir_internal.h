/* IR internals shared by core/ir and the loader. */
#ifndef PC_IR_INTERNAL_H
#define PC_IR_INTERNAL_H

#include "core/internal.h"

/* Name lookups in bulk (the loader): hash each name once, prefetch its index slot some names ahead, then
 * (once the slot is in cache) the value it names, then look it up or insert it, so cache misses overlap. */
uint64_t pc_value_name_hash(const char *name);
void pc_graph_prefetch_slot(const pc_graph *graph, uint64_t hash);
void pc_graph_prefetch_value(const pc_graph *graph, uint64_t hash);
pc_value *pc_graph_find_value_hashed(const pc_graph *graph, const char *name, uint64_t hash);
pc_value *pc_graph_add_value_hashed(pc_graph *graph, const char *name, uint64_t hash, pc_error *err);

/* Sizes the graph's value list and name index for n values in all without regrowing. false: out of memory. */
bool pc_graph_reserve_values(pc_graph *graph, size_t n);

/* Allocates a node with no inputs/outputs, appended to the graph order. */
pc_node *pc_graph_new_node(pc_graph *graph, const char *op_type, const char *domain);

/* Allocates a node with n_inputs input and n_outputs output slots (all NULL), appended to the graph order.
 * op_type and domain are stored as given: they must live as long as the model (its arena). For the loader. */
pc_node *pc_graph_new_node_slots(pc_graph *graph, const char *op_type, const char *domain, uint32_t n_inputs,
                                 uint32_t n_outputs);

/* Puts `value` (which must have no producer) into the empty output slot `index` of `node`. */
pc_status pc_node_set_output(pc_node *node, uint32_t index, pc_value *value, pc_error *err);

/* Registers a tensor whose data the model owns (freed with the model). */
pc_status pc_model_track_tensor(pc_model *model, pc_tensor *tensor, pc_error *err);

/* Allocation-failure status: PC_ERR_BUDGET when the model's budget was the cause, else PC_ERR_NOMEM. */
pc_status pc_model_alloc_error(pc_model *model, pc_error *err, const char *what);

/* Calls fn for every value of an enclosing graph that `node`'s subgraphs (recursively) reference. */
typedef void (*pc_implicit_fn)(pc_value *outer_value, void *ctx);
void pc_node_for_each_implicit_input(const pc_node *node, pc_implicit_fn fn, void *ctx);

/* Index of the model-local function that (domain, op_type) calls, or -1. */
long pc_model_function_index(const pc_model *model, const char *domain, const char *op_type);

/* The value an outer-scope reference finally resolves to (follows `outer` links). */
static inline pc_value *pc_value_resolve(pc_value *v)
{
    while (v && v->outer)
        v = v->outer;
    return v;
}

#endif
