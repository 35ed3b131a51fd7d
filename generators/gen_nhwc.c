/* The "nhwc" family: TF-style graphs as converters emit them. Graph inputs are NHWC; every layout-sensitive
 * op (Conv, pools, BatchNormalization, Resize) sits between Transpose(0,3,1,2) and Transpose(0,2,3,1);
 * between them run layout-agnostic chains (elementwise ops with broadcast constants, activations,
 * Concat/Split, Reduce, Softmax, Pad, Slice, Squeeze/Unsqueeze, Reshape) with branches — the transpose
 * optimizer's hardest input. Draw 0 everywhere: opset 17, one Relu on a [1,1,1,1] input. */
#include <string.h>

#include "generators/gen_ops.h"

/* 9-12 make Softmax/LogSoftmax flatten from `axis` (no push through them), and keep attribute forms; 9-10
 * also give Pad/Slice/Clip their attribute forms and Resize its (X, scales) form. */
static const int64_t opsets[] = {17, 13, 11, 12, 18, 10, 9};
static const uint32_t opset_weights[] = {5, 3, 2, 2, 2, 1, 1};

typedef struct move {
    const char *op;
    bool wrapped; /* layout sensitive: Transpose to NCHW, the op, Transpose back */
    uint32_t weight;
} move;

/* Relu first: the simplest move. */
static const move moves[] = {
    {"Relu", false, 5},
    {"Conv", true, 8},
    {"MaxPool", true, 3},
    {"AveragePool", true, 2},
    {"GlobalAveragePool", true, 2},
    {"GlobalMaxPool", true, 1},
    {"BatchNormalization", true, 3},
    {"Resize", true, 2},
    {"Add", false, 6},
    {"Mul", false, 5},
    {"Sub", false, 2},
    {"Div", false, 2},
    {"Max", false, 1},
    {"Min", false, 1},
    {"Pow", false, 1},
    {"LeakyRelu", false, 2},
    {"Sigmoid", false, 2},
    {"Tanh", false, 2},
    {"Clip", false, 2},
    {"Abs", false, 1},
    {"Neg", false, 1},
    {"Exp", false, 1},
    {"Log", false, 1},
    {"Sqrt", false, 1},
    {"Reciprocal", false, 1},
    {"Erf", false, 1},
    {"Elu", false, 1},
    {"HardSigmoid", false, 1},
    {"Softplus", false, 1},
    {"GeluPattern", false, 1},
    {"Concat", false, 4},
    {"Split", false, 3},
    {"Softmax", false, 3},
    {"LogSoftmax", false, 1},
    {"ReduceMean", false, 3},
    {"ReduceSum", false, 2},
    {"ReduceMax", false, 2},
    {"ReduceMin", false, 1},
    {"ReduceL2", false, 1},
    {"ReduceSumSquare", false, 1},
    {"Pad", false, 3},
    {"Slice", false, 3},
    {"Squeeze", false, 2},
    {"Unsqueeze", false, 2},
    {"Reshape", false, 2},
    {"Transpose", false, 2},
    {"MatMul", false, 1},
    {"Flatten", false, 1},
    {"Identity", false, 1},
    {"Dropout", false, 1},
    {"Cast", false, 1},
};
enum { N_MOVES = sizeof moves / sizeof moves[0] };

/* Percent of ops that extend the newest value: long layout-agnostic runs between the Transposes. */
enum { CHAIN = 60 };

/* Rank-preserving ops that may run on a wrapped op's NCHW output before the Transpose back. */
static const move inners[] = {
    {"Relu", false, 4},    {"Clip", false, 2},      {"Add", false, 2},     {"Mul", false, 2},
    {"Softmax", false, 3}, {"LeakyRelu", false, 1}, {"Sigmoid", false, 1}, {"LogSoftmax", false, 1},
};
enum { N_INNERS = sizeof inners / sizeof inners[0] };

/* Ops that may follow a wrapped op's Transpose back to NHWC directly. */
static const move tails[] = {
    {"Relu", false, 3},   {"Add", false, 3},   {"Reshape", false, 4},    {"Softmax", false, 2},
    {"Concat", false, 2}, {"Mul", false, 2},   {"ReduceMean", false, 2}, {"Pad", false, 1},
    {"Slice", false, 1},  {"Split", false, 1}, {"Transpose", false, 1},  {"Squeeze", false, 1},
};
enum { N_TAILS = sizeof tails / sizeof tails[0] };

static const int64_t to_nchw[4] = {0, 3, 1, 2}, to_nhwc[4] = {0, 2, 3, 1};

/* x (rank 4, NHWC) as the op will see it after Transpose(0,3,1,2). */
static void as_nchw(const pc_gen_x *x, pc_gen_x *t)
{
    *t = *x;
    for (int i = 0; i < 4; i++)
        t->dims[i] = x->dims[to_nchw[i]];
}

typedef struct wrap_ctx {
    const pc_gen *g;
    const pc_gen_op *op;
} wrap_ctx;

static bool wrap_accept(const pc_gen_value *v, void *ctx)
{
    const wrap_ctx *c = ctx;
    pc_gen_x x, t;
    if (v->value->type.kind != PC_TYPE_TENSOR || v->value->type.elem != PC_DTYPE_FLOAT) return false;
    if (!pc_gen_x_get((pc_gen *)c->g, v->value, &x) || x.rank != 4) return false;
    x.lo = v->lo;
    x.hi = v->hi;
    as_nchw(&x, &t);
    return pc_gen_op_accepts(c->g, c->op, &t);
}

static bool move_feasible(const pc_gen *g, const move *m)
{
    const pc_gen_op *op = pc_gen_op_find(m->op);
    if (!m->wrapped) return pc_gen_op_feasible(g, op);
    return g->cfg->max_rank >= 4 && pc_gen_budget(g) >= op->min_nodes + 2 && pc_gen_op_feasible(g, op);
}

/* A new NHWC graph input the wrapped op accepts once transposed (all-1 dims when the drawn ones do not). */
static pc_status new_nhwc_input(pc_gen *g, const pc_gen_op *op, pc_gen_x *x, pc_error *err)
{
    pc_gen_x t;
    memset(x, 0, sizeof *x);
    x->rank = 4;
    pc_gen_draw_dims(g, 4, true, x->dims);
    x->lo = op->in_lo;
    x->hi = op->in_hi;
    x->n_elements = (uint64_t)(x->dims[0] * x->dims[1] * x->dims[2] * x->dims[3]);
    as_nchw(x, &t);
    if (!pc_gen_op_accepts(g, op, &t)) {
        for (int i = 0; i < 4; i++)
            x->dims[i] = 1;
        x->n_elements = 1;
        as_nchw(x, &t);
        if (!pc_gen_op_accepts(g, op, &t))
            return pc_error_set(err, PC_ERR_INTERNAL, "generator (nhwc family): no input shape satisfies %s",
                                op->op_type);
    }
    pc_gen_value *v = pc_gen_input(g, PC_DTYPE_FLOAT, 4, x->dims, x->lo, x->hi, err);
    if (!v) return err->status;
    x->value = v->value;
    return PC_OK;
}

static pc_status add_wrapped(pc_gen *g, const pc_gen_op *op, pc_error *err)
{
    wrap_ctx wc = {g, op};
    pc_gen_value *v = pc_draw_bool(g->ch, 10) ? NULL : pc_gen_pick_chain(g, wrap_accept, &wc, CHAIN);
    pc_gen_x x, t;
    if (v) {
        if (!pc_gen_x_get(g, v->value, &x)) return pc_error_set(err, PC_ERR_INTERNAL, "generator: nhwc pick");
    } else {
        pc_status st = new_nhwc_input(g, op, &x, err);
        if (st != PC_OK) return st;
    }
    pc_value *nchw = NULL, *y = NULL, *back = NULL;
    pc_status st = pc_gen_transpose(g, &x, to_nchw, &nchw, err);
    if (st != PC_OK) return st;
    if (!pc_gen_x_get(g, nchw, &t)) return pc_error_set(err, PC_ERR_INTERNAL, "generator: nhwc transpose");
    if ((st = pc_gen_op_apply(g, op, &t, &y, err)) != PC_OK) return st;
    /* sometimes an activation or elementwise op still runs in NCHW before the Transpose back (as in converted
     * PyTorch models): the layout transformer then pushes its channel move through that op. Budget: the op
     * may take 2 nodes (Add of a folded constant), and 1 stays for the Transpose back. */
    if (pc_gen_budget(g) >= 3 && pc_draw_bool(g->ch, 30)) {
        uint32_t w[N_INNERS];
        for (uint32_t i = 0; i < N_INNERS; i++)
            w[i] = inners[i].weight;
        pc_value *z = NULL;
        if ((st = pc_gen_ops_try(g, inners[pc_draw_weighted(g->ch, w, N_INNERS)].op, y, &z, err)) != PC_OK)
            return st;
        if (z) y = z;
    }
    pc_gen_x yx;
    if (!pc_gen_x_get(g, y, &yx) || yx.rank != 4)
        return pc_error_set(err, PC_ERR_INTERNAL, "generator: %s output is not rank 4", op->op_type);
    if ((st = pc_gen_transpose(g, &yx, to_nhwc, &back, err)) != PC_OK) return st;
    /* often the NHWC result goes straight on into a layout-agnostic op (a flattening Reshape, Softmax over
     * the channels, a residual Add, a Concat...): the Transpose then has one consumer to be pushed through */
    if (pc_gen_budget(g) < 1 || !pc_draw_bool(g->ch, 40)) return PC_OK;
    uint32_t w[N_TAILS];
    for (uint32_t i = 0; i < N_TAILS; i++)
        w[i] = tails[i].weight;
    pc_value *z = NULL;
    return pc_gen_ops_try(g, tails[pc_draw_weighted(g->ch, w, N_TAILS)].op, back, &z, err);
}

static pc_status add_move(pc_gen *g, pc_error *err)
{
    uint32_t idx[N_MOVES], w[N_MOVES], n = 0;
    for (uint32_t i = 0; i < N_MOVES; i++)
        if (move_feasible(g, &moves[i])) {
            idx[n] = i;
            w[n++] = moves[i].weight;
        }
    if (n == 0)
        return pc_error_set(err, PC_ERR_INTERNAL,
                            "generator (nhwc family): no op fits max_nodes %u, max_rank %d",
                            g->cfg->max_nodes, (int)g->cfg->max_rank);
    const move *m = &moves[idx[pc_draw_weighted(g->ch, w, n)]];
    const pc_gen_op *op = pc_gen_op_find(m->op);
    if (m->wrapped) return add_wrapped(g, op, err);
    pc_value *y = NULL;
    return pc_gen_op_grow(g, op, 10, CHAIN, 4, &y, err);
}

pc_status pc_gen_nhwc(pc_gen *g, pc_error *err)
{
    int64_t opset = opsets[pc_draw_weighted(g->ch, opset_weights, sizeof opsets / sizeof opsets[0])];
    if (opset != pc_gen_opset(g) && pc_model_set_opset(g->model, "", opset, err) != PC_OK) return err->status;
    do {
        pc_status st = add_move(g, err);
        if (st != PC_OK) return st;
    } while (pc_gen_continue(g));
    return PC_OK;
}
