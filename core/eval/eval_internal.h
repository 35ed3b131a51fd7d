/* Constant evaluator internals: the per-dtype element access table, the evaluation context, output creation
 * with the element budget, broadcasting, and the op functions of each family (eval_math.c, eval_tensor.c). */
#ifndef PC_EVAL_INTERNAL_H
#define PC_EVAL_INTERNAL_H

#include "core/eval/eval.h"

/* One row per supported element type. Floats load/store through double (store rounds once, to nearest even);
 * integers through int64 (uint64 as its bit pattern; store truncates, so arithmetic wraps). */
typedef struct ev_dtype {
    pc_dtype dtype;
    unsigned size;
    bool is_float;
    bool is_unsigned;
    double (*load_f)(const void *data, uint64_t i);
    void (*store_f)(void *data, uint64_t i, double v);
    int64_t (*load_i)(const void *data, uint64_t i);
    void (*store_i)(void *data, uint64_t i, int64_t v);
} ev_dtype;

const ev_dtype *ev_dtype_of(pc_dtype dtype); /* NULL when the evaluator does not handle the type */

typedef struct ev_ctx {
    const pc_node *node;
    pc_model *model;
    int64_t opset;
    const pc_tensor *const *in;
    uint32_t n_in;
    pc_tensor **out;
    uint32_t n_out;
    uint64_t max_elements;
    pc_error *err;
} ev_ctx;

typedef pc_status (*ev_fn)(ev_ctx *c);

pc_status ev_fail(ev_ctx *c, pc_status st, const char *fmt, ...) PC_PRINTF(3, 4);
/* Input i, or NULL when absent. */
const pc_tensor *ev_in(const ev_ctx *c, uint32_t i);
/* Input i must be present with a handled element type. */
pc_status ev_need(ev_ctx *c, uint32_t i, const ev_dtype **dt);
/* Creates output i (PC_ERR_BUDGET past max_elements). */
pc_tensor *ev_new_out(ev_ctx *c, uint32_t i, pc_dtype dtype, int32_t rank, const int64_t *dims);
/* Reads an int32/int64 tensor (at most cap values). */
pc_status ev_read_ints(ev_ctx *c, const pc_tensor *t, const char *what, int64_t *vals, size_t cap, size_t *n);
pc_status ev_axis(ev_ctx *c, int64_t axis, int32_t rank, const char *what, int32_t *out);

/* Broadcasting: the output shape of n tensors, then the input offset of an output multi-index. */
pc_status ev_broadcast_shape(ev_ctx *c, uint32_t n, const pc_tensor *const *ts, int32_t *rank, int64_t *dims);
uint64_t ev_bcast_offset(const pc_tensor *t, int32_t out_rank, const int64_t *idx);
/* Advances a row-major multi-index over dims. */
void ev_index_next(int32_t rank, const int64_t *dims, int64_t *idx);
/* Copies element src_i of src into element dst_i of dst (same dtype). */
void ev_copy_elem(pc_tensor *dst, uint64_t dst_i, const pc_tensor *src, uint64_t src_i);

/* eval_math.c */
pc_status ev_cast(ev_ctx *c);
pc_status ev_add(ev_ctx *c);
pc_status ev_sub(ev_ctx *c);
pc_status ev_mul(ev_ctx *c);
pc_status ev_div(ev_ctx *c);
pc_status ev_mod(ev_ctx *c);
pc_status ev_min(ev_ctx *c);
pc_status ev_max(ev_ctx *c);
pc_status ev_equal(ev_ctx *c);
pc_status ev_less(ev_ctx *c);
pc_status ev_greater(ev_ctx *c);
pc_status ev_and(ev_ctx *c);
pc_status ev_or(ev_ctx *c);
pc_status ev_not(ev_ctx *c);
pc_status ev_neg(ev_ctx *c);
pc_status ev_abs(ev_ctx *c);
pc_status ev_sqrt(ev_ctx *c);
pc_status ev_reciprocal(ev_ctx *c);
pc_status ev_where(ev_ctx *c);
pc_status ev_reduce(ev_ctx *c);
bool ev_reduce_supported(const pc_node *node, pc_dtype dtype);
bool ev_cast_supported(pc_dtype from, pc_dtype to);
/* eval_tensor.c */
pc_status ev_identity(ev_ctx *c);
pc_status ev_shape(ev_ctx *c);
pc_status ev_size(ev_ctx *c);
pc_status ev_gather(ev_ctx *c);
pc_status ev_concat(ev_ctx *c);
pc_status ev_reshape(ev_ctx *c);
pc_status ev_flatten(ev_ctx *c);
pc_status ev_squeeze(ev_ctx *c);
pc_status ev_unsqueeze(ev_ctx *c);
pc_status ev_transpose(ev_ctx *c);
pc_status ev_slice(ev_ctx *c);
pc_status ev_range(ev_ctx *c);
pc_status ev_constant_of_shape(ev_ctx *c);
pc_status ev_expand(ev_ctx *c);
pc_status ev_constant(ev_ctx *c);

#endif
