/* The growable string (pc_strbuf, core/internal.h): printf-appending text for EP descriptions, layer
 * rules, repro files and command lines. Harness text, not model memory: it grows with plain realloc, outside
 * pc_mem's budget and OOM injection, as every copy it replaced did. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

enum { STRBUF_FIRST_CAP = 256 };

/* Room for n more bytes and the NUL; false (and oom set) when the size overflows or realloc fails. */
static bool strbuf_reserve(pc_strbuf *b, size_t n)
{
    size_t need;
    if (b->oom || !pc_size_add(b->len, n, &need) || !pc_size_add(need, 1, &need)) {
        b->oom = true;
        return false;
    }
    if (need <= b->cap) return true;
    size_t cap = b->cap ? b->cap : STRBUF_FIRST_CAP;
    while (cap < need)
        if (!pc_size_mul(cap, 2, &cap)) {
            cap = need;
            break;
        }
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = true;
        return false;
    }
    b->s = s;
    b->cap = cap;
    return true;
}

void pc_strbuf_append(pc_strbuf *b, const void *data, size_t n)
{
    if (!strbuf_reserve(b, n)) return;
    if (n) memcpy(b->s + b->len, data, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void pc_strbuf_puts(pc_strbuf *b, const char *text)
{
    pc_strbuf_append(b, text, strlen(text));
}

void pc_strbuf_vprintf(pc_strbuf *b, const char *fmt, va_list ap)
{
    if (b->oom) return;
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        b->oom = true;
        return;
    }
    if (!strbuf_reserve(b, (size_t)n)) return;
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    b->len += (size_t)n;
}

void pc_strbuf_printf(pc_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pc_strbuf_vprintf(b, fmt, ap);
    va_end(ap);
}

const char *pc_strbuf_str(const pc_strbuf *b)
{
    return b->s ? b->s : "";
}

char *pc_strbuf_take(pc_strbuf *b)
{
    char *s = b->oom ? NULL : b->s;
    if (b->oom) free(b->s);
    *b = (pc_strbuf){0};
    return s;
}

void pc_strbuf_free(pc_strbuf *b)
{
    free(b->s);
    *b = (pc_strbuf){0};
}
