/*
 * shrink_graph.c — the shrinker's second phase: edits on the failing graph itself (docs/shrinking.md).
 *
 * Phase 1 can only reach graphs the generator makes; this phase takes the last mile (and is all there is for
 * an outside model): cut the graph to fewer outputs or to one earlier value (Polygraphy's output cut),
 * replace a value by a new graph input or a constant holding its reference value on the case inputs (so
 * everything downstream computes the same numbers and the upstream nodes go dead), remove a node and
 * reconnect its consumers to a value of the same type and shape, drop attributes that have defaults,
 * layer_ann annotations, EPs from the case's list, its EP file and its layer-assignment string.
 *
 * Every candidate is a copy of the best case, edited, cleaned (dead nodes, unused inputs and initializers
 * go), verified (pc_model_verify, and shape inference when the starting model passed it), and measured: it is
 * checked only when it is strictly smaller than the best in the order (nodes, graph inputs, initializers,
 * attributes, annotations, EPs, layer assignment, EP file, tensor elements), so the phase always terminates.
 */
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "core/internal.h"
#include "properties/shrink/shrink_internal.h"

typedef struct graph_phase {
    pc_shrink_state *s;
    bool require_inference; /* the starting model passed shape inference: every candidate must too */
    /* reference values of the best model's values, by value id; recomputed when the best changes */
    uint64_t ref_version;
    bool ref_done;
    bool ref_ok; /* the reference executor ran the best model */
    pc_data **ref;
    uint32_t n_ref;
} graph_phase;

/* ---- measuring
 * ----------------------------------------------------------------------------------------------- */

enum {
    SIZE_NODES,
    SIZE_INPUTS,
    SIZE_INITS,
    SIZE_ATTRS,
    SIZE_ANNS,
    SIZE_EPS,
    SIZE_LA,
    SIZE_EP_TEXT,
    SIZE_ELEMS,
    SIZE_RANKS, /* after elements: dropping a leading size-1 axis keeps the elements */
    SIZE_COUNT
};

static uint64_t ep_list_count(const char *list)
{
    if (!list || !*list) return 0;
    uint64_t n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    return n;
}

static void case_measure(const pc_case *c, uint64_t size[SIZE_COUNT])
{
    memset(size, 0, SIZE_COUNT * sizeof *size);
    const pc_graph *g = c->model->graph;
    size[SIZE_NODES] = g->n_nodes;
    for (uint32_t i = 0; i < g->n_inputs; i++)
        size[SIZE_INPUTS] += !g->inputs[i]->initializer;
    size[SIZE_INITS] = g->n_initializers;
    for (const pc_node *n = g->first; n; n = n->next) {
        size[SIZE_ATTRS] += n->n_attrs;
        size[SIZE_ANNS] += pc_node_annotation(n) != NULL;
    }
    size[SIZE_EPS] = ep_list_count(c->ep_list);
    size[SIZE_LA] = c->layer_assignment != NULL;
    size[SIZE_EP_TEXT] = c->ep_text != NULL;
    for (uint32_t i = 0; i < g->n_initializers; i++) {
        size[SIZE_ELEMS] += g->initializers[i]->initializer->n_elements;
        size[SIZE_RANKS] += (uint64_t)g->initializers[i]->initializer->rank;
    }
    for (uint32_t i = 0; i < c->n_inputs; i++)
        if (c->inputs[i]) {
            size[SIZE_ELEMS] += c->inputs[i]->n_elements;
            size[SIZE_RANKS] += c->inputs[i]->rank > 0 ? (uint64_t)c->inputs[i]->rank : 0;
        }
}

static bool case_smaller(const pc_case *a, const pc_case *b)
{
    uint64_t sa[SIZE_COUNT], sb[SIZE_COUNT];
    case_measure(a, sa);
    case_measure(b, sb);
    for (int i = 0; i < SIZE_COUNT; i++)
        if (sa[i] != sb[i]) return sa[i] < sb[i];
    return false;
}

/* ---- candidate plumbing
 * -------------------------------------------------------------------------------------- */

static pc_node *node_at(const pc_graph *g, uint32_t index)
{
    pc_node *n = g->first;
    for (uint32_t i = 0; n && i < index; i++)
        n = n->next;
    return n;
}

static bool value_used(const pc_value *v)
{
    return v->n_consumers || v->n_subgraph_refs || v->is_graph_output;
}

static void outputs_refresh_flags(pc_graph *g, pc_value *old)
{
    if (!old) return;
    old->is_graph_output = false;
    for (uint32_t k = 0; k < g->n_outputs; k++)
        if (g->outputs[k] == old) old->is_graph_output = true;
}

/* Dead nodes (a reverse sweep suffices: consumers come after producers), then unused initializers, then
 * unused graph inputs with their data. */
static pc_status case_clean(pc_case *c, pc_error *err)
{
    pc_graph *g = c->model->graph;
    for (pc_node *n = g->last, *prev; n; n = prev) {
        prev = n->prev;
        bool used = false;
        for (uint32_t k = 0; k < n->n_outputs && !used; k++)
            used = n->outputs[k] && value_used(n->outputs[k]);
        if (used) continue;
        pc_status st = pc_graph_remove_node(g, n, err);
        if (st != PC_OK) return st;
    }
    for (uint32_t i = g->n_initializers; i-- > 0;) {
        pc_value *v = g->initializers[i];
        if (value_used(v) || v->is_graph_input) continue;
        pc_status st = pc_graph_remove_initializer(g, v, err);
        if (st != PC_OK) return st;
    }
    /* graph inputs: c->inputs runs parallel to the non-initializer ones */
    uint32_t w = 0, data_index = 0, data_w = 0;
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        pc_value *v = g->inputs[i];
        if (v->initializer) {
            g->inputs[w++] = v;
            continue;
        }
        bool keep = value_used(v) || data_index >= c->n_inputs;
        if (data_index < c->n_inputs) {
            if (keep)
                c->inputs[data_w++] = c->inputs[data_index];
            else
                pc_data_unref(c->inputs[data_index]);
            data_index++;
        }
        if (keep) {
            g->inputs[w++] = v;
        } else {
            v->is_graph_input = false;
            v->has_value_info = false;
        }
    }
    for (; data_index < c->n_inputs; data_index++)
        c->inputs[data_w++] = c->inputs[data_index];
    g->n_inputs = w;
    c->n_inputs = data_w;
    return PC_OK;
}

static pc_status cand_begin(graph_phase *gp, pc_case *cand, pc_error *err)
{
    pc_status st = pc_shrink_case_copy(&gp->s->best, cand, err);
    /* the generator's rewrite guarantees hold for the graph it built, not for an edited one */
    if (st == PC_OK) pc_model_remove_metadata(cand->model, PC_EXPECT_FIRED_KEY);
    return st;
}

/* Cleans, verifies, measures and checks an edited candidate (which it consumes). */
static pc_status cand_finish(graph_phase *gp, pc_case *cand, const char *step, bool *accepted, pc_error *err)
{
    *accepted = false;
    pc_error verr;
    pc_error_clear(&verr);
    bool valid = case_clean(cand, &verr) == PC_OK && cand->model->graph->n_outputs > 0 &&
                 pc_graph_sort(cand->model->graph, &verr) == PC_OK &&
                 pc_model_verify(cand->model, &verr) == PC_OK;
    if (valid && gp->require_inference) valid = pc_graph_infer_shapes(cand->model->graph, &verr) == PC_OK;
    if (!valid || !case_smaller(cand, &gp->s->best) || !pc_shrink_budget_left(gp->s)) {
        pc_case_free(cand);
        return PC_OK;
    }
    pc_status st = pc_shrink_try(gp->s, cand, step, accepted, err);
    if (*accepted) gp->s->graph_edited = true;
    return st;
}

/* ---- reference values
 * ---------------------------------------------------------------------------------------- */

static void ref_clear(graph_phase *gp)
{
    for (uint32_t i = 0; i < gp->n_ref; i++)
        pc_data_unref(gp->ref[i]);
    free(gp->ref);
    gp->ref = NULL;
    gp->n_ref = 0;
    gp->ref_done = false;
    gp->ref_ok = false;
}

/* Every node output's value on the case inputs: one reference run of a copy whose graph outputs are all of
 * them. When the reference cannot run the graph, values stay unknown (NULL) and the edits that need them are
 * skipped. */
static pc_status ref_compute(graph_phase *gp, pc_error *err)
{
    if (gp->ref_done && gp->ref_version == gp->s->best_version) return PC_OK;
    ref_clear(gp);
    const pc_graph *bg = gp->s->best.model->graph;
    gp->ref = calloc(bg->n_values ? bg->n_values : 1, sizeof *gp->ref);
    if (!gp->ref) return pc_error_set(err, PC_ERR_NOMEM, "shrink: out of memory");
    gp->n_ref = bg->n_values;
    gp->ref_done = true;
    gp->ref_version = gp->s->best_version;

    pc_case tmp;
    pc_status st = pc_shrink_case_copy(&gp->s->best, &tmp, err);
    if (st != PC_OK) return st;
    pc_graph *g = tmp.model->graph;
    for (pc_node *n = g->first; n; n = n->next)
        for (uint32_t k = 0; k < n->n_outputs; k++) {
            pc_value *v = n->outputs[k];
            if (!v || v->is_graph_output) continue;
            if ((st = pc_graph_add_output(g, v, err)) != PC_OK) {
                pc_case_free(&tmp);
                return st;
            }
        }
    pc_data **outs = NULL;
    pc_error rerr;
    if (pc_ref_run(tmp.model, tmp.n_inputs, tmp.inputs, &outs, &rerr) == PC_OK) {
        gp->ref_ok = true;
        for (uint32_t k = 0; k < g->n_outputs; k++) {
            const pc_value *bv = pc_graph_find_value(bg, g->outputs[k]->name);
            pc_data *d = outs[k];
            if (!bv || bv->id >= gp->n_ref || !d || d->kind != PC_TYPE_TENSOR || gp->ref[bv->id]) continue;
            /* the copy's tensors die with it: keep only data that owns itself */
            gp->ref[bv->id] = d->borrowed ? pc_data_clone(d, &rerr) : pc_data_ref(d);
        }
        pc_ref_free_outputs(tmp.model, outs);
    }
    pc_case_free(&tmp);
    return PC_OK;
}

static const pc_data *ref_of(const graph_phase *gp, const pc_value *best_value)
{
    return best_value->id < gp->n_ref ? gp->ref[best_value->id] : NULL;
}

/* ---- edits
 * ------------------------------------------------------------------------------------------------------ */

/* Graph outputs become exactly `keep` (n values of the candidate). */
static pc_status outputs_set(pc_graph *g, pc_value *const *keep, uint32_t n, pc_error *err)
{
    for (uint32_t k = 0; k < g->n_outputs; k++)
        g->outputs[k]->is_graph_output = false;
    g->n_outputs = 0;
    for (uint32_t k = 0; k < n; k++) {
        pc_status st = pc_graph_add_output(g, keep[k], err);
        if (st != PC_OK) return st;
    }
    return PC_OK;
}

/* Keeps only graph output j, or drops it (several outputs). */
static pc_status edit_outputs(graph_phase *gp, bool *progress, pc_error *err)
{
    for (int mode = 0; mode < 2; mode++) {
        for (uint32_t j = 0; j < gp->s->best.model->graph->n_outputs && pc_shrink_budget_left(gp->s); j++) {
            uint32_t n_out = gp->s->best.model->graph->n_outputs;
            if (n_out < 2) return PC_OK;
            pc_case cand;
            pc_status st = cand_begin(gp, &cand, err);
            if (st != PC_OK) return st;
            pc_graph *g = cand.model->graph;
            pc_value **keep = malloc(n_out * sizeof *keep);
            if (!keep) {
                pc_case_free(&cand);
                return pc_error_set(err, PC_ERR_NOMEM, "shrink: out of memory");
            }
            uint32_t nk = 0;
            for (uint32_t k = 0; k < n_out; k++)
                if (mode == 0 ? k == j : k != j) keep[nk++] = g->outputs[k];
            st = outputs_set(g, keep, nk, err);
            free(keep);
            if (st != PC_OK) {
                pc_case_free(&cand);
                return st;
            }
            bool acc;
            st = cand_finish(gp, &cand, mode == 0 ? "graph: keep one output" : "graph: drop an output", &acc,
                             err);
            if (st != PC_OK) return st;
            if (acc) {
                *progress = true;
                if (mode == 0) return PC_OK;
                j--; /* the next output moved into slot j */
            }
        }
    }
    return PC_OK;
}

/* Node-output values of the best graph in topological order. */
static pc_status produced_values(const pc_graph *g, pc_value ***out, uint32_t *n, pc_error *err)
{
    uint32_t count = 0;
    for (const pc_node *nd = g->first; nd; nd = nd->next)
        for (uint32_t k = 0; k < nd->n_outputs; k++)
            count += nd->outputs[k] != NULL;
    *out = malloc((count ? count : 1) * sizeof **out);
    if (!*out) return pc_error_set(err, PC_ERR_NOMEM, "shrink: out of memory");
    *n = 0;
    for (const pc_node *nd = g->first; nd; nd = nd->next)
        for (uint32_t k = 0; k < nd->n_outputs; k++)
            if (nd->outputs[k]) (*out)[(*n)++] = nd->outputs[k];
    return PC_OK;
}

static pc_status try_cut(graph_phase *gp, const char *name, bool *accepted, pc_error *err)
{
    *accepted = false;
    pc_case cand;
    pc_status st = cand_begin(gp, &cand, err);
    if (st != PC_OK) return st;
    pc_value *v = pc_graph_find_value(cand.model->graph, name);
    if (!v || (st = outputs_set(cand.model->graph, &v, 1, err)) != PC_OK) {
        pc_case_free(&cand);
        return st;
    }
    return cand_finish(gp, &cand, "graph: cut to an earlier value", accepted, err);
}

/* Polygraphy-style output cut: the graph ends at one earlier value. Small graphs try every value, earliest
 * (the smallest cut) first; large ones try the values 1/2, 3/4, 7/8 ... of the way along and start over on
 * the smaller graph after a success, so a long graph is halved in O(log n) checks. */
static pc_status edit_cut(graph_phase *gp, bool *progress, pc_error *err)
{
    enum { LINEAR_MAX = 24 };
    for (bool again = true; again && pc_shrink_budget_left(gp->s);) {
        again = false;
        pc_value **vals = NULL;
        uint32_t n = 0;
        pc_status st = produced_values(gp->s->best.model->graph, &vals, &n, err);
        if (st != PC_OK) return st;
        /* names are copied out: a success frees the best model the values belong to */
        char **names = calloc(n ? n : 1, sizeof *names);
        bool oom = !names;
        for (uint32_t i = 0; !oom && i < n; i++)
            oom = !(names[i] = strdup(vals[i]->name));
        free(vals);
        if (oom) {
            for (uint32_t i = 0; names && i < n; i++)
                free(names[i]);
            free(names);
            return pc_error_set(err, PC_ERR_NOMEM, "shrink: out of memory");
        }
        if (n <= LINEAR_MAX) {
            for (uint32_t i = 0; i + 1 < n && !again && pc_shrink_budget_left(gp->s); i++) {
                if ((st = try_cut(gp, names[i], &again, err)) != PC_OK) break;
            }
        } else {
            for (uint32_t rest = n / 2; rest >= 1 && !again && pc_shrink_budget_left(gp->s); rest /= 2) {
                if ((st = try_cut(gp, names[n - 1 - rest], &again, err)) != PC_OK) break;
            }
        }
        for (uint32_t i = 0; i < n; i++)
            free(names[i]);
        free(names);
        if (st != PC_OK) return st;
        if (again) *progress = true;
    }
    return PC_OK;
}

/* A tensor type with the data's static shape. */
static pc_status type_of_data(pc_model *m, const pc_data *d, pc_type *t, pc_error *err)
{
    memset(t, 0, sizeof *t);
    t->kind = PC_TYPE_TENSOR;
    t->elem = d->dtype;
    t->shape.rank = d->rank;
    if (d->rank > 0) {
        t->shape.dims = pc_arena_array(&m->arena, (size_t)d->rank, sizeof *t->shape.dims);
        if (!t->shape.dims) return pc_error_set(err, PC_ERR_NOMEM, "shrink: out of memory");
        for (int32_t i = 0; i < d->rank; i++)
            t->shape.dims[i] = (pc_dim){.kind = PC_DIM_KNOWN, .size = d->dims[i]};
    }
    return PC_OK;
}

/* Replaces every use of the candidate's value `name` by a new graph input fed with `data` (as_input) or by a
 * new initializer holding it. */
static pc_status replace_value(pc_case *cand, const char *name, const pc_data *data, bool as_input,
                               bool *applied, pc_error *err)
{
    *applied = false;
    pc_graph *g = cand->model->graph;
    pc_value *v = pc_graph_find_value(g, name);
    if (!v || !v->n_consumers || v->n_subgraph_refs || data->kind != PC_TYPE_TENSOR ||
        data->dtype == PC_DTYPE_STRING)
        return PC_OK;
    pc_value *nv = pc_graph_add_value(g, NULL, name, err);
    if (!nv) return err->status;
    pc_type t;
    pc_status st = type_of_data(cand->model, data, &t, err);
    if (st == PC_OK) st = pc_value_set_type(nv, &t, err);
    if (st != PC_OK) return st;
    if (as_input) {
        pc_data **ins = realloc(cand->inputs, (cand->n_inputs + 1) * sizeof *ins);
        if (!ins) return pc_error_set(err, PC_ERR_NOMEM, "shrink: out of memory");
        cand->inputs = ins;
        if ((st = pc_graph_add_input(g, nv, err)) != PC_OK) return st;
        /* new inputs go last in the graph, and so in the data list that runs parallel to them */
        cand->inputs[cand->n_inputs++] = pc_data_ref((pc_data *)data);
    } else {
        pc_tensor *tensor = pc_tensor_create(cand->model, nv->name, data->dtype, data->rank, data->dims, err);
        if (!tensor) return err->status;
        if (tensor->n_bytes != data->n_bytes) return PC_OK; /* not applicable; the candidate is dropped */
        if (data->n_bytes) memcpy(tensor->data, data->data, data->n_bytes);
        if ((st = pc_graph_set_initializer(g, nv, tensor, err)) != PC_OK) return st;
    }
    if ((st = pc_value_replace_uses(v, nv)) != PC_OK)
        return pc_error_set(err, st, "shrink: replacing uses of '%s'", name);
    *applied = true;
    return PC_OK;
}

/* Values computed inside the graph, latest first (cutting late removes the most), replaced by graph inputs or
 * constants holding their reference values; then graph inputs replaced by constants holding their data. */
static pc_status edit_replace(graph_phase *gp, bool as_input, bool *progress, pc_error *err)
{
    pc_status st = ref_compute(gp, err);
    if (st != PC_OK) return st;
    pc_value **vals = NULL;
    uint32_t n = 0;
    if ((st = produced_values(gp->s->best.model->graph, &vals, &n, err)) != PC_OK) return st;
    /* candidates by name and data: a success replaces the best (and frees its values) */
    char **names = calloc(n ? n : 1, sizeof *names);
    pc_data **datas = calloc(n ? n : 1, sizeof *datas);
    uint32_t m = 0;
    bool oom = !names || !datas;
    for (uint32_t i = n; !oom && i-- > 0;) {
        const pc_data *d = ref_of(gp, vals[i]);
        if (!d || !vals[i]->n_consumers) continue;
        if (!(names[m] = strdup(vals[i]->name)))
            oom = true;
        else
            datas[m++] = pc_data_ref((pc_data *)d);
    }
    if (!as_input && !oom) {
        const pc_graph *g = gp->s->best.model->graph;
        uint32_t di = 0;
        for (uint32_t i = 0; i < g->n_inputs && !oom; i++) {
            if (g->inputs[i]->initializer) continue;
            const pc_data *d = di < gp->s->best.n_inputs ? gp->s->best.inputs[di] : NULL;
            di++;
            if (!d || g->inputs[i]->is_graph_output) continue;
            pc_data **nd = realloc(datas, (m + 1) * sizeof *nd);
            char **nn = realloc(names, (m + 1) * sizeof *nn);
            if (nd) datas = nd;
            if (nn) names = nn;
            if (!nd || !nn || !(names[m] = strdup(g->inputs[i]->name)))
                oom = true;
            else
                datas[m++] = pc_data_ref((pc_data *)d);
        }
    }
    free(vals);
    for (uint32_t i = 0; !oom && i < m && pc_shrink_budget_left(gp->s); i++) {
        pc_case cand;
        if ((st = cand_begin(gp, &cand, err)) != PC_OK) break;
        bool applied = false;
        if ((st = replace_value(&cand, names[i], datas[i], as_input, &applied, err)) != PC_OK || !applied) {
            pc_case_free(&cand);
            if (st != PC_OK) break;
            continue;
        }
        bool acc;
        st = cand_finish(gp, &cand, as_input ? "graph: value -> graph input" : "graph: value -> constant",
                         &acc, err);
        if (st != PC_OK) break;
        if (acc) *progress = true;
    }
    for (uint32_t i = 0; i < m; i++) {
        free(names[i]);
        pc_data_unref(datas[i]);
    }
    free(names);
    free(datas);
    if (oom) return pc_error_set(err, PC_ERR_NOMEM, "shrink: out of memory");
    return st;
}

static bool type_usable(const pc_type *t)
{
    return t->kind == PC_TYPE_TENSOR && t->elem != PC_DTYPE_UNDEFINED && t->shape.rank >= 0;
}

/* A value of the same type and shape as `o` that does not depend on node n: n's own inputs first, then
 * earlier node outputs (latest first), graph inputs and initializers. */
static pc_value *find_compatible(pc_graph *g, pc_node *n, const pc_value *o)
{
    for (uint32_t j = 0; j < n->n_inputs; j++)
        if (n->inputs[j] && !n->inputs[j]->outer && pc_type_equal(&n->inputs[j]->type, &o->type))
            return n->inputs[j];
    for (pc_node *p = n->prev; p; p = p->prev)
        for (uint32_t k = 0; k < p->n_outputs; k++)
            if (p->outputs[k] && pc_type_equal(&p->outputs[k]->type, &o->type)) return p->outputs[k];
    for (uint32_t i = 0; i < g->n_inputs; i++)
        if (pc_type_equal(&g->inputs[i]->type, &o->type)) return g->inputs[i];
    for (uint32_t i = 0; i < g->n_initializers; i++)
        if (pc_type_equal(&g->initializers[i]->type, &o->type)) return g->initializers[i];
    return NULL;
}

/* Removes node `index` of the candidate, its consumers (and graph-output slots) reading compatible values. */
static pc_status remove_node(pc_case *cand, uint32_t index, bool *applied, pc_error *err)
{
    *applied = false;
    pc_graph *g = cand->model->graph;
    pc_node *n = node_at(g, index);
    if (!n) return PC_OK;
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        pc_value *o = n->outputs[k];
        if (!o || !value_used(o)) continue;
        if (o->n_subgraph_refs || !type_usable(&o->type)) return PC_OK;
        pc_value *r = find_compatible(g, n, o);
        if (!r) return PC_OK;
        pc_status st = pc_value_replace_uses(o, r);
        if (st != PC_OK) return pc_error_set(err, st, "shrink: reconnecting the consumers of '%s'", o->name);
        for (uint32_t j = 0; j < g->n_outputs; j++)
            if (g->outputs[j] == o) {
                g->outputs[j] = r;
                r->is_graph_output = true;
            }
        outputs_refresh_flags(g, o);
    }
    *applied = true;
    return PC_OK;
}

static pc_status edit_remove_nodes(graph_phase *gp, bool *progress, pc_error *err)
{
    for (uint32_t i = gp->s->best.model->graph->n_nodes; i-- > 0 && pc_shrink_budget_left(gp->s);) {
        if (i >= gp->s->best.model->graph->n_nodes) continue;
        pc_case cand;
        pc_status st = cand_begin(gp, &cand, err);
        if (st != PC_OK) return st;
        bool applied;
        if ((st = remove_node(&cand, i, &applied, err)) != PC_OK || !applied) {
            pc_case_free(&cand);
            if (st != PC_OK) return st;
            continue;
        }
        bool acc;
        if ((st = cand_finish(gp, &cand, "graph: remove a node", &acc, err)) != PC_OK) return st;
        if (acc) *progress = true;
    }
    return PC_OK;
}

/* ---- dims and ranks
 * ----------------------------------------------------------------------------------------------
 *
 * Graph inputs (with their data) and initializers get smaller: one axis to size 1 or to half its size,
 * rounded up (keeping the first or the last element or half, so a failure that hangs on one element keeps
 * it), every axis of one size at once (a channel count shared by an input and a weight), and a leading size-1
 * axis dropped. The types of every computed value are then forgotten and inferred again, so the graph stays
 * consistent; an op whose rules the new shapes break (Conv channels against its weight, a Reshape's element
 * count) fails inference and the candidate is dropped. */

/* A tensor of the case: an initializer, or a graph input fed by c->inputs[data]. */
typedef struct dims_tensor {
    pc_value *value;
    bool is_input;
    uint32_t data;
    pc_dtype dtype;
    int32_t rank;
    const int64_t *dims;
} dims_tensor;

static bool dims_tensor_find(const pc_case *c, const char *name, dims_tensor *t)
{
    const pc_graph *g = c->model->graph;
    pc_value *v = pc_graph_find_value(g, name);
    if (!v || v->n_subgraph_refs) return false;
    memset(t, 0, sizeof *t);
    t->value = v;
    if (v->initializer) {
        t->dtype = v->initializer->dtype;
        t->rank = v->initializer->rank;
        t->dims = v->initializer->dims;
    } else if (v->is_graph_input) {
        uint32_t k = 0;
        for (uint32_t i = 0; i < g->n_inputs && g->inputs[i] != v; i++)
            k += !g->inputs[i]->initializer;
        if (k >= c->n_inputs || !c->inputs[k] || c->inputs[k]->kind != PC_TYPE_TENSOR) return false;
        t->is_input = true;
        t->data = k;
        t->dtype = c->inputs[k]->dtype;
        t->rank = c->inputs[k]->rank;
        t->dims = c->inputs[k]->dims;
    } else {
        return false;
    }
    unsigned bits = pc_dtype_bits(t->dtype);
    return bits && bits % 8 == 0; /* whole-byte elements: strings and packed 4-bit types are left alone */
}

/* The elements [from, from + n) of axis `axis` (every other axis whole) as a new raw buffer; axis -1 drops
 * the leading size-1 axis (same bytes). */
static pc_status dims_slice(const dims_tensor *t, const void *src, int32_t axis, int64_t from, int64_t n,
                            int64_t *new_dims, int32_t *new_rank, void **out, size_t *out_bytes,
                            pc_error *err)
{
    size_t esize = pc_dtype_bits(t->dtype) / 8, inner = esize, outer = 1, bytes;
    if (axis < 0) {
        *new_rank = t->rank - 1;
        for (int32_t i = 1; i < t->rank; i++)
            new_dims[i - 1] = t->dims[i];
    } else {
        *new_rank = t->rank;
        for (int32_t i = 0; i < t->rank; i++)
            new_dims[i] = i == axis ? n : t->dims[i];
    }
    uint64_t elems = 1;
    for (int32_t i = 0; i < *new_rank; i++)
        if (!pc_u64_mul(elems, (uint64_t)new_dims[i], &elems))
            return pc_error_set(err, PC_ERR_BUDGET, "shrink: size");
    if (!pc_size_mul((size_t)elems, esize, &bytes)) return pc_error_set(err, PC_ERR_BUDGET, "shrink: size");
    *out = malloc(bytes ? bytes : 1);
    if (!*out) return pc_error_set(err, PC_ERR_NOMEM, "shrink: out of memory");
    *out_bytes = bytes;
    if (axis < 0) {
        if (bytes) memcpy(*out, src, bytes);
        return PC_OK;
    }
    for (int32_t i = 0; i < t->rank; i++) {
        if (i < axis) outer *= (size_t)t->dims[i];
        if (i > axis) inner *= (size_t)t->dims[i];
    }
    size_t d = (size_t)t->dims[axis], chunk = (size_t)n * inner;
    for (size_t o = 0; o < outer; o++)
        memcpy((char *)*out + o * chunk, (const char *)src + (o * d + (size_t)from) * inner, chunk);
    return PC_OK;
}

/* Applies one slice to the candidate's tensor `name`. */
static pc_status dims_apply(pc_case *cand, const char *name, int32_t axis, int64_t from, int64_t n,
                            bool *applied, pc_error *err)
{
    *applied = false;
    dims_tensor t;
    if (!dims_tensor_find(cand, name, &t) || t.rank > PC_MAX_RANK ||
        (axis < 0 && (t.rank < 1 || t.dims[0] != 1)))
        return PC_OK;
    if (axis >= t.rank || (axis >= 0 && (from < 0 || n < 1 || from + n > t.dims[axis]))) return PC_OK;
    int64_t nd[PC_MAX_RANK];
    int32_t nr;
    void *bytes = NULL;
    size_t size = 0;
    const void *src = t.is_input ? cand->inputs[t.data]->data : t.value->initializer->data;
    pc_status st = dims_slice(&t, src, axis, from, n, nd, &nr, &bytes, &size, err);
    if (st != PC_OK) return st;
    if (t.is_input) {
        pc_data *d = pc_data_new_tensor(t.dtype, nr, nd, err);
        if (!d || d->n_bytes != size) {
            pc_data_unref(d);
            free(bytes);
            return d ? PC_OK : err->status;
        }
        if (size) memcpy(d->data, bytes, size);
        pc_data_unref(cand->inputs[t.data]); /* the candidate's reference only: the best keeps its own */
        cand->inputs[t.data] = d;
    } else {
        pc_tensor *nt = pc_tensor_create(cand->model, name, t.dtype, nr, nd, err);
        if (!nt || nt->n_bytes != size) {
            free(bytes);
            return nt ? PC_OK : err->status;
        }
        if (size) memcpy(nt->data, bytes, size);
        if ((st = pc_graph_replace_initializer(t.value, nt, err)) != PC_OK) {
            free(bytes);
            return st;
        }
    }
    free(bytes);
    pc_dim dd[PC_MAX_RANK];
    for (int32_t i = 0; i < nr; i++)
        dd[i] = (pc_dim){.kind = PC_DIM_KNOWN, .size = nd[i]};
    pc_type ty = {.kind = PC_TYPE_TENSOR, .elem = t.dtype, .shape = {.rank = nr, .dims = nr ? dd : NULL}};
    if ((st = pc_value_set_type(t.value, &ty, err)) != PC_OK) return st;
    *applied = true;
    return PC_OK;
}

/* Forgets the shapes of every computed value and infers them again from the edited inputs. False when
 * inference rejects the new shapes or leaves a value without a known rank. */
static bool dims_retype(pc_case *cand)
{
    pc_graph *g = cand->model->graph;
    pc_error ierr;
    for (pc_node *n = g->first; n; n = n->next)
        for (uint32_t k = 0; k < n->n_outputs; k++) {
            pc_value *v = n->outputs[k];
            if (!v) continue;
            if (v->type.kind != PC_TYPE_TENSOR) return false; /* sequences and maps: not re-derivable here */
            pc_type ty = {.kind = PC_TYPE_TENSOR, .elem = v->type.elem, .shape = {.rank = -1}};
            if (pc_value_set_type(v, &ty, &ierr) != PC_OK) return false;
        }
    if (pc_graph_infer_shapes(g, &ierr) != PC_OK) return false;
    for (pc_node *n = g->first; n; n = n->next)
        for (uint32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] && n->outputs[k]->type.shape.rank < 0) return false;
    return true;
}

typedef struct dims_step {
    const char *name; /* NULL: every eligible tensor's axes of size `size` */
    int64_t size;
    int32_t axis;    /* -1: drop the leading size-1 axis */
    int64_t from, n; /* the slice [from, from + n) of `axis`, or of every axis of `size` */
} dims_step;

/* Builds, retypes and checks one dims candidate. */
static pc_status dims_try(graph_phase *gp, const dims_step *step, const char *what, bool *accepted,
                          pc_error *err)
{
    *accepted = false;
    pc_case cand;
    pc_status st = cand_begin(gp, &cand, err);
    if (st != PC_OK) return st;
    bool any = false;
    if (step->name) {
        st = dims_apply(&cand, step->name, step->axis, step->from, step->n, &any, err);
    } else {
        /* every tensor that is not int64 (those are shapes, axes and indices, not data) */
        const pc_graph *g = cand.model->graph;
        uint32_t n_names = g->n_initializers + g->n_inputs;
        const char **names = malloc((n_names ? n_names : 1) * sizeof *names);
        if (!names) st = pc_error_set(err, PC_ERR_NOMEM, "shrink: out of memory");
        uint32_t m = 0;
        for (uint32_t i = 0; names && i < g->n_initializers; i++)
            names[m++] = g->initializers[i]->name;
        for (uint32_t i = 0; names && i < g->n_inputs; i++)
            if (!g->inputs[i]->initializer) names[m++] = g->inputs[i]->name;
        for (uint32_t i = 0; st == PC_OK && i < m; i++) {
            dims_tensor t;
            if (!dims_tensor_find(&cand, names[i], &t) || t.dtype == PC_DTYPE_INT64) continue;
            for (int32_t a = 0; st == PC_OK && a < t.rank; a++) {
                if (!dims_tensor_find(&cand, names[i], &t) || t.dims[a] != step->size) continue;
                bool one;
                st = dims_apply(&cand, names[i], a, step->from, step->n, &one, err);
                any |= one;
            }
        }
        free(names);
    }
    if (st != PC_OK || !any || !dims_retype(&cand)) {
        pc_case_free(&cand);
        return st;
    }
    /* Shape inference does not check every attribute against the new shapes (a Conv's kernel_shape against a
     * shrunk weight): when the reference ran the best, it must run the candidate too. */
    if (gp->ref_ok) {
        pc_data **outs = NULL;
        pc_error rerr;
        if (pc_ref_run(cand.model, cand.n_inputs, cand.inputs, &outs, &rerr) != PC_OK) {
            pc_case_free(&cand);
            return PC_OK;
        }
        pc_ref_free_outputs(cand.model, outs);
    }
    return cand_finish(gp, &cand, what, accepted, err);
}

static pc_status edit_dims(graph_phase *gp, bool *progress, pc_error *err)
{
    if (!gp->require_inference) return PC_OK; /* types could not be re-derived */
    pc_status st = ref_compute(gp, err);
    /* 1. every axis of one size at once, largest size first */
    for (bool again = true; again && st == PC_OK && pc_shrink_budget_left(gp->s);) {
        again = false;
        int64_t best_size = 1;
        const pc_case *b = &gp->s->best;
        const pc_graph *g = b->model->graph;
        for (uint32_t i = 0; i < g->n_initializers + g->n_inputs; i++) {
            const pc_value *v = i < g->n_initializers ? g->initializers[i] : g->inputs[i - g->n_initializers];
            dims_tensor t;
            if (!dims_tensor_find(b, v->name, &t) || t.dtype == PC_DTYPE_INT64) continue;
            for (int32_t a = 0; a < t.rank; a++)
                if (t.dims[a] > best_size) best_size = t.dims[a];
        }
        /* sizes are tried from the largest down; a size that cannot shrink is not tried again this sweep */
        for (int64_t size = best_size; size > 1 && !again && pc_shrink_budget_left(gp->s);) {
            int64_t h = (size + 1) / 2;
            const int64_t from[4] = {0, size - 1, 0, size - h}, n[4] = {1, 1, h, h};
            for (int k = 0; k < 4 && !again && st == PC_OK; k++) {
                if (k >= 2 && h <= 1) break;
                dims_step step = {NULL, size, 0, from[k], n[k]};
                st = dims_try(gp, &step, "graph: shrink a dim size everywhere", &again, err);
            }
            if (st != PC_OK) return st;
            if (again) {
                *progress = true;
                break;
            }
            /* the next smaller size present */
            int64_t next = 1;
            for (uint32_t i = 0; i < g->n_initializers + g->n_inputs; i++) {
                const pc_value *v =
                    i < g->n_initializers ? g->initializers[i] : g->inputs[i - g->n_initializers];
                dims_tensor t;
                if (!dims_tensor_find(b, v->name, &t) || t.dtype == PC_DTYPE_INT64) continue;
                for (int32_t a = 0; a < t.rank; a++)
                    if (t.dims[a] < size && t.dims[a] > next) next = t.dims[a];
            }
            size = next;
        }
    }
    /* 2. one tensor, one axis: size 1 (first or last element), then halves (first or second), repeated while
     * it works; 3. its leading size-1 axes dropped. Names are copied: a success frees the best model. */
    const pc_graph *g0 = gp->s->best.model->graph;
    uint32_t n_names = g0->n_initializers + g0->n_inputs;
    char **names = calloc(n_names ? n_names : 1, sizeof *names);
    if (!names) return pc_error_set(err, PC_ERR_NOMEM, "shrink: out of memory");
    for (uint32_t i = 0; i < n_names; i++) {
        const pc_value *v = i < g0->n_initializers ? g0->initializers[i] : g0->inputs[i - g0->n_initializers];
        if (!(names[i] = strdup(v->name))) st = pc_error_set(err, PC_ERR_NOMEM, "shrink: out of memory");
    }
    for (uint32_t i = 0; i < n_names && st == PC_OK && pc_shrink_budget_left(gp->s); i++) {
        dims_tensor t;
        for (int32_t a = 0; st == PC_OK && pc_shrink_budget_left(gp->s); a++) {
            if (!dims_tensor_find(&gp->s->best, names[i], &t) || a >= t.rank) break;
            bool acc = false;
            int64_t d = t.dims[a], h = (d + 1) / 2; /* halves overlap on odd sizes: every element is in one */
            if (d <= 1) continue;
            dims_step tries[4] = {{names[i], 0, a, 0, 1},
                                  {names[i], 0, a, d - 1, 1},
                                  {names[i], 0, a, 0, h},
                                  {names[i], 0, a, d - h, h}};
            for (int k = 0; k < 4 && !acc && st == PC_OK; k++) {
                if (k >= 2 && h <= 1) break; /* halves of 2 are the size-1 tries */
                st = dims_try(gp, &tries[k], "graph: shrink a dim", &acc, err);
            }
            if (acc) {
                *progress = true;
                a--; /* the same axis again, now smaller */
            }
        }
        for (bool acc = true; acc && st == PC_OK && pc_shrink_budget_left(gp->s);) {
            acc = false;
            if (!dims_tensor_find(&gp->s->best, names[i], &t) || t.rank < 1 || t.dims[0] != 1) break;
            dims_step drop = {names[i], 0, -1, 0, 0};
            st = dims_try(gp, &drop, "graph: drop a leading size-1 axis", &acc, err);
            if (acc) *progress = true;
        }
    }
    for (uint32_t i = 0; i < n_names; i++)
        free(names[i]);
    free(names);
    return st;
}

/* Attributes the schema does not require (their absence means the default). */
static pc_status edit_attrs(graph_phase *gp, bool *progress, pc_error *err)
{
    for (uint32_t i = 0; i < gp->s->best.model->graph->n_nodes && pc_shrink_budget_left(gp->s); i++) {
        const pc_node *bn = node_at(gp->s->best.model->graph, i);
        if (!bn) break;
        for (uint32_t a = 0; a < bn->n_attrs && pc_shrink_budget_left(gp->s);) {
            const pc_op_schema *sc =
                pc_schema_lookup(bn->domain, bn->op_type, pc_model_opset(gp->s->best.model, bn->domain));
            const pc_attr_schema *as = sc ? pc_schema_attr(sc, bn->attrs[a].name) : NULL;
            if (!as || as->required) {
                a++;
                continue;
            }
            pc_case cand;
            pc_status st = cand_begin(gp, &cand, err);
            if (st != PC_OK) return st;
            pc_node *cn = node_at(cand.model->graph, i);
            if (!cn || !pc_node_remove_attr(cn, bn->attrs[a].name)) {
                pc_case_free(&cand);
                a++;
                continue;
            }
            bool acc;
            if ((st = cand_finish(gp, &cand, "graph: drop an attribute", &acc, err)) != PC_OK) return st;
            if (acc) {
                *progress = true;
                bn = node_at(gp->s->best.model->graph,
                             i); /* the best is a new model now; slot a holds the next */
                if (!bn) break;
            } else {
                a++;
            }
        }
    }
    return PC_OK;
}

/* All annotations at once, then one node at a time. */
static pc_status edit_annotations(graph_phase *gp, bool *progress, pc_error *err)
{
    for (int all = 1; all >= 0; all--) {
        uint32_t n_nodes = gp->s->best.model->graph->n_nodes;
        for (uint32_t i = 0; i < (all ? 1u : n_nodes) && pc_shrink_budget_left(gp->s); i++) {
            const pc_node *bn = node_at(gp->s->best.model->graph, i);
            if (!all && (!bn || !pc_node_annotation(bn))) continue;
            pc_case cand;
            pc_status st = cand_begin(gp, &cand, err);
            if (st != PC_OK) return st;
            bool any = false;
            uint32_t k = 0;
            for (pc_node *n = cand.model->graph->first; n; n = n->next, k++)
                if (all || k == i) any |= pc_node_remove_metadata(n, PC_LAYER_ANN_KEY);
            if (!any) {
                pc_case_free(&cand);
                if (all) break;
                continue;
            }
            bool acc;
            if ((st = cand_finish(gp, &cand, "graph: drop layer_ann", &acc, err)) != PC_OK) return st;
            if (acc) {
                *progress = true;
                if (all) return PC_OK;
            }
        }
    }
    return PC_OK;
}

/* The case's configuration: each EP but cpu from the list, the EP file, the layer-assignment string. */
static pc_status edit_config(graph_phase *gp, bool *progress, pc_error *err)
{
    for (uint64_t e = 0; e < ep_list_count(gp->s->best.ep_list) && pc_shrink_budget_left(gp->s); e++) {
        const char *list = gp->s->best.ep_list;
        if (ep_list_count(list) < 2) break;
        /* entry e spans [start, end) */
        const char *start = list;
        for (uint64_t k = 0; k < e; k++)
            start = strchr(start, ',') + 1;
        const char *end = strchr(start, ',');
        if (!end) end = start + strlen(start);
        if ((size_t)(end - start) == 3 && memcmp(start, "cpu", 3) == 0) continue;
        size_t len = strlen(list);
        char *nl = malloc(len + 1);
        if (!nl) return pc_error_set(err, PC_ERR_NOMEM, "shrink: out of memory");
        size_t pre = (size_t)(start - list);
        if (*end == ',') {
            memcpy(nl, list, pre);
            strcpy(nl + pre, end + 1);
        } else {
            memcpy(nl, list, pre ? pre - 1 : 0); /* the last entry: drop the comma before it */
            nl[pre ? pre - 1 : 0] = '\0';
        }
        pc_case cand;
        pc_status st = cand_begin(gp, &cand, err);
        if (st != PC_OK) {
            free(nl);
            return st;
        }
        free(cand.ep_list);
        cand.ep_list = nl;
        bool acc;
        if ((st = cand_finish(gp, &cand, "config: drop an EP", &acc, err)) != PC_OK) return st;
        if (acc) {
            *progress = true;
            e--; /* the next entry moved into slot e */
        }
    }
    for (int which = 0; which < 2 && pc_shrink_budget_left(gp->s); which++) {
        if (!(which == 0 ? gp->s->best.layer_assignment : gp->s->best.ep_text)) continue;
        pc_case cand;
        pc_status st = cand_begin(gp, &cand, err);
        if (st != PC_OK) return st;
        char **field = which == 0 ? &cand.layer_assignment : &cand.ep_text;
        free(*field);
        *field = NULL;
        bool acc;
        if ((st = cand_finish(gp, &cand,
                              which == 0 ? "config: drop the layer assignment" : "config: drop the EP file",
                              &acc, err)) != PC_OK)
            return st;
        if (acc) *progress = true;
    }
    return PC_OK;
}

/* A candidate that is only the cleaned best (unused inputs, initializers and dead nodes dropped). */
static pc_status edit_clean(graph_phase *gp, bool *progress, pc_error *err)
{
    pc_case cand;
    pc_status st = cand_begin(gp, &cand, err);
    if (st != PC_OK) return st;
    bool acc;
    st = cand_finish(gp, &cand, "graph: drop unused inputs, initializers and nodes", &acc, err);
    if (acc) *progress = true;
    return st;
}

static pc_status replace_by_input(graph_phase *gp, bool *progress, pc_error *err)
{
    return edit_replace(gp, true, progress, err);
}

static pc_status replace_by_const(graph_phase *gp, bool *progress, pc_error *err)
{
    return edit_replace(gp, false, progress, err);
}

pc_status pc_shrink_graph_phase(pc_shrink_state *s, pc_error *err)
{
    graph_phase gp = {.s = s};
    {
        /* shape inference as an extra validity check only when the starting graph passes it (outside models
         * may hold ops it contradicts; then it would reject every candidate) */
        pc_case probe;
        pc_error ierr;
        if (pc_shrink_case_copy(&s->best, &probe, &ierr) == PC_OK) {
            gp.require_inference = pc_graph_infer_shapes(probe.model->graph, &ierr) == PC_OK;
            pc_case_free(&probe);
        }
    }
    typedef pc_status (*edit_fn)(graph_phase *, bool *, pc_error *);
    static const edit_fn edits[] = {edit_clean,        edit_outputs,     edit_cut,  replace_by_input,
                                    edit_remove_nodes, replace_by_const, edit_dims, edit_attrs,
                                    edit_annotations,  edit_config};
    pc_status st = PC_OK;
    for (bool progress = true; progress && st == PC_OK && pc_shrink_budget_left(s);) {
        progress = false;
        for (size_t e = 0; e < sizeof edits / sizeof edits[0] && st == PC_OK && pc_shrink_budget_left(s); e++)
            st = edits[e](&gp, &progress, err);
    }
    ref_clear(&gp);
    return st;
}
