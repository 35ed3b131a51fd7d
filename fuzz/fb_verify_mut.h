/* The mutator's names for the FlatBuffers verifier (fuzz_ort_load.c says why it has its own copy). Included
 * by fuzz_ort_load.c before core/internal.h, whose fb.h declarations these rename, and force-included when
 * fuzz/CMakeLists.txt compiles core/ort/fb_verify.c a second time without coverage (pc_fb_verify_mut): one
 * list, so the two sides cannot disagree. */
#ifndef PC_FUZZ_FB_VERIFY_MUT_H
#define PC_FUZZ_FB_VERIFY_MUT_H

#define fb_verify_options_default mut_fb_verify_options_default
#define fb_verify                 mut_fb_verify
#define fb_field_pos              mut_fb_field_pos
#define fb_field_u                mut_fb_field_u
#define fb_field_i                mut_fb_field_i
#define fb_field_ref              mut_fb_field_ref
#define fb_field_str              mut_fb_field_str

#endif
