/* The failure database (like Hypothesis's example database): every failure the suite finds is saved as the
 * choice sequence and generator config that reproduce it, one small text file per failure named by a content
 * hash, and is replayed at the start of the next run until it passes. Format in suite.h. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "properties/runner/repro.h"
#include "properties/runner/suite.h"
#include "properties/runner/util.h"

/* Version 1: the choices regenerate the failing case. Version 2: a graph-shrunk failure, kept as a repro
 * folder next to the entry (format in suite.h). Choice-only entries are still written as version 1. */
static const char DB_MAGIC_PREFIX[] = "passcheck-failure ";
static const char DB_MAGIC_V1[] = "passcheck-failure 1";
static const char DB_MAGIC_V2[] = "passcheck-failure 2";
static const char REPRO_SUFFIX[] = ".repro";

void pc_db_entry_free(pc_db_entry *e)
{
    free(e->inject);
    free(e->choices);
    free(e->repro_dir);
    memset(e, 0, sizeof *e);
}

void pc_db_entries_free(pc_db_entry *entries, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pc_db_entry_free(&entries[i]);
    free(entries);
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t fnv1a_u64(uint64_t h, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i)); /* fixed byte order: names are stable anywhere */
    return fnv1a(h, b, sizeof b);
}

uint64_t pc_db_entry_hash(const pc_db_entry *e)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const char *family = e->gen.family ? e->gen.family : "";
    h = fnv1a(h, family, strlen(family) + 1);
    h = fnv1a_u64(h, e->gen.max_nodes);
    h = fnv1a_u64(h, e->gen.max_elements);
    h = fnv1a_u64(h, (uint64_t)(int64_t)e->gen.max_rank);
    h = fnv1a_u64(h,
                  (uint64_t)e->gen.allow_special << 2 | (uint64_t)e->gen.annotate << 1 | e->gen.random_eps);
    h = fnv1a_u64(h, e->n_choices);
    for (size_t i = 0; i < e->n_choices; i++)
        h = fnv1a_u64(h, e->choices[i]);
    /* only for saved repros, so version-1 names stay what they were */
    if (e->repro_digest) h = fnv1a_u64(h, e->repro_digest);
    return h;
}

uint64_t pc_db_digest(const void *bytes, size_t n)
{
    return fnv1a(0xcbf29ce484222325ull, bytes, n);
}

pc_status pc_db_digest_file(const char *path, uint64_t *digest, pc_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return pc_error_set(err, PC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    uint64_t h = 0xcbf29ce484222325ull;
    unsigned char buf[8192];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0)
        h = fnv1a(h, buf, k);
    bool failed = ferror(f);
    fclose(f);
    if (failed) return pc_error_set(err, PC_ERR_IO, "%s: read error", path);
    *digest = h;
    return PC_OK;
}

/* The folders of `path`, created when missing (mkdir -p). */
static pc_status make_dirs(const char *path, pc_error *err)
{
    char *p = strdup(path);
    if (!p) return pc_error_set(err, PC_ERR_NOMEM, "out of memory creating %s", path);
    pc_status st = PC_OK;
    for (char *s = p + 1;; s++) {
        bool end = *s == '\0';
        if (*s != '/' && !end) continue;
        *s = '\0';
        struct stat sb;
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            st = pc_error_set(err, PC_ERR_IO, "cannot create folder %s: %s", p, strerror(errno));
            break;
        }
        if (stat(p, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            st = pc_error_set(err, PC_ERR_IO, "%s exists and is not a folder", p);
            break;
        }
        if (end) break;
        *s = '/';
    }
    free(p);
    return st;
}

static void write_entry(FILE *f, const void *ctx)
{
    const pc_db_entry *e = ctx;
    fprintf(f,
            "%s\nsignature %s\nfamily %s\nmax_nodes %" PRIu32 "\nmax_elements %" PRIu64 "\nmax_rank %" PRId32
            "\nallow_special %d\nannotate %d\nrandom_eps %d\nseed %" PRIu64 "\ncase %" PRIu64 "\n",
            e->repro_dir ? DB_MAGIC_V2 : DB_MAGIC_V1, e->signature, e->gen.family ? e->gen.family : "",
            e->gen.max_nodes, e->gen.max_elements, e->gen.max_rank, e->gen.allow_special, e->gen.annotate,
            e->gen.random_eps, e->seed, e->case_index);
    if (e->inject && e->inject[0]) fprintf(f, "inject %s\n", e->inject);
    if (e->repro_dir) {
        /* only the folder's own name: the entry must not point outside its database */
        const char *base = strrchr(e->repro_dir, '/');
        fprintf(f, "repro %s\nrepro_digest %016" PRIx64 "\n", base ? base + 1 : e->repro_dir,
                e->repro_digest);
    }
    fputs("choices", f);
    for (size_t i = 0; i < e->n_choices; i++)
        fprintf(f, " %" PRIu32, e->choices[i]);
    fputc('\n', f);
}

pc_status pc_db_entry_write_file(const pc_db_entry *e, const char *path, pc_error *err)
{
    int en = 0;
    pc_file_write_atomic(path, 0, write_entry, e, NULL, &en);
    if (en == ENOMEM) return pc_error_set(err, PC_ERR_NOMEM, "out of memory writing %s", path);
    if (en) return pc_error_set(err, PC_ERR_IO, "cannot write %s: %s", path, strerror(en));
    return PC_OK;
}

static bool parse_flag(const char *s, bool *out)
{
    uint64_t v;
    if (!pc_parse_u64_as(s, 0, 1, 0, &v)) return false;
    *out = v != 0;
    return true;
}

pc_status pc_db_entry_read_file(const char *path, pc_db_entry *e, pc_error *err)
{
    memset(e, 0, sizeof *e);
    pc_gen_config_default(&e->gen);
    e->gen.family = NULL;
    FILE *f = fopen(path, "r");
    if (!f) return pc_error_set(err, PC_ERR_IO, "cannot open failure %s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    unsigned line_no = 0;
    int version = 1;
    bool have_choices = false, have_digest = false;
    pc_status st = PC_OK;
    ssize_t got;
    while (st == PC_OK && (got = getline(&line, &cap, f)) >= 0) {
        line_no++;
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
            line[--got] = '\0';
        if (line_no == 1) {
            if (!strcmp(line, DB_MAGIC_V2))
                version = 2;
            else if (!strncmp(line, DB_MAGIC_PREFIX, strlen(DB_MAGIC_PREFIX)) && strcmp(line, DB_MAGIC_V1))
                st = pc_error_set(err, PC_ERR_UNSUPPORTED,
                                  "%s:1: failure file format '%s' (this passcheck reads versions 1 and 2)",
                                  path, line);
            else if (strcmp(line, DB_MAGIC_V1) != 0)
                st = pc_error_set(err, PC_ERR_VALUE, "%s:1: expected '%s' (not a passcheck failure file)",
                                  path, DB_MAGIC_V1);
            continue;
        }
        if (!line[0] || line[0] == '#') continue;
        char *space = strchr(line, ' ');
        const char *value = space ? space + 1 : "";
        if (space) *space = '\0';
        const char *key = line;
        uint64_t v = 0;
        bool ok = true;
        if (strcmp(key, "signature") == 0) {
            snprintf(e->signature, sizeof e->signature, "%s", value);
        } else if (strcmp(key, "family") == 0) {
            const pc_gen_family *fam = pc_gen_family_find(value);
            if (!fam) {
                st = pc_error_set(err, PC_ERR_VALUE, "%s:%u: unknown family '%s'", path, line_no, value);
                break;
            }
            e->gen.family = fam->name;
        } else if (strcmp(key, "max_nodes") == 0) {
            ok = pc_parse_u64_as(value, 0, UINT32_MAX, 0, &v);
            e->gen.max_nodes = (uint32_t)v;
        } else if (strcmp(key, "max_elements") == 0) {
            ok = pc_parse_u64_as(value, 0, UINT64_MAX, 0, &v);
            e->gen.max_elements = v;
        } else if (strcmp(key, "max_rank") == 0) {
            ok = pc_parse_u64_as(value, 0, PC_MAX_RANK, 0, &v);
            e->gen.max_rank = (int32_t)v;
        } else if (strcmp(key, "allow_special") == 0) {
            ok = parse_flag(value, &e->gen.allow_special);
        } else if (strcmp(key, "annotate") == 0) {
            ok = parse_flag(value, &e->gen.annotate);
        } else if (strcmp(key, "random_eps") == 0) {
            ok = parse_flag(value, &e->gen.random_eps);
        } else if (strcmp(key, "seed") == 0) {
            ok = pc_parse_u64_as(value, 0, UINT64_MAX, 0, &e->seed);
        } else if (strcmp(key, "case") == 0) {
            ok = pc_parse_u64_as(value, 0, UINT64_MAX, 0, &e->case_index);
        } else if (strcmp(key, "inject") == 0) {
            free(e->inject);
            e->inject = strdup(value);
            if (!e->inject) st = pc_error_set(err, PC_ERR_NOMEM, "%s:%u: out of memory", path, line_no);
        } else if (strcmp(key, "repro") == 0 && version >= 2) {
            /* a plain NAME.repro next to the entry: replay must not read elsewhere */
            size_t lv = strlen(value), ls = strlen(REPRO_SUFFIX);
            if (lv <= ls || strcmp(value + lv - ls, REPRO_SUFFIX) || strchr(value, '/') || value[0] == '.') {
                st = pc_error_set(err, PC_ERR_VALUE, "%s:%u: bad repro folder '%s' (expected NAME%s)", path,
                                  line_no, value, REPRO_SUFFIX);
                break;
            }
            const char *slash = strrchr(path, '/');
            size_t dl = slash ? (size_t)(slash - path) : 1;
            free(e->repro_dir);
            e->repro_dir = malloc(dl + lv + 2);
            if (!e->repro_dir) {
                st = pc_error_set(err, PC_ERR_NOMEM, "%s:%u: out of memory", path, line_no);
                break;
            }
            snprintf(e->repro_dir, dl + lv + 2, "%.*s/%s", (int)dl, slash ? path : ".", value);
        } else if (strcmp(key, "repro_digest") == 0 && version >= 2) {
            char *end;
            errno = 0;
            unsigned long long d = strtoull(value, &end, 16);
            ok = value[0] && !errno && !*end && d != 0;
            e->repro_digest = d;
            have_digest = ok;
        } else if (strcmp(key, "choices") == 0) {
            free(e->choices);
            e->choices = NULL;
            pc_error perr;
            if (pc_choices_parse(value, &e->choices, &e->n_choices, &perr) != PC_OK) {
                st = pc_error_set(err, perr.status == PC_ERR_NOMEM ? PC_ERR_NOMEM : PC_ERR_VALUE, "%s:%u: %s",
                                  path, line_no, perr.message);
                break;
            }
            have_choices = true;
        } else {
            st = pc_error_set(err, PC_ERR_VALUE, "%s:%u: unknown key '%s'", path, line_no, key);
            break;
        }
        if (!ok) st = pc_error_set(err, PC_ERR_VALUE, "%s:%u: bad %s value '%s'", path, line_no, key, value);
    }
    if (st == PC_OK && ferror(f)) st = pc_error_set(err, PC_ERR_IO, "cannot read %s", path);
    if (st == PC_OK && line_no == 0) st = pc_error_set(err, PC_ERR_VALUE, "%s: empty file", path);
    if (st == PC_OK && !e->gen.family) st = pc_error_set(err, PC_ERR_VALUE, "%s: no 'family' line", path);
    if (st == PC_OK && !have_choices) st = pc_error_set(err, PC_ERR_VALUE, "%s: no 'choices' line", path);
    if (st == PC_OK && version == 2 && (!e->repro_dir || !have_digest))
        st = pc_error_set(err, PC_ERR_VALUE, "%s: a version 2 entry needs 'repro' and 'repro_digest' lines",
                          path);
    if (st == PC_OK && e->repro_dir) {
        struct stat sb;
        if (stat(e->repro_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
            st = pc_error_set(err, PC_ERR_IO, "%s: its repro folder %s is missing", path, e->repro_dir);
    }
    free(line);
    fclose(f);
    if (st != PC_OK) {
        pc_db_entry_free(e);
        return st;
    }
    snprintf(e->name, sizeof e->name, "%016" PRIx64, pc_db_entry_hash(e));
    return PC_OK;
}

static char *join3(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s%s", a, b, c);
    return p;
}

pc_status pc_failure_db_save(const char *db_dir, pc_db_entry *e, pc_error *err)
{
    pc_status st = make_dirs(db_dir, err);
    if (st != PC_OK) return st;
    snprintf(e->name, sizeof e->name, "%016" PRIx64, pc_db_entry_hash(e));
    char *path = join3(db_dir, e->name, ".case");
    if (!path) return pc_error_set(err, PC_ERR_NOMEM, "out of memory saving a failure in %s", db_dir);
    st = pc_db_entry_write_file(e, path, err);
    free(path);
    return st;
}

/* Removes a repro folder the database wrote: its files (it has no subfolders), then the folder. */
static pc_status remove_repro_dir(const char *dir, pc_error *err)
{
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return PC_OK;
        return pc_error_set(err, PC_ERR_IO, "cannot remove %s: %s", dir, strerror(errno));
    }
    pc_status st = PC_OK;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && st == PC_OK) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char *p = join3(dir, de->d_name, "");
        if (!p)
            st = pc_error_set(err, PC_ERR_NOMEM, "out of memory removing %s", dir);
        else if (unlink(p) != 0 && errno != ENOENT)
            st = pc_error_set(err, PC_ERR_IO, "cannot remove %s: %s", p, strerror(errno));
        free(p);
    }
    closedir(d);
    if (st == PC_OK && rmdir(dir) != 0 && errno != ENOENT)
        st = pc_error_set(err, PC_ERR_IO, "cannot remove %s: %s", dir, strerror(errno));
    return st;
}

pc_status pc_failure_db_remove(const char *db_dir, const char *name, pc_error *err)
{
    char *path = join3(db_dir, name, ".case");
    char *repro = join3(db_dir, name, REPRO_SUFFIX);
    pc_status st = PC_OK;
    if (!path || !repro) {
        st = pc_error_set(err, PC_ERR_NOMEM, "out of memory removing a failure from %s", db_dir);
    } else {
        /* the entry first: a half-removed failure is an orphan folder, never an entry without its repro */
        if (unlink(path) != 0 && errno != ENOENT)
            st = pc_error_set(err, PC_ERR_IO, "cannot remove %s: %s", path, strerror(errno));
        if (st == PC_OK) st = remove_repro_dir(repro, err);
    }
    free(path);
    free(repro);
    return st;
}

pc_status pc_failure_db_save_repro(const char *db_dir, pc_db_entry *e, const pc_shrink_result *r,
                                   const pc_repro_info *info, pc_error *err)
{
    if (!r || !r->kase.model)
        return pc_error_set(err, PC_ERR_USAGE, "%s: the failure has no model to save", db_dir);
    pc_status st = make_dirs(db_dir, err);
    if (st != PC_OK) return st;
    uint8_t *bytes = NULL;
    size_t size = 0;
    if ((st = pc_model_save_bytes(r->kase.model, &bytes, &size, err)) != PC_OK) return st;
    e->repro_digest = pc_db_digest(bytes, size);
    free(bytes);
    if (!e->repro_digest) e->repro_digest = 1; /* 0 means "no repro" */
    snprintf(e->name, sizeof e->name, "%016" PRIx64, pc_db_entry_hash(e));
    char *dir = join3(db_dir, e->name, REPRO_SUFFIX);
    char *path = join3(db_dir, e->name, ".case");
    if (!dir || !path) {
        free(dir);
        free(path);
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory saving a failure in %s", db_dir);
    }
    st = pc_repro_write_replay_files(dir, r, info, err);
    if (st == PC_OK) {
        pc_db_entry w = *e; /* written with its repro folder; the caller's repro_dir is left alone */
        w.repro_dir = dir;
        st = pc_db_entry_write_file(&w, path, err);
    }
    free(dir);
    free(path);
    return st;
}

static int entry_name_cmp(const void *a, const void *b)
{
    return strcmp(((const pc_db_entry *)a)->name, ((const pc_db_entry *)b)->name);
}

pc_status pc_failure_db_load(const char *dir, pc_db_entry **entries, size_t *n, size_t *n_bad, pc_error *bad,
                             pc_error *err)
{
    *entries = NULL;
    *n = 0;
    if (n_bad) *n_bad = 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return PC_OK;
        return pc_error_set(err, PC_ERR_IO, "cannot open failure database %s: %s", dir, strerror(errno));
    }
    size_t cap = 0;
    pc_status st = PC_OK;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || !pc_str_ends_with(de->d_name, ".case")) continue;
        char *path = join3(dir, de->d_name, "");
        if (!path) {
            st = pc_error_set(err, PC_ERR_NOMEM, "out of memory reading %s", dir);
            break;
        }
        if (*n == cap) {
            size_t ncap = cap ? cap * 2 : 16, bytes;
            pc_db_entry *ne = pc_size_mul(ncap, sizeof *ne, &bytes) ? realloc(*entries, bytes) : NULL;
            if (!ne) {
                free(path);
                st = pc_error_set(err, PC_ERR_NOMEM, "out of memory reading %s", dir);
                break;
            }
            *entries = ne;
            cap = ncap;
        }
        pc_error perr;
        pc_status rst = pc_db_entry_read_file(path, &(*entries)[*n], &perr);
        free(path);
        if (rst == PC_ERR_NOMEM) {
            st = pc_error_set(err, PC_ERR_NOMEM, "%s", perr.message);
            break;
        }
        if (rst != PC_OK) {
            if (n_bad && (*n_bad)++ == 0 && bad) *bad = perr;
            continue;
        }
        /* The file name is what removal uses; an entry copied under another name keeps it. */
        size_t stem = strlen(de->d_name) - strlen(".case");
        if (stem < sizeof(*entries)[*n].name) {
            memcpy((*entries)[*n].name, de->d_name, stem);
            (*entries)[*n].name[stem] = '\0';
        }
        (*n)++;
    }
    closedir(d);
    if (st != PC_OK) {
        pc_db_entries_free(*entries, *n);
        *entries = NULL;
        *n = 0;
        return st;
    }
    if (*n > 1) qsort(*entries, *n, sizeof **entries, entry_name_cmp);
    return PC_OK;
}
