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
 * (unknown types fail), the rank of that value when the row names one (unknown fails), and every attribute
 * rule (the node's int attribute, or the rule's default when
 * absent; absent without a default, or not an int, fails) one of the listed values, and when the row names a
 * group, the node part of that pattern (DQ -> Relu -> Q, each the only reader of the one before, equal
 * per-tensor parameters).
 *
 * Deliberately simple: linear scans; the reason is the rule that failed, by class (docs/ep.md words each).
 * The schema table (core/schema, facts from ONNX 1.12) and the EP's parsed rows are data it shares with core;
 * the decision is its own. Prefix pc_capo_ (private to the properties).
 */
#ifndef PC_PROPERTIES_ORACLES_CAPABILITY_ORACLE_H
#define PC_PROPERTIES_ORACLES_CAPABILITY_ORACLE_H

#include "core/passcheck.h"

/* Why the EP refuses the node, by docs/ep.md's rules: the first reason (a row of the op that claims wins; of
 * the rows of the op, the first says why; no row of it: not listed). */
typedef enum pc_capo_reason {
    PC_CAPO_CLAIMS,       /* it claims the node */
    PC_CAPO_TRANSPOSE,    /* an ai.onnx Transpose for an EP that does not run Transposes */
    PC_CAPO_NOT_LISTED,   /* no row of the op and domain (and no all_standard_ops claim) */
    PC_CAPO_NOT_IMPORTED, /* the model does not import the domain */
    PC_CAPO_OPSET,        /* the model's opset is outside the first row's range */
    PC_CAPO_DTYPE,        /* the element type is unknown or not in the first row's set */
    PC_CAPO_ATTRIBUTE,    /* an attribute rule of the first row fails */
    PC_CAPO_GROUP,        /* the node is not part of the first row's group (pc_ep_group) */
    PC_CAPO_RANK,         /* the first input's rank is unknown or not the first row's */
    PC_CAPO_REASON_COUNT
} pc_capo_reason;

pc_capo_reason pc_capo_decide(const pc_ep *ep, const pc_node *node);
bool pc_capo_claims(const pc_ep *ep, const pc_node *node); /* pc_capo_decide(...) == PC_CAPO_CLAIMS */
/* The words docs/ep.md's reason for r contains ("opset ", "is not in the EP's op list", ...). */
const char *pc_capo_reason_phrase(pc_capo_reason r);

#endif
