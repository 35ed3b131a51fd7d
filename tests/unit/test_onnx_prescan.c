/* Tests for pc_pb_prescan: one hand-built byte sequence per rejection class, packed vs unpacked scalars, deep
 * nesting and element budgets, and a valid model that must then unpack with protobuf-c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/onnx/onnx_internal.h"
#include "tests/test_util.h"

/* ---- a tiny protobuf writer ---- */

enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_LEN = 2, WT_FIXED32 = 5 };

typedef struct wbuf {
    uint8_t *d;
    size_t n, cap;
} wbuf;

static void w_raw(wbuf *b, const void *src, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *d = realloc(b->d, cap);
        if (!d) {
            fprintf(stderr, "test_onnx_prescan: out of memory\n");
            exit(1);
        }
        b->d = d;
        b->cap = cap;
    }
    if (n) memcpy(b->d + b->n, src, n);
    b->n += n;
}

static void w_byte(wbuf *b, uint8_t v)
{
    w_raw(b, &v, 1);
}

static void w_varint(wbuf *b, uint64_t v)
{
    while (v >= 0x80) {
        w_byte(b, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    w_byte(b, (uint8_t)v);
}

static void w_key(wbuf *b, uint32_t field, unsigned wire_type)
{
    w_varint(b, (uint64_t)field << 3 | wire_type);
}

static void w_uint(wbuf *b, uint32_t field, uint64_t v)
{
    w_key(b, field, WT_VARINT);
    w_varint(b, v);
}

static void w_fixed32(wbuf *b, uint32_t field, uint32_t v)
{
    w_key(b, field, WT_FIXED32);
    for (int i = 0; i < 4; i++)
        w_byte(b, (uint8_t)(v >> (8 * i)));
}

static void w_len(wbuf *b, uint32_t field, const void *payload, size_t n)
{
    w_key(b, field, WT_LEN);
    w_varint(b, n);
    w_raw(b, payload, n);
}

static void w_str(wbuf *b, uint32_t field, const char *s)
{
    w_len(b, field, s, strlen(s));
}

/* Appends `sub` as a length-delimited field and frees it. */
static void w_msg(wbuf *b, uint32_t field, wbuf *sub)
{
    w_len(b, field, sub->d, sub->n);
    free(sub->d);
    *sub = (wbuf){0};
}

static void w_free(wbuf *b)
{
    free(b->d);
    *b = (wbuf){0};
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* ---- helpers ---- */

static pc_status scan_with(const void *data, size_t n, const ProtobufCMessageDescriptor *desc,
                           uint32_t max_depth, uint64_t max_messages, pc_prescan_stats *stats, pc_error *err)
{
    pc_prescan_limits limits = {.max_depth = max_depth, .max_messages = max_messages};
    pc_error_clear(err);
    return pc_pb_prescan(data, n, desc, &limits, stats, err);
}

static pc_status scan(const wbuf *b, const ProtobufCMessageDescriptor *desc, pc_error *err)
{
    return scan_with(b->d, b->n, desc, 64, 1000000, NULL, err);
}

/* Every rejection names the message type holding the offending field and the byte offset. */
#define EXPECT_REJECT_IN(data, n, desc, expected, type_name)                                                 \
    do {                                                                                                     \
        pc_error e_;                                                                                         \
        CHECK_STATUS(scan_with((data), (n), (desc), 64, 1000000, NULL, &e_), (expected), &e_);               \
        CHECK_MSG(strstr(e_.message, (type_name)) != NULL, "message lacks %s: %s", (type_name), e_.message); \
        CHECK_MSG(strstr(e_.message, "byte offset") != NULL, "message lacks the offset: %s", e_.message);    \
    } while (0)

/* Rejections at the root message. */
#define EXPECT_REJECT(data, n, desc, expected) EXPECT_REJECT_IN(data, n, desc, expected, (desc)->name)
#define EXPECT_REJECT_BUF(b, desc, expected)   EXPECT_REJECT((b)->d, (b)->n, desc, expected)

#define MODEL  (&onnx__model_proto__descriptor)
#define GRAPH  (&onnx__graph_proto__descriptor)
#define TENSOR (&onnx__tensor_proto__descriptor)
#define TYPE   (&onnx__type_proto__descriptor)

static bool unpacks(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t n)
{
    ProtobufCMessage *m = protobuf_c_message_unpack(desc, NULL, n, data);
    if (!m) return false;
    protobuf_c_message_free_unpacked(m, NULL);
    return true;
}

/* ---- a valid model ---- */

/* 15 sub-messages, 22 repeated elements, deepest nesting 6 (model > graph > input > type > tensor > shape >
 * dim). */
static void build_valid_model(wbuf *model)
{
    wbuf opset = {0}, graph = {0}, node = {0}, attr = {0}, init = {0}, vi = {0}, type = {0}, tensor = {0};
    wbuf shape = {0}, dim = {0}, kv = {0};

    w_uint(model, 1, 8); /* ir_version */
    w_str(&opset, 1, "");
    w_uint(&opset, 2, 17);
    w_msg(model, 8, &opset); /* opset_import: msg + elem */
    w_str(model, 2, "t");    /* producer_name */

    w_str(&node, 1, "x"); /* input: elem */
    w_str(&node, 2, "y"); /* output: elem */
    w_str(&node, 4, "LeakyRelu");
    w_str(&attr, 1, "alpha");
    w_uint(&attr, 20, 1);
    w_fixed32(&attr, 2, float_bits(0.5f));
    w_msg(&node, 5, &attr); /* attribute: msg + elem */
    w_str(&attr, 1, "axes");
    w_uint(&attr, 20, 7);
    {
        wbuf packed = {0};
        w_varint(&packed, 1);
        w_varint(&packed, 2);
        w_varint(&packed, 300);
        w_msg(&attr, 8, &packed); /* ints packed: 3 elems */
    }
    w_uint(&attr, 8, 4);     /* ints unpacked: elem */
    w_msg(&node, 5, &attr);  /* attribute: msg + elem */
    w_msg(&graph, 1, &node); /* node: msg + elem */
    w_str(&graph, 2, "g");

    w_uint(&init, 1, 2); /* dims unpacked: elem */
    {
        wbuf packed = {0};
        w_varint(&packed, 1);
        w_msg(&init, 1, &packed); /* dims packed: elem */
    }
    w_uint(&init, 2, 1);
    w_str(&init, 8, "w");
    {
        wbuf packed = {0};
        uint32_t a = float_bits(1.0f), c = float_bits(2.0f);
        for (int i = 0; i < 4; i++)
            w_byte(&packed, (uint8_t)(a >> (8 * i)));
        for (int i = 0; i < 4; i++)
            w_byte(&packed, (uint8_t)(c >> (8 * i)));
        w_msg(&init, 4, &packed); /* float_data packed: 2 elems */
    }
    w_msg(&graph, 5, &init); /* initializer: msg + elem */
    w_uint(&init, 1, 3);     /* dims: elem */
    w_uint(&init, 2, 2);
    w_str(&init, 8, "r");
    w_len(&init, 9, "\0\1\0", 3); /* raw_data may hold NULs */
    w_msg(&graph, 5, &init);      /* initializer: msg + elem */

    w_str(&vi, 1, "x");
    w_uint(&tensor, 1, 1);
    w_uint(&dim, 1, 2);
    w_msg(&shape, 1, &dim); /* dim: msg + elem */
    w_str(&dim, 2, "N");
    w_msg(&shape, 1, &dim);    /* dim: msg + elem */
    w_msg(&tensor, 2, &shape); /* shape: msg */
    w_msg(&type, 1, &tensor);  /* tensor_type: msg */
    w_msg(&vi, 2, &type);      /* type: msg */
    w_msg(&graph, 11, &vi);    /* input: msg + elem */
    w_str(&vi, 1, "y");
    w_msg(&graph, 12, &vi);  /* output: msg + elem */
    w_msg(model, 7, &graph); /* graph: msg */

    w_str(&kv, 1, "k");
    w_str(&kv, 2, "v");
    w_msg(model, 14, &kv); /* metadata_props: msg + elem */
}

static void test_valid_model(void)
{
    wbuf b = {0};
    build_valid_model(&b);
    pc_error err;
    pc_prescan_stats stats;
    CHECK_OK(scan_with(b.d, b.n, MODEL, 64, 1000000, &stats, &err), &err);
    CHECK(stats.messages == 15);
    CHECK(stats.elements == 22);
    CHECK(stats.max_depth == 6);
    CHECK(stats.messages + stats.elements == 37);

    /* Budget and depth limits are inclusive. */
    CHECK_OK(scan_with(b.d, b.n, MODEL, 6, 37, NULL, &err), &err);
    CHECK_STATUS(scan_with(b.d, b.n, MODEL, 6, 36, NULL, &err), PC_ERR_BUDGET, &err);
    CHECK_STATUS(scan_with(b.d, b.n, MODEL, 5, 37, NULL, &err), PC_ERR_NESTING, &err);
    CHECK_STATUS(scan_with(b.d, b.n, MODEL, 0, 37, NULL, &err), PC_ERR_NESTING, &err);

    /* PC_OK means protobuf-c takes the same bytes, and sees what we counted. */
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, b.n, b.d);
    CHECK(m != NULL);
    if (m) {
        CHECK(m->has_ir_version && m->ir_version == 8);
        CHECK(m->n_opset_import == 1 && m->opset_import[0]->version == 17);
        CHECK(m->n_metadata_props == 1);
        Onnx__GraphProto *g = m->graph;
        CHECK(g && g->n_node == 1 && g->n_initializer == 2 && g->n_input == 1 && g->n_output == 1);
        if (g && g->n_node == 1 && g->n_initializer == 2 && g->n_input == 1) {
            Onnx__NodeProto *n = g->node[0];
            CHECK(n->n_attribute == 2 && n->n_input == 1 && n->n_output == 1);
            if (n->n_attribute == 2) {
                CHECK(n->attribute[0]->has_f && n->attribute[0]->f == 0.5f);
                Onnx__AttributeProto *a = n->attribute[1];
                CHECK(a->n_ints == 4);
                if (a->n_ints == 4)
                    CHECK(a->ints[0] == 1 && a->ints[1] == 2 && a->ints[2] == 300 && a->ints[3] == 4);
            }
            Onnx__TensorProto *t = g->initializer[0];
            CHECK(t->n_dims == 2 && t->n_float_data == 2);
            if (t->n_dims == 2) CHECK(t->dims[0] == 2 && t->dims[1] == 1);
            CHECK(g->initializer[1]->has_raw_data && g->initializer[1]->raw_data.len == 3);
            Onnx__TypeProto *ty = g->input[0]->type;
            CHECK(ty && ty->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE);
            if (ty && ty->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
                Onnx__TensorShapeProto *sh = ty->tensor_type->shape;
                CHECK(sh && sh->n_dim == 2);
                if (sh && sh->n_dim == 2) CHECK(strcmp(sh->dim[1]->dim_param, "N") == 0);
            }
        }
        onnx__model_proto__free_unpacked(m, NULL);
    }

    /* Every prefix is either a clean top-level cut (PC_OK, and then unpackable) or truncated. */
    for (size_t n = 1; n < b.n; n++) {
        pc_status st = scan_with(b.d, n, MODEL, 64, 1000000, NULL, &err);
        CHECK_MSG(st == PC_OK || st == PC_ERR_TRUNCATED, "prefix %zu: %s", n, err.message);
        if (st == PC_OK) CHECK_MSG(unpacks(MODEL, b.d, n), "prefix %zu accepted but does not unpack", n);
    }
    w_free(&b);
}

/* Single-byte mutations of the valid model: whatever the pre-scan accepts must unpack. */
static void test_mutations_unpack(void)
{
    wbuf b = {0};
    build_valid_model(&b);
    static const uint8_t values[] = {0x00, 0x01, 0x02, 0x05, 0x0A, 0x7F, 0x80, 0xFF};
    pc_error err;
    unsigned accepted = 0;
    for (size_t i = 0; i < b.n; i++) {
        uint8_t orig = b.d[i];
        for (size_t v = 0; v < sizeof values + 2; v++) {
            b.d[i] = v < sizeof values ? values[v] : (uint8_t)(orig ^ (v == sizeof values ? 0x08 : 0x01));
            if (scan_with(b.d, b.n, MODEL, 64, 1000000, NULL, &err) == PC_OK) {
                accepted++;
                CHECK_MSG(unpacks(MODEL, b.d, b.n), "byte %zu = 0x%02x accepted but does not unpack", i,
                          b.d[i]);
            }
        }
        b.d[i] = orig;
    }
    CHECK(accepted > 0);
    w_free(&b);
}

/* ---- rejection classes ---- */

static void test_usage_and_empty(void)
{
    pc_error err;
    pc_prescan_limits limits = {64, 1000};
    static const uint8_t one[] = {0x08, 0x01};
    CHECK_STATUS(pc_pb_prescan(one, 0, MODEL, &limits, NULL, &err), PC_ERR_TRUNCATED, &err);
    CHECK(strstr(err.message, "empty input") != NULL);
    CHECK_STATUS(pc_pb_prescan(NULL, 0, MODEL, &limits, NULL, &err), PC_ERR_TRUNCATED, &err);
    CHECK_STATUS(pc_pb_prescan(NULL, 2, MODEL, &limits, NULL, &err), PC_ERR_USAGE, &err);
    CHECK_STATUS(pc_pb_prescan(one, 2, NULL, &limits, NULL, &err), PC_ERR_USAGE, &err);
    CHECK_STATUS(pc_pb_prescan(one, 2, MODEL, NULL, NULL, &err), PC_ERR_USAGE, &err);
    CHECK(pc_pb_prescan(one, 2, MODEL, &limits, NULL, NULL) == PC_OK); /* err may be NULL */
    CHECK(pc_pb_prescan(one, 1, MODEL, &limits, NULL, NULL) == PC_ERR_TRUNCATED);
}

static void test_truncated(void)
{
    static const uint8_t mid_key[] = {0x80};                          /* key continues */
    static const uint8_t mid_varint[] = {0x08, 0x80};                 /* ir_version value continues */
    static const uint8_t mid_len[] = {0x12, 0x80};                    /* producer_name length continues */
    static const uint8_t past_end[] = {0x12, 0x05, 'a', 'b'};         /* producer_name: 5 bytes, 2 left */
    static const uint8_t mid_fixed32[] = {0x25, 0x00, 0x00};          /* TensorProto.float_data unpacked */
    static const uint8_t mid_fixed64[] = {0x51, 0, 0, 0, 0, 0, 0, 0}; /* TensorProto.double_data, 7 of 8 */
    EXPECT_REJECT(mid_key, sizeof mid_key, MODEL, PC_ERR_TRUNCATED);
    EXPECT_REJECT(mid_varint, sizeof mid_varint, MODEL, PC_ERR_TRUNCATED);
    EXPECT_REJECT(mid_len, sizeof mid_len, MODEL, PC_ERR_TRUNCATED);
    EXPECT_REJECT(past_end, sizeof past_end, MODEL, PC_ERR_TRUNCATED);
    EXPECT_REJECT(mid_fixed32, sizeof mid_fixed32, TENSOR, PC_ERR_TRUNCATED);
    EXPECT_REJECT(mid_fixed64, sizeof mid_fixed64, TENSOR, PC_ERR_TRUNCATED);

    /* A whole sub-message cut off at the top level: the graph's length runs past the input. */
    wbuf b = {0};
    build_valid_model(&b);
    EXPECT_REJECT(b.d, b.n - 1, MODEL, PC_ERR_TRUNCATED);
    w_free(&b);
}

static void test_length(void)
{
    pc_error err;
    wbuf b = {0};

    /* > INT_MAX is a bad length even though it also runs past the input. */
    w_key(&b, 2, WT_LEN);
    w_varint(&b, 0x80000000u);
    w_raw(&b, "abc", 3);
    EXPECT_REJECT_BUF(&b, MODEL, PC_ERR_LENGTH);
    w_free(&b);

    /* A padded 6-byte length prefix (value 1): within 10 bytes, but protobuf-c only reads 5. */
    static const uint8_t padded[] = {0x12, 0x81, 0x80, 0x80, 0x80, 0x80, 0x00, 'a'};
    EXPECT_REJECT(padded, sizeof padded, MODEL, PC_ERR_LENGTH);
    CHECK(!unpacks(MODEL, padded, sizeof padded));

    /* Inside a sub-message: GraphProto.name claims 10 bytes, the graph has 2 left (the input has more). */
    wbuf graph = {0};
    w_key(&graph, 2, WT_LEN);
    w_varint(&graph, 10);
    w_raw(&graph, "ab", 2);
    w_msg(&b, 7, &graph);
    w_str(&b, 3, "padding that keeps the input long enough");
    CHECK_STATUS(scan(&b, MODEL, &err), PC_ERR_LENGTH, &err);
    CHECK(strstr(err.message, "onnx.GraphProto field 2 (name) at byte offset 2") != NULL);
    w_free(&b);

    /* A sub-message whose length cuts a nested key in half: its own length prefix is wrong. */
    static const uint8_t cut_key[] = {0x3A, 0x01, 0x80, 0x1A, 0x01, 'x'};
    EXPECT_REJECT_IN(cut_key, sizeof cut_key, MODEL, PC_ERR_LENGTH, "onnx.GraphProto at byte offset 2");
    /* A sub-message running past the end of its parent sub-message. */
    static const uint8_t nested[] = {0x3A, 0x04, 0x5A, 0x05, 0x0A,
                                     0x00, 0x1A, 0x01, 'x'}; /* graph{input{...}} */
    EXPECT_REJECT_IN(nested, sizeof nested, MODEL, PC_ERR_LENGTH, "onnx.GraphProto field 11 (input)");
}

static void test_varint(void)
{
    static const uint8_t eleven[] = {0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
    static const uint8_t ten[] = {0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
    static const uint8_t long_key[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00};
    static const uint8_t long_len[] = {0x12, 0x80, 0x80, 0x80, 0x80, 0x80,
                                       0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    EXPECT_REJECT(eleven, sizeof eleven, MODEL, PC_ERR_VARINT);
    EXPECT_REJECT(long_key, sizeof long_key, MODEL, PC_ERR_VARINT);
    EXPECT_REJECT(long_len, sizeof long_len, MODEL, PC_ERR_VARINT);

    pc_error err;
    CHECK_OK(scan_with(ten, sizeof ten, MODEL, 64, 100, NULL, &err), &err);
    CHECK(unpacks(MODEL, ten, sizeof ten));
}

static void test_wire(void)
{
    pc_error err;
    /* Groups (3, 4) and the undefined wire types 6, 7 on ModelProto.ir_version. */
    for (unsigned wt = 3; wt <= 7; wt++) {
        if (wt == WT_FIXED32) continue;
        uint8_t bytes[] = {(uint8_t)(1u << 3 | wt), 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
        EXPECT_REJECT(bytes, sizeof bytes, MODEL, PC_ERR_WIRE);
    }

    /* The 5-byte tag that trips UBSan in protobuf-c: field number 2^32 - 1. */
    static const uint8_t tag5[] = {0xF8, 0xFF, 0xFF, 0xFF, 0x7F, 0x00};
    EXPECT_REJECT(tag5, sizeof tag5, MODEL, PC_ERR_WIRE);

    /* Field 0: one-byte key, and a multi-byte key (protobuf-c accepts the latter as an unknown field). */
    static const uint8_t field0[] = {0x00, 0x00};
    static const uint8_t field0_long[] = {0x80, 0x00, 0x00};
    EXPECT_REJECT(field0, sizeof field0, MODEL, PC_ERR_WIRE);
    EXPECT_REJECT(field0_long, sizeof field0_long, MODEL, PC_ERR_WIRE);

    /* Field numbers: 2^29 - 1 is valid (merely unknown), 2^29 is not. */
    wbuf b = {0};
    w_uint(&b, 536870911u, 0);
    EXPECT_REJECT_BUF(&b, MODEL, PC_ERR_UNSUPPORTED);
    w_free(&b);
    w_varint(&b, (uint64_t)536870912u << 3);
    w_varint(&b, 0);
    EXPECT_REJECT_BUF(&b, MODEL, PC_ERR_WIRE);
    w_free(&b);

    /* Wrong wire type for a known field. */
    w_len(&b, 1, "", 0); /* ir_version (singular int64) as LEN: packing is for repeated fields only */
    EXPECT_REJECT_BUF(&b, MODEL, PC_ERR_WIRE);
    w_free(&b);
    w_uint(&b, 7, 0); /* graph (message) as varint */
    EXPECT_REJECT_BUF(&b, MODEL, PC_ERR_WIRE);
    w_free(&b);
    w_fixed32(&b, 2, 0); /* producer_name (string) as fixed32 */
    EXPECT_REJECT_BUF(&b, MODEL, PC_ERR_WIRE);
    w_free(&b);
    w_uint(&b, 4, 0); /* float_data (repeated float) as varint */
    EXPECT_REJECT_BUF(&b, TENSOR, PC_ERR_WIRE);
    w_free(&b);
    w_uint(&b, 6, 0); /* string_data (repeated bytes) as varint */
    EXPECT_REJECT_BUF(&b, TENSOR, PC_ERR_WIRE);
    w_free(&b);
    w_fixed32(&b, 1, 0); /* dims (repeated int64) as fixed32 */
    EXPECT_REJECT_BUF(&b, TENSOR, PC_ERR_WIRE);
    w_free(&b);

    /* The message names the type, field number, field name and offset of the offending key. */
    wbuf attr = {0}, node = {0}, graph = {0};
    w_str(&attr, 1, "alpha");
    w_len(&attr, 2, "\0\0\0\0", 4); /* AttributeProto.f (singular float) as LEN */
    w_msg(&node, 5, &attr);
    w_msg(&graph, 1, &node);
    w_msg(&b, 7, &graph);
    CHECK_STATUS(scan(&b, MODEL, &err), PC_ERR_WIRE, &err);
    /* model[0..1] graph key+len, [2..3] node key+len, [4..5] attribute key+len, [6..12] name, [13] f key */
    CHECK_MSG(strstr(err.message, "onnx.AttributeProto field 2 (f) at byte offset 13") != NULL, "%s",
              err.message);
    w_free(&b);
}

static void test_unknown_field(void)
{
    pc_error err;
    wbuf node = {0}, graph = {0}, b = {0};
    w_str(&node, 3, "n");
    w_len(&node, 10, "", 0); /* NodeProto.device_configurations (IR 11) is not modelled */
    w_msg(&graph, 1, &node);
    w_msg(&b, 7, &graph);
    CHECK_STATUS(scan(&b, MODEL, &err), PC_ERR_UNSUPPORTED, &err);
    CHECK_MSG(strcmp(err.message,
                     "unknown field 10 in onnx.NodeProto at byte offset 7 (not modelled by passcheck; "
                     "refusing to drop it)") == 0,
              "%s", err.message);
    w_free(&b);

    w_uint(&b, 3, 1); /* GraphProto field 3 is reserved */
    EXPECT_REJECT_BUF(&b, GRAPH, PC_ERR_UNSUPPORTED);
    w_free(&b);
    w_len(&b, 26, "", 0); /* ModelProto.configuration (IR 11) */
    EXPECT_REJECT_BUF(&b, MODEL, PC_ERR_UNSUPPORTED);
    w_free(&b);
}

static void test_packed(void)
{
    pc_error err;
    pc_prescan_stats stats;
    wbuf unpacked = {0}, packed = {0}, payload = {0};

    /* TensorProto.dims [1, 2, 300] both ways: same counts, same unpacked values. */
    w_uint(&unpacked, 1, 1);
    w_uint(&unpacked, 1, 2);
    w_uint(&unpacked, 1, 300);
    w_varint(&payload, 1);
    w_varint(&payload, 2);
    w_varint(&payload, 300);
    w_msg(&packed, 1, &payload);
    CHECK_OK(scan_with(unpacked.d, unpacked.n, TENSOR, 64, 100, &stats, &err), &err);
    CHECK(stats.elements == 3 && stats.messages == 0 && stats.max_depth == 0);
    CHECK_OK(scan_with(packed.d, packed.n, TENSOR, 64, 100, &stats, &err), &err);
    CHECK(stats.elements == 3 && stats.messages == 0);
    Onnx__TensorProto *a = onnx__tensor_proto__unpack(NULL, unpacked.n, unpacked.d);
    Onnx__TensorProto *b = onnx__tensor_proto__unpack(NULL, packed.n, packed.d);
    CHECK(a && b);
    if (a && b) {
        CHECK(a->n_dims == 3 && b->n_dims == 3);
        if (a->n_dims == 3 && b->n_dims == 3) CHECK(memcmp(a->dims, b->dims, 3 * sizeof *a->dims) == 0);
    }
    if (a) onnx__tensor_proto__free_unpacked(a, NULL);
    if (b) onnx__tensor_proto__free_unpacked(b, NULL);
    w_free(&unpacked);
    w_free(&packed);

    /* Packed fields declared [packed = true] may still arrive unpacked: float_data as two fixed32 records. */
    w_fixed32(&unpacked, 4, float_bits(1.0f));
    w_fixed32(&unpacked, 4, float_bits(2.0f));
    CHECK_OK(scan_with(unpacked.d, unpacked.n, TENSOR, 64, 100, &stats, &err), &err);
    CHECK(stats.elements == 2);
    CHECK(unpacks(TENSOR, unpacked.d, unpacked.n));
    w_free(&unpacked);

    /* Empty packed payload: valid, no elements. */
    w_len(&packed, 7, "", 0);
    CHECK_OK(scan_with(packed.d, packed.n, TENSOR, 64, 100, &stats, &err), &err);
    CHECK(stats.elements == 0);
    w_free(&packed);

    /* Fixed-width payloads must be whole elements. */
    w_len(&packed, 4, "\0\0\0\0\0\0\0\0", 8);                   /* float_data: 2 */
    w_len(&packed, 10, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16); /* double_data: 2 */
    CHECK_OK(scan_with(packed.d, packed.n, TENSOR, 64, 100, &stats, &err), &err);
    CHECK(stats.elements == 4);
    CHECK(unpacks(TENSOR, packed.d, packed.n));
    w_free(&packed);
    w_len(&packed, 4, "\0\0\0\0\0\0\0", 7);
    EXPECT_REJECT_BUF(&packed, TENSOR, PC_ERR_WIRE);
    w_free(&packed);
    w_len(&packed, 10, "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
    EXPECT_REJECT_BUF(&packed, TENSOR, PC_ERR_WIRE);
    w_free(&packed);

    /* Varint payloads: a 10-byte element is fine, an unfinished or 11-byte one is not. */
    static const uint8_t ten[] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x05};
    static const uint8_t eleven[] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
    static const uint8_t unfinished[] = {0x01, 0x80};
    w_len(&packed, 11, ten, sizeof ten); /* uint64_data */
    CHECK_OK(scan_with(packed.d, packed.n, TENSOR, 64, 100, &stats, &err), &err);
    CHECK(stats.elements == 2);
    CHECK(unpacks(TENSOR, packed.d, packed.n));
    w_free(&packed);
    w_len(&packed, 7, unfinished, sizeof unfinished); /* int64_data */
    EXPECT_REJECT_BUF(&packed, TENSOR, PC_ERR_WIRE);
    w_free(&packed);
    w_len(&packed, 7, eleven, sizeof eleven);
    EXPECT_REJECT_BUF(&packed, TENSOR, PC_ERR_VARINT);
    w_free(&packed);

    /* AttributeProto.ints mixed packed and unpacked in one message. */
    w_uint(&packed, 8, 7);
    w_len(&packed, 8, "\x01\x02\x03", 3);
    w_uint(&packed, 8, 9);
    CHECK_OK(scan_with(packed.d, packed.n, &onnx__attribute_proto__descriptor, 64, 100, &stats, &err), &err);
    CHECK(stats.elements == 5);
    Onnx__AttributeProto *attr = onnx__attribute_proto__unpack(NULL, packed.n, packed.d);
    CHECK(attr && attr->n_ints == 5);
    if (attr) onnx__attribute_proto__free_unpacked(attr, NULL);
    w_free(&packed);
}

static void test_embedded_nul(void)
{
    pc_error err;
    wbuf b = {0}, node = {0}, graph = {0}, attr = {0};

    w_len(&b, 2, "a\0b", 3); /* ModelProto.producer_name */
    CHECK_STATUS(scan(&b, MODEL, &err), PC_ERR_EMBEDDED_NUL, &err);
    CHECK_MSG(strstr(err.message, "onnx.ModelProto field 2 (producer_name) at byte offset 0") != NULL, "%s",
              err.message);
    w_free(&b);

    w_len(&node, 1, "x\0", 2); /* NodeProto.input, a repeated string */
    w_msg(&graph, 1, &node);
    w_msg(&b, 7, &graph);
    EXPECT_REJECT_IN(b.d, b.n, MODEL, PC_ERR_EMBEDDED_NUL, "onnx.NodeProto field 1 (input)");
    w_free(&b);

    /* bytes fields carry NULs legitimately. */
    w_len(&b, 9, "\0\0\0\0", 4); /* TensorProto.raw_data */
    w_len(&b, 6, "a\0", 2);      /* TensorProto.string_data (repeated bytes) */
    CHECK_OK(scan(&b, TENSOR, &err), &err);
    CHECK(unpacks(TENSOR, b.d, b.n));
    w_free(&b);
    w_len(&attr, 4, "\0", 1); /* AttributeProto.s */
    CHECK_OK(scan(&attr, &onnx__attribute_proto__descriptor, &err), &err);
    w_free(&attr);
}

/* TypeProto{sequence_type{elem_type{TypeProto{...}}}} with `levels` sub-messages below the root, built from
 * the inside out backwards into one buffer, so it costs O(levels). */
static uint8_t *build_type_chain(size_t levels, size_t *out_size)
{
    size_t cap = levels * 6 + 16;
    uint8_t *buf = malloc(cap);
    if (!buf) return NULL;
    size_t pos = cap;
    for (size_t i = 0; i < levels; i++) {
        size_t inner = cap - pos;
        uint8_t tmp[10];
        size_t n = 0;
        for (uint64_t v = inner;; v >>= 7) {
            tmp[n++] = (uint8_t)(v >= 0x80 ? (v & 0x7f) | 0x80 : v);
            if (v < 0x80) break;
        }
        pos -= n;
        memcpy(buf + pos, tmp, n);
        /* Odd levels are Sequence (TypeProto.sequence_type = 4), even ones TypeProto (Sequence.elem_type =
         * 1), counting from the root down. Built backwards, the innermost wrapper is level `levels`. */
        size_t level = levels - i;
        buf[--pos] = level % 2 ? (uint8_t)(4u << 3 | WT_LEN) : (uint8_t)(1u << 3 | WT_LEN);
    }
    memmove(buf, buf + pos, cap - pos);
    *out_size = cap - pos;
    return buf;
}

static void test_nesting(void)
{
    pc_error err;
    pc_prescan_stats stats;
    size_t n = 0;
    uint8_t *chain = build_type_chain(10000, &n);
    CHECK(chain != NULL);
    if (!chain) return;

    CHECK_STATUS(scan_with(chain, n, TYPE, 64, 1000000, &stats, &err), PC_ERR_NESTING, &err);
    CHECK(strstr(err.message, "onnx.TypeProto") != NULL && strstr(err.message, "byte offset") != NULL);
    CHECK(stats.max_depth == 64);

    /* The walk itself handles any depth: exact limit accepted, one below rejected. */
    CHECK_OK(scan_with(chain, n, TYPE, 10000, 1000000, &stats, &err), &err);
    CHECK(stats.max_depth == 10000 && stats.messages == 10000 && stats.elements == 0);
    CHECK_STATUS(scan_with(chain, n, TYPE, 9999, 1000000, NULL, &err), PC_ERR_NESTING, &err);
    free(chain);

    /* A shallow chain is fine with the default limit and unpacks. */
    chain = build_type_chain(20, &n);
    CHECK(chain != NULL);
    if (!chain) return;
    CHECK_OK(scan_with(chain, n, TYPE, 64, 1000000, &stats, &err), &err);
    CHECK(stats.max_depth == 20);
    CHECK(unpacks(TYPE, chain, n));
    free(chain);
}

static void test_budget(void)
{
    pc_error err;
    pc_prescan_stats stats;
    const size_t count = 500000;
    uint8_t *buf = malloc(count * 2);
    CHECK(buf != NULL);
    if (!buf) return;
    for (size_t i = 0; i < count; i++) {
        buf[2 * i] = 0x2A; /* GraphProto.initializer, empty TensorProto */
        buf[2 * i + 1] = 0x00;
    }
    CHECK_STATUS(scan_with(buf, count * 2, GRAPH, 64, 100000, &stats, &err), PC_ERR_BUDGET, &err);
    CHECK_MSG(strstr(err.message, "onnx.GraphProto field 5 (initializer) at byte offset") != NULL, "%s",
              err.message);
    CHECK(stats.messages + stats.elements == 100002); /* each entry is a message and an element */
    CHECK_OK(scan_with(buf, count * 2, GRAPH, 64, 1000000, &stats, &err), &err);
    CHECK(stats.messages == count && stats.elements == count && stats.max_depth == 1);
    free(buf);

    /* Packed elements count one by one. */
    wbuf b = {0};
    uint8_t ones[1000];
    memset(ones, 0x01, sizeof ones);
    w_len(&b, 7, ones, sizeof ones); /* TensorProto.int64_data: 1000 elements */
    CHECK_OK(scan_with(b.d, b.n, TENSOR, 64, 1000, &stats, &err), &err);
    CHECK(stats.elements == 1000);
    CHECK_STATUS(scan_with(b.d, b.n, TENSOR, 64, 999, NULL, &err), PC_ERR_BUDGET, &err);
    w_free(&b);
}

int main(void)
{
    test_usage_and_empty();
    test_valid_model();
    test_mutations_unpack();
    test_truncated();
    test_length();
    test_varint();
    test_wire();
    test_unknown_field();
    test_packed();
    test_embedded_nul();
    test_nesting();
    test_budget();
    return pc_test_finish("test_onnx_prescan");
}
