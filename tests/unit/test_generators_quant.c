/* The quantized generator families, qdq and qlinear: over many seeds every case verifies, shape inference run
 * afresh agrees with the declared types, the reference executor runs it (no NaN), replaying the recorded
 * choices gives byte-identical models and inputs, the all-zero sequence gives one node, and the ops,
 * parameter kinds (per tensor / per axis, int8 / uint8, equal / different DQ->Q pairs) the families promise
 * all occur. Quantized outputs must not be saturated everywhere. remove_dq_q on qdq cases is checked
 * bit-exact on the reference (the generator's unequal DQ->Q pairs would break that if the pass fired on
 * them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "generators/gen.h"
#include "core/passes/pass.h"
#include "tests/pass_test_util.h"
#include "reference/reference.h"
#include "tests/test_util.h"

#define N_SEEDS 150

static pc_model *clone_model(const pc_model *m)
{
    return pt_clone(m);
}

static bool save(const pc_model *m, uint8_t **bytes, size_t *size)
{
    pc_error err;
    return pc_model_save_bytes(m, bytes, size, &err) == PC_OK;
}

/* Shape inference from scratch on a copy whose node outputs lost their types agrees with the generator's. */
static bool shapes_agree(const pc_model *m, char *why, size_t why_size)
{
    pc_model *c = clone_model(m);
    pc_error err;
    for (pc_node *n = c->graph->first; n; n = n->next)
        for (uint32_t o = 0; o < n->n_outputs; o++) {
            pc_value *v = n->outputs[o];
            if (!v || v->is_graph_output) continue;
            pc_type none = {.kind = PC_TYPE_NONE};
            if (pc_value_set_type(v, &none, &err) != PC_OK) {
                snprintf(why, why_size, "reset type of '%s': %s", v->name, err.message);
                pc_model_free(c);
                return false;
            }
        }
    bool ok = true;
    if (pc_graph_infer_shapes(c->graph, &err) != PC_OK) {
        snprintf(why, why_size, "inference failed: %s", err.message);
        ok = false;
    }
    for (pc_node *n = m->graph->first; ok && n; n = n->next)
        for (uint32_t o = 0; ok && o < n->n_outputs; o++) {
            const pc_value *v = n->outputs[o];
            const pc_value *w = v ? pc_graph_find_value(c->graph, v->name) : NULL;
            if (v && (!w || !pt_type_refines(&v->type, &w->type))) {
                snprintf(why, why_size, "value '%s' (output of %s '%s'): declared and inferred types differ",
                         v->name, n->op_type, n->name);
                ok = false;
            }
        }
    pc_model_free(c);
    return ok;
}

static bool same_inputs(const pc_case *a, const pc_case *b)
{
    if (a->n_inputs != b->n_inputs) return false;
    for (uint32_t i = 0; i < a->n_inputs; i++)
        if (a->inputs[i]->n_bytes != b->inputs[i]->n_bytes ||
            memcmp(a->inputs[i]->data, b->inputs[i]->data, a->inputs[i]->n_bytes) != 0)
            return false;
    return true;
}

static double elem(const pc_data *d, uint64_t i)
{
    switch (d->dtype) {
    case PC_DTYPE_FLOAT:
        return ((const float *)d->data)[i];
    case PC_DTYPE_UINT8:
        return ((const uint8_t *)d->data)[i];
    case PC_DTYPE_INT8:
        return ((const int8_t *)d->data)[i];
    default:
        return 0;
    }
}

typedef struct coverage {
    const char *op;
    int count;
} coverage;

static void count_op(coverage *cov, size_t n, const char *op)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(cov[i].op, op) == 0) cov[i].count++;
}

static bool const_equal(const pc_value *a, const pc_value *b)
{
    const pc_tensor *x = a ? a->initializer : NULL, *y = b ? b->initializer : NULL;
    if (!x || !y) return x == y;
    return x->dtype == y->dtype && x->n_bytes == y->n_bytes && memcmp(x->data, y->data, x->n_bytes) == 0;
}

typedef struct stats {
    int per_axis, per_tensor, int8, uint8, dq_q_equal, dq_q_different, dq_shared, bias, relu_after_conv,
        zp_absent;
    uint64_t q_elems, q_saturated;
    int max_nodes, cases;
} stats;

static void note_params(stats *st, const pc_model *m)
{
    for (const pc_node *n = m->graph->first; n; n = n->next) {
        bool q = strcmp(n->op_type, "QuantizeLinear") == 0, dq = strcmp(n->op_type, "DequantizeLinear") == 0;
        if (dq && n->outputs[0]->n_consumers > 1) st->dq_shared++;
        if (dq && n->inputs[0]->initializer && n->inputs[0]->initializer->dtype == PC_DTYPE_INT32) st->bias++;
        if (strcmp(n->op_type, "Relu") == 0 && n->inputs[0]->producer &&
            strcmp(n->inputs[0]->producer->op_type, "Conv") == 0)
            st->relu_after_conv++;
        if (strncmp(n->op_type, "QLinear", 7) == 0) {
            const pc_tensor *ws = n->inputs[4]->initializer;
            if (ws && ws->n_elements > 1)
                st->per_axis++;
            else
                st->per_tensor++;
            st->int8 += n->inputs[0]->type.elem == PC_DTYPE_INT8;
            st->uint8 += n->inputs[0]->type.elem == PC_DTYPE_UINT8;
        }
        if (!q && !dq) continue;
        st->zp_absent += n->n_inputs < 3 || !n->inputs[2];
        const pc_tensor *s = n->inputs[1]->initializer;
        if (s && s->n_elements > 1)
            st->per_axis++;
        else
            st->per_tensor++;
        pc_dtype t = q ? n->outputs[0]->type.elem : n->inputs[0]->type.elem;
        st->int8 += t == PC_DTYPE_INT8;
        st->uint8 += t == PC_DTYPE_UINT8;
        if (q && n->inputs[0]->producer && strcmp(n->inputs[0]->producer->op_type, "DequantizeLinear") == 0) {
            const pc_node *d = n->inputs[0]->producer;
            const pc_value *dz = d->n_inputs > 2 ? d->inputs[2] : NULL,
                           *qz = n->n_inputs > 2 ? n->inputs[2] : NULL;
            bool eq = const_equal(d->inputs[1], n->inputs[1]) && const_equal(dz, qz) &&
                      pc_node_attr_int(d, "axis", 1) == pc_node_attr_int(n, "axis", 1);
            if (eq)
                st->dq_q_equal++;
            else
                st->dq_q_different++;
        }
    }
}

static void check_family(const char *family, const char *const *want_ops, size_t n_want)
{
    coverage cov[16];
    for (size_t i = 0; i < n_want; i++)
        cov[i] = (coverage){want_ops[i], 0};
    stats st = {0};
    pc_gen_config cfg;
    pc_gen_config_default(&cfg);
    cfg.family = family;
    int remove_fired = 0;
    for (uint64_t seed = 1; seed <= N_SEEDS; seed++) {
        pc_choices ch;
        pc_choices_init_random(&ch, seed);
        pc_case c;
        pc_error err;
        pc_status gst = pc_case_generate(&cfg, &ch, &c, &err);
        CHECK_MSG(gst == PC_OK, "%s seed %llu: %s", family, (unsigned long long)seed, err.message);
        if (gst != PC_OK) {
            pc_choices_free(&ch);
            continue;
        }
        st.cases++;
        CHECK_MSG(c.model->graph->n_nodes <= cfg.max_nodes, "%s seed %llu: %u nodes", family,
                  (unsigned long long)seed, c.model->graph->n_nodes);
        if ((int)c.model->graph->n_nodes > st.max_nodes) st.max_nodes = (int)c.model->graph->n_nodes;
        CHECK_OK(pc_model_verify(c.model, &err), &err);
        char why[PT_WHY_SIZE];
        CHECK_MSG(shapes_agree(c.model, why, sizeof why), "%s seed %llu: %s", family,
                  (unsigned long long)seed, why);
        for (const pc_node *n = c.model->graph->first; n; n = n->next)
            count_op(cov, n_want, n->op_type);
        note_params(&st, c.model);

        /* runs on the reference; quantized outputs are not all saturated */
        pc_data **outs = NULL;
        pc_status rst = pc_ref_run(c.model, c.n_inputs, c.inputs, &outs, &err);
        CHECK_MSG(rst == PC_OK, "%s seed %llu: reference: %s", family, (unsigned long long)seed, err.message);
        for (uint32_t o = 0; rst == PC_OK && o < c.model->graph->n_outputs; o++) {
            const pc_data *d = outs[o];
            for (uint64_t i = 0; i < d->n_elements; i++) {
                double v = elem(d, i);
                CHECK_MSG(!isnan(v), "%s seed %llu: NaN in output %u", family, (unsigned long long)seed, o);
                if (d->dtype == PC_DTYPE_UINT8 || d->dtype == PC_DTYPE_INT8) {
                    double lo = d->dtype == PC_DTYPE_INT8 ? -128 : 0,
                           hi = d->dtype == PC_DTYPE_INT8 ? 127 : 255;
                    st.q_elems++;
                    st.q_saturated += v == lo || v == hi;
                }
            }
        }
        if (outs) pc_ref_free_outputs(c.model, outs);

        /* replay: byte-identical model and inputs */
        pc_choices again;
        pc_choices_init_replay(&again, ch.values, ch.n);
        pc_case r;
        CHECK_OK(pc_case_generate(&cfg, &again, &r, &err), &err);
        uint8_t *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        CHECK(save(c.model, &a, &na) && save(r.model, &b, &nb));
        CHECK_MSG(na == nb && a && b && memcmp(a, b, na) == 0, "%s seed %llu: replay differs", family,
                  (unsigned long long)seed);
        CHECK(same_inputs(&c, &r));
        CHECK(again.n == ch.n);
        free(a);
        free(b);
        pc_case_free(&r);
        pc_choices_free(&again);

        /* remove_dq_q is exact: firing on an unequal pair would show */
        pc_model *before = clone_model(c.model);
        pc_pass_options o = pt_pass_options("remove_dq_q");
        if (pt_run_pass(pc_pass_remove_dq_q, c.model, &o)) {
            remove_fired++;
            CHECK_MSG(pt_equiv_inputs(before, c.model, c.n_inputs, c.inputs, 0, 0, why, sizeof why) == 1,
                      "%s seed %llu: %s", family, (unsigned long long)seed, why);
        }
        pc_model_free(before);
        pc_case_free(&c);
        pc_choices_free(&ch);
    }
    for (size_t i = 0; i < n_want; i++)
        CHECK_MSG(cov[i].count > 0, "%s: no %s in %d cases", family, cov[i].op, N_SEEDS);
    CHECK_MSG(st.per_axis > 0 && st.per_tensor > 0, "%s: per-axis %d, per-tensor %d", family, st.per_axis,
              st.per_tensor);
    CHECK_MSG(st.int8 > 0 && st.uint8 > 0, "%s: int8 %d, uint8 %d", family, st.int8, st.uint8);
    CHECK_MSG(st.q_elems > 0 && (double)st.q_saturated < 0.35 * (double)st.q_elems,
              "%s: %llu of %llu quantized output elements saturated", family,
              (unsigned long long)st.q_saturated, (unsigned long long)st.q_elems);
    CHECK_MSG(st.max_nodes >= 8, "%s: largest case has %d nodes", family, st.max_nodes);
    if (strcmp(family, "qdq") == 0) {
        CHECK_MSG(st.dq_q_equal > 0 && st.dq_q_different > 0, "qdq: DQ->Q equal %d, different %d",
                  st.dq_q_equal, st.dq_q_different);
        CHECK_MSG(remove_fired > 0, "qdq: remove_dq_q never fired");
        CHECK_MSG(st.zp_absent > 0, "qdq: no Q or DQ left its zero point to the default");
        CHECK_MSG(st.dq_shared > 0 && st.bias > 0 && st.relu_after_conv > 0,
                  "qdq: shared DQ %d, bias %d, relu %d", st.dq_shared, st.bias, st.relu_after_conv);
    }
    printf(
        "%s: %d cases, largest %d nodes, %llu/%llu quantized outputs saturated, per-axis %d, DQ->Q equal %d "
        "different %d, remove_dq_q fired on %d, zero point absent %d\n",
        family, st.cases, st.max_nodes, (unsigned long long)st.q_saturated, (unsigned long long)st.q_elems,
        st.per_axis, st.dq_q_equal, st.dq_q_different, remove_fired, st.zp_absent);
}

/* The all-zero sequence is one node, valid and runnable. */
static void check_all_zero(const char *family, const char *op)
{
    pc_gen_config cfg;
    pc_gen_config_default(&cfg);
    cfg.family = family;
    pc_choices ch;
    pc_choices_init_replay(&ch, NULL, 0);
    pc_case c;
    pc_error err;
    CHECK_OK(pc_case_generate(&cfg, &ch, &c, &err), &err);
    if (!c.model) return;
    CHECK_MSG(c.model->graph->n_nodes == 1, "%s: all-zero case has %u nodes", family,
              c.model->graph->n_nodes);
    CHECK_MSG(strcmp(c.model->graph->first->op_type, op) == 0, "%s: all-zero node is %s", family,
              c.model->graph->first->op_type);
    pc_data **outs = NULL;
    CHECK_OK(pc_ref_run(c.model, c.n_inputs, c.inputs, &outs, &err), &err);
    if (outs) pc_ref_free_outputs(c.model, outs);
    pc_case_free(&c);
    pc_choices_free(&ch);
}

/* Small configurations (one node, rank 1, few elements) still generate valid cases. */
static void check_small_configs(const char *family)
{
    pc_gen_config cfg;
    pc_gen_config_default(&cfg);
    cfg.family = family;
    cfg.max_nodes = 3;
    cfg.max_rank = 2;
    cfg.max_elements = 4;
    for (uint64_t seed = 1; seed <= 30; seed++) {
        pc_choices ch;
        pc_choices_init_random(&ch, seed);
        pc_case c;
        pc_error err;
        CHECK_MSG(pc_case_generate(&cfg, &ch, &c, &err) == PC_OK, "%s small seed %llu: %s", family,
                  (unsigned long long)seed, err.message);
        if (c.model) {
            CHECK(c.model->graph->n_nodes >= 1 && c.model->graph->n_nodes <= 3);
            pc_data **outs = NULL;
            CHECK_OK(pc_ref_run(c.model, c.n_inputs, c.inputs, &outs, &err), &err);
            if (outs) pc_ref_free_outputs(c.model, outs);
        }
        pc_case_free(&c);
        pc_choices_free(&ch);
    }
}

int main(void)
{
    static const char *const qdq_ops[] = {
        "QuantizeLinear", "DequantizeLinear", "Conv",    "MatMul", "Add",     "Mul",
        "Relu",           "Sigmoid",          "MaxPool", "Concat", "Reshape", "Transpose"};
    static const char *const qlinear_ops[] = {"QuantizeLinear", "DequantizeLinear", "QLinearConv",
                                              "QLinearMatMul", "Relu"};
    check_all_zero("qdq", "QuantizeLinear");
    check_all_zero("qlinear", "QLinearConv");
    check_family("qdq", qdq_ops, sizeof qdq_ops / sizeof qdq_ops[0]);
    check_family("qlinear", qlinear_ops, sizeof qlinear_ops / sizeof qlinear_ops[0]);
    check_small_configs("qdq");
    check_small_configs("qlinear");
    return pc_test_finish("test_generators_quant");
}
