/* The rewrite-fired property (properties/prop_rewrite_fired.c) on hand-built models whose guarantee is
 * written by hand: the oracle is the graph itself (a Neg pair prune_simple must remove, or none), not the
 * generator. Also: a near-miss guarantee fails when the near miss is not reported, the guarantees the
 * pattern library writes read back and hold (fired and near-miss ones), a malformed one is a harness error
 * naming the entry, --ep makes the property skip, and the planted neg-neg-skipped fault fails it. */
#include "properties/property.h"
#include "tests/pass_test_util.h"

/* x -> Neg -> Neg -> Relu -> y (with_pair) or x -> Abs -> Relu -> y, with `expect` as the guarantee. */
static pc_case neg_case(bool with_pair, const char *expect)
{
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    if (with_pair) {
        pt_node(m, "Neg", "", "x", "a", NULL);
        pt_node(m, "Neg", "", "a", "b", NULL);
    } else {
        pt_node(m, "Abs", "", "x", "b", NULL);
    }
    pt_node(m, "Relu", "", "b", "y", NULL);
    pt_output(m, "y");
    pc_error err;
    if (expect && pc_model_set_metadata(m, PC_EXPECT_FIRED_KEY, expect, &err) != PC_OK)
        pt_die("pc_model_set_metadata", &err);
    pc_case c = {.model = m, .n_inputs = 1};
    c.inputs = calloc(1, sizeof *c.inputs);
    uint64_t seed = 3;
    c.inputs[0] = pt_random_input(m->graph->inputs[0], &seed);
    c.ep_list = strdup("cpu");
    c.family = "patterns";
    return c;
}

/* The rewrite-fired outcome counted for the case (pass/fail/skip/error), with the failure when there is one.
 */
static pc_prop_outcome check_case(const pc_case *c, const char *ep_override, pc_failure *f)
{
    pc_check_config cc;
    pc_check_config_default(&cc);
    pc_error err;
    CHECK_STATUS(pc_check_config_select(&cc, "numerics,rewrite-fired", &err), PC_OK, &err);
    cc.ep_override = ep_override;
    pc_check_result res;
    CHECK_STATUS(pc_case_check(c, &cc, &res, &err), PC_OK, &err);
    size_t idx = 0;
    while (pc_property_at(idx) != &pc_prop_rewrite_fired)
        idx++;
    pc_prop_outcome o = PC_PROP_OUTCOME_COUNT;
    for (int k = 0; k < PC_PROP_OUTCOME_COUNT; k++)
        if (res.counts[idx][k]) o = (pc_prop_outcome)k;
    if (f) *f = res.failure;
    pc_check_result_free(&res);
    return o;
}

int main(void)
{
    pc_failure f;
    /* the pair is removed once: a guarantee of 1 holds, 2 does not */
    pc_case c = neg_case(true, "prune_simple/neg_neg_removed=1");
    CHECK(check_case(&c, NULL, &f) == PC_PROP_PASS);
    pc_case_free(&c);
    c = neg_case(true, "prune_simple/neg_neg_removed=2");
    CHECK(check_case(&c, NULL, &f) == PC_PROP_FAIL);
    CHECK_MSG(strcmp(f.kind, "neg_neg_removed") == 0 && strstr(f.message, "(1 of 2)"), "%s: %s", f.kind,
              f.message);
    pc_case_free(&c);
    /* a near-miss guarantee: the pair fires, so no near miss of it is reported and the guarantee fails */
    c = neg_case(true, "prune_simple/neg_neg_removed=1 prune_simple/neg_neg_removed~shared=1");
    CHECK(check_case(&c, NULL, &f) == PC_PROP_FAIL);
    CHECK_MSG(strcmp(f.kind, "neg_neg_removed") == 0 &&
                  strstr(f.message, "neg_neg_removed~shared (0 of 1)") &&
                  !strstr(f.message, "neg_neg_removed (1 of 1)"),
              "%s: %s", f.kind, f.message);
    pc_case_free(&c);
    /* no pair: the guarantee cannot hold */
    c = neg_case(false, "prune_simple/neg_neg_removed=1");
    CHECK(check_case(&c, NULL, &f) == PC_PROP_FAIL);
    pc_case_free(&c);
    /* no guarantee: nothing to judge */
    c = neg_case(false, NULL);
    CHECK(check_case(&c, NULL, &f) == PC_PROP_PASS);
    pc_case_free(&c);
    /* another EP list than the case's own: skipped, not judged */
    c = neg_case(false, "prune_simple/neg_neg_removed=1");
    CHECK(check_case(&c, "nhwc,cpu", &f) == PC_PROP_SKIP);
    pc_case_free(&c);
    /* a malformed guarantee is a harness error naming the entry */
    static const char *const bad[] = {"prune_simple/no_such_kind=1",        "prune_simple/neg_neg_removed",
                                      "prune_simple/neg_neg_removed=x",     "prune_simple/neg_neg_removed=1x",
                                      "prune_simple/neg_neg_removed~x=1",   "prune_simple/neg_neg_removed~=1",
                                      "prune_simple/neg_neg_removed~shared"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        c = neg_case(true, bad[i]);
        CHECK(check_case(&c, NULL, &f) == PC_PROP_ERROR);
        CHECK_MSG(strstr(f.message, bad[i]) != NULL, "%s", f.message);
        pc_case_free(&c);
    }
    /* the planted fault: prune_simple stops removing the pair; only rewrite-fired notices */
    pc_error err;
    CHECK_STATUS(pc_fault_enable_list("neg-neg-skipped", &err), PC_OK, &err);
    c = neg_case(true, "prune_simple/neg_neg_removed=1");
    CHECK(check_case(&c, NULL, &f) == PC_PROP_FAIL);
    CHECK(strcmp(f.property, "rewrite-fired") == 0);
    pc_case_free(&c);
    pc_fault_reset();
    /* the pattern library's guarantees read back, and hold, on generated cases */
    uint32_t total = 0, near_total = 0;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        pc_gen_config cfg;
        pc_gen_config_default(&cfg);
        cfg.family = "patterns";
        pc_choices ch;
        pc_choices_init_random(&ch, seed);
        CHECK_STATUS(pc_case_generate(&cfg, &ch, &c, &err), PC_OK, &err);
        pc_expect_fired e;
        bool present;
        CHECK_STATUS(pc_expect_fired_read(c.model, &e, &present, &err), PC_OK, &err);
        for (int k = 0; k < PC_RW_COUNT; k++) {
            total += e.fired[k];
            for (int r = 0; r < PC_MISS_COUNT; r++)
                near_total += e.near[k][r];
        }
        CHECK(check_case(&c, NULL, &f) == PC_PROP_PASS);
        pc_case_free(&c);
        pc_choices_free(&ch);
    }
    CHECK_MSG(total >= 40, "60 patterns cases guarantee only %u rewrites", total);
    CHECK_MSG(near_total >= 5, "60 patterns cases guarantee only %u near misses", near_total);
    return pc_test_finish("test_properties_rewrite_fired");
}
