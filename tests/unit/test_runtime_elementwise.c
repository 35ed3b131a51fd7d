/* The runtime's elementwise kernels (core/runtime/kernels/elementwise.c) against the reference executor:
 * every op of the table on one-node models, with fixed and random shapes (equal shapes, scalars of rank 0 and
 * 1, per-channel [C,1,1] against [N,C,H,W], missing leading axes, outer products, size-0 axes), float inputs
 * with NaN, infinities and -0 mixed in, integers with their extremes (wrapping) and bools. The kernel runs
 * directly as a session would: found with pc_rt_kernel_find, prepared with the input data not yet set, then
 * run into an output buffer filled with garbage. Floats must agree within 1e-5 + 1e-5 |ref| (NaN where the
 * reference has NaN), integers and bools exactly. Same-shape cases run a second time in place (out[0]->data
 * == in[0]->data). Also: prepare refuses mixed element types and bad bound shapes, integer division by zero
 * is an error, the opset ranges, and a planted wrong broadcast is caught. */
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
} tcase;

/* what the cases covered, checked at the end so that a refactor cannot quietly drop a kind of case */
static int n_compared, n_inplace, n_scalar, n_empty, n_broadcast;

static void fill_data(pc_data *d, fill f)
{
    static const float specials[] = {NAN, INFINITY, -INFINITY, -0.0f};
    for (uint64_t k = 0; k < d->n_elements; k++) {
        uint32_t r = draw(100);
        bool special = f != FILL_PLAIN && r < 10;
        int64_t iv = (int64_t)draw(41) - 20;
        switch (d->dtype) {
        case PC_DTYPE_FLOAT: {
            float v = (float)((int)draw(25) - 12) / 4.0f;
            if (draw(3) == 0) v += (float)draw(1000) / 997.0f - 0.5f;
            if (special && f != FILL_NONZERO) v = specials[f == FILL_NO_NAN ? 1 + r % 3 : r % 4];
            if (f == FILL_NAN) v = NAN;
            ((float *)d->data)[k] = v;
            break;
        }
        case PC_DTYPE_DOUBLE:
            ((double *)d->data)[k] = (double)iv / 3.0;
            break;
        case PC_DTYPE_INT32:
            if (special) iv = r % 2 ? INT32_MIN : INT32_MAX;
            if (f == FILL_NONZERO && iv == 0) iv = -1;
            ((int32_t *)d->data)[k] = (int32_t)iv;
            break;
        case PC_DTYPE_INT64:
            if (special) iv = r % 2 ? INT64_MIN : INT64_MAX;
            if (f == FILL_NONZERO && iv == 0) iv = -1;
            ((int64_t *)d->data)[k] = iv;
            break;
        case PC_DTYPE_INT16:
            ((int16_t *)d->data)[k] = (int16_t)(iv * 1000);
            break;
        case PC_DTYPE_UINT8:
            ((uint8_t *)d->data)[k] = (uint8_t)draw(256);
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
}

static bool close_f(float a, float b)
{
    if (isnan(b)) return isnan(a);
    if (isnan(a)) return false;
    if (a == b) return true;
    if (isinf(a) || isinf(b)) return false;
    return fabs((double)a - (double)b) <= 1e-5 + 1e-5 * fabs((double)b);
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
    } else if (dt == PC_DTYPE_INT64) {
        int64_t v;
        memcpy(&v, p, 8);
        snprintf(buf, size, "%lld", (long long)v);
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
    pc_status st = pc_ref_run(m, n_data, data, &outs, &err);
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
    if (st == PC_OK && outs) pc_ref_free_outputs(m, outs);
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
};

static const shape unary_shapes[] = {
    {4, {2, 3, 4, 5}}, {0, {0}}, {2, {0, 3}}, {1, {17}}, {1, {1}}, {3, {1, 7, 1}},
};

static const pc_dtype num_types[] = {PC_DTYPE_FLOAT, PC_DTYPE_INT32, PC_DTYPE_INT64};

static void test_unary(void)
{
    for (size_t u = 0; u < sizeof unary_ops / sizeof unary_ops[0]; u++) {
        const unary_op *op = &unary_ops[u];
        int64_t opsets[2] = {op->min_opset, 17};
        for (int o = 0; o < 2; o++)
            for (size_t s = 0; s < sizeof unary_shapes / sizeof unary_shapes[0]; s++) {
                tcase c = {.op = op->op, .opset = opsets[o], .n_in = 1, .n_attr = op->n_attr};
                c.dt[0] = PC_DTYPE_FLOAT;
                c.sh[0] = unary_shapes[s];
                c.fl[0] = op->fl;
                for (uint32_t a = 0; a < op->n_attr; a++) {
                    c.attr[a] = op->attr[a];
                    c.val[a] = op->val[a];
                }
                run_case(&c, NULL, false);
            }
    }
    /* integer Neg and Abs, extremes wrapping */
    const char *int_ops[] = {"Neg", "Abs"};
    for (int i = 0; i < 2; i++)
        for (int t = 1; t < 3; t++)
            for (size_t s = 0; s < sizeof unary_shapes / sizeof unary_shapes[0]; s++) {
                tcase c = {.op = int_ops[i], .opset = 13, .n_in = 1};
                c.dt[0] = num_types[t];
                c.sh[0] = unary_shapes[s];
                c.fl[0] = FILL_SPECIAL;
                run_case(&c, NULL, false);
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
    for (size_t a = 0; a < sizeof attrs / sizeof attrs[0]; a++)
        for (size_t s = 0; s < sizeof unary_shapes / sizeof unary_shapes[0]; s++) {
            tcase c = {.op = "Clip", .opset = 6, .n_in = 1, .n_attr = attrs[a].n};
            c.dt[0] = PC_DTYPE_FLOAT;
            c.sh[0] = unary_shapes[s];
            c.fl[0] = FILL_SPECIAL;
            for (uint32_t i = 0; i < attrs[a].n; i++) {
                c.attr[i] = attrs[a].attr[i];
                c.val[i] = attrs[a].val[i];
            }
            run_case(&c, NULL, false);
        }
    /* opset 11+: optional scalar inputs (rank 0 and [1]); random bounds may cross (lo > hi gives hi) */
    for (int t = 0; t < 3; t++)
        for (int form = 0; form < 6; form++)
            for (size_t s = 0; s < sizeof unary_shapes / sizeof unary_shapes[0]; s++) {
                pc_dtype dt = num_types[t];
                tcase c = {.op = "Clip", .opset = dt == PC_DTYPE_FLOAT && form % 2 ? 11 : 13};
                c.n_in = form == 0 ? 1 : form == 1 ? 2 : 3;
                for (uint32_t i = 0; i < 3; i++) {
                    c.dt[i] = dt;
                    c.sh[i] = i == 0 ? unary_shapes[s] : shp(form == 4 && i == 2 ? 1 : 0, 1, 0, 0, 0);
                    c.fl[i] = FILL_SPECIAL;
                }
                c.omit[1] = form == 3;                                     /* max only */
                if (form == 5 && dt == PC_DTYPE_FLOAT) c.fl[2] = FILL_NAN; /* a NaN bound */
                run_case(&c, NULL, false);
            }
}

static void test_binary(void)
{
    static const struct {
        const char *op;
        int64_t opset;
        int types; /* bit t: num_types[t]; 8: bool */
    } ops[] = {
        {"Add", 7, 7},      {"Sub", 13, 7},   {"Mul", 14, 7},         {"Div", 7, 7},
        {"Add", 17, 7},     {"Equal", 11, 7}, {"Equal", 7, 6 | 8},    {"Less", 9, 7},
        {"Greater", 13, 7}, {"Less", 7, 1},   {"LessOrEqual", 12, 7}, {"GreaterOrEqual", 16, 7},
        {"And", 7, 8},      {"Or", 17, 8},
    };
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (int t = 0; t < 4; t++) {
            if (!(ops[o].types & (t < 3 ? 1 << t : 8))) continue;
            pc_dtype dt = t < 3 ? num_types[t] : PC_DTYPE_BOOL;
            for (int p = 0; p < N_PAIRS + N_RANDOM; p++) {
                tcase c = {.op = ops[o].op, .opset = ops[o].opset, .n_in = 2};
                c.dt[0] = c.dt[1] = dt;
                if (p < N_PAIRS) {
                    c.sh[0] = pairs[p].a;
                    c.sh[1] = pairs[p].b;
                } else {
                    shape out = random_shape();
                    c.sh[0] = derive(&out);
                    c.sh[1] = derive(&out);
                }
                c.fl[0] = FILL_SPECIAL;
                c.fl[1] = strcmp(c.op, "Div") == 0 ? FILL_NONZERO : FILL_SPECIAL;
                run_case(&c, NULL, false);
            }
        }
    /* Pow: float base; exponent float (opset 7 and 15), int32, int64 (opset 12+) */
    static const struct {
        int64_t opset;
        pc_dtype e;
    } pows[] = {{7, PC_DTYPE_FLOAT}, {15, PC_DTYPE_FLOAT}, {12, PC_DTYPE_INT32}, {15, PC_DTYPE_INT64}};
    for (size_t q = 0; q < sizeof pows / sizeof pows[0]; q++)
        for (int p = 0; p < N_PAIRS + N_RANDOM; p++) {
            tcase c = {.op = "Pow", .opset = pows[q].opset, .n_in = 2};
            c.dt[0] = PC_DTYPE_FLOAT;
            c.dt[1] = pows[q].e;
            shape out = random_shape();
            c.sh[0] = p < N_PAIRS ? pairs[p].a : derive(&out);
            c.sh[1] = p < N_PAIRS ? pairs[p].b : derive(&out);
            c.fl[0] = FILL_SPECIAL;
            c.fl[1] =
                pows[q].e == PC_DTYPE_FLOAT ? FILL_SPECIAL : FILL_PLAIN; /* 2^(2^31) is inf either way */
            run_case(&c, NULL, false);
        }
    /* PRelu: the slope broadcasts to X */
    for (int p = 0; p < 40; p++) {
        tcase c = {.op = "PRelu", .opset = p % 2 ? 7 : 16, .n_in = 2};
        c.dt[0] = c.dt[1] = PC_DTYPE_FLOAT;
        c.sh[0] = p == 0 ? shp(4, 2, 3, 4, 5) : random_shape();
        c.sh[1] = p == 0 ? shp(3, 3, 1, 1, 0) : derive(&c.sh[0]);
        c.fl[0] = c.fl[1] = FILL_SPECIAL;
        run_case(&c, NULL, false);
    }
}

static void test_variadic(void)
{
    static const struct {
        const char *op;
        int64_t opset;
        int types;
    } ops[] = {{"Max", 8, 1}, {"Max", 13, 7}, {"Min", 12, 7}, {"Sum", 8, 1}, {"Sum", 13, 1}, {"Mean", 13, 1}};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (int t = 0; t < 3; t++) {
            if (!(ops[o].types & (1 << t))) continue;
            for (int p = 0; p < 40; p++) {
                tcase c = {.op = ops[o].op, .opset = ops[o].opset, .n_in = 1 + (uint32_t)(p % 4)};
                shape out = p < 4 ? shp(4, 2, 3, 4, 5) : random_shape();
                for (uint32_t i = 0; i < c.n_in; i++) {
                    c.dt[i] = num_types[t];
                    /* the first cases: [2,3,4,5] with a per-channel and a scalar operand */
                    c.sh[i] = p >= 4   ? derive(&out)
                              : i == 1 ? shp(3, 3, 1, 1, 0)
                              : i == 2 ? shp(0, 0, 0, 0, 0)
                                       : out;
                    c.fl[i] = FILL_SPECIAL;
                }
                run_case(&c, NULL, false);
            }
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
static pc_status prepare_only(const char *op, int64_t opset, uint32_t n_in, const pc_dtype *dt,
                              const shape *sh, pc_dtype out_dt, shape out_sh, char *msg, size_t msg_size)
{
    tcase c = {.op = op, .opset = opset, .n_in = n_in};
    for (uint32_t i = 0; i < n_in; i++) {
        c.dt[i] = dt[i];
        c.sh[i] = sh[i];
    }
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
    st = prepare_only("Pow", 15, 2, (pc_dtype[]){PC_DTYPE_FLOAT, PC_DTYPE_DOUBLE}, (shape[]){s4, s0},
                      PC_DTYPE_FLOAT, s4, msg, sizeof msg);
    CHECK_MSG(st == PC_ERR_UNSUPPORTED, "Pow with a double exponent: %s (%s)", pc_status_name(st), msg);
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

    /* integer division by zero is an error at run time, not a crash or a made-up value */
    for (int t = 1; t < 3; t++) {
        tcase c = {.op = "Div", .opset = 13, .n_in = 2};
        c.dt[0] = c.dt[1] = num_types[t];
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
            CHECK_MSG(st == PC_ERR_VALUE && strstr(r.err.message, "zero"), "%s Div by 0: %s (%s)",
                      pc_dtype_name(c.dt[0]), pc_status_name(st), r.err.message);
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
        {"Add", 6, PC_DTYPE_FLOAT, false},        {"Add", 7, PC_DTYPE_FLOAT, true},
        {"Add", 21, PC_DTYPE_INT64, true},        {"Add", 22, PC_DTYPE_FLOAT, false},
        {"Add", 13, PC_DTYPE_DOUBLE, false},      {"Equal", 10, PC_DTYPE_FLOAT, false},
        {"Equal", 11, PC_DTYPE_FLOAT, true},      {"Equal", 7, PC_DTYPE_INT64, true},
        {"Less", 8, PC_DTYPE_INT32, false},       {"Less", 9, PC_DTYPE_INT32, true},
        {"Max", 7, PC_DTYPE_FLOAT, false},        {"Max", 11, PC_DTYPE_INT64, false},
        {"Max", 12, PC_DTYPE_INT64, true},        {"Clip", 11, PC_DTYPE_INT32, false},
        {"Clip", 12, PC_DTYPE_INT32, true},       {"Clip", 5, PC_DTYPE_FLOAT, true},
        {"HardSwish", 13, PC_DTYPE_FLOAT, false}, {"Round", 10, PC_DTYPE_FLOAT, false},
        {"Where", 9, PC_DTYPE_BOOL, true},        {"Where", 9, PC_DTYPE_FLOAT, false},
        {"Relu", 14, PC_DTYPE_INT32, false},      {"Sum", 7, PC_DTYPE_FLOAT, false},
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

int main(void)
{
    test_unary();
    test_clip();
    test_binary();
    test_variadic();
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
