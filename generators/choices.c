/* The choice sequence: every random decision a generator makes, recorded so it can be replayed and shrunk. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generators/gen.h"

uint64_t pc_splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void pc_choices_init_random(pc_choices *c, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->rng = seed;
}

void pc_choices_init_replay(pc_choices *c, const uint32_t *values, size_t n)
{
    memset(c, 0, sizeof *c);
    c->replaying = true;
    c->replay = values;
    c->n_replay = values ? n : 0;
}

void pc_choices_init_bytes(pc_choices *c, const uint8_t *bytes, size_t n)
{
    memset(c, 0, sizeof *c);
    c->replaying =
        true; /* draws are decided by the input, as in a replay (pc_draw_bool/weighted read values) */
    c->bytes = bytes ? bytes : (const uint8_t *)"";
    c->n_bytes = bytes ? n : 0;
}

/* The byte form of one draw with bound >= 2: the fewest little-endian bytes that hold bound - 1. */
static unsigned bytes_for_bound(uint32_t bound)
{
    uint32_t max = bound - 1;
    return max < (1u << 8) ? 1 : max < (1u << 16) ? 2 : max < (1u << 24) ? 3 : 4;
}

static uint32_t next_from_bytes(pc_choices *c, uint32_t bound)
{
    uint32_t v = 0;
    for (unsigned i = 0, w = bytes_for_bound(bound); i < w; i++, c->byte_pos++)
        v |= (uint32_t)(c->byte_pos < c->n_bytes ? c->bytes[c->byte_pos] : 0) << (8 * i);
    return v;
}

static void encode_draw(pc_choices *c, uint32_t bound, uint32_t v)
{
    unsigned w = bytes_for_bound(bound);
    if (c->oom) return;
    if (c->cap_encoded - c->n_encoded < w) {
        size_t cap = c->cap_encoded ? c->cap_encoded * 2 : 256;
        uint8_t *p = cap < c->cap_encoded ? NULL : realloc(c->encoded, cap);
        if (!p) {
            c->oom = true;
            return;
        }
        c->encoded = p;
        c->cap_encoded = cap;
    }
    for (unsigned i = 0; i < w; i++)
        c->encoded[c->n_encoded++] = (uint8_t)(v >> (8 * i));
}

pc_status pc_choices_to_bytes(const pc_gen_config *cfg, const uint32_t *values, size_t n, uint8_t **bytes,
                              size_t *size, pc_error *err)
{
    *bytes = NULL;
    *size = 0;
    pc_choices ch;
    pc_choices_init_replay(&ch, values, n);
    ch.encode = true;
    pc_case c;
    pc_status st = pc_case_generate(cfg, &ch, &c, err);
    if (st == PC_OK) pc_case_free(&c);
    if (st == PC_OK && ch.oom) st = pc_error_set(err, PC_ERR_NOMEM, "choices to bytes: out of memory");
    if (st == PC_OK) {
        size_t len = ch.n_encoded;
        while (len > 0 && ch.encoded[len - 1] == 0)
            len--;
        *size = len;
        if (len) {
            *bytes = ch.encoded;
            ch.encoded = NULL;
        }
    }
    pc_choices_free(&ch);
    return st;
}

void pc_choices_free(pc_choices *c)
{
    free(c->values);
    free(c->encoded);
    memset(c, 0, sizeof *c);
}

static void record(pc_choices *c, uint32_t v)
{
    if (c->oom) return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        uint32_t *p = cap > SIZE_MAX / sizeof *p ? NULL : realloc(c->values, cap * sizeof *p);
        if (!p) {
            c->oom = true;
            return;
        }
        c->values = p;
        c->cap = cap;
    }
    c->values[c->n++] = v;
}

/* The raw next value before reduction to a bound: replayed, 0 past the end, or fresh. */
static uint32_t next_raw(pc_choices *c, uint32_t bound)
{
    if (c->bytes) return bound <= 1 ? 0 : next_from_bytes(c, bound);
    if (c->replaying) {
        size_t i = c->n; /* draws recorded so far = the index of this draw */
        return i < c->n_replay ? c->replay[i] : 0;
    }
    /* Lemire-free modulo is fine here: bounds are small and bias does not matter for test generation. */
    return (uint32_t)(pc_splitmix64(&c->rng) % bound);
}

uint32_t pc_draw(pc_choices *c, uint32_t bound)
{
    if (bound <= 1) {
        if (c->replaying) (void)next_raw(c, 1);
        record(c, 0);
        return 0;
    }
    uint32_t v = next_raw(c, bound);
    if (v >= bound) v %= bound;
    record(c, v);
    if (c->encode) encode_draw(c, bound, v);
    return v;
}

int64_t pc_draw_range(pc_choices *c, int64_t lo, int64_t hi)
{
    if (hi <= lo) return (void)pc_draw(c, 1), lo;
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    uint32_t bound = span >= UINT32_MAX ? UINT32_MAX : (uint32_t)(span + 1);
    return lo + (int64_t)pc_draw(c, bound);
}

bool pc_draw_bool(pc_choices *c, uint32_t percent)
{
    /* The recorded value is 0 (false) or 1 (true); fresh draws pick with the given odds. */
    if (c->replaying) return pc_draw(c, 2) != 0;
    if (percent > 100) percent = 100;
    bool v = pc_splitmix64(&c->rng) % 100 < percent;
    record(c, v ? 1 : 0);
    return v;
}

uint32_t pc_draw_weighted(pc_choices *c, const uint32_t *weights, uint32_t n)
{
    if (n <= 1) return pc_draw(c, 1);
    /* The recorded value is the index itself, so 0 is the first (simplest) option and lowering a value in the
     * shrinker moves toward earlier options; fresh draws follow the weights. */
    if (c->replaying) return pc_draw(c, n);
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += weights[i];
    uint32_t idx = 0;
    if (total == 0) {
        idx = (uint32_t)(pc_splitmix64(&c->rng) % n);
    } else {
        uint64_t r = pc_splitmix64(&c->rng) % total;
        while (idx + 1 < n && r >= weights[idx])
            r -= weights[idx++];
    }
    record(c, idx);
    return idx;
}

uint64_t pc_draw_seed(pc_choices *c)
{
    uint64_t hi = pc_draw(c, UINT32_MAX);
    uint64_t lo = pc_draw(c, UINT32_MAX);
    return hi << 32 | lo;
}

char *pc_choices_format(const uint32_t *values, size_t n)
{
    size_t cap = n * 11 + 1, len = 0; /* at most 10 digits and a space each */
    if (n > (SIZE_MAX - 1) / 11) return NULL;
    char *s = malloc(cap);
    if (!s) return NULL;
    s[0] = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(s + len, cap - len, i ? " %u" : "%u", values[i]);
    return s;
}

pc_status pc_choices_parse(const char *text, uint32_t **values, size_t *n, pc_error *err)
{
    *values = NULL;
    *n = 0;
    size_t cap = 0, count = 0;
    uint32_t *v = NULL;
    const char *p = text ? text : "";
    for (size_t token = 1;; token++) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ',')
            p++;
        if (!*p) break;
        if (*p < '0' || *p > '9') {
            free(v);
            return pc_error_set(err, PC_ERR_USAGE, "choice sequence: token %zu is not a decimal number",
                                token);
        }
        char *end;
        errno = 0;
        unsigned long long x = strtoull(p, &end, 10);
        if (errno || x > UINT32_MAX) {
            free(v);
            return pc_error_set(err, PC_ERR_USAGE, "choice sequence: token %zu is above 4294967295", token);
        }
        if (count == cap) {
            size_t nc = cap ? cap * 2 : 64;
            uint32_t *q = realloc(v, nc * sizeof *q);
            if (!q) {
                free(v);
                return pc_error_set(err, PC_ERR_NOMEM, "choice sequence: out of memory at token %zu", token);
            }
            v = q;
            cap = nc;
        }
        v[count++] = (uint32_t)x;
        p = end;
    }
    *values = v;
    *n = count;
    return PC_OK;
}
