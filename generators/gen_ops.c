/* The op-spec table (gen_ops.h): per op its ranks, opsets, input rules, attribute drawers and output
 * interval. Every draw goes through g->ch and every node through pc_gen_node_begin/pc_gen_node_end. Draw 0 is
 * always the simplest choice: default attributes, kernel 1, no padding, scalar constants, the newest pooled
 * value. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "generators/gen_ops.h"

#define MAG          PC_GEN_OPS_MAX_MAGNITUDE
#define MAX_DIV      0.5 /* divisors (and Reciprocal inputs) stay at least this far from 0 */
#define LOG_MIN      1e-3
#define EXP_MAX      10.0
#define SOFTPLUS_MAX 20.0

/* ---------------------------------------------------------------------------------------------------------------
 * Intervals.
 */
typedef struct iv {
    double lo, hi;
} iv;

static double iv_mag(iv a)
{
    return fmax(fabs(a.lo), fabs(a.hi));
}

static bool iv_ok(iv a)
{
    return isfinite(a.lo) && isfinite(a.hi) && a.lo <= a.hi && iv_mag(a) <= MAG;
}

/* Outward by a float32 rounding or two, for results computed through transcendental functions. */
static iv iv_widen(iv a)
{
    double d = iv_mag(a) * 1e-6 + 1e-7;
    return (iv){a.lo - d, a.hi + d};
}

static iv iv_add(iv a, iv b)
{
    return (iv){a.lo + b.lo, a.hi + b.hi};
}
static iv iv_sub(iv a, iv b)
{
    return (iv){a.lo - b.hi, a.hi - b.lo};
}

static iv iv_mul(iv a, iv b)
{
    double c[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
    iv r = {c[0], c[0]};
    for (int i = 1; i < 4; i++) {
        r.lo = fmin(r.lo, c[i]);
        r.hi = fmax(r.hi, c[i]);
    }
    return r;
}

static bool iv_away_from_zero(iv a)
{
    return a.lo >= MAX_DIV || a.hi <= -MAX_DIV;
}

/* a / b for b away from 0 */
static iv iv_div(iv a, iv b)
{
    return iv_widen(iv_mul(a, (iv){1.0 / b.hi, 1.0 / b.lo}));
}

static iv iv_union(iv a, iv b)
{
    return (iv){fmin(a.lo, b.lo), fmax(a.hi, b.hi)};
}

static iv iv_sym(double m)
{
    return (iv){-m, m};
}

static iv x_iv(const pc_gen_x *x)
{
    return (iv){x->lo, x->hi};
}

/* ---------------------------------------------------------------------------------------------------------------
 * Small helpers.
 */
int64_t pc_gen_opset(const pc_gen *g)
{
    int64_t v = pc_model_opset(g->model, "");
    return v < 0 ? 17 : v;
}

uint32_t pc_gen_budget(const pc_gen *g)
{
    return g->n_ops >= g->cfg->max_nodes ? 0 : g->cfg->max_nodes - g->n_ops;
}

static uint64_t cap_elements(const pc_gen *g)
{
    return g->cfg->max_elements;
}

static uint64_t dims_count(int32_t rank, const int64_t *dims)
{
    uint64_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        if (dims[i] < 0 || !pc_u64_mul(n, (uint64_t)dims[i], &n)) return UINT64_MAX;
    return n;
}

static bool fits(const pc_gen *g, int32_t rank, const int64_t *dims)
{
    return rank >= 0 && rank <= g->cfg->max_rank && dims_count(rank, dims) <= cap_elements(g);
}

static void x_from_pool(const pc_gen_value *v, pc_gen_x *x, bool *ok)
{
    memset(x, 0, offsetof(pc_gen_x, dims));
    x->value = v->value;
    *ok = v->value->type.kind == PC_TYPE_TENSOR && v->value->type.elem == PC_DTYPE_FLOAT;
    x->rank = *ok ? pc_gen_value_dims(v->value, x->dims) : -1;
    if (x->rank < 0) *ok = false;
    x->n_elements = *ok ? dims_count(x->rank, x->dims) : 0;
    for (int32_t i = 0; *ok && i < x->rank; i++)
        if (x->dims[i] < 1) *ok = false;
    x->lo = v->lo;
    x->hi = v->hi;
    x->is_const = v->is_const;
}

bool pc_gen_x_get(pc_gen *g, const pc_value *v, pc_gen_x *x)
{
    pc_gen_value *e = pc_gen_lookup(g, v);
    pc_gen_value tmp = {.value = (pc_value *)v, .lo = -INFINITY, .hi = INFINITY};
    bool ok;
    x_from_pool(e ? e : &tmp, x, &ok);
    return ok;
}

void pc_gen_draw_dims(pc_gen *g, int32_t rank, bool batch_first, int64_t *dims)
{
    uint64_t budget = cap_elements(g);
    for (int32_t i = 0; i < rank; i++) {
        uint64_t cap = batch_first && i == 0 ? 2 : 6;
        if (cap > budget) cap = budget;
        if (cap < 1) cap = 1;
        dims[i] = pc_draw_range(g->ch, 1, (int64_t)cap);
        budget /= (uint64_t)dims[i];
    }
}

static pc_node *begin(pc_gen *g, const char *op, uint32_t n_in, pc_value *const *ins, uint32_t n_out,
                      pc_error *err)
{
    return pc_gen_node_begin(g, op, "", n_in, ins, n_out, err);
}

static pc_status end(pc_gen *g, pc_node *n, iv r, pc_value **out, pc_error *err)
{
    pc_status st = pc_gen_node_end(g, n, r.lo, r.hi, err);
    if (st == PC_OK && out) *out = n->outputs[0];
    return st;
}

static pc_value *const_ints_as(pc_gen *g, pc_dtype dtype, size_t n, const int64_t *vals, pc_error *err)
{
    int64_t d = (int64_t)n;
    pc_gen_value *v = pc_gen_const_i64(g, dtype, 1, &d, vals, err);
    return v ? v->value : NULL;
}

static pc_value *const_ints(pc_gen *g, size_t n, const int64_t *vals, pc_error *err)
{
    return const_ints_as(g, PC_DTYPE_INT64, n, vals, err);
}

static pc_value *const_floats(pc_gen *g, int32_t rank, const int64_t *dims, const float *vals, pc_error *err)
{
    pc_gen_value *v = pc_gen_const_f32(g, PC_DTYPE_FLOAT, rank, dims, vals, err);
    return v ? v->value : NULL;
}

/* A one-element float constant: rank 0 (draw 0) or [1]. */
static pc_value *const_scalar(pc_gen *g, float value, pc_error *err)
{
    int64_t one = 1;
    int32_t rank = pc_draw_bool(g->ch, 30) ? 1 : 0;
    return const_floats(g, rank, &one, &value, err);
}

/* Every element `value` (bit for bit: -0 stays -0). */
static pc_value *const_fill(pc_gen *g, int32_t rank, const int64_t *dims, float value, pc_error *err)
{
    uint64_t n = dims_count(rank, dims);
    size_t bytes;
    if (n > cap_elements(g) || !pc_size_mul((size_t)n, sizeof(float), &bytes))
        return pc_error_set(err, PC_ERR_INTERNAL, "generator: constant over the element cap"), NULL;
    float *vals = malloc(bytes ? bytes : 1);
    if (!vals) return pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (constant)"), NULL;
    for (uint64_t i = 0; i < n; i++)
        vals[i] = value;
    pc_value *v = const_floats(g, rank, dims, vals, err);
    free(vals);
    return v;
}

static pc_value *const_random(pc_gen *g, int32_t rank, const int64_t *dims, iv r, pc_error *err)
{
    pc_gen_value *v = pc_gen_const(g, PC_DTYPE_FLOAT, rank, dims, r.lo, r.hi, err);
    return v ? v->value : NULL;
}

static pc_status set_ints(pc_node *n, const char *name, size_t count, const int64_t *v, pc_error *err)
{
    return pc_node_set_attr_ints(n, name, count, v, err);
}

/* Draws one entry of a small list (0: the first). */
static double pick_double(pc_gen *g, const double *opts, uint32_t n)
{
    return opts[pc_draw(g->ch, n)];
}

/* A random permutation of 0..n-1; all-zero draws give the identity. */
static void draw_perm(pc_gen *g, int32_t n, int64_t *perm)
{
    for (int32_t i = 0; i < n; i++)
        perm[i] = i;
    for (int32_t i = 0; i + 1 < n; i++) {
        int32_t j = i + (int32_t)pc_draw(g->ch, (uint32_t)(n - i));
        int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* Axis written as drawn: non-negative (draw 0) or the equivalent negative form. */
static int64_t axis_form(pc_gen *g, int64_t axis, int32_t rank)
{
    return pc_draw_bool(g->ch, 25) ? axis - rank : axis;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Unary elementwise ops.
 */
enum {
    U_RELU,
    U_LEAKY_RELU,
    U_SIGMOID,
    U_TANH,
    U_ABS,
    U_NEG,
    U_EXP,
    U_LOG,
    U_SQRT,
    U_RECIPROCAL,
    U_ERF,
    U_ELU,
    U_HARD_SIGMOID,
    U_SOFTPLUS,
    U_IDENTITY,
    U_DROPOUT,
    U_CAST,
    U_GELU,
};

static bool unary_accept(const pc_gen *g, const pc_gen_op *op, const pc_gen_x *x)
{
    (void)g;
    switch (op->kind) {
    case U_EXP:
        return x->hi <= EXP_MAX;
    case U_LOG:
        return x->lo >= LOG_MIN && x->hi <= MAG;
    case U_SQRT:
        return x->lo >= 0;
    case U_RECIPROCAL:
        return iv_away_from_zero(x_iv(x));
    case U_SOFTPLUS:
        return x->hi <= SOFTPLUS_MAX;
    default:
        return iv_ok(x_iv(x));
    }
}

static double sigmoid(double v)
{
    return 1.0 / (1.0 + exp(-v));
}

/* Dropout's inputs from opset 12: data alone (inference), a constant ratio, a constant training_mode false
 * after a ratio or an omitted one (inference: eliminate_dropout removes the node), or training_mode true with
 * ratio 0 (training that drops nothing, the identity: the pass must keep it). */
static pc_status dropout_inputs(pc_gen *g, pc_value **ins, uint32_t *n_in, pc_error *err)
{
    *n_in = 1;
    if (pc_gen_opset(g) < 12) return PC_OK;
    static const float ratios[] = {0.5f, 0.1f, 0.0f};
    uint32_t form = pc_draw(g->ch, 5); /* 0 data only, 1 ratio, 2 ratio + false, 3 false only, 4 0 + true */
    if (form == 0) return PC_OK;
    int64_t one = 1;
    float ratio = form == 4 ? 0.0f : ratios[pc_draw(g->ch, 3)];
    if (form != 3 && !(ins[1] = const_floats(g, 0, &one, &ratio, err))) return err->status;
    *n_in = 2;
    if (form >= 2) {
        int64_t training = form == 4;
        pc_gen_value *t = pc_gen_const_i64(g, PC_DTYPE_BOOL, 0, NULL, &training, err);
        if (!t) return err->status;
        ins[2] = t->value;
        *n_in = 3;
    }
    return PC_OK;
}

static pc_status unary_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out, pc_error *err)
{
    pc_value *ins[3] = {x->value, NULL, NULL};
    uint32_t n_in = 1;
    if (op->kind == U_DROPOUT) {
        pc_status st = dropout_inputs(g, ins, &n_in, err);
        if (st != PC_OK) return st;
    }
    pc_node *n = begin(g, op->op_type, n_in, ins, 1, err);
    if (!n) return err->status;
    iv a = x_iv(x), r = a;
    pc_status st = PC_OK;
    switch (op->kind) {
    case U_RELU:
        r = (iv){fmax(a.lo, 0), fmax(a.hi, 0)};
        break;
    case U_LEAKY_RELU: {
        static const double alphas[] = {0.01, 0.1, 0.2, 0.3};
        double al = pick_double(g, alphas, 4);
        if (al != 0.01) st = pc_node_set_attr_float(n, "alpha", (float)al, err);
        r = iv_widen((iv){a.lo < 0 ? a.lo * al : a.lo, a.hi < 0 ? a.hi * al : a.hi});
        break;
    }
    case U_SIGMOID:
        r = iv_widen((iv){sigmoid(a.lo), sigmoid(a.hi)});
        break;
    case U_TANH:
        r = iv_widen((iv){tanh(a.lo), tanh(a.hi)});
        break;
    case U_ABS:
        r = a.lo >= 0 ? a : a.hi <= 0 ? (iv){-a.hi, -a.lo} : (iv){0, iv_mag(a)};
        break;
    case U_NEG:
        r = (iv){-a.hi, -a.lo};
        break;
    case U_EXP:
        r = iv_widen((iv){exp(a.lo), exp(a.hi)});
        r.lo = fmax(r.lo, 0);
        break;
    case U_LOG:
        r = iv_widen((iv){log(a.lo), log(a.hi)});
        break;
    case U_SQRT:
        r = iv_widen((iv){sqrt(a.lo), sqrt(a.hi)});
        r.lo = fmax(r.lo, 0);
        break;
    case U_RECIPROCAL:
        r = iv_widen((iv){1.0 / a.hi, 1.0 / a.lo});
        break;
    case U_ERF:
        r = iv_widen((iv){erf(a.lo), erf(a.hi)});
        break;
    case U_ELU: {
        static const double alphas[] = {1.0, 0.5, 2.0};
        double al = pick_double(g, alphas, 3);
        if (al != 1.0) st = pc_node_set_attr_float(n, "alpha", (float)al, err);
        r = iv_widen((iv){a.lo < 0 ? al * expm1(a.lo) : a.lo, a.hi < 0 ? al * expm1(a.hi) : a.hi});
        break;
    }
    case U_HARD_SIGMOID: {
        static const double alphas[] = {0.2, 0.5, 1.0 / 6.0};
        double al = pick_double(g, alphas, 3), be = 0.5;
        if (al != 0.2) st = pc_node_set_attr_float(n, "alpha", (float)al, err);
        if (st == PC_OK && pc_draw_bool(g->ch, 25)) {
            be = 0.25;
            st = pc_node_set_attr_float(n, "beta", (float)be, err);
        }
        r = iv_widen((iv){fmin(fmax(al * a.lo + be, 0), 1), fmin(fmax(al * a.hi + be, 0), 1)});
        break;
    }
    case U_SOFTPLUS:
        r = iv_widen((iv){log1p(exp(a.lo)), log1p(exp(a.hi))});
        r.lo = fmax(r.lo, 0);
        break;
    case U_CAST:
        st = pc_node_set_attr_int(n, "to", PC_DTYPE_FLOAT, err);
        break;
    case U_GELU:
        if (pc_draw_bool(g->ch, 30)) st = pc_node_set_attr_string(n, "approximate", "tanh", err);
        r = iv_widen((iv){fmax(fmin(a.lo, 0), -0.171), fmax(a.hi, 0)});
        break;
    default:
        break; /* Identity, Dropout: the input's interval */
    }
    if (st != PC_OK) return st;
    return end(g, n, r, out, err);
}

/* A Clip bound: a constant scalar, or now and then a scalar graph input holding the value (a computed bound,
 * which the fusions that fold bounds must refuse). */
static pc_value *clip_bound(pc_gen *g, float v, pc_error *err)
{
    if (!pc_draw_bool(g->ch, 15)) return const_scalar(g, v, err);
    pc_gen_value *in = pc_gen_input(g, PC_DTYPE_FLOAT, 0, NULL, v, v, err);
    return in ? in->value : NULL;
}

/* Clip: bounds are scalar inputs, mostly constant (opset >= 11, the only opsets the families draw). */
static pc_status clip_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out, pc_error *err)
{
    (void)op;
    static const double mins[] = {0.0, -1.0, -0.5, 0.5};
    static const double maxs[] = {6.0, 1.0, 0.5, 2.0};
    uint32_t form = pc_draw(g->ch, 5); /* 0 none, 1 min, 2 max, 3 both, 4 max with the min omitted */
    double mn = pick_double(g, mins, 4), mx = pick_double(g, maxs, 4);
    if (mn > mx) {
        double t = mn;
        mn = mx;
        mx = t;
    }
    bool has_min = form == 1 || form == 3, has_max = form >= 2;
    pc_value *ins[3] = {x->value, NULL, NULL};
    if (has_min && !(ins[1] = clip_bound(g, (float)mn, err))) return err->status;
    if (has_max && !(ins[2] = clip_bound(g, (float)mx, err))) return err->status;
    uint32_t n_in = has_max ? 3 : has_min ? 2 : 1;
    pc_node *n = begin(g, "Clip", n_in, ins, 1, err);
    if (!n) return err->status;
    iv a = x_iv(x);
    if (has_min) a = (iv){fmax(a.lo, mn), fmax(a.hi, mn)};
    if (has_max) a = (iv){fmin(a.lo, mx), fmin(a.hi, mx)};
    return end(g, n, a, out, err);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Binary elementwise ops: the second operand broadcasts into x's shape (the output keeps x's shape).
 */
enum { B_ADD, B_SUB, B_MUL, B_DIV, B_MAX, B_MIN, B_POW };

/* Interval of a op b. */
static iv binary_iv(int kind, iv a, iv b)
{
    switch (kind) {
    case B_ADD:
        return iv_add(a, b);
    case B_SUB:
        return iv_sub(a, b);
    case B_MUL:
        return iv_mul(a, b);
    case B_DIV:
        return iv_div(a, b);
    case B_MAX:
        return (iv){fmax(a.lo, b.lo), fmax(a.hi, b.hi)};
    default:
        return (iv){fmin(a.lo, b.lo), fmin(a.hi, b.hi)};
    }
}

/* Range of a constant second operand. */
static iv binary_const_iv(int kind)
{
    switch (kind) {
    case B_MUL:
        return (iv){-2, 2};
    case B_DIV:
        return (iv){MAX_DIV, 2};
    default:
        return (iv){-1, 1};
    }
}

/* Whether a value of dims b (rank rb) broadcasts into x's shape without changing it. */
static bool broadcasts_into(const pc_gen_x *x, int32_t rb, const int64_t *b)
{
    if (rb > x->rank) return false;
    for (int32_t i = 0; i < rb; i++) {
        int64_t d = b[rb - 1 - i], e = x->dims[x->rank - 1 - i];
        if (d != 1 && d != e) return false;
    }
    return true;
}

/* Shapes of a second operand that broadcasts into x: scalar, [1], x's shape, per channel ([C,1,..] and
 * [1,C,1,..], as fuse_conv_add/mul match), a suffix of x's dims, or x's dims with some set to 1. */
static int32_t draw_bcast_shape(pc_gen *g, const pc_gen_x *x, int64_t *dims)
{
    uint32_t kinds[7], n = 0;
    kinds[n++] = 0;
    if (x->rank >= 1) {
        kinds[n++] = 1;
        kinds[n++] = 2;
        kinds[n++] = 5;
        kinds[n++] = 6;
    }
    if (x->rank >= 2) {
        kinds[n++] = 3;
        kinds[n++] = 4;
    }
    static const uint32_t weight_of[7] = {3, 2, 3, 3, 3, 2, 2};
    uint32_t w[7];
    for (uint32_t i = 0; i < n; i++)
        w[i] = weight_of[kinds[i]];
    switch (kinds[pc_draw_weighted(g->ch, w, n)]) {
    case 0:
        return 0;
    case 1:
        dims[0] = 1;
        return 1;
    case 2:
        memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
        return x->rank;
    case 3:
        dims[0] = x->dims[1];
        for (int32_t i = 1; i < x->rank - 1; i++)
            dims[i] = 1;
        return x->rank - 1;
    case 4:
        for (int32_t i = 0; i < x->rank; i++)
            dims[i] = i == 1 ? x->dims[1] : 1;
        return x->rank;
    case 5: {
        int32_t k = (int32_t)pc_draw_range(g->ch, 1, x->rank);
        memcpy(dims, x->dims + (x->rank - k), (size_t)k * sizeof *dims);
        return k;
    }
    default:
        for (int32_t i = 0; i < x->rank; i++)
            dims[i] = pc_draw_bool(g->ch, 50) ? 1 : x->dims[i];
        return x->rank;
    }
}

typedef struct operand_ctx {
    const pc_gen_x *x;
    int kind;
    bool want_const;
    iv x_range;
} operand_ctx;

/* A pooled float value (constant or not, as asked) that broadcasts into x and keeps the result in range. */
static bool operand_accept(const pc_gen_value *v, void *ctx)
{
    const operand_ctx *c = ctx;
    if (v->value == c->x->value || v->is_const != c->want_const) return false;
    if (c->want_const && !v->value->initializer) return false; /* share initializers, not folded chains */
    pc_gen_x y;
    bool ok;
    x_from_pool(v, &y, &ok);
    if (!ok || !broadcasts_into(c->x, y.rank, y.dims)) return false;
    iv b = x_iv(&y);
    if (c->kind == B_DIV && !iv_away_from_zero(b)) return false;
    return iv_ok(b) && iv_ok(binary_iv(c->kind, c->x_range, b));
}

static bool binary_accept(const pc_gen *g, const pc_gen_op *op, const pc_gen_x *x)
{
    (void)g;
    iv a = x_iv(x);
    if (!iv_ok(a)) return false;
    if (op->kind == B_POW) return iv_mag(a) <= 1000; /* x^2 is always offered */
    return iv_ok(binary_iv(op->kind, a, binary_const_iv(op->kind)));
}

static uint32_t count_candidates(pc_gen *g, pc_gen_accept_fn f, void *ctx)
{
    uint32_t n = 0;
    for (uint32_t i = g->pick_floor; i < g->n_pool; i++)
        if (f(g->pool[i], ctx)) n++;
    return n;
}

/* Pow: the exponent is a constant scalar 2, 3 or 0.5 (the last only on non-negative x). */
static pc_status pow_build(pc_gen *g, const pc_gen_x *x, pc_value **out, pc_error *err)
{
    iv a = x_iv(x);
    double opts[3];
    uint32_t n = 0;
    opts[n++] = 2;
    if (iv_mag(a) <= 100) opts[n++] = 3;
    if (a.lo >= 0) opts[n++] = 0.5;
    double e = opts[pc_draw(g->ch, n)];
    pc_value *ins[2] = {x->value, const_scalar(g, (float)e, err)};
    if (!ins[1]) return err->status;
    pc_node *nd = begin(g, "Pow", 2, ins, 1, err);
    if (!nd) return err->status;
    iv r;
    if (e == 2)
        r = (iv){a.lo >= 0 ? a.lo * a.lo : a.hi <= 0 ? a.hi * a.hi : 0, iv_mag(a) * iv_mag(a)};
    else if (e == 3)
        r = (iv){a.lo * a.lo * a.lo, a.hi * a.hi * a.hi};
    else
        r = (iv){sqrt(a.lo), sqrt(a.hi)};
    r = iv_widen(r);
    if (e != 3) r.lo = fmax(r.lo, 0);
    return end(g, nd, r, out, err);
}

enum { OPD_CONST, OPD_NEUTRAL, OPD_SHARED, OPD_POOLED, OPD_INPUT, OPD_SUBGRAPH };

/* A constant of shape dims made through one more node: Unsqueeze of a constant without the leading 1
 * (eliminate_unsqueeze folds it) or Neg of a constant (fold_constants evaluates it). */
static pc_value *const_subgraph(pc_gen *g, int32_t rank, const int64_t *dims, iv r, pc_error *err)
{
    if (rank >= 1 && dims[0] == 1) {
        pc_value *c = const_random(g, rank - 1, dims + 1, r, err);
        if (!c) return NULL;
        int64_t axis = axis_form(g, 0, rank); /* 0 or -rank: the folding pass normalizes both */
        pc_value *ins[2] = {c, NULL};
        bool attr = pc_gen_opset(g) < 13;
        if (!attr && !(ins[1] = const_ints(g, 1, &axis, err))) return NULL;
        pc_node *n = begin(g, "Unsqueeze", attr ? 1 : 2, ins, 1, err);
        if (!n || (attr && set_ints(n, "axes", 1, &axis, err) != PC_OK)) return NULL;
        pc_value *o = NULL;
        return end(g, n, r, &o, err) == PC_OK ? o : NULL;
    }
    pc_value *c = const_random(g, rank, dims, (iv){-r.hi, -r.lo}, err);
    if (!c) return NULL;
    pc_node *n = begin(g, "Neg", 1, &c, 1, err);
    pc_value *o = NULL;
    return n && end(g, n, r, &o, err) == PC_OK ? o : NULL;
}

static pc_status binary_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out,
                              pc_error *err)
{
    if (op->kind == B_POW) return pow_build(g, x, out, err);
    iv a = x_iv(x);
    operand_ctx sc = {x, op->kind, true, a}, pc = {x, op->kind, false, a};
    bool has_neutral = op->kind <= B_DIV;
    uint32_t opts[6], w[6], n = 0;
    static const uint32_t weight_of[6] = {8, 2, 2, 3, 2, 2};
    opts[n++] = OPD_CONST;
    if (has_neutral) opts[n++] = OPD_NEUTRAL;
    if (count_candidates(g, operand_accept, &sc)) opts[n++] = OPD_SHARED;
    if (count_candidates(g, operand_accept, &pc)) opts[n++] = OPD_POOLED;
    opts[n++] = OPD_INPUT;
    if (pc_gen_budget(g) >= 2) opts[n++] = OPD_SUBGRAPH;
    for (uint32_t i = 0; i < n; i++)
        w[i] = weight_of[opts[i]];
    uint32_t which = opts[pc_draw_weighted(g->ch, w, n)];

    iv cr = binary_const_iv(op->kind);
    if (op->kind == B_DIV && pc_draw_bool(g->ch, 30)) cr = (iv){-cr.hi, -cr.lo};
    int64_t dims[PC_MAX_RANK];
    pc_value *y = NULL;
    iv b = cr;
    switch (which) {
    case OPD_NEUTRAL: {
        int32_t rank = draw_bcast_shape(g, x, dims);
        float v = op->kind == B_ADD ? -0.0f : op->kind == B_SUB ? 0.0f : 1.0f;
        y = const_fill(g, rank, dims, v, err);
        b = (iv){v, v};
        break;
    }
    case OPD_SHARED:
    case OPD_POOLED: {
        pc_gen_value *e = pc_gen_pick(g, operand_accept, which == OPD_SHARED ? &sc : &pc);
        y = e->value;
        b = (iv){e->lo, e->hi};
        break;
    }
    case OPD_INPUT: {
        int32_t rank = draw_bcast_shape(g, x, dims);
        pc_gen_value *e = pc_gen_input(g, PC_DTYPE_FLOAT, rank, dims, cr.lo, cr.hi, err);
        y = e ? e->value : NULL;
        break;
    }
    case OPD_SUBGRAPH: {
        int32_t rank = draw_bcast_shape(g, x, dims);
        y = const_subgraph(g, rank, dims, cr, err);
        break;
    }
    default: {
        int32_t rank = draw_bcast_shape(g, x, dims);
        y = const_random(g, rank, dims, cr, err);
        break;
    }
    }
    if (!y) return err->status;
    /* the constant first sometimes (passes must match either order); Sub and Div keep x first unless x is
     * itself a fine divisor / the interval is recomputed */
    bool swap = (op->kind == B_ADD || op->kind == B_MUL || op->kind == B_MAX || op->kind == B_MIN ||
                 op->kind == B_SUB) &&
                pc_draw_bool(g->ch, 25);
    pc_value *ins[2] = {swap ? y : x->value, swap ? x->value : y};
    pc_node *nd = begin(g, op->op_type, 2, ins, 1, err);
    if (!nd) return err->status;
    iv r = swap ? binary_iv(op->kind, b, a) : binary_iv(op->kind, a, b);
    if (!iv_ok(r))
        return pc_error_set(err, PC_ERR_INTERNAL, "generator: %s output interval [%g, %g] out of range",
                            op->op_type, r.lo, r.hi);
    return end(g, nd, r, out, err);
}

pc_status pc_gen_channel_op(pc_gen *g, const char *op_type, const pc_gen_x *x, pc_value **out, pc_error *err)
{
    *out = NULL;
    bool mul = strcmp(op_type, "Mul") == 0;
    if (x->rank < 2 || (!mul && strcmp(op_type, "Add") != 0)) return PC_OK;
    iv cr = mul ? (iv){-2, 2} : (iv){-1, 1}, a = x_iv(x);
    iv r = mul ? iv_mul(a, cr) : iv_add(a, cr);
    if (!iv_ok(a) || !iv_ok(r) || pc_gen_budget(g) < 1) return PC_OK;
    int64_t dims[PC_MAX_RANK];
    int32_t rank;
    switch (pc_draw(g->ch, 4)) { /* [C,1,..], [1,C,1,..], [1], scalar */
    case 0:
        rank = x->rank - 1;
        for (int32_t i = 0; i < rank; i++)
            dims[i] = i == 0 ? x->dims[1] : 1;
        break;
    case 1:
        rank = x->rank;
        for (int32_t i = 0; i < rank; i++)
            dims[i] = i == 1 ? x->dims[1] : 1;
        break;
    case 2:
        rank = 1;
        dims[0] = 1;
        break;
    default:
        rank = 0;
        break;
    }
    pc_value *c = const_random(g, rank, dims, cr, err);
    if (!c) return err->status;
    bool swap = pc_draw_bool(g->ch, 25);
    pc_value *ins[2] = {swap ? c : x->value, swap ? x->value : c};
    pc_node *n = begin(g, op_type, 2, ins, 1, err);
    if (!n) return err->status;
    return end(g, n, r, out, err);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Layout-sensitive ops: Conv, pools, BatchNormalization, Resize (x is N, C, spatial...).
 */
static bool conv_accept(const pc_gen *g, const pc_gen_op *op, const pc_gen_x *x)
{
    (void)g;
    (void)op;
    /* weights are scaled by 1/sqrt(K), so |y| <= sqrt(K) |x| + 0.5 with K <= C * 9 */
    return iv_ok(x_iv(x)) && sqrt((double)x->dims[1] * 9.0) * iv_mag(x_iv(x)) + 0.5 <= MAG;
}

/* Spatial window parameters drawn for one spatial dim of size h. */
typedef struct window {
    int64_t k, s, d, pb, pe;
} window;

static int64_t window_out(int64_t h, const window *w)
{
    return (h + w->pb + w->pe - w->d * (w->k - 1) - 1) / w->s + 1;
}

static void draw_window(pc_gen *g, int64_t h, bool dilate, window *w)
{
    w->k = pc_draw_range(g->ch, 1, h < 3 ? h : 3);
    w->s = pc_draw_range(g->ch, 1, 2);
    w->d = dilate ? pc_draw_range(g->ch, 1, 2) : 1;
    w->pb = pc_draw_range(g->ch, 0, w->k - 1);
    w->pe = pc_draw_range(g->ch, 0, w->k - 1);
    if (w->d * (w->k - 1) + 1 > h + w->pb + w->pe) w->d = 1;
}

typedef struct conv_w_ctx {
    const pc_gen *g;
    const pc_gen_x *x;
} conv_w_ctx;

/* A pooled constant usable as the weights of a Conv on x with no padding: [M, C/g, k...], g | M. */
static bool conv_w_accept(const pc_gen_value *v, void *ctx)
{
    const pc_gen_x *x = ((const conv_w_ctx *)ctx)->x;
    if (!v->is_const || !v->value->initializer) return false;
    pc_gen_x w;
    bool ok;
    x_from_pool(v, &w, &ok);
    if (!ok || w.rank != x->rank || w.dims[1] > x->dims[1] || x->dims[1] % w.dims[1] != 0) return false;
    int64_t gr = x->dims[1] / w.dims[1];
    if (w.dims[0] % gr != 0 || w.dims[0] > 8 || iv_mag(x_iv(&w)) > 1) return false;
    uint64_t n = (uint64_t)x->dims[0] * (uint64_t)w.dims[0];
    for (int32_t i = 2; i < x->rank; i++) {
        if (w.dims[i] > x->dims[i] || w.dims[i] > 5) return false;
        n *= (uint64_t)(x->dims[i] - w.dims[i] + 1);
    }
    return n <= cap_elements(((const conv_w_ctx *)ctx)->g);
}

static pc_status conv_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out, pc_error *err)
{
    (void)op;
    int32_t nsp = x->rank - 2;
    int64_t c = x->dims[1];
    window win[3];
    int64_t m, gr, wdims[PC_MAX_RANK], ydims[PC_MAX_RANK];
    pc_value *w = NULL;
    iv wr;
    conv_w_ctx wc = {g, x};
    bool shared = false;
    if (count_candidates(g, conv_w_accept, &wc) && pc_draw_bool(g->ch, 15)) {
        pc_gen_value *e = pc_gen_pick(g, conv_w_accept, &wc);
        pc_gen_x wx;
        bool ok;
        x_from_pool(e, &wx, &ok);
        memcpy(wdims, wx.dims, (size_t)wx.rank * sizeof *wdims);
        m = wdims[0];
        gr = c / wdims[1];
        for (int32_t i = 0; i < nsp; i++)
            win[i] = (window){wdims[2 + i], 1, 1, 0, 0};
        ydims[0] = x->dims[0];
        ydims[1] = m;
        for (int32_t i = 0; i < nsp; i++)
            ydims[2 + i] = window_out(x->dims[2 + i], &win[i]);
        if (fits(g, x->rank, ydims)) {
            w = e->value;
            wr = (iv){e->lo, e->hi};
            shared = true;
        }
    }
    if (!shared) {
        /* group: a divisor of C (draw 0: 1); M a multiple of it */
        int64_t divs[64];
        uint32_t nd = 0;
        for (int64_t d = 1; d <= c && nd < 64; d++)
            if (c % d == 0) divs[nd++] = d;
        gr = pc_draw_bool(g->ch, 20) ? divs[pc_draw(g->ch, nd)] : 1;
        int64_t mult = pc_draw_range(g->ch, 1, gr >= 4 ? 1 : 8 / gr);
        m = gr * mult;
        for (int32_t i = 0; i < nsp; i++)
            draw_window(g, x->dims[2 + i], true, &win[i]);
        ydims[0] = x->dims[0];
        ydims[1] = m;
        for (int32_t i = 0; i < nsp; i++)
            ydims[2 + i] = window_out(x->dims[2 + i], &win[i]);
        if (!fits(g, x->rank, ydims)) { /* no padding and M = group: never more elements than x */
            m = gr;
            ydims[1] = m;
            for (int32_t i = 0; i < nsp; i++) {
                win[i].pb = win[i].pe = 0;
                if (win[i].d * (win[i].k - 1) + 1 > x->dims[2 + i]) win[i].d = 1;
                ydims[2 + i] = window_out(x->dims[2 + i], &win[i]);
            }
        }
        /* the weights fit the cap too: with M = group they are C * prod(k) <= C * prod(H) elements */
        if ((uint64_t)m * (uint64_t)(c / gr) * (uint64_t)win[0].k * (uint64_t)(nsp > 1 ? win[1].k : 1) >
            cap_elements(g)) {
            m = gr;
            ydims[1] = m;
        }
        wdims[0] = m;
        wdims[1] = c / gr;
        double k = (double)wdims[1];
        for (int32_t i = 0; i < nsp; i++) {
            wdims[2 + i] = win[i].k;
            k *= (double)win[i].k;
        }
        wr = iv_sym(1.0 / sqrt(k));
        if (!(w = const_random(g, x->rank, wdims, wr, err))) return err->status;
    }
    if (!fits(g, x->rank, ydims))
        return pc_error_set(err, PC_ERR_INTERNAL, "generator: Conv output over the element cap");
    pc_value *ins[3] = {x->value, w, NULL};
    bool bias = pc_draw_bool(g->ch, 50);
    if (bias && !(ins[2] = const_random(g, 1, &m, iv_sym(0.5), err))) return err->status;
    pc_node *n = begin(g, "Conv", bias ? 3 : 2, ins, 1, err);
    if (!n) return err->status;
    int64_t ks[3], ss[3], dd[3], pads[6];
    bool any_s = false, any_d = false, any_p = false;
    for (int32_t i = 0; i < nsp; i++) {
        ks[i] = win[i].k;
        ss[i] = win[i].s;
        dd[i] = win[i].d;
        pads[i] = win[i].pb;
        pads[nsp + i] = win[i].pe;
        any_s |= ss[i] != 1;
        any_d |= dd[i] != 1;
        any_p |= win[i].pb || win[i].pe;
    }
    pc_status st = PC_OK;
    if (pc_draw_bool(g->ch, 30)) st = set_ints(n, "kernel_shape", (size_t)nsp, ks, err);
    if (st == PC_OK && any_s) st = set_ints(n, "strides", (size_t)nsp, ss, err);
    if (st == PC_OK && any_d) st = set_ints(n, "dilations", (size_t)nsp, dd, err);
    if (st == PC_OK && any_p) st = set_ints(n, "pads", (size_t)nsp * 2, pads, err);
    if (st == PC_OK && gr != 1) st = pc_node_set_attr_int(n, "group", gr, err);
    if (st != PC_OK) return st;
    double k = (double)(c / gr);
    for (int32_t i = 0; i < nsp; i++)
        k *= (double)win[i].k;
    double bound = k * iv_mag(wr) * iv_mag(x_iv(x)) + (bias ? 0.5 : 0.0);
    return end(g, n, iv_widen(iv_sym(bound)), out, err);
}

static bool pool_accept(const pc_gen *g, const pc_gen_op *op, const pc_gen_x *x)
{
    (void)g;
    (void)op;
    return iv_ok(x_iv(x));
}

static pc_status pool_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out, pc_error *err)
{
    bool is_max = strcmp(op->op_type, "MaxPool") == 0;
    int32_t nsp = x->rank - 2;
    window win[3];
    int64_t ydims[PC_MAX_RANK];
    ydims[0] = x->dims[0];
    ydims[1] = x->dims[1];
    for (int32_t i = 0; i < nsp; i++) {
        draw_window(g, x->dims[2 + i], is_max, &win[i]);
        ydims[2 + i] = window_out(x->dims[2 + i], &win[i]);
    }
    if (!fits(g, x->rank, ydims))
        for (int32_t i = 0; i < nsp; i++) {
            win[i].pb = win[i].pe = 0;
            if (win[i].d * (win[i].k - 1) + 1 > x->dims[2 + i]) win[i].d = 1;
        }
    pc_node *n = begin(g, op->op_type, 1, &x->value, 1, err);
    if (!n) return err->status;
    int64_t ks[3], ss[3], dd[3], pads[6];
    bool any_s = false, any_d = false, any_p = false;
    for (int32_t i = 0; i < nsp; i++) {
        ks[i] = win[i].k;
        ss[i] = win[i].s;
        dd[i] = win[i].d;
        pads[i] = win[i].pb;
        pads[nsp + i] = win[i].pe;
        any_s |= ss[i] != 1;
        any_d |= dd[i] != 1;
        any_p |= win[i].pb || win[i].pe;
    }
    pc_status st = set_ints(n, "kernel_shape", (size_t)nsp, ks, err);
    if (st == PC_OK && any_s) st = set_ints(n, "strides", (size_t)nsp, ss, err);
    if (st == PC_OK && any_d) st = set_ints(n, "dilations", (size_t)nsp, dd, err);
    if (st == PC_OK && any_p) st = set_ints(n, "pads", (size_t)nsp * 2, pads, err);
    bool include_pad = false;
    if (st == PC_OK && !is_max && any_p && pc_draw_bool(g->ch, 40)) {
        include_pad = true;
        st = pc_node_set_attr_int(n, "count_include_pad", 1, err);
    }
    if (st != PC_OK) return st;
    iv r = x_iv(x);
    if (include_pad) r = iv_union(r, (iv){0, 0});
    if (!is_max) r = iv_widen(r);
    return end(g, n, r, out, err);
}

static pc_status global_pool_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out,
                                   pc_error *err)
{
    pc_node *n = begin(g, op->op_type, 1, &x->value, 1, err);
    if (!n) return err->status;
    iv r = x_iv(x);
    return end(g, n, strcmp(op->op_type, "GlobalMaxPool") == 0 ? r : iv_widen(r), out, err);
}

static bool bn_accept(const pc_gen *g, const pc_gen_op *op, const pc_gen_x *x)
{
    (void)g;
    (void)op;
    return iv_ok(x_iv(x)) && (iv_mag(x_iv(x)) + 1) * 1.5 * 1.4143 + 1 <= MAG;
}

static pc_status bn_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out, pc_error *err)
{
    (void)op;
    int64_t c = x->dims[1];
    /* scale, bias, mean, var: var >= 0.5 keeps 1/sqrt(var + eps) <= 1.4143 */
    static const iv ranges[4] = {{-1.5, 1.5}, {-1, 1}, {-1, 1}, {0.5, 2}};
    pc_value *ins[5] = {x->value};
    for (int i = 0; i < 4; i++)
        if (!(ins[i + 1] = const_random(g, 1, &c, ranges[i], err))) return err->status;
    pc_node *n = begin(g, "BatchNormalization", 5, ins, 1, err);
    if (!n) return err->status;
    if (pc_draw_bool(g->ch, 30) && pc_node_set_attr_float(n, "epsilon", 1e-3f, err) != PC_OK)
        return err->status;
    double bound = (iv_mag(x_iv(x)) + 1) * 1.5 * 1.4143 + 1;
    return end(g, n, iv_sym(bound), out, err);
}

static pc_status resize_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out,
                              pc_error *err)
{
    (void)op;
    int64_t opset = pc_gen_opset(g);
    bool use_sizes = pc_draw_bool(g->ch, 30);
    int64_t ydims[4] = {x->dims[0], x->dims[1], x->dims[2], x->dims[3]};
    float scales[4] = {1, 1, 1, 1};
    for (int i = 2; i < 4; i++) {
        int64_t h = x->dims[i];
        if (use_sizes) {
            ydims[i] = pc_draw_range(g->ch, 1, 2 * h);
        } else {
            static const double s_opts[] = {1, 2, 0.5, 1.5};
            double s = pick_double(g, s_opts, 4);
            if (floor(s * (double)h) < 1) s = 1;
            scales[i] = (float)s;
            ydims[i] = (int64_t)floor((double)scales[i] * (double)h);
        }
    }
    if (!fits(g, 4, ydims))
        for (int i = 2; i < 4; i++) {
            ydims[i] = x->dims[i];
            scales[i] = 1;
        }
    int64_t four = 4;
    pc_value *ins[4] = {x->value, NULL, NULL, NULL};
    uint32_t n_in = 3;
    if (opset < 13) { /* roi and scales are required inputs before 13: empty when unused */
        int64_t zero = 0;
        if (!(ins[1] = const_floats(g, 1, &zero, NULL, err))) return err->status;
        if (use_sizes && !(ins[2] = const_floats(g, 1, &zero, NULL, err))) return err->status;
    }
    if (use_sizes) {
        if (!(ins[3] = const_ints(g, 4, ydims, err))) return err->status;
        n_in = 4;
    } else if (!(ins[2] = const_floats(g, 1, &four, scales, err))) {
        return err->status;
    }
    pc_node *n = begin(g, "Resize", n_in, ins, 1, err);
    if (!n) return err->status;
    bool linear = pc_draw_bool(g->ch, 40);
    pc_status st = linear ? pc_node_set_attr_string(n, "mode", "linear", err) : PC_OK;
    /* align_corners divides by (out - 1): only when every resized dim stays above 1 */
    bool corners_ok = ydims[2] > 1 && ydims[3] > 1;
    static const char *const ctms[] = {"half_pixel", "asymmetric", "pytorch_half_pixel", "align_corners"};
    uint32_t ctm = pc_draw(g->ch, corners_ok ? 4 : 3);
    if (st == PC_OK && ctm) st = pc_node_set_attr_string(n, "coordinate_transformation_mode", ctms[ctm], err);
    static const char *const nms[] = {"round_prefer_floor", "floor", "ceil", "round_prefer_ceil"};
    uint32_t nm = linear ? 0 : pc_draw(g->ch, 4);
    if (st == PC_OK && nm) st = pc_node_set_attr_string(n, "nearest_mode", nms[nm], err);
    if (st != PC_OK) return st;
    iv r = x_iv(x);
    return end(g, n, linear ? iv_widen(r) : r, out, err);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Softmax, reductions, MatMul, Gemm.
 */
/* Softmax turns absolute differences of its input into relative ones of its output: keep inputs moderate so
 * float rewrites upstream stay within the numerics tolerances. */
static bool softmax_accept(const pc_gen *g, const pc_gen_op *op, const pc_gen_x *x)
{
    (void)g;
    (void)op;
    return iv_ok(x_iv(x)) && iv_mag(x_iv(x)) <= 100;
}

static pc_status softmax_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out,
                               pc_error *err)
{
    pc_node *n = begin(g, op->op_type, 1, &x->value, 1, err);
    if (!n) return err->status;
    /* 0: the default axis (except before opset 13 on rank 1, where the default 1 is out of range), 1: the
     * last axis (channels in NHWC; where a wrong push below opset 13 shows, since the flattened group
     * changes), 2: any */
    static const uint32_t form_w[3] = {2, 4, 3};
    uint32_t form = pc_draw_weighted(g->ch, form_w, 3);
    if (form == 0 && pc_gen_opset(g) < 13 && x->rank < 2) form = 1;
    if (form) {
        int64_t axis = form == 1 ? (int64_t)x->rank - 1 : (int64_t)pc_draw(g->ch, (uint32_t)x->rank);
        if (pc_node_set_attr_int(n, "axis", axis_form(g, axis, x->rank), err) != PC_OK) return err->status;
    }
    iv r = {0, 1};
    if (strcmp(op->op_type, "LogSoftmax") == 0) r = (iv){(x->lo - x->hi) - log((double)x->n_elements), 0};
    return end(g, n, iv_widen(r), out, err);
}

enum { R_MEAN, R_SUM, R_MAX, R_MIN, R_L2, R_SUM_SQUARE };

static iv reduce_iv(int kind, iv a, double n)
{
    switch (kind) {
    case R_SUM:
        return (iv){a.lo * n, a.hi * n};
    case R_L2:
        return (iv){a.lo > 0 ? sqrt(n) * a.lo : 0, sqrt(n) * iv_mag(a)};
    case R_SUM_SQUARE:
        return (iv){0, n * iv_mag(a) * iv_mag(a)};
    default:
        return a;
    }
}

static bool reduce_accept(const pc_gen *g, const pc_gen_op *op, const pc_gen_x *x)
{
    (void)g;
    return iv_ok(x_iv(x)) && iv_ok(iv_widen(reduce_iv(op->kind, x_iv(x), (double)x->n_elements)));
}

static pc_status reduce_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out,
                              pc_error *err)
{
    int64_t opset = pc_gen_opset(g);
    uint32_t mask = pc_draw(g->ch, 1u << x->rank); /* 0: no axes (every axis) */
    int64_t axes[PC_MAX_RANK];
    size_t na = 0;
    double n_red = 1;
    for (int32_t i = 0; i < x->rank; i++)
        if (!mask || (mask >> i & 1)) n_red *= (double)x->dims[i];
    bool negative = mask && pc_draw_bool(g->ch, 25);
    for (int32_t i = 0; i < x->rank; i++)
        if (mask >> i & 1) axes[na++] = negative ? i - x->rank : i;
    bool as_input = opset >= 18 || (op->kind == R_SUM && opset >= 13);
    pc_value *ins[2] = {x->value, NULL};
    if (na && as_input && !(ins[1] = const_ints(g, na, axes, err))) return err->status;
    pc_node *n = begin(g, op->op_type, ins[1] ? 2 : 1, ins, 1, err);
    if (!n) return err->status;
    pc_status st = PC_OK;
    if (na && !as_input) st = set_ints(n, "axes", na, axes, err);
    if (st == PC_OK && pc_draw_bool(g->ch, 30)) st = pc_node_set_attr_int(n, "keepdims", 0, err);
    if (st != PC_OK) return st;
    return end(g, n, iv_widen(reduce_iv(op->kind, x_iv(x), n_red)), out, err);
}

static bool matmul_accept(const pc_gen *g, const pc_gen_op *op, const pc_gen_x *x)
{
    (void)op;
    int64_t k = x->dims[x->rank - 1];
    /* B is [K, N]: rank 2, and K * N elements must fit */
    return g->cfg->max_rank >= 2 && iv_ok(x_iv(x)) && (double)k * iv_mag(x_iv(x)) <= MAG;
}

static pc_status matmul_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out,
                              pc_error *err)
{
    (void)op;
    int64_t k = x->dims[x->rank - 1];
    uint64_t rows = x->n_elements / (uint64_t)k, cap = cap_elements(g) / rows;
    if (cap > cap_elements(g) / (uint64_t)k) cap = cap_elements(g) / (uint64_t)k; /* B's own size */
    int64_t nmax = cap < 8 ? (int64_t)cap : 8;
    int64_t bd[2] = {k, pc_draw_range(g->ch, 1, nmax < 1 ? 1 : nmax)};
    pc_value *b;
    iv br;
    if (pc_draw_bool(g->ch, 25)) { /* a second graph input: MatMul of two activations */
        br = iv_sym(1);
        pc_gen_value *e = pc_gen_input(g, PC_DTYPE_FLOAT, 2, bd, -1, 1, err);
        b = e ? e->value : NULL;
    } else {
        br = iv_sym(1.0 / sqrt((double)k));
        b = const_random(g, 2, bd, br, err);
    }
    if (!b) return err->status;
    pc_value *ins[2] = {x->value, b};
    pc_node *n = begin(g, "MatMul", 2, ins, 1, err);
    if (!n) return err->status;
    return end(g, n, iv_widen(iv_sym((double)k * iv_mag(br) * iv_mag(x_iv(x)))), out, err);
}

static bool gemm_accept(const pc_gen *g, const pc_gen_op *op, const pc_gen_x *x)
{
    (void)g;
    (void)op;
    double k = (double)(x->dims[0] > x->dims[1] ? x->dims[0] : x->dims[1]);
    return iv_ok(x_iv(x)) && 2 * sqrt(k) * iv_mag(x_iv(x)) + 1 <= MAG;
}

static pc_status gemm_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out, pc_error *err)
{
    (void)op;
    bool ta = pc_draw_bool(g->ch, 25), tb = pc_draw_bool(g->ch, 30);
    int64_t m = ta ? x->dims[1] : x->dims[0], k = ta ? x->dims[0] : x->dims[1];
    uint64_t cap = cap_elements(g) / (uint64_t)m;
    if (cap > cap_elements(g) / (uint64_t)k) cap = cap_elements(g) / (uint64_t)k; /* B's own size */
    int64_t nmax = cap < 8 ? (int64_t)cap : 8;
    int64_t nn = pc_draw_range(g->ch, 1, nmax < 1 ? 1 : nmax);
    int64_t bd[2] = {tb ? nn : k, tb ? k : nn};
    iv br = iv_sym(1.0 / sqrt((double)k));
    pc_value *ins[3] = {x->value, const_random(g, 2, bd, br, err), NULL};
    if (!ins[1]) return err->status;
    uint32_t cform = pc_draw(g->ch, 5);                /* 0 none, 1 [N], 2 [1], 3 [M, N], 4 scalar */
    if (cform == 0 && pc_gen_opset(g) < 11) cform = 1; /* C is optional from Gemm-11 */
    if (cform) {
        int64_t cd[2] = {cform == 3 ? m : cform == 2 ? 1 : nn, nn};
        int32_t crank = cform == 4 ? 0 : cform == 3 ? 2 : 1;
        if (!(ins[2] = const_random(g, crank, cd, iv_sym(1), err))) return err->status;
    }
    pc_node *n = begin(g, "Gemm", cform ? 3 : 2, ins, 1, err);
    if (!n) return err->status;
    static const double alphas[] = {1, 0.5, 2}, betas[] = {1, 0.5};
    double al = pick_double(g, alphas, 3), be = cform ? pick_double(g, betas, 2) : 1;
    pc_status st = PC_OK;
    if (ta) st = pc_node_set_attr_int(n, "transA", 1, err);
    if (st == PC_OK && tb) st = pc_node_set_attr_int(n, "transB", 1, err);
    if (st == PC_OK && al != 1) st = pc_node_set_attr_float(n, "alpha", (float)al, err);
    if (st == PC_OK && be != 1) st = pc_node_set_attr_float(n, "beta", (float)be, err);
    if (st != PC_OK) return st;
    double bound = al * (double)k * iv_mag(br) * iv_mag(x_iv(x)) + (cform ? be : 0);
    return end(g, n, iv_widen(iv_sym(bound)), out, err);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Data movement: Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Concat, Split, Pad, Slice.
 */
static pc_status reshape_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out,
                               pc_error *err)
{
    (void)op;
    uint64_t total = x->n_elements;
    int32_t rank = 1;
    int64_t shape[PC_MAX_RANK];
    /* 0: flatten to [n]; 1: a random factorization; 2: x's dims reordered (same rank: data reinterpreted, not
     * transposed, so a transpose must never be pushed through it); 3: x's non-1 dims in order with the 1s
     * moved (a Transpose in disguise, which the transpose optimizer may push through) */
    static const uint32_t form_w[4] = {1, 5, 3, 2};
    uint32_t form = x->rank >= 2 ? pc_draw_weighted(g->ch, form_w, 4) : pc_draw_weighted(g->ch, form_w, 2);
    if (form == 2) {
        int64_t perm[PC_MAX_RANK];
        rank = x->rank;
        draw_perm(g, rank, perm);
        for (int32_t i = 0; i < rank; i++)
            shape[i] = x->dims[perm[i]];
    } else if (form == 3) {
        int64_t big[PC_MAX_RANK];
        int32_t nb = 0;
        rank = x->rank;
        for (int32_t i = 0; i < rank; i++)
            if (x->dims[i] != 1) big[nb++] = x->dims[i];
        /* place the nb non-1 dims in order at drawn slots; the rest are 1 */
        for (int32_t i = 0, placed = 0; i < rank; i++) {
            int32_t left = rank - i, need = nb - placed;
            bool put = need > 0 && (need == left || pc_draw_bool(g->ch, 50));
            shape[i] = put ? big[placed++] : 1;
        }
    } else {
        if (form == 1) rank = (int32_t)pc_draw_range(g->ch, total == 1 ? 0 : 1, g->cfg->max_rank);
        uint64_t rem = total;
        for (int32_t i = 0; i < rank; i++) {
            if (i == rank - 1) {
                shape[i] = (int64_t)rem;
                break;
            }
            int64_t divs[64];
            uint32_t nd = 0;
            for (uint64_t d = 1; d <= rem && nd < 64; d++)
                if (rem % d == 0) divs[nd++] = (int64_t)d;
            shape[i] = divs[pc_draw(g->ch, nd)];
            rem /= (uint64_t)shape[i];
        }
    }
    int64_t written[PC_MAX_RANK];
    memcpy(written, shape, (size_t)rank * sizeof *shape);
    if (rank > 0 && pc_draw_bool(g->ch, 30)) written[pc_draw(g->ch, (uint32_t)rank)] = -1;
    for (int32_t i = 0; i < rank && i < x->rank; i++) /* 0 copies the input dim (allowzero 0) */
        if (written[i] == x->dims[i] && pc_draw_bool(g->ch, 15)) written[i] = 0;
    pc_value *ins[2] = {x->value, const_ints(g, (size_t)rank, written, err)};
    if (!ins[1]) return err->status;
    pc_node *n = begin(g, "Reshape", 2, ins, 1, err);
    if (!n) return err->status;
    return end(g, n, x_iv(x), out, err);
}

static bool flatten_accept(const pc_gen *g, const pc_gen_op *op, const pc_gen_x *x)
{
    (void)op;
    (void)x;
    return g->cfg->max_rank >= 2; /* the output is rank 2 */
}

static pc_status flatten_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out,
                               pc_error *err)
{
    (void)op;
    pc_node *n = begin(g, "Flatten", 1, &x->value, 1, err);
    if (!n) return err->status;
    if (pc_draw_bool(g->ch, 50)) {
        int64_t axis = pc_draw(g->ch, (uint32_t)x->rank + 1);
        if (pc_node_set_attr_int(n, "axis", axis == x->rank ? axis : axis_form(g, axis, x->rank), err) !=
            PC_OK)
            return err->status;
    }
    return end(g, n, x_iv(x), out, err);
}

pc_status pc_gen_transpose(pc_gen *g, const pc_gen_x *x, const int64_t *perm, pc_value **out, pc_error *err)
{
    pc_node *n = begin(g, "Transpose", 1, &x->value, 1, err);
    if (!n) return err->status;
    if (set_ints(n, "perm", (size_t)x->rank, perm, err) != PC_OK) return err->status;
    return end(g, n, x_iv(x), out, err);
}

static pc_status transpose_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out,
                                 pc_error *err)
{
    (void)op;
    if (!pc_draw_bool(g->ch, 80)) { /* no perm: reverse the axes */
        pc_node *n = begin(g, "Transpose", 1, &x->value, 1, err);
        if (!n) return err->status;
        return end(g, n, x_iv(x), out, err);
    }
    int64_t perm[PC_MAX_RANK];
    draw_perm(g, x->rank, perm);
    return pc_gen_transpose(g, x, perm, out, err);
}

static bool squeeze_accept(const pc_gen *g, const pc_gen_op *op, const pc_gen_x *x)
{
    (void)g;
    (void)op;
    for (int32_t i = 0; i < x->rank; i++)
        if (x->dims[i] == 1) return true;
    return false;
}

static void squeeze_fix(int32_t rank, int64_t *dims)
{
    if (rank > 0) dims[0] = 1;
}

static pc_status squeeze_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out,
                               pc_error *err)
{
    (void)op;
    int64_t ones[PC_MAX_RANK], axes[PC_MAX_RANK];
    uint32_t n1 = 0;
    size_t na = 0;
    for (int32_t i = 0; i < x->rank; i++)
        if (x->dims[i] == 1) ones[n1++] = i;
    if (pc_draw_bool(g->ch, 70)) { /* explicit axes: a non-empty subset of the size-1 dims */
        uint32_t mask = 1 + pc_draw(g->ch, (1u << (n1 > 5 ? 5 : n1)) - 1);
        for (uint32_t i = 0; i < n1 && i < 5; i++)
            if (mask >> i & 1) axes[na++] = axis_form(g, ones[i], x->rank);
    }
    bool attr = pc_gen_opset(g) < 13;
    pc_value *ins[2] = {x->value, NULL};
    if (na && !attr && !(ins[1] = const_ints(g, na, axes, err))) return err->status;
    pc_node *n = begin(g, "Squeeze", ins[1] ? 2 : 1, ins, 1, err);
    if (!n) return err->status;
    if (na && attr && set_ints(n, "axes", na, axes, err) != PC_OK) return err->status;
    return end(g, n, x_iv(x), out, err);
}

static bool unsqueeze_accept(const pc_gen *g, const pc_gen_op *op, const pc_gen_x *x)
{
    (void)op;
    return x->rank < g->cfg->max_rank;
}

static pc_status unsqueeze_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out,
                                 pc_error *err)
{
    (void)op;
    int32_t room = g->cfg->max_rank - x->rank;
    int32_t k = (int32_t)pc_draw_range(g->ch, 1, room < 2 ? room : 2);
    int32_t r = x->rank + k;
    bool taken[PC_MAX_RANK] = {false};
    int64_t axes[2];
    for (int32_t j = 0; j < k; j++) {
        uint32_t free_n = (uint32_t)(r - j), pick = pc_draw(g->ch, free_n);
        for (int32_t p = 0; p < r; p++) {
            if (taken[p]) continue;
            if (pick-- == 0) {
                taken[p] = true;
                axes[j] = axis_form(g, p, r);
                break;
            }
        }
    }
    bool attr = pc_gen_opset(g) < 13;
    pc_value *ins[2] = {x->value, NULL};
    if (!attr && !(ins[1] = const_ints(g, (size_t)k, axes, err))) return err->status;
    pc_node *n = begin(g, "Unsqueeze", attr ? 1 : 2, ins, 1, err);
    if (!n) return err->status;
    if (attr && set_ints(n, "axes", (size_t)k, axes, err) != PC_OK) return err->status;
    return end(g, n, x_iv(x), out, err);
}

/* Concat: axes along which x plus one more slice of size 1 still fits the element cap. */
static uint32_t concat_axes(const pc_gen *g, const pc_gen_x *x, int32_t *axes)
{
    uint32_t n = 0;
    for (int32_t a = 0; a < x->rank; a++)
        if (x->n_elements + x->n_elements / (uint64_t)x->dims[a] <= cap_elements(g)) axes[n++] = a;
    return n;
}

static bool concat_accept(const pc_gen *g, const pc_gen_op *op, const pc_gen_x *x)
{
    (void)op;
    int32_t axes[PC_MAX_RANK];
    return iv_ok(x_iv(x)) && concat_axes(g, x, axes) > 0;
}

typedef struct concat_ctx {
    const pc_gen_x *x;
    int32_t axis;
    uint64_t room; /* elements the operand may have */
} concat_ctx;

static bool concat_operand_accept(const pc_gen_value *v, void *ctx)
{
    const concat_ctx *c = ctx;
    pc_gen_x y;
    bool ok;
    x_from_pool(v, &y, &ok);
    if (!ok || v->is_const || y.rank != c->x->rank || y.n_elements > c->room || !iv_ok(x_iv(&y)))
        return false;
    for (int32_t i = 0; i < y.rank; i++)
        if (i != c->axis && y.dims[i] != c->x->dims[i]) return false;
    return true;
}

static pc_status concat_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out,
                              pc_error *err)
{
    (void)op;
    int32_t axes[PC_MAX_RANK];
    uint32_t na = concat_axes(g, x, axes);
    /* the last axis (NHWC channels) often, any feasible one otherwise */
    int32_t axis = pc_draw_bool(g->ch, 40) ? axes[na - 1] : axes[pc_draw(g->ch, na)];
    uint64_t slice = x->n_elements / (uint64_t)x->dims[axis], total = x->n_elements;
    uint32_t n_other = (uint32_t)pc_draw_range(g->ch, 1, 3);
    pc_value *ins[4] = {x->value};
    uint32_t n_in = 1;
    iv r = x_iv(x);
    for (uint32_t j = 0; j < n_other; j++) {
        uint64_t room = cap_elements(g) - total;
        if (room < slice) break;
        concat_ctx cc = {x, axis, room};
        uint32_t opts[4], n = 0;
        opts[n++] = 0;                            /* a constant */
        if (x->n_elements <= room) opts[n++] = 1; /* x again (fan-out) */
        if (count_candidates(g, concat_operand_accept, &cc)) opts[n++] = 2;
        opts[n++] = 3; /* a new graph input */
        uint32_t which = opts[pc_draw(g->ch, n)];
        pc_value *v = NULL;
        iv vr = iv_sym(1);
        if (which == 1) {
            v = x->value;
            vr = x_iv(x);
        } else if (which == 2) {
            pc_gen_value *e = pc_gen_pick(g, concat_operand_accept, &cc);
            v = e->value;
            vr = (iv){e->lo, e->hi};
        } else {
            int64_t dims[PC_MAX_RANK];
            memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
            uint64_t max_d = room / slice;
            dims[axis] = pc_draw_range(g->ch, 1, max_d < 3 ? (int64_t)max_d : 3);
            if (which == 0) {
                v = const_random(g, x->rank, dims, vr, err);
            } else {
                pc_gen_value *e = pc_gen_input(g, PC_DTYPE_FLOAT, x->rank, dims, -1, 1, err);
                v = e ? e->value : NULL;
            }
        }
        if (!v) return err->status;
        pc_gen_x y;
        if (!pc_gen_x_get(g, v, &y)) return pc_error_set(err, PC_ERR_INTERNAL, "generator: Concat operand");
        total += y.n_elements;
        ins[n_in++] = v;
        r = iv_union(r, vr);
    }
    /* the operand order is drawn too: x is not always first */
    if (n_in > 1 && pc_draw_bool(g->ch, 25)) {
        pc_value *t = ins[0];
        ins[0] = ins[n_in - 1];
        ins[n_in - 1] = t;
    }
    pc_node *n = begin(g, "Concat", n_in, ins, 1, err);
    if (!n) return err->status;
    if (pc_node_set_attr_int(n, "axis", axis_form(g, axis, x->rank), err) != PC_OK) return err->status;
    return end(g, n, r, out, err);
}

static bool split_accept(const pc_gen *g, const pc_gen_op *op, const pc_gen_x *x)
{
    (void)g;
    (void)op;
    for (int32_t i = 0; i < x->rank; i++)
        if (x->dims[i] >= 2) return true;
    return false;
}

static void split_fix(int32_t rank, int64_t *dims)
{
    for (int32_t i = 0; i < rank; i++)
        if (dims[i] >= 2) return;
    if (rank > 0) dims[rank - 1] = 2;
}

static pc_status split_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out, pc_error *err)
{
    (void)op;
    int32_t cand[PC_MAX_RANK];
    uint32_t nc = 0;
    for (int32_t i = 0; i < x->rank; i++)
        if (x->dims[i] >= 2) cand[nc++] = i;
    int32_t axis = pc_draw_bool(g->ch, 40) ? cand[nc - 1] : cand[pc_draw(g->ch, nc)];
    int64_t dim = x->dims[axis];
    int64_t parts = pc_draw_range(g->ch, 2, dim < 3 ? dim : 3);
    int64_t sizes[3], rem = dim;
    for (int64_t i = 0; i < parts - 1; i++) {
        sizes[i] = pc_draw_range(g->ch, 1, rem - (parts - 1 - i));
        rem -= sizes[i];
    }
    sizes[parts - 1] = rem;
    bool equal = dim % parts == 0;
    for (int64_t i = 0; equal && i < parts; i++)
        equal = sizes[i] == dim / parts;
    int64_t opset = pc_gen_opset(g);
    /* equal parts may leave the sizes out (opset 18 then needs num_outputs) */
    bool omit = equal && pc_draw_bool(g->ch, 50);
    pc_value *ins[2] = {x->value, NULL};
    if (!omit && opset >= 13 && !(ins[1] = const_ints(g, (size_t)parts, sizes, err))) return err->status;
    pc_node *n = begin(g, "Split", ins[1] ? 2 : 1, ins, (uint32_t)parts, err);
    if (!n) return err->status;
    pc_status st = pc_node_set_attr_int(n, "axis", axis_form(g, axis, x->rank), err);
    if (st == PC_OK && !omit && opset < 13) st = set_ints(n, "split", (size_t)parts, sizes, err);
    if (st == PC_OK && omit && opset >= 18) st = pc_node_set_attr_int(n, "num_outputs", parts, err);
    if (st != PC_OK) return st;
    return end(g, n, x_iv(x), out, err);
}

static pc_status pad_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out, pc_error *err)
{
    (void)op;
    uint32_t mode = pc_draw(g->ch, 3); /* constant, reflect, edge */
    int64_t pads[2 * PC_MAX_RANK], ydims[PC_MAX_RANK];
    for (int32_t i = 0; i < x->rank; i++) {
        int64_t mx = mode == 1 ? x->dims[i] - 1 : 2; /* reflect: pads below the dim */
        if (mx > 2) mx = 2;
        pads[i] = pc_draw_range(g->ch, 0, mx);
        pads[x->rank + i] = pc_draw_range(g->ch, 0, mx);
    }
    for (;;) { /* drop the largest pad until the output fits */
        for (int32_t i = 0; i < x->rank; i++)
            ydims[i] = x->dims[i] + pads[i] + pads[x->rank + i];
        if (fits(g, x->rank, ydims)) break;
        int32_t big = 0;
        for (int32_t i = 1; i < 2 * x->rank; i++)
            if (pads[i] > pads[big]) big = i;
        pads[big] = 0;
    }
    bool any = false;
    for (int32_t i = 0; i < 2 * x->rank; i++)
        any |= pads[i] != 0;
    /* before Pad-11, pads and the constant value are attributes */
    bool attrs = pc_gen_opset(g) < 11;
    pc_value *ins[3] = {x->value, attrs ? NULL : const_ints(g, (size_t)x->rank * 2, pads, err), NULL};
    if (!attrs && !ins[1]) return err->status;
    iv r = x_iv(x);
    double cv = 0;
    bool has_cv = false;
    if (mode == 0) {
        if ((has_cv = pc_draw_bool(g->ch, 40))) {
            static const double cvs[] = {0.5, -1, 1};
            cv = pick_double(g, cvs, 3);
            if (!attrs && !(ins[2] = const_scalar(g, (float)cv, err))) return err->status;
        }
        if (any) r = iv_union(r, (iv){cv, cv});
    }
    pc_node *n = begin(g, "Pad", attrs ? 1 : ins[2] ? 3 : 2, ins, 1, err);
    if (!n) return err->status;
    static const char *const modes[] = {"constant", "reflect", "edge"};
    if (mode && pc_node_set_attr_string(n, "mode", modes[mode], err) != PC_OK) return err->status;
    if (attrs && (pc_node_set_attr_ints(n, "pads", 2 * (size_t)x->rank, pads, err) != PC_OK ||
                  (has_cv && pc_node_set_attr_float(n, "value", (float)cv, err) != PC_OK)))
        return err->status;
    return end(g, n, r, out, err);
}

static pc_status slice_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out, pc_error *err)
{
    (void)op;
    int32_t k = (int32_t)pc_draw_range(g->ch, 1, x->rank);
    int64_t starts[PC_MAX_RANK], ends[PC_MAX_RANK], axes[PC_MAX_RANK], steps[PC_MAX_RANK];
    bool attrs = pc_gen_opset(g) < 10; /* Slice-1: starts, ends and axes are attributes, no steps */
    bool taken[PC_MAX_RANK] = {false}, unit = true;
    /* the leading k axes, in order, with axes left to their default (0..k-1) now and then: a handler must
     * know the length of starts then, k == rank included */
    bool lead = pc_draw_bool(g->ch, 30);
    for (int32_t j = 0; j < k; j++) {
        uint32_t pick = lead ? 0 : pc_draw(g->ch, (uint32_t)(x->rank - j));
        int32_t a = 0;
        for (int32_t p = 0; p < x->rank; p++) {
            if (taken[p]) continue;
            if (pick-- == 0) {
                a = p;
                break;
            }
        }
        taken[a] = true;
        int64_t d = x->dims[a];
        axes[j] = axis_form(g, a, x->rank);
        steps[j] = 1;
        uint32_t form = pc_draw(g->ch, 6);
        if (attrs && (form == 3 || form == 4)) form = 1; /* no steps before Slice-10 */
        switch (form) {
        case 0: /* everything: eliminate_slice removes it when every axis is like this */
            starts[j] = 0;
            ends[j] = pc_draw_bool(g->ch, 50) ? INT64_MAX : d;
            break;
        case 1: { /* [s, e) */
            int64_t s = pc_draw_range(g->ch, 0, d - 1);
            starts[j] = s;
            ends[j] = pc_draw_range(g->ch, s + 1, d);
            break;
        }
        case 2: { /* negative bounds */
            int64_t s = pc_draw_range(g->ch, 0, d - 1);
            starts[j] = s - d;
            ends[j] = pc_draw_bool(g->ch, 50) ? INT64_MAX : pc_draw_range(g->ch, s + 1, d) - d;
            if (ends[j] == 0) ends[j] = INT64_MAX;
            break;
        }
        case 3: /* every other element */
            starts[j] = pc_draw_range(g->ch, 0, d - 1);
            ends[j] = INT64_MAX;
            steps[j] = 2;
            break;
        case 4: /* reversed */
            starts[j] = pc_draw_bool(g->ch, 50) ? -1 : d - 1;
            ends[j] = INT64_MIN;
            steps[j] = -1;
            break;
        default: /* bounds outside [-d, d], clamped: a start below -d reads from 0, an end past d stops at d
                  */
            starts[j] = pc_draw_bool(g->ch, 50) ? -d - 1 - (int64_t)pc_draw(g->ch, 3) : 0;
            ends[j] = pc_draw_bool(g->ch, 50)
                          ? d + 1 + (int64_t)pc_draw(g->ch, 3)
                          : pc_draw_range(g->ch, 1, d) - (pc_draw_bool(g->ch, 50) ? d : 0);
            if (ends[j] == 0) ends[j] = d + 1;
            break;
        }
        unit &= steps[j] == 1;
    }
    if (attrs) {
        pc_node *n = begin(g, "Slice", 1, &x->value, 1, err);
        bool omit_axes = lead;
        if (!n || pc_node_set_attr_ints(n, "starts", (size_t)k, starts, err) != PC_OK ||
            pc_node_set_attr_ints(n, "ends", (size_t)k, ends, err) != PC_OK ||
            (!omit_axes && pc_node_set_attr_ints(n, "axes", (size_t)k, axes, err) != PC_OK))
            return err->status;
        return end(g, n, x_iv(x), out, err);
    }
    /* the index inputs share one type (Tind): int64, or int32 now and then (bounds past int32 clamp to it,
     * which Slice clamps the same) */
    pc_dtype tind = pc_draw_bool(g->ch, 25) ? PC_DTYPE_INT32 : PC_DTYPE_INT64;
    pc_value *ins[5] = {x->value, const_ints_as(g, tind, (size_t)k, starts, err), NULL, NULL, NULL};
    if (!ins[1] || !(ins[2] = const_ints_as(g, tind, (size_t)k, ends, err))) return err->status;
    /* axes [0, k) left to their default, also when steps follow (an omitted input in the middle) */
    bool omit_axes = lead;
    uint32_t n_in = 3;
    if (!omit_axes) {
        if (!(ins[3] = const_ints_as(g, tind, (size_t)k, axes, err))) return err->status;
        n_in = 4;
    }
    if (!unit || pc_draw_bool(g->ch, 20)) {
        if (!(ins[4] = const_ints_as(g, tind, (size_t)k, steps, err))) return err->status;
        n_in = 5;
    }
    pc_node *n = begin(g, "Slice", n_in, ins, 1, err);
    if (!n) return err->status;
    return end(g, n, x_iv(x), out, err);
}

/* ---------------------------------------------------------------------------------------------------------------
 * GELU subgraph.
 */
pc_status pc_gen_gelu_pattern(pc_gen *g, const pc_gen_x *x, bool squared, pc_value **out, pc_error *err)
{
    iv a = x_iv(x);
    bool by_mul = pc_draw_bool(g->ch, 30), half_first = pc_draw_bool(g->ch, 30);
    pc_value *c = const_scalar(g, by_mul ? (float)0.7071067811865476 : (float)1.4142135623730951, err);
    if (!c) return err->status;
    pc_value *ins[2] = {x->value, c};
    pc_node *n = begin(g, by_mul ? "Mul" : "Div", 2, ins, 1, err);
    pc_value *scaled = NULL, *e = NULL, *one = NULL, *sum = NULL, *half = NULL, *p = NULL;
    if (!n || end(g, n, iv_widen((iv){a.lo * 0.7072, a.hi * 0.7072}), &scaled, err) != PC_OK)
        return err->status;
    if (!(n = begin(g, "Erf", 1, &scaled, 1, err)) || end(g, n, (iv){-1.0001, 1.0001}, &e, err) != PC_OK)
        return err->status;
    if (!(one = const_scalar(g, 1.0f, err))) return err->status;
    bool swap = pc_draw_bool(g->ch, 30);
    pc_value *add_in[2] = {swap ? one : e, swap ? e : one};
    if (!(n = begin(g, "Add", 2, add_in, 1, err)) || end(g, n, (iv){-0.0001, 2.0001}, &sum, err) != PC_OK)
        return err->status;
    if (!(half = const_scalar(g, 0.5f, err))) return err->status;
    iv gelu = iv_widen((iv){fmax(fmin(a.lo, 0), -0.171), fmax(a.hi, 0)});
    if (squared) {
        pc_value *sq_in[2] = {sum, sum}, *h_in[2] = {NULL, half};
        if (!(n = begin(g, "Mul", 2, sq_in, 1, err)) || end(g, n, (iv){0, 4.0005}, &h_in[0], err) != PC_OK ||
            !(n = begin(g, "Mul", 2, h_in, 1, err)))
            return err->status;
        return end(g, n, (iv){0, 2.0003}, out, err);
    }
    if (half_first) { /* Mul(x, 0.5) -> Mul(., sum) */
        pc_value *h_in[2] = {x->value, half};
        if (!(n = begin(g, "Mul", 2, h_in, 1, err)) ||
            end(g, n, iv_widen((iv){a.lo * 0.5, a.hi * 0.5}), &p, err) != PC_OK)
            return err->status;
        pc_value *m_in[2] = {swap ? sum : p, swap ? p : sum};
        if (!(n = begin(g, "Mul", 2, m_in, 1, err))) return err->status;
        return end(g, n, gelu, out, err);
    }
    pc_value *m_in[2] = {swap ? sum : x->value, swap ? x->value : sum};
    if (!(n = begin(g, "Mul", 2, m_in, 1, err)) ||
        end(g, n, iv_widen(iv_mul(a, (iv){0, 2.0001})), &p, err) != PC_OK)
        return err->status;
    pc_value *h_in[2] = {p, half};
    if (!(n = begin(g, "Mul", 2, h_in, 1, err))) return err->status;
    return end(g, n, gelu, out, err);
}

static bool gelu_pattern_accept(const pc_gen *g, const pc_gen_op *op, const pc_gen_x *x)
{
    (void)g;
    (void)op;
    return iv_ok(x_iv(x)) && 2.0001 * iv_mag(x_iv(x)) <= MAG;
}

static pc_status gelu_pattern_build(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out,
                                    pc_error *err)
{
    (void)op;
    return pc_gen_gelu_pattern(g, x, false, out, err);
}

/* ---------------------------------------------------------------------------------------------------------------
 * The table. Ranks are of input 0; in_lo/in_hi is the data range of a new input made for the op.
 */
#define F PC_GEN_OP_FLOAT
#define N PC_GEN_OP_NHWC
#define L PC_GEN_OP_LAYOUT
#define P PC_GEN_OP_PATTERN
#define UN(name, kind, flags, opset, lo, hi)                                                                 \
    {                                                                                                        \
        name, flags, kind, 0, 5, opset, 99, 1, lo, hi, unary_accept, NULL, unary_build                       \
    }
#define BIN(name, kind)                                                                                      \
    {                                                                                                        \
        name, F | N, kind, 0, 5, 1, 99, 1, -1, 1, binary_accept, NULL, binary_build                          \
    }
#define RED(name, kind)                                                                                      \
    {                                                                                                        \
        name, F | N, kind, 1, 5, 1, 99, 1, -1, 1, reduce_accept, NULL, reduce_build                          \
    }

static const pc_gen_op ops[] = {
    UN("Relu", U_RELU, F | N, 1, -1, 1),
    UN("LeakyRelu", U_LEAKY_RELU, F | N, 1, -1, 1),
    UN("Sigmoid", U_SIGMOID, F | N, 1, -1, 1),
    UN("Tanh", U_TANH, F | N, 1, -1, 1),
    UN("Abs", U_ABS, F | N, 1, -1, 1),
    UN("Neg", U_NEG, F | N, 1, -1, 1),
    UN("Exp", U_EXP, F | N, 1, -2, 2),
    UN("Log", U_LOG, F | N, 1, 0.1, 4),
    UN("Sqrt", U_SQRT, F | N, 1, 0, 4),
    UN("Reciprocal", U_RECIPROCAL, F | N, 1, 0.5, 2),
    UN("Erf", U_ERF, F | N, 1, -1, 1),
    UN("Elu", U_ELU, F | N, 1, -1, 1),
    UN("HardSigmoid", U_HARD_SIGMOID, F | N, 1, -1, 1),
    UN("Softplus", U_SOFTPLUS, F | N, 1, -1, 1),
    UN("Identity", U_IDENTITY, F | N, 1, -1, 1),
    UN("Dropout", U_DROPOUT, F | N, 1, -1, 1),
    UN("Cast", U_CAST, F | N, 1, -1, 1),
    UN("Gelu", U_GELU, F | N, 20, -1, 1),
    {"Clip", F | N, 0, 0, 5, 11, 99, 1, -1, 1, pool_accept, NULL, clip_build},
    BIN("Add", B_ADD),
    BIN("Sub", B_SUB),
    BIN("Mul", B_MUL),
    BIN("Div", B_DIV),
    BIN("Max", B_MAX),
    BIN("Min", B_MIN),
    BIN("Pow", B_POW),
    {"Conv", F | L, 0, 3, 4, 1, 99, 1, -1, 1, conv_accept, NULL, conv_build},
    {"MaxPool", F | L, 0, 3, 4, 10, 99, 1, -1, 1, pool_accept, NULL, pool_build},
    {"AveragePool", F | L, 0, 3, 4, 1, 99, 1, -1, 1, pool_accept, NULL, pool_build},
    {"GlobalAveragePool", F | L, 0, 3, 5, 1, 99, 1, -1, 1, pool_accept, NULL, global_pool_build},
    {"GlobalMaxPool", F | L, 0, 3, 5, 1, 99, 1, -1, 1, pool_accept, NULL, global_pool_build},
    {"BatchNormalization", F | L, 0, 2, 5, 1, 99, 1, -1, 1, bn_accept, NULL, bn_build},
    {"Resize", F | L, 0, 4, 4, 11, 99, 1, -1, 1, pool_accept, NULL, resize_build},
    {"Softmax", F | N, 0, 1, 5, 1, 99, 1, -1, 1, softmax_accept, NULL, softmax_build},
    {"LogSoftmax", F | N, 0, 1, 5, 1, 99, 1, -1, 1, softmax_accept, NULL, softmax_build},
    RED("ReduceMean", R_MEAN),
    RED("ReduceSum", R_SUM),
    RED("ReduceMax", R_MAX),
    RED("ReduceMin", R_MIN),
    RED("ReduceL2", R_L2),
    RED("ReduceSumSquare", R_SUM_SQUARE),
    {"MatMul", F | N, 0, 1, 5, 1, 99, 1, -1, 1, matmul_accept, NULL, matmul_build},
    {"Gemm", F, 0, 2, 2, 1, 99, 1, -1, 1, gemm_accept, NULL, gemm_build},
    {"Reshape", F | N, 0, 0, 5, 5, 99, 1, -1, 1, NULL, NULL, reshape_build},
    {"Flatten", F | N, 0, 1, 5, 11, 99, 1, -1, 1, flatten_accept, NULL, flatten_build},
    {"Transpose", F | N, 0, 2, 5, 1, 99, 1, -1, 1, NULL, NULL, transpose_build},
    {"Squeeze", F | N, 0, 1, 5, 1, 99, 1, -1, 1, squeeze_accept, squeeze_fix, squeeze_build},
    {"Unsqueeze", F | N, 0, 0, 4, 1, 99, 1, -1, 1, unsqueeze_accept, NULL, unsqueeze_build},
    {"Concat", F | N, 0, 1, 5, 4, 99, 1, -1, 1, concat_accept, NULL, concat_build},
    {"Split", F | N, 0, 1, 5, 2, 99, 1, -1, 1, split_accept, split_fix, split_build},
    {"Pad", F | N, 0, 1, 5, 2, 99, 1, -1, 1, pool_accept, NULL, pad_build},
    {"Slice", F | N, 0, 1, 5, 1, 99, 1, -1, 1, NULL, NULL, slice_build},
    {"GeluPattern", F | N | P, 0, 0, 5, 1, 99, 5, -1, 1, gelu_pattern_accept, NULL, gelu_pattern_build},
};
enum { N_OPS = sizeof ops / sizeof ops[0] };

#undef F
#undef N
#undef L
#undef P

size_t pc_gen_op_count(void)
{
    return N_OPS;
}
const pc_gen_op *pc_gen_op_at(size_t i)
{
    return i < N_OPS ? &ops[i] : NULL;
}

const pc_gen_op *pc_gen_op_find(const char *op_type)
{
    for (size_t i = 0; op_type && i < N_OPS; i++)
        if (pc_name_eq(ops[i].op_type, op_type)) return &ops[i];
    return NULL;
}

static int32_t max_rank_of(const pc_gen *g, const pc_gen_op *op)
{
    return op->max_rank < g->cfg->max_rank ? op->max_rank : g->cfg->max_rank;
}

bool pc_gen_op_accepts(const pc_gen *g, const pc_gen_op *op, const pc_gen_x *x)
{
    int64_t opset = pc_gen_opset(g);
    if (opset < op->min_opset || opset > op->max_opset || pc_gen_budget(g) < op->min_nodes) return false;
    if (x->rank < op->min_rank || x->rank > max_rank_of(g, op) || x->n_elements > cap_elements(g))
        return false;
    for (int32_t i = 0; i < x->rank; i++)
        if (x->dims[i] < 1) return false;
    if (!(x->lo <= x->hi)) return false;
    return !op->accept || op->accept(g, op, x);
}

/* The input a new graph input for op would have with all-1 dims (after the op's fix-up). */
static void minimal_x(const pc_gen_op *op, int32_t rank, pc_gen_x *x)
{
    memset(x, 0, sizeof *x);
    x->rank = rank;
    for (int32_t i = 0; i < rank; i++)
        x->dims[i] = 1;
    if (op->fix) op->fix(rank, x->dims);
    x->n_elements = dims_count(rank, x->dims);
    x->lo = op->in_lo;
    x->hi = op->in_hi;
}

bool pc_gen_op_feasible(const pc_gen *g, const pc_gen_op *op)
{
    int64_t opset = pc_gen_opset(g);
    if (opset < op->min_opset || opset > op->max_opset || pc_gen_budget(g) < op->min_nodes) return false;
    for (int32_t r = op->min_rank; r <= max_rank_of(g, op); r++) {
        pc_gen_x x;
        minimal_x(op, r, &x);
        if (pc_gen_op_accepts(g, op, &x)) return true;
    }
    return false;
}

pc_status pc_gen_op_apply(pc_gen *g, const pc_gen_op *op, const pc_gen_x *x, pc_value **out, pc_error *err)
{
    *out = NULL;
    if (!pc_gen_op_accepts(g, op, x))
        return pc_error_set(err, PC_ERR_INTERNAL, "generator: %s applied to value '%s' it does not accept",
                            op->op_type, x->value ? x->value->name : "?");
    pc_gen_x copy = *x; /* the pool may move while the op adds constants */
    return op->build(g, op, &copy, out, err);
}

pc_status pc_gen_ops_try(pc_gen *g, const char *op_type, pc_value *x, pc_value **out, pc_error *err)
{
    *out = NULL;
    const pc_gen_op *op = pc_gen_op_find(op_type);
    pc_gen_x xv;
    if (!op || !pc_gen_x_get(g, x, &xv) || !pc_gen_op_accepts(g, op, &xv)) return PC_OK;
    return pc_gen_op_apply(g, op, &xv, out, err);
}

pc_status pc_gen_op_draw_x(pc_gen *g, const pc_gen_op *op, int32_t rank_pref, pc_gen_x *x, pc_error *err)
{
    int32_t lo = op->min_rank, hi = max_rank_of(g, op), rank;
    if (rank_pref >= lo && rank_pref <= hi) {
        rank = rank_pref;
    } else {
        /* draw 0: the lowest rank; fresh draws favour the NCHW rank 4 */
        uint32_t w[6], n = 0;
        for (int32_t r = lo; r <= hi && n < 6; r++)
            w[n++] = r == 4 ? 6 : r == 3 || r == 2 ? 3 : 1;
        rank = lo + (int32_t)pc_draw_weighted(g->ch, w, n);
    }
    int64_t dims[PC_MAX_RANK];
    pc_gen_draw_dims(g, rank, rank >= 3, dims);
    if (op->fix) op->fix(rank, dims);
    pc_gen_x probe;
    memset(&probe, 0, sizeof probe);
    probe.rank = rank;
    memcpy(probe.dims, dims, (size_t)rank * sizeof *dims);
    probe.n_elements = dims_count(rank, dims);
    probe.lo = op->in_lo;
    probe.hi = op->in_hi;
    if (!pc_gen_op_accepts(g, op, &probe)) { /* the drawn dims break a rule: all-1 dims never do */
        bool found = false;
        for (int32_t r = rank; !found && r <= hi; r++) {
            minimal_x(op, r, &probe);
            found = pc_gen_op_accepts(g, op, &probe);
        }
        for (int32_t r = lo; !found && r < rank; r++) {
            minimal_x(op, r, &probe);
            found = pc_gen_op_accepts(g, op, &probe);
        }
        if (!found)
            return pc_error_set(err, PC_ERR_INTERNAL, "generator: no input shape satisfies %s", op->op_type);
    }
    *x = probe;
    return PC_OK;
}

pc_status pc_gen_op_new_input(pc_gen *g, const pc_gen_op *op, int32_t rank_pref, pc_gen_x *x, pc_error *err)
{
    pc_status st = pc_gen_op_draw_x(g, op, rank_pref, x, err);
    if (st != PC_OK) return st;
    pc_gen_value *v = pc_gen_input(g, PC_DTYPE_FLOAT, x->rank, x->dims, x->lo, x->hi, err);
    if (!v) return err->status;
    x->value = v->value;
    return PC_OK;
}

typedef struct grow_ctx {
    pc_gen *g;
    const pc_gen_op *op;
} grow_ctx;

static bool grow_accept(const pc_gen_value *v, void *ctx)
{
    const grow_ctx *c = ctx;
    pc_gen_x x;
    bool ok;
    x_from_pool(v, &x, &ok);
    return ok && pc_gen_op_accepts(c->g, c->op, &x);
}

pc_gen_value *pc_gen_pick_chain(pc_gen *g, pc_gen_accept_fn accept, void *ctx, uint32_t chain_percent)
{
    /* the value 0 chains (the newest candidate, as pc_gen_pick's own 0 does) */
    if (!pc_draw_bool(g->ch, chain_percent >= 100 ? 0 : 100 - chain_percent)) {
        for (uint32_t i = g->n_pool; i-- > g->pick_floor;)
            if (!accept || accept(g->pool[i], ctx)) return g->pool[i];
        return NULL;
    }
    return pc_gen_pick(g, accept, ctx);
}

pc_status pc_gen_op_grow(pc_gen *g, const pc_gen_op *op, uint32_t fresh_percent, uint32_t chain_percent,
                         int32_t rank_pref, pc_value **out, pc_error *err)
{
    *out = NULL;
    grow_ctx gc = {g, op};
    bool fresh = pc_draw_bool(g->ch, fresh_percent);
    pc_gen_value *v = fresh ? NULL : pc_gen_pick_chain(g, grow_accept, &gc, chain_percent);
    pc_gen_x x;
    if (v) {
        bool ok;
        x_from_pool(v, &x, &ok);
    } else {
        pc_status st = pc_gen_op_new_input(g, op, rank_pref, &x, err);
        if (st != PC_OK) return st;
    }
    return pc_gen_op_apply(g, op, &x, out, err);
}
