/* The single allocation hook: every byte of model memory passes here, so a budget and OOM injection cover the
 * loader, the IR and tensor data alike. A 16-byte header keeps the size for accounting on free. */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE and MAP_ANONYMOUS are extensions */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/passcheck.h"

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

bool pc_mem_inject(pc_mem *mem)
{
    mem->n_allocs++;
    if (!mem->fail_after || mem->n_allocs < mem->fail_after) return false;
    if (!mem->fail_forever) mem->fail_after = 0;
    mem->failed = true;
    return true;
}

static bool mem_should_fail(pc_mem *mem, size_t size)
{
    if (pc_mem_inject(mem)) return true;
    if (mem->budget && (size > mem->budget || mem->used > mem->budget - size)) {
        mem->over_budget = true;
        return true;
    }
    return false;
}

/* Large blocks (initializer payloads, arena chunks holding nodes, values and name indexes) are their own
 * mappings: 2 MiB aligned and advised for transparent huge pages, one fault per 2 MiB instead of one per 4
 * KiB when first written (about half the load time of a 500 MB model) and far fewer TLB misses for the random
 * accesses of name lookups and graph walks; and unmapped on free, where aligned heap blocks fragmented
 * malloc's heap and made a process that loads models repeatedly keep growing. Sanitizer builds keep malloc so
 * ASan and LeakSanitizer see every block. */
#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS) && !defined(PC_SANITIZE_BUILD)
#define MEM_MAP_LARGE 1
#endif

static bool block_is_mapped(size_t size)
{
#ifdef MEM_MAP_LARGE
    return size >= HUGE_PAGE;
#else
    (void)size;
    return false;
#endif
}

#ifdef MEM_MAP_LARGE
static size_t map_length(size_t total)
{
    return (total + 4095) & ~(size_t)4095;
}
#endif

/* A block of `total` bytes (header included) for a payload of `size` bytes; fresh mappings are zero-filled.
 */
static mem_header *block_alloc(size_t size, size_t total)
{
#ifdef MEM_MAP_LARGE
    if (block_is_mapped(size)) {
        size_t len = map_length(total), span;
        if (len < total || !pc_size_add(len, HUGE_PAGE, &span)) return NULL;
        char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED) return NULL;
        char *start = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
        if (start > raw) munmap(raw, (size_t)(start - raw));
        if (raw + span > start + len) munmap(start + len, (size_t)(raw + span - (start + len)));
        (void)madvise(start, len, MADV_HUGEPAGE); /* advisory */
        return (mem_header *)start;
    }
#endif
    (void)size;
    return malloc(total);
}

static void block_free(mem_header *h)
{
#ifdef MEM_MAP_LARGE
    if (block_is_mapped(h->size)) {
        munmap(h, map_length(h->size + sizeof *h));
        return;
    }
#endif
    free(h);
}

void *pc_mem_alloc(pc_mem *mem, size_t size)
{
    size_t total;
    if (!pc_size_add(size, sizeof(mem_header), &total)) return NULL;
    if (mem_should_fail(mem, size)) {
        mem->failed = true;
        return NULL;
    }
    mem_header *h = block_alloc(size, total);
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
    if (p && !block_is_mapped(bytes)) memset(p, 0, bytes); /* fresh mappings are zero already */
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
    mem_header *n;
    if (block_is_mapped(old) || block_is_mapped(new_size)) {
        n = block_alloc(new_size, total);
        if (n) {
            memcpy(n + 1, h + 1, old < new_size ? old : new_size);
            block_free(h);
        }
    } else {
        n = realloc(h, total);
    }
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
    block_free(h);
}
