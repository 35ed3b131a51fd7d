/* passcheck convert MODEL -o OUT: reads either format (told by content) and writes OUT in the format its name
 * says (.ort: the ORT format, core/ort/save.c; anything else: ONNX) or --format gives. */
#include <stddef.h>
#include <string.h>

#include "tools/cli.h"

#define CMD "convert"

void pc_cmd_convert_help(FILE *out)
{
    fprintf(
        out,
        "usage: passcheck convert MODEL -o OUT [--format onnx|ort]\n\n"
        "Loads and verifies MODEL (ONNX or ORT format, told by content) and writes it to OUT: in the ORT\n"
        "format (what ONNX Runtime 1.30 loads: ort_version 6, its kernel type string resolver, each\n"
        "node's EP assignment as its execution_provider_type) when OUT ends in .ort, else as ONNX;\n"
        "--format overrides the name. The same model always gives the same bytes; OUT is written to a\n"
        "temporary file renamed into place, so a failure leaves OUT as it was (OUT may be MODEL itself).\n\n"
        "  -o, --out OUT      the file to write (replaced if it exists)\n"
        "  --format FORMAT    onnx or ort\n\n"
        "exit codes: 0 ok, 2 usage error, 3 MODEL is malformed or cannot be written in that format\n"
        "(the message names the node or value), 4 internal error\n");
}

typedef struct convert_args {
    const char *model, *out, *format;
} convert_args;

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

int pc_cmd_convert(int argc, char **argv)
{
    static const pc_cli_opt opts[] = {{"--out", "-o", PC_CLI_STRING, offsetof(convert_args, out)},
                                      {"--format", NULL, PC_CLI_STRING, offsetof(convert_args, format)}};
    static const pc_cli_positional model_arg = {"MODEL", PC_CLI_STRING, offsetof(convert_args, model)};
    convert_args a = {0};
    int rc = pc_cli_parse_args(CMD, argc, argv, opts, sizeof opts / sizeof opts[0], &a, &model_arg);
    if (rc != PC_EXIT_OK) return rc;
    if (!a.out) {
        fprintf(stderr, "passcheck " CMD ": -o OUT is required\n");
        return PC_EXIT_USAGE;
    }
    if (a.format && strcmp(a.format, "onnx") != 0 && strcmp(a.format, "ort") != 0) {
        fprintf(stderr, "passcheck " CMD ": --format '%s': onnx or ort\n", a.format);
        return PC_EXIT_USAGE;
    }
    bool ort = a.format ? strcmp(a.format, "ort") == 0 : ends_with(a.out, ".ort");
    if ((rc = pc_cli_check_writable(CMD, "-o", a.out)) != PC_EXIT_OK) return rc;
    pc_error err;
    pc_model *m;
    if (pc_model_load_file(a.model, NULL, &m, &err) != PC_OK) return pc_cli_report(CMD, &err);
    pc_status st = ort ? pc_model_save_ort_file(m, a.out, &err) : pc_model_save_file(m, a.out, &err);
    pc_model_free(m);
    if (st != PC_OK) {
        pc_error_prefix(&err, "%s: ", a.out);
        return pc_cli_report(CMD, &err);
    }
    return PC_EXIT_OK;
}
