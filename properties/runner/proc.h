/*
 * proc.h — a forked child running a function, seen from the parent: the framed messages it writes to a pipe,
 * a deadline, and how it ended (exited with a status, killed by a signal, killed at the deadline, killed for
 * flooding the pipe). The suite's cases and the shrinker's candidate worker (isolate.c) and conformance's
 * per-case children (conformance.c) all run through it, so a crash or a hang is a result, never a dead run.
 *
 *     static void child(void *ctx, int fd)          // runs in the child, which then exits normally
 *     {
 *         pc_wbuf b = {0};
 *         pc_wb_str(&b, "hello");
 *         pc_proc_send(fd, TAG_HELLO, &b);          // one frame; frees b
 *     }
 *     ...
 *     pc_proc p;
 *     if (pc_proc_start(&p, child, NULL, 60.0, 1 << 20, 0) != PC_PROC_STARTED) ...  // errno says why
 *     while (!pc_proc_poll(&p, 1, 1000)) {}          // until end of stream, deadline or flood
 *     pc_proc_exit ex = pc_proc_finish(&p);          // reaped (killed first if it overran)
 *     size_t pos = 0;
 *     uint32_t tag;
 *     pc_rbuf body;
 *     while (pc_frame_next(p.data, p.len, &pos, &tag, &body)) ...   // every complete frame
 *     if (ex.end == PC_PROC_SIGNALED) ... ex.code is the signal
 *     pc_proc_free(&p);
 *
 * A frame is (u32 tag, u32 length, payload) in host order: both ends are the same binary. pc_frame_next
 * checks every length, so a stream cut by a crash yields the frames that came through whole.
 */
#ifndef PC_RUNNER_PROC_H
#define PC_RUNNER_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "properties/runner/wire.h"

/* Runs in the child with the child's end of the channel; the child exits with exit(0) when it returns (not
 * _exit: a sanitizer build's leak check runs in the child; stdio was flushed before the fork). */
typedef void (*pc_proc_fn)(void *ctx, int fd);

/* pc_proc_start flags. */
enum {
    /* A socket pair instead of a pipe: the parent also sends requests on fd (with send(MSG_NOSIGNAL), so a
     * dead child is EPIPE, not SIGPIPE), its end non-blocking. The child's frames are read as from a pipe. */
    PC_PROC_DUPLEX = 1u << 0,
};

typedef struct pc_proc {
    int pid; /* 0: no child */
    int fd; /* the parent's end, close-on-exec (a helper program a child runs must not hold it); -1: closed */
    uint8_t *data; /* what the child sent, from the start or the last pc_proc_rewind */
    size_t len, cap;
    size_t max_bytes; /* more than this is a runaway child: `oversized`, killed by pc_proc_finish */
    double timeout, started, deadline; /* seconds; pc_now_seconds clock (util.h) */
    bool eof, timed_out, oversized;
} pc_proc;

typedef enum pc_proc_start_result {
    PC_PROC_STARTED,
    PC_PROC_NO_CHANNEL,
    PC_PROC_NO_FORK
} pc_proc_start_result;

/* Forks a child running fn(ctx, fd) with `timeout` seconds from now; stdio is flushed first and the child
 * takes SIGPIPE's default action. On failure errno says why and *p holds no child. */
pc_proc_start_result pc_proc_start(pc_proc *p, pc_proc_fn fn, void *ctx, double timeout, size_t max_bytes,
                                   unsigned flags);
/* Whether the child is done sending: end of stream, deadline passed or flooded (or no child). */
bool pc_proc_done(const pc_proc *p);
/* One read of what the child sent (call when poll says the fd is readable): appends, or marks eof/oversized.
 */
void pc_proc_read(pc_proc *p);
/* Reads whatever the running children of procs[0, n) sent, waiting up to max_wait_ms (less when a deadline
 * comes sooner); marks the ones whose stream ended or whose deadline passed. Returns how many are done. */
size_t pc_proc_poll(pc_proc *procs, size_t n, int max_wait_ms);
/* Empties the received data and restarts the deadline (a duplex child answering one more request). */
void pc_proc_rewind(pc_proc *p);

typedef enum pc_proc_end {
    PC_PROC_EXITED,    /* code: its exit status */
    PC_PROC_SIGNALED,  /* code: the signal that killed it */
    PC_PROC_TIMED_OUT, /* killed (SIGKILL) at the deadline */
    PC_PROC_OVERSIZED, /* killed (SIGKILL): it sent more than max_bytes */
} pc_proc_end;

typedef struct pc_proc_exit {
    pc_proc_end end;
    int code;
    int status; /* the raw wait status (0 when waitpid failed) */
} pc_proc_exit;

/* Waits for the child until the deadline (it normally exits right after its stream ends), killing it when it
 * overran, flooded or does not exit in time; closes the parent's end and says how the child ended. p->data
 * stays for the caller to decode; p->pid becomes 0. */
pc_proc_exit pc_proc_finish(pc_proc *p);
void pc_proc_free(pc_proc *p);

/* Child side: frames body (u32 tag, u32 length, body) and writes it whole; frees body->data. A body that
 * failed to build or is over 4 GiB is not sent: the parent sees the frame missing, never a wrong one. */
void pc_proc_send(int fd, uint32_t tag, pc_wbuf *body);
/* Parent side: the frame at *pos in data[0, len) when it is complete: its tag and a reader over its body;
 * *pos moves past it. false at the end or at a cut frame. */
bool pc_frame_next(const uint8_t *data, size_t len, size_t *pos, uint32_t *tag, pc_rbuf *body);

/* What test hooks make a child do: die of a plain SIGSEGV (whatever handler a sanitizer installed), or hang
 * until killed. */
_Noreturn void pc_proc_test_crash(void);
_Noreturn void pc_proc_test_hang(void);

#endif
