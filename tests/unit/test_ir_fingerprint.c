/* pc_model_fingerprint against its oracle, the ONNX saver: two models whose saved bytes differ must have
 * different fingerprints (the check runner skips the save when the fingerprint says a pass changed nothing,
 * so a miss here would hide a silent change from the validity property's changed-flag check).
 *
 * 1. Every step of the pipeline on generated cases of every family (EPs nhwc,cpu): consecutive steps whose
 *    bytes differ must fingerprint apart, and get different change stamps (pc_model_change_stamp, strings
 *    by address); equal bytes must fingerprint alike when the model is reloaded.
 * 2. Single-field mutations of generated models and of the ONNX backend test models (every field the saver
 *    writes that a pass could touch): each mutation that changes the saved bytes must change the
 *    fingerprint, and the change stamp of the mutated model, and every mutator must have changed the bytes
 *    at least once (so this test can fail). */
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

static pc_model *load(const uint8_t *b, size_t size)
{
    pc_load_options lo;
    pc_load_options_default(&lo);
    lo.skip_verify = true;
    pc_model *m = NULL;
    pc_error err;
    CHECK_OK(pc_model_load_bytes(b, size, &lo, &m, &err), &err);
    return m;
}

static bool same_bytes(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    return na == nb && memcmp(a, b, na) == 0;
}

/* ---------------------------------------------------------------------------------------------------------------
 * 1. Pipeline steps.
 */
typedef struct steps {
    uint8_t *prev;
    size_t prev_size;
    uint64_t prev_fp, prev_stamp;
    const char *what;
    size_t n, changed;
} steps;

static pc_status on_step(void *vctx, const char *pass, const char *provider, pc_model *model, bool changed,
                         pc_error *err)
{
    (void)provider;
    (void)changed;
    (void)err;
    steps *s = vctx;
    size_t size;
    uint8_t *b = save(model, &size);
    uint64_t fp = pc_model_fingerprint(model), stamp = pc_model_change_stamp(model);
    bool differ = !same_bytes(b, size, s->prev, s->prev_size);
    CHECK_MSG(!differ || fp != s->prev_fp, "%s: pass %s changed the bytes, not the fingerprint", s->what,
              pass);
    CHECK_MSG(!differ || stamp != s->prev_stamp, "%s: pass %s changed the bytes, not the change stamp",
              s->what, pass);
    /* the same bytes, reloaded, give one fingerprint: it depends on what is saved, not on load history */
    pc_model *again = load(b, size);
    if (again) {
        pc_model *twice = load(b, size);
        CHECK_MSG(twice && pc_model_fingerprint(again) == pc_model_fingerprint(twice), "%s: after %s",
                  s->what, pass);
        pc_model_free(twice);
        pc_model_free(again);
    }
    s->n++;
    s->changed += differ;
    free(s->prev);
    s->prev = b;
    s->prev_size = size;
    s->prev_fp = fp;
    s->prev_stamp = stamp;
    return PC_OK;
}

static void test_pipeline_steps(void)
{
    pc_error err;
    pc_ep_registry *reg = NULL;
    const pc_ep **eps = NULL;
    uint32_t n_eps = 0;
    CHECK_OK(pc_ep_registry_create(&reg, &err), &err);
    CHECK_OK(pc_ep_registry_parse_list(reg, "nhwc,cpu", &eps, &n_eps, &err), &err);
    size_t total = 0, changed = 0;
    for (size_t f = 0; f < pc_gen_family_count(); f++)
        for (uint64_t seed = 1; seed <= 25; seed++) {
            const char *family = pc_gen_family_at(f)->name;
            pc_case c;
            if (!pt_generate(family, seed * 7919 + f, &c)) continue;
            char what[64];
            snprintf(what, sizeof what, "%s seed %llu", family, (unsigned long long)seed);
            steps s = {.what = what};
            s.prev = save(c.model, &s.prev_size);
            s.prev_fp = pc_model_fingerprint(c.model);
            s.prev_stamp = pc_model_change_stamp(c.model);
            pc_optimize_options oo;
            pc_optimize_options_default(&oo);
            oo.eps = eps;
            oo.n_eps = n_eps;
            oo.layer_assignment = c.layer_assignment;
            oo.after_pass = on_step;
            oo.after_pass_ctx = &s;
            pc_status st = pc_model_optimize(c.model, &oo, NULL, &err);
            (void)st; /* a pipeline error is other tests' business: the steps before it were compared */
            total += s.n;
            changed += s.changed;
            free(s.prev);
            pc_case_free(&c);
        }
    CHECK_MSG(changed > 50, "only %zu of %zu steps changed the bytes", changed, total);
    printf("test_ir_fingerprint: %zu pipeline steps, %zu changed the bytes\n", total, changed);
    pc_ep_registry_free(reg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * 2. Single-field mutations: each returns false when the model has nothing it can change.
 */
typedef bool (*mutator_fn)(pc_model *m);

/* The k-th node of the main graph with pred true, depth first through bodies when `bodies`. */
static pc_node *find_node(pc_graph *g, bool (*pred)(const pc_node *), bool bodies)
{
    for (pc_node *n = g->first; n; n = n->next) {
        if (!bodies && pred(n)) return n;
        for (uint32_t a = 0; bodies && a < n->n_attrs; a++)
            if (n->attrs[a].type == PC_ATTR_GRAPH && n->attrs[a].g) {
                for (pc_node *x = n->attrs[a].g->first; x; x = x->next)
                    if (pred(x)) return x;
            }
    }
    return NULL;
}

static bool any_node(const pc_node *n)
{
    (void)n;
    return true;
}

static pc_attr *find_attr(pc_model *m, pc_attr_type type)
{
    for (pc_node *n = m->graph->first; n; n = n->next)
        for (uint32_t a = 0; a < n->n_attrs; a++)
            if (n->attrs[a].type == type && (type != PC_ATTR_INTS || n->attrs[a].n) &&
                (type != PC_ATTR_TENSOR || (n->attrs[a].t && n->attrs[a].t->n_bytes)))
                return &n->attrs[a];
    return NULL;
}

static pc_value *find_value(pc_model *m, bool typed_dim, bool intermediate)
{
    pc_graph *g = m->graph;
    for (uint32_t i = 0; i < g->n_values; i++) {
        pc_value *v = g->values[i];
        if (intermediate && (!v->producer || v->is_graph_output)) continue;
        if (typed_dim && !(v->type.kind == PC_TYPE_TENSOR && v->type.shape.rank > 0 &&
                           v->type.shape.dims[0].kind == PC_DIM_KNOWN))
            continue;
        if (!v->producer && !v->initializer && !v->is_graph_input) continue; /* not saved */
        return v;
    }
    return NULL;
}

static bool mut_node_name(pc_model *m)
{
    pc_node *n = m->graph->first;
    if (!n) return false;
    n->name = pc_arena_printf(&m->arena, "%s_x", n->name ? n->name : "");
    return true;
}

static bool mut_op_type(pc_model *m)
{
    pc_node *n = m->graph->last;
    if (!n) return false;
    n->op_type = strcmp(n->op_type, "Relu") == 0 ? "Neg" : "Relu";
    return true;
}

static bool mut_domain(pc_model *m)
{
    pc_node *n = m->graph->first;
    if (!n) return false;
    n->domain = n->domain && *n->domain ? "" : "com.example";
    return true;
}

static bool mut_attr_int(pc_model *m)
{
    pc_attr *a = find_attr(m, PC_ATTR_INT);
    if (!a) return false;
    a->i ^= 1;
    return true;
}

static bool mut_attr_float(pc_model *m)
{
    pc_attr *a = find_attr(m, PC_ATTR_FLOAT);
    if (!a) return false;
    a->f = a->f == 0.5f ? 0.25f : 0.5f;
    return true;
}

static bool mut_attr_ints(pc_model *m)
{
    pc_attr *a = find_attr(m, PC_ATTR_INTS);
    if (!a) return false;
    a->ints[a->n - 1] ^= 1;
    return true;
}

static bool mut_attr_tensor(pc_model *m)
{
    pc_attr *a = find_attr(m, PC_ATTR_TENSOR);
    if (!a || a->t->dtype == PC_DTYPE_STRING) return false;
    ((uint8_t *)a->t->data)[a->t->n_bytes - 1] ^= 1;
    return true;
}

static bool two_inputs(const pc_node *n)
{
    return n->n_inputs >= 2 && n->inputs[0] && n->inputs[1] && n->inputs[0] != n->inputs[1];
}

static bool mut_swap_inputs(pc_model *m)
{
    pc_node *n = find_node(m->graph, two_inputs, false);
    if (!n) return false;
    pc_value *t = n->inputs[0];
    n->inputs[0] = n->inputs[1];
    n->inputs[1] = t;
    return true;
}

static bool mut_value_name(pc_model *m)
{
    pc_value *v = find_value(m, false, true);
    if (!v) return false;
    v->name = pc_arena_printf(&m->arena, "%s_renamed", v->name);
    return true;
}

static bool mut_elem_type(pc_model *m)
{
    pc_value *v = find_value(m, true, false);
    if (!v) return false;
    v->type.elem = v->type.elem == PC_DTYPE_FLOAT ? PC_DTYPE_INT64 : PC_DTYPE_FLOAT;
    return true;
}

static bool mut_dim(pc_model *m)
{
    pc_value *v = find_value(m, true, false);
    if (!v) return false;
    v->type.shape.dims[0].size++;
    return true;
}

static bool mut_dim_symbol(pc_model *m)
{
    pc_value *v = find_value(m, true, false);
    if (!v) return false;
    v->type.shape.dims[0].kind = PC_DIM_SYMBOLIC;
    v->type.shape.dims[0].symbol = "batch";
    return true;
}

static bool mut_initializer(pc_model *m)
{
    pc_graph *g = m->graph;
    for (uint32_t i = 0; i < g->n_initializers; i++) {
        pc_tensor *t = g->initializers[i]->initializer;
        if (t && t->n_bytes && t->dtype != PC_DTYPE_STRING) {
            ((uint8_t *)t->data)[0] ^= 0x40;
            return true;
        }
    }
    return false;
}

static bool mut_outputs(pc_model *m)
{
    pc_graph *g = m->graph;
    if (g->n_outputs >= 2 && g->outputs[0] != g->outputs[1]) {
        pc_value *t = g->outputs[0];
        g->outputs[0] = g->outputs[1];
        g->outputs[1] = t;
        return true;
    }
    return false;
}

static bool mut_annotation(pc_model *m)
{
    pc_node *n = m->graph->first;
    pc_error err;
    return n && pc_node_set_metadata(n, PC_LAYER_ANN_KEY, "changed.layer", &err) == PC_OK;
}

static bool mut_ep(pc_model *m)
{
    pc_node *n = m->graph->first;
    if (!n) return false;
    n->ep = n->ep && strcmp(n->ep, "cpu") == 0 ? "nhwc" : "cpu";
    return true;
}

static bool mut_opset(pc_model *m)
{
    if (!m->n_opsets) return false;
    m->opsets[0].version++;
    return true;
}

static bool mut_ir_version(pc_model *m)
{
    m->ir_version++;
    return true;
}

static bool mut_producer(pc_model *m)
{
    m->producer_name = "someone-else";
    return true;
}

static bool mut_value_info(pc_model *m)
{
    pc_graph *g = m->graph;
    for (uint32_t i = 0; i < g->n_values; i++) {
        pc_value *v = g->values[i];
        if (!v->producer || v->is_graph_output) continue;
        if (v->type.kind == PC_TYPE_NONE) { /* untyped: give it a type and a value_info entry */
            v->type = (pc_type){.kind = PC_TYPE_TENSOR, .elem = PC_DTYPE_FLOAT, .shape = {.rank = -1}};
            v->has_value_info = true;
        } else {
            v->has_value_info = !v->has_value_info;
        }
        return true;
    }
    return false;
}

static bool mut_doc(pc_model *m)
{
    pc_node *n = m->graph->first;
    if (!n) return false;
    n->doc_string = "a doc string";
    return true;
}

static bool mut_body_node(pc_model *m)
{
    pc_node *n = find_node(m->graph, any_node, true);
    if (!n || n->graph == m->graph) return false;
    n->name = pc_arena_printf(&m->arena, "%s_x", n->name ? n->name : "");
    return true;
}

static const struct {
    const char *name;
    mutator_fn fn;
} mutators[] = {
    {"node-name", mut_node_name},
    {"op-type", mut_op_type},
    {"domain", mut_domain},
    {"attr-int", mut_attr_int},
    {"attr-float", mut_attr_float},
    {"attr-ints", mut_attr_ints},
    {"attr-tensor", mut_attr_tensor},
    {"swap-inputs", mut_swap_inputs},
    {"value-name", mut_value_name},
    {"elem-type", mut_elem_type},
    {"dim", mut_dim},
    {"dim-symbol", mut_dim_symbol},
    {"initializer", mut_initializer},
    {"outputs", mut_outputs},
    {"annotation", mut_annotation},
    {"ep", mut_ep},
    {"opset", mut_opset},
    {"ir-version", mut_ir_version},
    {"producer", mut_producer},
    {"value-info", mut_value_info},
    {"doc", mut_doc},
    {"body-node", mut_body_node},
};
enum { N_MUTATORS = sizeof mutators / sizeof mutators[0] };

static size_t effective[N_MUTATORS];

static void mutate_all(const uint8_t *bytes, size_t size, const char *what)
{
    pc_model *base = load(bytes, size);
    if (!base) return;
    uint64_t fp0 = pc_model_fingerprint(base);
    for (size_t k = 0; k < N_MUTATORS; k++) {
        pc_model *m = load(bytes, size);
        if (!m) break;
        uint64_t stamp0 = pc_model_change_stamp(m); /* a stamp compares one live model with itself */
        if (mutators[k].fn(m)) {
            size_t n;
            uint8_t *b = save(m, &n);
            if (b && !same_bytes(b, n, bytes, size)) {
                effective[k]++;
                CHECK_MSG(pc_model_fingerprint(m) != fp0,
                          "%s: mutation %s changed the bytes, not the fingerprint", what, mutators[k].name);
                CHECK_MSG(pc_model_change_stamp(m) != stamp0,
                          "%s: mutation %s changed the bytes, not the change stamp", what, mutators[k].name);
            }
            free(b);
        }
        pc_model_free(m);
    }
    pc_model_free(base);
}

static void test_mutations(void)
{
    pc_error err;
    size_t models = 0;
    for (size_t f = 0; f < pc_gen_family_count(); f++)
        for (uint64_t seed = 1; seed <= 20; seed++) {
            const char *family = pc_gen_family_at(f)->name;
            pc_case c;
            if (!pt_generate(family, seed * 104729 + f, &c)) continue;
            char what[64];
            snprintf(what, sizeof what, "%s seed %llu", family, (unsigned long long)seed);
            size_t n;
            uint8_t *b = save(c.model, &n);
            if (b) mutate_all(b, n, what);
            free(b);
            models++;
            pc_case_free(&c);
        }
    /* the backend test models: doc strings, value_info, metadata and types the generators do not write */
    const char *dir = getenv("PC_TESTDATA_DIR");
    const char *sets[] = {"node", "simple", "pytorch-operator"};
    for (size_t s = 0; dir && s < 3; s++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, sets[s]);
        DIR *d = opendir(path);
        if (!d) continue;
        size_t i = 0;
        for (struct dirent *e = readdir(d); e; e = readdir(d)) {
            if (e->d_name[0] == '.' || i++ % 7) continue; /* every 7th case: ~150 models */
            char model_path[1536];
            snprintf(model_path, sizeof model_path, "%s/%s/model.onnx", path, e->d_name);
            char *data = NULL;
            size_t size = 0;
            if (pc_file_read_all(model_path, 64u << 20, &data, &size, &err) != PC_OK) continue;
            pc_model *m = NULL;
            pc_load_options lo;
            pc_load_options_default(&lo);
            if (pc_model_load_bytes((const uint8_t *)data, size, &lo, &m, &err) == PC_OK) {
                size_t n;
                uint8_t *b = save(m, &n);
                if (b) mutate_all(b, n, e->d_name);
                free(b);
                models++;
                pc_model_free(m);
            }
            free(data);
        }
        closedir(d);
    }
    for (size_t k = 0; k < N_MUTATORS; k++)
        CHECK_MSG(effective[k] > 0, "mutation %s never changed the saved bytes: the test cannot fail there",
                  mutators[k].name);
    printf("test_ir_fingerprint: %zu models x %d mutations\n", models, (int)N_MUTATORS);
}

int main(void)
{
    test_pipeline_steps();
    test_mutations();
    return pc_test_finish("test_ir_fingerprint");
}
