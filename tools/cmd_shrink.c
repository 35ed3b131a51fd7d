/* passcheck shrink MODEL --property P [--pass NAME] [--ep LIST] [--ep-file F] [--layer-assignment S]
 * [--inputs DIR|FILES] [--out DIR] [--level N] [--inject F] [--time SEC]: shrink an outside model that fails
 * a property to a minimal repro folder (docs/shrinking.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/cli.h"
#include "properties/property.h"
#include "properties/shrink/shrink.h"

#define SHRINK_CMD "shrink"
/* random inputs are drawn from this seed, so two runs on the same model shrink the same case */
#define SHRINK_INPUT_SEED 0x5eedull

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
    int rc = pc_cli_parse_args(SHRINK_CMD, argc, argv, opt_specs, sizeof opt_specs / sizeof opt_specs[0], a, &model_arg);
    if (rc != PC_EXIT_OK) return rc;
    if (!a->property) return pc_cli_usage_error(SHRINK_CMD, "missing --property P");
    if (strchr(a->property, ','))
        return pc_cli_usage_error(SHRINK_CMD, "--property takes one property, not a list ('%s')",
                                  a->property);
    if (a->pass && !pass_name_known(a->pass))
        return pc_cli_usage_error(SHRINK_CMD,
                                  "unknown --pass '%s' (a pipeline pass, partition or end-to-end)", a->pass);
    if (a->level_text) {
        const char *t = a->level_text;
        if (!(t[0] >= '0' && t[0] <= '0' + PC_LEVEL_MAX && t[1] == '\0'))
            return pc_cli_usage_error(SHRINK_CMD, "bad --level '%s' (want 0..%d)", t, PC_LEVEL_MAX);
        a->level = t[0] - '0';
    }
    if (a->time_text) {
        char *end = NULL;
        errno = 0;
        double s = strtod(a->time_text, &end);
        if (a->time_text[0] == '\0' || *end != '\0' || errno || !(s > 0) || s > 86400)
            return pc_cli_usage_error(SHRINK_CMD, "bad --time '%s' (want seconds, 0 < SEC <= 86400)",
                                      a->time_text);
        a->seconds = s;
    }
    if (a->out && a->out[0] == '\0') return pc_cli_usage_error(SHRINK_CMD, "empty --out DIR");
    if (a->inputs && a->inputs[0] == '\0') return pc_cli_usage_error(SHRINK_CMD, "empty --inputs");
    if (!a->ep_list) a->ep_list = "cpu";
    if (!a->out) a->out = "passcheck-failures";
    return PC_EXIT_OK;
}

static char *file_read_text(const char *path, pc_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        pc_error_set(err, PC_ERR_IO, "--ep-file: %s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
        if (n + 1 == cap) {
            char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf) {
        pc_error_set(err, PC_ERR_NOMEM, "out of memory reading %s", path);
        return NULL;
    }
    if (bad) {
        free(buf);
        pc_error_set(err, PC_ERR_IO, "--ep-file: %s: read error", path);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

/* Random data for a graph input: floats uniform in [-2, 2), integers in [0, 4) (small, so index-like inputs
 * tend to stay in range), bools. Unknown and symbolic dims become 1. */
static pc_data *random_input(const pc_value *v, uint64_t *seed, pc_error *err)
{
    const pc_type *t = &v->type;
    if (t->kind != PC_TYPE_TENSOR || t->shape.rank < 0) {
        pc_error_set(err, PC_ERR_UNSUPPORTED,
                     "graph input '%s' has no tensor type with a known rank: give its data with --inputs",
                     v->name);
        return NULL;
    }
    int64_t *dims = t->shape.rank ? malloc((size_t)t->shape.rank * sizeof *dims) : NULL;
    if (t->shape.rank && !dims) {
        pc_error_set(err, PC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int32_t i = 0; i < t->shape.rank; i++)
        dims[i] = t->shape.dims[i].kind == PC_DIM_KNOWN ? t->shape.dims[i].size : 1;
    pc_data *d = pc_data_new_tensor(t->elem, t->shape.rank, dims, err);
    free(dims);
    if (!d) return NULL;
    for (uint64_t k = 0; k < d->n_elements; k++) {
        uint64_t r = pc_splitmix64(seed);
        double f = (double)(r >> 11) / 9007199254740992.0 * 4.0 - 2.0;
        uint64_t u = r % 4;
        switch (d->dtype) {
        case PC_DTYPE_FLOAT:
            ((float *)d->data)[k] = (float)f;
            break;
        case PC_DTYPE_DOUBLE:
            ((double *)d->data)[k] = f;
            break;
        case PC_DTYPE_INT8:
            ((int8_t *)d->data)[k] = (int8_t)u;
            break;
        case PC_DTYPE_UINT8:
            ((uint8_t *)d->data)[k] = (uint8_t)u;
            break;
        case PC_DTYPE_INT16:
            ((int16_t *)d->data)[k] = (int16_t)u;
            break;
        case PC_DTYPE_UINT16:
            ((uint16_t *)d->data)[k] = (uint16_t)u;
            break;
        case PC_DTYPE_INT32:
            ((int32_t *)d->data)[k] = (int32_t)u;
            break;
        case PC_DTYPE_UINT32:
            ((uint32_t *)d->data)[k] = (uint32_t)u;
            break;
        case PC_DTYPE_INT64:
            ((int64_t *)d->data)[k] = (int64_t)u;
            break;
        case PC_DTYPE_UINT64:
            ((uint64_t *)d->data)[k] = u;
            break;
        case PC_DTYPE_BOOL:
            ((uint8_t *)d->data)[k] = (uint8_t)(r & 1);
            break;
        default:
            pc_error_set(err, PC_ERR_UNSUPPORTED,
                         "graph input '%s': no random data for element type %s: give its data with --inputs",
                         v->name, pc_dtype_name(d->dtype));
            pc_data_unref(d);
            return NULL;
        }
    }
    return d;
}

/* The data for every graph input that is not an initializer: from --inputs (a folder of input_N.pb, or a
 * comma-separated list of .pb files, in graph-input order) or random. */
static pc_status case_inputs(pc_case *c, const char *inputs, pc_error *err)
{
    const pc_graph *g = c->model->graph;
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->n_inputs; i++)
        n += !g->inputs[i]->initializer;
    c->inputs = n ? calloc(n, sizeof *c->inputs) : NULL;
    if (n && !c->inputs) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    struct stat st;
    bool is_dir = inputs && stat(inputs, &st) == 0 && S_ISDIR(st.st_mode);
    const char *list = inputs && !is_dir ? inputs : NULL;
    uint64_t seed = SHRINK_INPUT_SEED;
    uint32_t k = 0;
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        const pc_value *v = g->inputs[i];
        if (v->initializer) continue;
        pc_status s = PC_OK;
        if (!inputs) {
            c->inputs[k] = random_input(v, &seed, err);
            if (!c->inputs[k]) s = err->status;
        } else {
            char *path = NULL;
            if (is_dir) {
                size_t len = strlen(inputs) + 32;
                path = malloc(len);
                if (path) snprintf(path, len, "%s/input_%u.pb", inputs, k);
            } else {
                if (!list || !*list)
                    return pc_error_set(err, PC_ERR_IO,
                                        "--inputs: %u files for %u graph inputs ('%s' has no data)", k, n,
                                        v->name);
                const char *end = strchr(list, ',');
                size_t len = end ? (size_t)(end - list) : strlen(list);
                path = malloc(len + 1);
                if (path) {
                    memcpy(path, list, len);
                    path[len] = '\0';
                }
                list = end ? end + 1 : list + len;
            }
            if (!path) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
            s = pc_data_load_file(path, &v->type, &c->inputs[k], err);
            if (s != PC_OK) pc_error_prefix(err, "--inputs: graph input '%s': %s: ", v->name, path);
            free(path);
        }
        if (s != PC_OK) return s;
        c->n_inputs = ++k;
    }
    if (list && *list)
        return pc_error_set(err, PC_ERR_IO, "--inputs: more files than the %u graph inputs", n);
    return PC_OK;
}

/* "<signature>-<hash of the repro model>" with characters unfit for a folder name replaced by '-'. */
static char *repro_dir(const char *out, const pc_shrink_result *r, pc_error *err)
{
    char sig[160];
    pc_failure_signature(&r->check.failure, sig, sizeof sig);
    for (char *p = sig; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '@' ||
              *p == '_' || *p == '-' || *p == '.'))
            *p = '-';
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (pc_model_save_bytes(r->kase.model, &bytes, &size, err) != PC_OK) return NULL;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size; i++)
        h = (h ^ bytes[i]) * 16777619u;
    free(bytes);
    size_t len = strlen(out) + strlen(sig) + 16;
    char *dir = malloc(len);
    if (!dir) {
        pc_error_set(err, PC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    snprintf(dir, len, "%s/%s-%08x", out, sig, h);
    return dir;
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

    rc = pc_cli_resolve_eps(SHRINK_CMD, args.ep_file, args.ep_list, args.layer_assignment, &reg, &eps, &n_eps,
                            NULL);
    if (rc != PC_EXIT_OK) goto done;
    if (pc_model_load_file(args.model, NULL, &kase.model, &err) != PC_OK) {
        rc = pc_cli_report(SHRINK_CMD, &err);
        goto done;
    }
    kase.family = "";
    kase.ep_list = strdup(args.ep_list);
    kase.layer_assignment = args.layer_assignment ? strdup(args.layer_assignment) : NULL;
    if (!kase.ep_list || (args.layer_assignment && !kase.layer_assignment)) {
        pc_error_set(&err, PC_ERR_NOMEM, "out of memory");
        rc = pc_cli_report(SHRINK_CMD, &err);
        goto done;
    }
    if (args.ep_file && !(kase.ep_text = file_read_text(args.ep_file, &err))) {
        rc = err.status == PC_ERR_NOMEM ? pc_cli_report(SHRINK_CMD, &err) : PC_EXIT_BAD_INPUT;
        if (rc == PC_EXIT_BAD_INPUT)
            fprintf(stderr, "passcheck %s: error [io]: %s\n", SHRINK_CMD, err.message);
        goto done;
    }
    if (case_inputs(&kase, args.inputs, &err) != PC_OK) {
        if (err.status == PC_ERR_UNSUPPORTED) err.status = PC_ERR_IO; /* a model we cannot feed: bad input */
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
    struct stat st;
    if (stat(args.out, &st) != 0 && mkdir(args.out, 0777) != 0 && errno != EEXIST) {
        pc_error_set(&err, PC_ERR_IO, "--out: %s: cannot create the folder: %s", args.out, strerror(errno));
        rc = pc_cli_report(SHRINK_CMD, &err);
        goto done;
    }
    if (!(dir = repro_dir(args.out, &sr, &err))) {
        rc = pc_cli_report(SHRINK_CMD, &err);
        goto done;
    }
    pc_repro_info info = {
        .check = &cc, .inject = args.inject, .original = &target, .original_nodes = sr.nodes_before};
    if (pc_repro_write(dir, &sr, &info, &err) != PC_OK) {
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
