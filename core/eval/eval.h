/* The constant evaluator: core's own small interpreter for shape-like and elementwise ops on small constant
 * tensors, used by constant folding. Independent of the reference executor (which must stay an independent
 * oracle): the two are compared by the harness, never linked together. */
#ifndef PC_EVAL_H
#define PC_EVAL_H

#include "core/passcheck.h"

/* Whether the evaluator implements node's op at its opset for the given input element types (a cheap check
 * before reading the inputs). */
bool pc_eval_supports(const pc_node *node);

/* Evaluates node on constant inputs (inputs[i] NULL for an omitted optional input). Output tensors are
 * created in the node's model (pc_tensor_create) and returned in outputs[0..node->n_outputs).
 * PC_ERR_UNSUPPORTED when the op, an attribute form or a dtype is outside the evaluator, PC_ERR_BUDGET when
 * an output would exceed max_elements; bad inputs (shapes that do not broadcast, axes out of range) are
 * PC_ERR_SHAPE / PC_ERR_ATTRIBUTE naming the node. Floats are computed in double and rounded once to the
 * element type (identical to IEEE single operations for + - * / and sqrt); integers wrap. */
pc_status pc_eval_node(const pc_node *node, const pc_tensor *const *inputs, uint32_t n_inputs,
                       pc_tensor **outputs, uint64_t max_elements, pc_error *err);

#endif
