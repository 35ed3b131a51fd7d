/* Internal helpers of core/base shared with the loader. Not part of the public API. */
#ifndef PC_BASE_INTERNAL_H
#define PC_BASE_INTERNAL_H

#include "passcheck.h"

/* pc_arena_alloc without zeroing, for callers that write every byte they use (protobuf-c initializes each message,
 * array element and string it allocates): zeroing first only doubled the writes to fresh memory. */
void *pc_arena_alloc_uninit(pc_arena *arena, size_t size);

#endif
