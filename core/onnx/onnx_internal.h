/* Internal interfaces of the ONNX loader (core/onnx). Not part of the public API. */
#ifndef PC_ONNX_INTERNAL_H
#define PC_ONNX_INTERNAL_H

#include "core/passcheck.h"
#include "onnx.pb-c.h"

/* ---- protobuf wire reading: prescan.c checks the bytes with it, load.c splits checked bytes
 * -------------------- Inline: the pre-scan reads every key and length of the input through these. */
enum { PC_WT_VARINT = 0, PC_WT_FIXED64 = 1, PC_WT_LEN = 2, PC_WT_FIXED32 = 5 };

typedef enum pc_varint_read {
    PC_VARINT_OK,
    PC_VARINT_SHORT, /* [p, end) ends before the last byte */
    PC_VARINT_LONG,  /* more than max_len bytes */
} pc_varint_read;

/* Reads a varint of at most max_len (1..10) bytes from [*pp, end) and advances *pp past it (only when OK).
 * Unsigned shifts only: for a 10-byte varint the bits beyond 64 are dropped, as protobuf-c does. */
static inline pc_varint_read pc_wire_varint(const uint8_t **pp, const uint8_t *end, size_t max_len,
                                            uint64_t *out)
{
    const uint8_t *p = *pp;
    if (p != end && *p < 0x80) { /* one byte: nearly every key and short length */
        *out = *p;
        *pp = p + 1;
        return PC_VARINT_OK;
    }
    size_t avail = (size_t)(end - p);
    size_t n = avail < max_len ? avail : max_len;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t b = p[i];
        v |= (b & 0x7fu) << (7 * i);
        if (b < 0x80) {
            *out = v;
            *pp = p + i + 1;
            return PC_VARINT_OK;
        }
    }
    return n == max_len ? PC_VARINT_LONG : PC_VARINT_SHORT;
}

/* Reads a field key (a varint of at most 5 bytes: 29-bit field number, 3-bit wire type). */
static inline pc_varint_read pc_wire_key(const uint8_t **pp, const uint8_t *end, uint64_t *number,
                                         unsigned *wire_type)
{
    uint64_t key;
    pc_varint_read r = pc_wire_varint(pp, end, 5, &key);
    if (r == PC_VARINT_OK) {
        *number = key >> 3;
        *wire_type = (unsigned)(key & 7u);
    }
    return r;
}

/* ---- prescan.c: iterative wire-level check run before protobuf_c_message_unpack
 * ------------------------------- Walks the bytes with an explicit stack (no recursion) against the message
 * descriptors and rejects, with a specific status and a message naming the message type, field number and
 * byte offset: PC_ERR_TRUNCATED     input empty, or ends inside a key, a varint, a fixed-width value or a
 * top-level field; PC_ERR_VARINT        varint longer than 10 bytes (keys: longer than 5 bytes);
 *   PC_ERR_LENGTH        length prefix > INT_MAX, or running past the end of its enclosing message;
 *   PC_ERR_WIRE          wire type 3/4/6/7, field number 0 or > 2^29-1, wrong wire type for a known field,
 *                        packed payload ending mid-element;
 *   PC_ERR_UNSUPPORTED   a field number the descriptor does not know (we would lose it on save);
 *   PC_ERR_NESTING       sub-message depth above limits->max_depth;
 *   PC_ERR_BUDGET        more than limits->max_messages sub-messages + repeated elements (amplification
 * guard); PC_ERR_EMBEDDED_NUL  a NUL byte inside a `string` field (protobuf-c would silently truncate it).
 */
typedef struct pc_prescan_limits {
    uint32_t max_depth;
    uint64_t max_messages;
} pc_prescan_limits;

typedef struct pc_prescan_stats {
    uint64_t messages;  /* sub-messages seen (root excluded) */
    uint64_t elements;  /* repeated elements seen, packed ones included */
    uint32_t max_depth; /* deepest nesting seen (root = 0) */
} pc_prescan_stats;

pc_status pc_pb_prescan(const uint8_t *data, size_t size, const ProtobufCMessageDescriptor *root,
                        const pc_prescan_limits *limits, pc_prescan_stats *stats, pc_error *err);

/* ---- pballoc.c: a ProtobufCAllocator over a pc_mem (budget + OOM injection) -------------------------------
 * Pass &allocator.base to protobuf-c. Do not call *_free_unpacked: pc_pb_allocator_release drops every block
 * at once (small blocks live in an arena; large ones are freed unless taken). */
typedef struct pc_pb_large {
    void *ptr;
    int state;
} pc_pb_large;

typedef struct pc_pb_allocator {
    ProtobufCAllocator base;
    pc_mem *mem;
    pc_arena small;
    pc_pb_large *large; /* open-addressing set of the large blocks */
    size_t n_large, cap_large;
} pc_pb_allocator;

void pc_pb_allocator_init(pc_pb_allocator *allocator, pc_mem *mem);
/* Hands a block to the caller as a pc_mem allocation of `size` bytes: a large block is adopted as is, a small
 * one is copied. NULL when the copy cannot be allocated. */
void *pc_pb_allocator_take(pc_pb_allocator *allocator, void *ptr, size_t size);
void pc_pb_allocator_release(pc_pb_allocator *allocator);

/* ---- extdata.c: external tensor data ----------------------------------------------------------------------
 * Reads the payload of a TensorProto with data_location = EXTERNAL.
 *   base_dir        folder of the model file; NULL when the model came from memory (always rejected);
 *   entries         the tensor's external_data key/value pairs (location, offset, length, checksum);
 *   expected_bytes  the payload size its dtype and dims require;
 *   *out            receives a buffer of expected_bytes allocated with pc_mem_alloc(mem, ...).
 * Rejects with PC_ERR_EXTERNAL_DATA (message naming the key and the offending value): missing/empty location,
 * absolute paths, backslashes, drive prefixes, any `..` component, NUL, ORT's `*_ORT_MEM_ADDR_*` sentinel,
 * symlinks (final component or any parent escaping base_dir), non-regular files, hard-link count > 1,
 * duplicate or unknown keys, offset/length that are not plain non-negative decimals or overflow, ranges past
 * the end of the file, and length != expected_bytes. Opens with O_NOFOLLOW|O_CLOEXEC and compares the fstat
 * of the opened file with the checked path (TOCTOU). PC_ERR_IO for read failures, PC_ERR_NOMEM/BUDGET when
 * the buffer cannot be allocated. */
pc_status pc_extdata_read(const char *base_dir, const pc_kv *entries, size_t n_entries, size_t expected_bytes,
                          pc_mem *mem, void **out, pc_error *err);

/* ---- load.c, for data.c: one TensorProto (unpacked through pb) into a tensor owned by `owner`
 * ---------------- */
pc_status pc_onnx_convert_tensor(pc_model *owner, pc_pb_allocator *pb, Onnx__TensorProto *tp, pc_tensor **out,
                                 const char *where, pc_error *err);

#endif
