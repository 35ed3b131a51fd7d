/* Crash isolation: a case is generated and checked in a forked child with a deadline, so a crash, a sanitizer
 * abort or a hang becomes a reported failure ("crash" / "timeout") instead of a dead suite.
 *
 * The child streams frames to the parent through a pipe (proc.h): its choice sequence as soon as generation
 * returns (so a case that crashes later can still be shrunk and saved), the name of each pass it finished,
 * then its result. Both ends are the same binary, so numbers and the fixed-size result structs travel in host
 * layout; a stream cut by a crash yields the frames that came through completely.
 *
 * pc_case_check_isolated also streams each judgment when the caller asked for them (on_outcome, passcheck
 * check's table) and replays the pass and judgment frames to the caller's callbacks as they arrive.
 *
 * Test hooks (Debug and sanitizer builds only, where PC_DEBUG_CHECKS is defined): PC_SUITE_TEST_CRASH=I makes
 * the child of suite case I (a comma-separated list works too) die of SIGSEGV right after it sent its
 * choices; PC_SUITE_TEST_HANG=I makes it sleep until killed; PC_CHECK_TEST_CRASH=PASS makes any child (a
 * suite case, a replay, an isolated check) die right after it reported pass PASS finished.
 * tests/unit/test_runner_suite.c, tests/cli/run_suite_cli.sh and tests/cli/run_check_cli.sh use them; release
 * builds ignore them. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "properties/shrink/shrink_internal.h"
#include "properties/runner/proc.h"
#include "properties/runner/suite.h"
#include "properties/runner/util.h"
#include "properties/runner/wire.h"

/* A child's stream is a few hundred bytes plus two serialized graphs when it failed; far more is a runaway.
 */
enum { MAX_STREAM_BYTES = 256 << 20 };
enum {
    TAG_CHOICES = 0x31484343 /* "CCH1" */,
    TAG_PASS = 0x31535350 /* "PSS1" */,
    TAG_RESULT = 0x31534552,
    TAG_OUTCOME = 0x3154554f /* "OUT1": one judgment, for a caller's on_outcome (pc_case_check_isolated) */
};

/* -- child side: frames are built in memory (wire.h) and written whole (proc.h) */

void pc_iso_send_choices(int fd, const uint32_t *values, size_t n)
{
    pc_wbuf b = {0};
    size_t bytes;
    if (!pc_size_mul(n, sizeof *values, &bytes)) return;
    pc_wb_blob(&b, values, bytes);
    pc_proc_send(fd, TAG_CHOICES, &b);
}

void pc_iso_send_pass(int fd, const char *pass)
{
    pc_wbuf b = {0};
    pc_wb_blob(&b, pass, strlen(pass));
    pc_proc_send(fd, TAG_PASS, &b);
#ifdef PC_DEBUG_CHECKS
    const char *crash = getenv("PC_CHECK_TEST_CRASH"); /* test hook (see the top of this file) */
    if (crash && strcmp(crash, pass) == 0) pc_proc_test_crash();
#endif
}

void pc_iso_send_result(int fd, pc_status status, bool gen_failed, const char *message,
                        const pc_check_result *res)
{
    static const pc_check_result none;
    if (!res) res = &none;
    pc_wbuf b = {0};
    pc_wb_u32(&b, (uint32_t)status);
    pc_wb_u32(&b, gen_failed);
    pc_wb_blob(&b, message ? message : "", message ? strlen(message) : 0);
    pc_wb_put(&b, res->counts, sizeof res->counts);
    pc_wb_u32(&b, res->failed);
    pc_wb_put(&b, &res->failure, sizeof res->failure);
    pc_wb_put(&b, &res->stats, sizeof res->stats);
    pc_wb_put(&b, &res->rewrites, sizeof res->rewrites);
    pc_wb_blob(&b, res->before_bytes, res->before_bytes ? res->before_size : 0);
    pc_wb_blob(&b, res->after_bytes, res->after_bytes ? res->after_size : 0);
    pc_proc_send(fd, TAG_RESULT, &b);
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
    if (env_lists_index("PC_SUITE_TEST_CRASH", index)) pc_proc_test_crash();
    if (env_lists_index("PC_SUITE_TEST_HANG", index)) pc_proc_test_hang();
}
#endif

/* The last pass finished goes to the parent before the next one starts. */
void pc_iso_on_pass(void *ctx, const char *pass)
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
        cc.on_pass = pc_iso_on_pass;
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
pc_status pc_iso_start(pc_proc *job, pc_iso_child_fn fn, void *ctx, double timeout, pc_error *err)
{
    switch (pc_proc_start(job, fn, ctx, timeout, MAX_STREAM_BYTES, 0)) {
    case PC_PROC_STARTED:
        return PC_OK;
    case PC_PROC_NO_CHANNEL:
        return pc_error_set(err, PC_ERR_INTERNAL, "cannot create a pipe for a case: %s", strerror(errno));
    case PC_PROC_NO_FORK:
        break;
    }
    return pc_error_set(err, PC_ERR_INTERNAL, "cannot fork a case: %s", strerror(errno));
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

static bool decode_result(pc_rbuf *b, pc_iso_outcome *out)
{
    pc_check_result *r = &out->res;
    uint32_t st = pc_rb_u32(b);
    out->status = st < PC_STATUS_COUNT ? (pc_status)st : PC_ERR_INTERNAL;
    out->gen_failed = pc_rb_u32(b) != 0;
    pc_rb_str_into(b, out->message, sizeof out->message);
    pc_rb_get(b, r->counts, sizeof r->counts);
    r->failed = pc_rb_u32(b) != 0;
    pc_rb_get(b, &r->failure, sizeof r->failure);
    /* the strings came from another process: never trust their termination */
    r->failure.property[sizeof r->failure.property - 1] = '\0';
    r->failure.pass[sizeof r->failure.pass - 1] = '\0';
    r->failure.kind[sizeof r->failure.kind - 1] = '\0';
    r->failure.message[sizeof r->failure.message - 1] = '\0';
    pc_rb_get(b, &r->stats, sizeof r->stats);
    pc_rb_get(b, &r->rewrites, sizeof r->rewrites);
    size_t n;
    const uint8_t *before = pc_rb_blob(b, &n);
    if (before && n && !(r->before_bytes = dup_bytes(before, n))) b->bad = true;
    r->before_size = r->before_bytes ? n : 0;
    const uint8_t *after = pc_rb_blob(b, &n);
    if (after && n && !(r->after_bytes = dup_bytes(after, n))) b->bad = true;
    r->after_size = r->after_bytes ? n : 0;
    return !b->bad && b->pos == b->len;
}

static void decode_stream(const uint8_t *data, size_t len, pc_iso_outcome *out)
{
    size_t pos = 0, blen;
    uint32_t tag;
    pc_rbuf b;
    const uint8_t *blob;
    while (pc_frame_next(data, len, &pos, &tag, &b)) {
        switch (tag) {
        case TAG_CHOICES:
            blob = pc_rb_blob(&b, &blen);
            if (!b.bad && blen % sizeof(uint32_t) == 0 && !out->have_choices) {
                out->choices = blen ? malloc(blen) : NULL;
                if (blen && !out->choices) break;
                if (blen) memcpy(out->choices, blob, blen);
                out->n_choices = blen / sizeof(uint32_t);
                out->have_choices = true;
            }
            break;
        case TAG_PASS:
            blob = pc_rb_blob(&b, &blen);
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

/* Turns what a child did into the outcome: its decoded stream in *out, then a crash, a non-zero exit, a
 * timeout or a missing result replaces the result with an isolation failure. `ex` is how the child ended
 * (exit 0 for a worker that finished the request and lives on). */
static void classify_outcome(pc_iso_outcome *out, pc_proc_exit ex, double timeout, size_t received)
{
    const char *where = out->have_choices ? (out->last_pass[0] ? out->last_pass : "(before the first pass)")
                                          : "(during generation)";
    char was[96] = "";
    if (out->have_result)
        snprintf(was, sizeof was, " after reporting %s", out->res.failed ? "a failure" : "its result");
    if (ex.end == PC_PROC_TIMED_OUT) {
        set_isolation_failure(out, "timeout", "",
                              "no result after %g s (child killed); last pass finished: %s", timeout, where);
    } else if (ex.end == PC_PROC_OVERSIZED) {
        set_isolation_failure(out, "crash", "oversized",
                              "the child sent more than %d bytes (child killed); last "
                              "pass finished: %s",
                              MAX_STREAM_BYTES, where);
    } else if (ex.end == PC_PROC_SIGNALED) {
        int sig = ex.code;
        const char *abbrev = signal_abbrev(sig);
        char kind[32];
        if (abbrev)
            snprintf(kind, sizeof kind, "%s", abbrev);
        else
            snprintf(kind, sizeof kind, "signal-%d", sig);
        set_isolation_failure(out, "crash", kind, "child killed by signal %d (%s)%s; last pass finished: %s",
                              sig, strsignal(sig), was, where);
    } else if (ex.code != 0 && !(out->have_result && out->res.failed)) {
        /* a sanitizer report ends the child with a non-zero status, possibly after its result (a leak at
         * exit); a property failure already reported is the more specific of the two, so it stands */
        char kind[32];
        snprintf(kind, sizeof kind, "exit-%d", ex.code);
        set_isolation_failure(out, "crash", kind,
                              "child exited with status %d%s (a sanitizer report? see its "
                              "stderr); last pass finished: %s",
                              ex.code, was, where);
    } else if (!out->have_result) {
        set_isolation_failure(out, "crash", "no-result",
                              "the child exited without a complete result (%zu bytes "
                              "received); last pass finished: %s",
                              received, where);
    }
}

void pc_iso_finish(pc_proc *job, pc_iso_outcome *out)
{
    memset(out, 0, sizeof *out);
    pc_proc_exit ex = pc_proc_finish(job);
    decode_stream(job->data, job->len, out);
    classify_outcome(out, ex, job->timeout, job->len);
    pc_proc_free(job);
    memset(job, 0, sizeof *job);
    job->fd = -1;
}

void pc_iso_outcome_free(pc_iso_outcome *o)
{
    free(o->choices);
    pc_check_result_free(&o->res);
    memset(o, 0, sizeof *o);
}

/* ---------------------------------------------------------------------------------------------------------------
 * pc_case_check_isolated: one forked child per check.
 */
typedef struct check_ctx {
    const pc_case *kase;
    const pc_check_config *cc;
    pc_iso_check_fn check;
} check_ctx;

/* pc_check_config.on_outcome in a child: each judgment goes to the parent as it is made. */
static void send_outcome(void *ctx, const pc_check_outcome *o)
{
    pc_wbuf b = {0};
    pc_wb_str(&b, o->pass ? o->pass : "");
    pc_wb_u32(&b, o->provider != NULL);
    pc_wb_str(&b, o->provider ? o->provider : "");
    pc_wb_str(&b, o->property ? o->property->name : "");
    pc_wb_u32(&b, (uint32_t)o->outcome);
    pc_wb_str(&b, o->kind ? o->kind : "");
    pc_wb_str(&b, o->message ? o->message : "");
    pc_wb_f64(&b, o->seconds);
    pc_proc_send(*(const int *)ctx, TAG_OUTCOME, &b);
}

/* The child's side of one check, in a forked child or in the worker: the same chunks either way. */
static void check_one(int fd, const pc_case *c, const pc_check_config *base, pc_iso_check_fn check)
{
    pc_check_result res;
    memset(&res, 0, sizeof res);
    pc_error err;
    pc_error_clear(&err);
    pc_iso_send_choices(fd, NULL, 0); /* "generation" is the caller's: mark it done */
    pc_check_config cc = *base;
    cc.on_pass = pc_iso_on_pass;
    cc.on_pass_ctx = &fd;
    if (base->on_outcome) {
        cc.on_outcome = send_outcome;
        cc.on_outcome_ctx = &fd;
    }
    pc_status st = check(c, &cc, &res, &err);
    pc_iso_send_result(fd, st, false, st == PC_OK ? "" : err.message, &res);
    pc_check_result_free(&res);
}

static void check_child(void *vctx, int fd)
{
    const check_ctx *ctx = vctx;
    check_one(fd, ctx->kase, ctx->cc, ctx->check);
}

/* What a finished isolated check hands back: the result, or the check's own error status. */
static pc_status outcome_to_result(pc_iso_outcome *out, pc_check_result *res, pc_error *err)
{
    if (out->status != PC_OK) {
        pc_status st = pc_error_set(err, out->status, "%s", out->message);
        pc_iso_outcome_free(out);
        return st;
    }
    *res = out->res;
    memset(&out->res, 0, sizeof out->res);
    pc_iso_outcome_free(out);
    return PC_OK;
}

/* Hands the child's pass and outcome frames from *pos on to the caller's on_pass/on_outcome, in the order the
 * child made them; *pos moves past the last complete frame. A frame that does not decode is dropped (the
 * stream was cut: the crash is reported by the result). */
static void replay_frames(const pc_proc *job, size_t *pos, const pc_check_config *cc)
{
    uint32_t tag;
    pc_rbuf b;
    while (pc_frame_next(job->data, job->len, pos, &tag, &b)) {
        if (tag == TAG_PASS && cc->on_pass) {
            char pass[sizeof((pc_failure *)0)->pass];
            pc_rb_str_into(&b, pass, sizeof pass);
            if (!b.bad) cc->on_pass(cc->on_pass_ctx, pass);
        } else if (tag == TAG_OUTCOME && cc->on_outcome) {
            char pass[64], provider[64], property[32], kind[64], message[sizeof((pc_failure *)0)->message];
            pc_rb_str_into(&b, pass, sizeof pass);
            bool has_provider = pc_rb_u32(&b) != 0;
            pc_rb_str_into(&b, provider, sizeof provider);
            pc_rb_str_into(&b, property, sizeof property);
            uint32_t outcome = pc_rb_u32(&b);
            pc_rb_str_into(&b, kind, sizeof kind);
            pc_rb_str_into(&b, message, sizeof message);
            double seconds = pc_rb_f64(&b);
            const pc_property *prop = property[0] ? pc_property_find(property) : NULL;
            if (b.bad || outcome >= PC_PROP_OUTCOME_COUNT || (property[0] && !prop)) continue;
            pc_check_outcome o = {
                pass, has_provider ? provider : NULL, prop, (pc_prop_outcome)outcome, kind, message, seconds};
            cc->on_outcome(cc->on_outcome_ctx, &o);
        }
    }
}

static pc_status check_forked(const pc_case *c, const pc_check_config *cc, pc_iso_check_fn check,
                              double timeout, pc_check_result *res, pc_error *err)
{
    memset(res, 0, sizeof *res);
    if (!(timeout > 0))
        return pc_error_set(err, PC_ERR_USAGE, "isolated check: timeout %g s is not positive", timeout);
    check_ctx ctx = {c, cc, check ? check : pc_case_check};
    pc_proc job;
    pc_status st = pc_iso_start(&job, check_child, &ctx, timeout, err);
    if (st != PC_OK) return st;
    /* the caller's callbacks run here, in the parent, as the frames arrive (the pass times stay live) */
    size_t replayed = 0;
    while (!pc_proc_poll(&job, 1, 1000))
        replay_frames(&job, &replayed, cc);
    replay_frames(&job, &replayed, cc);
    pc_iso_outcome out;
    pc_iso_finish(&job, &out);
    return outcome_to_result(&out, res, err);
}

pc_status pc_case_check_isolated(const pc_case *c, const pc_check_config *cc, double timeout_seconds,
                                 pc_check_result *res, pc_error *err)
{
    return check_forked(c, cc, pc_case_check, timeout_seconds, res, err);
}

/* ---------------------------------------------------------------------------------------------------------------
 * The candidate worker (shrink_internal.h): one forked process checks case after case.
 *
 * A request is (u64 length, payload): the model as pc_model_save_bytes gives it, the inputs, the EP text and
 * list, the layer assignment and the family name. The worker answers with exactly the chunks a forked child
 * sends (choices marker, passes, result) and then an END chunk, once the case and its result are freed — so a
 * crash while freeing is still this candidate's. A worker that cannot rebuild the case exactly answers
 * FALLBACK and the parent forks a child for that one candidate instead.
 *
 * Why the rebuilt case checks the same: pc_case_check's first step is to save the case's model and load those
 * bytes (the working copy is a replica of that load); no property reads kase->model. So a forked child's
 * check works on load(A), A the bytes sent, and the worker's on load(save(load(A))): loads_the_same proves
 * those equal or the answer is FALLBACK. Inputs travel as raw tensor bytes.
 */
enum { TAG_END = 0x31444e45 /* "END1" */, TAG_FALLBACK = 0x314b4246 /* "FBK1" */ };
enum { MAX_DATA_DEPTH = 16 }; /* sequences of sequences: deeper is not a value any generator or edit makes */

struct pc_iso_worker {
    const pc_check_config *cc; /* the worker's copy of *cc is the one the parent had when it forked */
    pc_iso_check_fn check;
    double timeout;
    pc_proc proc; /* proc.pid 0: not running */
    uint32_t forks;
    uint32_t requests; /* checks the worker answered (FALLBACK included) */
    uint32_t fallbacks;
};

/* -- the request: encoding (parent) and decoding (worker) */

static void wb_data(pc_wbuf *b, const pc_data *d, unsigned depth)
{
    if (depth > MAX_DATA_DEPTH) {
        b->failed = true;
        return;
    }
    pc_wb_u32(b, d != NULL);
    if (!d) return;
    pc_wb_u32(b, (uint32_t)d->kind);
    pc_wb_u32(b, (uint32_t)d->dtype);
    if (d->kind == PC_TYPE_TENSOR) {
        pc_wb_u32(b, (uint32_t)d->rank);
        pc_wb_put(b, d->dims, (size_t)(d->rank > 0 ? d->rank : 0) * sizeof *d->dims);
        if (d->dtype == PC_DTYPE_STRING) {
            const pc_bytes *s = d->data;
            for (uint64_t i = 0; i < d->n_elements; i++)
                pc_wb_blob(b, s[i].data, s[i].len);
        } else {
            pc_wb_blob(b, d->data, d->n_bytes);
        }
        return;
    }
    pc_wb_u32(b, (uint32_t)d->item_kind);
    pc_wb_u32(b, d->n_items);
    for (uint32_t i = 0; i < d->n_items; i++)
        wb_data(b, d->items[i], depth + 1);
}

static void wb_string(pc_wbuf *b, const char *s)
{
    pc_wb_u32(b, s != NULL);
    if (s) pc_wb_blob(b, s, strlen(s));
}

/* The request for case c; false when it cannot be encoded (the candidate is then forked). */
static bool encode_case(const pc_case *c, pc_wbuf *b)
{
    uint8_t *bytes = NULL;
    size_t size = 0;
    pc_error serr;
    if (!c->model || pc_model_save_bytes(c->model, &bytes, &size, &serr) != PC_OK) return false;
    pc_wb_u64(b, 0); /* the length, filled in below */
    pc_wb_blob(b, bytes, size);
    free(bytes);
    pc_wb_u32(b, c->n_inputs);
    for (uint32_t i = 0; i < c->n_inputs; i++)
        wb_data(b, c->inputs[i], 0);
    wb_string(b, c->ep_text);
    wb_string(b, c->ep_list);
    wb_string(b, c->layer_assignment);
    wb_string(b, c->family);
    if (b->failed) return false;
    uint64_t len = b->len - sizeof len;
    memcpy(b->data, &len, sizeof len);
    return true;
}

static pc_data *rb_data(pc_rbuf *b, unsigned depth)
{
    if (depth > MAX_DATA_DEPTH || !pc_rb_u32(b) || b->bad) return NULL;
    pc_error err;
    pc_type_kind kind = (pc_type_kind)pc_rb_u32(b);
    pc_dtype dtype = (pc_dtype)pc_rb_u32(b);
    if (kind == PC_TYPE_TENSOR) {
        uint32_t rank = pc_rb_u32(b);
        int64_t dims[PC_MAX_RANK > 0 ? PC_MAX_RANK : 1];
        if (b->bad || rank > PC_MAX_RANK) {
            b->bad = true;
            return NULL;
        }
        pc_rb_get(b, dims, rank * sizeof dims[0]);
        pc_data *d = b->bad ? NULL : pc_data_new_tensor(dtype, (int32_t)rank, dims, &err);
        if (!d) {
            b->bad = true;
            return NULL;
        }
        size_t n;
        if (dtype == PC_DTYPE_STRING) {
            pc_bytes *s = d->data;
            for (uint64_t i = 0; i < d->n_elements && !b->bad; i++) {
                const uint8_t *p = pc_rb_blob(b, &n);
                if (n && !(s[i].data = dup_bytes(p, n))) b->bad = true;
                s[i].len = s[i].data ? n : 0;
            }
        } else {
            const uint8_t *p = pc_rb_blob(b, &n);
            if (n != d->n_bytes)
                b->bad = true;
            else if (n)
                memcpy(d->data, p, n);
        }
        if (b->bad) {
            pc_data_unref(d);
            return NULL;
        }
        return d;
    }
    pc_type_kind item_kind = (pc_type_kind)pc_rb_u32(b);
    uint32_t n = pc_rb_u32(b);
    if (b->bad || (kind != PC_TYPE_SEQUENCE && kind != PC_TYPE_OPTIONAL) ||
        (kind == PC_TYPE_OPTIONAL && n > 1) || n > b->len - b->pos) {
        b->bad = true;
        return NULL;
    }
    pc_data **items = n ? calloc(n, sizeof *items) : NULL;
    if (n && !items) b->bad = true;
    for (uint32_t i = 0; i < n && !b->bad; i++)
        if (!(items[i] = rb_data(b, depth + 1))) b->bad = true;
    pc_data *d = NULL;
    if (!b->bad) {
        d = kind == PC_TYPE_SEQUENCE ? pc_data_new_sequence(item_kind, dtype, n, items, &err)
                                     : pc_data_new_optional(item_kind, dtype, n ? items[0] : NULL, &err);
        if (!d) b->bad = true;
    }
    for (uint32_t i = 0; i < n && items; i++)
        pc_data_unref(items[i]); /* the container took its own references */
    free(items);
    return d;
}

static char *rb_string(pc_rbuf *b)
{
    if (!pc_rb_u32(b) || b->bad) return NULL;
    return pc_rb_str_dup(b);
}

/* Whether checking m (loaded from bytes a) starts from the model a forked child's check starts from. That
 * check loads a; this one will load b = save(m). b == a settles it. Otherwise (the loader normalizes: a graph
 * without a name loads with name "", which the saver then writes) the two loads must be equal models that
 * save alike. */
static bool loads_the_same(const pc_model *m, const uint8_t *a, size_t a_size, const pc_load_options *lo)
{
    pc_error err;
    uint8_t *b = NULL, *c = NULL;
    size_t b_size = 0, c_size = 0;
    if (pc_model_save_bytes(m, &b, &b_size, &err) != PC_OK) return false;
    bool same = b_size == a_size && memcmp(a, b, a_size) == 0;
    pc_model *m2 = NULL;
    if (!same && pc_model_load_bytes(b, b_size, lo, &m2, &err) == PC_OK)
        same = pc_model_equal(m, m2, NULL, 0) && pc_model_save_bytes(m2, &c, &c_size, &err) == PC_OK &&
               c_size == b_size && memcmp(b, c, b_size) == 0;
    pc_model_free(m2);
    free(b);
    free(c);
    return same;
}

/* Rebuilds the case from a request; false when it cannot be rebuilt exactly (see the section comment). */
static bool decode_case(const uint8_t *data, size_t len, pc_case *c, char **family_out)
{
    memset(c, 0, sizeof *c);
    *family_out = NULL;
    pc_rbuf b = {data, len, 0, false};
    size_t size;
    const uint8_t *bytes = pc_rb_blob(&b, &size);
    if (b.bad) return false;
    pc_load_options lo;
    pc_load_options_default(&lo);
    lo.skip_verify = true; /* the check loads the bytes again, with verification, as in a forked child */
    pc_error err;
    if (pc_model_load_bytes(bytes, size, &lo, &c->model, &err) != PC_OK) return false;
    bool same = loads_the_same(c->model, bytes, size, &lo);
    uint32_t n_inputs = pc_rb_u32(&b);
    if (!b.bad && n_inputs > b.len - b.pos) b.bad = true; /* every input takes at least one byte */
    if (same && !b.bad && n_inputs) {
        c->inputs = calloc(n_inputs, sizeof *c->inputs);
        if (!c->inputs) b.bad = true;
        for (uint32_t i = 0; i < n_inputs && !b.bad; i++) {
            c->inputs[i] = rb_data(&b, 0);
            c->n_inputs = i + 1;
        }
    }
    c->ep_text = rb_string(&b);
    c->ep_list = rb_string(&b);
    c->layer_assignment = rb_string(&b);
    /* a family's name is a static string; a name outside the table (a test's) lives in *family_out */
    char *family = rb_string(&b);
    const pc_gen_family *f = family ? pc_gen_family_find(family) : NULL;
    c->family = f ? f->name : family;
    bool ok = same && !b.bad && b.pos == b.len;
    if (!ok || f) {
        free(family);
        family = NULL;
    }
    *family_out = family;
    if (!ok) pc_case_free(c);
    return ok;
}

/* -- the worker process */

static void send_empty_chunk(int fd, uint32_t tag)
{
    pc_wbuf b = {0};
    pc_proc_send(fd, tag, &b);
}

/* Answers requests until the parent closes its end, then returns (the caller exits normally, so a sanitizer
 * build's leak check covers every case this worker checked). */
static void worker_loop(void *ctx, int fd)
{
    const pc_iso_worker *w = ctx;
    for (;;) {
        uint64_t len;
        if (!pc_read_all(fd, &len, sizeof len)) return;
        uint8_t *req = len <= SIZE_MAX ? malloc(len ? (size_t)len : 1) : NULL;
        if (!req) return; /* the parent sees the worker end without a result: a reported failure */
        if (!pc_read_all(fd, req, (size_t)len)) {
            free(req);
            return;
        }
        pc_case c;
        char *family;
        bool ok = decode_case(req, (size_t)len, &c, &family);
        free(req);
        if (ok) {
            check_one(fd, &c, w->cc, w->check);
            pc_case_free(&c);
            free(family);
        } else {
            send_empty_chunk(fd, TAG_FALLBACK);
        }
        send_empty_chunk(fd, TAG_END);
    }
}

/* -- the parent's side */

pc_status pc_iso_worker_create(const pc_check_config *cc, pc_iso_check_fn check, double timeout_seconds,
                               pc_iso_worker **out, pc_error *err)
{
    *out = NULL;
    if (!(timeout_seconds > 0))
        return pc_error_set(err, PC_ERR_USAGE, "isolated check: timeout %g s is not positive",
                            timeout_seconds);
    pc_iso_worker *w = calloc(1, sizeof *w);
    if (!w) return pc_error_set(err, PC_ERR_NOMEM, "out of memory creating a check worker");
    w->cc = cc;
    w->check = check ? check : pc_case_check;
    w->timeout = timeout_seconds;
    w->proc.fd = -1;
    *out = w;
    return PC_OK;
}

static pc_status worker_fork(pc_iso_worker *w, pc_error *err)
{
    /* a socket pair rather than pipes: the parent sends requests too (proc.h, PC_PROC_DUPLEX) */
    switch (pc_proc_start(&w->proc, worker_loop, w, w->timeout, MAX_STREAM_BYTES, PC_PROC_DUPLEX)) {
    case PC_PROC_STARTED:
        w->forks++;
        return PC_OK;
    case PC_PROC_NO_CHANNEL:
        return pc_error_set(err, PC_ERR_INTERNAL, "cannot create a socket pair for the check worker: %s",
                            strerror(errno));
    case PC_PROC_NO_FORK:
        break;
    }
    return pc_error_set(err, PC_ERR_INTERNAL, "cannot fork the check worker: %s", strerror(errno));
}

/* The offset just past the END frame in s[0, len), or 0 when it has not arrived yet; *fallback when a
 * FALLBACK frame came before it. */
static size_t find_end(const uint8_t *s, size_t len, bool *fallback)
{
    size_t pos = 0;
    uint32_t tag;
    pc_rbuf body;
    while (pc_frame_next(s, len, &pos, &tag, &body)) {
        if (tag == TAG_FALLBACK) *fallback = true;
        if (tag == TAG_END) return pos;
    }
    return 0;
}

pc_status pc_iso_worker_check(pc_iso_worker *w, const pc_case *c, pc_check_result *res, pc_error *err)
{
    memset(res, 0, sizeof *res);
    pc_wbuf req = {0};
    if (!encode_case(c, &req)) {
        free(req.data);
        w->fallbacks++;
        return check_forked(c, w->cc, w->check, w->timeout, res, err);
    }
    if (!w->proc.pid) {
        pc_status st = worker_fork(w, err);
        if (st != PC_OK) {
            free(req.data);
            return st;
        }
    }
    /* the request's stream, deadline and flags, as for a forked child */
    pc_proc *job = &w->proc;
    pc_proc_rewind(job);
    size_t sent = 0, end = 0;
    bool fallback = false;
    while (!end && !pc_proc_done(job)) {
        struct pollfd pfd = {job->fd, (short)(POLLIN | (sent < req.len ? POLLOUT : 0)), 0};
        double wait = job->deadline - pc_now_seconds();
        int ms = wait <= 0 ? 0 : (int)(wait * 1000) + 1;
        int got = poll(&pfd, 1, ms > 1000 ? 1000 : ms);
        if (got > 0 && (pfd.revents & POLLOUT) && sent < req.len) {
            ssize_t k = send(job->fd, req.data + sent, req.len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (k > 0) sent += (size_t)k;
            /* an error here means the worker is gone: its end of stream comes through POLLIN/POLLHUP */
        }
        if (got > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR))) {
            pc_proc_read(job);
            end = find_end(job->data, job->len, &fallback);
        }
        if (!end && pc_now_seconds() >= job->deadline) job->timed_out = true;
    }
    free(req.data);
    w->requests += end != 0;
    pc_iso_outcome out;
    memset(&out, 0, sizeof out);
    if (end) {
        /* the worker finished the request and lives on: as a child that exited 0 */
        decode_stream(job->data, end, &out);
        if (fallback) {
            pc_iso_outcome_free(&out);
            w->fallbacks++;
            return check_forked(c, w->cc, w->check, w->timeout, res, err);
        }
        classify_outcome(&out, (pc_proc_exit){PC_PROC_EXITED, 0, 0}, w->timeout, end);
        return outcome_to_result(&out, res, err);
    }
    /* it died, overran its deadline or flooded the pipe: as a forked child that did the same; the next check
     * starts a new worker */
    pc_proc_exit ex = pc_proc_finish(job);
    decode_stream(job->data, job->len, &out);
    classify_outcome(&out, ex, w->timeout, job->len);
    pc_proc_free(job);
    return outcome_to_result(&out, res, err);
}

int pc_iso_worker_destroy(pc_iso_worker *w, pc_iso_worker_stats *stats)
{
    if (!w) return 0;
    int status = 0;
    if (w->proc.pid) {
        /* end of requests: the worker returns from its loop and exits normally */
        close(w->proc.fd);
        w->proc.fd = -1;
        pc_proc_rewind(&w->proc);
        status = pc_proc_finish(&w->proc).status;
    }
    pc_proc_free(&w->proc);
    if (stats) {
        stats->forks = w->forks;
        stats->requests = w->requests;
        stats->fallbacks = w->fallbacks;
    }
    free(w);
    return status;
}
