/* Resize in the reference executor (reference/ops_tensor.c) against the ONNX spec's coordinate formulas
 * (Resize-13 coordinate_transformation_mode), with every expected value derived by hand in the comment above
 * it — never from the reference. Each case pins a bug the reference had: with 'sizes', length_resized and the
 * scale came from a double ratio k / n, which put integral input coordinates an ulp off, and floor/ceil/round
 * then read the neighbouring element; pytorch_half_pixel used -0.5 instead of the spec's 0 for an output
 * length of 1. Also the ONNX reading of length_resized with 'scales' (scale * length_original, as the backend
 * test data has it) and pc_ref_options: ORT's reading, and the node hook. */
#include <math.h>

#include "tests/pass_test_util.h"
#include "reference/reference.h"
#include "tests/test_util.h"

/* Marks "y" as m's output, runs m (no inputs) on the reference with opts (NULL: defaults) and frees it; the
 * output, or NULL after a failed check. */
static pc_data *run_y(pc_model *m, const pc_ref_options *opts)
{
    pc_error err;
    pt_output(m, "y");
    pc_data **outs = NULL;
    pc_data *y = NULL;
    pc_status st = pc_ref_run_with_options(m, opts, 0, NULL, &outs, &err);
    CHECK_OK(st, &err);
    if (st == PC_OK) {
        y = pc_data_ref(outs[0]);
        pc_ref_free_outputs(m, outs);
    }
    pc_model_free(m);
    return y;
}

/* x (float[1,1,1,n], x[i] = i) resized along the last axis to `size` elements (the 'sizes' input, or the
 * 'scales' input when scale > 0). The output of the one run is returned (free with pc_data_unref). */
static pc_data *resize_row(int64_t n, int64_t size, float scale, const char *coord, const char *mode,
                           const char *nearest, const pc_ref_options *opts)
{
    pc_model *m = pt_model(13);
    pc_error err;
    float *row = malloc((size_t)n * sizeof *row);
    if (!row) pt_die("row", NULL);
    for (int64_t i = 0; i < n; i++)
        row[i] = (float)i;
    pt_const_f(m, "x", 4, (int64_t[]){1, 1, 1, n}, row);
    free(row);
    pc_node *r;
    if (scale > 0) {
        pt_const_f(m, "scales", 1, (int64_t[]){4}, (float[]){1, 1, 1, scale});
        r = pt_node(m, "Resize", "", "x,,scales", "y", NULL);
    } else {
        pt_const_i64(m, "sizes", 4, (int64_t[]){1, 1, 1, size});
        r = pt_node(m, "Resize", "", "x,,,sizes", "y", NULL);
    }
    if (pc_node_set_attr_string(r, "coordinate_transformation_mode", coord, &err) != PC_OK ||
        pc_node_set_attr_string(r, "mode", mode, &err) != PC_OK ||
        (nearest && pc_node_set_attr_string(r, "nearest_mode", nearest, &err) != PC_OK))
        pt_die("attr", &err);
    return run_y(m, opts);
}

/* y must be float[1,1,1,len(want)] holding want[]. */
static void check_row(const char *what, const pc_data *y, const float *want, int64_t n)
{
    CHECK_MSG(y && y->rank == 4 && y->dims[3] == n, "%s: output shape", what);
    if (!y || y->rank != 4 || y->dims[3] != n) return;
    const float *got = y->data;
    for (int64_t i = 0; i < n; i++)
        CHECK_MSG(fabsf(got[i] - want[i]) <= 1e-6f, "%s: y[%lld] = %.9g, want %.9g", what, (long long)i,
                  (double)got[i], (double)want[i]);
}

/* 'sizes': the coordinate is exact where the spec's is an integer. */
static void test_sizes_exact_coordinates(void)
{
    /* align_corners, 25 -> 7, floor: x_original = x * (25 - 1) / (7 - 1) = 4x exactly, so y[x] = x[4x]
     * = 4x. (7/25 * 25 is 7.000000000000001 in double: the old reference read 4x - 1 for x >= 1.) */
    pc_data *y = resize_row(25, 7, 0, "align_corners", "nearest", "floor", NULL);
    check_row("align_corners 25->7 floor", y, (const float[]){0, 4, 8, 12, 16, 20, 24}, 7);
    pc_data_unref(y);

    /* asymmetric, 14 -> 18, floor: x_original = x / (18/14) = 14x/18 = 7x/9. Integral at x = 0 and 9 (0, 7);
     * elsewhere floor(7x/9): x = 0..17 -> 0,0,1,2,3,3,4,5,6,7,7,8,9,10,10,11,12,13. (x = 9 was 6 before: 9 /
     * (18/14) is 6.999999999999999 in double.) */
    y = resize_row(14, 18, 0, "asymmetric", "nearest", "floor", NULL);
    check_row("asymmetric 14->18 floor", y,
              (const float[]){0, 0, 1, 2, 3, 3, 4, 5, 6, 7, 7, 8, 9, 10, 10, 11, 12, 13}, 18);
    pc_data_unref(y);

    /* half_pixel, 7 -> 9, floor: x_original = (x + 0.5) * 7/9 - 0.5, for x = 0..8: -0.11, 0.67, 1.44, 2.22,
     * 3 (exactly), 3.78, 4.56, 5.33, 6.11 -> 0 (clamped), 0, 1, 2, 3, 3, 4, 5, 6. (x = 4 was 2 before:
     * 4.5 / (9/7) - 0.5 is 2.9999999999999996 in double.) */
    y = resize_row(7, 9, 0, "half_pixel", "nearest", "floor", NULL);
    check_row("half_pixel 7->9 floor", y, (const float[]){0, 0, 1, 2, 3, 3, 4, 5, 6}, 9);
    pc_data_unref(y);
}

/* pytorch_half_pixel: "x_original = length_resized > 1 ? (x_resized + 0.5) / scale - 0.5 : 0". */
static void test_pytorch_half_pixel_length_one(void)
{
    /* 49 -> 1 (sizes): length_resized = 1, so x_original = 0 and y = x[0] = 0. (1/49 * 49 is
     * 0.9999999999999999 in double: the old reference took the other branch, 0.5 * 49 - 0.5 = 24.) */
    pc_data *y = resize_row(49, 1, 0, "pytorch_half_pixel", "nearest", NULL, NULL);
    check_row("pytorch_half_pixel 49->1 nearest", y, (const float[]){0}, 1);
    pc_data_unref(y);

    /* 4 -> 1, cubic: x_original = 0, an integral coordinate, where the cubic kernel weighs only that sample
     * (coefficients 0, 1, 0, 0 at ratio 0): y = x[0] = 0. The old reference used x_original = -0.5 (the ONNX
     * reference implementation's value, onnx/onnx#4275), which mixes in x[1]: -0.09375 * 1 = -0.09375. */
    y = resize_row(4, 1, 0, "pytorch_half_pixel", "cubic", NULL, NULL);
    check_row("pytorch_half_pixel 4->1 cubic", y, (const float[]){0}, 1);
    pc_data_unref(y);
}

/* 'scales' that do not give an integral output length: ONNX takes length_resized = scale * length_original
 * (backend test resize_downsample_scales_linear_align_corners: [1, 3.142857]); ORT the floored length. */
static void test_scales_length(void)
{
    /* align_corners, 5 * 0.5: output floor(2.5) = 2. ONNX: x_original = x * 4 / (2.5 - 1): 0, 2.667 ->
     * nearest (round_prefer_floor) 0, 3. ORT's reading: x * 4 / (2 - 1): 0, 4. */
    pc_data *y = resize_row(5, 0, 0.5f, "align_corners", "nearest", NULL, NULL);
    check_row("align_corners 5*0.5 (ONNX)", y, (const float[]){0, 3}, 2);
    pc_data_unref(y);
    pc_ref_options ort = {.resize_ort_lengths = true};
    y = resize_row(5, 0, 0.5f, "align_corners", "nearest", NULL, &ort);
    check_row("align_corners 5*0.5 (ORT's reading)", y, (const float[]){0, 4}, 2);
    pc_data_unref(y);

    /* pytorch_half_pixel, 3 * 0.5: output 1. ONNX: length_resized = 1.5 > 1, x_original = 0.5 / 0.5 - 0.5 =
     * 0.5 -> linear (x[0] + x[1]) / 2 = 0.5. ORT's reading: length 1 -> x_original = 0 -> x[0] = 0. */
    y = resize_row(3, 0, 0.5f, "pytorch_half_pixel", "linear", NULL, NULL);
    check_row("pytorch_half_pixel 3*0.5 (ONNX)", y, (const float[]){0.5f}, 1);
    pc_data_unref(y);
    y = resize_row(3, 0, 0.5f, "pytorch_half_pixel", "linear", NULL, &ort);
    check_row("pytorch_half_pixel 3*0.5 (ORT's reading)", y, (const float[]){0}, 1);
    pc_data_unref(y);

    /* half_pixel reads no length: both readings give x_original = (x + 0.5) / 0.5 - 0.5 = 0.5 -> 0.5. */
    y = resize_row(3, 0, 0.5f, "half_pixel", "linear", NULL, &ort);
    check_row("half_pixel 3*0.5 (ORT's reading)", y, (const float[]){0.5f}, 1);
    pc_data_unref(y);
}

/* pc_ref_options.resize_float32_coordinates: the formulas in float32, as ONNX Runtime evaluates them. */
static void test_float32_coordinates(void)
{
    /* half_pixel, 7 -> 1 (sizes), floor. Exact: x_original = 0.5 * 7 / 1 - 0.5 = 3 -> x[3] = 3. float32:
     * scale = 1.0f / 7.0f = 0.142857149 (above 1/7), 0.5f / 0.142857149 = 3.4999998, - 0.5f = 2.9999998 ->
     * x[2] = 2. */
    pc_ref_options f32 = {.resize_float32_coordinates = true};
    pc_data *y = resize_row(7, 1, 0, "half_pixel", "nearest", "floor", NULL);
    check_row("half_pixel 7->1 floor (exact)", y, (const float[]){3}, 1);
    pc_data_unref(y);
    y = resize_row(7, 1, 0, "half_pixel", "nearest", "floor", &f32);
    check_row("half_pixel 7->1 floor (float32)", y, (const float[]){2}, 1);
    pc_data_unref(y);

    /* asymmetric, 14 -> 2, floor. Exact: x_original = x * 14 / 2 = 0, 7. float32: scale 2.0f / 14.0f =
     * 0.142857149, 1.0f / 0.142857149 = 6.9999995 -> 0, 6. */
    y = resize_row(14, 2, 0, "asymmetric", "nearest", "floor", &f32);
    check_row("asymmetric 14->2 floor (float32)", y, (const float[]){0, 6}, 2);
    pc_data_unref(y);
}

typedef struct hook_log {
    int calls;
    char ops[4][16];
    double first_out[4];
} hook_log;

static void log_node(void *ctx, const pc_node *n, pc_data *const *in, pc_data *const *out)
{
    hook_log *h = ctx;
    if (h->calls < 4) {
        snprintf(h->ops[h->calls], sizeof h->ops[0], "%s", n->op_type);
        h->first_out[h->calls] = in[0] && out[0] ? ((const float *)out[0]->data)[0] : NAN;
    }
    h->calls++;
}

/* on_node sees every node after it ran, in order, with its outputs. */
static void test_node_hook(void)
{
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 1, (int64_t[]){2});
    pt_node(m, "Neg", "", "x", "n", NULL);
    pt_node(m, "Relu", "", "n", "r", NULL);
    pt_output(m, "r");
    pc_error err;
    pc_data *x = pc_data_new_tensor(PC_DTYPE_FLOAT, 1, (int64_t[]){2}, &err);
    if (!x) pt_die("x", &err);
    ((float *)x->data)[0] = -3; /* Neg: 3; Relu: 3 */
    ((float *)x->data)[1] = 2;
    hook_log h = {0};
    pc_ref_options o = {.on_node = log_node, .on_node_ctx = &h};
    pc_data **outs = NULL;
    CHECK_OK(pc_ref_run_with_options(m, &o, 1, &x, &outs, &err), &err);
    CHECK(h.calls == 2 && !strcmp(h.ops[0], "Neg") && !strcmp(h.ops[1], "Relu"));
    CHECK(h.first_out[0] == 3 && h.first_out[1] == 3);
    pc_ref_free_outputs(m, outs);
    pc_data_unref(x);
    pc_model_free(m);
}

/* Resize over permuted axes gives bit-identical values (the transpose optimizer pushes Transposes through
 * Resize; a 30-minute fuzz_pipeline run found a 1-ulp difference once,
 * corpus/pipeline/finding-resize-linear-*): x float[2,3,4,5] of irregular values, resized linear and cubic
 * with scales (1.5, 2, 0.75, 1.6), against the same values and scales with the axes in every order of a few
 * perms; each output element must match its permuted position exactly. */
static pc_data *resize_nd(const int64_t *dims, const float *vals, const float *scales, const char *mode)
{
    pc_model *m = pt_model(13);
    pc_error err;
    pt_const_f(m, "x", 4, dims, vals);
    pt_const_f(m, "scales", 1, (int64_t[]){4}, scales);
    pc_node *r = pt_node(m, "Resize", "", "x,,scales", "y", NULL);
    if (pc_node_set_attr_string(r, "mode", mode, &err) != PC_OK) pt_die("attr", &err);
    return run_y(m, NULL);
}

/* The offset in a tensor of dims src_dims of element j (flat) of its permutation by perm (dims dims). */
static int64_t source_offset(int64_t j, const int64_t *dims, const int64_t *src_dims, const int *perm)
{
    int64_t src[4], off = 0;
    for (int a = 3; a >= 0; a--) {
        src[perm[a]] = j % dims[a];
        j /= dims[a];
    }
    for (int a = 0; a < 4; a++)
        off = off * src_dims[a] + src[a];
    return off;
}

static void test_axis_order_invariant(void)
{
    static const int64_t dims[4] = {2, 3, 4, 5};
    static const float scales[4] = {1.5f, 2.0f, 0.75f, 1.6f};
    static const int perms[][4] = {{0, 2, 3, 1}, {3, 1, 0, 2}, {1, 3, 2, 0}, {2, 0, 1, 3}};
    float x[120];
    uint64_t seed = 12345;
    for (int i = 0; i < 120; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((double)(seed >> 11) / 9007199254740992.0 * 2.0 - 1.0) / 3.0f;
    }
    static const char *const modes[] = {"linear", "cubic"};
    for (int mi = 0; mi < 2; mi++) {
        pc_data *y = resize_nd(dims, x, scales, modes[mi]);
        for (size_t pi = 0; y && pi < sizeof perms / sizeof perms[0]; pi++) {
            const int *p = perms[pi];
            int64_t pd[4];
            float ps[4], px[120];
            for (int a = 0; a < 4; a++) {
                pd[a] = dims[p[a]];
                ps[a] = scales[p[a]];
            }
            /* px[j] for j over the permuted shape = x at the source index */
            int64_t xd[4] = {dims[0], dims[1], dims[2], dims[3]};
            for (int64_t j = 0; j < 120; j++)
                px[j] = x[source_offset(j, pd, xd, p)];
            pc_data *z = resize_nd(pd, px, ps, modes[mi]);
            if (!z) continue;
            const float *yv = y->data, *zv = z->data;
            size_t mismatches = 0;
            int64_t o[4] = {y->dims[0], y->dims[1], y->dims[2], y->dims[3]}, po[4];
            for (int a = 0; a < 4; a++)
                po[a] = o[p[a]];
            for (int64_t j = 0; j < (int64_t)z->n_elements; j++)
                if (memcmp(&zv[j], &yv[source_offset(j, po, o, p)], sizeof *zv) != 0) mismatches++;
            CHECK_MSG(mismatches == 0, "%s, perm %zu: %zu elements differ from the unpermuted run", modes[mi],
                      pi, mismatches);
            pc_data_unref(z);
        }
        pc_data_unref(y);
    }
}

int main(void)
{
    test_axis_order_invariant();
    test_sizes_exact_coordinates();
    test_pytorch_half_pixel_length_one();
    test_scales_length();
    test_float32_coordinates();
    test_node_hook();
    return pc_test_finish("test_reference_resize");
}
