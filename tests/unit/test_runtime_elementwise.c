/* The runtime's elementwise kernels (core/runtime/kernels/elementwise.c) against the reference executor:
 * every op of the table on one-node models, with fixed and random shapes (equal shapes, scalars of rank 0 and
 * 1, per-channel [C,1,1] against [N,C,H,W], missing leading axes, outer products, size-0 axes), float inputs
 * with NaN, infinities and -0 mixed in (also as double and float16), every integer type with its extremes
 * (wrapping) and bools. The kernel runs
 * directly as a session would: found with pc_rt_kernel_find, prepared with the input data not yet set, then
 * run into an output buffer filled with garbage. Floats must agree within 1e-5 + 1e-5 |ref| (doubles 1e-6,
 * float16 8e-3 + 2e-3 |ref|: a few half ulps of rounding order; NaN where the reference has NaN), integers
 * and bools exactly. Same-shape cases run a second time in place (out[0]->data
 * == in[0]->data). Also: prepare refuses mixed element types, bad bound shapes and bad attributes, integer
 * division and modulo by zero are errors, the opset ranges, and a planted wrong broadcast is caught. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/runtime/rt_internal.h"
#include "reference/reference.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static uint32_t draw(uint32_t bound)
{
    return (uint32_t)(pc_splitmix64(&rng_state) % bound);
}

enum { MAX_IN = 5 };

typedef struct shape {
    int32_t rank;
    int64_t dims[PC_MAX_RANK];
} shape;

typedef enum fill {
    FILL_PLAIN,   /* quarters in [-3, 3] and some fractions; integers in [-20, 20] */
    FILL_SPECIAL, /* plus NaN, +-inf, -0; integers plus their type's extremes */
    FILL_NO_NAN,  /* FILL_SPECIAL without NaN */
    FILL_NONZERO, /* integers: FILL_SPECIAL without 0 (divisors) */
    FILL_NAN,     /* every float NaN */
} fill;

typedef struct tcase {
    const char *op;
    int64_t opset;
    uint32_t n_in;
    pc_dtype dt[MAX_IN];
    shape sh[MAX_IN];
    bool omit[MAX_IN]; /* an omitted optional input */
    fill fl[MAX_IN];
    uint32_t n_attr;
    const char *attr[2];
    float val[2];
    uint32_t n_iattr; /* int attributes */
    const char *iattr[2];
    int64_t ival[2];
    const char *sattr; /* a string attribute, when set */
    const char *sval;
    /* The reference has no legacy (opset < 7) axis broadcasting: it runs the case at opset 13 without the int
     * attributes, input 1 (the same data) shaped ref_sh1, the numpy spelling of the same broadcast. */
    bool ref_numpy;
    shape ref_sh1;
} tcase;

/* what the cases covered, checked at the end so that a refactor cannot quietly drop a kind of case */
static int n_compared, n_inplace, n_scalar, n_empty, n_broadcast;

/* a float as FILL_* draws it (also the value of double and float16 elements) */
static float draw_float(fill f, uint32_t r, bool special)
{
    static const float specials[] = {NAN, INFINITY, -INFINITY, -0.0f};
    float v = (float)((int)draw(25) - 12) / 4.0f;
    if (draw(3) == 0) v += (float)draw(1000) / 997.0f - 0.5f;
    if (special && f != FILL_NONZERO) v = specials[f == FILL_NO_NAN ? 1 + r % 3 : r % 4];
    if (f == FILL_NAN) v = NAN;
    return v;
}

/* an integer of a type with range [lo, hi]: [-20, 20] clamped into it, its extremes when special */
static int64_t draw_int(fill f, uint32_t r, bool special, int64_t lo, int64_t hi)
{
    int64_t iv = (int64_t)draw(41) - 20;
    if (iv < lo) iv = -iv;
    if (special) iv = r % 2 ? lo : hi;
    if (f == FILL_NONZERO && iv == 0) iv = lo < 0 ? -1 : 1;
    return iv;
}

static void fill_data(pc_data *d, fill f)
{
    for (uint64_t k = 0; k < d->n_elements; k++) {
        uint32_t r = draw(100);
        bool special = f != FILL_PLAIN && r < 10;
        switch (d->dtype) {
        case PC_DTYPE_FLOAT:
            ((float *)d->data)[k] = draw_float(f, r, special);
            break;
        case PC_DTYPE_DOUBLE:
            ((double *)d->data)[k] =
                draw(2) ? (double)draw_float(f, r, special) : (double)draw_int(f, r, false, -20, 20) / 3.0;
            break;
        case PC_DTYPE_FLOAT16:
            ((uint16_t *)d->data)[k] = pc_half_from_double(draw_float(f, r, special));
            break;
        case PC_DTYPE_BFLOAT16:
            ((uint16_t *)d->data)[k] = pc_bfloat16_from_double(draw_float(f, r, special));
            break;
        case PC_DTYPE_INT8:
            ((int8_t *)d->data)[k] = (int8_t)draw_int(f, r, special, INT8_MIN, INT8_MAX);
            break;
        case PC_DTYPE_INT16:
            ((int16_t *)d->data)[k] =
                (int16_t)(draw_int(f, r, special, INT16_MIN / 1000, INT16_MAX / 1000) * (special ? 1 : 1000));
            break;
        case PC_DTYPE_INT32:
            ((int32_t *)d->data)[k] = (int32_t)draw_int(f, r, special, INT32_MIN, INT32_MAX);
            break;
        case PC_DTYPE_INT64:
            ((int64_t *)d->data)[k] = draw_int(f, r, special, INT64_MIN, INT64_MAX);
            break;
        case PC_DTYPE_UINT8:
            ((uint8_t *)d->data)[k] = f == FILL_NONZERO ? (uint8_t)(1 + draw(255)) : (uint8_t)draw(256);
            break;
        case PC_DTYPE_UINT16:
            ((uint16_t *)d->data)[k] = (uint16_t)draw_int(f, r, special, 0, UINT16_MAX);
            break;
        case PC_DTYPE_UINT32:
            ((uint32_t *)d->data)[k] = (uint32_t)draw_int(f, r, special, 0, UINT32_MAX);
            break;
        case PC_DTYPE_UINT64:
            ((uint64_t *)d->data)[k] =
                special && r % 2 ? UINT64_MAX : (uint64_t)draw_int(f, r, special && r % 2, 0, 0x7fffffff);
            break;
        case PC_DTYPE_BOOL:
            ((uint8_t *)d->data)[k] = (uint8_t)draw(2);
            break;
        default:
            pt_die("fill: unexpected dtype", NULL);
        }
    }
}

static void describe(const tcase *c, char *buf, size_t size)
{
    size_t o = (size_t)snprintf(buf, size, "%s-%lld", c->op, (long long)c->opset);
    for (uint32_t i = 0; i < c->n_in && o < size; i++) {
        if (c->omit[i]) {
            o += (size_t)snprintf(buf + o, size - o, " _");
            continue;
        }
        o += (size_t)snprintf(buf + o, size - o, " %s[", pc_dtype_name(c->dt[i]));
        for (int32_t d = 0; d < c->sh[i].rank && o < size; d++)
            o += (size_t)snprintf(buf + o, size - o, "%s%lld", d ? "," : "", (long long)c->sh[i].dims[d]);
        if (o < size) o += (size_t)snprintf(buf + o, size - o, "]");
    }
    for (uint32_t a = 0; a < c->n_attr && o < size; a++)
        o += (size_t)snprintf(buf + o, size - o, " %s=%g", c->attr[a], (double)c->val[a]);
    for (uint32_t a = 0; a < c->n_iattr && o < size; a++)
        o += (size_t)snprintf(buf + o, size - o, " %s=%lld", c->iattr[a], (long long)c->ival[a]);
    if (c->sattr && o < size) o += (size_t)snprintf(buf + o, size - o, " %s=%s", c->sattr, c->sval);
}

static bool close_tol(double a, double b, double tol, double rel)
{
    if (isnan(b)) return isnan(a);
    if (isnan(a)) return false;
    if (a == b) return true;
    if (isinf(a) || isinf(b)) return false;
    return fabs(a - b) <= tol + rel * fabs(b);
}

static bool close_f(float a, float b)
{
    return close_tol(a, b, 1e-5, 1e-5);
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
            same = close_tol(a, b, 1e-6, 1e-6);
        } else if (want->dtype == PC_DTYPE_FLOAT16) {
            uint16_t a, b;
            memcpy(&a, g, 2);
            memcpy(&b, w, 2);
            same = close_tol(pc_half_to_double(a), pc_half_to_double(b), 8e-3, 2e-3);
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
    } else if (dt == PC_DTYPE_FLOAT16) {
        uint16_t v;
        memcpy(&v, p, 2);
        snprintf(buf, size, "%.6g (half 0x%04x)", pc_half_to_double(v), (unsigned)v);
    } else if (dt == PC_DTYPE_INT64) {
        int64_t v;
        memcpy(&v, p, 8);
        snprintf(buf, size, "%lld", (long long)v);
    } else if (dt == PC_DTYPE_UINT64) {
        uint64_t v;
        memcpy(&v, p, 8);
        snprintf(buf, size, "%llu", (unsigned long long)v);
    } else if (dt == PC_DTYPE_INT32) {
        int32_t v;
        memcpy(&v, p, 4);
        snprintf(buf, size, "%d", (int)v);
    } else {
        snprintf(buf, size, "byte 0x%02x", (unsigned)*(const uint8_t *)p);
    }
}

/* A one-node model of the case, its graph inputs named i0, i1, ... (omitted ones left out). */
static pc_model *build(const tcase *c, pc_node **node)
{
    pc_model *m = pt_model(c->opset);
    char names[256] = "";
    size_t o = 0;
    for (uint32_t i = 0; i < c->n_in; i++) {
        char name[16];
        snprintf(name, sizeof name, "i%u", i);
        if (!c->omit[i]) pt_input(m, name, c->dt[i], c->sh[i].rank, c->sh[i].dims);
        o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", i ? "," : "", c->omit[i] ? "" : name);
    }
    *node = pt_node(m, c->op, "", names, "y", NULL);
    pc_error err;
    for (uint32_t a = 0; a < c->n_attr; a++)
        if (pc_node_set_attr_float(*node, c->attr[a], c->val[a], &err) != PC_OK) pt_die(c->attr[a], &err);
    for (uint32_t a = 0; a < c->n_iattr; a++)
        if (pc_node_set_attr_int(*node, c->iattr[a], c->ival[a], &err) != PC_OK) pt_die(c->iattr[a], &err);
    if (c->sattr && pc_node_set_attr_string(*node, c->sattr, c->sval, &err) != PC_OK) pt_die(c->sattr, &err);
    pt_output(m, "y");
    return m;
}

/* Kernel tensors and context over the node's inputs; each input's data is a private copy. */
typedef struct rt_run {
    pc_rt_tensor in[MAX_IN], out;
    const pc_rt_tensor *in_p[MAX_IN];
    pc_rt_tensor *out_p[1];
    pc_rt_kernel_ctx k;
    pc_error err;
    void *in_data[MAX_IN];
} rt_run;

static void rt_setup(rt_run *r, const tcase *c, const pc_node *node, pc_data *const *data,
                     const pc_data *want)
{
    memset(r, 0, sizeof *r);
    uint32_t j = 0;
    for (uint32_t i = 0; i < c->n_in; i++) {
        if (c->omit[i]) continue;
        pc_rt_tensor *t = &r->in[i];
        t->dtype = c->dt[i];
        t->rank = c->sh[i].rank;
        memcpy(t->dims, c->sh[i].dims, sizeof t->dims);
        t->n = data[j]->n_elements;
        r->in_data[i] = malloc(data[j]->n_bytes + 1);
        if (!r->in_data[i]) pt_die("malloc", NULL);
        memcpy(r->in_data[i], data[j]->data, data[j]->n_bytes);
        r->in_p[i] = t;
        j++;
    }
    r->out.dtype = want->dtype;
    r->out.rank = want->rank;
    for (int32_t d = 0; d < want->rank; d++)
        r->out.dims[d] = want->dims[d];
    r->out.n = want->n_elements;
    r->out.data = malloc(want->n_bytes + 1);
    if (!r->out.data) pt_die("malloc", NULL);
    memset(r->out.data, 0xa5, want->n_bytes + 1); /* garbage: an element left unwritten shows */
    r->out_p[0] = &r->out;
    r->k = (pc_rt_kernel_ctx){.node = node,
                              .opset = c->opset,
                              .n_in = c->n_in,
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

/* prepare (input data not set yet, as at session creation), then run */
static pc_status rt_exec(rt_run *r, const pc_rt_kernel *kern, const tcase *c)
{
    size_t scratch = 0;
    pc_status st = PC_OK;
    if (kern->prepare) st = kern->prepare(&r->k, &scratch);
    if (st != PC_OK) return st;
    void *mem = scratch ? aligned_alloc(64, (scratch + 63) / 64 * 64) : NULL;
    r->k.scratch = mem;
    r->k.scratch_bytes = scratch;
    for (uint32_t i = 0; i < c->n_in; i++)
        r->in[i].data = r->in_data[i];
    st = kern->run(&r->k);
    free(mem);
    return st;
}

/* Runs the case on the reference and the kernel and compares. fake1: the kernel sees input 1 with these dims
 * instead (the planted fault); quiet: no CHECK on the kernel's result. Returns 1 when equal, 0 when they
 * differ, -1 when a run failed. */
static int run_case(const tcase *c, const shape *fake1, bool quiet)
{
    char what[512];
    describe(c, what, sizeof what);
    pc_node *node = NULL;
    pc_model *m = build(c, &node);
    pc_data *data[MAX_IN];
    uint32_t n_data = 0;
    pc_error err;
    for (uint32_t i = 0; i < c->n_in; i++) {
        if (c->omit[i]) continue;
        data[n_data] = pc_data_new_tensor(c->dt[i], c->sh[i].rank, c->sh[i].dims, &err);
        if (!data[n_data]) pt_die("tensor", &err);
        fill_data(data[n_data++], c->fl[i]);
    }
    int result = -1;
    pc_data **outs = NULL;
    const pc_rt_kernel *kern = pc_rt_kernel_find(node, c->opset, c->dt[0]);
    pc_model *mref = m;
    pc_data *ref_data[MAX_IN], *view1 = NULL;
    memcpy(ref_data, data, sizeof ref_data);
    if (c->ref_numpy) {
        tcase rc = *c;
        rc.opset = 13;
        rc.n_iattr = 0;
        rc.sh[1] = c->ref_sh1;
        pc_node *ref_node;
        mref = build(&rc, &ref_node);
        view1 = pc_data_new_tensor(c->dt[1], rc.sh[1].rank, rc.sh[1].dims, &err);
        if (!view1 || view1->n_bytes != data[1]->n_bytes) pt_die("ref_sh1", NULL);
        memcpy(view1->data, data[1]->data, data[1]->n_bytes);
        ref_data[1] = view1;
    }
    pc_status st = pc_ref_run(mref, n_data, ref_data, &outs, &err);
    CHECK_MSG(st == PC_OK, "%s: the reference refused: %s", what, err.message);
    CHECK_MSG(kern != NULL, "%s: no kernel row", what);
    if (st == PC_OK && kern) {
        const pc_data *want = outs[0];
        rt_run r;
        rt_setup(&r, c, node, data, want);
        if (fake1) {
            r.in[1].rank = fake1->rank;
            memcpy(r.in[1].dims, fake1->dims, sizeof r.in[1].dims);
        }
        st = rt_exec(&r, kern, c);
        int64_t k = st == PC_OK ? first_difference(&r.out, want) : -1;
        if (!quiet) {
            CHECK_MSG(st == PC_OK, "%s: kernel failed: %s", what, r.err.message);
            if (k >= 0) {
                char g[64], w[64];
                element_text(want->dtype, r.out.data, k, g, sizeof g);
                element_text(want->dtype, want->data, k, w, sizeof w);
                CHECK_MSG(k < 0, "%s: element %lld is %s, the reference says %s", what, (long long)k, g, w);
            }
        }
        result = st != PC_OK ? -1 : k < 0;
        n_compared += result == 1;
        n_scalar += result == 1 && want->n_elements == 1;
        n_empty += result == 1 && want->n_elements == 0;
        bool same_dims = c->sh[0].rank == want->rank;
        for (int32_t d = 0; same_dims && d < want->rank; d++)
            same_dims = c->sh[0].dims[d] == want->dims[d];
        n_broadcast += result == 1 && !same_dims;
        /* in place: the output buffer is input 0's (the kernel is already prepared; run only) */
        if (result == 1 && same_dims && c->dt[0] == want->dtype && !fake1 && want->n_elements > 0) {
            void *own = r.out.data;
            memcpy(r.in_data[0], data[0]->data, data[0]->n_bytes);
            r.out.data = r.in_data[0];
            st = kern->run(&r.k);
            k = st == PC_OK ? first_difference(&r.out, want) : -1;
            CHECK_MSG(st == PC_OK && k < 0, "%s: in place, %s (first difference at %lld)", what,
                      st == PC_OK ? "wrong result" : r.err.message, (long long)k);
            r.out.data = own;
            n_inplace += st == PC_OK && k < 0;
            result = st != PC_OK ? -1 : k < 0;
        }
        rt_free(&r);
    }
    if (outs) pc_ref_free_outputs(mref, outs);
    if (mref != m) pc_model_free(mref);
    if (view1) pc_data_unref(view1);
    for (uint32_t i = 0; i < n_data; i++)
        pc_data_unref(data[i]);
    pc_model_free(m);
    return result;
}

/* ---- shapes */

static shape shp(int32_t rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    shape s = {rank, {d0, d1, d2, d3}};
    return s;
}

/* a random output shape: rank 0 to 4, dims 1 to 5, sometimes a 0 */
static shape random_shape(void)
{
    shape s = {(int32_t)draw(5), {0}};
    for (int32_t d = 0; d < s.rank; d++)
        s.dims[d] = draw(25) == 0 ? 0 : 1 + draw(5);
    return s;
}

/* a shape that broadcasts to `out`: some leading axes dropped, some axes 1 */
static shape derive(const shape *out)
{
    shape s = {0, {0}};
    int32_t drop = draw(3) == 0 ? (int32_t)draw((uint32_t)out->rank + 1) : 0;
    s.rank = out->rank - drop;
    for (int32_t d = 0; d < s.rank; d++)
        s.dims[d] = draw(3) == 0 ? 1 : out->dims[drop + d];
    return s;
}

/* the fixed pairs: equal, scalar (rank 0 and [1]) either side, per-channel, missing leading axes, outer
 * product, size 0 */
static const struct {
    shape a, b;
} pairs[] = {
    {{4, {2, 3, 4, 5}}, {4, {2, 3, 4, 5}}},
    {{4, {2, 3, 4, 5}}, {0, {0}}},
    {{0, {0}}, {4, {2, 3, 4, 5}}},
    {{4, {2, 3, 4, 5}}, {1, {1}}},
    {{4, {2, 3, 4, 5}}, {3, {3, 1, 1}}},
    {{3, {3, 1, 1}}, {4, {2, 3, 4, 5}}},
    {{4, {2, 3, 4, 5}}, {1, {5}}},
    {{2, {4, 1}}, {2, {1, 5}}},
    {{4, {2, 1, 4, 1}}, {4, {1, 3, 1, 5}}},
    {{3, {2, 0, 3}}, {1, {3}}},
    {{3, {2, 0, 3}}, {2, {1, 1}}},
    {{1, {1}}, {1, {1}}},
    {{0, {0}}, {0, {0}}},
    {{3, {7, 1, 3}}, {3, {7, 6, 1}}},
    {{4, {2, 3, 4, 5}}, {4, {2, 1, 4, 1}}},
    {{1, {37}}, {1, {37}}},
    {{2, {3, 4}}, {4, {2, 3, 1, 4}}},
};
enum { N_PAIRS = sizeof pairs / sizeof pairs[0], N_RANDOM = 25 };

/* ---- the op lists */

typedef struct unary_op {
    const char *op;
    int64_t min_opset;
    uint32_t n_attr;
    const char *attr[2];
    float val[2];
    fill fl;
} unary_op;

static const unary_op unary_ops[] = {
    {"Relu", 6, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Sigmoid", 6, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Tanh", 6, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Exp", 6, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Log", 6, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Sqrt", 6, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Neg", 6, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Abs", 6, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Reciprocal", 6, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Floor", 6, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Ceil", 6, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Erf", 9, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Softplus", 1, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Softsign", 1, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Elu", 6, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Elu", 6, 1, {"alpha"}, {0.7f}, FILL_SPECIAL},
    {"LeakyRelu", 6, 0, {NULL}, {0}, FILL_SPECIAL},
    {"LeakyRelu", 6, 1, {"alpha"}, {0.3f}, FILL_SPECIAL},
    /* no NaN: the reference's fmax(0, fmin(1, NaN)) gives 1 where numpy's clip (and this kernel) give NaN */
    {"HardSigmoid", 6, 0, {NULL}, {0}, FILL_NO_NAN},
    {"HardSigmoid", 6, 2, {"alpha", "beta"}, {0.3f, 0.4f}, FILL_NO_NAN},
    {"HardSwish", 14, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Selu", 6, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Selu", 6, 2, {"alpha", "gamma"}, {1.5f, 0.8f}, FILL_SPECIAL},
    {"Sign", 9, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Round", 11, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Cos", 7, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Sin", 7, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Tan", 7, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Acos", 7, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Asin", 7, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Atan", 7, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Sinh", 9, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Cosh", 9, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Asinh", 9, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Acosh", 9, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Atanh", 9, 0, {NULL}, {0}, FILL_SPECIAL},
    {"ThresholdedRelu", 10, 0, {NULL}, {0}, FILL_SPECIAL},
    {"ThresholdedRelu", 10, 1, {"alpha"}, {0.5f}, FILL_SPECIAL},
    {"Celu", 12, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Celu", 12, 1, {"alpha"}, {0.7f}, FILL_SPECIAL},
    {"Shrink", 9, 0, {NULL}, {0}, FILL_SPECIAL},
    {"Shrink", 9, 2, {"lambd", "bias"}, {1.5f, 0.75f}, FILL_SPECIAL},
    {"IsNaN", 9, 0, {NULL}, {0}, FILL_SPECIAL},
    {"IsInf", 10, 0, {NULL}, {0}, FILL_SPECIAL},
};

static const shape unary_shapes[] = {
    {4, {2, 3, 4, 5}}, {0, {0}}, {2, {0, 3}}, {1, {17}}, {1, {1}}, {3, {1, 7, 1}},
};

/* Type masks: bit i stands for all_types[i]. */
static const pc_dtype all_types[] = {PC_DTYPE_FLOAT,   PC_DTYPE_INT32,  PC_DTYPE_INT64,  PC_DTYPE_DOUBLE,
                                     PC_DTYPE_FLOAT16, PC_DTYPE_INT8,   PC_DTYPE_INT16,  PC_DTYPE_UINT8,
                                     PC_DTYPE_UINT16,  PC_DTYPE_UINT32, PC_DTYPE_UINT64, PC_DTYPE_BOOL};
enum {
    N_TYPES = sizeof all_types / sizeof all_types[0],
    T_F32 = 1,
    T_I32 = 2,
    T_I64 = 4,
    T_FLT = 1 | 8 | 16,
    T_SINT = 2 | 4 | 32 | 64,
    T_UINT = 128 | 256 | 512 | 1024,
    T_INT = T_SINT | T_UINT,
    T_NUM = T_FLT | T_INT,
    T_BOOL = 2048,
    T_OLD = T_F32 | T_I32 | T_I64 | T_BOOL, /* what the kernels ran before the other types came */
};

static bool is_float_type(pc_dtype t)
{
    return t == PC_DTYPE_FLOAT || t == PC_DTYPE_DOUBLE || t == PC_DTYPE_FLOAT16;
}

static void test_unary(void)
{
    /* every floating-point op on float, double and float16 */
    for (size_t u = 0; u < sizeof unary_ops / sizeof unary_ops[0]; u++) {
        const unary_op *op = &unary_ops[u];
        int64_t opsets[2] = {op->min_opset, 17};
        for (int t = 0; t < N_TYPES; t++) {
            if (!((T_FLT >> t) & 1)) continue;
            for (int o = 0; o < 2; o++)
                for (size_t s = 0; s < sizeof unary_shapes / sizeof unary_shapes[0]; s++) {
                    tcase c = {.op = op->op, .opset = opsets[o], .n_in = 1, .n_attr = op->n_attr};
                    c.dt[0] = all_types[t];
                    c.sh[0] = unary_shapes[s];
                    c.fl[0] = op->fl;
                    for (uint32_t a = 0; a < op->n_attr; a++) {
                        c.attr[a] = op->attr[a];
                        c.val[a] = op->val[a];
                    }
                    run_case(&c, NULL, false);
                }
        }
    }
    /* the integer forms, extremes wrapping */
    static const struct {
        const char *op;
        int64_t opset;
        int types;
        uint32_t n_attr;
    } int_ops[] = {{"Neg", 13, T_SINT, 0},  {"Abs", 13, T_INT, 0},   {"Sign", 13, T_INT, 0},
                   {"Relu", 14, T_SINT, 0}, {"Shrink", 9, T_INT, 0}, {"Shrink", 9, T_INT, 2}};
    for (size_t i = 0; i < sizeof int_ops / sizeof int_ops[0]; i++)
        for (int t = 0; t < N_TYPES; t++) {
            if (!((int_ops[i].types >> t) & 1)) continue;
            for (size_t s = 0; s < sizeof unary_shapes / sizeof unary_shapes[0]; s++) {
                tcase c = {
                    .op = int_ops[i].op, .opset = int_ops[i].opset, .n_in = 1, .n_attr = int_ops[i].n_attr};
                c.dt[0] = all_types[t];
                c.sh[0] = unary_shapes[s];
                /* the reference reads uint64 as int64 in Abs and Sign (|2^64 - 1| = 1 there): no extremes */
                c.fl[0] = all_types[t] == PC_DTYPE_UINT64 ? FILL_PLAIN : FILL_SPECIAL;
                c.attr[0] = "lambd";
                c.val[0] = 3.5f;
                c.attr[1] = "bias";
                c.val[1] = 2.0f;
                run_case(&c, NULL, false);
            }
        }
    /* IsInf with one side turned off */
    static const char *const sides[] = {"detect_negative", "detect_positive"};
    for (int t = 0; t < N_TYPES; t++) {
        if (!((T_FLT >> t) & 1)) continue;
        for (int side = 0; side < 2; side++)
            for (size_t s = 0; s < sizeof unary_shapes / sizeof unary_shapes[0]; s++) {
                tcase c = {.op = "IsInf", .opset = 10, .n_in = 1, .n_iattr = 1};
                c.dt[0] = all_types[t];
                c.sh[0] = unary_shapes[s];
                c.fl[0] = FILL_SPECIAL;
                c.iattr[0] = sides[side];
                c.ival[0] = 0;
                run_case(&c, NULL, false);
            }
    }
    /* Not */
    for (size_t s = 0; s < sizeof unary_shapes / sizeof unary_shapes[0]; s++) {
        tcase c = {.op = "Not", .opset = 1, .n_in = 1};
        c.dt[0] = PC_DTYPE_BOOL;
        c.sh[0] = unary_shapes[s];
        run_case(&c, NULL, false);
    }
}

static void test_clip(void)
{
    /* opset 6: attributes, both, one, none */
    static const struct {
        uint32_t n;
        const char *attr[2];
        float val[2];
    } attrs[] = {{2, {"min", "max"}, {-0.5f, 1.25f}},
                 {1, {"max"}, {0.75f}},
                 {1, {"min"}, {-1.0f}},
                 {0, {NULL}, {0}},
                 {2, {"min", "max"}, {1.0f, -1.0f}}};
    for (int t = 0; t < N_TYPES; t++) {
        if (!((T_FLT >> t) & 1)) continue;
        for (size_t a = 0; a < sizeof attrs / sizeof attrs[0]; a++)
            for (size_t s = 0; s < sizeof unary_shapes / sizeof unary_shapes[0]; s++) {
                tcase c = {.op = "Clip", .opset = 6, .n_in = 1, .n_attr = attrs[a].n};
                c.dt[0] = all_types[t];
                c.sh[0] = unary_shapes[s];
                c.fl[0] = FILL_SPECIAL;
                for (uint32_t i = 0; i < attrs[a].n; i++) {
                    c.attr[i] = attrs[a].attr[i];
                    c.val[i] = attrs[a].val[i];
                }
                run_case(&c, NULL, false);
            }
    }
    /* opset 11+: optional scalar inputs (rank 0 and [1]); random bounds may cross (lo > hi gives hi) */
    for (int t = 0; t < N_TYPES; t++) {
        if (!((T_NUM >> t) & 1)) continue;
        for (int form = 0; form < 6; form++)
            for (size_t s = 0; s < sizeof unary_shapes / sizeof unary_shapes[0]; s++) {
                pc_dtype dt = all_types[t];
                tcase c = {.op = "Clip", .opset = is_float_type(dt) && form % 2 ? 11 : 13};
                c.n_in = form == 0 ? 1 : form == 1 ? 2 : 3;
                for (uint32_t i = 0; i < 3; i++) {
                    c.dt[i] = dt;
                    c.sh[i] = i == 0 ? unary_shapes[s] : shp(form == 4 && i == 2 ? 1 : 0, 1, 0, 0, 0);
                    c.fl[i] = FILL_SPECIAL;
                }
                c.omit[1] = form == 3;                                  /* max only */
                if (form == 5 && is_float_type(dt)) c.fl[2] = FILL_NAN; /* a NaN bound */
                run_case(&c, NULL, false);
            }
    }
}

/* the pair p of a broadcast sweep: the fixed pairs, then random ones */
static void pair_shapes(tcase *c, int p)
{
    if (p < N_PAIRS) {
        c->sh[0] = pairs[p].a;
        c->sh[1] = pairs[p].b;
    } else {
        shape out = random_shape();
        c->sh[0] = derive(&out);
        c->sh[1] = derive(&out);
    }
}

static void test_binary(void)
{
    static const struct {
        const char *op;
        int64_t opset;
        int types;
        const char *iattr, *sattr, *sval;
        int64_t ival;
    } ops[] = {
        {"Add", 7, T_F32 | T_I32 | T_I64, NULL, NULL, NULL, 0},
        {"Sub", 13, T_F32 | T_I32 | T_I64, NULL, NULL, NULL, 0},
        {"Mul", 14, T_F32 | T_I32 | T_I64, NULL, NULL, NULL, 0},
        {"Div", 7, T_F32 | T_I32 | T_I64, NULL, NULL, NULL, 0},
        {"Add", 17, T_F32 | T_I32 | T_I64, NULL, NULL, NULL, 0},
        {"Equal", 11, T_F32 | T_I32 | T_I64, NULL, NULL, NULL, 0},
        {"Equal", 7, T_I32 | T_I64 | T_BOOL, NULL, NULL, NULL, 0},
        {"Less", 9, T_F32 | T_I32 | T_I64, NULL, NULL, NULL, 0},
        {"Greater", 13, T_F32 | T_I32 | T_I64, NULL, NULL, NULL, 0},
        {"Less", 7, T_F32, NULL, NULL, NULL, 0},
        {"LessOrEqual", 12, T_F32 | T_I32 | T_I64, NULL, NULL, NULL, 0},
        {"GreaterOrEqual", 16, T_F32 | T_I32 | T_I64, NULL, NULL, NULL, 0},
        {"And", 7, T_BOOL, NULL, NULL, NULL, 0},
        {"Or", 17, T_BOOL, NULL, NULL, NULL, 0},
        /* every numeric type */
        {"Add", 14, T_NUM, NULL, NULL, NULL, 0},
        {"Sub", 14, T_NUM, NULL, NULL, NULL, 0},
        {"Mul", 14, T_NUM, NULL, NULL, NULL, 0},
        {"Div", 14, T_NUM, NULL, NULL, NULL, 0},
        {"Equal", 13, T_NUM, NULL, NULL, NULL, 0},
        {"Less", 13, T_NUM, NULL, NULL, NULL, 0},
        {"Greater", 9, T_INT, NULL, NULL, NULL, 0},
        {"LessOrEqual", 16, T_NUM, NULL, NULL, NULL, 0},
        {"GreaterOrEqual", 12, T_NUM, NULL, NULL, NULL, 0},
        {"Xor", 7, T_BOOL, NULL, NULL, NULL, 0},
        {"Mod", 13, T_NUM, "fmod", NULL, NULL, 1},
        {"Mod", 10, T_INT, "fmod", NULL, NULL, 0},
        {"BitShift", 11, T_UINT, NULL, "direction", "LEFT", 0},
        {"BitShift", 11, T_UINT, NULL, "direction", "RIGHT", 0},
    };
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (int t = 0; t < N_TYPES; t++) {
            if (!((ops[o].types >> t) & 1)) continue;
            pc_dtype dt = all_types[t];
            bool divides = strcmp(ops[o].op, "Div") == 0 || strcmp(ops[o].op, "Mod") == 0;
            /* the types added later draw fewer random shapes: the walk is the same for all */
            int n = N_PAIRS + ((T_OLD >> t) & 1 ? N_RANDOM : 6);
            for (int p = 0; p < n; p++) {
                tcase c = {.op = ops[o].op, .opset = ops[o].opset, .n_in = 2};
                c.dt[0] = c.dt[1] = dt;
                pair_shapes(&c, p);
                c.fl[0] = FILL_SPECIAL;
                c.fl[1] = divides ? FILL_NONZERO : FILL_SPECIAL;
                if (ops[o].iattr) {
                    c.n_iattr = 1;
                    c.iattr[0] = ops[o].iattr;
                    c.ival[0] = ops[o].ival;
                }
                c.sattr = ops[o].sattr;
                c.sval = ops[o].sval;
                run_case(&c, NULL, false);
            }
        }
    /* Pow: float, double, float16, int32 and int64 bases, each with every numeric exponent type (opset 15)
     * and its own type (opset 7 for the floating ones) */
    static const pc_dtype bases[] = {PC_DTYPE_FLOAT, PC_DTYPE_DOUBLE, PC_DTYPE_FLOAT16, PC_DTYPE_INT32,
                                     PC_DTYPE_INT64};
    for (size_t q = 0; q < sizeof bases / sizeof bases[0]; q++)
        for (int e = -1; e < N_TYPES; e++) {
            if (e >= 0 && !((T_NUM >> e) & 1)) continue;
            if (e < 0 && !is_float_type(bases[q])) continue;
            for (int p = 0; p < N_PAIRS + (bases[q] == PC_DTYPE_FLOAT ? N_RANDOM : 4); p++) {
                tcase c = {.op = "Pow", .opset = e < 0 ? 7 : 15, .n_in = 2};
                c.dt[0] = bases[q];
                c.dt[1] = e < 0 ? bases[q] : all_types[e];
                pair_shapes(&c, p);
                c.fl[0] = FILL_SPECIAL;
                c.fl[1] = is_float_type(c.dt[1]) ? FILL_SPECIAL : FILL_PLAIN; /* 2^(2^31) is inf either way */
                run_case(&c, NULL, false);
            }
        }
    /* PRelu: the slope broadcasts to X; every numeric type; opset 6's per-channel 1-D slope */
    for (int t = 0; t < N_TYPES; t++) {
        if (!((T_NUM >> t) & 1)) continue;
        for (int p = 0; p < (t == 0 ? 40 : 12); p++) {
            tcase c = {.op = "PRelu", .opset = p % 2 ? 9 : 16, .n_in = 2};
            c.dt[0] = c.dt[1] = all_types[t];
            if (t == 0) c.opset = p % 2 ? 7 : 16;
            c.sh[0] = p == 0 ? shp(4, 2, 3, 4, 5) : random_shape();
            c.sh[1] = p == 0 ? shp(3, 3, 1, 1, 0) : derive(&c.sh[0]);
            c.fl[0] = c.fl[1] = FILL_SPECIAL;
            run_case(&c, NULL, false);
        }
    }
    static const struct {
        shape x, slope;
    } legacy_prelu[] = {
        {{4, {2, 3, 4, 5}}, {1, {3}}}, {{2, {4, 3}}, {1, {3}}},       {{4, {2, 3, 4, 5}}, {1, {5}}},
        {{4, {2, 3, 4, 5}}, {1, {1}}}, {{3, {2, 3, 4}}, {2, {3, 1}}},
    };
    for (int t = 0; t < 2; t++)
        for (size_t p = 0; p < sizeof legacy_prelu / sizeof legacy_prelu[0]; p++) {
            tcase c = {.op = "PRelu", .opset = 6, .n_in = 2};
            c.dt[0] = c.dt[1] = t ? PC_DTYPE_DOUBLE : PC_DTYPE_FLOAT;
            c.sh[0] = legacy_prelu[p].x;
            c.sh[1] = legacy_prelu[p].slope;
            c.fl[0] = c.fl[1] = FILL_SPECIAL;
            run_case(&c, NULL, false);
        }
}

/* Add, Sub, Mul, Div and Pow at opset 6: broadcast = 0 with equal shapes, broadcast = 1 against A's trailing
 * axes or, with axis, against the axes from there */
static void test_legacy_broadcast(void)
{
    static const struct {
        shape b;
        int64_t broadcast, axis; /* axis 99: absent */
    } forms[] = {
        {{4, {2, 3, 4, 5}}, 0, 99}, {{4, {2, 3, 4, 5}}, 1, 99}, {{1, {5}}, 1, 99},   {{2, {4, 5}}, 1, 99},
        {{0, {0}}, 1, 99},          {{1, {3}}, 1, 1},           {{2, {3, 4}}, 1, 1}, {{1, {2}}, 1, 0},
        {{1, {4}}, 1, -2},          {{2, {3, 1}}, 1, 1},        {{1, {5}}, 1, 3},
    };
    static const char *const ops[] = {"Add", "Sub", "Mul", "Div", "Pow"};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (int t = 0; t < 3; t++) {
            pc_dtype dt = t == 0 ? PC_DTYPE_FLOAT : t == 1 ? PC_DTYPE_DOUBLE : PC_DTYPE_INT64;
            if (dt == PC_DTYPE_INT64 && o == 4) continue; /* Pow-1 takes floats only */
            for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
                tcase c = {.op = ops[o], .opset = 6, .n_in = 2};
                c.dt[0] = c.dt[1] = dt;
                c.sh[0] = shp(4, 2, 3, 4, 5);
                c.sh[1] = forms[f].b;
                c.fl[0] = FILL_SPECIAL;
                c.fl[1] = o == 3 ? FILL_NONZERO : o == 4 ? FILL_PLAIN : FILL_SPECIAL;
                if (forms[f].broadcast) {
                    c.iattr[c.n_iattr] = "broadcast";
                    c.ival[c.n_iattr++] = 1;
                }
                if (forms[f].axis != 99) {
                    c.iattr[c.n_iattr] = "axis";
                    c.ival[c.n_iattr++] = forms[f].axis;
                    /* B's axes from `axis` on: trailing 1s to the rank of A's axes from there */
                    int32_t from = (int32_t)(forms[f].axis < 0 ? forms[f].axis + 4 : forms[f].axis);
                    c.ref_numpy = true;
                    c.ref_sh1 = forms[f].b;
                    c.ref_sh1.rank = 4 - from;
                    for (int32_t d = forms[f].b.rank; d < c.ref_sh1.rank; d++)
                        c.ref_sh1.dims[d] = 1;
                }
                run_case(&c, NULL, false);
            }
        }
}

static void test_variadic(void)
{
    static const struct {
        const char *op;
        int64_t opset;
        int types;
    } ops[] = {{"Max", 8, T_F32},
               {"Max", 13, T_F32 | T_I32 | T_I64},
               {"Min", 12, T_F32 | T_I32 | T_I64},
               {"Sum", 8, T_F32},
               {"Sum", 13, T_F32},
               {"Mean", 13, T_F32},
               {"Max", 13, T_NUM},
               {"Min", 13, T_NUM},
               {"Sum", 13, T_FLT},
               {"Mean", 13, T_FLT},
               {"Max", 6, T_FLT},
               {"Sum", 6, T_FLT},
               {"Mean", 6, T_FLT},
               {"Min", 6, T_FLT}};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (int t = 0; t < N_TYPES; t++) {
            if (!((ops[o].types >> t) & 1)) continue;
            bool equal_shapes = ops[o].opset < 8; /* no broadcasting before opset 8 */
            for (int p = 0; p < (o < 6 ? 40 : 12); p++) {
                tcase c = {.op = ops[o].op, .opset = ops[o].opset, .n_in = 1 + (uint32_t)(p % 4)};
                shape out = p < 4 ? shp(4, 2, 3, 4, 5) : random_shape();
                for (uint32_t i = 0; i < c.n_in; i++) {
                    c.dt[i] = all_types[t];
                    /* the first cases: [2,3,4,5] with a per-channel and a scalar operand */
                    c.sh[i] = equal_shapes ? out
                              : p >= 4     ? derive(&out)
                              : i == 1     ? shp(3, 3, 1, 1, 0)
                              : i == 2     ? shp(0, 0, 0, 0, 0)
                                           : out;
                    c.fl[i] = FILL_SPECIAL;
                }
                run_case(&c, NULL, false);
            }
        }
}

/* CastLike between every pair of fixed-width types (as Cast: truncation, saturation, NaN and infinities; the
 * kernel is Cast's, movement.c, with the target from input 1) */
static void test_castlike(void)
{
    static const pc_dtype types[] = {PC_DTYPE_FLOAT, PC_DTYPE_DOUBLE, PC_DTYPE_FLOAT16, PC_DTYPE_BFLOAT16,
                                     PC_DTYPE_INT8,  PC_DTYPE_INT16,  PC_DTYPE_INT32,   PC_DTYPE_INT64,
                                     PC_DTYPE_UINT8, PC_DTYPE_UINT16, PC_DTYPE_UINT32,  PC_DTYPE_UINT64,
                                     PC_DTYPE_BOOL};
    enum { N = sizeof types / sizeof types[0] };
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++)
            for (size_t s = 0; s < 3; s++) {
                tcase c = {.op = "CastLike", .opset = s == 2 ? 19 : 15, .n_in = 2};
                c.dt[0] = types[a];
                c.dt[1] = types[b];
                c.sh[0] = unary_shapes[s];
                c.sh[1] = shp(1, 1, 0, 0, 0);
                c.fl[0] = types[a] == PC_DTYPE_UINT64 ? FILL_PLAIN : FILL_SPECIAL;
                c.fl[1] = FILL_PLAIN;
                run_case(&c, NULL, false);
            }
}

static void test_where(void)
{
    static const pc_dtype types[] = {PC_DTYPE_FLOAT, PC_DTYPE_INT64, PC_DTYPE_INT32,
                                     PC_DTYPE_INT16, PC_DTYPE_UINT8, PC_DTYPE_BOOL};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (int p = 0; p < 30; p++) {
            tcase c = {.op = "Where", .opset = types[t] == PC_DTYPE_FLOAT ? 9 : 16, .n_in = 3};
            shape out = p == 0 ? shp(4, 2, 3, 4, 5) : random_shape();
            c.dt[0] = PC_DTYPE_BOOL;
            c.dt[1] = c.dt[2] = types[t];
            for (uint32_t i = 0; i < 3; i++) {
                c.sh[i] = p == 0 ? (i == 0   ? shp(3, 3, 1, 1, 0)
                                    : i == 1 ? out
                                             : shp(0, 0, 0, 0, 0))
                                 : derive(&out);
                c.fl[i] = FILL_SPECIAL;
            }
            run_case(&c, NULL, false);
        }
}

/* ---- refusals, errors, opset ranges, the planted fault */

/* prepare of the node's kernel on the given input types/shapes (output: out_dt, out_sh) */
/* prepare of the case's kernel (output: out_dt, out_sh) */
static pc_status prepare_case(const tcase *cp, pc_dtype out_dt, shape out_sh, char *msg, size_t msg_size)
{
    const tcase c = *cp;
    const int64_t opset = c.opset;
    const uint32_t n_in = c.n_in;
    const pc_dtype *dt = c.dt;
    const shape *sh = c.sh;
    pc_node *node = NULL;
    pc_model *m = build(&c, &node);
    const pc_rt_kernel *kern = pc_rt_kernel_find(node, opset, dt[0]);
    pc_status st = PC_ERR_INTERNAL;
    snprintf(msg, msg_size, "no kernel row");
    if (kern && kern->prepare) {
        rt_run r;
        memset(&r, 0, sizeof r);
        for (uint32_t i = 0; i < n_in; i++) {
            r.in[i] = (pc_rt_tensor){.dtype = dt[i], .rank = sh[i].rank, .n = 1};
            memcpy(r.in[i].dims, sh[i].dims, sizeof r.in[i].dims);
            for (int32_t d = 0; d < sh[i].rank; d++)
                r.in[i].n *= (uint64_t)sh[i].dims[d];
            r.in_p[i] = &r.in[i];
        }
        r.out = (pc_rt_tensor){.dtype = out_dt, .rank = out_sh.rank, .n = 1};
        memcpy(r.out.dims, out_sh.dims, sizeof r.out.dims);
        r.out_p[0] = &r.out;
        r.k = (pc_rt_kernel_ctx){.node = node,
                                 .opset = opset,
                                 .n_in = n_in,
                                 .n_out = 1,
                                 .in = r.in_p,
                                 .out = r.out_p,
                                 .threads = 1,
                                 .err = &r.err};
        size_t scratch = 0;
        st = kern->prepare(&r.k, &scratch);
        snprintf(msg, msg_size, "%s", st == PC_OK ? "" : r.err.message);
    }
    pc_model_free(m);
    return st;
}

/* prepare of the node's kernel on the given input types/shapes (output: out_dt, out_sh) */
static pc_status prepare_only(const char *op, int64_t opset, uint32_t n_in, const pc_dtype *dt,
                              const shape *sh, pc_dtype out_dt, shape out_sh, char *msg, size_t msg_size)
{
    tcase c = {.op = op, .opset = opset, .n_in = n_in};
    for (uint32_t i = 0; i < n_in; i++) {
        c.dt[i] = dt[i];
        c.sh[i] = sh[i];
    }
    return prepare_case(&c, out_dt, out_sh, msg, msg_size);
}

static void test_refusals(void)
{
    char msg[1024];
    shape s4 = shp(4, 2, 3, 4, 5), s0 = shp(0, 0, 0, 0, 0), s2 = shp(1, 2, 0, 0, 0);
    pc_status st;

    st = prepare_only("Add", 17, 2, (pc_dtype[]){PC_DTYPE_FLOAT, PC_DTYPE_INT64}, (shape[]){s4, s4},
                      PC_DTYPE_FLOAT, s4, msg, sizeof msg);
    CHECK_MSG(st == PC_ERR_UNSUPPORTED && strstr(msg, "int64"), "mixed Add: %s (%s)", pc_status_name(st),
              msg);
    st = prepare_only("Add", 17, 2, (pc_dtype[]){PC_DTYPE_INT32, PC_DTYPE_INT64}, (shape[]){s4, s0},
                      PC_DTYPE_INT32, s4, msg, sizeof msg);
    CHECK_MSG(st == PC_ERR_UNSUPPORTED, "mixed int Add: %s (%s)", pc_status_name(st), msg);
    st = prepare_only("Max", 13, 3, (pc_dtype[]){PC_DTYPE_FLOAT, PC_DTYPE_FLOAT, PC_DTYPE_INT32},
                      (shape[]){s4, s4, s0}, PC_DTYPE_FLOAT, s4, msg, sizeof msg);
    CHECK_MSG(st == PC_ERR_UNSUPPORTED, "mixed Max: %s (%s)", pc_status_name(st), msg);
    st = prepare_only("Where", 16, 3, (pc_dtype[]){PC_DTYPE_BOOL, PC_DTYPE_FLOAT, PC_DTYPE_INT64},
                      (shape[]){s4, s4, s4}, PC_DTYPE_FLOAT, s4, msg, sizeof msg);
    CHECK_MSG(st == PC_ERR_UNSUPPORTED, "mixed Where: %s (%s)", pc_status_name(st), msg);
    st = prepare_only("Pow", 7, 2, (pc_dtype[]){PC_DTYPE_FLOAT, PC_DTYPE_INT64}, (shape[]){s4, s0},
                      PC_DTYPE_FLOAT, s4, msg, sizeof msg);
    CHECK_MSG(st == PC_ERR_UNSUPPORTED, "Pow-7 with an int64 exponent: %s (%s)", pc_status_name(st), msg);
    st = prepare_only("Pow", 15, 2, (pc_dtype[]){PC_DTYPE_FLOAT, PC_DTYPE_BFLOAT16}, (shape[]){s4, s0},
                      PC_DTYPE_FLOAT, s4, msg, sizeof msg);
    CHECK_MSG(st == PC_ERR_UNSUPPORTED, "Pow with a bfloat16 exponent: %s (%s)", pc_status_name(st), msg);
    /* attributes: Mod's fmod (0 or 1, and 1 for floats), BitShift's direction, the legacy broadcast/axis */
    static const struct {
        const char *op;
        int64_t opset;
        pc_dtype dt;
        const char *iattr[2];
        int64_t ival[2];
        const char *sval; /* direction */
        shape b;
        pc_status want;
    } bad[] = {
        {"Mod", 13, PC_DTYPE_FLOAT, {"fmod", NULL}, {0, 0}, NULL, {0, {0}}, PC_ERR_ATTRIBUTE},
        {"Mod", 13, PC_DTYPE_FLOAT16, {NULL, NULL}, {0, 0}, NULL, {0, {0}}, PC_ERR_ATTRIBUTE},
        {"Mod", 13, PC_DTYPE_INT32, {"fmod", NULL}, {2, 0}, NULL, {0, {0}}, PC_ERR_ATTRIBUTE},
        {"Mod", 13, PC_DTYPE_INT32, {"fmod", NULL}, {1, 0}, NULL, {0, {0}}, PC_OK},
        {"BitShift", 11, PC_DTYPE_UINT8, {NULL, NULL}, {0, 0}, NULL, {0, {0}}, PC_ERR_ATTRIBUTE},
        {"BitShift", 11, PC_DTYPE_UINT8, {NULL, NULL}, {0, 0}, "left", {0, {0}}, PC_ERR_ATTRIBUTE},
        {"BitShift", 11, PC_DTYPE_UINT8, {NULL, NULL}, {0, 0}, "LEFT", {0, {0}}, PC_OK},
        {"Add", 6, PC_DTYPE_FLOAT, {NULL, NULL}, {0, 0}, NULL, {1, {5}}, PC_ERR_SHAPE},
        {"Add", 6, PC_DTYPE_FLOAT, {"broadcast", NULL}, {2, 0}, NULL, {1, {5}}, PC_ERR_ATTRIBUTE},
        {"Add", 6, PC_DTYPE_FLOAT, {"broadcast", "axis"}, {1, 4}, NULL, {1, {5}}, PC_ERR_ATTRIBUTE},
        {"Add", 6, PC_DTYPE_FLOAT, {"broadcast", "axis"}, {1, 3}, NULL, {2, {5, 1}}, PC_ERR_SHAPE},
        {"Add", 6, PC_DTYPE_FLOAT, {"broadcast", "axis"}, {1, 1}, NULL, {1, {4}}, PC_ERR_SHAPE},
        {"Add", 6, PC_DTYPE_FLOAT, {"broadcast", "axis"}, {1, 2}, NULL, {1, {4}}, PC_OK},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tcase c = {
            .op = bad[i].op, .opset = bad[i].opset, .n_in = 2, .sattr = bad[i].sval ? "direction" : NULL};
        c.sval = bad[i].sval;
        c.dt[0] = c.dt[1] = bad[i].dt;
        c.sh[0] = s4;
        c.sh[1] = bad[i].b;
        for (uint32_t a = 0; a < 2 && bad[i].iattr[a]; a++) {
            c.iattr[a] = bad[i].iattr[a];
            c.ival[a] = bad[i].ival[a];
            c.n_iattr++;
        }
        st = prepare_case(&c, bad[i].dt, s4, msg, sizeof msg);
        char what[256];
        describe(&c, what, sizeof what);
        /* attribute refusals name the attribute (quoted) */
        CHECK_MSG(st == bad[i].want && (st != PC_ERR_ATTRIBUTE || strstr(msg, "'")), "%s: %s (%s), want %s",
                  what, pc_status_name(st), msg, pc_status_name(bad[i].want));
    }
    st = prepare_only("CastLike", 15, 2, (pc_dtype[]){PC_DTYPE_FLOAT, PC_DTYPE_STRING}, (shape[]){s4, s0},
                      PC_DTYPE_STRING, s4, msg, sizeof msg);
    CHECK_MSG(st == PC_ERR_UNSUPPORTED && strstr(msg, "string"), "CastLike to string: %s (%s)",
              pc_status_name(st), msg);
    st = prepare_only("Clip", 13, 2, (pc_dtype[]){PC_DTYPE_FLOAT, PC_DTYPE_FLOAT}, (shape[]){s4, s2},
                      PC_DTYPE_FLOAT, s4, msg, sizeof msg);
    CHECK_MSG(st == PC_ERR_SHAPE, "Clip with a 2-element min: %s (%s)", pc_status_name(st), msg);
    st = prepare_only("Equal", 13, 2, (pc_dtype[]){PC_DTYPE_FLOAT, PC_DTYPE_FLOAT}, (shape[]){s4, s4},
                      PC_DTYPE_FLOAT, s4, msg, sizeof msg);
    CHECK_MSG(st == PC_ERR_UNSUPPORTED, "Equal writing float: %s (%s)", pc_status_name(st), msg);
    /* an input that does not broadcast to the output */
    st = prepare_only("Mul", 13, 2, (pc_dtype[]){PC_DTYPE_FLOAT, PC_DTYPE_FLOAT},
                      (shape[]){s4, shp(1, 4, 0, 0, 0)}, PC_DTYPE_FLOAT, s4, msg, sizeof msg);
    CHECK_MSG(st == PC_ERR_SHAPE, "Mul [2,3,4,5] by [4]: %s (%s)", pc_status_name(st), msg);
    st = prepare_only("Add", 17, 2, (pc_dtype[]){PC_DTYPE_FLOAT, PC_DTYPE_FLOAT}, (shape[]){s4, s0},
                      PC_DTYPE_FLOAT, s4, msg, sizeof msg);
    CHECK_MSG(st == PC_OK, "a good Add refused: %s", msg);

    /* integer division and modulo by zero are errors at run time, not a crash or a made-up value */
    static const struct {
        const char *op;
        pc_dtype dt;
        int64_t fmod;
    } div0[] = {{"Div", PC_DTYPE_INT32, 0},  {"Div", PC_DTYPE_INT64, 0}, {"Div", PC_DTYPE_INT8, 0},
                {"Div", PC_DTYPE_UINT64, 0}, {"Mod", PC_DTYPE_INT32, 0}, {"Mod", PC_DTYPE_UINT16, 1},
                {"Mod", PC_DTYPE_INT64, 1}};
    for (size_t t = 0; t < sizeof div0 / sizeof div0[0]; t++) {
        tcase c = {.op = div0[t].op,
                   .opset = 13,
                   .n_in = 2,
                   .n_iattr = 1,
                   .iattr = {"fmod"},
                   .ival = {div0[t].fmod}};
        c.dt[0] = c.dt[1] = div0[t].dt;
        c.sh[0] = s4;
        c.sh[1] = shp(3, 3, 1, 1, 0);
        pc_node *node = NULL;
        pc_model *m = build(&c, &node);
        pc_error err;
        pc_data *a = pc_data_new_tensor(c.dt[0], 4, s4.dims, &err),
                *b = pc_data_new_tensor(c.dt[1], 3, c.sh[1].dims, &err);
        fill_data(a, FILL_PLAIN);
        fill_data(b, FILL_NONZERO);
        memset((char *)b->data + (pc_dtype_bits(c.dt[1]) / 8), 0, pc_dtype_bits(c.dt[1]) / 8); /* b[1] = 0 */
        pc_data *want = pc_data_new_tensor(c.dt[0], 4, s4.dims, &err), *in[2] = {a, b};
        rt_run r;
        rt_setup(&r, &c, node, in, want);
        const pc_rt_kernel *kern = pc_rt_kernel_find(node, 13, c.dt[0]);
        CHECK(kern != NULL);
        if (kern) {
            st = rt_exec(&r, kern, &c);
            CHECK_MSG(st == PC_ERR_VALUE && strstr(r.err.message, "zero"), "%s %s by 0: %s (%s)",
                      pc_dtype_name(c.dt[0]), c.op, pc_status_name(st), r.err.message);
        }
        rt_free(&r);
        pc_data_unref(a);
        pc_data_unref(b);
        pc_data_unref(want);
        pc_model_free(m);
    }

    /* opset ranges: where ONNX gave each op the form implemented */
    static const struct {
        const char *op;
        int64_t opset;
        pc_dtype dt;
        bool claimed;
    } ranges[] = {
        {"Add", 5, PC_DTYPE_FLOAT, false},        {"Add", 6, PC_DTYPE_FLOAT, true},
        {"Add", 7, PC_DTYPE_FLOAT, true},         {"Add", 21, PC_DTYPE_INT64, true},
        {"Add", 22, PC_DTYPE_FLOAT, false},       {"Add", 13, PC_DTYPE_DOUBLE, true},
        {"Add", 14, PC_DTYPE_UINT8, true},        {"Add", 14, PC_DTYPE_BOOL, false},
        {"Equal", 10, PC_DTYPE_FLOAT, false},     {"Equal", 11, PC_DTYPE_FLOAT, true},
        {"Equal", 7, PC_DTYPE_INT64, true},       {"Less", 8, PC_DTYPE_INT32, false},
        {"Less", 9, PC_DTYPE_INT32, true},        {"Max", 5, PC_DTYPE_FLOAT, false},
        {"Max", 6, PC_DTYPE_FLOAT16, true},       {"Max", 11, PC_DTYPE_INT64, false},
        {"Max", 12, PC_DTYPE_INT64, true},        {"Clip", 11, PC_DTYPE_INT32, false},
        {"Clip", 12, PC_DTYPE_INT32, true},       {"Clip", 5, PC_DTYPE_FLOAT, true},
        {"HardSwish", 13, PC_DTYPE_FLOAT, false}, {"Round", 10, PC_DTYPE_FLOAT, false},
        {"Where", 9, PC_DTYPE_BOOL, true},        {"Where", 9, PC_DTYPE_FLOAT, false},
        {"Relu", 13, PC_DTYPE_INT32, false},      {"Relu", 14, PC_DTYPE_INT32, true},
        {"Relu", 14, PC_DTYPE_UINT8, false},      {"Sum", 5, PC_DTYPE_FLOAT, false},
        {"Sum", 13, PC_DTYPE_INT32, false},       {"Pow", 11, PC_DTYPE_INT32, false},
        {"Pow", 12, PC_DTYPE_INT64, true},        {"Pow", 12, PC_DTYPE_INT8, false},
        {"BitShift", 11, PC_DTYPE_INT32, false},  {"BitShift", 11, PC_DTYPE_UINT64, true},
        {"Mod", 9, PC_DTYPE_FLOAT, false},        {"Mod", 10, PC_DTYPE_UINT8, true},
        {"CastLike", 14, PC_DTYPE_FLOAT, false},  {"CastLike", 15, PC_DTYPE_BFLOAT16, true},
        {"CastLike", 15, PC_DTYPE_STRING, false}, {"IsInf", 9, PC_DTYPE_FLOAT, false},
        {"IsNaN", 9, PC_DTYPE_FLOAT16, true},     {"Neg", 13, PC_DTYPE_UINT32, false},
        {"Cos", 6, PC_DTYPE_FLOAT, false},        {"Sinh", 9, PC_DTYPE_DOUBLE, true},
        {"PRelu", 5, PC_DTYPE_FLOAT, false},      {"PRelu", 8, PC_DTYPE_INT32, false},
        {"Xor", 7, PC_DTYPE_BOOL, true},          {"Shrink", 9, PC_DTYPE_UINT16, true},
    };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        pc_model *m = pt_model(ranges[i].opset);
        pc_node *node = pc_graph_new_node(m->graph, ranges[i].op, "");
        const pc_rt_kernel *kern = node ? pc_rt_kernel_find(node, ranges[i].opset, ranges[i].dt) : NULL;
        CHECK_MSG((kern != NULL) == ranges[i].claimed, "%s-%lld on %s: %s", ranges[i].op,
                  (long long)ranges[i].opset, pc_dtype_name(ranges[i].dt),
                  ranges[i].claimed ? "not claimed" : "claimed");
        pc_model_free(m);
    }
}

/* The comparison must be able to fail: a kernel fed input 1 as [1,1,3] where it is [3,1,1] (the same data
 * broadcast along the wrong axis, as a wrong stride would) differs from the reference. */
static void test_planted_fault(void)
{
    tcase c = {.op = "Add", .opset = 13, .n_in = 2};
    c.dt[0] = c.dt[1] = PC_DTYPE_FLOAT;
    c.sh[0] = shp(4, 2, 3, 4, 3);
    c.sh[1] = shp(3, 3, 1, 1, 0);
    shape wrong = shp(3, 1, 1, 3, 0);
    CHECK_MSG(run_case(&c, NULL, false) == 1, "the per-channel Add itself must pass");
    CHECK_MSG(run_case(&c, &wrong, true) == 0, "a wrongly broadcast operand went unnoticed");
}

/* The vectorizable erf (rt_internal.h pc_rt_erff, used by Erf and Gelu on float) against libm's double erf on
 * 2,000,001 points over [-6, 6] and the special values: at most 3e-7 absolute anywhere and 4 float ulps of
 * erf(x) below |x| = 1 (where erf is small and relative accuracy matters); odd; +-inf give +-1, NaN stays
 * NaN.
 */
static void test_erf_accuracy(void)
{
    double worst_abs = 0, worst_ulps = 0;
    float at_abs = 0, at_ulps = 0;
    bool odd = true;
    for (int64_t i = -1000000; i <= 1000000; i++) {
        float x = (float)i * 6e-6f, y = pc_rt_erff(x);
        double e = erf((double)x), d = fabs((double)y - e);
        if (d > worst_abs) worst_abs = d, at_abs = x;
        if (fabsf(x) < 1.0f && e != 0) {
            double ulp = ldexp(1.0, ilogb(e) - 23), u = d / ulp;
            if (u > worst_ulps) worst_ulps = u, at_ulps = x;
        }
        if (pc_rt_erff(-x) != -y) odd = false;
    }
    CHECK_MSG(odd, "pc_rt_erff is not odd somewhere in [-6, 6]");
    CHECK_MSG(worst_abs <= 3e-7, "pc_rt_erff: %g absolute at x = %.9g", worst_abs, (double)at_abs);
    CHECK_MSG(worst_ulps <= 4, "pc_rt_erff: %.2f ulps at x = %.9g", worst_ulps, (double)at_ulps);
    CHECK(pc_rt_erff(1e-30f) == (float)erf(1e-30) && pc_rt_erff(0.0f) == 0.0f);
    CHECK(pc_rt_erff(INFINITY) == 1.0f && pc_rt_erff(-INFINITY) == -1.0f && pc_rt_erff(50.0f) == 1.0f);
    CHECK(isnan(pc_rt_erff(NAN)));
    printf("test_runtime_elementwise: pc_rt_erff within %.2g absolute, %.2f ulps below |x| = 1\n", worst_abs,
           worst_ulps);
}

int main(void)
{
    test_erf_accuracy();
    test_unary();
    test_clip();
    test_binary();
    test_legacy_broadcast();
    test_variadic();
    test_castlike();
    test_where();
    test_refusals();
    test_planted_fault();
    CHECK_MSG(n_compared > 2500 && n_inplace > 500 && n_scalar > 100 && n_empty > 50 && n_broadcast > 600,
              "%d compared, %d in place, %d scalar, %d empty, %d broadcast", n_compared, n_inplace, n_scalar,
              n_empty, n_broadcast);
    printf("test_runtime_elementwise: %d cases equal to the reference (%d also in place, %d broadcast, %d "
           "one-element, %d empty)\n",
           n_compared, n_inplace, n_broadcast, n_scalar, n_empty);
    return pc_test_finish("test_runtime_elementwise");
}
