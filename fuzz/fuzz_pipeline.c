/* fuzz_pipeline — libFuzzer target for the whole pipeline: the fuzzer's bytes are the generators' choice
 * sequence, the case they generate is optimized with every property checked after every pass (in-process, so
 * libFuzzer sees the coverage of the passes), and a finding aborts after printing how to replay it.
 *
 * Input layout (docs: corpus/README.md, "The pipeline corpus"):
 *   byte 0      the family: data[0] % pc_gen_family_count() (0 float, 1 nhwc, 2 qdq, 3 qlinear, 4 patterns,
 *               5 annotated, 6 eps); ignored (but still present) when PC_FUZZ_FAMILY is set, so one corpus
 * serves both; bytes 1..   the choice sequence, read draw by draw (pc_choices_init_bytes, generators/gen.h):
 * a draw with bound b takes the fewest little-endian bytes that hold b - 1 (1 byte for b <= 256, ..., 4
 * bytes) modulo b; bytes past the end read as 0. An empty or all-zero input is the minimal float case. The
 * bytes a case did not consume are ignored. The decoded choices are ordinary choices: the failure database
 * entry written for a finding regenerates the same case with `passcheck suite --replay`.
 *
 * Repeats. Mutating bytes the generators never read, or a value to another with the same residue modulo the
 * draw's bound, decodes to a case already checked: about 38 % of libFuzzer's inputs from the seeds (60 s run,
 * 14,000 of 36,519). The case is a function of the family and the decoded choices (the replay build checks
 * that contract on every input), and a checked case that failed would have aborted the process, so the
 * libFuzzer build keys each case by a 64-bit hash of both and checks a repeat only once: a repeat is
 * generated (libFuzzer sees the generators' coverage, which is the earlier run's) but not checked again.
 * PC_FUZZ_RECHECK=1 checks every input. The replay build checks every file. At exit the target prints how
 * many inputs repeated a case.
 *
 * Cost. Each input's check is bounded: alloc-failure fails one allocation, the one the case draws
 * (pc_check_config.alloc_one), where the suite tries every allocation of a small run; libFuzzer, varying the
 * case, varies the point. A finding replays with the suite's policy, which tries that point too.
 *
 * Outcomes. A property FAIL or ERROR (the harness could not judge: an ERROR is a harness bug), a generator
 * error (the generators only build valid graphs: an error is a generator bug), a pc_case_check error (the
 * case could not be checked), and a case that runs past the time guard are all findings: the target prints
 * the signature
 * (`property@pass[/kind]`, `generator@-/STATUS`, `harness@-/STATUS`, `timeout@PASS`, as the suite names
 * them), the message and the replay commands, saves the case, and calls abort() so libFuzzer keeps the input
 * as a crash artifact. SKIP (the oracle cannot judge this case) is not a finding.
 *
 * Environment (read once, at the first input; a bad value exits with status 2):
 *   PC_FUZZ_FAMILY     one family for every input (passcheck suite --list-families); default: byte 0 picks
 *   PC_FUZZ_PROPERTY   comma-separated properties to check (default: every property but ort-oracle, which
 *                      runs ONNX Runtime out of process and is refused here)
 *   PC_FUZZ_MAX_NODES  generated ops per graph, 1..64 (default 12, the suite's default)
 *   PC_FUZZ_TIMEOUT    seconds per input before the time guard reports a finding (default 30; checked after
 *                      every pass; a hang inside one pass is libFuzzer's -timeout)
 *   PC_FUZZ_OUT        where findings are saved (default fuzz-pipeline-failures): OUT/.db/<hash>.case (a
 *                      failure database entry) and OUT/<signature>-<hash>/ (a repro folder)
 *   PC_FUZZ_INJECT     planted faults to enable (passcheck suite --list-faults), comma-separated: proves the
 *                      target finds them (the saved entry records them, so --replay enables them too)
 *   PC_FUZZ_SHRINK     seconds to shrink a property failure in-process before saving it (default 0: off; the
 *                      shrinker checks candidates in forked children)
 *   PC_FUZZ_RECHECK    1: check an input whose case repeats one already checked (default 0: generate it and
 *                      skip the check; see Repeats)
 *   PC_FUZZ_KNOWN      a known-findings file (passcheck suite --known's format: one signature per line): an
 *                      input failing with one of them is not a finding, so a long run goes on past an open
 *                      bug's class (ci/fuzz pipeline passes corpus/known-findings.txt)
 *
 * Built two ways: with -fsanitize=fuzzer (fuzz_pipeline) and with fuzz/standalone_main.c
 * (fuzz_pipeline_replay, PC_FUZZ_STANDALONE defined), which replays files; the replay build also checks, for
 * every input, that the decoded choices regenerate a byte-identical model (the contract the saved database
 * entry relies on).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/passcheck.h"
#include "generators/gen.h"
#include "properties/property.h"
#include "properties/runner/repro.h"
#include "properties/runner/suite.h"
#include "properties/runner/util.h"
#include "properties/shrink/shrink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FZ_MAX_NODES_LIMIT = 64 };

typedef struct fz_config {
    bool ready;
    const pc_gen_family *family; /* NULL: byte 0 picks */
    const char *property_list;   /* NULL: every property */
    pc_check_config check;
    uint32_t max_nodes;
    double timeout;
    double shrink_seconds;
    const char *out;
    const char *inject; /* NULL: no faults */
    pc_known_list known;
    uint64_t known_seen; /* inputs that failed with a known signature */
    bool recheck;        /* PC_FUZZ_RECHECK: check repeated cases too */
    uint64_t n_inputs, n_repeats;
} fz_config;

static fz_config fz;

/* The input being checked, for the time guard's report. */
typedef struct fz_state {
    const pc_gen_config *gen;
    const pc_case *kase;
    const pc_choices *ch;
    double deadline;
} fz_state;

static void fz_usage_exit(const char *fmt, const char *value)
{
    fprintf(stderr, "fuzz_pipeline: ");
    fprintf(stderr, fmt, value);
    fputc('\n', stderr);
    exit(2);
}

static double fz_env_seconds(const char *name, double dflt, double lo, double hi)
{
    const char *s = getenv(name);
    if (!s || !*s) return dflt;
    char *end = NULL;
    double v = strtod(s, &end);
    if (*end != '\0' || !(v >= lo && v <= hi)) {
        fprintf(stderr, "fuzz_pipeline: bad %s '%s' (want seconds from %g to %g)\n", name, s, lo, hi);
        exit(2);
    }
    return v;
}

#ifndef PC_FUZZ_STANDALONE
/* Cases already checked, by key (fz_case_key; 0 marks a free slot): open addressing, emptied when half full
 * (a 30-minute run makes about a million inputs; an emptied table only means a few repeats checked again). */
enum { FZ_SEEN_BITS = 20 };
static uint64_t fz_seen[(size_t)1 << FZ_SEEN_BITS];
static size_t fz_n_seen;

static uint64_t fz_case_key(const pc_gen_family *fam, const pc_choices *ch)
{
    uint64_t h = 0xcbf29ce484222325ull, state;
    for (const char *p = fam->name; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    for (size_t i = 0; i < ch->n; i++) {
        state = h ^ ch->values[i];
        h = pc_splitmix64(&state);
    }
    state = h ^ ch->n;
    return pc_splitmix64(&state) | 1;
}

/* True when key was seen before; records it otherwise. */
static bool fz_seen_before(uint64_t key)
{
    const size_t mask = ((size_t)1 << FZ_SEEN_BITS) - 1;
    size_t i = (size_t)(key >> 8) & mask;
    while (fz_seen[i]) {
        if (fz_seen[i] == key) return true;
        i = (i + 1) & mask;
    }
    if (fz_n_seen >= mask / 2) {
        memset(fz_seen, 0, sizeof fz_seen);
        fz_n_seen = 0;
        i = (size_t)(key >> 8) & mask;
    }
    fz_seen[i] = key;
    fz_n_seen++;
    return false;
}

static void fz_report_repeats(void)
{
    fprintf(stderr, "fuzz_pipeline: %" PRIu64 " inputs, %" PRIu64 " repeated a case already checked%s\n",
            fz.n_inputs, fz.n_repeats, fz.recheck ? " (checked again: PC_FUZZ_RECHECK=1)" : "");
}
#endif

static void fz_setup(void)
{
    if (fz.ready) return;
    pc_check_config_default(&fz.check);
    /* one allocation failure per input, at the point the case draws (pc_check_config.alloc_one) */
    fz.check.alloc_one = true;
    const char *fam = getenv("PC_FUZZ_FAMILY");
    if (fam && *fam) {
        fz.family = pc_gen_family_find(fam);
        if (!fz.family) fz_usage_exit("unknown PC_FUZZ_FAMILY '%s' (passcheck suite --list-families)", fam);
    }
    const char *props = getenv("PC_FUZZ_PROPERTY");
    if (props && *props) {
        pc_error err;
        pc_error_clear(&err);
        if (pc_check_config_select(&fz.check, props, &err) != PC_OK)
            fz_usage_exit("PC_FUZZ_PROPERTY: %s", err.message);
        if (fz.check.oracle_ort)
            fz_usage_exit("PC_FUZZ_PROPERTY '%s': ort-oracle runs ONNX Runtime out of process; fuzz it with "
                          "passcheck suite --oracle ort",
                          props);
        fz.property_list = props;
    }
    fz.max_nodes = 12;
    const char *mn = getenv("PC_FUZZ_MAX_NODES");
    if (mn && *mn) {
        uint64_t v;
        if (!pc_parse_u64(mn, 1, FZ_MAX_NODES_LIMIT, &v))
            fz_usage_exit("bad PC_FUZZ_MAX_NODES '%s' (want 1..64)", mn);
        fz.max_nodes = (uint32_t)v;
    }
    fz.timeout = fz_env_seconds("PC_FUZZ_TIMEOUT", 30, 0.001, 86400);
    fz.shrink_seconds = fz_env_seconds("PC_FUZZ_SHRINK", 0, 0, 3600);
    const char *inject = getenv("PC_FUZZ_INJECT");
    if (inject && *inject) {
        pc_error err;
        pc_error_clear(&err);
        if (pc_fault_enable_list(inject, &err) != PC_OK) fz_usage_exit("PC_FUZZ_INJECT: %s", err.message);
        fz.inject = inject;
    }
    const char *known = getenv("PC_FUZZ_KNOWN");
    if (known && *known) {
        pc_error err;
        pc_error_clear(&err);
        if (pc_known_list_load(&fz.known, known, &err) != PC_OK)
            fz_usage_exit("PC_FUZZ_KNOWN: %s", err.message);
    }
    const char *recheck = getenv("PC_FUZZ_RECHECK");
    if (recheck && *recheck) {
        if (strcmp(recheck, "0") != 0 && strcmp(recheck, "1") != 0)
            fz_usage_exit("bad PC_FUZZ_RECHECK '%s' (want 0 or 1)", recheck);
        fz.recheck = recheck[0] == '1';
    }
#ifndef PC_FUZZ_STANDALONE
    atexit(fz_report_repeats);
#endif
    const char *out = getenv("PC_FUZZ_OUT");
    fz.out = out && *out ? out : "fuzz-pipeline-failures";
    fz.ready = true;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Findings: print, save, abort.
 */

/* Saves the case as a failure database entry (OUT/.db/<hash>.case) and, when there is a case, a repro folder
 * (OUT/<signature>-<hash>/: repro.onnx, input_N.pb, eps.txt, case.txt), then prints how to replay and shrink.
 * Saving is best effort: a save that fails is reported, the finding is still a finding. */
static void fz_save(const char *signature, const pc_gen_config *gen, const uint32_t *choices,
                    size_t n_choices, const pc_case *kase, const pc_failure *failure,
                    const pc_check_result *res)
{
    pc_error err;
    pc_error_clear(&err);
    char *db = pc_path_join(fz.out, ".db");
    pc_db_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.signature, sizeof e.signature, "%s", signature);
    e.gen = *gen;
    e.choices = (uint32_t *)choices; /* borrowed: not freed here */
    e.n_choices = n_choices;
    e.inject = (char *)fz.inject; /* borrowed */
    const char *prop_opt = fz.property_list ? " --property " : "";
    const char *prop_val = fz.property_list ? fz.property_list : "";
    if (!db || pc_failure_db_save(db, &e, &err) != PC_OK) {
        fprintf(stderr, "fuzz_pipeline: could not save the failure database entry in %s: %s\n",
                db ? db : fz.out, db ? err.message : "out of memory");
    } else {
        fprintf(stderr,
                "fuzz_pipeline: saved %s/%s.case (family %s, %zu choices)\n"
                "  replay:  passcheck suite --replay %s%s%s%s%s\n",
                db, e.name, gen->family, n_choices, db, prop_opt, prop_val, fz.inject ? " --inject " : "",
                fz.inject ? fz.inject : "");
    }
    if (kase && kase->model) {
        char dirname[256], safe[200];
        pc_name_sanitize(signature, safe, sizeof safe);
        snprintf(dirname, sizeof dirname, "%s-%.8s", safe, e.name[0] ? e.name : "00000000");
        char *dir = pc_path_join(fz.out, dirname);
        pc_shrink_result r;
        memset(&r, 0, sizeof r);
        r.choices = (uint32_t *)choices;
        r.n_choices = n_choices;
        r.kase = *kase;
        if (res) r.check = *res;
        if (failure) r.check.failure = *failure, r.check.failed = true;
        pc_repro_info info = {.gen = gen, .check = &fz.check, .inject = fz.inject, .original = failure};
        pc_error_clear(&err);
        if (!dir || pc_repro_write_replay_files(dir, &r, &info, &err) != PC_OK) {
            fprintf(stderr, "fuzz_pipeline: could not write the repro folder %s: %s\n", dir ? dir : dirname,
                    dir ? err.message : "out of memory");
        } else if (failure) {
            fprintf(stderr,
                    "  repro:   %s/ (replay: passcheck suite --replay %s)\n"
                    "  shrink:  passcheck shrink %s/repro.onnx --property %s --pass %s --ep %s%s%s%s%s%s%s "
                    "--inputs %s --out DIR\n",
                    dir, dir, dir, failure->property, failure->pass, kase->ep_list,
                    kase->ep_text ? " --ep-file " : "", kase->ep_text ? dir : "",
                    kase->ep_text ? "/eps.txt" : "", kase->layer_assignment ? " --layer-assignment '" : "",
                    kase->layer_assignment ? kase->layer_assignment : "", kase->layer_assignment ? "'" : "",
                    dir);
        } else {
            fprintf(stderr, "  repro:   %s/ (replay: passcheck suite --replay %s)\n", dir, dir);
        }
        free(dir);
    }
    free(db);
}

static _Noreturn void fz_finding(const char *signature, const char *message, const pc_gen_config *gen,
                                 const pc_choices *ch, const pc_case *kase, const pc_failure *failure,
                                 const pc_check_result *res)
{
    fprintf(stderr, "\nfuzz_pipeline: FINDING %s (family %s%s%s)\n  %s\n", signature, gen->family,
            kase && kase->ep_list ? ", EPs " : "", kase && kase->ep_list ? kase->ep_list : "", message);
    uint32_t *choices = ch->values;
    size_t n_choices = ch->n;
    pc_shrink_result sr;
    memset(&sr, 0, sizeof sr);
    bool shrunk = false;
    if (failure && fz.shrink_seconds > 0) {
        pc_shrink_options so;
        pc_shrink_options_default(&so);
        so.max_seconds = fz.shrink_seconds;
        pc_error err;
        pc_error_clear(&err);
        if (pc_shrink_case(gen, choices, n_choices, &fz.check, failure, &so, &sr, &err) == PC_OK) {
            shrunk = true;
            fprintf(stderr, "fuzz_pipeline: shrunk in %.1f s: %" PRIu32 " -> %" PRIu32 " nodes%s\n",
                    sr.seconds, sr.nodes_before, sr.nodes_after,
                    sr.graph_edited ? " (graph edited: replay the repro folder, not the database entry)"
                                    : "");
        } else {
            fprintf(stderr, "fuzz_pipeline: shrinking failed (%s: %s); saving the unshrunk case\n",
                    pc_status_name(err.status), err.message);
        }
    }
    if (shrunk)
        fz_save(signature, gen, sr.choices, sr.n_choices, &sr.kase, &sr.check.failure, &sr.check);
    else
        fz_save(signature, gen, choices, n_choices, kase, failure, res);
    fprintf(stderr,
            "  input:   libFuzzer saves the input as an artifact; rerun it with fuzz_pipeline <artifact> or "
            "fuzz_pipeline_replay <artifact>\n");
    fflush(stderr);
    abort();
}

/* The time guard: after every pass. */
static void fz_on_pass(void *ctx, const char *pass)
{
    const fz_state *st = ctx;
    if (pc_now_seconds() <= st->deadline) return;
    char sig[96], msg[256];
    snprintf(sig, sizeof sig, "timeout@%s", pass);
    snprintf(msg, sizeof msg, "the case ran past the %.3g s time guard (PC_FUZZ_TIMEOUT) after pass %s",
             fz.timeout, pass);
    fz_finding(sig, msg, st->gen, st->ch, st->kase, NULL, NULL);
}

#ifdef PC_FUZZ_STANDALONE
/* The contract the saved database entry relies on: the decoded choices regenerate the same model. */
static void fz_check_replay(const pc_gen_config *gen, const pc_choices *ch, const pc_case *kase)
{
    pc_choices again;
    pc_choices_init_replay(&again, ch->values, ch->n);
    pc_case c2;
    pc_error err;
    pc_error_clear(&err);
    uint8_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    pc_error e1, e2;
    pc_error_clear(&e1);
    pc_error_clear(&e2);
    bool same = false;
    if (pc_case_generate(gen, &again, &c2, &err) == PC_OK) {
        if (pc_model_save_bytes(kase->model, &a, &na, &e1) == PC_OK &&
            pc_model_save_bytes(c2.model, &b, &nb, &e2) == PC_OK)
            same = na == nb && memcmp(a, b, na) == 0 && again.n == ch->n;
        pc_case_free(&c2);
    }
    free(a);
    free(b);
    pc_choices_free(&again);
    if (!same) {
        fprintf(stderr,
                "fuzz_pipeline: BUG: the decoded choices (%zu) do not regenerate the same %s model%s%s\n",
                ch->n, gen->family, err.status != PC_OK ? ": " : "", err.status != PC_OK ? err.message : "");
        abort();
    }
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_setup();
    pc_gen_config gen;
    pc_gen_config_default(&gen);
    gen.max_nodes = fz.max_nodes;
    const pc_gen_family *fam = fz.family;
    if (!fam) fam = pc_gen_family_at(size ? data[0] % pc_gen_family_count() : 0);
    gen.family = fam->name;

    pc_choices ch;
    pc_choices_init_bytes(&ch, size > 1 ? data + 1 : NULL, size > 1 ? size - 1 : 0);
    pc_case kase;
    pc_error err;
    pc_error_clear(&err);
    double t0 = pc_now_seconds();
    pc_status st = pc_case_generate(&gen, &ch, &kase, &err);
    if (st != PC_OK) {
        char sig[64];
        snprintf(sig, sizeof sig, "generator@-/%s", pc_status_name(st));
        fz_finding(sig, err.message, &gen, &ch, NULL, NULL, NULL);
    }
#ifdef PC_FUZZ_STANDALONE
    fz_check_replay(&gen, &ch, &kase);
#else
    fz.n_inputs++;
    if (fz_seen_before(fz_case_key(fam, &ch))) {
        fz.n_repeats++;
        if (!fz.recheck) {
            pc_case_free(&kase);
            pc_choices_free(&ch);
            return 0;
        }
    }
#endif

    fz_state state = {&gen, &kase, &ch, t0 + fz.timeout};
    pc_check_config cc = fz.check;
    cc.on_pass = fz_on_pass;
    cc.on_pass_ctx = &state;
    pc_check_result res;
    memset(&res, 0, sizeof res);
    pc_error_clear(&err);
    st = pc_case_check(&kase, &cc, &res, &err);
    if (st != PC_OK) {
        char sig[64];
        snprintf(sig, sizeof sig, "harness@-/%s", pc_status_name(st));
        fz_finding(sig, err.message, &gen, &ch, &kase, NULL, NULL);
    }
    if (res.failed) {
        char sig[160];
        pc_failure_signature(&res.failure, sig, sizeof sig);
        if (pc_known_list_has(&fz.known, sig)) {
            /* an open bug's class: counted, not a finding (one line per 100, so a run's log shows it) */
            if (fz.known_seen++ % 100 == 0)
                fprintf(stderr,
                        "fuzz_pipeline: %" PRIu64 " inputs failed with known signatures (latest %s)\n",
                        fz.known_seen, sig);
        } else {
            fprintf(stderr, "fuzz_pipeline: outcome %s\n", pc_prop_outcome_name(res.failure.outcome));
            fz_finding(sig, res.failure.message, &gen, &ch, &kase, &res.failure, &res);
        }
    }
    pc_check_result_free(&res);
    pc_case_free(&kase);
    pc_choices_free(&ch);
    return 0;
}
