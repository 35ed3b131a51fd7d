/* Crash isolation: a case is generated and checked in a forked child with a deadline, so a crash, a sanitizer
 * abort or a hang becomes a reported failure ("crash" / "timeout") instead of a dead suite.
 *
 * The child streams chunks to the parent through a pipe: its choice sequence as soon as generation returns
 * (so a case that crashes later can still be shrunk and saved), the name of each pass it finished, then its
 * result. Each chunk is (u32 tag, u32 length, payload); both ends are the same binary, so numbers and the
 * fixed-size result structs travel in host layout. The parser checks every length, so a stream cut by a crash
 * yields the chunks that came through completely.
 *
 * Test hooks (Debug and sanitizer builds only, where PC_DEBUG_CHECKS is defined): PC_SUITE_TEST_CRASH=I makes
 * the child of suite case I (a comma-separated list works too) die of SIGSEGV right after it sent its
 * choices; PC_SUITE_TEST_HANG=I makes it sleep until killed. tests/unit/test_suite.c and
 * tests/cli/run_suite_cli.sh use them; release builds ignore them. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "suite.h"

/* A child's stream is a few hundred bytes plus two serialized graphs when it failed; far more is a runaway.
 */
enum { MAX_STREAM_BYTES = 256 << 20 };
enum { TAG_CHOICES = 0x31484343 /* "CCH1" */, TAG_PASS = 0x31535350 /* "PSS1" */, TAG_RESULT = 0x31534552 };

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Child side: chunks are built in memory and written whole.
 */
typedef struct wbuf {
    uint8_t *data;
    size_t len, cap;
    bool failed;
} wbuf;

static void wb_put(wbuf *b, const void *p, size_t n)
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

static void wb_u32(wbuf *b, uint32_t v)
{
    wb_put(b, &v, sizeof v);
}

static void wb_u64(wbuf *b, uint64_t v)
{
    wb_put(b, &v, sizeof v);
}

static void wb_blob(wbuf *b, const void *p, size_t n)
{
    wb_u64(b, n);
    wb_put(b, p, n);
}

static bool write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

/* Frames the payload in `body` as one chunk and writes it. */
static void send_chunk(int fd, uint32_t tag, wbuf *body)
{
    if (body->failed || body->len > UINT32_MAX) {
        free(body->data);
        return; /* the parent sees the chunk missing: no result is a reported failure, never a silent pass */
    }
    wbuf b = {0};
    wb_u32(&b, tag);
    wb_u32(&b, (uint32_t)body->len);
    wb_put(&b, body->data, body->len);
    if (!b.failed) write_all(fd, b.data, b.len);
    free(b.data);
    free(body->data);
}

void pc_iso_send_choices(int fd, const uint32_t *values, size_t n)
{
    wbuf b = {0};
    size_t bytes;
    if (!pc_size_mul(n, sizeof *values, &bytes)) return;
    wb_blob(&b, values, bytes);
    send_chunk(fd, TAG_CHOICES, &b);
}

void pc_iso_send_pass(int fd, const char *pass)
{
    wbuf b = {0};
    wb_blob(&b, pass, strlen(pass));
    send_chunk(fd, TAG_PASS, &b);
}

void pc_iso_send_result(int fd, pc_status status, bool gen_failed, const char *message,
                        const pc_check_result *res)
{
    static const pc_check_result none;
    if (!res) res = &none;
    wbuf b = {0};
    wb_u32(&b, (uint32_t)status);
    wb_u32(&b, gen_failed);
    wb_blob(&b, message ? message : "", message ? strlen(message) : 0);
    wb_put(&b, res->counts, sizeof res->counts);
    wb_u32(&b, res->failed);
    wb_put(&b, &res->failure, sizeof res->failure);
    wb_put(&b, &res->stats, sizeof res->stats);
    wb_blob(&b, res->before_bytes, res->before_bytes ? res->before_size : 0);
    wb_blob(&b, res->after_bytes, res->after_bytes ? res->after_size : 0);
    send_chunk(fd, TAG_RESULT, &b);
}

#ifdef PC_DEBUG_CHECKS
/* Whether the comma-separated index list in environment variable `var` names `index`. */
static bool env_lists_index(const char *var, uint64_t index)
{
    const char *p = getenv(var);
    while (p && *p) {
        char *end;
        unsigned long long v = strtoull(p, &end, 10);
        if (end != p && v == index) return true;
        p = strchr(p, ',');
        if (p) p++;
    }
    return false;
}

static void test_hooks(uint64_t index)
{
    if (env_lists_index("PC_SUITE_TEST_CRASH", index)) {
        signal(SIGSEGV, SIG_DFL); /* a plain signal death, whatever handler a sanitizer installed */
        raise(SIGSEGV);
    }
    if (env_lists_index("PC_SUITE_TEST_HANG", index))
        for (;;)
            sleep(1);
}
#endif

/* pc_check_config.on_pass in a child: the last pass finished goes to the parent before the next one starts.
 */
static void send_pass(void *ctx, const char *pass)
{
    pc_iso_send_pass(*(const int *)ctx, pass);
}

void pc_iso_case_child(void *vctx, int fd)
{
    const pc_iso_case_ctx *ctx = vctx;
    pc_suite_generate_fn generate = ctx->generate ? ctx->generate : pc_case_generate;
    pc_suite_check_fn check = ctx->check_fn ? ctx->check_fn : pc_case_check;
    pc_choices ch;
    if (ctx->replaying)
        pc_choices_init_replay(&ch, ctx->replay, ctx->n_replay);
    else
        pc_choices_init_random(&ch, ctx->case_seed);
    pc_case c;
    memset(&c, 0, sizeof c);
    pc_error err;
    pc_error_clear(&err);
    pc_status st = PC_OK;
    if (ctx->inject) st = pc_fault_enable_list(ctx->inject, &err);
    if (st == PC_OK) st = generate(ctx->gen, &ch, &c, &err);
    /* Sent whatever generation said: a generator error replays from these choices too. */
    pc_iso_send_choices(fd, ch.values, ch.n);
#ifdef PC_DEBUG_CHECKS
    test_hooks(ctx->index);
#endif
    if (st != PC_OK) {
        pc_iso_send_result(fd, st, true, err.message, NULL);
    } else {
        pc_check_result res;
        memset(&res, 0, sizeof res);
        pc_error_clear(&err);
        pc_check_config cc = *ctx->check;
        cc.on_pass = send_pass;
        cc.on_pass_ctx = &fd;
        st = check(&c, &cc, &res, &err);
        pc_iso_send_result(fd, st, false, st == PC_OK ? "" : err.message, &res);
        pc_check_result_free(&res);
    }
    pc_case_free(&c);
    pc_choices_free(&ch);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Parent side.
 */
pc_status pc_iso_start(pc_iso_job *job, pc_iso_child_fn fn, void *ctx, double timeout, pc_error *err)
{
    void *user = job->user;
    memset(job, 0, sizeof *job);
    job->user = user;
    job->fd = -1;
    int fds[2];
    /* close-on-exec: a property that runs a helper program (the ORT oracle) must not hand it the pipe, or the
     * parent would wait for the helper's exit to see end of stream */
    if (pipe(fds) != 0)
        return pc_error_set(err, PC_ERR_INTERNAL, "cannot create a pipe for a case: %s", strerror(errno));
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return pc_error_set(err, PC_ERR_INTERNAL, "cannot fork a case: %s", strerror(e));
    }
    if (pid == 0) {
        close(fds[0]);
        signal(SIGPIPE, SIG_DFL);
        fn(ctx, fds[1]);
        close(fds[1]);
        /* exit, not _exit: a sanitizer build's leak check runs in the child; stdio was flushed before the
         * fork */
        exit(0);
    }
    close(fds[1]);
    job->pid = (int)pid;
    job->fd = fds[0];
    job->timeout = timeout;
    job->started = now_seconds();
    job->deadline = job->started + timeout;
    return PC_OK;
}

bool pc_iso_ready(const pc_iso_job *job)
{
    return job->pid != 0 && (job->eof || job->timed_out || job->oversized);
}

static bool job_running(const pc_iso_job *job)
{
    return job->pid != 0 && !pc_iso_ready(job);
}

static void job_read(pc_iso_job *job)
{
    if (job->len == job->cap) {
        size_t ncap = job->cap ? job->cap * 2 : 4096;
        uint8_t *ns = ncap <= MAX_STREAM_BYTES ? realloc(job->stream, ncap) : NULL;
        if (!ns) {
            job->oversized = true;
            return;
        }
        job->stream = ns;
        job->cap = ncap;
    }
    ssize_t got = read(job->fd, job->stream + job->len, job->cap - job->len);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (got <= 0)
        job->eof = true;
    else
        job->len += (size_t)got;
}

size_t pc_iso_pump(pc_iso_job *jobs, size_t n, int max_wait_ms)
{
    struct pollfd stack_fds[64];
    struct pollfd *fds = stack_fds;
    size_t *which = NULL, stack_which[64];
    which = stack_which;
    if (n > 64) {
        fds = calloc(n, sizeof *fds);
        which = calloc(n, sizeof *which);
        if (!fds || !which) { /* poll them one by one instead */
            free(fds);
            free(which);
            fds = stack_fds;
            which = stack_which;
            n = 64;
        }
    }
    size_t k = 0;
    double now = now_seconds(), first_deadline = now + max_wait_ms / 1000.0;
    for (size_t i = 0; i < n; i++) {
        if (!job_running(&jobs[i])) continue;
        if (jobs[i].deadline < first_deadline) first_deadline = jobs[i].deadline;
        fds[k] = (struct pollfd){jobs[i].fd, POLLIN, 0};
        which[k++] = i;
    }
    if (k) {
        double wait = first_deadline - now;
        int ms = wait <= 0 ? 0 : (int)(wait * 1000) + 1;
        if (ms > max_wait_ms) ms = max_wait_ms;
        int got = poll(fds, k, ms);
        for (size_t j = 0; got > 0 && j < k; j++)
            if (fds[j].revents) job_read(&jobs[which[j]]);
        now = now_seconds();
        for (size_t j = 0; j < k; j++)
            if (job_running(&jobs[which[j]]) && now >= jobs[which[j]].deadline)
                jobs[which[j]].timed_out = true;
    }
    if (fds != stack_fds) free(fds);
    if (which != stack_which) free(which);
    size_t ready = 0;
    for (size_t i = 0; i < n; i++)
        ready += pc_iso_ready(&jobs[i]);
    return ready;
}

/* Waits for the child until the deadline; false on timeout (the child is then still running). Children exit
 * right after closing the pipe, so the nap starts short. */
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
        if (now_seconds() >= deadline) return false;
        struct timespec ts = {0, nap_ns};
        nanosleep(&ts, NULL);
        if (nap_ns < 10000000) nap_ns *= 2;
    }
}

typedef struct rbuf {
    const uint8_t *data;
    size_t len, pos;
    bool bad;
} rbuf;

static void rb_get(rbuf *b, void *out, size_t n)
{
    if (b->bad || n > b->len - b->pos) {
        b->bad = true;
        memset(out, 0, n);
        return;
    }
    memcpy(out, b->data + b->pos, n);
    b->pos += n;
}

static uint32_t rb_u32(rbuf *b)
{
    uint32_t v;
    rb_get(b, &v, sizeof v);
    return v;
}

/* A length-prefixed blob: a pointer into the stream (not copied) and its size. */
static const uint8_t *rb_blob(rbuf *b, size_t *n)
{
    uint64_t len;
    rb_get(b, &len, sizeof len);
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

static void copy_text(char *dst, size_t size, const uint8_t *src, size_t n)
{
    size_t k = n < size - 1 ? n : size - 1;
    if (k) memcpy(dst, src, k);
    dst[k] = '\0';
}

static uint8_t *dup_bytes(const uint8_t *p, size_t n)
{
    if (!n) return NULL;
    uint8_t *d = malloc(n);
    if (d) memcpy(d, p, n);
    return d;
}

static bool decode_result(rbuf *b, pc_iso_outcome *out)
{
    pc_check_result *r = &out->res;
    uint32_t st = rb_u32(b);
    out->status = st < PC_STATUS_COUNT ? (pc_status)st : PC_ERR_INTERNAL;
    out->gen_failed = rb_u32(b) != 0;
    size_t n;
    const uint8_t *msg = rb_blob(b, &n);
    copy_text(out->message, sizeof out->message, msg ? msg : (const uint8_t *)"", n);
    rb_get(b, r->counts, sizeof r->counts);
    r->failed = rb_u32(b) != 0;
    rb_get(b, &r->failure, sizeof r->failure);
    /* the strings came from another process: never trust their termination */
    r->failure.property[sizeof r->failure.property - 1] = '\0';
    r->failure.pass[sizeof r->failure.pass - 1] = '\0';
    r->failure.kind[sizeof r->failure.kind - 1] = '\0';
    r->failure.message[sizeof r->failure.message - 1] = '\0';
    rb_get(b, &r->stats, sizeof r->stats);
    const uint8_t *before = rb_blob(b, &n);
    if (before && n && !(r->before_bytes = dup_bytes(before, n))) b->bad = true;
    r->before_size = r->before_bytes ? n : 0;
    const uint8_t *after = rb_blob(b, &n);
    if (after && n && !(r->after_bytes = dup_bytes(after, n))) b->bad = true;
    r->after_size = r->after_bytes ? n : 0;
    return !b->bad && b->pos == b->len;
}

static void decode_stream(const uint8_t *data, size_t len, pc_iso_outcome *out)
{
    size_t pos = 0;
    while (len - pos >= 2 * sizeof(uint32_t)) {
        uint32_t tag, n;
        memcpy(&tag, data + pos, sizeof tag);
        memcpy(&n, data + pos + sizeof tag, sizeof n);
        pos += 2 * sizeof(uint32_t);
        if (n > len - pos) break; /* cut short by a crash */
        rbuf b = {data + pos, n, 0, false};
        size_t blen;
        const uint8_t *blob;
        switch (tag) {
        case TAG_CHOICES:
            blob = rb_blob(&b, &blen);
            if (!b.bad && blen % sizeof(uint32_t) == 0 && !out->have_choices) {
                out->choices = blen ? malloc(blen) : NULL;
                if (blen && !out->choices) break;
                if (blen) memcpy(out->choices, blob, blen);
                out->n_choices = blen / sizeof(uint32_t);
                out->have_choices = true;
            }
            break;
        case TAG_PASS:
            blob = rb_blob(&b, &blen);
            if (!b.bad) copy_text(out->last_pass, sizeof out->last_pass, blob, blen);
            break;
        case TAG_RESULT:
            pc_check_result_free(&out->res);
            memset(&out->res, 0, sizeof out->res);
            out->have_result = decode_result(&b, out);
            if (!out->have_result) {
                pc_check_result_free(&out->res);
                memset(&out->res, 0, sizeof out->res);
            }
            break;
        default:
            break;
        }
        pos += n;
    }
}

static const char *signal_abbrev(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGABRT:
        return "SIGABRT";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    case SIGKILL:
        return "SIGKILL";
    case SIGTERM:
        return "SIGTERM";
    case SIGTRAP:
        return "SIGTRAP";
    case SIGPIPE:
        return "SIGPIPE";
    default:
        return NULL;
    }
}

/* Replaces whatever result came back with an isolation failure. */
static void set_isolation_failure(pc_iso_outcome *out, const char *property, const char *kind,
                                  const char *fmt, ...) PC_PRINTF(4, 5);

static void set_isolation_failure(pc_iso_outcome *out, const char *property, const char *kind,
                                  const char *fmt, ...)
{
    pc_check_result *r = &out->res;
    /* the counts and stats of a result that did arrive stay: the passes before the crash were checked */
    free(r->before_bytes);
    free(r->after_bytes);
    r->before_bytes = r->after_bytes = NULL;
    r->before_size = r->after_size = 0;
    r->failed = true;
    memset(&r->failure, 0, sizeof r->failure);
    snprintf(r->failure.property, sizeof r->failure.property, "%s", property);
    snprintf(r->failure.pass, sizeof r->failure.pass, "%s", out->have_choices ? out->last_pass : "generate");
    snprintf(r->failure.kind, sizeof r->failure.kind, "%s", kind);
    r->failure.outcome = PC_PROP_FAIL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->failure.message, sizeof r->failure.message, fmt, ap);
    va_end(ap);
    out->status = PC_OK;
    out->gen_failed = false;
    out->message[0] = '\0';
}

void pc_iso_finish(pc_iso_job *job, pc_iso_outcome *out)
{
    memset(out, 0, sizeof *out);
    int status = 0;
    pid_t pid = (pid_t)job->pid;
    if (!job->timed_out && !job->oversized && !reap_until(pid, job->deadline, &status)) job->timed_out = true;
    if (job->timed_out || job->oversized) {
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    close(job->fd);
    decode_stream(job->stream, job->len, out);
    const char *where = out->have_choices ? (out->last_pass[0] ? out->last_pass : "(before the first pass)")
                                          : "(during generation)";
    char was[96] = "";
    if (out->have_result)
        snprintf(was, sizeof was, " after reporting %s", out->res.failed ? "a failure" : "its result");
    if (job->timed_out) {
        set_isolation_failure(out, "timeout", "",
                              "no result after %g s (child killed); last pass finished: %s", job->timeout,
                              where);
    } else if (job->oversized) {
        set_isolation_failure(out, "crash", "oversized",
                              "the child sent more than %d bytes (child killed); last "
                              "pass finished: %s",
                              MAX_STREAM_BYTES, where);
    } else if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        const char *abbrev = signal_abbrev(sig);
        char kind[32];
        if (abbrev)
            snprintf(kind, sizeof kind, "%s", abbrev);
        else
            snprintf(kind, sizeof kind, "signal-%d", sig);
        set_isolation_failure(out, "crash", kind, "child killed by signal %d (%s)%s; last pass finished: %s",
                              sig, strsignal(sig), was, where);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0 && !(out->have_result && out->res.failed)) {
        /* a sanitizer report ends the child with a non-zero status, possibly after its result (a leak at
         * exit); a property failure already reported is the more specific of the two, so it stands */
        char kind[32];
        snprintf(kind, sizeof kind, "exit-%d", WEXITSTATUS(status));
        set_isolation_failure(out, "crash", kind,
                              "child exited with status %d%s (a sanitizer report? see its "
                              "stderr); last pass finished: %s",
                              WEXITSTATUS(status), was, where);
    } else if (!out->have_result) {
        set_isolation_failure(out, "crash", "no-result",
                              "the child exited without a complete result (%zu bytes "
                              "received); last pass finished: %s",
                              job->len, where);
    }
    free(job->stream);
    void *user = job->user;
    memset(job, 0, sizeof *job);
    job->fd = -1;
    job->user = user;
}

void pc_iso_outcome_free(pc_iso_outcome *o)
{
    free(o->choices);
    pc_check_result_free(&o->res);
    memset(o, 0, sizeof *o);
}

/* ---------------------------------------------------------------------------------------------------------------
 * pc_case_check_isolated.
 */
typedef struct check_ctx {
    const pc_case *kase;
    const pc_check_config *cc;
} check_ctx;

static void check_child(void *vctx, int fd)
{
    const check_ctx *ctx = vctx;
    pc_check_result res;
    memset(&res, 0, sizeof res);
    pc_error err;
    pc_error_clear(&err);
    pc_iso_send_choices(fd, NULL, 0); /* "generation" is the caller's: mark it done */
    pc_check_config cc = *ctx->cc;
    cc.on_pass = send_pass;
    cc.on_pass_ctx = &fd;
    pc_status st = pc_case_check(ctx->kase, &cc, &res, &err);
    pc_iso_send_result(fd, st, false, st == PC_OK ? "" : err.message, &res);
    pc_check_result_free(&res);
}

pc_status pc_case_check_isolated(const pc_case *c, const pc_check_config *cc, double timeout_seconds,
                                 pc_check_result *res, pc_error *err)
{
    memset(res, 0, sizeof *res);
    if (!(timeout_seconds > 0))
        return pc_error_set(err, PC_ERR_USAGE, "isolated check: timeout %g s is not positive",
                            timeout_seconds);
    check_ctx ctx = {c, cc};
    pc_iso_job job;
    memset(&job, 0, sizeof job);
    pc_status st = pc_iso_start(&job, check_child, &ctx, timeout_seconds, err);
    if (st != PC_OK) return st;
    while (!pc_iso_pump(&job, 1, 1000)) {
    }
    pc_iso_outcome out;
    pc_iso_finish(&job, &out);
    if (out.status != PC_OK) {
        st = pc_error_set(err, out.status, "%s", out.message);
        pc_iso_outcome_free(&out);
        return st;
    }
    *res = out.res;
    memset(&out.res, 0, sizeof out.res);
    pc_iso_outcome_free(&out);
    return PC_OK;
}
