/* passcheck run MODEL [--inputs DIR|FILES | --seed S] [--dim NAME=SIZE]... [--ep LIST] [--ep-file F]
 * [--layer-assignment S] [--level N] [--threads N] [-o DIR] [--stats]: optimize the model, run it on the
 * runtime (core/runtime) and print (and with -o write, as output_N.pb, the backend-test layout) its outputs.
 * The inputs come as for `check` (properties/runner/model_case.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/cli.h"
#include "properties/runner/model_case.h"

#define RUN_CMD "run"

typedef struct run_args {
    const char *model, *inputs, *seed_text, *ep_list, *ep_file, *layer_assignment, *level_text, *threads_text;
    const char *out;
    pc_cli_list dims;
    bool stats;
    int level;
    uint64_t seed, threads;
} run_args;

static const pc_cli_opt opt_specs[] = {
    {"--inputs", NULL, PC_CLI_STRING, offsetof(run_args, inputs)},
    {"--seed", NULL, PC_CLI_STRING, offsetof(run_args, seed_text)},
    {"--dim", NULL, PC_CLI_LIST, offsetof(run_args, dims)},
    {"--ep", NULL, PC_CLI_STRING, offsetof(run_args, ep_list)},
    {"--ep-file", NULL, PC_CLI_STRING, offsetof(run_args, ep_file)},
    {"--layer-assignment", NULL, PC_CLI_STRING, offsetof(run_args, layer_assignment)},
    {"--level", NULL, PC_CLI_STRING, offsetof(run_args, level_text)},
    {"--threads", NULL, PC_CLI_STRING, offsetof(run_args, threads_text)},
    {"--output-dir", "-o", PC_CLI_STRING, offsetof(run_args, out)},
    {"--stats", NULL, PC_CLI_FLAG, offsetof(run_args, stats)},
};

static const pc_cli_positional model_arg = {"MODEL", PC_CLI_STRING, offsetof(run_args, model)};

static int args_parse(int argc, char **argv, run_args *a)
{
    int rc = pc_cli_parse_args(RUN_CMD, argc, argv, opt_specs, sizeof opt_specs / sizeof opt_specs[0], a,
                               &model_arg);
    if (rc != PC_EXIT_OK) return rc;
    if (a->level_text && (rc = pc_cli_parse_level(RUN_CMD, a->level_text, &a->level)) != PC_EXIT_OK)
        return rc;
    if (a->threads_text &&
        (rc = pc_cli_parse_u64(RUN_CMD, "--threads", a->threads_text, 1, 256, &a->threads)) != PC_EXIT_OK)
        return rc;
    if (a->seed_text) {
        if ((rc = pc_cli_parse_u64(RUN_CMD, "--seed", a->seed_text, 0, UINT64_MAX, &a->seed)) != PC_EXIT_OK)
            return rc;
        if (a->inputs) return pc_cli_usage_error(RUN_CMD, "--seed draws random inputs: not with --inputs");
    }
    if (a->inputs && a->inputs[0] == '\0') return pc_cli_usage_error(RUN_CMD, "empty --inputs");
    if (a->out && a->out[0] == '\0') return pc_cli_usage_error(RUN_CMD, "empty -o DIR");
    if (a->dims.n && a->inputs)
        return pc_cli_usage_error(RUN_CMD, "--dim sizes random inputs: not with --inputs");
    if (!a->ep_list) a->ep_list = "cpu";
    return PC_EXIT_OK;
}

/* -o DIR: created when missing (its parent must exist); an existing non-folder is an error. */
static int make_out_dir(const char *dir)
{
    struct stat sb;
    if (stat(dir, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) return PC_EXIT_OK;
        return pc_cli_report(RUN_CMD, &(pc_error){.status = PC_ERR_IO, .message = "-o: not a folder"});
    }
    if (mkdir(dir, 0777) != 0) {
        pc_error e;
        pc_error_set(&e, PC_ERR_IO, "-o: %s: cannot create the folder: %s", dir, strerror(errno));
        return pc_cli_report(RUN_CMD, &e);
    }
    return PC_EXIT_OK;
}

int pc_cmd_run(int argc, char **argv)
{
    run_args args = {.level = PC_LEVEL_MAX, .seed = PC_MODEL_CASE_SEED, .threads = 1};
    int rc = args_parse(argc, argv, &args);
    pc_ep_registry *reg = NULL;
    pc_case kase;
    memset(&kase, 0, sizeof kase);
    pc_session *s = NULL;
    pc_data **outs = NULL;
    pc_error err;
    pc_error_clear(&err);
    if (rc != PC_EXIT_OK) goto done;
    pc_cli_session_args sa = {args.model, args.inputs, args.ep_file, args.ep_list, args.layer_assignment,
                              &args.dims, args.seed,   args.threads, args.level};
    pc_session_options so;
    if ((rc = pc_cli_session_setup(RUN_CMD, &sa, &reg, &kase, &so)) != PC_EXIT_OK) goto done;
    double t0 = pc_now_seconds();
    if (pc_session_create(kase.model, &so, &s, &err) != PC_OK) {
        pc_error_prefix(&err, "%s: ", args.model);
        rc = pc_cli_report(RUN_CMD, &err);
        goto done;
    }
    double t1 = pc_now_seconds();
    if (pc_session_run(s, kase.n_inputs, kase.inputs, &outs, &err) != PC_OK) {
        pc_error_prefix(&err, "%s: ", args.model);
        rc = pc_cli_report(RUN_CMD, &err);
        goto done;
    }
    double t2 = pc_now_seconds();
    const pc_graph *g = pc_session_model(s)->graph;
    printf("run: %s, EPs %s, level %d, %d thread%s, inputs %s: created in %.3f s, ran in %.3f s\n",
           args.model, args.ep_list, args.level, (int)args.threads, args.threads == 1 ? "" : "s",
           args.inputs ? args.inputs : "random", t1 - t0, t2 - t1);
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        char d[128];
        printf("  output %u '%s': %s\n", i, g->outputs[i]->name, pc_data_describe(outs[i], d, sizeof d));
    }
    if (args.stats) {
        pc_session_stats st;
        pc_session_get_stats(s, &st);
        printf(
            "stats: %u nodes; planned peak %zu bytes for intermediates and scratch (their sum %zu), outputs "
            "%zu bytes\n",
            st.n_nodes, st.arena_bytes, st.tensor_bytes, st.output_bytes);
    }
    if (args.out) {
        if ((rc = make_out_dir(args.out)) != PC_EXIT_OK) goto done;
        for (uint32_t i = 0; i < g->n_outputs; i++) {
            char path[4096];
            if (snprintf(path, sizeof path, "%s/output_%u.pb", args.out, i) >= (int)sizeof path) {
                rc = pc_cli_usage_error(RUN_CMD, "-o: folder name too long");
                goto done;
            }
            if (pc_data_save_file(outs[i], g->outputs[i]->name, path, &err) != PC_OK) {
                rc = pc_cli_report(RUN_CMD, &err);
                goto done;
            }
        }
        printf("wrote %u output file%s to %s/\n", g->n_outputs, g->n_outputs == 1 ? "" : "s", args.out);
    }
done:
    if (outs) pc_session_free_outputs(s, outs);
    pc_session_free(s);
    pc_case_free(&kase);
    pc_ep_registry_free(reg);
    pc_cli_list_free(&args.dims);
    return rc;
}

void pc_cmd_run_help(FILE *out)
{
    fprintf(
        out,
        "usage: passcheck run MODEL [--inputs DIR|FILES | --seed S] [--dim NAME=SIZE]... [--ep LIST]\n"
        "                     [--ep-file F] [--layer-assignment S] [--level N] [--threads N] [-o DIR]\n"
        "                     [--stats]\n"
        "\n"
        "Optimizes MODEL for the EPs, runs it on passcheck's runtime (OpenBLAS gemm, its own kernels) and\n"
        "prints each output's type and shape. A node the runtime has no kernel for is an error at once,\n"
        "naming the node.\n"
        "\n"
        "  --inputs DIR|FILES   input data: a folder of input_0.pb, ... or comma-separated .pb files\n"
        "  --seed S             random inputs from seed S (floats in [-2, 2), integers in [0, 4))\n"
        "  --dim NAME=SIZE      the size of symbolic dim NAME for random inputs (repeatable)\n"
        "  --ep LIST            EPs in priority order (default cpu); --ep-file, --layer-assignment as for\n"
        "                       optimize\n"
        "  --level N            pipeline level 0..3 (default 3)\n"
        "  --threads N          gemm threads, 1..256 (default 1)\n"
        "  -o, --output-dir DIR write the outputs as DIR/output_N.pb (TensorProto, the backend-test layout)\n"
        "  --stats              print the memory plan: peak arena bytes and the sum of all tensors\n"
        "\n"
        "exit codes: 0 ok, 2 usage error, 3 bad MODEL or --inputs, or a node without a kernel, 4 internal "
        "error\n");
}
