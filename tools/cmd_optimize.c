/* passcheck optimize: being written (issue 4); replaced by its owner. */
#include "cli.h"

int pc_cmd_optimize(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return pc_cli_usage_error("optimize", "not built yet");
}

void pc_cmd_optimize_help(FILE *out) { fprintf(out, "usage: passcheck optimize (not built yet)\n"); }
