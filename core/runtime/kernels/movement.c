/* Data movement and shape kernels: Identity, Reshape, Flatten, Squeeze, Unsqueeze,
 * Transpose, Concat, Split, Slice, Gather, Pad, Tile, Expand, Shape, Size, ConstantOfShape, Cast, Range,
 * DepthToSpace and SpaceToDepth (also in the internal NHWC domain); the index ops GatherElements,
 * ScatterElements (Scatter), GatherND, ScatterND, OneHot, Trilu, EyeLike, ReverseSequence; CumSum and TopK.
 *
 * Most kernels move whole elements without looking at them, so one row serves every fixed-width type: the
 * element size comes from the dtype (Cast, Range, CumSum, TopK, OneHot and the scatter reductions read
 * values). Index values are checked before anything is written: one out of range is PC_ERR_VALUE naming it
 * and its position. Transpose, Slice, Expand, Tile and the depth/space
 * ops are one strided copy (view_copy): output element i is src[base + sum idx[d] * stride[d]]. The view
 * drops size-1 axes and merges axes the source walks in one stride, then copies the innermost run with
 * memcpy (stride 1), a fill (stride 0) or a gather loop per element size, and copies in 2-D tiles when the
 * source's contiguous axis is the output's second-to-last (a matrix transpose).
 *
 * Output dims arrive from the session (shape inference). Each kernel recomputes them from its inputs and
 * attributes (in prepare as far as constants allow, again in run) and refuses a disagreement with
 * PC_ERR_SHAPE before it writes anything, so a wrong inferred shape can never make it write out of bounds. */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/runtime/rt_internal.h"

/* ---- helpers */

enum { DIMS_TEXT = 160, MAX_LIST = 2 * PC_MAX_RANK };

static const pc_rt_tensor *in_at(const pc_rt_kernel_ctx *k, uint32_t i)
{
    return i < k->n_in ? k->in[i] : NULL;
}

static pc_rt_tensor *out_at(const pc_rt_kernel_ctx *k, uint32_t i)
{
    return i < k->n_out ? k->out[i] : NULL;
}

/* Whether t's values can be read: always in run; in prepare only for initializers (an empty tensor has
 * none to read). */
static bool has_data(const pc_rt_tensor *t)
{
    return t->data != NULL || t->n == 0;
}

/* Bytes per element of a type that moves as whole bytes; 0 for strings and packed sub-byte types. */
static size_t elem_bytes(pc_dtype t)
{
    unsigned bits = pc_dtype_bits(t);
    return t != PC_DTYPE_STRING && bits >= 8 && bits % 8 == 0 ? bits / 8 : 0;
}

/* memcpy that skips empty copies (data may be NULL then) and in-place ones. */
static void copy_bytes(void *dst, const void *src, size_t n)
{
    if (n && dst != src) memcpy(dst, src, n);
}

/* n copies of the es-byte element at val: memset when its bytes agree, else by doubling what is written. */
static void fill_elems(uint8_t *dst, const uint8_t *val, uint64_t n, size_t es)
{
    if (n <= 1) {
        if (n) memcpy(dst, val, es);
        return;
    }
    bool same = true;
    for (size_t b = 1; b < es; b++)
        same = same && val[b] == val[0];
    size_t total = (size_t)n * es;
    if (same) {
        memset(dst, val[0], total);
        return;
    }
    memcpy(dst, val, es);
    for (size_t done = es; done < total;) {
        size_t c = done < total - done ? done : total - done;
        memcpy(dst + done, dst, c);
        done += c;
    }
}

/* Product of dims[from, to), wrapping: exact whenever the tensor is not empty. */
static uint64_t prod(const int64_t *dims, int32_t from, int32_t to)
{
    uint64_t p = 1;
    for (int32_t d = from; d < to; d++)
        p *= (uint64_t)dims[d];
    return p;
}

/* Row-major strides in elements (wrapped for an empty tensor, whose strides are never used to read). */
static void strides_of(int32_t rank, const int64_t *dims, int64_t *s)
{
    uint64_t acc = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        s[d] = (int64_t)acc;
        acc *= (uint64_t)dims[d];
    }
}

/* "[2,3,4]" into buf (DIMS_TEXT bytes), cut with "..." when long. */
static const char *dims_text(char *buf, int32_t rank, const int64_t *dims)
{
    size_t o = 0;
    buf[o++] = '[';
    for (int32_t d = 0; d < rank; d++) {
        char num[32];
        int w = snprintf(num, sizeof num, "%s%lld", d ? "," : "", (long long)dims[d]);
        if (w < 0 || o + (size_t)w + 5 > DIMS_TEXT) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        memcpy(buf + o, num, (size_t)w);
        o += (size_t)w;
    }
    buf[o++] = ']';
    buf[o] = '\0';
    return buf;
}

/* Output i (when present) must be what the kernel computed: dtype, dims, and an element count that fits the
 * dims (the buffer was sized from it). */
static pc_status check_out(pc_rt_kernel_ctx *k, uint32_t i, pc_dtype dtype, int32_t rank, const int64_t *dims)
{
    const pc_rt_tensor *y = out_at(k, i);
    if (!y) return PC_OK;
    if (y->dtype != dtype)
        return pc_error_set(k->err, PC_ERR_TYPE, "output %u is %s but the op makes %s", i,
                            pc_dtype_name(y->dtype), pc_dtype_name(dtype));
    bool same = y->rank == rank;
    for (int32_t d = 0; same && d < rank; d++)
        same = y->dims[d] == dims[d];
    char a[DIMS_TEXT], b[DIMS_TEXT];
    if (!same)
        return pc_error_set(k->err, PC_ERR_SHAPE, "output %u has dims %s but the inputs make %s", i,
                            dims_text(a, y->rank, y->dims), dims_text(b, rank, dims));
    uint64_t n = 1;
    bool ok = true;
    for (int32_t d = 0; d < rank; d++)
        ok = ok && dims[d] >= 0 && pc_u64_mul(n, (uint64_t)dims[d], &n);
    if (!ok || n != y->n)
        return pc_error_set(k->err, PC_ERR_SHAPE,
                            "output %u holds %llu elements, not the number dims %s make", i,
                            (unsigned long long)y->n, dims_text(a, rank, dims));
    return PC_OK;
}

/* Input 0 and output 0 present, input 0 of a movable type: its element size in *es. */
static pc_status start(pc_rt_kernel_ctx *k, size_t *es)
{
    const pc_rt_tensor *x = in_at(k, 0);
    if (!x) return pc_error_set(k->err, PC_ERR_ARITY, "input 0 is required");
    if (!out_at(k, 0)) return pc_error_set(k->err, PC_ERR_ARITY, "output 0 is required");
    *es = elem_bytes(x->dtype);
    if (!*es)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                            "input 0 of element type %s (strings and packed sub-byte types are not moved)",
                            pc_dtype_name(x->dtype));
    return PC_OK;
}

static int64_t int_at(const pc_rt_tensor *t, uint64_t i)
{
    if (t->dtype == PC_DTYPE_INT32) {
        int32_t v;
        memcpy(&v, (const uint8_t *)t->data + i * 4, 4);
        return v;
    }
    int64_t v;
    memcpy(&v, (const uint8_t *)t->data + i * 8, 8);
    return v;
}

static pc_status need_int_type(pc_rt_kernel_ctx *k, const pc_rt_tensor *t, const char *what)
{
    if (t->dtype == PC_DTYPE_INT64 || t->dtype == PC_DTYPE_INT32) return PC_OK;
    return pc_error_set(k->err, PC_ERR_TYPE, "%s must be int64 or int32, not %s", what,
                        pc_dtype_name(t->dtype));
}

/* A list of ints from an attribute (before opset `from`) or an int input (from then on). given: the node
 * has it; known: its values are here (an input that is not an initializer has none in prepare). */
typedef struct int_list {
    int64_t v[MAX_LIST];
    size_t n;
    bool given, known;
} int_list;

static pc_status get_list(pc_rt_kernel_ctx *k, const char *name, int64_t from, uint32_t index, size_t cap,
                          int_list *l)
{
    l->n = 0;
    l->given = false;
    l->known = true;
    if (k->opset < from) {
        const pc_attr *a = pc_node_attr(k->node, name);
        if (!a) return PC_OK;
        if (a->type != PC_ATTR_INTS)
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute '%s' must be a list of ints", name);
        if (a->n > cap)
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute '%s' has %zu values (at most %zu)", name,
                                a->n, cap);
        if (a->n) memcpy(l->v, a->ints, a->n * sizeof *l->v);
        l->n = a->n;
        l->given = true;
        return PC_OK;
    }
    const pc_rt_tensor *t = in_at(k, index);
    if (!t) return PC_OK;
    l->given = true;
    char what[64];
    snprintf(what, sizeof what, "input %u '%s'", index, name);
    pc_status st = need_int_type(k, t, what);
    if (st != PC_OK) return st;
    if (!has_data(t)) {
        l->known = false;
        return PC_OK;
    }
    if (t->n > cap)
        return pc_error_set(k->err, PC_ERR_SHAPE, "%s has %llu values (at most %zu)", what,
                            (unsigned long long)t->n, cap);
    for (uint64_t i = 0; i < t->n; i++)
        l->v[i] = int_at(t, i);
    l->n = (size_t)t->n;
    return PC_OK;
}

/* An axis in [-rank, rank) made non-negative. */
static pc_status norm_axis(pc_rt_kernel_ctx *k, int64_t a, int32_t rank, const char *what, int32_t *out)
{
    *out = 0;
    if (a < -(int64_t)rank || a >= rank)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "%s %lld is out of range for rank %d", what,
                            (long long)a, (int)rank);
    *out = (int32_t)(a < 0 ? a + rank : a);
    return PC_OK;
}

/* Axes of a list normalized against rank into mark[] (duplicates refused). */
static pc_status mark_axes(pc_rt_kernel_ctx *k, const int_list *l, int32_t rank, bool *mark)
{
    for (int32_t d = 0; d < rank; d++)
        mark[d] = false;
    for (size_t i = 0; i < l->n; i++) {
        int32_t a;
        pc_status st = norm_axis(k, l->v[i], rank, "axes value", &a);
        if (st != PC_OK) return st;
        if (mark[a]) return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "axes repeat axis %d", (int)a);
        mark[a] = true;
    }
    return PC_OK;
}

/* ---- the strided copy */

/* Output element at multi-index idx (row-major over dims) is source element base + sum idx[d] * strides[d].
 * Twice the rank: Tile splits every axis in two. */
typedef struct view {
    int32_t rank;
    int64_t base;
    int64_t dims[2 * PC_MAX_RANK];
    int64_t strides[2 * PC_MAX_RANK];
} view;

/* Drops size-1 axes and merges an axis into the one before it when the source walks both in one stride:
 * fewer, longer runs. */
static void view_simplify(view *v)
{
    int32_t r = 0;
    for (int32_t d = 0; d < v->rank; d++) {
        if (v->dims[d] == 1) continue;
        if (r > 0 && v->strides[r - 1] == v->strides[d] * v->dims[d]) {
            v->dims[r - 1] *= v->dims[d];
            v->strides[r - 1] = v->strides[d];
            continue;
        }
        v->dims[r] = v->dims[d];
        v->strides[r] = v->strides[d];
        r++;
    }
    v->rank = r;
}

#define GATHER_RUN(ES)                                                                                       \
    do {                                                                                                     \
        for (int64_t i = 0; i < n; i++)                                                                      \
            memcpy(dst + (size_t)i * (ES), src + (ptrdiff_t)i * step, (ES));                                 \
    } while (0)

/* n elements of the source at the given stride into dst. */
static void copy_run(uint8_t *dst, const uint8_t *src, int64_t n, int64_t stride, size_t es)
{
    if (stride == 1) {
        memcpy(dst, src, (size_t)n * es);
        return;
    }
    if (stride == 0) {
        fill_elems(dst, src, (uint64_t)n, es);
        return;
    }
    ptrdiff_t step = (ptrdiff_t)stride * (ptrdiff_t)es;
    switch (es) { /* constant sizes: the copies compile to plain loads and stores */
    case 1:
        GATHER_RUN(1);
        break;
    case 2:
        GATHER_RUN(2);
        break;
    case 4:
        GATHER_RUN(4);
        break;
    case 8:
        GATHER_RUN(8);
        break;
    default:
        GATHER_RUN(es);
    }
}

#define TILE_LOOP(ES)                                                                                        \
    do {                                                                                                     \
        for (int64_t c = c0; c < c1; c++)                                                                    \
            for (int64_t r = r0; r < r1; r++)                                                                \
                memcpy(dst + (size_t)(r * cols + c) * (ES),                                                  \
                       src + ((ptrdiff_t)r + (ptrdiff_t)c * cstride) * (ptrdiff_t)(ES), (ES));               \
    } while (0)

/* dst[r][c] = src[r + c * cstride]: a transpose, in tiles small enough that both sides stay in cache. */
static void copy_tile(uint8_t *dst, const uint8_t *src, int64_t rows, int64_t cols, int64_t cstride,
                      size_t es)
{
    enum { T = 8 }; /* 8 strided lines per tile stay in an 8-way L1 even at power-of-two strides */
    for (int64_t r0 = 0; r0 < rows; r0 += T) {
        int64_t r1 = r0 + T < rows ? r0 + T : rows;
        for (int64_t c0 = 0; c0 < cols; c0 += T) {
            int64_t c1 = c0 + T < cols ? c0 + T : cols;
            switch (es) {
            case 1:
                TILE_LOOP(1);
                break;
            case 2:
                TILE_LOOP(2);
                break;
            case 4:
                TILE_LOOP(4);
                break;
            case 8:
                TILE_LOOP(8);
                break;
            default:
                TILE_LOOP(es);
            }
        }
    }
}

/* Writes the whole (non-empty) view to dst, row after row: an odometer over the outer axes keeps the source
 * offset current, so no index is recomputed per element. */
static void view_copy(uint8_t *dst, const uint8_t *src, view *v, size_t es)
{
    view_simplify(v);
    int32_t r = v->rank;
    if (r == 0) {
        memcpy(dst, src + (ptrdiff_t)v->base * (ptrdiff_t)es, es);
        return;
    }
    bool tile = r >= 2 && v->strides[r - 2] == 1 && v->strides[r - 1] > 1 && v->dims[r - 2] >= 4 &&
                v->dims[r - 1] >= 4;
    int32_t outer = tile ? r - 2 : r - 1;
    size_t unit = (size_t)(tile ? v->dims[r - 2] * v->dims[r - 1] : v->dims[r - 1]) * es;
    int64_t idx[2 * PC_MAX_RANK];
    for (int32_t d = 0; d < outer; d++)
        idx[d] = 0;
    int64_t off = v->base;
    for (;;) {
        const uint8_t *s = src + (ptrdiff_t)off * (ptrdiff_t)es;
        if (tile)
            copy_tile(dst, s, v->dims[r - 2], v->dims[r - 1], v->strides[r - 1], es);
        else
            copy_run(dst, s, v->dims[r - 1], v->strides[r - 1], es);
        dst += unit;
        int32_t d = outer - 1;
        for (; d >= 0; d--) {
            off += v->strides[d];
            if (++idx[d] < v->dims[d]) break;
            off -= v->strides[d] * v->dims[d];
            idx[d] = 0;
        }
        if (d < 0) return;
    }
}

/* ---- Identity (Dropout, with its mask, is nn.c's) */

static pc_status copy_all_run(pc_rt_kernel_ctx *k)
{
    const pc_rt_tensor *x = k->in[0];
    pc_rt_tensor *y = k->out[0];
    if (y->dtype != x->dtype)
        return pc_error_set(k->err, PC_ERR_TYPE, "output 0 is %s, input 0 %s", pc_dtype_name(y->dtype),
                            pc_dtype_name(x->dtype));
    if (y->n != x->n)
        return pc_error_set(k->err, PC_ERR_SHAPE, "output 0 holds %llu elements, input 0 %llu",
                            (unsigned long long)y->n, (unsigned long long)x->n);
    copy_bytes(y->data, x->data, (size_t)x->n * elem_bytes(x->dtype));
    return PC_OK;
}

static pc_status identity_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es;
    *scratch = 0;
    pc_status st = start(k, &es);
    if (st != PC_OK) return st;
    return check_out(k, 0, k->in[0]->dtype, k->in[0]->rank, k->in[0]->dims);
}

static double float_scalar(const pc_rt_tensor *t)
{
    switch (t->dtype) {
    case PC_DTYPE_FLOAT: {
        float f;
        memcpy(&f, t->data, 4);
        return f;
    }
    case PC_DTYPE_DOUBLE: {
        double d;
        memcpy(&d, t->data, 8);
        return d;
    }
    case PC_DTYPE_FLOAT16: {
        uint16_t h;
        memcpy(&h, t->data, 2);
        return pc_half_to_double(h);
    }
    case PC_DTYPE_BFLOAT16: {
        uint16_t h;
        memcpy(&h, t->data, 2);
        return pc_bfloat16_to_double(h);
    }
    default:
        return NAN;
    }
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze: the data as it is, under new dims */

/* prepare and run of a kernel that copies the data as it lies under the dims name##_check verifies: prepare
 * checks what it can see, run checks again (computed shape and axes inputs are known only then) and copies.
 */
#define VIEW_KERNEL(name)                                                                                    \
    static pc_status name##_prepare(pc_rt_kernel_ctx *k, size_t *scratch)                                    \
    {                                                                                                        \
        size_t es;                                                                                           \
        *scratch = 0;                                                                                        \
        pc_status st = start(k, &es);                                                                        \
        return st != PC_OK ? st : name##_check(k);                                                           \
    }                                                                                                        \
    static pc_status name##_run(pc_rt_kernel_ctx *k)                                                         \
    {                                                                                                        \
        pc_status st = name##_check(k);                                                                      \
        return st != PC_OK ? st : copy_all_run(k);                                                           \
    }

/* The dims Reshape makes; *known false when the shape input has no values yet. */
static pc_status reshape_dims(pc_rt_kernel_ctx *k, int32_t *rank, int64_t *dims, bool *known)
{
    const pc_rt_tensor *x = k->in[0];
    int_list shape;
    *known = false;
    pc_status st = get_list(k, "shape", 5, 1, PC_MAX_RANK, &shape);
    if (st != PC_OK) return st;
    if (!shape.given)
        return pc_error_set(k->err, PC_ERR_ARITY,
                            k->opset < 5 ? "attribute 'shape' is required" : "input 1 'shape' is required");
    *known = shape.known;
    if (!shape.known) return PC_OK;
    bool allowzero = k->opset >= 14 && pc_node_attr_int(k->node, "allowzero", 0) != 0;
    int32_t infer = -1;
    uint64_t known_n = 1;
    for (size_t i = 0; i < shape.n; i++) {
        int64_t v = shape.v[i];
        if (v == 0 && !allowzero) {
            if ((int32_t)i >= x->rank)
                return pc_error_set(k->err, PC_ERR_SHAPE,
                                    "shape[%zu] = 0 copies input dim %zu, but input 0 has rank %d", i, i,
                                    (int)x->rank);
            v = x->dims[i];
        } else if (v == -1) {
            if (infer >= 0)
                return pc_error_set(k->err, PC_ERR_SHAPE, "shape has two -1 entries (%d and %zu)", (int)infer,
                                    i);
            infer = (int32_t)i;
            continue;
        } else if (v < 0) {
            return pc_error_set(k->err, PC_ERR_SHAPE, "shape[%zu] = %lld", i, (long long)v);
        }
        dims[i] = v;
        if (!pc_u64_mul(known_n, (uint64_t)v, &known_n))
            return pc_error_set(k->err, PC_ERR_SHAPE, "shape's element count overflows");
    }
    if (infer >= 0) {
        if (known_n == 0 || x->n % known_n)
            return pc_error_set(k->err, PC_ERR_SHAPE, "cannot infer shape[%d]: %llu elements over %llu",
                                (int)infer, (unsigned long long)x->n, (unsigned long long)known_n);
        dims[infer] = (int64_t)(x->n / known_n);
    } else if (known_n != x->n) {
        return pc_error_set(k->err, PC_ERR_SHAPE, "cannot reshape %llu elements to %llu",
                            (unsigned long long)x->n, (unsigned long long)known_n);
    }
    *rank = (int32_t)shape.n;
    return PC_OK;
}

static pc_status reshape_check(pc_rt_kernel_ctx *k)
{
    int64_t dims[PC_MAX_RANK];
    int32_t rank = 0;
    bool known;
    pc_status st = reshape_dims(k, &rank, dims, &known);
    if (st != PC_OK) return st;
    if (!known) /* the count at least is fixed */
        return k->out[0]->n == k->in[0]->n
                   ? PC_OK
                   : pc_error_set(k->err, PC_ERR_SHAPE, "output 0 holds %llu elements, input 0 %llu",
                                  (unsigned long long)k->out[0]->n, (unsigned long long)k->in[0]->n);
    return check_out(k, 0, k->in[0]->dtype, rank, dims);
}

VIEW_KERNEL(reshape)

static pc_status flatten_check(pc_rt_kernel_ctx *k)
{
    const pc_rt_tensor *x = k->in[0];
    int64_t a = pc_node_attr_int(k->node, "axis", 1);
    /* the axis may equal the rank (everything in the first dim); negatives count from the rank (formally
     * from opset 11, taken at every opset as the reference and core's inference do) */
    if (a < -(int64_t)x->rank || a > x->rank)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "axis %lld is out of range for rank %d", (long long)a,
                            (int)x->rank);
    int32_t axis = (int32_t)(a < 0 ? a + x->rank : a);
    uint64_t n[2] = {1, 1};
    for (int32_t d = 0; d < x->rank; d++)
        if (!pc_u64_mul(n[d >= axis], (uint64_t)x->dims[d], &n[d >= axis]) || n[d >= axis] > INT64_MAX)
            return pc_error_set(k->err, PC_ERR_SHAPE, "the flattened dims overflow");
    int64_t dims[2] = {(int64_t)n[0], (int64_t)n[1]};
    return check_out(k, 0, x->dtype, 2, dims);
}

VIEW_KERNEL(flatten)

/* Squeeze and Unsqueeze: axes an attribute before opset 13, input 1 from then on. */
static pc_status squeeze_check(pc_rt_kernel_ctx *k)
{
    const pc_rt_tensor *x = k->in[0];
    int_list axes;
    bool drop[PC_MAX_RANK];
    pc_status st = get_list(k, "axes", 13, 1, PC_MAX_RANK, &axes);
    if (st != PC_OK) return st;
    if (!axes.known) return PC_OK;
    if (axes.n) { /* an empty list squeezes every size-1 axis, as no list does (ORT, core's inference) */
        if ((st = mark_axes(k, &axes, x->rank, drop)) != PC_OK) return st;
        for (int32_t d = 0; d < x->rank; d++)
            if (drop[d] && x->dims[d] != 1)
                return pc_error_set(k->err, PC_ERR_SHAPE, "cannot squeeze axis %d of size %lld", (int)d,
                                    (long long)x->dims[d]);
    } else {
        for (int32_t d = 0; d < x->rank; d++)
            drop[d] = x->dims[d] == 1;
    }
    int64_t dims[PC_MAX_RANK];
    int32_t r = 0;
    for (int32_t d = 0; d < x->rank; d++)
        if (!drop[d]) dims[r++] = x->dims[d];
    return check_out(k, 0, x->dtype, r, dims);
}

VIEW_KERNEL(squeeze)

static pc_status unsqueeze_check(pc_rt_kernel_ctx *k)
{
    const pc_rt_tensor *x = k->in[0];
    int_list axes;
    bool ins[PC_MAX_RANK];
    pc_status st = get_list(k, "axes", 13, 1, PC_MAX_RANK, &axes);
    if (st != PC_OK) return st;
    if (!axes.given)
        return pc_error_set(k->err, PC_ERR_ARITY,
                            k->opset < 13 ? "attribute 'axes' is required" : "input 1 'axes' is required");
    if (!axes.known) return PC_OK;
    if (axes.n > (size_t)(PC_MAX_RANK - x->rank))
        return pc_error_set(k->err, PC_ERR_SHAPE, "unsqueezing %zu axes passes the rank limit %d", axes.n,
                            PC_MAX_RANK);
    int32_t r = x->rank + (int32_t)axes.n;
    if ((st = mark_axes(k, &axes, r, ins)) != PC_OK) return st;
    int64_t dims[PC_MAX_RANK];
    for (int32_t d = 0, j = 0; d < r; d++)
        dims[d] = ins[d] ? 1 : x->dims[j++];
    return check_out(k, 0, x->dtype, r, dims);
}

VIEW_KERNEL(unsqueeze)

/* ---- Transpose */

static pc_status transpose_view(pc_rt_kernel_ctx *k, view *v)
{
    const pc_rt_tensor *x = k->in[0];
    int32_t r = x->rank;
    size_t n;
    const int64_t *perm = pc_rt_attr_ints(k->node, "perm", &n);
    if (perm && n != (size_t)r)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "perm has %zu entries for rank %d", n, (int)r);
    bool seen[PC_MAX_RANK] = {false};
    int64_t istr[PC_MAX_RANK];
    strides_of(r, x->dims, istr);
    v->rank = r;
    v->base = 0;
    for (int32_t d = 0; d < r; d++) {
        int64_t p = perm ? perm[d] : r - 1 - d; /* default: reverse the axes */
        if (p < 0 || p >= r || seen[p])
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                                "perm is not a permutation of 0..%d (entry %d is %lld)", (int)r - 1, (int)d,
                                (long long)p);
        seen[p] = true;
        v->dims[d] = x->dims[p];
        v->strides[d] = istr[p];
    }
    return check_out(k, 0, x->dtype, r, v->dims);
}

static pc_status transpose_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es;
    view v;
    *scratch = 0;
    pc_status st = start(k, &es);
    return st != PC_OK ? st : transpose_view(k, &v);
}

static pc_status transpose_run(pc_rt_kernel_ctx *k)
{
    view v;
    pc_status st = transpose_view(k, &v);
    if (st != PC_OK) return st;
    if (k->out[0]->n) view_copy(k->out[0]->data, k->in[0]->data, &v, elem_bytes(k->in[0]->dtype));
    return PC_OK;
}

/* ---- Concat, Split */

static pc_status concat_check(pc_rt_kernel_ctx *k, int32_t *axis_out)
{
    const pc_rt_tensor *x0 = k->in[0];
    int32_t r = x0->rank, axis;
    if (k->opset >= 4 && !pc_node_attr(k->node, "axis"))
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'axis' is required");
    if (r == 0) return pc_error_set(k->err, PC_ERR_SHAPE, "inputs must have rank >= 1");
    pc_status st = norm_axis(k, pc_node_attr_int(k->node, "axis", 1), r, "axis", &axis);
    if (st != PC_OK) return st;
    int64_t dims[PC_MAX_RANK];
    memcpy(dims, x0->dims, (size_t)r * sizeof *dims);
    dims[axis] = 0;
    for (uint32_t i = 0; i < k->n_in; i++) {
        const pc_rt_tensor *x = k->in[i];
        char a[DIMS_TEXT], b[DIMS_TEXT];
        if (!x) return pc_error_set(k->err, PC_ERR_ARITY, "input %u is omitted", i);
        if (x->dtype != x0->dtype)
            return pc_error_set(k->err, PC_ERR_TYPE, "input %u is %s, input 0 %s", i, pc_dtype_name(x->dtype),
                                pc_dtype_name(x0->dtype));
        bool ok = x->rank == r;
        for (int32_t d = 0; ok && d < r; d++)
            ok = d == axis || x->dims[d] == x0->dims[d];
        if (!ok)
            return pc_error_set(k->err, PC_ERR_SHAPE,
                                "input %u has dims %s, input 0 %s: they differ off axis %d", i,
                                dims_text(a, x->rank, x->dims), dims_text(b, r, x0->dims), (int)axis);
        if (x->dims[axis] > INT64_MAX - dims[axis])
            return pc_error_set(k->err, PC_ERR_SHAPE, "the concatenated axis overflows");
        dims[axis] += x->dims[axis];
    }
    *axis_out = axis;
    return check_out(k, 0, x0->dtype, r, dims);
}

static pc_status concat_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es;
    int32_t axis;
    *scratch = 0;
    pc_status st = start(k, &es);
    return st != PC_OK ? st : concat_check(k, &axis);
}

static pc_status concat_run(pc_rt_kernel_ctx *k)
{
    int32_t axis;
    pc_status st = concat_check(k, &axis);
    pc_rt_tensor *y = k->out[0];
    if (st != PC_OK || !y->n) return st;
    size_t es = elem_bytes(y->dtype);
    uint64_t outer = prod(y->dims, 0, axis), inner = prod(y->dims, axis + 1, y->rank);
    uint8_t *dst = y->data;
    /* each outer index takes one contiguous block from every input in turn */
    for (uint64_t o = 0; o < outer; o++)
        for (uint32_t i = 0; i < k->n_in; i++) {
            size_t block = (size_t)((uint64_t)k->in[i]->dims[axis] * inner) * es;
            copy_bytes(dst, (const uint8_t *)k->in[i]->data + o * block, block);
            dst += block;
        }
    return PC_OK;
}

/* Split sizes: a list (attribute 'split' before opset 13, input 1 from 13 -- empty means equal parts), or
 * equal parts of ceil(dim / parts), the last one smaller from opset 18. */
typedef struct split_plan {
    int32_t axis;
    int_list list; /* used when list.given */
    int64_t dim, chunk;
} split_plan;

static int64_t split_size(const split_plan *p, uint32_t i)
{
    if (p->list.given) return p->list.v[i];
    int64_t left = p->dim - p->chunk * (int64_t)i;
    return left < p->chunk ? (left < 0 ? 0 : left) : p->chunk;
}

/* *known false when the sizes are an input without values yet. */
static pc_status split_plan_make(pc_rt_kernel_ctx *k, split_plan *p, bool *known)
{
    const pc_rt_tensor *x = k->in[0];
    uint32_t n_out = k->n_out;
    *known = true;
    if (x->rank == 0) return pc_error_set(k->err, PC_ERR_SHAPE, "input 0 must have rank >= 1");
    pc_status st = norm_axis(k, pc_node_attr_int(k->node, "axis", 0), x->rank, "axis", &p->axis);
    if (st != PC_OK) return st;
    p->dim = x->dims[p->axis];
    /* Split-1 took the sizes from input 1 or the attribute; 2..12 from the attribute */
    int64_t from = k->opset < 2 && in_at(k, 1) ? 1 : 13;
    if ((st = get_list(k, "split", from, 1, MAX_LIST, &p->list)) != PC_OK) return st;
    if (!p->list.known) {
        *known = false;
        return PC_OK;
    }
    if (p->list.given && k->opset >= 13 && p->list.n == 0) p->list.given = false;
    if (p->list.given) {
        if (p->list.n != n_out)
            return pc_error_set(k->err, PC_ERR_SHAPE, "split has %zu entries for %u outputs", p->list.n,
                                n_out);
        int64_t sum = 0;
        for (size_t i = 0; i < p->list.n; i++) {
            if (p->list.v[i] < 0 || p->list.v[i] > p->dim - sum)
                return pc_error_set(
                    k->err, PC_ERR_SHAPE,
                    "split entries must be >= 0 and add up to the axis size %lld (entry %zu is "
                    "%lld)",
                    (long long)p->dim, i, (long long)p->list.v[i]);
            sum += p->list.v[i];
        }
        if (sum != p->dim)
            return pc_error_set(k->err, PC_ERR_SHAPE, "split adds up to %lld, the axis size is %lld",
                                (long long)sum, (long long)p->dim);
        return PC_OK;
    }
    int64_t parts = n_out;
    if (k->opset >= 18 && pc_node_attr(k->node, "num_outputs")) {
        parts = pc_node_attr_int(k->node, "num_outputs", 0);
        if (parts != (int64_t)n_out)
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "num_outputs is %lld but the node has %u outputs",
                                (long long)parts, n_out);
    }
    if (parts < 1) return pc_error_set(k->err, PC_ERR_ARITY, "at least one output is required");
    p->chunk = p->dim / parts + (p->dim % parts != 0);
    /* uneven from opset 18: chunks of ceil(dim / parts) while they last (the last ones may be empty) */
    if (p->dim % parts && (k->opset < 18 || p->chunk > p->dim / (parts - 1)))
        return pc_error_set(k->err, PC_ERR_SHAPE, "axis %d of size %lld does not split into %lld parts",
                            (int)p->axis, (long long)p->dim, (long long)parts);
    return PC_OK;
}

static pc_status split_check(pc_rt_kernel_ctx *k, split_plan *p, bool *known)
{
    pc_status st = split_plan_make(k, p, known);
    if (st != PC_OK || !*known) return st;
    const pc_rt_tensor *x = k->in[0];
    int64_t dims[PC_MAX_RANK];
    memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
    for (uint32_t i = 0; i < k->n_out; i++) {
        dims[p->axis] = split_size(p, i);
        if ((st = check_out(k, i, x->dtype, x->rank, dims)) != PC_OK) return st;
    }
    return PC_OK;
}

static pc_status split_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es;
    split_plan p;
    bool known;
    *scratch = 0;
    const pc_rt_tensor *x = in_at(k, 0);
    if (!x) return pc_error_set(k->err, PC_ERR_ARITY, "input 0 is required");
    if (!(es = elem_bytes(x->dtype)))
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "input 0 of element type %s (not moved)",
                            pc_dtype_name(x->dtype));
    return split_check(k, &p, &known);
}

static pc_status split_run(pc_rt_kernel_ctx *k)
{
    split_plan p;
    bool known;
    pc_status st = split_check(k, &p, &known);
    if (st != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0];
    if (!x->n) return PC_OK;
    size_t es = elem_bytes(x->dtype);
    uint64_t outer = prod(x->dims, 0, p.axis), inner = prod(x->dims, p.axis + 1, x->rank);
    const uint8_t *src = x->data;
    /* each outer index hands one contiguous block to every output in turn (omitted ones skip theirs) */
    for (uint64_t o = 0; o < outer; o++)
        for (uint32_t i = 0; i < k->n_out; i++) {
            size_t block = (size_t)((uint64_t)split_size(&p, i) * inner) * es;
            if (k->out[i]) copy_bytes((uint8_t *)k->out[i]->data + o * block, src, block);
            src += block;
        }
    return PC_OK;
}

/* ---- Slice */

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* starts, ends, axes, steps: attributes before opset 10 (no steps), inputs 1..4 from then on. *known false
 * when an input has no values yet. */
static pc_status slice_view(pc_rt_kernel_ctx *k, view *v, bool *known)
{
    static const char *const names[4] = {"starts", "ends", "axes", "steps"};
    const pc_rt_tensor *x = k->in[0];
    int32_t r = x->rank;
    int_list l[4];
    pc_status st;
    *known = true;
    for (int i = 0; i < 4; i++) {
        if (k->opset < 10 && i == 3) {
            l[i].given = false;
            l[i].n = 0;
            continue;
        }
        if ((st = get_list(k, names[i], 10, (uint32_t)i + 1, PC_MAX_RANK, &l[i])) != PC_OK) return st;
        if (i < 2 && !l[i].given) return pc_error_set(k->err, PC_ERR_ARITY, "%s are required", names[i]);
        if (!l[i].known) *known = false;
    }
    if (!*known) return PC_OK;
    size_t n = l[0].n;
    if (l[1].n != n || (l[2].given && l[2].n != n) || (l[3].given && l[3].n != n))
        return pc_error_set(k->err, PC_ERR_SHAPE,
                            "starts, ends, axes and steps have %zu, %zu, %zu and %zu entries", n, l[1].n,
                            l[2].n, l[3].n);
    int64_t start[PC_MAX_RANK], step[PC_MAX_RANK];
    bool seen[PC_MAX_RANK] = {false};
    for (int32_t d = 0; d < r; d++) {
        start[d] = 0;
        step[d] = 1;
        v->dims[d] = x->dims[d];
    }
    for (size_t i = 0; i < n; i++) {
        int32_t ax;
        if ((st = norm_axis(k, l[2].given ? l[2].v[i] : (int64_t)i, r, "axes value", &ax)) != PC_OK)
            return st;
        if (seen[ax]) return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "axes repeat axis %d", (int)ax);
        seen[ax] = true;
        int64_t dim = x->dims[ax], s = l[0].v[i], e = l[1].v[i], p = l[3].given ? l[3].v[i] : 1, cnt;
        if (p == 0) return pc_error_set(k->err, PC_ERR_VALUE, "steps[%zu] is 0", i);
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        if (dim == 0) {
            cnt = 0;
        } else if (p > 0) { /* forward: start and end clamp to [0, dim] */
            s = clamp64(s, 0, dim);
            e = clamp64(e, 0, dim);
            cnt = e > s ? (e - s - 1) / p + 1 : 0;
        } else { /* backward: start clamps to [0, dim - 1], end to [-1, dim - 1] */
            s = clamp64(s, 0, dim - 1);
            e = clamp64(e, -1, dim - 1);
            cnt = s > e ? (int64_t)(((uint64_t)(s - e) - 1) / ((uint64_t)0 - (uint64_t)p)) + 1 : 0;
        }
        start[ax] = cnt ? s : 0;
        step[ax] = cnt > 1 ? p : 0; /* |p| < dim when a second element exists: no stride overflow */
        v->dims[ax] = cnt;
    }
    if ((st = check_out(k, 0, x->dtype, r, v->dims)) != PC_OK) return st;
    int64_t istr[PC_MAX_RANK];
    strides_of(r, x->dims, istr);
    uint64_t base = 0; /* exact for a non-empty output */
    for (int32_t d = 0; d < r; d++) {
        base += (uint64_t)start[d] * (uint64_t)istr[d];
        v->strides[d] = (int64_t)((uint64_t)step[d] * (uint64_t)istr[d]);
    }
    v->rank = r;
    v->base = (int64_t)base;
    return PC_OK;
}

static pc_status slice_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es;
    view v;
    bool known;
    *scratch = 0;
    pc_status st = start(k, &es);
    return st != PC_OK ? st : slice_view(k, &v, &known);
}

static pc_status slice_run(pc_rt_kernel_ctx *k)
{
    view v;
    bool known;
    pc_status st = slice_view(k, &v, &known);
    if (st != PC_OK) return st;
    if (k->out[0]->n) view_copy(k->out[0]->data, k->in[0]->data, &v, elem_bytes(k->in[0]->dtype));
    return PC_OK;
}

/* ---- Gather */

static pc_status gather_check(pc_rt_kernel_ctx *k, int32_t *axis)
{
    const pc_rt_tensor *x = k->in[0], *ind = in_at(k, 1);
    if (!ind) return pc_error_set(k->err, PC_ERR_ARITY, "input 1 'indices' is required");
    if (ind->dtype != PC_DTYPE_INT64 && ind->dtype != PC_DTYPE_INT32)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "indices of type %s (int32 and int64 are)",
                            pc_dtype_name(ind->dtype));
    if (x->rank == 0) return pc_error_set(k->err, PC_ERR_SHAPE, "input 0 'data' must have rank >= 1");
    pc_status st = norm_axis(k, pc_node_attr_int(k->node, "axis", 0), x->rank, "axis", axis);
    if (st != PC_OK) return st;
    int32_t r = x->rank - 1 + ind->rank;
    if (r > PC_MAX_RANK)
        return pc_error_set(k->err, PC_ERR_SHAPE, "the output rank %d passes the limit", (int)r);
    int64_t dims[PC_MAX_RANK];
    memcpy(dims, x->dims, (size_t)*axis * sizeof *dims);
    memcpy(dims + *axis, ind->dims, (size_t)ind->rank * sizeof *dims);
    memcpy(dims + *axis + ind->rank, x->dims + *axis + 1, (size_t)(x->rank - *axis - 1) * sizeof *dims);
    return check_out(k, 0, x->dtype, r, dims);
}

static pc_status gather_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es;
    int32_t axis;
    *scratch = 0;
    pc_status st = start(k, &es);
    return st != PC_OK ? st : gather_check(k, &axis);
}

/* One block of n bytes: the common element sizes as fixed-size copies. */
static inline void copy_block(uint8_t *dst, const uint8_t *src, size_t n)
{
    switch (n) {
    case 1:
        *dst = *src;
        break;
    case 2:
        memcpy(dst, src, 2);
        break;
    case 4:
        memcpy(dst, src, 4);
        break;
    case 8:
        memcpy(dst, src, 8);
        break;
    default:
        memcpy(dst, src, n);
    }
}

#define GATHER_LOOP(IT)                                                                                      \
    do {                                                                                                     \
        const IT *iv = ind->data;                                                                            \
        for (uint64_t j = 0; j < ind->n; j++)                                                                \
            if (iv[j] < -dim || iv[j] >= dim) {                                                              \
                bad = j;                                                                                     \
                badv = iv[j];                                                                                \
                break;                                                                                       \
            }                                                                                                \
        if (bad != UINT64_MAX || !y->n) break;                                                               \
        for (uint64_t o = 0; o < outer; o++) {                                                               \
            const uint8_t *base = src + o * (uint64_t)dim * block;                                           \
            for (uint64_t j = 0; j < ind->n; j++) {                                                          \
                int64_t v = iv[j] < 0 ? (int64_t)iv[j] + dim : (int64_t)iv[j];                               \
                copy_block(dst, base + (uint64_t)v * block, block);                                          \
                dst += block;                                                                                \
            }                                                                                                \
        }                                                                                                    \
    } while (0)

static pc_status gather_run(pc_rt_kernel_ctx *k)
{
    int32_t axis;
    pc_status st = gather_check(k, &axis);
    if (st != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0], *ind = k->in[1];
    pc_rt_tensor *y = k->out[0];
    int64_t dim = x->dims[axis];
    uint64_t outer = prod(x->dims, 0, axis), bad = UINT64_MAX;
    size_t block = (size_t)prod(x->dims, axis + 1, x->rank) * elem_bytes(x->dtype);
    int64_t badv = 0;
    const uint8_t *src = x->data;
    uint8_t *dst = y->data;
    /* every index is checked before anything is written */
    if (ind->dtype == PC_DTYPE_INT32)
        GATHER_LOOP(int32_t);
    else
        GATHER_LOOP(int64_t);
    if (bad != UINT64_MAX)
        return pc_error_set(
            k->err, PC_ERR_VALUE, "indices[%llu] = %lld is out of range [%lld, %lld) for axis %d",
            (unsigned long long)bad, (long long)badv, (long long)-dim, (long long)dim, (int)axis);
    return PC_OK;
}

/* ---- Cast and value conversions */

/* float -> integer truncates toward zero through int64, saturating there (NaN gives 0), then wraps to the
 * target width: ONNX Runtime's static_cast for every value it defines, and a defined answer for the rest. */
static inline int64_t f64_to_i64(double v)
{
    if (v != v) return 0;
    if (v >= 0x1p63) return INT64_MAX;
    if (v <= -0x1p63) return INT64_MIN;
    return (int64_t)v;
}

static inline uint64_t f64_to_u64(double v)
{
    if (v >= 0x1p64) return UINT64_MAX;
    if (v > 0) return (uint64_t)v;
    return (uint64_t)f64_to_i64(v);
}

/* float16 keeps a NaN's sign (pc_half_to_double drops it) */
static inline double half_in(uint16_t h)
{
    double v = pc_half_to_double(h);
    return v != v && (h & 0x8000u) ? -v : v;
}

/* Conversions from the three wide kinds a source is read as: s (int64_t), u (uint64_t), d (double). Integer
 * targets take the two's complement bits and keep their width's low bits. */
static inline float s_f32(int64_t v)
{
    return (float)v;
}
static inline double s_f64(int64_t v)
{
    return (double)v;
}
static inline uint16_t s_f16(int64_t v)
{
    return pc_half_from_double((double)v);
}
static inline uint16_t s_bf16(int64_t v)
{
    return pc_bfloat16_from_double((double)v);
}
static inline uint64_t s_bits(int64_t v)
{
    return (uint64_t)v;
}
static inline uint64_t s_u64(int64_t v)
{
    return (uint64_t)v;
}
static inline uint8_t s_bool(int64_t v)
{
    return v != 0;
}
static inline float u_f32(uint64_t v)
{
    return (float)v;
}
static inline double u_f64(uint64_t v)
{
    return (double)v;
}
static inline uint16_t u_f16(uint64_t v)
{
    return pc_half_from_double((double)v);
}
static inline uint16_t u_bf16(uint64_t v)
{
    return pc_bfloat16_from_double((double)v);
}
static inline uint64_t u_bits(uint64_t v)
{
    return v;
}
static inline uint64_t u_u64(uint64_t v)
{
    return v;
}
static inline uint8_t u_bool(uint64_t v)
{
    return v != 0;
}
static inline float d_f32(double v)
{
    return (float)v;
}
static inline double d_f64(double v)
{
    return v;
}
static inline uint16_t d_f16(double v)
{
    return pc_half_from_double(v);
}
static inline uint16_t d_bf16(double v)
{
    return pc_bfloat16_from_double(v);
}
static inline uint64_t d_bits(double v)
{
    return (uint64_t)f64_to_i64(v);
}
static inline uint64_t d_u64(double v)
{
    return f64_to_u64(v);
}
static inline uint8_t d_bool(double v)
{
    return v != 0; /* NaN is true */
}

#define CAST_LOOP(ST, DT, EXPR)                                                                              \
    do {                                                                                                     \
        const ST *xs = src;                                                                                  \
        DT *ys = dst;                                                                                        \
        for (uint64_t i = 0; i < n; i++) {                                                                   \
            ST v = xs[i];                                                                                    \
            ys[i] = (DT)(EXPR);                                                                              \
        }                                                                                                    \
    } while (0)

/* Narrow signed targets convert from their unsigned twin: modular on every compiler passcheck builds with. */
#define CAST_FROM(ST, K, LOAD)                                                                               \
    switch (to) {                                                                                            \
    case PC_DTYPE_FLOAT:                                                                                     \
        CAST_LOOP(ST, float, K##_f32(LOAD));                                                                 \
        return true;                                                                                         \
    case PC_DTYPE_DOUBLE:                                                                                    \
        CAST_LOOP(ST, double, K##_f64(LOAD));                                                                \
        return true;                                                                                         \
    case PC_DTYPE_FLOAT16:                                                                                   \
        CAST_LOOP(ST, uint16_t, K##_f16(LOAD));                                                              \
        return true;                                                                                         \
    case PC_DTYPE_BFLOAT16:                                                                                  \
        CAST_LOOP(ST, uint16_t, K##_bf16(LOAD));                                                             \
        return true;                                                                                         \
    case PC_DTYPE_INT8:                                                                                      \
        CAST_LOOP(ST, int8_t, (int8_t)(uint8_t)K##_bits(LOAD));                                              \
        return true;                                                                                         \
    case PC_DTYPE_INT16:                                                                                     \
        CAST_LOOP(ST, int16_t, (int16_t)(uint16_t)K##_bits(LOAD));                                           \
        return true;                                                                                         \
    case PC_DTYPE_INT32:                                                                                     \
        CAST_LOOP(ST, int32_t, (int32_t)(uint32_t)K##_bits(LOAD));                                           \
        return true;                                                                                         \
    case PC_DTYPE_INT64:                                                                                     \
        CAST_LOOP(ST, int64_t, (int64_t)K##_bits(LOAD));                                                     \
        return true;                                                                                         \
    case PC_DTYPE_UINT8:                                                                                     \
        CAST_LOOP(ST, uint8_t, (uint8_t)K##_bits(LOAD));                                                     \
        return true;                                                                                         \
    case PC_DTYPE_UINT16:                                                                                    \
        CAST_LOOP(ST, uint16_t, (uint16_t)K##_bits(LOAD));                                                   \
        return true;                                                                                         \
    case PC_DTYPE_UINT32:                                                                                    \
        CAST_LOOP(ST, uint32_t, (uint32_t)K##_bits(LOAD));                                                   \
        return true;                                                                                         \
    case PC_DTYPE_UINT64:                                                                                    \
        CAST_LOOP(ST, uint64_t, K##_u64(LOAD));                                                              \
        return true;                                                                                         \
    case PC_DTYPE_BOOL:                                                                                      \
        CAST_LOOP(ST, uint8_t, K##_bool(LOAD));                                                              \
        return true;                                                                                         \
    default:                                                                                                 \
        return false;                                                                                        \
    }

/* The types Cast converts between (both ways, any pair). */
static bool cast_type(pc_dtype t)
{
    switch (t) {
    case PC_DTYPE_FLOAT:
    case PC_DTYPE_DOUBLE:
    case PC_DTYPE_FLOAT16:
    case PC_DTYPE_BFLOAT16:
    case PC_DTYPE_INT8:
    case PC_DTYPE_INT16:
    case PC_DTYPE_INT32:
    case PC_DTYPE_INT64:
    case PC_DTYPE_UINT8:
    case PC_DTYPE_UINT16:
    case PC_DTYPE_UINT32:
    case PC_DTYPE_UINT64:
    case PC_DTYPE_BOOL:
        return true;
    default:
        return false;
    }
}

/* n elements of type from at src converted to type to at dst; false for a pair it does not convert. */
static bool convert(pc_dtype from, pc_dtype to, const void *src, void *dst, uint64_t n)
{
    switch (from) {
    case PC_DTYPE_FLOAT:
        CAST_FROM(float, d, (double)v)
    case PC_DTYPE_DOUBLE:
        CAST_FROM(double, d, v)
    case PC_DTYPE_FLOAT16:
        CAST_FROM(uint16_t, d, half_in(v))
    case PC_DTYPE_BFLOAT16:
        CAST_FROM(uint16_t, d, pc_bfloat16_to_double(v))
    case PC_DTYPE_INT8:
        CAST_FROM(int8_t, s, (int64_t)v)
    case PC_DTYPE_INT16:
        CAST_FROM(int16_t, s, (int64_t)v)
    case PC_DTYPE_INT32:
        CAST_FROM(int32_t, s, (int64_t)v)
    case PC_DTYPE_INT64:
        CAST_FROM(int64_t, s, v)
    case PC_DTYPE_UINT8:
        CAST_FROM(uint8_t, s, (int64_t)v)
    case PC_DTYPE_UINT16:
        CAST_FROM(uint16_t, s, (int64_t)v)
    case PC_DTYPE_UINT32:
        CAST_FROM(uint32_t, s, (int64_t)v)
    case PC_DTYPE_UINT64:
        CAST_FROM(uint64_t, u, v)
    case PC_DTYPE_BOOL:
        CAST_FROM(uint8_t, s, (int64_t)(v != 0))
    default:
        return false;
    }
}

/* Cast's target: attribute 'to', an int (a type name string before opset 6); CastLike's: input 1's type. */
static pc_status cast_target(pc_rt_kernel_ctx *k, pc_dtype *to)
{
    *to = PC_DTYPE_UNDEFINED;
    if (strcmp(k->node->op_type, "CastLike") == 0) {
        const pc_rt_tensor *like = in_at(k, 1);
        if (!like) return pc_error_set(k->err, PC_ERR_ARITY, "input 1 'target_type' is required");
        *to = like->dtype;
        return PC_OK;
    }
    const pc_attr *a = pc_node_attr(k->node, "to");
    if (!a) return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'to' is required");
    if (a->type == PC_ATTR_INT) {
        if (!pc_dtype_is_valid((int32_t)a->i) || a->i != (int32_t)a->i)
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'to' = %lld is no element type",
                                (long long)a->i);
        *to = (pc_dtype)a->i;
        return PC_OK;
    }
    if (a->type == PC_ATTR_STRING && a->s.data)
        for (int t = 1; t < PC_DTYPE_COUNT; t++) {
            const char *name = pc_dtype_name((pc_dtype)t);
            size_t i = 0;
            while (i < a->s.len && name[i] && tolower(a->s.data[i]) == name[i])
                i++;
            if (i == a->s.len && !name[i]) {
                *to = (pc_dtype)t;
                return PC_OK;
            }
        }
    return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'to' names no element type");
}

static pc_status cast_check(pc_rt_kernel_ctx *k)
{
    const pc_rt_tensor *x = in_at(k, 0);
    pc_dtype to;
    if (!x) return pc_error_set(k->err, PC_ERR_ARITY, "input 0 is required");
    if (!out_at(k, 0)) return pc_error_set(k->err, PC_ERR_ARITY, "output 0 is required");
    pc_status st = cast_target(k, &to);
    if (st != PC_OK) return st;
    if (!cast_type(x->dtype) || !cast_type(to))
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "Cast from %s to %s", pc_dtype_name(x->dtype),
                            pc_dtype_name(to));
    return check_out(k, 0, to, x->rank, x->dims);
}

static pc_status cast_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    *scratch = 0;
    return cast_check(k);
}

static pc_status cast_run(pc_rt_kernel_ctx *k)
{
    pc_status st = cast_check(k);
    if (st != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0];
    pc_rt_tensor *y = k->out[0];
    if (!x->n) return PC_OK;
    if (x->dtype == y->dtype) {
        copy_bytes(y->data, x->data, (size_t)x->n * elem_bytes(x->dtype));
        return PC_OK;
    }
    if (!convert(x->dtype, y->dtype, x->data, y->data, x->n))
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "Cast from %s to %s", pc_dtype_name(x->dtype),
                            pc_dtype_name(y->dtype));
    return PC_OK;
}

/* ---- Pad */

typedef enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP } pad_mode;

typedef struct pad_plan {
    pad_mode mode;
    int64_t pb[PC_MAX_RANK], pe[PC_MAX_RANK];    /* pads at the start and end (negative: crop) */
    int64_t len[PC_MAX_RANK], crop[PC_MAX_RANK]; /* the input's extent left after cropping, and its start */
    int64_t dims[PC_MAX_RANK];
    uint8_t value[16]; /* the constant, one element */
} pad_plan;

/* Source position along an axis of length len for padded position q (negative: before the data); -1 is the
 * constant. reflect and wrap repeat periodically, as numpy.pad does. */
static int64_t pad_source(pad_mode mode, int64_t q, int64_t len)
{
    if (q >= 0 && q < len) return q;
    switch (mode) {
    case PAD_EDGE:
        return q < 0 ? 0 : len - 1;
    case PAD_WRAP:
        return ((q % len) + len) % len;
    case PAD_REFLECT: {
        if (len == 1) return 0;
        int64_t period = 2 * (len - 1);
        q = ((q % period) + period) % period;
        return q < len ? q : period - q;
    }
    default:
        return -1;
    }
}

/* The element v of type dt written to out (the opset < 11 'value' attribute is a float for every type). */
static void store_double(pc_dtype dt, double v, uint8_t *out)
{
    if (!convert(PC_DTYPE_DOUBLE, dt, &v, out, 1)) memset(out, 0, 8);
}

/* *known false when pads (or the constant) are inputs without values yet. */
static pc_status pad_plan_make(pc_rt_kernel_ctx *k, pad_plan *p, bool *known)
{
    const pc_rt_tensor *x = k->in[0];
    int32_t r = x->rank;
    const char *m = pc_node_attr_string(k->node, "mode", "constant");
    *known = true;
    if (strcmp(m, "constant") == 0)
        p->mode = PAD_CONSTANT;
    else if (strcmp(m, "reflect") == 0)
        p->mode = PAD_REFLECT;
    else if (strcmp(m, "edge") == 0)
        p->mode = PAD_EDGE;
    else if (strcmp(m, "wrap") == 0 && k->opset >= 19)
        p->mode = PAD_WRAP;
    else
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "Pad mode '%s' at opset %lld", m,
                            (long long)k->opset);
    if (k->opset >= 18 && in_at(k, 3))
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "Pad's input 3 'axes'");
    int_list pads;
    pc_status st = get_list(k, k->opset < 2 ? "paddings" : "pads", 11, 1, MAX_LIST, &pads);
    if (st != PC_OK) return st;
    if (!pads.given)
        return pc_error_set(k->err, PC_ERR_ARITY,
                            k->opset < 11 ? "attribute 'pads' is required" : "input 1 'pads' is required");
    memset(p->value, 0, sizeof p->value);
    const pc_rt_tensor *cv = in_at(k, 2);
    if (k->opset < 11) {
        store_double(x->dtype, pc_node_attr_float(k->node, "value", 0.0f), p->value);
    } else if (cv) {
        if (cv->dtype != x->dtype)
            return pc_error_set(k->err, PC_ERR_TYPE, "input 2 'constant_value' is %s but input 0 is %s",
                                pc_dtype_name(cv->dtype), pc_dtype_name(x->dtype));
        if (!has_data(cv))
            *known = false;
        else if (cv->n) /* empty: the default 0 */
            memcpy(p->value, cv->data, elem_bytes(x->dtype));
    }
    if (!pads.known) *known = false;
    if (!*known) return PC_OK;
    if (pads.n != 2 * (size_t)r)
        return pc_error_set(k->err, PC_ERR_SHAPE, "pads has %zu entries for rank %d", pads.n, (int)r);
    for (int32_t d = 0; d < r; d++) {
        int64_t dim = x->dims[d], b = pads.v[d], e = pads.v[d + r];
        p->pb[d] = b;
        p->pe[d] = e;
        /* negative pads crop first; the rest pads what is left (as the ONNX reference does) */
        if (b < -dim || e < -dim || (p->len[d] = dim + (b < 0 ? b : 0) + (e < 0 ? e : 0)) < 0)
            return pc_error_set(k->err, PC_ERR_SHAPE,
                                "pads %lld and %lld crop more than axis %d of size %lld", (long long)b,
                                (long long)e, (int)d, (long long)dim);
        p->crop[d] = b < 0 ? -b : 0;
        int64_t add = (b > 0 ? b : 0), add2 = (e > 0 ? e : 0);
        if (add > INT64_MAX - p->len[d] - add2)
            return pc_error_set(k->err, PC_ERR_SHAPE, "pads of axis %d overflow", (int)d);
        p->dims[d] = p->len[d] + add + add2;
        if (p->mode != PAD_CONSTANT && p->len[d] == 0 && p->dims[d] > 0)
            return pc_error_set(k->err, PC_ERR_SHAPE, "cannot pad the empty axis %d in mode '%s'", (int)d, m);
    }
    return check_out(k, 0, x->dtype, r, p->dims);
}

static pc_status pad_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es;
    pad_plan p;
    bool known;
    *scratch = 0;
    pc_status st = start(k, &es);
    return st != PC_OK ? st : pad_plan_make(k, &p, &known);
}

/* Row by row: the axes after the last padded one form contiguous blocks; the last padded axis is a row of
 * [pads][cropped input][pads]; the axes before it are an odometer whose source (or "all constant") is found
 * per row. */
static pc_status pad_run(pc_rt_kernel_ctx *k)
{
    pad_plan p;
    bool known;
    pc_status st = pad_plan_make(k, &p, &known);
    if (st != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0];
    pc_rt_tensor *y = k->out[0];
    size_t es = elem_bytes(x->dtype);
    int32_t r = x->rank, last = r - 1;
    if (!y->n) return PC_OK;
    while (last >= 0 && p.pb[last] == 0 && p.pe[last] == 0)
        last--;
    if (last < 0) {
        copy_bytes(y->data, x->data, (size_t)x->n * es);
        return PC_OK;
    }
    uint64_t blk = prod(x->dims, last + 1, r); /* unpadded axes: > 0 as the output is not empty */
    size_t bb = (size_t)blk * es;
    int64_t istr[PC_MAX_RANK], idx[PC_MAX_RANK];
    strides_of(r, x->dims, istr);
    for (int32_t d = 0; d < last; d++)
        idx[d] = 0;
    int64_t pre = p.pb[last] > 0 ? p.pb[last] : 0, len = p.len[last], od = p.dims[last];
    const uint8_t *src = x->data;
    uint8_t *dst = y->data;
    for (;;) {
        bool constant = false;
        uint64_t off = 0;
        for (int32_t d = 0; d < last && !constant; d++) {
            int64_t s = pad_source(p.mode, idx[d] - (p.pb[d] > 0 ? p.pb[d] : 0), p.len[d]);
            constant = s < 0;
            off += (uint64_t)(s + p.crop[d]) * (uint64_t)istr[d];
        }
        if (constant) {
            fill_elems(dst, p.value, (uint64_t)od * blk, es);
        } else { /* only reached when the input is not empty */
            const uint8_t *row = src + off * es;
            for (int64_t q = 0; q < od; q++) {
                if (q == pre && len) { /* the input's run, in one copy */
                    memcpy(dst + (size_t)q * bb, row + (size_t)p.crop[last] * bb, (size_t)len * bb);
                    q += len - 1;
                    continue;
                }
                int64_t s = pad_source(p.mode, q - pre, len);
                if (s < 0)
                    fill_elems(dst + (size_t)q * bb, p.value, blk, es);
                else
                    memcpy(dst + (size_t)q * bb, row + (size_t)(s + p.crop[last]) * bb, bb);
            }
        }
        dst += (size_t)od * bb;
        int32_t d = last - 1;
        for (; d >= 0; d--) {
            if (++idx[d] < p.dims[d]) break;
            idx[d] = 0;
        }
        if (d < 0) return PC_OK;
    }
}

/* ---- Tile, Expand */

/* Tile as a view: output axis d of size dims[d] * rep[d] is two axes, (rep[d], stride 0) and (dims[d],
 * the input's stride). *known false when repeats have no values yet. */
static pc_status tile_view(pc_rt_kernel_ctx *k, view *v, bool *known)
{
    const pc_rt_tensor *x = k->in[0];
    int32_t r = x->rank;
    int_list rep;
    pc_status st = get_list(k, "repeats", 0, 1, PC_MAX_RANK, &rep);
    if (st != PC_OK) return st;
    if (!rep.given) return pc_error_set(k->err, PC_ERR_ARITY, "input 1 'repeats' is required");
    *known = rep.known;
    if (!rep.known) return PC_OK;
    if (rep.n != (size_t)r)
        return pc_error_set(k->err, PC_ERR_SHAPE, "repeats has %zu entries for rank %d", rep.n, (int)r);
    int64_t dims[PC_MAX_RANK], istr[PC_MAX_RANK];
    strides_of(r, x->dims, istr);
    for (int32_t d = 0; d < r; d++) {
        if (rep.v[d] < 0)
            return pc_error_set(k->err, PC_ERR_VALUE, "repeats[%d] = %lld", (int)d, (long long)rep.v[d]);
        if (x->dims[d] && rep.v[d] > INT64_MAX / x->dims[d])
            return pc_error_set(k->err, PC_ERR_SHAPE, "repeats[%d] overflows the output size", (int)d);
        dims[d] = x->dims[d] * rep.v[d];
        v->dims[2 * d] = rep.v[d];
        v->strides[2 * d] = 0;
        v->dims[2 * d + 1] = x->dims[d];
        v->strides[2 * d + 1] = istr[d];
    }
    v->rank = 2 * r;
    v->base = 0;
    return check_out(k, 0, x->dtype, r, dims);
}

static pc_status tile_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es;
    view v;
    bool known;
    *scratch = 0;
    pc_status st = start(k, &es);
    return st != PC_OK ? st : tile_view(k, &v, &known);
}

static pc_status tile_run(pc_rt_kernel_ctx *k)
{
    view v;
    bool known;
    pc_status st = tile_view(k, &v, &known);
    if (st != PC_OK) return st;
    if (k->out[0]->n) view_copy(k->out[0]->data, k->in[0]->data, &v, elem_bytes(k->in[0]->dtype));
    return PC_OK;
}

/* Expand: bidirectional broadcast of the input against input 1 'shape'; broadcast axes have stride 0. */
static pc_status expand_view(pc_rt_kernel_ctx *k, view *v, bool *known)
{
    const pc_rt_tensor *x = k->in[0];
    int_list shape;
    pc_status st = get_list(k, "shape", 0, 1, PC_MAX_RANK, &shape);
    if (st != PC_OK) return st;
    if (!shape.given) return pc_error_set(k->err, PC_ERR_ARITY, "input 1 'shape' is required");
    *known = shape.known;
    if (!shape.known) return PC_OK;
    int32_t n = (int32_t)shape.n, r = x->rank > n ? x->rank : n;
    int64_t istr[PC_MAX_RANK];
    strides_of(x->rank, x->dims, istr);
    for (int32_t d = 0; d < r; d++) {
        int32_t xi = d - (r - x->rank), si = d - (r - n);
        int64_t a = xi >= 0 ? x->dims[xi] : 1, b = si >= 0 ? shape.v[si] : 1;
        if (b < 0) return pc_error_set(k->err, PC_ERR_SHAPE, "shape[%d] = %lld", (int)si, (long long)b);
        if (a == b || b == 1)
            v->dims[d] = a;
        else if (a == 1)
            v->dims[d] = b;
        else
            return pc_error_set(k->err, PC_ERR_SHAPE, "input dim %d (%lld) does not broadcast to %lld",
                                (int)xi, (long long)a, (long long)b);
        v->strides[d] = xi >= 0 && a != 1 ? istr[xi] : 0;
    }
    v->rank = r;
    v->base = 0;
    return check_out(k, 0, x->dtype, r, v->dims);
}

static pc_status expand_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es;
    view v;
    bool known;
    *scratch = 0;
    pc_status st = start(k, &es);
    return st != PC_OK ? st : expand_view(k, &v, &known);
}

static pc_status expand_run(pc_rt_kernel_ctx *k)
{
    view v;
    bool known;
    pc_status st = expand_view(k, &v, &known);
    if (st != PC_OK) return st;
    if (k->out[0]->n) view_copy(k->out[0]->data, k->in[0]->data, &v, elem_bytes(k->in[0]->dtype));
    return PC_OK;
}

/* ---- DepthToSpace, SpaceToDepth */

/* Both are a reshape and a transpose: a 6-axis view. NCHW DepthToSpace writes [N, C', H, b, W, b] from
 * channel (i*b + j)*C' + c (DCR) or c*b*b + i*b + j (CRD); SpaceToDepth writes [N, b, b, C, H/b, W/b]
 * from (h*b + i, w*b + j). The NHWC forms move the channel axis last. */
static pc_status depth_space_view(pc_rt_kernel_ctx *k, bool to_space, view *v)
{
    const pc_rt_tensor *x = k->in[0];
    bool nhwc = pc_name_eq(k->node->domain, PC_NHWC_DOMAIN);
    char buf[DIMS_TEXT];
    if (x->rank != 4)
        return pc_error_set(k->err, PC_ERR_SHAPE, "input 0 must have rank 4, not dims %s",
                            dims_text(buf, x->rank, x->dims));
    if (!pc_node_attr(k->node, "blocksize"))
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'blocksize' is required");
    int64_t b = pc_node_attr_int(k->node, "blocksize", 0);
    if (b <= 0 || b > INT32_MAX)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "blocksize %lld is out of range", (long long)b);
    bool crd = false;
    if (to_space && (k->opset >= 11 || nhwc)) {
        const char *m = pc_node_attr_string(k->node, "mode", "DCR");
        if (strcmp(m, "CRD") == 0)
            crd = true;
        else if (strcmp(m, "DCR") != 0)
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "mode '%s' is neither DCR nor CRD", m);
    }
    int64_t N = x->dims[0], C = x->dims[nhwc ? 3 : 1], H = x->dims[nhwc ? 1 : 2], W = x->dims[nhwc ? 2 : 3];
    int64_t sc = nhwc ? 1 : H * W, sh = nhwc ? W * C : W, sw = nhwc ? C : 1, sn = C * H * W, bb = b * b;
    int64_t dims[4];
    if (to_space) {
        if (C % bb)
            return pc_error_set(k->err, PC_ERR_SHAPE,
                                "channels %lld are not a multiple of blocksize^2 = %lld", (long long)C,
                                (long long)bb);
        if (H > INT64_MAX / b || W > INT64_MAX / b)
            return pc_error_set(k->err, PC_ERR_SHAPE, "the output size overflows");
        int64_t c2 = C / bb;
        /* strides of the channel's parts: channel = ci*s_c + i*s_i + j*s_j */
        int64_t s_c = crd ? bb * sc : sc, s_i = crd ? b * sc : b * c2 * sc, s_j = crd ? sc : c2 * sc;
        int64_t vd[6] = {N, c2, H, b, W, b}, vs[6] = {sn, s_c, sh, s_i, sw, s_j};
        if (nhwc) { /* [N, H, b, W, b, C'] */
            int64_t nd[6] = {N, H, b, W, b, c2}, ns[6] = {sn, sh, s_i, sw, s_j, s_c};
            memcpy(vd, nd, sizeof vd);
            memcpy(vs, ns, sizeof vs);
        }
        memcpy(v->dims, vd, sizeof vd);
        memcpy(v->strides, vs, sizeof vs);
        dims[0] = N;
        dims[nhwc ? 3 : 1] = c2;
        dims[nhwc ? 1 : 2] = H * b;
        dims[nhwc ? 2 : 3] = W * b;
    } else {
        if (H % b || W % b)
            return pc_error_set(k->err, PC_ERR_SHAPE,
                                "height %lld and width %lld are not multiples of blocksize %lld",
                                (long long)H, (long long)W, (long long)b);
        if (C > INT64_MAX / bb) return pc_error_set(k->err, PC_ERR_SHAPE, "the output size overflows");
        int64_t vd[6] = {N, b, b, C, H / b, W / b}, vs[6] = {sn, sh, sw, sc, b * sh, b * sw};
        if (nhwc) { /* [N, H/b, W/b, b, b, C] */
            int64_t nd[6] = {N, H / b, W / b, b, b, C}, ns[6] = {sn, b * sh, b * sw, sh, sw, sc};
            memcpy(vd, nd, sizeof vd);
            memcpy(vs, ns, sizeof vs);
        }
        memcpy(v->dims, vd, sizeof vd);
        memcpy(v->strides, vs, sizeof vs);
        dims[0] = N;
        dims[nhwc ? 3 : 1] = C * bb;
        dims[nhwc ? 1 : 2] = H / b;
        dims[nhwc ? 2 : 3] = W / b;
    }
    v->rank = 6;
    v->base = 0;
    return check_out(k, 0, x->dtype, 4, dims);
}

static pc_status depth_to_space_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es;
    view v;
    *scratch = 0;
    pc_status st = start(k, &es);
    return st != PC_OK ? st : depth_space_view(k, true, &v);
}

static pc_status space_to_depth_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es;
    view v;
    *scratch = 0;
    pc_status st = start(k, &es);
    return st != PC_OK ? st : depth_space_view(k, false, &v);
}

static pc_status depth_space_run(pc_rt_kernel_ctx *k, bool to_space)
{
    view v;
    pc_status st = depth_space_view(k, to_space, &v);
    if (st != PC_OK) return st;
    if (k->out[0]->n) view_copy(k->out[0]->data, k->in[0]->data, &v, elem_bytes(k->in[0]->dtype));
    return PC_OK;
}

static pc_status depth_to_space_run(pc_rt_kernel_ctx *k)
{
    return depth_space_run(k, true);
}

static pc_status space_to_depth_run(pc_rt_kernel_ctx *k)
{
    return depth_space_run(k, false);
}

/* ---- Shape, Size, ConstantOfShape, Range */

/* Shape and Size read only input 0's dims, so they take any element type. */
static pc_status shape_check(pc_rt_kernel_ctx *k, int64_t *first, int64_t *count)
{
    const pc_rt_tensor *x = in_at(k, 0);
    if (!x) return pc_error_set(k->err, PC_ERR_ARITY, "input 0 is required");
    if (!out_at(k, 0)) return pc_error_set(k->err, PC_ERR_ARITY, "output 0 is required");
    int64_t r = x->rank, s = 0, e = r;
    if (k->opset >= 15) { /* start/end: negatives count from the rank, then both clamp to [0, rank] */
        s = pc_node_attr_int(k->node, "start", 0);
        e = pc_node_attr_int(k->node, "end", r);
        if (s < 0) s += r;
        if (e < 0) e += r;
        s = clamp64(s, 0, r);
        e = clamp64(e, 0, r);
    }
    *first = s;
    *count = e > s ? e - s : 0;
    return check_out(k, 0, PC_DTYPE_INT64, 1, count);
}

static pc_status shape_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    int64_t first, count;
    *scratch = 0;
    return shape_check(k, &first, &count);
}

static pc_status shape_run(pc_rt_kernel_ctx *k)
{
    int64_t first = 0, count = 0;
    pc_status st = shape_check(k, &first, &count);
    if (st == PC_OK) copy_bytes(k->out[0]->data, k->in[0]->dims + first, (size_t)count * sizeof(int64_t));
    return st;
}

static pc_status size_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    *scratch = 0;
    if (!in_at(k, 0)) return pc_error_set(k->err, PC_ERR_ARITY, "input 0 is required");
    if (!out_at(k, 0)) return pc_error_set(k->err, PC_ERR_ARITY, "output 0 is required");
    return check_out(k, 0, PC_DTYPE_INT64, 0, NULL);
}

static pc_status size_run(pc_rt_kernel_ctx *k)
{
    size_t scratch;
    pc_status st = size_prepare(k, &scratch);
    if (st != PC_OK) return st;
    int64_t n = (int64_t)k->in[0]->n;
    memcpy(k->out[0]->data, &n, sizeof n);
    return PC_OK;
}

/* ConstantOfShape: input 0 (1-D int64) is the shape, attribute 'value' (one element, any fixed-width type;
 * default float 0) the fill. */
static pc_status constant_of_shape_check(pc_rt_kernel_ctx *k, uint8_t *value)
{
    const pc_rt_tensor *s = in_at(k, 0);
    if (!s) return pc_error_set(k->err, PC_ERR_ARITY, "input 0 is required");
    if (!out_at(k, 0)) return pc_error_set(k->err, PC_ERR_ARITY, "output 0 is required");
    pc_dtype dt = PC_DTYPE_FLOAT;
    memset(value, 0, 16);
    const pc_attr *a = pc_node_attr(k->node, "value");
    if (a) {
        if (a->type != PC_ATTR_TENSOR || !a->t || a->t->n_elements != 1)
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'value' must be a one-element tensor");
        dt = a->t->dtype;
        size_t es = elem_bytes(dt);
        if (!es)
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "attribute 'value' of element type %s",
                                pc_dtype_name(dt));
        memcpy(value, a->t->data, es);
    }
    if (s->rank != 1)
        return pc_error_set(k->err, PC_ERR_SHAPE, "input 0 must be 1-D, not of rank %d", (int)s->rank);
    int_list shape;
    pc_status st = get_list(k, "input", 0, 0, PC_MAX_RANK, &shape);
    if (st != PC_OK || !shape.known) return st;
    for (size_t i = 0; i < shape.n; i++)
        if (shape.v[i] < 0)
            return pc_error_set(k->err, PC_ERR_SHAPE, "shape[%zu] = %lld", i, (long long)shape.v[i]);
    return check_out(k, 0, dt, (int32_t)shape.n, shape.v);
}

static pc_status constant_of_shape_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    uint8_t value[16];
    *scratch = 0;
    return constant_of_shape_check(k, value);
}

static pc_status constant_of_shape_run(pc_rt_kernel_ctx *k)
{
    uint8_t value[16];
    pc_status st = constant_of_shape_check(k, value);
    if (st != PC_OK) return st;
    pc_rt_tensor *y = k->out[0];
    fill_elems(y->data, value, y->n, elem_bytes(y->dtype));
    return PC_OK;
}

/* Range: inputs start, limit, delta (scalars of one type). The count is ceil((limit - start) / delta) in the
 * element type (float arithmetic for float32); element i is start + i * delta, for floats computed in double
 * and rounded once (the ONNX definition, not a running sum), for integers wrapping. */
static pc_status range_check(pc_rt_kernel_ctx *k, bool *known)
{
    static const char *const names[3] = {"start", "limit", "delta"};
    const pc_rt_tensor *t0 = in_at(k, 0);
    *known = true;
    for (uint32_t i = 0; i < 3; i++) {
        const pc_rt_tensor *t = in_at(k, i);
        if (!t) return pc_error_set(k->err, PC_ERR_ARITY, "input %u '%s' is required", i, names[i]);
        if (t->dtype != t0->dtype)
            return pc_error_set(k->err, PC_ERR_TYPE, "input %u '%s' is %s, input 0 %s", i, names[i],
                                pc_dtype_name(t->dtype), pc_dtype_name(t0->dtype));
        if (t->n != 1)
            return pc_error_set(k->err, PC_ERR_SHAPE, "input %u '%s' must be a scalar", i, names[i]);
        if (!has_data(t)) *known = false;
    }
    pc_dtype dt = t0->dtype;
    if (dt != PC_DTYPE_FLOAT && dt != PC_DTYPE_DOUBLE && dt != PC_DTYPE_INT16 && dt != PC_DTYPE_INT32 &&
        dt != PC_DTYPE_INT64)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "Range of %s", pc_dtype_name(dt));
    if (!out_at(k, 0)) return pc_error_set(k->err, PC_ERR_ARITY, "output 0 is required");
    if (!*known) return PC_OK;
    int64_t n;
    if (dt == PC_DTYPE_FLOAT || dt == PC_DTYPE_DOUBLE) {
        double s = float_scalar(k->in[0]), l = float_scalar(k->in[1]), d = float_scalar(k->in[2]);
        if (d == 0) return pc_error_set(k->err, PC_ERR_VALUE, "delta is 0");
        double q = dt == PC_DTYPE_DOUBLE ? (l - s) / d : (double)(((float)l - (float)s) / (float)d);
        q = ceil(q);
        if (!(q < 0x1p62)) return pc_error_set(k->err, PC_ERR_VALUE, "Range would have %g elements", q);
        n = q > 0 ? (int64_t)q : 0;
    } else {
        int16_t h;
        int64_t v[3];
        for (int i = 0; i < 3; i++) {
            if (dt == PC_DTYPE_INT16) {
                memcpy(&h, k->in[i]->data, 2);
                v[i] = h;
            } else {
                v[i] = int_at(k->in[i], 0);
            }
        }
        if (v[2] == 0) return pc_error_set(k->err, PC_ERR_VALUE, "delta is 0");
        /* ceil division of magnitudes in uint64: no difference overflows */
        uint64_t span = 0, step = v[2] > 0 ? (uint64_t)v[2] : (uint64_t)0 - (uint64_t)v[2];
        if (v[2] > 0 && v[1] > v[0]) span = (uint64_t)v[1] - (uint64_t)v[0];
        if (v[2] < 0 && v[1] < v[0]) span = (uint64_t)v[0] - (uint64_t)v[1];
        uint64_t cnt = span ? (span - 1) / step + 1 : 0;
        if (cnt > INT64_MAX)
            return pc_error_set(k->err, PC_ERR_VALUE, "Range would have %llu elements",
                                (unsigned long long)cnt);
        n = (int64_t)cnt;
    }
    return check_out(k, 0, dt, 1, &n);
}

static pc_status range_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    bool known;
    *scratch = 0;
    return range_check(k, &known);
}

static pc_status range_run(pc_rt_kernel_ctx *k)
{
    bool known;
    pc_status st = range_check(k, &known);
    if (st != PC_OK) return st;
    pc_rt_tensor *y = k->out[0];
    uint64_t n = y->n;
    switch (y->dtype) {
    case PC_DTYPE_FLOAT: {
        double s = float_scalar(k->in[0]), d = float_scalar(k->in[2]);
        float *o = y->data;
        for (uint64_t i = 0; i < n; i++)
            o[i] = (float)(s + (double)i * d);
        break;
    }
    case PC_DTYPE_DOUBLE: {
        double s = float_scalar(k->in[0]), d = float_scalar(k->in[2]);
        double *o = y->data;
        for (uint64_t i = 0; i < n; i++)
            o[i] = s + (double)i * d;
        break;
    }
    case PC_DTYPE_INT16: {
        int16_t s, d;
        memcpy(&s, k->in[0]->data, 2);
        memcpy(&d, k->in[2]->data, 2);
        int16_t *o = y->data;
        for (uint64_t i = 0; i < n; i++)
            o[i] = (int16_t)(uint16_t)((uint64_t)(int64_t)s + i * (uint64_t)(int64_t)d);
        break;
    }
    case PC_DTYPE_INT32: {
        uint64_t s = (uint64_t)int_at(k->in[0], 0), d = (uint64_t)int_at(k->in[2], 0);
        int32_t *o = y->data;
        for (uint64_t i = 0; i < n; i++)
            o[i] = (int32_t)(uint32_t)(s + i * d);
        break;
    }
    default: {
        uint64_t s = (uint64_t)int_at(k->in[0], 0), d = (uint64_t)int_at(k->in[2], 0);
        int64_t *o = y->data;
        for (uint64_t i = 0; i < n; i++)
            o[i] = (int64_t)(s + i * d);
    }
    }
    return PC_OK;
}

/* ---- element values: the index, scatter-reduction, CumSum, TopK and OneHot kernels read numbers */

static bool float_type(pc_dtype t)
{
    return t == PC_DTYPE_FLOAT || t == PC_DTYPE_DOUBLE || t == PC_DTYPE_FLOAT16 || t == PC_DTYPE_BFLOAT16;
}

static bool int_type(pc_dtype t)
{
    switch (t) {
    case PC_DTYPE_INT8:
    case PC_DTYPE_INT16:
    case PC_DTYPE_INT32:
    case PC_DTYPE_INT64:
    case PC_DTYPE_UINT8:
    case PC_DTYPE_UINT16:
    case PC_DTYPE_UINT32:
    case PC_DTYPE_UINT64:
        return true;
    default:
        return false;
    }
}

/* Element i of a float tensor, exactly. */
static double get_f64(const void *data, pc_dtype t, uint64_t i)
{
    const uint8_t *p = data;
    switch (t) {
    case PC_DTYPE_FLOAT: {
        float f;
        memcpy(&f, p + i * 4, 4);
        return f;
    }
    case PC_DTYPE_DOUBLE: {
        double d;
        memcpy(&d, p + i * 8, 8);
        return d;
    }
    case PC_DTYPE_FLOAT16: {
        uint16_t h;
        memcpy(&h, p + i * 2, 2);
        return half_in(h);
    }
    default: {
        uint16_t h;
        memcpy(&h, p + i * 2, 2);
        return pc_bfloat16_to_double(h);
    }
    }
}

/* v rounded once into element i of a float tensor. */
static void set_f64(void *data, pc_dtype t, uint64_t i, double v)
{
    uint8_t *p = data;
    switch (t) {
    case PC_DTYPE_FLOAT: {
        float f = (float)v;
        memcpy(p + i * 4, &f, 4);
        break;
    }
    case PC_DTYPE_DOUBLE:
        memcpy(p + i * 8, &v, 8);
        break;
    case PC_DTYPE_FLOAT16: {
        uint16_t h = pc_half_from_double(v);
        memcpy(p + i * 2, &h, 2);
        break;
    }
    default: {
        uint16_t h = pc_bfloat16_from_double(v);
        memcpy(p + i * 2, &h, 2);
    }
    }
}

/* Element i of an integer or bool tensor, sign- or zero-extended (uint64 as its bit pattern). */
static int64_t get_i64(const void *data, pc_dtype t, uint64_t i)
{
    const uint8_t *p = data;
    switch (t) {
    case PC_DTYPE_INT8:
        return (int8_t)p[i];
    case PC_DTYPE_INT16: {
        int16_t v;
        memcpy(&v, p + i * 2, 2);
        return v;
    }
    case PC_DTYPE_INT32: {
        int32_t v;
        memcpy(&v, p + i * 4, 4);
        return v;
    }
    case PC_DTYPE_UINT16: {
        uint16_t v;
        memcpy(&v, p + i * 2, 2);
        return v;
    }
    case PC_DTYPE_UINT32: {
        uint32_t v;
        memcpy(&v, p + i * 4, 4);
        return v;
    }
    case PC_DTYPE_INT64:
    case PC_DTYPE_UINT64: {
        int64_t v;
        memcpy(&v, p + i * 8, 8);
        return v;
    }
    case PC_DTYPE_BOOL:
        return p[i] != 0;
    default: /* uint8 */
        return p[i];
    }
}

/* v wrapped to the width of element i of an integer tensor. */
static void set_i64(void *data, pc_dtype t, uint64_t i, int64_t v)
{
    uint8_t *p = data;
    uint64_t u = (uint64_t)v;
    switch (elem_bytes(t)) {
    case 1:
        p[i] = (uint8_t)u;
        break;
    case 2: {
        uint16_t w = (uint16_t)u;
        memcpy(p + i * 2, &w, 2);
        break;
    }
    case 4: {
        uint32_t w = (uint32_t)u;
        memcpy(p + i * 4, &w, 4);
        break;
    }
    default:
        memcpy(p + i * 8, &u, 8);
    }
}

/* Any numeric element as an integer: floats truncate toward zero, saturating (NaN: 0), as Cast does. */
static int64_t num_as_i64(const void *data, pc_dtype t, uint64_t i)
{
    return float_type(t) ? f64_to_i64(get_f64(data, t, i)) : get_i64(data, t, i);
}

/* Advances the row-major multi-index idx over dims, keeping off = sum idx[d] * str[d] current. */
static void odometer_next(int32_t rank, const int64_t *dims, const int64_t *str, int64_t *idx, int64_t *off)
{
    for (int32_t d = rank - 1; d >= 0; d--) {
        *off += str[d];
        if (++idx[d] < dims[d]) return;
        *off -= str[d] * dims[d];
        idx[d] = 0;
    }
}

/* The one value of a 1-element int32/int64 input (rank 0 or 1); *known false when it has no values yet. */
static pc_status int_scalar(pc_rt_kernel_ctx *k, uint32_t i, const char *name, int64_t *v, bool *known)
{
    const pc_rt_tensor *t = in_at(k, i);
    char what[64];
    snprintf(what, sizeof what, "input %u '%s'", i, name);
    *known = false;
    *v = 0;
    if (!t) return pc_error_set(k->err, PC_ERR_ARITY, "%s is required", what);
    pc_status st = need_int_type(k, t, what);
    if (st != PC_OK) return st;
    if (t->n != 1 || t->rank > 1) return pc_error_set(k->err, PC_ERR_SHAPE, "%s must hold one value", what);
    if (!has_data(t)) return PC_OK;
    *v = int_at(t, 0);
    *known = true;
    return PC_OK;
}

static pc_status bad_index(pc_rt_kernel_ctx *k, uint64_t pos, int64_t v, int64_t dim, int32_t axis)
{
    return pc_error_set(k->err, PC_ERR_VALUE, "indices[%llu] = %lld is out of range [%lld, %lld) for axis %d",
                        (unsigned long long)pos, (long long)v, (long long)-dim, (long long)dim, (int)axis);
}

/* ---- GatherElements, ScatterElements (and Scatter, its opset 9 name) */

/* indices have data's rank and fit in it off the axis (as the reference); updates, when given, have
 * indices' shape and data's type. */
static pc_status elements_check(pc_rt_kernel_ctx *k, const pc_rt_tensor *upd, int32_t *axis)
{
    const pc_rt_tensor *x = k->in[0], *ind = in_at(k, 1);
    char a[DIMS_TEXT], b[DIMS_TEXT];
    if (!ind) return pc_error_set(k->err, PC_ERR_ARITY, "input 1 'indices' is required");
    pc_status st = need_int_type(k, ind, "input 1 'indices'");
    if (st != PC_OK) return st;
    if (x->rank == 0) return pc_error_set(k->err, PC_ERR_SHAPE, "input 0 'data' must have rank >= 1");
    if ((st = norm_axis(k, pc_node_attr_int(k->node, "axis", 0), x->rank, "axis", axis)) != PC_OK) return st;
    bool ok = ind->rank == x->rank;
    for (int32_t d = 0; ok && d < x->rank; d++)
        ok = d == *axis || ind->dims[d] <= x->dims[d];
    if (!ok)
        return pc_error_set(k->err, PC_ERR_SHAPE, "indices dims %s do not fit data dims %s off axis %d",
                            dims_text(a, ind->rank, ind->dims), dims_text(b, x->rank, x->dims), (int)*axis);
    if (upd) {
        if (upd->dtype != x->dtype)
            return pc_error_set(k->err, PC_ERR_TYPE, "input 2 'updates' is %s, data %s",
                                pc_dtype_name(upd->dtype), pc_dtype_name(x->dtype));
        ok = upd->rank == ind->rank;
        for (int32_t d = 0; ok && d < ind->rank; d++)
            ok = upd->dims[d] == ind->dims[d];
        if (!ok)
            return pc_error_set(k->err, PC_ERR_SHAPE, "updates dims %s differ from indices dims %s",
                                dims_text(a, upd->rank, upd->dims), dims_text(b, ind->rank, ind->dims));
    }
    return PC_OK;
}

/* Every index in [-dim, dim): checked before anything is written. */
static pc_status check_indices(pc_rt_kernel_ctx *k, const pc_rt_tensor *ind, int64_t dim, int32_t axis)
{
    for (uint64_t j = 0; j < ind->n; j++) {
        int64_t v = int_at(ind, j);
        if (v < -dim || v >= dim) return bad_index(k, j, v, dim, axis);
    }
    return PC_OK;
}

static pc_status gather_elements_check(pc_rt_kernel_ctx *k, int32_t *axis)
{
    pc_status st = elements_check(k, NULL, axis);
    return st != PC_OK ? st : check_out(k, 0, k->in[0]->dtype, k->in[1]->rank, k->in[1]->dims);
}

static pc_status gather_elements_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es;
    int32_t axis;
    *scratch = 0;
    pc_status st = start(k, &es);
    return st != PC_OK ? st : gather_elements_check(k, &axis);
}

static pc_status gather_elements_run(pc_rt_kernel_ctx *k)
{
    int32_t axis;
    pc_status st = gather_elements_check(k, &axis);
    if (st != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0], *ind = k->in[1];
    pc_rt_tensor *y = k->out[0];
    int64_t dim = x->dims[axis];
    if ((st = check_indices(k, ind, dim, axis)) != PC_OK || !y->n) return st;
    size_t es = elem_bytes(x->dtype);
    int64_t xstr[PC_MAX_RANK], bstr[PC_MAX_RANK], idx[PC_MAX_RANK] = {0}, off = 0;
    strides_of(x->rank, x->dims, xstr);
    memcpy(bstr, xstr, sizeof bstr);
    bstr[axis] = 0; /* the axis position comes from the index */
    const uint8_t *src = x->data;
    uint8_t *dst = y->data;
    for (uint64_t j = 0; j < ind->n; j++) {
        int64_t v = int_at(ind, j);
        v += v < 0 ? dim : 0;
        copy_block(dst + j * es, src + (uint64_t)(off + v * xstr[axis]) * es, es);
        odometer_next(ind->rank, ind->dims, bstr, idx, &off);
    }
    return PC_OK;
}

typedef enum red_kind { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN } red_kind;

/* 'reduction' (from opset 16; max and min from 18) on a numeric type; bool is not reduced. */
static pc_status reduction_of(pc_rt_kernel_ctx *k, pc_dtype dt, red_kind *red)
{
    *red = RED_NONE;
    if (k->opset < 16) return PC_OK;
    const char *s = pc_node_attr_string(k->node, "reduction", "none");
    if (strcmp(s, "none") == 0) return PC_OK;
    if (strcmp(s, "add") == 0)
        *red = RED_ADD;
    else if (strcmp(s, "mul") == 0)
        *red = RED_MUL;
    else if (strcmp(s, "max") == 0 && k->opset >= 18)
        *red = RED_MAX;
    else if (strcmp(s, "min") == 0 && k->opset >= 18)
        *red = RED_MIN;
    else
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "reduction '%s' at opset %lld", s, (long long)k->opset);
    if (!float_type(dt) && !int_type(dt))
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "reduction '%s' on %s", s, pc_dtype_name(dt));
    return PC_OK;
}

/* y[i] = y[i] (red) u[j]: floats in double rounded once, integers wrapping in 64 bits (the reference's
 * definition; max/min give NaN when either side is NaN). */
static void reduce_into(void *y, uint64_t i, const void *u, uint64_t j, pc_dtype dt, size_t es, red_kind red)
{
    if (red == RED_NONE) {
        copy_block((uint8_t *)y + i * es, (const uint8_t *)u + j * es, es);
        return;
    }
    if (float_type(dt)) {
        double a = get_f64(y, dt, i), b = get_f64(u, dt, j), v;
        if (red == RED_ADD)
            v = a + b;
        else if (red == RED_MUL)
            v = a * b;
        else
            v = isnan(a) || isnan(b) ? NAN : red == RED_MAX ? fmax(a, b) : fmin(a, b);
        set_f64(y, dt, i, v);
        return;
    }
    int64_t a = get_i64(y, dt, i), b = get_i64(u, dt, j), v;
    bool lt = dt == PC_DTYPE_UINT64 ? (uint64_t)a < (uint64_t)b : a < b;
    if (red == RED_ADD)
        v = (int64_t)((uint64_t)a + (uint64_t)b);
    else if (red == RED_MUL)
        v = (int64_t)((uint64_t)a * (uint64_t)b);
    else if (red == RED_MAX)
        v = lt ? b : a;
    else
        v = lt ? a : b;
    set_i64(y, dt, i, v);
}

static pc_status scatter_elements_check(pc_rt_kernel_ctx *k, int32_t *axis, red_kind *red)
{
    const pc_rt_tensor *upd = in_at(k, 2);
    if (!upd) return pc_error_set(k->err, PC_ERR_ARITY, "input 2 'updates' is required");
    pc_status st = elements_check(k, upd, axis);
    if (st != PC_OK || (st = reduction_of(k, k->in[0]->dtype, red)) != PC_OK) return st;
    return check_out(k, 0, k->in[0]->dtype, k->in[0]->rank, k->in[0]->dims);
}

static pc_status scatter_elements_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es;
    int32_t axis;
    red_kind red;
    *scratch = 0;
    pc_status st = start(k, &es);
    return st != PC_OK ? st : scatter_elements_check(k, &axis, &red);
}

/* In index order, so with repeated indices and no reduction the last update wins (as the reference). */
static pc_status scatter_elements_run(pc_rt_kernel_ctx *k)
{
    int32_t axis;
    red_kind red;
    pc_status st = scatter_elements_check(k, &axis, &red);
    if (st != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0], *ind = k->in[1], *upd = k->in[2];
    pc_rt_tensor *y = k->out[0];
    int64_t dim = x->dims[axis];
    if ((st = check_indices(k, ind, dim, axis)) != PC_OK) return st;
    size_t es = elem_bytes(x->dtype);
    copy_bytes(y->data, x->data, (size_t)x->n * es);
    if (!ind->n) return PC_OK;
    int64_t xstr[PC_MAX_RANK], bstr[PC_MAX_RANK], idx[PC_MAX_RANK] = {0}, off = 0;
    strides_of(x->rank, x->dims, xstr);
    memcpy(bstr, xstr, sizeof bstr);
    bstr[axis] = 0;
    for (uint64_t j = 0; j < ind->n; j++) {
        int64_t v = int_at(ind, j);
        v += v < 0 ? dim : 0;
        reduce_into(y->data, (uint64_t)(off + v * xstr[axis]), upd->data, j, x->dtype, es, red);
        odometer_next(ind->rank, ind->dims, bstr, idx, &off);
    }
    return PC_OK;
}

/* ---- GatherND, ScatterND: index tuples of m entries name slices of data (after b batch axes) */

typedef struct nd_plan {
    int32_t b, m;               /* batch axes, tuple length */
    uint64_t batches, tuples;   /* per batch */
    uint64_t slice, batch_size; /* elements of a named slice, of one batch of data */
    int64_t xstr[PC_MAX_RANK];
} nd_plan;

static pc_status nd_plan_make(pc_rt_kernel_ctx *k, int64_t batch_dims, nd_plan *p)
{
    const pc_rt_tensor *x = k->in[0], *ind = in_at(k, 1);
    char a[DIMS_TEXT], c[DIMS_TEXT];
    if (!ind) return pc_error_set(k->err, PC_ERR_ARITY, "input 1 'indices' is required");
    pc_status st = need_int_type(k, ind, "input 1 'indices'");
    if (st != PC_OK) return st;
    if (ind->rank < 1) return pc_error_set(k->err, PC_ERR_SHAPE, "input 1 'indices' must have rank >= 1");
    if (batch_dims < 0 || batch_dims >= ind->rank || batch_dims >= x->rank)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                            "batch_dims %lld must be in [0, min(rank(data), rank(indices)))",
                            (long long)batch_dims);
    int64_t m = ind->dims[ind->rank - 1];
    bool ok = m <= x->rank - batch_dims;
    for (int32_t d = 0; ok && d < batch_dims; d++)
        ok = ind->dims[d] == x->dims[d];
    if (!ok)
        return pc_error_set(k->err, PC_ERR_SHAPE, "indices dims %s do not fit data dims %s (batch_dims %lld)",
                            dims_text(a, ind->rank, ind->dims), dims_text(c, x->rank, x->dims),
                            (long long)batch_dims);
    p->b = (int32_t)batch_dims;
    p->m = (int32_t)m;
    p->batches = prod(ind->dims, 0, p->b);
    p->tuples = prod(ind->dims, p->b, ind->rank - 1);
    p->slice = prod(x->dims, p->b + p->m, x->rank);
    p->batch_size = prod(x->dims, p->b, x->rank);
    strides_of(x->rank, x->dims, p->xstr);
    return PC_OK;
}

/* Every tuple entry in range for its axis; checked before anything is written. */
static pc_status nd_check_indices(pc_rt_kernel_ctx *k, const nd_plan *p)
{
    const pc_rt_tensor *x = k->in[0], *ind = k->in[1];
    for (uint64_t j = 0; j < ind->n; j++) {
        int32_t ax = p->b + (int32_t)(j % (uint64_t)p->m);
        int64_t v = int_at(ind, j), dim = x->dims[ax];
        if (v < -dim || v >= dim) return bad_index(k, j, v, dim, ax);
    }
    return PC_OK;
}

/* Element offset within its batch of the slice tuple t (counted over all batches) names. */
static uint64_t nd_offset(const pc_rt_kernel_ctx *k, const nd_plan *p, uint64_t t)
{
    const pc_rt_tensor *x = k->in[0], *ind = k->in[1];
    uint64_t off = 0;
    for (int32_t j = 0; j < p->m; j++) {
        int64_t v = int_at(ind, t * (uint64_t)p->m + (uint64_t)j);
        v += v < 0 ? x->dims[p->b + j] : 0;
        off += (uint64_t)v * (uint64_t)p->xstr[p->b + j];
    }
    return off;
}

static pc_status gather_nd_check(pc_rt_kernel_ctx *k, nd_plan *p)
{
    const pc_rt_tensor *x = k->in[0];
    int64_t b = k->opset >= 12 ? pc_node_attr_int(k->node, "batch_dims", 0) : 0;
    pc_status st = nd_plan_make(k, b, p);
    if (st != PC_OK) return st;
    const pc_rt_tensor *ind = k->in[1];
    int32_t r = ind->rank - 1 + x->rank - p->b - p->m;
    if (r > PC_MAX_RANK)
        return pc_error_set(k->err, PC_ERR_SHAPE, "the output rank %d passes the limit", (int)r);
    int64_t dims[PC_MAX_RANK];
    memcpy(dims, ind->dims, (size_t)(ind->rank - 1) * sizeof *dims);
    memcpy(dims + ind->rank - 1, x->dims + p->b + p->m, (size_t)(x->rank - p->b - p->m) * sizeof *dims);
    return check_out(k, 0, x->dtype, r, dims);
}

static pc_status gather_nd_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es;
    nd_plan p;
    *scratch = 0;
    pc_status st = start(k, &es);
    return st != PC_OK ? st : gather_nd_check(k, &p);
}

static pc_status gather_nd_run(pc_rt_kernel_ctx *k)
{
    nd_plan p;
    pc_status st = gather_nd_check(k, &p);
    if (st != PC_OK || (st = nd_check_indices(k, &p)) != PC_OK || !k->out[0]->n) return st;
    size_t es = elem_bytes(k->in[0]->dtype), block = (size_t)p.slice * es;
    const uint8_t *src = k->in[0]->data;
    uint8_t *dst = k->out[0]->data;
    for (uint64_t bb = 0; bb < p.batches; bb++)
        for (uint64_t t = 0; t < p.tuples; t++) {
            uint64_t off = bb * p.batch_size + nd_offset(k, &p, bb * p.tuples + t);
            memcpy(dst, src + off * es, block);
            dst += block;
        }
    return PC_OK;
}

/* updates are indices.dims[:-1] + data.dims[m:] */
static pc_status scatter_nd_check(pc_rt_kernel_ctx *k, nd_plan *p, red_kind *red)
{
    const pc_rt_tensor *x = k->in[0], *upd = in_at(k, 2);
    char a[DIMS_TEXT];
    if (!upd) return pc_error_set(k->err, PC_ERR_ARITY, "input 2 'updates' is required");
    pc_status st = nd_plan_make(k, 0, p);
    if (st != PC_OK || (st = reduction_of(k, x->dtype, red)) != PC_OK) return st;
    const pc_rt_tensor *ind = k->in[1];
    if (upd->dtype != x->dtype)
        return pc_error_set(k->err, PC_ERR_TYPE, "input 2 'updates' is %s, data %s",
                            pc_dtype_name(upd->dtype), pc_dtype_name(x->dtype));
    bool ok = upd->rank == ind->rank - 1 + x->rank - p->m;
    for (int32_t d = 0; ok && d < ind->rank - 1; d++)
        ok = upd->dims[d] == ind->dims[d];
    for (int32_t d = p->m; ok && d < x->rank; d++)
        ok = upd->dims[ind->rank - 1 + d - p->m] == x->dims[d];
    if (!ok)
        return pc_error_set(k->err, PC_ERR_SHAPE,
                            "updates dims %s are not indices.dims[:-1] + data.dims[%d:]",
                            dims_text(a, upd->rank, upd->dims), (int)p->m);
    return check_out(k, 0, x->dtype, x->rank, x->dims);
}

static pc_status scatter_nd_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es;
    nd_plan p;
    red_kind red;
    *scratch = 0;
    pc_status st = start(k, &es);
    return st != PC_OK ? st : scatter_nd_check(k, &p, &red);
}

/* Tuples in order: with repeated tuples and no reduction the last one wins (as the reference). */
static pc_status scatter_nd_run(pc_rt_kernel_ctx *k)
{
    nd_plan p;
    red_kind red;
    pc_status st = scatter_nd_check(k, &p, &red);
    if (st != PC_OK || (st = nd_check_indices(k, &p)) != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0], *upd = k->in[2];
    pc_rt_tensor *y = k->out[0];
    size_t es = elem_bytes(x->dtype);
    copy_bytes(y->data, x->data, (size_t)x->n * es);
    if (!upd->n) return PC_OK;
    for (uint64_t t = 0; t < p.tuples; t++) {
        uint64_t off = nd_offset(k, &p, t);
        if (red == RED_NONE) {
            memcpy((uint8_t *)y->data + off * es, (const uint8_t *)upd->data + t * p.slice * es,
                   (size_t)p.slice * es);
            continue;
        }
        for (uint64_t s = 0; s < p.slice; s++)
            reduce_into(y->data, off + s, upd->data, t * p.slice + s, x->dtype, es, red);
    }
    return PC_OK;
}

/* ---- Trilu, EyeLike */

/* k: input 1 (one int), 0 when omitted; *known false when it has no values yet. */
static pc_status trilu_check(pc_rt_kernel_ctx *k, int64_t *diag, bool *known)
{
    const pc_rt_tensor *x = k->in[0];
    char a[DIMS_TEXT];
    *diag = 0;
    *known = true;
    if (x->rank < 2)
        return pc_error_set(k->err, PC_ERR_SHAPE, "input 0 must have rank >= 2, not dims %s",
                            dims_text(a, x->rank, x->dims));
    if (in_at(k, 1)) {
        pc_status st = int_scalar(k, 1, "k", diag, known);
        if (st != PC_OK) return st;
    }
    return check_out(k, 0, x->dtype, x->rank, x->dims);
}

static pc_status trilu_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es;
    int64_t diag;
    bool known;
    *scratch = 0;
    pc_status st = start(k, &es);
    return st != PC_OK ? st : trilu_check(k, &diag, &known);
}

/* Row i of each matrix keeps columns j >= i + k (upper) or j <= i + k (lower); the rest is zero bytes (0,
 * false) as the reference. */
static pc_status trilu_run(pc_rt_kernel_ctx *k)
{
    int64_t diag;
    bool known;
    pc_status st = trilu_check(k, &diag, &known);
    if (st != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0];
    pc_rt_tensor *y = k->out[0];
    if (!y->n) return PC_OK;
    bool upper = pc_node_attr_int(k->node, "upper", 1) != 0;
    size_t es = elem_bytes(x->dtype);
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
    diag = clamp64(diag, -rows, cols); /* past either end nothing changes; no sum below overflows */
    uint64_t mats = prod(x->dims, 0, x->rank - 2);
    const uint8_t *src = x->data;
    uint8_t *dst = y->data;
    for (uint64_t m = 0; m < mats; m++)
        for (int64_t i = 0; i < rows; i++) {
            /* the kept columns are [cut, cols) when upper, [0, cut) when lower */
            int64_t cut = clamp64(upper ? i + diag : i + diag + 1, 0, cols);
            size_t row = (size_t)cols * es, c = (size_t)cut * es;
            if (upper) {
                memset(dst, 0, c);
                copy_bytes(dst + c, src + c, row - c);
            } else {
                copy_bytes(dst, src, c);
                memset(dst + c, 0, row - c);
            }
            src += row;
            dst += row;
        }
    return PC_OK;
}

/* EyeLike: ones on diagonal k of a zero matrix of input 0's dims, in 'dtype' (input 0's type by default). */
static pc_status eye_like_check(pc_rt_kernel_ctx *k, pc_dtype *dt)
{
    const pc_rt_tensor *x = in_at(k, 0);
    char a[DIMS_TEXT];
    if (!x) return pc_error_set(k->err, PC_ERR_ARITY, "input 0 is required");
    if (!out_at(k, 0)) return pc_error_set(k->err, PC_ERR_ARITY, "output 0 is required");
    *dt = x->dtype;
    if (pc_node_attr(k->node, "dtype")) {
        int64_t v = pc_node_attr_int(k->node, "dtype", 0);
        if (v != (int32_t)v || !pc_dtype_is_valid((int32_t)v))
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'dtype' = %lld is no element type",
                                (long long)v);
        *dt = (pc_dtype)v;
    }
    if (!cast_type(*dt))
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "EyeLike of element type %s", pc_dtype_name(*dt));
    if (x->rank != 2)
        return pc_error_set(k->err, PC_ERR_SHAPE, "input 0 must be 2-D, not dims %s",
                            dims_text(a, x->rank, x->dims));
    return check_out(k, 0, *dt, 2, x->dims);
}

static pc_status eye_like_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    pc_dtype dt;
    *scratch = 0;
    return eye_like_check(k, &dt);
}

static pc_status eye_like_run(pc_rt_kernel_ctx *k)
{
    pc_dtype dt;
    pc_status st = eye_like_check(k, &dt);
    if (st != PC_OK) return st;
    pc_rt_tensor *y = k->out[0];
    size_t es = elem_bytes(dt);
    uint8_t one[16];
    double v = 1.0;
    convert(PC_DTYPE_DOUBLE, dt, &v, one, 1);
    int64_t diag = pc_node_attr_int(k->node, "k", 0), rows = y->dims[0], cols = y->dims[1];
    if (y->n) memset(y->data, 0, (size_t)y->n * es);
    if (diag >= cols || diag <= -rows) return PC_OK; /* the diagonal misses the matrix; |k| now bounds sums */
    for (int64_t i = diag < 0 ? -diag : 0; i < rows && i + diag < cols; i++)
        memcpy((uint8_t *)y->data + (size_t)(i * cols + i + diag) * es, one, es);
    return PC_OK;
}

/* ---- OneHot */

/* indices (any numeric type; floats truncate), depth (one numeric value), values ([off, on], the output's
 * type); depth is inserted at 'axis' (in [-r-1, r]). *known false when depth has no value yet. */
static pc_status one_hot_check(pc_rt_kernel_ctx *k, int64_t *depth, int32_t *axis, bool *known)
{
    const pc_rt_tensor *ind = k->in[0], *dp = in_at(k, 1), *vals = in_at(k, 2);
    *known = false;
    *depth = 0;
    if (!dp || !vals)
        return pc_error_set(k->err, PC_ERR_ARITY, "inputs 1 'depth' and 2 'values' are required");
    if (!float_type(dp->dtype) && !int_type(dp->dtype))
        return pc_error_set(k->err, PC_ERR_TYPE, "input 1 'depth' of element type %s",
                            pc_dtype_name(dp->dtype));
    if (dp->n != 1) return pc_error_set(k->err, PC_ERR_SHAPE, "input 1 'depth' must hold one value");
    if (vals->n != 2) return pc_error_set(k->err, PC_ERR_SHAPE, "input 2 'values' must hold two values");
    if (!elem_bytes(vals->dtype))
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "values of element type %s",
                            pc_dtype_name(vals->dtype));
    if (ind->rank >= PC_MAX_RANK)
        return pc_error_set(k->err, PC_ERR_SHAPE, "the output rank passes the limit");
    int64_t a = pc_node_attr_int(k->node, "axis", -1);
    if (a < -(int64_t)ind->rank - 1 || a > ind->rank)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "axis %lld is out of range for rank %d", (long long)a,
                            (int)ind->rank + 1);
    *axis = (int32_t)(a < 0 ? a + ind->rank + 1 : a);
    if (!has_data(dp)) return PC_OK;
    if (float_type(dp->dtype)) {
        double df = get_f64(dp->data, dp->dtype, 0);
        if (!(df >= 0) || df >= 0x1p63) return pc_error_set(k->err, PC_ERR_VALUE, "depth %g is invalid", df);
        *depth = (int64_t)df;
    } else {
        *depth = get_i64(dp->data, dp->dtype, 0);
        if (*depth < 0) /* uint64 above INT64_MAX too */
            return pc_error_set(k->err, PC_ERR_VALUE, "depth %lld is invalid", (long long)*depth);
    }
    *known = true;
    int64_t dims[PC_MAX_RANK];
    memcpy(dims, ind->dims, (size_t)*axis * sizeof *dims);
    dims[*axis] = *depth;
    memcpy(dims + *axis + 1, ind->dims + *axis, (size_t)(ind->rank - *axis) * sizeof *dims);
    return check_out(k, 0, vals->dtype, ind->rank + 1, dims);
}

static pc_status one_hot_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    int64_t depth;
    int32_t axis;
    bool known;
    *scratch = 0;
    if (!in_at(k, 0)) return pc_error_set(k->err, PC_ERR_ARITY, "input 0 'indices' is required");
    if (!out_at(k, 0)) return pc_error_set(k->err, PC_ERR_ARITY, "output 0 is required");
    if (!float_type(k->in[0]->dtype) && !int_type(k->in[0]->dtype))
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "indices of element type %s",
                            pc_dtype_name(k->in[0]->dtype));
    return one_hot_check(k, &depth, &axis, &known);
}

/* Negative indices count from depth; indices out of range leave their column all "off" (as the
 * reference). */
static pc_status one_hot_run(pc_rt_kernel_ctx *k)
{
    int64_t depth;
    int32_t axis;
    bool known;
    pc_status st = one_hot_check(k, &depth, &axis, &known);
    if (st != PC_OK) return st;
    const pc_rt_tensor *ind = k->in[0], *vals = k->in[2];
    pc_rt_tensor *y = k->out[0];
    if (!y->n) return PC_OK;
    size_t es = elem_bytes(vals->dtype);
    const uint8_t *off = vals->data, *on = off + es;
    fill_elems(y->data, off, y->n, es);
    uint64_t inner = prod(ind->dims, axis, ind->rank);
    for (uint64_t j = 0; j < ind->n; j++) {
        int64_t v = num_as_i64(ind->data, ind->dtype, j);
        if (ind->dtype == PC_DTYPE_UINT64 && v < 0) continue; /* above INT64_MAX: out of range */
        if (v < 0 && v >= -depth) v += depth;
        if (v < 0 || v >= depth) continue;
        uint64_t o = j / inner, i = j % inner;
        memcpy((uint8_t *)y->data + ((o * (uint64_t)depth + (uint64_t)v) * inner + i) * es, on, es);
    }
    return PC_OK;
}

/* ---- CumSum */

static pc_status cumsum_check(pc_rt_kernel_ctx *k, int32_t *axis, bool *known)
{
    const pc_rt_tensor *x = k->in[0];
    int64_t a;
    if (!float_type(x->dtype) && !int_type(x->dtype))
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "CumSum of %s", pc_dtype_name(x->dtype));
    if (x->rank == 0) return pc_error_set(k->err, PC_ERR_SHAPE, "input 0 must have rank >= 1");
    pc_status st = int_scalar(k, 1, "axis", &a, known);
    if (st != PC_OK) return st;
    if (*known && (st = norm_axis(k, a, x->rank, "axis", axis)) != PC_OK) return st;
    return check_out(k, 0, x->dtype, x->rank, x->dims);
}

static pc_status cumsum_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es;
    int32_t axis;
    bool known;
    *scratch = 0;
    pc_status st = start(k, &es);
    return st != PC_OK ? st : cumsum_check(k, &axis, &known);
}

/* Floats sum in double, each output rounded once; integers wrap (both as the reference). */
static pc_status cumsum_run(pc_rt_kernel_ctx *k)
{
    int32_t axis = 0;
    bool known;
    pc_status st = cumsum_check(k, &axis, &known);
    if (st != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0];
    pc_rt_tensor *y = k->out[0];
    if (!y->n) return PC_OK;
    bool exclusive = pc_node_attr_int(k->node, "exclusive", 0) != 0;
    bool reverse = pc_node_attr_int(k->node, "reverse", 0) != 0, fl = float_type(x->dtype);
    uint64_t outer = prod(x->dims, 0, axis), n = (uint64_t)x->dims[axis],
             inner = prod(x->dims, axis + 1, x->rank);
    pc_dtype dt = x->dtype;
    for (uint64_t a = 0; a < outer; a++)
        for (uint64_t b = 0; b < inner; b++) {
            double fs = 0;
            uint64_t is = 0;
            for (uint64_t s = 0; s < n; s++) {
                uint64_t i = (a * n + (reverse ? n - 1 - s : s)) * inner + b;
                double fv = fl ? get_f64(x->data, dt, i) : 0;
                uint64_t iv = fl ? 0 : (uint64_t)get_i64(x->data, dt, i);
                if (!exclusive) {
                    fs += fv;
                    is += iv;
                }
                if (fl)
                    set_f64(y->data, dt, i, fs);
                else
                    set_i64(y->data, dt, i, (int64_t)is);
                if (exclusive) {
                    fs += fv;
                    is += iv;
                }
            }
        }
    return PC_OK;
}

/* ---- TopK */

/* A sort entry: the value as an unsigned key in the element type's order (NaN above everything, -0 equal to
 * 0) and its position on the axis. */
typedef struct topk_entry {
    uint64_t key;
    int64_t idx;
} topk_entry;

static uint64_t topk_key(const void *data, pc_dtype t, uint64_t i)
{
    if (float_type(t)) {
        double v = get_f64(data, t, i);
        if (v != v) return UINT64_MAX;
        if (v == 0) v = 0; /* -0 ties with 0 */
        uint64_t bits;
        memcpy(&bits, &v, 8);
        return bits >> 63 ? ~bits : bits | UINT64_C(1) << 63;
    }
    uint64_t u = (uint64_t)get_i64(data, t, i);
    return t == PC_DTYPE_UINT64 ? u : u ^ UINT64_C(1) << 63;
}

/* k (attribute before opset 10, input 1 from then on) and the axis; *known false when k has no value yet.
 */
static pc_status topk_check(pc_rt_kernel_ctx *k, int64_t *kk, int32_t *axis, bool *known)
{
    const pc_rt_tensor *x = k->in[0];
    char a[DIMS_TEXT];
    *kk = 0;
    *known = true;
    if (!float_type(x->dtype) && !int_type(x->dtype))
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "TopK of %s", pc_dtype_name(x->dtype));
    if (x->rank == 0) return pc_error_set(k->err, PC_ERR_SHAPE, "input 0 must have rank >= 1");
    pc_status st = norm_axis(k, pc_node_attr_int(k->node, "axis", -1), x->rank, "axis", axis);
    if (st != PC_OK) return st;
    if (k->opset < 10) {
        if (!pc_node_attr(k->node, "k"))
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'k' is required");
        *kk = pc_node_attr_int(k->node, "k", 0);
    } else if ((st = int_scalar(k, 1, "K", kk, known)) != PC_OK || !*known) {
        return st;
    }
    if (*kk < 0 || *kk > x->dims[*axis])
        return pc_error_set(k->err, PC_ERR_VALUE, "k = %lld is outside [0, %lld] (axis %d of dims %s)",
                            (long long)*kk, (long long)x->dims[*axis], (int)*axis,
                            dims_text(a, x->rank, x->dims));
    int64_t dims[PC_MAX_RANK];
    memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
    dims[*axis] = *kk;
    if ((st = check_out(k, 0, x->dtype, x->rank, dims)) != PC_OK) return st;
    return check_out(k, 1, PC_DTYPE_INT64, x->rank, dims);
}

static pc_status topk_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es, bytes;
    int64_t kk;
    int32_t axis;
    bool known;
    *scratch = 0;
    pc_status st = start(k, &es);
    if (st != PC_OK || (st = topk_check(k, &kk, &axis, &known)) != PC_OK) return st;
    /* the axis's entries and the merge sort's second buffer */
    if (!pc_size_mul((size_t)k->in[0]->dims[axis], 2 * sizeof(topk_entry), &bytes))
        return pc_error_set(k->err, PC_ERR_SHAPE, "TopK's sort buffer overflows");
    *scratch = bytes;
    return PC_OK;
}

/* Whether a goes strictly before b: larger (smaller) keys first; ties keep axis order (stable sort). */
static bool topk_before(const topk_entry *a, const topk_entry *b, bool largest)
{
    return largest ? a->key > b->key : a->key < b->key;
}

/* Stable bottom-up merge sort of e[0..n) through tmp; returns where the sorted run ended up. */
static topk_entry *topk_sort(topk_entry *e, topk_entry *tmp, uint64_t n, bool largest)
{
    for (uint64_t w = 1; w < n; w *= 2) {
        for (uint64_t lo = 0; lo < n; lo += 2 * w) {
            uint64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            uint64_t a = lo, b = mid, t = lo;
            while (a < mid && b < hi)
                tmp[t++] = topk_before(&e[b], &e[a], largest) ? e[b++] : e[a++];
            while (a < mid)
                tmp[t++] = e[a++];
            while (b < hi)
                tmp[t++] = e[b++];
        }
        topk_entry *s = e;
        e = tmp;
        tmp = s;
    }
    return e;
}

/* Results are always sorted: with sorted = 0 the order is unspecified, so sorted order is a valid one. */
static pc_status topk_run(pc_rt_kernel_ctx *k)
{
    int64_t kk;
    int32_t axis;
    bool known;
    pc_status st = topk_check(k, &kk, &axis, &known);
    if (st != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0];
    pc_rt_tensor *vals = out_at(k, 0), *idxs = out_at(k, 1);
    uint64_t n = (uint64_t)x->dims[axis], outer = prod(x->dims, 0, axis),
             inner = prod(x->dims, axis + 1, x->rank);
    if (!kk || !x->n) return PC_OK;
    if (k->scratch_bytes < n * 2 * sizeof(topk_entry))
        return pc_error_set(k->err, PC_ERR_INTERNAL, "TopK's scratch is too small");
    bool largest = k->opset < 11 || pc_node_attr_int(k->node, "largest", 1) != 0;
    size_t es = elem_bytes(x->dtype);
    topk_entry *buf = k->scratch;
    for (uint64_t a = 0; a < outer; a++)
        for (uint64_t b = 0; b < inner; b++) {
            uint64_t base = a * n * inner + b;
            for (uint64_t i = 0; i < n; i++)
                buf[i] = (topk_entry){topk_key(x->data, x->dtype, base + i * inner), (int64_t)i};
            const topk_entry *s = topk_sort(buf, buf + n, n, largest);
            for (uint64_t i = 0; i < (uint64_t)kk; i++) {
                uint64_t dst = (a * (uint64_t)kk + i) * inner + b;
                if (vals)
                    copy_block((uint8_t *)vals->data + dst * es,
                               (const uint8_t *)x->data + (base + (uint64_t)s[i].idx * inner) * es, es);
                if (idxs) memcpy((uint8_t *)idxs->data + dst * 8, &s[i].idx, 8);
            }
        }
    return PC_OK;
}

/* ---- ReverseSequence */

/* batch_axis and time_axis are 0 and 1 in some order; sequence_lens (int64 or int32, one per batch entry)
 * are checked against the time axis when known. */
static pc_status reverse_sequence_check(pc_rt_kernel_ctx *k, int32_t *ba)
{
    const pc_rt_tensor *x = k->in[0], *lens = in_at(k, 1);
    char a[DIMS_TEXT];
    if (x->rank < 2)
        return pc_error_set(k->err, PC_ERR_SHAPE, "input 0 must have rank >= 2, not dims %s",
                            dims_text(a, x->rank, x->dims));
    int64_t b = pc_node_attr_int(k->node, "batch_axis", 1), t = pc_node_attr_int(k->node, "time_axis", 0);
    if (!((b == 0 && t == 1) || (b == 1 && t == 0)))
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "batch_axis %lld and time_axis %lld must be 0 and 1",
                            (long long)b, (long long)t);
    *ba = (int32_t)b;
    if (!lens) return pc_error_set(k->err, PC_ERR_ARITY, "input 1 'sequence_lens' is required");
    pc_status st = need_int_type(k, lens, "input 1 'sequence_lens'");
    if (st != PC_OK) return st;
    int64_t B = x->dims[b], T = x->dims[t];
    if (lens->rank != 1 || lens->dims[0] != B)
        return pc_error_set(k->err, PC_ERR_SHAPE, "sequence_lens has dims %s for a batch of %lld",
                            dims_text(a, lens->rank, lens->dims), (long long)B);
    if (has_data(lens))
        for (uint64_t i = 0; i < lens->n; i++) {
            int64_t v = int_at(lens, i);
            if (v < 0 || v > T)
                return pc_error_set(k->err, PC_ERR_VALUE, "sequence_lens[%llu] = %lld is outside [0, %lld]",
                                    (unsigned long long)i, (long long)v, (long long)T);
        }
    return check_out(k, 0, x->dtype, x->rank, x->dims);
}

static pc_status reverse_sequence_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    size_t es;
    int32_t ba;
    *scratch = 0;
    pc_status st = start(k, &es);
    return st != PC_OK ? st : reverse_sequence_check(k, &ba);
}

/* Each (batch, time) block of the trailing axes moves whole: time t < len goes to len - 1 - t. */
static pc_status reverse_sequence_run(pc_rt_kernel_ctx *k)
{
    int32_t ba;
    pc_status st = reverse_sequence_check(k, &ba);
    if (st != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0], *lens = k->in[1];
    if (!x->n) return PC_OK;
    size_t es = elem_bytes(x->dtype), block = (size_t)prod(x->dims, 2, x->rank) * es;
    int64_t d0 = x->dims[0], d1 = x->dims[1];
    const uint8_t *src = x->data;
    uint8_t *dst = k->out[0]->data;
    for (int64_t i0 = 0; i0 < d0; i0++)
        for (int64_t i1 = 0; i1 < d1; i1++) {
            int64_t b = ba == 0 ? i0 : i1, t = ba == 0 ? i1 : i0, len = int_at(lens, (uint64_t)b);
            int64_t st0 = t < len ? len - 1 - t : t;
            int64_t s0 = ba == 0 ? i0 : st0, s1 = ba == 0 ? st0 : i1;
            memcpy(dst, src + (size_t)(s0 * d1 + s1) * block, block);
            dst += block;
        }
    return PC_OK;
}

/* ---- the table */

#define RT_RANGE (RT_F32 | RT_I64 | RT_I32 | RT_TYPE(PC_DTYPE_DOUBLE) | RT_TYPE(PC_DTYPE_INT16))

const pc_rt_kernel pc_rt_kernels_movement[] = {
    {"", "Identity", 1, 21, RT_ANY_FIXED, identity_prepare, copy_all_run, 0},
    {"", "Reshape", 1, 21, RT_ANY_FIXED, reshape_prepare, reshape_run, 0},
    {"", "Flatten", 1, 21, RT_ANY_FIXED, flatten_prepare, flatten_run, 0},
    {"", "Squeeze", 1, 21, RT_ANY_FIXED, squeeze_prepare, squeeze_run, 0},
    {"", "Unsqueeze", 1, 21, RT_ANY_FIXED, unsqueeze_prepare, unsqueeze_run, 0},
    {"", "Transpose", 1, 21, RT_ANY_FIXED, transpose_prepare, transpose_run, 0},
    {"", "Concat", 1, 21, RT_ANY_FIXED, concat_prepare, concat_run, 0},
    {PC_BLOCKED_DOMAIN, "Concat", 1, 1, RT_F32, concat_prepare, concat_run, 0},
    {"", "Split", 1, 21, RT_ANY_FIXED, split_prepare, split_run, 0},
    {"", "Slice", 1, 21, RT_ANY_FIXED, slice_prepare, slice_run, 0},
    {"", "Gather", 1, 21, RT_ANY_FIXED, gather_prepare, gather_run, 0},
    {"", "Pad", 1, 21, RT_ANY_FIXED, pad_prepare, pad_run, 0},
    {"", "Tile", 6, 21, RT_ANY_FIXED, tile_prepare, tile_run, 0},
    {"", "Expand", 8, 21, RT_ANY_FIXED, expand_prepare, expand_run, 0},
    {"", "Shape", 1, 21, 0, shape_prepare, shape_run, 0},
    {"", "Size", 1, 21, 0, size_prepare, size_run, 0},
    {"", "ConstantOfShape", 9, 21, RT_I64 | RT_I32, constant_of_shape_prepare, constant_of_shape_run, 0},
    {"", "Cast", 1, 21, RT_ANY_FIXED, cast_prepare, cast_run, 0},
    {"", "CastLike", 15, 21, RT_ANY_FIXED, cast_prepare, cast_run, 0},
    {"", "Range", 11, 21, RT_RANGE, range_prepare, range_run, 0},
    {"", "DepthToSpace", 1, 21, RT_ANY_FIXED, depth_to_space_prepare, depth_to_space_run, 0},
    {"", "SpaceToDepth", 1, 21, RT_ANY_FIXED, space_to_depth_prepare, space_to_depth_run, 0},
    {PC_NHWC_DOMAIN, "DepthToSpace", 1, 21, RT_ANY_FIXED, depth_to_space_prepare, depth_to_space_run, 0},
    {PC_NHWC_DOMAIN, "SpaceToDepth", 1, 21, RT_ANY_FIXED, space_to_depth_prepare, space_to_depth_run, 0},
    {"", "GatherElements", 11, 21, RT_ANY_FIXED, gather_elements_prepare, gather_elements_run, 0},
    {"", "ScatterElements", 11, 21, RT_ANY_FIXED, scatter_elements_prepare, scatter_elements_run, 0},
    {"", "Scatter", 9, 10, RT_ANY_FIXED, scatter_elements_prepare, scatter_elements_run, 0},
    {"", "GatherND", 11, 21, RT_ANY_FIXED, gather_nd_prepare, gather_nd_run, 0},
    {"", "ScatterND", 11, 21, RT_ANY_FIXED, scatter_nd_prepare, scatter_nd_run, 0},
    {"", "Trilu", 14, 21, RT_ANY_FIXED, trilu_prepare, trilu_run, 0},
    {"", "EyeLike", 9, 21, RT_ANY_FIXED, eye_like_prepare, eye_like_run, 0},
    {"", "OneHot", 9, 21, RT_ALL_NUM | RT_BF16, one_hot_prepare, one_hot_run, 0},
    {"", "CumSum", 11, 21, RT_ALL_NUM | RT_BF16, cumsum_prepare, cumsum_run, 0},
    {"", "TopK", 1, 21, RT_ALL_NUM | RT_BF16, topk_prepare, topk_run, 0},
    {"", "ReverseSequence", 10, 21, RT_ANY_FIXED, reverse_sequence_prepare, reverse_sequence_run, 0},
};
const size_t pc_rt_n_kernels_movement = sizeof pc_rt_kernels_movement / sizeof pc_rt_kernels_movement[0];
