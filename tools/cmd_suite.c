/* passcheck suite: generate random valid graphs, run every pass, check every property, shrink each distinct
 * failure to a repro. The runner is properties/runner/suite.c; this file is its command line: options, the
 * banner, progress, the summary and the report files. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "tools/cli.h"
#include "properties/runner/suite.h"

#define CMD           "suite"
#define SUITE_VERSION PC_VERSION

static const char *const DEFAULT_OUT = "passcheck-failures";
static const uint64_t DEFAULT_SEED = 1;
/* About a minute on 2 cores with the default families: a Release build ran 2000 cases in 3.4 s with --jobs 2
 * (580 cases/s, on a shared, loaded machine), so 30000 cases take 50-60 s. */
static const uint64_t DEFAULT_CASES = 30000;
/* Special values (NaN, +-Inf, -0) in a share of default cases: the passes whose IEEE exactness matters
 * (Relu/Clip merging, pruning, min/max folding) meet them in every default run. */
enum { DEFAULT_SPECIAL_PERCENT = 10 };
static const uint32_t MAX_JOBS = 256;
static const double MAX_SECONDS = 7 * 24 * 3600;

void pc_cmd_suite_help(FILE *out)
{
    fprintf(
        out,
        "usage: passcheck suite [--cases N | --time SEC] [--seed S] [--jobs J] [--family F...] [--property "
        "P...]\n"
        "                       [--ep LIST] [--oracle ort] [--shard I/N] [--junit FILE] [--json FILE]\n"
        "                       [--replay DIR] [--out DIR] [--inject FAULT,...] [--max-nodes N] [--timeout "
        "SEC]\n"
        "                       [--special-values PERCENT] [--shrink-time SEC] [--no-shrink] [--quiet] "
        "[--stats]\n"
        "                       [--known FILE...] [--fail-fast]\n"
        "       passcheck suite --list-families | --list-properties | --list-faults\n\n"
        "Generates random valid graphs, runs the pass pipeline on each and checks every property after "
        "every\n"
        "pass. Case i uses a seed derived from (--seed, i) and a family drawn from it, and runs in its own\n"
        "process with a deadline, so a crash or hang is a failure ('crash', 'timeout'), not a dead suite.\n"
        "Failures saved in the database (DIR/.db) by earlier runs are replayed first and dropped once they "
        "pass;\n"
        "each distinct failure signature (property@pass[/kind]) is shrunk and written to "
        "DIR/<signature>-<hash>.\n\n"
        "  --cases N          cases to run (default %" PRIu64 ")\n"
        "  --time SEC         run cases until SEC seconds have passed instead\n"
        "  --seed S           run seed, decimal or 0x hex (default %" PRIu64 ")\n"
        "  --jobs J           cases checked in parallel (default: the number of CPUs); results do not\n"
        "                     depend on J\n"
        "  --family F         only these generator families (repeatable, or comma-separated)\n"
        "  --property P       only these properties (repeatable, or comma-separated)\n"
        "  --ep LIST          EPs for every case (e.g. nhwc,cpu) instead of each case's own\n"
        "  --oracle ort       also run every original graph on ONNX Runtime and compare\n"
        "  --shard I/N        run only cases with index %% N == I-1 (split a run across machines)\n"
        "  --junit FILE       JUnit XML: a testsuite per property, a testcase per family\n"
        "  --json FILE        the summary and every failure as JSON\n"
        "  --replay DIR       only replay the failures in DIR (a repro folder, a database or an --out "
        "folder);\n"
        "                     a repro folder's repro.onnx is checked with its inputs and case.txt settings;\n"
        "                     nothing is written, unless --out says where the repros go\n"
        "  --out DIR          repro folders and the failure database (default %s/; with --replay: none)\n"
        "  --inject F,...     enable planted faults (--list-faults) to prove the suite catches them\n"
        "  --max-nodes N      generated ops per graph (default 12)\n"
        "  --special-values P percent of cases (0..100, default %u) whose inputs hold NaN, +-Inf, -0, huge\n"
        "                     and subnormal elements now and then (drawn per case from its seed; the\n"
        "                     reference decides what the passes must preserve)\n"
        "  --timeout SEC      per-case deadline (default 60)\n"
        "  --shrink-time SEC  shrinking budget per failure signature (default 5)\n"
        "  --no-shrink        write failures unshrunk\n"
        "  --known FILE       known findings: failure signatures (property@pass[/kind]), one per line, '#'\n"
        "                     comments; cases failing with one are reported as known, not shrunk or saved,\n"
        "                     and do not fail the run (repeatable)\n"
        "  --fail-fast        stop starting cases at the first case that fails with a signature not known;\n"
        "                     every case before it is checked (the counts then depend on --jobs)\n"
        "  --quiet            no banner, progress or shrink notes: only the summary\n"
        "  --stats            print only the rewrite-coverage table (per rewrite kind, the cases where it\n"
        "                     fired and nearly fired; '<<' marks fewer than 50 / 20): no banner, progress,\n"
        "                     other tables or timing; the exit code is the run's\n"
        "  --list-families, --list-properties, --list-faults\n"
        "                     print 'name  description' per line and exit\n\n",
        DEFAULT_CASES, DEFAULT_SEED, DEFAULT_OUT, DEFAULT_SPECIAL_PERCENT);
    fprintf(
        out,
        "Output: a banner (seed, families, properties, config and the command to rerun), progress on\n"
        "stderr (a bar on a terminal), then per-property and per-family tables, the transpose-optimum\n"
        "rate, each failure signature with its repro folder, and the rewrite-coverage table. Everything\n"
        "but the last line (timing) is the same for any --jobs (without --fail-fast).\n"
        "Exit codes: 0 every case passed (or failed only with --known signatures), 1 a case failed\n"
        "(property failure, crash, timeout, generator or harness error, or a replayed failure still\n"
        "failing), 2 usage error, 3 a report file or the --out folder cannot be written, 4 internal error\n");
}

/* ---------------------------------------------------------------------------------------------------------------
 * Options.
 */
typedef struct suite_args {
    const char *cases, *time, *seed, *jobs, *ep, *oracle, *shard, *junit, *json, *replay, *out, *inject;
    const char *max_nodes, *timeout, *shrink_time, *special_values;
    pc_cli_list family_list, property_list, known_files; /* as given */
    pc_strbuf families, properties;                      /* comma-joined; s NULL when not given */
    pc_known_list known;                                 /* the --known files' signatures */
    bool list_faults, list_properties, list_families, no_shrink, quiet, stats, fail_fast;
} suite_args;

static int parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    return pc_cli_parse_u64(CMD, opt, s, lo, hi, out);
}

static int parse_seconds(const char *opt, const char *s, double *out)
{
    return pc_cli_parse_seconds(CMD, opt, s, MAX_SECONDS, out);
}

static int parse_args(int argc, char **argv, suite_args *a)
{
#define SUITE_OPT(name, kind, field)                                                                         \
    {                                                                                                        \
        name, NULL, kind, offsetof(suite_args, field)                                                        \
    }
    static const pc_cli_opt opts[] = {
        SUITE_OPT("--cases", PC_CLI_STRING, cases),
        SUITE_OPT("--time", PC_CLI_STRING, time),
        SUITE_OPT("--seed", PC_CLI_STRING, seed),
        SUITE_OPT("--jobs", PC_CLI_STRING, jobs),
        SUITE_OPT("--ep", PC_CLI_STRING, ep),
        SUITE_OPT("--oracle", PC_CLI_STRING, oracle),
        SUITE_OPT("--shard", PC_CLI_STRING, shard),
        SUITE_OPT("--junit", PC_CLI_STRING, junit),
        SUITE_OPT("--json", PC_CLI_STRING, json),
        SUITE_OPT("--replay", PC_CLI_STRING, replay),
        SUITE_OPT("--out", PC_CLI_STRING, out),
        SUITE_OPT("--inject", PC_CLI_STRING, inject),
        SUITE_OPT("--max-nodes", PC_CLI_STRING, max_nodes),
        SUITE_OPT("--special-values", PC_CLI_STRING, special_values),
        SUITE_OPT("--timeout", PC_CLI_STRING, timeout),
        SUITE_OPT("--shrink-time", PC_CLI_STRING, shrink_time),
        SUITE_OPT("--family", PC_CLI_LIST, family_list),
        SUITE_OPT("--property", PC_CLI_LIST, property_list),
        SUITE_OPT("--known", PC_CLI_LIST, known_files),
        SUITE_OPT("--fail-fast", PC_CLI_FLAG, fail_fast),
        SUITE_OPT("--list-faults", PC_CLI_FLAG, list_faults),
        SUITE_OPT("--list-properties", PC_CLI_FLAG, list_properties),
        SUITE_OPT("--list-families", PC_CLI_FLAG, list_families),
        SUITE_OPT("--no-shrink", PC_CLI_FLAG, no_shrink),
        SUITE_OPT("--quiet", PC_CLI_FLAG, quiet),
        SUITE_OPT("--stats", PC_CLI_FLAG, stats),
    };
#undef SUITE_OPT
    int rc = pc_cli_parse_args(CMD, argc, argv, opts, sizeof opts / sizeof opts[0], a, NULL);
    /* --family and --property are repeatable and comma-separated: one comma-joined list each from here on */
    for (size_t i = 0; rc == PC_EXIT_OK && i < a->family_list.n; i++)
        pc_strbuf_printf(&a->families, "%s%s", i ? "," : "", a->family_list.items[i]);
    for (size_t i = 0; rc == PC_EXIT_OK && i < a->property_list.n; i++)
        pc_strbuf_printf(&a->properties, "%s%s", i ? "," : "", a->property_list.items[i]);
    pc_cli_list_free(&a->family_list);
    pc_cli_list_free(&a->property_list);
    for (size_t i = 0; rc == PC_EXIT_OK && i < a->known_files.n; i++) {
        pc_error err;
        if (pc_known_list_load(&a->known, a->known_files.items[i], &err) != PC_OK)
            rc = err.status == PC_ERR_NOMEM ? PC_EXIT_INTERNAL
                                            : pc_cli_usage_error(CMD, "--known %s", err.message);
    }
    pc_cli_list_free(&a->known_files);
    if (rc == PC_EXIT_OK && (a->families.oom || a->properties.oom)) rc = PC_EXIT_INTERNAL;
    return rc;
}

/* The families named in a comma-separated list, as static names (from the family table). */
static int resolve_families(const char *list, const char ***out, uint32_t *n)
{
    *out = NULL;
    *n = 0;
    if (!list) return PC_EXIT_OK;
    size_t count = 1;
    for (const char *p = list; *p; p++)
        count += *p == ',';
    const char **names = calloc(count, sizeof *names);
    if (!names) return PC_EXIT_INTERNAL;
    const char *p = list;
    uint32_t k = 0;
    while (*p) {
        size_t len = strcspn(p, ",");
        const pc_gen_family *found = NULL;
        for (size_t i = 0; i < pc_gen_family_count() && !found; i++) {
            const pc_gen_family *f = pc_gen_family_at(i);
            if (strlen(f->name) == len && memcmp(f->name, p, len) == 0) found = f;
        }
        if (!found) {
            free(names);
            return pc_cli_usage_error(
                CMD, "--family: unknown family '%.*s' (passcheck suite --list-families)", (int)len, p);
        }
        bool dup = false;
        for (uint32_t j = 0; j < k; j++)
            dup |= names[j] == found->name;
        if (!dup) names[k++] = found->name;
        p += len;
        if (*p == ',') p++;
    }
    if (!k) {
        free(names);
        return pc_cli_usage_error(CMD, "--family: empty list");
    }
    *out = names;
    *n = k;
    return PC_EXIT_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Progress: a bar on a terminal, a line per 10% (or per 10 s with --time) otherwise.
 */
typedef struct progress_state {
    bool tty;
    bool bar_shown;
    double last_line;
    uint64_t last_decile;
    const char *last_phase;
} progress_state;

static void progress_cb(void *ctx, const pc_suite_progress *p)
{
    progress_state *ps = ctx;
    bool new_phase = !ps->last_phase || strcmp(ps->last_phase, p->phase) != 0;
    if (new_phase && ps->bar_shown) {
        fputs("\r\033[K", stderr);
        ps->bar_shown = false;
    }
    if (new_phase) {
        ps->last_phase = p->phase;
        ps->last_decile = 0;
        ps->last_line = 0;
    }
    if (strcmp(p->phase, "shrink") == 0) return; /* the runner's log says what it shrinks */
    double rate = p->seconds > 0 ? (double)p->done / p->seconds : 0;
    const char *what = strcmp(p->phase, "replay") == 0 ? "saved failures replayed" : "cases";
    if (ps->tty) {
        enum { WIDTH = 30 };
        double frac = p->total ? (double)p->done / (double)p->total
                               : (p->time_limit > 0 ? p->seconds / p->time_limit : 0);
        if (frac > 1) frac = 1;
        int fill = (int)(frac * WIDTH);
        char bar[WIDTH + 1];
        for (int i = 0; i < WIDTH; i++)
            bar[i] = i < fill ? '#' : '.';
        bar[WIDTH] = '\0';
        if (p->total)
            fprintf(stderr, "\r[%s] %" PRIu64 "/%" PRIu64 " %s, %" PRIu64 " failed, %.0f/s\033[K", bar,
                    p->done, p->total, what, p->failed, rate);
        else
            fprintf(stderr, "\r[%s] %" PRIu64 " %s in %.0f/%.0f s, %" PRIu64 " failed, %.0f/s\033[K", bar,
                    p->done, what, p->seconds, p->time_limit, p->failed, rate);
        ps->bar_shown = true;
        if (p->total && p->done == p->total) {
            fputs("\r\033[K", stderr);
            ps->bar_shown = false;
        }
        return;
    }
    bool line = false;
    if (p->total) {
        uint64_t decile = p->done * 10 / p->total;
        line = decile > ps->last_decile;
        if (line) ps->last_decile = decile;
    } else if (p->seconds - ps->last_line >= 10) {
        line = true;
        ps->last_line = p->seconds;
    }
    if (!line) return;
    if (p->total)
        fprintf(stderr, "suite: %" PRIu64 "/%" PRIu64 " %s, %" PRIu64 " failed, %.1f s\n", p->done, p->total,
                what, p->failed, p->seconds);
    else
        fprintf(stderr, "suite: %" PRIu64 " %s, %" PRIu64 " failed, %.1f s\n", p->done, what, p->failed,
                p->seconds);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Report files: written to a temporary name and renamed.
 */
typedef struct report_ctx {
    const pc_suite_options *o;
    const pc_suite_report *r;
} report_ctx;

static void write_json_report(FILE *f, const void *ctx)
{
    const report_ctx *rc = ctx;
    pc_suite_write_json(f, rc->o, rc->r, true);
}

static void write_junit_report(FILE *f, const void *ctx)
{
    const report_ctx *rc = ctx;
    pc_suite_write_junit(f, rc->o, rc->r, true);
}

/* --out must be a folder we can create files in (it is created when missing). */
static int check_out_dir(const char *dir)
{
    struct stat sb;
    if (stat(dir, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode)) {
            fprintf(stderr, "passcheck " CMD ": --out %s: not a directory\n", dir);
            return PC_EXIT_BAD_INPUT;
        }
        if (access(dir, W_OK) != 0) {
            fprintf(stderr, "passcheck " CMD ": --out %s: %s\n", dir, strerror(errno));
            return PC_EXIT_BAD_INPUT;
        }
    }
    return PC_EXIT_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * The command.
 */
static void print_banner(FILE *out, const pc_suite_options *o, const char *rerun)
{
    fprintf(out, "passcheck suite %s\n", SUITE_VERSION);
    if (o->replay_dir)
        fprintf(out, "replaying the failures in %s\n", o->replay_dir);
    else if (o->seconds > 0)
        fprintf(out, "seed %" PRIu64 ", cases for %g s, shard %u/%u\n", o->seed, o->seconds,
                o->shard_index + 1, o->shard_count);
    else
        fprintf(out, "seed %" PRIu64 ", %" PRIu64 " cases, shard %u/%u\n", o->seed, o->n_cases,
                o->shard_index + 1, o->shard_count);
    fputs("families:", out);
    if (o->families)
        for (uint32_t i = 0; i < o->n_families; i++)
            fprintf(out, " %s", o->families[i]);
    else
        for (size_t i = 0; i < pc_gen_family_count(); i++)
            fprintf(out, " %s", pc_gen_family_at(i)->name);
    fputs("\nproperties:", out);
    for (size_t i = 0; i < pc_property_count() && i < PC_MAX_PROPERTIES; i++)
        if (o->check.enabled[i]) fprintf(out, " %s", pc_property_at(i)->name);
    fprintf(out,
            "\nconfig: level %d, EPs %s, oracle %s, max nodes %" PRIu32 ", max elements %" PRIu64
            ", special values in %u%% of cases, case timeout %g s, shrink %s, faults %s\n",
            o->check.level, o->check.ep_override ? o->check.ep_override : "(each case's own)",
            o->check.oracle_ort ? "ort" : "none", o->gen.max_nodes, o->gen.max_elements, o->special_percent,
            o->case_timeout, o->shrink ? "on" : "off", o->inject ? o->inject : "none");
    if (o->shrink) fprintf(out, "shrink budget: %g s per failure signature\n", o->shrink_opts.max_seconds);
    if (o->out_dir)
        fprintf(out, "failures: %s/ (database %s/)\n", o->out_dir, o->db_dir ? o->db_dir : "(none)");
    else
        fprintf(out, "failures: not written (a replay without --out)\n");
    fprintf(out, "rerun: %s\n", rerun);
}

static void build_rerun(pc_strbuf *b, const pc_suite_options *o, const suite_args *a)
{
    pc_strbuf_printf(b, "passcheck suite");
    if (a->replay) {
        pc_strbuf_printf(b, " --replay %s", a->replay);
    } else {
        pc_strbuf_printf(b, " --seed %" PRIu64, o->seed);
        if (o->seconds > 0)
            pc_strbuf_printf(b, " --time %g", o->seconds);
        else
            pc_strbuf_printf(b, " --cases %" PRIu64, o->n_cases);
        if (a->shard) pc_strbuf_printf(b, " --shard %s", a->shard);
    }
    if (a->families.s) pc_strbuf_printf(b, " --family %s", a->families.s);
    if (a->properties.s) pc_strbuf_printf(b, " --property %s", a->properties.s);
    if (a->ep) pc_strbuf_printf(b, " --ep %s", a->ep);
    if (a->oracle) pc_strbuf_printf(b, " --oracle %s", a->oracle);
    if (a->max_nodes) pc_strbuf_printf(b, " --max-nodes %s", a->max_nodes);
    if (a->special_values) pc_strbuf_printf(b, " --special-values %s", a->special_values);
    if (a->inject) pc_strbuf_printf(b, " --inject %s", a->inject);
    if (a->fail_fast) pc_strbuf_printf(b, " --fail-fast");
    if (a->out) pc_strbuf_printf(b, " --out %s", a->out);
    if (a->timeout) pc_strbuf_printf(b, " --timeout %s", a->timeout);
}

int pc_cmd_suite(int argc, char **argv)
{
    suite_args a;
    memset(&a, 0, sizeof a);
    pc_suite_options o;
    pc_suite_options_default(&o);
    const char **families = NULL;
    char *db_dir = NULL;
    pc_strbuf rerun = {0};
    pc_error err;
    pc_error_clear(&err);
    pc_suite_report rep;
    memset(&rep, 0, sizeof rep);
    bool have_rep = false;
    int rc = parse_args(argc, argv, &a);
    if (rc != PC_EXIT_OK) goto done;

    if (a.list_faults || a.list_properties || a.list_families) {
        if (a.list_families)
            for (size_t i = 0; i < pc_gen_family_count(); i++)
                printf("%s  %s\n", pc_gen_family_at(i)->name, pc_gen_family_at(i)->summary);
        if (a.list_properties)
            for (size_t i = 0; i < pc_property_count(); i++)
                printf("%s  %s\n", pc_property_at(i)->name, pc_property_at(i)->summary);
        if (a.list_faults)
            for (int f = 0; f < PC_FAULT_COUNT; f++)
                printf("%s  %s\n", pc_fault_name((pc_fault)f), pc_fault_description((pc_fault)f));
        goto done;
    }

    uint64_t v;
    if (a.cases && a.time) {
        rc = pc_cli_usage_error(CMD, "--cases and --time exclude each other");
        goto done;
    }
    if (a.replay && (a.cases || a.time || a.shard || a.seed)) {
        rc = pc_cli_usage_error(CMD, "--replay runs only the saved failures: it takes no %s",
                                a.cases   ? "--cases"
                                : a.time  ? "--time"
                                : a.shard ? "--shard"
                                          : "--seed");
        goto done;
    }
    if (a.replay && a.stats) {
        rc = pc_cli_usage_error(CMD, "--stats counts the rewrites of new cases: --replay runs none");
        goto done;
    }
    o.seed = DEFAULT_SEED;
    o.n_cases = DEFAULT_CASES;
    if (a.cases && (rc = parse_u64("--cases", a.cases, 1, UINT64_MAX / 2, &o.n_cases)) != PC_EXIT_OK)
        goto done;
    if (a.time) {
        if ((rc = parse_seconds("--time", a.time, &o.seconds)) != PC_EXIT_OK) goto done;
        o.n_cases = UINT64_MAX / 2;
    }
    if (a.seed && (rc = parse_u64("--seed", a.seed, 0, UINT64_MAX, &o.seed)) != PC_EXIT_OK) goto done;
    if (a.jobs) {
        if ((rc = parse_u64("--jobs", a.jobs, 1, MAX_JOBS, &v)) != PC_EXIT_OK) goto done;
        o.jobs = (uint32_t)v;
    } else {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN); /* safe as a default: the results do not depend on it */
        o.jobs = cpus < 1 ? 1 : cpus > (long)MAX_JOBS ? MAX_JOBS : (uint32_t)cpus;
    }
    if (a.max_nodes) {
        if ((rc = parse_u64("--max-nodes", a.max_nodes, 1, 10000, &v)) != PC_EXIT_OK) goto done;
        o.gen.max_nodes = (uint32_t)v;
    }
    o.special_percent = DEFAULT_SPECIAL_PERCENT;
    if (a.special_values) {
        if ((rc = parse_u64("--special-values", a.special_values, 0, 100, &v)) != PC_EXIT_OK) goto done;
        o.special_percent = (uint32_t)v;
    }
    if (a.timeout && (rc = parse_seconds("--timeout", a.timeout, &o.case_timeout)) != PC_EXIT_OK) goto done;
    if (a.shrink_time &&
        (rc = parse_seconds("--shrink-time", a.shrink_time, &o.shrink_opts.max_seconds)) != PC_EXIT_OK)
        goto done;
    if (a.shard) {
        unsigned long long si = 0, sn = 0;
        char extra;
        if (sscanf(a.shard, "%llu/%llu%c", &si, &sn, &extra) != 2 || sn < 1 || sn > UINT32_MAX || si < 1 ||
            si > sn || a.shard[0] < '0' || a.shard[0] > '9') {
            rc = pc_cli_usage_error(CMD, "bad --shard '%s': expected I/N with 1 <= I <= N", a.shard);
            goto done;
        }
        o.shard_index = (uint32_t)(si - 1);
        o.shard_count = (uint32_t)sn;
    }
    if (a.oracle) {
        if (strcmp(a.oracle, "ort") != 0) {
            rc = pc_cli_usage_error(CMD, "bad --oracle '%s': the only oracle is 'ort'", a.oracle);
            goto done;
        }
        o.check.oracle_ort = true;
    }
    if (a.ep) {
        pc_ep_registry *reg = NULL;
        const pc_ep **eps = NULL;
        uint32_t n_eps = 0;
        rc = pc_cli_resolve_eps(CMD, NULL, a.ep, NULL, &reg, &eps, &n_eps, NULL);
        pc_ep_registry_free(reg);
        if (rc != PC_EXIT_OK) goto done;
        o.check.ep_override = a.ep;
    }
    if (a.properties.s && pc_check_config_select(&o.check, a.properties.s, &err) != PC_OK) {
        rc = err.status == PC_ERR_USAGE ? pc_cli_usage_error(CMD, "--property: %s", err.message)
                                        : pc_cli_report(CMD, &err);
        goto done;
    }
    if ((rc = resolve_families(a.families.s, &families, &o.n_families)) != PC_EXIT_OK) goto done;
    o.families = families;
    if (a.inject) {
        /* before any fork: the children inherit the enabled faults */
        if (pc_fault_enable_list(a.inject, &err) != PC_OK) {
            rc = err.status == PC_ERR_USAGE ? pc_cli_usage_error(CMD, "--inject: %s", err.message)
                                            : pc_cli_report(CMD, &err);
            goto done;
        }
        o.inject = a.inject;
    }
    if (a.replay) {
        struct stat sb;
        if (stat(a.replay, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            rc = pc_cli_usage_error(CMD, "--replay: '%s' is not a folder", a.replay);
            goto done;
        }
        o.replay_dir = a.replay;
    }
    /* a replay writes nothing unless told where (--out): the saved failure is its own repro */
    o.out_dir = a.out ? a.out : a.replay ? NULL : DEFAULT_OUT;
    if (o.out_dir) {
        size_t dlen = strlen(o.out_dir) + 5;
        db_dir = malloc(dlen);
        if (!db_dir) {
            rc = PC_EXIT_INTERNAL;
            goto done;
        }
        snprintf(db_dir, dlen, "%s/.db", o.out_dir);
        o.db_dir = db_dir;
    }
    o.shrink = !a.no_shrink;
    o.known = &a.known;
    o.fail_fast = a.fail_fast;
    if ((o.out_dir && (rc = check_out_dir(o.out_dir)) != PC_EXIT_OK) ||
        (rc = pc_cli_check_writable(CMD, "--json", a.json)) != PC_EXIT_OK ||
        (rc = pc_cli_check_writable(CMD, "--junit", a.junit)) != PC_EXIT_OK)
        goto done;

    build_rerun(&rerun, &o, &a);
    if (rerun.oom) {
        rc = PC_EXIT_INTERNAL;
        goto done;
    }
    o.command = rerun.s;
    progress_state ps = {isatty(STDERR_FILENO) == 1, false, 0, 0, NULL};
    if (!a.quiet && !a.stats) {
        print_banner(stdout, &o, rerun.s);
        fflush(stdout);
        fprintf(stderr, "passcheck " CMD ": %u job%s\n", o.jobs, o.jobs == 1 ? "" : "s");
        o.progress = progress_cb;
        o.progress_ctx = &ps;
        o.log = stderr;
    }
    /* --oracle ort turns the ort-oracle property on whatever --property selected (it is off by default) */
    for (size_t i = 0; o.check.oracle_ort && i < pc_property_count(); i++)
        if (pc_property_at(i) == &pc_prop_ort_oracle) o.check.enabled[i] = true;
    if (pc_suite_run(&o, &rep, &err) != PC_OK) {
        if (ps.bar_shown) fputs("\r\033[K", stderr);
        rc = err.status == PC_ERR_USAGE ? pc_cli_usage_error(CMD, "%s", err.message)
                                        : pc_cli_report(CMD, &err);
        goto done;
    }
    have_rep = true;
    if (ps.bar_shown) fputs("\r\033[K", stderr);
    if (a.stats) {
        pc_suite_print_coverage(stdout, &rep);
    } else {
        pc_suite_print_summary(stdout, &o, &rep);
        printf("%" PRIu64 " cases in %.2f s (%.1f cases/s)", rep.cases, rep.seconds,
               rep.seconds > 0 ? (double)rep.cases / rep.seconds : 0.0);
        if (rep.shrink_seconds > 0) printf(", shrinking %.2f s", rep.shrink_seconds);
        printf("\n");
    }
    fflush(stdout);
    rc = rep.n_failed > rep.known_failed ? PC_EXIT_CHECK_FAILED : PC_EXIT_OK;
    report_ctx rctx = {&o, &rep};
    int wrc;
    /* A report that cannot be written outranks the verdict: the caller asked for it and did not get it. */
    if (a.json &&
        (wrc = pc_cli_write_file_atomic(CMD, "--json", a.json, write_json_report, &rctx)) != PC_EXIT_OK)
        rc = wrc;
    if (a.junit &&
        (wrc = pc_cli_write_file_atomic(CMD, "--junit", a.junit, write_junit_report, &rctx)) != PC_EXIT_OK)
        rc = wrc;
done:
    if (have_rep) pc_suite_report_free(&rep);
    free(families);
    free(db_dir);
    pc_strbuf_free(&rerun);
    pc_strbuf_free(&a.families);
    pc_strbuf_free(&a.properties);
    pc_known_list_free(&a.known);
    return rc;
}
