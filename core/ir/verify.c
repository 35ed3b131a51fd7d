/* pc_graph_verify: the structural invariants every pass must keep, checked between passes. Each failure names
 * the graph, node and value involved. */
#include <stdio.h>
#include <stdlib.h>
#include <assert.h>
#include <string.h>

#include "core/ir/ir_internal.h"
#include "core/schema/schema.h"

/* What check_schema resolved for one (domain, op_type): the schema in force, or NULL when no schema checks
 * apply. Only successful resolutions are cached (a failure ends verification). */
typedef struct op_cache_entry {
    const char *domain, *op_type;
    const pc_op_schema *schema;
} op_cache_entry;

enum { OP_CACHE_SIZE = 64 }; /* power of two; a model uses a few dozen distinct ops */

typedef struct verify_ctx {
    const pc_model *model;
    pc_error *err;
    uint8_t *seen; /* per node id of the graph being checked: already placed in order */
    op_cache_entry op_cache[OP_CACHE_SIZE]; /* opsets are model-wide, so entries hold for every graph */
} verify_ctx;

static const char *label(const pc_node *n)
{
    return n->name && *n->name ? n->name : n->op_type;
}

static const char *gname(const pc_graph *g)
{
    return g->name ? g->name : "";
}

static bool is_function_domain(const pc_model *m, const char *domain)
{
    for (uint32_t i = 0; i < m->n_functions; i++)
        if (strcmp(m->functions[i].domain, domain) == 0) return true;
    return false;
}

/* A value may be read if something defines it: producer, initializer, graph input or an enclosing graph. */
static bool value_defined(const pc_value *v)
{
    if (v->producer || v->initializer || v->is_graph_input) return true;
    if (v->outer) return value_defined(v->outer);
    return false;
}

/* Resolves the schema that applies to n (*out NULL: none, the node is accepted without schema checks), or
 * reports why its op cannot be used. */
static pc_status resolve_schema(verify_ctx *c, const pc_node *n, const pc_op_schema **out)
{
    const pc_model *m = c->model;
    const pc_graph *g = n->graph;
    *out = NULL;
    if (pc_model_function_index(m, n->domain, n->op_type) >= 0) return PC_OK;
    int64_t opset = pc_model_opset(m, n->domain);
    const char *dname = *n->domain ? n->domain : "ai.onnx";
    if (opset < 0)
        return pc_error_set(c->err, PC_ERR_UNKNOWN_DOMAIN,
                            "graph '%s': node '%s' (%s) uses domain '%s', which the model does not import",
                            gname(g), label(n), n->op_type, dname);
    const pc_domain_info *info = pc_schema_domain(n->domain);
    if (!info) {
        if (is_function_domain(m, n->domain))
            return pc_error_set(
                c->err, PC_ERR_UNKNOWN_OP,
                "graph '%s': node '%s' calls '%s' in domain '%s', which defines no such function", gname(g),
                label(n), n->op_type, dname);
        return pc_error_set(c->err, PC_ERR_UNKNOWN_DOMAIN,
                            "graph '%s': node '%s' (%s) uses unknown domain '%s'", gname(g), label(n),
                            n->op_type, dname);
    }
    /* Above the newest opset the table describes, an op may have changed or be new: no schema checks. */
    if (!info->has_schemas || opset > info->schema_max_opset) return PC_OK;
    const pc_op_schema *s = pc_schema_lookup(n->domain, n->op_type, opset);
    if (!s) {
        if (pc_schema_lookup_any(n->domain, n->op_type))
            return pc_error_set(c->err, PC_ERR_UNKNOWN_OP,
                                "graph '%s': node '%s': %s is not defined at %s opset %lld", gname(g),
                                label(n), n->op_type, dname, (long long)opset);
        return pc_error_set(c->err, PC_ERR_UNKNOWN_OP,
                            "graph '%s': node '%s': unknown operator %s in domain %s", gname(g), label(n),
                            n->op_type, dname);
    }
    *out = s;
    return PC_OK;
}

static size_t op_cache_slot(const char *domain, const char *op_type)
{
    uint32_t h = 2166136261u;
    for (const char *p = op_type; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    for (const char *p = domain; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return h & (OP_CACHE_SIZE - 1);
}

static unsigned kind_bit(pc_type_kind k)
{
    switch (k) {
    case PC_TYPE_TENSOR:
        return PC_KIND_TENSOR;
    case PC_TYPE_SPARSE_TENSOR:
        return PC_KIND_SPARSE_TENSOR;
    case PC_TYPE_SEQUENCE:
        return PC_KIND_SEQUENCE;
    case PC_TYPE_MAP:
        return PC_KIND_MAP;
    case PC_TYPE_OPTIONAL:
        return PC_KIND_OPTIONAL;
    default:
        return 0; /* no type given, or opaque: nothing to check */
    }
}

/* The formal parameter behind actual input (output) i: a variadic last one stands for the rest. */
static const pc_formal_schema *formal_at(const pc_op_schema *s, bool output, uint32_t i)
{
    uint16_t n = output ? s->n_formal_outputs : s->n_formal_inputs;
    const pc_formal_schema *f = s->formals + (output ? s->n_formal_inputs : 0);
    if (i < n) return &f[i];
    bool variadic = (output ? s->max_outputs : s->max_inputs) == PC_SCHEMA_VARIADIC;
    return variadic && n ? &f[n - 1] : NULL;
}

static void describe_allowed(const pc_formal_schema *f, char *buf, size_t size)
{
    static const char *const kinds[] = {"tensor", "sparse_tensor", "seq", "map", "optional"};
    size_t at = 0;
    buf[0] = 0;
    for (unsigned k = 0; k < 5; k++) {
        if (!(f->kinds >> k & 1)) continue;
        if (k == 0 && f->elems) {
            for (int d = 0; d < 32 && at < size; d++)
                if (f->elems >> d & 1)
                    at += (size_t)snprintf(buf + at, size - at, "%stensor(%s)", at ? ", " : "",
                                           pc_dtype_name((pc_dtype)d));
        } else if (at < size) {
            at += (size_t)snprintf(buf + at, size - at, "%s%s", at ? ", " : "", kinds[k]);
        }
    }
}

static void describe_value_type(const pc_type *t, char *buf, size_t size)
{
    if (t->kind == PC_TYPE_TENSOR || t->kind == PC_TYPE_SPARSE_TENSOR)
        snprintf(buf, size, "%s(%s)", t->kind == PC_TYPE_TENSOR ? "tensor" : "sparse_tensor",
                 t->elem == PC_DTYPE_UNDEFINED ? "?" : pc_dtype_name(t->elem));
    else
        snprintf(buf, size, "%s",
                 t->kind == PC_TYPE_SEQUENCE ? "seq"
                 : t->kind == PC_TYPE_MAP    ? "map"
                                             : "optional");
}

/* The type a value has for checking: its own, or for an outer-scope reference without one (a subgraph's
 * value_info may name an outer value and leave its type out), the nearest typed value it refers to. An outer
 * reference is that value: judging it untyped let a subgraph apply an op to an outer value of a type the op
 * refuses (found by fuzz_ort_load: SequenceAt on an outer float tensor, accepted until the ORT saver typed
 * the reference and the reload refused it). */
static const pc_type *checked_type(const pc_value *v)
{
    while (v->type.kind == PC_TYPE_NONE && v->outer)
        v = v->outer;
    return &v->type;
}

/* Two declarations of one value agree: the same kind, and where both say, the same element types (shapes may
 * be more or less specific). */
static bool types_agree(const pc_type *a, const pc_type *b)
{
    if (a->kind == PC_TYPE_NONE || b->kind == PC_TYPE_NONE) return true;
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case PC_TYPE_TENSOR:
    case PC_TYPE_SPARSE_TENSOR:
        return a->elem == PC_DTYPE_UNDEFINED || b->elem == PC_DTYPE_UNDEFINED || a->elem == b->elem;
    case PC_TYPE_MAP:
        if (a->key != b->key) return false;
        /* fall through */
    case PC_TYPE_SEQUENCE:
    case PC_TYPE_OPTIONAL:
        return !a->inner || !b->inner || types_agree(a->inner, b->inner);
    default:
        return true;
    }
}

enum { MAX_TYPE_GROUPS = 16 }; /* gen_onnx_ops.py holds every schema below it */

/* The schema's type constraints on the node's typed values: each value's kind is one its formal parameter
 * allows, each input's tensor element type too, and values bound to one type parameter agree (ONNX Runtime
 * refuses such a model at load: "Type parameter (T) of Optype (Concat) bound to different types"; a pass
 * that breaks it made a graph no runtime accepts). Values without a type, or with an unknown element type,
 * are not judged. */
static pc_status check_types(verify_ctx *c, const pc_node *n, const pc_op_schema *s)
{
    if (!s->formals) return PC_OK;
    const pc_value *bound[MAX_TYPE_GROUPS] = {0};
    uint32_t bound_at[MAX_TYPE_GROUPS] = {0};
    bool bound_out[MAX_TYPE_GROUPS] = {0};
    const pc_graph *g = n->graph;
    for (int side = 0; side < 2; side++) {
        bool output = side == 1;
        uint32_t count = output ? n->n_outputs : n->n_inputs;
        for (uint32_t i = 0; i < count; i++) {
            const pc_value *v = output ? n->outputs[i] : n->inputs[i];
            const pc_formal_schema *f = formal_at(s, output, i);
            if (!f) continue;
            if (!v && f->single && i < (output ? s->n_formal_outputs : s->n_formal_inputs))
                return pc_error_set(
                    c->err, PC_ERR_ARITY, "graph '%s': node '%s' (%s-%d) %s %u is required but empty",
                    gname(g), label(n), n->op_type, (int)s->since_version, output ? "output" : "input", i);
            if (!v) continue;
            const pc_type *t = checked_type(v);
            unsigned k = kind_bit(t->kind);
            if (!k) continue;
            bool elem_known = k != PC_KIND_TENSOR || t->elem != PC_DTYPE_UNDEFINED;
            /* an output's element type is judged only against the inputs that bind its type parameter, as
             * ONNX Runtime does at load: legacy exporters wrote int64 Constant-1 outputs (float-only in the
             * schema), and ONNX's own test data and ORT keep them */
            bool elem_bad = !output && k == PC_KIND_TENSOR && elem_known && !(f->elems >> t->elem & 1);
            if (!(f->kinds & k) || elem_bad) {
                char have[48], allowed[512];
                describe_value_type(t, have, sizeof have);
                describe_allowed(f, allowed, sizeof allowed);
                return pc_error_set(c->err, PC_ERR_TYPE,
                                    "graph '%s': node '%s' (%s-%d) %s %u '%s' is %s, which the operator does "
                                    "not allow there (allowed: %s)",
                                    gname(g), label(n), n->op_type, (int)s->since_version,
                                    output ? "output" : "input", i, v->name, have, allowed);
            }
            if (!f->homogeneous || !elem_known) continue;
            assert(f->group < MAX_TYPE_GROUPS);
            const pc_value *b = bound[f->group];
            if (!b) {
                bound[f->group] = v, bound_at[f->group] = i, bound_out[f->group] = output;
                continue;
            }
            const pc_type *bt = checked_type(b);
            if (bt->kind == t->kind && (k != PC_KIND_TENSOR || bt->elem == t->elem)) continue;
            char have[48], want[48];
            describe_value_type(t, have, sizeof have);
            describe_value_type(bt, want, sizeof want);
            return pc_error_set(c->err, PC_ERR_TYPE,
                                "graph '%s': node '%s' (%s-%d) %s %u '%s' is %s, but its type parameter is "
                                "bound to %s by %s %u '%s'",
                                gname(g), label(n), n->op_type, (int)s->since_version,
                                output ? "output" : "input", i, v->name, have, want,
                                bound_out[f->group] ? "output" : "input", bound_at[f->group], b->name);
        }
    }
    return PC_OK;
}

static pc_status check_schema(verify_ctx *c, const pc_node *n)
{
    const pc_graph *g = n->graph;
    /* The resolution (function table, opset, domain, binary search of the schema table) depends only on the
     * op: done once per distinct op instead of once per node. Interned op names hit on the pointer compare.
     */
    op_cache_entry *e = &c->op_cache[op_cache_slot(n->domain, n->op_type)];
    const pc_op_schema *s;
    if (e->op_type && (e->op_type == n->op_type || strcmp(e->op_type, n->op_type) == 0) &&
        (e->domain == n->domain || strcmp(e->domain, n->domain) == 0)) {
        s = e->schema;
    } else {
        pc_status st = resolve_schema(c, n, &s);
        if (st != PC_OK) return st;
        e->domain = n->domain;
        e->op_type = n->op_type;
        e->schema = s;
    }
    if (!s) return PC_OK;
    if (n->n_inputs > s->max_inputs && s->max_inputs != PC_SCHEMA_VARIADIC)
        return pc_error_set(c->err, PC_ERR_ARITY,
                            "graph '%s': node '%s' (%s-%d) has %u inputs, at most %u allowed", gname(g),
                            label(n), n->op_type, (int)s->since_version, n->n_inputs, s->max_inputs);
    if (n->n_inputs < s->min_inputs)
        return pc_error_set(c->err, PC_ERR_ARITY,
                            "graph '%s': node '%s' (%s-%d) has %u inputs, at least %u required", gname(g),
                            label(n), n->op_type, (int)s->since_version, n->n_inputs, s->min_inputs);
    if (n->n_outputs > s->max_outputs && s->max_outputs != PC_SCHEMA_VARIADIC)
        return pc_error_set(c->err, PC_ERR_ARITY,
                            "graph '%s': node '%s' (%s-%d) has %u outputs, at most %u allowed", gname(g),
                            label(n), n->op_type, (int)s->since_version, n->n_outputs, s->max_outputs);
    if (n->n_outputs < s->min_outputs)
        return pc_error_set(c->err, PC_ERR_ARITY,
                            "graph '%s': node '%s' (%s-%d) has %u outputs, at least %u required", gname(g),
                            label(n), n->op_type, (int)s->since_version, n->n_outputs, s->min_outputs);
    for (uint32_t i = 0; i < n->n_attrs; i++) {
        const pc_attr *a = &n->attrs[i];
        const pc_attr_schema *as = pc_schema_attr(s, a->name);
        if (!as)
            return pc_error_set(c->err, PC_ERR_ATTRIBUTE,
                                "graph '%s': node '%s' (%s-%d) has unknown attribute '%s'", gname(g),
                                label(n), n->op_type, (int)s->since_version, a->name);
        if (as->type != a->type)
            return pc_error_set(c->err, PC_ERR_ATTRIBUTE_TYPE,
                                "graph '%s': node '%s' (%s-%d) attribute '%s' is %s, the operator expects %s",
                                gname(g), label(n), n->op_type, (int)s->since_version, a->name,
                                pc_attr_type_name(a->type), pc_attr_type_name(as->type));
    }
    for (uint16_t i = 0; i < s->n_attrs; i++)
        if (s->attrs[i].required && !pc_node_attr(n, s->attrs[i].name))
            return pc_error_set(c->err, PC_ERR_ATTRIBUTE,
                                "graph '%s': node '%s' (%s-%d) lacks required attribute '%s'", gname(g),
                                label(n), n->op_type, (int)s->since_version, s->attrs[i].name);
    return check_types(c, n, s);
}

static pc_status verify_graph(verify_ctx *c, const pc_graph *g);

typedef struct implicit_check {
    verify_ctx *c;
    const pc_node *node;
    pc_status st;
} implicit_check;

static void check_implicit(pc_value *v, void *ctx)
{
    implicit_check *ic = ctx;
    if (ic->st != PC_OK || !v->producer) return;
    if (!ic->c->seen[v->producer->id])
        ic->st = pc_error_set(
            ic->c->err, PC_ERR_CYCLE,
            "graph '%s': node '%s' (%s) has a subgraph reading '%s' before node '%s' produces it "
            "(cycle or nodes out of topological order)",
            gname(v->graph), label(ic->node), ic->node->op_type, v->name, label(v->producer));
}

static pc_status verify_node(verify_ctx *c, const pc_graph *g, const pc_node *n)
{
    if (n->graph != g || n->removed)
        return pc_error_set(c->err, PC_ERR_INTERNAL, "graph '%s': node '%s' is listed but not part of it",
                            gname(g), label(n));
    if (!n->op_type || !*n->op_type)
        return pc_error_set(c->err, PC_ERR_MISSING_FIELD, "graph '%s': node '%s' has no op_type", gname(g),
                            label(n));
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        const pc_value *v = n->inputs[i];
        if (!v) continue;
        if (v->graph != g)
            return pc_error_set(c->err, PC_ERR_INTERNAL,
                                "graph '%s': node '%s' input %u '%s' belongs to another graph", gname(g),
                                label(n), i, v->name);
        if (!value_defined(v))
            return pc_error_set(
                c->err, PC_ERR_DANGLING_INPUT,
                "graph '%s': node '%s' (%s) input %u '%s' is not produced by any node, graph input, "
                "initializer or enclosing graph",
                gname(g), label(n), n->op_type, i, v->name);
        if (v->producer && !c->seen[v->producer->id])
            return pc_error_set(
                c->err, PC_ERR_CYCLE,
                "graph '%s': node '%s' (%s) reads '%s' before node '%s' produces it (cycle or nodes "
                "out of topological order)",
                gname(g), label(n), n->op_type, v->name, label(v->producer));
    }
    implicit_check ic = {c, n, PC_OK};
    pc_node_for_each_implicit_input(n, check_implicit, &ic);
    if (ic.st != PC_OK) return ic.st;
    for (uint32_t i = 0; i < n->n_outputs; i++) {
        const pc_value *v = n->outputs[i];
        if (!v) continue;
        if (v->graph != g || v->producer != n || v->producer_output != i)
            return pc_error_set(
                c->err, PC_ERR_DUPLICATE_PRODUCER,
                "graph '%s': value '%s' is listed as output %u of node '%s' but its producer is '%s'",
                gname(g), v->name, i, label(n), v->producer ? label(v->producer) : "(none)");
        if (v->initializer || v->is_graph_input)
            return pc_error_set(c->err, PC_ERR_DUPLICATE_PRODUCER,
                                "graph '%s': value '%s' is produced by node '%s' and is also %s", gname(g),
                                v->name, label(n), v->initializer ? "an initializer" : "a graph input");
    }
    /* attribute names unique, subgraphs sound */
    for (uint32_t i = 0; i < n->n_attrs; i++) {
        const pc_attr *a = &n->attrs[i];
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(n->attrs[j].name, a->name) == 0)
                return pc_error_set(c->err, PC_ERR_DUPLICATE_NAME,
                                    "graph '%s': node '%s' has attribute '%s' twice", gname(g), label(n),
                                    a->name);
        if (a->ref_attr_name)
            return pc_error_set(c->err, PC_ERR_ATTRIBUTE,
                                "graph '%s': node '%s' attribute '%s' uses ref_attr_name outside a function",
                                gname(g), label(n), a->name);
    }
    return check_schema(c, n);
}

static pc_status verify_subgraphs(verify_ctx *c, const pc_node *n)
{
    for (uint32_t i = 0; i < n->n_attrs; i++) {
        const pc_attr *a = &n->attrs[i];
        pc_status st = PC_OK;
        if (a->type == PC_ATTR_GRAPH && a->g) st = verify_graph(c, a->g);
        for (size_t k = 0; st == PC_OK && a->type == PC_ATTR_GRAPHS && k < a->n; k++)
            st = verify_graph(c, a->graphs[k]);
        if (st != PC_OK) return st;
    }
    return PC_OK;
}

/* The general use-list check, in O(edges): every consumer entry must point back at an input slot reading the
 * value, and every non-empty input slot must be listed exactly once (one bit per slot). */
static pc_status check_use_lists(verify_ctx *c, const pc_graph *g)
{
    pc_status st = PC_OK;
    uint32_t *slot_base = calloc(g->next_node_id ? g->next_node_id : 1, sizeof *slot_base);
    size_t n_slots = 0;
    for (const pc_node *n = g->first; slot_base && n; n = n->next) {
        slot_base[n->id] = (uint32_t)n_slots;
        n_slots += n->n_inputs;
    }
    uint8_t *slot_seen = calloc(n_slots ? n_slots : 1, 1);
    if (!slot_base || !slot_seen || n_slots > UINT32_MAX)
        st = pc_error_set(c->err, PC_ERR_NOMEM, "out of memory verifying graph '%s'", gname(g));
    for (uint32_t i = 0; st == PC_OK && i < g->n_values; i++) {
        const pc_value *v = g->values[i];
        for (uint32_t k = 0; k < v->n_consumers; k++) {
            const pc_use *u = &v->consumers[k];
            if (u->node->graph != g || u->node->removed || u->index >= u->node->n_inputs ||
                u->node->inputs[u->index] != v) {
                st = pc_error_set(c->err, PC_ERR_INTERNAL,
                                  "graph '%s': use list of '%s' names node '%s' input %u, "
                                  "which does not read it",
                                  gname(g), v->name, label(u->node), u->index);
                break;
            }
            uint8_t *seen = &slot_seen[slot_base[u->node->id] + u->index];
            if (*seen) {
                st = pc_error_set(c->err, PC_ERR_INTERNAL,
                                  "graph '%s': use list of '%s' lists node '%s' input %u twice", gname(g),
                                  v->name, label(u->node), u->index);
                break;
            }
            *seen = 1;
        }
    }
    for (const pc_node *n = g->first; st == PC_OK && n; n = n->next)
        for (uint32_t i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] && !slot_seen[slot_base[n->id] + i]) {
                st = pc_error_set(c->err, PC_ERR_INTERNAL,
                                  "graph '%s': use list of '%s' misses node '%s' input %u", gname(g),
                                  n->inputs[i]->name, label(n), i);
                break;
            }
    free(slot_base);
    free(slot_seen);
    return st;
}

static pc_status verify_graph(verify_ctx *c, const pc_graph *g)
{
    pc_status st = PC_OK;
    uint8_t *saved = c->seen;
    /* Use lists, fast path: walking the nodes in order, each input slot (n, i) reading v should be the next
     * unmatched entry of v's use list (lists built in node order, as the loader and most edits leave them),
     * so matched[v] never exceeds v's list length. If every slot matches that way and the lists of all values
     * hold as many entries as slots matched, every list is used up: each entry names a distinct live slot
     * that reads its value and each slot is listed, so the lists are exact. Otherwise check_use_lists
     * decides. A node's output values are read while the node is (produced[]), so the pass over all values
     * only has to visit the others (inputs, initializers, outer references, orphans): no second miss per
     * value. The three tables share one block, on the stack for a small graph: the verifier runs after every
     * pass, and under ASan each allocation costs a stack unwind. */
    size_t n_ids = g->n_values ? g->n_values : 1, n_seen = g->next_node_id ? g->next_node_id : 1;
    size_t matched_bytes, table_bytes;
    uint32_t *matched = NULL, small[256];
    if (pc_size_mul(n_ids, sizeof *matched, &matched_bytes) &&
        pc_size_add(matched_bytes, n_ids, &table_bytes) && pc_size_add(table_bytes, n_seen, &table_bytes)) {
        if (table_bytes <= sizeof small) {
            memset(small, 0, table_bytes);
            matched = small;
        } else {
            matched = calloc(1, table_bytes);
        }
    }
    if (!matched) return pc_error_set(c->err, PC_ERR_NOMEM, "out of memory verifying graph '%s'", gname(g));
    uint8_t *produced = (uint8_t *)matched + matched_bytes;
    c->seen = produced + n_ids;
    bool lists_in_order = true;
    uint64_t n_matched = 0, n_listed = 0; /* slots matched; entries in the use lists of all values */
    uint32_t count = 0;
    for (const pc_node *n = g->first; n && st == PC_OK; n = n->next) {
        if (n->next && n->next->prev != n) {
            st = pc_error_set(c->err, PC_ERR_INTERNAL, "graph '%s': node list is broken after '%s'", gname(g),
                              label(n));
            break;
        }
        if (++count > g->n_nodes) {
            st = pc_error_set(c->err, PC_ERR_INTERNAL, "graph '%s': node list longer than n_nodes", gname(g));
            break;
        }
        st = verify_node(c, g, n);
        if (st != PC_OK) break;
        for (uint32_t i = 0; lists_in_order && i < n->n_inputs; i++) {
            const pc_value *v = n->inputs[i];
            if (!v) continue;
            if (v->id < g->n_values && g->values[v->id] == v && matched[v->id] < v->n_consumers &&
                v->consumers[matched[v->id]].node == n && v->consumers[matched[v->id]].index == i) {
                matched[v->id]++;
                n_matched++;
            } else {
                lists_in_order = false;
            }
        }
        /* verify_node checked these values' producer (n, listed, not removed); outer links resolve (below) */
        for (uint32_t i = 0; i < n->n_outputs; i++) {
            const pc_value *v = n->outputs[i];
            if (!v) continue;
            if (v->id < g->n_values && g->values[v->id] == v && !produced[v->id]) {
                produced[v->id] = 1;
                n_listed += v->n_consumers;
            } else {
                lists_in_order = false;
            }
            if (v->outer && !pc_value_resolve((pc_value *)v)) {
                st = pc_error_set(c->err, PC_ERR_DANGLING_INPUT,
                                  "graph '%s': outer reference '%s' resolves to nothing", gname(g), v->name);
                break;
            }
        }
        if (st != PC_OK) break;
        /* mark before the subgraphs so their outer references see a node's own inputs as defined */
        c->seen[n->id] = 1;
        st = verify_subgraphs(c, n);
    }
    if (st == PC_OK && count != g->n_nodes)
        st = pc_error_set(c->err, PC_ERR_INTERNAL, "graph '%s': %u nodes linked, n_nodes says %u", gname(g),
                          count, g->n_nodes);
    for (uint32_t i = 0; st == PC_OK && i < g->n_values; i++) {
        if (produced[i]) continue;
        const pc_value *v = g->values[i];
        n_listed += v->n_consumers;
        if (v->producer && v->producer->removed)
            st = pc_error_set(c->err, PC_ERR_INTERNAL, "graph '%s': value '%s' names a removed producer",
                              gname(g), v->name);
        else if (v->outer && !pc_value_resolve((pc_value *)v))
            st = pc_error_set(c->err, PC_ERR_DANGLING_INPUT,
                              "graph '%s': outer reference '%s' resolves to nothing", gname(g), v->name);
        else if (v->outer && !types_agree(&v->type, checked_type(v->outer))) {
            char have[48], outer[48];
            describe_value_type(&v->type, have, sizeof have);
            describe_value_type(checked_type(v->outer), outer, sizeof outer);
            st = pc_error_set(
                c->err, PC_ERR_TYPE,
                "graph '%s': value_info declares outer-scope value '%s' %s, but graph '%s' has it "
                "as %s",
                gname(g), v->name, have, gname(v->outer->graph), outer);
        }
    }
    if (st == PC_OK && (!lists_in_order || n_matched != n_listed)) st = check_use_lists(c, g);
    for (uint32_t i = 0; st == PC_OK && i < g->n_outputs; i++) {
        const pc_value *v = g->outputs[i];
        if (!value_defined(v))
            st = pc_error_set(
                c->err, PC_ERR_UNPRODUCED_OUTPUT,
                "graph '%s': graph output '%s' is not produced by any node, input or initializer", gname(g),
                v->name);
    }
    for (uint32_t i = 0; st == PC_OK && i < g->n_initializers; i++) {
        const pc_value *v = g->initializers[i];
        if (!v->initializer || v->graph != g)
            st =
                pc_error_set(c->err, PC_ERR_INTERNAL,
                             "graph '%s': initializer list names '%s', which has no data", gname(g), v->name);
    }
    if (matched != small) free(matched);
    c->seen = saved;
    return st;
}

pc_status pc_graph_verify(const pc_graph *graph, pc_error *err)
{
    verify_ctx c = {.model = graph->model, .err = err};
    return verify_graph(&c, graph);
}

enum { PC_IR_VERSION_MIN = 3, PC_IR_VERSION_MAX = 11 };

pc_status pc_model_verify(const pc_model *model, pc_error *err)
{
    if (model->ir_version < PC_IR_VERSION_MIN || model->ir_version > PC_IR_VERSION_MAX)
        return pc_error_set(err, PC_ERR_IR_VERSION, "ir_version %lld is outside the supported range %d..%d",
                            (long long)model->ir_version, PC_IR_VERSION_MIN, PC_IR_VERSION_MAX);
    if (model->n_opsets == 0) return pc_error_set(err, PC_ERR_OPSET, "the model imports no opset");
    for (uint32_t i = 0; i < model->n_opsets; i++) {
        const pc_opset *o = &model->opsets[i];
        const char *dname = *o->domain ? o->domain : "ai.onnx";
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(model->opsets[j].domain, o->domain) == 0)
                return pc_error_set(err, PC_ERR_DUPLICATE_NAME, "opset_import lists domain '%s' twice",
                                    dname);
        const pc_domain_info *info = pc_schema_domain(o->domain);
        if (!info) {
            if (is_function_domain(model, o->domain)) continue;
            return pc_error_set(err, PC_ERR_UNKNOWN_DOMAIN, "opset_import names unknown domain '%s'", dname);
        }
        if (o->version < info->min_opset || o->version > info->max_opset)
            return pc_error_set(err, PC_ERR_OPSET,
                                "opset %lld for domain '%s' is outside the supported range %d..%d",
                                (long long)o->version, dname, (int)info->min_opset, (int)info->max_opset);
    }
    if (!model->graph) return pc_error_set(err, PC_ERR_MISSING_FIELD, "the model has no graph");
    return pc_graph_verify(model->graph, err);
}
