/* fuse_relu_clip is exact, -0 included: every Relu -> Clip and Clip -> Relu pair over a grid of bounds
 * (absent, negative, -0, +0, positive; attribute form at opset 10, input form at 17; float and double) is run
 * through the pass, and the graph before and after is executed by the reference executor on inputs holding
 * -0, +0, +-inf, NaN and values on both sides of every bound; outputs must be bit-identical. The reference's
 * Relu maps -0 to +0 while its Clip returns -0 unless a bound is crossed, so a fused Clip with lower bound 0
 * is not exact (seed-1 suite finding numerics@fuse_relu_clip/values); the pass must refuse those and still
 * fuse the exact ones. */
#include <float.h>

#include "core/passes/pass.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

#define N_VALUES 17

static const double values[N_VALUES] = {-INFINITY, -7.0, -1.0, -0.75, -0.5, -0.0, 0.0,      1e-40, 0.125,
                                        0.25,      0.5,  1.0,  1.5,   6.0,  7.0,  INFINITY, NAN};

enum { BOUND_NONE = 0, N_BOUNDS = 6 };
static const double bounds[N_BOUNDS] = {0 /* none */, -1.0, -0.5, -0.0, 0.0, 0.25};
static const char *const bound_names[N_BOUNDS] = {"none", "-1", "-0.5", "-0", "+0", "0.25"};

static pc_data *make_input(pc_dtype dt)
{
    pc_error err;
    int64_t dim = N_VALUES;
    pc_data *d = pc_data_new_tensor(dt, 1, &dim, &err);
    if (!d) return NULL;
    for (int i = 0; i < N_VALUES; i++) {
        if (dt == PC_DTYPE_FLOAT)
            ((float *)d->data)[i] = (float)values[i];
        else
            ((double *)d->data)[i] = values[i];
    }
    return d;
}

static pc_value *scalar_bound(pc_model *m, const char *name, pc_dtype dt, double v)
{
    if (dt == PC_DTYPE_FLOAT) {
        float f = (float)v;
        return pt_const(m, name, dt, 0, NULL, &f);
    }
    return pt_const(m, name, dt, 0, NULL, &v);
}

/* x -> Relu -> Clip -> y or x -> Clip -> Relu -> y; lo/hi index into bounds (0: absent). */
static pc_model *pair_model(int64_t opset, pc_dtype dt, bool relu_first, int lo, int hi)
{
    pc_error err;
    pc_model *m = pt_model(opset);
    pt_input(m, "x", dt, 1, (int64_t[]){N_VALUES});
    char ins[64];
    const char *clip_in = relu_first ? "r" : "x";
    if (opset >= 11) {
        if (lo != BOUND_NONE) scalar_bound(m, "lo", dt, bounds[lo]);
        if (hi != BOUND_NONE) scalar_bound(m, "hi", dt, -bounds[hi]); /* hi from the mirrored grid */
        snprintf(ins, sizeof ins, "%s%s%s", clip_in,
                 lo != BOUND_NONE   ? ",lo"
                 : hi != BOUND_NONE ? ","
                                    : "",
                 hi != BOUND_NONE ? ",hi" : "");
    } else {
        snprintf(ins, sizeof ins, "%s", clip_in);
    }
    if (relu_first) pt_node(m, "Relu", "", "x", "r", NULL);
    pc_node *clip = pt_node(m, "Clip", "", ins, relu_first ? "y" : "c", NULL);
    if (opset < 11) {
        if (lo != BOUND_NONE) CHECK_OK(pc_node_set_attr_float(clip, "min", (float)bounds[lo], &err), &err);
        if (hi != BOUND_NONE) CHECK_OK(pc_node_set_attr_float(clip, "max", (float)-bounds[hi], &err), &err);
    }
    if (!relu_first) pt_node(m, "Relu", "", "c", "y", NULL);
    pt_output(m, "y");
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    return m;
}

/* Bitwise: NaN positions (any payload), then the bits of every other element. pc_data_compare with zero
 * tolerances is not enough here: it counts -0 and +0 as equal. */
static int same_bits(const pc_data *a, const pc_data *b, char *why, size_t why_size)
{
    if (a->dtype != b->dtype || a->n_elements != b->n_elements) {
        snprintf(why, why_size, "dtype or element count differs");
        return 0;
    }
    size_t es = a->dtype == PC_DTYPE_DOUBLE ? 8 : 4;
    for (uint64_t k = 0; k < a->n_elements; k++) {
        double x = a->dtype == PC_DTYPE_DOUBLE ? ((const double *)a->data)[k] : ((const float *)a->data)[k];
        double y = b->dtype == PC_DTYPE_DOUBLE ? ((const double *)b->data)[k] : ((const float *)b->data)[k];
        if (isnan(x) && isnan(y)) continue;
        if (isnan(x) != isnan(y) ||
            memcmp((const char *)a->data + k * es, (const char *)b->data + k * es, es) != 0) {
            snprintf(why, why_size, "input %g: %g before, %g after%s", values[k], x, y,
                     x == y ? " (the sign of zero differs)" : "");
            return 0;
        }
    }
    return 1;
}

/* 1: outputs bit-identical on the fixed inputs; 0: different (why says where); -1: a run failed. */
static int run_same(const pc_model *a, const pc_model *b, pc_dtype dt, char *why, size_t why_size)
{
    pc_error err;
    pc_data *in = make_input(dt);
    if (!in) return -1;
    pc_data **oa = NULL, **ob = NULL;
    int result = 1;
    if (pc_ref_run(a, 1, &in, &oa, &err) != PC_OK || pc_ref_run(b, 1, &in, &ob, &err) != PC_OK) {
        snprintf(why, why_size, "reference run failed: %s", err.message);
        result = -1;
    } else {
        result = same_bits(oa[0], ob[0], why, why_size);
    }
    if (oa) pc_ref_free_outputs(a, oa);
    if (ob) pc_ref_free_outputs(b, ob);
    pc_data_unref(in);
    return result;
}

/* The fused Clip's bounds are ordered: ONNX Runtime refuses a Clip-6 whose min is above its max (and Clip-13
 * defines that case as "every value is max"), so the pass must not make one where the pair had none (found by
 * ort-oracle on the optimized graph: Relu -> Clip(-5, -1) fused to Clip(0, -1)). */
static bool fused_bounds_ordered(const pc_model *m)
{
    for (const pc_node *n = m->graph->first; n; n = n->next) {
        if (strcmp(n->op_type, "Clip") != 0) continue;
        double lo = -INFINITY, hi = INFINITY;
        if (pc_model_opset(m, "") < 11) {
            lo = pc_node_attr_float(n, "min", -FLT_MAX);
            hi = pc_node_attr_float(n, "max", FLT_MAX);
        } else {
            for (uint32_t i = 1; i < n->n_inputs && i < 3; i++) {
                const pc_tensor *t = n->inputs[i] ? pc_value_const(n->inputs[i]) : NULL;
                if (!t) continue;
                double v =
                    t->dtype == PC_DTYPE_FLOAT ? ((const float *)t->data)[0] : ((const double *)t->data)[0];
                if (i == 1)
                    lo = v;
                else
                    hi = v;
            }
        }
        if (lo > hi) return false;
    }
    return true;
}

static void test_exact_grid(void)
{
    static const int64_t opsets[] = {10, 17};
    static const pc_dtype dtypes[] = {PC_DTYPE_FLOAT, PC_DTYPE_DOUBLE};
    int fired = 0, refused = 0;
    for (size_t o = 0; o < 2; o++)
        for (size_t t = 0; t < 2; t++) {
            if (opsets[o] < 11 && dtypes[t] != PC_DTYPE_FLOAT) continue; /* attribute bounds are floats */
            for (int relu_first = 0; relu_first < 2; relu_first++)
                for (int lo = 0; lo < N_BOUNDS; lo++)
                    for (int hi = 0; hi < N_BOUNDS; hi++) {
                        pc_model *m = pair_model(opsets[o], dtypes[t], relu_first, lo, hi);
                        pc_model *before = pt_clone(m);
                        pc_pass_options opts = pt_pass_options("fuse_relu_clip");
                        bool changed = pt_run_pass(pc_pass_fuse_relu_clip, m, &opts);
                        char why[PT_WHY_SIZE] = "";
                        int same = run_same(before, m, dtypes[t], why, sizeof why);
                        CHECK_MSG(same == 1, "opset %lld %s %s, min %s, max -(%s): %s%s",
                                  (long long)opsets[o], pc_dtype_name(dtypes[t]),
                                  relu_first ? "Relu -> Clip" : "Clip -> Relu", bound_names[lo],
                                  bound_names[hi], changed ? "fused, " : "", why);
                        if (changed) {
                            CHECK(pt_count_op(m, "Relu") == 0 && pt_count_op(m, "Clip") == 1);
                            /* bounds the pair had in order stay in order */
                            CHECK_MSG(fused_bounds_ordered(m) || !fused_bounds_ordered(before),
                                      "opset %lld %s %s, min %s, max -(%s): the fused Clip has min > max",
                                      (long long)opsets[o], pc_dtype_name(dtypes[t]),
                                      relu_first ? "Relu -> Clip" : "Clip -> Relu", bound_names[lo],
                                      bound_names[hi]);
                            fired++;
                        } else {
                            CHECK(m->graph->n_nodes == 2);
                            refused++;
                        }
                        pc_model_free(before);
                        pc_model_free(m);
                    }
        }
    /* the exact forms still fuse: a positive min (either order), Relu -> Clip with a negative max */
    CHECK_MSG(fired >= 40 && refused >= 40, "fired %d, refused %d", fired, refused);
}

/* The pattern the suite shrank: Relu(-0) -> Clip without bounds (opset 17) is +0; a fused Clip(min 0) gives
 * -0. */
static void test_shrunk_repro(void)
{
    pc_model *m = pair_model(17, PC_DTYPE_FLOAT, true, BOUND_NONE, BOUND_NONE);
    pc_model *before = pt_clone(m);
    pc_pass_options opts = pt_pass_options("fuse_relu_clip");
    bool changed = pt_run_pass(pc_pass_fuse_relu_clip, m, &opts);
    char why[PT_WHY_SIZE] = "";
    CHECK_MSG(run_same(before, m, PC_DTYPE_FLOAT, why, sizeof why) == 1, "%s", why);
    CHECK(!changed);
    pc_model_free(before);
    pc_model_free(m);
}

int main(void)
{
    test_shrunk_repro();
    test_exact_grid();
    return pc_test_finish("test_passes_fuse_relu_clip");
}
