/* The reference interpreter: walks a graph's nodes in order, one frame of values per running graph. Subgraphs
 * (If/Loop/Scan bodies) run in child frames that resolve outer references through their parents. */
#include <stdlib.h>
#include <string.h>

#include "reference/ref_internal.h"

struct ref_frame {
    const pc_graph *graph;
    pc_data **slots; /* by value id */
    ref_frame *parent;
    const pc_ref_options *opts; /* never NULL */
};

/* The frame and value that hold `v`'s data: outer references hop to the enclosing graph's frame. */
static pc_data *frame_get(ref_frame *f, const pc_value *v)
{
    while (v->outer) {
        const pc_value *o = v->outer;
        while (f && f->graph != o->graph)
            f = f->parent;
        v = o;
    }
    while (f && f->graph != v->graph)
        f = f->parent;
    return f ? f->slots[v->id] : NULL;
}

static pc_status graph_error(pc_error *err, const pc_graph *g, pc_status st, const char *what,
                             const char *name)
{
    return pc_error_set(err, st, "graph '%s': %s '%s'", g->name ? g->name : "", what, name);
}

static bool dtype_matches(const pc_type *declared, const pc_data *d)
{
    if (!declared || declared->kind == PC_TYPE_NONE) return true;
    if (declared->kind == PC_TYPE_TENSOR)
        return d->kind == PC_TYPE_TENSOR &&
               (declared->elem == PC_DTYPE_UNDEFINED || declared->elem == d->dtype);
    return declared->kind == d->kind;
}

static pc_status run_graph(const pc_model *m, const pc_ref_options *opts, const pc_graph *g,
                           ref_frame *parent, uint32_t n_in, pc_data *const *in, pc_data **outs,
                           pc_error *err);

pc_status ref_run_body(ref_ctx *ctx, const pc_graph *body, uint32_t n_in, pc_data *const *in, pc_data **outs)
{
    if (n_in != body->n_inputs)
        return ref_fail(ctx, PC_ERR_ARITY, "subgraph '%s' takes %u inputs, %u given",
                        body->name ? body->name : "", body->n_inputs, n_in);
    pc_status st = run_graph(ctx->model, ctx->opts, body, ctx->frame, n_in, in, outs, ctx->err);
    if (st != PC_OK && st != PC_ERR_UNSUPPORTED)
        pc_error_prefix(ctx->err, "in subgraph of node '%s' (%s): ", ctx->node->name ? ctx->node->name : "",
                        ctx->node->op_type);
    return st;
}

static bool is_local_function(const pc_model *m, const pc_node *n)
{
    for (uint32_t i = 0; i < m->n_functions; i++)
        if (strcmp(m->functions[i].name, n->op_type) == 0 && strcmp(m->functions[i].domain, n->domain) == 0)
            return true;
    return false;
}

/* Element types whose values the helpers can read and write. The packed 4- and 2-bit types, float8 and
 * complex are refused up front: a kernel must never see bytes it would misread. */
static bool dtype_supported(pc_dtype t)
{
    return ref_is_numeric(t) || t == PC_DTYPE_STRING;
}

static const pc_data *unsupported_item(const pc_data *d)
{
    if (d->kind == PC_TYPE_TENSOR) return dtype_supported(d->dtype) ? NULL : d;
    for (uint32_t i = 0; i < d->n_items; i++) {
        const pc_data *bad = unsupported_item(d->items[i]);
        if (bad) return bad;
    }
    return NULL;
}

static pc_status run_node(const pc_model *m, ref_frame *frame, const pc_node *n, pc_data **in, pc_data **out,
                          pc_error *err)
{
    ref_ctx ctx = {m, n, pc_model_opset(m, n->domain), err, frame, frame->opts};
    const ref_op *op = ref_op_find(n->domain, n->op_type);
    if (!op) {
        if (is_local_function(m, n))
            return ref_unsupported(&ctx,
                                   "calls model-local function '%s%s%s' (function bodies are not executed)",
                                   n->domain, *n->domain ? "." : "", n->op_type);
        return ref_unsupported(&ctx, "no implementation of op '%s' in domain '%s'", n->op_type,
                               *n->domain ? n->domain : "ai.onnx");
    }
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        in[i] = NULL;
        if (!n->inputs[i]) continue;
        in[i] = frame_get(frame, n->inputs[i]);
        if (!in[i])
            return ref_fail(&ctx, PC_ERR_DANGLING_INPUT,
                            "input %u '%s' has no value when the node runs (graph not in "
                            "topological order, or an optional output that was not produced)",
                            i, n->inputs[i]->name);
        const pc_data *bad = unsupported_item(in[i]);
        if (bad)
            return ref_unsupported(&ctx, "input %u '%s' has element type %s", i, n->inputs[i]->name,
                                   pc_dtype_name(bad->dtype));
    }
    memset(out, 0, n->n_outputs * sizeof *out);
    pc_status st = op->run(&ctx, in, n->n_inputs, out, n->n_outputs);
    if (st == PC_OK && err->status != PC_OK && err->status != PC_ERR_UNSUPPORTED) st = err->status;
    if (st != PC_OK) {
        ref_unref_all(out, n->n_outputs);
        return st;
    }
    for (uint32_t i = 0; i < n->n_outputs; i++) {
        if (!n->outputs[i]) {
            pc_data_unref(out[i]);
            out[i] = NULL;
            continue;
        }
        if (!out[i]) {
            ref_unref_all(out, n->n_outputs);
            return ref_fail(&ctx, PC_ERR_INTERNAL, "kernel produced no value for output %u '%s'", i,
                            n->outputs[i]->name);
        }
    }
    if (ctx.opts->on_node) ctx.opts->on_node(ctx.opts->on_node_ctx, n, in, out);
    if (ctx.opts->replace_outputs) ctx.opts->replace_outputs(ctx.opts->replace_ctx, n, out);
    for (uint32_t i = 0; i < n->n_outputs; i++) {
        if (!n->outputs[i]) continue;
        pc_data_unref(frame->slots[n->outputs[i]->id]);
        frame->slots[n->outputs[i]->id] = out[i];
        out[i] = NULL;
    }
    return PC_OK;
}

static pc_status run_graph(const pc_model *m, const pc_ref_options *opts, const pc_graph *g,
                           ref_frame *parent, uint32_t n_in, pc_data *const *in, pc_data **outs,
                           pc_error *err)
{
    ref_frame frame = {g, NULL, parent, opts};
    uint32_t max_in = 1, max_out = 1;
    for (const pc_node *n = g->first; n; n = n->next) {
        if (n->n_inputs > max_in) max_in = n->n_inputs;
        if (n->n_outputs > max_out) max_out = n->n_outputs;
    }
    frame.slots = calloc(g->n_values ? g->n_values : 1, sizeof *frame.slots);
    pc_data **scratch_in = calloc(max_in, sizeof *scratch_in);
    pc_data **scratch_out = calloc(max_out, sizeof *scratch_out);
    pc_status st = PC_OK;
    if (!frame.slots || !scratch_in || !scratch_out)
        st = pc_error_set(err, PC_ERR_NOMEM, "out of memory running a graph");
    for (uint32_t i = 0; st == PC_OK && i < g->n_initializers; i++) {
        const pc_value *v = g->initializers[i];
        if (!(frame.slots[v->id] = pc_data_wrap_tensor(v->initializer, err))) st = err->status;
    }
    for (uint32_t i = 0; st == PC_OK && i < n_in && i < g->n_inputs; i++) {
        const pc_value *v = g->inputs[i];
        if (!in[i]) continue; /* keep the initializer default */
        if (!dtype_matches(&v->type, in[i])) {
            char buf[96];
            st = pc_error_set(err, PC_ERR_TYPE, "graph '%s': input '%s' is declared %s but was fed %s",
                              g->name ? g->name : "", v->name,
                              v->type.kind == PC_TYPE_TENSOR ? pc_dtype_name(v->type.elem) : "a non-tensor",
                              pc_data_describe(in[i], buf, sizeof buf));
            break;
        }
        pc_data_unref(frame.slots[v->id]);
        frame.slots[v->id] = pc_data_ref(in[i]);
    }
    for (uint32_t i = 0; st == PC_OK && i < g->n_inputs; i++)
        if (!frame.slots[g->inputs[i]->id])
            st =
                graph_error(err, g, PC_ERR_MISSING_FIELD, "no value was given for input", g->inputs[i]->name);
    for (const pc_node *n = g->first; st == PC_OK && n; n = n->next)
        st = run_node(m, &frame, n, scratch_in, scratch_out, err);
    for (uint32_t i = 0; st == PC_OK && i < g->n_outputs; i++) {
        pc_data *d = frame_get(&frame, g->outputs[i]);
        if (!d) {
            st = graph_error(err, g, PC_ERR_UNPRODUCED_OUTPUT, "no value was computed for output",
                             g->outputs[i]->name);
            ref_unref_all(outs, i);
            break;
        }
        outs[i] = pc_data_ref(d);
    }
    if (frame.slots)
        for (uint32_t i = 0; i < g->n_values; i++)
            pc_data_unref(frame.slots[i]);
    free(frame.slots);
    free(scratch_in);
    free(scratch_out);
    return st;
}

pc_status pc_ref_run(const pc_model *model, uint32_t n_inputs, pc_data *const *inputs, pc_data ***outputs,
                     pc_error *err)
{
    return pc_ref_run_with_options(model, NULL, n_inputs, inputs, outputs, err);
}

pc_status pc_ref_run_with_options(const pc_model *model, const pc_ref_options *options, uint32_t n_inputs,
                                  pc_data *const *inputs, pc_data ***outputs, pc_error *err)
{
    static const pc_ref_options defaults;
    if (!options) options = &defaults;
    pc_error local;
    if (!err) err = &local;
    pc_error_clear(err);
    *outputs = NULL;
    const pc_graph *g = model->graph;
    pc_data **fed = calloc(g->n_inputs ? g->n_inputs : 1, sizeof *fed);
    pc_data **outs = calloc(g->n_outputs ? g->n_outputs : 1, sizeof *outs);
    if (!fed || !outs) {
        free(fed);
        free(outs);
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory starting a run");
    }
    pc_status st = PC_OK;
    if (n_inputs == g->n_inputs) {
        if (n_inputs)
            memcpy(fed, inputs, n_inputs * sizeof *fed); /* inputs may be NULL when there are none */
    } else {
        uint32_t k = 0;
        for (uint32_t i = 0; i < g->n_inputs && k < n_inputs; i++)
            if (!g->inputs[i]->initializer) fed[i] = inputs[k++];
        if (k < n_inputs)
            st = pc_error_set(err, PC_ERR_ARITY,
                              "%u inputs given, but the graph has only %u inputs without an "
                              "initializer",
                              n_inputs, k);
    }
    if (st == PC_OK) st = run_graph(model, options, g, NULL, g->n_inputs, fed, outs, err);
    free(fed);
    if (st != PC_OK) {
        free(outs);
        return st;
    }
    *outputs = outs;
    return PC_OK;
}

void pc_ref_free_outputs(const pc_model *model, pc_data **outputs)
{
    if (!outputs) return;
    for (uint32_t i = 0; i < model->graph->n_outputs; i++)
        pc_data_unref(outputs[i]);
    free(outputs);
}
