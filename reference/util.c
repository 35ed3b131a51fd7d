/* Helpers shared by the reference op families: errors, dtype predicates, element access, broadcasting, axes
 * and attributes. Element access goes through one switch on the dtype so each op is written once for every
 * type. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref_internal.h"

/* ---- errors
 * -------------------------------------------------------------------------------------------------- */

static pc_status ref_failv(ref_ctx *ctx, pc_status status, const char *fmt, va_list ap)
{
    char msg[768];
    vsnprintf(msg, sizeof msg, fmt, ap);
    const pc_node *n = ctx->node;
    if (!n) return pc_error_set(ctx->err, status, "%s", msg);
    return pc_error_set(ctx->err, status, "node '%s' (%s%s%s, opset %lld): %s", n->name ? n->name : "",
                        *n->domain ? n->domain : "", *n->domain ? ":" : "", n->op_type, (long long)ctx->opset,
                        msg);
}

pc_status ref_fail(ref_ctx *ctx, pc_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pc_status st = ref_failv(ctx, status, fmt, ap);
    va_end(ap);
    return st;
}

pc_status ref_unsupported(ref_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char msg[640];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ref_fail(ctx, PC_ERR_UNSUPPORTED, "unsupported by the reference executor: %s", msg);
}

/* ---- dtypes
 * -------------------------------------------------------------------------------------------------- */

bool ref_is_float(pc_dtype t)
{
    return t == PC_DTYPE_FLOAT || t == PC_DTYPE_DOUBLE || t == PC_DTYPE_FLOAT16 || t == PC_DTYPE_BFLOAT16;
}

bool ref_is_signed(pc_dtype t)
{
    return t == PC_DTYPE_INT8 || t == PC_DTYPE_INT16 || t == PC_DTYPE_INT32 || t == PC_DTYPE_INT64;
}

bool ref_is_int(pc_dtype t)
{
    return ref_is_signed(t) || t == PC_DTYPE_UINT8 || t == PC_DTYPE_UINT16 || t == PC_DTYPE_UINT32 ||
           t == PC_DTYPE_UINT64;
}

bool ref_is_numeric(pc_dtype t)
{
    return ref_is_float(t) || ref_is_int(t) || t == PC_DTYPE_BOOL;
}

pc_status ref_require_tensor(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, uint32_t index)
{
    if (index >= n_in || !in[index]) return ref_fail(ctx, PC_ERR_ARITY, "input %u is required", index);
    if (in[index]->kind != PC_TYPE_TENSOR)
        return ref_fail(ctx, PC_ERR_TYPE, "input %u must be a tensor", index);
    return PC_OK;
}

pc_status ref_require_dtype(ref_ctx *ctx, const pc_data *d, uint32_t index, bool (*pred)(pc_dtype),
                            const char *what)
{
    if (d->kind != PC_TYPE_TENSOR || !pred(d->dtype))
        return ref_fail(ctx, PC_ERR_TYPE, "input %u: element type must be %s, got %s", index, what,
                        d->kind == PC_TYPE_TENSOR ? pc_dtype_name(d->dtype) : "a non-tensor value");
    return PC_OK;
}

float ref_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp) {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    } else if (!man) {
        bits = sign;
    } else { /* subnormal: value = man * 2^-24 */
        float v = (float)man * 0x1p-24f;
        memcpy(&bits, &v, 4);
        bits |= sign;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t ref_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00);  /* NaN */
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* rounds to >= 65520: inf */
    if (ax < 0x38800000u) { /* below the smallest normal half: subnormal or 0 */
        float a;
        memcpy(&a, &ax, 4);
        /* a * 2^24 is the subnormal mantissa; rintf rounds half to even in the default mode */
        return (uint16_t)(sign | (uint16_t)rintf(a * 0x1p24f));
    }
    uint32_t man = ax & 0x7fffff, exp = (ax >> 23) - 112;
    uint32_t h = (exp << 10) | (man >> 13), rest = man & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++; /* carry into the exponent is correct */
    return (uint16_t)(sign | h);
}

float ref_bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t ref_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* ---- element access
 * ------------------------------------------------------------------------------------------ */

#define LOAD(type, t, i) (((const type *)(t)->data)[i])

double ref_get_f64(const pc_data *t, uint64_t i)
{
    switch (t->dtype) {
    case PC_DTYPE_FLOAT:
        return LOAD(float, t, i);
    case PC_DTYPE_DOUBLE:
        return LOAD(double, t, i);
    case PC_DTYPE_FLOAT16:
        return ref_f16_to_f32(LOAD(uint16_t, t, i));
    case PC_DTYPE_BFLOAT16:
        return ref_bf16_to_f32(LOAD(uint16_t, t, i));
    case PC_DTYPE_INT8:
        return LOAD(int8_t, t, i);
    case PC_DTYPE_INT16:
        return LOAD(int16_t, t, i);
    case PC_DTYPE_INT32:
        return LOAD(int32_t, t, i);
    case PC_DTYPE_INT64:
        return (double)LOAD(int64_t, t, i);
    case PC_DTYPE_UINT8:
        return LOAD(uint8_t, t, i);
    case PC_DTYPE_UINT16:
        return LOAD(uint16_t, t, i);
    case PC_DTYPE_UINT32:
        return LOAD(uint32_t, t, i);
    case PC_DTYPE_UINT64:
        return (double)LOAD(uint64_t, t, i);
    case PC_DTYPE_BOOL:
        return LOAD(uint8_t, t, i) ? 1.0 : 0.0;
    default:
        return NAN;
    }
}

static int64_t f64_to_i64(double v)
{
    if (isnan(v)) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

int64_t ref_get_i64(const pc_data *t, uint64_t i)
{
    switch (t->dtype) {
    case PC_DTYPE_INT8:
        return LOAD(int8_t, t, i);
    case PC_DTYPE_INT16:
        return LOAD(int16_t, t, i);
    case PC_DTYPE_INT32:
        return LOAD(int32_t, t, i);
    case PC_DTYPE_INT64:
        return LOAD(int64_t, t, i);
    case PC_DTYPE_UINT8:
        return LOAD(uint8_t, t, i);
    case PC_DTYPE_UINT16:
        return LOAD(uint16_t, t, i);
    case PC_DTYPE_UINT32:
        return LOAD(uint32_t, t, i);
    case PC_DTYPE_UINT64:
        return (int64_t)LOAD(uint64_t, t, i); /* wraps above INT64_MAX, as a bit pattern */
    case PC_DTYPE_BOOL:
        return LOAD(uint8_t, t, i) ? 1 : 0;
    default:
        return f64_to_i64(ref_get_f64(t, i));
    }
}

#define STORE(type, t, i, v) (((type *)(t)->data)[i] = (type)(v))

void ref_set_i64(pc_data *t, uint64_t i, int64_t v)
{
    uint64_t u = (uint64_t)v; /* wrap through unsigned: conversion to a narrower unsigned type is defined */
    switch (t->dtype) {
    case PC_DTYPE_INT8: {
        uint8_t b = (uint8_t)u;
        int8_t s;
        memcpy(&s, &b, 1);
        STORE(int8_t, t, i, s);
        break;
    }
    case PC_DTYPE_INT16: {
        uint16_t b = (uint16_t)u;
        int16_t s;
        memcpy(&s, &b, 2);
        STORE(int16_t, t, i, s);
        break;
    }
    case PC_DTYPE_INT32: {
        uint32_t b = (uint32_t)u;
        int32_t s;
        memcpy(&s, &b, 4);
        STORE(int32_t, t, i, s);
        break;
    }
    case PC_DTYPE_INT64:
        STORE(int64_t, t, i, v);
        break;
    case PC_DTYPE_UINT8:
        STORE(uint8_t, t, i, u);
        break;
    case PC_DTYPE_UINT16:
        STORE(uint16_t, t, i, u);
        break;
    case PC_DTYPE_UINT32:
        STORE(uint32_t, t, i, u);
        break;
    case PC_DTYPE_UINT64:
        STORE(uint64_t, t, i, u);
        break;
    case PC_DTYPE_BOOL:
        STORE(uint8_t, t, i, v != 0);
        break;
    default:
        ref_set_f64(t, i, (double)v);
    }
}

/* double -> float16/bfloat16 with ONE rounding: round to odd into float (24 bits, well above the 11 or 8 the
 * target keeps), then round to nearest even. Going through a plainly rounded float would round twice. */
static float f64_to_f32_odd(double v)
{
    float f = (float)v;
    if (isnan(v) || isinf(f) || (double)f == v) return f;
    if (fabs((double)f) > fabs(v)) f = nextafterf(f, 0.0f);
    uint32_t bits;
    memcpy(&bits, &f, 4);
    bits |= 1;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t ref_f64_to_f16(double v)
{
    return ref_f32_to_f16(f64_to_f32_odd(v));
}

uint16_t ref_f64_to_bf16(double v)
{
    return ref_f32_to_bf16(f64_to_f32_odd(v));
}

void ref_set_f64(pc_data *t, uint64_t i, double v)
{
    switch (t->dtype) {
    case PC_DTYPE_FLOAT:
        STORE(float, t, i, v);
        break;
    case PC_DTYPE_DOUBLE:
        STORE(double, t, i, v);
        break;
    case PC_DTYPE_FLOAT16:
        STORE(uint16_t, t, i, ref_f64_to_f16(v));
        break;
    case PC_DTYPE_BFLOAT16:
        STORE(uint16_t, t, i, ref_f64_to_bf16(v));
        break;
    case PC_DTYPE_BOOL:
        STORE(uint8_t, t, i, v != 0);
        break;
    case PC_DTYPE_UINT64:
        if (v >= 18446744073709551615.0)
            STORE(uint64_t, t, i, UINT64_MAX);
        else if (v > 0)
            STORE(uint64_t, t, i, (uint64_t)v);
        else
            ref_set_i64(t, i, f64_to_i64(v));
        break;
    default:
        ref_set_i64(t, i, f64_to_i64(v));
    }
}

bool ref_copy_elem(pc_data *dst, uint64_t di, const pc_data *src, uint64_t si)
{
    if (dst->dtype == PC_DTYPE_STRING) {
        pc_bytes *d = &((pc_bytes *)dst->data)[di];
        const pc_bytes *s = &((const pc_bytes *)src->data)[si];
        uint8_t *copy = NULL;
        if (s->len) {
            copy = malloc(s->len);
            if (!copy) return false;
            memcpy(copy, s->data, s->len);
        }
        free(d->data);
        d->data = copy;
        d->len = s->len;
        return true;
    }
    size_t es = pc_dtype_bits(dst->dtype) / 8;
    memcpy((uint8_t *)dst->data + di * es, (const uint8_t *)src->data + si * es, es);
    return true;
}

bool ref_copy_elems(pc_data *dst, uint64_t di, const pc_data *src, uint64_t si, uint64_t n)
{
    if (dst->dtype == PC_DTYPE_STRING) {
        for (uint64_t k = 0; k < n; k++)
            if (!ref_copy_elem(dst, di + k, src, si + k)) return false;
        return true;
    }
    size_t es = pc_dtype_bits(dst->dtype) / 8;
    if (n) memcpy((uint8_t *)dst->data + di * es, (const uint8_t *)src->data + si * es, (size_t)(n * es));
    return true;
}

/* ---- new values
 * ---------------------------------------------------------------------------------------------- */

pc_data *ref_new_tensor(ref_ctx *ctx, pc_dtype dtype, int32_t rank, const int64_t *dims)
{
    if (rank < 0 || rank > PC_MAX_RANK) {
        ref_fail(ctx, PC_ERR_SHAPE, "output rank %d exceeds the limit %d", (int)rank, PC_MAX_RANK);
        return NULL;
    }
    bool empty = false;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] < 0) {
            ref_fail(ctx, PC_ERR_SHAPE, "output dimension %d would be negative (%lld)", (int)i,
                     (long long)dims[i]);
            return NULL;
        }
        empty |= dims[i] == 0;
    }
    /* an empty tensor is fine whatever its other dims; otherwise the element count is capped */
    uint64_t count = 1;
    for (int32_t i = 0; !empty && i < rank; i++) {
        if ((uint64_t)dims[i] > REF_MAX_ELEMENTS / count) {
            ref_fail(ctx, PC_ERR_BUDGET, "output of more than 2^31 elements refused (dimension %d is %lld)",
                     (int)i, (long long)dims[i]);
            return NULL;
        }
        count *= (uint64_t)dims[i];
    }
    pc_error e;
    pc_data *d = pc_data_new_tensor(dtype, rank, dims, &e);
    if (!d) ref_fail(ctx, e.status, "%s", e.message);
    return d;
}

pc_data *ref_new_scalar(ref_ctx *ctx, pc_dtype dtype)
{
    return ref_new_tensor(ctx, dtype, 0, NULL);
}

pc_data *ref_reshaped(ref_ctx *ctx, const pc_data *src, int32_t rank, const int64_t *dims)
{
    pc_data *d = ref_new_tensor(ctx, src->dtype, rank, dims);
    if (!d) return NULL;
    if (d->n_elements != src->n_elements) {
        pc_data_unref(d);
        ref_fail(ctx, PC_ERR_INTERNAL, "reshape of %llu elements to %llu",
                 (unsigned long long)src->n_elements, (unsigned long long)d->n_elements);
        return NULL;
    }
    for (uint64_t i = 0; i < d->n_elements; i++)
        if (!ref_copy_elem(d, i, src, i)) {
            pc_data_unref(d);
            ref_fail(ctx, PC_ERR_NOMEM, "out of memory copying strings");
            return NULL;
        }
    return d;
}

void ref_unref_all(pc_data **values, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        pc_data_unref(values[i]);
        values[i] = NULL;
    }
}

/* ---- shapes
 * -------------------------------------------------------------------------------------------------- */

uint64_t ref_shape_count(int32_t rank, const int64_t *dims)
{
    uint64_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= (uint64_t)dims[i];
    return n;
}

void ref_strides(int32_t rank, const int64_t *dims, int64_t *strides)
{
    /* unsigned: an empty tensor may have huge other dims whose product wraps; nothing indexes it then */
    uint64_t s = 1;
    for (int32_t i = rank - 1; i >= 0; i--) {
        strides[i] = (int64_t)s;
        s *= (uint64_t)dims[i];
    }
}

pc_status ref_broadcast_shape(ref_ctx *ctx, uint32_t n, pc_data *const *ts, ref_shape *out)
{
    out->rank = 0;
    for (uint32_t k = 0; k < n; k++)
        if (ts[k]->rank > out->rank) out->rank = ts[k]->rank;
    for (int32_t d = 0; d < out->rank; d++)
        out->dims[d] = 1;
    for (uint32_t k = 0; k < n; k++) {
        int32_t off = out->rank - ts[k]->rank;
        for (int32_t d = 0; d < ts[k]->rank; d++) {
            int64_t a = out->dims[off + d], b = ts[k]->dims[d];
            if (a == b || b == 1) continue;
            if (a == 1) {
                out->dims[off + d] = b;
                continue;
            }
            char da[96], db[96];
            return ref_fail(ctx, PC_ERR_SHAPE,
                            "inputs cannot be broadcast together: input %u is %s, dimension %d is %lld "
                            "elsewhere (%s)",
                            k, pc_data_describe(ts[k], da, sizeof da), (int)(off + d), (long long)a,
                            pc_data_describe(ts[0], db, sizeof db));
        }
    }
    return PC_OK;
}

void ref_broadcast_strides(const pc_data *t, const ref_shape *out, int64_t *strides)
{
    int32_t off = out->rank - t->rank;
    for (int32_t d = 0; d < off; d++)
        strides[d] = 0;
    int64_t s = 1;
    for (int32_t d = t->rank - 1; d >= 0; d--) {
        strides[off + d] = t->dims[d] == 1 ? 0 : s;
        s = (int64_t)((uint64_t)s * (uint64_t)t->dims[d]); /* wraps only past an empty axis: never indexed */
    }
}

void ref_broadcast_index(const pc_data *t, const ref_shape *out, uint64_t *idx)
{
    uint64_t n = ref_shape_count(out->rank, out->dims);
    if (!n) return;
    int64_t in_strides[PC_MAX_RANK];
    ref_broadcast_strides(t, out, in_strides);
    int64_t counter[PC_MAX_RANK] = {0};
    uint64_t pos = 0;
    for (uint64_t i = 0; i < n; i++) {
        idx[i] = pos;
        for (int32_t d = out->rank - 1; d >= 0; d--) {
            pos += (uint64_t)in_strides[d];
            if (++counter[d] < out->dims[d]) break;
            pos -= (uint64_t)(in_strides[d] * out->dims[d]);
            counter[d] = 0;
        }
    }
}

pc_status ref_broadcast_result(ref_ctx *ctx, uint32_t k, pc_data *const *ts, ref_shape *out, uint64_t *n_out)
{
    pc_status st = ref_broadcast_shape(ctx, k, ts, out);
    if (st != PC_OK) return st;
    uint64_t n = 1;
    for (int32_t d = 0; d < out->rank; d++) {
        uint64_t dim = (uint64_t)out->dims[d];
        if (dim && n > REF_MAX_ELEMENTS / dim)
            return ref_fail(ctx, PC_ERR_BUDGET, "broadcast result would have more than 2^31 elements");
        n *= dim;
    }
    *n_out = n;
    return PC_OK;
}

pc_status ref_bcast_init(ref_ctx *ctx, uint32_t k, pc_data *const *ts, ref_bcast *b)
{
    b->idx = NULL;
    uint64_t n = 0;
    pc_status st = ref_broadcast_result(ctx, k, ts, &b->shape, &n);
    if (st != PC_OK) return st;
    b->n = n;
    size_t bytes;
    if (!pc_size_mul((size_t)(n ? n : 1), (size_t)k * sizeof *b->idx, &bytes) || !(b->idx = malloc(bytes)))
        return ref_fail(ctx, PC_ERR_NOMEM, "out of memory broadcasting %u inputs to %llu elements", k,
                        (unsigned long long)n);
    for (uint32_t j = 0; j < k; j++)
        ref_broadcast_index(ts[j], &b->shape, b->idx + (size_t)j * n);
    return PC_OK;
}

pc_status ref_require_pair(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, bool (*accept)(pc_dtype),
                           const char *what, bool same_dtype)
{
    pc_status st;
    if ((st = ref_require_tensor(ctx, in, n_in, 0)) != PC_OK ||
        (st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK)
        return st;
    if ((st = ref_require_dtype(ctx, in[0], 0, accept, what)) != PC_OK ||
        (st = ref_require_dtype(ctx, in[1], 1, accept, what)) != PC_OK)
        return st;
    if (same_dtype && in[0]->dtype != in[1]->dtype)
        return ref_fail(ctx, PC_ERR_TYPE, "inputs have different element types (%s and %s)",
                        pc_dtype_name(in[0]->dtype), pc_dtype_name(in[1]->dtype));
    return PC_OK;
}

pc_status ref_require_bytewise(ref_ctx *ctx, pc_dtype dtype, const char *where)
{
    unsigned bits = pc_dtype_bits(dtype);
    if (dtype != PC_DTYPE_STRING && (bits == 0 || bits % 8))
        return ref_unsupported(ctx, "element type %s in %s", pc_dtype_name(dtype), where);
    return PC_OK;
}

pc_status ref_axis(ref_ctx *ctx, int64_t axis, int32_t rank, bool inclusive, int32_t *out)
{
    int64_t r = inclusive ? rank + 1 : rank;
    if (axis < -r || axis >= r)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "axis %lld is out of range for rank %d", (long long)axis,
                        (int)rank);
    *out = (int32_t)(axis < 0 ? axis + r : axis);
    return PC_OK;
}

/* ---- attributes
 * ---------------------------------------------------------------------------------------------- */

int64_t ref_attr_int(ref_ctx *ctx, const char *name, int64_t fallback)
{
    const pc_attr *a = pc_node_attr(ctx->node, name);
    return a && a->type == PC_ATTR_INT ? a->i : fallback;
}

double ref_attr_float(ref_ctx *ctx, const char *name, double fallback)
{
    const pc_attr *a = pc_node_attr(ctx->node, name);
    if (a && a->type == PC_ATTR_FLOAT) return a->f;
    if (a && a->type == PC_ATTR_INT) return (double)a->i;
    /* ONNX float attributes are 32-bit, defaults included: LeakyRelu's 0.01 is 0.01f, not the double 0.01 */
    return (double)(float)fallback;
}

const char *ref_attr_string(ref_ctx *ctx, const char *name, const char *fallback)
{
    const pc_attr *a = pc_node_attr(ctx->node, name);
    return a && a->type == PC_ATTR_STRING ? (const char *)a->s.data : fallback;
}

const int64_t *ref_attr_ints(ref_ctx *ctx, const char *name, size_t *n)
{
    const pc_attr *a = pc_node_attr(ctx->node, name);
    if (a && a->type == PC_ATTR_INTS) {
        *n = a->n;
        return a->ints;
    }
    *n = 0;
    return NULL;
}

const float *ref_attr_floats(ref_ctx *ctx, const char *name, size_t *n)
{
    const pc_attr *a = pc_node_attr(ctx->node, name);
    if (a && a->type == PC_ATTR_FLOATS) {
        *n = a->n;
        return a->floats;
    }
    *n = 0;
    return NULL;
}

bool ref_has_attr(ref_ctx *ctx, const char *name)
{
    return pc_node_attr(ctx->node, name) != NULL;
}

pc_status ref_read_ints(ref_ctx *ctx, const pc_data *t, const char *what, int64_t **vals, size_t *n)
{
    *vals = NULL;
    *n = 0;
    if (t->kind != PC_TYPE_TENSOR || !ref_is_int(t->dtype))
        return ref_fail(ctx, PC_ERR_TYPE, "%s must be an integer tensor", what);
    if (t->n_elements > SIZE_MAX / sizeof(int64_t))
        return ref_fail(ctx, PC_ERR_OVERFLOW, "%s is too large", what);
    *vals = malloc(t->n_elements ? (size_t)t->n_elements * sizeof(int64_t) : 1);
    if (!*vals) return ref_fail(ctx, PC_ERR_NOMEM, "out of memory reading %s", what);
    for (uint64_t i = 0; i < t->n_elements; i++)
        (*vals)[i] = ref_get_i64(t, i);
    *n = (size_t)t->n_elements;
    return PC_OK;
}
