/* Graphviz pictures of a model for repro folders (pc_model_write_dot in shrink.h): one box per node with its
 * op, name, the attributes that decide layouts and types, EP and layer_ann; graph inputs, initializers and
 * graph outputs as distinct shapes; every edge labelled with the value's type, e.g. "float[1,3,4,4]", so a
 * layout bug is visible without opening the model. Before/after pairs outline what the pass added, changed
 * and removed. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "properties/match.h"
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

/* The attributes a reader of a layout or type bug needs; others (epsilon, alpha, ...) would crowd the box. */
static const char *const shown_attrs[] = {"axis",     "axes",      "perm",  "pads",       "kernel_shape",
                                          "strides",  "dilations", "group", "to",         "keepdims",
                                          "auto_pad", "mode",      "split", "activation", "blocksize"};

static void put_attr(FILE *out, const pc_attr *at)
{
    enum { MAX_SHOWN = 8 }; /* a long list is cut: the model has the rest */
    switch (at->type) {
    case PC_ATTR_INT:
        fprintf(out, "%" PRId64, at->i);
        break;
    case PC_ATTR_FLOAT:
        fprintf(out, "%g", (double)at->f);
        break;
    case PC_ATTR_STRING: {
        char buf[64]; /* bytes, not a C string; cut to a label's worth */
        size_t len = at->s.len < sizeof buf - 1 ? at->s.len : sizeof buf - 1;
        if (len) memcpy(buf, at->s.data, len);
        buf[len] = '\0';
        fputc('\'', out);
        put_escaped(out, buf);
        fputc('\'', out);
        break;
    }
    case PC_ATTR_INTS:
        fputc('[', out);
        for (size_t k = 0; k < at->n && k < MAX_SHOWN; k++)
            fprintf(out, "%s%" PRId64, k ? "," : "", at->ints[k]);
        fputs(at->n > MAX_SHOWN ? ",...]" : "]", out);
        break;
    case PC_ATTR_FLOATS:
        fputc('[', out);
        for (size_t k = 0; k < at->n && k < MAX_SHOWN; k++)
            fprintf(out, "%s%g", k ? "," : "", (double)at->floats[k]);
        fputs(at->n > MAX_SHOWN ? ",...]" : "]", out);
        break;
    default:
        fputs("...", out);
        break;
    }
}

typedef enum dot_mark { MARK_NONE, MARK_ADDED, MARK_CHANGED, MARK_REMOVED } dot_mark;

static const char *const mark_color[] = {NULL, "#38761d", "#e69138", "#cc0000"};
static const char *const mark_word[] = {NULL, "added by the pass", "changed by the pass",
                                        "removed by the pass"};

/* A type for v: its own, or (marked "~") what inference got for the same name in `inferred`. */
static void put_value_type(FILE *out, const pc_value *v, const pc_graph *inferred)
{
    const pc_value *w =
        v->type.kind == PC_TYPE_NONE && inferred ? pc_graph_find_value(inferred, v->name) : NULL;
    if (w && w->type.kind != PC_TYPE_NONE) {
        fputc('~', out);
        put_type(out, &w->type, 0);
        return;
    }
    put_type(out, &v->type, 0);
}

static bool graph_assigned(const pc_graph *g)
{
    for (const pc_node *n = g->first; n; n = n->next)
        if (!n->removed && n->ep) return true;
    return false;
}

/* marks: per node id (NULL: none); inferred: a copy of m with shapes inferred, or NULL; assigned: the graph
 * is partitioned (a node without an EP then says "ep: (none)"). */
static pc_status write_dot(const pc_model *m, const uint8_t *marks, const pc_graph *inferred, bool assigned,
                           FILE *out, pc_error *err)
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

    uint32_t index = 0;
    for (const pc_node *n = g->first; n; n = n->next) {
        if (n->removed) continue;
        index++;
        dot_mark mk = marks ? (dot_mark)marks[n->id] : MARK_NONE;
        fprintf(out, "  n%" PRIu32 " [shape=box, style=\"rounded,filled\", fillcolor=\"%s\"", n->id,
                ep_color(n->ep));
        if (mk != MARK_NONE) fprintf(out, ", color=\"%s\", penwidth=3", mark_color[mk]);
        fputs(", label=\"", out);
        if (n->domain && *n->domain) {
            put_escaped(out, n->domain);
            fputc('.', out);
        }
        put_escaped(out, n->op_type);
        fputs("\\n", out);
        if (n->name && *n->name)
            put_escaped(out, n->name);
        else
            fprintf(out, "#%" PRIu32 " (unnamed)", index); /* graph order: stable for one model */
        for (size_t k = 0; k < sizeof shown_attrs / sizeof shown_attrs[0]; k++) {
            const pc_attr *at = pc_node_attr(n, shown_attrs[k]);
            if (!at) continue;
            fprintf(out, "\\n%s=", shown_attrs[k]);
            put_attr(out, at);
        }
        if (n->ep) {
            fputs("\\nep: ", out);
            put_escaped(out, n->ep);
        } else if (assigned) {
            fputs("\\nep: (none)", out);
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
        if (mk != MARK_NONE) fprintf(out, "\\n(%s)", mark_word[mk]);
        fputs("\"];\n", out);
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            const pc_value *v = n->inputs[k];
            if (!v) continue;
            fputs("  ", out);
            put_source_id(out, v);
            fprintf(out, " -> n%" PRIu32 " [label=\"", n->id);
            put_value_type(out, v, inferred);
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
        put_value_type(out, v, inferred);
        fputs("\"];\n", out);
    }
    fputs("}\n", out);
    if (ferror(out)) return pc_error_set(err, PC_ERR_IO, "writing the DOT picture failed");
    return PC_OK;
}

/* A private copy of m with shapes inferred, for labelling untyped values; NULL when inference cannot run
 * (the picture then shows "?" there). */
static pc_model *inferred_copy(const pc_model *m)
{
    uint8_t *bytes = NULL;
    size_t size = 0;
    pc_error e;
    pc_model *c = NULL;
    if (pc_model_save_bytes(m, &bytes, &size, &e) != PC_OK) return NULL;
    pc_load_options o;
    pc_load_options_default(&o);
    o.skip_verify = true;
    if (pc_model_load_bytes(bytes, size, &o, &c, &e) == PC_OK &&
        pc_graph_infer_shapes(c->graph, &e) != PC_OK) {
        pc_model_free(c);
        c = NULL;
    }
    free(bytes);
    return c;
}

pc_status pc_model_write_dot(const pc_model *m, FILE *out, pc_error *err)
{
    pc_model *inf = m->graph ? inferred_copy(m) : NULL;
    pc_status st =
        write_dot(m, NULL, inf ? inf->graph : NULL, m->graph && graph_assigned(m->graph), out, err);
    pc_model_free(inf);
    return st;
}

pc_status pc_model_write_dot_pair(const pc_model *before, const pc_model *after, FILE *out_before,
                                  FILE *out_after, pc_error *err)
{
    if (!before->graph || !after->graph)
        return pc_error_set(err, PC_ERR_MISSING_FIELD, "model has no graph to draw");
    node_match mt;
    pc_status st = match_build(before->graph, after->graph, &mt, err);
    if (st != PC_OK) return st;
    uint8_t *mb = calloc(before->graph->next_node_id ? before->graph->next_node_id : 1, 1);
    uint8_t *ma = calloc(after->graph->next_node_id ? after->graph->next_node_id : 1, 1);
    if (!mb || !ma) {
        st = pc_error_set(err, PC_ERR_NOMEM, "out of memory marking the pass's nodes");
    } else {
        /* main-graph nodes only: bodies are not drawn */
        for (uint32_t i = 0; i < mt.n_before; i++)
            if (mt.before[i]->graph == before->graph)
                mb[mt.before[i]->id] = !mt.before_kept[i]     ? MARK_REMOVED
                                       : mt.before_changed[i] ? MARK_CHANGED
                                                              : MARK_NONE;
        for (uint32_t i = 0; i < mt.n_after; i++) {
            if (mt.after[i]->graph != after->graph) continue;
            int32_t b = mt.after_to_before[i];
            ma[mt.after[i]->id] = b < 0 ? MARK_ADDED : mt.before_changed[b] ? MARK_CHANGED : MARK_NONE;
        }
        pc_model *ib = inferred_copy(before), *ia = inferred_copy(after);
        bool assigned = graph_assigned(before->graph) || graph_assigned(after->graph);
        st = write_dot(before, mb, ib ? ib->graph : NULL, assigned, out_before, err);
        if (st == PC_OK) st = write_dot(after, ma, ia ? ia->graph : NULL, assigned, out_after, err);
        pc_model_free(ib);
        pc_model_free(ia);
    }
    free(mb);
    free(ma);
    match_free(&mt);
    return st;
}
