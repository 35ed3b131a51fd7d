/* Byte buffers and whole reads/writes for parent <-> child messages, and files written whole (wire.h). */
#include "properties/runner/wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/passcheck.h"

void pc_wb_put(pc_wbuf *b, const void *p, size_t n)
{
    size_t need;
    if (b->failed || !pc_size_add(b->len, n, &need)) {
        b->failed = true;
        return;
    }
    if (need > b->cap) {
        size_t ncap = b->cap ? b->cap : 512;
        while (ncap < need)
            if (!pc_size_mul(ncap, 2, &ncap)) {
                b->failed = true;
                return;
            }
        uint8_t *nd = realloc(b->data, ncap);
        if (!nd) {
            b->failed = true;
            return;
        }
        b->data = nd;
        b->cap = ncap;
    }
    if (n) memcpy(b->data + b->len, p, n);
    b->len = need;
}

void pc_wb_u32(pc_wbuf *b, uint32_t v)
{
    pc_wb_put(b, &v, sizeof v);
}

void pc_wb_u64(pc_wbuf *b, uint64_t v)
{
    pc_wb_put(b, &v, sizeof v);
}

void pc_wb_f64(pc_wbuf *b, double v)
{
    pc_wb_put(b, &v, sizeof v);
}

void pc_wb_blob(pc_wbuf *b, const void *p, size_t n)
{
    pc_wb_u64(b, n);
    pc_wb_put(b, p, n);
}

void pc_wb_str(pc_wbuf *b, const char *s)
{
    pc_wb_blob(b, s, strlen(s));
}

bool pc_rb_get(pc_rbuf *b, void *out, size_t n)
{
    if (b->bad || n > b->len - b->pos) {
        b->bad = true;
        memset(out, 0, n);
        return false;
    }
    memcpy(out, b->data + b->pos, n);
    b->pos += n;
    return true;
}

uint32_t pc_rb_u32(pc_rbuf *b)
{
    uint32_t v;
    pc_rb_get(b, &v, sizeof v);
    return v;
}

uint64_t pc_rb_u64(pc_rbuf *b)
{
    uint64_t v;
    pc_rb_get(b, &v, sizeof v);
    return v;
}

double pc_rb_f64(pc_rbuf *b)
{
    double v;
    pc_rb_get(b, &v, sizeof v);
    return v;
}

const uint8_t *pc_rb_blob(pc_rbuf *b, size_t *n)
{
    uint64_t len = pc_rb_u64(b);
    if (b->bad || len > b->len - b->pos) {
        b->bad = true;
        *n = 0;
        return NULL;
    }
    const uint8_t *p = b->data + b->pos;
    b->pos += (size_t)len;
    *n = (size_t)len;
    return p;
}

char *pc_rb_str_dup(pc_rbuf *b)
{
    size_t n;
    const uint8_t *p = pc_rb_blob(b, &n);
    char *s = b->bad ? NULL : malloc(n + 1);
    if (!s) {
        b->bad = true;
        return NULL;
    }
    if (n) memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

void pc_rb_str_into(pc_rbuf *b, char *buf, size_t size)
{
    size_t n;
    const uint8_t *p = pc_rb_blob(b, &n);
    size_t k = n < size - 1 ? n : size - 1;
    if (k) memcpy(buf, p, k);
    buf[k] = '\0';
}

bool pc_write_all(int fd, const void *p, size_t n)
{
    const uint8_t *q = p;
    while (n) {
        ssize_t k = write(fd, q, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        q += k;
        n -= (size_t)k;
    }
    return true;
}

bool pc_read_all(int fd, void *p, size_t n)
{
    uint8_t *q = p;
    while (n) {
        ssize_t k = read(fd, q, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        q += k;
        n -= (size_t)k;
    }
    return true;
}

int pc_write_file_atomic(const char *path, bool exclusive, pc_file_fill fill, const void *ctx)
{
    size_t len = strlen(path) + 32;
    char *tmp = malloc(len);
    if (!tmp) return ENOMEM;
    snprintf(tmp, len, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | (exclusive ? O_EXCL : 0), 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int saved = errno;
        /* a temporary that exists already is someone else's when exclusive */
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        } else if (!exclusive) {
            unlink(tmp);
        }
        free(tmp);
        return saved;
    }
    fill(f, ctx);
    bool failed = fflush(f) != 0 || ferror(f);
    int saved = errno;
    if (fclose(f) != 0 && !failed) {
        failed = true;
        saved = errno;
    }
    if (!failed && rename(tmp, path) != 0) {
        failed = true;
        saved = errno;
    }
    if (failed) unlink(tmp);
    free(tmp);
    return failed ? (saved ? saved : EIO) : 0;
}
