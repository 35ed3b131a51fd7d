/* float16 and bfloat16 conversions (half.h). */
#include <math.h>
#include <string.h>

#include "core/base/half.h"

/* A binary format of 1 sign bit, exp_bits exponent bits (bias 2^(exp_bits-1) - 1) and frac_bits fraction
 * bits, encoded from a double with a single rounding: float16 is (5, 10), bfloat16 (8, 7). */
static uint16_t encode(double v, int exp_bits, int frac_bits)
{
    const int bias = (1 << (exp_bits - 1)) - 1, exp_all = (1 << exp_bits) - 1;
    const uint16_t sign = signbit(v) ? 0x8000u : 0, inf = (uint16_t)(exp_all << frac_bits);
    if (isnan(v)) return (uint16_t)(sign | inf | 1u << (frac_bits - 1)); /* quiet NaN */
    double a = fabs(v);
    /* the largest finite value plus half an ulp: from there on, rounding (to even) gives infinity */
    if (a >= ldexp((double)(2 << (frac_bits + 1)) - 1, bias - frac_bits - 1)) return (uint16_t)(sign | inf);
    /* subnormal: units of 2^(1-bias-frac_bits), exact scaling, rint ties to even; a result of 1 << frac_bits
     * is the smallest normal's encoding */
    if (a < ldexp(1.0, 1 - bias)) return (uint16_t)(sign | (uint16_t)rint(ldexp(a, bias - 1 + frac_bits)));
    int e;
    frexp(a, &e);                                 /* a in [2^(e-1), 2^e) */
    double q = rint(ldexp(a, frac_bits + 1 - e)); /* frac_bits + 1 significant bits, in [2^fb, 2^(fb+1)] */
    int ex = e - 1;
    if (q >= (double)(2 << frac_bits)) { /* rounded up to the next power of two */
        q = (double)(1 << frac_bits);
        ex++;
    }
    if (ex + bias >= exp_all) return (uint16_t)(sign | inf);
    return (uint16_t)(sign | (uint16_t)((ex + bias) << frac_bits) | (uint16_t)(q - (double)(1 << frac_bits)));
}

double pc_half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h & 0x8000u ? -v : v;
}

uint16_t pc_half_from_double(double v)
{
    return encode(v, 5, 10);
}

double pc_bfloat16_to_double(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t pc_bfloat16_from_double(double v)
{
    return encode(v, 8, 7);
}
