/* float16 (IEEE binary16) and bfloat16 <-> double for all of core (the reference executor keeps its own on
 * purpose: it is the independent side of the comparison). Every half and bfloat16 is exactly a double, so
 * decoding is exact; encoding rounds once, to nearest even, from the double. NaN keeps its sign (as a quiet
 * NaN), infinities and signed zeros map to themselves, values past the largest finite one (and half an ulp)
 * go to infinity. */
#ifndef PC_HALF_H
#define PC_HALF_H

#include <stdint.h>

double pc_half_to_double(uint16_t h);
uint16_t pc_half_from_double(double v);
/* bfloat16 is the upper half of a binary32: NaN payloads survive decoding. */
double pc_bfloat16_to_double(uint16_t b);
uint16_t pc_bfloat16_from_double(double v);

#endif
