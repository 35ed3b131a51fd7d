/* annotations: through levels 0/1 every node keeps its `layer_ann`, every new node carries the annotation of
 * the node it derives from, and no node gains an annotation it had no source for; partitioning honours the
 * layer rules and leaves no annotation behind.
 *
 * Which EP a rule pins an annotation to is decided by the independent layer-rule oracle
 * (properties/oracles/layer_rules_oracle.h, written from docs/ep.md), never by core's pc_layer_rules_match: a
 * precedence or matching bug in core would otherwise change the partitioner and this check together.
 *
 * Where a new node comes from: the source a pass declared in its name ("<source>/<op>_pc<N>",
 * pc_pass_add_node) when that node exists, else the node it replaced under the same name (an op or domain
 * change), else its neighbourhood — the before-nodes sharing a value with it, plus the nodes the pass removed
 * or changed. With a declared or replaced source the annotation must be equal; with a neighbourhood it must
 * be one of theirs, and when they all carry the same one it must be that one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "properties/match.h"
#include "properties/oracles/capability_oracle.h"
#include "properties/oracles/layer_rules_oracle.h"
#include "properties/property.h"

enum { PC_MAX_CHECK_EPS = 64 };

static const char *ann_or_none(const char *a)
{
    return a ? a : "(none)";
}

/* Does any node of g (or of its subgraphs) still carry an annotation? Returns it. */
static const pc_node *find_annotated(const pc_graph *g)
{
    for (const pc_node *n = g->first; n; n = n->next) {
        if (pc_node_annotation(n)) return n;
        for (uint32_t a = 0; a < n->n_attrs; a++) {
            const pc_attr *at = &n->attrs[a];
            const pc_node *x = at->type == PC_ATTR_GRAPH && at->g ? find_annotated(at->g) : NULL;
            for (size_t k = 0; !x && at->type == PC_ATTR_GRAPHS && k < at->n; k++)
                x = find_annotated(at->graphs[k]);
            if (x) return x;
        }
    }
    return NULL;
}

/* Levels 0/1: the derivation rules above. */
static pc_prop_outcome check_derivations(const node_match *m, const char *pass, char *msg, size_t msg_size,
                                         const char **kind)
{
    char l1[160], l2[160];
    for (uint32_t i = 0; i < m->n_after; i++) {
        const pc_node *a = m->after[i];
        const char *ann = pc_node_annotation(a);
        int32_t b = m->after_to_before[i];
        if (b >= 0) {
            const char *was = pc_node_annotation(m->before[b]);
            if (!match_str_eq(was, ann)) {
                *kind = was && !ann ? "dropped" : "changed";
                snprintf(msg, msg_size, "%s: node %s had annotation '%s' before and '%s' after", pass,
                         match_node_label(a, l1, sizeof l1), ann_or_none(was), ann_or_none(ann));
                return PC_PROP_FAIL;
            }
            continue;
        }
        /* a new node: its declared source, else the node it replaced */
        int32_t sb, sa;
        const pc_node *src = NULL;
        if (match_declared_source(m, i, &sb, &sa))
            src = sb >= 0 ? m->before[sb] : m->after[sa];
        else if (m->after_replaces[i] >= 0)
            src = m->before[m->after_replaces[i]];
        if (src) {
            const char *want = pc_node_annotation(src);
            if (!match_str_eq(want, ann)) {
                *kind = want && !ann ? "dropped" : want ? "changed" : "gained";
                snprintf(msg, msg_size,
                         "%s: new node %s derives from %s with annotation '%s' but carries '%s'", pass,
                         match_node_label(a, l1, sizeof l1), match_node_label(src, l2, sizeof l2),
                         ann_or_none(want), ann_or_none(ann));
                return PC_PROP_FAIL;
            }
            continue;
        }
        /* the neighbourhood: adjacent before-nodes, and every removed or changed one */
        bool any = false, allowed = ann == NULL, uniform = true;
        const char *common = NULL;
        for (uint32_t j = 0; j < m->n_before; j++) {
            const pc_node *x = m->before[j];
            if (!match_nodes_adjacent(x, a) && m->before_kept[j] && !m->before_changed[j]) continue;
            const char *xa = pc_node_annotation(x);
            if (!any)
                common = xa;
            else if (!match_str_eq(common, xa))
                uniform = false;
            any = true;
            if (ann && match_str_eq(xa, ann)) allowed = true;
        }
        if (!allowed) {
            *kind = "gained";
            snprintf(msg, msg_size,
                     "%s: new node %s carries annotation '%s', which no node it could derive from has", pass,
                     match_node_label(a, l1, sizeof l1), ann);
            return PC_PROP_FAIL;
        }
        if (any && uniform && !match_str_eq(common, ann)) {
            *kind = common ? "dropped" : "gained";
            snprintf(msg, msg_size,
                     "%s: new node %s carries annotation '%s' but every node it could derive from has '%s'",
                     pass, match_node_label(a, l1, sizeof l1), ann_or_none(ann), ann_or_none(common));
            return PC_PROP_FAIL;
        }
    }
    return PC_PROP_PASS;
}

static int32_t ep_index(const pc_check_ctx *ctx, const char *name)
{
    for (uint32_t j = 0; name && j < ctx->n_eps; j++)
        if (strcmp(ctx->eps[j]->name, name) == 0) return (int32_t)j;
    return -1;
}

static pc_prop_outcome check_pins(const pc_check_ctx *ctx, const node_match *m, const pc_lro_rules *rules,
                                  char *msg, size_t msg_size, const char **kind);

/* Partitioning: a node pinned by a rule to EP X lands on X when X claims it, and otherwise on an EP after X
 * in priority order (the pin is released after X's turn; earlier EPs never see the node). Checked on the
 * nodes that survive partitioning under their name; the layout transformer's new Transposes are left to
 * ep-assignment. */
static pc_prop_outcome check_partition(const pc_check_ctx *ctx, const node_match *m, char *msg,
                                       size_t msg_size, const char **kind)
{
    char l1[160];
    const pc_node *left = find_annotated(ctx->after->graph);
    if (left) {
        *kind = "annotation-left";
        snprintf(msg, msg_size, "partition: node %s still carries annotation '%s' after partitioning",
                 match_node_label(left, l1, sizeof l1), pc_node_annotation(left));
        return PC_PROP_FAIL;
    }
    if (!ctx->rules) return PC_PROP_PASS;
    /* which EP a rule pins an annotation to: the independent oracle, not core's matcher */
    const char *names[PC_MAX_CHECK_EPS];
    if (ctx->n_eps > PC_MAX_CHECK_EPS) {
        snprintf(msg, msg_size, "partition: %u EPs, the layer-rule oracle takes at most %d", ctx->n_eps,
                 PC_MAX_CHECK_EPS);
        return PC_PROP_SKIP;
    }
    for (uint32_t j = 0; j < ctx->n_eps; j++)
        names[j] = ctx->eps[j]->name;
    pc_lro_rules *rules = NULL;
    pc_error err;
    if (pc_lro_parse(ctx->kase->layer_assignment, names, ctx->n_eps, &rules, &err) != PC_OK) {
        *kind = "rules-disagree";
        snprintf(msg, msg_size,
                 "partition: core accepted the layer assignment '%s', the layer-rule oracle rejects it: %s",
                 ctx->kase->layer_assignment ? ctx->kase->layer_assignment : "", err.message);
        return PC_PROP_FAIL;
    }
    pc_prop_outcome o = check_pins(ctx, m, rules, msg, msg_size, kind);
    pc_lro_free(rules);
    return o;
}

static pc_prop_outcome check_pins(const pc_check_ctx *ctx, const node_match *m, const pc_lro_rules *rules,
                                  char *msg, size_t msg_size, const char **kind)
{
    char l1[160];
    for (uint32_t i = 0; i < m->n_after; i++) {
        const pc_node *a = m->after[i];
        int32_t b = m->after_to_before[i] >= 0 ? m->after_to_before[i] : m->after_replaces[i];
        if (b < 0) continue;
        const char *ann = pc_node_annotation(m->before[b]);
        if (a->graph != ctx->after->graph) {
            /* body nodes are not offered to EPs (docs/ep.md): whatever their annotation, they run where the
             * node owning the body runs */
            const pc_node *own = a->graph->owner;
            if (own && !match_str_eq(own->ep, a->ep)) {
                *kind = "body-ep";
                snprintf(
                    msg, msg_size,
                    "partition: node %s of a body of '%s' runs on '%s', its owner on '%s' (body nodes run "
                    "where their owner runs)",
                    match_node_label(a, l1, sizeof l1), own->name ? own->name : "", a->ep ? a->ep : "(none)",
                    own->ep ? own->ep : "(none)");
                return PC_PROP_FAIL;
            }
            continue;
        }
        int32_t p = ep_index(ctx, pc_lro_ep_for(rules, ann));
        if (p < 0) continue;
        const pc_ep *pin = ctx->eps[p];
        int32_t got = ep_index(ctx, a->ep);
        char why[256] = "";
        bool claims = pc_capo_claims(pin, a); /* the independent oracle decides; core words the reason */
        if (!claims && pc_ep_claims_node(pin, a, why, sizeof why))
            snprintf(why, sizeof why, "core's capability check claims it, docs/ep.md's rules do not");
        if (claims && got != p) {
            *kind = "rule-ignored";
            snprintf(msg, msg_size,
                     "partition: node %s (annotation '%s') is pinned to EP '%s', which claims it, but runs "
                     "on '%s'",
                     match_node_label(a, l1, sizeof l1), ann, pin->name, a->ep ? a->ep : "(none)");
            return PC_PROP_FAIL;
        }
        if (!claims && got >= 0 && got < p) {
            *kind = "rule-ignored";
            snprintf(msg, msg_size,
                     "partition: node %s (annotation '%s') is pinned to EP '%s', which does not claim it "
                     "(%s), but "
                     "went to '%s', which comes before it and so must not see it",
                     match_node_label(a, l1, sizeof l1), ann, pin->name, why, a->ep);
            return PC_PROP_FAIL;
        }
    }
    return PC_PROP_PASS;
}

static pc_prop_outcome annotations_per_pass(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    node_match m;
    pc_error err;
    if (match_build(ctx->before->graph, ctx->after->graph, &m, &err) != PC_OK) {
        snprintf(msg, msg_size, "%s", err.message);
        return PC_PROP_ERROR;
    }
    pc_prop_outcome o;
    if (strcmp(ctx->pass, "partition") == 0) {
        o = check_partition(ctx, &m, msg, msg_size, kind);
    } else if (ctx->level <= PC_LEVEL_EXTENDED) {
        o = check_derivations(&m, ctx->pass, msg, msg_size, kind);
    } else {
        /* after partitioning nothing may bring an annotation back */
        const pc_node *x = find_annotated(ctx->after->graph);
        o = PC_PROP_PASS;
        if (x) {
            char l1[160];
            *kind = "gained";
            snprintf(msg, msg_size, "%s: node %s carries annotation '%s' after partitioning removed them all",
                     ctx->pass, match_node_label(x, l1, sizeof l1), pc_node_annotation(x));
            o = PC_PROP_FAIL;
        }
    }
    match_free(&m);
    return o;
}

/* End to end: no annotation the original lacked; none at all once partitioned. */
static pc_prop_outcome annotations_final(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    char l1[160];
    const pc_graph *g = ctx->after->graph;
    if (ctx->config && ctx->config->level >= PC_LEVEL_LAYOUT) {
        const pc_node *x = find_annotated(g);
        if (x) {
            *kind = "annotation-left";
            snprintf(msg, msg_size,
                     "the optimized graph is partitioned but node %s still carries annotation '%s'",
                     match_node_label(x, l1, sizeof l1), pc_node_annotation(x));
            return PC_PROP_FAIL;
        }
        return PC_PROP_PASS;
    }
    for (const pc_node *n = g->first; n; n = n->next) {
        const char *ann = pc_node_annotation(n);
        if (!ann) continue;
        bool found = false;
        for (const pc_node *o = ctx->original->graph->first; o && !found; o = o->next)
            found = match_str_eq(pc_node_annotation(o), ann);
        if (!found) {
            *kind = "gained";
            snprintf(msg, msg_size,
                     "node %s of the optimized graph carries annotation '%s', which the original has "
                     "on no node",
                     match_node_label(n, l1, sizeof l1), ann);
            return PC_PROP_FAIL;
        }
    }
    return PC_PROP_PASS;
}

const pc_property pc_prop_annotations = {
    "annotations",
    "levels 0/1 keep layer_ann and give new nodes their source's; partitioning honours the layer rules and "
    "removes "
    "every annotation",
    annotations_per_pass,
    annotations_final,
};
