/*
 * shrink_internal.h — the shrinker's engine with a pluggable failure predicate, and the state its two phases
 * share (properties/shrink/shrink.c: choice-sequence phase and driver; properties/shrink/shrink_graph.c:
 * graph phase).
 *
 * pc_shrink_case and pc_shrink_model (shrink.h) are these engines with the predicate "pc_case_check fails
 * with the target signature". Tests use the _fn forms with a synthetic predicate (say, "the graph still holds
 * a Conv whose output feeds a Relu"), whose minimal answer is known independently of the shrinker:
 *
 *     static pc_status conv_relu(void *ctx, const pc_case *c, pc_check_result *res, bool *interesting,
 *                                pc_error *err)
 *     {
 *         *interesting = has_conv_then_relu(c->model);
 *         return PC_OK;
 *     }
 *     pc_shrink_model_fn(&kase, conv_relu, NULL, &opts, &result, &err);   // result.kase: exactly 2 nodes
 */
#ifndef PC_SHRINK_INTERNAL_H
#define PC_SHRINK_INTERNAL_H

#include "properties/shrink/shrink.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Decides whether a candidate is still "interesting" (fails the way the target did). It may fill *res (zeroed
 * on entry; the shrinker frees it with pc_check_result_free and keeps the accepted one in the result). A
 * non-OK status means the candidate could not be checked at all (its EP list no longer parses, OOM): the
 * shrinker rejects the candidate and goes on. */
typedef pc_status (*pc_shrink_check_fn)(void *ctx, const pc_case *c, pc_check_result *res, bool *interesting,
                                        pc_error *err);

/* pc_shrink_case/pc_shrink_model with a predicate instead of a target failure. Both first check the starting
 * case: when it is not interesting the result is PC_ERR_CHECK_FAILED ("does not fail ... on replay") and *out
 * stays empty. */
pc_status pc_shrink_case_fn(const pc_gen_config *gen, const uint32_t *choices, size_t n_choices,
                            pc_shrink_check_fn check, void *check_ctx, const pc_shrink_options *opts,
                            pc_shrink_result *out, pc_error *err);
pc_status pc_shrink_model_fn(const pc_case *c, pc_shrink_check_fn check, void *check_ctx,
                             const pc_shrink_options *opts, pc_shrink_result *out, pc_error *err);

/* ---------------------------------------------------------------------------------------------------------------
 * The candidate worker (properties/runner/isolate.c): isolated checks without a fork per check.
 *
 * pc_case_check_isolated forks a child per check; in a sanitizer build that fork plus the leak check at the
 * child's exit cost ~3x the check itself. A worker is one forked process that checks case after case sent to
 * it over a socket, with the same deadline per check and the same outcome: a check that crashes, overruns or
 * sends too much kills the worker and is reported exactly as a forked child's would be (crash@PASS/SIGSEGV,
 * timeout@PASS, ...); the next check forks a new worker. The parent never dies with it.
 *
 * What differs from a child per check is only what happens at the child's exit: a forked child's leak check
 * runs after every case, the worker's once, when pc_iso_worker_destroy ends it normally (it then covers every
 * case the worker checked; a non-zero status is returned and the sanitizer's report is on stderr). So a check
 * that leaks but otherwise passes is "passed" here where a forked child says crash@PASS/exit-23: for a target
 * that is a property failure both are "not interesting", but a target that is itself a crash or a timeout
 * must use pc_case_check_isolated (the shrinker does). Leaks are still found: by every suite case (forked,
 * leak-checked at exit), the in-process unit tests, and the worker's own exit.
 *
 * The worker checks with *cc as it was when the worker was forked (the first check): cc must not change
 * between checks. `check` NULL is pc_case_check (tests pass a synthetic one).
 */
typedef pc_status (*pc_iso_check_fn)(const pc_case *c, const pc_check_config *cc, pc_check_result *res,
                                     pc_error *err);
typedef struct pc_iso_worker pc_iso_worker;

typedef struct pc_iso_worker_stats {
    uint32_t forks;     /* workers started (1 + one per crash or timeout) */
    uint32_t requests;  /* checks a worker answered */
    uint32_t fallbacks; /* checks forked instead (a case the request cannot carry exactly) */
} pc_iso_worker_stats;

pc_status pc_iso_worker_create(const pc_check_config *cc, pc_iso_check_fn check, double timeout_seconds,
                               pc_iso_worker **out, pc_error *err);
/* Same contract as pc_case_check_isolated. */
pc_status pc_iso_worker_check(pc_iso_worker *w, const pc_case *c, pc_check_result *res, pc_error *err);
/* Ends the worker (it exits normally, running a sanitizer build's leak check) and frees w. Returns the
 * worker's wait status (0: it exited cleanly, or never ran). stats may be NULL. */
int pc_iso_worker_destroy(pc_iso_worker *w, pc_iso_worker_stats *stats);

/* ---------------------------------------------------------------------------------------------------------------
 * Shared by the two phases.
 */
typedef struct pc_shrink_state {
    pc_shrink_check_fn check;
    void *check_ctx;
    const pc_shrink_options *opts;
    double t_start;
    uint32_t checks, accepted;
    bool exhausted;     /* budget ran out: every loop stops */
    double phase_limit; /* > 0: seconds after t_start at which the current phase yields to the next */
    pc_case best;       /* the smallest interesting case so far (owned) */
    pc_check_result best_res;
    uint64_t best_version; /* bumped on every accepted candidate (invalidates per-best caches) */
    bool graph_edited;
} pc_shrink_state;

/* Whether another candidate may be checked (sets s->exhausted when the whole budget is gone; false without
 * that once the current phase's share, phase_limit, is used up). */
bool pc_shrink_budget_left(pc_shrink_state *s);
/* Checks a candidate and takes it: when interesting it becomes s->best (the old best is freed) and *accepted
 * is set, otherwise it is freed. `step` names the edit for the log. Non-OK only for failures of the shrinker
 * itself. */
pc_status pc_shrink_try(pc_shrink_state *s, pc_case *cand, const char *step, bool *accepted, pc_error *err);
/* Live node count of a case's main graph. */
uint32_t pc_shrink_case_nodes(const pc_case *c);
/* A deep copy: the model through the saver and the loader (so it is also proven to serialize), the input data
 * by reference (never modified), the strings duplicated. On failure *dst is left empty. */
pc_status pc_shrink_case_copy(const pc_case *src, pc_case *dst, pc_error *err);

/* Phase 2 on s->best until no edit helps or the budget runs out. */
pc_status pc_shrink_graph_phase(pc_shrink_state *s, pc_error *err);

#ifdef __cplusplus
}
#endif

#endif
