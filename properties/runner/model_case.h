/*
 * model_case.h — a case (generators/gen.h's pc_case) from a user's model, for the commands that check an
 * outside model (`passcheck shrink MODEL`): the model, its EP list, EP description text and layer assignment,
 * and the data of every graph input that is not an initializer, read from files or drawn from a seed.
 *
 *     pc_model_case_options o;
 *     pc_model_case_options_default(&o);          // EPs "cpu", random inputs from PC_MODEL_CASE_SEED
 *     o.inputs = "model_dir/test_data_set_0";     // or "a.pb,b.pb"
 *     pc_case kase;
 *     if (pc_case_from_model("model.onnx", &o, &kase, &err) != PC_OK) ...  // names the file or graph input
 *     ... pc_case_check(&kase, &cc, &res, &err) ...
 *     pc_case_free(&kase);
 *
 * Random data per element type: floats (float, double) uniform in [-2, 2), integers in [0, 4) (small, so
 * index-like inputs tend to stay in range), bools 0/1; a symbolic dim takes its size from `dims`
 * ("batch=4,seq=16"); without one, it and an unknown dim become 1, or are an error naming the input and dim
 * (PC_ERR_USAGE: give --dim or --inputs) when `require_dims` is set. One splitmix64
 * stream seeded with `seed` feeds the inputs in graph order, so the same model and seed give the same case.
 *
 * The messages name the command-line options the data comes from (--inputs, --ep-file): every command that
 * takes an outside model spells them so.
 */
#ifndef PC_RUNNER_MODEL_CASE_H
#define PC_RUNNER_MODEL_CASE_H

#include <stdint.h>

#include "generators/gen.h"

/* the seed random inputs are drawn from unless told otherwise: two runs on one model check the same case */
#define PC_MODEL_CASE_SEED 0x5eedull

typedef struct pc_model_case_options {
    const char *ep_list; /* EPs in priority order, e.g. "nhwc,cpu" (default "cpu") */
    const char *ep_file; /* an EP description file whose text the case carries (docs/ep.md); NULL: none */
    const char *layer_assignment; /* NULL: none */
    const char *inputs;           /* a folder of input_0.pb, input_1.pb, ... or comma-separated .pb files, one
                                     per graph input that is not an initializer, in graph order; NULL: random */
    uint64_t seed;                /* for random inputs (default PC_MODEL_CASE_SEED) */
    const char *dims;  /* "NAME=SIZE,..." for symbolic dims of random inputs (--dim); NULL: none. A malformed
                          entry, a size outside 1..PC_MODEL_CASE_MAX_DIM or a name no graph input has is
                          PC_ERR_USAGE naming it */
    bool require_dims; /* a symbolic or unknown dim of a random input without a size is an error */
} pc_model_case_options;

#define PC_MODEL_CASE_MAX_DIM 1048576

void pc_model_case_options_default(pc_model_case_options *o);

/* Loads the model at path and fills *out (family ""; free with pc_case_free; zeroed on failure). The EP list
 * and layer assignment are copied, not checked (pc_case_check parses them). Errors: the loader's, for the
 * model; PC_ERR_IO "--ep-file: <file>: cannot open: <why>" or "--ep-file: <file>: read error"; for input
 * data, the data loader's status with its message after "--inputs: graph input '<name>': <file>: ", PC_ERR_IO
 * "--inputs: N files for M graph inputs ..." or "--inputs: more files than the M graph inputs", and PC_ERR_IO
 * (not PC_ERR_UNSUPPORTED: a model the command cannot feed is bad input) for a graph input without data whose
 * type has no known rank or whose element type has no random data, or a data file of a kind the loader does
 * not support; PC_ERR_NOMEM. */
pc_status pc_case_from_model(const char *path, const pc_model_case_options *o, pc_case *out, pc_error *err);

#endif
