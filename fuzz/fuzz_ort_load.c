/* fuzz_ort_load — libFuzzer target for the ORT-format loader (core/ort), with a FlatBuffers-aware mutator.
 *
 * Property checked for every input (as fuzz_onnx_load.c):
 *   1. pc_model_load_bytes never crashes, leaks or trips a sanitizer, whatever the bytes;
 *   2. if it accepts the input, the model round-trips through the ONNX saver: save -> reload succeeds -> the
 *      reloaded model is pc_model_equal to the first one -> saving the reloaded model gives identical bytes.
 * A violated property aborts with a message naming the step; libFuzzer then records the input.
 *   3. it also round-trips through the ORT saver: save as ORT -> reload -> the second ORT save byte-identical
 *      (fuzz/fuzz_roundtrip.h; a model the format cannot hold is not judged).
 *
 * The loader picks the format by content ("ORTM" at bytes 4..7), so inputs without the identifier run the
 * ONNX loader; they are cheap and covered by fuzz_onnx_load, so the mutator keeps the identifier.
 *
 * Mutator (libFuzzer build only, PC_FUZZ_MUTATOR; the replay build has none): a quarter of the time, or when
 * the input does not pass fb_verify, libFuzzer's byte mutations (identifier restored). Otherwise the input is
 * walked from the root with the schema as data (pc_ort_schema) and one FlatBuffers-level edit is made:
 * offsets (0, +-4, another object, wild), vtable entries (drop a field, alias another field's bytes, vsize,
 * tsize, the table's soffset), vector counts, union tags, enum and scalar values (range boundaries, values of
 * the same field elsewhere in the file), EdgeEnd records, string bytes and lengths, a string offset
 * redirected to another string (ORT shares names, so the file still verifies and the loader sees a rewired
 * graph), swapped elements of vectors of tables or strings (reordered nodes, inputs), and splices: a table
 * with everything it reaches copied to the end of the file from elsewhere in the file or from the crossover
 * input, and a field of that table type pointed at the copy (uoffsets only point forward, so an appended copy
 * is always reachable and all its internal offsets stay valid). Most edits keep the file verifiable, so the
 * semantic checks in core/ort/load.c are reached; the others probe the verifier with near-valid files.
 * Deterministic given libFuzzer's seed (a splitmix64 stream, no global state between calls).
 *
 * Built two ways: with -fsanitize=fuzzer (libFuzzer's main) and with fuzz/standalone_main.c (replays files;
 * used by ctest in every build configuration). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/passcheck.h"
#include "fuzz/fuzz_roundtrip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_load_roundtrip("fuzz_ort_load", data, size, true);
}

#ifdef PC_FUZZ_MUTATOR
/* The mutator verifies every input it edits structurally (and crossover verifies two), listing the places it
 * may edit in the same walk (fb_verify's visitor). With the library's
 * fb_verify that cost about a third of each execution under libFuzzer: pccore is built with coverage and
 * comparison tracing, and the tracing hooks ran for the mutator's verifications too (perf: 44 % of the time
 * in the mutators, most of it __sanitizer_cov_trace_*cmp* inside fb_verify). So the mutator has its own copy
 * of the verifier, the same source under other names, built without coverage instrumentation like the rest of
 * the mutator (ASan stays); the loader keeps the instrumented one, so the verifier's coverage still counts.
 */
/* fb_verify_mut.h renames the verifier for the declarations core/internal.h brings (core/ort/fb.h); the mut_*
 * definitions are core/ort/fb_verify.c compiled a second time under those names without coverage
 * (fuzz/CMakeLists.txt, pc_fb_verify_mut) */
#include "fuzz/fb_verify_mut.h"
#include "core/internal.h"
#pragma clang attribute push(__attribute__((no_sanitize("coverage"))), apply_to = function)

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1, const uint8_t *data2, size_t size2,
                                 uint8_t *out, size_t max_out_size, unsigned int seed);

/* ---- randomness: splitmix64 from libFuzzer's seed, so a mutation is reproducible ---- */
typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rnd(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* uniform enough in [0, n) for n > 0 */
static uint32_t below(rng *r, uint32_t n)
{
    return n ? (uint32_t)(rnd(r) % n) : 0;
}

static void put_u16(uint8_t *b, size_t pos, uint16_t v)
{
    b[pos] = (uint8_t)v;
    b[pos + 1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *b, size_t pos, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[pos + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static void put_uw(uint8_t *b, size_t pos, unsigned width, uint64_t v)
{
    for (unsigned i = 0; i < width; i++)
        b[pos + i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_uw(const uint8_t *b, size_t pos, unsigned width)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < width; i++)
        v |= (uint64_t)b[pos + i] << (8 * i);
    return v;
}

/* ---- the verified buffer as a list of sites: what fb_verify's visitor reports as it checks them ---- */
typedef fb_site site;
typedef fb_site_kind site_kind;
enum {
    SITE_TABLE = FB_SITE_TABLE,
    SITE_REF = FB_SITE_REF,
    SITE_SCALAR = FB_SITE_SCALAR,
    SITE_TAG = FB_SITE_TAG,
    SITE_VECTOR = FB_SITE_VECTOR,
    SITE_EDGE = FB_SITE_STRUCT, /* the schema's one struct: EdgeEnd (u32, i32, i32) */
    SITE_STRING = FB_SITE_STRING,
    SITE_KINDS = FB_SITE_KINDS
};

/* Files in the corpus have a few hundred sites; past the cap the list stops growing (the rest of the file is
 * simply not chosen). Static storage: the mutator runs in one thread and nothing outlives a call. */
enum { MAX_SITES = 16384, N_SITE_LISTS = 2 };

typedef struct walk {
    const uint8_t *b;
    size_t size;
    site *sites;
    uint32_t n;
    uint32_t count[SITE_KINDS];
} walk;

static site g_sites[N_SITE_LISTS][MAX_SITES];

static void add_site(void *ctx, const fb_site *s)
{
    walk *w = ctx;
    if (w->n < MAX_SITES) {
        w->sites[w->n++] = *s;
        w->count[s->kind]++;
    }
}

static uint32_t vtable_of(const uint8_t *b, uint32_t t)
{
    return (uint32_t)((int64_t)t - (int32_t)fb_u32(b, t));
}

/* Verify and list the sites in one walk; 0 when the buffer does not verify (then only byte mutations
 * apply). */
static int walk_buffer(walk *w, const uint8_t *b, size_t size, unsigned list)
{
    memset(w, 0, sizeof *w);
    w->b = b;
    w->size = size;
    w->sites = g_sites[list];
    if (size < 8 || memcmp(b + 4, pc_ort_schema.identifier, 4) != 0) return 0;
    fb_verify_options o;
    fb_verify_options_default(&o);
    o.visit = add_site;
    o.visit_ctx = w;
    pc_error err;
    pc_error_clear(&err);
    if (fb_verify(b, size, &pc_ort_schema, &o, &err) == PC_OK) return 1;
    w->n = 0;
    memset(w->count, 0, sizeof w->count);
    return 0;
}

/* A random site of a kind (and, when `to` >= 0, pointing at that kind), or NULL. */
static const site *pick(const walk *w, rng *r, site_kind kind, int to)
{
    uint32_t n = w->count[kind];
    if (!n) return NULL;
    /* a few tries at a random matching entry, then a scan from a random start */
    uint32_t k = below(r, n);
    for (uint32_t i = 0; i < w->n; i++) {
        const site *s = &w->sites[i];
        if (s->kind != kind) continue;
        if (k-- == 0) {
            if (to < 0 || s->to == to) return s;
            break;
        }
    }
    uint32_t start = below(r, w->n);
    for (uint32_t i = 0; i < w->n; i++) {
        const site *s = &w->sites[(start + i) % w->n];
        if (s->kind == kind && (to < 0 || s->to == to)) return s;
    }
    return NULL;
}

/* A random site other than `not` matching kind/field (field NULL: any) and table type (ti < 0: any). */
static const site *pick_like(const walk *w, rng *r, site_kind kind, const fb_field *field, int ti, int to,
                             const site * not )
{
    if (!w->n) return NULL;
    uint32_t start = below(r, w->n);
    for (uint32_t i = 0; i < w->n; i++) {
        const site *s = &w->sites[(start + i) % w->n];
        if (s == not || s->kind != kind) continue;
        if (field && s->field != field) continue;
        if (ti >= 0 && s->ti != ti) continue;
        if (to >= 0 && s->to != to) continue;
        return s;
    }
    return NULL;
}

/* ---- edits; each returns the new size, or 0 when it could not apply ---- */

/* Room for `len` bytes at the end, starting at an offset congruent to `phase` modulo 8 (so aligned fields of
 * a copied block stay aligned); returns the start, or 0 when it would pass max_size. */
static size_t append_at(uint8_t *b, size_t size, size_t max_size, size_t len, size_t phase)
{
    size_t at = size + ((phase - size) & 7u);
    if (at < size || len > max_size || at > max_size - len || at > UINT32_MAX - len) return 0;
    memset(b + size, 0, at - size);
    return at;
}

static const uint64_t interesting[] = {0,
                                       1,
                                       2,
                                       3,
                                       4,
                                       7,
                                       8,
                                       0x7f,
                                       0x80,
                                       0xff,
                                       0x7fff,
                                       0x8000,
                                       0xffff,
                                       0x7fffffff,
                                       0x80000000,
                                       0xffffffff,
                                       UINT64_MAX,
                                       INT64_MAX,
                                       (uint64_t)INT64_MIN};

static size_t edit_scalar(uint8_t *b, size_t size, const walk *w, rng *r)
{
    const site *s = pick(w, r, SITE_SCALAR, -1);
    if (!s) return 0;
    const fb_field *f = s->field;
    unsigned width = f->width;
    uint64_t old = get_uw(b, s->pos, width), v;
    const site *o;
    switch (below(r, 6)) {
    case 0: /* an enum's boundaries and just past them */
        if (f->lo <= f->hi) {
            int64_t c[4] = {f->lo - 1, f->lo, f->hi, f->hi + 1};
            v = (uint64_t)c[below(r, 4)];
            break;
        }
        /* fall through */
    case 1:
        v = old + (below(r, 2) ? 1 : (uint64_t)-1);
        break;
    case 2: /* the same field's value elsewhere: duplicate node indices, another version, ... */
        o = pick_like(w, r, SITE_SCALAR, f, -1, -1, s);
        v = o ? get_uw(b, o->pos, width) : old ^ 1;
        break;
    case 3:
        v = interesting[below(r, (uint32_t)(sizeof interesting / sizeof interesting[0]))];
        break;
    case 4:
        v = below(r, 32);
        break;
    default:
        v = rnd(r);
        break;
    }
    put_uw(b, s->pos, width, v);
    return size;
}

static size_t edit_tag(uint8_t *b, size_t size, const walk *w, rng *r)
{
    const site *s = pick(w, r, SITE_TAG, -1);
    if (!s) return 0;
    static const uint8_t tags[] = {0, 1, 2, 3, 4, 0xff};
    uint8_t t = tags[below(r, sizeof tags)];
    b[s->pos] = t == b[s->pos] ? (uint8_t)(t + 1) : t;
    return size;
}

static size_t edit_edge(uint8_t *b, size_t size, const walk *w, rng *r)
{
    const site *s = pick(w, r, SITE_EDGE, -1);
    if (!s) return 0;
    uint32_t at = s->pos + 4 * below(r, 3);
    uint32_t old = fb_u32(b, at), v;
    switch (below(r, 4)) {
    case 0:
        v = old + 1;
        break;
    case 1:
        v = old - 1;
        break;
    case 2:
        v = (uint32_t)interesting[below(r, 16)];
        break;
    default: { /* another record's value for the same member */
        const site *o = pick_like(w, r, SITE_EDGE, NULL, -1, -1, s);
        v = o ? fb_u32(b, o->pos + (at - s->pos)) : old ^ 1;
        break;
    }
    }
    put_u32(b, at, v);
    return size;
}

static size_t edit_vector_count(uint8_t *b, size_t size, const walk *w, rng *r)
{
    const site *s = pick(w, r, SITE_VECTOR, -1);
    if (!s) return 0;
    uint32_t n = fb_u32(b, s->pos), v;
    switch (below(r, 6)) {
    case 0:
        v = 0;
        break;
    case 1:
        v = n + 1;
        break;
    case 2:
        v = n ? n - 1 : 1;
        break;
    case 3:
        v = n * 2 + 1;
        break;
    case 4:
        v = (uint32_t)((size - s->pos) / (s->width ? s->width : 1));
        break; /* just past the end */
    default:
        v = (uint32_t)interesting[13 + below(r, 3)];
        break; /* huge */
    }
    put_u32(b, s->pos, v);
    return size;
}

/* Swap two elements of a vector of tables or strings (node order, input order); both targets must stay
 * forward of their new slots. */
static size_t edit_swap(uint8_t *b, size_t size, const walk *w, rng *r)
{
    const site *s = pick(w, r, SITE_VECTOR, below(r, 2) ? FB_VEC_TABLE : FB_VEC_STRING);
    if (!s) return 0;
    uint32_t n = fb_u32(b, s->pos);
    if (n < 2) return 0;
    uint32_t i = below(r, n), j = below(r, n - 1);
    if (j >= i) j++;
    uint32_t si = s->pos + 4 + 4 * i, sj = s->pos + 4 + 4 * j;
    uint32_t ti = si + fb_u32(b, si), tj = sj + fb_u32(b, sj);
    if (tj <= si || ti <= sj) return 0;
    put_u32(b, si, tj - si);
    put_u32(b, sj, ti - sj);
    return size;
}

static size_t edit_ref(uint8_t *b, size_t size, const walk *w, rng *r)
{
    const site *s = pick(w, r, SITE_REF, -1);
    if (!s) return 0;
    uint32_t old = fb_u32(b, s->pos), v;
    const site *o;
    switch (below(r, 6)) {
    case 0:
        v = 0;
        break;
    case 1:
        v = old + 4;
        break;
    case 2:
        v = old - 4;
        break;
    case 3: /* an object of the same kind: a shared string is valid, a shared table or vector overlaps */
        o = pick_like(w, r, SITE_REF, NULL, s->ti, s->to, s);
        if (!o) return 0;
        v = o->target - s->pos;
        break;
    case 4: /* any object */
        o = &w->sites[below(r, w->n)];
        v = (o->kind == SITE_REF ? o->target : o->pos) - s->pos;
        break;
    default:
        v = (uint32_t)interesting[below(r, 16)];
        break;
    }
    put_u32(b, s->pos, v);
    return size;
}

/* Names: point a string offset at another string of the file (ORT writes names once and shares them, so this
 * verifies) — a node input bound to another value, a graph output renamed, an op type swapped. */
static size_t edit_rename(uint8_t *b, size_t size, const walk *w, rng *r)
{
    const site *s = pick(w, r, SITE_REF, FB_STRING);
    if (!s) return 0;
    /* prefer a string of the same field (names to names) half of the time */
    const site *o = below(r, 2) ? pick_like(w, r, SITE_REF, s->field, -1, FB_STRING, s) : NULL;
    if (!o) o = pick_like(w, r, SITE_REF, NULL, -1, FB_STRING, s);
    if (!o || o->target <= s->pos) return 0;
    put_u32(b, s->pos, o->target - s->pos);
    return size;
}

static const char *const tokens[] = {"",
                                     "5",
                                     "6",
                                     "4",
                                     "05",
                                     "5abc",
                                     "ai.onnx",
                                     "ai.onnx.ml",
                                     "com.microsoft",
                                     "CPUExecutionProvider",
                                     "Add",
                                     "Constant",
                                     "If",
                                     "Loop",
                                     "Scan",
                                     "Identity",
                                     "Conv",
                                     "Relu",
                                     "_ORT_MEM_ADDR_",
                                     "then_branch",
                                     "body",
                                     "x",
                                     "y",
                                     "axis",
                                     "ai.onnx:Add:14",
                                     "T",
                                     "T1",
                                     "a\xff\xfe"};

/* String contents: shorten in place, corrupt a byte, or point the reference at a new string appended at the
 * end (a token, or another string of the file with a suffix: a name nothing else binds). */
static size_t edit_string(uint8_t *b, size_t size, size_t max_size, const walk *w, rng *r)
{
    const site *s = pick(w, r, SITE_REF, FB_STRING);
    if (!s) return 0;
    uint32_t str = s->target, len = fb_u32(b, str);
    switch (below(r, 4)) {
    case 0: { /* shorter, still terminated */
        uint32_t nl = len ? below(r, len) : 0;
        put_u32(b, str, nl);
        b[str + 4 + nl] = 0;
        return size;
    }
    case 1: /* a byte: random, or NUL inside, or the terminator */
        if (below(r, 4) == 0) {
            put_u32(b, str, len + 1 + below(r, 8));
        } else if (len) {
            b[str + 4 + below(r, len)] = below(r, 2) ? 0 : (uint8_t)rnd(r);
        } else {
            b[str + 4] = 'x';
        }
        return size;
    default: { /* a new string at the end */
        char buf[96];
        size_t n;
        if (below(r, 2)) {
            const char *t = tokens[below(r, (uint32_t)(sizeof tokens / sizeof tokens[0]))];
            n = strlen(t);
            memcpy(buf, t, n);
        } else {
            n = len < sizeof buf - 8 ? len : sizeof buf - 8;
            memcpy(buf, b + str + 4, n);
            buf[n++] = below(r, 2) ? '_' : (char)('0' + below(r, 10));
        }
        size_t at = append_at(b, size, max_size, 4 + n + 1, 0);
        if (!at) return 0;
        put_u32(b, at, (uint32_t)n);
        memcpy(b + at + 4, buf, n);
        b[at + 4 + n] = 0;
        put_u32(b, s->pos, (uint32_t)(at - s->pos));
        return at + 4 + n + 1;
    }
    }
}

static size_t edit_vtable(uint8_t *b, size_t size, const walk *w, rng *r)
{
    const site *s = pick(w, r, SITE_TABLE, -1);
    if (!s) return 0;
    uint32_t t = s->pos, vt = vtable_of(b, t);
    uint16_t vsize = fb_u16(b, vt), tsize = fb_u16(b, vt + 2);
    uint32_t n_slots = (vsize - 4u) / 2;
    switch (below(r, 6)) {
    case 0: { /* vsize */
        static const uint16_t vs[] = {0, 2, 3, 4, 6, 0xfffe};
        put_u16(b, vt, below(r, 2) ? vs[below(r, 6)] : (uint16_t)(vsize + (below(r, 2) ? 2 : -2)));
        return size;
    }
    case 1: { /* tsize */
        static const uint16_t ts[] = {0, 2, 4, 0xffff};
        put_u16(b, vt + 2, below(r, 2) ? ts[below(r, 4)] : (uint16_t)(tsize + (below(r, 2) ? 4 : -4)));
        return size;
    }
    case 2: /* drop a field (its schema default then applies) */
        if (!n_slots) return 0;
        put_u16(b, vt + 4 + 2 * below(r, n_slots), 0);
        return size;
    case 3: { /* alias: a slot (present or not) takes another slot's bytes; widths may differ */
        if (n_slots < 2) return 0;
        uint32_t i = below(r, n_slots), j = below(r, n_slots);
        uint16_t vj = fb_u16(b, vt + 4 + 2 * j);
        if (i == j || !vj) return 0;
        put_u16(b, vt + 4 + 2 * i, vj);
        return size;
    }
    case 4: { /* a slot at the table's edge or past it, or misaligned */
        if (!n_slots) return 0;
        uint32_t i = below(r, n_slots);
        uint16_t old = fb_u16(b, vt + 4 + 2 * i);
        static const uint16_t d[] = {1, 2, 4, (uint16_t)-1, (uint16_t)-4};
        put_u16(b, vt + 4 + 2 * i,
                below(r, 2) ? (uint16_t)(old + d[below(r, 5)]) : (uint16_t)(tsize - below(r, 4)));
        return size;
    }
    default: { /* the table uses another table's vtable (shared vtables are legal; types may differ) */
        const site *o = pick_like(w, r, SITE_TABLE, NULL, below(r, 2) ? s->ti : -1, -1, s);
        if (!o) return 0;
        uint32_t ov = vtable_of(b, o->pos);
        put_u32(b, t, (uint32_t)((int64_t)t - (int64_t)ov));
        return size;
    }
    }
}

/* The span [lo, hi) of a table with everything it reaches (vtables, vectors, strings, subtables). */
static void span_grow(uint32_t *lo, uint32_t *hi, uint32_t a, uint32_t z)
{
    if (a < *lo) *lo = a;
    if (z > *hi) *hi = z;
}

static void span_table(const uint8_t *b, uint32_t t, int16_t ti, uint32_t *lo, uint32_t *hi)
{
    const fb_table *tab = &pc_ort_schema.tables[ti];
    uint32_t vt = vtable_of(b, t);
    span_grow(lo, hi, vt, vt + fb_u16(b, vt));
    span_grow(lo, hi, t, t + fb_u16(b, vt + 2));
    for (uint16_t id = 0; id < tab->n_fields; id++) {
        const fb_field *f = &tab->fields[id];
        uint32_t p = fb_field_pos(b, t, id);
        if (!p || f->kind == FB_SCALAR || f->kind == FB_UNION_TYPE) continue;
        uint32_t x = p + fb_u32(b, p), n = fb_u32(b, x);
        switch (f->kind) {
        case FB_STRING:
            span_grow(lo, hi, x, x + 4 + n + 1);
            break;
        case FB_TABLE:
            span_table(b, x, f->sub, lo, hi);
            break;
        case FB_UNION: {
            uint32_t tp = fb_field_pos(b, t, (uint16_t)(id - 1));
            uint8_t tag = tp ? b[tp] : 0;
            if (tag >= 1 && tag <= f->n_union) span_table(b, x, f->union_subs[tag - 1], lo, hi);
            break;
        }
        case FB_VEC_SCALAR:
        case FB_VEC_STRUCT:
            span_grow(lo, hi, x, x + 4 + n * f->width);
            break;
        case FB_VEC_STRING:
        case FB_VEC_TABLE:
            span_grow(lo, hi, x, x + 4 + 4 * n);
            for (uint32_t i = 0; i < n; i++) {
                uint32_t e = fb_vec_ref(b, x, i);
                if (f->kind == FB_VEC_TABLE)
                    span_table(b, e, f->sub, lo, hi);
                else
                    span_grow(lo, hi, e, e + 4 + fb_u32(b, e) + 1);
            }
            break;
        default:
            break;
        }
    }
}

/* Copy table `src_t` (schema table ti) of `src` with all it reaches to the end of b, and point the reference
 * `dst` (to a table of the same type) at the copy. src may be b itself (a duplicate: two nodes with one
 * index, an initializer twice) or the crossover input (a subgraph, an attribute, a type from another model).
 */
static size_t splice(uint8_t *b, size_t size, size_t max_size, const site *dst, const uint8_t *src,
                     uint32_t src_t, int16_t ti)
{
    uint32_t lo = src_t, hi = src_t;
    span_table(src, src_t, ti, &lo, &hi);
    size_t at = append_at(b, size, max_size, hi - lo, lo & 7u);
    if (!at) return 0;
    memmove(b + at, src + lo, hi - lo);
    put_u32(b, dst->pos, (uint32_t)(at + (src_t - lo) - dst->pos));
    return at + (hi - lo);
}

static size_t edit_splice(uint8_t *b, size_t size, size_t max_size, const walk *w, const walk *from, rng *r)
{
    const site *d = pick(w, r, SITE_REF, FB_TABLE);
    if (!d) return 0;
    const site *s = pick_like(from, r, SITE_TABLE, NULL, d->ti, -1, from == w ? d : NULL);
    if (!s) return 0;
    /* the source is read while b grows: for a self-splice it lies before the old end, which is not moved */
    return splice(b, size, max_size, d, from->b, s->pos, d->ti);
}

static size_t byte_mutate(uint8_t *data, size_t size, size_t max_size, int keep_id)
{
    size_t n = LLVMFuzzerMutate(data, size, max_size);
    if (keep_id && n >= 8) memcpy(data + 4, pc_ort_schema.identifier, 4);
    return n;
}

static size_t structural(uint8_t *data, size_t size, size_t max_size, const walk *w, const walk *other,
                         rng *r)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        size_t n = 0;
        switch (below(r, 12)) {
        case 0:
            n = edit_scalar(data, size, w, r);
            break;
        case 1:
            n = edit_scalar(data, size, w, r);
            break;
        case 2:
            n = edit_rename(data, size, w, r);
            break;
        case 3:
            n = edit_rename(data, size, w, r);
            break;
        case 4:
            n = edit_string(data, size, max_size, w, r);
            break;
        case 5:
            n = edit_ref(data, size, w, r);
            break;
        case 6:
            n = edit_vtable(data, size, w, r);
            break;
        case 7:
            n = edit_vector_count(data, size, w, r);
            break;
        case 8:
            n = edit_tag(data, size, w, r);
            break;
        case 9:
            n = edit_edge(data, size, w, r);
            break;
        case 10:
            n = edit_swap(data, size, w, r);
            break;
        default:
            n = edit_splice(data, size, max_size, w, other && other->n && below(r, 2) ? other : w, r);
            break;
        }
        if (n) return n;
    }
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    rng r = {0x5eed0f0e7ull ^ ((uint64_t)seed << 17) ^ seed};
    int is_ort = size >= 8 && memcmp(data + 4, pc_ort_schema.identifier, 4) == 0;
    if (!is_ort) /* not ORT: byte mutations, and now and then the identifier to turn it into a near-ORT file
                  */
        return byte_mutate(data, size, max_size, below(&r, 4) == 0);
    walk w;
    if (below(&r, 4) == 0 || size > max_size || !walk_buffer(&w, data, size, 0))
        return byte_mutate(data, size, max_size, 1);
    size_t n = structural(data, size, max_size, &w, NULL, &r);
    return n ? n : byte_mutate(data, size, max_size, 1);
}

/* Structure-aware crossover: data1 with a table of data2 spliced in where a field of that table type is; when
 * either does not verify or no type matches, data1's header and first part with data2's rest. */
size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1, const uint8_t *data2, size_t size2,
                                 uint8_t *out, size_t max_out_size, unsigned int seed)
{
    rng r = {0xc055f00dull ^ ((uint64_t)seed << 13) ^ seed};
    size_t n1 = size1 < max_out_size ? size1 : max_out_size;
    memcpy(out, data1, n1);
    walk w1, w2;
    /* libFuzzer calls the crossover as often as the mutator (they are its only two mutations here): a quarter
     * of the crossovers are the cheap byte splice, so most edits stay within one file */
    if (n1 == size1 && below(&r, 4) != 0 && walk_buffer(&w1, out, n1, 0) &&
        walk_buffer(&w2, data2, size2, 1)) {
        for (int attempt = 0; attempt < 4; attempt++) {
            size_t n = edit_splice(out, n1, max_out_size, &w1, &w2, &r);
            if (n) return n;
        }
    }
    size_t cut1 = below(&r, (uint32_t)n1 + 1), cut2 = below(&r, (uint32_t)size2 + 1);
    size_t tail = size2 - cut2;
    if (tail > max_out_size - cut1) tail = max_out_size - cut1;
    memcpy(out + cut1, data2 + cut2, tail);
    size_t n = cut1 + tail;
    if (n >= 8 && size1 >= 8 && memcmp(data1 + 4, pc_ort_schema.identifier, 4) == 0)
        memcpy(out + 4, pc_ort_schema.identifier, 4);
    return n;
}
#pragma clang attribute pop
#endif
