/* fusion-sources: a rewrite never merges nodes of different layers. Before partitioning (levels 0/1) every
 * node a fused node came from carries the same layer_ann; after it (level 2+, and level-0/1 clean-ups run per
 * EP) the same EP. The annotations and ep-assignment properties check that a new node carries its declared
 * source's tag; this checks that all its sources agree.
 *
 * The nodes a node came from (its sources), for every after-node A that the pass created (no before-node of
 * its identity with the same op, properties/match.h; core's fusions all make their result with
 * pc_pass_add_node), and every kept node that takes over a removed node's output name (an elimination hands a
 * graph output to the producer: it must be of the same layer).
 *   1. the node A replaced under its name (an op or domain change) and the source it declared through its
 * name
 *      ("<source>/<op>_pc<N>");
 *   2. every removed before-node that made a value (by name) A now makes — the tail of the fused region;
 *   3. every removed before-node all of whose outputs were read, in the graph before the pass, only by the
 *      removed sources of 1 and 2 (a kept source — the Transpose optimizer's pushed-through node — was not
 *      fused away, so what fed it is not merged) (at least one reader, none a graph output or a subgraph's
 * reference) — the inner nodes feeding the tail and gone with it (Reshape -> Reshape: the first). One step
 * only: going further takes in nodes another rewrite of the same pass removed (a DQ -> Q pair upstream).
 * Removed nodes whose outputs still have readers outside the region (or none: dead code) are not sources of
 * A. (Eliminations and Transposes were exempt until the level-0/1 runs were scoped per annotation group,
 * issue 14: judged, they showed a Transpose merged across groups and a graph output handed across them.) The
 * partitioning step itself is not judged (it is where annotations become EPs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "properties/match.h"
#include "properties/property.h"

typedef struct fs_ctx {
    const node_match *m;
    bool use_ep; /* compare EPs (after partitioning), else annotations */
} fs_ctx;

static const char *fs_tag(const fs_ctx *f, const pc_node *n)
{
    return f->use_ep ? n->ep : pc_node_annotation(n);
}

static int32_t fs_before_index(const node_match *m, const pc_node *n)
{
    for (uint32_t j = 0; j < m->n_before; j++)
        if (m->before[j] == n) return (int32_t)j;
    return -1;
}

/* Does after-node a make a value named like one of before-node b's outputs? */
static bool fs_makes_output_of(const pc_node *a, const pc_node *b)
{
    for (uint32_t i = 0; i < a->n_outputs; i++)
        for (uint32_t k = 0; a->outputs[i] && k < b->n_outputs; k++)
            if (b->outputs[k] && strcmp(a->outputs[i]->name, b->outputs[k]->name) == 0) return true;
    return false;
}

/* Rule 3 for removed before-node j: read, and read only by sources. */
static bool fs_feeds_only(const fs_ctx *f, const bool *src, uint32_t j)
{
    const pc_node *b = f->m->before[j];
    bool read = false;
    for (uint32_t k = 0; k < b->n_outputs; k++) {
        const pc_value *v = b->outputs[k];
        if (!v) continue;
        if (v->is_graph_output || v->n_subgraph_refs) return false;
        for (uint32_t u = 0; u < v->n_consumers; u++) {
            int32_t c = fs_before_index(f->m, v->consumers[u].node);
            if (c < 0 || !src[c]) return false;
            read = true;
        }
    }
    return read;
}

/* Fills src (n_before flags, then n_before of scratch) with after-node i's sources; returns how many. */
static uint32_t fs_sources(const fs_ctx *f, uint32_t i, bool *src)
{
    const node_match *m = f->m;
    const pc_node *a = m->after[i];
    memset(src, 0, m->n_before * sizeof *src);
    if (m->after_to_before[i] >= 0) src[m->after_to_before[i]] = true;
    if (m->after_replaces[i] >= 0) src[m->after_replaces[i]] = true;
    int32_t sb, sa;
    /* the source a name declares is the one the node was made from: for a node the pass created. A kept node
     * was made by an earlier step (the layout transformer names its Transposes after the op they wrap, and
     * partitioning may give them another EP): this pass answers only for what it handed the node */
    if (m->after_to_before[i] < 0 && match_declared_source(m, i, &sb, &sa) && sb >= 0) src[sb] = true;
    for (uint32_t j = 0; j < m->n_before; j++)
        if (!m->before_kept[j] && fs_makes_output_of(a, m->before[j])) src[j] = true;
    /* one step only: a region's inner nodes feed its tail directly; going further would take in nodes that
     * another rewrite of the same pass removed */
    bool *direct = src + m->n_before;
    for (uint32_t j = 0; j < m->n_before; j++)
        direct[j] = src[j] && !m->before_kept[j]; /* the removed part: a kept node was not fused away */
    for (uint32_t j = 0; j < m->n_before; j++)
        if (!direct[j] && !m->before_kept[j] && fs_feeds_only(f, direct, j)) src[j] = true;
    uint32_t n = 0;
    for (uint32_t j = 0; j < m->n_before; j++)
        n += src[j];
    return n;
}

/* Is after-node i a rewrite result to judge? A node the pass created (no before-node of its identity with
 * its op), or a kept node that took over a removed node's output name (an elimination: an Identity, Cast,
 * Dropout, no-op Slice or cancelling Transpose bypassed, its graph output handed to the producer): the
 * producer then answers for a value of the removed node's layer, so the two must share it. */
static bool fs_is_target(const node_match *m, uint32_t i)
{
    if (m->after_to_before[i] < 0) return true;
    for (uint32_t j = 0; j < m->n_before; j++)
        if (!m->before_kept[j] && fs_makes_output_of(m->after[i], m->before[j])) return true;
    return false;
}

static pc_prop_outcome fs_check(const fs_ctx *f, const char *pass, bool *src, char *msg, size_t msg_size,
                                const char **kind)
{
    const node_match *m = f->m;
    const char *what = f->use_ep ? "EP" : "annotation";
    char l1[160], l2[160], l3[160];
    for (uint32_t i = 0; i < m->n_after; i++) {
        if (!fs_is_target(m, i) || fs_sources(f, i, src) == 0) continue;
        const pc_node *a = m->after[i], *first = NULL;
        for (uint32_t j = 0; j < m->n_before; j++) {
            if (!src[j]) continue;
            const pc_node *b = m->before[j];
            if (!first) {
                first = b;
                continue;
            }
            if (match_str_eq(fs_tag(f, first), fs_tag(f, b))) continue;
            const char *t1 = fs_tag(f, first), *t2 = fs_tag(f, b);
            *kind = f->use_ep ? "mixed-eps" : "mixed-annotations";
            snprintf(msg, msg_size, "%s: node %s was made from %s (%s '%s') and %s (%s '%s'), which differ",
                     pass, match_node_label(a, l1, sizeof l1), match_node_label(first, l2, sizeof l2), what,
                     t1 ? t1 : "(none)", match_node_label(b, l3, sizeof l3), what, t2 ? t2 : "(none)");
            return PC_PROP_FAIL;
        }
    }
    return PC_PROP_PASS;
}

static pc_prop_outcome fusion_sources_per_pass(pc_check_ctx *ctx, char *msg, size_t msg_size,
                                               const char **kind)
{
    if (strcmp(ctx->pass, "partition") == 0) return PC_PROP_PASS;
    node_match m;
    pc_error err;
    if (match_build(ctx->before->graph, ctx->after->graph, &m, &err) != PC_OK) {
        snprintf(msg, msg_size, "%s", err.message);
        return PC_PROP_ERROR;
    }
    bool *src = calloc(2 * (size_t)m.n_before + 1, sizeof *src); /* sources, then direct sources */
    pc_prop_outcome o = PC_PROP_ERROR;
    if (!src) {
        snprintf(msg, msg_size, "%s: out of memory", ctx->pass);
    } else {
        fs_ctx f = {.m = &m, .use_ep = ctx->level >= PC_LEVEL_LAYOUT};
        o = fs_check(&f, ctx->pass, src, msg, msg_size, kind);
    }
    free(src);
    match_free(&m);
    return o;
}

const pc_property pc_prop_fusion_sources = {
    "fusion-sources",
    "a rewrite never merges nodes of different annotations (levels 0/1) or EPs (level 2+): every node a "
    "fused node came from, and the fused node, carry one tag",
    fusion_sources_per_pass,
    NULL,
};
