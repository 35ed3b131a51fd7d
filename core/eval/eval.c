/* The constant evaluator's driver: element access per dtype (one table row per type, not a loop per type),
 * the op table (sorted, bsearch), output creation under the element budget, and broadcasting. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/half.h"
#include "core/base/strmap.h"
#include "core/eval/eval_internal.h"

/* ---- element access ---- */

#define INT_ACCESS(name, ctype)                                                                              \
    static int64_t load_i_##name(const void *d, uint64_t i)                                                  \
    {                                                                                                        \
        ctype v;                                                                                             \
        memcpy(&v, (const char *)d + i * sizeof v, sizeof v);                                                \
        return (int64_t)v;                                                                                   \
    }                                                                                                        \
    static void store_i_##name(void *d, uint64_t i, int64_t x)                                               \
    {                                                                                                        \
        ctype v = (ctype)(uint64_t)x; /* wraps: conversion to unsigned, then the bit pattern */              \
        memcpy((char *)d + i * sizeof v, &v, sizeof v);                                                      \
    }                                                                                                        \
    static double load_f_##name(const void *d, uint64_t i)                                                   \
    {                                                                                                        \
        ctype v;                                                                                             \
        memcpy(&v, (const char *)d + i * sizeof v, sizeof v);                                                \
        return (double)v;                                                                                    \
    }                                                                                                        \
    static void store_f_##name(void *d, uint64_t i, double x)                                                \
    {                                                                                                        \
        ctype v = (ctype)x; /* callers range-check first */                                                  \
        memcpy((char *)d + i * sizeof v, &v, sizeof v);                                                      \
    }

/* two's complement narrowing through the unsigned type of the same width */
INT_ACCESS(i8, int8_t)
INT_ACCESS(u8, uint8_t)
INT_ACCESS(i16, int16_t)
INT_ACCESS(u16, uint16_t)
INT_ACCESS(i32, int32_t)
INT_ACCESS(u32, uint32_t)
INT_ACCESS(i64, int64_t)
INT_ACCESS(u64, uint64_t)

static int64_t load_i_bool(const void *d, uint64_t i)
{
    return ((const uint8_t *)d)[i] != 0;
}
static void store_i_bool(void *d, uint64_t i, int64_t x)
{
    ((uint8_t *)d)[i] = x != 0;
}
static double load_f_bool(const void *d, uint64_t i)
{
    return ((const uint8_t *)d)[i] != 0;
}
static void store_f_bool(void *d, uint64_t i, double x)
{
    ((uint8_t *)d)[i] = x != 0;
}

static double load_f_f32(const void *d, uint64_t i)
{
    float v;
    memcpy(&v, (const char *)d + 4 * i, 4);
    return v;
}
static void store_f_f32(void *d, uint64_t i, double x)
{
    float v = (float)x;
    memcpy((char *)d + 4 * i, &v, 4);
}
/* float as integer: truncated; NaN and out-of-range values give 0 (callers range-check where it matters) */
static int64_t f64_to_i64(double v)
{
    return v > -0x1p63 && v < 0x1p63 ? (int64_t)v : 0;
}
static int64_t load_i_f32(const void *d, uint64_t i)
{
    return f64_to_i64(load_f_f32(d, i));
}
static void store_i_f32(void *d, uint64_t i, int64_t x)
{
    float v = (float)x; /* one rounding, straight from the integer */
    memcpy((char *)d + 4 * i, &v, 4);
}
static double load_f_f64(const void *d, uint64_t i)
{
    double v;
    memcpy(&v, (const char *)d + 8 * i, 8);
    return v;
}
static void store_f_f64(void *d, uint64_t i, double x)
{
    memcpy((char *)d + 8 * i, &x, 8);
}
static int64_t load_i_f64(const void *d, uint64_t i)
{
    return f64_to_i64(load_f_f64(d, i));
}
static void store_i_f64(void *d, uint64_t i, int64_t x)
{
    store_f_f64(d, i, (double)x);
}
static double load_f_f16(const void *d, uint64_t i)
{
    uint16_t h;
    memcpy(&h, (const char *)d + 2 * i, 2);
    return pc_half_to_double(h);
}
static void store_f_f16(void *d, uint64_t i, double x)
{
    uint16_t h = pc_half_from_double(x); /* rounds to nearest even, once */
    memcpy((char *)d + 2 * i, &h, 2);
}
static int64_t load_i_f16(const void *d, uint64_t i)
{
    return f64_to_i64(load_f_f16(d, i));
}
static void store_i_f16(void *d, uint64_t i, int64_t x)
{
    store_f_f16(d, i, (double)x); /* exact below 2^53; anything larger is inf in float16 anyway */
}

#define ROW(dt, sz, fl, uns, s)                                                                              \
    {                                                                                                        \
        dt, sz, fl, uns, load_f_##s, store_f_##s, load_i_##s, store_i_##s                                    \
    }
static const ev_dtype dtypes[] = {
    ROW(PC_DTYPE_FLOAT, 4, true, false, f32),   ROW(PC_DTYPE_UINT8, 1, false, true, u8),
    ROW(PC_DTYPE_INT8, 1, false, false, i8),    ROW(PC_DTYPE_UINT16, 2, false, true, u16),
    ROW(PC_DTYPE_INT16, 2, false, false, i16),  ROW(PC_DTYPE_INT32, 4, false, false, i32),
    ROW(PC_DTYPE_INT64, 8, false, false, i64),  ROW(PC_DTYPE_BOOL, 1, false, true, bool),
    ROW(PC_DTYPE_FLOAT16, 2, true, false, f16), ROW(PC_DTYPE_DOUBLE, 8, true, false, f64),
    ROW(PC_DTYPE_UINT32, 4, false, true, u32),  ROW(PC_DTYPE_UINT64, 8, false, true, u64),
};
#undef ROW

const ev_dtype *ev_dtype_of(pc_dtype dtype)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].dtype == dtype) return &dtypes[i];
    return NULL;
}

/* ---- the op table: sorted by op_type ---- */

typedef struct ev_op {
    const char *op_type;
    ev_fn run;
} ev_op;

static const ev_op ops[] = {
    {"Abs", ev_abs},
    {"Add", ev_add},
    {"And", ev_and},
    {"Cast", ev_cast},
    {"Concat", ev_concat},
    {"Constant", ev_constant},
    {"ConstantOfShape", ev_constant_of_shape},
    {"Div", ev_div},
    {"Equal", ev_equal},
    {"Expand", ev_expand},
    {"Flatten", ev_flatten},
    {"Gather", ev_gather},
    {"Greater", ev_greater},
    {"Identity", ev_identity},
    {"Less", ev_less},
    {"Max", ev_max},
    {"Min", ev_min},
    {"Mod", ev_mod},
    {"Mul", ev_mul},
    {"Neg", ev_neg},
    {"Not", ev_not},
    {"Or", ev_or},
    {"Range", ev_range},
    {"Reciprocal", ev_reciprocal},
    {"ReduceMax", ev_reduce},
    {"ReduceMin", ev_reduce},
    {"ReduceProd", ev_reduce},
    {"ReduceSum", ev_reduce},
    {"Reshape", ev_reshape},
    {"Shape", ev_shape},
    {"Size", ev_size},
    {"Slice", ev_slice},
    {"Sqrt", ev_sqrt},
    {"Squeeze", ev_squeeze},
    {"Sub", ev_sub},
    {"Transpose", ev_transpose},
    {"Unsqueeze", ev_unsqueeze},
    {"Where", ev_where},
};

static int op_cmp(const void *key, const void *elem)
{
    return pc_name_cmp(key, ((const ev_op *)elem)->op_type);
}

static const ev_op *op_find(const pc_node *node)
{
    if (node->domain[0] && !pc_name_eq(node->domain, "ai.onnx")) return NULL;
    return bsearch(node->op_type, ops, sizeof ops / sizeof ops[0], sizeof ops[0], op_cmp);
}

static pc_dtype value_dtype(const pc_value *v)
{
    if (!v) return PC_DTYPE_UNDEFINED;
    if (v->type.kind == PC_TYPE_TENSOR && v->type.elem != PC_DTYPE_UNDEFINED) return v->type.elem;
    return v->initializer ? v->initializer->dtype : PC_DTYPE_UNDEFINED;
}

bool pc_eval_supports(const pc_node *node)
{
    const ev_op *op = op_find(node);
    if (!op || node->n_outputs != 1 || !node->outputs[0]) return false;
    if (op->run == ev_shape || op->run == ev_size) return true; /* only dims are read: any element type */
    for (uint32_t i = 0; i < node->n_inputs; i++) {
        pc_dtype dt = value_dtype(node->inputs[i]);
        if (node->inputs[i] && dt != PC_DTYPE_UNDEFINED && !ev_dtype_of(dt)) return false;
    }
    pc_dtype x = node->n_inputs ? value_dtype(node->inputs[0]) : PC_DTYPE_UNDEFINED;
    const ev_dtype *xd = ev_dtype_of(x);
    if (op->run == ev_reduce) return ev_reduce_supported(node, x);
    if ((op->run == ev_sqrt || op->run == ev_reciprocal) && xd && !xd->is_float) return false;
    if (op->run == ev_mod && xd && xd->is_float && pc_node_attr_int(node, "fmod", 0) == 0) return false;
    if (op->run == ev_cast) {
        int64_t to = pc_node_attr_int(node, "to", 0);
        return ev_dtype_of((pc_dtype)to) && (x == PC_DTYPE_UNDEFINED || ev_cast_supported(x, (pc_dtype)to));
    }
    return true;
}

/* ---- helpers ---- */

pc_status ev_fail(ev_ctx *c, pc_status st, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pc_error_set(c->err, st, "node '%s' (%s): %s", c->node->name ? c->node->name : "",
                        c->node->op_type, msg);
}

const pc_tensor *ev_in(const ev_ctx *c, uint32_t i)
{
    return i < c->n_in ? c->in[i] : NULL;
}

pc_status ev_need(ev_ctx *c, uint32_t i, const ev_dtype **dt)
{
    const pc_tensor *t = ev_in(c, i);
    if (!t) return ev_fail(c, PC_ERR_ARITY, "input %u is missing", i);
    const ev_dtype *d = ev_dtype_of(t->dtype);
    if (!d) return ev_fail(c, PC_ERR_UNSUPPORTED, "input %u has element type %s", i, pc_dtype_name(t->dtype));
    if (dt) *dt = d;
    return PC_OK;
}

pc_tensor *ev_new_out(ev_ctx *c, uint32_t i, pc_dtype dtype, int32_t rank, const int64_t *dims)
{
    uint64_t n = 1;
    for (int32_t k = 0; k < rank; k++) {
        if (dims[k] < 0) {
            ev_fail(c, PC_ERR_SHAPE, "output %u dim %d would be %lld", i, (int)k, (long long)dims[k]);
            return NULL;
        }
        if (!pc_u64_mul(n, (uint64_t)dims[k], &n)) n = UINT64_MAX;
    }
    if (n > c->max_elements) {
        ev_fail(c, PC_ERR_BUDGET, "output %u would have %llu elements, more than the limit %llu", i,
                (unsigned long long)n, (unsigned long long)c->max_elements);
        return NULL;
    }
    const pc_value *v = i < c->node->n_outputs ? c->node->outputs[i] : NULL;
    pc_tensor *t = pc_tensor_create(c->model, v ? v->name : "", dtype, rank, dims, c->err);
    if (!t)
        pc_error_prefix(c->err, "node '%s' (%s): ", c->node->name, c->node->op_type);
    else
        c->out[i] = t;
    return t;
}

pc_status ev_read_ints(ev_ctx *c, const pc_tensor *t, const char *what, int64_t *vals, size_t cap, size_t *n)
{
    const ev_dtype *d = ev_dtype_of(t->dtype);
    if (t->dtype != PC_DTYPE_INT64 && t->dtype != PC_DTYPE_INT32)
        return ev_fail(c, PC_ERR_TYPE, "%s must be int32 or int64, is %s", what, pc_dtype_name(t->dtype));
    if (t->n_elements > cap)
        return ev_fail(c, PC_ERR_SHAPE, "%s has %llu values", what, (unsigned long long)t->n_elements);
    for (uint64_t k = 0; k < t->n_elements; k++)
        vals[k] = d->load_i(t->data, k);
    *n = (size_t)t->n_elements;
    return PC_OK;
}

pc_status ev_axis(ev_ctx *c, int64_t axis, int32_t rank, const char *what, int32_t *out)
{
    if (axis < -(int64_t)rank || axis >= rank)
        return ev_fail(c, PC_ERR_ATTRIBUTE, "%s %lld is outside [-%d, %d)", what, (long long)axis, (int)rank,
                       (int)rank);
    *out = (int32_t)(axis < 0 ? axis + rank : axis);
    return PC_OK;
}

pc_status ev_broadcast_shape(ev_ctx *c, uint32_t n, const pc_tensor *const *ts, int32_t *rank, int64_t *dims)
{
    int32_t r = 0;
    for (uint32_t i = 0; i < n; i++)
        if (ts[i]->rank > r) r = ts[i]->rank;
    for (int32_t k = 0; k < r; k++)
        dims[k] = 1;
    for (uint32_t i = 0; i < n; i++) {
        for (int32_t k = 0; k < ts[i]->rank; k++) {
            int32_t o = r - ts[i]->rank + k;
            int64_t d = ts[i]->dims[k];
            if (d == dims[o] || d == 1) continue;
            if (dims[o] != 1)
                return ev_fail(c, PC_ERR_SHAPE, "shapes do not broadcast: dim %d is %lld and %lld", (int)o,
                               (long long)dims[o], (long long)d);
            dims[o] = d;
        }
    }
    *rank = r;
    return PC_OK;
}

uint64_t ev_bcast_offset(const pc_tensor *t, int32_t out_rank, const int64_t *idx)
{
    uint64_t off = 0;
    for (int32_t k = 0; k < t->rank; k++) {
        int64_t d = t->dims[k];
        off = off * (uint64_t)d + (d == 1 ? 0 : (uint64_t)idx[out_rank - t->rank + k]);
    }
    return off;
}

void ev_index_next(int32_t rank, const int64_t *dims, int64_t *idx)
{
    for (int32_t k = rank - 1; k >= 0; k--) {
        if (++idx[k] < dims[k]) return;
        idx[k] = 0;
    }
}

void ev_copy_elem(pc_tensor *dst, uint64_t dst_i, const pc_tensor *src, uint64_t src_i)
{
    size_t sz = pc_dtype_bits(dst->dtype) / 8;
    memcpy((char *)dst->data + dst_i * sz, (const char *)src->data + src_i * sz, sz);
}

pc_status pc_eval_node(const pc_node *node, const pc_tensor *const *inputs, uint32_t n_inputs,
                       pc_tensor **outputs, uint64_t max_elements, pc_error *err)
{
    for (uint32_t i = 0; i < node->n_outputs; i++)
        outputs[i] = NULL;
    const ev_op *op = op_find(node);
    if (!op)
        return pc_error_set(err, PC_ERR_UNSUPPORTED,
                            "node '%s': the constant evaluator does not implement %s%s%s", node->name,
                            node->domain, node->domain[0] ? "." : "", node->op_type);
    if (node->n_outputs != 1 || !node->outputs[0]) /* every op here has exactly one output */
        return pc_error_set(err, PC_ERR_ARITY, "node '%s' (%s): the evaluator needs exactly one output",
                            node->name, node->op_type);
    bool dims_only = op->run == ev_shape || op->run == ev_size;
    for (uint32_t i = 0; i < n_inputs && !dims_only; i++) {
        const pc_tensor *t = inputs[i];
        if (t &&
            (t->dtype == PC_DTYPE_STRING || (pc_dtype_bits(t->dtype) % 8) != 0 || !ev_dtype_of(t->dtype)))
            return pc_error_set(err, PC_ERR_UNSUPPORTED, "node '%s' (%s): input %u has element type %s",
                                node->name, node->op_type, i, pc_dtype_name(t->dtype));
    }
    ev_ctx c = {.node = node,
                .model = node->graph->model,
                .opset = pc_model_opset(node->graph->model, ""),
                .in = inputs,
                .n_in = n_inputs,
                .out = outputs,
                .n_out = node->n_outputs,
                .max_elements = max_elements,
                .err = err};
    pc_status st = op->run(&c);
    if (st != PC_OK)
        for (uint32_t i = 0; i < node->n_outputs; i++)
            outputs[i] = NULL; /* stay in the model until it is freed */
    return st;
}
