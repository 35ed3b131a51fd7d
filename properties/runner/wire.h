/*
 * wire.h — the byte buffers and full reads/writes that forked children and their parents talk through (the
 * suite's cases and shrink worker, properties/runner/isolate.c; conformance's per-case children,
 * properties/runner/conformance.c; both through properties/runner/proc.h). Both ends are the same binary, so
 * values go in host byte order (the little-endian helpers below are for the ORT helper's wire). A writer or
 * reader that runs out of memory or data sets its flag and stops; callers check it once at the end.
 *
 *     pc_wbuf w = {0};
 *     pc_wb_u32(&w, 7);
 *     pc_wb_str(&w, "relu");
 *     if (!w.failed) pc_write_all(fd, w.data, w.len);
 *     free(w.data);
 *     ...
 *     pc_rbuf r = {data, len, 0, false};
 *     uint32_t v = pc_rb_u32(&r);
 *     char *s = pc_rb_str_dup(&r);   // NULL and r.bad on a short stream
 */
#ifndef PC_WIRE_H
#define PC_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct pc_wbuf {
    uint8_t *data;
    size_t len, cap;
    bool failed;
} pc_wbuf;

void pc_wb_put(pc_wbuf *b, const void *p, size_t n);
void pc_wb_u32(pc_wbuf *b, uint32_t v);
void pc_wb_u64(pc_wbuf *b, uint64_t v);
void pc_wb_f64(pc_wbuf *b, double v);
void pc_wb_blob(pc_wbuf *b, const void *p, size_t n); /* u64 length, then the bytes */
void pc_wb_str(pc_wbuf *b, const char *s);            /* a blob of strlen(s) bytes */

typedef struct pc_rbuf {
    const uint8_t *data;
    size_t len, pos;
    bool bad;
} pc_rbuf;

bool pc_rb_get(pc_rbuf *b, void *out, size_t n); /* false (out zeroed, bad set) on a short stream */
uint32_t pc_rb_u32(pc_rbuf *b);
uint64_t pc_rb_u64(pc_rbuf *b);
double pc_rb_f64(pc_rbuf *b);
const uint8_t *pc_rb_blob(pc_rbuf *b, size_t *n); /* points into the stream; NULL when bad */
char *pc_rb_str_dup(pc_rbuf *b);                  /* a blob as a new string; NULL on a short stream or OOM */
void pc_rb_str_into(pc_rbuf *b, char *buf, size_t size); /* a blob into buf, cut to fit */

/* Whole writes and reads on a descriptor, retried on EINTR; false on an error or end of file. */
bool pc_write_all(int fd, const void *p, size_t n);
bool pc_read_all(int fd, void *p, size_t n);
/* pc_write_all on a socket with send(MSG_NOSIGNAL): a peer that is gone gives false with errno EPIPE, never
 * SIGPIPE in this process. */
bool pc_send_all(int fd, const void *p, size_t n);

/* pc_read_all with a deadline on the pc_now_seconds clock (util.h): it waits in poll, so a peer that stops
 * talking cannot hold the reader past the deadline. PC_READ_OK, or why it stopped (errno set for the two
 * failures). */
typedef enum pc_read_end {
    PC_READ_OK,
    PC_READ_TIMEOUT,     /* the deadline passed first */
    PC_READ_EOF,         /* the peer closed before n bytes came */
    PC_READ_POLL_FAILED, /* errno: poll's */
    PC_READ_FAILED,      /* errno: read's */
} pc_read_end;
pc_read_end pc_read_all_until(int fd, void *p, size_t n, double deadline);

/* Little-endian numbers, whatever the host's order, for wires to programs other than this one (the ORT
 * helper, tools/ort/ort_run.js). */
void pc_wb_u32le(pc_wbuf *b, uint32_t v);
void pc_wb_u64le(pc_wbuf *b, uint64_t v);
void pc_le64_store(uint8_t *p, uint64_t v);
uint32_t pc_le32_load(const uint8_t *p);
uint64_t pc_le64_load(const uint8_t *p);

#endif
