/* The runtime's reduction kernels (core/runtime/kernels/reduce.c) against the reference executor: every
 * Reduce* op and ArgMax/ArgMin on one-node models, in both axes forms (attribute before ReduceSum-13 and the
 * others' opset 18, input 1 from then on), with fixed shapes that hit each loop (a contiguous reduced tail,
 * reduced leading axes, a reduced middle, scattered axes for the odometer, long rows, more than one block of
 * outputs, size-1 and size-0 axes, rank 0) and random ones (rank 0 to 5, random axes sets with negative
 * axes, shuffled orders and empty lists, keepdims and noop_with_empty_axes absent, 0 or 1). Floats carry NaN
 * and infinities in some cases and values near 1e37 in others (sums that overflow float but not the double
 * accumulator), integers their extremes (sums and products wrap). The output's dims come
 * from core's shape inference on the model; the kernel runs as a session would run it: prepared with input
 * data not set (axes from an initializer set, or left NULL as a computed input), then run into a buffer of
 * garbage. Floats must agree within 1e-5 (1 + |ref|) with NaN where the reference has NaN, integers exactly.
 * Also: what prepare refuses (and what run refuses of computed axes), the rows' opsets and types, and
 * planted faults (a wrong axis, select_last_index) that must be caught.
 *
 * The kernel rows are looked up in pc_rt_kernels_reduce itself, so the test also runs before the family is
 * registered in util.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/runtime/rt_internal.h"
#include "reference/reference.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

static uint64_t rng_state = 0x13198a2e03707344ull;

static uint32_t draw(uint32_t bound)
{
    return (uint32_t)(pc_splitmix64(&rng_state) % bound);
}

enum { MAX_AXES = 8, TEST_RANK = 6 };

typedef enum fill {
    FILL_PLAIN,    /* floats: quarters in [-3, 3] and fractions; integers in [-20, 20] */
    FILL_SPECIAL,  /* plus NaN, +-inf, -0 (floats) or the type's extremes (integers) */
    FILL_NO_NAN,   /* FILL_SPECIAL without NaN */
    FILL_NEAR_ONE, /* floats: +-[0.8, 1.25] (products that neither vanish nor overflow) */
    FILL_POSITIVE, /* floats: (0, 3] (LogSum of a positive sum) */
    FILL_LARGE,    /* floats: [1e37, 2e37] (sums and squares that overflow float but not double) */
    FILL_NAN,      /* every float NaN */
} fill;

typedef struct tcase {
    const char *op;
    int64_t opset;
    pc_dtype dt;
    int32_t rank;
    int64_t dims[TEST_RANK];
    /* Reduce*: axes given (attribute or input 1), possibly an empty list */
    bool has_axes;
    size_t n_axes;
    int64_t axes[MAX_AXES];
    bool pending; /* input 1's data reaches the kernel only in run (a computed input) */
    int keepdims; /* -1: attribute absent */
    int noop;     /* noop_with_empty_axes, input forms only; -1: absent */
    int64_t axis; /* ArgMax/ArgMin */
    int last;     /* select_last_index (meaningful from opset 12); -1: absent */
    fill fl;
} tcase;

/* what the cases covered, checked at the end so that a refactor cannot quietly drop a kind of case */
static int n_compared, n_input_form, n_pending, n_noop, n_identity, n_empty_out, n_nan, n_rank0, n_scattered,
    n_refused_both;

static bool is_arg(const char *op)
{
    return strncmp(op, "Arg", 3) == 0;
}

/* the opset from which the axes are input 1 */
static int64_t input_since(const char *op)
{
    return strcmp(op, "ReduceSum") == 0 ? 13 : 18;
}

static bool input_form(const tcase *c)
{
    return !is_arg(c->op) && c->opset >= input_since(c->op);
}

static uint64_t count_of(int32_t rank, const int64_t *dims)
{
    uint64_t n = 1;
    for (int32_t d = 0; d < rank; d++)
        n *= (uint64_t)dims[d];
    return n;
}

static bool fill_data(pc_data *d, fill f)
{
    static const float specials[] = {NAN, INFINITY, -INFINITY, -0.0f};
    bool nan = false;
    for (uint64_t k = 0; k < d->n_elements; k++) {
        uint32_t r = draw(100);
        bool special = (f == FILL_SPECIAL || f == FILL_NO_NAN) && r < 8;
        int64_t iv = (int64_t)draw(41) - 20;
        switch (d->dtype) {
        case PC_DTYPE_FLOAT:
        case PC_DTYPE_DOUBLE: { /* double: the same values, so the float fills' reasons hold */
            float v = (float)((int)draw(25) - 12) / 4.0f;
            if (draw(3) == 0) v += (float)draw(1000) / 997.0f - 0.5f;
            if (f == FILL_NEAR_ONE) v = (0.8f + (float)draw(1000) / 2200.0f) * (draw(2) ? 1.0f : -1.0f);
            if (f == FILL_POSITIVE) v = (float)(1 + draw(300)) / 100.0f;
            if (f == FILL_LARGE) v = (1.0f + (float)draw(1000) / 1000.0f) * 1e37f;
            if (special) v = specials[f == FILL_NO_NAN ? 1 + r % 3 : r % 4];
            if (f == FILL_NAN) v = NAN;
            nan = nan || isnan(v);
            if (d->dtype == PC_DTYPE_DOUBLE)
                ((double *)d->data)[k] = (double)v;
            else
                ((float *)d->data)[k] = v;
            break;
        }
        case PC_DTYPE_INT32:
            if (special) iv = r % 2 ? INT32_MIN : INT32_MAX;
            ((int32_t *)d->data)[k] = (int32_t)iv;
            break;
        case PC_DTYPE_INT64:
            if (special) iv = r % 2 ? INT64_MIN : INT64_MAX;
            ((int64_t *)d->data)[k] = iv;
            break;
        default:
            pt_die("fill: unexpected dtype", NULL);
        }
    }
    return nan;
}

static void describe(const tcase *c, char *buf, size_t size)
{
    size_t o = (size_t)snprintf(buf, size, "%s-%lld %s[", c->op, (long long)c->opset, pc_dtype_name(c->dt));
    for (int32_t d = 0; d < c->rank && o < size; d++)
        o += (size_t)snprintf(buf + o, size - o, "%s%lld", d ? "," : "", (long long)c->dims[d]);
    if (o < size) o += (size_t)snprintf(buf + o, size - o, "]");
    if (is_arg(c->op)) {
        if (o < size)
            o += (size_t)snprintf(buf + o, size - o, " axis=%lld last=%d", (long long)c->axis, c->last);
    } else if (c->has_axes && o < size) {
        o += (size_t)snprintf(buf + o, size - o, " axes%s=(",
                              input_form(c) ? (c->pending ? "@run" : "@in") : "");
        for (size_t i = 0; i < c->n_axes && o < size; i++)
            o += (size_t)snprintf(buf + o, size - o, "%s%lld", i ? "," : "", (long long)c->axes[i]);
        if (o < size) o += (size_t)snprintf(buf + o, size - o, ")");
    }
    if (o < size) o += (size_t)snprintf(buf + o, size - o, " keepdims=%d", c->keepdims);
    if (!is_arg(c->op) && input_form(c) && o < size) snprintf(buf + o, size - o, " noop=%d", c->noop);
}

static bool close_f(float a, float b)
{
    if (isnan(b)) return isnan(a);
    if (isnan(a)) return false;
    if (a == b) return true;
    if (isinf(a) || isinf(b)) return false;
    return fabs((double)a - (double)b) <= 1e-5 * (1.0 + fabs((double)b));
}

/* Index of the first element of got (the kernel's output) that differs from the reference's, or -1. */
static int64_t first_difference(const pc_rt_tensor *got, const pc_data *want)
{
    size_t es = pc_dtype_bits(want->dtype) / 8;
    for (uint64_t k = 0; k < want->n_elements; k++) {
        const char *g = (const char *)got->data + k * es, *w = (const char *)want->data + k * es;
        bool same;
        if (want->dtype == PC_DTYPE_FLOAT) {
            float a, b;
            memcpy(&a, g, 4);
            memcpy(&b, w, 4);
            same = close_f(a, b);
        } else if (want->dtype == PC_DTYPE_DOUBLE) {
            double a, b;
            memcpy(&a, g, 8);
            memcpy(&b, w, 8);
            same = isnan(b) ? isnan(a) : a == b || fabs(a - b) <= 1e-12 * (1.0 + fabs(b));
        } else {
            same = memcmp(g, w, es) == 0;
        }
        if (!same) return (int64_t)k;
    }
    return -1;
}

static void element_text(pc_dtype dt, const void *data, int64_t k, char *buf, size_t size)
{
    const char *p = (const char *)data + (size_t)k * (pc_dtype_bits(dt) / 8);
    if (dt == PC_DTYPE_FLOAT) {
        float v;
        memcpy(&v, p, 4);
        snprintf(buf, size, "%.9g", (double)v);
    } else if (dt == PC_DTYPE_DOUBLE) {
        double v;
        memcpy(&v, p, 8);
        snprintf(buf, size, "%.17g", v);
    } else if (dt == PC_DTYPE_INT64) {
        int64_t v;
        memcpy(&v, p, 8);
        snprintf(buf, size, "%lld", (long long)v);
    } else {
        int32_t v;
        memcpy(&v, p, 4);
        snprintf(buf, size, "%d", (int)v);
    }
}

/* A one-node model of the case: graph input x, the axes as an initializer in the input forms (so that shape
 * inference and the reference know them; the kernel may still see them as computed, see tcase.pending). */
static pc_model *build(const tcase *c, pc_node **node)
{
    pc_model *m = pt_model(c->opset);
    pc_error err;
    pt_input(m, "x", c->dt, c->rank, c->dims);
    bool axes_in = input_form(c) && c->has_axes;
    if (axes_in) pt_const_i64(m, "axes", c->n_axes, c->axes);
    *node = pt_node(m, c->op, "", axes_in ? "x,axes" : "x", "y", NULL);
    pc_status st = PC_OK;
    if (is_arg(c->op)) {
        st = pc_node_set_attr_int(*node, "axis", c->axis, &err);
        if (st == PC_OK && c->last >= 0) st = pc_node_set_attr_int(*node, "select_last_index", c->last, &err);
    } else if (input_form(c)) {
        if (c->noop >= 0) st = pc_node_set_attr_int(*node, "noop_with_empty_axes", c->noop, &err);
    } else if (c->has_axes) {
        st = pc_node_set_attr_ints(*node, "axes", c->n_axes, c->axes, &err);
    }
    if (st == PC_OK && c->keepdims >= 0) st = pc_node_set_attr_int(*node, "keepdims", c->keepdims, &err);
    if (st != PC_OK) pt_die("attribute", &err);
    pt_output(m, "y");
    return m;
}

/* The table row for the node, matched as pc_rt_kernel_find matches (op, domain, opset range, input 0's type).
 */
static const pc_rt_kernel *find_row(const char *op, int64_t opset, pc_dtype dt)
{
    for (size_t i = 0; i < pc_rt_n_kernels_reduce; i++) {
        const pc_rt_kernel *r = &pc_rt_kernels_reduce[i];
        if (strcmp(r->op_type, op) != 0 || strcmp(r->domain, "") != 0) continue;
        if (opset < r->min_opset || opset > r->max_opset) continue;
        if (r->types && !(r->types & RT_TYPE(dt))) continue;
        return r;
    }
    return NULL;
}

/* Kernel tensors and context as a session sets them up. */
typedef struct rt_run {
    pc_rt_tensor x, axes, out;
    const pc_rt_tensor *in_p[2];
    pc_rt_tensor *out_p[1];
    pc_rt_kernel_ctx k;
    pc_error err;
    void *x_data, *axes_data;
} rt_run;

/* The kernel's view of the case: input 0 (a copy of x's data, NULL until run), input 1 'axes' in the input
 * forms (its data set for prepare unless pending), and an output of the given type filled with garbage. */
static void rt_setup(rt_run *r, const tcase *c, const pc_node *node, const pc_data *x, pc_dtype out_dt,
                     int32_t out_rank, const int64_t *out_dims)
{
    memset(r, 0, sizeof *r);
    r->x = (pc_rt_tensor){.dtype = c->dt, .rank = c->rank, .n = count_of(c->rank, c->dims)};
    memcpy(r->x.dims, c->dims, (size_t)c->rank * sizeof *c->dims);
    r->x_data = malloc(x ? x->n_bytes + 1 : 1);
    if (!r->x_data) pt_die("malloc", NULL);
    if (x) memcpy(r->x_data, x->data, x->n_bytes);
    r->in_p[0] = &r->x;
    uint32_t n_in = 1;
    if (input_form(c) && c->has_axes) {
        r->axes =
            (pc_rt_tensor){.dtype = PC_DTYPE_INT64, .rank = 1, .dims = {(int64_t)c->n_axes}, .n = c->n_axes};
        r->axes_data = malloc(c->n_axes * sizeof(int64_t) + 1);
        if (!r->axes_data) pt_die("malloc", NULL);
        memcpy(r->axes_data, c->axes, c->n_axes * sizeof(int64_t));
        if (!c->pending) r->axes.data = r->axes_data; /* an initializer: data known at prepare */
        r->in_p[1] = &r->axes;
        n_in = 2;
    }
    r->out = (pc_rt_tensor){.dtype = out_dt, .rank = out_rank, .n = count_of(out_rank, out_dims)};
    memcpy(r->out.dims, out_dims, (size_t)out_rank * sizeof *out_dims);
    size_t out_bytes = (size_t)r->out.n * (pc_dtype_bits(out_dt) / 8);
    r->out.data = malloc(out_bytes + 1);
    if (!r->out.data) pt_die("malloc", NULL);
    memset(r->out.data, 0xa5, out_bytes + 1); /* garbage: an element left unwritten shows */
    r->out_p[0] = &r->out;
    r->k = (pc_rt_kernel_ctx){.node = node,
                              .opset = c->opset,
                              .n_in = n_in,
                              .n_out = 1,
                              .in = r->in_p,
                              .out = r->out_p,
                              .threads = 1,
                              .err = &r->err};
}

static void rt_free(rt_run *r)
{
    free(r->x_data);
    free(r->axes_data);
    free(r->out.data);
}

/* prepare (input 0's data not set yet, as at session creation); run when prepare accepted */
static pc_status rt_prepare(rt_run *r, const pc_rt_kernel *kern, size_t *scratch)
{
    *scratch = 0;
    return kern->prepare ? kern->prepare(&r->k, scratch) : PC_OK;
}

static pc_status rt_run_kernel(rt_run *r, const pc_rt_kernel *kern, size_t scratch)
{
    void *mem = scratch ? aligned_alloc(64, (scratch + 63) / 64 * 64) : NULL;
    r->k.scratch = mem;
    r->k.scratch_bytes = scratch;
    r->x.data = r->x_data;
    if (r->axes_data) r->axes.data = r->axes_data;
    pc_status st = kern->run(&r->k);
    free(mem);
    return st;
}

/* Output 0's type after core's shape inference on the model; false when it is not fully known. */
static bool inferred_output(pc_model *m, const pc_node *node, pc_dtype *dt, int32_t *rank, int64_t *dims,
                            char *why, size_t why_size)
{
    pc_error err;
    if (pc_graph_infer_shapes(m->graph, &err) != PC_OK) {
        snprintf(why, why_size, "shape inference: %s", err.message);
        return false;
    }
    const pc_type *t = &node->outputs[0]->type;
    if (t->kind != PC_TYPE_TENSOR || t->shape.rank < 0) {
        snprintf(why, why_size, "shape inference left the output's rank unknown");
        return false;
    }
    *dt = t->elem;
    *rank = t->shape.rank;
    for (int32_t i = 0; i < t->shape.rank; i++) {
        if (t->shape.dims[i].kind != PC_DIM_KNOWN) {
            snprintf(why, why_size, "shape inference left dim %d unknown", (int)i);
            return false;
        }
        dims[i] = t->shape.dims[i].size;
    }
    return true;
}

/* Runs the case on the reference and the kernel and compares. fake: the kernel runs this case's node and
 * axes instead (the planted fault; the data and output dims stay the real case's); quiet: no CHECK on the
 * kernel's result. Returns 1 when equal, 0 when they differ, -1 when a run failed, 2 when both refused. */
static int run_case(const tcase *c, const tcase *fake, bool quiet)
{
    char what[512];
    describe(c, what, sizeof what);
    pc_node *node = NULL, *fake_node = NULL;
    pc_model *m = build(c, &node), *fm = fake ? build(fake, &fake_node) : NULL;
    pc_error err;
    pc_data *x = pc_data_new_tensor(c->dt, c->rank, c->dims, &err);
    if (!x) pt_die("tensor", &err);
    bool has_nan = fill_data(x, c->fl);
    int result = -1;
    pc_data **outs = NULL;
    const pc_rt_kernel *kern = find_row(c->op, c->opset, c->dt);
    CHECK_MSG(kern != NULL, "%s: no kernel row", what);
    pc_dtype out_dt = PC_DTYPE_UNDEFINED;
    int32_t out_rank = 0;
    int64_t out_dims[TEST_RANK] = {0};
    char why[PT_WHY_SIZE] = "";
    bool inferred = inferred_output(m, node, &out_dt, &out_rank, out_dims, why, sizeof why);
    pc_status ref_st = pc_ref_run(m, 1, &x, &outs, &err);
    if (ref_st != PC_OK) {
        /* the reference refuses (an ArgMax over an empty axis): prepare must refuse too */
        if (kern && inferred) {
            rt_run r;
            rt_setup(&r, c, node, x, out_dt, out_rank, out_dims);
            size_t scratch = 0;
            pc_status st = rt_prepare(&r, kern, &scratch);
            if (st == PC_OK) st = rt_run_kernel(&r, kern, scratch);
            CHECK_MSG(st != PC_OK, "%s: the kernel ran what the reference refuses (%s)", what, err.message);
            CHECK_MSG(st == PC_OK || r.err.message[0], "%s: a refusal without a message", what);
            n_refused_both += st != PC_OK;
            result = st != PC_OK ? 2 : -1;
            rt_free(&r);
        }
    } else if (!inferred) {
        CHECK_MSG(false, "%s: %s", what, why);
    } else if (kern) {
        const pc_data *want = outs[0];
        bool dims_agree = want->dtype == out_dt && want->rank == out_rank;
        for (int32_t d = 0; dims_agree && d < out_rank; d++)
            dims_agree = want->dims[d] == out_dims[d];
        CHECK_MSG(dims_agree, "%s: shape inference and the reference disagree on the output", what);
        rt_run r;
        rt_setup(&r, fake ? fake : c, fake ? fake_node : node, x, out_dt, out_rank, out_dims);
        size_t scratch = 0;
        pc_status st = rt_prepare(&r, kern, &scratch);
        if (!quiet) CHECK_MSG(st == PC_OK, "%s: prepare refused: %s", what, r.err.message);
        if (st == PC_OK) st = rt_run_kernel(&r, kern, scratch);
        int64_t k = st == PC_OK && dims_agree ? first_difference(&r.out, want) : -1;
        if (!quiet) {
            CHECK_MSG(st == PC_OK, "%s: kernel failed: %s", what, r.err.message);
            if (k >= 0) {
                char g[64], w[64];
                element_text(want->dtype, r.out.data, k, g, sizeof g);
                element_text(want->dtype, want->data, k, w, sizeof w);
                CHECK_MSG(k < 0, "%s: element %lld is %s, the reference says %s", what, (long long)k, g, w);
            }
        }
        result = st != PC_OK || !dims_agree ? -1 : k < 0;
        if (result == 1 && !fake) {
            n_compared++;
            n_input_form += input_form(c);
            n_pending += input_form(c) && c->has_axes && c->pending && c->n_axes > 0;
            n_noop += input_form(c) && c->noop == 1 && (!c->has_axes || c->n_axes == 0);
            n_identity += x->n_elements == 0 && want->n_elements > 0;
            n_empty_out += want->n_elements == 0;
            n_nan += has_nan;
            n_rank0 += c->rank == 0;
        }
        rt_free(&r);
    }
    if (ref_st == PC_OK && outs) pc_ref_free_outputs(m, outs);
    pc_data_unref(x);
    pc_model_free(m);
    if (fm) pc_model_free(fm);
    return result;
}

/* ---- the ops */

typedef struct op_info {
    const char *op;
    bool ints; /* int32 and int64 rows too */
    fill fl;   /* the float fill for plain cases */
} op_info;

static const op_info ops[] = {
    {"ReduceSum", true, FILL_PLAIN},        {"ReduceMean", false, FILL_PLAIN},
    {"ReduceMax", true, FILL_PLAIN},        {"ReduceMin", true, FILL_PLAIN},
    {"ReduceProd", true, FILL_NEAR_ONE},    {"ReduceL1", false, FILL_PLAIN},
    {"ReduceL2", false, FILL_PLAIN},        {"ReduceSumSquare", false, FILL_PLAIN},
    {"ReduceLogSum", false, FILL_POSITIVE}, {"ReduceLogSumExp", false, FILL_PLAIN},
    {"ArgMax", true, FILL_PLAIN},           {"ArgMin", true, FILL_PLAIN},
};
enum { N_OPS = sizeof ops / sizeof ops[0] };

static const pc_dtype types[] = {PC_DTYPE_FLOAT, PC_DTYPE_INT32, PC_DTYPE_INT64};

/* An opset of the attribute form (form 0) or the input form (form 1) of the op; ArgMax/ArgMin: before and
 * after select_last_index. */
static int64_t pick_opset(const char *op, int form)
{
    static const int64_t sum_attr[] = {1, 11, 12}, sum_input[] = {13, 18, 21};
    static const int64_t other_attr[] = {1, 11, 13, 17}, other_input[] = {18, 20, 21};
    static const int64_t arg_old[] = {1, 11}, arg_new[] = {12, 13, 21};
    if (is_arg(op)) return form ? arg_new[draw(3)] : arg_old[draw(2)];
    if (strcmp(op, "ReduceSum") == 0) return form ? sum_input[draw(3)] : sum_attr[draw(3)];
    return form ? other_input[draw(3)] : other_attr[draw(4)];
}

/* ---- fixed cases: each loop of the kernel */

typedef struct fixed_shape {
    int32_t rank;
    int64_t dims[4];
    size_t n_axes; /* SIZE_MAX: axes not given */
    int64_t axes[4];
    bool scattered; /* reduced axes not adjacent after dropping size-1 axes: the odometer */
} fixed_shape;

static const fixed_shape fixed[] = {
    {4, {2, 3, 4, 5}, 2, {2, 3}, false},   /* outer x reduced: contiguous tail rows */
    {4, {2, 3, 4, 5}, 2, {1, 2}, false},   /* outer x reduced x inner */
    {4, {2, 3, 4, 5}, 2, {0, 1}, false},   /* reduced x inner */
    {4, {2, 3, 4, 5}, 2, {0, 2}, true},    /* scattered, last kept */
    {4, {2, 3, 4, 5}, 2, {-3, -1}, true},  /* scattered, last reduced */
    {4, {2, 3, 4, 5}, 3, {3, 0, 2}, true}, /* unsorted */
    {4, {2, 3, 4, 5}, SIZE_MAX, {0}, false},
    {4, {2, 3, 4, 5}, 0, {0}, false}, /* empty list */
    {2, {3, 1000}, 1, {1}, false},    /* long rows: partial accumulators */
    {2, {3, 37}, 1, {-1}, false},     /* long rows with a remainder */
    {2, {600, 3}, 1, {0}, false},     /* a long reduced axis, short inner */
    {2, {3, 2500}, 1, {0}, false},    /* more than one block of outputs (CHUNK is 2048) */
    {3, {2, 3, 2100}, 1, {1}, false},
    {3, {4, 1, 5}, 1, {1}, false},    /* a size-1 axis reduced */
    {3, {4, 1, 5}, 2, {0, 2}, false}, /* adjacent once the size-1 axis is dropped */
    {3, {1, 1, 1}, 1, {1}, false},
    {3, {2, 0, 3}, 1, {1}, false}, /* empty input, outputs: the identity */
    {2, {0, 3}, 1, {1}, false},    /* no outputs */
    {0, {0}, SIZE_MAX, {0}, false},
    {1, {7}, 1, {0}, false},
};
enum { N_FIXED = sizeof fixed / sizeof fixed[0] };

static void test_fixed(void)
{
    for (int o = 0; o < N_OPS; o++)
        for (int t = 0; t < (ops[o].ints ? 3 : 1); t++)
            for (int s = 0; s < N_FIXED; s++)
                for (int form = 0; form < 2; form++)
                    for (int keep = 0; keep < 2; keep++) {
                        const fixed_shape *f = &fixed[s];
                        tcase c = {.op = ops[o].op,
                                   .dt = types[t],
                                   .rank = f->rank,
                                   .keepdims = keep,
                                   .noop = -1,
                                   .last = -1};
                        c.opset = pick_opset(c.op, form);
                        memcpy(c.dims, f->dims, sizeof f->dims);
                        c.fl = types[t] == PC_DTYPE_FLOAT ? ops[o].fl : FILL_PLAIN;
                        if (is_arg(c.op)) {
                            if (c.rank == 0) continue;
                            /* the axis of the fixed shape's first listed axis, or the last */
                            c.axis = f->n_axes && f->n_axes != SIZE_MAX ? f->axes[0] : -1;
                            c.last =
                                (int)draw(3) - 1; /* before 12 the kernel must ignore it, as the reference */
                        } else {
                            c.has_axes = f->n_axes != SIZE_MAX;
                            c.n_axes = c.has_axes ? f->n_axes : 0;
                            memcpy(c.axes, f->axes, sizeof f->axes);
                            c.pending = draw(2);
                        }
                        if (run_case(&c, NULL, false) == 1) n_scattered += f->scattered;
                        /* NaN and infinities mixed in; large values (accumulation in double) */
                        if (types[t] == PC_DTYPE_FLOAT && keep) {
                            c.fl = FILL_SPECIAL;
                            run_case(&c, NULL, false);
                            c.fl = FILL_LARGE;
                            run_case(&c, NULL, false);
                        }
                    }
}

/* noop_with_empty_axes in the input forms: absent axes and an empty list, with and without it */
static void test_noop(void)
{
    for (int o = 0; o < N_OPS; o++) {
        if (is_arg(ops[o].op)) continue;
        for (int variant = 0; variant < 6; variant++) {
            tcase c = {.op = ops[o].op, .dt = PC_DTYPE_FLOAT, .rank = 3, .dims = {2, 3, 4}, .keepdims = -1};
            c.opset = pick_opset(c.op, 1);
            c.noop = variant % 3 == 2 ? -1 : variant % 3; /* 0, 1, absent */
            c.has_axes = variant >= 3;                    /* absent, then an empty list */
            c.fl = variant == 4 ? FILL_SPECIAL : ops[o].fl;
            run_case(&c, NULL, false);
        }
    }
}

/* Random cases: rank 0 to 5, dims 1 to 4 with some 0s and a long axis now and then, random axes sets. */
static void test_random(int n)
{
    for (int i = 0; i < n; i++) {
        const op_info *op = &ops[draw(N_OPS)];
        tcase c = {.op = op->op, .noop = -1, .last = -1};
        c.dt = op->ints ? types[draw(3)] : PC_DTYPE_FLOAT;
        if (c.dt == PC_DTYPE_FLOAT && draw(5) == 0)
            c.dt = PC_DTYPE_DOUBLE; /* the float loops' double twins */
        int form = (int)draw(2);
        c.opset = pick_opset(c.op, form);
        c.rank = (int32_t)draw(6);
        if (is_arg(c.op) && c.rank == 0) c.rank = 1;
        uint64_t total = 1;
        for (int32_t d = 0; d < c.rank; d++) {
            uint32_t r = draw(40);
            c.dims[d] = r == 0 ? 0 : r < 5 ? 1 : r == 5 && total < 100 ? 20 + draw(300) : 1 + draw(4);
            total *= (uint64_t)(c.dims[d] ? c.dims[d] : 1);
        }
        c.keepdims = (int)draw(3) - 1;
        uint32_t f = draw(10);
        c.fl = (c.dt != PC_DTYPE_FLOAT && c.dt != PC_DTYPE_DOUBLE) || f < 5
                   ? (f < 8 ? FILL_PLAIN : FILL_SPECIAL)
               : f < 7 ? op->fl
               : f < 9 ? FILL_SPECIAL
                       : (draw(4) == 0 ? FILL_NAN : FILL_NO_NAN);
        if (is_arg(c.op)) {
            c.axis = (int64_t)draw((uint32_t)(2 * c.rank)) - c.rank;
            c.last = (int)draw(3) - 1;
        } else {
            uint32_t mode = draw(8);
            c.has_axes = mode != 0;
            if (mode >= 2) { /* a random subset in random order, some axes negative */
                int32_t perm[TEST_RANK];
                for (int32_t d = 0; d < c.rank; d++)
                    perm[d] = d;
                for (int32_t d = c.rank - 1; d > 0; d--) {
                    int32_t e = (int32_t)draw((uint32_t)d + 1), tmp = perm[d];
                    perm[d] = perm[e];
                    perm[e] = tmp;
                }
                for (int32_t d = 0; d < c.rank; d++)
                    if (draw(2)) c.axes[c.n_axes++] = perm[d] - (draw(2) ? c.rank : 0);
            }
            if (input_form(&c)) {
                c.noop = (int)draw(3) - 1;
                c.pending = draw(2);
            }
        }
        run_case(&c, NULL, false);
    }
}

/* ---- refusals, opset ranges, the planted fault */

/* prepare of the case's row on the case's node, input 0 with the case's dims (no data) and the given output
 */
/* What prepare_only changes on top of the case: nothing, an axes attribute on the node, an axes input the
 * node does not take, int32 axes. */
typedef enum tweak { AS_BUILT, AXES_ATTR, AXES_INPUT, AXES_INT32 } tweak;

static pc_status prepare_only(const tcase *c, tweak tw, pc_dtype in_dt, pc_dtype out_dt, int32_t out_rank,
                              const int64_t *out_dims, char *msg, size_t msg_size)
{
    pc_node *node = NULL;
    pc_model *m = build(c, &node);
    pc_error err;
    if (tw == AXES_ATTR && pc_node_set_attr_ints(node, "axes", 1, (int64_t[]){1}, &err) != PC_OK)
        pt_die("axes", &err);
    /* the row that claims float input: refusals of other types are prepare's, not the table's */
    const pc_rt_kernel *kern = find_row(c->op, c->opset, PC_DTYPE_FLOAT);
    pc_status st = PC_ERR_INTERNAL;
    snprintf(msg, msg_size, "no kernel row");
    if (kern && kern->prepare) {
        rt_run r;
        rt_setup(&r, c, node, NULL, out_dt, out_rank, out_dims);
        r.x.dtype = in_dt;
        if (tw == AXES_INPUT) {
            r.axes = (pc_rt_tensor){
                .dtype = PC_DTYPE_INT64, .rank = 1, .dims = {1}, .n = 1, .data = (int64_t[]){1}};
            r.in_p[1] = &r.axes;
            r.k.n_in = 2;
        }
        if (tw == AXES_INT32) r.axes.dtype = PC_DTYPE_INT32;
        size_t scratch = 0;
        st = rt_prepare(&r, kern, &scratch);
        snprintf(msg, msg_size, "%s", st == PC_OK ? "" : r.err.message);
        rt_free(&r);
    }
    pc_model_free(m);
    return st;
}

static tcase reduce_case(const char *op, int64_t opset, size_t n_axes, const int64_t *axes)
{
    tcase c = {.op = op,
               .opset = opset,
               .dt = PC_DTYPE_FLOAT,
               .rank = 2,
               .dims = {3, 4},
               .keepdims = 1,
               .noop = -1,
               .last = -1,
               .has_axes = true,
               .n_axes = n_axes};
    if (n_axes) memcpy(c.axes, axes, n_axes * sizeof *axes);
    return c;
}

#define EXPECT_REFUSAL(c, tw, in_dt, out_dt, out_rank, out_dims, want, fragment)                             \
    do {                                                                                                     \
        char msg_[1024];                                                                                     \
        pc_status st_ = prepare_only(&(c), tw, in_dt, out_dt, out_rank, out_dims, msg_, sizeof msg_);        \
        CHECK_MSG(st_ == (want) && strstr(msg_, fragment), "%s-%lld: %s (%s), expected %s naming '%s'",      \
                  (c).op, (long long)(c).opset, pc_status_name(st_), msg_, pc_status_name(want), fragment);  \
    } while (0)

static void test_refusals(void)
{
    const pc_dtype F = PC_DTYPE_FLOAT, I64 = PC_DTYPE_INT64;
    const int64_t d1_4[] = {1, 4}, d3_1[] = {3, 1}, d3_4[] = {3, 4};

    tcase c = reduce_case("ReduceSum", 13, 2, (int64_t[]){0, 0});
    EXPECT_REFUSAL(c, AS_BUILT, F, F, 2, d1_4, PC_ERR_ATTRIBUTE, "twice");
    c = reduce_case("ReduceMax", 11, 2, (int64_t[]){0, -2});
    EXPECT_REFUSAL(c, AS_BUILT, F, F, 2, d1_4, PC_ERR_ATTRIBUTE, "twice");
    c = reduce_case("ReduceMean", 18, 1, (int64_t[]){2});
    EXPECT_REFUSAL(c, AS_BUILT, F, F, 2, d3_1, PC_ERR_ATTRIBUTE, "out of range");
    c = reduce_case("ReduceMean", 11, 1, (int64_t[]){-3});
    EXPECT_REFUSAL(c, AS_BUILT, F, F, 2, d3_1, PC_ERR_ATTRIBUTE, "out of range");
    /* an axes attribute in the input form; an axes input before it */
    c = reduce_case("ReduceL1", 18, 1, (int64_t[]){1});
    EXPECT_REFUSAL(c, AXES_ATTR, F, F, 2, d3_1, PC_ERR_ATTRIBUTE, "attribute 'axes'");
    c = reduce_case("ReduceL2", 17, 0, NULL);
    c.has_axes = false;
    EXPECT_REFUSAL(c, AXES_INPUT, F, F, 2, d3_1, PC_ERR_ARITY, "input 1");
    /* element types without a loop: refused by prepare (and not claimed by the table, below) */
    c = reduce_case("ReduceMean", 18, 1, (int64_t[]){1});
    EXPECT_REFUSAL(c, AS_BUILT, PC_DTYPE_INT32, PC_DTYPE_INT32, 2, d3_1, PC_ERR_UNSUPPORTED, "int32");
    c = reduce_case("ReduceSum", 13, 1, (int64_t[]){1});
    EXPECT_REFUSAL(c, AS_BUILT, PC_DTYPE_UINT8, PC_DTYPE_UINT8, 2, d3_1, PC_ERR_UNSUPPORTED, "uint8");
    /* wrong output type or shape */
    EXPECT_REFUSAL(c, AS_BUILT, F, I64, 2, d3_1, PC_ERR_UNSUPPORTED, "output");
    EXPECT_REFUSAL(c, AS_BUILT, F, F, 2, d1_4, PC_ERR_SHAPE, "output");
    EXPECT_REFUSAL(c, AS_BUILT, F, F, 1, d3_4, PC_ERR_SHAPE, "output");
    EXPECT_REFUSAL(c, AS_BUILT, F, F, 2, d3_1, PC_OK, "");
    EXPECT_REFUSAL(c, AXES_INT32, F, F, 2, d3_1, PC_ERR_UNSUPPORTED, "int32");
    /* computed axes are checked in run: prepare accepts, run refuses the repeated axis */
    {
        pc_node *node = NULL;
        c = reduce_case("ReduceSum", 13, 2, (int64_t[]){1, -1});
        c.pending = true;
        pc_model *m = build(&c, &node);
        pc_error err;
        pc_data *x = pc_data_new_tensor(F, 2, c.dims, &err);
        rt_run r;
        rt_setup(&r, &c, node, x, F, 2, d3_1);
        const pc_rt_kernel *kern = find_row("ReduceSum", 13, F);
        size_t scratch = 0;
        pc_status st = rt_prepare(&r, kern, &scratch);
        CHECK_MSG(st == PC_OK, "prepare with computed axes: %s (%s)", pc_status_name(st), r.err.message);
        if (st == PC_OK) st = rt_run_kernel(&r, kern, scratch);
        CHECK_MSG(st == PC_ERR_ATTRIBUTE && strstr(r.err.message, "twice"), "repeated computed axes: %s (%s)",
                  pc_status_name(st), r.err.message);
        rt_free(&r);
        pc_data_unref(x);
        pc_model_free(m);
    }

    /* ArgMax/ArgMin */
    tcase a = {.op = "ArgMax",
               .opset = 13,
               .dt = F,
               .rank = 2,
               .dims = {3, 4},
               .keepdims = 1,
               .noop = -1,
               .last = -1,
               .axis = 2};
    EXPECT_REFUSAL(a, AS_BUILT, F, I64, 2, d3_1, PC_ERR_ATTRIBUTE, "out of range");
    a.axis = 1;
    EXPECT_REFUSAL(a, AS_BUILT, F, F, 2, d3_1, PC_ERR_UNSUPPORTED, "int64");
    EXPECT_REFUSAL(a, AS_BUILT, PC_DTYPE_UINT8, I64, 2, d3_1, PC_ERR_UNSUPPORTED, "uint8");
    EXPECT_REFUSAL(a, AS_BUILT, F, I64, 2, d1_4, PC_ERR_SHAPE, "output");
    EXPECT_REFUSAL(a, AS_BUILT, F, I64, 2, d3_1, PC_OK, "");
    a.op = "ArgMin";
    a.dims[1] = 0; /* [3, 0] along axis 1: no elements to choose from, 3 outputs */
    EXPECT_REFUSAL(a, AS_BUILT, F, I64, 2, d3_1, PC_ERR_SHAPE, "no elements");
    a.rank = 0;
    a.axis = 0;
    EXPECT_REFUSAL(a, AS_BUILT, F, I64, 0, d3_1, PC_ERR_SHAPE, "rank");

    /* the rows: every opset from 1 to 21, the element types of each op */
    static const struct {
        const char *op;
        int64_t opset;
        pc_dtype dt;
        bool claimed;
    } rows[] = {
        {"ReduceSum", 1, PC_DTYPE_FLOAT, true},        {"ReduceSum", 21, PC_DTYPE_INT64, true},
        {"ReduceSum", 22, PC_DTYPE_FLOAT, false},      {"ReduceSum", 13, PC_DTYPE_DOUBLE, true},
        {"ReduceMean", 18, PC_DTYPE_INT32, false},     {"ReduceMean", 18, PC_DTYPE_FLOAT, true},
        {"ReduceMax", 11, PC_DTYPE_INT32, true},       {"ReduceMin", 20, PC_DTYPE_INT64, true},
        {"ReduceMax", 20, PC_DTYPE_BOOL, false},       {"ReduceProd", 13, PC_DTYPE_INT32, true},
        {"ReduceL1", 13, PC_DTYPE_INT64, false},       {"ReduceL2", 1, PC_DTYPE_FLOAT, true},
        {"ReduceLogSumExp", 21, PC_DTYPE_FLOAT, true}, {"ReduceSumSquare", 18, PC_DTYPE_INT32, false},
        {"ReduceLogSum", 18, PC_DTYPE_FLOAT, true},    {"ArgMax", 1, PC_DTYPE_INT32, true},
        {"ArgMin", 21, PC_DTYPE_FLOAT, true},          {"ArgMax", 13, PC_DTYPE_DOUBLE, true},
        {"ReduceSum", 13, PC_DTYPE_UINT8, false},      {"ReduceL1", 13, PC_DTYPE_DOUBLE, true},
        {"CumSum", 14, PC_DTYPE_FLOAT, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        CHECK_MSG((find_row(rows[i].op, rows[i].opset, rows[i].dt) != NULL) == rows[i].claimed,
                  "%s-%lld on %s: %s", rows[i].op, (long long)rows[i].opset, pc_dtype_name(rows[i].dt),
                  rows[i].claimed ? "not claimed" : "claimed");
}

/* The comparison must be able to fail: a kernel told to reduce [4,4] along axis 0 where the reference
 * reduces along axis 1 (same output shape without keepdims, as a wrong stride would do) must differ; so must
 * an ArgMax taking the last maximum where the reference takes the first. */
static void test_planted_fault(void)
{
    tcase c = reduce_case("ReduceSum", 13, 1, (int64_t[]){1}), fake = c;
    c.dims[0] = c.dims[1] = fake.dims[0] = fake.dims[1] = 4;
    c.keepdims = fake.keepdims = 0;
    fake.axes[0] = 0;
    CHECK_MSG(run_case(&c, NULL, false) == 1, "the ReduceSum itself must pass");
    CHECK_MSG(run_case(&c, &fake, true) == 0, "a sum along the wrong axis went unnoticed");
    c.op = fake.op = "ReduceMax";
    c.opset = fake.opset = 11;
    c.fl = fake.fl = FILL_NAN;
    CHECK_MSG(run_case(&c, &fake, true) == 1, "all-NaN rows give NaN along either axis");

    tcase a = {.op = "ArgMax",
               .opset = 13,
               .dt = PC_DTYPE_INT32,
               .rank = 2,
               .dims = {6, 50},
               .keepdims = 1,
               .noop = -1,
               .last = 0,
               .axis = 1};
    tcase b = a;
    b.last = 1;
    CHECK_MSG(run_case(&a, NULL, false) == 1, "the ArgMax itself must pass");
    /* 50 integers in [-20, 20] per row: some row has its maximum twice */
    CHECK_MSG(run_case(&a, &b, true) == 0,
              "select_last_index where the reference takes the first went unnoticed");

    CHECK(!close_f(NAN, 1.0f) && !close_f(1.0f, NAN) && close_f(NAN, NAN) && !close_f(INFINITY, -INFINITY) &&
          !close_f(1.0f, 1.001f) && close_f(1000.0f, 1000.001f));
}

int main(void)
{
    test_fixed();
    test_noop();
    test_random(4000);
    test_refusals();
    test_planted_fault();
    CHECK_MSG(n_compared > 3000 && n_input_form > 1000 && n_pending > 300 && n_noop > 30 && n_identity > 50 &&
                  n_empty_out > 50 && n_nan > 300 && n_rank0 > 50 && n_scattered > 50 && n_refused_both > 0,
              "%d compared, %d input form, %d computed axes, %d noop, %d identity, %d empty, %d with NaN, %d "
              "rank 0, %d scattered, %d refused by both",
              n_compared, n_input_form, n_pending, n_noop, n_identity, n_empty_out, n_nan, n_rank0,
              n_scattered, n_refused_both);
    printf(
        "test_runtime_reduce: %d cases equal to the reference (%d with axes as input, %d of them computed, "
        "%d noop, %d identities of empty reductions, %d empty outputs, %d with NaN, %d rank 0, %d scattered "
        "axes); %d refused by both\n",
        n_compared, n_input_form, n_pending, n_noop, n_identity, n_empty_out, n_nan, n_rank0, n_scattered,
        n_refused_both);
    return pc_test_finish("test_runtime_reduce");
}
