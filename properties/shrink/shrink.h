/*
 * shrink.h — reduce a failing case to a minimal repro that fails the same way, and write the repro folder.
 *
 * Worked example: a generated case failed; shrink it and save the repro.
 *
 *     pc_shrink_options so;
 *     pc_shrink_options_default(&so);                    // 5 s budget, graph phase on, candidates forked
 *     pc_shrink_result sr;
 *     if (pc_shrink_case(&gen_cfg, choices, n_choices, &check_cfg, &res.failure, &so, &sr, &err) == PC_OK) {
 *         pc_repro_info info = {.seed = seed, .gen = &gen_cfg, .check = &check_cfg, .original =
 * &res.failure}; pc_repro_write("passcheck-failures/numerics@fuse_conv_bn-1a2b", &sr, &info, &err);
 *     }
 *     pc_shrink_result_free(&sr);
 *
 * Phase 1 edits the choice sequence (delete spans, zero spans, lower values, sort) and regenerates; phase 2
 * edits the graph (remove a node and reconnect a compatible value, cut to an earlier output, replace a value
 * by a graph input or a constant holding its reference value, shrink dims and ranks, drop attributes and
 * annotations, drop EPs). A candidate is kept only when pc_failure_same holds against the target failure.
 */
#ifndef PC_SHRINK_H
#define PC_SHRINK_H

#include <stdio.h>

#include "generators/gen.h"
#include "properties/property.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pc_shrink_options {
    double max_seconds; /* wall-clock budget (default 5); the best case so far is returned when it runs out */
    uint32_t max_checks; /* candidate checks (default 5000) */
    bool graph_phase;    /* default true */
    bool isolate; /* run each candidate in a forked child with a timeout (default true: crashes shrink) */
    double case_timeout; /* seconds per candidate when isolated (default 10) */
    FILE *log;           /* one line per accepted step; NULL: quiet */
} pc_shrink_options;

void pc_shrink_options_default(pc_shrink_options *o);

typedef struct pc_shrink_result {
    uint32_t *choices; /* the shrunk choice sequence (malloc'ed; NULL for pc_shrink_model) */
    size_t n_choices;
    bool graph_edited;     /* phase 2 changed the graph: the choices no longer regenerate `kase` exactly */
    pc_case kase;          /* the minimal failing case */
    pc_check_result check; /* its check result (failed, same signature as the target) */
    uint32_t checks, accepted;
    double seconds;
    uint32_t nodes_before, nodes_after;
    bool budget_exhausted; /* stopped by max_seconds/max_checks rather than at a local minimum */
    /* the candidates were judged with alloc_every on (an alloc-failure target whose starting case fails that
     * way too): the repro must replay with it (pc_repro_write records it) */
    bool alloc_every;
} pc_shrink_result;

void pc_shrink_result_free(pc_shrink_result *r);

/* Both phases, starting from a generated case's choices. PC_ERR_CHECK_FAILED when the starting case does not
 * fail the same way (a flaky or mis-recorded failure), PC_ERR_USAGE for an ERROR target (the property could
 * not judge: never a shrinkable failure): nothing is shrunk. An alloc-failure target is shrunk
 * with cc's alloc_every on when its starting case fails the same way so (out->alloc_every), with cc as given
 * otherwise. */
pc_status pc_shrink_case(const pc_gen_config *gen, const uint32_t *choices, size_t n_choices,
                         const pc_check_config *cc, const pc_failure *target, const pc_shrink_options *opts,
                         pc_shrink_result *out, pc_error *err);
/* Phase 2 only, for an outside model (passcheck shrink MODEL). The case is copied; the caller keeps it. */
pc_status pc_shrink_model(const pc_case *c, const pc_check_config *cc, const pc_failure *target,
                          const pc_shrink_options *opts, pc_shrink_result *out, pc_error *err);

/* Checks a case in a forked child with a timeout: a crash or hang becomes a failure with property "crash" or
 * "timeout" and pass = the last pass the child finished ("" before the first). Same contract as
 * pc_case_check, callbacks included: cc's on_pass and on_outcome run in the caller's process, in order, as
 * the child's reports arrive (the judgments made before a crash are all seen). */
pc_status pc_case_check_isolated(const pc_case *c, const pc_check_config *cc, double timeout_seconds,
                                 pc_check_result *res, pc_error *err);

/* ---------------------------------------------------------------------------------------------------------------
 * The repro folder: repro.onnx, input_N.pb, before.onnx/after.onnx (graphs around the failing pass) with .dot
 * and .svg pictures (graphviz `dot`, when installed), eps.txt (EP file text), case.txt (everything replay
 * needs: family, generator config, choices, EP list, layer assignment, properties, level, injected faults),
 * README.md (signature, message, seed, choices, the exact replay command). Written into a temporary folder
 * and renamed, so a failure leaves nothing half-written.
 */
typedef struct pc_repro_info {
    uint64_t seed; /* the suite seed and case index that found it (0/0 for outside models) */
    uint64_t case_index;
    const pc_gen_config *gen; /* NULL for outside models */
    const pc_check_config *check;
    const char *inject;         /* faults enabled, comma-separated; NULL: none */
    const pc_failure *original; /* the failure before shrinking (reported next to the shrunk one) */
    uint32_t original_nodes;
} pc_repro_info;

pc_status pc_repro_write(const char *dir, const pc_shrink_result *r, const pc_repro_info *info,
                         pc_error *err);

/* pc_repro_write into a folder of its own below `out` (properties/runner/repro.c), for an outside model's
 * shrink: out is created when missing (one level), the folder is named "<signature>-<8 hex digits>" (the
 * failure signature with characters unfit for a folder name as '-', then a hash of the minimal model's
 * bytes), so the same failure of the same minimal model lands in the same folder, replaced as a whole. *dir
 * receives the folder's path (the caller frees it; NULL on failure). Errors: PC_ERR_IO "--out: <out>: cannot
 * create the folder: <why>"; the saver's; pc_repro_write's; PC_ERR_NOMEM. */
pc_status pc_repro_write_in(const char *out, const pc_shrink_result *r, const pc_repro_info *info, char **dir,
                            pc_error *err);

/* Graphviz DOT of a model: one box per node (op, name or a stable "#N" for an unnamed one, the attributes
 * that decide layouts and types — axis, perm, pads, kernel_shape, strides, group, to, ... —, EP, layer_ann),
 * value edges labelled with type and shape. A value the model leaves untyped is labelled with what shape
 * inference gets on a private copy, marked "~" (the model's own types are drawn as they are: a pass's wrong
 * type must show). */
pc_status pc_model_write_dot(const pc_model *m, FILE *out, pc_error *err);
/* The pictures of the graphs before and after a pass, each node the pass added, changed (inputs, outputs or
 * attributes) or removed outlined (green, orange, red) and labelled so (properties/match.h's identity). */
pc_status pc_model_write_dot_pair(const pc_model *before, const pc_model *after, FILE *out_before,
                                  FILE *out_after, pc_error *err);

#ifdef __cplusplus
}
#endif

#endif
