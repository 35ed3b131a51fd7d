/* passcheck partition MODEL [--ep LIST] [--ep-file F] [--layer-assignment S] [--json]: assign every node of
 * the main graph to an EP (layout transformer included) and list the subgraphs each EP would compile. */
#include <stddef.h>
#include <string.h>

#include "core/internal.h"
#include "tools/cli.h"

#define PART_CMD "partition"

typedef struct partition_args {
    const char *model;
    const char *ep_list;
    const char *ep_file;
    const char *layer_assignment;
    bool json;
} partition_args;

static const pc_cli_opt part_opts[] = {
    {"--ep", NULL, PC_CLI_STRING, offsetof(partition_args, ep_list)},
    {"--ep-file", NULL, PC_CLI_STRING, offsetof(partition_args, ep_file)},
    {"--layer-assignment", NULL, PC_CLI_STRING, offsetof(partition_args, layer_assignment)},
    {"--json", NULL, PC_CLI_FLAG, offsetof(partition_args, json)},
};

void pc_cmd_partition_help(FILE *out)
{
    fprintf(
        out,
        "usage: passcheck partition MODEL [--ep LIST] [--ep-file F] [--layer-assignment S] [--json]\n\n"
        "Assigns every node to an execution provider, as the optimizer does between levels 1 and 2: EPs are\n"
        "asked in priority order; an EP preferring NHWC gets its layout-sensitive nodes moved to the "
        "internal\n"
        "NHWC domain and is asked again for the new Transposes. Prints the EP of every node and the "
        "subgraphs\n"
        "each compiling EP would fuse (one line per node for non-compiling EPs), and why no NHWC-preferring\n"
        "EP took a layout-sensitive node (Conv, pools, ...) that went to an EP after it.\n\n"
        "  --ep LIST               EPs in priority order, comma-separated (default: cpu); built in: cpu, "
        "nhwc\n"
        "  --ep-file F             more EPs described in a text file (docs/ep.md)\n"
        "  --layer-assignment S    pin annotated nodes to EPs: 'nhwc(encoder, =head); cpu(post)'; a pattern\n"
        "                          is a prefix of the node's layer_ann, or exact with a leading '='; the\n"
        "                          leftmost matching pattern wins; an EP that does not claim a pinned node\n"
        "                          releases it to later EPs\n"
        "  --json                  machine-readable output\n\n"
        "exit codes: 0 ok, 1 a node moved to NHWC was left unclaimed, 2 usage error (bad option, EP list or\n"
        "layer assignment), 3 bad model or --ep-file, or a node no EP claims, 4 internal error\n");
}

static const pc_cli_positional model_arg = {"MODEL", PC_CLI_STRING, offsetof(partition_args, model)};

static int args_parse(int argc, char **argv, partition_args *a)
{
    int rc = pc_cli_parse_args(PART_CMD, argc, argv, part_opts, sizeof part_opts / sizeof part_opts[0], a,
                               &model_arg);
    if (rc != PC_EXIT_OK) return rc;
    if (a->ep_file && !a->ep_file[0]) return pc_cli_usage_error(PART_CMD, "--ep-file: empty file name");
    if (!a->ep_list) a->ep_list = "cpu";
    return PC_EXIT_OK;
}

/* Unnamed nodes (common in the backend test data) are shown as "#<id>", the node's id in its graph. */
static const char *node_label(const pc_node *n, char *buf, size_t size)
{
    if (n->name && n->name[0]) return n->name;
    snprintf(buf, size, "#%u", n->id);
    return buf;
}

/* A layout-sensitive ai.onnx node left to an EP after an NHWC-preferring one in priority: the layout
 * transformer never saw it, which a user bringing up an EP needs to know, with the reason. */
static bool layout_node_missed(const pc_node *n, const pc_ep *const *eps, uint32_t n_eps)
{
    if (n->domain[0] || !pc_op_is_layout_sensitive(n->domain, n->op_type) || !n->ep) return false;
    for (uint32_t i = 0; i < n_eps && strcmp(eps[i]->name, n->ep) != 0; i++)
        if (eps[i]->layout == PC_LAYOUT_NHWC) return true;
    return false;
}

/* Why EP e did not take node n: its capability's reason, or (it claims it) the layer assignment. */
static void refusal(const pc_ep *e, const pc_node *n, char *why, size_t size)
{
    if (pc_ep_claims_node(e, n, why, size))
        snprintf(why, size, "claims it, but the node was pinned elsewhere (layer assignment or a saved EP)");
}

static void print_unclaimed(const pc_model *m, const pc_ep *const *eps, uint32_t n_eps)
{
    bool any = false;
    char buf[32], why[256];
    for (const pc_node *n = m->graph->first; n; n = n->next) {
        if (!layout_node_missed(n, eps, n_eps)) continue;
        if (!any) printf("layout-sensitive nodes no NHWC EP took:\n");
        any = true;
        printf("  %s %s -> %s:", node_label(n, buf, sizeof buf), n->op_type, n->ep);
        for (uint32_t i = 0; i < n_eps && strcmp(eps[i]->name, n->ep) != 0; i++) {
            refusal(eps[i], n, why, sizeof why);
            printf(" %s: %s;", eps[i]->name, why);
        }
        printf("\n");
    }
}

static void print_text(const partition_args *a, const pc_model *m, const pc_ep *const *eps, uint32_t n_eps,
                       const pc_partition_result *r)
{
    printf("partition: %s: eps ", a->model);
    for (uint32_t i = 0; i < n_eps; i++)
        printf("%s%s", i ? "," : "", eps[i]->name);
    printf(", %u nodes, %u layout changes\n", m->graph->n_nodes, r->n_layout_changes);
    printf("nodes:\n");
    char buf[32];
    for (const pc_node *n = m->graph->first; n; n = n->next)
        printf("  %s %s%s%s -> %s\n", node_label(n, buf, sizeof buf), n->domain, n->domain[0] ? ":" : "",
               n->op_type, n->ep ? n->ep : "-");
    printf("subgraphs:\n");
    for (uint32_t i = 0; i < n_eps; i++) {
        uint32_t k = 0;
        for (uint32_t s = 0; s < r->n_subgraphs; s++) {
            const pc_ep_subgraph *sg = &r->subgraphs[s];
            if (sg->ep != eps[i]) continue;
            printf("  %s %s %u: %u node%s:", eps[i]->name, eps[i]->compiles ? "compiled" : "kernel", k++,
                   sg->n_nodes, sg->n_nodes == 1 ? "" : "s");
            for (uint32_t j = 0; j < sg->n_nodes; j++)
                printf(" %s", node_label(sg->nodes[j], buf, sizeof buf));
            printf("\n");
        }
    }
    print_unclaimed(m, eps, n_eps);
}

static void print_json(const partition_args *a, const pc_model *m, const pc_ep *const *eps, uint32_t n_eps,
                       const pc_partition_result *r)
{
    printf("{\n  \"model\": ");
    pc_json_string(stdout, a->model);
    printf(",\n  \"eps\": [");
    for (uint32_t i = 0; i < n_eps; i++) {
        printf("%s{\"name\": ", i ? ", " : "");
        pc_json_string(stdout, eps[i]->name);
        printf(", \"compiles\": %s}", eps[i]->compiles ? "true" : "false");
    }
    printf("],\n  \"layout_changes\": %u,\n  \"nodes\": [", r->n_layout_changes);
    bool first = true;
    for (const pc_node *n = m->graph->first; n; n = n->next, first = false) {
        printf("%s\n    {\"name\": ", first ? "" : ",");
        pc_json_string(stdout, n->name ? n->name : "");
        printf(", \"id\": %u, \"domain\": ", n->id);
        pc_json_string(stdout, n->domain);
        printf(", \"op\": ");
        pc_json_string(stdout, n->op_type);
        printf(", \"ep\": ");
        pc_json_string(stdout, n->ep ? n->ep : "");
        printf("}");
    }
    printf("\n  ],\n  \"subgraphs\": [");
    for (uint32_t s = 0; s < r->n_subgraphs; s++) {
        const pc_ep_subgraph *sg = &r->subgraphs[s];
        printf("%s\n    {\"ep\": ", s ? "," : "");
        pc_json_string(stdout, sg->ep->name);
        printf(", \"node_ids\": [");
        for (uint32_t j = 0; j < sg->n_nodes; j++) {
            printf("%s", j ? ", " : "");
            printf("%u", sg->nodes[j]->id);
        }
        printf("]}");
    }
    printf("%s],\n  \"layout_unclaimed\": [", r->n_subgraphs ? "\n  " : "");
    first = true;
    char why[256];
    for (const pc_node *n = m->graph->first; n; n = n->next) {
        if (!layout_node_missed(n, eps, n_eps)) continue;
        printf("%s\n    {\"id\": %u, \"op\": ", first ? "" : ",", n->id);
        first = false;
        pc_json_string(stdout, n->op_type);
        printf(", \"ep\": ");
        pc_json_string(stdout, n->ep);
        printf(", \"refused_by\": [");
        for (uint32_t i = 0; i < n_eps && strcmp(eps[i]->name, n->ep) != 0; i++) {
            refusal(eps[i], n, why, sizeof why);
            printf("%s{\"ep\": ", i ? ", " : "");
            pc_json_string(stdout, eps[i]->name);
            printf(", \"why\": ");
            pc_json_string(stdout, why);
            printf("}");
        }
        printf("]}");
    }
    printf("%s]\n}\n", first ? "" : "\n  ");
}

int pc_cmd_partition(int argc, char **argv)
{
    partition_args args = {0};
    int rc = args_parse(argc, argv, &args);
    if (rc != PC_EXIT_OK) return rc;

    pc_error err;
    pc_error_clear(&err);
    pc_ep_registry *reg = NULL;
    pc_layer_rules *rules = NULL;
    pc_model *model = NULL;
    const pc_ep **eps = NULL;
    uint32_t n_eps = 0;

    rc = pc_cli_resolve_eps(PART_CMD, args.ep_file, args.ep_list, args.layer_assignment, &reg, &eps, &n_eps,
                            &rules);
    if (rc != PC_EXIT_OK) goto done;
    if (pc_model_load_file(args.model, NULL, &model, &err) != PC_OK) {
        rc = pc_cli_report(PART_CMD, &err);
        goto done;
    }
    /* capabilities look at element types and ranks: give every value the type inference can find */
    if (pc_graph_infer_shapes(model->graph, &err) != PC_OK) {
        pc_error_prefix(&err, "%s: shape inference: ", args.model);
        rc = pc_cli_report(PART_CMD, &err);
        goto done;
    }
    pc_partition_result result;
    if (pc_model_partition(model, (const pc_ep *const *)eps, n_eps, rules, NULL, &result, &err) != PC_OK) {
        pc_error_prefix(&err, "%s: ", args.model);
        rc = pc_cli_report(PART_CMD, &err);
        goto done;
    }
    if (args.json)
        print_json(&args, model, (const pc_ep *const *)eps, n_eps, &result);
    else
        print_text(&args, model, (const pc_ep *const *)eps, n_eps, &result);
    rc = PC_EXIT_OK;
done:
    pc_model_free(model);
    pc_layer_rules_free(rules);
    pc_ep_registry_free(reg);
    return rc;
}
