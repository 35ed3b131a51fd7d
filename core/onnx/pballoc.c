/* protobuf-c allocations go through the model's pc_mem, so unpacking is bounded by the same byte budget as
 * the rest of the model. Small allocations (the million message structs of a large graph) come from a bump
 * arena that is dropped in one piece after conversion, instead of a million frees; large ones (tensor
 * payloads) are individual pc_mem blocks, tracked in a pointer set so the IR can adopt them without a second
 * copy. */
#include <string.h>

#include "core/onnx/onnx_internal.h"
#include "core/base/base_internal.h"

enum { PB_LARGE_BYTES = 64 * 1024 };

typedef enum slot_state { SLOT_EMPTY = 0, SLOT_LIVE, SLOT_ADOPTED, SLOT_FREED } slot_state;

static size_t ptr_hash(const void *p, size_t cap)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x & (cap - 1);
}

static pc_pb_large *large_find(pc_pb_allocator *a, const void *p)
{
    if (!a->cap_large) return NULL;
    for (size_t i = ptr_hash(p, a->cap_large);; i = (i + 1) & (a->cap_large - 1)) {
        pc_pb_large *s = &a->large[i];
        if (s->state == SLOT_EMPTY) return NULL;
        if (s->ptr == p) return s;
    }
}

static bool large_insert(pc_pb_allocator *a, void *p)
{
    if ((a->n_large + 1) * 2 > a->cap_large) {
        size_t ncap = a->cap_large ? a->cap_large * 2 : 64;
        pc_pb_large *n = pc_mem_calloc(a->mem, ncap, sizeof *n);
        if (!n) return false;
        for (size_t i = 0; i < a->cap_large; i++) {
            pc_pb_large *o = &a->large[i];
            if (o->state == SLOT_EMPTY) continue;
            size_t j = ptr_hash(o->ptr, ncap);
            while (n[j].state != SLOT_EMPTY)
                j = (j + 1) & (ncap - 1);
            n[j] = *o;
        }
        pc_mem_free(a->mem, a->large);
        a->large = n;
        a->cap_large = ncap;
    }
    size_t j = ptr_hash(p, a->cap_large);
    while (a->large[j].state != SLOT_EMPTY)
        j = (j + 1) & (a->cap_large - 1);
    a->large[j].ptr = p;
    a->large[j].state = SLOT_LIVE;
    a->n_large++;
    return true;
}

static void *pballoc_alloc(void *data, size_t size)
{
    pc_pb_allocator *a = data;
    if (size < PB_LARGE_BYTES) return pc_arena_bump(&a->small, size ? size : 1);
    void *p = pc_mem_alloc(a->mem, size);
    if (p && !large_insert(a, p)) {
        pc_mem_free(a->mem, p);
        return NULL;
    }
    return p;
}

static void pballoc_free(void *data, void *ptr)
{
    pc_pb_allocator *a = data;
    pc_pb_large *s = large_find(a, ptr);
    /* small blocks go with the arena; large ones are freed now unless the IR adopted them */
    if (s && s->state == SLOT_LIVE) {
        pc_mem_free(a->mem, ptr);
        s->state = SLOT_FREED;
    }
}

void pc_pb_allocator_init(pc_pb_allocator *a, pc_mem *mem)
{
    memset(a, 0, sizeof *a);
    a->base.alloc = pballoc_alloc;
    a->base.free = pballoc_free;
    a->base.allocator_data = a;
    a->mem = mem;
    pc_arena_init(&a->small, mem);
}

void *pc_pb_allocator_take(pc_pb_allocator *a, void *ptr, size_t size)
{
    pc_pb_large *s = large_find(a, ptr);
    if (s && s->state == SLOT_LIVE) {
        s->state = SLOT_ADOPTED;
        return ptr;
    }
    void *copy = pc_mem_alloc(a->mem, size ? size : 1);
    if (copy && size) memcpy(copy, ptr, size);
    return copy;
}

void pc_pb_allocator_release(pc_pb_allocator *a)
{
    for (size_t i = 0; i < a->cap_large; i++)
        if (a->large[i].state == SLOT_LIVE) pc_mem_free(a->mem, a->large[i].ptr);
    pc_mem_free(a->mem, a->large);
    a->large = NULL;
    a->cap_large = a->n_large = 0;
    pc_arena_free(&a->small);
}
