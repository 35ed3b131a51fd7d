/*
 * reference.h — passcheck's reference executor: the naive, independent oracle every property leans on.
 *
 * Worked example: run a model on one input and print the first output's description.
 *
 *     pc_model *m;  pc_error err;
 *     pc_model_load_file("model.onnx", NULL, &m, &err);
 *     int64_t dims[2] = {2, 3};
 *     pc_data *x = pc_data_new_tensor(PC_DTYPE_FLOAT, 2, dims, &err);   // zero-filled; write x->data
 *     pc_data **outs = NULL;
 *     if (pc_ref_run(m, 1, &x, &outs, &err) != PC_OK) {
 *         // PC_ERR_UNSUPPORTED names the op, its domain and opset; other codes name the node at fault
 *         fprintf(stderr, "%s\n", err.message);
 *     } else {
 *         char buf[128];
 *         puts(pc_data_describe(outs[0], buf, sizeof buf));
 *         pc_ref_free_outputs(m, outs);
 *     }
 *     pc_data_unref(x);
 *
 * Design: plain loops in NCHW over the IR as loaded; no BLAS, nothing shared with core's runtime kernels or
 * passes. Floating-point arithmetic is done in double and rounded to the element type on store; reductions,
 * convolutions and matrix products accumulate in double. Semantics follow the node's opset version (the
 * model's import for the node's domain). Anything not implemented fails with PC_ERR_UNSUPPORTED — never a
 * wrong answer.
 */
#ifndef PC_REFERENCE_H
#define PC_REFERENCE_H

#include "core/passcheck.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs model->graph. When n_inputs equals the number of graph inputs, inputs[i] feeds graph input i;
 * otherwise inputs feed, in order, the graph inputs that are not initializers (IR < 4 models list
 * initializers as inputs), and the rest take their initializer's value. A graph input left without a value is
 * an error. On success *outputs is a malloc'ed array of graph->n_outputs new references (free with
 * pc_ref_free_outputs). Inputs are not consumed. */
pc_status pc_ref_run(const pc_model *model, uint32_t n_inputs, pc_data *const *inputs, pc_data ***outputs,
                     pc_error *err);
void pc_ref_free_outputs(const pc_model *model, pc_data **outputs);

/* Observer of a run: called after every node that ran successfully (subgraph nodes included; node->graph
 * tells which graph) with its inputs (NULL = omitted) and outputs, borrowed for the call: take a reference to
 * keep one. */
typedef void (*pc_ref_node_hook)(void *ctx, const pc_node *node, pc_data *const *inputs,
                                 pc_data *const *outputs);

/* Settings of pc_ref_run_with_options; all-zero is exactly pc_ref_run. */
typedef struct pc_ref_options {
    /* Resize's coordinate transforms that use length_resized (align_corners, pytorch_half_pixel,
     * tf_crop_and_resize) take the integer output length, as ONNX Runtime does, instead
     * of scale * length_original, as the ONNX spec's reference implementation and backend test data do when
     * 'scales' is given (onnx/onnx#2462; docs/oracle.md). Not ONNX semantics: the ORT oracle uses it to tell
     * that known deviation of ORT from anything else. */
    bool resize_ort_lengths;
    /* Resize's input coordinates computed in float32 as ONNX Runtime does (scale = (float)size /
     * (float)length for 'sizes'), instead of exactly: where the exact coordinate sits on a step of the
     * nearest mode (an integer for floor/ceil, a half for the round modes), float32 can land on the other
     * side. Also only for the ORT oracle. */
    bool resize_float32_coordinates;
    pc_ref_node_hook on_node; /* NULL: none */
    void *on_node_ctx;
    /* Called after on_node; may replace a node's outputs before anything reads them: outputs[i] holds a
     * reference, so unref it and store another (same kind) to substitute. The runtime property pins
     * QuantizeLinear results to the runtime's this way (properties/prop_runtime.c). NULL: none. */
    void (*replace_outputs)(void *ctx, const pc_node *node, pc_data **outputs);
    void *replace_ctx;
} pc_ref_options;

/* pc_ref_run with options (NULL = defaults). */
pc_status pc_ref_run_with_options(const pc_model *model, const pc_ref_options *options, uint32_t n_inputs,
                                  pc_data *const *inputs, pc_data ***outputs, pc_error *err);

/* Whether the reference implements op_type in domain ("" = ai.onnx) at all (opset-specific gaps are reported
 * when running). */
bool pc_ref_supports(const char *domain, const char *op_type);

#ifdef __cplusplus
}
#endif

#endif
