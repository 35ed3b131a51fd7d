/* FlatBuffers, verify then read (core/ort): a schema given as data, one verifier that walks a buffer against
 * it, and the accessors the ORT loader reads a verified buffer with.
 *
 *     fb_verify_options o;
 *     fb_verify_options_default(&o);
 *     if (fb_verify(data, size, &pc_ort_schema, &o, &err) != PC_OK) return err.status;   // names byte + path
 *     uint32_t root = fb_root(data);                       // InferenceSession
 *     uint32_t model = fb_table_ref(data, root, 1);        // its field 1, or 0 when absent
 *
 * Nothing is read before fb_verify has checked it: every uoffset (non-zero, 4-aligned, forward, in the
 * buffer), every vtable (in the buffer, 2-aligned, 4 <= vsize even, 4 <= tsize, the table inside the buffer),
 * every field (inside its table's tsize, aligned to its width), every vector (count x element size inside the
 * buffer, wide elements aligned unless empty), every string (NUL-terminated inside the buffer, no NUL
 * inside), every union (tag known, tag NONE exactly when there is no value), every enum (in its range), every
 * field id (known to the schema). Beyond Google's verifier: zero offsets inside vectors of tables or strings,
 * and objects that overlap: no two tables, vectors or strings may share a byte, except a string referenced
 * twice (writers share names) — so a small file cannot describe an exponentially large tree, and the number
 * of tables visited is at most the number in the file. Depth and table count are budgeted.
 *
 * All reads go through byte assembly (little-endian, any alignment). */
#ifndef PC_ORT_FB_H
#define PC_ORT_FB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"

typedef enum fb_kind {
    FB_SCALAR,     /* `width` bytes; `is_signed`; an enum or bool when lo <= hi: value in [lo, hi] */
    FB_STRING,     /* uoffset to a string */
    FB_TABLE,      /* uoffset to a table of schema table `sub` */
    FB_VEC_SCALAR, /* uoffset to a vector of `width`-byte scalars */
    FB_VEC_STRING, /* uoffset to a vector of uoffsets to strings */
    FB_VEC_TABLE,  /* uoffset to a vector of uoffsets to tables of `sub` */
    FB_VEC_STRUCT, /* uoffset to a vector of `width`-byte structs aligned to `align` */
    FB_UNION_TYPE, /* u8 tag of the union that is the next field; 0 = NONE */
    FB_UNION,      /* uoffset to a table of union_subs[tag - 1] */
} fb_kind;

typedef struct fb_field {
    const char *name;
    uint8_t kind;  /* fb_kind */
    uint8_t width; /* scalars: 1, 2, 4, 8; vector elements; struct size */
    uint8_t align; /* FB_VEC_STRUCT: the struct's alignment */
    bool is_signed;
    int16_t sub;               /* FB_TABLE, FB_VEC_TABLE: the table's index in the schema */
    const int16_t *union_subs; /* FB_UNION: table index per tag 1..n_union */
    uint8_t n_union;
    int64_t lo, hi; /* FB_SCALAR: allowed range when lo <= hi (enums, bools) */
} fb_field;

typedef struct fb_table {
    const char *name;
    const fb_field *fields; /* by field id */
    uint16_t n_fields;
} fb_table;

typedef struct fb_schema {
    const char *name;
    const fb_table *tables;
    uint16_t n_tables;
    uint16_t root;      /* index of the root table */
    char identifier[4]; /* file identifier at bytes 4..7 */
} fb_schema;

/* What the verifier has checked, reported to an optional visitor as the walk passes it (the fuzz target's
 * structure-aware mutator lists a file's editable places this way, in the one walk that verifies it). */
typedef enum fb_site_kind {
    FB_SITE_TABLE,  /* a table at pos of schema table `ti` */
    FB_SITE_REF,    /* a uoffset at pos (a field or a vector element) to `target`; `to`: the fb_kind there
                     * (FB_STRING, FB_TABLE with ti, or the vector's kind) */
    FB_SITE_SCALAR, /* a scalar or enum field at pos, `width` bytes */
    FB_SITE_TAG,    /* a union tag (u8) at pos */
    FB_SITE_VECTOR, /* a vector at pos: its count, then elements of `width` bytes; `to`: its fb_kind */
    FB_SITE_STRUCT, /* one struct element of a vector at pos, `width` bytes */
    FB_SITE_STRING, /* a string at pos */
    FB_SITE_KINDS
} fb_site_kind;

typedef struct fb_site {
    uint32_t pos;
    uint32_t target;       /* FB_SITE_REF */
    const fb_field *field; /* the schema field (NULL for FB_SITE_TABLE) */
    int16_t ti;            /* FB_SITE_TABLE, and FB_SITE_REF to a table: the schema table; else -1 */
    uint8_t kind;          /* fb_site_kind */
    uint8_t to;            /* FB_SITE_REF, FB_SITE_VECTOR: an fb_kind */
    uint8_t width;         /* FB_SITE_SCALAR, FB_SITE_TAG, FB_SITE_VECTOR, FB_SITE_STRUCT */
} fb_site;

typedef struct fb_verify_options {
    size_t max_size;     /* buffer bytes; default and at most 2^31 - 1 (FlatBuffers' limit) */
    uint32_t max_depth;  /* nested tables; default 64 (Google's verifier's default) */
    uint64_t max_tables; /* tables visited; default 1,000,000 */
    /* default NULL; called for each site once its bytes are checked (a failure later in the walk still
     * fails the whole buffer: keep the sites only when fb_verify returns PC_OK) */
    void (*visit)(void *ctx, const fb_site *site);
    void *visit_ctx;
} fb_verify_options;

void fb_verify_options_default(fb_verify_options *o);
/* PC_OK, or the failing check's status with "byte N: Root.field[i].field: what" in err. */
pc_status fb_verify(const uint8_t *buf, size_t size, const fb_schema *schema, const fb_verify_options *o,
                    pc_error *err);

/* Accessors for a verified buffer. Positions are byte offsets into it; 0 means absent. */
static inline uint16_t fb_u16(const uint8_t *b, size_t pos)
{
    return (uint16_t)(b[pos] | (uint16_t)b[pos + 1] << 8);
}

static inline uint32_t fb_u32(const uint8_t *b, size_t pos)
{
    return (uint32_t)b[pos] | (uint32_t)b[pos + 1] << 8 | (uint32_t)b[pos + 2] << 16 |
           (uint32_t)b[pos + 3] << 24;
}

static inline uint64_t fb_u64(const uint8_t *b, size_t pos)
{
    return (uint64_t)fb_u32(b, pos) | (uint64_t)fb_u32(b, pos + 4) << 32;
}

static inline uint32_t fb_root(const uint8_t *b)
{
    return fb_u32(b, 0);
}

/* The position of field `id` of the table at t, or 0 when absent. */
uint32_t fb_field_pos(const uint8_t *b, uint32_t t, uint16_t id);
/* Scalar fields, the schema's default (given) when absent. */
uint64_t fb_field_u(const uint8_t *b, uint32_t t, uint16_t id, unsigned width, uint64_t fallback);
int64_t fb_field_i(const uint8_t *b, uint32_t t, uint16_t id, unsigned width, int64_t fallback);
/* The target of a reference field (table, vector, string), or 0 when absent. */
uint32_t fb_field_ref(const uint8_t *b, uint32_t t, uint16_t id);
/* A string field: its bytes (NUL-terminated in the buffer) and length, or NULL when absent. */
const char *fb_field_str(const uint8_t *b, uint32_t t, uint16_t id, uint32_t *len);
/* A vector at v: its count, and element i's position (inline) or target (vector of references). */
static inline uint32_t fb_vec_len(const uint8_t *b, uint32_t v)
{
    return v ? fb_u32(b, v) : 0;
}

static inline uint32_t fb_vec_ref(const uint8_t *b, uint32_t v, uint32_t i)
{
    uint32_t slot = v + 4 + 4 * i;
    return slot + fb_u32(b, slot);
}

/* The ORT format by content: "ORTM" at bytes 4..7, whatever the file is called (core/ort/load.c). */
bool pc_ort_detect(const uint8_t *data, size_t size);

/* The ORT format's schema (ort_schema.c): onnxruntime/core/flatbuffers/schema/ort.fbs, field ids as there. */
extern const fb_schema pc_ort_schema;
enum {
    ORT_T_INFERENCE_SESSION,
    ORT_T_MODEL,
    ORT_T_GRAPH,
    ORT_T_NODE,
    ORT_T_NODE_EDGE,
    ORT_T_VALUE_INFO,
    ORT_T_TYPE_INFO,
    ORT_T_TENSOR_TYPE_AND_SHAPE,
    ORT_T_SEQUENCE_TYPE,
    ORT_T_MAP_TYPE,
    ORT_T_SHAPE,
    ORT_T_DIMENSION,
    ORT_T_DIMENSION_VALUE,
    ORT_T_OPERATOR_SET_ID,
    ORT_T_TENSOR,
    ORT_T_SPARSE_TENSOR,
    ORT_T_ATTRIBUTE,
    ORT_T_STRING_STRING_ENTRY,
    ORT_T_RUNTIME_OPTIMIZATIONS,
    ORT_T_RUNTIME_OPTIMIZATION_RECORD_CONTAINER_ENTRY,
    ORT_T_RUNTIME_OPTIMIZATION_RECORD,
    ORT_T_NODES_TO_OPTIMIZE_INDICES,
    ORT_T_DEPRECATED_NODE_INDEX_AND_KERNEL_DEF_HASH,
    ORT_T_KERNEL_TYPE_STR_RESOLVER,
    ORT_T_OP_ID_KERNEL_TYPE_STR_ARGS_ENTRY,
    ORT_T_KERNEL_TYPE_STR_ARGS_ENTRY,
    ORT_T_ARG_TYPE_AND_INDEX,
    ORT_T_DEPRECATED_SESSION_STATE,
    ORT_T_DEPRECATED_KERNEL_CREATE_INFOS,
    ORT_T_DEPRECATED_SUB_GRAPH_SESSION_STATE,
    ORT_T_COUNT
};

#endif
