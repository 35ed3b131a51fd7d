/* Internal map of core/transpose: the transpose optimizer (docs/transpose.md).
 *
 * transpose_perm.c     perm arithmetic and the graph edits every handler shares: transposing an input
 * (constant permuted, cancel/compose with a producing Transpose, reuse of a sibling, or a new node),
 *                      transposing outputs, unsqueezing inputs, replacing constant int lists.
 * transpose_handlers.c the handler table keyed by (domain, op) and one function per op family.
 * transpose_plan.c     the layout model, its solver and the apply step (plan, solve, apply).
 * transpose_optimize.c the pass: the opset gate, plan, the clean-up sweeps (merge, cancel, fold, twins,
 * size-1 moves as Reshape), pc_transpose_optimize and pc_graph_transpose_cost.
 *
 * Perm convention (ONNX): out.shape[i] = in.shape[perm[i]]. Transpose(p2) after Transpose(p1) equals
 * Transpose(c) with c[i] = p1[p2[i]].
 */
#ifndef PC_TRANSPOSE_INTERNAL_H
#define PC_TRANSPOSE_INTERNAL_H

#include "core/internal.h"
#include "core/passes/pass.h"

enum { TP_MAX_ROUNDS = 8 };

typedef struct tp_ctx {
    pc_graph *graph;
    const pc_pass_options *opts;
    int64_t opset; /* ai.onnx */
    pc_error *err;
    bool changed;
    bool reshape_merged; /* the clean-up turned a Reshape into a Transpose the plan has not seen */
} tp_ctx;

/* ---- transpose_perm.c ---- */
bool tp_perm_valid(const int64_t *perm, size_t rank);
bool tp_perm_is_identity(const int64_t *perm, size_t rank);
void tp_perm_invert(const int64_t *perm, size_t rank, int64_t *out);
/* out[i] = first[second[i]]: Transpose(second) applied after Transpose(first). */
void tp_perm_compose(const int64_t *first, const int64_t *second, size_t rank, int64_t *out);
bool tp_perm_equal(const int64_t *a, const int64_t *b, size_t rank);
/* A Transpose node's perm when valid (rank from the perm, or the reversed default when absent and the input
 * rank is known); false for anything else (not a Transpose, malformed perm, perm rank != known input rank).
 */
bool tp_transpose_perm(const pc_node *node, int64_t *perm, size_t *rank);
/* perm after removing `axes` (flags over the input rank): the perm of the rank-reduced output. */
size_t tp_perm_squeeze(const int64_t *perm, size_t rank, const bool *removed_out, int64_t *out);
/* perm of rank rank+n_axes after inserting size-1 axes at `axes` (flags over the output rank). */
void tp_perm_unsqueeze(const int64_t *perm, size_t rank, const bool *inserted, size_t out_rank, int64_t *out);
/* Transpose(perm) of `in` moves only axes of known size 1 between positions of known size 1: the output has
 * the input's shape and bytes (a no-op). False when in's dims are not all known. */
bool tp_perm_moves_unit_axes_only(const pc_value *in, const int64_t *perm, size_t rank);
/* Channel first->last [0,2,..,r-1,1] or last->first [0,r-1,1,..,r-2] (rank >= 3). */
bool tp_perm_is_channel_move(const int64_t *perm, size_t rank);

/* Estimated rank of a value: dims that are not a known 1; 5 when the rank is unknown. */
int tp_value_cost_rank(const pc_value *v);
/* A tensor type whose shape is v's shape permuted by perm (out[i] = in[perm[i]]); v's type kept when its rank
 * does not match. */
pc_status tp_set_permuted_type(pc_value *dst, const pc_value *src, const int64_t *perm, size_t rank,
                               pc_error *err);

/* Makes node input i read Transpose(perm) of what it reads now: a constant is permuted (in place when the
 * node is its only consumer, else into a new initializer), a producing Transpose is cancelled or composed, a
 * sibling Transpose with the same perm is reused, otherwise a new Transpose is added. */
pc_status tp_transpose_input(tp_ctx *ctx, pc_node *node, uint32_t i, const int64_t *perm, size_t rank);
/* Puts Transpose(perm) after every output of node (the output values keep their names and consumers and move
 * to the new Transposes; the node gets fresh values typed with the inverse-permuted shape). No identity
 * perms. */
pc_status tp_transpose_outputs(tp_ctx *ctx, pc_node *node, const int64_t *perm, size_t rank);
/* Same for one output with its own perm (rank-changing handlers). */
pc_status tp_transpose_output(tp_ctx *ctx, pc_node *node, uint32_t out, const int64_t *perm, size_t rank);
/* Gives node input i `n_lead` leading 1-dims: a constant is reshaped (in place or a new initializer),
 * otherwise an Unsqueeze is added. */
pc_status tp_unsqueeze_input(tp_ctx *ctx, pc_node *node, uint32_t i, size_t n_lead);
/* Replaces node input i by a new int tensor (dtype int32 or int64, 1-D) holding values; in place when the
 * node is the only consumer of a local constant. */
pc_status tp_replace_input_ints(tp_ctx *ctx, pc_node *node, uint32_t i, pc_dtype dtype, size_t n,
                                const int64_t *values);
/* Can a node of op_type (first input of element type first_input) the handler adds next to source run where
 * it lands? In a per-EP run it takes source's EP, which must claim it (an int32 Gather on an EP that runs
 * only int64 ones would be left to nobody); elsewhere partitioning decides later. */
bool tp_can_add(tp_ctx *ctx, const pc_node *source, const char *op_type, pc_dtype first_input);
/* Does tp_unsqueeze_input add an Unsqueeze node for input i (not a constant, nor DQ of one)? */
bool tp_unsqueeze_adds_node(tp_ctx *ctx, const pc_node *node, uint32_t i);
/* A computed (non-constant) 1-D input reordered or remapped by a Gather, as ORT does for Pad's pads, Tile's
 * repeats, Resize's scales: tp_gather_input makes input i Gather(input, order) (int64 order); tp_map_input
 * makes it Gather(table, input) (Slice's axes through perm; table in the input's dtype). */
pc_status tp_gather_input(tp_ctx *ctx, pc_node *node, uint32_t i, size_t n, const int64_t *order);
pc_status tp_map_input(tp_ctx *ctx, pc_node *node, uint32_t i, pc_dtype dtype, size_t n,
                       const int64_t *table);
/* Removes a node when none of its outputs is used (and what became unused behind it). */
pc_status tp_fold_const_transpose(tp_ctx *ctx, pc_node *t, const int64_t *perm, size_t rank, bool *done);
pc_status tp_remove_if_dead(tp_ctx *ctx, pc_node *node);
/* Node reads the value to pass through on input 0: its output 0 is bypassed onto it, or (when both are graph
 * outputs, or the value's producer is not this run's to change) an Identity keeps the output's name. When
 * the run's EP runs no Identity (tp_can_add), node stays and *kept is set: the caller leaves it a copy of its
 * own op (an identity Transpose, a Reshape to its input's shape). */
pc_status tp_replace_by_input(tp_ctx *ctx, pc_node *node, bool *kept);
/* Reads a constant int input (int32/int64, at most PC_MAX_RANK values). */
bool tp_const_ints(const pc_node *node, uint32_t i, int64_t *out, size_t *n, pc_dtype *dtype);
/* Normalizes axis into [0, rank); false when out of range. */
bool tp_axis_normalize(int64_t axis, size_t rank, int64_t *out);
/* Per-axis DQ/Q: *per_axis when the scale is 1-D; false when it cannot be told or is blocked. */
bool tp_qdq_kind(tp_ctx *ctx, const pc_node *node, bool *per_axis);

/* ---- transpose_plan.c ---- */
/* Plans every node's layout over the whole graph (exactly per region within a step budget), then runs each
 * handler for its node's layout; the Transposes left for the clean-up to merge, cancel and fold. */
pc_status tp_plan_run(tp_ctx *ctx, bool *changed);

/* ---- transpose_handlers.c ---- */
typedef enum tp_inputs {
    TP_IN_FIRST = 0, /* input 0 */
    TP_IN_ALL,       /* every present input */
    TP_IN_NONSCALAR, /* every present input whose rank is not 0 (broadcast ops) */
} tp_inputs;

/* What a handler asked to plan (tp_push.plan) reports instead of editing: the perm its outputs get. */
typedef struct tp_plan_report {
    bool has_out; /* false: the outputs get no Transpose (a reduce-all, Shape's Gather) */
    size_t out_rank;
    int64_t out_perm[PC_MAX_RANK]; /* every output's (a Split's outputs all get the pushed perm) */
} tp_plan_report;

typedef struct tp_push {
    tp_ctx *ctx;
    pc_node *node;
    const int64_t *perm; /* the Transpose being pushed */
    const int64_t *perm_inv;
    size_t rank;
    uint32_t n_carry;
    const uint32_t *carry; /* inputs that carry the Transpose */
    /* non-NULL: check only. The handler runs every check it runs before its first edit, edits nothing,
     * and on acceptance sets *done and fills the report (transpose_plan.c asks this of every candidate) */
    tp_plan_report *plan;
} tp_push;

/* Returns PC_OK with *done false when the push is refused (nothing edited); errors only for real failures.
 * A handler checks everything before its first edit, so a refusal never leaves a partial rewrite. */
typedef pc_status (*tp_handler_fn)(tp_push *push, bool *done);

typedef struct tp_handler {
    const char *domain;
    const char *op;
    tp_handler_fn fn;
    tp_inputs inputs;
    int64_t min_opset;
    /* rank-reducing ops: the axes (flags over the input rank) the output drops; false when none or unknown */
    bool (*dropped_axes)(tp_push *push, bool *removed);
} tp_handler;

const tp_handler *tp_handler_find(const pc_node *node, int64_t opset);
/* The rewrite kind a push through h's op reports (PC_RW_COUNT: Transpose, which reports cancel or merge). */
pc_rewrite_kind tp_handler_kind(const tp_handler *h);
/* The carrying inputs of node under handler h (indices into out, at most n_out). */
uint32_t tp_handler_inputs(const tp_handler *h, const pc_node *node, uint32_t *out, uint32_t n_out);
/* Whether v, input i of a node under handler h, is present and carries the pushed Transpose. */
bool tp_input_carries(const tp_handler *h, const pc_value *v, uint32_t i);
/* The default push for handlers that only transpose carrying inputs and outputs (elementwise families). */
pc_status tp_push_plain(tp_push *push);
/* The clean-up's Reshape merge: push->perm is the Transpose making the Reshape's input; a Reshape that only
 * moves size-1 dims becomes one Transpose with it, or none (*done false when it moves data). */
pc_status tp_reshape_merge(tp_push *push, bool *done);

#endif
