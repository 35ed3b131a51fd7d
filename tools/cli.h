/* Shared pieces of the passcheck CLI: the subcommand table entry, usage errors, JSON output helpers. */
#ifndef PC_CLI_H
#define PC_CLI_H

#include <stdio.h>

#include "core/passcheck.h"

typedef struct pc_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name; returns a PC_EXIT_* code */
    void (*help)(FILE *out);
} pc_command;

/* Prints "passcheck CMD: message" and a hint to stderr; returns PC_EXIT_USAGE. */
int pc_cli_usage_error(const char *cmd, const char *fmt, ...) PC_PRINTF(2, 3);
/* Prints an error record to stderr; returns its exit code. */
int pc_cli_report(const char *cmd, const pc_error *err);

/* JSON writing: strings are escaped per RFC 8259. */
void pc_json_string(FILE *out, const char *s);
void pc_json_string_n(FILE *out, const char *s, size_t n);
/* "float[1,3,?,N]" style description of a type. */
void pc_type_describe(FILE *out, const pc_type *t);

/* Table-driven option parsing: one row per option; a value goes to the `const char *` (PC_CLI_STRING) or `bool`
 * (PC_CLI_FLAG) at `offset` in the caller's argument struct. Unknown options, an option given twice (a silently
 * ignored first value hides mistakes in scripts) and a missing value are usage errors; "--" ends the options. The
 * one positional argument goes to *positional; none or two are usage errors naming `positional_name`. */
typedef enum pc_cli_opt_kind { PC_CLI_STRING, PC_CLI_FLAG } pc_cli_opt_kind;
typedef struct pc_cli_opt {
    const char *name;
    const char *alias; /* may be NULL */
    pc_cli_opt_kind kind;
    size_t offset;
} pc_cli_opt;
int pc_cli_parse_args(const char *cmd, int argc, char **argv, const pc_cli_opt *opts, size_t n_opts, void *args,
                      const char **positional, const char *positional_name);

/* The EP registry (built-ins plus `ep_file` when non-NULL), the EP list, and `layer_assignment` (when non-NULL)
 * parsed against it. A bad --ep-file is a bad input file (exit 3); a bad --ep or --layer-assignment is a usage
 * error naming the option. Returns an exit code; on success the caller frees *reg (which owns *eps) and, when
 * `rules` is non-NULL, *rules (NULL without a string). With `rules` NULL the string is only checked. */
int pc_cli_resolve_eps(const char *cmd, const char *ep_file, const char *ep_list, const char *layer_assignment,
                       pc_ep_registry **reg, const pc_ep ***eps, uint32_t *n_eps, pc_layer_rules **rules);

/* Writes a report file through `write` into a temporary file renamed over path; errors name the option and file
 * (exit 3). */
typedef void (*pc_cli_file_writer)(FILE *out, const void *ctx);
int pc_cli_write_file_atomic(const char *cmd, const char *option, const char *path, pc_cli_file_writer write,
                             const void *ctx);
/* Before a long run: the folder a report file goes to exists and is writable (exit 3 naming option and folder). */
int pc_cli_check_writable(const char *cmd, const char *option, const char *path);

int pc_cmd_info(int argc, char **argv);
void pc_cmd_info_help(FILE *out);
int pc_cmd_roundtrip(int argc, char **argv);
void pc_cmd_roundtrip_help(FILE *out);
int pc_cmd_conformance(int argc, char **argv);
void pc_cmd_conformance_help(FILE *out);
int pc_cmd_optimize(int argc, char **argv);
void pc_cmd_optimize_help(FILE *out);
int pc_cmd_partition(int argc, char **argv);
void pc_cmd_partition_help(FILE *out);
int pc_cmd_suite(int argc, char **argv);
void pc_cmd_suite_help(FILE *out);
int pc_cmd_shrink(int argc, char **argv);
void pc_cmd_shrink_help(FILE *out);

#endif
