/* The "patterns" family: the pattern library. Each unit builds the input pattern of one rewrite kind
 * (PC_REWRITE_KINDS) on fresh graph inputs, with random variation (ranks, dims, perms, axes, operand order,
 * opset forms), or one of its near misses: the same pattern with one condition off (a second consumer, a
 * graph output on an intermediate, a constant or attribute the pass must refuse, different annotations, a
 * Transpose with nothing to cancel against). A canonical unit records the kind in the model
 * (PC_EXPECT_FIRED_KEY, gen.h), and the rewrite-fired property holds the pass to it: a rewrite that silently
 * stops firing fails the suite.
 *
 * Units are disjoint: each reads its own graph inputs and constants, so one unit's rewrite cannot consume
 * another's pattern, and expectations add up. Draw 0 everywhere: opset 17, one unit (the first row:
 * Neg(Neg(x)) on a rank-1 input of one element, canonical). A unit whose opset or max_rank rule does not
 * hold is not drawn. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "generators/gen_control.h"
#include "generators/gen_ops.h"
#include "generators/gen_quant.h"
#include "core/internal.h"

/* Opsets the family draws (0: 17). 20 has ai.onnx Gelu (gelu_fused), 15 CastLike and Shape start/end, 13
 * moves Unsqueeze/Split axes and per-axis Q/DQ in, 18 Split's num_outputs, 11 the attribute forms; 7 and 5
 * the first versions of the units that exist there (Clip-6's attribute bounds, Dropout-7, Reshape-5, the
 * folds), which no other family draws. */
static const int64_t opsets[] = {17, 13, 20, 15, 18, 11, 7, 5};
static const uint32_t opset_weights[] = {4, 3, 4, 2, 2, 1, 1, 1};

/* Percent of units built as a near miss. */
enum { NEAR_PERCENT = 40, MAX_UNITS = 3 };

typedef struct unit_ctx {
    pc_gen *g;
    pc_genq q; /* quantized helpers (gen_quant.h) */
    bool near; /* build a near miss */
    int64_t opset;
} unit_ctx;

typedef pc_status (*unit_fn)(unit_ctx *u, pc_error *err);

static void expect(unit_ctx *u, pc_rewrite_kind k)
{
    u->g->expect.fired[k]++;
}

/* A near-miss unit whose one condition off is certain to be the reason the pass reports. */
static void expect_near(unit_ctx *u, pc_rewrite_kind k, pc_miss_reason why)
{
    u->g->expect.near[k][why]++;
}

/* ---- small builders ----------------------------------------------------------------------------------- */

static uint64_t dims_elements(int32_t rank, const int64_t *dims)
{
    uint64_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= (uint64_t)dims[i];
    return n;
}

/* Lowers the largest dims (not below min_dim) until the shape fits cfg->max_elements. */
static void fit_dims(unit_ctx *u, int32_t rank, int64_t min_dim, int64_t *dims)
{
    while (!pc_gen_shape_fits(u->g, rank, dims)) {
        int32_t big = -1;
        for (int32_t i = 0; i < rank; i++)
            if (dims[i] > min_dim && (big < 0 || dims[i] > dims[big])) big = i;
        if (big < 0) return; /* a --max-elements below min_dim^rank: the smallest shape the unit can use */
        dims[big]--;
    }
}

/* A float input of rank `rank` with every dim in [min_dim, 3] (draw 0: min_dim), values in [-1, 1]. */
static pc_value *float_input(unit_ctx *u, int32_t rank, int64_t min_dim, int64_t *dims, pc_error *err)
{
    for (int32_t i = 0; i < rank; i++)
        dims[i] = pc_draw_range(u->g->ch, min_dim, 3);
    fit_dims(u, rank, min_dim, dims);
    pc_gen_value *v = pc_gen_input(u->g, PC_DTYPE_FLOAT, rank, dims, -1, 1, err);
    return v ? v->value : NULL;
}

/* A rank in [lo, hi] within cfg->max_rank (the unit's min_rank row keeps lo within it). */
static int32_t draw_rank(unit_ctx *u, int32_t lo, int32_t hi)
{
    if (hi > u->g->cfg->max_rank) hi = u->g->cfg->max_rank;
    return (int32_t)pc_draw_range(u->g->ch, lo, hi);
}

/* A shape of rank in [min_r, max_r] with dims in [1, max_dim], shrunk to fit max_elements; *n (when given)
 * its element count. Returns the rank. */
static int32_t small_shape(unit_ctx *u, int32_t min_r, int32_t max_r, int64_t max_dim, int64_t *dims,
                           uint64_t *n)
{
    int32_t r = draw_rank(u, min_r, max_r);
    for (int32_t i = 0; i < r; i++)
        dims[i] = pc_draw_range(u->g->ch, 1, max_dim);
    fit_dims(u, r, 1, dims);
    if (n) {
        *n = 1;
        for (int32_t i = 0; i < r; i++)
            *n *= (uint64_t)dims[i];
    }
    return r;
}

static pc_node *node(unit_ctx *u, const char *op, uint32_t n_in, pc_value *const *ins, uint32_t n_out,
                     pc_error *err)
{
    return pc_gen_node_begin(u->g, op, "", n_in, ins, n_out, err);
}

/* Ends n (shape inference) with output interval [lo, hi]; *out its output 0. */
static pc_status end(unit_ctx *u, pc_node *n, double lo, double hi, pc_value **out, pc_error *err)
{
    if (!n) return err->status;
    pc_status st = pc_gen_node_end(u->g, n, lo, hi, err);
    if (st == PC_OK && out) *out = n->outputs[0];
    return st;
}

static pc_status unary(unit_ctx *u, const char *op, pc_value *x, double lo, double hi, pc_value **out,
                       pc_error *err)
{
    return end(u, node(u, op, 1, &x, 1, err), lo, hi, out, err);
}

static pc_value *ints_const_as(unit_ctx *u, pc_dtype dtype, int32_t rank, size_t n, const int64_t *vals,
                               pc_error *err)
{
    int64_t d = (int64_t)n;
    pc_gen_value *v = pc_gen_const_i64(u->g, dtype, rank, &d, vals, err);
    return v ? v->value : NULL;
}

static pc_value *ints_const(unit_ctx *u, int32_t rank, size_t n, const int64_t *vals, pc_error *err)
{
    return ints_const_as(u, PC_DTYPE_INT64, rank, n, vals, err);
}

/* Constant ints, and now and then (draw 0: never) a computed twin, Add(constant, a scalar graph input holding
 * 0), which no pass folds: the form a Transpose handler must take without reading the values (a Gather on the
 * perm, as ORT inserts). The node is built on the constant, so shape inference gives its output a static
 * type (kept as the declared one, as exporters write value_info), and then reads the twin (use_twins). */
static pc_value *ints_maybe_computed(unit_ctx *u, bool allowed, pc_dtype dtype, size_t n, const int64_t *vals,
                                     pc_value **twin, pc_error *err)
{
    *twin = NULL;
    pc_value *c = ints_const_as(u, dtype, 1, n, vals, err);
    if (!c || !allowed || !pc_draw_bool(u->g->ch, 20)) return c;
    pc_gen_value *zero = pc_gen_input(u->g, dtype, 0, NULL, 0, 0, err);
    if (!zero) return NULL;
    pc_value *ins[2] = {c, zero->value};
    int64_t lo = 0, hi = 0;
    for (size_t k = 0; k < n; k++) {
        lo = k == 0 || vals[k] < lo ? vals[k] : lo;
        hi = k == 0 || vals[k] > hi ? vals[k] : hi;
    }
    if (end(u, node(u, "Add", 2, ins, 1, err), (double)lo, (double)hi, twin, err) != PC_OK) return NULL;
    return c;
}

static pc_status use_twins(pc_node *n, pc_value *const *twins, uint32_t count, pc_error *err)
{
    bool any = false;
    for (uint32_t i = 0; n && i < count; i++)
        if (twins[i] && i < n->n_inputs) {
            pc_status st = pc_node_set_input(n, i, twins[i], err);
            if (st != PC_OK) return st;
            any = true;
        }
    /* the saved model declares the output types inference could no longer find (value_info) */
    for (uint32_t o = 0; any && o < n->n_outputs; o++)
        if (n->outputs[o] && !n->outputs[o]->is_graph_output) n->outputs[o]->has_value_info = true;
    return PC_OK;
}

static pc_status annotate(pc_node *n, const char *ann, pc_error *err)
{
    return pc_node_set_metadata(n, PC_LAYER_ANN_KEY, ann, err);
}

/* A random perm of rank r that is not the identity (r >= 2). */
static void draw_perm(unit_ctx *u, int32_t r, int64_t *perm)
{
    for (int32_t i = 0; i < r; i++)
        perm[i] = i;
    for (int32_t i = 0; i + 1 < r; i++) {
        int32_t j = i + (int32_t)pc_draw(u->g->ch, (uint32_t)(r - i));
        int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    bool identity = true;
    for (int32_t i = 0; i < r; i++)
        identity = identity && perm[i] == i;
    if (identity) { /* rotate by one: still simple, never the identity */
        for (int32_t i = 0; i < r; i++)
            perm[i] = (i + 1) % r;
    }
}

static void perm_invert(const int64_t *p, int32_t r, int64_t *inv)
{
    for (int32_t i = 0; i < r; i++)
        inv[p[i]] = i;
}

/* The perm a push leaves on the output of an op that drops axis `a` of its (transposed) input: p without
 * entry a, renumbered. */
static void perm_drop(const int64_t *p, int32_t r, int32_t a, int64_t *out)
{
    int32_t k = 0;
    for (int32_t i = 0; i < r; i++)
        if (i != a) out[k++] = p[i] - (p[i] > p[a]);
}

static pc_status transpose(unit_ctx *u, pc_value *x, int32_t r, const int64_t *perm, double lo, double hi,
                           pc_value **out, pc_error *err)
{
    pc_node *n = node(u, "Transpose", 1, &x, 1, err);
    if (n && pc_node_set_attr_ints(n, "perm", (size_t)r, perm, err) != PC_OK) return err->status;
    return end(u, n, lo, hi, out, err);
}

/* A second reader of v, so v stays when its producer's rewrite would remove it: Relu for floats, a Cast to
 * float for the rest. */
static pc_status share(unit_ctx *u, pc_value *v, pc_error *err)
{
    if (v->type.elem == PC_DTYPE_FLOAT) return unary(u, "Relu", v, 0, INFINITY, NULL, err);
    pc_node *n = node(u, "Cast", 1, &v, 1, err);
    if (n && pc_node_set_attr_int(n, "to", PC_DTYPE_FLOAT, err) != PC_OK) return err->status;
    return end(u, n, -INFINITY, INFINITY, NULL, err);
}

/* Closes a pushed Transpose: the Transpose that cancels the one a push through the op leaves on its output
 * y (out_perm). Canonical: the push removes both. Near miss: t (the pushed Transpose) and y also have
 * another reader each, so the push would keep t and add a Transpose for y's other reader: it saves nothing
 * and the cost model refuses it. */
static pc_status close_perm(unit_ctx *u, pc_value *t, pc_value *y, int32_t r, const int64_t *out_perm,
                            double lo, double hi, pc_error *err)
{
    pc_status st = PC_OK;
    if (r >= 2) {
        int64_t inv[PC_MAX_RANK];
        perm_invert(out_perm, r, inv);
        st = transpose(u, y, r, inv, lo, hi, NULL, err);
    }
    if (st == PC_OK && u->near) st = share(u, t, err);
    if (st == PC_OK && u->near) st = share(u, y, err);
    return st;
}

/* ---- level 0 eliminations --------------------------------------------------------------------------------
 */

/* Neg(Neg(x)) -> Relu. Near: the Negs carry different annotations ("annotation-ep"); or, firing all the same,
 * the outer Neg is a graph output whose replacement is a graph input (an Identity keeps the output's name).
 */
static pc_status unit_neg_neg(unit_ctx *u, pc_error *err)
{
    int64_t dims[PC_MAX_RANK];
    int32_t r = draw_rank(u, 1, 4);
    pc_value *x = float_input(u, r, 1, dims, err), *a = NULL, *b = NULL;
    if (!x) return err->status;
    pc_status st = unary(u, "Neg", x, -1, 1, &a, err);
    if (st == PC_OK) st = unary(u, "Neg", a, -1, 1, &b, err);
    if (st != PC_OK) return st;
    if (!u->near) {
        expect(u, PC_RW_PRUNE_NEG_NEG);
        return unary(u, pc_draw_bool(u->g->ch, 50) ? "Abs" : "Relu", b, 0, 1, NULL, err);
    }
    if (pc_draw_bool(u->g->ch, 50)) { /* b is a graph output: an Identity of x keeps its name */
        expect(u, PC_RW_PRUNE_NEG_NEG);
        return PC_OK;
    }
    pc_node *inner = a->producer, *outer = b->producer;
    if ((st = annotate(outer, "layer_b", err)) != PC_OK) return st;
    if (pc_draw_bool(u->g->ch, 50) && (st = annotate(inner, "layer_a", err)) != PC_OK) return st;
    expect_near(u, PC_RW_PRUNE_NEG_NEG, PC_MISS_ANNOTATION);
    return unary(u, "Relu", b, 0, 1, NULL, err);
}

/* Dropout(x) in inference mode -> Relu: at opset 11 with its ratio attribute or none, from opset 12 with the
 * ratio input given or omitted and training_mode omitted or a constant false (eliminate_dropout removes it).
 * Near: training_mode a constant true with ratio 0 (training that drops nothing: kept, "attribute"),
 * training_mode a bool graph input fed false ("constant"), or the mask output read (a graph output,
 * "shared"). */
static pc_status unit_dropout(unit_ctx *u, pc_error *err)
{
    int64_t dims[PC_MAX_RANK];
    int32_t r = draw_rank(u, 1, 4);
    pc_value *x = float_input(u, r, 1, dims, err);
    if (!x) return err->status;
    bool inputs = u->opset >= 12;
    uint32_t how = !u->near ? 0 : inputs ? 1 + pc_draw(u->g->ch, 3) : 3; /* near: 1 true, 2 input, 3 mask */
    pc_value *ins[3] = {x, NULL, NULL};
    uint32_t n_in = 1;
    float ratio = how == 1 ? 0.0f : pc_draw_bool(u->g->ch, 50) ? 0.5f : 0.1f;
    int64_t one = 1, training = how == 1;
    if (inputs && (how == 1 || pc_draw_bool(u->g->ch, 50))) {
        pc_gen_value *rv = pc_gen_const_f32(u->g, PC_DTYPE_FLOAT, 0, &one, &ratio, err);
        if (!rv) return err->status;
        ins[n_in++] = rv->value;
    }
    if (inputs && (how == 1 || how == 2 || pc_draw_bool(u->g->ch, 50))) {
        if (n_in == 1) n_in++; /* the ratio omitted: an empty input */
        pc_gen_value *tv = how == 2 ? pc_gen_input(u->g, PC_DTYPE_BOOL, 0, NULL, 0, 0, err)
                                    : pc_gen_const_i64(u->g, PC_DTYPE_BOOL, 0, NULL, &training, err);
        if (!tv) return err->status;
        ins[n_in++] = tv->value;
    }
    pc_node *n = node(u, "Dropout", n_in, ins, how == 3 ? 2 : 1, err);
    if (n && !inputs && pc_draw_bool(u->g->ch, 50) && pc_node_set_attr_float(n, "ratio", ratio, err) != PC_OK)
        return err->status;
    pc_value *y = NULL;
    pc_status st = end(u, n, -1, 1, &y, err);
    if (st != PC_OK) return st;
    static const pc_miss_reason why[] = {PC_MISS_OTHER, PC_MISS_ATTRIBUTE, PC_MISS_NOT_CONSTANT,
                                         PC_MISS_SHARED};
    if (how)
        expect_near(u, PC_RW_DROPOUT_REMOVED, why[how]);
    else
        expect(u, PC_RW_DROPOUT_REMOVED);
    return unary(u, "Relu", y, 0, 1, NULL, err);
}

/* Reshape(Reshape(x, s1), s2) -> one Reshape (fuse_reshape), s2 a [n, 1], a [1, -1] or a [0, rest] whose 0
 * copies an intermediate dim. Near: the intermediate has a second reader ("shared"), or x holds no elements
 * and s2 copies the intermediate's 0 dim with a 0, which the fused Reshape would read as "copy" again
 * ("type-shape"). */
static pc_status unit_reshape(unit_ctx *u, pc_error *err)
{
    int64_t dims[PC_MAX_RANK], mid[2], s2[2];
    uint32_t how = u->near ? 1 + pc_draw(u->g->ch, 2) : 0; /* near: 1 shared, 2 empty */
    int32_t r = draw_rank(u, 1, 3);
    pc_value *x = NULL;
    if (how == 2) { /* x [d0, 0] */
        r = 2;
        dims[0] = pc_draw_range(u->g->ch, 1, 3);
        dims[1] = 0;
        pc_gen_value *xv = pc_gen_input(u->g, PC_DTYPE_FLOAT, r, dims, -1, 1, err);
        x = xv ? xv->value : NULL;
    } else {
        x = float_input(u, r, 1, dims, err);
    }
    if (!x) return err->status;
    /* s1: x's elements as [n] or [last dim, n / last dim]; empty x: [d0, 0] */
    int64_t n_el = (int64_t)dims_elements(r, dims);
    int32_t mr = 2;
    if (how == 2) {
        mid[0] = dims[0];
        mid[1] = 0;
    } else if (r >= 2 && pc_draw_bool(u->g->ch, 50)) {
        mid[0] = dims[r - 1];
        mid[1] = n_el / dims[r - 1];
    } else {
        mr = 1;
        mid[0] = n_el;
    }
    pc_value *c1 = ints_const(u, 1, (size_t)mr, mid, err), *m = NULL, *y = NULL;
    if (!c1) return err->status;
    pc_value *ins[2] = {x, c1};
    pc_status st = end(u, node(u, "Reshape", 2, ins, 1, err), -1, 1, &m, err);
    if (st != PC_OK) return st;
    uint32_t form = how == 2 ? 3 : pc_draw(u->g->ch, 3); /* 0 [n, 1], 1 [1, -1], 2 [0, n / mid0], 3 [d0, 0] */
    s2[0] = form == 0 ? n_el : form == 1 ? 1 : form == 2 ? 0 : dims[0];
    s2[1] = form == 0 ? 1 : form == 1 ? -1 : form == 2 ? n_el / mid[0] : 0;
    pc_value *c2 = ints_const(u, 1, 2, s2, err);
    if (!c2) return err->status;
    ins[0] = m;
    ins[1] = c2;
    if ((st = end(u, node(u, "Reshape", 2, ins, 1, err), -1, 1, &y, err)) != PC_OK) return st;
    if (how == 1)
        expect_near(u, PC_RW_RESHAPE_FUSED, PC_MISS_SHARED);
    else if (how == 2)
        expect_near(u, PC_RW_RESHAPE_FUSED, PC_MISS_TYPE);
    else
        expect(u, PC_RW_RESHAPE_FUSED);
    if (how == 1 && (st = share(u, m, err)) != PC_OK) return st;
    return unary(u, "Relu", y, 0, 1, NULL, err);
}

/* CastLike(x, like) with like of x's type (opset >= 15) -> Relu. Near: the CastLike is a graph output of a
 * graph input (the bypass cannot keep its name), or like is of another type (a real conversion). */
static pc_status unit_castlike(unit_ctx *u, pc_error *err)
{
    int64_t dims[PC_MAX_RANK], one = 1;
    int32_t r = draw_rank(u, 1, 4);
    pc_value *x = float_input(u, r, 1, dims, err);
    /* near: half the time a like of another type (double, or int32: x in [-1, 1] truncates; not with special
     * values, whose conversion to an integer is undefined): a real conversion the pass must keep */
    uint32_t how = u->near ? pc_draw(u->g->ch, 2) : 0;
    bool to_int = how == 1 && pc_draw_bool(u->g->ch, 50) && !u->g->cfg->allow_special;
    pc_dtype like_type = how == 1 ? (to_int ? PC_DTYPE_INT32 : PC_DTYPE_DOUBLE) : PC_DTYPE_FLOAT;
    int64_t zero = 0;
    pc_gen_value *lv = !x ? NULL
                       : like_type == PC_DTYPE_FLOAT
                           ? pc_gen_const_f32(u->g, like_type, pc_draw_bool(u->g->ch, 50) ? 1 : 0, &one,
                                              (const float[]){0.5f}, err)
                           : pc_gen_const_i64(u->g, like_type, 0, &one, &zero, err);
    if (!lv) return err->status;
    pc_value *ins[2] = {x, lv->value}, *y = NULL;
    pc_status st = end(u, node(u, "CastLike", 2, ins, 1, err), -1, 1, &y, err);
    if (st != PC_OK) return st;
    if (how == 1) { /* read as float again, so every case ends in float outputs */
        pc_node *c = node(u, "Cast", 1, &y, 1, err);
        if (c && pc_node_set_attr_int(c, "to", PC_DTYPE_FLOAT, err) != PC_OK) return err->status;
        return end(u, c, -1, 1, NULL, err);
    }
    if (u->near) return st;
    expect(u, PC_RW_CASTLIKE_REMOVED);
    return unary(u, "Relu", y, 0, 1, NULL, err);
}

static pc_status cast(unit_ctx *u, pc_value *x, pc_dtype to, double lo, double hi, pc_value **out,
                      pc_error *err);

/* x * 1, 1 * x, x / 1, x - 0, x + (-0) -> Relu (floats) or Cast to float, in every element type Add, Sub, Mul
 * and Div take at the opset (integers: x + 0 too, their 0 has no sign; float16 and bfloat16 too), with a
 * constant of one element or many (the pass reads each element by its type's width). Near: the constant
 * broadcasts x to a larger shape, or is +0 added to a float (-0 + 0 is +0: not neutral), or holds one element
 * off the neutral value at a drawn position (or, in a half type, the other half type's bits of 1 in every
 * element), or the result is a graph output read straight from a graph input. */
static pc_status unit_prune(unit_ctx *u, pc_error *err)
{
    static const struct {
        const char *op;
        float value;
        bool const_first;
        pc_rewrite_kind kind;
    } forms[] = {
        {"Mul", 1.0f, false, PC_RW_PRUNE_MUL_DIV_ONE},   {"Mul", 1.0f, true, PC_RW_PRUNE_MUL_DIV_ONE},
        {"Div", 1.0f, false, PC_RW_PRUNE_MUL_DIV_ONE},   {"Sub", 0.0f, false, PC_RW_PRUNE_ADD_SUB_ZERO},
        {"Add", -0.0f, false, PC_RW_PRUNE_ADD_SUB_ZERO}, {"Add", -0.0f, true, PC_RW_PRUNE_ADD_SUB_ZERO},
    };
    /* float first (the all-zero draw); 8- and 16-bit integers from opset 14 */
    static const pc_dtype types[] = {PC_DTYPE_FLOAT,  PC_DTYPE_DOUBLE, PC_DTYPE_INT32, PC_DTYPE_INT64,
                                     PC_DTYPE_UINT32, PC_DTYPE_UINT64, PC_DTYPE_INT8,  PC_DTYPE_UINT8,
                                     PC_DTYPE_INT16,  PC_DTYPE_UINT16};
    uint32_t f = pc_draw(u->g->ch, sizeof forms / sizeof forms[0]);
    uint32_t n_types = u->opset >= 14 ? sizeof types / sizeof types[0] : 6;
    pc_dtype dt = types[pc_draw(u->g->ch, n_types)]; /* float is also the float family's */
    /* the half types: 1 is 0x3c00 in float16 and 0x3f80 in bfloat16 (Add-13 takes bfloat16) */
    bool half = pc_draw_bool(u->g->ch, 15);
    if (half) dt = u->opset >= 13 && pc_draw_bool(u->g->ch, 50) ? PC_DTYPE_BFLOAT16 : PC_DTYPE_FLOAT16;
    bool is_float = dt == PC_DTYPE_FLOAT || dt == PC_DTYPE_DOUBLE || half;
    bool is_unsigned =
        dt == PC_DTYPE_UINT8 || dt == PC_DTYPE_UINT16 || dt == PC_DTYPE_UINT32 || dt == PC_DTYPE_UINT64;
    /* x's values: floats [-1, 1]; integers [-5, 5], unsigned [1, 9] (x - 1 must not wrap) */
    double lo = is_float ? -1 : is_unsigned ? 1 : -5, hi = is_float ? 1 : is_unsigned ? 9 : 5;
    int64_t dims[PC_MAX_RANK];
    int32_t r = small_shape(u, 1, 3, 3, dims, NULL);
    pc_gen_value *xv = pc_gen_input(u->g, dt, r, dims, lo, hi, err);
    if (!xv) return err->status;
    pc_value *x = xv->value;
    uint32_t how = u->near ? pc_draw(u->g->ch, 6) : 0;
    if (how > 3) how = 3; /* half the near misses hold one element off: each element read by its width */
    float value = forms[f].value;
    int32_t cr = (int32_t)pc_draw_range(u->g->ch, 0, r); /* the constant's rank: trailing dims of x */
    int64_t cdims[PC_MAX_RANK];
    for (int32_t i = 0; i < cr; i++)
        cdims[i] = pc_draw_bool(u->g->ch, 50) ? 1 : dims[r - cr + i];
    if (how == 1 && (r + 1 > u->g->cfg->max_rank || 2 * dims_elements(r, dims) > u->g->cfg->max_elements))
        how = 0;    /* no room to broadcast x up: the graph-output near miss instead */
    if (how == 1) { /* broadcasts x up: a new leading dim of 2 */
        cr = r + 1;
        cdims[0] = 2;
        for (int32_t i = 0; i < r; i++)
            cdims[i + 1] = dims[i];
    }
    if (how == 2 && (!is_float || strcmp(forms[f].op, "Add") != 0)) how = 3; /* +0 is neutral there */
    if (how == 3) { /* one element off: the constant takes x's whole shape, which must hold two or more */
        cr = r;
        memcpy(cdims, dims, (size_t)r * sizeof *dims);
        if (dims_elements(r, dims) < 2) how = 0;
    }
    if (how == 2) value = 0.0f; /* +0 added to a float: not neutral */
    uint64_t n = dims_elements(cr, cdims);
    if (n > 64)
        return pc_error_set(err, PC_ERR_INTERNAL, "patterns: prune constant of %llu elements",
                            (unsigned long long)n);
    float fv[64];
    int64_t iv[64];
    for (uint64_t i = 0; i < n; i++) {
        fv[i] = value;
        iv[i] = value == 1.0f ? 1 : 0;
    }
    /* off by a value that keeps y in range: 2 for Mul and Div, 1 (floats 0.5) for Add and Sub */
    bool scales = forms[f].op[0] == 'M' || forms[f].op[0] == 'D';
    double ylo = lo, yhi = hi;
    if (how == 3) {
        uint64_t at = pc_draw(u->g->ch, (uint32_t)n);
        fv[at] = scales ? 2.0f : 0.5f;
        iv[at] = scales ? 2 : 1;
        if (scales && forms[f].op[0] == 'M') ylo = 2 * lo < lo ? 2 * lo : lo, yhi = 2 * hi;
        if (!scales) ylo = lo - 1, yhi = hi + 1;
        /* a half type's constant holding the other half type's bits of 1 in every element: 0x3f80 is
         * 1.875 in float16, 0x3c00 is 0.0078125 in bfloat16 */
        if (half && scales && pc_draw_bool(u->g->ch, 50)) {
            float other_one = dt == PC_DTYPE_FLOAT16 ? 1.875f : 0.0078125f;
            for (uint64_t i = 0; i < n; i++)
                fv[i] = other_one;
            if (forms[f].op[0] == 'D' && other_one < 1) ylo = lo / other_one, yhi = hi / other_one;
        }
    }
    pc_gen_value *cv = is_float ? pc_gen_const_f32(u->g, dt, cr, cdims, fv, err)
                                : pc_gen_const_i64(u->g, dt, cr, cdims, iv, err);
    if (!cv) return err->status;
    pc_value *c = cv->value;
    pc_value *ins[2] = {forms[f].const_first ? c : x, forms[f].const_first ? x : c}, *y = NULL;
    pc_status st = end(u, node(u, forms[f].op, 2, ins, 1, err), ylo, yhi, &y, err);
    if (st != PC_OK || (u->near && how == 0)) return st;
    if (!u->near) expect(u, forms[f].kind);
    if (dt == PC_DTYPE_FLOAT) return unary(u, "Relu", y, 0, yhi, NULL, err);
    return cast(u, y, PC_DTYPE_FLOAT, ylo, yhi, NULL, err);
}

/* ---- level 0/1 fusions ------------------------------------------------------------------------------------
 */

/* Relu -> Clip (relu_clip_merged) or Clip -> Relu (clip_relu_merged), Clip bounds as attributes (opset < 11)
 * or constant inputs, on float or double. The pair is one Clip exactly (-0 included) when min > 0, or for
 * Relu -> Clip when max < 0 (fuse_relu_clip.c): the canonical bounds. Near: min <= 0 (the -0 rule refuses),
 * the first node's output has a second consumer, Clip's min is a graph input (not constant), the two nodes
 * carry different annotations, or x is of a type the pass leaves alone (float16; signed integers from
 * opset 14, where Relu takes them). */
static pc_status unit_relu_clip(unit_ctx *u, pc_error *err)
{
    static const pc_dtype ints[] = {PC_DTYPE_INT32, PC_DTYPE_INT64, PC_DTYPE_INT8, PC_DTYPE_INT16};
    bool relu_first = !pc_draw_bool(u->g->ch, 50);
    int64_t dims[PC_MAX_RANK];
    int32_t r = draw_rank(u, 1, 4);
    uint32_t how = u->near ? pc_draw(u->g->ch, 5) : 5;
    pc_dtype dt = PC_DTYPE_FLOAT;
    if (how == 5 && pc_draw_bool(u->g->ch, 25)) dt = PC_DTYPE_DOUBLE;
    if (how == 4)
        dt = u->opset >= 14 && pc_draw_bool(u->g->ch, 50) ? ints[pc_draw(u->g->ch, 4)] : PC_DTYPE_FLOAT16;
    bool is_int = dt != PC_DTYPE_FLOAT && dt != PC_DTYPE_DOUBLE && dt != PC_DTYPE_FLOAT16;
    double xlo = is_int ? -5 : -1, xhi = is_int ? 5 : 1;
    for (int32_t i = 0; i < r; i++)
        dims[i] = pc_draw_range(u->g->ch, 1, 3);
    fit_dims(u, r, 1, dims);
    pc_gen_value *xv =
        pc_gen_input(u->g, dt == PC_DTYPE_FLOAT16 ? PC_DTYPE_FLOAT : dt, r, dims, xlo, xhi, err);
    if (!xv) return err->status;
    pc_value *x = xv->value;
    pc_status st;
    if (dt == PC_DTYPE_FLOAT16 && (st = cast(u, x, PC_DTYPE_FLOAT16, xlo, xhi, &x, err)) != PC_OK) return st;
    if (how == 1 && u->opset < 11) how = 0; /* attribute bounds are always constant */
    float lo = 0.125f * (float)(1 + pc_draw(u->g->ch, 4)),
          hi = lo + 0.25f * (float)(1 + pc_draw(u->g->ch, 3));
    if (relu_first && pc_draw_bool(u->g->ch, 30)) { /* max < 0: every value ends at max */
        hi = -0.125f * (float)(1 + pc_draw(u->g->ch, 4));
        lo = hi - 0.5f;
    }
    if (how == 3) { /* min <= 0 */
        lo = -0.25f * (float)pc_draw(u->g->ch, 3);
        hi = 0.5f;
    }
    if (is_int) { /* whole bounds inside x's range */
        lo = (float)(1 + pc_draw(u->g->ch, 2));
        hi = lo + (float)(1 + pc_draw(u->g->ch, 2));
    }
    pc_value *y = NULL, *z = NULL;
    pc_node *clip_node = NULL;
    for (int step = 0; step < 2; step++) {
        bool relu = (step == 0) == relu_first;
        pc_value *in = step == 0 ? x : y;
        if (relu) {
            st = unary(u, "Relu", in, 0, xhi, step == 0 ? &y : &z, err);
        } else {
            pc_value *ins[3] = {in, NULL, NULL};
            uint32_t n_in = 1;
            if (u->opset >= 11) {
                int64_t one = 1;
                if (how == 1) { /* in [0.125, 0.25]: below every drawn max */
                    pc_gen_value *m = pc_gen_input(u->g, PC_DTYPE_FLOAT, 0, &one, 0.125, 0.25, err);
                    if (!m) return err->status;
                    ins[1] = m->value;
                    hi = 0.5f;
                } else {
                    pc_gen_value *m = pc_gen_const_f32(u->g, dt, 0, &one, &lo, err);
                    ins[1] = m ? m->value : NULL;
                }
                pc_gen_value *m = ins[1] ? pc_gen_const_f32(u->g, dt, 0, &one, &hi, err) : NULL;
                if (!m) return err->status;
                ins[2] = m->value;
                n_in = 3;
            }
            clip_node = node(u, "Clip", n_in, ins, 1, err);
            if (clip_node && u->opset < 11 &&
                (pc_node_set_attr_float(clip_node, "min", lo, err) != PC_OK ||
                 pc_node_set_attr_float(clip_node, "max", hi, err) != PC_OK))
                return err->status;
            st = end(u, clip_node, xlo, xhi, step == 0 ? &y : &z, err);
        }
        if (st != PC_OK) return st;
    }
    if (how == 0) st = unary(u, "Sigmoid", y, 0, 1, NULL, err); /* a second consumer of the first */
    if (how == 2) st = annotate(clip_node, "layer_clip", err);
    if (st != PC_OK) return st;
    pc_rewrite_kind kind = relu_first ? PC_RW_RELU_CLIP_MERGED : PC_RW_CLIP_RELU_MERGED;
    /* each near miss has one certain reason: shared, a bound from a graph input, another annotation, a
     * min <= 0 (the -0 rule reads it as a constant it refuses), a type the pass leaves alone */
    static const pc_miss_reason why[] = {PC_MISS_SHARED, PC_MISS_NOT_CONSTANT, PC_MISS_ANNOTATION,
                                         PC_MISS_NOT_CONSTANT, PC_MISS_TYPE};
    if (how == 5)
        expect(u, kind);
    else
        expect_near(u, kind, why[how]);
    if (dt == PC_DTYPE_FLOAT) return unary(u, "Abs", z, 0, xhi, NULL, err);
    if ((st = unary(u, "Abs", z, 0, xhi, &z, err)) != PC_OK) return st;
    return cast(u, z, PC_DTYPE_FLOAT, 0, xhi, NULL, err); /* every case ends in float outputs */
}

/* The weights of a Conv on x dims xd (rank r): wd = [m, C, k...] with each kernel dim drawn in [1, min(dim,
 * 2)] (no pads, unit strides: the output keeps every dim >= 1); yd (when given) the output's spatial dims.
 * Returns the taps per output element (C * prod k), which bounds the output by the product of the input
 * bounds. */
static int64_t conv_weight_dims(unit_ctx *u, int32_t r, const int64_t *xd, int64_t m, int64_t *wd,
                                int64_t *yd)
{
    wd[0] = m;
    wd[1] = xd[1];
    int64_t taps = xd[1];
    for (int32_t i = 2; i < r; i++) {
        wd[i] = pc_draw_range(u->g->ch, 1, xd[i] < 2 ? xd[i] : 2);
        if (yd) yd[i] = xd[i] - wd[i] + 1;
        taps *= wd[i];
    }
    return taps;
}

/* Conv(x, W[, B]) -> BatchNormalization in inference form -> one Conv, at every BN version from 7: before
 * opset 9 `spatial` absent or 1, from 14 `training_mode` absent or 0, epsilon and momentum given or not.
 * Near: a BN parameter that is a graph input, or W one (constant); the Conv output read by a Relu too
 * (shared); before opset 9 spatial=0 with per-activation parameters [M, spatial...], from 14
 * training_mode=1 (attribute; between, a parameter input again); from 15 a parameter pair in double
 * (type-shape). */
static pc_status unit_conv_bn(unit_ctx *u, pc_error *err)
{
    pc_gen *g = u->g;
    int32_t r = draw_rank(u, 3, 4);
    uint32_t how = u->near ? pc_draw(g->ch, 5) : 0;
    bool attr_near = u->near && how == 3 && (u->opset < 9 || u->opset >= 14);
    if (u->near && how == 3 && !attr_near) how = 0;
    if (u->near && how == 4 && u->opset < 15) how = 0;     /* BN-15 types its parameter pairs apart from X */
    uint32_t wide_pair = how == 4 ? pc_draw(g->ch, 2) : 2; /* scale and B, or mean and var, in double */
    int64_t xd[PC_MAX_RANK], wd[PC_MAX_RANK], yd[PC_MAX_RANK], m = pc_draw_range(g->ch, 1, 3);
    pc_value *x = float_input(u, r, 1, xd, err);
    if (!x) return err->status;
    yd[0] = m;
    int64_t taps = conv_weight_dims(u, r, xd, m, wd, yd);
    if (!pc_gen_shape_fits(g, r, wd)) return PC_OK; /* over the element cap: nothing */
    bool has_b = pc_draw_bool(g->ch, 50);
    pc_gen_value *w = u->near && how == 1 ? pc_gen_input(g, PC_DTYPE_FLOAT, r, wd, -1, 1, err)
                                          : pc_gen_const(g, PC_DTYPE_FLOAT, r, wd, -1, 1, err);
    pc_gen_value *b = has_b && w ? pc_gen_const(g, PC_DTYPE_FLOAT, 1, &m, -1, 1, err) : NULL;
    if (!w || (has_b && !b)) return err->status;
    pc_value *cins[3] = {x, w->value, b ? b->value : NULL};
    pc_value *y = NULL;
    double mag = (double)taps + 1;
    pc_status st = end(u, node(u, "Conv", has_b ? 3 : 2, cins, 1, err), -mag, mag, &y, err);
    if (st != PC_OK) return st;
    /* scale, bias, mean, var: var >= 0.5 keeps 1/sqrt(var + eps) <= 1.4143 */
    static const double lo[4] = {-1.5, -1, -1, 0.5}, hi[4] = {1.5, 1, 1, 2};
    bool per_activation = attr_near && u->opset < 9;
    int64_t pd[PC_MAX_RANK];
    int32_t pr = per_activation ? r - 1 : 1;
    pd[0] = m;
    for (int32_t i = 1; i < pr; i++)
        pd[i] = yd[i + 1];
    uint32_t as_input = u->near && how == 0 ? pc_draw(g->ch, 4) : 4;
    pc_value *ins[5] = {y};
    for (uint32_t i = 0; i < 4; i++) {
        pc_dtype pt = i / 2 == wide_pair ? PC_DTYPE_DOUBLE : PC_DTYPE_FLOAT;
        pc_gen_value *v = i == as_input ? pc_gen_input(g, pt, pr, pd, lo[i], hi[i], err)
                                        : pc_gen_const(g, pt, pr, pd, lo[i], hi[i], err);
        if (!v) return err->status;
        ins[i + 1] = v->value;
    }
    pc_node *bn = node(u, "BatchNormalization", 5, ins, 1, err);
    if (!bn) return err->status;
    if (pc_draw_bool(g->ch, 30) && pc_node_set_attr_float(bn, "epsilon", 1e-3f, err) != PC_OK)
        return err->status;
    if (pc_draw_bool(g->ch, 30) && pc_node_set_attr_float(bn, "momentum", 0.5f, err) != PC_OK)
        return err->status;
    if (u->opset < 9 && (per_activation || pc_draw_bool(g->ch, 50)) &&
        pc_node_set_attr_int(bn, "spatial", per_activation ? 0 : 1, err) != PC_OK)
        return err->status;
    if (u->opset >= 14 && (attr_near || pc_draw_bool(g->ch, 30)) &&
        pc_node_set_attr_int(bn, "training_mode", attr_near ? 1 : 0, err) != PC_OK)
        return err->status;
    double bound = mag * 1.5 * 1.4143 + 1;
    if ((st = end(u, bn, -bound, bound, NULL, err)) != PC_OK) return st;
    if (u->near && how == 2) st = share(u, y, err);
    if (st != PC_OK) return st;
    if (!u->near)
        expect(u, PC_RW_CONV_BN_FOLDED);
    else if (how == 2)
        expect_near(u, PC_RW_CONV_BN_FOLDED, PC_MISS_SHARED);
    else if (how == 3)
        expect_near(u, PC_RW_CONV_BN_FOLDED, PC_MISS_ATTRIBUTE);
    else if (how == 4)
        expect_near(u, PC_RW_CONV_BN_FOLDED, PC_MISS_TYPE);
    else
        expect_near(u, PC_RW_CONV_BN_FOLDED, PC_MISS_NOT_CONSTANT);
    return PC_OK;
}

/* Conv(x, W[, B]) -> an activation -> FusedConv (level 2, the cpu EP claims it): Relu, Sigmoid, Tanh,
 * LeakyRelu and HardSigmoid with their attributes given or left to their defaults, Clip with attribute bounds
 * (opset < 11) or constant scalar inputs (either, both or none); W a constant or a graph input. Near: the
 * Conv output read by a second activation (shared); a Clip bound that is a graph input (constant); the Conv
 * in double (type-shape). */
static pc_status unit_conv_act(unit_ctx *u, pc_error *err)
{
    static const char *const acts[] = {"Relu", "Sigmoid", "Tanh", "LeakyRelu", "HardSigmoid", "Clip"};
    pc_gen *g = u->g;
    uint32_t how = u->near ? pc_draw(g->ch, 3) : 0;
    uint32_t ai = pc_draw(g->ch, 6);
    if (u->near && how == 1 && u->opset < 11) how = 0; /* attribute bounds are always constant */
    if (u->near && how == 1) ai = 5;
    pc_dtype dt = u->near && how == 2 ? PC_DTYPE_DOUBLE : PC_DTYPE_FLOAT;
    int32_t r = draw_rank(u, 3, 4);
    int64_t xd[PC_MAX_RANK], wd[PC_MAX_RANK], m = pc_draw_range(g->ch, 1, 3);
    for (int32_t i = 0; i < r; i++)
        xd[i] = pc_draw_range(g->ch, 1, 3);
    fit_dims(u, r, 1, xd);
    int64_t taps = conv_weight_dims(u, r, xd, m, wd, NULL);
    if (!pc_gen_shape_fits(g, r, wd)) return PC_OK; /* over the element cap: nothing */
    pc_gen_value *x = pc_gen_input(g, dt, r, xd, -1, 1, err);
    pc_gen_value *w = !x                        ? NULL
                      : pc_draw_bool(g->ch, 25) ? pc_gen_input(g, dt, r, wd, -1, 1, err)
                                                : pc_gen_const(g, dt, r, wd, -1, 1, err);
    bool has_b = w && pc_draw_bool(g->ch, 50);
    pc_gen_value *b = has_b ? pc_gen_const(g, dt, 1, &m, -1, 1, err) : NULL;
    if (!w || (has_b && !b)) return err->status;
    pc_value *cins[3] = {x->value, w->value, b ? b->value : NULL}, *y = NULL;
    double mag = (double)taps + 1;
    pc_status st = end(u, node(u, "Conv", has_b ? 3 : 2, cins, 1, err), -mag, mag, &y, err);
    if (st != PC_OK) return st;
    const char *op = acts[ai];
    pc_value *ins[3] = {y, NULL, NULL};
    uint32_t n_in = 1;
    float lo = -0.5f, hi = 0.5f;
    if (ai == 5 && u->opset >= 11) {
        int64_t one = 1;
        bool has_lo = pc_draw_bool(g->ch, 70), has_hi = pc_draw_bool(g->ch, 70);
        pc_gen_value *lv = NULL, *hv = NULL;
        if (has_lo || (u->near && how == 1))
            lv = u->near && how == 1 ? pc_gen_input(g, dt, 0, &one, -0.5, -0.5, err)
                                     : pc_gen_const_f32(g, dt, 0, &one, &lo, err);
        if (has_hi) hv = pc_gen_const_f32(g, dt, 0, &one, &hi, err);
        if (((has_lo || (u->near && how == 1)) && !lv) || (has_hi && !hv)) return err->status;
        ins[1] = lv ? lv->value : NULL;
        ins[2] = hv ? hv->value : NULL;
        n_in = hv ? 3 : lv ? 2 : 1;
    }
    pc_node *n = node(u, op, n_in, ins, 1, err);
    if (!n) return err->status;
    bool attrs = pc_draw_bool(g->ch, 50);
    if (ai == 3 && attrs && pc_node_set_attr_float(n, "alpha", 0.25f, err) != PC_OK) return err->status;
    if (ai == 4 && attrs &&
        (pc_node_set_attr_float(n, "alpha", 0.3f, err) != PC_OK ||
         pc_node_set_attr_float(n, "beta", 0.4f, err) != PC_OK))
        return err->status;
    if (ai == 5 && u->opset < 11 && attrs &&
        (pc_node_set_attr_float(n, "min", lo, err) != PC_OK ||
         pc_node_set_attr_float(n, "max", hi, err) != PC_OK))
        return err->status;
    if ((st = end(u, n, -mag, mag, NULL, err)) != PC_OK) return st;
    if (u->near && how == 0 && (st = unary(u, "Sigmoid", y, 0, 1, NULL, err)) != PC_OK) return st;
    pc_rewrite_kind kind = ai == 0   ? PC_RW_CONV_RELU_FUSED
                           : ai == 5 ? PC_RW_CONV_CLIP_FUSED
                                     : PC_RW_CONV_ACT_FUSED;
    if (!u->near)
        expect(u, kind);
    else
        expect_near(u, kind, how == 0 ? PC_MISS_SHARED : how == 1 ? PC_MISS_NOT_CONSTANT : PC_MISS_TYPE);
    return PC_OK;
}

/* The exact-erf GELU subgraph at opset 20 (ai.onnx Gelu). Near: one of its five nodes carries another
 * annotation, or the Mul after the Add squares it ((1 + erf)^2 * 0.5: the same five ops, not a GELU). */
static pc_status unit_gelu(unit_ctx *u, pc_error *err)
{
    int64_t dims[PC_MAX_RANK];
    int32_t r = draw_rank(u, 1, 4);
    pc_value *x = float_input(u, r, 1, dims, err);
    pc_gen_x gx;
    if (!x || !pc_gen_x_get(u->g, x, &gx))
        return x ? pc_error_set(err, PC_ERR_INTERNAL, "patterns: gelu input") : err->status;
    pc_node *before = u->g->graph->last;
    pc_value *y = NULL;
    uint32_t k = u->near ? pc_draw(u->g->ch, 6) : 0;
    pc_status st = pc_gen_gelu_pattern(u->g, &gx, u->near && k == 5, &y, err);
    if (st != PC_OK || k == 5) return st;
    if (!u->near) {
        expect(u, u->opset >= 20 ? PC_RW_GELU_FUSED : PC_RW_GELU_FUSED_MS);
        return PC_OK;
    }
    for (pc_node *n = before ? before->next : u->g->graph->first; n; n = n->next)
        if (k-- == 0) return annotate(n, "layer_gelu", err);
    return PC_OK;
}

/* ---- the transpose optimizer: Transpose(p) -> op -> Transpose(the inverse of what the push leaves) ---- */

/* x of rank r in [min_r, max_r], dims >= 2 (no size-1 axis: a perm then always moves data), then T(p). */
static pc_status transposed_input(unit_ctx *u, int32_t min_r, int32_t max_r, int32_t *r, int64_t *perm,
                                  int64_t *tdims, pc_value **t, pc_error *err)
{
    int64_t dims[PC_MAX_RANK];
    *r = draw_rank(u, min_r, max_r);
    pc_value *x = float_input(u, *r, 2, dims, err);
    if (!x) return err->status;
    draw_perm(u, *r, perm);
    for (int32_t i = 0; i < *r; i++)
        tdims[i] = dims[perm[i]];
    return transpose(u, x, *r, perm, -1, 1, t, err);
}

/* ArgMax/ArgMin(axis, keepdims). */
static pc_status unit_push_arg(unit_ctx *u, pc_error *err)
{
    int32_t r;
    int64_t p[PC_MAX_RANK], td[PC_MAX_RANK], q[PC_MAX_RANK];
    pc_value *t = NULL, *y = NULL;
    pc_status st = transposed_input(u, 2, 4, &r, p, td, &t, err);
    if (st != PC_OK) return st;
    int32_t a = (int32_t)pc_draw(u->g->ch, (uint32_t)r);
    bool keep = r < 3 || !pc_draw_bool(u->g->ch, 50);
    pc_node *n = node(u, pc_draw_bool(u->g->ch, 50) ? "ArgMin" : "ArgMax", 1, &t, 1, err);
    if (!n || pc_node_set_attr_int(n, "axis", pc_draw_bool(u->g->ch, 25) ? a - r : a, err) != PC_OK ||
        (!keep && pc_node_set_attr_int(n, "keepdims", 0, err) != PC_OK))
        return err->status;
    if ((st = end(u, n, 0, 3, &y, err)) != PC_OK) return st;
    if (keep)
        memcpy(q, p, sizeof q);
    else
        perm_drop(p, r, a, q);
    if (!u->near) expect(u, PC_RW_TP_PUSH_ARG);
    return close_perm(u, t, y, keep ? r : r - 1, q, 0, 3, err);
}

/* Gather(data, constant scalar index, axis): drops the axis. Near: the index is a [1] tensor (the axis
 * stays: the handler refuses). */
static pc_status unit_push_gather(unit_ctx *u, pc_error *err)
{
    int32_t r;
    int64_t p[PC_MAX_RANK], td[PC_MAX_RANK], q[PC_MAX_RANK];
    pc_value *t = NULL, *y = NULL;
    pc_status st = transposed_input(u, 3, 4, &r, p, td, &t, err);
    if (st != PC_OK) return st;
    int32_t a = (int32_t)pc_draw(u->g->ch, (uint32_t)r);
    int64_t idx = pc_draw_range(u->g->ch, 0, td[a] - 1);
    if (pc_draw_bool(u->g->ch, 25)) idx -= td[a];                                 /* negative index form */
    pc_dtype tind = pc_draw_bool(u->g->ch, 25) ? PC_DTYPE_INT32 : PC_DTYPE_INT64; /* Gather takes both */
    pc_value *iv = ints_const_as(u, tind, u->near ? 1 : 0, 1, &idx, err);
    if (!iv) return err->status;
    pc_value *ins[2] = {t, iv};
    pc_node *n = node(u, "Gather", 2, ins, 1, err);
    if (!n || (a != 0 && pc_node_set_attr_int(n, "axis", a, err) != PC_OK)) return err->status;
    if ((st = end(u, n, -1, 1, &y, err)) != PC_OK) return st;
    if (u->near) { /* [1] index: rank kept; the Transpose closing p would cancel a push the handler refuses */
        int64_t inv[PC_MAX_RANK];
        perm_invert(p, r, inv);
        return transpose(u, y, r, inv, -1, 1, NULL, err);
    }
    perm_drop(p, r, a, q);
    expect(u, PC_RW_TP_PUSH_GATHER);
    return close_perm(u, t, y, r - 1, q, -1, 1, err);
}

/* Shape(T(x)) (opset >= 15: start/end drawn, also outside [-r, r]). Near: the Transpose has a second reader
 * (a Relu), so the push adds a Gather and keeps the Transpose. */
static pc_status unit_push_shape(unit_ctx *u, pc_error *err)
{
    int32_t r;
    int64_t p[PC_MAX_RANK], td[PC_MAX_RANK];
    pc_value *t = NULL, *y = NULL;
    pc_status st = transposed_input(u, 2, 4, &r, p, td, &t, err);
    if (st != PC_OK) return st;
    pc_node *n = node(u, "Shape", 1, &t, 1, err);
    if (n && u->opset >= 15 && pc_draw_bool(u->g->ch, 40)) {
        int64_t s = pc_draw_range(u->g->ch, -r - 1, r), e = pc_draw_range(u->g->ch, -r - 1, r + 1);
        if (pc_node_set_attr_int(n, "start", s, err) != PC_OK ||
            pc_node_set_attr_int(n, "end", e, err) != PC_OK)
            return err->status;
    }
    if ((st = end(u, n, 1, 3, &y, err)) != PC_OK) return st;
    if (u->near) return unary(u, "Relu", t, 0, 1, NULL, err);
    expect(u, PC_RW_TP_PUSH_SHAPE);
    return PC_OK;
}

/* Tile(T(x), repeats of 1 or 2, constant or computed). */
static pc_status unit_push_tile(unit_ctx *u, pc_error *err)
{
    int32_t r;
    int64_t p[PC_MAX_RANK], td[PC_MAX_RANK], reps[PC_MAX_RANK];
    pc_value *t = NULL, *y = NULL;
    pc_status st = transposed_input(u, 2, 3, &r, p, td, &t, err);
    if (st != PC_OK) return st;
    uint64_t n_out = 1;
    for (int32_t i = 0; i < r; i++) {
        reps[i] = pc_draw_range(u->g->ch, 1, 2);
        n_out *= (uint64_t)(td[i] * reps[i]);
    }
    if (n_out > u->g->cfg->max_elements)
        for (int32_t i = 0; i < r; i++)
            reps[i] = 1;
    pc_value *twins[2] = {NULL, NULL};
    pc_value *rv = ints_maybe_computed(u, true, PC_DTYPE_INT64, (size_t)r, reps, &twins[1], err);
    if (!rv) return err->status;
    pc_value *ins[2] = {t, rv};
    pc_node *n = node(u, "Tile", 2, ins, 1, err);
    if ((st = end(u, n, -1, 1, &y, err)) != PC_OK || (st = use_twins(n, twins, 2, err)) != PC_OK) return st;
    if (!u->near) expect(u, PC_RW_TP_PUSH_TILE);
    return close_perm(u, t, y, r, p, -1, 1, err);
}

/* Reshape(T(x)) splitting one axis of T(x) in two ([d] -> [2, d/2] for an even d, else [1, d] or [d, 1]) or
 * merging two neighbours that sit together, in order, in x (ShuffleNet's channel shuffle has both); the shape
 * constant has a -1 now and then. The
 * Reshape runs on x with its axis groups in x's order and the Transpose after it moves whole groups: out_perm
 * below, what close_perm cancels. Near: a merge of neighbours x holds apart (rank >= 3), where the data moves
 * and nothing is carried; at rank 2 a split with close_perm's shared values. */
static pc_status unit_push_reshape_groups(unit_ctx *u, pc_error *err)
{
    pc_gen *g = u->g;
    int64_t dims[PC_MAX_RANK], p[PC_MAX_RANK], td[PC_MAX_RANK];
    int32_t r = draw_rank(u, 2, 4);
    bool merge = r >= 3 && (u->near || pc_draw_bool(g->ch, 50)), apart = merge && u->near;
    pc_value *x = float_input(u, r, 2, dims, err), *t = NULL, *y = NULL;
    if (!x) return err->status;
    /* blocks of x: one per axis, but the merged pair (x axes b, b+1) is one block; T(x) permutes the blocks
     */
    int32_t nb = merge ? r - 1 : r, b = merge ? (int32_t)pc_draw(g->ch, (uint32_t)(r - 1)) : -1;
    int64_t bp[PC_MAX_RANK];
    draw_perm(u, nb, bp);
    int32_t at = 0, a = -1; /* a: the axis of T(x) where the merge or the split starts */
    for (int32_t k = 0; k < nb; k++) {
        int64_t blk = bp[k], first = blk <= b || b < 0 ? blk : blk + 1;
        if (blk == b) a = at;
        p[at++] = first;
        if (blk == b) p[at++] = first + 1;
    }
    if (apart) { /* the pair's two axes swap places in T(x): still neighbours there, apart in x's order */
        int64_t tmp = p[a];
        p[a] = p[a + 1];
        p[a + 1] = tmp;
    }
    if (!merge) a = (int32_t)pc_draw(g->ch, (uint32_t)r);
    for (int32_t i = 0; i < r; i++)
        td[i] = dims[p[i]];
    pc_status st = transpose(u, x, r, p, -1, 1, &t, err);
    if (st != PC_OK) return st;
    /* output dims and, per output axis, its group (the T(x) axis it comes from; a merge's pair is group a) */
    int64_t od[PC_MAX_RANK], grp[PC_MAX_RANK];
    int32_t s = 0;
    for (int32_t i = 0; i < r; i++) {
        if (merge && i == a + 1) continue;
        if (merge && i == a) {
            grp[s] = i;
            od[s++] = td[a] * td[a + 1];
        } else if (!merge && i == a) {
            int64_t d = td[i], first = d % 2 == 0 ? 2 : pc_draw_bool(g->ch, 50) ? 1 : d;
            grp[s] = i;
            od[s++] = first;
            grp[s] = i;
            od[s++] = d / first;
        } else {
            grp[s] = i;
            od[s++] = td[i];
        }
    }
    int64_t shape[PC_MAX_RANK];
    memcpy(shape, od, sizeof shape);
    if (pc_draw_bool(g->ch, 25)) shape[pc_draw(g->ch, (uint32_t)s)] = -1;
    pc_value *ins[2] = {t, ints_const(u, 1, (size_t)s, shape, err)};
    if (!ins[1]) return err->status;
    if ((st = end(u, node(u, "Reshape", 2, ins, 1, err), -1, 1, &y, err)) != PC_OK) return st;
    /* out_perm: output axis j goes to its place in x's order of the groups (a group sits at p[its first
     * axis] in x) */
    int64_t out_perm[PC_MAX_RANK];
    int32_t pos = 0;
    for (int64_t xa = 0; xa < r; xa++)
        for (int32_t j = 0; j < s; j++)
            if (p[grp[j]] == xa) out_perm[j] = pos++;
    if (apart) {
        /* nothing to carry: y stays as it is, closed by a Relu */
        return unary(u, "Relu", y, 0, 1, NULL, err);
    }
    if (!u->near) expect(u, PC_RW_TP_RESHAPE_GROUPS);
    return close_perm(u, t, y, s, out_perm, -1, 1, err);
}

/* Split(T(x), axis) into two equal halves (opset 18: num_outputs; 13..17: no split input; < 13: the
 * attribute form). Near: the Transpose and both halves have another reader (close_perm). */
static pc_status unit_push_split(unit_ctx *u, pc_error *err)
{
    int64_t dims[PC_MAX_RANK], p[PC_MAX_RANK], inv[PC_MAX_RANK];
    int32_t r = draw_rank(u, 2, 4);
    for (int32_t i = 0; i < r; i++)
        dims[i] = pc_draw_range(u->g->ch, 2, 3);
    draw_perm(u, r, p);
    int32_t a = (int32_t)pc_draw(u->g->ch, (uint32_t)r);
    fit_dims(u, r, 2, dims);
    dims[p[a]] = 2 * pc_draw_range(u->g->ch, 1, 2); /* the split axis of T(x) is even */
    pc_gen_value *xv = pc_gen_input(u->g, PC_DTYPE_FLOAT, r, dims, -1, 1, err);
    pc_value *t = NULL;
    if (!xv) return err->status;
    pc_status st = transpose(u, xv->value, r, p, -1, 1, &t, err);
    if (st != PC_OK) return st;
    pc_node *n = node(u, "Split", 1, &t, 2, err);
    if (!n || (a != 0 && pc_node_set_attr_int(n, "axis", a, err) != PC_OK) ||
        (u->opset >= 18 && pc_node_set_attr_int(n, "num_outputs", 2, err) != PC_OK))
        return err->status;
    if ((st = end(u, n, -1, 1, NULL, err)) != PC_OK) return st;
    perm_invert(p, r, inv);
    for (uint32_t o = 0; o < 2; o++)
        if ((st = transpose(u, n->outputs[o], r, inv, -1, 1, NULL, err)) != PC_OK ||
            (u->near && (st = share(u, n->outputs[o], err)) != PC_OK))
            return st;
    if (u->near && (st = share(u, t, err)) != PC_OK) return st;
    if (!u->near) expect(u, PC_RW_TP_PUSH_SPLIT);
    return PC_OK;
}

/* The axes a rank-reducing op drops (flags over its input rank): the perm the push leaves on its output is p
 * without them, renumbered. */
static int32_t perm_drop_all(const int64_t *p, int32_t r, const bool *dropped, int64_t *out)
{
    int64_t cur[PC_MAX_RANK], next[PC_MAX_RANK];
    memcpy(cur, p, (size_t)r * sizeof *cur);
    int32_t n = r;
    for (int32_t a = r - 1; a >= 0; a--) /* from the last: earlier positions keep their index */
        if (dropped[a]) {
            perm_drop(cur, n, a, next);
            memcpy(cur, next, (size_t)--n * sizeof *cur);
        }
    memcpy(out, cur, (size_t)n * sizeof *out);
    return n;
}

/* k distinct positions out of r in drawn order (draw 0: 0, 1, ...): the j-th still free per draw. */
static void draw_axes(unit_ctx *u, int32_t r, int32_t k, int64_t *axes)
{
    bool used[PC_MAX_RANK] = {false};
    for (int32_t i = 0; i < k; i++) {
        uint32_t j = pc_draw(u->g->ch, (uint32_t)(r - i));
        int32_t a = 0;
        for (uint32_t seen = 0;; a++)
            if (!used[a] && seen++ == j) break;
        used[a] = true;
        axes[i] = a;
    }
}

/* Op(t) with axes: a constant input from opset `from` (given), the attribute before; none when !given. */
static pc_node *axes_node(unit_ctx *u, const char *op, pc_value *t, int64_t from, bool given, int32_t k,
                          const int64_t *axes, pc_error *err)
{
    pc_value *ins[2] = {t, NULL};
    bool input = given && u->opset >= from;
    if (input && !(ins[1] = ints_const(u, 1, (size_t)k, axes, err))) return NULL;
    pc_node *n = node(u, op, input ? 2 : 1, ins, 1, err);
    if (n && given && !input && pc_node_set_attr_ints(n, "axes", (size_t)k, axes, err) != PC_OK) return NULL;
    return n;
}

/* Unsqueeze(T(x), axes) (constant input at opset >= 13, attribute before). */
static pc_status unit_push_unsqueeze(unit_ctx *u, pc_error *err)
{
    int32_t r;
    int64_t p[PC_MAX_RANK], td[PC_MAX_RANK];
    pc_value *t = NULL, *y = NULL;
    pc_status st = transposed_input(u, 2, 3, &r, p, td, &t, err);
    if (st != PC_OK) return st;
    int32_t n_ax = (int32_t)pc_draw_range(u->g->ch, 1, 2), out_r = r + n_ax;
    bool inserted[PC_MAX_RANK] = {false};
    int64_t axes[2];
    draw_axes(u, out_r, n_ax, axes);
    for (int32_t k = 0; k < n_ax; k++)
        inserted[axes[k]] = true;
    if ((st = end(u, axes_node(u, "Unsqueeze", t, 13, true, n_ax, axes, err), -1, 1, &y, err)) != PC_OK)
        return st;
    /* the push leaves P: inserted axes stay, the others take p over the kept positions */
    int64_t kept[PC_MAX_RANK], out_p[PC_MAX_RANK];
    int32_t nk = 0;
    for (int32_t j = 0; j < out_r; j++)
        if (!inserted[j]) kept[nk++] = j;
    for (int32_t j = 0; j < out_r; j++)
        out_p[j] = j;
    for (int32_t i = 0; i < r; i++)
        out_p[kept[i]] = kept[p[i]];
    if (!u->near) expect(u, PC_RW_TP_PUSH_UNSQUEEZE);
    return close_perm(u, t, y, out_r, out_p, -1, 1, err);
}

/* Slice(T(x)) on k of its r axes (k = r too): starts, ends (negative and past-the-end forms) and steps (1,
 * 2 or -1); starts, ends and axes (from opset 11) constant or computed, axes given in drawn order (some
 * negative) or left to their default (the leading k); from opset 10 inputs (int32 or int64; steps given or
 * not, an omitted axes input between), before it attributes. */
static pc_status unit_push_slice(unit_ctx *u, pc_error *err)
{
    int32_t r;
    int64_t p[PC_MAX_RANK], td[PC_MAX_RANK];
    pc_value *t = NULL, *y = NULL;
    pc_status st = transposed_input(u, 2, 4, &r, p, td, &t, err);
    if (st != PC_OK) return st;
    pc_gen *g = u->g;
    int32_t k = 1 + (int32_t)pc_draw(g->ch, (uint32_t)r);
    bool given = pc_draw_bool(g->ch, 60), inputs = u->opset >= 10, any_step = false, all_kept = true;
    pc_dtype tind = inputs && pc_draw_bool(g->ch, 25) ? PC_DTYPE_INT32 : PC_DTYPE_INT64;
    int64_t big = tind == PC_DTYPE_INT32 ? INT32_MAX : INT64_MAX;
    int64_t axes[PC_MAX_RANK], starts[PC_MAX_RANK], ends[PC_MAX_RANK], steps[PC_MAX_RANK];
    if (given)
        draw_axes(u, r, k, axes);
    else
        for (int32_t i = 0; i < k; i++)
            axes[i] = i;
    for (int32_t i = 0; i < k; i++) {
        int64_t d = td[axes[i]];
        steps[i] = inputs && pc_draw_bool(g->ch, 30) ? (pc_draw_bool(g->ch, 50) ? 2 : -1) : 1;
        any_step |= steps[i] != 1;
        int64_t s = pc_draw_range(g->ch, 0, d - 1), e;
        if (steps[i] > 0) {
            e = pc_draw_range(g->ch, s + 1, d);
            if (e == d && pc_draw_bool(g->ch, 30)) e = big; /* past the end */
        } else {
            e = pc_draw_range(g->ch, -1, s - 1);
            if (e == -1) e = -d - 1; /* before the first element (clamps to -1) */
        }
        /* keeping every element of every axis, eliminate_slice would remove it first: the last axis
         * then drops its last element (every dim here is at least 2) */
        all_kept &= steps[i] == 1 && s == 0 && e >= d;
        if (i == k - 1 && all_kept) e = d - 1;
        if (pc_draw_bool(g->ch, 25)) s -= d; /* negative start form */
        starts[i] = s;
        ends[i] = e;
        if (given && pc_draw_bool(g->ch, 25)) axes[i] -= r;
    }
    bool with_steps = inputs && (any_step || pc_draw_bool(g->ch, 20));
    pc_node *n;
    pc_value *twins[5] = {NULL, NULL, NULL, NULL, NULL};
    if (inputs) {
        /* starts and ends computed or not; axes computed from opset 11 (Gather-11 maps negative ones) */
        pc_value *ins[5] = {t, ints_maybe_computed(u, true, tind, (size_t)k, starts, &twins[1], err), NULL,
                            NULL, NULL};
        if (!ins[1] || !(ins[2] = ints_maybe_computed(u, true, tind, (size_t)k, ends, &twins[2], err)) ||
            (given &&
             !(ins[3] = ints_maybe_computed(u, u->opset >= 11, tind, (size_t)k, axes, &twins[3], err))) ||
            (with_steps && !(ins[4] = ints_const_as(u, tind, 1, (size_t)k, steps, err))))
            return err->status;
        n = node(u, "Slice", with_steps ? 5 : given ? 4 : 3, ins, 1, err);
    } else {
        n = node(u, "Slice", 1, &t, 1, err);
        if (n && (pc_node_set_attr_ints(n, "starts", (size_t)k, starts, err) != PC_OK ||
                  pc_node_set_attr_ints(n, "ends", (size_t)k, ends, err) != PC_OK ||
                  (given && pc_node_set_attr_ints(n, "axes", (size_t)k, axes, err) != PC_OK)))
            return err->status;
    }
    if ((st = end(u, n, -1, 1, &y, err)) != PC_OK || (st = use_twins(n, twins, 5, err)) != PC_OK) return st;
    if (!u->near) expect(u, PC_RW_TP_PUSH_SLICE);
    return close_perm(u, t, y, r, p, -1, 1, err);
}

/* Pad(T(x)) with pads in [-1, 1] (from opset 11 constant or computed) (a -1 only in constant mode, on a dim
 * of at least 2), mode constant (value given or not), edge or reflect; from opset 11 inputs, before it
 * attributes. */
static pc_status unit_push_pad(unit_ctx *u, pc_error *err)
{
    int32_t r;
    int64_t p[PC_MAX_RANK], td[PC_MAX_RANK], pads[2 * PC_MAX_RANK];
    pc_value *t = NULL, *y = NULL;
    pc_status st = transposed_input(u, 2, 3, &r, p, td, &t, err);
    if (st != PC_OK) return st;
    pc_gen *g = u->g;
    static const char *const modes[] = {"constant", "edge", "reflect"};
    uint32_t mode = pc_draw(g->ch, 3);
    uint64_t n_out = 1;
    for (int32_t i = 0; i < r; i++) {
        int64_t b = pc_draw_range(g->ch, mode == 0 ? -1 : 0, 1), e = pc_draw_range(g->ch, 0, 1);
        if (b + e + td[i] < 1) b = 0;
        pads[i] = b;
        pads[r + i] = e;
        n_out *= (uint64_t)(td[i] + b + e);
    }
    if (n_out > g->cfg->max_elements)
        for (int32_t i = 0; i < 2 * r; i++)
            pads[i] = 0;
    bool value = mode == 0 && pc_draw_bool(g->ch, 50);
    pc_node *n;
    pc_value *twins[3] = {NULL, NULL, NULL};
    if (u->opset >= 11) {
        float v = 0.5f;
        int64_t one = 1;
        pc_value *ins[3] = {
            t, ints_maybe_computed(u, true, PC_DTYPE_INT64, (size_t)(2 * r), pads, &twins[1], err), NULL};
        pc_gen_value *cv = value && ins[1] ? pc_gen_const_f32(g, PC_DTYPE_FLOAT, 0, &one, &v, err) : NULL;
        if (!ins[1] || (value && !cv)) return err->status;
        if (cv) ins[2] = cv->value;
        n = node(u, "Pad", value ? 3 : 2, ins, 1, err);
    } else {
        n = node(u, "Pad", 1, &t, 1, err);
        if (n && (pc_node_set_attr_ints(n, "pads", (size_t)(2 * r), pads, err) != PC_OK ||
                  (value && pc_node_set_attr_float(n, "value", 0.5f, err) != PC_OK)))
            return err->status;
    }
    if (n && (mode != 0 || pc_draw_bool(g->ch, 30)) &&
        pc_node_set_attr_string(n, "mode", modes[mode], err) != PC_OK)
        return err->status;
    if ((st = end(u, n, -1, 1, &y, err)) != PC_OK || (st = use_twins(n, twins, 3, err)) != PC_OK) return st;
    if (!u->near) expect(u, PC_RW_TP_PUSH_PAD);
    return close_perm(u, t, y, r, p, -1, 1, err);
}

/* Squeeze(T(x)) of x with size-1 dims: axes given (an input from opset 13, the attribute before; some
 * negative) — all the size-1 dims or some — or absent (every size-1 dim). The perm moves data: it reorders
 * the dims of at least 2. */
static pc_status unit_push_squeeze(unit_ctx *u, pc_error *err)
{
    pc_gen *g = u->g;
    int32_t r = draw_rank(u, 3, 4), ones = 1 + (int32_t)pc_draw(g->ch, (uint32_t)(r - 2));
    int64_t dims[PC_MAX_RANK], p[PC_MAX_RANK], td[PC_MAX_RANK], one_at[PC_MAX_RANK];
    for (int32_t i = 0; i < r; i++)
        dims[i] = pc_draw_range(g->ch, 2, 3);
    draw_axes(u, r, ones, one_at);
    for (int32_t i = 0; i < ones; i++)
        dims[one_at[i]] = 1;
    fit_dims(u, r, 1, dims);
    draw_perm(u, r, p);
    /* the first two positions of T(x) holding dims of x >= 2 must come in the other order than in x */
    int32_t big[PC_MAX_RANK], nb = 0;
    for (int32_t i = 0; i < r; i++)
        if (dims[p[i]] > 1) big[nb++] = i;
    bool moves = false;
    for (int32_t i = 0; i + 1 < nb; i++)
        moves |= p[big[i]] > p[big[i + 1]];
    if (!moves && nb >= 2) {
        int64_t tmp = p[big[0]];
        p[big[0]] = p[big[1]];
        p[big[1]] = tmp;
    }
    pc_gen_value *xv = pc_gen_input(g, PC_DTYPE_FLOAT, r, dims, -1, 1, err);
    pc_value *t = NULL, *y = NULL;
    if (!xv) return err->status;
    pc_status st = transpose(u, xv->value, r, p, -1, 1, &t, err);
    if (st != PC_OK) return st;
    for (int32_t i = 0; i < r; i++)
        td[i] = dims[p[i]];
    bool dropped[PC_MAX_RANK] = {false}, given = pc_draw_bool(g->ch, 70);
    int64_t axes[PC_MAX_RANK];
    int32_t k = 0;
    for (int32_t i = 0; i < r; i++)
        if (td[i] == 1 && (!given || k == 0 || pc_draw_bool(g->ch, 70))) {
            dropped[i] = true;
            axes[k++] = pc_draw_bool(g->ch, 25) ? i - r : i;
        }
    if ((st = end(u, axes_node(u, "Squeeze", t, 13, given, k, axes, err), -1, 1, &y, err)) != PC_OK)
        return st;
    int64_t q[PC_MAX_RANK];
    int32_t out_r = perm_drop_all(p, r, dropped, q);
    if (!u->near) expect(u, PC_RW_TP_PUSH_SQUEEZE);
    return close_perm(u, t, y, out_r, q, -1, 1, err);
}

/* Reduce*(T(x)): axes given (an input for ReduceSum from 13 and the others from 18, the attribute before;
 * some negative) or absent (all; from those opsets noop_with_empty_axes now and then), keepdims 1 or 0. */
static pc_status unit_push_reduce(unit_ctx *u, pc_error *err)
{
    static const char *const ops[] = {"ReduceSum", "ReduceMean",      "ReduceMax",
                                      "ReduceMin", "ReduceProd",      "ReduceL1",
                                      "ReduceL2",  "ReduceSumSquare", "ReduceLogSumExp"};
    int32_t r;
    int64_t p[PC_MAX_RANK], td[PC_MAX_RANK];
    pc_value *t = NULL, *y = NULL;
    pc_status st = transposed_input(u, 2, 4, &r, p, td, &t, err);
    if (st != PC_OK) return st;
    pc_gen *g = u->g;
    const char *op = ops[pc_draw(g->ch, sizeof ops / sizeof ops[0])];
    int64_t from = strcmp(op, "ReduceSum") == 0 ? 13 : 18;
    bool given = pc_draw_bool(g->ch, 80), keep = pc_draw_bool(g->ch, 50);
    bool noop = !given && u->opset >= from && pc_draw_bool(g->ch, 30);
    int32_t k = given ? 1 + (int32_t)pc_draw(g->ch, (uint32_t)r) : 0;
    int64_t axes[PC_MAX_RANK];
    bool dropped[PC_MAX_RANK] = {false};
    draw_axes(u, r, k, axes);
    for (int32_t i = 0; i < k; i++) {
        dropped[axes[i]] = true;
        if (pc_draw_bool(g->ch, 25)) axes[i] -= r;
    }
    pc_node *n = axes_node(u, op, t, from, given, k, axes, err);
    if (n && ((!keep && pc_node_set_attr_int(n, "keepdims", 0, err) != PC_OK) ||
              (noop && pc_node_set_attr_int(n, "noop_with_empty_axes", 1, err) != PC_OK)))
        return err->status;
    if ((st = end(u, n, -30, 30, &y, err)) != PC_OK) return st;
    if (!u->near) expect(u, PC_RW_TP_PUSH_REDUCE);
    if (!given && !noop) return PC_OK; /* reduced to one value: nothing left to transpose */
    if (keep || noop) return close_perm(u, t, y, r, p, -30, 30, err);
    int64_t q[PC_MAX_RANK];
    int32_t out_r = perm_drop_all(p, r, dropped, q);
    return out_r >= 2 ? close_perm(u, t, y, out_r, q, -30, 30, err) : PC_OK;
}

/* Softmax, LogSoftmax or Hardmax(T(x), axis): from opset 13 any axis (default -1, negative forms); before,
 * where the input is coerced to 2-D at `axis` (default 1), a perm that keeps every axis on its side of it
 * (Hardmax: one that moves only the axes before it, rows, never the order within one).
 * Near (before 13): a perm across it, which the handler must refuse (the numerics property judges a push). */
static pc_status unit_push_softmax(unit_ctx *u, pc_error *err)
{
    static const char *const ops[] = {"Softmax", "LogSoftmax", "Hardmax"};
    pc_gen *g = u->g;
    int32_t r = draw_rank(u, 2, 4);
    int64_t dims[PC_MAX_RANK], p[PC_MAX_RANK];
    for (int32_t i = 0; i < r; i++)
        dims[i] = pc_draw_range(g->ch, 2, 3);
    fit_dims(u, r, 2, dims);
    bool old = u->opset < 13, given = pc_draw_bool(g->ch, 60);
    const char *op = ops[pc_draw(g->ch, 3)];
    bool rows_fixed = old && strcmp(op, "Hardmax") == 0;          /* each row's first maximum wins a tie */
    if (rows_fixed && r == 2) op = "Softmax", rows_fixed = false; /* no room for a perm of rows alone */
    int64_t a = given ? (int64_t)pc_draw(g->ch, (uint32_t)r) : old ? 1 : r - 1;
    draw_perm(u, r, p);
    if (old && !u->near) {
        /* a perm within [0, a) and (but for Hardmax) within [a, r): the blocks' sizes allow one unless both
         * are 1 */
        if (rows_fixed && a < 2) a = 2;
        if (a == 1 && r == 2) a = 0;
        int64_t lo[PC_MAX_RANK], hi[PC_MAX_RANK];
        bool lo_perm = a >= 2, hi_perm = !rows_fixed && r - a >= 2;
        if (lo_perm) draw_perm(u, (int32_t)a, lo);
        if (hi_perm) draw_perm(u, (int32_t)(r - a), hi);
        for (int32_t i = 0; i < r; i++)
            p[i] = i < a ? (lo_perm ? lo[i] : i) : a + (hi_perm ? hi[i - a] : i - a);
        given = given || a != 1;
    }
    pc_gen_value *xv = pc_gen_input(g, PC_DTYPE_FLOAT, r, dims, -1, 1, err);
    pc_value *t = NULL, *y = NULL;
    if (!xv) return err->status;
    pc_status st = transpose(u, xv->value, r, p, -1, 1, &t, err);
    if (st != PC_OK) return st;
    pc_node *n = node(u, op, 1, &t, 1, err);
    if (n && given && pc_node_set_attr_int(n, "axis", pc_draw_bool(g->ch, 25) ? a - r : a, err) != PC_OK)
        return err->status;
    double lo = strcmp(op, "LogSoftmax") == 0 ? -10 : 0;
    if ((st = end(u, n, lo, 1, &y, err)) != PC_OK) return st;
    if (!u->near) expect(u, PC_RW_TP_PUSH_SOFTMAX);
    if (old && u->near) { /* across the coercion point: the closing Transpose alone */
        int64_t inv[PC_MAX_RANK];
        perm_invert(p, r, inv);
        return transpose(u, y, r, inv, lo, 1, NULL, err);
    }
    return close_perm(u, t, y, r, p, lo, 1, err);
}

/* Concat of two or three inputs, each T(p) of a graph input, along a drawn axis. */
static pc_status unit_push_concat(unit_ctx *u, pc_error *err)
{
    int64_t dims[PC_MAX_RANK], p[PC_MAX_RANK];
    int32_t r = draw_rank(u, 2, 4);
    for (int32_t i = 0; i < r; i++)
        dims[i] = pc_draw_range(u->g->ch, 2, 3);
    fit_dims(u, r, 2, dims);
    draw_perm(u, r, p);
    int32_t a = (int32_t)pc_draw(u->g->ch, (uint32_t)r);
    uint32_t n = 2 + pc_draw(u->g->ch, 2);
    pc_value *ts[3] = {NULL, NULL, NULL}, *y = NULL;
    for (uint32_t k = 0; k < n; k++) {
        int64_t d[PC_MAX_RANK];
        memcpy(d, dims, sizeof d);
        d[p[a]] = pc_draw_range(u->g->ch, 1, 2); /* the concat axis of T(x) may differ per input */
        pc_gen_value *x = pc_gen_input(u->g, PC_DTYPE_FLOAT, r, d, -1, 1, err);
        pc_status st = x ? transpose(u, x->value, r, p, -1, 1, &ts[k], err) : err->status;
        if (st != PC_OK) return st;
    }
    pc_node *c = node(u, "Concat", n, ts, 1, err);
    if (!c || pc_node_set_attr_int(c, "axis", pc_draw_bool(u->g->ch, 25) ? a - r : a, err) != PC_OK)
        return err->status;
    pc_status st = end(u, c, -1, 1, &y, err);
    if (st != PC_OK) return st;
    if (!u->near) expect(u, PC_RW_TP_PUSH_CONCAT);
    return close_perm(u, ts[0], y, r, p, -1, 1, err);
}

/* A region only a whole plan pays for: t = T(p)(x) read by two elementwise ops with constants, a = op1(t, c1)
 * and m = op2(t, c2), joined by out = op3(m, a), with m also read by T(p^-1). No one op moved alone pays (t
 * stays for its other reader); the three in T's layout do: t and the T(p^-1) go, out gets one Transpose (a
 * greedy push walk needed a region push for it). */
static pc_status unit_region(unit_ctx *u, pc_error *err)
{
    static const char *const ops[] = {"Mul", "Add", "Sub"};
    int64_t dims[PC_MAX_RANK], p[PC_MAX_RANK], inv[PC_MAX_RANK], td[PC_MAX_RANK];
    int32_t r = draw_rank(u, 2, 4);
    pc_value *x = float_input(u, r, 2, dims, err), *t = NULL, *a = NULL, *m = NULL;
    if (!x) return err->status;
    draw_perm(u, r, p);
    for (int32_t i = 0; i < r; i++)
        td[i] = dims[p[i]];
    pc_status st = transpose(u, x, r, p, -1, 1, &t, err);
    for (int k = 0; st == PC_OK && k < 2; k++) {
        /* a constant of T(x)'s trailing dims (or a scalar): it folds through the push */
        int32_t cr = (int32_t)pc_draw_range(u->g->ch, 0, r);
        pc_gen_value *c = pc_gen_const(u->g, PC_DTYPE_FLOAT, cr, td + (r - cr), 0.5, 1.5, err);
        if (!c) return err->status;
        pc_value *ins[2] = {t, c->value};
        st = end(u, node(u, ops[pc_draw(u->g->ch, 3)], 2, ins, 1, err), -3, 3, k ? &m : &a, err);
    }
    if (st != PC_OK) return st;
    pc_value *ins[2] = {m, a};
    if ((st = end(u, node(u, ops[pc_draw(u->g->ch, 3)], 2, ins, 1, err), -9, 9, NULL, err)) != PC_OK)
        return st;
    perm_invert(p, r, inv);
    if (!u->near)
        expect(u, PC_RW_TP_PUSH_BROADCAST);    /* the region's ops run in T's layout */
    else if ((st = share(u, a, err)) != PC_OK) /* a read outside the region too: +1, the push saves nothing */
        return st;
    return transpose(u, m, r, inv, -3, 3, NULL, err);
}

/* ---- quantized units -------------------------------------------------------------------------------------
 */

/* A shape of rank 2..4 (within max_rank) with dims 2..3 that fits max_elements, a non-identity perm p, and
 * td: the dims after Transpose(p). */
static int32_t draw_permuted_shape(unit_ctx *u, int64_t *dims, int64_t *p, int64_t *td)
{
    int32_t r = draw_rank(u, 2, 4);
    for (int32_t i = 0; i < r; i++)
        dims[i] = pc_draw_range(u->g->ch, 2, 3);
    fit_dims(u, r, 2, dims);
    draw_perm(u, r, p);
    for (int32_t i = 0; i < r; i++)
        td[i] = dims[p[i]];
    return r;
}

static pc_dtype draw_qtype(unit_ctx *u)
{
    return pc_draw_bool(u->g->ch, 50) ? PC_DTYPE_INT8 : PC_DTYPE_UINT8;
}

/* Per-axis Q or DQ pushed: T(p) -> DequantizeLinear(axis a) on a quantized input, or T(p) ->
 * QuantizeLinear(axis a) on a float one (opset >= 13), closed by close_perm (near misses there). */
static pc_status unit_qdq_axis(unit_ctx *u, pc_error *err)
{
    int64_t dims[PC_MAX_RANK], p[PC_MAX_RANK], td[PC_MAX_RANK];
    int32_t r = draw_permuted_shape(u, dims, p, td);
    int32_t a = (int32_t)pc_draw(u->g->ch, (uint32_t)r);
    pc_genq_params qp;
    pc_status st = pc_genq_params_draw(&u->q, draw_qtype(u), a, (uint32_t)td[a], 1.0, &qp, err);
    if (st != PC_OK) return st;
    pc_value *t = NULL, *y = NULL;
    bool dq_side = !pc_draw_bool(u->g->ch, 40);
    if (dq_side) {
        pc_genq_params ip;
        if ((st = pc_genq_params_draw(&u->q, qp.type, -1, 1, 1.0, &ip, err)) != PC_OK) goto done;
        pc_genq_value *in;
        st = pc_genq_input(&u->q, r, dims, &ip, &in, err);
        pc_genq_params_free(&ip);
        if (st != PC_OK || (st = transpose(u, in->q, r, p, -INFINITY, INFINITY, &t, err)) != PC_OK) goto done;
        /* a per-axis DQ of T(x): the parameters of qp, read along a */
        pc_value *scale = NULL, *zp = NULL;
        {
            int64_t n = (int64_t)qp.n;
            pc_gen_value *s = pc_gen_const_f32(u->g, PC_DTYPE_FLOAT, 1, &n, qp.scales, err);
            pc_gen_value *z = s ? pc_gen_const_i64(u->g, qp.type, 1, &n, qp.zps, err) : NULL;
            if (!z) {
                st = err->status;
                goto done;
            }
            scale = s->value;
            zp = z->value;
        }
        pc_value *ins[3] = {t, scale, zp};
        pc_node *n = node(u, "DequantizeLinear", 3, ins, 1, err);
        if (!n || pc_node_set_attr_int(n, "axis", a, err) != PC_OK) {
            st = err->status;
            goto done;
        }
        if ((st = end(u, n, -300, 300, &y, err)) != PC_OK) goto done;
        if (!u->near) {
            expect(u, PC_RW_TP_PUSH_QDQ);
            expect(u, PC_RW_TP_QDQ_AXIS);
        }
        st = close_perm(u, t, y, r, p, -300, 300, err);
        goto done;
    }
    pc_gen_value *xv = pc_gen_input(u->g, PC_DTYPE_FLOAT, r, dims, -1, 1, err);
    if (!xv || (st = transpose(u, xv->value, r, p, -1, 1, &t, err)) != PC_OK) {
        st = xv ? st : err->status;
        goto done;
    }
    pc_genq_value *qv;
    if ((st = pc_genq_quantize(&u->q, t, -1, 1, &qp, &qv, err)) != PC_OK) goto done;
    if (!u->near) {
        expect(u, PC_RW_TP_PUSH_QDQ);
        expect(u, PC_RW_TP_QDQ_AXIS);
    }
    st = close_perm(u, t, qv->q, r, p, -INFINITY, INFINITY, err);
done:
    pc_genq_params_free(&qp);
    return st;
}

/* T(p) of DequantizeLinear(constant int8/uint8 weights), per tensor or along an axis -> Add with a float
 * input: the DQ runs in T's layout (push_qdq; a per-axis DQ's axis is remapped), the Transpose folds into the
 * constant. Near: the DQ reads a graph input (nothing to fold into or merge with). */
static pc_status unit_above_dq(unit_ctx *u, pc_error *err)
{
    int64_t dims[PC_MAX_RANK], p[PC_MAX_RANK], td[PC_MAX_RANK];
    int32_t r = draw_permuted_shape(u, dims, p, td);
    int32_t axis = pc_draw_bool(u->g->ch, 50) ? (int32_t)pc_draw(u->g->ch, (uint32_t)r) : -1;
    pc_dtype qt = draw_qtype(u);
    pc_genq_value w;
    pc_genq_params wp = {0};
    pc_status st;
    if (u->near) {
        pc_genq_params ip;
        pc_genq_value *in;
        if ((st = pc_genq_params_draw(&u->q, qt, -1, 1, 1.0, &ip, err)) != PC_OK) return st;
        st = pc_genq_input(&u->q, r, dims, &ip, &in, err);
        pc_genq_params_free(&ip);
        if (st != PC_OK) return st;
        w = *in;
    } else {
        st = pc_genq_weights(&u->q, qt, r, dims, axis, axis >= 0 ? (uint32_t)dims[axis] : 1, &w, &wp, err);
        if (st != PC_OK) return st;
    }
    pc_value *d = NULL, *t = NULL, *y = NULL;
    if ((st = pc_genq_dequantize(&u->q, &w, false, &d, err)) != PC_OK) goto done;
    if ((st = transpose(u, d, r, p, w.lo, w.hi, &t, err)) != PC_OK) goto done;
    pc_gen_value *xv = pc_gen_input(u->g, PC_DTYPE_FLOAT, r, td, -1, 1, err);
    if (!xv) {
        st = err->status;
        goto done;
    }
    pc_value *ins[2] = {pc_draw_bool(u->g->ch, 50) ? xv->value : t, NULL};
    ins[1] = ins[0] == t ? xv->value : t;
    if ((st = end(u, node(u, "Add", 2, ins, 1, err), w.lo - 1, w.hi + 1, &y, err)) != PC_OK) goto done;
    if (!u->near) {
        expect(u, PC_RW_TP_PUSH_QDQ); /* the DQ runs in T's layout: its constant is permuted */
        if (axis >= 0) expect(u, PC_RW_TP_QDQ_AXIS);
    }
done:
    pc_genq_params_free(&wp);
    return st;
}

/* x_q -> T1(p) -> DQ -> T2(p^-1) -> Add, with T1 also read elsewhere: T1 is pushed through the DQ and
 * cancels T2 (the DQ then reads x_q), T1 staying for its other reader. */
static pc_status unit_dq_of_transpose(unit_ctx *u, pc_error *err)
{
    int64_t dims[PC_MAX_RANK], p[PC_MAX_RANK], inv[PC_MAX_RANK], td[PC_MAX_RANK];
    int32_t r = draw_rank(u, 2, 4);
    for (int32_t i = 0; i < r; i++)
        dims[i] = pc_draw_range(u->g->ch, 2, 3);
    fit_dims(u, r, 2, dims);
    draw_perm(u, r, p);
    perm_invert(p, r, inv);
    for (int32_t i = 0; i < r; i++)
        td[i] = dims[p[i]];
    pc_genq_params ip;
    pc_genq_value *in;
    pc_status st = pc_genq_params_draw(&u->q, draw_qtype(u), -1, 1, 1.0, &ip, err);
    if (st == PC_OK) st = pc_genq_input(&u->q, r, dims, &ip, &in, err);
    pc_genq_params_free(&ip);
    if (st != PC_OK) return st;
    pc_value *t1 = NULL, *d = NULL, *t2 = NULL;
    if ((st = transpose(u, in->q, r, p, -INFINITY, INFINITY, &t1, err)) != PC_OK) return st;
    pc_genq_value tv = *in;
    tv.q = t1;
    tv.rank = r;
    memcpy(tv.dims, td, sizeof td);
    tv.dq = NULL;
    if ((st = pc_genq_dequantize(&u->q, &tv, false, &d, err)) != PC_OK) return st;
    if ((st = transpose(u, d, r, inv, in->lo, in->hi, &t2, err)) != PC_OK) return st;
    if ((st = share(u, t1, err)) != PC_OK) return st;
    pc_gen_value *xv = pc_gen_input(u->g, PC_DTYPE_FLOAT, r, dims, -1, 1, err);
    if (!xv) return err->status;
    pc_value *ins[2] = {t2, xv->value};
    expect(u, PC_RW_TP_PUSH_QDQ);
    return end(u, node(u, "Add", 2, ins, 1, err), -INFINITY, INFINITY, NULL, err);
}

/* DQ(x) [per tensor], DQ(w) [int8, per tensor or per output channel] [, DQ(b) int32 at x_scale * w_scale]
 * -> Conv [-> Relu] -> Q(type of x): QLinearConv, or QLinearConvRelu when the Relu stays (the output zero
 * point is mid-range). Near (each refused by fuse_qdq_qlinear): the output type differs from x's, int8 x
 * with uint8 weights, the bias dequantized at a scale off by one ulp-scale step, x per axis, or the output
 * quantized per channel. */
static pc_status unit_qlinear_conv(unit_ctx *u, pc_error *err)
{
    pc_gen *g = u->g;
    int32_t r = draw_rank(u, 3, 4);
    if (r < 3) return PC_OK;
    uint32_t how = u->near ? pc_draw(g->ch, 5) : 4; /* near 4 is 5: per-axis output */
    if (u->near && how == 4) how = 5;
    int64_t dims[PC_MAX_RANK];
    pc_genq_draw_dims(&u->q, r, 1, 2, dims);
    pc_dtype xt = how == 1 ? PC_DTYPE_INT8 : draw_qtype(u);
    pc_genq_params xp;
    bool x_axis = how == 3 && dims[1] > 1;
    pc_status st =
        pc_genq_params_draw(&u->q, xt, x_axis ? 1 : -1, x_axis ? (uint32_t)dims[1] : 1, 1.0, &xp, err);
    pc_genq_value *x;
    if (st == PC_OK) st = pc_genq_input(&u->q, r, dims, &xp, &x, err);
    pc_genq_params_free(&xp);
    if (st != PC_OK) return st;
    pc_genq_conv c;
    if (!pc_genq_conv_draw(&u->q, x, &c)) return PC_OK; /* over the element cap: nothing more */
    pc_dtype wt = how == 1 ? PC_DTYPE_UINT8 : PC_DTYPE_INT8;
    bool per_axis = c.m > 1 && pc_draw_bool(g->ch, 50);
    pc_genq_value w;
    pc_genq_params wp;
    if ((st = pc_genq_weights(&u->q, wt, c.rank, c.w_dims, 0, per_axis ? (uint32_t)c.m : 1, &w, &wp, err)) !=
        PC_OK)
        return st;
    pc_value *ins[3] = {NULL, NULL, NULL};
    uint32_t n_in = 2;
    double bmag = 0;
    if ((st = pc_genq_dequantize(&u->q, x, false, &ins[0], err)) != PC_OK ||
        (st = pc_genq_dequantize(&u->q, &w, false, &ins[1], err)) != PC_OK)
        goto done;
    if (!x_axis && (how == 2 || pc_draw_bool(g->ch, 50))) {
        float xs = pc_genq_scale0(x), bscales[64];
        pc_value *b = pc_genq_bias(&u->q, c.m, xs, w.s_max, &bmag, err);
        if (!b || wp.n > 64) {
            st = b ? pc_error_set(err, PC_ERR_INTERNAL, "patterns: %u bias scales", wp.n) : err->status;
            goto done;
        }
        for (uint32_t i = 0; i < wp.n; i++)
            bscales[i] = xs * wp.scales[i] * (how == 2 && i == 0 ? 1.0009765625f : 1.0f);
        int64_t dim = wp.n;
        pc_gen_value *bs = pc_gen_const_f32(g, PC_DTYPE_FLOAT, wp.axis >= 0 ? 1 : 0, &dim, bscales, err);
        pc_value *bins[2] = {b, bs ? bs->value : NULL};
        pc_node *bn = bs ? node(u, "DequantizeLinear", 2, bins, 1, err) : NULL;
        if (bn && wp.axis >= 0 && pc_node_set_attr_int(bn, "axis", 0, err) != PC_OK) bn = NULL;
        if ((st = end(u, bn, -bmag * 1.01, bmag * 1.01, &ins[2], err)) != PC_OK) goto done;
        n_in = 3;
    }
    double amax = fmax(fabs(x->lo), fabs(x->hi)), wmax = fmax(fabs(w.lo), fabs(w.hi));
    double bound = (double)c.kelems * amax * wmax + bmag * 1.01;
    pc_node *conv = node(u, "Conv", n_in, ins, 1, err);
    if (conv && pc_genq_conv_attrs(&c, conv, err) != PC_OK) conv = NULL;
    pc_value *y = NULL;
    if ((st = end(u, conv, -bound, bound, &y, err)) != PC_OK) goto done;
    /* a per-axis output has one zero point per channel: no Relu (its mid-range zero point is per tensor) */
    bool y_axis = how == 5 && c.m > 1, relu = !y_axis && pc_draw_bool(g->ch, 40);
    double lo = -bound;
    if (relu) {
        if ((st = unary(u, "Relu", y, 0, bound, &y, err)) != PC_OK) goto done;
        lo = 0;
    }
    pc_genq_params yp;
    pc_dtype yt = how == 0 ? (xt == PC_DTYPE_INT8 ? PC_DTYPE_UINT8 : PC_DTYPE_INT8) : xt;
    if ((st = pc_genq_params_draw(&u->q, yt, y_axis ? 1 : -1, y_axis ? (uint32_t)c.m : 1,
                                  sqrt((double)c.kelems) * amax * wmax * 0.5 + bmag, &yp, err)) != PC_OK)
        goto done;
    if (relu) yp.zps[0] = yt == PC_DTYPE_INT8 ? 0 : 128; /* mid-range: the Relu is not redundant */
    pc_genq_value *out;
    st = pc_genq_quantize(&u->q, y, lo, bound, &yp, &out, err);
    pc_genq_params_free(&yp);
    pc_rewrite_kind kind = relu ? PC_RW_QLINEAR_CONV_RELU : PC_RW_QLINEAR_CONV;
    if (st == PC_OK && how == 4) expect(u, kind);
    /* the refusals with one certain reason (a per-channel output stops the pass before it matches) */
    if (st == PC_OK && (how == 0 || how == 1 || (how == 3 && x_axis))) expect_near(u, kind, PC_MISS_TYPE);
    if (st == PC_OK && how == 2) expect_near(u, kind, PC_MISS_NOT_CONSTANT);
done:
    pc_genq_params_free(&wp);
    return st;
}

/* DQ(a) [per tensor] , DQ(b) [int8 [K, N], per tensor or per column] -> MatMul -> Q(type of a):
 * QLinearMatMul. Near: b quantized along K (axis 0: the scale varies along the sum; attribute), the output
 * type differs from a's (type), or a quantized per axis along K (type: QLinearMatMul takes a per tensor). */
static pc_status unit_qlinear_matmul(unit_ctx *u, pc_error *err)
{
    pc_gen *g = u->g;
    int32_t r = draw_rank(u, 1, 3);
    static const uint32_t nears[] = {0, 1, 3};
    uint32_t how = u->near ? nears[pc_draw(g->ch, 3)] : 2;
    int64_t dims[PC_MAX_RANK];
    pc_genq_draw_dims(&u->q, r, 1, 1, dims);
    if (how == 3 && dims[r - 1] < 2) how = 1; /* per-axis a needs K >= 2: the type near miss instead */
    pc_dtype at = draw_qtype(u);
    pc_genq_params ap;
    pc_status st = how == 3 ? pc_genq_params_draw(&u->q, at, r - 1, (uint32_t)dims[r - 1], 1.0, &ap, err)
                            : pc_genq_params_draw(&u->q, at, -1, 1, 1.0, &ap, err);
    pc_genq_value *a;
    if (st == PC_OK) st = pc_genq_input(&u->q, r, dims, &ap, &a, err);
    pc_genq_params_free(&ap);
    if (st != PC_OK) return st;
    int64_t k = dims[r - 1], n = pc_draw_range(g->ch, 1, 4), out_dims[PC_MAX_RANK], wdims[2];
    if (how == 0 && k < 2) how = 1; /* per-K scales need K >= 2: the type near miss instead */
    wdims[0] = k;
    wdims[1] = n;
    memcpy(out_dims, dims, sizeof out_dims);
    out_dims[r - 1] = n;
    if (!pc_gen_shape_fits(g, r, out_dims) || !pc_gen_shape_fits(g, 2, wdims)) return PC_OK;
    int32_t axis = how == 0 ? 0 : 1;
    uint32_t n_scales = how == 0 ? (uint32_t)k : n > 1 && pc_draw_bool(g->ch, 50) ? (uint32_t)n : 1;
    pc_genq_value w;
    pc_genq_params wp;
    if ((st = pc_genq_weights(&u->q, PC_DTYPE_INT8, 2, wdims, axis, n_scales, &w, &wp, err)) != PC_OK)
        return st;
    pc_value *ins[2] = {NULL, NULL}, *y = NULL;
    double amax = fmax(fabs(a->lo), fabs(a->hi)), wmax = fmax(fabs(w.lo), fabs(w.hi)),
           bound = (double)k * amax * wmax;
    if ((st = pc_genq_dequantize(&u->q, a, false, &ins[0], err)) != PC_OK ||
        (st = pc_genq_dequantize(&u->q, &w, false, &ins[1], err)) != PC_OK ||
        (st = end(u, node(u, "MatMul", 2, ins, 1, err), -bound, bound, &y, err)) != PC_OK)
        goto done;
    pc_genq_params yp;
    pc_dtype yt = how == 1 ? (at == PC_DTYPE_INT8 ? PC_DTYPE_UINT8 : PC_DTYPE_INT8) : at;
    if ((st = pc_genq_params_draw(&u->q, yt, -1, 1, sqrt((double)k) * amax * wmax * 0.5, &yp, err)) != PC_OK)
        goto done;
    pc_genq_value *out;
    st = pc_genq_quantize(&u->q, y, -bound, bound, &yp, &out, err);
    pc_genq_params_free(&yp);
    if (st == PC_OK && how == 2) expect(u, PC_RW_QLINEAR_MATMUL);
    if (st == PC_OK && how != 2)
        expect_near(u, PC_RW_QLINEAR_MATMUL, how == 0 ? PC_MISS_ATTRIBUTE : PC_MISS_TYPE);
done:
    pc_genq_params_free(&wp);
    return st;
}

/* ---- value and type reach: the Cast matrix and integer arithmetic ------------------------------------ */

/* The element types the Cast units draw (draw 0: float). */
static const pc_dtype cast_types[] = {
    PC_DTYPE_FLOAT, PC_DTYPE_DOUBLE, PC_DTYPE_FLOAT16, PC_DTYPE_INT8,   PC_DTYPE_UINT8, PC_DTYPE_INT16,
    PC_DTYPE_INT32, PC_DTYPE_INT64,  PC_DTYPE_UINT32,  PC_DTYPE_UINT64, PC_DTYPE_BOOL,
};
enum { N_CAST_TYPES = sizeof cast_types / sizeof cast_types[0], MAX_CAST_TARGETS = 3 };

static bool type_is_float(pc_dtype t)
{
    return t == PC_DTYPE_FLOAT || t == PC_DTYPE_DOUBLE || t == PC_DTYPE_FLOAT16;
}

/* An integer type other than bool (a float -> bool Cast is defined for every value). */
static bool type_is_int(pc_dtype t)
{
    return !type_is_float(t) && t != PC_DTYPE_BOOL;
}

/* The closed interval of t's finite values. */
static void type_bounds(pc_dtype t, double *lo, double *hi)
{
    switch (t) {
    case PC_DTYPE_INT8:
        *lo = -128, *hi = 127;
        return;
    case PC_DTYPE_UINT8:
        *lo = 0, *hi = 255;
        return;
    case PC_DTYPE_INT16:
        *lo = -32768, *hi = 32767;
        return;
    case PC_DTYPE_INT32:
        *lo = -2147483648.0, *hi = 2147483647.0;
        return;
    case PC_DTYPE_UINT32:
        *lo = 0, *hi = 4294967295.0;
        return;
    case PC_DTYPE_INT64:
        *lo = -9.0e18, *hi = 9.0e18;
        return;
    case PC_DTYPE_UINT64:
        *lo = 0, *hi = 1.8e19;
        return;
    case PC_DTYPE_BOOL:
        *lo = 0, *hi = 1;
        return;
    case PC_DTYPE_FLOAT16:
        *lo = -65504, *hi = 65504;
        return;
    case PC_DTYPE_FLOAT:
        *lo = -3.4e38, *hi = 3.4e38;
        return;
    default:
        *lo = -1.7e308, *hi = 1.7e308;
        return;
    }
}

static void range_meet(double *lo, double *hi, double l, double h)
{
    *lo = fmax(*lo, l);
    *hi = fmin(*hi, h);
}

/* Narrows [lo, hi], the values of a source of type `from`, so that a Cast of them to `to` is defined:
 * float -> integer only for values whose truncation fits the integer (ONNX leaves the rest undefined; a
 * float16 source keeps a margin for its own rounding). Integer narrowing wraps and float -> float or bool is
 * defined for every value. */
static void cast_defined(pc_dtype from, pc_dtype to, double *lo, double *hi)
{
    if (!type_is_float(from) || !type_is_int(to)) return;
    double l, h;
    type_bounds(to, &l, &h);
    if (from == PC_DTYPE_FLOAT16) {
        l *= 0.99;
        h *= 0.99;
    }
    range_meet(lo, hi, l, h);
}

/* Values of magnitude up to 4, 100, 1000 or 50000 (draw 0: 4), both signs where `from` has them. */
static void cast_draw_range(unit_ctx *u, pc_dtype from, double *lo, double *hi)
{
    static const double mags[] = {4, 100, 1000, 50000};
    double m = mags[pc_draw(u->g->ch, sizeof mags / sizeof mags[0])], l, h;
    type_bounds(from, &l, &h);
    *lo = -m;
    *hi = m;
    range_meet(lo, hi, l, h);
}

/* A source of type `from` with values in [lo, hi]: a graph input, or with as_const an initializer; a float16
 * source is a float one Cast to float16 (the builder draws no float16 data). With allow_special a float
 * graph input may hold NaN, Inf or huge values, which no float -> integer Cast may read: the caller makes
 * such sources constant. */
static pc_value *cast_source(unit_ctx *u, pc_dtype from, bool as_const, double lo, double hi, pc_error *err)
{
    int64_t dims[PC_MAX_RANK];
    int32_t r = small_shape(u, 1, 3, 3, dims, NULL);
    pc_dtype data = from == PC_DTYPE_FLOAT16 ? PC_DTYPE_FLOAT : from;
    pc_gen_value *v = as_const ? pc_gen_const(u->g, data, r, dims, lo, hi, err)
                               : pc_gen_input(u->g, data, r, dims, lo, hi, err);
    if (!v) return NULL;
    pc_value *x = v->value;
    if (from == PC_DTYPE_FLOAT16) {
        pc_node *n = node(u, "Cast", 1, &x, 1, err);
        if (!n || pc_node_set_attr_int(n, "to", PC_DTYPE_FLOAT16, err) != PC_OK ||
            end(u, n, lo, hi, &x, err) != PC_OK)
            return NULL;
    }
    return x;
}

static pc_status cast(unit_ctx *u, pc_value *x, pc_dtype to, double lo, double hi, pc_value **out,
                      pc_error *err)
{
    pc_node *n = node(u, "Cast", 1, &x, 1, err);
    if (n && pc_node_set_attr_int(n, "to", to, err) != PC_OK) return err->status;
    return end(u, n, lo, hi, out, err);
}

/* The interval of a Cast's output: the input's (floats round within it, or overflow float16 to +-Inf,
 * which only a graph output or a Cast to float reads), truncated for an integer target, or the target's
 * whole range when the values wrap. */
static void cast_interval(pc_dtype to, double lo, double hi, double *ylo, double *yhi)
{
    double l, h;
    type_bounds(to, &l, &h);
    *ylo = lo;
    *yhi = hi;
    if (to == PC_DTYPE_BOOL) {
        *ylo = 0;
        *yhi = 1;
    } else if (type_is_int(to)) {
        *ylo = trunc(lo);
        *yhi = trunc(hi);
        if (*ylo < l || *yhi > h) {
            *ylo = l;
            *yhi = h;
        }
    }
}

/* The Cast matrix: one source of a type drawn from cast_types, Cast to one to three targets drawn from the
 * same list or, for a quarter of them, the source's own type (draw 0: float to float), each read by a Relu
 * (float) or a Cast to float (the rest). A Cast to the source's own type is eliminate_cast's cast_removed.
 * Values stay where every Cast is defined (float -> integer within the target's range), with both signs for
 * signed sources; a quarter of the sources are constants (fold_constants evaluates those Casts with core's
 * evaluator). Near: a target's output is a graph output instead, so a same-type Cast of a graph input cannot
 * be bypassed (no name to take over). */
static pc_status unit_cast(unit_ctx *u, pc_error *err)
{
    uint32_t fi = pc_draw(u->g->ch, N_CAST_TYPES);
    pc_dtype from = cast_types[fi], to[MAX_CAST_TARGETS];
    uint32_t n_to = 1 + pc_draw(u->g->ch, MAX_CAST_TARGETS);
    bool float_to_int = false;
    for (uint32_t k = 0; k < n_to; k++) {
        /* a quarter of the targets are the source's own type, the others another one (no draw spent on the
         * diagonal twice: the 110 other pairs come up sooner) */
        to[k] = pc_draw_bool(u->g->ch, 25)
                    ? from
                    : cast_types[(fi + 1 + pc_draw(u->g->ch, N_CAST_TYPES - 1)) % N_CAST_TYPES];
        float_to_int = float_to_int || (type_is_float(from) && type_is_int(to[k]));
    }
    double lo, hi;
    cast_draw_range(u, from, &lo, &hi);
    for (uint32_t k = 0; k < n_to; k++)
        cast_defined(from, to[k], &lo, &hi);
    bool as_const = pc_draw_bool(u->g->ch, 25) || (float_to_int && u->g->cfg->allow_special);
    pc_value *x = cast_source(u, from, as_const, lo, hi, err);
    if (!x) return err->status;
    for (uint32_t k = 0; k < n_to; k++) {
        double ylo, yhi;
        cast_interval(to[k], lo, hi, &ylo, &yhi);
        pc_value *y = NULL;
        pc_status st = cast(u, x, to[k], ylo, yhi, &y, err);
        if (st != PC_OK) return st;
        if (u->near) continue; /* y is a graph output */
        if (to[k] == from && !as_const) expect(u, PC_RW_CAST_REMOVED);
        if ((st = share(u, y, err)) != PC_OK) return st;
    }
    return PC_OK;
}

/* A Cast chain A -> B -> A (B != A): never one Cast's job, and lossy when B narrows (int32 -> int8 wraps,
 * float -> int truncates, double -> float16 rounds), so nothing may remove it; the numerics property holds
 * the value. Values where both Casts are defined: float A within B's range for an integer B, integer A within
 * float16's exact integers (+-2048) for B float16, so the way back stays in A's range. Canonical: the result
 * is read by a Relu or a Cast to float; near: it is a graph output. */
static pc_status unit_cast_chain(unit_ctx *u, pc_error *err)
{
    uint32_t ai = pc_draw(u->g->ch, N_CAST_TYPES);
    pc_dtype a = cast_types[ai],
             b = cast_types[(ai + 1 + pc_draw(u->g->ch, N_CAST_TYPES - 1)) % N_CAST_TYPES];
    double lo, hi;
    cast_draw_range(u, a, &lo, &hi);
    cast_defined(a, b, &lo, &hi);
    if (type_is_int(a) && b == PC_DTYPE_FLOAT16) range_meet(&lo, &hi, -2048, 2048);
    if (type_is_int(a) && b == PC_DTYPE_FLOAT) range_meet(&lo, &hi, -16777216.0, 16777216.0);
    bool as_const =
        pc_draw_bool(u->g->ch, 25) || (type_is_float(a) && type_is_int(b) && u->g->cfg->allow_special);
    pc_value *x = cast_source(u, a, as_const, lo, hi, err), *y = NULL, *z = NULL;
    if (!x) return err->status;
    double ylo, yhi, zlo, zhi;
    cast_interval(b, lo, hi, &ylo, &yhi);
    cast_interval(a, ylo, yhi, &zlo, &zhi);
    pc_status st = cast(u, x, b, ylo, yhi, &y, err);
    if (st == PC_OK) st = cast(u, y, a, zlo, zhi, &z, err);
    if (st != PC_OK || u->near) return st;
    return share(u, z, err);
}

/* Integer arithmetic on int32 or int64 with both signs: a constant [-20, 20] through one to three of Add,
 * Sub, Mul (constant operands in [-9, 9], either order), Div and Mod (a nonzero divisor in [-9, 9]; Mod with
 * fmod 0, as the default or explicit, or fmod 1), the constants broadcasting from trailing dims, then added
 * to an integer graph input. ONNX: Div truncates toward zero, Mod with fmod 0 takes the divisor's sign, fmod
 * 1 the dividend's. Canonical: every op reads only constants and is folded by core's evaluator
 * (node_folded). Near: the first operand is a graph input instead (nothing folds; the evaluator property
 * still judges each op against the reference). Magnitudes stay below 20 * 9^3. */
static pc_status unit_int_arith(unit_ctx *u, pc_error *err)
{
    static const char *const ops[] = {"Add", "Sub", "Mul", "Div", "Mod"};
    pc_gen *g = u->g;
    pc_dtype dt = pc_draw_bool(g->ch, 50) ? PC_DTYPE_INT32 : PC_DTYPE_INT64;
    int64_t dims[PC_MAX_RANK];
    int32_t r = small_shape(u, 1, 3, 3, dims, NULL);
    double lo = -20, hi = 20;
    pc_gen_value *first =
        u->near ? pc_gen_input(g, dt, r, dims, lo, hi, err) : pc_gen_const(g, dt, r, dims, lo, hi, err);
    if (!first) return err->status;
    pc_value *acc = first->value;
    uint32_t n_ops = 1 + pc_draw(g->ch, 3);
    for (uint32_t k = 0; k < n_ops; k++) {
        uint32_t op = pc_draw(g->ch, sizeof ops / sizeof ops[0]);
        bool divides = op >= 3;
        int32_t cr = (int32_t)pc_draw_range(g->ch, 0, r); /* the constant: trailing dims of acc, or 1s */
        int64_t cdims[PC_MAX_RANK], vals[27];
        uint64_t n = 1;
        for (int32_t i = 0; i < cr; i++) {
            cdims[i] = pc_draw_bool(g->ch, 30) ? 1 : dims[r - cr + i];
            n *= (uint64_t)cdims[i];
        }
        if (n > sizeof vals / sizeof vals[0])
            return pc_error_set(err, PC_ERR_INTERNAL, "patterns: int_arith constant of %llu elements",
                                (unsigned long long)n);
        /* values from one seed draw (0 still gives varied values): [-9, 9], without 0 for a divisor */
        uint64_t seed = pc_draw(g->ch, UINT32_MAX);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t bits = pc_splitmix64(&seed);
            int64_t mag = divides ? 1 + (int64_t)(bits % 9) : (int64_t)(bits % 10);
            vals[i] = bits >> 32 & 1 ? -mag : mag;
        }
        pc_gen_value *c = pc_gen_const_i64(g, dt, cr, cdims, vals, err);
        if (!c) return err->status;
        bool swap = !divides && pc_draw_bool(g->ch, 30);
        pc_value *ins[2] = {swap ? c->value : acc, swap ? acc : c->value};
        pc_node *nd = node(u, ops[op], 2, ins, 1, err);
        if (!nd) return err->status;
        if (op == 4) {
            uint32_t fmod = pc_draw(g->ch, 3); /* 0: the default (0), 1: fmod = 1, 2: fmod = 0 explicitly */
            if (fmod && pc_node_set_attr_int(nd, "fmod", fmod == 1, err) != PC_OK) return err->status;
        }
        /* |acc| <= m: Add/Sub reach m + 9, Mul 9m, Div m, Mod 8 */
        double m = fmax(fabs(lo), fabs(hi));
        m = op <= 1 ? m + 9 : op == 2 ? 9 * m : op == 3 ? m : 8;
        lo = -m;
        hi = m;
        pc_status st = end(u, nd, lo, hi, &acc, err);
        if (st != PC_OK) return st;
        if (!u->near) expect(u, PC_RW_CONST_FOLDED);
    }
    pc_gen_value *x = pc_gen_input(g, dt, r, dims, -5, 5, err);
    if (!x) return err->status;
    pc_value *ins[2] = {acc, x->value};
    return end(u, node(u, pc_draw_bool(g->ch, 50) ? "Sub" : "Add", 2, ins, 1, err), lo - 5, hi + 5, NULL,
               err);
}

/* ---- constant folding: an op core's evaluator implements, applied to a constant, so fold_constants
 * evaluates it (core/eval) and numerics compares the folded value with the reference running the op. The
 * evaluator's kernels were reached only through the few ops other units fold; reach, not a rewrite guarantee
 * (an op whose other operand the op's builder makes a graph input does not fold). ---- */

/* Ops of the generators' table that core/eval evaluates (core/eval/eval.c's table). */
/* Ops of the generators' table that core/eval evaluates on float tensors (core/eval/eval.c's table; its
 * reductions fold integers only, so they are not here). */
static const char *const fold_ops[] = {
    "Abs", "Add",        "Concat",  "Div",   "Expand", "Flatten", "Gather", "Max",       "Min",       "Mul",
    "Neg", "Reciprocal", "Reshape", "Slice", "Sqrt",   "Squeeze", "Sub",    "Transpose", "Unsqueeze", "Where",
};

/* ReduceSum/Prod/Min/Max of an int32 or int64 constant (core/eval folds reductions of integers only,
 * exactly), axes drawn (none: every axis; negative ones sometimes; an attribute or, from ReduceSum-13 and the
 * others' 18, an input), keepdims absent, 0 or 1; a Neg reads it. Values stay small: a product of at most 81
 * of {-1, 0, 1}. */
static pc_status fold_int_reduce(unit_ctx *u, pc_error *err)
{
    static const char *const ops[] = {"ReduceSum", "ReduceProd", "ReduceMin", "ReduceMax"};
    pc_gen *g = u->g;
    uint32_t op = pc_draw(g->ch, 4);
    pc_dtype dt = pc_draw_bool(g->ch, 50) ? PC_DTYPE_INT32 : PC_DTYPE_INT64;
    int32_t max_r = g->cfg->max_rank < 4 ? g->cfg->max_rank : 4;
    int32_t r = (int32_t)pc_draw_range(g->ch, 1, max_r > 1 ? max_r : 1);
    int64_t dims[PC_MAX_RANK], vals[81];
    uint64_t n = 1;
    for (int32_t i = 0; i < r; i++) {
        dims[i] = 1 + pc_draw(g->ch, 3);
        n *= (uint64_t)dims[i];
    }
    if (n > g->cfg->max_elements) return PC_OK;
    uint64_t seed = pc_draw(g->ch, UINT32_MAX);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t bits = pc_splitmix64(&seed);
        vals[i] = op == 1 ? (int64_t)(bits % 3) - 1 : (int64_t)(bits % 9) - 4;
    }
    pc_gen_value *x = pc_gen_const_i64(g, dt, r, dims, vals, err);
    if (!x) return err->status;
    uint32_t mask = pc_draw(g->ch, 1u << r); /* 0: every axis */
    bool negative = mask && pc_draw_bool(g->ch, 25);
    int64_t axes[PC_MAX_RANK], na = 0;
    for (int32_t i = 0; i < r; i++)
        if (mask >> i & 1) axes[na++] = negative ? i - r : i;
    int64_t opset = pc_gen_opset(g);
    bool as_input = opset >= 18 || (op == 0 && opset >= 13);
    pc_value *ins[2] = {x->value, NULL};
    if (na && as_input) {
        pc_gen_value *a = pc_gen_const_i64(g, PC_DTYPE_INT64, 1, &na, axes, err);
        if (!a) return err->status;
        ins[1] = a->value;
    }
    pc_node *nd = node(u, ops[op], ins[1] ? 2 : 1, ins, 1, err);
    if (!nd) return err->status;
    if (na && !as_input && pc_node_set_attr_ints(nd, "axes", (size_t)na, axes, err) != PC_OK)
        return err->status;
    uint32_t keep = pc_draw(g->ch, 3); /* 0: absent (1), 1: 0, 2: 1 given */
    if (keep && pc_node_set_attr_int(nd, "keepdims", keep == 2, err) != PC_OK) return err->status;
    pc_value *y = NULL;
    pc_status st = end(u, nd, -400, 400, &y, err);
    return st == PC_OK ? unary(u, "Neg", y, -400, 400, NULL, err) : st;
}

/* Range(start, limit, delta) of int64, int32, float or double scalar constants (halves for the floats), delta
 * nonzero of either sign, at most 16 elements (empty ranges too, the limit at start or on its wrong side),
 * read by a Neg. */
static pc_status fold_range(unit_ctx *u, pc_error *err)
{
    pc_gen *g = u->g;
    static const pc_dtype types[] = {PC_DTYPE_INT64, PC_DTYPE_INT32, PC_DTYPE_FLOAT, PC_DTYPE_DOUBLE};
    pc_dtype dt = types[pc_draw(g->ch, 4)];
    int64_t start = pc_draw_range(g->ch, -5, 5), delta = 1 + (int64_t)pc_draw(g->ch, 3);
    if (pc_draw_bool(g->ch, 40)) delta = -delta;
    /* a count below 0 puts the limit on the wrong side of start: an empty range, as is 0 */
    int64_t count = pc_draw_bool(g->ch, 15) ? -1 - (int64_t)pc_draw(g->ch, 3) : (int64_t)pc_draw(g->ch, 17);
    int64_t limit = start + delta * count;
    pc_gen_value *a, *b = NULL, *c = NULL;
    if (dt == PC_DTYPE_FLOAT || dt == PC_DTYPE_DOUBLE) {
        /* halves: every value and the count exact in float32 */
        float v[3] = {(float)start / 2, (float)limit / 2, (float)delta / 2};
        if ((a = pc_gen_const_f32(g, dt, 0, NULL, &v[0], err)) &&
            (b = pc_gen_const_f32(g, dt, 0, NULL, &v[1], err)))
            c = pc_gen_const_f32(g, dt, 0, NULL, &v[2], err);
    } else if ((a = pc_gen_const_i64(g, dt, 0, NULL, &start, err)) &&
               (b = pc_gen_const_i64(g, dt, 0, NULL, &limit, err))) {
        c = pc_gen_const_i64(g, dt, 0, NULL, &delta, err);
    }
    if (!c) return err->status;
    pc_value *ins[3] = {a->value, b->value, c->value}, *y = NULL;
    pc_status st = end(u, node(u, "Range", 3, ins, 1, err), -60, 60, &y, err);
    return st == PC_OK ? unary(u, "Neg", y, -60, 60, NULL, err) : st;
}

/* Greater, Less or Equal of two integer constants (int32 and int64 of both signs, uint8 and uint32), the
 * second full size or a scalar; sometimes Not, And or Or with a second comparison; a Where of two float graph
 * inputs reads the mask, so the folded value reaches a graph output. Values in a small range make ties
 * common. The near form makes the first operand a graph input (nothing folds). */
static pc_status fold_int_compare(unit_ctx *u, pc_error *err)
{
    static const char *const cmps[] = {"Greater", "Less", "Equal"};
    static const pc_dtype types[] = {PC_DTYPE_INT32, PC_DTYPE_INT64, PC_DTYPE_UINT8, PC_DTYPE_UINT32};
    pc_gen *g = u->g;
    /* Equal-7 (opsets 7..10) takes bool, int32 and int64 only: unsigned operands from opset 11 */
    pc_dtype dt = types[pc_draw(g->ch, pc_gen_opset(g) >= 11 ? 4 : 2)];
    bool is_unsigned = dt == PC_DTYPE_UINT8 || dt == PC_DTYPE_UINT32;
    int64_t dims[PC_MAX_RANK], va[27], vb[27];
    uint64_t n;
    int32_t r = small_shape(u, 1, 3, 3, dims, &n);
    if (n > sizeof va / sizeof va[0]) return PC_OK;
    uint32_t combine = pc_draw(g->ch, 4); /* 0: the comparison, 1: Not of it, 2: And, 3: Or with a second */
    pc_value *mask = NULL;
    for (uint32_t k = 0; k < (combine >= 2 ? 2u : 1u); k++) {
        uint64_t seed = pc_draw(g->ch, UINT32_MAX);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t bits = pc_splitmix64(&seed);
            va[i] = is_unsigned ? (int64_t)(bits % 6) : (int64_t)(bits % 7) - 3;
            vb[i] = is_unsigned ? (int64_t)(bits >> 32 & 7) : (int64_t)((bits >> 32) % 7) - 3;
        }
        bool scalar_b = pc_draw_bool(g->ch, 30);
        pc_gen_value *a = u->near && k == 0 ? pc_gen_input(g, dt, r, dims, is_unsigned ? 0 : -3, 5, err)
                                            : pc_gen_const_i64(g, dt, r, dims, va, err);
        pc_gen_value *b = a ? pc_gen_const_i64(g, dt, scalar_b ? 0 : r, dims, vb, err) : NULL;
        if (!b) return err->status;
        pc_value *ins[2] = {a->value, b->value}, *c = NULL;
        pc_status st = end(u, node(u, cmps[pc_draw(g->ch, 3)], 2, ins, 1, err), 0, 1, &c, err);
        if (st != PC_OK) return st;
        if (k == 0) {
            mask = c;
        } else {
            pc_value *both[2] = {mask, c};
            if ((st = end(u, node(u, combine == 2 ? "And" : "Or", 2, both, 1, err), 0, 1, &mask, err)) !=
                PC_OK)
                return st;
        }
    }
    if (combine == 1) {
        pc_status st = unary(u, "Not", mask, 0, 1, &mask, err);
        if (st != PC_OK) return st;
    }
    if (!u->near) expect(u, PC_RW_CONST_FOLDED);
    pc_gen_value *x = pc_gen_input(g, PC_DTYPE_FLOAT, r, dims, -5, 5, err);
    pc_gen_value *y = x ? pc_gen_input(g, PC_DTYPE_FLOAT, r, dims, -5, 5, err) : NULL;
    if (!y) return err->status;
    pc_value *ins[3] = {mask, x->value, y->value};
    return end(u, node(u, "Where", 3, ins, 1, err), -5, 5, NULL, err);
}

/* A rank-1 float tensor attribute of n values (the model owns the tensor). */
static pc_status attr_floats_tensor(pc_node *nd, const char *name, int64_t n, const float *vals,
                                    pc_error *err)
{
    pc_tensor *t = pc_tensor_create(nd->graph->model, "", PC_DTYPE_FLOAT, 1, &n, err);
    if (!t) return err->status;
    memcpy(t->data, vals, (size_t)n * sizeof *vals);
    return pc_node_set_attr_tensor(nd, name, t, err);
}

/* The constant-making ops core's evaluator folds: a Constant in each attribute form (value; from opset 12
 * value_float, value_floats, value_int, value_ints), Size or Shape of a float constant, ConstantOfShape of a
 * constant shape with its value given or left to the default 0.0f; an Add (or Mul) with a graph input of the
 * result's type reads it. */
static pc_status fold_const_forms(unit_ctx *u, pc_error *err)
{
    pc_gen *g = u->g;
    bool opset12 = pc_gen_opset(g) >= 12;
    uint32_t form = pc_draw(g->ch, opset12 ? 8 : 4); /* 0 value, 1 Size, 2 Shape, 3 ConstantOfShape, 4.. */
    int64_t dims[PC_MAX_RANK];
    int32_t r = small_shape(u, 1, 3, 3, dims, NULL);
    pc_node *nd = NULL;
    pc_dtype out_dt = PC_DTYPE_FLOAT;
    int32_t out_rank = 0;
    int64_t out_dims[PC_MAX_RANK] = {0};
    int64_t ivals[3] = {pc_draw_range(g->ch, -9, 9), pc_draw_range(g->ch, -9, 9),
                        pc_draw_range(g->ch, -9, 9)};
    float fvals[3] = {(float)ivals[0] / 4, (float)ivals[1] / 4, (float)ivals[2] / 4};
    int64_t nvals = pc_draw_range(g->ch, 1, 3);
    pc_status st = PC_OK;
    if (form == 1 || form == 2) {
        pc_gen_value *c = pc_gen_const(g, PC_DTYPE_FLOAT, r, dims, -3, 3, err);
        if (!c) return err->status;
        nd = node(u, form == 1 ? "Size" : "Shape", 1, &c->value, 1, err);
        out_dt = PC_DTYPE_INT64;
        out_rank = form == 1 ? 0 : 1;
        out_dims[0] = r;
        /* Shape-15's start and end, anywhere in [-r-2, r+2]: outside [-r, r] they clamp */
        if (nd && form == 2 && pc_gen_opset(g) >= 15 && pc_draw_bool(g->ch, 60)) {
            int64_t s = pc_draw_range(g->ch, -r - 2, r + 2), e = pc_draw_range(g->ch, -r - 2, r + 2);
            if ((st = pc_node_set_attr_int(nd, "start", s, err)) != PC_OK ||
                (st = pc_node_set_attr_int(nd, "end", e, err)) != PC_OK)
                return st;
            s = s < 0 ? s + r : s;
            e = e < 0 ? e + r : e;
            s = s < 0 ? 0 : s > r ? r : s;
            e = e < 0 ? 0 : e > r ? r : e;
            out_dims[0] = e > s ? e - s : 0;
        }
    } else if (form == 3) {
        pc_value *shape = ints_const(u, 1, (size_t)r, dims, err);
        if (!shape) return err->status;
        nd = node(u, "ConstantOfShape", 1, &shape, 1, err);
        out_rank = r;
        memcpy(out_dims, dims, (size_t)r * sizeof dims[0]);
        if (nd && pc_draw_bool(g->ch, 70)) /* value given: a one-element float tensor */
            st = attr_floats_tensor(nd, "value", 1, fvals, err);
    } else {
        nd = node(u, "Constant", 0, NULL, 1, err);
        if (!nd) return err->status;
        bool ints = form == 6 || form == 7, list = form == 5 || form == 7;
        out_dt = ints ? PC_DTYPE_INT64 : PC_DTYPE_FLOAT;
        out_rank = list ? 1 : 0;
        out_dims[0] = nvals;
        if (form == 0) {
            out_rank = 1;
            st = attr_floats_tensor(nd, "value", nvals, fvals, err);
        } else if (form == 4) {
            st = pc_node_set_attr_float(nd, "value_float", fvals[0], err);
        } else if (form == 5) {
            st = pc_node_set_attr_floats(nd, "value_floats", (size_t)nvals, fvals, err);
        } else if (form == 6) {
            st = pc_node_set_attr_int(nd, "value_int", ivals[0], err);
        } else {
            st = pc_node_set_attr_ints(nd, "value_ints", (size_t)nvals, ivals, err);
        }
    }
    if (!nd) return err->status;
    if (st != PC_OK) return st;
    pc_value *c = NULL;
    if ((st = end(u, nd, -9, 9, &c, err)) != PC_OK) return st;
    if (!u->near) expect(u, PC_RW_CONST_FOLDED);
    pc_gen_value *x = pc_gen_input(g, out_dt, out_rank, out_dims, -5, 5, err);
    if (!x) return err->status;
    pc_value *ins[2] = {c, x->value};
    return end(u, node(u, pc_draw_bool(g->ch, 50) ? "Add" : "Mul", 2, ins, 1, err), -50, 50, NULL, err);
}

/* Min or Max of two or three float constants of one shape whose elements are signed zeros and +-1: ties of +0
 * and -0, which the evaluator must settle as the reference does (the earlier operand wins); an Add (or Mul)
 * with a graph input reads the folded result. */
static pc_status fold_min_max_ties(unit_ctx *u, pc_error *err)
{
    pc_gen *g = u->g;
    static const float vals[] = {0.0f, -0.0f, 1.0f, -1.0f};
    int64_t dims[PC_MAX_RANK];
    uint64_t n;
    int32_t r = small_shape(u, 1, 2, 4, dims, &n);
    float data[16];
    pc_value *ins[3];
    uint32_t n_in = 2 + pc_draw(g->ch, 2);
    for (uint32_t k = 0; k < n_in; k++) {
        for (uint64_t e = 0; e < n && e < 16; e++)
            data[e] = vals[pc_draw(g->ch, 4)];
        pc_gen_value *c = pc_gen_const_f32(g, PC_DTYPE_FLOAT, r, dims, data, err);
        if (!c) return err->status;
        ins[k] = c->value;
    }
    pc_value *y = NULL;
    pc_status st =
        end(u, node(u, pc_draw_bool(g->ch, 50) ? "Max" : "Min", n_in, ins, 1, err), -1, 1, &y, err);
    if (st != PC_OK) return st;
    if (!u->near) expect(u, PC_RW_CONST_FOLDED);
    pc_gen_value *x = pc_gen_input(g, PC_DTYPE_FLOAT, r, dims, -5, 5, err);
    if (!x) return err->status;
    pc_value *ops[2] = {y, x->value};
    return end(u, node(u, pc_draw_bool(g->ch, 50) ? "Add" : "Mul", 2, ops, 1, err), -6, 6, NULL, err);
}

static pc_status unit_fold(unit_ctx *u, pc_error *err)
{
    pc_gen *g = u->g;
    /* 0..4: a float op, 5..6: an integer reduction, 7: Range, 8: integer comparisons, 9: constant makers,
     * 10..11: Min/Max ties of signed zeros. Below opset 9 only the float forms: the others read integers with
     * Neg (ints from 6), Greater, Less, Where and ConstantOfShape (from 9), which the verifier's type
     * constraints refuse earlier. */
    uint32_t form = pc_draw(g->ch, 12);
    if (pc_gen_opset(g) < 9) form %= 5;
    if (form >= 10) return fold_min_max_ties(u, err);
    if (form == 9) return fold_const_forms(u, err);
    if (form == 8) return fold_int_compare(u, err);
    if (form == 7 && pc_gen_opset(g) >= 11) return fold_range(u, err);
    if (form >= 5) return fold_int_reduce(u, err);
    const pc_gen_op *cand[sizeof fold_ops / sizeof fold_ops[0]];
    uint32_t n = 0;
    for (size_t i = 0; i < sizeof fold_ops / sizeof fold_ops[0]; i++) {
        const pc_gen_op *op = pc_gen_op_find(fold_ops[i]);
        if (op && op->min_nodes <= 2 && pc_gen_op_feasible(g, op)) cand[n++] = op;
    }
    if (n == 0) return PC_OK;
    const pc_gen_op *op = cand[pc_draw(g->ch, n)];
    /* a constant of a shape the op accepts, drawn as a new input of the op would be */
    pc_gen_x x;
    pc_status st = pc_gen_op_draw_x(g, op, -1, &x, err);
    if (st != PC_OK) return st;
    x.is_const = true;
    pc_gen_value *c = pc_gen_const(g, PC_DTYPE_FLOAT, x.rank, x.dims, x.lo, x.hi, err);
    if (!c) return err->status;
    x.value = c->value;
    pc_value *out = NULL;
    st = pc_gen_op_apply(g, op, &x, &out, err);
    /* a graph output's producer is never folded: a Relu (which the evaluator does not fold) reads it, so the
     * folded value's shape and values reach a graph output unchanged (a broadcasting consumer would hide a
     * wrong shape) */
    pc_gen_x y;
    if (st != PC_OK || !out || !pc_gen_x_get(g, out, &y)) return st;
    return unary(u, "Relu", out, fmax(y.lo, 0), fmax(y.hi, 0), NULL, err);
}

/* ---- control flow (gen_control.c): If, Loop and Scan whose bodies read outer values, with annotated nodes
 * inside; reach, not rewrite guarantees ---- */

static pc_status unit_control_if(unit_ctx *u, pc_error *err)
{
    return pc_gen_control_if(u->g, u->near, err);
}

static pc_status unit_control_loop(unit_ctx *u, pc_error *err)
{
    return pc_gen_control_loop(u->g, u->near, err);
}

static pc_status unit_control_scan(unit_ctx *u, pc_error *err)
{
    return pc_gen_control_scan(u->g, u->near, err);
}

/* ---- the library --------------------------------------------------------------------------------------- */

typedef struct pattern_unit {
    const char *name;
    int64_t min_opset;
    int32_t min_rank;   /* cfg->max_rank must allow it */
    uint32_t max_nodes; /* the most nodes it adds: drawn only while cfg->max_nodes leaves room (checked) */
    unit_fn build;
} pattern_unit;

/* The simplest first (draw 0). */
static const pattern_unit units[] = {
    {"neg_neg", 1, 1, 3, unit_neg_neg},
    {"prune", 13, 1, 2, unit_prune},
    {"relu_clip", 6, 1, 5, unit_relu_clip},
    {"dropout", 7, 1, 4, unit_dropout},
    {"reshape", 5, 1, 6, unit_reshape},
    {"castlike", 15, 1, 3, unit_castlike},
    {"gelu", 13, 1, 5, unit_gelu},
    {"conv_bn", 7, 3, 3, unit_conv_bn},
    {"conv_act", 7, 3, 3, unit_conv_act},
    {"push_arg", 13, 2, 5, unit_push_arg},
    {"push_gather", 13, 3, 5, unit_push_gather},
    {"push_shape", 13, 2, 3, unit_push_shape},
    {"push_tile", 13, 2, 6, unit_push_tile},
    {"push_reshape_groups", PC_TRANSPOSE_OPSET_MIN, 2, 5, unit_push_reshape_groups},
    {"push_split", 11, 2, 7, unit_push_split},
    {"push_unsqueeze", 11, 2, 5, unit_push_unsqueeze},
    {"push_slice", PC_TRANSPOSE_OPSET_MIN, 2, 8, unit_push_slice},
    {"push_pad", PC_TRANSPOSE_OPSET_MIN, 2, 6, unit_push_pad},
    {"push_squeeze", PC_TRANSPOSE_OPSET_MIN, 3, 5, unit_push_squeeze},
    {"push_reduce", PC_TRANSPOSE_OPSET_MIN, 2, 5, unit_push_reduce},
    {"push_softmax", PC_TRANSPOSE_OPSET_MIN, 2, 5, unit_push_softmax},
    {"qdq_axis", 13, 2, 5, unit_qdq_axis},
    {"above_dq", 13, 2, 3, unit_above_dq},
    {"dq_of_transpose", 13, 2, 5, unit_dq_of_transpose},
    {"push_concat", 11, 2, 7, unit_push_concat},
    {"region", 11, 2, 6, unit_region},
    {"qlinear_conv", 13, 3, 6, unit_qlinear_conv},
    {"qlinear_matmul", 13, 1, 4, unit_qlinear_matmul},
    {"cast", 9, 1, 8, unit_cast},
    {"cast_chain", 9, 1, 5, unit_cast_chain},
    {"int_arith", 10, 1, 6, unit_int_arith},
    {"fold", 1, 1, 6, unit_fold},
    {"control_if", 11, 1, PC_GEN_CONTROL_MAX_NODES, unit_control_if},
    {"control_loop", 11, 1, PC_GEN_CONTROL_MAX_NODES, unit_control_loop},
    {"control_scan", 9, 1, PC_GEN_CONTROL_MAX_NODES, unit_control_scan},
};
enum { N_UNITS = sizeof units / sizeof units[0] };

/* Units of rank >= 2 build on dims >= 2 (a perm then always moves data), and some double a dim (Tile,
 * Concat, Split): they need room for 4 * 2^min_rank elements. */
static bool unit_fits_elements(const pc_gen *g, const pattern_unit *unit)
{
    uint64_t need = unit->min_rank >= 2 ? 4ull << unit->min_rank : 1;
    return need <= g->cfg->max_elements;
}

/* The units allowed at opset, max_rank and the node budget left (indices into units[]). */
static uint32_t feasible_units(const pc_gen *g, int64_t opset, uint32_t *feasible)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < N_UNITS; i++)
        if (units[i].min_opset <= opset && units[i].min_rank <= g->cfg->max_rank &&
            units[i].max_nodes <= pc_gen_budget(g) && unit_fits_elements(g, &units[i]))
            feasible[n++] = i;
    return n;
}

static pc_status build_unit(unit_ctx *u, const uint32_t *feasible, uint32_t n, pc_error *err)
{
    const pattern_unit *unit = &units[feasible[pc_draw(u->g->ch, n)]];
    u->near = pc_draw_bool(u->g->ch, NEAR_PERCENT);
    uint32_t before = u->g->n_ops, floor = u->g->pick_floor;
    /* units are disjoint: an op a unit applies through gen_ops picks its operands among the unit's values */
    u->g->pick_floor = u->g->n_pool;
    pc_status st = unit->build(u, err);
    u->g->pick_floor = floor;
    if (st == PC_OK && u->g->n_ops - before > unit->max_nodes)
        st = pc_error_set(err, PC_ERR_INTERNAL, "made %u nodes, declared at most %u", u->g->n_ops - before,
                          unit->max_nodes);
    if (st != PC_OK) pc_error_prefix(err, "patterns unit %s: ", unit->name);
    return st;
}

pc_status pc_gen_pattern_unit(pc_gen *g, pc_error *err)
{
    uint32_t feasible[N_UNITS];
    int64_t opset = pc_gen_opset(g);
    uint32_t n = feasible_units(g, opset, feasible);
    if (n == 0) return PC_OK;
    unit_ctx u = {.g = g, .q = {.g = g}, .opset = opset};
    pc_status st = build_unit(&u, feasible, n, err);
    pc_genq_free(&u.q);
    return st;
}

pc_status pc_gen_patterns(pc_gen *g, pc_error *err)
{
    int64_t opset = opsets[pc_draw_weighted(g->ch, opset_weights, sizeof opsets / sizeof opsets[0])];
    if (opset != pc_gen_opset(g) && pc_model_set_opset(g->model, "", opset, err) != PC_OK) return err->status;
    uint32_t feasible[N_UNITS], n;
    unit_ctx u = {.g = g, .q = {.g = g}, .opset = opset};
    uint32_t count = 1 + pc_draw(g->ch, MAX_UNITS);
    pc_status st = PC_OK;
    for (uint32_t k = 0; st == PC_OK && k < count && (n = feasible_units(g, opset, feasible)) > 0; k++)
        st = build_unit(&u, feasible, n, err);
    pc_genq_free(&u.q);
    /* a unit may add nothing (a shape over --max-elements), and a small --max-nodes fits no unit: a Relu
     * keeps the case a graph */
    if (st == PC_OK && g->n_ops == 0) {
        int64_t one = 1;
        pc_gen_value *x = pc_gen_input(g, PC_DTYPE_FLOAT, 1, &one, -1, 1, err);
        pc_node *relu = x ? pc_gen_node_begin(g, "Relu", "", 1, &x->value, 1, err) : NULL;
        st = relu ? pc_gen_node_end(g, relu, 0, 1, err) : err->status;
    }
    return st;
}
