/* Forked children with a deadline and framed messages (proc.h). */
#include "properties/runner/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "properties/runner/util.h"

enum { FRAME_HEADER = 2 * sizeof(uint32_t) };

pc_proc_start_result pc_proc_start(pc_proc *p, pc_proc_fn fn, void *ctx, double timeout, size_t max_bytes,
                                   unsigned flags)
{
    memset(p, 0, sizeof *p);
    p->fd = -1;
    int fds[2];
    if (flags & PC_PROC_DUPLEX) {
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return PC_PROC_NO_CHANNEL;
    } else {
        if (pipe(fds) != 0) return PC_PROC_NO_CHANNEL;
        fcntl(fds[0], F_SETFD, FD_CLOEXEC);
        fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    }
    fflush(stdout);
    fflush(stderr);
    p->timeout = timeout;
    p->started = pc_now_seconds();
    p->deadline = p->started + timeout;
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        errno = e;
        return PC_PROC_NO_FORK;
    }
    if (pid == 0) {
        close(fds[0]);
        signal(SIGPIPE, SIG_DFL);
        fn(ctx, fds[1]);
        close(fds[1]);
        exit(0);
    }
    close(fds[1]);
    if (flags & PC_PROC_DUPLEX) fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    p->pid = (int)pid;
    p->fd = fds[0];
    p->max_bytes = max_bytes;
    return PC_PROC_STARTED;
}

bool pc_proc_done(const pc_proc *p)
{
    return p->pid == 0 || p->eof || p->timed_out || p->oversized;
}

void pc_proc_read(pc_proc *p)
{
    if (p->len == p->cap) {
        size_t ncap = p->cap ? p->cap * 2 : 4096;
        uint8_t *nd = ncap <= p->max_bytes ? realloc(p->data, ncap) : NULL;
        if (!nd) {
            p->oversized = true;
            return;
        }
        p->data = nd;
        p->cap = ncap;
    }
    ssize_t got = read(p->fd, p->data + p->len, p->cap - p->len);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (got <= 0)
        p->eof = true;
    else
        p->len += (size_t)got;
}

size_t pc_proc_poll(pc_proc *procs, size_t n, int max_wait_ms)
{
    /* small sets (--jobs is at most a few dozen) poll from the stack */
    struct pollfd stack_fds[64];
    size_t stack_which[64];
    struct pollfd *fds = stack_fds;
    size_t *which = stack_which, limit = n;
    if (n > 64) {
        fds = calloc(n, sizeof *fds);
        which = calloc(n, sizeof *which);
        if (!fds || !which) { /* poll the first 64 now, the rest on a later call */
            free(fds);
            free(which);
            fds = stack_fds;
            which = stack_which;
            limit = 64;
        }
    }
    size_t k = 0;
    double now = pc_now_seconds(), first_deadline = now + max_wait_ms / 1000.0;
    for (size_t i = 0; i < limit; i++) {
        if (pc_proc_done(&procs[i])) continue;
        if (procs[i].deadline < first_deadline) first_deadline = procs[i].deadline;
        fds[k] = (struct pollfd){procs[i].fd, POLLIN, 0};
        which[k++] = i;
    }
    if (k) {
        double wait = first_deadline - now;
        int ms = wait <= 0 ? 0 : (int)(wait * 1000) + 1;
        if (ms > max_wait_ms) ms = max_wait_ms;
        int got = poll(fds, k, ms);
        for (size_t j = 0; got > 0 && j < k; j++)
            if (fds[j].revents) pc_proc_read(&procs[which[j]]);
        now = pc_now_seconds();
        for (size_t j = 0; j < k; j++)
            if (!pc_proc_done(&procs[which[j]]) && now >= procs[which[j]].deadline)
                procs[which[j]].timed_out = true;
    }
    if (fds != stack_fds) free(fds);
    if (which != stack_which) free(which);
    size_t done = 0;
    for (size_t i = 0; i < n; i++)
        done += procs[i].pid != 0 && pc_proc_done(&procs[i]);
    return done;
}

void pc_proc_rewind(pc_proc *p)
{
    p->len = 0;
    p->eof = p->timed_out = p->oversized = false;
    p->started = pc_now_seconds();
    p->deadline = p->started + p->timeout;
}

/* Waits for the child until the deadline; false on timeout (the child is then still running). Children exit
 * right after their stream ends, so the nap starts short. */
static bool reap_until(pid_t pid, double deadline, int *status)
{
    long nap_ns = 50000;
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid) return true;
        if (w < 0 && errno != EINTR) {
            *status = 0;
            return true;
        }
        if (pc_now_seconds() >= deadline) return false;
        struct timespec ts = {0, nap_ns};
        nanosleep(&ts, NULL);
        if (nap_ns < 10000000) nap_ns *= 2;
    }
}

pc_proc_exit pc_proc_finish(pc_proc *p)
{
    pc_proc_exit ex = {PC_PROC_EXITED, 0, 0};
    if (!p->pid) {
        if (p->fd >= 0) close(p->fd);
        p->fd = -1;
        return ex;
    }
    pid_t pid = (pid_t)p->pid;
    int status = 0;
    if (!p->timed_out && !p->oversized && !reap_until(pid, p->deadline, &status)) p->timed_out = true;
    if (p->timed_out || p->oversized) {
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    /* closed after the child is gone: a child still writing when its stream was cut off is killed first,
     * never ended by SIGPIPE */
    if (p->fd >= 0) close(p->fd);
    p->fd = -1;
    p->pid = 0;
    ex.status = status;
    if (p->timed_out) {
        ex.end = PC_PROC_TIMED_OUT;
    } else if (p->oversized) {
        ex.end = PC_PROC_OVERSIZED;
    } else if (WIFSIGNALED(status)) {
        ex.end = PC_PROC_SIGNALED;
        ex.code = WTERMSIG(status);
    } else if (WIFEXITED(status)) {
        ex.code = WEXITSTATUS(status);
    }
    return ex;
}

void pc_proc_free(pc_proc *p)
{
    if (p->fd >= 0) close(p->fd);
    free(p->data);
    p->data = NULL;
    p->len = p->cap = 0;
    p->fd = -1;
}

void pc_proc_send(int fd, uint32_t tag, pc_wbuf *body)
{
    if (body->failed || body->len > UINT32_MAX) {
        free(body->data);
        body->data = NULL;
        return;
    }
    pc_wbuf b = {0};
    pc_wb_u32(&b, tag);
    pc_wb_u32(&b, (uint32_t)body->len);
    pc_wb_put(&b, body->data, body->len);
    if (!b.failed) pc_write_all(fd, b.data, b.len);
    free(b.data);
    free(body->data);
    body->data = NULL;
}

bool pc_frame_next(const uint8_t *data, size_t len, size_t *pos, uint32_t *tag, pc_rbuf *body)
{
    if (*pos > len || len - *pos < FRAME_HEADER) return false;
    uint32_t n;
    memcpy(tag, data + *pos, sizeof *tag);
    memcpy(&n, data + *pos + sizeof *tag, sizeof n);
    if (n > len - *pos - FRAME_HEADER) return false;
    *body = (pc_rbuf){data + *pos + FRAME_HEADER, n, 0, false};
    *pos += FRAME_HEADER + n;
    return true;
}

_Noreturn void pc_proc_test_crash(void)
{
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
    abort(); /* not reached: SIGSEGV's default action ends the process */
}

_Noreturn void pc_proc_test_hang(void)
{
    for (;;)
        sleep(1);
}
