/* rewrite-fired (end to end): every rewrite the case's canonical pattern units guarantee fired at least as
 * often as they guarantee it, and every near miss its near-miss units guarantee was reported for the
 * guaranteed reason at least as often (the model's PC_EXPECT_FIRED_KEY metadata, gen.h, set by the patterns
 * family). A pass that silently stops firing changes no graph and breaks no numerics; only this property sees
 * it, and the near misses are what the coverage table counts. Kinds
 * whose pass the run's level does not reach are not judged; with --ep overriding the case's EPs nothing is (a
 * level-2 fusion may rightly not fire on other EPs). */
#include <stdio.h>
#include <string.h>

#include "properties/property.h"

/* The level a kind's pass runs at ("partition": the layout level). */
static int kind_level(pc_rewrite_kind k)
{
    const pc_pass_info *p = pc_pass_find(pc_rewrite_kind_pass(k));
    return p ? p->level : PC_LEVEL_LAYOUT;
}

/* Appends " kind (got of want)" (near: "kind~reason"), opening the message with its header on the first. */
static void note_short(char *msg, size_t msg_size, size_t *used, bool *any, pc_rewrite_kind k, int reason,
                       uint32_t got, uint32_t want)
{
    if (!*any)
        *used = (size_t)snprintf(msg, msg_size,
                                 "rewrites that did not fire (or near misses not reported) as the case's "
                                 "pattern units guarantee:");
    *any = true;
    if (*used < msg_size)
        *used += (size_t)snprintf(msg + *used, msg_size - *used, " %s%s%s (%u of %u)",
                                  pc_rewrite_kind_name(k), reason < 0 ? "" : "~",
                                  reason < 0 ? "" : pc_miss_reason_name((pc_miss_reason)reason), got, want);
}

static pc_prop_outcome rewrite_fired_final(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    const pc_case *c = ctx->kase;
    pc_expect_fired want;
    bool present;
    pc_error err;
    if (pc_expect_fired_read(ctx->original, &want, &present, &err) != PC_OK) {
        snprintf(msg, msg_size, "%s", err.message);
        *kind = "bad-metadata";
        return PC_PROP_ERROR;
    }
    if (!present) return PC_PROP_PASS; /* nothing guaranteed: trivially holds */
    if (ctx->config->ep_override) {
        snprintf(msg, msg_size, "the case's guarantees hold for its own EPs (%s), not for --ep %s",
                 c->ep_list ? c->ep_list : "cpu", ctx->config->ep_override);
        return PC_PROP_SKIP;
    }
    if (!ctx->rewrites) {
        snprintf(msg, msg_size, "the runner gave no rewrite counts");
        return PC_PROP_ERROR;
    }
    size_t used = 0;
    bool any = false;
    pc_rewrite_kind first = PC_RW_COUNT;
    for (int k = 0; k < PC_RW_COUNT; k++) {
        if (kind_level((pc_rewrite_kind)k) > ctx->config->level) continue;
        uint32_t got = ctx->rewrites->fired[k];
        if (want.fired[k] && got < want.fired[k]) {
            if (first == PC_RW_COUNT) first = (pc_rewrite_kind)k;
            note_short(msg, msg_size, &used, &any, (pc_rewrite_kind)k, -1, got, want.fired[k]);
        }
        for (int r = 0; r < PC_MISS_COUNT; r++) {
            got = ctx->rewrites->near_reason[k][r];
            if (!want.near[k][r] || got >= want.near[k][r]) continue;
            if (first == PC_RW_COUNT) first = (pc_rewrite_kind)k;
            note_short(msg, msg_size, &used, &any, (pc_rewrite_kind)k, r, got, want.near[k][r]);
        }
    }
    if (first == PC_RW_COUNT) return PC_PROP_PASS;
    /* the signature names the first kind: "rewrite-fired@end-to-end/neg_neg_removed" */
    const char *name = pc_rewrite_kind_name(first), *slash = strchr(name, '/');
    *kind = slash ? slash + 1 : name;
    return PC_PROP_FAIL;
}

const pc_property pc_prop_rewrite_fired = {
    "rewrite-fired",
    "the rewrites (and near misses) a case's pattern units guarantee (patterns family) happened at least "
    "that "
    "often",
    NULL,
    rewrite_fired_final,
};
