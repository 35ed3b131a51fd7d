/*
 * roundtrip.h — the loader/saver check behind `passcheck roundtrip`: for every model, load and verify it,
 * save it to bytes, reload them, compare the two IRs, save again and require identical bytes. Folders are
 * searched recursively for *.onnx files (the ONNX backend test layout keeps one model.onnx per case folder);
 * a reviewed skip list turns the failures it names into skips.
 *
 *     pc_roundtrip_options o;
 *     pc_roundtrip_options_default(&o);
 *     o.skip_list = "tests/roundtrip/skip.txt";
 *     const char *paths[] = {"/usr/share/libonnx-testdata/data/node"};
 *     pc_roundtrip *run;
 *     if (pc_roundtrip_open(&o, paths, 1, &run, &err) != PC_OK) ...  // a bad PATH, skip list, --save-dir,
 * --json int verdict = pc_roundtrip_run(run);  // PASS/SKIP/FAIL lines and the summary on stdout
 *     pc_roundtrip_free(run);
 */
#ifndef PC_RUNNER_ROUNDTRIP_H
#define PC_RUNNER_ROUNDTRIP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/passcheck.h"

typedef struct pc_roundtrip_options {
    const char *skip_list; /* 'case/model.onnx reason' per line, '#' comments: a listed case that fails is
                              skipped, one that passes is reported; NULL: none */
    const char *json;      /* per-case results as JSON, written as the cases run; NULL: none */
    const char *save_dir;  /* also save every model to DIR/NNNN.onnx and list 'original<TAB>saved' in
                              DIR/manifest.tsv; NULL: none */
    bool quiet;            /* print only failures (and passing skip-list entries) and the summary */
} pc_roundtrip_options;

/* no skip list, no files, every case printed */
void pc_roundtrip_options_default(pc_roundtrip_options *o);

typedef struct pc_roundtrip pc_roundtrip;

/* Reads the skip list, collects the models (a file is one model, whatever its name; a folder gives the *.onnx
 * files below it, symbolic links not followed, sorted per PATH), checks --save-dir and opens its manifest and
 * the JSON file, in that order. Errors (messages as the command prints them after "passcheck roundtrip: "):
 * PC_ERR_IO for an unreadable skip list, PATH or folder, or a manifest or JSON file that cannot be written;
 * PC_ERR_VALUE for a skip-list entry without a reason; PC_ERR_USAGE when --save-dir is not a folder;
 * PC_ERR_NOMEM. Options are borrowed until pc_roundtrip_free. */
pc_status pc_roundtrip_open(const pc_roundtrip_options *o, const char *const *paths, size_t n_paths,
                            pc_roundtrip **out, pc_error *err);

/* Checks the models in order, printing to stdout a PASS line per passing model (not with quiet; always for a
 * skip-list entry that passes), a SKIP line per listed failure (not with quiet), a FAIL line per failure, and
 * the summary ("roundtrip: N models, X MB saved, T s", "N passed, N failed, N skipped"); the JSON file and
 * the manifest are written as it goes and closed at the end. Returns PC_EXIT_OK, PC_EXIT_CHECK_FAILED when a
 * model failed, PC_EXIT_INTERNAL when the JSON file or manifest could not be closed, or PC_EXIT_BAD_INPUT
 * (after "passcheck roundtrip: no .onnx files found" on stderr) when there was no model. Call once. */
int pc_roundtrip_run(pc_roundtrip *r);

/* NULL is fine. */
void pc_roundtrip_free(pc_roundtrip *r);

#endif
