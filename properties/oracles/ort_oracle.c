/* The ONNX Runtime 1.30 oracle's machinery: the client of tools/ort/ort_run.js (a long-lived node server;
 * ort_oracle.h explains its lifetime) and the verdict on one run (tolerances and the explained differences).
 * The `ort-oracle` property built on them is properties/prop_ort_oracle.c. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "properties/oracles/ort_oracle.h"
#include "properties/runner/util.h"
#include "properties/runner/wire.h"
#include "reference/reference.h"

#ifndef PC_SOURCE_DIR
#define PC_SOURCE_DIR "."
#endif

enum { REQ_MAGIC = 0x524f4350u, RESP_MAGIC = 0x53524350u, WIRE_VERSION = 1, WIRE_VERSION_TIMED = 2 };
enum { RESP_BAD_REQUEST = 4 };
/* Response bodies come from our own helper, but a broken helper must not make us allocate without bound. */
#define MAX_RESPONSE_BYTES ((uint64_t)1 << 31)

/* ---------------------------------------------------------------------------------------------------------------
 * The server and this process's connection to it.
 */
typedef struct ort_server {
    pid_t owner; /* process that started node: only it stops it; 0 when there is none */
    pid_t node_pid;
    int ctl_fd; /* write end of node's stdin (CLOEXEC): its closing ends node */
    char *dir;  /* private temporary folder holding the socket and node's stderr log */
    char *sock;
    char *ort_dir;
} ort_server;

static ort_server g_srv = {.ctl_fd = -1};
static int g_conn = -1;
static pid_t g_conn_pid;
static bool g_atexit;

const char *pc_ort_dir(const char *dir)
{
    if (dir && *dir) return dir;
    const char *env = getenv("PC_ORT_DIR");
    if (env && *env) return env;
    static char buf[PATH_MAX];
    const char *home = getenv("HOME");
    snprintf(buf, sizeof buf, "%s/.cache/passcheck/ort/node_modules", home && *home ? home : "");
    return buf;
}

static char *dup_printf(const char *fmt, ...) PC_PRINTF(1, 2);

static char *dup_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s) return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

static void server_forget(void)
{
    free(g_srv.dir);
    free(g_srv.sock);
    free(g_srv.ort_dir);
    g_srv = (ort_server){.ctl_fd = -1};
}

/* The last line node wrote on stderr (an uncaught exception, an ORT abort), for error messages. */
static void stderr_tail(char *buf, size_t size)
{
    buf[0] = '\0';
    if (!g_srv.dir) return;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/stderr.log", g_srv.dir);
    FILE *f = fopen(path, "rb");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f))
        if (line[0] != '\n') snprintf(buf, size, "%s", line);
    fclose(f);
    size_t n = strlen(buf);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
}

static void close_conn(void)
{
    if (g_conn >= 0) close(g_conn);
    g_conn = -1;
}

void pc_ort_server_stop(void)
{
    if (g_conn >= 0 && g_conn_pid == getpid()) close_conn();
    if (!g_srv.owner) return;
    if (g_srv.owner != getpid()) {
        /* a forked copy of the owner's state: the owner stops it; our inherited pipe end closes with us */
        if (g_srv.ctl_fd >= 0) close(g_srv.ctl_fd);
        server_forget();
        return;
    }
    if (g_srv.ctl_fd >= 0) close(g_srv.ctl_fd);
    if (g_srv.node_pid > 0) {
        kill(g_srv.node_pid, SIGTERM);
        while (waitpid(g_srv.node_pid, NULL, 0) < 0 && errno == EINTR) {
        }
    }
    if (g_srv.dir) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/stderr.log", g_srv.dir);
        unlink(path);
        if (g_srv.sock) unlink(g_srv.sock);
        rmdir(g_srv.dir);
    }
    server_forget();
}

static void stop_at_exit(void)
{
    if (g_srv.owner == getpid()) pc_ort_server_stop();
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Resolves the node binary on PATH (so "node missing" is a clear message, not a failed exec in a child). */
static bool find_node(char *out, size_t size)
{
    const char *env = getenv("PC_NODE");
    if (env && *env) {
        snprintf(out, size, "%s", env);
        return access(out, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        if (n && n < size) {
            snprintf(out, size, "%.*s/node", (int)n, path);
            if (access(out, X_OK) == 0) return true;
        }
        if (!colon) break;
        path = colon + 1;
    }
    snprintf(out, size, "node");
    return false;
}

static double timeout_seconds(void)
{
    const char *env = getenv("PC_ORT_TIMEOUT");
    double t = env ? strtod(env, NULL) : 0;
    return t > 0 ? t : 120.0;
}

/* Reads exactly n bytes (or fails on EOF, error or timeout), naming `what` in the message. */
static pc_status read_full(int fd, uint8_t *buf, size_t n, double deadline, const char *what, pc_error *err)
{
    switch (pc_read_all_until(fd, buf, n, deadline)) {
    case PC_READ_OK:
        return PC_OK;
    case PC_READ_TIMEOUT:
        return pc_error_set(err, PC_ERR_IO, "ORT server: no %s within %.0f s", what, timeout_seconds());
    case PC_READ_EOF:
        return pc_error_set(err, PC_ERR_IO, "ORT server closed the connection before the %s", what);
    case PC_READ_POLL_FAILED:
        return pc_error_set(err, PC_ERR_IO, "ORT server: poll failed: %s", strerror(errno));
    case PC_READ_FAILED:
        break;
    }
    return pc_error_set(err, PC_ERR_IO, "ORT server: reading the %s failed: %s", what, strerror(errno));
}

static pc_status server_spawn(const char *ort_dir, pc_error *err)
{
    char node[PATH_MAX];
    if (!find_node(node, sizeof node))
        return pc_error_set(err, PC_ERR_IO,
                            "node not found (%s; on PATH or set PC_NODE): the ORT oracle needs "
                            "Node.js and onnxruntime-node (ci/deps installs both)",
                            node);
    char pkg[PATH_MAX];
    snprintf(pkg, sizeof pkg, "%s/onnxruntime-node", ort_dir);
    if (!is_dir(pkg))
        return pc_error_set(err, PC_ERR_IO,
                            "%s: no such folder: onnxruntime-node is not installed there "
                            "(ci/deps installs it; PC_ORT_DIR or the ort_dir setting picks another)",
                            pkg);
    const char *script = getenv("PC_ORT_RUN_JS");
    if (!script || !*script) script = PC_SOURCE_DIR "/tools/ort/ort_run.js";
    if (!is_file(script))
        return pc_error_set(err, PC_ERR_IO, "%s: the ORT helper script is missing (PC_ORT_RUN_JS overrides)",
                            script);

    /* sun_path holds ~107 bytes: prefer $TMPDIR, fall back to /tmp when it is too deep */
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp || strlen(tmp) > 60) tmp = "/tmp";
    char *dir = dup_printf("%s/pc-ort-XXXXXX", tmp);
    if (!dir) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    if (!mkdtemp(dir)) {
        pc_status st =
            pc_error_set(err, PC_ERR_IO, "%s: cannot create a temporary folder: %s", dir, strerror(errno));
        free(dir);
        return st;
    }
    char *sock = dup_printf("%s/s", dir);
    char *log = dup_printf("%s/stderr.log", dir);
    char *ortd = dup_printf("%s", ort_dir);
    int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1};
    pc_status st = PC_OK;
    if (!sock || !log || !ortd) {
        st = pc_error_set(err, PC_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if (pipe(in_pipe) != 0 || pipe(out_pipe) != 0) {
        st = pc_error_set(err, PC_ERR_IO, "cannot create pipes for the ORT server: %s", strerror(errno));
        goto fail;
    }
    /* CLOEXEC on our ends: other programs we or our children exec (graphviz, another node server) must not
     * hold node's stdin open, or it would outlive us */
    fcntl(in_pipe[1], F_SETFD, FD_CLOEXEC);
    fcntl(out_pipe[0], F_SETFD, FD_CLOEXEC);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        st = pc_error_set(err, PC_ERR_IO, "cannot fork the ORT server: %s", strerror(errno));
        goto fail;
    }
    if (pid == 0) {
        int errfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(in_pipe[0], 0);
        dup2(out_pipe[1], 1);
        if (errfd >= 0) dup2(errfd, 2);
        /* own process group: a Ctrl-C aimed at the suite reaches us through our owner's exit, not twice */
        setpgid(0, 0);
        char *argv[] = {node, (char *)script, ortd, "--listen", sock, NULL};
        execv(node, argv);
        _exit(127);
    }
    close(in_pipe[0]);
    close(out_pipe[1]);
    in_pipe[0] = out_pipe[1] = -1;

    /* the banner: "ready <version>" or "error <message>" */
    char line[1024];
    size_t n = 0;
    double deadline = pc_now_seconds() + 60;
    for (;;) {
        if (n + 1 >= sizeof line) break;
        pc_error rerr;
        if (read_full(out_pipe[0], (uint8_t *)line + n, 1, deadline, "start-up banner", &rerr) != PC_OK)
            break;
        if (line[n] == '\n') break;
        n++;
    }
    line[n] = '\0';
    close(out_pipe[0]);
    out_pipe[0] = -1;
    if (strncmp(line, "ready", 5) != 0) {
        g_srv.dir = dir; /* for stderr_tail */
        char tail[512];
        stderr_tail(tail, sizeof tail);
        g_srv.dir = NULL;
        close(in_pipe[1]);
        in_pipe[1] = -1;
        kill(pid, SIGKILL);
        int wst = 0;
        while (waitpid(pid, &wst, 0) < 0 && errno == EINTR) {
        }
        if (strncmp(line, "error ", 6) == 0)
            st = pc_error_set(err, PC_ERR_IO, "ORT server (%s): %s", script, line + 6);
        else if (WIFEXITED(wst) && WEXITSTATUS(wst) == 127)
            st = pc_error_set(err, PC_ERR_IO, "%s: cannot execute node", node);
        else
            st = pc_error_set(err, PC_ERR_IO, "ORT server (%s %s) did not start%s%s", node, script,
                              tail[0] ? ": " : "", tail);
        goto fail;
    }
    g_srv = (ort_server){
        .owner = getpid(), .node_pid = pid, .ctl_fd = in_pipe[1], .dir = dir, .sock = sock, .ort_dir = ortd};
    free(log);
    if (!g_atexit) {
        atexit(stop_at_exit);
        g_atexit = true;
    }
    return PC_OK;
fail:
    for (int i = 0; i < 2; i++) {
        if (in_pipe[i] >= 0) close(in_pipe[i]);
        if (out_pipe[i] >= 0) close(out_pipe[i]);
    }
    if (log) unlink(log);
    if (sock) unlink(sock);
    rmdir(dir);
    free(dir);
    free(sock);
    free(log);
    free(ortd);
    return st;
}

static int connect_to(const char *path)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a.sun_path) return -1;
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A connection of this process to a server for ort_dir, starting one when none is reachable. */
static pc_status ensure_conn(const char *ort_dir, pc_error *err)
{
    if (g_conn >= 0 && g_conn_pid != getpid()) {
        /* inherited from the process we were forked from: its stream is not ours to use */
        close(g_conn);
        g_conn = -1;
    }
    if (g_conn >= 0) return PC_OK;
    if (g_srv.owner && g_srv.ort_dir && strcmp(g_srv.ort_dir, ort_dir) == 0) {
        g_conn = connect_to(g_srv.sock);
        if (g_conn >= 0) {
            g_conn_pid = getpid();
            return PC_OK;
        }
    }
    pc_ort_server_stop(); /* ours and dead (or another ORT folder): reap it; inherited: forget it */
    pc_status st = server_spawn(ort_dir, err);
    if (st != PC_OK) return st;
    g_conn = connect_to(g_srv.sock);
    if (g_conn < 0)
        return pc_error_set(err, PC_ERR_IO, "%s: cannot connect to the ORT server: %s", g_srv.sock,
                            strerror(errno));
    g_conn_pid = getpid();
    return PC_OK;
}

pc_status pc_ort_server_start(const char *ort_dir, pc_error *err)
{
    pc_error_clear(err);
    return ensure_conn(pc_ort_dir(ort_dir), err);
}

static pc_status send_all(int fd, const uint8_t *buf, size_t n, pc_error *err)
{
    if (pc_send_all(fd, buf, n)) return PC_OK;
    return pc_error_set(err, PC_ERR_IO, "ORT server: sending the request failed: %s", strerror(errno));
}

/* ---------------------------------------------------------------------------------------------------------------
 * One request.
 */
void pc_ort_result_free(pc_ort_result *r)
{
    if (!r) return;
    for (uint32_t i = 0; i < r->n_outputs; i++) {
        if (r->names) free(r->names[i]);
        if (r->outputs) pc_data_unref(r->outputs[i]);
    }
    free(r->names);
    free(r->outputs);
    memset(r, 0, sizeof *r);
}

static pc_status build_request(pc_wbuf *b, const uint8_t *model, size_t model_size, uint32_t n_inputs,
                               const char *const *names, pc_data *const *inputs,
                               const pc_ort_timed_options *timed, pc_error *err)
{
    if (model_size > UINT32_MAX)
        return pc_error_set(err, PC_ERR_BUDGET,
                            "model of %zu bytes is too large for the "
                            "ORT helper",
                            model_size);
    pc_wb_u32le(b, REQ_MAGIC);
    pc_wb_u32le(b, timed ? WIRE_VERSION_TIMED : WIRE_VERSION);
    pc_wb_u64le(b, 0); /* body length, patched below */
    pc_wb_u32le(b, (uint32_t)model_size);
    pc_wb_put(b, model, model_size);
    pc_wb_u32le(b, n_inputs);
    for (uint32_t i = 0; i < n_inputs; i++) {
        const pc_data *d = inputs[i];
        if (!d || d->kind != PC_TYPE_TENSOR)
            return pc_error_set(err, PC_ERR_UNSUPPORTED, "input '%s' is not a tensor", names[i]);
        size_t nl = strlen(names[i]);
        if (nl > UINT32_MAX) return pc_error_set(err, PC_ERR_BUDGET, "input name too long");
        pc_wb_u32le(b, (uint32_t)nl);
        pc_wb_put(b, names[i], nl);
        pc_wb_u32le(b, (uint32_t)d->dtype);
        pc_wb_u32le(b, (uint32_t)d->rank);
        for (int32_t k = 0; k < d->rank; k++)
            pc_wb_u64le(b, (uint64_t)d->dims[k]);
        pc_wb_u64le(b, (uint64_t)d->n_bytes);
        pc_wb_put(b, d->data, d->n_bytes);
    }
    if (timed) {
        pc_wb_u32le(b, (uint32_t)timed->level);
        pc_wb_u32le(b, timed->threads);
        pc_wb_u32le(b, timed->warmup);
        pc_wb_u32le(b, timed->runs);
    }
    if (b->failed) return pc_error_set(err, PC_ERR_NOMEM, "out of memory building the ORT request");
    pc_le64_store(b->data + 8, (uint64_t)b->len - 16);
    return PC_OK;
}

/* The output records; *used: the bytes they took (a timed response has its timings after them). */
static pc_status parse_outputs(const uint8_t *p, size_t n, pc_ort_result *out, size_t *used, pc_error *err)
{
    size_t off = 0;
#define NEED(k)                                                                                              \
    do {                                                                                                     \
        if ((k) > n - off)                                                                                   \
            return pc_error_set(err, PC_ERR_TRUNCATED, "ORT server: response truncated at byte %zu", off);   \
    } while (0)
    NEED(4);
    uint32_t count = pc_le32_load(p + off);
    off += 4;
    if (count > n / 24)
        return pc_error_set(err, PC_ERR_LENGTH, "ORT server: %" PRIu32 " outputs in %zu bytes", count, n);
    out->names = calloc(count ? count : 1, sizeof *out->names);
    out->outputs = calloc(count ? count : 1, sizeof *out->outputs);
    if (!out->names || !out->outputs) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    out->n_outputs = count;
    for (uint32_t i = 0; i < count; i++) {
        NEED(4);
        uint32_t nl = pc_le32_load(p + off);
        off += 4;
        NEED(nl);
        out->names[i] = malloc((size_t)nl + 1);
        if (!out->names[i]) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
        memcpy(out->names[i], p + off, nl);
        out->names[i][nl] = '\0';
        off += nl;
        NEED(8);
        uint32_t dtype = pc_le32_load(p + off), rank = pc_le32_load(p + off + 4);
        off += 8;
        if (!pc_dtype_is_valid((int32_t)dtype) || rank > PC_MAX_RANK)
            return pc_error_set(err, PC_ERR_VALUE,
                                "ORT server: output '%s' has dtype %" PRIu32 ", rank %" PRIu32, out->names[i],
                                dtype, rank);
        int64_t dims[PC_MAX_RANK];
        NEED((size_t)rank * 8);
        for (uint32_t k = 0; k < rank; k++) {
            dims[k] = (int64_t)pc_le64_load(p + off);
            off += 8;
            if (dims[k] < 0)
                return pc_error_set(err, PC_ERR_NEGATIVE_DIM,
                                    "ORT server: output '%s' dim %" PRIu32 " is negative", out->names[i], k);
        }
        NEED(8);
        uint64_t nbytes = pc_le64_load(p + off);
        off += 8;
        NEED(nbytes);
        pc_data *d = pc_data_new_tensor((pc_dtype)dtype, (int32_t)rank, dims, err);
        if (!d) return err->status;
        out->outputs[i] = d;
        if (d->n_bytes != nbytes)
            return pc_error_set(err, PC_ERR_DATA_SIZE,
                                "ORT server: output '%s' (%s) has %" PRIu64 " bytes, want %zu", out->names[i],
                                pc_dtype_name((pc_dtype)dtype), nbytes, d->n_bytes);
        if (nbytes) memcpy(d->data, p + off, (size_t)nbytes);
        off += (size_t)nbytes;
    }
#undef NEED
    *used = off;
    return PC_OK;
}

/* A timed response's tail: u32 runs, f64 ms per run, f64 RSS before, f64 peak RSS. */
static pc_status parse_times(const uint8_t *p, size_t n, uint32_t want_runs, pc_ort_times *t, pc_error *err)
{
    if (n < 4 || pc_le32_load(p) != want_runs || n != 4 + 8 * (size_t)want_runs + 16)
        return pc_error_set(err, PC_ERR_WIRE,
                            "ORT server: a timed response's tail of %zu bytes for %" PRIu32 " runs", n,
                            want_runs);
    t->ms = calloc(want_runs ? want_runs : 1, sizeof *t->ms);
    if (!t->ms) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    t->n_runs = want_runs;
    for (uint32_t i = 0; i < want_runs; i++) {
        uint64_t bits = pc_le64_load(p + 4 + 8 * (size_t)i);
        memcpy(&t->ms[i], &bits, sizeof bits);
    }
    uint64_t b0 = pc_le64_load(p + 4 + 8 * (size_t)want_runs),
             b1 = pc_le64_load(p + 12 + 8 * (size_t)want_runs);
    memcpy(&t->rss_before, &b0, sizeof b0);
    memcpy(&t->rss_peak, &b1, sizeof b1);
    return PC_OK;
}

void pc_ort_times_free(pc_ort_times *t)
{
    free(t->ms);
    memset(t, 0, sizeof *t);
}

static pc_status ort_request(const char *ort_dir, const uint8_t *model, size_t model_size, uint32_t n_inputs,
                             const char *const *names, pc_data *const *inputs,
                             const pc_ort_timed_options *timed, pc_ort_result *out, pc_ort_times *times,
                             pc_error *err)
{
    memset(out, 0, sizeof *out);
    if (times) memset(times, 0, sizeof *times);
    pc_error_clear(err);
    ort_dir = pc_ort_dir(ort_dir);
    pc_wbuf req = {0};
    pc_status st = build_request(&req, model, model_size, n_inputs, names, inputs, timed, err);
    if (st == PC_OK) st = ensure_conn(ort_dir, err);
    if (st == PC_OK) st = send_all(g_conn, req.data, req.len, err);
    free(req.data);
    uint8_t head[16];
    double deadline = pc_now_seconds() + timeout_seconds();
    if (st == PC_OK) st = read_full(g_conn, head, sizeof head, deadline, "response", err);
    uint8_t *body = NULL;
    uint64_t len = 0;
    if (st == PC_OK) {
        len = pc_le64_load(head + 8);
        if (pc_le32_load(head) != RESP_MAGIC)
            st = pc_error_set(err, PC_ERR_WIRE, "ORT server: response does not start with the magic number");
        else if (len > MAX_RESPONSE_BYTES)
            st = pc_error_set(err, PC_ERR_BUDGET, "ORT server: response of %" PRIu64 " bytes", len);
        else if (!(body = malloc(len ? (size_t)len : 1)))
            st = pc_error_set(err, PC_ERR_NOMEM, "out of memory for a %" PRIu64 "-byte ORT response", len);
        else
            st = read_full(g_conn, body, (size_t)len, deadline, "response body", err);
    }
    if (st != PC_OK) {
        if (err->status == PC_ERR_IO) {
            /* the connection is in an unknown state: drop it; the next request reconnects or restarts */
            char tail[512];
            stderr_tail(tail, sizeof tail);
            if (tail[0]) pc_error_prefix(err, "(node stderr: %s) ", tail);
            close_conn();
        }
        free(body);
        return st;
    }
    uint32_t status = pc_le32_load(head + 4);
    if (status == PC_ORT_OK) {
        size_t used = 0;
        st = parse_outputs(body, (size_t)len, out, &used, err);
        if (st == PC_OK && timed)
            st = parse_times(body + used, (size_t)len - used, timed->runs, times, err);
        else if (st == PC_OK && used != len)
            st = pc_error_set(err, PC_ERR_WIRE, "ORT server: %zu trailing bytes in the response",
                              (size_t)len - used);
        if (st != PC_OK) {
            pc_ort_result_free(out);
            if (times) pc_ort_times_free(times);
        }
    } else if (status <= PC_ORT_UNSUPPORTED) {
        out->status = (pc_ort_status)status;
        snprintf(out->message, sizeof out->message, "%.*s", len > 1023 ? 1023 : (int)len, (const char *)body);
    } else if (status == RESP_BAD_REQUEST) {
        st = pc_error_set(err, PC_ERR_INTERNAL, "ORT helper refused the request: %.*s",
                          len > 512 ? 512 : (int)len, (const char *)body);
    } else {
        st = pc_error_set(err, PC_ERR_WIRE, "ORT server: unknown status %" PRIu32, status);
    }
    free(body);
    return st;
}

pc_status pc_ort_run(const char *ort_dir, const uint8_t *model, size_t model_size, uint32_t n_inputs,
                     const char *const *names, pc_data *const *inputs, pc_ort_result *out, pc_error *err)
{
    return ort_request(ort_dir, model, model_size, n_inputs, names, inputs, NULL, out, NULL, err);
}

pc_status pc_ort_run_timed(const char *ort_dir, const uint8_t *model, size_t model_size, uint32_t n_inputs,
                           const char *const *names, pc_data *const *inputs, const pc_ort_timed_options *o,
                           pc_ort_result *out, pc_ort_times *times, pc_error *err)
{
    return ort_request(ort_dir, model, model_size, n_inputs, names, inputs, o, out, times, err);
}

/* ---------------------------------------------------------------------------------------------------------------
 * The verdict.
 *
 * Two kinds of difference are not reference bugs. Each is recognized by re-running the reference, never by
 * loosening the comparison as a whole (docs/oracle.md, "Explained differences"):
 *  - a QuantizeLinear graph output one step apart, at elements whose float input (the reference's value) lies
 *    within the oracle's float tolerance of a rounding tie: ORT's float32 kernels may put that input on the
 *    other side of the tie, and the spec fixes float results only to rounding, so both steps are right
 * (PASS);
 *  - Resize given 'scales' in align_corners, pytorch_half_pixel or tf_crop_and_resize: ORT takes
 *    length_resized to be the floored output length, ONNX scale * length_original. When the reference run
 * with ORT's reading agrees with ORT, the case is that deviation of ORT from the spec, and ORT cannot judge
 * it: SKIP with kind "ort-resize-length" and the spec references in the message. Counted in the skip column,
 * not a failure: nothing is left to investigate (the reference matches ORT once ORT's reading is applied, and
 * matches the ONNX backend data with the spec's), and a deviation reported as a failure on every
 * `--oracle ort` run would teach users to ignore the oracle. Any other difference stays a FAIL.
 */

/* The reference's inputs of a QuantizeLinear node that produces a graph output (references held). */
typedef struct quant_site {
    const pc_value *out;
    const pc_node *node;
    pc_data *x, *scale, *zero_point;
} quant_site;

typedef struct quant_capture {
    const pc_graph *graph;
    quant_site *sites; /* at most graph->n_outputs */
    uint32_t n;
} quant_capture;

static bool is_quantize_linear(const pc_node *n)
{
    return strcmp(n->op_type, "QuantizeLinear") == 0 && n->domain[0] == '\0';
}

static void capture_quant(void *ctx, const pc_node *n, pc_data *const *in, pc_data *const *out)
{
    (void)out;
    quant_capture *q = ctx;
    if (n->graph != q->graph || !is_quantize_linear(n) || n->n_outputs < 1 || !n->outputs[0] ||
        !n->outputs[0]->is_graph_output || n->n_inputs < 2 || !in[0] || !in[1])
        return;
    for (uint32_t i = 0; i < q->n; i++)
        if (q->sites[i].out == n->outputs[0]) return;
    if (q->n >= q->graph->n_outputs) return; /* a graph output each: cannot happen */
    quant_site *site = &q->sites[q->n++];
    site->out = n->outputs[0];
    site->node = n;
    site->x = pc_data_ref(in[0]);
    site->scale = pc_data_ref(in[1]);
    site->zero_point = n->n_inputs > 2 && in[2] ? pc_data_ref(in[2]) : NULL;
}

static void quant_capture_free(quant_capture *q)
{
    for (uint32_t i = 0; i < q->n; i++) {
        pc_data_unref(q->sites[i].x);
        pc_data_unref(q->sites[i].scale);
        pc_data_unref(q->sites[i].zero_point);
    }
    free(q->sites);
    q->sites = NULL;
    q->n = 0;
}

static bool read_float(const pc_data *d, uint64_t k, double *v)
{
    if (d->dtype == PC_DTYPE_FLOAT)
        *v = ((const float *)d->data)[k];
    else if (d->dtype == PC_DTYPE_DOUBLE)
        *v = ((const double *)d->data)[k];
    else
        return false;
    return true;
}

/* Element k of an 8- or 16-bit integer tensor, with that type's range. */
static bool read_quant(const pc_data *d, uint64_t k, int64_t *v, int64_t *lo, int64_t *hi)
{
    switch (d->dtype) { /* the quantized types and their ranges; the element through core's reader */
    case PC_DTYPE_INT8:
        *lo = INT8_MIN, *hi = INT8_MAX;
        break;
    case PC_DTYPE_UINT8:
        *lo = 0, *hi = UINT8_MAX;
        break;
    case PC_DTYPE_INT16:
        *lo = INT16_MIN, *hi = INT16_MAX;
        break;
    case PC_DTYPE_UINT16:
        *lo = 0, *hi = UINT16_MAX;
        break;
    default:
        return false;
    }
    return pc_data_int_at(d, k, v);
}

static bool same_shape(const pc_data *a, const pc_data *b)
{
    if (a->kind != PC_TYPE_TENSOR || b->kind != PC_TYPE_TENSOR || a->rank != b->rank) return false;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

/* Whether every element where `ref` and `ort` differ is a tie of the QuantizeLinear at `site`: the two values
 * are the quantizations of the two integers around a tie t + 0.5, and the reference's x / scale lies within
 * the float tolerance (scaled by 1 / |scale|) of that tie. Per-tensor and per-axis quantization; blocked
 * (opset 21 block_size) is never explained. */
static bool quant_ties_explain(const quant_site *site, const pc_data *ref, const pc_data *ort)
{
    const pc_data *x = site->x, *sc = site->scale, *zp = site->zero_point;
    if (ref->dtype != ort->dtype || !same_shape(ref, ort) || !same_shape(ref, x) ||
        sc->kind != PC_TYPE_TENSOR || (zp && (zp->kind != PC_TYPE_TENSOR || zp->dtype != ref->dtype)) ||
        pc_node_attr_int(site->node, "block_size", 0) != 0)
        return false;
    /* per-tensor: one scale; per-axis: a 1-D scale along `axis` */
    uint64_t inner = 1, channels = 1;
    if (sc->n_elements != 1) {
        int64_t axis = pc_node_attr_int(site->node, "axis", 1);
        if (axis < 0) axis += x->rank;
        if (axis < 0 || axis >= x->rank || sc->rank != 1 || (uint64_t)x->dims[axis] != sc->n_elements)
            return false;
        for (int32_t d = (int32_t)axis + 1; d < x->rank; d++)
            inner *= (uint64_t)x->dims[d];
        channels = sc->n_elements;
    }
    if (zp && zp->n_elements != sc->n_elements) return false;
    for (uint64_t k = 0; k < ref->n_elements; k++) {
        int64_t a, b, lo, hi, z = 0, unused_lo, unused_hi;
        if (!read_quant(ref, k, &a, &lo, &hi) || !read_quant(ort, k, &b, &lo, &hi)) return false;
        if (a == b) continue;
        uint64_t c = channels > 1 ? k / inner % channels : 0;
        double xv, s;
        if (!read_float(x, k, &xv) || !read_float(sc, c, &s) || !(s != 0) || !isfinite(xv)) return false;
        if (zp && !read_quant(zp, c, &z, &unused_lo, &unused_hi)) return false;
        double y = xv / s, tie = floor(y) + 0.5, tol = (PC_ORT_ATOL + PC_ORT_RTOL * fabs(xv)) / fabs(s);
        if (!(fabs(y - tie) <= tol) || fabs(tie) > 0x1p52) return false;
        int64_t q0 = (int64_t)floor(tie) + z, q1 = q0 + 1;
        q0 = q0 < lo ? lo : q0 > hi ? hi : q0;
        q1 = q1 < lo ? lo : q1 > hi ? hi : q1;
        if (!((a == q0 && b == q1) || (a == q1 && b == q0))) return false;
    }
    return true;
}

/* Every output of `m` (graph order) against ORT's of the same name; `q` (NULL: none) adds the
 * quantization-tie allowance for the QuantizeLinear outputs it holds. */
static pc_prop_outcome compare_outputs(const pc_model *m, pc_data *const *ref, const pc_ort_result *ort,
                                       const quant_capture *q, char *msg, size_t msg_size, const char **kind)
{
    const pc_graph *g = m->graph;
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        const char *name = g->outputs[i]->name;
        const pc_data *got = NULL;
        for (uint32_t k = 0; k < ort->n_outputs && !got; k++)
            if (strcmp(ort->names[k], name) == 0) got = ort->outputs[k];
        if (!got) {
            *kind = "ort-disagrees";
            snprintf(msg, msg_size, "ONNX Runtime gives no output '%s' (graph output %" PRIu32 ")", name, i);
            return PC_PROP_FAIL;
        }
        pc_compare_result cr;
        if (pc_data_compare(ref[i], got, PC_ORT_RTOL, PC_ORT_ATOL, &cr) == PC_COMPARE_EQUAL) continue;
        const quant_site *site = NULL;
        for (uint32_t k = 0; q && k < q->n && !site; k++)
            if (q->sites[k].out == g->outputs[i]) site = &q->sites[k];
        if (site && quant_ties_explain(site, ref[i], got)) continue;
        char ed[96], ad[96];
        *kind = "ort-disagrees";
        snprintf(msg, msg_size,
                 "graph output '%s': the reference executor (%s) and ONNX Runtime 1.30 (%s) disagree: %s "
                 "(floats: rtol %g, atol %g; integers exact)",
                 name, pc_data_describe(ref[i], ed, sizeof ed), pc_data_describe(got, ad, sizeof ad),
                 cr.detail, PC_ORT_RTOL, PC_ORT_ATOL);
        return PC_PROP_FAIL;
    }
    return PC_PROP_PASS;
}

pc_prop_outcome pc_ort_compare_outputs(const pc_model *m, pc_data *const *ref, const pc_ort_result *ort,
                                       char *msg, size_t msg_size, const char **kind)
{
    return compare_outputs(m, ref, ort, NULL, msg, msg_size, kind);
}

/* A Resize whose coordinate transform reads length_resized, preferring one given 'scales' (no 'sizes' input),
 * or NULL. */
static const pc_node *resize_reading_length(const pc_graph *g)
{
    const pc_node *found = NULL;
    for (const pc_node *n = g->first; n; n = n->next) {
        if (strcmp(n->op_type, "Resize") != 0 || n->domain[0] != '\0') continue;
        const char *c = pc_node_attr_string(n, "coordinate_transformation_mode", "half_pixel");
        if (strcmp(c, "align_corners") != 0 && strcmp(c, "pytorch_half_pixel") != 0 &&
            strcmp(c, "tf_crop_and_resize") != 0)
            continue;
        if (n->n_inputs < 4 || !n->inputs[3]) return n;
        if (!found) found = n;
    }
    return found;
}

static bool graph_quantizes_output(const pc_graph *g)
{
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        const pc_node *p = g->outputs[i]->producer;
        if (p && is_quantize_linear(p)) return true;
    }
    return false;
}

pc_prop_outcome pc_ort_explain(const pc_model *m, uint32_t n_inputs, pc_data *const *inputs,
                               const pc_ort_result *ort, uint32_t *ref_runs, char *msg, size_t msg_size,
                               const char **kind)
{
    const pc_graph *g = m->graph;
    const pc_node *resize = resize_reading_length(g);
    bool quant = graph_quantizes_output(g), has_resize = false;
    for (const pc_node *n = g->first; n && !has_resize; n = n->next)
        has_resize = strcmp(n->op_type, "Resize") == 0 && n->domain[0] == '\0';
    char first[1024];
    snprintf(first, sizeof first, "%s", msg);
    /* The reference runs, in order, until one agrees with ORT: ONNX semantics (for the tie allowance, which
     * every run applies); ONNX semantics with Resize's coordinates in float32 as ORT computes them (rounding:
     * PASS); ORT's reading of length_resized, exact and in float32 (ORT's deviation). */
    static const struct {
        bool ort_lengths, float32;
    } runs[] = {{false, false}, {false, true}, {true, false}, {true, true}};
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        if ((k == 0 && !quant) || (k == 1 && !has_resize) || (k >= 2 && !resize)) continue;
        quant_capture q = {g, NULL, 0};
        if (quant && !(q.sites = calloc(g->n_outputs ? g->n_outputs : 1, sizeof *q.sites))) break;
        pc_ref_options opts = {.resize_ort_lengths = runs[k].ort_lengths,
                               .resize_float32_coordinates = runs[k].float32,
                               .on_node = quant ? capture_quant : NULL,
                               .on_node_ctx = &q};
        pc_data **outs = NULL;
        pc_error err;
        pc_status st = pc_ref_run_with_options(m, &opts, n_inputs, inputs, &outs, &err);
        if (ref_runs) ++*ref_runs;
        char again[1024];
        const char *again_kind = NULL;
        pc_prop_outcome o =
            st == PC_OK ? compare_outputs(m, outs, ort, &q, again, sizeof again, &again_kind) : PC_PROP_FAIL;
        pc_ref_free_outputs(m, outs);
        quant_capture_free(&q);
        /* name the output the tie allowance left unexplained */
        if (k == 0 && o == PC_PROP_FAIL && again_kind) {
            snprintf(msg, msg_size, "%s", again);
            snprintf(first, sizeof first, "%s", again);
        }
        if (o != PC_PROP_PASS) continue;
        if (!runs[k].ort_lengths) return PC_PROP_PASS;
        *kind = "ort-resize-length";
        snprintf(
            msg, msg_size,
            "ONNX Runtime deviates from the ONNX Resize spec (known; docs/oracle.md): Resize '%s' (%s) is "
            "given 'scales'; ONNX takes length_resized = scale * length_original (Resize-11+ "
            "coordinate_transformation_mode; backend test resize_downsample_scales_linear_align_corners "
            "expects 3.142857; onnx/onnx#2462), ORT the floored output length (it excludes that test: "
            "\"results mismatch with onnx tests\"), and the reference run ORT's way%s agrees with ORT on "
            "every "
            "output. ONNX semantics: %s",
            resize->name ? resize->name : "",
            pc_node_attr_string(resize, "coordinate_transformation_mode", ""),
            runs[k].float32 ? " (float32 coordinates)" : "", first);
        return PC_PROP_SKIP;
    }
    return PC_PROP_FAIL;
}
