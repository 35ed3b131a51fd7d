/*
 * ep_file_oracle.h — an independent parser for EP description files (--ep-file), written from docs/ep.md
 * alone (not from core/ep/ep_file.c), and a comparison with what core's parser registered, so that the
 * parser's bounds, error paths and field handling are judged by the suite instead of by hand-written cases
 * only.
 *
 * Worked example: does core read this text as the documentation says?
 *
 *     const char *taken[] = {"cpu", "nhwc"};            // names the registry already has
 *     pc_efo_file *f = NULL;
 *     pc_error err;
 *     pc_status st = pc_efo_parse("ep npu layout=nhwc\nop Conv opset=11..\n", taken, 2, &f, &err);
 *     // st == PC_OK; on PC_ERR_USAGE, err.message starts with "LINE:COL: ", where the first
 *     // error is (1-based; 0:0 when the error has no line: a file without an ep line)
 *     char why[256];
 *     if (!pc_efo_same(f, reg, why, sizeof why)) ...    // reg: a registry core loaded the same text into
 *     pc_efo_free(f);
 *
 * The grammar (docs/ep.md, "EP description files"): lines split at '\n' (a '\r' before it dropped), '#'
 * starts a comment, fields are separated by spaces or tabs, blank lines are ignored; a word with '=' is a
 * field, so a line whose name is one (`op domain=x`) lacks its name. Three line kinds: `ep NAME
 * [layout=nchw|nhwc|blocked] [block=N] [compiles=yes|no] [transpose=yes|no] [standard=yes|no]`, `op OP_TYPE|*
 * [domain=D] [opset=A..B|A..|A] [types=t1,t2,...]`, `attr NAME values=V,V,... [default=V]`. An op belongs to
 * the last ep, an attr to the last op of that ep. Errors: unknown line kinds, unknown fields, a field twice,
 * a value without `key=`, bad numbers (an optional '-' and digits, at most 20 characters, within int64),
 * opset A < 1 or A > B, unknown, repeated or empty type names, an EP name taken (built-ins included), a bad
 * EP name, op type (other than `*`) or attribute name (letters, digits,
 * '_', '-', '.'), op before any ep, attr before any op,
 * attr without values=, one attribute constrained twice on one op, layout=blocked without block (1..1024) or
 * block without layout=blocked, no ep line at all. The first error in file order is the one reported: the
 * leftmost of its line, each field checked whole before the next, and the checks relating two fields
 * (layout=blocked without block, block without it, attr without values=) after the line's other checks.
 * Columns count bytes from 1: a token's first byte, a value's first byte, the bad element of a list, an
 * opset's maximum; a missing name just past its keyword; a cross-field error at the layout, block or
 * attribute name it concerns.
 *
 * Deliberately simple: one pass over the lines, flat growable arrays. Element type names come from
 * pc_dtype_name (shared data, as the capability oracle shares the schema table). Prefix pc_efo_ (private to
 * the properties).
 */
#ifndef PC_PROPERTIES_ORACLES_EP_FILE_ORACLE_H
#define PC_PROPERTIES_ORACLES_EP_FILE_ORACLE_H

#include "core/passcheck.h"

typedef struct pc_efo_file pc_efo_file;

/* Parses text. taken: EP names already registered (a file may not reuse them). PC_ERR_USAGE for a bad file,
 * the message starting with "LINE:COL: "; PC_ERR_NOMEM. */
pc_status pc_efo_parse(const char *text, const char *const *taken, uint32_t n_taken, pc_efo_file **out,
                       pc_error *err);
void pc_efo_free(pc_efo_file *f);
uint32_t pc_efo_ep_count(const pc_efo_file *f);
/* Whether every EP of f is in reg with the fields f gives it; false with the first difference in why. */
bool pc_efo_same(const pc_efo_file *f, const pc_ep_registry *reg, char *why, size_t why_size);

#endif
