/* Sessions: a model copy bound to kernels, a memory plan per set of input shapes, and runs.
 *
 * Creation: copy the model, optimize the copy (unless told not to), and find a kernel row for every node by
 * (domain, op, opset, input 0's element type) — a node without one is PC_ERR_UNSUPPORTED naming it, before
 * anything runs. Planning (at creation when every fed input has static dims, else at the first run and again
 * whenever the fed shapes change): clone the bound model, give the fed inputs their sizes, run core's shape
 * inference, and require a known size for every value a node reads or writes; each kernel's prepare checks
 * its node against those shapes and asks for scratch; then every intermediate value and scratch buffer gets a
 * place in one arena (plan.c). Graph outputs are allocated per run and handed to the caller; initializers are
 * read in place. */
#include <cblas.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/runtime/rt_internal.h"

typedef enum value_kind { VALUE_UNUSED, VALUE_FEED, VALUE_CONST, VALUE_ARENA, VALUE_OUTPUT } value_kind;

typedef struct step {
    const pc_node *node;
    const pc_rt_kernel *kernel;
    int64_t opset;
    const pc_rt_tensor **in;
    pc_rt_tensor **out;
    size_t scratch_offset, scratch_bytes;
    double seconds; /* with profiling: time in run, summed over runs */
    uint64_t runs;
} step;

typedef struct rt_plan {
    pc_model *shaped;   /* the bound model with the fed sizes, shapes inferred */
    bool owns_shaped;   /* false: the session's own model (every input static: nothing to fix or infer) */
    int64_t *feed_dims; /* the fed inputs' dims, concatenated: the plan's signature */
    size_t n_feed_dims;
    uint32_t n_values;
    pc_rt_tensor *vals; /* by value id of shaped->graph */
    value_kind *kinds;
    uint32_t n_steps;
    step *steps;
    uint8_t *arena;
    size_t arena_bytes, tensor_bytes, output_bytes;
    void **blobs; /* the data of Constant nodes given as value_float(s)/value_int(s) */
    uint32_t n_blobs;
} rt_plan;

struct pc_session {
    pc_model *model; /* the optimized copy, shapes as the model declares them */
    int threads;
    pc_rt_pool *pool; /* threads > 1: the workers of the non-gemm kernels */
    bool profile;
    uint32_t n_nodes;
    uint32_t n_feeds;
    pc_value **feeds; /* graph inputs that are not initializers, in graph order */
    rt_plan *plan;
};

void pc_session_options_default(pc_session_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->optimize = true;
    pc_optimize_options_default(&opts->pipeline);
    opts->threads = 1;
}

static const char *node_label(const pc_node *n, char *buf, size_t size)
{
    if (n->name && n->name[0])
        snprintf(buf, size, "node '%s' (%s%s%s)", n->name, n->domain[0] ? n->domain : "",
                 n->domain[0] ? ":" : "", n->op_type);
    else
        snprintf(buf, size, "node #%u (%s%s%s)", n->id, n->domain[0] ? n->domain : "",
                 n->domain[0] ? ":" : "", n->op_type);
    return buf;
}

static int64_t node_opset(const pc_node *n)
{
    return pc_model_opset(n->graph->model, n->domain);
}

static pc_dtype in0_type(const pc_node *n)
{
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i]) return n->inputs[i]->type.kind == PC_TYPE_TENSOR ? n->inputs[i]->type.elem : 0;
    return n->n_outputs && n->outputs[0] && n->outputs[0]->type.kind == PC_TYPE_TENSOR
               ? n->outputs[0]->type.elem
               : PC_DTYPE_UNDEFINED;
}

/* Every node has a kernel row: the creation-time promise. */
/* A compiled subgraph (the blocked EP's Subgraph node) runs as the run of its body's nodes, in place. */
static pc_status inline_compiled(pc_graph *g, pc_error *err)
{
    pc_status st = PC_OK;
    for (pc_node *n = g->first, *next; n && st == PC_OK; n = next) {
        next = n->next;
        if (pc_name_eq(n->domain, PC_BLOCKED_DOMAIN) && pc_name_eq(n->op_type, "Subgraph"))
            st = pc_graph_inline_body(g, n, "body", err);
    }
    return st;
}

static pc_status bind_check(const pc_graph *g, uint32_t *n_nodes, pc_error *err)
{
    char label[256];
    *n_nodes = 0;
    for (const pc_node *n = g->first; n; n = n->next) {
        for (uint32_t a = 0; a < n->n_attrs; a++)
            if (n->attrs[a].g || (n->attrs[a].n && n->attrs[a].graphs))
                return pc_error_set(err, PC_ERR_UNSUPPORTED, "%s: subgraphs are not run by the runtime",
                                    node_label(n, label, sizeof label));
        pc_dtype t = in0_type(n);
        if (strcmp(n->op_type, "Constant") == 0 && !n->domain[0]) continue; /* a constant of the plan */
        if (!pc_rt_kernel_find(n, node_opset(n), t))
            return pc_error_set(err, PC_ERR_UNSUPPORTED, "%s: no runtime kernel for opset %lld with %s input",
                                node_label(n, label, sizeof label), (long long)node_opset(n),
                                t ? pc_dtype_name(t) : "an untyped");
        (*n_nodes)++;
    }
    return PC_OK;
}

static bool dims_static(const pc_value *v)
{
    if (v->type.kind != PC_TYPE_TENSOR || v->type.shape.rank < 0) return false;
    for (int32_t d = 0; d < v->type.shape.rank; d++)
        if (v->type.shape.dims[d].kind != PC_DIM_KNOWN) return false;
    return true;
}

static void plan_free(rt_plan *p)
{
    if (!p) return;
    if (p->vals)
        for (uint32_t i = 0; i < p->n_steps; i++) {
            free(p->steps[i].in);
            free(p->steps[i].out);
        }
    free(p->steps);
    for (uint32_t i = 0; i < p->n_blobs; i++)
        free(p->blobs[i]);
    free(p->blobs);
    free(p->vals);
    free(p->kinds);
    free(p->feed_dims);
    free(p->arena);
    if (p->owns_shaped) pc_model_free(p->shaped);
    free(p);
}

/* A value's tensor view from its inferred type; false when its type or size is not fully known. */
static bool view_from_type(const pc_value *v, pc_rt_tensor *t, size_t *bytes)
{
    if (!dims_static(v) || v->type.shape.rank > PC_MAX_RANK) return false;
    unsigned bits = pc_dtype_bits(v->type.elem);
    if (v->type.elem == PC_DTYPE_STRING || bits == 0 || bits % 8) return false;
    t->dtype = v->type.elem;
    t->rank = v->type.shape.rank;
    t->n = 1;
    for (int32_t d = 0; d < t->rank; d++) {
        t->dims[d] = v->type.shape.dims[d].size;
        if (t->dims[d] && t->n > (uint64_t)SIZE_MAX / 16 / (uint64_t)t->dims[d]) return false;
        t->n *= (uint64_t)t->dims[d];
    }
    *bytes = (size_t)t->n * (bits / 8);
    return true;
}

/* A Constant node's value as a read-only view (no step runs for it): the `value` tensor in place, the scalar
 * and list forms in a blob the plan owns. false: a form the runtime does not take (sparse, strings). */
static bool constant_view(rt_plan *p, const pc_node *n, pc_rt_tensor *t, bool *oom)
{
    *oom = false;
    memset(t, 0, sizeof *t);
    const pc_attr *a = n->n_attrs == 1 ? &n->attrs[0] : NULL;
    if (!a) return false;
    if (strcmp(a->name, "value") == 0 && a->type == PC_ATTR_TENSOR && a->t && a->t->rank <= PC_MAX_RANK &&
        a->t->dtype != PC_DTYPE_STRING) {
        t->dtype = a->t->dtype;
        t->rank = a->t->rank;
        t->n = a->t->n_elements;
        if (t->rank) memcpy(t->dims, a->t->dims, (size_t)t->rank * sizeof *t->dims);
        t->data = a->t->data;
        return true;
    }
    bool is_float = strcmp(a->name, "value_float") == 0 || strcmp(a->name, "value_floats") == 0;
    bool is_int = strcmp(a->name, "value_int") == 0 || strcmp(a->name, "value_ints") == 0;
    if (!is_float && !is_int) return false;
    bool list = a->type == PC_ATTR_FLOATS || a->type == PC_ATTR_INTS;
    size_t count = list ? a->n : 1, es = is_float ? sizeof(float) : sizeof(int64_t);
    void **grown = realloc(p->blobs, (p->n_blobs + 1) * sizeof *grown);
    void *data = grown ? malloc(count ? count * es : 1) : NULL;
    if (grown) p->blobs = grown;
    if (!data) {
        *oom = true;
        return false;
    }
    p->blobs[p->n_blobs++] = data;
    if (count && is_float) memcpy(data, list ? a->floats : &a->f, count * es); /* an empty list may be NULL */
    if (count && !is_float) memcpy(data, list ? a->ints : &a->i, count * es);
    t->dtype = is_float ? PC_DTYPE_FLOAT : PC_DTYPE_INT64;
    t->rank = list ? 1 : 0;
    t->dims[0] = (int64_t)count;
    t->n = count;
    t->data = data;
    return true;
}

/* The plan for the fed shapes `fdims` (each feed's dims, concatenated). */
/* In place: an elementwise step (a kernel with RT_INPLACE, or RT_SLICEABLE on input 0) whose input of the
 * output's size dies at that step writes its output into the input's buffer, which then lives on as the
 * output's (a chain of such steps shares one buffer). Graph inputs, outputs and constants are never
 * arena buffers, so they are never overwritten. An input read twice by the step is left alone. */
static void plan_inplace(rt_plan *p, pc_rt_buffer *bufs, uint32_t *buf_of)
{
    for (uint32_t i = 0; i < p->n_steps; i++) {
        const step *sp = &p->steps[i];
        const pc_node *n = sp->node;
        if (!(sp->kernel->flags & (RT_INPLACE | RT_SLICEABLE)) || n->n_outputs < 1 || !n->outputs[0])
            continue;
        uint32_t yo = n->outputs[0]->id;
        if (!buf_of[yo]) continue;
        pc_rt_buffer *bo = &bufs[buf_of[yo] - 1];
        for (uint32_t j = 0; j < (sp->kernel->flags & RT_INPLACE ? n->n_inputs : 1); j++) {
            const pc_value *v = n->inputs[j];
            if (!v || !buf_of[v->id] || buf_of[v->id] == buf_of[yo]) continue;
            pc_rt_buffer *bi = &bufs[buf_of[v->id] - 1];
            if (bi->last != i || bi->bytes != bo->bytes || p->vals[v->id].n != p->vals[yo].n) continue;
            bool twice = false;
            for (uint32_t o = 0; o < n->n_inputs; o++)
                twice |= o != j && n->inputs[o] == v;
            if (twice) continue;
            bi->last = bo->last;
            *bo = (pc_rt_buffer){i, i, 0, 0}; /* empty: the planner places it anywhere */
            buf_of[yo] = buf_of[v->id];
            break;
        }
    }
}

static pc_status plan_build(pc_session *s, pc_data *const *feeds, rt_plan **out, pc_error *err)
{
    *out = NULL;
    char label[256];
    rt_plan *p = calloc(1, sizeof *p);
    if (!p) return pc_error_set(err, PC_ERR_NOMEM, "out of memory planning");
    pc_rt_buffer *bufs = NULL; /* the intermediates' and scratch's buffers, freed on every way out */
    uint32_t *buf_of = NULL;
    /* static inputs at creation: the session's model already has every size inferred */
    pc_status st = PC_OK;
    if (feeds) {
        st = pc_model_clone(s->model, &p->shaped, err);
        p->owns_shaped = true;
    } else {
        p->shaped = s->model;
    }
    if (st != PC_OK) goto fail;
    pc_graph *g = p->shaped->graph;
    /* the fed sizes: from the feeds, or the declared static dims at creation */
    for (uint32_t i = 0, k = 0; i < g->n_inputs; i++) {
        pc_value *v = g->inputs[i];
        if (v->initializer) continue;
        int32_t rank = feeds ? feeds[k]->rank : v->type.shape.rank;
        p->n_feed_dims += (size_t)rank;
        k++;
    }
    p->feed_dims = malloc((p->n_feed_dims ? p->n_feed_dims : 1) * sizeof *p->feed_dims);
    if (!p->feed_dims) goto nomem;
    size_t fd = 0;
    for (uint32_t i = 0, k = 0; i < g->n_inputs; i++) {
        pc_value *v = g->inputs[i];
        if (v->initializer) continue;
        int32_t rank = feeds ? feeds[k]->rank : v->type.shape.rank;
        pc_dim dims[PC_MAX_RANK];
        for (int32_t d = 0; d < rank; d++) {
            int64_t size = feeds ? feeds[k]->dims[d] : v->type.shape.dims[d].size;
            p->feed_dims[fd++] = size;
            dims[d] = (pc_dim){PC_DIM_KNOWN, size, NULL, NULL};
        }
        pc_type t = {.kind = PC_TYPE_TENSOR, .elem = v->type.elem, .shape = {rank, dims}};
        if (feeds && (st = pc_value_set_type(v, &t, err)) != PC_OK) goto fail;
        k++;
    }
    if (feeds && (st = pc_graph_infer_shapes(g, err)) != PC_OK) {
        pc_error_prefix(err, "shape inference with the fed sizes: ");
        goto fail;
    }
    p->n_values = g->n_values;
    p->vals = calloc(p->n_values ? p->n_values : 1, sizeof *p->vals);
    p->kinds = calloc(p->n_values ? p->n_values : 1, sizeof *p->kinds);
    p->steps = calloc(s->n_nodes ? s->n_nodes : 1, sizeof *p->steps);
    bufs = calloc((size_t)p->n_values + s->n_nodes + 1, sizeof *bufs);
    buf_of = calloc(p->n_values ? p->n_values : 1, sizeof *buf_of); /* value id -> 1 + buffer */
    if (!p->vals || !p->kinds || !p->steps || !bufs || !buf_of) goto nomem;
    uint32_t n_bufs = 0;
    /* feeds (their views from the fed sizes; the data is bound per run), constants, outputs */
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        const pc_value *v = g->inputs[i];
        size_t bytes;
        if (v->initializer) continue;
        if (!view_from_type(v, &p->vals[v->id], &bytes)) {
            st = pc_error_set(err, PC_ERR_UNSUPPORTED, "graph input '%s': its size is not static", v->name);
            goto fail;
        }
        p->vals[v->id].data = NULL;
        p->kinds[v->id] = VALUE_FEED;
    }
    for (uint32_t i = 0; i < g->n_initializers; i++) {
        const pc_value *v = g->initializers[i];
        const pc_tensor *t = v->initializer;
        pc_rt_tensor *rt = &p->vals[v->id];
        if (t->rank > PC_MAX_RANK) continue;
        rt->dtype = t->dtype;
        rt->rank = t->rank;
        rt->n = t->n_elements;
        if (t->rank) memcpy(rt->dims, t->dims, (size_t)t->rank * sizeof *t->dims); /* rank 0: dims NULL */
        rt->data = t->data;
        p->kinds[v->id] = VALUE_CONST;
    }
    for (uint32_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i]->producer) p->kinds[g->outputs[i]->id] = VALUE_OUTPUT;
    /* steps: views of every value read or written, buffers for the intermediates and the scratch */
    uint32_t si = 0;
    for (const pc_node *n = g->first; n; n = n->next) {
        if (strcmp(n->op_type, "Constant") == 0 && !n->domain[0] && n->n_outputs == 1 && n->outputs[0]) {
            bool oom;
            if (constant_view(p, n, &p->vals[n->outputs[0]->id], &oom)) {
                p->kinds[n->outputs[0]->id] = VALUE_CONST;
                continue;
            }
            if (oom) goto nomem;
        }
        step *sp = &p->steps[si];
        sp->node = n;
        sp->opset = node_opset(n);
        sp->kernel = pc_rt_kernel_find(n, sp->opset, in0_type(n));
        sp->in = calloc(n->n_inputs ? n->n_inputs : 1, sizeof *sp->in);
        sp->out = calloc(n->n_outputs ? n->n_outputs : 1, sizeof *sp->out);
        p->n_steps = si + 1; /* freed with the plan from here on */
        if (!sp->in || !sp->out) goto nomem;
        if (!sp->kernel) {
            st = pc_error_set(err, PC_ERR_UNSUPPORTED, "%s: no runtime kernel once shapes are known",
                              node_label(n, label, sizeof label));
            goto fail;
        }
        for (uint32_t o = 0; o < n->n_outputs; o++) {
            const pc_value *v = n->outputs[o];
            if (!v) continue;
            size_t bytes;
            if (!view_from_type(v, &p->vals[v->id], &bytes)) {
                st = pc_error_set(err, PC_ERR_UNSUPPORTED,
                                  "%s: the size of output '%s' is not known after shape inference",
                                  node_label(n, label, sizeof label), v->name);
                goto fail;
            }
            sp->out[o] = &p->vals[v->id];
            if (p->kinds[v->id] == VALUE_OUTPUT) {
                p->output_bytes += bytes;
                continue;
            }
            p->kinds[v->id] = VALUE_ARENA;
            bufs[n_bufs] = (pc_rt_buffer){si, si, bytes, 0};
            buf_of[v->id] = ++n_bufs;
            p->tensor_bytes += bytes;
        }
        for (uint32_t i = 0; i < n->n_inputs; i++) {
            const pc_value *v = n->inputs[i];
            if (!v) continue;
            if (p->kinds[v->id] == VALUE_UNUSED) {
                st = pc_error_set(err, PC_ERR_UNSUPPORTED,
                                  "%s: input '%s' is made by nothing the runtime runs",
                                  node_label(n, label, sizeof label), v->name);
                goto fail;
            }
            sp->in[i] = &p->vals[v->id];
            if (buf_of[v->id]) bufs[buf_of[v->id] - 1].last = si;
        }
        si++;
    }
    plan_inplace(p, bufs, buf_of);
    /* kernel checks and scratch, with the shapes (constant inputs have their data, the rest not yet) */
    for (uint32_t i = 0; i < p->n_steps; i++) {
        step *sp = &p->steps[i];
        if (!sp->kernel->prepare) continue;
        pc_rt_kernel_ctx k = {sp->node,
                              sp->opset,
                              sp->node->n_inputs,
                              sp->node->n_outputs,
                              (const pc_rt_tensor *const *)sp->in,
                              sp->out,
                              NULL,
                              0,
                              s->threads,
                              err,
                              s->pool};
        /* inputs not yet computed show no data to prepare */
        const pc_rt_tensor **shown = calloc(sp->node->n_inputs ? sp->node->n_inputs : 1, sizeof *shown);
        pc_rt_tensor *copies = calloc(sp->node->n_inputs ? sp->node->n_inputs : 1, sizeof *copies);
        if (!shown || !copies) {
            free(shown);
            free(copies);
            goto nomem;
        }
        for (uint32_t j = 0; j < sp->node->n_inputs; j++) {
            if (!sp->in[j]) continue;
            copies[j] = *sp->in[j];
            if (p->kinds[sp->node->inputs[j]->id] != VALUE_CONST) copies[j].data = NULL;
            shown[j] = &copies[j];
        }
        k.in = shown;
        size_t scratch = 0;
        st = sp->kernel->prepare(&k, &scratch);
        free(shown);
        free(copies);
        if (st != PC_OK) {
            pc_error_prefix(err, "%s: ", node_label(sp->node, label, sizeof label));
            goto fail;
        }
        if (scratch) {
            sp->scratch_bytes = scratch;
            bufs[n_bufs] = (pc_rt_buffer){i, i, scratch, 0};
            sp->scratch_offset = n_bufs++; /* the buffer index until placed */
            p->tensor_bytes += scratch;
        }
    }
    p->arena_bytes = pc_rt_plan_place(bufs, n_bufs);
    if (p->arena_bytes == SIZE_MAX) {
        st = pc_error_set(err, PC_ERR_OVERFLOW, "the memory plan's size overflows");
        goto fail;
    }
#ifdef PC_DEBUG_CHECKS
    if (!pc_rt_plan_valid(bufs, n_bufs, p->arena_bytes)) {
        st = pc_error_set(err, PC_ERR_INTERNAL, "the memory plan overlaps two live buffers");
        goto fail;
    }
#endif
    size_t arena = (p->arena_bytes + PC_RT_ALIGN - 1) / PC_RT_ALIGN * PC_RT_ALIGN;
    p->arena = aligned_alloc(PC_RT_ALIGN, arena ? arena : PC_RT_ALIGN);
    if (!p->arena) {
        st = pc_error_set(err, PC_ERR_NOMEM, "out of memory for the %zu-byte arena", p->arena_bytes);
        goto fail;
    }
    for (uint32_t v = 0; v < p->n_values; v++)
        if (buf_of[v]) p->vals[v].data = p->arena + bufs[buf_of[v] - 1].offset;
    for (uint32_t i = 0; i < p->n_steps; i++)
        if (p->steps[i].scratch_bytes) p->steps[i].scratch_offset = bufs[p->steps[i].scratch_offset].offset;
    free(bufs);
    free(buf_of);
    *out = p;
    return PC_OK;
nomem:
    st = pc_error_set(err, PC_ERR_NOMEM, "out of memory planning");
fail:
    free(bufs);
    free(buf_of);
    plan_free(p);
    return st;
}

pc_status pc_session_create(const pc_model *model, const pc_session_options *opts, pc_session **out,
                            pc_error *err)
{
    *out = NULL;
    pc_session_options def;
    if (!opts) {
        pc_session_options_default(&def);
        opts = &def;
    }
    if (opts->threads < 1 || opts->threads > 256)
        return pc_error_set(err, PC_ERR_USAGE, "threads = %d, must be 1..256", opts->threads);
    pc_session *s = calloc(1, sizeof *s);
    if (!s) return pc_error_set(err, PC_ERR_NOMEM, "out of memory creating a session");
    s->threads = opts->threads;
    s->profile = opts->profile;
    if (s->threads > 1 && !(s->pool = pc_rt_pool_create(s->threads))) {
        free(s);
        return pc_error_set(err, PC_ERR_NOMEM, "cannot start %d threads for the session", opts->threads);
    }
    pc_status st = pc_model_clone(model, &s->model, err);
    if (st == PC_OK && opts->optimize) st = pc_model_optimize(s->model, &opts->pipeline, NULL, err);
    if (st == PC_OK) st = inline_compiled(s->model->graph, err);
    if (st == PC_OK) st = pc_graph_infer_shapes(s->model->graph, err);
    if (st == PC_OK) st = bind_check(s->model->graph, &s->n_nodes, err);
    pc_graph *g = st == PC_OK ? s->model->graph : NULL;
    if (g) {
        s->feeds = calloc(g->n_inputs ? g->n_inputs : 1, sizeof *s->feeds);
        if (!s->feeds) st = pc_error_set(err, PC_ERR_NOMEM, "out of memory creating a session");
        bool all_static = true;
        for (uint32_t i = 0; st == PC_OK && i < g->n_inputs; i++) {
            pc_value *v = g->inputs[i];
            if (v->initializer) continue;
            if (v->type.kind != PC_TYPE_TENSOR || v->type.elem == PC_DTYPE_UNDEFINED)
                st = pc_error_set(err, PC_ERR_UNSUPPORTED, "graph input '%s' is not a typed tensor", v->name);
            s->feeds[s->n_feeds++] = v;
            all_static = all_static && dims_static(v);
        }
        if (st == PC_OK && all_static) st = plan_build(s, NULL, &s->plan, err);
    }
    if (st != PC_OK) {
        pc_session_free(s);
        return st;
    }
    *out = s;
    return PC_OK;
}

void pc_session_free(pc_session *s)
{
    if (!s) return;
    pc_rt_pool_free(s->pool);
    plan_free(s->plan);
    free(s->feeds);
    pc_model_free(s->model);
    free(s);
}

const pc_model *pc_session_model(const pc_session *s)
{
    return s->model;
}

void pc_session_get_stats(const pc_session *s, pc_session_stats *st)
{
    memset(st, 0, sizeof *st);
    st->n_nodes = s->n_nodes;
    if (!s->plan) return;
    st->planned = true;
    st->arena_bytes = s->plan->arena_bytes;
    st->tensor_bytes = s->plan->tensor_bytes;
    st->output_bytes = s->plan->output_bytes;
}

/* Feeds against the graph: count, element type, rank, and every static dim. */
static pc_status check_feeds(const pc_session *s, uint32_t n, pc_data *const *in, pc_error *err)
{
    if (n != s->n_feeds)
        return pc_error_set(err, PC_ERR_ARITY, "%u inputs given, the model takes %u", n, s->n_feeds);
    for (uint32_t i = 0; i < n; i++) {
        const pc_value *v = s->feeds[i];
        const pc_data *d = in[i];
        if (!d || d->kind != PC_TYPE_TENSOR)
            return pc_error_set(err, PC_ERR_TYPE, "input %u ('%s') is not a tensor", i, v->name);
        if (d->dtype != v->type.elem)
            return pc_error_set(err, PC_ERR_TYPE, "input %u ('%s') is %s, the model declares %s", i, v->name,
                                pc_dtype_name(d->dtype), pc_dtype_name(v->type.elem));
        if (v->type.shape.rank >= 0 && d->rank != v->type.shape.rank)
            return pc_error_set(err, PC_ERR_SHAPE, "input %u ('%s') has rank %d, the model declares %d", i,
                                v->name, (int)d->rank, (int)v->type.shape.rank);
        for (int32_t k = 0; v->type.shape.rank >= 0 && k < d->rank; k++)
            if (v->type.shape.dims[k].kind == PC_DIM_KNOWN && v->type.shape.dims[k].size != d->dims[k])
                return pc_error_set(err, PC_ERR_SHAPE,
                                    "input %u ('%s') has dim %d = %lld, the model declares %lld", i, v->name,
                                    (int)k, (long long)d->dims[k], (long long)v->type.shape.dims[k].size);
    }
    return PC_OK;
}

static bool plan_fits(const rt_plan *p, uint32_t n, pc_data *const *in)
{
    size_t fd = 0;
    for (uint32_t i = 0; i < n; i++)
        for (int32_t d = 0; d < in[i]->rank; d++)
            if (fd >= p->n_feed_dims || p->feed_dims[fd++] != in[i]->dims[d]) return false;
    return fd == p->n_feed_dims;
}

void pc_session_free_outputs(pc_session *s, pc_data **outputs)
{
    if (!outputs) return;
    for (uint32_t i = 0; i < s->model->graph->n_outputs; i++)
        pc_data_unref(outputs[i]);
    free(outputs);
}

/* A sliceable kernel (rt_internal.h) on the session's threads: input 0 and output 0 cut into contiguous
 * rank-1 views, the other inputs whole. Below SLICE_GRAIN elements per thread waking the workers costs more
 * than it saves. */
enum { SLICE_GRAIN = 32768, SLICE_MAX_INPUTS = 8 };

typedef struct slice_task {
    const pc_rt_kernel_ctx *k;
    const pc_rt_kernel *kernel;
    _Atomic int failed; /* the first failing slice's error goes to k->err */
    pc_status status;
} slice_task;

static void run_slice(void *arg, int64_t lo, int64_t hi, int part)
{
    (void)part;
    slice_task *t = arg;
    const pc_rt_kernel_ctx *k = t->k;
    pc_rt_tensor x = *k->in[0], y = *k->out[0];
    size_t xs = pc_dtype_bits(x.dtype) / 8, ys = pc_dtype_bits(y.dtype) / 8;
    x.rank = y.rank = 1;
    x.dims[0] = y.dims[0] = hi - lo;
    x.n = y.n = (uint64_t)(hi - lo);
    x.data = (char *)x.data + (size_t)lo * xs;
    y.data = (char *)y.data + (size_t)lo * ys;
    const pc_rt_tensor *ins[SLICE_MAX_INPUTS];
    for (uint32_t i = 0; i < k->n_in; i++)
        ins[i] = i == 0 ? &x : k->in[i];
    pc_rt_tensor *outs[1] = {&y};
    pc_error err;
    pc_error_clear(&err);
    pc_rt_kernel_ctx c = *k;
    c.in = ins;
    c.out = outs;
    c.n_out = 1;
    c.err = &err;
    pc_status st = t->kernel->run(&c);
    if (st != PC_OK && atomic_exchange(&t->failed, 1) == 0) {
        *k->err = err;
        t->status = st;
    }
}

static pc_status step_run(const step *sp, pc_rt_kernel_ctx *k)
{
    const pc_rt_kernel *kern = sp->kernel;
    if (!(kern->flags & RT_SLICEABLE) || !k->pool || k->n_in < 1 || k->n_in > SLICE_MAX_INPUTS ||
        k->n_out != 1 || !k->in[0] || !k->out[0] || k->in[0]->n != k->out[0]->n ||
        k->out[0]->n < 2 * SLICE_GRAIN)
        return kern->run(k);
    slice_task t = {k, kern, 0, PC_OK};
    pc_rt_parallel_for(k, (int64_t)k->out[0]->n, SLICE_GRAIN, run_slice, &t);
    return t.status;
}

pc_status pc_session_run(pc_session *s, uint32_t n_inputs, pc_data *const *inputs, pc_data ***outputs,
                         pc_error *err)
{
    *outputs = NULL;
    pc_status st = check_feeds(s, n_inputs, inputs, err);
    if (st != PC_OK) return st;
    if (!s->plan || !plan_fits(s->plan, n_inputs, inputs)) {
        rt_plan *p;
        if ((st = plan_build(s, inputs, &p, err)) != PC_OK) return st;
        plan_free(s->plan);
        s->plan = p;
    }
    rt_plan *p = s->plan;
    const pc_graph *g = p->shaped->graph;
    /* bind the feeds and allocate the outputs */
    for (uint32_t i = 0, k = 0; i < g->n_inputs; i++) {
        if (g->inputs[i]->initializer) continue;
        pc_rt_tensor *t = &p->vals[g->inputs[i]->id];
        const pc_data *d = inputs[k++];
        t->dtype = d->dtype;
        t->rank = d->rank;
        t->n = d->n_elements;
        if (d->rank) memcpy(t->dims, d->dims, (size_t)d->rank * sizeof *d->dims);
        t->data = d->data;
    }
    pc_data **outs = calloc(g->n_outputs ? g->n_outputs : 1, sizeof *outs);
    pc_data **made = calloc(p->n_values ? p->n_values : 1, sizeof *made); /* produced outputs by value id */
    if (!outs || !made) {
        free(outs);
        free(made);
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory for the outputs");
    }
    for (uint32_t v = 0; v < p->n_values && st == PC_OK; v++) {
        if (p->kinds[v] != VALUE_OUTPUT) continue;
        pc_rt_tensor *t = &p->vals[v];
        if (!(made[v] = pc_data_new_tensor(t->dtype, t->rank, t->dims, err)))
            st = err->status;
        else
            t->data = made[v]->data;
    }
    openblas_set_num_threads(1); /* threads come from the session's pool (pc_rt_sgemm) */
    char label[256];
    for (uint32_t i = 0; i < p->n_steps && st == PC_OK; i++) {
        step *sp = &p->steps[i];
        pc_rt_kernel_ctx k = {sp->node,
                              sp->opset,
                              sp->node->n_inputs,
                              sp->node->n_outputs,
                              (const pc_rt_tensor *const *)sp->in,
                              sp->out,
                              sp->scratch_bytes ? p->arena + sp->scratch_offset : NULL,
                              sp->scratch_bytes,
                              s->threads,
                              err,
                              s->pool};
        double t0 = s->profile ? pc_now_seconds() : 0;
        if ((st = step_run(sp, &k)) != PC_OK)
            pc_error_prefix(err, "%s: ", node_label(sp->node, label, sizeof label));
        if (s->profile) {
            sp->seconds += pc_now_seconds() - t0;
            sp->runs++;
        }
    }
    /* graph outputs: the values made for them, or copies of fed/constant values listed as outputs */
    for (uint32_t i = 0; i < g->n_outputs && st == PC_OK; i++) {
        const pc_value *v = g->outputs[i];
        if (made[v->id]) {
            outs[i] = made[v->id];
            made[v->id] = NULL;
            continue;
        }
        for (uint32_t j = 0; j < i && !outs[i]; j++)
            if (g->outputs[j] == v) outs[i] = pc_data_clone(outs[j], err);
        if (outs[i]) continue;
        const pc_rt_tensor *t = &p->vals[v->id];
        if (!t->data && t->n) {
            st = pc_error_set(err, PC_ERR_INTERNAL, "graph output '%s' has no value", v->name);
            break;
        }
        if (!(outs[i] = pc_data_new_tensor(t->dtype, t->rank, t->dims, err))) {
            st = err->status;
            break;
        }
        if (outs[i]->n_bytes) memcpy(outs[i]->data, t->data, outs[i]->n_bytes);
    }
    for (uint32_t v = 0; v < p->n_values; v++)
        pc_data_unref(made[v]);
    free(made);
    /* the feeds belong to the caller: forget them */
    for (uint32_t i = 0; i < g->n_inputs; i++)
        if (!g->inputs[i]->initializer) p->vals[g->inputs[i]->id].data = NULL;
    if (st != PC_OK) {
        for (uint32_t i = 0; i < g->n_outputs; i++)
            pc_data_unref(outs[i]);
        free(outs);
        return st;
    }
    *outputs = outs;
    return PC_OK;
}

/* Multiply-adds x 2 of one run of a gemm-shaped step, from its tensors (profiling only). Conv: every output
 * element sums W.n / OC products whatever the weight layout; MatMul/Gemm: K products. 0 for other ops. */
static double step_flops(const step *sp)
{
    const pc_node *n = sp->node;
    const pc_rt_tensor *o = sp->out[0], *a = sp->node->n_inputs > 0 ? sp->in[0] : NULL,
                       *w = sp->node->n_inputs > 1 ? sp->in[1] : NULL;
    if (!o || !a || !w) return 0;
    bool nhwc = strcmp(n->domain, PC_NHWC_DOMAIN) == 0;
    if (strcmp(n->op_type, "Conv") == 0 || strcmp(n->op_type, "FusedConv") == 0) {
        int64_t oc = o->rank >= 3 ? o->dims[nhwc ? o->rank - 1 : 1] : 0;
        return oc > 0 ? 2.0 * (double)o->n * (double)w->n / (double)oc : 0;
    }
    if (strcmp(n->op_type, "MatMul") == 0 && a->rank >= 1)
        return 2.0 * (double)o->n * (double)a->dims[a->rank - 1];
    if ((strcmp(n->op_type, "Gemm") == 0 || strcmp(n->op_type, "FusedGemm") == 0) && a->rank == 2)
        return 2.0 * (double)o->n * (double)a->dims[pc_node_attr_int(n, "transA", 0) ? 0 : 1];
    return 0;
}

pc_status pc_session_get_profile(const pc_session *s, pc_session_profile_entry **entries, uint32_t *n,
                                 pc_error *err)
{
    *entries = NULL;
    *n = 0;
    if (!s->profile) return pc_error_set(err, PC_ERR_USAGE, "the session was created without profiling");
    if (!s->plan) return PC_OK;
    pc_session_profile_entry *e = calloc(s->plan->n_steps ? s->plan->n_steps : 1, sizeof *e);
    if (!e) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < s->plan->n_steps; i++) {
        const step *sp = &s->plan->steps[i];
        e[i] = (pc_session_profile_entry){sp->node, sp->runs, sp->seconds, step_flops(sp)};
    }
    *entries = e;
    *n = s->plan->n_steps;
    return PC_OK;
}

double pc_runtime_sgemm_gflops(int threads, int n)
{
    if (threads < 1 || n < 1 || n > 8192) return 0;
    size_t count = (size_t)n * (size_t)n;
    float *a = malloc(count * sizeof *a), *b = malloc(count * sizeof *b), *c = malloc(count * sizeof *c);
    double best = 0;
    if (a && b && c) {
        for (size_t i = 0; i < count; i++) {
            a[i] = (float)(i % 7) * 0.25f - 0.75f;
            b[i] = (float)(i % 5) * 0.5f - 1.0f;
        }
        openblas_set_num_threads(threads);
        for (int r = 0; r < 4; r++) { /* the first run warms caches and OpenBLAS's buffers: not counted */
            double t0 = pc_now_seconds();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
            double dt = pc_now_seconds() - t0;
            double g = dt > 0 ? 2.0 * (double)n * (double)n * (double)n / dt / 1e9 : 0;
            if (r > 0 && g > best) best = g;
        }
    }
    free(a);
    free(b);
    free(c);
    return best;
}
