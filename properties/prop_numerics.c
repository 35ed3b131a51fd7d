/* numerics: the reference executor on the graph before a pass and after it, on the case's inputs, must agree
 * — bit for bit where the pass only moves data (or the output is an integer), within one quantization step
 * where a rewrite moves the rounding of quantized values, within a per-pass float tolerance otherwise
 * (docs/properties.md lists each tolerance and why). End to end: the original against the fully optimized
 * graph, within the sum of the tolerances of the passes that changed it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "properties/match.h"
#include "properties/property.h"
#include "reference/reference.h"

typedef enum tol_mode {
    TOL_EXACT = 0, /* bitwise for floats (NaN positions first), exact for the rest */
    TOL_FLOAT,     /* |a - e| <= rtol |e| + atol_rel max(1, M), M = largest finite |e| of the output */
    TOL_QUANT, /* integer outputs within quant_steps; float outputs within the float bound plus the DQ step */
} tol_mode;

typedef struct tolerance {
    tol_mode mode;
    double rtol, atol_rel;
    uint32_t quant_steps;
} tolerance;

/* Per pass. Every pipeline pass and partitioning must have a row (tests/unit/test_properties_tolerances.c): a
 * new pure data-movement pass goes here as exact, so that the property is as strict for it as for the others.
 * The default below is only for a pass injected from outside the pipeline table. */
static const struct pass_tolerance {
    const char *pass;
    tolerance tol;
} pass_tolerances[] = {
    {"eliminate_identity", {TOL_EXACT, 0, 0, 0}},
    {"eliminate_dropout", {TOL_EXACT, 0, 0, 0}},
    {"eliminate_cast", {TOL_EXACT, 0, 0, 0}},
    {"eliminate_slice", {TOL_EXACT, 0, 0, 0}},
    {"eliminate_unsqueeze", {TOL_EXACT, 0, 0, 0}},
    {"prune_simple", {TOL_EXACT, 0, 0, 0}},
    {"remove_dq_q", {TOL_EXACT, 0, 0, 0}},
    {"fuse_relu_clip", {TOL_EXACT, 0, 0, 0}},
    {"fuse_reshape", {TOL_EXACT, 0, 0, 0}},
    {"transpose_optimize", {TOL_EXACT, 0, 0, 0}},
    {"transpose_optimize_ep", {TOL_EXACT, 0, 0, 0}},
    {"partition", {TOL_EXACT, 0, 0, 0}},
    {"fuse_conv_activation", {TOL_EXACT, 0, 0, 0}},
    {"fold_constants", {TOL_FLOAT, 1e-5, 1e-6, 0}},
    {"fuse_gelu", {TOL_FLOAT, 1e-5, 1e-6, 0}},
    {"fuse_conv_bn", {TOL_FLOAT, 1e-4, 1e-5, 0}},
    {"fuse_conv_add", {TOL_FLOAT, 1e-4, 1e-5, 0}},
    {"fuse_conv_mul", {TOL_FLOAT, 1e-4, 1e-5, 0}},
    {"fuse_qdq_qlinear", {TOL_QUANT, 1e-5, 1e-6, 1}},
    /* the systolic rewrite moves elements and runs the same integer arithmetic: bit-exact; the blocked EP's
     * compile (blocked_ep_tolerance) sums zero-padded channels, which can turn a -0 into +0 */
    {"ep_rewrites", {TOL_EXACT, 0, 0, 0}},
};
static const tolerance blocked_ep_tolerance = {TOL_FLOAT, 1e-4, 1e-5, 0};
static const tolerance default_tolerance = {TOL_FLOAT, 1e-4, 1e-5, 0};

size_t pc_numerics_tolerance_count(void)
{
    return sizeof pass_tolerances / sizeof pass_tolerances[0];
}

const char *pc_numerics_tolerance_pass(size_t index)
{
    return index < pc_numerics_tolerance_count() ? pass_tolerances[index].pass : NULL;
}

static tolerance tolerance_of(const char *pass)
{
    for (size_t i = 0; i < sizeof pass_tolerances / sizeof pass_tolerances[0]; i++)
        if (strcmp(pass_tolerances[i].pass, pass) == 0) return pass_tolerances[i].tol;
    return default_tolerance;
}

/* The tolerances of the passes that changed the current case, summed for the end-to-end comparison. Keyed by
 * the case and its original so a new case starts afresh; thread-local so cases checked on threads do not mix.
 */
static _Thread_local struct {
    const pc_case *kase;
    const pc_model *original;
    tolerance sum;
} along;

static void along_add(const pc_check_ctx *ctx, tolerance t)
{
    if (along.kase != ctx->kase || along.original != ctx->original) {
        along.kase = ctx->kase;
        along.original = ctx->original;
        along.sum = (tolerance){TOL_EXACT, 0, 0, 0};
    }
    if (t.mode > along.sum.mode) along.sum.mode = t.mode;
    along.sum.rtol += t.rtol;
    along.sum.atol_rel += t.atol_rel;
    along.sum.quant_steps += t.quant_steps;
}

static bool is_float(pc_dtype d)
{
    return d == PC_DTYPE_FLOAT || d == PC_DTYPE_DOUBLE || d == PC_DTYPE_FLOAT16 || d == PC_DTYPE_BFLOAT16;
}

static bool is_small_int(pc_dtype d)
{
    return d == PC_DTYPE_INT8 || d == PC_DTYPE_UINT8 || d == PC_DTYPE_INT16 || d == PC_DTYPE_UINT16 ||
           d == PC_DTYPE_INT32 || d == PC_DTYPE_INT4 || d == PC_DTYPE_UINT4;
}

/* Element k of a float or double tensor. */
static double elem_f(const pc_data *d, uint64_t k)
{
    return d->dtype == PC_DTYPE_DOUBLE ? ((const double *)d->data)[k] : (double)((const float *)d->data)[k];
}

/* Element k of an integer tensor (is_small_int types): core's reader, 0 where it has none. */
static int64_t elem_i(const pc_data *d, uint64_t k)
{
    int64_t v = 0;
    return pc_data_int_at(d, k, &v) ? v : 0;
}

static bool has_special(const pc_data *d)
{
    if (d->kind != PC_TYPE_TENSOR || (d->dtype != PC_DTYPE_FLOAT && d->dtype != PC_DTYPE_DOUBLE))
        return false;
    for (uint64_t k = 0; k < d->n_elements; k++)
        if (!isfinite(elem_f(d, k))) return true;
    return false;
}

static double max_abs(const pc_data *d)
{
    double m = 0;
    if (d->kind != PC_TYPE_TENSOR || (d->dtype != PC_DTYPE_FLOAT && d->dtype != PC_DTYPE_DOUBLE)) return 1;
    for (uint64_t k = 0; k < d->n_elements; k++) {
        double v = fabs(elem_f(d, k));
        if (isfinite(v) && v > m) m = v;
    }
    return m;
}

/* Largest |scale| of a constant float scale tensor (0 when it is not one). */
static double tensor_max_abs(const pc_tensor *t)
{
    double m = 0;
    if (!t || (t->dtype != PC_DTYPE_FLOAT && t->dtype != PC_DTYPE_DOUBLE)) return 0;
    for (uint64_t k = 0; k < t->n_elements; k++) {
        double v = t->dtype == PC_DTYPE_DOUBLE ? ((const double *)t->data)[k] : ((const float *)t->data)[k];
        if (isfinite(v) && fabs(v) > m) m = fabs(v);
    }
    return m;
}

/* One quantization step of a float output: the scale of the DequantizeLinear producing it; for other float
 * outputs, the largest DequantizeLinear scale of the graph (a step anywhere upstream moves it by about that).
 */
static double dq_step(const pc_model *m, const pc_value *out)
{
    const pc_node *p = out->producer;
    if (p && strcmp(p->op_type, "DequantizeLinear") == 0 && p->n_inputs > 1 && p->inputs[1])
        return tensor_max_abs(p->inputs[1]->initializer);
    double s = 0;
    for (const pc_node *n = m->graph->first; n; n = n->next)
        if (strcmp(n->op_type, "DequantizeLinear") == 0 && n->n_inputs > 1 && n->inputs[1]) {
            double v = tensor_max_abs(n->inputs[1]->initializer);
            if (v > s) s = v;
        }
    return s;
}

/* ---- Reordered accumulation
 * ------------------------------------------------------------------------------------ Bit-exactness of a
 * data-movement pass holds for ops whose arithmetic does not depend on the order the input is stored in. The
 * reference (reference/) visits the terms of a reduction in storage order, accumulates in double and rounds
 * once to the element type; the sum-like reductions over two or more axes of extent > 1, Resize (and
 * Upsample) linear/cubic over two or more resized axes, and Softmax/LogSoftmax before opset 13 (which flatten
 * the trailing axes) therefore add the same terms in another order once a Transpose moves across them. Two
 * evaluations s1, s2 of the same sum of n terms with S = sum |t_i|, each done in double (unit roundoff u_d =
 * 2^-53; K rounding steps per term) and rounded once to float (u_f = 2^-24), satisfy |s_k - s| <=
 * gamma_K(u_d) S + u_f |s_k|, so |fl(s1) - fl(s2)| <= 2 (gamma_K(u_d) S + u_f Y), gamma_K = K u / (1 - K u),
 * Y the largest |result|. That bound, propagated through the op's own post-processing (mean, sqrt, log, exp /
 * sum), is the tolerance of every output reached from such a node only through ops that copy or select their
 * input's values (data movement, Relu, Abs, Neg, Max, Min, Clip, max-pooling); outputs reached through other
 * ops get the default float tolerance (the bound is not propagated through arithmetic); every other output
 * stays bit-exact. */
typedef struct reorder_tol {
    bool any;     /* some output is relaxed */
    double *atol; /* per graph output: the propagated bound, -1 when exact, INFINITY for "default float" */
    uint32_t n;
    char site[160]; /* the first reordering node, for messages */
} reorder_tol;

static double gamma_d(double k)
{
    const double u = 0x1p-53;
    return k * u / (1 - k * u);
}

static bool op_is(const pc_node *n, const char *op)
{
    return !n->domain[0] && strcmp(n->op_type, op) == 0;
}

/* Ops whose output elements are copies or selections of their carrying inputs' elements: a perturbation of at
 * most E in the inputs is at most E in the output. */
static bool op_transparent(const pc_node *n)
{
    static const char *const ops[] = {
        "Transpose", "Reshape", "Flatten",       "Squeeze",      "Unsqueeze",      "Identity",
        "Concat",    "Split",   "Slice",         "Gather",       "GatherElements", "GatherND",
        "Pad",       "Tile",    "Expand",        "DepthToSpace", "SpaceToDepth",   "Relu",
        "Abs",       "Neg",     "Max",           "Min",          "Clip",           "ReduceMax",
        "ReduceMin", "MaxPool", "GlobalMaxPool", "Dropout"};
    if (n->domain[0]) return false;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(n->op_type, ops[i]) == 0) return true;
    return false;
}

typedef enum reorder_kind {
    RK_NONE,
    RK_SUM,
    RK_MEAN,
    RK_SUMSQUARE,
    RK_L1,
    RK_L2,
    RK_LOGSUM,
    RK_LOGSUMEXP,
    RK_PROD,
    RK_MAXMIN,
    RK_RESIZE,
    RK_SOFTMAX,
    RK_LOGSOFTMAX,
} reorder_kind;

static reorder_kind reorder_kind_of(const pc_model *m, const pc_node *n)
{
    static const struct {
        const char *op;
        reorder_kind k;
    } reds[] = {{"ReduceSum", RK_SUM},
                {"ReduceMean", RK_MEAN},
                {"ReduceSumSquare", RK_SUMSQUARE},
                {"ReduceL1", RK_L1},
                {"ReduceL2", RK_L2},
                {"ReduceLogSum", RK_LOGSUM},
                {"ReduceLogSumExp", RK_LOGSUMEXP},
                {"ReduceProd", RK_PROD},
                {"ReduceMax", RK_MAXMIN},
                {"ReduceMin", RK_MAXMIN}};
    if (n->domain[0] || n->n_inputs < 1 || !n->inputs[0] || n->n_outputs < 1 || !n->outputs[0])
        return RK_NONE;
    for (size_t i = 0; i < sizeof reds / sizeof reds[0]; i++)
        if (strcmp(n->op_type, reds[i].op) == 0) return reds[i].k;
    if (op_is(n, "Resize") || op_is(n, "Upsample")) {
        const char *mode = pc_node_attr_string(n, "mode", "nearest");
        return strcmp(mode, "nearest") != 0 ? RK_RESIZE : RK_NONE;
    }
    if (pc_model_opset(m, "") < 13) {
        if (op_is(n, "Softmax")) return RK_SOFTMAX;
        if (op_is(n, "LogSoftmax")) return RK_LOGSOFTMAX;
    }
    return RK_NONE;
}

static uint32_t dims_above_one(const pc_data *d)
{
    uint32_t k = 0;
    for (int32_t i = 0; i < d->rank; i++)
        k += d->dims[i] > 1;
    return k;
}

/* Does axis i of a linear/cubic Resize or Upsample read more than one tap? Exactly when its scale is not 1
 * (an integral source coordinate reads one tap) or the roi crops; the scale comes from the constant scales
 * (input or attribute), else from the extents (sizes). Unknown: yes. */
static bool resize_axis_taps(const pc_node *n, int32_t i, const pc_data *x, const pc_data *y)
{
    if (strcmp(pc_node_attr_string(n, "coordinate_transformation_mode", ""), "tf_crop_and_resize") == 0)
        return true;
    const pc_tensor *sc = NULL;
    const pc_attr *a = pc_node_attr(n, "scales");
    if (a && a->type == PC_ATTR_FLOATS) return (size_t)i >= a->n || a->floats[i] != 1.0f;
    uint32_t at = op_is(n, "Resize") && pc_model_opset(n->graph->model, "") >= 11 ? 2 : 1;
    if (at < n->n_inputs && n->inputs[at]) {
        sc = n->inputs[at]->initializer;
        if (!sc) return true;
        if (sc->n_elements) {
            if (sc->dtype != PC_DTYPE_FLOAT || (uint64_t)i >= sc->n_elements) return true;
            return ((const float *)sc->data)[i] != 1.0f;
        }
    }
    return x->dims[i] != y->dims[i];
}

/* The bound on |after - before| of node n's output from its input x and output y (as the after graph computed
 * them), or -1 when the order does not matter here (fewer than two axes of extent > 1 take part), INFINITY
 * when no bound is derived (the default float tolerance applies). */
static double reorder_bound(reorder_kind k, const pc_node *n, const pc_data *x, const pc_data *y)
{
    if (x->kind != PC_TYPE_TENSOR || y->kind != PC_TYPE_TENSOR || !is_float(x->dtype) || !is_float(y->dtype))
        return -1;
    const double uf = y->dtype == PC_DTYPE_DOUBLE ? 0x1p-53 : 0x1p-24;
    double xmax = 0, xmin = INFINITY, ymax = max_abs(y);
    bool x_plain = x->dtype == PC_DTYPE_FLOAT || x->dtype == PC_DTYPE_DOUBLE;
    if (!x_plain) return INFINITY;
    for (uint64_t i = 0; i < x->n_elements; i++) {
        /* a group with an infinity or a NaN sums to the same infinity or NaN in any order (the reference
         * accumulates in double, where no sum of floats overflows): only the finite terms bound the others
         * (an infinity elsewhere in the tensor used to give the whole output the default float tolerance,
         * tighter than a cancelling 3e38 pair allows: suite seed 10, case 25430) */
        double v = elem_f(x, i);
        if (!isfinite(v)) continue;
        if (fabs(v) > xmax) xmax = fabs(v);
        if (v < xmin) xmin = v;
    }
    double margin = 1 + 0x1p-20, round_out = 2 * uf * ymax;
    if (k == RK_RESIZE) {
        /* every axis with a scale other than 1 reads 2 (linear) or 4 (cubic) taps, even at extent 1 */
        uint32_t axes = 0;
        for (int32_t i = 0; i < x->rank && i < y->rank; i++)
            axes += resize_axis_taps(n, i, x, y);
        if (axes < 2) return -1;
        bool cubic = strcmp(pc_node_attr_string(n, "mode", ""), "cubic") == 0;
        double a = fabs((double)pc_node_attr_float(n, "cubic_coeff_a", -0.75f));
        double taps = pow(cubic ? 4 : 2, axes), wsum = cubic ? pow(4 * (1 + a), axes) : 1;
        return (round_out + 2 * gamma_d(taps + axes) * wsum * xmax) * margin;
    }
    if (k == RK_SOFTMAX || k == RK_LOGSOFTMAX) {
        int64_t axis = pc_node_attr_int(n, "axis", 1);
        if (axis < 0) axis += x->rank;
        if (axis < 0 || axis >= x->rank) return INFINITY;
        uint32_t trailing = 0;
        double terms = 1;
        for (int32_t i = (int32_t)axis; i < x->rank; i++) {
            trailing += x->dims[i] > 1;
            terms *= (double)x->dims[i];
        }
        if (trailing < 2) return -1;
        /* a sum of positive terms: relative error gamma_n both ways, through exp(v) / sum or v - log(sum) */
        double rel = 2 * gamma_d(terms + 2) * margin;
        return (round_out + (k == RK_SOFTMAX ? rel * ymax : rel * (1 + ymax))) * margin;
    }
    /* reductions: reduced axes of extent > 1 are the input's dims > 1 the output lacks */
    if (dims_above_one(x) < dims_above_one(y) + 2) return -1;
    double terms = y->n_elements ? (double)x->n_elements / (double)y->n_elements : 0;
    switch (k) {
    case RK_SUM:
    case RK_L1:
        return (round_out + 2 * gamma_d(terms) * terms * xmax) * margin;
    case RK_MEAN:
        return (round_out + 2 * gamma_d(terms + 1) * xmax) * margin;
    case RK_SUMSQUARE:
        return (round_out + 2 * gamma_d(terms + 1) * terms * xmax * xmax) * margin;
    case RK_L2: /* |sqrt(a) - sqrt(b)| <= sqrt(|a - b|) */
        return (round_out + sqrt(2 * gamma_d(terms + 1) * terms * xmax * xmax)) * margin;
    case RK_LOGSUMEXP: /* the shifted sum is >= 1 and its terms positive: log moves by the relative error */
        return (round_out + 2 * gamma_d(terms + 2)) * margin;
    case RK_LOGSUM: /* only a sum of non-negative terms has a relative bound */
        return xmin >= 0 ? (round_out + 2 * gamma_d(terms + 1)) * margin : INFINITY;
    case RK_PROD:
        return (round_out + 2 * gamma_d(terms) * ymax) * margin;
    case RK_MAXMIN:
        return 0; /* the same value; only the sign of a zero may differ */
    default:
        return INFINITY;
    }
}

/* A copy of `m` with every value in `names` (n of them) added as a graph output, run on the case's inputs. */
static pc_status probe_run(const pc_check_ctx *ctx, const pc_model *m, const char *const *names, uint32_t n,
                           pc_model **copy, pc_data ***outs, pc_error *err)
{
    uint8_t *bytes = NULL;
    size_t size = 0;
    *copy = NULL;
    *outs = NULL;
    pc_status st = pc_model_save_bytes(m, &bytes, &size, err);
    if (st == PC_OK) st = match_load_bytes(bytes, size, copy, err);
    free(bytes);
    for (uint32_t i = 0; st == PC_OK && i < n; i++) {
        pc_value *v = pc_graph_find_value((*copy)->graph, names[i]);
        if (!v)
            return pc_error_set(err, PC_ERR_INTERNAL, "numerics: value '%s' not found in its copy", names[i]);
        if (!v->is_graph_output) st = pc_graph_add_output((*copy)->graph, v, err);
    }
    if (st == PC_OK) st = pc_ref_run(*copy, ctx->kase->n_inputs, ctx->kase->inputs, outs, err);
    return st;
}

static void reorder_tol_free(reorder_tol *r)
{
    free(r->atol);
    memset(r, 0, sizeof *r);
}

/* Which outputs of `after` a reordered accumulation reaches, and by how much at most: see the section
 * comment. Reordering nodes are those of `after` that are new or changed against `before` (a node the pass
 * did not touch reads its input in the same layout). */
static pc_status reorder_tolerances(const pc_check_ctx *ctx, const pc_model *before, const pc_model *after,
                                    reorder_tol *r, pc_error *err)
{
    memset(r, 0, sizeof *r);
    const pc_graph *g = after->graph;
    node_match mt;
    pc_status st = match_build(before->graph, g, &mt, err);
    if (st != PC_OK) return st;
    const char **names = calloc(2 * (size_t)mt.n_after + 1, sizeof *names);
    const pc_node **sites = calloc((size_t)mt.n_after + 1, sizeof *sites);
    double *val = calloc((size_t)g->n_values + 1, sizeof *val); /* per value id: the bound */
    bool *rel = calloc((size_t)g->n_values + 1, sizeof *rel);   /* per value id: reached by a reordering */
    pc_model *copy = NULL;
    pc_data **outs = NULL;
    uint32_t n_sites = 0, n_names = 0;
    if (!names || !sites || !val || !rel) {
        st = pc_error_set(err, PC_ERR_NOMEM, "numerics: out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < mt.n_after; i++) {
        const pc_node *n = mt.after[i];
        if (reorder_kind_of(after, n) == RK_NONE) continue;
        int32_t b = mt.after_to_before[i];
        if (b >= 0 && match_node_same(n, mt.before[b])) continue;
        sites[n_sites++] = n;
        names[n_names++] = n->inputs[0]->name;
        names[n_names++] = n->outputs[0]->name;
    }
    if (!n_sites) goto done;
    st = probe_run(ctx, after, names, n_names, &copy, &outs, err);
    if (st != PC_OK) goto done;
    for (uint32_t s = 0; s < n_sites; s++) {
        const pc_node *n = sites[s];
        const pc_data *x = NULL, *y = NULL;
        for (uint32_t o = 0; o < copy->graph->n_outputs; o++) {
            if (strcmp(copy->graph->outputs[o]->name, n->inputs[0]->name) == 0) x = outs[o];
            if (strcmp(copy->graph->outputs[o]->name, n->outputs[0]->name) == 0) y = outs[o];
        }
        if (!x || !y) continue;
        double bnd = reorder_bound(reorder_kind_of(after, n), n, x, y);
        if (bnd < 0) continue;
        val[n->outputs[0]->id] = bnd; /* 0: the same value, only the sign of a zero may differ */
        rel[n->outputs[0]->id] = true;
        if (!r->site[0]) {
            char lb[128];
            snprintf(r->site, sizeof r->site, "%s", match_node_label(n, lb, sizeof lb));
        }
    }
    /* forward in graph order: transparent ops carry the largest bound of their inputs, others make it
     * unbounded */
    for (const pc_node *n = g->first; n; n = n->next) {
        double in = 0;
        bool reached = false;
        for (uint32_t i = 0; i < n->n_inputs; i++) {
            const pc_value *v = n->inputs[i];
            if (!v || !rel[v->id]) continue;
            reached = true;
            if (val[v->id] > in) in = val[v->id];
        }
        if (!reached) continue;
        double out = op_transparent(n) ? in : INFINITY;
        for (uint32_t k = 0; k < n->n_outputs; k++) {
            const pc_value *v = n->outputs[k];
            if (!v) continue;
            if (!rel[v->id] || out > val[v->id]) val[v->id] = out;
            rel[v->id] = true;
        }
    }
    r->n = g->n_outputs;
    r->atol = malloc((r->n ? r->n : 1) * sizeof *r->atol);
    if (!r->atol) {
        st = pc_error_set(err, PC_ERR_NOMEM, "numerics: out of memory");
        goto done;
    }
    for (uint32_t o = 0; o < r->n; o++) {
        uint32_t id = g->outputs[o]->id;
        r->atol[o] = rel[id] ? val[id] : -1;
        r->any = r->any || rel[id];
    }
done:
    if (outs) pc_ref_free_outputs(copy, outs);
    pc_model_free(copy);
    free(names);
    free(sites);
    free(val);
    free(rel);
    match_free(&mt);
    if (st != PC_OK) reorder_tol_free(r);
    return st;
}

/* ---- Requantization downstream of a QDQ rewrite
 * A rewrite that moves where a quantized value is rounded (QDQ -> QLinear) changes that value by at most one
 * step (the pass's quant_steps). Downstream, a DequantizeLinear of scale s1 turns k steps into at most k s1,
 * ops that copy or select values (op_transparent) keep that, and a QuantizeLinear of scale s2 turns a
 * difference d into at most ceil(d / s2) steps (its zero point and saturation can only shrink it): Q(s1) ->
 * DQ(s1) -> Q(s2) with s1 / s2 = 1.35 may move the output by 2 steps. This derives each integer output's
 * bound along such paths; an output reached through other arithmetic keeps the pass's own quant_steps. */
typedef struct quant_tol {
    bool any;        /* some output's bound is above the pass's quant_steps */
    uint32_t *steps; /* per graph output: the derived bound, 0 when none is derived */
    uint32_t n;
} quant_tol;

/* Largest (want_max) or smallest non-zero |element| of a constant float tensor; 0 when it is not one. */
static double scale_abs(const pc_value *v, bool want_max)
{
    const pc_tensor *t = v ? v->initializer : NULL;
    if (!t || (t->dtype != PC_DTYPE_FLOAT && t->dtype != PC_DTYPE_DOUBLE) || !t->n_elements) return 0;
    if (want_max) return tensor_max_abs(t);
    double m = INFINITY;
    for (uint64_t k = 0; k < t->n_elements; k++) {
        double x = t->dtype == PC_DTYPE_DOUBLE ? ((const double *)t->data)[k] : ((const float *)t->data)[k];
        if (!isfinite(x) || x == 0) return 0;
        if (fabs(x) < m) m = fabs(x);
    }
    return m;
}

/* An integer value: by its type, or (a value saved without one) by what makes or reads it. */
static bool value_is_int(const pc_value *v)
{
    if (!v) return false;
    if (v->type.kind == PC_TYPE_TENSOR && v->type.elem != PC_DTYPE_UNDEFINED)
        return is_small_int(v->type.elem);
    const pc_node *p = v->producer;
    if (p && (op_is(p, "QuantizeLinear") || strncmp(p->op_type, "QLinear", 7) == 0)) return true;
    for (uint32_t k = 0; k < v->n_consumers; k++)
        if (op_is(v->consumers[k].node, "DequantizeLinear") && v->consumers[k].index == 0) return true;
    return false;
}

static pc_status quant_tolerances(const pc_model *before, const pc_model *after, uint32_t site_steps,
                                  quant_tol *q, pc_error *err)
{
    memset(q, 0, sizeof *q);
    const pc_graph *g = after->graph;
    node_match mt;
    pc_status st = match_build(before->graph, g, &mt, err);
    if (st != PC_OK) return st;
    /* per value id: -1 not reached, INFINITY no bound, else the bound (steps for integers, real otherwise) */
    double *val = malloc(((size_t)g->n_values + 1) * sizeof *val);
    q->n = g->n_outputs;
    q->steps = calloc((size_t)q->n + 1, sizeof *q->steps);
    if (!val || !q->steps) {
        free(val);
        free(q->steps);
        match_free(&mt);
        memset(q, 0, sizeof *q);
        return pc_error_set(err, PC_ERR_NOMEM, "numerics: out of memory");
    }
    for (uint32_t i = 0; i < g->n_values; i++)
        val[i] = -1;
    for (uint32_t i = 0; i < mt.n_after; i++) {
        const pc_node *n = mt.after[i];
        int32_t b = mt.after_to_before[i];
        /* a new or changed node that only copies or selects values moves no rounding */
        bool site = (b < 0 || !match_node_same(n, mt.before[b])) && !op_transparent(n);
        double in = -1;
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            const pc_value *v = n->inputs[k];
            if (v && val[v->id] > in) in = val[v->id];
        }
        double out;
        if (site) {
            /* a rewritten node: its own rounding, on inputs nothing upstream moved */
            out = in < 0 ? site_steps : INFINITY;
            for (uint32_t k = 0; k < n->n_outputs && isfinite(out); k++)
                if (n->outputs[k] && !value_is_int(n->outputs[k])) out = INFINITY;
        } else if (in < 0) {
            continue;
        } else if (isinf(in)) {
            out = INFINITY;
        } else if (op_is(n, "DequantizeLinear") && n->n_inputs > 1) {
            double s = scale_abs(n->inputs[1], true);
            out = s > 0 && n->inputs[0] && val[n->inputs[0]->id] >= 0 ? in * s : INFINITY;
        } else if (op_is(n, "QuantizeLinear") && n->n_inputs > 1 && n->inputs[0] &&
                   val[n->inputs[0]->id] >= 0) {
            double s = scale_abs(n->inputs[1], false);
            out = s > 0 ? ceil(in / s * (1 - 1e-6)) : INFINITY;
        } else if (op_transparent(n)) {
            out = in;
        } else {
            out = INFINITY;
        }
        for (uint32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k]) val[n->outputs[k]->id] = out;
    }
    for (uint32_t o = 0; o < q->n; o++) {
        const pc_value *v = g->outputs[o];
        double b = val[v->id];
        if (value_is_int(v) && b > site_steps && isfinite(b) && b < 1e9) {
            q->steps[o] = (uint32_t)b;
            q->any = true;
        }
    }
    free(val);
    match_free(&mt);
    return PC_OK;
}

/* The values a QDQ rewrite rounds anew: the integer outputs of the nodes it created or changed (not the
 * copying ones) that the graph before it also names. pc_check_ref_pinned takes each the rewritten way. */
static pc_status rounding_sites(const pc_model *before, const pc_model *after, const char ***names,
                                uint32_t *n, pc_error *err)
{
    *names = NULL;
    *n = 0;
    node_match mt;
    pc_status st = match_build(before->graph, after->graph, &mt, err);
    if (st != PC_OK) return st;
    const char **list = calloc((size_t)after->graph->n_values + 1, sizeof *list);
    if (!list) {
        match_free(&mt);
        return pc_error_set(err, PC_ERR_NOMEM, "numerics: out of memory");
    }
    for (uint32_t i = 0; i < mt.n_after; i++) {
        const pc_node *nd = mt.after[i];
        int32_t b = mt.after_to_before[i];
        if ((b >= 0 && match_node_same(nd, mt.before[b])) || op_transparent(nd)) continue;
        for (uint32_t k = 0; k < nd->n_outputs; k++) {
            const pc_value *v = nd->outputs[k];
            if (v && v->name && value_is_int(v) && pc_graph_find_value(before->graph, v->name))
                list[(*n)++] = v->name;
        }
    }
    match_free(&mt);
    *names = list;
    return PC_OK;
}

typedef struct cmp_out {
    const char *kind; /* NULL: equal */
    char what[512];
} cmp_out;

/* Bitwise float comparison (core's pc_data_compare_exact): NaN positions (any payload) and then the bits of
 * every other element, so -0 vs +0 and inf signs count. */
static void compare_exact_float(const pc_data *e, const pc_data *a, cmp_out *r)
{
    pc_compare_result cr;
    if (pc_data_compare_exact(e, a, &cr) == PC_COMPARE_EQUAL) return;
    double x = cr.worst_expected, y = cr.worst_actual;
    bool nan_or_inf = isnan(x) != isnan(y) || (isinf(x) && (!isinf(y) || signbit(x) != signbit(y)));
    r->kind = nan_or_inf ? "nan-position" : "values";
    snprintf(r->what, sizeof r->what, "element %llu: %.9g before, %.9g after (bit-exact expected%s)",
             (unsigned long long)cr.worst_index, x, y, x == y ? "; the sign of zero differs" : "");
}

static void compare_one(const pc_model *after, const pc_value *out_value, const pc_data *e, const pc_data *a,
                        tolerance t, double extra_atol, cmp_out *r)
{
    r->kind = NULL;
    r->what[0] = '\0';
    char db[128], da[128];
    if (e->kind != a->kind || e->dtype != a->dtype || (e->kind == PC_TYPE_TENSOR && e->rank != a->rank)) {
        r->kind = "shape";
        snprintf(r->what, sizeof r->what, "%s before, %s after", pc_data_describe(e, db, sizeof db),
                 pc_data_describe(a, da, sizeof da));
        return;
    }
    if (e->kind == PC_TYPE_TENSOR) {
        for (int32_t i = 0; i < e->rank; i++)
            if (e->dims[i] != a->dims[i]) {
                r->kind = "shape";
                snprintf(r->what, sizeof r->what, "%s before, %s after", pc_data_describe(e, db, sizeof db),
                         pc_data_describe(a, da, sizeof da));
                return;
            }
    }
    bool plain_float =
        e->kind == PC_TYPE_TENSOR && (e->dtype == PC_DTYPE_FLOAT || e->dtype == PC_DTYPE_DOUBLE);
    if (t.mode == TOL_EXACT && plain_float) {
        compare_exact_float(e, a, r);
        return;
    }
    if (t.mode == TOL_QUANT && e->kind == PC_TYPE_TENSOR && is_small_int(e->dtype)) {
        for (uint64_t k = 0; k < e->n_elements; k++) {
            int64_t x = elem_i(e, k), y = elem_i(a, k);
            int64_t diff = x > y ? x - y : y - x;
            if (diff > (int64_t)t.quant_steps) {
                r->kind = "values";
                snprintf(r->what, sizeof r->what,
                         "element %llu: %lld before, %lld after (more than %u quantization step%s apart)",
                         (unsigned long long)k, (long long)x, (long long)y, t.quant_steps,
                         t.quant_steps == 1 ? "" : "s");
                return;
            }
        }
        return;
    }
    double rtol = 0, atol = 0;
    if (t.mode != TOL_EXACT && is_float(e->dtype)) {
        double m = max_abs(e);
        rtol = t.rtol;
        atol = t.atol_rel * (m > 1 ? m : 1);
        if (t.mode == TOL_QUANT) atol += t.quant_steps * dq_step(after, out_value) * (1 + 1e-6);
    }
    atol += extra_atol;
    pc_compare_result cr;
    pc_compare_outcome o = pc_data_compare(e, a, rtol, atol, &cr);
    if (o == PC_COMPARE_EQUAL) return;
    if (o == PC_COMPARE_SHAPE || o == PC_COMPARE_TYPE) {
        r->kind = "shape";
        snprintf(r->what, sizeof r->what, "%s", cr.detail);
        return;
    }
    r->kind = strstr(cr.detail, "NaN") || strstr(cr.detail, "nan") || strstr(cr.detail, "inf")
                  ? "nan-position"
                  : "values";
    snprintf(r->what, sizeof r->what, "%s (element %llu: %.9g before, %.9g after; rtol %.3g, atol %.3g)",
             cr.detail, (unsigned long long)cr.worst_index, cr.worst_expected, cr.worst_actual, rtol, atol);
}

static const char *mode_name(tol_mode m)
{
    return m == TOL_EXACT ? "bit-exact" : m == TOL_QUANT ? "one quantization step" : "float tolerance";
}

/* The tolerance of output i once reordered accumulations are accounted for (rt NULL: none). */
static tolerance output_tolerance(tolerance t, const reorder_tol *rt, uint32_t i, double *extra_atol)
{
    *extra_atol = 0;
    if (!rt || !rt->any || i >= rt->n || rt->atol[i] < 0) return t;
    if (isinf(rt->atol[i])) { /* not propagated: the default float tolerance at least */
        if (t.mode == TOL_EXACT) return default_tolerance;
        if (t.rtol < default_tolerance.rtol) t.rtol = default_tolerance.rtol;
        if (t.atol_rel < default_tolerance.atol_rel) t.atol_rel = default_tolerance.atol_rel;
        return t;
    }
    *extra_atol = rt->atol[i];
    if (t.mode == TOL_EXACT) t = (tolerance){TOL_FLOAT, 0, 0, 0};
    return t;
}

static pc_prop_outcome compare_outputs(pc_check_ctx *ctx, const pc_model *before, const pc_model *after,
                                       pc_data **eo, pc_data **ao, tolerance t, const reorder_tol *rt,
                                       const quant_tol *qt, char *msg, size_t msg_size, const char **kind)
{
    const pc_graph *bg = before->graph, *ag = after->graph;
    for (uint32_t i = 0; i < bg->n_outputs; i++) {
        double extra;
        tolerance to = output_tolerance(t, rt, i, &extra);
        if (to.mode != TOL_EXACT && has_special(eo[i]) && !(rt && rt->any && rt->atol[i] >= 0)) {
            snprintf(msg, msg_size,
                     "output %u ('%s') holds NaN or inf before %s: a %s comparison cannot judge it", i,
                     bg->outputs[i]->name, ctx->pass, mode_name(to.mode));
            return PC_PROP_SKIP;
        }
    }
    for (uint32_t i = 0; i < bg->n_outputs; i++) {
        double extra;
        tolerance to = output_tolerance(t, rt, i, &extra);
        bool requant = qt && qt->any && i < qt->n && qt->steps[i] > to.quant_steps;
        if (requant) to.quant_steps = qt->steps[i];
        cmp_out r;
        compare_one(after, ag->outputs[i], eo[i], ao[i], to, extra, &r);
        if (!r.kind) continue;
        *kind = r.kind;
        char why[256] = "";
        if (rt && rt->any && rt->atol[i] >= 0)
            snprintf(why, sizeof why, "; reordered accumulation at %s: %s", rt->site,
                     isinf(rt->atol[i]) ? "default float tolerance downstream" : "bounded");
        else if (requant)
            snprintf(why, sizeof why, "; %u steps once requantized downstream", to.quant_steps);
        /* a tolerance only widens float comparisons: other outputs were compared exactly */
        bool exact = to.mode == TOL_EXACT || (eo[i]->kind == PC_TYPE_TENSOR && !is_float(eo[i]->dtype) &&
                                              !(to.mode == TOL_QUANT && is_small_int(eo[i]->dtype)));
        snprintf(msg, msg_size, "%s: output %u ('%s') differs (%s expected%s): %s", ctx->pass, i,
                 bg->outputs[i]->name, exact ? "bit-exact" : mode_name(to.mode), why, r.what);
        return PC_PROP_FAIL;
    }
    return PC_PROP_PASS;
}

/* Quant mode, when the bounds failed: the rewritten rounding sites pinned to their rewritten results (when
 * within the pass's steps of the QDQ form's), the graph before run again, and the plain rule applied to that.
 * Two QLinearConvs in a row: a tie the first rounds the other way moves the second's input by a step, which
 * its weights multiply (fuzz_pipeline: 54 before, 50 after). PASS when the pins explain every difference. */
static pc_prop_outcome judge_pinned(pc_check_ctx *ctx, const pc_model *before, const pc_model *after,
                                    pc_data **ao, tolerance t, const quant_tol *qt, char *msg,
                                    size_t msg_size, const char **kind)
{
    const char **names = NULL;
    uint32_t n = 0, pinned = 0;
    pc_error err;
    pc_prop_outcome o = PC_PROP_FAIL;
    if (rounding_sites(before, after, &names, &n, &err) != PC_OK || !n) {
        free(names);
        return o;
    }
    pc_data **values = calloc(n, sizeof *values), **eo = NULL;
    pc_pin *pins = calloc(n, sizeof *pins);
    if (values && pins && pc_check_ref_capture(ctx, after, names, n, values, &err) == PC_OK) {
        for (uint32_t i = 0; i < n; i++)
            pins[i] = (pc_pin){names[i], values[i]};
        if (pc_check_ref_pinned(ctx, before, pins, n, t.quant_steps, &eo, &pinned, &err) == PC_OK && pinned) {
            char why[1024];
            const char *k2 = NULL;
            o = compare_outputs(ctx, before, after, eo, ao, t, NULL, NULL, why, sizeof why, &k2);
            if (o == PC_PROP_FAIL && qt && qt->any)
                o = compare_outputs(ctx, before, after, eo, ao, t, NULL, qt, why, sizeof why, &k2);
            if (o == PC_PROP_PASS) {
                *kind = NULL;
                msg[0] = '\0';
            } else {
                o = PC_PROP_FAIL; /* the first verdict's message stands */
            }
            (void)msg_size;
        }
    }
    if (eo) pc_ref_free_outputs(before, eo);
    for (uint32_t i = 0; values && i < n; i++)
        pc_data_unref(values[i]);
    free(values);
    free(pins);
    free(names);
    return o;
}

static pc_prop_outcome compare_models(pc_check_ctx *ctx, const pc_model *before, const pc_model *after,
                                      tolerance t, char *msg, size_t msg_size, const char **kind)
{
    pc_data **eo = NULL, **ao = NULL;
    pc_error err;
    const char *stage = ctx->is_final ? "original" : "graph before the pass";
    pc_status st = pc_check_ref_outputs(ctx, before, &eo, &err);
    if (st == PC_ERR_UNSUPPORTED) {
        snprintf(msg, msg_size, "the reference cannot run the %s: %s", stage, err.message);
        return PC_PROP_SKIP;
    }
    if (st != PC_OK) {
        /* a graph that ran after the previous pass always runs again; only the generated graph can land here
         */
        snprintf(msg, msg_size, "the reference failed on the %s (%s): %s", stage, pc_status_name(st),
                 err.message);
        return PC_PROP_ERROR;
    }
    st = pc_check_ref_outputs(ctx, after, &ao, &err);
    if (st == PC_ERR_UNSUPPORTED) {
        snprintf(msg, msg_size, "the reference cannot run the graph after %s: %s", ctx->pass, err.message);
        return PC_PROP_SKIP;
    }
    if (st != PC_OK) {
        *kind = "run-failed";
        snprintf(msg, msg_size, "the graph ran before %s but not after it: %s: %s", ctx->pass,
                 pc_status_name(st), err.message);
        return PC_PROP_FAIL;
    }
    const pc_graph *bg = before->graph, *ag = after->graph;
    if (bg->n_outputs != ag->n_outputs) {
        *kind = "shape";
        snprintf(msg, msg_size, "%s: %u graph outputs before, %u after", ctx->pass, bg->n_outputs,
                 ag->n_outputs);
        return PC_PROP_FAIL;
    }
    pc_prop_outcome o = compare_outputs(ctx, before, after, eo, ao, t, NULL, NULL, msg, msg_size, kind);
    if (o != PC_PROP_FAIL) return o;
    /* likewise requantizations downstream of a QDQ rewrite (quant_tolerances) */
    if (t.mode == TOL_QUANT) {
        quant_tol qt;
        if ((st = quant_tolerances(before, after, t.quant_steps, &qt, &err)) != PC_OK) {
            snprintf(msg, msg_size, "numerics: finding requantizations after %s: %s", ctx->pass, err.message);
            return PC_PROP_ERROR;
        }
        if (qt.any) o = compare_outputs(ctx, before, after, eo, ao, t, NULL, &qt, msg, msg_size, kind);
        if (o == PC_PROP_FAIL) o = judge_pinned(ctx, before, after, ao, t, &qt, msg, msg_size, kind);
        free(qt.steps);
        if (o == PC_PROP_PASS) {
            *kind = NULL; /* the strict comparison's failure no longer stands */
            msg[0] = '\0';
        }
        if (o != PC_PROP_FAIL) return o;
    }
    /* Only a failing comparison pays for finding reordered accumulations (a match and maybe a probe run):
     * they can only loosen the tolerance of the outputs they reach. */
    reorder_tol rt;
    if ((st = reorder_tolerances(ctx, before, after, &rt, &err)) != PC_OK) {
        snprintf(msg, msg_size, "numerics: finding reordered accumulations after %s: %s", ctx->pass,
                 err.message);
        return PC_PROP_ERROR;
    }
    if (rt.any) {
        o = compare_outputs(ctx, before, after, eo, ao, t, &rt, NULL, msg, msg_size, kind);
        if (o == PC_PROP_PASS) {
            *kind = NULL;
            msg[0] = '\0';
        }
    }
    reorder_tol_free(&rt);
    return o;
}

/* The pass's tolerance; ep_rewrites for an EP with the blocked layout: the float rule (docs/passes.md,
 * blocked_compile). */
static tolerance tolerance_for(const pc_check_ctx *ctx)
{
    if (strcmp(ctx->pass, "ep_rewrites") == 0 && ctx->provider)
        for (uint32_t i = 0; i < ctx->n_eps; i++)
            if (ctx->eps[i] && strcmp(ctx->eps[i]->name, ctx->provider) == 0 &&
                ctx->eps[i]->layout == PC_LAYOUT_BLOCKED)
                return blocked_ep_tolerance;
    return tolerance_of(ctx->pass);
}

static pc_prop_outcome numerics_per_pass(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    tolerance t = tolerance_for(ctx);
    if (!ctx->bytes_changed) return PC_PROP_PASS; /* the same graph computes the same outputs */
    along_add(ctx, t);
    return compare_models(ctx, ctx->before, ctx->after, t, msg, msg_size, kind);
}

static pc_prop_outcome numerics_final(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    /* The runner calls per_pass after every pass that changed the graph: no record means no pass changed it
     * (the original and the result then differ only by inferred shapes), so the comparison is bit-exact. A
     * record left by a case that stopped early can only make this looser, never stricter. */
    tolerance t = {TOL_EXACT, 0, 0, 0};
    if (along.kase == ctx->kase && along.original == ctx->original) t = along.sum;
    along.kase = NULL;
    along.original = NULL;
    return compare_models(ctx, ctx->original, ctx->after, t, msg, msg_size, kind);
}

const pc_property pc_prop_numerics = {
    "numerics",
    "reference outputs before vs after every pass: bit-exact for data movement and integers, one "
    "quantization "
    "step for QDQ rewrites, a per-pass float tolerance otherwise; original vs optimized end to end",
    numerics_per_pass,
    numerics_final,
};
