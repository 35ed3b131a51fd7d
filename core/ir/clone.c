/* pc_model_clone: an exact in-memory replica of a model (core/passcheck.h). The check runner needs many
 * private copies of one graph — the working copy, one per fresh re-optimization, one per property that edits
 * what it judges — and saving and reloading for each was a fifth of a fuzz_pipeline execution.
 *
 * "Exact" is the contract: every value in the same slot with the same id (dead values too), every live node
 * with its id in the same order, use lists in the same order, every string, type, attribute, tensor and
 * subgraph copied, and the unique-name counters kept. Two clones of one model are then indistinguishable to
 * the passes, so optimizing them does the same allocations in the same order (alloc-failure counts on that)
 * and gives the same bytes; a clone of a model loaded from bytes is that load, again.
 * tests/unit/test_ir_clone.c checks it on generated models at every pass of their pipelines. */
#include <stdlib.h>
#include <string.h>

#include "core/ir/ir_internal.h"

enum { CLONE_MAX_DEPTH = 64 }; /* nested subgraphs; the loader's message nesting limit allows fewer */

typedef struct clone_scope {
    const pc_graph *src;
    pc_graph *dst;
    pc_node **nodes; /* by source node id: its copy */
} clone_scope;

typedef struct clone_ctx {
    pc_model *dst;
    pc_error *err;
    clone_scope scope[CLONE_MAX_DEPTH];
    uint32_t depth;
} clone_ctx;

static pc_status clone_nomem(clone_ctx *c, const char *what)
{
    return pc_model_alloc_error(c->dst, c->err, what);
}

/* NULL stays NULL. */
static bool clone_str(clone_ctx *c, const char **dst, const char *s)
{
    *dst = s ? pc_arena_strdup(&c->dst->arena, s) : NULL;
    return !s || *dst;
}

static bool clone_bytes(clone_ctx *c, pc_bytes *dst, const pc_bytes *src)
{
    dst->len = src->len;
    dst->data = NULL;
    if (!src->data) return true;
    size_t total;
    if (!pc_size_add(src->len, 1, &total)) return false;
    dst->data = pc_arena_alloc(&c->dst->arena, total); /* NUL-terminated, as the loader leaves them */
    if (!dst->data) return false;
    if (src->len) memcpy(dst->data, src->data, src->len);
    return true;
}

/* A zeroed arena array of cap elements (NULL when cap is 0), the first n copied from src. */
static void *clone_array_cap(clone_ctx *c, const void *src, size_t n, size_t cap, size_t elem)
{
    if (!cap) return NULL;
    void *d = pc_arena_array(&c->dst->arena, cap, elem);
    if (d && src && n) memcpy(d, src, n * elem);
    return d;
}

static void *clone_array(clone_ctx *c, const void *src, size_t n, size_t elem)
{
    return clone_array_cap(c, src, n, n, elem);
}

static bool clone_kvs(clone_ctx *c, uint32_t n, const pc_kv *src, pc_kv **dst)
{
    *dst = NULL;
    if (!n) return true;
    pc_kv *kv = clone_array(c, NULL, n, sizeof *kv);
    if (!kv) return false;
    for (uint32_t i = 0; i < n; i++)
        if (!clone_str(c, &kv[i].key, src[i].key) || !clone_str(c, &kv[i].value, src[i].value)) return false;
    *dst = kv;
    return true;
}

static bool clone_opaque(clone_ctx *c, uint32_t n, const pc_opaque_field *src, pc_opaque_field **dst)
{
    *dst = NULL;
    if (!n) return true;
    pc_opaque_field *o = clone_array(c, NULL, n, sizeof *o);
    if (!o) return false;
    for (uint32_t i = 0; i < n; i++) {
        o[i].field_number = src[i].field_number;
        if (!clone_bytes(c, &o[i].bytes, &src[i].bytes)) return false;
    }
    *dst = o;
    return true;
}

static pc_status clone_tensor(clone_ctx *c, const pc_tensor *src, pc_tensor **out)
{
    *out = NULL;
    if (!src) return PC_OK;
    pc_model *m = c->dst;
    pc_tensor *t = pc_arena_alloc(&m->arena, sizeof *t);
    if (!t) return clone_nomem(c, "a tensor");
    *t = *src;
    t->dims = clone_array(c, src->dims, src->rank > 0 ? (size_t)src->rank : 0, sizeof *t->dims);
    if (src->rank > 0 && !t->dims) return clone_nomem(c, "tensor dims");
    if (!clone_str(c, &t->name, src->name) || !clone_str(c, &t->doc_string, src->doc_string) ||
        !clone_kvs(c, src->n_metadata, src->metadata, &t->metadata))
        return clone_nomem(c, "a tensor's names");
    t->data = NULL;
    if (src->data) {
        t->data = pc_mem_alloc(&m->mem, src->n_bytes ? src->n_bytes : 1);
        if (!t->data) return clone_nomem(c, "tensor data");
        if (src->n_bytes) memcpy(t->data, src->data, src->n_bytes);
        pc_status st = pc_model_track_tensor(m, t, c->err);
        if (st != PC_OK) {
            pc_mem_free(&m->mem, t->data);
            t->data = NULL;
            return st;
        }
        if (src->dtype == PC_DTYPE_STRING) {
            pc_bytes *s = t->data;
            const pc_bytes *from = src->data;
            for (uint64_t i = 0; i < src->n_elements; i++)
                if (!clone_bytes(c, &s[i], &from[i])) return clone_nomem(c, "string data");
        }
    }
    *out = t;
    return PC_OK;
}

static pc_status clone_type(clone_ctx *c, pc_type *dst, const pc_type *src)
{
    return pc_type_copy(c->dst, dst, src, c->err);
}

/* The copy of a value of the graph being cloned or of an enclosing one. */
static pc_value *clone_map_value(clone_ctx *c, const pc_value *v)
{
    if (!v) return NULL;
    for (uint32_t d = c->depth; d-- > 0;)
        if (c->scope[d].src == v->graph)
            return v->id < c->scope[d].dst->n_values ? c->scope[d].dst->values[v->id] : NULL;
    return NULL;
}

static pc_status clone_graph(clone_ctx *c, const pc_graph *src, pc_graph *dst);

static pc_status clone_subgraph(clone_ctx *c, const pc_graph *src, pc_node *owner, pc_graph **out)
{
    *out = pc_graph_create(c->dst, owner->graph, owner);
    if (!*out) return clone_nomem(c, "a subgraph");
    return clone_graph(c, src, *out);
}

static pc_status clone_attr(clone_ctx *c, pc_node *owner, pc_attr *a, const pc_attr *src)
{
    *a = *src;
    if (!clone_str(c, &a->name, src->name) || !clone_str(c, &a->doc_string, src->doc_string) ||
        !clone_str(c, &a->ref_attr_name, src->ref_attr_name) || !clone_bytes(c, &a->s, &src->s))
        return clone_nomem(c, "an attribute");
    a->t = NULL;
    a->g = NULL;
    a->tp = NULL;
    a->floats = NULL;
    a->ints = NULL;
    a->strings = NULL;
    a->tensors = NULL;
    a->graphs = NULL;
    a->tps = NULL;
    pc_status st = clone_tensor(c, src->t, &a->t);
    if (st != PC_OK) return st;
    if (src->g && (st = clone_subgraph(c, src->g, owner, &a->g)) != PC_OK) return st;
    if (src->tp) {
        if (!(a->tp = pc_arena_alloc(&c->dst->arena, sizeof *a->tp))) return clone_nomem(c, "a type");
        if ((st = clone_type(c, a->tp, src->tp)) != PC_OK) return st;
    }
    /* the list the type names; a loaded attribute allocates one element even for an empty list */
    size_t n = src->n, cap = n ? n : 1;
    if (src->floats && !(a->floats = clone_array_cap(c, src->floats, n, cap, sizeof *a->floats)))
        return clone_nomem(c, "an attribute");
    if (src->ints && !(a->ints = clone_array_cap(c, src->ints, n, cap, sizeof *a->ints)))
        return clone_nomem(c, "an attribute");
    if (src->strings) {
        if (!(a->strings = clone_array(c, NULL, cap, sizeof *a->strings)))
            return clone_nomem(c, "an attribute");
        for (size_t i = 0; i < n; i++)
            if (!clone_bytes(c, &a->strings[i], &src->strings[i])) return clone_nomem(c, "an attribute");
    }
    if (src->tensors) {
        if (!(a->tensors = clone_array(c, NULL, cap, sizeof *a->tensors)))
            return clone_nomem(c, "an attribute");
        for (size_t i = 0; i < n; i++)
            if ((st = clone_tensor(c, src->tensors[i], &a->tensors[i])) != PC_OK) return st;
    }
    if (src->graphs) {
        if (!(a->graphs = clone_array(c, NULL, cap, sizeof *a->graphs)))
            return clone_nomem(c, "an attribute");
        for (size_t i = 0; i < n; i++)
            if (src->graphs[i] && (st = clone_subgraph(c, src->graphs[i], owner, &a->graphs[i])) != PC_OK)
                return st;
    }
    if (src->tps) {
        if (!(a->tps = clone_array(c, NULL, cap, sizeof *a->tps))) return clone_nomem(c, "an attribute");
        for (size_t i = 0; i < n; i++) {
            if (!src->tps[i]) continue;
            if (!(a->tps[i] = pc_arena_alloc(&c->dst->arena, sizeof(pc_type))))
                return clone_nomem(c, "a type");
            if ((st = clone_type(c, a->tps[i], src->tps[i])) != PC_OK) return st;
        }
    }
    return PC_OK;
}

/* A graph list (inputs, outputs, initializers): the copies of the same values. */
static pc_status clone_list(clone_ctx *c, pc_value *const *src, uint32_t n, pc_value ***dst, uint32_t *cap)
{
    *dst = clone_array(c, NULL, n, sizeof **dst);
    *cap = n;
    if (n && !*dst) return clone_nomem(c, "a graph list");
    for (uint32_t i = 0; i < n; i++)
        if (!((*dst)[i] = clone_map_value(c, src[i])))
            return pc_error_set(c->err, PC_ERR_INTERNAL, "clone: graph list entry %u names no value", i);
    return PC_OK;
}

static pc_status clone_node(clone_ctx *c, const pc_node *n, pc_graph *dst, pc_node **out)
{
    const char *op_type, *domain;
    if (!clone_str(c, &op_type, n->op_type ? n->op_type : "") ||
        !clone_str(c, &domain, n->domain ? n->domain : ""))
        return clone_nomem(c, "a node");
    pc_node *m = pc_graph_new_node_slots(dst, op_type, domain, n->n_inputs, n->n_outputs);
    if (!m) return clone_nomem(c, "a node");
    *out = m;
    m->id = n->id;
    if (!clone_str(c, &m->name, n->name) || !clone_str(c, &m->overload, n->overload) ||
        !clone_str(c, &m->doc_string, n->doc_string) || !clone_str(c, &m->ep, n->ep) ||
        !clone_kvs(c, n->n_metadata, n->metadata, &m->metadata))
        return clone_nomem(c, "a node");
    m->n_metadata = m->cap_metadata = n->n_metadata;
    for (uint32_t k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] && !(m->inputs[k] = clone_map_value(c, n->inputs[k])))
            return pc_error_set(c->err, PC_ERR_INTERNAL, "clone: node '%s' input %u names no value",
                                n->name ? n->name : n->op_type, k);
    for (uint32_t o = 0; o < n->n_outputs; o++) {
        if (!n->outputs[o]) continue;
        pc_value *v = clone_map_value(c, n->outputs[o]);
        if (!v || v->graph != dst)
            return pc_error_set(c->err, PC_ERR_INTERNAL, "clone: node '%s' output %u is not of its graph",
                                n->name ? n->name : n->op_type, o);
        m->outputs[o] = v;
        v->producer = m;
    }
    if (n->n_attrs) {
        m->attrs = clone_array(c, NULL, n->n_attrs, sizeof *m->attrs);
        if (!m->attrs) return clone_nomem(c, "attributes");
        m->cap_attrs = n->n_attrs;
    }
    for (uint32_t a = 0; a < n->n_attrs; a++) {
        pc_status st = clone_attr(c, m, &m->attrs[a], &n->attrs[a]);
        if (st != PC_OK) return st;
        m->n_attrs++;
    }
    return PC_OK;
}

static pc_status clone_graph_in(clone_ctx *c, const pc_graph *src, pc_graph *dst, clone_scope *s)
{
    pc_status st;
    if (!clone_str(c, &dst->name, src->name) || !clone_str(c, &dst->doc_string, src->doc_string) ||
        !clone_kvs(c, src->n_metadata, src->metadata, &dst->metadata) ||
        !clone_opaque(c, src->n_opaque, src->opaque, &dst->opaque))
        return clone_nomem(c, "a graph");
    dst->n_metadata = src->n_metadata;
    dst->n_opaque = src->n_opaque;
    /* values first, all of them, so that their ids match and nodes (and subgraphs) can refer to any */
    if (!pc_graph_reserve_values(dst, src->n_values)) return clone_nomem(c, "the value list");
    for (uint32_t i = 0; i < src->n_values; i++) {
        const pc_value *v = src->values[i];
        pc_value *w = pc_graph_add_value(dst, v->name, NULL, c->err);
        if (!w) return c->err->status;
        if (w->id != v->id)
            return pc_error_set(c->err, PC_ERR_INTERNAL, "clone: value '%s' has id %u at slot %u", v->name,
                                v->id, i);
        if ((st = clone_type(c, &w->type, &v->type)) != PC_OK) return st;
        if (!clone_str(c, &w->doc_string, v->doc_string) ||
            !clone_kvs(c, v->n_metadata, v->metadata, &w->metadata))
            return clone_nomem(c, "a value");
        w->n_metadata = v->n_metadata;
        w->producer_output = v->producer_output;
        w->n_subgraph_refs = v->n_subgraph_refs;
        w->is_graph_input = v->is_graph_input;
        w->is_graph_output = v->is_graph_output;
        w->has_value_info = v->has_value_info;
        if (v->outer && !(w->outer = clone_map_value(c, v->outer)))
            return pc_error_set(c->err, PC_ERR_INTERNAL,
                                "clone: value '%s' refers to a value outside its enclosing graphs", v->name);
        if ((st = clone_tensor(c, v->initializer, &w->initializer)) != PC_OK) return st;
    }
    if ((st = clone_list(c, src->inputs, src->n_inputs, &dst->inputs, &dst->cap_inputs)) != PC_OK ||
        (st = clone_list(c, src->outputs, src->n_outputs, &dst->outputs, &dst->cap_outputs)) != PC_OK ||
        (st = clone_list(c, src->initializers, src->n_initializers, &dst->initializers,
                         &dst->cap_initializers)) != PC_OK)
        return st;
    dst->n_inputs = src->n_inputs;
    dst->n_outputs = src->n_outputs;
    dst->n_initializers = src->n_initializers;
    for (const pc_node *n = src->first; n; n = n->next) {
        if (n->id >= src->next_node_id || s->nodes[n->id])
            return pc_error_set(c->err, PC_ERR_INTERNAL, "clone: node id %u is out of range or repeated",
                                n->id);
        if ((st = clone_node(c, n, dst, &s->nodes[n->id])) != PC_OK) return st;
    }
    dst->next_node_id = src->next_node_id;
    dst->name_counter = src->name_counter;
    /* use lists as they are, in their order (a pass that walks them sees the same sequence) */
    for (uint32_t i = 0; i < src->n_values; i++) {
        const pc_value *v = src->values[i];
        pc_value *w = dst->values[i];
        if (!v->n_consumers) continue;
        w->consumers = clone_array(c, NULL, v->n_consumers, sizeof *w->consumers);
        if (!w->consumers) return clone_nomem(c, "a use list");
        for (uint32_t k = 0; k < v->n_consumers; k++) {
            const pc_node *u = v->consumers[k].node;
            pc_node *copy = u && u->graph == src && u->id < src->next_node_id ? s->nodes[u->id] : NULL;
            if (!copy)
                return pc_error_set(c->err, PC_ERR_INTERNAL, "clone: value '%s' has a use by no live node",
                                    v->name);
            w->consumers[k] = (pc_use){copy, v->consumers[k].index};
        }
        w->n_consumers = w->cap_consumers = v->n_consumers;
    }
    return PC_OK;
}

static pc_status clone_graph(clone_ctx *c, const pc_graph *src, pc_graph *dst)
{
    if (c->depth == CLONE_MAX_DEPTH)
        return pc_error_set(c->err, PC_ERR_NESTING, "clone: subgraphs nest deeper than %d levels",
                            CLONE_MAX_DEPTH);
    clone_scope *s = &c->scope[c->depth];
    s->src = src;
    s->dst = dst;
    s->nodes = pc_mem_calloc(&c->dst->mem, src->next_node_id ? src->next_node_id : 1, sizeof *s->nodes);
    if (!s->nodes) return clone_nomem(c, "the node map");
    c->depth++;
    pc_status st = clone_graph_in(c, src, dst, s);
    c->depth--;
    pc_mem_free(&c->dst->mem, s->nodes);
    s->nodes = NULL;
    return st;
}

pc_status pc_model_clone(const pc_model *src, pc_model **out, pc_error *err)
{
    *out = NULL;
    pc_model *m = calloc(1, sizeof *m);
    if (!m) return pc_error_set(err, PC_ERR_NOMEM, "out of memory allocating a model");
    pc_arena_init(&m->arena, &m->mem);
    m->mem.budget = src->mem.budget;
    clone_ctx c = {.dst = m, .err = err};
    pc_status st = PC_ERR_NOMEM;
    m->ir_version = src->ir_version;
    m->model_version = src->model_version;
    m->n_opsets = src->n_opsets;
    m->n_metadata = src->n_metadata;
    m->n_opaque = src->n_opaque;
    m->n_functions = src->n_functions;
    if (!clone_str(&c, &m->producer_name, src->producer_name) ||
        !clone_str(&c, &m->producer_version, src->producer_version) ||
        !clone_str(&c, &m->domain, src->domain) || !clone_str(&c, &m->doc_string, src->doc_string) ||
        !clone_str(&c, &m->path, src->path) || !clone_kvs(&c, src->n_metadata, src->metadata, &m->metadata) ||
        !clone_opaque(&c, src->n_opaque, src->opaque, &m->opaque))
        goto nomem;
    /* the loader allocates one opset slot even when the model imports none */
    m->opsets = clone_array(&c, NULL, src->n_opsets ? src->n_opsets : 1, sizeof *m->opsets);
    if (!m->opsets) goto nomem;
    for (uint32_t i = 0; i < src->n_opsets; i++) {
        m->opsets[i].version = src->opsets[i].version;
        if (!clone_str(&c, &m->opsets[i].domain, src->opsets[i].domain)) goto nomem;
    }
    if (src->n_functions) {
        m->functions = clone_array(&c, NULL, src->n_functions, sizeof *m->functions);
        if (!m->functions) goto nomem;
        for (uint32_t i = 0; i < src->n_functions; i++)
            if (!clone_str(&c, &m->functions[i].domain, src->functions[i].domain) ||
                !clone_str(&c, &m->functions[i].name, src->functions[i].name))
                goto nomem;
    }
    if (src->graph) {
        m->graph = pc_graph_create(m, NULL, NULL);
        if (!m->graph) goto nomem;
        if ((st = clone_graph(&c, src->graph, m->graph)) != PC_OK) goto fail;
    }
    *out = m;
    return PC_OK;
nomem:
    st = clone_nomem(&c, "a model");
fail:
    pc_model_free(m);
    return st;
}
