/* The FlatBuffers verifier's own mechanics (core/ort/fb_verify.c), beyond the loader's statuses in
 * test_ort_load: the sites its visitor reports equal those of an independent walk of the verified buffer
 * through the accessors (on the ORT fixtures and on random edits of them that still verify), and the overlap
 * rule (a string may be referenced twice; a vector or table may not; objects may not share bytes) holds
 * whichever object the walk reaches first. */
#include <stdlib.h>
#include <string.h>

#include "core/ort/fb.h"
#include "tests/ort/ort_fixture.h"
#include "tests/test_util.h"

typedef ort_buf buf;

static buf fixture(const char *name)
{
    return ort_fixture(name);
}

enum { MAX_SITES = 20000 };

typedef struct list {
    fb_site s[MAX_SITES];
    uint32_t n;
    bool overflow;
} list;

static void push(list *l, fb_site s)
{
    if (l->n < MAX_SITES)
        l->s[l->n++] = s;
    else
        l->overflow = true;
}

static void collect(void *ctx, const fb_site *s)
{
    push(ctx, *s);
}

/* The oracle: a recursive walk of a verified buffer through fb_field_pos and plain offset arithmetic, in
 * field-id order, written apart from the verifier. */
static void walk_table(list *l, const uint8_t *b, uint32_t t, int16_t ti);

static void walk_ref(list *l, const uint8_t *b, uint32_t pos, const fb_field *f, uint8_t to, int16_t ti)
{
    uint32_t target = pos + fb_u32(b, pos);
    push(l, (fb_site){pos, target, f, ti, FB_SITE_REF, to, 0});
    if (to == FB_STRING) push(l, (fb_site){target, 0, f, -1, FB_SITE_STRING, 0, 0});
    if (to == FB_TABLE) walk_table(l, b, target, ti);
}

static void walk_table(list *l, const uint8_t *b, uint32_t t, int16_t ti)
{
    const fb_table *tab = &pc_ort_schema.tables[ti];
    push(l, (fb_site){t, 0, NULL, ti, FB_SITE_TABLE, 0, 0});
    for (uint16_t id = 0; id < tab->n_fields; id++) {
        const fb_field *f = &tab->fields[id];
        uint32_t p = fb_field_pos(b, t, id);
        if (!p) continue;
        switch (f->kind) {
        case FB_SCALAR:
            push(l, (fb_site){p, 0, f, -1, FB_SITE_SCALAR, 0, f->width});
            break;
        case FB_UNION_TYPE:
            push(l, (fb_site){p, 0, f, -1, FB_SITE_TAG, 0, 1});
            break;
        case FB_UNION: {
            uint32_t tp = id ? fb_field_pos(b, t, (uint16_t)(id - 1)) : 0;
            uint8_t tag = tp ? b[tp] : 0;
            if (tag >= 1 && tag <= f->n_union) walk_ref(l, b, p, f, FB_TABLE, f->union_subs[tag - 1]);
            break;
        }
        case FB_STRING:
            walk_ref(l, b, p, f, FB_STRING, -1);
            break;
        case FB_TABLE:
            walk_ref(l, b, p, f, FB_TABLE, f->sub);
            break;
        default: { /* the four vector kinds */
            uint32_t v = p + fb_u32(b, p), n = fb_u32(b, v);
            bool refs = f->kind == FB_VEC_STRING || f->kind == FB_VEC_TABLE;
            uint8_t width = refs ? 4 : f->width;
            push(l, (fb_site){p, v, f, -1, FB_SITE_REF, f->kind, 0});
            push(l, (fb_site){v, 0, f, -1, FB_SITE_VECTOR, f->kind, width});
            for (uint32_t i = 0; i < n && !l->overflow; i++) {
                uint32_t e = v + 4 + (uint32_t)width * i;
                if (f->kind == FB_VEC_STRUCT) push(l, (fb_site){e, 0, f, -1, FB_SITE_STRUCT, 0, f->width});
                if (f->kind == FB_VEC_STRING) walk_ref(l, b, e, f, FB_STRING, -1);
                if (f->kind == FB_VEC_TABLE) walk_ref(l, b, e, f, FB_TABLE, f->sub);
            }
        }
        }
    }
}

static bool site_eq(const fb_site *a, const fb_site *b)
{
    return a->pos == b->pos && a->target == b->target && a->field == b->field && a->ti == b->ti &&
           a->kind == b->kind && a->to == b->to && a->width == b->width;
}

static list g_visited, g_walked;

/* Verifies b with the visitor; when it verifies, the visited sites must be the oracle's, in order. */
static pc_status check_sites(const uint8_t *b, size_t size, const char *what)
{
    fb_verify_options o;
    fb_verify_options_default(&o);
    o.visit = collect;
    o.visit_ctx = &g_visited;
    g_visited.n = 0;
    g_visited.overflow = false;
    pc_error err;
    pc_status st = fb_verify(b, size, &pc_ort_schema, &o, &err);
    /* the visitor does not change the verdict */
    pc_error err2;
    CHECK_MSG(fb_verify(b, size, &pc_ort_schema, NULL, &err2) == st, "%s: verdict differs without visitor",
              what);
    if (st != PC_OK) return st;
    g_walked.n = 0;
    g_walked.overflow = false;
    walk_table(&g_walked, b, fb_root(b), (int16_t)pc_ort_schema.root);
    CHECK_MSG(!g_visited.overflow && !g_walked.overflow, "%s: more than %d sites", what, MAX_SITES);
    CHECK_MSG(g_visited.n == g_walked.n, "%s: %u sites visited, %u walked", what, g_visited.n, g_walked.n);
    for (uint32_t i = 0; i < g_visited.n && i < g_walked.n; i++)
        if (!site_eq(&g_visited.s[i], &g_walked.s[i])) {
            CHECK_MSG(false, "%s: site %u differs: kind %u at %u vs kind %u at %u", what, i,
                      g_visited.s[i].kind, g_visited.s[i].pos, g_walked.s[i].kind, g_walked.s[i].pos);
            break;
        }
    return st;
}

static const char *const fixtures[] = {"test_loop11.ort", "test_constant.ort",
                                       "test_conv_with_strides_padding.ort"};

static void visitor_matches_walk(void)
{
    uint64_t seed = 0x5eed;
    uint32_t verified = 0, edited = 0;
    for (size_t k = 0; k < sizeof fixtures / sizeof *fixtures; k++) {
        buf good = fixture(fixtures[k]);
        CHECK_MSG(check_sites(good.data, good.size, fixtures[k]) == PC_OK, "%s does not verify", fixtures[k]);
        uint32_t kinds[FB_SITE_KINDS] = {0};
        for (uint32_t i = 0; i < g_visited.n; i++)
            kinds[g_visited.s[i].kind]++;
        CHECK_MSG(kinds[FB_SITE_TABLE] && kinds[FB_SITE_REF] && kinds[FB_SITE_SCALAR] &&
                      kinds[FB_SITE_VECTOR] && kinds[FB_SITE_STRING],
                  "%s: a site kind is missing", fixtures[k]);
        /* random byte edits: wherever the result still verifies, the sites still match */
        uint8_t *b = malloc(good.size);
        if (!b) exit(1);
        for (int t = 0; t < 1500; t++) {
            memcpy(b, good.data, good.size);
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            size_t at = (size_t)(seed >> 33) % good.size;
            b[at] = (uint8_t)(b[at] + 1 + (seed >> 20) % 3);
            char what[96];
            snprintf(what, sizeof what, "%s with byte %zu edited", fixtures[k], at);
            edited++;
            verified += check_sites(b, good.size, what) == PC_OK;
        }
        free(b);
        free(good.data);
    }
    fprintf(stderr, "test_ort_fb: %u random edits, %u still verify\n", edited, verified);
    CHECK(verified > 0 && verified < edited);
}

static void put_u32(uint8_t *b, size_t pos, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[pos + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static void expect_overlap(const uint8_t *b, size_t size, bool refused, const char *needle, const char *what)
{
    pc_error err;
    pc_error_clear(&err);
    pc_status st = fb_verify(b, size, &pc_ort_schema, NULL, &err);
    if (refused)
        CHECK_MSG(st == PC_ERR_FB_OVERLAP && strstr(err.message, needle), "%s: %s: %s", what,
                  pc_status_name(st), err.message);
    else
        CHECK_MSG(st == PC_OK, "%s: %s: %s", what, pc_status_name(st), err.message);
}

static void overlap_rule(void)
{
    buf good = fixture("test_loop11.ort");
    CHECK(check_sites(good.data, good.size, "test_loop11.ort") == PC_OK);
    uint8_t *b = malloc(good.size);
    if (!b) exit(1);
    /* two references made to name one object: a pair of slots of one kind where the first's target lies
     * past the second slot (uoffsets point forward) */
    const fb_site *s0 = NULL, *s1 = NULL, *v0 = NULL, *v1 = NULL;
    for (uint32_t i = 0; i < g_visited.n; i++)
        for (uint32_t j = 0; j < g_visited.n; j++) {
            const fb_site *a = &g_visited.s[i], *c = &g_visited.s[j];
            if (i == j || a->kind != FB_SITE_REF || c->kind != FB_SITE_REF || a->to != c->to ||
                a->target <= c->pos || a->target == c->target)
                continue;
            if (a->to == FB_STRING && !s0) s0 = a, s1 = c;
            if ((a->to == FB_VEC_SCALAR || a->to == FB_VEC_STRING) && !v0) v0 = a, v1 = c;
        }
    CHECK(s0 && s1 && v0 && v1);
    if (s0 && s1) { /* a string referenced twice: allowed (writers share names) */
        memcpy(b, good.data, good.size);
        put_u32(b, s1->pos, s0->target - s1->pos);
        expect_overlap(b, good.size, false, "", "a string referenced twice");
    }
    if (v0 && v1) { /* a vector referenced twice: refused */
        memcpy(b, good.data, good.size);
        put_u32(b, v1->pos, v0->target - v1->pos);
        expect_overlap(b, good.size, true, "is also", "a vector referenced twice");
    }
    /* a vector slot pointed at a string: the two objects share bytes. Every such edit is refused (as an
     * overlap, or first for alignment or length), and some as an overlap whichever object the walk reached
     * first. */
    uint32_t tried = 0, overlaps = 0, accepted = 0;
    for (uint32_t i = 0; i < g_visited.n && tried < 200; i++) {
        const fb_site *v = &g_visited.s[i];
        if (v->kind != FB_SITE_REF || (v->to != FB_VEC_SCALAR && v->to != FB_VEC_STRING)) continue;
        for (uint32_t j = 0; j < g_visited.n && tried < 200; j++) {
            const fb_site *str = &g_visited.s[j];
            if (str->kind != FB_SITE_REF || str->to != FB_STRING || str->target <= v->pos) continue;
            memcpy(b, good.data, good.size);
            put_u32(b, v->pos, str->target - v->pos);
            pc_error err;
            pc_status st = fb_verify(b, good.size, &pc_ort_schema, NULL, &err);
            tried++;
            overlaps += st == PC_ERR_FB_OVERLAP;
            accepted += st == PC_OK;
        }
    }
    CHECK_MSG(tried && overlaps && !accepted, "vector onto string: %u tried, %u overlaps, %u accepted", tried,
              overlaps, accepted);
    free(b);
    free(good.data);
}

int main(void)
{
    visitor_matches_walk();
    overlap_rule();
    return pc_test_finish("test_ort_fb");
}
