/* The graph phase's dims and ranks edits (properties/shrink/shrink_graph.c, edit_dims). Oracles are
 * independent of the shrinker: the reference executor decides the synthetic predicates ("a Relu/Conv is left
 * and some output is above 500", where one input element is 1000 and every other one is below 2), the
 * verifier and shape inference judge the result, and the minimal size is known by construction (the failure
 * needs one element).
 *
 * Without the dims edits the graph phase cannot change a tensor's shape: the cases below end with 24 of 28
 * and all 104 elements. */
#include "tests/pass_test_util.h"
#include "reference/reference.h"
#include "properties/shrink/shrink_internal.h"
#include "tests/test_util.h"

/* The predicate: the model has an op `op` and its reference run gives some float output element above 500. */
typedef struct big_pred {
    const char *op;
    uint32_t calls;
} big_pred;

static bool has_op(const pc_model *m, const char *op)
{
    for (const pc_node *n = m->graph->first; n; n = n->next)
        if (strcmp(n->op_type, op) == 0) return true;
    return false;
}

static float max_output(const pc_case *c, bool *ran)
{
    pc_data **outs = NULL;
    pc_error err;
    *ran = pc_ref_run(c->model, c->n_inputs, c->inputs, &outs, &err) == PC_OK;
    if (!*ran) return 0;
    float best = -INFINITY;
    for (uint32_t k = 0; k < c->model->graph->n_outputs; k++) {
        const pc_data *d = outs[k];
        if (!d || d->kind != PC_TYPE_TENSOR || d->dtype != PC_DTYPE_FLOAT) continue;
        for (uint64_t i = 0; i < d->n_elements; i++)
            if (((const float *)d->data)[i] > best) best = ((const float *)d->data)[i];
    }
    pc_ref_free_outputs(c->model, outs);
    return best;
}

static pc_status big_check(void *ctx, const pc_case *c, pc_check_result *res, bool *interesting,
                           pc_error *err)
{
    (void)res;
    (void)err;
    big_pred *p = ctx;
    p->calls++;
    bool ran;
    *interesting = has_op(c->model, p->op) && max_output(c, &ran) > 500.0f && ran;
    return PC_OK;
}

/* Elements held by the case: its input data and its initializers. */
static uint64_t case_elements(const pc_case *c)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < c->n_inputs; i++)
        n += c->inputs[i]->n_elements;
    const pc_graph *g = c->model->graph;
    for (uint32_t i = 0; i < g->n_initializers; i++)
        n += g->initializers[i]->initializer->n_elements;
    return n;
}

static pc_data *float_data(int32_t rank, const int64_t *dims, uint64_t big_at)
{
    pc_error err;
    pc_data *d = pc_data_new_tensor(PC_DTYPE_FLOAT, rank, dims, &err);
    if (!d) pt_die("data", &err);
    float *x = d->data;
    for (uint64_t i = 0; i < d->n_elements; i++)
        x[i] = (float)((i * 7) % 11) / 8.0f - 0.6f; /* in [-0.6, 0.65] */
    x[big_at] = 1000.0f;
    return d;
}

static void options(pc_shrink_options *o)
{
    pc_shrink_options_default(o);
    o->isolate = false;
    o->max_seconds = 30;
}

/* The result is a valid model: verifier, shape inference on a copy, a reference run. */
static void check_valid(const pc_case *c, const char *what)
{
    pc_error err;
    CHECK_MSG(pc_model_verify(c->model, &err) == PC_OK, "%s: verify: %s", what, err.message);
    pc_model *copy = pt_clone(c->model);
    CHECK_MSG(pc_graph_infer_shapes(copy->graph, &err) == PC_OK, "%s: shape inference: %s", what,
              err.message);
    pc_model_free(copy);
    bool ran;
    float top = max_output(c, &ran);
    CHECK_MSG(ran && top > 500.0f, "%s: the reference no longer sees the big value (ran %d, max %g)", what,
              ran, top);
}

/* x[2,3,4] + w[4] -> Add -> Relu -> y, the 1000 at x[1,2,1] (neither the first nor the last element of any
 * axis, so keeping only prefixes cannot reach it). Minimal: Relu of one element. */
static void test_one_value(void)
{
    pc_case c;
    memset(&c, 0, sizeof c);
    c.model = pt_model(17);
    const int64_t xd[3] = {2, 3, 4};
    pt_input(c.model, "x", PC_DTYPE_FLOAT, 3, xd);
    const float w[4] = {0.5f, 0.25f, -0.5f, 0.125f};
    pt_const_f(c.model, "w", 1, (int64_t[]){4}, w);
    pt_node(c.model, "Add", "", "x,w", "a", NULL);
    pt_node(c.model, "Relu", "", "a", "y", NULL);
    pt_output(c.model, "y");
    pc_error err;
    if (pc_graph_infer_shapes(c.model->graph, &err) != PC_OK) pt_die("infer", &err);
    c.n_inputs = 1;
    c.inputs = calloc(1, sizeof *c.inputs);
    c.inputs[0] = float_data(3, xd, 1 * 12 + 2 * 4 + 1);
    c.ep_list = strdup("cpu");
    c.family = "outside";
    uint64_t before = case_elements(&c);

    big_pred p = {"Relu", 0};
    pc_shrink_options o;
    options(&o);
    pc_shrink_result r;
    CHECK_OK(pc_shrink_model_fn(&c, big_check, &p, &o, &r, &err), &err);
    if (r.kase.model) {
        uint64_t after = case_elements(&r.kase);
        printf("test_shrink_dims: Add+Relu on x[2,3,4]: %llu -> %llu elements, %u nodes, %u checks, %.3f s\n",
               (unsigned long long)before, (unsigned long long)after, pc_shrink_case_nodes(&r.kase), r.checks,
               r.seconds);
        CHECK_MSG(after == 1, "the failure needs one element; %llu left", (unsigned long long)after);
        CHECK(pc_shrink_case_nodes(&r.kase) == 1 && has_op(r.kase.model, "Relu"));
        /* every tensor left has rank 0: the size-1 axes were dropped (Relu allows any rank) */
        bool scalar = true;
        for (uint32_t i = 0; i < r.kase.n_inputs; i++)
            scalar &= r.kase.inputs[i]->rank == 0;
        for (uint32_t i = 0; i < r.kase.model->graph->n_initializers; i++)
            scalar &= r.kase.model->graph->initializers[i]->initializer->rank == 0;
        CHECK_MSG(scalar, "leading size-1 axes should be dropped");
        check_valid(&r.kase, "one value");
        CHECK(!r.budget_exhausted);
    }
    pc_shrink_result_free(&r);
    pc_case_free(&c);
}

/* Conv(x[1,2,5,5], W[3,2,3,3]) -> y with the 1000 at x[0,1,2,3]: the channel count 2 is shared by x and W, so
 * only a joint edit shrinks it; Conv needs rank 4, so no axis may be dropped; W's spatial dims may shrink
 * with x's (no kernel_shape attribute). Minimal: x[1,1,1,1], W[1,1,1,1]. */
static void test_conv(void)
{
    pc_case c;
    memset(&c, 0, sizeof c);
    c.model = pt_model(17);
    const int64_t xd[4] = {1, 2, 5, 5}, wd[4] = {3, 2, 3, 3};
    pt_input(c.model, "x", PC_DTYPE_FLOAT, 4, xd);
    float w[54];
    for (int i = 0; i < 54; i++)
        w[i] = 1.0f;
    pt_const_f(c.model, "W", 4, wd, w);
    pt_node(c.model, "Conv", "", "x,W", "y", NULL);
    pt_output(c.model, "y");
    pc_error err;
    if (pc_graph_infer_shapes(c.model->graph, &err) != PC_OK) pt_die("infer", &err);
    c.n_inputs = 1;
    c.inputs = calloc(1, sizeof *c.inputs);
    c.inputs[0] = float_data(4, xd, 25 + 2 * 5 + 3);
    c.ep_list = strdup("cpu");
    c.family = "outside";
    uint64_t before = case_elements(&c);

    big_pred p = {"Conv", 0};
    pc_shrink_options o;
    options(&o);
    pc_shrink_result r;
    CHECK_OK(pc_shrink_model_fn(&c, big_check, &p, &o, &r, &err), &err);
    if (r.kase.model) {
        uint64_t after = case_elements(&r.kase);
        printf("test_shrink_dims: Conv x[1,2,5,5] W[3,2,3,3]: %llu -> %llu elements, %u checks, %.3f s\n",
               (unsigned long long)before, (unsigned long long)after, r.checks, r.seconds);
        char shapes[256] = "";
        for (uint32_t i = 0; i < r.kase.n_inputs; i++) {
            char b[64];
            pc_data_describe(r.kase.inputs[i], b, sizeof b);
            snprintf(shapes + strlen(shapes), sizeof shapes - strlen(shapes), " input %s", b);
        }
        for (uint32_t i = 0; i < r.kase.model->graph->n_initializers; i++) {
            const pc_tensor *t = r.kase.model->graph->initializers[i]->initializer;
            snprintf(shapes + strlen(shapes), sizeof shapes - strlen(shapes), " init rank %d:", (int)t->rank);
            for (int32_t a = 0; a < t->rank; a++)
                snprintf(shapes + strlen(shapes), sizeof shapes - strlen(shapes), " %lld",
                         (long long)t->dims[a]);
        }
        CHECK_MSG(after == 2, "x[1,1,1,1] and W[1,1,1,1] expected; %llu elements left:%s",
                  (unsigned long long)after, shapes);
        const pc_node *cv = r.kase.model->graph->first;
        CHECK(cv && strcmp(cv->op_type, "Conv") == 0 && cv->n_inputs >= 2);
        if (cv && cv->n_inputs >= 2) {
            const pc_type *xt = &cv->inputs[0]->type, *wt = &cv->inputs[1]->type;
            CHECK_MSG(xt->shape.rank == 4 && wt->shape.rank == 4, "Conv keeps rank 4 (x %d, W %d)",
                      (int)xt->shape.rank, (int)wt->shape.rank);
        }
        check_valid(&r.kase, "conv");
    }
    pc_shrink_result_free(&r);
    pc_case_free(&c);
}

int main(void)
{
    test_one_value();
    test_conv();
    return pc_test_finish("test_shrink_dims");
}
