/*
 * capability_oracle.h — whether an EP claims a node, decided from docs/ep.md's three rules alone (not from
 * core/ep/capability.c), so that a bug in core's capability check shows up as an ep-assignment or annotations
 * failure instead of changing the partitioner and its judge together.
 *
 * Worked example: may the node `n` run on the case's EP `ep`?
 *
 *     if (!pc_capo_claims(ep, n)) ... // the EP cannot run it: a node assigned there is "unclaimed"
 *
 * The rules (docs/ep.md, "What an EP is"): an ai.onnx Transpose is refused by an EP that does not run
 * Transposes; an EP with all_standard_ops claims a node of a standard domain (ai.onnx, ai.onnx.ml,
 * ai.onnx.preview.training) the schema table knows at the model's opset of that domain, any node of such a
 * domain above the table's newest opset of it, and any call of a model-local function; otherwise some row
 * must match: op type (or "*") and domain, the model's opset for the domain within the row's range, the
 * element type of the node's first input (first output without inputs) in the row's set when it has one
 * (unknown types fail), and every attribute rule (the node's int attribute, or the rule's default when
 * absent; absent without a default, or not an int, fails) one of the listed values.
 *
 * Deliberately simple: linear scans, no reasons. The schema table (core/schema, facts from ONNX 1.12) and
 * the EP's parsed rows are data it shares with core; the decision is its own. Prefix pc_capo_ (private to
 * the properties).
 */
#ifndef PC_PROPERTIES_ORACLES_CAPABILITY_ORACLE_H
#define PC_PROPERTIES_ORACLES_CAPABILITY_ORACLE_H

#include "core/passcheck.h"

bool pc_capo_claims(const pc_ep *ep, const pc_node *node);

#endif
