/* The ORT format loader: the buffer verified against ort.fbs (fb_verify.c), then translated into the ONNX
 * loader's ModelProto (ort_internal.h), with the checks the ORT format needs beyond its schema, stricter than
 * ONNX Runtime's own after its 2026 fixes (PR 27297, 28186, 29048):
 *   - ort_version: 1-3 ASCII digits, a version this loader reads (5 and 6; older ones carry kernel-def hashes
 *     and no kernel type resolver);
 *   - node slots from the data, never from max_node_index: indices unique and below max_node_index, which
 *     may not exceed the table budget (ONNX Runtime once sized its node array by it);
 *   - every NodeEdge and EdgeEnd naming a real node, its argument indices in range and naming the same value
 *     on both ends;
 *   - every node input, output and implicit input, and every graph input and output, bound to a NodeArg (an
 *     empty name is a missing optional argument); NodeArgs named once, unnamed only without a type;
 *   - input_arg_counts summing to the inputs; since_version within the model's opset for the domain; runtime
 *     optimization records naming real nodes; the kernel type string resolver binding formal arguments its
 *     op has, where the schema table describes the op;
 *   - initializers with dims, raw_data for every type but string, and no external data (an
 *     external_data_offset other than -1: the inference path has no sidecar file);
 *   - attributes holding exactly the value their type names (a scalar may be absent: FlatBuffers does not
 *     store zeros).
 * What the ORT format has and the IR does not is dropped: the kernel type string resolver and the runtime
 * optimization records (both describe ONNX Runtime's kernels, and are checked, not kept) and NodeEdges (the
 * IR derives edges from names). The format has no per-node metadata, so an ORT file brings no layer_ann.
 * Constant nodes arrive as initializers: ORT converts them when it writes the file. */
#include <stdlib.h>
#include <string.h>

#include "core/base/strmap.h"
#include "core/ort/fb.h"
#include "core/ort/ort_internal.h"
#include "core/schema/schema.h"

/* Field ids (ort.fbs declaration order). */
enum { IS_ORT_VERSION, IS_MODEL, IS_SESSION_STATE, IS_RESOLVER };
enum {
    M_IR_VERSION,
    M_OPSET_IMPORT,
    M_PRODUCER_NAME,
    M_PRODUCER_VERSION,
    M_DOMAIN,
    M_MODEL_VERSION,
    M_DOC_STRING,
    M_GRAPH,
    M_GRAPH_DOC_STRING,
    M_METADATA_PROPS
};
enum {
    G_INITIALIZERS,
    G_NODE_ARGS,
    G_NODES,
    G_MAX_NODE_INDEX,
    G_NODE_EDGES,
    G_INPUTS,
    G_OUTPUTS,
    G_SPARSE_INITIALIZERS,
    G_RUNTIME_OPTIMIZATIONS
};
enum {
    N_NAME,
    N_DOC_STRING,
    N_DOMAIN,
    N_SINCE_VERSION,
    N_INDEX,
    N_OP_TYPE,
    N_TYPE,
    N_EP,
    N_INPUTS,
    N_OUTPUTS,
    N_ATTRIBUTES,
    N_INPUT_ARG_COUNTS,
    N_IMPLICIT_INPUTS
};
enum { E_NODE_INDEX, E_INPUT_EDGES, E_OUTPUT_EDGES };
enum { VI_NAME, VI_DOC_STRING, VI_TYPE };
enum { TI_DENOTATION, TI_VALUE_TYPE, TI_VALUE };
enum { TTS_ELEM_TYPE, TTS_SHAPE };
enum { DIM_VALUE, DIM_DENOTATION };
enum { DV_DIM_TYPE, DV_DIM_VALUE, DV_DIM_PARAM };
enum { T_NAME, T_DOC_STRING, T_DIMS, T_DATA_TYPE, T_RAW_DATA, T_STRING_DATA, T_EXTERNAL_DATA_OFFSET };
enum {
    A_NAME,
    A_DOC_STRING,
    A_TYPE,
    A_F,
    A_I,
    A_S,
    A_T,
    A_G,
    A_FLOATS,
    A_INTS,
    A_STRINGS,
    A_TENSORS,
    A_GRAPHS
};
enum { ATTR_STRING = 3, ATTR_STRINGS = 8 };

typedef struct node_slot {
    uint32_t index; /* Node.index */
    uint32_t node;  /* the Node table */
} node_slot;

/* One graph being translated; outer links the enclosing graph (implicit inputs resolve there too). */
typedef struct graph_scope {
    pc_strmap args; /* NodeArg name -> its ValueInfo table (position as a pointer-sized integer) */
    const struct graph_scope *outer;
} graph_scope;

typedef struct ort_ctx {
    const uint8_t *b;
    pc_pb_allocator *alloc;
    pc_arena scratch; /* maps and lookup tables, freed at the end */
    const Onnx__ModelProto *mp;
    uint64_t max_tables; /* the verifier's table budget, which bounds max_node_index too */
    pc_error *err;
} ort_ctx;

static pc_status nomem(ort_ctx *c)
{
    return pc_error_set(c->err, PC_ERR_NOMEM, "ORT format: out of memory translating the model");
}

static void *palloc(ort_ctx *c, size_t count, size_t size)
{
    size_t bytes;
    if (!pc_size_mul(count ? count : 1, size, &bytes)) return NULL;
    void *p = c->alloc->base.alloc(c->alloc->base.allocator_data, bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

static char *str(ort_ctx *c, uint32_t t, uint16_t id)
{
    return (char *)fb_field_str(c->b, t, id, NULL);
}

static const char *vec_str(ort_ctx *c, uint32_t v, uint32_t i)
{
    return (const char *)c->b + fb_vec_ref(c->b, v, i) + 4;
}

static const char *label(ort_ctx *c, uint32_t node)
{
    const char *n = str(c, node, N_NAME);
    return n && *n ? n : str(c, node, N_OP_TYPE) ? str(c, node, N_OP_TYPE) : "?";
}

/* ---- types */

static pc_status type_proto(ort_ctx *c, uint32_t ti, Onnx__TypeProto **out, const char *where);

static pc_status tensor_type(ort_ctx *c, uint32_t tts, Onnx__TypeProto *tp)
{
    Onnx__TypeProto__Tensor *tt = palloc(c, 1, sizeof *tt);
    if (!tt) return nomem(c);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = true;
    tt->elem_type = (int32_t)fb_field_i(c->b, tts, TTS_ELEM_TYPE, 4, 0);
    uint32_t shape = fb_field_ref(c->b, tts, TTS_SHAPE);
    if (shape) {
        Onnx__TensorShapeProto *sp = palloc(c, 1, sizeof *sp);
        if (!sp) return nomem(c);
        onnx__tensor_shape_proto__init(sp);
        uint32_t dims = fb_field_ref(c->b, shape, 0), n = fb_vec_len(c->b, dims);
        sp->dim = palloc(c, n, sizeof *sp->dim);
        if (!sp->dim) return nomem(c);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t dim = fb_vec_ref(c->b, dims, i), val = fb_field_ref(c->b, dim, DIM_VALUE);
            Onnx__TensorShapeProto__Dimension *d = palloc(c, 1, sizeof *d);
            if (!d) return nomem(c);
            onnx__tensor_shape_proto__dimension__init(d);
            d->denotation = str(c, dim, DIM_DENOTATION);
            int64_t kind = val ? fb_field_i(c->b, val, DV_DIM_TYPE, 1, 0) : 0;
            if (kind == 1) {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                d->dim_value = fb_field_i(c->b, val, DV_DIM_VALUE, 8, 0);
            } else if (kind == 2) {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                d->dim_param = str(c, val, DV_DIM_PARAM);
                if (!d->dim_param) d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE__NOT_SET;
            }
            sp->dim[sp->n_dim++] = d;
        }
        tt->shape = sp;
    }
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    return PC_OK;
}

static pc_status type_proto(ort_ctx *c, uint32_t ti, Onnx__TypeProto **out, const char *where)
{
    *out = NULL;
    if (fb_field_u(c->b, ti, TI_VALUE_TYPE, 1, 0) == 0)
        return PC_OK; /* type NONE: no type (ORT accepts it) */
    Onnx__TypeProto *tp = palloc(c, 1, sizeof *tp);
    if (!tp) return nomem(c);
    onnx__type_proto__init(tp);
    tp->denotation = str(c, ti, TI_DENOTATION);
    uint32_t tag = (uint32_t)fb_field_u(c->b, ti, TI_VALUE_TYPE, 1, 0),
             value = fb_field_ref(c->b, ti, TI_VALUE);
    pc_status st = PC_OK;
    if (tag == 1) {
        st = tensor_type(c, value, tp);
    } else if (tag == 2) { /* SequenceType: elem_type */
        Onnx__TypeProto__Sequence *s = palloc(c, 1, sizeof *s);
        if (!s) return nomem(c);
        onnx__type_proto__sequence__init(s);
        uint32_t elem = fb_field_ref(c->b, value, 0);
        if (!elem)
            return pc_error_set(c->err, PC_ERR_MISSING_FIELD,
                                "ORT format: %s: sequence type without elem_type", where);
        st = type_proto(c, elem, &s->elem_type, where);
        if (st == PC_OK && !s->elem_type)
            return pc_error_set(c->err, PC_ERR_MISSING_FIELD, "ORT format: %s: sequence type of type NONE",
                                where);
        tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
        tp->sequence_type = s;
    } else if (tag == 3) { /* MapType: key_type, value_type */
        Onnx__TypeProto__Map *mt = palloc(c, 1, sizeof *mt);
        if (!mt) return nomem(c);
        onnx__type_proto__map__init(mt);
        mt->has_key_type = true;
        mt->key_type = (int32_t)fb_field_i(c->b, value, 0, 4, 0);
        uint32_t vt = fb_field_ref(c->b, value, 1);
        if (!vt)
            return pc_error_set(c->err, PC_ERR_MISSING_FIELD, "ORT format: %s: map type without value_type",
                                where);
        st = type_proto(c, vt, &mt->value_type, where);
        if (st == PC_OK && !mt->value_type)
            return pc_error_set(c->err, PC_ERR_MISSING_FIELD, "ORT format: %s: map value type of type NONE",
                                where);
        tp->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
        tp->map_type = mt;
    }
    *out = tp;
    return st;
}

/* ---- tensors */

static pc_status tensor_proto(ort_ctx *c, uint32_t t, Onnx__TensorProto **out, const char *where)
{
    Onnx__TensorProto *tp = palloc(c, 1, sizeof *tp);
    if (!tp) return nomem(c);
    onnx__tensor_proto__init(tp);
    tp->name = str(c, t, T_NAME);
    tp->doc_string = str(c, t, T_DOC_STRING);
    const char *name = tp->name ? tp->name : "";
    int64_t ext = fb_field_i(c->b, t, T_EXTERNAL_DATA_OFFSET, 8, -1);
    if (ext != -1)
        return pc_error_set(
            c->err, PC_ERR_EXTERNAL_DATA,
            "ORT format: %s '%s': external_data_offset %lld (data outside the file is not read)", where, name,
            (long long)ext);
    uint32_t dims = fb_field_ref(c->b, t, T_DIMS);
    if (!dims)
        return pc_error_set(c->err, PC_ERR_MISSING_FIELD, "ORT format: %s '%s' has no dims", where, name);
    tp->n_dims = fb_vec_len(c->b, dims);
    tp->dims = palloc(c, tp->n_dims, sizeof *tp->dims);
    if (!tp->dims) return nomem(c);
    for (size_t i = 0; i < tp->n_dims; i++)
        tp->dims[i] = (int64_t)fb_u64(c->b, dims + 4 + 8 * i);
    tp->has_data_type = true;
    tp->data_type = (int32_t)fb_field_i(c->b, t, T_DATA_TYPE, 4, 0);
    uint32_t raw = fb_field_ref(c->b, t, T_RAW_DATA), strs = fb_field_ref(c->b, t, T_STRING_DATA);
    if (tp->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__STRING) {
        if (raw)
            return pc_error_set(c->err, PC_ERR_DTYPE, "ORT format: %s '%s': a string tensor with raw_data",
                                where, name);
    } else if (!raw) {
        return pc_error_set(c->err, PC_ERR_MISSING_FIELD, "ORT format: %s '%s': no raw_data", where, name);
    }
    if (raw) { /* pointed at in place: the converter copies what it keeps (pc_pb_allocator_take) */
        tp->has_raw_data = true;
        tp->raw_data.len = fb_vec_len(c->b, raw);
        tp->raw_data.data = (uint8_t *)c->b + raw + 4;
    }
    if (strs) {
        tp->n_string_data = fb_vec_len(c->b, strs);
        tp->string_data = palloc(c, tp->n_string_data, sizeof *tp->string_data);
        if (!tp->string_data) return nomem(c);
        for (size_t i = 0; i < tp->n_string_data; i++) {
            uint32_t s = fb_vec_ref(c->b, strs, (uint32_t)i);
            tp->string_data[i] = (ProtobufCBinaryData){fb_u32(c->b, s), (uint8_t *)c->b + s + 4};
        }
    }
    *out = tp;
    return PC_OK;
}

/* ---- graphs */

static pc_status graph_proto(ort_ctx *c, uint32_t g, const graph_scope *outer, Onnx__GraphProto **out,
                             const char *where);

static uint32_t arg_of(const graph_scope *s, const char *name, bool outer_too)
{
    for (; s; s = outer_too ? s->outer : NULL) {
        void *v = pc_strmap_get(&s->args, name);
        if (v) return (uint32_t)(uintptr_t)v;
    }
    return 0;
}

/* A node's or graph's argument name: empty (a missing optional one) or bound to a NodeArg. */
static pc_status bound(ort_ctx *c, const graph_scope *s, const char *name, bool outer_too, const char *what,
                       const char *who)
{
    if (!*name || arg_of(s, name, outer_too)) return PC_OK;
    return pc_error_set(c->err, PC_ERR_DANGLING_INPUT, "ORT format: %s '%s' of %s names no NodeArg", what,
                        name, who);
}

static pc_status strings_of(ort_ctx *c, uint32_t v, char ***out, size_t *n)
{
    *n = fb_vec_len(c->b, v);
    *out = palloc(c, *n, sizeof **out);
    if (!*out) return nomem(c);
    for (size_t i = 0; i < *n; i++)
        (*out)[i] = (char *)vec_str(c, v, (uint32_t)i);
    return PC_OK;
}

static pc_status attribute_proto(ort_ctx *c, uint32_t a, const graph_scope *scope, Onnx__AttributeProto **out,
                                 const char *node_label)
{
    Onnx__AttributeProto *ap = palloc(c, 1, sizeof *ap);
    if (!ap) return nomem(c);
    onnx__attribute_proto__init(ap);
    ap->name = str(c, a, A_NAME);
    ap->doc_string = str(c, a, A_DOC_STRING);
    int32_t type = (int32_t)fb_field_i(c->b, a, A_TYPE, 4, 0);
    const char *name = ap->name ? ap->name : "";
    char where[384];
    snprintf(where, sizeof where, "attribute '%s' of node '%s'", name, node_label);
    if (type == 11 || type == 12)
        return pc_error_set(c->err, PC_ERR_UNSUPPORTED,
                            "ORT format: %s: sparse tensor attributes have no field in the format", where);
    /* the one value field the type names (ids 3..12 for types 1..10) */
    static const uint16_t field_of[] = {0,        A_F,    A_I,       A_S,       A_T,     A_G,
                                        A_FLOATS, A_INTS, A_STRINGS, A_TENSORS, A_GRAPHS};
    for (uint16_t id = A_F; id <= A_GRAPHS; id++)
        if (fb_field_pos(c->b, a, id) && (type < 1 || type > 10 || field_of[type] != id))
            return pc_error_set(c->err, PC_ERR_ATTRIBUTE_TYPE,
                                "ORT format: %s: type %d with a value in field id %u", where, type, id);
    ap->has_type = true;
    ap->type = (Onnx__AttributeProto__AttributeType)type;
    pc_status st = PC_OK;
    uint32_t v;
    switch (type) {
    case 1: {
        uint32_t bits = (uint32_t)fb_field_u(c->b, a, A_F, 4, 0);
        memcpy(&ap->f, &bits, sizeof ap->f);
        ap->has_f = true;
        break;
    }
    case 2:
        ap->i = fb_field_i(c->b, a, A_I, 8, 0);
        ap->has_i = true;
        break;
    case ATTR_STRING: {
        uint32_t len;
        const char *s = fb_field_str(c->b, a, A_S, &len);
        ap->s = (ProtobufCBinaryData){s ? len : 0, (uint8_t *)(s ? s : "")};
        ap->has_s = true;
        break;
    }
    case 4:
        if (!(v = fb_field_ref(c->b, a, A_T)))
            return pc_error_set(c->err, PC_ERR_MISSING_FIELD, "ORT format: %s: TENSOR without t", where);
        st = tensor_proto(c, v, &ap->t, where);
        break;
    case 5:
        if (!(v = fb_field_ref(c->b, a, A_G)))
            return pc_error_set(c->err, PC_ERR_MISSING_FIELD, "ORT format: %s: GRAPH without g", where);
        st = graph_proto(c, v, scope, &ap->g, where);
        break;
    case 6:
        v = fb_field_ref(c->b, a, A_FLOATS);
        ap->n_floats = fb_vec_len(c->b, v);
        if (!(ap->floats = palloc(c, ap->n_floats, sizeof *ap->floats))) return nomem(c);
        for (size_t i = 0; i < ap->n_floats; i++) {
            uint32_t bits = fb_u32(c->b, v + 4 + 4 * i);
            memcpy(&ap->floats[i], &bits, sizeof bits);
        }
        break;
    case 7:
        v = fb_field_ref(c->b, a, A_INTS);
        ap->n_ints = fb_vec_len(c->b, v);
        if (!(ap->ints = palloc(c, ap->n_ints, sizeof *ap->ints))) return nomem(c);
        for (size_t i = 0; i < ap->n_ints; i++)
            ap->ints[i] = (int64_t)fb_u64(c->b, v + 4 + 8 * i);
        break;
    case ATTR_STRINGS:
        v = fb_field_ref(c->b, a, A_STRINGS);
        ap->n_strings = fb_vec_len(c->b, v);
        if (!(ap->strings = palloc(c, ap->n_strings, sizeof *ap->strings))) return nomem(c);
        for (size_t i = 0; i < ap->n_strings; i++) {
            uint32_t s = fb_vec_ref(c->b, v, (uint32_t)i);
            ap->strings[i] = (ProtobufCBinaryData){fb_u32(c->b, s), (uint8_t *)c->b + s + 4};
        }
        break;
    case 9:
        v = fb_field_ref(c->b, a, A_TENSORS);
        ap->n_tensors = fb_vec_len(c->b, v);
        if (!(ap->tensors = palloc(c, ap->n_tensors, sizeof *ap->tensors))) return nomem(c);
        for (size_t i = 0; i < ap->n_tensors && st == PC_OK; i++)
            st = tensor_proto(c, fb_vec_ref(c->b, v, (uint32_t)i), &ap->tensors[i], where);
        break;
    case 10:
        v = fb_field_ref(c->b, a, A_GRAPHS);
        ap->n_graphs = fb_vec_len(c->b, v);
        if (!(ap->graphs = palloc(c, ap->n_graphs, sizeof *ap->graphs))) return nomem(c);
        for (size_t i = 0; i < ap->n_graphs && st == PC_OK; i++)
            st = graph_proto(c, fb_vec_ref(c->b, v, (uint32_t)i), scope, &ap->graphs[i], where);
        break;
    default: /* UNDEFINED: the converter names it */
        break;
    }
    *out = ap;
    return st;
}

static int slot_cmp(const void *pa, const void *pb)
{
    const node_slot *a = pa, *b = pb;
    return (a->index > b->index) - (a->index < b->index);
}

static const node_slot *slot_find(const node_slot *slots, uint32_t n, uint32_t index)
{
    node_slot key = {index, 0};
    return bsearch(&key, slots, n, sizeof *slots, slot_cmp);
}

/* The opset the model imports for a node's domain ("" and "ai.onnx" alike), or -1. */
static int64_t model_opset(const Onnx__ModelProto *mp, const char *domain)
{
    if (!domain || strcmp(domain, "ai.onnx") == 0) domain = "";
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const char *d = mp->opset_import[i]->domain ? mp->opset_import[i]->domain : "";
        if (strcmp(d, "ai.onnx") == 0) d = "";
        if (strcmp(d, domain) == 0) return mp->opset_import[i]->version;
    }
    return -1;
}

/* The value name at argument i of a node's inputs (then implicit inputs) or outputs; NULL out of range. */
static const char *arg_name(ort_ctx *c, uint32_t node, bool output, int32_t i)
{
    uint32_t v = fb_field_ref(c->b, node, output ? N_OUTPUTS : N_INPUTS), n = fb_vec_len(c->b, v);
    if (i < 0) return NULL;
    if ((uint32_t)i < n) return vec_str(c, v, (uint32_t)i);
    if (output) return NULL;
    uint32_t im = fb_field_ref(c->b, node, N_IMPLICIT_INPUTS);
    return (uint32_t)i - n < fb_vec_len(c->b, im) ? vec_str(c, im, (uint32_t)i - n) : NULL;
}

/* NodeEdges: each names a node once; each EdgeEnd names a node, argument indices in range, and the value
 * the source writes is the one the destination reads. */
static pc_status check_edges(ort_ctx *c, uint32_t g, const node_slot *slots, uint32_t n_slots,
                             const char *where)
{
    uint32_t edges = fb_field_ref(c->b, g, G_NODE_EDGES), n = fb_vec_len(c->b, edges);
    uint8_t *seen = n ? pc_arena_alloc(&c->scratch, n_slots ? n_slots : 1) : NULL;
    if (n && !seen) return nomem(c);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t e = fb_vec_ref(c->b, edges, i);
        uint32_t idx = (uint32_t)fb_field_u(c->b, e, E_NODE_INDEX, 4, 0);
        const node_slot *self = slot_find(slots, n_slots, idx);
        if (!self)
            return pc_error_set(c->err, PC_ERR_DANGLING_INPUT,
                                "ORT format: %s: node_edges[%u] names node index %u, which no node has",
                                where, i, idx);
        if (seen[self - slots]++)
            return pc_error_set(c->err, PC_ERR_DUPLICATE_NAME,
                                "ORT format: %s: node index %u has two NodeEdges", where, idx);
        for (int dir = 0; dir < 2; dir++) {
            uint32_t v = fb_field_ref(c->b, e, dir ? E_OUTPUT_EDGES : E_INPUT_EDGES), m = fb_vec_len(c->b, v);
            for (uint32_t j = 0; j < m; j++) {
                uint32_t at = v + 4 + 12 * j, other = fb_u32(c->b, at);
                int32_t src = (int32_t)fb_u32(c->b, at + 4), dst = (int32_t)fb_u32(c->b, at + 8);
                const node_slot *o = slot_find(slots, n_slots, other);
                if (!o)
                    return pc_error_set(
                        c->err, PC_ERR_DANGLING_INPUT,
                        "ORT format: %s: an edge of node index %u names node index %u, which no node has",
                        where, idx, other);
                /* input edges: other -> self; output edges: self -> other */
                uint32_t from = dir ? self->node : o->node, to = dir ? o->node : self->node;
                const char *out_name = arg_name(c, from, true, src), *in_name = arg_name(c, to, false, dst);
                if (!out_name || !in_name)
                    return pc_error_set(
                        c->err, PC_ERR_ARITY,
                        "ORT format: %s: an edge of node index %u: argument %d -> %d out of range", where,
                        idx, src, dst);
                if (strcmp(out_name, in_name) != 0)
                    return pc_error_set(
                        c->err, PC_ERR_DANGLING_INPUT,
                        "ORT format: %s: an edge of node index %u joins output '%s' to input '%s'", where,
                        idx, out_name, in_name);
            }
        }
    }
    return PC_OK;
}

/* Runtime optimization records: every node index they name exists. */
static pc_status check_records(ort_ctx *c, uint32_t g, const node_slot *slots, uint32_t n_slots,
                               const char *where)
{
    uint32_t ro = fb_field_ref(c->b, g, G_RUNTIME_OPTIMIZATIONS);
    uint32_t entries = ro ? fb_field_ref(c->b, ro, 0) : 0;
    for (uint32_t i = 0; i < fb_vec_len(c->b, entries); i++) {
        uint32_t recs = fb_field_ref(c->b, fb_vec_ref(c->b, entries, i), 1);
        for (uint32_t j = 0; j < fb_vec_len(c->b, recs); j++) {
            uint32_t nto = fb_field_ref(c->b, fb_vec_ref(c->b, recs, j), 1);
            uint32_t idx = nto ? fb_field_ref(c->b, nto, 0) : 0;
            for (uint32_t k = 0; k < fb_vec_len(c->b, idx); k++) {
                uint32_t ni = fb_u32(c->b, idx + 4 + 4 * k);
                if (!slot_find(slots, n_slots, ni))
                    return pc_error_set(
                        c->err, PC_ERR_DANGLING_INPUT,
                        "ORT format: %s: a runtime optimization record names node index %u, which no "
                        "node has",
                        where, ni);
            }
        }
    }
    return PC_OK;
}

static pc_status value_info_proto(ort_ctx *c, uint32_t vi, Onnx__ValueInfoProto **out, const char *where)
{
    Onnx__ValueInfoProto *p = palloc(c, 1, sizeof *p);
    if (!p) return nomem(c);
    onnx__value_info_proto__init(p);
    p->name = str(c, vi, VI_NAME);
    p->doc_string = str(c, vi, VI_DOC_STRING);
    uint32_t ti = fb_field_ref(c->b, vi, VI_TYPE);
    *out = p;
    return ti ? type_proto(c, ti, &p->type, where) : PC_OK;
}

static pc_status graph_proto(ort_ctx *c, uint32_t g, const graph_scope *outer, Onnx__GraphProto **out,
                             const char *where)
{
    Onnx__GraphProto *gp = palloc(c, 1, sizeof *gp);
    graph_scope *scope = pc_arena_alloc(&c->scratch, sizeof *scope);
    if (!gp || !scope) return nomem(c);
    onnx__graph_proto__init(gp);
    *out = gp;
    pc_strmap_init(&scope->args, &c->scratch);
    scope->outer = outer;
    pc_status st;
    if (fb_vec_len(c->b, fb_field_ref(c->b, g, G_SPARSE_INITIALIZERS)))
        return pc_error_set(c->err, PC_ERR_UNSUPPORTED,
                            "ORT format: %s: sparse initializers are not supported", where);
    /* NodeArgs: named once; an unnamed one only as a missing optional argument (no type) */
    uint32_t args = fb_field_ref(c->b, g, G_NODE_ARGS), n_args = fb_vec_len(c->b, args);
    if (!pc_strmap_reserve(&scope->args, n_args)) return nomem(c);
    for (uint32_t i = 0; i < n_args; i++) {
        uint32_t vi = fb_vec_ref(c->b, args, i);
        const char *name = str(c, vi, VI_NAME);
        if (!name || !*name) {
            if (fb_field_ref(c->b, vi, VI_TYPE))
                return pc_error_set(c->err, PC_ERR_MISSING_FIELD,
                                    "ORT format: %s: node_args[%u] has a type but no name", where, i);
            continue;
        }
        bool failed = false;
        if (pc_strmap_put_new(&scope->args, name, (void *)(uintptr_t)vi, &failed))
            return pc_error_set(c->err, PC_ERR_DUPLICATE_NAME, "ORT format: %s: NodeArg '%s' is listed twice",
                                where, name);
        if (failed) return nomem(c);
    }
    /* graph inputs and outputs: bound to NodeArgs, whose types they take */
    for (int dir = 0; dir < 2; dir++) {
        uint32_t v = fb_field_ref(c->b, g, dir ? G_OUTPUTS : G_INPUTS), n = fb_vec_len(c->b, v);
        Onnx__ValueInfoProto **list = palloc(c, n, sizeof *list);
        if (!list) return nomem(c);
        for (uint32_t i = 0; i < n; i++) {
            const char *name = vec_str(c, v, i);
            uint32_t vi = *name ? arg_of(scope, name, false) : 0;
            if (!vi)
                return pc_error_set(c->err, dir ? PC_ERR_UNPRODUCED_OUTPUT : PC_ERR_DANGLING_INPUT,
                                    "ORT format: %s: graph %s '%s' names no NodeArg", where,
                                    dir ? "output" : "input", name);
            if ((st = value_info_proto(c, vi, &list[i], where)) != PC_OK) return st;
        }
        if (dir) {
            gp->output = list;
            gp->n_output = n;
        } else {
            gp->input = list;
            gp->n_input = n;
        }
    }
    /* initializers */
    uint32_t inits = fb_field_ref(c->b, g, G_INITIALIZERS);
    gp->n_initializer = fb_vec_len(c->b, inits);
    if (!(gp->initializer = palloc(c, gp->n_initializer, sizeof *gp->initializer))) return nomem(c);
    for (size_t i = 0; i < gp->n_initializer; i++)
        if ((st = tensor_proto(c, fb_vec_ref(c->b, inits, (uint32_t)i), &gp->initializer[i],
                               "initializer")) != PC_OK)
            return st;
    /* nodes: slots from the data (indices unique and below max_node_index), arguments bound */
    uint32_t nodes = fb_field_ref(c->b, g, G_NODES), n_nodes = fb_vec_len(c->b, nodes);
    uint32_t max_index = (uint32_t)fb_field_u(c->b, g, G_MAX_NODE_INDEX, 4, 0);
    /* unused here, but a reader sizing its node array by it (ONNX Runtime before PR 28186) would allocate up
     * to 32 GiB for a small file: no more slots than the verifier's budget of tables */
    if (max_index > c->max_tables)
        return pc_error_set(c->err, PC_ERR_BUDGET,
                            "ORT format: %s: max_node_index %u exceeds the budget of %llu node slots", where,
                            max_index, (unsigned long long)c->max_tables);
    node_slot *slots = pc_arena_array(&c->scratch, n_nodes ? n_nodes : 1, sizeof *slots);
    gp->node = palloc(c, n_nodes, sizeof *gp->node);
    if (!slots || !gp->node) return nomem(c);
    for (uint32_t i = 0; i < n_nodes; i++) {
        uint32_t nt = fb_vec_ref(c->b, nodes, i);
        uint32_t index = (uint32_t)fb_field_u(c->b, nt, N_INDEX, 4, 0);
        if (index >= max_index)
            return pc_error_set(c->err, PC_ERR_VALUE,
                                "ORT format: %s: node '%s' has index %u, not below max_node_index %u", where,
                                label(c, nt), index, max_index);
        slots[i] = (node_slot){index, nt};
    }
    qsort(slots, n_nodes, sizeof *slots, slot_cmp);
    for (uint32_t i = 1; i < n_nodes; i++)
        if (slots[i].index == slots[i - 1].index)
            return pc_error_set(c->err, PC_ERR_DUPLICATE_NAME,
                                "ORT format: %s: nodes '%s' and '%s' share index %u", where,
                                label(c, slots[i - 1].node), label(c, slots[i].node), slots[i].index);
    for (uint32_t i = 0; i < n_nodes; i++) {
        uint32_t nt = fb_vec_ref(c->b, nodes, i);
        char who[320];
        snprintf(who, sizeof who, "node '%s' (%s)", label(c, nt),
                 str(c, nt, N_OP_TYPE) ? str(c, nt, N_OP_TYPE) : "?");
        if (fb_field_i(c->b, nt, N_TYPE, 4, 0) != 0)
            return pc_error_set(c->err, PC_ERR_UNSUPPORTED,
                                "ORT format: %s: a fused node (its function is not in the file)", who);
        Onnx__NodeProto *np = palloc(c, 1, sizeof *np);
        if (!np) return nomem(c);
        onnx__node_proto__init(np);
        gp->node[gp->n_node++] = np;
        np->name = str(c, nt, N_NAME);
        np->doc_string = str(c, nt, N_DOC_STRING);
        np->domain = str(c, nt, N_DOMAIN);
        np->op_type = str(c, nt, N_OP_TYPE);
        int64_t since = fb_field_i(c->b, nt, N_SINCE_VERSION, 4, 0), opset = model_opset(c->mp, np->domain);
        if (since < 1 || (opset >= 1 && since > opset)) /* an opset below 1 is the converter's to name */
            return pc_error_set(c->err, PC_ERR_OPSET,
                                "ORT format: %s: since_version %lld outside 1..%lld (the model's opset)", who,
                                (long long)since, (long long)opset);
        uint32_t ins = fb_field_ref(c->b, nt, N_INPUTS), outs = fb_field_ref(c->b, nt, N_OUTPUTS);
        uint32_t implicit = fb_field_ref(c->b, nt, N_IMPLICIT_INPUTS);
        if ((st = strings_of(c, ins, &np->input, &np->n_input)) != PC_OK ||
            (st = strings_of(c, outs, &np->output, &np->n_output)) != PC_OK)
            return st;
        for (size_t k = 0; k < np->n_input; k++)
            if ((st = bound(c, scope, np->input[k], false, "input", who)) != PC_OK) return st;
        for (size_t k = 0; k < np->n_output; k++)
            if ((st = bound(c, scope, np->output[k], false, "output", who)) != PC_OK) return st;
        for (uint32_t k = 0; k < fb_vec_len(c->b, implicit); k++)
            if ((st = bound(c, scope, vec_str(c, implicit, k), true, "implicit input", who)) != PC_OK)
                return st;
        uint32_t counts = fb_field_ref(c->b, nt, N_INPUT_ARG_COUNTS);
        if (counts) {
            int64_t sum = 0;
            for (uint32_t k = 0; k < fb_vec_len(c->b, counts); k++) {
                int32_t v = (int32_t)fb_u32(c->b, counts + 4 + 4 * k);
                if (v < 0)
                    return pc_error_set(c->err, PC_ERR_ARITY, "ORT format: %s: input_arg_counts[%u] = %d",
                                        who, k, v);
                sum += v;
            }
            if (sum != (int64_t)np->n_input)
                return pc_error_set(c->err, PC_ERR_ARITY,
                                    "ORT format: %s: input_arg_counts sum to %lld for %zu inputs", who,
                                    (long long)sum, np->n_input);
        }
        uint32_t attrs = fb_field_ref(c->b, nt, N_ATTRIBUTES);
        np->n_attribute = fb_vec_len(c->b, attrs);
        if (!(np->attribute = palloc(c, np->n_attribute, sizeof *np->attribute))) return nomem(c);
        for (size_t k = 0; k < np->n_attribute; k++)
            if ((st = attribute_proto(c, fb_vec_ref(c->b, attrs, (uint32_t)k), scope, &np->attribute[k],
                                      label(c, nt))) != PC_OK)
                return st;
        const char *ep = str(c, nt, N_EP);
        if (ep && *ep) { /* the converter moves "pc_ep" metadata into the IR's EP assignment */
            Onnx__StringStringEntryProto *kv = palloc(c, 1, sizeof *kv);
            if (!kv || !(np->metadata_props = palloc(c, 1, sizeof *np->metadata_props))) return nomem(c);
            onnx__string_string_entry_proto__init(kv);
            kv->key = "pc_ep";
            kv->value = (char *)ep;
            np->metadata_props[0] = kv;
            np->n_metadata_props = 1;
        }
    }
    if ((st = check_edges(c, g, slots, n_nodes, where)) != PC_OK ||
        (st = check_records(c, g, slots, n_nodes, where)) != PC_OK)
        return st;
    /* value_info: the typed NodeArgs that are not graph inputs or outputs */
    gp->value_info = palloc(c, n_args, sizeof *gp->value_info);
    if (!gp->value_info) return nomem(c);
    for (uint32_t i = 0; i < n_args; i++) {
        uint32_t vi = fb_vec_ref(c->b, args, i);
        const char *name = str(c, vi, VI_NAME);
        if (!name || !*name || !fb_field_ref(c->b, vi, VI_TYPE)) continue;
        bool io = false;
        for (size_t k = 0; k < gp->n_input && !io; k++)
            io = strcmp(gp->input[k]->name, name) == 0;
        for (size_t k = 0; k < gp->n_output && !io; k++)
            io = strcmp(gp->output[k]->name, name) == 0;
        if (io) continue;
        if ((st = value_info_proto(c, vi, &gp->value_info[gp->n_value_info++], where)) != PC_OK) return st;
    }
    return PC_OK;
}

/* ---- the model */

/* Whether a node of gp or of its subgraphs is in domain d. */
static bool domain_used(const Onnx__GraphProto *gp, const char *d)
{
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        if (strcmp(np->domain ? np->domain : "", d) == 0) return true;
        for (size_t k = 0; k < np->n_attribute; k++) {
            const Onnx__AttributeProto *a = np->attribute[k];
            if (a->g && domain_used(a->g, d)) return true;
            for (size_t j = 0; j < a->n_graphs; j++)
                if (domain_used(a->graphs[j], d)) return true;
        }
    }
    return false;
}

bool pc_ort_detect(const uint8_t *data, size_t size)
{
    return size >= 8 && memcmp(data + 4, "ORTM", 4) == 0;
}

/* ort_version: 1-3 ASCII digits (no sign, space or trailing text, as std::stoi would accept), 5 or 6. */
static pc_status check_version(ort_ctx *c, uint32_t root)
{
    uint32_t len;
    const char *v = fb_field_str(c->b, root, IS_ORT_VERSION, &len);
    if (!v) return pc_error_set(c->err, PC_ERR_FORMAT_VERSION, "ORT format: ort_version is missing");
    bool digits = len >= 1 && len <= 3;
    for (uint32_t i = 0; i < len && digits; i++)
        digits = v[i] >= '0' && v[i] <= '9';
    if (!digits)
        return pc_error_set(c->err, PC_ERR_FORMAT_VERSION,
                            "ORT format: ort_version \"%.16s\" is not 1-3 digits", v);
    int version = atoi(v);
    if (version < 5 || version > 6)
        return pc_error_set(
            c->err, PC_ERR_FORMAT_VERSION,
            "ORT format: ort_version %d (this loader reads 5 and 6; older files carry kernel-def "
            "hashes, newer ones are unknown)",
            version);
    return PC_OK;
}

/* The schema an op id ("domain:op_type:since_version") names, or NULL when the table does not describe
 * exactly that version (contrib domains, opsets above the table, ids of another shape): nothing to check it
 * against. */
static const pc_op_schema *op_id_schema(const char *id)
{
    size_t n = strlen(id), since_at = n, op_at;
    while (since_at > 0 && id[since_at - 1] != ':')
        since_at--;
    if (since_at == 0) return NULL;
    op_at = since_at - 1;
    while (op_at > 0 && id[op_at - 1] != ':')
        op_at--;
    /* id: domain [0, op_at - 1), ':', op_type [op_at, since_at - 1), ':', since_version [since_at, n) */
    char domain[128], op_type[128];
    size_t domain_len = op_at ? op_at - 1 : 0, op_len = since_at - 1 - op_at;
    if (op_at == 0 || op_len == 0 || n - since_at == 0 || n - since_at > 4 || domain_len >= sizeof domain ||
        op_len >= sizeof op_type)
        return NULL;
    int since = 0;
    for (size_t i = since_at; i < n; i++) {
        if (id[i] < '0' || id[i] > '9') return NULL;
        since = since * 10 + (id[i] - '0');
    }
    memcpy(domain, id, domain_len);
    domain[domain_len] = '\0';
    memcpy(op_type, id + op_at, op_len);
    op_type[op_len] = '\0';
    const pc_domain_info *d = pc_schema_domain(domain);
    if (!d || !d->has_schemas || since > d->schema_max_opset) return NULL;
    const pc_op_schema *s = pc_schema_lookup(domain, op_type, since);
    return s && s->since_version == since ? s : NULL;
}

/* The kernel type string resolver: each (arg_type, index) names a formal input or output of its op, checked
 * where the schema table describes the op (it is dropped after: the IR has no kernels). */
static pc_status check_resolver(ort_ctx *c, uint32_t root)
{
    uint32_t r = fb_field_ref(c->b, root, IS_RESOLVER), ops = r ? fb_field_ref(c->b, r, 0) : 0;
    for (uint32_t i = 0; i < fb_vec_len(c->b, ops); i++) {
        uint32_t e = fb_vec_ref(c->b, ops, i), strs = fb_field_ref(c->b, e, 1);
        const char *id = str(c, e, 0);
        const pc_op_schema *s = id ? op_id_schema(id) : NULL;
        for (uint32_t j = 0; s && j < fb_vec_len(c->b, strs); j++) {
            uint32_t k = fb_vec_ref(c->b, strs, j), args = fb_field_ref(c->b, k, 1);
            for (uint32_t a = 0; a < fb_vec_len(c->b, args); a++) {
                uint32_t arg = fb_vec_ref(c->b, args, a);
                bool output = fb_field_u(c->b, arg, 0, 1, 0) == 1;
                uint32_t index = (uint32_t)fb_field_u(c->b, arg, 1, 4, 0);
                uint16_t n = output ? s->n_formal_outputs : s->n_formal_inputs;
                const char *side = output ? "output" : "input", *key = str(c, k, 0);
                if (index >= n)
                    return pc_error_set(c->err, PC_ERR_ARITY,
                                        "ORT format: kernel_type_str_resolver: op '%s', type string '%s': %s "
                                        "index %u, but %s-%d has %u formal %ss",
                                        id, key ? key : "", side, index, s->op_type, (int)s->since_version, n,
                                        side);
            }
        }
    }
    return PC_OK;
}

pc_status pc_ort_to_model_proto(const uint8_t *data, size_t size, pc_pb_allocator *alloc,
                                const pc_load_options *opts, Onnx__ModelProto **out, pc_error *err)
{
    *out = NULL;
    fb_verify_options vo;
    fb_verify_options_default(&vo);
    if (opts && opts->max_depth && opts->max_depth < vo.max_depth) vo.max_depth = opts->max_depth;
    if (opts && opts->max_messages && opts->max_messages < vo.max_tables) vo.max_tables = opts->max_messages;
    pc_status st = fb_verify(data, size, &pc_ort_schema, &vo, err);
    if (st != PC_OK) return st;
    ort_ctx c = {.b = data, .alloc = alloc, .max_tables = vo.max_tables, .err = err};
    pc_arena_init(&c.scratch, alloc->mem);
    uint32_t root = fb_root(data);
    if ((st = check_version(&c, root)) != PC_OK || (st = check_resolver(&c, root)) != PC_OK) goto done;
    uint32_t m = fb_field_ref(data, root, IS_MODEL);
    if (!m) {
        st = pc_error_set(err, PC_ERR_MISSING_FIELD, "ORT format: the file has no model");
        goto done;
    }
    Onnx__ModelProto *mp = palloc(&c, 1, sizeof *mp);
    if (!mp) {
        st = nomem(&c);
        goto done;
    }
    onnx__model_proto__init(mp);
    c.mp = mp;
    if (fb_field_pos(data, m, M_IR_VERSION)) {
        mp->has_ir_version = true;
        mp->ir_version = fb_field_i(data, m, M_IR_VERSION, 8, 0);
    }
    mp->producer_name = str(&c, m, M_PRODUCER_NAME);
    mp->producer_version = str(&c, m, M_PRODUCER_VERSION);
    mp->domain = str(&c, m, M_DOMAIN);
    mp->has_model_version = fb_field_pos(data, m, M_MODEL_VERSION) != 0;
    mp->model_version = fb_field_i(data, m, M_MODEL_VERSION, 8, 0);
    mp->doc_string = str(&c, m, M_DOC_STRING);
    uint32_t ops = fb_field_ref(data, m, M_OPSET_IMPORT);
    mp->n_opset_import = fb_vec_len(data, ops);
    mp->opset_import = palloc(&c, mp->n_opset_import, sizeof *mp->opset_import);
    uint32_t props = fb_field_ref(data, m, M_METADATA_PROPS);
    mp->n_metadata_props = fb_vec_len(data, props);
    mp->metadata_props = palloc(&c, mp->n_metadata_props, sizeof *mp->metadata_props);
    if (!mp->opset_import || !mp->metadata_props) {
        st = nomem(&c);
        goto done;
    }
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        uint32_t o = fb_vec_ref(data, ops, (uint32_t)i);
        Onnx__OperatorSetIdProto *op = palloc(&c, 1, sizeof *op);
        if (!op) {
            st = nomem(&c);
            goto done;
        }
        onnx__operator_set_id_proto__init(op);
        op->domain = str(&c, o, 0);
        op->has_version = fb_field_pos(data, o, 1) != 0;
        op->version = fb_field_i(data, o, 1, 8, 0);
        mp->opset_import[i] = op;
    }
    for (size_t i = 0; i < mp->n_metadata_props; i++) {
        uint32_t e = fb_vec_ref(data, props, (uint32_t)i);
        Onnx__StringStringEntryProto *kv = palloc(&c, 1, sizeof *kv);
        if (!kv) {
            st = nomem(&c);
            goto done;
        }
        onnx__string_string_entry_proto__init(kv);
        kv->key = str(&c, e, 0);
        kv->value = str(&c, e, 1);
        mp->metadata_props[i] = kv;
    }
    uint32_t g = fb_field_ref(data, m, M_GRAPH);
    if (!g) {
        st = pc_error_set(err, PC_ERR_MISSING_FIELD, "ORT format: the model has no graph");
        goto done;
    }
    if ((st = graph_proto(&c, g, NULL, &mp->graph, "the main graph")) != PC_OK) goto done;
    mp->graph->doc_string = str(&c, m, M_GRAPH_DOC_STRING);
    /* ONNX Runtime imports every domain it registers (ai.onnx.training, com.microsoft.nchwc, ...): those
     * passcheck does not know and no node uses are dropped, a documented difference from the file */
    size_t kept = 0;
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const char *d = mp->opset_import[i]->domain ? mp->opset_import[i]->domain : "";
        if (pc_schema_domain(strcmp(d, "ai.onnx") == 0 ? "" : d) || domain_used(mp->graph, d))
            mp->opset_import[kept++] = mp->opset_import[i];
    }
    mp->n_opset_import = kept;
    *out = mp;
done:
    pc_arena_free(&c.scratch);
    return st;
}
