/* The FlatBuffers verifier (fb.h): one walk of the buffer against a schema given as data, every check before
 * the bytes it guards are read, each failure a status of its own with the byte offset and the path from the
 * root ("byte 412: InferenceSession.model.graph.nodes[3].op_type: string not NUL-terminated"). Each object
 * (a table's inline part, a vector, a string) claims its bytes in a bitmap as the walk reaches it, so an
 * overlap stops the walk at once, in time linear in the buffer (sorting every object at the end cost a tenth
 * of a fuzz execution). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ort/fb.h"

enum { FB_MAX_SIZE = 0x7fffffff, PATH_MAX_SEGMENTS = 128 };

typedef enum obj_kind { OBJ_HEADER, OBJ_TABLE, OBJ_VECTOR, OBJ_STRING } obj_kind;

typedef struct fb_obj {
    size_t start, end; /* [start, end) */
    obj_kind kind;
} fb_obj;

typedef struct path_seg {
    const char *name;
    int64_t index; /* -1: none */
} path_seg;

typedef struct verifier {
    const uint8_t *b;
    size_t size;
    const fb_schema *schema;
    const fb_verify_options *o;
    pc_error *err;
    uint32_t depth;
    uint64_t tables;
    fb_obj *objs; /* every object claimed, in walk order: only read to name the other side of an overlap */
    size_t n_objs, cap_objs;
    uint64_t *claimed; /* a bit per buffer byte: in an object already */
    uint64_t
        *string_start; /* a bit per buffer byte: a string claimed here (a string may be referenced twice) */
    path_seg path[PATH_MAX_SEGMENTS];
    uint32_t n_path;
} verifier;

void fb_verify_options_default(fb_verify_options *o)
{
    o->max_size = FB_MAX_SIZE;
    o->max_depth = 64;
    o->max_tables = 1000000;
    o->visit = NULL;
    o->visit_ctx = NULL;
}

static void visit(const verifier *v, fb_site site)
{
    if (v->o->visit) v->o->visit(v->o->visit_ctx, &site);
}

static void path_push(verifier *v, const char *name, int64_t index)
{
    if (v->n_path < PATH_MAX_SEGMENTS) v->path[v->n_path] = (path_seg){name, index};
    v->n_path++;
}

static void path_pop(verifier *v)
{
    v->n_path--;
}

PC_PRINTF(4, 5)
static pc_status fail(verifier *v, pc_status st, size_t pos, const char *fmt, ...)
{
    char path[512], what[256];
    size_t n = 0;
    path[0] = '\0';
    for (uint32_t i = 0; i < v->n_path && i < PATH_MAX_SEGMENTS && n < sizeof path; i++) {
        const path_seg *s = &v->path[i];
        int w = s->index >= 0 ? snprintf(path + n, sizeof path - n, "%s%s[%lld]", i ? "." : "", s->name,
                                         (long long)s->index)
                              : snprintf(path + n, sizeof path - n, "%s%s", i ? "." : "", s->name);
        if (w < 0) break;
        n += (size_t)w;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return pc_error_set(v->err, st, "%s: byte %zu: %s: %s", v->schema->name, pos, path[0] ? path : "(root)",
                        what);
}

/* [pos, pos + len) inside the buffer, without overflowing */
static bool in_buf(const verifier *v, size_t pos, size_t len)
{
    return pos <= v->size && len <= v->size - pos;
}

static const char *obj_name(obj_kind k)
{
    return k == OBJ_HEADER   ? "the file header"
           : k == OBJ_TABLE  ? "a table"
           : k == OBJ_VECTOR ? "a vector"
                             : "a string";
}

static uint64_t bits_mask(size_t from, size_t to) /* bits [from, to) of a word, 0 <= from < to <= 64 */
{
    uint64_t hi = to == 64 ? ~(uint64_t)0 : ((uint64_t)1 << to) - 1;
    return hi & ~(((uint64_t)1 << from) - 1);
}

/* Any bit of [start, end) set (end > start). */
static bool bits_any(const uint64_t *bits, size_t start, size_t end)
{
    for (size_t w = start / 64; w <= (end - 1) / 64; w++) {
        size_t lo = w == start / 64 ? start % 64 : 0, hi = w == (end - 1) / 64 ? (end - 1) % 64 + 1 : 64;
        if (bits[w] & bits_mask(lo, hi)) return true;
    }
    return false;
}

static void bits_set(uint64_t *bits, size_t start, size_t end)
{
    for (size_t w = start / 64; w <= (end - 1) / 64; w++) {
        size_t lo = w == start / 64 ? start % 64 : 0, hi = w == (end - 1) / 64 ? (end - 1) % 64 + 1 : 64;
        bits[w] |= bits_mask(lo, hi);
    }
}

/* The overlap error: the object claimed earlier that shares a byte with [start, end), named with it. */
static pc_status overlap(verifier *v, size_t start, size_t end, obj_kind kind)
{
    fb_obj b = {start, end, kind}, a = {0, 0, OBJ_HEADER};
    for (size_t i = 0; i < v->n_objs; i++)
        if (v->objs[i].start < end && start < v->objs[i].end) {
            a = v->objs[i];
            break;
        }
    if (a.start > b.start || (a.start == b.start && a.end > b.end)) { /* name the later-starting one first */
        fb_obj t = a;
        a = b;
        b = t;
    }
    bool same = a.start == b.start && a.end == b.end && a.kind == b.kind;
    return pc_error_set(v->err, PC_ERR_FB_OVERLAP,
                        "%s: byte %zu: %s (bytes %zu..%zu) %s %s (bytes %zu..%zu)%s", v->schema->name,
                        b.start, obj_name(b.kind), b.start, b.end, same ? "is also" : "overlaps",
                        obj_name(a.kind), a.start, a.end,
                        same ? ": shared tables and vectors are refused (a small file could describe an "
                               "exponentially large tree)"
                             : "");
}

/* Claims [start, end) for an object (end > start): no byte may be in two objects, except one string
 * referenced twice (writers share names). *again: that string, already claimed and walked. */
static pc_status add_obj(verifier *v, size_t start, size_t end, obj_kind kind, bool *again)
{
    if (again) *again = false;
    if (bits_any(v->claimed, start, end)) {
        if (kind == OBJ_STRING && (v->string_start[start / 64] >> (start % 64) & 1)) {
            *again = true; /* the same length prefix, so the same bytes: claimed whole by the first visit */
            return PC_OK;
        }
        return overlap(v, start, end, kind);
    }
    bits_set(v->claimed, start, end);
    if (kind == OBJ_STRING) v->string_start[start / 64] |= (uint64_t)1 << (start % 64);
    if (v->n_objs == v->cap_objs) {
        size_t cap = v->cap_objs ? 2 * v->cap_objs : 64;
        fb_obj *o = realloc(v->objs, cap * sizeof *o);
        if (!o) return pc_error_set(v->err, PC_ERR_NOMEM, "%s: out of memory verifying", v->schema->name);
        v->objs = o;
        v->cap_objs = cap;
    }
    v->objs[v->n_objs++] = (fb_obj){start, end, kind};
    return PC_OK;
}

/* The uoffset at pos: 4-aligned, non-zero, at most INT32_MAX, its target inside the buffer with room for a
 * u32 (every target — table, vector, string — starts with one). */
static pc_status follow(verifier *v, size_t pos, size_t *target)
{
    if (pos % 4) return fail(v, PC_ERR_FB_ALIGN, pos, "offset field not 4-byte aligned");
    if (!in_buf(v, pos, 4)) return fail(v, PC_ERR_FB_OFFSET, pos, "offset field past the end of the buffer");
    uint32_t o = fb_u32(v->b, pos);
    if (o == 0) return fail(v, PC_ERR_FB_OFFSET, pos, "offset 0 (points at itself)");
    if (o > 0x7fffffffu) return fail(v, PC_ERR_FB_OFFSET, pos, "offset %u above INT32_MAX", o);
    if (o > v->size - pos || !in_buf(v, pos + o, 4))
        return fail(v, PC_ERR_FB_OFFSET, pos, "offset %u leads past the end of the buffer (%zu bytes)", o,
                    v->size);
    *target = pos + o;
    return PC_OK;
}

/* A vector at pos of count elements of `elem` bytes aligned to `align` (empty vectors may be misaligned:
 * FlatBuffers' C++ builder wrote them so, ORT's scalar initializers among them); not claimed yet. */
static pc_status vector_check(verifier *v, size_t pos, size_t elem, size_t align, uint32_t *count)
{
    if (pos % 4) return fail(v, PC_ERR_FB_ALIGN, pos, "vector length not 4-byte aligned");
    uint32_t n = fb_u32(v->b, pos); /* follow() checked 4 bytes */
    size_t room = v->size - pos - 4;
    if (elem && n > room / elem)
        return fail(v, PC_ERR_LENGTH, pos, "vector of %u x %zu-byte elements runs past the end of the buffer",
                    n, elem);
    if (n && align > 4 && (pos + 4) % align)
        return fail(v, PC_ERR_FB_ALIGN, pos + 4, "vector elements not %zu-byte aligned", align);
    *count = n;
    return PC_OK;
}

static pc_status vector_at(verifier *v, size_t pos, size_t elem, size_t align, uint32_t *count)
{
    pc_status st = vector_check(v, pos, elem, align, count);
    return st != PC_OK ? st : add_obj(v, pos, pos + 4 + (size_t)*count * elem, OBJ_VECTOR, NULL);
}

static pc_status string_at(verifier *v, size_t pos, const fb_field *f)
{
    uint32_t n = 0;
    pc_status st = vector_check(v, pos, 1, 1, &n);
    if (st != PC_OK) return st;
    size_t end = pos + 4 + (size_t)n;
    if (end >= v->size || v->b[end] != 0) return fail(v, PC_ERR_FB_STRING, pos, "string not NUL-terminated");
    bool again;
    if ((st = add_obj(v, pos, end + 1, OBJ_STRING, &again)) != PC_OK) return st;
    visit(v, (fb_site){(uint32_t)pos, 0, f, -1, FB_SITE_STRING, 0, 0});
    if (again) return PC_OK;
    if (memchr(v->b + pos + 4, 0, n))
        return fail(v, PC_ERR_EMBEDDED_NUL, pos, "string of %u bytes holds a NUL", n);
    return PC_OK;
}

static pc_status table_at(verifier *v, size_t pos, int16_t table);

/* Elements of a vector of references (strings or tables of `sub`): each a non-zero uoffset from its slot. The
 * path's last segment (the field) takes the element's index. */
static pc_status ref_vector(verifier *v, size_t pos, const fb_field *f)
{
    uint32_t n = 0;
    pc_status st = vector_at(v, pos, 4, 4, &n);
    if (st == PC_OK) visit(v, (fb_site){(uint32_t)pos, 0, f, -1, FB_SITE_VECTOR, f->kind, 4});
    path_seg *top = v->n_path && v->n_path <= PATH_MAX_SEGMENTS ? &v->path[v->n_path - 1] : NULL;
    for (uint32_t i = 0; i < n && st == PC_OK; i++) {
        size_t slot = pos + 4 + 4 * (size_t)i, target;
        if (top) top->index = i;
        if ((st = follow(v, slot, &target)) != PC_OK) break;
        bool str = f->kind == FB_VEC_STRING;
        visit(v, (fb_site){(uint32_t)slot, (uint32_t)target, f, str ? -1 : f->sub, FB_SITE_REF,
                           str ? FB_STRING : FB_TABLE, 0});
        st = str ? string_at(v, target, f) : table_at(v, target, f->sub);
    }
    if (top && st == PC_OK) top->index = -1;
    return st;
}

/* Follows the reference field at fpos to `to` (the fb_kind found there; ti for tables) and reports it. */
static pc_status ref_at(verifier *v, size_t fpos, const fb_field *f, uint8_t to, int16_t ti, size_t *target)
{
    pc_status st = follow(v, fpos, target);
    if (st == PC_OK) visit(v, (fb_site){(uint32_t)fpos, (uint32_t)*target, f, ti, FB_SITE_REF, to, 0});
    return st;
}

static pc_status field_at(verifier *v, size_t fpos, const fb_field *f, uint8_t union_tag)
{
    size_t target;
    pc_status st;
    switch ((fb_kind)f->kind) {
    case FB_SCALAR:
    case FB_UNION_TYPE:
        if (f->lo <= f->hi || f->kind == FB_UNION_TYPE) {
            int64_t val;
            if (f->is_signed)
                val = f->width == 1   ? (int8_t)v->b[fpos]
                      : f->width == 2 ? (int16_t)fb_u16(v->b, fpos)
                      : f->width == 4 ? (int32_t)fb_u32(v->b, fpos)
                                      : (int64_t)fb_u64(v->b, fpos);
            else
                val = f->width == 1   ? v->b[fpos]
                      : f->width == 2 ? fb_u16(v->b, fpos)
                                      : (int64_t)fb_u32(v->b, fpos);
            int64_t hi = f->kind == FB_UNION_TYPE ? 255 : f->hi, lo = f->kind == FB_UNION_TYPE ? 0 : f->lo;
            if (val < lo || val > hi)
                return fail(v, PC_ERR_ENUM, fpos, "value %lld outside %lld..%lld", (long long)val,
                            (long long)lo, (long long)hi);
        }
        visit(v, (fb_site){(uint32_t)fpos, 0, f, -1, f->kind == FB_SCALAR ? FB_SITE_SCALAR : FB_SITE_TAG, 0,
                           f->width});
        return PC_OK;
    case FB_STRING:
        if ((st = ref_at(v, fpos, f, FB_STRING, -1, &target)) != PC_OK) return st;
        return string_at(v, target, f);
    case FB_TABLE:
        if ((st = ref_at(v, fpos, f, FB_TABLE, f->sub, &target)) != PC_OK) return st;
        return table_at(v, target, f->sub);
    case FB_VEC_SCALAR:
    case FB_VEC_STRUCT: {
        uint32_t n;
        if ((st = ref_at(v, fpos, f, f->kind, -1, &target)) != PC_OK) return st;
        if ((st = vector_at(v, target, f->width, f->kind == FB_VEC_STRUCT ? f->align : f->width, &n)) !=
            PC_OK)
            return st;
        visit(v, (fb_site){(uint32_t)target, 0, f, -1, FB_SITE_VECTOR, f->kind, f->width});
        for (uint32_t i = 0; i < n && f->kind == FB_VEC_STRUCT && v->o->visit; i++)
            visit(v, (fb_site){(uint32_t)(target + 4 + (size_t)f->width * i), 0, f, -1, FB_SITE_STRUCT, 0,
                               f->width});
        return PC_OK;
    }
    case FB_VEC_STRING:
    case FB_VEC_TABLE:
        if ((st = ref_at(v, fpos, f, f->kind, -1, &target)) != PC_OK) return st;
        return ref_vector(v, target, f);
    case FB_UNION:
        if (union_tag == 0) return fail(v, PC_ERR_FB_UNION, fpos, "union value with type NONE");
        if (union_tag > f->n_union)
            return fail(v, PC_ERR_FB_UNION, fpos, "union type %u unknown (1..%u)", union_tag, f->n_union);
        if ((st = ref_at(v, fpos, f, FB_TABLE, f->union_subs[union_tag - 1], &target)) != PC_OK) return st;
        return table_at(v, target, f->union_subs[union_tag - 1]);
    }
    return fail(v, PC_ERR_INTERNAL, fpos, "schema field kind %u", f->kind);
}

static pc_status table_at(verifier *v, size_t pos, int16_t ti)
{
    const fb_table *t = &v->schema->tables[ti];
    if (pos % 4) return fail(v, PC_ERR_FB_ALIGN, pos, "table %s not 4-byte aligned", t->name);
    if (++v->depth > v->o->max_depth)
        return fail(v, PC_ERR_NESTING, pos, "tables nested deeper than %u", v->o->max_depth);
    if (++v->tables > v->o->max_tables)
        return fail(v, PC_ERR_BUDGET, pos, "more than %llu tables", (unsigned long long)v->o->max_tables);
    /* vtable at pos - soffset: inside the buffer, 2-aligned, 4 <= vsize (even) and the table's tsize */
    int64_t vt = (int64_t)pos - (int64_t)(int32_t)fb_u32(v->b, pos);
    if (vt < 0 || vt % 2 || !in_buf(v, (size_t)vt, 4))
        return fail(v, PC_ERR_FB_VTABLE, pos, "table %s: vtable at %lld outside the buffer or misaligned",
                    t->name, (long long)vt);
    uint16_t vsize = fb_u16(v->b, (size_t)vt), tsize = fb_u16(v->b, (size_t)vt + 2);
    if (vsize < 4 || vsize % 2 || !in_buf(v, (size_t)vt, vsize))
        return fail(v, PC_ERR_FB_VTABLE, (size_t)vt,
                    "table %s: vtable size %u (even, >= 4, inside the buffer)", t->name, vsize);
    if (tsize < 4 || !in_buf(v, pos, tsize))
        return fail(v, PC_ERR_FB_VTABLE, (size_t)vt, "table %s: table size %u (>= 4, inside the buffer)",
                    t->name, tsize);
    pc_status st = add_obj(v, pos, pos + tsize, OBJ_TABLE, NULL);
    if (st == PC_OK) visit(v, (fb_site){(uint32_t)pos, 0, NULL, ti, FB_SITE_TABLE, 0, 0});
    uint16_t n_slots = (uint16_t)((vsize - 4) / 2), n_ids = n_slots > t->n_fields ? n_slots : t->n_fields;
    uint8_t union_tag = 0;
    for (uint16_t id = 0; id < n_ids && st == PC_OK; id++) {
        size_t slot = (size_t)vt + 4 + 2 * (size_t)id;
        uint16_t voff = id < n_slots ? fb_u16(v->b, slot) : 0; /* beyond the vtable: absent */
        const fb_field *f = id < t->n_fields ? &t->fields[id] : NULL;
        if (!f) {
            if (voff)
                st = fail(v, PC_ERR_UNSUPPORTED, slot,
                          "table %s: field id %u is not in the schema (a newer writer?)", t->name, id);
            continue;
        }
        if (!voff) {
            if (f->kind == FB_UNION && union_tag != 0)
                st = fail(v, PC_ERR_FB_UNION, pos, "table %s: union %s has type %u but no value", t->name,
                          f->name, union_tag);
            if (f->kind == FB_UNION_TYPE) union_tag = 0;
            continue;
        }
        size_t width = f->kind == FB_SCALAR || f->kind == FB_UNION_TYPE ? f->width : 4;
        if (voff < 4 || (size_t)voff + width > tsize) {
            st = fail(v, PC_ERR_FB_VTABLE, slot, "table %s: field %s at %u..%zu outside the table's %u bytes",
                      t->name, f->name, voff, (size_t)voff + width, tsize);
            continue;
        }
        size_t fpos = pos + voff;
        if (fpos % width) {
            st = fail(v, PC_ERR_FB_ALIGN, fpos, "table %s: field %s not %zu-byte aligned", t->name, f->name,
                      width);
            continue;
        }
        path_push(v, f->name, -1);
        st = field_at(v, fpos, f, union_tag);
        path_pop(v);
        if (f->kind == FB_UNION_TYPE) union_tag = v->b[fpos];
    }
    v->depth--;
    return st;
}

pc_status fb_verify(const uint8_t *buf, size_t size, const fb_schema *schema, const fb_verify_options *o,
                    pc_error *err)
{
    fb_verify_options defaults;
    if (!o) {
        fb_verify_options_default(&defaults);
        o = &defaults;
    }
    size_t limit = o->max_size < FB_MAX_SIZE ? o->max_size : FB_MAX_SIZE;
    if (size < 12)
        return pc_error_set(err, PC_ERR_TRUNCATED, "%s: %zu bytes, below the 12 of the smallest buffer",
                            schema->name, size);
    if (size > limit)
        return pc_error_set(err, PC_ERR_BUDGET, "%s: %zu bytes, above the limit of %zu", schema->name, size,
                            limit);
    if (memcmp(buf + 4, schema->identifier, 4) != 0)
        return pc_error_set(err, PC_ERR_FB_IDENTIFIER, "%s: byte 4: identifier \"%.4s\" expected",
                            schema->name, schema->identifier);
    verifier v = {.b = buf, .size = size, .schema = schema, .o = o, .err = err};
    size_t words = (size + 63) / 64; /* size <= 2^31 - 1: no overflow */
    v.claimed = calloc(2 * words, sizeof *v.claimed);
    if (!v.claimed) return pc_error_set(err, PC_ERR_NOMEM, "%s: out of memory verifying", schema->name);
    v.string_start = v.claimed + words;
    size_t root;
    pc_status st = add_obj(&v, 0, 8, OBJ_HEADER, NULL);
    path_push(&v, schema->tables[schema->root].name, -1);
    if (st == PC_OK) st = follow(&v, 0, &root);
    if (st == PC_OK) st = table_at(&v, root, (int16_t)schema->root);
    free(v.claimed);
    free(v.objs);
    return st;
}

uint32_t fb_field_pos(const uint8_t *b, uint32_t t, uint16_t id)
{
    uint32_t vt = (uint32_t)((int64_t)t - (int32_t)fb_u32(b, t));
    uint16_t vsize = fb_u16(b, vt);
    if (4 + 2 * (uint32_t)id + 2 > vsize) return 0;
    uint16_t voff = fb_u16(b, vt + 4 + 2 * (uint32_t)id);
    return voff ? t + voff : 0;
}

uint64_t fb_field_u(const uint8_t *b, uint32_t t, uint16_t id, unsigned width, uint64_t fallback)
{
    uint32_t p = fb_field_pos(b, t, id);
    if (!p) return fallback;
    return width == 1 ? b[p] : width == 2 ? fb_u16(b, p) : width == 4 ? fb_u32(b, p) : fb_u64(b, p);
}

int64_t fb_field_i(const uint8_t *b, uint32_t t, uint16_t id, unsigned width, int64_t fallback)
{
    uint32_t p = fb_field_pos(b, t, id);
    if (!p) return fallback;
    return width == 1   ? (int8_t)b[p]
           : width == 2 ? (int16_t)fb_u16(b, p)
           : width == 4 ? (int32_t)fb_u32(b, p)
                        : (int64_t)fb_u64(b, p);
}

uint32_t fb_field_ref(const uint8_t *b, uint32_t t, uint16_t id)
{
    uint32_t p = fb_field_pos(b, t, id);
    return p ? p + fb_u32(b, p) : 0;
}

const char *fb_field_str(const uint8_t *b, uint32_t t, uint16_t id, uint32_t *len)
{
    uint32_t s = fb_field_ref(b, t, id);
    if (len) *len = s ? fb_u32(b, s) : 0;
    return s ? (const char *)b + s + 4 : NULL;
}
