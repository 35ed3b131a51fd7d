/* pc_data_compare: the comparison the conformance runner and every property rely on. Values are built by hand
 * here (stack structs over literal arrays), so the test depends on nothing but the comparison itself. */
#include <math.h>
#include <string.h>

#include "tests/test_util.h"

static const double RTOL = 1e-3, ATOL = 1e-7; /* ONNX backend-test defaults */

/* A tensor over caller-owned data; n_bytes is given so tests can also build inconsistent values. */
static pc_data tensor(pc_dtype dtype, int32_t rank, int64_t *dims, void *data, size_t n_bytes)
{
    pc_data d;
    memset(&d, 0, sizeof d);
    d.kind = PC_TYPE_TENSOR;
    d.refs = 1;
    d.dtype = dtype;
    d.rank = rank;
    d.dims = dims;
    d.n_elements = 1;
    for (int32_t i = 0; i < rank; i++)
        d.n_elements *= (uint64_t)dims[i];
    d.data = data;
    d.n_bytes = n_bytes;
    d.borrowed = true;
    return d;
}

static pc_data container(pc_type_kind kind, pc_type_kind item_kind, pc_dtype dtype, uint32_t n,
                         pc_data **items)
{
    pc_data d;
    memset(&d, 0, sizeof d);
    d.kind = kind;
    d.refs = 1;
    d.dtype = dtype;
    d.item_kind = item_kind;
    d.n_items = n;
    d.items = items;
    return d;
}

static bool has(const char *haystack, const char *needle)
{
    return strstr(haystack, needle) != NULL;
}

#define CHECK_DETAIL(r, text) CHECK_MSG(has((r).detail, text), "detail '%s' lacks '%s'", (r).detail, text)

static void test_float_tolerance_edges(void)
{
    int64_t dims[1] = {1};
    double e = 1.0, a = 1.5;
    pc_data de = tensor(PC_DTYPE_DOUBLE, 1, dims, &e, 8), da = tensor(PC_DTYPE_DOUBLE, 1, dims, &a, 8);
    pc_compare_result r;
    /* |a - e| = 0.5 exactly: within atol 0.5, outside anything smaller */
    CHECK(pc_data_compare(&de, &da, 0, 0.5, &r) == PC_COMPARE_EQUAL);
    CHECK(r.max_abs_error == 0.5);
    CHECK(r.worst_excess == 0.0);
    CHECK(pc_data_compare(&de, &da, 0, 0.4999999, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.worst_excess > 0);
    /* rtol scales with |expected|, not |actual|: e = 4, a = 5 is within rtol 0.25; e = 5, a = 4 is not */
    e = 4.0, a = 5.0;
    CHECK(pc_data_compare(&de, &da, 0.25, 0, &r) == PC_COMPARE_EQUAL);
    CHECK(pc_data_compare(&da, &de, 0.2, 0, &r) == PC_COMPARE_EQUAL); /* 1 <= 0.2 * 5 */
    CHECK(pc_data_compare(&da, &de, 0.1999, 0, &r) == PC_COMPARE_DIFFERS);
    e = -4.0, a = -5.0; /* |e| for negative values */
    CHECK(pc_data_compare(&de, &da, 0.25, 0, &r) == PC_COMPARE_EQUAL);
    CHECK(pc_data_compare(&de, &da, 0.2499, 0, &r) == PC_COMPARE_DIFFERS);
    /* atol and rtol add */
    e = 2.0, a = 2.75;
    CHECK(pc_data_compare(&de, &da, 0.25, 0.25, &r) == PC_COMPARE_EQUAL);
    CHECK(pc_data_compare(&de, &da, 0.25, 0.2499, &r) == PC_COMPARE_DIFFERS);
}

static void test_float_worst_element(void)
{
    int64_t dims[2] = {2, 2};
    float e[4] = {1.0f, 2.0f, 3.0f, 4.0f}, a[4] = {1.0f, 2.5f, 3.0f, 4.25f};
    pc_data de = tensor(PC_DTYPE_FLOAT, 2, dims, e, sizeof e),
            da = tensor(PC_DTYPE_FLOAT, 2, dims, a, sizeof a);
    pc_compare_result r;
    CHECK(pc_data_compare(&de, &da, RTOL, ATOL, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.outcome == PC_COMPARE_DIFFERS);
    CHECK(r.worst_index == 1);
    CHECK(r.worst_expected == 2.0 && r.worst_actual == 2.5);
    CHECK(r.max_abs_error == 0.5);
    CHECK(fabs(r.worst_excess - (0.5 - ATOL - RTOL * 2.0)) < 1e-12);
    CHECK_DETAIL(r, "index 1 [0,1] expected 2 got 2.5");
    CHECK_DETAIL(r, "2 of 4 elements out of tolerance");
    /* identical values: equal, no error, detail empty */
    CHECK(pc_data_compare(&de, &de, RTOL, ATOL, &r) == PC_COMPARE_EQUAL);
    CHECK(r.max_abs_error == 0 && r.detail[0] == '\0');
    CHECK(r.worst_excess < 0); /* the closest any element came to the limit: -(atol + rtol |e|) */
    /* ONNX defaults on a float32 value: the message shows the float's digits */
    float e1 = 1.5f, a1 = 1.6f;
    int64_t one[1] = {1};
    pc_data d1 = tensor(PC_DTYPE_FLOAT, 1, one, &e1, 4), d2 = tensor(PC_DTYPE_FLOAT, 1, one, &a1, 4);
    CHECK(pc_data_compare(&d1, &d2, RTOL, ATOL, &r) == PC_COMPARE_DIFFERS);
    CHECK_DETAIL(r, "index 0 expected 1.5 got 1.60000002");
}

static void test_nan_and_inf(void)
{
    int64_t dims[1] = {3};
    double e[3], a[3];
    pc_data de = tensor(PC_DTYPE_DOUBLE, 1, dims, e, sizeof e),
            da = tensor(PC_DTYPE_DOUBLE, 1, dims, a, sizeof a);
    pc_compare_result r;
    /* NaN against NaN is equal (positions agree) */
    e[0] = NAN, e[1] = 1, e[2] = 2;
    a[0] = NAN, a[1] = 1, a[2] = 2;
    CHECK(pc_data_compare(&de, &da, RTOL, ATOL, &r) == PC_COMPARE_EQUAL);
    /* a NaN against a number differs whatever the tolerance */
    a[0] = 0;
    CHECK(pc_data_compare(&de, &da, 1e9, 1e9, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.worst_index == 0 && isnan(r.worst_expected) && r.worst_actual == 0);
    CHECK(isinf(r.worst_excess) && r.worst_excess > 0);
    CHECK_DETAIL(r, "NaN positions differ");
    /* NaN positions are reported before a larger ordinary error elsewhere */
    e[0] = 1, a[0] = 100;
    e[2] = 2, a[2] = NAN;
    CHECK(pc_data_compare(&de, &da, RTOL, ATOL, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.worst_index == 2);
    CHECK_DETAIL(r, "index 2 expected 2 got nan");
    CHECK(r.max_abs_error == 99); /* still measured over the finite pairs */
    /* infinities: same sign equal, opposite sign or against a finite value differ */
    e[0] = INFINITY, e[1] = -INFINITY, e[2] = 0;
    a[0] = INFINITY, a[1] = -INFINITY, a[2] = 0;
    CHECK(pc_data_compare(&de, &da, RTOL, ATOL, &r) == PC_COMPARE_EQUAL);
    a[1] = INFINITY;
    CHECK(pc_data_compare(&de, &da, 1e9, 1e9, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.worst_index == 1);
    CHECK_DETAIL(r, "infinities differ");
    a[1] = -1e308;
    CHECK(pc_data_compare(&de, &da, 1e9, 1e9, &r) == PC_COMPARE_DIFFERS);
    CHECK_DETAIL(r, "index 1 expected -inf got -1e+308");
    /* NaN mismatches are reported before infinity mismatches */
    a[2] = NAN;
    CHECK(pc_data_compare(&de, &da, RTOL, ATOL, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.worst_index == 2);
}

static void test_float16_and_bfloat16(void)
{
    int64_t dims[1] = {1};
    uint16_t e, a;
    pc_data de = tensor(PC_DTYPE_FLOAT16, 1, dims, &e, 2), da = tensor(PC_DTYPE_FLOAT16, 1, dims, &a, 2);
    pc_compare_result r;
    /* Known binary16 patterns, decoded through the mismatch report: 0x3C00 = 1, 0xC000 = -2 */
    e = 0x3C00, a = 0xC000;
    CHECK(pc_data_compare(&de, &da, 0, 0, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.worst_expected == 1.0 && r.worst_actual == -2.0);
    CHECK(r.max_abs_error == 3.0);
    /* 0x7C00 = +inf, 0xFC00 = -inf */
    e = 0x7C00, a = 0xFC00;
    CHECK(pc_data_compare(&de, &da, 0, 0, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.worst_expected == INFINITY && r.worst_actual == -INFINITY);
    CHECK_DETAIL(r, "infinities differ");
    /* 0x7BFF = 65504 (largest finite), 0x3555 = 0.333251953125, 0x0001 = 2^-24 (smallest subnormal) */
    e = 0x7BFF, a = 0x3555;
    CHECK(pc_data_compare(&de, &da, 0, 0, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.worst_expected == 65504.0 && r.worst_actual == 0.333251953125);
    e = 0x0001, a = 0x0000;
    CHECK(pc_data_compare(&de, &da, 0, 0, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.worst_expected == ldexp(1.0, -24) && r.worst_actual == 0.0);
    e = 0x8000, a = 0x0000; /* -0 == +0 */
    CHECK(pc_data_compare(&de, &da, 0, 0, &r) == PC_COMPARE_EQUAL);
    /* NaN patterns (0x7E00 quiet, 0x7C01 signalling, 0xFE00 negative) all count as NaN */
    e = 0x7E00, a = 0xFE00;
    CHECK(pc_data_compare(&de, &da, 0, 0, &r) == PC_COMPARE_EQUAL);
    e = 0x7C01, a = 0x3C00;
    CHECK(pc_data_compare(&de, &da, 1e9, 1e9, &r) == PC_COMPARE_DIFFERS);
    CHECK(isnan(r.worst_expected) && r.worst_actual == 1.0);
    /* tolerance applies to the decoded values: 1.0 vs 1.0009765625 (0x3C01) is within rtol 1e-3 */
    e = 0x3C00, a = 0x3C01;
    CHECK(pc_data_compare(&de, &da, RTOL, ATOL, &r) == PC_COMPARE_EQUAL);
    CHECK(r.max_abs_error == ldexp(1.0, -10));
    e = 0x3C00, a = 0x3C02;
    CHECK(pc_data_compare(&de, &da, RTOL, ATOL, &r) == PC_COMPARE_DIFFERS);

    /* bfloat16: the upper half of a binary32. 0x3F80 = 1, 0xC000 = -2, 0x7F80 = +inf, 0x3EAB = 0.333984375 */
    pc_data be = tensor(PC_DTYPE_BFLOAT16, 1, dims, &e, 2), ba = tensor(PC_DTYPE_BFLOAT16, 1, dims, &a, 2);
    e = 0x3F80, a = 0xC000;
    CHECK(pc_data_compare(&be, &ba, 0, 0, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.worst_expected == 1.0 && r.worst_actual == -2.0);
    e = 0x7F80, a = 0x3EAB;
    CHECK(pc_data_compare(&be, &ba, 0, 0, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.worst_expected == INFINITY && r.worst_actual == 0.333984375);
    /* float16 and bfloat16 with the same bits are different types */
    CHECK(pc_data_compare(&de, &be, RTOL, ATOL, &r) == PC_COMPARE_TYPE);
}

static void test_complex(void)
{
    int64_t dims[1] = {2};
    float e[4] = {1, 2, 3, 4}, a[4] = {1, 2, 3, 5};
    pc_data de = tensor(PC_DTYPE_COMPLEX64, 1, dims, e, sizeof e),
            da = tensor(PC_DTYPE_COMPLEX64, 1, dims, a, sizeof a);
    pc_compare_result r;
    CHECK(pc_data_compare(&de, &da, RTOL, ATOL, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.worst_index == 1); /* element 1, imaginary part */
    CHECK_DETAIL(r, "index 1 imag expected 4 got 5");
    CHECK(pc_data_compare(&de, &de, RTOL, ATOL, &r) == PC_COMPARE_EQUAL);
}

static void test_integers_exact(void)
{
    int64_t dims[1] = {2};
    int64_t e[2] = {1, ((int64_t)1 << 53) + 1}, a[2] = {1, (int64_t)1 << 53};
    pc_data de = tensor(PC_DTYPE_INT64, 1, dims, e, sizeof e),
            da = tensor(PC_DTYPE_INT64, 1, dims, a, sizeof a);
    pc_compare_result r;
    /* a difference of 1 in 2^53 is far inside any float tolerance, yet integers compare exactly */
    CHECK(pc_data_compare(&de, &da, 1.0, 1.0, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.worst_index == 1);
    CHECK_DETAIL(r, "index 1 expected 9007199254740993 got 9007199254740992");
    CHECK_DETAIL(r, "1 of 2 elements differ");
    CHECK(pc_data_compare(&de, &de, 0, 0, &r) == PC_COMPARE_EQUAL);

    int32_t e32[3] = {-5, 0, 7}, a32[3] = {-5, 0, -7};
    int64_t d3[1] = {3};
    pc_data de32 = tensor(PC_DTYPE_INT32, 1, d3, e32, sizeof e32),
            da32 = tensor(PC_DTYPE_INT32, 1, d3, a32, sizeof a32);
    CHECK(pc_data_compare(&de32, &da32, RTOL, ATOL, &r) == PC_COMPARE_DIFFERS);
    CHECK_DETAIL(r, "index 2 expected 7 got -7");
    CHECK(r.worst_expected == 7 && r.worst_actual == -7);

    uint64_t eu = UINT64_MAX, au = UINT64_MAX - 1;
    int64_t d1[1] = {1};
    pc_data deu = tensor(PC_DTYPE_UINT64, 1, d1, &eu, 8), dau = tensor(PC_DTYPE_UINT64, 1, d1, &au, 8);
    CHECK(pc_data_compare(&deu, &dau, 1, 1, &r) == PC_COMPARE_DIFFERS);
    CHECK_DETAIL(r, "expected 18446744073709551615 got 18446744073709551614");

    /* the same byte is a different value in int8 and uint8: types must match */
    uint8_t byte = 0xff;
    pc_data s8 = tensor(PC_DTYPE_INT8, 1, d1, &byte, 1), u8 = tensor(PC_DTYPE_UINT8, 1, d1, &byte, 1);
    CHECK(pc_data_compare(&s8, &u8, RTOL, ATOL, &r) == PC_COMPARE_TYPE);
    CHECK_DETAIL(r, "element type: expected int8[1] got uint8[1]");

    /* packed int4: byte 0x21 holds elements 1 (low nibble) and 2; 0xF1 holds 1 and -1 */
    uint8_t p_e = 0x21, p_a = 0xF1;
    int64_t d2[1] = {2};
    pc_data i4e = tensor(PC_DTYPE_INT4, 1, d2, &p_e, 1), i4a = tensor(PC_DTYPE_INT4, 1, d2, &p_a, 1);
    CHECK(pc_data_compare(&i4e, &i4a, RTOL, ATOL, &r) == PC_COMPARE_DIFFERS);
    CHECK_DETAIL(r, "index 1 expected 2 got -1");
    pc_data u4e = tensor(PC_DTYPE_UINT4, 1, d2, &p_e, 1), u4a = tensor(PC_DTYPE_UINT4, 1, d2, &p_a, 1);
    CHECK(pc_data_compare(&u4e, &u4a, RTOL, ATOL, &r) == PC_COMPARE_DIFFERS);
    CHECK_DETAIL(r, "index 1 expected 2 got 15");
}

static void test_bools_and_strings(void)
{
    int64_t dims[1] = {2};
    uint8_t e[2] = {1, 0}, a[2] = {1, 1};
    pc_data de = tensor(PC_DTYPE_BOOL, 1, dims, e, 2), da = tensor(PC_DTYPE_BOOL, 1, dims, a, 2);
    pc_compare_result r;
    CHECK(pc_data_compare(&de, &da, 1e9, 1e9, &r) == PC_COMPARE_DIFFERS);
    CHECK_DETAIL(r, "index 1 expected false got true");

    uint8_t abc[] = "abc", abd[] = "abd", ab[] = "ab", quote[] = "a\"\n";
    pc_bytes se[3] = {{3, abc}, {2, ab}, {0, NULL}}, sa[3] = {{3, abc}, {2, ab}, {0, NULL}};
    int64_t d3[1] = {3};
    pc_data te = tensor(PC_DTYPE_STRING, 1, d3, se, sizeof se),
            ta = tensor(PC_DTYPE_STRING, 1, d3, sa, sizeof sa);
    CHECK(pc_data_compare(&te, &ta, RTOL, ATOL, &r) == PC_COMPARE_EQUAL);
    sa[0].data = abd;
    CHECK(pc_data_compare(&te, &ta, RTOL, ATOL, &r) == PC_COMPARE_DIFFERS);
    CHECK_DETAIL(r, "index 0 expected \"abc\" got \"abd\"");
    sa[0].data = abc;
    sa[1] = (pc_bytes){3, abc}; /* a prefix is not equal */
    CHECK(pc_data_compare(&te, &ta, RTOL, ATOL, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.worst_index == 1);
    sa[1] = (pc_bytes){2, ab};
    sa[2] = (pc_bytes){3, quote}; /* non-printable bytes are escaped in the message */
    CHECK(pc_data_compare(&te, &ta, RTOL, ATOL, &r) == PC_COMPARE_DIFFERS);
    CHECK_DETAIL(r, "expected \"\" got \"a\\x22\\x0a\"");
}

static void test_shape_and_type(void)
{
    float buf[6] = {0};
    int64_t d23[2] = {2, 3}, d32[2] = {3, 2}, d6[1] = {6}, d1[1] = {1}, d03[2] = {0, 3}, d30[2] = {3, 0};
    pc_data a = tensor(PC_DTYPE_FLOAT, 2, d23, buf, sizeof buf),
            b = tensor(PC_DTYPE_FLOAT, 2, d32, buf, sizeof buf);
    pc_data flat = tensor(PC_DTYPE_FLOAT, 1, d6, buf, sizeof buf);
    pc_compare_result r;
    CHECK(pc_data_compare(&a, &b, RTOL, ATOL, &r) == PC_COMPARE_SHAPE);
    CHECK_DETAIL(r, "shape: expected float[2,3] got float[3,2]");
    CHECK(pc_data_compare(&a, &flat, RTOL, ATOL, &r) ==
          PC_COMPARE_SHAPE); /* same element count, other rank */
    pc_data scalar = tensor(PC_DTYPE_FLOAT, 0, NULL, buf, 4), one = tensor(PC_DTYPE_FLOAT, 1, d1, buf, 4);
    CHECK(pc_data_compare(&scalar, &one, RTOL, ATOL, &r) == PC_COMPARE_SHAPE);
    CHECK(pc_data_compare(&scalar, &scalar, RTOL, ATOL, &r) == PC_COMPARE_EQUAL);
    /* empty tensors: equal when the dims agree, whatever their data pointers */
    pc_data e03 = tensor(PC_DTYPE_FLOAT, 2, d03, NULL, 0), e30 = tensor(PC_DTYPE_FLOAT, 2, d30, buf, 0);
    pc_data e03b = tensor(PC_DTYPE_FLOAT, 2, d03, buf, 0);
    CHECK(pc_data_compare(&e03, &e03b, RTOL, ATOL, &r) == PC_COMPARE_EQUAL);
    CHECK(pc_data_compare(&e03, &e30, RTOL, ATOL, &r) == PC_COMPARE_SHAPE);
    /* element type is checked before the shape */
    double dbuf[6] = {0};
    pc_data dbl = tensor(PC_DTYPE_DOUBLE, 2, d32, dbuf, sizeof dbuf);
    CHECK(pc_data_compare(&a, &dbl, RTOL, ATOL, &r) == PC_COMPARE_TYPE);
    /* a buffer shorter than its element count is reported, not read past (a buggy executor's output) */
    pc_data short_buf = tensor(PC_DTYPE_FLOAT, 2, d23, buf, 8);
    CHECK(pc_data_compare(&a, &short_buf, RTOL, ATOL, &r) == PC_COMPARE_SHAPE);
    CHECK_DETAIL(r, "actual tensor float[2,3] holds 8 bytes of data, needs 24");
    /* a missing actual value */
    CHECK(pc_data_compare(&a, NULL, RTOL, ATOL, &r) == PC_COMPARE_TYPE);
    CHECK_DETAIL(r, "actual value is missing");
    /* tensor against sequence */
    pc_data *items[1] = {&a};
    pc_data seq = container(PC_TYPE_SEQUENCE, PC_TYPE_TENSOR, PC_DTYPE_FLOAT, 1, items);
    CHECK(pc_data_compare(&a, &seq, RTOL, ATOL, &r) == PC_COMPARE_TYPE);
    CHECK_DETAIL(r, "kind: expected tensor");
}

static void test_sequences_and_optionals(void)
{
    int64_t d2[1] = {2};
    float x[2] = {1, 2}, y[2] = {1, 3}, z[2] = {1, 2.001f};
    int32_t ints[2] = {1, 2};
    pc_data tx = tensor(PC_DTYPE_FLOAT, 1, d2, x, 8), ty = tensor(PC_DTYPE_FLOAT, 1, d2, y, 8);
    pc_data tz = tensor(PC_DTYPE_FLOAT, 1, d2, z, 8), ti = tensor(PC_DTYPE_INT32, 1, d2, ints, 8);
    pc_compare_result r;

    pc_data *e_items[3] = {&tx, &tx, &tx}, *a_items[3] = {&tx, &ty, &tx};
    pc_data se = container(PC_TYPE_SEQUENCE, PC_TYPE_TENSOR, PC_DTYPE_FLOAT, 3, e_items);
    pc_data sa = container(PC_TYPE_SEQUENCE, PC_TYPE_TENSOR, PC_DTYPE_FLOAT, 3, a_items);
    CHECK(pc_data_compare(&se, &se, RTOL, ATOL, &r) == PC_COMPARE_EQUAL);
    CHECK(pc_data_compare(&se, &sa, RTOL, ATOL, &r) == PC_COMPARE_DIFFERS);
    CHECK_DETAIL(r, "item 1: index 1 expected 2 got 3");
    CHECK(r.worst_index == 1 && r.worst_expected == 2 && r.worst_actual == 3 && r.max_abs_error == 1);
    /* the worst element across items: item 2 is a little off, item 1 a lot */
    a_items[2] = &tz;
    CHECK(pc_data_compare(&se, &sa, RTOL, ATOL, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.worst_actual == 3);
    /* the most severe item outcome wins: a type mismatch in item 2 over a difference in item 1 */
    a_items[2] = &ti;
    CHECK(pc_data_compare(&se, &sa, RTOL, ATOL, &r) == PC_COMPARE_TYPE);
    CHECK_DETAIL(r, "item 2: element type");
    /* length */
    pc_data shorter = container(PC_TYPE_SEQUENCE, PC_TYPE_TENSOR, PC_DTYPE_FLOAT, 2, e_items);
    CHECK(pc_data_compare(&se, &shorter, RTOL, ATOL, &r) == PC_COMPARE_SHAPE);
    CHECK_DETAIL(r, "sequence length: expected 3 got 2");
    /* element type of the sequence itself */
    pc_data int_seq = container(PC_TYPE_SEQUENCE, PC_TYPE_TENSOR, PC_DTYPE_INT32, 0, NULL);
    pc_data empty_float = container(PC_TYPE_SEQUENCE, PC_TYPE_TENSOR, PC_DTYPE_FLOAT, 0, NULL);
    pc_data empty_unknown = container(PC_TYPE_SEQUENCE, PC_TYPE_NONE, PC_DTYPE_UNDEFINED, 0, NULL);
    CHECK(pc_data_compare(&empty_float, &int_seq, RTOL, ATOL, &r) == PC_COMPARE_TYPE);
    /* an empty sequence that does not know its element type matches any empty sequence */
    CHECK(pc_data_compare(&empty_float, &empty_unknown, RTOL, ATOL, &r) == PC_COMPARE_EQUAL);
    /* nested: a sequence of sequences */
    pc_data *outer_e[1] = {&se}, *outer_a[1] = {&sa};
    a_items[2] = &tx;
    pc_data ne = container(PC_TYPE_SEQUENCE, PC_TYPE_SEQUENCE, PC_DTYPE_FLOAT, 1, outer_e);
    pc_data na = container(PC_TYPE_SEQUENCE, PC_TYPE_SEQUENCE, PC_DTYPE_FLOAT, 1, outer_a);
    CHECK(pc_data_compare(&ne, &na, RTOL, ATOL, &r) == PC_COMPARE_DIFFERS);
    CHECK_DETAIL(r, "item 0: item 1: index 1");
    CHECK(pc_data_compare(&ne, &se, RTOL, ATOL, &r) ==
          PC_COMPARE_TYPE); /* sequence of sequences vs of tensors */

    /* optionals */
    pc_data *px[1] = {&tx}, *py[1] = {&ty};
    pc_data none = container(PC_TYPE_OPTIONAL, PC_TYPE_TENSOR, PC_DTYPE_FLOAT, 0, NULL);
    pc_data none2 = container(PC_TYPE_OPTIONAL, PC_TYPE_TENSOR, PC_DTYPE_FLOAT, 0, NULL);
    pc_data some_x = container(PC_TYPE_OPTIONAL, PC_TYPE_TENSOR, PC_DTYPE_FLOAT, 1, px);
    pc_data some_y = container(PC_TYPE_OPTIONAL, PC_TYPE_TENSOR, PC_DTYPE_FLOAT, 1, py);
    CHECK(pc_data_compare(&none, &none2, RTOL, ATOL, &r) == PC_COMPARE_EQUAL);
    CHECK(pc_data_compare(&none, &some_x, RTOL, ATOL, &r) == PC_COMPARE_SHAPE);
    CHECK_DETAIL(r, "optional: expected optional(none) got optional(float[2])");
    CHECK(pc_data_compare(&some_x, &some_x, RTOL, ATOL, &r) == PC_COMPARE_EQUAL);
    CHECK(pc_data_compare(&some_x, &some_y, RTOL, ATOL, &r) == PC_COMPARE_DIFFERS);
    CHECK_DETAIL(r, "optional value: index 1 expected 2 got 3");
    CHECK(pc_data_compare(&some_x, &tx, RTOL, ATOL, &r) == PC_COMPARE_TYPE); /* optional(tensor) vs tensor */
    /* an optional holding a sequence against one holding a tensor */
    pc_data *ps[1] = {&se};
    pc_data some_seq = container(PC_TYPE_OPTIONAL, PC_TYPE_SEQUENCE, PC_DTYPE_FLOAT, 1, ps);
    CHECK(pc_data_compare(&some_seq, &some_x, RTOL, ATOL, &r) == PC_COMPARE_TYPE);
}

/* pc_data_compare_exact: NaN positions (any payload), then the bits: +0 against -0 differs, in every float
 * format and inside containers; the tolerance compare takes them as equal. */
static void test_exact_zero_signs(void)
{
    int64_t d3[1] = {3};
    float e[3] = {1.5f, 0.0f, NAN}, a[3] = {1.5f, -0.0f, -NAN};
    pc_data de = tensor(PC_DTYPE_FLOAT, 1, d3, e, sizeof e), da = tensor(PC_DTYPE_FLOAT, 1, d3, a, sizeof a);
    pc_compare_result r;
    CHECK(pc_data_compare(&de, &da, 0, 0, &r) == PC_COMPARE_EQUAL);
    CHECK(pc_data_compare_exact(&de, &de, &r) == PC_COMPARE_EQUAL);
    CHECK(pc_data_compare_exact(&de, &da, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.worst_index == 1 && r.worst_expected == 0 && !signbit(r.worst_expected) &&
          signbit(r.worst_actual));
    CHECK_DETAIL(r, "the sign of zero differs; 1 of 3 elements");
    a[1] = 0.0f; /* NaN payloads and signs are not compared */
    CHECK(pc_data_compare_exact(&de, &da, &r) == PC_COMPARE_EQUAL);
    a[0] = nextafterf(1.5f, 2.0f);
    CHECK(pc_data_compare_exact(&de, &da, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.worst_index == 0);
    CHECK_DETAIL(r, "out of tolerance");

    uint16_t he[2] = {0x0000, 0x3c00}, ha[2] = {0x8000, 0x3c00}; /* float16 +0 / -0, 1.0 */
    int64_t d2[1] = {2};
    pc_data hde = tensor(PC_DTYPE_FLOAT16, 1, d2, he, sizeof he),
            hda = tensor(PC_DTYPE_FLOAT16, 1, d2, ha, sizeof ha);
    CHECK(pc_data_compare(&hde, &hda, 0, 0, &r) == PC_COMPARE_EQUAL);
    CHECK(pc_data_compare_exact(&hde, &hda, &r) == PC_COMPARE_DIFFERS);
    CHECK(r.worst_index == 0);

    double xe = -0.0, xa = 0.0;
    int64_t d1[1] = {1};
    pc_data ie = tensor(PC_DTYPE_DOUBLE, 1, d1, &xe, 8), ia = tensor(PC_DTYPE_DOUBLE, 1, d1, &xa, 8);
    pc_data *ei[1] = {&ie}, *ai[1] = {&ia};
    pc_data se = container(PC_TYPE_SEQUENCE, PC_TYPE_TENSOR, PC_DTYPE_DOUBLE, 1, ei);
    pc_data sa = container(PC_TYPE_SEQUENCE, PC_TYPE_TENSOR, PC_DTYPE_DOUBLE, 1, ai);
    CHECK(pc_data_compare(&se, &sa, 0, 0, &r) == PC_COMPARE_EQUAL);
    CHECK(pc_data_compare_exact(&se, &sa, &r) == PC_COMPARE_DIFFERS);
    CHECK_DETAIL(r, "item 0: ");
}

int main(void)
{
    test_exact_zero_signs();
    test_float_tolerance_edges();
    test_float_worst_element();
    test_nan_and_inf();
    test_float16_and_bfloat16();
    test_complex();
    test_integers_exact();
    test_bools_and_strings();
    test_shape_and_type();
    test_sequences_and_optionals();
    return pc_test_finish("test_ir_compare");
}
