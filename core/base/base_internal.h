/* Internal helpers of core/base shared with the loader. Not part of the public API. */
#ifndef PC_BASE_INTERNAL_H
#define PC_BASE_INTERNAL_H

#include "core/passcheck.h"

/* pc_arena_alloc without zeroing, for callers that write every byte they use (protobuf-c initializes each
 * message, array element and string it allocates): zeroing first only doubled the writes to fresh memory. */
void *pc_arena_alloc_uninit(pc_arena *arena, size_t size);

/* One OOM-injection point (pc_mem.fail_after) that allocates nothing itself: counts it in n_allocs and
 * returns true (setting failed) when the injection makes it fail. pc_mem_alloc and every arena allocation are
 * points, so a pass's node or name allocation fails even when its arena chunk has room. */
bool pc_mem_inject(pc_mem *mem);

struct pc_arena_chunk {
    pc_arena_chunk *next;
    size_t size, used;
    max_align_t data[];
};

/* pc_arena_alloc_uninit's common case inline: protobuf-c makes about ten allocations per node it unpacks. */
static inline void *pc_arena_bump(pc_arena *arena, size_t size)
{
    pc_arena_chunk *c = arena->head;
    if (c && size - 1 < c->size - c->used && size <= SIZE_MAX - 15) {
        size_t need = (size + 15) & ~(size_t)15;
        if (need <= c->size - c->used) {
            void *p = (char *)c->data + c->used;
            c->used += need;
            return p;
        }
    }
    return pc_arena_alloc_uninit(arena, size);
}

#endif
