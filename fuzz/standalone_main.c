/* standalone_main.c — a tiny replay driver for fuzz targets built without libFuzzer.
 *
 *     fuzz_onnx_load_replay [-flags ignored] FILE_OR_DIR...
 *
 * Every file argument, and every regular file under a directory argument (recursively, in sorted order), is
 * read into an exactly sized heap buffer (so ASan sees over-reads) and passed to LLVMFuzzerTestOneInput once.
 * Arguments starting with '-' are ignored, so libFuzzer-style command lines work unchanged. A crash or
 * sanitizer report in the target ends the process as it would under libFuzzer; the exit status is 1 when an
 * argument could not be read or when path arguments were given but held no file, and 0 otherwise.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path, unsigned long *count)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "standalone_main: %s: cannot open: %s\n", path, strerror(errno));
        return 1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        fprintf(stderr, "standalone_main: %s: out of memory\n", path);
        return 1;
    }
    for (;;) {
        if (len == cap) {
            uint8_t *nb = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                fclose(f);
                fprintf(stderr, "standalone_main: %s: out of memory\n", path);
                return 1;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        fprintf(stderr, "standalone_main: %s: read error\n", path);
        return 1;
    }
    /* Copy into a buffer of exactly len bytes so reads past the end are heap-buffer-overflows under ASan. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        fprintf(stderr, "standalone_main: %s: out of memory\n", path);
        return 1;
    }
    if (len) memcpy(exact, buf, len);
    free(buf);
    fprintf(stderr, "Running: %s (%zu bytes)\n", path, len);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    (*count)++;
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path, unsigned long *count, unsigned depth);

static int run_dir(const char *path, unsigned long *count, unsigned depth)
{
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "standalone_main: %s: cannot open directory: %s\n", path, strerror(errno));
        return 1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            char **nn = realloc(names, ncap * sizeof *nn);
            if (!nn) {
                rc = 1;
                break;
            }
            names = nn;
            cap = ncap;
        }
        size_t plen = strlen(path), elen = strlen(e->d_name);
        char *full = malloc(plen + elen + 2);
        if (!full) {
            rc = 1;
            break;
        }
        memcpy(full, path, plen);
        full[plen] = '/';
        memcpy(full + plen + 1, e->d_name, elen + 1);
        names[n++] = full;
    }
    closedir(d);
    if (rc) fprintf(stderr, "standalone_main: %s: out of memory\n", path);
    if (n) qsort(names, n, sizeof *names, cmp_names); /* deterministic order */
    for (size_t i = 0; i < n; i++) {
        rc |= run_path(names[i], count, depth + 1);
        free(names[i]);
    }
    free(names);
    return rc;
}

static int run_path(const char *path, unsigned long *count, unsigned depth)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "standalone_main: %s: %s\n", path, strerror(errno));
        return 1;
    }
    if (S_ISDIR(sb.st_mode)) {
        if (depth > 16) {
            fprintf(stderr, "standalone_main: %s: directories nested too deeply\n", path);
            return 1;
        }
        return run_dir(path, count, depth);
    }
    if (S_ISREG(sb.st_mode)) return run_file(path, count);
    return 0; /* sockets, fifos, devices: skipped */
}

int main(int argc, char **argv)
{
    unsigned long count = 0;
    int rc = 0, n_paths = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') continue; /* libFuzzer flags */
        n_paths++;
        rc |= run_path(argv[i], &count, 0);
    }
    fprintf(stderr, "standalone_main: executed %lu input%s%s\n", count, count == 1 ? "" : "s",
            rc ? " (some arguments could not be read)" : "");
    if (n_paths && count == 0) {
        fprintf(stderr, "standalone_main: no inputs found (an empty corpus tests nothing)\n");
        return 1;
    }
    return rc ? 1 : 0;
}
