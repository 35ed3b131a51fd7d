/* Reference ops: the blocked EP's domain (com.passcheck.blocked, docs/ep.md "The blocked EP"), each defined
 * by the standard op on the plain form, so the definition is obviously right:
 *   - ToBlocked / FromBlocked: the layout change itself, element by element (channels zero-padded to a
 * multiple of the block; FromBlocked drops the padding);
 *   - the primitives (Conv, BatchNormalization, MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool, LRN):
 * unblock input 0 to the padded plain (N, Cb·b, H, W) tensor (Conv: its weight (O/b, I/b, kH, kW, b_i, b_o)
 * to OIHW too), run the standard op at the model's ai.onnx opset, then for Conv the optional
 * BatchNormalization (inputs 3..6) and for Conv and BatchNormalization the optional Relu (attribute relu),
 * and block output 0 again;
 *   - Relu, Add, Sum, Concat: the standard op on the blocked tensors as they are;
 *   - Subgraph: its body, run on its inputs.
 * Nothing here is shared with the runtime's kernels. */
#include <stdlib.h>
#include <string.h>

#include "reference/ref_internal.h"

#define BLOCKED_DOMAIN "com.passcheck.blocked"

static pc_status need_float_rank(ref_ctx *ctx, const pc_data *x, int32_t rank, const char *what)
{
    if (!x || x->kind != PC_TYPE_TENSOR || x->dtype != PC_DTYPE_FLOAT)
        return ref_fail(ctx, PC_ERR_TYPE, "%s must be a float tensor", what);
    if (x->rank != rank)
        return ref_fail(ctx, PC_ERR_SHAPE, "%s must have rank %d, has %d", what, rank, x->rank);
    return PC_OK;
}

/* (N, Cb, H, W, b) -> (N, Cb·b, H, W): channel c is block c / b, lane c % b. */
static pc_data *unblock(ref_ctx *ctx, const pc_data *x)
{
    const int64_t *d = x->dims;
    int64_t dims[4] = {d[0], d[1] * d[4], d[2], d[3]};
    pc_data *y = ref_new_tensor(ctx, x->dtype, 4, dims);
    if (!y) return NULL;
    for (int64_t n = 0; n < d[0]; n++)
        for (int64_t c = 0; c < dims[1]; c++)
            for (int64_t h = 0; h < d[2]; h++)
                for (int64_t w = 0; w < d[3]; w++) {
                    uint64_t to = (uint64_t)(((n * dims[1] + c) * d[2] + h) * d[3] + w);
                    uint64_t from =
                        (uint64_t)((((n * d[1] + c / d[4]) * d[2] + h) * d[3] + w) * d[4] + c % d[4]);
                    ref_set_f64(y, to, ref_get_f64(x, from));
                }
    return y;
}

/* (N, C, H, W) -> (N, ceil(C / b), H, W, b), the lanes past C zero. */
static pc_data *block(ref_ctx *ctx, const pc_data *x, int64_t b)
{
    const int64_t *d = x->dims;
    int64_t dims[5] = {d[0], d[1] / b + (d[1] % b != 0), d[2], d[3], b};
    pc_data *y = ref_new_tensor(ctx, x->dtype, 5, dims);
    if (!y) return NULL;
    for (uint64_t k = 0; k < y->n_elements; k++)
        ref_set_f64(y, k, 0.0);
    for (int64_t n = 0; n < d[0]; n++)
        for (int64_t c = 0; c < d[1]; c++)
            for (int64_t h = 0; h < d[2]; h++)
                for (int64_t w = 0; w < d[3]; w++) {
                    uint64_t from = (uint64_t)(((n * d[1] + c) * d[2] + h) * d[3] + w);
                    uint64_t to = (uint64_t)((((n * dims[1] + c / b) * d[2] + h) * d[3] + w) * b + c % b);
                    ref_set_f64(y, to, ref_get_f64(x, from));
                }
    return y;
}

/* (N, Cp, H, W) -> (N, C, H, W): the first C channels. */
static pc_data *crop(ref_ctx *ctx, const pc_data *x, int64_t channels)
{
    const int64_t *d = x->dims;
    int64_t dims[4] = {d[0], channels, d[2], d[3]};
    pc_data *y = ref_new_tensor(ctx, x->dtype, 4, dims);
    if (!y) return NULL;
    uint64_t plane = (uint64_t)(d[2] * d[3]);
    for (int64_t n = 0; n < d[0]; n++)
        for (int64_t c = 0; c < channels; c++)
            for (uint64_t p = 0; p < plane; p++)
                ref_set_f64(y, ((uint64_t)(n * channels + c)) * plane + p,
                            ref_get_f64(x, ((uint64_t)(n * d[1] + c)) * plane + p));
    return y;
}

/* (O/b, I/b, kH, kW, b_i, b_o) -> (O, I, kH, kW): element (o, i, y, x) = (o / b, i / b, y, x, i % b, o % b).
 */
static pc_data *unblock_weight(ref_ctx *ctx, const pc_data *w)
{
    const int64_t *d = w->dims;
    if (d[4] != d[5]) {
        ref_fail(ctx, PC_ERR_SHAPE, "a blocked weight's last two dims (%lld, %lld) must be equal",
                 (long long)d[4], (long long)d[5]);
        return NULL;
    }
    int64_t b = d[4], dims[4] = {d[0] * b, d[1] * b, d[2], d[3]};
    pc_data *y = ref_new_tensor(ctx, w->dtype, 4, dims);
    if (!y) return NULL;
    for (int64_t o = 0; o < dims[0]; o++)
        for (int64_t i = 0; i < dims[1]; i++)
            for (int64_t ky = 0; ky < d[2]; ky++)
                for (int64_t kx = 0; kx < d[3]; kx++) {
                    uint64_t to = (uint64_t)(((o * dims[1] + i) * d[2] + ky) * d[3] + kx);
                    uint64_t from =
                        (uint64_t)((((((o / b) * d[1] + i / b) * d[2] + ky) * d[3] + kx) * b + i % b) * b +
                                   o % b);
                    ref_set_f64(y, to, ref_get_f64(w, from));
                }
    return y;
}

static pc_status op_ToBlocked(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    int64_t b = ref_attr_int(ctx, "block", 0);
    if (b < 1 || b > 1024)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute block is %lld, not in 1..1024", (long long)b);
    pc_status st = n_in ? need_float_rank(ctx, in[0], 4, "X") : ref_fail(ctx, PC_ERR_ARITY, "X is required");
    if (st != PC_OK) return st;
    return (out[0] = block(ctx, in[0], b)) ? PC_OK : ctx->err->status;
}

static pc_status op_FromBlocked(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                uint32_t n_out)
{
    (void)n_out;
    pc_status st = n_in ? need_float_rank(ctx, in[0], 5, "X") : ref_fail(ctx, PC_ERR_ARITY, "X is required");
    if (st != PC_OK) return st;
    int64_t ch = ref_attr_int(ctx, "channels", 0), cp = in[0]->dims[1] * in[0]->dims[4];
    if (ch < 1 || ch > cp || ch <= cp - in[0]->dims[4])
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute channels = %lld does not fit %lld blocks of %lld",
                        (long long)ch, (long long)in[0]->dims[1], (long long)in[0]->dims[4]);
    pc_data *plain = unblock(ctx, in[0]);
    if (!plain) return ctx->err->status;
    out[0] = crop(ctx, plain, ch);
    pc_data_unref(plain);
    return out[0] ? PC_OK : ctx->err->status;
}

/* Runs the standard op `op` on args at the model's ai.onnx opset, with this node's attributes. */
static pc_status run_base(ref_ctx *ctx, const char *op, pc_data *const *args, uint32_t n, pc_data **y)
{
    const ref_op *base = ref_op_find("", op);
    if (!base) return ref_unsupported(ctx, "no standard %s", op);
    ref_ctx base_ctx = *ctx;
    int64_t onnx_opset = pc_model_opset(ctx->model, "");
    if (onnx_opset > 0) base_ctx.opset = onnx_opset;
    pc_data *outs[1] = {NULL};
    pc_status st = base->run(&base_ctx, args, n, outs, 1);
    *y = outs[0];
    return st;
}

static void relu_in_place(pc_data *y)
{
    for (uint64_t k = 0; k < y->n_elements; k++)
        ref_set_f64(y, k, ref_relu(ref_get_f64(y, k)));
}

/* The primitives: base op on the plain form, then the post-ops. */
static pc_status op_primitive(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    const char *op = ctx->node->op_type;
    bool conv = strcmp(op, "Conv") == 0, bn = strcmp(op, "BatchNormalization") == 0;
    pc_status st = n_in ? need_float_rank(ctx, in[0], 5, "X") : ref_fail(ctx, PC_ERR_ARITY, "X is required");
    if (st == PC_OK && conv && (n_in < 2 || !in[1])) st = ref_fail(ctx, PC_ERR_ARITY, "W is required");
    if (st == PC_OK && conv) st = need_float_rank(ctx, in[1], 6, "W");
    if (st == PC_OK && conv && n_in > 3 && (n_in != 7 || !in[3] || !in[4] || !in[5] || !in[6]))
        st = ref_fail(ctx, PC_ERR_ARITY,
                      "the fused BatchNormalization needs inputs 3..6 (scale, B, mean, var)");
    int64_t relu = ref_attr_int(ctx, "relu", 0);
    if (st == PC_OK && (relu < 0 || relu > 1) && (conv || bn))
        st = ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute relu is %lld, not 0 or 1", (long long)relu);
    if (st != PC_OK) return st;
    int64_t b = in[0]->dims[4];
    pc_data *args[5] = {NULL}, *y = NULL;
    uint32_t n_args = conv ? (n_in < 3 ? n_in : 3) : bn ? n_in : 1;
    for (uint32_t i = 0; i < n_args && st == PC_OK; i++) {
        if (i == 0)
            args[0] = unblock(ctx, in[0]);
        else if (conv && i == 1)
            args[1] = unblock_weight(ctx, in[1]);
        else
            args[i] = pc_data_ref(in[i]);
        if (in[i] && !args[i]) st = ctx->err->status;
    }
    if (st == PC_OK) st = run_base(ctx, op, args, n_args, &y);
    ref_unref_all(args, 5);
    if (st == PC_OK && conv && n_in == 7) { /* Conv-BatchNormalization */
        pc_data *bn_args[5] = {y, in[3], in[4], in[5], in[6]}, *z = NULL;
        st = run_base(ctx, "BatchNormalization", bn_args, 5, &z);
        pc_data_unref(y);
        y = z;
    }
    if (st == PC_OK && relu) relu_in_place(y);
    if (st == PC_OK && !(out[0] = block(ctx, y, b))) st = ctx->err->status;
    pc_data_unref(y);
    return st;
}

/* Relu, Add, Sum, Concat on blocked tensors: the standard op on them as they are (elementwise over equal
 * shapes, or Concat on axis 1 of blocks whose channels are all real: the layout does not matter). */
static pc_status op_blind(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    for (uint32_t i = 0; i < n_in; i++) {
        pc_status st = need_float_rank(ctx, in[i], 5, "a blocked input");
        if (st != PC_OK) return st;
    }
    return run_base(ctx, ctx->node->op_type, in, n_in, out);
}

static pc_status op_Subgraph(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    const pc_attr *a = pc_node_attr(ctx->node, "body");
    if (!a || a->type != PC_ATTR_GRAPH || !a->g)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'body' (a graph) is required");
    if (a->g->n_inputs != n_in || a->g->n_outputs != n_out)
        return ref_fail(ctx, PC_ERR_ARITY, "the node has %u inputs and %u outputs, its body %u and %u", n_in,
                        n_out, a->g->n_inputs, a->g->n_outputs);
    return ref_run_body(ctx, a->g, n_in, in, out);
}

const ref_op ref_ops_blocked[] = {
    {BLOCKED_DOMAIN, "Add", op_blind},
    {BLOCKED_DOMAIN, "AveragePool", op_primitive},
    {BLOCKED_DOMAIN, "BatchNormalization", op_primitive},
    {BLOCKED_DOMAIN, "Concat", op_blind},
    {BLOCKED_DOMAIN, "Conv", op_primitive},
    {BLOCKED_DOMAIN, "FromBlocked", op_FromBlocked},
    {BLOCKED_DOMAIN, "GlobalAveragePool", op_primitive},
    {BLOCKED_DOMAIN, "GlobalMaxPool", op_primitive},
    {BLOCKED_DOMAIN, "LRN", op_primitive},
    {BLOCKED_DOMAIN, "MaxPool", op_primitive},
    {BLOCKED_DOMAIN, "Relu", op_blind},
    {BLOCKED_DOMAIN, "Subgraph", op_Subgraph},
    {BLOCKED_DOMAIN, "Sum", op_blind},
    {BLOCKED_DOMAIN, "ToBlocked", op_ToBlocked},
};
const size_t ref_ops_blocked_count = sizeof ref_ops_blocked / sizeof ref_ops_blocked[0];
