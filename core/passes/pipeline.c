/* The pass pipeline: one table, read top to bottom. Levels 0 and 1 run before partitioning (new nodes keep
 * `layer_ann`), partitioning assigns EPs (with the layout transformer for NHWC-preferring EPs) and clears the
 * annotations, levels 2 and 3 run per EP afterwards (new nodes take their source's EP). Within a level the
 * passes repeat until none changes the graph (bounded), because one rewrite often enables another (ORT
 * #9671). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ep/ep_internal.h"
#include "core/passes/pass.h"

/* name, level, again (also runs per EP after partitioning, with level 2: partitioning removes the annotations
 * that kept nodes apart, and the layout transformer and the transpose optimizer leave Identity-like
 * leftovers, constant subgraphs and newly adjacent pairs; without this a second optimize would still find
 * work — the idempotence property), function, preconditions */
#define PC_PIPELINE(X)                                                                                       \
    X("eliminate_identity", PC_LEVEL_BASIC, true, pc_pass_eliminate_identity, "")                            \
    X("eliminate_dropout", PC_LEVEL_BASIC, true, pc_pass_eliminate_dropout, "")                              \
    X("eliminate_cast", PC_LEVEL_BASIC, true, pc_pass_eliminate_cast, "input types known")                   \
    X("eliminate_slice", PC_LEVEL_BASIC, true, pc_pass_eliminate_slice, "input shapes known")                \
    X("eliminate_unsqueeze", PC_LEVEL_BASIC, true, pc_pass_eliminate_unsqueeze, "")                          \
    X("fold_constants", PC_LEVEL_BASIC, true, pc_pass_fold_constants, "")                                    \
    X("prune_simple", PC_LEVEL_BASIC, true, pc_pass_prune_simple, "input shapes known")                      \
    X("remove_dq_q", PC_LEVEL_BASIC, true, pc_pass_remove_dq_q, "")                                          \
    X("fuse_relu_clip", PC_LEVEL_BASIC, true, pc_pass_fuse_relu_clip, "")                                    \
    X("fuse_conv_bn", PC_LEVEL_BASIC, true, pc_pass_fuse_conv_bn, "constant weights")                        \
    X("fuse_conv_add", PC_LEVEL_BASIC, true, pc_pass_fuse_conv_add, "constant weights, output shape known")  \
    X("fuse_conv_mul", PC_LEVEL_BASIC, true, pc_pass_fuse_conv_mul, "constant weights, output shape known")  \
    X("fuse_reshape", PC_LEVEL_EXTENDED, true, pc_pass_fuse_reshape, "")                                     \
    X("fuse_gelu", PC_LEVEL_EXTENDED, true, pc_pass_fuse_gelu, "")                                           \
    X("transpose_optimize", PC_LEVEL_EXTENDED, false, pc_transpose_optimize, "shapes help the cost model")   \
    X("fuse_conv_activation", PC_LEVEL_LAYOUT, false, pc_pass_fuse_conv_activation, "partitioned")           \
    X("fuse_qdq_qlinear", PC_LEVEL_LAYOUT, false, pc_pass_fuse_qdq_qlinear,                                  \
      "partitioned, constant Q/DQ parameters")                                                               \
    X("transpose_optimize_ep", PC_LEVEL_LAYOUT, false, pc_transpose_optimize, "partitioned")                 \
    X("ep_rewrites", PC_LEVEL_EP, false, pc_pass_ep_rewrites, "partitioned")

#define PC_X_ROW(name, level, again, fn, req) {name, level, fn, req, again},
static const pc_pass_info passes[] = {PC_PIPELINE(PC_X_ROW)};
#undef PC_X_ROW

size_t pc_pass_count(void)
{
    return sizeof passes / sizeof passes[0];
}

const pc_pass_info *pc_pass_at(size_t index)
{
    return index < pc_pass_count() ? &passes[index] : NULL;
}

const pc_pass_info *pc_pass_find(const char *name)
{
    for (size_t i = 0; i < pc_pass_count(); i++)
        if (pc_name_eq(passes[i].name, name)) return &passes[i];
    return NULL;
}

void pc_optimize_options_default(pc_optimize_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->level = PC_LEVEL_MAX;
#ifdef PC_DEBUG_CHECKS
    opts->verify_each_pass = true;
#endif
    opts->max_fold_elements = 1u << 16;
    opts->max_iterations = 8;
}

/* Level-3 hook: EP-specific rewrites register here by EP name, or by layout (NULL name) for every EP of that
 * layout (the blocked EP's compile, also for EP files with layout=blocked); for any other EP the pass changes
 * nothing. */
typedef struct ep_rewrite {
    const char *ep_name;
    pc_layout layout;
    pc_pass_fn run;
} ep_rewrite;
static const ep_rewrite ep_rewrites[] = {
    {"systolic", PC_LAYOUT_NCHW, pc_pass_systolic_nhwc},
    {NULL, PC_LAYOUT_BLOCKED, pc_pass_blocked_compile},
};

pc_status pc_pass_ep_rewrites(pc_graph *graph, const pc_pass_options *opts, bool *changed, pc_error *err)
{
    *changed = false;
    if (!opts || !opts->provider) return PC_OK;
    for (size_t i = 0; i < sizeof ep_rewrites / sizeof ep_rewrites[0]; i++) {
        const ep_rewrite *r = &ep_rewrites[i];
        bool mine =
            r->ep_name ? strcmp(r->ep_name, opts->provider) == 0 : opts->ep && opts->ep->layout == r->layout;
        if (!mine) continue;
        bool c = false;
        pc_status st = r->run(graph, opts, &c, err);
        if (st != PC_OK) return st;
        *changed |= c;
    }
    return PC_OK;
}

typedef struct run_ctx {
    pc_model *model;
    const pc_optimize_options *opts;
    /* levels 0/1 run per EP too: the model arrived partitioned (an optimized graph optimized again) and will
     * be partitioned again, so its passes keep to the rules of the per-EP runs that produced it (one EP per
     * rewrite, fused nodes their EP runs) and find nothing those runs left */
    bool early_per_ep;
} run_ctx;

static bool graph_has_assignment(const pc_graph *g)
{
    for (const pc_node *n = g->first; n; n = n->next)
        if (n->ep) return true;
    return false;
}

/* Runs one pass over a graph and, afterwards, over the subgraphs of its remaining nodes. */
static pc_status run_on_graph(const pc_pass_info *p, pc_graph *g, const pc_pass_options *po, bool *changed,
                              pc_error *err)
{
    bool c = false;
    pc_status st = p->run(g, po, &c, err);
    if (st != PC_OK) return st;
    /* a pass that appends nodes sorts the graph once itself (pass.h), so it is also valid when called alone
     */
    if (c) *changed = true;
    for (pc_node *n = g->first; n; n = n->next)
        for (uint32_t a = 0; a < n->n_attrs; a++) {
            pc_attr *at = &n->attrs[a];
            /* a compiled subgraph is its EP's: passes do not look inside (ORT's fused nodes are opaque too)
             */
            if (pc_name_eq(n->domain, PC_BLOCKED_DOMAIN) && pc_name_eq(n->op_type, "Subgraph")) break;
            if (at->type == PC_ATTR_GRAPH && at->g) {
                st = run_on_graph(p, at->g, po, changed, err);
                if (st != PC_OK) return st;
            } else if (at->type == PC_ATTR_GRAPHS) {
                for (size_t k = 0; k < at->n; k++) {
                    st = run_on_graph(p, at->graphs[k], po, changed, err);
                    if (st != PC_OK) return st;
                }
            }
        }
    return PC_OK;
}

static pc_status after_step(const run_ctx *rc, const char *name, const char *provider, bool changed,
                            pc_error *err)
{
    if (rc->opts->verify_each_pass) {
        pc_error verr;
        if (pc_model_verify(rc->model, &verr) != PC_OK)
            return pc_error_set(err, PC_ERR_CHECK_FAILED, "pass '%s' left an invalid graph: %s: %s", name,
                                pc_status_name(verr.status), verr.message);
    }
    if (rc->opts->after_pass) {
        pc_status st =
            rc->opts->after_pass(rc->opts->after_pass_ctx, name, provider, rc->model, changed, err);
        if (st != PC_OK) {
            pc_error_prefix(err, "after pass '%s': ", name);
            return st;
        }
    }
    return PC_OK;
}

static void base_pass_options(const pc_optimize_options *opts, pc_pass_options *po)
{
    memset(po, 0, sizeof *po);
    po->max_fold_elements = opts->max_fold_elements;
    po->trace = opts->trace;
    po->rewrites = opts->rewrites;
}

/* Appends the layer_ann values of g's nodes, and of the nodes of every body they hold, not yet in *out
 * (after the unannotated group's NULL at index 0). */
static pc_status collect_annotations(pc_mem *mem, const pc_graph *g, const char ***out, uint32_t *n,
                                     uint32_t *cap, pc_error *err)
{
    for (const pc_node *nd = g->first; nd; nd = nd->next) {
        for (uint32_t a = 0; a < nd->n_attrs; a++) {
            const pc_attr *at = &nd->attrs[a];
            pc_status st = PC_OK;
            if (at->type == PC_ATTR_GRAPH && at->g) st = collect_annotations(mem, at->g, out, n, cap, err);
            for (size_t k = 0; st == PC_OK && at->type == PC_ATTR_GRAPHS && k < at->n; k++)
                st = collect_annotations(mem, at->graphs[k], out, n, cap, err);
            if (st != PC_OK) return st;
        }
        const char *ann = pc_node_annotation(nd);
        if (!ann) continue;
        bool seen = false;
        for (uint32_t k = 1; k < *n && !seen; k++)
            seen = strcmp((*out)[k], ann) == 0;
        if (seen) continue;
        if (*n + 2 > *cap) {
            uint32_t ncap = *cap ? *cap * 2 : 8;
            size_t bytes;
            const char **grown = ncap > *cap && pc_size_mul(ncap, sizeof *grown, &bytes)
                                     ? pc_mem_realloc(mem, (void *)*out, bytes)
                                     : NULL;
            if (!grown) return pc_error_set(err, PC_ERR_NOMEM, "out of memory listing annotation groups");
            *out = grown;
            *cap = ncap;
        }
        if (*n == 0) (*out)[(*n)++] = NULL;
        (*out)[(*n)++] = ann;
    }
    return PC_OK;
}

/* The annotation groups of g (distinct layer_ann values of its nodes and of every body's nodes: a body's
 * nodes are rewritten by the run of their own group; the unannotated group first, as NULL) in *out (from
 * the model's heap, an OOM-injection point; pc_mem_free it); 0 groups when no node is annotated (then passes
 * run unscoped). */
static pc_status annotation_groups(pc_mem *mem, const pc_graph *g, const char ***out, uint32_t *n,
                                   pc_error *err)
{
    *out = NULL;
    *n = 0;
    uint32_t cap = 0;
    pc_status st = collect_annotations(mem, g, out, n, &cap, err);
    if (st != PC_OK) {
        pc_mem_free(mem, (void *)*out);
        *out = NULL;
        *n = 0;
    }
    return st;
}

/* Runs every pass of `level` until a round changes nothing. Before partitioning the passes run once per
 * annotation group (pc_pass_options.scoped), or once on the whole graph when nothing is annotated; after it,
 * each runs once per EP with that EP as provider. */
static pc_status run_level(const run_ctx *rc, int level, const pc_ep *const *eps, uint32_t n_eps,
                           pc_error *err)
{
    const pc_optimize_options *opts = rc->opts;
    bool per_ep = level >= PC_LEVEL_LAYOUT || rc->early_per_ep;
    uint32_t n_providers = per_ep ? n_eps : 1;
    uint32_t rounds = opts->max_iterations ? opts->max_iterations : 1;
    for (uint32_t round = 0; round < rounds; round++) {
        bool any = false;
        for (size_t i = 0; i < pc_pass_count(); i++) {
            const pc_pass_info *p = &passes[i];
            if (p->level != level && !(level == PC_LEVEL_LAYOUT && p->again_after_partition)) continue;
            /* annotation strings live in the model's arena: they outlive the pass that drops their node */
            const char **groups = NULL;
            uint32_t n_groups = 0;
            pc_status st =
                per_ep ? PC_OK
                       : annotation_groups(&rc->model->mem, rc->model->graph, &groups, &n_groups, err);
            if (st != PC_OK) return st;
            uint32_t n_runs = per_ep ? n_providers : n_groups ? n_groups : 1;
            for (uint32_t e = 0; e < n_runs && st == PC_OK; e++) {
                pc_pass_options po;
                base_pass_options(opts, &po);
                po.pass_name = p->name;
                if (per_ep) {
                    po.provider = eps[e]->name;
                    po.ep = eps[e];
                } else if (n_groups) {
                    po.scoped = true;
                    po.annotation = groups[e];
                }
                bool changed = false;
                st = run_on_graph(p, rc->model->graph, &po, &changed, err);
                if (st != PC_OK) {
                    if (st != PC_ERR_CHECK_FAILED) pc_error_prefix(err, "pass '%s': ", p->name);
                    break;
                }
                st = after_step(rc, p->name, po.provider, changed, err);
                any |= changed;
            }
            pc_mem_free(&rc->model->mem, (void *)groups);
            if (st != PC_OK) return st;
        }
        if (!any) break;
    }
    return PC_OK;
}

pc_status pc_model_optimize(pc_model *model, const pc_optimize_options *opts, pc_partition_result *partition,
                            pc_error *err)
{
    pc_optimize_options defaults;
    if (!opts) {
        pc_optimize_options_default(&defaults);
        opts = &defaults;
    }
    if (opts->level < PC_LEVEL_BASIC || opts->level > PC_LEVEL_MAX)
        return pc_error_set(err, PC_ERR_USAGE, "optimization level %d is outside 0..%d", opts->level,
                            PC_LEVEL_MAX);
    if (partition) memset(partition, 0, sizeof *partition);

    /* EPs: the caller's list, or the built-in cpu EP alone (static data, so partition results may point at
     * it) */
    const pc_ep *const *eps = opts->eps;
    uint32_t n_eps = opts->n_eps;
    const pc_ep *cpu_only[1] = {pc_ep_builtin_cpu()};
    if (!eps || !n_eps) {
        eps = cpu_only;
        n_eps = 1;
    }
    pc_layer_rules *rules = NULL;
    pc_status st = PC_OK;
    if (opts->layer_assignment) {
        st = pc_layer_rules_parse(opts->layer_assignment, eps, n_eps, &rules, err);
        if (st != PC_OK) {
            pc_error_prefix(err, "layer assignment: ");
            goto done;
        }
    }

    run_ctx rc = {model, opts, opts->level >= PC_LEVEL_LAYOUT && graph_has_assignment(model->graph)};
    /* shapes first: the cost model, eliminations and fusions read them */
    st = pc_graph_infer_shapes(model->graph, err);
    if (st != PC_OK) {
        pc_error_prefix(err, "shape inference: ");
        goto done;
    }
    for (int level = PC_LEVEL_BASIC; level <= PC_LEVEL_EXTENDED && level <= opts->level; level++) {
        st = run_level(&rc, level, eps, n_eps, err);
        if (st != PC_OK) goto done;
    }
    if (opts->level >= PC_LEVEL_LAYOUT) {
        pc_pass_options po;
        base_pass_options(opts, &po);
        po.pass_name = "partition";
        pc_partition_result local;
        st = pc_model_partition(model, eps, n_eps, rules, &po, partition ? partition : &local, err);
        if (st != PC_OK) {
            pc_error_prefix(err, "partitioning: ");
            goto done;
        }
        st = after_step(&rc, "partition", NULL, true, err);
        if (st != PC_OK) goto done;
        for (int level = PC_LEVEL_LAYOUT; level <= opts->level; level++) {
            st = run_level(&rc, level, eps, n_eps, err);
            if (st != PC_OK) goto done;
        }
    }
    /* and last: a pass that removes a node may leave types downstream less precise than inference now gets
     * (a full Slice of a symbolic dim gave '?', its input has 's1'); the result is closed under inference,
     * so optimizing it again changes nothing */
    st = pc_graph_infer_shapes(model->graph, err);
    if (st != PC_OK) pc_error_prefix(err, "shape inference after the passes: ");
    /* the partition as the result holds it: counts taken at partitioning would not add up to the graph */
    if (st == PC_OK && partition && opts->level >= PC_LEVEL_LAYOUT)
        st = pc_model_list_subgraphs(model, eps, n_eps, partition, err);
done:
    pc_layer_rules_free(rules);
    return st;
}
