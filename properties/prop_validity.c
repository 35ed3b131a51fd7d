/* validity: after every pass the graph verifies (pc_model_verify), shape inference agrees with the types and
 * shapes the graph declares, and the pass's `changed` flag is honest (no change reported while the bytes
 * moved).
 *
 * Agreement: a copy of the graph gets the types of every node output erased and inferred again from the graph
 * inputs and initializers alone; where both the declared and the inferred type know an element type, a rank
 * or a dim, they must be equal. A value shape inference cannot type (an op it does not know) is not judged.
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

static pc_prop_outcome load(const pc_check_ctx *ctx, pc_model **out, char *msg, size_t msg_size)
{
    pc_load_options lo;
    pc_load_options_default(&lo);
    lo.skip_verify = true;
    pc_error err;
    if (pc_model_load_bytes(ctx->after_bytes, ctx->after_size, &lo, out, &err) != PC_OK) {
        snprintf(msg, msg_size, "reloading the graph after %s: %s", ctx->pass, err.message);
        return PC_PROP_ERROR;
    }
    return PC_PROP_PASS;
}

static pc_prop_outcome check_shapes(const pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
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
    pc_model_free(copy);
    copy = NULL;
    if ((o = load(ctx, &copy, msg, msg_size)) != PC_PROP_PASS) return o;
    /* then from scratch: every node output's type erased */
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
    if (!ctx->bytes_changed) return PC_PROP_PASS;
    return check_shapes(ctx, msg, msg_size, kind);
}

static pc_prop_outcome validity_final(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    return verify(ctx, ctx->after, msg, msg_size, kind);
}

const pc_property pc_prop_validity = {
    "validity",
    "the verifier passes and shape inference agrees with the declared types after every pass; a pass's "
    "changed flag "
    "is honest",
    validity_per_pass,
    validity_final,
};
