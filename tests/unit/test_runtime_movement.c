/* The runtime's data movement kernels (core/runtime/kernels/movement.c) against the reference executor.
 *
 * Every case is a one-node model with random shapes (size-0 dims included), attributes (negative axes,
 * out-of-range slice bounds, negative pads and steps) and element types; index, shape and pads inputs are
 * initializers (the kernel sees their values in prepare) or graph inputs (it sees them only in run). The
 * reference runs the model; core's shape inference gives the output dims where it can (checked against the
 * reference's), the reference's dims otherwise, as the session would have them. The kernel found by
 * pc_rt_kernel_find is prepared and run on malloc'ed tensors with guard bytes after each output, and every
 * output must equal the reference's byte for byte (Cast, CumSum and the scatter reductions: bit for bit with
 * NaN payloads free, as pc_data_compare_exact). Then the refusals: output dims that disagree with the inputs
 * (PC_ERR_SHAPE with nothing written), out-of-range indices of Gather, GatherElements, ScatterElements,
 * GatherND, ScatterND and ReverseSequence (PC_ERR_VALUE in run), and what the kernels do not implement
 * (PC_ERR_UNSUPPORTED). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/runtime/rt_internal.h"
#include "reference/reference.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

static uint64_t rng_state = 0x6d6f76656d656e74ull;

static uint32_t draw(uint32_t bound)
{
    return (uint32_t)(pc_splitmix64(&rng_state) % bound);
}

/* uniform in [lo, hi] */
static int64_t draw_in(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(pc_splitmix64(&rng_state) % (uint64_t)(hi - lo + 1));
}

static bool one_in(uint32_t n)
{
    return draw(n) == 0;
}

static const pc_dtype move_types[] = {
    PC_DTYPE_FLOAT,  PC_DTYPE_INT64,  PC_DTYPE_INT32,    PC_DTYPE_UINT8, PC_DTYPE_INT8,
    PC_DTYPE_BOOL,   PC_DTYPE_DOUBLE, PC_DTYPE_FLOAT16,  PC_DTYPE_INT16, PC_DTYPE_UINT16,
    PC_DTYPE_UINT32, PC_DTYPE_UINT64, PC_DTYPE_BFLOAT16,
};
enum { N_MOVE_TYPES = sizeof move_types / sizeof move_types[0] };

static pc_dtype any_type(void)
{
    return move_types[draw(N_MOVE_TYPES)];
}

/* dims in [1, hi], one in `zero_in` of them 0 (0: never) */
static void rand_dims(int32_t rank, int64_t *dims, int64_t hi, uint32_t zero_in)
{
    for (int32_t d = 0; d < rank; d++)
        dims[d] = zero_in && one_in(zero_in) ? 0 : draw_in(1, hi);
}

static uint64_t prod_dims(int32_t rank, const int64_t *dims)
{
    uint64_t n = 1;
    for (int32_t d = 0; d < rank; d++)
        n *= (uint64_t)dims[d];
    return n;
}

/* "[2,3,4]" (cut short to fit) */
static const char *dims_str(char *buf, size_t size, int32_t rank, const int64_t *dims)
{
    size_t o = (size_t)snprintf(buf, size, "[");
    for (int32_t d = 0; d < rank && o < size; d++)
        o += (size_t)snprintf(buf + o, size - o, "%s%lld", d ? "," : "", (long long)dims[d]);
    if (o < size) snprintf(buf + o, size - o, "]");
    return buf;
}

enum { MAX_IO = 16, GUARD = 32 };

typedef struct tcase {
    pc_model *m;
    pc_node *node;
    int64_t opset;
    char label[192];
    uint32_t n_feeds;
    pc_data *feeds[MAX_IO]; /* data of the graph inputs, in order */
} tcase;

static int n_compared, n_inferred, n_refusals, n_inference_bugs;

static void tc_begin(tcase *tc, int64_t opset, const char *fmt, ...) PC_PRINTF(3, 4);
static void tc_begin(tcase *tc, int64_t opset, const char *fmt, ...)
{
    memset(tc, 0, sizeof *tc);
    tc->m = pt_model(opset);
    tc->opset = opset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tc->label, sizeof tc->label, fmt, ap);
    va_end(ap);
}

static void tc_end(tcase *tc)
{
    for (uint32_t i = 0; i < tc->n_feeds; i++)
        pc_data_unref(tc->feeds[i]);
    pc_model_free(tc->m);
}

static void fill_random(pc_data *d)
{
    size_t es = pc_dtype_bits(d->dtype) / 8;
    uint8_t *p = d->data;
    for (uint64_t i = 0; i < d->n_elements * es; i++)
        p[i] = (uint8_t)pc_splitmix64(&rng_state);
    if (d->dtype == PC_DTYPE_BOOL)
        for (uint64_t i = 0; i < d->n_elements; i++)
            p[i] &= 1;
}

/* A graph input with random data (returned for callers that write their own). */
static pc_data *tc_input(tcase *tc, const char *name, pc_dtype dt, int32_t rank, const int64_t *dims)
{
    pc_error err;
    pt_input(tc->m, name, dt, rank, dims);
    pc_data *d = pc_data_new_tensor(dt, rank, dims, &err);
    if (!d) pt_die(name, &err);
    fill_random(d);
    if (tc->n_feeds == MAX_IO) pt_die("too many inputs", NULL);
    tc->feeds[tc->n_feeds++] = d;
    return d;
}

/* An int list as an initializer or a graph input, int64 or int32; rank 0 when scalar. */
static void tc_ints(tcase *tc, const char *name, bool as_const, pc_dtype dt, bool scalar, size_t n,
                    const int64_t *v)
{
    int64_t dim = (int64_t)n;
    int32_t rank = scalar ? 0 : 1;
    if (as_const) {
        pc_value *c = pt_const(tc->m, name, dt, rank, &dim, NULL);
        for (size_t i = 0; i < n; i++) {
            if (dt == PC_DTYPE_INT32) {
                int32_t w = (int32_t)v[i];
                memcpy((uint8_t *)c->initializer->data + i * 4, &w, 4);
            } else {
                memcpy((uint8_t *)c->initializer->data + i * 8, &v[i], 8);
            }
        }
        return;
    }
    pc_data *d = tc_input(tc, name, dt, rank, &dim);
    for (size_t i = 0; i < n; i++) {
        if (dt == PC_DTYPE_INT32) {
            int32_t w = (int32_t)v[i];
            memcpy((uint8_t *)d->data + i * 4, &w, 4);
        } else {
            memcpy((uint8_t *)d->data + i * 8, &v[i], 8);
        }
    }
}

/* The node; its outputs become graph outputs in order. */
static pc_node *tc_node(tcase *tc, const char *op, const char *domain, const char *inputs,
                        const char *outputs)
{
    tc->node = pt_node(tc->m, op, domain, inputs, outputs, NULL);
    for (uint32_t i = 0; i < tc->node->n_outputs; i++)
        if (tc->node->outputs[i]) pt_output(tc->m, tc->node->outputs[i]->name);
    return tc->node;
}

static void attr_int(tcase *tc, const char *name, int64_t v)
{
    pc_error err;
    if (pc_node_set_attr_int(tc->node, name, v, &err) != PC_OK) pt_die(name, &err);
}

static void attr_ints(tcase *tc, const char *name, size_t n, const int64_t *v)
{
    pc_error err;
    if (pc_node_set_attr_ints(tc->node, name, n, v, &err) != PC_OK) pt_die(name, &err);
}

static void attr_float(tcase *tc, const char *name, float v)
{
    pc_error err;
    if (pc_node_set_attr_float(tc->node, name, v, &err) != PC_OK) pt_die(name, &err);
}

static void attr_string(tcase *tc, const char *name, const char *v)
{
    pc_error err;
    if (pc_node_set_attr_string(tc->node, name, v, &err) != PC_OK) pt_die(name, &err);
}

/* ---- running a kernel */

typedef struct bound {
    pc_rt_tensor ins[MAX_IO], outs[MAX_IO];
    const pc_rt_tensor *in[MAX_IO];
    pc_rt_tensor *out[MAX_IO];
    void *feed_data[MAX_IO]; /* run-time data of the inputs that are graph inputs */
    size_t out_bytes[MAX_IO];
    uint32_t n_in, n_out;
} bound;

/* Initializers carry their data from prepare on; graph inputs get theirs only for run. */
static void bind_inputs(const tcase *tc, bound *b)
{
    memset(b, 0, sizeof *b);
    const pc_node *n = tc->node;
    const pc_graph *g = tc->m->graph;
    b->n_in = n->n_inputs;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        const pc_value *v = n->inputs[i];
        if (!v) continue;
        pc_rt_tensor *t = &b->ins[i];
        if (v->initializer) {
            const pc_tensor *c = v->initializer;
            t->dtype = c->dtype;
            t->rank = c->rank;
            if (c->rank) memcpy(t->dims, c->dims, (size_t)c->rank * sizeof *t->dims);
            t->n = c->n_elements;
            t->data = c->data;
        } else {
            uint32_t f = 0;
            for (uint32_t j = 0; j < g->n_inputs && g->inputs[j] != v; j++)
                f += !g->inputs[j]->initializer;
            const pc_data *d = tc->feeds[f];
            t->dtype = d->dtype;
            t->rank = d->rank;
            if (d->rank) memcpy(t->dims, d->dims, (size_t)d->rank * sizeof *t->dims);
            t->n = d->n_elements;
            t->data = NULL;
            b->feed_data[i] = d->data;
        }
        b->in[i] = t;
    }
}

/* An output buffer of exactly its size plus guard bytes, all 0xA5. */
static void bind_output(bound *b, uint32_t i, pc_dtype dt, int32_t rank, const int64_t *dims)
{
    pc_rt_tensor *t = &b->outs[i];
    t->dtype = dt;
    t->rank = rank;
    t->n = 1;
    for (int32_t d = 0; d < rank; d++) {
        t->dims[d] = dims[d];
        t->n *= (uint64_t)dims[d];
    }
    b->out_bytes[i] = (size_t)t->n * (pc_dtype_bits(dt) / 8);
    t->data = malloc(b->out_bytes[i] + GUARD);
    if (!t->data) pt_die("malloc", NULL);
    memset(t->data, 0xA5, b->out_bytes[i] + GUARD);
    b->out[i] = t;
    if (i >= b->n_out) b->n_out = i + 1;
}

static void unbind(bound *b)
{
    for (uint32_t i = 0; i < MAX_IO; i++)
        if (b->out[i]) free(b->out[i]->data);
}

static bool untouched(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0xA5) return false;
    return true;
}

static pc_dtype input0_type(const tcase *tc)
{
    const pc_node *n = tc->node;
    return n->n_inputs && n->inputs[0] ? n->inputs[0]->type.elem : PC_DTYPE_UNDEFINED;
}

/* prepare, then (when it passed and `run` is set) run with the graph inputs' data in place. */
static pc_status call_kernel(const tcase *tc, bound *b, bool run, pc_status *prepared, pc_error *err)
{
    pc_error_clear(err);
    const pc_rt_kernel *row = pc_rt_kernel_find(tc->node, tc->opset, input0_type(tc));
    *prepared = PC_ERR_INTERNAL;
    if (!row) return pc_error_set(err, PC_ERR_INTERNAL, "no kernel row claims the node");
    pc_rt_kernel_ctx k = {.node = tc->node,
                          .opset = tc->opset,
                          .n_in = b->n_in,
                          .n_out = b->n_out,
                          .in = b->in,
                          .out = b->out,
                          .threads = 1,
                          .err = err};
    size_t scratch = 0;
    *prepared = row->prepare ? row->prepare(&k, &scratch) : PC_OK;
    if (*prepared != PC_OK || !run) return *prepared;
    void *mem = scratch ? aligned_alloc(64, (scratch + 63) / 64 * 64) : NULL;
    k.scratch = mem;
    k.scratch_bytes = scratch;
    for (uint32_t i = 0; i < b->n_in; i++)
        if (b->feed_data[i]) b->ins[i].data = b->feed_data[i];
    pc_status st = row->run(&k);
    free(mem);
    return st;
}

/* Output j given the (wrong) dims shape inference made: the kernel must refuse them, in prepare or in run,
 * and write nothing. */
static void refuse_dims(const tcase *tc, uint32_t j, pc_dtype dt, int32_t rank, const int64_t *dims)
{
    pc_error err;
    bound b;
    bind_inputs(tc, &b);
    b.n_out = tc->node->n_outputs;
    for (uint32_t i = 0; i < tc->node->n_outputs; i++) {
        const pc_value *v = tc->node->outputs[i];
        int64_t d[PC_MAX_RANK];
        if (i == j)
            bind_output(&b, i, dt, rank, dims);
        else if (v && pc_value_dims(v, d))
            bind_output(&b, i, v->type.elem, v->type.shape.rank, d);
    }
    pc_status prepared, st = call_kernel(tc, &b, true, &prepared, &err);
    CHECK_MSG(st == PC_ERR_SHAPE, "%s: the kernel took output %u dims that disagree with its inputs (%s: %s)",
              tc->label, j, pc_status_name(st), err.message);
    CHECK_MSG(untouched(b.out[j]->data, b.out_bytes[j] + GUARD), "%s: output %u was written", tc->label, j);
    n_inference_bugs++;
    unbind(&b);
}

/* The whole comparison for one case; nan_free: floats compare as pc_data_compare_exact (Cast). */
static void tc_check(tcase *tc, bool nan_free)
{
    pc_error err;
    pc_data **ref = NULL;
    const pc_node *node = tc->node;
    pc_status st = pc_ref_run(tc->m, tc->n_feeds, tc->feeds, &ref, &err);
    CHECK_MSG(st == PC_OK, "%s: the reference refused the case: %s", tc->label, err.message);
    if (st != PC_OK) {
        tc_end(tc);
        return;
    }
    bool inferred = pc_graph_infer_shapes(tc->m->graph, &err) == PC_OK;
    bound b;
    bind_inputs(tc, &b);
    b.n_out = node->n_outputs;
    for (uint32_t j = 0, g = 0; j < node->n_outputs; j++) {
        const pc_value *v = node->outputs[j];
        if (!v) continue;
        const pc_data *e = ref[g++];
        int64_t dims[PC_MAX_RANK];
        if (inferred && v->type.shape.rank == e->rank && pc_value_dims(v, dims)) {
            bool same = v->type.elem == e->dtype;
            for (int32_t d = 0; d < e->rank; d++)
                same = same && dims[d] == e->dims[d];
            n_inferred++;
            if (!same) { /* a shape inference bug (the size-0 negative-step Slice was one): the session
                          * would hand the kernel these dims; the kernel must refuse them, and core is wrong
                          */
                char di[128], dr[128];
                CHECK_MSG(false, "%s: shape inference gives output %u %s %s, the reference %s %s", tc->label,
                          j, pc_dtype_name(v->type.elem), dims_str(di, sizeof di, e->rank, dims),
                          pc_dtype_name(e->dtype), dims_str(dr, sizeof dr, e->rank, e->dims));
                refuse_dims(tc, j, v->type.elem, e->rank, dims);
            }
        }
        bind_output(&b, j, e->dtype, e->rank, e->dims);
    }
    pc_status prepared;
    st = call_kernel(tc, &b, true, &prepared, &err);
    CHECK_MSG(st == PC_OK, "%s: %s: %s (%s)", tc->label, prepared == PC_OK ? "run" : "prepare",
              pc_status_name(st), err.message);
    for (uint32_t j = 0, g = 0; st == PC_OK && j < node->n_outputs; j++) {
        if (!node->outputs[j]) continue;
        const pc_data *e = ref[g++];
        const pc_rt_tensor *y = b.out[j];
        bool same;
        if (nan_free) {
            pc_error e2;
            pc_data *a = pc_data_new_tensor(y->dtype, y->rank, y->dims, &e2);
            if (!a) pt_die("tensor", &e2);
            if (b.out_bytes[j]) memcpy(a->data, y->data, b.out_bytes[j]);
            pc_compare_result r;
            same = pc_data_compare_exact(e, a, &r) == PC_COMPARE_EQUAL;
            CHECK_MSG(same, "%s: output %u: %s", tc->label, j, r.detail);
            pc_data_unref(a);
        } else {
            same = e->n_bytes == b.out_bytes[j] && (!e->n_bytes || memcmp(e->data, y->data, e->n_bytes) == 0);
            size_t first = 0;
            while (same == false && first < e->n_bytes && first < b.out_bytes[j] &&
                   ((const uint8_t *)e->data)[first] == ((const uint8_t *)y->data)[first])
                first++;
            CHECK_MSG(same, "%s: output %u differs from the reference (first at byte %zu of %zu)", tc->label,
                      j, first, e->n_bytes);
        }
        CHECK_MSG(untouched((const uint8_t *)y->data + b.out_bytes[j], GUARD),
                  "%s: output %u: written past its end", tc->label, j);
        n_compared += same;
    }
    unbind(&b);
    pc_ref_free_outputs(tc->m, ref);
    tc_end(tc);
}

typedef struct out_spec {
    pc_dtype dt;
    int32_t rank;
    int64_t dims[8];
} out_spec;

/* A refusal: the kernel, given these outputs, must stop with want_prepare (in prepare) or, prepare passing,
 * want_run; nothing is written to any output. */
static void tc_expect(tcase *tc, uint32_t n_out, const out_spec *outs, pc_status want_prepare,
                      pc_status want_run)
{
    pc_error err;
    bound b;
    bind_inputs(tc, &b);
    for (uint32_t j = 0; j < n_out; j++)
        bind_output(&b, j, outs[j].dt, outs[j].rank, outs[j].dims);
    pc_status prepared, st = call_kernel(tc, &b, true, &prepared, &err);
    CHECK_MSG(prepared == want_prepare, "%s: prepare gave %s (%s), expected %s", tc->label,
              pc_status_name(prepared), err.message, pc_status_name(want_prepare));
    if (want_prepare == PC_OK)
        CHECK_MSG(st == want_run, "%s: run gave %s (%s), expected %s", tc->label, pc_status_name(st),
                  err.message, pc_status_name(want_run));
    if (st != PC_OK) CHECK_MSG(err.message[0] != '\0', "%s: an error without a message", tc->label);
    for (uint32_t j = 0; j < n_out; j++)
        CHECK_MSG(untouched(b.out[j]->data, b.out_bytes[j] + GUARD), "%s: output %u was written", tc->label,
                  j);
    n_refusals++;
    unbind(&b);
    tc_end(tc);
}

/* ---- the cases, one generator per op */

static void case_identity(int t)
{
    tcase tc;
    int32_t r = (int32_t)draw(5);
    int64_t dims[PC_MAX_RANK];
    rand_dims(r, dims, 4, 10);
    pc_dtype dt = any_type();
    tc_begin(&tc, one_in(2) ? 13 : 16, "Identity #%d %s", t, pc_dtype_name(dt));
    tc_input(&tc, "x", dt, r, dims);
    tc_node(&tc, "Identity", "", "x", "y");
    tc_check(&tc, false);
}

static void case_reshape(int t)
{
    static const int64_t opsets[] = {5, 13, 14};
    tcase tc;
    int64_t op = opsets[draw(3)];
    int32_t r = (int32_t)draw(5);
    int64_t dims[PC_MAX_RANK], shape[PC_MAX_RANK];
    bool zeros = op >= 14 && one_in(4);
    rand_dims(r, dims, 4, zeros ? 3 : 0);
    /* the target: runs of input dims merged, 1s inserted */
    int32_t n = 0;
    for (int32_t d = 0; d < r;) {
        int32_t run = 1 + (int32_t)draw((uint32_t)(r - d));
        int64_t p = 1;
        for (int32_t k = 0; k < run; k++)
            p *= dims[d + k];
        if (one_in(4)) shape[n++] = 1;
        shape[n++] = p;
        d += run;
    }
    if (one_in(4)) shape[n++] = 1;
    bool any_zero = false;
    for (int32_t i = 0; i < n; i++)
        any_zero = any_zero || shape[i] == 0;
    bool allowzero = any_zero; /* literal zeros need allowzero (opset 14) */
    if (!any_zero) {
        for (int32_t i = 0; i < n && i < r; i++) /* 0: copy the input's dim */
            if (shape[i] == dims[i] && one_in(3)) shape[i] = 0;
        if (n && one_in(2)) shape[draw((uint32_t)n)] = -1;
    }
    pc_dtype dt = any_type();
    tc_begin(&tc, op, "Reshape #%d opset %lld %s rank %d -> %d", t, (long long)op, pc_dtype_name(dt), (int)r,
             (int)n);
    tc_input(&tc, "x", dt, r, dims);
    tc_ints(&tc, "shape", !one_in(3), PC_DTYPE_INT64, false, (size_t)n, shape);
    tc_node(&tc, "Reshape", "", "x,shape", "y");
    if (allowzero) attr_int(&tc, "allowzero", 1);
    tc_check(&tc, false);
}

static void case_flatten(int t)
{
    tcase tc;
    int64_t op = one_in(2) ? 9 : 13;
    int32_t r = (int32_t)draw(5);
    int64_t dims[PC_MAX_RANK];
    rand_dims(r, dims, 4, 8);
    int64_t axis = draw_in(op < 11 ? 0 : -r, r);
    pc_dtype dt = any_type();
    tc_begin(&tc, op, "Flatten #%d opset %lld axis %lld rank %d", t, (long long)op, (long long)axis, (int)r);
    tc_input(&tc, "x", dt, r, dims);
    tc_node(&tc, "Flatten", "", "x", "y");
    attr_int(&tc, "axis", axis);
    tc_check(&tc, false);
}

static void case_squeeze(int t)
{
    tcase tc;
    int64_t op = one_in(2) ? 11 : 13;
    int32_t r = (int32_t)draw(6);
    int64_t dims[PC_MAX_RANK], axes[PC_MAX_RANK];
    size_t n = 0;
    rand_dims(r, dims, 4, 10);
    for (int32_t d = 0; d < r; d++) {
        if (one_in(2)) dims[d] = 1;
        if (dims[d] == 1 && one_in(2)) axes[n++] = one_in(2) ? d : d - r;
    }
    pc_dtype dt = any_type();
    tc_begin(&tc, op, "Squeeze #%d opset %lld %zu axes of rank %d", t, (long long)op, n, (int)r);
    tc_input(&tc, "x", dt, r, dims);
    bool given = n > 0 && !one_in(4);
    if (given && op >= 13) tc_ints(&tc, "axes", !one_in(3), PC_DTYPE_INT64, false, n, axes);
    tc_node(&tc, "Squeeze", "", given && op >= 13 ? "x,axes" : "x", "y");
    if (given && op < 13) attr_ints(&tc, "axes", n, axes);
    tc_check(&tc, false);
}

static void case_unsqueeze(int t)
{
    tcase tc;
    int64_t op = one_in(2) ? 11 : 13;
    int32_t r = (int32_t)draw(4), n = 1 + (int32_t)draw(3), R = r + n;
    int64_t dims[PC_MAX_RANK], axes[PC_MAX_RANK];
    bool used[PC_MAX_RANK] = {false};
    rand_dims(r, dims, 4, 10);
    for (int32_t i = 0; i < n; i++) {
        int32_t a;
        do
            a = (int32_t)draw((uint32_t)R);
        while (used[a]);
        used[a] = true;
        axes[i] = one_in(2) ? a : a - R;
    }
    pc_dtype dt = any_type();
    tc_begin(&tc, op, "Unsqueeze #%d opset %lld %d axes into rank %d", t, (long long)op, (int)n, (int)R);
    tc_input(&tc, "x", dt, r, dims);
    if (op >= 13) tc_ints(&tc, "axes", !one_in(3), PC_DTYPE_INT64, false, (size_t)n, axes);
    tc_node(&tc, "Unsqueeze", "", op >= 13 ? "x,axes" : "x", "y");
    if (op < 13) attr_ints(&tc, "axes", (size_t)n, axes);
    tc_check(&tc, false);
}

static void case_transpose(int t)
{
    tcase tc;
    bool big = one_in(3); /* large enough for the tiled path */
    int32_t r = big ? 2 + (int32_t)draw(3) : (int32_t)draw(6);
    int64_t dims[PC_MAX_RANK], perm[PC_MAX_RANK];
    rand_dims(r, dims, big ? 3 : 4, big ? 0 : 10);
    if (big) {
        dims[r - 1] = draw_in(4, 40);
        dims[r - 2] = draw_in(4, 40);
    }
    for (int32_t d = 0; d < r; d++)
        perm[d] = d;
    for (int32_t d = r - 1; d > 0; d--) {
        int32_t j = (int32_t)draw((uint32_t)d + 1);
        int64_t tmp = perm[d];
        perm[d] = perm[j];
        perm[j] = tmp;
    }
    if (big && one_in(2)) { /* the matrix transpose: swap the last two */
        for (int32_t d = 0; d < r; d++)
            perm[d] = d;
        perm[r - 1] = r - 2;
        perm[r - 2] = r - 1;
    }
    bool given = !one_in(4);
    pc_dtype dt = any_type();
    tc_begin(&tc, 13, "Transpose #%d rank %d %s%s", t, (int)r, pc_dtype_name(dt), given ? "" : " (no perm)");
    tc_input(&tc, "x", dt, r, dims);
    tc_node(&tc, "Transpose", "", "x", "y");
    if (given) attr_ints(&tc, "perm", (size_t)r, perm);
    tc_check(&tc, false);
}

static void case_concat(int t)
{
    static const int64_t opsets[] = {4, 11, 13};
    tcase tc;
    int64_t op = opsets[draw(3)];
    int32_t r = 1 + (int32_t)draw(4), n = 1 + (int32_t)draw(4);
    int64_t dims[PC_MAX_RANK];
    rand_dims(r, dims, 3, 10);
    int64_t axis = draw_in(op < 11 ? 0 : -r, r - 1);
    int32_t a = (int32_t)(axis < 0 ? axis + r : axis);
    pc_dtype dt = any_type();
    tc_begin(&tc, op, "Concat #%d opset %lld %d inputs axis %lld rank %d", t, (long long)op, (int)n,
             (long long)axis, (int)r);
    char names[64] = "";
    for (int32_t i = 0; i < n; i++) {
        char name[8];
        snprintf(name, sizeof name, "x%d", (int)i);
        dims[a] = draw_in(0, 3);
        tc_input(&tc, name, dt, r, dims);
        strcat(names, i ? "," : "");
        strcat(names, name);
    }
    tc_node(&tc, "Concat", "", names, "y");
    attr_int(&tc, "axis", axis);
    tc_check(&tc, false);
}

static void case_split(int t)
{
    static const int64_t opsets[] = {11, 13, 18};
    tcase tc;
    int64_t op = opsets[draw(3)];
    int32_t r = 1 + (int32_t)draw(4), n = 1 + (int32_t)draw(4);
    int64_t dims[PC_MAX_RANK], sizes[8];
    rand_dims(r, dims, 3, 12);
    int64_t axis = draw_in(-r, r - 1);
    int32_t a = (int32_t)(axis < 0 ? axis + r : axis);
    bool listed = one_in(2);
    if (listed) {
        int64_t sum = 0;
        for (int32_t i = 0; i < n; i++)
            sum += sizes[i] = draw_in(0, 3);
        dims[a] = sum;
    } else if (op < 18 || one_in(2)) {
        dims[a] = n * draw_in(0, 3); /* even parts */
    } else {                         /* uneven (opset 18): ceil chunks while they last */
        int64_t dim = draw_in(0, 9), chunk = dim / n + (dim % n != 0);
        dims[a] = n == 1 || chunk <= dim / (n - 1) ? dim : n;
    }
    pc_dtype dt = any_type();
    tc_begin(&tc, op, "Split #%d opset %lld %d outputs axis %lld of %lld%s", t, (long long)op, (int)n,
             (long long)axis, (long long)dims[a], listed ? " listed" : "");
    tc_input(&tc, "x", dt, r, dims);
    if (listed && op >= 13) tc_ints(&tc, "split", !one_in(3), PC_DTYPE_INT64, false, (size_t)n, sizes);
    char outs[64] = "";
    for (int32_t i = 0; i < n; i++) {
        char name[8];
        snprintf(name, sizeof name, "y%d", (int)i);
        strcat(outs, i ? "," : "");
        strcat(outs, name);
    }
    tc_node(&tc, "Split", "", listed && op >= 13 ? "x,split" : "x", outs);
    attr_int(&tc, "axis", axis);
    if (listed && op < 13) attr_ints(&tc, "split", (size_t)n, sizes);
    if (!listed && op >= 18 && one_in(2)) attr_int(&tc, "num_outputs", n);
    tc_check(&tc, false);
}

static int64_t slice_bound(int64_t dim, bool extremes)
{
    if (extremes && one_in(8)) return one_in(2) ? INT64_MAX : INT64_MIN;
    return draw_in(-dim - 2, dim + 2);
}

static void case_slice(int t)
{
    static const int64_t opsets[] = {9, 10, 13};
    tcase tc;
    int64_t op = opsets[draw(3)];
    int32_t r = 1 + (int32_t)draw(4), n = 1 + (int32_t)draw((uint32_t)r);
    int64_t dims[PC_MAX_RANK], starts[PC_MAX_RANK], ends[PC_MAX_RANK], axes[PC_MAX_RANK], steps[PC_MAX_RANK];
    bool used[PC_MAX_RANK] = {false};
    rand_dims(r, dims, 5, 12);
    bool with_axes = n < r || !one_in(3), with_steps = op >= 10 && !one_in(3);
    pc_dtype it = op >= 10 && one_in(3) ? PC_DTYPE_INT32 : PC_DTYPE_INT64;
    for (int32_t i = 0; i < n; i++) {
        int32_t ax = i;
        if (with_axes) {
            do
                ax = (int32_t)draw((uint32_t)r);
            while (used[ax]);
            used[ax] = true;
        }
        axes[i] = one_in(2) ? ax : ax - r;
        starts[i] = slice_bound(dims[ax], it == PC_DTYPE_INT64);
        ends[i] = slice_bound(dims[ax], it == PC_DTYPE_INT64);
        steps[i] = with_steps ? (one_in(2) ? 1 : -1) * draw_in(1, 3) : 1;
    }
    pc_dtype dt = any_type();
    tc_begin(&tc, op, "Slice #%d opset %lld %d of rank %d %s", t, (long long)op, (int)n, (int)r,
             pc_dtype_name(dt));
    for (int32_t i = 0; i < n; i++) {
        size_t o = strlen(tc.label);
        snprintf(tc.label + o, sizeof tc.label - o, " [axis %lld of %lld: %lld:%lld:%lld]",
                 (long long)axes[i], (long long)dims[axes[i] < 0 ? axes[i] + r : axes[i]],
                 (long long)starts[i], (long long)ends[i], (long long)steps[i]);
    }
    tc_input(&tc, "x", dt, r, dims);
    if (op >= 10) {
        bool c = !one_in(3);
        tc_ints(&tc, "starts", c, it, false, (size_t)n, starts);
        tc_ints(&tc, "ends", c, it, false, (size_t)n, ends);
        if (with_axes) tc_ints(&tc, "axes", c, it, false, (size_t)n, axes);
        if (with_steps) tc_ints(&tc, "steps", c, it, false, (size_t)n, steps);
        tc_node(&tc, "Slice", "",
                with_steps ? (with_axes ? "x,starts,ends,axes,steps" : "x,starts,ends,,steps")
                           : (with_axes ? "x,starts,ends,axes" : "x,starts,ends"),
                "y");
    } else {
        tc_node(&tc, "Slice", "", "x", "y");
        attr_ints(&tc, "starts", (size_t)n, starts);
        attr_ints(&tc, "ends", (size_t)n, ends);
        if (with_axes) attr_ints(&tc, "axes", (size_t)n, axes);
    }
    tc_check(&tc, false);
}

static void case_gather(int t)
{
    tcase tc;
    int64_t op = one_in(2) ? 11 : 13;
    int32_t r = 1 + (int32_t)draw(4), q = (int32_t)draw(3);
    int64_t dims[PC_MAX_RANK], idims[PC_MAX_RANK], idx[64];
    rand_dims(r, dims, 4, 10);
    rand_dims(q, idims, 3, 8);
    int64_t axis = draw_in(-r, r - 1);
    int32_t a = (int32_t)(axis < 0 ? axis + r : axis);
    if (dims[a] == 0 && q) idims[0] = 0; /* no valid index into an empty axis */
    if (dims[a] == 0 && !q) dims[a] = 2;
    uint64_t ni = prod_dims(q, idims);
    for (uint64_t j = 0; j < ni; j++)
        idx[j] = draw_in(-dims[a], dims[a] - 1);
    pc_dtype dt = any_type(), it = one_in(2) ? PC_DTYPE_INT32 : PC_DTYPE_INT64;
    tc_begin(&tc, op, "Gather #%d opset %lld axis %lld rank %d indices rank %d %s", t, (long long)op,
             (long long)axis, (int)r, (int)q, pc_dtype_name(it));
    tc_input(&tc, "x", dt, r, dims);
    pc_data *d = NULL;
    pc_value *c = NULL;
    if (one_in(2))
        c = pt_const(tc.m, "idx", it, q, idims, NULL);
    else
        d = tc_input(&tc, "idx", it, q, idims);
    uint8_t *p = c ? c->initializer->data : d->data;
    for (uint64_t j = 0; j < ni; j++) {
        if (it == PC_DTYPE_INT32) {
            int32_t w = (int32_t)idx[j];
            memcpy(p + j * 4, &w, 4);
        } else {
            memcpy(p + j * 8, &idx[j], 8);
        }
    }
    tc_node(&tc, "Gather", "", "x,idx", "y");
    attr_int(&tc, "axis", axis);
    tc_check(&tc, false);
}

static void case_pad(int t)
{
    static const int64_t opsets[] = {2, 11, 13, 19};
    static const char *const modes[] = {"constant", "reflect", "edge", "wrap"};
    static const float values[] = {0.0f, 1.5f, -2.25f, 300.75f};
    tcase tc;
    int64_t op = opsets[draw(4)];
    int mode = (int)draw(op >= 19 ? 4 : 3);
    int32_t r = 1 + (int32_t)draw(4);
    int64_t dims[PC_MAX_RANK], pads[2 * PC_MAX_RANK];
    rand_dims(r, dims, 4, mode == 0 ? 8 : 0);
    for (int32_t d = 0; d < r; d++) {
        int64_t b = draw_in(-1, 3), e = draw_in(-1, 3);
        /* crops leave the axis at least one element where the mode reads the data */
        if (dims[d] + (b < 0 ? b : 0) + (e < 0 ? e : 0) < (mode == 0 ? 0 : 1)) {
            b = b < 0 ? 0 : b;
            e = e < 0 ? 0 : e;
        }
        pads[d] = b;
        pads[d + r] = e;
    }
    pc_dtype dt = any_type();
    tc_begin(&tc, op, "Pad #%d opset %lld %s rank %d %s", t, (long long)op, modes[mode], (int)r,
             pc_dtype_name(dt));
    tc_input(&tc, "x", dt, r, dims);
    if (op >= 11) {
        const char *ins = "x,pads";
        tc_ints(&tc, "pads", !one_in(3), PC_DTYPE_INT64, false, 2 * (size_t)r, pads);
        if (mode == 0 && one_in(2)) {
            pc_value *c = pt_const(tc.m, "cv", dt, 0, NULL, NULL);
            pc_data tmp = {.dtype = dt, .n_elements = 1, .data = c->initializer->data};
            fill_random(&tmp);
            ins = "x,pads,cv";
        }
        tc_node(&tc, "Pad", "", ins, "y");
    } else {
        tc_node(&tc, "Pad", "", "x", "y");
        attr_ints(&tc, "pads", 2 * (size_t)r, pads);
        if (mode == 0) attr_float(&tc, "value", values[draw(4)]);
    }
    if (mode || one_in(2)) attr_string(&tc, "mode", modes[mode]);
    tc_check(&tc, false);
}

static void case_tile(int t)
{
    tcase tc;
    int32_t r = (int32_t)draw(5);
    int64_t dims[PC_MAX_RANK], reps[PC_MAX_RANK];
    rand_dims(r, dims, 3, 10);
    for (int32_t d = 0; d < r; d++)
        reps[d] = one_in(10) ? 0 : draw_in(1, 3);
    pc_dtype dt = any_type();
    tc_begin(&tc, 13, "Tile #%d rank %d %s", t, (int)r, pc_dtype_name(dt));
    tc_input(&tc, "x", dt, r, dims);
    tc_ints(&tc, "reps", !one_in(3), PC_DTYPE_INT64, false, (size_t)r, reps);
    tc_node(&tc, "Tile", "", "x,reps", "y");
    tc_check(&tc, false);
}

static void case_expand(int t)
{
    tcase tc;
    int32_t r = (int32_t)draw(5), extra = (int32_t)draw(3), n = r + extra, skip = 0;
    int64_t dims[PC_MAX_RANK], shape[PC_MAX_RANK];
    rand_dims(r, dims, 3, 12);
    for (int32_t d = 0; d < r; d++)
        if (one_in(2)) dims[d] = 1;
    for (int32_t i = 0; i < extra; i++)
        shape[i] = draw_in(1, 3);
    for (int32_t d = 0; d < r; d++)
        shape[extra + d] = dims[d] == 1 ? (one_in(10) ? 0 : draw_in(1, 3)) : (one_in(2) ? dims[d] : 1);
    if (!extra && r && one_in(3)) skip = (int32_t)draw((uint32_t)r + 1); /* a shorter shape broadcasts too */
    pc_dtype dt = any_type();
    tc_begin(&tc, 13, "Expand #%d rank %d to %d entries %s", t, (int)r, (int)(n - skip), pc_dtype_name(dt));
    tc_input(&tc, "x", dt, r, dims);
    tc_ints(&tc, "shape", !one_in(3), PC_DTYPE_INT64, false, (size_t)(n - skip), shape + skip);
    tc_node(&tc, "Expand", "", "x,shape", "y");
    tc_check(&tc, false);
}

static void case_shape_size(int t)
{
    tcase tc;
    bool size = one_in(3);
    int64_t op = one_in(2) ? 13 : 15;
    int32_t r = (int32_t)draw(5);
    int64_t dims[PC_MAX_RANK];
    rand_dims(r, dims, 4, 8);
    pc_dtype dt = any_type();
    tc_begin(&tc, op, "%s #%d opset %lld rank %d", size ? "Size" : "Shape", t, (long long)op, (int)r);
    tc_input(&tc, "x", dt, r, dims);
    tc_node(&tc, size ? "Size" : "Shape", "", "x", "y");
    if (!size && op >= 15 && one_in(2)) attr_int(&tc, "start", draw_in(-r - 2, r + 2));
    if (!size && op >= 15 && one_in(2)) attr_int(&tc, "end", draw_in(-r - 2, r + 2));
    tc_check(&tc, false);
}

static void case_constant_of_shape(int t)
{
    tcase tc;
    int64_t op = one_in(2) ? 9 : 12;
    int32_t n = (int32_t)draw(5);
    int64_t shape[PC_MAX_RANK];
    rand_dims(n, shape, 4, 10);
    pc_dtype dt = one_in(4) ? PC_DTYPE_UNDEFINED : any_type();
    tc_begin(&tc, op, "ConstantOfShape #%d rank %d %s", t, (int)n, dt ? pc_dtype_name(dt) : "(default)");
    tc_ints(&tc, "shape", !one_in(3), PC_DTYPE_INT64, false, (size_t)n, shape);
    tc_node(&tc, "ConstantOfShape", "", "shape", "y");
    if (dt) {
        pc_error err;
        int64_t one = 1;
        pc_tensor *v = pc_tensor_create(tc.m, "value", dt, 1, &one, &err);
        if (!v) pt_die("value", &err);
        pc_data tmp = {.dtype = dt, .n_elements = 1, .data = v->data};
        fill_random(&tmp);
        if (pc_node_set_attr_tensor(tc.node, "value", v, &err) != PC_OK) pt_die("value", &err);
    }
    tc_check(&tc, false);
}

/* Values that probe every conversion: NaN, infinities, signed zeros, fractions, the edges of every integer
 * type and past them. */
static double cast_probe(void)
{
    static const double edges[] = {127.5,
                                   128.0,
                                   -128.5,
                                   255.9,
                                   256.0,
                                   -1.0,
                                   32767.7,
                                   32768.0,
                                   65535.5,
                                   65536.,
                                   2147483647.9,
                                   2147483648.0,
                                   -2147483649.0,
                                   4294967295.5,
                                   4294967296.0,
                                   9.2233720368547758e18,
                                   -9.2233720368547758e18,
                                   1.8446744073709552e19,
                                   65504.0,
                                   65520.0,
                                   1e-8,
                                   6.1e-5};
    switch (draw(8)) {
    case 0:
        return one_in(2) ? NAN : -NAN;
    case 1:
        return one_in(2) ? INFINITY : -INFINITY;
    case 2:
        return one_in(2) ? 0.0 : -0.0;
    case 3:
        return (double)draw_in(-300, 300) + (double)draw(8) / 8.0;
    case 4:
        return edges[draw(sizeof edges / sizeof edges[0])] * (one_in(4) ? -1.0 : 1.0);
    case 5:
        return ldexp((double)draw_in(1, 1000), (int)draw_in(-30, 70)) * (one_in(2) ? -1.0 : 1.0);
    default:
        return (double)draw_in(-5, 5) + (double)draw(1000) / 1000.0;
    }
}

static void fill_cast_values(pc_data *d)
{
    fill_random(d);
    for (uint64_t i = 0; i < d->n_elements; i++) {
        if (one_in(4)) continue; /* keep the random bits (integers: any value; halves: any pattern) */
        double v = cast_probe();
        switch (d->dtype) {
        case PC_DTYPE_FLOAT:
            ((float *)d->data)[i] = (float)v;
            break;
        case PC_DTYPE_DOUBLE:
            ((double *)d->data)[i] = v;
            break;
        case PC_DTYPE_FLOAT16:
            ((uint16_t *)d->data)[i] = pc_half_from_double(v);
            break;
        case PC_DTYPE_BFLOAT16:
            ((uint16_t *)d->data)[i] = pc_bfloat16_from_double(v);
            break;
        case PC_DTYPE_BOOL:
            break;
        default: { /* integers: small values, in the type's range */
            int64_t w = isfinite(v) && fabs(v) < 100 ? (int64_t)v : draw_in(-3, 3);
            unsigned bits = pc_dtype_bits(d->dtype);
            if (d->dtype == PC_DTYPE_UINT8 || d->dtype == PC_DTYPE_UINT16 || d->dtype == PC_DTYPE_UINT32 ||
                d->dtype == PC_DTYPE_UINT64)
                w = w < 0 ? -w : w;
            memcpy((uint8_t *)d->data + i * (bits / 8), &w, bits / 8); /* little-endian low bytes */
        }
        }
    }
}

static void case_cast(int t)
{
    tcase tc;
    pc_dtype from = any_type(), to = any_type();
    int64_t op = one_in(8) ? 1 : 13;
    int32_t r = (int32_t)draw(4);
    int64_t dims[PC_MAX_RANK];
    rand_dims(r, dims, 5, 12);
    tc_begin(&tc, op, "Cast #%d opset %lld %s -> %s", t, (long long)op, pc_dtype_name(from),
             pc_dtype_name(to));
    pc_data *x = tc_input(&tc, "x", from, r, dims);
    fill_cast_values(x);
    tc_node(&tc, "Cast", "", "x", "y");
    if (op < 6) {
        char name[32];
        snprintf(name, sizeof name, "%s", pc_dtype_name(to));
        for (char *c = name; *c; c++)
            *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
        attr_string(&tc, "to", name);
    } else {
        attr_int(&tc, "to", to);
    }
    tc_check(&tc, true);
}

/* A scalar of type dt (float, double, int16/32/64), as an initializer or a graph input. */
static void tc_scalar(tcase *tc, const char *name, pc_dtype dt, double v, bool as_const)
{
    uint8_t buf[8];
    if (dt == PC_DTYPE_FLOAT) {
        float f = (float)v;
        memcpy(buf, &f, 4);
    } else if (dt == PC_DTYPE_DOUBLE) {
        memcpy(buf, &v, 8);
    } else {
        int64_t w = (int64_t)v;
        memcpy(buf, &w, 8); /* little-endian: the low bytes are the narrower type's value */
    }
    if (as_const) {
        pt_const(tc->m, name, dt, 0, NULL, buf);
        return;
    }
    pc_data *d = tc_input(tc, name, dt, 0, NULL);
    memcpy(d->data, buf, pc_dtype_bits(dt) / 8);
}

static void case_range(int t)
{
    static const pc_dtype types[] = {PC_DTYPE_FLOAT, PC_DTYPE_DOUBLE, PC_DTYPE_INT16, PC_DTYPE_INT32,
                                     PC_DTYPE_INT64};
    tcase tc;
    pc_dtype dt = types[draw(5)];
    double s, l, d;
    if (dt == PC_DTYPE_FLOAT || dt == PC_DTYPE_DOUBLE) {
        s = (double)draw_in(-40, 40) / 4.0 + 0.1;
        d = (double)draw_in(1, 20) / 8.0 * (one_in(2) ? -1 : 1) + (one_in(2) ? 0.0 : 0.01);
        l = s + d * (double)draw_in(-2, 30) * (one_in(2) ? 1.0 : 0.97);
    } else {
        s = (double)draw_in(-10, 10);
        d = (double)(draw_in(1, 4) * (one_in(2) ? -1 : 1));
        l = s + d * (double)draw_in(-2, 20) + (double)draw_in(-1, 1);
    }
    bool c = !one_in(3);
    tc_begin(&tc, 11, "Range #%d %s %g %g %g", t, pc_dtype_name(dt), s, l, d);
    tc_scalar(&tc, "s", dt, s, c);
    tc_scalar(&tc, "l", dt, l, c);
    tc_scalar(&tc, "d", dt, d, c);
    tc_node(&tc, "Range", "", "s,l,d", "y");
    tc_check(&tc, false);
}

static void case_depth_space(int t)
{
    tcase tc;
    bool to_space = one_in(2);
    int64_t op = one_in(4) ? 1 : one_in(2) ? 11 : 13, b = draw_in(1, 3), dims[4];
    dims[0] = draw_in(1, 2);
    dims[1] = to_space ? b * b * draw_in(1, 3) : draw_in(1, 3);
    dims[2] = to_space ? draw_in(1, 3) : b * draw_in(1, 3);
    dims[3] = to_space ? draw_in(1, 3) : b * draw_in(1, 3);
    int mode = to_space && op >= 11 ? (int)draw(3) : 0; /* 0: default, 1: DCR, 2: CRD */
    pc_dtype dt = any_type();
    tc_begin(&tc, op, "%s #%d opset %lld blocksize %lld mode %d %s",
             to_space ? "DepthToSpace" : "SpaceToDepth", t, (long long)op, (long long)b, mode,
             pc_dtype_name(dt));
    tc_input(&tc, "x", dt, 4, dims);
    tc_node(&tc, to_space ? "DepthToSpace" : "SpaceToDepth", "", "x", "y");
    attr_int(&tc, "blocksize", b);
    if (mode) attr_string(&tc, "mode", mode == 1 ? "DCR" : "CRD");
    tc_check(&tc, false);
}

/* The NHWC-domain forms against the reference's NCHW op between two Transposes. */
static void case_depth_space_nhwc(int t)
{
    static const int64_t to_nchw[4] = {0, 3, 1, 2}, to_nhwc[4] = {0, 2, 3, 1};
    tcase tc;
    pc_error err;
    bool to_space = one_in(2);
    int64_t b = draw_in(1, 3), dims[4];
    dims[0] = draw_in(1, 2);
    dims[3] = to_space ? b * b * draw_in(1, 3) : draw_in(1, 3);
    dims[1] = to_space ? draw_in(1, 3) : b * draw_in(1, 3);
    dims[2] = to_space ? draw_in(1, 3) : b * draw_in(1, 3);
    const char *op = to_space ? "DepthToSpace" : "SpaceToDepth",
               *mode = to_space && one_in(2) ? "CRD" : "DCR";
    pc_dtype dt = any_type();
    tc_begin(&tc, 13, "NHWC %s #%d blocksize %lld %s %s", op, t, (long long)b, mode, pc_dtype_name(dt));
    tc_input(&tc, "x", dt, 4, dims);
    tc.node = pt_node(tc.m, "Transpose", "", "x", "xt", NULL);
    attr_ints(&tc, "perm", 4, to_nchw);
    tc.node = pt_node(tc.m, op, "", "xt", "yt", NULL);
    attr_int(&tc, "blocksize", b);
    if (to_space) attr_string(&tc, "mode", mode);
    tc.node = pt_node(tc.m, "Transpose", "", "yt", "y", NULL);
    attr_ints(&tc, "perm", 4, to_nhwc);
    pt_output(tc.m, "y");
    pc_data **ref = NULL;
    pc_status st = pc_ref_run(tc.m, tc.n_feeds, tc.feeds, &ref, &err);
    CHECK_MSG(st == PC_OK, "%s: the reference refused the case: %s", tc.label, err.message);
    if (st != PC_OK) {
        tc_end(&tc);
        return;
    }
    tc.node = pt_node(tc.m, op, PC_NHWC_DOMAIN, "x", "y_nhwc", NULL);
    attr_int(&tc, "blocksize", b);
    if (to_space) attr_string(&tc, "mode", mode);
    bound bd;
    bind_inputs(&tc, &bd);
    bind_output(&bd, 0, dt, 4, ref[0]->dims);
    pc_status prepared;
    st = call_kernel(&tc, &bd, true, &prepared, &err);
    CHECK_MSG(st == PC_OK, "%s: %s", tc.label, err.message);
    if (st == PC_OK) {
        bool same = !ref[0]->n_bytes || memcmp(ref[0]->data, bd.out[0]->data, ref[0]->n_bytes) == 0;
        CHECK_MSG(same, "%s: differs from the reference", tc.label);
        n_compared += same;
    }
    unbind(&bd);
    pc_ref_free_outputs(tc.m, ref);
    tc_end(&tc);
}

/* ---- the index, scan and sort ops */

static const pc_dtype num_types[] = {
    PC_DTYPE_FLOAT, PC_DTYPE_DOUBLE, PC_DTYPE_FLOAT16, PC_DTYPE_BFLOAT16, PC_DTYPE_INT8,   PC_DTYPE_INT16,
    PC_DTYPE_INT32, PC_DTYPE_INT64,  PC_DTYPE_UINT8,   PC_DTYPE_UINT16,   PC_DTYPE_UINT32, PC_DTYPE_UINT64,
};
enum { N_NUM_TYPES = sizeof num_types / sizeof num_types[0] };

static pc_dtype num_type(void)
{
    return num_types[draw(N_NUM_TYPES)];
}

static bool is_float(pc_dtype t)
{
    return t == PC_DTYPE_FLOAT || t == PC_DTYPE_DOUBLE || t == PC_DTYPE_FLOAT16 || t == PC_DTYPE_BFLOAT16;
}

/* Element i of a numeric tensor set to v (integers: the low bytes of v as an int64, little-endian). */
static void put_num(void *data, pc_dtype dt, uint64_t i, double v)
{
    uint8_t *p = data;
    switch (dt) {
    case PC_DTYPE_FLOAT: {
        float f = (float)v;
        memcpy(p + i * 4, &f, 4);
        break;
    }
    case PC_DTYPE_DOUBLE:
        memcpy(p + i * 8, &v, 8);
        break;
    case PC_DTYPE_FLOAT16: {
        uint16_t h = pc_half_from_double(v);
        memcpy(p + i * 2, &h, 2);
        break;
    }
    case PC_DTYPE_BFLOAT16: {
        uint16_t h = pc_bfloat16_from_double(v);
        memcpy(p + i * 2, &h, 2);
        break;
    }
    default: {
        int64_t w = (int64_t)v;
        size_t es = pc_dtype_bits(dt) / 8;
        memcpy(p + i * es, &w, es);
    }
    }
}

/* Floats mostly ordinary (sixteenths in [-64, 64]), sometimes left as any bits (NaN, infinities). */
static void ordinary_floats(pc_data *d)
{
    if (!is_float(d->dtype) || one_in(4)) return;
    for (uint64_t i = 0; i < d->n_elements; i++)
        put_num(d->data, d->dtype, i, (double)draw_in(-1024, 1024) / 16.0);
}

/* A tensor of int values (int64 or int32) of any rank, as an initializer or a graph input. */
static void tc_index_tensor(tcase *tc, const char *name, bool as_const, pc_dtype dt, int32_t rank,
                            const int64_t *dims, const int64_t *v)
{
    uint64_t n = prod_dims(rank, dims);
    uint8_t *p = as_const ? pt_const(tc->m, name, dt, rank, dims, NULL)->initializer->data
                          : tc_input(tc, name, dt, rank, dims)->data;
    for (uint64_t i = 0; i < n; i++) {
        if (dt == PC_DTYPE_INT32) {
            int32_t w = (int32_t)v[i];
            memcpy(p + i * 4, &w, 4);
        } else {
            memcpy(p + i * 8, &v[i], 8);
        }
    }
}

static pc_dtype index_type(void)
{
    return one_in(2) ? PC_DTYPE_INT32 : PC_DTYPE_INT64;
}

enum { MAX_IDX = 4096 };

static void case_gather_elements(int t)
{
    tcase tc;
    int64_t op = one_in(2) ? 11 : 13;
    int32_t r = 1 + (int32_t)draw(4);
    int64_t dims[PC_MAX_RANK], idims[PC_MAX_RANK], idx[MAX_IDX];
    rand_dims(r, dims, 4, 10);
    int64_t axis = draw_in(-r, r - 1);
    int32_t a = (int32_t)(axis < 0 ? axis + r : axis);
    for (int32_t d = 0; d < r; d++) /* no larger than data off the axis, any size on it */
        idims[d] = d == a ? draw_in(0, 4) : one_in(10) ? 0 : draw_in(dims[d] ? 1 : 0, dims[d]);
    if (dims[a] == 0) idims[a] = 0; /* no valid index into an empty axis */
    uint64_t ni = prod_dims(r, idims);
    for (uint64_t j = 0; j < ni; j++)
        idx[j] = draw_in(-dims[a], dims[a] - 1);
    pc_dtype dt = any_type(), it = index_type();
    tc_begin(&tc, op, "GatherElements #%d opset %lld axis %lld rank %d %s %s", t, (long long)op,
             (long long)axis, (int)r, pc_dtype_name(dt), pc_dtype_name(it));
    tc_input(&tc, "x", dt, r, dims);
    tc_index_tensor(&tc, "idx", one_in(2), it, r, idims, idx);
    tc_node(&tc, "GatherElements", "", "x,idx", "y");
    attr_int(&tc, "axis", axis);
    tc_check(&tc, false);
}

static const char *const reductions[] = {"none", "add", "mul", "max", "min"};

/* A reduction for the opset: none before 16, add/mul from 16, max/min from 18; numeric types only. */
static int draw_reduction(int64_t op, pc_dtype *dt)
{
    int red = op >= 18 ? (int)draw(5) : op >= 16 ? (int)draw(3) : 0;
    *dt = red ? num_type() : any_type();
    return red;
}

static void case_scatter_elements(int t)
{
    static const int64_t opsets[] = {9, 11, 13, 16, 18};
    tcase tc;
    int64_t op = opsets[draw(5)];
    int32_t r = 1 + (int32_t)draw(4);
    int64_t dims[PC_MAX_RANK], idims[PC_MAX_RANK], idx[MAX_IDX];
    rand_dims(r, dims, 4, 10);
    int64_t axis = draw_in(op < 11 ? 0 : -r, r - 1);
    int32_t a = (int32_t)(axis < 0 ? axis + r : axis);
    for (int32_t d = 0; d < r; d++)
        idims[d] = d == a ? draw_in(0, 4) : one_in(10) ? 0 : draw_in(dims[d] ? 1 : 0, dims[d]);
    if (dims[a] == 0) idims[a] = 0;
    uint64_t ni = prod_dims(r, idims);
    for (uint64_t j = 0; j < ni; j++) /* repeats are likely: the last update wins, or they reduce */
        idx[j] = draw_in(-dims[a], dims[a] - 1);
    pc_dtype dt, it = index_type();
    int red = draw_reduction(op, &dt);
    const char *name = op < 11 ? "Scatter" : "ScatterElements";
    tc_begin(&tc, op, "%s #%d opset %lld axis %lld rank %d %s reduction %s", name, t, (long long)op,
             (long long)axis, (int)r, pc_dtype_name(dt), reductions[red]);
    ordinary_floats(tc_input(&tc, "x", dt, r, dims));
    tc_index_tensor(&tc, "idx", one_in(2), it, r, idims, idx);
    ordinary_floats(tc_input(&tc, "u", dt, r, idims));
    tc_node(&tc, name, "", "x,idx,u", "y");
    attr_int(&tc, "axis", axis);
    if (red || (op >= 16 && one_in(2))) attr_string(&tc, "reduction", reductions[red]);
    tc_check(&tc, true); /* reductions may make NaNs: payloads are free */
}

/* Index tuples of m entries into data axes from..from+m (all of size >= 1) */
static void fill_tuples(int64_t *idx, uint64_t n_tuples, int32_t m, const int64_t *dims, int32_t from)
{
    for (uint64_t t = 0; t < n_tuples; t++)
        for (int32_t j = 0; j < m; j++)
            idx[t * (uint64_t)m + (uint64_t)j] = draw_in(-dims[from + j], dims[from + j] - 1);
}

static void case_gather_nd(int t)
{
    static const int64_t opsets[] = {11, 12, 13};
    tcase tc;
    int64_t op = opsets[draw(3)];
    int32_t r = 1 + (int32_t)draw(4), b = op >= 12 && r > 1 && one_in(2) ? (int32_t)draw((uint32_t)r) : 0;
    if (b >= r) b = r - 1;
    int32_t m = (int32_t)draw((uint32_t)(r - b) + 1), q = b + 1 + (int32_t)draw(2);
    int64_t dims[PC_MAX_RANK], idims[PC_MAX_RANK], idx[MAX_IDX];
    rand_dims(r, dims, 3, 0);
    for (int32_t d = b + m; d < r; d++) /* slices may be empty */
        if (one_in(8)) dims[d] = 0;
    for (int32_t d = 0; d < q - 1; d++)
        idims[d] = d < b ? dims[d] : draw_in(0, 3);
    idims[q - 1] = m;
    uint64_t n_tuples = prod_dims(q - 1, idims);
    fill_tuples(idx, n_tuples, m, dims, b);
    pc_dtype dt = any_type(), it = index_type();
    tc_begin(&tc, op, "GatherND #%d opset %lld rank %d batch_dims %d tuples of %d, indices rank %d %s", t,
             (long long)op, (int)r, (int)b, (int)m, (int)q, pc_dtype_name(dt));
    tc_input(&tc, "x", dt, r, dims);
    tc_index_tensor(&tc, "idx", one_in(2), it, q, idims, idx);
    tc_node(&tc, "GatherND", "", "x,idx", "y");
    if (b || (op >= 12 && one_in(2))) attr_int(&tc, "batch_dims", b);
    tc_check(&tc, false);
}

static void case_scatter_nd(int t)
{
    static const int64_t opsets[] = {11, 13, 16, 18};
    tcase tc;
    int64_t op = opsets[draw(4)];
    int32_t r = 1 + (int32_t)draw(4), m = (int32_t)draw((uint32_t)r + 1), q = 1 + (int32_t)draw(3);
    int64_t dims[PC_MAX_RANK], idims[PC_MAX_RANK], udims[2 * PC_MAX_RANK], idx[MAX_IDX];
    rand_dims(r, dims, 3, 0);
    for (int32_t d = m; d < r; d++)
        if (one_in(8)) dims[d] = 0;
    for (int32_t d = 0; d < q - 1; d++)
        idims[d] = draw_in(0, 3);
    idims[q - 1] = m;
    uint64_t n_tuples = prod_dims(q - 1, idims);
    fill_tuples(idx, n_tuples, m, dims, 0);
    int32_t ur = q - 1 + r - m;
    memcpy(udims, idims, (size_t)(q - 1) * sizeof *udims);
    memcpy(udims + q - 1, dims + m, (size_t)(r - m) * sizeof *udims);
    pc_dtype dt, it = index_type();
    int red = draw_reduction(op, &dt);
    tc_begin(&tc, op, "ScatterND #%d opset %lld rank %d tuples of %d, indices rank %d %s reduction %s", t,
             (long long)op, (int)r, (int)m, (int)q, pc_dtype_name(dt), reductions[red]);
    ordinary_floats(tc_input(&tc, "x", dt, r, dims));
    tc_index_tensor(&tc, "idx", one_in(2), it, q, idims, idx);
    ordinary_floats(tc_input(&tc, "u", dt, ur, udims));
    tc_node(&tc, "ScatterND", "", "x,idx,u", "y");
    if (red || (op >= 16 && one_in(2))) attr_string(&tc, "reduction", reductions[red]);
    tc_check(&tc, true);
}

static void case_trilu(int t)
{
    tcase tc;
    int32_t r = 2 + (int32_t)draw(3);
    int64_t dims[PC_MAX_RANK], k = one_in(10) ? (one_in(2) ? INT64_MAX : INT64_MIN) : draw_in(-7, 7);
    rand_dims(r, dims, 5, 10);
    int kin = (int)draw(3), upper = (int)draw(3); /* k: none, constant, graph input; upper: absent, 0, 1 */
    pc_dtype dt = any_type();
    tc_begin(&tc, 14, "Trilu #%d rank %d %s k %lld (%s) upper %d", t, (int)r, pc_dtype_name(dt), (long long)k,
             kin == 0   ? "absent"
             : kin == 1 ? "constant"
                        : "input",
             upper);
    tc_input(&tc, "x", dt, r, dims);
    if (kin) tc_ints(&tc, "k", kin == 1, PC_DTYPE_INT64, true, 1, &k);
    tc_node(&tc, "Trilu", "", kin ? "x,k" : "x", "y");
    if (upper) attr_int(&tc, "upper", upper - 1);
    tc_check(&tc, false);
}

static void case_eye_like(int t)
{
    tcase tc;
    int64_t dims[2], k = draw_in(-6, 6);
    rand_dims(2, dims, 5, 10);
    pc_dtype dt = any_type(), to = one_in(3) ? PC_DTYPE_UNDEFINED : any_type();
    tc_begin(&tc, 9, "EyeLike #%d [%lld,%lld] %s -> %s k %lld", t, (long long)dims[0], (long long)dims[1],
             pc_dtype_name(dt), to ? pc_dtype_name(to) : "(same)", (long long)k);
    tc_input(&tc, "x", dt, 2, dims);
    tc_node(&tc, "EyeLike", "", "x", "y");
    if (to) attr_int(&tc, "dtype", to);
    if (k || one_in(2)) attr_int(&tc, "k", k);
    tc_check(&tc, false);
}

static void case_one_hot(int t)
{
    static const pc_dtype depth_types[] = {PC_DTYPE_INT64, PC_DTYPE_INT32, PC_DTYPE_FLOAT, PC_DTYPE_DOUBLE,
                                           PC_DTYPE_UINT8};
    tcase tc;
    int64_t op = one_in(2) ? 9 : 11;
    int32_t r = (int32_t)draw(4);
    int64_t dims[PC_MAX_RANK], depth = draw_in(0, 5);
    rand_dims(r, dims, 4, 10);
    int64_t axis = draw_in(-r - 1, r);
    pc_dtype it = num_type(), dpt = depth_types[draw(5)], vt = any_type();
    bool dconst = !one_in(3);
    tc_begin(&tc, op, "OneHot #%d opset %lld rank %d axis %lld depth %lld (%s%s) indices %s values %s", t,
             (long long)op, (int)r, (long long)axis, (long long)depth, pc_dtype_name(dpt),
             dconst ? "" : ", an input", pc_dtype_name(it), pc_dtype_name(vt));
    pc_data *ind = tc_input(&tc, "ind", it, r, dims);
    for (uint64_t j = 0; j < ind->n_elements; j++) { /* in and out of range; floats with fractions */
        double v = (double)draw_in(-depth - 2, depth + 2);
        if (it == PC_DTYPE_UINT8 || it == PC_DTYPE_UINT16 || it == PC_DTYPE_UINT32 || it == PC_DTYPE_UINT64)
            v = v < 0 ? -v : v;
        if (is_float(it) && one_in(3)) v += v < 0 ? -0.5 : 0.5;
        put_num(ind->data, it, j, v);
    }
    uint8_t dbuf[8];
    put_num(dbuf, dpt, 0, (double)depth + (is_float(dpt) && one_in(2) ? 0.75 : 0.0));
    if (dconst)
        pt_const(tc.m, "depth", dpt, 0, NULL, dbuf);
    else
        memcpy(tc_input(&tc, "depth", dpt, one_in(2) ? 0 : 1, (int64_t[]){1})->data, dbuf,
               pc_dtype_bits(dpt) / 8);
    tc_input(&tc, "vals", vt, 1, (int64_t[]){2});
    tc_node(&tc, "OneHot", "", "ind,depth,vals", "y");
    if (axis != -1 || one_in(2)) attr_int(&tc, "axis", axis);
    tc_check(&tc, false);
}

static void case_cumsum(int t)
{
    tcase tc;
    int64_t op = one_in(2) ? 11 : 14;
    int32_t r = 1 + (int32_t)draw(4);
    int64_t dims[PC_MAX_RANK], axis = 0;
    rand_dims(r, dims, 5, 10);
    axis = draw_in(-r, r - 1);
    pc_dtype dt = num_type(), at = index_type();
    bool ex = one_in(2), rev = one_in(2);
    tc_begin(&tc, op, "CumSum #%d opset %lld rank %d axis %lld %s%s%s", t, (long long)op, (int)r,
             (long long)axis, pc_dtype_name(dt), ex ? " exclusive" : "", rev ? " reverse" : "");
    ordinary_floats(tc_input(&tc, "x", dt, r, dims));
    tc_ints(&tc, "axis", !one_in(3), at, one_in(2), 1, &axis);
    tc_node(&tc, "CumSum", "", "x,axis", "y");
    if (ex || one_in(2)) attr_int(&tc, "exclusive", ex);
    if (rev || one_in(2)) attr_int(&tc, "reverse", rev);
    tc_check(&tc, true);
}

static void case_topk(int t)
{
    static const int64_t opsets[] = {1, 10, 11};
    tcase tc;
    int64_t op = opsets[draw(3)];
    int32_t r = 1 + (int32_t)draw(3);
    int64_t dims[PC_MAX_RANK];
    rand_dims(r, dims, 6, 10);
    int64_t axis = draw_in(-r, r - 1);
    int32_t a = (int32_t)(axis < 0 ? axis + r : axis);
    int64_t k = draw_in(0, dims[a]);
    pc_dtype dt = num_type();
    int largest = op >= 11 ? (int)draw(3) : 0; /* absent, 0, 1 */
    tc_begin(&tc, op, "TopK #%d opset %lld rank %d axis %lld k %lld %s largest %d", t, (long long)op, (int)r,
             (long long)axis, (long long)k, pc_dtype_name(dt), largest);
    pc_data *x = tc_input(&tc, "x", dt, r, dims);
    for (uint64_t i = 0; i < x->n_elements; i++) { /* few distinct values: ties; floats: NaN, +-0, inf */
        if (one_in(5)) continue;
        double v = (double)draw_in(-3, 3);
        if (is_float(dt)) switch (draw(6)) {
            case 0:
                v = NAN;
                break;
            case 1:
                v = one_in(2) ? -0.0 : 0.0;
                break;
            case 2:
                v = one_in(2) ? INFINITY : -INFINITY;
                break;
            default:
                break;
            }
        else if (dt == PC_DTYPE_UINT8 || dt == PC_DTYPE_UINT16 || dt == PC_DTYPE_UINT32 ||
                 dt == PC_DTYPE_UINT64)
            v = v < 0 ? -v : v;
        put_num(x->data, dt, i, v);
    }
    if (op >= 10) tc_ints(&tc, "k", !one_in(3), PC_DTYPE_INT64, false, 1, &k);
    tc_node(&tc, "TopK", "", op >= 10 ? "x,k" : "x", "y,i");
    if (op < 10) attr_int(&tc, "k", k);
    if (axis != -1 || one_in(2)) attr_int(&tc, "axis", axis);
    if (largest) attr_int(&tc, "largest", largest - 1);
    if (op >= 11 && one_in(2)) attr_int(&tc, "sorted", 1);
    tc_check(&tc, false);
}

static void case_reverse_sequence(int t)
{
    tcase tc;
    int32_t r = 2 + (int32_t)draw(3);
    int64_t dims[PC_MAX_RANK], lens[8];
    rand_dims(r, dims, 4, 10);
    int32_t ba = (int32_t)draw(2), ta = 1 - ba;
    for (int64_t b = 0; b < dims[ba]; b++)
        lens[b] = draw_in(0, dims[ta]);
    pc_dtype dt = any_type();
    tc_begin(&tc, 10, "ReverseSequence #%d rank %d batch_axis %d %s", t, (int)r, (int)ba, pc_dtype_name(dt));
    tc_input(&tc, "x", dt, r, dims);
    tc_ints(&tc, "lens", one_in(2), PC_DTYPE_INT64, false, (size_t)dims[ba], lens);
    tc_node(&tc, "ReverseSequence", "", "x,lens", "y");
    if (ba == 0 || one_in(2)) attr_int(&tc, "batch_axis", ba);
    if (ta == 1 || one_in(2)) attr_int(&tc, "time_axis", ta);
    tc_check(&tc, false);
}

static void refusals(void)
{
    tcase tc;
    int64_t x234[3] = {2, 3, 4};

    /* output dims that disagree with what the inputs make, known in prepare */
    tc_begin(&tc, 13, "Transpose with swapped output dims");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    tc_node(&tc, "Transpose", "", "x", "y");
    attr_ints(&tc, "perm", 3, (int64_t[]){2, 0, 1});
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 3, {4, 3, 2}}, PC_ERR_SHAPE, PC_OK);

    tc_begin(&tc, 13, "Transpose with a wrong output type");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    tc_node(&tc, "Transpose", "", "x", "y");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_INT32, 3, {4, 3, 2}}, PC_ERR_TYPE, PC_OK);

    tc_begin(&tc, 13, "Concat of mismatched inputs");
    tc_input(&tc, "a", PC_DTYPE_INT8, 2, (int64_t[]){2, 3});
    tc_input(&tc, "b", PC_DTYPE_INT8, 2, (int64_t[]){2, 4});
    tc_node(&tc, "Concat", "", "a,b", "y");
    attr_int(&tc, "axis", 0);
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_INT8, 2, {4, 3}}, PC_ERR_SHAPE, PC_OK);

    tc_begin(&tc, 13, "Split with one output too large");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    tc_ints(&tc, "split", true, PC_DTYPE_INT64, false, 2, (int64_t[]){1, 3});
    tc_node(&tc, "Split", "", "x,split", "y0,y1");
    attr_int(&tc, "axis", -1);
    tc_expect(&tc, 2, (out_spec[]){{PC_DTYPE_FLOAT, 3, {2, 3, 1}}, {PC_DTYPE_FLOAT, 3, {2, 3, 4}}},
              PC_ERR_SHAPE, PC_OK);

    tc_begin(&tc, 13, "Slice with a step of 0");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    tc_ints(&tc, "s", true, PC_DTYPE_INT64, false, 1, (int64_t[]){0});
    tc_ints(&tc, "e", true, PC_DTYPE_INT64, false, 1, (int64_t[]){2});
    tc_ints(&tc, "a", true, PC_DTYPE_INT64, false, 1, (int64_t[]){1});
    tc_ints(&tc, "p", true, PC_DTYPE_INT64, false, 1, (int64_t[]){0});
    tc_node(&tc, "Slice", "", "x,s,e,a,p", "y");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 3, {2, 2, 4}}, PC_ERR_VALUE, PC_OK);

    /* known only in run: the shape-like input is a graph input */
    tc_begin(&tc, 13, "Reshape to other dims than the session's");
    tc_input(&tc, "x", PC_DTYPE_UINT16, 3, x234);
    tc_ints(&tc, "shape", false, PC_DTYPE_INT64, false, 2, (int64_t[]){4, 6});
    tc_node(&tc, "Reshape", "", "x,shape", "y");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_UINT16, 2, {6, 4}}, PC_OK, PC_ERR_SHAPE);

    tc_begin(&tc, 13, "Reshape to more elements");
    tc_input(&tc, "x", PC_DTYPE_UINT16, 3, x234);
    tc_ints(&tc, "shape", false, PC_DTYPE_INT64, false, 2, (int64_t[]){5, 6});
    tc_node(&tc, "Reshape", "", "x,shape", "y");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_UINT16, 2, {5, 6}}, PC_ERR_SHAPE, PC_OK);

    tc_begin(&tc, 13, "Tile with other repeats than the session's");
    tc_input(&tc, "x", PC_DTYPE_DOUBLE, 3, x234);
    tc_ints(&tc, "r", false, PC_DTYPE_INT64, false, 3, (int64_t[]){1, 2, 1});
    tc_node(&tc, "Tile", "", "x,r", "y");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_DOUBLE, 3, {4, 3, 4}}, PC_OK, PC_ERR_SHAPE);

    tc_begin(&tc, 13, "Expand to other dims than the session's");
    tc_input(&tc, "x", PC_DTYPE_INT64, 2, (int64_t[]){3, 1});
    tc_ints(&tc, "s", false, PC_DTYPE_INT64, false, 2, (int64_t[]){3, 5});
    tc_node(&tc, "Expand", "", "x,s", "y");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_INT64, 2, {3, 6}}, PC_OK, PC_ERR_SHAPE);

    tc_begin(&tc, 13, "Slice with other bounds than the session's");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    tc_ints(&tc, "s", false, PC_DTYPE_INT32, false, 1, (int64_t[]){1});
    tc_ints(&tc, "e", false, PC_DTYPE_INT32, false, 1, (int64_t[]){4});
    tc_node(&tc, "Slice", "", "x,s,e", "y");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 3, {2, 3, 4}}, PC_OK, PC_ERR_SHAPE);

    tc_begin(&tc, 11, "Range with another count than the session's");
    tc_scalar(&tc, "s", PC_DTYPE_FLOAT, 0.5, false);
    tc_scalar(&tc, "l", PC_DTYPE_FLOAT, 3.0, false);
    tc_scalar(&tc, "d", PC_DTYPE_FLOAT, 0.5, false);
    tc_node(&tc, "Range", "", "s,l,d", "y");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 1, {6}}, PC_OK, PC_ERR_SHAPE);

    tc_begin(&tc, 13, "ConstantOfShape with another shape than the session's");
    tc_ints(&tc, "shape", false, PC_DTYPE_INT64, false, 2, (int64_t[]){2, 3});
    tc_node(&tc, "ConstantOfShape", "", "shape", "y");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 2, {3, 3}}, PC_OK, PC_ERR_SHAPE);

    tc_begin(&tc, 13, "Pad with other pads than the session's");
    tc_input(&tc, "x", PC_DTYPE_BOOL, 3, x234);
    tc_ints(&tc, "pads", false, PC_DTYPE_INT64, false, 6, (int64_t[]){0, 0, 1, 0, 0, 1});
    tc_node(&tc, "Pad", "", "x,pads", "y");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_BOOL, 3, {2, 3, 7}}, PC_OK, PC_ERR_SHAPE);

    /* Gather: indices out of range are a run-time value error */
    for (int k = 0; k < 2; k++) {
        tc_begin(&tc, 13, "Gather with index %s", k ? "-4 on an axis of 3" : "3 on an axis of 3");
        tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
        tc_ints(&tc, "i", false, k ? PC_DTYPE_INT32 : PC_DTYPE_INT64, false, 3,
                (int64_t[]){0, k ? -4 : 3, 1});
        tc_node(&tc, "Gather", "", "x,i", "y");
        attr_int(&tc, "axis", 1);
        tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 3, {2, 3, 4}}, PC_OK, PC_ERR_VALUE);
    }

    /* what the kernels do not implement */
    tc_begin(&tc, 13, "Cast to string");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    tc_node(&tc, "Cast", "", "x", "y");
    attr_int(&tc, "to", PC_DTYPE_STRING);
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_STRING, 3, {2, 3, 4}}, PC_ERR_UNSUPPORTED, PC_OK);

    tc_begin(&tc, 21, "Cast to int4");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    tc_node(&tc, "Cast", "", "x", "y");
    attr_int(&tc, "to", PC_DTYPE_INT4);
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_UINT8, 1, {12}}, PC_ERR_UNSUPPORTED, PC_OK);

    /* Dropout is nn.c's kernel (test_runtime_nn checks it); its prepare-time refusals are here too */
    tc_begin(&tc, 13, "Dropout in training mode (constant)");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    pt_const(tc.m, "train", PC_DTYPE_BOOL, 0, NULL, (uint8_t[]){1});
    tc_node(&tc, "Dropout", "", "x,,train", "y");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 3, {2, 3, 4}}, PC_ERR_UNSUPPORTED, PC_OK);

    tc_begin(&tc, 13, "Dropout in training mode (a graph input)");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    *(uint8_t *)tc_input(&tc, "train", PC_DTYPE_BOOL, 0, NULL)->data = 1;
    tc_node(&tc, "Dropout", "", "x,,train", "y");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 3, {2, 3, 4}}, PC_OK, PC_ERR_UNSUPPORTED);

    tc_begin(&tc, 6, "Dropout in training mode (is_test 0)");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    tc_node(&tc, "Dropout", "", "x", "y");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 3, {2, 3, 4}}, PC_ERR_UNSUPPORTED, PC_OK);

    tc_begin(&tc, 18, "Pad with axes");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    tc_ints(&tc, "pads", true, PC_DTYPE_INT64, false, 2, (int64_t[]){1, 1});
    tc_ints(&tc, "axes", true, PC_DTYPE_INT64, false, 1, (int64_t[]){0});
    tc_node(&tc, "Pad", "", "x,pads,,axes", "y");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 3, {4, 3, 4}}, PC_ERR_UNSUPPORTED, PC_OK);

    tc_begin(&tc, 13, "Pad in wrap mode before opset 19");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    tc_ints(&tc, "pads", true, PC_DTYPE_INT64, false, 6, (int64_t[]){1, 0, 0, 0, 0, 0});
    tc_node(&tc, "Pad", "", "x,pads", "y");
    attr_string(&tc, "mode", "wrap");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 3, {3, 3, 4}}, PC_ERR_UNSUPPORTED, PC_OK);

    /* the index ops: values out of range are a run-time value error (before anything is written) */
    tc_begin(&tc, 13, "GatherElements with index 3 on an axis of 3");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    tc_index_tensor(&tc, "i", false, PC_DTYPE_INT64, 3, (int64_t[]){1, 2, 2}, (int64_t[]){0, 1, -3, 3});
    tc_node(&tc, "GatherElements", "", "x,i", "y");
    attr_int(&tc, "axis", 1);
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 3, {1, 2, 2}}, PC_OK, PC_ERR_VALUE);

    tc_begin(&tc, 16, "ScatterElements with index -5 on an axis of 4");
    tc_input(&tc, "x", PC_DTYPE_INT32, 3, x234);
    tc_index_tensor(&tc, "i", false, PC_DTYPE_INT32, 3, (int64_t[]){1, 1, 2}, (int64_t[]){2, -5});
    tc_input(&tc, "u", PC_DTYPE_INT32, 3, (int64_t[]){1, 1, 2});
    tc_node(&tc, "ScatterElements", "", "x,i,u", "y");
    attr_int(&tc, "axis", -1);
    attr_string(&tc, "reduction", "add");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_INT32, 3, {2, 3, 4}}, PC_OK, PC_ERR_VALUE);

    tc_begin(&tc, 13, "GatherND with a tuple entry out of range");
    tc_input(&tc, "x", PC_DTYPE_UINT8, 3, x234);
    tc_index_tensor(&tc, "i", false, PC_DTYPE_INT64, 2, (int64_t[]){2, 2}, (int64_t[]){1, 2, 0, 3});
    tc_node(&tc, "GatherND", "", "x,i", "y");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_UINT8, 2, {2, 4}}, PC_OK, PC_ERR_VALUE);

    tc_begin(&tc, 13, "ScatterND with a tuple entry out of range");
    tc_input(&tc, "x", PC_DTYPE_UINT8, 3, x234);
    tc_index_tensor(&tc, "i", false, PC_DTYPE_INT64, 2, (int64_t[]){1, 1}, (int64_t[]){-3});
    tc_input(&tc, "u", PC_DTYPE_UINT8, 3, (int64_t[]){1, 3, 4});
    tc_node(&tc, "ScatterND", "", "x,i,u", "y");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_UINT8, 3, {2, 3, 4}}, PC_OK, PC_ERR_VALUE);

    tc_begin(&tc, 10, "ReverseSequence with a length past the time axis");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    tc_ints(&tc, "lens", false, PC_DTYPE_INT64, false, 3, (int64_t[]){1, 3, 2});
    tc_node(&tc, "ReverseSequence", "", "x,lens", "y");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 3, {2, 3, 4}}, PC_OK, PC_ERR_VALUE);

    tc_begin(&tc, 11, "TopK with k past the axis");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    tc_ints(&tc, "k", false, PC_DTYPE_INT64, false, 1, (int64_t[]){5});
    tc_node(&tc, "TopK", "", "x,k", "y,i");
    tc_expect(&tc, 2, (out_spec[]){{PC_DTYPE_FLOAT, 3, {2, 3, 4}}, {PC_DTYPE_INT64, 3, {2, 3, 4}}}, PC_OK,
              PC_ERR_VALUE);

    /* dims that disagree with values known only in run */
    tc_begin(&tc, 11, "TopK with another k than the session's");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    tc_ints(&tc, "k", false, PC_DTYPE_INT64, false, 1, (int64_t[]){2});
    tc_node(&tc, "TopK", "", "x,k", "y,i");
    tc_expect(&tc, 2, (out_spec[]){{PC_DTYPE_FLOAT, 3, {2, 3, 3}}, {PC_DTYPE_INT64, 3, {2, 3, 3}}}, PC_OK,
              PC_ERR_SHAPE);

    tc_begin(&tc, 11, "OneHot with another depth than the session's");
    tc_input(&tc, "x", PC_DTYPE_INT64, 1, (int64_t[]){3});
    tc_ints(&tc, "d", false, PC_DTYPE_INT64, true, 1, (int64_t[]){4});
    tc_input(&tc, "v", PC_DTYPE_FLOAT, 1, (int64_t[]){2});
    tc_node(&tc, "OneHot", "", "x,d,v", "y");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 2, {3, 5}}, PC_OK, PC_ERR_SHAPE);

    tc_begin(&tc, 13, "GatherElements with indices larger than data off the axis");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    tc_index_tensor(&tc, "i", true, PC_DTYPE_INT64, 3, (int64_t[]){3, 1, 1}, (int64_t[]){0, 0, 0});
    tc_node(&tc, "GatherElements", "", "x,i", "y");
    attr_int(&tc, "axis", 1);
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 3, {3, 1, 1}}, PC_ERR_SHAPE, PC_OK);

    /* bad attributes, and what the kernels do not implement */
    tc_begin(&tc, 13, "GatherND with batch_dims past the indices' rank");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    tc_index_tensor(&tc, "i", true, PC_DTYPE_INT64, 2, (int64_t[]){2, 1}, (int64_t[]){0, 1});
    tc_node(&tc, "GatherND", "", "x,i", "y");
    attr_int(&tc, "batch_dims", 2);
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 1, {2}}, PC_ERR_ATTRIBUTE, PC_OK);

    tc_begin(&tc, 16, "ScatterElements with reduction max before opset 18");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    tc_index_tensor(&tc, "i", true, PC_DTYPE_INT64, 3, (int64_t[]){1, 1, 1}, (int64_t[]){0});
    tc_input(&tc, "u", PC_DTYPE_FLOAT, 3, (int64_t[]){1, 1, 1});
    tc_node(&tc, "ScatterElements", "", "x,i,u", "y");
    attr_string(&tc, "reduction", "max");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 3, {2, 3, 4}}, PC_ERR_ATTRIBUTE, PC_OK);

    tc_begin(&tc, 18, "ScatterND with reduction add on bool");
    tc_input(&tc, "x", PC_DTYPE_BOOL, 3, x234);
    tc_index_tensor(&tc, "i", true, PC_DTYPE_INT64, 2, (int64_t[]){1, 1}, (int64_t[]){0});
    tc_input(&tc, "u", PC_DTYPE_BOOL, 3, (int64_t[]){1, 3, 4});
    tc_node(&tc, "ScatterND", "", "x,i,u", "y");
    attr_string(&tc, "reduction", "add");
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_BOOL, 3, {2, 3, 4}}, PC_ERR_UNSUPPORTED, PC_OK);

    tc_begin(&tc, 10, "ReverseSequence with both axes 0");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
    tc_ints(&tc, "lens", true, PC_DTYPE_INT64, false, 2, (int64_t[]){1, 1});
    tc_node(&tc, "ReverseSequence", "", "x,lens", "y");
    attr_int(&tc, "batch_axis", 0);
    attr_int(&tc, "time_axis", 0);
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 3, {2, 3, 4}}, PC_ERR_ATTRIBUTE, PC_OK);

    tc_begin(&tc, 9, "EyeLike to string");
    tc_input(&tc, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    tc_node(&tc, "EyeLike", "", "x", "y");
    attr_int(&tc, "dtype", PC_DTYPE_STRING);
    tc_expect(&tc, 1, &(out_spec){PC_DTYPE_FLOAT, 2, {2, 3}}, PC_ERR_UNSUPPORTED, PC_OK);

    /* strings and packed types: no row claims them, and prepare refuses them anyway */
    static const pc_dtype unmovable[] = {PC_DTYPE_STRING, PC_DTYPE_INT4, PC_DTYPE_UINT4};
    for (size_t i = 0; i < sizeof unmovable / sizeof unmovable[0]; i++) {
        pc_dtype dt = unmovable[i];
        tc_begin(&tc, 21, "Transpose of %s", pc_dtype_name(dt));
        tc_input(&tc, "x", PC_DTYPE_FLOAT, 3, x234);
        tc_node(&tc, "Transpose", "", "x", "y");
        CHECK_MSG(!pc_rt_kernel_find(tc.node, 21, dt), "a row claims Transpose of %s", pc_dtype_name(dt));
        const pc_rt_kernel *row = pc_rt_kernel_find(tc.node, 21, PC_DTYPE_FLOAT);
        pc_rt_tensor x = {.dtype = dt, .rank = 3, .dims = {2, 3, 4}, .n = 24};
        pc_rt_tensor y = {.dtype = dt, .rank = 3, .dims = {4, 3, 2}, .n = 24};
        const pc_rt_tensor *in[1] = {&x};
        pc_rt_tensor *out[1] = {&y};
        pc_error err;
        pc_error_clear(&err);
        pc_rt_kernel_ctx k = {.node = tc.node,
                              .opset = 21,
                              .n_in = 1,
                              .n_out = 1,
                              .in = in,
                              .out = out,
                              .threads = 1,
                              .err = &err};
        size_t scratch = 0;
        CHECK_MSG(row && row->prepare && row->prepare(&k, &scratch) == PC_ERR_UNSUPPORTED,
                  "Transpose prepare of %s: %s", pc_dtype_name(dt), err.message);
        n_refusals++;
        tc_end(&tc);
    }
}

int main(void)
{
    typedef void (*gen_fn)(int);
    static const struct {
        const char *name;
        gen_fn fn;
    } gens[] = {
        {"Identity", case_identity},
        {"Reshape", case_reshape},
        {"Flatten", case_flatten},
        {"Squeeze", case_squeeze},
        {"Unsqueeze", case_unsqueeze},
        {"Transpose", case_transpose},
        {"Concat", case_concat},
        {"Split", case_split},
        {"Slice", case_slice},
        {"Gather", case_gather},
        {"Pad", case_pad},
        {"Tile", case_tile},
        {"Expand", case_expand},
        {"Shape/Size", case_shape_size},
        {"ConstantOfShape", case_constant_of_shape},
        {"Cast", case_cast},
        {"Range", case_range},
        {"DepthToSpace/SpaceToDepth", case_depth_space},
        {"NHWC DepthToSpace/SpaceToDepth", case_depth_space_nhwc},
        {"GatherElements", case_gather_elements},
        {"ScatterElements/Scatter", case_scatter_elements},
        {"GatherND", case_gather_nd},
        {"ScatterND", case_scatter_nd},
        {"Trilu", case_trilu},
        {"EyeLike", case_eye_like},
        {"OneHot", case_one_hot},
        {"CumSum", case_cumsum},
        {"TopK", case_topk},
        {"ReverseSequence", case_reverse_sequence},
    };
    enum { N_CASES = 200 };
    size_t n_gens = sizeof gens / sizeof gens[0];
    for (size_t g = 0; g < n_gens; g++)
        for (int t = 0; t < N_CASES; t++)
            gens[g].fn(t);
    /* every case reached a byte comparison (a refused or failed one is already a failed check) */
    CHECK_MSG(n_compared >= (int)(n_gens * N_CASES), "only %d of %zu cases compared", n_compared,
              n_gens * N_CASES);
    refusals();
    for (size_t i = 0; i < pc_rt_n_kernels_movement; i++)
        CHECK_MSG(pc_rt_kernels_movement[i].run && pc_rt_kernels_movement[i].prepare,
                  "row %zu (%s) lacks a function", i, pc_rt_kernels_movement[i].op_type);
    printf(
        "%d outputs compared (%d with dims from shape inference, %d where inference was wrong and the kernel "
        "refused its dims), %d refusals\n",
        n_compared, n_inferred, n_inference_bugs, n_refusals);
    return pc_test_finish("test_runtime_movement");
}
