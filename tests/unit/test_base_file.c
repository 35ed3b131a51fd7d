/* pc_file_write_atomic (core/base/file.c): the content arrives whole, an existing target is replaced, an
 * exclusive write leaves someone else's temporary alone, and every failure leaves the target as it was and no
 * temporary of ours behind. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "tests/test_util.h"

static char g_dir[256];

static void fill_text(FILE *f, const void *ctx)
{
    fputs(ctx, f);
}

/* The file's bytes as a string ("" when absent or unreadable). */
static const char *contents(const char *path)
{
    static char buf[256];
    buf[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f) return buf;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void temp_name(const char *path, char *out, size_t size)
{
    snprintf(out, size, "%s.tmp.%ld", path, (long)getpid());
}

int main(void)
{
    snprintf(g_dir, sizeof g_dir, "%s/pc_test_file_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 2;
    }
    char path[512], tmp[600];
    snprintf(path, sizeof path, "%s/out.txt", g_dir);
    temp_name(path, tmp, sizeof tmp);
    pc_error err;
    int e = -1;

    /* written whole, then replaced whole, by both forms */
    CHECK_OK(pc_file_write_atomic(path, PC_FILE_EXCLUSIVE, fill_text, "first\n", &err, &e), &err);
    CHECK(e == 0 && strcmp(contents(path), "first\n") == 0);
    CHECK_OK(pc_file_write_atomic_bytes(path, 0, "second", 6, &err), &err);
    CHECK(strcmp(contents(path), "second") == 0);
    CHECK_OK(pc_file_write_atomic_bytes(path, PC_FILE_EXCLUSIVE, "", 0, &err), &err);
    CHECK(strcmp(contents(path), "") == 0 && access(tmp, F_OK) != 0);

    /* a file where our temporary goes: exclusive refuses and leaves it; otherwise it is a stale one of ours
     */
    FILE *f = fopen(tmp, "w");
    if (f) {
        fputs("someone's", f);
        fclose(f);
    }
    CHECK_STATUS(pc_file_write_atomic(path, PC_FILE_EXCLUSIVE, fill_text, "third", &err, &e), PC_ERR_IO,
                 &err);
    CHECK(e == EEXIST && strstr(err.message, "cannot create") && strstr(err.message, tmp));
    CHECK(strcmp(contents(tmp), "someone's") == 0 && strcmp(contents(path), "") == 0);
    CHECK_OK(pc_file_write_atomic(path, 0, fill_text, "third", &err, &e), &err);
    CHECK(strcmp(contents(path), "third") == 0 && access(tmp, F_OK) != 0);

    /* a missing folder: the errno reaches the caller and the message names the temporary */
    char missing[600];
    snprintf(missing, sizeof missing, "%s/no/such.txt", g_dir);
    CHECK_STATUS(pc_file_write_atomic_bytes(missing, 0, "x", 1, &err), PC_ERR_IO, &err);
    CHECK(strstr(err.message, "/no/such.txt.tmp.") && strstr(err.message, strerror(ENOENT)));
    CHECK_STATUS(pc_file_write_atomic(missing, PC_FILE_EXCLUSIVE, fill_text, "x", NULL, &e), PC_ERR_IO, NULL);
    CHECK(e == ENOENT);

    /* a folder in the target's place: the rename fails, the target stays, the temporary goes */
    char adir[600], adir_tmp[700];
    snprintf(adir, sizeof adir, "%s/adir", g_dir);
    temp_name(adir, adir_tmp, sizeof adir_tmp);
    CHECK(mkdir(adir, 0755) == 0);
    CHECK_STATUS(pc_file_write_atomic(adir, PC_FILE_EXCLUSIVE, fill_text, "x", &err, &e), PC_ERR_IO, &err);
    CHECK(e == EISDIR && strstr(err.message, "cannot rename into place") && strstr(err.message, adir));
    struct stat st;
    CHECK(stat(adir, &st) == 0 && S_ISDIR(st.st_mode) && access(adir_tmp, F_OK) != 0);

    /* pc_file_read_all: the bytes as they are (NULs included) plus a NUL; the limit is inclusive; errors name
     * the file */
    char *data = NULL;
    size_t size = 0;
    CHECK_OK(pc_file_write_atomic_bytes(path, 0, "a\0b\n", 4, &err), &err);
    CHECK_OK(pc_file_read_all(path, 4, &data, &size, &err), &err);
    CHECK(data && size == 4 && memcmp(data, "a\0b\n", 5) == 0);
    free(data);
    CHECK_STATUS(pc_file_read_all(path, 3, &data, &size, &err), PC_ERR_BUDGET, &err);
    CHECK(data == NULL && strstr(err.message, path) && strstr(err.message, "larger than 3 bytes"));
    CHECK_OK(pc_file_write_atomic_bytes(path, 0, "", 0, &err), &err);
    CHECK_OK(pc_file_read_all(path, SIZE_MAX, &data, NULL, &err), &err);
    CHECK(data && data[0] == '\0');
    free(data);
    /* bigger than any first buffer: read whole */
    static char big[300000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)('a' + i % 26);
    CHECK_OK(pc_file_write_atomic_bytes(path, 0, big, sizeof big, &err), &err);
    CHECK_OK(pc_file_read_all(path, sizeof big, &data, &size, &err), &err);
    CHECK(data && size == sizeof big && memcmp(data, big, sizeof big) == 0 && data[size] == '\0');
    free(data);
    CHECK_STATUS(pc_file_read_all(missing, SIZE_MAX, &data, &size, &err), PC_ERR_IO, &err);
    CHECK(data == NULL && strstr(err.message, missing) && strstr(err.message, "cannot open"));

    rmdir(adir);
    unlink(tmp);
    unlink(path);
    rmdir(g_dir);
    return pc_test_finish("test_base_file");
}
