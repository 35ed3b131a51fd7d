/* Bad-input catalogue for the ONNX loader (the classes docs/loader.md lists).
 *
 * A valid baseline model (input x float[2,3], initializer W float[2,3], node n1 = Add(x, W) -> y, ai.onnx 13,
 * ir_version 8) is built with the protobuf-c structs (tests/onnx_builder.h), packed and loaded. Each test
 * then makes one minimal mutation (or hand-crafts bytes for wire-level classes) and asserts the exact
 * pc_status and that the error message names the offending node, value, field or number. Loops cover every
 * prefix of the baseline, single-byte corruptions, memory budgets and OOM injection at every allocation.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/onnx_builder.h"
#include "tests/test_util.h"

/* Regression tests for loader bugs this file found (all fixed): data counts checked before allocating,
 * subgraph names shadowing enclosing ones, duplicate and recursive model-local functions, a NULL error
 * record, and string copies failing under OOM injection. */
static void test_regression_data_count_after_allocation(void);
static void test_regression_subgraph_shadowing(void);
static void test_regression_duplicate_function_id(void);
static void test_regression_recursive_function(void);
static void test_regression_oom_in_string_copies(void);

/* ---- helpers ------------------------------------------------------------------------------------------- */

static bool verbose; /* PC_TEST_VERBOSE=1: print every status and message */

static bool msg_has(const char *message, const char *needle)
{
    return needle == NULL || strstr(message, needle) != NULL;
}

/* Loads bytes; on success frees the model. Checks the out-pointer and error-record contract either way. */
static pc_status load_bytes(const void *data, size_t size, const pc_load_options *opts, pc_error *err)
{
    static int sentinel;
    pc_model *m = (pc_model *)(void *)&sentinel;
    pc_error_clear(err);
    pc_status st = pc_model_load_bytes(data, size, opts, &m, err);
    if (st == PC_OK) {
        CHECK(m != NULL && m != (pc_model *)(void *)&sentinel);
        pc_model_free(m);
    } else {
        CHECK_MSG(m == NULL, "out pointer not cleared on failure (%s)", pc_status_name(st));
        CHECK_MSG(err->status == st, "err.status %s, returned %s", pc_status_name(err->status),
                  pc_status_name(st));
        CHECK_MSG(err->message[0] != '\0', "empty error message for %s", pc_status_name(st));
    }
    return st;
}

/* Loads `data`; asserts the status and that the message contains needle1 and needle2 (either may be NULL). */
#define EXPECT_BYTES(data, size, opts, expected, needle1, needle2)                                           \
    do {                                                                                                     \
        pc_error e_;                                                                                         \
        CHECK_STATUS(load_bytes((data), (size), (opts), &e_), (expected), &e_);                              \
        if (verbose) printf("%s:%d: %s: %s\n", __func__, __LINE__, pc_status_name(e_.status), e_.message);   \
        CHECK_MSG(msg_has(e_.message, (needle1)), "message \"%s\" does not name \"%s\"", e_.message,         \
                  (needle1) ? (needle1) : "");                                                               \
        CHECK_MSG(msg_has(e_.message, (needle2)), "message \"%s\" does not name \"%s\"", e_.message,         \
                  (needle2) ? (needle2) : "");                                                               \
    } while (0)

/* Packs the model of a builder and runs EXPECT_BYTES with default options. */
#define EXPECT_MODEL(bl, expected, needle1, needle2)                                                         \
    do {                                                                                                     \
        size_t n_;                                                                                           \
        const uint8_t *d_ = ob_pack(&(bl)->p, &(bl)->m->base, &n_);                                          \
        EXPECT_BYTES(d_, n_, NULL, (expected), (needle1), (needle2));                                        \
    } while (0)

static const int64_t dims23[] = {2, 3};
static const float w_values[] = {1, 2, 3, 4, 5, 6};

/* The valid baseline and handles on the parts tests mutate. */
typedef struct baseline {
    ob_pool p;
    Onnx__ModelProto *m;
    Onnx__OperatorSetIdProto *opset;
    Onnx__GraphProto *g;
    Onnx__ValueInfoProto *x; /* graph input */
    Onnx__TensorProto *w;    /* initializer */
    Onnx__NodeProto *n1;     /* Add(x, W) -> y */
    Onnx__ValueInfoProto *y; /* graph output */
} baseline;

static void baseline_build(baseline *b)
{
    memset(b, 0, sizeof *b);
    ob_pool *p = &b->p;
    b->m = ob_model(p, 8);
    b->m->producer_name = ob_strdup(p, "test_onnx_bad_inputs");
    b->opset = ob_opset(p, b->m, "", 13);
    b->g = ob_graph(p, b->m, "main");
    b->x = ob_graph_input(p, b->g, "x", ob_tensor_type(p, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dims23));
    b->w = ob_float_tensor(p, b->g, "W", 2, dims23, w_values);
    b->n1 = ob_node(p, b->g, "Add", "n1", 2, (const char *const[]){"x", "W"}, 1, (const char *const[]){"y"});
    b->y = ob_graph_output(p, b->g, "y", ob_tensor_type(p, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dims23));
}

static void baseline_free(baseline *b)
{
    ob_pool_free(&b->p);
}

/* Clears every data field of a tensor. */
static void tensor_clear_data(Onnx__TensorProto *t)
{
    t->n_float_data = 0;
    t->float_data = NULL;
    t->n_int64_data = 0;
    t->int64_data = NULL;
    t->has_raw_data = 0;
    t->raw_data.len = 0;
    t->raw_data.data = NULL;
}

/* Model bytes = ir_version, graph (the packed GraphProto of b followed by `graph_tail`, raw fields appended
 * to the graph message), opset imports of b. Used to put hand-crafted fields inside the graph. */
static void model_with_graph_tail(baseline *b, const ob_buf *graph_tail, ob_buf *out)
{
    size_t glen;
    const uint8_t *g = ob_pack(&b->p, &b->g->base, &glen);
    ob_buf_uint(out, 1, (uint64_t)b->m->ir_version);
    ob_buf_key(out, 7, OB_WT_LEN);
    ob_buf_varint(out, glen + graph_tail->n);
    ob_buf_raw(out, g, glen);
    ob_buf_raw(out, graph_tail->d, graph_tail->n);
    for (size_t i = 0; i < b->m->n_opset_import; i++) {
        size_t olen;
        const uint8_t *o = ob_pack(&b->p, &b->m->opset_import[i]->base, &olen);
        ob_buf_len(out, 8, o, olen);
    }
}

/* Replaces the first occurrence of `marker` (a unique string in the packed bytes) by itself with its
 * character at `index` set to NUL. */
static bool poke_nul(uint8_t *data, size_t size, const char *marker, size_t index)
{
    size_t n = strlen(marker);
    for (size_t i = 0; i + n <= size; i++)
        if (memcmp(data + i, marker, n) == 0) {
            data[i + index] = 0;
            return true;
        }
    return false;
}

/* ---- baseline ------------------------------------------------------------------------------------------ */

static void test_baseline_ok(void)
{
    baseline b;
    baseline_build(&b);
    size_t n;
    const uint8_t *d = ob_pack(&b.p, &b.m->base, &n);
    pc_error err;
    pc_model *m = NULL;
    CHECK_OK(pc_model_load_bytes(d, n, NULL, &m, &err), &err);
    if (m) {
        CHECK(m->ir_version == 8);
        CHECK(pc_model_opset(m, "") == 13);
        CHECK(m->graph->n_nodes == 1);
        CHECK(m->graph->first && strcmp(m->graph->first->op_type, "Add") == 0);
        CHECK(m->graph->n_inputs == 1 && m->graph->n_outputs == 1 && m->graph->n_initializers == 1);
        const pc_value *w = pc_graph_find_value(m->graph, "W");
        CHECK(w && w->initializer && w->initializer->n_bytes == 24);
        if (w && w->initializer && w->initializer->data) {
            float f[6];
            memcpy(f, w->initializer->data, sizeof f);
            CHECK(f[0] == 1.0f && f[5] == 6.0f);
        }
        pc_model_free(m);
    }
    baseline_free(&b);
}

/* ---- container and wire level -------------------------------------------------------------------------- */

static void test_empty_input(void)
{
    static const uint8_t one[1] = {0};
    EXPECT_BYTES(one, 0, NULL, PC_ERR_TRUNCATED, "empty", NULL);
    EXPECT_BYTES(NULL, 0, NULL, PC_ERR_TRUNCATED, "empty", NULL);
}

/* Offsets at which a top-level field of a (valid) message ends: prefixes cut there are complete messages. */
static void top_level_boundaries(const uint8_t *d, size_t n, bool *boundary)
{
    size_t i = 0;
    while (i < n) {
        uint64_t key = 0;
        for (unsigned s = 0; i < n; s += 7) {
            uint8_t c = d[i++];
            key |= (uint64_t)(c & 0x7f) << s;
            if (c < 0x80) break;
        }
        uint64_t v = 0;
        switch (key & 7) {
        case 0:
            while (i < n && (d[i++] & 0x80)) {
            }
            break;
        case 1:
            i += 8;
            break;
        case 5:
            i += 4;
            break;
        case 2:
            for (unsigned s = 0; i < n; s += 7) {
                uint8_t c = d[i++];
                v |= (uint64_t)(c & 0x7f) << s;
                if (c < 0x80) break;
            }
            i += (size_t)v;
            break;
        default:
            return;
        }
        if (i <= n) boundary[i] = true;
    }
}

static void test_truncated_prefixes(void)
{
    baseline b;
    baseline_build(&b);
    size_t n;
    const uint8_t *d = ob_pack(&b.p, &b.m->base, &n);
    bool *boundary = calloc(n + 1, sizeof *boundary);
    if (!boundary) abort();
    top_level_boundaries(d, n, boundary);
    CHECK(boundary[n]);
    int mid_field = 0, at_boundary = 0;
    for (size_t len = 0; len < n; len++) {
        /* a private copy of exactly len bytes, so ASan catches any read past the prefix */
        uint8_t *cut = malloc(len ? len : 1);
        if (!cut) abort();
        memcpy(cut, d, len);
        pc_error err;
        pc_status st = load_bytes(cut, len, NULL, &err);
        CHECK_MSG(st != PC_OK, "prefix of %zu/%zu bytes loaded OK", len, n);
        if (len == 0 || !boundary[len]) {
            mid_field++;
            CHECK_MSG(st == PC_ERR_TRUNCATED, "prefix of %zu/%zu bytes: %s (%s), expected truncated", len, n,
                      pc_status_name(st), err.message);
        } else {
            /* a complete message missing its later fields: no graph, or no opset import */
            at_boundary++;
            CHECK_MSG(st == PC_ERR_MISSING_FIELD || st == PC_ERR_OPSET, "prefix of %zu/%zu bytes: %s (%s)",
                      len, n, pc_status_name(st), err.message);
        }
        free(cut);
    }
    CHECK(mid_field > 100 && at_boundary >= 2);
    free(boundary);
    baseline_free(&b);
}

static void test_garbage_bytes(void)
{
    static const char text[] = "GARBAGE: this is not an ONNX model at all";
    /* 'G' = 0x47: field 8, wire type 7 */
    EXPECT_BYTES(text, sizeof text - 1, NULL, PC_ERR_WIRE, "wire type 7", NULL);
    static const uint8_t zeros[16] = {0};
    EXPECT_BYTES(zeros, sizeof zeros, NULL, PC_ERR_WIRE, "field number", NULL);

    /* Pseudo-random buffers: never OK, never a crash (ASan/UBSan watch). */
    uint64_t s = 0x9e3779b97f4a7c15u;
    uint8_t buf[512];
    int ok = 0;
    for (int iter = 0; iter < 3000; iter++) {
        size_t len = 1 + (size_t)(iter % (int)sizeof buf);
        for (size_t i = 0; i < len; i++) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            buf[i] = (uint8_t)(s >> 24);
        }
        pc_error err;
        if (load_bytes(buf, len, NULL, &err) == PC_OK) ok++;
    }
    CHECK_MSG(ok == 0, "%d random buffers loaded OK", ok);
}

/* Every single-byte corruption of the baseline: any status, but never a crash, leak or sanitizer report, and
 * a failure always comes with a message. */
static void test_corrupted_bytes(void)
{
    baseline b;
    baseline_build(&b);
    size_t n;
    const uint8_t *d = ob_pack(&b.p, &b.m->base, &n);
    uint8_t *copy = malloc(n);
    if (!copy) abort();
    static const uint8_t patterns[] = {0x00, 0xff, 0x80, 0x7f, 0x01};
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < sizeof patterns + 1; k++) {
            memcpy(copy, d, n);
            copy[i] = k < sizeof patterns ? patterns[k] : (uint8_t)(copy[i] ^ 0x40);
            pc_error err;
            (void)load_bytes(copy, n, NULL, &err);
        }
    free(copy);
    baseline_free(&b);
}

static void test_overlong_varint(void)
{
    baseline b;
    baseline_build(&b);
    size_t n;
    const uint8_t *d = ob_pack(&b.p, &b.m->base, &n);
    ob_buf buf = {0};
    ob_buf_key(&buf, 1, OB_WT_VARINT); /* ir_version */
    for (int i = 0; i < 10; i++)
        ob_buf_byte(&buf, 0x88);
    ob_buf_byte(&buf, 0x00); /* 11th byte */
    ob_buf_raw(&buf, d, n);
    EXPECT_BYTES(buf.d, buf.n, NULL, PC_ERR_VARINT, "ir_version", "longer than 10 bytes");
    ob_buf_free(&buf);

    /* A key longer than 5 bytes. */
    static const uint8_t long_key[] = {0x88, 0x80, 0x80, 0x80, 0x80, 0x00, 0x08};
    EXPECT_BYTES(long_key, sizeof long_key, NULL, PC_ERR_VARINT, "key", NULL);
    baseline_free(&b);
}

static void test_huge_length_prefix(void)
{
    ob_buf buf = {0};
    ob_buf_uint(&buf, 1, 8);
    ob_buf_key(&buf, 7, OB_WT_LEN); /* graph */
    ob_buf_varint(&buf, 0xFFFFFFFFu);
    for (int i = 0; i < 32; i++)
        ob_buf_byte(&buf, 0);
    EXPECT_BYTES(buf.d, buf.n, NULL, PC_ERR_LENGTH, "graph", "4294967295");
    ob_buf_free(&buf);

    /* A nested length running past its enclosing message (graph of 4 bytes holding a 100-byte node). */
    static const uint8_t nested[] = {0x08, 0x08, 0x3a, 0x04, 0x0a, 0x64, 0x00, 0x00};
    EXPECT_BYTES(nested, sizeof nested, NULL, PC_ERR_LENGTH, "node", NULL);
}

/* Graph input "s" whose type is a chain of `depth` TypeProto.sequence_type levels around a float tensor type,
 * written as raw bytes from the outside in (lengths computed from the inside out; no recursion). */
static void nested_sequence_input(size_t depth, ob_buf *out)
{
    static const uint8_t leaf[] = {0x0a, 0x02, 0x08, 0x01}; /* TypeProto{tensor_type{elem_type: FLOAT}} */
    size_t *tp_len = malloc((depth + 1) * sizeof *tp_len);
    size_t *seq_len = malloc((depth + 1) * sizeof *seq_len);
    if (!tp_len || !seq_len) abort();
    tp_len[0] = sizeof leaf;
    for (size_t k = 1; k <= depth; k++) {
        seq_len[k] = 1 + ob_varint_size(tp_len[k - 1]) + tp_len[k - 1]; /* Sequence{elem_type = 1} */
        tp_len[k] = 1 + ob_varint_size(seq_len[k]) + seq_len[k];        /* TypeProto{sequence_type = 4} */
    }
    size_t vi_len = 3 + 1 + ob_varint_size(tp_len[depth]) + tp_len[depth]; /* name "s", type */
    ob_buf_key(out, 11, OB_WT_LEN);                                        /* GraphProto.input */
    ob_buf_varint(out, vi_len);
    ob_buf_str(out, 1, "s");
    ob_buf_key(out, 2, OB_WT_LEN);
    ob_buf_varint(out, tp_len[depth]);
    for (size_t k = depth; k >= 1; k--) {
        ob_buf_key(out, 4, OB_WT_LEN);
        ob_buf_varint(out, seq_len[k]);
        ob_buf_key(out, 1, OB_WT_LEN);
        ob_buf_varint(out, tp_len[k - 1]);
    }
    ob_buf_raw(out, leaf, sizeof leaf);
    free(tp_len);
    free(seq_len);
}

static void test_nesting_bomb(void)
{
    /* shallow chain: loads, and the chain is really there */
    {
        baseline b;
        baseline_build(&b);
        ob_buf tail = {0}, model = {0};
        nested_sequence_input(10, &tail);
        model_with_graph_tail(&b, &tail, &model);
        pc_error err;
        pc_model *m = NULL;
        CHECK_OK(pc_model_load_bytes(model.d, model.n, NULL, &m, &err), &err);
        if (m) {
            const pc_value *s = pc_graph_find_value(m->graph, "s");
            int levels = 0;
            for (const pc_type *t = s ? &s->type : NULL; t && t->kind == PC_TYPE_SEQUENCE; t = t->inner)
                levels++;
            CHECK(levels == 10);
            pc_model_free(m);
        }
        ob_buf_free(&tail);
        ob_buf_free(&model);
        baseline_free(&b);
    }
    /* 10,000 levels */
    baseline b;
    baseline_build(&b);
    ob_buf tail = {0}, model = {0};
    nested_sequence_input(10000, &tail);
    model_with_graph_tail(&b, &tail, &model);
    EXPECT_BYTES(model.d, model.n, NULL, PC_ERR_NESTING, "TypeProto", "nesting limit of 64");
    /* a lower configured limit applies as well */
    pc_load_options o;
    pc_load_options_default(&o);
    o.max_depth = 8;
    ob_buf_free(&tail);
    ob_buf_free(&model);
    nested_sequence_input(10, &tail);
    model_with_graph_tail(&b, &tail, &model);
    EXPECT_BYTES(model.d, model.n, &o, PC_ERR_NESTING, "nesting limit of 8", NULL);
    ob_buf_free(&tail);
    ob_buf_free(&model);
    baseline_free(&b);
}

static void test_amplification(void)
{
    enum { N_EMPTY = 200000 };
    baseline b;
    baseline_build(&b);
    ob_buf tail = {0}, model = {0};
    for (int i = 0; i < N_EMPTY; i++) {
        ob_buf_key(&tail, 5, OB_WT_LEN); /* GraphProto.initializer, empty */
        ob_buf_byte(&tail, 0);
    }
    model_with_graph_tail(&b, &tail, &model);
    pc_load_options o;
    pc_load_options_default(&o);
    o.max_messages = 1000;
    EXPECT_BYTES(model.d, model.n, &o, PC_ERR_BUDGET, "initializer", "1000");
    /* the memory budget stops the same amplification when the message budget is generous */
    pc_load_options_default(&o);
    o.memory_budget = 4u << 20;
    EXPECT_BYTES(model.d, model.n, &o, PC_ERR_BUDGET, "memory budget", NULL);
    /* with default limits it unpacks, and the first empty initializer (index 1) is rejected by name */
    EXPECT_BYTES(model.d, model.n, NULL, PC_ERR_MISSING_FIELD, "initializer 1 has no name", NULL);
    ob_buf_free(&tail);
    ob_buf_free(&model);
    baseline_free(&b);
}

static void test_memory_budget(void)
{
    baseline b;
    baseline_build(&b);
    /* a 64 KiB initializer, so the budget matters */
    enum { BIG = 128 * 128 };
    float *big = calloc(BIG, sizeof *big);
    if (!big) abort();
    const int64_t bdims[] = {128, 128};
    Onnx__TensorProto *t = ob_tensor(&b.p, "B", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, bdims);
    ob_tensor_set_raw(&b.p, t, BIG * sizeof *big, big);
    free(big);
    OB_APPEND(&b.p, b.g->initializer, b.g->n_initializer, t);
    size_t n;
    const uint8_t *d = ob_pack(&b.p, &b.m->base, &n);
    pc_load_options o;
    pc_load_options_default(&o);
    o.memory_budget = 64;
    EXPECT_BYTES(d, n, &o, PC_ERR_BUDGET, "memory budget", NULL);
    o.memory_budget = 32 * 1024; /* below the initializer alone */
    EXPECT_BYTES(d, n, &o, PC_ERR_BUDGET, "budget", NULL);
    /* sweep: every budget either loads or reports over-budget, and a large enough one loads */
    bool loaded = false;
    for (size_t budget = 1024; budget < ((size_t)64 << 20) && !loaded; budget += budget / 8) {
        o.memory_budget = budget;
        pc_error err;
        pc_status st = load_bytes(d, n, &o, &err);
        CHECK_MSG(st == PC_OK || st == PC_ERR_BUDGET, "budget %zu: %s (%s)", budget, pc_status_name(st),
                  err.message);
        loaded = st == PC_OK;
    }
    CHECK(loaded);
    baseline_free(&b);
}

/* ---- tensor data --------------------------------------------------------------------------------------- */

static void test_raw_data_size(void)
{
    baseline b;
    baseline_build(&b);
    tensor_clear_data(b.w);
    uint8_t bytes[24] = {0};
    ob_tensor_set_raw(&b.p, b.w, 20, bytes);
    EXPECT_MODEL(&b, PC_ERR_DATA_SIZE, "initializer 'W'", "raw_data has 20 bytes");
    ob_tensor_set_raw(&b.p, b.w, 24, bytes); /* sanity: the right size loads */
    EXPECT_MODEL(&b, PC_OK, NULL, NULL);
    /* sub-byte type: 5 int4 elements need ceil(20/8) = 3 bytes */
    const int64_t d5[] = {5};
    Onnx__TensorProto *q = ob_tensor(&b.p, "Q", ONNX__TENSOR_PROTO__DATA_TYPE__INT4, 1, d5);
    ob_tensor_set_raw(&b.p, q, 5, bytes);
    OB_APPEND(&b.p, b.g->initializer, b.g->n_initializer, q);
    EXPECT_MODEL(&b, PC_ERR_DATA_SIZE, "initializer 'Q'", "need 3");
    baseline_free(&b);
}

static void test_typed_data_count(void)
{
    baseline b;
    baseline_build(&b);
    b.w->n_float_data = 5;
    EXPECT_MODEL(&b, PC_ERR_DATA_SIZE, "initializer 'W'", "float_data has 5 values");
    b.w->n_float_data = 0; /* no data at all for 6 elements */
    EXPECT_MODEL(&b, PC_ERR_DATA_SIZE, "initializer 'W'", "no data");
    baseline_free(&b);
}

static void test_negative_dim_tensor(void)
{
    baseline b;
    baseline_build(&b);
    b.w->dims[1] = -3;
    EXPECT_MODEL(&b, PC_ERR_NEGATIVE_DIM, "initializer 'W'", "dims[1]");
    baseline_free(&b);
}

static void test_negative_dim_value_info(void)
{
    baseline b;
    baseline_build(&b);
    b.x->type->tensor_type->shape->dim[1]->dim_value = -3;
    EXPECT_MODEL(&b, PC_ERR_NEGATIVE_DIM, "graph input 'x'", "-3");
    baseline_free(&b);

    baseline_build(&b);
    const int64_t neg[] = {2, -1};
    ob_graph_value_info(&b.p, b.g, "y", ob_tensor_type(&b.p, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, neg));
    EXPECT_MODEL(&b, PC_ERR_NEGATIVE_DIM, "value_info 'y'", "-1");
    baseline_free(&b);

    baseline_build(&b);
    b.y->type->tensor_type->shape->dim[0]->dim_value = INT64_MIN;
    EXPECT_MODEL(&b, PC_ERR_NEGATIVE_DIM, "graph output 'y'", NULL);
    baseline_free(&b);
}

static void test_element_count_overflow(void)
{
    baseline b;
    baseline_build(&b);
    b.w->dims[0] = (int64_t)1 << 62;
    b.w->dims[1] = 8;
    EXPECT_MODEL(&b, PC_ERR_OVERFLOW, "initializer 'W'", "overflow");
    /* the count fits in 64 bits (2^63) but its byte size does not */
    b.w->dims[1] = 2;
    EXPECT_MODEL(&b, PC_ERR_OVERFLOW, "initializer 'W'", "overflow");
    baseline_free(&b);
}

static void test_dtype(void)
{
    baseline b;
    baseline_build(&b);
    b.w->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__UNDEFINED;
    EXPECT_MODEL(&b, PC_ERR_DTYPE, "initializer 'W'", "UNDEFINED");
    b.w->data_type = 99;
    EXPECT_MODEL(&b, PC_ERR_DTYPE, "initializer 'W'", "99");
    b.w->has_data_type = 0;
    EXPECT_MODEL(&b, PC_ERR_DTYPE, "initializer 'W'", "data_type");
    b.w->has_data_type = 1;
    b.w->data_type = -1;
    EXPECT_MODEL(&b, PC_ERR_DTYPE, "initializer 'W'", "-1");
    baseline_free(&b);

    /* an element type outside the enum in a value's type */
    baseline_build(&b);
    b.x->type->tensor_type->elem_type = 99;
    EXPECT_MODEL(&b, PC_ERR_DTYPE, "graph input 'x'", "99");
    baseline_free(&b);
}

static void test_wrong_typed_field(void)
{
    baseline b;
    baseline_build(&b);
    tensor_clear_data(b.w);
    const int64_t v[6] = {1, 2, 3, 4, 5, 6};
    ob_tensor_set_int64s(&b.p, b.w, 6, v);
    EXPECT_MODEL(&b, PC_ERR_DTYPE, "initializer 'W'", "int64_data");
    baseline_free(&b);
}

static void test_multiple_data(void)
{
    baseline b;
    baseline_build(&b);
    uint8_t bytes[24] = {0};
    ob_tensor_set_raw(&b.p, b.w, 24, bytes);
    EXPECT_MODEL(&b, PC_ERR_MULTIPLE_DATA, "initializer 'W'", "float_data");
    baseline_free(&b);
}

/* ---- graph --------------------------------------------------------------------------------------------- */

static void test_duplicate_producer(void)
{
    baseline b;
    baseline_build(&b);
    ob_node(&b.p, b.g, "Add", "n2", 2, (const char *const[]){"x", "W"}, 1, (const char *const[]){"y"});
    EXPECT_MODEL(&b, PC_ERR_DUPLICATE_PRODUCER, "'y'", "n2");
    baseline_free(&b);

    baseline_build(&b);
    ob_node(&b.p, b.g, "Add", "n2", 2, (const char *const[]){"x", "x"}, 1, (const char *const[]){"W"});
    EXPECT_MODEL(&b, PC_ERR_DUPLICATE_PRODUCER, "'W'", "initializer");
    baseline_free(&b);

    baseline_build(&b);
    ob_node(&b.p, b.g, "Add", "n2", 2, (const char *const[]){"W", "W"}, 1, (const char *const[]){"x"});
    EXPECT_MODEL(&b, PC_ERR_DUPLICATE_PRODUCER, "'x'", "graph input");
    baseline_free(&b);

    /* one node listing the same output twice */
    baseline_build(&b);
    ob_node(&b.p, b.g, "Split", "s1", 1, (const char *const[]){"x"}, 2, (const char *const[]){"p", "p"});
    EXPECT_MODEL(&b, PC_ERR_DUPLICATE_PRODUCER, "'p'", "s1");
    baseline_free(&b);
}

static void test_dangling_input(void)
{
    baseline b;
    baseline_build(&b);
    b.n1->input[1] = ob_strdup(&b.p, "ghost");
    EXPECT_MODEL(&b, PC_ERR_DANGLING_INPUT, "node 'n1'", "'ghost'");
    baseline_free(&b);
}

static void test_unproduced_output(void)
{
    baseline b;
    baseline_build(&b);
    ob_graph_output(&b.p, b.g, "z", NULL);
    EXPECT_MODEL(&b, PC_ERR_UNPRODUCED_OUTPUT, "'z'", NULL);
    baseline_free(&b);
}

static void test_cycle(void)
{
    baseline b;
    baseline_build(&b);
    /* n1: Add(x, b) -> a; n2: Add(a, W) -> b */
    b.n1->input[1] = ob_strdup(&b.p, "b");
    b.n1->output[0] = ob_strdup(&b.p, "a");
    ob_node(&b.p, b.g, "Add", "n2", 2, (const char *const[]){"a", "W"}, 1, (const char *const[]){"b"});
    b.y->name = ob_strdup(&b.p, "b");
    {
        size_t n;
        const uint8_t *d = ob_pack(&b.p, &b.m->base, &n);
        pc_error e;
        CHECK_STATUS(load_bytes(d, n, NULL, &e), PC_ERR_CYCLE, &e);
        CHECK_MSG(strstr(e.message, "n1") || strstr(e.message, "n2"), "message \"%s\" names no node",
                  e.message);
    }
    baseline_free(&b);

    /* a node reading its own output */
    baseline_build(&b);
    b.n1->input[1] = ob_strdup(&b.p, "y");
    EXPECT_MODEL(&b, PC_ERR_CYCLE, "n1", NULL);
    baseline_free(&b);
}

static void test_out_of_order_acyclic(void)
{
    baseline b;
    baseline_build(&b);
    /* file order: n2 = Add(t, W) -> y, then n1 = Add(x, W) -> t */
    Onnx__NodeProto *n2 = b.n1;
    n2->name = ob_strdup(&b.p, "n2");
    n2->input[0] = ob_strdup(&b.p, "t");
    ob_node(&b.p, b.g, "Add", "n1", 2, (const char *const[]){"x", "W"}, 1, (const char *const[]){"t"});
    size_t n;
    const uint8_t *d = ob_pack(&b.p, &b.m->base, &n);
    pc_error err;
    pc_model *m = NULL;
    CHECK_OK(pc_model_load_bytes(d, n, NULL, &m, &err), &err);
    if (m) {
        const pc_node *first = m->graph->first;
        CHECK(first && strcmp(first->name, "n1") == 0);
        CHECK(first && first->next && strcmp(first->next->name, "n2") == 0);
        CHECK(first && first->next && !first->next->next);
        CHECK(m->graph->last && strcmp(m->graph->last->name, "n2") == 0);
        const pc_value *y = pc_graph_find_value(m->graph, "y");
        CHECK(y && y->producer && strcmp(y->producer->name, "n2") == 0);
        pc_model_free(m);
    }
    baseline_free(&b);
}

static void test_duplicate_initializer(void)
{
    baseline b;
    baseline_build(&b);
    ob_float_tensor(&b.p, b.g, "W", 2, dims23, w_values);
    EXPECT_MODEL(&b, PC_ERR_DUPLICATE_INITIALIZER, "'W'", NULL);
    baseline_free(&b);
}

static void test_duplicate_graph_input(void)
{
    baseline b;
    baseline_build(&b);
    ob_graph_input(&b.p, b.g, "x", ob_tensor_type(&b.p, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dims23));
    EXPECT_MODEL(&b, PC_ERR_DUPLICATE_NAME, "'x'", "graph input");
    baseline_free(&b);

    /* graph output listed twice */
    baseline_build(&b);
    ob_graph_output(&b.p, b.g, "y", ob_tensor_type(&b.p, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dims23));
    EXPECT_MODEL(&b, PC_ERR_DUPLICATE_NAME, "graph output 'y'", "twice");
    baseline_free(&b);

    /* value_info listed twice */
    baseline_build(&b);
    ob_graph_value_info(&b.p, b.g, "y", NULL);
    ob_graph_value_info(&b.p, b.g, "y", NULL);
    EXPECT_MODEL(&b, PC_ERR_DUPLICATE_NAME, "value_info 'y'", NULL);
    baseline_free(&b);
}

/* ---- attributes and schemas ---------------------------------------------------------------------------- */

static void test_duplicate_attribute(void)
{
    baseline b;
    baseline_build(&b);
    ob_attr_int(&b.p, b.n1, "alpha", 1);
    ob_attr_int(&b.p, b.n1, "alpha", 2);
    EXPECT_MODEL(&b, PC_ERR_DUPLICATE_NAME, "'alpha'", "n1");
    baseline_free(&b);
}

static void test_attribute_value_mismatch(void)
{
    baseline b;
    baseline_build(&b);
    Onnx__AttributeProto *a = ob_attr(&b.p, b.n1, "alpha", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_f = 1;
    a->f = 1.5f;
    EXPECT_MODEL(&b, PC_ERR_ATTRIBUTE_TYPE, "'alpha'", "n1");
    /* both i and f set with type INT */
    a->has_i = 1;
    a->i = 1;
    EXPECT_MODEL(&b, PC_ERR_ATTRIBUTE_TYPE, "'alpha'", NULL);
    /* declared INT, nothing set */
    a->has_i = 0;
    a->has_f = 0;
    EXPECT_MODEL(&b, PC_ERR_ATTRIBUTE_TYPE, "'alpha'", "no value");
    baseline_free(&b);
}

static void test_attribute_type_enum(void)
{
    baseline b;
    baseline_build(&b);
    Onnx__AttributeProto *a = ob_attr(&b.p, b.n1, "alpha", 99);
    a->has_i = 1;
    a->i = 1;
    EXPECT_MODEL(&b, PC_ERR_ENUM, "'alpha'", "99");
    a->type = (Onnx__AttributeProto__AttributeType)-2;
    EXPECT_MODEL(&b, PC_ERR_ENUM, "'alpha'", "-2");
    baseline_free(&b);
}

static void test_attribute_schema_type(void)
{
    baseline b;
    baseline_build(&b);
    b.n1->op_type = ob_strdup(&b.p, "Conv");
    b.n1->name = ob_strdup(&b.p, "c1");
    ob_attr_int(&b.p, b.n1, "kernel_shape", 3);
    EXPECT_MODEL(&b, PC_ERR_ATTRIBUTE_TYPE, "kernel_shape", "c1");
    baseline_free(&b);
}

static void test_unknown_attribute(void)
{
    baseline b;
    baseline_build(&b);
    ob_attr_int(&b.p, b.n1, "foo", 1);
    EXPECT_MODEL(&b, PC_ERR_ATTRIBUTE, "'foo'", "n1");
    baseline_free(&b);
}

static void test_missing_required_attribute(void)
{
    baseline b;
    baseline_build(&b);
    b.n1->op_type = ob_strdup(&b.p, "Cast");
    b.n1->name = ob_strdup(&b.p, "cast1");
    b.n1->n_input = 1;
    EXPECT_MODEL(&b, PC_ERR_ATTRIBUTE, "'to'", "cast1");
    ob_attr_int(&b.p, b.n1, "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT); /* sanity */
    EXPECT_MODEL(&b, PC_OK, NULL, NULL);
    baseline_free(&b);
}

static void test_wrong_arity(void)
{
    baseline b;
    baseline_build(&b);
    ob_node_add_input(&b.p, b.n1, "x");
    EXPECT_MODEL(&b, PC_ERR_ARITY, "n1", "3 inputs");
    b.n1->n_input = 1;
    EXPECT_MODEL(&b, PC_ERR_ARITY, "n1", "1 inputs");
    b.n1->n_input = 2;
    OB_APPEND(&b.p, b.n1->output, b.n1->n_output, ob_strdup(&b.p, "y2"));
    EXPECT_MODEL(&b, PC_ERR_ARITY, "n1", "2 outputs");
    baseline_free(&b);
}

static void test_unknown_op(void)
{
    baseline b;
    baseline_build(&b);
    b.n1->op_type = ob_strdup(&b.p, "Frobnicate");
    EXPECT_MODEL(&b, PC_ERR_UNKNOWN_OP, "Frobnicate", "n1");
    /* exists, but only from opset 14 */
    b.n1->op_type = ob_strdup(&b.p, "Trilu");
    b.n1->n_input = 1;
    EXPECT_MODEL(&b, PC_ERR_UNKNOWN_OP, "Trilu", "opset 13");
    baseline_free(&b);
}

/* ---- model level --------------------------------------------------------------------------------------- */

static void test_opset_range(void)
{
    baseline b;
    baseline_build(&b);
    b.opset->version = 0;
    EXPECT_MODEL(&b, PC_ERR_OPSET, "opset 0", "ai.onnx");
    b.opset->version = 999;
    EXPECT_MODEL(&b, PC_ERR_OPSET, "opset 999", "ai.onnx");
    b.opset->version = -1;
    EXPECT_MODEL(&b, PC_ERR_OPSET, "-1", NULL);
    b.opset->has_version = 0;
    EXPECT_MODEL(&b, PC_ERR_OPSET, "no version", NULL);
    baseline_free(&b);
}

static void test_no_opset(void)
{
    baseline b;
    baseline_build(&b);
    b.m->n_opset_import = 0;
    EXPECT_MODEL(&b, PC_ERR_OPSET, "no opset", NULL);
    baseline_free(&b);
}

static void test_duplicate_opset(void)
{
    baseline b;
    baseline_build(&b);
    ob_opset(&b.p, b.m, "", 13);
    EXPECT_MODEL(&b, PC_ERR_DUPLICATE_NAME, "ai.onnx", "twice");
    baseline_free(&b);

    /* "ai.onnx" is the same domain as "" */
    baseline_build(&b);
    ob_opset(&b.p, b.m, "ai.onnx", 14);
    EXPECT_MODEL(&b, PC_ERR_DUPLICATE_NAME, "ai.onnx", "twice");
    baseline_free(&b);
}

static void test_unknown_domain(void)
{
    baseline b;
    baseline_build(&b);
    ob_opset(&b.p, b.m, "com.example", 1);
    b.n1->domain = ob_strdup(&b.p, "com.example");
    EXPECT_MODEL(&b, PC_ERR_UNKNOWN_DOMAIN, "com.example", NULL);
    baseline_free(&b);

    /* used by a node, not imported */
    baseline_build(&b);
    b.n1->domain = ob_strdup(&b.p, "com.microsoft");
    EXPECT_MODEL(&b, PC_ERR_UNKNOWN_DOMAIN, "node 'n1'", "com.microsoft");
    b.n1->domain = ob_strdup(&b.p, "ai.onnx.ml");
    EXPECT_MODEL(&b, PC_ERR_UNKNOWN_DOMAIN, "node 'n1'", "ai.onnx.ml");
    baseline_free(&b);
}

static void test_ir_version(void)
{
    baseline b;
    baseline_build(&b);
    b.m->has_ir_version = 0;
    EXPECT_MODEL(&b, PC_ERR_MISSING_FIELD, "ir_version", NULL);
    b.m->has_ir_version = 1;
    b.m->ir_version = 0;
    EXPECT_MODEL(&b, PC_ERR_IR_VERSION, "ir_version 0", NULL);
    b.m->ir_version = 99;
    EXPECT_MODEL(&b, PC_ERR_IR_VERSION, "ir_version 99", NULL);
    b.m->ir_version = -5;
    EXPECT_MODEL(&b, PC_ERR_IR_VERSION, "ir_version -5", NULL);
    baseline_free(&b);
}

static void test_no_graph(void)
{
    baseline b;
    baseline_build(&b);
    b.m->graph = NULL;
    EXPECT_MODEL(&b, PC_ERR_MISSING_FIELD, "graph", NULL);
    baseline_free(&b);
}

static void test_node_without_op_type(void)
{
    baseline b;
    baseline_build(&b);
    b.n1->op_type = NULL;
    EXPECT_MODEL(&b, PC_ERR_MISSING_FIELD, "'n1'", "op_type");
    b.n1->op_type = ob_strdup(&b.p, "");
    EXPECT_MODEL(&b, PC_ERR_MISSING_FIELD, "'n1'", "op_type");
    baseline_free(&b);
}

static void test_data_location(void)
{
    baseline b;
    baseline_build(&b);
    b.w->has_data_location = 1;
    b.w->data_location = (Onnx__TensorProto__DataLocation)7;
    EXPECT_MODEL(&b, PC_ERR_ENUM, "initializer 'W'", "data_location 7");
    baseline_free(&b);
}

static void test_external_data_from_bytes(void)
{
    baseline b;
    baseline_build(&b);
    tensor_clear_data(b.w);
    b.w->has_data_location = 1;
    b.w->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    OB_APPEND(&b.p, b.w->external_data, b.w->n_external_data, ob_kv(&b.p, "location", "w.bin"));
    EXPECT_MODEL(&b, PC_ERR_EXTERNAL_DATA, "initializer 'W'", "memory");
    /* external_data entries without data_location = EXTERNAL */
    b.w->has_data_location = 0;
    ob_tensor_set_floats(&b.p, b.w, 6, w_values);
    EXPECT_MODEL(&b, PC_ERR_EXTERNAL_DATA, "initializer 'W'", NULL);
    baseline_free(&b);
}

static void test_embedded_nul(void)
{
    baseline b;
    baseline_build(&b);
    b.n1->name = ob_strdup(&b.p, "nul@node");
    size_t n;
    uint8_t *d = ob_pack(&b.p, &b.m->base, &n);
    CHECK(poke_nul(d, n, "nul@node", 3));
    EXPECT_BYTES(d, n, NULL, PC_ERR_EMBEDDED_NUL, "NodeProto", "(name)");
    baseline_free(&b);

    /* in a value name (node input), where names are map keys */
    baseline_build(&b);
    b.n1->input[0] = ob_strdup(&b.p, "x@tail");
    d = ob_pack(&b.p, &b.m->base, &n);
    CHECK(poke_nul(d, n, "x@tail", 1));
    EXPECT_BYTES(d, n, NULL, PC_ERR_EMBEDDED_NUL, "NodeProto", "(input)");
    baseline_free(&b);
}

static void test_unknown_field(void)
{
    baseline b;
    baseline_build(&b);
    size_t n;
    const uint8_t *d = ob_pack(&b.p, &b.m->base, &n);
    ob_buf buf = {0};
    ob_buf_raw(&buf, d, n);
    ob_buf_uint(&buf, 99, 1);
    EXPECT_BYTES(buf.d, buf.n, NULL, PC_ERR_UNSUPPORTED, "unknown field 99", "ModelProto");
    ob_buf_free(&buf);
    /* inside the graph */
    ob_buf tail = {0}, model = {0};
    ob_buf_str(&tail, 1000, "extension");
    model_with_graph_tail(&b, &tail, &model);
    EXPECT_BYTES(model.d, model.n, NULL, PC_ERR_UNSUPPORTED, "unknown field 1000", "GraphProto");
    ob_buf_free(&tail);
    ob_buf_free(&model);
    baseline_free(&b);
}

static void test_bad_keys_and_wire_types(void)
{
    baseline b;
    baseline_build(&b);
    size_t n;
    const uint8_t *d = ob_pack(&b.p, &b.m->base, &n);
    /* field number 0 in a multi-byte key (0x80 0x00 encodes key 0); protobuf-c would accept it */
    static const uint8_t prefixes[][3] = {
        {0x80, 0x00, 0},    /* key 0 in two bytes */
        {0x82, 0x80, 0x00}, /* key 2 (field 0, length-delimited) in three bytes */
    };
    static const size_t prefix_len[] = {2, 3};
    for (size_t i = 0; i < 2; i++) {
        ob_buf buf = {0};
        ob_buf_raw(&buf, prefixes[i], prefix_len[i]);
        ob_buf_byte(&buf, 0);
        ob_buf_raw(&buf, d, n);
        EXPECT_BYTES(buf.d, buf.n, NULL, PC_ERR_WIRE, "field number", NULL);
        ob_buf_free(&buf);
    }
    /* wire types 3, 4, 6, 7 on ir_version */
    static const unsigned bad_wt[] = {3, 4, 6, 7};
    static const char *const wt_name[] = {"start-group", "end-group", "invalid 6", "invalid 7"};
    for (size_t i = 0; i < 4; i++) {
        ob_buf buf = {0};
        ob_buf_key(&buf, 1, bad_wt[i]);
        ob_buf_raw(&buf, d, n);
        EXPECT_BYTES(buf.d, buf.n, NULL, PC_ERR_WIRE, wt_name[i], "ir_version");
        ob_buf_free(&buf);
    }
    /* wrong wire type for a known field: ir_version as length-delimited */
    ob_buf buf = {0};
    ob_buf_len(&buf, 1, "\x08", 1);
    ob_buf_raw(&buf, d, n);
    EXPECT_BYTES(buf.d, buf.n, NULL, PC_ERR_WIRE, "ir_version", NULL);
    ob_buf_free(&buf);
    /* field number above 2^29-1 */
    ob_buf_varint(&buf, ((uint64_t)1 << 29) << 3);
    ob_buf_byte(&buf, 0);
    ob_buf_raw(&buf, d, n);
    EXPECT_BYTES(buf.d, buf.n, NULL, PC_ERR_WIRE, "field number", NULL);
    ob_buf_free(&buf);
    baseline_free(&b);
}

/* ---- subgraphs and types ------------------------------------------------------------------------------- */

/* Baseline plus input c: bool, node n1 renamed to produce t, and If(c) -> y whose branches read outer values.
 */
static void build_if_model(baseline *b, const char *then_reads)
{
    baseline_build(b);
    ob_pool *p = &b->p;
    ob_graph_input(p, b->g, "c", ob_tensor_type(p, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0, NULL));
    b->n1->output[0] = ob_strdup(p, "t");
    Onnx__NodeProto *iff =
        ob_node(p, b->g, "If", "if1", 1, (const char *const[]){"c"}, 1, (const char *const[]){"y"});
    Onnx__GraphProto *then_g = ob_graph(p, NULL, "then_g");
    ob_node(p, then_g, "Identity", "then_id", 1, (const char *const[]){then_reads}, 1,
            (const char *const[]){"ty"});
    ob_graph_output(p, then_g, "ty", NULL);
    Onnx__GraphProto *else_g = ob_graph(p, NULL, "else_g");
    ob_node(p, else_g, "Identity", "else_id", 1, (const char *const[]){"x"}, 1, (const char *const[]){"ey"});
    ob_graph_output(p, else_g, "ey", NULL);
    ob_attr_graph(p, iff, "then_branch", then_g);
    ob_attr_graph(p, iff, "else_branch", else_g);
}

/* build_if_model whose then branch reads the main graph's float input x; returns that branch */
static Onnx__GraphProto *build_if_reading_x(baseline *b)
{
    build_if_model(b, "x");
    return b->m->graph->node[b->m->graph->n_node - 1]->attribute[0]->g;
}

static void test_subgraph_outer_scope(void)
{
    baseline b;
    build_if_model(&b, "t");
    size_t n;
    const uint8_t *d = ob_pack(&b.p, &b.m->base, &n);
    pc_error err;
    pc_model *m = NULL;
    CHECK_OK(pc_model_load_bytes(d, n, NULL, &m, &err), &err);
    if (m) {
        const pc_node *iff = m->graph->last;
        CHECK(iff && strcmp(iff->op_type, "If") == 0);
        const pc_attr *then_a = iff ? pc_node_attr(iff, "then_branch") : NULL;
        CHECK(then_a && then_a->type == PC_ATTR_GRAPH && then_a->g);
        if (then_a && then_a->g) {
            const pc_value *t = pc_graph_find_value(then_a->g, "t");
            CHECK(t && t->outer && t->outer->graph == m->graph);
        }
        pc_model_free(m);
    }
    baseline_free(&b);

    build_if_model(&b, "ghost");
    EXPECT_MODEL(&b, PC_ERR_DANGLING_INPUT, "'ghost'", "then_id");
    baseline_free(&b);

    /* an outer-scope value is typed as in its graph: a branch applying SequenceLength to the outer float
     * tensor x is refused (it was accepted, the reference judged untyped, until the ORT saver typed it:
     * fuzz_ort_load find corpus/ort/crash-outer-ref-type) */
    Onnx__GraphProto *then_g = build_if_reading_x(&b);
    then_g->node[0]->op_type = ob_strdup(&b.p, "SequenceLength");
    EXPECT_MODEL(&b, PC_ERR_TYPE, "input 0 'x' is tensor(float)", "(allowed: seq)");
    baseline_free(&b);
    /* and a subgraph's value_info may not declare an outer value another type */
    then_g = build_if_reading_x(&b);
    ob_graph_value_info(&b.p, then_g, "x",
                        ob_tensor_type(&b.p, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, -1, NULL));
    EXPECT_MODEL(&b, PC_ERR_TYPE, "declares outer-scope value 'x' tensor(int64)", "has it as tensor(float)");
    baseline_free(&b);
    /* the same element type with a less specific shape is fine */
    then_g = build_if_reading_x(&b);
    ob_graph_value_info(&b.p, then_g, "x",
                        ob_tensor_type(&b.p, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, -1, NULL));
    d = ob_pack(&b.p, &b.m->base, &n);
    m = NULL;
    CHECK_OK(pc_model_load_bytes(d, n, NULL, &m, &err), &err);
    pc_model_free(m);
    baseline_free(&b);
}

static void test_map_float_key(void)
{
    baseline b;
    baseline_build(&b);
    ob_graph_input(&b.p, b.g, "mp",
                   ob_map_type(&b.p, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
                               ob_tensor_type(&b.p, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, -1, NULL)));
    EXPECT_MODEL(&b, PC_ERR_TYPE, "graph input 'mp'", "key type 1");
    baseline_free(&b);
}

static void test_sparse_initializer(void)
{
    baseline b;
    baseline_build(&b);
    Onnx__SparseTensorProto *sp = ob_alloc(&b.p, sizeof *sp);
    onnx__sparse_tensor_proto__init(sp);
    const int64_t one[] = {1};
    const float v[] = {7};
    sp->values = ob_float_tensor(&b.p, NULL, "S", 1, one, v);
    Onnx__TensorProto *idx = ob_tensor(&b.p, NULL, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, one);
    const int64_t zero[] = {0};
    ob_tensor_set_int64s(&b.p, idx, 1, zero);
    sp->indices = idx;
    const int64_t sdims[] = {6};
    sp->dims = ob_memdup(&b.p, sdims, sizeof sdims);
    sp->n_dims = 1;
    OB_APPEND(&b.p, b.g->sparse_initializer, b.g->n_sparse_initializer, sp);
    EXPECT_MODEL(&b, PC_ERR_UNSUPPORTED, "sparse", "'main'");
    baseline_free(&b);
}

/* ---- OOM injection ------------------------------------------------------------------------------------- */

/* For N = 1, 2, ...: fail the N-th allocation. Every load must fail cleanly with NOMEM/BUDGET or succeed with
 * a model equal to the one loaded without injection; a success while the injected failure fired means the
 * loader swallowed an allocation failure. Stops at the first N where the injection never fires. */
static void oom_loop(const char *label, const uint8_t *d, size_t n)
{
    pc_error err;
    pc_model *ref = NULL;
    CHECK_OK(pc_model_load_bytes(d, n, NULL, &ref, &err), &err);
    if (!ref) return;
    pc_load_options o;
    pc_load_options_default(&o);
    bool clean_success = false;
    int swallowed = 0;
    uint64_t i;
    for (i = 1; i <= 10000 && !clean_success; i++) {
        o.fail_after = i;
        pc_model *m = NULL;
        pc_error_clear(&err);
        pc_status st = pc_model_load_bytes(d, n, &o, &m, &err);
        if (st == PC_OK) {
            char diff[512] = "";
            CHECK_MSG(pc_model_equal(ref, m, diff, sizeof diff),
                      "%s: fail_after=%llu: loaded model differs: %s", label, (unsigned long long)i, diff);
            if (m->mem.failed) {
                /* the injected failure fired and the load still reported success */
                swallowed++;
                CHECK_MSG(false, "%s: fail_after=%llu: allocation failure swallowed, load returned OK", label,
                          (unsigned long long)i);
            } else {
                clean_success = true;
            }
            pc_model_free(m);
        } else {
            CHECK_MSG(st == PC_ERR_NOMEM || st == PC_ERR_BUDGET, "%s: fail_after=%llu: %s (%s)", label,
                      (unsigned long long)i, pc_status_name(st), err.message);
            CHECK(m == NULL);
        }
    }
    CHECK_MSG(clean_success, "%s: no clean load within %llu injection points", label,
              (unsigned long long)(i - 1));
    CHECK_MSG(i > 3, "%s: only %llu injection points", label, (unsigned long long)(i - 1));
    (void)swallowed;
    pc_model_free(ref);
}

static void test_oom_injection(void)
{
    baseline b;
    baseline_build(&b);
    size_t n;
    const uint8_t *d = ob_pack(&b.p, &b.m->base, &n);
    oom_loop("baseline", d, n);
    baseline_free(&b);

    /* a model with a subgraph, attributes, value_info and metadata: more allocation sites */
    build_if_model(&b, "t");
    ob_graph_value_info(&b.p, b.g, "t",
                        ob_tensor_type(&b.p, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dims23));
    OB_APPEND(&b.p, b.m->metadata_props, b.m->n_metadata_props, ob_kv(&b.p, "author", "tests"));
    OB_APPEND(&b.p, b.n1->metadata_props, b.n1->n_metadata_props, ob_kv(&b.p, "layer_ann", "L0"));
    b.m->doc_string = ob_strdup(&b.p, "doc");
    d = ob_pack(&b.p, &b.m->base, &n);
    oom_loop("if-model", d, n);
    baseline_free(&b);
}

/* ---- further catalogue entries (section 9) ------------------------------------------------------------- */

/* Runs fn(arg) in a child process, so a crash is reported as one failed check instead of ending the run. The
 * child's own check failures print as usual and make it exit 1. */
static void run_isolated(const char *label, void (*fn)(void *), void *arg)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        CHECK_MSG(false, "%s: fork: %s", label, strerror(errno));
        return;
    }
    if (pid == 0) {
        pc_test_failures = 0;
        fn(arg);
        fflush(stdout);
        fflush(stderr);
        _exit(pc_test_failures ? 1 : 0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: child %s %d (crash or failed checks above)",
              label, WIFSIGNALED(status) ? "killed by signal" : "exited with",
              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

typedef struct null_err_case {
    const uint8_t *data;
    size_t size;
    pc_status expected;
} null_err_case;

static void null_err_child(void *arg)
{
    const null_err_case *c = arg;
    pc_model *m = NULL;
    pc_status st = pc_model_load_bytes(c->data, c->size, NULL, &m, NULL);
    CHECK_MSG(st == c->expected, "err = NULL: got %s, expected %s", pc_status_name(st),
              pc_status_name(c->expected));
    pc_model_free(m);
}

/* err may be NULL (pc_error_set accepts it, and core code passes NULL): the status alone must come back. */
static void test_null_error_record(void)
{
    baseline b;
    baseline_build(&b);
    size_t n;
    const uint8_t *ok = ob_pack(&b.p, &b.m->base, &n);
    null_err_case c = {ok, n, PC_OK};
    run_isolated("err=NULL, valid model", null_err_child, &c);
    c = (null_err_case){ok, n - 1, PC_ERR_TRUNCATED};
    run_isolated("err=NULL, truncated", null_err_child, &c);
    b.n1->op_type = ob_strdup(&b.p, "Frobnicate");
    c.data = ob_pack(&b.p, &b.m->base, &c.size);
    c.expected = PC_ERR_UNKNOWN_OP;
    run_isolated("err=NULL, unknown op", null_err_child, &c);
    /* Regression: the graph converter read c->err->status, so err = NULL crashed on a dangling input or an
     * unproduced graph output. */
    b.n1->op_type = ob_strdup(&b.p, "Add");
    b.n1->input[1] = ob_strdup(&b.p, "ghost");
    c.data = ob_pack(&b.p, &b.m->base, &c.size);
    c.expected = PC_ERR_DANGLING_INPUT;
    run_isolated("err=NULL, dangling input", null_err_child, &c);
    b.n1->input[1] = ob_strdup(&b.p, "W");
    ob_graph_output(&b.p, b.g, "z", NULL);
    c.data = ob_pack(&b.p, &b.m->base, &c.size);
    c.expected = PC_ERR_UNPRODUCED_OUTPUT;
    run_isolated("err=NULL, unproduced output", null_err_child, &c);
    baseline_free(&b);
}

static void test_missing_names(void)
{
    baseline b;
    baseline_build(&b);
    b.x->name = NULL;
    EXPECT_MODEL(&b, PC_ERR_MISSING_FIELD, "graph input 0", "no name");
    baseline_free(&b);

    baseline_build(&b);
    b.y->name = ob_strdup(&b.p, "");
    EXPECT_MODEL(&b, PC_ERR_MISSING_FIELD, "graph output 0", "no name");
    baseline_free(&b);

    baseline_build(&b);
    b.w->name = NULL;
    EXPECT_MODEL(&b, PC_ERR_MISSING_FIELD, "initializer 0", "no name");
    baseline_free(&b);

    baseline_build(&b);
    Onnx__AttributeProto *a = ob_attr_int(&b.p, b.n1, "alpha", 1);
    a->name = NULL;
    EXPECT_MODEL(&b, PC_ERR_MISSING_FIELD, "node 'n1'", "no name");
    /* ref_attr_name outside a function body */
    a->name = ob_strdup(&b.p, "alpha");
    a->ref_attr_name = ob_strdup(&b.p, "beta");
    EXPECT_MODEL(&b, PC_ERR_ATTRIBUTE, "'alpha'", "ref_attr_name");
    baseline_free(&b);
}

static void test_tensor_catalogue_extras(void)
{
    baseline b;
    baseline_build(&b);
    uint8_t bytes[64] = {0};
    /* STRING tensor with raw_data */
    tensor_clear_data(b.w);
    b.w->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__STRING;
    ob_tensor_set_raw(&b.p, b.w, 6, bytes);
    EXPECT_MODEL(&b, PC_ERR_DTYPE, "initializer 'W'", "string");
    /* COMPLEX64 with float_data not doubled (6 values for 6 complex elements) */
    tensor_clear_data(b.w);
    b.w->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64;
    ob_tensor_set_floats(&b.p, b.w, 6, w_values);
    EXPECT_MODEL(&b, PC_ERR_DATA_SIZE, "initializer 'W'", "need 12");
    /* segment present */
    b.w->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    Onnx__TensorProto__Segment *seg = ob_alloc(&b.p, sizeof *seg);
    onnx__tensor_proto__segment__init(seg);
    seg->has_begin = seg->has_end = 1;
    seg->end = 6;
    b.w->segment = seg;
    EXPECT_MODEL(&b, PC_ERR_UNSUPPORTED, "initializer 'W'", "segment");
    b.w->segment = NULL;
    /* rank above the limit, in a tensor and in a shape */
    int64_t ones[PC_MAX_RANK + 1];
    for (size_t i = 0; i < PC_MAX_RANK + 1; i++)
        ones[i] = 1;
    Onnx__TensorProto *r = ob_tensor(&b.p, "R", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, PC_MAX_RANK + 1, ones);
    ob_tensor_set_floats(&b.p, r, 1, w_values);
    OB_APPEND(&b.p, b.g->initializer, b.g->n_initializer, r);
    EXPECT_MODEL(&b, PC_ERR_BUDGET, "initializer 'R'", "rank 65");
    b.g->n_initializer--;
    ob_graph_input(&b.p, b.g, "hr",
                   ob_tensor_type(&b.p, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, PC_MAX_RANK + 1, ones));
    EXPECT_MODEL(&b, PC_ERR_BUDGET, "graph input 'hr'", "rank 65");
    baseline_free(&b);

    /* a bad tensor inside a node attribute names the node and the attribute */
    baseline_build(&b);
    Onnx__NodeProto *c = ob_node(&b.p, b.g, "Constant", "const1", 0, NULL, 1, (const char *const[]){"k"});
    Onnx__AttributeProto *a = ob_attr(&b.p, c, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
    a->t = ob_float_tensor(&b.p, NULL, "", 2, dims23, w_values);
    EXPECT_MODEL(&b, PC_OK, NULL, NULL);
    a->t->data_type = 99;
    EXPECT_MODEL(&b, PC_ERR_DTYPE, "node 'const1'", "attribute 'value'");
    baseline_free(&b);
}

/* Regression: Six float values for 2^26 elements: a data-size error, found without allocating 256 MiB for the
 * elements first (section 9 item 26: a small file must not cause a large allocation). With a 64 MiB budget
 * the allocation-first order reports over-budget instead of the real problem; without a budget it commits the
 * memory (pc_mem_calloc zero-fills it) before rejecting the file. */
static void test_regression_data_count_after_allocation(void)
{
    baseline b;
    baseline_build(&b);
    b.w->dims[0] = (int64_t)1 << 26;
    b.w->dims[1] = 1;
    size_t n;
    const uint8_t *d = ob_pack(&b.p, &b.m->base, &n);
    pc_load_options o;
    pc_load_options_default(&o);
    o.memory_budget = (size_t)64 << 20;
    EXPECT_BYTES(d, n, &o, PC_ERR_DATA_SIZE, "initializer 'W'", "float_data has 6 values");
    /* the same with no data field at all, and for strings */
    tensor_clear_data(b.w);
    d = ob_pack(&b.p, &b.m->base, &n);
    EXPECT_BYTES(d, n, &o, PC_ERR_DATA_SIZE, "initializer 'W'", "no data");
    b.w->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__STRING;
    d = ob_pack(&b.p, &b.m->base, &n);
    EXPECT_BYTES(d, n, &o, PC_ERR_DATA_SIZE, "initializer 'W'", "no data");
    baseline_free(&b);
}

/* Regression (section 9 item 19): a subgraph must not reuse (shadow) a name of an enclosing graph; ONNX's
 * checker rejects a node output whose name an ancestor graph already has (SSA across scopes). */
static void test_regression_subgraph_shadowing(void)
{
    baseline b;
    build_if_model(&b, "t");
    Onnx__GraphProto *else_g = b.g->node[1]->attribute[1]->g;
    else_g->node[0]->output[0] = ob_strdup(&b.p, "t"); /* Identity(x) -> t, and t exists outside */
    else_g->output[0]->name = ob_strdup(&b.p, "t");
    EXPECT_MODEL(&b, PC_ERR_DUPLICATE_PRODUCER, "'t'", "else_id");
    baseline_free(&b);
}

static void test_subgraph_order_and_scope(void)
{
    /* the If comes first in the file but its branch reads t, produced by n1 later: sorted, loads */
    baseline b;
    build_if_model(&b, "t");
    Onnx__NodeProto *tmp = b.g->node[0];
    b.g->node[0] = b.g->node[1];
    b.g->node[1] = tmp;
    size_t n;
    const uint8_t *d = ob_pack(&b.p, &b.m->base, &n);
    pc_error err;
    pc_model *m = NULL;
    CHECK_OK(pc_model_load_bytes(d, n, NULL, &m, &err), &err);
    if (m) {
        CHECK(m->graph->first && strcmp(m->graph->first->name, "n1") == 0);
        CHECK(m->graph->last && strcmp(m->graph->last->name, "if1") == 0);
        pc_model_free(m);
    }
    baseline_free(&b);

    /* a branch reading the If's own output: a cycle through the subgraph */
    build_if_model(&b, "y");
    EXPECT_MODEL(&b, PC_ERR_CYCLE, "if1", NULL);
    baseline_free(&b);

    /* the else branch reading a value of the then branch (a sibling scope, not an enclosing one) */
    build_if_model(&b, "t");
    Onnx__GraphProto *else_g = b.g->node[1]->attribute[1]->g;
    else_g->node[0]->input[0] = ob_strdup(&b.p, "ty");
    EXPECT_MODEL(&b, PC_ERR_DANGLING_INPUT, "'ty'", "else_id");
    baseline_free(&b);
}

/* Baseline plus a model-local function local.F(a) -> b whose body is one node (body_domain.body_op). */
static Onnx__FunctionProto *build_local_function(baseline *b, const char *body_domain, const char *body_op,
                                                 const char *body_name)
{
    baseline_build(b);
    ob_opset(&b->p, b->m, "local", 1);
    Onnx__FunctionProto *f = ob_function(&b->p, b->m, "local", "F", 1, (const char *const[]){"a"}, 1,
                                         (const char *const[]){"b"}, 13);
    ob_function_node(&b->p, f, body_domain, body_op, body_name, 1, (const char *const[]){"a"}, 1,
                     (const char *const[]){"b"});
    return f;
}

/* A model-local function called by nothing loads (the base for the two function bugs below). */
static void test_local_function_ok(void)
{
    baseline b;
    build_local_function(&b, "", "Identity", "fi");
    EXPECT_MODEL(&b, PC_OK, NULL, NULL); /* sanity: a well-formed local function loads */
    baseline_free(&b);
}

/* Regression (section 9 item 16): two model-local functions with the same (domain, name) must be rejected. */
static void test_regression_duplicate_function_id(void)
{
    baseline b;
    Onnx__FunctionProto *f = build_local_function(&b, "", "Identity", "fi");
    OB_APPEND(&b.p, b.m->functions, b.m->n_functions, f);
    EXPECT_MODEL(&b, PC_ERR_DUPLICATE_NAME, "'F'", "local");
    baseline_free(&b);
}

/* Regression (section 9 item 19): a model-local function whose body calls itself must be rejected (the loader
 * walks the functions' call graph, although it keeps their bodies as opaque bytes). */
static void test_regression_recursive_function(void)
{
    baseline b;
    Onnx__FunctionProto *f = build_local_function(&b, "local", "F", "self");
    Onnx__OperatorSetIdProto *lo = ob_alloc(&b.p, sizeof *lo);
    onnx__operator_set_id_proto__init(lo);
    lo->domain = ob_strdup(&b.p, "local");
    lo->has_version = 1;
    lo->version = 1;
    OB_APPEND(&b.p, f->opset_import, f->n_opset_import, lo);
    b.n1->domain = ob_strdup(&b.p, "local");
    b.n1->op_type = ob_strdup(&b.p, "F");
    b.n1->n_input = 1;
    EXPECT_MODEL(&b, PC_ERR_CYCLE, "'F'", NULL);
    baseline_free(&b);
}

/* Wire-legal oddities protobuf-c resolves by itself (last oneof member wins, a repeated singular message is
 * merged): results must be consistent, with no leak or double free (ASan watches). */
static void test_oneof_and_merge(void)
{
    baseline b;
    baseline_build(&b);
    /* graph input "d": TypeProto{tensor_type{elem FLOAT, shape{dim{dim_value 2, dim_param "N"}}},
     *                            sequence_type{elem_type{tensor_type{elem FLOAT}}}} */
    ob_buf dim = {0}, shape = {0}, tt = {0}, tp = {0}, vi = {0}, tail = {0}, model = {0};
    ob_buf_uint(&dim, 1, 2);
    ob_buf_str(&dim, 2, "N");
    ob_buf_len(&shape, 1, dim.d, dim.n);
    ob_buf_uint(&tt, 1, 1);
    ob_buf_len(&tt, 2, shape.d, shape.n);
    ob_buf_len(&tp, 1, tt.d, tt.n);
    /* Sequence{elem_type{tensor_type{elem_type FLOAT}}} */
    static const uint8_t seq[] = {0x0a, 0x04, 0x0a, 0x02, 0x08, 0x01};
    ob_buf_len(&tp, 4, seq, sizeof seq);
    ob_buf_str(&vi, 1, "d");
    ob_buf_len(&vi, 2, tp.d, tp.n);
    ob_buf_len(&tail, 11, vi.d, vi.n);
    model_with_graph_tail(&b, &tail, &model);
    pc_error err;
    pc_model *m = NULL;
    CHECK_OK(pc_model_load_bytes(model.d, model.n, NULL, &m, &err), &err);
    if (m) {
        const pc_value *v = pc_graph_find_value(m->graph, "d");
        CHECK(v && v->type.kind == PC_TYPE_SEQUENCE); /* the last member wins */
        pc_model_free(m);
    }
    /* the reverse order, with the dimension's dim_param before its dim_value */
    ob_buf_free(&tail);
    ob_buf_free(&model);
    ob_buf_free(&vi);
    ob_buf_free(&tp);
    ob_buf_free(&tt);
    ob_buf_free(&shape);
    ob_buf_free(&dim);
    ob_buf_str(&dim, 2, "N");
    ob_buf_uint(&dim, 1, 2);
    ob_buf_len(&shape, 1, dim.d, dim.n);
    ob_buf_uint(&tt, 1, 1);
    ob_buf_len(&tt, 2, shape.d, shape.n);
    ob_buf_len(&tp, 4, seq, sizeof seq);
    ob_buf_len(&tp, 1, tt.d, tt.n);
    ob_buf_str(&vi, 1, "d");
    ob_buf_len(&vi, 2, tp.d, tp.n);
    ob_buf_len(&tail, 11, vi.d, vi.n);
    model_with_graph_tail(&b, &tail, &model);
    m = NULL;
    CHECK_OK(pc_model_load_bytes(model.d, model.n, NULL, &m, &err), &err);
    if (m) {
        const pc_value *v = pc_graph_find_value(m->graph, "d");
        CHECK(v && v->type.kind == PC_TYPE_TENSOR && v->type.shape.rank == 1 &&
              v->type.shape.dims[0].kind == PC_DIM_KNOWN && v->type.shape.dims[0].size == 2);
        pc_model_free(m);
    }
    ob_buf_free(&tail);
    ob_buf_free(&model);
    ob_buf_free(&vi);
    ob_buf_free(&tp);
    ob_buf_free(&tt);
    ob_buf_free(&shape);
    ob_buf_free(&dim);

    /* the graph field twice: protobuf merges the two graphs, so every input, node and output appears twice */
    size_t n;
    const uint8_t *d = ob_pack(&b.p, &b.m->base, &n);
    size_t glen;
    const uint8_t *g = ob_pack(&b.p, &b.g->base, &glen);
    ob_buf twice = {0};
    ob_buf_raw(&twice, d, n);
    ob_buf_len(&twice, 7, g, glen);
    EXPECT_BYTES(twice.d, twice.n, NULL, PC_ERR_DUPLICATE_NAME, "'x'", NULL);
    ob_buf_free(&twice);
    baseline_free(&b);
}

/* Regression: OOM injection where an arena chunk boundary falls on a small string copy in the model header:
 * the baseline with a 200,000-byte producer_name (its own chunk) and a doc_string sized so that the next 256
 * KiB chunk has `room` bytes left for what follows (opset array, opset domain, graph name, ...). */
typedef struct chunk_case {
    size_t room;
} chunk_case;

static void oom_chunk_child(void *arg)
{
    const chunk_case *cc = arg;
    baseline b;
    baseline_build(&b);
    char *name = ob_alloc(&b.p, 200001);
    memset(name, 'p', 200000);
    b.m->producer_name = name;
    /* the arena rounds to 16 bytes: a doc_string of doc_need - 1 bytes takes doc_need */
    size_t doc_need = (size_t)256 * 1024 - cc->room;
    char *doc = ob_alloc(&b.p, doc_need);
    memset(doc, 'd', doc_need - 1);
    b.m->doc_string = doc;
    size_t n;
    const uint8_t *d = ob_pack(&b.p, &b.m->base, &n);
    char label[64];
    snprintf(label, sizeof label, "chunk room %zu", cc->room);
    oom_loop(label, d, n);
    baseline_free(&b);
}

static void test_regression_oom_in_string_copies(void)
{
    for (size_t room = 0; room <= 48; room += 16) {
        chunk_case cc = {room};
        char label[64];
        snprintf(label, sizeof label, "OOM sweep, arena chunk room %zu", room);
        run_isolated(label, oom_chunk_child, &cc);
    }
}

/* ---- files --------------------------------------------------------------------------------------------- */

static void test_load_file_errors(void)
{
    pc_error err;
    pc_model *m = NULL;
    const char *missing = "/nonexistent/passcheck/test_bad_inputs/model.onnx";
    CHECK_STATUS(pc_model_load_file(missing, NULL, &m, &err), PC_ERR_IO, &err);
    CHECK(m == NULL);
    CHECK_MSG(strstr(err.message, missing) != NULL, "message \"%s\" does not name the path", err.message);

    char dir[] = "/tmp/pc_test_bad_inputs_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK_MSG(false, "mkdtemp: %s", strerror(errno));
        return;
    }
    CHECK_STATUS(pc_model_load_file(dir, NULL, &m, &err), PC_ERR_IO, &err);
    CHECK(m == NULL);
    CHECK_MSG(strstr(err.message, dir) != NULL, "message \"%s\" does not name the path", err.message);

    /* an empty file and a truncated file are reported like their bytes, prefixed with the path */
    char path[sizeof dir + 32];
    snprintf(path, sizeof path, "%s/empty.onnx", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) fclose(f);
    CHECK_STATUS(pc_model_load_file(path, NULL, &m, &err), PC_ERR_TRUNCATED, &err);
    CHECK(m == NULL);
    CHECK_MSG(strstr(err.message, path) != NULL, "message \"%s\" does not name the path", err.message);

    baseline b;
    baseline_build(&b);
    size_t n;
    const uint8_t *d = ob_pack(&b.p, &b.m->base, &n);
    f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        CHECK(fwrite(d, 1, n - 3, f) == n - 3);
        fclose(f);
    }
    CHECK_STATUS(pc_model_load_file(path, NULL, &m, &err), PC_ERR_TRUNCATED, &err);
    CHECK(m == NULL);
    f = fopen(path, "wb");
    if (f) {
        CHECK(fwrite(d, 1, n, f) == n);
        fclose(f);
    }
    CHECK_OK(pc_model_load_file(path, NULL, &m, &err), &err); /* sanity: the whole file loads */
    pc_model_free(m);
    baseline_free(&b);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    verbose = getenv("PC_TEST_VERBOSE") != NULL;
    test_baseline_ok();
    /* container and wire level */
    test_empty_input();
    test_truncated_prefixes();
    test_garbage_bytes();
    test_corrupted_bytes();
    test_overlong_varint();
    test_huge_length_prefix();
    test_nesting_bomb();
    test_amplification();
    test_memory_budget();
    test_embedded_nul();
    test_unknown_field();
    test_bad_keys_and_wire_types();
    /* tensor data */
    test_raw_data_size();
    test_typed_data_count();
    test_negative_dim_tensor();
    test_negative_dim_value_info();
    test_element_count_overflow();
    test_dtype();
    test_wrong_typed_field();
    test_multiple_data();
    test_data_location();
    test_external_data_from_bytes();
    test_sparse_initializer();
    /* graph */
    test_duplicate_producer();
    test_dangling_input();
    test_unproduced_output();
    test_cycle();
    test_out_of_order_acyclic();
    test_duplicate_initializer();
    test_duplicate_graph_input();
    test_subgraph_outer_scope();
    test_map_float_key();
    /* attributes and schemas */
    test_duplicate_attribute();
    test_attribute_value_mismatch();
    test_attribute_type_enum();
    test_attribute_schema_type();
    test_unknown_attribute();
    test_missing_required_attribute();
    test_wrong_arity();
    test_unknown_op();
    /* model level */
    test_opset_range();
    test_no_opset();
    test_duplicate_opset();
    test_unknown_domain();
    test_ir_version();
    test_no_graph();
    test_node_without_op_type();
    /* resources and files */
    test_oom_injection();
    test_load_file_errors();
    /* further catalogue entries */
    test_null_error_record();
    test_missing_names();
    test_tensor_catalogue_extras();
    test_subgraph_order_and_scope();
    test_local_function_ok();
    test_oneof_and_merge();
    test_regression_data_count_after_allocation();
    test_regression_subgraph_shadowing();
    test_regression_duplicate_function_id();
    test_regression_recursive_function();
    test_regression_oom_in_string_copies();
    return pc_test_finish("test_onnx_bad_inputs");
}
