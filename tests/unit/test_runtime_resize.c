/* The runtime's resize kernels (core/runtime/kernels/resize.c) against the reference executor: one-node
 * Resize and Upsample models on random shapes of rank 3 to 5, scaled up and down by 'scales' or 'sizes', in
 * every mode (nearest, linear, cubic) x coordinate_transformation_mode (x nearest_mode for nearest, x
 * exclude_outside for linear and cubic, with several cubic_coeff_a), tf_crop_and_resize with a random roi
 * (float, double, float16) and extrapolation_value, channels-first and channels-last
 * (com.ms.internal.nhwc), the Resize-10 and Upsample forms, float32 (a third of the cases with infinities and
 * NaN in X) and, in nearest mode, uint8 and int8. Also larger images, empty inputs and outputs, and long and
 * short innermost axes (the kernel runs short kept ones merged with the axis before). The output's dims come
 * from core's shape inference on the model (scales and sizes are initializers); the kernel row is found in
 * the resize table itself, prepared (for some cases without the values of roi, scales and sizes, as for
 * computed inputs) and run into garbage. Floats agree within 1e-4 (1 + |ref|) (NaN where the reference has
 * NaN), integers exactly. Also: what prepare refuses, bad values and a wrong output shape caught in prepare
 * or at run time, the table's opset ranges, and planted faults (a kernel run with another coordinate mode or
 * nearest rounding) that must be caught. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/runtime/rt_internal.h"
#include "reference/reference.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t draw(uint32_t bound)
{
    return (uint32_t)(pc_splitmix64(&rng_state) % bound);
}

enum { MAX_R = 5, MAX_IN = 4 };

typedef enum form {
    FORM_V11,      /* Resize 11+: X, roi, scales, sizes */
    FORM_V10,      /* Resize-10: X, scales */
    FORM_UPSAMPLE, /* Upsample: scales as an attribute before 9, input 1 from 9 */
} form;

typedef struct rcase {
    form form;
    int64_t opset; /* ai.onnx's import */
    bool nhwc;
    int64_t nhwc_opset; /* the channels-last domain's import */
    pc_dtype dt;
    int32_t rank;
    int64_t dims[MAX_R]; /* X in NCHW order */
    bool use_sizes;
    bool empty_scales; /* with sizes: an empty 'scales' input rather than none */
    float scales[MAX_R];
    int64_t sizes[MAX_R];
    bool with_roi;
    float roi[2 * MAX_R];
    pc_dtype roi_dt;                    /* float (UNDEFINED), double or float16 */
    const char *mode, *coord, *nearest; /* NULL: attribute not set */
    int exclude_outside;                /* -1: not set */
    float cubic_a, extrap;              /* NAN: not set */
    bool specials;                      /* infinities and NaN among the floats of X */
    bool late_values;                   /* prepare sees no data for roi, scales, sizes */
} rcase;

/* a planted fault: the kernel's node gets this attribute changed after the reference ran */
typedef struct fault {
    const char *attr, *value;
} fault;

/* what the cases covered, checked at the end so that a refactor cannot quietly drop a kind of case */
static int n_compared, n_nhwc, n_sizes, n_int, n_empty, n_late, n_v10, n_upsample, n_crop, n_cubic,
    n_mode_combo[3][7];

static const char *const coords[] = {"half_pixel",        "half_pixel_symmetric", "pytorch_half_pixel",
                                     "align_corners",     "asymmetric",           "tf_half_pixel_for_nn",
                                     "tf_crop_and_resize"};
static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
static const char *const modes[] = {"nearest", "linear", "cubic"};

static int index_of(const char *s, const char *const *names, int n)
{
    for (int i = 0; s && i < n; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

/* NCHW dims to the node's layout */
static void physical_dims(const rcase *c, const int64_t *nchw, int64_t *out)
{
    int32_t r = c->rank;
    if (!c->nhwc) {
        memcpy(out, nchw, (size_t)r * sizeof *out);
        return;
    }
    out[0] = nchw[0];
    for (int32_t i = 2; i < r; i++)
        out[i - 1] = nchw[i];
    out[r - 1] = nchw[1];
}

static void describe(const rcase *c, char *buf, size_t size)
{
    static const char *const forms[] = {"Resize", "Resize", "Upsample"};
    size_t o = (size_t)snprintf(buf, size, "%s%s-%lld %s [", forms[c->form], c->nhwc ? "(nhwc)" : "",
                                (long long)(c->nhwc ? c->nhwc_opset : c->opset), pc_dtype_name(c->dt));
    for (int32_t d = 0; d < c->rank && o < size; d++)
        o += (size_t)snprintf(buf + o, size - o, "%s%lld", d ? "," : "", (long long)c->dims[d]);
    if (o < size) o += (size_t)snprintf(buf + o, size - o, "] %s", c->use_sizes ? "sizes" : "scales");
    for (int32_t d = 0; d < c->rank && o < size; d++)
        o += c->use_sizes ? (size_t)snprintf(buf + o, size - o, " %lld", (long long)c->sizes[d])
                          : (size_t)snprintf(buf + o, size - o, " %g", (double)c->scales[d]);
    if (o < size)
        o += (size_t)snprintf(buf + o, size - o, " mode=%s coord=%s nearest=%s", c->mode ? c->mode : "-",
                              c->coord ? c->coord : "-", c->nearest ? c->nearest : "-");
    if (o < size && c->exclude_outside >= 0)
        o += (size_t)snprintf(buf + o, size - o, " exclude_outside=%d", c->exclude_outside);
    if (o < size && !isnan(c->cubic_a)) o += (size_t)snprintf(buf + o, size - o, " a=%g", (double)c->cubic_a);
    if (o < size && !isnan(c->extrap))
        o += (size_t)snprintf(buf + o, size - o, " extrapolation=%g", (double)c->extrap);
    if (o < size && c->with_roi) {
        o += (size_t)snprintf(buf + o, size - o, " roi");
        for (int32_t d = 0; d < 2 * c->rank && o < size; d++)
            o += (size_t)snprintf(buf + o, size - o, " %g", (double)c->roi[d]);
    }
    if (o < size && c->late_values) snprintf(buf + o, size - o, " (values at run)");
}

/* The one-node model of the case: X is the graph input "x", roi/scales/sizes are initializers. */
static pc_model *build(const rcase *c, pc_node **node)
{
    pc_error err;
    pc_model *m = pt_model(c->opset);
    if (c->nhwc && pc_model_set_opset(m, PC_NHWC_DOMAIN, c->nhwc_opset, &err) != PC_OK) pt_die("opset", &err);
    int64_t phys[MAX_R], r = c->rank;
    physical_dims(c, c->dims, phys);
    pt_input(m, "x", c->dt, c->rank, phys);
    const char *op = c->form == FORM_UPSAMPLE ? "Upsample" : "Resize";
    const char *names = "x";
    if (c->form == FORM_UPSAMPLE && c->opset < 9) {
        names = "x";
    } else if (c->form != FORM_V11) {
        pt_const_f(m, "scales", 1, &r, c->scales);
        names = "x,scales";
    } else {
        if (c->with_roi) {
            double roi_d[2 * MAX_R];
            uint16_t roi_h[2 * MAX_R];
            for (int64_t i = 0; i < 2 * r; i++) {
                roi_d[i] = c->roi[i];
                roi_h[i] = pc_half_from_double(c->roi[i]);
            }
            const void *data = c->roi_dt == PC_DTYPE_DOUBLE    ? (const void *)roi_d
                               : c->roi_dt == PC_DTYPE_FLOAT16 ? (const void *)roi_h
                                                               : (const void *)c->roi;
            pt_const(m, "roi", c->roi_dt ? c->roi_dt : PC_DTYPE_FLOAT, 1, (int64_t[]){2 * r}, data);
        }
        if (c->use_sizes) {
            pt_const_i64(m, "sizes", (size_t)r, c->sizes);
            if (c->empty_scales) pt_const_f(m, "scales", 1, (int64_t[]){0}, NULL);
            names = c->with_roi ? (c->empty_scales ? "x,roi,scales,sizes" : "x,roi,,sizes")
                                : (c->empty_scales ? "x,,scales,sizes" : "x,,,sizes");
        } else {
            pt_const_f(m, "scales", 1, &r, c->scales);
            names = c->with_roi ? "x,roi,scales" : "x,,scales";
        }
    }
    *node = pt_node(m, op, c->nhwc ? PC_NHWC_DOMAIN : "", names, "y", NULL);
    pc_status st = PC_OK;
    if (c->form == FORM_UPSAMPLE && c->opset < 9)
        st = pc_node_set_attr_floats(*node, "scales", (size_t)r, c->scales, &err);
    if (st == PC_OK && c->mode) st = pc_node_set_attr_string(*node, "mode", c->mode, &err);
    if (st == PC_OK && c->coord)
        st = pc_node_set_attr_string(*node, "coordinate_transformation_mode", c->coord, &err);
    if (st == PC_OK && c->nearest) st = pc_node_set_attr_string(*node, "nearest_mode", c->nearest, &err);
    if (st == PC_OK && c->exclude_outside >= 0)
        st = pc_node_set_attr_int(*node, "exclude_outside", c->exclude_outside, &err);
    if (st == PC_OK && !isnan(c->cubic_a))
        st = pc_node_set_attr_float(*node, "cubic_coeff_a", c->cubic_a, &err);
    if (st == PC_OK && !isnan(c->extrap))
        st = pc_node_set_attr_float(*node, "extrapolation_value", c->extrap, &err);
    if (st != PC_OK) pt_die("attribute", &err);
    pt_output(m, "y");
    return m;
}

static void fill_data(pc_data *d, bool specials)
{
    static const float special[] = {INFINITY, -INFINITY, NAN};
    for (uint64_t i = 0; i < d->n_elements; i++) {
        switch (d->dtype) {
        case PC_DTYPE_FLOAT: {
            float v = (float)((int)draw(25) - 12) / 4.0f + (float)draw(1000) / 997.0f;
            if (specials && draw(20) == 0) v = special[draw(3)];
            ((float *)d->data)[i] = v;
            break;
        }
        case PC_DTYPE_UINT8:
        case PC_DTYPE_INT8:
            ((uint8_t *)d->data)[i] = (uint8_t)draw(256);
            break;
        default:
            pt_die("fill: unexpected dtype", NULL);
        }
    }
}

/* The row of the resize table that claims the node (domain, op, the domain's opset, X's type), or NULL. */
static const pc_rt_kernel *resize_row(const pc_node *node, int64_t opset, pc_dtype dt)
{
    for (size_t i = 0; i < pc_rt_n_kernels_resize; i++) {
        const pc_rt_kernel *kr = &pc_rt_kernels_resize[i];
        if (pc_name_eq(kr->domain, node->domain) && strcmp(kr->op_type, node->op_type) == 0 &&
            opset >= kr->min_opset && opset <= kr->max_opset && (!kr->types || kr->types & RT_TYPE(dt)))
            return kr;
    }
    return NULL;
}

/* Kernel tensors and context over the node's inputs (initializers copied, X a private copy). */
typedef struct rt_run {
    pc_rt_tensor in[MAX_IN], out;
    const pc_rt_tensor *in_p[MAX_IN];
    pc_rt_tensor *out_p[1];
    void *in_data[MAX_IN];
    pc_rt_kernel_ctx k;
    pc_error err;
} rt_run;

static void rt_setup(rt_run *r, const pc_node *node, const pc_data *x, pc_dtype out_dt, int32_t out_rank,
                     const int64_t *out_dims)
{
    memset(r, 0, sizeof *r);
    if (node->n_inputs > MAX_IN) pt_die("too many inputs", NULL);
    for (uint32_t i = 0; i < node->n_inputs; i++) {
        const pc_value *v = node->inputs[i];
        if (!v) continue;
        pc_rt_tensor *t = &r->in[i];
        const void *src;
        size_t bytes;
        if (i == 0) {
            t->dtype = x->dtype;
            t->rank = x->rank;
            memcpy(t->dims, x->dims, (size_t)x->rank * sizeof *x->dims);
            t->n = x->n_elements;
            src = x->data;
            bytes = x->n_bytes;
        } else {
            const pc_tensor *init = v->initializer;
            if (!init) pt_die("input is not an initializer", NULL);
            t->dtype = init->dtype;
            t->rank = init->rank;
            memcpy(t->dims, init->dims, (size_t)init->rank * sizeof *init->dims);
            t->n = init->n_elements;
            src = init->data;
            bytes = init->n_bytes;
        }
        r->in_data[i] = malloc(bytes + 1);
        if (!r->in_data[i]) pt_die("malloc", NULL);
        if (bytes) memcpy(r->in_data[i], src, bytes);
        r->in_p[i] = t;
    }
    r->out.dtype = out_dt;
    r->out.rank = out_rank;
    r->out.n = 1;
    for (int32_t d = 0; d < out_rank; d++) {
        r->out.dims[d] = out_dims[d];
        r->out.n *= (uint64_t)out_dims[d];
    }
    size_t bytes = (size_t)r->out.n * (pc_dtype_bits(out_dt) / 8);
    r->out.data = malloc(bytes + 1);
    if (!r->out.data) pt_die("malloc", NULL);
    memset(r->out.data, 0xa5, bytes + 1); /* garbage: an element left unwritten shows */
    r->out_p[0] = &r->out;
    r->k = (pc_rt_kernel_ctx){.node = node,
                              .opset = pc_model_opset(node->graph->model, node->domain),
                              .n_in = node->n_inputs,
                              .n_out = 1,
                              .in = r->in_p,
                              .out = r->out_p,
                              .threads = 1,
                              .err = &r->err};
}

static void rt_free(rt_run *r)
{
    for (uint32_t i = 0; i < MAX_IN; i++)
        free(r->in_data[i]);
    free(r->out.data);
}

/* prepare (X's data never shown, the other inputs' unless late), then run */
static pc_status rt_exec(rt_run *r, const pc_rt_kernel *kern, bool late)
{
    for (uint32_t i = 0; i < MAX_IN; i++)
        r->in[i].data = i > 0 && !late ? r->in_data[i] : NULL;
    size_t scratch = 0;
    pc_status st = kern->prepare ? kern->prepare(&r->k, &scratch) : PC_OK;
    if (st != PC_OK) return st;
    void *mem = scratch ? aligned_alloc(64, (scratch + 63) / 64 * 64) : NULL;
    if (scratch && !mem) pt_die("aligned_alloc", NULL);
    r->k.scratch = mem;
    r->k.scratch_bytes = scratch;
    for (uint32_t i = 0; i < MAX_IN; i++)
        r->in[i].data = r->in_data[i];
    st = kern->run(&r->k);
    free(mem);
    return st;
}

static bool close_f(float a, float b)
{
    if (isnan(b)) return isnan(a);
    if (isnan(a)) return false;
    if (a == b) return true;
    if (isinf(a) || isinf(b)) return false;
    return fabs((double)a - (double)b) <= 1e-4 * (1 + fabs((double)b));
}

/* Index of the first element of the kernel's output that differs from the reference's, or -1. */
static int64_t first_difference(const pc_rt_tensor *got, const pc_data *want)
{
    for (uint64_t i = 0; i < want->n_elements; i++) {
        bool same;
        if (want->dtype == PC_DTYPE_FLOAT)
            same = close_f(((const float *)got->data)[i], ((const float *)want->data)[i]);
        else
            same = ((const uint8_t *)got->data)[i] == ((const uint8_t *)want->data)[i];
        if (!same) return (int64_t)i;
    }
    return -1;
}

static double element(const void *data, pc_dtype dt, int64_t i)
{
    if (dt == PC_DTYPE_FLOAT) return ((const float *)data)[i];
    if (dt == PC_DTYPE_INT8) return ((const int8_t *)data)[i];
    return ((const uint8_t *)data)[i];
}

/* Runs the case on the reference and the kernel and compares. With a fault the kernel's node is changed after
 * the reference ran, and nothing is checked. Returns 1 when equal, 0 when they differ, -1 when a run failed.
 */
static int run_case(const rcase *c, const fault *f)
{
    char what[1024];
    describe(c, what, sizeof what);
    pc_node *node = NULL;
    pc_model *m = build(c, &node);
    pc_error err;
    int result = -1;

    /* the output's dims from core's shape inference */
    pc_status st = pc_graph_infer_shapes(m->graph, &err);
    CHECK_MSG(st == PC_OK, "%s: shape inference: %s", what, err.message);
    const pc_value *yv = pc_graph_find_value(m->graph, "y");
    bool known = st == PC_OK && yv && yv->type.kind == PC_TYPE_TENSOR && yv->type.shape.rank == c->rank;
    int64_t ydims[PC_MAX_RANK] = {0};
    for (int32_t d = 0; known && d < c->rank; d++) {
        known = yv->type.shape.dims[d].kind == PC_DIM_KNOWN;
        ydims[d] = yv->type.shape.dims[d].size;
    }
    /* Upsample has no shape rule: its dims are floor(in * scale), as the spec says */
    if (c->form == FORM_UPSAMPLE) {
        int64_t nchw[MAX_R] = {0};
        for (int32_t d = 0; d < c->rank; d++)
            nchw[d] = (int64_t)floor((double)c->scales[d] * (double)c->dims[d]);
        physical_dims(c, nchw, ydims);
        known = true;
    }
    CHECK_MSG(known, "%s: shape inference left the output's dims unknown", what);

    int64_t phys[MAX_R];
    physical_dims(c, c->dims, phys);
    pc_data *x = pc_data_new_tensor(c->dt, c->rank, phys, &err);
    if (!x) pt_die("tensor", &err);
    fill_data(x, c->specials);
    pc_data **outs = NULL;
    const pc_rt_kernel *kern = resize_row(node, pc_model_opset(m, node->domain), c->dt);
    pc_status rst = pc_ref_run(m, 1, &x, &outs, &err);
    CHECK_MSG(rst == PC_OK, "%s: the reference refused: %s", what, err.message);
    CHECK_MSG(kern != NULL, "%s: no kernel row", what);
    if (rst == PC_OK && kern && known) {
        const pc_data *want = outs[0];
        bool same_dims = want->rank == c->rank;
        for (int32_t d = 0; same_dims && d < c->rank; d++)
            same_dims = want->dims[d] == ydims[d];
        CHECK_MSG(same_dims, "%s: the reference's output dims are not shape inference's", what);
        rt_run r;
        rt_setup(&r, node, x, want->dtype, c->rank, ydims);
        if (f && pc_node_set_attr_string(node, f->attr, f->value, &err) != PC_OK) pt_die(f->attr, &err);
        pc_status kst = same_dims ? rt_exec(&r, kern, c->late_values) : PC_ERR_SHAPE;
        int64_t i = kst == PC_OK ? first_difference(&r.out, want) : -1;
        if (!f) {
            CHECK_MSG(kst == PC_OK, "%s: kernel failed: %s", what, r.err.message);
            CHECK_MSG(i < 0, "%s: element %lld is %.9g, the reference says %.9g", what, (long long)i,
                      i >= 0 ? element(r.out.data, c->dt, i) : 0.0,
                      i >= 0 ? element(want->data, c->dt, i) : 0.0);
        }
        result = kst != PC_OK ? -1 : i < 0;
        if (result == 1 && !f) {
            int mi = index_of(c->mode ? c->mode : "nearest", modes, 3);
            int ci = c->form == FORM_V11 ? index_of(c->coord ? c->coord : "half_pixel", coords, 7) : 4;
            n_compared++;
            n_nhwc += c->nhwc;
            n_sizes += c->use_sizes;
            n_int += c->dt != PC_DTYPE_FLOAT;
            n_empty += want->n_elements == 0;
            n_late += c->late_values;
            n_v10 += c->form == FORM_V10;
            n_upsample += c->form == FORM_UPSAMPLE;
            n_crop += ci == 6;
            n_cubic += mi == 2;
            if (mi >= 0 && ci >= 0) n_mode_combo[mi][ci]++;
        }
        rt_free(&r);
    }
    if (rst == PC_OK && outs) pc_ref_free_outputs(m, outs);
    pc_data_unref(x);
    pc_model_free(m);
    return result;
}

/* ---- random cases */

/* dims 1 to max_dim; now and then a long innermost axis (in the node's layout), which runs unmerged */
static void random_shape(rcase *c, int64_t max_dim)
{
    c->rank = 3 + (int32_t)draw(3);
    for (int32_t d = 0; d < c->rank; d++)
        c->dims[d] = 1 + (int64_t)draw((uint32_t)max_dim);
    if (draw(6) == 0) c->dims[c->nhwc ? 1 : c->rank - 1] = 16 + (int64_t)draw(5);
}

/* Scales or sizes for every axis: N and C mostly kept, the others up or down (an output of 0 sometimes). */
static void random_sizes(rcase *c, bool use_sizes, bool upsample)
{
    static const float down_up[] = {0.5f, 0.6f, 0.75f, 1.0f,  1.25f, 1.5f,
                                    2.0f, 2.5f, 3.0f,  0.34f, 1.7f,  0.8f};
    static const float up[] = {1.0f, 1.5f, 2.0f, 2.5f, 3.0f, 1.25f};
    c->use_sizes = use_sizes;
    for (int32_t d = 0; d < c->rank; d++) {
        bool keep = d < 2 && draw(10) < 7;
        c->scales[d] = keep ? 1.0f : upsample ? up[draw(6)] : down_up[draw(12)];
        if (c->scales[d] * (float)c->dims[d] < 1.0f && draw(4)) c->scales[d] = 1.5f; /* empty rarely */
        c->sizes[d] = keep ? c->dims[d] : (int64_t)draw(9);
        if (c->sizes[d] == 0 && draw(4)) c->sizes[d] = 1; /* size 0 rarely */
    }
}

static void random_roi(rcase *c)
{
    static const float lo[] = {0.0f, 0.0f, -0.25f, 0.1f, 0.3f, 0.5f},
                       hi[] = {1.0f, 1.0f, 0.6f, 0.8f, 1.25f, 0.9f};
    c->with_roi = true;
    for (int32_t d = 0; d < c->rank; d++) {
        c->roi[d] = lo[draw(6)];
        c->roi[c->rank + d] = hi[draw(6)];
    }
}

static rcase base_case(form fm, int64_t opset, pc_dtype dt)
{
    rcase c;
    memset(&c, 0, sizeof c);
    c.form = fm;
    c.opset = opset;
    c.nhwc_opset = opset;
    c.dt = dt;
    c.exclude_outside = -1;
    c.cubic_a = NAN;
    c.extrap = NAN;
    return c;
}

/* Every mode x coordinate mode (x nearest_mode for nearest, x exclude_outside for cubic and linear) with
 * scales and sizes, channels-first and channels-last. */
static void test_v11_combinations(void)
{
    static const int64_t opsets[] = {11, 13, 18, 19, 21};
    static const float cubic_as[] = {NAN, -0.5f, -0.75f, -0.6f};
    static const float extraps[] = {NAN, 0.5f, -2.25f, 300.75f, -1.5f};
    for (int mi = 0; mi < 3; mi++)
        for (int ci = 0; ci < 7; ci++)
            for (int vi = 0; vi < (mi == 0 ? 4 : 2); vi++)
                for (int variant = 0; variant < 8; variant++) {
                    bool use_sizes = variant & 1, nhwc = variant & 2;
                    pc_dtype dt = PC_DTYPE_FLOAT;
                    if (mi == 0 && variant >= 4) dt = draw(2) ? PC_DTYPE_UINT8 : PC_DTYPE_INT8;
                    int64_t opset = ci == 1 ? (draw(2) ? 19 : 21) : opsets[draw(5)];
                    rcase c = base_case(FORM_V11, opset, dt);
                    c.nhwc = nhwc;
                    random_shape(&c, 5);
                    random_sizes(&c, use_sizes, false);
                    c.empty_scales = use_sizes && draw(2);
                    /* the attribute left at its default now and then */
                    c.mode = mi == 0 && draw(4) == 0 ? NULL : modes[mi];
                    c.coord = ci == 0 && draw(3) == 0 ? NULL : coords[ci];
                    if (mi == 0) c.nearest = vi == 0 && draw(3) == 0 ? NULL : nearests[vi];
                    if (mi > 0) c.exclude_outside = vi == 0 && draw(2) ? -1 : vi;
                    if (mi == 2) c.cubic_a = cubic_as[draw(4)];
                    if (ci == 6) {
                        static const pc_dtype roi_types[] = {PC_DTYPE_UNDEFINED, PC_DTYPE_DOUBLE,
                                                             PC_DTYPE_FLOAT16};
                        random_roi(&c);
                        c.roi_dt = roi_types[draw(3)];
                        c.extrap = extraps[draw(5)];
                    } else if (draw(4) == 0) {
                        random_roi(&c); /* ignored outside tf_crop_and_resize */
                    }
                    c.specials = dt == PC_DTYPE_FLOAT && draw(3) == 0;
                    c.late_values = variant & 4 ? draw(2) : !(variant & 1);
                    run_case(&c, NULL);
                }
}

/* Resize-10 (nearest and linear on scales, asymmetric, legacy rounding) and Upsample 7, 8 (attribute) and 9
 * (input), channels-first; Resize-10 channels-last too. */
static void test_legacy_forms(void)
{
    for (int rep = 0; rep < 60; rep++) {
        int mi = rep % 2;
        pc_dtype dt = mi == 0 && rep % 6 == 2   ? PC_DTYPE_UINT8
                      : mi == 0 && rep % 6 == 4 ? PC_DTYPE_INT8
                                                : PC_DTYPE_FLOAT;
        rcase c = base_case(FORM_V10, 10, dt);
        c.nhwc = rep % 4 >= 2;
        random_shape(&c, 5);
        random_sizes(&c, false, false);
        c.mode = mi == 0 && rep % 8 == 0 ? NULL : modes[mi];
        c.late_values = rep % 3 == 0;
        run_case(&c, NULL);

        static const int64_t up_opsets[] = {7, 8, 9};
        rcase u = base_case(FORM_UPSAMPLE, up_opsets[rep % 3], dt);
        random_shape(&u, 4);
        random_sizes(&u, false, true);
        u.mode = modes[mi];
        u.late_values = rep % 5 == 0;
        run_case(&u, NULL);
    }
    /* a channels-last node whose domain import (10) is not ai.onnx's (13): Resize-10's form and meaning, as
     * core's shape inference and the reference take it */
    for (int rep = 0; rep < 6; rep++) {
        rcase c = base_case(FORM_V10, 13, PC_DTYPE_FLOAT);
        c.nhwc = true;
        c.nhwc_opset = 10;
        random_shape(&c, 5);
        random_sizes(&c, false, false);
        c.mode = modes[rep % 2];
        run_case(&c, NULL);
    }
}

/* Larger images: contiguous rows, both identity and resized innermost axes, up and down. */
static void test_larger(void)
{
    static const struct {
        int32_t rank;
        int64_t dims[MAX_R];
        float scales[MAX_R];
    } shapes[] = {
        {4, {2, 3, 17, 13}, {1, 1, 2, 1.5f}},    {4, {1, 16, 9, 7}, {1, 1, 2.5f, 1}},
        {4, {1, 8, 32, 32}, {1, 1, 0.5f, 0.5f}}, {5, {1, 4, 5, 6, 7}, {1, 1, 1.5f, 0.8f, 2}},
        {3, {2, 5, 40}, {1, 1, 0.3f}},           {4, {1, 3, 5, 20}, {1, 1, 2, 1}},
        {4, {1, 20, 5, 6}, {1, 1, 1.5f, 2}},     {4, {1, 2, 3, 64}, {1, 1, 3, 0.25f}},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int mi = 0; mi < 3; mi++)
            for (int v = 0; v < 4; v++) {
                rcase c = base_case(FORM_V11, 13, mi == 0 && v == 3 ? PC_DTYPE_UINT8 : PC_DTYPE_FLOAT);
                c.rank = shapes[s].rank;
                memcpy(c.dims, shapes[s].dims, sizeof c.dims);
                memcpy(c.scales, shapes[s].scales, sizeof c.scales);
                c.nhwc = v & 1;
                c.mode = modes[mi];
                c.coord = v & 2 ? "align_corners" : "half_pixel";
                c.late_values = v == 2;
                run_case(&c, NULL);
            }
}

/* An empty input axis: scales leave it empty (the output is empty too, the kernel writes nothing). */
static void test_empty_input(void)
{
    for (int v = 0; v < 6; v++) {
        rcase c = base_case(v < 2 ? FORM_V10 : FORM_V11, v < 2 ? 10 : 13, PC_DTYPE_FLOAT);
        c.rank = 4;
        int64_t dims[4] = {1, 2, 3, 4};
        memcpy(c.dims, dims, sizeof dims);
        c.dims[v % 4] = 0;
        for (int d = 0; d < 4; d++) {
            c.scales[d] = d < 2 ? 1.0f : 2.0f;
            c.sizes[d] = d < 2 ? c.dims[d] : 5;
        }
        c.use_sizes = v == 4 && c.dims[2] != 0;
        c.nhwc = v % 2;
        c.mode = v % 3 ? "linear" : "nearest";
        run_case(&c, NULL);
    }
}

/* ---- refusals, run-time shape check, opset ranges, planted faults */

/* prepare of the resize row for the node of m (X [1,2,3,4] float or dt, output the same), every constant
 * input's data shown; the status, the message in msg */
static pc_status prepare_node(pc_model *m, pc_node *node, pc_dtype dt, char *msg, size_t msg_size)
{
    pc_error err;
    int64_t dims[4] = {1, 2, 3, 4};
    pc_data *x = pc_data_new_tensor(dt, 4, dims, &err);
    if (!x) pt_die("tensor", &err);
    rt_run r;
    rt_setup(&r, node, x, dt, 4, dims);
    const pc_rt_kernel *kern = resize_row(node, pc_model_opset(m, node->domain), dt);
    pc_status st = PC_ERR_INTERNAL;
    snprintf(msg, msg_size, "no kernel row");
    if (kern) {
        for (uint32_t i = 1; i < MAX_IN; i++)
            r.in[i].data = r.in_data[i];
        size_t scratch = 0;
        st = kern->prepare(&r.k, &scratch);
        snprintf(msg, msg_size, "%s", st == PC_OK ? "" : r.err.message);
    }
    rt_free(&r);
    pc_data_unref(x);
    return st;
}

/* prepare of Resize on X [1,2,3,4] by 'scales' 1 (or 'sizes' of X's dims) with the attributes set */
static pc_status prepare_only(int64_t opset, pc_dtype dt, const char *const *attrs, int n_attrs,
                              bool use_sizes, char *msg, size_t msg_size)
{
    rcase c = base_case(FORM_V11, opset, dt);
    c.rank = 4;
    for (int d = 0; d < 4; d++) {
        c.dims[d] = d + 1;
        c.scales[d] = 1.0f;
        c.sizes[d] = c.dims[d];
    }
    c.use_sizes = use_sizes;
    pc_node *node = NULL;
    pc_model *m = build(&c, &node);
    pc_error err;
    for (int a = 0; a < n_attrs; a++) {
        pc_status st;
        if (strcmp(attrs[2 * a], "axes") == 0)
            st = pc_node_set_attr_ints(node, "axes", 2, (int64_t[]){2, 3}, &err);
        else if (strcmp(attrs[2 * a], "antialias") == 0)
            st = pc_node_set_attr_int(node, "antialias", 1, &err);
        else
            st = pc_node_set_attr_string(node, attrs[2 * a], attrs[2 * a + 1], &err);
        if (st != PC_OK) pt_die(attrs[2 * a], &err);
    }
    pc_status st = prepare_node(m, node, dt, msg, msg_size);
    pc_model_free(m);
    return st;
}

static void test_refusals(void)
{
    char msg[1024];
    static const struct {
        int64_t opset;
        pc_dtype dt;
        const char *attrs[2];
        bool sizes;
        pc_status want;
        const char *says; /* in the message */
    } cases[] = {
        {18, PC_DTYPE_FLOAT, {"antialias", NULL}, false, PC_ERR_UNSUPPORTED, "antialias"},
        {18, PC_DTYPE_FLOAT, {"axes", NULL}, false, PC_ERR_UNSUPPORTED, "axes"},
        {18,
         PC_DTYPE_FLOAT,
         {"keep_aspect_ratio_policy", "not_larger"},
         true,
         PC_ERR_UNSUPPORTED,
         "not_larger"},
        {19, PC_DTYPE_FLOAT, {"keep_aspect_ratio_policy", "not_smaller"}, true, PC_ERR_UNSUPPORTED, "policy"},
        {18, PC_DTYPE_FLOAT, {"keep_aspect_ratio_policy", "not_larger"}, false, PC_OK, ""}, /* with scales */
        {18, PC_DTYPE_FLOAT, {"keep_aspect_ratio_policy", "biggest"}, true, PC_ERR_ATTRIBUTE, "biggest"},
        {13, PC_DTYPE_FLOAT, {"mode", "bicubic"}, false, PC_ERR_ATTRIBUTE, "bicubic"},
        {13,
         PC_DTYPE_FLOAT,
         {"coordinate_transformation_mode", "corners"},
         false,
         PC_ERR_ATTRIBUTE,
         "corners"},
        {18,
         PC_DTYPE_FLOAT,
         {"coordinate_transformation_mode", "half_pixel_symmetric"},
         false,
         PC_ERR_ATTRIBUTE,
         "half_pixel_symmetric"},
        {19, PC_DTYPE_FLOAT, {"coordinate_transformation_mode", "half_pixel_symmetric"}, false, PC_OK, ""},
        {13, PC_DTYPE_FLOAT, {"nearest_mode", "nearest"}, false, PC_ERR_ATTRIBUTE, "nearest_mode"},
        {13, PC_DTYPE_UINT8, {"mode", "linear"}, false, PC_ERR_UNSUPPORTED, "uint8"},
        {13, PC_DTYPE_INT8, {"mode", "cubic"}, false, PC_ERR_UNSUPPORTED, "int8"},
        {13, PC_DTYPE_UINT8, {"mode", "nearest"}, true, PC_OK, ""},
        /* tf_crop_and_resize without roi */
        {13,
         PC_DTYPE_FLOAT,
         {"coordinate_transformation_mode", "tf_crop_and_resize"},
         false,
         PC_ERR_ARITY,
         "roi"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pc_status st =
            prepare_only(cases[i].opset, cases[i].dt, cases[i].attrs, 1, cases[i].sizes, msg, sizeof msg);
        CHECK_MSG(st == cases[i].want && strstr(msg, cases[i].says),
                  "refusal case %zu (%s=%s at opset %lld): %s (%s)", i, cases[i].attrs[0],
                  cases[i].attrs[1] ? cases[i].attrs[1] : "1", (long long)cases[i].opset, pc_status_name(st),
                  msg);
    }

    /* nodes built by hand: cubic at opset 10 is not a mode; scales and sizes both given; scales as doubles;
     * an int32 X */
    static const struct {
        int64_t opset;
        const char *inputs, *mode;
        pc_dtype dt;
        pc_status want;
        const char *says;
    } nodes[] = {
        {10, "x,scales", "cubic", PC_DTYPE_FLOAT, PC_ERR_ATTRIBUTE, "cubic"},
        {13, "x,,scales,sizes", "nearest", PC_DTYPE_FLOAT, PC_ERR_ARITY, "exactly one"},
        {13, "x,,scales_d", "linear", PC_DTYPE_FLOAT, PC_ERR_UNSUPPORTED, "double"},
        {13, "x,,scales", "nearest", PC_DTYPE_INT32, PC_ERR_UNSUPPORTED, "int32"},
        {13, "x,,scales3", "nearest", PC_DTYPE_FLOAT, PC_ERR_SHAPE, "3 entries"},
        {13, "x,,scales", "nearest", PC_DTYPE_FLOAT, PC_OK, ""},
    };
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
        pc_error err;
        pc_model *m = pt_model(nodes[i].opset);
        int64_t four = 4;
        pt_input(m, "x", nodes[i].dt, 4, (int64_t[]){1, 2, 3, 4});
        pt_const_f(m, "scales", 1, &four, (float[]){1, 1, 1, 1});
        pt_const(m, "scales_d", PC_DTYPE_DOUBLE, 1, &four, (double[]){1, 1, 1, 1});
        pt_const_i64(m, "sizes", 4, (int64_t[]){1, 2, 3, 4});
        pt_const_f(m, "scales3", 1, (int64_t[]){3}, (float[]){1, 1, 1});
        pc_node *node = pt_node(m, "Resize", "", nodes[i].inputs, "y", NULL);
        if (pc_node_set_attr_string(node, "mode", nodes[i].mode, &err) != PC_OK) pt_die("mode", &err);
        /* the int32 row is not in the table: prepare through the float row */
        pc_status st;
        if (nodes[i].dt == PC_DTYPE_INT32) {
            int64_t dims[4] = {1, 2, 3, 4};
            pc_data *x = pc_data_new_tensor(nodes[i].dt, 4, dims, &err);
            rt_run r;
            rt_setup(&r, node, x, nodes[i].dt, 4, dims);
            size_t scratch = 0;
            const pc_rt_kernel *kern = resize_row(node, nodes[i].opset, PC_DTYPE_FLOAT);
            CHECK(kern != NULL && resize_row(node, nodes[i].opset, PC_DTYPE_INT32) == NULL);
            st = kern ? kern->prepare(&r.k, &scratch) : PC_ERR_INTERNAL;
            snprintf(msg, sizeof msg, "%s", st == PC_OK ? "" : r.err.message);
            rt_free(&r);
            pc_data_unref(x);
        } else {
            st = prepare_node(m, node, nodes[i].dt, msg, sizeof msg);
        }
        CHECK_MSG(st == nodes[i].want && strstr(msg, nodes[i].says),
                  "Resize-%lld (%s) mode %s on %s: %s (%s)", (long long)nodes[i].opset, nodes[i].inputs,
                  nodes[i].mode, pc_dtype_name(nodes[i].dt), pc_status_name(st), msg);
        pc_model_free(m);
    }

    /* cubic over rank 9: more outer tap combinations than the kernel holds */
    {
        int64_t ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
        float scales[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
        pc_error err;
        pc_model *m = pt_model(13);
        pt_input(m, "x", PC_DTYPE_FLOAT, 9, ones);
        pt_const_f(m, "scales", 1, (int64_t[]){9}, scales);
        pc_node *node = pt_node(m, "Resize", "", "x,,scales", "y", NULL);
        if (pc_node_set_attr_string(node, "mode", "cubic", &err) != PC_OK) pt_die("mode", &err);
        pc_data *x = pc_data_new_tensor(PC_DTYPE_FLOAT, 9, ones, &err);
        rt_run r;
        rt_setup(&r, node, x, PC_DTYPE_FLOAT, 9, ones);
        const pc_rt_kernel *kern = resize_row(node, 13, PC_DTYPE_FLOAT);
        size_t scratch = 0;
        pc_status st = kern ? kern->prepare(&r.k, &scratch) : PC_ERR_INTERNAL;
        CHECK_MSG(st == PC_ERR_UNSUPPORTED && strstr(r.err.message, "combinations"), "cubic rank 9: %s (%s)",
                  pc_status_name(st), r.err.message);
        rt_free(&r);
        pc_data_unref(x);
        pc_model_free(m);
    }

    /* an output shape the scales do not give: refused by prepare when the scales are constant, by run when
     * they come later */
    for (int late = 0; late < 2; late++) {
        pc_error err;
        rcase c = base_case(FORM_V11, 13, PC_DTYPE_FLOAT);
        c.rank = 4;
        int64_t dims[4] = {1, 2, 3, 4}, wrong[4] = {1, 2, 6, 9};
        memcpy(c.dims, dims, sizeof dims);
        float sc[4] = {1, 1, 2, 2};
        memcpy(c.scales, sc, sizeof sc);
        c.mode = "linear";
        pc_node *node;
        pc_model *m = build(&c, &node);
        pc_data *x = pc_data_new_tensor(PC_DTYPE_FLOAT, 4, dims, &err);
        rt_run r;
        rt_setup(&r, node, x, PC_DTYPE_FLOAT, 4, wrong);
        const pc_rt_kernel *kern = resize_row(node, 13, PC_DTYPE_FLOAT);
        pc_status st = kern ? rt_exec(&r, kern, late) : PC_ERR_INTERNAL;
        CHECK_MSG(st == PC_ERR_SHAPE && strstr(r.err.message, "output dim 3 is 9"),
                  "a wrong output shape (values %s): %s (%s)", late ? "late" : "constant", pc_status_name(st),
                  r.err.message);
        rt_free(&r);
        pc_data_unref(x);
        pc_model_free(m);
    }

    /* values prepare may not see: an Upsample scale below 1, a negative size, a non-positive scale */
    static const struct {
        form form;
        int64_t opset;
        float scale;
        int64_t size;
        pc_status want;
        const char *says;
    } values[] = {
        {FORM_UPSAMPLE, 9, 0.5f, 0, PC_ERR_VALUE, "below 1"},
        {FORM_V11, 13, 0, -2, PC_ERR_SHAPE, "negative"},
        {FORM_V11, 13, -1.0f, 0, PC_ERR_VALUE, "not positive"},
        {FORM_V10, 10, NAN, 0, PC_ERR_VALUE, "not positive"},
    };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        for (int late = 0; late < 2; late++) {
            pc_error err;
            rcase c = base_case(values[i].form, values[i].opset, PC_DTYPE_FLOAT);
            c.rank = 3;
            int64_t dims[3] = {1, 2, 3};
            memcpy(c.dims, dims, sizeof dims);
            for (int d = 0; d < 3; d++) {
                c.scales[d] = d == 2 ? values[i].scale : 1.0f;
                c.sizes[d] = d == 2 ? values[i].size : dims[d];
            }
            c.use_sizes = values[i].size != 0;
            pc_node *node;
            pc_model *m = build(&c, &node);
            pc_data *x = pc_data_new_tensor(PC_DTYPE_FLOAT, 3, dims, &err);
            rt_run r;
            rt_setup(&r, node, x, PC_DTYPE_FLOAT, 3, dims);
            const pc_rt_kernel *kern = resize_row(node, values[i].opset, PC_DTYPE_FLOAT);
            pc_status st = kern ? rt_exec(&r, kern, late) : PC_ERR_INTERNAL;
            CHECK_MSG(st == values[i].want && strstr(r.err.message, values[i].says),
                      "value case %zu (%s): %s (%s)", i, late ? "late" : "constant", pc_status_name(st),
                      r.err.message);
            rt_free(&r);
            pc_data_unref(x);
            pc_model_free(m);
        }

    /* the rows' opset ranges and types */
    static const struct {
        const char *domain, *op;
        int64_t opset;
        pc_dtype dt;
        bool claimed;
    } ranges[] = {
        {"", "Resize", 9, PC_DTYPE_FLOAT, false},
        {"", "Resize", 10, PC_DTYPE_FLOAT, true},
        {"", "Resize", 21, PC_DTYPE_UINT8, true},
        {"", "Resize", 22, PC_DTYPE_FLOAT, false},
        {"", "Resize", 13, PC_DTYPE_INT32, false},
        {"", "Resize", 13, PC_DTYPE_INT8, true},
        {"", "Upsample", 6, PC_DTYPE_FLOAT, false},
        {"", "Upsample", 7, PC_DTYPE_FLOAT, true},
        {"", "Upsample", 9, PC_DTYPE_FLOAT, true},
        {"", "Upsample", 10, PC_DTYPE_FLOAT, false},
        {PC_NHWC_DOMAIN, "Resize", 1, PC_DTYPE_FLOAT, true},
        {PC_NHWC_DOMAIN, "Resize", 21, PC_DTYPE_INT8, true},
        {PC_NHWC_DOMAIN, "Resize", 22, PC_DTYPE_FLOAT, false},
    };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        pc_model *m = pt_model(13);
        pc_node *node = pc_graph_new_node(m->graph, ranges[i].op, ranges[i].domain);
        const pc_rt_kernel *kern = node ? resize_row(node, ranges[i].opset, ranges[i].dt) : NULL;
        CHECK_MSG((kern != NULL) == ranges[i].claimed, "%s%s-%lld on %s: %s", ranges[i].domain, ranges[i].op,
                  (long long)ranges[i].opset, pc_dtype_name(ranges[i].dt),
                  ranges[i].claimed ? "not claimed" : "claimed");
        pc_model_free(m);
    }
}

/* The comparison must be able to fail: a kernel run with another coordinate mode, or rounding the other way,
 * differs from the reference. */
static void test_planted_faults(void)
{
    rcase c = base_case(FORM_V11, 13, PC_DTYPE_FLOAT);
    c.rank = 4;
    int64_t dims[4] = {1, 2, 5, 4};
    float sc[4] = {1, 1, 2.5f, 1.5f};
    memcpy(c.dims, dims, sizeof dims);
    memcpy(c.scales, sc, sizeof sc);
    c.mode = "linear";
    c.coord = "half_pixel";
    const fault coord = {"coordinate_transformation_mode", "asymmetric"};
    CHECK_MSG(run_case(&c, NULL) == 1, "the linear case itself must pass");
    CHECK_MSG(run_case(&c, &coord) == 0, "a kernel with the wrong coordinate mode went unnoticed");
    c.nhwc = true;
    CHECK_MSG(run_case(&c, NULL) == 1, "the channels-last linear case itself must pass");
    CHECK_MSG(run_case(&c, &coord) == 0,
              "a channels-last kernel with the wrong coordinate mode went unnoticed");
    c.nhwc = false;
    c.mode = "nearest";
    c.nearest = "floor";
    const fault rounding = {"nearest_mode", "ceil"};
    CHECK_MSG(run_case(&c, NULL) == 1, "the nearest case itself must pass");
    CHECK_MSG(run_case(&c, &rounding) == 0, "a kernel rounding the other way went unnoticed");
}

int main(void)
{
    test_v11_combinations();
    test_legacy_forms();
    test_larger();
    test_empty_input();
    test_refusals();
    test_planted_faults();
    int missing = 0;
    for (int mi = 0; mi < 3; mi++)
        for (int ci = 0; ci < 7; ci++)
            missing += n_mode_combo[mi][ci] == 0;
    CHECK_MSG(
        n_compared > 500 && n_nhwc > 150 && n_sizes > 150 && n_int > 60 && n_empty > 5 && n_late > 150 &&
            n_v10 > 40 && n_upsample > 40 && n_crop > 40 && n_cubic > 80 && missing == 0,
        "%d compared, %d nhwc, %d sizes, %d integer, %d empty, %d late, %d Resize-10, %d Upsample, %d "
        "tf_crop_and_resize, %d cubic, %d mode x coordinate combinations missing",
        n_compared, n_nhwc, n_sizes, n_int, n_empty, n_late, n_v10, n_upsample, n_crop, n_cubic, missing);
    printf(
        "test_runtime_resize: %d cases equal to the reference (%d channels-last, %d by sizes, %d uint8/int8, "
        "%d empty, %d with values at run, %d Resize-10, %d Upsample, %d tf_crop_and_resize, %d cubic)\n",
        n_compared, n_nhwc, n_sizes, n_int, n_empty, n_late, n_v10, n_upsample, n_crop, n_cubic);
    return pc_test_finish("test_runtime_resize");
}
