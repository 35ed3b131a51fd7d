/* passcheck info MODEL [--json]: what a model contains, for humans and for scripts. */
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"

typedef struct count_entry {
    const char *a; /* domain, annotation or EP */
    const char *b; /* op type (NULL for single-key tables) */
    uint64_t count;
} count_entry;

typedef struct count_table {
    count_entry *items;
    size_t n, cap;
    bool failed;
} count_table;

static bool str_same(const char *x, const char *y)
{
    if (!x || !y) return x == y;
    return strcmp(x, y) == 0;
}

static void count_add(count_table *t, const char *a, const char *b)
{
    for (size_t i = 0; i < t->n; i++)
        if (str_same(t->items[i].a, a) && str_same(t->items[i].b, b)) {
            t->items[i].count++;
            return;
        }
    if (t->n == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 32;
        count_entry *ni = realloc(t->items, ncap * sizeof *ni);
        if (!ni) {
            t->failed = true;
            return;
        }
        t->items = ni;
        t->cap = ncap;
    }
    t->items[t->n++] = (count_entry){a, b, 1};
}

static int count_cmp(const void *x, const void *y)
{
    const count_entry *p = x, *q = y;
    int c = strcmp(p->a ? p->a : "", q->a ? q->a : "");
    if (c) return c;
    return strcmp(p->b ? p->b : "", q->b ? q->b : "");
}

typedef struct info_stats {
    count_table ops, anns, eps;
    uint64_t main_nodes, subgraph_nodes, subgraphs;
    uint64_t unannotated, unassigned;
} info_stats;

static void walk_graph(info_stats *s, const pc_graph *g, bool top)
{
    for (const pc_node *n = g->first; n; n = n->next) {
        if (top)
            s->main_nodes++;
        else
            s->subgraph_nodes++;
        count_add(&s->ops, n->domain, n->op_type);
        const char *ann = pc_node_annotation(n);
        if (ann)
            count_add(&s->anns, ann, NULL);
        else
            s->unannotated++;
        if (n->ep)
            count_add(&s->eps, n->ep, NULL);
        else
            s->unassigned++;
        for (uint32_t i = 0; i < n->n_attrs; i++) {
            const pc_attr *a = &n->attrs[i];
            if (a->type == PC_ATTR_GRAPH) {
                s->subgraphs++;
                walk_graph(s, a->g, false);
            }
            for (size_t k = 0; a->type == PC_ATTR_GRAPHS && k < a->n; k++) {
                s->subgraphs++;
                walk_graph(s, a->graphs[k], false);
            }
        }
    }
}

static void print_values_text(const char *title, uint32_t n, pc_value *const *values)
{
    printf("%s (%u):\n", title, n);
    for (uint32_t i = 0; i < n; i++) {
        printf("  %s: ", values[i]->name);
        pc_type_describe(stdout, &values[i]->type);
        printf("\n");
    }
}

static void print_values_json(const char *key, uint32_t n, pc_value *const *values)
{
    printf("  \"%s\": [", key);
    for (uint32_t i = 0; i < n; i++) {
        printf("%s{\"name\": ", i ? ", " : "");
        pc_json_string(stdout, values[i]->name);
        printf(", \"type\": ");
        /* dim_param symbols are arbitrary strings: describe into memory, then escape */
        char *desc = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&desc, &len);
        if (mem) {
            pc_type_describe(mem, &values[i]->type);
            fclose(mem);
        }
        pc_json_string_n(stdout, desc ? desc : "?", desc ? len : 1);
        free(desc);
        printf("}");
    }
    printf("],\n");
}

/* "TITLE:" then one "count value" line per entry, or "NONE_TITLE: none". title_fmt takes the uncounted nodes.
 */
static void print_counts_text(const char *title_fmt, const char *none_title, const count_table *t,
                              uint64_t without)
{
    if (!t->n) {
        printf("%s: none\n", none_title);
        return;
    }
    printf(title_fmt, (unsigned long long)without);
    printf(":\n");
    for (size_t i = 0; i < t->n; i++)
        printf("  %-8llu %s\n", (unsigned long long)t->items[i].count, t->items[i].a);
}

static void print_counts_json(const char *key, const count_table *t, bool last)
{
    printf("  \"%s\": {", key);
    for (size_t i = 0; i < t->n; i++) {
        printf("%s", i ? ", " : "");
        pc_json_string(stdout, t->items[i].a);
        printf(": %llu", (unsigned long long)t->items[i].count);
    }
    printf("}%s\n", last ? "" : ",");
}

void pc_cmd_info_help(FILE *out)
{
    fprintf(out,
            "usage: passcheck info MODEL [--json]\n\n"
            "Loads and verifies MODEL (ONNX or ORT format) and prints: IR and opset versions, producer, node "
            "counts per op\n"
            "and domain (main graph and subgraphs), graph inputs/outputs with element types and shapes,\n"
            "initializer count and bytes, layering annotations (per value of the node metadata key\n"
            "'layer_ann') and EP assignments.\n\n"
            "  --json   machine-readable output (one JSON object)\n\n"
            "exit codes: 0 ok, 2 usage error, 3 the model is malformed or unreadable, 4 internal error\n");
}

typedef struct info_args {
    const char *path;
    bool json;
} info_args;

int pc_cmd_info(int argc, char **argv)
{
    static const pc_cli_opt opts[] = {{"--json", NULL, PC_CLI_FLAG, offsetof(info_args, json)}};
    static const pc_cli_positional model_arg = {"MODEL", PC_CLI_STRING, offsetof(info_args, path)};
    info_args a = {0};
    int parsed = pc_cli_parse_args("info", argc, argv, opts, sizeof opts / sizeof opts[0], &a, &model_arg);
    if (parsed != PC_EXIT_OK) return parsed;
    const char *path = a.path;
    bool json = a.json;
    pc_error err;
    pc_model *m;
    if (pc_model_load_file(path, NULL, &m, &err) != PC_OK) return pc_cli_report("info", &err);

    info_stats s = {0};
    walk_graph(&s, m->graph, true);
    int rc = PC_EXIT_OK;
    if (s.ops.failed || s.anns.failed || s.eps.failed) {
        fprintf(stderr, "passcheck info: out of memory\n");
        rc = PC_EXIT_INTERNAL;
        goto out;
    }
    if (s.ops.n > 1) qsort(s.ops.items, s.ops.n, sizeof(count_entry), count_cmp);
    if (s.anns.n > 1) qsort(s.anns.items, s.anns.n, sizeof(count_entry), count_cmp);
    if (s.eps.n > 1) qsort(s.eps.items, s.eps.n, sizeof(count_entry), count_cmp);
    uint64_t init_bytes = 0;
    for (uint32_t i = 0; i < m->graph->n_initializers; i++)
        init_bytes += m->graph->initializers[i]->initializer->n_bytes;

    if (json) {
        printf("{\n  \"path\": ");
        pc_json_string(stdout, path);
        printf(",\n  \"ir_version\": %lld,\n  \"producer_name\": ", (long long)m->ir_version);
        pc_json_string(stdout, m->producer_name ? m->producer_name : "");
        printf(",\n  \"producer_version\": ");
        pc_json_string(stdout, m->producer_version ? m->producer_version : "");
        printf(",\n  \"opsets\": {");
        for (uint32_t i = 0; i < m->n_opsets; i++) {
            printf("%s", i ? ", " : "");
            pc_json_string(stdout, *m->opsets[i].domain ? m->opsets[i].domain : "ai.onnx");
            printf(": %lld", (long long)m->opsets[i].version);
        }
        printf("},\n  \"graph_name\": ");
        pc_json_string(stdout, m->graph->name ? m->graph->name : "");
        printf(",\n  \"nodes\": %llu,\n  \"subgraph_nodes\": %llu,\n  \"subgraphs\": %llu,\n",
               (unsigned long long)s.main_nodes, (unsigned long long)s.subgraph_nodes,
               (unsigned long long)s.subgraphs);
        printf("  \"ops\": [");
        for (size_t i = 0; i < s.ops.n; i++) {
            printf("%s{\"domain\": ", i ? ", " : "");
            pc_json_string(stdout, *s.ops.items[i].a ? s.ops.items[i].a : "ai.onnx");
            printf(", \"op\": ");
            pc_json_string(stdout, s.ops.items[i].b);
            printf(", \"count\": %llu}", (unsigned long long)s.ops.items[i].count);
        }
        printf("],\n");
        print_values_json("inputs", m->graph->n_inputs, m->graph->inputs);
        print_values_json("outputs", m->graph->n_outputs, m->graph->outputs);
        printf("  \"initializers\": %u,\n  \"initializer_bytes\": %llu,\n", m->graph->n_initializers,
               (unsigned long long)init_bytes);
        printf("  \"unannotated_nodes\": %llu,\n", (unsigned long long)s.unannotated);
        print_counts_json("annotations", &s.anns, false);
        printf("  \"unassigned_nodes\": %llu,\n", (unsigned long long)s.unassigned);
        print_counts_json("ep_assignments", &s.eps, true);
        printf("}\n");
    } else {
        printf("model: %s\n", path);
        printf("ir_version: %lld\n", (long long)m->ir_version);
        printf("producer: %s %s\n", m->producer_name && *m->producer_name ? m->producer_name : "(none)",
               m->producer_version ? m->producer_version : "");
        printf("opsets:");
        for (uint32_t i = 0; i < m->n_opsets; i++)
            printf(" %s=%lld", *m->opsets[i].domain ? m->opsets[i].domain : "ai.onnx",
                   (long long)m->opsets[i].version);
        printf("\ngraph: '%s', %llu nodes", m->graph->name ? m->graph->name : "",
               (unsigned long long)s.main_nodes);
        if (s.subgraphs)
            printf(" (+%llu in %llu subgraphs)", (unsigned long long)s.subgraph_nodes,
                   (unsigned long long)s.subgraphs);
        printf("\nops (%zu kinds):\n", s.ops.n);
        for (size_t i = 0; i < s.ops.n; i++)
            printf("  %-8llu %s%s%s\n", (unsigned long long)s.ops.items[i].count, s.ops.items[i].a,
                   *s.ops.items[i].a ? "." : "", s.ops.items[i].b);
        print_values_text("inputs", m->graph->n_inputs, m->graph->inputs);
        print_values_text("outputs", m->graph->n_outputs, m->graph->outputs);
        printf("initializers: %u (%llu bytes)\n", m->graph->n_initializers, (unsigned long long)init_bytes);
        print_counts_text("annotations (layer_ann; %llu nodes without)", "annotations", &s.anns,
                          s.unannotated);
        print_counts_text("ep assignments (%llu nodes unassigned)", "ep assignments", &s.eps, s.unassigned);
    }
    if (fflush(stdout) != 0) rc = PC_EXIT_INTERNAL;
out:
    free(s.ops.items);
    free(s.anns.items);
    free(s.eps.items);
    pc_model_free(m);
    return rc;
}
