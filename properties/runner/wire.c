/* Byte buffers and whole reads/writes for parent <-> child and ORT helper messages (wire.h). Files written
 * whole are core's pc_file_write_atomic (core/base/file.c). */
#include "properties/runner/wire.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/passcheck.h"
#include "properties/runner/util.h"

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

bool pc_send_all(int fd, const void *p, size_t n)
{
    const uint8_t *q = p;
    while (n) {
        ssize_t k = send(fd, q, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        q += k;
        n -= (size_t)k;
    }
    return true;
}

pc_read_end pc_read_all_until(int fd, void *p, size_t n, double deadline)
{
    uint8_t *q = p;
    size_t got = 0;
    while (got < n) {
        double left = deadline - pc_now_seconds();
        if (left <= 0) return PC_READ_TIMEOUT;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int r = poll(&pfd, 1, left > 1e6 ? 1000000000 : (int)(left * 1000) + 1);
        if (r < 0) {
            if (errno == EINTR) continue;
            return PC_READ_POLL_FAILED;
        }
        if (r == 0) continue;
        ssize_t k = read(fd, q + got, n - got);
        if (k < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return PC_READ_FAILED;
        }
        if (k == 0) return PC_READ_EOF;
        got += (size_t)k;
    }
    return PC_READ_OK;
}

void pc_le64_store(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void pc_wb_u32le(pc_wbuf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    pc_wb_put(b, x, sizeof x);
}

void pc_wb_u64le(pc_wbuf *b, uint64_t v)
{
    uint8_t x[8];
    pc_le64_store(x, v);
    pc_wb_put(b, x, sizeof x);
}

uint32_t pc_le32_load(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t pc_le64_load(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}
