/* Internals of the reference executor: the kernel signature, the op tables, and the small helpers every op
 * family uses (element access in double/int64, broadcasting, attributes, axes). Op families live one per file
 * (ops_*.c) and export one table each; registry.c merges them. */
#ifndef PC_REF_INTERNAL_H
#define PC_REF_INTERNAL_H

#include <stdarg.h>

#include "reference/reference.h"

typedef struct ref_frame ref_frame;

/* What a kernel sees besides its node and values. */
typedef struct ref_ctx {
    const pc_model *model;
    const pc_node *node;
    int64_t opset; /* the model's opset import for the node's domain */
    pc_error *err;
    ref_frame *frame; /* the running graph: subgraph kernels (If, Loop, Scan) run bodies inside it */
    const pc_ref_options *opts; /* the run's settings (never NULL) */
} ref_ctx;

/* A kernel reads in[0..n_in) (NULL = omitted optional input; n_in is node->n_inputs) and stores new
 * references in out[0..n_out) (n_out = node->n_outputs). It may leave an out slot NULL only when that output
 * is omitted by the node (node->outputs[i] == NULL). On failure it returns a status with ctx->err filled
 * (ref_fail) and must not leak what it allocated. */
typedef pc_status (*ref_kernel)(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                uint32_t n_out);

typedef struct ref_op {
    const char *domain; /* "" = ai.onnx */
    const char *op_type;
    ref_kernel run;
} ref_op;

/* Op family tables (one per ops_*.c). Add a family: define its table, list it in registry.c. */
#define REF_OP_TABLE(name)                                                                                   \
    extern const ref_op name[];                                                                              \
    extern const size_t name##_count;
#define REF_OP_TABLE_DEFINE(name, ...)                                                                       \
    const ref_op name[] = {__VA_ARGS__};                                                                     \
    const size_t name##_count = sizeof name / sizeof name[0];

const ref_op *ref_op_find(const char *domain, const char *op_type);
/* For tests: how many ops are registered, and how many (domain, op) pairs appear twice (the first written to
 * `first`, "domain:Op"). A duplicate would make lookups depend on sort order. */
size_t ref_registry_size(void);
size_t ref_registry_duplicates(char *first, size_t size);

/* Runs `body` (a subgraph of the current node) with inputs bound to its graph inputs in order; outer
 * references resolve through the running frames. outs receives body->n_outputs new references. */
pc_status ref_run_body(ref_ctx *ctx, const pc_graph *body, uint32_t n_in, pc_data *const *in, pc_data **outs);

/* ---- errors
 * -------------------------------------------------------------------------------------------------- */
/* Sets ctx->err to "node 'name' (Op, opset N): message" and returns status. */
pc_status ref_fail(ref_ctx *ctx, pc_status status, const char *fmt, ...) PC_PRINTF(3, 4);
/* PC_ERR_UNSUPPORTED naming the op, domain and opset plus what is missing. */
pc_status ref_unsupported(ref_ctx *ctx, const char *fmt, ...) PC_PRINTF(2, 3);

/* ---- dtypes
 * -------------------------------------------------------------------------------------------------- */
/* Relu on one value (ops_elementwise.c): -0 -> +0, NaN kept; shared with the fused activations. */
double ref_relu(double x);
bool ref_is_float(pc_dtype t);   /* float16, bfloat16, float, double */
bool ref_is_int(pc_dtype t);     /* int8..int64, uint8..uint64 */
bool ref_is_signed(pc_dtype t);  /* int8..int64 */
bool ref_is_numeric(pc_dtype t); /* float, int or bool */
/* Requires in[i]'s dtype to satisfy pred; a clear TYPE error otherwise (what = "float", "numeric", ...). */
pc_status ref_require_dtype(ref_ctx *ctx, const pc_data *d, uint32_t index, bool (*pred)(pc_dtype),
                            const char *what);
pc_status ref_require_tensor(ref_ctx *ctx, pc_data *const *in, uint32_t n_in,
                             uint32_t index); /* present tensor */
/* Inputs 0 and 1: present tensors whose dtypes satisfy accept, and (same_dtype) of one element type. */
pc_status ref_require_pair(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, bool (*accept)(pc_dtype),
                           const char *what, bool same_dtype);
/* UNSUPPORTED for element types that are not whole bytes (packed 4/2-bit): kernels that slice raw runs call
 * it for values that did not come through a node input (those are refused before any kernel runs). */
pc_status ref_require_bytewise(ref_ctx *ctx, pc_dtype dtype, const char *where);

float ref_f16_to_f32(uint16_t h);
uint16_t ref_f32_to_f16(float f); /* round to nearest even */
float ref_bf16_to_f32(uint16_t h);
uint16_t ref_f32_to_bf16(float f); /* round to nearest even */
uint16_t ref_f64_to_f16(double v); /* one rounding (to nearest even), no double rounding through float */
uint16_t ref_f64_to_bf16(double v);

/* Element access by flat index, any numeric dtype (bool reads as 0/1). Float stores round to the element
 * type; integer stores wrap to the element width (two's complement), as ONNX integer arithmetic does. */
double ref_get_f64(const pc_data *t, uint64_t i);
int64_t ref_get_i64(const pc_data *t, uint64_t i); /* floats truncate toward zero (saturating) */
void ref_set_f64(pc_data *t, uint64_t i,
                 double v); /* integers: v truncated toward zero, saturating, then wrapped */
void ref_set_i64(pc_data *t, uint64_t i, int64_t v);
/* Copies element si of src to element di of dst (same dtype; strings copied). false on allocation failure. */
bool ref_copy_elem(pc_data *dst, uint64_t di, const pc_data *src, uint64_t si);
/* Copies n consecutive elements src[si..] to dst[di..] (same dtype; one memcpy unless strings). Byte-sized
 * types and strings only: the executor refuses packed sub-byte types before any kernel runs. */
bool ref_copy_elems(pc_data *dst, uint64_t di, const pc_data *src, uint64_t si, uint64_t n);

/* ---- new values
 * ---------------------------------------------------------------------------------------------- */
/* Largest tensor (elements) a kernel agrees to build: sizes come from input values, so they are refused, not
 * attempted, above this. */
#define REF_MAX_ELEMENTS ((uint64_t)1 << 31)
/* A zeroed tensor; negative dims (PC_ERR_SHAPE) and more than REF_MAX_ELEMENTS (PC_ERR_BUDGET) are refused.
 * On failure sets ctx->err (naming the node) and returns NULL. */
pc_data *ref_new_tensor(ref_ctx *ctx, pc_dtype dtype, int32_t rank, const int64_t *dims);
pc_data *ref_new_scalar(ref_ctx *ctx, pc_dtype dtype);
/* Same data, new shape (copy; n_elements must match). */
pc_data *ref_reshaped(ref_ctx *ctx, const pc_data *src, int32_t rank, const int64_t *dims);
void ref_unref_all(pc_data **values, uint32_t n); /* unrefs and NULLs each */

/* ---- shapes
 * -------------------------------------------------------------------------------------------------- */
typedef struct ref_shape {
    int32_t rank;
    int64_t dims[PC_MAX_RANK];
} ref_shape;

/* Multidirectional (numpy) broadcast of n tensors' shapes. SHAPE error naming the inputs on mismatch. */
pc_status ref_broadcast_shape(ref_ctx *ctx, uint32_t n, pc_data *const *ts, ref_shape *out);
/* The same and its element count; BUDGET above 2^31 elements. */
pc_status ref_broadcast_result(ref_ctx *ctx, uint32_t k, pc_data *const *ts, ref_shape *out, uint64_t *n);
/* For each flat index of `out`, the flat index into t (t broadcast to out). Fills idx[0..n_out). */
/* Broadcast of k tensors with their index tables: input j's source index for output element e is
 * idx[j * n + e]. BUDGET above 2^31 output elements. The caller frees idx (also after a failure: NULL then).
 */
typedef struct ref_bcast {
    ref_shape shape;
    uint64_t n;    /* output elements */
    uint64_t *idx; /* k arrays of n flat source indices */
} ref_bcast;
pc_status ref_bcast_init(ref_ctx *ctx, uint32_t k, pc_data *const *ts, ref_bcast *b);
void ref_broadcast_index(const pc_data *t, const ref_shape *out, uint64_t *idx);
/* t's stride (in elements) along each axis of `out` when t is broadcast to it: 0 where t has no such axis or
 * a size-1 one. Walking out row-major with these gives the source positions without an index table. */
void ref_broadcast_strides(const pc_data *t, const ref_shape *out, int64_t *strides);
/* Row-major strides of a shape (in elements). For an empty tensor with huge other dims they wrap (defined,
 * unsigned); callers never index an empty tensor. */
void ref_strides(int32_t rank, const int64_t *dims, int64_t *strides);
uint64_t ref_shape_count(int32_t rank, const int64_t *dims);

/* Normalizes an axis in [-rank, rank); with `inclusive`, in [-rank-1, rank] counting negatives from rank+1
 * (the Unsqueeze/OneHot convention: -1 is "after the last axis"). Flatten's [-r, r] with negatives from r is
 * neither: it handles its axis itself. ATTRIBUTE error naming the axis otherwise. */
pc_status ref_axis(ref_ctx *ctx, int64_t axis, int32_t rank, bool inclusive, int32_t *out);

/* ---- attributes and small integer inputs ----------------------------------------------------------------
 */
int64_t ref_attr_int(ref_ctx *ctx, const char *name, int64_t fallback);
double ref_attr_float(ref_ctx *ctx, const char *name, double fallback);
const char *ref_attr_string(ref_ctx *ctx, const char *name, const char *fallback);
/* List attributes: *n = 0 and NULL when absent. */
const int64_t *ref_attr_ints(ref_ctx *ctx, const char *name, size_t *n);
const float *ref_attr_floats(ref_ctx *ctx, const char *name, size_t *n);
bool ref_has_attr(ref_ctx *ctx, const char *name);
/* Reads an integer tensor (any int dtype) into a malloc'ed int64 array; *n elements. TYPE error otherwise. */
pc_status ref_read_ints(ref_ctx *ctx, const pc_data *t, const char *what, int64_t **vals, size_t *n);

#endif
