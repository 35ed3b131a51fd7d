/* The "float" family: CNN-like NCHW float graphs drawn from the op table (gen_ops.h), plus the short patterns
 * the level-0/1 fusions look for (Conv followed by BatchNormalization, a per-channel Add or Mul, or an
 * activation; Reshape chains; Relu/Clip pairs; the exact-erf GELU subgraph). Draw 0 everywhere: opset 17, one
 * Relu on a scalar input. */
#include <string.h>

#include "generators/gen_ops.h"

/* Opsets the family draws (0: the model default 17). 11 and 12 keep the attribute forms (Squeeze axes, Split
 * sizes, Reduce axes) and Resize's required roi; 18 moves every Reduce's axes to an input; 20 has ai.onnx
 * Gelu; 9 and 10 the older forms still (Slice's starts/ends/axes and Pad's pads as attributes, Upsample-era
 * ops absent: the table's min_opset keeps out what those opsets lack). */
static const int64_t opsets[] = {17, 13, 11, 18, 20, 10, 9};
static const uint32_t opset_weights[] = {6, 3, 2, 2, 1, 1, 1};

/* Percent of ops that extend the newest value they accept (the rest pick any: branches and fan-out). */
enum { CHAIN = 40 };

enum { MOVE_OP, MOVE_CONV_CHAIN, MOVE_RESHAPE_CHAIN, MOVE_CLAMP_PAIR };

typedef struct move {
    int kind;
    const char *op; /* MOVE_OP: the table row */
    uint32_t weight;
} move;

/* Relu first: the simplest move. */
static const move moves[] = {
    {MOVE_OP, "Relu", 6},
    {MOVE_OP, "Conv", 10},
    {MOVE_CONV_CHAIN, NULL, 8},
    {MOVE_OP, "MaxPool", 3},
    {MOVE_OP, "AveragePool", 3},
    {MOVE_OP, "GlobalAveragePool", 2},
    {MOVE_OP, "GlobalMaxPool", 1},
    {MOVE_OP, "BatchNormalization", 4},
    {MOVE_OP, "LeakyRelu", 2},
    {MOVE_OP, "Sigmoid", 2},
    {MOVE_OP, "Tanh", 2},
    {MOVE_OP, "Clip", 3},
    {MOVE_OP, "Add", 6},
    {MOVE_OP, "Mul", 5},
    {MOVE_OP, "Sub", 3},
    {MOVE_OP, "Div", 3},
    {MOVE_OP, "Max", 1},
    {MOVE_OP, "Min", 1},
    {MOVE_OP, "Pow", 1},
    {MOVE_OP, "Abs", 1},
    {MOVE_OP, "Neg", 1},
    {MOVE_OP, "Exp", 1},
    {MOVE_OP, "Log", 1},
    {MOVE_OP, "Sqrt", 1},
    {MOVE_OP, "Reciprocal", 1},
    {MOVE_OP, "Erf", 1},
    {MOVE_OP, "Elu", 1},
    {MOVE_OP, "HardSigmoid", 1},
    {MOVE_OP, "Softplus", 1},
    {MOVE_OP, "Gelu", 8}, /* feasible at opset 20 only */
    {MOVE_OP, "GeluPattern", 2},
    {MOVE_OP, "Concat", 3},
    {MOVE_OP, "Split", 2},
    {MOVE_OP, "Reshape", 2},
    {MOVE_RESHAPE_CHAIN, NULL, 2},
    {MOVE_CLAMP_PAIR, NULL, 2},
    {MOVE_OP, "Flatten", 2},
    {MOVE_OP, "Softmax", 2},
    {MOVE_OP, "LogSoftmax", 1},
    {MOVE_OP, "ReduceMean", 2},
    {MOVE_OP, "ReduceSum", 1},
    {MOVE_OP, "ReduceMax", 1},
    {MOVE_OP, "ReduceMin", 1},
    {MOVE_OP, "ReduceL2", 1},
    {MOVE_OP, "ReduceSumSquare", 1},
    {MOVE_OP, "MatMul", 2},
    {MOVE_OP, "Gemm", 2},
    {MOVE_OP, "Pad", 2},
    {MOVE_OP, "Slice", 2},
    {MOVE_OP, "Resize", 2},
    {MOVE_OP, "Transpose", 3},
    {MOVE_OP, "Identity", 1},
    {MOVE_OP, "Dropout", 1},
    {MOVE_OP, "Unsqueeze", 2},
    {MOVE_OP, "Squeeze", 1},
    {MOVE_OP, "Cast", 1},
};
enum { N_MOVES = sizeof moves / sizeof moves[0] };

/* Ops a Conv chain puts right after the Conv (the fusions' second node). */
static const char *const conv_followers[] = {"BatchNormalization", "Add",     "Mul",  "Relu",       "Clip",
                                             "LeakyRelu",          "Sigmoid", "Tanh", "HardSigmoid"};

static bool move_feasible(const pc_gen *g, const move *m)
{
    switch (m->kind) {
    case MOVE_OP:
        return pc_gen_op_feasible(g, pc_gen_op_find(m->op));
    case MOVE_CONV_CHAIN:
        return pc_gen_budget(g) >= 2 && pc_gen_op_feasible(g, pc_gen_op_find("Conv"));
    case MOVE_RESHAPE_CHAIN:
        return pc_gen_budget(g) >= 2 && pc_gen_op_feasible(g, pc_gen_op_find("Reshape"));
    default:
        return pc_gen_budget(g) >= 2 && pc_gen_op_feasible(g, pc_gen_op_find("Clip"));
    }
}

/* The second node of a chain on y; nothing is added when the op's rules refuse y. */
static pc_status follow(pc_gen *g, const char *op, pc_value *y, pc_error *err)
{
    pc_value *z = NULL;
    if (strcmp(op, "Add") == 0 || strcmp(op, "Mul") == 0) {
        pc_gen_x x;
        if (!pc_gen_x_get(g, y, &x)) return PC_OK;
        return pc_gen_channel_op(g, op, &x, &z, err);
    }
    return pc_gen_ops_try(g, op, y, &z, err);
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
                            "generator (float family): no op fits max_nodes %u, max_rank %d",
                            g->cfg->max_nodes, (int)g->cfg->max_rank);
    const move *m = &moves[idx[pc_draw_weighted(g->ch, w, n)]];
    pc_value *y = NULL;
    switch (m->kind) {
    case MOVE_OP:
        return pc_gen_op_grow(g, pc_gen_op_find(m->op), 12, CHAIN, -1, &y, err);
    case MOVE_CONV_CHAIN: {
        pc_status st = pc_gen_op_grow(g, pc_gen_op_find("Conv"), 12, CHAIN, 4, &y, err);
        if (st != PC_OK) return st;
        const char *f = conv_followers[pc_draw(g->ch, sizeof conv_followers / sizeof conv_followers[0])];
        return follow(g, f, y, err);
    }
    case MOVE_RESHAPE_CHAIN: {
        pc_status st = pc_gen_op_grow(g, pc_gen_op_find("Reshape"), 12, CHAIN, -1, &y, err);
        if (st != PC_OK) return st;
        return follow(g, "Reshape", y, err);
    }
    default: { /* Relu -> Clip or Clip -> Relu: fuse_relu_clip's input */
        bool relu_first = !pc_draw_bool(g->ch, 50);
        pc_status st =
            pc_gen_op_grow(g, pc_gen_op_find(relu_first ? "Relu" : "Clip"), 12, CHAIN, -1, &y, err);
        if (st != PC_OK) return st;
        return follow(g, relu_first ? "Clip" : "Relu", y, err);
    }
    }
}

pc_status pc_gen_float(pc_gen *g, pc_error *err)
{
    int64_t opset = opsets[pc_draw_weighted(g->ch, opset_weights, sizeof opsets / sizeof opsets[0])];
    if (opset != pc_gen_opset(g) && pc_model_set_opset(g->model, "", opset, err) != PC_OK) return err->status;
    do {
        pc_status st = add_move(g, err);
        if (st != PC_OK) return st;
    } while (pc_gen_continue(g));
    return PC_OK;
}
