/* passcheck roundtrip PATH...: the loader/saver conformance check. For every model: load + verify, save to
 * bytes, reload, compare the two IRs, save again and require identical bytes. Directories are searched
 * recursively for *.onnx files (the ONNX backend test layout keeps one model.onnx per case folder). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tools/cli.h"

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Collects *.onnx below dir (no symlink following). Returns 0, or -1 with errno-style message printed. */
static int collect(const char *dir, pc_str_list *out, int depth)
{
    if (depth > 32) return 0;
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "passcheck roundtrip: cannot open directory %s: %s\n", dir, strerror(errno));
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && rc == 0) {
        if (e->d_name[0] == '.') continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(len);
        if (!p) {
            rc = -1;
            break;
        }
        snprintf(p, len, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (lstat(p, &sb) == 0) {
            if (S_ISDIR(sb.st_mode))
                rc = collect(p, out, depth + 1);
            else if (S_ISREG(sb.st_mode) && ends_with(p, ".onnx"))
                rc = pc_str_list_push(out, p) ? 0 : -1;
        }
        free(p);
    }
    closedir(d);
    return rc;
}

/* The reviewed skip list: "relative/path reason..." per line; '#' comments. */
typedef struct skip_entry {
    char *key;
    char *reason;
    bool used;
} skip_entry;

typedef struct skip_list {
    skip_entry *items;
    size_t n;
} skip_list;

static int skip_load(const char *path, skip_list *sl)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "passcheck roundtrip: cannot open skip list %s: %s\n", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (!*p || *p == '#') continue;
        char *sp = strpbrk(p, " \t");
        if (!sp) {
            fprintf(stderr, "passcheck roundtrip: %s: entry '%s' has no reason\n", path, p);
            rc = -1;
            break;
        }
        *sp++ = '\0';
        while (*sp == ' ' || *sp == '\t') sp++;
        skip_entry *ni = realloc(sl->items, (sl->n + 1) * sizeof *ni);
        if (!ni) {
            rc = -1;
            break;
        }
        sl->items = ni;
        sl->items[sl->n].key = strdup(p);
        sl->items[sl->n].reason = strdup(sp);
        sl->items[sl->n].used = false;
        if (!sl->items[sl->n].key || !sl->items[sl->n].reason) {
            rc = -1;
            break;
        }
        sl->n++;
    }
    free(line);
    fclose(f);
    return rc;
}

/* A case matches a skip entry when its path ends with "/<key>". */
static skip_entry *skip_find(skip_list *sl, const char *path)
{
    for (size_t i = 0; i < sl->n; i++) {
        size_t n = strlen(path), m = strlen(sl->items[i].key);
        if (n > m && path[n - m - 1] == '/' && strcmp(path + n - m, sl->items[i].key) == 0) return &sl->items[i];
    }
    return NULL;
}

/* One case. Returns PC_OK when it passes; otherwise fills err with the reason. */
static pc_status roundtrip_one(const char *path, const char *save_as, pc_error *err, size_t *n_bytes)
{
    pc_model *a = NULL, *b = NULL;
    uint8_t *bytes1 = NULL, *bytes2 = NULL;
    size_t size1 = 0, size2 = 0;
    char diff[512];
    pc_status st = pc_model_load_file(path, NULL, &a, err);
    if (st != PC_OK) goto out;
    if ((st = pc_model_save_bytes(a, &bytes1, &size1, err)) != PC_OK) goto out;
    *n_bytes = size1;
    if (save_as && (st = pc_model_save_file(a, save_as, err)) != PC_OK) goto out;
    if ((st = pc_model_load_bytes(bytes1, size1, NULL, &b, err)) != PC_OK) {
        pc_error_prefix(err, "reloading the saved model: ");
        goto out;
    }
    if (!pc_model_equal(a, b, diff, sizeof diff)) {
        st = pc_error_set(err, PC_ERR_CHECK_FAILED, "reloaded model differs: %s", diff);
        goto out;
    }
    if ((st = pc_model_save_bytes(b, &bytes2, &size2, err)) != PC_OK) goto out;
    if (size1 != size2 || memcmp(bytes1, bytes2, size1) != 0) {
        size_t at = 0;
        while (at < size1 && at < size2 && bytes1[at] == bytes2[at]) at++;
        st = pc_error_set(err, PC_ERR_CHECK_FAILED, "saving twice gives different bytes (%zu vs %zu, first at %zu)",
                          size1, size2, at);
    }
out:
    free(bytes1);
    free(bytes2);
    pc_model_free(a);
    pc_model_free(b);
    return st;
}

void pc_cmd_roundtrip_help(FILE *out)
{
    fprintf(out,
            "usage: passcheck roundtrip PATH... [--skip-list FILE] [--json FILE] [--quiet]\n\n"
            "For every model (a .onnx file, or every .onnx below a directory): load and verify it, save it,\n"
            "reload the saved bytes, compare the two graphs, save again and require byte-identical output.\n\n"
            "  --skip-list FILE  reviewed list of expected failures: 'case/model.onnx reason' per line; listed\n"
            "                    cases still run, count as skipped when they fail, and are reported when they pass\n"
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
    pc_str_list models = {0};
    skip_list skips = {0};
    int rc = pc_cli_parse_args("roundtrip", argc, argv, opts, sizeof opts / sizeof opts[0], &args, &paths_arg);
    if (rc != PC_EXIT_OK) {
        pc_cli_list_free(&args.inputs);
        return rc;
    }
    const char *skip_path = args.skip_path, *json_path = args.json_path, *save_dir = args.save_dir;
    bool quiet = args.quiet;
    const pc_cli_list inputs = args.inputs;
    FILE *manifest = NULL, *json = NULL;
    if (skip_path && skip_load(skip_path, &skips) != 0) {
        rc = PC_EXIT_BAD_INPUT;
        goto done;
    }
    for (size_t i = 0; i < inputs.n; i++) {
        struct stat sb;
        if (stat(inputs.items[i], &sb) != 0) {
            fprintf(stderr, "passcheck roundtrip: %s: %s\n", inputs.items[i], strerror(errno));
            rc = PC_EXIT_BAD_INPUT;
            goto done;
        }
        size_t before = models.n;
        if (S_ISDIR(sb.st_mode)) {
            if (collect(inputs.items[i], &models, 0) != 0) {
                rc = PC_EXIT_BAD_INPUT;
                goto done;
            }
        } else if (!pc_str_list_push(&models, inputs.items[i])) {
            rc = PC_EXIT_INTERNAL;
            goto done;
        }
        pc_str_list_sort(&models, before);
    }
    if (save_dir) {
        struct stat sd;
        if (stat(save_dir, &sd) != 0 || !S_ISDIR(sd.st_mode)) {
            fprintf(stderr, "passcheck roundtrip: --save-dir %s is not a directory\n", save_dir);
            rc = PC_EXIT_USAGE;
            goto done;
        }
        char mpath[4096];
        snprintf(mpath, sizeof mpath, "%s/manifest.tsv", save_dir);
        manifest = fopen(mpath, "w");
        if (!manifest) {
            fprintf(stderr, "passcheck roundtrip: cannot write %s: %s\n", mpath, strerror(errno));
            rc = PC_EXIT_BAD_INPUT;
            goto done;
        }
    }
    if (json_path) {
        json = fopen(json_path, "w");
        if (!json) {
            fprintf(stderr, "passcheck roundtrip: cannot write %s: %s\n", json_path, strerror(errno));
            rc = PC_EXIT_BAD_INPUT;
            goto done;
        }
        fprintf(json, "{\"cases\": [\n");
    }
    size_t passed = 0, failed = 0, skipped = 0, unexpected = 0;
    uint64_t total_bytes = 0;
    double t0 = pc_now_seconds();
    for (size_t i = 0; i < models.n; i++) {
        pc_error err;
        pc_error_clear(&err);
        size_t n_bytes = 0;
        char save_as[4096];
        if (save_dir) snprintf(save_as, sizeof save_as, "%s/%04zu.onnx", save_dir, i);
        pc_status st = roundtrip_one(models.items[i], save_dir ? save_as : NULL, &err, &n_bytes);
        if (manifest && st == PC_OK) fprintf(manifest, "%s\t%s\n", models.items[i], save_as);
        total_bytes += n_bytes;
        skip_entry *skip = skip_find(&skips, models.items[i]);
        const char *outcome;
        if (st == PC_OK && !skip) {
            passed++;
            outcome = "passed";
            if (!quiet) printf("PASS %s\n", models.items[i]);
        } else if (st == PC_OK && skip) {
            passed++;
            unexpected++;
            skip->used = true;
            outcome = "passed";
            printf("PASS %s (listed in the skip list: remove it)\n", models.items[i]);
        } else if (skip) {
            skipped++;
            skip->used = true;
            outcome = "skipped";
            if (!quiet) printf("SKIP %s: %s [%s: %s]\n", models.items[i], skip->reason, pc_status_name(st), err.message);
        } else {
            failed++;
            outcome = "failed";
            printf("FAIL %s [%s]: %s\n", models.items[i], pc_status_name(st), err.message);
        }
        if (json) {
            fprintf(json, "  {\"model\": ");
            pc_json_string(json, models.items[i]);
            fprintf(json, ", \"outcome\": \"%s\", \"status\": \"%s\", \"message\": ", outcome, pc_status_name(st));
            pc_json_string(json, st == PC_OK ? "" : err.message);
            fprintf(json, "}%s\n", i + 1 < models.n ? "," : "");
        }
    }
    double secs = pc_now_seconds() - t0;
    if (manifest && fclose(manifest) != 0) rc = PC_EXIT_INTERNAL;
    manifest = NULL;
    if (json) {
        fprintf(json, "], \"passed\": %zu, \"failed\": %zu, \"skipped\": %zu}\n", passed, failed, skipped);
        if (fclose(json) != 0) rc = PC_EXIT_INTERNAL;
        json = NULL;
    }
    printf("roundtrip: %zu models, %.1f MB saved, %.2f s\n", models.n, (double)total_bytes / 1e6, secs);
    if (unexpected) printf("roundtrip: %zu skip-list entries now pass; update the skip list\n", unexpected);
    printf("%zu passed, %zu failed, %zu skipped\n", passed, failed, skipped);
    if (failed) rc = PC_EXIT_CHECK_FAILED;
    if (!models.n) {
        fprintf(stderr, "passcheck roundtrip: no .onnx files found\n");
        rc = PC_EXIT_BAD_INPUT;
    }
done:
    if (manifest) fclose(manifest);
    if (json) fclose(json);
    pc_str_list_free(&models);
    for (size_t i = 0; i < skips.n; i++) {
        free(skips.items[i].key);
        free(skips.items[i].reason);
    }
    pc_cli_list_free(&args.inputs);
    free(skips.items);
    return rc;
}
