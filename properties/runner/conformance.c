/* The ONNX backend test runner (conformance.h): finding cases, running each in a forked child with a deadline
 * (proc.h), comparing, expectations and errata, per-op statistics, and the JSON/JUnit/expectation files.
 *
 * The child streams two frames to the parent: the model's op list as soon as the model is loaded (so a case
 * that crashes later still counts in the per-op statistics), then the result. Cases run one after another, in
 * a fixed order, so the output is deterministic. */
#include "properties/runner/conformance.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "properties/runner/proc.h"
#include "properties/runner/util.h"
#include "properties/runner/wire.h"
#include "reference/reference.h"

/* Notes go to stderr in the command's voice: the runner is the command's body. */
#define NOTE_PREFIX "passcheck conformance: "

static const double CONFORMANCE_RTOL = 1e-3, CONFORMANCE_ATOL = 1e-7; /* ONNX backend-test defaults */

/* A --tolerances line: the op and its bounds. */
typedef struct op_tolerance {
    char op[64];
    double atol, rtol;
} op_tolerance;
typedef struct tolerance_table {
    op_tolerance *items;
    size_t n;
} tolerance_table;
/* A child's result stream is small (ops, a message, a few numbers per failing output); anything far larger is
 * a runaway child, not a result. */
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
    OUTCOME_ERRATUM, /* the recorded outputs are known to be wrong (listed with a reason in an --errata file)
                      */
    OUTCOME_COUNT
} outcome;

static const char *const outcome_names[OUTCOME_COUNT] = {"passed",     "differs",   "shape",       "type",
                                                         "load-error", "run-error", "unsupported", "erratum"};

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
 * Messages.
 */
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
    char *op; /* the op of the node that made the output, as the op list names it ("" when none did) */
    pc_compare_result cmp;
} output_failure;

typedef struct case_result {
    outcome outcome;
    char message[1024];
    double seconds;
    pc_str_list ops; /* distinct "Op" / "domain:Op", sorted */
    size_t n_failures;
    output_failure *failures;
} case_result;

static void case_result_free(case_result *r)
{
    pc_str_list_free(&r->ops);
    for (size_t i = 0; i < r->n_failures; i++) {
        free(r->failures[i].name);
        free(r->failures[i].op);
    }
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

static bool add_failure(case_result *r, uint32_t data_set, uint32_t index, const char *name, const char *op,
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
    f->op = strdup(op ? op : "");
    if (!f->name || !f->op) {
        free(f->name);
        free(f->op);
        return false;
    }
    r->n_failures++;
    return true;
}

/* ---------------------------------------------------------------------------------------------------------------
 * The child → parent stream: two frames (proc.h), the op list and the result.
 */
enum { CHUNK_OPS = 0x3153504f /* "OPS1" */, CHUNK_RESULT = 0x31534552 /* "RES1" */ };

static void encode_ops(pc_wbuf *b, const pc_str_list *ops)
{
    pc_wb_u32(b, (uint32_t)ops->n);
    for (size_t i = 0; i < ops->n; i++)
        pc_wb_str(b, ops->items[i]);
}

static void encode_result(pc_wbuf *b, const case_result *r)
{
    pc_wb_u32(b, (uint32_t)r->outcome);
    pc_wb_str(b, r->message);
    pc_wb_u32(b, (uint32_t)r->n_failures);
    for (size_t i = 0; i < r->n_failures; i++) {
        const output_failure *f = &r->failures[i];
        pc_wb_u32(b, f->data_set);
        pc_wb_u32(b, f->index);
        pc_wb_str(b, f->name);
        pc_wb_str(b, f->op);
        pc_wb_u32(b, (uint32_t)f->cmp.outcome);
        pc_wb_f64(b, f->cmp.max_abs_error);
        pc_wb_f64(b, f->cmp.worst_excess);
        pc_wb_u64(b, f->cmp.worst_index);
        pc_wb_f64(b, f->cmp.worst_expected);
        pc_wb_f64(b, f->cmp.worst_actual);
        pc_wb_str(b, f->cmp.detail);
    }
}

static bool decode_ops(pc_rbuf *b, case_result *r)
{
    uint32_t n = pc_rb_u32(b);
    for (uint32_t i = 0; i < n && !b->bad; i++) {
        char *s = pc_rb_str_dup(b);
        if (!s) break;
        bool ok = pc_str_list_push(&r->ops, s);
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
        char *op = pc_rb_str_dup(b);
        uint32_t co = pc_rb_u32(b);
        cmp.outcome = co <= PC_COMPARE_TYPE ? (pc_compare_outcome)co : PC_COMPARE_TYPE;
        cmp.max_abs_error = pc_rb_f64(b);
        cmp.worst_excess = pc_rb_f64(b);
        cmp.worst_index = pc_rb_u64(b);
        cmp.worst_expected = pc_rb_f64(b);
        cmp.worst_actual = pc_rb_f64(b);
        pc_rb_str_into(b, cmp.detail, sizeof cmp.detail);
        if (!b->bad && !add_failure(r, data_set, index, name, op, &cmp)) b->bad = true;
        free(name);
        free(op);
    }
    return !b->bad;
}

/* Reads every complete frame of a child's stream into r. Returns whether a result frame was among them. */
static bool decode_stream(const uint8_t *data, size_t len, case_result *r)
{
    bool have_result = false;
    size_t pos = 0;
    uint32_t tag;
    pc_rbuf b;
    while (pc_frame_next(data, len, &pos, &tag, &b)) {
        if (tag == CHUNK_OPS && !r->ops.n)
            decode_ops(&b, r);
        else if (tag == CHUNK_RESULT)
            have_result = decode_result(&b, r) && b.pos == b.len;
    }
    return have_result;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Child side: load, run, compare.
 */

/* "Op" for ai.onnx, "domain:Op" otherwise; subgraphs (If/Loop/Scan bodies) included. */
/* How the op list names a node's op: "Op" for the standard domain, "domain:Op" otherwise (malloc'd). */
static char *op_label(const pc_node *n)
{
    const char *domain = n->domain ? n->domain : "";
    bool standard = !domain[0] || strcmp(domain, "ai.onnx") == 0;
    size_t len = strlen(domain) + strlen(n->op_type) + 2;
    char *name = malloc(len);
    if (name) snprintf(name, len, "%s%s%s", standard ? "" : domain, standard ? "" : ":", n->op_type);
    return name;
}

static bool collect_ops(const pc_graph *g, pc_str_list *ops, unsigned depth)
{
    if (depth > 64) return true; /* the loader bounds nesting; this only guards the recursion */
    for (const pc_node *n = g->first; n; n = n->next) {
        char *name = op_label(n);
        if (!name) return false;
        bool seen = false;
        for (size_t i = 0; i < ops->n && !seen; i++)
            seen = strcmp(ops->items[i], name) == 0;
        bool ok = seen || pc_str_list_push(ops, name);
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
            snprintf(why, why_size,
                     "%s: %s%ld.pb without %s%zu.pb (files must be numbered from 0 without gaps)", dir,
                     prefix, l.items[i], prefix, i);
            ok = false;
        }
    *count = (uint32_t)l.n;
    free(l.items);
    return ok;
}

/* The name inside a TensorProto data file (backend test data names its tensors after the graph inputs), via
 * the loader with a scratch owner. NULL when the file has none or is not a TensorProto. */
static char *tensor_file_name(const char *path)
{
    pc_model *scratch;
    pc_error err;
    if (pc_model_create(&scratch, &err) != PC_OK) return NULL;
    pc_tensor *t = NULL;
    char *name = NULL;
    if (pc_tensor_load_file(scratch, path, &t, &err) == PC_OK && t->name && t->name[0])
        name = strdup(t->name);
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

/* Runs one test_data_set folder. Returns false when the case's outcome is settled (an input or output that
 * does not load, a run error): outputs that differ leave it open, so the next data sets still run. */
typedef struct data_set_ctx {
    const pc_model *model;
    const char *dir;
    uint32_t set_index;
    bool many_sets; /* name the data set in messages */
    case_result *res;
    double rtol, atol;   /* the case's bounds (options and --tolerances) */
    pc_session *session; /* the runtime executor's session, else NULL (the reference) */
} data_set_ctx;

/* The runtime is fed the graph inputs without an initializer, in graph order (pc_session_run). A data set
 * that overrides an initializer is outside what a session takes: unsupported. Returns the feeds as
 * borrowed pointers in `feeds` (room for g->n_inputs), their count in *n_feeds, or false. */
static bool runtime_feeds(const pc_graph *g, bool use_names, pc_data *const *by_name, uint32_t n_in,
                          pc_data *const *inputs, pc_data **feeds, uint32_t *n_feeds)
{
    uint32_t n = 0, n_free = 0;
    for (uint32_t i = 0; i < g->n_inputs; i++)
        if (!g->inputs[i]->initializer) n_free++;
    if (use_names) {
        for (uint32_t i = 0; i < g->n_inputs; i++) {
            if (!g->inputs[i]->initializer) {
                feeds[n++] = by_name[i];
            } else if (!by_name[i]->borrowed) {
                return false; /* a file feeds it, not the initializer (wrapped, so borrowed) */
            }
        }
    } else {
        if (n_in != n_free) return false; /* positional files that also cover initializers */
        for (uint32_t k = 0; k < n_in; k++)
            feeds[n++] = inputs[k];
    }
    *n_feeds = n;
    return true;
}

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
        set_outcome(res, OUTCOME_LOAD_ERROR, "%s has %u output files, the graph has %u outputs", c->dir,
                    n_out, g->n_outputs);
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
        char *path = pc_path_join(c->dir, file);
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
        char *path = pc_path_join(c->dir, file);
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

    /* By name when every file names a distinct graph input that takes a tensor and every input left over has
     * an initializer: the full list in graph-input order, initializers feeding the rest. Otherwise
     * positional. */
    bool use_names = n_in > 0;
    for (uint32_t k = 0; k < n_in && use_names; k++) {
        use_names = false;
        if (!names[k]) break;
        for (uint32_t i = 0; i < g->n_inputs; i++)
            if (g->inputs[i]->name && strcmp(g->inputs[i]->name, names[k]) == 0 && !by_name[i] &&
                inputs[k]->kind == PC_TYPE_TENSOR && type_is_tensor_or_unknown(&g->inputs[i]->type)) {
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
    pc_status st;
    if (c->session) {
        /* by_name has room for every graph input, so it holds the feeds too once they are copied out */
        pc_data **feeds = calloc(g->n_inputs ? g->n_inputs : 1, sizeof *feeds);
        uint32_t n_feeds = 0;
        if (!feeds) {
            st = pc_error_set(&err, PC_ERR_NOMEM, "out of memory");
        } else if (!runtime_feeds(g, use_names, by_name, n_in, inputs, feeds, &n_feeds)) {
            st = pc_error_set(&err, PC_ERR_UNSUPPORTED,
                              "%s feeds a graph input that has an initializer; the runtime takes only the "
                              "inputs without one",
                              c->dir);
        } else {
            st = pc_session_run(c->session, n_feeds, feeds, &outputs, &err);
        }
        free(feeds);
    } else {
        st = use_names ? pc_ref_run(c->model, g->n_inputs, by_name, &outputs, &err)
                       : pc_ref_run(c->model, n_in, inputs, &outputs, &err);
    }
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
        pc_compare_outcome co = pc_data_compare(expected[k], outputs[k], c->rtol, c->atol, &cmp);
        if (co == PC_COMPARE_EQUAL) continue;
        outcome o = co == PC_COMPARE_TYPE    ? OUTCOME_TYPE
                    : co == PC_COMPARE_SHAPE ? OUTCOME_SHAPE
                                             : OUTCOME_DIFFERS;
        if (worst == OUTCOME_PASSED || o == OUTCOME_TYPE || (o == OUTCOME_SHAPE && worst == OUTCOME_DIFFERS))
            worst = o;
        const char *name = g->outputs[k]->name ? g->outputs[k]->name : "";
        char *op = g->outputs[k]->producer ? op_label(g->outputs[k]->producer) : NULL;
        bool added = (op || !g->outputs[k]->producer) && add_failure(res, c->set_index, k, name, op, &cmp);
        free(op);
        if (!added) {
            set_outcome(res, OUTCOME_RUN_ERROR, "out of memory recording a failure");
            settled = true;
            goto done;
        }
        if (message[0]) msg_append(message, sizeof message, "; ");
        if (c->many_sets) msg_append(message, sizeof message, "test_data_set_%u: ", c->set_index);
        msg_append(message, sizeof message, "output %u '%s' %s", k, name, cmp.detail);
    }
    if (worst != OUTCOME_PASSED) {
        /* outputs that differ do not settle the case: every data set is run and each failing one reported
         * (the case keeps the first one's outcome) */
        if (outcome_is_failure(res->outcome))
            msg_append(res->message, sizeof res->message, "; %s", message);
        else
            set_outcome(res, worst, "%s", message);
    }
done:
    if (outputs && c->session)
        pc_session_free_outputs(c->session, outputs);
    else if (outputs)
        pc_ref_free_outputs(c->model, outputs);
    for (uint32_t k = 0; inputs && k < n_in; k++)
        pc_data_unref(inputs[k]);
    for (uint32_t k = 0; names && k < n_in; k++)
        free(names[k]);
    for (uint32_t k = 0; expected && k < n_out; k++)
        pc_data_unref(expected[k]);
    for (uint32_t i = 0; by_name && i < g->n_inputs; i++)
        pc_data_unref(by_name[i]);
    free(fed_inputs);
    free(inputs);
    free(names);
    free(expected);
    free(by_name);
    return !settled;
}

/* The test hooks fire after the op list went out, so the tests also see that a crash keeps the case's ops. */
static void test_hooks(const char *case_name)
{
    const char *crash = getenv("PC_CONFORMANCE_TEST_CRASH"), *hang = getenv("PC_CONFORMANCE_TEST_HANG");
    if (crash && strcmp(crash, case_name) == 0) pc_proc_test_crash();
    if (hang && strcmp(hang, case_name) == 0) pc_proc_test_hang();
}

/* optimize_level >= 0: every model goes through the pass pipeline before it runs, so the backend data checks
 * the passes too. */
static bool optimize_case(pc_model *model, const pc_conformance_options *co, case_result *res)
{
    if (co->optimize_level < 0) return true;
    pc_optimize_options o;
    pc_optimize_options_default(&o);
    o.level = co->optimize_level;
    o.eps = co->eps;
    o.n_eps = co->n_eps;
    o.verify_each_pass = true;
    pc_error err;
    if (pc_model_optimize(model, &o, NULL, &err) != PC_OK) {
        set_outcome(res, OUTCOME_RUN_ERROR, "[optimize %s] %s", pc_status_name(err.status), err.message);
        return false;
    }
    return true;
}

static void evaluate_case(const char *dir, const char *case_name, const pc_conformance_options *co,
                          const tolerance_table *tt, case_result *res, int fd)
{
    char *model_path = pc_path_join(dir, "model.onnx");
    pc_model *model = NULL;
    pc_session *session = NULL;
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
    pc_str_list_sort(&res->ops, 0);
    pc_wbuf ops = {0};
    encode_ops(&ops, &res->ops);
    pc_proc_send(fd, CHUNK_OPS, &ops); /* before the run, so it survives a crash */
    test_hooks(case_name);
    if (!optimize_case(model, co, res)) goto done;
    if (!list_numbered(dir, "test_data_set_", "", &sets, why, sizeof why)) {
        set_outcome(res, OUTCOME_LOAD_ERROR, "%s", why);
        goto done;
    }
    if (!sets.n) {
        set_outcome(res, OUTCOME_LOAD_ERROR, "%s: no test_data_set_N folders", dir);
        goto done;
    }
    if (strcmp(co->executor, "runtime") == 0) {
        /* the graph as it stands (after --optimize's pipeline when given): this checks the kernels */
        pc_session_options so;
        pc_session_options_default(&so);
        so.optimize = false;
        pc_error_clear(&err);
        if (pc_session_create(model, &so, &session, &err) != PC_OK) {
            if (err.status == PC_ERR_UNSUPPORTED)
                set_outcome(res, OUTCOME_UNSUPPORTED, "%s", err.message);
            else
                set_outcome(res, OUTCOME_RUN_ERROR, "[session %s] %s", pc_status_name(err.status),
                            err.message);
            goto done;
        }
    }
    for (size_t i = 0; i < sets.n; i++) {
        char folder[48];
        snprintf(folder, sizeof folder, "test_data_set_%ld", sets.items[i]);
        char *set_dir = pc_path_join(dir, folder);
        if (!set_dir) {
            set_outcome(res, OUTCOME_RUN_ERROR, "out of memory");
            break;
        }
        data_set_ctx c = {model,    set_dir, (uint32_t)sets.items[i], sets.n > 1, res, co->rtol,
                          co->atol, session};
        for (size_t t = 0; t < tt->n; t++) {
            const op_tolerance *ot = &tt->items[t];
            for (size_t k = 0; k < res->ops.n; k++)
                if (strcmp(res->ops.items[k], ot->op) == 0) {
                    if (ot->atol > c.atol) c.atol = ot->atol;
                    if (ot->rtol > c.rtol) c.rtol = ot->rtol;
                }
        }
        bool go_on = run_data_set(&c);
        free(set_dir);
        if (!go_on) break;
    }
done:
    pc_session_free(session);
    free(sets.items);
    pc_model_free(model);
    free(model_path);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Parent side: one child per case, its stream collected until the deadline.
 */
typedef struct conf_case {
    char *dir;  /* as given (plus the subfolder) */
    char *name; /* last two path components, e.g. "node/test_abs" */
    case_result res;
} conf_case;

typedef struct child_ctx {
    const conf_case *c;
    const pc_conformance_options *o;
    const tolerance_table *tt;
} child_ctx;

static void child_main(void *vctx, int fd)
{
    const child_ctx *ctx = vctx;
    case_result res;
    memset(&res, 0, sizeof res);
    evaluate_case(ctx->c->dir, ctx->c->name, ctx->o, ctx->tt, &res, fd);
    pc_wbuf b = {0};
    encode_result(&b, &res);
    pc_proc_send(fd, CHUNK_RESULT, &b);
    case_result_free(&res);
}

static void run_case(conf_case *c, const pc_conformance_options *o, const tolerance_table *tt)
{
    case_result *res = &c->res;
    child_ctx ctx = {c, o, tt};
    pc_proc p;
    switch (pc_proc_start(&p, child_main, &ctx, o->timeout, MAX_RESULT_BYTES, 0)) {
    case PC_PROC_STARTED:
        break;
    case PC_PROC_NO_CHANNEL:
        set_outcome(res, OUTCOME_RUN_ERROR, "cannot create a pipe: %s", strerror(errno));
        return;
    case PC_PROC_NO_FORK:
        set_outcome(res, OUTCOME_RUN_ERROR, "cannot fork: %s", strerror(errno));
        return;
    }
    while (!pc_proc_poll(&p, 1, 1000)) {
    }
    pc_proc_exit ex = pc_proc_finish(&p);
    res->seconds = pc_now_seconds() - p.started;
    bool have_result = decode_stream(p.data, p.len, res);
    if (ex.end == PC_PROC_TIMED_OUT) {
        set_outcome(res, OUTCOME_RUN_ERROR, "timed out after %g s (child killed)", o->timeout);
    } else if (ex.end == PC_PROC_OVERSIZED) {
        set_outcome(res, OUTCOME_RUN_ERROR, "the child sent more than %d bytes of results (child killed)",
                    MAX_RESULT_BYTES);
    } else if (ex.end == PC_PROC_SIGNALED) {
        set_outcome(res, OUTCOME_RUN_ERROR, "crashed: child killed by signal %d (%s)", ex.code,
                    strsignal(ex.code));
    } else if (ex.code != 0) {
        /* a sanitizer report (on stderr above) ends the child with a non-zero status, possibly after its
         * result */
        const char *reported = have_result ? outcome_names[res->outcome] : NULL;
        set_outcome(res, OUTCOME_RUN_ERROR, "child exited with status %d %s%s%s", ex.code,
                    reported ? "after reporting '" : "without a result", reported ? reported : "",
                    reported ? "' (see its stderr)" : " (see its stderr)");
    } else if (!have_result) {
        set_outcome(res, OUTCOME_RUN_ERROR, "the child exited without a complete result (%zu bytes received)",
                    p.len);
    }
    pc_proc_free(&p);
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
    char *p = pc_path_join(dir, "model.onnx");
    bool yes = p && is_regular_file(p);
    free(p);
    return yes;
}

/* The case name: the last two components of the path made absolute and normalized lexically ("." and ".."
 * resolved, symlinks kept), so "node/test_abs" whether the folder was given as ., ../test_abs or a full path.
 */
static char *case_name_of(const char *dir)
{
    char *absolute = NULL;
    if (dir[0] == '/') {
        absolute = strdup(dir);
    } else {
        char *cwd =
            getcwd(NULL, 0); /* glibc allocates; POSIX leaves a NULL buffer unspecified, Linux is the host */
        if (cwd) absolute = pc_path_join(cwd, dir);
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

/* Adds DIR itself when it holds model.onnx, else each immediate subfolder that does (sorted by name). A DIR
 * that cannot be read or holds no case is a usage error. */
static pc_status discover(const char *dir, case_list *cases, pc_error *err)
{
    struct stat sb;
    if (stat(dir, &sb) != 0)
        return pc_error_set(err, PC_ERR_USAGE, "cannot read DIR '%s': %s", dir, strerror(errno));
    if (!S_ISDIR(sb.st_mode)) return pc_error_set(err, PC_ERR_USAGE, "DIR '%s' is not a directory", dir);
    if (has_model(dir))
        return case_push(cases, dir) ? PC_OK
                                     : pc_error_set(err, PC_ERR_NOMEM, "out of memory listing %s", dir);
    DIR *d = opendir(dir);
    if (!d) return pc_error_set(err, PC_ERR_USAGE, "cannot read DIR '%s': %s", dir, strerror(errno));
    size_t before = cases->n;
    bool oom = false;
    struct dirent *e;
    while (!oom && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char *sub = pc_path_join(dir, e->d_name);
        struct stat ss;
        oom =
            !sub || (stat(sub, &ss) == 0 && S_ISDIR(ss.st_mode) && has_model(sub) && !case_push(cases, sub));
        free(sub);
    }
    closedir(d);
    if (oom) return pc_error_set(err, PC_ERR_NOMEM, "out of memory listing %s", dir);
    if (cases->n == before)
        return pc_error_set(err, PC_ERR_USAGE,
                            "no test cases in '%s' (no model.onnx in it or in its subdirectories)", dir);
    qsort(cases->items + before, cases->n - before, sizeof *cases->items, conf_case_cmp);
    return PC_OK;
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
 * A file that cannot be read is PC_ERR_IO, a malformed one PC_ERR_VALUE with the line at fault. */
/* A bound from a --tolerances line: a finite number >= 0. */
static bool tolerance_parse(const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = s ? strtod(s, &end) : -1;
    if (!s || end == s || *end || errno || !(v >= 0) || v > 1e300) return false;
    *out = v;
    return true;
}

/* One line of a settings file (--expect, --errata, --tolerances), its '#' comment cut; blank lines too. */
typedef pc_status (*line_fn)(void *ctx, char *line, unsigned line_no, pc_error *err);

/* Calls fn on every line of path; the open and read errors name the option and the file. */
static pc_status lines_read(const char *path, const char *option, line_fn fn, void *ctx, pc_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return pc_error_set(err, PC_ERR_IO, "cannot open %s file %s: %s", option, path, strerror(errno));
    char *line = NULL;
    size_t line_cap = 0;
    unsigned line_no = 0;
    pc_status rc = PC_OK;
    while (rc == PC_OK && getline(&line, &line_cap, f) >= 0) {
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        rc = fn(ctx, line, ++line_no, err);
    }
    if (rc == PC_OK && ferror(f)) rc = pc_error_set(err, PC_ERR_IO, "cannot read %s file %s", option, path);
    free(line);
    fclose(f);
    return rc;
}

typedef struct tolerance_reader {
    const char *path;
    tolerance_table *t;
    size_t cap;
} tolerance_reader;

/* 'op atol rtol'; an op given twice is an error (which line would win is a guess). */
static pc_status tolerance_line(void *vctx, char *line, unsigned line_no, pc_error *err)
{
    tolerance_reader *tr = vctx;
    tolerance_table *t = tr->t;
    char *save = NULL;
    char *op = strtok_r(line, " \t\r\n", &save);
    if (!op) return PC_OK;
    char *a = strtok_r(NULL, " \t\r\n", &save), *r = a ? strtok_r(NULL, " \t\r\n", &save) : NULL;
    char *extra = r ? strtok_r(NULL, " \t\r\n", &save) : NULL;
    op_tolerance ot;
    memset(&ot, 0, sizeof ot);
    if (extra || strlen(op) >= sizeof ot.op || !tolerance_parse(a, &ot.atol) || !tolerance_parse(r, &ot.rtol))
        return pc_error_set(
            err, PC_ERR_VALUE,
            "%s:%u: expected 'op atol rtol' (an op as the per-op table names it, e.g. Conv or "
            "com.microsoft:FusedConv, and two numbers >= 0)",
            tr->path, line_no);
    snprintf(ot.op, sizeof ot.op, "%s", op);
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->items[i].op, ot.op) == 0)
            return pc_error_set(err, PC_ERR_VALUE, "%s:%u: op '%s' is given twice", tr->path, line_no, ot.op);
    if (t->n == tr->cap) {
        size_t ncap = tr->cap ? tr->cap * 2 : 16, bytes;
        op_tolerance *ni = pc_size_mul(ncap, sizeof *ni, &bytes) ? realloc(t->items, bytes) : NULL;
        if (!ni) return pc_error_set(err, PC_ERR_NOMEM, "out of memory reading %s", tr->path);
        t->items = ni;
        tr->cap = ncap;
    }
    t->items[t->n++] = ot;
    return PC_OK;
}

static pc_status tolerances_load(const char *path, tolerance_table *t, pc_error *err)
{
    tolerance_reader tr = {path, t, 0};
    return lines_read(path, "--tolerances", tolerance_line, &tr, err);
}

typedef struct expectation_reader {
    const char *path;
    bool with_reason;
    expectation_list *l;
    size_t cap;
} expectation_reader;

/* 'case_name outcome' (--expect) or 'case_name outcome reason' (--errata). */
static pc_status expectation_line(void *vctx, char *line, unsigned line_no, pc_error *err)
{
    expectation_reader *er = vctx;
    expectation_list *l = er->l;
    bool with_reason = er->with_reason;
    char *save = NULL;
    char *name = strtok_r(line, " \t\r\n", &save);
    if (!name) return PC_OK;
    char *word = strtok_r(NULL, " \t\r\n", &save);
    char *extra = word ? strtok_r(NULL, with_reason ? "\r\n" : " \t\r\n", &save) : NULL;
    while (extra && (*extra == ' ' || *extra == '\t'))
        extra++;
    outcome o;
    bool reason_ok = with_reason ? extra && *extra : !extra;
    if (!word || !reason_ok || !outcome_parse(word, &o) || (with_reason && !outcome_is_failure(o)))
        return pc_error_set(err, PC_ERR_VALUE,
                            with_reason ? "%s:%u: expected 'case_name outcome reason' with outcome one of "
                                          "differs, shape, type, load-error, run-error and a reason"
                                        : "%s:%u: expected 'case_name outcome' with outcome one of passed, "
                                          "differs, shape, type, load-error, run-error, unsupported, erratum",
                            er->path, line_no);
    if (l->n == er->cap) {
        size_t ncap = er->cap ? er->cap * 2 : 256, bytes;
        expectation *ni = pc_size_mul(ncap, sizeof *ni, &bytes) ? realloc(l->items, bytes) : NULL;
        if (!ni) return pc_error_set(err, PC_ERR_NOMEM, "out of memory reading %s", er->path);
        l->items = ni;
        er->cap = ncap;
    }
    l->items[l->n] = (expectation){strdup(name), o, line_no, false, with_reason ? strdup(extra) : NULL};
    if (!l->items[l->n].name || (with_reason && !l->items[l->n].reason)) {
        free(l->items[l->n].name);
        free(l->items[l->n].reason);
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory reading %s", er->path);
    }
    l->n++;
    return PC_OK;
}

static pc_status expectations_load(const char *path, const char *option, bool with_reason,
                                   expectation_list *l, pc_error *err)
{
    expectation_reader er = {path, with_reason, l, 0};
    pc_status rc = lines_read(path, option, expectation_line, &er, err);
    if (rc != PC_OK) return rc;
    if (l->n) qsort(l->items, l->n, sizeof *l->items, expectation_cmp);
    /* --errata may list a case once per outcome (engines that stumble on one bad case differently) */
    for (size_t i = 1; i < l->n; i++)
        if (strcmp(l->items[i - 1].name, l->items[i].name) == 0 &&
            (!with_reason || l->items[i - 1].outcome == l->items[i].outcome)) {
            return pc_error_set(
                err, PC_ERR_VALUE, "%s:%u: case %s is listed again (first on line %u)", path,
                l->items[i].line > l->items[i - 1].line ? l->items[i].line : l->items[i - 1].line,
                l->items[i].name,
                l->items[i].line > l->items[i - 1].line ? l->items[i - 1].line : l->items[i].line);
        }
    return PC_OK;
}

static expectation *expectation_find(expectation_list *l, const char *name)
{
    expectation key = {(char *)name, OUTCOME_PASSED, 0, false, NULL};
    return l->n ? bsearch(&key, l->items, l->n, sizeof *l->items, expectation_cmp) : NULL;
}

/* ---------------------------------------------------------------------------------------------------------------
 * A run: the selected cases, the expectation and errata files, the counts.
 */
struct pc_conformance {
    pc_conformance_options o;
    tolerance_table tolerances; /* --tolerances */
    case_list cases;            /* selected, in name order */
    expectation_list expect, errata;
    regex_t filter;
    bool have_filter;
    size_t counts[OUTCOME_COUNT];
    size_t passed, failed, skipped;
    double seconds;
};

/* ---------------------------------------------------------------------------------------------------------------
 * Output files (the caller writes them whole, through a temporary renamed over the path).
 */
void pc_conformance_write_expectations(FILE *out, const void *ctx)
{
    const pc_conformance *s = ctx;
    fprintf(
        out,
        "# passcheck conformance outcomes with the %s executor: one 'case outcome' per line.\n"
        "# Outcomes: passed, differs, shape, type, load-error, run-error, unsupported, erratum.\n"
        "# Written by 'passcheck conformance --write-expect FILE DIR...'; changes are reviewed in the diff.\n"
        "# %zu passed, %zu failed, %zu skipped\n",
        s->o.executor, s->passed, s->failed, s->skipped);
    for (size_t i = 0; i < s->cases.n; i++)
        fprintf(out, "%s %s\n", s->cases.items[i].name, outcome_names[s->cases.items[i].res.outcome]);
}

/* JSON numbers must be finite: NaN and infinities (a NaN-position mismatch) become null. */
static void json_number(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, "%.17g", v);
    else
        fputs("null", out);
}

void pc_conformance_write_json(FILE *out, const void *ctx)
{
    const pc_conformance *s = ctx;
    fprintf(out, "{\"executor\": ");
    pc_json_string(out, s->o.executor);
    fprintf(out, ", \"rtol\": %g, \"atol\": %g,\n \"cases\": [\n", s->o.rtol, s->o.atol);
    for (size_t i = 0; i < s->cases.n; i++) {
        const conf_case *c = &s->cases.items[i];
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
            fprintf(out, "%s{\"data_set\": %u, \"index\": %u, \"name\": ", k ? ", " : "", f->data_set,
                    f->index);
            pc_json_string(out, f->name);
            fputs(", \"op\": ", out);
            pc_json_string(out, f->op);
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
        fprintf(out, "]}%s\n", i + 1 < s->cases.n ? "," : "");
    }
    fprintf(out,
            " ],\n \"summary\": {\"cases\": %zu, \"passed\": %zu, \"failed\": %zu, \"skipped\": %zu, "
            "\"seconds\": %.3f",
            s->cases.n, s->passed, s->failed, s->skipped, s->seconds);
    for (int o = 0; o < OUTCOME_COUNT; o++)
        fprintf(out, ", \"%s\": %zu", outcome_names[o], s->counts[o]);
    fputs("}}\n", out);
}

void pc_conformance_write_junit(FILE *out, const void *ctx)
{
    const pc_conformance *s = ctx;
    size_t errors = s->counts[OUTCOME_LOAD_ERROR] + s->counts[OUTCOME_RUN_ERROR];
    size_t failures = s->counts[OUTCOME_DIFFERS] + s->counts[OUTCOME_SHAPE] + s->counts[OUTCOME_TYPE];
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
            "<testsuite name=\"passcheck conformance (%s)\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
            "skipped=\"%zu\" time=\"%.3f\">\n",
            s->o.executor, s->cases.n, failures, errors, s->skipped, s->seconds);
    for (size_t i = 0; i < s->cases.n; i++) {
        const conf_case *c = &s->cases.items[i];
        const char *slash = strchr(c->name, '/');
        fputs("  <testcase classname=\"", out);
        if (slash) {
            /* classname is the test set ("node"), name the case ("test_abs") */
            char *set = strndup(c->name, (size_t)(slash - c->name));
            pc_xml_escape(out, set ? set : "", PC_XML_ATTRIBUTE);
            free(set);
        } else {
            fputs("conformance", out);
        }
        fputs("\" name=\"", out);
        pc_xml_escape(out, slash ? slash + 1 : c->name, PC_XML_ATTRIBUTE);
        fprintf(out, "\" time=\"%.6f\"", c->res.seconds);
        outcome o = c->res.outcome;
        if (o == OUTCOME_PASSED) {
            fputs("/>\n", out);
            continue;
        }
        const char *element = outcome_is_skip(o)                                  ? "skipped"
                              : o == OUTCOME_LOAD_ERROR || o == OUTCOME_RUN_ERROR ? "error"
                                                                                  : "failure";
        fprintf(out, ">\n    <%s type=\"%s\" message=\"", element, outcome_names[o]);
        pc_xml_escape(out, c->res.message, PC_XML_ATTRIBUTE);
        fputs("\">", out);
        pc_xml_escape(out, c->res.message, PC_XML_TEXT);
        for (size_t k = 0; k < c->res.n_failures; k++) {
            const output_failure *f = &c->res.failures[k];
            fprintf(out, "\noutput %u '", f->index);
            pc_xml_escape(out, f->name, PC_XML_TEXT);
            fprintf(out, "' (data set %u): max abs error %g, worst index %" PRIu64 ": ", f->data_set,
                    f->cmp.max_abs_error, f->cmp.worst_index);
            pc_xml_escape(out, f->cmp.detail, PC_XML_TEXT);
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
    size_t cases, passed, failed, not_blamed, unsupported;
} op_stat;

/* Whether a failed case's failure is the op's: the op made one of its failing outputs. A failure that names
 * no maker among the case's ops (a load or run error, an output no node made, a maker the optimizer created)
 * is every op's. */
static bool op_blamed(const case_result *r, const char *op)
{
    if (!outcome_is_failure(r->outcome)) return false;
    bool attributed = r->n_failures > 0, blamed = false;
    for (size_t i = 0; i < r->n_failures; i++) {
        const char *maker = r->failures[i].op;
        bool listed = false;
        for (size_t k = 0; k < r->ops.n && !listed; k++)
            listed = strcmp(r->ops.items[k], maker) == 0;
        attributed = attributed && listed;
        blamed = blamed || strcmp(maker, op) == 0;
    }
    return !attributed || blamed;
}

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
            else if (op_blamed(r, s->op))
                s->failed++;
            else
                s->not_blamed++;
        }
    }
    if (n) qsort(stats, n, sizeof *stats, op_stat_cmp);
    printf("per-op results (%zu ops; failed: a failing output is the op's, or the failure names none; "
           "not-blamed: the case failed on another op's output):\n  %-36s %6s %6s %6s %10s %11s\n",
           n, "op", "cases", "passed", "failed", "not-blamed", "unsupported");
    for (size_t j = 0; j < n; j++)
        printf("  %-36s %6zu %6zu %6zu %10zu %11zu\n", stats[j].op, stats[j].cases, stats[j].passed,
               stats[j].failed, stats[j].not_blamed, stats[j].unsupported);
out:
    free(stats);
}

/* ---------------------------------------------------------------------------------------------------------------
 * The run.
 */
/* A case listed in the --errata file whose outcome is the listed one becomes "erratum" (a skip, not a
 * failure), with the reason in front of the message. Any other outcome stands: a fixed erratum shows up as
 * passed, a new kind of failure as that failure. */
static void apply_erratum(conf_case *c, expectation_list *errata)
{
    expectation *e = expectation_find(errata, c->name);
    if (!e) return;
    /* the entries of one case are adjacent (sorted by name); take the one of this outcome, if any */
    while (e > errata->items && strcmp(e[-1].name, c->name) == 0)
        e--;
    expectation *end = errata->items + errata->n, *match = NULL;
    for (expectation *x = e; x < end && strcmp(x->name, c->name) == 0; x++) {
        x->seen = true;
        if (x->outcome == c->res.outcome) match = x;
    }
    if (c->res.outcome == OUTCOME_PASSED)
        fprintf(stderr,
                NOTE_PREFIX "note: %s passes; its --errata entry (line %u) does not apply to this run "
                            "(stale, or for another engine)\n",
                c->name, e->line);
    if (!match) return;
    e = match;
    char was[sizeof c->res.message];
    memcpy(was, c->res.message, sizeof was);
    set_outcome(&c->res, OUTCOME_ERRATUM, "data erratum (%s): %s", e->reason, was);
}

/* Compares the outcomes with the expectation file and prints every mismatch. Returns the number of
 * mismatches. */
static size_t check_expectations(const case_list *cases, expectation_list *expect, const char *path,
                                 const regex_t *filter)
{
    size_t mismatches = 0;
    for (size_t i = 0; i < cases->n; i++) {
        const conf_case *c = &cases->items[i];
        expectation *e = expectation_find(expect, c->name);
        if (!e) {
            printf("EXPECTATION %s: not listed in %s, got %s\n", c->name, path,
                   outcome_names[c->res.outcome]);
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
        printf("EXPECTATION %s: listed in %s (line %u, %s) but no such case was run\n", e->name, path,
               e->line, outcome_names[e->outcome]);
        mismatches++;
    }
    return mismatches;
}

void pc_conformance_options_default(pc_conformance_options *o)
{
    memset(o, 0, sizeof *o);
    o->executor = "reference";
    o->timeout = PC_CONFORMANCE_DEFAULT_TIMEOUT;
    o->optimize_level = -1;
    o->rtol = CONFORMANCE_RTOL;
    o->atol = CONFORMANCE_ATOL;
}

static void case_list_free(case_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].dir);
        free(l->items[i].name);
        case_result_free(&l->items[i].res);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}

void pc_conformance_free(pc_conformance *c)
{
    if (!c) return;
    if (c->have_filter) regfree(&c->filter);
    case_list_free(&c->cases);
    expectations_free(&c->expect);
    expectations_free(&c->errata);
    free(c->tolerances.items);
    free(c);
}

pc_status pc_conformance_open(const pc_conformance_options *o, const char *const *dirs, size_t n_dirs,
                              pc_conformance **out, pc_error *err)
{
    *out = NULL;
    if (strcmp(o->executor, "reference") != 0 && strcmp(o->executor, "runtime") != 0)
        return pc_error_set(err, PC_ERR_USAGE, "unknown executor '%s' (available: reference, runtime)",
                            o->executor);
    pc_conformance *c = calloc(1, sizeof *c);
    if (!c) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    c->o = *o;
    case_list all = {0};
    pc_status st = PC_OK;
    if (o->filter) {
        int e = regcomp(&c->filter, o->filter, REG_EXTENDED | REG_NOSUB);
        if (e != 0) {
            char why[256];
            regerror(e, &c->filter, why, sizeof why);
            st = pc_error_set(err, PC_ERR_USAGE, "bad --filter regex '%s': %s", o->filter, why);
            goto done;
        }
        c->have_filter = true;
    }
    if (!n_dirs) {
        st = pc_error_set(err, PC_ERR_USAGE, "missing DIR");
        goto done;
    }
    for (size_t i = 0; i < n_dirs && st == PC_OK; i++)
        st = discover(dirs[i], &all, err);
    if (st != PC_OK) goto done;
    /* Names key the expectation file, so two cases must never share one. */
    for (size_t i = 0; i < all.n; i++)
        for (size_t j = i + 1; j < all.n; j++)
            if (strcmp(all.items[i].name, all.items[j].name) == 0) {
                st = pc_error_set(err, PC_ERR_USAGE, "case %s found twice (%s and %s)", all.items[i].name,
                                  all.items[i].dir, all.items[j].dir);
                goto done;
            }
    if (o->expect && (st = expectations_load(o->expect, "--expect", false, &c->expect, err)) != PC_OK)
        goto done;
    if (o->errata && (st = expectations_load(o->errata, "--errata", true, &c->errata, err)) != PC_OK)
        goto done;
    if (o->tolerances && (st = tolerances_load(o->tolerances, &c->tolerances, err)) != PC_OK) goto done;

    /* The selected cases move to c->cases; the rest are released now. */
    c->cases.items = calloc(all.n ? all.n : 1, sizeof *c->cases.items);
    if (!c->cases.items) {
        st = pc_error_set(err, PC_ERR_NOMEM, "out of memory");
        goto done;
    }
    c->cases.cap = all.n;
    for (size_t i = 0; i < all.n; i++) {
        if (!c->have_filter || regexec(&c->filter, all.items[i].name, 0, NULL, 0) == 0) {
            c->cases.items[c->cases.n++] = all.items[i];
        } else {
            free(all.items[i].dir);
            free(all.items[i].name);
        }
    }
    all.n = 0;
done:
    case_list_free(&all);
    if (st != PC_OK) {
        pc_conformance_free(c);
        return st;
    }
    *out = c;
    return PC_OK;
}

int pc_conformance_run(pc_conformance *c)
{
    const pc_conformance_options *o = &c->o;
    if (c->have_filter && !c->cases.n)
        fprintf(stderr, NOTE_PREFIX "no case matches --filter '%s'\n", o->filter);
    double t0 = pc_now_seconds();
    for (size_t i = 0; i < c->cases.n; i++) {
        conf_case *k = &c->cases.items[i];
        run_case(k, o, &c->tolerances);
        apply_erratum(k, &c->errata);
        outcome oc = k->res.outcome;
        c->counts[oc]++;
        if (outcome_is_failure(oc)) {
            c->failed++;
            printf("FAIL %s: %s: %s\n", k->name, outcome_names[oc], k->res.message);
        } else if (outcome_is_skip(oc)) {
            c->skipped++;
            if (!o->quiet) printf("SKIP %s: %s: %s\n", k->name, outcome_names[oc], k->res.message);
        } else {
            c->passed++;
        }
        fflush(stdout);
    }
    c->seconds = pc_now_seconds() - t0;
    if (!o->quiet) print_op_stats(&c->cases);
    printf("conformance: %zu cases, %s executor, %.2f s\n", c->cases.n, o->executor, c->seconds);
    printf("%zu passed, %zu failed, %zu skipped\n", c->passed, c->failed, c->skipped);
    if (!o->expect) return c->failed || (o->strict && c->skipped) ? PC_EXIT_CHECK_FAILED : PC_EXIT_OK;
    size_t mismatches =
        check_expectations(&c->cases, &c->expect, o->expect, c->have_filter ? &c->filter : NULL);
    if (mismatches)
        printf("expectations: %zu mismatches against %s (update it deliberately with --write-expect)\n",
               mismatches, o->expect);
    else
        printf("expectations: all %zu outcomes as listed in %s\n", c->cases.n, o->expect);
    return mismatches ? PC_EXIT_CHECK_FAILED : PC_EXIT_OK;
}
