/* End to end: models on disk whose initializers live in external files. pc_model_load_file must read the
 * bytes relative to the model's folder, and every confinement rule must reject with PC_ERR_EXTERNAL_DATA
 * naming the initializer and the offending value. A saved model carries the data inline and reloads equal. */
#include <sys/stat.h>
#include <unistd.h>

#include "tests/test_util.h"

#include "tests/onnx_builder.h"

static char dir[256];

static void write_file(const char *name, const void *data, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(data, 1, n, f) == n);
    fclose(f);
}

/* Writes model.onnx: y = x + W, W float[2,3] stored externally with the given keys. */
static void write_model(const char *location, const char *offset, const char *length)
{
    ob_pool p = {0};
    Onnx__ModelProto *m = ob_model(&p, 8);
    ob_opset(&p, m, "", 13);
    Onnx__GraphProto *g = ob_graph(&p, m, "g");
    int64_t dims[2] = {2, 3};
    ob_graph_input(&p, g, "x", ob_tensor_type(&p, 1, 2, dims));
    ob_graph_output(&p, g, "y", ob_tensor_type(&p, 1, 2, dims));
    Onnx__TensorProto *w = ob_tensor(&p, "W", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dims);
    w->has_data_location = 1;
    w->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    if (location) OB_APPEND(&p, w->external_data, w->n_external_data, ob_kv(&p, "location", location));
    if (offset) OB_APPEND(&p, w->external_data, w->n_external_data, ob_kv(&p, "offset", offset));
    if (length) OB_APPEND(&p, w->external_data, w->n_external_data, ob_kv(&p, "length", length));
    OB_APPEND(&p, g->initializer, g->n_initializer, w);
    const char *in[2] = {"x", "W"}, *out[1] = {"y"};
    ob_node(&p, g, "Add", "add", 2, in, 1, out);
    size_t size;
    uint8_t *bytes = ob_pack(&p, &m->base, &size);
    write_file("model.onnx", bytes, size);
    ob_pool_free(&p);
}

static pc_status load(pc_model **m, pc_error *err)
{
    char path[512];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    return pc_model_load_file(path, NULL, m, err);
}

static void expect_reject(const char *location, const char *offset, const char *length, const char *needle)
{
    write_model(location, offset, length);
    pc_model *m = NULL;
    pc_error err;
    CHECK_STATUS(load(&m, &err), PC_ERR_EXTERNAL_DATA, &err);
    CHECK(m == NULL);
    CHECK_MSG(strstr(err.message, "initializer 'W'") != NULL, "no tensor name in: %s", err.message);
    CHECK_MSG(strstr(err.message, needle) != NULL, "'%s' not in: %s", needle, err.message);
    CHECK_MSG(strstr(err.message, "model.onnx") != NULL, "no file name in: %s", err.message);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/pc_ext_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    float w[6] = {1, 2, 3, 4, 5, 6};
    uint8_t blob[4096 + sizeof w];
    memset(blob, 0xAB, sizeof blob);
    memcpy(blob + 4096, w, sizeof w);
    write_file("weights.bin", w, sizeof w);
    write_file("blob.bin", blob, sizeof blob);
    char sub[512];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    mkdir(sub, 0755);
    write_file("sub/w.bin", w, sizeof w);

    /* accepted forms, checked against the bytes we wrote */
    const char *good[][3] = {{"weights.bin", NULL, NULL},
                             {"weights.bin", "0", "24"},
                             {"blob.bin", "4096", "24"},
                             {"sub/w.bin", NULL, "24"}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        write_model(good[i][0], good[i][1], good[i][2]);
        pc_model *m = NULL;
        pc_error err;
        CHECK_OK(load(&m, &err), &err);
        if (!m) continue;
        const pc_value *v = pc_graph_find_value(m->graph, "W");
        CHECK(v && v->initializer && v->initializer->n_bytes == sizeof w &&
              memcmp(v->initializer->data, w, sizeof w) == 0);
        /* saved inline: reloads from memory (where external data is forbidden) and compares equal */
        uint8_t *bytes;
        size_t size;
        CHECK_OK(pc_model_save_bytes(m, &bytes, &size, &err), &err);
        pc_model *back = NULL;
        CHECK_OK(pc_model_load_bytes(bytes, size, NULL, &back, &err), &err);
        char diff[256];
        CHECK_MSG(back && pc_model_equal(m, back, diff, sizeof diff), "%s", diff);
        pc_model_free(back);
        free(bytes);
        pc_model_free(m);
    }

    expect_reject(NULL, NULL, NULL, "location");
    expect_reject("", NULL, NULL, "location");
    expect_reject("../weights.bin", NULL, NULL, "..");
    expect_reject("sub/../weights.bin", NULL, NULL, "..");
    expect_reject("/etc/passwd", NULL, NULL, "/etc/passwd");
    expect_reject("*/_ORT_MEM_ADDR_/*", NULL, NULL, "_ORT_MEM_ADDR_");
    expect_reject("missing.bin", NULL, NULL, "missing.bin");
    expect_reject("weights.bin", "-4", NULL, "-4");
    expect_reject("weights.bin", "4x", NULL, "4x");
    expect_reject("weights.bin", "8", NULL, "8");    /* 24 - 8 bytes left < 24 needed */
    expect_reject("weights.bin", NULL, "20", "20");  /* length != byte size */
    expect_reject("blob.bin", "4100", "24", "4100"); /* runs past the end */
    expect_reject("sub", NULL, NULL, "sub");         /* a directory */
    char link[512], target[512];
    snprintf(link, sizeof link, "%s/link.bin", dir);
    snprintf(target, sizeof target, "%s/weights.bin", dir);
    CHECK(symlink(target, link) == 0);
    expect_reject("link.bin", NULL, NULL, "link.bin");

    /* a model file written by our saver never leaves a temp file behind on failure */
    pc_model *m = NULL;
    pc_error err;
    write_model("weights.bin", NULL, NULL);
    CHECK_OK(load(&m, &err), &err);
    char bad[600];
    snprintf(bad, sizeof bad, "%s/no-such-dir/out.onnx", dir);
    CHECK_STATUS(pc_model_save_file(m, bad, &err), PC_ERR_IO, &err);
    CHECK(strstr(err.message, "no-such-dir") != NULL);
    char good_out[600];
    snprintf(good_out, sizeof good_out, "%s/out.onnx", dir);
    CHECK_OK(pc_model_save_file(m, good_out, &err), &err);
    pc_model *again = NULL;
    CHECK_OK(pc_model_load_file(good_out, NULL, &again, &err), &err);
    char diff[256];
    CHECK_MSG(again && pc_model_equal(m, again, diff, sizeof diff), "%s", diff);
    pc_model_free(again);
    pc_model_free(m);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    return pc_test_finish("test_onnx_load_external");
}
