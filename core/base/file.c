/* Whole files: writes through one temporary in the target's folder, renamed over the target only once it is
 * written, flushed to disk and closed, so a reader sees the old file or the new one, never part of one; and
 * reads of a whole file into one buffer. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"

/* What goes into the file: fill's output, or size bytes at data. */
typedef struct file_content {
    pc_file_fill fill;
    const void *ctx;
    const uint8_t *data;
    size_t size;
} file_content;

/* Writes the bytes to fd, retrying short writes and EINTR. 0, or the errno of the failed write. */
static int write_bytes(int fd, const uint8_t *data, size_t size)
{
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        off += (size_t)w;
    }
    return 0;
}

/* Runs fill on a stream over fd and flushes it; 0, or the errno of the first failed write (EIO when the
 * stream failed without one). The stream is not closed: *out owns fd from here on (NULL when fdopen failed).
 */
static int write_filled(int fd, const file_content *c, FILE **out)
{
    FILE *f = fdopen(fd, "w");
    *out = f;
    if (!f) return errno ? errno : ENOMEM;
    errno = 0; /* so an error seen through ferror can be told apart from an older errno */
    c->fill(f, c->ctx);
    if (ferror(f)) return errno ? errno : EIO;
    if (fflush(f) != 0) return errno ? errno : EIO;
    return 0;
}

static pc_status write_atomic(const char *path, unsigned flags, const file_content *c, pc_error *err,
                              int *sys_errno)
{
    int dummy;
    int *e = sys_errno ? sys_errno : &dummy;
    *e = 0;
    size_t tlen;
    if (!pc_size_add(strlen(path), 32, &tlen)) {
        *e = ENAMETOOLONG;
        return pc_error_set(err, PC_ERR_OVERFLOW, "%s: path too long", path);
    }
    char *tmp = malloc(tlen);
    if (!tmp) {
        *e = ENOMEM;
        return pc_error_set(err, PC_ERR_NOMEM, "%s: out of memory", path);
    }
    snprintf(tmp, tlen, "%s.tmp.%ld", path, (long)getpid());
    const bool exclusive = flags & PC_FILE_EXCLUSIVE;
    pc_status st = PC_OK;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC), 0644);
    if (fd < 0) {
        *e = errno;
        st = pc_error_set(err, PC_ERR_IO, "%s: cannot create: %s", tmp, strerror(*e));
        /* a non-exclusive temporary carries our pid, so whatever stands in its way is a stale one of ours;
         * an exclusive one that exists is someone else's and stays */
        if (!exclusive) unlink(tmp);
        free(tmp);
        return st;
    }
    FILE *f = NULL;
    if (c->fill) {
        *e = write_filled(fd, c, &f);
        if (!f) {
            st = pc_error_set(err, PC_ERR_IO, "%s: cannot create: %s", tmp, strerror(*e));
            close(fd);
            unlink(tmp);
            free(tmp);
            return st;
        }
    } else {
        *e = write_bytes(fd, c->data, c->size);
    }
    if (*e) st = pc_error_set(err, PC_ERR_IO, "%s: write failed: %s", tmp, strerror(*e));
    if (st == PC_OK && fsync(fd) != 0) {
        *e = errno;
        st = pc_error_set(err, PC_ERR_IO, "%s: fsync failed: %s", tmp, strerror(*e));
    }
    if ((f ? fclose(f) : close(fd)) != 0 && st == PC_OK) {
        *e = errno;
        st = pc_error_set(err, PC_ERR_IO, "%s: close failed: %s", tmp, strerror(*e));
    }
    if (st == PC_OK && rename(tmp, path) != 0) {
        *e = errno;
        st = pc_error_set(err, PC_ERR_IO, "%s: cannot rename into place: %s", path, strerror(*e));
    }
    if (st != PC_OK) unlink(tmp);
    free(tmp);
    return st;
}

pc_status pc_file_write_atomic(const char *path, unsigned flags, pc_file_fill fill, const void *ctx,
                               pc_error *err, int *sys_errno)
{
    const file_content c = {.fill = fill, .ctx = ctx};
    return write_atomic(path, flags, &c, err, sys_errno);
}

pc_status pc_file_write_atomic_bytes(const char *path, unsigned flags, const void *data, size_t size,
                                     pc_error *err)
{
    const file_content c = {.data = data, .size = size};
    return write_atomic(path, flags, &c, err, NULL);
}

pc_status pc_file_read_all(const char *path, size_t max_size, char **data, size_t *size, pc_error *err)
{
    *data = NULL;
    if (size) *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return pc_error_set(err, PC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    pc_status st = buf ? PC_OK : pc_error_set(err, PC_ERR_NOMEM, "%s: out of memory", path);
    while (st == PC_OK) {
        if (len + 1 == cap) { /* full but for the terminating NUL: double */
            char *grown = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!grown) {
                st = pc_error_set(err, PC_ERR_NOMEM, "%s: out of memory", path);
                break;
            }
            buf = grown;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - 1 - len, f);
        len += got;
        if (len > max_size) {
            st = pc_error_set(err, PC_ERR_BUDGET, "%s: larger than %zu bytes", path, max_size);
            break;
        }
        if (got == 0) {
            if (ferror(f)) st = pc_error_set(err, PC_ERR_IO, "%s: read error", path);
            break;
        }
    }
    fclose(f);
    if (st != PC_OK) {
        free(buf);
        return st;
    }
    buf[len] = '\0';
    *data = buf;
    if (size) *size = len;
    return PC_OK;
}
