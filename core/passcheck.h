/*
 * passcheck.h — the public interface of passcheck's core: status codes, the graph IR, the ONNX loader and
 * saver.
 *
 * Worked example: load a model, look at it, edit it, verify it, save it.
 *
 *     pc_error err;
 *     pc_model *m = NULL;
 *     if (pc_model_load_file("model.onnx", NULL, &m, &err) != PC_OK) {
 *         fprintf(stderr, "%s: %s\n", pc_status_name(err.status), err.message);
 *         return 3;                                   // bad input file
 *     }
 *     pc_graph *g = m->graph;
 *     for (pc_node *n = g->first; n; n = n->next)     // nodes in topological order
 *         printf("%s %s ann=%s\n", n->op_type, n->name, pc_node_annotation(n) ? pc_node_annotation(n) : "-");
 *
 *     // Insert Relu after the first node's output 0. The new node inherits the first node's `layer_ann`
 *     // (annotation_source) and EP, and every former consumer now reads the Relu's output.
 *     pc_node *src = g->first;
 *     pc_value *x = src->outputs[0];
 *     pc_node *relu = pc_graph_add_node(g, "Relu", "", 1, &x, 1, src, &err);
 *     pc_node_copy_ep(relu, src);
 *     pc_value_replace_uses_except(x, relu->outputs[0], relu);
 *     pc_graph_move_output(src, 0, relu, 0);          // keeps graph-output names stable
 *
 *     if (pc_graph_verify(g, &err) != PC_OK) ...      // error names the node and value
 *     pc_model_save_file(m, "out.onnx", &err);        // written to a temp file, then renamed
 *     pc_model_free(m);
 *
 * Ownership: a pc_model owns everything reachable from it (graphs, nodes, values, names, tensors). Structural
 * objects live in the model's arena and are freed together; tensor data goes through the model's pc_mem hook,
 * which enforces a byte budget and is the OOM-injection seam for tests. Pointers to nodes and values stay
 * valid until pc_model_free (removed nodes are unlinked but not freed).
 *
 * Errors: every function that can fail returns pc_status and fills a pc_error with a message that names the
 * file, node, value or field. Asserts guard internal invariants only, never file contents.
 */
#ifndef PASSCHECK_H
#define PASSCHECK_H

#define PC_VERSION "0.1.0" /* keep in step with project() in CMakeLists.txt */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define PC_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define PC_NODISCARD         __attribute__((warn_unused_result))
#else
#define PC_PRINTF(fmt, args)
#define PC_NODISCARD
#endif

/* ---------------------------------------------------------------------------------------------------------------
 * Status codes. X-macro: code, short name, exit code class. One code per bad-input class so tests can assert
 * the exact reason a file was rejected.
 */
#define PC_STATUS_LIST(X)                                                                                    \
    X(PC_OK, "ok", 0)                                                                                        \
    X(PC_ERR_NOMEM, "out-of-memory", 4)                                                                      \
    X(PC_ERR_INTERNAL, "internal", 4)                                                                        \
    X(PC_ERR_USAGE, "usage", 2)                                                                              \
    X(PC_ERR_IO, "io", 3)                                                                                    \
    X(PC_ERR_UNSUPPORTED, "unsupported", 3)                                                                  \
    X(PC_ERR_CHECK_FAILED, "check-failed", 1)                                                                \
    /* container and wire level */                                                                           \
    X(PC_ERR_TRUNCATED, "truncated", 3)                                                                      \
    X(PC_ERR_WIRE, "malformed-wire", 3)                                                                      \
    X(PC_ERR_VARINT, "overlong-varint", 3)                                                                   \
    X(PC_ERR_LENGTH, "bad-length-prefix", 3)                                                                 \
    X(PC_ERR_NESTING, "nesting-too-deep", 3)                                                                 \
    X(PC_ERR_BUDGET, "over-budget", 3)                                                                       \
    X(PC_ERR_EMBEDDED_NUL, "embedded-nul", 3)                                                                \
    X(PC_ERR_ENUM, "enum-out-of-range", 3)                                                                   \
    X(PC_ERR_MISSING_FIELD, "missing-field", 3)                                                              \
    /* FlatBuffers (the ORT format) */                                                                       \
    X(PC_ERR_FB_IDENTIFIER, "bad-identifier", 3)                                                             \
    X(PC_ERR_FB_OFFSET, "bad-offset", 3)                                                                     \
    X(PC_ERR_FB_ALIGN, "misaligned", 3)                                                                      \
    X(PC_ERR_FB_VTABLE, "bad-vtable", 3)                                                                     \
    X(PC_ERR_FB_STRING, "unterminated-string", 3)                                                            \
    X(PC_ERR_FB_UNION, "bad-union", 3)                                                                       \
    X(PC_ERR_FB_OVERLAP, "overlapping-objects", 3)                                                           \
    X(PC_ERR_FORMAT_VERSION, "bad-format-version", 3)                                                        \
    /* model level */                                                                                        \
    X(PC_ERR_IR_VERSION, "bad-ir-version", 3)                                                                \
    X(PC_ERR_OPSET, "bad-opset", 3)                                                                          \
    X(PC_ERR_UNKNOWN_DOMAIN, "unknown-domain", 3)                                                            \
    X(PC_ERR_UNKNOWN_OP, "unknown-op", 3)                                                                    \
    /* tensor data */                                                                                        \
    X(PC_ERR_DTYPE, "bad-dtype", 3)                                                                          \
    X(PC_ERR_NEGATIVE_DIM, "negative-dim", 3)                                                                \
    X(PC_ERR_OVERFLOW, "size-overflow", 3)                                                                   \
    X(PC_ERR_DATA_SIZE, "data-size-mismatch", 3)                                                             \
    X(PC_ERR_MULTIPLE_DATA, "multiple-data-fields", 3)                                                       \
    X(PC_ERR_EXTERNAL_DATA, "bad-external-data", 3)                                                          \
    /* graph */                                                                                              \
    X(PC_ERR_DUPLICATE_PRODUCER, "duplicate-producer", 3)                                                    \
    X(PC_ERR_DUPLICATE_INITIALIZER, "duplicate-initializer", 3)                                              \
    X(PC_ERR_DUPLICATE_NAME, "duplicate-name", 3)                                                            \
    X(PC_ERR_DANGLING_INPUT, "dangling-input", 3)                                                            \
    X(PC_ERR_UNPRODUCED_OUTPUT, "unproduced-output", 3)                                                      \
    X(PC_ERR_CYCLE, "cycle", 3)                                                                              \
    X(PC_ERR_ATTRIBUTE_TYPE, "attribute-type", 3)                                                            \
    X(PC_ERR_ATTRIBUTE, "bad-attribute", 3)                                                                  \
    X(PC_ERR_ARITY, "bad-arity", 3)                                                                          \
    X(PC_ERR_TYPE, "bad-type", 3)                                                                            \
    /* execution */                                                                                          \
    X(PC_ERR_SHAPE, "bad-shape", 3)                                                                          \
    X(PC_ERR_VALUE, "bad-value", 3)

typedef enum pc_status {
#define PC_X_ENUM(code, name, exit_code) code,
    PC_STATUS_LIST(PC_X_ENUM)
#undef PC_X_ENUM
        PC_STATUS_COUNT
} pc_status;

/* Exit codes of the passcheck CLI (documented in docs/cli.md). */
enum {
    PC_EXIT_OK = 0,
    PC_EXIT_CHECK_FAILED = 1,
    PC_EXIT_USAGE = 2,
    PC_EXIT_BAD_INPUT = 3,
    PC_EXIT_INTERNAL = 4,
};

const char *pc_status_name(pc_status status);
int pc_status_exit_code(pc_status status);

/* Error record: the status plus a message. The message is bounded (long names are cut, never overflowed). */
typedef struct pc_error {
    pc_status status;
    char message[1024];
} pc_error;

/* Sets err (if non-NULL) and returns status, so callers can write `return pc_error_set(err, ...)`. */
pc_status pc_error_set(pc_error *err, pc_status status, const char *fmt, ...) PC_PRINTF(3, 4);
/* Prepends context ("model.onnx: ", "node 'conv1': ") to an already-set message. */
void pc_error_prefix(pc_error *err, const char *fmt, ...) PC_PRINTF(2, 3);

/* Seconds on CLOCK_MONOTONIC: for deadlines and durations, never for dates. */
double pc_now_seconds(void);
void pc_error_clear(pc_error *err);

/* ---------------------------------------------------------------------------------------------------------------
 * Memory: one hook for all model memory. `budget` caps live bytes (0 = unlimited); `fail_after` makes the
 * N-th allocation from now fail (0 = never), the seam for OOM-injection tests; arena allocations count as
 * allocations there even when their chunk has room, so every node, value and name allocation can fail.
 */
typedef struct pc_mem {
    size_t budget;
    size_t used;
    size_t peak;
    uint64_t n_allocs;
    uint64_t fail_after;
    bool fail_forever; /* after the injected failure, keep failing */
    bool failed;       /* an allocation failed (budget or injection) */
    bool over_budget;  /* the failure was the budget, not injection or the system */
} pc_mem;

void *pc_mem_alloc(pc_mem *mem, size_t size);
void *pc_mem_calloc(pc_mem *mem, size_t count, size_t size);
void *pc_mem_realloc(pc_mem *mem, void *ptr, size_t new_size);
void pc_mem_free(pc_mem *mem, void *ptr);

/* Checked size arithmetic: return false on overflow. */
bool pc_size_mul(size_t a, size_t b, size_t *out);
bool pc_size_add(size_t a, size_t b, size_t *out);
bool pc_u64_mul(uint64_t a, uint64_t b, uint64_t *out);

/* Arena: bump allocation in chunks obtained from a pc_mem; freed all at once. */
typedef struct pc_arena_chunk pc_arena_chunk;
typedef struct pc_arena {
    pc_mem *mem;
    pc_arena_chunk *head;
    size_t chunk_size;
} pc_arena;

void pc_arena_init(pc_arena *arena, pc_mem *mem);
void *pc_arena_alloc(pc_arena *arena, size_t size); /* 16-byte aligned, zeroed; NULL on failure */
void *pc_arena_array(pc_arena *arena, size_t count, size_t elem_size); /* checked count*size */
char *pc_arena_strdup(pc_arena *arena, const char *s);                 /* NULL s gives NULL */
char *pc_arena_strndup(pc_arena *arena, const char *s, size_t n);
char *pc_arena_printf(pc_arena *arena, const char *fmt, ...) PC_PRINTF(2, 3);
void pc_arena_free(pc_arena *arena);

/* ---------------------------------------------------------------------------------------------------------------
 * Element types: the values are TensorProto.DataType's, so they convert to and from the file as is.
 */
#define PC_DTYPE_LIST(X)                                                                                     \
    X(PC_DTYPE_UNDEFINED, 0, "undefined", 0)                                                                 \
    X(PC_DTYPE_FLOAT, 1, "float", 32)                                                                        \
    X(PC_DTYPE_UINT8, 2, "uint8", 8)                                                                         \
    X(PC_DTYPE_INT8, 3, "int8", 8)                                                                           \
    X(PC_DTYPE_UINT16, 4, "uint16", 16)                                                                      \
    X(PC_DTYPE_INT16, 5, "int16", 16)                                                                        \
    X(PC_DTYPE_INT32, 6, "int32", 32)                                                                        \
    X(PC_DTYPE_INT64, 7, "int64", 64)                                                                        \
    X(PC_DTYPE_STRING, 8, "string", 0)                                                                       \
    X(PC_DTYPE_BOOL, 9, "bool", 8)                                                                           \
    X(PC_DTYPE_FLOAT16, 10, "float16", 16)                                                                   \
    X(PC_DTYPE_DOUBLE, 11, "double", 64)                                                                     \
    X(PC_DTYPE_UINT32, 12, "uint32", 32)                                                                     \
    X(PC_DTYPE_UINT64, 13, "uint64", 64)                                                                     \
    X(PC_DTYPE_COMPLEX64, 14, "complex64", 64)                                                               \
    X(PC_DTYPE_COMPLEX128, 15, "complex128", 128)                                                            \
    X(PC_DTYPE_BFLOAT16, 16, "bfloat16", 16)                                                                 \
    X(PC_DTYPE_FLOAT8E4M3FN, 17, "float8e4m3fn", 8)                                                          \
    X(PC_DTYPE_FLOAT8E4M3FNUZ, 18, "float8e4m3fnuz", 8)                                                      \
    X(PC_DTYPE_FLOAT8E5M2, 19, "float8e5m2", 8)                                                              \
    X(PC_DTYPE_FLOAT8E5M2FNUZ, 20, "float8e5m2fnuz", 8)                                                      \
    X(PC_DTYPE_UINT4, 21, "uint4", 4)                                                                        \
    X(PC_DTYPE_INT4, 22, "int4", 4)                                                                          \
    X(PC_DTYPE_FLOAT4E2M1, 23, "float4e2m1", 4)                                                              \
    X(PC_DTYPE_FLOAT8E8M0, 24, "float8e8m0", 8)                                                              \
    X(PC_DTYPE_UINT2, 25, "uint2", 2)                                                                        \
    X(PC_DTYPE_INT2, 26, "int2", 2)

typedef enum pc_dtype {
#define PC_X_ENUM(code, value, name, bits) code = value,
    PC_DTYPE_LIST(PC_X_ENUM)
#undef PC_X_ENUM
        PC_DTYPE_COUNT
} pc_dtype;

bool pc_dtype_is_valid(int32_t value);     /* a defined, non-UNDEFINED element type */
const char *pc_dtype_name(pc_dtype dtype); /* "float"; "?" for out-of-range values */
unsigned pc_dtype_bits(pc_dtype dtype);    /* bits per element; 0 for STRING/UNDEFINED */
/* Bytes of n elements in raw_data form (sub-byte types packed, rounded up). false on overflow or STRING. */
bool pc_dtype_storage_bytes(pc_dtype dtype, uint64_t n_elements, size_t *out);

typedef struct pc_model pc_model;
typedef struct pc_graph pc_graph;
typedef struct pc_node pc_node;
typedef struct pc_value pc_value;

/* ---------------------------------------------------------------------------------------------------------------
 * Shapes and types.
 */
typedef enum pc_dim_kind {
    PC_DIM_UNKNOWN = 0,
    PC_DIM_KNOWN,
    PC_DIM_SYMBOLIC,
} pc_dim_kind;

typedef struct pc_dim {
    pc_dim_kind kind;
    int64_t size;           /* PC_DIM_KNOWN: >= 0 */
    const char *symbol;     /* PC_DIM_SYMBOLIC: dim_param */
    const char *denotation; /* optional */
} pc_dim;

enum { PC_MAX_RANK = 64 }; /* loader limit; ONNX sets none, real models stay far below */

typedef struct pc_shape {
    int32_t rank; /* -1: rank unknown (no shape given) */
    pc_dim *dims;
} pc_shape;

typedef enum pc_type_kind {
    PC_TYPE_NONE = 0, /* no type information */
    PC_TYPE_TENSOR,
    PC_TYPE_SPARSE_TENSOR,
    PC_TYPE_SEQUENCE,
    PC_TYPE_MAP,
    PC_TYPE_OPTIONAL,
    PC_TYPE_OPAQUE,
    PC_TYPE_KIND_COUNT
} pc_type_kind;

typedef struct pc_type pc_type;
struct pc_type {
    pc_type_kind kind;
    pc_dtype elem;  /* TENSOR, SPARSE_TENSOR: element type (UNDEFINED allowed: "not given") */
    pc_shape shape; /* TENSOR, SPARSE_TENSOR */
    pc_dtype key;   /* MAP */
    pc_type *inner; /* SEQUENCE, OPTIONAL: element type; MAP: value type */
    const char *denotation;
    const char *opaque_domain, *opaque_name; /* OPAQUE */
};

/* ---------------------------------------------------------------------------------------------------------------
 * Tensors (initializers, tensor attributes, test data).
 */
typedef struct pc_bytes {
    size_t len;
    uint8_t *data;
} pc_bytes;

typedef struct pc_kv {
    const char *key;
    const char *value;
} pc_kv;

typedef struct pc_tensor {
    const char *name;
    pc_dtype dtype;
    int32_t rank;
    int64_t *dims;
    uint64_t n_elements;
    size_t n_bytes; /* raw_data form; for STRING the size of the pc_bytes array */
    void *data;     /* little-endian raw form; STRING: pc_bytes[n_elements]; owned via the model's pc_mem */
    const char *doc_string;
    uint32_t n_metadata;
    pc_kv *metadata;
} pc_tensor;

/* Creates a tensor with zeroed data in `model`'s memory. dims may be NULL when rank is 0. */
pc_tensor *pc_tensor_create(pc_model *model, const char *name, pc_dtype dtype, int32_t rank,
                            const int64_t *dims, pc_error *err);
bool pc_tensor_equal(const pc_tensor *a, const pc_tensor *b); /* dtype, dims, bytes, name */

/* ---------------------------------------------------------------------------------------------------------------
 * Graph IR.
 */

/* AttributeProto.AttributeType values. */
typedef enum pc_attr_type {
    PC_ATTR_UNDEFINED = 0,
    PC_ATTR_FLOAT = 1,
    PC_ATTR_INT = 2,
    PC_ATTR_STRING = 3,
    PC_ATTR_TENSOR = 4,
    PC_ATTR_GRAPH = 5,
    PC_ATTR_FLOATS = 6,
    PC_ATTR_INTS = 7,
    PC_ATTR_STRINGS = 8,
    PC_ATTR_TENSORS = 9,
    PC_ATTR_GRAPHS = 10,
    PC_ATTR_SPARSE_TENSOR = 11,
    PC_ATTR_SPARSE_TENSORS = 12,
    PC_ATTR_TYPE_PROTO = 13,
    PC_ATTR_TYPE_PROTOS = 14,
    PC_ATTR_TYPE_COUNT
} pc_attr_type;

const char *pc_attr_type_name(pc_attr_type type);

typedef struct pc_attr {
    const char *name;
    pc_attr_type type;
    const char *doc_string;
    const char *ref_attr_name; /* function bodies only; rejected elsewhere */
    float f;
    int64_t i;
    pc_bytes s;
    pc_tensor *t;
    pc_graph *g;
    pc_type *tp;
    /* list forms: n elements in the array matching `type` */
    size_t n;
    float *floats;
    int64_t *ints;
    pc_bytes *strings;
    pc_tensor **tensors;
    pc_graph **graphs;
    pc_type **tps;
} pc_attr;

/* A use of a value: input `index` of `node`. */
typedef struct pc_use {
    pc_node *node;
    uint32_t index;
} pc_use;

struct pc_value {
    uint32_t id; /* unique in its graph, in creation order */
    const char *name;
    pc_type type;
    pc_graph *graph;
    pc_node *producer; /* NULL for graph inputs, initializers, outer-scope references */
    uint32_t producer_output;
    uint32_t n_consumers, cap_consumers;
    pc_use *consumers;
    pc_tensor *initializer; /* non-NULL when the value is an initializer of this graph */
    pc_value *outer;        /* non-NULL: a reference to this value of an enclosing graph */
    uint32_t
        n_subgraph_refs; /* how many subgraph values reference this one: consumers are then not all listed */
    bool is_graph_input;
    bool is_graph_output; /* listed in graph->outputs (possibly several times) */
    bool has_value_info;  /* came with (or should be saved with) a value_info entry */
    const char *doc_string;
    uint32_t n_metadata;
    pc_kv *metadata;
};

struct pc_node {
    uint32_t id; /* unique in its graph, in creation order */
    const char *name;
    const char *op_type;
    const char *domain; /* "" for ai.onnx */
    const char *overload;
    const char *doc_string;
    uint32_t n_inputs, cap_inputs;
    pc_value **inputs; /* NULL entry: omitted optional input */
    uint32_t n_outputs;
    pc_value **outputs; /* NULL entry: omitted optional output */
    uint32_t n_attrs, cap_attrs;
    pc_attr *attrs;
    uint32_t n_metadata, cap_metadata;
    pc_kv *metadata; /* NodeProto.metadata_props; key "layer_ann" is the layering annotation */
    const char *ep;  /* execution-provider assignment; NULL until partitioning */
    pc_graph *graph;
    pc_node *prev, *next; /* graph order */
    bool removed;
};

#define PC_LAYER_ANN_KEY "layer_ann"

typedef struct pc_opset {
    const char *domain; /* "" for ai.onnx */
    int64_t version;
} pc_opset;

/* A top-level field we keep as opaque bytes because the IR does not model it (training_info, functions, ...).
 * Saved back unchanged, so round trips lose nothing. */
typedef struct pc_opaque_field {
    uint32_t field_number;
    pc_bytes bytes;
} pc_opaque_field;

typedef struct pc_function_id {
    const char *domain;
    const char *name;
} pc_function_id;

struct pc_graph {
    pc_model *model;
    pc_graph *parent; /* enclosing graph for subgraphs */
    pc_node *owner;   /* node whose attribute holds this subgraph */
    const char *name;
    const char *doc_string;
    pc_node *first, *last;
    uint32_t n_nodes; /* live nodes */
    uint32_t next_node_id;
    uint32_t n_values, cap_values;
    pc_value **values; /* all values ever created, by id */
    void *value_index; /* name → value map (private) */
    uint32_t n_inputs, cap_inputs;
    pc_value **inputs;
    uint32_t n_outputs, cap_outputs;
    pc_value **outputs;
    uint32_t n_initializers, cap_initializers;
    pc_value **initializers; /* in file order */
    uint32_t n_metadata;
    pc_kv *metadata;
    uint32_t n_opaque;
    pc_opaque_field *opaque; /* sparse_initializer, quantization_annotation */
    uint64_t name_counter;   /* for generated unique names */
};

struct pc_model {
    int64_t ir_version;
    const char *producer_name;
    const char *producer_version;
    const char *domain;
    int64_t model_version;
    const char *doc_string;
    uint32_t n_opsets;
    pc_opset *opsets;
    uint32_t n_metadata;
    pc_kv *metadata;
    uint32_t n_opaque;
    pc_opaque_field *opaque; /* training_info, functions, configuration */
    uint32_t n_functions;    /* model-local functions: nodes may call them as ops */
    pc_function_id *functions;
    pc_graph *graph;
    const char *path; /* file it was loaded from, or NULL */
    pc_mem mem;
    pc_arena arena;
    void *names; /* every value name in every graph (private; for unique-name generation) */
    uint32_t n_tensors, cap_tensors;
    pc_tensor **tensors; /* every tensor whose data this model owns (private) */
};

/* Creates an empty model (IR version 10, opset ai.onnx 17, an empty main graph). */
pc_status pc_model_create(pc_model **out, pc_error *err);
void pc_model_free(pc_model *model);
/* An exact in-memory replica: the same values with the same ids (dead ones too), the same live nodes in the
 * same order, use lists in the same order, all data copied. Optimizing a clone does what optimizing the
 * original would, allocation for allocation; a clone of a loaded model is that load again, without the parse.
 */
pc_status pc_model_clone(const pc_model *src, pc_model **out, pc_error *err);

int64_t pc_model_opset(const pc_model *model, const char *domain); /* -1 when the domain is not imported */
pc_status pc_model_set_opset(pc_model *model, const char *domain, int64_t version, pc_error *err);

/* Values */
pc_value *pc_graph_find_value(const pc_graph *graph, const char *name);   /* this graph only */
pc_value *pc_graph_lookup_value(const pc_graph *graph, const char *name); /* this graph, then enclosing */
/* Creates a value. name NULL: a fresh unique name from `hint` ("t" if hint is NULL). Fails on a duplicate. */
pc_value *pc_graph_add_value(pc_graph *graph, const char *name, const char *hint, pc_error *err);
/* A name unused in this graph and every enclosing and nested graph. */
const char *pc_graph_unique_name(pc_graph *graph, const char *hint);
pc_status pc_value_set_type(pc_value *value, const pc_type *type, pc_error *err); /* deep copy */
pc_status pc_type_copy(pc_model *model, pc_type *dst, const pc_type *src, pc_error *err);
bool pc_type_equal(const pc_type *a, const pc_type *b);
/* Replaces every node-input use of `from` by `to`, except uses by `except` (may be NULL). */
pc_status pc_value_replace_uses_except(pc_value *from, pc_value *to, const pc_node *except);
pc_status pc_value_replace_uses(pc_value *from, pc_value *to);

/* Graph inputs/outputs/initializers */
pc_status pc_graph_add_input(pc_graph *graph, pc_value *value, pc_error *err);
pc_status pc_graph_add_output(pc_graph *graph, pc_value *value, pc_error *err);
/* Makes `value` an initializer holding `tensor` (tensor->name is set to the value's name). */
pc_status pc_graph_set_initializer(pc_graph *graph, pc_value *value, pc_tensor *tensor, pc_error *err);
/* Replaces the data of an existing initializer. */
pc_status pc_graph_replace_initializer(pc_value *value, pc_tensor *tensor, pc_error *err);
/* Drops the initializer from a value with no consumers (and not a graph input/output). */
pc_status pc_graph_remove_initializer(pc_graph *graph, pc_value *value, pc_error *err);

/* Nodes */
/* Adds a node after the last node (call pc_graph_sort to restore topological order, or pass `after`-less
 * insertion and sort once per pass). Creates n_outputs fresh values. If annotation_source is non-NULL the new
 * node inherits its `layer_ann` (the required form for replacement nodes in level 0/1 passes). */
pc_node *pc_graph_add_node(pc_graph *graph, const char *op_type, const char *domain, uint32_t n_inputs,
                           pc_value *const *inputs, uint32_t n_outputs, const pc_node *annotation_source,
                           pc_error *err);
/* Copies `layer_ann` from src to dst when src has one (the conditional form; src may be NULL). */
pc_status pc_node_copy_annotation(pc_node *dst, const pc_node *src, pc_error *err);
void pc_node_copy_ep(pc_node *dst, const pc_node *src);
const char *pc_node_annotation(const pc_node *node); /* NULL when absent */
const char *pc_node_metadata(const pc_node *node, const char *key);
pc_status pc_node_set_metadata(pc_node *node, const char *key, const char *value, pc_error *err);
bool pc_node_remove_metadata(pc_node *node, const char *key);
/* ModelProto.metadata_props: the value of key (NULL when absent), set (replacing), remove (false: absent). */
const char *pc_model_metadata(const pc_model *model, const char *key);
pc_status pc_model_set_metadata(pc_model *model, const char *key, const char *value, pc_error *err);
bool pc_model_remove_metadata(pc_model *model, const char *key);
pc_status pc_node_set_input(pc_node *node, uint32_t index, pc_value *value,
                            pc_error *err); /* value may be NULL */
pc_status pc_node_add_input(pc_node *node, pc_value *value, pc_error *err);
/* Moves output src_index of src to output dst_index of dst: the value (name, consumers, graph-output role)
 * now comes from dst, and dst's previous output value now comes from src. */
pc_status pc_graph_move_output(pc_node *src, uint32_t src_index, pc_node *dst, uint32_t dst_index);
/* Removes a node whose outputs have no consumers and are not graph outputs. */
pc_status pc_graph_remove_node(pc_graph *graph, pc_node *node, pc_error *err);
/* Orders nodes topologically (stable: keeps the current order where it is valid). PC_ERR_CYCLE names a node
 * on the cycle. */
pc_status pc_graph_sort(pc_graph *graph, pc_error *err);

/* Attributes */
const pc_attr *pc_node_attr(const pc_node *node, const char *name);
pc_attr *pc_node_attr_mut(pc_node *node, const char *name);
int64_t pc_node_attr_int(const pc_node *node, const char *name, int64_t fallback);
float pc_node_attr_float(const pc_node *node, const char *name, float fallback);
const char *pc_node_attr_string(const pc_node *node, const char *name, const char *fallback);
pc_status pc_node_set_attr_int(pc_node *node, const char *name, int64_t value, pc_error *err);
pc_status pc_node_set_attr_float(pc_node *node, const char *name, float value, pc_error *err);
pc_status pc_node_set_attr_string(pc_node *node, const char *name, const char *value, pc_error *err);
pc_status pc_node_set_attr_ints(pc_node *node, const char *name, size_t n, const int64_t *values,
                                pc_error *err);
pc_status pc_node_set_attr_floats(pc_node *node, const char *name, size_t n, const float *values,
                                  pc_error *err);
pc_status pc_node_set_attr_tensor(pc_node *node, const char *name, pc_tensor *tensor, pc_error *err);
/* A graph attribute: graph must be of the node's model and owned by the node (pc_graph_create(model, node's
 * graph, node)). */
pc_status pc_node_set_attr_graph(pc_node *node, const char *name, pc_graph *graph, pc_error *err);
/* Appends src's attributes to dst's (both of one model; values shared, not deep-copied; no graph attributes
 * expected: a body would then have two owners). */
pc_status pc_node_copy_attrs(pc_node *dst, const pc_node *src, pc_error *err);
bool pc_node_remove_attr(pc_node *node, const char *name);

/* Verification: single producer per value, no cycles, every input defined (graph input, initializer,
 * producer, outer scope), graph outputs produced, use lists consistent, attribute types valid for known ops,
 * opsets in range, domains known. Recurses into subgraphs. */
pc_status pc_graph_verify(const pc_graph *graph, pc_error *err);
pc_status pc_model_verify(const pc_model *model, pc_error *err);

/* Structural equality (names, order, types, attributes, tensors, metadata, EP). On inequality writes the
 * first difference to `diff` (may be NULL). */
bool pc_model_equal(const pc_model *a, const pc_model *b, char *diff, size_t diff_size);

/* ---------------------------------------------------------------------------------------------------------------
 * Runtime values: what executors consume and produce, and what test data decodes to. Reference counted and
 * malloc-backed (independent of any model), so a value can outlive the model whose initializer it came from
 * only when it owns its data (see pc_data_wrap_tensor).
 */
typedef struct pc_data pc_data;
struct pc_data {
    pc_type_kind kind; /* PC_TYPE_TENSOR, PC_TYPE_SEQUENCE or PC_TYPE_OPTIONAL */
    uint32_t refs;
    /* TENSOR */
    pc_dtype dtype; /* SEQUENCE/OPTIONAL: element type of the tensors inside, UNDEFINED when not known */
    int32_t rank;
    int64_t *dims;
    uint64_t n_elements;
    size_t n_bytes;
    void *data;    /* raw little-endian form, sub-byte types packed; STRING: pc_bytes[n_elements] */
    bool borrowed; /* data (and string bytes) belong to a pc_tensor that outlives this value */
    /* SEQUENCE: n_items elements. OPTIONAL: n_items 0 (none) or 1. */
    pc_type_kind
        item_kind; /* kind of the items (TENSOR or SEQUENCE), also for empty sequences/none optionals */
    uint32_t n_items;
    pc_data **items;
};

/* A tensor with zeroed data (STRING: empty strings). dims may be NULL when rank is 0. */
pc_data *pc_data_new_tensor(pc_dtype dtype, int32_t rank, const int64_t *dims, pc_error *err);
/* A tensor value that reads t's data in place (no copy); t must outlive it. */
pc_data *pc_data_wrap_tensor(const pc_tensor *t, pc_error *err);
/* A deep copy that owns its data. */
pc_data *pc_data_clone(const pc_data *d, pc_error *err);
/* Element k of an integer tensor (int4..int64 and uint4..uint32; not uint64, whose values int64 cannot hold),
 * in *v; false for another kind or type, or k out of range. */
bool pc_data_int_at(const pc_data *d, uint64_t k, int64_t *v);
/* A sequence holding n items (each gains a reference). item_kind/dtype describe the items when n is 0. */
pc_data *pc_data_new_sequence(pc_type_kind item_kind, pc_dtype dtype, uint32_t n, pc_data *const *items,
                              pc_error *err);
/* An optional: item NULL gives "none" (item_kind/dtype then describe the missing value). item gains a
 * reference. */
pc_data *pc_data_new_optional(pc_type_kind item_kind, pc_dtype dtype, pc_data *item, pc_error *err);
pc_data *pc_data_ref(pc_data *d);
void pc_data_unref(pc_data *d); /* NULL is allowed */
/* Describes a value as "float[2,3]", "seq(float)[4]", "optional(none)" into buf. */
const char *pc_data_describe(const pc_data *d, char *buf, size_t size);

/* Decodes a backend-test data file: a TensorProto, or a SequenceProto / OptionalProto when `expected` says
 * the value is a sequence or an optional (expected may be NULL: TensorProto). */
pc_status pc_data_load_file(const char *path, const pc_type *expected, pc_data **out, pc_error *err);

/* Comparison of an actual value against an expected one, with ONNX's backend-test rules: shapes and dtypes
 * exact; integers, bools and strings exact; floats |a - e| <= atol + rtol * |e| after NaN positions and inf
 * signs. */
typedef enum pc_compare_outcome {
    PC_COMPARE_EQUAL = 0,
    PC_COMPARE_DIFFERS, /* values out of tolerance */
    PC_COMPARE_SHAPE,   /* rank, dims, sequence length or optional presence differ */
    PC_COMPARE_TYPE,    /* dtype or kind differs */
} pc_compare_outcome;

typedef struct pc_compare_result {
    pc_compare_outcome outcome;
    double max_abs_error; /* over all compared float elements */
    double worst_excess;  /* largest |a - e| - (atol + rtol |e|); > 0 means out of tolerance */
    uint64_t worst_index; /* flat element index of the worst element (in the worst item for sequences) */
    double worst_expected, worst_actual;
    char detail[256]; /* human-readable first reason */
} pc_compare_result;

pc_compare_outcome pc_data_compare(const pc_data *expected, const pc_data *actual, double rtol, double atol,
                                   pc_compare_result *result);
/* The same with floats identical: NaN positions agree (any payload) and every other element has the same
 * bits, so +0 against -0 differs. For results that must not change at all (a round trip, an evaluator against
 * the reference, a pass that only moves data). */
pc_compare_outcome pc_data_compare_exact(const pc_data *expected, const pc_data *actual,
                                         pc_compare_result *result);

/* ---------------------------------------------------------------------------------------------------------------
 * ONNX loader and saver.
 */
typedef struct pc_load_options {
    size_t max_file_bytes;    /* default 4 GiB */
    size_t memory_budget;     /* bytes of model memory (structures + tensor data); default 8 GiB */
    uint32_t max_depth;       /* protobuf message nesting; default 64 */
    uint64_t max_messages;    /* sub-messages + repeated elements counted by the pre-scan; default 64 M */
    bool allow_external_data; /* default true for files, always false for bytes */
    bool skip_verify;         /* default false: pc_model_verify runs after loading */
    uint64_t fail_after;      /* OOM injection: make the N-th allocation fail (0 = off) */
} pc_load_options;

void pc_load_options_default(pc_load_options *opts);

pc_status pc_model_load_file(const char *path, const pc_load_options *opts, pc_model **out, pc_error *err);
/* In-memory load: external data is rejected (there is no base directory). */
pc_status pc_model_load_bytes(const void *data, size_t size, const pc_load_options *opts, pc_model **out,
                              pc_error *err);
/* Deterministic serialization: the same model gives the same bytes. *out is malloc'ed; free() it. */
pc_status pc_model_save_bytes(const pc_model *model, uint8_t **out, size_t *out_size, pc_error *err);
/* Writes to "<path>.tmp.<pid>" and renames it over path, so a failure leaves no half-written file. */
pc_status pc_model_save_file(const pc_model *model, const char *path, pc_error *err);

/* The ORT format (core/ort/save.c): what ONNX Runtime 1.30 loads (ort_version 6, with the kernel type string
 * resolver and NodeEdges it needs), the EP assignment as each node's execution_provider_type; the same bytes
 * for the same model. PC_ERR_UNSUPPORTED naming the node or value for what the format cannot hold or ONNX
 * Runtime could not be told (docs/loader.md). The loaders read either format (detected by content). */
pc_status pc_model_save_ort_bytes(const pc_model *model, uint8_t **out, size_t *out_size, pc_error *err);
pc_status pc_model_save_ort_file(const pc_model *model, const char *path, pc_error *err);

/* Decodes a standalone TensorProto (the backend test data's input_N.pb / output_N.pb). */
pc_status pc_tensor_load_file(pc_model *owner, const char *path, pc_tensor **out, pc_error *err);

/* ---------------------------------------------------------------------------------------------------------------
 * Shape inference (core/shape): fills in the element type and shape of node outputs from their inputs, for
 * the ops the passes and generators use. Declared types win where both are known and agree; a contradiction
 * (e.g. Add of [2,3] and [4]) is PC_ERR_SHAPE naming the node. Ops it does not know leave their outputs as
 * they are.
 */
pc_status pc_graph_infer_shapes(pc_graph *graph, pc_error *err);
/* One node (passes call it on the nodes they create so types and shapes are carried). */
pc_status pc_node_infer_shapes(pc_node *node, pc_error *err);

/* ---------------------------------------------------------------------------------------------------------------
 * Execution providers (core/ep). An EP is data plus a capability function: which ops it runs (op, domain,
 * opset range, element types, attribute constraints), its preferred layout, whether it compiles the nodes it
 * claims into fused subgraphs, and whether it can run Transpose. Built in: `cpu` (every standard op; the
 * fallback) and `nhwc` (a compiling EP that prefers NHWC). More can be described in a text file (docs/ep.md).
 */
typedef enum pc_layout {
    PC_LAYOUT_NCHW = 0,
    PC_LAYOUT_NHWC,
    PC_LAYOUT_BLOCKED, /* nChw<block>c */
    PC_LAYOUT_COUNT
} pc_layout;

typedef struct pc_ep_attr_rule {
    const char *name;
    uint32_t n_values;
    const int64_t *values; /* the node's int attribute (or its default when absent) must be one of these */
    bool has_default;
    int64_t default_value; /* value assumed when the node does not set the attribute */
} pc_ep_attr_rule;

/* A row that claims a node only as a member of a pattern around it (a group the EP runs as one unit). */
typedef enum pc_ep_group {
    PC_EP_GROUP_NONE = 0,
    /* DequantizeLinear -> Relu -> QuantizeLinear, each the only reader of the one before and none a graph
     * output, DQ and Q per tensor on one 8-bit type with equal constant scales and zero points: the Systolic
     * fork's QLinearRelu (`group=dq-relu-q` in EP files) */
    PC_EP_GROUP_DQ_RELU_Q,
    PC_EP_GROUP_COUNT
} pc_ep_group;

typedef struct pc_ep_op {
    const char *domain;           /* "" for ai.onnx */
    const char *op_type;          /* "*": every op of the domain */
    int64_t opset_min, opset_max; /* the model's opset for the domain must lie in [min, max] */
    uint64_t dtypes;              /* bit (1 << pc_dtype) per allowed element type of the node's first input
                                     (first output when it has no inputs); 0: any */
    uint32_t n_attr_rules;
    const pc_ep_attr_rule *attr_rules;
    pc_ep_group group; /* PC_EP_GROUP_NONE, or the pattern the node must be part of */
    int32_t rank;      /* 0: any; else the rank the node's first input (first output without inputs) must have
                          (unknown fails): the blocked layout's 4-D activations */
} pc_ep_op;

typedef struct pc_ep {
    const char *name;
    pc_layout layout;
    uint32_t block_size;   /* PC_LAYOUT_BLOCKED only */
    bool compiles;         /* claimed nodes are grouped into fused subgraphs */
    bool runs_transpose;   /* may be offered the Transposes a layout change inserts */
    bool all_standard_ops; /* claims every ai.onnx op the schema table knows at the model's opset (cpu) */
    uint32_t n_ops;
    const pc_ep_op *ops;
} pc_ep;

typedef struct pc_ep_registry pc_ep_registry;

/* A registry holding the built-in EPs (cpu, nhwc). */
pc_status pc_ep_registry_create(pc_ep_registry **out, pc_error *err);
void pc_ep_registry_free(pc_ep_registry *reg);
/* Adds the EPs described in a text file (docs/ep.md). Errors name the file, line and field; nothing is added
 * when the file has an error. */
pc_status pc_ep_registry_load_file(pc_ep_registry *reg, const char *path, pc_error *err);
pc_status pc_ep_registry_load_text(pc_ep_registry *reg, const char *text, const char *source_name,
                                   pc_error *err);
const pc_ep *pc_ep_registry_find(const pc_ep_registry *reg, const char *name); /* NULL when unknown */
/* Parses "nhwc,cpu" into EPs in priority order (arena of the registry). Unknown names, empty entries and
 * duplicates are PC_ERR_USAGE naming the entry. */
pc_status pc_ep_registry_parse_list(const pc_ep_registry *reg, const char *list, const pc_ep ***out_eps,
                                    uint32_t *out_n, pc_error *err);
/* Capability on one node: true when the EP can run it. When false and why is non-NULL, the reason. */
bool pc_ep_claims_node(const pc_ep *ep, const pc_node *node, char *why, size_t why_size);
/* Would the EP claim a node about to be added to graph (ai.onnx op_type, no attributes, first input of
 * element type first_input)? Asked before the node exists, so a rewrite can refuse instead of leaving a node
 * its EP cannot run. */
bool pc_ep_claims_new_node(const pc_ep *ep, pc_graph *graph, const char *op_type, pc_dtype first_input);

/* ---------------------------------------------------------------------------------------------------------------
 * Layer assignment settings (as ORT's session.layer_assignment_settings): `nhwc(encoder, =head); cpu(post)`.
 * Rules are separated by ';', each EP(pattern, ...); whitespace is ignored; a pattern matches annotations it
 * is a prefix of, or exactly when written with a leading '='; the leftmost matching rule wins.
 */
typedef struct pc_layer_rules pc_layer_rules;
/* Errors (PC_ERR_USAGE) name the 1-based character position: malformed text, unknown EP, a pattern given
 * twice. */
pc_status pc_layer_rules_parse(const char *text, const pc_ep *const *eps, uint32_t n_eps,
                               pc_layer_rules **out, pc_error *err);
void pc_layer_rules_free(pc_layer_rules *rules);
/* The EP an annotation is pinned to, or NULL when no rule matches. */
const pc_ep *pc_layer_rules_match(const pc_layer_rules *rules, const char *annotation);

/* ---------------------------------------------------------------------------------------------------------------
 * Passes (core/passes) and the pipeline. Every pass has one signature; the pipeline is a table (name, level,
 * function, what it requires) run in order, with pc_graph_verify after every pass in Debug and sanitizer
 * builds (a failure names the pass).
 *
 * Levels as in ORT: 0 basic and 1 extended run before partitioning and keep `layer_ann` on every node they
 * create; partitioning assigns EPs (running the layout transformer for NHWC-preferring EPs) and then removes
 * every annotation; 2 (fusions, layout clean-up) and 3 (EP-specific rewrites) run after it and give every
 * node they create the EP of its source node.
 */
enum { PC_LEVEL_BASIC = 0, PC_LEVEL_EXTENDED = 1, PC_LEVEL_LAYOUT = 2, PC_LEVEL_EP = 3, PC_LEVEL_MAX = 3 };

/* --explain sink: one call per change a pass makes. */
typedef struct pc_trace {
    void (*emit)(void *ctx, const char *pass, const char *message);
    void *ctx;
} pc_trace;

/* ---------------------------------------------------------------------------------------------------------------
 * Rewrite kinds: each pass declares the rewrites it makes (one row each, naming its pass: a pipeline pass or
 * "partition" for the layout transformer) and reports every one it commits, and every near miss (the whole
 * pattern matched but one condition refused), through pc_pass_options.rewrites (core/passes/pass.h:
 * pc_pass_note, pc_pass_near_miss). The suite counts, per kind, the cases where it fired and nearly fired.
 * Row: id, pass, kind, near (whether the pass reports near misses of this kind: a rewrite with no single
 * refusing condition, such as cancelling two Transposes, has none, and the suite holds it to the fired
 * threshold only), description. The kind's name is "pass/kind".
 */
#define PC_REWRITE_KINDS(X)                                                                                  \
    X(PC_RW_IDENTITY_REMOVED, "eliminate_identity", "identity_removed", true, "Identity bypassed")           \
    X(PC_RW_DROPOUT_REMOVED, "eliminate_dropout", "dropout_removed", true, "inference Dropout bypassed")     \
    X(PC_RW_CAST_REMOVED, "eliminate_cast", "cast_removed", true, "Cast to its input's type bypassed")       \
    X(PC_RW_CASTLIKE_REMOVED, "eliminate_cast", "castlike_removed", true,                                    \
      "CastLike of equal types bypassed")                                                                    \
    X(PC_RW_SLICE_REMOVED, "eliminate_slice", "slice_removed", true, "Slice keeping every element bypassed") \
    X(PC_RW_UNSQUEEZE_FOLDED, "eliminate_unsqueeze", "unsqueeze_folded", true,                               \
      "Unsqueeze of an initializer folded into one")                                                         \
    X(PC_RW_CONST_FOLDED, "fold_constants", "node_folded", true,                                             \
      "node of constants evaluated into initializers")                                                       \
    X(PC_RW_PRUNE_MUL_DIV_ONE, "prune_simple", "mul_div_one_removed", true, "x*1, 1*x, x/1 removed")         \
    X(PC_RW_PRUNE_ADD_SUB_ZERO, "prune_simple", "add_sub_zero_removed", true,                                \
      "x-0, x+(-0), integer x+0 removed")                                                                    \
    X(PC_RW_PRUNE_NEG_NEG, "prune_simple", "neg_neg_removed", true, "Neg(Neg(x)) removed")                   \
    X(PC_RW_DQ_Q_REMOVED, "remove_dq_q", "dq_q_removed", true,                                               \
      "DequantizeLinear -> QuantizeLinear pair removed")                                                     \
    X(PC_RW_RELU_CLIP_MERGED, "fuse_relu_clip", "relu_clip_merged", true,                                    \
      "Relu -> Clip merged into one Clip")                                                                   \
    X(PC_RW_CLIP_RELU_MERGED, "fuse_relu_clip", "clip_relu_merged", true,                                    \
      "Clip -> Relu merged into one Clip")                                                                   \
    X(PC_RW_CONV_BN_FOLDED, "fuse_conv_bn", "conv_bn_folded", true, "BatchNormalization folded into Conv")   \
    X(PC_RW_CONV_ADD_FOLDED, "fuse_conv_add", "conv_add_folded", true,                                       \
      "per-channel Add folded into Conv bias")                                                               \
    X(PC_RW_CONV_MUL_FOLDED, "fuse_conv_mul", "conv_mul_folded", true, "per-channel Mul folded into Conv")   \
    X(PC_RW_RESHAPE_FUSED, "fuse_reshape", "reshape_pair_fused", true, "Reshape -> Reshape fused")           \
    X(PC_RW_GELU_FUSED, "fuse_gelu", "gelu_fused", true,                                                     \
      "erf GELU subgraph fused into ai.onnx Gelu (opset 20+)")                                               \
    X(PC_RW_GELU_FUSED_MS, "fuse_gelu", "gelu_fused_ms", true,                                               \
      "erf GELU subgraph fused into com.microsoft Gelu")                                                     \
    X(PC_RW_CONV_RELU_FUSED, "fuse_conv_activation", "conv_relu_fused", true, "Conv + Relu -> FusedConv")    \
    X(PC_RW_CONV_CLIP_FUSED, "fuse_conv_activation", "conv_clip_fused", true, "Conv + Clip -> FusedConv")    \
    X(PC_RW_CONV_ACT_FUSED, "fuse_conv_activation", "conv_act_fused", true,                                  \
      "Conv + Sigmoid/Tanh/LeakyRelu/HardSigmoid -> FusedConv")                                              \
    X(PC_RW_QLINEAR_CONV, "fuse_qdq_qlinear", "qlinear_conv_fused", true, "DQ -> Conv -> Q -> QLinearConv")  \
    X(PC_RW_QLINEAR_CONV_RELU, "fuse_qdq_qlinear", "qlinear_conv_relu_fused", true,                          \
      "DQ -> Conv -> Relu -> Q, or QLinearConv -> DQ -> Relu -> Q -> QLinearConvRelu")                       \
    X(PC_RW_QLINEAR_MATMUL, "fuse_qdq_qlinear", "qlinear_matmul_fused", true,                                \
      "DQ -> MatMul -> Q -> QLinearMatMul")                                                                  \
    X(PC_RW_QLINEAR_ADD, "fuse_qdq_qlinear", "qlinear_add_fused", true,                                      \
      "DQ, DQ -> Add -> Q -> com.microsoft QLinearAdd")                                                      \
    X(PC_RW_QLINEAR_RELU, "fuse_qdq_qlinear", "qlinear_relu_fused", true,                                    \
      "DQ -> Relu -> Q with equal parameters -> systolic QLinearRelu")                                       \
    X(PC_RW_DQ_RELU_Q_REMOVED, "fuse_qdq_qlinear", "dq_relu_q_removed", true,                                \
      "DQ -> Relu -> Q removed (zero point at the low end)")                                                 \
    X(PC_RW_RELU_Q_DROPPED, "fuse_qdq_qlinear", "relu_before_q_removed", false,                              \
      "Relu before Q removed (zero point at the low end)")                                                   \
    X(PC_RW_TP_PUSH_ELEMENTWISE, "transpose_optimize", "push_unary", true,                                   \
      "Transpose pushed through a unary op")                                                                 \
    X(PC_RW_TP_PUSH_BROADCAST, "transpose_optimize", "push_broadcast", true,                                 \
      "Transpose pushed through a broadcasting op (other inputs unsqueezed/transposed)")                     \
    X(PC_RW_TP_PUSH_REDUCE, "transpose_optimize", "push_reduce", true,                                       \
      "Transpose pushed through Reduce* (axes)")                                                             \
    X(PC_RW_TP_PUSH_ARG, "transpose_optimize", "push_argmax", true,                                          \
      "Transpose pushed through ArgMax/ArgMin")                                                              \
    X(PC_RW_TP_PUSH_CONCAT, "transpose_optimize", "push_concat", true,                                       \
      "Transpose pushed through Concat (axis)")                                                              \
    X(PC_RW_TP_PUSH_SPLIT, "transpose_optimize", "push_split", true,                                         \
      "Transpose pushed through Split (axis)")                                                               \
    X(PC_RW_TP_PUSH_PAD, "transpose_optimize", "push_pad", true, "Transpose pushed through Pad (pads)")      \
    X(PC_RW_TP_PUSH_SLICE, "transpose_optimize", "push_slice", true,                                         \
      "Transpose pushed through Slice (axes)")                                                               \
    X(PC_RW_TP_PUSH_SOFTMAX, "transpose_optimize", "push_softmax", true,                                     \
      "Transpose pushed through Softmax/LogSoftmax/Hardmax")                                                 \
    X(PC_RW_TP_PUSH_GATHER, "transpose_optimize", "push_gather", true,                                       \
      "Transpose pushed through Gather (axis)")                                                              \
    X(PC_RW_TP_PUSH_SQUEEZE, "transpose_optimize", "push_squeeze", true, "Transpose pushed through Squeeze") \
    X(PC_RW_TP_PUSH_UNSQUEEZE, "transpose_optimize", "push_unsqueeze", true,                                 \
      "Transpose pushed through Unsqueeze")                                                                  \
    X(PC_RW_TP_PUSH_RESHAPE, "transpose_optimize", "push_reshape", true, "Transpose pushed through Reshape") \
    X(PC_RW_TP_RESHAPE_GROUPS, "transpose_optimize", "push_reshape_groups", true,                            \
      "Transpose carried through a Reshape splitting/merging axes (perm over axis groups)")                  \
    X(PC_RW_TP_PUSH_RESIZE, "transpose_optimize", "push_resize", true, "Transpose pushed through Resize")    \
    X(PC_RW_TP_PUSH_SHAPE, "transpose_optimize", "push_shape", true,                                         \
      "Transpose pushed into Shape (perm gather)")                                                           \
    X(PC_RW_TP_PUSH_TILE, "transpose_optimize", "push_tile", true,                                           \
      "Transpose pushed through Tile (repeats)")                                                             \
    X(PC_RW_TP_PUSH_QDQ, "transpose_optimize", "push_qdq", true, "Transpose pushed through Q/DQ")            \
    X(PC_RW_TP_QDQ_AXIS, "transpose_optimize", "qdq_axis_remapped", true,                                    \
      "Transpose pushed through per-axis Q/DQ (axis remapped)")                                              \
    X(PC_RW_TP_CANCEL, "transpose_optimize", "transposes_cancelled", false,                                  \
      "Transpose pushed into its inverse")                                                                   \
    X(PC_RW_TP_MERGE, "transpose_optimize", "transposes_merged", false,                                      \
      "Transpose pushed into another: composed")                                                             \
    X(PC_RW_TP_IDENTITY_REMOVED, "transpose_optimize", "noop_removed", false,                                \
      "identity Transpose (or one moving only size-1 axes) removed")                                         \
    X(PC_RW_TP_CONST_FOLDED, "transpose_optimize", "const_folded", false, "Transpose of a constant folded")  \
    X(PC_RW_TP_TWIN_MERGED, "transpose_optimize", "twin_merged", false,                                      \
      "duplicate Transpose of a value merged")                                                               \
    X(PC_RW_TP_TO_RESHAPE, "transpose_optimize", "became_reshape", false,                                    \
      "Transpose moving size-1 dims -> Reshape")                                                             \
    X(PC_RW_NHWC_MOVED, "partition", "node_moved_nhwc", true,                                                \
      "layout transformer: node moved to the NHWC domain")                                                   \
    X(PC_RW_SYSTOLIC_NHWC, "ep_rewrites", "systolic_conv_nhwc", true,                                        \
      "systolic: QLinearConv -> QLinearConv_nhwc (HWIO weight, reorders at NCHW boundaries)")                \
    X(PC_RW_SYSTOLIC_RELU, "ep_rewrites", "systolic_relu_fused", true,                                       \
      "systolic: QLinearConvRelu or QLinearConv_nhwc -> QLinearRelu -> QLinearConv_nhwc relu=1")             \
    X(PC_RW_SYSTOLIC_CARRY, "ep_rewrites", "systolic_carried_nhwc", true,                                    \
      "systolic: QLinearRelu / QLinearAdd with channels-last producers carried in NHWC")                     \
    X(PC_RW_BLOCKED_SUBGRAPH, "ep_rewrites", "blocked_subgraph", false,                                      \
      "blocked EP: a subgraph compiled into one Subgraph node (nChw<b>c body)")

#define PC_RW_ENUM_ROW(id, pass, kind, near, description) id,
typedef enum pc_rewrite_kind { PC_REWRITE_KINDS(PC_RW_ENUM_ROW) PC_RW_COUNT } pc_rewrite_kind;
#undef PC_RW_ENUM_ROW

/* Why a matched pattern was not rewritten (a near miss). */
#define PC_MISS_REASONS(X)                                                                                   \
    X(PC_MISS_NOT_CONSTANT, "constant", "an operand is not a constant, or a constant has the wrong value")   \
    X(PC_MISS_ATTRIBUTE, "attribute", "an attribute (mode, axis, training flag) refuses it")                 \
    X(PC_MISS_TYPE, "type-shape", "an element type or shape is unknown or unsupported")                      \
    X(PC_MISS_SHARED, "shared", "an intermediate value has another consumer or is a graph output")           \
    X(PC_MISS_ANNOTATION, "annotation-ep",                                                                   \
      "the nodes' annotations or EPs differ, or the EP refuses the result")                                  \
    X(PC_MISS_COST, "cost", "the cost model refuses it")                                                     \
    X(PC_MISS_OTHER, "other", "another condition")

#define PC_MISS_ENUM_ROW(id, name, description) id,
typedef enum pc_miss_reason { PC_MISS_REASONS(PC_MISS_ENUM_ROW) PC_MISS_COUNT } pc_miss_reason;
#undef PC_MISS_ENUM_ROW

/* Event counts of one optimize run (a caller-owned struct; zero it first). */
typedef struct pc_rewrite_counts {
    uint32_t fired[PC_RW_COUNT];
    uint32_t near[PC_RW_COUNT];
    uint32_t near_reason[PC_RW_COUNT][PC_MISS_COUNT];
} pc_rewrite_counts;

const char *pc_rewrite_kind_name(pc_rewrite_kind k); /* "fuse_conv_bn/conv_bn_folded" */
const char *pc_rewrite_kind_pass(pc_rewrite_kind k); /* "fuse_conv_bn" */
const char *pc_rewrite_kind_description(pc_rewrite_kind k);
bool pc_rewrite_kind_has_near_miss(pc_rewrite_kind k); /* the pass reports near misses of this kind */
const char *pc_miss_reason_name(pc_miss_reason r);     /* "constant" */

typedef struct pc_pass_options {
    const char *provider;   /* NULL: before partitioning (every node may change; new nodes carry annotations).
                               Otherwise only nodes assigned to this EP, or unassigned, may change, and new
                               nodes   take the EP of their source node. */
    const pc_ep *ep;        /* the EP named by provider, when there is one */
    bool layout_cost_check; /* inside the layout transformer: push channel-first/last perms through any
                               handled op */
    bool new_nodes_unassigned;  /* inside the layout transformer: new nodes start without an EP (GetCapability
                                   #2  claims them); their annotation is still copied from the source */
    uint32_t max_fold_elements; /* constant folding creates no tensor larger than this (elements) */
    pc_trace *trace;            /* may be NULL */
    const char *pass_name;      /* set by the pipeline for pc_pass_explain */
    pc_rewrite_counts *rewrites; /* NULL: no counting (pc_pass_note, pc_pass_near_miss) */
    /* Before partitioning, on a graph with layer_ann annotations, the pipeline runs each pass once per
     * annotation group (scoped, annotation: NULL for the unannotated nodes): only that group's nodes may
     * change, as only the run's EP's nodes may after partitioning. So no rewrite mixes groups (a merged
     * Transpose, a fused node or a graph output handed over across annotations would leave the partitioner
     * no right EP for the result). */
    bool scoped;
    const char *annotation;
} pc_pass_options;

typedef pc_status (*pc_pass_fn)(pc_graph *graph, const pc_pass_options *opts, bool *changed, pc_error *err);

typedef struct pc_pass_info {
    const char *name; /* "fuse_conv_bn" */
    int level;        /* PC_LEVEL_* */
    pc_pass_fn run;
    const char *requires;       /* preconditions, for documentation and --explain */
    bool again_after_partition; /* level 0/1 clean-ups that also run per EP with level 2 */
} pc_pass_info;

/* The pipeline table, in run order (partitioning is not in it: it runs between levels 1 and 2). */
size_t pc_pass_count(void);
const pc_pass_info *pc_pass_at(size_t index);
const pc_pass_info *pc_pass_find(const char *name);

/* Called after every pass (and after partitioning, with pass "partition"): the harness checks its properties
 * here. provider is the EP the pass ran for (levels 2+), NULL before partitioning and for "partition". A
 * non-OK status stops the pipeline and is returned. */
typedef pc_status (*pc_after_pass_fn)(void *ctx, const char *pass, const char *provider, pc_model *model,
                                      bool changed, pc_error *err);

/* One subgraph an EP would compile (or, for a non-compiling EP, one node it runs). */
typedef struct pc_ep_subgraph {
    const pc_ep *ep;
    uint32_t n_nodes;
    pc_node **nodes; /* topological order */
} pc_ep_subgraph;

typedef struct pc_partition_result {
    uint32_t n_subgraphs;
    pc_ep_subgraph *subgraphs; /* in the model's arena */
    uint32_t n_layout_changes; /* nodes the layout transformer moved into the NHWC domain */
} pc_partition_result;

typedef struct pc_optimize_options {
    int level; /* stop after this level (PC_LEVEL_*); < 2 means no partitioning */
    uint32_t n_eps;
    const pc_ep *const *eps;      /* priority order; NULL/0: cpu only */
    const char *layer_assignment; /* NULL: none */
    pc_trace *trace;
    bool verify_each_pass;      /* default: true in Debug/sanitizer builds */
    uint32_t max_fold_elements; /* default 1 << 16 */
    uint32_t max_iterations;    /* fixpoint rounds per level; default 8 */
    pc_after_pass_fn after_pass;
    void *after_pass_ctx;
    pc_rewrite_counts *rewrites; /* NULL: none; else every pass run adds its rewrites and near misses */
} pc_optimize_options;

void pc_optimize_options_default(pc_optimize_options *opts);

/* Runs the pipeline on the main graph (and subgraphs) up to opts->level. With partitioning (level >= 2) every
 * node ends with an EP, and the partition is written to *partition when it is non-NULL: its subgraphs as the
 * optimized graph holds them (the level-2+ passes fuse and remove nodes after partitioning), its layout
 * changes as partitioning made them. */
pc_status pc_model_optimize(pc_model *model, const pc_optimize_options *opts, pc_partition_result *partition,
                            pc_error *err);

/* Partitioning on its own (passcheck partition): GetCapability per EP in priority order, the layout
 * transformer for NHWC-preferring EPs, GetCapability again when it changed the graph, assignment; then
 * annotations are removed. */
pc_status pc_model_partition(pc_model *model, const pc_ep *const *eps, uint32_t n_eps,
                             const pc_layer_rules *rules, const pc_pass_options *opts,
                             pc_partition_result *out, pc_error *err);

/* The subgraphs of an assigned graph as it is now (out->n_layout_changes is left as it is): each compiling
 * EP's connected groups, one per node for the others. */
pc_status pc_model_list_subgraphs(pc_model *model, const pc_ep *const *eps, uint32_t n_eps,
                                  pc_partition_result *out, pc_error *err);

/* The layout transformer for one NHWC-preferring EP: every layout-sensitive node tentatively assigned to the
 * EP (node->ep == ep->name) moves into the internal NHWC domain between Transposes, then the transpose
 * optimizer runs with the EP as provider. New nodes are unassigned (GetCapability #2 claims them) and keep
 * their source's annotation. */
pc_status pc_layout_transform(pc_graph *graph, const pc_ep *ep, const pc_pass_options *opts, bool *changed,
                              pc_error *err);
/* The transpose optimizer as a pass (also in the pipeline at levels 1 and 2). */
pc_status pc_transpose_optimize(pc_graph *graph, const pc_pass_options *opts, bool *changed, pc_error *err);

/* Total Transpose cost as ORT's tests measure it: over every Transpose, its output dims != 1 (5 if unknown).
 */
uint64_t pc_graph_transpose_cost(const pc_graph *graph);

/* ---------------------------------------------------------------------------------------------------------------
 * Fault injection (core/base/fault.c): deliberate bugs planted in passes so tests can prove the property
 * suite catches them (`passcheck suite --inject NAME`, `--list-faults`). Off unless enabled; process-global
 * (the suite checks each case in its own process).
 */
#define PC_FAULT_LIST(X)                                                                                     \
    X(PC_FAULT_FUSION_DROPS_ANNOTATION, "fusion-drops-annotation",                                           \
      "fuse_reshape (level 1) gives the fused Reshape no layer_ann")                                         \
    X(PC_FAULT_LEVEL2_FORGETS_EP, "level2-forgets-ep",                                                       \
      "fuse_conv_activation (level 2) leaves the new FusedConv without an EP")                               \
    X(PC_FAULT_CONCAT_AXIS, "concat-wrong-axis",                                                             \
      "the transpose optimizer's Concat handler remaps axis by perm, "                                       \
      "not by its inverse")                                                                                  \
    X(PC_FAULT_SOFTMAX_OLD_OPSET, "softmax-push-old-opset",                                                  \
      "the transpose optimizer pushes through Softmax/LogSoftmax/Hardmax below opset 13 (where axis "        \
      "flattens)")                                                                                           \
    X(PC_FAULT_SKIP_CANCEL, "transpose-skip-cancel",                                                         \
      "the transpose optimizer leaves the first cancelling Transpose pair it finds in place")                \
    X(PC_FAULT_QDQ_ROUNDING, "qdq-wrong-rounding",                                                           \
      "the QDQ -> QLinear rewrite requantizes with the multiplier x_scale*w_scale/y_scale rounded to 8 "     \
      "fractional "                                                                                          \
      "bits (a coarse fixed-point multiplier)")                                                              \
    X(PC_FAULT_FUSION_MERGES_ANNOTATIONS, "fusion-merges-annotations",                                       \
      "layer_ann is ignored when deciding what may be merged (pc_nodes_fusable and the per-annotation "      \
      "scope of level-0/1 runs): fusions merge nodes of different annotations")                              \
    X(PC_FAULT_RESHAPE_PUSH, "reshape-push-any",                                                             \
      "the transpose optimizer pushes through a Reshape that moves dims other than size-1 ones")             \
    X(PC_FAULT_NEG_NEG_SKIPPED, "neg-neg-skipped",                                                           \
      "prune_simple silently stops removing Neg(Neg(x)) (no graph changes: only rewrite-fired sees it)")     \
    X(PC_FAULT_GATHER_AXIS, "gather-push-wrong-axis",                                                        \
      "the transpose optimizer's Gather handler remaps axis by the inverse perm")                            \
    X(PC_FAULT_CAST_SAME_WIDTH, "cast-same-width-removed",                                                   \
      "eliminate_cast also removes a Cast between two types of the same bit width (int32 <-> float, "        \
      "int8 <-> uint8)")                                                                                     \
    X(PC_FAULT_FOLD_INT_DIV_FLOOR, "fold-int-div-floor",                                                     \
      "the constant evaluator's integer Div rounds toward -inf instead of toward zero (fold_constants)")     \
    X(PC_FAULT_LAYER_RULE_CONTAINS, "layer-rule-contains",                                                   \
      "a prefix layer-assignment pattern matches any annotation that contains it, not only those it starts") \
    X(PC_FAULT_FOLD_SKIPS_ERRORS, "fold-skips-errors",                                                       \
      "fold_constants takes every evaluator failure, out-of-memory included, for 'cannot fold' and skips "   \
      "the node")                                                                                            \
    X(PC_FAULT_EP_FILE_BLOCK_BOUND, "ep-file-block-bound",                                                   \
      "the EP-file parser accepts block=1025 (its bound is off by one; only malformed files reach it)")      \
    X(PC_FAULT_CAPABILITY_OPSET_MIN, "capability-refuses-min-opset",                                         \
      "an EP's op row refuses nodes at exactly its minimum opset (they move to a later EP that claims "      \
      "them: no assignment is wrong, only the partition)")                                                   \
    X(PC_FAULT_EVAL_TIE_LATER, "eval-tie-later",                                                             \
      "the constant evaluator's float Min and Max return the later of two equal operands (a tie of +0 and "  \
      "-0 gives the other zero)")                                                                            \
    X(PC_FAULT_GATHER_PERM_ORDER, "gather-perm-order",                                                       \
      "the transpose optimizer reorders computed pads/repeats/scales with a Gather of the perm instead of "  \
      "its inverse")                                                                                         \
    X(PC_FAULT_RESHAPE_GROUPS_APART, "reshape-groups-apart",                                                 \
      "the transpose optimizer carries a Transpose through a Reshape merging axes the stored tensor holds "  \
      "apart")                                                                                               \
    X(PC_FAULT_RUNTIME_IM2COL_PAD, "runtime-im2col-pad",                                                     \
      "the runtime's NCHW im2col ignores the padding at the start of each row (reads the window unshifted)") \
    X(PC_FAULT_RUNTIME_DEPTHWISE_NHWC, "runtime-depthwise-nhwc-channels",                                    \
      "the runtime's NHWC depthwise conv steps through the weights' channels backwards (channel c gets "     \
      "channel C-1-c's filter)")                                                                             \
    X(PC_FAULT_RUNTIME_REQUANT_TRUNCATE, "runtime-requant-truncate",                                         \
      "the runtime's QLinearConv/QLinearMatMul requantization truncates toward zero instead of rounding to " \
      "nearest even")                                                                                        \
    X(PC_FAULT_SYSTOLIC_WEIGHT_OHWI, "systolic-weight-ohwi",                                                 \
      "the systolic rewrite lays QLinearConv_nhwc's weight out as OHWI (the fork's 2020 order before its "   \
      "per-group transpose) under HWIO dims")                                                                \
    X(PC_FAULT_SYSTOLIC_ADD_SHAPE_COPY, "systolic-add-shape-copy",                                           \
      "the systolic rewrite compares QLinearAdd's input A shape with itself instead of B's before carrying " \
      "it in NHWC (the fork's TransformQLinearAdd copy-paste)")                                              \
    X(PC_FAULT_SYSTOLIC_ADD_NO_RETURN, "systolic-add-no-return",                                             \
      "the systolic rewrite explains a QLinearAdd shape mismatch but carries the add in NHWC anyway (the "   \
      "fork's bail-out that logs without returning)")                                                        \
    X(PC_FAULT_BLOCKED_WEIGHT_IO, "blocked-weight-io-swapped",                                               \
      "the blocked compile lays a Conv weight's inner b x b tile out as (b_o, b_i) instead of (b_i, b_o)")   \
    X(PC_FAULT_BLOCKED_REORDER_PER_OP, "blocked-reorder-per-op",                                             \
      "the blocked compile reorders back to plain and forth again between adjacent blocked primitives (no "  \
      "layout propagation, the per-op design MKL-DNN's subgraphs replaced)")

#define PC_FAULT_ENUM_ROW(id, name, description) id,
typedef enum pc_fault { PC_FAULT_LIST(PC_FAULT_ENUM_ROW) PC_FAULT_COUNT } pc_fault;
#undef PC_FAULT_ENUM_ROW

const char *pc_fault_name(pc_fault f);
const char *pc_fault_description(pc_fault f);
/* Enables the comma-separated faults in `list`; an unknown name is PC_ERR_USAGE naming it (nothing enabled).
 */
pc_status pc_fault_enable_list(const char *list, pc_error *err);
void pc_fault_reset(void);
bool pc_fault_active(pc_fault f);

/* ---------------------------------------------------------------------------------------------------------------
 * The runtime (core/runtime, docs/runtime.md): run a model fast on OpenBLAS.
 *
 *     pc_session_options so;
 *     pc_session_options_default(&so);               // level 3, cpu EP, one thread
 *     pc_session *s;
 *     if (pc_session_create(model, &so, &s, &err) != PC_OK) ...   // UNSUPPORTED names a node without a
 * kernel pc_data **outs; if (pc_session_run(s, 1, &x, &outs, &err) == PC_OK) {       // inputs checked:
 * names, types, shapes
 *         ... outs[0] ...
 *         pc_session_free_outputs(s, outs);
 *     }
 *     pc_session_free(s);
 *
 * Creation copies the model, runs the pass pipeline on the copy (unless `optimize` is off: the graph is run
 * as given) and binds a kernel to every node — a node no kernel runs fails here, never at run time. With
 * every input shape static, shapes are resolved and memory planned at creation too; with symbolic dims at the
 * first run (and again when the input shapes change): core's shape inference fixes every value's size, each
 * kernel checks its node against them, and one 64-byte-aligned arena holds all intermediate values, a buffer
 * reused once its value is dead. A session runs from one thread at a time. */
typedef struct pc_session pc_session;

typedef struct pc_session_options {
    bool optimize;                /* run the pass pipeline on the copy first (default true) */
    pc_optimize_options pipeline; /* when optimizing: level, EPs, layer assignment */
    int threads;                  /* gemm threads (>= 1; default 1) */
    bool profile;                 /* time every node's kernel (pc_session_get_profile; default false) */
} pc_session_options;

void pc_session_options_default(pc_session_options *opts);
pc_status pc_session_create(const pc_model *model, const pc_session_options *opts, pc_session **out,
                            pc_error *err);
/* inputs[i] feeds the i-th graph input that is not an initializer. *outputs: graph->n_outputs new references
 * (pc_session_free_outputs). */
pc_status pc_session_run(pc_session *s, uint32_t n_inputs, pc_data *const *inputs, pc_data ***outputs,
                         pc_error *err);
void pc_session_free_outputs(pc_session *s, pc_data **outputs);
void pc_session_free(pc_session *s);

typedef struct pc_session_stats {
    uint32_t n_nodes;    /* nodes bound to kernels */
    bool planned;        /* a memory plan exists (static shapes, or after a run) */
    size_t arena_bytes;  /* the planned peak: intermediates and scratch in one arena */
    size_t tensor_bytes; /* the sum of every intermediate value's and scratch buffer's size */
    size_t output_bytes; /* graph outputs (allocated per run, returned to the caller) */
} pc_session_stats;
void pc_session_get_stats(const pc_session *s, pc_session_stats *stats);
/* With opts.profile: one entry per node of the current plan, in run order (free() the array). The nodes
 * belong to the plan: valid until the next run that replans (new input shapes) or pc_session_free. */
typedef struct pc_session_profile_entry {
    const pc_node *node;
    uint64_t runs;
    double seconds; /* summed over the runs */
    double flops;   /* per run, 2 x multiply-adds: Conv, FusedConv, MatMul, Gemm, FusedGemm; else 0 */
} pc_session_profile_entry;
pc_status pc_session_get_profile(const pc_session *s, pc_session_profile_entry **entries, uint32_t *n,
                                 pc_error *err);
/* The machine's cblas_sgemm rate in GFLOP/s at `threads` threads: the best of 3 square n x n products after
 * a warm-up (0 on bad arguments or no memory). The yardstick for the runtime's Conv/MatMul rates (bench). */
double pc_runtime_sgemm_gflops(int threads, int n);
/* The optimized model the session runs (owned by the session). */
const pc_model *pc_session_model(const pc_session *s);

/* Writes a runtime tensor as a TensorProto file (the backend test data's input_N.pb form), named `name`.
 * Temporary file + rename, like pc_model_save_file. Tensors only (PC_ERR_UNSUPPORTED otherwise). */
pc_status pc_data_save_file(const pc_data *d, const char *name, const char *path, pc_error *err);

#ifdef __cplusplus
}
#endif

#endif /* PASSCHECK_H */
