/* String-keyed hash map (open addressing, pc_str_hash) whose lookups always confirm with strcmp. Storage
 * comes from an arena: maps live exactly as long as the model that owns them. */
#ifndef PC_STRMAP_H
#define PC_STRMAP_H

#include <string.h>

#include "core/passcheck.h"

typedef struct pc_strmap_slot {
    const char *key;
    void *value;
    uint64_t hash;
} pc_strmap_slot;

typedef struct pc_strmap {
    pc_arena *arena;
    pc_strmap_slot *slots;
    size_t cap, count;
} pc_strmap;

/* Hash of a NUL-terminated string, 8 bytes per step (names are long and alike:
 * "/blocks.12/mlp/Mul_output_0"). */
uint64_t pc_str_hash(const char *s);

/* strcmp's order, inline. Op tables are searched by name (bsearch), opsets, domains, attributes and EPs by a
 * scan, for every node in every pass and check: short names that mostly differ in their first bytes, where a
 * call to strcmp (intercepted, and traced by libFuzzer, in the sanitizer builds) costs many times the test.
 * Every such lookup uses this (or pc_name_eq); long names (values) go through pc_strmap. */
static inline int pc_name_cmp(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return (unsigned char)*a - (unsigned char)*b;
}

static inline bool pc_name_eq(const char *a, const char *b)
{
    return pc_name_cmp(a, b) == 0;
}

void pc_strmap_init(pc_strmap *map, pc_arena *arena);
void *pc_strmap_get(const pc_strmap *map, const char *key);
/* Inserts or replaces. key must outlive the map (arena strings do). false on allocation failure. */
bool pc_strmap_put(pc_strmap *map, const char *key, void *value);
/* Inserts key only if absent (one probe). Returns the value already stored for key (then nothing changes), or
 * NULL after inserting; *failed is set when the table could not grow. */
void *pc_strmap_put_new(pc_strmap *map, const char *key, void *value, bool *failed);
/* Sizes the table for at least n keys without regrowing. */
bool pc_strmap_reserve(pc_strmap *map, size_t n);

#endif
