/* pc_model_clone is an exact replica (core/ir/clone.c): the check runner's working copy and every fresh
 * re-optimization are clones of one model, and alloc-failure and determinism rely on those runs doing the
 * same allocations and giving the same bytes.
 *
 * 1. At every step of the pipeline on generated cases of every family (EPs nhwc,cpu), and on the ONNX backend
 *    models (subgraphs, doc strings, metadata, value_info the generators do not write): the clone has the
 *    same structure as the model, compared field by field here (ids, dead values, node order, use-list order,
 *    outer references, name counters), the same fingerprint and the same saved bytes, and it verifies.
 * 2. Two clones of a case, optimized, make the same number of model allocations and the same bytes as each
 *    other and as the case optimized itself.
 * 3. A memory budget that runs out at every point of a clone: each attempt fails with the budget status and
 *    leaks nothing (LeakSanitizer in the sanitizer build), and the first budget that suffices gives the
 *    clone. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "generators/gen.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

static uint8_t *save(const pc_model *m, size_t *size)
{
    uint8_t *b = NULL;
    pc_error err;
    CHECK_OK(pc_model_save_bytes(m, &b, size, &err), &err);
    return b;
}

static bool str_same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Structure, compared independently of clone.c: the first difference, or "" when none.
 */
typedef struct diff {
    char at[512];
} diff;

static bool differ(diff *d, const char *fmt, const char *a, const char *b)
{
    if (!d->at[0]) snprintf(d->at, sizeof d->at, fmt, a ? a : "(null)", b ? b : "(null)");
    return false;
}

static bool same_graph(diff *d, const pc_graph *a, const pc_graph *b);

static bool same_values_ref(const pc_value *x, const pc_value *y)
{
    if (!x || !y) return x == y;
    return x->id == y->id && strcmp(x->name, y->name) == 0 && str_same(x->graph->name, y->graph->name);
}

static bool same_attr(diff *d, const pc_attr *x, const pc_attr *y)
{
    if (!str_same(x->name, y->name) || x->type != y->type || x->n != y->n || x->i != y->i ||
        memcmp(&x->f, &y->f, sizeof x->f) != 0 || x->s.len != y->s.len ||
        (x->s.len && memcmp(x->s.data, y->s.data, x->s.len) != 0) || !str_same(x->doc_string, y->doc_string))
        return differ(d, "attribute '%s' vs '%s'", x->name, y->name);
    if ((x->t == NULL) != (y->t == NULL) || (x->t && !pc_tensor_equal(x->t, y->t)))
        return differ(d, "attribute '%s' tensor vs '%s'", x->name, y->name);
    if ((x->g == NULL) != (y->g == NULL) || (x->g && !same_graph(d, x->g, y->g))) return false;
    if ((x->tp == NULL) != (y->tp == NULL) || (x->tp && !pc_type_equal(x->tp, y->tp)))
        return differ(d, "attribute '%s' type vs '%s'", x->name, y->name);
    for (size_t k = 0; k < x->n; k++) {
        bool ok = true;
        switch (x->type) {
        case PC_ATTR_INTS:
            ok = x->ints[k] == y->ints[k];
            break;
        case PC_ATTR_FLOATS:
            ok = memcmp(&x->floats[k], &y->floats[k], sizeof(float)) == 0;
            break;
        case PC_ATTR_STRINGS:
            ok = x->strings[k].len == y->strings[k].len &&
                 (!x->strings[k].len ||
                  memcmp(x->strings[k].data, y->strings[k].data, x->strings[k].len) == 0);
            break;
        case PC_ATTR_TENSORS:
            ok = pc_tensor_equal(x->tensors[k], y->tensors[k]);
            break;
        case PC_ATTR_GRAPHS:
            if (!same_graph(d, x->graphs[k], y->graphs[k])) return false;
            break;
        case PC_ATTR_TYPE_PROTOS:
            ok = pc_type_equal(x->tps[k], y->tps[k]);
            break;
        default:
            break;
        }
        if (!ok) return differ(d, "attribute '%s' list element vs '%s'", x->name, y->name);
    }
    return true;
}

static bool same_kvs(uint32_t n, const pc_kv *a, uint32_t m, const pc_kv *b)
{
    if (n != m) return false;
    for (uint32_t i = 0; i < n; i++)
        if (!str_same(a[i].key, b[i].key) || !str_same(a[i].value, b[i].value)) return false;
    return true;
}

static bool same_graph(diff *d, const pc_graph *a, const pc_graph *b)
{
    if (!str_same(a->name, b->name) || !str_same(a->doc_string, b->doc_string) ||
        !same_kvs(a->n_metadata, a->metadata, b->n_metadata, b->metadata) || a->n_opaque != b->n_opaque)
        return differ(d, "graph '%s' header vs '%s'", a->name, b->name);
    if (a->n_values != b->n_values || a->n_nodes != b->n_nodes || a->next_node_id != b->next_node_id ||
        a->name_counter != b->name_counter || a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs ||
        a->n_initializers != b->n_initializers)
        return differ(d, "graph '%s' counts vs '%s'", a->name, b->name);
    for (uint32_t i = 0; i < a->n_values; i++) {
        const pc_value *x = a->values[i], *y = b->values[i];
        if (x->id != y->id || y->graph != b || strcmp(x->name, y->name) != 0 ||
            !pc_type_equal(&x->type, &y->type) || x->is_graph_input != y->is_graph_input ||
            x->is_graph_output != y->is_graph_output || x->has_value_info != y->has_value_info ||
            x->n_subgraph_refs != y->n_subgraph_refs || x->producer_output != y->producer_output ||
            !str_same(x->doc_string, y->doc_string) ||
            !same_kvs(x->n_metadata, x->metadata, y->n_metadata, y->metadata) ||
            (x->producer == NULL) != (y->producer == NULL) ||
            (x->producer && x->producer->id != y->producer->id) || !same_values_ref(x->outer, y->outer) ||
            (x->initializer == NULL) != (y->initializer == NULL) ||
            (x->initializer && !pc_tensor_equal(x->initializer, y->initializer)) ||
            x->n_consumers != y->n_consumers)
            return differ(d, "value '%s' vs '%s'", x->name, y->name);
        if (pc_graph_find_value(b, x->name) != y)
            return differ(d, "value '%s' not found by name in '%s'", x->name, b->name);
        for (uint32_t k = 0; k < x->n_consumers; k++)
            if (x->consumers[k].node->id != y->consumers[k].node->id || y->consumers[k].node->graph != b ||
                x->consumers[k].index != y->consumers[k].index)
                return differ(d, "use list of '%s' vs '%s'", x->name, y->name);
    }
    for (uint32_t i = 0; i < a->n_inputs; i++)
        if (!same_values_ref(a->inputs[i], b->inputs[i]))
            return differ(d, "inputs of '%s' vs '%s'", a->name, b->name);
    for (uint32_t i = 0; i < a->n_outputs; i++)
        if (!same_values_ref(a->outputs[i], b->outputs[i]))
            return differ(d, "outputs of '%s' vs '%s'", a->name, b->name);
    for (uint32_t i = 0; i < a->n_initializers; i++)
        if (!same_values_ref(a->initializers[i], b->initializers[i]))
            return differ(d, "initializers of '%s' vs '%s'", a->name, b->name);
    const pc_node *x = a->first, *y = b->first;
    for (; x && y; x = x->next, y = y->next) {
        if (x->id != y->id || y->graph != b || strcmp(x->op_type, y->op_type) != 0 ||
            !str_same(x->domain, y->domain) || !str_same(x->name, y->name) || !str_same(x->ep, y->ep) ||
            !str_same(x->overload, y->overload) || !str_same(x->doc_string, y->doc_string) ||
            !same_kvs(x->n_metadata, x->metadata, y->n_metadata, y->metadata) || x->n_inputs != y->n_inputs ||
            x->n_outputs != y->n_outputs || x->n_attrs != y->n_attrs || y->removed)
            return differ(d, "node '%s' vs '%s'", x->name, y->name);
        for (uint32_t k = 0; k < x->n_inputs; k++)
            if (!same_values_ref(x->inputs[k], y->inputs[k]) || (y->inputs[k] && y->inputs[k]->graph != b))
                return differ(d, "inputs of node '%s' vs '%s'", x->name, y->name);
        for (uint32_t k = 0; k < x->n_outputs; k++)
            if (!same_values_ref(x->outputs[k], y->outputs[k]) ||
                (y->outputs[k] && y->outputs[k]->producer != y))
                return differ(d, "outputs of node '%s' vs '%s'", x->name, y->name);
        for (uint32_t k = 0; k < x->n_attrs; k++) {
            if (!same_attr(d, &x->attrs[k], &y->attrs[k])) return false;
            const pc_attr *ya = &y->attrs[k];
            if (ya->g && (ya->g->parent != b || ya->g->owner != y))
                return differ(d, "subgraph of node '%s' hangs elsewhere ('%s')", x->name, y->name);
        }
    }
    if (x || y) return differ(d, "node lists of '%s' and '%s' differ in length", a->name, b->name);
    return true;
}

static bool same_model(diff *d, const pc_model *a, const pc_model *b)
{
    if (a->ir_version != b->ir_version || a->n_opsets != b->n_opsets || a->n_functions != b->n_functions ||
        !str_same(a->producer_name, b->producer_name) || !str_same(a->doc_string, b->doc_string) ||
        !same_kvs(a->n_metadata, a->metadata, b->n_metadata, b->metadata) || a->n_opaque != b->n_opaque)
        return differ(d, "model header %s vs %s", a->producer_name, b->producer_name);
    for (uint32_t i = 0; i < a->n_opsets; i++)
        if (!str_same(a->opsets[i].domain, b->opsets[i].domain) ||
            a->opsets[i].version != b->opsets[i].version)
            return differ(d, "opset '%s' vs '%s'", a->opsets[i].domain, b->opsets[i].domain);
    return same_graph(d, a->graph, b->graph);
}

/* Clones m and checks the clone against it; returns how many checks ran (1). */
static size_t check_clone(const pc_model *m, const char *what, const char *step)
{
    pc_model *c = NULL;
    pc_error err;
    CHECK_OK(pc_model_clone(m, &c, &err), &err);
    if (!c) return 0;
    diff d = {""};
    CHECK_MSG(same_model(&d, m, c), "%s after %s: the clone differs: %s", what, step, d.at);
    CHECK_MSG(pc_model_fingerprint(m) == pc_model_fingerprint(c), "%s after %s: fingerprints differ", what,
              step);
    size_t na, nb;
    uint8_t *a = save(m, &na), *b = save(c, &nb);
    CHECK_MSG(a && b && na == nb && memcmp(a, b, na) == 0, "%s after %s: saved bytes differ", what, step);
    free(a);
    free(b);
    pc_error verr;
    if (pc_model_verify(m, &verr) == PC_OK) CHECK_OK(pc_model_verify(c, &err), &err);
    pc_model_free(c);
    return 1;
}

/* ---------------------------------------------------------------------------------------------------------------
 * 1. Every pipeline step.
 */
typedef struct steps {
    const char *what;
    size_t n;
} steps;

static pc_status on_step(void *vctx, const char *pass, const char *provider, pc_model *model, bool changed,
                         pc_error *err)
{
    (void)provider;
    (void)changed;
    (void)err;
    steps *s = vctx;
    s->n += check_clone(model, s->what, pass);
    return PC_OK;
}

static void optimize(pc_model *m, const pc_case *c, const pc_ep **eps, uint32_t n_eps, pc_after_pass_fn hook,
                     void *hook_ctx, uint8_t **bytes, size_t *size, uint64_t *allocs)
{
    pc_optimize_options oo;
    pc_optimize_options_default(&oo);
    oo.eps = eps;
    oo.n_eps = n_eps;
    oo.layer_assignment = c->layer_assignment;
    oo.after_pass = hook;
    oo.after_pass_ctx = hook_ctx;
    pc_error err;
    uint64_t before = m->mem.n_allocs;
    pc_status st = pc_model_optimize(m, &oo, NULL, &err);
    *allocs = m->mem.n_allocs - before;
    *bytes = st == PC_OK ? save(m, size) : NULL;
}

static void test_generated(void)
{
    pc_error err;
    pc_ep_registry *reg = NULL;
    const pc_ep **eps = NULL;
    uint32_t n_eps = 0;
    CHECK_OK(pc_ep_registry_create(&reg, &err), &err);
    CHECK_OK(pc_ep_registry_parse_list(reg, "nhwc,cpu", &eps, &n_eps, &err), &err);
    size_t total = 0, runs = 0;
    for (size_t f = 0; f < pc_gen_family_count(); f++)
        for (uint64_t seed = 1; seed <= 12; seed++) {
            const char *family = pc_gen_family_at(f)->name;
            pc_case c;
            if (!pt_generate(family, seed * 104729 + f, &c)) continue;
            char what[64];
            snprintf(what, sizeof what, "%s seed %llu", family, (unsigned long long)seed);
            total += check_clone(c.model, what, "generation");
            /* 2. two clones and the case itself, optimized alike */
            pc_model *x = NULL, *y = NULL;
            CHECK_OK(pc_model_clone(c.model, &x, &err), &err);
            CHECK_OK(pc_model_clone(c.model, &y, &err), &err);
            uint8_t *bx = NULL, *by = NULL, *bc = NULL;
            size_t nx = 0, ny = 0, nc = 0;
            uint64_t ax = 0, ay = 0, ac = 0;
            if (x && y) {
                optimize(x, &c, eps, n_eps, NULL, NULL, &bx, &nx, &ax);
                optimize(y, &c, eps, n_eps, NULL, NULL, &by, &ny, &ay);
                CHECK_MSG(ax == ay, "%s: two clones optimized with %llu and %llu allocations", what,
                          (unsigned long long)ax, (unsigned long long)ay);
                CHECK_MSG((!bx && !by) || (bx && by && nx == ny && memcmp(bx, by, nx) == 0),
                          "%s: two clones optimize to different bytes", what);
            }
            steps s = {.what = what};
            optimize(c.model, &c, eps, n_eps, on_step, &s, &bc, &nc, &ac);
            CHECK_MSG((!bc && !bx) || (bc && bx && nc == nx && memcmp(bc, bx, nc) == 0),
                      "%s: a clone optimizes to other bytes than the case", what);
            total += s.n;
            runs++;
            free(bx);
            free(by);
            free(bc);
            pc_model_free(x);
            pc_model_free(y);
            pc_case_free(&c);
        }
    CHECK_MSG(total > 500, "only %zu clones checked", total);
    printf("test_ir_clone: %zu cases, %zu clones checked at generation and after every pass\n", runs, total);
    pc_ep_registry_free(reg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * 1b. The backend models, loaded.
 */
static void test_backend(void)
{
    const char *dir = getenv("PC_TESTDATA_DIR");
    if (!dir) dir = "/usr/share/libonnx-testdata/data";
    char node_dir[1024];
    snprintf(node_dir, sizeof node_dir, "%s/node", dir);
    DIR *d = opendir(node_dir);
    if (!d) {
        printf("test_ir_clone: no backend data at %s: skipped that part\n", node_dir);
        return;
    }
    size_t models = 0, with_subgraphs = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s/model.onnx", node_dir, e->d_name);
        pc_model *m = NULL;
        pc_load_options lo;
        pc_load_options_default(&lo);
        pc_error err;
        if (pc_model_load_file(path, &lo, &m, &err) != PC_OK) continue;
        models += check_clone(m, e->d_name, "loading");
        for (const pc_node *n = m->graph->first; n; n = n->next)
            for (uint32_t a = 0; a < n->n_attrs; a++)
                if (n->attrs[a].type == PC_ATTR_GRAPH || n->attrs[a].type == PC_ATTR_GRAPHS) {
                    with_subgraphs++;
                    goto counted;
                }
    counted:
        pc_model_free(m);
    }
    closedir(d);
    CHECK_MSG(models > 500 && with_subgraphs > 10, "only %zu backend models (%zu with subgraphs) cloned",
              models, with_subgraphs);
    printf("test_ir_clone: %zu backend models (%zu with subgraphs)\n", models, with_subgraphs);
}

/* ---------------------------------------------------------------------------------------------------------------
 * 3. Out of memory at every point.
 */
static void test_budget(void)
{
    pc_case c;
    CHECK(pt_generate("float", 4242, &c));
    pc_model *src = c.model;
    size_t failures = 0;
    bool done = false;
    for (size_t budget = 1; !done && budget < (64u << 20); budget += budget < 4096 ? 64 : budget / 16) {
        size_t keep = src->mem.budget;
        src->mem.budget = budget;
        pc_model *m = NULL;
        pc_error err;
        pc_status st = pc_model_clone(src, &m, &err);
        src->mem.budget = keep;
        if (st == PC_OK) {
            diff d = {""};
            CHECK_MSG(same_model(&d, src, m), "budget %zu: %s", budget, d.at);
            pc_model_free(m);
            done = true;
        } else {
            CHECK_MSG(st == PC_ERR_BUDGET && !m, "budget %zu: %s: %s", budget, pc_status_name(st),
                      err.message);
            failures++;
        }
    }
    CHECK_MSG(done && failures > 10, "the budget sweep ended with done=%d after %zu failures", done,
              failures);
    pc_case_free(&c);
}

int main(void)
{
    test_generated();
    test_backend();
    test_budget();
    return pc_test_finish("test_ir_clone");
}
