/* alloc-failure (end to end): a fresh copy of the original is optimized again with its k-th model allocation
 * failing (the pc_mem OOM-injection seam), k drawn from the case among the allocations the checked run made
 * (each k in turn when the run made few: ALLOC_EXHAUSTIVE_MAX). The pipeline must report the failure
 * as out-of-memory, or succeed with the checked run's graph when the failed allocation was one it could do
 * without. SQLite's OOM testing, per case: every generated graph tries another error path of the passes, and
 * a pass that ignores a failed status (`st != PC_OK` tested as `st < PC_OK`, a loop continuing past an error)
 * either crashes here, returns some other status or returns a different graph. Leaks on those paths are
 * LeakSanitizer's (the sanitizer build of ci/test). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "properties/match.h"
#include "properties/property.h"

/* One fresh optimization with model allocation k failing. */
static pc_prop_outcome fail_one(pc_check_ctx *ctx, uint64_t k, char *msg, size_t msg_size, const char **kind)
{
    pc_model *m = NULL;
    pc_prop_outcome loaded = match_copy_original(ctx, &m, msg, msg_size, kind);
    if (loaded != PC_PROP_PASS) return loaded;
    pc_error err;
    /* as the checked run did before counting: its allocation k is this run's */
    if (pc_graph_infer_shapes(m->graph, &err) != PC_OK) {
        *kind = "pipeline-failed";
        snprintf(msg, msg_size, "shape inference on a fresh copy of the original failed: %s: %s",
                 pc_status_name(err.status), err.message);
        pc_model_free(m);
        return PC_PROP_FAIL;
    }
    uint64_t start = m->mem.n_allocs;
    m->mem.fail_after = start + k;
    /* the verifier stays on: a pass that swallows the failure can leave use lists the saved bytes do not
     * show */
    pc_status st = match_optimize_like_case(ctx, m, NULL, NULL, true, &err);
    bool hit = m->mem.failed;
    pc_prop_outcome o = PC_PROP_PASS;
    if (st == PC_OK && !hit) {
        /* k is at most the checked run's count: a fresh run that never got there counts differently, and
         * the injection points this property picks would not be the ones it means */
        *kind = "count-differs";
        snprintf(msg, msg_size,
                 "a fresh optimization of the original made %llu model allocations, the checked run %llu: "
                 "allocation %llu was never reached",
                 (unsigned long long)(m->mem.n_allocs - start), (unsigned long long)ctx->pipeline_allocs,
                 (unsigned long long)k);
        o = PC_PROP_ERROR;
    } else if (st == PC_OK && hit) {
        /* succeeding is right only when the result does not depend on the allocation that failed */
        uint8_t *bytes = NULL;
        size_t size = 0;
        pc_error serr;
        m->mem.fail_after = 0;
        if (pc_model_save_bytes(m, &bytes, &size, &serr) != PC_OK) {
            *kind = "save-failed";
            snprintf(msg, msg_size, "saving the result failed: %s: %s", pc_status_name(serr.status),
                     serr.message);
            o = PC_PROP_ERROR;
        } else if (size != ctx->after_size || memcmp(bytes, ctx->after_bytes, size) != 0) {
            *kind = "swallowed";
            snprintf(msg, msg_size,
                     "model allocation %llu of %llu failed and the pipeline still returned ok, with a graph "
                     "that differs from the checked run's (%zu vs %zu bytes): a pass ignored the failure",
                     (unsigned long long)k, (unsigned long long)ctx->pipeline_allocs, size, ctx->after_size);
            o = PC_PROP_FAIL;
        }
        free(bytes);
    } else if (st != PC_OK && !hit) {
        *kind = "pipeline-failed";
        snprintf(
            msg, msg_size,
            "optimizing a fresh copy of the original failed before the injected failure (allocation %llu "
            "of %llu) where the checked run succeeded: %s: %s",
            (unsigned long long)k, (unsigned long long)ctx->pipeline_allocs, pc_status_name(err.status),
            err.message);
        o = PC_PROP_FAIL;
    } else if (st != PC_OK && err.status != PC_ERR_NOMEM) {
        *kind = "wrong-status";
        snprintf(msg, msg_size,
                 "model allocation %llu of %llu failed and the pipeline reported %s, not out-of-memory: %s",
                 (unsigned long long)k, (unsigned long long)ctx->pipeline_allocs, pc_status_name(err.status),
                 err.message);
        o = PC_PROP_FAIL;
    }
    pc_model_free(m);
    return o;
}

/* Small pipelines try every allocation; larger ones the point the fingerprint draws, so a replay fails the
 * same one — unless the config asks for every point (alloc_every: the shrinker's candidates, whose
 * fingerprints all differ). */
enum { ALLOC_EXHAUSTIVE_MAX = 16 };

static pc_prop_outcome alloc_failure_final(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    uint64_t n = ctx->pipeline_allocs;
    if (n == 0) return PC_PROP_PASS; /* nothing to fail */
    uint64_t every_max = ctx->config->alloc_every ? PC_ALLOC_EVERY_MAX
                         : ctx->config->alloc_one ? 0
                                                  : ALLOC_EXHAUSTIVE_MAX;
    if (n > every_max) {
        /* half the cases fail an allocation of a step that changed the graph (a rewrite's own error paths,
         * which a point drawn over the whole run seldom lands on), the other half any allocation */
        uint64_t h = pc_model_fingerprint(ctx->original), k = 1 + h % n;
        if ((h >> 40 & 1) && ctx->n_rewrite_ranges) {
            const uint64_t *range = ctx->rewrite_ranges[(h >> 20) % ctx->n_rewrite_ranges];
            k = range[0] + (h >> 44) % (range[1] - range[0] + 1);
        }
        return fail_one(ctx, k, msg, msg_size, kind);
    }
    pc_prop_outcome o = PC_PROP_PASS;
    for (uint64_t k = 1; k <= n && o == PC_PROP_PASS; k++)
        o = fail_one(ctx, k, msg, msg_size, kind);
    return o;
}

const pc_property pc_prop_alloc_failure = {
    "alloc-failure",
    "a fresh optimization with one model allocation failing (chosen by the case) reports out-of-memory, or "
    "succeeds with the checked run's graph",
    NULL,
    alloc_failure_final,
};
