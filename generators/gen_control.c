/* Control flow for the pattern library (gen_control.h): If, Loop and Scan with bodies built on the node's
 * attribute. A body is a graph whose parent is the graph of its node; while it is built, g->graph points at
 * it, so its nodes go through pc_gen_node_begin/pc_gen_node_end like any other (named, shape-inferred,
 * counted), and the pool entries they leave are dropped when the body closes (pc_gen_finish only looks at the
 * main graph's values). A body reads a value of an enclosing graph through a value of its own with the same
 * name whose `outer` points at it (as the loader makes them), which counts in that value's n_subgraph_refs.
 *
 * The values a body reads by name are main-graph values of the shape the body's chains keep: the data input
 * (If, Loop) or the initial state (Scan), sometimes a constant of that shape and a scalar constant, and in
 * the near variant h = Identity(src), Neg(Neg(src)), Mul(src, 1) or a cancelling Transpose pair on src (read
 * by a Relu as well, or left to be a graph output). Every graph input a body reads is also read in the main
 * graph (pc_gen_finish drops graph inputs nothing reads, and it cannot see subgraph references).
 *
 * A body at depth 1 may itself hold an If (depth 2) whose branches read the enclosing body's value and
 * main-graph values by name: a reference resolves to the nearest enclosing graph holding the name, as the
 * loader resolves it (a reference the enclosing body already holds, else the main-graph value).
 *
 * Value intervals: the ops inside bodies are not domain-limited, so only the intervals of the control-flow
 * node's outputs matter; a chain records its steps (a nested If as both branches' steps, hulled), and Loop
 * and Scan iterate them over the iteration count (the hull of every iterate from the initial interval on). */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "generators/gen_control.h"
#include "generators/gen_ops.h"

enum {
    MAX_OUTER = 4,  /* main-graph values a unit's bodies may read by name (besides the scalar) */
    MAX_STEPS = 32, /* interval steps one chain records */
    MAX_OPS = 4,    /* ops one chain draws at most */
};

/* Percent of: body nodes annotated as a new group (another 25% continue the previous node's annotation),
 * control-flow nodes annotated, bodies whose values get value_info entries. */
enum { ANN_NEW_PERCENT = 15, ANN_SAME_PERCENT = 25, ANN_NODE_PERCENT = 25, VALUE_INFO_PERCENT = 40 };

/* Nested prefixes, as the annotated family draws them (gen_annotated.c). */
static const char *const annotations[] = {
    "encoder", "encoder.block1", "encoder.block1.attn", "encoder.block2.mlp", "decoder.block0", "head",
};
enum { N_ANNOTATIONS = sizeof annotations / sizeof annotations[0] };

/* Mul's constants (draw 0: 1, which prune_mul_div_one removes). */
static const float mul_values[] = {1.0f, 0.5f, -1.0f, 2.0f, -0.5f};
enum { N_MUL_VALUES = sizeof mul_values / sizeof mul_values[0] };

/* Thresholds of computed conditions (draw 0: 0). */
static const float thresholds[] = {0.0f, 0.5f, -0.5f};
enum { N_THRESHOLDS = sizeof thresholds / sizeof thresholds[0] };

/* ---- intervals ------------------------------------------------------------------------------------------
 */

typedef struct range {
    double lo, hi;
} range;

typedef enum step_kind { STEP_RELU, STEP_NEG, STEP_ADD, STEP_MUL, STEP_SET, STEP_BRANCHES } step_kind;

typedef struct step {
    step_kind kind;
    range operand;           /* STEP_ADD, STEP_MUL: the other operand; STEP_SET: the new interval */
    uint32_t n_then, n_else; /* STEP_BRANCHES: the steps after it are then's n_then and else's n_else */
} step;

/* The steps of a chain, replayed on an interval. */
typedef struct chain {
    uint32_t n;
    step steps[MAX_STEPS];
} chain;

static const range empty_range = {INFINITY, -INFINITY};

static range hull(range a, range b)
{
    return (range){fmin(a.lo, b.lo), fmax(a.hi, b.hi)};
}

static range step_apply(const step *s, range x)
{
    switch (s->kind) {
    case STEP_RELU:
        return (range){fmax(x.lo, 0), fmax(x.hi, 0)};
    case STEP_NEG:
        return (range){-x.hi, -x.lo};
    case STEP_ADD:
        return (range){x.lo + s->operand.lo, x.hi + s->operand.hi};
    case STEP_MUL: {
        double a = x.lo * s->operand.lo, b = x.lo * s->operand.hi, c = x.hi * s->operand.lo,
               d = x.hi * s->operand.hi;
        return (range){fmin(fmin(a, b), fmin(c, d)), fmax(fmax(a, b), fmax(c, d))};
    }
    case STEP_SET:
        return s->operand;
    default:
        return x;
    }
}

static range steps_apply(const step *s, uint32_t n, range x)
{
    for (uint32_t i = 0; i < n; i++) {
        if (s[i].kind != STEP_BRANCHES) {
            x = step_apply(&s[i], x);
            continue;
        }
        range a = steps_apply(s + i + 1, s[i].n_then, x),
              b = steps_apply(s + i + 1 + s[i].n_then, s[i].n_else, x);
        x = hull(a, b);
        i += s[i].n_then + s[i].n_else;
    }
    return x;
}

static range chain_apply(const chain *ch, range x)
{
    return steps_apply(ch->steps, ch->n, x);
}

/* Every value a state takes in `times` iterations of ch from x: the hull of x, ch(x), ..., ch^times(x). */
static range chain_iterate(const chain *ch, range x, int64_t times)
{
    range all = x;
    for (int64_t t = 0; t < times; t++) {
        x = chain_apply(ch, x);
        all = hull(all, x);
    }
    return all;
}

static pc_status record(chain *ch, step_kind kind, range operand, range *r, pc_error *err)
{
    if (ch->n == MAX_STEPS)
        return pc_error_set(err, PC_ERR_INTERNAL, "control: chain of over %d steps", MAX_STEPS);
    ch->steps[ch->n] = (step){.kind = kind, .operand = operand};
    *r = step_apply(&ch->steps[ch->n++], *r);
    return PC_OK;
}

/* ---- the unit context ------------------------------------------------------------------------------------
 */

typedef struct cf_ctx {
    pc_gen *g;
    pc_choices *ch;
    bool near;
    pc_graph *main;
    int32_t rank; /* the shape every chain keeps */
    int64_t dims[PC_MAX_RANK];
    uint32_t n_outer; /* main-graph values of that shape the bodies may read by name */
    pc_value *outer[MAX_OUTER];
    range outer_range[MAX_OUTER];
    pc_value *scalar; /* a main-graph scalar constant Mul may read by name, or NULL */
    float scalar_value;
    bool read_near; /* near: the next chain starts with Add of h (outer[0]), so a body reads it */
    int64_t trips;  /* Loop: the iteration number stays below this */
    /* the node budget: at most PC_GEN_CONTROL_MAX_NODES from start_ops on, `reserve` of them held for the
     * nodes the unit must still make (the control-flow node until it ends, one per body output, ...) */
    uint32_t start_ops, reserve;
    /* the graph being built (g->graph): what body_open saves and body_close restores */
    struct body_state {
        int depth;            /* 0: the main graph, 1: a body, 2: an If inside a body */
        uint32_t pool_mark;   /* g->n_pool when the body opened */
        bool value_info;      /* its node outputs get value_info entries (their types travel in the file) */
        const char *prev_ann; /* the annotation of its previous node */
        pc_value *iter;       /* a Loop body: the iteration number (int64 scalar body input); else NULL */
        pc_value *iter_f;     /* its Cast to float, made on first use */
    } b;
} cf_ctx;

typedef struct body_state body_state;

static bool in_body(const cf_ctx *c)
{
    return c->b.depth > 0;
}

/* Nodes the unit may still add beyond those it holds in reserve. */
static uint32_t room(const cf_ctx *c)
{
    uint32_t used = c->g->n_ops - c->start_ops;
    return used + c->reserve >= PC_GEN_CONTROL_MAX_NODES ? 0 : PC_GEN_CONTROL_MAX_NODES - used - c->reserve;
}

/* Whether k more optional nodes fit, and if so holds them (the caller makes them, releasing as it goes). */
static bool hold(cf_ctx *c, uint32_t k)
{
    if (room(c) < k) return false;
    c->reserve += k;
    return true;
}

static void release(cf_ctx *c, uint32_t k)
{
    c->reserve -= k < c->reserve ? k : c->reserve;
}

static pc_status annotate_node(cf_ctx *c, pc_node *n, pc_error *err)
{
    const char *ann = annotations[pc_draw(c->ch, N_ANNOTATIONS)];
    c->b.prev_ann = ann;
    return pc_node_set_metadata(n, PC_LAYER_ANN_KEY, ann, err);
}

/* Body nodes: none (draw 0), the previous node's annotation (runs share one, so fusions meet annotated pairs)
 * or a new one. */
static pc_status annotate_body_node(cf_ctx *c, pc_node *n, pc_error *err)
{
    static const uint32_t weights[] = {100 - ANN_SAME_PERCENT - ANN_NEW_PERCENT, ANN_SAME_PERCENT,
                                       ANN_NEW_PERCENT};
    uint32_t what = pc_draw_weighted(c->ch, weights, 3);
    if (what == 0) return PC_OK;
    if (what == 1 && c->b.prev_ann) return pc_node_set_metadata(n, PC_LAYER_ANN_KEY, c->b.prev_ann, err);
    return annotate_node(c, n, err);
}

static pc_node *node(cf_ctx *c, const char *op, uint32_t n_in, pc_value *const *ins, uint32_t n_out,
                     pc_error *err)
{
    return pc_gen_node_begin(c->g, op, "", n_in, ins, n_out, err);
}

/* Ends n (shape inference) with output interval r; inside a body also draws its annotation and marks its
 * outputs for value_info. *out (may be NULL) its output 0. */
static pc_status end(cf_ctx *c, pc_node *n, range r, pc_value **out, pc_error *err)
{
    if (!n) return err->status;
    pc_status st = in_body(c) ? annotate_body_node(c, n, err) : PC_OK;
    if (st == PC_OK) st = pc_gen_node_end(c->g, n, r.lo, r.hi, err);
    if (st != PC_OK) return st;
    for (uint32_t i = 0; in_body(c) && c->b.value_info && i < n->n_outputs; i++)
        n->outputs[i]->has_value_info = true;
    if (out) *out = n->outputs[0];
    return PC_OK;
}

static pc_status unary(cf_ctx *c, const char *op, pc_value *x, range r, pc_value **out, pc_error *err)
{
    return end(c, node(c, op, 1, &x, 1, err), r, out, err);
}

static pc_status binary(cf_ctx *c, const char *op, pc_value *a, pc_value *b, range r, pc_value **out,
                        pc_error *err)
{
    pc_value *ins[2] = {a, b};
    return end(c, node(c, op, 2, ins, 1, err), r, out, err);
}

static pc_value *scalar_const(cf_ctx *c, pc_dtype dt, double value, pc_error *err)
{
    int64_t one = 1;
    float f = (float)value;
    int64_t i = (int64_t)value;
    pc_gen_value *v = dt == PC_DTYPE_FLOAT ? pc_gen_const_f32(c->g, dt, 0, &one, &f, err)
                                           : pc_gen_const_i64(c->g, dt, 0, &one, &i, err);
    return v ? v->value : NULL;
}

static const pc_type *scalar_type(pc_dtype dt)
{
    static const pc_type types[2] = {{.kind = PC_TYPE_TENSOR, .elem = PC_DTYPE_INT64, .shape = {.rank = 0}},
                                     {.kind = PC_TYPE_TENSOR, .elem = PC_DTYPE_BOOL, .shape = {.rank = 0}}};
    return &types[dt == PC_DTYPE_BOOL];
}

/* v's type (item) with a dim of len inserted at axis (0..rank): a stacked scan output. */
static pc_status set_stacked_type(pc_value *v, const pc_type *item, int32_t axis, int64_t len, pc_error *err)
{
    pc_dim d[PC_MAX_RANK];
    int32_t r = item->shape.rank;
    if (r < 0 || r + 1 > PC_MAX_RANK || axis < 0 || axis > r)
        return pc_error_set(err, PC_ERR_INTERNAL, "control: cannot stack rank %d on axis %d", (int)r,
                            (int)axis);
    for (int32_t i = 0, k = 0; i <= r; i++)
        d[i] = i == axis ? (pc_dim){.kind = PC_DIM_KNOWN, .size = len} : item->shape.dims[k++];
    pc_type t = {.kind = PC_TYPE_TENSOR, .elem = item->elem, .shape = {.rank = r + 1, .dims = d}};
    return pc_value_set_type(v, &t, err);
}

/* ---- bodies -------------------------------------------------------------------------------------------- */

/* Creates the graph attribute `attr` of owner (a node of the graph being built) and makes it the graph being
 * built; *saved keeps what body_close restores. */
static pc_status body_open(cf_ctx *c, pc_node *owner, const char *attr, body_state *saved, pc_error *err)
{
    pc_model *m = c->g->model;
    pc_graph *sub = pc_graph_create(m, owner->graph, owner);
    const char *name = sub ? pc_arena_printf(&m->arena, "%s_%s", owner->name, attr) : NULL;
    if (!name) return pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (body of '%s')", owner->name);
    sub->name = name;
    if (pc_node_set_attr_int(owner, attr, 0, err) != PC_OK) return err->status;
    pc_attr *a = pc_node_attr_mut(owner, attr);
    a->type = PC_ATTR_GRAPH;
    a->i = 0;
    a->g = sub;
    *saved = c->b;
    c->g->graph = sub;
    c->b = (body_state){.depth = saved->depth + 1,
                        .pool_mark = c->g->n_pool,
                        .value_info = pc_draw_bool(c->ch, VALUE_INFO_PERCENT)};
    return PC_OK;
}

/* Back to the enclosing graph; the body's pool entries go (its values are no candidates outside it). */
static void body_close(cf_ctx *c, const body_state *saved)
{
    c->g->graph = c->g->graph->parent;
    c->g->n_pool = c->b.pool_mark;
    c->b = *saved;
}

static pc_value *body_input(cf_ctx *c, const char *hint, const pc_type *t, pc_error *err)
{
    pc_value *v = pc_graph_add_value(c->g->graph, NULL, hint, err);
    if (!v || pc_value_set_type(v, t, err) != PC_OK || pc_graph_add_input(c->g->graph, v, err) != PC_OK)
        return NULL;
    return v;
}

static pc_status body_output(cf_ctx *c, pc_value *v, pc_error *err)
{
    v->has_value_info = false; /* a graph output carries its type itself */
    return pc_graph_add_output(c->g->graph, v, err);
}

/* The body's reference to v, a value of an enclosing graph (one per body and name). It points at the nearest
 * enclosing graph holding the name, as the loader resolves it: a reference the enclosing body holds already,
 * else v. */
static pc_value *outer_ref(cf_ctx *c, pc_value *v, pc_error *err)
{
    pc_graph *g = c->g->graph;
    pc_value *r = pc_graph_find_value(g, v->name);
    if (r) return r;
    pc_value *target = pc_graph_lookup_value(g->parent, v->name);
    if (!target)
        return pc_error_set(err, PC_ERR_INTERNAL, "control: '%s' is not in an enclosing graph", v->name),
               NULL;
    r = pc_graph_add_value(g, v->name, NULL, err);
    if (!r || pc_value_set_type(r, &v->type, err) != PC_OK) return NULL;
    r->outer = target;
    target->n_subgraph_refs++;
    return r;
}

/* ---- chains inside bodies -------------------------------------------------------------------------------
 */

enum {
    OP_RELU,
    OP_ADD_OUTER,
    OP_MUL,
    OP_TRANSPOSE_PAIR,
    OP_NEG_NEG,
    OP_IDENTITY,
    OP_ADD_ITER,
    OP_NESTED_IF,
    N_OPS
};
static const uint32_t op_weights[N_OPS] = {3, 4, 3, 2, 2, 1, 2, 2};

/* A perm of rank r >= 2 that is not the identity, and its inverse: a swap of two axes or a rotation. */
static void draw_perm_pair(cf_ctx *c, int32_t r, int64_t *perm, int64_t *inv)
{
    bool rotate = pc_draw_bool(c->ch, 50);
    int32_t a = (int32_t)pc_draw(c->ch, (uint32_t)(r - 1)),
            b = a + 1 + (int32_t)pc_draw(c->ch, (uint32_t)(r - 1 - a));
    for (int32_t i = 0; i < r; i++)
        perm[i] = rotate ? (i + a + 1) % r : i == a ? b : i == b ? a : i;
    for (int32_t i = 0; i < r; i++)
        inv[perm[i]] = i;
}

static pc_status transpose(cf_ctx *c, pc_value *x, const int64_t *perm, range r, pc_value **out,
                           pc_error *err)
{
    pc_node *n = node(c, "Transpose", 1, &x, 1, err);
    if (n && pc_node_set_attr_ints(n, "perm", (size_t)c->rank, perm, err) != PC_OK) return err->status;
    return end(c, n, r, out, err);
}

/* Mul of x by a constant: a scalar, a [1] or a constant of x's shape in the body, or the main graph's
 * scalar read by name; either operand order. */
static pc_status mul_const(cf_ctx *c, pc_value *x, chain *ch, range *r, pc_value **out, pc_error *err)
{
    float value = mul_values[pc_draw(c->ch, N_MUL_VALUES)];
    pc_value *k = NULL;
    if (c->scalar && pc_draw_bool(c->ch, 40)) {
        value = c->scalar_value;
        k = outer_ref(c, c->scalar, err);
    } else {
        uint32_t form = pc_draw(c->ch, 3); /* 0: scalar, 1: [1], 2: x's shape */
        if (form == 1 && c->rank == 0) form = 0;
        int64_t one = 1;
        pc_gen_value *v = form == 2 ? pc_gen_const(c->g, PC_DTYPE_FLOAT, c->rank, c->dims, value, value, err)
                                    : pc_gen_const_f32(c->g, PC_DTYPE_FLOAT, form == 1, &one, &value, err);
        k = v ? v->value : NULL;
    }
    if (!k) return err->status;
    bool swap = pc_draw_bool(c->ch, 30);
    pc_status st = record(ch, STEP_MUL, (range){value, value}, r, err);
    return st == PC_OK ? binary(c, "Mul", swap ? k : x, swap ? x : k, *r, out, err) : st;
}

/* Greater or Less of ReduceSum or ReduceMax of x (interval r, n elements) and a threshold: one bool element
 * (a scalar with `scalar`, else keepdims drawn). */
static pc_status computed_cond(cf_ctx *c, pc_value *x, range r, uint64_t n, bool scalar, pc_value **out,
                               pc_error *err)
{
    bool max = pc_draw_bool(c->ch, 40);
    bool keep = !scalar && !pc_draw_bool(c->ch, 40);
    pc_node *red = node(c, max ? "ReduceMax" : "ReduceSum", 1, &x, 1, err);
    if (red && !keep && pc_node_set_attr_int(red, "keepdims", 0, err) != PC_OK) return err->status;
    pc_value *s = NULL;
    range rr = max ? r : (range){r.lo * (double)n, r.hi * (double)n};
    pc_status st = end(c, red, rr, &s, err);
    if (st != PC_OK) return st;
    pc_value *t = scalar_const(c, PC_DTYPE_FLOAT, thresholds[pc_draw(c->ch, N_THRESHOLDS)], err);
    if (!t) return err->status;
    return binary(c, pc_draw_bool(c->ch, 40) ? "Less" : "Greater", s, t, (range){0, 1}, out, err);
}

static uint64_t elements(int32_t rank, const int64_t *dims)
{
    uint64_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= (uint64_t)dims[i];
    return n;
}

static pc_status chain_build(cf_ctx *c, pc_value *x, uint32_t n_ops, bool one_held, chain *ch, range *r,
                             pc_value **out, pc_error *err);

/* Nodes a nested If needs at least: a condition of two nodes, the If, a node per branch. */
enum { NESTED_IF_NODES = 5 };

/* An If inside a body (depth 1; NESTED_IF_NODES held by the caller): its condition is Less(iteration number,
 * k) in a Loop body (sometimes) or a computed one on x; each branch starts from x (read by name from the
 * enclosing body; draw 0) or a value the unit offers (read by name through the nearest enclosing graph) and
 * runs 1 or 2 ops. In ch: a STEP_BRANCHES header, then's steps, else's steps. */
static pc_status nested_if(cf_ctx *c, pc_value *x, chain *ch, range *r, pc_value **out, pc_error *err)
{
    pc_value *cond = NULL;
    pc_status st;
    release(c, 2); /* the condition's nodes (one goes unused with Less) */
    if (c->b.iter && pc_draw_bool(c->ch, 50)) {
        pc_value *k = scalar_const(c, PC_DTYPE_INT64, (double)pc_draw(c->ch, (uint32_t)c->trips), err);
        st = k ? binary(c, "Less", c->b.iter, k, (range){0, 1}, &cond, err) : err->status;
    } else {
        st = computed_cond(c, x, *r, elements(c->rank, c->dims), false, &cond, err);
    }
    pc_node *n = st == PC_OK ? node(c, "If", 1, &cond, 1, err) : NULL;
    if (!n) return err->status;
    if (ch->n == MAX_STEPS)
        return pc_error_set(err, PC_ERR_INTERNAL, "control: chain of over %d steps", MAX_STEPS);
    uint32_t head = ch->n++, counts[2] = {0, 0};
    ch->steps[head] = (step){.kind = STEP_BRANCHES};
    static const char *const branches[2] = {"then_branch", "else_branch"};
    range out_r = empty_range;
    for (int b = 0; b < 2 && st == PC_OK; b++) {
        body_state saved;
        if ((st = body_open(c, n, branches[b], &saved, err)) != PC_OK) return st;
        uint32_t first = ch->n, i = pc_draw(c->ch, c->n_outer + 1);
        range br = *r;
        pc_value *start = outer_ref(c, i ? c->outer[i - 1] : x, err), *y = NULL;
        st = start ? PC_OK : err->status;
        if (st == PC_OK && i) st = record(ch, STEP_SET, c->outer_range[i - 1], &br, err);
        if (st == PC_OK) st = chain_build(c, start, 1 + pc_draw(c->ch, 2), true, ch, &br, &y, err);
        if (st == PC_OK) st = body_output(c, y, err);
        counts[b] = ch->n - first;
        out_r = hull(out_r, br);
        body_close(c, &saved);
    }
    if (st != PC_OK) return st;
    ch->steps[head].n_then = counts[0];
    ch->steps[head].n_else = counts[1];
    *r = out_r;
    st = pc_value_set_type(n->outputs[0], &pc_node_attr(n, "then_branch")->g->outputs[0]->type, err);
    release(c, 1); /* the If */
    return st == PC_OK ? end(c, n, out_r, out, err) : st;
}

/* Applies up to n_ops drawn shape-keeping float ops to x (of the context's shape, interval *r) in the body
 * being built, within the unit's node budget: Relu, Add of a value read by name, Mul by a constant, a
 * cancelling Transpose pair, Neg(Neg), Identity, in a Loop body Add of the iteration number, and at depth 1
 * an If (nested_if). An op that does not fit becomes a Relu, or ends the chain when not even that fits.
 * one_held: the caller holds one node for the chain (released here), so it makes at least one when n_ops >=
 * 1. *out is the last op's output (x when no op was made); the steps go to ch, *r follows them. */
static pc_status chain_build(cf_ctx *c, pc_value *x, uint32_t n_ops, bool one_held, chain *ch, range *r,
                             pc_value **out, pc_error *err)
{
    pc_status st = PC_OK;
    if (one_held) release(c, 1);
    for (uint32_t k = 0; k < n_ops && room(c) > 0 && st == PC_OK; k++) {
        uint32_t op = c->read_near ? OP_ADD_OUTER : pc_draw_weighted(c->ch, op_weights, N_OPS);
        if (op == OP_ADD_ITER && !c->b.iter) op = OP_ADD_OUTER;
        if (op == OP_ADD_OUTER && !c->n_outer) op = OP_RELU;
        if ((op == OP_TRANSPOSE_PAIR && c->rank < 2) || (op == OP_NESTED_IF && c->b.depth != 1)) op = OP_RELU;
        uint32_t cost = op == OP_NESTED_IF ? NESTED_IF_NODES
                        : op == OP_TRANSPOSE_PAIR || op == OP_NEG_NEG || (op == OP_ADD_ITER && !c->b.iter_f)
                            ? 2
                            : 1;
        if (!hold(c, cost)) {
            op = OP_RELU;
            cost = 1;
            hold(c, cost);
        }
        if (op != OP_NESTED_IF) release(c, cost); /* made right away; nested_if releases as it goes */
        switch (op) {
        case OP_RELU:
            st = record(ch, STEP_RELU, *r, r, err);
            if (st == PC_OK) st = unary(c, "Relu", x, *r, &x, err);
            break;
        case OP_ADD_OUTER: {
            uint32_t i = c->read_near ? 0 : pc_draw(c->ch, c->n_outer);
            c->read_near = false;
            pc_value *v = outer_ref(c, c->outer[i], err);
            bool swap = pc_draw_bool(c->ch, 30);
            st = v ? record(ch, STEP_ADD, c->outer_range[i], r, err) : err->status;
            if (st == PC_OK) st = binary(c, "Add", swap ? v : x, swap ? x : v, *r, &x, err);
            break;
        }
        case OP_MUL:
            st = mul_const(c, x, ch, r, &x, err);
            break;
        case OP_TRANSPOSE_PAIR: {
            int64_t perm[PC_MAX_RANK], inv[PC_MAX_RANK];
            draw_perm_pair(c, c->rank, perm, inv);
            st = transpose(c, x, perm, *r, &x, err);
            if (st == PC_OK) st = transpose(c, x, inv, *r, &x, err);
            break;
        }
        case OP_NEG_NEG:
            st = record(ch, STEP_NEG, *r, r, err);
            if (st == PC_OK) st = unary(c, "Neg", x, *r, &x, err);
            if (st == PC_OK) st = record(ch, STEP_NEG, *r, r, err);
            if (st == PC_OK) st = unary(c, "Neg", x, *r, &x, err);
            break;
        case OP_IDENTITY:
            st = unary(c, "Identity", x, *r, &x, err);
            break;
        case OP_NESTED_IF:
            st = nested_if(c, x, ch, r, &x, err);
            break;
        default: { /* OP_ADD_ITER */
            range it = {0, (double)(c->trips - 1)};
            if (!c->b.iter_f) {
                pc_node *n = node(c, "Cast", 1, &c->b.iter, 1, err);
                if (n && pc_node_set_attr_int(n, "to", PC_DTYPE_FLOAT, err) != PC_OK) return err->status;
                if ((st = end(c, n, it, &c->b.iter_f, err)) != PC_OK) return st;
            }
            bool swap = pc_draw_bool(c->ch, 30);
            st = record(ch, STEP_ADD, it, r, err);
            if (st == PC_OK)
                st = binary(c, "Add", swap ? c->b.iter_f : x, swap ? x : c->b.iter_f, *r, &x, err);
            break;
        }
        }
    }
    *out = x;
    return st;
}

/* ---- main-graph pieces ----------------------------------------------------------------------------------
 */

static void ctx_init(cf_ctx *c, pc_gen *g, bool near)
{
    memset(c, 0, sizeof *c);
    c->g = g;
    c->ch = g->ch;
    c->near = near;
    c->main = g->graph;
    c->start_ops = g->n_ops;
}

/* A float graph input of rank in [1, 3] (within cfg->max_rank; draw 0: 1), dims drawn (draw 0: 1), values in
 * [-1, 1]. */
static pc_value *data_input(cf_ctx *c, int32_t *rank, int64_t *dims, pc_error *err)
{
    int32_t hi = c->g->cfg->max_rank < 3 ? c->g->cfg->max_rank : 3;
    *rank = (int32_t)pc_draw_range(c->ch, 1, hi);
    pc_gen_draw_dims(c->g, *rank, false, dims);
    pc_gen_value *v = pc_gen_input(c->g, PC_DTYPE_FLOAT, *rank, dims, -1, 1, err);
    return v ? v->value : NULL;
}

static void push_outer(cf_ctx *c, pc_value *v, range r)
{
    if (c->n_outer == MAX_OUTER) return;
    c->outer[c->n_outer] = v;
    c->outer_range[c->n_outer++] = r;
}

/* The main-graph values the bodies may read by name, of the chains' shape (src's): with near, first (so draw
 * 0 reads it) h = Identity(src), Neg(Neg(src)), Mul(src, 1) or a cancelling Transpose pair on src, also read
 * by a Relu (draw 0) or else a graph output; then src; sometimes a constant of the shape; sometimes a scalar
 * constant for Mul. */
static pc_status add_outer_values(cf_ctx *c, pc_value *src, range r, pc_error *err)
{
    pc_status st = PC_OK;
    if (c->near) { /* one node held for h by the unit */
        pc_value *h = NULL, *t = NULL;
        uint32_t form = pc_draw(c->ch, 4); /* Identity, Neg(Neg), Mul by 1, a cancelling Transpose pair */
        if ((form == 3 && c->rank < 2) || ((form == 1 || form == 3) && room(c) < 1)) form = 0;
        release(c, 1);
        if (form == 0) {
            st = unary(c, "Identity", src, r, &h, err);
        } else if (form == 1) {
            st = unary(c, "Neg", src, (range){-r.hi, -r.lo}, &t, err);
            if (st == PC_OK) st = unary(c, "Neg", t, r, &h, err);
        } else if (form == 2) {
            t = scalar_const(c, PC_DTYPE_FLOAT, 1, err);
            st = t ? binary(c, "Mul", src, t, r, &h, err) : err->status;
        } else {
            int64_t perm[PC_MAX_RANK], inv[PC_MAX_RANK];
            draw_perm_pair(c, c->rank, perm, inv);
            st = transpose(c, src, perm, r, &t, err);
            if (st == PC_OK) st = transpose(c, t, inv, r, &h, err);
        }
        if (st == PC_OK && !pc_draw_bool(c->ch, 50) && room(c) > 0)
            st = unary(c, "Relu", h, (range){fmax(r.lo, 0), fmax(r.hi, 0)}, NULL, err);
        if (st != PC_OK) return st;
        push_outer(c, h, r);
    }
    push_outer(c, src, r);
    if (pc_draw_bool(c->ch, 30)) {
        pc_gen_value *w = pc_gen_const(c->g, PC_DTYPE_FLOAT, c->rank, c->dims, -1, 1, err);
        if (!w) return err->status;
        push_outer(c, w->value, (range){-1, 1});
    }
    if (pc_draw_bool(c->ch, 30)) {
        c->scalar_value = mul_values[pc_draw(c->ch, N_MUL_VALUES)];
        if (!(c->scalar = scalar_const(c, PC_DTYPE_FLOAT, c->scalar_value, err))) return err->status;
    }
    return PC_OK;
}

/* The control-flow node itself: sometimes annotated; then shape inference and the pool; then sometimes a
 * main-graph pattern a pass rewrites on its output 0 (of the chains' shape, interval r0): Identity, Neg(Neg),
 * a cancelling Transpose pair, or a Relu. */
static pc_status end_control(cf_ctx *c, pc_node *n, range r, range r0, pc_error *err)
{
    if (pc_draw_bool(c->ch, ANN_NODE_PERCENT) && annotate_node(c, n, err) != PC_OK) return err->status;
    release(c, 1); /* the node itself */
    pc_status st = end(c, n, r, NULL, err);
    static const uint32_t weights[] = {60, 10, 10, 10,
                                       10}; /* none, Identity, Neg(Neg), Transpose pair, Relu */
    uint32_t post = st == PC_OK ? pc_draw_weighted(c->ch, weights, 5) : 0;
    if (post == 3 && c->rank < 2) post = 4;
    if ((post == 2 || post == 3) && room(c) < 2) post = 1;
    if (room(c) < 1) post = 0;
    pc_value *y = n->outputs[0], *t = NULL;
    if (post == 1) st = unary(c, "Identity", y, r0, NULL, err);
    if (post == 2) {
        st = unary(c, "Neg", y, (range){-r0.hi, -r0.lo}, &t, err);
        if (st == PC_OK) st = unary(c, "Neg", t, r0, NULL, err);
    }
    if (post == 3) {
        int64_t perm[PC_MAX_RANK], inv[PC_MAX_RANK];
        draw_perm_pair(c, c->rank, perm, inv);
        st = transpose(c, y, perm, r0, &t, err);
        if (st == PC_OK) st = transpose(c, t, inv, r0, NULL, err);
    }
    if (post == 4) st = unary(c, "Relu", y, (range){fmax(r0.lo, 0), fmax(r0.hi, 0)}, NULL, err);
    return st;
}

/* The unit's own check of its node budget (the pattern library declares PC_GEN_CONTROL_MAX_NODES for it). */
static pc_status check_budget(const cf_ctx *c, const char *unit, pc_status st, pc_error *err)
{
    uint32_t used = c->g->n_ops - c->start_ops;
    if (st == PC_OK && used > PC_GEN_CONTROL_MAX_NODES)
        return pc_error_set(err, PC_ERR_INTERNAL, "control %s: made %u nodes, at most %d allowed", unit, used,
                            PC_GEN_CONTROL_MAX_NODES);
    return st;
}

/* ---- If ------------------------------------------------------------------------------------------------ */

pc_status pc_gen_control_if(pc_gen *g, bool near, pc_error *err)
{
    cf_ctx c;
    ctx_init(&c, g, near);
    range xr = {-1, 1};
    pc_value *x = data_input(&c, &c.rank, c.dims, err), *cond = NULL;
    if (!x) return err->status;
    bool cond_input = pc_draw_bool(c.ch, 40);
    pc_status st = PC_OK;
    if (cond_input) { /* a bool graph input: a scalar (draw 0) or [1] */
        int64_t one = 1;
        pc_gen_value *b = pc_gen_input(g, PC_DTYPE_BOOL, pc_draw_bool(c.ch, 50), &one, 0, 1, err);
        if (!b) return err->status;
        cond = b->value;
    } else {
        st = computed_cond(&c, x, xr, elements(c.rank, c.dims), false, &cond, err);
    }
    /* held: the If, a node per branch output, near's h, the Add reading x */
    c.reserve = 3 + near + (cond_input && !near);
    if (st == PC_OK) st = add_outer_values(&c, x, xr, err);
    if (st != PC_OK) return st;
    uint32_t n_out = pc_draw_bool(c.ch, 25) && hold(&c, 2) ? 2 : 1;
    pc_node *n = node(&c, "If", 1, &cond, n_out, err);
    if (!n) return err->status;
    static const char *const branches[2] = {"then_branch", "else_branch"};
    range out_r = empty_range, out0_r = empty_range;
    for (int b = 0; b < 2 && st == PC_OK; b++) {
        body_state saved;
        if ((st = body_open(&c, n, branches[b], &saved, err)) != PC_OK) return st;
        for (uint32_t k = 0; k < n_out && st == PC_OK; k++) {
            uint32_t i = near && b == 0 && k == 0 ? 0 : pc_draw(c.ch, c.n_outer); /* near: h */
            pc_value *start = outer_ref(&c, c.outer[i], err), *y = NULL;
            range r = c.outer_range[i];
            chain ch = {0};
            st = start ? chain_build(&c, start, 1 + pc_draw(c.ch, MAX_OPS), true, &ch, &r, &y, err)
                       : err->status;
            if (st == PC_OK) st = body_output(&c, y, err);
            out_r = hull(out_r, r);
            if (k == 0) out0_r = hull(out0_r, r);
        }
        body_close(&c, &saved);
    }
    for (uint32_t k = 0; k < n_out && st == PC_OK; k++)
        st = pc_value_set_type(n->outputs[k], &pc_node_attr(n, "then_branch")->g->outputs[k]->type, err);
    if (st == PC_OK) st = end_control(&c, n, out_r, out0_r, err);
    /* x is read in the main graph by the condition or by near's h; else by this Add */
    if (st == PC_OK && cond_input && !near) {
        release(&c, 1);
        st = binary(&c, "Add", n->outputs[0], x, (range){out0_r.lo + xr.lo, out0_r.hi + xr.hi}, NULL, err);
    }
    return check_budget(&c, "If", st, err);
}

/* ---- Loop ---------------------------------------------------------------------------------------------- */

/* Forms: M only (the body's cond output passes its cond input on), M and cond, or cond only (the body stops
 * at the trip count by the iteration number). */
enum { LOOP_TRIPS, LOOP_TRIPS_COND, LOOP_COND, N_LOOP_FORMS };

pc_status pc_gen_control_loop(pc_gen *g, bool near, pc_error *err)
{
    cf_ctx c;
    ctx_init(&c, g, near);
    range xr = {-1, 1};
    pc_value *x = data_input(&c, &c.rank, c.dims, err);
    c.reserve = 3 + near; /* held: the Loop, a node for the state, the body's cond output, near's h */
    pc_status st = x ? add_outer_values(&c, x, xr, err) : err->status;
    if (st != PC_OK) return st;
    int64_t trips = 1 + pc_draw(c.ch, 3), one = 1;
    uint32_t form = pc_draw(c.ch, N_LOOP_FORMS);
    /* LOOP_TRIPS_COND: the cond input is a constant true (draw 0) or a bool graph input, and the body's cond
     * output passes it on (draw 0) or is recomputed from the state; the iteration count is fixed only with
     * both draws 0 */
    bool cond_graph_input = form == LOOP_TRIPS_COND && pc_draw_bool(c.ch, 50);
    bool cond_from_state = form == LOOP_TRIPS_COND && pc_draw_bool(c.ch, 40) && hold(&c, 1);
    bool fixed = !cond_graph_input && !cond_from_state;
    pc_value *ins[4] = {NULL, NULL, NULL, NULL};
    if (form != LOOP_COND && !(ins[0] = scalar_const(&c, PC_DTYPE_INT64, (double)trips, err)))
        return err->status;
    if (cond_graph_input) {
        pc_gen_value *b = pc_gen_input(g, PC_DTYPE_BOOL, 0, &one, 0, 1, err);
        if (!b) return err->status;
        ins[1] = b->value;
    } else if (form != LOOP_TRIPS && !(ins[1] = scalar_const(&c, PC_DTYPE_BOOL, 1, err))) {
        return err->status;
    }
    /* states: x, or with near sometimes h (the value the bodies also read by name); sometimes a second one,
     * a graph input or a constant of x's shape */
    range init_r[2] = {xr, {-1, 1}};
    ins[2] = x;
    if (near && pc_draw_bool(c.ch, 50)) {
        ins[2] = c.outer[0];
        init_r[0] = c.outer_range[0];
    }
    uint32_t n_state = pc_draw_bool(c.ch, 25) && hold(&c, 1) ? 2 : 1;
    if (n_state == 2) {
        pc_gen_value *s = pc_draw_bool(c.ch, 50)
                              ? pc_gen_input(g, PC_DTYPE_FLOAT, c.rank, c.dims, -1, 1, err)
                              : pc_gen_const(g, PC_DTYPE_FLOAT, c.rank, c.dims, -1, 1, err);
        if (!s) return err->status;
        ins[3] = s->value;
    }
    int64_t sdims[PC_MAX_RANK];
    sdims[0] = trips;
    memcpy(sdims + 1, c.dims, (size_t)c.rank * sizeof *sdims);
    bool scan = fixed && pc_draw_bool(c.ch, 50) && pc_gen_shape_fits(g, c.rank + 1, sdims) && hold(&c, 1);
    pc_node *n = node(&c, "Loop", 2 + n_state, ins, n_state + scan, err);
    body_state saved;
    if (!n || (st = body_open(&c, n, "body", &saved, err)) != PC_OK) return err->status;
    c.trips = trips;
    c.b.iter = body_input(&c, "iter", scalar_type(PC_DTYPE_INT64), err);
    pc_value *cond_in = c.b.iter ? body_input(&c, "cond_in", scalar_type(PC_DTYPE_BOOL), err) : NULL,
             *v_in[2] = {NULL, NULL}, *v_next[2] = {NULL, NULL}, *cond_out = NULL, *y = NULL;
    chain steps[2] = {{0}, {0}};
    range r[2] = {init_r[0], init_r[1]};
    if (!cond_in) st = err->status;
    for (uint32_t i = 0; i < n_state && st == PC_OK; i++)
        if (!(v_in[i] = body_input(&c, "state", &ins[2 + i]->type, err))) st = err->status;
    c.read_near = near;
    for (uint32_t i = 0; i < n_state && st == PC_OK; i++)
        st =
            chain_build(&c, v_in[i], 1 + pc_draw(c.ch, MAX_OPS - 1), true, &steps[i], &r[i], &v_next[i], err);
    range state_r[2];
    for (uint32_t i = 0; i < n_state; i++)
        state_r[i] = chain_iterate(&steps[i], init_r[i], trips);
    release(&c, 1 + cond_from_state);
    if (st == PC_OK && form == LOOP_COND) {
        pc_value *limit = scalar_const(&c, PC_DTYPE_INT64, (double)(trips - 1), err);
        st = limit ? binary(&c, "Less", c.b.iter, limit, (range){0, 1}, &cond_out, err) : err->status;
    } else if (st == PC_OK && cond_from_state) {
        st = computed_cond(&c, v_next[0], state_r[0], elements(c.rank, c.dims), true, &cond_out, err);
    } else if (st == PC_OK) {
        st = unary(&c, "Identity", cond_in, (range){0, 1}, &cond_out, err);
    }
    /* the scan output: Relu of the new state (draw 0), Neg of the old one, Identity of the new one */
    uint32_t scan_op = scan ? pc_draw(c.ch, 3) : 0;
    range scan_r = state_r[0];
    if (scan_op == 0) scan_r = (range){fmax(scan_r.lo, 0), fmax(scan_r.hi, 0)};
    if (scan_op == 1) scan_r = (range){-scan_r.hi, -scan_r.lo};
    release(&c, scan);
    if (st == PC_OK && scan)
        st = unary(&c,
                   scan_op == 0   ? "Relu"
                   : scan_op == 1 ? "Neg"
                                  : "Identity",
                   scan_op == 1 ? v_in[0] : v_next[0], scan_r, &y, err);
    if (st == PC_OK) st = body_output(&c, cond_out, err);
    for (uint32_t i = 0; i < n_state && st == PC_OK; i++)
        st = body_output(&c, v_next[i], err);
    if (st == PC_OK && scan) st = body_output(&c, y, err);
    body_close(&c, &saved);
    range out_r = scan ? scan_r : empty_range;
    for (uint32_t i = 0; i < n_state && st == PC_OK; i++) {
        st = pc_value_set_type(n->outputs[i], &ins[2 + i]->type, err);
        out_r = hull(out_r, state_r[i]);
    }
    if (st == PC_OK && scan) st = set_stacked_type(n->outputs[n_state], &y->type, 0, trips, err);
    if (st == PC_OK) st = end_control(&c, n, out_r, state_r[0], err);
    return check_budget(&c, "Loop", st, err);
}

/* ---- Scan ---------------------------------------------------------------------------------------------- */

pc_status pc_gen_control_scan(pc_gen *g, bool near, pc_error *err)
{
    cf_ctx c;
    ctx_init(&c, g, near);
    int32_t xrank;
    int64_t xdims[PC_MAX_RANK];
    range xr = {-1, 1};
    pc_value *x = data_input(&c, &xrank, xdims, err);
    if (!x) return err->status;
    int64_t len = xdims[0];
    c.rank = xrank - 1; /* the element: x without axis 0 */
    memcpy(c.dims, xdims + 1, (size_t)c.rank * sizeof *c.dims);
    pc_type elem = x->type;
    elem.shape.rank = c.rank;
    elem.shape.dims = c.rank ? x->type.shape.dims + 1 : NULL;
    /* the initial state: zeros (draw 0) or a graph input, of the element's shape */
    bool state_input = pc_draw_bool(c.ch, 50);
    range s0r = state_input ? xr : (range){0, 0};
    pc_gen_value *s0 = state_input ? pc_gen_input(g, PC_DTYPE_FLOAT, c.rank, c.dims, -1, 1, err)
                                   : pc_gen_const(g, PC_DTYPE_FLOAT, c.rank, c.dims, 0, 0, err);
    c.reserve = 2 + 2 * near; /* held: the Scan, the Add, near's h and the node reading it */
    pc_status st = s0 ? add_outer_values(&c, s0->value, s0r, err) : err->status;
    if (st != PC_OK) return st;
    pc_value *ins[2] = {s0->value, x};
    range init_r = s0r;
    if (near && pc_draw_bool(c.ch, 50)) { /* the state starts from h, which the body also reads by name */
        ins[0] = c.outer[0];
        init_r = c.outer_range[0];
    }
    bool scan_out = pc_draw_bool(c.ch, 50) && hold(&c, 1);
    pc_node *n = node(&c, "Scan", 2, ins, 1 + scan_out, err);
    if (!n) return err->status;
    /* attributes: num_scan_inputs; directions reversed sometimes; axes explicit sometimes (negative from
     * opset 11 on); the scan output stacked on a drawn axis sometimes */
    bool neg_ok = pc_gen_opset(g) >= 11;
    int64_t one = 1, axis_in = 0, axis_out = 0;
    if (pc_node_set_attr_int(n, "num_scan_inputs", 1, err) != PC_OK) return err->status;
    if (pc_draw_bool(c.ch, 30) && pc_node_set_attr_ints(n, "scan_input_directions", 1, &one, err) != PC_OK)
        return err->status;
    if (pc_draw_bool(c.ch, 25)) {
        axis_in = neg_ok && pc_draw_bool(c.ch, 50) ? -xrank : 0;
        if (pc_node_set_attr_ints(n, "scan_input_axes", 1, &axis_in, err) != PC_OK) return err->status;
    }
    if (scan_out && pc_draw_bool(c.ch, 30) &&
        pc_node_set_attr_ints(n, "scan_output_directions", 1, &one, err) != PC_OK)
        return err->status;
    int32_t stack_axis = 0;
    if (scan_out && pc_draw_bool(c.ch, 25)) {
        stack_axis = (int32_t)pc_draw_range(c.ch, 0, c.rank);
        axis_out = neg_ok && pc_draw_bool(c.ch, 50) ? stack_axis - (c.rank + 1) : stack_axis;
        if (pc_node_set_attr_ints(n, "scan_output_axes", 1, &axis_out, err) != PC_OK) return err->status;
    }
    body_state saved;
    if ((st = body_open(&c, n, "body", &saved, err)) != PC_OK) return st;
    pc_value *s_in = body_input(&c, "state", &ins[0]->type, err);
    pc_value *x_t = s_in ? body_input(&c, "elem", &elem, err) : NULL, *acc = NULL, *s_next = NULL, *y = NULL;
    chain steps = {0};
    range r = init_r;
    bool swap = pc_draw_bool(c.ch, 30);
    st = x_t ? record(&steps, STEP_ADD, xr, &r, err) : err->status;
    release(&c, 1);
    if (st == PC_OK) st = binary(&c, "Add", swap ? x_t : s_in, swap ? s_in : x_t, r, &acc, err);
    uint32_t n_ops = pc_draw(c.ch, 3);
    c.read_near = near;
    if (st == PC_OK) st = chain_build(&c, acc, n_ops ? n_ops : near, near, &steps, &r, &s_next, err);
    range state_r = chain_iterate(&steps, init_r, len), y_r = state_r;
    /* the scan output: Relu of the new state (draw 0), the element times a constant, Identity of the state */
    uint32_t y_op = scan_out ? pc_draw(c.ch, 3) : 0;
    release(&c, scan_out);
    if (st == PC_OK && scan_out && y_op == 1) {
        chain k = {0};
        y_r = xr;
        st = mul_const(&c, x_t, &k, &y_r, &y, err);
    } else if (st == PC_OK && scan_out) {
        if (y_op == 0) y_r = (range){fmax(y_r.lo, 0), fmax(y_r.hi, 0)};
        st = unary(&c, y_op == 0 ? "Relu" : "Identity", s_next, y_r, &y, err);
    }
    if (st == PC_OK) st = body_output(&c, s_next, err);
    if (st == PC_OK && scan_out) st = body_output(&c, y, err);
    body_close(&c, &saved);
    if (st == PC_OK) st = pc_value_set_type(n->outputs[0], &ins[0]->type, err);
    if (st == PC_OK && scan_out) st = set_stacked_type(n->outputs[1], &y->type, stack_axis, len, err);
    if (st == PC_OK) st = end_control(&c, n, scan_out ? hull(state_r, y_r) : state_r, state_r, err);
    return check_budget(&c, "Scan", st, err);
}
