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

/* Under AddressSanitizer the arena poisons the chunk memory it has not handed out, and each block's alignment
 * padding: a read past the end of the newest block, or into a block's padding, is reported as it is for a
 * malloc'd block. There are no redzones between blocks: they would fill chunks sooner and change the
 * allocation count the OOM-injection points are numbered by, so a sanitizer build would fail other
 * allocations than a release build for the same case. */
#if defined(__SANITIZE_ADDRESS__)
#define PC_ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PC_ARENA_ASAN 1
#endif
#endif
#ifdef PC_ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define PC_ARENA_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#define PC_ARENA_POISON(p, n)   ASAN_POISON_MEMORY_REGION(p, n)
#else
#define PC_ARENA_UNPOISON(p, n) ((void)(p), (void)(n))
#define PC_ARENA_POISON(p, n)   ((void)(p), (void)(n))
#endif

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
            PC_ARENA_UNPOISON(p, size);
            return p;
        }
    }
    return pc_arena_alloc_uninit(arena, size);
}

#endif
