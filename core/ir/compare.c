/* Comparison of runtime values with the ONNX backend-test rules (pc_data_compare in passcheck.h).
 *
 * Order of checks, so that the first reason reported is the most telling one: kind (tensor / sequence /
 * optional) and element type (TYPE), then rank, dims, sequence length and optional presence (SHAPE), then the
 * elements. Floats check NaN positions first, then infinities (sign included), then |a - e| <= atol + rtol *
 * |e| — the order numpy.testing.assert_allclose uses, which is what the backend test data was validated with.
 * Integers, bools and strings compare exactly. Element types without a tolerance rule of their own (the
 * float8 and float4 formats) compare bit for bit, which is stricter than ONNX and never lets a wrong answer
 * through. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/base/half.h"
#include "core/passcheck.h"

/* Nesting of sequences/optionals an actual value may have before we stop: values built by an executor are
 * finite but not trusted, and the loader caps test data at 16 levels. */
enum { COMPARE_MAX_DEPTH = 64 };

/* The running state of one comparison: the public result, whether any float element was compared (so that
 * worst_excess of a value without float elements stays 0 rather than a sentinel), and whether floats must be
 * identical (pc_data_compare_exact) rather than within a tolerance. */
typedef struct compare_state {
    pc_compare_result *r;
    bool has_worst;
    bool exact;
} compare_state;

static int severity(pc_compare_outcome o)
{
    switch (o) {
    case PC_COMPARE_EQUAL:
        return 0;
    case PC_COMPARE_DIFFERS:
        return 1;
    case PC_COMPARE_SHAPE:
        return 2;
    case PC_COMPARE_TYPE:
        return 3;
    }
    return 3;
}

/* Sets the outcome and the message; returns the outcome so callers can `return fail(...)`. */
static pc_compare_outcome fail(pc_compare_result *r, pc_compare_outcome o, const char *fmt, ...)
    PC_PRINTF(3, 4);

static pc_compare_outcome fail(pc_compare_result *r, pc_compare_outcome o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->detail, sizeof r->detail, fmt, ap);
    va_end(ap);
    r->outcome = o;
    return o;
}

typedef enum elem_class {
    ELEM_FLOAT,   /* float, double, float16, bfloat16; complex as interleaved real/imaginary components */
    ELEM_INTEGER, /* 8..64-bit integers and the packed 4-/2-bit integers */
    ELEM_BOOL,
    ELEM_STRING,
    ELEM_BITS, /* float8 / float4 formats: bit-exact */
} elem_class;

static elem_class classify(pc_dtype dtype)
{
    switch (dtype) {
    case PC_DTYPE_FLOAT:
    case PC_DTYPE_DOUBLE:
    case PC_DTYPE_FLOAT16:
    case PC_DTYPE_BFLOAT16:
    case PC_DTYPE_COMPLEX64:
    case PC_DTYPE_COMPLEX128:
        return ELEM_FLOAT;
    case PC_DTYPE_BOOL:
        return ELEM_BOOL;
    case PC_DTYPE_STRING:
        return ELEM_STRING;
    case PC_DTYPE_UINT8:
    case PC_DTYPE_INT8:
    case PC_DTYPE_UINT16:
    case PC_DTYPE_INT16:
    case PC_DTYPE_INT32:
    case PC_DTYPE_INT64:
    case PC_DTYPE_UINT32:
    case PC_DTYPE_UINT64:
    case PC_DTYPE_UINT4:
    case PC_DTYPE_INT4:
    case PC_DTYPE_UINT2:
    case PC_DTYPE_INT2:
        return ELEM_INTEGER;
    default:
        return ELEM_BITS;
    }
}

/* Float component i (complex types have two components per element). */
static double float_at(pc_dtype dtype, const void *data, uint64_t i)
{
    const uint8_t *p = data;
    switch (dtype) {
    case PC_DTYPE_FLOAT:
    case PC_DTYPE_COMPLEX64: {
        float f;
        memcpy(&f, p + i * 4, 4);
        return f;
    }
    case PC_DTYPE_DOUBLE:
    case PC_DTYPE_COMPLEX128: {
        double d;
        memcpy(&d, p + i * 8, 8);
        return d;
    }
    case PC_DTYPE_FLOAT16:
    case PC_DTYPE_BFLOAT16: {
        uint16_t h = (uint16_t)(p[i * 2] | (unsigned)p[i * 2 + 1] << 8);
        return dtype == PC_DTYPE_FLOAT16 ? pc_half_to_double(h) : pc_bfloat16_to_double(h);
    }
    default:
        return NAN;
    }
}

/* An integer element, kept as signed or unsigned so 64-bit values print exactly. */
typedef struct int_elem {
    bool is_unsigned;
    int64_t s;
    uint64_t u;
} int_elem;

static int_elem int_at(pc_dtype dtype, const void *data, uint64_t i)
{
    const uint8_t *p = data;
    int_elem v = {false, 0, 0};
    switch (dtype) {
    case PC_DTYPE_UINT8:
        v.is_unsigned = true, v.u = p[i];
        break;
    case PC_DTYPE_INT8:
        v.s = (int8_t)p[i];
        break;
    case PC_DTYPE_UINT16: {
        uint16_t x;
        memcpy(&x, p + i * 2, 2);
        v.is_unsigned = true, v.u = x;
        break;
    }
    case PC_DTYPE_INT16: {
        int16_t x;
        memcpy(&x, p + i * 2, 2);
        v.s = x;
        break;
    }
    case PC_DTYPE_UINT32: {
        uint32_t x;
        memcpy(&x, p + i * 4, 4);
        v.is_unsigned = true, v.u = x;
        break;
    }
    case PC_DTYPE_INT32: {
        int32_t x;
        memcpy(&x, p + i * 4, 4);
        v.s = x;
        break;
    }
    case PC_DTYPE_UINT64: {
        memcpy(&v.u, p + i * 8, 8);
        v.is_unsigned = true;
        break;
    }
    case PC_DTYPE_INT64:
        memcpy(&v.s, p + i * 8, 8);
        break;
    case PC_DTYPE_UINT4:
    case PC_DTYPE_INT4:
    case PC_DTYPE_UINT2:
    case PC_DTYPE_INT2: {
        /* packed little-endian: element 0 in the lowest bits of byte 0 */
        unsigned bits = pc_dtype_bits(dtype), per_byte = 8 / bits, mask = (1u << bits) - 1;
        unsigned raw = (p[i / per_byte] >> (bits * (i % per_byte))) & mask;
        if (dtype == PC_DTYPE_UINT4 || dtype == PC_DTYPE_UINT2) {
            v.is_unsigned = true, v.u = raw;
        } else {
            v.s = (raw & (1u << (bits - 1))) ? (int64_t)raw - (int64_t)(1u << bits) : (int64_t)raw;
        }
        break;
    }
    default:
        break;
    }
    return v;
}

static bool int_equal(int_elem a, int_elem b)
{
    return a.is_unsigned ? a.u == b.u : a.s == b.s;
}

static double int_as_double(int_elem v)
{
    return v.is_unsigned ? (double)v.u : (double)v.s;
}

static void int_format(int_elem v, char *buf, size_t size)
{
    if (v.is_unsigned)
        snprintf(buf, size, "%" PRIu64, v.u);
    else
        snprintf(buf, size, "%" PRId64, v.s);
}

/* " [1,0,2]": the coordinates of flat index i, for tensors of rank 2 and more (rank 0/1 would repeat the
 * index). */
static void format_coords(const pc_data *t, uint64_t i, char *buf, size_t size)
{
    buf[0] = '\0';
    if (t->rank < 2 || size < 4) return;
    uint64_t coords[PC_MAX_RANK];
    int32_t rank = t->rank > PC_MAX_RANK ? PC_MAX_RANK : t->rank;
    for (int32_t d = rank - 1; d >= 0; d--) {
        uint64_t extent = t->dims[d] > 0 ? (uint64_t)t->dims[d] : 1;
        coords[d] = i % extent;
        i /= extent;
    }
    size_t used = 0;
    for (int32_t d = 0; d < rank && used < size; d++) {
        int k = snprintf(buf + used, size - used, "%s%" PRIu64, d ? "," : " [", coords[d]);
        if (k < 0) break;
        used += (size_t)k;
    }
    if (used < size) snprintf(buf + used, size - used, "]");
}

/* A string element for a message: at most 40 bytes, quoted, non-printable bytes as \xNN. */
static void format_string(const pc_bytes *s, char *buf, size_t size)
{
    size_t used = 0;
    int k = snprintf(buf, size, "\"");
    used = k > 0 ? (size_t)k : 0;
    size_t shown = s->len < 40 ? s->len : 40;
    for (size_t j = 0; j < shown && used < size; j++) {
        unsigned char c = s->data[j];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            k = snprintf(buf + used, size - used, "%c", c);
        else
            k = snprintf(buf + used, size - used, "\\x%02x", c);
        if (k < 0) return;
        used += (size_t)k;
    }
    if (used < size) snprintf(buf + used, size - used, "\"%s", s->len > shown ? "..." : "");
}

/* Records element i as the worst so far when its excess over the tolerance is the largest seen. */
static void note_worst(compare_state *c, uint64_t i, double expected, double actual, double excess)
{
    pc_compare_result *r = c->r;
    if (!c->has_worst || excess > r->worst_excess) {
        c->has_worst = true;
        r->worst_excess = excess;
        r->worst_index = i;
        r->worst_expected = expected;
        r->worst_actual = actual;
    }
}

static pc_compare_outcome compare_floats(compare_state *c, const pc_data *e, const pc_data *a, double rtol,
                                         double atol)
{
    pc_compare_result *r = c->r;
    const bool is_complex = e->dtype == PC_DTYPE_COMPLEX64 || e->dtype == PC_DTYPE_COMPLEX128;
    const uint64_t n = is_complex ? e->n_elements * 2 : e->n_elements;
    const char *fmt = e->dtype == PC_DTYPE_DOUBLE || e->dtype == PC_DTYPE_COMPLEX128 ? "%.17g" : "%.9g";
    bool have_nan_mismatch = false, have_inf_mismatch = false;
    uint64_t nan_at = 0, inf_at = 0, n_nan_mismatch = 0, n_inf_mismatch = 0, n_out = 0, n_zero_sign = 0,
             zero_at = 0;
    for (uint64_t i = 0; i < n; i++) {
        double ev = float_at(e->dtype, e->data, i), av = float_at(a->dtype, a->data, i);
        if (isnan(ev) || isnan(av)) {
            if (isnan(ev) != isnan(av)) {
                if (!have_nan_mismatch) nan_at = i;
                have_nan_mismatch = true;
                n_nan_mismatch++;
            }
            continue;
        }
        if (isinf(ev) || isinf(av)) {
            if (ev != av) { /* an infinity against a finite value, or against the opposite infinity */
                if (!have_inf_mismatch) inf_at = i;
                have_inf_mismatch = true;
                n_inf_mismatch++;
            }
            continue;
        }
        double diff = fabs(av - ev), allowed = atol + rtol * fabs(ev);
        if (diff > r->max_abs_error) r->max_abs_error = diff;
        if (diff > allowed) n_out++;
        note_worst(c, i, ev, av, diff - allowed);
        /* float_at widens every format exactly, so two non-NaN elements have the same bits when they compare
         * equal and have the same sign: only the zeros need the sign */
        if (c->exact && diff == 0 && signbit(ev) != signbit(av) && !n_zero_sign++) zero_at = i;
    }
    if (!have_nan_mismatch && !have_inf_mismatch && !n_out && !n_zero_sign) {
        if (is_complex) r->worst_index /= 2; /* component → element */
        return PC_COMPARE_EQUAL;
    }

    /* The element named in the message: the first NaN mismatch, else the first infinity mismatch, else the
     * element furthest out of tolerance, else (exact) the first zero of the other sign. */
    uint64_t at;
    char reason[160];
    if (have_nan_mismatch || have_inf_mismatch) {
        at = have_nan_mismatch ? nan_at : inf_at;
        uint64_t count = have_nan_mismatch ? n_nan_mismatch : n_inf_mismatch;
        snprintf(reason, sizeof reason, "%s; %" PRIu64 " of %" PRIu64 " elements",
                 have_nan_mismatch ? "NaN positions differ" : "infinities differ", count, n);
        c->has_worst = true;
        r->worst_excess = INFINITY;
        r->worst_index = is_complex ? at / 2 : at;
        r->worst_expected = float_at(e->dtype, e->data, at);
        r->worst_actual = float_at(a->dtype, a->data, at);
    } else if (!n_out) {
        at = zero_at;
        r->worst_index = is_complex ? at / 2 : at;
        r->worst_expected = float_at(e->dtype, e->data, at);
        r->worst_actual = float_at(a->dtype, a->data, at);
        snprintf(reason, sizeof reason, "the sign of zero differs; %" PRIu64 " of %" PRIu64 " elements",
                 n_zero_sign, n);
    } else {
        at = r->worst_index;
        r->worst_index = is_complex ? at / 2 : at;
        snprintf(reason, sizeof reason,
                 "abs error %.3g > tolerance %.3g; %" PRIu64 " of %" PRIu64 " elements out of tolerance",
                 fabs(r->worst_actual - r->worst_expected), atol + rtol * fabs(r->worst_expected), n_out, n);
    }
    char ev[40], av[40], coords[96];
    snprintf(ev, sizeof ev, fmt, r->worst_expected);
    snprintf(av, sizeof av, fmt, r->worst_actual);
    format_coords(e, r->worst_index, coords, sizeof coords);
    return fail(r, PC_COMPARE_DIFFERS, "index %" PRIu64 "%s%s expected %s got %s (%s)", r->worst_index,
                coords, is_complex ? (at % 2 ? " imag" : " real") : "", ev, av, reason);
}

static pc_compare_outcome compare_integers(compare_state *c, const pc_data *e, const pc_data *a, bool is_bool)
{
    pc_compare_result *r = c->r;
    const uint8_t *eb = e->data, *ab = a->data;
    uint64_t first = 0, n_diff = 0;
    int_elem first_e = {0}, first_a = {0};
    for (uint64_t i = 0; i < e->n_elements; i++) {
        int_elem ev, av;
        if (is_bool) {
            /* ONNX stores bools as one byte 0/1; any non-zero byte is true */
            ev = (int_elem){true, 0, eb[i] != 0};
            av = (int_elem){true, 0, ab[i] != 0};
        } else {
            ev = int_at(e->dtype, e->data, i);
            av = int_at(a->dtype, a->data, i);
        }
        if (int_equal(ev, av)) continue;
        if (!n_diff) first = i, first_e = ev, first_a = av;
        n_diff++;
        /* integers have no tolerance: the excess is the whole difference */
        double excess = fabs(int_as_double(av) - int_as_double(ev));
        if (excess > r->max_abs_error) r->max_abs_error = excess;
        note_worst(c, i, int_as_double(ev), int_as_double(av), excess);
    }
    if (!n_diff) return PC_COMPARE_EQUAL;
    char ev[32], av[32], coords[96];
    if (is_bool) {
        snprintf(ev, sizeof ev, "%s", first_e.u ? "true" : "false");
        snprintf(av, sizeof av, "%s", first_a.u ? "true" : "false");
    } else {
        int_format(first_e, ev, sizeof ev);
        int_format(first_a, av, sizeof av);
    }
    format_coords(e, first, coords, sizeof coords);
    return fail(r, PC_COMPARE_DIFFERS,
                "index %" PRIu64 "%s expected %s got %s (%" PRIu64 " of %" PRIu64 " elements differ)", first,
                coords, ev, av, n_diff, e->n_elements);
}

static pc_compare_outcome compare_strings(compare_state *c, const pc_data *e, const pc_data *a)
{
    const pc_bytes *es = e->data, *as = a->data;
    uint64_t first = 0, n_diff = 0;
    for (uint64_t i = 0; i < e->n_elements; i++) {
        bool same = es[i].len == as[i].len && (!es[i].len || memcmp(es[i].data, as[i].data, es[i].len) == 0);
        if (same) continue;
        if (!n_diff) first = i;
        n_diff++;
    }
    if (!n_diff) return PC_COMPARE_EQUAL;
    c->r->worst_index = first;
    char ev[200], av[200], coords[96];
    format_string(&es[first], ev, sizeof ev);
    format_string(&as[first], av, sizeof av);
    format_coords(e, first, coords, sizeof coords);
    return fail(c->r, PC_COMPARE_DIFFERS,
                "index %" PRIu64 "%s expected %s got %s (%" PRIu64 " of %" PRIu64 " elements differ)", first,
                coords, ev, av, n_diff, e->n_elements);
}

/* float8/float4: whole bytes compared; a difference names the first differing element. */
static pc_compare_outcome compare_bits(compare_state *c, const pc_data *e, const pc_data *a, size_t n_bytes)
{
    if (!n_bytes || memcmp(e->data, a->data, n_bytes) == 0) return PC_COMPARE_EQUAL;
    const uint8_t *eb = e->data, *ab = a->data;
    size_t at = 0;
    while (eb[at] == ab[at])
        at++;
    unsigned bits = pc_dtype_bits(e->dtype);
    uint64_t element = (uint64_t)at * 8 / bits;
    c->r->worst_index = element;
    return fail(c->r, PC_COMPARE_DIFFERS,
                "index %" PRIu64 " expected bits 0x%02x got 0x%02x (%s compares bit-exact)", element, eb[at],
                ab[at], pc_dtype_name(e->dtype));
}

static bool same_dims(const pc_data *e, const pc_data *a)
{
    if (e->rank != a->rank) return false;
    for (int32_t i = 0; i < e->rank; i++)
        if (e->dims[i] != a->dims[i]) return false;
    return true;
}

static pc_compare_outcome compare_tensors(compare_state *c, const pc_data *e, const pc_data *a, double rtol,
                                          double atol)
{
    pc_compare_result *r = c->r;
    char ed[128], ad[128];
    if (e->dtype != a->dtype)
        return fail(r, PC_COMPARE_TYPE, "element type: expected %s got %s",
                    pc_data_describe(e, ed, sizeof ed), pc_data_describe(a, ad, sizeof ad));
    if (!same_dims(e, a) || e->n_elements != a->n_elements)
        return fail(r, PC_COMPARE_SHAPE, "shape: expected %s got %s", pc_data_describe(e, ed, sizeof ed),
                    pc_data_describe(a, ad, sizeof ad));
    if (!e->n_elements) return PC_COMPARE_EQUAL;
    /* Both buffers must hold n_elements: a short buffer from a buggy executor is reported, never read past.
     */
    size_t need;
    if (e->dtype == PC_DTYPE_STRING) {
        if (e->n_elements > SIZE_MAX || !pc_size_mul((size_t)e->n_elements, sizeof(pc_bytes), &need))
            return fail(r, PC_COMPARE_SHAPE, "string tensor of %" PRIu64 " elements is too large",
                        e->n_elements);
    } else if (!pc_dtype_storage_bytes(e->dtype, e->n_elements, &need)) {
        return fail(r, PC_COMPARE_TYPE, "element type %s has no storage size", pc_dtype_name(e->dtype));
    }
    if (!e->data || e->n_bytes < need)
        return fail(r, PC_COMPARE_SHAPE, "expected tensor %s holds %zu bytes of data, needs %zu",
                    pc_data_describe(e, ed, sizeof ed), e->data ? e->n_bytes : 0, need);
    if (!a->data || a->n_bytes < need)
        return fail(r, PC_COMPARE_SHAPE, "actual tensor %s holds %zu bytes of data, needs %zu",
                    pc_data_describe(a, ad, sizeof ad), a->data ? a->n_bytes : 0, need);
    switch (classify(e->dtype)) {
    case ELEM_FLOAT:
        return compare_floats(c, e, a, rtol, atol);
    case ELEM_INTEGER:
        return compare_integers(c, e, a, false);
    case ELEM_BOOL:
        return compare_integers(c, e, a, true);
    case ELEM_STRING:
        return compare_strings(c, e, a);
    case ELEM_BITS:
        return compare_bits(c, e, a, need);
    }
    return fail(r, PC_COMPARE_TYPE, "element type %s cannot be compared", pc_dtype_name(e->dtype));
}

static const char *kind_name(pc_type_kind k)
{
    switch (k) {
    case PC_TYPE_TENSOR:
        return "tensor";
    case PC_TYPE_SEQUENCE:
        return "sequence";
    case PC_TYPE_OPTIONAL:
        return "optional";
    default:
        return "unknown kind";
    }
}

static pc_compare_outcome compare_value(compare_state *c, const pc_data *e, const pc_data *a, double rtol,
                                        double atol, unsigned depth);

/* Compares items[i] of two containers of the same length. The outcome is the most severe item's; the message
 * names the first item with that outcome; the worst element is the one with the largest excess in any item.
 */
static pc_compare_outcome compare_items(compare_state *c, const pc_data *e, const pc_data *a, double rtol,
                                        double atol, unsigned depth, const char *label)
{
    pc_compare_result *r = c->r;
    pc_compare_outcome overall = PC_COMPARE_EQUAL;
    for (uint32_t i = 0; i < e->n_items; i++) {
        pc_compare_result item;
        memset(&item, 0, sizeof item);
        compare_state ic = {&item, false, c->exact};
        pc_compare_outcome o = compare_value(&ic, e->items[i], a->items[i], rtol, atol, depth + 1);
        if (item.max_abs_error > r->max_abs_error) r->max_abs_error = item.max_abs_error;
        if (ic.has_worst)
            note_worst(c, item.worst_index, item.worst_expected, item.worst_actual, item.worst_excess);
        if (severity(o) > severity(overall)) {
            overall = o;
            if (e->kind == PC_TYPE_OPTIONAL)
                fail(r, o, "%s%s", label, item.detail);
            else
                fail(r, o, "%s %u: %s", label, i, item.detail);
        }
    }
    return overall;
}

static pc_compare_outcome compare_value(compare_state *c, const pc_data *e, const pc_data *a, double rtol,
                                        double atol, unsigned depth)
{
    pc_compare_result *r = c->r;
    char ed[128], ad[128];
    if (!e || !a) return fail(r, PC_COMPARE_TYPE, "%s value is missing", !e ? "expected" : "actual");
    if (depth > COMPARE_MAX_DEPTH)
        return fail(r, PC_COMPARE_TYPE, "values nested deeper than %d levels", COMPARE_MAX_DEPTH);
    if (e->kind != a->kind)
        return fail(r, PC_COMPARE_TYPE, "kind: expected %s %s got %s %s", kind_name(e->kind),
                    pc_data_describe(e, ed, sizeof ed), kind_name(a->kind),
                    pc_data_describe(a, ad, sizeof ad));
    switch (e->kind) {
    case PC_TYPE_TENSOR:
        return compare_tensors(c, e, a, rtol, atol);
    case PC_TYPE_SEQUENCE:
    case PC_TYPE_OPTIONAL:
        /* An empty sequence or a "none" optional may not know its element type; compare what both sides know.
         */
        if (e->item_kind != PC_TYPE_NONE && a->item_kind != PC_TYPE_NONE && e->item_kind != a->item_kind)
            return fail(r, PC_COMPARE_TYPE, "%s items: expected %ss got %ss", kind_name(e->kind),
                        kind_name(e->item_kind), kind_name(a->item_kind));
        if (e->dtype != PC_DTYPE_UNDEFINED && a->dtype != PC_DTYPE_UNDEFINED && e->dtype != a->dtype)
            return fail(r, PC_COMPARE_TYPE, "%s element type: expected %s got %s", kind_name(e->kind),
                        pc_dtype_name(e->dtype), pc_dtype_name(a->dtype));
        if (e->n_items != a->n_items) {
            if (e->kind == PC_TYPE_OPTIONAL)
                return fail(r, PC_COMPARE_SHAPE, "optional: expected %s got %s",
                            pc_data_describe(e, ed, sizeof ed), pc_data_describe(a, ad, sizeof ad));
            return fail(r, PC_COMPARE_SHAPE, "sequence length: expected %u got %u", e->n_items, a->n_items);
        }
        if (e->n_items && (!e->items || !a->items))
            return fail(r, PC_COMPARE_SHAPE, "%s %s has no item array", !e->items ? "expected" : "actual",
                        kind_name(e->kind));
        return compare_items(c, e, a, rtol, atol, depth,
                             e->kind == PC_TYPE_OPTIONAL ? "optional value: " : "item");
    default:
        return fail(r, PC_COMPARE_TYPE, "expected value has unsupported kind %d", (int)e->kind);
    }
}

static pc_compare_outcome compare_top(const pc_data *expected, const pc_data *actual, double rtol,
                                      double atol, bool exact, pc_compare_result *result)
{
    memset(result, 0, sizeof *result);
    compare_state c = {result, false, exact};
    pc_compare_outcome o = compare_value(&c, expected, actual, rtol, atol, 0);
    result->outcome = o;
    if (o == PC_COMPARE_EQUAL) result->detail[0] = '\0';
    return o;
}

pc_compare_outcome pc_data_compare(const pc_data *expected, const pc_data *actual, double rtol, double atol,
                                   pc_compare_result *result)
{
    return compare_top(expected, actual, rtol, atol, false, result);
}

pc_compare_outcome pc_data_compare_exact(const pc_data *expected, const pc_data *actual,
                                         pc_compare_result *result)
{
    return compare_top(expected, actual, 0, 0, true, result);
}
