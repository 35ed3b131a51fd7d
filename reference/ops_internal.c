/* Reference ops: the non-standard ops core's passes emit, each defined in ONE table row as a composition of
 * standard ops, so the definition is obviously right:
 *   - layout-converted ops (ORT's internal NHWC domain): transpose the channels-last inputs to NCHW, run the
 *     standard op, transpose the channels-last outputs back;
 *   - fused ops (com.microsoft FusedConv/FusedGemm, QLinear fusions): run the standard op, then the
 * activation named by the `activation` attribute;
 *   - the systolic EP's QLinearConv_nhwc: channels-last, its weight transposed from HWIO to OIHW first, and
 * its `relu` attribute a clamp at the output zero point.
 * Every internal op a pass introduces has a row here. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref_internal.h"

#define NHWC_DOMAIN     "com.ms.internal.nhwc"
#define MS_DOMAIN       "com.microsoft"
#define SYSTOLIC_DOMAIN "com.passcheck.systolic"

/* A Relu in the quantized domain after the base op: never, always, or when attribute relu is 1. */
typedef enum zp_relu { RELU_NONE, RELU_AT_ZERO_POINT, RELU_BY_ATTRIBUTE } zp_relu;

typedef struct composite {
    const char *domain, *op_type;  /* the internal op */
    const char *base_op;           /* the standard ai.onnx op it is defined by */
    uint32_t channels_last_inputs; /* bit i: input i is channels-last (N, spatial..., C) */
    uint32_t channels_last_outputs;
    bool fused_activation; /* applies attribute `activation` (+ `activation_params`) to output 0 */
    uint32_t hwio_input;   /* 0, or the input holding a weight in HWIO (k1..kn, I, O) rather than OIHW */
    zp_relu relu;          /* output 0 clamped below at y's zero point (input 7): a Relu of the real values */
} composite;

/* domain, op, base op, channels-last inputs, channels-last outputs, fused activation, HWIO weight input,
 * quantized Relu */
#define COMPOSITES(X)                                                                                        \
    /* ORT's layout transformer moves these to NHWC; weights and per-channel inputs keep their layout. */    \
    X(NHWC_DOMAIN, "AveragePool", "AveragePool", 1u, 1u, false, 0, RELU_NONE)                                \
    X(NHWC_DOMAIN, "BatchNormalization", "BatchNormalization", 1u, 1u, false, 0, RELU_NONE)                  \
    X(NHWC_DOMAIN, "Conv", "Conv", 1u, 1u, false, 0, RELU_NONE)                                              \
    X(NHWC_DOMAIN, "ConvTranspose", "ConvTranspose", 1u, 1u, false, 0, RELU_NONE)                            \
    X(NHWC_DOMAIN, "DepthToSpace", "DepthToSpace", 1u, 1u, false, 0, RELU_NONE)                              \
    X(NHWC_DOMAIN, "FusedConv", "Conv", 1u, 1u, true, 0, RELU_NONE)                                          \
    X(NHWC_DOMAIN, "GlobalAveragePool", "GlobalAveragePool", 1u, 1u, false, 0, RELU_NONE)                    \
    X(NHWC_DOMAIN, "GlobalLpPool", "GlobalLpPool", 1u, 1u, false, 0, RELU_NONE)                              \
    X(NHWC_DOMAIN, "GlobalMaxPool", "GlobalMaxPool", 1u, 1u, false, 0, RELU_NONE)                            \
    /* the grid (N, H_out, W_out, 2) is not a channels tensor and keeps its layout */                        \
    X(NHWC_DOMAIN, "GridSample", "GridSample", 1u, 1u, false, 0, RELU_NONE)                                  \
    X(NHWC_DOMAIN, "InstanceNormalization", "InstanceNormalization", 1u, 1u, false, 0, RELU_NONE)            \
    X(NHWC_DOMAIN, "LRN", "LRN", 1u, 1u, false, 0, RELU_NONE)                                                \
    X(NHWC_DOMAIN, "LpPool", "LpPool", 1u, 1u, false, 0, RELU_NONE)                                          \
    X(NHWC_DOMAIN, "MaxPool", "MaxPool", 1u, 1u, false, 0, RELU_NONE)                                        \
    /* indices (input 1) are flat positions in the NCHW output, as the standard op defines them */           \
    X(NHWC_DOMAIN, "MaxUnpool", "MaxUnpool", 1u, 1u, false, 0, RELU_NONE)                                    \
    X(NHWC_DOMAIN, "QLinearConv", "QLinearConv", 1u, 1u, false, 0, RELU_NONE)                                \
    X(NHWC_DOMAIN, "Resize", "Resize", 1u, 1u, false, 0, RELU_NONE)                                          \
    X(NHWC_DOMAIN, "SpaceToDepth", "SpaceToDepth", 1u, 1u, false, 0, RELU_NONE)                              \
    /* fusions: the standard op, then the activation */                                                      \
    X(MS_DOMAIN, "FusedConv", "Conv", 0u, 0u, true, 0, RELU_NONE)                                            \
    X(MS_DOMAIN, "FusedGemm", "Gemm", 0u, 0u, true, 0, RELU_NONE)                                            \
    /* contrib Gelu is the exact (erf) form, ai.onnx Gelu's default */                                       \
    X(MS_DOMAIN, "Gelu", "Gelu", 0u, 0u, false, 0, RELU_NONE)                                                \
    X(MS_DOMAIN, "QLinearConvRelu", "QLinearConv", 0u, 0u, false, 0, RELU_AT_ZERO_POINT)                     \
    /* the Systolic fork's conv: channels-last x and y, an HWIO weight, a `relu` epilogue */                 \
    X(SYSTOLIC_DOMAIN, "QLinearConv_nhwc", "QLinearConv", 1u, 1u, false, 3, RELU_BY_ATTRIBUTE)

#define AS_COMPOSITE(domain, op, base, in_mask, out_mask, fused, hwio, relu)                                 \
    {domain, op, base, in_mask, out_mask, fused, hwio, relu},
static const composite composites[] = {COMPOSITES(AS_COMPOSITE)};

static const composite *composite_find(const pc_node *n)
{
    for (size_t i = 0; i < sizeof composites / sizeof composites[0]; i++)
        if (strcmp(composites[i].domain, n->domain) == 0 && strcmp(composites[i].op_type, n->op_type) == 0)
            return &composites[i];
    return NULL;
}

/* out[perm-order]: out.dims[i] = in.dims[perm[i]] */
static pc_data *transpose(ref_ctx *ctx, const pc_data *x, const int32_t *perm)
{
    int64_t dims[PC_MAX_RANK], in_strides[PC_MAX_RANK], counter[PC_MAX_RANK] = {0};
    for (int32_t i = 0; i < x->rank; i++)
        dims[i] = x->dims[perm[i]];
    ref_strides(x->rank, x->dims, in_strides);
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, dims);
    if (!y) return NULL;
    for (uint64_t k = 0; k < y->n_elements; k++) {
        int64_t src = 0;
        for (int32_t i = 0; i < x->rank; i++)
            src += counter[i] * in_strides[perm[i]];
        if (!ref_copy_elem(y, k, x, (uint64_t)src)) {
            pc_data_unref(y);
            ref_fail(ctx, PC_ERR_NOMEM, "out of memory transposing");
            return NULL;
        }
        for (int32_t i = x->rank - 1; i >= 0; i--) {
            if (++counter[i] < dims[i]) break;
            counter[i] = 0;
        }
    }
    return y;
}

/* HWIO (k1..kn, I, O) → OIHW (O, I, k1..kn) */
static void perm_hwio_to_oihw(int32_t rank, int32_t *perm)
{
    perm[0] = rank - 1;
    perm[1] = rank - 2;
    for (int32_t i = 2; i < rank; i++)
        perm[i] = i - 2;
}

/* channels-last → channels-first: (N, d1..dk, C) → (N, C, d1..dk), and back. */
static void perm_to_first(int32_t rank, int32_t *perm)
{
    perm[0] = 0;
    perm[1] = rank - 1;
    for (int32_t i = 2; i < rank; i++)
        perm[i] = i - 1;
}

static void perm_to_last(int32_t rank, int32_t *perm)
{
    perm[0] = 0;
    for (int32_t i = 1; i < rank - 1; i++)
        perm[i] = i + 1;
    perm[rank - 1] = 1;
}

static pc_status apply_activation(ref_ctx *ctx, pc_data *y)
{
    const char *act = ref_attr_string(ctx, "activation", NULL);
    if (!act) return PC_OK;
    size_t np;
    const float *p = ref_attr_floats(ctx, "activation_params", &np);
    if (!ref_is_float(y->dtype))
        return ref_unsupported(ctx, "fused activation on %s output", pc_dtype_name(y->dtype));
    int kind;
    if (strcmp(act, "Relu") == 0)
        kind = 0;
    else if (strcmp(act, "Sigmoid") == 0)
        kind = 1;
    else if (strcmp(act, "Tanh") == 0)
        kind = 2;
    else if (strcmp(act, "LeakyRelu") == 0 && np >= 1)
        kind = 3;
    else if (strcmp(act, "Clip") == 0 && np >= 2)
        kind = 4;
    else if (strcmp(act, "HardSigmoid") == 0 && np >= 2)
        kind = 5;
    else
        return ref_unsupported(ctx, "fused activation '%s' with %zu parameters", act, np);
    for (uint64_t i = 0; i < y->n_elements; i++) {
        double v = ref_get_f64(y, i);
        switch (kind) {
        case 0: /* the standalone Relu's function: a fused Relu that kept -0 disagreed with Conv -> Relu */
            v = ref_relu(v);
            break;
        case 1:
            v = 1.0 / (1.0 + exp(-v));
            break;
        case 2:
            v = tanh(v);
            break;
        case 3:
            v = v < 0 ? p[0] * v : v;
            break;
        case 4:
            v = v < p[0] ? p[0] : v > p[1] ? p[1] : v;
            break;
        default:
            v = p[0] * v + p[1];
            v = isnan(v) ? v : fmax(0.0, fmin(1.0, v)); /* HardSigmoid keeps NaN (numpy's clip) */
            break;
        }
        ref_set_f64(y, i, v);
    }
    return PC_OK;
}

/* QLinearConv followed by Relu in the quantized domain: values below the output zero point clamp to it. */
static void clamp_to_zero_point(pc_data *y, const pc_data *zero_point)
{
    int64_t zp = zero_point ? ref_get_i64(zero_point, 0) : 0;
    for (uint64_t i = 0; i < y->n_elements; i++)
        if (ref_get_i64(y, i) < zp) ref_set_i64(y, i, zp);
}

static pc_status op_composite(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    const composite *c = composite_find(ctx->node);
    const ref_op *base = c ? ref_op_find("", c->base_op) : NULL;
    if (!base) return ref_unsupported(ctx, "no definition for this internal op");
    pc_data **args = calloc(n_in ? n_in : 1, sizeof *args);
    if (!args) return ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
    pc_status st = PC_OK;
    /* argmax indices are positions in the NCHW tensor: meaningless for a channels-last caller */
    if (c->channels_last_outputs && strcmp(c->base_op, "MaxPool") == 0 && n_out > 1 && ctx->node->outputs[1])
        st = ref_unsupported(ctx, "the Indices output of a channels-last MaxPool");
    for (uint32_t i = 0; i < n_in && st == PC_OK; i++) {
        bool last = c->channels_last_inputs >> i & 1u, hwio = i && i == c->hwio_input;
        if (!in[i] || (!last && !hwio)) {
            args[i] = pc_data_ref(in[i]);
            continue;
        }
        if (in[i]->kind != PC_TYPE_TENSOR || in[i]->rank < 3) {
            st = ref_fail(ctx, PC_ERR_SHAPE, "%s input %u must be a tensor of rank >= 3",
                          hwio ? "HWIO weight" : "channels-last", i);
            break;
        }
        int32_t perm[PC_MAX_RANK];
        if (hwio)
            perm_hwio_to_oihw(in[i]->rank, perm);
        else
            perm_to_first(in[i]->rank, perm);
        if (!(args[i] = transpose(ctx, in[i], perm))) st = ctx->err->status;
    }
    /* the standard op runs with the standard domain's opset semantics */
    ref_ctx base_ctx = *ctx;
    int64_t onnx_opset = pc_model_opset(ctx->model, "");
    if (strcmp(ctx->node->domain, NHWC_DOMAIN) != 0 || base_ctx.opset < 1)
        base_ctx.opset = onnx_opset > 0 ? onnx_opset : base_ctx.opset;
    if (st == PC_OK) st = base->run(&base_ctx, args, n_in, out, n_out);
    ref_unref_all(args, n_in);
    free(args);
    if (st == PC_OK && c->fused_activation && out[0]) st = apply_activation(ctx, out[0]);
    int64_t relu = c->relu == RELU_AT_ZERO_POINT  ? 1
                   : c->relu == RELU_BY_ATTRIBUTE ? ref_attr_int(ctx, "relu", 0)
                                                  : 0;
    if (st == PC_OK && relu != 0 && relu != 1)
        st = ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute relu is %lld, not 0 or 1", (long long)relu);
    if (st == PC_OK && relu && out[0]) clamp_to_zero_point(out[0], n_in > 7 ? in[7] : NULL);
    for (uint32_t i = 0; i < n_out && st == PC_OK; i++) {
        if (!out[i] || !(c->channels_last_outputs >> i & 1u) || out[i]->rank < 3) continue;
        int32_t perm[PC_MAX_RANK];
        perm_to_last(out[i]->rank, perm);
        pc_data *t = transpose(ctx, out[i], perm);
        if (!t) {
            st = ctx->err->status;
            break;
        }
        pc_data_unref(out[i]);
        out[i] = t;
    }
    if (st != PC_OK) ref_unref_all(out, n_out);
    return st;
}

#define AS_OP(domain, op, base, in_mask, out_mask, fused, hwio, relu) {domain, op, op_composite},
const ref_op ref_ops_internal[] = {COMPOSITES(AS_OP)};
const size_t ref_ops_internal_count = sizeof ref_ops_internal / sizeof ref_ops_internal[0];
