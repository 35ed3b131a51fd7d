/* ep-assignment: once partitioned, every node runs on an EP of the case that claims it, and every node in the
 * internal NHWC domain on an NHWC EP; a level-2+ pass keeps the EP of every node it keeps, gives every new
 * node its source's EP, and touches the nodes of the EP it runs for only (pc_check_ctx.provider; rewiring a
 * foreign node's inputs is allowed, since removing a producer forces it). Sources are found as for
 * annotations (prop_annotations.c). */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "properties/match.h"
#include "properties/oracles/capability_oracle.h"
#include "properties/property.h"

static const pc_ep *ep_find(const pc_check_ctx *ctx, const char *name)
{
    for (uint32_t j = 0; name && j < ctx->n_eps; j++)
        if (strcmp(ctx->eps[j]->name, name) == 0) return ctx->eps[j];
    return NULL;
}

/* Every main-graph node assigned to a claiming EP of the case; NHWC-domain nodes to NHWC EPs. */
static pc_prop_outcome check_assigned(const pc_check_ctx *ctx, const pc_graph *g, char *msg, size_t msg_size,
                                      const char **kind)
{
    char l1[160], why[256];
    for (const pc_node *n = g->first; n; n = n->next) {
        if (!n->ep) {
            *kind = "unassigned";
            snprintf(msg, msg_size, "%s: node %s has no EP after partitioning", ctx->pass,
                     match_node_label(n, l1, sizeof l1));
            return PC_PROP_FAIL;
        }
        const pc_ep *ep = ep_find(ctx, n->ep);
        if (!ep) {
            *kind = "unknown-ep";
            snprintf(msg, msg_size, "%s: node %s is assigned to '%s', which is not one of the case's EPs",
                     ctx->pass, match_node_label(n, l1, sizeof l1), n->ep);
            return PC_PROP_FAIL;
        }
        /* the verdict is the independent oracle's; core's capability check only words the reason */
        if (!pc_capo_claims(ep, n)) {
            if (pc_ep_claims_node(ep, n, why, sizeof why))
                snprintf(why, sizeof why, "core's capability check claims it, docs/ep.md's rules do not");
            *kind = "unclaimed";
            snprintf(msg, msg_size, "%s: node %s is assigned to EP '%s', which cannot run it: %s", ctx->pass,
                     match_node_label(n, l1, sizeof l1), ep->name, why);
            return PC_PROP_FAIL;
        }
        if (strcmp(n->domain, PC_NHWC_DOMAIN) == 0 && ep->layout != PC_LAYOUT_NHWC) {
            *kind = "nhwc-domain";
            snprintf(msg, msg_size, "%s: node %s is in %s but runs on EP '%s', whose layout is not NHWC",
                     ctx->pass, match_node_label(n, l1, sizeof l1), PC_NHWC_DOMAIN, ep->name);
            return PC_PROP_FAIL;
        }
    }
    return PC_PROP_PASS;
}

/* Outputs, attributes or op differ (inputs may be rewired). */
static bool node_rewritten(const pc_node *b, const pc_node *a)
{
    if (strcmp(b->op_type, a->op_type) != 0 || !match_str_eq(b->domain, a->domain) ||
        b->n_outputs != a->n_outputs || b->n_attrs != a->n_attrs)
        return true;
    for (uint32_t i = 0; i < b->n_outputs; i++) {
        const pc_value *x = b->outputs[i], *y = a->outputs[i];
        if ((x == NULL) != (y == NULL) || (x && strcmp(x->name, y->name) != 0)) return true;
    }
    /* attributes: match_node_same compares them with the inputs; compare a copy-free subset here */
    for (uint32_t i = 0; i < b->n_attrs; i++) {
        const pc_attr *x = &b->attrs[i], *y = &a->attrs[i];
        if (!match_str_eq(x->name, y->name) || x->type != y->type || x->i != y->i || x->n != y->n ||
            memcmp(&x->f, &y->f, sizeof x->f) != 0)
            return true;
        if (x->type == PC_ATTR_INTS && x->n && memcmp(x->ints, y->ints, x->n * sizeof *x->ints) != 0)
            return true;
        if (x->type == PC_ATTR_FLOATS && x->n && memcmp(x->floats, y->floats, x->n * sizeof *x->floats) != 0)
            return true;
    }
    return false;
}

/* Notes one touched node's EP; false when a second EP shows up. */
static bool note_ep(const char **seen, const pc_node **seen_node, const pc_node *n)
{
    if (!n->ep) return true;
    if (!*seen) {
        *seen = n->ep;
        *seen_node = n;
        return true;
    }
    return strcmp(*seen, n->ep) == 0;
}

/* The other side of a foreign-ep-modified message: the EP the run was for, or the first node it touched. */
static const char *touched_text(const pc_check_ctx *ctx, const pc_node *seen_node, const char *seen,
                                char *buf, size_t size)
{
    char l[160];
    if (!seen_node)
        snprintf(buf, size, "the run was for EP '%s'", ctx->provider ? ctx->provider : seen);
    else
        snprintf(buf, size, "touched node %s of EP '%s' in one run", match_node_label(seen_node, l, sizeof l),
                 seen);
    return buf;
}

static pc_prop_outcome check_level2(const pc_check_ctx *ctx, const node_match *m, char *msg, size_t msg_size,
                                    const char **kind)
{
    char l1[160], l2[320];
    /* a run for EP P touches P's nodes only; a pass run without a provider (a test calling it directly) may
     * touch one EP's nodes, whichever that is */
    const char *seen = ctx->provider;
    const pc_node *seen_node = NULL;
    for (uint32_t j = 0; j < m->n_before; j++) {
        if (m->before_kept[j]) continue;
        if (!note_ep(&seen, &seen_node, m->before[j])) {
            *kind = "foreign-ep-modified";
            snprintf(msg, msg_size, "%s: removed node %s of EP '%s', but %s", ctx->pass,
                     match_node_label(m->before[j], l1, sizeof l1), m->before[j]->ep,
                     touched_text(ctx, seen_node, seen, l2, sizeof l2));
            return PC_PROP_FAIL;
        }
    }
    for (uint32_t i = 0; i < m->n_after; i++) {
        const pc_node *a = m->after[i];
        int32_t b = m->after_to_before[i];
        if (b >= 0) {
            const pc_node *bn = m->before[b];
            if (!match_str_eq(bn->ep, a->ep)) {
                *kind = "reassigned";
                snprintf(msg, msg_size, "%s: node %s moved from EP '%s' to '%s'", ctx->pass,
                         match_node_label(a, l1, sizeof l1), bn->ep ? bn->ep : "(none)",
                         a->ep ? a->ep : "(none)");
                return PC_PROP_FAIL;
            }
            if (node_rewritten(bn, a) && !note_ep(&seen, &seen_node, bn)) {
                *kind = "foreign-ep-modified";
                snprintf(msg, msg_size, "%s: rewrote node %s of EP '%s', but %s", ctx->pass,
                         match_node_label(a, l1, sizeof l1), bn->ep,
                         touched_text(ctx, seen_node, seen, l2, sizeof l2));
                return PC_PROP_FAIL;
            }
            continue;
        }
        int32_t sb, sa;
        const pc_node *src = NULL;
        if (match_declared_source(m, i, &sb, &sa))
            src = sb >= 0 ? m->before[sb] : m->after[sa];
        else if (m->after_replaces[i] >= 0)
            src = m->before[m->after_replaces[i]];
        if (src && !match_str_eq(src->ep, a->ep)) {
            *kind = "ep-not-inherited";
            snprintf(msg, msg_size, "%s: new node %s derives from %s on EP '%s' but is on '%s'", ctx->pass,
                     match_node_label(a, l1, sizeof l1), match_node_label(src, l2, sizeof l2),
                     src->ep ? src->ep : "(none)", a->ep ? a->ep : "(none)");
            return PC_PROP_FAIL;
        }
        if (!src) {
            /* no declared source: its EP must be the one of the nodes around it that the pass touched */
            bool allowed = false;
            for (uint32_t j = 0; j < m->n_before && !allowed; j++) {
                const pc_node *x = m->before[j];
                if (!match_nodes_adjacent(x, a) && m->before_kept[j] && !m->before_changed[j]) continue;
                allowed = match_str_eq(x->ep, a->ep);
            }
            if (!allowed) {
                *kind = "ep-not-inherited";
                snprintf(msg, msg_size,
                         "%s: new node %s is on EP '%s', which no node it could derive from has", ctx->pass,
                         match_node_label(a, l1, sizeof l1), a->ep ? a->ep : "(none)");
                return PC_PROP_FAIL;
            }
        }
        if (!note_ep(&seen, &seen_node, a)) {
            *kind = "foreign-ep-modified";
            snprintf(msg, msg_size, "%s: created node %s on EP '%s', but %s", ctx->pass,
                     match_node_label(a, l1, sizeof l1), a->ep,
                     touched_text(ctx, seen_node, seen, l2, sizeof l2));
            return PC_PROP_FAIL;
        }
    }
    return PC_PROP_PASS;
}

static pc_prop_outcome ep_per_pass(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    bool partition = strcmp(ctx->pass, "partition") == 0;
    if (!partition && ctx->level < PC_LEVEL_LAYOUT) return PC_PROP_PASS; /* nothing is assigned yet */
    if (!partition) {
        node_match m;
        pc_error err;
        if (match_build(ctx->before->graph, ctx->after->graph, &m, &err) != PC_OK) {
            snprintf(msg, msg_size, "%s", err.message);
            return PC_PROP_ERROR;
        }
        /* inheritance first: a new node without an EP is better explained by its source than as "unassigned"
         */
        pc_prop_outcome o = check_level2(ctx, &m, msg, msg_size, kind);
        match_free(&m);
        if (o != PC_PROP_PASS) return o;
    }
    return check_assigned(ctx, ctx->after->graph, msg, msg_size, kind);
}

/* Core's capability check (pc_ep_claims_node, which the partitioner asks) and the oracle agree on every node
 * of g for every EP of the case, and a refusal says why, naming the first rule that fails: a node core
 * wrongly refuses goes to a later EP, which check_assigned cannot see, and a wrong reason misleads whoever
 * reads the partitioner's error. */
static pc_prop_outcome check_claims_agree(const pc_check_ctx *ctx, const pc_graph *g, const char *which,
                                          char *msg, size_t msg_size, const char **kind)
{
    char l1[160], why[256];
    for (const pc_node *n = g->first; n; n = n->next)
        for (uint32_t j = 0; j < ctx->n_eps; j++) {
            const pc_ep *ep = ctx->eps[j];
            why[0] = '\0';
            pc_capo_reason reason = pc_capo_decide(ep, n);
            bool core = pc_ep_claims_node(ep, n, why, sizeof why), oracle = reason == PC_CAPO_CLAIMS;
            if (core != oracle) {
                *kind = "claims-disagree";
                snprintf(
                    msg, msg_size,
                    "EP '%s' and node %s of the %s: core's capability check %s it, docs/ep.md's rules %s "
                    "it%s%s",
                    ep->name, match_node_label(n, l1, sizeof l1), which, core ? "claims" : "refuses",
                    oracle ? "claim" : "refuse", core ? "" : ": ", core ? "" : why);
                return PC_PROP_FAIL;
            }
            if (!core && !why[0]) {
                *kind = "no-reason";
                snprintf(msg, msg_size, "EP '%s' refuses node %s of the %s without a reason", ep->name,
                         match_node_label(n, l1, sizeof l1), which);
                return PC_PROP_FAIL;
            }
            /* the reason the partitioner reports is the first rule that fails, by the oracle's reading */
            const char *phrase = pc_capo_reason_phrase(reason);
            if (!core && !strstr(why, phrase)) {
                *kind = "wrong-reason";
                snprintf(msg, msg_size,
                         "EP '%s' refuses node %s of the %s saying \"%s\"; docs/ep.md's first "
                         "failing rule is the one worded \"%s...\"",
                         ep->name, match_node_label(n, l1, sizeof l1), which, why, phrase);
                return PC_PROP_FAIL;
            }
        }
    return PC_PROP_PASS;
}

static pc_prop_outcome ep_final(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    pc_prop_outcome o = check_claims_agree(ctx, ctx->original->graph, "original", msg, msg_size, kind);
    if (o == PC_PROP_PASS)
        o = check_claims_agree(ctx, ctx->after->graph, "optimized graph", msg, msg_size, kind);
    if (o != PC_PROP_PASS) return o;
    if (!ctx->config || ctx->config->level < PC_LEVEL_LAYOUT) return PC_PROP_PASS;
    return check_assigned(ctx, ctx->after->graph, msg, msg_size, kind);
}

const pc_property pc_prop_ep_assignment = {
    "ep-assignment",
    "after partitioning every node runs on a claiming EP (NHWC-domain nodes on NHWC EPs); level 2+ passes "
    "give new "
    "nodes their source's EP and leave other EPs' nodes alone",
    ep_per_pass,
    ep_final,
};
