/*
 * layer_rules_oracle.h — an independent parser and matcher for the --layer-assignment grammar, written from
 * docs/ep.md alone (not from core/ep/layer_rules.c), so that a bug in core's rule precedence or pattern
 * matching shows up as a disagreement instead of changing the checker and the partitioner together.
 *
 * Worked example: which EP must a node annotated "encoder.0" go to?
 *
 *     const char *eps[] = {"nhwc", "cpu"};
 *     pc_lro_rules *r;
 *     if (pc_lro_parse("nhwc(encoder, =head); cpu(post)", eps, 2, &r, &err) != PC_OK) ...  // PC_ERR_USAGE
 *     const char *ep = pc_lro_ep_for(r, "encoder.0");     // "nhwc" (NULL: no rule matches)
 *     pc_lro_free(r);
 *
 * The grammar (docs/ep.md): settings := rule (';' rule)*, rule := EP '(' pattern (',' pattern)* ')',
 * pattern := ['='] text; whitespace anywhere is ignored; an empty string gives no rules. A pattern with '='
 * matches the annotation exactly, otherwise when its text is a prefix of the annotation. Patterns are tried
 * in text order over all rules and the leftmost matching one decides. Errors (PC_ERR_USAGE, naming the
 * 1-based character position of the original text): an EP not in the list, a pattern given twice (same text
 * and kind), empty patterns, '=' inside a pattern, missing or extra parentheses, a missing ';', a trailing
 * ';'.
 *
 * Deliberately simple: whitespace is stripped into a copy first, then one left-to-right scan; matching is a
 * linear walk over the flattened patterns. Prefix pc_lro_ (private to the properties).
 */
#ifndef PC_PROPERTIES_ORACLES_LAYER_RULES_ORACLE_H
#define PC_PROPERTIES_ORACLES_LAYER_RULES_ORACLE_H

#include "core/passcheck.h"

typedef struct pc_lro_rules pc_lro_rules;

/* Parses text (NULL or "" = no rules) against the EP names of the case (priority order irrelevant here). */
pc_status pc_lro_parse(const char *text, const char *const *ep_names, uint32_t n_eps, pc_lro_rules **out,
                       pc_error *err);
void pc_lro_free(pc_lro_rules *rules);
/* The EP name (one of ep_names as given to pc_lro_parse) the annotation is pinned to; NULL when no pattern
 * matches or annotation is NULL. */
const char *pc_lro_ep_for(const pc_lro_rules *rules, const char *annotation);
/* Number of patterns over all rules (for tests). */
uint32_t pc_lro_pattern_count(const pc_lro_rules *rules);

#endif
