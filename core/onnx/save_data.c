/* Runtime tensors written as standalone TensorProto files (the backend test data's input_N.pb form), so repro
 * folders carry their inputs in the format every ONNX tool reads. Same writing discipline as
 * pc_model_save_file (pc_file_write_atomic_bytes). */
#include <stdlib.h>

#include "core/internal.h"
#include "core/onnx/onnx_internal.h"

pc_status pc_data_save_file(const pc_data *d, const char *name, const char *path, pc_error *err)
{
    pc_error_clear(err);
    if (!d || d->kind != PC_TYPE_TENSOR)
        return pc_error_set(err, PC_ERR_UNSUPPORTED, "%s: only tensors can be saved (value '%s' is a %s)",
                            path, name ? name : "",
                            d && d->kind == PC_TYPE_SEQUENCE ? "sequence" : "non-tensor value");
    if (d->rank < 0)
        return pc_error_set(err, PC_ERR_INTERNAL, "%s: tensor '%s' has negative rank", path, name);
    Onnx__TensorProto tp;
    onnx__tensor_proto__init(&tp);
    tp.name = (char *)(name ? name : "");
    tp.has_data_type = 1;
    tp.data_type = (int32_t)d->dtype;
    tp.n_dims = (size_t)d->rank;
    tp.dims = d->rank ? d->dims : NULL;
    ProtobufCBinaryData *strings = NULL;
    if (d->dtype == PC_DTYPE_STRING) {
        if (d->n_elements) {
            if (d->n_elements > SIZE_MAX / sizeof *strings)
                return pc_error_set(err, PC_ERR_OVERFLOW, "%s: tensor '%s' has too many strings", path,
                                    tp.name);
            strings = malloc((size_t)d->n_elements * sizeof *strings);
            if (!strings) return pc_error_set(err, PC_ERR_NOMEM, "%s: out of memory", path);
            const pc_bytes *s = d->data;
            for (uint64_t i = 0; i < d->n_elements; i++) {
                strings[i].len = s[i].len;
                strings[i].data = s[i].data;
            }
            tp.string_data = strings;
            tp.n_string_data = (size_t)d->n_elements;
        }
    } else if (d->n_bytes) {
        /* raw_data like the model saver: exact for every element type, sub-byte types already packed */
        tp.has_raw_data = 1;
        tp.raw_data.len = d->n_bytes;
        tp.raw_data.data = d->data;
    }
    size_t size = protobuf_c_message_get_packed_size(&tp.base);
    uint8_t *buf = malloc(size ? size : 1);
    pc_status st;
    if (!buf) {
        st = pc_error_set(err, PC_ERR_NOMEM, "%s: out of memory allocating %zu bytes", path, size);
    } else if (protobuf_c_message_pack(&tp.base, buf) != size) {
        st = pc_error_set(err, PC_ERR_INTERNAL, "%s: packed size differs from the computed size", path);
    } else {
        st = pc_file_write_atomic_bytes(path, 0, buf, size, err);
    }
    free(buf);
    free(strings);
    return st;
}
