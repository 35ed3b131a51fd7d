/* The transpose optimizer as a pass (docs/transpose.md): per round, (1) a reverse walk marks values that flow
 * into Transposes, (2) a forward walk pushes Transposes through handled ops where the cost model says so,
 * merging and cancelling them (identity perms are dropped on the way), (3) a Transpose above a
 * single-consumer DQ moves before it when that folds or cancels it. Rounds repeat until nothing changes
 * (bounded). Every step is linear in the graph. */
#include <stdlib.h>
#include <string.h>

#include "core/transpose/transpose_internal.h"

static bool value_marked(const tp_ctx *ctx, const pc_value *v)
{
    return v && v->id < ctx->n_marks && ctx->leads_to_transpose[v->id];
}

static void value_mark(tp_ctx *ctx, const pc_value *v)
{
    if (v && v->id < ctx->n_marks) ctx->leads_to_transpose[v->id] = 1;
}

/* A chain link for the cancel credit must not refuse the push later: the broadcast handler needs every
 * carrying input's rank known and no larger than the output's. */
static bool link_will_push(const tp_handler *h, const pc_node *n)
{
    if (h->inputs != TP_IN_NONSCALAR) return true;
    int32_t out_rank = pc_value_rank(n->outputs[0]);
    if (out_rank < 0) return false;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        int32_t r = n->inputs[i] ? pc_value_rank(n->inputs[i]) : 0;
        if (r < 0 || r > out_rank) return false;
    }
    return true;
}

/* Pass 1: reverse walk (no edits). */
static void mark_outputs_leading_to_transpose(tp_ctx *ctx)
{
    memset(ctx->leads_to_transpose, 0, ctx->n_marks);
    memset(ctx->cancel_at, 0, ctx->n_marks * sizeof *ctx->cancel_at);
    int64_t perm[PC_MAX_RANK];
    size_t r;
    for (pc_node *n = ctx->graph->last; n; n = n->prev) {
        if (tp_transpose_perm(n, perm, &r)) {
            /* another EP's Transpose is not this run's to merge into: a push does not lead to it */
            if (!pc_pass_can_modify(ctx->opts, n)) continue;
            pc_value *in = n->inputs[0];
            value_mark(ctx, in);
            if (in->id < ctx->n_marks && pc_value_single_consumer(in) == n) ctx->cancel_at[in->id] = n;
            continue;
        }
        const tp_handler *h = tp_handler_find(n, ctx->opset);
        if (!h || !h->transposes_outputs) continue;
        /* a rank-reducing op (Squeeze...) may absorb a Transpose: one whose squeezed perm is the identity
         * leaves nothing after it (should_push asks); a target like a Transpose, but no mark */
        pc_value *in0 = n->n_inputs ? n->inputs[0] : NULL;
        if (h->dropped_axes && in0 && in0->id < ctx->n_marks && pc_value_single_consumer(in0) == n &&
            pc_pass_can_modify(ctx->opts, n))
            ctx->cancel_at[in0->id] = n;
        bool leads = false;
        for (uint32_t k = 0; k < n->n_outputs; k++)
            leads = leads || value_marked(ctx, n->outputs[k]);
        pc_node *target = NULL;
        if (h->elementwise && n->n_outputs == 1 && n->outputs[0]->id < ctx->n_marks &&
            pc_pass_can_modify(ctx->opts, n) && link_will_push(h, n))
            target = ctx->cancel_at[n->outputs[0]->id];
        if (!leads && !target) continue;
        for (uint32_t i = 0; i < n->n_inputs; i++) {
            pc_value *v = n->inputs[i];
            if (!tp_input_carries(h, v, i)) continue;
            if (leads) value_mark(ctx, v);
            if (target && v->id < ctx->n_marks && pc_value_single_consumer(v) == n)
                ctx->cancel_at[v->id] = target;
        }
    }
}

/* Every use of t's output is by `node` and it is no graph output: pushing through node removes t. */
static bool removed_by_push(const tp_ctx *ctx, const pc_node *t, const pc_node *node)
{
    const pc_value *v = t->outputs[0];
    if (v->is_graph_output || v->n_subgraph_refs || !pc_pass_can_modify(ctx->opts, t)) return false;
    for (uint32_t k = 0; k < v->n_consumers; k++)
        if (v->consumers[k].node != node) return false;
    return true;
}

/* The change a push makes, in the cost model's rank units (ORT's metric: the non-1 dims of every Transpose)
 * and, to break ties, in Transpose nodes. */
typedef struct tp_cost {
    int rank;
    int count;
} tp_cost;

static void cost_add(tp_cost *c, int rank, int count)
{
    c->rank += rank;
    c->count += count;
}

static bool cost_negative(tp_cost c)
{
    return c.rank < 0 || (c.rank == 0 && c.count < 0);
}

/* Cost of making `node` read Transpose(perm) of its input v: free for a constant (or a single-consumer DQ of
 * one); a producing Transpose this cancels saves its rank when the push removes it (node is its only user),
 * composing costs nothing when the producer is edited in place and a new Transpose otherwise; anything else
 * needs a new Transpose. A Transpose of another EP is never edited: it counts as any other producer. */
static void input_cost(const tp_ctx *ctx, const pc_node *node, const pc_value *v, const int64_t *perm,
                       size_t rank, tp_cost *c)
{
    if (pc_value_const(v)) return;
    const pc_node *p = v->producer;
    if (p && strcmp(p->op_type, "DequantizeLinear") == 0 && !p->domain[0] && p->n_inputs && p->inputs[0] &&
        pc_value_const(p->inputs[0]) && pc_value_single_consumer(v) && pc_pass_can_modify(ctx->opts, p)) {
        bool per_axis;
        if (tp_qdq_kind((tp_ctx *)ctx, p, &per_axis)) return;
    }
    int64_t q[PC_MAX_RANK], comp[PC_MAX_RANK];
    size_t qr;
    if (p && tp_transpose_perm(p, q, &qr) && qr == rank && pc_pass_can_modify(ctx->opts, p)) {
        tp_perm_compose(q, perm, rank, comp);
        bool removed = removed_by_push(ctx, p, node);
        if (tp_perm_is_identity(comp, rank)) {
            if (removed) cost_add(c, -tp_value_cost_rank(v), -1);
            return;
        }
        if (!removed) cost_add(c, tp_value_cost_rank(v), 1); /* the composed one is a new node */
        return;
    }
    /* a sibling Transpose with this perm is reused (tp_transpose_input): free, unless the push removes it
     * (node is its only reader: another input cancels it and was credited for that), for then reusing it
     * keeps it, which costs what a new one does. Counting both the credit and the free reuse made
     * Mul(T(x), x) -> T'(Mul(x, T(x))) look like a gain, and the push repeated forever. */
    for (uint32_t k = 0; k < v->n_consumers; k++) {
        const pc_node *u = v->consumers[k].node;
        size_t ur;
        if (u != node && !u->removed && u->graph == ctx->graph && v->consumers[k].index == 0 &&
            pc_pass_can_modify(ctx->opts, u) && tp_transpose_perm(u, q, &ur) && ur == rank &&
            tp_perm_equal(q, perm, rank) && !removed_by_push(ctx, u, node))
            return;
    }
    cost_add(c, tp_value_cost_rank(v), 1);
}

/* Whether input k of the carrying list reads the same value as an earlier one (its Transpose is shared). */
static bool carry_seen(const pc_node *node, const uint32_t *carry, uint32_t k)
{
    for (uint32_t j = 0; j < k; j++)
        if (node->inputs[carry[j]] == node->inputs[carry[k]]) return true;
    return false;
}

/* Whether ct, a rank-reducing op (Squeeze...), takes Transpose(perm) with nothing after it: its squeezed perm
 * is the identity, or it reduces every axis. */
static bool squeeze_absorbs(tp_ctx *ctx, const pc_node *ct, const int64_t *perm, const int64_t *perm_inv,
                            size_t rank)
{
    if (ct->removed || !ct->n_inputs || pc_value_rank(ct->inputs[0]) != (int32_t)rank) return false;
    const tp_handler *ch = tp_handler_find(ct, ctx->opset);
    int64_t sq[PC_MAX_RANK];
    size_t sr;
    tp_push at = {ctx, (pc_node *)ct, perm, perm_inv, rank, 0, NULL, NULL};
    if (ch && ch->dropped_axes && tp_reduce_all(ctx, ct, rank)) return true;
    return ch && ch->dropped_axes && tp_handler_output_perm(ch, &at, sq, &sr) && tp_perm_is_identity(sq, sr);
}

/* A one-output op whose output a push transposes with the pushed perm itself (pull_node's ops). */
static bool same_perm_output(const pc_node *node)
{
    static const char *const other[] = {"ArgMax", "ArgMin", "Gather",    "Reshape",
                                        "Shape",  "Split",  "Transpose", "Unsqueeze"};
    if (node->n_outputs != 1) return false;
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        if (strcmp(node->op_type, other[i]) == 0) return false;
    return true;
}

/* Every reader of o but `node` is a modifiable Transpose that cancels y's Transpose (t, perm): t's push
 * through o's producer removes them. *credit (when given) gets what they cost. */
static bool cancel_only_readers(const tp_ctx *ctx, const pc_value *o, const pc_value *y, const pc_node *node,
                                tp_cost *credit)
{
    int64_t perm[PC_MAX_RANK], q[PC_MAX_RANK], c[PC_MAX_RANK];
    size_t rank, qr;
    bool seen = false;
    if (!y->producer || !tp_transpose_perm(y->producer, perm, &rank)) return false;
    for (uint32_t k = 0; k < o->n_consumers; k++) {
        const pc_node *d = o->consumers[k].node;
        if (d == node) {
            seen = true;
            continue;
        }
        if (d->removed || d->graph != ctx->graph || o->consumers[k].index != 0 ||
            !pc_pass_can_modify(ctx->opts, d) || !tp_transpose_perm(d, q, &qr) || qr != rank)
            return false;
        tp_perm_compose(perm, q, rank, c);
        if (!tp_perm_is_identity(c, rank)) return false;
        if (credit) {
            credit->rank -= tp_value_cost_rank(d->outputs[0]);
            credit->count -= 1;
        }
    }
    return seen;
}

/* Look-ahead of a move up: TP_PULL_DEPTH levels of nodes with several inputs to move above (the walk
 * branches there), plus up to TP_PULL_LINKS links in all of one-input chains (no branching: a QDQ chain DQ ->
 * Relu -> Q -> DQ -> Relu -> Q is six links long), so one evaluation stays bounded. */
enum { TP_PULL_DEPTH = 4, TP_PULL_LINKS = 32 };

/* u, another consumer of y (t's output), starts a chain of one-output elementwise ops (up to TP_PULL_DEPTH
 * links) whose carrying inputs are y, constants or the previous link's output (read by nothing else) and
 * whose last output only `node` reads (besides Transposes cancelling t): once t is pushed through node, t's
 * pushes along the chain remove t and cancel the Transpose node's push put on the chain's output (and those).
 * Returns the chain's last op, or NULL. */
static const pc_node *chain_end(const tp_ctx *ctx, const pc_value *y, const pc_node *u, const pc_node *node)
{
    const pc_value *prev = NULL;
    for (int d = 0; d < TP_PULL_DEPTH; d++) {
        const tp_handler *h = tp_handler_find(u, ctx->opset);
        if (u->removed || u->graph != ctx->graph || u->n_outputs != 1 || !h || !h->elementwise ||
            !pc_pass_can_modify(ctx->opts, u) || !link_will_push(h, u))
            return NULL;
        const pc_value *o = u->outputs[0];
        if (!o || o->is_graph_output || o->n_subgraph_refs) return NULL;
        for (uint32_t i = 0; i < u->n_inputs; i++) {
            const pc_value *w = u->inputs[i];
            if (!tp_input_carries(h, w, i) || w == y || (prev && w == prev)) continue;
            if (!pc_value_const(w)) return NULL;
        }
        if (cancel_only_readers(ctx, o, y, node, NULL)) return u;
        const pc_node *next = pc_value_single_consumer(o);
        if (!next || next == node) return NULL;
        prev = o;
        u = next;
    }
    return NULL;
}

/* v, an input of node, is the output of a chain from a consumer of y into node (chain_end). */
static bool chain_into(const tp_ctx *ctx, const pc_value *y, const pc_value *v, const pc_node *node)
{
    for (uint32_t k = 0; v->producer && k < y->n_consumers; k++) {
        const pc_node *u = y->consumers[k].node;
        if (u != node && chain_end(ctx, y, u, node) == v->producer) return true;
    }
    return false;
}

/* Transpose t is shared by node and chains into node (chain_into): pushed through node and then through each
 * chain, it goes (the group push; each push alone keeps the shared Transpose). */
static bool group_push(const tp_ctx *ctx, const pc_node *t, const pc_node *node)
{
    const pc_value *y = t->outputs[0];
    if (y->is_graph_output || y->n_subgraph_refs || !pc_pass_can_modify(ctx->opts, t) || y->n_consumers < 2)
        return false;
    bool other = false;
    for (uint32_t k = 0; k < y->n_consumers; k++) {
        const pc_node *u = y->consumers[k].node;
        if (u == node) continue;
        if (!chain_end(ctx, y, u, node)) return false;
        other = true;
    }
    return other;
}

/* A per-tensor QuantizeLinear or DequantizeLinear: elementwise for a push (a per-axis one remaps its
 * axis). */
static bool per_tensor_qdq(const tp_ctx *ctx, const pc_node *u, const tp_handler *h)
{
    bool per_axis = true;
    return h && !u->domain[0] &&
           (strcmp(u->op_type, "QuantizeLinear") == 0 || strcmp(u->op_type, "DequantizeLinear") == 0) &&
           tp_qdq_kind((tp_ctx *)ctx, u, &per_axis) && !per_axis;
}

/* Every input of u the handler carries, other than y, is a constant (its new Transpose folds). */
static bool others_const(const pc_node *u, const tp_handler *h, const pc_value *y)
{
    for (uint32_t i = 0; i < u->n_inputs; i++) {
        const pc_value *w = u->inputs[i];
        if (!tp_input_carries(h, w, i) || w == y) continue;
        if (!pc_value_const(w)) return false;
    }
    return true;
}

/* Every reader of Transpose t's output (two or more; no graph output) is a one-output elementwise op or
 * per-tensor Q/DQ whose other carrying inputs are constants and whose output only a modifiable Transpose
 * reads: t's push through each merges into that Transpose at no cost, and the last one removes t. Each push
 * alone keeps the shared t; counted gone, they go one by one (no move up undoes one: it would add a
 * Transpose). */
static bool readers_all_merge(const tp_ctx *ctx, const pc_node *t)
{
    const pc_value *y = t->outputs[0];
    if (y->is_graph_output || y->n_subgraph_refs || y->n_consumers < 2 || !pc_pass_can_modify(ctx->opts, t))
        return false;
    for (uint32_t k = 0; k < y->n_consumers; k++) {
        const pc_node *u = y->consumers[k].node;
        const tp_handler *h = tp_handler_find(u, ctx->opset);
        bool qdq = per_tensor_qdq(ctx, u, h);
        if (u->removed || u->graph != ctx->graph || !pc_pass_can_modify(ctx->opts, u) || !h ||
            !(h->elementwise || qdq) || u->n_outputs != 1 || !link_will_push(h, u))
            return false;
        const pc_value *o = u->outputs[0];
        const pc_node *ct = o ? pc_value_single_consumer(o) : NULL;
        int64_t q[PC_MAX_RANK];
        size_t qr;
        if (!ct || o->is_graph_output || o->n_subgraph_refs || ct->removed || ct->graph != ctx->graph ||
            !pc_pass_can_modify(ctx->opts, ct) || !tp_transpose_perm(ct, q, &qr))
            return false;
        if (!others_const(u, h, y)) return false;
    }
    return true;
}

/* An output that comes out in the pushed perm and that a modifiable Transpose cancelling it reads: that one
 * goes (the cancel target skips graph outputs and shared values); the output's own Transpose stays when it
 * is a graph output or has other readers. *c: the output's net cost. */
static bool cancel_reader_cost(const tp_ctx *ctx, const pc_value *out, const int64_t *perm, size_t rank,
                               tp_cost *c)
{
    for (uint32_t k = 0; k < out->n_consumers; k++) {
        const pc_node *dt = out->consumers[k].node;
        int64_t q[PC_MAX_RANK], comp[PC_MAX_RANK];
        size_t qr;
        if (dt->removed || dt->graph != ctx->graph || out->consumers[k].index != 0 ||
            !pc_pass_can_modify(ctx->opts, dt) || !tp_transpose_perm(dt, q, &qr) || qr != rank)
            continue;
        tp_perm_compose(perm, q, rank, comp);
        if (!tp_perm_is_identity(comp, rank)) continue;
        if (out->is_graph_output || out->n_subgraph_refs || out->n_consumers > 1)
            *c = (tp_cost){tp_value_cost_rank(out) - tp_value_cost_rank(dt->outputs[0]), 0};
        else
            *c = (tp_cost){-tp_value_cost_rank(out), -1};
        return true;
    }
    return false;
}

/* The output runs through single-consumer elementwise ops into a Transpose that cancels perm (the reverse
 * walk's cancel target): the Transpose the push puts on it travels there and both go. */
static bool chain_cancels(const tp_ctx *ctx, const pc_value *out, const int64_t *perm, size_t rank)
{
    const pc_node *ct = out && out->id < ctx->n_marks ? ctx->cancel_at[out->id] : NULL;
    int64_t q[PC_MAX_RANK], c[PC_MAX_RANK];
    size_t qr;
    if (!ct || ct->removed || !tp_transpose_perm(ct, q, &qr) || qr != rank) return false;
    tp_perm_compose(perm, q, rank, c);
    return tp_perm_is_identity(c, rank);
}

static pc_node *pull_node(const tp_ctx *ctx, const pc_value *y, const pc_node *user,
                          const int64_t *merge_perm, size_t rank_m, const tp_handler **hp);

/* Every carrying input of node (a pull_node) is a constant: a Transpose on its output moves above it and
 * folds, leaving nothing (so no push can bring it back: try_pull_up moves it even when marked). */
static bool const_fed(const pc_node *node, const tp_handler *h)
{
    for (uint32_t i = 0; i < node->n_inputs; i++) {
        const pc_value *w = node->inputs[i];
        if (!tp_input_carries(h, w, i)) continue;
        if (!pc_value_const(w)) return false;
    }
    return true;
}

static bool should_push(tp_ctx *ctx, pc_node *node, const tp_handler *h, pc_node *t, const int64_t *perm,
                        const int64_t *perm_inv, size_t rank, const uint32_t *carry, uint32_t n_carry)
{
    if (strcmp(node->op_type, "Transpose") == 0) return true; /* merging or cancelling never costs */
    tp_cost cost = {0, 0};
    bool group = group_push(ctx, t, node);
    for (uint32_t k = 0; k < n_carry; k++) {
        const pc_value *v = node->inputs[carry[k]];
        if (carry_seen(node, carry, k)) continue;
        /* the Transpose a chain's output gets here is cancelled by t's push through the chain */
        if (group && chain_into(ctx, t->outputs[0], v, node)) {
            cancel_only_readers(ctx, v, t->outputs[0], node, &cost); /* the chain's push removes those */
            continue;
        }
        tp_cost c = {0, 0};
        input_cost(ctx, node, v, perm_inv, rank, &c);
        /* made by a node of constants (Erf(c)): the new Transpose moves above it and folds there */
        const tp_handler *ph;
        const pc_node *pn =
            c.count > 0 && pc_value_rank(v) == (int32_t)rank ? pull_node(ctx, v, node, NULL, 0, &ph) : NULL;
        if (pn && const_fed(pn, ph)) continue;
        cost_add(&cost, c.rank, c.count);
    }
    if (group)
        cost_add(&cost, -tp_value_cost_rank(t->outputs[0]), -1); /* t goes after the chains' pushes */
    else if (readers_all_merge(ctx, t))
        cost_add(&cost, -tp_value_cost_rank(t->outputs[0]), -1);
    /* the layout transformer's push (first walk only): a channel move goes through every handled op but
     * Concat regardless of what it meets after, as long as the push itself adds nothing: the Transpose is
     * this node's alone and no other input needs a new one */
    if (ctx->layout_push && tp_perm_is_channel_move(perm, rank) && strcmp(node->op_type, "Concat") != 0 &&
        node->n_outputs <= 1 && removed_by_push(ctx, t, node) && cost.count <= -1)
        return true;
    if (!h->transposes_outputs) return cost_negative(cost);
    /* a shared Transpose into an op that takes it with nothing after it (a Squeeze whose squeezed perm is the
     * identity, a reduce-all) when nothing else is added: a free step (the op reads the Transpose's input)
     * that leaves the Transpose one consumer fewer, so the push into its last one can remove it */
    if (h->dropped_axes && cost.rank == 0 && cost.count == 0 && !removed_by_push(ctx, t, node) &&
        squeeze_absorbs(ctx, node, perm, perm_inv, rank))
        return true;
    /* credit: the output runs through single-consumer elementwise ops into a Transpose this one cancels */
    const pc_value *out = node->n_outputs == 1 ? node->outputs[0] : NULL;
    const pc_node *ct = out && out->id < ctx->n_marks ? ctx->cancel_at[out->id] : NULL;
    if (h->elementwise && chain_cancels(ctx, out, perm, rank)) {
        cost_add(&cost, -tp_value_cost_rank(out), -1);
        return cost_negative(cost);
    }
    /* an elementwise output that is a graph output (or shared) read by a Transpose that cancels the pushed
     * one: that one goes, the output keeps its own (cancel_reader_cost) */
    tp_cost out_cost;
    if (h->elementwise && out && cancel_reader_cost(ctx, out, perm, rank, &out_cost)) {
        cost_add(&cost, out_cost.rank, out_cost.count);
        return cost_negative(cost);
    }
    /* the same for an op whose output perm is the pushed one (Concat, Pad, Slice...) whose output a Transpose
     * it cancels reads (the cancel target skips graph outputs and shared values): that one goes; the output's
     * own Transpose stays when the output is a graph output or has other readers (Concat(t, t) -> {output,
     * T^-1}: one left, not 2) */
    if (!h->elementwise && !h->dropped_axes && out && same_perm_output(node) &&
        cancel_reader_cost(ctx, out, perm, rank, &out_cost)) {
        cost_add(&cost, out_cost.rank, out_cost.count);
        return cost_negative(cost);
    }
    /* the output's Transpose goes into a Squeeze (directly, or through elementwise ops) that takes it with
     * nothing after it: the output costs nothing. Ops whose output perm is the pushed one only. */
    if (ct && !h->dropped_axes && (h->elementwise || same_perm_output(node)) &&
        squeeze_absorbs(ctx, ct, perm, perm_inv, rank))
        return cost_negative(cost);
    /* a Split's outputs may earn credits below (each output's cancelling readers), so a push that costs
     * nothing yet is not refused here: T shared by Split(axis) and another reader, the Split's outputs each
     * read by a T^-1 (and other ops) */
    bool split = strcmp(node->op_type, "Split") == 0; /* every output in the pushed perm */
    if (!cost_negative(cost) && !split) return false;
    /* a rank-reducing op whose squeezed perm is the identity gets no Transpose after it */
    int64_t out_perm[PC_MAX_RANK];
    size_t out_rank;
    tp_push probe = {ctx, node, perm, perm_inv, rank, n_carry, carry, NULL};
    if (cost_negative(cost) && tp_handler_output_perm(h, &probe, out_perm, &out_rank) &&
        tp_perm_is_identity(out_perm, out_rank))
        return true;
    /* every output gets a Transpose: free when it flows into one (it will likely merge there) and is no
     * larger than the one pushed (Pad, Tile, Concat may grow it: should it not merge after all, the cost
     * would rise) */
    int pushed_rank = tp_value_cost_rank(t->outputs[0]);
    for (uint32_t k = 0; k < node->n_outputs; k++) {
        const pc_value *o = node->outputs[k];
        if (!o || !pc_value_is_used(o)) continue;
        if (split && cancel_reader_cost(ctx, o, perm, rank, &out_cost))
            cost_add(&cost, out_cost.rank, out_cost.count);
        else if (split && chain_cancels(ctx, o, perm, rank)) /* Split -> {.., Relu -> T^-1} */
            cost_add(&cost, -tp_value_cost_rank(o), -1);
        else if (!value_marked(ctx, o) || tp_value_cost_rank(o) > pushed_rank)
            cost_add(&cost, tp_value_cost_rank(o), 1);
    }
    return cost_negative(cost);
}

/* A Split the region may take in: its handler will not refuse the push (a valid axis), and every output is
 * of the pushed rank (each then gets the pushed perm, as an elementwise op's one output does). */
static bool region_split(const pc_node *u, const tp_handler *h, size_t rank)
{
    const pc_attr *a = pc_node_attr(u, "axis");
    int64_t axis;
    if (strcmp(u->op_type, "Split") != 0 || !h->transposes_outputs || (a && a->type != PC_ATTR_INT) ||
        !tp_axis_normalize(a ? a->i : 0, rank, &axis) || pc_value_rank(u->inputs[0]) != (int32_t)rank)
        return false;
    for (uint32_t k = 0; k < u->n_outputs; k++) {
        const pc_value *o = u->outputs[k];
        if (o && (o->n_subgraph_refs || pc_value_rank(o) != (int32_t)rank)) return false;
    }
    return true;
}

/* A region member: a one-output elementwise op (or per-tensor Q/DQ) of this run, of the pushed rank, or a
 * Split (region_split: its outputs' Transposes are costed like a member output's), whose every carrying
 * input is a constant or a value already in the region (flags by value id), and at least one is. */
static bool region_member(const tp_ctx *ctx, const pc_node *u, const uint8_t *in, size_t rank)
{
    const tp_handler *h = tp_handler_find(u, ctx->opset);
    if (u->removed || u->graph != ctx->graph || !h || !pc_pass_can_modify(ctx->opts, u)) return false;
    if (u->n_inputs && u->inputs[0] && in[u->inputs[0]->id] && region_split(u, h, rank)) return true;
    if (u->n_outputs != 1 || !u->outputs[0] || !(h->elementwise || per_tensor_qdq(ctx, u, h)) ||
        !link_will_push(h, u) || u->outputs[0]->n_subgraph_refs ||
        pc_value_rank(u->outputs[0]) != (int32_t)rank)
        return false;
    bool reads = false;
    for (uint32_t i = 0; i < u->n_inputs; i++) {
        const pc_value *w = u->inputs[i];
        if (!tp_input_carries(h, w, i)) continue;
        if (in[w->id]) {
            if (pc_value_rank(w) != (int32_t)rank) return false;
            reads = true;
        } else if (!pc_value_const(w)) {
            return false;
        }
    }
    return reads;
}

/* What pushing t through every member costs, exactly: t goes when the region holds all its readers; each
 * member output read outside the region (or a graph output) gets one Transpose, and each modifiable
 * Transpose reading it merges into that one (a cancelling one goes with it). */
static tp_cost region_cost(const tp_ctx *ctx, const pc_node *t, const uint8_t *member,
                           pc_node *const *members, uint32_t n_members, const int64_t *perm, size_t rank)
{
    tp_cost cost = {0, 0};
    const pc_value *y = t->outputs[0];
    bool all = !y->is_graph_output && !y->n_subgraph_refs;
    for (uint32_t k = 0; k < y->n_consumers && all; k++)
        all = member[y->consumers[k].node->id];
    if (all) cost_add(&cost, -tp_value_cost_rank(y), -1);
    for (uint32_t m = 0; m < n_members; m++) {
        for (uint32_t j = 0; j < members[m]->n_outputs; j++) {
            const pc_value *o = members[m]->outputs[j];
            if (!o) continue;
            bool needs = o->is_graph_output;
            for (uint32_t k = 0; k < o->n_consumers; k++) {
                const pc_node *c = o->consumers[k].node;
                int64_t q[PC_MAX_RANK], comp[PC_MAX_RANK];
                size_t qr;
                if (member[c->id]) continue;
                if (!c->removed && c->graph == ctx->graph && o->consumers[k].index == 0 &&
                    pc_pass_can_modify(ctx->opts, c) && tp_transpose_perm(c, q, &qr) && qr == rank) {
                    tp_perm_compose(perm, q, rank, comp);
                    if (tp_perm_is_identity(comp, rank))
                        cost_add(&cost, -tp_value_cost_rank(c->outputs[0]), -1);
                    continue;
                }
                needs = true;
            }
            if (needs) cost_add(&cost, tp_value_cost_rank(o), 1);
        }
    }
    return cost;
}

/* The carrying inputs of node under h: in `small` (PC_MAX_RANK entries) when they fit, else in an array this
 * allocates; free with carry_free. */
static pc_status carry_list(tp_ctx *ctx, const pc_node *node, const tp_handler *h, uint32_t *small,
                            uint32_t **carry, uint32_t *n_carry)
{
    uint32_t cap = node->n_inputs > PC_MAX_RANK ? node->n_inputs : PC_MAX_RANK;
    *n_carry = 0; /* defined on the failure path too */
    *carry = cap > PC_MAX_RANK ? malloc(cap * sizeof **carry) : small;
    if (!*carry) return pc_error_set(ctx->err, PC_ERR_NOMEM, "node '%s': carrying inputs", node->name);
    *n_carry = tp_handler_inputs(h, node, *carry, cap);
    return PC_OK;
}

static void carry_free(uint32_t *carry, const uint32_t *small)
{
    if (carry != small) free(carry);
}

/* The region push: Transpose t (perm), which a push through any one reader alone does not pay for (t stays
 * for its other readers, or the reader's output feeds both the region and a Transpose it cancels), is pushed
 * through the whole region of elementwise ops it reaches (region_member) when that lowers the cost exactly:
 * T -> {Div(t, k) -> d, Mul(t, c) -> m}, m -> {Mul(m, d) -> out, T^-1} leaves one Transpose at out, not two.
 * Members are pushed in graph order, so each reads only pushed values then. */
static pc_status push_member(tp_ctx *ctx, pc_node *n, const int64_t *perm, const int64_t *perm_inv,
                             size_t rank, const char *tname, bool *pushed)
{
    const tp_handler *h = tp_handler_find(n, ctx->opset);
    uint32_t small[PC_MAX_RANK], *carry, n_carry;
    *pushed = false;
    pc_status st = carry_list(ctx, n, h, small, &carry, &n_carry);
    if (st != PC_OK) return st;
    tp_push push = {ctx, n, perm, perm_inv, rank, n_carry, carry, NULL};
    const char *op = n->op_type, *name = n->name;
    st = h->fn(&push, pushed);
    carry_free(carry, small);
    if (st == PC_OK && *pushed) {
        pc_pass_explain(ctx->opts, "pushed Transpose '%s' through %s '%s' (region push)", tname, op, name);
        pc_pass_note(ctx->opts, tp_handler_kind(h));
    }
    return st;
}

/* A root for the region push: a one-output op reading t whose output perm is the pushed perm (Pad, Slice,
 * Softmax...; not elementwise, so no member), whose other carrying inputs are constants. Its handler may
 * still refuse: it is pushed first, so a refusal leaves the graph as it was. */
static bool region_root(const tp_ctx *ctx, const pc_node *node, const tp_handler *h, const pc_node *t,
                        size_t rank)
{
    const pc_value *o = node->n_outputs == 1 ? node->outputs[0] : NULL;
    return o && h->transposes_outputs && !h->dropped_axes && same_perm_output(node) &&
           strcmp(node->op_type, "Unsqueeze") != 0 && node->graph == ctx->graph &&
           pc_pass_can_modify(ctx->opts, node) && !o->n_subgraph_refs && pc_value_rank(o) == (int32_t)rank &&
           others_const(node, h, t->outputs[0]);
}

/* Grows a zeroed scratch array to at least n entries of size sz (new entries zero). */
static bool scratch_grow(void **p, uint32_t *cap, uint32_t n, size_t sz)
{
    if (n <= *cap) return true;
    uint32_t want = n < 64 ? 64 : n + n / 2;
    void *q = realloc(*p, (size_t)want * sz);
    if (!q) return false;
    memset((char *)q + (size_t)*cap * sz, 0, (size_t)(want - *cap) * sz);
    *p = q;
    *cap = want;
    return true;
}

static pc_status try_region_push(tp_ctx *ctx, pc_node *t, const int64_t *perm, size_t rank, pc_node *root,
                                 bool *done)
{
    *done = false;
    pc_graph *g = ctx->graph;
    pc_value *y = t->outputs[0];
    if (t->graph != g || !pc_pass_can_modify(ctx->opts, t) || y->n_subgraph_refs ||
        pc_value_rank(y) != (int32_t)rank || !y->n_consumers)
        return PC_OK;
    uint32_t node_limit = g->next_node_id; /* nodes the pushes add are no members */
    if (!scratch_grow((void **)&ctx->region_in, &ctx->region_values_cap, g->n_values, 1) ||
        !scratch_grow((void **)&ctx->region_member, &ctx->region_nodes_cap, node_limit, 1) ||
        !scratch_grow((void **)&ctx->region_members, &ctx->region_members_cap, g->n_nodes + 1,
                      sizeof *ctx->region_members) ||
        !scratch_grow((void **)&ctx->region_work, &ctx->region_work_cap, g->n_values + 1,
                      sizeof *ctx->region_work))
        return pc_error_set(ctx->err, PC_ERR_NOMEM, "transpose optimizer: region of '%s'", t->name);
    uint8_t *in = ctx->region_in, *member = ctx->region_member;
    pc_node **members = ctx->region_members;
    pc_value **work = ctx->region_work; /* each value at most once */
    pc_status st = PC_OK;
    /* grow from t's output: a node joins once all its carrying inputs are in (it is looked at again from
     * each of its region inputs) */
    uint32_t n_members = 0, n_work = 0;
    in[y->id] = 1;
    work[n_work++] = y;
    if (root) {
        member[root->id] = 1;
        members[n_members++] = root;
        in[root->outputs[0]->id] = 1;
        work[n_work++] = root->outputs[0];
    }
    while (n_work) {
        const pc_value *v = work[--n_work];
        for (uint32_t k = 0; k < v->n_consumers; k++) {
            pc_node *u = v->consumers[k].node;
            if (member[u->id] || !region_member(ctx, u, in, rank)) continue;
            member[u->id] = 1;
            members[n_members++] = u;
            for (uint32_t j = 0; j < u->n_outputs; j++) {
                if (!u->outputs[j]) continue;
                in[u->outputs[j]->id] = 1;
                work[n_work++] = u->outputs[j];
            }
        }
    }
    bool pays = n_members > (root ? 1u : 0u);
    if (pays) {
        tp_cost cost = region_cost(ctx, t, member, members, n_members, perm, rank);
        /* a region through a root or a Split trades Transposes of other sizes: it must leave fewer, not only
         * smaller ones (trading T and T^-1 for two smaller ones on Split outputs blocked the move up that
         * leaves one: suite seed 3 case 8132) */
        bool wide = root != NULL;
        for (uint32_t m = 0; m < n_members && !wide; m++)
            wide = members[m]->n_outputs != 1;
        pays = cost_negative(cost) && !(wide && (cost.count >= 0 || cost.rank > 0));
    }
    /* leave the value scratch zeroed now: the pushes give the members fresh output values */
    in[y->id] = 0;
    for (uint32_t m = 0; m < n_members; m++)
        for (uint32_t j = 0; j < members[m]->n_outputs; j++)
            if (members[m]->outputs[j]) in[members[m]->outputs[j]->id] = 0;
    if (pays) {
        int64_t perm_inv[PC_MAX_RANK];
        tp_perm_invert(perm, rank, perm_inv);
        const char *tname = t->name;
        uint32_t n_pushed = 0;
        bool pushed = true;
        /* the root first: it reads only t and constants, and the only member that may refuse */
        if (root && (st = push_member(ctx, root, perm, perm_inv, rank, tname, &pushed)) == PC_OK && pushed)
            n_pushed++;
        for (pc_node *n = g->first; n && st == PC_OK && pushed; n = n->next) {
            if (n->removed || n->id >= node_limit || !member[n->id] || n == root) continue;
            bool one;
            if ((st = push_member(ctx, n, perm, perm_inv, rank, tname, &one)) == PC_OK && one) n_pushed++;
        }
        if (n_pushed) {
            *done = ctx->changed = true;
            pc_pass_note(ctx->opts, PC_RW_TP_REGION_PUSH);
        }
    } else if (n_members > (root ? 1u : 0u)) {
        pc_pass_near_miss(ctx->opts, PC_RW_TP_REGION_PUSH, PC_MISS_COST);
    }
    for (uint32_t m = 0; m < n_members; m++)
        member[members[m]->id] = 0; /* node ids are stable */
    return st;
}

/* A push the cost model or the handler refused: a near miss of the handler's kind, and of the per-axis
 * remap when node is a per-axis Q/DQ (its axis would have been remapped). */
static void push_near_miss(tp_ctx *ctx, const pc_node *node, const tp_handler *h, pc_miss_reason why)
{
    pc_pass_near_miss(ctx->opts, tp_handler_kind(h), why);
    bool per_axis = false;
    if (tp_handler_kind(h) == PC_RW_TP_PUSH_QDQ && tp_qdq_kind(ctx, node, &per_axis) && per_axis)
        pc_pass_near_miss(ctx->opts, PC_RW_TP_QDQ_AXIS, why);
}

/* ProcessTranspose: push Transpose t (perm) feeding input i of node through node when a handler allows it. */
static pc_status try_push(tp_ctx *ctx, pc_node *node, uint32_t i, pc_node *t, const int64_t *perm,
                          size_t rank, bool *done)
{
    *done = false;
    const tp_handler *h = tp_handler_find(node, ctx->opset);
    if (!h) return PC_OK;
    uint32_t small[PC_MAX_RANK], *carry, n_carry;
    pc_status cs = carry_list(ctx, node, h, small, &carry, &n_carry);
    if (cs != PC_OK) return cs;
    bool carries = false;
    for (uint32_t k = 0; k < n_carry; k++)
        carries = carries || carry[k] == i;
    int64_t perm_inv[PC_MAX_RANK];
    tp_perm_invert(perm, rank, perm_inv);
    pc_status st = PC_OK;
    bool accept = carries && should_push(ctx, node, h, t, perm, perm_inv, rank, carry, n_carry);
    /* refused alone: the elementwise region t reaches may pay for itself as a whole */
    if (carries && !accept && (h->elementwise || per_tensor_qdq(ctx, node, h))) {
        carry_free(carry, small);
        st = try_region_push(ctx, t, perm, rank, NULL, done);
        if (st == PC_OK && !*done) push_near_miss(ctx, node, h, PC_MISS_COST);
        return st;
    }
    /* or rooted at node, when it passes the Transpose on unchanged (Pad -> Tanh -> Relu -> {T^-1, ...}) */
    if (carries && !accept && region_root(ctx, node, h, t, rank)) {
        carry_free(carry, small);
        st = try_region_push(ctx, t, perm, rank, node, done);
        if (st == PC_OK && !*done) push_near_miss(ctx, node, h, PC_MISS_COST);
        return st;
    }
    if (carries && !accept) push_near_miss(ctx, node, h, PC_MISS_COST);
    if (accept) {
        const char *tname = t->name, *nname = node->name, *op = node->op_type;
        tp_push push = {ctx, node, perm, perm_inv, rank, n_carry, carry, NULL};
        st = h->fn(&push, done);
        if (st == PC_OK && *done) {
            ctx->changed = true;
            if (strcmp(op, "Transpose") == 0)
                pc_pass_explain(ctx->opts, "merged Transpose '%s' into Transpose '%s'", tname, nname);
            else
                pc_pass_explain(ctx->opts, "pushed Transpose '%s' through %s '%s'", tname, op, nname);
            pc_pass_note(ctx->opts, tp_handler_kind(h));
            if (ctx->layout_push && tp_perm_is_channel_move(perm, rank))
                pc_pass_note(ctx->opts, PC_RW_TP_LAYOUT_PUSH);
        } else if (st == PC_OK) {
            push_near_miss(ctx, node, h, PC_MISS_OTHER); /* the handler refused */
        }
    }
    carry_free(carry, small);
    return st;
}

/* A reader of y that takes y in any layout with nothing after it: a reduce-all (it reads y's producer's
 * input instead once a Transpose moves above the producer). */
static bool any_layout_reader(const tp_ctx *ctx, const pc_value *y, uint32_t k)
{
    const pc_node *u = y->consumers[k].node;
    int32_t r = pc_value_rank(y);
    return y->consumers[k].index == 0 && !u->removed && u->graph == ctx->graph && r >= 0 &&
           pc_pass_can_modify(ctx->opts, u) && tp_reduce_all(ctx, u, (size_t)r);
}

/* A reader of y that takes the Transpose(perm^-1) a move up leaves on y at no cost: a rank-reducing op that
 * takes it with nothing after it (squeeze_absorbs: the next round pushes it in), or a one-output elementwise
 * op (or per-tensor Q/DQ) whose other carrying inputs are constants and whose output only a modifiable
 * Transpose reads (the next round pushes the new one through the op and merges it there). Not a Transpose
 * reading y directly: a push through y's producer merges its output Transpose into that one and counts it
 * free, and this move would undo that push round after round. */
static bool merging_reader(const tp_ctx *ctx, const pc_value *y, uint32_t k, const int64_t *perm, size_t rank)
{
    const pc_node *u = y->consumers[k].node;
    int32_t r = pc_value_rank(y);
    if (u->removed || u->graph != ctx->graph || !pc_pass_can_modify(ctx->opts, u) || r < 0 ||
        (size_t)r != rank)
        return false;
    int64_t q[PC_MAX_RANK];
    size_t qr;
    const tp_handler *h = tp_handler_find(u, ctx->opset);
    /* a rank-reducing op that takes Transpose(perm^-1) with nothing after it (the Squeeze credit) */
    int64_t inv[PC_MAX_RANK];
    tp_perm_invert(perm, rank, inv);
    if (h && h->dropped_axes && y->consumers[k].index == 0 &&
        squeeze_absorbs((tp_ctx *)ctx, u, inv, perm, rank))
        return true;
    /* a per-tensor Q or DQ is elementwise too (a per-axis one remaps its axis) */
    bool qdq = per_tensor_qdq(ctx, u, h);
    if (!h || !(h->elementwise || qdq) || u->n_outputs != 1 || !link_will_push(h, u)) return false;
    const pc_value *o = u->outputs[0];
    const pc_node *ct = o ? pc_value_single_consumer(o) : NULL;
    if (!ct || o->is_graph_output || o->n_subgraph_refs || ct->removed || ct->graph != ctx->graph ||
        !pc_pass_can_modify(ctx->opts, ct) || !tp_transpose_perm(ct, q, &qr) || qr != (size_t)r ||
        pc_value_rank(o) != r)
        return false;
    return others_const(u, h, y);
}

/* user reads y; every other reader takes y in any layout (or, when `merging`, takes the Transpose a move up
 * leaves on y for free: merging_reader). */
static bool only_reader(const tp_ctx *ctx, const pc_value *y, const pc_node *user, const int64_t *perm,
                        size_t rank)
{
    bool merging = perm != NULL;
    bool seen = false;
    for (uint32_t k = 0; k < y->n_consumers; k++) {
        if (y->consumers[k].node == user) {
            seen = true;
            continue;
        }
        if (!any_layout_reader(ctx, y, k) && !(merging && merging_reader(ctx, y, k, perm, rank)))
            return false;
    }
    return seen;
}

/* The node making y, when a Transpose that is y's only user can move above it: same-rank ops whose output
 * perm is the pushed perm (elementwise ops, Pad, Slice, Tile, Softmax, Concat, Q/DQ, Resize...), one used
 * output (a Split's others unused), modifiable. */
static pc_node *pull_node(const tp_ctx *ctx, const pc_value *y, const pc_node *user,
                          const int64_t *merge_perm, size_t rank_m, const tp_handler **hp)
{
    pc_node *node = y->producer;
    if (!node || node->graph != ctx->graph || !pc_pass_can_modify(ctx->opts, node) || y->is_graph_output ||
        y->n_subgraph_refs || !only_reader(ctx, y, user, merge_perm, rank_m))
        return NULL;
    for (uint32_t k = 0; k < node->n_outputs; k++)
        if (node->outputs[k] != y && pc_value_is_used(node->outputs[k])) return NULL;
    const tp_handler *h = tp_handler_find(node, ctx->opset);
    int32_t rank = pc_value_rank(y);
    if (!h || !h->transposes_outputs || strcmp(node->op_type, "Unsqueeze") == 0 ||
        (h->dropped_axes && (rank < 0 || !tp_reduce_keeps_layout(ctx, node, (size_t)rank))) ||
        (h->inputs == TP_IN_NONSCALAR && !link_will_push(h, node)))
        return NULL;
    *hp = h;
    return node;
}

/* The Transpose(perm) that is the only user of y (no graph output, modifiable, not flowing on into another
 * Transpose: the push's to move there), or NULL. */
static pc_node *twin_user(const tp_ctx *ctx, const pc_value *y, const int64_t *perm, size_t rank)
{
    pc_node *c = y->n_consumers == 1 ? y->consumers[0].node : NULL;
    int64_t q[PC_MAX_RANK];
    size_t qr;
    if (!c || y->is_graph_output || y->n_subgraph_refs || c->removed || c->graph != ctx->graph ||
        y->consumers[0].index != 0 || !pc_pass_can_modify(ctx->opts, c) || !tp_transpose_perm(c, q, &qr) ||
        qr != rank || !tp_perm_equal(q, perm, rank) || value_marked(ctx, c->outputs[0]))
        return NULL;
    return c;
}

/* The Split making x, read only by `user` (a Transpose(perm) moving up, or a node it moves above), when every
 * other used output of it goes only into Transpose(perm) (the twins): one Transpose above the Split replaces
 * them all. */
static pc_node *pull_split(const tp_ctx *ctx, const pc_value *x, const pc_node *user, const int64_t *perm,
                           size_t rank, const tp_handler **hp)
{
    pc_node *node = x->producer;
    if (!node || node->n_outputs < 2 || node->graph != ctx->graph || strcmp(node->op_type, "Split") != 0 ||
        !pc_pass_can_modify(ctx->opts, node) || x->is_graph_output || x->n_subgraph_refs ||
        pc_value_single_consumer(x) != user)
        return NULL;
    for (uint32_t k = 0; k < node->n_outputs; k++) {
        const pc_value *y = node->outputs[k];
        if (y && y != x && pc_value_is_used(y) && !twin_user(ctx, y, perm, rank)) return NULL;
    }
    const tp_handler *h = tp_handler_find(node, ctx->opset);
    if (!h || !h->transposes_outputs) return NULL;
    *hp = h;
    return node;
}

/* Whether another consumer u of x (not `node`) ends in Transpose(perm) that will move above u once x has
 * Transpose(perm) to share: u passes pull_node's test, its output's users are that Transpose and at most
 * `node` (which reads the Transpose instead when it moves), and u's other carrying inputs are constants (of
 * full rank) or x. Returns that Transpose's cost rank, or -1. The credit lets one of two sibling moves go
 * first, although it alone only trades a Transpose for one on x. */
static int sibling_pull_rank(const tp_ctx *ctx, const pc_node *node, const pc_value *x, const int64_t *perm,
                             size_t rank)
{
    int best = -1;
    for (uint32_t k = 0; k < x->n_consumers; k++) {
        const pc_node *u = x->consumers[k].node;
        if (u == node || u->removed || u->graph != ctx->graph || u->n_outputs != 1 ||
            !pc_pass_can_modify(ctx->opts, u))
            continue;
        const tp_handler *h = tp_handler_find(u, ctx->opset);
        const pc_value *y = u->outputs[0];
        if (!h || !h->transposes_outputs || h->dropped_axes || strcmp(u->op_type, "Unsqueeze") == 0 ||
            strcmp(u->op_type, "Transpose") == 0 || (h->inputs == TP_IN_NONSCALAR && !link_will_push(h, u)) ||
            !y || y->is_graph_output || y->n_subgraph_refs)
            continue;
        const pc_node *tu = NULL;
        bool ok = true;
        for (uint32_t j = 0; j < y->n_consumers && ok; j++) {
            const pc_node *c = y->consumers[j].node;
            int64_t q[PC_MAX_RANK];
            size_t qr;
            if (c == node) continue;
            if (tu || c->removed || !pc_pass_can_modify(ctx->opts, c) || !tp_transpose_perm(c, q, &qr) ||
                qr != rank || !tp_perm_equal(q, perm, rank) || value_marked(ctx, c->outputs[0]))
                ok = false;
            else
                tu = c;
        }
        if (!ok || !tu) continue;
        for (uint32_t i = 0; i < u->n_inputs && ok; i++) {
            const pc_value *w = u->inputs[i];
            if (!tp_input_carries(h, w, i) || w == x) continue;
            ok = pc_value_const(w) && pc_value_rank(w) == (int32_t)rank;
        }
        int r = tp_value_cost_rank(tu->outputs[0]);
        if (ok && r > best) best = r;
    }
    return best;
}

/* Cost of making `node` read Transpose(perm) of its carrying inputs (its output then comes out transposed).
 * An input that would need a new Transpose may be cheaper when that Transpose in turn moves up through the
 * node making it (to a constant it folds into, a Transpose it cancels, a sibling it shares): up to `depth`
 * levels. */
static bool pull_inputs_settled(const tp_ctx *ctx, const pc_node *node, const tp_handler *h,
                                const int64_t *perm, size_t rank, bool again);

/* Whether node has exactly one non-constant carrying input (a move above it goes on along one path). */
static bool pull_link(const pc_node *node, const tp_handler *h)
{
    const pc_value *one = NULL;
    for (uint32_t i = 0; i < node->n_inputs; i++) {
        const pc_value *x = node->inputs[i];
        if (!tp_input_carries(h, x, i) || pc_value_const(x) || x == one) continue;
        if (one) return false;
        one = x;
    }
    return one != NULL;
}

static void pull_cost(const tp_ctx *ctx, const pc_node *node, const tp_handler *h, const int64_t *perm,
                      size_t rank, int depth, int *links, tp_cost *cost, bool *ok)
{
    for (uint32_t i = 0; i < node->n_inputs && *ok; i++) {
        const pc_value *x = node->inputs[i];
        if (!tp_input_carries(h, x, i)) continue;
        bool seen = false;
        for (uint32_t j = 0; j < i; j++)
            seen = seen || node->inputs[j] == x;
        if (seen) continue;
        int32_t r = pc_value_rank(x);
        if (r < 0 || (size_t)r > rank) {
            *ok = false;
            return;
        }
        /* a lower-rank input gets an Unsqueeze first (a new Transpose after it: counted as one) */
        if ((size_t)r < rank && !pc_value_const(x)) {
            cost_add(cost, tp_value_cost_rank(x), 1);
            continue;
        }
        tp_cost c = {0, 0};
        input_cost(ctx, node, x, perm, rank, &c);
        const tp_handler *ph;
        bool more = depth > 0 || *links > 0;
        const pc_node *p = more && c.count > 0 ? pull_node(ctx, x, node, NULL, 0, &ph) : NULL;
        /* one whose other readers merge the Transpose(perm^-1) left for them (as try_pull_up will allow) */
        if (!p && more && c.count > 0 && (p = pull_node(ctx, x, node, perm, rank, &ph)) != NULL &&
            !pull_inputs_settled(ctx, p, ph, perm, rank, true))
            p = NULL;
        bool twins = false;
        if (!p && more && c.count > 0) twins = (p = pull_split(ctx, x, node, perm, rank, &ph)) != NULL;
        /* a one-input link costs no depth (its own budget): the look-ahead follows whole chains */
        bool link = p && *links > 0 && pull_link(p, ph);
        if (p && !link && depth == 0) p = NULL;
        if (p) {
            tp_cost up = {0, 0};
            bool up_ok = true;
            /* through a Split: its twins go when the new Transpose on x moves above it in turn */
            for (uint32_t k = 0; twins && k < p->n_outputs; k++) {
                const pc_value *y = p->outputs[k];
                if (y && y != x && pc_value_is_used(y))
                    cost_add(&up, -tp_value_cost_rank(y->consumers[0].node->outputs[0]), -1);
            }
            if (link) --*links;
            pull_cost(ctx, p, ph, perm, rank, link ? depth : depth - 1, links, &up, &up_ok);
            if (up_ok && (up.rank < c.rank || (up.rank == c.rank && up.count < c.count))) c = up;
        }
        /* a new Transpose on x that a sibling's move up will share: that move removes the sibling's one */
        int sib = c.count > 0 ? sibling_pull_rank(ctx, node, x, perm, rank) : -1;
        if (sib >= 0 && (tp_value_cost_rank(x) - sib < c.rank ||
                         (tp_value_cost_rank(x) - sib == c.rank && 0 < c.count))) {
            c.rank = tp_value_cost_rank(x) - sib;
            c.count = 0;
        }
        cost_add(cost, c.rank, c.count);
    }
}

/* With merging readers (the move leaves Transpose(perm^-1) on the node's output), a Transpose the move puts
 * on an input must not be one a push through the node then removes: that push would merge its output
 * Transpose into the one left and undo the move round after round. Each carrying input must be a constant
 * (folded), made by a Transpose the move cancels, or have a sibling Transpose with this perm (reused; it has
 * other readers) (input_stays), or be made by a node whose inputs stay put, above which the new Transpose
 * moves at once (try_pull_up does). */
static bool input_stays(const tp_ctx *ctx, const pc_node *node, const pc_value *x, const int64_t *perm,
                        size_t rank)
{
    if (pc_value_const(x)) return true;
    int64_t q[PC_MAX_RANK], comp[PC_MAX_RANK];
    size_t qr;
    const pc_node *p = x->producer;
    if (p && tp_transpose_perm(p, q, &qr) && qr == rank && pc_pass_can_modify(ctx->opts, p)) {
        tp_perm_compose(q, perm, rank, comp);
        return tp_perm_is_identity(comp, rank);
    }
    for (uint32_t k = 0; k < x->n_consumers; k++) {
        const pc_node *u = x->consumers[k].node;
        if (u != node && !u->removed && u->graph == ctx->graph && x->consumers[k].index == 0 &&
            pc_pass_can_modify(ctx->opts, u) && tp_transpose_perm(u, q, &qr) && qr == rank &&
            tp_perm_equal(q, perm, rank))
            return true;
    }
    return false;
}

static bool pull_inputs_settled(const tp_ctx *ctx, const pc_node *node, const tp_handler *h,
                                const int64_t *perm, size_t rank, bool again)
{
    for (uint32_t i = 0; i < node->n_inputs; i++) {
        const pc_value *x = node->inputs[i];
        if (!tp_input_carries(h, x, i)) continue;
        if (pc_value_const(x)) continue;
        if (pc_value_rank(x) != (int32_t)rank) return false;
        if (input_stays(ctx, node, x, perm, rank)) continue;
        /* made by a node whose carrying inputs all stay put: the move goes on above it at once */
        const tp_handler *ph;
        const pc_node *pn = again ? pull_node(ctx, x, node, NULL, 0, &ph) : NULL;
        if (!pn || !pull_inputs_settled(ctx, pn, ph, perm, rank, false)) return false;
    }
    return true;
}

/* Moves Transpose t (perm) above the node that makes its input when that strictly lowers the cost: the node
 * then reads Transpose(perm) of each carrying input (a constant permuted, a producing Transpose cancelled or
 * composed, a sibling Transpose reused) and writes t's output itself. The reverse of a push, for a Transpose
 * that only a move up can fold, cancel or share (ORT has no such move). */
static pc_status try_pull_up(tp_ctx *ctx, pc_node *t, const int64_t *perm, size_t rank, bool *done)
{
    *done = false;
    /* a Transpose flowing on into another one is the push's to move: the push costs it nothing there (ORT's
     * outputs-leading-to-transpose rule), so moving it back up would undo the push round after round */
    const tp_handler *h0;
    const pc_node *n0 = pull_node(ctx, t->inputs[0], t, NULL, 0, &h0);
    if (value_marked(ctx, t->outputs[0]) && !(n0 && const_fed(n0, h0))) return PC_OK;
    /* likewise one that a push takes into a Squeeze (through elementwise ops) with nothing after it */
    const pc_value *tout = t->outputs[0];
    int64_t inv0[PC_MAX_RANK];
    tp_perm_invert(perm, rank, inv0);
    if (tout->id < ctx->n_marks && ctx->cancel_at[tout->id] &&
        squeeze_absorbs(ctx, ctx->cancel_at[tout->id], perm, inv0, rank))
        return PC_OK;
    const tp_handler *h;
    pc_node *node = pull_node(ctx, t->inputs[0], t, perm, rank, &h);
    tp_cost cost = {-tp_value_cost_rank(t->outputs[0]), -1}; /* t goes */
    bool split_twins = false;
    if (!node && (node = pull_split(ctx, t->inputs[0], t, perm, rank, &h)) != NULL) {
        /* the twins on the Split's other outputs go too */
        split_twins = true;
        for (uint32_t k = 0; k < node->n_outputs; k++) {
            const pc_value *y = node->outputs[k];
            if (y && y != t->inputs[0] && pc_value_is_used(y))
                cost_add(&cost, -tp_value_cost_rank(y->consumers[0].node->outputs[0]), -1);
        }
    }
    if (!node) return PC_OK;
    bool merging = false;
    for (uint32_t k = 0; k < t->inputs[0]->n_consumers; k++)
        merging =
            merging || (t->inputs[0]->consumers[k].node != t && !any_layout_reader(ctx, t->inputs[0], k));
    if (merging && !pull_inputs_settled(ctx, node, h, perm, rank, true)) return PC_OK;
    bool ok = true;
    int links = TP_PULL_LINKS;
    pull_cost(ctx, node, h, perm, rank, TP_PULL_DEPTH, &links, &cost, &ok);
    if (!ok || !cost_negative(cost)) {
        pc_pass_near_miss(ctx->opts, PC_RW_TP_MOVED_UP, ok ? PC_MISS_COST : PC_MISS_OTHER);
        return PC_OK;
    }
    uint32_t small[PC_MAX_RANK], *carry, n_carry;
    pc_status cs = carry_list(ctx, node, h, small, &carry, &n_carry);
    if (cs != PC_OK) return cs;
    /* the node's push of perm^-1 puts Transpose(perm) on its inputs and Transpose(perm^-1) on its output,
     * which t then cancels */
    int64_t inv[PC_MAX_RANK];
    tp_perm_invert(perm, rank, inv);
    tp_push push = {ctx, node, inv, perm, rank, n_carry, carry, NULL};
    const char *tname = t->name, *nname = node->name, *op = node->op_type;
    /* the twins' input values: after the push each is made by a Transpose(perm^-1) that its twin cancels */
    pc_value *small_ys[PC_MAX_RANK], **ys = small_ys;
    uint32_t n_ys = 0;
    if (split_twins && node->n_outputs > PC_MAX_RANK) {
        ys = malloc(node->n_outputs * sizeof *ys);
        if (!ys) {
            carry_free(carry, small);
            return pc_error_set(ctx->err, PC_ERR_NOMEM, "node '%s': outputs", node->name);
        }
    }
    for (uint32_t k = 0; split_twins && k < node->n_outputs; k++)
        if (node->outputs[k] && node->outputs[k] != t->inputs[0] && pc_value_is_used(node->outputs[k]))
            ys[n_ys++] = node->outputs[k];
    pc_status st = h->fn(&push, done);
    if (st == PC_OK && *done) {
        ctx->changed = true;
        pc_pass_explain(ctx->opts, "moved Transpose '%s' above %s '%s'", tname, op, nname);
        pc_pass_note(ctx->opts, PC_RW_TP_MOVED_UP);
        int64_t q[PC_MAX_RANK];
        size_t qr;
        pc_node *back = t->inputs[0]->producer; /* Transpose(perm^-1) the push added */
        if (back && tp_transpose_perm(back, q, &qr) && qr == rank) {
            /* readers that take any layout (pull_node let them) read the node's output directly */
            pc_value *tin = t->inputs[0];
            for (uint32_t k = tin->n_consumers; k-- > 0 && st == PC_OK;) {
                pc_node *u = tin->consumers[k].node;
                if (u != t && any_layout_reader(ctx, tin, k))
                    st = pc_node_set_input(u, tin->consumers[k].index, back->inputs[0], ctx->err);
            }
        }
        /* merging readers (pull_node let them) keep reading back, which they take for free */
        if (st == PC_OK && back && tp_transpose_perm(back, q, &qr) && qr == rank) {
            if ((st = pc_node_set_input(t, 0, back->inputs[0], ctx->err)) == PC_OK &&
                (st = tp_remove_if_dead(ctx, back)) == PC_OK)
                st = tp_replace_by_input(ctx, t);
        }
        /* a new Transpose put on an input moves on at once when that lowers the cost: with merging readers,
         * one above a node of constants must (pull_inputs_settled: left there, a push through the node would
         * undo the move), and a chain the look-ahead followed is moved up whole in this round (one link per
         * round could outlast the rounds and leave it halfway) */
        for (uint32_t k = 0; k < n_carry && st == PC_OK; k++) {
            pc_value *x = node->inputs[carry[k]];
            pc_node *nt = x ? x->producer : NULL;
            bool moved;
            if (nt && !nt->removed && tp_transpose_perm(nt, q, &qr) && qr == rank &&
                tp_perm_equal(q, perm, rank) && pc_value_single_consumer(x) == node)
                st = try_pull_up(ctx, nt, perm, rank, &moved);
        }
        for (uint32_t k = 0; k < n_ys && st == PC_OK; k++) {
            pc_node *twin = ys[k]->n_consumers == 1 ? ys[k]->consumers[0].node : NULL;
            back = ys[k]->producer;
            if (!twin || !back || !tp_transpose_perm(back, q, &qr) || qr != rank) continue;
            if ((st = pc_node_set_input(twin, 0, back->inputs[0], ctx->err)) == PC_OK &&
                (st = tp_remove_if_dead(ctx, back)) == PC_OK)
                st = tp_replace_by_input(ctx, twin);
        }
    }
    if (ys != small_ys) free(ys);
    carry_free(carry, small);
    return st;
}

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
 * output), which keeps n's output name and copies instead of permuting. */
static pc_status merge_twin(tp_ctx *ctx, pc_node *n, pc_node *twin)
{
    pc_status st;
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

/* Pass 2: forward walk over the nodes as they were at the start of the round. */
static pc_status push_and_cancel(tp_ctx *ctx, pc_node **nodes, uint32_t n_nodes)
{
    int64_t perm[PC_MAX_RANK];
    size_t r;
    bool fault_skipped = false; /* --inject transpose-skip-cancel: the walk's first T -> T^-1 pair stays */
    for (uint32_t k = 0; k < n_nodes; k++) {
        pc_node *n = nodes[k];
        if (n->removed || !pc_pass_can_modify(ctx->opts, n)) continue;
        if (ctx->cleanup_only && strcmp(n->op_type, "Transpose") != 0) continue;
        pc_status st;
        if (tp_transpose_perm(n, perm, &r) &&
            (tp_perm_is_identity(perm, r) || tp_perm_moves_unit_axes_only(n->inputs[0], perm, r))) {
            const char *name = n->name;
            bool identity = tp_perm_is_identity(perm, r);
            if ((st = tp_replace_by_input(ctx, n)) != PC_OK) return st;
            ctx->changed = true;
            pc_pass_note(ctx->opts, PC_RW_TP_IDENTITY_REMOVED);
            pc_pass_explain(ctx->opts,
                            identity
                                ? "removed identity Transpose '%s'"
                                : "removed Transpose '%s' (it moves only size-1 axes: a no-op on the data)",
                            name);
            continue;
        }
        if (tp_transpose_perm(n, perm, &r) && pc_value_const(n->inputs[0])) {
            const char *name = n->name;
            bool folded;
            if ((st = tp_fold_const_transpose(ctx, n, perm, r, &folded)) != PC_OK) return st;
            if (folded) {
                ctx->changed = true;
                pc_pass_explain(ctx->opts, "folded Transpose '%s' of a constant", name);
                pc_pass_note(ctx->opts, PC_RW_TP_CONST_FOLDED);
                continue;
            }
        }
        pc_node *twin = tp_transpose_perm(n, perm, &r) ? twin_transpose(ctx, n, perm, r) : NULL;
        if (twin) {
            /* the same perm on the same value twice (converters emit one per branch): keep the first */
            const char *name = n->name;
            if ((st = merge_twin(ctx, n, twin)) != PC_OK) return st;
            ctx->changed = true;
            pc_pass_explain(ctx->opts, "merged duplicate Transpose '%s' into '%s'", name, twin->name);
            pc_pass_note(ctx->opts, PC_RW_TP_TWIN_MERGED);
            continue;
        }
        if (!ctx->cleanup_only && tp_transpose_perm(n, perm, &r)) {
            bool pulled;
            if ((st = try_pull_up(ctx, n, perm, r, &pulled)) != PC_OK) return st;
            if (pulled) continue;
        }
        for (uint32_t i = 0; i < n->n_inputs; i++) {
            pc_value *v = n->inputs[i];
            pc_node *t = v ? v->producer : NULL;
            /* a Transpose of another EP is not this run's to remove or edit */
            if (!t || t->graph != ctx->graph || !pc_pass_can_modify(ctx->opts, t) ||
                !tp_transpose_perm(t, perm, &r))
                continue;
            if (pc_fault_active(PC_FAULT_SKIP_CANCEL) && !fault_skipped) {
                int64_t q[PC_MAX_RANK], c[PC_MAX_RANK];
                size_t qr;
                if (tp_transpose_perm(n, q, &qr) && qr == r) {
                    tp_perm_compose(perm, q, r, c);
                    if (tp_perm_is_identity(c, r)) {
                        fault_skipped = true;
                        continue;
                    }
                }
            }
            bool done;
            if ((st = try_push(ctx, n, i, t, perm, r, &done)) != PC_OK) return st;
            if (done) break;
        }
    }
    return PC_OK;
}

static pc_status run_rounds(tp_ctx *ctx)
{
    pc_graph *g = ctx->graph;
    pc_status st = PC_OK;
    pc_node **nodes = NULL;
    bool any = false;
    for (int round = 0; round < TP_MAX_ROUNDS; round++) {
        /* the marks and the node list are per round: values and nodes made during it are not in them */
        free(ctx->leads_to_transpose);
        free(ctx->cancel_at);
        free(nodes);
        ctx->n_marks = g->n_values;
        ctx->leads_to_transpose = calloc(ctx->n_marks ? ctx->n_marks : 1, 1);
        ctx->cancel_at = calloc(ctx->n_marks ? ctx->n_marks : 1, sizeof *ctx->cancel_at);
        nodes = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *nodes);
        if (!ctx->leads_to_transpose || !ctx->cancel_at || !nodes) {
            st = pc_error_set(ctx->err, PC_ERR_NOMEM, "transpose optimizer: work arrays for %u values",
                              g->n_values);
            break;
        }
        uint32_t n_nodes = 0;
        for (pc_node *n = g->first; n; n = n->next)
            nodes[n_nodes++] = n;
        ctx->changed = false;
        /* the layout rule pushes regardless of cost, so it gets one walk only (as ORT's single walk): later
         * rounds use the strict-decrease rule, which cannot toggle a Transpose back and forth */
        ctx->layout_push = round == 0 && ctx->opts && ctx->opts->layout_cost_check;
        mark_outputs_leading_to_transpose(ctx);
        if ((st = push_and_cancel(ctx, nodes, n_nodes)) != PC_OK) break;
        if (!ctx->changed) break;
        any = true;
        if ((st = pc_graph_sort(g, ctx->err)) != PC_OK) break;
    }
    free(ctx->leads_to_transpose);
    free(ctx->cancel_at);
    free(nodes);
    ctx->leads_to_transpose = NULL;
    ctx->cancel_at = NULL;
    ctx->changed = any;
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
    pc_node **nodes = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *nodes);
    if (!nodes)
        return pc_error_set(ctx->err, PC_ERR_NOMEM, "transpose optimizer: node list of %u nodes", g->n_nodes);
    uint32_t n_nodes = 0;
    for (pc_node *n = g->first; n; n = n->next)
        nodes[n_nodes++] = n;
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
    free(nodes);
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
    tp_ctx ctx = {.graph = graph, .opts = opts, .opset = opset, .err = err};
    pc_status st;
    if (opts && opts->transpose_plan) {
        /* plan, solve, apply; then the rounds only merge, cancel and fold what the pushes left */
        bool planned = false;
        st = tp_plan_run(&ctx, &planned);
        if (st == PC_OK && planned) st = pc_graph_sort(graph, err);
        ctx.cleanup_only = true;
        if (st == PC_OK) st = run_rounds(&ctx);
        ctx.changed = ctx.changed || planned;
    } else {
        st = run_rounds(&ctx);
    }
    if (st == PC_OK) {
        bool rounds_changed = ctx.changed;
        st = reshape_unit_transposes(&ctx);
        ctx.changed = ctx.changed || rounds_changed;
    }
    free(ctx.region_in);
    free(ctx.region_member);
    free(ctx.region_members);
    free(ctx.region_work);
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
