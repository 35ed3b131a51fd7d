/* determinism (end to end): a fresh copy of the original, optimized with the same options, gives the graph
 * the checked run produced, byte for byte (a second fresh copy classifies a mismatch). (Across --jobs is the
 * suite's business: each case is checked the same way whatever worker runs it, so this in-process check is
 * what decides.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "properties/match.h"
#include "properties/property.h"

static pc_status optimize_fresh(const pc_check_ctx *ctx, uint8_t **out, size_t *out_size, pc_error *err)
{
    pc_model *m = NULL;
    *out = NULL;
    /* a replica of the original, as the checked run's working copy was made */
    pc_status st = pc_model_clone(ctx->original, &m, err);
    /* no verifier between passes: a run that matches the checked one went through the graphs validity
     * checked, and one that does not is a failure whatever it went through */
    if (st == PC_OK) st = match_optimize_like_case(ctx, m, NULL, NULL, false, err);
    if (st == PC_OK) st = pc_model_save_bytes(m, out, out_size, err);
    pc_model_free(m);
    return st;
}

static size_t first_difference(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    size_t i = 0;
    while (i < na && i < nb && a[i] == b[i])
        i++;
    return i;
}

static pc_prop_outcome determinism_final(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    uint8_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    pc_error err;
    pc_prop_outcome o = PC_PROP_PASS;
    /* before_bytes is the original here (final stage). One fresh run that matches the checked run settles
     * it; only a mismatch pays for a second fresh run, which tells nondeterminism (the fresh runs differ)
     * from a hook or shared state changing the checked run (they agree with each other). */
    if (optimize_fresh(ctx, &a, &na, &err) != PC_OK) goto failed;
    if (na == ctx->after_size && memcmp(a, ctx->after_bytes, na) == 0) goto done;
    if (optimize_fresh(ctx, &b, &nb, &err) != PC_OK) goto failed;
    if (na != nb || memcmp(a, b, na) != 0) {
        *kind = "runs-differ";
        snprintf(msg, msg_size,
                 "two runs on fresh copies of the original give different graphs (%zu vs %zu bytes, "
                 "first difference at byte %zu)",
                 na, nb, first_difference(a, na, b, nb));
    } else {
        *kind = "differs-from-checked-run";
        snprintf(msg, msg_size,
                 "a run on a fresh copy differs from the checked run (%zu vs %zu bytes, first "
                 "difference at byte %zu): the after_pass hook or shared state changes the result",
                 na, ctx->after_size, first_difference(a, na, ctx->after_bytes, ctx->after_size));
    }
    o = PC_PROP_FAIL;
    goto done;
failed:
    *kind = "pipeline-failed";
    snprintf(msg, msg_size,
             "optimizing a fresh copy of the original failed where the checked run succeeded: %s: %s",
             pc_status_name(err.status), err.message);
    o = PC_PROP_FAIL;
done:
    free(a);
    free(b);
    return o;
}

const pc_property pc_prop_determinism = {
    "determinism",
    "the same input optimized twice gives byte-identical output (and the same as the checked run)",
    NULL,
    determinism_final,
};
