/* Shared pieces of the passcheck CLI: the subcommand table entry, usage errors, JSON output helpers. */
#ifndef PC_CLI_H
#define PC_CLI_H

#include <stdio.h>

#include "passcheck.h"

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

#endif
