/* The independent EP-file parser (model in ep_file_oracle.h), written from docs/ep.md. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "properties/oracles/ep_file_oracle.h"

enum { EFO_MAX_TOKENS = 64 }; /* more on one line: the oracle does not judge (PC_ERR_UNSUPPORTED) */

typedef struct efo_attr {
    char *name;
    int64_t *values;
    uint32_t n_values;
    bool has_default;
    int64_t def;
} efo_attr;

typedef struct efo_op {
    char *op_type, *domain;
    int64_t lo, hi;
    uint64_t dtypes;
    pc_ep_group group;
    int32_t rank;
    uint32_t first_attr, n_attrs; /* its attrs are attrs[first_attr .. first_attr + n_attrs) */
} efo_op;

typedef struct efo_ep {
    char *name;
    pc_layout layout;
    uint32_t block;
    bool compiles, transpose, standard;
    uint32_t first_op, n_ops; /* its ops are ops[first_op .. first_op + n_ops) */
} efo_ep;

struct pc_efo_file {
    efo_ep *eps;
    efo_op *ops;
    efo_attr *attrs;
    uint32_t n_eps, n_ops, n_attrs, cap_eps, cap_ops, cap_attrs;
};

typedef struct tok {
    const char *s;
    size_t n;
    uint32_t col; /* 1-based byte column of s in its line */
} tok;

/* The part of t from byte i on (its column follows). */
static tok tok_from(tok t, size_t i, size_t n)
{
    return (tok){t.s + i, n, t.col + (uint32_t)i};
}

static bool tok_eq(tok t, const char *s)
{
    return t.n == strlen(s) && memcmp(t.s, s, t.n) == 0;
}

static char *tok_dup(tok t)
{
    char *d = malloc(t.n + 1);
    if (!d) return NULL;
    memcpy(d, t.s, t.n);
    d[t.n] = '\0';
    return d;
}

/* One more element in *arr (capacity *cap, count n); false when out of memory. */
static bool grow(void **arr, uint32_t n, uint32_t *cap, size_t elem)
{
    if (n < *cap) return true;
    uint32_t ncap = *cap ? *cap * 2 : 8;
    size_t bytes;
    if (ncap <= *cap || !pc_size_mul(ncap, elem, &bytes)) return false;
    void *p = realloc(*arr, bytes);
    if (!p) return false;
    *arr = p;
    *cap = ncap;
    return true;
}

/* "LINE:COL: message" (0:0 for the file-level error). */
static pc_status bad(pc_error *err, uint32_t line, uint32_t col, const char *fmt, ...) PC_PRINTF(4, 5);

static pc_status bad(pc_error *err, uint32_t line, uint32_t col, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pc_error_set(err, PC_ERR_USAGE, "%u:%u: %s", line, col, msg);
}

/* An optional '-' and one or more digits, at most 20 characters in all, within int64. */
static bool parse_int(tok t, int64_t *out)
{
    if (t.n > 20) return false;
    size_t i = 0;
    bool neg = t.n > 0 && t.s[0] == '-';
    if (neg) i = 1;
    if (i == t.n) return false;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, mag = 0;
    for (; i < t.n; i++) {
        if (t.s[i] < '0' || t.s[i] > '9') return false;
        uint64_t d = (uint64_t)(t.s[i] - '0');
        if (mag > (limit - d) / 10) return false;
        mag = mag * 10 + d;
    }
    *out = !neg ? (int64_t)mag : mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    return true;
}

static bool name_ok(tok t)
{
    if (t.n == 0) return false;
    for (size_t i = 0; i < t.n; i++) {
        char c = t.s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.'))
            return false;
    }
    return true;
}

static bool dtype_of(tok t, pc_dtype *out)
{
    for (int32_t i = 1; i < (int32_t)PC_DTYPE_COUNT; i++)
        if (pc_dtype_is_valid(i) && tok_eq(t, pc_dtype_name((pc_dtype)i))) {
            *out = (pc_dtype)i;
            return true;
        }
    return false;
}

/* Splits "key=value" at the first '='. */
static bool split_kv(tok t, tok *key, tok *value)
{
    const char *eq = memchr(t.s, '=', t.n);
    if (!eq) return false;
    size_t k = (size_t)(eq - t.s);
    *key = tok_from(t, 0, k);
    *value = tok_from(t, k + 1, t.n - k - 1);
    return true;
}

/* Index of key in keys (NULL-terminated), or -1. */
static int key_index(tok key, const char *const *keys)
{
    for (int i = 0; keys[i]; i++)
        if (tok_eq(key, keys[i])) return i;
    return -1;
}

/* Field token t of a line: key=value with a key from `keys` (NULL-terminated) not given before on the line.
 * *k is the key's index. docs/ep.md: the error reported is the leftmost of its line, so each field is checked
 * whole (form, key, repetition, value) before the next, and the checks relating two fields come last. */
static pc_status next_field(tok t, const char *const *keys, bool *given, int *k, tok *value, uint32_t line,
                            pc_error *err)
{
    tok key;
    if (!split_kv(t, &key, value)) return bad(err, line, t.col, "'%.*s' is not key=value", (int)t.n, t.s);
    *k = key_index(key, keys);
    if (*k < 0) return bad(err, line, key.col, "unknown field '%.*s'", (int)key.n, key.s);
    if (given[*k]) return bad(err, line, key.col, "field '%.*s' given twice", (int)key.n, key.s);
    given[*k] = true;
    return PC_OK;
}

static pc_status yes_no(tok v, bool *out, uint32_t line, pc_error *err)
{
    if (tok_eq(v, "yes"))
        *out = true;
    else if (tok_eq(v, "no"))
        *out = false;
    else
        return bad(err, line, v.col, "expected yes or no, got '%.*s'", (int)v.n, v.s);
    return PC_OK;
}

static bool name_taken(const pc_efo_file *f, const char *const *taken, uint32_t n_taken, tok name)
{
    for (uint32_t i = 0; i < n_taken; i++)
        if (tok_eq(name, taken[i])) return true;
    for (uint32_t i = 0; i < f->n_eps; i++)
        if (tok_eq(name, f->eps[i].name)) return true;
    return false;
}

/* The line's name (token 1); a missing one is reported just past the keyword. */
static pc_status line_name(const tok *t, uint32_t n, bool star_ok, const char *what, uint32_t line,
                           pc_error *err)
{
    if (n < 2) return bad(err, line, t[0].col + (uint32_t)t[0].n, "%s: a name expected", what);
    if (!(star_ok && tok_eq(t[1], "*")) && !name_ok(t[1]))
        return bad(err, line, t[1].col, "%s: a name of letters, digits, '_', '-', '.' expected", what);
    return PC_OK;
}

static pc_status line_ep(pc_efo_file *f, const tok *t, uint32_t n, const char *const *taken, uint32_t n_taken,
                         uint32_t line, pc_error *err)
{
    pc_status st = line_name(t, n, false, "ep", line, err);
    if (st != PC_OK) return st;
    if (name_taken(f, taken, n_taken, t[1]))
        return bad(err, line, t[1].col, "ep: name '%.*s' taken", (int)t[1].n, t[1].s);
    static const char *const keys[] = {"layout", "block", "compiles", "transpose", "standard", NULL};
    bool given[5] = {false};
    uint32_t layout_col = 0, block_col = 0;
    efo_ep e = {.layout = PC_LAYOUT_NCHW, .first_op = f->n_ops};
    for (uint32_t i = 2; i < n; i++) {
        int k;
        tok v;
        if ((st = next_field(t[i], keys, given, &k, &v, line, err)) != PC_OK) return st;
        if (k == 0) {
            layout_col = t[i].col;
            if (tok_eq(v, "nchw"))
                e.layout = PC_LAYOUT_NCHW;
            else if (tok_eq(v, "nhwc"))
                e.layout = PC_LAYOUT_NHWC;
            else if (tok_eq(v, "blocked"))
                e.layout = PC_LAYOUT_BLOCKED;
            else
                return bad(err, line, v.col, "unknown layout");
        } else if (k == 1) {
            block_col = t[i].col;
            int64_t b;
            if (!parse_int(v, &b) || b < 1 || b > 1024)
                return bad(err, line, v.col, "block: 1..1024 expected");
            e.block = (uint32_t)b;
        } else if ((st = yes_no(v,
                                k == 2   ? &e.compiles
                                : k == 3 ? &e.transpose
                                         : &e.standard,
                                line, err)) != PC_OK) {
            return st;
        }
    }
    if (e.layout == PC_LAYOUT_BLOCKED && !given[1])
        return bad(err, line, layout_col, "layout=blocked needs block=");
    if (e.layout != PC_LAYOUT_BLOCKED && given[1])
        return bad(err, line, block_col, "block= goes with layout=blocked only");
    if (!grow((void **)&f->eps, f->n_eps, &f->cap_eps, sizeof *f->eps) || !(e.name = tok_dup(t[1])))
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    f->eps[f->n_eps++] = e;
    return PC_OK;
}

static pc_status opset_range(tok v, int64_t *lo, int64_t *hi, uint32_t line, pc_error *err)
{
    const char *dots = NULL;
    for (size_t i = 0; i + 1 < v.n && !dots; i++)
        if (v.s[i] == '.' && v.s[i + 1] == '.') dots = v.s + i;
    tok a = tok_from(v, 0, dots ? (size_t)(dots - v.s) : v.n);
    if (!parse_int(a, lo) || *lo < 1) return bad(err, line, v.col, "opset: a minimum >= 1 expected");
    if (!dots) {
        *hi = *lo;
        return PC_OK;
    }
    tok b = tok_from(v, a.n + 2, v.n - a.n - 2);
    if (b.n == 0) {
        *hi = INT64_MAX;
        return PC_OK;
    }
    if (!parse_int(b, hi) || *hi < 1) return bad(err, line, b.col, "opset: a bad maximum");
    if (*lo > *hi) return bad(err, line, v.col, "opset: minimum > maximum");
    return PC_OK;
}

static pc_status type_list(tok v, uint64_t *dtypes, uint32_t line, pc_error *err)
{
    *dtypes = 0;
    size_t start = 0;
    for (size_t i = 0; i <= v.n; i++) {
        if (i < v.n && v.s[i] != ',') continue;
        tok name = tok_from(v, start, i - start);
        pc_dtype dt;
        if (!dtype_of(name, &dt))
            return bad(err, line, name.col, "types: '%.*s' is not a type", (int)name.n, name.s);
        if (*dtypes & (1ull << dt))
            return bad(err, line, name.col, "types: '%.*s' twice", (int)name.n, name.s);
        *dtypes |= 1ull << dt;
        start = i + 1;
    }
    return PC_OK;
}

static pc_status line_op(pc_efo_file *f, const tok *t, uint32_t n, uint32_t line, pc_error *err)
{
    if (f->n_eps == 0) return bad(err, line, t[0].col, "op before any ep");
    pc_status st = line_name(t, n, true, "op", line, err);
    if (st != PC_OK) return st;
    static const char *const keys[] = {"domain", "opset", "types", "group", "rank", NULL};
    bool given[5] = {false};
    efo_op o = {.lo = 1, .hi = INT64_MAX, .first_attr = f->n_attrs};
    tok domain = {"", 0, 0};
    for (uint32_t i = 2; i < n; i++) {
        int k;
        tok v;
        if ((st = next_field(t[i], keys, given, &k, &v, line, err)) != PC_OK) return st;
        if (k == 0)
            domain = tok_eq(v, "ai.onnx") ? (tok){"", 0, 0} : v;
        else if (k == 1)
            st = opset_range(v, &o.lo, &o.hi, line, err);
        else if (k == 2)
            st = type_list(v, &o.dtypes, line, err);
        else if (k == 4) {
            int64_t r;
            if (!parse_int(v, &r) || r < 1 || r > PC_MAX_RANK)
                st = bad(err, line, v.col, "rank: not in 1..%d", PC_MAX_RANK);
            else
                o.rank = (int32_t)r;
        } else if (tok_eq(v, "dq-relu-q"))
            o.group = PC_EP_GROUP_DQ_RELU_Q;
        else
            st = bad(err, line, v.col, "group: '%.*s' is not a group", (int)v.n, v.s);
        if (st != PC_OK) return st;
    }
    if (!grow((void **)&f->ops, f->n_ops, &f->cap_ops, sizeof *f->ops) || !(o.op_type = tok_dup(t[1])) ||
        !(o.domain = tok_dup(domain))) {
        free(o.op_type);
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    }
    f->ops[f->n_ops++] = o;
    f->eps[f->n_eps - 1].n_ops++;
    return PC_OK;
}

static pc_status value_list(tok v, efo_attr *a, uint32_t line, pc_error *err)
{
    uint32_t cap = 0;
    size_t start = 0;
    for (size_t i = 0; i <= v.n; i++) {
        if (i < v.n && v.s[i] != ',') continue;
        int64_t x;
        tok num = tok_from(v, start, i - start);
        if (!parse_int(num, &x)) return bad(err, line, num.col, "values: a bad number");
        if (!grow((void **)&a->values, a->n_values, &cap, sizeof *a->values))
            return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
        a->values[a->n_values++] = x;
        start = i + 1;
    }
    return PC_OK;
}

static pc_status line_attr(pc_efo_file *f, const tok *t, uint32_t n, uint32_t line, pc_error *err)
{
    efo_op *op = f->n_eps && f->eps[f->n_eps - 1].n_ops ? &f->ops[f->n_ops - 1] : NULL;
    if (!op) return bad(err, line, t[0].col, "attr before any op");
    pc_status st = line_name(t, n, false, "attr", line, err);
    if (st != PC_OK) return st;
    for (uint32_t i = 0; i < op->n_attrs; i++)
        if (tok_eq(t[1], f->attrs[op->first_attr + i].name))
            return bad(err, line, t[1].col, "attr: constrained twice");
    static const char *const keys[] = {"values", "default", NULL};
    bool given[2] = {false};
    efo_attr a = {0};
    for (uint32_t i = 2; i < n && st == PC_OK; i++) {
        int k;
        tok v;
        if ((st = next_field(t[i], keys, given, &k, &v, line, err)) != PC_OK) break;
        if (k == 0)
            st = value_list(v, &a, line, err);
        else if (!parse_int(v, &a.def))
            st = bad(err, line, v.col, "default: a bad number");
    }
    if (st == PC_OK && !given[0]) st = bad(err, line, t[1].col, "attr: values= is required");
    if (st != PC_OK) {
        free(a.values);
        return st;
    }
    a.has_default = given[1];
    if (!grow((void **)&f->attrs, f->n_attrs, &f->cap_attrs, sizeof *f->attrs) || !(a.name = tok_dup(t[1]))) {
        free(a.values);
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    }
    f->attrs[f->n_attrs++] = a;
    op->n_attrs++;
    return PC_OK;
}

pc_status pc_efo_parse(const char *text, const char *const *taken, uint32_t n_taken, pc_efo_file **out,
                       pc_error *err)
{
    *out = NULL;
    pc_efo_file *f = calloc(1, sizeof *f);
    if (!f) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    pc_status st = PC_OK;
    uint32_t line = 0;
    for (const char *p = text ? text : ""; st == PC_OK && *p;) {
        line++;
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len && p[len - 1] == '\r') len--; /* CRLF files */
        const char *hash = memchr(p, '#', len);
        if (hash) len = (size_t)(hash - p);
        tok t[EFO_MAX_TOKENS];
        uint32_t n = 0;
        for (size_t i = 0; i < len && st == PC_OK;) {
            while (i < len && (p[i] == ' ' || p[i] == '\t'))
                i++;
            size_t s = i;
            while (i < len && p[i] != ' ' && p[i] != '\t')
                i++;
            if (i == s) break;
            if (n == EFO_MAX_TOKENS) st = pc_error_set(err, PC_ERR_UNSUPPORTED, "%u: too many fields", line);
            if (st == PC_OK) t[n++] = (tok){p + s, i - s, (uint32_t)s + 1};
        }
        if (st == PC_OK && n > 0) {
            if (tok_eq(t[0], "ep"))
                st = line_ep(f, t, n, taken, n_taken, line, err);
            else if (tok_eq(t[0], "op"))
                st = line_op(f, t, n, line, err);
            else if (tok_eq(t[0], "attr"))
                st = line_attr(f, t, n, line, err);
            else
                st = bad(err, line, t[0].col, "unknown line kind '%.*s'", (int)t[0].n, t[0].s);
        }
        p = end ? end + 1 : p + strlen(p);
    }
    if (st == PC_OK && f->n_eps == 0) st = bad(err, 0, 0, "no ep line");
    if (st != PC_OK) {
        pc_efo_free(f);
        return st;
    }
    *out = f;
    return PC_OK;
}

void pc_efo_free(pc_efo_file *f)
{
    if (!f) return;
    for (uint32_t i = 0; i < f->n_eps; i++)
        free(f->eps[i].name);
    for (uint32_t i = 0; i < f->n_ops; i++) {
        free(f->ops[i].op_type);
        free(f->ops[i].domain);
    }
    for (uint32_t i = 0; i < f->n_attrs; i++) {
        free(f->attrs[i].name);
        free(f->attrs[i].values);
    }
    free(f->eps);
    free(f->ops);
    free(f->attrs);
    free(f);
}

uint32_t pc_efo_ep_count(const pc_efo_file *f)
{
    return f ? f->n_eps : 0;
}

static bool differs(char *why, size_t size, const char *fmt, ...) PC_PRINTF(3, 4);

static bool differs(char *why, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
    return false;
}

static bool same_attr(const efo_attr *a, const pc_ep_attr_rule *r, const char *where, char *why, size_t size)
{
    if (strcmp(a->name, r->name) != 0)
        return differs(why, size, "%s: attr '%s' read as '%s'", where, a->name, r->name);
    if (a->n_values != r->n_values)
        return differs(why, size, "%s: attr '%s' has %u values, core %u", where, a->name, a->n_values,
                       r->n_values);
    for (uint32_t i = 0; i < a->n_values; i++)
        if (a->values[i] != r->values[i])
            return differs(why, size, "%s: attr '%s' value %u differs", where, a->name, i);
    if (a->has_default != r->has_default || (a->has_default && a->def != r->default_value))
        return differs(why, size, "%s: attr '%s' default differs", where, a->name);
    return true;
}

bool pc_efo_same(const pc_efo_file *f, const pc_ep_registry *reg, char *why, size_t size)
{
    for (uint32_t i = 0; i < f->n_eps; i++) {
        const efo_ep *e = &f->eps[i];
        const pc_ep *c = pc_ep_registry_find(reg, e->name);
        if (!c) return differs(why, size, "ep '%s' is not registered", e->name);
        if (c->layout != e->layout || (e->layout == PC_LAYOUT_BLOCKED && c->block_size != e->block))
            return differs(why, size, "ep '%s': layout or block differs", e->name);
        if (c->compiles != e->compiles || c->runs_transpose != e->transpose ||
            c->all_standard_ops != e->standard)
            return differs(why, size, "ep '%s': compiles, transpose or standard differs", e->name);
        if (c->n_ops != e->n_ops)
            return differs(why, size, "ep '%s': %u op rows, core has %u", e->name, e->n_ops, c->n_ops);
        for (uint32_t k = 0; k < e->n_ops; k++) {
            const efo_op *o = &f->ops[e->first_op + k];
            const pc_ep_op *co = &c->ops[k];
            char where[160];
            snprintf(where, sizeof where, "ep '%s' op row %u (%s)", e->name, k + 1, o->op_type);
            if (strcmp(o->op_type, co->op_type) != 0 || strcmp(o->domain, co->domain) != 0)
                return differs(why, size, "%s: read as %s:%s", where, co->domain, co->op_type);
            if (o->lo != co->opset_min || o->hi != co->opset_max)
                return differs(why, size, "%s: opset %lld..%lld, core %lld..%lld", where, (long long)o->lo,
                               (long long)o->hi, (long long)co->opset_min, (long long)co->opset_max);
            if (o->dtypes != co->dtypes) return differs(why, size, "%s: types differ", where);
            if (o->group != co->group) return differs(why, size, "%s: groups differ", where);
            if (o->rank != co->rank) return differs(why, size, "%s: ranks differ", where);
            if (o->n_attrs != co->n_attr_rules)
                return differs(why, size, "%s: %u attr rules, core %u", where, o->n_attrs, co->n_attr_rules);
            for (uint32_t a = 0; a < o->n_attrs; a++)
                if (!same_attr(&f->attrs[o->first_attr + a], &co->attr_rules[a], where, why, size))
                    return false;
        }
    }
    return true;
}
