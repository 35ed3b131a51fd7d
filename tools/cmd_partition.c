/* passcheck partition: being written (issue 4); replaced by its owner. */
#include "cli.h"

int pc_cmd_partition(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return pc_cli_usage_error("partition", "not built yet");
}

void pc_cmd_partition_help(FILE *out) { fprintf(out, "usage: passcheck partition (not built yet)\n"); }
