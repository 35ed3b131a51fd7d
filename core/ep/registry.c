/* EP registry: the built-in EPs as data (cpu, nhwc, systolic, blocked), lookup by name, and the "--ep
 * nhwc,cpu" priority list.
 */
#include <stdlib.h>
#include <string.h>

#include "core/ep/ep_internal.h"

#define BIT(t) (UINT64_C(1) << (t))
#define FLOATS (BIT(PC_DTYPE_FLOAT) | BIT(PC_DTYPE_FLOAT16))
#define QUANT  (BIT(PC_DTYPE_INT8) | BIT(PC_DTYPE_UINT8))
#define MOVES                                                                                                \
    (FLOATS | QUANT) /* data movement is type-blind, so quantized models keep their Transposes local */

/* ---- cpu: every op of the standard domains (all_standard_ops) plus the contrib ops core's passes emit. The
 * internal NHWC domain is deliberately absent: an NHWC node left to cpu is a partitioning bug, caught as
 * such. */
static const pc_ep_op cpu_ops[] = {
    {PC_MS_DOMAIN, "FusedConv", 1, 1, 0, 0, NULL, PC_EP_GROUP_NONE, 0},
    {PC_MS_DOMAIN, "FusedGemm", 1, 1, 0, 0, NULL, PC_EP_GROUP_NONE, 0},
    {PC_MS_DOMAIN, "Gelu", 1, 1, 0, 0, NULL, PC_EP_GROUP_NONE, 0},
    {PC_MS_DOMAIN, "QLinearAdd", 1, 1, 0, 0, NULL, PC_EP_GROUP_NONE, 0},
    {PC_MS_DOMAIN, "QLinearConvRelu", 1, 1, 0, 0, NULL, PC_EP_GROUP_NONE, 0},
};

static const pc_ep cpu_ep = {"cpu",  PC_LAYOUT_NCHW, 0, false, true, true, sizeof cpu_ops / sizeof cpu_ops[0],
                             cpu_ops};

/* ---- nhwc: a compiling EP preferring channels-last (in the spirit of NNAPI/QNN). It claims the
 * layout-sensitive ops both in ai.onnx (GetCapability #1) and in the internal NHWC domain (#2, after the
 * layout transformer moved them), elementwise ops and the data-movement ops the transpose optimizer pushes
 * Transposes through. */
static const int64_t storage_order_row_major[] = {0};
static const pc_ep_attr_rule maxpool_rules[] = {{"storage_order", 1, storage_order_row_major, true, 0}};
/* opset 7-8 BatchNormalization's spatial=0 normalizes per (C, spatial...) element, not per channel */
static const int64_t spatial_per_channel[] = {1};
static const pc_ep_attr_rule batchnorm_rules[] = {{"spatial", 1, spatial_per_channel, true, 1}};

/* The EP's ai.onnx range is the transpose optimizer's: the layout transformer is only useful where that runs,
 * and opset 9-10 exporters (PaddleOCR's classifier and recognizer) are common. */
#define NHWC_ONNX_MIN PC_TRANSPOSE_OPSET_MIN
#define NHWC_ONNX_MAX 21

/* op, element types of input 0, attribute rules (count, array) */
#define NHWC_LAYOUT_OPS(X)                                                                                   \
    X("AveragePool", FLOATS, 0, NULL)                                                                        \
    X("BatchNormalization", FLOATS, 1, batchnorm_rules)                                                      \
    X("Conv", FLOATS, 0, NULL)                                                                               \
    X("ConvTranspose", FLOATS, 0, NULL)                                                                      \
    X("DepthToSpace", MOVES, 0, NULL)                                                                        \
    X("GlobalAveragePool", FLOATS, 0, NULL)                                                                  \
    X("GlobalLpPool", FLOATS, 0, NULL)                                                                       \
    X("GlobalMaxPool", FLOATS, 0, NULL)                                                                      \
    X("GridSample", FLOATS, 0, NULL)                                                                         \
    X("InstanceNormalization", FLOATS, 0, NULL)                                                              \
    X("LRN", FLOATS, 0, NULL)                                                                                \
    X("LpPool", FLOATS, 0, NULL)                                                                             \
    X("MaxPool", FLOATS | QUANT, 1, maxpool_rules)                                                           \
    X("MaxUnpool", FLOATS, 0, NULL)                                                                          \
    X("QLinearConv", QUANT, 0, NULL)                                                                         \
    X("Resize", FLOATS | QUANT, 0, NULL)                                                                     \
    X("SpaceToDepth", MOVES, 0, NULL)

#define NHWC_OTHER_OPS(X)                                                                                    \
    /* unary elementwise */                                                                                  \
    X("Abs", FLOATS, 0, NULL)                                                                                \
    X("Ceil", FLOATS, 0, NULL)                                                                               \
    X("Clip", FLOATS, 0, NULL)                                                                               \
    X("Elu", FLOATS, 0, NULL)                                                                                \
    X("Erf", FLOATS, 0, NULL)                                                                                \
    X("Exp", FLOATS, 0, NULL)                                                                                \
    X("Floor", FLOATS, 0, NULL)                                                                              \
    X("HardSigmoid", FLOATS, 0, NULL)                                                                        \
    X("HardSwish", FLOATS, 0, NULL)                                                                          \
    X("LeakyRelu", FLOATS, 0, NULL)                                                                          \
    X("Log", FLOATS, 0, NULL)                                                                                \
    X("Neg", FLOATS, 0, NULL)                                                                                \
    X("Reciprocal", FLOATS, 0, NULL)                                                                         \
    X("Relu", FLOATS, 0, NULL)                                                                               \
    X("Round", FLOATS, 0, NULL)                                                                              \
    X("Sigmoid", FLOATS, 0, NULL)                                                                            \
    X("Sign", FLOATS, 0, NULL)                                                                               \
    X("Softplus", FLOATS, 0, NULL)                                                                           \
    X("Softsign", FLOATS, 0, NULL)                                                                           \
    X("Sqrt", FLOATS, 0, NULL)                                                                               \
    X("Tanh", FLOATS, 0, NULL)                                                                               \
    /* broadcasting binary and variadic */                                                                   \
    X("Add", FLOATS, 0, NULL)                                                                                \
    X("Div", FLOATS, 0, NULL)                                                                                \
    X("Max", FLOATS, 0, NULL)                                                                                \
    X("Mean", FLOATS, 0, NULL)                                                                               \
    X("Min", FLOATS, 0, NULL)                                                                                \
    X("Mul", FLOATS, 0, NULL)                                                                                \
    X("Pow", FLOATS, 0, NULL)                                                                                \
    X("PRelu", FLOATS, 0, NULL)                                                                              \
    X("Sub", FLOATS, 0, NULL)                                                                                \
    X("Sum", FLOATS, 0, NULL)                                                                                \
    /* data movement */                                                                                      \
    X("Concat", MOVES, 0, NULL)                                                                              \
    X("Gather", MOVES, 0, NULL)                                                                              \
    X("Identity", MOVES, 0, NULL)                                                                            \
    X("Pad", MOVES, 0, NULL)                                                                                 \
    X("Reshape", MOVES, 0, NULL)                                                                             \
    X("Slice", MOVES, 0, NULL)                                                                               \
    X("Split", MOVES, 0, NULL)                                                                               \
    X("Squeeze", MOVES, 0, NULL)                                                                             \
    X("Transpose", MOVES, 0, NULL)                                                                           \
    X("Unsqueeze", MOVES, 0, NULL)                                                                           \
    /* quantization boundaries */                                                                            \
    X("DequantizeLinear", QUANT, 0, NULL)                                                                    \
    X("QuantizeLinear", FLOATS, 0, NULL)

#define AS_ONNX_OP(op, types, n_rules, rules)                                                                \
    {"", op, NHWC_ONNX_MIN, NHWC_ONNX_MAX, types, n_rules, rules, PC_EP_GROUP_NONE, 0},
#define AS_NHWC_OP(op, types, n_rules, rules)                                                                \
    {PC_NHWC_DOMAIN, op, 1, NHWC_ONNX_MAX, types, n_rules, rules, PC_EP_GROUP_NONE, 0},
static const pc_ep_op nhwc_ops[] = {
    NHWC_LAYOUT_OPS(AS_ONNX_OP) NHWC_OTHER_OPS(AS_ONNX_OP) NHWC_LAYOUT_OPS(AS_NHWC_OP)
    /* FusedConv (level 2 makes it from a Conv this EP owns) is layout-sensitive too */
    {PC_MS_DOMAIN, "FusedConv", 1, 1, FLOATS, 0, NULL, PC_EP_GROUP_NONE, 0},
    {PC_NHWC_DOMAIN, "FusedConv", 1, NHWC_ONNX_MAX, FLOATS, 0, NULL, PC_EP_GROUP_NONE, 0},
};

static const pc_ep nhwc_ep = {
    "nhwc", PC_LAYOUT_NHWC, 0, true, true, false, sizeof nhwc_ops / sizeof nhwc_ops[0], nhwc_ops};

/* ---- systolic: the Systolic fork's int8 EP (a systolic array emulated on the CPU). It claims the integer
 * ops the array runs, QLinearConv and QLinearMatMul (int8 or uint8 activations; the fork also required zero
 * points of 0, the kernels here take any), QLinearAdd and the fork's QLinearRelu, and as a group the
 * DQ -> Relu -> Q a quantizer leaves where the fork's emitted QLinearRelu (level 2 fuses the group into
 * QLinearRelu, or into QLinearConvRelu after a QLinearConv); then what its level-3 rewrite makes
 * (core/passes/systolic_nhwc.c): its channels-last QLinearConv_nhwc, its own elementwise QLinearAdd (the
 * array's residual add: equal shapes) and the quantized Transposes at its layout boundaries, so every node it
 * makes stays on it. Declared NCHW: the layout change is its own level-3 rewrite, not the generic NHWC layout
 * transformer. */
static const pc_ep_op systolic_ops[] = {
    {"", "QLinearConv", 10, 21, QUANT, 0, NULL, PC_EP_GROUP_NONE, 0},
    {"", "QLinearMatMul", 10, 21, QUANT, 0, NULL, PC_EP_GROUP_NONE, 0},
    {"", "Transpose", 1, 21, QUANT, 0, NULL, PC_EP_GROUP_NONE, 0},
    {"", "DequantizeLinear", 10, 21, QUANT, 0, NULL, PC_EP_GROUP_DQ_RELU_Q, 0},
    {"", "Relu", 6, 21, BIT(PC_DTYPE_FLOAT), 0, NULL, PC_EP_GROUP_DQ_RELU_Q, 0},
    {"", "QuantizeLinear", 10, 21, BIT(PC_DTYPE_FLOAT), 0, NULL, PC_EP_GROUP_DQ_RELU_Q, 0},
    {PC_MS_DOMAIN, "QLinearAdd", 1, 1, QUANT, 0, NULL, PC_EP_GROUP_NONE, 0},
    {PC_MS_DOMAIN, "QLinearConvRelu", 1, 1, QUANT, 0, NULL, PC_EP_GROUP_NONE, 0},
    {PC_SYSTOLIC_DOMAIN, "QLinearAdd", 1, 1, QUANT, 0, NULL, PC_EP_GROUP_NONE, 0},
    {PC_SYSTOLIC_DOMAIN, "QLinearConv_nhwc", 1, 1, QUANT, 0, NULL, PC_EP_GROUP_NONE, 0},
    {PC_SYSTOLIC_DOMAIN, "QLinearRelu", 1, 1, QUANT, 0, NULL, PC_EP_GROUP_NONE, 0},
};

static const pc_ep systolic_ep = {
    "systolic",  PC_LAYOUT_NCHW, 0, false, true, false, sizeof systolic_ops / sizeof systolic_ops[0],
    systolic_ops};

/* ---- blocked: ORT's MKL-DNN subgraph EP (docs/ep.md "The blocked EP"): a compiling EP whose subgraphs run
 * channels blocked by 16 (nChw16c). It claims 4-D float activations of the ops MKL-DNN ran (Conv of group 1,
 * BatchNormalization in inference form, Relu, Sum, Add, the pools, LRN, Concat on channels); level 3
 * (core/passes/blocked_compile.c) compiles each of its subgraphs into one Subgraph node of its domain, whose
 * body holds the blocked primitives (with Relu, Add, Sum and Concat on blocked tensors), the reorders at the
 * boundary, and the standard ops that stay plain. */
#define F32 BIT(PC_DTYPE_FLOAT)
static const int64_t zero_only[] = {0}, one_only[] = {1};
static const pc_ep_attr_rule group_one[] = {{"group", 1, one_only, true, 1}};
static const pc_ep_attr_rule bn_inference[] = {{"spatial", 1, one_only, true, 1},
                                               {"training_mode", 1, zero_only, true, 0}};
static const pc_ep_attr_rule row_major[] = {{"storage_order", 1, zero_only, true, 0}};
static const pc_ep_attr_rule channel_axis[] = {{"axis", 1, one_only, false, 0}};
#define BLOCKED_OP(op, rules, n_rules, rank)                                                                 \
    {                                                                                                        \
        "", op, 1, 21, F32, n_rules, rules, PC_EP_GROUP_NONE, rank                                           \
    }
#define BLOCKED_OWN(op, rank)                                                                                \
    {                                                                                                        \
        PC_BLOCKED_DOMAIN, op, 1, 1, F32, 0, NULL, PC_EP_GROUP_NONE, rank                                    \
    }
static const pc_ep_op blocked_ops[] = {
    BLOCKED_OP("Conv", group_one, 1, 4),
    BLOCKED_OP("BatchNormalization", bn_inference, 2, 4),
    BLOCKED_OP("Relu", NULL, 0, 4),
    BLOCKED_OP("Sum", NULL, 0, 4),
    BLOCKED_OP("Add", NULL, 0, 4),
    BLOCKED_OP("MaxPool", row_major, 1, 4),
    BLOCKED_OP("AveragePool", NULL, 0, 4),
    BLOCKED_OP("GlobalMaxPool", NULL, 0, 4),
    BLOCKED_OP("GlobalAveragePool", NULL, 0, 4),
    BLOCKED_OP("LRN", NULL, 0, 4),
    BLOCKED_OP("Concat", channel_axis, 1, 4),
    /* its own domain: the reorders, the primitives and the compiled node */
    BLOCKED_OWN("ToBlocked", 4),
    BLOCKED_OWN("FromBlocked", 5),
    BLOCKED_OWN("Conv", 5),
    BLOCKED_OWN("BatchNormalization", 5),
    BLOCKED_OWN("MaxPool", 5),
    BLOCKED_OWN("AveragePool", 5),
    BLOCKED_OWN("GlobalMaxPool", 5),
    BLOCKED_OWN("GlobalAveragePool", 5),
    BLOCKED_OWN("LRN", 5),
    BLOCKED_OWN("Relu", 5),
    BLOCKED_OWN("Add", 5),
    BLOCKED_OWN("Sum", 5),
    {PC_BLOCKED_DOMAIN, "Concat", 1, 1, F32, 1, channel_axis, PC_EP_GROUP_NONE, 5},
    {PC_BLOCKED_DOMAIN, "Subgraph", 1, 1, 0, 0, NULL, PC_EP_GROUP_NONE, 0},
};
#undef BLOCKED_OP
#undef BLOCKED_OWN

static const pc_ep blocked_ep = {
    "blocked",  PC_LAYOUT_BLOCKED, 16, true, false, false, sizeof blocked_ops / sizeof blocked_ops[0],
    blocked_ops};

const pc_ep *pc_ep_builtin_cpu(void)
{
    return &cpu_ep;
}

const pc_ep *pc_ep_builtin_nhwc(void)
{
    return &nhwc_ep;
}

static const char *const layout_names[PC_LAYOUT_COUNT] = {"nchw", "nhwc", "blocked"};

const char *pc_layout_name(pc_layout layout)
{
    return (unsigned)layout < PC_LAYOUT_COUNT ? layout_names[layout] : "?";
}

bool pc_ep_dtype_from_name(const char *name, size_t len, pc_dtype *out)
{
    for (int t = 1; t < PC_DTYPE_COUNT; t++) {
        if (!pc_dtype_is_valid(t)) continue;
        const char *n = pc_dtype_name((pc_dtype)t);
        if (strlen(n) == len && memcmp(n, name, len) == 0) {
            *out = (pc_dtype)t;
            return true;
        }
    }
    return false;
}

pc_status pc_ep_registry_create(pc_ep_registry **out, pc_error *err)
{
    *out = NULL;
    pc_ep_registry *reg = calloc(1, sizeof *reg);
    if (!reg) return pc_error_set(err, PC_ERR_NOMEM, "out of memory creating the EP registry");
    pc_arena_init(&reg->arena, &reg->mem);
    const pc_ep *builtins[] = {&cpu_ep, &nhwc_ep, &systolic_ep, &blocked_ep};
    pc_status st = pc_ep_registry_add(reg, builtins, (uint32_t)(sizeof builtins / sizeof builtins[0]), err);
    if (st != PC_OK) {
        pc_ep_registry_free(reg);
        return st;
    }
    *out = reg;
    return PC_OK;
}

void pc_ep_registry_free(pc_ep_registry *reg)
{
    if (!reg) return;
    pc_arena_free(&reg->arena);
    free(reg->eps);
    free(reg);
}

pc_status pc_ep_registry_add(pc_ep_registry *reg, const pc_ep *const *eps, uint32_t n, pc_error *err)
{
    if (n > UINT32_MAX - reg->n_eps) return pc_error_set(err, PC_ERR_OVERFLOW, "too many EPs");
    if (reg->n_eps + n > reg->cap_eps) {
        uint32_t cap = reg->cap_eps ? reg->cap_eps : 8;
        while (cap < reg->n_eps + n)
            cap = cap > UINT32_MAX / 2 ? reg->n_eps + n : cap * 2;
        size_t bytes;
        if (!pc_size_mul(cap, sizeof *reg->eps, &bytes))
            return pc_error_set(err, PC_ERR_OVERFLOW, "too many EPs");
        const pc_ep **grown = realloc(reg->eps, bytes);
        if (!grown) return pc_error_set(err, PC_ERR_NOMEM, "out of memory registering EPs");
        reg->eps = grown;
        reg->cap_eps = cap;
    }
    for (uint32_t i = 0; i < n; i++)
        reg->eps[reg->n_eps++] = eps[i];
    return PC_OK;
}

const pc_ep *pc_ep_registry_find(const pc_ep_registry *reg, const char *name)
{
    if (!reg || !name) return NULL;
    for (uint32_t i = 0; i < reg->n_eps; i++)
        if (strcmp(reg->eps[i]->name, name) == 0) return reg->eps[i];
    return NULL;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

pc_status pc_ep_registry_parse_list(const pc_ep_registry *reg, const char *list, const pc_ep ***out_eps,
                                    uint32_t *out_n, pc_error *err)
{
    *out_eps = NULL;
    *out_n = 0;
    if (!list) return pc_error_set(err, PC_ERR_USAGE, "EP list: missing");
    uint32_t n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    const pc_ep **eps = pc_arena_array((pc_arena *)&reg->arena, n, sizeof *eps);
    if (!eps) return pc_error_set(err, PC_ERR_NOMEM, "out of memory parsing the EP list");
    uint32_t k = 0;
    const char *p = list;
    for (uint32_t entry = 1; entry <= n; entry++) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        const char *b = p, *e = end;
        while (b < e && is_space(*b))
            b++;
        while (e > b && is_space(e[-1]))
            e--;
        if (b == e) return pc_error_set(err, PC_ERR_USAGE, "EP list '%s': entry %u is empty", list, entry);
        const pc_ep *ep = NULL;
        for (uint32_t i = 0; i < reg->n_eps && !ep; i++)
            if (strlen(reg->eps[i]->name) == (size_t)(e - b) &&
                memcmp(reg->eps[i]->name, b, (size_t)(e - b)) == 0)
                ep = reg->eps[i];
        if (!ep)
            return pc_error_set(err, PC_ERR_USAGE, "EP list '%s': entry %u: unknown EP '%.*s'", list, entry,
                                (int)(e - b), b);
        for (uint32_t i = 0; i < k; i++)
            if (eps[i] == ep)
                return pc_error_set(err, PC_ERR_USAGE, "EP list '%s': entry %u: EP '%s' is listed twice",
                                    list, entry, ep->name);
        eps[k++] = ep;
        p = *end ? end + 1 : end;
    }
    *out_eps = eps;
    *out_n = k;
    return PC_OK;
}
