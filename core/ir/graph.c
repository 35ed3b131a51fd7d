/* The graph IR: models, graphs, values, nodes and the mutation API passes use. Every edit keeps use lists
 * consistent (value->consumers mirrors node->inputs), which pc_graph_verify checks after every pass. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ir/ir_internal.h"
#include "core/base/strmap.h"

/* ---- model ------------------------------------------------------------------------------------------------
 */

pc_status pc_model_alloc_error(pc_model *model, pc_error *err, const char *what)
{
    if (model && model->mem.over_budget)
        return pc_error_set(err, PC_ERR_BUDGET, "memory budget of %zu bytes exceeded while allocating %s",
                            model->mem.budget, what);
    return pc_error_set(err, PC_ERR_NOMEM, "out of memory while allocating %s", what);
}

/* A graph's name index: open addressing over value ids, 8 bytes a slot (32 bits of the name's hash and id +
 * 1), a third of the cache footprint of key/value/hash slots; a 100k-node graph's index is 2 MiB. A tag match
 * is confirmed with strcmp against the value's own name, stored right behind the value. */
typedef struct value_slot {
    uint32_t tag;
    uint32_t id1; /* value id + 1; 0: empty */
} value_slot;

typedef struct value_index {
    value_slot *slots;
    size_t cap; /* 0 or a power of two; kept at most 3/4 full, so a probe always ends at an empty slot */
} value_index;

/* The value named `name` (hash h), or NULL with *free_slot (if non-NULL) set to where it would go. */
static pc_value *vindex_probe(const pc_graph *g, const char *name, uint64_t h, value_slot **free_slot)
{
    const value_index *ix = g->value_index;
    if (free_slot) *free_slot = NULL;
    if (!ix->cap) return NULL;
    uint32_t tag = (uint32_t)(h >> 32);
    for (size_t i = (size_t)h & (ix->cap - 1);; i = (i + 1) & (ix->cap - 1)) {
        value_slot *s = &ix->slots[i];
        if (!s->id1) {
            if (free_slot) *free_slot = s;
            return NULL;
        }
        if (s->tag == tag) {
            pc_value *v = g->values[s->id1 - 1];
            if (strcmp(v->name, name) == 0) return v;
        }
    }
}

/* Room for n values without regrowing (load factor <= 3/4), rehashing the values already there. */
static bool vindex_reserve(pc_graph *g, size_t n)
{
    value_index *ix = g->value_index;
    size_t cap = ix->cap ? ix->cap : 16;
    while (n > cap / 4 * 3) {
        if (cap > SIZE_MAX / 2 / sizeof(value_slot)) return false;
        cap *= 2;
    }
    if (cap == ix->cap) return true;
    value_slot *slots = pc_arena_array(&g->model->arena, cap, sizeof *slots);
    if (!slots) return false;
    ix->slots = slots;
    ix->cap = cap;
    for (uint32_t id = 0; id < g->n_values; id++) {
        uint64_t h = pc_str_hash(g->values[id]->name);
        size_t i = (size_t)h & (cap - 1);
        while (slots[i].id1)
            i = (i + 1) & (cap - 1);
        slots[i].tag = (uint32_t)(h >> 32);
        slots[i].id1 = id + 1;
    }
    return true;
}

pc_graph *pc_graph_create(pc_model *model, pc_graph *parent, pc_node *owner)
{
    pc_graph *g = pc_arena_alloc(&model->arena, sizeof *g);
    value_index *index = pc_arena_alloc(&model->arena, sizeof *index);
    if (!g || !index) return NULL;
    g->model = model;
    g->parent = parent;
    g->owner = owner;
    g->value_index = index;
    return g;
}

pc_status pc_model_create(pc_model **out, pc_error *err)
{
    *out = NULL;
    pc_model *m = calloc(1, sizeof *m);
    if (!m) return pc_error_set(err, PC_ERR_NOMEM, "out of memory allocating a model");
    pc_arena_init(&m->arena, &m->mem);
    m->ir_version = 10;
    m->graph = pc_graph_create(m, NULL, NULL);
    if (!m->graph || pc_model_set_opset(m, "", 17, err) != PC_OK) {
        pc_status st = pc_model_alloc_error(m, err, "a model");
        pc_model_free(m);
        return st;
    }
    *out = m;
    return PC_OK;
}

void pc_model_free(pc_model *model)
{
    if (!model) return;
    for (uint32_t i = 0; i < model->n_tensors; i++) {
        pc_tensor *t = model->tensors[i];
        if (t && t->data) pc_mem_free(&model->mem, t->data);
    }
    pc_mem_free(&model->mem, model->tensors);
    pc_arena_free(&model->arena);
    free(model);
}

pc_status pc_model_track_tensor(pc_model *model, pc_tensor *tensor, pc_error *err)
{
    if (model->n_tensors == model->cap_tensors) {
        uint32_t ncap = model->cap_tensors ? model->cap_tensors * 2 : 64;
        size_t bytes;
        if (ncap < model->cap_tensors || !pc_size_mul(ncap, sizeof(pc_tensor *), &bytes))
            return pc_error_set(err, PC_ERR_BUDGET, "too many tensors");
        pc_tensor **nt = pc_mem_realloc(&model->mem, model->tensors, bytes);
        if (!nt) return pc_model_alloc_error(model, err, "the tensor list");
        model->tensors = nt;
        model->cap_tensors = ncap;
    }
    model->tensors[model->n_tensors++] = tensor;
    return PC_OK;
}

long pc_model_function_index(const pc_model *model, const char *domain, const char *op_type)
{
    for (uint32_t i = 0; i < model->n_functions; i++)
        if (strcmp(model->functions[i].domain, domain) == 0 && strcmp(model->functions[i].name, op_type) == 0)
            return (long)i;
    return -1;
}

int64_t pc_model_opset(const pc_model *model, const char *domain)
{
    if (pc_name_eq(domain, "ai.onnx")) domain = "";
    for (uint32_t i = 0; i < model->n_opsets; i++)
        if (pc_name_eq(model->opsets[i].domain, domain)) return model->opsets[i].version;
    return -1;
}

pc_status pc_model_set_opset(pc_model *model, const char *domain, int64_t version, pc_error *err)
{
    for (uint32_t i = 0; i < model->n_opsets; i++) {
        if (strcmp(model->opsets[i].domain, domain) == 0) {
            model->opsets[i].version = version;
            return PC_OK;
        }
    }
    pc_opset *n = pc_arena_array(&model->arena, model->n_opsets + 1u, sizeof *n);
    const char *d = pc_arena_strdup(&model->arena, domain);
    if (!n || !d) return pc_model_alloc_error(model, err, "an opset import");
    if (model->n_opsets) memcpy(n, model->opsets, model->n_opsets * sizeof *n);
    n[model->n_opsets].domain = d;
    n[model->n_opsets].version = version;
    model->opsets = n;
    model->n_opsets++;
    return PC_OK;
}

/* ---- growable arena arrays
 * --------------------------------------------------------------------------------- */

/* Grows an arena array of `elem` bytes to hold at least `need` elements (old storage stays in the arena). */
static bool arena_grow(pc_arena *arena, void **array, uint32_t *cap, uint32_t count, uint32_t need,
                       size_t elem)
{
    if (need <= *cap) return true;
    uint32_t ncap = *cap ? *cap : 4;
    while (ncap < need) {
        if (ncap > UINT32_MAX / 2) return false;
        ncap *= 2;
    }
    void *n = pc_arena_array(arena, ncap, elem);
    if (!n) return false;
    if (count) memcpy(n, *array, (size_t)count * elem);
    *array = n;
    *cap = ncap;
    return true;
}

/* ---- values
 * ------------------------------------------------------------------------------------------------ */

/* v is listed among its producer's outputs and that producer is live in g: listed in node order */
static bool value_info_in_node_phase(const pc_graph *g, const pc_value *v)
{
    const pc_node *p = v->producer;
    if (!p || p->removed || p->graph != g) return false;
    for (uint32_t k = 0; k < p->n_outputs; k++)
        if (p->outputs[k] == v) return true;
    return false;
}

static int value_name_cmp(const void *pa, const void *pb)
{
    const pc_value *a = *(const pc_value *const *)pa, *b = *(const pc_value *const *)pb;
    return strcmp(a->name ? a->name : "", b->name ? b->name : "");
}

size_t pc_graph_value_info_list(const pc_graph *g, const pc_value **out)
{
    size_t n = 0;
    for (const pc_node *node = g->first; node; node = node->next)
        for (uint32_t k = 0; k < node->n_outputs; k++) {
            const pc_value *v = node->outputs[k];
            if (v && v->has_value_info && v->producer == node && n < g->n_values) out[n++] = v;
        }
    size_t rest = n;
    for (uint32_t i = 0; i < g->n_values && n < g->n_values; i++)
        if (g->values[i]->has_value_info && !value_info_in_node_phase(g, g->values[i]))
            out[n++] = g->values[i];
    if (n - rest > 1) qsort(out + rest, n - rest, sizeof *out, value_name_cmp);
    return n;
}

pc_value *pc_graph_find_value(const pc_graph *graph, const char *name)
{
    return vindex_probe(graph, name, pc_str_hash(name), NULL);
}

uint64_t pc_value_name_hash(const char *name)
{
    return pc_str_hash(name);
}

pc_value *pc_graph_find_value_hashed(const pc_graph *graph, const char *name, uint64_t hash)
{
    return vindex_probe(graph, name, hash, NULL);
}

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

void pc_graph_prefetch_slot(const pc_graph *graph, uint64_t hash)
{
    const value_index *ix = graph->value_index;
    if (ix->cap) PREFETCH(&ix->slots[(size_t)hash & (ix->cap - 1)]);
}

void pc_graph_prefetch_value(const pc_graph *graph, uint64_t hash)
{
    const value_index *ix = graph->value_index;
    if (!ix->cap) return;
    uint32_t tag = (uint32_t)(hash >> 32);
    for (size_t i = (size_t)hash & (ix->cap - 1);; i = (i + 1) & (ix->cap - 1)) {
        const value_slot *s = &ix->slots[i];
        if (!s->id1) return;
        if (s->tag == tag) {
            /* the value and the name behind it: the lines a lookup and its caller read */
            const char *v = (const char *)graph->values[s->id1 - 1];
            for (size_t off = 0; off < sizeof(pc_value) + 32; off += 64)
                PREFETCH(v + off);
            return;
        }
    }
}

bool pc_graph_reserve_values(pc_graph *graph, size_t n)
{
    if (n > UINT32_MAX) return false;
    return vindex_reserve(graph, n) &&
           arena_grow(&graph->model->arena, (void **)&graph->values, &graph->cap_values, graph->n_values,
                      (uint32_t)n, sizeof(pc_value *));
}

pc_value *pc_graph_lookup_value(const pc_graph *graph, const char *name)
{
    for (const pc_graph *g = graph; g; g = g->parent) {
        pc_value *v = pc_graph_find_value(g, name);
        if (v) return v;
    }
    return NULL;
}

/* The model-wide name set is built on the first request for a generated name (loading never needs it), then
 * kept current by pc_graph_add_value. */
static bool names_add_graph(pc_strmap *names, const pc_graph *g)
{
    if (!pc_strmap_reserve(names, names->count + g->n_values)) return false;
    for (uint32_t i = 0; i < g->n_values; i++)
        if (!pc_strmap_put(names, g->values[i]->name, g->values[i])) return false;
    for (const pc_node *n = g->first; n; n = n->next)
        for (uint32_t a = 0; a < n->n_attrs; a++) {
            const pc_attr *at = &n->attrs[a];
            if (at->type == PC_ATTR_GRAPH && at->g && !names_add_graph(names, at->g)) return false;
            for (size_t k = 0; at->type == PC_ATTR_GRAPHS && k < at->n; k++)
                if (!names_add_graph(names, at->graphs[k])) return false;
        }
    return true;
}

static pc_strmap *model_names(pc_model *m)
{
    if (m->names) return m->names;
    pc_strmap *names = pc_arena_alloc(&m->arena, sizeof *names);
    if (!names) return NULL;
    pc_strmap_init(names, &m->arena);
    if (m->graph && !names_add_graph(names, m->graph)) return NULL;
    m->names = names;
    return names;
}

const char *pc_graph_unique_name(pc_graph *graph, const char *hint)
{
    pc_model *m = graph->model;
    if (!model_names(m)) return NULL;
    if (!hint || !*hint) hint = "t";
    for (;;) {
        char *name = pc_arena_printf(&m->arena, "%s_pc%llu", hint, (unsigned long long)graph->name_counter++);
        if (!name) return NULL;
        if (!pc_strmap_get(m->names, name)) return name;
    }
}

/* hash: pc_value_name_hash(name) when the caller has it already, else NULL */
static pc_value *graph_add_value(pc_graph *graph, const char *name, const char *hint, const uint64_t *hash,
                                 pc_error *err)
{
    pc_model *m = graph->model;
    pc_value *v = NULL;
    const char *vname;
    if (name) {
        /* The name is stored right behind the value (one allocation): confirming a name-map hit then reads
         * the cache lines the caller is about to use anyway. */
        size_t len = strlen(name), bytes;
        if (pc_size_add(sizeof *v, len, &bytes) && pc_size_add(bytes, 1, &bytes))
            v = pc_arena_alloc(&m->arena, bytes);
        if (!v) {
            pc_model_alloc_error(m, err, "a value");
            return NULL;
        }
        char *copy = (char *)(v + 1);
        memcpy(copy, name, len + 1);
        vname = copy;
    } else {
        vname = pc_graph_unique_name(graph, hint);
        if (!vname) {
            pc_model_alloc_error(m, err, "a value name");
            return NULL;
        }
        v = pc_arena_alloc(&m->arena, sizeof *v);
    }
    if (!v ||
        !arena_grow(&m->arena, (void **)&graph->values, &graph->cap_values, graph->n_values,
                    graph->n_values + 1, sizeof(pc_value *)) ||
        !vindex_reserve(graph, (size_t)graph->n_values + 1)) {
        pc_model_alloc_error(m, err, "a value");
        return NULL;
    }
    uint64_t h = hash && name ? *hash : pc_str_hash(vname);
    value_slot *slot;
    if (vindex_probe(graph, vname, h, &slot)) {
        pc_error_set(err, PC_ERR_DUPLICATE_NAME, "value '%s' already exists in graph '%s'", vname,
                     graph->name ? graph->name : "");
        return NULL;
    }
    if (m->names && !pc_strmap_put(m->names, vname, v)) {
        pc_model_alloc_error(m, err, "a value");
        return NULL;
    }
    slot->tag = (uint32_t)(h >> 32);
    slot->id1 = graph->n_values + 1;
    v->id = graph->n_values;
    v->name = vname;
    v->graph = graph;
    v->type.shape.rank = -1;
    graph->values[graph->n_values++] = v;
    return v;
}

pc_value *pc_graph_add_value(pc_graph *graph, const char *name, const char *hint, pc_error *err)
{
    return graph_add_value(graph, name, hint, NULL, err);
}

pc_value *pc_graph_add_value_hashed(pc_graph *graph, const char *name, uint64_t hash, pc_error *err)
{
    return graph_add_value(graph, name, NULL, &hash, err);
}

static bool value_add_use(pc_value *v, pc_node *node, uint32_t index)
{
    pc_model *m = node->graph->model;
    /* most values have one or two uses: start with room for two (arena_grow would start at four) */
    if (!v->cap_consumers) {
        v->consumers = pc_arena_array(&m->arena, 2, sizeof(pc_use));
        if (!v->consumers) return false;
        v->cap_consumers = 2;
    }
    if (!arena_grow(&m->arena, (void **)&v->consumers, &v->cap_consumers, v->n_consumers, v->n_consumers + 1,
                    sizeof(pc_use)))
        return false;
    v->consumers[v->n_consumers].node = node;
    v->consumers[v->n_consumers].index = index;
    v->n_consumers++;
    return true;
}

static void value_remove_use(pc_value *v, const pc_node *node, uint32_t index)
{
    for (uint32_t i = 0; i < v->n_consumers; i++) {
        if (v->consumers[i].node == node && v->consumers[i].index == index) {
            memmove(&v->consumers[i], &v->consumers[i + 1], (v->n_consumers - i - 1) * sizeof(pc_use));
            v->n_consumers--;
            return;
        }
    }
}

pc_status pc_value_replace_uses_except(pc_value *from, pc_value *to, const pc_node *except)
{
    if (from == to) return PC_OK;
    /* Walk a snapshot-free way: uses move off `from` as we go, so restart from the front each time. */
    uint32_t i = 0;
    while (i < from->n_consumers) {
        pc_use u = from->consumers[i];
        if (u.node == except) {
            i++;
            continue;
        }
        pc_status st = pc_node_set_input(u.node, u.index, to, NULL);
        if (st != PC_OK) return st;
    }
    return PC_OK;
}

pc_status pc_value_replace_uses(pc_value *from, pc_value *to)
{
    return pc_value_replace_uses_except(from, to, NULL);
}

/* ---- types
 * ------------------------------------------------------------------------------------------------- */

/* *dst = a copy of s in the model's arena; false when s is not NULL and the copy failed (a NULL would read
 * as "no symbol", a different type). */
static bool type_strdup(pc_model *model, const char **dst, const char *s)
{
    *dst = pc_arena_strdup(&model->arena, s);
    return !s || *dst;
}

pc_status pc_type_copy(pc_model *model, pc_type *dst, const pc_type *src, pc_error *err)
{
    pc_type t = *src;
    if (src->shape.rank > 0) {
        t.shape.dims = pc_arena_array(&model->arena, (size_t)src->shape.rank, sizeof(pc_dim));
        if (!t.shape.dims) return pc_model_alloc_error(model, err, "a shape");
        for (int32_t i = 0; i < src->shape.rank; i++) {
            t.shape.dims[i] = src->shape.dims[i];
            if (!type_strdup(model, &t.shape.dims[i].symbol, src->shape.dims[i].symbol) ||
                !type_strdup(model, &t.shape.dims[i].denotation, src->shape.dims[i].denotation))
                return pc_model_alloc_error(model, err, "a dim's name");
        }
    }
    if (!type_strdup(model, &t.denotation, src->denotation) ||
        !type_strdup(model, &t.opaque_domain, src->opaque_domain) ||
        !type_strdup(model, &t.opaque_name, src->opaque_name))
        return pc_model_alloc_error(model, err, "a type's name");
    if (src->inner) {
        t.inner = pc_arena_alloc(&model->arena, sizeof(pc_type));
        if (!t.inner) return pc_model_alloc_error(model, err, "a type");
        pc_status st = pc_type_copy(model, t.inner, src->inner, err);
        if (st != PC_OK) return st;
    }
    *dst = t;
    return PC_OK;
}

static bool str_eq(const char *a, const char *b)
{
    if (!a || !b) return a == b || (!a && !*b) || (!b && !*a);
    return strcmp(a, b) == 0;
}

bool pc_type_equal(const pc_type *a, const pc_type *b)
{
    if (a->kind != b->kind || !str_eq(a->denotation, b->denotation)) return false;
    switch (a->kind) {
    case PC_TYPE_NONE:
        return true;
    case PC_TYPE_TENSOR:
    case PC_TYPE_SPARSE_TENSOR:
        if (a->elem != b->elem || a->shape.rank != b->shape.rank) return false;
        for (int32_t i = 0; i < a->shape.rank; i++) {
            const pc_dim *x = &a->shape.dims[i], *y = &b->shape.dims[i];
            if (x->kind != y->kind || !str_eq(x->denotation, y->denotation)) return false;
            if (x->kind == PC_DIM_KNOWN && x->size != y->size) return false;
            if (x->kind == PC_DIM_SYMBOLIC && !str_eq(x->symbol, y->symbol)) return false;
        }
        return true;
    case PC_TYPE_MAP:
        if (a->key != b->key) return false;
        /* fallthrough */
    case PC_TYPE_SEQUENCE:
    case PC_TYPE_OPTIONAL:
        if (!a->inner || !b->inner) return a->inner == b->inner;
        return pc_type_equal(a->inner, b->inner);
    case PC_TYPE_OPAQUE:
        return str_eq(a->opaque_domain, b->opaque_domain) && str_eq(a->opaque_name, b->opaque_name);
    case PC_TYPE_KIND_COUNT:
        break;
    }
    return false;
}

pc_status pc_value_set_type(pc_value *value, const pc_type *type, pc_error *err)
{
    return pc_type_copy(value->graph->model, &value->type, type, err);
}

/* ---- graph inputs, outputs, initializers
 * ------------------------------------------------------------------- */

/* Appends value to one of the graph's value lists (inputs or outputs). */
static pc_status graph_list_append(pc_graph *graph, pc_value ***list, uint32_t *n, uint32_t *cap,
                                   pc_value *value, const char *what, pc_error *err)
{
    if (value->graph != graph)
        return pc_error_set(err, PC_ERR_INTERNAL, "value '%s' is from another graph", value->name);
    if (!arena_grow(&graph->model->arena, (void **)list, cap, *n, *n + 1, sizeof(pc_value *)))
        return pc_model_alloc_error(graph->model, err, what);
    (*list)[(*n)++] = value;
    return PC_OK;
}

pc_status pc_graph_add_input(pc_graph *graph, pc_value *value, pc_error *err)
{
    pc_status st = graph_list_append(graph, &graph->inputs, &graph->n_inputs, &graph->cap_inputs, value,
                                     "a graph input", err);
    if (st == PC_OK) value->is_graph_input = true;
    return st;
}

pc_status pc_graph_add_output(pc_graph *graph, pc_value *value, pc_error *err)
{
    pc_status st = graph_list_append(graph, &graph->outputs, &graph->n_outputs, &graph->cap_outputs, value,
                                     "a graph output", err);
    if (st == PC_OK) value->is_graph_output = true;
    return st;
}

pc_status pc_graph_set_initializer(pc_graph *graph, pc_value *value, pc_tensor *tensor, pc_error *err)
{
    if (value->graph != graph)
        return pc_error_set(err, PC_ERR_INTERNAL, "value '%s' is from another graph", value->name);
    if (value->initializer)
        return pc_error_set(err, PC_ERR_DUPLICATE_INITIALIZER, "initializer '%s' is defined twice",
                            value->name);
    if (value->producer)
        return pc_error_set(err, PC_ERR_DUPLICATE_PRODUCER,
                            "value '%s' is both an initializer and the output of node '%s'", value->name,
                            value->producer->name ? value->producer->name : value->producer->op_type);
    if (!arena_grow(&graph->model->arena, (void **)&graph->initializers, &graph->cap_initializers,
                    graph->n_initializers, graph->n_initializers + 1, sizeof(pc_value *)))
        return pc_model_alloc_error(graph->model, err, "an initializer");
    graph->initializers[graph->n_initializers++] = value;
    value->initializer = tensor;
    tensor->name = value->name;
    if (value->type.kind == PC_TYPE_NONE) {
        /* an initializer's type is its tensor's: make it visible to passes without a value_info */
        pc_type t = {.kind = PC_TYPE_TENSOR, .elem = tensor->dtype, .shape.rank = tensor->rank};
        pc_dim *dims =
            tensor->rank ? pc_arena_array(&graph->model->arena, (size_t)tensor->rank, sizeof *dims) : NULL;
        if (tensor->rank && !dims) return pc_model_alloc_error(graph->model, err, "a shape");
        for (int32_t i = 0; i < tensor->rank; i++)
            dims[i] = (pc_dim){.kind = PC_DIM_KNOWN, .size = tensor->dims[i]};
        t.shape.dims = dims;
        value->type = t;
    }
    return PC_OK;
}

pc_status pc_graph_replace_initializer(pc_value *value, pc_tensor *tensor, pc_error *err)
{
    if (!value->initializer)
        return pc_error_set(err, PC_ERR_INTERNAL, "value '%s' is not an initializer", value->name);
    value->initializer = tensor;
    tensor->name = value->name;
    return PC_OK;
}

pc_status pc_graph_remove_initializer(pc_graph *graph, pc_value *value, pc_error *err)
{
    if (!value->initializer)
        return pc_error_set(err, PC_ERR_INTERNAL, "value '%s' is not an initializer", value->name);
    if (value->n_consumers || value->n_subgraph_refs || value->is_graph_output || value->is_graph_input)
        return pc_error_set(err, PC_ERR_INTERNAL, "initializer '%s' is still in use", value->name);
    for (uint32_t i = 0; i < graph->n_initializers; i++) {
        if (graph->initializers[i] == value) {
            memmove(&graph->initializers[i], &graph->initializers[i + 1],
                    (graph->n_initializers - i - 1) * sizeof(pc_value *));
            graph->n_initializers--;
            break;
        }
    }
    value->initializer = NULL;
    value->has_value_info = false;
    return PC_OK;
}

/* ---- nodes
 * ------------------------------------------------------------------------------------------------- */

static void graph_link_node(pc_graph *graph, pc_node *n)
{
    n->id = graph->next_node_id++;
    n->graph = graph;
    n->prev = graph->last;
    if (graph->last)
        graph->last->next = n;
    else
        graph->first = n;
    graph->last = n;
    graph->n_nodes++;
}

pc_node *pc_graph_new_node(pc_graph *graph, const char *op_type, const char *domain)
{
    pc_model *m = graph->model;
    pc_node *n = pc_arena_alloc(&m->arena, sizeof *n);
    if (!n) return NULL;
    n->op_type = pc_arena_strdup(&m->arena, op_type ? op_type : "");
    n->domain = pc_arena_strdup(&m->arena, domain ? domain : "");
    if (!n->op_type || !n->domain) return NULL;
    graph_link_node(graph, n);
    return n;
}

pc_node *pc_graph_new_node_slots(pc_graph *graph, const char *op_type, const char *domain, uint32_t n_inputs,
                                 uint32_t n_outputs)
{
    pc_model *m = graph->model;
    size_t n_slots = (size_t)n_inputs + n_outputs, bytes;
    if (!pc_size_mul(n_slots, sizeof(pc_value *), &bytes) || !pc_size_add(bytes, sizeof(pc_node), &bytes))
        return NULL;
    /* Slots right behind the node: one allocation, and walking the graph reads a node and its edges together.
     */
    _Static_assert(sizeof(pc_node) % sizeof(pc_value *) == 0, "slot alignment");
    pc_node *n = pc_arena_alloc(&m->arena, bytes);
    if (!n) return NULL;
    pc_value **slots = (pc_value **)(n + 1);
    n->op_type = op_type;
    n->domain = domain;
    n->inputs = n_inputs ? slots : NULL;
    n->n_inputs = n->cap_inputs = n_inputs;
    n->outputs = n_outputs ? slots + n_inputs : NULL;
    n->n_outputs = n_outputs;
    graph_link_node(graph, n);
    return n;
}

pc_status pc_node_set_output(pc_node *node, uint32_t index, pc_value *value, pc_error *err)
{
    if (index >= node->n_outputs || node->outputs[index])
        return pc_error_set(err, PC_ERR_INTERNAL, "node '%s': output slot %u is not free", node->op_type,
                            index);
    if (value->producer)
        return pc_error_set(err, PC_ERR_DUPLICATE_PRODUCER,
                            "value '%s' is produced by node '%s' and by node '%s'", value->name,
                            value->producer->name ? value->producer->name : value->producer->op_type,
                            node->name ? node->name : node->op_type);
    node->outputs[index] = value;
    value->producer = node;
    value->producer_output = index;
    return PC_OK;
}

pc_status pc_node_append_output(pc_node *node, pc_value *value, pc_error *err)
{
    pc_model *m = node->graph->model;
    if (value && value->producer)
        return pc_error_set(err, PC_ERR_DUPLICATE_PRODUCER,
                            "value '%s' is produced by node '%s' and by node '%s'", value->name,
                            value->producer->name ? value->producer->name : value->producer->op_type,
                            node->name ? node->name : node->op_type);
    pc_value **outs = pc_arena_array(&m->arena, node->n_outputs + 1u, sizeof *outs);
    if (!outs) return pc_model_alloc_error(m, err, "node outputs");
    if (node->n_outputs) memcpy(outs, node->outputs, node->n_outputs * sizeof *outs);
    outs[node->n_outputs] = value;
    if (value) {
        value->producer = node;
        value->producer_output = node->n_outputs;
    }
    node->outputs = outs;
    node->n_outputs++;
    return PC_OK;
}

pc_status pc_node_set_input(pc_node *node, uint32_t index, pc_value *value, pc_error *err)
{
    if (index >= node->n_inputs)
        return pc_error_set(err, PC_ERR_INTERNAL, "node '%s': input %u out of range", node->op_type, index);
    if (value && value->graph != node->graph)
        return pc_error_set(err, PC_ERR_INTERNAL, "node '%s': value '%s' belongs to another graph",
                            node->op_type, value->name);
    pc_value *old = node->inputs[index];
    if (old == value) return PC_OK;
    if (value && !value_add_use(value, node, index))
        return pc_model_alloc_error(node->graph->model, err, "a use");
    if (old) value_remove_use(old, node, index);
    node->inputs[index] = value;
    return PC_OK;
}

pc_status pc_node_add_input(pc_node *node, pc_value *value, pc_error *err)
{
    pc_model *m = node->graph->model;
    if (!arena_grow(&m->arena, (void **)&node->inputs, &node->cap_inputs, node->n_inputs, node->n_inputs + 1,
                    sizeof(pc_value *)))
        return pc_model_alloc_error(m, err, "node inputs");
    node->inputs[node->n_inputs++] = NULL;
    return pc_node_set_input(node, node->n_inputs - 1, value, err);
}

pc_node *pc_graph_add_node(pc_graph *graph, const char *op_type, const char *domain, uint32_t n_inputs,
                           pc_value *const *inputs, uint32_t n_outputs, const pc_node *annotation_source,
                           pc_error *err)
{
    pc_node *n = pc_graph_new_node(graph, op_type, domain);
    if (!n) {
        pc_model_alloc_error(graph->model, err, "a node");
        return NULL;
    }
    n->name = pc_graph_unique_name(graph, op_type);
    if (!n->name) goto nomem;
    for (uint32_t i = 0; i < n_inputs; i++)
        if (pc_node_add_input(n, inputs[i], err) != PC_OK) return NULL;
    for (uint32_t i = 0; i < n_outputs; i++) {
        pc_value *v = pc_graph_add_value(graph, NULL, n->name, err);
        if (!v || pc_node_append_output(n, v, err) != PC_OK) return NULL;
    }
    if (annotation_source && pc_node_copy_annotation(n, annotation_source, err) != PC_OK) return NULL;
    return n;
nomem:
    pc_model_alloc_error(graph->model, err, "a node");
    return NULL;
}

const char *pc_node_metadata(const pc_node *node, const char *key)
{
    for (uint32_t i = 0; i < node->n_metadata; i++)
        if (strcmp(node->metadata[i].key, key) == 0) return node->metadata[i].value;
    return NULL;
}

const char *pc_node_annotation(const pc_node *node)
{
    return pc_node_metadata(node, PC_LAYER_ANN_KEY);
}

pc_status pc_node_set_metadata(pc_node *node, const char *key, const char *value, pc_error *err)
{
    pc_model *m = node->graph->model;
    const char *v = pc_arena_strdup(&m->arena, value);
    if (!v) return pc_model_alloc_error(m, err, "node metadata");
    for (uint32_t i = 0; i < node->n_metadata; i++) {
        if (strcmp(node->metadata[i].key, key) == 0) {
            node->metadata[i].value = v;
            return PC_OK;
        }
    }
    const char *k = pc_arena_strdup(&m->arena, key);
    if (!k || !arena_grow(&m->arena, (void **)&node->metadata, &node->cap_metadata, node->n_metadata,
                          node->n_metadata + 1, sizeof(pc_kv)))
        return pc_model_alloc_error(m, err, "node metadata");
    node->metadata[node->n_metadata].key = k;
    node->metadata[node->n_metadata].value = v;
    node->n_metadata++;
    return PC_OK;
}

const char *pc_model_metadata(const pc_model *model, const char *key)
{
    for (uint32_t i = 0; i < model->n_metadata; i++)
        if (strcmp(model->metadata[i].key, key) == 0) return model->metadata[i].value;
    return NULL;
}

pc_status pc_model_set_metadata(pc_model *model, const char *key, const char *value, pc_error *err)
{
    const char *v = pc_arena_strdup(&model->arena, value);
    if (!v) return pc_model_alloc_error(model, err, "model metadata");
    for (uint32_t i = 0; i < model->n_metadata; i++) {
        if (strcmp(model->metadata[i].key, key) == 0) {
            model->metadata[i].value = v;
            return PC_OK;
        }
    }
    /* the loader sizes the array exactly (no capacity field): a new one per key, set rarely */
    const char *k = pc_arena_strdup(&model->arena, key);
    pc_kv *kv = k ? pc_arena_array(&model->arena, model->n_metadata + 1u, sizeof *kv) : NULL;
    if (!kv) return pc_model_alloc_error(model, err, "model metadata");
    if (model->n_metadata) memcpy(kv, model->metadata, model->n_metadata * sizeof *kv);
    kv[model->n_metadata] = (pc_kv){k, v};
    model->metadata = kv;
    model->n_metadata++;
    return PC_OK;
}

bool pc_model_remove_metadata(pc_model *model, const char *key)
{
    for (uint32_t i = 0; i < model->n_metadata; i++) {
        if (strcmp(model->metadata[i].key, key) == 0) {
            memmove(&model->metadata[i], &model->metadata[i + 1],
                    (model->n_metadata - i - 1) * sizeof(pc_kv));
            model->n_metadata--;
            return true;
        }
    }
    return false;
}

bool pc_node_remove_metadata(pc_node *node, const char *key)
{
    for (uint32_t i = 0; i < node->n_metadata; i++) {
        if (strcmp(node->metadata[i].key, key) == 0) {
            memmove(&node->metadata[i], &node->metadata[i + 1], (node->n_metadata - i - 1) * sizeof(pc_kv));
            node->n_metadata--;
            return true;
        }
    }
    return false;
}

pc_status pc_node_copy_annotation(pc_node *dst, const pc_node *src, pc_error *err)
{
    const char *ann = src ? pc_node_annotation(src) : NULL;
    if (!ann) return PC_OK;
    return pc_node_set_metadata(dst, PC_LAYER_ANN_KEY, ann, err);
}

void pc_node_copy_ep(pc_node *dst, const pc_node *src)
{
    /* EP names are interned by the partitioner or the loader; sharing the pointer is safe within a model. */
    dst->ep = src ? src->ep : NULL;
}

pc_status pc_graph_move_output(pc_node *src, uint32_t src_index, pc_node *dst, uint32_t dst_index)
{
    if (src->graph != dst->graph || src_index >= src->n_outputs || dst_index >= dst->n_outputs)
        return PC_ERR_INTERNAL;
    pc_value *v = src->outputs[src_index];
    pc_value *w = dst->outputs[dst_index];
    dst->outputs[dst_index] = v;
    src->outputs[src_index] = w;
    if (v) {
        v->producer = dst;
        v->producer_output = dst_index;
        /* the value keeps the type its old producer gave it, which the new one may not let inference find
         * again (a fused Reshape pair whose first half made a '-1' resolvable): the saved model declares it,
         * so optimizing the result again starts from the same types */
        if (!v->is_graph_output && v->type.kind == PC_TYPE_TENSOR && v->type.shape.rank >= 0)
            v->has_value_info = true;
    }
    if (w) {
        w->producer = src;
        w->producer_output = src_index;
    }
    return PC_OK;
}

static void graph_release_outer_refs(pc_graph *g)
{
    for (uint32_t i = 0; i < g->n_values; i++) {
        pc_value *v = g->values[i];
        if (v->outer && v->outer->n_subgraph_refs) v->outer->n_subgraph_refs--;
    }
    for (pc_node *n = g->first; n; n = n->next)
        for (uint32_t a = 0; a < n->n_attrs; a++) {
            pc_attr *at = &n->attrs[a];
            if (at->type == PC_ATTR_GRAPH && at->g) graph_release_outer_refs(at->g);
            if (at->type == PC_ATTR_GRAPHS)
                for (size_t k = 0; k < at->n; k++)
                    graph_release_outer_refs(at->graphs[k]);
        }
}

pc_status pc_graph_remove_node(pc_graph *graph, pc_node *node, pc_error *err)
{
    if (node->graph != graph || node->removed)
        return pc_error_set(err, PC_ERR_INTERNAL, "node '%s' is not in this graph",
                            node->name ? node->name : "");
    for (uint32_t i = 0; i < node->n_outputs; i++) {
        pc_value *v = node->outputs[i];
        if (v && (v->n_consumers || v->is_graph_output || v->n_subgraph_refs))
            return pc_error_set(err, PC_ERR_INTERNAL, "cannot remove node '%s': output '%s' is still used",
                                node->name ? node->name : node->op_type, v->name);
    }
    for (uint32_t i = 0; i < node->n_inputs; i++)
        if (node->inputs[i]) value_remove_use(node->inputs[i], node, i);
    /* the outputs now name nothing: the saver must not write value_info for them */
    for (uint32_t i = 0; i < node->n_outputs; i++)
        if (node->outputs[i]) {
            node->outputs[i]->producer = NULL;
            node->outputs[i]->has_value_info = false;
        }
    for (uint32_t a = 0; a < node->n_attrs; a++) {
        pc_attr *at = &node->attrs[a];
        if (at->type == PC_ATTR_GRAPH && at->g) graph_release_outer_refs(at->g);
        if (at->type == PC_ATTR_GRAPHS)
            for (size_t k = 0; k < at->n; k++)
                graph_release_outer_refs(at->graphs[k]);
    }
    if (node->prev)
        node->prev->next = node->next;
    else
        graph->first = node->next;
    if (node->next)
        node->next->prev = node->prev;
    else
        graph->last = node->prev;
    node->prev = node->next = NULL;
    node->removed = true;
    graph->n_nodes--;
    return PC_OK;
}

/* ---- implicit inputs (outer-scope values used inside subgraphs)
 * -------------------------------------------- */

static void graph_for_each_outer(const pc_graph *g, const pc_graph *target, pc_implicit_fn fn, void *ctx)
{
    for (uint32_t i = 0; i < g->n_values; i++) {
        pc_value *v = g->values[i];
        if (!v->outer) continue;
        /* follow the chain up to the value that lives in `target` (the node's own graph) */
        pc_value *o = v->outer;
        while (o && o->graph != target && o->outer)
            o = o->outer;
        if (o && o->graph == target) fn(o, ctx);
    }
    for (pc_node *n = g->first; n; n = n->next)
        for (uint32_t a = 0; a < n->n_attrs; a++) {
            const pc_attr *at = &n->attrs[a];
            if (at->type == PC_ATTR_GRAPH && at->g) graph_for_each_outer(at->g, target, fn, ctx);
            if (at->type == PC_ATTR_GRAPHS)
                for (size_t k = 0; k < at->n; k++)
                    graph_for_each_outer(at->graphs[k], target, fn, ctx);
        }
}

void pc_node_for_each_implicit_input(const pc_node *node, pc_implicit_fn fn, void *ctx)
{
    for (uint32_t a = 0; a < node->n_attrs; a++) {
        const pc_attr *at = &node->attrs[a];
        if (at->type == PC_ATTR_GRAPH && at->g) graph_for_each_outer(at->g, node->graph, fn, ctx);
        if (at->type == PC_ATTR_GRAPHS)
            for (size_t k = 0; k < at->n; k++)
                graph_for_each_outer(at->graphs[k], node->graph, fn, ctx);
    }
}

/* ---- topological sort
 * -------------------------------------------------------------------------------------- */

/* Edges from producers to the nodes whose subgraphs read their outputs (implicit inputs). */
typedef struct implicit_edges {
    pc_mem *mem;
    const uint32_t *pos_of;
    uint32_t consumer;
    uint32_t n, cap;
    uint32_t (*pairs)[2]; /* producer position, consumer position */
    bool failed;
} implicit_edges;

static void collect_implicit(pc_value *v, void *ctx)
{
    implicit_edges *e = ctx;
    if (!v->producer || e->failed) return;
    if (e->n == e->cap) {
        uint32_t ncap = e->cap ? e->cap * 2 : 16;
        void *np = pc_mem_realloc(e->mem, e->pairs, (size_t)ncap * sizeof e->pairs[0]);
        if (!np) {
            e->failed = true;
            return;
        }
        e->pairs = np;
        e->cap = ncap;
    }
    e->pairs[e->n][0] = e->pos_of[v->producer->id];
    e->pairs[e->n][1] = e->consumer;
    e->n++;
}

/* Min-heap of node positions: popping the earliest ready position keeps the current order where it is valid.
 */
static void heap_push(uint32_t *heap, uint32_t *n_heap, uint32_t p)
{
    uint32_t i = (*n_heap)++;
    heap[i] = p;
    while (i && heap[(i - 1) / 2] > heap[i]) {
        uint32_t t = heap[i];
        heap[i] = heap[(i - 1) / 2];
        heap[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static uint32_t heap_pop(uint32_t *heap, uint32_t *n_heap)
{
    uint32_t top = heap[0];
    heap[0] = heap[--*n_heap];
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < *n_heap && heap[l] < heap[m]) m = l;
        if (r < *n_heap && heap[r] < heap[m]) m = r;
        if (m == i) break;
        uint32_t t = heap[i];
        heap[i] = heap[m];
        heap[m] = t;
        i = m;
    }
    return top;
}

typedef struct sorted_check {
    const uint8_t *seen;
    bool ok;
} sorted_check;

static void check_implicit_seen(pc_value *v, void *ctx)
{
    sorted_check *sc = ctx;
    if (v->producer && !sc->seen[v->producer->id]) sc->ok = false;
}

/* True when every node comes after the producers of its inputs (explicit and implicit). Loaded files are
 * almost always in order already, so this linear check saves the heap-based sort. */
static bool graph_is_sorted(const pc_graph *graph, uint8_t *seen)
{
    sorted_check sc = {seen, true};
    for (const pc_node *node = graph->first; node && sc.ok; node = node->next) {
        for (uint32_t i = 0; i < node->n_inputs; i++) {
            const pc_value *v = node->inputs[i];
            if (v && v->producer && !seen[v->producer->id]) return false;
        }
        pc_node_for_each_implicit_input(node, check_implicit_seen, &sc);
        seen[node->id] = 1;
    }
    return sc.ok;
}

pc_status pc_graph_sort(pc_graph *graph, pc_error *err)
{
    uint32_t n = graph->n_nodes;
    if (n == 0) return PC_OK;
    pc_mem *mem = &graph->model->mem;
    uint8_t *seen = pc_mem_calloc(mem, graph->next_node_id, 1);
    if (!seen) return pc_model_alloc_error(graph->model, err, "topological sort state");
    bool sorted = graph_is_sorted(graph, seen);
    pc_mem_free(mem, seen);
    if (sorted) return PC_OK;
    pc_node **order = pc_mem_calloc(mem, n, sizeof *order);
    pc_node **placed = pc_mem_calloc(mem, n, sizeof *placed);
    uint32_t *pending = pc_mem_calloc(mem, n, sizeof *pending);
    uint32_t *pos_of = pc_mem_calloc(mem, graph->next_node_id, sizeof *pos_of);
    uint32_t *heap = pc_mem_calloc(mem, n, sizeof *heap);
    uint32_t *edge_start = pc_mem_calloc(mem, (size_t)n + 1, sizeof *edge_start);
    uint32_t *edge_to = NULL;
    implicit_edges e = {.mem = mem, .pos_of = pos_of};
    pc_status st = PC_OK;
    if (!order || !placed || !pending || !pos_of || !heap || !edge_start) goto nomem;

    uint32_t p = 0;
    for (pc_node *node = graph->first; node; node = node->next, p++) {
        order[p] = node;
        pos_of[node->id] = p;
    }
    for (p = 0; p < n; p++) {
        pc_node *node = order[p];
        for (uint32_t i = 0; i < node->n_inputs; i++)
            if (node->inputs[i] && node->inputs[i]->producer) pending[p]++;
        e.consumer = p;
        pc_node_for_each_implicit_input(node, collect_implicit, &e);
    }
    if (e.failed) goto nomem;
    /* CSR of implicit edges by producer */
    for (uint32_t k = 0; k < e.n; k++) {
        edge_start[e.pairs[k][0] + 1]++;
        pending[e.pairs[k][1]]++;
    }
    for (p = 0; p < n; p++)
        edge_start[p + 1] += edge_start[p];
    if (e.n) {
        edge_to = pc_mem_calloc(mem, e.n, sizeof *edge_to);
        uint32_t *fill = pc_mem_calloc(mem, n, sizeof *fill);
        if (!edge_to || !fill) {
            pc_mem_free(mem, fill);
            goto nomem;
        }
        for (uint32_t k = 0; k < e.n; k++) {
            uint32_t from = e.pairs[k][0];
            edge_to[edge_start[from] + fill[from]++] = e.pairs[k][1];
        }
        pc_mem_free(mem, fill);
    }

    uint32_t n_heap = 0, n_placed = 0;
    for (p = 0; p < n; p++)
        if (!pending[p]) heap_push(heap, &n_heap, p);
    while (n_heap) {
        uint32_t q = heap_pop(heap, &n_heap);
        pc_node *node = order[q];
        placed[n_placed++] = node;
        for (uint32_t o = 0; o < node->n_outputs; o++) {
            pc_value *v = node->outputs[o];
            if (!v) continue;
            for (uint32_t c = 0; c < v->n_consumers; c++) {
                uint32_t cp = pos_of[v->consumers[c].node->id];
                if (--pending[cp] == 0) heap_push(heap, &n_heap, cp);
            }
        }
        for (uint32_t k = edge_start[q]; k < edge_start[q + 1]; k++)
            if (--pending[edge_to[k]] == 0) heap_push(heap, &n_heap, edge_to[k]);
    }
    if (n_placed != n) {
        const pc_node *stuck = NULL;
        for (p = 0; p < n && !stuck; p++)
            if (pending[p]) stuck = order[p];
        st = pc_error_set(err, PC_ERR_CYCLE, "graph '%s' has a cycle through node '%s' (%s)",
                          graph->name ? graph->name : "", stuck && stuck->name ? stuck->name : "",
                          stuck ? stuck->op_type : "?");
        goto done;
    }
    graph->first = placed[0];
    graph->last = placed[n - 1];
    for (uint32_t i = 0; i < n; i++) {
        placed[i]->prev = i ? placed[i - 1] : NULL;
        placed[i]->next = i + 1 < n ? placed[i + 1] : NULL;
    }
    goto done;
nomem:
    st = pc_model_alloc_error(graph->model, err, "topological sort state");
done:
    pc_mem_free(mem, order);
    pc_mem_free(mem, placed);
    pc_mem_free(mem, pending);
    pc_mem_free(mem, pos_of);
    pc_mem_free(mem, heap);
    pc_mem_free(mem, edge_start);
    pc_mem_free(mem, edge_to);
    pc_mem_free(mem, e.pairs);
    return st;
}
