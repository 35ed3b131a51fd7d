/* Shape inference internals: the per-node context every inference function receives, the helpers they share
 * (infer.c, window.c) and the functions of each op family. The table in infer.c maps (domain, op) to them. */
#ifndef PC_SHAPE_INTERNAL_H
#define PC_SHAPE_INTERNAL_H

#include "core/internal.h"

/* A shape being built: rank -1 is unknown. Dims reuse pc_dim (symbol strings point into the model's arena).
 */
typedef struct sh_shape {
    int32_t rank;
    pc_dim dims[PC_MAX_RANK];
} sh_shape;

/* What inference found for one output; outputs left unset are not touched. */
typedef struct sh_out {
    bool set;
    pc_dtype elem; /* UNDEFINED: not known */
    sh_shape shape;
} sh_out;

/* A small int vector known during a graph walk (values.c): rank 0 (n == 1) or rank 1. */
typedef struct sh_ints {
    int32_t rank;
    int32_t n;
    int64_t v[PC_MAX_RANK];
} sh_ints;

typedef struct sh_values sh_values;

typedef struct sh_ctx {
    const pc_node *node;
    const sh_values *values; /* may be NULL (single-node inference) */
    int64_t opset;           /* the standard op's semantics (an internal op uses its base op's opset) */
    /* layout views (the rule's nhwc or blocked layout): the function reads input 0 as in0 (channels-first or
     * padded plain) when in0_view, and input w_input (an HWIO or blocked weight) as the OIHW inw */
    bool in0_view;
    sh_shape in0;
    uint32_t w_input;
    sh_shape inw;
    uint32_t n_out;
    sh_out *out;
    pc_error *err;
} sh_ctx;

typedef pc_status (*sh_infer_fn)(sh_ctx *c);

typedef struct sh_rule {
    const char *domain; /* "" for ai.onnx */
    const char *op_type;
    sh_infer_fn infer;
    bool nhwc;
    uint8_t hwio_weight; /* 0, or the input holding an HWIO weight (the systolic EP's layout) */
    /* the blocked EP's layout (docs/ep.md): input 0 and output 0 are nChw<b>c (N, C/b, H, W, b), which the
     * function sees as the zero-padded plain (N, C, H, W); blocked_weight: 0, or the input holding a blocked
     * weight (O/b, I/b, kH, kW, b_i, b_o), seen as OIHW */
    bool blocked;
    uint8_t blocked_weight;
} sh_rule;

/* The table (infer.c): sorted by (domain, op_type) with strcmp; looked up by bsearch. */
size_t pc_shape_rule_count(void);
const sh_rule *pc_shape_rule_at(size_t index);
const sh_rule *pc_shape_rule_find(const char *domain, const char *op_type);
/* false (and the first out-of-order pair in why) when the table is not strictly sorted. */
bool pc_shape_table_check(char *why, size_t why_size);

/* ---- helpers (infer.c) ---- */
/* PC_ERR_SHAPE (or the given status) with "node 'name' (Op): " in front. */
pc_status sh_fail(sh_ctx *c, const char *fmt, ...) PC_PRINTF(2, 3);
pc_status sh_fail_status(sh_ctx *c, pc_status st, const char *fmt, ...) PC_PRINTF(3, 4);
bool sh_has_input(const sh_ctx *c, uint32_t i);
/* The tensor a value always holds: an initializer no graph input overrides, or a Constant node's `value`;
 * NULL otherwise. */
const pc_tensor *sh_value_tensor(const pc_value *v);
/* Element i of an int32/int64 tensor (false for other types). */
bool sh_tensor_int(const pc_tensor *t, uint64_t i, int64_t *out);
pc_dtype sh_in_elem(const sh_ctx *c, uint32_t i);
/* Input i's shape; false (and rank -1) when unknown or absent. */
bool sh_in_shape(const sh_ctx *c, uint32_t i, sh_shape *out);
/* A constant input's int32/int64 values (initializer, Constant node, or a value propagated in this graph
 * walk), at most cap of them. */
bool sh_const_ints(const sh_ctx *c, uint32_t i, int64_t *vals, size_t cap, size_t *n);
/* A constant input's floating-point values as doubles. */
bool sh_const_floats(const sh_ctx *c, uint32_t i, double *vals, size_t cap, size_t *n);
/* Number of elements of a 1-D input whose length is known (or a constant), -1 otherwise. */
int64_t sh_in_length(const sh_ctx *c, uint32_t i);
const int64_t *sh_attr_ints(const sh_ctx *c, const char *name, size_t *n);
int64_t sh_attr_int(const sh_ctx *c, const char *name, int64_t fallback);
/* Marks output i as inferred; returns it with rank -1 and the given element type. */
sh_out *sh_out_at(sh_ctx *c, uint32_t i, pc_dtype elem);
/* Output i with the given element type and shape (shape NULL: rank unknown). */
void sh_set_out(sh_ctx *c, uint32_t i, pc_dtype elem, const sh_shape *shape);
void sh_dim_known(pc_dim *d, int64_t size);
void sh_dim_unknown(pc_dim *d);
bool sh_dim_is(const pc_dim *d, int64_t size);
/* Normalizes an axis in [-rank, rank) (PC_ERR_ATTRIBUTE naming `what` otherwise). */
pc_status sh_axis(sh_ctx *c, int64_t axis, int32_t rank, const char *what, int32_t *out);
/* Multidirectional broadcast of a and b into out (either rank unknown: out rank unknown). */
pc_status sh_broadcast(sh_ctx *c, const sh_shape *a, const sh_shape *b, sh_shape *out);
/* Checked int64 arithmetic: dims and attributes come from files and may be absurd. */
static inline bool sh_mul(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool sh_add(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}
/* Elements of x[start:end:step] along a dim of size dim, with ONNX's clamping; *first is the first index. */
int64_t sh_slice_count(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first);
/* Product of dims [from, to) into d (unknown when any is unknown). */
void sh_dims_product(const sh_shape *s, int32_t from, int32_t to, pc_dim *d);

/* ---- values.c: shape-value propagation within one graph walk ---- */
/* NULL when out of memory. Propagation refines what inference finds (a computed Reshape shape), so running
 * without it would give another graph: out of memory here is an error like any other. */
sh_values *sh_values_create(const pc_graph *graph);
void sh_values_free(sh_values *values);
const sh_ints *sh_values_get(const sh_values *values, const pc_value *v);
/* After node c->node was inferred: records its output 0's value when the op computes one from known inputs;
 * PC_ERR_NOMEM (in c->err) when it cannot. */
pc_status sh_values_propagate(sh_ctx *c, sh_values *values);

/* ---- window.c: the one conv/pool output-size computation ---- */
typedef enum sh_window_kind { SH_WINDOW_CONV, SH_WINDOW_POOL, SH_WINDOW_CONV_TRANSPOSE } sh_window_kind;
/* Spatial output dims of x (N, C, spatial...) for kernel k[nsp] (from the weights or kernel_shape), reading
 * strides, dilations, pads, auto_pad, ceil_mode (pools), output_padding and output_shape (ConvTranspose) from
 * the node. Writes nsp dims into out (unknown where the input dim is unknown). */
pc_status sh_window_dims(sh_ctx *c, sh_window_kind kind, const sh_shape *x, const int64_t *k, pc_dim *out);

/* ---- op families ---- */
/* infer_elementwise.c */
pc_status sh_infer_same(sh_ctx *c);
/* infer_control.c */
pc_status sh_infer_if(sh_ctx *c);
pc_status sh_infer_loop(sh_ctx *c);
pc_status sh_infer_scan(sh_ctx *c);
pc_status sh_infer_same_bool(sh_ctx *c);
pc_status sh_infer_cast(sh_ctx *c);
pc_status sh_infer_cast_like(sh_ctx *c);
pc_status sh_infer_dropout(sh_ctx *c);
pc_status sh_infer_broadcast(sh_ctx *c);
pc_status sh_infer_compare(sh_ctx *c);
pc_status sh_infer_where(sh_ctx *c);
/* infer_tensor.c */
pc_status sh_infer_transpose(sh_ctx *c);
pc_status sh_infer_reshape(sh_ctx *c);
pc_status sh_infer_flatten(sh_ctx *c);
pc_status sh_infer_squeeze(sh_ctx *c);
pc_status sh_infer_unsqueeze(sh_ctx *c);
pc_status sh_infer_concat(sh_ctx *c);
pc_status sh_infer_split(sh_ctx *c);
pc_status sh_infer_slice(sh_ctx *c);
pc_status sh_infer_pad(sh_ctx *c);
pc_status sh_infer_tile(sh_ctx *c);
pc_status sh_infer_expand(sh_ctx *c);
pc_status sh_infer_gather(sh_ctx *c);
pc_status sh_infer_gather_elements(sh_ctx *c);
pc_status sh_infer_shape(sh_ctx *c);
pc_status sh_infer_size(sh_ctx *c);
pc_status sh_infer_constant_of_shape(sh_ctx *c);
pc_status sh_infer_constant(sh_ctx *c);
pc_status sh_infer_range(sh_ctx *c);
pc_status sh_infer_depth_to_space(sh_ctx *c);
pc_status sh_infer_space_to_depth(sh_ctx *c);
pc_status sh_infer_resize(sh_ctx *c);
pc_status sh_infer_top_k(sh_ctx *c);
pc_status sh_infer_eye_like(sh_ctx *c);
pc_status sh_infer_non_zero(sh_ctx *c);
pc_status sh_infer_one_hot(sh_ctx *c);
/* infer_reduce.c */
pc_status sh_infer_reduce(sh_ctx *c);
pc_status sh_infer_arg_reduce(sh_ctx *c);
/* infer_nn.c */
pc_status sh_infer_matmul(sh_ctx *c);
pc_status sh_infer_gemm(sh_ctx *c);
pc_status sh_infer_conv(sh_ctx *c);
pc_status sh_infer_conv_transpose(sh_ctx *c);
pc_status sh_infer_pool(sh_ctx *c);
pc_status sh_infer_global_pool(sh_ctx *c);
pc_status sh_infer_batch_norm(sh_ctx *c);
pc_status sh_infer_layer_norm(sh_ctx *c);
pc_status sh_infer_grid_sample(sh_ctx *c);
pc_status sh_infer_max_unpool(sh_ctx *c);
/* Conv-shaped output 0 from X (input 0) and W (input w_input), and MatMul-shaped output 0 from inputs a and
 * b; shared by the float and quantized forms. */
pc_status sh_conv_output(sh_ctx *c, uint32_t w_input, pc_dtype elem);
pc_status sh_matmul_output(sh_ctx *c, uint32_t a_input, uint32_t b_input, pc_dtype elem);
/* infer_quant.c */
pc_status sh_infer_quantize(sh_ctx *c);
pc_status sh_infer_dequantize(sh_ctx *c);
pc_status sh_infer_qlinear_conv(sh_ctx *c);
pc_status sh_infer_qlinear_add(sh_ctx *c);
pc_status sh_infer_systolic_add(sh_ctx *c);
pc_status sh_infer_qlinear_relu(sh_ctx *c);
/* infer_blocked.c: the blocked EP's reorders and compiled node */
pc_status sh_infer_to_blocked(sh_ctx *c);
pc_status sh_infer_from_blocked(sh_ctx *c);
pc_status sh_infer_blocked_subgraph(sh_ctx *c);
pc_status sh_infer_qlinear_matmul(sh_ctx *c);
pc_status sh_infer_dynamic_quantize(sh_ctx *c);
pc_status sh_infer_matmul_integer(sh_ctx *c);
pc_status sh_infer_conv_integer(sh_ctx *c);

#endif
