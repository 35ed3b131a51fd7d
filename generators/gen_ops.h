/*
 * gen_ops.h — the op-spec table the generator families share: for each ONNX op a family may add, the ranks
 * and opsets it accepts, the rules its input must satisfy (including the value interval: Log and Sqrt only on
 * values known positive, Div and Reciprocal only away from 0, Exp only on bounded arguments), an attribute
 * drawer with legal ranges and the interval of its output. Every op here is in core's shape table and runs on
 * the reference executor; every application goes through pc_gen_node_begin/pc_gen_node_end, so shape
 * inference checks it.
 *
 * Worked example: a quantized family puts a float activation on a dequantized value, if the rules allow it.
 *
 *     pc_value *y = NULL;
 *     if (pc_gen_ops_try(g, "Relu", x, &y, err) != PC_OK) return err->status;   // a generator bug or OOM
 *     if (!y) ...                                  // x is not a float tensor Relu may take: nothing was
 * added
 *
 * Families draw ops from the table themselves (pc_gen_op_grow picks a pooled value the op accepts, or makes a
 * new graph input shaped for it when none does).
 *
 * Only float (PC_DTYPE_FLOAT) inputs, every dim >= 1, rank <= cfg->max_rank and the output at most
 * cfg->max_elements elements. Intervals are sound: every element of the output lies in [lo, hi] when every
 * input element lies in its interval, and no op is added whose output interval reaches past
 * +-PC_GEN_OPS_MAX_MAGNITUDE.
 */
#ifndef PC_GEN_OPS_H
#define PC_GEN_OPS_H

#include "generators/gen.h"

#ifdef __cplusplus
extern "C" {
#endif

/* No op is added whose output could leave [-this, this] (keeps float32 far from Inf through any chain). */
#define PC_GEN_OPS_MAX_MAGNITUDE 1e6

/* Op flags. */
enum {
    PC_GEN_OP_FLOAT = 1u << 0,   /* drawn by the float family */
    PC_GEN_OP_NHWC = 1u << 1,    /* drawn by the nhwc family's layout-agnostic chains */
    PC_GEN_OP_LAYOUT = 1u << 2,  /* layout sensitive: input 0 is channels-first (N, C, spatial...) */
    PC_GEN_OP_PATTERN = 1u << 3, /* a subgraph of several ops (op_type names the pattern, not an ONNX op) */
};

/* What an op sees of its input 0: a pooled float value with a static shape. */
typedef struct pc_gen_x {
    pc_value *value;
    int32_t rank;
    int64_t dims[PC_MAX_RANK];
    uint64_t n_elements;
    double lo, hi;
    bool is_const;
} pc_gen_x;

typedef struct pc_gen_op pc_gen_op;
/* Rules on x beyond dtype, rank, opset and node budget. Reads only x's shape and interval (not x->value), so
 * a family can ask about a value it has not made yet (e.g. the transposed input of a wrapped op). */
typedef bool (*pc_gen_op_accept_fn)(const pc_gen *g, const pc_gen_op *op, const pc_gen_x *x);
/* Adds the op (and any constants or helper nodes it needs) reading x; *out is its output 0. */
typedef pc_status (*pc_gen_op_build_fn)(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out,
                                        pc_error *err);
/* Adjusts freshly drawn dims (deterministically) so a new input satisfies the op's shape rules. */
typedef void (*pc_gen_op_fix_fn)(int32_t rank, int64_t *dims);

struct pc_gen_op {
    const char *op_type;
    uint32_t flags;
    int kind; /* selects the behaviour inside functions rows share (unary, binary, reduce) */
    int32_t min_rank, max_rank; /* of input 0 */
    int64_t min_opset, max_opset;
    uint32_t min_nodes;         /* nodes the simplest application adds (helpers and constants' producers) */
    double in_lo, in_hi;        /* interval of a new graph input made for the op */
    pc_gen_op_accept_fn accept; /* NULL: no further rules */
    pc_gen_op_fix_fn fix;       /* NULL: any drawn shape of an accepted rank will do */
    pc_gen_op_build_fn build;
};

size_t pc_gen_op_count(void);
const pc_gen_op *pc_gen_op_at(size_t i);
const pc_gen_op *pc_gen_op_find(const char *op_type); /* NULL when not in the table */

/* The model's ai.onnx opset. */
int64_t pc_gen_opset(const pc_gen *g);
/* Describes a pooled value for the ops; false when it is not a float tensor with a static shape and dims
 * >= 1. */
bool pc_gen_x_get(pc_gen *g, const pc_value *v, pc_gen_x *x);
/* Ops still allowed by cfg->max_nodes. */
uint32_t pc_gen_budget(const pc_gen *g);

/* Whether op may be applied to x now: dtype, rank, opset, node budget and the op's own rules. */
bool pc_gen_op_accepts(const pc_gen *g, const pc_gen_op *op, const pc_gen_x *x);
/* Whether op can be applied at all now (opset, budget, cfg->max_rank): the families draw only among these. */
bool pc_gen_op_feasible(const pc_gen *g, const pc_gen_op *op);
/* Applies op to x; x must be accepted (PC_ERR_INTERNAL naming the op otherwise). */
pc_status pc_gen_op_apply(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out, pc_error *err);
/* By name, on any value: *out NULL (and nothing added) when the op is unknown or the rules do not hold. */
pc_status pc_gen_ops_try(pc_gen *g, const char *op_type, pc_value *x, pc_value **out, pc_error *err);
/* A new float graph input the op accepts (backward growth). rank_pref >= 0 asks for that rank when allowed.
 */
pc_status pc_gen_op_new_input(pc_gen *g, const pc_gen_op *op, int32_t rank_pref, pc_gen_x *x, pc_error *err);
/* The shape part of pc_gen_op_new_input: x gets a rank, dims and interval [op->in_lo, op->in_hi] the op
 * accepts, and no value (the caller makes one: a graph input, a constant). */
pc_status pc_gen_op_draw_x(pc_gen *g, const pc_gen_op *op, int32_t rank_pref, pc_gen_x *x, pc_error *err);
/* Picks a pooled value satisfying accept: with probability chain_percent (and on the value 0) the newest one,
 * so chains grow long; otherwise pc_gen_pick's draw over every candidate (branches, fan-out). */
pc_gen_value *pc_gen_pick_chain(pc_gen *g, pc_gen_accept_fn accept, void *ctx, uint32_t chain_percent);
/* Grows the graph by one application of op: a pooled value it accepts (pc_gen_pick_chain), or with
 * probability fresh_percent (and whenever none qualifies) a new graph input of rank rank_pref when allowed
 * (-1: drawn). */
pc_status pc_gen_op_grow(pc_gen *g, const pc_gen_op *op, uint32_t fresh_percent, uint32_t chain_percent,
                         int32_t rank_pref, pc_value **out, pc_error *err);

/* Helpers the families share. */
/* Transpose with an explicit perm. */
pc_status pc_gen_transpose(pc_gen *g, const pc_gen_x *x, const int64_t *perm, pc_value **out, pc_error *err);
/* The exact-erf GELU subgraph fuse_gelu matches: Div(x, sqrt2) | Mul(x, 1/sqrt2) -> Erf -> Add(1) -> Mul(x)
 * -> Mul(0.5) (5 nodes, operand orders drawn). */
/* squared: the near miss whose x * (1 + erf) Mul reads the Add twice, (1 + erf)^2 * 0.5 — not a GELU */
pc_status pc_gen_gelu_pattern(pc_gen *g, const pc_gen_x *x, bool squared, pc_value **out, pc_error *err);
/* Add or Mul of x (rank >= 2, channels at dim 1) and a per-channel constant ([C,1,..], [1,C,1,..], [1] or a
 * scalar: the forms fuse_conv_add/fuse_conv_mul fold into a Conv). *out NULL when the interval rules refuse.
 */
pc_status pc_gen_channel_op(pc_gen *g, const char *op_type, const pc_gen_x *x, pc_value **out, pc_error *err);
/* Dims for a new tensor of the given rank: each >= 1, at most cfg->max_elements in all; draw 0 gives 1. When
 * batch_first, dim 0 (the batch) stays at most 2. */
void pc_gen_draw_dims(pc_gen *g, int32_t rank, bool batch_first, int64_t *dims);

#ifdef __cplusplus
}
#endif

#endif
