/* Paths, number parsing, report escaping and string lists shared by the runner, shrinker, oracles and
 * CLI (util.h). */
#include "properties/runner/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/passcheck.h"

bool pc_str_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcmp(s + n - m, suffix) == 0;
}

void pc_name_sanitize(const char *in, char *out, size_t size)
{
    if (!size) return;
    size_t k = 0;
    for (; in[k] && k + 1 < size; k++) {
        char c = in[k];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                  c == '_' || c == '@' || c == '-';
        out[k] = ok ? c : '-';
    }
    out[k] = '\0';
}

char *pc_path_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), len;
    if (!pc_size_add(la, lb, &len) || !pc_size_add(len, 2, &len)) return NULL;
    char *p = malloc(len);
    if (p) snprintf(p, len, "%s/%s", a, b);
    return p;
}

bool pc_parse_u64_as(const char *s, uint64_t lo, uint64_t hi, unsigned flags, uint64_t *out)
{
    if (flags & PC_PARSE_U64_LEADING_SPACE) {
        if (!*s || *s == '-' || *s == '+') return false;
    } else if (*s < '0' || *s > '9') {
        return false;
    }
    bool hex = (flags & PC_PARSE_U64_HEX) && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, hex ? 16 : 10);
    if (errno || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool pc_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    return pc_parse_u64_as(s, lo, hi, PC_PARSE_U64_HEX, out);
}

void pc_json_string_n(FILE *out, const char *s, size_t n)
{
    fputc('"', out);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        switch (ch) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        default:
            if (ch < 0x20)
                fprintf(out, "\\u%04x", ch);
            else
                fputc(ch, out);
        }
    }
    fputc('"', out);
}

void pc_json_string(FILE *out, const char *s)
{
    if (!s) {
        fputs("null", out);
        return;
    }
    pc_json_string_n(out, s, strlen(s));
}

/* The length of the well-formed UTF-8 sequence at p (lead byte >= 0x80), or 0. */
static size_t utf8_length(const unsigned char *p)
{
    unsigned char ch = *p;
    size_t n = ch >= 0xf0 && ch <= 0xf4 ? 4 : ch >= 0xe0 ? 3 : ch >= 0xc2 && ch < 0xe0 ? 2 : 0;
    size_t k = 1;
    while (n && k < n && (p[k] & 0xc0) == 0x80)
        k++;
    return n && k == n ? n : 0;
}

void pc_xml_escape(FILE *out, const char *s, pc_xml_mode mode)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    bool attribute = mode == PC_XML_ATTRIBUTE;
    while (*p) {
        unsigned char ch = *p;
        if (ch >= 0x80) {
            size_t n = utf8_length(p);
            if (n) {
                fwrite(p, 1, n, out);
                p += n;
            } else {
                fputc('?', out);
                p++;
            }
            continue;
        }
        switch (ch) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&apos;", out);
            break;
        case '\n':
            fputs(attribute ? "&#10;" : "\n", out);
            break;
        case '\t':
            fputs(attribute ? "&#9;" : "\t", out);
            break;
        default:
            fputc(ch >= 0x20 ? ch : '?', out);
        }
        p++;
    }
}

bool pc_str_list_push(pc_str_list *l, const char *s)
{
    if (l->n == l->cap) {
        size_t ncap, bytes;
        if (!pc_size_mul(l->cap ? l->cap : 8, 2, &ncap) || !pc_size_mul(ncap, sizeof *l->items, &bytes))
            return false;
        char **ni = realloc(l->items, bytes);
        if (!ni) return false;
        l->items = ni;
        l->cap = ncap;
    }
    char *copy = strdup(s);
    if (!copy) return false;
    l->items[l->n++] = copy;
    return true;
}

static int str_cmp_indirect(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void pc_str_list_sort(pc_str_list *l, size_t from)
{
    if (from < l->n && l->n - from > 1)
        qsort(l->items + from, l->n - from, sizeof *l->items, str_cmp_indirect);
}

void pc_str_list_free(pc_str_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
    *l = (pc_str_list){0};
}
