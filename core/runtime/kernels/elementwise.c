/* Elementwise kernels: unary math and activations, Clip, Shrink, IsNaN/IsInf, the broadcasting binaries
 * (arithmetic, Pow, PRelu, Mod, BitShift, comparisons, logic), the variadic Max/Min/Sum/Mean, Not and
 * Where. (CastLike is Cast's kernel, movement.c.)
 *
 * Floats are computed in float, as ONNX Runtime does (the `runtime` property compares against the reference's
 * double arithmetic with a tolerance), doubles in double, float16 in float rounded back once to nearest even
 * (numpy's way); integers wrap like two's complement hardware, through an unsigned type at least as wide as
 * int so that C sees no signed overflow. NaN propagates everywhere the ONNX reference (numpy) lets it. The
 * per-type loops are generated from the type lists below, so every op has one definition for all types.
 *
 * Broadcasting: the output's axes are merged where every operand steps through them linearly (axes of size
 * 1 dropped), so equal shapes become one flat row, a scalar operand a row with step 0, and [N,C,H,W] against
 * [C,1,1] rows of H*W against one value. A row function then runs the innermost axis as a plain loop with
 * specialised bodies for step 1/1, 1/0 and 0/1. Each output element is computed only from operand elements
 * at its own position when shapes are equal, so out[0]->data may alias in[0]->data. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/runtime/rt_internal.h"

/* ---- checks shared by the prepare functions */

static size_t elem_size(pc_dtype t)
{
    return pc_dtype_bits(t) / 8;
}

/* n_in within [lo, hi], inputs [0, lo) present, output 0 present */
static pc_status need_arity(pc_rt_kernel_ctx *k, uint32_t lo, uint32_t hi)
{
    if (k->n_in < lo && hi == UINT32_MAX)
        return pc_error_set(k->err, PC_ERR_ARITY, "%s takes at least %u inputs, the node has %u",
                            k->node->op_type, lo, k->n_in);
    if (k->n_in < lo || k->n_in > hi)
        return pc_error_set(k->err, PC_ERR_ARITY, "%s takes %u to %u inputs, the node has %u",
                            k->node->op_type, lo, hi, k->n_in);
    for (uint32_t i = 0; i < lo; i++)
        if (!k->in[i])
            return pc_error_set(k->err, PC_ERR_ARITY, "%s: input %u is required", k->node->op_type, i);
    if (k->n_out < 1 || !k->out[0])
        return pc_error_set(k->err, PC_ERR_ARITY, "%s: output 0 is required", k->node->op_type);
    return PC_OK;
}

/* input i has the element type of input 0 (mixed types would need a conversion no row implements) */
static pc_status need_same_dtype(pc_rt_kernel_ctx *k, uint32_t i)
{
    if (k->in[i]->dtype != k->in[0]->dtype)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                            "%s: input %u is %s but input 0 is %s (mixed element types are not implemented)",
                            k->node->op_type, i, pc_dtype_name(k->in[i]->dtype),
                            pc_dtype_name(k->in[0]->dtype));
    return PC_OK;
}

/* t (input i, or the view of it the walk reads) broadcasts (numpy rules) to output 0's shape */
static pc_status need_broadcast(pc_rt_kernel_ctx *k, const pc_rt_tensor *t, uint32_t i)
{
    const pc_rt_tensor *y = k->out[0];
    bool ok = t->rank <= y->rank;
    for (int32_t d = 0; ok && d < t->rank; d++) {
        int64_t td = t->dims[d], yd = y->dims[y->rank - t->rank + d];
        ok = td == yd || td == 1;
    }
    if (!ok)
        return pc_error_set(k->err, PC_ERR_SHAPE,
                            "%s: input %u (rank %d) does not broadcast to the output shape", k->node->op_type,
                            i, (int)t->rank);
    return PC_OK;
}

static bool same_shape(const pc_rt_tensor *a, const pc_rt_tensor *b)
{
    bool same = a->rank == b->rank;
    for (int32_t d = 0; same && d < a->rank; d++)
        same = a->dims[d] == b->dims[d];
    return same;
}

static pc_status need_out_dtype(pc_rt_kernel_ctx *k, pc_dtype want)
{
    if (k->out[0]->dtype != want)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s: output is %s, this kernel writes %s",
                            k->node->op_type, pc_dtype_name(k->out[0]->dtype), pc_dtype_name(want));
    return PC_OK;
}

/* A dtype the row chosen by the table's type filter should never see; prepare refused it already. */
static pc_status unexpected_dtype(pc_rt_kernel_ctx *k, uint32_t i)
{
    return pc_error_set(k->err, PC_ERR_INTERNAL, "%s: no loop for input %u of type %s", k->node->op_type, i,
                        pc_dtype_name(k->in[i]->dtype));
}

/* ---- the broadcast walk */

enum { WALK_MAX = 3 }; /* operands: Where has three */

/* The output's axes after merging, with each operand's element stride per axis (0: broadcast). */
typedef struct walk {
    int32_t rank; /* >= 1 */
    int64_t dims[PC_MAX_RANK];
    int64_t st[WALK_MAX][PC_MAX_RANK];
    uint32_t n_src;
} walk;

/* One row of the innermost axis: n elements, operand j advancing by step[j] (0 or 1) elements. */
typedef void (*row_fn)(const void *const *src, const int64_t *step, void *dst, int64_t n);

static void walk_init(walk *w, const pc_rt_tensor *out, uint32_t n_src, const pc_rt_tensor *const *src)
{
    int64_t full[WALK_MAX][PC_MAX_RANK];
    for (uint32_t j = 0; j < n_src; j++)
        pc_rt_broadcast_strides(src[j], out, full[j]);
    w->n_src = n_src;
    w->rank = 0;
    for (int32_t d = 0; d < out->rank; d++) {
        int64_t n = out->dims[d];
        if (n == 1) continue; /* moves no operand */
        if (w->rank > 0) {
            /* axis d continues the previous merged axis p when p's stride is exactly d's stride * d's size
             * for every operand: offsets stay linear in the merged index */
            int32_t p = w->rank - 1;
            bool merge = true;
            for (uint32_t j = 0; j < n_src; j++)
                merge = merge && w->st[j][p] == full[j][d] * n;
            if (merge) {
                w->dims[p] *= n;
                for (uint32_t j = 0; j < n_src; j++)
                    w->st[j][p] = full[j][d];
                continue;
            }
        }
        w->dims[w->rank] = n;
        for (uint32_t j = 0; j < n_src; j++)
            w->st[j][w->rank] = full[j][d];
        w->rank++;
    }
    if (w->rank == 0) { /* a single element */
        w->rank = 1;
        w->dims[0] = 1;
        for (uint32_t j = 0; j < n_src; j++)
            w->st[j][0] = 0;
    }
}

/* Runs `row` over rows [r_lo, r_hi) of the output, the outer axes walked by an odometer; with
 * one row (rows == 1) over its elements [e_lo, e_hi) instead. */
typedef struct walk_job {
    const walk *w;
    const void *const *src;
    const size_t *src_size;
    void *dst;
    size_t dst_size;
    row_fn row;
    uint64_t rows;
} walk_job;

static void walk_range(void *arg, int64_t lo, int64_t hi, int part)
{
    (void)part;
    const walk_job *j = arg;
    const walk *w = j->w;
    int32_t last = w->rank - 1;
    int64_t inner = w->dims[last], step[WALK_MAX], off[WALK_MAX] = {0}, c[PC_MAX_RANK] = {0};
    const void *p[WALK_MAX];
    for (uint32_t s = 0; s < w->n_src; s++)
        step[s] = w->st[s][last];
    if (j->rows == 1) { /* elements lo..hi of the one row */
        for (uint32_t s = 0; s < w->n_src; s++)
            p[s] = (const char *)j->src[s] + (size_t)(lo * step[s]) * j->src_size[s];
        j->row(p, step, (char *)j->dst + (size_t)lo * j->dst_size, hi - lo);
        return;
    }
    /* the odometer at row lo */
    int64_t r = lo;
    for (int32_t d = last - 1; d >= 0; d--) {
        c[d] = r % w->dims[d];
        r /= w->dims[d];
        for (uint32_t s = 0; s < w->n_src; s++)
            off[s] += c[d] * w->st[s][d];
    }
    char *y = (char *)j->dst + (size_t)lo * (size_t)inner * j->dst_size;
    for (int64_t rr = lo; rr < hi; rr++) {
        for (uint32_t s = 0; s < w->n_src; s++)
            p[s] = (const char *)j->src[s] + (size_t)off[s] * j->src_size[s];
        j->row(p, step, y, inner);
        y += (size_t)inner * j->dst_size;
        for (int32_t d = last - 1; d >= 0; d--) {
            for (uint32_t s = 0; s < w->n_src; s++)
                off[s] += w->st[s][d];
            if (++c[d] < w->dims[d]) break;
            for (uint32_t s = 0; s < w->n_src; s++)
                off[s] -= w->st[s][d] * w->dims[d];
            c[d] = 0;
        }
    }
}

/* Every row of the output (out->n > 0), on the session's threads from 64K elements: whole rows per chunk, or
 * pieces of the one row when the walk merged everything into one. */
enum { WALK_GRAIN = 32768 };

static void walk_run(const pc_rt_kernel_ctx *k, const walk *w, const void *const *src, const size_t *src_size,
                     void *dst, size_t dst_size, row_fn row)
{
    int64_t inner = w->dims[w->rank - 1];
    uint64_t rows = 1;
    for (int32_t d = 0; d < w->rank - 1; d++)
        rows *= (uint64_t)w->dims[d];
    walk_job j = {w, src, src_size, dst, dst_size, row, rows};
    int64_t n = rows == 1 ? inner : (int64_t)rows;
    int64_t grain = rows == 1 ? WALK_GRAIN : (inner >= WALK_GRAIN ? 1 : WALK_GRAIN / inner);
    if (!k->pool || (uint64_t)inner * rows < 2 * WALK_GRAIN)
        walk_range(&j, 0, n, 0);
    else
        pc_rt_parallel_for(k, n, grain, walk_range, &j);
}

/* out = f(a, b) with a and b broadcast to out's shape */
static void walk2(const pc_rt_kernel_ctx *k, pc_rt_tensor *out, const pc_rt_tensor *a, const pc_rt_tensor *b,
                  row_fn row)
{
    walk w;
    const pc_rt_tensor *src[2] = {a, b};
    walk_init(&w, out, 2, src);
    const void *data[2] = {a->data, b->data};
    size_t sizes[2] = {elem_size(a->dtype), elem_size(b->dtype)};
    walk_run(k, &w, data, sizes, out->data, elem_size(out->dtype), row);
}

/* ---- element types */

/* Row tables are indexed by dtype; bfloat16 has the largest number this file handles. */
#define NDT (PC_DTYPE_BFLOAT16 + 1)

#define RT_FLT  (RT_F32 | RT_F64 | RT_F16)
#define RT_SINT (RT_I8 | RT_I16 | RT_I32 | RT_I64)
#define RT_UINT (RT_U8 | RT_U16 | RT_U32 | RT_U64)

/* float16 is computed in float and rounded back once: float's 24 bits are enough (>= 2 * 11 + 2) that the
 * double rounding of + - * / through float equals rounding the exact result. */
static inline float h2f(uint16_t h)
{
    return (float)pc_half_to_double(h);
}
static inline uint16_t f2h(double v)
{
    return pc_half_from_double(v);
}
#define AS_IS(x) (x)

/* the float or the double libm function by the argument's type: float math stays in float */
#define GM1(fn, x) _Generic((x), float : fn##f, default : fn)(x)
/* erf: float through the vectorizable polynomial (rt_internal.h), double through libm */
#define ERF(x)        _Generic((x), float : pc_rt_erff, default : erf)(x)
#define GM2(fn, x, y) _Generic((x), float : fn##f, default : fn)((x), (y))

/* float -> integer truncates toward zero through int64, saturating there (NaN gives 0): the reference's and
 * Cast's rule, so that no out-of-range conversion (UB in C) happens */
static inline int64_t sat_i64(double v)
{
    if (v != v) return 0;
    if (v >= 0x1p63) return INT64_MAX;
    if (v <= -0x1p63) return INT64_MIN;
    return (int64_t)v;
}
static inline uint64_t sat_u64(double v)
{
    if (v >= 0x1p64) return UINT64_MAX;
    if (v > 0) return (uint64_t)v;
    return (uint64_t)sat_i64(v);
}

/* The type lists. Floating: X(sfx, DT, T storage, C computed in, LD storage -> C, ST C -> storage).
 * Integers: X(sfx, DT, T, W, LO, HI) with W the unsigned type wrapping arithmetic runs in (at least unsigned
 * int, so that narrow operands are not promoted to a signed int that could overflow). */
#define FLT_TYPES(X)                                                                                         \
    X(f32, FLOAT, float, float, AS_IS, (float))                                                              \
    X(f64, DOUBLE, double, double, AS_IS, (double))                                                          \
    X(f16, FLOAT16, uint16_t, float, h2f, f2h)
#define SINT_TYPES(X)                                                                                        \
    X(i8, INT8, int8_t, uint32_t, INT8_MIN, INT8_MAX)                                                        \
    X(i16, INT16, int16_t, uint32_t, INT16_MIN, INT16_MAX)                                                   \
    X(i32, INT32, int32_t, uint32_t, INT32_MIN, INT32_MAX)                                                   \
    X(i64, INT64, int64_t, uint64_t, INT64_MIN, INT64_MAX)
#define UINT_TYPES(X)                                                                                        \
    X(u8, UINT8, uint8_t, uint32_t, 0, UINT8_MAX)                                                            \
    X(u16, UINT16, uint16_t, uint32_t, 0, UINT16_MAX)                                                        \
    X(u32, UINT32, uint32_t, uint32_t, 0, UINT32_MAX)                                                        \
    X(u64, UINT64, uint64_t, uint64_t, 0, UINT64_MAX)

/* ---- row functions */

/* A binary row: EXPR computes one element from `a` = LA(element of A, type TA) of type CA and `b` likewise;
 * SY stores the result as TY. */
#define ROW2G(name, TA, CA, LA, TB, CB, LB, TY, SY, EXPR)                                                    \
    static void name(const void *const *src, const int64_t *step, void *dst, int64_t n)                      \
    {                                                                                                        \
        const TA *pa = src[0];                                                                               \
        const TB *pb = src[1];                                                                               \
        TY *y = dst;                                                                                         \
        if (step[0] && step[1]) {                                                                            \
            for (int64_t i = 0; i < n; i++) {                                                                \
                const CA a = LA(pa[i]);                                                                      \
                const CB b = LB(pb[i]);                                                                      \
                y[i] = SY(EXPR);                                                                             \
            }                                                                                                \
        } else if (step[0]) {                                                                                \
            const CB b = LB(pb[0]);                                                                          \
            for (int64_t i = 0; i < n; i++) {                                                                \
                const CA a = LA(pa[i]);                                                                      \
                y[i] = SY(EXPR);                                                                             \
            }                                                                                                \
        } else if (step[1]) {                                                                                \
            const CA a = LA(pa[0]);                                                                          \
            for (int64_t i = 0; i < n; i++) {                                                                \
                const CB b = LB(pb[i]);                                                                      \
                y[i] = SY(EXPR);                                                                             \
            }                                                                                                \
        } else { /* both scalar along the row: n is 1 (axes of size 1 are dropped) */                        \
            const CA a = LA(pa[0]);                                                                          \
            const CB b = LB(pb[0]);                                                                          \
            const TY v = SY(EXPR);                                                                           \
            for (int64_t i = 0; i < n; i++)                                                                  \
                y[i] = v;                                                                                    \
        }                                                                                                    \
    }
#define ROW2(name, TA, TB, TY, EXPR) ROW2G(name, TA, TA, AS_IS, TB, TB, AS_IS, TY, (TY), EXPR)

/* a NaN on either side wins, as numpy.maximum/minimum */
#define MAX_F(a, b) (((a) >= (b) || (a) != (a)) ? (a) : (b))
#define MIN_F(a, b) (((a) <= (b) || (a) != (a)) ? (a) : (b))
#define MAX_I(a, b) ((a) >= (b) ? (a) : (b))
#define MIN_I(a, b) ((a) <= (b) ? (a) : (b))

/* comparisons, the same for every type */
#define COMPARE_ROWS(sfx, T, C, LD)                                                                          \
    ROW2G(eq_##sfx, T, C, LD, T, C, LD, uint8_t, (uint8_t), a == b)                                          \
    ROW2G(lt_##sfx, T, C, LD, T, C, LD, uint8_t, (uint8_t), a < b)                                           \
    ROW2G(le_##sfx, T, C, LD, T, C, LD, uint8_t, (uint8_t), a <= b)                                          \
    ROW2G(gt_##sfx, T, C, LD, T, C, LD, uint8_t, (uint8_t), a > b)                                           \
    ROW2G(ge_##sfx, T, C, LD, T, C, LD, uint8_t, (uint8_t), a >= b)

/* Mod of floats is C's fmod (fmod = 1; fmod = 0 is refused for floats, as the spec says) */
#define FLT_ROWS(sfx, DT, T, C, LD, ST)                                                                      \
    ROW2G(add_##sfx, T, C, LD, T, C, LD, T, ST, a + b)                                                       \
    ROW2G(sub_##sfx, T, C, LD, T, C, LD, T, ST, a - b)                                                       \
    ROW2G(mul_##sfx, T, C, LD, T, C, LD, T, ST, a *b)                                                        \
    ROW2G(div_##sfx, T, C, LD, T, C, LD, T, ST, a / b)                                                       \
    ROW2G(max_##sfx, T, C, LD, T, C, LD, T, ST, MAX_F(a, b))                                                 \
    ROW2G(min_##sfx, T, C, LD, T, C, LD, T, ST, MIN_F(a, b))                                                 \
    ROW2G(modt_##sfx, T, C, LD, T, C, LD, T, ST, GM2(fmod, a, b))                                            \
    ROW2G(prelu_##sfx, T, C, LD, T, C, LD, T, ST, a < 0 ? a * b : a)                                         \
    COMPARE_ROWS(sfx, T, C, LD)
FLT_TYPES(FLT_ROWS)

/* Integer Mod with fmod = 0 takes the divisor's sign (Python's %); the remainder and the divisor have
 * opposite signs when it is corrected, so r + b cannot overflow. b == -1 separately: INT_MIN % -1 overflows
 * in C; the remainder is 0. */
#define MOD_FLOOR_FN(sfx, DT, T, W, LO, HI)                                                                  \
    static inline T mod_floor_##sfx(T a, T b)                                                                \
    {                                                                                                        \
        T r = b == -1 ? 0 : (T)(a % b);                                                                      \
        return r != 0 && (r < 0) != (b < 0) ? (T)(r + b) : r;                                                \
    }
SINT_TYPES(MOD_FLOOR_FN)

/* Signed integers: b == -1 separately in Div, INT_MIN / -1 overflows in C; it wraps to INT_MIN as in the
 * reference. */
#define SINT_ROWS(sfx, DT, T, W, LO, HI)                                                                     \
    ROW2(add_##sfx, T, T, T, (W)a + (W)b)                                                                    \
    ROW2(sub_##sfx, T, T, T, (W)a - (W)b)                                                                    \
    ROW2(mul_##sfx, T, T, T, (W)a *(W)b)                                                                     \
    ROW2(div_##sfx, T, T, T, b == -1 ? (T)((W)0 - (W)a) : (T)(a / b))                                        \
    ROW2(max_##sfx, T, T, T, MAX_I(a, b))                                                                    \
    ROW2(min_##sfx, T, T, T, MIN_I(a, b))                                                                    \
    ROW2(modt_##sfx, T, T, T, b == -1 ? 0 : a % b)                                                           \
    ROW2(modf_##sfx, T, T, T, mod_floor_##sfx(a, b))                                                         \
    ROW2(prelu_##sfx, T, T, T, a < 0 ? (T)((W)a * (W)b) : a)                                                 \
    COMPARE_ROWS(sfx, T, T, AS_IS)
SINT_TYPES(SINT_ROWS)

/* Unsigned integers: PRelu is the identity; a shift by the width or more gives 0 (C leaves it undefined) */
#define UINT_ROWS(sfx, DT, T, W, LO, HI)                                                                     \
    ROW2(add_##sfx, T, T, T, (W)a + (W)b)                                                                    \
    ROW2(sub_##sfx, T, T, T, (W)a - (W)b)                                                                    \
    ROW2(mul_##sfx, T, T, T, (W)a *(W)b)                                                                     \
    ROW2(div_##sfx, T, T, T, a / b)                                                                          \
    ROW2(max_##sfx, T, T, T, MAX_I(a, b))                                                                    \
    ROW2(min_##sfx, T, T, T, MIN_I(a, b))                                                                    \
    ROW2(modt_##sfx, T, T, T, a % b)                                                                         \
    ROW2(prelu_##sfx, T, T, T, ((void)b, a))                                                                 \
    ROW2(shl_##sfx, T, T, T, b >= sizeof(T) * 8 ? 0 : (uint64_t)a << b)                                      \
    ROW2(shr_##sfx, T, T, T, b >= sizeof(T) * 8 ? 0 : a >> b)                                                \
    COMPARE_ROWS(sfx, T, T, AS_IS)
UINT_TYPES(UINT_ROWS)

ROW2(eq_b8, uint8_t, uint8_t, uint8_t, (a != 0) == (b != 0))
ROW2(and_b8, uint8_t, uint8_t, uint8_t, a &&b)
ROW2(or_b8, uint8_t, uint8_t, uint8_t, a || b)
ROW2(xor_b8, uint8_t, uint8_t, uint8_t, (a != 0) != (b != 0))

/* Integer powers as the reference and numpy compute them: wrapping multiplication by squaring; a negative
 * exponent gives 1 / a^-e truncated, 0 except for the bases 1 and -1. */
static inline int64_t ipow(int64_t a, int64_t e)
{
    if (e < 0) return a == 1 ? 1 : a == -1 ? (e % 2 ? -1 : 1) : 0;
    uint64_t r = 1, base = (uint64_t)a;
    for (uint64_t m = (uint64_t)e; m; m >>= 1) {
        if (m & 1) r *= base;
        base *= base;
    }
    return (int64_t)r;
}

/* Pow by base kind and exponent kind (F32: float, FLT: double or float16, INT: any integer). float ** float
 * stays in float; other float bases go through double, exact for every exponent up to 2^53 (float would turn
 * a large odd exponent even, and with it the sign of a negative base); an integer base with a float exponent
 * truncates the double result as Cast does. */
#define POW_F32_F32(a, b) powf(a, b)
#define POW_F32_FLT(a, b) pow((double)(a), (double)(b))
#define POW_F32_INT(a, b) pow((double)(a), (double)(b))
#define POW_FLT_F32(a, b) pow((double)(a), (double)(b))
#define POW_FLT_FLT(a, b) pow((double)(a), (double)(b))
#define POW_FLT_INT(a, b) pow((double)(a), (double)(b))
#define POW_INT_F32(a, b) sat_i64(pow((double)(a), (double)(b)))
#define POW_INT_FLT(a, b) sat_i64(pow((double)(a), (double)(b)))
#define POW_INT_INT(a, b) ipow((int64_t)(a), (int64_t)(b))

/* the bases Pow takes (ONNX: float16, float, double, int32, int64), X(bs, BDT, BT, BC, BLD, BST, BK) */
#define POW_BASES(X)                                                                                         \
    X(f32, FLOAT, float, float, AS_IS, (float), F32)                                                         \
    X(f64, DOUBLE, double, double, AS_IS, (double), FLT)                                                     \
    X(f16, FLOAT16, uint16_t, float, h2f, f2h, FLT)                                                          \
    X(i32, INT32, int32_t, int32_t, AS_IS, (int32_t), INT)                                                   \
    X(i64, INT64, int64_t, int64_t, AS_IS, (int64_t), INT)
/* every numeric exponent, for one base */
#define POW_EXPS(X, bs, BDT, BT, BC, BLD, BST, BK)                                                           \
    X(bs, BDT, BT, BC, BLD, BST, BK, f32, FLOAT, float, float, AS_IS, F32)                                   \
    X(bs, BDT, BT, BC, BLD, BST, BK, f64, DOUBLE, double, double, AS_IS, FLT)                                \
    X(bs, BDT, BT, BC, BLD, BST, BK, f16, FLOAT16, uint16_t, float, h2f, FLT)                                \
    X(bs, BDT, BT, BC, BLD, BST, BK, i8, INT8, int8_t, int8_t, AS_IS, INT)                                   \
    X(bs, BDT, BT, BC, BLD, BST, BK, i16, INT16, int16_t, int16_t, AS_IS, INT)                               \
    X(bs, BDT, BT, BC, BLD, BST, BK, i32, INT32, int32_t, int32_t, AS_IS, INT)                               \
    X(bs, BDT, BT, BC, BLD, BST, BK, i64, INT64, int64_t, int64_t, AS_IS, INT)                               \
    X(bs, BDT, BT, BC, BLD, BST, BK, u8, UINT8, uint8_t, uint8_t, AS_IS, INT)                                \
    X(bs, BDT, BT, BC, BLD, BST, BK, u16, UINT16, uint16_t, uint16_t, AS_IS, INT)                            \
    X(bs, BDT, BT, BC, BLD, BST, BK, u32, UINT32, uint32_t, uint32_t, AS_IS, INT)                            \
    X(bs, BDT, BT, BC, BLD, BST, BK, u64, UINT64, uint64_t, uint64_t, AS_IS, INT)
#define POW_ROW(bs, BDT, BT, BC, BLD, BST, BK, es, EDT, ET, EC, ELD, EK)                                     \
    ROW2G(pow_##bs##_##es, BT, BC, BLD, ET, EC, ELD, BT, BST, POW_##BK##_##EK(a, b))
#define POW_ROWS_OF(bs, BDT, BT, BC, BLD, BST, BK) POW_EXPS(POW_ROW, bs, BDT, BT, BC, BLD, BST, BK)
POW_BASES(POW_ROWS_OF)

#define POW_ENTRY(bs, BDT, BT, BC, BLD, BST, BK, es, EDT, ET, EC, ELD, EK)                                   \
    [PC_DTYPE_##BDT][PC_DTYPE_##EDT] = pow_##bs##_##es,
#define POW_ENTRIES_OF(bs, BDT, BT, BC, BLD, BST, BK) POW_EXPS(POW_ENTRY, bs, BDT, BT, BC, BLD, BST, BK)
static const row_fn pow_rows[NDT][NDT] = {POW_BASES(POW_ENTRIES_OF)};

/* A binary op's rows by the element type of input 0. */
typedef struct row_set {
    row_fn f[NDT];
} row_set;

static row_fn row_for(const row_set *s, pc_dtype t)
{
    return t > PC_DTYPE_UNDEFINED && t < NDT ? s->f[t] : NULL;
}

#define E_FLT(op) [PC_DTYPE_FLOAT] = op##_f32, [PC_DTYPE_DOUBLE] = op##_f64, [PC_DTYPE_FLOAT16] = op##_f16
#define E_SINT(op)                                                                                           \
    [PC_DTYPE_INT8] = op##_i8, [PC_DTYPE_INT16] = op##_i16, [PC_DTYPE_INT32] = op##_i32,                     \
    [PC_DTYPE_INT64] = op##_i64
#define E_UINT(op)                                                                                           \
    [PC_DTYPE_UINT8] = op##_u8, [PC_DTYPE_UINT16] = op##_u16, [PC_DTYPE_UINT32] = op##_u32,                  \
    [PC_DTYPE_UINT64] = op##_u64
#define E_NUM(op)   E_FLT(op), E_SINT(op), E_UINT(op)
#define ROW_SET(op) static const row_set op##_rows = {{E_NUM(op)}};
ROW_SET(add)
ROW_SET(sub)
ROW_SET(mul)
ROW_SET(div)
ROW_SET(max)
ROW_SET(min)
ROW_SET(modt)
ROW_SET(prelu)
ROW_SET(lt)
ROW_SET(le)
ROW_SET(gt)
ROW_SET(ge)
static const row_set eq_rows = {{E_NUM(eq), [PC_DTYPE_BOOL] = eq_b8}};
/* unsigned remainders have no sign to choose */
static const row_set modf_rows = {{E_SINT(modf), E_UINT(modt)}};
static const row_set shl_rows = {{E_UINT(shl)}};
static const row_set shr_rows = {{E_UINT(shr)}};
static const row_set and_rows = {{[PC_DTYPE_BOOL] = and_b8}};
static const row_set or_rows = {{[PC_DTYPE_BOOL] = or_b8}};
static const row_set xor_rows = {{[PC_DTYPE_BOOL] = xor_b8}};

/* ---- unary */

static pc_status unary_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    pc_status st = need_arity(k, 1, 1);
    if (st != PC_OK || (st = need_out_dtype(k, k->in[0]->dtype)) != PC_OK) return st;
    if (k->out[0]->n != k->in[0]->n)
        return pc_error_set(k->err, PC_ERR_SHAPE, "%s: output has %llu elements, input %llu",
                            k->node->op_type, (unsigned long long)k->out[0]->n,
                            (unsigned long long)k->in[0]->n);
    return PC_OK;
}

/* IsNaN, IsInf: a bool output */
static pc_status predicate_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    pc_status st = need_arity(k, 1, 1);
    if (st != PC_OK || (st = need_out_dtype(k, PC_DTYPE_BOOL)) != PC_OK) return st;
    if (k->out[0]->n != k->in[0]->n)
        return pc_error_set(k->err, PC_ERR_SHAPE, "%s: output has %llu elements, input %llu",
                            k->node->op_type, (unsigned long long)k->out[0]->n,
                            (unsigned long long)k->in[0]->n);
    return PC_OK;
}

/* y[i] = ST(EXPR) of v = LD(x[i]) (of type C), x of type TS and y of type TY */
#define UNARY_LOOPG(TS, C, LD, ST, TY, EXPR)                                                                 \
    do {                                                                                                     \
        const TS *x = k->in[0]->data;                                                                        \
        TY *y = k->out[0]->data;                                                                             \
        for (uint64_t i = 0, n = k->out[0]->n; i < n; i++) {                                                 \
            const C v = LD(x[i]);                                                                            \
            y[i] = ST(EXPR);                                                                                 \
        }                                                                                                    \
    } while (0)
#define UNARY_LOOP(T, EXPR) UNARY_LOOPG(T, T, AS_IS, (T), T, EXPR)

/* the float, double and float16 cases of a dtype switch: EXPR of v (float or double) */
#define FLT_CASES(EXPR)                                                                                      \
    case PC_DTYPE_FLOAT:                                                                                     \
        UNARY_LOOPG(float, float, AS_IS, (float), float, EXPR);                                              \
        return PC_OK;                                                                                        \
    case PC_DTYPE_DOUBLE:                                                                                    \
        UNARY_LOOPG(double, double, AS_IS, (double), double, EXPR);                                          \
        return PC_OK;                                                                                        \
    case PC_DTYPE_FLOAT16:                                                                                   \
        UNARY_LOOPG(uint16_t, float, h2f, f2h, uint16_t, EXPR);                                              \
        return PC_OK;
/* the same with a bool output */
#define FLT_BOOL_CASES(EXPR)                                                                                 \
    case PC_DTYPE_FLOAT:                                                                                     \
        UNARY_LOOPG(float, float, AS_IS, (uint8_t), uint8_t, EXPR);                                          \
        return PC_OK;                                                                                        \
    case PC_DTYPE_DOUBLE:                                                                                    \
        UNARY_LOOPG(double, double, AS_IS, (uint8_t), uint8_t, EXPR);                                        \
        return PC_OK;                                                                                        \
    case PC_DTYPE_FLOAT16:                                                                                   \
        UNARY_LOOPG(uint16_t, float, h2f, (uint8_t), uint8_t, EXPR);                                         \
        return PC_OK;

/* A floating-point unary kernel (float, double, float16); PARAMS declares the attributes EXPR reads. EXPR
 * calls libm through GM1 so that float stays float. */
#define UNARY_FLT(name, PARAMS, EXPR)                                                                        \
    PC_RT_WIDE static pc_status name##_run(pc_rt_kernel_ctx *k)                                              \
    {                                                                                                        \
        PARAMS                                                                                               \
        switch (k->in[0]->dtype) {                                                                           \
            FLT_CASES(EXPR)                                                                                  \
        default:                                                                                             \
            return unexpected_dtype(k, 0);                                                                   \
        }                                                                                                    \
    }

#define ATTR(name, fallback) const float name = pc_node_attr_float(k->node, #name, fallback);

/* [0, 1], NaN kept */
#define CLAMP01(t) ((t) < 0.0f ? 0.0f : (t) > 1.0f ? 1.0f : (t))

/* -0 gives +0 and NaN stays NaN (fmaxf would give 0) */
#define RELU_F(v) ((v) > 0.0f ? (v) : (v) <= 0.0f ? 0.0f : (v))
UNARY_FLT(sigmoid, , 1.0f / (1.0f + GM1(exp, -v)))
UNARY_FLT(tanh, , GM1(tanh, v))
UNARY_FLT(exp, , GM1(exp, v))
UNARY_FLT(log, , GM1(log, v))
UNARY_FLT(sqrt, , GM1(sqrt, v))
UNARY_FLT(reciprocal, , 1.0f / v)
UNARY_FLT(floor, , GM1(floor, v))
UNARY_FLT(ceil, , GM1(ceil, v))
UNARY_FLT(erf, , ERF(v))
UNARY_FLT(cos, , GM1(cos, v))
UNARY_FLT(sin, , GM1(sin, v))
UNARY_FLT(tan, , GM1(tan, v))
UNARY_FLT(acos, , GM1(acos, v))
UNARY_FLT(asin, , GM1(asin, v))
UNARY_FLT(atan, , GM1(atan, v))
UNARY_FLT(sinh, , GM1(sinh, v))
UNARY_FLT(cosh, , GM1(cosh, v))
UNARY_FLT(asinh, , GM1(asinh, v))
UNARY_FLT(acosh, , GM1(acosh, v))
UNARY_FLT(atanh, , GM1(atanh, v))
/* log(1 + e^x) without overflow for large x */
UNARY_FLT(softplus, , GM1(log1p, GM1(exp, -GM1(fabs, v))) + (v > 0.0f ? v : 0.0f))
UNARY_FLT(softsign, , v / (1.0f + GM1(fabs, v)))
UNARY_FLT(elu, ATTR(alpha, 1.0f), v < 0.0f ? alpha * (GM1(exp, v) - 1.0f) : v)
UNARY_FLT(celu, ATTR(alpha, 1.0f), v > 0.0f ? v : alpha * (GM1(exp, v / alpha) - 1.0f))
UNARY_FLT(leaky_relu, ATTR(alpha, 0.01f), v < 0.0f ? alpha * v : v)
UNARY_FLT(thresholded_relu, ATTR(alpha, 1.0f), v > alpha ? v : 0.0f)
UNARY_FLT(hard_sigmoid, ATTR(alpha, 0.2f) ATTR(beta, 0.5f), CLAMP01(alpha *v + beta))
UNARY_FLT(hard_swish, , v *CLAMP01(v / 6.0f + 0.5f))
/* the defaults are the float32 values of the spec's constants */
UNARY_FLT(selu, ATTR(alpha, 1.67326319217681884765625f) ATTR(gamma, 1.05070102214813232421875f),
          gamma *(v <= 0.0f ? alpha * (GM1(exp, v) - 1.0f) : v))
/* Gelu: the exact erf form (ai.onnx 20's default and com.microsoft's), or approximate = "tanh"; one loop
 * each, so the erf form's loop (no libm call) vectorizes */
UNARY_FLT(gelu_erf, , 0.5f * v * (1.0f + ERF(v * 0.70710678118654752f)))
UNARY_FLT(gelu_tanh, , 0.5f * v * (1.0f + GM1(tanh, 0.7978845608028654f * (v + 0.044715f * v * v * v))))
static pc_status gelu_run(pc_rt_kernel_ctx *k)
{
    return strcmp(pc_node_attr_string(k->node, "approximate", "none"), "tanh") == 0 ? gelu_tanh_run(k)
                                                                                    : gelu_erf_run(k);
}
/* nearbyint rounds half to even in the default rounding mode */
UNARY_FLT(round, , GM1(nearbyint, v))

#define RELU_S(sfx, DT, T, W, LO, HI)                                                                        \
    case PC_DTYPE_##DT:                                                                                      \
        UNARY_LOOP(T, v > 0 ? v : 0);                                                                        \
        return PC_OK;
static pc_status relu_run(pc_rt_kernel_ctx *k)
{
    switch (k->in[0]->dtype) {
        FLT_CASES(RELU_F(v))
        SINT_TYPES(RELU_S)
    default:
        return unexpected_dtype(k, 0);
    }
}

#define NEG_S(sfx, DT, T, W, LO, HI)                                                                         \
    case PC_DTYPE_##DT:                                                                                      \
        UNARY_LOOP(T, (W)0 - (W)v);                                                                          \
        return PC_OK;
static pc_status neg_run(pc_rt_kernel_ctx *k)
{
    switch (k->in[0]->dtype) {
        FLT_CASES(-v)
        SINT_TYPES(NEG_S)
    default:
        return unexpected_dtype(k, 0);
    }
}

#define ABS_S(sfx, DT, T, W, LO, HI)                                                                         \
    case PC_DTYPE_##DT:                                                                                      \
        UNARY_LOOP(T, v < 0 ? (W)0 - (W)v : (W)v);                                                           \
        return PC_OK;
#define COPY_U(sfx, DT, T, W, LO, HI)                                                                        \
    case PC_DTYPE_##DT:                                                                                      \
        UNARY_LOOP(T, v);                                                                                    \
        return PC_OK;
static pc_status abs_run(pc_rt_kernel_ctx *k)
{
    switch (k->in[0]->dtype) {
        FLT_CASES(GM1(fabs, v))
        SINT_TYPES(ABS_S)
        UINT_TYPES(COPY_U)
    default:
        return unexpected_dtype(k, 0);
    }
}

#define SIGN_S(sfx, DT, T, W, LO, HI)                                                                        \
    case PC_DTYPE_##DT:                                                                                      \
        UNARY_LOOP(T, v > 0 ? 1 : v < 0 ? -1 : 0);                                                           \
        return PC_OK;
#define SIGN_U(sfx, DT, T, W, LO, HI)                                                                        \
    case PC_DTYPE_##DT:                                                                                      \
        UNARY_LOOP(T, v > 0);                                                                                \
        return PC_OK;
static pc_status sign_run(pc_rt_kernel_ctx *k)
{
    switch (k->in[0]->dtype) {
        FLT_CASES(v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v)
        SINT_TYPES(SIGN_S)
        UINT_TYPES(SIGN_U)
    default:
        return unexpected_dtype(k, 0);
    }
}

/* Shrink on integers goes through double and back as the reference (and numpy with a float bias) do */
#define SHRINK_D(v) ((v) < -lambd ? (v) + bias : (v) > lambd ? (v)-bias : 0.0)
#define SHRINK_S(sfx, DT, T, W, LO, HI)                                                                      \
    case PC_DTYPE_##DT:                                                                                      \
        UNARY_LOOP(T, (W)(uint64_t)sat_i64(SHRINK_D((double)v)));                                            \
        return PC_OK;
#define SHRINK_U(sfx, DT, T, W, LO, HI)                                                                      \
    case PC_DTYPE_##DT:                                                                                      \
        UNARY_LOOP(T, (W)sat_u64(SHRINK_D((double)v)));                                                      \
        return PC_OK;
static pc_status shrink_run(pc_rt_kernel_ctx *k)
{
    const double lambd = pc_node_attr_float(k->node, "lambd", 0.5f),
                 bias = pc_node_attr_float(k->node, "bias", 0.0f);
    switch (k->in[0]->dtype) {
        FLT_CASES(SHRINK_D(v))
        SINT_TYPES(SHRINK_S)
        UINT_TYPES(SHRINK_U)
    default:
        return unexpected_dtype(k, 0);
    }
}

static pc_status isnan_run(pc_rt_kernel_ctx *k)
{
    switch (k->in[0]->dtype) {
        FLT_BOOL_CASES(v != v)
    default:
        return unexpected_dtype(k, 0);
    }
}

static pc_status isinf_run(pc_rt_kernel_ctx *k)
{
    const bool neg = pc_node_attr_int(k->node, "detect_negative", 1) != 0,
               pos = pc_node_attr_int(k->node, "detect_positive", 1) != 0;
    switch (k->in[0]->dtype) {
        FLT_BOOL_CASES(isinf(v) && (v > 0 ? pos : neg))
    default:
        return unexpected_dtype(k, 0);
    }
}

static pc_status not_run(pc_rt_kernel_ctx *k)
{
    UNARY_LOOP(uint8_t, v == 0);
    return PC_OK;
}

/* ---- Clip */

/* Bounds: attributes min/max before opset 11; optional scalar inputs 1 and 2 from 11 (integer types from 12).
 * An absent bound is the type's lowest/highest finite value, as the spec and ONNX Runtime say (so Clip(+inf)
 * without max is FLT_MAX), not +-inf. */
static pc_status clip_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    pc_status st = need_arity(k, 1, k->opset < 11 ? 1 : 3);
    if (st != PC_OK || (st = need_out_dtype(k, k->in[0]->dtype)) != PC_OK) return st;
    if (k->out[0]->n != k->in[0]->n)
        return pc_error_set(k->err, PC_ERR_SHAPE, "Clip: output has %llu elements, input %llu",
                            (unsigned long long)k->out[0]->n, (unsigned long long)k->in[0]->n);
    for (uint32_t i = 1; i < k->n_in; i++) {
        if (!k->in[i]) continue;
        if ((st = need_same_dtype(k, i)) != PC_OK) return st;
        if (k->in[i]->n != 1)
            return pc_error_set(k->err, PC_ERR_SHAPE,
                                "Clip: input %u (%s) must be a scalar, it has %llu elements", i,
                                i == 1 ? "min" : "max", (unsigned long long)k->in[i]->n);
    }
    return PC_OK;
}

/* bound input i read with LD, or the fallback when omitted */
#define CLIP_BOUND(T, LD, i, fallback)                                                                       \
    (k->n_in > (i) && k->in[i] ? LD(*(const T *)k->in[i]->data) : (fallback))

/* y = min(max(x, lo), hi): lo > hi gives hi everywhere, hence lo lowered to hi first; NaN in x stays (both
 * compares are false) */
#define CLIP_LOOP(TS, C, LD, ST, lo, hi)                                                                     \
    do {                                                                                                     \
        const C lo_ = (lo) > (hi) ? (hi) : (lo), hi_ = (hi);                                                 \
        UNARY_LOOPG(TS, C, LD, ST, TS, v<lo_ ? lo_ : v> hi_ ? hi_ : v);                                      \
    } while (0)

/* a floating type: attributes before opset 11 (a double's default bound is float's, the attribute's type) */
#define CLIP_FLT(TS, C, LD, ST, BIG)                                                                         \
    do {                                                                                                     \
        C lo, hi;                                                                                            \
        if (k->opset < 11) {                                                                                 \
            lo = pc_node_attr_float(k->node, "min", -FLT_MAX);                                               \
            hi = pc_node_attr_float(k->node, "max", FLT_MAX);                                                \
        } else {                                                                                             \
            lo = CLIP_BOUND(TS, LD, 1, -(BIG));                                                              \
            hi = CLIP_BOUND(TS, LD, 2, (BIG));                                                               \
        }                                                                                                    \
        if (lo != lo || hi != hi) { /* a NaN bound makes every element NaN, as in the reference */           \
            TS *y = k->out[0]->data;                                                                         \
            for (uint64_t i = 0; i < k->out[0]->n; i++)                                                      \
                y[i] = ST(NAN);                                                                              \
        } else {                                                                                             \
            CLIP_LOOP(TS, C, LD, ST, lo, hi);                                                                \
        }                                                                                                    \
    } while (0)

#define CLIP_INT(sfx, DT, T, W, LO, HI)                                                                      \
    case PC_DTYPE_##DT: {                                                                                    \
        const T lo = CLIP_BOUND(T, AS_IS, 1, LO), hi = CLIP_BOUND(T, AS_IS, 2, HI);                          \
        CLIP_LOOP(T, T, AS_IS, (T), lo, hi);                                                                 \
        return PC_OK;                                                                                        \
    }

static pc_status clip_run(pc_rt_kernel_ctx *k)
{
    switch (k->in[0]->dtype) {
    case PC_DTYPE_FLOAT:
        CLIP_FLT(float, float, AS_IS, (float), FLT_MAX);
        return PC_OK;
    case PC_DTYPE_DOUBLE:
        CLIP_FLT(double, double, AS_IS, (double), DBL_MAX);
        return PC_OK;
    case PC_DTYPE_FLOAT16:
        CLIP_FLT(uint16_t, float, h2f, f2h, 65504.0f); /* the largest finite float16 */
        return PC_OK;
        SINT_TYPES(CLIP_INT)
        UINT_TYPES(CLIP_INT)
    default:
        return unexpected_dtype(k, 0);
    }
}

/* ---- binary */

/* Input 1 as the walk reads it: itself from opset 7. Before (Add/Sub/Mul/Div/Pow up to 6) the legacy
 * attributes decide: broadcast = 0 (the default) wants equal shapes; broadcast = 1 matches B against A's
 * trailing axes, or with `axis` against A's axes from `axis` on, B viewed with trailing 1s so that the numpy
 * rules line it up. Legacy broadcasting is one way (B to A's shape); binary_check checks that. */
static pc_status legacy_b(pc_rt_kernel_ctx *k, pc_rt_tensor *view, const pc_rt_tensor **b)
{
    const pc_rt_tensor *a = k->in[0], *t = k->in[1];
    *b = t;
    if (k->opset >= 7) return PC_OK;
    int64_t bc = pc_node_attr_int(k->node, "broadcast", 0);
    if (bc != 0 && bc != 1)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "%s: attribute 'broadcast' = %lld (0 or 1)",
                            k->node->op_type, (long long)bc);
    if (bc == 0) {
        if (!same_shape(a, t))
            return pc_error_set(k->err, PC_ERR_SHAPE,
                                "%s: inputs must have equal shapes when attribute 'broadcast' is 0",
                                k->node->op_type);
        return PC_OK;
    }
    if (!pc_node_attr(k->node, "axis")) return PC_OK;
    int64_t axis = pc_node_attr_int(k->node, "axis", 0);
    if (axis < 0) axis += a->rank;
    if (axis < 0 || axis >= a->rank)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                            "%s: attribute 'axis' = %lld is out of range for rank %d", k->node->op_type,
                            (long long)pc_node_attr_int(k->node, "axis", 0), (int)a->rank);
    if (axis + t->rank > a->rank)
        return pc_error_set(k->err, PC_ERR_SHAPE,
                            "%s: input B of rank %d does not fit input A of rank %d at "
                            "axis %lld",
                            k->node->op_type, (int)t->rank, (int)a->rank, (long long)axis);
    *view = *t;
    view->rank = (int32_t)(a->rank - axis);
    for (int32_t d = t->rank; d < view->rank; d++)
        view->dims[d] = 1;
    *b = view;
    return PC_OK;
}

/* PRelu before opset 7 (Caffe2's): a 1-D slope of C values applies per channel (axis 1), viewed as
 * [C, 1, ..., 1]; otherwise the slope broadcasts to X by the numpy rules. */
static const pc_rt_tensor *prelu_slope(const pc_rt_kernel_ctx *k, pc_rt_tensor *view)
{
    const pc_rt_tensor *x = k->in[0], *s = k->in[1];
    if (k->opset >= 7 || s->rank != 1 || x->rank < 2 || s->dims[0] != x->dims[1] || s->dims[0] == 1) return s;
    *view = *s;
    view->rank = x->rank - 1;
    for (int32_t d = 1; d < view->rank; d++)
        view->dims[d] = 1;
    return view;
}

/* Two inputs of one type (input 1 of a type in `b_types` when that is non-zero), both broadcasting to the
 * output (input 1 as `b`, its legacy view), an output of out_dtype (UNDEFINED: input 0's). */
static pc_status binary_check(pc_rt_kernel_ctx *k, uint64_t b_types, pc_dtype out_dtype,
                              const pc_rt_tensor *b)
{
    pc_status st;
    if (b_types) {
        if (!(RT_TYPE(k->in[1]->dtype) & b_types))
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s: input 1 of type %s is not implemented",
                                k->node->op_type, pc_dtype_name(k->in[1]->dtype));
    } else if ((st = need_same_dtype(k, 1)) != PC_OK) {
        return st;
    }
    if ((st = need_broadcast(k, k->in[0], 0)) != PC_OK || (st = need_broadcast(k, b, 1)) != PC_OK) return st;
    if (k->opset < 7 && !same_shape(k->in[0], k->out[0]))
        return pc_error_set(k->err, PC_ERR_SHAPE, "%s: the output's shape is not input A's (opset %lld)",
                            k->node->op_type, (long long)k->opset);
    return need_out_dtype(k, out_dtype == PC_DTYPE_UNDEFINED ? k->in[0]->dtype : out_dtype);
}

/* the checks of an op whose input 1 has input 0's type, with the legacy view before opset 7 */
static pc_status binary_prepare_as(pc_rt_kernel_ctx *k, uint64_t b_types, pc_dtype out_dtype)
{
    pc_status st = need_arity(k, 2, 2);
    if (st != PC_OK) return st;
    pc_rt_tensor view;
    const pc_rt_tensor *b;
    if ((st = legacy_b(k, &view, &b)) != PC_OK) return st;
    return binary_check(k, b_types, out_dtype, b);
}

static pc_status binary_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    return binary_prepare_as(k, 0, PC_DTYPE_UNDEFINED);
}

static pc_status compare_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    return binary_prepare_as(k, 0, PC_DTYPE_BOOL);
}

/* Pow: the exponent has the base's type before opset 12, any numeric type from 12 */
static pc_status pow_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    pc_status st = binary_prepare_as(k, k->opset < 12 ? 0 : RT_ALL_NUM, PC_DTYPE_UNDEFINED);
    if (st != PC_OK) return st;
    pc_dtype a = k->in[0]->dtype, b = k->in[1]->dtype;
    if (a <= PC_DTYPE_UNDEFINED || a >= NDT || b <= PC_DTYPE_UNDEFINED || b >= NDT || !pow_rows[a][b])
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                            "Pow: a %s base with a %s exponent is not implemented", pc_dtype_name(a),
                            pc_dtype_name(b));
    return PC_OK;
}

/* Mod: fmod = 0 (integers only: the divisor's sign) or 1 (C's fmod and %) */
static pc_status mod_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    pc_status st = binary_prepare_as(k, 0, PC_DTYPE_UNDEFINED);
    if (st != PC_OK) return st;
    int64_t fm = pc_node_attr_int(k->node, "fmod", 0);
    if (fm != 0 && fm != 1)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "Mod: attribute 'fmod' = %lld (0 or 1)", (long long)fm);
    if (fm == 0 && (RT_TYPE(k->in[0]->dtype) & RT_FLT))
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "Mod: attribute 'fmod' must be 1 for %s inputs",
                            pc_dtype_name(k->in[0]->dtype));
    return PC_OK;
}

static bool shift_left(const pc_rt_kernel_ctx *k)
{
    return strcmp(pc_node_attr_string(k->node, "direction", ""), "LEFT") == 0;
}

static pc_status bitshift_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    pc_status st = binary_prepare_as(k, 0, PC_DTYPE_UNDEFINED);
    if (st != PC_OK) return st;
    const char *dir = pc_node_attr_string(k->node, "direction", NULL);
    if (!dir || (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0))
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                            "BitShift: attribute 'direction' is %s%s%s, not \"LEFT\" "
                            "or \"RIGHT\"",
                            dir ? "\"" : "", dir ? dir : "absent", dir ? "\"" : "");
    return PC_OK;
}

/* PRelu: the slope broadcasts to X, never X to the slope's shape */
static pc_status prelu_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    pc_status st = need_arity(k, 2, 2);
    if (st != PC_OK) return st;
    pc_rt_tensor view;
    if ((st = binary_check(k, 0, PC_DTYPE_UNDEFINED, prelu_slope(k, &view))) != PC_OK) return st;
    if (!same_shape(k->in[0], k->out[0]))
        return pc_error_set(k->err, PC_ERR_SHAPE, "PRelu: the output's shape is not X's");
    return PC_OK;
}

/* out = row(in0, b) with b input 1 or its legacy view */
static pc_status binary_run_row(pc_rt_kernel_ctx *k, row_fn row, const pc_rt_tensor *b)
{
    if (!row) return unexpected_dtype(k, 0);
    if (k->out[0]->n > 0) walk2(k, k->out[0], k->in[0], b, row);
    return PC_OK;
}

static pc_status binary_run(pc_rt_kernel_ctx *k, const row_set *rows)
{
    pc_rt_tensor view;
    const pc_rt_tensor *b;
    pc_status st = legacy_b(k, &view, &b);
    return st != PC_OK ? st : binary_run_row(k, row_for(rows, k->in[0]->dtype), b);
}

#define BINARY_RUN(op)                                                                                       \
    static pc_status op##_run(pc_rt_kernel_ctx *k)                                                           \
    {                                                                                                        \
        return binary_run(k, &op##_rows);                                                                    \
    }
BINARY_RUN(add)
BINARY_RUN(sub)
BINARY_RUN(mul)
BINARY_RUN(eq)
BINARY_RUN(lt)
BINARY_RUN(le)
BINARY_RUN(gt)
BINARY_RUN(ge)
BINARY_RUN(and)
BINARY_RUN(or)
BINARY_RUN(xor)

static pc_status prelu_run(pc_rt_kernel_ctx *k)
{
    pc_rt_tensor view;
    return binary_run_row(k, row_for(&prelu_rows, k->in[0]->dtype), prelu_slope(k, &view));
}

static pc_status bitshift_run(pc_rt_kernel_ctx *k)
{
    return binary_run(k, shift_left(k) ? &shl_rows : &shr_rows);
}

/* Whether an integer tensor has a 0 element (integer types only: a float 0 divisor is fine). */
static bool any_int_zero(const pc_rt_tensor *t)
{
    if (!(RT_TYPE(t->dtype) & RT_ALL_INT)) return false;
#define ANY_ZERO(T)                                                                                          \
    do {                                                                                                     \
        const T *p = t->data;                                                                                \
        for (uint64_t i = 0; i < t->n; i++)                                                                  \
            if (p[i] == 0) return true;                                                                      \
    } while (0)
    switch (elem_size(t->dtype)) {
    case 1:
        ANY_ZERO(uint8_t);
        break;
    case 2:
        ANY_ZERO(uint16_t);
        break;
    case 4:
        ANY_ZERO(uint32_t);
        break;
    default:
        ANY_ZERO(uint64_t);
        break;
    }
#undef ANY_ZERO
    return false;
}

/* Integer division (and modulo) by zero is an error, as in the reference (ONNX Runtime would trap). Every
 * divisor element is used when the output is not empty (broadcasting repeats elements, never skips one), so
 * one scan over the divisor decides. */
static pc_status divide_run(pc_rt_kernel_ctx *k, const row_set *rows, const char *what)
{
    if (k->out[0]->n > 0 && any_int_zero(k->in[1]))
        return pc_error_set(k->err, PC_ERR_VALUE, "%s: integer %s by zero (a %s divisor element is 0)",
                            k->node->op_type, what, pc_dtype_name(k->in[1]->dtype));
    return binary_run(k, rows);
}

static pc_status div_run(pc_rt_kernel_ctx *k)
{
    return divide_run(k, &div_rows, "division");
}

static pc_status mod_run(pc_rt_kernel_ctx *k)
{
    return divide_run(k, pc_node_attr_int(k->node, "fmod", 0) ? &modt_rows : &modf_rows, "modulo");
}

static pc_status pow_run(pc_rt_kernel_ctx *k)
{
    pc_dtype a = k->in[0]->dtype, b = k->in[1]->dtype;
    if (a <= PC_DTYPE_UNDEFINED || a >= NDT || b <= PC_DTYPE_UNDEFINED || b >= NDT)
        return unexpected_dtype(k, 1);
    pc_rt_tensor view;
    const pc_rt_tensor *bt;
    pc_status st = legacy_b(k, &view, &bt);
    return st != PC_OK ? st : binary_run_row(k, pow_rows[a][b], bt);
}

/* ---- variadic Max, Min, Sum, Mean */

static pc_status variadic_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    pc_status st = need_arity(k, 1, UINT32_MAX);
    for (uint32_t i = 0; st == PC_OK && i < k->n_in; i++) {
        if (!k->in[i])
            return pc_error_set(k->err, PC_ERR_ARITY, "%s: input %u is required", k->node->op_type, i);
        if ((st = need_same_dtype(k, i)) == PC_OK) st = need_broadcast(k, k->in[i], i);
    }
    return st == PC_OK ? need_out_dtype(k, k->in[0]->dtype) : st;
}

/* Folds the inputs left to right into the output: out = in0 op in1 (both broadcast to out's shape), then
 * out = out op in_j. Each step reads out[i] before writing it, at the same i. */
static pc_status variadic_run(pc_rt_kernel_ctx *k, const row_set *rows)
{
    pc_rt_tensor *y = k->out[0];
    row_fn row = row_for(rows, k->in[0]->dtype);
    if (!row) return unexpected_dtype(k, 0);
    if (y->n == 0) return PC_OK;
    if (k->n_in == 1) { /* one input: its shape is the output's */
        if (y->data != k->in[0]->data) memcpy(y->data, k->in[0]->data, (size_t)y->n * elem_size(y->dtype));
        return PC_OK;
    }
    walk2(k, y, k->in[0], k->in[1], row);
    for (uint32_t j = 2; j < k->n_in; j++)
        walk2(k, y, y, k->in[j], row);
    return PC_OK;
}

#define VARIADIC_RUN(name, op)                                                                               \
    static pc_status name##_run(pc_rt_kernel_ctx *k)                                                         \
    {                                                                                                        \
        return variadic_run(k, &op##_rows);                                                                  \
    }
VARIADIC_RUN(max, max)
VARIADIC_RUN(min, min)
VARIADIC_RUN(sum, add)

#define MEAN_DIV(TS, C, LD, ST)                                                                              \
    do {                                                                                                     \
        TS *y = k->out[0]->data;                                                                             \
        const C n = (C)k->n_in;                                                                              \
        for (uint64_t i = 0; i < k->out[0]->n; i++)                                                          \
            y[i] = ST(LD(y[i]) / n);                                                                         \
    } while (0)

static pc_status mean_run(pc_rt_kernel_ctx *k)
{
    pc_status st = variadic_run(k, &add_rows);
    if (st != PC_OK) return st;
    switch (k->in[0]->dtype) {
    case PC_DTYPE_FLOAT:
        MEAN_DIV(float, float, AS_IS, (float));
        return PC_OK;
    case PC_DTYPE_DOUBLE:
        MEAN_DIV(double, double, AS_IS, (double));
        return PC_OK;
    case PC_DTYPE_FLOAT16:
        MEAN_DIV(uint16_t, float, h2f, f2h);
        return PC_OK;
    default:
        return unexpected_dtype(k, 0);
    }
}

/* ---- Where */

/* Copies elements by size, so every fixed-width type of 1, 2, 4 or 8 bytes runs the same loop. */
#define WHERE_ROW(bits)                                                                                      \
    static void where_row_##bits(const void *const *src, const int64_t *step, void *dst, int64_t n)          \
    {                                                                                                        \
        const uint8_t *c = src[0];                                                                           \
        const uint##bits##_t *x = src[1], *z = src[2];                                                       \
        uint##bits##_t *y = dst;                                                                             \
        for (int64_t i = 0; i < n; i++)                                                                      \
            y[i] = c[i * step[0]] ? x[i * step[1]] : z[i * step[2]];                                         \
    }
WHERE_ROW(8)
WHERE_ROW(16)
WHERE_ROW(32)
WHERE_ROW(64)

static pc_status where_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    pc_status st = need_arity(k, 3, 3);
    if (st != PC_OK) return st;
    if (k->in[1]->dtype != k->in[2]->dtype)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "Where: X is %s but Y is %s (mixed types)",
                            pc_dtype_name(k->in[1]->dtype), pc_dtype_name(k->in[2]->dtype));
    if (!(RT_TYPE(k->in[1]->dtype) & RT_ANY_FIXED))
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "Where on %s elements is not implemented",
                            pc_dtype_name(k->in[1]->dtype));
    for (uint32_t i = 0; i < 3; i++)
        if ((st = need_broadcast(k, k->in[i], i)) != PC_OK) return st;
    return need_out_dtype(k, k->in[1]->dtype);
}

static pc_status where_run(pc_rt_kernel_ctx *k)
{
    pc_rt_tensor *y = k->out[0];
    size_t es = elem_size(y->dtype);
    row_fn row = es == 1   ? where_row_8
                 : es == 2 ? where_row_16
                 : es == 4 ? where_row_32
                 : es == 8 ? where_row_64
                           : NULL;
    if (!row) return unexpected_dtype(k, 1);
    if (y->n == 0) return PC_OK;
    walk w;
    walk_init(&w, y, 3, k->in);
    const void *data[3] = {k->in[0]->data, k->in[1]->data, k->in[2]->data};
    size_t sizes[3] = {1, es, es};
    walk_run(k, &w, data, sizes, y->data, es, row);
    return PC_OK;
}

/* ---- the table */

/* Opset ranges start where ONNX gave the op the semantics implemented here (numpy broadcasting from 7 for
 * the binaries, from 8 for the variadics, whose opset-6 forms take equal shapes, a case of it; Add, Sub,
 * Mul, Div, Pow and PRelu at 6 with their legacy broadcasting); the type sets are the op's widest (a model
 * of an older opset with a newer type is invalid before it gets here). */
const pc_rt_kernel pc_rt_kernels_elementwise[] = {
    {"", "Relu", 1, 21, RT_FLT, unary_prepare, relu_run, RT_SLICEABLE},
    {"", "Relu", 14, 21, RT_SINT, unary_prepare, relu_run, RT_SLICEABLE},
    /* the blocked EP's layout-blind ops: the standard kernels on nChw<b>c tensors */
    {PC_BLOCKED_DOMAIN, "Relu", 1, 1, RT_F32, unary_prepare, relu_run, RT_SLICEABLE},
    {PC_BLOCKED_DOMAIN, "Add", 1, 1, RT_F32, binary_prepare, add_run, RT_INPLACE},
    {PC_BLOCKED_DOMAIN, "Sum", 1, 1, RT_F32, variadic_prepare, sum_run, 0},
    {"", "Sigmoid", 1, 21, RT_FLT, unary_prepare, sigmoid_run, RT_SLICEABLE},
    {"", "Tanh", 1, 21, RT_FLT, unary_prepare, tanh_run, RT_SLICEABLE},
    {"", "Exp", 1, 21, RT_FLT, unary_prepare, exp_run, RT_SLICEABLE},
    {"", "Log", 1, 21, RT_FLT, unary_prepare, log_run, RT_SLICEABLE},
    {"", "Sqrt", 1, 21, RT_FLT, unary_prepare, sqrt_run, RT_SLICEABLE},
    {"", "Neg", 1, 21, RT_FLT | RT_SINT, unary_prepare, neg_run, RT_SLICEABLE},
    {"", "Abs", 1, 21, RT_ALL_NUM, unary_prepare, abs_run, RT_SLICEABLE},
    {"", "Reciprocal", 1, 21, RT_FLT, unary_prepare, reciprocal_run, RT_SLICEABLE},
    {"", "Floor", 1, 21, RT_FLT, unary_prepare, floor_run, RT_SLICEABLE},
    {"", "Ceil", 1, 21, RT_FLT, unary_prepare, ceil_run, RT_SLICEABLE},
    {"", "Erf", 9, 21, RT_FLT, unary_prepare, erf_run, RT_SLICEABLE},
    {"", "Cos", 7, 21, RT_FLT, unary_prepare, cos_run, RT_SLICEABLE},
    {"", "Sin", 7, 21, RT_FLT, unary_prepare, sin_run, RT_SLICEABLE},
    {"", "Tan", 7, 21, RT_FLT, unary_prepare, tan_run, RT_SLICEABLE},
    {"", "Acos", 7, 21, RT_FLT, unary_prepare, acos_run, RT_SLICEABLE},
    {"", "Asin", 7, 21, RT_FLT, unary_prepare, asin_run, RT_SLICEABLE},
    {"", "Atan", 7, 21, RT_FLT, unary_prepare, atan_run, RT_SLICEABLE},
    {"", "Sinh", 9, 21, RT_FLT, unary_prepare, sinh_run, RT_SLICEABLE},
    {"", "Cosh", 9, 21, RT_FLT, unary_prepare, cosh_run, RT_SLICEABLE},
    {"", "Asinh", 9, 21, RT_FLT, unary_prepare, asinh_run, RT_SLICEABLE},
    {"", "Acosh", 9, 21, RT_FLT, unary_prepare, acosh_run, RT_SLICEABLE},
    {"", "Atanh", 9, 21, RT_FLT, unary_prepare, atanh_run, RT_SLICEABLE},
    {"", "Softplus", 1, 21, RT_FLT, unary_prepare, softplus_run, RT_SLICEABLE},
    {"", "Softsign", 1, 21, RT_FLT, unary_prepare, softsign_run, RT_SLICEABLE},
    {"", "Elu", 1, 21, RT_FLT, unary_prepare, elu_run, RT_SLICEABLE},
    {"", "Celu", 12, 21, RT_FLT, unary_prepare, celu_run, RT_SLICEABLE},
    {"", "LeakyRelu", 1, 21, RT_FLT, unary_prepare, leaky_relu_run, RT_SLICEABLE},
    {"", "ThresholdedRelu", 10, 21, RT_FLT, unary_prepare, thresholded_relu_run, RT_SLICEABLE},
    {"", "HardSigmoid", 1, 21, RT_FLT, unary_prepare, hard_sigmoid_run, RT_SLICEABLE},
    {"", "HardSwish", 14, 21, RT_FLT, unary_prepare, hard_swish_run, RT_SLICEABLE},
    {"", "Selu", 1, 21, RT_FLT, unary_prepare, selu_run, RT_SLICEABLE},
    {"", "Sign", 9, 21, RT_ALL_NUM, unary_prepare, sign_run, RT_SLICEABLE},
    {"", "Round", 11, 21, RT_FLT, unary_prepare, round_run, RT_SLICEABLE},
    {"", "Shrink", 9, 21, RT_ALL_NUM, unary_prepare, shrink_run, RT_SLICEABLE},
    {"", "IsNaN", 9, 21, RT_FLT, predicate_prepare, isnan_run, RT_SLICEABLE},
    {"", "IsInf", 10, 21, RT_FLT, predicate_prepare, isinf_run, RT_SLICEABLE},
    {"", "Clip", 1, 21, RT_FLT, clip_prepare, clip_run, RT_SLICEABLE},
    {"", "Gelu", 20, 21, RT_FLT, unary_prepare, gelu_run, RT_SLICEABLE},
    {PC_MS_DOMAIN, "Gelu", 1, 1, RT_FLT, unary_prepare, gelu_run, RT_SLICEABLE},
    {"", "Clip", 12, 21, RT_ALL_INT, clip_prepare, clip_run, RT_SLICEABLE},
    {"", "Not", 1, 21, RT_BOOL, unary_prepare, not_run, RT_SLICEABLE},
    {"", "Add", 6, 21, RT_ALL_NUM, binary_prepare, add_run, RT_INPLACE},
    {"", "Sub", 6, 21, RT_ALL_NUM, binary_prepare, sub_run, RT_INPLACE},
    {"", "Mul", 6, 21, RT_ALL_NUM, binary_prepare, mul_run, RT_INPLACE},
    {"", "Div", 6, 21, RT_ALL_NUM, binary_prepare, div_run, RT_INPLACE},
    {"", "Pow", 6, 21, RT_FLT, pow_prepare, pow_run, 0},
    {"", "Pow", 12, 21, RT_I32 | RT_I64, pow_prepare, pow_run, 0},
    {"", "Mod", 10, 21, RT_ALL_NUM, mod_prepare, mod_run, RT_INPLACE},
    {"", "BitShift", 11, 21, RT_UINT, bitshift_prepare, bitshift_run, 0},
    {"", "PRelu", 6, 21, RT_FLT, prelu_prepare, prelu_run, RT_INPLACE},
    {"", "PRelu", 9, 21, RT_ALL_INT, prelu_prepare, prelu_run, RT_INPLACE},
    {"", "Max", 6, 21, RT_FLT, variadic_prepare, max_run, 0},
    {"", "Max", 12, 21, RT_ALL_INT, variadic_prepare, max_run, 0},
    {"", "Min", 6, 21, RT_FLT, variadic_prepare, min_run, 0},
    {"", "Min", 12, 21, RT_ALL_INT, variadic_prepare, min_run, 0},
    {"", "Sum", 6, 21, RT_FLT, variadic_prepare, sum_run, 0},
    {"", "Mean", 6, 21, RT_FLT, variadic_prepare, mean_run, 0},
    {"", "Equal", 7, 21, RT_ALL_INT | RT_BOOL, compare_prepare, eq_run, 0},
    {"", "Equal", 11, 21, RT_FLT, compare_prepare, eq_run, 0},
    {"", "Less", 7, 21, RT_FLT, compare_prepare, lt_run, 0},
    {"", "Less", 9, 21, RT_ALL_INT, compare_prepare, lt_run, 0},
    {"", "Greater", 7, 21, RT_FLT, compare_prepare, gt_run, 0},
    {"", "Greater", 9, 21, RT_ALL_INT, compare_prepare, gt_run, 0},
    {"", "LessOrEqual", 12, 21, RT_ALL_NUM, compare_prepare, le_run, 0},
    {"", "GreaterOrEqual", 12, 21, RT_ALL_NUM, compare_prepare, ge_run, 0},
    {"", "And", 7, 21, RT_BOOL, binary_prepare, and_run, RT_INPLACE},
    {"", "Or", 7, 21, RT_BOOL, binary_prepare, or_run, RT_INPLACE},
    {"", "Xor", 7, 21, RT_BOOL, binary_prepare, xor_run, RT_INPLACE},
    {"", "Where", 9, 21, RT_BOOL, where_prepare, where_run, 0},
};

const size_t pc_rt_n_kernels_elementwise =
    sizeof pc_rt_kernels_elementwise / sizeof pc_rt_kernels_elementwise[0];
