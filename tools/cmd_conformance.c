/* passcheck conformance DIR...: the command line of the ONNX backend test runner
 * (properties/runner/conformance.h: finding, running and comparing cases, expectations, errata and report
 * files). This file parses the arguments, resolves the EPs, and hands over; everything else is the runner's.
 */
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"
#include "properties/runner/conformance.h"

#define CMD "conformance"

void pc_cmd_conformance_help(FILE *out)
{
    fprintf(
        out,
        "usage: passcheck conformance DIR... [--engine reference|runtime] [--filter REGEX] [--junit FILE]\n"
        "                             [--json FILE] [--strict] [--timeout SECONDS] [--expect FILE]\n"
        "                             [--write-expect FILE] [--errata FILE] [--quiet]\n"
        "                             [--optimize LEVEL [--ep LIST] [--ep-file FILE]]\n\n"
        "Runs ONNX backend test cases (model.onnx + test_data_set_N/{input,output}_K.pb) through an "
        "executor\n"
        "and compares every output with the recorded one: types and shapes exact, integers, bools and "
        "strings\n"
        "exact, floats NaN positions, then infinities, then |actual - expected| <= atol + rtol |expected|\n"
        "(default atol 1e-7, rtol 1e-3, as the ONNX backend tests).\n"
        "A DIR holding model.onnx is one case; otherwise each immediate subfolder holding one is a case. "
        "Case\n"
        "names are the last two path components (node/test_abs). Each case runs in its own process with a\n"
        "timeout, so a crash or hang fails that case only.\n\n"
        "Outcomes: passed, differs, shape, type, load-error, run-error, unsupported and erratum (both\n"
        "skipped).\n\n"
        "  --engine NAME       what runs the models: 'reference' (the naive executor, default) or 'runtime'\n"
        "                      (core/runtime's kernels on the graph as given, after --optimize's pipeline\n"
        "                      when that is given); a node without a kernel makes the case unsupported.\n"
        "                      --executor is the same option\n"
        "  --filter REGEX      run only cases whose name matches the POSIX extended REGEX\n"
        "  --timeout SECONDS   per-case limit (default 60); a case over it is killed and is a run-error\n"
        "  --strict            unsupported cases also fail the run\n"
        "  --expect FILE       compare every outcome with FILE ('case outcome' per line, '#' comments);\n"
        "                      exit 0 when all match (even if cases fail), 1 on any mismatch\n"
        "  --write-expect FILE write the outcomes in that format\n"
        "  --errata FILE       cases whose recorded outputs are known to be wrong ('case outcome reason' "
        "per\n"
        "                      line): when such a case ends with the listed outcome it is an erratum "
        "(skipped)\n"
        "  --json FILE         per-case records (outcome, message, seconds, ops, failing outputs) + summary\n"
        "  --junit FILE        JUnit XML (one testcase per case)\n"
        "  --quiet             print only failures (no SKIP lines, no per-op table) and the summary\n"
        "  --optimize LEVEL    run the pass pipeline up to LEVEL (0-3) on each model first, verifying the\n"
        "                      graph after every pass; a pipeline error is a run-error\n"
        "  --ep LIST           EPs for partitioning, in priority order (default cpu), e.g. nhwc,cpu\n"
        "  --ep-file FILE      further EP descriptions (docs/ep.md)\n"
        "  --atol X, --rtol X  the float bounds for every case (default 1e-7 and 1e-3)\n"
        "  --tolerances FILE   per-op bounds, 'op atol rtol' per line ('#' comments; ops as the per-op "
        "table\n"
        "                      names them): a case holding the op is compared with the larger bounds\n\n"
        "Prints a FAIL/SKIP line per case that does not pass, per-op statistics, and 'N passed, N failed,\n"
        "N skipped'. exit codes: 0 no case failed (or all outcomes as expected), 1 a case failed or an\n"
        "expectation did not hold, 2 usage error (bad option, DIR, REGEX, executor or timeout), 3 an\n"
        "unreadable --expect file or an output file that cannot be written, 4 internal error\n");
}

typedef struct conf_options {
    const char *executor, *engine, *filter, *junit, *json, *expect, *write_expect, *errata;
    const char *optimize, *ep_list, *ep_file, *timeout_text, *atol_text, *rtol_text, *tolerances;
    double timeout;
    bool strict, quiet;
    pc_cli_list dirs;
} conf_options;

#define CONF_OPT(name, kind, field)                                                                          \
    {                                                                                                        \
        name, NULL, kind, offsetof(conf_options, field)                                                      \
    }
static const pc_cli_opt conf_opts[] = {
    CONF_OPT("--executor", PC_CLI_STRING, executor),
    CONF_OPT("--engine", PC_CLI_STRING, engine),
    CONF_OPT("--filter", PC_CLI_STRING, filter),
    CONF_OPT("--junit", PC_CLI_STRING, junit),
    CONF_OPT("--json", PC_CLI_STRING, json),
    CONF_OPT("--timeout", PC_CLI_STRING, timeout_text),
    CONF_OPT("--expect", PC_CLI_STRING, expect),
    CONF_OPT("--write-expect", PC_CLI_STRING, write_expect),
    CONF_OPT("--errata", PC_CLI_STRING, errata),
    CONF_OPT("--optimize", PC_CLI_STRING, optimize),
    CONF_OPT("--ep", PC_CLI_STRING, ep_list),
    CONF_OPT("--ep-file", PC_CLI_STRING, ep_file),
    CONF_OPT("--strict", PC_CLI_FLAG, strict),
    CONF_OPT("--quiet", PC_CLI_FLAG, quiet),
    CONF_OPT("--atol", PC_CLI_STRING, atol_text),
    CONF_OPT("--rtol", PC_CLI_STRING, rtol_text),
    CONF_OPT("--tolerances", PC_CLI_STRING, tolerances),
};
#undef CONF_OPT
static const pc_cli_positional conf_dirs = {"DIR", PC_CLI_LIST, offsetof(conf_options, dirs)};

/* --atol / --rtol: a finite number >= 0. */
static int parse_bound(const char *opt, const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (!s[0] || *end || errno || !isfinite(v) || v < 0)
        return pc_cli_usage_error(CMD, "bad %s '%s': expected a number >= 0", opt, s);
    *out = v;
    return PC_EXIT_OK;
}

int pc_cmd_conformance(int argc, char **argv)
{
    conf_options opt = {0};
    pc_ep_registry *eps = NULL;
    pc_conformance *run = NULL;
    int rc = pc_cli_parse_args(CMD, argc, argv, conf_opts, sizeof conf_opts / sizeof conf_opts[0], &opt,
                               &conf_dirs);
    if (rc != PC_EXIT_OK) goto done;
    if (opt.executor && opt.engine && strcmp(opt.executor, opt.engine) != 0) {
        rc = pc_cli_usage_error(CMD, "--engine %s and --executor %s disagree (they are one option)",
                                opt.engine, opt.executor);
        goto done;
    }
    if (opt.engine) opt.executor = opt.engine;
    if (!opt.executor) opt.executor = "reference";
    opt.timeout = PC_CONFORMANCE_DEFAULT_TIMEOUT;
    if (opt.timeout_text &&
        (rc = pc_cli_parse_seconds(CMD, "--timeout", opt.timeout_text, PC_CONFORMANCE_MAX_TIMEOUT,
                                   &opt.timeout)) != PC_EXIT_OK)
        goto done;
    if (strcmp(opt.executor, "reference") != 0 && strcmp(opt.executor, "runtime") != 0) {
        rc = pc_cli_usage_error(CMD, "unknown engine '%s' (available: reference, runtime)", opt.executor);
        goto done;
    }
    if ((opt.ep_list || opt.ep_file) && !opt.optimize) {
        rc = pc_cli_usage_error(CMD, "%s needs --optimize", opt.ep_list ? "--ep" : "--ep-file");
        goto done;
    }
    pc_conformance_options co;
    pc_conformance_options_default(&co);
    co.executor = opt.executor;
    co.filter = opt.filter;
    co.expect = opt.expect;
    co.errata = opt.errata;
    co.timeout = opt.timeout;
    co.strict = opt.strict;
    co.quiet = opt.quiet;
    co.tolerances = opt.tolerances;
    if ((opt.atol_text && (rc = parse_bound("--atol", opt.atol_text, &co.atol)) != PC_EXIT_OK) ||
        (opt.rtol_text && (rc = parse_bound("--rtol", opt.rtol_text, &co.rtol)) != PC_EXIT_OK))
        goto done;
    if (opt.optimize) {
        char *end = NULL;
        long level = strtol(opt.optimize, &end, 10);
        if (!opt.optimize[0] || *end || level < PC_LEVEL_BASIC || level > PC_LEVEL_MAX) {
            rc = pc_cli_usage_error(CMD, "bad --optimize '%s': expected a level from %d to %d", opt.optimize,
                                    PC_LEVEL_BASIC, PC_LEVEL_MAX);
            goto done;
        }
        const pc_ep **list = NULL;
        uint32_t n_list = 0;
        rc = pc_cli_resolve_eps(CMD, opt.ep_file, opt.ep_list ? opt.ep_list : "cpu", NULL, &eps, &list,
                                &n_list, NULL);
        if (rc != PC_EXIT_OK) goto done;
        co.optimize_level = (int)level;
        co.eps = list;
        co.n_eps = n_list;
    }
    pc_error err;
    pc_error_clear(&err);
    if (pc_conformance_open(&co, opt.dirs.items, opt.dirs.n, &run, &err) != PC_OK) {
        if (err.status == PC_ERR_USAGE) {
            rc = pc_cli_usage_error(CMD, "%s", err.message);
        } else {
            fprintf(stderr, "passcheck " CMD ": %s\n", err.message);
            rc = pc_status_exit_code(err.status);
        }
        goto done;
    }
    if ((rc = pc_cli_check_writable(CMD, "--json", opt.json)) != PC_EXIT_OK ||
        (rc = pc_cli_check_writable(CMD, "--junit", opt.junit)) != PC_EXIT_OK ||
        (rc = pc_cli_check_writable(CMD, "--write-expect", opt.write_expect)) != PC_EXIT_OK)
        goto done;
    rc = pc_conformance_run(run);
    /* A file that cannot be written outranks the verdict: the caller asked for it and did not get it. */
    int wrc;
    if (opt.json && (wrc = pc_cli_write_file_atomic(CMD, "--json", opt.json, pc_conformance_write_json,
                                                    run)) != PC_EXIT_OK)
        rc = wrc;
    if (opt.junit && (wrc = pc_cli_write_file_atomic(CMD, "--junit", opt.junit, pc_conformance_write_junit,
                                                     run)) != PC_EXIT_OK)
        rc = wrc;
    if (opt.write_expect &&
        (wrc = pc_cli_write_file_atomic(CMD, "--write-expect", opt.write_expect,
                                        pc_conformance_write_expectations, run)) != PC_EXIT_OK)
        rc = wrc;
done:
    pc_conformance_free(run);
    pc_cli_list_free(&opt.dirs);
    pc_ep_registry_free(eps); /* also frees the --ep list */
    return rc;
}
