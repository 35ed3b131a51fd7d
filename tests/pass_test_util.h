/* Builders and oracles for pass tests: build a small graph in a few lines, clone it, run a pass, and compare
 * the graph before and after on the reference executor with the same random inputs.
 *
 *     pc_model *m = pt_model(17);
 *     pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 4});
 *     pt_node(m, "Relu", "", "x", "y", "encoder.block0");   // annotation optional (NULL)
 *     pt_output(m, "y");
 *     pc_model *before = pt_clone(m);
 *     ... run the pass on m->graph ...
 *     char why[PT_WHY_SIZE];
 *     CHECK_MSG(pt_equiv(before, m, 1, 0, 0, why, sizeof why) == 1, "%s", why);   // bit-exact
 *
 * Builders abort the test on misuse (a broken test, not a finding). Header-only so each test stays one file.
 */
#ifndef PC_PASS_TEST_UTIL_H
#define PC_PASS_TEST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ir/ir_internal.h"
#include "core/passcheck.h"
#include "generators/gen.h"
#include "reference/reference.h"
#include "tests/test_util.h"

/* Room for a reason that quotes a whole pc_error message (1024 bytes) after its own context. */
enum { PT_WHY_SIZE = 2048 };

static inline void pt_die(const char *what, const pc_error *err)
{
    fprintf(stderr, "pass_test_util: %s: %s\n", what, err ? err->message : "");
    exit(2);
}

/* An empty model importing ai.onnx at `opset` (IR 10). */
static inline pc_model *pt_model(int64_t opset)
{
    pc_model *m = NULL;
    pc_error err;
    if (pc_model_create(&m, &err) != PC_OK) pt_die("pc_model_create", &err);
    if (pc_model_set_opset(m, "", opset, &err) != PC_OK) pt_die("pc_model_set_opset", &err);
    return m;
}

static inline pc_status pt_set_tensor_type(pc_value *v, pc_dtype dt, int32_t rank, const int64_t *dims,
                                           pc_error *err)
{
    pc_dim d[PC_MAX_RANK];
    for (int32_t i = 0; i < rank; i++)
        d[i] =
            (pc_dim){.kind = dims[i] < 0 ? PC_DIM_UNKNOWN : PC_DIM_KNOWN, .size = dims[i] < 0 ? 0 : dims[i]};
    pc_type t = {.kind = PC_TYPE_TENSOR, .elem = dt, .shape = {.rank = rank, .dims = rank ? d : NULL}};
    return pc_value_set_type(v, &t, err);
}

/* A graph input; a negative dim is an unknown dim, rank -1 an unknown rank. */
static inline pc_value *pt_input(pc_model *m, const char *name, pc_dtype dt, int32_t rank,
                                 const int64_t *dims)
{
    pc_error err;
    pc_value *v = pc_graph_add_value(m->graph, name, NULL, &err);
    if (!v) pt_die(name, &err);
    if (rank >= 0 && pt_set_tensor_type(v, dt, rank, dims, &err) != PC_OK) pt_die(name, &err);
    if (rank < 0) {
        pc_type t = {.kind = PC_TYPE_TENSOR, .elem = dt, .shape = {.rank = -1}};
        if (pc_value_set_type(v, &t, &err) != PC_OK) pt_die(name, &err);
    }
    if (pc_graph_add_input(m->graph, v, &err) != PC_OK) pt_die(name, &err);
    return v;
}

/* A graph input whose dim i is symbolic, named symbols[i], or known, dims[i], where symbols[i] is NULL. */
static inline pc_value *pt_input_symbolic(pc_model *m, const char *name, pc_dtype dt, int32_t rank,
                                          const int64_t *dims, const char *const *symbols)
{
    pc_error err;
    pc_value *v = pt_input(m, name, dt, rank, dims);
    pc_dim d[PC_MAX_RANK];
    for (int32_t i = 0; i < rank; i++)
        d[i] = symbols[i] ? (pc_dim){.kind = PC_DIM_SYMBOLIC, .symbol = symbols[i]}
                          : (pc_dim){.kind = PC_DIM_KNOWN, .size = dims[i]};
    pc_type t = {.kind = PC_TYPE_TENSOR, .elem = dt, .shape = {.rank = rank, .dims = rank ? d : NULL}};
    if (pc_value_set_type(v, &t, &err) != PC_OK) pt_die(name, &err);
    return v;
}

/* A constant initializer with raw little-endian data (NULL: zeros). */
static inline pc_value *pt_const(pc_model *m, const char *name, pc_dtype dt, int32_t rank,
                                 const int64_t *dims, const void *data)
{
    pc_error err;
    pc_tensor *t = pc_tensor_create(m, name, dt, rank, dims, &err);
    if (!t) pt_die(name, &err);
    if (data) memcpy(t->data, data, t->n_bytes);
    pc_value *v = pc_graph_add_value(m->graph, name, NULL, &err);
    if (!v) pt_die(name, &err);
    if (pc_graph_set_initializer(m->graph, v, t, &err) != PC_OK) pt_die(name, &err);
    return v;
}

static inline pc_value *pt_const_f(pc_model *m, const char *name, int32_t rank, const int64_t *dims,
                                   const float *v)
{
    return pt_const(m, name, PC_DTYPE_FLOAT, rank, dims, v);
}

/* A 1-D int64 constant (e.g. axes, shape, pads). */
static inline pc_value *pt_const_i64(pc_model *m, const char *name, size_t n, const int64_t *values)
{
    int64_t dim = (int64_t)n;
    return pt_const(m, name, PC_DTYPE_INT64, 1, &dim, values);
}

/* Splits a comma-separated list of names in place; "" entries are omitted optional inputs. */
static inline size_t pt_split(char *s, char **parts, size_t cap)
{
    size_t n = 0;
    if (!*s) return 0;
    for (char *p = s;;) {
        char *c = strchr(p, ',');
        if (n == cap) pt_die("too many names", NULL);
        parts[n++] = p;
        if (!c) break;
        *c = '\0';
        p = c + 1;
    }
    return n;
}

/* A node reading the named values and producing newly named outputs; named after its first output. */
static inline pc_node *pt_node(pc_model *m, const char *op, const char *domain, const char *inputs,
                               const char *outputs, const char *annotation)
{
    pc_error err;
    char ibuf[1024], obuf[1024];
    char *ins[64], *outs[64];
    snprintf(ibuf, sizeof ibuf, "%s", inputs ? inputs : "");
    snprintf(obuf, sizeof obuf, "%s", outputs ? outputs : "");
    size_t n_in = pt_split(ibuf, ins, 64), n_out = pt_split(obuf, outs, 64);
    pc_node *n = pc_graph_new_node(m->graph, op, domain ? domain : "");
    if (!n) pt_die(op, NULL);
    n->name = pc_arena_strdup(&m->arena, n_out ? outs[0] : op);
    for (size_t i = 0; i < n_in; i++) {
        pc_value *v = NULL;
        if (*ins[i]) {
            v = pc_graph_find_value(m->graph, ins[i]);
            if (!v) pt_die(ins[i], NULL);
        }
        if (pc_node_add_input(n, v, &err) != PC_OK) pt_die(ins[i], &err);
    }
    for (size_t i = 0; i < n_out; i++) {
        pc_value *v = *outs[i] ? pc_graph_add_value(m->graph, outs[i], NULL, &err) : NULL;
        if (*outs[i] && !v) pt_die(outs[i], &err);
        /* v NULL: an omitted optional output (an empty slot) */
        if (pc_node_append_output(n, v, &err) != PC_OK) pt_die(outs[i], &err);
    }
    if (annotation && pc_node_set_metadata(n, PC_LAYER_ANN_KEY, annotation, &err) != PC_OK) pt_die(op, &err);
    if (domain && *domain && pc_model_opset(m, domain) < 0 && pc_model_set_opset(m, domain, 1, &err) != PC_OK)
        pt_die(domain, &err);
    return n;
}

static inline void pt_output(pc_model *m, const char *name)
{
    pc_error err;
    pc_value *v = pc_graph_find_value(m->graph, name);
    if (!v) pt_die(name, NULL);
    if (pc_graph_add_output(m->graph, v, &err) != PC_OK) pt_die(name, &err);
}

/* A deep copy through the saver and loader (also proves the model serializes). */
static inline pc_model *pt_clone(const pc_model *m)
{
    pc_error err;
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (pc_model_save_bytes(m, &bytes, &size, &err) != PC_OK) pt_die("pt_clone save", &err);
    pc_load_options o;
    pc_load_options_default(&o);
    o.skip_verify = true;
    pc_model *c = NULL;
    if (pc_model_load_bytes(bytes, size, &o, &c, &err) != PC_OK) pt_die("pt_clone load", &err);
    free(bytes);
    return c;
}

static inline int pt_count_op(const pc_model *m, const char *op)
{
    int n = 0;
    for (const pc_node *x = m->graph->first; x; x = x->next)
        n += strcmp(x->op_type, op) == 0;
    return n;
}

/* Nodes of graph g with this domain and op type. */
static inline int pt_count_in(const pc_graph *g, const char *domain, const char *op)
{
    int n = 0;
    for (const pc_node *x = g->first; x; x = x->next)
        n += strcmp(x->domain, domain) == 0 && strcmp(x->op_type, op) == 0;
    return n;
}

/* Every node of graph g is on EP ep. */
static inline void pt_all_on(const pc_graph *g, const char *ep)
{
    for (const pc_node *n = g->first; n; n = n->next)
        CHECK_MSG(n->ep && strcmp(n->ep, ep) == 0, "node '%s' (%s) is on EP '%s', not %s", n->name,
                  n->op_type, n->ep ? n->ep : "(none)", ep);
}

/* The whole pipeline with these EPs, verifying after every pass. */
static inline void pt_optimize_eps(pc_model *m, const pc_ep *const *eps, uint32_t n_eps)
{
    pc_optimize_options o;
    pc_optimize_options_default(&o);
    o.eps = eps;
    o.n_eps = n_eps;
    o.verify_each_pass = true;
    pc_error err;
    CHECK_OK(pc_model_optimize(m, &o, NULL, &err), &err);
}

/* --explain sink shared by pass tests: counts lines, keeps the first message and the last line ("pass:
 * message"). Tests reset pt_log.n before a run when they look at the first message. */
typedef struct pt_trace_log {
    int n;
    char first[512];
    char last[512];
} pt_trace_log;

static pt_trace_log pt_log;

static inline void pt_trace_emit(void *ctx, const char *pass, const char *message)
{
    pt_trace_log *t = ctx;
    if (++t->n == 1) snprintf(t->first, sizeof t->first, "%s", message);
    snprintf(t->last, sizeof t->last, "%s: %s", pass, message);
}

static pc_trace pt_trace = {pt_trace_emit, &pt_log};

/* Options as the pipeline sets them before partitioning, reporting to pt_log. */
static inline pc_pass_options pt_pass_options(const char *pass_name)
{
    pc_pass_options o = {0};
    o.trace = &pt_trace;
    o.pass_name = pass_name;
    o.max_fold_elements = 1u << 16;
    return o;
}

/* Runs a pass once; it must succeed and leave a valid graph. Returns its changed flag. */
static inline bool pt_run_pass(pc_pass_fn fn, pc_model *m, const pc_pass_options *o)
{
    bool changed = false;
    pc_error err;
    pc_error_clear(&err);
    CHECK_OK(fn(m->graph, o, &changed, &err), &err);
    CHECK_OK(pc_graph_verify(m->graph, &err), &err);
    return changed;
}

/* deterministic inputs from a seed: the generators' splitmix64 */
static inline uint64_t pt_rand(uint64_t *s)
{
    return pc_splitmix64(s);
}

/* A generated value's declared type against the one shape inference gives from scratch: equal, except that a
 * declaration may know dims inference cannot (an exporter's value_info on a node reading computed pads,
 * repeats or starts: the generators declare what the values make). */
static inline bool pt_type_refines(const pc_type *declared, const pc_type *inferred)
{
    if (pc_type_equal(declared, inferred)) return true;
    if (declared->kind != PC_TYPE_TENSOR || inferred->kind != PC_TYPE_TENSOR ||
        declared->elem != inferred->elem || declared->shape.rank != inferred->shape.rank ||
        declared->shape.rank < 0)
        return false;
    for (int32_t k = 0; k < declared->shape.rank; k++) {
        const pc_dim *d = &declared->shape.dims[k], *i = &inferred->shape.dims[k];
        if (i->kind == PC_DIM_UNKNOWN) continue;
        if (d->kind != i->kind || (d->kind == PC_DIM_KNOWN && d->size != i->size)) return false;
    }
    return true;
}

/* Random data for one graph input: floats in [-2, 2) with a few exact zeros and negative zeros; integers in
 * [-5, 5] (unsigned [0, 10]); bools. Unknown dims become 2. NULL for types it cannot make. */
static inline pc_data *pt_random_input(const pc_value *v, uint64_t *seed)
{
    pc_error err;
    if (v->type.kind != PC_TYPE_TENSOR || v->type.shape.rank < 0) return NULL;
    int64_t dims[PC_MAX_RANK];
    for (int32_t i = 0; i < v->type.shape.rank; i++)
        dims[i] = v->type.shape.dims[i].kind == PC_DIM_KNOWN ? v->type.shape.dims[i].size : 2;
    pc_data *d = pc_data_new_tensor(v->type.elem, v->type.shape.rank, dims, &err);
    if (!d) return NULL;
    for (uint64_t k = 0; k < d->n_elements; k++) {
        uint64_t r = pt_rand(seed);
        double f = ((double)(r >> 11) / 9007199254740992.0) * 4.0 - 2.0;
        if ((r & 31) == 0) f = 0.0;
        if ((r & 31) == 1) f = -0.0;
        int64_t iv = (int64_t)(r % 11) - 5;
        switch (d->dtype) {
        case PC_DTYPE_FLOAT:
            ((float *)d->data)[k] = (float)f;
            break;
        case PC_DTYPE_DOUBLE:
            ((double *)d->data)[k] = f;
            break;
        case PC_DTYPE_INT64:
            ((int64_t *)d->data)[k] = iv;
            break;
        case PC_DTYPE_INT32:
            ((int32_t *)d->data)[k] = (int32_t)iv;
            break;
        case PC_DTYPE_INT8:
            ((int8_t *)d->data)[k] = (int8_t)iv;
            break;
        case PC_DTYPE_UINT8:
            ((uint8_t *)d->data)[k] = (uint8_t)(r % 256);
            break;
        case PC_DTYPE_BOOL:
            ((uint8_t *)d->data)[k] = (uint8_t)(r & 1);
            break;
        default:
            pc_data_unref(d);
            return NULL;
        }
    }
    return d;
}

/* rtol = atol = 0 promises bit-exact, but pc_data_compare calls -0 and +0 equal: compare float32/64 tensors
 * bit by bit too (NaNs, already matched by position, may differ in payload). Index of the first differing
 * element, or -1. */
static inline int64_t pt_first_bit_difference(const pc_data *x, const pc_data *y)
{
    if (x->kind == PC_TYPE_SEQUENCE || x->kind == PC_TYPE_OPTIONAL) {
        for (uint32_t i = 0; i < x->n_items && i < y->n_items; i++)
            if (pt_first_bit_difference(x->items[i], y->items[i]) >= 0) return (int64_t)i;
        return -1;
    }
    if (x->kind != PC_TYPE_TENSOR || x->dtype != y->dtype || x->n_elements != y->n_elements) return -1;
    for (uint64_t k = 0; k < x->n_elements; k++) {
        if (x->dtype == PC_DTYPE_FLOAT) {
            float a, b;
            memcpy(&a, (const char *)x->data + k * 4, 4);
            memcpy(&b, (const char *)y->data + k * 4, 4);
            if (!(a != a && b != b) && memcmp(&a, &b, 4) != 0) return (int64_t)k;
        } else if (x->dtype == PC_DTYPE_DOUBLE) {
            double a, b;
            memcpy(&a, (const char *)x->data + k * 8, 8);
            memcpy(&b, (const char *)y->data + k * 8, 8);
            if (!(a != a && b != b) && memcmp(&a, &b, 8) != 0) return (int64_t)k;
        }
    }
    return -1;
}

/* Runs `before` and `after` on the reference executor with the inputs ins[0..n) (one per graph input of
 * `before` that is not an initializer) and compares outputs by position with pc_data_compare(rtol, atol):
 * rtol = atol = 0 is bit-exact (NaN positions and inf signs compared first, then float bits: -0 is not +0).
 * Returns 1 equal, 0 different, -1 when a run failed (why says which and how). */
static inline int pt_equiv_inputs(const pc_model *before, const pc_model *after, uint32_t n,
                                  pc_data *const *ins, double rtol, double atol, char *why, size_t why_size)
{
    pc_error err;
    const pc_graph *g = before->graph;
    if (g->n_outputs != after->graph->n_outputs) {
        snprintf(why, why_size, "%u outputs before, %u after", g->n_outputs, after->graph->n_outputs);
        return 0;
    }
    pc_data **a = NULL, **b = NULL;
    int result = 1;
    if (pc_ref_run(before, n, ins, &a, &err) != PC_OK) {
        snprintf(why, why_size, "reference run of the original failed: %s", err.message);
        result = -1;
    } else if (pc_ref_run(after, n, ins, &b, &err) != PC_OK) {
        snprintf(why, why_size, "reference run of the transformed graph failed: %s", err.message);
        result = -1;
    } else {
        for (uint32_t i = 0; i < g->n_outputs; i++) {
            pc_compare_result r;
            if (pc_data_compare(a[i], b[i], rtol, atol, &r) != PC_COMPARE_EQUAL) {
                snprintf(why, why_size, "output %u ('%s'): %s", i, g->outputs[i]->name, r.detail);
                result = 0;
                break;
            }
            int64_t k = rtol == 0 && atol == 0 ? pt_first_bit_difference(a[i], b[i]) : -1;
            if (k >= 0) {
                snprintf(why, why_size,
                         "output %u ('%s'): element %lld differs in its bits (bit-exact expected; "
                         "the sign of a zero?)",
                         i, g->outputs[i]->name, (long long)k);
                result = 0;
                break;
            }
        }
    }
    if (a) pc_ref_free_outputs(before, a);
    if (b) pc_ref_free_outputs(after, b);
    return result;
}

/* pt_equiv_inputs with random inputs drawn from `before`'s graph inputs (pt_random_input: a symbolic dim
 * becomes 2, so models whose symbolic dims stand for other sizes need their own inputs). */
static inline int pt_equiv(const pc_model *before, const pc_model *after, uint64_t seed, double rtol,
                           double atol, char *why, size_t why_size)
{
    const pc_graph *g = before->graph;
    pc_data *ins[256];
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->n_inputs && n < 256; i++) {
        if (g->inputs[i]->initializer) continue;
        ins[n] = pt_random_input(g->inputs[i], &seed);
        if (!ins[n]) {
            snprintf(why, why_size, "cannot make an input for '%s'", g->inputs[i]->name);
            for (uint32_t k = 0; k < n; k++)
                pc_data_unref(ins[k]);
            return -1;
        }
        n++;
    }
    int result = pt_equiv_inputs(before, after, n, ins, rtol, atol, why, why_size);
    for (uint32_t k = 0; k < n; k++)
        pc_data_unref(ins[k]);
    return result;
}

/* A random case of `family` (default generator config) drawn from `seed`; false (a failed check naming the
 * family and seed) when generation fails. The caller frees *c with pc_case_free. */
static inline bool pt_generate(const char *family, uint64_t seed, pc_case *c)
{
    pc_gen_config cfg;
    pc_gen_config_default(&cfg);
    cfg.family = family;
    pc_choices ch;
    pc_choices_init_random(&ch, seed);
    pc_error err;
    pc_status st = pc_case_generate(&cfg, &ch, c, &err);
    CHECK_MSG(st == PC_OK, "generate %s, seed %llu: %s", family, (unsigned long long)seed, err.message);
    pc_choices_free(&ch);
    return st == PC_OK;
}

/* The runtime on `m` as given (a session without a second optimization), fed one random input per graph
 * input from `seed`, against the reference executor on the same inputs, within rtol/atol (0, 0: bit for bit).
 */
static inline void pt_runtime_equals_reference(const pc_model *m, uint64_t seed, double rtol, double atol,
                                               const char *what)
{
    pc_session_options so;
    pc_session_options_default(&so);
    so.optimize = false;
    pc_session *s = NULL;
    pc_error err;
    CHECK_OK(pc_session_create(m, &so, &s, &err), &err);
    if (!s) return;
    pc_data *ins[16];
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->graph->n_inputs && n < 16; i++)
        if (!m->graph->inputs[i]->initializer) ins[n++] = pt_random_input(m->graph->inputs[i], &seed);
    pc_data **got = NULL, **want = NULL;
    CHECK_OK(pc_session_run(s, n, ins, &got, &err), &err);
    CHECK_OK(pc_ref_run(m, n, ins, &want, &err), &err);
    for (uint32_t i = 0; got && want && i < m->graph->n_outputs; i++) {
        pc_compare_result r;
        CHECK_MSG(pc_data_compare(got[i], want[i], rtol, atol, &r) == PC_COMPARE_EQUAL, "%s: output %u: %s",
                  what, i, r.detail);
    }
    if (got) pc_session_free_outputs(s, got);
    if (want) pc_ref_free_outputs(m, want);
    for (uint32_t i = 0; i < n; i++)
        pc_data_unref(ins[i]);
    pc_session_free(s);
}

#endif
