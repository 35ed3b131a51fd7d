/* Bump arena for structures that share the model's lifetime (nodes, values, names, attribute arrays). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/base/base_internal.h"

enum { ARENA_ALIGN = 16, ARENA_MIN_CHUNK = 4 * 1024 };

void pc_arena_init(pc_arena *arena, pc_mem *mem)
{
    arena->mem = mem;
    arena->head = NULL;
    arena->chunk_size = ARENA_MIN_CHUNK;
}

void *pc_arena_alloc_uninit(pc_arena *arena, size_t size)
{
    if (pc_mem_inject(arena->mem)) return NULL;
    size_t need;
    if (!pc_size_add(size, ARENA_ALIGN - 1, &need)) return NULL;
    need &= ~(size_t)(ARENA_ALIGN - 1);
    if (need == 0) need = ARENA_ALIGN;
    pc_arena_chunk *c = arena->head;
    if (!c || c->size - c->used < need) {
        /* Chunks grow geometrically up to 8 MiB so millions of small objects cost few mallocs; a large
         * request gets a chunk of its own size. */
        size_t csize = arena->chunk_size;
        if (csize < (8u << 20)) arena->chunk_size = csize * 2;
        if (csize < need) csize = need;
        size_t total;
        if (!pc_size_add(csize, sizeof(pc_arena_chunk), &total)) return NULL;
        pc_arena_chunk *n = pc_mem_alloc(arena->mem, total);
        if (!n) return NULL;
        n->size = csize;
        n->used = 0;
        PC_ARENA_POISON(n->data, csize);
        if (c && csize == need && c->size - c->used > ARENA_MIN_CHUNK) {
            /* keep the current chunk on top: it still has room for small objects */
            n->next = c->next;
            c->next = n;
        } else {
            n->next = c;
            arena->head = n;
        }
        c = n;
    }
    void *p = (char *)c->data + c->used;
    c->used += need;
    PC_ARENA_UNPOISON(p, size);
    return p;
}

void *pc_arena_alloc(pc_arena *arena, size_t size)
{
    void *p = pc_arena_alloc_uninit(arena, size);
    if (p) memset(p, 0, size);
    return p;
}

void *pc_arena_array(pc_arena *arena, size_t count, size_t elem_size)
{
    size_t bytes;
    if (!pc_size_mul(count, elem_size, &bytes)) return NULL;
    return pc_arena_alloc(arena, bytes);
}

char *pc_arena_strndup(pc_arena *arena, const char *s, size_t n)
{
    if (!s) return NULL;
    size_t total;
    if (!pc_size_add(n, 1, &total)) return NULL;
    char *d = pc_arena_alloc(arena, total);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *pc_arena_strdup(pc_arena *arena, const char *s)
{
    if (!s) return NULL;
    return pc_arena_strndup(arena, s, strlen(s));
}

char *pc_arena_printf(pc_arena *arena, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *d = pc_arena_alloc(arena, (size_t)n + 1);
    if (!d) return NULL;
    va_start(ap, fmt);
    vsnprintf(d, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return d;
}

void pc_arena_free(pc_arena *arena)
{
    pc_arena_chunk *c = arena->head;
    while (c) {
        pc_arena_chunk *next = c->next;
        PC_ARENA_UNPOISON(c->data, c->size);
        pc_mem_free(arena->mem, c);
        c = next;
    }
    arena->head = NULL;
}
