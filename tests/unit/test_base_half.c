/* float16 and bfloat16 conversions (core/base/half.c) against references written differently, over every bit
 * pattern: decoding against the fields moved into a binary32 (float16) or against ldexp (bfloat16); encoding
 * against a nearest-value search over the sorted finite encodings, at every value, at every midpoint between
 * neighbours and just either side of it, and at pseudo-random doubles across the whole exponent range. */
#include <math.h>

#include "core/base/half.h"
#include "tests/test_util.h"

/* float16 -> binary32 by moving the fields (exact: every half is a float), then widened. */
static double ref_half(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
    if (e == 0x1f)
        bits = sign | 0x7f800000u | m << 13;
    else if (e)
        bits = sign | (e + 127 - 15) << 23 | m << 13;
    else if (m) { /* subnormal half: normalize into the float's wider exponent range */
        int shift = 0;
        while (!(m & 0x400u)) {
            m <<= 1;
            shift++;
        }
        bits = sign | (uint32_t)(127 - 15 + 1 - shift) << 23 | (m & 0x3ffu) << 13;
    } else
        bits = sign;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* bfloat16 by its definition: 8-bit exponent (bias 127), 7-bit fraction. */
static double ref_bf16(uint16_t b)
{
    int e = (b >> 7) & 0xff, m = b & 0x7f;
    double v = e == 0 ? ldexp(m, -133) : e == 0xff ? (m ? NAN : INFINITY) : ldexp(128 + m, e - 134);
    return b & 0x8000u ? -v : v;
}

/* A format as the reference encoder sees it: positive finite encodings 0..max_finite increase with their
 * value, and beyond the largest the next step (2^(emax+1), which is infinity) decides ties. */
typedef struct format {
    const char *name;
    double (*decode)(uint16_t), (*ref_decode)(uint16_t);
    uint16_t (*encode)(double);
    uint16_t max_finite, exp_mask; /* exp_mask alone is infinity */
    double beyond;                 /* the value the encoding after max_finite would have */
} format;

/* Nearest encoding of v, ties to the even encoding, by binary search: no rounding arithmetic at all. */
static uint16_t ref_encode(const format *f, double v)
{
    uint16_t sign = signbit(v) ? 0x8000u : 0;
    double a = fabs(v);
    if (isnan(v)) return (uint16_t)(sign | f->exp_mask | (f->exp_mask & -f->exp_mask) >> 1); /* quiet NaN */
    uint32_t lo = 0, hi = f->max_finite; /* largest encoding whose value is <= a */
    if (a >= f->ref_decode(f->max_finite)) {
        lo = f->max_finite;
    } else {
        while (lo < hi) {
            uint32_t mid = (lo + hi + 1) / 2;
            if (f->ref_decode((uint16_t)mid) <= a)
                lo = mid;
            else
                hi = mid - 1;
        }
    }
    double below = f->ref_decode((uint16_t)lo);
    double above = lo == f->max_finite ? f->beyond : f->ref_decode((uint16_t)(lo + 1));
    if (a == below) return (uint16_t)(sign | lo);
    uint32_t up = lo == f->max_finite ? f->exp_mask : lo + 1;
    double dl = a - below, du = above - a;
    uint32_t r = dl < du ? lo : du < dl ? up : (lo & 1) ? up : lo;
    if (a >= f->beyond) r = f->exp_mask;
    return (uint16_t)(sign | r);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void test_format(const format *f)
{
    int bad_decode = 0, bad_round_trip = 0, bad_tie = 0, bad_random = 0, bad_nan = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        double got = f->decode((uint16_t)h), want = f->ref_decode((uint16_t)h);
        bool nan = (h & f->exp_mask) == f->exp_mask && (h & ~f->exp_mask & 0x7fffu);
        if (nan) {
            /* any NaN, carrying the sign; encoding it back gives a NaN of the same sign */
            uint16_t back = f->encode(got);
            if (!isnan(got) || !signbit(got) != !(h & 0x8000u) || (back & f->exp_mask) != f->exp_mask ||
                !(back & ~f->exp_mask & 0x7fffu) || (back & 0x8000u) != (h & 0x8000u))
                bad_nan++;
            continue;
        }
        if (memcmp(&got, &want, sizeof got) != 0) bad_decode++; /* bitwise: -0 is not 0 */
        if (f->encode(got) != h) bad_round_trip++;
        /* the midpoint to the next encoding up (exact in double), and the doubles either side of it */
        if ((h & 0x7fffu) > f->max_finite) continue;
        bool last = (h & 0x7fffu) == f->max_finite;
        double next = last ? copysign(f->beyond, got) : f->decode((uint16_t)(h + 1));
        double mid = got / 2 + next / 2;
        const double probes[] = {mid, nextafter(mid, 0), nextafter(mid, copysign(INFINITY, got))};
        for (int i = 0; i < 3; i++)
            if (f->encode(probes[i]) != ref_encode(f, probes[i])) bad_tie++;
    }
    for (int i = 0; i < 1000000; i++) {
        uint64_t bits = next_random();
        double v;
        memcpy(&v, &bits, sizeof v);
        /* squeeze the exponent towards the format's range so most samples land on finite encodings */
        if (!isnan(v) && !isinf(v)) v = ldexp(frexp(v, &(int){0}), (int)(bits % 300) - 150);
        if (!isnan(v) && f->encode(v) != ref_encode(f, v)) bad_random++;
    }
    CHECK_MSG(bad_decode == 0, "%s: %d patterns decode wrongly", f->name, bad_decode);
    CHECK_MSG(bad_round_trip == 0, "%s: %d patterns do not round-trip", f->name, bad_round_trip);
    CHECK_MSG(bad_tie == 0, "%s: %d midpoint probes round wrongly", f->name, bad_tie);
    CHECK_MSG(bad_random == 0, "%s: %d random doubles round wrongly", f->name, bad_random);
    CHECK_MSG(bad_nan == 0, "%s: %d NaN patterns lose NaN-ness or sign", f->name, bad_nan);
}

int main(void)
{
    const format half = {"float16", pc_half_to_double, ref_half, pc_half_from_double, 0x7bff, 0x7c00, 0x1p16};
    const format bf16 = {"bfloat16", pc_bfloat16_to_double, ref_bf16, pc_bfloat16_from_double, 0x7f7f, 0x7f80,
                         0x1p128};
    test_format(&half);
    test_format(&bf16);

    /* the edges by hand */
    CHECK(pc_half_from_double(65504.0) == 0x7bff);
    CHECK(pc_half_from_double(65519.99) == 0x7bff);
    CHECK(pc_half_from_double(65520.0) == 0x7c00); /* max plus half an ulp: ties to even, which is inf */
    CHECK(pc_half_from_double(-1e300) == 0xfc00);
    CHECK(pc_half_from_double(0x1p-25) == 0);          /* half the smallest subnormal: ties to even (0) */
    CHECK(pc_half_from_double(0x1.8p-25) == 1);        /* above half: rounds up */
    CHECK(pc_half_from_double(0x1.ffcp-15) == 0x0400); /* largest subnormal's upper midpoint: ties to even */
    CHECK(pc_half_from_double(-0.0) == 0x8000);
    CHECK(pc_half_from_double(NAN) == 0x7e00 && pc_half_from_double(-NAN) == 0xfe00);
    CHECK(pc_half_from_double(INFINITY) == 0x7c00 && pc_half_from_double(-INFINITY) == 0xfc00);
    CHECK(pc_bfloat16_from_double(1.0) == 0x3f80);
    CHECK(pc_bfloat16_from_double(1.0 + 0x1p-8) == 0x3f80); /* tie: stays even */
    /* just above the tie: through a float it would round back onto the tie first (double rounding) */
    CHECK(pc_bfloat16_from_double(1.0 + 0x1p-8 + 0x1p-40) == 0x3f81);
    CHECK(pc_bfloat16_from_double(0x1.fep127) == 0x7f7f);
    CHECK(pc_bfloat16_from_double(0x1.ffp127) == 0x7f80);
    CHECK(pc_bfloat16_from_double(0x1p-133) == 0x0001 && pc_bfloat16_from_double(0x1p-134) == 0);
    CHECK(pc_bfloat16_from_double(NAN) == 0x7fc0 && pc_bfloat16_from_double(-NAN) == 0xffc0);
    CHECK(pc_half_to_double(0x3c00) == 1.0 && pc_half_to_double(0x0001) == 0x1p-24);
    CHECK(pc_bfloat16_to_double(0x3f80) == 1.0 && pc_bfloat16_to_double(0x0001) == 0x1p-133);
    return pc_test_finish("test_base_half");
}
