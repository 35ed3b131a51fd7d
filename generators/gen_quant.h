/*
 * gen_quant.h — what the two quantized families (gen_qdq.c, gen_qlinear.c) share: a pool of quantized tensors
 * with their parameters and the interval of their dequantized values, and builders for QuantizeLinear,
 * DequantizeLinear and drawn quantization parameters. Private to generators/ (the families' own header).
 *
 * Draw conventions (gen.h): type 0 is uint8, scale index 0 is 1.0, zero point index 0 is 0, per-tensor before
 * per-axis, so the all-zero sequence gives the plainest parameters.
 */
#ifndef PC_GEN_QUANT_H
#define PC_GEN_QUANT_H

#include "generators/gen.h"

/* A quantized tensor in the pool: Q output, quantized graph input or QLinear output. */
typedef struct pc_genq_value {
    pc_value *q;
    pc_value *scale, *zp; /* initializers (zp never NULL): reused by every DQ of this tensor */
    pc_dtype type;        /* uint8 or int8 */
    int32_t axis;         /* -1: per tensor */
    float s_max;          /* largest scale */
    int64_t zp_lo, zp_hi; /* smallest and largest zero point */
    double lo, hi;        /* interval of the dequantized values */
    int32_t rank;
    int64_t dims[PC_MAX_RANK];
    pc_value *dq; /* a DequantizeLinear output already made for it (may be shared), or NULL */
} pc_genq_value;

typedef struct pc_genq {
    pc_gen *g;
    uint32_t n, cap;
    pc_genq_value *items;
} pc_genq;

/* Quantization parameters to build: per tensor (n == 1) or along `axis` (n scales). */
typedef struct pc_genq_params {
    pc_dtype type;
    int32_t axis; /* -1 per tensor */
    uint32_t n;
    float *scales; /* n entries (malloc'ed by pc_genq_params_draw) */
    int64_t *zps;  /* n entries */
} pc_genq_params;

void pc_genq_free(pc_genq *s);
/* Nodes still allowed by cfg->max_nodes. */
uint32_t pc_genq_budget(const pc_genq *s);

/* Draws parameters for values of magnitude about `mag` (scale ~ mag / 100 times a drawn factor; index 0 gives
 * 1.0), n == 1 per tensor. type PC_DTYPE_UNDEFINED draws it (0: uint8). */
pc_status pc_genq_params_draw(pc_genq *s, pc_dtype type, int32_t axis, uint32_t n, double mag,
                              pc_genq_params *p, pc_error *err);
/* Parameters equal to v's (same values). */
pc_status pc_genq_params_of(const pc_genq_value *v, pc_genq_params *p, pc_error *err);
void pc_genq_params_free(pc_genq_params *p);

/* QuantizeLinear(x) with new initializers for p; x's values lie in [lo, hi]. The result joins the pool. */
pc_status pc_genq_quantize(pc_genq *s, pc_value *x, double lo, double hi, const pc_genq_params *p,
                           pc_genq_value **out, pc_error *err);
/* QuantizeLinear(x) reusing the scale and zero point initializers of `like` (equal parameters, shared). */
pc_status pc_genq_quantize_like(pc_genq *s, pc_value *x, double lo, double hi, const pc_genq_value *like,
                                pc_genq_value **out, pc_error *err);
/* DequantizeLinear(v) (a fresh node, or with `share` the DQ already made for v when there is one). */
pc_status pc_genq_dequantize(pc_genq *s, pc_genq_value *v, bool share, pc_value **out, pc_error *err);
/* A quantized graph input (data over the type's whole range unless narrowed) with the given parameters. */
pc_status pc_genq_input(pc_genq *s, int32_t rank, const int64_t *dims, const pc_genq_params *p,
                        pc_genq_value **out, pc_error *err);
/* Registers a quantized value made by a QLinear node with the parameter initializers it was given. */
pc_status pc_genq_register(pc_genq *s, pc_value *q, pc_value *scale, pc_value *zp, const pc_genq_params *p,
                           pc_genq_value **out, pc_error *err);
/* A float graph input of the given shape with values in [-r, r] (r drawn: index 0 is 1). */
pc_gen_value *pc_genq_float_input(pc_genq *s, int32_t rank, const int64_t *dims, pc_error *err);
/* Dims for a new tensor of rank `rank` (each 1..4, index 0 is 1), with dims[1] >= min_c and every later dim
 * >= min_spatial, shrunk until they fit cfg->max_elements. */
void pc_genq_draw_dims(pc_genq *s, int32_t rank, int64_t min_c, int64_t min_spatial, int64_t *dims);

/* Picks a pooled quantized value that `accept` takes (NULL: any), most recent first (draw 0). NULL when none.
 */
typedef bool (*pc_genq_accept_fn)(const pc_genq_value *v, const void *ctx);
pc_genq_value *pc_genq_pick(pc_genq *s, pc_genq_accept_fn accept, const void *ctx);

/* A Conv over x (rank 3 or 4, NCHW): drawn output channels, group (1 or depthwise), kernel, strides, pads. */
typedef struct pc_genq_conv {
    int32_t rank, ns;         /* ns spatial dims */
    int64_t m, group, kelems; /* kelems: products summed per output element */
    int64_t k[2], strides[2], pads[4];
    bool strided, padded;
    int64_t out_dims[PC_MAX_RANK], w_dims[PC_MAX_RANK];
} pc_genq_conv;
/* false when the output would not fit cfg->max_elements (nothing drawn is wasted: the caller just skips). */
bool pc_genq_conv_draw(pc_genq *s, const pc_genq_value *x, pc_genq_conv *c);
/* kernel_shape, and strides/pads/group when not the defaults. */
pc_status pc_genq_conv_attrs(const pc_genq_conv *c, pc_node *n, pc_error *err);

/* A weight constant of type wt (int8: zero point 0; uint8: 128), values within +-wq of the zero point (wq
 * drawn: 127 or 20), with scales around 1/wq per tensor (n == 1) or along axis (n scales). w describes it
 * (not pooled); wp holds its parameters (free with pc_genq_params_free). */
pc_status pc_genq_weights(pc_genq *s, pc_dtype wt, int32_t rank, const int64_t *dims, int32_t axis,
                          uint32_t n, pc_genq_value *w, pc_genq_params *wp, pc_error *err);
/* An int32 bias constant [m] with values within +-bq (drawn); *bmag bounds its dequantized magnitude at scale
 * x_scale * w_scale. */
pc_value *pc_genq_bias(pc_genq *s, int64_t m, float x_scale, float w_scale_max, double *bmag, pc_error *err);
/* The first scale of a per-tensor value. */
float pc_genq_scale0(const pc_genq_value *v);

/* Interval of dequantized values after quantizing [lo, hi] with p (saturation included). */
void pc_genq_interval(const pc_genq_params *p, double lo, double hi, double *dlo, double *dhi);

#endif
