/* pc_case_from_model (properties/runner/model_case.h): a case from an outside model, with its inputs read
 * from a backend-test folder or a file list, or drawn from a seed: the same seed gives the same bytes, the
 * values keep to the documented ranges, the file data is the file's, and every bad argument is an error
 * naming the option. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/passcheck.h"
#include "properties/runner/model_case.h"
#include "tests/test_util.h"

static const char *g_data;

static void path_of(char *out, size_t size, const char *rel)
{
    snprintf(out, size, "%s/%s", g_data, rel);
}

static void test_random_inputs(void)
{
    char model[1024];
    path_of(model, sizeof model, "node/test_abs/model.onnx");
    pc_model_case_options o;
    pc_model_case_options_default(&o);
    pc_error err;
    pc_case a, b, c;
    CHECK_OK(pc_case_from_model(model, &o, &a, &err), &err);
    CHECK_OK(pc_case_from_model(model, &o, &b, &err), &err);
    o.seed = 7;
    CHECK_OK(pc_case_from_model(model, &o, &c, &err), &err);
    CHECK(a.n_inputs == 1 && b.n_inputs == 1 && c.n_inputs == 1);
    CHECK(strcmp(a.ep_list, "cpu") == 0 && !a.ep_text && !a.layer_assignment);
    if (a.n_inputs == 1 && b.n_inputs == 1 && c.n_inputs == 1) {
        const pc_data *x = a.inputs[0];
        CHECK(x->kind == PC_TYPE_TENSOR && x->dtype == PC_DTYPE_FLOAT && x->n_elements == 60);
        CHECK(x->n_bytes == b.inputs[0]->n_bytes && memcmp(x->data, b.inputs[0]->data, x->n_bytes) == 0);
        CHECK(memcmp(x->data, c.inputs[0]->data, x->n_bytes) != 0);
        const float *v = x->data;
        bool in_range = true, all_same = true;
        for (uint64_t i = 0; i < x->n_elements; i++) {
            in_range &= v[i] >= -2.0f && v[i] < 2.0f;
            all_same &= v[i] == v[0];
        }
        CHECK_MSG(in_range && !all_same, "random float inputs in [-2, 2) and not constant");
    }
    pc_case_free(&a);
    pc_case_free(&b);
    pc_case_free(&c);
}

static void test_file_inputs(void)
{
    char model[1024], dir[1024], file[1100];
    path_of(model, sizeof model, "node/test_abs/model.onnx");
    path_of(dir, sizeof dir, "node/test_abs/test_data_set_0");
    snprintf(file, sizeof file, "%s/input_0.pb", dir);
    pc_error err;
    pc_data *expected = NULL;
    CHECK_OK(pc_data_load_file(file, NULL, &expected, &err), &err);
    pc_model_case_options o;
    pc_model_case_options_default(&o);
    const char *sources[] = {dir, file};
    for (size_t k = 0; k < 2 && expected; k++) {
        o.inputs = sources[k];
        pc_case c;
        CHECK_OK(pc_case_from_model(model, &o, &c, &err), &err);
        CHECK(c.n_inputs == 1 && c.inputs && c.inputs[0]->n_bytes == expected->n_bytes &&
              memcmp(c.inputs[0]->data, expected->data, expected->n_bytes) == 0);
        pc_case_free(&c);
    }
    pc_data_unref(expected);

    /* more files than graph inputs, a missing file, a missing model, a missing EP file: errors naming the
     * source */
    char two[2300];
    snprintf(two, sizeof two, "%s,%s", file, file);
    pc_case c;
    o.inputs = two;
    CHECK_STATUS(pc_case_from_model(model, &o, &c, &err), PC_ERR_IO, &err);
    CHECK_MSG(strstr(err.message, "--inputs") != NULL, "names --inputs: %s", err.message);
    CHECK(c.model == NULL && c.inputs == NULL);
    o.inputs = "/nonexistent-passcheck-input.pb";
    CHECK(pc_case_from_model(model, &o, &c, &err) != PC_OK);
    CHECK_MSG(strstr(err.message, "--inputs") && strstr(err.message, "nonexistent-passcheck-input.pb"),
              "names the option and the file: %s", err.message);
    o.inputs = NULL;
    o.ep_file = "/nonexistent-passcheck.ep";
    CHECK_STATUS(pc_case_from_model(model, &o, &c, &err), PC_ERR_IO, &err);
    CHECK_MSG(strstr(err.message, "--ep-file: /nonexistent-passcheck.ep: cannot open"), "%s", err.message);
    o.ep_file = NULL;
    CHECK(pc_case_from_model("/nonexistent-passcheck.onnx", &o, &c, &err) != PC_OK);
    CHECK(strstr(err.message, "/nonexistent-passcheck.onnx") != NULL);
}

int main(void)
{
    g_data = getenv("PC_TESTDATA_DIR");
    if (!g_data || !*g_data) g_data = "/usr/share/libonnx-testdata/data";
    test_random_inputs();
    test_file_inputs();
    return pc_test_finish("test_runner_model_case");
}
