/* blocked_compile (level 3, for an EP with layout=blocked: pipeline.c's ep_rewrites table): ORT's MKL-DNN
 * subgraph EP. Each subgraph of the EP (pc_model_list_subgraphs: connected, and its contraction acyclic)
 * becomes one `Subgraph` node of PC_BLOCKED_DOMAIN whose `body` holds the subgraph in nChw<b>c
 * (docs/ep.md, "The blocked EP's ops"):
 *  - a blocked primitive for each Conv (group 1, constant weight and bias), BatchNormalization (constant
 * parameters, one output), MaxPool (one output), AveragePool, GlobalMaxPool, GlobalAveragePool and LRN whose
 * input is 4-D with a known channel count, its weight, bias and BatchNormalization vectors re-laid-out once
 * into body initializers; fused as MKL-DNN did: Conv -> BatchNormalization, and Conv / BatchNormalization /
 * Conv-BatchNormalization -> Relu, when the first's output has no other reader (attribute relu, the inputs
 * 3..6 of the blocked Conv);
 *  - Relu, Add and Sum of the domain on blocked tensors when an input is blocked already (Add and Sum: equal
 * shapes), and its Concat on axis 1 when every input's channel count is a multiple of the block;
 *  - anything else (a grouped conv, which the built-in EP refuses but an EP file may claim; a weight that is
 * not a constant; a non-4-D input) the standard op on the plain tensor;
 *  - reorders: one ToBlocked per plain value a blocked node reads, one FromBlocked per blocked value a plain
 * node or the outside reads; a value crossing the subgraph's boundary is plain outside, so every activation
 * edge crossing it is one reorder, and inside there are reorders only where a plain node meets a blocked one.
 * The Subgraph node gets the subgraph's outer inputs (activations) as its inputs and writes its outputs'
 * values (names, consumers, graph-output roles kept), a model-unique `subgraph_id`, and the body nodes'
 * attributes again as `OpType-index-name` (MKL-DNN's MetaDef naming; fused ops as
 * "Conv-BatchNormalization-Relu"). Every node made is on the EP. A subgraph that holds a Subgraph node
 * already (an optimized graph optimized again) is left alone, as is an EP that does not claim `Subgraph` (an
 * EP file with layout=blocked that lists no compiled form). Numerics: the same float operations on
 * zero-padded channels (the reference defines each primitive by the standard op on the padded plain tensor);
 * the runtime inlines the body (core/ir/inline.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ep/ep_internal.h"
#include "core/ir/ir_internal.h"
#include "core/passes/pass_match.h"

/* Forms of one outer value inside the body: plain and blocked (NULL until made). */
typedef struct vform {
    const pc_value *outer;
    pc_value *plain, *blocked;
} vform;

typedef struct state {
    pc_graph *graph, *body;
    const pc_pass_options *opts;
    const pc_ep *ep;
    int64_t block;
    const uint8_t *in_group; /* by node id of graph, n_ids of them */
    uint32_t n_ids;
    vform *forms;
    uint32_t n_forms, cap_forms;
    pc_value **sub_inputs; /* outer activations the body reads, in order of first use */
    uint32_t n_sub_inputs, cap_sub_inputs;
    uint32_t n_reorders;
    const pc_node *source; /* the group node the body node being made comes from (name, EP) */
} state;

static pc_status nomem(pc_error *err)
{
    return pc_error_set(err, PC_ERR_NOMEM, "blocked_compile: out of memory");
}

static bool grow(void **items, uint32_t n, uint32_t *cap, size_t size)
{
    if (n < *cap) return true;
    uint32_t ncap = *cap ? *cap * 2 : 16;
    void *p = realloc(*items, (size_t)ncap * size);
    if (!p) return false;
    *items = p;
    *cap = ncap;
    return true;
}

static vform *form_of(state *s, const pc_value *v, pc_error *err)
{
    for (uint32_t i = 0; i < s->n_forms; i++)
        if (s->forms[i].outer == v) return &s->forms[i];
    if (!grow((void **)&s->forms, s->n_forms, &s->cap_forms, sizeof *s->forms)) {
        nomem(err);
        return NULL;
    }
    s->forms[s->n_forms] = (vform){v, NULL, NULL};
    return &s->forms[s->n_forms++];
}

/* Whether node n (of the outer graph) is in the group being compiled. */
static bool grouped(const state *s, const pc_node *n)
{
    return n->graph == s->graph && n->id < s->n_ids && s->in_group[n->id];
}

/* A body node named after the group node it comes from, on the EP, its outputs typed by inference. */
static pc_node *body_node(state *s, const char *op, const char *domain, uint32_t n_in, pc_value *const *in,
                          pc_error *err)
{
    pc_node *n = pc_graph_add_node(s->body, op, domain, n_in, in, 1, NULL, err);
    if (!n) return NULL;
    const char *hint = s->source->name && s->source->name[0] ? s->source->name : op;
    if (domain[0]) hint = pc_arena_printf(&s->graph->model->arena, "%s/%s", hint, op);
    const char *name = hint ? pc_graph_unique_name(s->body, hint) : NULL;
    if (!name) {
        pc_model_alloc_error(s->graph->model, err, "a node name");
        return NULL;
    }
    n->name = name;
    pc_node_copy_ep(n, s->source);
    return n;
}

/* Infers n's output; a node the EP would not run is removed again (*ok false). */
static pc_status body_node_done(state *s, pc_node *n, bool *ok, pc_error *err)
{
    *ok = false;
    pc_status st = pc_node_infer_shapes(n, err);
    if (st != PC_OK) return st;
    if (pc_ep_claims_node(s->ep, n, NULL, 0)) {
        *ok = true;
        return PC_OK;
    }
    return pc_graph_remove_node(s->body, n, err);
}

/* The channel count of a 4-D float value (-1 when unknown). */
static int64_t channels_of(const pc_value *v)
{
    if (!v || v->type.kind != PC_TYPE_TENSOR || v->type.elem != PC_DTYPE_FLOAT || v->type.shape.rank != 4 ||
        v->type.shape.dims[1].kind != PC_DIM_KNOWN)
        return -1;
    return v->type.shape.dims[1].size;
}

/* A reorder (ToBlocked or FromBlocked, its int attribute `attr` = value) of body value in; the EP must run
 * it. */
static pc_value *reorder(state *s, const char *op, pc_value *in, const char *attr, int64_t value,
                         pc_error *err)
{
    pc_node *r = body_node(s, op, PC_BLOCKED_DOMAIN, 1, &in, err);
    bool ok;
    if (!r || pc_node_set_attr_int(r, attr, value, err) != PC_OK || body_node_done(s, r, &ok, err) != PC_OK)
        return NULL;
    if (!ok) {
        pc_error_set(err, PC_ERR_INTERNAL, "blocked_compile: EP '%s' does not run %s", s->ep->name, op);
        return NULL;
    }
    s->n_reorders++;
    return r->outputs[0];
}

/* The body's plain form of outer value v: a body input (registered as a Subgraph input), a copied constant,
 * the output of the body node made from v's producer, or a FromBlocked of its blocked form. */
static pc_value *plain_form(state *s, const pc_value *v, pc_error *err)
{
    vform *f = form_of(s, v, err);
    if (!f) return NULL;
    if (f->plain) return f->plain;
    if (v->initializer && !v->is_graph_input && v->graph == s->graph) {
        const pc_tensor *t = v->initializer;
        pc_tensor *copy = pc_tensor_create(s->graph->model, NULL, t->dtype, t->rank, t->dims, err);
        if (!copy) return NULL;
        memcpy(copy->data, t->data, t->n_bytes);
        pc_value *c = pc_pass_add_initializer(s->body, v->name, copy, err);
        if (!c) return NULL;
        return form_of(s, v, err)->plain = c;
    }
    if (f->blocked) {
        int64_t ch = channels_of(v);
        if (ch < 1) {
            pc_error_set(err, PC_ERR_INTERNAL, "blocked_compile: the channels of '%s' are unknown", v->name);
            return NULL;
        }
        pc_value *p = reorder(s, "FromBlocked", f->blocked, "channels", ch, err);
        return p ? form_of(s, v, err)->plain = p : NULL;
    }
    /* an outer activation: a new body input */
    pc_value *in = pc_graph_add_value(s->body, NULL, v->name, err);
    if (!in || pc_value_set_type(in, &v->type, err) != PC_OK || pc_graph_add_input(s->body, in, err) != PC_OK)
        return NULL;
    if (!grow((void **)&s->sub_inputs, s->n_sub_inputs, &s->cap_sub_inputs, sizeof *s->sub_inputs)) {
        nomem(err);
        return NULL;
    }
    s->sub_inputs[s->n_sub_inputs++] = (pc_value *)v;
    return form_of(s, v, err)->plain = in;
}

/* t, the blocked layout of constant src, as a body initializer named after it. */
static pc_value *laid_out(state *s, const pc_value *src, pc_tensor *t, pc_error *err)
{
    char hint[256];
    snprintf(hint, sizeof hint, "%s_blocked", src && src->name ? src->name : "c");
    return pc_pass_add_initializer(s->body, hint, t, err);
}

/* The blocked form of v (a 4-D float activation): made by a blocked body node, or ToBlocked of its plain
 * form. */
static pc_value *blocked_form(state *s, const pc_value *v, pc_error *err)
{
    vform *f = form_of(s, v, err);
    if (!f) return NULL;
    /* planted bug (--inject blocked-reorder-per-op): a blocked value a primitive made goes back to plain and
     * forth again before the next one reads it */
    bool per_op = f->blocked && f->blocked->producer &&
                  !pc_name_eq(f->blocked->producer->op_type, "ToBlocked") &&
                  pc_fault_active(PC_FAULT_BLOCKED_REORDER_PER_OP);
    if (f->blocked && !per_op) return f->blocked;
    const pc_tensor *t = v->graph == s->graph && !v->is_graph_input ? pc_value_const(v) : NULL;
    if (t && t->dtype == PC_DTYPE_FLOAT && t->rank == 4) { /* a constant: laid out once, at compile time */
        int64_t b = s->block, c = t->dims[1], cb = (c + b - 1) / b;
        int64_t dims[5] = {t->dims[0], cb, t->dims[2], t->dims[3], b};
        pc_tensor *bt = pc_tensor_create(s->graph->model, NULL, PC_DTYPE_FLOAT, 5, dims, err);
        if (!bt) return NULL;
        float *d = bt->data;
        const float *src = t->data;
        memset(d, 0, bt->n_elements * sizeof *d);
        int64_t plane = t->dims[2] * t->dims[3];
        for (int64_t n = 0; n < t->dims[0]; n++)
            for (int64_t ch = 0; ch < c; ch++)
                for (int64_t p = 0; p < plane; p++)
                    d[((n * cb + ch / b) * plane + p) * b + ch % b] = src[(n * c + ch) * plane + p];
        pc_value *bv = laid_out(s, v, bt, err);
        return bv ? form_of(s, v, err)->blocked = bv : NULL;
    }
    pc_value *p = plain_form(s, v, err);
    pc_value *b = p ? reorder(s, "ToBlocked", p, "block", s->block, err) : NULL;
    return b ? form_of(s, v, err)->blocked = b : NULL;
}

/* ---- weights: re-laid-out once per source, as body initializers ---- */

/* A per-channel vector padded to len: constant src's elements (src NULL: none), then `pad`. */
static pc_value *const_vector(state *s, const pc_value *src, int64_t len, float pad, pc_error *err)
{
    const pc_tensor *c = src ? pc_value_const(src) : NULL;
    int64_t n = c ? (int64_t)c->n_elements : 0;
    pc_tensor *t = pc_tensor_create(s->graph->model, NULL, PC_DTYPE_FLOAT, 1, &len, err);
    if (!t) return NULL;
    float *d = t->data;
    for (int64_t i = 0; i < len; i++)
        d[i] = i < n ? ((const float *)c->data)[i] : pad;
    return laid_out(s, src, t, err);
}

/* BatchNormalization node bn's scale, B, mean and var (its inputs 1..4) padded to len into out[0..3]: past
 * the real channels scale 0, B 0, mean 0, var 1, so a padded channel stays 0. */
static pc_status bn_vectors(state *s, const pc_node *bn, int64_t len, pc_value **out, pc_error *err)
{
    static const float pads[4] = {0.0f, 0.0f, 0.0f, 1.0f};
    for (uint32_t k = 0; k < 4; k++)
        if (!(out[k] = const_vector(s, bn->inputs[k + 1], len, pads[k], err))) return err->status;
    return PC_OK;
}

/* OIHW (M, C, kH, kW) -> (ceil(M/b), ceil(C/b), kH, kW, b_i, b_o), zeros past M or C. */
static pc_value *blocked_weight(state *s, const pc_value *w, pc_error *err)
{
    const pc_tensor *t = pc_value_const(w);
    int64_t b = s->block, m = t->dims[0], c = t->dims[1], kh = t->dims[2], kw = t->dims[3];
    int64_t mb = (m + b - 1) / b, cb = (c + b - 1) / b;
    int64_t dims[6] = {mb, cb, kh, kw, b, b};
    pc_tensor *bt = pc_tensor_create(s->graph->model, NULL, PC_DTYPE_FLOAT, 6, dims, err);
    if (!bt) return NULL;
    float *d = bt->data;
    const float *src = t->data;
    memset(d, 0, bt->n_elements * sizeof *d);
    /* planted bug (--inject blocked-weight-io-swapped): the inner tile as (b_o, b_i) */
    bool swapped = pc_fault_active(PC_FAULT_BLOCKED_WEIGHT_IO);
    for (int64_t o = 0; o < m; o++)
        for (int64_t i = 0; i < c; i++)
            for (int64_t y = 0; y < kh; y++)
                for (int64_t x = 0; x < kw; x++) {
                    int64_t tile = ((((o / b) * cb + i / b) * kh + y) * kw + x) * b * b;
                    d[tile + (swapped ? (o % b) * b + i % b : (i % b) * b + o % b)] =
                        src[((o * c + i) * kh + y) * kw + x];
                }
    return laid_out(s, w, bt, err);
}

static bool const_float(const pc_value *v, int32_t rank)
{
    const pc_tensor *t = v ? pc_value_const(v) : NULL;
    return t && t->dtype == PC_DTYPE_FLOAT && t->rank == rank;
}

/* ---- classification ---- */

static bool is_op(const pc_node *n, const char *op)
{
    return n && !n->domain[0] && pc_name_eq(n->op_type, op);
}

static bool single_output(const pc_node *n)
{
    for (uint32_t o = 1; o < n->n_outputs; o++)
        if (n->outputs[o] && pc_value_is_used(n->outputs[o])) return false;
    return n->n_outputs >= 1 && n->outputs[0];
}

/* A BatchNormalization with constant 1-D parameters of c channels, in inference form. */
static bool bn_ok(const pc_node *n, int64_t c)
{
    if (!is_op(n, "BatchNormalization") || n->n_inputs != 5 || !single_output(n) ||
        pc_node_attr_int(n, "training_mode", 0) != 0 || pc_node_attr_int(n, "spatial", 1) != 1)
        return false;
    for (uint32_t i = 1; i < 5; i++) {
        const pc_tensor *t = const_float(n->inputs[i], 1) ? pc_value_const(n->inputs[i]) : NULL;
        if (!t || t->dims[0] != c) return false;
    }
    return true;
}

/* Whether n can be a blocked primitive (before the EP is asked). */
static bool primitive_ok(const pc_node *n)
{
    int64_t c = n->n_inputs ? channels_of(n->inputs[0]) : -1;
    if (c < 1 || !single_output(n) || channels_of(n->outputs[0]) < 1) return false;
    if (is_op(n, "Conv")) {
        const pc_tensor *w =
            n->n_inputs >= 2 && const_float(n->inputs[1], 4) ? pc_value_const(n->inputs[1]) : NULL;
        if (!w || w->dims[1] != c || pc_node_attr_int(n, "group", 1) != 1) return false;
        if (n->n_inputs == 3 && n->inputs[2]) {
            const pc_tensor *b = const_float(n->inputs[2], 1) ? pc_value_const(n->inputs[2]) : NULL;
            return b && b->dims[0] == w->dims[0];
        }
        return n->n_inputs <= 3;
    }
    if (is_op(n, "BatchNormalization")) return bn_ok(n, c);
    if (is_op(n, "MaxPool")) return pc_node_attr_int(n, "storage_order", 0) == 0;
    return is_op(n, "AveragePool") || is_op(n, "GlobalMaxPool") || is_op(n, "GlobalAveragePool") ||
           is_op(n, "LRN");
}

/* The node fused after p (BatchNormalization, then Relu): p's output's only reader, in the group. */
static pc_node *fusable_next(const state *s, const pc_node *p, const char *op)
{
    pc_node *c = pc_value_single_consumer(p->outputs[0]);
    if (!c || !grouped(s, c) || !is_op(c, op) || c->inputs[0] != p->outputs[0]) return NULL;
    return c;
}

/* ---- making the body ---- */

/* Registers y (an output of a group node) with its body forms. */
static pc_status set_form(state *s, const pc_value *y, pc_value *plain, pc_value *blocked, pc_error *err)
{
    vform *f = form_of(s, y, err);
    if (!f) return err->status;
    f->plain = plain;
    f->blocked = blocked;
    return PC_OK;
}

/* A primitive (and what fuses into it) in blocked form; *done false when the EP refuses it. *last: the last
 * group node it covers (its output is the primitive's). */
static pc_status make_primitive(state *s, pc_node *n, bool *done, pc_node **last, pc_error *err)
{
    *done = false;
    pc_node *bn = is_op(n, "Conv") ? fusable_next(s, n, "BatchNormalization") : NULL;
    if (bn && !bn_ok(bn, channels_of(n->outputs[0]))) bn = NULL;
    pc_node *tail = bn ? bn : n;
    pc_node *relu = is_op(n, "Conv") || is_op(n, "BatchNormalization") ? fusable_next(s, tail, "Relu") : NULL;
    if (relu) tail = relu;
    pc_value *ins[7] = {NULL};
    uint32_t n_in = 1;
    if (!(ins[0] = blocked_form(s, n->inputs[0], err))) return err->status;
    int64_t b = s->block;
    pc_status st = PC_OK;
    if (is_op(n, "Conv")) {
        int64_t m = pc_value_const(n->inputs[1])->dims[0], mp = (m + b - 1) / b * b;
        if (!(ins[1] = blocked_weight(s, n->inputs[1], err))) return err->status;
        n_in = 2;
        bool bias = n->n_inputs == 3 && n->inputs[2];
        if ((bias || bn) && !(ins[2] = const_vector(s, bias ? n->inputs[2] : NULL, mp, 0.0f, err)))
            return err->status;
        if (bias || bn) n_in = 3;
        if (bn && (st = bn_vectors(s, bn, mp, &ins[3], err)) == PC_OK) n_in = 7;
    } else if (is_op(n, "BatchNormalization")) {
        int64_t c = channels_of(n->inputs[0]);
        if ((st = bn_vectors(s, n, (c + b - 1) / b * b, &ins[1], err)) == PC_OK) n_in = 5;
    }
    if (st != PC_OK) return st;
    s->source = n;
    pc_node *p = body_node(s, n->op_type, PC_BLOCKED_DOMAIN, n_in, ins, err);
    if (!p || pc_node_copy_attrs(p, n, err) != PC_OK) return err->status;
    if (bn) {
        const pc_attr *eps = pc_node_attr(bn, "epsilon");
        if (eps && eps->type == PC_ATTR_FLOAT) st = pc_node_set_attr_float(p, "epsilon", eps->f, err);
    }
    if (st == PC_OK && relu) st = pc_node_set_attr_int(p, "relu", 1, err);
    bool ok = false;
    if (st == PC_OK) st = body_node_done(s, p, &ok, err);
    if (st != PC_OK || !ok) return st;
    *done = true;
    *last = tail;
    return set_form(s, tail->outputs[0], NULL, p->outputs[0], err);
}

/* Relu / Add / Sum / Concat on blocked tensors: when an input is blocked already and the others can be. */
static bool blind_ok(const state *s, const pc_node *n)
{
    bool concat = is_op(n, "Concat");
    if (!(is_op(n, "Relu") || is_op(n, "Add") || is_op(n, "Sum") || concat) || !single_output(n))
        return false;
    if (concat && pc_node_attr_int(n, "axis", 0) != 1) return false;
    bool any_blocked = false;
    int64_t dims0[PC_MAX_RANK];
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        const pc_value *v = n->inputs[i];
        int64_t c = channels_of(v), dims[PC_MAX_RANK];
        if (c < 1 || !pc_value_dims(v, dims)) return false;
        if (concat ? c % s->block != 0 : (i && memcmp(dims, dims0, sizeof(int64_t) * 4) != 0)) return false;
        if (i == 0) memcpy(dims0, dims, sizeof(int64_t) * 4);
        for (uint32_t k = 0; k < s->n_forms && !any_blocked; k++)
            any_blocked = s->forms[k].outer == v && s->forms[k].blocked;
    }
    return any_blocked;
}

static pc_status make_blind(state *s, pc_node *n, bool *done, pc_error *err)
{
    *done = false;
    pc_value *ins[64];
    if (n->n_inputs > 64) return PC_OK;
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (!(ins[i] = blocked_form(s, n->inputs[i], err))) return err->status;
    s->source = n;
    pc_node *p = body_node(s, n->op_type, PC_BLOCKED_DOMAIN, n->n_inputs, ins, err);
    bool ok = false;
    if (!p || pc_node_copy_attrs(p, n, err) != PC_OK || body_node_done(s, p, &ok, err) != PC_OK)
        return err->status;
    if (!ok) return PC_OK;
    *done = true;
    return set_form(s, n->outputs[0], NULL, p->outputs[0], err);
}

/* The standard node on plain tensors (its copy in the body). */
static pc_status make_plain(state *s, pc_node *n, pc_error *err)
{
    pc_value *few[16], **ins = n->n_inputs <= 16 ? few : malloc(n->n_inputs * sizeof *ins);
    if (!ins) return nomem(err);
    pc_status st = PC_OK;
    for (uint32_t i = 0; i < n->n_inputs && st == PC_OK; i++)
        if (n->inputs[i] && !(ins[i] = plain_form(s, n->inputs[i], err)))
            st = err->status;
        else if (!n->inputs[i])
            ins[i] = NULL;
    pc_node *p = NULL;
    if (st == PC_OK)
        p = pc_graph_add_node(s->body, n->op_type, n->domain, n->n_inputs, ins, n->n_outputs, NULL, err);
    if (ins != few) free(ins);
    if (st != PC_OK) return st;
    if (!p) return err->status;
    const char *name = pc_graph_unique_name(s->body, n->name && n->name[0] ? n->name : n->op_type);
    if (!name) return pc_model_alloc_error(s->graph->model, err, "a node name");
    p->name = name;
    pc_node_copy_ep(p, n);
    if ((st = pc_node_copy_attrs(p, n, err)) != PC_OK || (st = pc_node_infer_shapes(p, err)) != PC_OK)
        return st;
    for (uint32_t o = 0; o < n->n_outputs && st == PC_OK; o++)
        if (n->outputs[o]) {
            if (p->outputs[o]->type.kind == PC_TYPE_NONE)
                st = pc_value_set_type(p->outputs[o], &n->outputs[o]->type, err);
            if (st == PC_OK) st = set_form(s, n->outputs[o], p->outputs[o], NULL, err);
        }
    return st;
}

/* Is v read outside the group (a node outside, a graph output, a subgraph)? */
static bool read_outside(const state *s, const pc_value *v)
{
    if (v->is_graph_output || v->n_subgraph_refs) return true;
    for (uint32_t k = 0; k < v->n_consumers; k++) {
        const pc_node *c = v->consumers[k].node;
        if (!grouped(s, c)) return true;
    }
    return false;
}

static int64_t next_subgraph_id(const pc_graph *g, const pc_node *self)
{
    int64_t id = 0;
    for (const pc_node *n = g->first; n; n = n->next)
        if (n != self && pc_name_eq(n->domain, PC_BLOCKED_DOMAIN) && pc_name_eq(n->op_type, "Subgraph")) {
            int64_t k = pc_node_attr_int(n, "subgraph_id", 0);
            if (k >= id) id = k + 1;
        }
    return id;
}

/* A blocked Conv carrying a fused BatchNormalization (its inputs 3..6). */
static bool is_conv_bn(const pc_node *n)
{
    return pc_name_eq(n->op_type, "Conv") && n->n_inputs == 7;
}

/* MKL-DNN's MetaDef naming: every body node's scalar and list attributes as "<label>-<index>-<name>", the
 * label a primitive's fused ops ("Conv-BatchNormalization-Relu": a blocked Conv with the BatchNormalization
 * inputs 3..6, relu = 1), else its op type. */
static pc_status prefixed_attrs(pc_node *sub, const pc_graph *body, pc_error *err)
{
    uint32_t index = 0;
    pc_status st = PC_OK;
    for (const pc_node *n = body->first; n && st == PC_OK; n = n->next, index++) {
        bool primitive = pc_name_eq(n->domain, PC_BLOCKED_DOMAIN);
        char label[96];
        snprintf(label, sizeof label, "%s%s%s", n->op_type,
                 primitive && is_conv_bn(n) ? "-BatchNormalization" : "",
                 primitive && pc_node_attr_int(n, "relu", 0) == 1 ? "-Relu" : "");
        for (uint32_t k = 0; k < n->n_attrs && st == PC_OK; k++) {
            const pc_attr *a = &n->attrs[k];
            char name[256];
            snprintf(name, sizeof name, "%s-%u-%s", label, index, a->name);
            switch (a->type) {
            case PC_ATTR_INT:
                st = pc_node_set_attr_int(sub, name, a->i, err);
                break;
            case PC_ATTR_FLOAT:
                st = pc_node_set_attr_float(sub, name, a->f, err);
                break;
            case PC_ATTR_INTS:
                st = pc_node_set_attr_ints(sub, name, a->n, a->ints, err);
                break;
            case PC_ATTR_FLOATS:
                st = pc_node_set_attr_floats(sub, name, a->n, a->floats, err);
                break;
            case PC_ATTR_STRING:
                st = pc_node_set_attr_string(sub, name, a->s.data ? (const char *)a->s.data : "", err);
                break;
            default:
                break;
            }
        }
    }
    return st;
}

static pc_status compile_group(pc_graph *graph, const pc_pass_options *opts, const pc_ep_subgraph *sg,
                               uint8_t *in_group, uint32_t n_ids, bool *changed, pc_error *err)
{
    for (uint32_t i = 0; i < sg->n_nodes; i++) {
        const pc_node *n = sg->nodes[i];
        if (pc_name_eq(n->domain, PC_BLOCKED_DOMAIN) || !pc_pass_can_modify(opts, n))
            return PC_OK; /* compiled already, or not ours to change */
        for (uint32_t k = 0; k < n->n_attrs; k++)
            if (n->attrs[k].type == PC_ATTR_GRAPH || n->attrs[k].type == PC_ATTR_GRAPHS) {
                /* a body inside a body: the compiled form holds no control flow (the runtime runs none) */
                pc_pass_explain(opts, "subgraph of '%s' not compiled: node '%s' holds a graph",
                                pm_label(sg->nodes[0]), pm_label(n));
                return PC_OK;
            }
    }
    for (uint32_t i = 0; i < sg->n_nodes; i++)
        in_group[sg->nodes[i]->id] = 1;
    pc_model *model = graph->model;
    /* the claims asked of the body's nodes read the model's opset of the domain */
    if (pc_model_opset(model, PC_BLOCKED_DOMAIN) < 0) {
        pc_status ist = pc_model_set_opset(model, PC_BLOCKED_DOMAIN, 1, err);
        if (ist != PC_OK) return ist;
    }
    state s = {.graph = graph,
               .opts = opts,
               .ep = opts->ep,
               .block = opts->ep->block_size,
               .in_group = in_group,
               .n_ids = n_ids};
    pc_status st = PC_OK;
    pc_node *sub = pc_graph_add_node(graph, "Subgraph", PC_BLOCKED_DOMAIN, 0, NULL, 0, NULL, err);
    if (!sub) {
        st = err->status;
        goto out;
    }
    s.body = pc_graph_create(model, graph, sub);
    if (!s.body) {
        st = pc_model_alloc_error(model, err, "a subgraph body");
        goto out;
    }
    s.body->name =
        pc_arena_printf(&model->arena, "%s_subgraph", sg->nodes[0]->name ? sg->nodes[0]->name : "blocked");
    if (!s.body->name) {
        st = pc_model_alloc_error(model, err, "a subgraph name");
        goto out;
    }
    uint32_t n_prims = 0, n_fused = 0;
    for (uint32_t i = 0; i < sg->n_nodes && st == PC_OK; i++) {
        pc_node *n = sg->nodes[i];
        bool covered = false; /* fused into a primitive made from an earlier node */
        for (uint32_t k = 0; k < n->n_outputs && !covered; k++)
            for (uint32_t f = 0; n->outputs[k] && f < s.n_forms && !covered; f++)
                covered = s.forms[f].outer == n->outputs[k] && (s.forms[f].plain || s.forms[f].blocked);
        if (covered) continue;
        s.source = n;
        bool done = false;
        pc_node *last = n;
        if (primitive_ok(n)) st = make_primitive(&s, n, &done, &last, err);
        n_prims += done;
        if (st == PC_OK && !done && blind_ok(&s, n)) st = make_blind(&s, n, &done, err);
        if (st == PC_OK && !done) st = make_plain(&s, n, err);
        if (st != PC_OK) break;
        if (done && last != n) {
            /* the fused nodes' outputs are internal: mark them covered */
            for (pc_node *k = n; k != last;) {
                pc_node *next = pc_value_single_consumer(k->outputs[0]);
                if ((st = set_form(&s, next->outputs[0], NULL, form_of(&s, last->outputs[0], err)->blocked,
                                   err)) != PC_OK)
                    break;
                n_fused++;
                k = next;
            }
        }
    }
    /* outputs: every value of the group read outside it, plain in the body; the Subgraph node takes the value
     * over (its name, consumers and graph-output role) */
    uint32_t n_out = 0;
    for (uint32_t i = 0; i < s.n_sub_inputs && st == PC_OK; i++)
        st = pc_node_add_input(sub, s.sub_inputs[i], err);
    for (uint32_t i = 0; i < sg->n_nodes && st == PC_OK; i++) {
        pc_node *n = sg->nodes[i];
        s.source = n;
        for (uint32_t o = 0; o < n->n_outputs && st == PC_OK; o++) {
            pc_value *y = n->outputs[o];
            if (!y || !read_outside(&s, y)) continue;
            pc_value *p = plain_form(&s, y, err);
            pc_value *fresh = p ? pc_graph_add_value(graph, NULL, "subgraph_out", err) : NULL;
            if (!fresh || pc_graph_add_output(s.body, p, err) != PC_OK ||
                pc_node_append_output(sub, fresh, err) != PC_OK) {
                st = err->status;
                break;
            }
            if (pc_graph_move_output(n, o, sub, n_out++) != PC_OK)
                st = pc_error_set(err, PC_ERR_INTERNAL, "blocked_compile: moving the output of node '%s'",
                                  pm_label(n));
        }
    }
    /* what a refused blocked form left behind (its input's reorder, its weights) goes */
    for (bool removed = true; removed && st == PC_OK;) {
        removed = false;
        for (pc_node *b = s.body->first; b && !removed; b = b->next) {
            bool used = false;
            for (uint32_t o = 0; o < b->n_outputs && !used; o++)
                used = b->outputs[o] && pc_value_is_used(b->outputs[o]);
            if (!used) {
                st = pc_graph_remove_node(s.body, b, err);
                removed = true;
            }
        }
    }
    if (st == PC_OK) st = pc_graph_prune_initializers(s.body, NULL, err);
    pc_node_copy_ep(sub, sg->nodes[0]);
    /* the body's types are part of the compiled node: saved (value_info) and cloned with it, since inference
     * does not look inside a compiled body */
    for (uint32_t i = 0; i < s.body->n_values; i++)
        if (s.body->values[i]->type.kind != PC_TYPE_NONE) s.body->values[i]->has_value_info = true;
    int64_t id = next_subgraph_id(graph, sub);
    if (st == PC_OK) st = pc_node_set_attr_graph(sub, "body", s.body, err);
    if (st == PC_OK) st = pc_node_set_attr_int(sub, "subgraph_id", id, err);
    if (st == PC_OK) st = prefixed_attrs(sub, s.body, err);
    if (st == PC_OK) st = pc_node_infer_shapes(sub, err);
    /* the group's nodes go, last first, with the constants only they read (the Subgraph node reads the rest)
     */
    for (uint32_t i = sg->n_nodes; i-- > 0 && st == PC_OK;)
        if (!sg->nodes[i]->removed) st = pc_pass_remove_dead(graph, sg->nodes[i], err);
    if (st == PC_OK) {
        pc_pass_explain(opts,
                        "subgraph %lld: %u nodes -> Subgraph (%u blocked primitives, %u fused, %u reorders, "
                        "%u inputs, %u outputs)",
                        (long long)id, sg->n_nodes, n_prims, n_fused, s.n_reorders, s.n_sub_inputs, n_out);
        pc_pass_note(opts, PC_RW_BLOCKED_SUBGRAPH);
        *changed = true;
    }
out:
    for (uint32_t i = 0; i < sg->n_nodes; i++)
        in_group[sg->nodes[i]->id] = 0;
    free(s.forms);
    free(s.sub_inputs);
    return st;
}

pc_status pc_pass_blocked_compile(pc_graph *graph, const pc_pass_options *opts, bool *changed, pc_error *err)
{
    *changed = false;
    if (!opts || !opts->ep || opts->ep->layout != PC_LAYOUT_BLOCKED || opts->ep->block_size < 1 ||
        graph != graph->model->graph)
        return PC_OK;
    /* an EP that does not run the compiled node has no compiled form */
    pc_node stub = {.op_type = "Subgraph", .domain = PC_BLOCKED_DOMAIN, .graph = graph};
    if (!pc_ep_claims_node_as(opts->ep, &stub, PC_BLOCKED_DOMAIN, 1, NULL, 0)) return PC_OK;
    pc_partition_result groups;
    const pc_ep *eps[1] = {opts->ep};
    pc_status st = pc_model_list_subgraphs(graph->model, eps, 1, &groups, err);
    if (st != PC_OK) return st;
    uint32_t n_ids = graph->next_node_id;
    uint8_t *in_group = calloc(n_ids ? n_ids : 1, 1);
    if (!in_group) return nomem(err);
    for (uint32_t i = 0; i < groups.n_subgraphs && st == PC_OK; i++)
        st = compile_group(graph, opts, &groups.subgraphs[i], in_group, n_ids, changed, err);
    free(in_group);
    if (st == PC_OK && *changed) st = pc_graph_sort(graph, err);
    return st;
}
