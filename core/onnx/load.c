/* ONNX loader: bytes -> pre-scan -> budgeted protobuf-c unpack -> validated IR.
 *
 * Order matters: the wire pre-scan runs before protobuf-c ever sees the bytes (protobuf-c has no recursion
 * limit and amplifies empty sub-messages ~124x), and every enum, size and name is checked while converting,
 * so the IR can assume a valid model afterwards. Tensor payloads in raw_data are adopted from the unpacked
 * message (the only copy of the bytes made after reading the file). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/onnx/onnx_internal.h"
#include "core/ort/ort_internal.h"
#include "core/ir/ir_internal.h"
#include "core/base/strmap.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "passcheck stores tensor data in ONNX's little-endian raw form and assumes a little-endian host"
#endif

enum { N_RECENT = 64 };

/* ---- streamed elements
 * ---------------------------------------------------------------------------------------- The main graph's
 * nodes (and value_info entries) are the bulk of a large model. Unpacking the whole model first parks a
 * protobuf-c struct tree per element (~300 bytes a node) in fresh memory that conversion then reads back from
 * DRAM. Instead each element of the main graph is unpacked by protobuf-c from its own bytes (the very call
 * protobuf-c makes for each element of a repeated message field) just before conversion, STREAM_BATCH at a
 * time, into an allocator whose memory is recycled from batch to batch and so stays in cache. A batch holding
 * a node pass B still needs is kept. */
enum { STREAM_BATCH = 128 };

typedef struct pb_slice {
    const uint8_t *data;
    size_t len;
} pb_slice;

typedef struct pb_batch {
    pc_pb_allocator alloc;
    struct pb_batch *next;
} pb_batch;

typedef struct pb_stream {
    const ProtobufCMessageDescriptor *desc;
    const pb_slice *items;
    size_t n;
    size_t first, count; /* items [first, first + count) are unpacked, in unpacked[] */
    ProtobufCMessage *unpacked[STREAM_BATCH];
    pb_batch *cur;  /* allocator of the current batch */
    bool keep;      /* the current batch holds an element that is still needed */
    pb_batch *kept; /* batches kept until conversion ends */
    pc_mem *mem;
} pb_stream;

typedef struct load_ctx {
    pc_model *model;
    const char *base_dir; /* NULL for in-memory models: external data is rejected */
    const pc_load_options *opts;
    pc_error *err;
    bool copy_failed;    /* a string copy failed: the load must not report success with a string missing */
    pc_pb_allocator *pb; /* owner of the unpacked message's blocks (raw_data buffers are taken from it) */
    pc_strmap *interned; /* op types, domains, dim symbols: one arena copy each (created on first use) */
    const char *empty;   /* the interned "" */
    const char *recent[N_RECENT];      /* interned strings by a cheap key of their text (see intern_str) */
    const Onnx__GraphProto *stream_gp; /* the main graph, when its nodes and value_info come in batches: */
    pb_stream *nodes, *value_infos;
} load_ctx;

static ProtobufCMessage *stream_at(load_ctx *c, pb_stream *s, size_t i);
static const ProtobufCMessage *stream_peek(const pb_stream *s, size_t i);

void pc_load_options_default(pc_load_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->max_file_bytes = (size_t)4 << 30;
    opts->memory_budget = (size_t)8 << 30;
    opts->max_depth = 64;
    opts->max_messages = 64u << 20;
    opts->allow_external_data = true;
}

static pc_status nomem(load_ctx *c, const char *what)
{
    return pc_model_alloc_error(c->model, c->err, what);
}

static const char *dup_str(load_ctx *c, const char *s)
{
    if (!s) return NULL;
    const char *d = pc_arena_strdup(&c->model->arena, s);
    if (!d) c->copy_failed = true;
    return d;
}

/* Writes "<what> '<name>'" to buf like snprintf would (cut to size - 1 characters), without snprintf's cost:
 * it runs for every value_info and initializer, and the text is only read when an error is reported. */
static void where_named(char *buf, size_t size, const char *what, const char *name)
{
    size_t used = 0;
    const char *parts[4] = {what, " '", name, "'"};
    for (int i = 0; i < 4 && used + 1 < size; i++) {
        size_t len = strlen(parts[i]);
        if (len > size - 1 - used) len = size - 1 - used;
        memcpy(buf + used, parts[i], len);
        used += len;
    }
    buf[used] = '\0';
}

/* convert_type and convert_kvs begin each message with "<where>: ". On hot paths they get where "" and the
 * context "<what> '<name>'" is put in front only of a message that has that slot (an out-of-memory message
 * has none), giving the same text as formatting it up front, for every value_info, would have. */
static pc_status error_context(pc_error *err, const char *what, const char *name, pc_status st)
{
    if (strncmp(err->message, ": ", 2) == 0) {
        char where[320];
        where_named(where, sizeof where, what, name);
        pc_error_prefix(err, "%s", where);
    }
    return st;
}

/* One arena copy per distinct string for the few strings that repeat on every node (op types, domains, dim
 * symbols): no copy per use, and the verifier's per-op lookups can compare pointers. */
static const char *intern_str(load_ctx *c, const char *s)
{
    if (!s) return NULL;
    pc_strmap *map = c->interned;
    if (!map) {
        map = pc_arena_alloc(&c->model->arena, sizeof *map);
        if (!map) {
            c->copy_failed = true;
            return NULL;
        }
        pc_strmap_init(map, &c->model->arena);
        c->interned = map;
    }
    size_t len = strlen(s);
    if (!len && c->empty) return c->empty; /* the default domain, on most nodes */
    /* a small direct-mapped cache in front of the map: a model uses a few dozen op types, each on many nodes
     */
    const char **hit =
        len ? &c->recent[(len * 31 + (unsigned char)s[0] * 7 + (unsigned char)s[len - 1]) % N_RECENT] : NULL;
    if (hit && *hit && strcmp(*hit, s) == 0) return *hit;
    const char *d = pc_strmap_get(map, s);
    if (d) {
        if (hit) *hit = d;
        return d;
    }
    d = pc_arena_strdup(&c->model->arena, s);
    if (!d || !pc_strmap_put(map, d, (void *)d)) {
        c->copy_failed = true;
        return NULL;
    }
    if (hit)
        *hit = d;
    else
        c->empty = d;
    return d;
}

static pc_status convert_kvs(load_ctx *c, size_t n, Onnx__StringStringEntryProto **in, uint32_t *n_out,
                             pc_kv **out, const char *where)
{
    *n_out = 0;
    *out = NULL;
    if (!n) return PC_OK;
    if (n > UINT32_MAX) return pc_error_set(c->err, PC_ERR_BUDGET, "%s: too many metadata entries", where);
    pc_kv *kv = pc_arena_array(&c->model->arena, n, sizeof *kv);
    if (!kv) return nomem(c, "metadata");
    for (size_t i = 0; i < n; i++) {
        if (!in[i]->key)
            return pc_error_set(c->err, PC_ERR_MISSING_FIELD, "%s: metadata entry %zu has no key", where, i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(kv[j].key, in[i]->key) == 0)
                return pc_error_set(c->err, PC_ERR_DUPLICATE_NAME, "%s: metadata key '%s' appears twice",
                                    where, in[i]->key);
        kv[i].key = dup_str(c, in[i]->key);
        kv[i].value = dup_str(c, in[i]->value ? in[i]->value : "");
        if (!kv[i].key || !kv[i].value) return nomem(c, "metadata");
    }
    *n_out = (uint32_t)n;
    *out = kv;
    return PC_OK;
}

/* Packs a sub-message to bytes so a field the IR does not model survives a round trip unchanged. */
static pc_status keep_opaque(load_ctx *c, uint32_t field_number, const ProtobufCMessage *msg, uint32_t *n,
                             pc_opaque_field **fields)
{
    size_t size = protobuf_c_message_get_packed_size(msg);
    uint8_t *buf = pc_arena_alloc(&c->model->arena, size ? size : 1);
    pc_opaque_field *nf = pc_arena_array(&c->model->arena, *n + 1u, sizeof *nf);
    if (!buf || !nf) return nomem(c, "an opaque field");
    protobuf_c_message_pack(msg, buf);
    if (*n) memcpy(nf, *fields, *n * sizeof *nf);
    nf[*n].field_number = field_number;
    nf[*n].bytes.len = size;
    nf[*n].bytes.data = buf;
    *fields = nf;
    (*n)++;
    return PC_OK;
}

/* ---- types
 * ------------------------------------------------------------------------------------------------- */

static pc_status convert_elem_type(load_ctx *c, bool has, int32_t value, pc_dtype *out, const char *where)
{
    if (!has || value == 0) {
        *out = PC_DTYPE_UNDEFINED; /* "not given" is legal in a type, unlike in a tensor */
        return PC_OK;
    }
    if (!pc_dtype_is_valid(value))
        return pc_error_set(c->err, PC_ERR_DTYPE, "%s: unknown element type %d", where, (int)value);
    *out = (pc_dtype)value;
    return PC_OK;
}

static pc_status convert_shape(load_ctx *c, const Onnx__TensorShapeProto *sp, pc_shape *out,
                               const char *where)
{
    out->rank = -1;
    out->dims = NULL;
    if (!sp) return PC_OK;
    if (sp->n_dim > PC_MAX_RANK)
        return pc_error_set(c->err, PC_ERR_BUDGET, "%s: rank %zu exceeds the limit of %d", where, sp->n_dim,
                            PC_MAX_RANK);
    out->rank = (int32_t)sp->n_dim;
    if (!sp->n_dim) return PC_OK;
    out->dims = pc_arena_array(&c->model->arena, sp->n_dim, sizeof(pc_dim));
    if (!out->dims) return nomem(c, "a shape");
    for (size_t i = 0; i < sp->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = sp->dim[i];
        pc_dim *o = &out->dims[i];
        o->denotation = dup_str(c, d->denotation);
        switch (d->value_case) {
        case ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE:
            if (d->dim_value < 0)
                return pc_error_set(c->err, PC_ERR_NEGATIVE_DIM, "%s: dimension %zu is negative (%lld)",
                                    where, i, (long long)d->dim_value);
            o->kind = PC_DIM_KNOWN;
            o->size = d->dim_value;
            break;
        case ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM:
            o->kind = PC_DIM_SYMBOLIC;
            o->symbol = intern_str(c, d->dim_param); /* symbols repeat on every value ("batch") */
            if (!o->symbol) return nomem(c, "a shape");
            break;
        default:
            o->kind = PC_DIM_UNKNOWN;
            break;
        }
    }
    return PC_OK;
}

static pc_status convert_type(load_ctx *c, const Onnx__TypeProto *tp, pc_type *out, const char *where)
{
    memset(out, 0, sizeof *out);
    out->shape.rank = -1;
    if (!tp) return PC_OK;
    out->denotation = dup_str(c, tp->denotation);
    const Onnx__TypeProto *inner = NULL;
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE__NOT_SET:
        out->kind = PC_TYPE_NONE;
        return PC_OK;
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: {
        out->kind = PC_TYPE_TENSOR;
        pc_status st = convert_elem_type(c, tp->tensor_type->has_elem_type, tp->tensor_type->elem_type,
                                         &out->elem, where);
        return st != PC_OK ? st : convert_shape(c, tp->tensor_type->shape, &out->shape, where);
    }
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: {
        out->kind = PC_TYPE_SPARSE_TENSOR;
        pc_status st = convert_elem_type(c, tp->sparse_tensor_type->has_elem_type,
                                         tp->sparse_tensor_type->elem_type, &out->elem, where);
        return st != PC_OK ? st : convert_shape(c, tp->sparse_tensor_type->shape, &out->shape, where);
    }
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        out->kind = PC_TYPE_SEQUENCE;
        inner = tp->sequence_type->elem_type;
        break;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        out->kind = PC_TYPE_OPTIONAL;
        inner = tp->optional_type->elem_type;
        break;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: {
        out->kind = PC_TYPE_MAP;
        int32_t k = tp->map_type->has_key_type ? tp->map_type->key_type : 0;
        bool integral_or_string = k == PC_DTYPE_STRING || k == PC_DTYPE_INT8 || k == PC_DTYPE_INT16 ||
                                  k == PC_DTYPE_INT32 || k == PC_DTYPE_INT64 || k == PC_DTYPE_UINT8 ||
                                  k == PC_DTYPE_UINT16 || k == PC_DTYPE_UINT32 || k == PC_DTYPE_UINT64;
        if (!integral_or_string)
            return pc_error_set(c->err, PC_ERR_TYPE, "%s: map key type %d is not an integer or string type",
                                where, (int)k);
        out->key = (pc_dtype)k;
        inner = tp->map_type->value_type;
        break;
    }
    case ONNX__TYPE_PROTO__VALUE_OPAQUE_TYPE:
        out->kind = PC_TYPE_OPAQUE;
        out->opaque_domain = dup_str(c, tp->opaque_type->domain);
        out->opaque_name = dup_str(c, tp->opaque_type->name);
        return PC_OK;
    default:
        return pc_error_set(c->err, PC_ERR_TYPE, "%s: unknown type kind %d", where, (int)tp->value_case);
    }
    if (inner) {
        out->inner = pc_arena_alloc(&c->model->arena, sizeof(pc_type));
        if (!out->inner) return nomem(c, "a type");
        pc_status st = convert_type(c, inner, out->inner, where);
        if (st != PC_OK) return st;
        /* An empty element type says nothing: treat it as absent, the form the saver writes (fuzz find
         * crash-dd3f5577...: otherwise a round trip changes the type). */
        if (out->inner->kind == PC_TYPE_NONE && !out->inner->denotation) out->inner = NULL;
    }
    return PC_OK;
}

/* ---- tensors
 * ----------------------------------------------------------------------------------------------- */

/* Which typed field carries which element types (ONNX IR.md, TensorProto). */
static bool field_carries(int field, pc_dtype t)
{
    switch (field) {
    case 4: /* float_data */
        return t == PC_DTYPE_FLOAT || t == PC_DTYPE_COMPLEX64;
    case 5: /* int32_data */
        return t == PC_DTYPE_INT32 || t == PC_DTYPE_INT16 || t == PC_DTYPE_INT8 || t == PC_DTYPE_UINT16 ||
               t == PC_DTYPE_UINT8 || t == PC_DTYPE_BOOL || t == PC_DTYPE_FLOAT16 || t == PC_DTYPE_BFLOAT16 ||
               (t >= PC_DTYPE_FLOAT8E4M3FN && t <= PC_DTYPE_FLOAT8E5M2FNUZ) || t == PC_DTYPE_FLOAT8E8M0;
    case 6: /* string_data */
        return t == PC_DTYPE_STRING;
    case 7: /* int64_data */
        return t == PC_DTYPE_INT64;
    case 10: /* double_data */
        return t == PC_DTYPE_DOUBLE || t == PC_DTYPE_COMPLEX128;
    case 11: /* uint64_data */
        return t == PC_DTYPE_UINT32 || t == PC_DTYPE_UINT64;
    }
    return false;
}

static const char *field_name(int field)
{
    switch (field) {
    case 4:
        return "float_data";
    case 5:
        return "int32_data";
    case 6:
        return "string_data";
    case 7:
        return "int64_data";
    case 9:
        return "raw_data";
    case 10:
        return "double_data";
    case 11:
        return "uint64_data";
    }
    return "?";
}

/* Converts a TensorProto. `where` names it in errors ("initializer 'w'", "attribute 'value' of node 'c'").
 * The proto's raw_data buffer is adopted (pointer moved, not copied) and cleared in the proto. */
static pc_status convert_tensor(load_ctx *c, Onnx__TensorProto *tp, pc_tensor **out, const char *where)
{
    pc_model *m = c->model;
    *out = NULL;
    if (!tp->has_data_type)
        return pc_error_set(c->err, PC_ERR_DTYPE, "%s: data_type is missing (UNDEFINED)", where);
    if (tp->data_type == 0) return pc_error_set(c->err, PC_ERR_DTYPE, "%s: data_type is UNDEFINED", where);
    if (!pc_dtype_is_valid(tp->data_type))
        return pc_error_set(c->err, PC_ERR_DTYPE, "%s: unknown data_type %d", where, (int)tp->data_type);
    pc_dtype dtype = (pc_dtype)tp->data_type;
    if (tp->segment)
        return pc_error_set(c->err, PC_ERR_UNSUPPORTED, "%s: segmented tensors are not supported", where);
    if (tp->n_dims > PC_MAX_RANK)
        return pc_error_set(c->err, PC_ERR_BUDGET, "%s: rank %zu exceeds the limit of %d", where, tp->n_dims,
                            PC_MAX_RANK);
    uint64_t count = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0)
            return pc_error_set(c->err, PC_ERR_NEGATIVE_DIM, "%s: dims[%zu] is negative (%lld)", where, i,
                                (long long)tp->dims[i]);
        if (!pc_u64_mul(count, (uint64_t)tp->dims[i], &count))
            return pc_error_set(c->err, PC_ERR_OVERFLOW, "%s: element count overflows 64 bits", where);
    }
    size_t need = 0;
    if (dtype == PC_DTYPE_STRING) {
        if (count > SIZE_MAX / sizeof(pc_bytes))
            return pc_error_set(c->err, PC_ERR_OVERFLOW, "%s: %llu strings overflow the address space", where,
                                (unsigned long long)count);
        need = (size_t)count * sizeof(pc_bytes);
    } else if (!pc_dtype_storage_bytes(dtype, count, &need)) {
        return pc_error_set(c->err, PC_ERR_OVERFLOW, "%s: byte size of %llu %s elements overflows", where,
                            (unsigned long long)count, pc_dtype_name(dtype));
    }
    bool external = false;
    if (tp->has_data_location) {
        if (tp->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT &&
            tp->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
            return pc_error_set(c->err, PC_ERR_ENUM,
                                "%s: data_location %d is not DEFAULT (0) or EXTERNAL (1)", where,
                                (int)tp->data_location);
        external = tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    }
    /* Which value fields are set. */
    struct data_field {
        int field;
        size_t n;
    } set[7];
    int n_set = 0;
    if (tp->has_raw_data) set[n_set++] = (struct data_field){9, tp->raw_data.len};
    if (tp->n_float_data) set[n_set++] = (struct data_field){4, tp->n_float_data};
    if (tp->n_int32_data) set[n_set++] = (struct data_field){5, tp->n_int32_data};
    if (tp->n_string_data) set[n_set++] = (struct data_field){6, tp->n_string_data};
    if (tp->n_int64_data) set[n_set++] = (struct data_field){7, tp->n_int64_data};
    if (tp->n_double_data) set[n_set++] = (struct data_field){10, tp->n_double_data};
    if (tp->n_uint64_data) set[n_set++] = (struct data_field){11, tp->n_uint64_data};
    if (n_set > 1)
        return pc_error_set(c->err, PC_ERR_MULTIPLE_DATA, "%s: both %s and %s are set", where,
                            field_name(set[0].field), field_name(set[1].field));
    if (external && n_set)
        return pc_error_set(c->err, PC_ERR_MULTIPLE_DATA, "%s: external data together with %s", where,
                            field_name(set[0].field));
    if (!external && tp->n_external_data)
        return pc_error_set(c->err, PC_ERR_EXTERNAL_DATA,
                            "%s: external_data entries without data_location EXTERNAL", where);

    pc_tensor *t = pc_arena_alloc(&m->arena, sizeof *t);
    if (!t) return nomem(c, "a tensor");
    t->dtype = dtype;
    t->rank = (int32_t)tp->n_dims;
    t->n_elements = count;
    t->n_bytes = need;
    if (tp->n_dims) {
        t->dims = pc_arena_array(&m->arena, tp->n_dims, sizeof(int64_t));
        if (!t->dims) return nomem(c, "tensor dims");
        memcpy(t->dims, tp->dims, tp->n_dims * sizeof(int64_t));
    }
    t->name = dup_str(c, tp->name);
    t->doc_string = dup_str(c, tp->doc_string);
    pc_status st =
        convert_kvs(c, tp->n_metadata_props, tp->metadata_props, &t->n_metadata, &t->metadata, where);
    if (st != PC_OK) return st;

    if (external) {
        if (dtype == PC_DTYPE_STRING)
            return pc_error_set(c->err, PC_ERR_EXTERNAL_DATA, "%s: string tensors cannot use external data",
                                where);
        if (!c->opts->allow_external_data || !c->base_dir)
            return pc_error_set(c->err, PC_ERR_EXTERNAL_DATA,
                                "%s: external data is not allowed for a model loaded from memory", where);
        pc_kv *kv = tp->n_external_data ? pc_arena_array(&m->arena, tp->n_external_data, sizeof *kv) : NULL;
        if (tp->n_external_data && !kv) return nomem(c, "external data keys");
        for (size_t i = 0; i < tp->n_external_data; i++) {
            kv[i].key = tp->external_data[i]->key ? tp->external_data[i]->key : "";
            kv[i].value = tp->external_data[i]->value ? tp->external_data[i]->value : "";
        }
        void *data = NULL;
        st = pc_extdata_read(c->base_dir, kv, tp->n_external_data, need, &m->mem, &data, c->err);
        if (st != PC_OK) {
            pc_error_prefix(c->err, "%s: ", where);
            return st;
        }
        t->data = data;
        if ((st = pc_model_track_tensor(m, t, c->err)) != PC_OK) {
            pc_mem_free(&m->mem, data);
            return st;
        }
        *out = t;
        return PC_OK;
    }

    int field = n_set ? set[0].field : 0;
    if (field && field != 9 && !field_carries(field, dtype))
        return pc_error_set(c->err, PC_ERR_DTYPE, "%s: field %s cannot carry %s data", where,
                            field_name(field), pc_dtype_name(dtype));
    /* Every size check comes before any allocation: a tiny file must not make us commit memory for its dims.
     */
    if (field == 9) {
        if (dtype == PC_DTYPE_STRING)
            return pc_error_set(c->err, PC_ERR_DTYPE, "%s: raw_data cannot carry string data", where);
        if (tp->raw_data.len != need)
            return pc_error_set(c->err, PC_ERR_DATA_SIZE,
                                "%s: raw_data has %zu bytes but %llu %s elements need %zu", where,
                                tp->raw_data.len, (unsigned long long)count, pc_dtype_name(dtype), need);
    } else if (!field) {
        if (count != 0)
            return pc_error_set(c->err, PC_ERR_DATA_SIZE, "%s: no data for %llu %s elements", where,
                                (unsigned long long)count, pc_dtype_name(dtype));
    } else {
        if (pc_dtype_bits(dtype) != 0 && pc_dtype_bits(dtype) < 8)
            return pc_error_set(c->err, PC_ERR_UNSUPPORTED,
                                "%s: sub-byte %s data in %s is not supported (use raw_data)", where,
                                pc_dtype_name(dtype), field_name(field));
        /* complex values take two reals each; count <= need/8 keeps the doubling from overflowing */
        uint64_t expect = (dtype == PC_DTYPE_COMPLEX64 || dtype == PC_DTYPE_COMPLEX128) ? count * 2 : count;
        if (set[0].n != expect)
            return pc_error_set(c->err, PC_ERR_DATA_SIZE,
                                "%s: %s has %zu values but %llu %s elements need %llu", where,
                                field_name(field), set[0].n, (unsigned long long)count, pc_dtype_name(dtype),
                                (unsigned long long)expect);
    }
    if (field == 9 && need)
        t->data =
            pc_pb_allocator_take(c->pb, tp->raw_data.data, need); /* large payloads: adopted, not copied */
    else
        t->data = field ? pc_mem_alloc(&m->mem, need ? need : 1) : pc_mem_calloc(&m->mem, need ? need : 1, 1);
    if (!t->data) {
        char what[400];
        snprintf(what, sizeof what, "the data of %s", where);
        return nomem(c, what);
    }
    if ((st = pc_model_track_tensor(m, t, c->err)) != PC_OK) {
        pc_mem_free(&m->mem, t->data);
        t->data = NULL;
        return st;
    }
    if (field == 9 || !field) {
        *out = t;
        return PC_OK;
    }
    uint8_t *dst = t->data;
    unsigned width = pc_dtype_bits(dtype) / 8;
    switch (field) {
    case 4:
        memcpy(dst, tp->float_data, need);
        break;
    case 10:
        memcpy(dst, tp->double_data, need);
        break;
    case 7:
        memcpy(dst, tp->int64_data, need);
        break;
    case 11:
        for (size_t i = 0; i < tp->n_uint64_data; i++) {
            uint64_t v = tp->uint64_data[i];
            memcpy(dst + i * width, &v, width); /* little-endian: the low bytes come first */
        }
        break;
    case 5:
        for (size_t i = 0; i < tp->n_int32_data; i++) {
            int32_t v = tp->int32_data[i];
            if (dtype == PC_DTYPE_BOOL) v = v != 0;
            memcpy(dst + i * width, &v, width);
        }
        break;
    case 6: {
        pc_bytes *s = t->data;
        for (size_t i = 0; i < tp->n_string_data; i++) {
            s[i].len = tp->string_data[i].len;
            s[i].data = pc_arena_alloc(&m->arena, s[i].len + 1);
            if (!s[i].data) return nomem(c, "string data");
            if (s[i].len) memcpy(s[i].data, tp->string_data[i].data, s[i].len);
        }
        break;
    }
    }
    *out = t;
    return PC_OK;
}

/* ---- graphs
 * ------------------------------------------------------------------------------------------------ */

static pc_status convert_graph(load_ctx *c, Onnx__GraphProto *gp, pc_graph *g);

static const char *node_label(const pc_node *n)
{
    return n->name && *n->name ? n->name : n->op_type;
}

static pc_status convert_attr(load_ctx *c, pc_node *node, Onnx__AttributeProto *ap, pc_attr *a)
{
    pc_model *m = c->model;
    char where[384];
    if (!ap->name || !*ap->name)
        return pc_error_set(c->err, PC_ERR_MISSING_FIELD, "node '%s' (%s): an attribute has no name",
                            node_label(node), node->op_type);
    snprintf(where, sizeof where, "node '%s' (%s) attribute '%s'", node_label(node), node->op_type, ap->name);
    a->name = dup_str(c, ap->name);
    a->doc_string = dup_str(c, ap->doc_string);
    if (!a->name) return nomem(c, "an attribute");
    if (ap->ref_attr_name)
        return pc_error_set(c->err, PC_ERR_ATTRIBUTE,
                            "%s: ref_attr_name is only valid inside a function body", where);
    /* Which value fields are present. */
    pc_attr_type present[16];
    int n_present = 0;
    if (ap->has_f) present[n_present++] = PC_ATTR_FLOAT;
    if (ap->has_i) present[n_present++] = PC_ATTR_INT;
    if (ap->has_s) present[n_present++] = PC_ATTR_STRING;
    if (ap->t) present[n_present++] = PC_ATTR_TENSOR;
    if (ap->g) present[n_present++] = PC_ATTR_GRAPH;
    if (ap->sparse_tensor) present[n_present++] = PC_ATTR_SPARSE_TENSOR;
    if (ap->tp) present[n_present++] = PC_ATTR_TYPE_PROTO;
    if (ap->n_floats) present[n_present++] = PC_ATTR_FLOATS;
    if (ap->n_ints) present[n_present++] = PC_ATTR_INTS;
    if (ap->n_strings) present[n_present++] = PC_ATTR_STRINGS;
    if (ap->n_tensors) present[n_present++] = PC_ATTR_TENSORS;
    if (ap->n_graphs) present[n_present++] = PC_ATTR_GRAPHS;
    if (ap->n_sparse_tensors) present[n_present++] = PC_ATTR_SPARSE_TENSORS;
    if (ap->n_type_protos) present[n_present++] = PC_ATTR_TYPE_PROTOS;

    int type = ap->has_type ? (int)ap->type : 0;
    if (type < 0 || type >= PC_ATTR_TYPE_COUNT)
        return pc_error_set(c->err, PC_ERR_ENUM, "%s: attribute type %d is not a valid AttributeType", where,
                            type);
    if (type == PC_ATTR_UNDEFINED) {
        /* Early IR versions omit the type; infer it only when exactly one value field is set. */
        if (n_present != 1)
            return pc_error_set(c->err, PC_ERR_ATTRIBUTE_TYPE,
                                "%s: type is UNDEFINED and %d value fields are set", where, n_present);
        type = present[0];
    }
    bool is_list = type >= PC_ATTR_FLOATS && type != PC_ATTR_SPARSE_TENSOR && type != PC_ATTR_TYPE_PROTO;
    for (int i = 0; i < n_present; i++)
        if (present[i] != (pc_attr_type)type)
            return pc_error_set(c->err, PC_ERR_ATTRIBUTE_TYPE, "%s: declared type %s but a %s value is set",
                                where, pc_attr_type_name((pc_attr_type)type), pc_attr_type_name(present[i]));
    if (!is_list && n_present == 0)
        return pc_error_set(c->err, PC_ERR_ATTRIBUTE_TYPE, "%s: declared type %s but no value is set", where,
                            pc_attr_type_name((pc_attr_type)type));
    a->type = (pc_attr_type)type;
    pc_status st = PC_OK;
    switch (a->type) {
    case PC_ATTR_FLOAT:
        a->f = ap->f;
        break;
    case PC_ATTR_INT:
        a->i = ap->i;
        break;
    case PC_ATTR_STRING:
        a->s.len = ap->s.len;
        a->s.data = pc_arena_alloc(&m->arena, ap->s.len + 1); /* NUL-terminated for string use */
        if (!a->s.data) return nomem(c, "an attribute");
        if (ap->s.len) memcpy(a->s.data, ap->s.data, ap->s.len);
        break;
    case PC_ATTR_TENSOR:
        st = convert_tensor(c, ap->t, &a->t, where);
        break;
    case PC_ATTR_GRAPH:
        a->g = pc_graph_create(m, node->graph, node);
        if (!a->g) return nomem(c, "a subgraph");
        st = convert_graph(c, ap->g, a->g);
        break;
    case PC_ATTR_TYPE_PROTO:
        a->tp = pc_arena_alloc(&m->arena, sizeof(pc_type));
        if (!a->tp) return nomem(c, "a type");
        st = convert_type(c, ap->tp, a->tp, where);
        break;
    case PC_ATTR_FLOATS:
        a->n = ap->n_floats;
        a->floats = pc_arena_array(&m->arena, a->n ? a->n : 1, sizeof(float));
        if (!a->floats) return nomem(c, "an attribute");
        if (a->n) memcpy(a->floats, ap->floats, a->n * sizeof(float));
        break;
    case PC_ATTR_INTS:
        a->n = ap->n_ints;
        a->ints = pc_arena_array(&m->arena, a->n ? a->n : 1, sizeof(int64_t));
        if (!a->ints) return nomem(c, "an attribute");
        if (a->n) memcpy(a->ints, ap->ints, a->n * sizeof(int64_t));
        break;
    case PC_ATTR_STRINGS:
        a->n = ap->n_strings;
        a->strings = pc_arena_array(&m->arena, a->n ? a->n : 1, sizeof(pc_bytes));
        if (!a->strings) return nomem(c, "an attribute");
        for (size_t i = 0; i < a->n; i++) {
            a->strings[i].len = ap->strings[i].len;
            a->strings[i].data = pc_arena_alloc(&m->arena, ap->strings[i].len + 1);
            if (!a->strings[i].data) return nomem(c, "an attribute");
            if (ap->strings[i].len) memcpy(a->strings[i].data, ap->strings[i].data, ap->strings[i].len);
        }
        break;
    case PC_ATTR_TENSORS:
        a->n = ap->n_tensors;
        a->tensors = pc_arena_array(&m->arena, a->n ? a->n : 1, sizeof(pc_tensor *));
        if (!a->tensors) return nomem(c, "an attribute");
        for (size_t i = 0; i < a->n && st == PC_OK; i++)
            st = convert_tensor(c, ap->tensors[i], &a->tensors[i], where);
        break;
    case PC_ATTR_GRAPHS:
        a->n = ap->n_graphs;
        a->graphs = pc_arena_array(&m->arena, a->n ? a->n : 1, sizeof(pc_graph *));
        if (!a->graphs) return nomem(c, "an attribute");
        for (size_t i = 0; i < a->n && st == PC_OK; i++) {
            a->graphs[i] = pc_graph_create(m, node->graph, node);
            if (!a->graphs[i]) return nomem(c, "a subgraph");
            st = convert_graph(c, ap->graphs[i], a->graphs[i]);
        }
        break;
    case PC_ATTR_TYPE_PROTOS:
        a->n = ap->n_type_protos;
        a->tps = pc_arena_array(&m->arena, a->n ? a->n : 1, sizeof(pc_type *));
        if (!a->tps) return nomem(c, "an attribute");
        for (size_t i = 0; i < a->n && st == PC_OK; i++) {
            a->tps[i] = pc_arena_alloc(&m->arena, sizeof(pc_type));
            if (!a->tps[i]) return nomem(c, "a type");
            st = convert_type(c, ap->type_protos[i], a->tps[i], where);
        }
        break;
    case PC_ATTR_SPARSE_TENSOR:
    case PC_ATTR_SPARSE_TENSORS:
        return pc_error_set(c->err, PC_ERR_UNSUPPORTED, "%s: sparse tensor attributes are not supported",
                            where);
    default:
        return pc_error_set(c->err, PC_ERR_INTERNAL, "%s: unhandled attribute type", where);
    }
    return st;
}

/* Subgraphs must not reuse (shadow) a name of an enclosing graph (ONNX IR rule; the checker rejects it). */
static bool shadows_outer(const pc_graph *g, const char *name)
{
    return g->parent && pc_graph_lookup_value(g->parent, name);
}

/* Resolves a name (hash h) used inside graph g: a local value, or a reference to an enclosing graph's value.
 */
static pc_value *resolve_use(load_ctx *c, pc_graph *g, const char *name, uint64_t h)
{
    pc_value *v = pc_graph_find_value_hashed(g, name, h);
    if (v) return v;
    pc_value *outer = g->parent ? pc_graph_lookup_value(g->parent, name) : NULL;
    if (!outer) return NULL;
    v = pc_graph_add_value_hashed(g, name, h, c->err);
    if (!v) return NULL;
    v->outer = outer;
    outer->n_subgraph_refs++;
    return v;
}

/* Prefetch distances for bulk name lookups, in names: the index slot PF_SLOT names ahead, the value it names
 * PF_VALUE names ahead. The ring keeps the hashes in between. */
enum { PF_SLOT = 8, PF_VALUE = 4, PF_RING = 16 };
_Static_assert(PF_RING > PF_SLOT && PF_SLOT > PF_VALUE, "prefetch ring");

/* The name hash of a value_info entry (prefetching its index slot); 0 (computed when needed) if vi is NULL,
 * an entry of a stream not unpacked yet. */
static uint64_t vi_hash(const pc_graph *g, const Onnx__ValueInfoProto *vi)
{
    if (!vi) return 0;
    uint64_t h = pc_value_name_hash(vi->name ? vi->name : "");
    pc_graph_prefetch_slot(g, h);
    return h;
}

/* Adds the entries vis[0..n) (or, with s, the stream's entries) as graph inputs (role 0), graph outputs (1)
 * or value_info (2). */
static pc_status add_value_infos(load_ctx *c, pc_graph *g, size_t n, Onnx__ValueInfoProto **vis, pb_stream *s,
                                 int role)
{
    static const char *const role_names[] = {"graph input", "graph output", "value_info"};
    if (s) n = s->n;
#define VI_PEEK(j) (s ? (const Onnx__ValueInfoProto *)stream_peek(s, j) : vis[j])
    /* value_info entries name values all over the graph, long evicted from cache: overlap the misses */
    uint64_t ring[PF_RING] = {0};
    for (size_t j = 0; j < n && j < PF_SLOT; j++)
        ring[j] = vi_hash(g, VI_PEEK(j));
    for (size_t i = 0; i < n; i++) {
        Onnx__ValueInfoProto *vi = s ? (Onnx__ValueInfoProto *)stream_at(c, s, i) : vis[i];
        if (!vi) return c->err->status;
        if (i + PF_SLOT < n) ring[(i + PF_SLOT) % PF_RING] = vi_hash(g, VI_PEEK(i + PF_SLOT));
        if (i + PF_VALUE < n && ring[(i + PF_VALUE) % PF_RING])
            pc_graph_prefetch_value(g, ring[(i + PF_VALUE) % PF_RING]);
        uint64_t h = ring[i % PF_RING] ? ring[i % PF_RING] : pc_value_name_hash(vi->name ? vi->name : "");
#undef VI_PEEK
        if (!vi->name || !*vi->name)
            return pc_error_set(c->err, PC_ERR_MISSING_FIELD, "graph '%s': %s %zu has no name",
                                g->name ? g->name : "", role_names[role], i);
        pc_value *v = NULL;
        if (role == 0) {
            if (shadows_outer(g, vi->name))
                return pc_error_set(c->err, PC_ERR_DUPLICATE_NAME,
                                    "graph '%s': subgraph input '%s' shadows a value of an enclosing graph",
                                    g->name ? g->name : "", vi->name);
            if (pc_graph_find_value_hashed(g, vi->name, h))
                return pc_error_set(c->err, PC_ERR_DUPLICATE_NAME,
                                    "graph '%s': graph input '%s' is listed twice", g->name ? g->name : "",
                                    vi->name);
            v = pc_graph_add_value_hashed(g, vi->name, h, c->err);
        } else if (role == 1) {
            v = resolve_use(c, g, vi->name, h);
            if (v && v->is_graph_output)
                return pc_error_set(c->err, PC_ERR_DUPLICATE_NAME,
                                    "graph '%s': graph output '%s' is listed twice", g->name ? g->name : "",
                                    vi->name);
            if (!v && c->err->status == PC_OK)
                return pc_error_set(
                    c->err, PC_ERR_UNPRODUCED_OUTPUT,
                    "graph '%s': graph output '%s' is not produced by any node, input or initializer",
                    g->name ? g->name : "", vi->name);
        } else {
            v = pc_graph_find_value_hashed(g, vi->name, h);
            if (v && v->has_value_info)
                return pc_error_set(c->err, PC_ERR_DUPLICATE_NAME,
                                    "graph '%s': value_info '%s' is listed twice", g->name ? g->name : "",
                                    vi->name);
            /* value_info for an unused name is kept (as an orphan value) so the round trip loses nothing */
            if (!v) v = pc_graph_add_value_hashed(g, vi->name, h, c->err);
        }
        if (!v) return c->err->status != PC_OK ? c->err->status : nomem(c, "a value");
        /* "" for where: the context is written only into an actual error message (see error_context) */
        if (vi->type) {
            pc_type t;
            pc_status st = convert_type(c, vi->type, &t, "");
            if (st != PC_OK) return error_context(c->err, role_names[role], vi->name, st);
            v->type = t;
        }
        v->doc_string = dup_str(c, vi->doc_string);
        pc_status st =
            convert_kvs(c, vi->n_metadata_props, vi->metadata_props, &v->n_metadata, &v->metadata, "");
        if (st != PC_OK) return error_context(c->err, role_names[role], vi->name, st);
        if (role == 0) {
            if ((st = pc_graph_add_input(g, v, c->err)) != PC_OK) return st;
        } else if (role == 1) {
            if ((st = pc_graph_add_output(g, v, c->err)) != PC_OK) return st;
        } else {
            v->has_value_info = true;
        }
    }
    return PC_OK;
}

/* The name hash of a node's first output (prefetching its index slot), or 0 when it has none. */
static uint64_t first_output_hash(const pc_graph *g, const Onnx__NodeProto *np)
{
    if (!np || !np->n_output || !np->output[0] || !*np->output[0]) return 0;
    uint64_t h = pc_value_name_hash(np->output[0]);
    pc_graph_prefetch_slot(g, h);
    return h;
}

static pc_status unpack_error(pc_model *m, pc_error *err, const char *what);

/* Element i of the stream (the next one or one of the current batch), or NULL with c->err set. Unpacking the
 * next batch drops the current one unless one of its elements is still needed (s->keep). */
static ProtobufCMessage *stream_at(load_ctx *c, pb_stream *s, size_t i)
{
    if (i - s->first < s->count) return s->unpacked[i - s->first];
    if (s->cur && s->keep) {
        s->cur->next = s->kept;
        s->kept = s->cur;
        s->cur = NULL;
    } else if (s->cur) {
        pc_pb_allocator_release(&s->cur->alloc);
    }
    if (!s->cur && !(s->cur = pc_mem_alloc(s->mem, sizeof *s->cur))) {
        nomem(c, "protobuf-c state");
        return NULL;
    }
    pc_pb_allocator_init(&s->cur->alloc, s->mem);
    s->keep = false;
    s->first = i;
    s->count = 0;
    for (size_t k = i; k < s->n && k - i < STREAM_BATCH; k++) {
        ProtobufCMessage *msg =
            protobuf_c_message_unpack(s->desc, &s->cur->alloc.base, s->items[k].len, s->items[k].data);
        if (!msg) {
            unpack_error(c->model, c->err, "model");
            return NULL;
        }
        s->unpacked[s->count++] = msg;
    }
    return s->unpacked[0];
}

/* Element i if it is already unpacked (for looking ahead), else NULL. */
static const ProtobufCMessage *stream_peek(const pb_stream *s, size_t i)
{
    return i - s->first < s->count ? s->unpacked[i - s->first] : NULL;
}

static void stream_release(pb_stream *s)
{
    if (s->cur) {
        pc_pb_allocator_release(&s->cur->alloc);
        pc_mem_free(s->mem, s->cur);
    }
    while (s->kept) {
        pb_batch *b = s->kept;
        s->kept = b->next;
        pc_pb_allocator_release(&b->alloc);
        pc_mem_free(s->mem, b);
    }
    s->cur = NULL;
}

/* A node pass B must visit: it has attributes, or inputs pass A could not resolve. */
typedef struct later_node {
    pc_node *node;
    Onnx__NodeProto *np;
    pc_pb_allocator *pb; /* the allocator holding np (raw_data of tensor attributes is adopted from it) */
} later_node;

/* convert_graph's body; *later is a pc_mem block the caller frees, whatever the outcome. */
static pc_status convert_graph_in(load_ctx *c, Onnx__GraphProto *gp, pc_graph *g, later_node **later)
{
    pc_model *m = c->model;
    pc_status st;
    size_t n_later = 0;
    g->name = dup_str(c, gp->name ? gp->name : "");
    g->doc_string = dup_str(c, gp->doc_string);
    const char *gname = g->name ? g->name : "";
    if ((st = convert_kvs(c, gp->n_metadata_props, gp->metadata_props, &g->n_metadata, &g->metadata,
                          "graph")) != PC_OK)
        return st;
    if (gp->n_sparse_initializer)
        return pc_error_set(c->err, PC_ERR_UNSUPPORTED, "graph '%s': sparse initializers are not supported",
                            gname);
    for (size_t i = 0; i < gp->n_quantization_annotation; i++)
        if ((st = keep_opaque(c, 14, &gp->quantization_annotation[i]->base, &g->n_opaque, &g->opaque)) !=
            PC_OK)
            return st;
    pb_stream *ns = c->stream_gp == gp ? c->nodes : NULL;
    const size_t n_node = ns ? ns->n : gp->n_node;
    if (n_node > UINT32_MAX / 2 || gp->n_initializer > UINT32_MAX / 2)
        return pc_error_set(c->err, PC_ERR_BUDGET, "graph '%s': too many nodes or initializers", gname);

    /* size the name index once: a graph's values are its inputs, initializers, node outputs and value_infos
     * (streamed nodes are not unpacked yet: one output each is assumed, the index grows if needed) */
    size_t n_names = gp->n_input + gp->n_initializer + gp->n_output +
                     (c->stream_gp == gp ? c->value_infos->n : gp->n_value_info);
    for (size_t i = 0; i < n_node; i++)
        n_names += ns ? 1 : gp->node[i]->n_output;
    if (!pc_graph_reserve_values(g, n_names)) return nomem(c, "the value index");
    if ((st = add_value_infos(c, g, gp->n_input, gp->input, NULL, 0)) != PC_OK) return st;

    for (size_t i = 0; i < gp->n_initializer; i++) {
        Onnx__TensorProto *tp = gp->initializer[i];
        if (!tp->name || !*tp->name)
            return pc_error_set(c->err, PC_ERR_MISSING_FIELD, "graph '%s': initializer %zu has no name",
                                gname, i);
        char where[320];
        where_named(where, sizeof where, "initializer", tp->name);
        if (shadows_outer(g, tp->name))
            return pc_error_set(c->err, PC_ERR_DUPLICATE_NAME,
                                "graph '%s': subgraph initializer '%s' shadows a value of an enclosing graph",
                                gname, tp->name);
        pc_value *v = pc_graph_find_value(g, tp->name);
        if (v && v->initializer)
            return pc_error_set(c->err, PC_ERR_DUPLICATE_INITIALIZER,
                                "graph '%s': initializer '%s' is defined twice", gname, tp->name);
        pc_tensor *t;
        if ((st = convert_tensor(c, tp, &t, where)) != PC_OK) return st;
        if (!v && !(v = pc_graph_add_value(g, tp->name, NULL, c->err))) return c->err->status;
        if ((st = pc_graph_set_initializer(g, v, t, c->err)) != PC_OK) return st;
    }

    /* Pass A: nodes, their outputs, and the inputs already defined (graph inputs, initializers, outputs of
     * earlier nodes). In a file in topological order that is every input, resolved while its producer is
     * still in cache. An input is looked up before the node's own outputs exist, so a resolved input always
     * comes from an earlier node. Inputs produced later in file order or by an enclosing graph wait for pass
     * B. */
    size_t deferred = 0;
    /* Each node's first output goes into a random slot of the name index: hash it PF_VALUE nodes ahead and
     * prefetch the slot, so the insert does not wait on the miss. */
    uint64_t out_hash[PF_RING] = {0}; /* 0: not computed (a streamed node not unpacked yet) */
    for (size_t i = 0; i < n_node; i++) {
        size_t deferred_before = deferred;
        Onnx__NodeProto *np = ns ? (Onnx__NodeProto *)stream_at(c, ns, i) : gp->node[i];
        if (!np) return c->err->status;
        if (i == 0 || (ns && i == ns->first)) /* start of the look-ahead (for streams: of each batch) */
            for (size_t j = i; j < n_node && j < i + PF_VALUE; j++)
                out_hash[j % PF_RING] =
                    first_output_hash(g, ns ? (const Onnx__NodeProto *)stream_peek(ns, j) : gp->node[j]);
        if (i + PF_VALUE < n_node)
            out_hash[(i + PF_VALUE) % PF_RING] = first_output_hash(
                g, ns ? (const Onnx__NodeProto *)stream_peek(ns, i + PF_VALUE) : gp->node[i + PF_VALUE]);
        if (!np->op_type || !*np->op_type)
            return pc_error_set(c->err, PC_ERR_MISSING_FIELD, "graph '%s': node %zu ('%s') has no op_type",
                                gname, i, np->name ? np->name : "");
        if (np->n_output > UINT32_MAX / 2 || np->n_input > UINT32_MAX / 2 || np->n_attribute > UINT32_MAX / 2)
            return pc_error_set(c->err, PC_ERR_BUDGET, "node '%s': too many inputs, outputs or attributes",
                                np->name && *np->name ? np->name : np->op_type);
        const char *domain = np->domain ? np->domain : "";
        if (strcmp(domain, "ai.onnx") == 0) domain = "";
        const char *op_type = intern_str(c, np->op_type);
        domain = intern_str(c, domain);
        pc_node *n = op_type && domain ? pc_graph_new_node_slots(g, op_type, domain, (uint32_t)np->n_input,
                                                                 (uint32_t)np->n_output)
                                       : NULL;
        if (!n) return nomem(c, "a node");
        n->name = dup_str(c, np->name ? np->name : "");
        n->overload = dup_str(c, np->overload);
        n->doc_string = dup_str(c, np->doc_string);
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            const char *name = np->input[k];
            if (!name || !*name) continue;
            pc_value *v = pc_graph_find_value(g, name);
            if (!v) {
                deferred++;
                continue;
            }
            if ((st = pc_node_set_input(n, k, v, c->err)) != PC_OK) return st;
        }
        for (uint32_t o = 0; o < n->n_outputs; o++) {
            const char *name = np->output[o];
            if (!name || !*name) continue;
            if (shadows_outer(g, name))
                return pc_error_set(
                    c->err, PC_ERR_DUPLICATE_PRODUCER,
                    "graph '%s': node '%s' (%s) output '%s' shadows a value of an enclosing graph", gname,
                    node_label(n), n->op_type, name);
            /* Only inputs, initializers and earlier outputs exist yet: any clash is a second producer. */
            uint64_t h = o ? 0 : out_hash[i % PF_RING];
            pc_value *v =
                h ? pc_graph_add_value_hashed(g, name, h, c->err) : pc_graph_add_value(g, name, NULL, c->err);
            if (!v) {
                const pc_value *prev = pc_graph_find_value(g, name);
                if (c->err->status != PC_ERR_DUPLICATE_NAME || !prev) return c->err->status;
                const char *other = prev->producer      ? node_label(prev->producer)
                                    : prev->initializer ? "an initializer"
                                                        : "a graph input";
                return pc_error_set(c->err, PC_ERR_DUPLICATE_PRODUCER,
                                    "graph '%s': value '%s' is produced by node '%s' (%s) and also by %s%s%s",
                                    gname, name, node_label(n), n->op_type, prev->producer ? "node '" : "",
                                    other, prev->producer ? "'" : "");
            }
            if ((st = pc_node_set_output(n, o, v, c->err)) != PC_OK) return st;
        }
        if (np->n_metadata_props) {
            char where[320];
            snprintf(where, sizeof where, "node '%s' (%s)", node_label(n), n->op_type);
            st =
                convert_kvs(c, np->n_metadata_props, np->metadata_props, &n->n_metadata, &n->metadata, where);
            if (st != PC_OK) return st;
        }
        n->cap_metadata = n->n_metadata;
        /* the saver stores the EP assignment as metadata "pc_ep"; bring it back into the IR field */
        const char *ep = n->n_metadata ? pc_node_metadata(n, "pc_ep") : NULL;
        if (ep) {
            n->ep = ep;
            pc_node_remove_metadata(n, "pc_ep");
        }
        if (deferred != deferred_before || np->n_attribute) {
            /* listed so pass B does not walk (and miss on) every node again */
            size_t bytes;
            if (!*later &&
                (!pc_size_mul(n_node, sizeof **later, &bytes) || !(*later = pc_mem_alloc(&m->mem, bytes))))
                return nomem(c, "the node list");
            (*later)[n_later++] = (later_node){n, np, ns ? &ns->cur->alloc : c->pb};
            if (ns) ns->keep = true;
        }
    }
    /* Pass B, in file order: deferred inputs and attributes (subgraphs see every value of this graph by now).
     */
    bool has_subgraphs = false;
    for (size_t i = 0; i < n_later; i++) {
        pc_node *n = (*later)[i].node;
        const Onnx__NodeProto *np = (*later)[i].np;
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            const char *name = np->input[k];
            if (n->inputs[k] || !name || !*name) continue;
            pc_value *v = resolve_use(c, g, name, pc_value_name_hash(name));
            if (!v) {
                if (c->err->status != PC_OK) return c->err->status;
                return pc_error_set(
                    c->err, PC_ERR_DANGLING_INPUT,
                    "graph '%s': node '%s' (%s) input %u '%s' is not produced by any node, graph "
                    "input, initializer or enclosing graph",
                    gname, node_label(n), n->op_type, k, name);
            }
            if ((st = pc_node_set_input(n, k, v, c->err)) != PC_OK) return st;
        }
        if (np->n_attribute) {
            n->attrs = pc_arena_array(&m->arena, np->n_attribute, sizeof(pc_attr));
            if (!n->attrs) return nomem(c, "attributes");
            n->cap_attrs = (uint32_t)np->n_attribute;
        }
        for (size_t k = 0; k < np->n_attribute; k++) {
            const char *aname = np->attribute[k]->name;
            for (uint32_t j = 0; aname && j < n->n_attrs; j++)
                if (strcmp(n->attrs[j].name, aname) == 0)
                    return pc_error_set(c->err, PC_ERR_DUPLICATE_NAME,
                                        "node '%s' (%s): attribute '%s' appears twice", node_label(n),
                                        n->op_type, aname);
            pc_pb_allocator *pb = c->pb;
            c->pb = (*later)[i].pb;
            st = convert_attr(c, n, np->attribute[k], &n->attrs[n->n_attrs]);
            c->pb = pb;
            if (st != PC_OK) return st;
            pc_attr_type at = n->attrs[n->n_attrs].type;
            if (at == PC_ATTR_GRAPH || at == PC_ATTR_GRAPHS) has_subgraphs = true;
            n->n_attrs++;
        }
    }
    if ((st = add_value_infos(c, g, gp->n_output, gp->output, NULL, 1)) != PC_OK) return st;
    pb_stream *vs = c->stream_gp == gp ? c->value_infos : NULL;
    if ((st = add_value_infos(c, g, gp->n_value_info, gp->value_info, vs, 2)) != PC_OK) return st;
    /* Pass A proved file order topological when it resolved every input and no subgraph reads this graph's
     * values; otherwise sort (which also reports cycles). */
    if ((deferred || has_subgraphs) && (st = pc_graph_sort(g, c->err)) != PC_OK) return st;
    return PC_OK;
}

static pc_status convert_graph(load_ctx *c, Onnx__GraphProto *gp, pc_graph *g)
{
    later_node *later = NULL;
    pc_status st = convert_graph_in(c, gp, g, &later);
    pc_mem_free(&c->model->mem, later);
    return st;
}

/* ---- model
 * ------------------------------------------------------------------------------------------------- */

/* Adds an edge caller -> callee for every node (also inside GRAPH attributes) of `nodes` that calls a local
 * function. Recursion depth is bounded by the pre-scan's nesting limit. */
static void collect_calls(const pc_model *m, size_t n_nodes, Onnx__NodeProto **nodes, uint32_t caller,
                          uint8_t *adjacency)
{
    for (size_t k = 0; k < n_nodes; k++) {
        const Onnx__NodeProto *np = nodes[k];
        long callee =
            np->op_type ? pc_model_function_index(m, np->domain ? np->domain : "", np->op_type) : -1;
        if (callee >= 0) adjacency[(size_t)caller * m->n_functions + (size_t)callee] = 1;
        for (size_t a = 0; a < np->n_attribute; a++) {
            const Onnx__AttributeProto *ap = np->attribute[a];
            if (ap->g) collect_calls(m, ap->g->n_node, ap->g->node, caller, adjacency);
            for (size_t gi = 0; gi < ap->n_graphs; gi++)
                collect_calls(m, ap->graphs[gi]->n_node, ap->graphs[gi]->node, caller, adjacency);
        }
    }
}

/* Model-local functions must not call each other in a cycle (ONNX advisory GHSA-7w46-vvrh-m8q5: cyclic
 * functions overflow the stack of anything that expands them). Iterative colouring DFS over the call graph.
 */
static pc_status check_function_calls(load_ctx *c, const Onnx__ModelProto *mp)
{
    const pc_model *m = c->model;
    uint32_t n = m->n_functions;
    if (!n) return PC_OK;
    size_t cells;
    if (!pc_size_mul(n, n, &cells)) return pc_error_set(c->err, PC_ERR_BUDGET, "too many functions");
    uint8_t *adj = pc_mem_calloc(&c->model->mem, cells, 1);
    uint8_t *colour = pc_mem_calloc(&c->model->mem, n, 1); /* 0 new, 1 on stack, 2 done */
    uint32_t *stack = pc_mem_calloc(&c->model->mem, n, sizeof *stack);
    uint32_t *next = pc_mem_calloc(&c->model->mem, n, sizeof *next);
    pc_status st = PC_OK;
    if (!adj || !colour || !stack || !next) {
        st = nomem(c, "the function call graph");
        goto out;
    }
    for (uint32_t f = 0; f < n; f++)
        collect_calls(m, mp->functions[f]->n_node, mp->functions[f]->node, f, adj);
    for (uint32_t root = 0; root < n && st == PC_OK; root++) {
        if (colour[root]) continue;
        uint32_t depth = 0;
        stack[depth++] = root;
        colour[root] = 1;
        next[root] = 0;
        while (depth && st == PC_OK) {
            uint32_t f = stack[depth - 1];
            if (next[f] == n) {
                colour[f] = 2;
                depth--;
                continue;
            }
            uint32_t g = next[f]++;
            if (!adj[(size_t)f * n + g]) continue;
            if (colour[g] == 1)
                st = pc_error_set(c->err, PC_ERR_CYCLE,
                                  "model-local function '%s' (domain '%s') calls itself through "
                                  "'%s'",
                                  m->functions[g].name, m->functions[g].domain, m->functions[f].name);
            else if (colour[g] == 0) {
                colour[g] = 1;
                next[g] = 0;
                stack[depth++] = g;
            }
        }
    }
out:
    pc_mem_free(&c->model->mem, adj);
    pc_mem_free(&c->model->mem, colour);
    pc_mem_free(&c->model->mem, stack);
    pc_mem_free(&c->model->mem, next);
    return st;
}

static pc_status convert_model(load_ctx *c, Onnx__ModelProto *mp)
{
    pc_model *m = c->model;
    pc_status st;
    if (!mp->has_ir_version) return pc_error_set(c->err, PC_ERR_MISSING_FIELD, "ir_version is missing");
    m->ir_version = mp->ir_version;
    m->producer_name = dup_str(c, mp->producer_name);
    m->producer_version = dup_str(c, mp->producer_version);
    m->domain = dup_str(c, mp->domain);
    m->model_version = mp->has_model_version ? mp->model_version : 0;
    m->doc_string = dup_str(c, mp->doc_string);
    if ((st = convert_kvs(c, mp->n_metadata_props, mp->metadata_props, &m->n_metadata, &m->metadata,
                          "model")) != PC_OK)
        return st;
    m->n_opsets = 0;
    if (mp->n_opset_import > 1024)
        return pc_error_set(c->err, PC_ERR_BUDGET, "%zu opset imports (limit 1024)", mp->n_opset_import);
    m->opsets = pc_arena_array(&m->arena, mp->n_opset_import ? mp->n_opset_import : 1, sizeof(pc_opset));
    if (!m->opsets) return nomem(c, "opsets");
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *op = mp->opset_import[i];
        const char *d = op->domain ? op->domain : "";
        if (strcmp(d, "ai.onnx") == 0) d = "";
        for (uint32_t j = 0; j < m->n_opsets; j++)
            if (strcmp(m->opsets[j].domain, d) == 0)
                return pc_error_set(c->err, PC_ERR_DUPLICATE_NAME, "opset_import lists domain '%s' twice",
                                    *d ? d : "ai.onnx");
        if (!op->has_version)
            return pc_error_set(c->err, PC_ERR_OPSET, "opset_import for domain '%s' has no version",
                                *d ? d : "ai.onnx");
        m->opsets[m->n_opsets].domain = dup_str(c, d);
        if (!m->opsets[m->n_opsets].domain) return nomem(c, "an opset domain");
        m->opsets[m->n_opsets].version = op->version;
        m->n_opsets++;
    }
    if (mp->n_functions > 10000)
        return pc_error_set(c->err, PC_ERR_BUDGET, "%zu model-local functions (limit 10000)",
                            mp->n_functions);
    if (mp->n_functions) {
        m->functions = pc_arena_array(&m->arena, mp->n_functions, sizeof(pc_function_id));
        if (!m->functions) return nomem(c, "functions");
    }
    for (size_t i = 0; i < mp->n_functions; i++) {
        const Onnx__FunctionProto *f = mp->functions[i];
        if (!f->name || !*f->name)
            return pc_error_set(c->err, PC_ERR_MISSING_FIELD, "function %zu has no name", i);
        m->functions[i].domain = dup_str(c, f->domain ? f->domain : "");
        m->functions[i].name = dup_str(c, f->name);
        if (!m->functions[i].domain || !m->functions[i].name) return nomem(c, "a function name");
        /* n_functions still counts only the earlier ones */
        if (pc_model_function_index(m, m->functions[i].domain, m->functions[i].name) >= 0)
            return pc_error_set(c->err, PC_ERR_DUPLICATE_NAME,
                                "model-local function '%s' in domain '%s' is defined "
                                "twice",
                                f->name, m->functions[i].domain);
        m->n_functions++;
        if ((st = keep_opaque(c, 25, &f->base, &m->n_opaque, &m->opaque)) != PC_OK) return st;
    }
    if ((st = check_function_calls(c, mp)) != PC_OK) return st;
    for (size_t i = 0; i < mp->n_training_info; i++)
        if ((st = keep_opaque(c, 20, &mp->training_info[i]->base, &m->n_opaque, &m->opaque)) != PC_OK)
            return st;
    if (!mp->graph) return pc_error_set(c->err, PC_ERR_MISSING_FIELD, "the model has no graph");
    st = convert_graph(c, mp->graph, m->graph);
    if (st == PC_OK && c->copy_failed) st = nomem(c, "a string");
    return st;
}

static pc_status unpack_error(pc_model *m, pc_error *err, const char *what)
{
    if (m->mem.over_budget)
        return pc_error_set(err, PC_ERR_BUDGET, "memory budget of %zu bytes exceeded while unpacking the %s",
                            m->mem.budget, what);
    if (m->mem.failed) return pc_error_set(err, PC_ERR_NOMEM, "out of memory while unpacking the %s", what);
    return pc_error_set(err, PC_ERR_WIRE, "protobuf-c rejected the %s encoding", what);
}

/* ---- splitting the main graph's nodes off the model
 * ---------------------------------------------------------- */

/* Reads the next field of a message that passed the pre-scan: its number and wire type, and its payload (for
 * a length-delimited field: the bytes after the length). *pp moves past the field. false on anything the
 * pre-scan should have rejected (the caller then unpacks the model in one piece, as protobuf-c would). */
static inline bool wire_next(const uint8_t **pp, const uint8_t *end, uint64_t *number, unsigned *wire_type,
                             const uint8_t **payload, size_t *len)
{
    const uint8_t *p = *pp;
    uint64_t n;
    if (pc_wire_key(&p, end, number, wire_type) != PC_VARINT_OK) return false;
    switch (*wire_type) {
    case PC_WT_VARINT: {
        const uint8_t *q = p;
        if (pc_wire_varint(&p, end, 10, &n) != PC_VARINT_OK) return false;
        *payload = q;
        *len = (size_t)(p - q);
        *pp = p;
        return true;
    }
    case PC_WT_FIXED64:
        n = 8;
        break;
    case PC_WT_LEN:
        if (pc_wire_varint(&p, end, 10, &n) != PC_VARINT_OK) return false;
        break;
    case PC_WT_FIXED32:
        n = 4;
        break;
    default:
        return false;
    }
    if (n > (uint64_t)(end - p)) return false;
    *payload = p;
    *len = (size_t)n;
    *pp = p + n;
    return true;
}

/* The model's bytes without its graph (field 7), the graph's bytes without its nodes (field 1) and value_info
 * (field 13), and where each node's and value_info's bytes are. */
typedef struct model_split {
    uint8_t *model_rest, *graph_rest; /* pc_mem blocks */
    size_t model_len, graph_len;
    pb_slice *nodes, *value_infos; /* pc_mem blocks */
    size_t n_nodes, n_value_infos;
} model_split;

static void split_free(pc_mem *mem, model_split *sp)
{
    pc_mem_free(mem, sp->model_rest);
    pc_mem_free(mem, sp->graph_rest);
    pc_mem_free(mem, sp->nodes);
    pc_mem_free(mem, sp->value_infos);
    memset(sp, 0, sizeof *sp);
}

/* Appends a slice to a growable pc_mem array. */
static bool slices_push(pc_mem *mem, pb_slice **a, size_t *n, size_t *cap, const uint8_t *data, size_t len)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 1024, bytes;
        pb_slice *grown = pc_size_mul(ncap, sizeof *grown, &bytes) ? pc_mem_realloc(mem, *a, bytes) : NULL;
        if (!grown) return false;
        *a = grown;
        *cap = ncap;
    }
    (*a)[(*n)++] = (pb_slice){data, len};
    return true;
}

/* Splits a model with exactly one graph field (several are merged by protobuf-c: those models are unpacked in
 * one piece) whose nodes and value_info outweigh the rest. Copies everything else. 1: split; 0: the split
 * does not apply (unpack in one piece); -1: out of memory. */
static int split_model(const uint8_t *data, size_t size, pc_mem *mem, model_split *sp)
{
    memset(sp, 0, sizeof *sp);
    const uint8_t *graph = NULL, *graph_end = NULL;
    size_t model_len = 0, n_graphs = 0;
    uint64_t number;
    unsigned wt;
    const uint8_t *payload;
    size_t len;
    for (const uint8_t *p = data, *field = p; p != data + size; field = p) {
        if (!wire_next(&p, data + size, &number, &wt, &payload, &len)) return 0;
        if (number == 7 && wt == PC_WT_LEN) {
            graph = payload;
            graph_end = payload + len;
            n_graphs++;
        } else {
            model_len += (size_t)(p - field);
        }
    }
    if (n_graphs != 1) return 0;
    /* one walk over the graph: node payloads, and the other fields (key included) to copy */
    pb_slice *rest = NULL;
    size_t n_rest = 0, cap_rest = 0, cap_nodes = 0, cap_vis = 0, graph_len = 0;
    int result = -1;
    for (const uint8_t *p = graph, *field = p; p != graph_end; field = p) {
        if (!wire_next(&p, graph_end, &number, &wt, &payload, &len)) {
            result = 0;
            goto out;
        }
        if (number == 1 && wt == PC_WT_LEN) {
            if (!slices_push(mem, &sp->nodes, &sp->n_nodes, &cap_nodes, payload, len)) goto out;
        } else if (number == 13 && wt == PC_WT_LEN) {
            if (!slices_push(mem, &sp->value_infos, &sp->n_value_infos, &cap_vis, payload, len)) goto out;
        } else {
            if (!slices_push(mem, &rest, &n_rest, &cap_rest, field, (size_t)(p - field))) goto out;
            graph_len += (size_t)(p - field);
        }
    }
    /* The copy must stay cheap next to what streaming saves: a weight-heavy graph is unpacked in one piece
     * (its tensor payloads are adopted from protobuf-c, never copied). */
    size_t streamed = (size_t)(graph_end - graph) - graph_len;
    if (model_len > streamed || graph_len > streamed) {
        result = 0;
        goto out;
    }
    sp->model_rest = pc_mem_alloc(mem, model_len ? model_len : 1);
    sp->graph_rest = pc_mem_alloc(mem, graph_len ? graph_len : 1);
    if (!sp->model_rest || !sp->graph_rest) goto out;
    for (const uint8_t *p = data, *field = p; p != data + size; field = p) {
        (void)wire_next(&p, data + size, &number, &wt, &payload, &len); /* succeeded above */
        if (number == 7 && wt == PC_WT_LEN) continue;
        memcpy(sp->model_rest + sp->model_len, field, (size_t)(p - field));
        sp->model_len += (size_t)(p - field);
    }
    for (size_t i = 0; i < n_rest; i++) {
        memcpy(sp->graph_rest + sp->graph_len, rest[i].data, rest[i].len);
        sp->graph_len += rest[i].len;
    }
    result = 1;
out:
    pc_mem_free(mem, rest);
    if (result != 1) split_free(mem, sp);
    return result;
}

/* Unpacks the model: in one piece, or (split) without the main graph's nodes and value_info, which the
 * streams then hand out. */
static Onnx__ModelProto *unpack_model(const uint8_t *data, size_t size, pc_pb_allocator *alloc,
                                      model_split *sp, pb_stream *nodes, pb_stream *value_infos)
{
    memset(sp, 0, sizeof *sp);
    int split = split_model(data, size, alloc->mem, sp);
    if (split < 0) return NULL;
    if (!split) return onnx__model_proto__unpack(&alloc->base, size, data);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(&alloc->base, sp->model_len, sp->model_rest);
    Onnx__GraphProto *gp = mp ? onnx__graph_proto__unpack(&alloc->base, sp->graph_len, sp->graph_rest) : NULL;
    if (!gp) return NULL;
    mp->graph =
        gp; /* the one graph field, as protobuf-c would have unpacked it but for the streamed fields */
    *nodes = (pb_stream){
        .desc = &onnx__node_proto__descriptor, .items = sp->nodes, .n = sp->n_nodes, .mem = alloc->mem};
    *value_infos = (pb_stream){.desc = &onnx__value_info_proto__descriptor,
                               .items = sp->value_infos,
                               .n = sp->n_value_infos,
                               .mem = alloc->mem};
    return mp;
}

static pc_status model_new(const pc_load_options *opts, pc_model **out, pc_error *err)
{
    pc_status st = pc_model_create(out, err);
    if (st != PC_OK) return st;
    pc_model *m = *out;
    m->n_opsets = 0;
    m->mem.budget = opts->memory_budget;
    m->mem.fail_after = opts->fail_after;
    return PC_OK;
}

static pc_status load_buffer(const uint8_t *data, size_t size, const char *base_dir,
                             const pc_load_options *opts, pc_model **out, pc_error *err)
{
    pc_load_options defaults;
    if (!opts) {
        pc_load_options_default(&defaults);
        opts = &defaults;
    }
    *out = NULL;
    if (size == 0) return pc_error_set(err, PC_ERR_TRUNCATED, "the input is empty");
    if (size > opts->max_file_bytes)
        return pc_error_set(err, PC_ERR_BUDGET, "the input has %zu bytes (limit %zu)", size,
                            opts->max_file_bytes);
    /* the format by content: an ORT file (FlatBuffers, "ORTM" at byte 4) is verified and translated into the
     * same ModelProto (core/ort), then converted with every check below; it has no external data */
    bool ort = pc_ort_detect(data, size);
    pc_status st = PC_OK;
    if (!ort) {
        pc_prescan_limits limits = {opts->max_depth, opts->max_messages};
        st = pc_pb_prescan(data, size, &onnx__model_proto__descriptor, &limits, NULL, err);
        if (st != PC_OK) return st;
    }

    pc_model *m;
    if ((st = model_new(opts, &m, err)) != PC_OK) return st;
    pc_pb_allocator alloc;
    pc_pb_allocator_init(&alloc, &m->mem);
    model_split split;
    memset(&split, 0, sizeof split);
    pb_stream nodes = {.n = 0}, value_infos = {.n = 0};
    Onnx__ModelProto *mp = NULL;
    if (ort) {
        st = pc_ort_to_model_proto(data, size, &alloc, opts, &mp, err);
        /* "ORTM" at byte 4 can also begin an ONNX file (ir_version, then a producer_name starting "ORTM"):
         * when the bytes are no ORT file but pass the ONNX pre-scan, they are ONNX */
        pc_error onnx_err;
        pc_prescan_limits limits = {opts->max_depth, opts->max_messages};
        if (st != PC_OK && st != PC_ERR_NOMEM &&
            pc_pb_prescan(data, size, &onnx__model_proto__descriptor, &limits, NULL, &onnx_err) == PC_OK) {
            ort = false;
            st = PC_OK;
            pc_error_clear(err);
            pc_pb_allocator_release(&alloc);
            pc_pb_allocator_init(&alloc, &m->mem);
        }
    }
    if (ort) {
        base_dir = NULL; /* the ORT format has no external data */
    } else if (!(mp = unpack_model(data, size, &alloc, &split, &nodes, &value_infos))) {
        st = unpack_error(m, err, "model");
    }
    if (st != PC_OK) {
        pc_pb_allocator_release(&alloc);
        split_free(&m->mem, &split);
        pc_model_free(m);
        return st;
    }
    bool split_done = split.model_rest != NULL;
    load_ctx c = {.model = m,
                  .base_dir = base_dir,
                  .opts = opts,
                  .err = err,
                  .pb = &alloc,
                  .stream_gp = split_done ? mp->graph : NULL,
                  .nodes = &nodes,
                  .value_infos = &value_infos};
    pc_error_clear(err);
    st = convert_model(&c, mp);
    if (split_done) {
        stream_release(&nodes);
        stream_release(&value_infos);
    }
    split_free(&m->mem, &split);
    pc_pb_allocator_release(&alloc);
    if (st == PC_OK && !opts->skip_verify) st = pc_model_verify(m, err);
    if (st != PC_OK) {
        pc_model_free(m);
        return st;
    }
    *out = m;
    return PC_OK;
}

pc_status pc_model_load_bytes(const void *data, size_t size, const pc_load_options *opts, pc_model **out,
                              pc_error *err)
{
    pc_error local;
    return load_buffer(data, size, NULL, opts, out, err ? err : &local);
}

/* Maps a regular file read-only. On success the data pointer and size describe the mapping (NULL and 0 for an
 * empty file). */
static pc_status map_file(const char *path, size_t limit, void **data, size_t *size, pc_error *err)
{
    *data = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return pc_error_set(err, PC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return pc_error_set(err, PC_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return pc_error_set(err, PC_ERR_IO, "%s: not a regular file", path);
    }
    if ((uint64_t)sb.st_size > limit) {
        close(fd);
        return pc_error_set(err, PC_ERR_BUDGET, "%s: file has %lld bytes (limit %zu)", path,
                            (long long)sb.st_size, limit);
    }
    if (sb.st_size == 0) {
        close(fd);
        return PC_OK;
    }
    void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) return pc_error_set(err, PC_ERR_IO, "%s: cannot map: %s", path, strerror(e));
    *data = p;
    *size = (size_t)sb.st_size;
    return PC_OK;
}

pc_status pc_model_load_file(const char *path, const pc_load_options *opts, pc_model **out, pc_error *err)
{
    pc_error local;
    if (!err) err = &local; /* the conversion reads back the status it set */
    pc_load_options defaults;
    if (!opts) {
        pc_load_options_default(&defaults);
        opts = &defaults;
    }
    *out = NULL;
    void *data;
    size_t size;
    pc_status st = map_file(path, opts->max_file_bytes, &data, &size, err);
    if (st != PC_OK) return st;
    /* base directory for external data: the model file's folder */
    size_t plen = strlen(path);
    char *base = malloc(plen + 2);
    if (!base) {
        if (data) munmap(data, size);
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    }
    memcpy(base, path, plen + 1);
    char *slash = strrchr(base, '/');
    if (slash == base)
        base[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        strcpy(base, ".");
    st = load_buffer(data, size, opts->allow_external_data ? base : NULL, opts, out, err);
    free(base);
    /* the format is told by content: a file named .ort without "ORTM" at byte 4 was read as ONNX, which its
     * error alone would not say */
    bool ort_name = plen >= 4 && strcmp(path + plen - 4, ".ort") == 0;
    bool ort_bytes = data && pc_ort_detect(data, size);
    if (data) munmap(data, size);
    if (st != PC_OK) {
        if (ort_name && !ort_bytes) {
            size_t len = strlen(err->message);
            snprintf(err->message + len, sizeof err->message - len,
                     " (named .ort, but bytes 4..7 are not \"ORTM\": read as ONNX)");
        }
        pc_error_prefix(err, "%s: ", path);
        return st;
    }
    (*out)->path = pc_arena_strdup(&(*out)->arena, path);
    if (!(*out)->path) {
        pc_model_free(*out);
        *out = NULL;
        return pc_error_set(err, PC_ERR_NOMEM, "%s: out of memory for the model's path", path);
    }
    return PC_OK;
}

pc_status pc_tensor_load_file(pc_model *owner, const char *path, pc_tensor **out, pc_error *err)
{
    pc_error local;
    if (!err) err = &local;
    *out = NULL;
    void *data;
    size_t size;
    pc_status st = map_file(path, (size_t)4 << 30, &data, &size, err);
    if (st != PC_OK) return st;
    pc_prescan_limits limits = {64, 64u << 20};
    if (size == 0) {
        /* an all-default TensorProto has no data_type: reported by convert_tensor below */
    } else if ((st = pc_pb_prescan(data, size, &onnx__tensor_proto__descriptor, &limits, NULL, err)) !=
               PC_OK) {
        munmap(data, size);
        pc_error_prefix(err, "%s: ", path);
        return st;
    }
    pc_pb_allocator alloc;
    pc_pb_allocator_init(&alloc, &owner->mem);
    static const uint8_t empty[1];
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(&alloc.base, size, size ? data : empty);
    if (data) munmap(data, size);
    if (!tp) {
        st = unpack_error(owner, err, "tensor");
        pc_pb_allocator_release(&alloc);
        pc_error_prefix(err, "%s: ", path);
        return st;
    }
    pc_load_options opts;
    pc_load_options_default(&opts);
    opts.allow_external_data = false;
    load_ctx c = {.model = owner, .opts = &opts, .err = err, .pb = &alloc};
    st = convert_tensor(&c, tp, out, "tensor");
    pc_pb_allocator_release(&alloc);
    if (st != PC_OK) pc_error_prefix(err, "%s: ", path);
    return st;
}

/* For core/onnx/data.c: converts a TensorProto found inside a SequenceProto/OptionalProto unpacked through
 * pb. */
pc_status pc_onnx_convert_tensor(pc_model *owner, pc_pb_allocator *pb, Onnx__TensorProto *tp, pc_tensor **out,
                                 const char *where, pc_error *err)
{
    pc_load_options opts;
    pc_load_options_default(&opts);
    opts.allow_external_data = false;
    load_ctx c = {.model = owner, .opts = &opts, .err = err, .pb = pb};
    return convert_tensor(&c, tp, out, where);
}
