/* Shared pieces of the passcheck CLI: the subcommand table entry, usage errors, option parsing. */
#ifndef PC_CLI_H
#define PC_CLI_H

#include <stdio.h>

#include "core/passcheck.h"
#include "properties/runner/util.h" /* pc_json_string, used by every command */

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

/* "float[1,3,?,N]" style description of a type. */
void pc_type_describe(FILE *out, const pc_type *t);

/* Table-driven argument parsing, the one parser of every subcommand: one row per option; a value goes to the
 * field at `offset` in the caller's argument struct: a `const char *` (PC_CLI_STRING), a `bool` (PC_CLI_FLAG)
 * or a pc_cli_list (PC_CLI_LIST: the only kind that may be given more than once; each value, which must not
 * be empty, is appended). Unknown options, any other option given twice (a silently ignored first value hides
 * mistakes in scripts) and a missing value are usage errors; "--" ends the options. Positional arguments
 * follow `pos`: none (pos NULL: "unexpected argument"), exactly one (PC_CLI_STRING) or one or more
 * (PC_CLI_LIST), named by pos->name in the errors. On success the caller frees every pc_cli_list field with
 * pc_cli_list_free (also on error: the lists are then empty or partly filled).
 *
 *     typedef struct my_args { const char *out; bool quiet; pc_cli_list paths; } my_args;
 *     static const pc_cli_opt opts[] = {{"--out", "-o", PC_CLI_STRING, offsetof(my_args, out)},
 *                                       {"--quiet", NULL, PC_CLI_FLAG, offsetof(my_args, quiet)}};
 *     static const pc_cli_positional pos = {"PATH", PC_CLI_LIST, offsetof(my_args, paths)};
 *     my_args a = {0};
 *     int rc = pc_cli_parse_args("mine", argc, argv, opts, 2, &a, &pos);
 *     ... a.paths.items[0 .. a.paths.n) ...
 *     pc_cli_list_free(&a.paths);
 */
typedef enum pc_cli_opt_kind { PC_CLI_STRING, PC_CLI_FLAG, PC_CLI_LIST } pc_cli_opt_kind;
typedef struct pc_cli_opt {
    const char *name;
    const char *alias; /* may be NULL */
    pc_cli_opt_kind kind;
    size_t offset;
} pc_cli_opt;
typedef struct pc_cli_list {
    const char **items; /* point into argv */
    size_t n;
} pc_cli_list;
typedef struct pc_cli_positional {
    const char *name;     /* "MODEL", "PATH", "DIR" */
    pc_cli_opt_kind kind; /* PC_CLI_STRING: exactly one; PC_CLI_LIST: one or more */
    size_t offset;
} pc_cli_positional;
int pc_cli_parse_args(const char *cmd, int argc, char **argv, const pc_cli_opt *opts, size_t n_opts,
                      void *args, const pc_cli_positional *pos);
void pc_cli_list_free(pc_cli_list *list);

/* The EP registry (built-ins plus `ep_file` when non-NULL), the EP list, and `layer_assignment` (when
 * non-NULL) parsed against it. A bad --ep-file is a bad input file (exit 3); a bad --ep or --layer-assignment
 * is a usage error naming the option. Returns an exit code; on success the caller frees *reg (which owns
 * *eps) and, when `rules` is non-NULL, *rules (NULL without a string). With `rules` NULL the string is only
 * checked. */
int pc_cli_resolve_eps(const char *cmd, const char *ep_file, const char *ep_list,
                       const char *layer_assignment, pc_ep_registry **reg, const pc_ep ***eps,
                       uint32_t *n_eps, pc_layer_rules **rules);

/* Option values, each a usage error naming the option and the value when malformed; return an exit code.
 * pc_cli_parse_u64: an integer in lo..hi (pc_parse_u64's syntaxes); pc_cli_parse_seconds: a finite number of
 * seconds in (0, max]; pc_cli_parse_level: --level, one digit 0..PC_LEVEL_MAX (no signs, spaces or suffixes).
 */
int pc_cli_parse_u64(const char *cmd, const char *opt, const char *s, uint64_t lo, uint64_t hi,
                     uint64_t *out);
int pc_cli_parse_seconds(const char *cmd, const char *opt, const char *s, double max, double *out);
int pc_cli_parse_level(const char *cmd, const char *s, int *out);

/* Writes a report file through `write` into a temporary file renamed over path; errors name the option and
 * file (exit 3). */
typedef void (*pc_cli_file_writer)(FILE *out, const void *ctx);
int pc_cli_write_file_atomic(const char *cmd, const char *option, const char *path, pc_cli_file_writer write,
                             const void *ctx);
/* Before a long run: the folder a report file goes to exists and is writable (exit 3 naming option and
 * folder). */
int pc_cli_check_writable(const char *cmd, const char *option, const char *path);
/* The repeatable --dim joined as model_case takes it ("a=1,b=2"; NULL for none): a usage error naming an
 * entry that holds a comma. Returns an exit code; the caller frees *out. */
int pc_cli_join_dims(const char *cmd, const pc_cli_list *dims, char **out);

/* run and bench: the model's case (inputs from --inputs or --seed, symbolic dims from --dim) and the session
 * options for the EPs (--ep, --ep-file, --layer-assignment), --level and --threads. Returns an exit code
 * (usage errors and bad files reported); on success the caller frees *reg after the session and the case with
 * pc_case_free. */
struct pc_case;
typedef struct pc_cli_session_args {
    const char *model, *inputs, *ep_file, *ep_list, *layer_assignment;
    const pc_cli_list *dims;
    uint64_t seed, threads;
    int level;
} pc_cli_session_args;
int pc_cli_session_setup(const char *cmd, const pc_cli_session_args *a, pc_ep_registry **reg,
                         struct pc_case *kase, pc_session_options *so);

int pc_cmd_convert(int argc, char **argv);
void pc_cmd_convert_help(FILE *out);
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
int pc_cmd_check(int argc, char **argv);
void pc_cmd_check_help(FILE *out);
int pc_cmd_shrink(int argc, char **argv);
void pc_cmd_shrink_help(FILE *out);
int pc_cmd_report(int argc, char **argv);
void pc_cmd_report_help(FILE *out);
int pc_cmd_run(int argc, char **argv);
void pc_cmd_run_help(FILE *out);
int pc_cmd_bench(int argc, char **argv);
void pc_cmd_bench_help(FILE *out);

#endif
