/* The graph builder every family uses: inputs, constants, nodes with shape inference, the value pool with
 * value intervals, and the finish step (outputs and input data). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "generators/gen.h"

static double unit_random(uint64_t *s)
{
    return (double)(pc_splitmix64(s) >> 11) / 9007199254740992.0;
}

/* Writes x, rounded and clamped for integer types, as element k of a raw buffer. */
static bool store_element(pc_dtype dt, void *data, uint64_t k, double x)
{
    double r = nearbyint(x);
    switch (dt) {
    case PC_DTYPE_FLOAT:
        ((float *)data)[k] = (float)x;
        return true;
    case PC_DTYPE_DOUBLE:
        ((double *)data)[k] = x;
        return true;
    case PC_DTYPE_FLOAT16:
        ((uint16_t *)data)[k] = pc_half_from_double(x);
        return true;
    case PC_DTYPE_BFLOAT16:
        ((uint16_t *)data)[k] = pc_bfloat16_from_double(x);
        return true;
    case PC_DTYPE_INT8:
        ((int8_t *)data)[k] = (int8_t)fmin(fmax(r, -128), 127);
        return true;
    case PC_DTYPE_UINT8:
        ((uint8_t *)data)[k] = (uint8_t)fmin(fmax(r, 0), 255);
        return true;
    case PC_DTYPE_INT16:
        ((int16_t *)data)[k] = (int16_t)fmin(fmax(r, -32768), 32767);
        return true;
    case PC_DTYPE_UINT16:
        ((uint16_t *)data)[k] = (uint16_t)fmin(fmax(r, 0), 65535);
        return true;
    case PC_DTYPE_INT32:
        ((int32_t *)data)[k] = (int32_t)fmin(fmax(r, -2147483648.0), 2147483647.0);
        return true;
    case PC_DTYPE_UINT32:
        ((uint32_t *)data)[k] = (uint32_t)fmin(fmax(r, 0), 4294967295.0);
        return true;
    case PC_DTYPE_INT64:
        ((int64_t *)data)[k] = (int64_t)fmin(fmax(r, -9.0e18), 9.0e18);
        return true;
    case PC_DTYPE_UINT64:
        ((uint64_t *)data)[k] = (uint64_t)fmin(fmax(r, 0), 1.8e19);
        return true;
    case PC_DTYPE_BOOL:
        ((uint8_t *)data)[k] = r != 0;
        return true;
    default:
        return false;
    }
}

static bool dtype_is_float(pc_dtype dt)
{
    return dt == PC_DTYPE_FLOAT || dt == PC_DTYPE_DOUBLE;
}

/* Values drawn uniformly from [lo, hi] (infinite ends clamp to +-4). With allow_special, about one element in
 * 32 of a float tensor is NaN, +-Inf, -0 or huge, and one float tensor in two is zero-heavy: half its
 * elements are +0 or -0, so two such tensors meet in ties of opposite zeros (Min, Max, Clip, Relu must say
 * which zero wins, as the reference does). */
static bool fill_random(pc_dtype dt, void *data, uint64_t n, double lo, double hi, uint64_t *seed,
                        bool special)
{
    if (!isfinite(lo)) lo = hi < -4 ? hi - 8 : -4;
    if (!isfinite(hi)) hi = lo > 4 ? lo + 8 : 4;
    if (hi < lo) hi = lo;
    special = special && dtype_is_float(dt);
    bool zeros = special && pc_splitmix64(seed) % 2 == 0;
    for (uint64_t k = 0; k < n; k++) {
        double x = lo + unit_random(seed) * (hi - lo);
        if (special) {
            static const double specials[] = {NAN, INFINITY, -INFINITY, -0.0, 3.0e38, -3.0e38, 1e-40};
            uint64_t r = pc_splitmix64(seed);
            if (r % 32 == 0)
                x = specials[(r >> 8) % (sizeof specials / sizeof specials[0])];
            else if (zeros && r % 2 == 1)
                x = (r >> 1) % 2 ? -0.0 : 0.0;
        }
        if (!store_element(dt, data, k, x)) return false;
    }
    return true;
}

static pc_status set_static_type(pc_value *v, pc_dtype dt, int32_t rank, const int64_t *dims, pc_error *err)
{
    pc_dim d[PC_MAX_RANK];
    if (rank < 0 || rank > PC_MAX_RANK)
        return pc_error_set(err, PC_ERR_INTERNAL, "generator: rank %d", (int)rank);
    for (int32_t i = 0; i < rank; i++)
        d[i] = (pc_dim){.kind = PC_DIM_KNOWN, .size = dims[i]};
    pc_type t = {.kind = PC_TYPE_TENSOR, .elem = dt, .shape = {.rank = rank, .dims = rank ? d : NULL}};
    return pc_value_set_type(v, &t, err);
}

static pc_gen_value *pool_add(pc_gen *g, pc_value *v, double lo, double hi, bool is_const, pc_error *err)
{
    if (g->n_pool == g->cap_pool) {
        uint32_t cap = g->cap_pool ? g->cap_pool * 2 : 32;
        pc_gen_value **p = realloc(g->pool, (size_t)cap * sizeof *p);
        if (!p) return pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (value pool)"), NULL;
        g->pool = p;
        g->cap_pool = cap;
    }
    /* entries live in the model's arena: a pc_gen_value pointer stays valid while later values join the pool
     * (an array of entries moved on growth, and a unit holding one entry while adding another read freed
     * memory: the pipeline fuzzer's heap-use-after-free in unit_qdq_axis) */
    pc_gen_value *e = pc_arena_alloc(&g->model->arena, sizeof *e);
    if (!e) return pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (value pool)"), NULL;
    *e = (pc_gen_value){.value = v, .lo = lo, .hi = hi, .is_const = is_const};
    g->pool[g->n_pool++] = e;
    return e;
}

bool pc_gen_shape_fits(const pc_gen *g, int32_t rank, const int64_t *dims)
{
    if (rank < 0 || rank > g->cfg->max_rank) return false;
    uint64_t n = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] < 0 || !pc_u64_mul(n, (uint64_t)dims[i], &n)) return false;
    }
    return n <= g->cfg->max_elements;
}

int32_t pc_gen_value_dims(const pc_value *v, int64_t *dims)
{
    if (v->type.kind != PC_TYPE_TENSOR || v->type.shape.rank < 0) return -1;
    for (int32_t i = 0; i < v->type.shape.rank; i++) {
        if (v->type.shape.dims[i].kind != PC_DIM_KNOWN) return -1;
        dims[i] = v->type.shape.dims[i].size;
    }
    return v->type.shape.rank;
}

pc_gen_value *pc_gen_input(pc_gen *g, pc_dtype dtype, int32_t rank, const int64_t *dims, double lo, double hi,
                           pc_error *err)
{
    pc_value *v = pc_graph_add_value(g->graph, NULL, "in", err);
    if (!v || set_static_type(v, dtype, rank, dims, err) != PC_OK ||
        pc_graph_add_input(g->graph, v, err) != PC_OK)
        return NULL;
    if (g->n_ranges == g->cap_ranges) {
        uint32_t cap = g->cap_ranges ? g->cap_ranges * 2 : 8;
        double *a = realloc(g->range_lo, (size_t)cap * sizeof *a);
        if (!a) return pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (input ranges)"), NULL;
        g->range_lo = a;
        double *b = realloc(g->range_hi, (size_t)cap * sizeof *b);
        if (!b) return pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (input ranges)"), NULL;
        g->range_hi = b;
        g->cap_ranges = cap;
    }
    g->range_lo[g->n_ranges] = lo;
    g->range_hi[g->n_ranges] = hi;
    g->n_ranges++;
    return pool_add(g, v, lo, hi, false, err);
}

static pc_gen_value *add_const_tensor(pc_gen *g, pc_tensor *t, double lo, double hi, pc_error *err)
{
    pc_value *v = pc_graph_add_value(g->graph, t->name, NULL, err);
    if (!v || set_static_type(v, t->dtype, t->rank, t->dims, err) != PC_OK ||
        pc_graph_set_initializer(g->graph, v, t, err) != PC_OK)
        return NULL;
    return pool_add(g, v, lo, hi, true, err);
}

static pc_tensor *new_const_tensor(pc_gen *g, pc_dtype dtype, int32_t rank, const int64_t *dims,
                                   pc_error *err)
{
    const char *name = pc_graph_unique_name(g->graph, "w");
    if (!name) return pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (name)"), NULL;
    return pc_tensor_create(g->model, name, dtype, rank, dims, err);
}

pc_gen_value *pc_gen_const(pc_gen *g, pc_dtype dtype, int32_t rank, const int64_t *dims, double lo, double hi,
                           pc_error *err)
{
    pc_tensor *t = new_const_tensor(g, dtype, rank, dims, err);
    if (!t) return NULL;
    uint64_t seed = pc_draw(g->ch, UINT32_MAX); /* one draw: 0 still gives varied values */
    if (!fill_random(dtype, t->data, t->n_elements, lo, hi, &seed, false))
        return pc_error_set(err, PC_ERR_INTERNAL, "generator: cannot fill a %s constant",
                            pc_dtype_name(dtype)),
               NULL;
    double l = dtype_is_float(dtype) ? lo : nearbyint(lo), h = dtype_is_float(dtype) ? hi : nearbyint(hi);
    return add_const_tensor(g, t, l, h, err);
}

pc_gen_value *pc_gen_const_i64(pc_gen *g, pc_dtype dtype, int32_t rank, const int64_t *dims,
                               const int64_t *values, pc_error *err)
{
    pc_tensor *t = new_const_tensor(g, dtype, rank, dims, err);
    if (!t) return NULL;
    double lo = INFINITY, hi = -INFINITY;
    for (uint64_t k = 0; k < t->n_elements; k++) {
        if (dtype == PC_DTYPE_INT64)
            ((int64_t *)t->data)[k] = values[k];
        else if (!store_element(dtype, t->data, k, (double)values[k]))
            return pc_error_set(err, PC_ERR_INTERNAL, "generator: cannot store %s", pc_dtype_name(dtype)),
                   NULL;
        lo = fmin(lo, (double)values[k]);
        hi = fmax(hi, (double)values[k]);
    }
    if (t->n_elements == 0) lo = hi = 0;
    return add_const_tensor(g, t, lo, hi, err);
}

pc_gen_value *pc_gen_const_f32(pc_gen *g, pc_dtype dtype, int32_t rank, const int64_t *dims,
                               const float *values, pc_error *err)
{
    pc_tensor *t = new_const_tensor(g, dtype, rank, dims, err);
    if (!t) return NULL;
    double lo = INFINITY, hi = -INFINITY;
    for (uint64_t k = 0; k < t->n_elements; k++) {
        if (!store_element(dtype, t->data, k, values[k]))
            return pc_error_set(err, PC_ERR_INTERNAL, "generator: cannot store %s", pc_dtype_name(dtype)),
                   NULL;
        lo = fmin(lo, values[k]);
        hi = fmax(hi, values[k]);
    }
    if (t->n_elements == 0) lo = hi = 0;
    return add_const_tensor(g, t, lo, hi, err);
}

pc_gen_value *pc_gen_lookup(pc_gen *g, const pc_value *value)
{
    for (uint32_t i = g->n_pool; i-- > 0;)
        if (g->pool[i]->value == value) return g->pool[i];
    return NULL;
}

pc_node *pc_gen_node_begin(pc_gen *g, const char *op_type, const char *domain, uint32_t n_inputs,
                           pc_value *const *inputs, uint32_t n_outputs, pc_error *err)
{
    pc_node *n =
        pc_graph_add_node(g->graph, op_type, domain ? domain : "", n_inputs, inputs, n_outputs, NULL, err);
    if (!n) return NULL;
    const char *name = pc_graph_unique_name(g->graph, op_type);
    if (!name) return pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (node name)"), NULL;
    n->name = name;
    return n;
}

pc_status pc_gen_node_end(pc_gen *g, pc_node *node, double lo, double hi, pc_error *err)
{
    pc_error ierr;
    if (pc_node_infer_shapes(node, &ierr) != PC_OK)
        return pc_error_set(err, PC_ERR_INTERNAL,
                            "generator (%s family) made node '%s' (%s) that shape inference "
                            "rejects: %s",
                            g->cfg->family, node->name, node->op_type, ierr.message);
    bool is_const = node->n_inputs > 0;
    for (uint32_t i = 0; i < node->n_inputs; i++) {
        pc_value *in = node->inputs[i];
        if (!in) continue;
        pc_gen_value *e = pc_gen_lookup(g, in);
        if (e) e->uses++;
        if (!in->initializer && !(e && e->is_const)) is_const = false;
    }
    for (uint32_t o = 0; o < node->n_outputs; o++) {
        pc_value *v = node->outputs[o];
        if (!v) continue;
        int64_t dims[PC_MAX_RANK];
        int32_t rank = pc_gen_value_dims(v, dims);
        if (rank < 0 || v->type.elem == PC_DTYPE_UNDEFINED)
            return pc_error_set(err, PC_ERR_INTERNAL,
                                "generator (%s family): output %u of node '%s' (%s) has no "
                                "static type after shape inference",
                                g->cfg->family, o, node->name, node->op_type);
        if (!pool_add(g, v, lo, hi, is_const, err)) return err->status;
    }
    g->n_ops++;
    return PC_OK;
}

pc_gen_value *pc_gen_pick(pc_gen *g, pc_gen_accept_fn accept, void *ctx)
{
    uint32_t n = 0;
    for (uint32_t i = g->pick_floor; i < g->n_pool; i++)
        if (!accept || accept(g->pool[i], ctx)) n++;
    if (n == 0) return NULL;
    uint32_t k = pc_draw(g->ch, n); /* 0: the most recent candidate */
    for (uint32_t i = g->n_pool; i-- > g->pick_floor;)
        if (!accept || accept(g->pool[i], ctx)) {
            if (k == 0) return g->pool[i];
            k--;
        }
    return NULL;
}

bool pc_gen_continue(pc_gen *g)
{
    if (g->n_ops >= g->cfg->max_nodes) return false;
    /* Mostly continue on fresh draws (graphs of a few to max_nodes ops); the value 0 stops. The stop odds
     * shrink as max_nodes grows, so a large --max-nodes gives large graphs (mean length about 2/3 of it)
     * instead of the same ~8-op graphs; up to 12 they are the default's 12%. */
    uint32_t stop = g->cfg->max_nodes <= 12 ? 12 : 150 / g->cfg->max_nodes;
    return pc_draw_bool(g->ch, 100 - (stop ? stop : 1));
}

pc_status pc_gen_finish(pc_gen *g, pc_error *err)
{
    /* Outputs: every node output nothing consumes (in creation order). Unused inputs and constants stay out.
     */
    for (uint32_t i = 0; i < g->n_pool; i++) {
        pc_value *v = g->pool[i]->value;
        if (!v->producer || v->n_consumers > 0 || v->is_graph_output) continue;
        if (pc_graph_add_output(g->graph, v, err) != PC_OK) return err->status;
    }
    if (g->graph->n_outputs == 0)
        return pc_error_set(err, PC_ERR_INTERNAL, "generator (%s family) made a graph without outputs",
                            g->cfg->family);
    /* Graph inputs nothing reads would only confuse the repro: drop them. Ranges follow the non-initializer
     * inputs in creation order; re-index them by the kept graph-input position. */
    uint32_t kept = 0, r = 0, n_in = g->graph->n_inputs;
    double *lo = calloc(n_in ? n_in : 1, sizeof *lo), *hi = calloc(n_in ? n_in : 1, sizeof *hi);
    if (!lo || !hi) {
        free(lo);
        free(hi);
        return pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (input ranges)");
    }
    for (uint32_t i = 0; i < n_in; i++) {
        pc_value *v = g->graph->inputs[i];
        if (!v->initializer) {
            uint32_t range = r++;
            if (v->n_consumers == 0 && !v->is_graph_output) {
                v->is_graph_input = false;
                continue;
            }
            lo[kept] = range < g->n_ranges ? g->range_lo[range] : -1;
            hi[kept] = range < g->n_ranges ? g->range_hi[range] : 1;
        }
        g->graph->inputs[kept++] = v;
    }
    g->graph->n_inputs = kept;
    free(g->range_lo);
    free(g->range_hi);
    g->range_lo = lo;
    g->range_hi = hi;
    g->n_ranges = g->cap_ranges = n_in;

    /* Input data from one seed draw. */
    uint64_t seed = pc_draw(g->ch, UINT32_MAX);
    pc_case *c = g->out;
    c->inputs = calloc(kept ? kept : 1, sizeof *c->inputs);
    if (!c->inputs) return pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (inputs)");
    uint32_t k = 0;
    for (uint32_t i = 0; i < kept; i++) {
        pc_value *v = g->graph->inputs[i];
        if (v->initializer) continue;
        int64_t dims[PC_MAX_RANK];
        int32_t rank = pc_gen_value_dims(v, dims);
        pc_data *d = rank < 0 ? NULL : pc_data_new_tensor(v->type.elem, rank, dims, err);
        if (!d)
            return rank < 0
                       ? pc_error_set(err, PC_ERR_INTERNAL, "generator: input '%s' is not static", v->name)
                       : err->status;
        c->inputs[k] = d;
        c->n_inputs = ++k;
        if (!fill_random(d->dtype, d->data, d->n_elements, g->range_lo[i], g->range_hi[i], &seed,
                         g->cfg->allow_special))
            return pc_error_set(err, PC_ERR_INTERNAL, "generator: cannot draw %s data for input '%s'",
                                pc_dtype_name(d->dtype), v->name);
    }
    return PC_OK;
}

pc_status pc_gen_symbolic_dims(pc_gen *g, pc_error *err)
{
    static const char *const names[] = {"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9"};
    pc_graph *graph = g->graph;
    bool any = false;
    for (uint32_t i = 0; i < graph->n_inputs; i++) {
        pc_value *v = graph->inputs[i];
        if (v->initializer || v->type.kind != PC_TYPE_TENSOR || v->type.shape.rank <= 0) continue;
        pc_type t = v->type;
        pc_dim dims[PC_MAX_RANK];
        memcpy(dims, t.shape.dims, (size_t)t.shape.rank * sizeof *dims);
        bool changed = false;
        for (int32_t k = 0; k < t.shape.rank; k++) {
            /* dim 0 (the batch) mostly; the others now and then */
            if (dims[k].kind != PC_DIM_KNOWN || dims[k].size > 9 || !pc_draw_bool(g->ch, k == 0 ? 60 : 20))
                continue;
            dims[k] = (pc_dim){.kind = PC_DIM_SYMBOLIC, .symbol = names[dims[k].size]};
            changed = true;
        }
        if (!changed) continue;
        t.shape.dims = dims;
        if (pc_value_set_type(v, &t, err) != PC_OK) return err->status;
        any = true;
    }
    if (!any) return PC_OK;
    pc_type none = {.kind = PC_TYPE_NONE, .shape = {.rank = -1}};
    for (uint32_t i = 0; i < graph->n_values; i++) {
        pc_value *v = graph->values[i];
        if (v->producer && pc_value_set_type(v, &none, err) != PC_OK) return err->status;
    }
    pc_error ierr;
    if (pc_graph_infer_shapes(graph, &ierr) != PC_OK)
        return pc_error_set(err, PC_ERR_INTERNAL,
                            "generator (%s family): shape inference rejects the graph once its inputs have "
                            "symbolic dims: %s",
                            g->cfg->family, ierr.message);
    return PC_OK;
}

/* Ops whose inputs are all plain data: a zero there is a value like any other (not a scale, a size, a step or
 * a ratio whose zero would make the graph invalid or mean something else). */
static bool reads_plain_data(const pc_node *n)
{
    static const char *const ops[] = {"Add",  "Sub", "Mul",   "Div",    "Min",   "Max",  "Sum",
                                      "Mean", "Pow", "PRelu", "Concat", "Equal", "Less", "Greater"};
    if (n->domain && n->domain[0]) return false;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(n->op_type, ops[i]) == 0) return true;
    return false;
}

pc_status pc_gen_zero_constants(pc_gen *g, pc_error *err)
{
    pc_graph *graph = g->graph;
    for (uint32_t i = 0; i < graph->n_initializers; i++) {
        pc_value *v = graph->initializers[i];
        pc_tensor *t = v->initializer;
        if (!t || !dtype_is_float(t->dtype) || !v->n_consumers) continue;
        bool plain = true;
        for (uint32_t k = 0; k < v->n_consumers && plain; k++)
            plain = reads_plain_data(v->consumers[k].node);
        if (!plain || !pc_draw_bool(g->ch, 50)) continue;
        uint64_t seed = pc_draw(g->ch, UINT32_MAX);
        for (uint64_t k = 0; k < t->n_elements; k++) {
            uint64_t r = pc_splitmix64(&seed);
            if (r % 2 == 1 && !store_element(t->dtype, t->data, k, (r >> 1) % 2 ? -0.0 : 0.0))
                return pc_error_set(err, PC_ERR_INTERNAL, "generator: cannot store a zero in '%s'", v->name);
        }
    }
    return PC_OK;
}

pc_status pc_gen_empty_inputs(pc_gen *g, pc_error *err)
{
    for (pc_node *n = g->graph->first; n; n = n->next) {
        const pc_op_schema *s = pc_schema_lookup(n->domain, n->op_type, pc_model_opset(g->model, n->domain));
        if (!s || s->max_inputs == PC_SCHEMA_VARIADIC || n->n_inputs >= s->max_inputs ||
            !pc_draw_bool(g->ch, 10))
            continue;
        uint32_t add = 1 + pc_draw(g->ch, (uint32_t)(s->max_inputs - n->n_inputs));
        for (uint32_t k = 0; k < add; k++)
            if (pc_node_add_input(n, NULL, err) != PC_OK) return err->status;
    }
    return PC_OK;
}
