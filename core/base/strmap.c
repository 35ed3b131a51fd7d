#include <string.h>

#include "core/base/strmap.h"

uint64_t pc_str_hash(const char *s)
{
    /* A word at a time instead of FNV-1a's byte at a time: the multiply chain per byte dominated lookups
     * whose slot was already in cache. Multiplying by an odd constant is a bijection, so strings that differ
     * in one word keep different states; the final mix brings the high bits down for the index. The tail is
     * read as the last 8 (or 4 + 4) bytes, overlapping what came before, never assembled byte by byte in
     * memory (that stalled on store forwarding). Every hit is still confirmed with strcmp, so quality only
     * affects probe length. */
    const uint64_t k = 0xff51afd7ed558ccdull;
    size_t len = strlen(s);
    uint64_t h = 0x9e3779b97f4a7c15ull, w;
    if (len >= 8) {
        const char *p = s;
        for (size_t n = len; n > 8; n -= 8, p += 8) {
            memcpy(&w, p, 8);
            h = (h ^ w) * k;
        }
        memcpy(&w, s + len - 8, 8);
        h = (h ^ w) * k;
    } else if (len >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + len - 4, 4);
        h = (h ^ ((uint64_t)a << 32 | b)) * k;
    } else if (len) {
        w = (uint64_t)(unsigned char)s[0] << 16 | (uint64_t)(unsigned char)s[len / 2] << 8 |
            (unsigned char)s[len - 1];
        h = (h ^ w) * k;
    }
    h = (h ^ len) * k; /* the length last: in the seed it could cancel against a differing low byte */
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

void pc_strmap_init(pc_strmap *map, pc_arena *arena)
{
    map->arena = arena;
    map->slots = NULL;
    map->cap = map->count = 0;
}

static pc_strmap_slot *strmap_find(pc_strmap_slot *slots, size_t cap, const char *key, uint64_t h)
{
    size_t i = (size_t)h & (cap - 1);
    for (;;) {
        pc_strmap_slot *s = &slots[i];
        if (!s->key || (s->hash == h && strcmp(s->key, key) == 0)) return s;
        i = (i + 1) & (cap - 1);
    }
}

void *pc_strmap_get(const pc_strmap *map, const char *key)
{
    if (!map->cap) return NULL;
    pc_strmap_slot *s = strmap_find(map->slots, map->cap, key, pc_str_hash(key));
    return s->key ? s->value : NULL;
}

static bool strmap_resize(pc_strmap *map, size_t ncap)
{
    pc_strmap_slot *ns = pc_arena_array(map->arena, ncap, sizeof *ns);
    if (!ns) return false;
    for (size_t i = 0; i < map->cap; i++) {
        pc_strmap_slot *o = &map->slots[i];
        if (o->key) *strmap_find(ns, ncap, o->key, o->hash) = *o;
    }
    map->slots = ns;
    map->cap = ncap;
    return true;
}

static bool strmap_grow(pc_strmap *map)
{
    return strmap_resize(map, map->cap ? map->cap * 2 : 16);
}

bool pc_strmap_reserve(pc_strmap *map, size_t n)
{
    size_t cap = map->cap ? map->cap : 16;
    while (n * 4 > cap * 3) {
        if (cap > SIZE_MAX / 4) return false;
        cap *= 2;
    }
    return cap == map->cap || strmap_resize(map, cap);
}

void *pc_strmap_put_new(pc_strmap *map, const char *key, void *value, bool *failed)
{
    *failed = false;
    if ((map->count + 1) * 4 > map->cap * 3 && !strmap_grow(map)) {
        *failed = true;
        return NULL;
    }
    uint64_t h = pc_str_hash(key);
    pc_strmap_slot *s = strmap_find(map->slots, map->cap, key, h);
    if (s->key) return s->value;
    s->key = key;
    s->hash = h;
    s->value = value;
    map->count++;
    return NULL;
}

bool pc_strmap_put(pc_strmap *map, const char *key, void *value)
{
    if ((map->count + 1) * 4 > map->cap * 3 && !strmap_grow(map)) return false;
    uint64_t h = pc_str_hash(key);
    pc_strmap_slot *s = strmap_find(map->slots, map->cap, key, h);
    if (!s->key) {
        s->key = key;
        s->hash = h;
        map->count++;
    }
    s->value = value;
    return true;
}
