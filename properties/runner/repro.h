/*
 * repro.h — reading a repro folder back (pc_repro_write in shrink.h writes it): case.txt is the one file
 * replay needs besides the model and its inputs.
 *
 * Worked example: replay a repro folder (what `passcheck suite --replay DIR` does, in a forked child).
 *
 *     pc_repro_case rc;
 *     if (pc_repro_case_load("passcheck-failures/x", &rc, &err) != PC_OK) ...  // names file:line
 *     pc_check_config cc;
 *     pc_case kase;
 *     if (pc_repro_case_check_config(&rc, &cc, &err) == PC_OK &&
 *         pc_repro_case_load_case(&rc, &kase, &err) == PC_OK) {
 *         if (rc.inject) pc_fault_enable_list(rc.inject, &err);
 *         ... pc_case_check(&kase, &cc, &res, &err); pc_failure_same(&res.failure, &rc.failure) ...
 *         pc_case_free(&kase);
 *     }
 *     pc_repro_case_free(&rc);
 *
 * Replay always checks repro.onnx with its input files, never the case the choices regenerate: after the
 * shrinker's graph phase (graph_edited=1) those differ, and the saved model is the repro a reader looks at.
 *
 * case.txt format (version 1): UTF-8 text, one `key=value` per line, `#` starts a comment line, blank lines
 * ignored. Values are escaped: backslash as `\\`, newline `\n`, carriage return `\r`, tab `\t`. Unknown keys
 * are an error (a typo must not silently change what is replayed). Keys, in the order written:
 *   version                 1
 *   signature               property@pass[/kind] (informative: property, pass and kind below are what count)
 *   property, pass, kind    the failure signature the replay must reproduce (kind may be empty)
 *   outcome                 fail | error
 *   message                 the failure's message
 *   seed, case_index        suite seed and case index that found it (0 for outside models)
 *   family                  generator family ("" for outside models: no generator settings follow)
 *   max_nodes, max_elements, max_rank, allow_special, annotate, random_eps: pc_gen_config (0/1)
 *   choices                 the shrunk choice sequence, space-separated decimals (may be empty)
 *   graph_edited            1 when the shrinker's graph phase edited the model after the last
 *                           regeneration: the choices then regenerate a bigger case; replay repro.onnx
 *   ep_list                 EPs in priority order ("nhwc,cpu"): the run's --ep override when it had one
 *   ep_file                 "eps.txt" when the case has an EP description file (absent otherwise)
 *   layer_assignment        the layer-assignment string (absent when none)
 *   properties              comma-separated enabled properties
 *   level                   pipeline level
 *   oracle_ort              0/1;  ort_dir: the onnxruntime-node folder when one was given
 *   stop_after_pass         absent when the whole pipeline ran
 *   exact_oracle_max_nodes  transpose-minimality exact search bound
 *   alloc_every             1: alloc-failure tries every allocation (the shrinker judged it so); absent: 0
 *   inject                  comma-separated injected faults (absent when none)
 *   model                   repro.onnx
 *   inputs                  number of input files: input_0.pb .. input_{n-1}.pb, in graph-input order
 */
#ifndef PC_REPRO_H
#define PC_REPRO_H

#include "properties/shrink/shrink.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { PC_REPRO_CASE_VERSION = 1 };

typedef struct pc_repro_case {
    int version;
    pc_failure failure; /* property, pass, kind, outcome, message */
    uint64_t seed, case_index;
    bool has_gen;      /* a generated case: `gen` and `choices` are meaningful */
    pc_gen_config gen; /* gen.family points into this struct */
    uint32_t *choices;
    size_t n_choices;
    bool graph_edited;
    char *ep_list;          /* never NULL after a successful load ("cpu" when the file had none) */
    char *ep_text;          /* contents of eps.txt when ep_file is set, else NULL */
    char *layer_assignment; /* NULL: none */
    char *properties;       /* NULL: every property */
    int level;
    bool oracle_ort;
    char *ort_dir;         /* NULL: default */
    char *stop_after_pass; /* NULL: whole pipeline */
    uint32_t exact_oracle_max_nodes;
    bool alloc_every;
    char *inject;     /* NULL: no faults */
    char *model_path; /* DIR/repro.onnx */
    uint32_t n_inputs;
    char **input_paths;   /* DIR/input_N.pb */
    char *family_storage; /* private */
} pc_repro_case;

/* Parses DIR/case.txt (and DIR/eps.txt when it names one). Errors name the file and line. */
pc_status pc_repro_case_load(const char *dir, pc_repro_case *out, pc_error *err);
void pc_repro_case_free(pc_repro_case *rc); /* leaves *rc zeroed */

/* The check configuration the case was found with (pc_check_config_default, then the case's settings).
 * Strings point into rc, which must outlive cc. An unknown property name is PC_ERR_USAGE. */
pc_status pc_repro_case_check_config(const pc_repro_case *rc, pc_check_config *cc, pc_error *err);

/* Loads repro.onnx and its inputs into a case (EP text, EP list and layer assignment copied; free with
 * pc_case_free). */
pc_status pc_repro_case_load_case(const pc_repro_case *rc, pc_case *out, pc_error *err);

/* pc_repro_write (shrink.h) without the pictures, before/after graphs and README: repro.onnx, input_N.pb,
 * eps.txt and case.txt, everything pc_repro_case_load and pc_repro_case_load_case read. The failure database
 * keeps graph-shrunk failures this way (suite.h). Same temporary-folder-and-rename contract. */
pc_status pc_repro_write_replay_files(const char *dir, const pc_shrink_result *r, const pc_repro_info *info,
                                      pc_error *err);

#ifdef __cplusplus
}
#endif

#endif
