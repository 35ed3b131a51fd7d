/*
 * suite.h — the property suite runner (`passcheck suite`): cases from a seed, each checked in its own
 * process,
 * --jobs merged deterministically, --shard partitions, shrinking and repro folders, the failure database, and
 * the JSON/JUnit reports.
 *
 * Worked example: 200 cases of every family against every property, 2 processes at a time.
 *
 *     pc_suite_options o;
 *     pc_suite_options_default(&o);          // seed 1, 2000 cases, every family and property, 1 job
 *     o.n_cases = 200;
 *     o.jobs = 2;
 *     o.out_dir = "passcheck-failures";      // repro folders
 *     o.db_dir = "passcheck-failures/.db";   // the failure database, replayed first
 *     pc_suite_report rep;
 *     if (pc_suite_run(&o, &rep, &err) != PC_OK) ...           // the runner itself broke (fork, OOM)
 *     pc_suite_write_json(stdout, &o, &rep, true);
 *     int failed = rep.n_failed != 0;
 *     pc_suite_report_free(&rep);
 *
 * Case i of a run uses the seed pc_suite_case_seed(seed, i) and the family pc_suite_case_family(that seed,
 * number of families), so a case is the same whatever --jobs, --shard or --time select. Every case
 * (generation and check) runs in a forked child with a deadline; the child streams back its choice sequence,
 * the passes it finished and its pc_check_result. Counts are sums and failures are sorted by case index
 * before anything is printed, so the report is identical for any --jobs.
 */
#ifndef PC_SUITE_H
#define PC_SUITE_H

#include <stdio.h>

#include "generators/gen.h"
#include "properties/property.h"
#include "properties/runner/proc.h"
#include "properties/shrink/shrink.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------------------------
 * Deterministic case selection.
 */

/* The splitmix64 output number `index` of the stream seeded with `seed`: independent-looking seeds per case.
 */
uint64_t pc_suite_case_seed(uint64_t seed, uint64_t index);
/* Which of n_families (> 0) families case seed `case_seed` uses (a second mix of the seed, so shards and
 * families do not line up the way index % n would). */
uint32_t pc_suite_case_family(uint64_t case_seed, uint32_t n_families);
/* Whether case `index` belongs to shard `shard_index` (0-based) of `shard_count`. */
/* Whether case seed `case_seed` draws special values at `percent` (0..100; a third mix of the seed). */
bool pc_suite_case_special(uint64_t case_seed, uint32_t percent);
bool pc_suite_in_shard(uint64_t index, uint32_t shard_index, uint32_t shard_count);

/* ---------------------------------------------------------------------------------------------------------------
 * The failure database: one file per failure, DIR/<16 hex digits>.case, named by a hash of the generator
 * config and the choice sequence (the same failure found twice is one entry). Text, one "key value" per line:
 *
 *     passcheck-failure 1
 *     signature numerics@fuse_conv_bn/nan-position
 *     family float
 *     max_nodes 12
 *     max_elements 256
 *     max_rank 5
 *     allow_special 0
 *     annotate 0
 *     random_eps 0
 *     seed 1
 *     case 1234
 *     inject concat-wrong-axis          (absent without faults)
 *     choices 3 0 1 7 ...
 *
 * Version 2 (first line `passcheck-failure 2`) is a failure the shrinker's graph phase edited: its choices
 * only regenerate a larger case, so the entry keeps the minimal repro itself and replay checks that. Two more
 * lines:
 *
 *     repro 1a2b3c4d5e6f7a8b.repro      a folder next to the entry: repro.onnx, input_N.pb, eps.txt, case.txt
 *     repro_digest 9f8e7d6c5b4a3921     FNV-1a of its repro.onnx (part of the entry's name)
 *
 * Version 1 files are read as before; any other version is refused naming the file and the versions read.
 * Written to a temporary file and renamed, so readers never see half an entry; a repro folder is complete
 * before its entry file appears. (`--replay` also reads repro folders, through their case.txt: repro.h.)
 */
typedef struct pc_db_entry {
    char name[17];       /* the hash, 16 hex digits (set by pc_failure_db_save and the readers) */
    char signature[160]; /* as pc_failure_signature writes it */
    pc_gen_config gen;   /* gen.family points at the pc_gen_family table (static); NULL: an outside model */
    uint64_t seed, case_index;
    char *inject;      /* malloc'ed; NULL: no faults */
    uint32_t *choices; /* malloc'ed */
    size_t n_choices;
    /* Replay checks the repro in this folder (repro.onnx, its input files, eps.txt, case.txt: repro.h)
     * instead of regenerating the choices: a version-2 database entry's `<name>.repro`, or a repro folder
     * given to --replay. NULL: regenerate. */
    char *repro_dir;       /* malloc'ed */
    uint64_t repro_digest; /* pc_db_digest of its repro.onnx; 0 with no repro_dir */
    bool repro_settings;   /* check with the folder's case.txt settings and faults (a repro folder given to
                              --replay), not with the run's (database entries) */
} pc_db_entry;

void pc_db_entry_free(pc_db_entry *e);
/* The content hash of an entry (generator config, choices and repro_digest; not the signature, seed or
 * index). */
uint64_t pc_db_entry_hash(const pc_db_entry *e);
/* FNV-1a of bytes, and of a whole file (the repro digest). */
uint64_t pc_db_digest(const void *bytes, size_t n);
pc_status pc_db_digest_file(const char *path, uint64_t *digest, pc_error *err);
/* Writes `e` as one file (temporary + rename). */
pc_status pc_db_entry_write_file(const pc_db_entry *e, const char *path, pc_error *err);
/* Reads one entry file; a malformed file is PC_ERR_VALUE naming the file and line. */
pc_status pc_db_entry_read_file(const char *path, pc_db_entry *e, pc_error *err);
/* Saves into the database folder (created, with its parents, when missing); sets e->name. */
pc_status pc_failure_db_save(const char *db_dir, pc_db_entry *e, pc_error *err);
/* Saves a graph-shrunk failure as a version-2 entry: r's case goes to `<name>.repro`
 * (pc_repro_write_replay_files with `info`), then the entry file points at it. Sets e->name, e->repro_digest;
 * e->repro_dir stays as given. */
pc_status pc_failure_db_save_repro(const char *db_dir, pc_db_entry *e, const pc_shrink_result *r,
                                   const pc_repro_info *info, pc_error *err);
/* Every *.case file of `dir`, sorted by name. A missing folder is an empty database. Files that do not parse
 * are skipped and counted in *n_bad (the first one's reason in `bad`, when non-NULL), so one damaged file
 * does not stop the suite. */
pc_status pc_failure_db_load(const char *dir, pc_db_entry **entries, size_t *n, size_t *n_bad, pc_error *bad,
                             pc_error *err);
/* Removes the entry named `name` (its hash) and its repro folder; missing files are fine. */
pc_status pc_failure_db_remove(const char *db_dir, const char *name, pc_error *err);
void pc_db_entries_free(pc_db_entry *entries, size_t n);

/* ---------------------------------------------------------------------------------------------------------------
 * The run.
 */

/* Test seams: the suite generates and checks through these (NULL: pc_case_generate and pc_case_check), so the
 * runner's own tests can drive it with synthetic cases whose failures they choose. */
typedef pc_status (*pc_suite_generate_fn)(const pc_gen_config *cfg, pc_choices *ch, pc_case *out,
                                          pc_error *err);
typedef pc_status (*pc_suite_check_fn)(const pc_case *c, const pc_check_config *cfg, pc_check_result *res,
                                       pc_error *err);

typedef struct pc_suite_progress {
    uint64_t done, total; /* total 0: unknown (--time) */
    uint64_t failed;      /* cases that failed so far */
    double seconds, time_limit;
    const char *phase; /* "replay", "cases", "shrink" */
} pc_suite_progress;

/* Known findings (--known files, PC_FUZZ_KNOWN): one failure signature per line; '#' comments, blank lines
 * and surrounding blanks are ignored. A line that is not property@pass[/kind] (at most 159 characters, no
 * blanks) is PC_ERR_VALUE naming "FILE:LINE"; an unreadable file is pc_file_read_all's error. Appends to k.
 */
typedef struct pc_known_list {
    char **items; /* malloc'ed */
    size_t n, cap;
} pc_known_list;

pc_status pc_known_list_load(pc_known_list *k, const char *path, pc_error *err);
bool pc_known_list_has(const pc_known_list *k, const char *signature);
void pc_known_list_free(pc_known_list *k);

typedef struct pc_suite_options {
    uint64_t seed;
    uint64_t n_cases; /* case indices 0..n_cases-1 (before sharding) */
    double seconds;   /* > 0: --time: start cases until then, n_cases is then only an upper bound */
    uint32_t jobs;    /* concurrent children (default 1) */
    uint32_t shard_index, shard_count; /* 0-based; count 1: everything */
    const char *const *families;       /* family names (pc_gen_family_find); NULL: every family */
    uint32_t n_families;
    pc_gen_config gen; /* base generator config; the family is set per case */
    /* Percent of cases (drawn from each case's seed, pc_suite_case_special) generated with
     * gen.allow_special on (NaN, +-Inf, -0, huge and subnormal input elements; the CLI's --special-values,
     * default 10 there, 0 here). gen.allow_special itself turns them on for every case. */
    uint32_t special_percent;
    pc_check_config check;
    double case_timeout; /* seconds per case (default 60) */
    bool shrink;         /* default true */
    pc_shrink_options shrink_opts;
    const char *out_dir;    /* repro folders; NULL: none written */
    const char *db_dir;     /* failure database; NULL: none (no replay-first, nothing saved) */
    const char *replay_dir; /* non-NULL: only replay the failures found there (read-only; no new cases) */
    const char *inject;     /* the enabled faults, recorded in repros and the database (enable them first) */
    const char *command;    /* the command line, for repro READMEs */
    /* Known findings (--known): failure signatures that are expected. Cases failing with one are counted and
     * reported (marked known) but neither shrunk nor saved, and they are not new failures
     * (pc_suite_report.known_failed). */
    const pc_known_list *known; /* NULL: none */
    /* Stop starting cases (and replays) once one fails with a signature that is not known (--fail-fast).
     * Cases already running finish, and cases start in index order, so every case before the first new
     * failure has been checked; the counts then depend on --jobs. */
    bool fail_fast;
    FILE *log; /* shrink and database notes; NULL: quiet */
    void (*progress)(void *ctx, const pc_suite_progress *p);
    void *progress_ctx;
    pc_suite_generate_fn generate;
    pc_suite_check_fn check_fn;
} pc_suite_options;

void pc_suite_options_default(pc_suite_options *o);

/* The representative of a failure signature: the first case (replays first, then by case index) that failed
 * with it. Its choices and check result are kept for shrinking and the repro. */
typedef struct pc_suite_failure {
    uint64_t index; /* case index; for replayed database entries, the index recorded in the entry */
    uint64_t
        case_seed;    /* pc_suite_case_seed(seed, index); replays: the entry's seed field is the suite seed */
    bool replayed;    /* from the database or --replay */
    uint64_t order;   /* replays: position in the replayed list; cases: the index */
    char db_name[17]; /* the database entry replayed or saved ("" when none) */
    pc_gen_config gen; /* family included (static string) */
    pc_failure failure;
    bool have_choices; /* false when the case died before its choices came back (a generator crash) */
    uint32_t *choices;
    size_t n_choices;
    pc_check_result res;        /* as the child reported it (before/after bytes of the failing pass) */
    char *replay_repro_dir;     /* replays of a saved repro (pc_db_entry.repro_dir): its folder, malloc'ed */
    bool replay_repro_settings; /* ... checked with the folder's case.txt settings */
    char *repro_dir;            /* malloc'ed; NULL when none was written */
    bool shrunk;
    uint32_t nodes_before, nodes_after, shrink_checks;
    double shrink_seconds;
    char note[512]; /* why there is no repro, shrink or database entry; "" otherwise */
} pc_suite_failure;

typedef struct pc_suite_signature {
    char signature[160];
    uint64_t cases; /* failing cases with this signature */
    bool known;     /* listed in pc_suite_options.known */
    pc_suite_failure rep;
} pc_suite_signature;

/* Every failing case, compactly. */
typedef struct pc_suite_failed_case {
    uint64_t index, case_seed;
    bool replayed;
    uint64_t order;
    uint32_t family;    /* pc_gen_family_at index */
    uint32_t signature; /* into signatures */
} pc_suite_failed_case;

/* Rewrite coverage: a kind (PC_REWRITE_KINDS) that fires in fewer cases than this, or nearly fires in fewer,
 * is flagged in the summary and the JSON (tests/suite/run_coverage.sh fails the default suite on it). */
enum { PC_SUITE_RW_MIN_FIRED = 50, PC_SUITE_RW_MIN_NEAR = 20 };

typedef struct pc_suite_report {
    uint64_t cases;                                            /* new cases run (replays not included) */
    uint64_t failed_cases;                                     /* of those, how many failed */
    uint64_t counts[PC_MAX_PROPERTIES][PC_PROP_OUTCOME_COUNT]; /* per-pass and final property calls, summed */
    uint64_t property_failed_cases[PC_MAX_PROPERTIES];
    uint64_t other_failed_cases; /* crash, timeout, generator and harness errors */
    uint32_t n_families;         /* pc_gen_family_count() */
    bool *family_selected;
    uint64_t *family_cases, *family_failed;
    uint64_t transpose_oracle_cases, transpose_at_optimum, ref_runs, passes_changed;
    uint64_t replayed, replay_still_failing, replay_removed, replay_skipped, db_bad_entries, db_saved;
    /* of the replays still failing: with the signature they were recorded with, and with another one */
    uint64_t replay_same_signature, replay_other_signature;
    char db_bad_first[1024]; /* the first unreadable database entry's reason */
    size_t n_failed;
    pc_suite_failed_case *failed; /* replays first, then by case index */
    size_t n_signatures;
    pc_suite_signature *signatures; /* in order of first appearance in `failed` */
    size_t known_failed; /* entries of `failed` whose signature is known: the rest are new failures */
    double seconds, shrink_seconds;
    bool stopped_by_time;
    bool stopped_early;     /* --fail-fast stopped the run ... */
    bool stopped_replayed;  /* ... at a replayed failure (else at a new case) */
    uint64_t stopped_order; /* ... whose order (case index, or position in the replay list) is this */
    /* per rewrite kind, new cases (not events) where it fired / nearly fired, and near-miss cases by reason
     */
    uint64_t rw_fired_cases[PC_RW_COUNT], rw_near_cases[PC_RW_COUNT];
    uint64_t rw_near_reason_cases[PC_RW_COUNT][PC_MISS_COUNT];
} pc_suite_report;

/* Whether `signature` is one of o->known. */
bool pc_suite_is_known(const pc_suite_options *o, const char *signature);

/* Whether kind k is below the coverage thresholds in r. */
bool pc_suite_rewrite_below(const pc_suite_report *r, size_t k);
/* The rewrite-coverage table (the summary's last section; `passcheck suite --stats` prints it alone). */
void pc_suite_print_coverage(FILE *out, const pc_suite_report *r);

void pc_suite_report_free(pc_suite_report *r);

/* Replays the database (or --replay), runs the cases, shrinks and saves one repro per signature. Returns
 * non-OK only when the runner itself failed (bad options, fork, OOM); failures are in the report. */
pc_status pc_suite_run(const pc_suite_options *o, pc_suite_report *rep, pc_error *err);

/* Reports (suite_report.c). `timing` adds the "timing" object (seconds, cases per second): everything else is
 * identical for any --jobs. JUnit: one testsuite per selected property with one testcase per family, plus a
 * "harness" testsuite for crashes, timeouts and generator errors; a failure's message is its signature, its
 * text the first failing case's message, seed, case and repro folder. */
void pc_suite_write_json(FILE *out, const pc_suite_options *o, const pc_suite_report *r, bool timing);
void pc_suite_write_junit(FILE *out, const pc_suite_options *o, const pc_suite_report *r, bool timing);
/* The summary tables (per property, per family, transpose optimum rate, signatures with repro paths). */
void pc_suite_print_summary(FILE *out, const pc_suite_options *o, const pc_suite_report *r);

/* The report's property slots: every registered property, then o->check.extra when set (at most
 * PC_MAX_PROPERTIES); the run counts by slot and the report writers (suite_report.c) print by slot. */
size_t pc_suite_n_slots(const pc_suite_options *o);
const char *pc_suite_slot_name(const pc_suite_options *o, size_t i);
bool pc_suite_slot_enabled(const pc_suite_options *o, size_t i);
bool pc_suite_is_property_name(const pc_suite_options *o, const char *name, size_t *index);

/* ---------------------------------------------------------------------------------------------------------------
 * Isolation internals shared by pc_case_check_isolated and the suite (properties/runner/isolate.c).
 */

/* Work done in a forked child, sending results through `fd` with the pc_iso_send_* functions. */
typedef pc_proc_fn pc_iso_child_fn;

/* What a child reported, decoded by pc_iso_finish. */
typedef struct pc_iso_outcome {
    bool have_choices;
    uint32_t *choices; /* malloc'ed */
    size_t n_choices;
    char last_pass[64]; /* the last pass the child finished ("" before the first) */
    bool have_result;
    pc_status status; /* of the check (or of generation, when gen_failed) */
    bool gen_failed;
    char message[1024]; /* with a non-OK status */
    pc_check_result res;
} pc_iso_outcome;

void pc_iso_outcome_free(pc_iso_outcome *o);

/* Forks a child running fn(ctx, fd) (pc_proc_start); the caller waits with pc_proc_poll until pc_proc_done.
 */
pc_status pc_iso_start(pc_proc *job, pc_iso_child_fn fn, void *ctx, double timeout, pc_error *err);
/* Reaps the child (killing it after a timeout) and decodes its stream. A crash, a non-zero exit or a timeout
 * becomes out->res.failed with property "crash" (kind: the signal name, or "exit-N") or "timeout", and pass =
 * the last pass the child finished; a crash before the choices came back has pass "generate". Frees the job's
 * slot. */
void pc_iso_finish(pc_proc *job, pc_iso_outcome *out);

/* Child side. */
void pc_iso_send_choices(int fd, const uint32_t *values, size_t n);
void pc_iso_send_pass(int fd, const char *pass);
/* pc_check_config.on_pass of a child: ctx points to the fd; sends the pass just finished. */
void pc_iso_on_pass(void *ctx, const char *pass);
void pc_iso_send_result(int fd, pc_status status, bool gen_failed, const char *message,
                        const pc_check_result *res);

/* A suite case in a child: generate (random from the seed, or replaying `replay`), send the choices, check,
 * send the result. */
typedef struct pc_iso_case_ctx {
    const pc_gen_config *gen;
    const pc_check_config *check;
    uint64_t case_seed, index;
    bool replaying; /* replay `replay` (NULL with n_replay 0: all zeros) instead of drawing from case_seed */
    const uint32_t *replay;
    size_t n_replay;
    const char *inject; /* faults to enable in the child on top of the inherited ones; NULL: none */
    pc_suite_generate_fn generate;
    pc_suite_check_fn check_fn;
} pc_iso_case_ctx;

void pc_iso_case_child(void *ctx, int fd);

#ifdef __cplusplus
}
#endif

#endif
