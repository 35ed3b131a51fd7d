/* passcheck conformance DIR...: runs the ONNX backend test layout (model.onnx + test_data_set_N/{input,output}_K.pb)
 * through an executor and compares its outputs with the recorded ones (pc_data_compare, rtol 1e-3, atol 1e-7).
 *
 * Every case runs in a forked child with a deadline, so a crash, a sanitizer abort or a hang is reported as that
 * case's run-error and the run goes on. The child streams two records to the parent through a pipe: the model's op
 * list as soon as the model is loaded (so a case that crashes later still counts in the per-op statistics), then
 * the result. Cases run one after another, in a fixed order, so the output is deterministic.
 *
 * Test hooks (only read when set; used by tests/conformance/run_crash_hang.sh): PC_CONFORMANCE_TEST_CRASH=<case>
 * makes that case's child die of SIGSEGV, PC_CONFORMANCE_TEST_HANG=<case> makes it sleep forever. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tools/cli.h"
#include "reference/reference.h"
#include "properties/runner/wire.h"

#define CMD "conformance"

static const double CONFORMANCE_RTOL = 1e-3, CONFORMANCE_ATOL = 1e-7; /* ONNX backend-test defaults */
static const double DEFAULT_TIMEOUT_SECONDS = 60;
static const double MAX_TIMEOUT_SECONDS = 7 * 24 * 3600;
/* A child's result stream is small (ops, a message, a few numbers per failing output); anything far larger is a
 * runaway child, not a result. */
enum { MAX_RESULT_BYTES = 16 << 20 };
/* Folders and files of one case are numbered; more than this is not backend test data. */
enum { MAX_DATA_INDEX = 100000 };

/* ---------------------------------------------------------------------------------------------------------------
 * Outcomes.
 */
typedef enum outcome {
    OUTCOME_PASSED,
    OUTCOME_DIFFERS,
    OUTCOME_SHAPE,
    OUTCOME_TYPE,
    OUTCOME_LOAD_ERROR,
    OUTCOME_RUN_ERROR,
    OUTCOME_UNSUPPORTED,
    OUTCOME_ERRATUM, /* the recorded outputs are known to be wrong (listed with a reason in an --errata file) */
    OUTCOME_COUNT
} outcome;

static const char *const outcome_names[OUTCOME_COUNT] = {"passed",    "differs",     "shape",  "type", "load-error",
                                                         "run-error", "unsupported", "erratum"};

static bool outcome_is_skip(outcome o)
{
    return o == OUTCOME_UNSUPPORTED || o == OUTCOME_ERRATUM;
}

static bool outcome_is_failure(outcome o)
{
    return o != OUTCOME_PASSED && !outcome_is_skip(o);
}

static bool outcome_parse(const char *s, outcome *out)
{
    for (int i = 0; i < OUTCOME_COUNT; i++)
        if (strcmp(s, outcome_names[i]) == 0) {
            *out = (outcome)i;
            return true;
        }
    return false;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Small containers.
 */
typedef struct str_list {
    char **items;
    size_t n, cap;
} str_list;

static bool str_list_push(str_list *l, const char *s)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 16, bytes;
        if (!pc_size_mul(ncap, sizeof *l->items, &bytes)) return false;
        char **ni = realloc(l->items, bytes);
        if (!ni) return false;
        l->items = ni;
        l->cap = ncap;
    }
    char *copy = strdup(s);
    if (!copy) return false;
    l->items[l->n++] = copy;
    return true;
}

static void str_list_free(str_list *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->items[i]);
    free(l->items);
    memset(l, 0, sizeof *l);
}

static int strcmp_indirect(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "a/b" in a new allocation; NULL when out of memory. */
static char *path_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), len;
    if (!pc_size_add(la, lb, &len) || !pc_size_add(len, 2, &len)) return NULL;
    char *p = malloc(len);
    if (p) snprintf(p, len, "%s/%s", a, b);
    return p;
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Appends to a fixed message buffer; a cut message ends in "...". */
static void msg_append(char *buf, size_t size, const char *fmt, ...) PC_PRINTF(3, 4);

static void msg_append(char *buf, size_t size, const char *fmt, ...)
{
    size_t used = strnlen(buf, size);
    if (used + 1 >= size) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
    if (k >= 0 && (size_t)k >= size - used && size >= 4) memcpy(buf + size - 4, "...", 4);
}

/* ---------------------------------------------------------------------------------------------------------------
 * A case's result, as the child computes it and the parent receives it.
 */
typedef struct output_failure {
    uint32_t data_set;
    uint32_t index;
    char *name;
    pc_compare_result cmp;
} output_failure;

typedef struct case_result {
    outcome outcome;
    char message[1024];
    double seconds;
    str_list ops; /* distinct "Op" / "domain:Op", sorted */
    size_t n_failures;
    output_failure *failures;
} case_result;

static void case_result_free(case_result *r)
{
    str_list_free(&r->ops);
    for (size_t i = 0; i < r->n_failures; i++) free(r->failures[i].name);
    free(r->failures);
    r->failures = NULL;
    r->n_failures = 0;
}

static void set_outcome(case_result *r, outcome o, const char *fmt, ...) PC_PRINTF(3, 4);

static void set_outcome(case_result *r, outcome o, const char *fmt, ...)
{
    r->outcome = o;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
}

static bool add_failure(case_result *r, uint32_t data_set, uint32_t index, const char *name,
                        const pc_compare_result *cmp)
{
    size_t bytes;
    if (!pc_size_mul(r->n_failures + 1, sizeof *r->failures, &bytes)) return false;
    output_failure *nf = realloc(r->failures, bytes);
    if (!nf) return false;
    r->failures = nf;
    output_failure *f = &r->failures[r->n_failures];
    f->data_set = data_set;
    f->index = index;
    f->cmp = *cmp;
    f->name = strdup(name ? name : "");
    if (!f->name) return false;
    r->n_failures++;
    return true;
}

/* ---------------------------------------------------------------------------------------------------------------
 * The child → parent stream: chunks of (u32 tag, u32 length, payload). Both ends are the same binary, so numbers
 * travel in host order. The parser checks every length against what arrived, so a cut stream (a crash mid-write)
 * yields the chunks that came through completely.
 */
enum { CHUNK_OPS = 0x3153504f /* "OPS1" */, CHUNK_RESULT = 0x31534552 /* "RES1" */ };

/* Chunk framing: reserve the header, fill the payload, then patch the length in. */
static size_t chunk_begin(pc_wbuf *b, uint32_t tag)
{
    pc_wb_u32(b, tag);
    size_t at = b->len;
    pc_wb_u32(b, 0);
    return at;
}

static void chunk_end(pc_wbuf *b, size_t at)
{
    if (b->failed) return;
    size_t payload = b->len - at - sizeof(uint32_t);
    if (payload > UINT32_MAX) {
        b->failed = true;
        return;
    }
    uint32_t n = (uint32_t)payload;
    memcpy(b->data + at, &n, sizeof n);
}

static void encode_ops(pc_wbuf *b, const str_list *ops)
{
    size_t at = chunk_begin(b, CHUNK_OPS);
    pc_wb_u32(b, (uint32_t)ops->n);
    for (size_t i = 0; i < ops->n; i++) pc_wb_str(b, ops->items[i]);
    chunk_end(b, at);
}

static void encode_result(pc_wbuf *b, const case_result *r)
{
    size_t at = chunk_begin(b, CHUNK_RESULT);
    pc_wb_u32(b, (uint32_t)r->outcome);
    pc_wb_str(b, r->message);
    pc_wb_u32(b, (uint32_t)r->n_failures);
    for (size_t i = 0; i < r->n_failures; i++) {
        const output_failure *f = &r->failures[i];
        pc_wb_u32(b, f->data_set);
        pc_wb_u32(b, f->index);
        pc_wb_str(b, f->name);
        pc_wb_u32(b, (uint32_t)f->cmp.outcome);
        pc_wb_f64(b, f->cmp.max_abs_error);
        pc_wb_f64(b, f->cmp.worst_excess);
        pc_wb_u64(b, f->cmp.worst_index);
        pc_wb_f64(b, f->cmp.worst_expected);
        pc_wb_f64(b, f->cmp.worst_actual);
        pc_wb_str(b, f->cmp.detail);
    }
    chunk_end(b, at);
}

static bool decode_ops(pc_rbuf *b, case_result *r)
{
    uint32_t n = pc_rb_u32(b);
    for (uint32_t i = 0; i < n && !b->bad; i++) {
        char *s = pc_rb_str_dup(b);
        if (!s) break;
        bool ok = str_list_push(&r->ops, s);
        free(s);
        if (!ok) b->bad = true;
    }
    return !b->bad;
}

static bool decode_result(pc_rbuf *b, case_result *r)
{
    uint32_t o = pc_rb_u32(b);
    if (o >= OUTCOME_COUNT) b->bad = true;
    r->outcome = (outcome)(o < OUTCOME_COUNT ? o : OUTCOME_RUN_ERROR);
    pc_rb_str_into(b, r->message, sizeof r->message);
    uint32_t n = pc_rb_u32(b);
    for (uint32_t i = 0; i < n && !b->bad; i++) {
        pc_compare_result cmp;
        memset(&cmp, 0, sizeof cmp);
        uint32_t data_set = pc_rb_u32(b), index = pc_rb_u32(b);
        char *name = pc_rb_str_dup(b);
        uint32_t co = pc_rb_u32(b);
        cmp.outcome = co <= PC_COMPARE_TYPE ? (pc_compare_outcome)co : PC_COMPARE_TYPE;
        cmp.max_abs_error = pc_rb_f64(b);
        cmp.worst_excess = pc_rb_f64(b);
        cmp.worst_index = pc_rb_u64(b);
        cmp.worst_expected = pc_rb_f64(b);
        cmp.worst_actual = pc_rb_f64(b);
        pc_rb_str_into(b, cmp.detail, sizeof cmp.detail);
        if (!b->bad && !add_failure(r, data_set, index, name, &cmp)) b->bad = true;
        free(name);
    }
    return !b->bad;
}

/* Reads every complete chunk of a child's stream into r. Returns whether a result chunk was among them. */
static bool decode_stream(const uint8_t *data, size_t len, case_result *r)
{
    bool have_result = false;
    size_t pos = 0;
    while (len - pos >= 2 * sizeof(uint32_t)) {
        uint32_t tag, n;
        memcpy(&tag, data + pos, sizeof tag);
        memcpy(&n, data + pos + sizeof tag, sizeof n);
        pos += 2 * sizeof(uint32_t);
        if (n > len - pos) break; /* cut short by a crash */
        pc_rbuf b = {data + pos, n, 0, false};
        if (tag == CHUNK_OPS && !r->ops.n)
            decode_ops(&b, r);
        else if (tag == CHUNK_RESULT)
            have_result = decode_result(&b, r) && b.pos == b.len;
        pos += n;
    }
    return have_result;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Child side: load, run, compare.
 */

/* "Op" for ai.onnx, "domain:Op" otherwise; subgraphs (If/Loop/Scan bodies) included. */
static bool collect_ops(const pc_graph *g, str_list *ops, unsigned depth)
{
    if (depth > 64) return true; /* the loader bounds nesting; this only guards the recursion */
    for (const pc_node *n = g->first; n; n = n->next) {
        const char *domain = n->domain ? n->domain : "";
        bool standard = !domain[0] || strcmp(domain, "ai.onnx") == 0;
        size_t len = strlen(domain) + strlen(n->op_type) + 2;
        char *name = malloc(len);
        if (!name) return false;
        snprintf(name, len, "%s%s%s", standard ? "" : domain, standard ? "" : ":", n->op_type);
        bool seen = false;
        for (size_t i = 0; i < ops->n && !seen; i++) seen = strcmp(ops->items[i], name) == 0;
        bool ok = seen || str_list_push(ops, name);
        free(name);
        if (!ok) return false;
        for (uint32_t a = 0; a < n->n_attrs; a++) {
            const pc_attr *attr = &n->attrs[a];
            if (attr->type == PC_ATTR_GRAPH && attr->g && !collect_ops(attr->g, ops, depth + 1)) return false;
            if (attr->type == PC_ATTR_GRAPHS)
                for (size_t k = 0; k < attr->n; k++)
                    if (attr->graphs[k] && !collect_ops(attr->graphs[k], ops, depth + 1)) return false;
        }
    }
    return true;
}

/* The index N of "<prefix>N<suffix>" (decimal, no sign, no leading '+'), or -1. */
static long numbered_name(const char *name, const char *prefix, const char *suffix)
{
    size_t lp = strlen(prefix), ls = strlen(suffix), ln = strlen(name);
    if (ln <= lp + ls || strncmp(name, prefix, lp) != 0 || strcmp(name + ln - ls, suffix) != 0) return -1;
    long v = 0;
    for (size_t i = lp; i < ln - ls; i++) {
        if (name[i] < '0' || name[i] > '9') return -1;
        v = v * 10 + (name[i] - '0');
        if (v > MAX_DATA_INDEX) return -1;
    }
    return v;
}

typedef struct index_list {
    long *items;
    size_t n;
} index_list;

static int long_cmp(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The indices of every "<prefix>N<suffix>" entry of dir, sorted. Returns false with a message on failure. */
static bool list_numbered(const char *dir, const char *prefix, const char *suffix, index_list *out, char *why,
                          size_t why_size)
{
    out->items = NULL;
    out->n = 0;
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(why, why_size, "cannot open %s: %s", dir, strerror(errno));
        return false;
    }
    size_t cap = 0;
    struct dirent *e;
    bool ok = true;
    while ((e = readdir(d)) != NULL) {
        long v = numbered_name(e->d_name, prefix, suffix);
        if (v < 0) continue;
        if (out->n == cap) {
            size_t bytes;
            cap = cap ? cap * 2 : 8;
            long *ni = pc_size_mul(cap, sizeof *ni, &bytes) ? realloc(out->items, bytes) : NULL;
            if (!ni) {
                snprintf(why, why_size, "out of memory listing %s", dir);
                ok = false;
                break;
            }
            out->items = ni;
        }
        out->items[out->n++] = v;
    }
    closedir(d);
    if (ok && out->n) qsort(out->items, out->n, sizeof *out->items, long_cmp);
    return ok;
}

/* The number of files "<prefix>K.pb", which must be numbered 0..n-1 without gaps or duplicates. */
static bool count_data_files(const char *dir, const char *prefix, uint32_t *count, char *why, size_t why_size)
{
    index_list l;
    if (!list_numbered(dir, prefix, ".pb", &l, why, why_size)) return false;
    bool ok = true;
    for (size_t i = 0; i < l.n && ok; i++)
        if (l.items[i] != (long)i) {
            snprintf(why, why_size, "%s: %s%ld.pb without %s%zu.pb (files must be numbered from 0 without gaps)",
                     dir, prefix, l.items[i], prefix, i);
            ok = false;
        }
    *count = (uint32_t)l.n;
    free(l.items);
    return ok;
}

/* The name inside a TensorProto data file (backend test data names its tensors after the graph inputs), via the
 * loader with a scratch owner. NULL when the file has none or is not a TensorProto. */
static char *tensor_file_name(const char *path)
{
    pc_model *scratch;
    pc_error err;
    if (pc_model_create(&scratch, &err) != PC_OK) return NULL;
    pc_tensor *t = NULL;
    char *name = NULL;
    if (pc_tensor_load_file(scratch, path, &t, &err) == PC_OK && t->name && t->name[0]) name = strdup(t->name);
    pc_model_free(scratch);
    return name;
}

static bool type_is_tensor_or_unknown(const pc_type *t)
{
    return !t || t->kind == PC_TYPE_TENSOR || t->kind == PC_TYPE_NONE;
}

/* ONNX 1.12's backend data stores bfloat16 tensors as uint16 (numpy has no bfloat16): when the graph declares
 * bfloat16 where the file holds uint16, the same bits are read as bfloat16. */
static void read_uint16_as_declared_bfloat16(pc_data *d, const pc_type *declared)
{
    if (d && declared && declared->kind == PC_TYPE_TENSOR && declared->elem == PC_DTYPE_BFLOAT16 &&
        d->kind == PC_TYPE_TENSOR && d->dtype == PC_DTYPE_UINT16)
        d->dtype = PC_DTYPE_BFLOAT16;
}

/* Runs one test_data_set folder. Returns false when the case's outcome is settled (a failure). */
typedef struct data_set_ctx {
    const pc_model *model;
    const char *dir;
    uint32_t set_index;
    bool many_sets; /* name the data set in messages */
    case_result *res;
} data_set_ctx;

static bool run_data_set(const data_set_ctx *c)
{
    const pc_graph *g = c->model->graph;
    case_result *res = c->res;
    char why[512];
    uint32_t n_in = 0, n_out = 0;
    if (!count_data_files(c->dir, "input_", &n_in, why, sizeof why) ||
        !count_data_files(c->dir, "output_", &n_out, why, sizeof why)) {
        set_outcome(res, OUTCOME_LOAD_ERROR, "%s", why);
        return false;
    }
    if (n_out > g->n_outputs) {
        set_outcome(res, OUTCOME_LOAD_ERROR, "%s has %u output files, the graph has %u outputs", c->dir, n_out,
                    g->n_outputs);
        return false;
    }
    /* The graph inputs the files feed, as pc_ref_run maps positional inputs: all graph inputs when the counts
     * agree, else the inputs without an initializer, in order. Their types say how to decode each file. */
    const pc_value **fed_inputs = calloc(g->n_inputs ? g->n_inputs : 1, sizeof *fed_inputs);
    pc_data **inputs = calloc(n_in ? n_in : 1, sizeof *inputs);
    char **names = calloc(n_in ? n_in : 1, sizeof *names);
    pc_data **expected = calloc(n_out ? n_out : 1, sizeof *expected);
    pc_data **by_name = calloc(g->n_inputs ? g->n_inputs : 1, sizeof *by_name);
    pc_data **outputs = NULL;
    bool settled = false;
    if (!fed_inputs || !inputs || !names || !expected || !by_name) {
        set_outcome(res, OUTCOME_RUN_ERROR, "out of memory preparing %s", c->dir);
        settled = true;
        goto done;
    }
    uint32_t n_fed = 0;
    for (uint32_t i = 0; i < g->n_inputs; i++)
        if (n_in == g->n_inputs || !g->inputs[i]->initializer) fed_inputs[n_fed++] = g->inputs[i];

    pc_error err;
    for (uint32_t k = 0; k < n_in && !settled; k++) {
        char file[32];
        snprintf(file, sizeof file, "input_%u.pb", k);
        char *path = path_join(c->dir, file);
        const pc_type *type = k < n_fed ? &fed_inputs[k]->type : NULL;
        pc_error_clear(&err);
        if (!path) {
            set_outcome(res, OUTCOME_RUN_ERROR, "out of memory");
            settled = true;
        } else if (pc_data_load_file(path, type, &inputs[k], &err) != PC_OK) {
            set_outcome(res, OUTCOME_LOAD_ERROR, "[%s] %s", pc_status_name(err.status), err.message);
            settled = true;
        } else if (type_is_tensor_or_unknown(type)) {
            read_uint16_as_declared_bfloat16(inputs[k], type);
            names[k] = tensor_file_name(path);
        }
        free(path);
    }
    for (uint32_t k = 0; k < n_out && !settled; k++) {
        char file[32];
        snprintf(file, sizeof file, "output_%u.pb", k);
        char *path = path_join(c->dir, file);
        pc_error_clear(&err);
        if (!path) {
            set_outcome(res, OUTCOME_RUN_ERROR, "out of memory");
            settled = true;
        } else if (pc_data_load_file(path, &g->outputs[k]->type, &expected[k], &err) != PC_OK) {
            set_outcome(res, OUTCOME_LOAD_ERROR, "[%s] %s", pc_status_name(err.status), err.message);
            settled = true;
        } else {
            read_uint16_as_declared_bfloat16(expected[k], &g->outputs[k]->type);
        }
        free(path);
    }
    if (settled) goto done;

    /* By name when every file names a distinct graph input that takes a tensor and every input left over has an
     * initializer: the full list in graph-input order, initializers feeding the rest. Otherwise positional. */
    bool use_names = n_in > 0;
    for (uint32_t k = 0; k < n_in && use_names; k++) {
        use_names = false;
        if (!names[k]) break;
        for (uint32_t i = 0; i < g->n_inputs; i++)
            if (g->inputs[i]->name && strcmp(g->inputs[i]->name, names[k]) == 0 && !by_name[i] && inputs[k]->kind == PC_TYPE_TENSOR &&
                type_is_tensor_or_unknown(&g->inputs[i]->type)) {
                by_name[i] = pc_data_ref(inputs[k]);
                use_names = true;
                break;
            }
    }
    for (uint32_t i = 0; i < g->n_inputs && use_names; i++) {
        if (by_name[i]) continue;
        if (!g->inputs[i]->initializer) {
            use_names = false;
            break;
        }
        by_name[i] = pc_data_wrap_tensor(g->inputs[i]->initializer, &err);
        if (!by_name[i]) {
            set_outcome(res, OUTCOME_RUN_ERROR, "[%s] %s", pc_status_name(err.status), err.message);
            settled = true;
            goto done;
        }
    }

    pc_error_clear(&err);
    pc_status st = use_names ? pc_ref_run(c->model, g->n_inputs, by_name, &outputs, &err)
                             : pc_ref_run(c->model, n_in, inputs, &outputs, &err);
    if (st != PC_OK) {
        outputs = NULL;
        if (st == PC_ERR_UNSUPPORTED)
            set_outcome(res, OUTCOME_UNSUPPORTED, "%s", err.message);
        else
            set_outcome(res, OUTCOME_RUN_ERROR, "[%s] %s", pc_status_name(st), err.message);
        settled = true;
        goto done;
    }

    /* Every output is compared; the case takes the most severe outcome, and the message lists each failing
     * output with its worst element. */
    outcome worst = OUTCOME_PASSED;
    char message[sizeof res->message] = "";
    for (uint32_t k = 0; k < n_out; k++) {
        pc_compare_result cmp;
        pc_compare_outcome co = pc_data_compare(expected[k], outputs[k], CONFORMANCE_RTOL, CONFORMANCE_ATOL, &cmp);
        if (co == PC_COMPARE_EQUAL) continue;
        outcome o = co == PC_COMPARE_TYPE ? OUTCOME_TYPE : co == PC_COMPARE_SHAPE ? OUTCOME_SHAPE : OUTCOME_DIFFERS;
        if (worst == OUTCOME_PASSED || o == OUTCOME_TYPE || (o == OUTCOME_SHAPE && worst == OUTCOME_DIFFERS)) worst = o;
        const char *name = g->outputs[k]->name ? g->outputs[k]->name : "";
        if (!add_failure(res, c->set_index, k, name, &cmp)) {
            set_outcome(res, OUTCOME_RUN_ERROR, "out of memory recording a failure");
            settled = true;
            goto done;
        }
        if (message[0]) msg_append(message, sizeof message, "; ");
        if (c->many_sets) msg_append(message, sizeof message, "test_data_set_%u: ", c->set_index);
        msg_append(message, sizeof message, "output %u '%s' %s", k, name, cmp.detail);
    }
    if (worst != OUTCOME_PASSED) {
        set_outcome(res, worst, "%s", message);
        settled = true;
    }
done:
    if (outputs) pc_ref_free_outputs(c->model, outputs);
    for (uint32_t k = 0; inputs && k < n_in; k++) pc_data_unref(inputs[k]);
    for (uint32_t k = 0; names && k < n_in; k++) free(names[k]);
    for (uint32_t k = 0; expected && k < n_out; k++) pc_data_unref(expected[k]);
    for (uint32_t i = 0; by_name && i < g->n_inputs; i++) pc_data_unref(by_name[i]);
    free(fed_inputs);
    free(inputs);
    free(names);
    free(expected);
    free(by_name);
    return !settled;
}

/* Sends one chunk now (the op list goes out before the run, so it survives a crash). */
static void send_chunk(int fd, void (*encode)(pc_wbuf *, const void *), const void *what)
{
    pc_wbuf b = {0};
    encode(&b, what);
    if (!b.failed) pc_write_all(fd, b.data, b.len);
    free(b.data);
}

static void encode_ops_any(pc_wbuf *b, const void *ops)
{
    encode_ops(b, ops);
}

static void encode_result_any(pc_wbuf *b, const void *r)
{
    encode_result(b, r);
}

/* The test hooks fire after the op list went out, so the tests also see that a crash keeps the case's ops. */
static void test_hooks(const char *case_name)
{
    const char *crash = getenv("PC_CONFORMANCE_TEST_CRASH"), *hang = getenv("PC_CONFORMANCE_TEST_HANG");
    if (crash && strcmp(crash, case_name) == 0) {
        signal(SIGSEGV, SIG_DFL); /* a plain signal death, whatever handler a sanitizer installed */
        raise(SIGSEGV);
    }
    if (hang && strcmp(hang, case_name) == 0)
        for (;;) sleep(1);
}

/* --optimize: every model goes through the pass pipeline before it runs, so the backend data checks the passes too.
 * Set by the parent before forking; the children read it. */
static struct {
    int level; /* -1: off */
    const pc_ep *const *eps;
    uint32_t n_eps;
} conf_optimize = {-1, NULL, 0};

static bool optimize_case(pc_model *model, case_result *res)
{
    if (conf_optimize.level < 0) return true;
    pc_optimize_options o;
    pc_optimize_options_default(&o);
    o.level = conf_optimize.level;
    o.eps = conf_optimize.eps;
    o.n_eps = conf_optimize.n_eps;
    o.verify_each_pass = true;
    pc_error err;
    if (pc_model_optimize(model, &o, NULL, &err) != PC_OK) {
        set_outcome(res, OUTCOME_RUN_ERROR, "[optimize %s] %s", pc_status_name(err.status), err.message);
        return false;
    }
    return true;
}

static void evaluate_case(const char *dir, const char *case_name, case_result *res, int fd)
{
    char *model_path = path_join(dir, "model.onnx");
    pc_model *model = NULL;
    pc_error err;
    index_list sets = {0};
    char why[512];
    if (!model_path) {
        set_outcome(res, OUTCOME_RUN_ERROR, "out of memory");
        goto done;
    }
    if (pc_model_load_file(model_path, NULL, &model, &err) != PC_OK) {
        set_outcome(res, OUTCOME_LOAD_ERROR, "[%s] %s", pc_status_name(err.status), err.message);
        goto done;
    }
    if (!collect_ops(model->graph, &res->ops, 0)) {
        set_outcome(res, OUTCOME_RUN_ERROR, "out of memory listing ops");
        goto done;
    }
    qsort(res->ops.items, res->ops.n, sizeof *res->ops.items, strcmp_indirect);
    send_chunk(fd, encode_ops_any, &res->ops);
    test_hooks(case_name);
    if (!optimize_case(model, res)) goto done;
    if (!list_numbered(dir, "test_data_set_", "", &sets, why, sizeof why)) {
        set_outcome(res, OUTCOME_LOAD_ERROR, "%s", why);
        goto done;
    }
    if (!sets.n) {
        set_outcome(res, OUTCOME_LOAD_ERROR, "%s: no test_data_set_N folders", dir);
        goto done;
    }
    for (size_t i = 0; i < sets.n; i++) {
        char folder[48];
        snprintf(folder, sizeof folder, "test_data_set_%ld", sets.items[i]);
        char *set_dir = path_join(dir, folder);
        if (!set_dir) {
            set_outcome(res, OUTCOME_RUN_ERROR, "out of memory");
            break;
        }
        data_set_ctx c = {model, set_dir, (uint32_t)sets.items[i], sets.n > 1, res};
        bool go_on = run_data_set(&c);
        free(set_dir);
        if (!go_on) break;
    }
done:
    free(sets.items);
    pc_model_free(model);
    free(model_path);
}

/* The child: never returns. It exits through exit() rather than _exit() so that a sanitizer build's leak check
 * runs in it; the parent has flushed its stdio buffers before forking, so nothing is written twice. */
static void child_main(const char *dir, const char *case_name, int fd)
{
    case_result res;
    memset(&res, 0, sizeof res);
    evaluate_case(dir, case_name, &res, fd);
    send_chunk(fd, encode_result_any, &res);
    close(fd);
    case_result_free(&res);
    exit(0);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Parent side: fork, collect the stream with a deadline, reap.
 */
typedef struct conf_case {
    char *dir;  /* as given (plus the subfolder) */
    char *name; /* last two path components, e.g. "node/test_abs" */
    case_result res;
} conf_case;

/* Waits for the child until the deadline; returns false on timeout (the child is then still running). */
static bool reap_until(pid_t pid, double deadline, int *status)
{
    long nap_ns = 100000; /* 0.1 ms, doubling to 10 ms: children usually exit right after closing the pipe */
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

static void run_case(conf_case *c, double timeout)
{
    case_result *res = &c->res;
    fflush(stdout);
    fflush(stderr);
    int fds[2];
    double t0 = now_seconds(), deadline = t0 + timeout;
    if (pipe(fds) != 0) {
        set_outcome(res, OUTCOME_RUN_ERROR, "cannot create a pipe: %s", strerror(errno));
        return;
    }
    pid_t pid = fork();
    if (pid < 0) {
        set_outcome(res, OUTCOME_RUN_ERROR, "cannot fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        child_main(c->dir, c->name, fds[1]);
    }
    close(fds[1]);

    uint8_t *stream = NULL;
    size_t len = 0, cap = 0;
    bool timed_out = false, oversized = false, eof = false;
    while (!eof && !timed_out && !oversized) {
        double left = deadline - now_seconds();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd p = {fds[0], POLLIN, 0};
        int ms = left >= 1.0 ? 1000 : (int)(left * 1000) + 1; /* wake at least once a second */
        int k = poll(&p, 1, ms);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) continue; /* the deadline check above decides */
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 4096;
            uint8_t *ns = ncap <= MAX_RESULT_BYTES ? realloc(stream, ncap) : NULL;
            if (!ns) {
                oversized = true;
                break;
            }
            stream = ns;
            cap = ncap;
        }
        ssize_t got = read(fds[0], stream + len, cap - len);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0)
            eof = true;
        else
            len += (size_t)got;
    }
    int status = 0;
    if (!timed_out && !oversized && !reap_until(pid, deadline, &status)) timed_out = true;
    if (timed_out || oversized) {
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    close(fds[0]);
    res->seconds = now_seconds() - t0;

    bool have_result = decode_stream(stream, len, res);
    free(stream);
    if (timed_out) {
        set_outcome(res, OUTCOME_RUN_ERROR, "timed out after %g s (child killed)", timeout);
    } else if (oversized) {
        set_outcome(res, OUTCOME_RUN_ERROR, "the child sent more than %d bytes of results (child killed)",
                    MAX_RESULT_BYTES);
    } else if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        set_outcome(res, OUTCOME_RUN_ERROR, "crashed: child killed by signal %d (%s)", sig, strsignal(sig));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        /* a sanitizer report (on stderr above) ends the child with a non-zero status, possibly after its result */
        const char *reported = have_result ? outcome_names[res->outcome] : NULL;
        set_outcome(res, OUTCOME_RUN_ERROR, "child exited with status %d %s%s%s", WEXITSTATUS(status),
                    reported ? "after reporting '" : "without a result", reported ? reported : "",
                    reported ? "' (see its stderr)" : " (see its stderr)");
    } else if (!have_result) {
        set_outcome(res, OUTCOME_RUN_ERROR, "the child exited without a complete result (%zu bytes received)", len);
    }
}

/* ---------------------------------------------------------------------------------------------------------------
 * Finding cases.
 */
typedef struct case_list {
    conf_case *items;
    size_t n, cap;
} case_list;

static bool is_regular_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static bool has_model(const char *dir)
{
    char *p = path_join(dir, "model.onnx");
    bool yes = p && is_regular_file(p);
    free(p);
    return yes;
}

/* The case name: the last two components of the path made absolute and normalized lexically ("." and ".."
 * resolved, symlinks kept), so "node/test_abs" whether the folder was given as ., ../test_abs or a full path. */
static char *case_name_of(const char *dir)
{
    char *absolute = NULL;
    if (dir[0] == '/') {
        absolute = strdup(dir);
    } else {
        char *cwd = getcwd(NULL, 0); /* glibc allocates; POSIX leaves a NULL buffer unspecified, Linux is the host */
        if (cwd) absolute = path_join(cwd, dir);
        free(cwd);
    }
    if (!absolute) return NULL;
    /* components in place: keep a stack of start pointers */
    size_t cap = strlen(absolute) / 2 + 2, n = 0, bytes;
    char **parts = pc_size_mul(cap, sizeof *parts, &bytes) ? malloc(bytes) : NULL;
    char *name = NULL;
    if (parts) {
        char *save = NULL;
        for (char *p = strtok_r(absolute, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
            if (strcmp(p, ".") == 0) continue;
            if (strcmp(p, "..") == 0) {
                if (n) n--;
                continue;
            }
            parts[n++] = p;
        }
        if (n >= 2) {
            size_t len = strlen(parts[n - 2]) + strlen(parts[n - 1]) + 2;
            name = malloc(len);
            if (name) snprintf(name, len, "%s/%s", parts[n - 2], parts[n - 1]);
        } else {
            name = strdup(n ? parts[0] : "/"); /* a case right below the root has no parent folder name */
        }
    }
    free(parts);
    free(absolute);
    return name;
}

static bool case_push(case_list *l, const char *dir)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 64, bytes;
        if (!pc_size_mul(ncap, sizeof *l->items, &bytes)) return false;
        conf_case *ni = realloc(l->items, bytes);
        if (!ni) return false;
        l->items = ni;
        l->cap = ncap;
    }
    conf_case *c = &l->items[l->n];
    memset(c, 0, sizeof *c);
    c->dir = strdup(dir);
    c->name = case_name_of(dir);
    if (!c->dir || !c->name) {
        free(c->dir);
        free(c->name);
        return false;
    }
    l->n++;
    return true;
}

static int conf_case_cmp(const void *a, const void *b)
{
    return strcmp(((const conf_case *)a)->name, ((const conf_case *)b)->name);
}

/* Adds DIR itself when it holds model.onnx, else each immediate subfolder that does (sorted by name). Returns a
 * PC_EXIT_* code. */
static int discover(const char *dir, case_list *cases)
{
    struct stat sb;
    if (stat(dir, &sb) != 0) return pc_cli_usage_error(CMD, "cannot read DIR '%s': %s", dir, strerror(errno));
    if (!S_ISDIR(sb.st_mode)) return pc_cli_usage_error(CMD, "DIR '%s' is not a directory", dir);
    if (has_model(dir)) return case_push(cases, dir) ? PC_EXIT_OK : PC_EXIT_INTERNAL;
    DIR *d = opendir(dir);
    if (!d) return pc_cli_usage_error(CMD, "cannot read DIR '%s': %s", dir, strerror(errno));
    size_t before = cases->n;
    int rc = PC_EXIT_OK;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char *sub = path_join(dir, e->d_name);
        if (!sub) {
            rc = PC_EXIT_INTERNAL;
            break;
        }
        struct stat ss;
        if (stat(sub, &ss) == 0 && S_ISDIR(ss.st_mode) && has_model(sub) && !case_push(cases, sub)) rc = PC_EXIT_INTERNAL;
        free(sub);
        if (rc != PC_EXIT_OK) break;
    }
    closedir(d);
    if (rc != PC_EXIT_OK) return rc;
    if (cases->n == before)
        return pc_cli_usage_error(CMD, "no test cases in '%s' (no model.onnx in it or in its subdirectories)", dir);
    qsort(cases->items + before, cases->n - before, sizeof *cases->items, conf_case_cmp);
    return PC_EXIT_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Expectations: "case_name outcome" per line, '#' comments.
 */
typedef struct expectation {
    char *name;
    outcome outcome;
    unsigned line;
    bool seen;
    char *reason; /* --errata files only */
} expectation;

typedef struct expectation_list {
    expectation *items;
    size_t n;
} expectation_list;

static int expectation_cmp(const void *a, const void *b)
{
    return strcmp(((const expectation *)a)->name, ((const expectation *)b)->name);
}

static void expectations_free(expectation_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].name);
        free(l->items[i].reason);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* Reads 'case outcome' lines (--expect) or 'case outcome reason...' lines (--errata, the reason is required).
 * Returns a PC_EXIT_* code; a malformed file is a bad input (3) with the line at fault. */
static int expectations_load(const char *path, const char *option, bool with_reason, expectation_list *l)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "passcheck " CMD ": cannot open %s file %s: %s\n", option, path, strerror(errno));
        return PC_EXIT_BAD_INPUT;
    }
    char *line = NULL;
    size_t line_cap = 0, cap = 0;
    unsigned line_no = 0;
    int rc = PC_EXIT_OK;
    while (rc == PC_EXIT_OK && getline(&line, &line_cap, f) >= 0) {
        line_no++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *save = NULL;
        char *name = strtok_r(line, " \t\r\n", &save);
        if (!name) continue;
        char *word = strtok_r(NULL, " \t\r\n", &save);
        char *extra = word ? strtok_r(NULL, with_reason ? "\r\n" : " \t\r\n", &save) : NULL;
        while (extra && (*extra == ' ' || *extra == '\t')) extra++;
        outcome o;
        bool reason_ok = with_reason ? extra && *extra : !extra;
        if (!word || !reason_ok || !outcome_parse(word, &o) || (with_reason && !outcome_is_failure(o))) {
            fprintf(stderr,
                    with_reason ? "passcheck " CMD ": %s:%u: expected 'case_name outcome reason' with outcome one of "
                                  "differs, shape, type, load-error, run-error and a reason\n"
                                : "passcheck " CMD ": %s:%u: expected 'case_name outcome' with outcome one of passed, "
                                  "differs, shape, type, load-error, run-error, unsupported, erratum\n",
                    path, line_no);
            rc = PC_EXIT_BAD_INPUT;
            break;
        }
        if (l->n == cap) {
            size_t ncap = cap ? cap * 2 : 256, bytes;
            expectation *ni = pc_size_mul(ncap, sizeof *ni, &bytes) ? realloc(l->items, bytes) : NULL;
            if (!ni) {
                rc = PC_EXIT_INTERNAL;
                break;
            }
            l->items = ni;
            cap = ncap;
        }
        l->items[l->n] = (expectation){strdup(name), o, line_no, false, with_reason ? strdup(extra) : NULL};
        if (!l->items[l->n].name || (with_reason && !l->items[l->n].reason)) {
            free(l->items[l->n].name);
            free(l->items[l->n].reason);
            rc = PC_EXIT_INTERNAL;
            break;
        }
        l->n++;
    }
    if (rc == PC_EXIT_OK && ferror(f)) {
        fprintf(stderr, "passcheck " CMD ": cannot read %s file %s\n", option, path);
        rc = PC_EXIT_BAD_INPUT;
    }
    free(line);
    fclose(f);
    if (rc != PC_EXIT_OK) return rc;
    if (l->n) qsort(l->items, l->n, sizeof *l->items, expectation_cmp);
    for (size_t i = 1; i < l->n; i++)
        if (strcmp(l->items[i - 1].name, l->items[i].name) == 0) {
            fprintf(stderr, "passcheck " CMD ": %s:%u: case %s is listed again (first on line %u)\n", path,
                    l->items[i].line > l->items[i - 1].line ? l->items[i].line : l->items[i - 1].line,
                    l->items[i].name,
                    l->items[i].line > l->items[i - 1].line ? l->items[i - 1].line : l->items[i].line);
            return PC_EXIT_BAD_INPUT;
        }
    return PC_EXIT_OK;
}

static expectation *expectation_find(expectation_list *l, const char *name)
{
    expectation key = {(char *)name, OUTCOME_PASSED, 0, false, NULL};
    return l->n ? bsearch(&key, l->items, l->n, sizeof *l->items, expectation_cmp) : NULL;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Output files, written to a temporary name and renamed so that a failure leaves nothing half-written.
 */
typedef struct run_summary {
    const case_list *cases;
    size_t counts[OUTCOME_COUNT];
    size_t passed, failed, skipped;
    double seconds;
    const char *executor;
} run_summary;

static void write_expectations(FILE *out, const void *ctx)
{
    const run_summary *s = ctx;
    fprintf(out, "# passcheck conformance outcomes with the %s executor: one 'case outcome' per line.\n"
                 "# Outcomes: passed, differs, shape, type, load-error, run-error, unsupported, erratum.\n"
                 "# Written by 'passcheck conformance --write-expect FILE DIR...'; changes are reviewed in the diff.\n"
                 "# %zu passed, %zu failed, %zu skipped\n",
            s->executor, s->passed, s->failed, s->skipped);
    for (size_t i = 0; i < s->cases->n; i++)
        fprintf(out, "%s %s\n", s->cases->items[i].name, outcome_names[s->cases->items[i].res.outcome]);
}

/* JSON numbers must be finite: NaN and infinities (a NaN-position mismatch) become null. */
static void json_number(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, "%.17g", v);
    else
        fputs("null", out);
}

static void write_json(FILE *out, const void *ctx)
{
    const run_summary *s = ctx;
    fprintf(out, "{\"executor\": ");
    pc_json_string(out, s->executor);
    fprintf(out, ", \"rtol\": %g, \"atol\": %g,\n \"cases\": [\n", CONFORMANCE_RTOL, CONFORMANCE_ATOL);
    for (size_t i = 0; i < s->cases->n; i++) {
        const conf_case *c = &s->cases->items[i];
        fprintf(out, "  {\"name\": ");
        pc_json_string(out, c->name);
        fprintf(out, ", \"outcome\": \"%s\", \"message\": ", outcome_names[c->res.outcome]);
        pc_json_string(out, c->res.message);
        fprintf(out, ", \"seconds\": %.6f, \"ops\": [", c->res.seconds);
        for (size_t k = 0; k < c->res.ops.n; k++) {
            if (k) fputs(", ", out);
            pc_json_string(out, c->res.ops.items[k]);
        }
        fputs("], \"failing_outputs\": [", out);
        for (size_t k = 0; k < c->res.n_failures; k++) {
            const output_failure *f = &c->res.failures[k];
            static const char *const cmp_names[] = {"equal", "differs", "shape", "type"};
            fprintf(out, "%s{\"data_set\": %u, \"index\": %u, \"name\": ", k ? ", " : "", f->data_set, f->index);
            pc_json_string(out, f->name);
            fprintf(out, ", \"outcome\": \"%s\", \"max_abs_error\": ", cmp_names[f->cmp.outcome]);
            json_number(out, f->cmp.max_abs_error);
            fputs(", \"worst_excess\": ", out);
            json_number(out, f->cmp.worst_excess);
            fprintf(out, ", \"worst_index\": %" PRIu64 ", \"worst_expected\": ", f->cmp.worst_index);
            json_number(out, f->cmp.worst_expected);
            fputs(", \"worst_actual\": ", out);
            json_number(out, f->cmp.worst_actual);
            fputs(", \"detail\": ", out);
            pc_json_string(out, f->cmp.detail);
            fputc('}', out);
        }
        fprintf(out, "]}%s\n", i + 1 < s->cases->n ? "," : "");
    }
    fprintf(out, " ],\n \"summary\": {\"cases\": %zu, \"passed\": %zu, \"failed\": %zu, \"skipped\": %zu, \"seconds\": %.3f",
            s->cases->n, s->passed, s->failed, s->skipped, s->seconds);
    for (int o = 0; o < OUTCOME_COUNT; o++) fprintf(out, ", \"%s\": %zu", outcome_names[o], s->counts[o]);
    fputs("}}\n", out);
}

/* XML text or attribute content: markup characters as entities, control characters (not allowed in XML 1.0) and
 * bytes that are not UTF-8 as '?', newlines in attributes as &#10; so they survive attribute normalization. */
static void xml_escape(FILE *out, const char *s, bool attribute)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned char ch = *p;
        if (ch < 0x80) {
            switch (ch) {
            case '&': fputs("&amp;", out); break;
            case '<': fputs("&lt;", out); break;
            case '>': fputs("&gt;", out); break;
            case '"': fputs("&quot;", out); break;
            case '\'': fputs("&apos;", out); break;
            case '\n': fputs(attribute ? "&#10;" : "\n", out); break;
            case '\t': fputs(attribute ? "&#9;" : "\t", out); break;
            default: fputc(ch < 0x20 ? '?' : ch, out);
            }
            p++;
            continue;
        }
        /* a well-formed UTF-8 sequence passes through */
        size_t n = ch >= 0xf0 && ch <= 0xf4 ? 4 : ch >= 0xe0 ? 3 : ch >= 0xc2 && ch < 0xe0 ? 2 : 0;
        size_t k = 1;
        while (n && k < n && (p[k] & 0xc0) == 0x80) k++;
        if (n && k == n) {
            fwrite(p, 1, n, out);
            p += n;
        } else {
            fputc('?', out);
            p++;
        }
    }
}

static void write_junit(FILE *out, const void *ctx)
{
    const run_summary *s = ctx;
    size_t errors = s->counts[OUTCOME_LOAD_ERROR] + s->counts[OUTCOME_RUN_ERROR];
    size_t failures = s->counts[OUTCOME_DIFFERS] + s->counts[OUTCOME_SHAPE] + s->counts[OUTCOME_TYPE];
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
                 "<testsuite name=\"passcheck conformance (%s)\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
                 "skipped=\"%zu\" time=\"%.3f\">\n",
            s->executor, s->cases->n, failures, errors, s->skipped, s->seconds);
    for (size_t i = 0; i < s->cases->n; i++) {
        const conf_case *c = &s->cases->items[i];
        const char *slash = strchr(c->name, '/');
        fputs("  <testcase classname=\"", out);
        if (slash) {
            /* classname is the test set ("node"), name the case ("test_abs") */
            char *set = strndup(c->name, (size_t)(slash - c->name));
            xml_escape(out, set ? set : "", true);
            free(set);
        } else {
            fputs("conformance", out);
        }
        fputs("\" name=\"", out);
        xml_escape(out, slash ? slash + 1 : c->name, true);
        fprintf(out, "\" time=\"%.6f\"", c->res.seconds);
        outcome o = c->res.outcome;
        if (o == OUTCOME_PASSED) {
            fputs("/>\n", out);
            continue;
        }
        const char *element = outcome_is_skip(o)                                    ? "skipped"
                              : o == OUTCOME_LOAD_ERROR || o == OUTCOME_RUN_ERROR ? "error"
                                                                                    : "failure";
        fprintf(out, ">\n    <%s type=\"%s\" message=\"", element, outcome_names[o]);
        xml_escape(out, c->res.message, true);
        fputs("\">", out);
        xml_escape(out, c->res.message, false);
        for (size_t k = 0; k < c->res.n_failures; k++) {
            const output_failure *f = &c->res.failures[k];
            fprintf(out, "\noutput %u '", f->index);
            xml_escape(out, f->name, false);
            fprintf(out, "' (data set %u): max abs error %g, worst index %" PRIu64 ": ", f->data_set,
                    f->cmp.max_abs_error, f->cmp.worst_index);
            xml_escape(out, f->cmp.detail, false);
        }
        fprintf(out, "</%s>\n  </testcase>\n", element);
    }
    fputs("</testsuite>\n</testsuites>\n", out);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Per-op statistics.
 */
typedef struct op_stat {
    char *op;
    size_t cases, passed, failed, unsupported;
} op_stat;

static int op_stat_cmp(const void *a, const void *b)
{
    return strcmp(((const op_stat *)a)->op, ((const op_stat *)b)->op);
}

static void print_op_stats(const case_list *cases)
{
    op_stat *stats = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < cases->n; i++) {
        const case_result *r = &cases->items[i].res;
        for (size_t k = 0; k < r->ops.n; k++) {
            op_stat *s = NULL;
            for (size_t j = 0; j < n && !s; j++)
                if (strcmp(stats[j].op, r->ops.items[k]) == 0) s = &stats[j];
            if (!s) {
                if (n == cap) {
                    size_t ncap = cap ? cap * 2 : 64, bytes;
                    op_stat *ns = pc_size_mul(ncap, sizeof *ns, &bytes) ? realloc(stats, bytes) : NULL;
                    if (!ns) goto out; /* statistics are a convenience: skip them when memory is short */
                    stats = ns;
                    cap = ncap;
                }
                s = &stats[n];
                memset(s, 0, sizeof *s);
                s->op = r->ops.items[k]; /* borrowed: the case list outlives the table */
                n++;
            }
            s->cases++;
            if (r->outcome == OUTCOME_PASSED)
                s->passed++;
            else if (outcome_is_skip(r->outcome))
                s->unsupported++;
            else
                s->failed++;
        }
    }
    if (n) qsort(stats, n, sizeof *stats, op_stat_cmp);
    printf("per-op results (%zu ops):\n  %-36s %6s %6s %6s %11s\n", n, "op", "cases", "passed", "failed",
           "unsupported");
    for (size_t j = 0; j < n; j++)
        printf("  %-36s %6zu %6zu %6zu %11zu\n", stats[j].op, stats[j].cases, stats[j].passed, stats[j].failed,
               stats[j].unsupported);
out:
    free(stats);
}

/* ---------------------------------------------------------------------------------------------------------------
 * The command.
 */
void pc_cmd_conformance_help(FILE *out)
{
    fprintf(out,
            "usage: passcheck conformance DIR... [--executor reference] [--filter REGEX] [--junit FILE]\n"
            "                             [--json FILE] [--strict] [--timeout SECONDS] [--expect FILE]\n"
            "                             [--write-expect FILE] [--errata FILE] [--quiet]\n"
            "                             [--optimize LEVEL [--ep LIST] [--ep-file FILE]]\n\n"
            "Runs ONNX backend test cases (model.onnx + test_data_set_N/{input,output}_K.pb) through an executor\n"
            "and compares every output with the recorded one: types and shapes exact, integers, bools and strings\n"
            "exact, floats NaN positions, then infinities, then |actual - expected| <= 1e-7 + 1e-3 |expected|.\n"
            "A DIR holding model.onnx is one case; otherwise each immediate subfolder holding one is a case. Case\n"
            "names are the last two path components (node/test_abs). Each case runs in its own process with a\n"
            "timeout, so a crash or hang fails that case only.\n\n"
            "Outcomes: passed, differs, shape, type, load-error, run-error, unsupported and erratum (both\n"
            "skipped).\n\n"
            "  --executor NAME     the executor to check (only 'reference' today)\n"
            "  --filter REGEX      run only cases whose name matches the POSIX extended REGEX\n"
            "  --timeout SECONDS   per-case limit (default 60); a case over it is killed and is a run-error\n"
            "  --strict            unsupported cases also fail the run\n"
            "  --expect FILE       compare every outcome with FILE ('case outcome' per line, '#' comments);\n"
            "                      exit 0 when all match (even if cases fail), 1 on any mismatch\n"
            "  --write-expect FILE write the outcomes in that format\n"
            "  --errata FILE       cases whose recorded outputs are known to be wrong ('case outcome reason' per\n"
            "                      line): when such a case ends with the listed outcome it is an erratum (skipped)\n"
            "  --json FILE         per-case records (outcome, message, seconds, ops, failing outputs) + summary\n"
            "  --junit FILE        JUnit XML (one testcase per case)\n"
            "  --quiet             print only failures (no SKIP lines, no per-op table) and the summary\n"
            "  --optimize LEVEL    run the pass pipeline up to LEVEL (0-3) on each model first, verifying the\n"
            "                      graph after every pass; a pipeline error is a run-error\n"
            "  --ep LIST           EPs for partitioning, in priority order (default cpu), e.g. nhwc,cpu\n"
            "  --ep-file FILE      further EP descriptions (docs/ep.md)\n\n"
            "Prints a FAIL/SKIP line per case that does not pass, per-op statistics, and 'N passed, N failed,\n"
            "N skipped'. exit codes: 0 no case failed (or all outcomes as expected), 1 a case failed or an\n"
            "expectation did not hold, 2 usage error (bad option, DIR, REGEX, executor or timeout), 3 an\n"
            "unreadable --expect file or an output file that cannot be written, 4 internal error\n");
}

/* A case listed in the --errata file whose outcome is the listed one becomes "erratum" (a skip, not a failure),
 * with the reason in front of the message. Any other outcome stands: a fixed erratum shows up as passed, a new
 * kind of failure as that failure. */
static void apply_erratum(conf_case *c, expectation_list *errata)
{
    expectation *e = expectation_find(errata, c->name);
    if (!e) return;
    e->seen = true;
    if (c->res.outcome == OUTCOME_PASSED)
        fprintf(stderr, "passcheck " CMD ": note: %s passes; its --errata entry (line %u) is no longer needed\n",
                c->name, e->line);
    if (c->res.outcome != e->outcome) return;
    char was[sizeof c->res.message];
    memcpy(was, c->res.message, sizeof was);
    set_outcome(&c->res, OUTCOME_ERRATUM, "data erratum (%s): %s", e->reason, was);
}

typedef struct conf_options {
    const char *executor, *filter, *junit, *json, *expect, *write_expect, *errata;
    const char *optimize, *ep_list, *ep_file;
    double timeout;
    bool strict, quiet;
} conf_options;

static int parse_timeout(const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (!s[0] || *end || errno || !isfinite(v) || v <= 0 || v > MAX_TIMEOUT_SECONDS)
        return pc_cli_usage_error(CMD, "bad --timeout '%s': expected a number of seconds > 0 and <= %g", s,
                                  MAX_TIMEOUT_SECONDS);
    *out = v;
    return PC_EXIT_OK;
}

/* Compares the outcomes with the expectation file and prints every mismatch. Returns the number of mismatches. */
static size_t check_expectations(const case_list *cases, expectation_list *expect, const char *path,
                                 const regex_t *filter)
{
    size_t mismatches = 0;
    for (size_t i = 0; i < cases->n; i++) {
        const conf_case *c = &cases->items[i];
        expectation *e = expectation_find(expect, c->name);
        if (!e) {
            printf("EXPECTATION %s: not listed in %s, got %s\n", c->name, path, outcome_names[c->res.outcome]);
            mismatches++;
            continue;
        }
        e->seen = true;
        if (e->outcome != c->res.outcome) {
            printf("EXPECTATION %s: expected %s, got %s\n", c->name, outcome_names[e->outcome],
                   outcome_names[c->res.outcome]);
            mismatches++;
        }
    }
    /* Entries for cases that did not run; with --filter only those the filter would have selected. */
    for (size_t i = 0; i < expect->n; i++) {
        const expectation *e = &expect->items[i];
        if (e->seen || (filter && regexec(filter, e->name, 0, NULL, 0) != 0)) continue;
        printf("EXPECTATION %s: listed in %s (line %u, %s) but no such case was run\n", e->name, path, e->line,
               outcome_names[e->outcome]);
        mismatches++;
    }
    return mismatches;
}

int pc_cmd_conformance(int argc, char **argv)
{
    conf_options opt = {"reference", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, DEFAULT_TIMEOUT_SECONDS,
                        false, false};
    pc_ep_registry *eps = NULL;
    str_list dirs = {0};
    case_list all = {0}, cases = {0};
    expectation_list expect = {0}, errata = {0};
    regex_t filter;
    bool have_filter = false, options_done = false;
    int rc = PC_EXIT_OK;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!options_done && strcmp(a, "--") == 0) {
            options_done = true;
        } else if (!options_done &&
                   (strcmp(a, "--executor") == 0 || strcmp(a, "--filter") == 0 || strcmp(a, "--junit") == 0 ||
                    strcmp(a, "--json") == 0 || strcmp(a, "--timeout") == 0 || strcmp(a, "--expect") == 0 ||
                    strcmp(a, "--write-expect") == 0 || strcmp(a, "--errata") == 0 || strcmp(a, "--optimize") == 0 ||
                    strcmp(a, "--ep") == 0 || strcmp(a, "--ep-file") == 0)) {
            if (i + 1 >= argc) {
                rc = pc_cli_usage_error(CMD, "%s needs an argument", a);
                goto done;
            }
            const char *v = argv[++i];
            if (strcmp(a, "--executor") == 0)
                opt.executor = v;
            else if (strcmp(a, "--filter") == 0)
                opt.filter = v;
            else if (strcmp(a, "--junit") == 0)
                opt.junit = v;
            else if (strcmp(a, "--json") == 0)
                opt.json = v;
            else if (strcmp(a, "--expect") == 0)
                opt.expect = v;
            else if (strcmp(a, "--write-expect") == 0)
                opt.write_expect = v;
            else if (strcmp(a, "--errata") == 0)
                opt.errata = v;
            else if (strcmp(a, "--optimize") == 0)
                opt.optimize = v;
            else if (strcmp(a, "--ep") == 0)
                opt.ep_list = v;
            else if (strcmp(a, "--ep-file") == 0)
                opt.ep_file = v;
            else if ((rc = parse_timeout(v, &opt.timeout)) != PC_EXIT_OK)
                goto done;
        } else if (!options_done && strcmp(a, "--strict") == 0) {
            opt.strict = true;
        } else if (!options_done && strcmp(a, "--quiet") == 0) {
            opt.quiet = true;
        } else if (!options_done && a[0] == '-' && a[1]) {
            rc = pc_cli_usage_error(CMD, "unknown option '%s'", a);
            goto done;
        } else if (!str_list_push(&dirs, a)) {
            rc = PC_EXIT_INTERNAL;
            goto done;
        }
    }
    if (strcmp(opt.executor, "reference") != 0) {
        rc = pc_cli_usage_error(CMD, "unknown executor '%s' (available: reference)", opt.executor);
        goto done;
    }
    if ((opt.ep_list || opt.ep_file) && !opt.optimize) {
        rc = pc_cli_usage_error(CMD, "%s needs --optimize", opt.ep_list ? "--ep" : "--ep-file");
        goto done;
    }
    if (opt.optimize) {
        char *end = NULL;
        long level = strtol(opt.optimize, &end, 10);
        if (!opt.optimize[0] || *end || level < PC_LEVEL_BASIC || level > PC_LEVEL_MAX) {
            rc = pc_cli_usage_error(CMD, "bad --optimize '%s': expected a level from %d to %d", opt.optimize,
                                    PC_LEVEL_BASIC, PC_LEVEL_MAX);
            goto done;
        }
        const pc_ep **list = NULL;
        uint32_t n_list = 0;
        rc = pc_cli_resolve_eps(CMD, opt.ep_file, opt.ep_list ? opt.ep_list : "cpu", NULL, &eps, &list, &n_list, NULL);
        if (rc != PC_EXIT_OK) goto done;
        conf_optimize.level = (int)level;
        conf_optimize.eps = list;
        conf_optimize.n_eps = n_list;
    }
    if (opt.filter) {
        int e = regcomp(&filter, opt.filter, REG_EXTENDED | REG_NOSUB);
        if (e != 0) {
            char why[256];
            regerror(e, &filter, why, sizeof why);
            rc = pc_cli_usage_error(CMD, "bad --filter regex '%s': %s", opt.filter, why);
            goto done;
        }
        have_filter = true;
    }
    if (!dirs.n) {
        rc = pc_cli_usage_error(CMD, "missing DIR");
        goto done;
    }
    for (size_t i = 0; i < dirs.n; i++)
        if ((rc = discover(dirs.items[i], &all)) != PC_EXIT_OK) goto done;
    /* Names key the expectation file, so two cases must never share one. */
    for (size_t i = 0; i < all.n; i++)
        for (size_t j = i + 1; j < all.n; j++)
            if (strcmp(all.items[i].name, all.items[j].name) == 0) {
                rc = pc_cli_usage_error(CMD, "case %s found twice (%s and %s)", all.items[i].name, all.items[i].dir,
                                        all.items[j].dir);
                goto done;
            }
    if (opt.expect && (rc = expectations_load(opt.expect, "--expect", false, &expect)) != PC_EXIT_OK) goto done;
    if (opt.errata && (rc = expectations_load(opt.errata, "--errata", true, &errata)) != PC_EXIT_OK) goto done;
    if ((rc = pc_cli_check_writable(CMD, "--json", opt.json)) != PC_EXIT_OK ||
        (rc = pc_cli_check_writable(CMD, "--junit", opt.junit)) != PC_EXIT_OK ||
        (rc = pc_cli_check_writable(CMD, "--write-expect", opt.write_expect)) != PC_EXIT_OK)
        goto done;

    /* The selected cases move to `cases`; the rest are released now. */
    cases.items = calloc(all.n ? all.n : 1, sizeof *cases.items);
    if (!cases.items) {
        rc = PC_EXIT_INTERNAL;
        goto done;
    }
    cases.cap = all.n;
    for (size_t i = 0; i < all.n; i++) {
        if (!have_filter || regexec(&filter, all.items[i].name, 0, NULL, 0) == 0) {
            cases.items[cases.n++] = all.items[i];
        } else {
            free(all.items[i].dir);
            free(all.items[i].name);
        }
    }
    all.n = 0;
    if (have_filter && !cases.n) fprintf(stderr, "passcheck " CMD ": no case matches --filter '%s'\n", opt.filter);

    run_summary sum = {&cases, {0}, 0, 0, 0, 0, opt.executor};
    double t0 = now_seconds();
    for (size_t i = 0; i < cases.n; i++) {
        conf_case *c = &cases.items[i];
        run_case(c, opt.timeout);
        apply_erratum(c, &errata);
        outcome o = c->res.outcome;
        sum.counts[o]++;
        if (outcome_is_failure(o)) {
            sum.failed++;
            printf("FAIL %s: %s: %s\n", c->name, outcome_names[o], c->res.message);
        } else if (outcome_is_skip(o)) {
            sum.skipped++;
            if (!opt.quiet) printf("SKIP %s: %s: %s\n", c->name, outcome_names[o], c->res.message);
        } else {
            sum.passed++;
        }
        fflush(stdout);
    }
    sum.seconds = now_seconds() - t0;
    if (!opt.quiet) print_op_stats(&cases);
    printf("conformance: %zu cases, %s executor, %.2f s\n", cases.n, opt.executor, sum.seconds);
    printf("%zu passed, %zu failed, %zu skipped\n", sum.passed, sum.failed, sum.skipped);

    if (opt.expect) {
        size_t mismatches = check_expectations(&cases, &expect, opt.expect, have_filter ? &filter : NULL);
        if (mismatches)
            printf("expectations: %zu mismatches against %s (update it deliberately with --write-expect)\n",
                   mismatches, opt.expect);
        else
            printf("expectations: all %zu outcomes as listed in %s\n", cases.n, opt.expect);
        rc = mismatches ? PC_EXIT_CHECK_FAILED : PC_EXIT_OK;
    } else {
        rc = sum.failed || (opt.strict && sum.skipped) ? PC_EXIT_CHECK_FAILED : PC_EXIT_OK;
    }
    /* A file that cannot be written outranks the verdict: the caller asked for it and did not get it. */
    int wrc;
    if (opt.json && (wrc = pc_cli_write_file_atomic(CMD, "--json", opt.json, write_json, &sum)) != PC_EXIT_OK) rc = wrc;
    if (opt.junit && (wrc = pc_cli_write_file_atomic(CMD, "--junit", opt.junit, write_junit, &sum)) != PC_EXIT_OK) rc = wrc;
    if (opt.write_expect &&
        (wrc = pc_cli_write_file_atomic(CMD, "--write-expect", opt.write_expect, write_expectations, &sum)) != PC_EXIT_OK)
        rc = wrc;
done:
    if (have_filter) regfree(&filter);
    for (size_t i = 0; i < all.n; i++) {
        free(all.items[i].dir);
        free(all.items[i].name);
    }
    free(all.items);
    for (size_t i = 0; i < cases.n; i++) {
        free(cases.items[i].dir);
        free(cases.items[i].name);
        case_result_free(&cases.items[i].res);
    }
    free(cases.items);
    expectations_free(&expect);
    expectations_free(&errata);
    str_list_free(&dirs);
    pc_ep_registry_free(eps); /* also frees the --ep list */
    return rc;
}
