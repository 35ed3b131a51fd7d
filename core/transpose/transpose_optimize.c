/* The transpose optimizer as a pass (docs/transpose.md): plan every node's layout over the whole graph,
 * solve it, apply it (transpose_plan.c: each handler runs for its node's layout, in graph order), then clean
 * up what the pushes left — Transposes reading Transposes merged or cancelled, identities and no-op moves
 * dropped, Transposes of constants folded, duplicates merged — and turn a Transpose that only moves size-1
 * dims next to a sibling into a Reshape. Every step is linear in the graph but the per-region search, which
 * a step budget bounds. */
#include <stdlib.h>
#include <string.h>

#include "core/transpose/transpose_internal.h"

/* Another live Transpose applying the same perm to the same value. When n's output is a graph output, only a
 * twin whose output is one too (the twin itself takes n's uses otherwise, when the walk reaches it). */
static pc_node *twin_transpose(const tp_ctx *ctx, const pc_node *n, const int64_t *perm, size_t rank)
{
    const pc_value *v = n->inputs[0], *out = n->outputs[0];
    int64_t q[PC_MAX_RANK];
    size_t qr;
    if (out->n_subgraph_refs) return NULL;
    for (uint32_t k = 0; k < v->n_consumers; k++) {
        pc_node *u = v->consumers[k].node;
        if (u != n && !u->removed && u->graph == ctx->graph && v->consumers[k].index == 0 &&
            tp_transpose_perm(u, q, &qr) && qr == rank && tp_perm_equal(q, perm, rank) &&
            (!out->is_graph_output || u->outputs[0]->is_graph_output))
            return u;
    }
    return NULL;
}

/* n duplicates twin: n's uses read twin's output; when both are graph outputs n becomes Identity(twin's
 * output), which keeps n's output name and copies instead of permuting, and stays (*merged false) when the
 * run's EP runs no Identity. */
static pc_status merge_twin(tp_ctx *ctx, pc_node *n, pc_node *twin, bool *merged)
{
    pc_status st;
    *merged = !n->outputs[0]->is_graph_output || tp_can_add(ctx, n, "Identity", twin->outputs[0]->type.elem);
    if (!*merged) return PC_OK;
    if (!n->outputs[0]->is_graph_output) {
        if ((st = pc_value_replace_uses(n->outputs[0], twin->outputs[0])) != PC_OK)
            return pc_error_set(ctx->err, st, "rewiring uses of '%s'", n->outputs[0]->name);
        return tp_remove_if_dead(ctx, n);
    }
    pc_value *a = twin->outputs[0];
    pc_node *id = pc_pass_add_node(ctx->graph, ctx->opts, "Identity", "", 1, &a, 1, n, ctx->err);
    if (!id) return ctx->err->status;
    if ((st = pc_graph_move_output(n, 0, id, 0)) != PC_OK)
        return pc_error_set(ctx->err, st, "node '%s': cannot move its output", n->name);
    return pc_pass_remove_dead(ctx->graph, n, ctx->err);
}

/* The graph's nodes as they are now (a sweep edits the list as it goes); NULL on out of memory, with err set.
 */
static pc_node **nodes_snapshot(tp_ctx *ctx, uint32_t *n_nodes)
{
    pc_graph *g = ctx->graph;
    pc_node **nodes = pc_mem_alloc(&g->model->mem, (g->n_nodes ? g->n_nodes : 1) * sizeof *nodes);
    if (!nodes) {
        pc_error_set(ctx->err, PC_ERR_NOMEM, "transpose optimizer: node list of %u nodes", g->n_nodes);
        return NULL;
    }
    *n_nodes = 0;
    for (pc_node *n = g->first; n; n = n->next)
        nodes[(*n_nodes)++] = n;
    return nodes;
}

/* Pushes Transpose(q), the one making n's input 0, through n with fn (the Transpose handler merges two
 * Transposes, tp_reshape_merge a size-1-moving Reshape). */
static pc_status push_producer(tp_ctx *ctx, pc_node *n, tp_handler_fn fn, const int64_t *q, size_t rank,
                               bool *done)
{
    *done = false;
    int64_t inv[PC_MAX_RANK];
    uint32_t carry = 0;
    tp_perm_invert(q, rank, inv);
    tp_push push = {ctx, n, q, inv, rank, 1, &carry, NULL};
    return fn(&push, done);
}

/* A Reshape that only moves size-1 dims reading a Transpose read by nothing else: the two become one
 * Transpose, or none when they cancel (tp_reshape_merge). The plan carries a Transpose through a Reshape only
 * over whole axis groups, so this is where the size-1 moves meet one. */
static pc_status reshape_after_transpose(tp_ctx *ctx, pc_node *n, bool *any)
{
    int64_t q[PC_MAX_RANK];
    size_t qr;
    pc_value *v = n->inputs[0];
    pc_node *t = v ? v->producer : NULL;
    if (!t || t->graph != ctx->graph || !pc_pass_can_modify(ctx->opts, t) || !tp_transpose_perm(t, q, &qr) ||
        pc_value_single_consumer(v) != n || v->is_graph_output || v->n_subgraph_refs)
        return PC_OK;
    const char *tname = t->name, *name = n->name;
    bool done;
    pc_status st = push_producer(ctx, n, tp_reshape_merge, q, qr, &done);
    if (st == PC_OK && !done) pc_pass_near_miss(ctx->opts, PC_RW_TP_PUSH_RESHAPE, PC_MISS_OTHER);
    if (st != PC_OK || !done) return st;
    *any = ctx->reshape_merged = true;
    pc_pass_note(ctx->opts, PC_RW_TP_PUSH_RESHAPE);
    pc_pass_explain(ctx->opts, "pushed Transpose '%s' through Reshape '%s' (it moves only size-1 dims)",
                    tname, name);
    return PC_OK;
}

/* v is read by something besides n: another node, the graph's outputs, a subgraph. */
static bool read_elsewhere(const pc_value *v, const pc_node *n)
{
    if (v->is_graph_output || v->n_subgraph_refs) return true;
    for (uint32_t k = 0; k < v->n_consumers; k++)
        if (v->consumers[k].node != n) return true;
    return false;
}

/* One clean-up sweep over the Transposes this run may edit; *any when it changed something. */
static pc_status clean_sweep(tp_ctx *ctx, pc_node **nodes, uint32_t n_nodes, bool *any)
{
    int64_t perm[PC_MAX_RANK], q[PC_MAX_RANK], c[PC_MAX_RANK];
    size_t r, qr;
    bool fault_skipped = false; /* --inject transpose-skip-cancel: the sweep's first T -> T^-1 pair stays */
    for (uint32_t k = 0; k < n_nodes; k++) {
        pc_node *n = nodes[k];
        if (n->removed || n->graph != ctx->graph || !pc_pass_can_modify(ctx->opts, n)) continue;
        const char *name = n->name;
        pc_status st;
        if (strcmp(n->op_type, "Reshape") == 0 && !n->domain[0]) {
            if ((st = reshape_after_transpose(ctx, n, any)) != PC_OK) return st;
            continue;
        }
        if (!tp_transpose_perm(n, perm, &r)) continue;
        if (tp_perm_is_identity(perm, r) || tp_perm_moves_unit_axes_only(n->inputs[0], perm, r)) {
            bool identity = tp_perm_is_identity(perm, r), kept;
            if ((st = tp_replace_by_input(ctx, n, &kept)) != PC_OK) return st;
            if (kept) continue; /* the copy a graph output's name needs, on an EP without Identity */
            *any = true;
            pc_pass_note(ctx->opts, PC_RW_TP_IDENTITY_REMOVED);
            pc_pass_explain(ctx->opts,
                            identity
                                ? "removed identity Transpose '%s'"
                                : "removed Transpose '%s' (it moves only size-1 axes: a no-op on the data)",
                            name);
            continue;
        }
        if (pc_value_const(n->inputs[0])) {
            bool folded;
            if ((st = tp_fold_const_transpose(ctx, n, perm, r, &folded)) != PC_OK) return st;
            if (folded) {
                *any = true;
                pc_pass_explain(ctx->opts, "folded Transpose '%s' of a constant", name);
                pc_pass_note(ctx->opts, PC_RW_TP_CONST_FOLDED);
                continue;
            }
        }
        pc_node *twin = twin_transpose(ctx, n, perm, r);
        if (twin) {
            /* the same perm on the same value twice (converters emit one per branch): keep the first */
            bool merged;
            if ((st = merge_twin(ctx, n, twin, &merged)) != PC_OK) return st;
            if (!merged) continue;
            *any = true;
            pc_pass_explain(ctx->opts, "merged duplicate Transpose '%s' into '%s'", name, twin->name);
            pc_pass_note(ctx->opts, PC_RW_TP_TWIN_MERGED);
            continue;
        }
        /* reading a Transpose: one Transpose of that one's input, or none. Another run's Transpose (another
         * EP, another annotation group) is left as it is, so only while something else still reads it: n then
         * reads its input instead, and no node of another run is left dead */
        pc_node *t = n->inputs[0]->producer;
        if (!t || t->graph != ctx->graph || !tp_transpose_perm(t, q, &qr) || qr != r ||
            (!pc_pass_can_modify(ctx->opts, t) && !read_elsewhere(t->outputs[0], n)))
            continue;
        tp_perm_compose(q, perm, r, c);
        if (tp_perm_is_identity(c, r) && pc_fault_active(PC_FAULT_SKIP_CANCEL) && !fault_skipped) {
            fault_skipped = true;
            continue;
        }
        const tp_handler *h = tp_handler_find(n, ctx->opset);
        if (!h) continue;
        const char *tname = t->name;
        bool done;
        if ((st = push_producer(ctx, n, h->fn, q, r, &done)) != PC_OK) return st;
        if (done) {
            *any = true;
            pc_pass_explain(ctx->opts, "merged Transpose '%s' into Transpose '%s'", tname, name);
        }
    }
    return PC_OK;
}

/* Sweeps until nothing changes (bounded: every change removes a node or a Transpose edge). */
static pc_status clean_up(tp_ctx *ctx)
{
    pc_graph *g = ctx->graph;
    pc_status st = PC_OK;
    for (int round = 0; round < TP_MAX_ROUNDS && st == PC_OK; round++) {
        uint32_t n_nodes;
        pc_node **nodes = nodes_snapshot(ctx, &n_nodes);
        if (!nodes) return ctx->err->status;
        bool any = false;
        st = clean_sweep(ctx, nodes, n_nodes, &any);
        pc_mem_free(&g->model->mem, nodes);
        if (st != PC_OK || !any) break;
        ctx->changed = true;
        st = pc_graph_sort(g, ctx->err);
    }
    return st;
}

/* Transpose(perm) of a value of concrete dims `in` that keeps the order of the dims that are not 1 moves no
 * data: it is a Reshape to the permuted dims (out). 0-dims are refused (Reshape reads 0 as "copy"). */
static bool perm_is_reshape(const int64_t *in, const int64_t *perm, size_t rank, int64_t *out)
{
    int64_t last = -1;
    for (size_t i = 0; i < rank; i++) {
        out[i] = in[perm[i]];
        if (out[i] == 0) return false;
        if (out[i] == 1) continue;
        if (perm[i] < last) return false;
        last = perm[i];
    }
    return true;
}

/* Replaces Transpose t by Reshape(src, dims); *done false when the run's EP would not run the Reshape. */
static pc_status reshape_transpose(tp_ctx *ctx, pc_node *t, pc_value *src, const int64_t *dims, size_t rank,
                                   bool *done)
{
    *done = false;
    pc_value *shape = pc_pass_add_ints(ctx->graph, t->name, rank, dims, ctx->err);
    if (!shape) return ctx->err->status;
    pc_value *ins[2] = {src, shape};
    pc_node *r = pc_pass_add_node(ctx->graph, ctx->opts, "Reshape", "", 2, ins, 1, t, ctx->err);
    if (!r) return ctx->err->status;
    if (!pc_pass_ep_accepts(ctx->opts, r)) return pc_pass_remove_dead(ctx->graph, r, ctx->err);
    pc_status st = pc_graph_move_output(t, 0, r, 0);
    if (st != PC_OK) return pc_error_set(ctx->err, st, "node '%s': cannot move its output", t->name);
    *done = true;
    return pc_pass_remove_dead(ctx->graph, t, ctx->err);
}

/* After the rounds: a Transpose whose output is a sibling Transpose's output with only size-1 dims moved (two
 * Transposes of x that differ only in where a size-1 axis goes) becomes a Reshape of the sibling's output, so
 * one Transpose stays. Only here, once nothing moves any more: rewired onto its sibling, the Transpose would
 * merge back into it in the next round. (A lone Transpose that moves no data stays a Transpose: the layout
 * transformer's wrappers and the handlers keep their Transposes.) */
static pc_status reshape_unit_transposes(tp_ctx *ctx)
{
    pc_graph *g = ctx->graph;
    uint32_t n_nodes;
    pc_node **nodes = nodes_snapshot(ctx, &n_nodes);
    if (!nodes) return ctx->err->status;
    pc_status st = PC_OK;
    bool any = false;
    for (uint32_t k = 0; k < n_nodes && st == PC_OK; k++) {
        pc_node *n = nodes[k];
        int64_t perm[PC_MAX_RANK], in[PC_MAX_RANK], out[PC_MAX_RANK];
        size_t r;
        if (n->removed || !tp_transpose_perm(n, perm, &r) || !pc_pass_can_modify(ctx->opts, n) ||
            n->outputs[0]->n_subgraph_refs || pc_value_rank(n->inputs[0]) != (int32_t)r ||
            !pc_value_dims(n->inputs[0], in))
            continue;
        const char *name = n->name;
        bool done = false;
        const pc_value *x = n->inputs[0];
        for (uint32_t j = 0; j < x->n_consumers && !done; j++) {
            pc_node *u = x->consumers[j].node;
            int64_t q[PC_MAX_RANK], qi[PC_MAX_RANK], c[PC_MAX_RANK], mid[PC_MAX_RANK];
            size_t qr;
            if (u == n || u->removed || u->graph != g || x->consumers[j].index != 0 ||
                !pc_pass_can_modify(ctx->opts, u) || !tp_transpose_perm(u, q, &qr) || qr != r)
                continue;
            /* n = Transpose(c) of u's output with q[c[i]] = perm[i] */
            tp_perm_invert(q, r, qi);
            tp_perm_compose(qi, perm, r, c);
            for (size_t i = 0; i < r; i++)
                mid[i] = in[q[i]];
            if (!perm_is_reshape(mid, c, r, out)) continue;
            const char *uname = u->name;
            if ((st = reshape_transpose(ctx, n, u->outputs[0], out, r, &done)) != PC_OK) break;
            if (done) {
                pc_pass_explain(
                    ctx->opts, "Transpose '%s' is Transpose '%s' with size-1 dims moved: now a Reshape of it",
                    name, uname);
                pc_pass_note(ctx->opts, PC_RW_TP_TO_RESHAPE);
            }
        }
        /* a Transpose that keeps the order of the dims that are not 1 moves no data: a Reshape (no copy, as
         * ORT's TransposeReplacement, OpenVINO's TransposeToReshape). Not inside the layout transformer: its
         * wrappers stay Transposes for the partitioned run after it to push, cancel or convert. */
        if (!done && st == PC_OK && !(ctx->opts && ctx->opts->layout_cost_check) &&
            perm_is_reshape(in, perm, r, out)) {
            if ((st = reshape_transpose(ctx, n, n->inputs[0], out, r, &done)) != PC_OK) break;
            if (done) {
                pc_pass_explain(ctx->opts, "Transpose '%s' moves only size-1 dims: now a Reshape", name);
                pc_pass_note(ctx->opts, PC_RW_TP_TO_RESHAPE);
            }
        }
        any = any || done;
    }
    pc_mem_free(&g->model->mem, nodes);
    if (st == PC_OK && any) {
        ctx->changed = true;
        st = pc_graph_sort(g, ctx->err);
    }
    return st;
}

pc_status pc_transpose_optimize(pc_graph *graph, const pc_pass_options *opts, bool *changed, pc_error *err)
{
    if (changed) *changed = false;
    int64_t opset = pc_model_opset(graph->model, "");
    if (opset < PC_TRANSPOSE_OPSET_MIN || opset > PC_TRANSPOSE_OPSET_MAX) {
        /* never a partial rewrite: the whole graph is left as it is */
        pc_pass_explain(opts, "ai.onnx opset %lld is outside %d..%d: graph left unchanged", (long long)opset,
                        PC_TRANSPOSE_OPSET_MIN, PC_TRANSPOSE_OPSET_MAX);
        return PC_OK;
    }
    /* every rewrite here moves, merges or removes a Transpose of this run: without one, nothing to plan */
    bool any_transpose = false;
    for (pc_node *n = graph->first; n && !any_transpose; n = n->next)
        any_transpose = strcmp(n->op_type, "Transpose") == 0 && !n->domain[0] && pc_pass_can_modify(opts, n);
    if (!any_transpose) return PC_OK;
    tp_ctx ctx = {.graph = graph, .opts = opts, .opset = opset, .err = err};
    pc_status st = PC_OK;
    for (int round = 0; round < TP_MAX_ROUNDS && st == PC_OK; round++) {
        bool planned = false;
        ctx.reshape_merged = false;
        st = tp_plan_run(&ctx, &planned);
        if (st == PC_OK && planned) st = pc_graph_sort(graph, err);
        ctx.changed = ctx.changed || planned;
        if (st == PC_OK) st = clean_up(&ctx);
        /* a Reshape merged with a Transpose left one the plan has not seen: plan again */
        if (!ctx.reshape_merged) break;
    }
    if (st == PC_OK) st = reshape_unit_transposes(&ctx);
    if (changed) *changed = ctx.changed;
    return st;
}

static uint64_t graph_cost(const pc_graph *g)
{
    uint64_t cost = 0;
    for (const pc_node *n = g->first; n; n = n->next) {
        if (strcmp(n->op_type, "Transpose") == 0 && !n->domain[0] && n->n_outputs && n->outputs[0])
            cost += (uint64_t)tp_value_cost_rank(n->outputs[0]);
        for (uint32_t a = 0; a < n->n_attrs; a++) {
            const pc_attr *at = &n->attrs[a];
            if (at->type == PC_ATTR_GRAPH && at->g) cost += graph_cost(at->g);
            if (at->type == PC_ATTR_GRAPHS)
                for (size_t k = 0; k < at->n; k++)
                    cost += graph_cost(at->graphs[k]);
        }
    }
    return cost;
}

uint64_t pc_graph_transpose_cost(const pc_graph *graph)
{
    return graph ? graph_cost(graph) : 0;
}
