/* The case runner (properties/check.c): which passes it shows to properties, what "before" and "after" are,
 * the reference-output cache, the first failure naming its pass, stop_after_pass, and the choice sequence
 * contract. */
#include <math.h>

#include "generators/gen.h"
#include "tests/pass_test_util.h"
#include "properties/property.h"
#include "reference/reference.h"
#include "tests/test_util.h"

/* A recording extra property: the passes it saw, and a failure trigger. */
typedef struct seen {
    char passes[64][64];
    int n;
    int finals;
    const char *fail_at; /* FAIL when this pass runs */
    int ref_mismatches;  /* before/after outputs differ on a data-movement pass */
    int ref_errors;
} seen;
static seen log_;

static pc_prop_outcome record_pass(pc_check_ctx *ctx, char *msg, size_t size, const char **kind)
{
    if (log_.n < 64) snprintf(log_.passes[log_.n++], 64, "%s", ctx->pass);
    /* before and after really are the graphs around the pass: Identity is gone only after eliminate_identity
     */
    if (strcmp(ctx->pass, "eliminate_identity") == 0 &&
        (pt_count_op(ctx->before, "Identity") != 1 || pt_count_op(ctx->after, "Identity") != 0)) {
        snprintf(msg, size, "before/after do not bracket eliminate_identity");
        return PC_PROP_FAIL;
    }
    pc_data **a, **b;
    pc_error err;
    if (pc_check_ref_outputs(ctx, ctx->before, &a, &err) != PC_OK ||
        pc_check_ref_outputs(ctx, ctx->after, &b, &err) != PC_OK) {
        log_.ref_errors++;
    } else {
        pc_compare_result r;
        if (pc_data_compare(a[0], b[0], 1e-4, 1e-5, &r) != PC_COMPARE_EQUAL) log_.ref_mismatches++;
    }
    if (log_.fail_at && strcmp(ctx->pass, log_.fail_at) == 0) {
        snprintf(msg, size, "planted failure at %s", ctx->pass);
        *kind = "planted";
        return PC_PROP_FAIL;
    }
    return PC_PROP_PASS;
}

static pc_prop_outcome record_final(pc_check_ctx *ctx, char *msg, size_t size, const char **kind)
{
    (void)kind;
    log_.finals++;
    if (ctx->before != ctx->original || !ctx->is_final) {
        snprintf(msg, size, "final stage sees the wrong graphs");
        return PC_PROP_FAIL;
    }
    return PC_PROP_PASS;
}

static const pc_property recorder = {"recorder", "test", record_pass, record_final};

/* x -> Conv(w) -> BatchNormalization -> Identity -> Relu -> y */
static void build_case(pc_case *c)
{
    memset(c, 0, sizeof *c);
    pc_model *m = pt_model(17);
    int64_t xd[4] = {1, 2, 4, 4}, wd[4] = {3, 2, 3, 3}, cd[1] = {3};
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, xd);
    float w[54], scale[3] = {1.5f, 0.5f, 2}, bias[3] = {0.1f, -0.2f, 0.3f}, mean[3] = {0.2f, 0, -0.1f},
                 var[3] = {1, 2, 0.5f};
    for (int i = 0; i < 54; i++)
        w[i] = (float)((i * 7) % 11 - 5) / 8.0f;
    pt_const_f(m, "w", 4, wd, w);
    pt_const_f(m, "s", 1, cd, scale);
    pt_const_f(m, "b", 1, cd, bias);
    pt_const_f(m, "mu", 1, cd, mean);
    pt_const_f(m, "var", 1, cd, var);
    pt_node(m, "Conv", "", "x,w", "c", NULL);
    pt_node(m, "BatchNormalization", "", "c,s,b,mu,var", "bn", NULL);
    pt_node(m, "Identity", "", "bn", "id", NULL);
    pt_node(m, "Relu", "", "id", "y", NULL);
    pt_output(m, "y");
    pc_error err;
    if (pc_graph_infer_shapes(m->graph, &err) != PC_OK) pt_die("infer", &err);
    c->model = m;
    uint64_t seed = 5;
    c->inputs = calloc(1, sizeof *c->inputs);
    c->inputs[0] = pt_random_input(m->graph->inputs[0], &seed);
    c->n_inputs = 1;
    c->ep_list = strdup("cpu");
    c->family = "hand";
}

static bool saw(const char *pass)
{
    for (int i = 0; i < log_.n; i++)
        if (strcmp(log_.passes[i], pass) == 0) return true;
    return false;
}

static void test_runner(void)
{
    pc_case c;
    build_case(&c);
    pc_check_config cc;
    pc_check_config_default(&cc);
    for (size_t i = 0; i < pc_property_count(); i++)
        cc.enabled[i] = false;
    cc.extra = &recorder;
    pc_check_result res;
    pc_error err;

    memset(&log_, 0, sizeof log_);
    CHECK_STATUS(pc_case_check(&c, &cc, &res, &err), PC_OK, &err);
    CHECK_MSG(!res.failed, "%s", res.failure.message);
    /* only passes that change the graph, plus partition, are shown */
    CHECK(saw("eliminate_identity"));
    CHECK(saw("fuse_conv_bn"));
    CHECK(saw("partition"));
    CHECK(!saw("eliminate_dropout"));
    CHECK(log_.finals == 1);
    CHECK(log_.ref_errors == 0);
    CHECK(log_.ref_mismatches == 0);
    CHECK(res.stats.passes_changed == (uint32_t)log_.n);
    CHECK(res.counts[pc_property_count()][PC_PROP_PASS] == (uint32_t)log_.n + 1);
    /* reference runs are cached: at most one per changed pass plus the first "before" */
    CHECK_MSG(res.stats.ref_runs <= (uint32_t)log_.n + 1, "%u runs for %d passes", res.stats.ref_runs,
              log_.n);
    pc_check_result_free(&res);

    /* a planted failure names its pass and stops the case; the graphs around it are kept */
    memset(&log_, 0, sizeof log_);
    log_.fail_at = "fuse_conv_bn";
    CHECK_STATUS(pc_case_check(&c, &cc, &res, &err), PC_OK, &err);
    CHECK(res.failed);
    CHECK(strcmp(res.failure.property, "recorder") == 0);
    CHECK(strcmp(res.failure.pass, "fuse_conv_bn") == 0);
    CHECK(strcmp(res.failure.kind, "planted") == 0);
    CHECK(log_.finals == 0);
    CHECK(!saw("partition"));
    CHECK(res.before_bytes && res.after_bytes);
    if (res.before_bytes && res.after_bytes) {
        pc_model *b = NULL, *a = NULL;
        CHECK_STATUS(pc_model_load_bytes(res.before_bytes, res.before_size, NULL, &b, &err), PC_OK, &err);
        CHECK_STATUS(pc_model_load_bytes(res.after_bytes, res.after_size, NULL, &a, &err), PC_OK, &err);
        if (a && b) {
            CHECK(pt_count_op(b, "BatchNormalization") == 1);
            CHECK(pt_count_op(a, "BatchNormalization") == 0);
        }
        pc_model_free(a);
        pc_model_free(b);
    }
    char sig[128];
    pc_failure_signature(&res.failure, sig, sizeof sig);
    CHECK(strcmp(sig, "recorder@fuse_conv_bn/planted") == 0);
    pc_failure same = res.failure;
    CHECK(pc_failure_same(&same, &res.failure));
    snprintf(same.pass, sizeof same.pass, "partition");
    CHECK(!pc_failure_same(&same, &res.failure));
    pc_check_result_free(&res);

    /* stop_after_pass: nothing after it is shown */
    memset(&log_, 0, sizeof log_);
    cc.stop_after_pass = "eliminate_identity";
    CHECK_STATUS(pc_case_check(&c, &cc, &res, &err), PC_OK, &err);
    CHECK(!res.failed);
    CHECK(log_.n == 1 && saw("eliminate_identity"));
    CHECK(log_.finals == 0);
    pc_check_result_free(&res);
    cc.stop_after_pass = NULL;

    /* a bad EP list is a status (the case cannot be checked), not a failure */
    cc.ep_override = "nosuchep";
    CHECK_STATUS(pc_case_check(&c, &cc, &res, &err), PC_ERR_USAGE, &err);
    cc.ep_override = NULL;

    /* property selection */
    CHECK_STATUS(pc_check_config_select(&cc, "numerics,validity", &err), PC_OK, &err);
    CHECK(cc.enabled[0] && !cc.enabled[1]);
    CHECK_STATUS(pc_check_config_select(&cc, "numerics,bogus", &err), PC_ERR_USAGE, &err);
    CHECK(strstr(err.message, "bogus") != NULL);
    pc_case_free(&c);
}

static void test_choices(void)
{
    pc_choices a;
    pc_choices_init_random(&a, 42);
    uint32_t w[3] = {1, 5, 10};
    uint32_t drawn[5] = {pc_draw(&a, 10), (uint32_t)pc_draw_range(&a, 3, 9), pc_draw_bool(&a, 50),
                         pc_draw_weighted(&a, w, 3), pc_draw(&a, 1)};
    CHECK(a.n == 5);
    CHECK(drawn[0] < 10 && drawn[1] >= 3 && drawn[1] <= 9 && drawn[4] == 0);
    /* replay gives the same values */
    pc_choices b;
    pc_choices_init_replay(&b, a.values, a.n);
    CHECK(pc_draw(&b, 10) == drawn[0]);
    CHECK((uint32_t)pc_draw_range(&b, 3, 9) == drawn[1]);
    CHECK(pc_draw_bool(&b, 50) == (drawn[2] != 0));
    CHECK(pc_draw_weighted(&b, w, 3) == drawn[3]);
    CHECK(pc_draw(&b, 1) == 0);
    /* past the end: zeros, i.e. the simplest choice */
    CHECK(pc_draw(&b, 100) == 0 && pc_draw_range(&b, -2, 5) == -2 && !pc_draw_bool(&b, 99));
    /* out-of-range replayed values are reduced */
    uint32_t big[1] = {17};
    pc_choices c;
    pc_choices_init_replay(&c, big, 1);
    CHECK(pc_draw(&c, 5) == 2);
    /* text form round trip and errors */
    char *text = pc_choices_format(a.values, a.n);
    uint32_t *back;
    size_t n;
    pc_error err;
    CHECK_STATUS(pc_choices_parse(text, &back, &n, &err), PC_OK, &err);
    CHECK(n == a.n && memcmp(back, a.values, n * sizeof *back) == 0);
    free(back);
    free(text);
    CHECK_STATUS(pc_choices_parse("1 2 x", &back, &n, &err), PC_ERR_USAGE, &err);
    CHECK(strstr(err.message, "token 3") != NULL);
    CHECK_STATUS(pc_choices_parse("99999999999", &back, &n, &err), PC_ERR_USAGE, &err);
    pc_choices_free(&a);
    pc_choices_free(&b);
    pc_choices_free(&c);
}

/* Every family: generation is a pure function of the choices, and the all-zero sequence is one node. */
static void test_families_contract(void)
{
    for (size_t f = 0; f < pc_gen_family_count(); f++) {
        const pc_gen_family *fam = pc_gen_family_at(f);
        pc_gen_config cfg;
        pc_gen_config_default(&cfg);
        cfg.family = fam->name;
        pc_error err;
        pc_choices z;
        pc_choices_init_replay(&z, NULL, 0);
        pc_case c;
        pc_status st = pc_case_generate(&cfg, &z, &c, &err);
        if (st == PC_ERR_UNSUPPORTED) { /* a family not built yet */
            printf("family %s: not built (%s)\n", fam->name, err.message);
            pc_choices_free(&z);
            continue;
        }
        CHECK_MSG(st == PC_OK, "%s: %s", fam->name, err.message);
        if (st == PC_OK) {
            /* one node, except the pattern library: its first unit's canonical form, Neg(Neg(x)) -> Relu,
             * which guarantees one neg_neg_removed */
            bool patterns = strcmp(fam->name, "patterns") == 0;
            CHECK_MSG(c.model->graph->n_nodes == (patterns ? 3u : 1u),
                      "family %s: all-zero choices gave %u nodes", fam->name, c.model->graph->n_nodes);
            const char *want = patterns ? "prune_simple/neg_neg_removed=1" : NULL;
            const char *got = pc_model_metadata(c.model, PC_EXPECT_FIRED_KEY);
            CHECK_MSG(want ? got && strcmp(got, want) == 0 : !got, "family %s: rewrite guarantees '%s'",
                      fam->name, got ? got : "(none)");
            pc_case_free(&c);
        }
        pc_choices_free(&z);
        for (uint64_t seed = 1; seed <= 20; seed++) {
            pc_choices a, b;
            pc_choices_init_random(&a, seed);
            pc_case ca, cb;
            if (pc_case_generate(&cfg, &a, &ca, &err) != PC_OK) {
                CHECK_MSG(0, "family %s seed %llu: %s", fam->name, (unsigned long long)seed, err.message);
                pc_choices_free(&a);
                continue;
            }
            pc_choices_init_replay(&b, a.values, a.n);
            CHECK_STATUS(pc_case_generate(&cfg, &b, &cb, &err), PC_OK, &err);
            uint8_t *ba, *bb;
            size_t na, nb;
            CHECK_STATUS(pc_model_save_bytes(ca.model, &ba, &na, &err), PC_OK, &err);
            CHECK_STATUS(pc_model_save_bytes(cb.model, &bb, &nb, &err), PC_OK, &err);
            CHECK_MSG(na == nb && memcmp(ba, bb, na) == 0, "family %s seed %llu: replay differs", fam->name,
                      (unsigned long long)seed);
            CHECK(b.n == a.n);
            CHECK(ca.n_inputs == cb.n_inputs);
            for (uint32_t i = 0; i < ca.n_inputs && i < cb.n_inputs; i++)
                CHECK(ca.inputs[i]->n_bytes == cb.inputs[i]->n_bytes &&
                      memcmp(ca.inputs[i]->data, cb.inputs[i]->data, ca.inputs[i]->n_bytes) == 0);
            free(ba);
            free(bb);
            pc_case_free(&ca);
            pc_case_free(&cb);
            pc_choices_free(&a);
            pc_choices_free(&b);
        }
    }
    pc_gen_config cfg;
    pc_gen_config_default(&cfg);
    cfg.family = "nosuch";
    pc_choices z;
    pc_choices_init_replay(&z, NULL, 0);
    pc_case c;
    pc_error err;
    CHECK_STATUS(pc_case_generate(&cfg, &z, &c, &err), PC_ERR_USAGE, &err);
    CHECK(strstr(err.message, "nosuch") != NULL);
    pc_choices_free(&z);
}

int main(void)
{
    test_choices();
    test_runner();
    test_families_contract();
    return pc_test_finish("test_properties_check");
}
