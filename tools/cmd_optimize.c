/* passcheck optimize MODEL -o OUT [--level N] [--ep LIST] [--ep-file F] [--layer-assignment S] [--explain]
 * [--json]: run the pass pipeline up to a level and write the optimized model atomically (docs/cli.md). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/cli.h"
#include "properties/runner/util.h"

#define OPT_CMD "optimize"
/* Nodes the layout transformer moves here are not ONNX: with NCHW-only EPs none may reach the output file. */
#define OPT_INTERNAL_DOMAIN_PREFIX "com.ms.internal."

typedef struct optimize_args {
    const char *model;
    const char *out;
    const char *level_text;
    const char *ep_list;
    const char *ep_file;
    const char *layer_assignment;
    bool explain;
    bool json;
    int level;
} optimize_args;

static const pc_cli_opt opt_specs[] = {
    {"--output", "-o", PC_CLI_STRING, offsetof(optimize_args, out)},
    {"--level", NULL, PC_CLI_STRING, offsetof(optimize_args, level_text)},
    {"--ep", NULL, PC_CLI_STRING, offsetof(optimize_args, ep_list)},
    {"--ep-file", NULL, PC_CLI_STRING, offsetof(optimize_args, ep_file)},
    {"--layer-assignment", NULL, PC_CLI_STRING, offsetof(optimize_args, layer_assignment)},
    {"--explain", NULL, PC_CLI_FLAG, offsetof(optimize_args, explain)},
    {"--json", NULL, PC_CLI_FLAG, offsetof(optimize_args, json)},
};

static const pc_cli_positional model_arg = {"MODEL", PC_CLI_STRING, offsetof(optimize_args, model)};

static int args_parse(int argc, char **argv, optimize_args *a)
{
    int rc = pc_cli_parse_args(OPT_CMD, argc, argv, opt_specs, sizeof opt_specs / sizeof opt_specs[0], a,
                               &model_arg);
    if (rc != PC_EXIT_OK) return rc;
    if (!a->out) return pc_cli_usage_error(OPT_CMD, "missing -o OUT");
    if (a->out[0] == '\0') return pc_cli_usage_error(OPT_CMD, "empty -o OUT");
    if (a->level_text && (rc = pc_cli_parse_level(OPT_CMD, a->level_text, &a->level)) != PC_EXIT_OK)
        return rc;
    if (!a->ep_list) a->ep_list = "cpu";
    return PC_EXIT_OK;
}

/* The output must be creatable: checked before the (possibly long) pipeline runs, so a typo in OUT fails
 * fast. The save itself still writes a temporary file and renames it, so a late failure leaves nothing
 * half-written. */

/* Graph statistics for the summary: nodes and Transposes over the main graph and every subgraph. */
typedef struct graph_counts {
    uint64_t nodes;
    uint64_t transposes;
} graph_counts;

static void graph_count(const pc_graph *g, graph_counts *c)
{
    for (const pc_node *n = g->first; n; n = n->next) {
        c->nodes++;
        if (strcmp(n->op_type, "Transpose") == 0 && n->domain[0] == '\0') c->transposes++;
        for (uint32_t i = 0; i < n->n_attrs; i++) {
            const pc_attr *at = &n->attrs[i];
            if (at->type == PC_ATTR_GRAPH) graph_count(at->g, c);
            for (size_t k = 0; at->type == PC_ATTR_GRAPHS && k < at->n; k++)
                graph_count(at->graphs[k], c);
        }
    }
}

/* Finds a node left in an internal domain (first in graph order, subgraphs included). */
static const pc_node *graph_find_internal(const pc_graph *g)
{
    for (const pc_node *n = g->first; n; n = n->next) {
        if (strncmp(n->domain, OPT_INTERNAL_DOMAIN_PREFIX, strlen(OPT_INTERNAL_DOMAIN_PREFIX)) == 0) return n;
        for (uint32_t i = 0; i < n->n_attrs; i++) {
            const pc_attr *at = &n->attrs[i];
            const pc_node *hit = NULL;
            if (at->type == PC_ATTR_GRAPH) hit = graph_find_internal(at->g);
            for (size_t k = 0; !hit && at->type == PC_ATTR_GRAPHS && k < at->n; k++)
                hit = graph_find_internal(at->graphs[k]);
            if (hit) return hit;
        }
    }
    return NULL;
}

/* --explain sink. Text mode prints each change as it happens ("  pass: message"); JSON mode keeps them for
 * the "trace" array. The trace goes to stdout in both modes: the model itself only ever goes to OUT. */
typedef struct trace_entry {
    char *pass;
    char *message;
} trace_entry;

typedef struct trace_log {
    bool json;
    bool failed;
    size_t n, cap;
    trace_entry *items;
} trace_log;

static void trace_emit(void *ctx, const char *pass, const char *message)
{
    trace_log *log = ctx;
    if (!log->json) {
        printf("  %s: %s\n", pass ? pass : "?", message ? message : "");
        return;
    }
    if (log->failed) return;
    if (log->n == log->cap) {
        size_t ncap = log->cap ? log->cap * 2 : 64;
        trace_entry *ni = realloc(log->items, ncap * sizeof *ni);
        if (!ni) {
            log->failed = true;
            return;
        }
        log->items = ni;
        log->cap = ncap;
    }
    trace_entry e = {strdup(pass ? pass : "?"), strdup(message ? message : "")};
    if (!e.pass || !e.message) {
        free(e.pass);
        free(e.message);
        log->failed = true;
        return;
    }
    log->items[log->n++] = e;
}

static void trace_log_free(trace_log *log)
{
    for (size_t i = 0; i < log->n; i++) {
        free(log->items[i].pass);
        free(log->items[i].message);
    }
    free(log->items);
}

/* With --explain in text mode, one line per pass that changed the graph, after its change lines. */
static pc_status after_pass_report(void *ctx, const char *pass, const char *provider, pc_model *model,
                                   bool changed, pc_error *err)
{
    (void)provider;
    (void)ctx;
    (void)err;
    if (!changed) return PC_OK;
    graph_counts c = {0, 0};
    graph_count(model->graph, &c);
    printf("pass %s: changed; now %llu nodes, %llu Transposes\n", pass ? pass : "?",
           (unsigned long long)c.nodes, (unsigned long long)c.transposes);
    return PC_OK;
}

typedef struct optimize_report {
    const optimize_args *args;
    const pc_ep *const *eps;
    uint32_t n_eps;
    graph_counts before, after;
    uint64_t cost_before, cost_after;
    const pc_partition_result *partition; /* NULL below level 2 */
    uint32_t ep_rewrites;                 /* level-3 rewrites (the systolic EP's layout change) */
    double seconds;
    const trace_log *trace;
} optimize_report;

/* Nodes and subgraphs (compiled subgraphs, or single-node kernels for non-compiling EPs) one EP received. */
static void partition_ep_totals(const pc_partition_result *p, const pc_ep *ep, uint64_t *nodes,
                                uint32_t *subgraphs)
{
    *nodes = 0;
    *subgraphs = 0;
    for (uint32_t k = 0; k < p->n_subgraphs; k++)
        if (p->subgraphs[k].ep == ep) {
            (*subgraphs)++;
            *nodes += p->subgraphs[k].n_nodes;
        }
}

static void report_text(const optimize_report *r)
{
    printf("optimize: %s -> %s: level %d, eps ", r->args->model, r->args->out, r->args->level);
    for (uint32_t i = 0; i < r->n_eps; i++)
        printf("%s%s", i ? "," : "", r->eps[i]->name);
    printf("\n  nodes %llu -> %llu, Transposes %llu -> %llu (cost %llu -> %llu), %.3f s\n",
           (unsigned long long)r->before.nodes, (unsigned long long)r->after.nodes,
           (unsigned long long)r->before.transposes, (unsigned long long)r->after.transposes,
           (unsigned long long)r->cost_before, (unsigned long long)r->cost_after, r->seconds);
    if (r->partition) {
        for (uint32_t i = 0; i < r->n_eps; i++) {
            uint64_t nodes;
            uint32_t subgraphs;
            partition_ep_totals(r->partition, r->eps[i], &nodes, &subgraphs);
            printf("  ep %s: %llu nodes in %u %s\n", r->eps[i]->name, (unsigned long long)nodes, subgraphs,
                   r->eps[i]->compiles ? "compiled subgraphs" : "kernels");
        }
        printf("  layout changes: %u\n", r->partition->n_layout_changes);
        if (r->ep_rewrites) printf("  EP rewrites (level 3): %u\n", r->ep_rewrites);
    }
}

static void report_json(const optimize_report *r)
{
    printf("{\n  \"model\": ");
    pc_json_string(stdout, r->args->model);
    printf(",\n  \"output\": ");
    pc_json_string(stdout, r->args->out);
    printf(",\n  \"level\": %d,\n  \"eps\": [", r->args->level);
    for (uint32_t i = 0; i < r->n_eps; i++) {
        printf("%s", i ? ", " : "");
        pc_json_string(stdout, r->eps[i]->name);
    }
    printf("],\n  \"nodes_before\": %llu,\n  \"nodes_after\": %llu,\n", (unsigned long long)r->before.nodes,
           (unsigned long long)r->after.nodes);
    printf("  \"transposes_before\": %llu,\n  \"transposes_after\": %llu,\n",
           (unsigned long long)r->before.transposes, (unsigned long long)r->after.transposes);
    printf("  \"transpose_cost_before\": %llu,\n  \"transpose_cost_after\": %llu,\n",
           (unsigned long long)r->cost_before, (unsigned long long)r->cost_after);
    printf("  \"seconds\": %.6f,\n  \"partition\": ", r->seconds);
    if (!r->partition) {
        printf("null");
    } else {
        printf("{\"layout_changes\": %u, \"ep_rewrites\": %u, \"eps\": [", r->partition->n_layout_changes,
               r->ep_rewrites);
        for (uint32_t i = 0; i < r->n_eps; i++) {
            uint64_t nodes;
            uint32_t subgraphs;
            partition_ep_totals(r->partition, r->eps[i], &nodes, &subgraphs);
            printf("%s{\"ep\": ", i ? ", " : "");
            pc_json_string(stdout, r->eps[i]->name);
            printf(", \"nodes\": %llu, \"subgraphs\": %u, \"compiles\": %s}", (unsigned long long)nodes,
                   subgraphs, r->eps[i]->compiles ? "true" : "false");
        }
        printf("]}");
    }
    printf(",\n  \"trace\": ");
    if (!r->trace) {
        printf("null");
    } else {
        printf("[");
        for (size_t i = 0; i < r->trace->n; i++) {
            printf("%s\n    {\"pass\": ", i ? "," : "");
            pc_json_string(stdout, r->trace->items[i].pass);
            printf(", \"message\": ");
            pc_json_string(stdout, r->trace->items[i].message);
            printf("}");
        }
        printf("%s]", r->trace->n ? "\n  " : "");
    }
    printf("\n}\n");
}

static bool eps_all_nchw(const pc_ep *const *eps, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (eps[i]->layout != PC_LAYOUT_NCHW) return false;
    return true;
}

int pc_cmd_optimize(int argc, char **argv)
{
    optimize_args args = {.level = PC_LEVEL_MAX};
    int rc = args_parse(argc, argv, &args);
    if (rc != PC_EXIT_OK) return rc;

    pc_error err;
    pc_error_clear(&err);
    pc_ep_registry *reg = NULL;
    pc_model *model = NULL;
    trace_log log = {.json = args.json};
    const pc_ep **eps = NULL;
    uint32_t n_eps = 0;
    pc_partition_result partition;
    memset(&partition, 0, sizeof partition);

    /* --layer-assignment is parsed here only for an early error with its position; the pipeline parses it
     * again */
    rc = pc_cli_resolve_eps(OPT_CMD, args.ep_file, args.ep_list, args.layer_assignment, &reg, &eps, &n_eps,
                            NULL);
    if (rc != PC_EXIT_OK) goto done;
    if ((rc = pc_cli_check_writable(OPT_CMD, "-o", args.out)) != PC_EXIT_OK) goto done;
    if (pc_model_load_file(args.model, NULL, &model, &err) != PC_OK) {
        rc = pc_cli_report(OPT_CMD, &err);
        goto done;
    }

    optimize_report rep = {.args = &args, .eps = (const pc_ep *const *)eps, .n_eps = n_eps};
    graph_count(model->graph, &rep.before);
    rep.cost_before = pc_graph_transpose_cost(model->graph);

    pc_trace trace = {trace_emit, &log};
    pc_optimize_options opts;
    pc_optimize_options_default(&opts);
    opts.level = args.level;
    opts.eps = (const pc_ep *const *)eps;
    opts.n_eps = n_eps;
    opts.layer_assignment = args.layer_assignment;
    pc_rewrite_counts counts;
    memset(&counts, 0, sizeof counts);
    opts.rewrites = &counts;
    if (args.explain) {
        opts.trace = &trace;
        if (!args.json) opts.after_pass = after_pass_report;
    }
    double t0 = pc_now_seconds();
    if (pc_model_optimize(model, &opts, args.level >= PC_LEVEL_LAYOUT ? &partition : NULL, &err) != PC_OK) {
        pc_error_prefix(&err, "%s: ", args.model);
        rc = pc_cli_report(OPT_CMD, &err);
        goto done;
    }
    rep.seconds = pc_now_seconds() - t0;
    if (log.failed) {
        pc_error_set(&err, PC_ERR_NOMEM, "out of memory recording the --explain trace");
        rc = pc_cli_report(OPT_CMD, &err);
        goto done;
    }
    if (eps_all_nchw(rep.eps, n_eps)) {
        const pc_node *bad = graph_find_internal(model->graph);
        if (bad) {
            /* a pass bug, not the input's fault: refuse to write a file ONNX Runtime cannot load */
            pc_error_set(
                &err, PC_ERR_INTERNAL,
                "%s: node '%s' (%s:%s) is still in an internal domain after optimizing for NCHW-only EPs; "
                "nothing written",
                args.model, bad->name ? bad->name : "", bad->domain, bad->op_type);
            rc = pc_cli_report(OPT_CMD, &err);
            goto done;
        }
    }
    for (int k = 0; k < PC_RW_COUNT; k++)
        if (strcmp(pc_rewrite_kind_pass((pc_rewrite_kind)k), "ep_rewrites") == 0)
            rep.ep_rewrites += counts.fired[k];
    graph_count(model->graph, &rep.after);
    rep.cost_after = pc_graph_transpose_cost(model->graph);
    rep.partition = args.level >= PC_LEVEL_LAYOUT ? &partition : NULL;
    rep.trace = args.explain && args.json ? &log : NULL;

    if (pc_model_save_file(model, args.out, &err) != PC_OK) {
        rc = pc_cli_report(OPT_CMD, &err);
        goto done;
    }
    if (args.json)
        report_json(&rep);
    else
        report_text(&rep);

done:
    fflush(stdout);
    trace_log_free(&log);
    pc_model_free(model);
    pc_ep_registry_free(reg);
    return rc;
}

void pc_cmd_optimize_help(FILE *out)
{
    fprintf(
        out,
        "usage: passcheck optimize MODEL -o OUT [--level N] [--ep LIST] [--ep-file F] [--layer-assignment "
        "S]\n"
        "                          [--explain] [--json]\n"
        "\n"
        "Loads MODEL, runs the pass pipeline up to level N and writes the result to OUT (a temporary file\n"
        "renamed into place, so a failure leaves OUT as it was; OUT may be MODEL itself).\n"
        "\n"
        "  -o, --output OUT        where to write the optimized model (required)\n"
        "  --level N               0 basic, 1 extended, 2 partitioning + layout, 3 EP rewrites (default 3);\n"
        "                          below 2 nothing is partitioned\n"
        "  --ep LIST               EPs in priority order, e.g. nhwc,cpu (default cpu)\n"
        "  --ep-file F             add the EPs described in F (docs/ep.md)\n"
        "  --layer-assignment S    pin annotated nodes to EPs: 'nhwc(encoder, =head); cpu(post)'\n"
        "  --explain               print every change each pass makes, and a line per pass that changed\n"
        "  --json                  print the summary (and with --explain the trace) as one JSON object\n"
        "\n"
        "With only NCHW EPs (the default cpu) the output is standard ONNX that ONNX Runtime loads (except "
        "the\n"
        "systolic EP's QLinearConv_nhwc, in its own domain).\n"
        "exit codes: 0 ok, 2 usage error, 3 bad or unreadable MODEL, --ep-file or OUT, 4 internal error\n");
}
