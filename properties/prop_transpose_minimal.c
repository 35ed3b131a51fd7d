/* transpose-minimal: the transpose optimizer leaves no Transpose it could have removed.
 *
 * Structural, after every transpose-optimizer pass (transpose_optimize, transpose_optimize_ep, partition,
 * whose layout transformer runs the optimizer) and at the end:
 *  - no identity perm, no Transpose reading a Transpose, no pair that cancels across single-consumer
 * elementwise ops (pc_tpo_leftover_find). Checked after the level-1 run of an unannotated graph, after a
 * level-2 run when one EP owns the graph (with several EPs a per-EP run leaves the others' nodes to their own
 * run; so does a level-1 run of one annotation group) and at the end, where patterns that span EPs (or,
 * before partitioning, annotation groups) are exempt (no single run may edit them);
 *  - the blocked EP's reorders, after ep_rewrites and at the end (blocked_reorders below);
 *  - Transpose cost (pc_graph_transpose_cost, the optimizer's own metric) never above the input's, unless the
 *    pass (or the pipeline, at the end) moved layout-sensitive ops to NHWC, which adds Transposes by design.
 * The count may rise where the cost falls (see check_no_increase); the exact oracle judges the count. Exact,
 * at the end, when the original graph has at most exact_oracle_max_nodes nodes besides Transposes: the
 * oracle of transpose_oracle.h searches every per-value layout assignment and the optimizer must need no more
 * Transposes than its optimum. The oracle judges the optimized graph itself, with its Transposes as free
 * relabelings: the transpose optimizer's whole job is where Transposes go, and its own rewrites (constants
 * permuted, axes remapped, Unsqueeze before a broadcast) are relabelings the oracle can undo, so the optimum
 * of the optimized graph is the optimum of the graph the optimizer was given. Judging the optimized graph
 * rather than the original also gives each layout-sensitive op its EP's layout for free (NHWC-domain ops are
 * pinned in NHWC, the others in NCHW) and leaves out what other passes did (fusions, folding), which is not
 * the optimizer's to answer for. Nodes on different EPs are judged with the oracle's EP boundaries (what the
 * per-EP runs may still move between them). A gap is a FAIL that lists the optimum's layouts and Transposes.
 */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "properties/property.h"
#include "properties/oracles/transpose_oracle.h"

static bool opset_supported(const pc_model *m)
{
    int64_t o = pc_model_opset(m, "");
    return o >= PC_TRANSPOSE_OPSET_MIN && o <= PC_TRANSPOSE_OPSET_MAX;
}

static bool is_transpose_pass(const char *pass)
{
    return strcmp(pass, "transpose_optimize") == 0 || strcmp(pass, "transpose_optimize_ep") == 0 ||
           strcmp(pass, "partition") == 0;
}

/* Transpose cost of a graph with its shapes inferred afresh. The runner's copies come from serialized bytes,
 * where intermediate shapes may be missing (a Transpose of unknown rank costs 5), so the same graph could
 * cost more as a copy than live; both sides are measured the same way. Falls back to the model as it is. */
static uint64_t cost_inferred(const pc_model *m, const uint8_t *bytes, size_t size)
{
    uint64_t cost = pc_graph_transpose_cost(m->graph);
    if (!bytes) return cost;
    pc_load_options lo;
    pc_load_options_default(&lo);
    lo.skip_verify = true;
    pc_model *copy = NULL;
    pc_error err;
    if (pc_model_load_bytes(bytes, size, &lo, &copy, &err) == PC_OK &&
        pc_graph_infer_shapes(copy->graph, &err) == PC_OK)
        cost = pc_graph_transpose_cost(copy->graph);
    pc_model_free(copy);
    return cost;
}

/* Transpose cost of `after` against `before`, unless a layout transformer moved ops to channels-last between
 * them (the NHWC layout transformer, the systolic EP's rewrite). The
 * count is reported but not required to stay down: the cost model trades a Transpose of many non-1 dims for
 * smaller ones (a pushed ReduceMean gets a Transpose of [1,1,1,C]); whether the count is the least possible
 * is the exact oracle's question. */
static pc_prop_outcome check_no_increase(const pc_check_ctx *ctx, const pc_model *before, const uint8_t *bb,
                                         size_t bs, const char *what, char *msg, size_t msg_size,
                                         const char **kind)
{
    const pc_graph *b = before->graph, *a = ctx->after->graph;
    if (pc_tpo_count_layout_moved(a) > pc_tpo_count_layout_moved(b)) return PC_PROP_PASS;
    uint64_t c0 = pc_graph_transpose_cost(b), c1 = pc_graph_transpose_cost(a);
    if (c1 > c0) { /* confirm on freshly inferred shapes before judging */
        c0 = cost_inferred(before, bb, bs);
        c1 = cost_inferred(ctx->after, ctx->after_bytes, ctx->after_size);
    }
    if (c1 <= c0) return PC_PROP_PASS;
    *kind = "increase";
    snprintf(msg, msg_size,
             "Transpose cost went up %s: %llu -> %llu (count %u -> %u; no op moved to channels-last)", what,
             (unsigned long long)c0, (unsigned long long)c1, pc_tpo_count_transposes(b),
             pc_tpo_count_transposes(a));
    return PC_PROP_FAIL;
}

static pc_prop_outcome leftover(const pc_check_ctx *ctx, const pc_graph *g, char *msg, size_t msg_size,
                                const char **kind)
{
    char why[768];
    pc_tpo_options topts = {.eps = ctx->eps, .n_eps = ctx->n_eps};
    if (!pc_tpo_leftover_find(g, &topts, why, sizeof why)) return PC_PROP_PASS;
    *kind = "leftover";
    snprintf(msg, msg_size, "the transpose optimizer left a removable Transpose: %s", why);
    return PC_PROP_FAIL;
}

static bool annotated(const pc_graph *g)
{
    for (const pc_node *n = g->first; n; n = n->next)
        if (pc_node_annotation(n)) return true;
    return false;
}

/* ---- the blocked EP's reorders (docs/ep.md): in each compiled Subgraph body, no value reordered twice the
 * same way, no reorder undoing another, no reorder nobody needs; and a body with no plain compute node has
 * exactly one reorder per activation edge crossing its boundary (its node's inputs and outputs). */

static bool blocked_op(const pc_node *n, const char *op)
{
    return strcmp(n->domain, "com.passcheck.blocked") == 0 && strcmp(n->op_type, op) == 0;
}

static bool is_reorder(const pc_node *n)
{
    return blocked_op(n, "ToBlocked") || blocked_op(n, "FromBlocked");
}

/* A node that computes on nChw<b>c tensors: an op of the domain other than the reorders. */
static bool runs_blocked(const pc_node *n)
{
    return strcmp(n->domain, "com.passcheck.blocked") == 0 && !is_reorder(n);
}

static pc_prop_outcome body_reorders(const pc_node *sub, const pc_graph *b, char *msg, size_t msg_size,
                                     const char **kind)
{
    uint32_t reorders = 0;
    bool plain_compute = false;
    for (const pc_node *n = b->first; n; n = n->next) {
        if (!is_reorder(n)) {
            plain_compute = plain_compute || !runs_blocked(n);
            continue;
        }
        reorders++;
        bool to = blocked_op(n, "ToBlocked");
        const pc_value *in = n->n_inputs ? n->inputs[0] : NULL, *out = n->n_outputs ? n->outputs[0] : NULL;
        if (!in || !out) continue;
        for (const pc_node *m = n->next; m; m = m->next)
            if (strcmp(m->op_type, n->op_type) == 0 && m->n_inputs && m->inputs[0] == in) {
                *kind = "duplicate";
                snprintf(msg, msg_size, "subgraph %lld: '%s' and '%s' both reorder '%s' %s",
                         (long long)pc_node_attr_int(sub, "subgraph_id", -1), n->name, m->name, in->name,
                         to ? "to blocked" : "back to plain");
                return PC_PROP_FAIL;
            }
        if (in->producer && is_reorder(in->producer) && strcmp(in->producer->op_type, n->op_type) != 0) {
            *kind = "round-trip";
            snprintf(msg, msg_size, "subgraph %lld: '%s' undoes '%s'",
                     (long long)pc_node_attr_int(sub, "subgraph_id", -1), n->name, in->producer->name);
            return PC_PROP_FAIL;
        }
        bool needed = !to && out->is_graph_output;
        for (uint32_t k = 0; k < out->n_consumers && !needed; k++)
            needed = to == runs_blocked(out->consumers[k].node) && !is_reorder(out->consumers[k].node);
        if (!needed) {
            *kind = "unneeded";
            snprintf(msg, msg_size, "subgraph %lld: nothing needs the %s form '%s' made",
                     (long long)pc_node_attr_int(sub, "subgraph_id", -1), to ? "blocked" : "plain", n->name);
            return PC_PROP_FAIL;
        }
    }
    if (!plain_compute && reorders != sub->n_inputs + sub->n_outputs) {
        *kind = "boundary";
        snprintf(msg, msg_size,
                 "subgraph %lld: %u reorders for %u activation edges crossing its boundary (%u in, %u out), "
                 "and every op inside runs blocked",
                 (long long)pc_node_attr_int(sub, "subgraph_id", -1), reorders,
                 sub->n_inputs + sub->n_outputs, sub->n_inputs, sub->n_outputs);
        return PC_PROP_FAIL;
    }
    return PC_PROP_PASS;
}

static pc_prop_outcome blocked_reorders(const pc_graph *g, char *msg, size_t msg_size, const char **kind)
{
    for (const pc_node *n = g->first; n; n = n->next) {
        if (!blocked_op(n, "Subgraph")) continue;
        const pc_attr *a = pc_node_attr(n, "body");
        if (!a || a->type != PC_ATTR_GRAPH || !a->g) continue; /* validity's to report */
        pc_prop_outcome o = body_reorders(n, a->g, msg, msg_size, kind);
        if (o != PC_PROP_PASS) return o;
    }
    return PC_PROP_PASS;
}

static pc_prop_outcome per_pass(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    if (strcmp(ctx->pass, "ep_rewrites") == 0) {
        pc_prop_outcome o = blocked_reorders(ctx->after->graph, msg, msg_size, kind);
        if (o != PC_PROP_PASS) return o;
    }
    if (!is_transpose_pass(ctx->pass) || !opset_supported(ctx->after)) return PC_PROP_PASS;
    /* an annotated graph is optimized one annotation group per run (pc_pass_options.scoped), like one EP per
     * run after partitioning: a run leaves the groups after it to their own runs */
    bool one_run_saw_all = (strcmp(ctx->pass, "transpose_optimize") == 0 && !annotated(ctx->after->graph)) ||
                           (strcmp(ctx->pass, "transpose_optimize_ep") == 0 && ctx->n_eps <= 1);
    if (one_run_saw_all) {
        pc_prop_outcome o = leftover(ctx, ctx->after->graph, msg, msg_size, kind);
        if (o != PC_PROP_PASS) return o;
    }
    char what[96];
    snprintf(what, sizeof what, "in pass %s", ctx->pass);
    return check_no_increase(ctx, ctx->before, ctx->before_bytes, ctx->before_size, what, msg, msg_size,
                             kind);
}

static uint32_t count_non_transposes(const pc_graph *g)
{
    return g->n_nodes - pc_tpo_count_transposes(g);
}

static pc_prop_outcome final(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    if (ctx->config && ctx->config->level < PC_LEVEL_EXTENDED) return PC_PROP_PASS; /* no optimizer ran */
    if (!opset_supported(ctx->after)) {
        snprintf(
            msg, msg_size,
            "not judged: the transpose optimizer handles opsets %d to %d, the model imports ai.onnx %lld",
            PC_TRANSPOSE_OPSET_MIN, PC_TRANSPOSE_OPSET_MAX, (long long)pc_model_opset(ctx->after, ""));
        return PC_PROP_SKIP;
    }
    const pc_graph *g = ctx->after->graph;
    pc_prop_outcome o = blocked_reorders(g, msg, msg_size, kind);
    if (o != PC_PROP_PASS) return o;
    o = leftover(ctx, g, msg, msg_size, kind);
    if (o != PC_PROP_PASS) return o;
    o = check_no_increase(ctx, ctx->original, NULL, 0, "end to end", msg, msg_size, kind);
    if (o != PC_PROP_PASS) return o;

    uint32_t max_nodes =
        ctx->config && ctx->config->exact_oracle_max_nodes ? ctx->config->exact_oracle_max_nodes : 12;
    /* the gate is the graph the pipeline was given: the optimizer may turn a Transpose that moves only size-1
     * axes into a Reshape or an Identity, which must not take a case out of judgement (the oracle's step
     * bound, not this gate, is what keeps the search small; the second bound only stops a runaway graph) */
    const pc_graph *orig = ctx->original ? ctx->original->graph : g;
    /* too big for the exact oracle: what was checked passed, and the verdict says what was not */
    if (count_non_transposes(orig) > max_nodes || count_non_transposes(g) > 2 * max_nodes) {
        bool first = count_non_transposes(orig) > max_nodes;
        snprintf(
            msg, msg_size,
            "no removable Transpose left and the cost did not go up; the exact layout oracle was not run: "
            "the %s graph has %u nodes besides Transposes, more than %u",
            first ? "original" : "optimized", count_non_transposes(first ? orig : g),
            first ? max_nodes : 2 * max_nodes);
        return PC_PROP_SKIP;
    }
    pc_tpo_result r;
    pc_error err;
    pc_error_clear(&err);
    pc_tpo_options topts = {.eps = ctx->eps, .n_eps = ctx->n_eps};
    if (pc_tpo_solve(g, &topts, &r, &err) != PC_OK) {
        snprintf(msg, msg_size, "transpose oracle: %s", err.message);
        return PC_PROP_ERROR;
    }
    bool gap = r.transposes > r.optimum;
    if (!r.proven && !gap) { /* out of search steps without a witness: not judged */
        snprintf(msg, msg_size,
                 "no removable Transpose left and the cost did not go up; the exact layout oracle ran out of "
                 "search steps (%u free nodes) without finding fewer than the %u Transposes left",
                 r.n_free, r.transposes);
        pc_tpo_result_free(&r);
        return PC_PROP_SKIP;
    }
    if (ctx->stats) {
        ctx->stats->transpose_oracle_cases++;
        if (!gap) ctx->stats->transpose_at_optimum++;
    }
    if (gap) {
        *kind = "gap";
        snprintf(msg, msg_size, "%u Transposes left where %u suffice (exact oracle, %u free nodes, %s): %s",
                 r.transposes, r.optimum, r.n_free, r.proven ? "proven" : "best found",
                 r.assignment ? r.assignment : "");
    }
    pc_tpo_result_free(&r);
    return gap ? PC_PROP_FAIL : PC_PROP_PASS;
}

const pc_property pc_prop_transpose_minimal = {"transpose-minimal",
                                               "no removable Transpose left after the transpose optimizer; "
                                               "cost never up; the exact layout optimum reached",
                                               per_pass, final};
