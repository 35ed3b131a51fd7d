/* Shape inference driver: the (domain, op) table, the helpers every family shares, and the merge of inferred
 * types into the declared ones (declared wins where both are known and agree; unknown dims are refined; a
 * contradiction is an error naming the node, the value and the dim). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/strmap.h"
#include "core/shape/shape_internal.h"

/* ---- the table: sorted by (domain, op_type) ---- */

/* clang-format off */
#define ONNX(op, fn)     {"", op, fn, false, 0, false, 0},
#define MS(op, fn)       {PC_MS_DOMAIN, op, fn, false, 0, false, 0},
#define NHWC(op, fn)     {PC_NHWC_DOMAIN, op, fn, true, 0, false, 0},
/* nChw<b>c input 0 and output 0 (w: the input holding a blocked weight, or 0); and the blocked domain's other
 * ops */
#define BLOCKED(op, fn, w) {PC_BLOCKED_DOMAIN, op, fn, false, 0, true, w},
#define BLOCKED_OTHER(op, fn) {PC_BLOCKED_DOMAIN, op, fn, false, 0, false, 0},
/* channels-last, and input w an HWIO weight the rule sees as OIHW */
#define SYSTOLIC(op, fn, w) {PC_SYSTOLIC_DOMAIN, op, fn, true, w, false, 0},
/* layout-blind (elementwise) */
#define SYSTOLIC_ANY(op, fn) {PC_SYSTOLIC_DOMAIN, op, fn, false, 0, false, 0},

static const sh_rule rules[] = {
    ONNX("Abs", sh_infer_same)
    ONNX("Acos", sh_infer_same)
    ONNX("Acosh", sh_infer_same)
    ONNX("Add", sh_infer_broadcast)
    ONNX("And", sh_infer_compare)
    ONNX("ArgMax", sh_infer_arg_reduce)
    ONNX("ArgMin", sh_infer_arg_reduce)
    ONNX("Asin", sh_infer_same)
    ONNX("Asinh", sh_infer_same)
    ONNX("Atan", sh_infer_same)
    ONNX("Atanh", sh_infer_same)
    ONNX("AveragePool", sh_infer_pool)
    ONNX("BatchNormalization", sh_infer_batch_norm)
    ONNX("BitShift", sh_infer_broadcast)
    ONNX("BitwiseAnd", sh_infer_broadcast)
    ONNX("BitwiseNot", sh_infer_same)
    ONNX("BitwiseOr", sh_infer_broadcast)
    ONNX("BitwiseXor", sh_infer_broadcast)
    ONNX("Cast", sh_infer_cast)
    ONNX("CastLike", sh_infer_cast_like)
    ONNX("Ceil", sh_infer_same)
    ONNX("Celu", sh_infer_same)
    ONNX("Clip", sh_infer_same)
    ONNX("Concat", sh_infer_concat)
    ONNX("Constant", sh_infer_constant)
    ONNX("ConstantOfShape", sh_infer_constant_of_shape)
    ONNX("Conv", sh_infer_conv)
    ONNX("ConvInteger", sh_infer_conv_integer)
    ONNX("ConvTranspose", sh_infer_conv_transpose)
    ONNX("Cos", sh_infer_same)
    ONNX("Cosh", sh_infer_same)
    ONNX("CumSum", sh_infer_same)
    ONNX("DepthToSpace", sh_infer_depth_to_space)
    ONNX("DequantizeLinear", sh_infer_dequantize)
    ONNX("Div", sh_infer_broadcast)
    ONNX("Dropout", sh_infer_dropout)
    ONNX("DynamicQuantizeLinear", sh_infer_dynamic_quantize)
    ONNX("Elu", sh_infer_same)
    ONNX("Equal", sh_infer_compare)
    ONNX("Erf", sh_infer_same)
    ONNX("Exp", sh_infer_same)
    ONNX("Expand", sh_infer_expand)
    ONNX("EyeLike", sh_infer_eye_like)
    ONNX("Flatten", sh_infer_flatten)
    ONNX("Floor", sh_infer_same)
    ONNX("Gather", sh_infer_gather)
    ONNX("GatherElements", sh_infer_gather_elements)
    ONNX("Gelu", sh_infer_same)
    ONNX("Gemm", sh_infer_gemm)
    ONNX("GlobalAveragePool", sh_infer_global_pool)
    ONNX("GlobalLpPool", sh_infer_global_pool)
    ONNX("GlobalMaxPool", sh_infer_global_pool)
    ONNX("Greater", sh_infer_compare)
    ONNX("GreaterOrEqual", sh_infer_compare)
    ONNX("GridSample", sh_infer_grid_sample)
    ONNX("HardSigmoid", sh_infer_same)
    ONNX("HardSwish", sh_infer_same)
    ONNX("Hardmax", sh_infer_same)
    ONNX("Identity", sh_infer_same)
    ONNX("If", sh_infer_if)
    ONNX("InstanceNormalization", sh_infer_same)
    ONNX("IsInf", sh_infer_same_bool)
    ONNX("IsNaN", sh_infer_same_bool)
    ONNX("LRN", sh_infer_same)
    ONNX("LayerNormalization", sh_infer_layer_norm)
    ONNX("LeakyRelu", sh_infer_same)
    ONNX("Less", sh_infer_compare)
    ONNX("LessOrEqual", sh_infer_compare)
    ONNX("Log", sh_infer_same)
    ONNX("LogSoftmax", sh_infer_same)
    ONNX("Loop", sh_infer_loop)
    ONNX("LpPool", sh_infer_pool)
    ONNX("MatMul", sh_infer_matmul)
    ONNX("MatMulInteger", sh_infer_matmul_integer)
    ONNX("Max", sh_infer_broadcast)
    ONNX("MaxPool", sh_infer_pool)
    ONNX("MaxUnpool", sh_infer_max_unpool)
    ONNX("Mean", sh_infer_broadcast)
    ONNX("MeanVarianceNormalization", sh_infer_same)
    ONNX("Min", sh_infer_broadcast)
    ONNX("Mish", sh_infer_same)
    ONNX("Mod", sh_infer_broadcast)
    ONNX("Mul", sh_infer_broadcast)
    ONNX("Neg", sh_infer_same)
    ONNX("NonZero", sh_infer_non_zero)
    ONNX("Not", sh_infer_same)
    ONNX("OneHot", sh_infer_one_hot)
    ONNX("Or", sh_infer_compare)
    ONNX("PRelu", sh_infer_same) /* slope broadcasts to X (one way) */
    ONNX("Pad", sh_infer_pad)
    ONNX("Pow", sh_infer_broadcast)
    ONNX("QLinearConv", sh_infer_qlinear_conv)
    ONNX("QLinearMatMul", sh_infer_qlinear_matmul)
    ONNX("QuantizeLinear", sh_infer_quantize)
    ONNX("Range", sh_infer_range)
    ONNX("Reciprocal", sh_infer_same)
    ONNX("ReduceL1", sh_infer_reduce)
    ONNX("ReduceL2", sh_infer_reduce)
    ONNX("ReduceLogSum", sh_infer_reduce)
    ONNX("ReduceLogSumExp", sh_infer_reduce)
    ONNX("ReduceMax", sh_infer_reduce)
    ONNX("ReduceMean", sh_infer_reduce)
    ONNX("ReduceMin", sh_infer_reduce)
    ONNX("ReduceProd", sh_infer_reduce)
    ONNX("ReduceSum", sh_infer_reduce)
    ONNX("ReduceSumSquare", sh_infer_reduce)
    ONNX("Relu", sh_infer_same)
    ONNX("Reshape", sh_infer_reshape)
    ONNX("Resize", sh_infer_resize)
    ONNX("ReverseSequence", sh_infer_same)
    ONNX("Round", sh_infer_same)
    ONNX("Scan", sh_infer_scan)
    ONNX("Scatter", sh_infer_same)
    ONNX("ScatterElements", sh_infer_same)
    ONNX("ScatterND", sh_infer_same)
    ONNX("Selu", sh_infer_same)
    ONNX("Shape", sh_infer_shape)
    ONNX("Shrink", sh_infer_same)
    ONNX("Sigmoid", sh_infer_same)
    ONNX("Sign", sh_infer_same)
    ONNX("Sin", sh_infer_same)
    ONNX("Sinh", sh_infer_same)
    ONNX("Size", sh_infer_size)
    ONNX("Slice", sh_infer_slice)
    ONNX("Softmax", sh_infer_same)
    ONNX("Softplus", sh_infer_same)
    ONNX("Softsign", sh_infer_same)
    ONNX("SpaceToDepth", sh_infer_space_to_depth)
    ONNX("Split", sh_infer_split)
    ONNX("Sqrt", sh_infer_same)
    ONNX("Squeeze", sh_infer_squeeze)
    ONNX("Sub", sh_infer_broadcast)
    ONNX("Sum", sh_infer_broadcast)
    ONNX("Tan", sh_infer_same)
    ONNX("Tanh", sh_infer_same)
    ONNX("ThresholdedRelu", sh_infer_same)
    ONNX("Tile", sh_infer_tile)
    ONNX("TopK", sh_infer_top_k)
    ONNX("Transpose", sh_infer_transpose)
    ONNX("Trilu", sh_infer_same)
    ONNX("Unsqueeze", sh_infer_unsqueeze)
    ONNX("Where", sh_infer_where)
    ONNX("Xor", sh_infer_compare)
    MS("FusedConv", sh_infer_conv)
    MS("FusedGemm", sh_infer_gemm)
    MS("Gelu", sh_infer_same)
    MS("QLinearAdd", sh_infer_qlinear_add)
    MS("QLinearConvRelu", sh_infer_qlinear_conv)
    NHWC("AveragePool", sh_infer_pool)
    NHWC("BatchNormalization", sh_infer_batch_norm)
    NHWC("Conv", sh_infer_conv)
    NHWC("ConvTranspose", sh_infer_conv_transpose)
    NHWC("DepthToSpace", sh_infer_depth_to_space)
    NHWC("FusedConv", sh_infer_conv)
    NHWC("GlobalAveragePool", sh_infer_global_pool)
    NHWC("GlobalLpPool", sh_infer_global_pool)
    NHWC("GlobalMaxPool", sh_infer_global_pool)
    NHWC("GridSample", sh_infer_grid_sample)
    NHWC("InstanceNormalization", sh_infer_same)
    NHWC("LRN", sh_infer_same)
    NHWC("LpPool", sh_infer_pool)
    NHWC("MaxPool", sh_infer_pool)
    NHWC("MaxUnpool", sh_infer_max_unpool)
    NHWC("QLinearConv", sh_infer_qlinear_conv)
    NHWC("Resize", sh_infer_resize)
    NHWC("SpaceToDepth", sh_infer_space_to_depth)
    BLOCKED_OTHER("Add", sh_infer_broadcast)
    BLOCKED("AveragePool", sh_infer_pool, 0)
    BLOCKED("BatchNormalization", sh_infer_batch_norm, 0)
    BLOCKED_OTHER("Concat", sh_infer_concat)
    BLOCKED("Conv", sh_infer_conv, 1)
    BLOCKED_OTHER("FromBlocked", sh_infer_from_blocked)
    BLOCKED("GlobalAveragePool", sh_infer_global_pool, 0)
    BLOCKED("GlobalMaxPool", sh_infer_global_pool, 0)
    BLOCKED("LRN", sh_infer_same, 0)
    BLOCKED("MaxPool", sh_infer_pool, 0)
    BLOCKED_OTHER("Relu", sh_infer_same)
    BLOCKED_OTHER("Subgraph", sh_infer_blocked_subgraph)
    BLOCKED_OTHER("Sum", sh_infer_broadcast)
    BLOCKED_OTHER("ToBlocked", sh_infer_to_blocked)
    SYSTOLIC_ANY("QLinearAdd", sh_infer_systolic_add)
    SYSTOLIC("QLinearConv_nhwc", sh_infer_qlinear_conv, 3)
    SYSTOLIC_ANY("QLinearRelu", sh_infer_qlinear_relu)
};

#undef ONNX
#undef MS
#undef NHWC
#undef BLOCKED
#undef BLOCKED_OTHER
#undef SYSTOLIC
#undef SYSTOLIC_ANY
/* clang-format on */

static const size_t n_rules = sizeof rules / sizeof rules[0];

static int rule_cmp(const char *domain, const char *op, const sh_rule *r)
{
    int d = pc_name_cmp(domain, r->domain);
    return d ? d : pc_name_cmp(op, r->op_type);
}

static int rule_key_cmp(const void *key, const void *elem)
{
    const sh_rule *k = key;
    return rule_cmp(k->domain, k->op_type, elem);
}

size_t pc_shape_rule_count(void)
{
    return n_rules;
}

const sh_rule *pc_shape_rule_at(size_t index)
{
    return index < n_rules ? &rules[index] : NULL;
}

const sh_rule *pc_shape_rule_find(const char *domain, const char *op_type)
{
    if (!domain || strcmp(domain, "ai.onnx") == 0) domain = "";
    sh_rule key = {domain, op_type, NULL, false, 0, false, 0};
    return bsearch(&key, rules, n_rules, sizeof rules[0], rule_key_cmp);
}

bool pc_shape_table_check(char *why, size_t why_size)
{
    for (size_t i = 1; i < n_rules; i++) {
        if (rule_cmp(rules[i].domain, rules[i].op_type, &rules[i - 1]) <= 0) {
            snprintf(why, why_size, "'%s' %s is not after '%s' %s", rules[i].domain, rules[i].op_type,
                     rules[i - 1].domain, rules[i - 1].op_type);
            return false;
        }
    }
    return true;
}

/* ---- helpers ---- */

static pc_status fail_va(sh_ctx *c, pc_status st, const char *fmt, va_list ap)
{
    char msg[768];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return pc_error_set(c->err, st, "node '%s' (%s%s%s): %s", c->node->name ? c->node->name : "",
                        c->node->domain[0] ? c->node->domain : "", c->node->domain[0] ? "." : "",
                        c->node->op_type, msg);
}

pc_status sh_fail(sh_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pc_status st = fail_va(c, PC_ERR_SHAPE, fmt, ap);
    va_end(ap);
    return st;
}

pc_status sh_fail_status(sh_ctx *c, pc_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pc_status st = fail_va(c, status, fmt, ap);
    va_end(ap);
    return st;
}

static const pc_value *input_value(const sh_ctx *c, uint32_t i)
{
    return i < c->node->n_inputs ? c->node->inputs[i] : NULL;
}

bool sh_has_input(const sh_ctx *c, uint32_t i)
{
    return input_value(c, i) != NULL;
}

/* The tensor a value always holds: an initializer no graph input overrides, or a Constant node's `value`. */
const pc_tensor *sh_value_tensor(const pc_value *v)
{
    if (!v) return NULL;
    if (v->initializer && !v->is_graph_input) return v->initializer;
    const pc_node *p = v->producer;
    if (p && strcmp(p->op_type, "Constant") == 0 && (!p->domain[0] || strcmp(p->domain, "ai.onnx") == 0)) {
        const pc_attr *a = pc_node_attr(p, "value");
        if (a && a->type == PC_ATTR_TENSOR) return a->t;
    }
    return NULL;
}

pc_dtype sh_in_elem(const sh_ctx *c, uint32_t i)
{
    const pc_value *v = input_value(c, i);
    if (!v) return PC_DTYPE_UNDEFINED;
    if (v->type.kind == PC_TYPE_TENSOR && v->type.elem != PC_DTYPE_UNDEFINED) return v->type.elem;
    const pc_tensor *t = sh_value_tensor(v);
    return t ? t->dtype : PC_DTYPE_UNDEFINED;
}

bool sh_in_shape(const sh_ctx *c, uint32_t i, sh_shape *out)
{
    out->rank = -1;
    if (i == 0 && c->in0_view) {
        *out = c->in0;
        return out->rank >= 0;
    }
    if (i != 0 && i == c->w_input) {
        *out = c->inw;
        return out->rank >= 0;
    }
    const pc_value *v = input_value(c, i);
    if (!v) return false;
    const pc_tensor *t = sh_value_tensor(v);
    if (t) {
        out->rank = t->rank;
        for (int32_t d = 0; d < t->rank; d++)
            sh_dim_known(&out->dims[d], t->dims[d]);
        return true;
    }
    if (v->type.kind != PC_TYPE_TENSOR || v->type.shape.rank < 0 || v->type.shape.rank > PC_MAX_RANK)
        return false;
    out->rank = v->type.shape.rank;
    for (int32_t d = 0; d < out->rank; d++) {
        out->dims[d] = v->type.shape.dims[d];
        out->dims[d].denotation = NULL;
    }
    return true;
}

/* Little-endian element loads for the integer and float types shape arguments come in. */
bool sh_tensor_int(const pc_tensor *t, uint64_t i, int64_t *out)
{
    const uint8_t *p = t->data;
    switch (t->dtype) {
    case PC_DTYPE_INT64: {
        int64_t v;
        memcpy(&v, p + 8 * i, 8);
        *out = v;
        return true;
    }
    case PC_DTYPE_INT32: {
        int32_t v;
        memcpy(&v, p + 4 * i, 4);
        *out = v;
        return true;
    }
    default:
        return false;
    }
}

static bool tensor_float(const pc_tensor *t, uint64_t i, double *out)
{
    const uint8_t *p = t->data;
    switch (t->dtype) {
    case PC_DTYPE_FLOAT: {
        float v;
        memcpy(&v, p + 4 * i, 4);
        *out = v;
        return true;
    }
    case PC_DTYPE_DOUBLE: {
        double v;
        memcpy(&v, p + 8 * i, 8);
        *out = v;
        return true;
    }
    default:
        return false;
    }
}

bool sh_const_ints(const sh_ctx *c, uint32_t i, int64_t *vals, size_t cap, size_t *n)
{
    *n = 0;
    const pc_value *v = input_value(c, i);
    const pc_tensor *t = sh_value_tensor(v);
    if (!t && v && v->producer && strcmp(v->producer->op_type, "Constant") == 0) {
        const pc_attr *a = pc_node_attr(v->producer, "value_ints");
        if (a && a->type == PC_ATTR_INTS && a->n <= cap) {
            memcpy(vals, a->ints, a->n * sizeof *vals);
            *n = a->n;
            return true;
        }
        a = pc_node_attr(v->producer, "value_int");
        if (a && a->type == PC_ATTR_INT && cap >= 1) {
            vals[0] = a->i;
            *n = 1;
            return true;
        }
        return false;
    }
    if (!t) {
        const sh_ints *known = sh_values_get(c->values, v);
        if (!known || (size_t)known->n > cap) return false;
        memcpy(vals, known->v, (size_t)known->n * sizeof *vals);
        *n = (size_t)known->n;
        return true;
    }
    if (t->n_elements > cap || !t->data) return false;
    for (uint64_t k = 0; k < t->n_elements; k++)
        if (!sh_tensor_int(t, k, &vals[k])) return false;
    *n = (size_t)t->n_elements;
    return true;
}

bool sh_const_floats(const sh_ctx *c, uint32_t i, double *vals, size_t cap, size_t *n)
{
    *n = 0;
    const pc_tensor *t = sh_value_tensor(input_value(c, i));
    if (!t || t->n_elements > cap || !t->data) return false;
    for (uint64_t k = 0; k < t->n_elements; k++)
        if (!tensor_float(t, k, &vals[k])) return false;
    *n = (size_t)t->n_elements;
    return true;
}

int64_t sh_in_length(const sh_ctx *c, uint32_t i)
{
    sh_shape s;
    if (!sh_in_shape(c, i, &s) || s.rank != 1 || s.dims[0].kind != PC_DIM_KNOWN) return -1;
    return s.dims[0].size;
}

const int64_t *sh_attr_ints(const sh_ctx *c, const char *name, size_t *n)
{
    const pc_attr *a = pc_node_attr(c->node, name);
    *n = 0;
    if (!a || a->type != PC_ATTR_INTS) return NULL;
    *n = a->n;
    return a->ints;
}

int64_t sh_attr_int(const sh_ctx *c, const char *name, int64_t fallback)
{
    return pc_node_attr_int(c->node, name, fallback);
}

sh_out *sh_out_at(sh_ctx *c, uint32_t i, pc_dtype elem)
{
    if (i >= c->n_out) return NULL;
    sh_out *o = &c->out[i];
    o->set = true;
    o->elem = elem;
    o->shape.rank = -1;
    return o;
}

void sh_set_out(sh_ctx *c, uint32_t i, pc_dtype elem, const sh_shape *shape)
{
    sh_out *o = sh_out_at(c, i, elem);
    if (!o || !shape || shape->rank < 0) return;
    o->shape.rank = shape->rank;
    memcpy(o->shape.dims, shape->dims, (size_t)shape->rank * sizeof shape->dims[0]);
}

void sh_dim_known(pc_dim *d, int64_t size)
{
    memset(d, 0, sizeof *d);
    d->kind = PC_DIM_KNOWN;
    d->size = size;
}

void sh_dim_unknown(pc_dim *d)
{
    memset(d, 0, sizeof *d);
}

bool sh_dim_is(const pc_dim *d, int64_t size)
{
    return d->kind == PC_DIM_KNOWN && d->size == size;
}

pc_status sh_axis(sh_ctx *c, int64_t axis, int32_t rank, const char *what, int32_t *out)
{
    if (axis < -(int64_t)rank || axis >= rank)
        return sh_fail_status(c, PC_ERR_ATTRIBUTE, "%s %lld is outside [-%d, %d)", what, (long long)axis,
                              (int)rank, (int)rank);
    *out = (int32_t)(axis < 0 ? axis + rank : axis);
    return PC_OK;
}

static bool symbols_equal(const pc_dim *a, const pc_dim *b)
{
    return a->kind == PC_DIM_SYMBOLIC && b->kind == PC_DIM_SYMBOLIC && a->symbol && b->symbol &&
           strcmp(a->symbol, b->symbol) == 0;
}

pc_status sh_broadcast(sh_ctx *c, const sh_shape *a, const sh_shape *b, sh_shape *out)
{
    if (a->rank < 0 || b->rank < 0) {
        out->rank = -1;
        return PC_OK;
    }
    int32_t r = a->rank > b->rank ? a->rank : b->rank;
    sh_shape res;
    res.rank = r;
    for (int32_t k = 0; k < r; k++) {
        int32_t ia = a->rank - r + k, ib = b->rank - r + k;
        const pc_dim *x = ia >= 0 ? &a->dims[ia] : NULL, *y = ib >= 0 ? &b->dims[ib] : NULL;
        pc_dim *d = &res.dims[k];
        if (!x || sh_dim_is(x, 1))
            *d = y ? *y : *x;
        else if (!y || sh_dim_is(y, 1))
            *d = *x;
        else if (x->kind == PC_DIM_KNOWN && y->kind == PC_DIM_KNOWN) {
            if (x->size != y->size)
                return sh_fail(c, "shapes do not broadcast: dim %d is %lld in one input and %lld in another",
                               (int)k, (long long)x->size, (long long)y->size);
            *d = *x;
        } else if (x->kind == PC_DIM_KNOWN)
            *d = *x; /* the other is 1 or equal to it */
        else if (y->kind == PC_DIM_KNOWN)
            *d = *y;
        else if (symbols_equal(x, y))
            *d = *x;
        else
            sh_dim_unknown(d);
    }
    *out = res;
    return PC_OK;
}

void sh_dims_product(const sh_shape *s, int32_t from, int32_t to, pc_dim *d)
{
    uint64_t p = 1;
    bool zero = false, unknown = false;
    for (int32_t k = from; k < to; k++) {
        if (s->dims[k].kind != PC_DIM_KNOWN)
            unknown = true;
        else if (s->dims[k].size == 0)
            zero = true;
        else if (!pc_u64_mul(p, (uint64_t)s->dims[k].size, &p) || p > INT64_MAX)
            unknown = true;
    }
    if (zero)
        sh_dim_known(d, 0);
    else if (unknown)
        sh_dim_unknown(d);
    else
        sh_dim_known(d, (int64_t)p);
}

/* ---- merging into the declared type ---- */

static const char *dim_text(const pc_dim *d, char *buf, size_t n)
{
    if (d->kind == PC_DIM_KNOWN)
        snprintf(buf, n, "%lld", (long long)d->size);
    else if (d->kind == PC_DIM_SYMBOLIC)
        snprintf(buf, n, "'%s'", d->symbol ? d->symbol : "");
    else
        snprintf(buf, n, "?");
    return buf;
}

static pc_status merge_output(sh_ctx *c, uint32_t i)
{
    pc_value *v = c->node->outputs[i];
    const sh_out *o = &c->out[i];
    if (!v || !o->set) return PC_OK;
    if (v->type.kind != PC_TYPE_NONE && v->type.kind != PC_TYPE_TENSOR) return PC_OK;
    const pc_type *decl = &v->type;
    bool has_decl = decl->kind == PC_TYPE_TENSOR;
    pc_dtype elem = has_decl ? decl->elem : PC_DTYPE_UNDEFINED;
    if (o->elem != PC_DTYPE_UNDEFINED) {
        if (elem != PC_DTYPE_UNDEFINED && elem != o->elem)
            return sh_fail_status(c, PC_ERR_TYPE, "output '%s' is declared %s but the op gives %s", v->name,
                                  pc_dtype_name(elem), pc_dtype_name(o->elem));
        elem = o->elem;
    }
    int32_t decl_rank = has_decl ? decl->shape.rank : -1;
    if (decl_rank >= 0 && o->shape.rank >= 0 && decl_rank != o->shape.rank)
        return sh_fail(c, "output '%s' is declared with rank %d but the op gives rank %d", v->name,
                       (int)decl_rank, (int)o->shape.rank);
    pc_type t = {.kind = PC_TYPE_TENSOR, .elem = elem, .shape = {.rank = -1}};
    if (has_decl) t.denotation = decl->denotation;
    pc_dim dims[PC_MAX_RANK];
    int32_t rank = decl_rank >= 0 ? decl_rank : o->shape.rank;
    bool changed = !has_decl || elem != decl->elem || rank != decl_rank;
    for (int32_t k = 0; k < rank; k++) {
        const pc_dim *dd = decl_rank >= 0 ? &decl->shape.dims[k] : NULL;
        const pc_dim *id = o->shape.rank >= 0 ? &o->shape.dims[k] : NULL;
        if (!dd) {
            dims[k] = *id;
            continue;
        }
        dims[k] = *dd;
        if (!id || id->kind == PC_DIM_UNKNOWN) continue;
        if (dd->kind == PC_DIM_KNOWN && id->kind == PC_DIM_KNOWN && dd->size != id->size) {
            char a[64], b[64];
            return sh_fail(c, "output '%s' dim %d is declared %s but the op gives %s", v->name, (int)k,
                           dim_text(dd, a, sizeof a), dim_text(id, b, sizeof b));
        }
        /* a known size refines an unknown or symbolic one; a symbol names an unknown one */
        if ((id->kind == PC_DIM_KNOWN && dd->kind != PC_DIM_KNOWN) || dd->kind == PC_DIM_UNKNOWN) {
            dims[k] = *id;
            dims[k].denotation = dd->denotation;
            changed = true;
        }
    }
    if (!changed) return PC_OK;
    t.shape.rank = rank;
    t.shape.dims = rank > 0 ? dims : NULL;
    return pc_value_set_type(v, &t, c->err);
}

/* ---- driver ---- */

static int64_t node_opset(const pc_node *n)
{
    const pc_model *m = n->graph->model;
    if (pc_name_eq(n->domain, PC_NHWC_DOMAIN)) {
        int64_t v = pc_model_opset(m, n->domain);
        if (v > 0) return v;
    }
    return pc_model_opset(m, "");
}

/* channels-last (N, d1..dk, C) as channels-first (N, C, d1..dk), and back */
static void to_channels_first(sh_shape *s)
{
    if (s->rank < 3) return;
    pc_dim c = s->dims[s->rank - 1];
    memmove(&s->dims[2], &s->dims[1], (size_t)(s->rank - 2) * sizeof s->dims[0]);
    s->dims[1] = c;
}

static void to_channels_last(sh_shape *s)
{
    if (s->rank < 3) return;
    pc_dim c = s->dims[1];
    memmove(&s->dims[1], &s->dims[2], (size_t)(s->rank - 2) * sizeof s->dims[0]);
    s->dims[s->rank - 1] = c;
}

/* an HWIO weight (k1..kn, I, O) as OIHW (O, I, k1..kn) */
static void hwio_to_oihw(sh_shape *s)
{
    if (s->rank < 3) return;
    sh_shape h = *s;
    s->dims[0] = h.dims[h.rank - 1];
    s->dims[1] = h.dims[h.rank - 2];
    for (int32_t i = 2; i < h.rank; i++)
        s->dims[i] = h.dims[i - 2];
}

/* The product of two dims (unknown unless both are known and it fits). */
static pc_dim dim_product(pc_dim a, pc_dim b)
{
    pc_dim d;
    int64_t p;
    if (a.kind == PC_DIM_KNOWN && b.kind == PC_DIM_KNOWN && sh_mul(a.size, b.size, &p))
        sh_dim_known(&d, p);
    else
        sh_dim_unknown(&d);
    return d;
}

/* nChw<b>c (N, C/b, H, W, b) as the padded plain (N, C, H, W); *block: b (-1 unknown). */
static pc_status unblock_input(sh_ctx *c, sh_shape *s, int64_t *block)
{
    *block = -1;
    if (!sh_in_shape(c, 0, s)) return PC_OK;
    if (s->rank != 5)
        return sh_fail(c, "blocked input 0 must have rank 5 (N, C/b, H, W, b), has rank %d", (int)s->rank);
    if (s->dims[4].kind == PC_DIM_KNOWN) *block = s->dims[4].size;
    s->dims[1] = dim_product(s->dims[1], s->dims[4]);
    s->rank = 4;
    return PC_OK;
}

/* A blocked weight (O/b, I/b, kH, kW, b_i, b_o) as OIHW (O, I, kH, kW). */
static pc_status unblock_weight(sh_ctx *c, uint32_t i, sh_shape *s)
{
    if (!sh_in_shape(c, i, s)) return PC_OK;
    if (s->rank != 6)
        return sh_fail(c, "blocked weight (input %u) must have rank 6 (O/b, I/b, kH, kW, b, b), has rank %d",
                       i, (int)s->rank);
    sh_shape w = *s;
    s->dims[0] = dim_product(w.dims[0], w.dims[5]);
    s->dims[1] = dim_product(w.dims[1], w.dims[4]);
    s->rank = 4;
    return PC_OK;
}

/* Output 0 (N, C, H, W) back into nChw<b>c; C a multiple of b. */
static pc_status reblock_output(sh_ctx *c, int64_t block)
{
    sh_shape *y = &c->out[0].shape;
    if (!c->out[0].set || y->rank < 0) return PC_OK;
    if (y->rank != 4) return sh_fail(c, "a blocked op's output has rank %d, not 4", (int)y->rank);
    pc_dim ch = y->dims[1];
    y->rank = 5;
    if (block < 1) {
        sh_dim_unknown(&y->dims[4]);
        sh_dim_unknown(&y->dims[1]);
        return PC_OK;
    }
    sh_dim_known(&y->dims[4], block);
    if (ch.kind != PC_DIM_KNOWN) {
        sh_dim_unknown(&y->dims[1]);
        return PC_OK;
    }
    if (ch.size % block != 0)
        return sh_fail(c, "%lld output channels are not a multiple of the block %lld", (long long)ch.size,
                       (long long)block);
    sh_dim_known(&y->dims[1], ch.size / block);
    return PC_OK;
}

static pc_status infer_node(pc_node *node, sh_values *values, pc_error *err)
{
    const sh_rule *rule = pc_shape_rule_find(node->domain, node->op_type);
    if (!rule || node->n_outputs == 0) return PC_OK;
    sh_ctx c = {
        .node = node, .values = values, .opset = node_opset(node), .n_out = node->n_outputs, .err = err};
    c.in0.rank = -1;
    /* this runs for every node after every pass: nodes with few outputs (almost all) use the stack */
    sh_out few[4];
    if (node->n_outputs <= sizeof few / sizeof few[0]) {
        memset(few, 0, node->n_outputs * sizeof few[0]);
        c.out = few;
    } else if (!(c.out = calloc(node->n_outputs, sizeof *c.out))) {
        return pc_error_set(err, PC_ERR_NOMEM, "node '%s': out of memory inferring shapes", node->name);
    }
    pc_status st = PC_OK;
    int64_t block = -1;
    /* input 0 and the weight read through the rule's layout, before the views are switched on */
    if (rule->nhwc) {
        if (sh_in_shape(&c, 0, &c.in0) && c.in0.rank < 3)
            st = sh_fail(&c, "channels-last input 0 must have rank >= 3, has rank %d", (int)c.in0.rank);
        to_channels_first(&c.in0);
    } else if (rule->blocked) {
        st = unblock_input(&c, &c.in0, &block);
    }
    if (st == PC_OK && rule->hwio_weight) {
        sh_in_shape(&c, rule->hwio_weight, &c.inw);
        hwio_to_oihw(&c.inw);
    } else if (st == PC_OK && rule->blocked_weight) {
        st = unblock_weight(&c, rule->blocked_weight, &c.inw);
    }
    c.in0_view = rule->nhwc || rule->blocked;
    c.w_input = rule->hwio_weight ? rule->hwio_weight : rule->blocked_weight;
    if (st == PC_OK) st = rule->infer(&c);
    if (st == PC_OK && rule->nhwc) to_channels_last(&c.out[0].shape);
    if (st == PC_OK && rule->blocked) st = reblock_output(&c, block);
    for (uint32_t i = 1; st == PC_OK && c.in0_view && i < c.n_out; i++)
        c.out[i].set = false; /* only output 0 is defined in the layout */
    for (uint32_t i = 0; i < c.n_out && st == PC_OK; i++)
        st = merge_output(&c, i);
    if (st == PC_OK && values && !rule->nhwc && !rule->blocked) st = sh_values_propagate(&c, values);
    if (c.out != few) free(c.out);
    return st;
}

pc_status pc_node_infer_shapes(pc_node *node, pc_error *err)
{
    return infer_node(node, NULL, err);
}

pc_status pc_graph_infer_shapes(pc_graph *graph, pc_error *err)
{
    sh_values *values = sh_values_create(graph);
    if (!values) return pc_error_set(err, PC_ERR_NOMEM, "out of memory for shape inference's value table");
    pc_status st = PC_OK;
    for (pc_node *n = graph->first; n && st == PC_OK; n = n->next)
        st = infer_node(n, values, err);
    sh_values_free(values);
    return st;
}
