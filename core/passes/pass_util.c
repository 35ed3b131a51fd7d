/* Helpers every pass shares (declared in pass.h). They encode the propagation rules once: new nodes take the
 * annotation and EP of their source, graph output names survive removals, shared constants are never edited.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ir/ir_internal.h"
#include "core/passes/pass.h"

static bool str_eq_or_null(const char *a, const char *b);

bool pc_pass_can_modify(const pc_pass_options *opts, const pc_node *node)
{
    if (!opts) return true;
    /* planted bug (--inject fusion-merges-annotations): the annotation scope is ignored too */
    if (opts->scoped && !str_eq_or_null(pc_node_annotation(node), opts->annotation) &&
        !pc_fault_active(PC_FAULT_FUSION_MERGES_ANNOTATIONS))
        return false;
    if (!opts->provider) return true;
    return node->ep == NULL || pc_name_eq(node->ep, opts->provider);
}

/* Every op a pass may create, sorted by (domain, op) (as ORT's
 * layout_transformation_potentially_added_ops.h). pc_pass_add_node refuses anything else, and
 * test_passes_pipeline checks every entry runs on the reference executor, so "every op a pass emits is
 * executable there" holds by construction. The layout transformer moves nodes into the internal NHWC domain
 * without creating them; those ops are checked separately (pc_op_is_layout_sensitive). */
static const struct emittable {
    const char *domain, *op_type;
} emittable[] = {
    {"", "Clip"},
    {"", "Conv"},
    {"", "Gather"},
    {"", "Gelu"},
    {"", "Identity"},
    {"", "QLinearConv"},
    {"", "QLinearMatMul"},
    {"", "Reshape"},
    {"", "Transpose"},
    {"", "Unsqueeze"},
    {"com.microsoft", "FusedConv"},
    {"com.microsoft", "Gelu"},
    {"com.microsoft", "QLinearAdd"},
    {"com.microsoft", "QLinearConvRelu"},
    {"com.ms.internal.nhwc", "FusedConv"},
    {"com.ms.internal.nhwc", "QLinearConv"},
    {"com.passcheck.systolic", "QLinearAdd"},
    {"com.passcheck.systolic", "QLinearConv_nhwc"},
    {"com.passcheck.systolic", "QLinearRelu"},
};

static int emittable_cmp(const char *domain, const char *op_type, const struct emittable *e)
{
    int c = strcmp(domain, e->domain);
    return c ? c : strcmp(op_type, e->op_type);
}

size_t pc_pass_emittable_count(void)
{
    return sizeof emittable / sizeof emittable[0];
}

void pc_pass_emittable_at(size_t index, const char **domain, const char **op_type)
{
    *domain = emittable[index].domain;
    *op_type = emittable[index].op_type;
}

bool pc_pass_may_emit(const char *domain, const char *op_type)
{
    size_t lo = 0, hi = pc_pass_emittable_count();
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = emittable_cmp(domain ? domain : "", op_type, &emittable[mid]);
        if (c == 0) return true;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return false;
}

pc_node *pc_pass_add_node(pc_graph *graph, const pc_pass_options *opts, const char *op_type,
                          const char *domain, uint32_t n_inputs, pc_value *const *inputs, uint32_t n_outputs,
                          const pc_node *source, pc_error *err)
{
    if (!pc_pass_may_emit(domain, op_type)) {
        pc_error_set(err, PC_ERR_INTERNAL,
                     "pass '%s' creates %s%s%s, which is not in the list of ops passes may emit",
                     opts && opts->pass_name ? opts->pass_name : "?", domain && *domain ? domain : "",
                     domain && *domain ? "." : "", op_type);
        return NULL;
    }
    pc_node *n = pc_graph_add_node(graph, op_type, domain, n_inputs, inputs, n_outputs, source, err);
    if (!n) return NULL;
    if (source && source->name && *source->name) {
        /* "<source>/<op>" makes --explain output and repro graphs readable; uniqueness is still guaranteed */
        char *hint = pc_arena_printf(&graph->model->arena, "%s/%s", source->name, op_type);
        const char *name = hint ? pc_graph_unique_name(graph, hint) : NULL;
        if (!name) {
            pc_model_alloc_error(graph->model, err, "a node name");
            return NULL;
        }
        n->name = name;
    }
    if (source && !(opts && opts->new_nodes_unassigned)) pc_node_copy_ep(n, source);
    return n;
}

void pc_pass_explain(const pc_pass_options *opts, const char *fmt, ...)
{
    if (!opts || !opts->trace || !opts->trace->emit) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    opts->trace->emit(opts->trace->ctx, opts->pass_name ? opts->pass_name : "?", buf);
}

static bool str_eq_or_null(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

bool pc_nodes_fusable(const pc_node *a, const pc_node *b)
{
    /* planted bug (passcheck suite --inject fusion-merges-annotations): the fusion-sources property catches
     * it */
    if (pc_fault_active(PC_FAULT_FUSION_MERGES_ANNOTATIONS)) return str_eq_or_null(a->ep, b->ep);
    return str_eq_or_null(pc_node_annotation(a), pc_node_annotation(b)) && str_eq_or_null(a->ep, b->ep);
}

const pc_tensor *pc_value_const(const pc_value *v)
{
    /* an initializer that is also a graph input can be overridden by the caller: not a constant */
    if (!v || !v->initializer || v->is_graph_input || v->outer) return NULL;
    return v->initializer;
}

bool pc_value_is_used(const pc_value *v)
{
    return v && (v->n_consumers || v->is_graph_output || v->n_subgraph_refs);
}

pc_node *pc_value_single_consumer(const pc_value *v)
{
    if (!v || v->n_consumers != 1 || v->is_graph_output || v->n_subgraph_refs) return NULL;
    return v->consumers[0].node;
}

pc_value *pc_pass_add_initializer(pc_graph *graph, const char *hint, pc_tensor *t, pc_error *err)
{
    pc_value *v = pc_graph_add_value(graph, NULL, hint ? hint : "const", err);
    if (!v) return NULL;
    if (pc_graph_set_initializer(graph, v, t, err) != PC_OK) return NULL;
    return v;
}

pc_value *pc_pass_add_ints(pc_graph *graph, const char *hint, size_t n, const int64_t *values, pc_error *err)
{
    int64_t dim = (int64_t)n;
    pc_tensor *t = pc_tensor_create(graph->model, NULL, PC_DTYPE_INT64, 1, &dim, err);
    if (!t) return NULL;
    for (size_t i = 0; i < n; i++)
        memcpy((uint8_t *)t->data + i * 8, &values[i], 8); /* raw form is little-endian */
    return pc_pass_add_initializer(graph, hint, t, err);
}

/* A graph output value can only be re-homed onto the producer of `in` when that producer is a node of this
 * graph and `in` has no role of its own that the move would disturb. */
static bool can_take_over_output(const pc_value *in, const pc_node *node)
{
    if (!in->producer || in->producer->graph != node->graph) return false;
    if (in->is_graph_output || in->is_graph_input || in->initializer || in->n_subgraph_refs) return false;
    return in->n_consumers == 1 && in->consumers[0].node == node;
}

pc_status pc_pass_bypass_node(pc_graph *graph, pc_node *node, uint32_t in_index, uint32_t out_index,
                              bool *done, pc_error *err)
{
    *done = false;
    if (in_index >= node->n_inputs || out_index >= node->n_outputs || !node->inputs[in_index] ||
        !node->outputs[out_index])
        return PC_OK;
    for (uint32_t i = 0; i < node->n_outputs; i++)
        if (i != out_index && pc_value_is_used(node->outputs[i])) return PC_OK;
    pc_value *in = node->inputs[in_index], *out = node->outputs[out_index];
    if (out->n_subgraph_refs) return PC_OK; /* subgraphs refer to it by name */
    if (out->is_graph_output) {
        /* keep the output's name: its producer becomes the input's producer */
        if (!can_take_over_output(in, node)) return PC_OK;
        pc_node *p = in->producer;
        uint32_t pi = in->producer_output;
        if (pc_graph_move_output(node, out_index, p, pi) != PC_OK)
            return pc_error_set(err, PC_ERR_INTERNAL, "moving output '%s'", out->name);
        /* node now produces `in` and reads it: detach that input (its other inputs are released by the
         * dead-node removal below, which also drops initializers only this node read) */
        for (uint32_t i = 0; i < node->n_inputs; i++)
            if (node->inputs[i] == in && pc_node_set_input(node, i, NULL, err) != PC_OK) return err->status;
        if (out->type.kind == PC_TYPE_NONE && in->type.kind != PC_TYPE_NONE &&
            pc_value_set_type(out, &in->type, err) != PC_OK)
            return err->status;
    } else {
        pc_status st = pc_value_replace_uses(out, in);
        if (st != PC_OK) return pc_error_set(err, st, "rewiring uses of '%s'", out->name);
    }
    *done = true;
    return pc_pass_remove_dead(graph, node, err);
}

static bool node_is_dead(const pc_node *n)
{
    if (n->removed) return false;
    for (uint32_t i = 0; i < n->n_outputs; i++)
        if (pc_value_is_used(n->outputs[i])) return false;
    return true;
}

/* A node worklist: NODE_LIST_INLINE entries in place (the common case allocates nothing), then the model's
 * heap, so that a growth is an OOM-injection point like every other pass allocation (pc_mem). */
enum { NODE_LIST_INLINE = 16 };
typedef struct node_list {
    pc_node **v;
    size_t n, cap;
    pc_node *inline_v[NODE_LIST_INLINE];
} node_list;

static void node_list_init(node_list *l)
{
    l->v = l->inline_v;
    l->n = 0;
    l->cap = NODE_LIST_INLINE;
}

static bool node_list_push(pc_mem *mem, node_list *l, pc_node *x)
{
    if (l->n == l->cap) {
        size_t bytes;
        if (!pc_size_mul(2 * l->cap, sizeof *l->v, &bytes)) return false;
        bool in_place = l->v == l->inline_v;
        pc_node **bigger = in_place ? pc_mem_alloc(mem, bytes) : pc_mem_realloc(mem, l->v, bytes);
        if (!bigger) return false;
        if (in_place) memcpy(bigger, l->inline_v, sizeof l->inline_v);
        l->v = bigger;
        l->cap *= 2;
    }
    l->v[l->n++] = x;
    return true;
}

static void node_list_free(pc_mem *mem, node_list *l)
{
    if (l->v != l->inline_v) pc_mem_free(mem, l->v);
}

pc_status pc_pass_remove_dead(pc_graph *graph, pc_node *node, pc_error *err)
{
    if (!node_is_dead(node)) return PC_OK;
    /* Iterative worklist over producers (a long dead chain must not recurse deeply). A removed node keeps its
     * input array (only the values' use lists change), so its inputs are read after removal. */
    pc_mem *mem = &graph->model->mem;
    node_list stack;
    node_list_init(&stack);
    stack.v[stack.n++] = node;
    pc_status st = PC_OK;
    while (stack.n && st == PC_OK) {
        pc_node *cur = stack.v[--stack.n];
        if (!node_is_dead(cur)) continue;
        if ((st = pc_graph_remove_node(graph, cur, err)) != PC_OK) break;
        for (uint32_t i = 0; i < cur->n_inputs && st == PC_OK; i++) {
            pc_value *v = cur->inputs[i];
            if (!v || pc_value_is_used(v)) continue;
            if (v->producer && v->producer->graph == graph) {
                if (!node_list_push(mem, &stack, v->producer))
                    st = pc_error_set(err, PC_ERR_NOMEM, "out of memory removing dead nodes");
            } else if (v->initializer && v->graph == graph && !v->is_graph_input) {
                st = pc_graph_remove_initializer(graph, v, err);
            }
        }
    }
    node_list_free(mem, &stack);
    return st;
}

pc_status pc_graph_prune_initializers(pc_graph *graph, bool *changed, pc_error *err)
{
    (void)err;
    /* one compaction pass: removing one by one would be quadratic on large graphs */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < graph->n_initializers; i++) {
        pc_value *v = graph->initializers[i];
        if (pc_value_is_used(v) || v->is_graph_input) {
            graph->initializers[kept++] = v;
        } else {
            v->initializer = NULL;
            v->has_value_info = false;
            if (changed) *changed = true;
        }
    }
    graph->n_initializers = kept;
    return PC_OK;
}

int32_t pc_value_rank(const pc_value *v)
{
    if (!v) return -1;
    if (v->initializer) return v->initializer->rank;
    if (v->type.kind != PC_TYPE_TENSOR) return -1;
    return v->type.shape.rank;
}

bool pc_value_dims(const pc_value *v, int64_t *dims)
{
    if (!v) return false;
    if (v->initializer) {
        for (int32_t i = 0; i < v->initializer->rank; i++)
            dims[i] = v->initializer->dims[i];
        return true;
    }
    if (v->type.kind != PC_TYPE_TENSOR || v->type.shape.rank < 0) return false;
    for (int32_t i = 0; i < v->type.shape.rank; i++) {
        if (v->type.shape.dims[i].kind != PC_DIM_KNOWN) return false;
        dims[i] = v->type.shape.dims[i].size;
    }
    return true;
}

bool pc_tensor_read_ints(const pc_tensor *t, int64_t *out, size_t cap, size_t *n)
{
    if (!t || t->n_elements > cap) return false;
    if (t->dtype == PC_DTYPE_INT64) {
        for (uint64_t i = 0; i < t->n_elements; i++)
            memcpy(&out[i], (const uint8_t *)t->data + i * 8, 8);
    } else if (t->dtype == PC_DTYPE_INT32) {
        for (uint64_t i = 0; i < t->n_elements; i++) {
            int32_t x;
            memcpy(&x, (const uint8_t *)t->data + i * 4, 4);
            out[i] = x;
        }
    } else {
        return false;
    }
    *n = (size_t)t->n_elements;
    return true;
}

pc_status pc_pass_import_domain(pc_model *model, const char *domain, bool *added, pc_error *err)
{
    *added = false;
    if (!domain[0] || pc_model_opset(model, domain) >= 0) return PC_OK;
    pc_status st = pc_model_set_opset(model, domain, 1, err);
    *added = st == PC_OK;
    return st;
}

void pc_pass_unimport_domain(pc_model *model, const char *domain, bool added)
{
    if (!added) return;
    for (uint32_t i = 0; i < model->n_opsets; i++)
        if (strcmp(model->opsets[i].domain, domain) == 0) {
            memmove(&model->opsets[i], &model->opsets[i + 1],
                    (model->n_opsets - i - 1) * sizeof model->opsets[0]);
            model->n_opsets--;
            return;
        }
}

static bool set_has(pc_node *const *set, size_t n, const pc_node *x)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == x) return true;
    return false;
}

/* Whether producer p dies once every node of set is gone: each output unused outside the set. */
static bool dies_with(const pc_node *p, pc_node *const *set, size_t n, const pc_value *keep)
{
    for (uint32_t i = 0; i < p->n_outputs; i++) {
        const pc_value *o = p->outputs[i];
        if (!o) continue;
        if (o == keep || o->is_graph_output || o->n_subgraph_refs) return false;
        for (uint32_t k = 0; k < o->n_consumers; k++)
            if (!set_has(set, n, o->consumers[k].node)) return false;
    }
    return true;
}

/* The closure is almost always a node or two (the inputs a rewrite drops are constants or values read
 * elsewhere); past this many nodes the rewrite is refused rather than searched quadratically. */
enum { MAY_REMOVE_MAX_NODES = 1024 };

pc_status pc_pass_may_remove(const pc_pass_options *opts, const pc_node *root, const pc_value *keep, bool *ok,
                             pc_error *err)
{
    *ok = false;
    pc_mem *mem = &root->graph->model->mem;
    node_list set;
    node_list_init(&set);
    set.v[set.n++] = (pc_node *)root;
    bool refused = false;
    pc_status st = PC_OK;
    for (size_t s = 0; s < set.n && !refused && st == PC_OK; s++) {
        const pc_node *cur = set.v[s];
        for (uint32_t i = 0; i < cur->n_inputs && !refused; i++) {
            const pc_value *v = cur->inputs[i];
            pc_node *p = v && v != keep ? v->producer : NULL;
            if (!p || p->removed || p->graph != root->graph || set_has(set.v, set.n, p) ||
                !dies_with(p, set.v, set.n, keep))
                continue;
            if (!pc_pass_can_modify(opts, p) || !str_eq_or_null(p->ep, root->ep) ||
                set.n == MAY_REMOVE_MAX_NODES) {
                refused = true;
                break;
            }
            if (!node_list_push(mem, &set, p)) {
                st = pc_error_set(err, PC_ERR_NOMEM, "out of memory checking what removing node '%s' removes",
                                  root->name ? root->name : root->op_type);
                break;
            }
        }
    }
    node_list_free(mem, &set);
    *ok = st == PC_OK && !refused;
    return st;
}

pc_status pc_pass_bypass_node_for(pc_graph *graph, const pc_pass_options *opts, pc_node *node,
                                  uint32_t in_index, uint32_t out_index, bool *done, pc_error *err)
{
    *done = false;
    if (in_index >= node->n_inputs || out_index >= node->n_outputs || !node->inputs[in_index] ||
        !node->outputs[out_index])
        return PC_OK;
    const pc_value *in = node->inputs[in_index];
    const pc_node *p = in->producer;
    /* the takeover rewrites p's outputs: p must be ours to change and on node's EP */
    if (node->outputs[out_index]->is_graph_output && p &&
        (!pc_pass_can_modify(opts, p) || !str_eq_or_null(p->ep, node->ep)))
        return PC_OK;
    bool ok = false;
    pc_status st = pc_pass_may_remove(opts, node, in, &ok, err);
    if (st != PC_OK || !ok) return st;
    return pc_pass_bypass_node(graph, node, in_index, out_index, done, err);
}

bool pc_pass_ep_accepts(const pc_pass_options *opts, const pc_node *node)
{
    if (!opts || !opts->ep || !node->ep || strcmp(node->ep, opts->ep->name) != 0) return true;
    char why[256];
    return pc_ep_claims_node(opts->ep, node, why, sizeof why);
}
