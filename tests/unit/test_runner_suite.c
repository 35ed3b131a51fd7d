/* The suite runner (properties/runner/suite.c, isolate.c, failure_db.c): case seeds against splitmix64's
 * published vectors, shard partitions, --jobs independence, crashes and hangs in a child reported as
 * failures, the failure database round trip and replay-first, and pc_case_check_isolated against the
 * in-process check.
 *
 * Most runs use synthetic cases (the runner's generate/check seams): case i draws one value v in [0, 1000);
 * the synthetic property fails when v % 7 == 0, with pass "p<v % 3>". The expected failing cases are computed
 * here from splitmix64 directly, not from the runner. */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/pass_test_util.h"
#include "properties/runner/repro.h"
#include "properties/runner/suite.h"
#include "tests/test_util.h"

/* ---------------------------------------------------------------------------------------------------------------
 * Synthetic cases.
 */
static bool synthetic_fixed; /* set before a fork: the children see every failure fixed */

static pc_status synth_generate(const pc_gen_config *cfg, pc_choices *ch, pc_case *out, pc_error *err)
{
    (void)cfg;
    memset(out, 0, sizeof *out);
    uint32_t v = pc_draw(ch, 1000);
    char buf[32];
    snprintf(buf, sizeof buf, "%u", v);
    out->ep_list = strdup(buf); /* the synthetic case carries its value here */
    if (!out->ep_list) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    return PC_OK;
}

/* v % 7 == 0 fails; v % 97 == 1 crashes (abort); v % 89 == 2 hangs — the last two only when `misbehave` */
static bool misbehave;

static pc_status synth_check(const pc_case *c, const pc_check_config *cfg, pc_check_result *res,
                             pc_error *err)
{
    (void)cfg;
    (void)err;
    memset(res, 0, sizeof *res);
    unsigned v = (unsigned)strtoul(c->ep_list, NULL, 10);
    if (misbehave && v % 97 == 1) {
        signal(SIGABRT, SIG_DFL);
        abort();
    }
    if (misbehave && v % 89 == 2)
        for (;;)
            sleep(1);
    res->stats.transpose_oracle_cases = 1;
    res->stats.transpose_at_optimum = v % 2;
    /* rewrite coverage: events (3 per case), counted by the suite as cases */
    res->rewrites.fired[PC_RW_CONV_BN_FOLDED] = v % 5 == 0 ? 3 : 0;
    if (v % 3 == 0) {
        res->rewrites.near[PC_RW_GELU_FUSED] = 2;
        res->rewrites.near_reason[PC_RW_GELU_FUSED][PC_MISS_ANNOTATION] = 2;
    }
    if (v % 7 == 0 && !synthetic_fixed) {
        res->counts[0][PC_PROP_FAIL] = 1;
        res->failed = true;
        snprintf(res->failure.property, sizeof res->failure.property, "%s", pc_property_at(0)->name);
        snprintf(res->failure.pass, sizeof res->failure.pass, "p%u", v % 3);
        res->failure.outcome = PC_PROP_FAIL;
        snprintf(res->failure.message, sizeof res->failure.message, "synthetic failure, value %u", v);
    } else {
        res->counts[0][PC_PROP_PASS] = 1;
    }
    return PC_OK;
}

/* The reference splitmix64 (Vigna): state += gamma, then the output mix. */
static uint64_t ref_splitmix_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The value synthetic case i of run seed `seed` draws: the case seed is output i of splitmix64(seed), and the
 * choice sequence's first fresh draw is splitmix64(case seed) % bound (generators/choices.c). */
static unsigned ref_value(uint64_t seed, uint64_t index)
{
    uint64_t s = seed, out = 0;
    for (uint64_t k = 0; k <= index; k++)
        out = ref_splitmix_next(&s);
    uint64_t cs = out;
    return (unsigned)(ref_splitmix_next(&cs) % 1000);
}

static void synth_options(pc_suite_options *o, uint64_t n, uint32_t jobs)
{
    pc_suite_options_default(o);
    o->seed = 42;
    o->n_cases = n;
    o->jobs = jobs;
    o->shrink = false;
    o->case_timeout = 30;
    o->generate = synth_generate;
    o->check_fn = synth_check;
}

/* The report as JSON without timing, in memory. */
static char *json_of(const pc_suite_options *o, const pc_suite_report *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    pc_suite_write_json(f, o, r, false);
    fclose(f);
    return buf;
}

static char *junit_of(const pc_suite_options *o, const pc_suite_report *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    pc_suite_write_junit(f, o, r, false);
    fclose(f);
    return buf;
}

static bool run(const pc_suite_options *o, pc_suite_report *r)
{
    pc_error err;
    pc_status st = pc_suite_run(o, r, &err);
    CHECK_MSG(st == PC_OK, "pc_suite_run: %s", err.message);
    return st == PC_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Tests.
 */
static void test_case_seeds(void)
{
    /* published splitmix64 outputs: seed 0 -> 0xe220a8397b1dcdaf; seed 1234567 -> these five */
    CHECK(pc_suite_case_seed(0, 0) == 0xe220a8397b1dcdafull);
    static const uint64_t v1234567[] = {6457827717110365317ull, 3203168211198807973ull,
                                        9817491932198370423ull, 4593380528125082431ull,
                                        16408922859458223821ull};
    for (uint64_t i = 0; i < 5; i++)
        CHECK(pc_suite_case_seed(1234567, i) == v1234567[i]);
    /* every family gets cases, none much more than its share */
    uint32_t hist[6] = {0};
    for (uint64_t i = 0; i < 6000; i++)
        hist[pc_suite_case_family(pc_suite_case_seed(7, i), 6)]++;
    for (int k = 0; k < 6; k++)
        CHECK_MSG(hist[k] > 800 && hist[k] < 1200, "family %d got %u of 6000", k, hist[k]);
    /* shards partition the indices */
    for (uint64_t i = 0; i < 100; i++) {
        int owners = 0;
        for (uint32_t s = 0; s < 3; s++)
            owners += pc_suite_in_shard(i, s, 3);
        CHECK(owners == 1);
    }
}

static void test_synthetic_run_and_jobs(void)
{
    enum { N = 120 };
    pc_suite_options o1, o3;
    synth_options(&o1, N, 1);
    synth_options(&o3, N, 3);
    pc_suite_report r1, r3;
    if (!run(&o1, &r1)) return;
    if (!run(&o3, &r3)) {
        pc_suite_report_free(&r1);
        return;
    }
    /* the failing cases are exactly those the reference computation predicts, in index order */
    size_t expected = 0;
    for (uint64_t i = 0; i < N; i++)
        expected += ref_value(42, i) % 7 == 0;
    CHECK_MSG(r1.failed_cases == expected, "%llu failed, expected %zu", (unsigned long long)r1.failed_cases,
              expected);
    CHECK(r1.cases == N);
    CHECK(r1.counts[0][PC_PROP_FAIL] == expected && r1.counts[0][PC_PROP_PASS] == N - expected);
    CHECK(r1.property_failed_cases[0] == expected);
    size_t k = 0;
    for (uint64_t i = 0; i < N; i++)
        if (ref_value(42, i) % 7 == 0) {
            CHECK_MSG(k < r1.n_failed && r1.failed[k].index == i, "failure %zu should be case %llu", k,
                      (unsigned long long)i);
            k++;
        }
    /* signatures: one per pass name p0/p1/p2 that occurs; each representative is its smallest failing case */
    for (size_t s = 0; s < r1.n_signatures; s++) {
        const pc_suite_failure *rep = &r1.signatures[s].rep;
        uint64_t first = UINT64_MAX;
        for (uint64_t i = 0; i < N && first == UINT64_MAX; i++) {
            unsigned v = ref_value(42, i);
            char pass[8];
            snprintf(pass, sizeof pass, "p%u", v % 3);
            if (v % 7 == 0 && strcmp(pass, rep->failure.pass) == 0) first = i;
        }
        CHECK_MSG(rep->index == first, "signature %s: representative case %llu, expected %llu",
                  r1.signatures[s].signature, (unsigned long long)rep->index, (unsigned long long)first);
        CHECK(rep->have_choices && rep->n_choices == 1 && rep->choices[0] == ref_value(42, rep->index));
    }
    /* transpose-optimum sums: odd values */
    uint64_t odd = 0;
    for (uint64_t i = 0; i < N; i++)
        odd += ref_value(42, i) % 2;
    CHECK(r1.transpose_oracle_cases == N && r1.transpose_at_optimum == odd);
    /* rewrite coverage: case counts (not events), carried from the forked children */
    uint64_t by5 = 0, by3 = 0;
    for (uint64_t i = 0; i < N; i++) {
        by5 += ref_value(42, i) % 5 == 0;
        by3 += ref_value(42, i) % 3 == 0;
    }
    CHECK(r1.rw_fired_cases[PC_RW_CONV_BN_FOLDED] == by5 && r1.rw_near_cases[PC_RW_CONV_BN_FOLDED] == 0);
    CHECK(r1.rw_near_cases[PC_RW_GELU_FUSED] == by3 && r1.rw_fired_cases[PC_RW_GELU_FUSED] == 0);
    CHECK(r1.rw_near_reason_cases[PC_RW_GELU_FUSED][PC_MISS_ANNOTATION] == by3);
    CHECK(pc_suite_rewrite_below(&r1, PC_RW_CONV_BN_FOLDED) && pc_suite_rewrite_below(&r1, PC_RW_GELU_FUSED));
    /* --jobs does not change the report */
    char *j1 = json_of(&o1, &r1), *j3 = json_of(&o3, &r3);
    CHECK(j1 && j3 && strcmp(j1, j3) == 0);
    char *x1 = junit_of(&o1, &r1), *x3 = junit_of(&o3, &r3);
    CHECK(x1 && x3 && strcmp(x1, x3) == 0);
    CHECK(j1 && strstr(j1, "\"failed_cases\": ") != NULL);
    /* the JSON's rewrite_coverage: thresholds, and one row per kind with its case counts */
    char want[256];
    snprintf(want, sizeof want,
             "{\"kind\": \"fuse_conv_bn/conv_bn_folded\", \"pass\": \"fuse_conv_bn\", \"fired_cases\": %llu, "
             "\"near_miss_cases\": 0,",
             (unsigned long long)by5);
    CHECK(j1 && strstr(j1, "\"rewrite_coverage\": {\"min_fired_cases\": 50, \"min_near_miss_cases\": 20,"));
    CHECK_MSG(j1 && strstr(j1, want), "JSON lacks %s", want);
    snprintf(want, sizeof want, "\"near_miss_cases\": %llu, \"near_miss_reasons\": {\"constant\": 0",
             (unsigned long long)by3);
    CHECK_MSG(j1 && strstr(j1, want), "JSON lacks %s", want);
    size_t rows = 0;
    for (const char *p = j1 ? strstr(j1, "\"rewrite_coverage\"") : NULL;
         p && (p = strstr(p + 1, "{\"kind\": "));)
        rows++;
    CHECK_MSG(rows == PC_RW_COUNT, "%zu coverage rows, %d kinds", rows, (int)PC_RW_COUNT);
    /* the summary's coverage section flags both */
    char *sum = NULL;
    size_t sum_len = 0;
    FILE *sf = open_memstream(&sum, &sum_len);
    if (sf) {
        pc_suite_print_coverage(sf, &r1);
        fclose(sf);
    }
    CHECK(sum && strstr(sum, "fuse_conv_bn/conv_bn_folded") && strstr(sum, "<< fired near-miss") &&
          strstr(sum, "kinds below 50 fired / 20 near-miss cases"));
    free(sum);
    free(j1);
    free(j3);
    free(x1);
    free(x3);

    /* shards: the union of 1/3, 2/3 and 3/3 is the whole run */
    uint64_t cases = 0, failed = 0;
    bool seen[N] = {false};
    bool disjoint = true;
    for (uint32_t s = 0; s < 3; s++) {
        pc_suite_options os;
        synth_options(&os, N, 2);
        os.shard_index = s;
        os.shard_count = 3;
        pc_suite_report rs;
        if (!run(&os, &rs)) continue;
        cases += rs.cases;
        failed += rs.failed_cases;
        for (size_t i = 0; i < rs.n_failed; i++) {
            uint64_t idx = rs.failed[i].index;
            CHECK(idx % 3 == s);
            if (idx < N) {
                disjoint &= !seen[idx];
                seen[idx] = true;
            }
        }
        pc_suite_report_free(&rs);
    }
    CHECK(cases == N && failed == r1.failed_cases && disjoint);
    for (size_t i = 0; i < r1.n_failed; i++)
        CHECK(r1.failed[i].index < N && seen[r1.failed[i].index]);
    pc_suite_report_free(&r1);
    pc_suite_report_free(&r3);
}

static const pc_suite_failed_case *find_failed(const pc_suite_report *r, uint64_t index)
{
    for (size_t i = 0; i < r->n_failed; i++)
        if (r->failed[i].index == index && !r->failed[i].replayed) return &r->failed[i];
    return NULL;
}

static void test_crash_and_hang(void)
{
    enum { N = 400 };
    /* real misbehaviour in the child: abort() and an endless loop */
    pc_suite_options o;
    synth_options(&o, N, 2);
    o.case_timeout = 1;
    misbehave = true;
    pc_suite_report r;
    bool ok = run(&o, &r);
    misbehave = false;
    if (!ok) return;
    CHECK(r.cases == N);
    size_t crashes = 0, hangs = 0;
    for (uint64_t i = 0; i < N; i++) {
        unsigned v = ref_value(42, i);
        bool crash = v % 97 == 1, hang = !crash && v % 89 == 2;
        const pc_suite_failed_case *c = find_failed(&r, i);
        if (!crash && !hang) {
            CHECK_MSG((c != NULL) == (v % 7 == 0), "case %llu (value %u)", (unsigned long long)i, v);
            continue;
        }
        CHECK_MSG(c != NULL, "case %llu (value %u) should have failed", (unsigned long long)i, v);
        if (!c) continue;
        const pc_failure *f = &r.signatures[c->signature].rep.failure;
        if (crash) {
            crashes++;
            CHECK_MSG(strcmp(f->property, "crash") == 0 && strcmp(f->kind, "SIGABRT") == 0,
                      "case %llu: %s/%s", (unsigned long long)i, f->property, f->kind);
            CHECK(f->pass[0] == '\0'); /* the check died before finishing a pass: "" */
        } else {
            hangs++;
            CHECK_MSG(strcmp(f->property, "timeout") == 0, "case %llu: %s", (unsigned long long)i,
                      f->property);
        }
    }
    CHECK_MSG(crashes > 0 && hangs > 0, "the seed gives %zu crashes and %zu hangs; pick another", crashes,
              hangs);
    CHECK(r.other_failed_cases == crashes + hangs);
    pc_suite_report_free(&r);

#ifdef PC_DEBUG_CHECKS
    /* the test hooks: case 3 dies of SIGSEGV, case 5 hangs */
    setenv("PC_SUITE_TEST_CRASH", "3", 1);
    setenv("PC_SUITE_TEST_HANG", "5", 1);
    synth_options(&o, 8, 2);
    o.case_timeout = 1;
    ok = run(&o, &r);
    unsetenv("PC_SUITE_TEST_CRASH");
    unsetenv("PC_SUITE_TEST_HANG");
    if (!ok) return;
    const pc_suite_failed_case *c3 = find_failed(&r, 3), *c5 = find_failed(&r, 5);
    CHECK(c3 && strcmp(r.signatures[c3->signature].signature, "crash@-/SIGSEGV") == 0);
    CHECK(c5 && strcmp(r.signatures[c5->signature].rep.failure.property, "timeout") == 0);
    /* the choices came back before the crash: the case can be replayed and shrunk */
    CHECK(c3 && r.signatures[c3->signature].rep.have_choices);
    pc_suite_report_free(&r);
#endif
}

static int rm_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            rm_tree(sub);
        }
        closedir(d);
        return rmdir(path);
    }
    return unlink(path);
}

static size_t count_case_files(const char *dir)
{
    size_t n = 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        n += l > 5 && strcmp(e->d_name + l - 5, ".case") == 0;
    }
    closedir(d);
    return n;
}

static void test_failure_db(void)
{
    char root[] = "/tmp/pc_test_suite_XXXXXX";
    if (!mkdtemp(root)) {
        CHECK_MSG(false, "mkdtemp failed");
        return;
    }
    char db[256], file[300];
    snprintf(db, sizeof db, "%s/out/.db", root);

    /* one entry: write, read back equal, content-addressed name */
    uint32_t ch[] = {3, 0, 1, 4000000000u};
    pc_db_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.signature, sizeof e.signature, "numerics@fuse_conv_bn/nan-position");
    pc_gen_config_default(&e.gen);
    e.gen.family = pc_gen_family_at(pc_gen_family_count() - 1)->name;
    e.gen.max_nodes = 7;
    e.gen.annotate = true;
    e.seed = 99;
    e.case_index = 12345;
    e.inject = (char *)"concat-wrong-axis";
    e.choices = ch;
    e.n_choices = 4;
    pc_error err;
    CHECK_OK(pc_failure_db_save(db, &e, &err), &err);
    CHECK(strlen(e.name) == 16);
    snprintf(file, sizeof file, "%s/%s.case", db, e.name);
    pc_db_entry back;
    CHECK_OK(pc_db_entry_read_file(file, &back, &err), &err);
    CHECK(strcmp(back.signature, e.signature) == 0 && strcmp(back.gen.family, e.gen.family) == 0);
    CHECK(back.gen.max_nodes == 7 && back.gen.annotate && !back.gen.random_eps && back.seed == 99);
    CHECK(back.case_index == 12345 && back.inject && strcmp(back.inject, "concat-wrong-axis") == 0);
    CHECK(back.n_choices == 4 && memcmp(back.choices, ch, sizeof ch) == 0);
    CHECK(strcmp(back.name, e.name) == 0);
    /* the name depends on config and choices, not on the signature */
    snprintf(back.signature, sizeof back.signature, "other@x");
    char name_a[17];
    snprintf(name_a, sizeof name_a, "%016llx", (unsigned long long)pc_db_entry_hash(&back));
    CHECK(strcmp(name_a, e.name) == 0);
    back.choices[1] = 1;
    CHECK(pc_db_entry_hash(&back) != pc_db_entry_hash(&e));
    pc_db_entry_free(&back);
    /* a damaged entry is skipped and counted, not fatal */
    snprintf(file, sizeof file, "%s/0000000000000bad.case", db);
    FILE *f = fopen(file, "w");
    if (f) {
        fputs("passcheck-failure 1\nfamily no-such-family\nchoices 1\n", f);
        fclose(f);
    }
    pc_db_entry *all = NULL;
    size_t n = 0, n_bad = 0;
    pc_error bad;
    CHECK_OK(pc_failure_db_load(db, &all, &n, &n_bad, &bad, &err), &err);
    CHECK(n == 1 && n_bad == 1 && strstr(bad.message, "no-such-family") && strstr(bad.message, ":2:"));
    pc_db_entries_free(all, n);
    unlink(file);
    CHECK_OK(pc_failure_db_remove(db, e.name, &err), &err);
    CHECK(count_case_files(db) == 0);

    /* a run saves one entry per signature; the next run replays them first */
    pc_suite_options o;
    synth_options(&o, 60, 2);
    o.db_dir = db;
    pc_suite_report r;
    if (!run(&o, &r)) goto out;
    size_t sigs = r.n_signatures;
    CHECK(sigs > 0 && r.db_saved == sigs && count_case_files(db) == sigs);
    for (size_t s = 0; s < r.n_signatures; s++)
        CHECK(strlen(r.signatures[s].rep.db_name) == 16);
    pc_suite_report_free(&r);

    synth_options(&o, 60, 2);
    o.db_dir = db;
    if (!run(&o, &r)) goto out;
    CHECK(r.replayed == sigs && r.replay_still_failing == sigs && r.replay_removed == 0);
    CHECK(r.n_failed > 0 && r.failed[0].replayed); /* replays come first */
    /* the replayed entries are their signatures' representatives: no new entries */
    CHECK(r.db_saved == 0 && count_case_files(db) == sigs);
    for (size_t s = 0; s < r.n_signatures; s++)
        CHECK(r.signatures[s].rep.replayed);
    pc_suite_report_free(&r);

    /* --replay is read-only: a fixed failure is reported passing but stays */
    synthetic_fixed = true;
    synth_options(&o, 60, 1);
    o.replay_dir = db;
    o.db_dir = db;
    if (!run(&o, &r)) goto out;
    CHECK(r.replayed == sigs && r.replay_still_failing == 0 && r.cases == 0 && count_case_files(db) == sigs);
    pc_suite_report_free(&r);

    /* fixed: the replay passes and removes every entry */
    synth_options(&o, 0, 2);
    o.db_dir = db;
    if (!run(&o, &r)) goto out;
    CHECK(r.replayed == sigs && r.replay_removed == sigs && r.n_failed == 0 && count_case_files(db) == 0);
    pc_suite_report_free(&r);
out:
    synthetic_fixed = false;
    rm_tree(root);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Replaying saved repros: a model the choices do not regenerate.
 *
 * The oracle is structural and independent of the runner: the check fails ("numerics@relu-neg") exactly when
 * the case's model holds a Relu whose output feeds a Neg and its first input element is the saved 0.625. The
 * saved repro.onnx is such a model; the repro's choices are empty, which the generator turns into a one-node
 * graph (checked below), so a replay that regenerates from the choices passes and a replay of repro.onnx
 * fails. With `want_settings` the check also requires the settings recorded in case.txt (level 1,
 * numerics+validity only, the first planted fault on): any difference is another kind, so another signature.
 */
static bool relu_neg_fixed, want_settings;

static bool has_relu_neg(const pc_model *m)
{
    if (!m || !m->graph) return false;
    for (const pc_node *n = m->graph->first; n; n = n->next) {
        if (strcmp(n->op_type, "Relu") != 0 || !n->outputs[0]) continue;
        for (uint32_t u = 0; u < n->outputs[0]->n_consumers; u++)
            if (strcmp(n->outputs[0]->consumers[u].node->op_type, "Neg") == 0) return true;
    }
    return false;
}

static pc_status relu_neg_check(const pc_case *c, const pc_check_config *cfg, pc_check_result *res,
                                pc_error *err)
{
    (void)err;
    memset(res, 0, sizeof res[0]);
    bool fails = !relu_neg_fixed && has_relu_neg(c->model) && c->n_inputs == 1 && c->inputs[0] &&
                 c->inputs[0]->dtype == PC_DTYPE_FLOAT && ((const float *)c->inputs[0]->data)[0] == 0.625f;
    if (!fails) {
        res->counts[0][PC_PROP_PASS] = 1;
        return PC_OK;
    }
    const char *kind = "";
    if (want_settings) {
        size_t n_on = 0;
        bool validity = false;
        for (size_t i = 0; i < pc_property_count() && i < PC_MAX_PROPERTIES; i++) {
            n_on += cfg->enabled[i];
            validity |= cfg->enabled[i] && strcmp(pc_property_at(i)->name, "validity") == 0;
        }
        bool props = n_on == 2 && cfg->enabled[0] && validity;
        if (cfg->level != 1 || !props || !pc_fault_active((pc_fault)0)) kind = "settings-differ";
    }
    res->counts[0][PC_PROP_FAIL] = 1;
    res->failed = true;
    snprintf(res->failure.property, sizeof res->failure.property, "%s", pc_property_at(0)->name);
    snprintf(res->failure.pass, sizeof res->failure.pass, "relu-neg");
    snprintf(res->failure.kind, sizeof res->failure.kind, "%s", kind);
    res->failure.outcome = PC_PROP_FAIL;
    snprintf(res->failure.message, sizeof res->failure.message, "Relu feeds Neg");
    return PC_OK;
}

/* x[1,3] -> Relu -> Neg -> y, x[0] = 0.625: the "graph-shrunk" repro. */
static void relu_neg_result(pc_shrink_result *r)
{
    memset(r, 0, sizeof *r);
    pc_error err;
    r->kase.model = pt_model(17);
    pt_input(r->kase.model, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){1, 3});
    pt_node(r->kase.model, "Relu", "", "x", "r", NULL);
    pt_node(r->kase.model, "Neg", "", "r", "y", NULL);
    pt_output(r->kase.model, "y");
    r->kase.inputs = calloc(1, sizeof *r->kase.inputs);
    r->kase.inputs[0] = pc_data_new_tensor(PC_DTYPE_FLOAT, 2, (int64_t[]){1, 3}, &err);
    if (!r->kase.inputs || !r->kase.inputs[0]) pt_die("input", &err);
    r->kase.n_inputs = 1;
    float *x = r->kase.inputs[0]->data;
    x[0] = 0.625f, x[1] = -1.0f, x[2] = 2.0f;
    r->kase.ep_list = strdup("cpu");
    r->kase.family = "float";
    r->graph_edited = true; /* the choices (none) regenerate something else */
    r->check.failed = true;
    snprintf(r->check.failure.property, sizeof r->check.failure.property, "%s", pc_property_at(0)->name);
    snprintf(r->check.failure.pass, sizeof r->check.failure.pass, "relu-neg");
    r->check.failure.outcome = PC_PROP_FAIL;
    snprintf(r->check.failure.message, sizeof r->check.failure.message, "Relu feeds Neg");
}

static void relu_neg_free(pc_shrink_result *r)
{
    pc_case_free(&r->kase);
    free(r->choices);
    pc_check_result_free(&r->check);
}

static bool dir_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static void test_replay_saved_repro(void)
{
    char root[] = "/tmp/pc_test_replay_XXXXXX";
    if (!mkdtemp(root)) {
        CHECK_MSG(false, "mkdtemp failed");
        return;
    }
    pc_error err;
    /* the precondition that makes this test able to fail: the empty choices regenerate no Relu -> Neg */
    pc_gen_config gen;
    pc_gen_config_default(&gen);
    gen.family = "float";
    pc_choices ch;
    pc_choices_init_replay(&ch, NULL, 0);
    pc_case regen;
    CHECK_OK(pc_case_generate(&gen, &ch, &regen, &err), &err);
    CHECK_MSG(!has_relu_neg(regen.model), "the all-zero float case should not hold Relu -> Neg");
    pc_case_free(&regen);
    pc_choices_free(&ch);

    /* a repro folder with case.txt settings: level 1, numerics+validity, the first fault */
    pc_shrink_result sr;
    relu_neg_result(&sr);
    pc_check_config rec;
    pc_check_config_default(&rec);
    char props[96];
    snprintf(props, sizeof props, "%s,validity", pc_property_at(0)->name);
    CHECK_OK(pc_check_config_select(&rec, props, &err), &err);
    rec.level = 1;
    pc_repro_info info = {.seed = 3,
                          .case_index = 17,
                          .gen = &gen,
                          .check = &rec,
                          .inject = pc_fault_name((pc_fault)0),
                          .original = &sr.check.failure};
    char folder[256], out[256];
    snprintf(folder, sizeof folder, "%s/repro-a", root);
    snprintf(out, sizeof out, "%s/out", root);
    CHECK_OK(pc_repro_write(folder, &sr, &info, &err), &err);

    pc_suite_options o;
    pc_suite_options_default(&o);
    o.jobs = 2;
    o.shrink = false;
    o.case_timeout = 30;
    o.check_fn = relu_neg_check;
    o.replay_dir = folder;
    o.out_dir = out;
    want_settings = true;
    pc_suite_report r;
    if (run(&o, &r)) {
        CHECK_MSG(r.replayed == 1 && r.replay_still_failing == 1, "replayed %llu, still failing %llu",
                  (unsigned long long)r.replayed, (unsigned long long)r.replay_still_failing);
        CHECK(r.replay_same_signature == 1 && r.replay_other_signature == 0 && r.db_bad_entries == 0);
        CHECK(r.n_signatures == 1 && strcmp(r.signatures[0].signature, "numerics@relu-neg") == 0);
        /* the repro written for the replay is the saved model, with the recorded settings */
        const char *rd = r.n_signatures ? r.signatures[0].rep.repro_dir : NULL;
        pc_repro_case rc;
        if (rd && pc_repro_case_load(rd, &rc, &err) == PC_OK) {
            pc_case back;
            CHECK_OK(pc_repro_case_load_case(&rc, &back, &err), &err);
            CHECK(has_relu_neg(back.model));
            CHECK(rc.level == 1 && rc.inject && strcmp(rc.inject, pc_fault_name((pc_fault)0)) == 0);
            pc_case_free(&back);
            pc_repro_case_free(&rc);
        } else {
            CHECK_MSG(false, "no readable repro written for the replay: %s", rd ? err.message : "(none)");
        }
        pc_suite_report_free(&r);
    }

    /* an outside model (no generator settings) replays too; the run's own --property/level do not apply */
    info.gen = NULL;
    snprintf(folder, sizeof folder, "%s/repro-outside", root);
    CHECK_OK(pc_repro_write(folder, &sr, &info, &err), &err);
    o.replay_dir = folder;
    o.check.level = 3;
    if (run(&o, &r)) {
        CHECK(r.replayed == 1 && r.replay_same_signature == 1 && r.db_bad_entries == 0);
        pc_suite_report_free(&r);
    }
    /* a different signature is reported as such: recorded with every property, level 3 and no faults, the
     * settings check says "settings-differ" */
    info.check = NULL;
    info.inject = NULL;
    snprintf(folder, sizeof folder, "%s/repro-other", root);
    CHECK_OK(pc_repro_write(folder, &sr, &info, &err), &err);
    o.replay_dir = folder;
    if (run(&o, &r)) {
        CHECK(r.replayed == 1 && r.replay_still_failing == 1 && r.replay_other_signature == 1 &&
              r.replay_same_signature == 0);
        pc_suite_report_free(&r);
    }
    want_settings = false;

    /* the database keeps a graph-shrunk failure as a version-2 entry with its repro folder */
    char db[300];
    snprintf(db, sizeof db, "%s/db", root);
    pc_db_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.signature, sizeof e.signature, "numerics@relu-neg");
    e.gen = gen;
    e.seed = 3;
    e.case_index = 17;
    info.gen = &gen;
    CHECK_OK(pc_failure_db_save_repro(db, &e, &sr, &info, &err), &err);
    CHECK(e.repro_digest != 0 && strlen(e.name) == 16);
    pc_db_entry *all = NULL;
    size_t n = 0, n_bad = 0;
    pc_error bad;
    CHECK_OK(pc_failure_db_load(db, &all, &n, &n_bad, &bad, &err), &err);
    CHECK(n == 1 && n_bad == 0);
    char repro_dir[400];
    snprintf(repro_dir, sizeof repro_dir, "%s/%s.repro", db, e.name);
    if (n == 1) {
        CHECK(all[0].repro_dir && strcmp(all[0].repro_dir, repro_dir) == 0 && !all[0].repro_settings);
        CHECK(all[0].repro_digest == e.repro_digest && strcmp(all[0].name, e.name) == 0);
        char name[17];
        snprintf(name, sizeof name, "%016llx", (unsigned long long)pc_db_entry_hash(&all[0]));
        CHECK(strcmp(name, e.name) == 0);
    }
    pc_db_entries_free(all, n);
    /* the next run replays the saved model (the choices alone would pass) ... */
    pc_suite_options_default(&o);
    o.n_cases = 0;
    o.shrink = false;
    o.check_fn = relu_neg_check;
    o.db_dir = db;
    if (run(&o, &r)) {
        CHECK(r.replayed == 1 && r.replay_still_failing == 1 && r.replay_same_signature == 1 &&
              r.replay_removed == 0);
        pc_suite_report_free(&r);
    }
    CHECK(count_case_files(db) == 1 && dir_exists(repro_dir));
    /* ... until it passes: then the entry and its folder go */
    relu_neg_fixed = true;
    if (run(&o, &r)) {
        CHECK(r.replayed == 1 && r.replay_removed == 1 && r.n_failed == 0);
        pc_suite_report_free(&r);
    }
    relu_neg_fixed = false;
    CHECK(count_case_files(db) == 0 && !dir_exists(repro_dir));

    /* format versions: another version is refused by name; a version-2 entry without its folder is unreadable
     */
    char file[400];
    snprintf(file, sizeof file, "%s/00000000000000aa.case", db);
    FILE *f = fopen(file, "w");
    if (f) {
        fputs("passcheck-failure 3\nfamily float\nchoices 1\n", f);
        fclose(f);
    }
    pc_db_entry back;
    CHECK_STATUS(pc_db_entry_read_file(file, &back, &err), PC_ERR_UNSUPPORTED, &err);
    CHECK(strstr(err.message, "reads versions 1 and 2") && strstr(err.message, "00000000000000aa.case:1"));
    f = fopen(file, "w");
    if (f) {
        fputs("passcheck-failure 2\nfamily float\nchoices 1\nrepro 00000000000000aa.repro\nrepro_digest 5\n",
              f);
        fclose(f);
    }
    CHECK_STATUS(pc_db_entry_read_file(file, &back, &err), PC_ERR_IO, &err);
    CHECK(strstr(err.message, "00000000000000aa.repro is missing"));
    f = fopen(file, "w");
    if (f) {
        fputs("passcheck-failure 2\nfamily float\nchoices 1\nrepro ../elsewhere.repro\nrepro_digest 5\n", f);
        fclose(f);
    }
    CHECK_STATUS(pc_db_entry_read_file(file, &back, &err), PC_ERR_VALUE, &err);
    CHECK(strstr(err.message, "bad repro folder"));
    f = fopen(file, "w");
    if (f) { /* a version-1 file does not know the repro keys */
        fputs("passcheck-failure 1\nfamily float\nchoices 1\nrepro 00000000000000aa.repro\n", f);
        fclose(f);
    }
    CHECK_STATUS(pc_db_entry_read_file(file, &back, &err), PC_ERR_VALUE, &err);
    CHECK(strstr(err.message, "unknown key 'repro'"));
    unlink(file);
    relu_neg_free(&sr);
    rm_tree(root);
}

/* pc_case_check_isolated gives what pc_case_check gives in-process, on real generated cases. */
static void test_isolated_matches_in_process(void)
{
    size_t compared = 0;
    for (uint64_t i = 0; i < 12; i++) {
        pc_gen_config gen;
        pc_gen_config_default(&gen);
        gen.family = pc_gen_family_at(i % pc_gen_family_count())->name;
        pc_choices ch;
        pc_choices_init_random(&ch, pc_suite_case_seed(5, i));
        pc_case c;
        pc_error err;
        if (pc_case_generate(&gen, &ch, &c, &err) != PC_OK) { /* a family not built yet */
            pc_choices_free(&ch);
            continue;
        }
        pc_check_config cc;
        pc_check_config_default(&cc);
        pc_check_result a, b;
        pc_error ea, eb;
        pc_status sa = pc_case_check(&c, &cc, &a, &ea);
        pc_status sb = pc_case_check_isolated(&c, &cc, 60, &b, &eb);
        CHECK(sa == sb);
        if (sa == PC_OK && sb == PC_OK) {
            compared++;
            CHECK(memcmp(a.counts, b.counts, sizeof a.counts) == 0);
            CHECK(a.failed == b.failed);
            if (a.failed && b.failed) {
                CHECK(pc_failure_same(&a.failure, &b.failure));
                CHECK(strcmp(a.failure.message, b.failure.message) == 0);
                CHECK(a.before_size == b.before_size &&
                      (!a.before_size || memcmp(a.before_bytes, b.before_bytes, a.before_size) == 0));
                CHECK(a.after_size == b.after_size &&
                      (!a.after_size || memcmp(a.after_bytes, b.after_bytes, a.after_size) == 0));
            }
            CHECK(memcmp(&a.stats, &b.stats, sizeof a.stats) == 0);
        }
        if (sa == PC_OK) pc_check_result_free(&a);
        if (sb == PC_OK) pc_check_result_free(&b);
        pc_case_free(&c);
        pc_choices_free(&ch);
    }
    printf("test_runner_suite: isolated vs in-process compared on %zu generated cases\n", compared);
    pc_error err;
    pc_check_result r;
    pc_case empty;
    memset(&empty, 0, sizeof empty);
    pc_check_config cc;
    pc_check_config_default(&cc);
    CHECK_STATUS(pc_case_check_isolated(&empty, &cc, 0, &r, &err), PC_ERR_USAGE, &err);
}

/* --known and --fail-fast on the synthetic run: the failures in the pass of the first failing case are known;
 * the run must stop at the first case failing in another pass, having checked every case before it, whatever
 * --jobs. */
static void test_known_and_fail_fast(void)
{
    enum { N = 400 };
    unsigned kp = 3; /* the known pass: p0, p1 or p2 */
    uint64_t first_new = UINT64_MAX, known_before = 0, known_all = 0, failing_all = 0;
    for (uint64_t i = 0; i < N; i++) {
        unsigned v = ref_value(42, i);
        if (v % 7) continue;
        if (kp == 3) kp = v % 3;
        failing_all++;
        known_all += v % 3 == kp;
        if (v % 3 != kp && first_new == UINT64_MAX) first_new = i;
        if (v % 3 == kp && first_new == UINT64_MAX) known_before++;
    }
    CHECK_MSG(first_new != UINT64_MAX && known_before > 0, "the synthetic cases need a known failure first");
    pc_failure f;
    memset(&f, 0, sizeof f);
    snprintf(f.property, sizeof f.property, "%s", pc_property_at(0)->name);
    snprintf(f.pass, sizeof f.pass, "p%u", kp);
    char known_sig[160];
    pc_failure_signature(&f, known_sig, sizeof known_sig);
    char never[] = "numerics@never/seen";
    char *known_items[] = {known_sig, never};
    pc_known_list known = {known_items, 2, 2};
    /* --known alone: every case runs, the p0 failures are marked known and counted apart */
    pc_suite_options o;
    synth_options(&o, N, 2);
    o.known = &known;
    pc_suite_report r;
    if (!run(&o, &r)) return;
    CHECK(r.cases == N && r.n_failed == failing_all && r.known_failed == known_all && !r.stopped_early);
    for (size_t s = 0; s < r.n_signatures; s++) {
        bool is_known = strcmp(r.signatures[s].signature, known_sig) == 0;
        CHECK_MSG(r.signatures[s].known == is_known, "%s: known %d", r.signatures[s].signature,
                  r.signatures[s].known);
        CHECK(!is_known || strstr(r.signatures[s].rep.note, "known finding") != NULL);
    }
    char *j = json_of(&o, &r);
    CHECK(j && strstr(j, "\"known\": true") && strstr(j, "\"stopped_early\": null"));
    free(j);
    pc_suite_report_free(&r);
    /* --fail-fast: stops at first_new; with more jobs, cases after it may have finished too */
    for (uint32_t jobs = 1; jobs <= 3; jobs += 2) {
        synth_options(&o, N, jobs);
        o.known = &known;
        o.fail_fast = true;
        if (!run(&o, &r)) return;
        CHECK_MSG(r.stopped_early && !r.stopped_replayed && r.stopped_order == first_new,
                  "jobs %u: stopped %d at %llu, expected case %llu", jobs, r.stopped_early,
                  (unsigned long long)r.stopped_order, (unsigned long long)first_new);
        /* with more jobs the other workers go on taking cases until the failure's result arrives: how many
         * depends on the schedule (a bound of first_new + jobs failed now and then under load) */
        CHECK(jobs > 1 ? r.cases >= first_new + 1 && r.cases <= N : r.cases == first_new + 1);
        CHECK(r.known_failed >= known_before && r.n_failed >= known_before + 1);
        for (size_t k = 0; k < known_before + 1 && k < r.n_failed; k++) /* everything before was checked */
            CHECK(r.failed[k].index <= first_new);
        j = json_of(&o, &r);
        char want[96];
        snprintf(want, sizeof want, "\"stopped_early\": {\"replayed\": false, \"order\": %llu}",
                 (unsigned long long)first_new);
        CHECK_MSG(j && strstr(j, want), "JSON lacks %s", want);
        free(j);
        pc_suite_report_free(&r);
    }
}

int main(void)
{
    test_case_seeds();
    test_synthetic_run_and_jobs();
    test_known_and_fail_fast();
    test_crash_and_hang();
    test_failure_db();
    test_replay_saved_repro();
    test_isolated_matches_in_process();
    return pc_test_finish("test_runner_suite");
}
