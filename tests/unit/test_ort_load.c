/* The ORT-format loader (core/ort): files ONNX Runtime 1.30 wrote (tests/ort/data, from the ONNX backend
 * models test_loop11, test_constant and test_conv_with_strides_padding) load, keep their EP assignment and
 * compute what the ONNX originals do; then each bad-input class of the FlatBuffers level and of the ORT
 * format's semantics, made by editing one field of a good file located through the verified structure (no
 * byte offsets written down), is refused with its own status and a message naming the byte or the object; OOM
 * injection over the whole load gives out-of-memory or success, never anything else. */
#include <stdlib.h>
#include <string.h>

#include "core/ort/fb.h"
#include "tests/ort/ort_fixture.h"
#include "reference/reference.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

typedef ort_buf buf;

static buf fixture(const char *name)
{
    return ort_fixture(name);
}

static buf copy(buf b)
{
    buf c = {malloc(b.size), b.size};
    if (!c.data) exit(1);
    memcpy(c.data, b.data, b.size);
    return c;
}

static void put_u32(uint8_t *b, size_t pos, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[pos + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static void put_u16(uint8_t *b, size_t pos, uint16_t v)
{
    b[pos] = (uint8_t)v;
    b[pos + 1] = (uint8_t)(v >> 8);
}

static uint32_t vtable_of(const uint8_t *b, uint32_t t)
{
    return (uint32_t)((int64_t)t - (int32_t)fb_u32(b, t));
}

/* Positions in a good file, through the accessors (the file is verified first). */
typedef struct places {
    uint32_t root, model, graph, nodes, node0, version;
} places;

static places find(const buf *b)
{
    pc_error err;
    if (fb_verify(b->data, b->size, &pc_ort_schema, NULL, &err) != PC_OK) {
        fprintf(stderr, "fixture does not verify: %s\n", err.message);
        exit(1);
    }
    places p;
    p.root = fb_root(b->data);
    p.model = fb_field_ref(b->data, p.root, 1);
    p.graph = fb_field_ref(b->data, p.model, 7);
    p.nodes = fb_field_ref(b->data, p.graph, 2);
    p.node0 = fb_vec_len(b->data, p.nodes) ? fb_vec_ref(b->data, p.nodes, 0) : 0;
    p.version = fb_field_ref(b->data, p.root, 0);
    return p;
}

/* The Loop's body graph (attribute 'body' of node 0 of test_loop11). */
static uint32_t loop_body(const buf *b, const places *p)
{
    uint32_t attrs = fb_field_ref(b->data, p->node0, 10);
    for (uint32_t i = 0; i < fb_vec_len(b->data, attrs); i++) {
        uint32_t a = fb_vec_ref(b->data, attrs, i);
        if (fb_field_ref(b->data, a, 7)) return fb_field_ref(b->data, a, 7);
    }
    return 0;
}

static void expect(buf bad, pc_status want, const char *needle, const char *what)
{
    pc_error err;
    pc_model *m = NULL;
    pc_status st = pc_model_load_bytes(bad.data, bad.size, NULL, &m, &err);
    CHECK_MSG(st == want, "%s: %s (%s), want %s", what, pc_status_name(st), st ? err.message : "loaded",
              pc_status_name(want));
    if (st == want && needle)
        CHECK_MSG(strstr(err.message, needle) != NULL, "%s: message '%s' lacks '%s'", what, err.message,
                  needle);
    pc_model_free(m);
    free(bad.data);
}

/* Loads, keeps ORT's EP assignment, and computes what the recorded backend outputs say (the ONNX original's
 * inputs and outputs, from the backend data). */
static void good_files(void)
{
    static const char *names[] = {"test_loop11.ort", "test_constant.ort",
                                  "test_conv_with_strides_padding.ort"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        buf b = fixture(names[i]);
        pc_error err;
        pc_model *m = NULL;
        CHECK_OK(pc_model_load_bytes(b.data, b.size, NULL, &m, &err), &err);
        uint32_t assigned = 0, nodes = 0;
        for (const pc_node *n = m ? m->graph->first : NULL; n; n = n->next, nodes++)
            assigned += n->ep && strcmp(n->ep, "CPUExecutionProvider") == 0;
        CHECK_MSG(m && assigned == nodes, "%s: %u of %u nodes assigned to CPUExecutionProvider", names[i],
                  assigned, nodes);
        /* the ORT file and the ONNX original compute the same on the recorded inputs */
        const char *dir = getenv("PC_TESTDATA_DIR");
        char onnx[1024];
        snprintf(onnx, sizeof onnx, "%s/node/%.*s/model.onnx", dir ? dir : "", (int)(strlen(names[i]) - 4),
                 names[i]);
        pc_model *orig = NULL;
        if (m && dir && pc_model_load_file(onnx, NULL, &orig, &err) == PC_OK) {
            char path[1100];
            pc_data *in[8] = {0};
            uint32_t n_in = m->graph->n_inputs;
            for (uint32_t k = 0; k < n_in && k < 8; k++) {
                snprintf(path, sizeof path, "%s/node/%.*s/test_data_set_0/input_%u.pb", dir,
                         (int)(strlen(names[i]) - 4), names[i], k);
                CHECK_OK(pc_data_load_file(path, NULL, &in[k], &err), &err);
            }
            pc_data **a = NULL, **o = NULL;
            CHECK_OK(pc_ref_run(m, n_in, in, &a, &err), &err);
            CHECK_OK(pc_ref_run(orig, n_in, in, &o, &err), &err);
            pc_compare_result cr;
            for (uint32_t k = 0; a && o && k < m->graph->n_outputs; k++)
                CHECK_MSG(pc_data_compare_exact(o[k], a[k], &cr) == PC_COMPARE_EQUAL, "%s output %u: %s",
                          names[i], k, cr.detail);
            if (a) pc_ref_free_outputs(m, a);
            if (o) pc_ref_free_outputs(orig, o);
            for (uint32_t k = 0; k < n_in && k < 8; k++)
                pc_data_unref(in[k]);
            pc_model_free(orig);
        }
        pc_model_free(m);
        free(b.data);
    }
}

static void flatbuffers_level(void)
{
    buf good = fixture("test_loop11.ort");
    places p = find(&good);
    buf b;

    b = copy(good);
    b.size = 11;
    expect(b, PC_ERR_TRUNCATED, "12", "11 bytes");
    /* without "ORTM" at byte 4 a file is not taken for the ORT format (detection is by content): the verifier
     * itself names the identifier */
    b = copy(good);
    b.data[5] = 'X';
    pc_error ierr;
    CHECK(fb_verify(b.data, b.size, &pc_ort_schema, NULL, &ierr) == PC_ERR_FB_IDENTIFIER &&
          strstr(ierr.message, "byte 4"));
    free(b.data);
    b = copy(good);
    put_u32(b.data, 0, 0);
    expect(b, PC_ERR_FB_OFFSET, "byte 0", "root offset 0");
    b = copy(good);
    put_u32(b.data, 0, (uint32_t)good.size);
    expect(b, PC_ERR_FB_OFFSET, "past the end", "root offset past the end");
    b = copy(good);
    put_u32(b.data, 0, p.root + 2);
    expect(b, PC_ERR_FB_ALIGN, "aligned", "root table misaligned");
    b = copy(good); /* the root table's vtable moved outside the buffer */
    put_u32(b.data, p.root, (uint32_t)(int32_t) - (int32_t)(good.size));
    expect(b, PC_ERR_FB_VTABLE, "InferenceSession", "vtable outside");
    b = copy(good);
    put_u16(b.data, vtable_of(good.data, p.root), 3);
    expect(b, PC_ERR_FB_VTABLE, "vtable size 3", "odd vtable size");
    b = copy(good); /* the table's size cut to its soffset: every field lies outside it */
    put_u16(b.data, vtable_of(good.data, p.root) + 2, 4);
    expect(b, PC_ERR_FB_VTABLE, "outside the table", "field beyond tsize");
    b = copy(good);
    b.data[p.version + 4 + fb_u32(good.data, p.version)] = 'x';
    expect(b, PC_ERR_FB_STRING, "ort_version", "unterminated string");
    b = copy(good);
    b.data[fb_field_ref(good.data, p.node0, 5) + 4] = 0; /* op_type's first byte */
    expect(b, PC_ERR_EMBEDDED_NUL, "op_type", "NUL inside a string");
    b = copy(good);
    put_u32(b.data, p.nodes, 0x3fffffff);
    expect(b, PC_ERR_LENGTH, "nodes", "vector count past the end");
    b = copy(good);
    put_u32(b.data, p.nodes + 4, 0);
    expect(b, PC_ERR_FB_OFFSET, "nodes[0]", "zero offset in a vector of tables");
    /* two slots of the body graph's nodes vector naming one node table: shared tables are refused */
    uint32_t body = loop_body(&good, &p), body_nodes = fb_field_ref(good.data, body, 2);
    CHECK(fb_vec_len(good.data, body_nodes) >= 2);
    b = copy(good);
    put_u32(b.data, body_nodes + 8, fb_vec_ref(good.data, body_nodes, 0) - (body_nodes + 8));
    expect(b, PC_ERR_FB_OVERLAP, "shared", "a table referenced twice");
    /* a TypeInfo's union: type beyond the three kinds, and type NONE with a value */
    uint32_t args = fb_field_ref(good.data, p.graph, 1), ti = 0;
    for (uint32_t i = 0; i < fb_vec_len(good.data, args) && !ti; i++)
        ti = fb_field_ref(good.data, fb_vec_ref(good.data, args, i), 2);
    CHECK(ti && fb_field_pos(good.data, ti, 1));
    b = copy(good);
    b.data[fb_field_pos(good.data, ti, 1)] = 7;
    expect(b, PC_ERR_FB_UNION, "union type 7", "unknown union type");
    b = copy(good);
    b.data[fb_field_pos(good.data, ti, 1)] = 0;
    expect(b, PC_ERR_FB_UNION, "NONE", "union value with type NONE");
    b = copy(good);
    put_u32(b.data,
            fb_field_ref(good.data, fb_field_ref(good.data, ti, 2), 0)
                ? fb_field_pos(good.data, fb_field_ref(good.data, ti, 2), 0)
                : 0,
            99);
    expect(b, PC_ERR_ENUM, "elem_type", "TensorDataType 99");
    /* nesting: the body graph is deeper than a budget of 3 tables */
    pc_load_options o;
    pc_load_options_default(&o);
    o.max_depth = 3;
    pc_error err;
    pc_model *m = NULL;
    pc_status st = pc_model_load_bytes(good.data, good.size, &o, &m, &err);
    CHECK_MSG(st == PC_ERR_NESTING, "depth 3: %s", pc_status_name(st));
    pc_model_free(m);
    free(good.data);
}

static void ort_semantics(void)
{
    buf good = fixture("test_loop11.ort");
    places p = find(&good);
    buf b;
    /* ort_version: not digits, and an old version */
    b = copy(good);
    b.data[p.version + 4] = 'x';
    expect(b, PC_ERR_FORMAT_VERSION, "not 1-3 digits", "ort_version x");
    b = copy(good);
    b.data[p.version + 4] = '4';
    expect(b, PC_ERR_FORMAT_VERSION, "ort_version 4", "ort_version 4");
    /* node indices: at max_node_index, and two nodes with one index (the body graph) */
    b = copy(good);
    put_u32(b.data, fb_field_pos(good.data, p.graph, 3), 0);
    expect(b, PC_ERR_VALUE, "max_node_index", "index not below max_node_index");
    uint32_t body = loop_body(&good, &p), body_nodes = fb_field_ref(good.data, body, 2);
    uint32_t n1 = fb_vec_ref(good.data, body_nodes, 1), n0 = fb_vec_ref(good.data, body_nodes, 0);
    b = copy(good);
    if (fb_field_pos(good.data, n1, 4) && fb_field_pos(good.data, n0, 4)) {
        memcpy(b.data + fb_field_pos(good.data, n1, 4), good.data + fb_field_pos(good.data, n0, 4), 4);
        expect(b, PC_ERR_DUPLICATE_NAME, "share index", "duplicate node index");
    } else { /* index 0 is the default and not stored: make node 1's stored index node 0's */
        uint32_t pos =
            fb_field_pos(good.data, n1, 4) ? fb_field_pos(good.data, n1, 4) : fb_field_pos(good.data, n0, 4);
        put_u32(b.data, pos, 0);
        expect(b, PC_ERR_DUPLICATE_NAME, "share index", "duplicate node index");
    }
    /* a NodeEdge naming a node no node is */
    uint32_t edges = fb_field_ref(good.data, body, 4);
    CHECK(fb_vec_len(good.data, edges) >= 1);
    uint32_t e0 = fb_vec_ref(good.data, edges, 0);
    b = copy(good);
    if (fb_field_pos(good.data, e0, 0)) {
        put_u32(b.data, fb_field_pos(good.data, e0, 0), 999);
        expect(b, PC_ERR_DANGLING_INPUT, "node index 999", "NodeEdge to nowhere");
    } else {
        free(b.data);
    }
    /* an EdgeEnd naming a node no node is */
    uint32_t ends = 0;
    for (uint32_t i = 0; i < fb_vec_len(good.data, edges) && !ends; i++) {
        uint32_t e = fb_vec_ref(good.data, edges, i), v = fb_field_ref(good.data, e, 1);
        if (fb_vec_len(good.data, v)) ends = v;
    }
    CHECK(ends);
    b = copy(good);
    put_u32(b.data, ends + 4, 999);
    expect(b, PC_ERR_DANGLING_INPUT, "names node index 999", "EdgeEnd to nowhere");
    b = copy(good); /* its argument index out of range */
    put_u32(b.data, ends + 8, 77);
    expect(b, PC_ERR_ARITY, "out of range", "EdgeEnd argument");
    /* a node input naming no NodeArg: the first input name's first byte changed */
    uint32_t ins = fb_field_ref(good.data, n0, 8);
    CHECK(fb_vec_len(good.data, ins) >= 1);
    b = copy(good); /* names are shared strings: the slot is pointed at the node's op_type instead */
    put_u32(b.data, ins + 4, fb_field_ref(good.data, n0, 5) - (ins + 4));
    expect(b, PC_ERR_DANGLING_INPUT, "names no NodeArg", "input without NodeArg");
    /* since_version 0 */
    b = copy(good);
    if (fb_field_pos(good.data, p.node0, 3)) {
        put_u32(b.data, fb_field_pos(good.data, p.node0, 3), 0);
        expect(b, PC_ERR_OPSET, "since_version 0", "since_version 0");
    } else {
        free(b.data);
    }
    /* the default domain imported at version 0: named as the import's fault, not as the Loop's since_version
     * (which used to be reported "outside 1..0") */
    uint32_t ops = fb_field_ref(good.data, p.model, 1), op0 = fb_vec_ref(good.data, ops, 0);
    CHECK(fb_field_pos(good.data, op0, 1) && *fb_field_str(good.data, op0, 0, NULL) == '\0');
    b = copy(good);
    memset(b.data + fb_field_pos(good.data, op0, 1), 0, 8);
    expect(b, PC_ERR_OPSET, "opset 0 for domain", "opset version 0");
    /* max_node_index far above the table budget: refused, though nothing is sized by it (ONNX Runtime once
     * allocated a slot per index: 32 GiB here) */
    b = copy(good);
    put_u32(b.data, fb_field_pos(good.data, p.graph, 3), 0xffffffffu);
    expect(b, PC_ERR_BUDGET, "max_node_index 4294967295", "absurd max_node_index");
    /* the kernel type string resolver binding an input Add-7 does not have (it has 2) */
    uint32_t resolver = fb_field_ref(good.data, p.root, 3), entries = fb_field_ref(good.data, resolver, 0);
    uint32_t add = fb_vec_ref(good.data, entries, 0), arg = 0;
    CHECK(strcmp(fb_field_str(good.data, add, 0, NULL), ":Add:7") == 0);
    uint32_t strs = fb_field_ref(good.data, add, 1),
             args = fb_field_ref(good.data, fb_vec_ref(good.data, strs, 0), 1);
    for (uint32_t i = 0; i < fb_vec_len(good.data, args) && !arg; i++)
        if (fb_field_pos(good.data, fb_vec_ref(good.data, args, i), 1))
            arg = fb_vec_ref(good.data, args, i); /* index 0 is the default and not stored */
    CHECK(arg && fb_field_u(good.data, arg, 0, 1, 0) == 0);
    b = copy(good);
    put_u32(b.data, fb_field_pos(good.data, arg, 1), 9);
    expect(b, PC_ERR_ARITY, "input index 9, but Add-7 has 2 formal inputs", "resolver index out of range");
    free(good.data);

    /* tensors: test_constant's initializer without dims, and with its data type changed (raw_data length) */
    good = fixture("test_constant.ort");
    p = find(&good);
    uint32_t inits = fb_field_ref(good.data, p.graph, 0), t = fb_vec_ref(good.data, inits, 0);
    b = copy(good);
    put_u16(b.data, vtable_of(good.data, t) + 4 + 2 * 2,
            0); /* dims absent (vtables are shared: still a tensor) */
    expect(b, PC_ERR_MISSING_FIELD, "no dims", "tensor without dims");
    b = copy(good);
    put_u32(b.data, fb_field_pos(good.data, t, 3), 11); /* float -> double: 100 bytes for 25 doubles */
    expect(b, PC_ERR_DATA_SIZE, "raw_data", "raw_data length");
    b = copy(good);
    put_u16(b.data, vtable_of(good.data, t) + 4 + 2 * 4, 0);
    expect(b, PC_ERR_MISSING_FIELD, "no raw_data", "tensor without raw_data");
    free(good.data);
}

/* OOM injection: the N-th allocation fails, for every N until the load succeeds. */
static void oom(void)
{
    buf good = fixture("test_loop11.ort");
    int failures = 0;
    for (uint64_t n = 1; n < 5000; n++) {
        pc_load_options o;
        pc_load_options_default(&o);
        o.fail_after = n;
        pc_error err;
        pc_model *m = NULL;
        pc_status st = pc_model_load_bytes(good.data, good.size, &o, &m, &err);
        pc_model_free(m);
        if (st == PC_OK) break;
        CHECK_MSG(st == PC_ERR_NOMEM, "allocation %llu failing: %s (%s)", (unsigned long long)n,
                  pc_status_name(st), err.message);
        failures++;
    }
    CHECK_MSG(failures > 10, "only %d allocations before success", failures);
    free(good.data);
}

static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Random edits of the good files (1 to 4 bytes set to random values, 3,000 per file): each either loads into
 * a model that verifies or is refused with an error; the sanitizer builds see every read. */
static void random_edits(void)
{
    static const char *names[] = {"test_loop11.ort", "test_constant.ort",
                                  "test_conv_with_strides_padding.ort"};
    uint64_t rng = 0x5eed0f0127ull;
    int loaded = 0, refused = 0;
    for (size_t f = 0; f < sizeof names / sizeof names[0]; f++) {
        buf good = fixture(names[f]);
        for (int t = 0; t < 3000; t++) {
            buf b = copy(good);
            int edits = 1 + (int)(next_rand(&rng) % 4);
            for (int e = 0; e < edits; e++)
                b.data[next_rand(&rng) % b.size] = (uint8_t)next_rand(&rng);
            pc_error err;
            pc_model *m = NULL;
            pc_status st = pc_model_load_bytes(b.data, b.size, NULL, &m, &err);
            if (st == PC_OK) {
                CHECK_MSG(pc_model_verify(m, &err) == PC_OK, "%s edit %d: loads but does not verify: %s",
                          names[f], t, err.message);
                loaded++;
            } else {
                CHECK_MSG(err.message[0] != '\0', "%s edit %d: %s without a message", names[f], t,
                          pc_status_name(st));
                refused++;
            }
            pc_model_free(m);
            free(b.data);
        }
        free(good.data);
    }
    printf("test_ort_load: random edits: %d loaded, %d refused\n", loaded, refused);
    CHECK(refused > 1000 && loaded > 100);
}

/* The saver: each fixture ORT wrote, loaded, saved by passcheck, reloaded: the same IR, and saving that gives
 * the same bytes; a small ONNX-built model likewise, with its EP assignment carried; and what the format
 * cannot hold refused with UNSUPPORTED naming the node or value. */
static void saver(void)
{
    static const char *names[] = {"test_loop11.ort", "test_constant.ort",
                                  "test_conv_with_strides_padding.ort"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        buf b = fixture(names[i]);
        pc_error err;
        pc_model *a = NULL, *r = NULL;
        uint8_t *s1 = NULL, *s2 = NULL;
        size_t n1 = 0, n2 = 0;
        CHECK_OK(pc_model_load_bytes(b.data, b.size, NULL, &a, &err), &err);
        if (a) CHECK_OK(pc_model_save_ort_bytes(a, &s1, &n1, &err), &err);
        if (s1) CHECK_OK(pc_model_load_bytes(s1, n1, NULL, &r, &err), &err);
        char diff[256];
        if (r) CHECK_MSG(pc_model_equal(a, r, diff, sizeof diff), "%s: reloaded differs: %s", names[i], diff);
        if (r) CHECK_OK(pc_model_save_ort_bytes(r, &s2, &n2, &err), &err);
        CHECK_MSG(s1 && s2 && n1 == n2 && memcmp(s1, s2, n1) == 0,
                  "%s: second save differs (%zu vs %zu bytes)", names[i], n1, n2);
        free(s1);
        free(s2);
        pc_model_free(a);
        pc_model_free(r);
        free(b.data);
    }
    /* refusals: a node with a layering annotation, an op ORT runs only by expanding its function, an optional
     * value */
    static const struct {
        const char *op, *expect;
        bool annotate;
    } bad[] = {{"Relu", "metadata", true}, {"HardSwish", "function body", false}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pc_error err;
        pc_model *m = pt_model(14);
        pt_input(m, "x", PC_DTYPE_FLOAT, 1, (int64_t[]){4});
        pt_node(m, bad[i].op, "", "x", "y", bad[i].annotate ? "block0" : NULL);
        pt_output(m, "y");
        uint8_t *out = NULL;
        size_t n = 0;
        pc_status st = pc_model_save_ort_bytes(m, &out, &n, &err);
        CHECK_MSG(st == PC_ERR_UNSUPPORTED && strstr(err.message, bad[i].expect), "%s: %s (%s)", bad[i].op,
                  pc_status_name(st), st ? err.message : "saved");
        CHECK(out == NULL);
        pc_model_free(m);
    }
    /* the EP assignment is carried */
    pc_error err;
    pc_model *m = pt_model(14);
    pt_input(m, "x", PC_DTYPE_FLOAT, 1, (int64_t[]){4});
    pc_node *relu = pt_node(m, "Relu", "", "x", "y", NULL);
    relu->ep = "CPUExecutionProvider";
    pt_output(m, "y");
    uint8_t *out = NULL;
    size_t n = 0;
    pc_model *r = NULL;
    CHECK_OK(pc_model_save_ort_bytes(m, &out, &n, &err), &err);
    if (out) CHECK_OK(pc_model_load_bytes(out, n, NULL, &r, &err), &err);
    CHECK(r && r->graph->first && r->graph->first->ep &&
          strcmp(r->graph->first->ep, "CPUExecutionProvider") == 0);
    free(out);
    pc_model_free(r);
    pc_model_free(m);
}

int main(void)
{
    good_files();
    flatbuffers_level();
    ort_semantics();
    oom();
    random_edits();
    saver();
    return pc_test_finish("test_ort_load");
}
