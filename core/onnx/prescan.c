/* Wire-level pre-scan of protobuf bytes, run before protobuf_c_message_unpack.
 *
 * protobuf-c 1.4.1 unpacks sub-messages recursively with no depth limit (about 10,000 levels overflow an 8 MB
 * stack), keeps unknown fields, truncates strings at an embedded NUL, accepts field 0 in a multi-byte key and
 * turns a few bytes per element into large structs. This pass walks the same bytes once, iteratively, against
 * the same descriptors and rejects all of that with a precise status, so unpack only sees input it handles
 * safely. It never allocates per element: the only allocation is the stack of enclosing messages.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/onnx/onnx_internal.h"

#define MAX_FIELD_NUMBER 536870911u /* 2^29 - 1 */
#define NO_FIELD         UINT64_MAX /* error not tied to a field number */

static const char *const wire_type_names[8] = {
    "varint", "fixed64", "length-delimited", "start-group", "end-group", "fixed32", "invalid 6", "invalid 7",
};

/* The wire type each declared type is encoded with (unpacked). */
static const unsigned char natural_wire_type[PROTOBUF_C_TYPE_MESSAGE + 1] = {
    [PROTOBUF_C_TYPE_INT32] = PC_WT_VARINT,     [PROTOBUF_C_TYPE_SINT32] = PC_WT_VARINT,
    [PROTOBUF_C_TYPE_SFIXED32] = PC_WT_FIXED32, [PROTOBUF_C_TYPE_INT64] = PC_WT_VARINT,
    [PROTOBUF_C_TYPE_SINT64] = PC_WT_VARINT,    [PROTOBUF_C_TYPE_SFIXED64] = PC_WT_FIXED64,
    [PROTOBUF_C_TYPE_UINT32] = PC_WT_VARINT,    [PROTOBUF_C_TYPE_FIXED32] = PC_WT_FIXED32,
    [PROTOBUF_C_TYPE_UINT64] = PC_WT_VARINT,    [PROTOBUF_C_TYPE_FIXED64] = PC_WT_FIXED64,
    [PROTOBUF_C_TYPE_FLOAT] = PC_WT_FIXED32,    [PROTOBUF_C_TYPE_DOUBLE] = PC_WT_FIXED64,
    [PROTOBUF_C_TYPE_BOOL] = PC_WT_VARINT,      [PROTOBUF_C_TYPE_ENUM] = PC_WT_VARINT,
    [PROTOBUF_C_TYPE_STRING] = PC_WT_LEN,       [PROTOBUF_C_TYPE_BYTES] = PC_WT_LEN,
    [PROTOBUF_C_TYPE_MESSAGE] = PC_WT_LEN,
};

static const char *const type_names[PROTOBUF_C_TYPE_MESSAGE + 1] = {
    "int32",   "sint32", "sfixed32", "int64", "sint64", "sfixed64", "uint32", "fixed32", "uint64",
    "fixed64", "float",  "double",   "bool",  "enum",   "string",   "bytes",  "message",
};

/* An enclosing message: restored when the walk reaches the end of the current sub-message. */
typedef struct prescan_frame {
    const ProtobufCMessageDescriptor *desc;
    const uint8_t *end;
} prescan_frame;

/* protobuf_c_message_descriptor_get_field without the library call (it ran once per field of the input): a
 * descriptor lists its fields as runs of consecutive numbers (field_ranges, closed by a sentinel whose
 * orig_index is n_fields), one to a few runs for ONNX's messages; same result as protobuf-c's binary search.
 */
static inline const ProtobufCFieldDescriptor *field_by_number(const ProtobufCMessageDescriptor *desc,
                                                              uint64_t number)
{
    const ProtobufCIntRange *r = desc->field_ranges;
    for (unsigned i = 0; i < desc->n_field_ranges; i++) {
        uint64_t start = (uint64_t)r[i].start_value,
                 count = (uint64_t)(r[i + 1].orig_index - r[i].orig_index);
        if (number >= start && number - start < count)
            return &desc->fields[r[i].orig_index + (number - start)];
    }
    return NULL;
}

/* Formats "<message type> field N (name) at byte offset X: <detail>". */
static pc_status fail(pc_error *err, pc_status status, const ProtobufCMessageDescriptor *desc,
                      uint64_t number, const ProtobufCFieldDescriptor *field, size_t offset, const char *fmt,
                      ...) PC_PRINTF(7, 8);

static pc_status fail(pc_error *err, pc_status status, const ProtobufCMessageDescriptor *desc,
                      uint64_t number, const ProtobufCFieldDescriptor *field, size_t offset, const char *fmt,
                      ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (number == NO_FIELD)
        return pc_error_set(err, status, "%s at byte offset %zu: %s", desc->name, offset, detail);
    if (field)
        return pc_error_set(err, status, "%s field %llu (%s) at byte offset %zu: %s", desc->name,
                            (unsigned long long)number, field->name, offset, detail);
    return pc_error_set(err, status, "%s field %llu at byte offset %zu: %s", desc->name,
                        (unsigned long long)number, offset, detail);
}

/* Data running past the end of the current message: at the top level the input itself ends (truncated file);
 * deeper down a sub-message's length prefix cuts its own content, which is a bad length, not a short file. */
static pc_status fail_cut(pc_error *err, size_t depth, const ProtobufCMessageDescriptor *desc,
                          uint64_t number, const ProtobufCFieldDescriptor *field, size_t offset,
                          const char *what, size_t msg_end)
{
    if (depth == 0)
        return fail(err, PC_ERR_TRUNCATED, desc, number, field, offset,
                    "input ends inside %s (input size %zu bytes)", what, msg_end);
    return fail(err, PC_ERR_LENGTH, desc, number, field, offset,
                "%s runs past the end of the enclosing %s (which ends at byte offset %zu)", what, desc->name,
                msg_end);
}

pc_status pc_pb_prescan(const uint8_t *data, size_t size, const ProtobufCMessageDescriptor *root,
                        const pc_prescan_limits *limits, pc_prescan_stats *stats, pc_error *err)
{
    if (stats) memset(stats, 0, sizeof *stats);
    if (!root || !limits || (!data && size > 0))
        return pc_error_set(err, PC_ERR_USAGE, "pc_pb_prescan: NULL %s",
                            !root     ? "root descriptor"
                            : !limits ? "limits"
                                      : "data");
    if (size == 0)
        return pc_error_set(err, PC_ERR_TRUNCATED, "empty input (expected a serialized %s)", root->name);

    const uint64_t max_messages = limits->max_messages;
    const size_t max_depth = limits->max_depth;
    const uint8_t *p = data;
    const ProtobufCMessageDescriptor *desc = root; /* current message */
    const uint8_t *end = data + size;              /* end of the current message */
    prescan_frame *stack = NULL;                   /* enclosing messages; stack[depth - 1] is the parent */
    size_t cap = 0, depth = 0, deepest = 0;
    uint64_t n_messages = 0, n_elements = 0;
    pc_status st = PC_OK;

    for (;;) {
        if (p == end) {
            if (depth == 0) break;
            depth--;
            desc = stack[depth].desc;
            end = stack[depth].end;
            continue;
        }

        /* Key: at most 5 bytes, one in the common case (fields 1..15). */
        const size_t key_off = (size_t)(p - data);
        uint64_t number;
        unsigned wire_type;
        pc_varint_read kr = pc_wire_key(&p, end, &number, &wire_type);
        if (kr == PC_VARINT_LONG) {
            st = fail(err, PC_ERR_VARINT, desc, NO_FIELD, NULL, key_off, "field key longer than 5 bytes");
            goto out;
        }
        if (kr == PC_VARINT_SHORT) {
            st = fail_cut(err, depth, desc, NO_FIELD, NULL, key_off, "a field key", (size_t)(end - data));
            goto out;
        }
        if (number == 0 || number > MAX_FIELD_NUMBER) {
            st = fail(err, PC_ERR_WIRE, desc, number, NULL, key_off,
                      "field number outside 1..2^29-1 (wire type %s)", wire_type_names[wire_type]);
            goto out;
        }
        const ProtobufCFieldDescriptor *field = field_by_number(desc, number);
        if (wire_type != PC_WT_VARINT && wire_type != PC_WT_FIXED64 && wire_type != PC_WT_LEN &&
            wire_type != PC_WT_FIXED32) {
            st = fail(err, PC_ERR_WIRE, desc, number, field, key_off, "wire type %u (%s) is not accepted",
                      wire_type, wire_type_names[wire_type]);
            goto out;
        }
        if (!field) {
            st = pc_error_set(
                err, PC_ERR_UNSUPPORTED,
                "unknown field %llu in %s at byte offset %zu (not modelled by passcheck; refusing to "
                "drop it)",
                (unsigned long long)number, desc->name, key_off);
            goto out;
        }
        if ((unsigned)field->type > PROTOBUF_C_TYPE_MESSAGE) {
            st = fail(err, PC_ERR_INTERNAL, desc, number, field, key_off, "descriptor has unknown type %d",
                      (int)field->type);
            goto out;
        }
        const unsigned natural = natural_wire_type[field->type];
        const bool repeated = field->label == PROTOBUF_C_LABEL_REPEATED;
        /* A repeated scalar may also arrive packed in one length-delimited record. */
        if (wire_type != natural && !(wire_type == PC_WT_LEN && repeated && natural != PC_WT_LEN)) {
            st = fail(err, PC_ERR_WIRE, desc, number, field, key_off,
                      "wire type %u (%s), but the field is %s%s, encoded as %s%s", wire_type,
                      wire_type_names[wire_type], repeated ? "repeated " : "", type_names[field->type],
                      wire_type_names[natural], repeated && natural != PC_WT_LEN ? " or packed" : "");
            goto out;
        }

        const ProtobufCMessageDescriptor *const owner = desc; /* desc changes when a sub-message is entered */
        uint64_t msgs = 0, elems = 0;                         /* what this field adds to the budget */
        switch (wire_type) {
        case PC_WT_VARINT: {
            uint64_t ignored;
            pc_varint_read r = pc_wire_varint(&p, end, 10, &ignored);
            if (r == PC_VARINT_LONG) {
                st = fail(err, PC_ERR_VARINT, desc, number, field, key_off, "varint longer than 10 bytes");
                goto out;
            }
            if (r == PC_VARINT_SHORT) {
                st = fail_cut(err, depth, desc, number, field, key_off, "a varint value",
                              (size_t)(end - data));
                goto out;
            }
            elems = repeated;
            break;
        }
        case PC_WT_FIXED64:
        case PC_WT_FIXED32: {
            size_t width = wire_type == PC_WT_FIXED64 ? 8 : 4;
            if ((size_t)(end - p) < width) {
                st = fail_cut(err, depth, desc, number, field, key_off,
                              width == 8 ? "a fixed64 value" : "a fixed32 value", (size_t)(end - data));
                goto out;
            }
            p += width;
            elems = repeated;
            break;
        }
        default: { /* PC_WT_LEN */
            const uint8_t *len_at = p;
            uint64_t len;
            pc_varint_read r = pc_wire_varint(&p, end, 10, &len);
            if (r == PC_VARINT_LONG) {
                st = fail(err, PC_ERR_VARINT, desc, number, field, key_off,
                          "length prefix longer than 10 bytes");
                goto out;
            }
            if (r == PC_VARINT_SHORT) {
                st = fail_cut(err, depth, desc, number, field, key_off, "a length prefix",
                              (size_t)(end - data));
                goto out;
            }
            /* protobuf-c reads length prefixes of at most 5 bytes; a padded longer one would fail unpack. */
            if (p - len_at > 5) {
                st = fail(err, PC_ERR_LENGTH, desc, number, field, key_off,
                          "length prefix is %td bytes long (at most 5 accepted)", p - len_at);
                goto out;
            }
            if (len > INT_MAX) {
                st = fail(err, PC_ERR_LENGTH, desc, number, field, key_off, "length %llu is above INT_MAX",
                          (unsigned long long)len);
                goto out;
            }
            const size_t avail = (size_t)(end - p);
            if (len > avail) {
                if (depth == 0)
                    st = fail(err, PC_ERR_TRUNCATED, desc, number, field, key_off,
                              "length %llu runs past the end of the input (%zu bytes left)",
                              (unsigned long long)len, avail);
                else
                    st = fail(err, PC_ERR_LENGTH, desc, number, field, key_off,
                              "length %llu runs past the end of the enclosing %s (%zu bytes left)",
                              (unsigned long long)len, desc->name, avail);
                goto out;
            }
            const size_t n = (size_t)len;

            if (field->type == PROTOBUF_C_TYPE_MESSAGE) {
                /* Checked before descending, so the stack never holds more than max_depth parents. */
                if (depth + 1 > max_depth) {
                    st = fail(err, PC_ERR_NESTING, desc, number, field, key_off,
                              "sub-message %s at depth %zu exceeds the nesting limit of %zu",
                              ((const ProtobufCMessageDescriptor *)field->descriptor)->name, depth + 1,
                              max_depth);
                    goto out;
                }
                if (depth == cap) {
                    size_t new_cap = cap ? cap * 2 : 16;
                    if (new_cap > max_depth) new_cap = max_depth;
                    size_t bytes;
                    prescan_frame *grown = NULL;
                    if (pc_size_mul(new_cap, sizeof *stack, &bytes)) grown = realloc(stack, bytes);
                    if (!grown) {
                        st = fail(err, PC_ERR_NOMEM, desc, number, field, key_off,
                                  "cannot grow the pre-scan stack to %zu levels", new_cap);
                        goto out;
                    }
                    stack = grown;
                    cap = new_cap;
                }
                stack[depth].desc = desc;
                stack[depth].end = end;
                depth++;
                if (depth > deepest) deepest = depth;
                desc = field->descriptor;
                end = p + n;
                msgs = 1;
                elems = repeated;
                break; /* p stays at the payload: the walk continues inside the sub-message */
            }

            if (natural == PC_WT_LEN) { /* string or bytes: skipped without reading, except the NUL scan */
                if (field->type == PROTOBUF_C_TYPE_STRING) {
                    const uint8_t *nul = memchr(p, 0, n);
                    if (nul) {
                        st = fail(err, PC_ERR_EMBEDDED_NUL, desc, number, field, key_off,
                                  "string of %zu bytes has a NUL byte at byte offset %zu", n,
                                  (size_t)(nul - data));
                        goto out;
                    }
                }
                elems = repeated;
            } else if (natural == PC_WT_VARINT) { /* packed varints: each complete and at most 10 bytes */
                size_t run = 0;
                for (size_t i = 0; i < n; i++) {
                    if (p[i] & 0x80) {
                        if (++run == 10) {
                            st = fail(err, PC_ERR_VARINT, desc, number, field, key_off,
                                      "packed element at byte offset %zu is longer than 10 bytes",
                                      (size_t)(p + i + 1 - run - data));
                            goto out;
                        }
                    } else {
                        run = 0;
                        elems++;
                    }
                }
                if (run) {
                    st = fail(err, PC_ERR_WIRE, desc, number, field, key_off,
                              "packed payload of %zu bytes ends inside a varint element", n);
                    goto out;
                }
            } else { /* packed fixed32 / fixed64 */
                size_t width = natural == PC_WT_FIXED64 ? 8 : 4;
                if (n % width) {
                    st = fail(err, PC_ERR_WIRE, desc, number, field, key_off,
                              "packed payload of %zu bytes is not a multiple of %zu", n, width);
                    goto out;
                }
                elems = n / width;
            }
            p += n;
            break;
        }
        }

        /* Each count is below the input size, so the sum cannot wrap. */
        n_messages += msgs;
        n_elements += elems;
        if ((msgs | elems) && n_messages + n_elements > max_messages) {
            st = fail(err, PC_ERR_BUDGET, owner, number, field, key_off,
                      "more than %llu sub-messages and repeated elements (pre-scan budget)",
                      (unsigned long long)max_messages);
            goto out;
        }
    }

out:
    free(stack);
    if (stats) {
        stats->messages = n_messages;
        stats->elements = n_elements;
        stats->max_depth = (uint32_t)deepest;
    }
    return st;
}
