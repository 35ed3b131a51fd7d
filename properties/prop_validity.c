/* validity: after every pass the graph verifies (pc_model_verify), the types and shapes the graph declares
 * are the ones the reference executor actually produces, shape inference agrees with the declared types, and
 * the pass's `changed` flag is honest (no change reported while the bytes moved).
 *
 * The reference is the judge: the graph after the pass runs on the reference executor (reference/) with the
 * case inputs — in the run check.c caches for every property (numerics has usually made it already), which
 * records the type of every node output (pc_check_ref_types) — and every value a node produces whose
 * declared type is a tensor type — graph outputs and intermediate values alike, subgraph bodies included —
 * is compared with the tensor the run made: element type, rank and every known dim must be equal; a symbolic
 * dim must stand for one size throughout the run (main graph: the same dim_param names one size in every
 * value; a body's symbols are left out, since its values may change shape from one iteration to the next).
 * Optional outputs left out are not judged. When the reference cannot run the graph (an op it lacks, a run
 * error the numerics property reports), that part SKIPs with the reason — the rest has still been checked.
 *
 * Shape inference too (it catches types no value carries at run time, e.g. a contradiction a pass leaves in
 * declared types of values the run does not reach): a copy of the graph gets the types of every node output
 * erased and inferred again from the graph inputs and initializers alone; where both the declared and the
 * inferred type know an element type, a rank or a dim, they must be equal. A value shape inference cannot
 * type (an op it does not know) is not judged by it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "properties/property.h"

static void describe_type(const pc_type *t, char *buf, size_t size)
{
    if (t->kind != PC_TYPE_TENSOR) {
        snprintf(buf, size, "(not a tensor type)");
        return;
    }
    size_t used = 0;
    int k = snprintf(buf, size, "%s", pc_dtype_name(t->elem));
    if (k < 0 || (size_t)k >= size) return;
    used = (size_t)k;
    if (t->shape.rank < 0) {
        snprintf(buf + used, size - used, "[?rank]");
        return;
    }
    k = snprintf(buf + used, size - used, "[");
    for (int32_t i = 0; k >= 0 && i < t->shape.rank && (size_t)k < size - used; i++) {
        used += (size_t)k;
        const pc_dim *d = &t->shape.dims[i];
        if (d->kind == PC_DIM_KNOWN)
            k = snprintf(buf + used, size - used, "%s%lld", i ? "," : "", (long long)d->size);
        else
            k = snprintf(buf + used, size - used, "%s%s", i ? "," : "",
                         d->kind == PC_DIM_SYMBOLIC ? d->symbol : "?");
    }
    if (k >= 0 && (size_t)k < size - used) {
        used += (size_t)k;
        snprintf(buf + used, size - used, "]");
    }
}

/* Where declared and inferred both know something, do they agree? */
static bool types_agree(const pc_type *declared, const pc_type *inferred)
{
    if (declared->kind != PC_TYPE_TENSOR || inferred->kind != PC_TYPE_TENSOR) return true;
    if (declared->elem != PC_DTYPE_UNDEFINED && inferred->elem != PC_DTYPE_UNDEFINED &&
        declared->elem != inferred->elem)
        return false;
    if (declared->shape.rank < 0 || inferred->shape.rank < 0) return true;
    if (declared->shape.rank != inferred->shape.rank) return false;
    for (int32_t i = 0; i < declared->shape.rank; i++) {
        const pc_dim *x = &declared->shape.dims[i], *y = &inferred->shape.dims[i];
        if (x->kind == PC_DIM_KNOWN && y->kind == PC_DIM_KNOWN && x->size != y->size) return false;
    }
    return true;
}

/* ---- against the reference executor ---- */
enum { VAL_MAX_SYMBOLS = 256 };

typedef struct val_symbol {
    const char *name;
    int64_t size;
    const char *value; /* the value that bound it, for the message */
} val_symbol;

typedef struct val_run {
    const pc_graph *main;
    val_symbol symbols[VAL_MAX_SYMBOLS];
    uint32_t n_symbols;
    bool failed;
    char why[1024];
    uint32_t values_checked;
} val_run;

static void describe_data(const pc_check_ref_type *d, char *buf, size_t size)
{
    if (d->kind != PC_TYPE_TENSOR) {
        snprintf(buf, size, "(a %s)", d->kind == PC_TYPE_SEQUENCE ? "sequence" : "optional");
        return;
    }
    size_t used = 0;
    int k = snprintf(buf, size, "%s[", pc_dtype_name(d->dtype));
    for (int32_t i = 0; k >= 0 && (size_t)k < size - used && i < d->rank; i++) {
        used += (size_t)k;
        k = snprintf(buf + used, size - used, "%s%lld", i ? "," : "", (long long)d->dims[i]);
    }
    if (k >= 0 && (size_t)k < size - used) {
        used += (size_t)k;
        snprintf(buf + used, size - used, "]");
    }
}

/* Compares one produced value with its declared type; notes the first disagreement. */
static void check_value(val_run *r, const pc_value *v, const pc_node *producer, const pc_check_ref_type *d)
{
    if (r->failed || !v || !d || v->type.kind != PC_TYPE_TENSOR) return;
    r->values_checked++;
    const pc_type *t = &v->type;
    const char *what = NULL;
    char extra[200] = "";
    if (d->kind != PC_TYPE_TENSOR)
        what = "a tensor";
    else if (t->elem != PC_DTYPE_UNDEFINED && t->elem != d->dtype)
        what = "its element type";
    else if (t->shape.rank >= 0 && t->shape.rank != d->rank)
        what = "its rank";
    for (int32_t i = 0; !what && t->shape.rank >= 0 && i < t->shape.rank; i++) {
        const pc_dim *dim = &t->shape.dims[i];
        if (dim->kind == PC_DIM_KNOWN && dim->size != d->dims[i]) {
            what = "a dim";
            snprintf(extra, sizeof extra, " (dim %d)", (int)i);
        } else if (dim->kind == PC_DIM_SYMBOLIC && dim->symbol && producer && producer->graph == r->main) {
            uint32_t k = 0;
            while (k < r->n_symbols && strcmp(r->symbols[k].name, dim->symbol) != 0)
                k++;
            if (k == r->n_symbols) {
                if (k < VAL_MAX_SYMBOLS)
                    r->symbols[r->n_symbols++] = (val_symbol){dim->symbol, d->dims[i], v->name};
            } else if (r->symbols[k].size != d->dims[i]) {
                what = "a symbolic dim";
                snprintf(extra, sizeof extra, " (dim %d: '%s' is %lld in '%s' but %lld here)", (int)i,
                         dim->symbol, (long long)r->symbols[k].size, r->symbols[k].value,
                         (long long)d->dims[i]);
            }
        }
    }
    if (!what) return;
    char d1[256], d2[256];
    describe_type(t, d1, sizeof d1);
    describe_data(d, d2, sizeof d2);
    r->failed = true;
    snprintf(r->why, sizeof r->why,
             "value '%s' (output of %s node '%s') is declared %s but the reference makes %s: "
             "%s differs%s",
             v->name, producer ? producer->op_type : "no", producer && producer->name ? producer->name : "",
             d1, d2, what, extra);
}

static pc_prop_outcome check_reference(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    const pc_model *m = ctx->after;
    val_run *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(msg, msg_size, "%s: out of memory", ctx->pass);
        return PC_PROP_ERROR;
    }
    r->main = m->graph;
    /* the cached run numerics has usually made already, not a run of validity's own */
    pc_data **outs = NULL;
    pc_error err;
    pc_status st = pc_check_ref_outputs(ctx, m, &outs, &err);
    const pc_check_ref_type *types = NULL;
    uint32_t n_types = 0;
    pc_prop_outcome o = PC_PROP_PASS;
    if (st != PC_OK) {
        snprintf(
            msg, msg_size,
            "%s: the graph verifies and shape inference agrees with it, but the reference cannot run it to "
            "judge its declared types: %s: %s",
            ctx->pass, pc_status_name(st), err.message);
        o = PC_PROP_SKIP;
    } else if (pc_check_ref_types(ctx, m, &types, &n_types, &err) != PC_OK) {
        snprintf(msg, msg_size, "%s: the types of the reference run: %s: %s", ctx->pass,
                 pc_status_name(err.status), err.message);
        o = PC_PROP_ERROR;
    } else {
        /* in the order the nodes ran, so the first disagreement and the symbol bindings are the run's */
        for (uint32_t i = 0; i < n_types && !r->failed; i++)
            check_value(r, types[i].node->outputs[types[i].output], types[i].node, &types[i]);
        /* graph outputs no node makes (a graph input or an initializer passed through) */
        for (uint32_t i = 0; i < m->graph->n_outputs && !r->failed; i++) {
            const pc_data *d = outs[i];
            if (m->graph->outputs[i]->producer || !d) continue;
            pc_check_ref_type t = {.kind = d->kind, .dtype = d->dtype};
            if (d->kind == PC_TYPE_TENSOR) {
                t.rank = d->rank;
                t.dims = d->dims;
            }
            check_value(r, m->graph->outputs[i], NULL, &t);
        }
        if (r->failed) {
            *kind = "reference-type";
            snprintf(msg, msg_size, "%s: %s", ctx->pass, r->why);
            o = PC_PROP_FAIL;
        }
    }
    free(r);
    return o;
}

/* A private copy of the graph as its bytes load: the runner's shared load, cloned; when that load fails its
 * verifier (roundtrip's finding), a load of our own without it. */
static pc_prop_outcome load(pc_check_ctx *ctx, pc_model **out, char *msg, size_t msg_size)
{
    pc_error err;
    if (pc_check_after_copy(ctx, out, &err) == PC_OK) return PC_PROP_PASS;
    pc_load_options lo;
    pc_load_options_default(&lo);
    lo.skip_verify = true;
    if (pc_model_load_bytes(ctx->after_bytes, ctx->after_size, &lo, out, &err) != PC_OK) {
        snprintf(msg, msg_size, "reloading the graph after %s: %s", ctx->pass, err.message);
        return PC_PROP_ERROR;
    }
    return PC_PROP_PASS;
}

static pc_prop_outcome check_shapes(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    pc_model *copy = NULL;
    pc_prop_outcome o = load(ctx, &copy, msg, msg_size);
    if (o != PC_PROP_PASS) return o;
    pc_error err;
    /* first with the declared types: inference must not contradict them */
    if (pc_graph_infer_shapes(copy->graph, &err) != PC_OK) {
        *kind = "shape-contradiction";
        snprintf(msg, msg_size, "%s: shape inference contradicts the declared types: %s: %s", ctx->pass,
                 pc_status_name(err.status), err.message);
        pc_model_free(copy);
        return PC_PROP_FAIL;
    }
    /* then from scratch: every node output's type erased, in the same copy (inference with the declared
     * types agreed with them, so what it left on the values it does not erase — inputs, initializers, the
     * bodies' values — is what a fresh load gives, at most refined) */
    pc_graph *g = copy->graph;
    pc_type none = {.kind = PC_TYPE_NONE, .shape = {.rank = -1}};
    for (uint32_t i = 0; i < g->n_values; i++) {
        pc_value *v = g->values[i];
        if (!v->producer || v->producer->removed) continue;
        if (pc_value_set_type(v, &none, &err) != PC_OK) {
            snprintf(msg, msg_size, "erasing the type of '%s': %s", v->name, err.message);
            pc_model_free(copy);
            return PC_PROP_ERROR;
        }
    }
    if (pc_graph_infer_shapes(g, &err) != PC_OK) {
        *kind = "shape-inference";
        snprintf(msg, msg_size, "%s: shape inference fails on the graph from its inputs: %s: %s", ctx->pass,
                 pc_status_name(err.status), err.message);
        pc_model_free(copy);
        return PC_PROP_FAIL;
    }
    const pc_graph *ag = ctx->after->graph;
    for (uint32_t i = 0; i < g->n_values && o == PC_PROP_PASS; i++) {
        const pc_value *inf = g->values[i];
        if (!inf->producer || inf->producer->removed) continue;
        const pc_value *dec = pc_graph_find_value(ag, inf->name);
        if (!dec || types_agree(&dec->type, &inf->type)) continue;
        char d1[256], d2[256];
        describe_type(&dec->type, d1, sizeof d1);
        describe_type(&inf->type, d2, sizeof d2);
        *kind = "shape-disagrees";
        snprintf(msg, msg_size, "%s: value '%s' (output of %s node '%s') is declared %s but infers as %s",
                 ctx->pass, inf->name, inf->producer->op_type, inf->producer->name ? inf->producer->name : "",
                 d1, d2);
        o = PC_PROP_FAIL;
    }
    pc_model_free(copy);
    return o;
}

static pc_prop_outcome verify(const pc_check_ctx *ctx, const pc_model *m, char *msg, size_t msg_size,
                              const char **kind)
{
    pc_error err;
    if (pc_model_verify(m, &err) == PC_OK) return PC_PROP_PASS;
    *kind = "verify";
    snprintf(msg, msg_size, "%s left an invalid graph: %s: %s", ctx->pass, pc_status_name(err.status),
             err.message);
    return PC_PROP_FAIL;
}

static pc_prop_outcome validity_per_pass(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    pc_prop_outcome o = verify(ctx, ctx->after, msg, msg_size, kind);
    if (o != PC_PROP_PASS) return o;
    if (!ctx->changed && ctx->bytes_changed) {
        *kind = "changed-flag";
        snprintf(msg, msg_size,
                 "%s reported no change, but the serialized graph differs from the one before it "
                 "(%zu vs %zu bytes)",
                 ctx->pass, ctx->before_size, ctx->after_size);
        return PC_PROP_FAIL;
    }
    /* the other direction: a pass that claims a change it did not make keeps the pipeline's rounds going for
     * nothing (and a real change it lost would hide here). Partitioning always reports a change. */
    if (ctx->changed && !ctx->bytes_changed && strcmp(ctx->pass, "partition") != 0) {
        *kind = "changed-flag";
        snprintf(msg, msg_size,
                 "%s reported a change, but the serialized graph is byte-identical to the one before it",
                 ctx->pass);
        return PC_PROP_FAIL;
    }
    if (!ctx->bytes_changed) return PC_PROP_PASS;
    if ((o = check_shapes(ctx, msg, msg_size, kind)) != PC_PROP_PASS) return o;
    return check_reference(ctx, msg, msg_size, kind);
}

static pc_prop_outcome validity_final(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    return verify(ctx, ctx->after, msg, msg_size, kind);
}

const pc_property pc_prop_validity = {
    "validity",
    "the verifier passes and the declared types and shapes are the ones the reference executor produces (and "
    "shape inference agrees) after every pass; a pass's changed flag is honest",
    validity_per_pass,
    validity_final,
};
