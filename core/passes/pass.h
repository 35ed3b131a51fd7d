/* Internal map of core/passes: the helpers every pass shares (pass_util.c), and one banner per pass file with
 * its preconditions. Every pass has the signature pc_pass_fn (passcheck.h) and is listed in the table in
 * pipeline.c.
 *
 * Rules every pass keeps:
 *  - only nodes pc_pass_can_modify() accepts are changed, and one rewrite changes or removes the nodes of one
 * EP only (pc_pass_bypass_node_for, pc_pass_may_remove);
 *  - after partitioning a new node must be claimed by the EP the pass runs for (pc_pass_ep_accepts);
 *  - every new node is made with pc_pass_add_node(), which copies `layer_ann` (levels 0/1) and the EP (level
 * 2+) from its source node, so the annotation and EP properties hold by construction;
 *  - a fusion merges nodes only when pc_nodes_fusable() (same annotation, same EP);
 *  - graph output names never change (pc_pass_bypass_node keeps them);
 *  - each change is reported with pc_pass_explain() for --explain.
 */
#ifndef PC_PASS_H
#define PC_PASS_H

#include "core/internal.h"

/* ---- pass_util.c ---- */
bool pc_pass_can_modify(const pc_pass_options *opts, const pc_node *node);
/* pc_graph_add_node with annotation_source = source, then the EP of source; the node is named after source
 * ("<source name>/<op_type>", made unique). Inserted last: callers pc_graph_sort() once per pass. */
pc_node *pc_pass_add_node(pc_graph *graph, const pc_pass_options *opts, const char *op_type,
                          const char *domain, uint32_t n_inputs, pc_value *const *inputs, uint32_t n_outputs,
                          const pc_node *source, pc_error *err);
/* The ops passes may create (pc_pass_add_node refuses others), sorted by (domain, op). */
bool pc_pass_may_emit(const char *domain, const char *op_type);
size_t pc_pass_emittable_count(void);
void pc_pass_emittable_at(size_t index, const char **domain, const char **op_type);
/* pc_layout_transform, leaving alone the nodes flagged in keep_form (by node id; ids >= n_keep_form are not
 * flagged): partitioning flags the nodes whose assignment it kept from an earlier run, whose form that run
 * chose (layout_nhwc.c). */
pc_status pc_layout_transform_keeping(pc_graph *graph, const pc_ep *ep, const pc_pass_options *opts,
                                      const uint8_t *keep_form, uint32_t n_keep_form, bool *changed,
                                      pc_error *err);
void pc_pass_explain(const pc_pass_options *opts, const char *fmt, ...) PC_PRINTF(2, 3);
/* Rewrite coverage (PC_REWRITE_KINDS, passcheck.h): a pass notes each rewrite it commits, and each near miss
 * (its matcher had the whole pattern but one condition refused; never a node that merely is not the op).
 * Nothing happens when opts or opts->rewrites is NULL. Counting only observes: it never changes a decision.
 */
static inline void pc_pass_note(const pc_pass_options *opts, pc_rewrite_kind kind)
{
    if (opts && opts->rewrites && (unsigned)kind < PC_RW_COUNT) opts->rewrites->fired[kind]++;
}
static inline void pc_pass_near_miss(const pc_pass_options *opts, pc_rewrite_kind kind, pc_miss_reason why)
{
    if (opts && opts->rewrites && (unsigned)kind < PC_RW_COUNT && (unsigned)why < PC_MISS_COUNT) {
        opts->rewrites->near[kind]++;
        opts->rewrites->near_reason[kind][why]++;
    }
}
/* Both nodes carry the same annotation (or none) and the same EP (or none). */
bool pc_nodes_fusable(const pc_node *a, const pc_node *b);
/* Consumers, graph-output role or subgraph references. */
bool pc_value_is_used(const pc_value *v);
/* The single consumer when v has exactly one use and is neither a graph output nor referenced by a subgraph.
 */
pc_node *pc_value_single_consumer(const pc_value *v);
/* A new initializer value (fresh name from hint) holding t; its type is set from t. */
pc_value *pc_pass_add_initializer(pc_graph *graph, const char *hint, pc_tensor *t, pc_error *err);
/* A tentative node of another domain (FusedConv, QLinearConvRelu) needs the domain imported before the EP's
 * claim check; when the EP refuses it, the import must go again so an unchanged graph saves to the same bytes
 * (the validity property holds passes to their changed flag). import sets *added when this call imported the
 * domain; unimport removes the import when *added says so. */
pc_status pc_pass_import_domain(pc_model *model, const char *domain, bool *added, pc_error *err);
void pc_pass_unimport_domain(pc_model *model, const char *domain, bool added);
/* Removes `node`, whose output out_index equals its input in_index: consumers of the output read the input
 * instead. When the output is a graph output, the input's producer takes over the output value (name kept) if
 * it can; otherwise nothing is done and *done is false. Other outputs of the node must be unused. */
pc_status pc_pass_bypass_node(pc_graph *graph, pc_node *node, uint32_t in_index, uint32_t out_index,
                              bool *done, pc_error *err);
/* Removes node if none of its outputs is used, then producers of its inputs that became unused (recursively),
 * then initializers that became unused. */
pc_status pc_pass_remove_dead(pc_graph *graph, pc_node *node, pc_error *err);
/* One rewrite touches the nodes of one EP only: a per-EP run may not change another EP's node, and a rewrite
 * the per-EP runs cannot make must not happen when an optimized (assigned) graph is optimized again either,
 * or the pipeline has no fixed point. pc_pass_may_remove says whether this run may remove `root` together
 * with every producer that would die with it (pc_pass_remove_dead's closure): each must be modifiable for
 * opts and on root's EP. `keep` is a value the rewrite keeps reading (its producer stays). *ok false: refuse
 * the rewrite. */
pc_status pc_pass_may_remove(const pc_pass_options *opts, const pc_node *root, const pc_value *keep, bool *ok,
                             pc_error *err);
/* pc_pass_bypass_node for a pass run: refused (*done false, nothing changed) when pc_pass_may_remove refuses,
 * or when the graph-output takeover would rewrite a producer this run may not modify or one on another EP. */
pc_status pc_pass_bypass_node_for(pc_graph *graph, const pc_pass_options *opts, pc_node *node,
                                  uint32_t in_index, uint32_t out_index, bool *done, pc_error *err);
/* Whether the EP this run is for (opts->ep) runs `node`, a node the pass just made: a fusion must not leave a
 * node its EP refuses (partitioning would have put it elsewhere). True without an EP (before partitioning)
 * and for a node on no EP. */
bool pc_pass_ep_accepts(const pc_pass_options *opts, const pc_node *node);
/* Removes every initializer with no use (and not a graph input/output). */
pc_status pc_graph_prune_initializers(pc_graph *graph, bool *changed, pc_error *err);
/* A new int64 1-D initializer holding values. */
pc_value *pc_pass_add_ints(pc_graph *graph, const char *hint, size_t n, const int64_t *values, pc_error *err);

/* ---- pipeline.c ---- */
/* Runs one pass over graph and its subgraphs (recursively), with verification when opts ask for it. */

/* ---- level 0 (basic) ---- */
pc_status pc_pass_eliminate_identity(pc_graph *, const pc_pass_options *, bool *, pc_error *);
pc_status pc_pass_eliminate_dropout(pc_graph *, const pc_pass_options *, bool *, pc_error *);
pc_status pc_pass_eliminate_cast(pc_graph *, const pc_pass_options *, bool *, pc_error *);
pc_status pc_pass_eliminate_slice(pc_graph *, const pc_pass_options *, bool *, pc_error *);
pc_status pc_pass_eliminate_unsqueeze(pc_graph *, const pc_pass_options *, bool *, pc_error *);
pc_status pc_pass_prune_simple(pc_graph *, const pc_pass_options *, bool *, pc_error *);
pc_status pc_pass_fold_constants(pc_graph *, const pc_pass_options *, bool *, pc_error *);
pc_status pc_pass_fuse_conv_bn(pc_graph *, const pc_pass_options *, bool *, pc_error *);
pc_status pc_pass_fuse_conv_add(pc_graph *, const pc_pass_options *, bool *, pc_error *);
pc_status pc_pass_fuse_conv_mul(pc_graph *, const pc_pass_options *, bool *, pc_error *);
pc_status pc_pass_fuse_relu_clip(pc_graph *, const pc_pass_options *, bool *, pc_error *);
pc_status pc_pass_fuse_reshape(pc_graph *, const pc_pass_options *, bool *, pc_error *);
pc_status pc_pass_remove_dq_q(pc_graph *, const pc_pass_options *, bool *, pc_error *);
/* ---- level 1 (extended) ---- */
pc_status pc_pass_fuse_gelu(pc_graph *, const pc_pass_options *, bool *, pc_error *);
/* pc_transpose_optimize (passcheck.h) also runs here with provider NULL */
/* ---- level 2 (after partitioning) ---- */
pc_status pc_pass_fuse_conv_activation(pc_graph *, const pc_pass_options *, bool *, pc_error *);
pc_status pc_pass_fuse_qdq_qlinear(pc_graph *, const pc_pass_options *, bool *, pc_error *);
/* ---- level 3: hook for EP-specific rewrites (QDQ -> QLinear, Systolic, blocked layout) ---- */
pc_status pc_pass_ep_rewrites(pc_graph *, const pc_pass_options *, bool *, pc_error *);
/* the level-3 rewrites ep_rewrites dispatches to, by EP */
pc_status pc_pass_systolic_nhwc(pc_graph *, const pc_pass_options *, bool *, pc_error *);
pc_status pc_pass_blocked_compile(pc_graph *, const pc_pass_options *, bool *, pc_error *);

#endif
