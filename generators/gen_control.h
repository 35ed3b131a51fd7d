/*
 * gen_control.h — control flow for the pattern library (issue 14): If, Loop and Scan nodes whose bodies are
 * graphs built on the node's attribute, with nodes inside the bodies that read values of the enclosing graph
 * by name (outer scope), some of them annotated (layer_ann), and sometimes the control-flow node itself.
 *
 * Each unit builds on fresh graph inputs and constants of its own, like a pattern unit (gen_patterns.c), and
 * is valid by construction: every node of the main graph and of the bodies goes through
 * pc_gen_node_begin/pc_gen_node_end (shape inference checks it; a control-flow node's outputs get the full
 * static type its bodies give, since core infers none for them), and the outputs of the control-flow node go
 * to the pool, so pc_gen_finish makes the ones nothing reads graph outputs. Every case runs on the reference
 * executor: conditions hold one element, loops end (a constant trip count of 1 to 3, or a condition on the
 * iteration number), loop-carried and Scan states keep their type and shape.
 *
 *     // inside a family's build function (opset >= 11 for If and Loop, >= 9 for Scan)
 *     if (pc_gen_control_if(g, false, err) != PC_OK) return err->status;   // a generator bug or OOM
 *
 * `near` selects the variant in which a value a body reads from the enclosing graph is made by a main-graph
 * pattern a pass rewrites (Identity(x), Neg(Neg(x)), Mul(x, 1) or a cancelling Transpose pair) and is also a
 * graph output or read by another main-graph node, so an elimination must keep the name the body refers to.
 * Either variant may also put an If inside a body (its branches read the body's value and main-graph values
 * by name), a main-graph pattern on the control-flow node's output, and value_info on body values.
 *
 * Draw 0 everywhere (gen.h): a rank-1 input of one element; If on Greater(ReduceSum(x), 0) with Relu(x) in
 * both branches; Loop with trip count 1, no cond input and Relu of the state; Scan over a one-element input
 * adding each element to a zero state. No annotation, no scan output.
 */
#ifndef PC_GEN_CONTROL_H
#define PC_GEN_CONTROL_H

#include "generators/gen.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most nodes one unit adds, bodies included (each counts in g->n_ops, like every node the generator
 * makes): the pattern library's max_nodes for the three units. The structure a unit draws always fits
 * (at most 10 nodes); the optional parts (longer chains, a nested If, a second If output or Loop state, a
 * scan output, a main-graph op after the node) are drawn only while nodes are left. */
enum { PC_GEN_CONTROL_MAX_NODES = 10 };

/* If on a bool condition (a bool graph input, or Greater/Less of ReduceSum/ReduceMax of the data input and a
 * constant) whose then/else branches each run 1 to 4 float ops (Relu, Add of an outer-scope value, Mul by a
 * constant, a cancelling Transpose pair, Neg(Neg), Identity, a nested If) per output, one or two outputs of
 * the same type in both branches. */
pc_status pc_gen_control_if(pc_gen *g, bool near, pc_error *err);
/* Loop with a constant trip count (1 to 3) and no cond, a constant trip count and a cond (constant, a bool
 * graph input, or recomputed in the body from the state), or only a cond the body computes from the
 * iteration number; one or two loop-carried float states updated by 1 to 3 ops (also reading outer-scope
 * values and the iteration number), optionally a scan output when the iteration count is static. */
pc_status pc_gen_control_loop(pc_gen *g, bool near, pc_error *err);
/* Scan (opset 9 form) over axis 0 of a float input with one state: state + element, then 0 to 2 more ops,
 * optionally a scan output; directions and axes attributes drawn. */
pc_status pc_gen_control_scan(pc_gen *g, bool near, pc_error *err);

#ifdef __cplusplus
}
#endif

#endif
