/* The ONNX Runtime oracle (properties/oracles/ort_oracle.c, tools/ort/ort_run.js): ORT and the reference
 * agree on hand-built graphs of every element type the generators use; a perturbed reference output (NaN
 * moved, a value nudged past the tolerance, an integer off by one) is caught while one inside the tolerance
 * is not; ORT's refusals come back as such; the property runs through the case runner; forked children share
 * the server; a missing package is an error naming the path. The explained differences (docs/oracle.md): a
 * QuantizeLinear one step off at a rounding tie passes (made-up ORT outputs, and the suite's Conv case),
 * ORT's Resize length_resized deviation is a SKIP of kind "ort-resize-length" and nothing else is; ORT agrees
 * with the reference on the 'sizes' cases test_ref_resize pins. Prints "skipped" and passes when node or
 * onnxruntime-node is absent (ci/deps installs both), after the checks that need no ORT. */
#include <math.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "properties/oracles/ort_oracle.h"
#include "tests/pass_test_util.h"
#include "properties/property.h"
#include "reference/reference.h"
#include "tests/test_util.h"

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static double next_unit(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (double)(g_rng >> 11) / 9007199254740992.0;
}

/* Random data in [lo, hi] for any element type the generators use. */
static pc_data *random_input(pc_dtype dt, int32_t rank, const int64_t *dims, double lo, double hi)
{
    pc_error err;
    pc_data *d = pc_data_new_tensor(dt, rank, dims, &err);
    if (!d) pt_die("input", &err);
    for (uint64_t i = 0; i < d->n_elements; i++) {
        double v = lo + (hi - lo) * next_unit();
        switch (dt) {
        case PC_DTYPE_FLOAT:
            ((float *)d->data)[i] = (float)v;
            break;
        case PC_DTYPE_DOUBLE:
            ((double *)d->data)[i] = v;
            break;
        case PC_DTYPE_INT8:
            ((int8_t *)d->data)[i] = (int8_t)lrint(v);
            break;
        case PC_DTYPE_UINT8:
            ((uint8_t *)d->data)[i] = (uint8_t)lrint(v);
            break;
        case PC_DTYPE_INT32:
            ((int32_t *)d->data)[i] = (int32_t)lrint(v);
            break;
        case PC_DTYPE_INT64:
            ((int64_t *)d->data)[i] = (int64_t)llrint(v);
            break;
        case PC_DTYPE_BOOL:
            ((uint8_t *)d->data)[i] = v > 0;
            break;
        default:
            pt_die("random_input: dtype", NULL);
        }
    }
    return d;
}

typedef struct run {
    pc_data **ref;
    pc_ort_result ort;
    pc_status ort_status;
    pc_error err;
} run;

/* The model on both executors with the same inputs. */
static void run_both(pc_model *m, uint32_t n, pc_data *const *inputs, run *out)
{
    memset(out, 0, sizeof *out);
    pc_error err;
    if (pc_ref_run(m, n, inputs, &out->ref, &err) != PC_OK) pt_die("reference", &err);
    uint8_t *bytes;
    size_t size;
    if (pc_model_save_bytes(m, &bytes, &size, &err) != PC_OK) pt_die("save", &err);
    const char *names[8];
    uint32_t k = 0;
    for (uint32_t i = 0; i < m->graph->n_inputs && k < 8; i++)
        if (!m->graph->inputs[i]->initializer) names[k++] = m->graph->inputs[i]->name;
    out->ort_status = pc_ort_run(NULL, bytes, size, n, names, inputs, &out->ort, &out->err);
    free(bytes);
}

static void run_free(pc_model *m, run *r)
{
    if (r->ref) pc_ref_free_outputs(m, r->ref);
    pc_ort_result_free(&r->ort);
}

static pc_prop_outcome verdict(pc_model *m, run *r, char *msg, size_t size, const char **kind)
{
    *kind = NULL;
    msg[0] = '\0';
    return pc_ort_compare_outputs(m, r->ref, &r->ort, msg, size, kind);
}

/* A CNN-ish float graph: Conv, Relu, MaxPool, Softmax, ReduceMean, Tanh, Sigmoid, MatMul. */
static pc_model *float_model(void)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 6, 6});
    float w[4 * 3 * 3 * 3], b[4];
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        w[i] = (float)(next_unit() - 0.5);
    for (size_t i = 0; i < 4; i++)
        b[i] = (float)(next_unit() - 0.5);
    pt_const_f(m, "w", 4, (int64_t[]){4, 3, 3, 3}, w);
    pt_const_f(m, "b", 1, (int64_t[]){4}, b);
    pc_node *conv = pt_node(m, "Conv", "", "x,w,b", "c", NULL);
    pc_error err;
    pc_node_set_attr_ints(conv, "pads", 4, (int64_t[]){1, 1, 1, 1}, &err);
    pt_node(m, "Relu", "", "c", "r", NULL);
    pc_node *pool = pt_node(m, "MaxPool", "", "r", "p", NULL);
    pc_node_set_attr_ints(pool, "kernel_shape", 2, (int64_t[]){2, 2}, &err);
    pc_node_set_attr_ints(pool, "strides", 2, (int64_t[]){2, 2}, &err);
    pt_node(m, "Softmax", "", "p", "s", NULL);
    pt_node(m, "Tanh", "", "p", "t", NULL);
    pt_node(m, "Sigmoid", "", "t", "sg", NULL);
    pc_node *rm = pt_node(m, "ReduceMean", "", "sg", "mean", NULL);
    pc_node_set_attr_ints(rm, "axes", 1, (int64_t[]){1}, &err);
    float mw[3 * 2];
    for (size_t i = 0; i < 6; i++)
        mw[i] = (float)(next_unit() * 2 - 1);
    pt_const_f(m, "mw", 2, (int64_t[]){3, 2}, mw);
    pt_node(m, "MatMul", "", "s,mw", "mm", NULL);
    pt_output(m, "mm");
    pt_output(m, "mean");
    if (pc_graph_infer_shapes(m->graph, &err) != PC_OK) pt_die("infer", &err);
    return m;
}

static void test_agreement(void)
{
    char msg[1024];
    const char *kind;
    pc_error err;

    /* float */
    pc_model *m = float_model();
    pc_data *x = random_input(PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 6, 6}, -2, 2);
    run r;
    run_both(m, 1, &x, &r);
    CHECK_OK(r.ort_status, &r.err);
    CHECK_MSG(r.ort.status == PC_ORT_OK, "%s", r.ort.message);
    if (r.ort_status == PC_OK && r.ort.status == PC_ORT_OK) {
        CHECK(r.ort.n_outputs == 2 && strcmp(r.ort.names[0], "mm") == 0);
        CHECK_MSG(verdict(m, &r, msg, sizeof msg, &kind) == PC_PROP_PASS, "%s", msg);

        /* perturbed reference outputs: caught past the tolerance, accepted inside it */
        float *mm = r.ref[0]->data;
        float saved = mm[5];
        mm[5] = saved + 1e-3f + 2e-4f * fabsf(saved);
        CHECK(verdict(m, &r, msg, sizeof msg, &kind) == PC_PROP_FAIL && kind &&
              !strcmp(kind, "ort-disagrees"));
        CHECK_MSG(strstr(msg, "'mm'") && strstr(msg, "index 5") != NULL, "%s", msg);
        mm[5] = saved + 2e-6f * (1 + fabsf(saved)); /* well inside atol + rtol*|ref| */
        CHECK_MSG(verdict(m, &r, msg, sizeof msg, &kind) == PC_PROP_PASS, "%s", msg);
        mm[5] = NAN; /* a NaN where ORT has a number */
        CHECK(verdict(m, &r, msg, sizeof msg, &kind) == PC_PROP_FAIL && kind &&
              !strcmp(kind, "ort-disagrees"));
        mm[5] = saved;
        /* a shape difference */
        int64_t d1 = r.ref[1]->dims[1];
        r.ref[1]->dims[1] = d1 + 1;
        CHECK(verdict(m, &r, msg, sizeof msg, &kind) == PC_PROP_FAIL);
        r.ref[1]->dims[1] = d1;
        CHECK_MSG(verdict(m, &r, msg, sizeof msg, &kind) == PC_PROP_PASS, "%s", msg);
        /* ORT missing an output by name */
        r.ort.names[0][0] = 'X';
        CHECK(verdict(m, &r, msg, sizeof msg, &kind) == PC_PROP_FAIL && strstr(msg, "no output 'mm'"));
        r.ort.names[0][0] = 'm';
    }
    run_free(m, &r);
    pc_data_unref(x);
    pc_model_free(m);

    /* integers, bools, doubles, int8/uint8: Cast, Mul, Greater, Where, Add, Clip */
    m = pt_model(17);
    pt_input(m, "a", PC_DTYPE_INT64, 2, (int64_t[]){3, 4});
    pt_input(m, "q", PC_DTYPE_INT8, 1, (int64_t[]){4});
    pt_input(m, "u", PC_DTYPE_UINT8, 1, (int64_t[]){4});
    pt_input(m, "d", PC_DTYPE_DOUBLE, 2, (int64_t[]){3, 4});
    pt_input(m, "i", PC_DTYPE_INT32, 1, (int64_t[]){4});
    pt_node(m, "Mul", "", "a,a", "aa", NULL);
    pc_node *cast = pt_node(m, "Cast", "", "aa", "ad", NULL);
    pc_node_set_attr_int(cast, "to", PC_DTYPE_DOUBLE, &err);
    pt_node(m, "Add", "", "ad,d", "sum", NULL);
    pt_node(m, "Greater", "", "d,ad", "gt", NULL);
    pt_node(m, "Where", "", "gt,d,ad", "wh", NULL);
    pt_node(m, "Neg", "", "q", "nq", NULL);
    pc_node *cu = pt_node(m, "Cast", "", "u", "ui", NULL);
    pc_node_set_attr_int(cu, "to", PC_DTYPE_INT32, &err);
    pt_node(m, "Sub", "", "ui,i", "diff", NULL);
    pt_output(m, "sum");
    pt_output(m, "gt");
    pt_output(m, "wh");
    pt_output(m, "nq");
    pt_output(m, "diff");
    if (pc_graph_infer_shapes(m->graph, &err) != PC_OK) pt_die("infer", &err);
    pc_data *ins[5] = {random_input(PC_DTYPE_INT64, 2, (int64_t[]){3, 4}, -50, 50),
                       random_input(PC_DTYPE_INT8, 1, (int64_t[]){4}, -127, 127),
                       random_input(PC_DTYPE_UINT8, 1, (int64_t[]){4}, 0, 255),
                       random_input(PC_DTYPE_DOUBLE, 2, (int64_t[]){3, 4}, -3000, 3000),
                       random_input(PC_DTYPE_INT32, 1, (int64_t[]){4}, -1000, 1000)};
    run_both(m, 5, ins, &r);
    CHECK_OK(r.ort_status, &r.err);
    CHECK_MSG(r.ort.status == PC_ORT_OK, "%s", r.ort.message);
    if (r.ort_status == PC_OK && r.ort.status == PC_ORT_OK) {
        CHECK(r.ort.n_outputs == 5 && r.ort.outputs[1]->dtype == PC_DTYPE_BOOL &&
              r.ort.outputs[3]->dtype == PC_DTYPE_INT8);
        CHECK_MSG(verdict(m, &r, msg, sizeof msg, &kind) == PC_PROP_PASS, "%s", msg);
        int32_t *diff = r.ref[4]->data; /* integers exact: off by one is caught */
        diff[2] += 1;
        CHECK(verdict(m, &r, msg, sizeof msg, &kind) == PC_PROP_FAIL && strstr(msg, "'diff'"));
        diff[2] -= 1;
        uint8_t *gt = r.ref[1]->data;
        gt[0] = !gt[0];
        CHECK(verdict(m, &r, msg, sizeof msg, &kind) == PC_PROP_FAIL && strstr(msg, "'gt'"));
        gt[0] = !gt[0];
        CHECK_MSG(verdict(m, &r, msg, sizeof msg, &kind) == PC_PROP_PASS, "%s", msg);
    }
    run_free(m, &r);
    for (int i = 0; i < 5; i++)
        pc_data_unref(ins[i]);
    pc_model_free(m);
}

/* Models ORT refuses come back as refusals (not as harness errors). */
static void test_refusals(void)
{
    pc_error err;
    pc_ort_result r;
    static const uint8_t junk[] = {0x08, 0x07, 0x12, 0xff, 0xff};
    CHECK_OK(pc_ort_run(NULL, junk, sizeof junk, 0, NULL, NULL, &r, &err), &err);
    CHECK_MSG(r.status == PC_ORT_REJECTED && r.message[0], "status %d: %s", (int)r.status, r.message);
    pc_ort_result_free(&r);

    /* a valid model fed the wrong shape: the run fails */
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    pt_node(m, "Relu", "", "x", "y", NULL);
    pt_output(m, "y");
    uint8_t *bytes;
    size_t size;
    CHECK_OK(pc_model_save_bytes(m, &bytes, &size, &err), &err);
    pc_data *x = random_input(PC_DTYPE_FLOAT, 2, (int64_t[]){3, 2}, -1, 1);
    const char *name = "x";
    CHECK_OK(pc_ort_run(NULL, bytes, size, 1, &name, &x, &r, &err), &err);
    CHECK_MSG(r.status == PC_ORT_RUN_FAILED && r.message[0], "status %d: %s", (int)r.status, r.message);
    pc_ort_result_free(&r);
    /* the connection is still good afterwards */
    pc_data_unref(x);
    x = random_input(PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, -1, 1);
    CHECK_OK(pc_ort_run(NULL, bytes, size, 1, &name, &x, &r, &err), &err);
    CHECK(r.status == PC_ORT_OK && r.n_outputs == 1);
    pc_ort_result_free(&r);
    free(bytes);
    pc_data_unref(x);
    pc_model_free(m);
}

/* The property through the case runner: PASS with --oracle ort, quiet SKIP without. */
static void test_property(void)
{
    pc_case c = {0};
    c.model = float_model();
    c.n_inputs = 1;
    c.inputs = calloc(1, sizeof *c.inputs);
    c.inputs[0] = random_input(PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 6, 6}, -2, 2);
    c.ep_list = malloc(4);
    memcpy(c.ep_list, "cpu", 4);
    c.family = "float";
    const pc_property *p = pc_property_find("ort-oracle");
    CHECK(p && p->final && !p->per_pass);
    size_t idx = 0;
    for (size_t i = 0; i < pc_property_count(); i++)
        if (pc_property_at(i) == p) idx = i;
    pc_check_config cc;
    pc_check_config_default(&cc);
    CHECK(!cc.enabled[idx] && !cc.oracle_ort);
    pc_error err;
    CHECK_OK(pc_check_config_select(&cc, "ort-oracle", &err), &err);
    CHECK(cc.enabled[idx] && cc.oracle_ort);
    pc_check_result res;
    memset(&res, 0, sizeof res);
    CHECK_OK(pc_case_check(&c, &cc, &res, &err), &err);
    CHECK_MSG(!res.failed, "%s@%s: %s", res.failure.property, res.failure.pass, res.failure.message);
    CHECK(res.counts[idx][PC_PROP_PASS] == 1);
    pc_check_result_free(&res);

    cc.oracle_ort = false; /* enabled but the oracle switched off: skipped */
    memset(&res, 0, sizeof res);
    CHECK_OK(pc_case_check(&c, &cc, &res, &err), &err);
    CHECK(!res.failed && res.counts[idx][PC_PROP_SKIP] == 1);
    pc_check_result_free(&res);
    pc_case_free(&c);
}

/* Forked children use the parent's server through their own connections; the parent's keeps working. */
static void test_fork_sharing(void)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 1, (int64_t[]){5});
    pt_node(m, "Exp", "", "x", "y", NULL);
    pt_output(m, "y");
    pc_error err;
    uint8_t *bytes;
    size_t size;
    CHECK_OK(pc_model_save_bytes(m, &bytes, &size, &err), &err);
    pc_data *x = random_input(PC_DTYPE_FLOAT, 1, (int64_t[]){5}, -3, 3);
    const char *name = "x";
    pc_ort_result r;
    CHECK_OK(pc_ort_run(NULL, bytes, size, 1, &name, &x, &r, &err), &err);
    pc_ort_result_free(&r);
    pid_t kids[3];
    for (int k = 0; k < 3; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            int bad = 0;
            for (int i = 0; i < 5; i++) {
                pc_ort_result cr;
                pc_error cerr;
                if (pc_ort_run(NULL, bytes, size, 1, &name, &x, &cr, &cerr) != PC_OK ||
                    cr.status != PC_ORT_OK)
                    bad++;
                pc_ort_result_free(&cr);
            }
            /* the child must not stop the parent's server on its way out */
            _exit(bad ? 1 : 0);
        }
    }
    /* a child killed in the middle of a request only loses its own connection */
    pid_t victim = fork();
    if (victim == 0) {
        pc_ort_result cr;
        pc_error cerr;
        for (;;) {
            pc_ort_run(NULL, bytes, size, 1, &name, &x, &cr, &cerr);
            pc_ort_result_free(&cr);
        }
    }
    nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    kill(victim, SIGKILL);
    waitpid(victim, NULL, 0);
    for (int k = 0; k < 3; k++) {
        int st = -1;
        waitpid(kids[k], &st, 0);
        CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %d status %d", k, st);
    }
    CHECK_OK(pc_ort_run(NULL, bytes, size, 1, &name, &x, &r, &err), &err);
    CHECK(r.status == PC_ORT_OK);
    pc_ort_result_free(&r);

    /* an exiting child that started its own server (no inherited one) reaps it */
    pc_ort_server_stop();
    pid_t solo = fork();
    if (solo == 0) {
        pc_ort_result cr;
        pc_error cerr;
        int bad = pc_ort_run(NULL, bytes, size, 1, &name, &x, &cr, &cerr) != PC_OK || cr.status != PC_ORT_OK;
        pc_ort_result_free(&cr);
        exit(bad); /* atexit stops the server */
    }
    int st = -1;
    waitpid(solo, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    free(bytes);
    pc_data_unref(x);
    pc_model_free(m);
}

/* A hand-made ORT result holding one output (a new reference to `d`), for verdicts that need no ORT. */
static void fake_result(pc_ort_result *r, const char *name, pc_data *d)
{
    memset(r, 0, sizeof *r);
    r->names = calloc(1, sizeof *r->names);
    r->outputs = calloc(1, sizeof *r->outputs);
    if (!r->names || !r->outputs || !(r->names[0] = strdup(name))) pt_die("fake_result", NULL);
    r->outputs[0] = pc_data_ref(d);
    r->n_outputs = 1;
}

/* The verdict on `m` and one output where ORT's values are `ort` (the reference's, with the given elements
 * changed): compare, then explain. */
static pc_prop_outcome verdict_with(pc_model *m, pc_data *x, const int64_t *ort_values, char *msg,
                                    size_t size, const char **kind)
{
    pc_error err;
    pc_data **ref = NULL;
    if (pc_ref_run(m, 1, &x, &ref, &err) != PC_OK) pt_die("reference", &err);
    pc_data *o = pc_data_new_tensor(ref[0]->dtype, ref[0]->rank, ref[0]->dims, &err);
    if (!o) pt_die("ort output", &err);
    for (uint64_t k = 0; k < o->n_elements; k++) {
        if (o->dtype == PC_DTYPE_INT8)
            ((int8_t *)o->data)[k] = (int8_t)ort_values[k];
        else
            ((uint8_t *)o->data)[k] = (uint8_t)ort_values[k];
    }
    pc_ort_result r;
    fake_result(&r, m->graph->outputs[0]->name, o);
    pc_data_unref(o);
    *kind = NULL;
    msg[0] = '\0';
    pc_prop_outcome v = pc_ort_compare_outputs(m, ref, &r, msg, size, kind);
    if (v == PC_PROP_FAIL) v = pc_ort_explain(m, 1, &x, &r, NULL, msg, size, kind);
    pc_ort_result_free(&r);
    pc_ref_free_outputs(m, ref);
    return v;
}

/* A QuantizeLinear output one step off ORT's is accepted only at a rounding tie of its float input (within
 * the float tolerance), only between the two quantizations around that tie; anything else is a disagreement.
 * No ORT needed: ORT's outputs are made up. */
static void test_quant_ties(void)
{
    pc_error err;
    char msg[2048];
    const char *kind;
    /* per tensor, int8, scale 1, zero point 0. x / 1 = x; round half to even, saturate to [-128, 127]:
     * 2.5 -> 2, 3.5 -> 4, -18.5 -> -18, 1.2 -> 1, 2.50001 -> 3 (1e-5 from the tie 2.5, inside the tolerance
     * 1e-5 + 1e-4 * 2.5), 127.5 -> 128 -> 127. */
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 1, (int64_t[]){6});
    pt_const_f(m, "s", 0, NULL, (float[]){1});
    pt_const(m, "z", PC_DTYPE_INT8, 0, NULL, (int8_t[]){0});
    pt_node(m, "QuantizeLinear", "", "x,s,z", "q", NULL);
    pt_output(m, "q");
    pc_data *x = pc_data_new_tensor(PC_DTYPE_FLOAT, 1, (int64_t[]){6}, &err);
    if (!x) pt_die("x", &err);
    memcpy(x->data, (float[]){2.5f, 3.5f, -18.5f, 1.2f, 2.50001f, 127.5f}, 6 * sizeof(float));
    /* the reference's own values agree */
    CHECK_MSG(verdict_with(m, x, (int64_t[]){2, 4, -18, 1, 3, 127}, msg, sizeof msg, &kind) == PC_PROP_PASS,
              "%s", msg);
    /* the other side of each tie: explained */
    CHECK_MSG(verdict_with(m, x, (int64_t[]){3, 3, -19, 1, 2, 127}, msg, sizeof msg, &kind) == PC_PROP_PASS,
              "%s", msg);
    /* 1.2 is nowhere near a tie: 2 is a disagreement, even with the ties beside it */
    CHECK(verdict_with(m, x, (int64_t[]){3, 3, -19, 2, 2, 127}, msg, sizeof msg, &kind) == PC_PROP_FAIL &&
          kind && !strcmp(kind, "ort-disagrees") && strstr(msg, "'q'"));
    /* two steps from the reference at a tie: not the other side of it */
    CHECK(verdict_with(m, x, (int64_t[]){4, 4, -18, 1, 3, 127}, msg, sizeof msg, &kind) == PC_PROP_FAIL);
    /* the tie 127.5 saturates both ways to 127: 126 is not explained */
    CHECK(verdict_with(m, x, (int64_t[]){2, 4, -18, 1, 3, 126}, msg, sizeof msg, &kind) == PC_PROP_FAIL);
    pc_data_unref(x);
    pc_model_free(m);

    /* per axis (axis 1), uint8, scales 1, 0.5, 2 and zero points 10, 20, 30 by column. x / scale:
     * [[0.5, 1.5, 1.5], [1.0, 2.5, -0.5]] -> round half to even + zero point: [[10, 22, 32], [11, 22, 30]].
     * Ties everywhere but [1][0]; their other sides: 11, 21, 31, 23, 29. */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    pt_const_f(m, "s", 1, (int64_t[]){3}, (float[]){1, 0.5f, 2});
    pt_const(m, "z", PC_DTYPE_UINT8, 1, (int64_t[]){3}, (uint8_t[]){10, 20, 30});
    pc_node *q = pt_node(m, "QuantizeLinear", "", "x,s,z", "q", NULL);
    if (pc_node_set_attr_int(q, "axis", 1, &err) != PC_OK) pt_die("axis", &err);
    pt_output(m, "q");
    x = pc_data_new_tensor(PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, &err);
    if (!x) pt_die("x", &err);
    memcpy(x->data, (float[]){0.5f, 0.75f, 3.0f, 1.0f, 1.25f, -1.0f}, 6 * sizeof(float));
    CHECK_MSG(verdict_with(m, x, (int64_t[]){10, 22, 32, 11, 22, 30}, msg, sizeof msg, &kind) == PC_PROP_PASS,
              "%s", msg);
    CHECK_MSG(verdict_with(m, x, (int64_t[]){11, 21, 31, 11, 23, 29}, msg, sizeof msg, &kind) == PC_PROP_PASS,
              "%s", msg);
    CHECK(verdict_with(m, x, (int64_t[]){11, 21, 31, 12, 23, 29}, msg, sizeof msg, &kind) == PC_PROP_FAIL);
    /* a wrong channel's zero point would make 21 -> 11 look like a tie of column 0: it is not */
    CHECK(verdict_with(m, x, (int64_t[]){10, 11, 32, 11, 22, 30}, msg, sizeof msg, &kind) == PC_PROP_FAIL);
    pc_data_unref(x);
    pc_model_free(m);
}

/* x (float[1,1,2,5] input) through Resize with 'scales' 1, 1, 1, 0.5 and the given transform, plus Relu(x) as
 * a second output. */
static pc_model *resize_model(const char *coord, const char *mode)
{
    pc_model *m = pt_model(13);
    pc_error err;
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 2, 5});
    pt_const_f(m, "scales", 1, (int64_t[]){4}, (float[]){1, 1, 1, 0.5f});
    pc_node *r = pt_node(m, "Resize", "", "x,,scales", "y", NULL);
    if (pc_node_set_attr_string(r, "coordinate_transformation_mode", coord, &err) != PC_OK ||
        pc_node_set_attr_string(r, "mode", mode, &err) != PC_OK)
        pt_die("attr", &err);
    pt_node(m, "Relu", "", "x", "relu", NULL);
    pt_output(m, "y");
    pt_output(m, "relu");
    if (pc_graph_infer_shapes(m->graph, &err) != PC_OK) pt_die("infer", &err);
    return m;
}

/* ORT's known Resize deviation is its own kind, with the spec reference; a disagreement elsewhere in the same
 * graph is still "ort-disagrees". */
static void test_resize_deviation(void)
{
    char msg[2048];
    const char *kind;
    pc_model *m = resize_model("align_corners", "nearest");
    pc_data *x = random_input(PC_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 2, 5}, -1, 1);
    const float *xv = x->data;
    run r;
    run_both(m, 1, &x, &r);
    CHECK_OK(r.ort_status, &r.err);
    CHECK_MSG(r.ort.status == PC_ORT_OK, "%s", r.ort.message);
    if (r.ort_status == PC_OK && r.ort.status == PC_ORT_OK) {
        /* width 5 * 0.5 -> 2 columns. ONNX: x_original = x * 4 / (2.5 - 1) -> 0, 2.667 -> columns 0, 3. ORT
         * (length_resized = 2): x * 4 / (2 - 1) -> columns 0, 4. */
        const float *ref = r.ref[0]->data, *ort = r.ort.outputs[0]->data;
        CHECK(ref[1] == xv[3] && ref[3] == xv[8]);
        CHECK_MSG(ort[1] == xv[4] && ort[3] == xv[9], "ORT read %g, %g", (double)ort[1], (double)ort[3]);
        CHECK(verdict(m, &r, msg, sizeof msg, &kind) == PC_PROP_FAIL && !strcmp(kind, "ort-disagrees"));
        CHECK(pc_ort_explain(m, 1, &x, &r.ort, NULL, msg, sizeof msg, &kind) == PC_PROP_SKIP && kind &&
              !strcmp(kind, "ort-resize-length"));
        CHECK_MSG(strstr(msg, "onnx/onnx#2462") && strstr(msg, "align_corners") && strstr(msg, "'y'"), "%s",
                  msg);

        /* ORT's Relu made wrong: the Resize reading does not explain that */
        float *relu = r.ort.outputs[1]->data;
        relu[0] += 1;
        CHECK(verdict(m, &r, msg, sizeof msg, &kind) == PC_PROP_FAIL);
        CHECK_MSG(pc_ort_explain(m, 1, &x, &r.ort, NULL, msg, sizeof msg, &kind) == PC_PROP_FAIL && kind &&
                      !strcmp(kind, "ort-disagrees"),
                  "%s: %s", kind ? kind : "(none)", msg);
    }
    run_free(m, &r);

    /* through the case runner: the case is judged SKIP (ORT departs from the spec there), not a failure */
    pc_case c = {0};
    c.model = m;
    c.n_inputs = 1;
    c.inputs = calloc(1, sizeof *c.inputs);
    c.inputs[0] = x;
    c.ep_list = strdup("cpu");
    c.family = "float";
    pc_check_config cc;
    pc_check_config_default(&cc);
    pc_error err;
    CHECK_OK(pc_check_config_select(&cc, "ort-oracle", &err), &err);
    pc_check_result res;
    memset(&res, 0, sizeof res);
    CHECK_OK(pc_case_check(&c, &cc, &res, &err), &err);
    {
        size_t ort_index = pc_property_count();
        for (size_t i = 0; i < pc_property_count(); i++)
            if (!strcmp(pc_property_at(i)->name, "ort-oracle")) ort_index = i;
        CHECK_MSG(!res.failed, "failed: %s", res.failure.kind);
        CHECK(ort_index < pc_property_count() && res.counts[ort_index][PC_PROP_SKIP] == 1 &&
              res.counts[ort_index][PC_PROP_FAIL] == 0);
    }
    pc_check_result_free(&res);
    pc_case_free(&c);

    /* half_pixel reads no length: ORT and the reference agree on the same shapes */
    m = resize_model("half_pixel", "linear");
    x = random_input(PC_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 2, 5}, -1, 1);
    run_both(m, 1, &x, &r);
    if (r.ort_status == PC_OK && r.ort.status == PC_ORT_OK)
        CHECK_MSG(verdict(m, &r, msg, sizeof msg, &kind) == PC_PROP_PASS, "%s", msg);
    run_free(m, &r);
    pc_data_unref(x);
    pc_model_free(m);
}

/* x[i] = i (float[1,1,1,n] input) resized by 'sizes' to k on the last axis. */
static void check_sizes_agree(int64_t n, int64_t k, const char *coord, const char *mode, const char *nearest)
{
    pc_model *m = pt_model(13);
    pc_error err;
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 1, n});
    pt_const_i64(m, "sizes", 4, (int64_t[]){1, 1, 1, k});
    pc_node *r = pt_node(m, "Resize", "", "x,,,sizes", "y", NULL);
    if (pc_node_set_attr_string(r, "coordinate_transformation_mode", coord, &err) != PC_OK ||
        pc_node_set_attr_string(r, "mode", mode, &err) != PC_OK ||
        (nearest && pc_node_set_attr_string(r, "nearest_mode", nearest, &err) != PC_OK))
        pt_die("attr", &err);
    pt_output(m, "y");
    if (pc_graph_infer_shapes(m->graph, &err) != PC_OK) pt_die("infer", &err);
    pc_data *x = pc_data_new_tensor(PC_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 1, n}, &err);
    if (!x) pt_die("x", &err);
    for (int64_t i = 0; i < n; i++)
        ((float *)x->data)[i] = (float)i;
    run rr;
    run_both(m, 1, &x, &rr);
    char msg[1024];
    const char *kind;
    CHECK_OK(rr.ort_status, &rr.err);
    if (rr.ort_status == PC_OK && rr.ort.status == PC_ORT_OK)
        CHECK_MSG(verdict(m, &rr, msg, sizeof msg, &kind) == PC_PROP_PASS, "%s %lld->%lld %s: %s", coord,
                  (long long)n, (long long)k, mode, msg);
    else
        CHECK_MSG(0, "ORT: %s", rr.ort.message);
    run_free(m, &rr);
    pc_data_unref(x);
    pc_model_free(m);
}

/* ORT computes Resize coordinates in float32: where the exact coordinate is an integer, floor can read the
 * element before it (half_pixel 7 -> 1: exact 3, ORT 2.9999998 -> x[2]; test_ref_resize derives both). The
 * float32 rerun explains it: PASS, not a disagreement. */
static void test_resize_float32_rounding(void)
{
    pc_model *m = pt_model(13);
    pc_error err;
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 1, 7});
    pt_const_i64(m, "sizes", 4, (int64_t[]){1, 1, 1, 1});
    pc_node *r = pt_node(m, "Resize", "", "x,,,sizes", "y", NULL);
    if (pc_node_set_attr_string(r, "nearest_mode", "floor", &err) != PC_OK) pt_die("attr", &err);
    pt_output(m, "y");
    if (pc_graph_infer_shapes(m->graph, &err) != PC_OK) pt_die("infer", &err);
    pc_data *x = pc_data_new_tensor(PC_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 1, 7}, &err);
    if (!x) pt_die("x", &err);
    for (int i = 0; i < 7; i++)
        ((float *)x->data)[i] = (float)i;
    run rr;
    run_both(m, 1, &x, &rr);
    CHECK_OK(rr.ort_status, &rr.err);
    if (rr.ort_status == PC_OK && rr.ort.status == PC_ORT_OK) {
        char msg[2048];
        const char *kind;
        CHECK(((const float *)rr.ref[0]->data)[0] == 3);
        float ort = ((const float *)rr.ort.outputs[0]->data)[0];
        pc_prop_outcome v = verdict(m, &rr, msg, sizeof msg, &kind);
        CHECK_MSG(ort == 3 || v == PC_PROP_FAIL, "ORT %g", (double)ort);
        if (v == PC_PROP_FAIL) v = pc_ort_explain(m, 1, &x, &rr.ort, NULL, msg, sizeof msg, &kind);
        CHECK_MSG(v == PC_PROP_PASS, "ORT gives %g: %s", (double)ort, msg);
    }
    run_free(m, &rr);
    pc_data_unref(x);
    pc_model_free(m);
}

/* The 'sizes' cases test_ref_resize pins by hand: ORT agrees with the fixed reference on each. */
static void test_resize_sizes_agree(void)
{
    check_sizes_agree(25, 7, "align_corners", "nearest", "floor");
    check_sizes_agree(14, 18, "asymmetric", "nearest", "floor");
    check_sizes_agree(7, 9, "half_pixel", "nearest", "floor");
    check_sizes_agree(49, 1, "pytorch_half_pixel", "nearest", NULL);
    check_sizes_agree(4, 1, "pytorch_half_pixel", "cubic", NULL);
}

/* The suite's case (seed 6, case 4941, qdq, shrunk): Conv -> QuantizeLinear where the exact convolution is
 * -18.5000003 at [1,0,0,2]. The reference rounds it once to the float -18.5, a tie, and quantizes it to -18 +
 * 128 = 110; ORT's float32 accumulation may land below the tie and give 109. Either is a correct quantization
 * of a correctly computed float: explained, not a disagreement. */
static void test_conv_quant_tie(void)
{
    static const float xv[36] = {
        0.133200004696846f,    0.4699000120162964f,   0.4699000120162964f,    -0.11100000143051147f,
        -0.11100000143051147f, 0.4699000120162964f,   0.4699000120162964f,    0.04439999908208847f,
        -0.4291999936103821f,  0.4699000120162964f,   -0.1923999935388565f,   0.21089999377727509f,
        -0.08879999816417694f, 0.05920000001788139f,  -0.12950000166893005f,  -0.47360000014305115f,
        0.2922999858856201f,   0.4699000120162964f,   0.3625999987125397f,    0.4699000120162964f,
        -0.47360000014305115f, -0.47360000014305115f, -0.007400000002235174f, -0.47360000014305115f,
        -0.4255000054836273f,  -0.47360000014305115f, 0.029600000008940697f,  0.4291999936103821f,
        -0.47360000014305115f, 0.4699000120162964f,   0.19609999656677246f,   0.17389999330043793f,
        -0.20720000565052032f, -0.12210000306367874f, -0.47360000014305115f,  0.05920000001788139f};
    static const float wv[12] = {15, -3, -19, 19, -16, -7, -13, 11, -10, 18, -4, 10};
    static const float bv[3] = {0.04809999838471413f, 0.18129999935626984f, 0.34779998660087585f};
    pc_model *m = pt_model(17);
    pc_error err;
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 2, 3, 3});
    pt_const_f(m, "w", 4, (int64_t[]){3, 2, 2, 1}, wv);
    pt_const_f(m, "b", 1, (int64_t[]){3}, bv);
    pt_const_f(m, "s", 0, NULL, (float[]){1});
    pt_const(m, "z", PC_DTYPE_UINT8, 0, NULL, (uint8_t[]){128});
    pt_node(m, "Conv", "", "x,w,b", "c", NULL);
    pt_node(m, "QuantizeLinear", "", "c,s,z", "q", NULL);
    pt_output(m, "q");
    if (pc_graph_infer_shapes(m->graph, &err) != PC_OK) pt_die("infer", &err);
    pc_data *x = pc_data_new_tensor(PC_DTYPE_FLOAT, 4, (int64_t[]){2, 2, 3, 3}, &err);
    if (!x) pt_die("x", &err);
    memcpy(x->data, xv, sizeof xv);
    run r;
    run_both(m, 1, &x, &r);
    CHECK_OK(r.ort_status, &r.err);
    if (r.ort_status == PC_OK && r.ort.status == PC_ORT_OK) {
        CHECK(((const uint8_t *)r.ref[0]->data)[20] == 110);
        char msg[2048];
        const char *kind;
        pc_prop_outcome v = verdict(m, &r, msg, sizeof msg, &kind);
        if (v == PC_PROP_FAIL) v = pc_ort_explain(m, 1, &x, &r.ort, NULL, msg, sizeof msg, &kind);
        CHECK_MSG(v == PC_PROP_PASS, "ORT gives %u at [1,0,0,2]: %s",
                  (unsigned)((const uint8_t *)r.ort.outputs[0]->data)[20], msg);
    }
    run_free(m, &r);
    pc_data_unref(x);
    pc_model_free(m);
}

/* A missing package or helper is an error naming the path; the real one works again afterwards. */
static void test_missing(void)
{
    pc_error err;
    pc_ort_result r;
    static const uint8_t junk[] = {0};
    CHECK_STATUS(pc_ort_run("/nonexistent/node_modules", junk, 1, 0, NULL, NULL, &r, &err), PC_ERR_IO, &err);
    CHECK_MSG(strstr(err.message, "/nonexistent/node_modules/onnxruntime-node") != NULL, "%s", err.message);
    setenv("PC_ORT_RUN_JS", "/nonexistent/ort_run.js", 1);
    CHECK_STATUS(pc_ort_run(NULL, junk, 1, 0, NULL, NULL, &r, &err), PC_ERR_IO, &err);
    CHECK_MSG(strstr(err.message, "/nonexistent/ort_run.js") != NULL, "%s", err.message);
    unsetenv("PC_ORT_RUN_JS");
    setenv("PC_NODE", "/nonexistent/node", 1);
    CHECK_STATUS(pc_ort_run(NULL, junk, 1, 0, NULL, NULL, &r, &err), PC_ERR_IO, &err);
    CHECK_MSG(strstr(err.message, "/nonexistent/node") != NULL, "%s", err.message);
    unsetenv("PC_NODE");
    CHECK_OK(pc_ort_run(NULL, junk, 1, 0, NULL, NULL, &r, &err), &err);
    CHECK(r.status == PC_ORT_REJECTED);
    pc_ort_result_free(&r);
}

int main(void)
{
    test_quant_ties(); /* needs no ORT */
    char node[] = "command -v node >/dev/null 2>&1";
    char pkg[4096];
    snprintf(pkg, sizeof pkg, "%s/onnxruntime-node", pc_ort_dir(NULL));
    struct stat st;
    if (system(node) != 0 || stat(pkg, &st) != 0) {
        printf("test_oracles_ort: skipped (node or %s missing; ci/deps installs them)\n", pkg);
        return pc_test_finish("test_oracles_ort");
    }
    test_agreement();
    test_refusals();
    test_property();
    test_resize_deviation();
    test_resize_sizes_agree();
    test_resize_float32_rounding();
    test_conv_quant_tie();
    test_fork_sharing(); /* leaves no server running: test_missing needs that */
    test_missing();
    pc_ort_server_stop();
    return pc_test_finish("test_oracles_ort");
}
