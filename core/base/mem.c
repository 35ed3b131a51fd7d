/* The single allocation hook: every byte of model memory passes here, so a budget and OOM injection cover the
 * loader, the IR and tensor data alike. A 16-byte header keeps the size for accounting on free. */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE is a Linux extension */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "passcheck.h"

typedef union mem_header {
    size_t size;
    max_align_t align;
} mem_header;

bool pc_size_mul(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a) return false;
    *out = a * b;
    return true;
}

bool pc_size_add(size_t a, size_t b, size_t *out)
{
    if (b > SIZE_MAX - a) return false;
    *out = a + b;
    return true;
}

bool pc_u64_mul(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a != 0 && b > UINT64_MAX / a) return false;
    *out = a * b;
    return true;
}

enum { HUGE_PAGE = 2 << 20 };

static bool mem_should_fail(pc_mem *mem, size_t size)
{
    mem->n_allocs++;
    if (mem->fail_after) {
        if (mem->n_allocs >= mem->fail_after) {
            if (!mem->fail_forever) mem->fail_after = 0;
            return true;
        }
    }
    if (mem->budget && (size > mem->budget || mem->used > mem->budget - size)) {
        mem->over_budget = true;
        return true;
    }
    return false;
}

void *pc_mem_alloc(pc_mem *mem, size_t size)
{
    size_t total;
    if (!pc_size_add(size, sizeof(mem_header), &total)) return NULL;
    if (mem_should_fail(mem, size)) {
        mem->failed = true;
        return NULL;
    }
    mem_header *h;
#ifdef MADV_HUGEPAGE
    /* Large blocks (initializer payloads, arena chunks holding nodes, values and name indexes) start on a 2 MiB
     * boundary and ask for transparent huge pages: one fault per 2 MiB instead of one per 4 KiB when they are
     * first written (about half the load time of a 500 MB model), and far fewer TLB misses for the random
     * accesses of name lookups and graph walks. Advisory only; the partial tail keeps small pages. */
    if (size >= HUGE_PAGE) {
        void *p = NULL;
        h = posix_memalign(&p, HUGE_PAGE, total) == 0 ? p : NULL;
        if (h) (void)madvise(h, total & ~(size_t)(HUGE_PAGE - 1), MADV_HUGEPAGE);
    } else
#endif
        h = malloc(total);
    if (!h) {
        mem->failed = true;
        return NULL;
    }
    h->size = size;
    mem->used += size;
    if (mem->used > mem->peak) mem->peak = mem->used;
    return h + 1;
}

void *pc_mem_calloc(pc_mem *mem, size_t count, size_t size)
{
    size_t bytes;
    if (!pc_size_mul(count, size, &bytes)) return NULL;
    void *p = pc_mem_alloc(mem, bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

void *pc_mem_realloc(pc_mem *mem, void *ptr, size_t new_size)
{
    if (!ptr) return pc_mem_alloc(mem, new_size);
    mem_header *h = (mem_header *)ptr - 1;
    size_t old = h->size;
    if (new_size > old && mem_should_fail(mem, new_size - old)) {
        mem->failed = true;
        return NULL;
    }
    size_t total;
    if (!pc_size_add(new_size, sizeof(mem_header), &total)) return NULL;
    mem_header *n = realloc(h, total);
    if (!n) {
        mem->failed = true;
        return NULL;
    }
    n->size = new_size;
    mem->used = mem->used - old + new_size;
    if (mem->used > mem->peak) mem->peak = mem->used;
    return n + 1;
}

void pc_mem_free(pc_mem *mem, void *ptr)
{
    if (!ptr) return;
    mem_header *h = (mem_header *)ptr - 1;
    mem->used -= h->size;
    free(h);
}
