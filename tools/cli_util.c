/* CLI helpers: usage errors, error reports, type descriptions (JSON strings: properties/runner/util.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "tools/cli.h"
#include "properties/runner/model_case.h"

int pc_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    fprintf(stderr, "passcheck%s%s: usage error: ", cmd ? " " : "", cmd ? cmd : "");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (cmd)
        fprintf(stderr, "\n(see 'passcheck %s --help')\n", cmd);
    else
        fprintf(stderr, "\n(see 'passcheck --help')\n");
    return PC_EXIT_USAGE;
}

int pc_cli_report(const char *cmd, const pc_error *err)
{
    fprintf(stderr, "passcheck %s: error [%s]: %s\n", cmd, pc_status_name(err->status), err->message);
    return pc_status_exit_code(err->status);
}

int pc_cli_parse_u64(const char *cmd, const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (!pc_parse_u64(s, lo, hi, out))
        return pc_cli_usage_error(cmd, "bad %s '%s': expected an integer from %" PRIu64 " to %" PRIu64, opt,
                                  s, lo, hi);
    return PC_EXIT_OK;
}

int pc_cli_parse_seconds(const char *cmd, const char *opt, const char *s, double max, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (!s[0] || *end || errno || !isfinite(v) || v <= 0 || v > max)
        return pc_cli_usage_error(cmd, "bad %s '%s': expected a number of seconds > 0 and <= %g", opt, s,
                                  max);
    *out = v;
    return PC_EXIT_OK;
}

int pc_cli_parse_level(const char *cmd, const char *s, int *out)
{
    if (!(s[0] >= '0' && s[0] <= '0' + PC_LEVEL_MAX && s[1] == '\0'))
        return pc_cli_usage_error(cmd, "bad --level '%s' (want 0..%d)", s, PC_LEVEL_MAX);
    *out = s[0] - '0';
    return PC_EXIT_OK;
}

void pc_type_describe(FILE *out, const pc_type *t)
{
    switch (t->kind) {
    case PC_TYPE_NONE:
        fputs("?", out);
        return;
    case PC_TYPE_TENSOR:
    case PC_TYPE_SPARSE_TENSOR:
        fprintf(out, "%s%s", t->kind == PC_TYPE_SPARSE_TENSOR ? "sparse " : "",
                t->elem ? pc_dtype_name(t->elem) : "?");
        if (t->shape.rank < 0) {
            fputs("[*]", out);
            return;
        }
        fputc('[', out);
        for (int32_t i = 0; i < t->shape.rank; i++) {
            const pc_dim *d = &t->shape.dims[i];
            if (i) fputc(',', out);
            if (d->kind == PC_DIM_KNOWN)
                fprintf(out, "%lld", (long long)d->size);
            else if (d->kind == PC_DIM_SYMBOLIC)
                fputs(d->symbol, out);
            else
                fputc('?', out);
        }
        fputc(']', out);
        return;
    case PC_TYPE_SEQUENCE:
    case PC_TYPE_OPTIONAL:
        fputs(t->kind == PC_TYPE_SEQUENCE ? "seq(" : "optional(", out);
        if (t->inner)
            pc_type_describe(out, t->inner);
        else
            fputc('?', out);
        fputc(')', out);
        return;
    case PC_TYPE_MAP:
        fprintf(out, "map(%s,", pc_dtype_name(t->key));
        if (t->inner)
            pc_type_describe(out, t->inner);
        else
            fputc('?', out);
        fputc(')', out);
        return;
    case PC_TYPE_OPAQUE:
        fprintf(out, "opaque(%s.%s)", t->opaque_domain ? t->opaque_domain : "",
                t->opaque_name ? t->opaque_name : "");
        return;
    case PC_TYPE_KIND_COUNT:
        break;
    }
    fputs("?", out);
}

/* Appends to a list whose room is argc entries, allocated on first use: never more values than arguments. */
static bool cli_list_push(pc_cli_list *list, int argc, const char *value)
{
    if (!list->items && !(list->items = calloc((size_t)argc, sizeof *list->items))) return false;
    list->items[list->n++] = value;
    return true;
}

void pc_cli_list_free(pc_cli_list *list)
{
    free(list->items);
    list->items = NULL;
    list->n = 0;
}

int pc_cli_parse_args(const char *cmd, int argc, char **argv, const pc_cli_opt *opts, size_t n_opts,
                      void *args, const pc_cli_positional *pos)
{
    bool seen[64] = {false}; /* option tables are small and fixed at compile time */
    if (n_opts > sizeof seen / sizeof seen[0] || argc < 1) return PC_EXIT_INTERNAL;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!options_done && strcmp(arg, "--") == 0) {
            options_done = true;
            continue;
        }
        if (!options_done && arg[0] == '-' && arg[1] != '\0') {
            size_t k = 0;
            while (k < n_opts && strcmp(arg, opts[k].name) != 0 &&
                   !(opts[k].alias && strcmp(arg, opts[k].alias) == 0))
                k++;
            if (k == n_opts) return pc_cli_usage_error(cmd, "unknown option '%s'", arg);
            if (seen[k] && opts[k].kind != PC_CLI_LIST)
                return pc_cli_usage_error(cmd, "%s given twice", opts[k].name);
            seen[k] = true;
            char *field = (char *)args + opts[k].offset;
            if (opts[k].kind == PC_CLI_FLAG) {
                *(bool *)field = true;
                continue;
            }
            if (i + 1 >= argc || (opts[k].kind == PC_CLI_LIST && !argv[i + 1][0]))
                return pc_cli_usage_error(cmd, "%s needs an argument", arg);
            if (opts[k].kind == PC_CLI_STRING)
                *(const char **)field = argv[++i];
            else if (!cli_list_push((pc_cli_list *)(void *)field, argc, argv[++i]))
                return PC_EXIT_INTERNAL;
            continue;
        }
        if (!pos)
            return pc_cli_usage_error(cmd, "unexpected argument '%s' (%s takes only options)", arg, cmd);
        char *field = (char *)args + pos->offset;
        if (pos->kind == PC_CLI_LIST) {
            if (!cli_list_push((pc_cli_list *)(void *)field, argc, arg)) return PC_EXIT_INTERNAL;
            continue;
        }
        const char **one = (const char **)(void *)field;
        if (*one) return pc_cli_usage_error(cmd, "more than one %s ('%s' and '%s')", pos->name, *one, arg);
        *one = arg;
    }
    if (pos) {
        const char *field = (const char *)args + pos->offset;
        bool none = pos->kind == PC_CLI_LIST ? ((const pc_cli_list *)(const void *)field)->n == 0
                                             : *(const char *const *)(const void *)field == NULL;
        if (none) return pc_cli_usage_error(cmd, "missing %s", pos->name);
    }
    return PC_EXIT_OK;
}

int pc_cli_resolve_eps(const char *cmd, const char *ep_file, const char *ep_list,
                       const char *layer_assignment, pc_ep_registry **reg, const pc_ep ***eps,
                       uint32_t *n_eps, pc_layer_rules **rules)
{
    pc_error err;
    pc_error_clear(&err);
    if (rules) *rules = NULL;
    if (pc_ep_registry_create(reg, &err) != PC_OK) return pc_cli_report(cmd, &err);
    if (ep_file && pc_ep_registry_load_file(*reg, ep_file, &err) != PC_OK) {
        if (err.status == PC_ERR_NOMEM || err.status == PC_ERR_INTERNAL) return pc_cli_report(cmd, &err);
        /* whatever status the registry gives it, a bad --ep-file is a bad input file (exit 3) */
        fprintf(stderr, "passcheck %s: error [%s]: --ep-file: %s\n", cmd, pc_status_name(err.status),
                err.message);
        return PC_EXIT_BAD_INPUT;
    }
    if (pc_ep_registry_parse_list(*reg, ep_list, eps, n_eps, &err) != PC_OK) {
        if (err.status == PC_ERR_USAGE) return pc_cli_usage_error(cmd, "--ep: %s", err.message);
        return pc_cli_report(cmd, &err);
    }
    if (!layer_assignment) return PC_EXIT_OK;
    pc_layer_rules *parsed = NULL;
    if (pc_layer_rules_parse(layer_assignment, (const pc_ep *const *)*eps, *n_eps, &parsed, &err) != PC_OK) {
        if (err.status == PC_ERR_USAGE) return pc_cli_usage_error(cmd, "--layer-assignment: %s", err.message);
        return pc_cli_report(cmd, &err);
    }
    if (rules)
        *rules = parsed;
    else
        pc_layer_rules_free(parsed);
    return PC_EXIT_OK;
}

/* Report files: written whole through an exclusively created temporary (pc_file_write_atomic), so nothing of
 * someone else's is truncated or removed and a failure leaves nothing half-written. */
int pc_cli_write_file_atomic(const char *cmd, const char *option, const char *path, pc_cli_file_writer write,
                             const void *ctx)
{
    int e = 0;
    pc_file_write_atomic(path, PC_FILE_EXCLUSIVE, write, ctx, NULL, &e);
    if (!e) return PC_EXIT_OK;
    fprintf(stderr, "passcheck %s: cannot write %s file %s: %s\n", cmd, option, path, strerror(e));
    return e == ENOMEM ? PC_EXIT_INTERNAL : PC_EXIT_BAD_INPUT;
}

int pc_cli_check_writable(const char *cmd, const char *option, const char *path)
{
    if (!path) return PC_EXIT_OK;
    char *copy = strdup(path);
    if (!copy) return PC_EXIT_INTERNAL;
    char *slash = strrchr(copy, '/');
    const char *dir = ".";
    if (slash == copy)
        dir = "/";
    else if (slash) {
        *slash = '\0';
        dir = copy;
    }
    struct stat sb;
    const char *why = NULL;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "passcheck %s: cannot write %s file %s: it is a directory\n", cmd, option, path);
        free(copy);
        return PC_EXIT_BAD_INPUT;
    }
    if (stat(dir, &sb) != 0)
        why = strerror(errno);
    else if (!S_ISDIR(sb.st_mode))
        why = "not a directory";
    else if (access(dir, W_OK) != 0)
        why = strerror(errno);
    if (why)
        fprintf(stderr, "passcheck %s: cannot write %s file %s: folder %s: %s\n", cmd, option, path, dir,
                why);
    int rc = why ? PC_EXIT_BAD_INPUT : PC_EXIT_OK;
    free(copy);
    return rc;
}

int pc_cli_join_dims(const char *cmd, const pc_cli_list *dims, char **out)
{
    *out = NULL;
    if (!dims->n) return PC_EXIT_OK;
    size_t len = 1;
    for (size_t i = 0; i < dims->n; i++) {
        if (strchr(dims->items[i], ','))
            return pc_cli_usage_error(cmd, "--dim '%s': one NAME=SIZE per --dim", dims->items[i]);
        len += strlen(dims->items[i]) + 1;
    }
    char *s = malloc(len);
    if (!s) return pc_cli_report(cmd, &(pc_error){.status = PC_ERR_NOMEM, .message = "out of memory"});
    s[0] = '\0';
    for (size_t i = 0; i < dims->n; i++) {
        strcat(s, i ? "," : "");
        strcat(s, dims->items[i]);
    }
    *out = s;
    return PC_EXIT_OK;
}

int pc_cli_session_setup(const char *cmd, const pc_cli_session_args *a, pc_ep_registry **reg, pc_case *kase,
                         pc_session_options *so)
{
    const pc_ep **eps = NULL;
    uint32_t n_eps = 0;
    char *dims = NULL;
    pc_error err;
    *reg = NULL;
    int rc = pc_cli_resolve_eps(cmd, a->ep_file, a->ep_list, a->layer_assignment, reg, &eps, &n_eps, NULL);
    if (rc == PC_EXIT_OK) rc = pc_cli_join_dims(cmd, a->dims, &dims);
    if (rc == PC_EXIT_OK) {
        pc_model_case_options mo;
        pc_model_case_options_default(&mo);
        mo.inputs = a->inputs;
        mo.seed = a->seed;
        mo.dims = dims;
        mo.require_dims = true;
        if (pc_case_from_model(a->model, &mo, kase, &err) != PC_OK)
            rc = err.status == PC_ERR_USAGE ? pc_cli_usage_error(cmd, "%s: %s", a->model, err.message)
                                            : pc_cli_report(cmd, &err);
    }
    free(dims);
    if (rc != PC_EXIT_OK) {
        pc_ep_registry_free(*reg);
        *reg = NULL;
        return rc;
    }
    pc_session_options_default(so);
    so->pipeline.level = a->level;
    so->pipeline.eps = (const pc_ep *const *)eps;
    so->pipeline.n_eps = n_eps;
    so->pipeline.layer_assignment = a->layer_assignment;
    so->threads = (int)a->threads;
    return PC_EXIT_OK;
}
