/* ort-oracle: the original graph on ONNX Runtime 1.30 against the reference executor (--oracle ort). The
 * reference is the oracle of every other property, so this is the check on the checker: a disagreement is a
 * bug in the reference (or in ORT), reported as its own kind and shrunk like any other failure. The ORT
 * client and the verdict (tolerances, explained differences) are properties/oracles/ort_oracle.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "properties/oracles/ort_oracle.h"
#include "properties/property.h"

/* ORT refused a model because it lacks a kernel for some op/type/opset, not because the model is wrong: it
 * cannot judge that case. */
static bool ort_lacks_kernel(const char *message)
{
    return strstr(message, "NOT_IMPLEMENTED") || strstr(message, "Could not find an implementation") ||
           strstr(message, "is not a registered function/op");
}

/* Every node of g (bodies included) in a domain ONNX Runtime's CPU EP runs: the standard ones and its contrib
 * domain (FusedConv, QLinear ops), not passcheck's internal NHWC domain. */
static bool ort_runs_domains(const pc_graph *g)
{
    for (const pc_node *n = g->first; n; n = n->next) {
        if (n->domain[0] && strcmp(n->domain, "ai.onnx.ml") != 0 && strcmp(n->domain, PC_MS_DOMAIN) != 0)
            return false;
        for (uint32_t a = 0; a < n->n_attrs; a++) {
            const pc_attr *at = &n->attrs[a];
            if (at->type == PC_ATTR_GRAPH && at->g && !ort_runs_domains(at->g)) return false;
            for (size_t k = 0; at->type == PC_ATTR_GRAPHS && k < at->n; k++)
                if (!ort_runs_domains(at->graphs[k])) return false;
        }
    }
    return true;
}

/* The optimized graph on ONNX Runtime, judged as the original was: against the reference executor on the
 * same graph. numerics judges the reference's optimized outputs against its original ones (with each
 * rewrite's tolerance: a QDQ -> QLinear rewrite may move a quantized value one step), so this closes the
 * chain for what a user deploys: a graph ORT refuses or reads otherwise than the reference (a fused or
 * contrib op, FusedConv, QLinearConv, whose meaning the two disagree on). Not judged (PASS, the original's
 * verdict standing) when the optimized graph holds ops of passcheck's internal NHWC domain, which no runtime
 * runs, or when the pipeline changed nothing. */
static pc_prop_outcome optimized_on_ort(pc_check_ctx *ctx, uint32_t n_fed, const char **names, char *msg,
                                        size_t msg_size, const char **kind)
{
    if (!ctx->after || !ctx->after_bytes || !ctx->bytes_changed || !ort_runs_domains(ctx->after->graph))
        return PC_PROP_PASS;
    pc_data **ref = NULL;
    pc_error ref_err;
    if (pc_check_ref_outputs(ctx, ctx->after, &ref, &ref_err) != PC_OK)
        return PC_PROP_PASS; /* numerics reports an optimized graph the reference cannot run */
    pc_ort_result r;
    pc_error err;
    if (pc_ort_run(ctx->config->ort_dir, ctx->after_bytes, ctx->after_size, n_fed, names, ctx->kase->inputs,
                   &r, &err) != PC_OK) {
        snprintf(msg, msg_size, "the ONNX Runtime oracle is unavailable for the optimized graph: %s",
                 err.message);
        return PC_PROP_ERROR;
    }
    pc_prop_outcome o = PC_PROP_PASS;
    if (r.status == PC_ORT_UNSUPPORTED || (r.status != PC_ORT_OK && ort_lacks_kernel(r.message))) {
        snprintf(msg, msg_size,
                 "ONNX Runtime ran the original (agreeing) but cannot run the optimized graph: %s",
                 r.message);
        o = PC_PROP_SKIP;
    } else if (r.status != PC_ORT_OK) {
        *kind = "ort-rejects-optimized";
        snprintf(msg, msg_size, "ONNX Runtime %s the optimized graph (it ran the original): %s",
                 r.status == PC_ORT_REJECTED ? "refuses" : "cannot run", r.message);
        o = PC_PROP_FAIL;
    } else {
        char why[768];
        const char *k = NULL;
        o = pc_ort_compare_outputs(ctx->after, ref, &r, why, sizeof why, &k);
        if (o == PC_PROP_FAIL)
            o = pc_ort_explain(ctx->after, ctx->kase->n_inputs, ctx->kase->inputs, &r,
                               ctx->stats ? &ctx->stats->ref_runs : NULL, why, sizeof why, &k);
        if (o == PC_PROP_FAIL) {
            *kind = "optimized-differs";
            snprintf(msg, msg_size, "the optimized graph: %s", why);
        } else if (o == PC_PROP_SKIP) {
            *kind = k;
            snprintf(msg, msg_size, "the optimized graph: %s", why);
        }
    }
    pc_ort_result_free(&r);
    return o;
}

static pc_prop_outcome ort_final(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    if (!ctx->config || !ctx->config->oracle_ort) {
        snprintf(msg, msg_size, "ONNX Runtime oracle not enabled (--oracle ort)");
        return PC_PROP_SKIP;
    }
    const pc_model *m = ctx->original;
    const pc_case *c = ctx->kase;
    const pc_graph *g = m->graph;

    /* names of the graph inputs the case feeds, in graph order */
    uint32_t n_fed = 0;
    for (uint32_t i = 0; i < g->n_inputs; i++)
        n_fed += g->inputs[i]->initializer == NULL;
    if (n_fed != c->n_inputs) {
        snprintf(msg, msg_size,
                 "the case has %" PRIu32 " inputs but the graph %" PRIu32 " non-initializer inputs",
                 c->n_inputs, n_fed);
        return PC_PROP_ERROR;
    }
    const char **names = calloc(n_fed ? n_fed : 1, sizeof *names);
    if (!names) {
        snprintf(msg, msg_size, "out of memory");
        return PC_PROP_ERROR;
    }
    for (uint32_t i = 0, k = 0; i < g->n_inputs; i++)
        if (!g->inputs[i]->initializer) names[k++] = g->inputs[i]->name;

    pc_error err;
    uint8_t *bytes = NULL;
    size_t size = 0;
    const uint8_t *model = NULL;
    if (ctx->before == m && ctx->before_bytes) {
        model = ctx->before_bytes;
        size = ctx->before_size;
    } else if (pc_model_save_bytes(m, &bytes, &size, &err) == PC_OK) {
        model = bytes;
    } else {
        snprintf(msg, msg_size, "saving the original for ONNX Runtime failed: %s", err.message);
        free(names);
        return PC_PROP_ERROR;
    }
    pc_ort_result r;
    pc_status st = pc_ort_run(ctx->config->ort_dir, model, size, n_fed, names, c->inputs, &r, &err);
    free(bytes);
    if (st != PC_OK) {
        free(names);
        snprintf(msg, msg_size, "the ONNX Runtime oracle is unavailable: %s", err.message);
        return PC_PROP_ERROR;
    }

    pc_data **ref = NULL;
    pc_error ref_err;
    pc_status ref_st = pc_check_ref_outputs(ctx, m, &ref, &ref_err);
    pc_prop_outcome o;
    if (r.status == PC_ORT_UNSUPPORTED) {
        snprintf(msg, msg_size, "ONNX Runtime cannot be fed or read here: %s", r.message);
        o = PC_PROP_SKIP;
    } else if (r.status != PC_ORT_OK && ort_lacks_kernel(r.message)) {
        snprintf(msg, msg_size, "ONNX Runtime has no kernel for this model: %s", r.message);
        o = PC_PROP_SKIP;
    } else if (r.status != PC_ORT_OK) {
        /* our verifier accepted the model and ORT says it is wrong: one of the two is, so it is a finding */
        if (ref_st == PC_OK) {
            *kind = "ort-rejects";
            snprintf(msg, msg_size, "ONNX Runtime %s a model passcheck accepts and the reference runs: %s",
                     r.status == PC_ORT_REJECTED ? "refuses" : "cannot run", r.message);
            o = PC_PROP_FAIL;
        } else {
            snprintf(msg, msg_size, "neither ONNX Runtime (%s) nor the reference (%s) runs this model",
                     r.message, ref_err.message);
            o = PC_PROP_SKIP;
        }
    } else if (ref_st == PC_ERR_UNSUPPORTED) {
        snprintf(msg, msg_size, "the reference cannot run the original: %s", ref_err.message);
        o = PC_PROP_SKIP;
    } else if (ref_st != PC_OK) {
        *kind = "ref-fails";
        snprintf(msg, msg_size, "ONNX Runtime runs the original but the reference executor fails: %s",
                 ref_err.message);
        o = PC_PROP_FAIL;
    } else {
        o = pc_ort_compare_outputs(m, ref, &r, msg, msg_size, kind);
        if (o == PC_PROP_FAIL)
            o = pc_ort_explain(m, c->n_inputs, c->inputs, &r, ctx->stats ? &ctx->stats->ref_runs : NULL, msg,
                               msg_size, kind);
        if (o == PC_PROP_PASS) o = optimized_on_ort(ctx, n_fed, names, msg, msg_size, kind);
    }
    free(names);
    pc_ort_result_free(&r);
    return o;
}

const pc_property pc_prop_ort_oracle = {
    "ort-oracle",
    "the original graph on ONNX Runtime 1.30 agrees with the reference executor, and so does the optimized "
    "one "
    "where ORT runs its ops (--oracle ort; rtol 1e-4, atol 1e-5, integers exact)",
    NULL,
    ort_final,
};
