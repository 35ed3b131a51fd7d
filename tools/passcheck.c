/* passcheck CLI entry point: a table of subcommands. Exit codes: 0 ok, 1 check failure, 2 usage error, 3 bad
 * input file, 4 internal error (docs/cli.md). */
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"

static const pc_command commands[] = {
    {"info", "describe a model: versions, ops, inputs/outputs, initializers, annotations, EPs", pc_cmd_info,
     pc_cmd_info_help},
    {"convert", "write a model (ONNX or ORT format) in the ONNX or the ORT format", pc_cmd_convert,
     pc_cmd_convert_help},
    {"roundtrip", "load, verify, save and reload models; check equality and byte stability", pc_cmd_roundtrip,
     pc_cmd_roundtrip_help},
    {"conformance", "run ONNX backend test cases through an executor and compare the outputs",
     pc_cmd_conformance, pc_cmd_conformance_help},
    {"optimize", "run the pass pipeline up to a level and write the optimized model", pc_cmd_optimize,
     pc_cmd_optimize_help},
    {"partition", "assign nodes to execution providers and list the subgraphs each would compile",
     pc_cmd_partition, pc_cmd_partition_help},
    {"check", "run every pass on a model with every property after each; a pass x property table",
     pc_cmd_check, pc_cmd_check_help},
    {"run", "optimize a model and run it on the runtime (OpenBLAS); print or write its outputs", pc_cmd_run,
     pc_cmd_run_help},
    {"bench", "time the runtime on a model; with --compare-ort next to ONNX Runtime 1.30, as ratios",
     pc_cmd_bench, pc_cmd_bench_help},
    {"shrink", "shrink a model that fails a property to a minimal repro folder", pc_cmd_shrink,
     pc_cmd_shrink_help},
    {"suite", "generate random graphs, check every property after every pass, shrink failures to repros",
     pc_cmd_suite, pc_cmd_suite_help},
    {"report", "render a failure folder's repros as one HTML page (summary, commands, pictures)",
     pc_cmd_report, pc_cmd_report_help},
};

static void print_main_help(FILE *out)
{
    fprintf(out, "usage: passcheck COMMAND [ARGS...]\n"
                 "       passcheck help COMMAND | passcheck COMMAND --help\n\n"
                 "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nexit codes: 0 ok, 1 check failed, 2 usage error, 3 bad input file, 4 internal error\n");
}

static const pc_command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_main_help(stderr);
        return PC_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        print_main_help(stdout);
        return PC_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0) {
        printf("passcheck %s\n", PC_VERSION);
        return PC_EXIT_OK;
    }
    if (strcmp(name, "help") == 0) {
        if (argc < 3) {
            print_main_help(stdout);
            return PC_EXIT_OK;
        }
        const pc_command *c = find_command(argv[2]);
        if (!c) return pc_cli_usage_error(NULL, "unknown command '%s'", argv[2]);
        c->help(stdout);
        return PC_EXIT_OK;
    }
    const pc_command *c = find_command(name);
    if (!c) return pc_cli_usage_error(NULL, "unknown command '%s'", name);
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) break;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            c->help(stdout);
            return PC_EXIT_OK;
        }
    }
    return c->run(argc - 1, argv + 1);
}
