/* onnx_builder.h — header-only helpers for building ONNX models in tests with the protobuf-c structs of
 * build/gen/onnx.pb-c.h, and a tiny protobuf wire writer for inputs that the structs cannot express (overlong
 * varints, bad keys, embedded NULs, deep nesting).
 *
 * Every object is allocated from an ob_pool and freed with it, so a test builds a model, mutates any field
 * directly, packs it and frees the pool:
 *
 *     ob_pool p = {0};
 *     Onnx__ModelProto *m = ob_model(&p, 8);
 *     ob_opset(&p, m, "", 13);
 *     Onnx__GraphProto *g = ob_graph(&p, m, "main");
 *     const int64_t dims[] = {2, 3};
 *     ob_graph_input(&p, g, "x", ob_tensor_type(&p, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dims));
 *     Onnx__NodeProto *n = ob_node(&p, g, "Relu", "r", 1, (const char *[]){"x"}, 1, (const char *[]){"y"});
 *     ob_graph_output(&p, g, "y", NULL);
 *     size_t size;
 *     uint8_t *bytes = ob_pack(&p, &m->base, &size);   // owned by the pool
 *     ...
 *     ob_pool_free(&p);
 *
 * Allocation failure aborts the test (these are test fixtures, not code under test). All functions are
 * `static` so several test files can include this header. */
#ifndef PC_TEST_ONNX_BUILDER_H
#define PC_TEST_ONNX_BUILDER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

/* ---- pool ---------------------------------------------------------------------------------------------- */

typedef struct ob_pool {
    void **ptrs;
    size_t n, cap;
} ob_pool;

static inline void ob_die(const char *what)
{
    fprintf(stderr, "onnx_builder: out of memory (%s)\n", what);
    abort();
}

/* Zeroed memory owned by the pool. */
static inline void *ob_alloc(ob_pool *p, size_t size)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        void **ptrs = realloc(p->ptrs, cap * sizeof *ptrs);
        if (!ptrs) ob_die("pool");
        p->ptrs = ptrs;
        p->cap = cap;
    }
    void *mem = calloc(1, size ? size : 1);
    if (!mem) ob_die("object");
    p->ptrs[p->n++] = mem;
    return mem;
}

static inline void ob_pool_free(ob_pool *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->ptrs[i]);
    free(p->ptrs);
    p->ptrs = NULL;
    p->n = p->cap = 0;
}

static inline char *ob_strdup(ob_pool *p, const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = ob_alloc(p, n);
    memcpy(d, s, n);
    return d;
}

static inline void *ob_memdup(ob_pool *p, const void *src, size_t n)
{
    void *d = ob_alloc(p, n);
    if (n) memcpy(d, src, n);
    return d;
}

/* A copy of `old` (n elements of elem_size bytes) with room for one more. The old array stays in the pool. */
static inline void *ob_grow(ob_pool *p, const void *old, size_t n, size_t elem_size)
{
    void *d = ob_alloc(p, (n + 1) * elem_size);
    if (n) memcpy(d, old, n * elem_size);
    return d;
}

/* Appends `item` to a protobuf-c repeated field given as its array and count, e.g.
 * OB_APPEND(p, g->node, g->n_node, node) or OB_APPEND(p, t->dims, t->n_dims, 4). */
#define OB_APPEND(pool, arr, n, item)                                                                        \
    do {                                                                                                     \
        (arr) = ob_grow((pool), (arr), (n), sizeof *(arr));                                                  \
        (arr)[(n)++] = (item);                                                                               \
    } while (0)

/* ---- messages ------------------------------------------------------------------------------------------ */

static inline Onnx__ModelProto *ob_model(ob_pool *p, int64_t ir_version)
{
    Onnx__ModelProto *m = ob_alloc(p, sizeof *m);
    onnx__model_proto__init(m);
    m->has_ir_version = 1;
    m->ir_version = ir_version;
    return m;
}

static inline Onnx__OperatorSetIdProto *ob_opset(ob_pool *p, Onnx__ModelProto *m, const char *domain,
                                                 int64_t version)
{
    Onnx__OperatorSetIdProto *o = ob_alloc(p, sizeof *o);
    onnx__operator_set_id_proto__init(o);
    o->domain = ob_strdup(p, domain);
    o->has_version = 1;
    o->version = version;
    OB_APPEND(p, m->opset_import, m->n_opset_import, o);
    return o;
}

/* A graph; attached as the model's main graph when m is non-NULL. */
static inline Onnx__GraphProto *ob_graph(ob_pool *p, Onnx__ModelProto *m, const char *name)
{
    Onnx__GraphProto *g = ob_alloc(p, sizeof *g);
    onnx__graph_proto__init(g);
    g->name = ob_strdup(p, name);
    if (m) m->graph = g;
    return g;
}

static inline Onnx__TensorShapeProto *ob_shape(ob_pool *p, size_t rank, const int64_t *dims)
{
    Onnx__TensorShapeProto *s = ob_alloc(p, sizeof *s);
    onnx__tensor_shape_proto__init(s);
    for (size_t i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = ob_alloc(p, sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = dims[i];
        OB_APPEND(p, s->dim, s->n_dim, d);
    }
    return s;
}

/* Tensor type; dims may be NULL with rank 0 (a scalar). rank < 0: no shape at all. */
static inline Onnx__TypeProto *ob_tensor_type(ob_pool *p, int32_t elem_type, int rank, const int64_t *dims)
{
    Onnx__TypeProto__Tensor *tt = ob_alloc(p, sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = elem_type;
    if (rank >= 0) tt->shape = ob_shape(p, (size_t)rank, dims);
    Onnx__TypeProto *t = ob_alloc(p, sizeof *t);
    onnx__type_proto__init(t);
    t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    t->tensor_type = tt;
    return t;
}

static inline Onnx__TypeProto *ob_sequence_type(ob_pool *p, Onnx__TypeProto *elem)
{
    Onnx__TypeProto__Sequence *s = ob_alloc(p, sizeof *s);
    onnx__type_proto__sequence__init(s);
    s->elem_type = elem;
    Onnx__TypeProto *t = ob_alloc(p, sizeof *t);
    onnx__type_proto__init(t);
    t->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
    t->sequence_type = s;
    return t;
}

static inline Onnx__TypeProto *ob_map_type(ob_pool *p, int32_t key_type, Onnx__TypeProto *value)
{
    Onnx__TypeProto__Map *mt = ob_alloc(p, sizeof *mt);
    onnx__type_proto__map__init(mt);
    mt->has_key_type = 1;
    mt->key_type = key_type;
    mt->value_type = value;
    Onnx__TypeProto *t = ob_alloc(p, sizeof *t);
    onnx__type_proto__init(t);
    t->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
    t->map_type = mt;
    return t;
}

static inline Onnx__ValueInfoProto *ob_value_info(ob_pool *p, const char *name, Onnx__TypeProto *type)
{
    Onnx__ValueInfoProto *v = ob_alloc(p, sizeof *v);
    onnx__value_info_proto__init(v);
    v->name = ob_strdup(p, name);
    v->type = type;
    return v;
}

static inline Onnx__ValueInfoProto *ob_graph_input(ob_pool *p, Onnx__GraphProto *g, const char *name,
                                                   Onnx__TypeProto *type)
{
    Onnx__ValueInfoProto *v = ob_value_info(p, name, type);
    OB_APPEND(p, g->input, g->n_input, v);
    return v;
}

static inline Onnx__ValueInfoProto *ob_graph_output(ob_pool *p, Onnx__GraphProto *g, const char *name,
                                                    Onnx__TypeProto *type)
{
    Onnx__ValueInfoProto *v = ob_value_info(p, name, type);
    OB_APPEND(p, g->output, g->n_output, v);
    return v;
}

static inline Onnx__ValueInfoProto *ob_graph_value_info(ob_pool *p, Onnx__GraphProto *g, const char *name,
                                                        Onnx__TypeProto *type)
{
    Onnx__ValueInfoProto *v = ob_value_info(p, name, type);
    OB_APPEND(p, g->value_info, g->n_value_info, v);
    return v;
}

/* A tensor with data_type and dims and no data (set one of the data fields with the helpers below). */
static inline Onnx__TensorProto *ob_tensor(ob_pool *p, const char *name, int32_t data_type, size_t rank,
                                           const int64_t *dims)
{
    Onnx__TensorProto *t = ob_alloc(p, sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = ob_strdup(p, name);
    t->has_data_type = 1;
    t->data_type = data_type;
    if (rank) t->dims = ob_memdup(p, dims, rank * sizeof *dims);
    t->n_dims = rank;
    return t;
}

static inline void ob_tensor_set_floats(ob_pool *p, Onnx__TensorProto *t, size_t n, const float *values)
{
    t->float_data = ob_memdup(p, values, n * sizeof *values);
    t->n_float_data = n;
}

static inline void ob_tensor_set_int64s(ob_pool *p, Onnx__TensorProto *t, size_t n, const int64_t *values)
{
    t->int64_data = ob_memdup(p, values, n * sizeof *values);
    t->n_int64_data = n;
}

static inline void ob_tensor_set_raw(ob_pool *p, Onnx__TensorProto *t, size_t n, const void *bytes)
{
    t->has_raw_data = 1;
    t->raw_data.len = n;
    t->raw_data.data = ob_memdup(p, bytes, n);
}

/* A float tensor with float_data; appended to g's initializers when g is non-NULL. */
static inline Onnx__TensorProto *ob_float_tensor(ob_pool *p, Onnx__GraphProto *g, const char *name,
                                                 size_t rank, const int64_t *dims, const float *values)
{
    Onnx__TensorProto *t = ob_tensor(p, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, rank, dims);
    size_t n = 1;
    for (size_t i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    ob_tensor_set_floats(p, t, n, values);
    if (g) OB_APPEND(p, g->initializer, g->n_initializer, t);
    return t;
}

static inline Onnx__StringStringEntryProto *ob_kv(ob_pool *p, const char *key, const char *value)
{
    Onnx__StringStringEntryProto *kv = ob_alloc(p, sizeof *kv);
    onnx__string_string_entry_proto__init(kv);
    kv->key = ob_strdup(p, key);
    kv->value = ob_strdup(p, value);
    return kv;
}

/* A node appended to g (when g is non-NULL). NULL or "" names in inputs mean an omitted optional input. */
static inline Onnx__NodeProto *ob_node(ob_pool *p, Onnx__GraphProto *g, const char *op_type, const char *name,
                                       size_t n_in, const char *const *inputs, size_t n_out,
                                       const char *const *outputs)
{
    Onnx__NodeProto *n = ob_alloc(p, sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = ob_strdup(p, op_type);
    n->name = ob_strdup(p, name);
    for (size_t i = 0; i < n_in; i++)
        OB_APPEND(p, n->input, n->n_input, ob_strdup(p, inputs[i] ? inputs[i] : ""));
    for (size_t i = 0; i < n_out; i++)
        OB_APPEND(p, n->output, n->n_output, ob_strdup(p, outputs[i] ? outputs[i] : ""));
    if (g) OB_APPEND(p, g->node, g->n_node, n);
    return n;
}

static inline void ob_node_add_input(ob_pool *p, Onnx__NodeProto *n, const char *name)
{
    OB_APPEND(p, n->input, n->n_input, ob_strdup(p, name));
}

/* An attribute with only its name (and type) set; fill the value field(s) directly or use the helpers. */
static inline Onnx__AttributeProto *ob_attr(ob_pool *p, Onnx__NodeProto *n, const char *name, int type)
{
    Onnx__AttributeProto *a = ob_alloc(p, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = ob_strdup(p, name);
    a->has_type = 1;
    a->type = (Onnx__AttributeProto__AttributeType)type;
    if (n) OB_APPEND(p, n->attribute, n->n_attribute, a);
    return a;
}

static inline Onnx__AttributeProto *ob_attr_int(ob_pool *p, Onnx__NodeProto *n, const char *name,
                                                int64_t value)
{
    Onnx__AttributeProto *a = ob_attr(p, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = value;
    return a;
}

static inline Onnx__AttributeProto *ob_attr_float(ob_pool *p, Onnx__NodeProto *n, const char *name,
                                                  float value)
{
    Onnx__AttributeProto *a = ob_attr(p, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = 1;
    a->f = value;
    return a;
}

static inline Onnx__AttributeProto *ob_attr_ints(ob_pool *p, Onnx__NodeProto *n, const char *name,
                                                 size_t count, const int64_t *values)
{
    Onnx__AttributeProto *a = ob_attr(p, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->ints = ob_memdup(p, values, count * sizeof *values);
    a->n_ints = count;
    return a;
}

static inline Onnx__AttributeProto *ob_attr_graph(ob_pool *p, Onnx__NodeProto *n, const char *name,
                                                  Onnx__GraphProto *g)
{
    Onnx__AttributeProto *a = ob_attr(p, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    a->g = g;
    return a;
}

/* A model-local function `domain`.`name`(inputs) -> outputs with an empty body and an ai.onnx opset import;
 * add body nodes with ob_function_node. Appended to m's functions when m is non-NULL. */
static inline Onnx__FunctionProto *ob_function(ob_pool *p, Onnx__ModelProto *m, const char *domain,
                                               const char *name, size_t n_in, const char *const *inputs,
                                               size_t n_out, const char *const *outputs, int64_t onnx_opset)
{
    Onnx__FunctionProto *f = ob_alloc(p, sizeof *f);
    onnx__function_proto__init(f);
    f->domain = ob_strdup(p, domain);
    f->name = ob_strdup(p, name);
    for (size_t i = 0; i < n_in; i++)
        OB_APPEND(p, f->input, f->n_input, ob_strdup(p, inputs[i]));
    for (size_t i = 0; i < n_out; i++)
        OB_APPEND(p, f->output, f->n_output, ob_strdup(p, outputs[i]));
    Onnx__OperatorSetIdProto *o = ob_alloc(p, sizeof *o);
    onnx__operator_set_id_proto__init(o);
    o->domain = ob_strdup(p, "");
    o->has_version = 1;
    o->version = onnx_opset;
    OB_APPEND(p, f->opset_import, f->n_opset_import, o);
    if (m) OB_APPEND(p, m->functions, m->n_functions, f);
    return f;
}

static inline Onnx__NodeProto *ob_function_node(ob_pool *p, Onnx__FunctionProto *f, const char *domain,
                                                const char *op_type, const char *name, size_t n_in,
                                                const char *const *inputs, size_t n_out,
                                                const char *const *outputs)
{
    Onnx__NodeProto *n = ob_node(p, NULL, op_type, name, n_in, inputs, n_out, outputs);
    n->domain = ob_strdup(p, domain);
    OB_APPEND(p, f->node, f->n_node, n);
    return n;
}

/* Serializes any message; the bytes belong to the pool. */
static inline uint8_t *ob_pack(ob_pool *p, const ProtobufCMessage *msg, size_t *size)
{
    size_t n = protobuf_c_message_get_packed_size(msg);
    uint8_t *buf = ob_alloc(p, n);
    size_t written = protobuf_c_message_pack(msg, buf);
    if (written != n) {
        fprintf(stderr, "onnx_builder: packed %zu bytes, expected %zu\n", written, n);
        abort();
    }
    *size = n;
    return buf;
}

/* ---- raw wire writer ----------------------------------------------------------------------------------- */

enum { OB_WT_VARINT = 0, OB_WT_FIXED64 = 1, OB_WT_LEN = 2, OB_WT_FIXED32 = 5 };

/* A growable byte buffer (malloc'ed; ob_buf_free it). */
typedef struct ob_buf {
    uint8_t *d;
    size_t n, cap;
} ob_buf;

static inline void ob_buf_reserve(ob_buf *b, size_t extra)
{
    if (b->n + extra <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + extra)
        cap *= 2;
    uint8_t *d = realloc(b->d, cap);
    if (!d) ob_die("buffer");
    b->d = d;
    b->cap = cap;
}

static inline void ob_buf_raw(ob_buf *b, const void *src, size_t n)
{
    ob_buf_reserve(b, n);
    if (n) memcpy(b->d + b->n, src, n);
    b->n += n;
}

static inline void ob_buf_byte(ob_buf *b, uint8_t v)
{
    ob_buf_raw(b, &v, 1);
}

static inline void ob_buf_varint(ob_buf *b, uint64_t v)
{
    while (v >= 0x80) {
        ob_buf_byte(b, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    ob_buf_byte(b, (uint8_t)v);
}

static inline size_t ob_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline void ob_buf_key(ob_buf *b, uint32_t field, unsigned wire_type)
{
    ob_buf_varint(b, (uint64_t)field << 3 | wire_type);
}

static inline void ob_buf_uint(ob_buf *b, uint32_t field, uint64_t v)
{
    ob_buf_key(b, field, OB_WT_VARINT);
    ob_buf_varint(b, v);
}

static inline void ob_buf_len(ob_buf *b, uint32_t field, const void *payload, size_t n)
{
    ob_buf_key(b, field, OB_WT_LEN);
    ob_buf_varint(b, n);
    ob_buf_raw(b, payload, n);
}

static inline void ob_buf_str(ob_buf *b, uint32_t field, const char *s)
{
    ob_buf_len(b, field, s, strlen(s));
}

static inline void ob_buf_free(ob_buf *b)
{
    free(b->d);
    b->d = NULL;
    b->n = b->cap = 0;
}

#endif
