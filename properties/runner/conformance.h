/*
 * conformance.h — the ONNX backend test runner behind `passcheck conformance`: finds cases (model.onnx +
 * test_data_set_N/{input,output}_K.pb), runs each in a forked child with a deadline (proc.h) through the
 * reference executor (optionally after the pass pipeline), compares every output with the recorded one
 * (pc_data_compare, rtol 1e-3, atol 1e-7), checks the outcomes against an expectation file, and writes the
 * JSON, JUnit and expectation files.
 *
 *     pc_conformance_options o;
 *     pc_conformance_options_default(&o);
 *     o.expect = "tests/conformance/expected.txt";
 *     const char *dirs[] = {"/usr/share/libonnx-testdata/data/node"};
 *     pc_conformance *run;
 *     if (pc_conformance_open(&o, dirs, 1, &run, &err) != PC_OK) ...  // PC_ERR_USAGE: a bad DIR or --filter
 *     int verdict = pc_conformance_run(run);       // FAIL/SKIP lines, per-op table, summary on stdout
 *     pc_conformance_write_json(f, run);           // also _junit, _expectations: pc_file_fill-shaped
 *     pc_conformance_free(run);
 *
 * Test hooks (only read when set; tests/conformance/run_crash_hang.sh): PC_CONFORMANCE_TEST_CRASH=<case>
 * makes that case's child die of SIGSEGV right after it sent its op list, PC_CONFORMANCE_TEST_HANG=<case>
 * makes it hang until killed.
 */
#ifndef PC_RUNNER_CONFORMANCE_H
#define PC_RUNNER_CONFORMANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/passcheck.h"

#define PC_CONFORMANCE_DEFAULT_TIMEOUT 60.0              /* seconds per case */
#define PC_CONFORMANCE_MAX_TIMEOUT     (7.0 * 24 * 3600) /* a week: beyond is a typo */

typedef struct pc_conformance_options {
    const char *executor;    /* "reference" (default) or "runtime" (core/runtime, graph as given) */
    const char *filter;      /* POSIX extended regex over case names ("node/test_abs"); NULL: every case */
    const char *expect;      /* 'case outcome' per line: the run is checked against it; NULL: none */
    const char *errata;      /* 'case outcome reason' per line: those outcomes become skips; NULL: none */
    double timeout;          /* seconds per case; the child is killed after it (a run-error) */
    bool strict;             /* unsupported cases fail the run too */
    bool quiet;              /* no SKIP lines, no per-op table */
    int optimize_level;      /* >= 0: the pass pipeline up to this level first, verified after every pass */
    const pc_ep *const *eps; /* with optimize_level >= 0: the EPs for partitioning, in priority order */
    uint32_t n_eps;
    double rtol,
        atol; /* float comparison |a - e| <= atol + rtol |e| (default: the backend tests' 1e-3, 1e-7) */
    /* 'op atol rtol' per line ('#' comments): a case whose model holds the op is compared with the larger of
     * these and the defaults above (the loosest override among its ops); NULL: none. A malformed line is
     * PC_ERR_VALUE naming the file and line, an unreadable file PC_ERR_IO. */
    const char *tolerances;
} pc_conformance_options;

/* reference executor, no filter, files or pipeline, 60 s per case */
void pc_conformance_options_default(pc_conformance_options *o);

typedef struct pc_conformance pc_conformance;

/* Finds the cases in dirs (a DIR holding model.onnx is one case, else each immediate subfolder holding one;
 * names are the last two path components), selects them with the filter and reads the expectation and errata
 * files. PC_ERR_USAGE for an unknown executor, a bad filter, a DIR without cases or two cases of one name;
 * PC_ERR_IO / PC_ERR_VALUE for an unreadable or malformed expectation or errata file (the message names the
 * file and line). Options and dirs are borrowed until pc_conformance_free. */
pc_status pc_conformance_open(const pc_conformance_options *o, const char *const *dirs, size_t n_dirs,
                              pc_conformance **out, pc_error *err);

/* Runs the cases in name order, one child at a time, printing to stdout a FAIL line for every failing case, a
 * SKIP line for every skipped one (not with quiet), the per-op table (not with quiet), the summary and, with
 * an expectation file, every mismatch; notes go to stderr. Returns PC_EXIT_OK, or PC_EXIT_CHECK_FAILED when a
 * case failed (strict: or was skipped), or with an expectation file when an outcome did not match it. */
int pc_conformance_run(pc_conformance *c);

/* The reports of a finished run (ctx: the pc_conformance), shaped as pc_file_fill callbacks for
 * pc_file_write_atomic. */
void pc_conformance_write_json(FILE *out, const void *ctx);
void pc_conformance_write_junit(FILE *out, const void *ctx);
void pc_conformance_write_expectations(FILE *out, const void *ctx);

void pc_conformance_free(pc_conformance *c);

#endif
