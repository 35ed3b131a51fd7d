/* Repro folders (properties/runner/repro.c), their case.txt reader (repro.h), DOT pictures
 * (properties/runner/dot.c) and the tensor saver (core/onnx/save_data.c). Oracles: the ONNX loader and data
 * loader read every file back, graphviz `dot` accepts every picture when installed, and case.txt parses back
 * to what was written. */
#include <dirent.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/pass_test_util.h"
#include "properties/runner/repro.h"
#include "properties/shrink/shrink.h"
#include "tests/test_util.h"

static char g_tmp[256];

static bool file_exists(const char *dir, const char *name)
{
    char p[1024]; /* a folder (the tests' are char[512]), a slash and a file name */
    snprintf(p, sizeof p, "%s/%s", dir, name);
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

static char *slurp(const char *dir, const char *name)
{
    char p[1024]; /* a folder (the tests' are char[512]), a slash and a file name */
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap + 1);
    for (size_t k; s && (k = fread(s + n, 1, cap - n, f)) > 0;) {
        n += k;
        if (n == cap) {
            cap *= 2;
            char *t = realloc(s, cap + 1);
            if (!t) free(s);
            s = t;
        }
    }
    fclose(f);
    if (s) s[n] = '\0';
    return s;
}

static bool have_graphviz(void)
{
    return system("command -v dot >/dev/null 2>&1") == 0;
}

/* `dot -Tsvg` must accept the file (graphviz as the independent parser of our DOT). */
static bool graphviz_accepts(const char *path)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "dot -Tsvg '%s' -o /dev/null 2>/dev/null", path);
    return system(cmd) == 0;
}

static void rm_rf(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
}

static int count_entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* ---- pc_data_save_file: every element type the generators use, read back by the data loader -------------
 */
static void test_save_data(void)
{
    static const pc_dtype types[] = {PC_DTYPE_FLOAT,  PC_DTYPE_INT8, PC_DTYPE_UINT8,  PC_DTYPE_INT32,
                                     PC_DTYPE_INT64,  PC_DTYPE_BOOL, PC_DTYPE_DOUBLE, PC_DTYPE_FLOAT16,
                                     PC_DTYPE_UINT16, PC_DTYPE_INT16};
    pc_error err;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const int64_t dims[3] = {2, 3, 2};
        pc_data *d = pc_data_new_tensor(types[t], 3, dims, &err);
        CHECK(d != NULL);
        if (!d) continue;
        uint8_t *bytes = d->data;
        for (size_t i = 0; i < d->n_bytes; i++)
            bytes[i] = (uint8_t)(i * 37 + t * 11 + 1);
        if (types[t] == PC_DTYPE_BOOL)
            for (size_t i = 0; i < d->n_bytes; i++)
                bytes[i] &= 1;
        if (types[t] == PC_DTYPE_FLOAT) ((float *)d->data)[3] = NAN;
        char path[512];
        snprintf(path, sizeof path, "%s/t_%s.pb", g_tmp, pc_dtype_name(types[t]));
        CHECK_OK(pc_data_save_file(d, "x", path, &err), &err);
        pc_data *back = NULL;
        CHECK_OK(pc_data_load_file(path, NULL, &back, &err), &err);
        CHECK_MSG(back && back->dtype == d->dtype && back->rank == 3 && back->n_bytes == d->n_bytes &&
                      memcmp(back->data, d->data, d->n_bytes) == 0,
                  "dtype %s round trip", pc_dtype_name(types[t]));
        pc_data_unref(back);
        pc_data_unref(d);
    }
    /* scalars and empty tensors */
    pc_data *s = pc_data_new_tensor(PC_DTYPE_INT64, 0, NULL, &err);
    *(int64_t *)s->data = -42;
    char path[512];
    snprintf(path, sizeof path, "%s/scalar.pb", g_tmp);
    CHECK_OK(pc_data_save_file(s, "s", path, &err), &err);
    pc_data *back = NULL;
    CHECK_OK(pc_data_load_file(path, NULL, &back, &err), &err);
    CHECK(back && back->rank == 0 && back->n_elements == 1 && *(int64_t *)back->data == -42);
    pc_data_unref(back);
    const int64_t zero[2] = {3, 0};
    pc_data *e = pc_data_new_tensor(PC_DTYPE_FLOAT, 2, zero, &err);
    snprintf(path, sizeof path, "%s/empty.pb", g_tmp);
    CHECK_OK(pc_data_save_file(e, "e", path, &err), &err);
    back = NULL;
    CHECK_OK(pc_data_load_file(path, NULL, &back, &err), &err);
    CHECK(back && back->rank == 2 && back->dims[0] == 3 && back->dims[1] == 0 && back->n_elements == 0);
    pc_data_unref(back);
    /* a sequence is refused, naming the file; a folder that does not exist is an I/O error naming it */
    pc_data *seq = pc_data_new_sequence(PC_TYPE_TENSOR, PC_DTYPE_INT64, 1, &s, &err);
    CHECK_STATUS(pc_data_save_file(seq, "q", path, &err), PC_ERR_UNSUPPORTED, &err);
    CHECK(strstr(err.message, path) != NULL);
    CHECK_STATUS(pc_data_save_file(s, "s", "/nonexistent-dir/x.pb", &err), PC_ERR_IO, &err);
    CHECK(strstr(err.message, "/nonexistent-dir/x.pb") != NULL);
    CHECK(count_entries(g_tmp, "empty.pb.tmp") == 0);
    pc_data_unref(seq);
    pc_data_unref(s);
    pc_data_unref(e);
}

/* ---- a hand-made failing case -------------------------------------------------------------------------- */
static pc_model *make_model(const char *weird_name)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 4});
    pt_input(m, "k", PC_DTYPE_INT64, 1, (int64_t[]){2});
    const float w[3] = {0.5f, -1.0f, 2.0f};
    pt_const_f(m, "w", 4, (int64_t[]){1, 3, 1, 1}, w);
    pc_node *relu = pt_node(m, "Relu", "", "x", "r", "encoder.block0");
    relu->name = weird_name;
    pc_node *add = pt_node(m, "Add", "", "r,w", "y", "encoder.block0.mlp");
    add->ep = "cpu";
    pt_node(m, "Neg", "", "k", "nk", NULL);
    pt_output(m, "y");
    pt_output(m, "nk");
    pc_error err;
    if (pc_graph_infer_shapes(m->graph, &err) != PC_OK) pt_die("infer", &err);
    return m;
}

static char *dup_s(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (!d) abort();
    strcpy(d, s);
    return d;
}

static void make_result(pc_shrink_result *r, const char *weird)
{
    memset(r, 0, sizeof *r);
    pc_error err;
    r->kase.model = make_model(weird);
    r->kase.n_inputs = 2;
    r->kase.inputs = calloc(2, sizeof *r->kase.inputs);
    r->kase.inputs[0] = pc_data_new_tensor(PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 4}, &err);
    for (uint64_t i = 0; i < r->kase.inputs[0]->n_elements; i++)
        ((float *)r->kase.inputs[0]->data)[i] = (float)i * 0.25f - 3.0f;
    r->kase.inputs[1] = pc_data_new_tensor(PC_DTYPE_INT64, 1, (int64_t[]){2}, &err);
    ((int64_t *)r->kase.inputs[1]->data)[0] = 7;
    ((int64_t *)r->kase.inputs[1]->data)[1] = -9;
    r->kase.ep_text = dup_s("# test EP\nep myep\n");
    r->kase.ep_list = dup_s("myep,cpu");
    r->kase.layer_assignment = dup_s("encoder.block0=myep;  it's \"quoted\"\\ and\nnewline\ttab");
    r->kase.family = "float";
    static uint32_t choices[] = {3, 1, 4, 1, 5, 9, 2, 6};
    r->choices = malloc(sizeof choices);
    memcpy(r->choices, choices, sizeof choices);
    r->n_choices = sizeof choices / sizeof choices[0];
    r->graph_edited = true;
    r->check.failed = true;
    snprintf(r->check.failure.property, sizeof r->check.failure.property, "numerics");
    snprintf(r->check.failure.pass, sizeof r->check.failure.pass, "fuse_conv_bn");
    snprintf(r->check.failure.kind, sizeof r->check.failure.kind, "nan-position");
    r->check.failure.outcome = PC_PROP_FAIL;
    snprintf(r->check.failure.message, sizeof r->check.failure.message,
             "output 'y' element 3: reference 1.5, after 'nan'\nsecond line with = and \\ in it");
    /* before: the model; after: the model without its Relu annotation */
    CHECK_OK(pc_model_save_bytes(r->kase.model, &r->check.before_bytes, &r->check.before_size, &err), &err);
    pc_model *after = pt_clone(r->kase.model);
    pc_node_remove_metadata(after->graph->first, PC_LAYER_ANN_KEY);
    CHECK_OK(pc_model_save_bytes(after, &r->check.after_bytes, &r->check.after_size, &err), &err);
    pc_model_free(after);
    r->checks = 120;
    r->accepted = 14;
    r->seconds = 0.5;
    r->nodes_before = 40;
    r->nodes_after = 3;
}

static void free_result(pc_shrink_result *r)
{
    pc_case_free(&r->kase);
    free(r->choices);
    pc_check_result_free(&r->check);
    memset(r, 0, sizeof *r);
}

static void check_model_file(const char *dir, const char *name, const uint8_t *bytes, size_t size)
{
    char p[1024]; /* a folder (the tests' are char[512]), a slash and a file name */
    snprintf(p, sizeof p, "%s/%s", dir, name);
    pc_model *m = NULL;
    pc_error err;
    pc_load_options o;
    pc_load_options_default(&o);
    CHECK_OK(pc_model_load_file(p, &o, &m, &err), &err);
    pc_model *want = NULL;
    CHECK_OK(pc_model_load_bytes(bytes, size, &o, &want, &err), &err);
    char diff[256] = "";
    CHECK_MSG(m && want && pc_model_equal(want, m, diff, sizeof diff), "%s: %s", name, diff);
    pc_model_free(m);
    pc_model_free(want);
}

static void test_repro_folder(void)
{
    pc_error err;
    pc_shrink_result r;
    make_result(&r, "relu \"odd\" \\name\nwith newline");
    pc_gen_config gen;
    pc_gen_config_default(&gen);
    gen.family = "float";
    gen.max_nodes = 30;
    gen.annotate = true;
    pc_check_config cc;
    pc_check_config_default(&cc);
    CHECK_OK(pc_check_config_select(&cc, "numerics,validity", &err), &err);
    cc.level = 2;
    cc.stop_after_pass = "fuse_conv_bn";
    pc_failure orig = r.check.failure;
    snprintf(orig.kind, sizeof orig.kind, "nan-position");
    pc_repro_info info = {.seed = 1234567890123ull,
                          .case_index = 77,
                          .gen = &gen,
                          .check = &cc,
                          .inject = "transpose-skip-cancel",
                          .original = &orig,
                          .original_nodes = 40};
    char dir[512];
    snprintf(dir, sizeof dir, "%s/failures/numerics@fuse_conv_bn", g_tmp);
    CHECK_OK(pc_repro_write(dir, &r, &info, &err), &err);

    static const char *const files[] = {"repro.onnx", "input_0.pb", "input_1.pb", "before.onnx",
                                        "after.onnx", "repro.dot",  "before.dot", "after.dot",
                                        "eps.txt",    "case.txt",   "README.md"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        CHECK_MSG(file_exists(dir, files[i]), "%s", files[i]);
    bool gv = have_graphviz();
    if (gv) {
        CHECK(file_exists(dir, "repro.svg") && file_exists(dir, "before.svg") &&
              file_exists(dir, "after.svg"));
        char p[600];
        snprintf(p, sizeof p, "%s/repro.dot", dir);
        CHECK(graphviz_accepts(p));
    } else {
        printf("graphviz not installed: SVG checks skipped\n");
    }

    /* every file reads back */
    uint8_t *bytes;
    size_t size;
    CHECK_OK(pc_model_save_bytes(r.kase.model, &bytes, &size, &err), &err);
    check_model_file(dir, "repro.onnx", bytes, size);
    free(bytes);
    check_model_file(dir, "before.onnx", r.check.before_bytes, r.check.before_size);
    check_model_file(dir, "after.onnx", r.check.after_bytes, r.check.after_size);
    for (int i = 0; i < 2; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s/input_%d.pb", dir, i);
        pc_data *d = NULL;
        CHECK_OK(pc_data_load_file(p, NULL, &d, &err), &err);
        pc_compare_result cr;
        CHECK(d && pc_data_compare(r.kase.inputs[i], d, 0, 0, &cr) == PC_COMPARE_EQUAL);
        pc_data_unref(d);
    }
    char *eps = slurp(dir, "eps.txt");
    CHECK(eps && strcmp(eps, r.kase.ep_text) == 0);
    free(eps);
    char *readme = slurp(dir, "README.md");
    CHECK(readme && strstr(readme, "numerics@fuse_conv_bn/nan-position"));
    CHECK(readme && strstr(readme, "passcheck suite --replay"));
    CHECK(readme && strstr(readme, "passcheck shrink"));
    CHECK(readme && strstr(readme, "--property numerics --pass fuse_conv_bn"));
    CHECK(readme && strstr(readme, "--inject transpose-skip-cancel"));
    CHECK(readme && strstr(readme, "3 1 4 1 5 9 2 6"));
    CHECK(readme && strstr(readme, "| 40 |") && strstr(readme, "| 3 |"));
    CHECK(readme && strstr(readme, "case index 77"));
    if (!gv) CHECK(readme && strstr(readme, "no SVG"));
    free(readme);

    /* case.txt parses back to what was written */
    pc_repro_case rc;
    CHECK_OK(pc_repro_case_load(dir, &rc, &err), &err);
    CHECK(strcmp(rc.failure.property, "numerics") == 0 && strcmp(rc.failure.pass, "fuse_conv_bn") == 0 &&
          strcmp(rc.failure.kind, "nan-position") == 0 && rc.failure.outcome == PC_PROP_FAIL);
    CHECK(strcmp(rc.failure.message, r.check.failure.message) == 0);
    CHECK(pc_failure_same(&rc.failure, &r.check.failure));
    CHECK(rc.seed == 1234567890123ull && rc.case_index == 77);
    CHECK(rc.has_gen && rc.gen.family && strcmp(rc.gen.family, "float") == 0 && rc.gen.max_nodes == 30 &&
          rc.gen.max_elements == gen.max_elements && rc.gen.max_rank == gen.max_rank && rc.gen.annotate &&
          !rc.gen.allow_special && !rc.gen.random_eps);
    CHECK(rc.n_choices == r.n_choices && rc.choices && memcmp(rc.choices, r.choices, r.n_choices * 4) == 0);
    CHECK(rc.graph_edited);
    CHECK(rc.ep_list && strcmp(rc.ep_list, "myep,cpu") == 0);
    CHECK(rc.ep_text && strcmp(rc.ep_text, r.kase.ep_text) == 0);
    CHECK(rc.layer_assignment && strcmp(rc.layer_assignment, r.kase.layer_assignment) == 0);
    CHECK(rc.properties && strcmp(rc.properties, "numerics,validity") == 0);
    CHECK(rc.level == 2 && !rc.oracle_ort && rc.exact_oracle_max_nodes == 12);
    CHECK(rc.stop_after_pass && strcmp(rc.stop_after_pass, "fuse_conv_bn") == 0);
    CHECK(rc.inject && strcmp(rc.inject, "transpose-skip-cancel") == 0);
    CHECK(rc.n_inputs == 2 && rc.model_path && strstr(rc.model_path, "repro.onnx"));
    pc_check_config cc2;
    CHECK_OK(pc_repro_case_check_config(&rc, &cc2, &err), &err);
    CHECK(memcmp(cc2.enabled, cc.enabled, sizeof cc.enabled) == 0 && cc2.level == 2 &&
          strcmp(cc2.stop_after_pass, "fuse_conv_bn") == 0);
    CHECK(!rc.alloc_every && !cc2.alloc_every);
    {
        /* a shrink judged at every allocation replays that way */
        char dir2[600];
        snprintf(dir2, sizeof dir2, "%s/alloc-every", g_tmp);
        r.alloc_every = true;
        CHECK_OK(pc_repro_write(dir2, &r, &info, &err), &err);
        r.alloc_every = false;
        pc_repro_case rc2;
        CHECK_OK(pc_repro_case_load(dir2, &rc2, &err), &err);
        pc_check_config cc3;
        CHECK_OK(pc_repro_case_check_config(&rc2, &cc3, &err), &err);
        CHECK(rc2.alloc_every && cc3.alloc_every);
        char *readme2 = slurp(dir2, "README.md");
        CHECK(readme2 && strstr(readme2, "alloc-failure tries every allocation"));
        free(readme2);
        pc_repro_case_free(&rc2);
    }
    pc_case kase;
    CHECK_OK(pc_repro_case_load_case(&rc, &kase, &err), &err);
    char diff[256] = "";
    pc_model *saved =
        pt_clone(r.kase.model); /* what a save keeps (inferred types without value_info do not) */
    CHECK_MSG(kase.model && pc_model_equal(saved, kase.model, diff, sizeof diff), "%s", diff);
    pc_model_free(saved);
    CHECK(kase.n_inputs == 2 && strcmp(kase.ep_list, "myep,cpu") == 0 && strcmp(kase.family, "float") == 0 &&
          strcmp(kase.layer_assignment, r.kase.layer_assignment) == 0);
    for (uint32_t i = 0; i < kase.n_inputs && i < 2; i++) {
        pc_compare_result cr;
        CHECK(pc_data_compare(r.kase.inputs[i], kase.inputs[i], 0, 0, &cr) == PC_COMPARE_EQUAL);
    }
    pc_case_free(&kase);
    pc_repro_case_free(&rc);

    /* a second write replaces the first completely, and leaves no temporary or old folders behind */
    pc_shrink_result r2;
    make_result(&r2, "plain");
    pc_check_result_free(&r2.check); /* a final property: no before/after graphs */
    snprintf(r2.check.failure.property, sizeof r2.check.failure.property, "ort-oracle");
    snprintf(r2.check.failure.pass, sizeof r2.check.failure.pass, "end-to-end");
    r2.check.failure.kind[0] = '\0';
    free(r2.kase.ep_text);
    r2.kase.ep_text = NULL;
    pc_repro_info info2 = {0};
    CHECK_OK(pc_repro_write(dir, &r2, &info2, &err), &err);
    CHECK(!file_exists(dir, "before.onnx") && !file_exists(dir, "after.onnx"));
    CHECK_OK(pc_repro_case_load(dir, &rc, &err), &err);
    CHECK(strcmp(rc.failure.property, "ort-oracle") == 0 && rc.failure.kind[0] == '\0' && !rc.has_gen &&
          rc.ep_text == NULL && rc.properties == NULL);
    pc_repro_case_free(&rc);
    char parent[512];
    snprintf(parent, sizeof parent, "%s/failures", g_tmp);
    CHECK(count_entries(parent, "numerics@fuse_conv_bn.") == 0);
    CHECK(count_entries(parent, "numerics@fuse_conv_bn") == 1);

    /* a write that cannot happen leaves the previous repro untouched */
    pc_shrink_result empty = {0};
    CHECK_STATUS(pc_repro_write(dir, &empty, &info2, &err), PC_ERR_USAGE, &err);
    CHECK(file_exists(dir, "case.txt"));
    free_result(&r2);
    free_result(&r);
}

/* pc_repro_write_replay_files: only what replay reads, and it reads back as the full folder does; a run's
 * --ep override is what case.txt records (replay has no override) */
static void test_replay_files(void)
{
    pc_error err;
    pc_shrink_result r;
    make_result(&r, "plain");
    pc_check_config cc;
    pc_check_config_default(&cc);
    cc.ep_override = "nhwc,cpu";
    pc_gen_config gen;
    pc_gen_config_default(&gen);
    gen.family = "nhwc";
    pc_repro_info info = {.seed = 5, .case_index = 9, .gen = &gen, .check = &cc};
    char dir[512];
    snprintf(dir, sizeof dir, "%s/replay-only", g_tmp);
    CHECK_OK(pc_repro_write_replay_files(dir, &r, &info, &err), &err);
    static const char *const present[] = {"repro.onnx", "input_0.pb", "input_1.pb", "eps.txt", "case.txt"};
    static const char *const absent[] = {"README.md", "repro.dot", "before.onnx", "after.onnx"};
    for (size_t i = 0; i < sizeof present / sizeof present[0]; i++)
        CHECK_MSG(file_exists(dir, present[i]), "%s", present[i]);
    for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++)
        CHECK_MSG(!file_exists(dir, absent[i]), "%s should not be written", absent[i]);
    pc_repro_case rc;
    CHECK_OK(pc_repro_case_load(dir, &rc, &err), &err);
    CHECK(rc.ep_list && strcmp(rc.ep_list, "nhwc,cpu") == 0);
    CHECK(rc.graph_edited && rc.n_choices == r.n_choices);
    pc_case kase;
    CHECK_OK(pc_repro_case_load_case(&rc, &kase, &err), &err);
    char diff[256] = "";
    pc_model *saved = pt_clone(r.kase.model);
    CHECK_MSG(kase.model && pc_model_equal(saved, kase.model, diff, sizeof diff), "%s", diff);
    pc_model_free(saved);
    CHECK(kase.n_inputs == 2 && strcmp(kase.ep_list, "nhwc,cpu") == 0);
    pc_case_free(&kase);
    pc_repro_case_free(&rc);
    /* the full folder's README replays with the same EPs */
    snprintf(dir, sizeof dir, "%s/replay-full", g_tmp);
    CHECK_OK(pc_repro_write(dir, &r, &info, &err), &err);
    char *readme = slurp(dir, "README.md");
    CHECK(readme && strstr(readme, "--ep nhwc,cpu") && strstr(readme, "EPs: `nhwc,cpu`"));
    free(readme);
    free_result(&r);
}

static void write_text(const char *dir, const char *name, const char *text)
{
    char p[1024]; /* a folder (the tests' are char[512]), a slash and a file name */
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (!f) pt_die(p, NULL);
    fputs(text, f);
    fclose(f);
}

/* case.txt errors name the file and line; unknown keys and bad values are refused */
static void test_case_errors(void)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/bad", g_tmp);
    mkdir(dir, 0755);
    pc_repro_case rc;
    pc_error err;
    static const struct {
        const char *text, *want;
        pc_status st;
    } cases[] = {
        {"version=1\nproperty=numerics\nmodel=repro.onnx\ninputs=0\nbogus=1\n",
         "case.txt:5: unknown key 'bogus'", PC_ERR_USAGE},
        {"version=2\n", "case.txt:1: case format version 2", PC_ERR_UNSUPPORTED},
        {"version=1\nlevel=x\n", "case.txt:2: bad value for 'level'", PC_ERR_VALUE},
        {"version=1\n# comment\n\nchoices=1 2 x\n", "case.txt:4: choices:", PC_ERR_USAGE},
        {"version=1\nmessage=bad \\q escape\n", "case.txt:2: bad escape", PC_ERR_VALUE},
        {"version=1\nproperty=numerics\nmodel=repro.onnx\n", "no 'inputs' line", PC_ERR_MISSING_FIELD},
        {"version=1\nep_file=/etc/passwd\n", "bad value for 'ep_file'", PC_ERR_VALUE},
        {"version=1\nnoequals\n", "case.txt:2: expected key=value", PC_ERR_USAGE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_text(dir, "case.txt", cases[i].text);
        pc_status st = pc_repro_case_load(dir, &rc, &err);
        CHECK_MSG(st != PC_OK && strstr(err.message, cases[i].want), "case %zu: %s: %s", i,
                  pc_status_name(st), err.message);
        if (i != 3) CHECK_MSG(st == cases[i].st, "case %zu: %s", i, pc_status_name(st));
    }
    /* missing folder */
    char nope[600];
    snprintf(nope, sizeof nope, "%s/nope", g_tmp);
    CHECK_STATUS(pc_repro_case_load(nope, &rc, &err), PC_ERR_IO, &err);
    CHECK(strstr(err.message, "nope/case.txt") != NULL);
}

/* DOT: escaped names, every node and edge present, graphviz accepts it */
static void test_dot(void)
{
    pc_model *m = make_model("a \"quoted\" \\ name");
    char path[512];
    snprintf(path, sizeof path, "%s/g.dot", g_tmp);
    FILE *f = fopen(path, "w");
    pc_error err;
    CHECK_OK(pc_model_write_dot(m, f, &err), &err);
    fclose(f);
    char *text = slurp(g_tmp, "g.dot");
    CHECK(text && strncmp(text, "digraph", 7) == 0);
    CHECK(text && strstr(text, "a \\\"quoted\\\" \\\\ name"));
    CHECK(text && strstr(text, "float[1,3,4,4]"));
    CHECK(text && strstr(text, "layer_ann: encoder.block0.mlp"));
    CHECK(text && strstr(text, "ep: cpu"));
    CHECK(text && strstr(text, "input x") && strstr(text, "output y") && strstr(text, "shape=note"));
    int edges = 0;
    for (const char *p = text; p && (p = strstr(p, " -> ")); p += 4)
        edges++;
    CHECK_MSG(edges == 6, "%d edges (Relu<-x, Add<-r, Add<-w, Neg<-k, y, nk)", edges);
    free(text);
    if (have_graphviz()) CHECK(graphviz_accepts(path));
    pc_model_free(m);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(g_tmp, sizeof g_tmp, "%s/test_repro.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(g_tmp)) {
        perror("mkdtemp");
        return 2;
    }
    test_save_data();
    test_repro_folder();
    test_replay_files();
    test_case_errors();
    test_dot();
    if (getenv("PC_TEST_KEEP"))
        printf("kept %s\n", g_tmp);
    else
        rm_rf(g_tmp);
    return pc_test_finish("test_runner_repro");
}
