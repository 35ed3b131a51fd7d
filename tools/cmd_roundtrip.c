/* passcheck roundtrip PATH...: the command line of the loader/saver check (properties/runner/roundtrip.h:
 * collecting the models, the skip list, the per-model check, the JSON file and the --save-dir manifest). This
 * file parses the arguments and hands over; everything else is the runner's. */
#include <stddef.h>

#include "tools/cli.h"
#include "properties/runner/roundtrip.h"

#define CMD "roundtrip"

void pc_cmd_roundtrip_help(FILE *out)
{
    fprintf(
        out,
        "usage: passcheck roundtrip PATH... [--skip-list FILE] [--json FILE] [--save-dir DIR] [--quiet]\n\n"
        "For every model (a model file, or every .onnx and .ort below a directory): load and verify it,\n"
        "save it, reload the saved bytes, compare the two graphs, save again and require byte-identical\n"
        "output. A model in the ORT format is also saved as ORT, reloaded and saved again: the two ORT\n"
        "files must be byte-identical.\n\n"
        "  --skip-list FILE  reviewed list of expected failures: 'case/model.onnx reason' per line; listed\n"
        "                    cases still run, count as skipped when they fail, and are reported when they "
        "pass\n"
        "  --json FILE       write per-case results as JSON\n"
        "  --save-dir DIR    also write each saved model to DIR/NNNN.onnx and list 'original<TAB>saved'\n"
        "                    in DIR/manifest.tsv (used to check that ONNX Runtime loads our output)\n"
        "  --quiet           print only failures and the summary\n\n"
        "Prints 'N passed, N failed, N skipped'. exit codes: 0 all passed or skipped, 1 a case failed,\n"
        "2 usage error, 3 a PATH cannot be read, 4 internal error\n");
}

typedef struct roundtrip_args {
    const char *skip_path, *json_path, *save_dir;
    bool quiet;
    pc_cli_list inputs;
} roundtrip_args;

int pc_cmd_roundtrip(int argc, char **argv)
{
    static const pc_cli_opt opts[] = {
        {"--skip-list", NULL, PC_CLI_STRING, offsetof(roundtrip_args, skip_path)},
        {"--json", NULL, PC_CLI_STRING, offsetof(roundtrip_args, json_path)},
        {"--save-dir", NULL, PC_CLI_STRING, offsetof(roundtrip_args, save_dir)},
        {"--quiet", NULL, PC_CLI_FLAG, offsetof(roundtrip_args, quiet)},
    };
    static const pc_cli_positional paths_arg = {"PATH", PC_CLI_LIST, offsetof(roundtrip_args, inputs)};
    roundtrip_args args = {0};
    pc_roundtrip *run = NULL;
    int rc = pc_cli_parse_args(CMD, argc, argv, opts, sizeof opts / sizeof opts[0], &args, &paths_arg);
    if (rc != PC_EXIT_OK) goto done;
    pc_roundtrip_options o;
    pc_roundtrip_options_default(&o);
    o.skip_list = args.skip_path;
    o.json = args.json_path;
    o.save_dir = args.save_dir;
    o.quiet = args.quiet;
    pc_error err;
    pc_error_clear(&err);
    if (pc_roundtrip_open(&o, args.inputs.items, args.inputs.n, &run, &err) != PC_OK) {
        /* the runner's messages are the command's own: no "error [status]" record, not even for --save-dir */
        fprintf(stderr, "passcheck " CMD ": %s\n", err.message);
        rc = pc_status_exit_code(err.status);
        goto done;
    }
    rc = pc_roundtrip_run(run);
done:
    pc_roundtrip_free(run);
    pc_cli_list_free(&args.inputs);
    return rc;
}
