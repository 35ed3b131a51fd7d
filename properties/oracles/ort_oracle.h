/*
 * ort_oracle.h — ONNX Runtime 1.30 (onnxruntime-node) as an outside oracle for the reference executor: the
 * `ort-oracle` property (properties/prop_ort_oracle.c) and the client of the node helper
 * tools/ort/ort_run.js. docs/oracle.md has the tolerance rules and the outcome table.
 *
 * Worked example: run a model on ORT and compare with the reference outputs.
 *
 *     pc_ort_result r;
 *     if (pc_ort_run(NULL, bytes, size, n, names, inputs, &r, &err) != PC_OK) ...  // no node/ORT
 *     if (r.status == PC_ORT_OK) {
 *         char msg[512]; const char *kind = NULL;
 *         if (pc_ort_compare_outputs(model, ref, &r, msg, sizeof msg, &kind) == PC_PROP_FAIL) ...
 *     }
 *     pc_ort_result_free(&r);
 *
 * The server: one node process per "owner" process, started on first use (or by pc_ort_server_start),
 * listening on a Unix socket in a private temporary folder. Processes forked from the owner find its address
 * in their copy of this module's state and open their own connection, so with the suite's fork-per-case
 * isolation one node process serves every case of a worker, and a case killed mid-request only drops its own
 * connection. A process that cannot reach an inherited server starts its own. The node process exits when its
 * owner's pipe to its stdin closes (the owner exited, normally or not); the owner also stops it at exit
 * (atexit) and removes the folder.
 */
#ifndef PC_ORT_ORACLE_H
#define PC_ORT_ORACLE_H

#include "properties/property.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Float tolerance of the oracle: |ort - ref| <= PC_ORT_ATOL + PC_ORT_RTOL * |ref| after NaN positions and inf
 * signs; integers and bools exact. Why these values: docs/oracle.md. */
#define PC_ORT_RTOL 1e-4
#define PC_ORT_ATOL 1e-5

typedef enum pc_ort_status {
    PC_ORT_OK = 0,
    PC_ORT_REJECTED = 1,    /* ORT refused the model at session creation (message = ORT's) */
    PC_ORT_RUN_FAILED = 2,  /* the session was created but run() failed */
    PC_ORT_UNSUPPORTED = 3, /* an element type the helper cannot pass to or from onnxruntime-node */
} pc_ort_status;

typedef struct pc_ort_result {
    pc_ort_status status;
    char message[1024]; /* ORT's message when status != OK (cut to fit) */
    uint32_t n_outputs;
    char **names; /* ORT's output names, session order */
    pc_data **outputs;
} pc_ort_result;

void pc_ort_result_free(pc_ort_result *r);

/* node_modules folder holding onnxruntime-node: `dir` when non-NULL, else $PC_ORT_DIR, else
 * $HOME/.cache/passcheck/ort/node_modules (where ci/deps installs it). Returns a static or caller's string.
 * */
const char *pc_ort_dir(const char *dir);

/* Runs a serialized model on ORT (CPU EP, graph optimizations disabled, one thread) with inputs fed by name.
 * Non-OK only when the oracle itself is unavailable or broke: node not on PATH ($PC_NODE overrides), no
 * onnxruntime-node under the folder, the helper script missing ($PC_ORT_RUN_JS overrides), the server died or
 * did not answer within $PC_ORT_TIMEOUT seconds (default 120). The message names the path at fault. */
pc_status pc_ort_run(const char *ort_dir, const uint8_t *model, size_t model_size, uint32_t n_inputs,
                     const char *const *names, pc_data *const *inputs, pc_ort_result *out, pc_error *err);

/* A timed run (`passcheck bench --compare-ort`): ORT at optimization `level` (0 disabled, 1 basic, 2
 * extended, 3 all) with `threads` intra-op threads runs `warmup` untimed then `runs` timed runs (>= 1) in one
 * session. */
typedef struct pc_ort_timed_options {
    int level;
    uint32_t threads, warmup, runs;
} pc_ort_timed_options;
typedef struct pc_ort_times {
    uint32_t n_runs;
    double *ms;        /* per timed run, in order */
    double rss_before; /* the node process's resident bytes before the session was created */
    double rss_peak;   /* its peak resident bytes after the runs (the whole life of the process) */
} pc_ort_times;
void pc_ort_times_free(pc_ort_times *t);
/* As pc_ort_run, with the options above; *times is filled when out->status is PC_ORT_OK (free it with
 * pc_ort_times_free). RSS figures are meaningful when this is the server's first request (a fresh server per
 * process: call it before anything else here starts one). */
pc_status pc_ort_run_timed(const char *ort_dir, const uint8_t *model, size_t model_size, uint32_t n_inputs,
                           const char *const *names, pc_data *const *inputs, const pc_ort_timed_options *o,
                           pc_ort_result *out, pc_ort_times *times, pc_error *err);

/* Starts the server in this process now (idempotent: OK at once when one is reachable). The suite calls it in
 * each worker before forking cases so the cases share it; without it the property starts one lazily in
 * whichever process runs the case (with fork-per-case: one node start per case, ~150 ms). */
pc_status pc_ort_server_start(const char *ort_dir, pc_error *err);
/* Stops the server this process owns (no-op otherwise); also registered with atexit. */
void pc_ort_server_stop(void);

/* The oracle's verdict on one run: every output of `m` (graph order) against ORT's output of the same name.
 * PC_PROP_PASS, or PC_PROP_FAIL with kind "ort-disagrees" and a message naming the output, the element and
 * both values. Exposed so tests can check that a perturbed reference output is caught. */
pc_prop_outcome pc_ort_compare_outputs(const pc_model *m, pc_data *const *ref, const pc_ort_result *ort,
                                       char *msg, size_t msg_size, const char **kind);

/* After pc_ort_compare_outputs failed on `m` run with `inputs` (msg and kind hold its verdict): re-runs the
 * reference to tell the explained differences from a disagreement (docs/oracle.md). PC_PROP_PASS when every
 * differing element is a QuantizeLinear output one step apart at a rounding tie of its float input;
 * PC_PROP_SKIP with kind "ort-resize-length" (msg: the spec reference; ORT cannot judge a case where it
 * departs from the spec) when the reference run with ORT's reading of Resize's length_resized agrees with
 * ORT; otherwise PC_PROP_FAIL with msg and kind unchanged. *ref_runs (NULL: not counted) grows by the
 * reference runs made. */
pc_prop_outcome pc_ort_explain(const pc_model *m, uint32_t n_inputs, pc_data *const *inputs,
                               const pc_ort_result *ort, uint32_t *ref_runs, char *msg, size_t msg_size,
                               const char **kind);

#ifdef __cplusplus
}
#endif

#endif
