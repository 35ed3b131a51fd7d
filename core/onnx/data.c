/* Backend-test data files (input_N.pb / output_N.pb) decoded into runtime values: a TensorProto, or a
 * SequenceProto / OptionalProto when the graph declares the value as a sequence or an optional. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/onnx/onnx_internal.h"

enum {
    DATA_ELEM_TENSOR = 1,
    DATA_ELEM_SPARSE = 2,
    DATA_ELEM_SEQUENCE = 3,
    DATA_ELEM_MAP = 4,
    DATA_ELEM_OPTIONAL = 5
};
enum { DATA_FILE_LIMIT = 1 << 30 };

typedef struct data_ctx {
    pc_model *owner; /* scratch model: budgets the unpack and owns converted tensors until they are cloned */
    pc_pb_allocator *pb;
    pc_error *err;
} data_ctx;

static pc_status tensor_value(data_ctx *c, Onnx__TensorProto *tp, const char *where, pc_data **out)
{
    pc_tensor *t;
    pc_status st = pc_onnx_convert_tensor(c->owner, c->pb, tp, &t, where, c->err);
    if (st != PC_OK) return st;
    /* the scratch model goes away: the value must own its bytes */
    pc_data *wrapped = pc_data_wrap_tensor(t, c->err);
    if (!wrapped) return c->err->status;
    *out = pc_data_clone(wrapped, c->err);
    pc_data_unref(wrapped);
    return *out ? PC_OK : c->err->status;
}

static pc_dtype inner_dtype(const pc_type *t)
{
    while (t && (t->kind == PC_TYPE_SEQUENCE || t->kind == PC_TYPE_OPTIONAL))
        t = t->inner;
    return t && t->kind == PC_TYPE_TENSOR ? t->elem : PC_DTYPE_UNDEFINED;
}

static pc_status sequence_value(data_ctx *c, Onnx__SequenceProto *sp, const pc_type *expected, uint32_t depth,
                                pc_data **out);

static pc_status optional_value(data_ctx *c, Onnx__OptionalProto *op, const pc_type *expected, uint32_t depth,
                                pc_data **out)
{
    const pc_type *inner = expected ? expected->inner : NULL;
    pc_data *item = NULL;
    pc_type_kind item_kind = inner && inner->kind == PC_TYPE_SEQUENCE ? PC_TYPE_SEQUENCE : PC_TYPE_TENSOR;
    pc_status st = PC_OK;
    if (op->sparse_tensor_value || op->map_value || op->optional_value)
        return pc_error_set(c->err, PC_ERR_UNSUPPORTED,
                            "optional '%s' holds a sparse tensor, map or optional (unsupported)",
                            op->name ? op->name : "");
    if (op->tensor_value) {
        item_kind = PC_TYPE_TENSOR;
        st = tensor_value(c, op->tensor_value, "optional value", &item);
    } else if (op->sequence_value) {
        item_kind = PC_TYPE_SEQUENCE;
        st = sequence_value(c, op->sequence_value, inner, depth + 1, &item);
    }
    if (st != PC_OK) return st;
    pc_dtype dtype = item && item->kind == PC_TYPE_TENSOR ? item->dtype : inner_dtype(inner);
    *out = pc_data_new_optional(item_kind, dtype, item, c->err);
    pc_data_unref(item);
    return *out ? PC_OK : c->err->status;
}

static pc_status sequence_value(data_ctx *c, Onnx__SequenceProto *sp, const pc_type *expected, uint32_t depth,
                                pc_data **out)
{
    *out = NULL;
    if (depth > 16) return pc_error_set(c->err, PC_ERR_NESTING, "sequences nested deeper than 16 levels");
    const pc_type *inner = expected && expected->kind == PC_TYPE_SEQUENCE ? expected->inner : NULL;
    if (sp->n_sparse_tensor_values || sp->n_map_values || sp->n_optional_values)
        return pc_error_set(c->err, PC_ERR_UNSUPPORTED,
                            "sequence '%s' holds sparse tensors, maps or optionals (unsupported)",
                            sp->name ? sp->name : "");
    if (sp->n_tensor_values && sp->n_sequence_values)
        return pc_error_set(c->err, PC_ERR_TYPE, "sequence '%s' mixes tensors and sequences",
                            sp->name ? sp->name : "");
    size_t n = sp->n_tensor_values + sp->n_sequence_values;
    if (n > UINT32_MAX) return pc_error_set(c->err, PC_ERR_BUDGET, "sequence has too many elements");
    pc_type_kind item_kind =
        sp->n_sequence_values || (sp->has_elem_type && sp->elem_type == DATA_ELEM_SEQUENCE) ? PC_TYPE_SEQUENCE
                                                                                            : PC_TYPE_TENSOR;
    pc_data **items = n ? calloc(n, sizeof *items) : NULL;
    if (n && !items) return pc_error_set(c->err, PC_ERR_NOMEM, "out of memory reading a sequence");
    pc_status st = PC_OK;
    for (size_t i = 0; i < sp->n_tensor_values && st == PC_OK; i++) {
        char where[64];
        snprintf(where, sizeof where, "sequence element %zu", i);
        st = tensor_value(c, sp->tensor_values[i], where, &items[i]);
        if (st == PC_OK && i && items[i]->dtype != items[0]->dtype)
            st = pc_error_set(c->err, PC_ERR_TYPE, "sequence element %zu is %s, element 0 is %s", i,
                              pc_dtype_name(items[i]->dtype), pc_dtype_name(items[0]->dtype));
    }
    for (size_t i = 0; i < sp->n_sequence_values && st == PC_OK; i++)
        st = sequence_value(c, sp->sequence_values[i], inner, depth + 1, &items[i]);
    if (st == PC_OK) {
        pc_dtype dtype = n && items[0]->kind == PC_TYPE_TENSOR ? items[0]->dtype
                         : n                                   ? items[0]->dtype
                                                               : inner_dtype(inner);
        *out = pc_data_new_sequence(item_kind, dtype, (uint32_t)n, items, c->err);
        if (!*out) st = c->err->status;
    }
    for (size_t i = 0; i < n; i++)
        pc_data_unref(items[i]);
    free(items);
    return st;
}

pc_status pc_data_load_file(const char *path, const pc_type *expected, pc_data **out, pc_error *err)
{
    pc_error local;
    if (!err) err = &local;
    *out = NULL;
    pc_type_kind kind = expected ? expected->kind : PC_TYPE_TENSOR;
    const ProtobufCMessageDescriptor *desc = kind == PC_TYPE_SEQUENCE   ? &onnx__sequence_proto__descriptor
                                             : kind == PC_TYPE_OPTIONAL ? &onnx__optional_proto__descriptor
                                                                        : &onnx__tensor_proto__descriptor;
    char *text;
    size_t size;
    pc_status st = pc_file_read_all(path, DATA_FILE_LIMIT, &text, &size, err); /* errors name the file */
    if (st != PC_OK) return st;
    uint8_t *bytes = (uint8_t *)text;
    pc_prescan_limits limits = {64, 64u << 20};
    if (size && (st = pc_pb_prescan(bytes, size, desc, &limits, NULL, err)) != PC_OK) {
        free(bytes);
        pc_error_prefix(err, "%s: ", path);
        return st;
    }
    pc_model *owner;
    if ((st = pc_model_create(&owner, err)) != PC_OK) {
        free(bytes);
        return st;
    }
    pc_pb_allocator alloc;
    pc_pb_allocator_init(&alloc, &owner->mem);
    ProtobufCMessage *msg = protobuf_c_message_unpack(desc, &alloc.base, size, bytes);
    free(bytes);
    data_ctx c = {owner, &alloc, err};
    if (!msg) {
        st = pc_error_set(err, owner->mem.failed ? PC_ERR_NOMEM : PC_ERR_WIRE,
                          "protobuf-c rejected the %s encoding", desc->short_name);
    } else if (kind == PC_TYPE_SEQUENCE) {
        st = sequence_value(&c, (Onnx__SequenceProto *)msg, expected, 0, out);
    } else if (kind == PC_TYPE_OPTIONAL) {
        st = optional_value(&c, (Onnx__OptionalProto *)msg, expected, 0, out);
    } else {
        st = tensor_value(&c, (Onnx__TensorProto *)msg, "tensor", out);
    }
    pc_pb_allocator_release(&alloc);
    pc_model_free(owner);
    if (st != PC_OK) {
        pc_data_unref(*out);
        *out = NULL;
        pc_error_prefix(err, "%s: ", path);
    }
    return st;
}
