/* Partitioner (pc_model_partition): EPs in priority order, each offered the nodes it may see (GetCapability),
 * the layout transformer for NHWC-preferring EPs with a second GetCapability over the changed graph, then the
 * assignment; finally every layer annotation is removed and the compiled subgraphs are listed.
 *
 * Existing assignments that are still valid are kept (see keep_valid_assignments), so partitioning a
 * partitioned graph with the same EPs and rules changes nothing.
 *
 * Visibility (layer rules): a node pinned to an EP is offered only to that EP; once that EP has had its turn
 * without claiming it, the pin is released and later EPs see it. Unpinned nodes are offered to every EP in
 * turn. Nodes of If/Loop/Scan bodies are not offered to EPs: they take the EP of the node owning the body
 * (recursively). On error the model is left part-way partitioned: callers discard it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ep/ep_internal.h"
#include "core/ir/ir_internal.h"
#include "core/passes/pass.h"

enum { WHY_SIZE = 256 };

typedef struct part_ctx {
    pc_model *model;
    pc_graph *graph;
    const pc_ep *const *eps;
    uint32_t n_eps;
    const pc_layer_rules *rules;
    const char **ep_names; /* model-arena copies: node->ep must outlive the registry */
    pc_error *err;
} part_ctx;

/* Priority index of the EP a node is pinned to, or n_eps when it is not pinned (to an EP of this list). */
static uint32_t pin_index(const part_ctx *c, const pc_node *n)
{
    const pc_ep *ep = c->rules ? pc_layer_rules_match(c->rules, pc_node_annotation(n)) : NULL;
    for (uint32_t i = 0; ep && i < c->n_eps; i++)
        if (c->eps[i] == ep) return i;
    return c->n_eps;
}

/* May EP j be offered this unassigned node? Pinned elsewhere: only after the pinned EP's turn (released). */
static bool visible(const part_ctx *c, const pc_node *n, uint32_t j)
{
    uint32_t pin = pin_index(c, n);
    return pin == c->n_eps || pin <= j;
}

/* Priority index of the EP named `name`, or n_eps when it is not in the list. */
static uint32_t ep_index(const part_ctx *c, const char *name)
{
    for (uint32_t j = 0; name && j < c->n_eps; j++)
        if (strcmp(c->ep_names[j], name) == 0) return j;
    return c->n_eps;
}

/* An assignment the graph already carries (a partitioned graph optimized again, or a model saved with its
 * EPs) stays when it is still valid: its EP is in the list and claims the node, and no layer rule pins the
 * node to another EP of the list. Kept nodes are tagged before any EP's turn, so an earlier EP cannot take
 * them (that is what makes partitioning a partitioned graph a no-op: e.g. the Transposes an NHWC EP claimed
 * after its layout change, which an earlier EP that runs Transpose would otherwise take). Every other
 * assignment is cleared. */
static void keep_valid_assignments(part_ctx *c, uint8_t *kept)
{
    for (pc_node *n = c->graph->first; n; n = n->next) {
        uint32_t k = ep_index(c, n->ep), pin = pin_index(c, n);
        bool keep = k < c->n_eps && (pin == c->n_eps || pin == k) && pc_ep_claims_node(c->eps[k], n, NULL, 0);
        n->ep = keep ? c->ep_names[k] : NULL;
        kept[n->id] = keep; /* its layout form too (pc_layout_transform_keeping) */
    }
}

/* GetCapability: claims every visible node that is unassigned (or already this EP's) and returns the count.
 * The second pass (after the layout change) also drops the tags of nodes the EP no longer claims, and returns
 * in *dropped_nhwc the first such node that the layout transformer moved into the NHWC domain. */
static uint32_t get_capability(part_ctx *c, uint32_t j, bool second, pc_node **dropped_nhwc)
{
    const pc_ep *ep = c->eps[j];
    const char *name = c->ep_names[j];
    uint32_t claimed = 0;
    for (pc_node *n = c->graph->first; n; n = n->next) {
        bool mine = n->ep && strcmp(n->ep, name) == 0;
        if (n->ep && !mine) continue;
        bool claim = visible(c, n, j) && pc_ep_claims_node(ep, n, NULL, 0);
        if (claim) {
            n->ep = name;
            claimed++;
        } else if (mine && second) {
            n->ep = NULL;
            if (dropped_nhwc && !*dropped_nhwc && strcmp(n->domain, PC_NHWC_DOMAIN) == 0) *dropped_nhwc = n;
        }
    }
    return claimed;
}

/* The layout transformer moved n into the NHWC domain for EP j, which refused it afterwards: nothing else
 * runs that domain (the transformer moves only what the EP claims there, so this is a contradiction worth
 * naming). */
static pc_status report_nhwc_unclaimed(part_ctx *c, uint32_t j, const pc_node *n)
{
    char why[WHY_SIZE];
    pc_ep_claims_node(c->eps[j], n, why, sizeof why);
    return pc_error_set(c->err, PC_ERR_CHECK_FAILED,
                        "node '%s' (%s) was moved to %s for EP '%s', which did not claim it afterwards (%s): "
                        "the graph cannot run",
                        n->name, n->op_type, PC_NHWC_DOMAIN, c->eps[j]->name, why);
}

static pc_status report_unassigned(part_ctx *c, pc_node *n)
{
    char reasons[768];
    size_t used = 0;
    reasons[0] = '\0';
    for (uint32_t j = 0; j < c->n_eps && used < sizeof reasons; j++) {
        char why[WHY_SIZE];
        if (pc_ep_claims_node(c->eps[j], n, why, sizeof why))
            snprintf(why, sizeof why, "hidden by a layer rule");
        int k =
            snprintf(reasons + used, sizeof reasons - used, "%s%s: %s", j ? "; " : "", c->eps[j]->name, why);
        if (k < 0) break;
        used += (size_t)k;
    }
    return pc_error_set(c->err, PC_ERR_UNSUPPORTED, "node '%s' (%s%s%s): no EP claims it (%s)", n->name,
                        n->domain[0] ? n->domain : "", n->domain[0] ? ":" : "", n->op_type, reasons);
}

/* Nodes of subgraphs run where their owner runs. */
static void inherit_ep(pc_graph *g, const char *ep)
{
    for (pc_node *n = g->first; n; n = n->next) {
        n->ep = ep;
        for (uint32_t a = 0; a < n->n_attrs; a++) {
            const pc_attr *at = &n->attrs[a];
            if (at->type == PC_ATTR_GRAPH && at->g) inherit_ep(at->g, ep);
            for (size_t k = 0; at->type == PC_ATTR_GRAPHS && k < at->n; k++)
                inherit_ep(at->graphs[k], ep);
        }
    }
}

static void remove_annotations(pc_graph *g)
{
    for (pc_node *n = g->first; n; n = n->next) {
        pc_node_remove_metadata(n, PC_LAYER_ANN_KEY);
        for (uint32_t a = 0; a < n->n_attrs; a++) {
            const pc_attr *at = &n->attrs[a];
            if (at->type == PC_ATTR_GRAPH && at->g) remove_annotations(at->g);
            for (size_t k = 0; at->type == PC_ATTR_GRAPHS && k < at->n; k++)
                remove_annotations(at->graphs[k]);
        }
    }
}

/* ---- compiled subgraphs ----
 * For a compiling EP, each node gets a level: the largest level among its producers, plus one for every step
 * through a node of another EP. Levels never decrease along an edge and strictly increase across a foreign
 * node, so grouping the EP's nodes by (level, connected through same-level edges) gives groups that are
 * connected and whose contraction is acyclic: a path leaving a group through a foreign node cannot come back
 * to it. Linear time, deterministic; not maximal (two branches that each cross one foreign node stay apart).
 */

typedef struct group_ctx {
    const char *ep;
    uint32_t *level;  /* by node id */
    uint32_t *parent; /* union-find by node id */
    const pc_node *cur;
    bool cur_mine;
    uint32_t cur_level;
} group_ctx;

static uint32_t uf_find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static void uf_union(uint32_t *parent, uint32_t a, uint32_t b)
{
    a = uf_find(parent, a);
    b = uf_find(parent, b);
    /* the smaller id (earlier node) becomes the root: deterministic */
    if (a < b)
        parent[b] = a;
    else if (b < a)
        parent[a] = b;
}

static bool on_ep(const pc_node *n, const char *ep)
{
    return n->ep && strcmp(n->ep, ep) == 0;
}

/* Level a producer passes to the current node: +1 when a node of the EP reads a foreign producer. */
static void take_level(group_ctx *gc, const pc_node *p)
{
    if (!p || p->graph != gc->cur->graph) return;
    uint32_t l = gc->level[p->id] + (gc->cur_mine && !on_ep(p, gc->ep) ? 1u : 0u);
    if (l > gc->cur_level) gc->cur_level = l;
}

static void implicit_level(pc_value *v, void *ctx)
{
    take_level(ctx, v->producer);
}

static pc_status grow_subs(part_ctx *c, pc_ep_subgraph **subs, uint32_t n, uint32_t *cap)
{
    if (n < *cap) return PC_OK;
    uint32_t ncap = *cap ? *cap * 2 : 16;
    pc_ep_subgraph *grown = ncap > *cap ? realloc(*subs, (size_t)ncap * sizeof *grown) : NULL;
    if (!grown) return pc_error_set(c->err, PC_ERR_NOMEM, "out of memory listing subgraphs");
    *subs = grown;
    *cap = ncap;
    return PC_OK;
}

static pc_status compute_groups(part_ctx *c, const pc_ep *ep, const char *name, pc_ep_subgraph **subs,
                                uint32_t *n_subs, uint32_t *cap_subs)
{
    pc_graph *g = c->graph;
    size_t n_ids = g->next_node_id ? g->next_node_id : 1;
    group_ctx gc = {.ep = name};
    pc_mem *mem = &c->model->mem; /* temporaries from the model's heap: OOM-injection points */
    gc.level = pc_mem_calloc(mem, n_ids, sizeof *gc.level);
    gc.parent = pc_mem_calloc(mem, n_ids, sizeof *gc.parent);
    uint32_t *count = pc_mem_calloc(mem, n_ids, sizeof *count);
    uint32_t *slot = pc_mem_calloc(mem, n_ids, sizeof *slot); /* group root → subgraph index + 1 */
    pc_status st = PC_OK;
    if (!gc.level || !gc.parent || !count || !slot) {
        st = pc_error_set(c->err, PC_ERR_NOMEM, "out of memory grouping nodes for EP '%s'", ep->name);
        goto done;
    }
    for (size_t i = 0; i < n_ids; i++)
        gc.parent[i] = (uint32_t)i;
    for (pc_node *n = g->first; n; n = n->next) {
        gc.cur = n;
        gc.cur_mine = on_ep(n, name);
        gc.cur_level = 0;
        for (uint32_t i = 0; i < n->n_inputs; i++)
            if (n->inputs[i]) take_level(&gc, n->inputs[i]->producer);
        pc_node_for_each_implicit_input(n, implicit_level, &gc);
        gc.level[n->id] = gc.cur_level;
        if (!gc.cur_mine) continue;
        for (uint32_t i = 0; i < n->n_inputs; i++) {
            const pc_node *p = n->inputs[i] ? n->inputs[i]->producer : NULL;
            if (p && p->graph == g && on_ep(p, name) && gc.level[p->id] == gc.cur_level)
                uf_union(gc.parent, p->id, n->id);
        }
    }
    for (pc_node *n = g->first; n; n = n->next)
        if (on_ep(n, name)) count[uf_find(gc.parent, n->id)]++;
    /* subgraphs in the order of their first node; nodes in graph (topological) order */
    for (pc_node *n = g->first; n; n = n->next) {
        if (!on_ep(n, name)) continue;
        uint32_t root = uf_find(gc.parent, n->id);
        if (!slot[root]) {
            if ((st = grow_subs(c, subs, *n_subs, cap_subs)) != PC_OK) goto done;
            pc_node **nodes = pc_arena_array(&c->model->arena, count[root], sizeof *nodes);
            if (!nodes) {
                st = pc_model_alloc_error(c->model, c->err, "a subgraph list");
                goto done;
            }
            (*subs)[*n_subs] = (pc_ep_subgraph){ep, 0, nodes};
            slot[root] = ++*n_subs;
        }
        pc_ep_subgraph *s = &(*subs)[slot[root] - 1];
        s->nodes[s->n_nodes++] = n;
    }
done:
    pc_mem_free(mem, gc.level);
    pc_mem_free(mem, gc.parent);
    pc_mem_free(mem, count);
    pc_mem_free(mem, slot);
    return st;
}

static pc_status list_subgraphs(part_ctx *c, pc_partition_result *out)
{
    pc_ep_subgraph *subs = NULL;
    uint32_t n = 0, cap = 0;
    pc_status st = PC_OK;
    for (uint32_t j = 0; j < c->n_eps && st == PC_OK; j++) {
        const pc_ep *ep = c->eps[j];
        if (ep->compiles) {
            st = compute_groups(c, ep, c->ep_names[j], &subs, &n, &cap);
            continue;
        }
        for (pc_node *x = c->graph->first; x && st == PC_OK; x = x->next) {
            if (!x->ep || strcmp(x->ep, c->ep_names[j]) != 0) continue;
            if ((st = grow_subs(c, &subs, n, &cap)) != PC_OK) break;
            pc_node **one = pc_arena_alloc(&c->model->arena, sizeof *one);
            if (!one) {
                st = pc_model_alloc_error(c->model, c->err, "a subgraph list");
                break;
            }
            one[0] = x;
            subs[n++] = (pc_ep_subgraph){ep, 1, one};
        }
    }
    if (st == PC_OK && n) {
        out->subgraphs = pc_arena_array(&c->model->arena, n, sizeof *out->subgraphs);
        if (!out->subgraphs)
            st = pc_model_alloc_error(c->model, c->err, "the subgraph list");
        else {
            memcpy(out->subgraphs, subs, (size_t)n * sizeof *subs);
            out->n_subgraphs = n;
        }
    }
    free(subs);
    return st;
}

pc_status pc_model_list_subgraphs(pc_model *model, const pc_ep *const *eps, uint32_t n_eps,
                                  pc_partition_result *out, pc_error *err)
{
    part_ctx c = {.model = model, .graph = model->graph, .eps = eps, .n_eps = n_eps, .err = err};
    c.ep_names = pc_arena_array(&model->arena, n_eps ? n_eps : 1, sizeof *c.ep_names);
    if (!c.ep_names) return pc_model_alloc_error(model, err, "EP names");
    for (uint32_t j = 0; j < n_eps; j++)
        c.ep_names[j] = eps[j]->name;
    out->n_subgraphs = 0;
    out->subgraphs = NULL;
    return list_subgraphs(&c, out);
}

static uint32_t count_nhwc_nodes(const pc_graph *g)
{
    uint32_t k = 0;
    for (const pc_node *n = g->first; n; n = n->next)
        k += strcmp(n->domain, PC_NHWC_DOMAIN) == 0;
    return k;
}

pc_status pc_model_partition(pc_model *model, const pc_ep *const *eps, uint32_t n_eps,
                             const pc_layer_rules *rules, const pc_pass_options *opts,
                             pc_partition_result *out, pc_error *err)
{
    if (out) memset(out, 0, sizeof *out);
    if (!model || !model->graph) return pc_error_set(err, PC_ERR_USAGE, "partition: no model");
    if (!eps || n_eps == 0) return pc_error_set(err, PC_ERR_USAGE, "partition: the EP list is empty");
    part_ctx c = {model, model->graph, eps, n_eps, rules, NULL, err};
    c.ep_names = pc_arena_array(&model->arena, n_eps, sizeof *c.ep_names);
    if (!c.ep_names) return pc_model_alloc_error(model, err, "EP names");
    for (uint32_t j = 0; j < n_eps; j++) {
        if (!eps[j] || !eps[j]->name)
            return pc_error_set(err, PC_ERR_USAGE, "partition: EP %u is missing", j + 1);
        for (uint32_t k = 0; k < j; k++)
            if (strcmp(eps[k]->name, eps[j]->name) == 0)
                return pc_error_set(err, PC_ERR_USAGE, "partition: EP '%s' is listed twice", eps[j]->name);
        if (!(c.ep_names[j] = pc_arena_strdup(&model->arena, eps[j]->name)))
            return pc_model_alloc_error(model, err, "an EP name");
    }
    uint32_t n_kept = c.graph->next_node_id;
    uint8_t *kept = pc_mem_calloc(&model->mem, n_kept ? n_kept : 1, 1);
    if (!kept) return pc_error_set(err, PC_ERR_NOMEM, "partition: flags for %u nodes", n_kept);
    keep_valid_assignments(&c, kept);

    uint32_t nhwc_before = count_nhwc_nodes(c.graph);
    for (uint32_t j = 0; j < n_eps; j++) {
        uint32_t claimed = get_capability(&c, j, false, NULL);
        if (eps[j]->layout != PC_LAYOUT_NHWC || claimed == 0) continue;
        pc_pass_options lo;
        if (opts)
            lo = *opts;
        else
            lo = (pc_pass_options){0};
        lo.provider = c.ep_names[j];
        lo.ep = eps[j];
        lo.new_nodes_unassigned = true;
        lo.layout_cost_check = true;
        bool changed = false;
        pc_status st = pc_layout_transform_keeping(c.graph, eps[j], &lo, kept, n_kept, &changed, err);
        if (st != PC_OK) {
            pc_mem_free(&model->mem, kept);
            return st;
        }
        if (!changed) continue;
        pc_node *dropped = NULL;
        get_capability(&c, j, true, &dropped);
        if (dropped) {
            pc_mem_free(&model->mem, kept);
            return report_nhwc_unclaimed(&c, j, dropped);
        }
    }
    pc_mem_free(&model->mem, kept);
    for (pc_node *n = c.graph->first; n; n = n->next)
        if (!n->ep) return report_unassigned(&c, n);
    for (pc_node *n = c.graph->first; n; n = n->next)
        for (uint32_t a = 0; a < n->n_attrs; a++) {
            const pc_attr *at = &n->attrs[a];
            if (at->type == PC_ATTR_GRAPH && at->g) inherit_ep(at->g, n->ep);
            for (size_t k = 0; at->type == PC_ATTR_GRAPHS && k < at->n; k++)
                inherit_ep(at->graphs[k], n->ep);
        }
    remove_annotations(c.graph);
    if (!out) return PC_OK;
    out->n_layout_changes = count_nhwc_nodes(c.graph) - nhwc_before;
    return list_subgraphs(&c, out);
}
