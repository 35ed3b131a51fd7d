/* roundtrip: the graph after every pass saves and reloads (ONNX) into the same graph, and the reloaded graph
 * saves back to the same bytes and reloads equal (pc_model_equal); end to end, the reloaded optimized graph
 * also gives the same reference outputs, bit for bit, and so does the optimized graph saved in the ORT format
 * and reloaded, which also saves back to the same ORT bytes (ort_final).
 *
 * "The same graph" compares the graph in memory with the reloaded one on what the file must carry: opsets,
 * graph inputs and outputs with their types, initializers, and every node (name, op, domain, inputs, outputs,
 * attributes, metadata — annotations included — and EP), plus the types of values that have a value_info
 * entry. The types shape inference put on other intermediate values are not saved by design (the saver writes
 * what the file had), so they are not compared. Per pass the output check is left out: a structurally equal
 * graph with identical bytes runs the same on a deterministic reference; the final check runs it once per
 * case. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "properties/match.h"
#include "properties/property.h"
#include "reference/reference.h"

static bool kvs_same(uint32_t na, const pc_kv *a, uint32_t nb, const pc_kv *b)
{
    if (na != nb) return false;
    for (uint32_t i = 0; i < na; i++)
        if (!match_str_eq(a[i].key, b[i].key) || !match_str_eq(a[i].value, b[i].value)) return false;
    return true;
}

static bool values_same(uint32_t na, pc_value *const *a, uint32_t nb, pc_value *const *b, bool types)
{
    if (na != nb) return false;
    for (uint32_t i = 0; i < na; i++) {
        if (strcmp(a[i]->name, b[i]->name) != 0) return false;
        if (types && !pc_type_equal(&a[i]->type, &b[i]->type)) return false;
    }
    return true;
}

/* The in-memory graph against its reloaded copy; the first difference goes to diff. */
static bool same_graph(const pc_model *live, const pc_model *back, char *diff, size_t size)
{
    if (live->n_opsets != back->n_opsets) {
        snprintf(diff, size, "%u opset imports in memory, %u reloaded", live->n_opsets, back->n_opsets);
        return false;
    }
    for (uint32_t i = 0; i < live->n_opsets; i++)
        if (pc_model_opset(back, live->opsets[i].domain) != live->opsets[i].version) {
            snprintf(diff, size, "opset of domain '%s' differs", live->opsets[i].domain);
            return false;
        }
    const pc_graph *a = live->graph, *b = back->graph;
    if (!values_same(a->n_inputs, a->inputs, b->n_inputs, b->inputs, true) ||
        !values_same(a->n_outputs, a->outputs, b->n_outputs, b->outputs, true)) {
        snprintf(diff, size, "graph inputs or outputs (names or types) differ");
        return false;
    }
    if (a->n_initializers != b->n_initializers) {
        snprintf(diff, size, "%u initializers in memory, %u reloaded", a->n_initializers, b->n_initializers);
        return false;
    }
    for (uint32_t i = 0; i < a->n_initializers; i++)
        if (strcmp(a->initializers[i]->name, b->initializers[i]->name) != 0 ||
            !pc_tensor_equal(a->initializers[i]->initializer, b->initializers[i]->initializer)) {
            snprintf(diff, size, "initializer '%s' differs", a->initializers[i]->name);
            return false;
        }
    if (a->n_nodes != b->n_nodes) {
        snprintf(diff, size, "%u nodes in memory, %u reloaded", a->n_nodes, b->n_nodes);
        return false;
    }
    char l[160];
    for (const pc_node *x = a->first, *y = b->first; x && y; x = x->next, y = y->next) {
        const char *what = NULL;
        if (!match_str_eq(x->name, y->name) || strcmp(x->op_type, y->op_type) != 0 ||
            !match_str_eq(x->domain, y->domain))
            what = "name, op or domain";
        else if (!match_node_same(x, y))
            what = "inputs, outputs or attributes";
        else if (!kvs_same(x->n_metadata, x->metadata, y->n_metadata, y->metadata))
            what = "metadata (annotation)";
        else if (!match_str_eq(x->ep, y->ep))
            what = "EP";
        if (what) {
            snprintf(diff, size, "node %s: %s differ", match_node_label(x, l, sizeof l), what);
            return false;
        }
    }
    for (uint32_t i = 0; i < a->n_values; i++) {
        const pc_value *v = a->values[i];
        if (!v->has_value_info || (v->producer && v->producer->removed)) continue;
        const pc_value *w = pc_graph_find_value(b, v->name);
        if (!w || !pc_type_equal(&v->type, &w->type)) {
            snprintf(diff, size, "value '%s' (with value_info) %s", v->name,
                     w ? "has a different type" : "is gone");
            return false;
        }
    }
    return true;
}

/* The reloaded graph (the runner's shared load: not to be freed) in *out when it passed. */
static pc_prop_outcome structural(pc_check_ctx *ctx, const pc_model **out, char *msg, size_t msg_size,
                                  const char **kind)
{
    const pc_model *m = NULL;
    pc_error err;
    *out = NULL;
    if (pc_check_after_loaded(ctx, &m, &err) != PC_OK) {
        *kind = "load-failed";
        snprintf(msg, msg_size, "the graph after %s does not load back: %s: %s", ctx->pass,
                 pc_status_name(err.status), err.message);
        return PC_PROP_FAIL;
    }
    char diff[512] = "";
    if (!same_graph(ctx->after, m, diff, sizeof diff)) {
        *kind = "graph-differs";
        snprintf(msg, msg_size, "the graph after %s reloads different: %s", ctx->pass, diff);
        return PC_PROP_FAIL;
    }
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (pc_model_save_bytes(m, &bytes, &size, &err) != PC_OK) {
        *kind = "save-failed";
        snprintf(msg, msg_size, "the reloaded graph after %s does not save: %s", ctx->pass, err.message);
        return PC_PROP_FAIL;
    }
    bool same = size == ctx->after_size && memcmp(bytes, ctx->after_bytes, size) == 0;
    size_t at = 0;
    while (!same && at < size && at < ctx->after_size && bytes[at] == ctx->after_bytes[at])
        at++;
    free(bytes);
    /* Reloading those bytes once more is not a further check: the loader is a function of the bytes, so
     * it would give m again. */
    if (!same) {
        *kind = "bytes-differ";
        snprintf(msg, msg_size,
                 "the graph after %s saves to different bytes after a reload (%zu vs %zu bytes, first "
                 "difference at byte %zu)",
                 ctx->pass, ctx->after_size, size, at);
        return PC_PROP_FAIL;
    }
    *out = m;
    return PC_PROP_PASS;
}

static pc_prop_outcome roundtrip_per_pass(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    if (!ctx->bytes_changed) return PC_PROP_PASS; /* the graph before was checked already */
    const pc_model *m = NULL;
    return structural(ctx, &m, msg, msg_size, kind);
}

static bool data_identical(const pc_data *a, const pc_data *b)
{
    if (a->kind == PC_TYPE_TENSOR && b->kind == PC_TYPE_TENSOR && a->dtype != PC_DTYPE_STRING &&
        a->dtype == b->dtype && a->n_bytes == b->n_bytes && a->rank == b->rank) {
        for (int32_t i = 0; i < a->rank; i++)
            if (a->dims[i] != b->dims[i]) return false;
        return !a->n_bytes || memcmp(a->data, b->data, a->n_bytes) == 0;
    }
    pc_compare_result r;
    return pc_data_compare_exact(a, b, &r) == PC_COMPARE_EQUAL;
}

/* Node metadata is not part of the ORT format (the saver refuses it): dropped from the copy saved as ORT. */
static void drop_node_metadata(pc_graph *g)
{
    for (pc_node *n = g->first; n; n = n->next) {
        n->n_metadata = 0;
        for (uint32_t a = 0; a < n->n_attrs; a++) {
            if (n->attrs[a].type == PC_ATTR_GRAPH) drop_node_metadata(n->attrs[a].g);
            for (size_t j = 0; n->attrs[a].type == PC_ATTR_GRAPHS && j < n->attrs[a].n; j++)
                drop_node_metadata(n->attrs[a].graphs[j]);
        }
    }
}

/* Runs m, a reloaded graph, on the case's inputs: PC_PROP_PASS when every output is bit-identical to want.
 * Otherwise *kind is kind_name and msg says which: "<what> does not run<not_run_tail>" or "output N of <what>
 * differs<differs_tail>". */
static pc_prop_outcome reloaded_outputs_match(pc_check_ctx *ctx, const pc_model *m, pc_data **want,
                                              const char *kind_name, const char *what,
                                              const char *not_run_tail, const char *differs_tail, char *msg,
                                              size_t msg_size, const char **kind)
{
    pc_data **got = NULL;
    pc_error err;
    pc_status st = pc_ref_run(m, ctx->kase->n_inputs, ctx->kase->inputs, &got, &err);
    if (ctx->stats) ctx->stats->ref_runs++;
    if (st != PC_OK) {
        *kind = kind_name;
        snprintf(msg, msg_size, "%s does not run%s: %s: %s", what, not_run_tail, pc_status_name(st),
                 err.message);
        return PC_PROP_FAIL;
    }
    pc_prop_outcome o = PC_PROP_PASS;
    for (uint32_t i = 0; i < m->graph->n_outputs && o == PC_PROP_PASS; i++)
        if (!data_identical(want[i], got[i])) {
            *kind = kind_name;
            snprintf(msg, msg_size, "output %u ('%s') of %s differs%s", i, m->graph->outputs[i]->name, what,
                     differs_tail);
            o = PC_PROP_FAIL;
        }
    pc_ref_free_outputs(m, got);
    return o;
}

/* The ORT format, end to end: the optimized graph (its node metadata dropped) saved as ORT, reloaded and
 * saved again gives the same bytes, and the reloaded graph computes the reference's outputs bit for bit.
 * Graphs the format cannot hold (UNSUPPORTED: optional types, values no shape rule types, ...) are not judged
 * here. */
static pc_prop_outcome ort_final(pc_check_ctx *ctx, pc_data **want, char *msg, size_t msg_size,
                                 const char **kind)
{
    pc_error err;
    pc_model *copy = NULL, *back = NULL;
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0;
    pc_prop_outcome o = PC_PROP_PASS;
    if (pc_model_clone(ctx->after, &copy, &err) != PC_OK) { /* the harness could not judge: an error */
        *kind = "copy-failed";
        snprintf(msg, msg_size, "copying the optimized graph for the ORT check: %s", err.message);
        return PC_PROP_ERROR;
    }
    drop_node_metadata(copy->graph);
    pc_status st = pc_model_save_ort_bytes(copy, &b1, &n1, &err);
    if (st == PC_ERR_UNSUPPORTED) goto done;
    if (st == PC_ERR_NOMEM) {
        *kind = "ort-save-failed";
        snprintf(msg, msg_size, "saving the optimized graph as ORT ran out of memory: %s", err.message);
        o = PC_PROP_ERROR;
        goto done;
    }
    if (st != PC_OK) {
        *kind = "ort-save-failed";
        snprintf(msg, msg_size, "the optimized graph does not save as ORT: %s: %s", pc_status_name(st),
                 err.message);
        o = PC_PROP_FAIL;
        goto done;
    }
    if ((st = pc_model_load_bytes(b1, n1, NULL, &back, &err)) != PC_OK) {
        *kind = "ort-load-failed";
        snprintf(msg, msg_size, "the optimized graph saved as ORT does not load back: %s: %s",
                 pc_status_name(st), err.message);
        o = PC_PROP_FAIL;
        goto done;
    }
    if ((st = pc_model_save_ort_bytes(back, &b2, &n2, &err)) != PC_OK || n1 != n2 ||
        memcmp(b1, b2, n1) != 0) {
        *kind = "ort-bytes-differ";
        snprintf(msg, msg_size,
                 "the optimized graph saved as ORT, reloaded and saved again gives other bytes "
                 "(%zu vs %zu)%s%s",
                 n1, n2, st != PC_OK ? ": " : "", st != PC_OK ? err.message : "");
        o = PC_PROP_FAIL;
        goto done;
    }
    o = reloaded_outputs_match(ctx, back, want, "ort-outputs-differ",
                               "the optimized graph reloaded from the ORT format", "", "", msg, msg_size,
                               kind);
done:
    free(b1);
    free(b2);
    pc_model_free(back);
    pc_model_free(copy);
    return o;
}

static pc_prop_outcome roundtrip_final(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    const pc_model *m = NULL;
    pc_prop_outcome o = structural(ctx, &m, msg, msg_size, kind);
    if (o != PC_PROP_PASS) return o;
    pc_data **want = NULL;
    pc_error err;
    if (pc_check_ref_outputs(ctx, ctx->after, &want, &err) != PC_OK)
        return PC_PROP_PASS; /* numerics reports a graph the reference cannot run; structure was equal */
    o = reloaded_outputs_match(ctx, m, want, "outputs-differ", "the reloaded optimized graph",
                               ", the original one did", " from the graph's own", msg, msg_size, kind);
    if (o == PC_PROP_PASS) o = ort_final(ctx, want, msg, msg_size, kind);
    return o;
}

const pc_property pc_prop_roundtrip = {
    "roundtrip",
    "save and reload after every pass gives an equal graph and the same bytes; end to end also the same "
    "outputs",
    roundtrip_per_pass,
    roundtrip_final,
};
