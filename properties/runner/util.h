/*
 * util.h — the small helpers the runner, the shrinker, the ORT oracle and the CLI share: a monotonic clock,
 * path joining, strict unsigned number parsing, and JSON/XML string escaping for reports.
 *
 *     double t0 = pc_now_seconds();
 *     char *p = pc_path_join(dir, "case.txt");              // "dir/case.txt"; NULL when out of memory
 *     uint64_t jobs;
 *     if (!pc_parse_u64("0x10", 1, 64, &jobs)) ...          // 16
 *     pc_json_string(out, name);                            // "\"a\\nb\"", or null for NULL
 *     pc_xml_escape(out, message, PC_XML_ATTRIBUTE);
 *     printf("%.2f s\n", pc_now_seconds() - t0);
 *     pc_str_list l = {0};
 *     if (!pc_str_list_push(&l, path)) ...                  // out of memory; else l owns a copy of path
 *     pc_str_list_sort(&l, 0);                              // by strcmp
 *     pc_str_list_free(&l);
 */
#ifndef PC_RUNNER_UTIL_H
#define PC_RUNNER_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/passcheck.h"

/* pc_now_seconds, the clock, is core's (core/passcheck.h): the runtime's profiler reads it too. */

/* "a/b" in a new allocation; NULL when out of memory or the length overflows. */
char *pc_path_join(const char *a, const char *b);

/* s ends with suffix and has something before it ("x.onnx" yes, ".onnx" no). */
bool pc_str_ends_with(const char *s, const char *suffix);

/* A folder-name-safe copy of in (at most size - 1 bytes): every character other than [A-Za-z0-9._@-] becomes
 * '-'. in and out may be the same buffer. */
void pc_name_sanitize(const char *in, char *out, size_t size);

/* An unsigned integer from lo to hi that is the whole of s: decimal, or hexadecimal after "0x"/"0X"; the
 * first character must be a digit (no sign, no white space). false when s is anything else. */
bool pc_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);

/* The syntaxes pc_parse_u64_as reads; flags, or'ed. 0 is decimal digits only (failure database entries). */
enum {
    PC_PARSE_U64_HEX = 1u << 0, /* also "0x1f" (pc_parse_u64) */
    /* repro folders' case.txt: what strtoull reads after leading white space, except a leading sign; kept
     * as the reader always accepted it ("seed= 5") */
    PC_PARSE_U64_LEADING_SPACE = 1u << 1,
};
bool pc_parse_u64_as(const char *s, uint64_t lo, uint64_t hi, unsigned flags, uint64_t *out);

/* JSON strings per RFC 8259: quotes, backslashes and control characters escaped, other bytes as they are.
 * pc_json_string writes null for NULL. */
void pc_json_string(FILE *out, const char *s);
void pc_json_string_n(FILE *out, const char *s, size_t n);

/* XML 1.0 text. PC_XML_TEXT (element content) and PC_XML_ATTRIBUTE: markup characters as entities, control
 * characters (not allowed in XML 1.0, even escaped) and bytes that are not UTF-8 as '?'; in attributes
 * newline and tab as &#10; and &#9; so they survive attribute normalization. NULL is written as "". (A third,
 * loose mode the suite's JUnit report used passed invalid UTF-8 through: gone, the report is valid XML.) */
typedef enum pc_xml_mode { PC_XML_TEXT, PC_XML_ATTRIBUTE } pc_xml_mode;
void pc_xml_escape(FILE *out, const char *s, pc_xml_mode mode);

/* A growable list of strings, each a malloc'ed copy the list owns. Start from {0}. */
typedef struct pc_str_list {
    char **items;
    size_t n, cap;
} pc_str_list;
/* Appends a copy of s; false when out of memory (the list is as it was). */
bool pc_str_list_push(pc_str_list *l, const char *s);
/* Sorts items[from..n) by strcmp. */
void pc_str_list_sort(pc_str_list *l, size_t from);
/* Frees every string and the array; leaves l as {0}. */
void pc_str_list_free(pc_str_list *l);

#endif
