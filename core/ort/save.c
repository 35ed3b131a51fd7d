/* The ORT format saver: the IR as an ONNX Runtime 1.30 ORT-format file (ort_version 6, ort.fbs), byte for
 * byte the same for the same IR.
 *
 * The FlatBuffer is written front to back, parent before children: a table (its vtable just before it), then
 * each object it references, depth first, each reference patched once its target is placed — so every uoffset
 * points forward, as the format requires, with no second pass. Tables hold their 8-byte fields first (the
 * table 8-aligned), vectors of 8-byte elements have them 8-aligned, strings end in a NUL.
 *
 * What ONNX Runtime needs beyond the graph, and where it comes from:
 *   - each node's since_version and the kernel type string resolver ("domain:op:since" -> type string ->
 *     the formal inputs and outputs bound to it): from the op schemas (core/schema, ONNX 1.12), so a node in
 * a domain without schemas, or a model above the schemas' newest opset, is refused (UNSUPPORTED, naming the
 *     node) rather than written with a guess ORT would reject;
 *   - input_arg_counts per formal input, NodeArgs for every value (subgraphs also list the enclosing values
 *     they read, and the node holding them lists those as implicit inputs), NodeEdges from the value flow,
 *     max_node_index and each node's index (its position);
 *   - the EP assignment as execution_provider_type.
 * What the format cannot hold is refused: layer_ann and other node metadata, sparse tensors, optional and
 * opaque types, TYPE_PROTO attributes, model-local functions and training info, element types above
 * FLOAT8E5M2FNUZ, strings with a NUL inside (the loader refuses those). */
#include <stdlib.h>
#include <string.h>

#include "core/eval/eval.h"
#include "core/ort/fb.h"
#include "core/schema/schema.h"

typedef struct fbw {
    uint8_t *b;
    size_t len, cap;
    pc_error *err;
    pc_status st; /* the first failure; writes after it are dropped */
} fbw;

static bool w_ok(fbw *w)
{
    return w->st == PC_OK;
}

static pc_status w_fail(fbw *w, pc_status st, const char *fmt, const char *a, const char *b)
{
    if (w->st == PC_OK) w->st = pc_error_set(w->err, st, fmt, a ? a : "", b ? b : "");
    return w->st;
}

/* Pads with zeros until (len + offset) % align == 0 and len % 4 == 0, then reserves n zero bytes. */
static size_t w_reserve(fbw *w, size_t n, size_t align, size_t offset)
{
    if (!w_ok(w)) return 0;
    size_t pad = 0;
    while ((w->len + pad) % 4 || (w->len + pad + offset) % align)
        pad++;
    if (w->len > (size_t)0x7fffffff - pad || n > (size_t)0x7fffffff - w->len - pad) {
        w_fail(w, PC_ERR_BUDGET, "ORT format: the model exceeds the format's 2 GiB%s%s", NULL, NULL);
        return 0;
    }
    size_t need = w->len + pad + n;
    if (need > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < need)
            cap *= 2;
        uint8_t *b = realloc(w->b, cap);
        if (!b) {
            w_fail(w, PC_ERR_NOMEM, "ORT format: out of memory writing the model%s%s", NULL, NULL);
            return 0;
        }
        w->b = b;
        w->cap = cap;
    }
    memset(w->b + w->len, 0, pad + n);
    w->len += pad;
    size_t at = w->len;
    w->len += n;
    return at;
}

static void put(fbw *w, size_t pos, uint64_t v, unsigned width)
{
    for (unsigned i = 0; i < width && w_ok(w); i++)
        w->b[pos + i] = (uint8_t)(v >> (8 * i));
}

/* The uoffset at slot now points at target (placed after it). */
static void patch(fbw *w, size_t slot, size_t target)
{
    if (w_ok(w)) put(w, slot, (uint64_t)(target - slot), 4);
}

/* ---- tables */

enum { MAX_FIELDS = 16 };

typedef struct tfield {
    uint16_t id;
    uint8_t width; /* 1, 2, 4, 8; references 4 */
    uint64_t value;
    bool is_ref;
} tfield;

typedef struct tbuild {
    tfield f[MAX_FIELDS];
    int n;
    size_t slot[MAX_FIELDS]; /* after t_write: each field's position, by field index */
} tbuild;

static void t_scalar(tbuild *t, uint16_t id, unsigned width, uint64_t value)
{
    if (value) t->f[t->n++] = (tfield){id, (uint8_t)width, value, false}; /* zeros are the defaults */
}

/* A reference field; returns its index for t_slot after t_write. */
static int t_ref(tbuild *t, uint16_t id)
{
    t->f[t->n] = (tfield){id, 4, 0, true};
    return t->n++;
}

/* Writes the vtable and the table: 8-byte fields first (the table 8-aligned), then 4, 2 and 1. */
static size_t t_write(fbw *w, tbuild *t)
{
    uint16_t max_id = 0;
    for (int i = 0; i < t->n; i++)
        if (t->f[i].id > max_id) max_id = t->f[i].id;
    size_t vsize = 4 + 2 * ((size_t)max_id + 1), off[MAX_FIELDS], end = 4;
    bool wide = false;
    for (int i = 0; i < t->n; i++)
        wide |= t->f[i].width == 8;
    if (wide) end = 8;
    for (unsigned width = 8; width >= 1; width /= 2)
        for (int i = 0; i < t->n; i++)
            if (t->f[i].width == width) {
                off[i] = end;
                end += width;
            }
    size_t tsize = (end + 3) / 4 * 4;
    size_t vt = w_reserve(w, vsize, 2, 0);
    size_t table = w_reserve(w, tsize, 8, 0);
    if (!w_ok(w)) return 0;
    put(w, vt, vsize, 2);
    put(w, vt + 2, tsize, 2);
    for (int i = 0; i < t->n; i++) {
        put(w, vt + 4 + 2 * (size_t)t->f[i].id, off[i], 2);
        if (!t->f[i].is_ref) put(w, table + off[i], t->f[i].value, t->f[i].width);
        t->slot[i] = table + off[i];
    }
    put(w, table, (uint64_t)(uint32_t)(int32_t)(table - vt), 4); /* soffset: the vtable lies before */
    return table;
}

static size_t w_string(fbw *w, const char *s, size_t len)
{
    size_t at = w_reserve(w, 4 + len + 1, 4, 0);
    if (w_ok(w)) {
        put(w, at, len, 4);
        if (len) memcpy(w->b + at + 4, s, len);
    }
    return at;
}

static void ref_string(fbw *w, size_t slot, const char *s)
{
    size_t at = w_string(w, s ? s : "", s ? strlen(s) : 0);
    patch(w, slot, at);
}

/* A vector of count scalars of `width` bytes (little-endian from `values`, or as given for bytes). */
static size_t w_vec(fbw *w, const void *values, size_t count, unsigned width)
{
    size_t at = w_reserve(w, 4 + count * width, width > 4 ? width : 4, 4);
    if (w_ok(w)) {
        put(w, at, count, 4);
        const uint8_t *v = values;
        for (size_t i = 0; i < count; i++) {
            uint64_t x = 0;
            memcpy(&x, v + i * width, width); /* little-endian host: the loader asserts it */
            put(w, at + 4 + i * width, x, width);
        }
    }
    return at;
}

/* A vector of count references; returns it, the slots at +4 + 4i. */
static size_t w_refvec(fbw *w, size_t count)
{
    size_t at = w_reserve(w, 4 + 4 * count, 4, 0);
    if (w_ok(w)) put(w, at, count, 4);
    return at;
}

/* ---- the model */

typedef struct op_entry {
    char *id; /* "domain:op:since" */
    const pc_op_schema *schema;
} op_entry;

typedef struct save_ctx {
    fbw w;
    const pc_model *m;
    op_entry *ops;
    size_t n_ops, cap_ops;
} save_ctx;

static int64_t opset_of(const pc_model *m, const char *domain)
{
    for (uint32_t i = 0; i < m->n_opsets; i++)
        if (strcmp(m->opsets[i].domain, domain) == 0) return m->opsets[i].version;
    return -1;
}

static const char *node_name(const pc_node *n)
{
    return n->name && *n->name ? n->name : n->op_type;
}

/* Ops ONNX defines by a function body that ONNX Runtime 1.30 runs only by expanding that body when it loads
 * ONNX: in the ORT format it has no kernel for them and refuses the file ("Could not find an
 * implementation"). Measured on the ONNX backend models (ctest ort_saver_corpus); passcheck does not expand
 * function bodies. */
static bool ort_has_no_kernel(const pc_node *n)
{
    static const char *const ops[] = {"Bernoulli",   "CastLike",
                                      "HardSwish",   "NegativeLogLikelihoodLoss",
                                      "SequenceMap", "SoftmaxCrossEntropyLoss"};
    if (n->domain[0]) return false;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(n->op_type, ops[i]) == 0) return true;
    return false;
}

/* The node's schema at the model's opset; records its op_id for the resolver. NULL (and the failure set)
 * when ORT could not be told the node's since_version. */
static const pc_op_schema *node_schema(save_ctx *c, const pc_node *n)
{
    if (ort_has_no_kernel(n)) {
        w_fail(&c->w, PC_ERR_UNSUPPORTED,
               "ORT format: node '%s' (%s): ONNX Runtime runs this op only by expanding its function body "
               "when it "
               "loads ONNX, and has no kernel for it in the ORT format",
               node_name(n), n->op_type);
        return NULL;
    }
    const pc_domain_info *d = pc_schema_domain(n->domain);
    int64_t opset = opset_of(c->m, n->domain);
    const pc_op_schema *s = d && d->has_schemas && opset <= d->schema_max_opset
                                ? pc_schema_lookup(n->domain, n->op_type, opset)
                                : NULL;
    if (!s) {
        char who[300];
        snprintf(who, sizeof who, "%s (%s%s%s)", node_name(n), *n->domain ? n->domain : "",
                 *n->domain ? ":" : "", n->op_type);
        w_fail(
            &c->w, PC_ERR_UNSUPPORTED,
            "ORT format: node %s: no op schema gives its since_version and kernel type strings (domains with "
            "schemas up to their newest described opset only)%s",
            who, NULL);
        return NULL;
    }
    char id[300];
    snprintf(id, sizeof id, "%s:%s:%d", s->domain, s->op_type, (int)s->since_version);
    for (size_t i = 0; i < c->n_ops; i++)
        if (strcmp(c->ops[i].id, id) == 0) return s;
    if (c->n_ops == c->cap_ops) {
        size_t cap = c->cap_ops ? 2 * c->cap_ops : 32;
        op_entry *o = realloc(c->ops, cap * sizeof *o);
        if (!o) {
            w_fail(&c->w, PC_ERR_NOMEM, "ORT format: out of memory%s%s", NULL, NULL);
            return NULL;
        }
        c->ops = o;
        c->cap_ops = cap;
    }
    char *copy = malloc(strlen(id) + 1);
    if (!copy) {
        w_fail(&c->w, PC_ERR_NOMEM, "ORT format: out of memory%s%s", NULL, NULL);
        return NULL;
    }
    strcpy(copy, id);
    c->ops[c->n_ops++] = (op_entry){copy, s};
    return s;
}

static bool has_nul(const uint8_t *p, size_t n)
{
    return n && memchr(p, 0, n) != NULL;
}

static size_t w_graph(save_ctx *c, const pc_graph *g);

/* The element types the format holds: the schema's own TensorDataType range (ORT 1.30's ort.fbs), so a type
 * the IR has and the format lacks (INT2, FLOAT4E2M1, ...) is refused, never written as an out-of-range enum
 * a reader rejects. */
static bool ort_dtype_ok(pc_dtype d)
{
    const fb_field *f = &pc_ort_schema.tables[ORT_T_TENSOR_TYPE_AND_SHAPE].fields[0];
    return (int64_t)d >= f->lo && (int64_t)d <= f->hi;
}

static size_t w_tensor(save_ctx *c, const pc_tensor *t)
{
    fbw *w = &c->w;
    if (t->dtype <= PC_DTYPE_UNDEFINED || !ort_dtype_ok(t->dtype)) {
        w_fail(w, PC_ERR_UNSUPPORTED, "ORT format: tensor '%s' has type %s, beyond the format's types",
               t->name, pc_dtype_name(t->dtype));
        return 0;
    }
    tbuild tb = {.n = 0};
    int name = t->name ? t_ref(&tb, 0) : -1, doc = t->doc_string ? t_ref(&tb, 1) : -1, dims = t_ref(&tb, 2);
    t_scalar(&tb, 3, 4, (uint64_t)t->dtype);
    int data = t_ref(&tb, t->dtype == PC_DTYPE_STRING ? 5 : 4);
    size_t at = t_write(w, &tb);
    if (name >= 0) ref_string(w, tb.slot[name], t->name);
    if (doc >= 0) ref_string(w, tb.slot[doc], t->doc_string);
    patch(w, tb.slot[dims], w_vec(w, t->dims, (size_t)t->rank, 8));
    if (t->dtype != PC_DTYPE_STRING) {
        patch(w, tb.slot[data], w_vec(w, t->data, t->n_bytes, 1));
    } else {
        const pc_bytes *sv = t->data;
        size_t v = w_refvec(w, t->n_elements);
        patch(w, tb.slot[data], v);
        for (uint64_t i = 0; i < t->n_elements && w_ok(w); i++) {
            if (has_nul(sv[i].data, sv[i].len))
                w_fail(w, PC_ERR_UNSUPPORTED, "ORT format: string tensor '%s' holds a NUL byte%s", t->name,
                       NULL);
            patch(w, v + 4 + 4 * i, w_string(w, (const char *)sv[i].data, sv[i].len));
        }
    }
    return at;
}

static size_t w_type(save_ctx *c, const pc_type *ty, const char *what);

/* TensorTypeAndShape */
static size_t w_tensor_type(save_ctx *c, const pc_type *ty, const char *what)
{
    fbw *w = &c->w;
    if (!ort_dtype_ok(ty->elem)) {
        w_fail(w, PC_ERR_UNSUPPORTED, "ORT format: value '%s' has element type %s, beyond the format's types",
               what, pc_dtype_name(ty->elem));
        return 0;
    }
    tbuild tb = {.n = 0};
    t_scalar(&tb, 0, 4, (uint64_t)ty->elem);
    int shape = ty->shape.rank >= 0 ? t_ref(&tb, 1) : -1;
    size_t at = t_write(w, &tb);
    if (shape < 0) return at;
    tbuild sb = {.n = 0};
    int dim = t_ref(&sb, 0);
    patch(w, tb.slot[shape], t_write(w, &sb));
    size_t v = w_refvec(w, (size_t)ty->shape.rank);
    patch(w, sb.slot[dim], v);
    for (int32_t i = 0; i < ty->shape.rank && w_ok(w); i++) {
        const pc_dim *d = &ty->shape.dims[i];
        tbuild db = {.n = 0};
        int value = t_ref(&db, 0), den = d->denotation ? t_ref(&db, 1) : -1;
        patch(w, v + 4 + 4 * (size_t)i, t_write(w, &db));
        tbuild vb = {.n = 0};
        int param = -1;
        if (d->kind == PC_DIM_KNOWN) {
            t_scalar(&vb, 0, 1, 1);
            t_scalar(&vb, 1, 8, (uint64_t)d->size);
        } else if (d->kind == PC_DIM_SYMBOLIC && d->symbol) {
            t_scalar(&vb, 0, 1, 2);
            param = t_ref(&vb, 2);
        }
        patch(w, db.slot[value], t_write(w, &vb));
        if (param >= 0) ref_string(w, vb.slot[param], d->symbol);
        if (den >= 0) ref_string(w, db.slot[den], d->denotation);
    }
    return at;
}

/* TypeInfo */
static size_t w_type(save_ctx *c, const pc_type *ty, const char *what)
{
    fbw *w = &c->w;
    unsigned tag = ty->kind == PC_TYPE_TENSOR     ? 1
                   : ty->kind == PC_TYPE_SEQUENCE ? 2
                   : ty->kind == PC_TYPE_MAP      ? 3
                                                  : 0;
    if (!tag) {
        w_fail(w, PC_ERR_UNSUPPORTED, "ORT format: '%s' has a type the format cannot hold (%s)", what,
               ty->kind == PC_TYPE_OPTIONAL        ? "optional"
               : ty->kind == PC_TYPE_SPARSE_TENSOR ? "sparse tensor"
                                                   : "opaque");
        return 0;
    }
    tbuild tb = {.n = 0};
    int den = ty->denotation ? t_ref(&tb, 0) : -1;
    t_scalar(&tb, 1, 1, tag);
    int value = t_ref(&tb, 2);
    size_t at = t_write(w, &tb);
    if (den >= 0) ref_string(w, tb.slot[den], ty->denotation);
    if (tag == 1) {
        patch(w, tb.slot[value], w_tensor_type(c, ty, what));
    } else if (tag == 2) {
        tbuild sb = {.n = 0};
        int elem = t_ref(&sb, 0);
        patch(w, tb.slot[value], t_write(w, &sb));
        patch(w, sb.slot[elem], w_type(c, ty->inner, what));
    } else {
        tbuild mb = {.n = 0};
        t_scalar(&mb, 0, 4, (uint64_t)ty->key);
        int vt = t_ref(&mb, 1);
        patch(w, tb.slot[value], t_write(w, &mb));
        patch(w, mb.slot[vt], w_type(c, ty->inner, what));
    }
    return at;
}

static size_t w_value_info(save_ctx *c, const pc_value *v)
{
    fbw *w = &c->w;
    const pc_value *typed = v;
    while (typed->outer && typed->type.kind == PC_TYPE_NONE)
        typed = typed->outer;
    tbuild tb = {.n = 0};
    int name = t_ref(&tb, 0), doc = v->doc_string ? t_ref(&tb, 1) : -1;
    if (typed->type.kind == PC_TYPE_NONE) {
        w_fail(w, PC_ERR_UNSUPPORTED,
               "ORT format: value '%s' has no type, even after shape inference (ONNX Runtime needs every "
               "NodeArg "
               "typed)%s",
               v->name, NULL);
        return 0;
    }
    int type = t_ref(&tb, 2);
    size_t at = t_write(w, &tb);
    ref_string(w, tb.slot[name], v->name);
    if (doc >= 0) ref_string(w, tb.slot[doc], v->doc_string);
    patch(w, tb.slot[type], w_type(c, &typed->type, v->name));
    return at;
}

static size_t w_attr(save_ctx *c, const pc_node *n, const pc_attr *a)
{
    fbw *w = &c->w;
    tbuild tb = {.n = 0};
    int name = t_ref(&tb, 0), doc = a->doc_string ? t_ref(&tb, 1) : -1, val = -1;
    t_scalar(&tb, 2, 4, (uint64_t)a->type);
    switch (a->type) {
    case PC_ATTR_FLOAT: {
        uint32_t bits;
        memcpy(&bits, &a->f, sizeof bits);
        t_scalar(&tb, 3, 4, bits);
        break;
    }
    case PC_ATTR_INT:
        t_scalar(&tb, 4, 8, (uint64_t)a->i);
        break;
    case PC_ATTR_STRING:
        if (has_nul(a->s.data, a->s.len))
            w_fail(w, PC_ERR_UNSUPPORTED, "ORT format: attribute '%s' of node '%s': a string with a NUL byte",
                   a->name, node_name(n));
        val = t_ref(&tb, 5);
        break;
    case PC_ATTR_TENSOR:
        val = t_ref(&tb, 6);
        break;
    case PC_ATTR_GRAPH:
        val = t_ref(&tb, 7);
        break;
    case PC_ATTR_FLOATS:
        val = t_ref(&tb, 8);
        break;
    case PC_ATTR_INTS:
        val = t_ref(&tb, 9);
        break;
    case PC_ATTR_STRINGS:
        val = t_ref(&tb, 10);
        break;
    case PC_ATTR_TENSORS:
        val = t_ref(&tb, 11);
        break;
    case PC_ATTR_GRAPHS:
        val = t_ref(&tb, 12);
        break;
    default:
        w_fail(w, PC_ERR_UNSUPPORTED,
               "ORT format: attribute '%s' of node '%s' has a type the format cannot hold", a->name,
               node_name(n));
        return 0;
    }
    size_t at = t_write(w, &tb);
    ref_string(w, tb.slot[name], a->name);
    if (doc >= 0) ref_string(w, tb.slot[doc], a->doc_string);
    if (val < 0 || !w_ok(w)) return at;
    size_t slot = tb.slot[val], v;
    switch (a->type) {
    case PC_ATTR_STRING:
        patch(w, slot, w_string(w, (const char *)a->s.data, a->s.len));
        break;
    case PC_ATTR_TENSOR:
        patch(w, slot, w_tensor(c, a->t));
        break;
    case PC_ATTR_GRAPH:
        patch(w, slot, w_graph(c, a->g));
        break;
    case PC_ATTR_FLOATS:
        patch(w, slot, w_vec(w, a->floats, a->n, 4));
        break;
    case PC_ATTR_INTS:
        patch(w, slot, w_vec(w, a->ints, a->n, 8));
        break;
    case PC_ATTR_STRINGS:
        patch(w, slot, v = w_refvec(w, a->n));
        for (size_t i = 0; i < a->n && w_ok(w); i++) {
            if (has_nul(a->strings[i].data, a->strings[i].len))
                w_fail(w, PC_ERR_UNSUPPORTED,
                       "ORT format: attribute '%s' of node '%s': a string with a NUL byte", a->name,
                       node_name(n));
            patch(w, v + 4 + 4 * i, w_string(w, (const char *)a->strings[i].data, a->strings[i].len));
        }
        break;
    case PC_ATTR_TENSORS:
        patch(w, slot, v = w_refvec(w, a->n));
        for (size_t i = 0; i < a->n && w_ok(w); i++)
            patch(w, v + 4 + 4 * i, w_tensor(c, a->tensors[i]));
        break;
    case PC_ATTR_GRAPHS:
        patch(w, slot, v = w_refvec(w, a->n));
        for (size_t i = 0; i < a->n && w_ok(w); i++)
            patch(w, v + 4 + 4 * i, w_graph(c, a->graphs[i]));
        break;
    default:
        break;
    }
    return at;
}

/* Whether graph h is g or lies inside one of g's nodes' subgraphs. */
static bool graph_within(const pc_graph *h, const pc_graph *g)
{
    for (; h; h = h->parent)
        if (h == g) return true;
    return false;
}

/* The names read by the subgraphs of node n (at any depth) from outside them: n's implicit inputs. Appends
 * to names (unique, in order of first use); false when more than cap names would be needed. */
static bool collect_implicit(const pc_graph *g, const pc_graph *sub, const char **names, uint32_t *n,
                             uint32_t cap)
{
    bool fits = true;
    for (const pc_node *k = g->first; k; k = k->next) {
        for (uint32_t i = 0; i < k->n_inputs; i++) {
            const pc_value *v = k->inputs[i];
            if (!v || !v->outer) continue;
            const pc_value *r = v;
            while (r->outer && graph_within(r->graph, sub))
                r = r->outer;
            if (graph_within(r->graph, sub)) continue;
            bool seen = false;
            for (uint32_t j = 0; j < *n && !seen; j++)
                seen = strcmp(names[j], v->name) == 0;
            if (seen) continue;
            if (*n == cap) return false;
            names[(*n)++] = v->name;
        }
        for (uint32_t a = 0; a < k->n_attrs && fits; a++) {
            if (k->attrs[a].type == PC_ATTR_GRAPH) fits = collect_implicit(k->attrs[a].g, sub, names, n, cap);
            for (size_t j = 0; k->attrs[a].type == PC_ATTR_GRAPHS && j < k->attrs[a].n && fits; j++)
                fits = collect_implicit(k->attrs[a].graphs[j], sub, names, n, cap);
        }
        if (!fits) return false;
    }
    return true;
}

/* ONNX Runtime turns Constant nodes into initializers when it loads ONNX and has no kernel for them in the
 * ORT format (its own writer stores them as initializers): the saver writes each one's value (core/eval) as
 * an initializer named as its output, and leaves the node out of the nodes, indices and edges. */
static bool is_constant(const pc_node *n)
{
    return strcmp(n->op_type, "Constant") == 0 && !n->domain[0] && n->n_outputs == 1 && n->outputs[0];
}

static bool edge_from(const pc_value *v, const pc_graph *g)
{
    return v && v->producer && v->graph == g && !is_constant(v->producer);
}

enum { MAX_IMPLICIT = 4096 };

static size_t w_node(save_ctx *c, const pc_node *n, uint32_t index)
{
    fbw *w = &c->w;
    if (n->n_metadata) {
        w_fail(w, PC_ERR_UNSUPPORTED,
               "ORT format: node '%s' has metadata ('%s'): the format has no per-node metadata", node_name(n),
               n->metadata[0].key);
        return 0;
    }
    const pc_op_schema *s = node_schema(c, n);
    if (!s) return 0;
    /* implicit inputs: only a node holding subgraphs has any */
    bool holds = false;
    for (uint32_t a = 0; a < n->n_attrs; a++)
        holds |= n->attrs[a].type == PC_ATTR_GRAPH || n->attrs[a].type == PC_ATTR_GRAPHS;
    const char **implicit = holds ? malloc(MAX_IMPLICIT * sizeof *implicit) : NULL;
    if (holds && !implicit) {
        w_fail(w, PC_ERR_NOMEM, "ORT format: out of memory%s%s", NULL, NULL);
        return 0;
    }
    uint32_t n_implicit = 0;
    bool fits = true;
    for (uint32_t a = 0; a < n->n_attrs && fits; a++) {
        if (n->attrs[a].type == PC_ATTR_GRAPH)
            fits = collect_implicit(n->attrs[a].g, n->attrs[a].g, implicit, &n_implicit, MAX_IMPLICIT);
        for (size_t j = 0; n->attrs[a].type == PC_ATTR_GRAPHS && j < n->attrs[a].n && fits; j++)
            fits = collect_implicit(n->attrs[a].graphs[j], n->attrs[a].graphs[j], implicit, &n_implicit,
                                    MAX_IMPLICIT);
    }
    if (!fits) {
        free(implicit);
        w_fail(w, PC_ERR_BUDGET,
               "ORT format: node '%s': its subgraphs read more than 4096 enclosing values%s", node_name(n),
               NULL);
        return 0;
    }
    tbuild tb = {.n = 0};
    int name = n->name ? t_ref(&tb, 0) : -1, doc = n->doc_string ? t_ref(&tb, 1) : -1;
    int dom = t_ref(&tb, 2);
    t_scalar(&tb, 3, 4, (uint64_t)(uint32_t)s->since_version);
    t_scalar(&tb, 4, 4, index);
    int op = t_ref(&tb, 5), ep = n->ep ? t_ref(&tb, 7) : -1, ins = t_ref(&tb, 8), outs = t_ref(&tb, 9);
    /* ONNX Runtime reads inputs, outputs, attributes, input_arg_counts and implicit_inputs as vectors that
     * must be there, empty or not */
    int attrs = t_ref(&tb, 10), counts = t_ref(&tb, 11), imp = t_ref(&tb, 12);
    size_t at = t_write(w, &tb);
    if (name >= 0) ref_string(w, tb.slot[name], n->name);
    if (doc >= 0) ref_string(w, tb.slot[doc], n->doc_string);
    ref_string(w, tb.slot[dom], n->domain);
    ref_string(w, tb.slot[op], n->op_type);
    if (ep >= 0) ref_string(w, tb.slot[ep], n->ep);
    size_t v = w_refvec(w, n->n_inputs);
    patch(w, tb.slot[ins], v);
    for (uint32_t i = 0; i < n->n_inputs; i++)
        patch(w, v + 4 + 4 * (size_t)i,
              w_string(w, n->inputs[i] ? n->inputs[i]->name : "",
                       n->inputs[i] ? strlen(n->inputs[i]->name) : 0));
    patch(w, tb.slot[outs], v = w_refvec(w, n->n_outputs));
    for (uint32_t i = 0; i < n->n_outputs; i++)
        patch(w, v + 4 + 4 * (size_t)i,
              w_string(w, n->outputs[i] ? n->outputs[i]->name : "",
                       n->outputs[i] ? strlen(n->outputs[i]->name) : 0));
    patch(w, tb.slot[attrs], v = w_refvec(w, n->n_attrs));
    for (uint32_t i = 0; i < n->n_attrs && w_ok(w); i++)
        patch(w, v + 4 + 4 * (size_t)i, w_attr(c, n, &n->attrs[i]));
    /* input_arg_counts: per formal input, 1 when the node has an argument there; the variadic last one takes
     * the rest */
    int32_t cnt[256];
    size_t n_formal = s->n_formal_inputs < 256 ? s->n_formal_inputs : 256;
    for (size_t f = 0; f < n_formal; f++) {
        bool last_variadic = f + 1 == n_formal && s->max_inputs == PC_SCHEMA_VARIADIC;
        int64_t rest = (int64_t)n->n_inputs - (int64_t)f;
        cnt[f] = rest <= 0 ? 0 : last_variadic ? (int32_t)rest : 1;
    }
    patch(w, tb.slot[counts], w_vec(w, cnt, n_formal, 4));
    patch(w, tb.slot[imp], v = w_refvec(w, n_implicit));
    for (uint32_t i = 0; i < n_implicit; i++)
        patch(w, v + 4 + 4 * (size_t)i, w_string(w, implicit[i], strlen(implicit[i])));
    free(implicit);
    return at;
}

static int end_cmp(const void *pa, const void *pb)
{
    const uint32_t *a = pa, *b = pb;
    for (int i = 0; i < 3; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* EdgeEnd vectors of node n: inputs from nodes of g, outputs to nodes of g; pos gives each node's index by
 * node id. */
static size_t w_edges(save_ctx *c, const pc_graph *g, const uint32_t *pos, const pc_node *n, bool output,
                      uint32_t *count)
{
    fbw *w = &c->w;
    uint32_t k = 0;
    if (!output) {
        for (uint32_t i = 0; i < n->n_inputs; i++)
            k += edge_from(n->inputs[i], g);
    } else {
        for (uint32_t o = 0; o < n->n_outputs; o++)
            for (uint32_t u = 0; n->outputs[o] && u < n->outputs[o]->n_consumers; u++)
                k += n->outputs[o]->consumers[u].node->graph == g;
    }
    *count = k;
    if (!k) return 0;
    size_t at = w_reserve(w, 4 + 12 * (size_t)k, 4, 0), e = at + 4;
    put(w, at, k, 4);
    if (!output) {
        for (uint32_t i = 0; i < n->n_inputs; i++) {
            const pc_value *v = n->inputs[i];
            if (!edge_from(v, g)) continue;
            put(w, e, pos[v->producer->id], 4);
            put(w, e + 4, v->producer_output, 4);
            put(w, e + 8, i, 4);
            e += 12;
        }
    } else {
        /* in (output, consumer index, input) order: the IR's consumer lists are in no canonical order (a pass
         * appends uses as it rewires), and the same model must give the same bytes */
        uint32_t(*ends)[3] = malloc((size_t)k * sizeof *ends), m = 0;
        if (!ends) {
            w_fail(w, PC_ERR_NOMEM, "ORT format: out of memory%s%s", NULL, NULL);
            return at;
        }
        for (uint32_t o = 0; o < n->n_outputs; o++)
            for (uint32_t u = 0; n->outputs[o] && u < n->outputs[o]->n_consumers; u++) {
                const pc_use *use = &n->outputs[o]->consumers[u];
                if (use->node->graph != g) continue;
                ends[m][0] = o;
                ends[m][1] = pos[use->node->id];
                ends[m][2] = use->index;
                m++;
            }
        qsort(ends, m, sizeof *ends, end_cmp);
        for (uint32_t i = 0; i < m; i++, e += 12) {
            put(w, e, ends[i][1], 4);
            put(w, e + 4, ends[i][0], 4);
            put(w, e + 8, ends[i][2], 4);
        }
        free(ends);
    }
    return at;
}

static size_t w_graph(save_ctx *c, const pc_graph *g)
{
    fbw *w = &c->w;
    if (g->n_opaque) {
        w_fail(w, PC_ERR_UNSUPPORTED, "ORT format: graph '%s' has %s the format cannot hold",
               g->name ? g->name : "", "sparse initializers or quantization annotations");
        return 0;
    }
    /* NodeArgs: every value the graph names, once, in order of first appearance */
    const pc_value **args = calloc(g->n_values ? g->n_values : 1, sizeof *args);
    uint8_t *seen = calloc(g->n_values ? g->n_values : 1, 1);
    if (!args || !seen) {
        free(args);
        free(seen);
        w_fail(w, PC_ERR_NOMEM, "ORT format: out of memory%s%s", NULL, NULL);
        return 0;
    }
    uint32_t n_args = 0;
#define ARG(v)                                                                                               \
    do {                                                                                                     \
        const pc_value *v_ = (v);                                                                            \
        if (v_ && v_->id < g->n_values && !seen[v_->id]) {                                                   \
            seen[v_->id] = 1;                                                                                \
            args[n_args++] = v_;                                                                             \
        }                                                                                                    \
    } while (0)
    for (uint32_t i = 0; i < g->n_inputs; i++)
        ARG(g->inputs[i]);
    for (uint32_t i = 0; i < g->n_initializers; i++)
        ARG(g->initializers[i]);
    for (const pc_node *n = g->first; n; n = n->next) /* Constant outputs are initializers in the file */
        if (is_constant(n)) ARG(n->outputs[0]);
    for (const pc_node *n = g->first; n; n = n->next) {
        for (uint32_t i = 0; i < n->n_inputs; i++)
            ARG(n->inputs[i]);
        for (uint32_t i = 0; i < n->n_outputs; i++)
            ARG(n->outputs[i]);
    }
    for (uint32_t i = 0; i < g->n_outputs; i++)
        ARG(g->outputs[i]);
#undef ARG
    free(seen);
    /* a missing optional argument is ONNX Runtime's NodeArg with an empty name (and no type) */
    bool empty = false;
    for (const pc_node *n = g->first; n && !empty; n = n->next) {
        for (uint32_t i = 0; i < n->n_inputs && !empty; i++)
            empty = !n->inputs[i];
        for (uint32_t i = 0; i < n->n_outputs && !empty; i++)
            empty = !n->outputs[i];
    }
    /* each node's index (its position among the nodes written, Constant nodes left out) by node id, for the
     * edges */
    uint32_t n_consts = 0, n_nodes = 0;
    uint32_t *pos = calloc(g->next_node_id ? g->next_node_id : 1, sizeof *pos);
    if (!pos) {
        free(args);
        w_fail(w, PC_ERR_NOMEM, "ORT format: out of memory%s%s", NULL, NULL);
        return 0;
    }
    for (const pc_node *n = g->first; n; n = n->next)
        if (is_constant(n))
            n_consts++;
        else
            pos[n->id] = n_nodes++;
    tbuild tb = {.n = 0};
    int inits = t_ref(&tb, 0), nargs = t_ref(&tb, 1), nodes = t_ref(&tb, 2);
    t_scalar(&tb, 3, 4, n_nodes);
    int edges = t_ref(&tb, 4), ins = t_ref(&tb, 5), outs = t_ref(&tb, 6);
    size_t at = t_write(w, &tb), v;
    patch(w, tb.slot[inits], v = w_refvec(w, g->n_initializers + n_consts));
    for (uint32_t i = 0; i < g->n_initializers && w_ok(w); i++)
        patch(w, v + 4 + 4 * (size_t)i, w_tensor(c, g->initializers[i]->initializer));
    uint32_t k = g->n_initializers;
    for (const pc_node *n = g->first; n && w_ok(w); n = n->next) {
        if (!is_constant(n)) continue;
        pc_tensor *t = NULL;
        pc_status st = pc_eval_node(n, NULL, 0, &t, UINT64_MAX, w->err);
        if (st != PC_OK) {
            w->st = st;
            pc_error_prefix(w->err, "ORT format: Constant '%s': ", n->outputs[0]->name);
            break;
        }
        t->name = n->outputs[0]->name;
        patch(w, v + 4 + 4 * (size_t)k++, w_tensor(c, t));
    }
    patch(w, tb.slot[nargs], v = w_refvec(w, n_args + empty));
    for (uint32_t i = 0; i < n_args && w_ok(w); i++)
        patch(w, v + 4 + 4 * (size_t)i, w_value_info(c, args[i]));
    free(args);
    if (empty) {
        tbuild eb = {.n = 0};
        int nm = t_ref(&eb, 0);
        patch(w, v + 4 + 4 * (size_t)n_args, t_write(w, &eb));
        ref_string(w, eb.slot[nm], "");
    }
    patch(w, tb.slot[nodes], v = w_refvec(w, n_nodes));
    uint32_t idx = 0;
    for (const pc_node *n = g->first; n && w_ok(w); n = n->next) {
        if (is_constant(n)) continue;
        patch(w, v + 4 + 4 * (size_t)idx, w_node(c, n, idx));
        idx++;
    }
    /* NodeEdges: one per node, as ONNX Runtime writes them */
    patch(w, tb.slot[edges], v = w_refvec(w, n_nodes));
    idx = 0;
    for (const pc_node *n = g->first; n && w_ok(w); n = n->next) {
        if (is_constant(n)) continue;
        tbuild eb = {.n = 0};
        t_scalar(&eb, 0, 4, idx);
        int ie = t_ref(&eb, 1), oe = t_ref(&eb, 2);
        patch(w, v + 4 + 4 * (size_t)idx, t_write(w, &eb));
        size_t iv = w_edges(c, g, pos, n, false, &k);
        if (!k) iv = w_vec(w, NULL, 0, 4);
        patch(w, eb.slot[ie], iv);
        size_t ov = w_edges(c, g, pos, n, true, &k);
        if (!k) ov = w_vec(w, NULL, 0, 4);
        patch(w, eb.slot[oe], ov);
        idx++;
    }
    patch(w, tb.slot[ins], v = w_refvec(w, g->n_inputs));
    for (uint32_t i = 0; i < g->n_inputs; i++)
        patch(w, v + 4 + 4 * (size_t)i, w_string(w, g->inputs[i]->name, strlen(g->inputs[i]->name)));
    patch(w, tb.slot[outs], v = w_refvec(w, g->n_outputs));
    for (uint32_t i = 0; i < g->n_outputs; i++)
        patch(w, v + 4 + 4 * (size_t)i, w_string(w, g->outputs[i]->name, strlen(g->outputs[i]->name)));
    free(pos);
    return at;
}

static int op_cmp(const void *pa, const void *pb)
{
    return strcmp(((const op_entry *)pa)->id, ((const op_entry *)pb)->id);
}

/* KernelTypeStrResolver: per op_id (sorted), per type string (sorted), the formal inputs then outputs that
 * bind it. */
static size_t w_resolver(save_ctx *c)
{
    fbw *w = &c->w;
    if (c->n_ops > 1) qsort(c->ops, c->n_ops, sizeof *c->ops, op_cmp);
    tbuild rb = {.n = 0};
    int list = t_ref(&rb, 0);
    size_t at = t_write(w, &rb), v;
    patch(w, rb.slot[list], v = w_refvec(w, c->n_ops));
    for (size_t i = 0; i < c->n_ops && w_ok(w); i++) {
        const pc_op_schema *s = c->ops[i].schema;
        size_t nf = (size_t)s->n_formal_inputs + s->n_formal_outputs;
        /* the distinct type strings, sorted */
        const char *keys[64];
        size_t nk = 0;
        for (size_t f = 0; f < nf; f++) {
            const char *k = s->formals[f].type_str;
            bool seen = false;
            for (size_t j = 0; j < nk && !seen; j++)
                seen = strcmp(keys[j], k) == 0;
            if (!seen && nk < 64) keys[nk++] = k;
        }
        for (size_t a = 1; a < nk; a++)
            for (size_t b = a; b > 0 && strcmp(keys[b - 1], keys[b]) > 0; b--) {
                const char *t = keys[b];
                keys[b] = keys[b - 1];
                keys[b - 1] = t;
            }
        tbuild ob = {.n = 0};
        int id = t_ref(&ob, 0), args = t_ref(&ob, 1);
        patch(w, v + 4 + 4 * i, t_write(w, &ob));
        ref_string(w, ob.slot[id], c->ops[i].id);
        size_t kv = w_refvec(w, nk);
        patch(w, ob.slot[args], kv);
        for (size_t j = 0; j < nk && w_ok(w); j++) {
            tbuild kb = {.n = 0};
            int ks = t_ref(&kb, 0), al = t_ref(&kb, 1);
            patch(w, kv + 4 + 4 * j, t_write(w, &kb));
            ref_string(w, kb.slot[ks], keys[j]);
            size_t n_args = 0;
            for (size_t f = 0; f < nf; f++)
                n_args += strcmp(s->formals[f].type_str, keys[j]) == 0;
            size_t av = w_refvec(w, n_args), q = 0;
            patch(w, kb.slot[al], av);
            for (size_t f = 0; f < nf && w_ok(w); f++) {
                if (strcmp(s->formals[f].type_str, keys[j]) != 0) continue;
                bool out = f >= s->n_formal_inputs;
                tbuild ab = {.n = 0};
                t_scalar(&ab, 0, 1, out);
                t_scalar(&ab, 1, 4, out ? f - s->n_formal_inputs : f);
                patch(w, av + 4 + 4 * q++, t_write(w, &ab));
            }
        }
    }
    return at;
}

static void check_model(save_ctx *c)
{
    const pc_model *m = c->m;
    if (m->n_opaque || m->n_functions)
        w_fail(&c->w, PC_ERR_UNSUPPORTED, "ORT format: the model has %s the format cannot hold%s",
               "model-local functions or training info", NULL);
}

static pc_status save_typed(const pc_model *model, uint8_t **out, size_t *out_size, pc_error *err);

/* Every NodeArg of an ORT file has a type: the model is saved from a copy with shapes inferred (declared
 * types win where both are known), so intermediate values the ONNX file left untyped get theirs; the copy is
 * verified again, so what is written loads back. */
pc_status pc_model_save_ort_bytes(const pc_model *model, uint8_t **out, size_t *out_size, pc_error *err)
{
    pc_error local;
    if (!err) err = &local;
    *out = NULL;
    *out_size = 0;
    pc_model *typed = NULL;
    pc_status st = pc_model_clone(model, &typed, err);
    if (st == PC_OK && (st = pc_graph_infer_shapes(typed->graph, err)) != PC_OK && st != PC_ERR_NOMEM) {
        /* the NodeArg types cannot be derived: a model whose declared types contradict its ops (the loader's
         * checks do not run shape inference) cannot be written typed */
        pc_error_prefix(err, "ORT format: shape inference, needed to type every NodeArg, fails: ");
        st = err->status = PC_ERR_UNSUPPORTED;
    }
    /* the types inferred are written, and a reader checks ops against them: a model whose untyped values
     * hide a type error (an Add of a value inference finds to be a string) would be written as a file that
     * does not load. The typed copy must pass the verifier the loader runs. */
    if (st == PC_OK && (st = pc_model_verify(typed, err)) != PC_OK && st != PC_ERR_NOMEM) {
        pc_error_prefix(err, "ORT format: the types shape inference gives break the model's ops: ");
        st = err->status = PC_ERR_UNSUPPORTED;
    }
    if (st == PC_OK) st = save_typed(typed, out, out_size, err);
    pc_model_free(typed);
    return st;
}

static pc_status save_typed(const pc_model *model, uint8_t **out, size_t *out_size, pc_error *err)
{
    save_ctx c = {.w = {.err = err, .st = PC_OK}, .m = model};
    fbw *w = &c.w;
    check_model(&c);
    size_t header = w_reserve(w, 8, 4, 0);
    if (w_ok(w)) memcpy(w->b + header + 4, "ORTM", 4);
    tbuild sb = {.n = 0};
    int version = t_ref(&sb, 0), mref = t_ref(&sb, 1), resolver = t_ref(&sb, 3);
    size_t root = t_write(w, &sb);
    patch(w, header, root);
    ref_string(w, sb.slot[version], "6");
    /* Model */
    tbuild mb = {.n = 0};
    t_scalar(&mb, 0, 8, (uint64_t)model->ir_version);
    int ops = t_ref(&mb, 1);
    int prod = model->producer_name ? t_ref(&mb, 2) : -1, pver = model->producer_version ? t_ref(&mb, 3) : -1;
    int dom = model->domain ? t_ref(&mb, 4) : -1;
    t_scalar(&mb, 5, 8, (uint64_t)model->model_version);
    int doc = model->doc_string ? t_ref(&mb, 6) : -1, graph = t_ref(&mb, 7);
    int gdoc = model->graph->doc_string ? t_ref(&mb, 8) : -1, props = model->n_metadata ? t_ref(&mb, 9) : -1;
    size_t mt = t_write(w, &mb), v;
    patch(w, sb.slot[mref], mt);
    patch(w, mb.slot[ops], v = w_refvec(w, model->n_opsets));
    for (uint32_t i = 0; i < model->n_opsets && w_ok(w); i++) {
        tbuild ob = {.n = 0};
        int d = t_ref(&ob, 0);
        t_scalar(&ob, 1, 8, (uint64_t)model->opsets[i].version);
        patch(w, v + 4 + 4 * (size_t)i, t_write(w, &ob));
        ref_string(w, ob.slot[d], model->opsets[i].domain);
    }
    if (prod >= 0) ref_string(w, mb.slot[prod], model->producer_name);
    if (pver >= 0) ref_string(w, mb.slot[pver], model->producer_version);
    if (dom >= 0) ref_string(w, mb.slot[dom], model->domain);
    if (doc >= 0) ref_string(w, mb.slot[doc], model->doc_string);
    patch(w, mb.slot[graph], w_graph(&c, model->graph));
    if (gdoc >= 0) ref_string(w, mb.slot[gdoc], model->graph->doc_string);
    if (props >= 0) {
        patch(w, mb.slot[props], v = w_refvec(w, model->n_metadata));
        for (uint32_t i = 0; i < model->n_metadata && w_ok(w); i++) {
            tbuild kb = {.n = 0};
            int k = t_ref(&kb, 0), val = t_ref(&kb, 1);
            patch(w, v + 4 + 4 * (size_t)i, t_write(w, &kb));
            ref_string(w, kb.slot[k], model->metadata[i].key);
            ref_string(w, kb.slot[val], model->metadata[i].value);
        }
    }
    patch(w, sb.slot[resolver], w_resolver(&c));
    for (size_t i = 0; i < c.n_ops; i++)
        free(c.ops[i].id);
    free(c.ops);
    if (!w_ok(w)) {
        free(w->b);
        return w->st;
    }
    *out = w->b;
    *out_size = w->len;
    return PC_OK;
}

pc_status pc_model_save_ort_file(const pc_model *model, const char *path, pc_error *err)
{
    uint8_t *buf;
    size_t size;
    pc_status st = pc_model_save_ort_bytes(model, &buf, &size, err);
    if (st != PC_OK) return st;
    st = pc_file_write_atomic_bytes(path, PC_FILE_EXCLUSIVE, buf, size, err);
    free(buf);
    return st;
}
