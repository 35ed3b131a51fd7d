/* The loader/saver check (roundtrip.h): collecting the models, the reviewed skip list, one load/save/reload/
 * compare/save-again per model, the per-case lines, the JSON file and the --save-dir manifest. */
#include "properties/runner/roundtrip.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/internal.h"
#include "properties/runner/util.h"

/* Notes go to stderr in the command's voice: the runner is the command's body. */
#define NOTE_PREFIX "passcheck roundtrip: "

/* Folders deeper than this below a PATH are not searched. */
enum { MAX_DEPTH = 32 };

/* One reviewed skip-list entry: "relative/path reason...". */
typedef struct skip_entry {
    char *key;
    char *reason;
    bool used;
} skip_entry;

struct pc_roundtrip {
    const pc_roundtrip_options *o;
    pc_str_list models;
    skip_entry *skips;
    size_t n_skips;
    FILE *manifest, *json;
};

void pc_roundtrip_options_default(pc_roundtrip_options *o)
{
    memset(o, 0, sizeof *o);
}

/* Collects *.onnx and *.ort below dir (no symlink following) into out. */
static pc_status collect(const char *dir, pc_str_list *out, int depth, pc_error *err)
{
    if (depth > MAX_DEPTH) return PC_OK;
    DIR *d = opendir(dir);
    if (!d) return pc_error_set(err, PC_ERR_IO, "cannot open directory %s: %s", dir, strerror(errno));
    pc_status st = PC_OK;
    struct dirent *e;
    while (st == PC_OK && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char *p = pc_path_join(dir, e->d_name);
        if (!p) {
            st = pc_error_set(err, PC_ERR_NOMEM, "out of memory listing %s", dir);
            break;
        }
        struct stat sb;
        if (lstat(p, &sb) == 0) {
            if (S_ISDIR(sb.st_mode))
                st = collect(p, out, depth + 1, err);
            else if (S_ISREG(sb.st_mode) && (pc_str_ends_with(p, ".onnx") || pc_str_ends_with(p, ".ort")) &&
                     !pc_str_list_push(out, p))
                st = pc_error_set(err, PC_ERR_NOMEM, "out of memory listing %s", dir);
        }
        free(p);
    }
    closedir(d);
    return st;
}

/* The reviewed skip list: "relative/path reason..." per line; '#' comments. */
static pc_status skip_load(pc_roundtrip *r, const char *path, pc_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return pc_error_set(err, PC_ERR_IO, "cannot open skip list %s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    pc_status st = PC_OK;
    while ((len = getline(&line, &cap, f)) >= 0) {
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#') continue;
        char *sp = strpbrk(p, " \t");
        if (!sp) {
            st = pc_error_set(err, PC_ERR_VALUE, "%s: entry '%s' has no reason", path, p);
            break;
        }
        *sp++ = '\0';
        while (*sp == ' ' || *sp == '\t')
            sp++;
        skip_entry *grown = realloc(r->skips, (r->n_skips + 1) * sizeof *grown);
        if (!grown) {
            st = pc_error_set(err, PC_ERR_NOMEM, "out of memory reading skip list %s", path);
            break;
        }
        r->skips = grown;
        skip_entry *s = &r->skips[r->n_skips++];
        s->key = strdup(p);
        s->reason = strdup(sp);
        s->used = false;
        if (!s->key || !s->reason) {
            st = pc_error_set(err, PC_ERR_NOMEM, "out of memory reading skip list %s", path);
            break;
        }
    }
    free(line);
    fclose(f);
    return st;
}

/* A case matches a skip entry when its path ends with "/<key>". */
static skip_entry *skip_find(pc_roundtrip *r, const char *path)
{
    for (size_t i = 0; i < r->n_skips; i++) {
        size_t n = strlen(path), m = strlen(r->skips[i].key);
        if (n > m && path[n - m - 1] == '/' && strcmp(path + n - m, r->skips[i].key) == 0)
            return &r->skips[i];
    }
    return NULL;
}

pc_status pc_roundtrip_open(const pc_roundtrip_options *o, const char *const *paths, size_t n_paths,
                            pc_roundtrip **out, pc_error *err)
{
    *out = NULL;
    pc_roundtrip *r = calloc(1, sizeof *r);
    if (!r) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    r->o = o;
    pc_status st = o->skip_list ? skip_load(r, o->skip_list, err) : PC_OK;
    for (size_t i = 0; st == PC_OK && i < n_paths; i++) {
        struct stat sb;
        if (stat(paths[i], &sb) != 0) {
            st = pc_error_set(err, PC_ERR_IO, "%s: %s", paths[i], strerror(errno));
            break;
        }
        size_t before = r->models.n;
        if (S_ISDIR(sb.st_mode))
            st = collect(paths[i], &r->models, 0, err);
        else if (!pc_str_list_push(&r->models, paths[i]))
            st = pc_error_set(err, PC_ERR_NOMEM, "out of memory");
        pc_str_list_sort(&r->models, before);
    }
    if (st == PC_OK && o->save_dir) {
        struct stat sd;
        if (stat(o->save_dir, &sd) != 0 || !S_ISDIR(sd.st_mode)) {
            st = pc_error_set(err, PC_ERR_USAGE, "--save-dir %s is not a directory", o->save_dir);
        } else {
            char mpath[4096];
            snprintf(mpath, sizeof mpath, "%s/manifest.tsv", o->save_dir);
            r->manifest = fopen(mpath, "w");
            if (!r->manifest)
                st = pc_error_set(err, PC_ERR_IO, "cannot write %s: %s", mpath, strerror(errno));
        }
    }
    if (st == PC_OK && o->json) {
        r->json = fopen(o->json, "w");
        if (!r->json)
            st = pc_error_set(err, PC_ERR_IO, "cannot write %s: %s", o->json, strerror(errno));
        else
            fprintf(r->json, "{\"cases\": [\n");
    }
    if (st != PC_OK) {
        pc_roundtrip_free(r);
        return st;
    }
    *out = r;
    return PC_OK;
}

/* PC_OK when two saves are byte-identical; otherwise a check failure naming the first differing byte. */
static pc_status same_bytes(const uint8_t *b1, size_t n1, const uint8_t *b2, size_t n2, const char *what,
                            pc_error *err)
{
    if (n1 == n2 && (!n1 || memcmp(b1, b2, n1) == 0)) return PC_OK;
    size_t at = 0;
    while (at < n1 && at < n2 && b1[at] == b2[at])
        at++;
    return pc_error_set(err, PC_ERR_CHECK_FAILED, "%s gives different bytes (%zu vs %zu, first at %zu)", what,
                        n1, n2, at);
}

/* The file is in the ORT format: told by content, by the loader's own test (pc_ort_detect). */
static bool file_is_ort(const char *path)
{
    uint8_t head[8];
    FILE *f = fopen(path, "rb");
    bool ort = f && pc_ort_detect(head, fread(head, 1, sizeof head, f));
    if (f) fclose(f);
    return ort;
}

/* A model read from an ORT file round-trips through the ORT saver too: save, reload, save again gives the
 * same bytes (what ONNX Runtime wrote is not byte-compared: it orders tables differently from run to run). */
static pc_status roundtrip_ort(const pc_model *a, pc_error *err)
{
    uint8_t *o1 = NULL, *o2 = NULL;
    size_t k1 = 0, k2 = 0;
    pc_model *c = NULL;
    pc_status st = pc_model_save_ort_bytes(a, &o1, &k1, err);
    if (st != PC_OK) {
        pc_error_prefix(err, "saving as ORT: ");
        goto out;
    }
    if ((st = pc_model_load_bytes(o1, k1, NULL, &c, err)) != PC_OK) {
        pc_error_prefix(err, "reloading the saved ORT file: ");
        goto out;
    }
    if ((st = pc_model_save_ort_bytes(c, &o2, &k2, err)) != PC_OK) {
        pc_error_prefix(err, "saving the reloaded ORT model: ");
        goto out;
    }
    st = same_bytes(o1, k1, o2, k2, "saving as ORT twice", err);
out:
    free(o1);
    free(o2);
    pc_model_free(c);
    return st;
}

/* One model. PC_OK when it passes; otherwise err says why. *n_bytes: the size of the first save. */
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
    if ((st = same_bytes(bytes1, size1, bytes2, size2, "saving twice", err)) != PC_OK) goto out;
    if (file_is_ort(path)) st = roundtrip_ort(a, err);
out:
    free(bytes1);
    free(bytes2);
    pc_model_free(a);
    pc_model_free(b);
    return st;
}

int pc_roundtrip_run(pc_roundtrip *r)
{
    const pc_roundtrip_options *o = r->o;
    const pc_str_list *models = &r->models;
    int rc = PC_EXIT_OK;
    size_t passed = 0, failed = 0, skipped = 0, unexpected = 0;
    uint64_t total_bytes = 0;
    double t0 = pc_now_seconds();
    for (size_t i = 0; i < models->n; i++) {
        const char *model = models->items[i];
        pc_error err;
        pc_error_clear(&err);
        size_t n_bytes = 0;
        char save_as[4096];
        if (o->save_dir) snprintf(save_as, sizeof save_as, "%s/%04zu.onnx", o->save_dir, i);
        pc_status st = roundtrip_one(model, o->save_dir ? save_as : NULL, &err, &n_bytes);
        if (r->manifest && st == PC_OK) fprintf(r->manifest, "%s\t%s\n", model, save_as);
        total_bytes += n_bytes;
        skip_entry *skip = skip_find(r, model);
        const char *outcome;
        if (st == PC_OK && !skip) {
            passed++;
            outcome = "passed";
            if (!o->quiet) printf("PASS %s\n", model);
        } else if (st == PC_OK && skip) {
            passed++;
            unexpected++;
            skip->used = true;
            outcome = "passed";
            printf("PASS %s (listed in the skip list: remove it)\n", model);
        } else if (skip) {
            skipped++;
            skip->used = true;
            outcome = "skipped";
            if (!o->quiet)
                printf("SKIP %s: %s [%s: %s]\n", model, skip->reason, pc_status_name(st), err.message);
        } else {
            failed++;
            outcome = "failed";
            printf("FAIL %s [%s]: %s\n", model, pc_status_name(st), err.message);
        }
        if (r->json) {
            fprintf(r->json, "  {\"model\": ");
            pc_json_string(r->json, model);
            fprintf(r->json, ", \"outcome\": \"%s\", \"status\": \"%s\", \"message\": ", outcome,
                    pc_status_name(st));
            pc_json_string(r->json, st == PC_OK ? "" : err.message);
            fprintf(r->json, "}%s\n", i + 1 < models->n ? "," : "");
        }
    }
    double secs = pc_now_seconds() - t0;
    if (r->manifest && fclose(r->manifest) != 0) rc = PC_EXIT_INTERNAL;
    r->manifest = NULL;
    if (r->json) {
        fprintf(r->json, "], \"passed\": %zu, \"failed\": %zu, \"skipped\": %zu}\n", passed, failed, skipped);
        if (fclose(r->json) != 0) rc = PC_EXIT_INTERNAL;
        r->json = NULL;
    }
    printf("roundtrip: %zu models, %.1f MB saved, %.2f s\n", models->n, (double)total_bytes / 1e6, secs);
    if (unexpected) printf("roundtrip: %zu skip-list entries now pass; update the skip list\n", unexpected);
    printf("%zu passed, %zu failed, %zu skipped\n", passed, failed, skipped);
    if (failed) rc = PC_EXIT_CHECK_FAILED;
    if (!models->n) {
        fprintf(stderr, NOTE_PREFIX "no .onnx or .ort files found\n");
        rc = PC_EXIT_BAD_INPUT;
    }
    return rc;
}

void pc_roundtrip_free(pc_roundtrip *r)
{
    if (!r) return;
    if (r->manifest) fclose(r->manifest);
    if (r->json) fclose(r->json);
    pc_str_list_free(&r->models);
    for (size_t i = 0; i < r->n_skips; i++) {
        free(r->skips[i].key);
        free(r->skips[i].reason);
    }
    free(r->skips);
    free(r);
}
