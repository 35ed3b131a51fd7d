/* passcheck shrink MODEL --property P [--pass NAME] [--ep LIST] [--ep-file F] [--layer-assignment S]
 * [--inputs DIR|FILES] [--out DIR] [--level N] [--inject F] [--time SEC]: shrink an outside model that fails
 * a property to a minimal repro folder (docs/shrinking.md). This file parses and checks the arguments and
 * says what happened; the case comes from properties/runner/model_case.h, the check from
 * properties/property.h, the shrinking and the repro folder from properties/shrink/shrink.h. */
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"
#include "properties/property.h"
#include "properties/runner/model_case.h"
#include "properties/shrink/shrink.h"

#define SHRINK_CMD "shrink"

typedef struct shrink_args {
    const char *model;
    const char *property;
    const char *pass;
    const char *ep_list;
    const char *ep_file;
    const char *layer_assignment;
    const char *inputs;
    const char *out;
    const char *level_text;
    const char *inject;
    const char *time_text;
    int level;
    double seconds;
} shrink_args;

static const pc_cli_opt opt_specs[] = {
    {"--property", NULL, PC_CLI_STRING, offsetof(shrink_args, property)},
    {"--pass", NULL, PC_CLI_STRING, offsetof(shrink_args, pass)},
    {"--ep", NULL, PC_CLI_STRING, offsetof(shrink_args, ep_list)},
    {"--ep-file", NULL, PC_CLI_STRING, offsetof(shrink_args, ep_file)},
    {"--layer-assignment", NULL, PC_CLI_STRING, offsetof(shrink_args, layer_assignment)},
    {"--inputs", NULL, PC_CLI_STRING, offsetof(shrink_args, inputs)},
    {"--out", NULL, PC_CLI_STRING, offsetof(shrink_args, out)},
    {"--level", NULL, PC_CLI_STRING, offsetof(shrink_args, level_text)},
    {"--inject", NULL, PC_CLI_STRING, offsetof(shrink_args, inject)},
    {"--time", NULL, PC_CLI_STRING, offsetof(shrink_args, time_text)},
};

static bool pass_name_known(const char *name)
{
    if (strcmp(name, "partition") == 0 || strcmp(name, "end-to-end") == 0) return true;
    return pc_pass_find(name) != NULL;
}

static const pc_cli_positional model_arg = {"MODEL", PC_CLI_STRING, offsetof(shrink_args, model)};

static int args_parse(int argc, char **argv, shrink_args *a)
{
    int rc = pc_cli_parse_args(SHRINK_CMD, argc, argv, opt_specs, sizeof opt_specs / sizeof opt_specs[0], a,
                               &model_arg);
    if (rc != PC_EXIT_OK) return rc;
    if (!a->property) return pc_cli_usage_error(SHRINK_CMD, "missing --property P");
    if (strchr(a->property, ','))
        return pc_cli_usage_error(SHRINK_CMD, "--property takes one property, not a list ('%s')",
                                  a->property);
    if (a->pass && !pass_name_known(a->pass))
        return pc_cli_usage_error(SHRINK_CMD,
                                  "unknown --pass '%s' (a pipeline pass, partition or end-to-end)", a->pass);
    if (a->level_text && (rc = pc_cli_parse_level(SHRINK_CMD, a->level_text, &a->level)) != PC_EXIT_OK)
        return rc;
    if (a->time_text &&
        (rc = pc_cli_parse_seconds(SHRINK_CMD, "--time", a->time_text, 86400, &a->seconds)) != PC_EXIT_OK)
        return rc;
    if (a->out && a->out[0] == '\0') return pc_cli_usage_error(SHRINK_CMD, "empty --out DIR");
    if (a->inputs && a->inputs[0] == '\0') return pc_cli_usage_error(SHRINK_CMD, "empty --inputs");
    if (!a->ep_list) a->ep_list = "cpu";
    if (!a->out) a->out = "passcheck-failures";
    return PC_EXIT_OK;
}

static const char *first_line(const char *s, char *buf, size_t size)
{
    size_t n = strcspn(s, "\n");
    if (n >= size) n = size - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return buf;
}

int pc_cmd_shrink(int argc, char **argv)
{
    shrink_args args = {.level = PC_LEVEL_MAX, .seconds = 5.0};
    int rc = args_parse(argc, argv, &args);
    if (rc != PC_EXIT_OK) return rc;

    pc_error err;
    pc_error_clear(&err);
    pc_check_config cc;
    pc_check_config_default(&cc);
    if (pc_check_config_select(&cc, args.property, &err) != PC_OK)
        return pc_cli_usage_error(SHRINK_CMD, "--property: %s", err.message);
    cc.level = args.level;
    cc.stop_after_pass = args.pass; /* nothing after the target pass matters */
    /* alloc-failure is judged at every allocation, as the shrinker judges it: a model whose bug sits at a few
     * of its allocations would pass at the one point its fingerprint draws */
    for (size_t i = 0; i < pc_property_count() && i < PC_MAX_PROPERTIES; i++)
        if (pc_property_at(i) == &pc_prop_alloc_failure && cc.enabled[i]) cc.alloc_every = true;
    if (args.inject && pc_fault_enable_list(args.inject, &err) != PC_OK)
        return pc_cli_usage_error(SHRINK_CMD, "--inject: %s", err.message);

    pc_ep_registry *reg = NULL;
    const pc_ep **eps = NULL;
    uint32_t n_eps = 0;
    pc_case kase;
    memset(&kase, 0, sizeof kase);
    pc_check_result res;
    memset(&res, 0, sizeof res);
    pc_shrink_result sr;
    memset(&sr, 0, sizeof sr);
    char *dir = NULL;

    /* the registry only checks --ep, --ep-file and --layer-assignment here: the case carries them as text */
    rc = pc_cli_resolve_eps(SHRINK_CMD, args.ep_file, args.ep_list, args.layer_assignment, &reg, &eps, &n_eps,
                            NULL);
    if (rc != PC_EXIT_OK) goto done;
    pc_model_case_options mo;
    pc_model_case_options_default(&mo);
    mo.ep_list = args.ep_list;
    mo.ep_file = args.ep_file;
    mo.layer_assignment = args.layer_assignment;
    mo.inputs =
        args.inputs; /* random inputs from PC_MODEL_CASE_SEED: two runs on one model shrink one case */
    if (pc_case_from_model(args.model, &mo, &kase, &err) != PC_OK) {
        rc = pc_cli_report(SHRINK_CMD, &err);
        goto done;
    }

    if (pc_case_check(&kase, &cc, &res, &err) != PC_OK) {
        pc_error_prefix(&err, "%s: ", args.model);
        rc = pc_cli_report(SHRINK_CMD, &err);
        goto done;
    }
    char line[256];
    if (!res.failed || (args.pass && strcmp(res.failure.pass, args.pass) != 0)) {
        /* nothing to shrink: the failure the user expected is not there (documented as exit 1) */
        char sig[160] = "", why[200];
        if (res.failed) pc_failure_signature(&res.failure, sig, sizeof sig);
        snprintf(why, sizeof why, "%s%s", res.failed ? "it fails as " : "it passes", sig);
        fprintf(stderr, "passcheck %s: %s does not fail property '%s'%s%s%s (%s); nothing to shrink\n",
                SHRINK_CMD, args.model, args.property, args.pass ? " at pass '" : "",
                args.pass ? args.pass : "", args.pass ? "'" : "", why);
        rc = PC_EXIT_CHECK_FAILED;
        goto done;
    }
    if (res.failure.outcome == PC_PROP_ERROR) { /* could not judge: no failure to shrink, never exit 0 */
        fprintf(stderr,
                "passcheck %s: %s: property '%s' could not judge the model at '%s' (ERROR): %s; nothing to "
                "shrink\n",
                SHRINK_CMD, args.model, res.failure.property, res.failure.pass,
                first_line(res.failure.message, line, sizeof line));
        rc = PC_EXIT_CHECK_FAILED;
        goto done;
    }
    pc_failure target = res.failure;
    char sig[160];
    pc_failure_signature(&target, sig, sizeof sig);
    printf("shrink: %s fails %s: %s\n", args.model, sig, first_line(target.message, line, sizeof line));
    fflush(stdout);

    pc_shrink_options so;
    pc_shrink_options_default(&so);
    so.max_seconds = args.seconds;
    if (pc_shrink_model(&kase, &cc, &target, &so, &sr, &err) != PC_OK) {
        pc_error_prefix(&err, "%s: ", args.model);
        rc = pc_cli_report(SHRINK_CMD, &err);
        goto done;
    }
    pc_repro_info info = {
        .check = &cc, .inject = args.inject, .original = &target, .original_nodes = sr.nodes_before};
    if (pc_repro_write_in(args.out, &sr, &info, &dir, &err) != PC_OK) {
        rc = pc_cli_report(SHRINK_CMD, &err);
        goto done;
    }
    printf("  nodes %u -> %u, %u checks (%u accepted), %.2f s%s\n", sr.nodes_before, sr.nodes_after,
           sr.checks, sr.accepted, sr.seconds,
           sr.budget_exhausted ? " (time or check budget ran out: may shrink further with --time)" : "");
    printf("  repro: %s\n", dir);
    rc = PC_EXIT_OK;

done:
    fflush(stdout);
    free(dir);
    pc_shrink_result_free(&sr);
    pc_check_result_free(&res);
    pc_case_free(&kase);
    pc_ep_registry_free(reg);
    pc_fault_reset();
    return rc;
}

void pc_cmd_shrink_help(FILE *out)
{
    fprintf(
        out,
        "usage: passcheck shrink MODEL --property P [--pass NAME] [--ep LIST] [--ep-file F]\n"
        "                        [--layer-assignment S] [--inputs DIR|FILES] [--out DIR] [--level N]\n"
        "                        [--inject FAULTS] [--time SEC]\n"
        "\n"
        "Checks MODEL against property P through the pass pipeline; when P fails, shrinks the model to a\n"
        "minimal one that fails the same way (same property, pass and kind) and writes a repro folder\n"
        "OUT/<property>@<pass>-<hash>/ (docs/shrinking.md says how to read it).\n"
        "\n"
        "  --property P            the property to check (passcheck suite --list-properties)\n"
        "  --pass NAME             the failure must be at this pass (a pipeline pass, partition or "
        "end-to-end);\n"
        "                          checking stops after it\n"
        "  --ep LIST               EPs in priority order, e.g. nhwc,cpu (default cpu)\n"
        "  --ep-file F             add the EPs described in F (docs/ep.md)\n"
        "  --layer-assignment S    pin annotated nodes to EPs: 'nhwc(enc, =head); cpu(post)'\n"
        "  --inputs DIR|FILES      input data: a folder of input_0.pb, input_1.pb, ... or comma-separated "
        ".pb\n"
        "                          files, one per graph input that is not an initializer (default: random,\n"
        "                          seeded: floats in [-2, 2), integers in [0, 4), unknown dims 1)\n"
        "  --out DIR               where the repro folder goes (default passcheck-failures)\n"
        "  --level N               pipeline level 0..3 (default 3)\n"
        "  --inject FAULTS         enable planted faults, comma-separated (passcheck suite --list-faults)\n"
        "  --time SEC              shrink budget in seconds (default 5); the smallest case so far is kept\n"
        "\n"
        "exit codes: 0 shrunk and the repro written, 1 MODEL does not fail P (at NAME): nothing to shrink,\n"
        "2 usage error, 3 bad or unreadable MODEL, --inputs or --ep-file, 4 internal error\n");
}
