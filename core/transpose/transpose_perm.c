/* Perm arithmetic and the graph edits shared by the transpose optimizer's handlers (transpose_internal.h). */
#include <string.h>

#include "core/base/strmap.h"
#include "core/transpose/transpose_internal.h"

bool tp_perm_valid(const int64_t *perm, size_t rank)
{
    bool seen[PC_MAX_RANK] = {false};
    if (rank > PC_MAX_RANK) return false;
    for (size_t i = 0; i < rank; i++) {
        if (perm[i] < 0 || perm[i] >= (int64_t)rank || seen[perm[i]]) return false;
        seen[perm[i]] = true;
    }
    return true;
}

bool tp_perm_is_identity(const int64_t *perm, size_t rank)
{
    for (size_t i = 0; i < rank; i++)
        if (perm[i] != (int64_t)i) return false;
    return true;
}

void tp_perm_invert(const int64_t *perm, size_t rank, int64_t *out)
{
    for (size_t i = 0; i < rank; i++)
        out[perm[i]] = (int64_t)i;
}

void tp_perm_compose(const int64_t *first, const int64_t *second, size_t rank, int64_t *out)
{
    for (size_t i = 0; i < rank; i++)
        out[i] = first[second[i]];
}

bool tp_perm_equal(const int64_t *a, const int64_t *b, size_t rank)
{
    return memcmp(a, b, rank * sizeof *a) == 0;
}

bool tp_transpose_perm(const pc_node *node, int64_t *perm, size_t *rank)
{
    if (!pc_name_eq(node->op_type, "Transpose") || node->domain[0] || node->n_inputs < 1 ||
        !node->inputs[0] || node->n_outputs < 1 || !node->outputs[0])
        return false;
    int32_t in_rank = pc_value_rank(node->inputs[0]);
    const pc_attr *a = pc_node_attr(node, "perm");
    size_t r;
    if (!a) {
        /* default: reverse the dims, which needs the rank */
        if (in_rank < 0) return false;
        r = (size_t)in_rank;
        for (size_t i = 0; i < r; i++)
            perm[i] = (int64_t)(r - 1 - i);
    } else {
        if (a->type != PC_ATTR_INTS || a->n > PC_MAX_RANK) return false;
        r = a->n;
        if (r) memcpy(perm, a->ints, r * sizeof *perm);
    }
    if (!tp_perm_valid(perm, r) || (in_rank >= 0 && (size_t)in_rank != r)) return false;
    *rank = r;
    return true;
}

size_t tp_perm_squeeze(const int64_t *perm, size_t rank, const bool *removed_out, int64_t *out)
{
    /* removed_out flags axes of the transposed value; in the source they are perm[i]. Renumber what is left.
     */
    bool removed_src[PC_MAX_RANK] = {false};
    int64_t shift[PC_MAX_RANK];
    for (size_t i = 0; i < rank; i++)
        if (removed_out[i]) removed_src[perm[i]] = true;
    int64_t k = 0;
    for (size_t j = 0; j < rank; j++) {
        shift[j] = k;
        if (!removed_src[j]) k++;
    }
    size_t n = 0;
    for (size_t i = 0; i < rank; i++)
        if (!removed_out[i]) out[n++] = shift[perm[i]];
    return n;
}

void tp_perm_unsqueeze(const int64_t *perm, size_t rank, const bool *inserted, size_t out_rank, int64_t *out)
{
    /* the kept positions o_0 < o_1 < ... hold the source dims in order; o_j takes o_{perm[j]} */
    int64_t kept[PC_MAX_RANK];
    size_t n = 0;
    for (size_t i = 0; i < out_rank; i++)
        if (!inserted[i]) kept[n++] = (int64_t)i;
    (void)rank;
    for (size_t i = 0; i < out_rank; i++)
        out[i] = (int64_t)i;
    for (size_t j = 0; j < n; j++)
        out[kept[j]] = kept[perm[j]];
}

bool tp_perm_moves_unit_axes_only(const pc_value *in, const int64_t *perm, size_t rank)
{
    int64_t dims[PC_MAX_RANK];
    if (pc_value_rank(in) != (int32_t)rank || !pc_value_dims(in, dims)) return false;
    for (size_t i = 0; i < rank; i++)
        if (perm[i] != (int64_t)i && (dims[i] != 1 || dims[perm[i]] != 1)) return false;
    return true;
}

bool tp_perm_is_channel_move(const int64_t *perm, size_t rank)
{
    if (rank < 3 || perm[0] != 0) return false;
    bool first_to_last = perm[rank - 1] == 1, last_to_first = perm[1] == (int64_t)rank - 1;
    for (size_t i = 1; i + 1 < rank; i++)
        first_to_last = first_to_last && perm[i] == (int64_t)i + 1;
    for (size_t i = 2; i < rank; i++)
        last_to_first = last_to_first && perm[i] == (int64_t)i - 1;
    return first_to_last || last_to_first;
}

int tp_value_cost_rank(const pc_value *v)
{
    if (!v || v->type.kind != PC_TYPE_TENSOR || v->type.shape.rank < 0) return 5;
    int n = 0;
    for (int32_t i = 0; i < v->type.shape.rank; i++) {
        const pc_dim *d = &v->type.shape.dims[i];
        if (!(d->kind == PC_DIM_KNOWN && d->size == 1)) n++;
    }
    return n;
}

pc_status tp_set_permuted_type(pc_value *dst, const pc_value *src, const int64_t *perm, size_t rank,
                               pc_error *err)
{
    if (src->type.kind != PC_TYPE_TENSOR) return PC_OK;
    pc_dim dims[PC_MAX_RANK];
    pc_type t = src->type;
    if (t.shape.rank >= 0 && (size_t)t.shape.rank == rank) {
        for (size_t i = 0; i < rank; i++)
            dims[i] = src->type.shape.dims[perm[i]];
        t.shape.dims = dims;
    } else {
        t.shape.rank = -1;
        t.shape.dims = NULL;
    }
    /* the saved model declares what the optimizer knew (as pc_graph_move_output does): re-inferred from a
     * reload, a shape can come out unknown (a Squeeze without axes of a symbolic dim), and the plan's
     * tie-break on ORT's metric would then see another cost and move again (suite seed 6, case 24982:
     * idempotence) */
    if (t.shape.rank >= 0 && !dst->is_graph_output) dst->has_value_info = true;
    return pc_value_set_type(dst, &t, err);
}

static pc_status set_type_dims(pc_value *v, pc_dtype dtype, int32_t rank, const int64_t *dims, pc_error *err)
{
    pc_dim d[PC_MAX_RANK];
    memset(d, 0, sizeof d);
    for (int32_t i = 0; i < rank; i++) {
        d[i].kind = PC_DIM_KNOWN;
        d[i].size = dims[i];
    }
    pc_type t = {0};
    t.kind = PC_TYPE_TENSOR;
    t.elem = dtype;
    t.shape.rank = rank;
    t.shape.dims = rank ? d : NULL;
    return pc_value_set_type(v, &t, err);
}

static bool tensor_bytewise(const pc_tensor *t)
{
    unsigned bits = pc_dtype_bits(t->dtype);
    return t->dtype != PC_DTYPE_STRING && bits && bits % 8 == 0;
}

/* A new tensor holding t permuted by perm. */
static pc_tensor *tensor_permute(pc_model *m, const pc_tensor *t, const int64_t *perm, size_t rank,
                                 pc_error *err)
{
    int64_t od[PC_MAX_RANK] = {0}, in_stride[PC_MAX_RANK], idx[PC_MAX_RANK] = {0};
    for (size_t i = 0; i < rank; i++)
        od[i] = t->dims[perm[i]];
    pc_tensor *o = pc_tensor_create(m, t->name, t->dtype, (int32_t)rank, od, err);
    if (!o) return NULL;
    size_t esz = pc_dtype_bits(t->dtype) / 8;
    int64_t s = 1;
    for (size_t i = rank; i-- > 0;) {
        in_stride[i] = s;
        s *= t->dims[i];
    }
    const uint8_t *src = t->data;
    uint8_t *dst = o->data;
    for (uint64_t k = 0; k < t->n_elements; k++) {
        int64_t off = 0;
        for (size_t i = 0; i < rank; i++)
            off += idx[i] * in_stride[perm[i]];
        memcpy(dst + k * esz, src + (size_t)off * esz, esz);
        for (size_t i = rank; i-- > 0;) {
            if (++idx[i] < od[i]) break;
            idx[i] = 0;
        }
    }
    return o;
}

/* Installs tensor nt as node input i in place of constant v: v itself when node is its only consumer,
 * otherwise a new initializer (a shared initializer is never edited). */
static pc_status install_const(tp_ctx *ctx, pc_node *node, uint32_t i, pc_value *v, pc_tensor *nt)
{
    if (v && v->initializer && pc_value_const(v) && pc_value_single_consumer(v) == node) {
        pc_status st = pc_graph_replace_initializer(v, nt, ctx->err);
        if (st != PC_OK) return st;
        return set_type_dims(v, nt->dtype, nt->rank, nt->dims, ctx->err);
    }
    pc_value *nv = pc_pass_add_initializer(ctx->graph, v ? v->name : node->op_type, nt, ctx->err);
    if (!nv) return ctx->err->status;
    while (node->n_inputs <= i) {
        pc_status st = pc_node_add_input(node, NULL, ctx->err);
        if (st != PC_OK) return st;
    }
    pc_status st = pc_node_set_input(node, i, nv, ctx->err);
    if (st != PC_OK) return st;
    if (v && v->initializer && !pc_value_is_used(v) && !v->is_graph_input)
        return pc_graph_remove_initializer(ctx->graph, v, ctx->err);
    return PC_OK;
}

static pc_status set_perm_attr(tp_ctx *ctx, pc_node *t, const int64_t *perm, size_t rank)
{
    return pc_node_set_attr_ints(t, "perm", rank, perm, ctx->err);
}

/* Folds Transpose(constant) into a permuted copy of the constant: the layout transformer wraps every input of
 * a node it moves, constant data inputs included, and no constant folding runs after partitioning. */
pc_status tp_fold_const_transpose(tp_ctx *ctx, pc_node *t, const int64_t *perm, size_t rank, bool *done)
{
    *done = false;
    pc_value *x = t->inputs[0], *y = t->outputs[0];
    const pc_tensor *xt = x ? pc_value_const(x) : NULL;
    if (!xt || !tensor_bytewise(xt) || (size_t)xt->rank != rank || y->is_graph_output || y->n_subgraph_refs)
        return PC_OK;
    pc_tensor *nt = tensor_permute(ctx->graph->model, xt, perm, rank, ctx->err);
    if (!nt) return ctx->err->status;
    pc_value *nv = pc_pass_add_initializer(ctx->graph, x->name, nt, ctx->err);
    if (!nv) return ctx->err->status;
    pc_status st = pc_value_replace_uses(y, nv);
    if (st != PC_OK) return pc_error_set(ctx->err, st, "rewiring uses of '%s'", y->name);
    if ((st = tp_remove_if_dead(ctx, t)) != PC_OK) return st;
    if (x->initializer && !pc_value_is_used(x) && !x->is_graph_input && !x->is_graph_output &&
        (st = pc_graph_remove_initializer(ctx->graph, x, ctx->err)) != PC_OK)
        return st;
    *done = true;
    return PC_OK;
}

pc_status tp_remove_if_dead(tp_ctx *ctx, pc_node *node)
{
    if (!node || node->removed) return PC_OK;
    for (uint32_t i = 0; i < node->n_outputs; i++)
        if (node->outputs[i] && pc_value_is_used(node->outputs[i])) return PC_OK;
    return pc_pass_remove_dead(ctx->graph, node, ctx->err);
}

bool tp_axis_normalize(int64_t axis, size_t rank, int64_t *out)
{
    if (axis < 0) axis += (int64_t)rank;
    if (axis < 0 || axis >= (int64_t)rank) return false;
    *out = axis;
    return true;
}

bool tp_const_ints(const pc_node *node, uint32_t i, int64_t *out, size_t *n, pc_dtype *dtype)
{
    if (i >= node->n_inputs || !node->inputs[i]) return false;
    const pc_tensor *t = pc_value_const(node->inputs[i]);
    if (!t || t->rank > 1) return false;
    if (dtype) *dtype = t->dtype;
    return pc_tensor_read_ints(t, out, PC_MAX_RANK, n);
}

bool tp_qdq_kind(tp_ctx *ctx, const pc_node *node, bool *per_axis)
{
    if (pc_node_attr_int(node, "block_size", 0) != 0)
        return false; /* blocked quantization: never rewritten */
    if (node->n_inputs < 2 || !node->inputs[1]) return false;
    const pc_value *scale = node->inputs[1];
    const pc_tensor *t = pc_value_const(scale);
    int32_t r = t ? t->rank : pc_value_rank(scale);
    if (r == 0) {
        *per_axis = false;
        return true;
    }
    if (r == 1 && ctx->opset >= 13) {
        *per_axis = true;
        return true;
    }
    return false;
}

/* The DQ behind a constant (single consumer, not blocked) when input v is one; NULL otherwise. */
static pc_node *const_dq(tp_ctx *ctx, const pc_node *node, const pc_value *v, size_t rank)
{
    pc_node *dq = v->producer;
    if (!dq || strcmp(dq->op_type, "DequantizeLinear") != 0 || dq->domain[0] ||
        pc_value_single_consumer(v) != node || !pc_pass_can_modify(ctx->opts, dq) || dq->n_inputs < 1 ||
        !dq->inputs[0])
        return NULL;
    const pc_tensor *t = pc_value_const(dq->inputs[0]);
    bool per_axis;
    if (!t || t->rank != (int32_t)rank || !tensor_bytewise(t) || !tp_qdq_kind(ctx, dq, &per_axis))
        return NULL;
    int64_t axis;
    if (per_axis && !tp_axis_normalize(pc_node_attr_int(dq, "axis", 1), rank, &axis)) return NULL;
    return dq;
}

pc_status tp_transpose_input(tp_ctx *ctx, pc_node *node, uint32_t i, const int64_t *perm, size_t rank)
{
    pc_value *v = node->inputs[i];
    pc_graph *g = ctx->graph;
    pc_status st;
    if (tp_perm_is_identity(perm, rank)) return PC_OK;
    /* 1. a constant: permute its data */
    const pc_tensor *t = pc_value_const(v);
    if (t && t->rank == (int32_t)rank && tensor_bytewise(t)) {
        bool all_ones = true;
        for (size_t k = 0; k < rank; k++)
            all_ones = all_ones && t->dims[k] == 1;
        if (all_ones) return PC_OK;
        pc_tensor *nt = tensor_permute(g->model, t, perm, rank, ctx->err);
        if (!nt) return ctx->err->status;
        return install_const(ctx, node, i, v, nt);
    }
    /* 1b. a constant behind a DQ: permute the constant, remap a per-axis axis (axis a of x is perm_inv[a]
     * after) */
    pc_node *dq = const_dq(ctx, node, v, rank);
    if (dq) {
        bool per_axis = false;
        tp_qdq_kind(ctx, dq, &per_axis);
        int64_t axis = 0, inv[PC_MAX_RANK];
        tp_perm_invert(perm, rank, inv);
        if ((st = tp_transpose_input(ctx, dq, 0, perm, rank)) != PC_OK) return st;
        if (per_axis && tp_axis_normalize(pc_node_attr_int(dq, "axis", 1), rank, &axis) &&
            (st = pc_node_set_attr_int(dq, "axis", inv[axis], ctx->err)) != PC_OK)
            return st;
        return tp_set_permuted_type(v, v, perm, rank, ctx->err);
    }
    /* 2. produced by a Transpose: cancel or compose */
    int64_t q[PC_MAX_RANK], c[PC_MAX_RANK];
    size_t qr;
    pc_node *p = v->producer;
    if (p && tp_transpose_perm(p, q, &qr) && qr == rank && pc_pass_can_modify(ctx->opts, p)) {
        tp_perm_compose(q, perm, rank, c);
        pc_value *a = p->inputs[0];
        if (tp_perm_is_identity(c, rank)) {
            if ((st = pc_node_set_input(node, i, a, ctx->err)) != PC_OK) return st;
            return tp_remove_if_dead(ctx, p);
        }
        if (pc_value_single_consumer(v) == node && pc_pass_can_modify(ctx->opts, p)) {
            if ((st = set_perm_attr(ctx, p, c, rank)) != PC_OK) return st;
            return tp_set_permuted_type(v, a, c, rank, ctx->err);
        }
        pc_node *nt = pc_pass_add_node(g, ctx->opts, "Transpose", "", 1, &a, 1, node, ctx->err);
        if (!nt) return ctx->err->status;
        if ((st = set_perm_attr(ctx, nt, c, rank)) != PC_OK ||
            (st = tp_set_permuted_type(nt->outputs[0], a, c, rank, ctx->err)) != PC_OK ||
            (st = pc_node_set_input(node, i, nt->outputs[0], ctx->err)) != PC_OK)
            return st;
        return tp_remove_if_dead(ctx, p);
    }
    /* 3. a sibling Transpose with the same perm */
    for (uint32_t k = 0; k < v->n_consumers; k++) {
        pc_node *u = v->consumers[k].node;
        size_t ur;
        if (u != node && !u->removed && v->consumers[k].index == 0 && pc_pass_can_modify(ctx->opts, u) &&
            tp_transpose_perm(u, q, &ur) && ur == rank && tp_perm_equal(q, perm, rank) && u->graph == g)
            return pc_node_set_input(node, i, u->outputs[0], ctx->err);
    }
    /* 4. a new Transpose */
    pc_node *nt = pc_pass_add_node(g, ctx->opts, "Transpose", "", 1, &v, 1, node, ctx->err);
    if (!nt) return ctx->err->status;
    if ((st = set_perm_attr(ctx, nt, perm, rank)) != PC_OK ||
        (st = tp_set_permuted_type(nt->outputs[0], v, perm, rank, ctx->err)) != PC_OK)
        return st;
    return pc_node_set_input(node, i, nt->outputs[0], ctx->err);
}

pc_status tp_transpose_output(tp_ctx *ctx, pc_node *node, uint32_t out, const int64_t *perm, size_t rank)
{
    pc_value *v = node->outputs[out];
    if (!v || tp_perm_is_identity(perm, rank)) return PC_OK;
    pc_status st;
    int64_t inv[PC_MAX_RANK];
    tp_perm_invert(perm, rank, inv);
    /* an unused output (a Split's) needs no Transpose: only its type changes */
    if (!pc_value_is_used(v)) return tp_set_permuted_type(v, v, inv, rank, ctx->err);
    pc_node *t = pc_pass_add_node(ctx->graph, ctx->opts, "Transpose", "", 1, &v, 1, node, ctx->err);
    if (!t) return ctx->err->status;
    pc_value *fresh = t->outputs[0];
    /* the Transpose takes over v (name, consumers, graph-output role); the node now writes `fresh` */
    if ((st = pc_graph_move_output(node, out, t, 0)) != PC_OK)
        return pc_error_set(ctx->err, st, "node '%s': cannot move output %u", node->name, out);
    if ((st = pc_node_set_input(t, 0, fresh, ctx->err)) != PC_OK ||
        (st = set_perm_attr(ctx, t, perm, rank)) != PC_OK)
        return st;
    return tp_set_permuted_type(fresh, v, inv, rank, ctx->err);
}

pc_status tp_transpose_outputs(tp_ctx *ctx, pc_node *node, const int64_t *perm, size_t rank)
{
    for (uint32_t k = 0; k < node->n_outputs; k++) {
        pc_status st = tp_transpose_output(ctx, node, k, perm, rank);
        if (st != PC_OK) return st;
    }
    return PC_OK;
}

bool tp_can_add(tp_ctx *ctx, const pc_node *source, const char *op_type, pc_dtype first_input)
{
    const pc_pass_options *o = ctx->opts;
    if (!o || !o->ep || o->new_nodes_unassigned || !source->ep) return true;
    return pc_ep_claims_new_node(o->ep, ctx->graph, op_type, first_input);
}

bool tp_unsqueeze_adds_node(tp_ctx *ctx, const pc_node *node, uint32_t i)
{
    const pc_value *v = node->inputs[i];
    const pc_tensor *t = pc_value_const(v);
    int32_t r = t ? t->rank : pc_value_rank(v);
    if (t && tensor_bytewise(t)) return false;
    return r < 0 || !const_dq(ctx, node, v, (size_t)r);
}

pc_status tp_unsqueeze_input(tp_ctx *ctx, pc_node *node, uint32_t i, size_t n_lead)
{
    pc_value *v = node->inputs[i];
    int32_t r = pc_value_rank(v);
    const pc_tensor *t = pc_value_const(v);
    pc_status st;
    if (!n_lead) return PC_OK;
    if (t) r = t->rank;
    if (r < 0 || (size_t)r + n_lead > PC_MAX_RANK)
        return pc_error_set(ctx->err, PC_ERR_INTERNAL, "node '%s': input %u has no usable rank", node->name,
                            i);
    int64_t dims[PC_MAX_RANK], axes[PC_MAX_RANK];
    for (size_t k = 0; k < n_lead; k++) {
        dims[k] = 1;
        axes[k] = (int64_t)k;
    }
    if (t && tensor_bytewise(t)) {
        for (int32_t k = 0; k < r; k++)
            dims[n_lead + (size_t)k] = t->dims[k];
        pc_tensor *nt =
            pc_tensor_create(ctx->graph->model, t->name, t->dtype, r + (int32_t)n_lead, dims, ctx->err);
        if (!nt) return ctx->err->status;
        if (t->n_bytes) memcpy(nt->data, t->data, t->n_bytes);
        return install_const(ctx, node, i, v, nt);
    }
    /* a constant behind a DQ: reshape the constant and shift a per-axis axis, so the input stays DQ(constant)
     * and a Transpose after folds into it too (an Unsqueeze node would block that, as ORT's leaves none) */
    pc_node *dq = const_dq(ctx, node, v, (size_t)r);
    if (dq) {
        bool per_axis = false;
        int64_t axis = 0;
        tp_qdq_kind(ctx, dq, &per_axis);
        if (per_axis && !tp_axis_normalize(pc_node_attr_int(dq, "axis", 1), (size_t)r, &axis))
            return pc_error_set(ctx->err, PC_ERR_INTERNAL, "node '%s': axis checked by const_dq", dq->name);
        if ((st = tp_unsqueeze_input(ctx, dq, 0, n_lead)) != PC_OK) return st;
        if (per_axis && (st = pc_node_set_attr_int(dq, "axis", axis + (int64_t)n_lead, ctx->err)) != PC_OK)
            return st;
        /* the DQ output's element type: as typed, else the scale's (DQ-19+ outputs the scale's type) */
        const pc_tensor *q = pc_value_const(dq->inputs[0]);
        const pc_value *scale = dq->n_inputs > 1 ? dq->inputs[1] : NULL;
        pc_dtype elem = v->type.kind == PC_TYPE_TENSOR                ? v->type.elem
                        : scale && scale->type.kind == PC_TYPE_TENSOR ? scale->type.elem
                                                                      : PC_DTYPE_FLOAT;
        return set_type_dims(v, elem, q->rank, q->dims, ctx->err);
    }
    pc_value *ins[2] = {v, NULL};
    uint32_t n_in = 1;
    if (ctx->opset >= 13) {
        ins[1] = pc_pass_add_ints(ctx->graph, "axes", n_lead, axes, ctx->err);
        if (!ins[1]) return ctx->err->status;
        n_in = 2;
    }
    pc_node *u = pc_pass_add_node(ctx->graph, ctx->opts, "Unsqueeze", "", n_in, ins, 1, node, ctx->err);
    if (!u) return ctx->err->status;
    if (ctx->opset < 13 && (st = pc_node_set_attr_ints(u, "axes", n_lead, axes, ctx->err)) != PC_OK)
        return st;
    if (v->type.kind == PC_TYPE_TENSOR) {
        pc_dim d[PC_MAX_RANK];
        memset(d, 0, sizeof d);
        for (size_t k = 0; k < n_lead; k++) {
            d[k].kind = PC_DIM_KNOWN;
            d[k].size = 1;
        }
        for (int32_t k = 0; k < r; k++)
            d[n_lead + (size_t)k] = v->type.shape.dims[k];
        pc_type ty = v->type;
        ty.shape.rank = r + (int32_t)n_lead;
        ty.shape.dims = d;
        if ((st = pc_value_set_type(u->outputs[0], &ty, ctx->err)) != PC_OK) return st;
    }
    return pc_node_set_input(node, i, u->outputs[0], ctx->err);
}

/* A 1-D int32 or int64 tensor of n values (int32 keeps each value's low 32 bits); NULL with err set. */
static pc_tensor *ints_tensor(tp_ctx *ctx, const char *name, pc_dtype dtype, size_t n, const int64_t *values)
{
    int64_t dim = (int64_t)n;
    pc_tensor *t = pc_tensor_create(ctx->graph->model, name, dtype, 1, &dim, ctx->err);
    if (!t) return NULL;
    for (size_t k = 0; k < n; k++) {
        if (dtype == PC_DTYPE_INT32) {
            int32_t x = (int32_t)values[k];
            memcpy((uint8_t *)t->data + k * 4, &x, 4);
        } else {
            memcpy((uint8_t *)t->data + k * 8, &values[k], 8);
        }
    }
    return t;
}

pc_status tp_replace_input_ints(tp_ctx *ctx, pc_node *node, uint32_t i, pc_dtype dtype, size_t n,
                                const int64_t *values)
{
    pc_value *v = i < node->n_inputs ? node->inputs[i] : NULL;
    pc_tensor *nt = ints_tensor(ctx, v ? v->name : "ints", dtype, n, values);
    if (!nt) return ctx->err->status;
    return install_const(ctx, node, i, v, nt);
}

/* Node input i becomes Gather(table, input) (as_indices: the input picks from the constant table, e.g. perm
 * mapping computed axes) or Gather(input, table) (the table picks the input's elements, e.g. perm_inv
 * reordering computed pads). The table is a 1-D int32/int64 constant of n values; the Gather reads axis 0. */
static pc_status gather_input(tp_ctx *ctx, pc_node *node, uint32_t i, pc_dtype dtype, size_t n,
                              const int64_t *table, bool as_indices)
{
    pc_value *v = node->inputs[i];
    pc_tensor *t = ints_tensor(ctx, NULL, dtype, n, table);
    if (!t) return ctx->err->status;
    pc_value *tv = pc_pass_add_initializer(ctx->graph, as_indices ? "perm" : "perm_inv", t, ctx->err);
    if (!tv) return ctx->err->status;
    pc_value *ins[2] = {as_indices ? tv : v, as_indices ? v : tv};
    pc_node *g = pc_pass_add_node(ctx->graph, ctx->opts, "Gather", "", 2, ins, 1, node, ctx->err);
    if (!g) return ctx->err->status;
    /* the result: the data's element type, the indices' shape */
    pc_status st;
    const pc_value *data = ins[0], *idx = ins[1];
    if (data->type.kind == PC_TYPE_TENSOR && idx->type.kind == PC_TYPE_TENSOR) {
        pc_type ty = idx->type;
        ty.elem = data->type.elem;
        if ((st = pc_value_set_type(g->outputs[0], &ty, ctx->err)) != PC_OK) return st;
    }
    return pc_node_set_input(node, i, g->outputs[0], ctx->err);
}

pc_status tp_gather_input(tp_ctx *ctx, pc_node *node, uint32_t i, size_t n, const int64_t *order)
{
    return gather_input(ctx, node, i, PC_DTYPE_INT64, n, order, false);
}

pc_status tp_map_input(tp_ctx *ctx, pc_node *node, uint32_t i, pc_dtype dtype, size_t n, const int64_t *table)
{
    return gather_input(ctx, node, i, dtype, n, table, true);
}
