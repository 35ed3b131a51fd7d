/* idempotence (end to end): the optimized graph, reloaded and optimized again with the same options, comes
 * out byte-identical. On a difference the failure names the first step of the second run that changed the
 * bytes (its kind is that pass's name), found with the pipeline's after_pass hook. No exceptions:
 * partitioning keeps an existing assignment its EP still claims (core/ep/partition.c), so the choices layer
 * rules made survive the annotations they read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "properties/match.h"
#include "properties/property.h"

typedef struct rerun {
    uint8_t *prev; /* bytes after the previous step */
    size_t prev_size;
    uint64_t prev_fp;  /* and their pc_model_change_stamp: a step that keeps it changed nothing */
    const char *first; /* static name of the first step that changed the bytes */
    bool first_flag;   /* the changed flag that step reported */
    pc_status save_status;
    char save_message[256];
} rerun;

static const char *static_pass_name(const char *pass)
{
    const pc_pass_info *info = pc_pass_find(pass);
    if (info) return info->name;
    return strcmp(pass, "partition") == 0 ? "partition" : "pipeline";
}

static pc_status after_step(void *vctx, const char *pass, const char *provider, pc_model *model, bool changed,
                            pc_error *err)
{
    (void)provider;
    rerun *r = vctx;
    if (r->first || r->save_status != PC_OK) return PC_OK; /* stopped below */
    uint64_t fp = pc_model_change_stamp(model);
    if (fp == r->prev_fp) return PC_OK;
    r->prev_fp = fp;
    uint8_t *bytes = NULL;
    size_t size = 0;
    pc_error serr;
    if (pc_model_save_bytes(model, &bytes, &size, &serr) != PC_OK) {
        r->save_status = serr.status;
        snprintf(r->save_message, sizeof r->save_message, "after %.60s: %.180s", pass, serr.message);
        return pc_error_set(err, PC_ERR_CHECK_FAILED, "stop");
    }
    if (size != r->prev_size || memcmp(bytes, r->prev, size) != 0) {
        r->first = static_pass_name(pass);
        r->first_flag = changed;
    }
    free(r->prev);
    r->prev = bytes;
    r->prev_size = size;
    /* The first change decides: stop there. So every step that ran left the graph the checked run ended
     * with, and the second run needs no verifier of its own. */
    return r->first ? pc_error_set(err, PC_ERR_CHECK_FAILED, "stop") : PC_OK;
}

static pc_prop_outcome idempotence_final(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    pc_model *m = NULL;
    pc_error err;
    if (pc_check_after_copy(ctx, &m, &err) != PC_OK) {
        snprintf(msg, msg_size, "reloading the optimized graph: %s", err.message);
        return PC_PROP_ERROR;
    }
    rerun r = {0};
    pc_prop_outcome o = PC_PROP_PASS;
    /* the pipeline infers shapes before its first pass; do it here so a change there is not blamed on that
     * pass */
    if (pc_graph_infer_shapes(m->graph, &err) != PC_OK) {
        *kind = "shape-inference";
        snprintf(msg, msg_size, "shape inference fails on the optimized graph: %s: %s",
                 pc_status_name(err.status), err.message);
        pc_model_free(m);
        return PC_PROP_FAIL;
    }
    if (pc_model_save_bytes(m, &r.prev, &r.prev_size, &err) != PC_OK) {
        snprintf(msg, msg_size, "saving the reloaded graph: %s", err.message);
        pc_model_free(m);
        return PC_PROP_ERROR;
    }
    r.prev_fp = pc_model_change_stamp(m);
    if (r.prev_size != ctx->after_size || memcmp(r.prev, ctx->after_bytes, r.prev_size) != 0) {
        *kind = "shape-inference";
        snprintf(msg, msg_size,
                 "shape inference on the optimized graph changes it: a pass left types or shapes "
                 "that inference would fill in or correct");
        o = PC_PROP_FAIL;
        goto done;
    }
    pc_status st = match_optimize_like_case(ctx, m, after_step, &r, false, &err);
    if (r.save_status != PC_OK) {
        snprintf(msg, msg_size, "saving during the second run: %s", r.save_message);
        o = PC_PROP_ERROR;
        goto done;
    }
    if (st != PC_OK && !r.first) {
        *kind = "pipeline-failed";
        snprintf(msg, msg_size, "optimizing the optimized graph again failed: %s: %s", pc_status_name(st),
                 err.message);
        o = PC_PROP_FAIL;
        goto done;
    }
    if (r.first) {
        *kind = r.first;
        snprintf(msg, msg_size,
                 "optimizing the optimized graph again changes it: the first step that changed it "
                 "is '%s' (which reported %s)",
                 r.first, r.first_flag ? "a change" : "no change");
        o = PC_PROP_FAIL;
    }
done:
    free(r.prev);
    pc_model_free(m);
    return o;
}

const pc_property pc_prop_idempotence = {
    "idempotence",
    "optimizing the optimized graph again changes nothing (names the first pass that does)",
    NULL,
    idempotence_final,
};
