/* The memory plan: one arena for all intermediate values and kernel scratch. Each buffer has a life (the
 * steps from its writer to its last reader); buffers are placed largest first, each at the lowest offset
 * where it overlaps no placed buffer whose life meets its own (first fit over the sorted placed ranges, as
 * ORT's planner and TFLite's greedy-by-size arena do). Quadratic in the number of buffers, which is the node
 * count plus the scratch users: milliseconds for thousands, once per input shape. */
#include <stdlib.h>

#include "core/runtime/rt_internal.h"

static bool lives_meet(const pc_rt_buffer *a, const pc_rt_buffer *b)
{
    return a->def <= b->last && b->def <= a->last;
}

typedef struct sized {
    size_t bytes;
    uint32_t index;
} sized;

typedef struct range {
    size_t offset, bytes;
} range;

static int by_size_desc(const void *pa, const void *pb)
{
    const sized *x = pa, *y = pb;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index); /* ties in index order: the plan is deterministic */
}

static int by_offset(const void *pa, const void *pb)
{
    const range *x = pa, *y = pb;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

size_t pc_rt_plan_place(pc_rt_buffer *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (b[i].bytes > SIZE_MAX - PC_RT_ALIGN) return SIZE_MAX;
        b[i].bytes = (b[i].bytes + PC_RT_ALIGN - 1) / PC_RT_ALIGN * PC_RT_ALIGN;
        b[i].offset = 0;
    }
    if (n == 0) return 0;
    sized *order = malloc((size_t)n * sizeof *order);
    range *met = malloc((size_t)n * sizeof *met);
    if (!order || !met) {
        free(order);
        free(met);
        return SIZE_MAX;
    }
    for (uint32_t i = 0; i < n; i++)
        order[i] = (sized){b[i].bytes, i};
    qsort(order, n, sizeof *order, by_size_desc);
    size_t peak = 0;
    for (uint32_t k = 0; k < n && peak != SIZE_MAX; k++) {
        pc_rt_buffer *cur = &b[order[k].index];
        /* the placed buffers alive with this one, by offset: take the first gap it fits */
        uint32_t m = 0;
        for (uint32_t j = 0; j < k; j++) {
            const pc_rt_buffer *o = &b[order[j].index];
            if (lives_meet(cur, o)) met[m++] = (range){o->offset, o->bytes};
        }
        qsort(met, m, sizeof *met, by_offset);
        size_t at = 0;
        for (uint32_t j = 0; j < m; j++) {
            if (met[j].offset >= at && met[j].offset - at >= cur->bytes) break;
            if (met[j].offset + met[j].bytes > at) at = met[j].offset + met[j].bytes;
        }
        cur->offset = at;
        if (at > SIZE_MAX - cur->bytes)
            peak = SIZE_MAX;
        else if (at + cur->bytes > peak)
            peak = at + cur->bytes;
    }
    free(order);
    free(met);
    return peak;
}

bool pc_rt_plan_valid(const pc_rt_buffer *b, uint32_t n, size_t arena_bytes)
{
    for (uint32_t i = 0; i < n; i++) {
        if (b[i].offset > arena_bytes || b[i].bytes > arena_bytes - b[i].offset) return false;
        if (b[i].offset % PC_RT_ALIGN) return false;
        for (uint32_t j = i + 1; j < n; j++)
            if (lives_meet(&b[i], &b[j]) && b[i].bytes && b[j].bytes &&
                b[i].offset < b[j].offset + b[j].bytes && b[j].offset < b[i].offset + b[i].bytes)
                return false;
    }
    return true;
}
