/* Graphviz pictures of a model for repro folders (pc_model_write_dot in shrink.h): one box per node with its
 * op, name, EP and layer_ann; graph inputs, initializers and graph outputs as distinct shapes; every edge
 * labelled with the value's type, e.g. "float[1,3,4,4]", so a layout bug is visible without opening the
 * model. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "properties/shrink/shrink.h"

/* A string inside a DOT double-quoted id/label: quotes and backslashes escaped, line breaks as \n, other
 * control characters dropped (names come from files and may hold anything). */
static void put_escaped(FILE *out, const char *s)
{
    if (!s) return;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            fputc('\\', out);
            fputc(*p, out);
        } else if (*p == '\n') {
            fputs("\\n", out);
        } else if (*p >= 0x20 && *p != 0x7f) {
            fputc(*p, out);
        }
    }
}

static void put_dims(FILE *out, const pc_shape *s)
{
    if (s->rank < 0) return; /* rank unknown: element type alone */
    fputc('[', out);
    for (int32_t i = 0; i < s->rank; i++) {
        if (i) fputc(',', out);
        const pc_dim *d = &s->dims[i];
        if (d->kind == PC_DIM_KNOWN)
            fprintf(out, "%" PRId64, d->size);
        else if (d->kind == PC_DIM_SYMBOLIC)
            put_escaped(out, d->symbol);
        else
            fputc('?', out);
    }
    fputc(']', out);
}

static void put_type(FILE *out, const pc_type *t, int depth)
{
    if (depth > 8) {
        fputs("...", out);
        return;
    }
    switch (t->kind) {
    case PC_TYPE_TENSOR:
    case PC_TYPE_SPARSE_TENSOR:
        fputs(t->kind == PC_TYPE_SPARSE_TENSOR ? "sparse " : "", out);
        fputs(t->elem == PC_DTYPE_UNDEFINED ? "?" : pc_dtype_name(t->elem), out);
        put_dims(out, &t->shape);
        break;
    case PC_TYPE_SEQUENCE:
    case PC_TYPE_OPTIONAL:
        fputs(t->kind == PC_TYPE_SEQUENCE ? "seq(" : "optional(", out);
        if (t->inner)
            put_type(out, t->inner, depth + 1);
        else
            fputc('?', out);
        fputc(')', out);
        break;
    case PC_TYPE_MAP:
        fprintf(out, "map(%s,", pc_dtype_name(t->key));
        if (t->inner)
            put_type(out, t->inner, depth + 1);
        else
            fputc('?', out);
        fputc(')', out);
        break;
    default:
        fputc('?', out);
        break;
    }
}

/* Pastel fill per EP name (stable: a hash of the name), white when unassigned. */
static const char *ep_color(const char *ep)
{
    static const char *const palette[] = {"#cfe2f3", "#fce5cd", "#d9d2e9", "#fff2cc", "#d0e0e3", "#ead1dc"};
    if (!ep || !*ep) return "#ffffff";
    if (strcmp(ep, "cpu") == 0) return "#e6e6e6";
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)ep; *p; p++)
        h = (h ^ *p) * 16777619u;
    return palette[h % (sizeof palette / sizeof palette[0])];
}

/* The DOT id of the thing that produces value v: a node, or v's own source box. */
static void put_source_id(FILE *out, const pc_value *v)
{
    if (v->producer)
        fprintf(out, "n%" PRIu32, v->producer->id);
    else
        fprintf(out, "v%" PRIu32, v->id);
}

pc_status pc_model_write_dot(const pc_model *m, FILE *out, pc_error *err)
{
    pc_error_clear(err);
    const pc_graph *g = m->graph;
    if (!g) return pc_error_set(err, PC_ERR_MISSING_FIELD, "model has no graph to draw");
    fputs("digraph \"", out);
    put_escaped(out, g->name && *g->name ? g->name : "graph");
    fputs("\" {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
          "  edge [fontname=\"Helvetica\", fontsize=9];\n",
          out);

    /* sources: graph inputs (green ellipses), initializers (grey notes), outer-scope values (dashed) */
    for (uint32_t i = 0; i < g->n_values; i++) {
        const pc_value *v = g->values[i];
        if (v->producer || (!v->is_graph_input && !v->initializer && !v->outer)) continue;
        if (!v->is_graph_output && v->n_consumers == 0) continue; /* a dropped value nobody reads */
        fprintf(out, "  v%" PRIu32 " [", v->id);
        if (v->initializer)
            fputs("shape=note, style=filled, fillcolor=\"#eeeeee\", label=\"", out);
        else if (v->is_graph_input)
            fputs("shape=ellipse, style=filled, fillcolor=\"#d9ead3\", label=\"input ", out);
        else
            fputs("shape=ellipse, style=dashed, label=\"outer ", out);
        put_escaped(out, v->name);
        fputs("\\n", out);
        put_type(out, &v->type, 0);
        fputs("\"];\n", out);
    }

    for (const pc_node *n = g->first; n; n = n->next) {
        if (n->removed) continue;
        fprintf(out, "  n%" PRIu32 " [shape=box, style=\"rounded,filled\", fillcolor=\"%s\", label=\"", n->id,
                ep_color(n->ep));
        if (n->domain && *n->domain) {
            put_escaped(out, n->domain);
            fputc('.', out);
        }
        put_escaped(out, n->op_type);
        fputs("\\n", out);
        put_escaped(out, n->name);
        if (n->ep) {
            fputs("\\nep: ", out);
            put_escaped(out, n->ep);
        }
        const char *ann = pc_node_annotation(n);
        if (ann) {
            fputs("\\nlayer_ann: ", out);
            put_escaped(out, ann);
        }
        for (uint32_t a = 0; a < n->n_attrs; a++)
            if (n->attrs[a].type == PC_ATTR_GRAPH || n->attrs[a].type == PC_ATTR_GRAPHS) {
                fputs("\\n(subgraph not drawn)", out);
                break;
            }
        fputs("\"];\n", out);
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            const pc_value *v = n->inputs[k];
            if (!v) continue;
            fputs("  ", out);
            put_source_id(out, v);
            fprintf(out, " -> n%" PRIu32 " [label=\"", n->id);
            put_type(out, &v->type, 0);
            fputs("\", tooltip=\"", out);
            put_escaped(out, v->name);
            fputs("\"];\n", out);
        }
    }

    /* sinks: one red ellipse per graph output entry */
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        const pc_value *v = g->outputs[i];
        fprintf(out, "  o%" PRIu32 " [shape=ellipse, style=filled, fillcolor=\"#f4cccc\", label=\"output ",
                i);
        put_escaped(out, v->name);
        fputs("\"];\n  ", out);
        put_source_id(out, v);
        fprintf(out, " -> o%" PRIu32 " [label=\"", i);
        put_type(out, &v->type, 0);
        fputs("\"];\n", out);
    }
    fputs("}\n", out);
    if (ferror(out)) return pc_error_set(err, PC_ERR_IO, "writing the DOT picture failed");
    return PC_OK;
}
