/* EP description files (docs/ep.md): line-based, strict. Three line kinds, fields are key=value tokens:
 *
 *     ep NAME [layout=nchw|nhwc|blocked] [block=N] [compiles=yes|no] [transpose=yes|no] [standard=yes|no]
 *     op OP_TYPE|* [domain=D] [opset=A..B|A..|A] [types=float,int8,...] [rank=R] [group=dq-relu-q]
 *     attr NAME values=V,V,... [default=V]
 *
 * An `op` line belongs to the last `ep`, an `attr` line to the last `op`. '#' starts a comment. Every error
 * names file:line:column and the field; the whole file is parsed and validated before any EP is registered.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ep/ep_internal.h"

enum { MAX_TOKENS = 16 };

typedef struct token {
    const char *s;
    size_t len;
    uint32_t col; /* 1-based */
} token;

typedef struct parser {
    pc_ep_registry *reg;
    const char *source;
    uint32_t line;
    pc_error *err;
    /* EPs parsed so far (arena), and the one being filled */
    pc_ep **eps;
    uint32_t n_eps, cap_eps;
    pc_ep *cur_ep;
    uint32_t cap_ops;
    pc_ep_op *cur_op; /* last op of cur_ep */
    uint32_t cap_rules;
    /* where the current EP's layout and block fields were given, for the messages */
    uint32_t layout_col, block_col;
} parser;

static pc_status fail(parser *p, uint32_t col, const char *fmt, ...) PC_PRINTF(3, 4);

static pc_status fail(parser *p, uint32_t col, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pc_error_set(p->err, PC_ERR_USAGE, "%s:%u:%u: %s", p->source, p->line, col, msg);
}

static pc_status nomem(parser *p)
{
    return pc_error_set(p->err, PC_ERR_NOMEM, "%s:%u: out of memory", p->source, p->line);
}

static bool tok_is(const token *t, const char *s)
{
    return t->len == strlen(s) && memcmp(t->s, s, t->len) == 0;
}

/* Grows an arena array by doubling (the old block stays in the arena: bounded waste, no frees). */
static void *arena_grow(pc_arena *a, void *old, uint32_t n, uint32_t *cap, size_t elem)
{
    if (n < *cap) return old;
    uint32_t ncap = *cap ? *cap * 2 : 4;
    if (ncap <= *cap) return NULL;
    void *grown = pc_arena_array(a, ncap, elem);
    if (!grown) return NULL;
    if (old && n) memcpy(grown, old, (size_t)n * elem);
    *cap = ncap;
    return grown;
}

static bool parse_i64(const char *s, size_t len, int64_t *out)
{
    if (len == 0 || len > 20) return false;
    char buf[24];
    memcpy(buf, s, len);
    buf[len] = '\0';
    size_t i = buf[0] == '-' ? 1 : 0;
    if (i == len) return false;
    for (size_t k = i; k < len; k++)
        if (buf[k] < '0' || buf[k] > '9') return false;
    errno = 0;
    char *end;
    long long v = strtoll(buf, &end, 10);
    if (errno || *end) return false;
    *out = v;
    return true;
}

/* Names usable inside "--ep a,b" and layer rules: no separators, no spaces. */
static bool valid_name(const token *t)
{
    for (size_t i = 0; i < t->len; i++) {
        char c = t->s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                  c == '-' || c == '.';
        if (!ok) return false;
    }
    return t->len > 0;
}

/* Splits "key=value"; false when there is no '='. */
static bool split_kv(const token *t, token *key, token *value)
{
    const char *eq = memchr(t->s, '=', t->len);
    if (!eq) return false;
    *key = (token){t->s, (size_t)(eq - t->s), t->col};
    *value = (token){eq + 1, t->len - (size_t)(eq - t->s) - 1, t->col + (uint32_t)(eq - t->s) + 1};
    return true;
}

static pc_status parse_bool(parser *p, const token *key, const token *v, bool *out)
{
    if (tok_is(v, "yes"))
        *out = true;
    else if (tok_is(v, "no"))
        *out = false;
    else
        return fail(p, v->col, "field '%.*s': expected yes or no, got '%.*s'", (int)key->len, key->s,
                    (int)v->len, v->s);
    return PC_OK;
}

/* Rejects a key given twice on one line. seen holds one bit per key index. */
static pc_status check_once(parser *p, const token *key, unsigned *seen, unsigned bit)
{
    if (*seen & bit) return fail(p, key->col, "field '%.*s' given twice", (int)key->len, key->s);
    *seen |= bit;
    return PC_OK;
}

static pc_status parse_ep_line(parser *p, const token *tk, uint32_t n)
{
    pc_status st = PC_OK;
    if (n < 2) return fail(p, tk[0].col + 2, "field 'name': missing EP name");
    const token *name = &tk[1];
    if (memchr(name->s, '=', name->len))
        return fail(p, name->col, "field 'name': missing EP name before fields");
    if (!valid_name(name))
        return fail(p, name->col,
                    "field 'name': '%.*s' has characters other than letters, digits, '_', '-', '.'",
                    (int)name->len, name->s);
    char *nm = pc_arena_strndup(&p->reg->arena, name->s, name->len);
    if (!nm) return nomem(p);
    if (pc_ep_registry_find(p->reg, nm))
        return fail(p, name->col, "field 'name': EP '%s' already exists", nm);
    for (uint32_t i = 0; i < p->n_eps; i++)
        if (strcmp(p->eps[i]->name, nm) == 0)
            return fail(p, name->col, "field 'name': EP '%s' is defined twice in this file", nm);
    pc_ep *ep = pc_arena_alloc(&p->reg->arena, sizeof *ep);
    pc_ep **grown = arena_grow(&p->reg->arena, p->eps, p->n_eps, &p->cap_eps, sizeof *p->eps);
    if (!ep || !grown) return nomem(p);
    p->eps = grown;
    ep->name = nm;
    p->cur_ep = ep;
    p->cur_op = NULL;
    p->cap_ops = 0;
    p->layout_col = p->block_col = 0;
    unsigned seen = 0;
    for (uint32_t i = 2; i < n; i++) {
        token key, v;
        if (!split_kv(&tk[i], &key, &v))
            return fail(p, tk[i].col, "expected key=value, got '%.*s'", (int)tk[i].len, tk[i].s);
        if (tok_is(&key, "layout")) {
            if ((st = check_once(p, &key, &seen, 1u)) != PC_OK) return st;
            pc_layout l = PC_LAYOUT_COUNT;
            for (int k = 0; k < PC_LAYOUT_COUNT; k++)
                if (tok_is(&v, pc_layout_name((pc_layout)k))) l = (pc_layout)k;
            if (l == PC_LAYOUT_COUNT)
                return fail(p, v.col, "field 'layout': expected nchw, nhwc or blocked, got '%.*s'",
                            (int)v.len, v.s);
            ep->layout = l;
            p->layout_col = key.col;
        } else if (tok_is(&key, "block")) {
            if ((st = check_once(p, &key, &seen, 2u)) != PC_OK) return st;
            int64_t b;
            /* planted bug (--inject ep-file-block-bound): the bound off by one */
            int64_t max_block = pc_fault_active(PC_FAULT_EP_FILE_BLOCK_BOUND) ? 1025 : 1024;
            if (!parse_i64(v.s, v.len, &b) || b < 1 || b > max_block)
                return fail(p, v.col, "field 'block': expected a number in 1..1024, got '%.*s'", (int)v.len,
                            v.s);
            ep->block_size = (uint32_t)b;
            p->block_col = key.col;
        } else if (tok_is(&key, "compiles")) {
            if ((st = check_once(p, &key, &seen, 4u)) != PC_OK) return st;
            if ((st = parse_bool(p, &key, &v, &ep->compiles)) != PC_OK) return st;
        } else if (tok_is(&key, "transpose")) {
            if ((st = check_once(p, &key, &seen, 8u)) != PC_OK) return st;
            if ((st = parse_bool(p, &key, &v, &ep->runs_transpose)) != PC_OK) return st;
        } else if (tok_is(&key, "standard")) {
            if ((st = check_once(p, &key, &seen, 16u)) != PC_OK) return st;
            if ((st = parse_bool(p, &key, &v, &ep->all_standard_ops)) != PC_OK) return st;
        } else {
            return fail(p, key.col,
                        "unknown field '%.*s' on an ep line (known: layout, block, compiles, transpose, "
                        "standard)",
                        (int)key.len, key.s);
        }
    }
    /* both fields are on this line: checked here, so the first error reported is the first in the file */
    if (ep->layout == PC_LAYOUT_BLOCKED && ep->block_size == 0)
        return fail(p, p->layout_col, "field 'layout': layout=blocked needs block=N");
    if (ep->layout != PC_LAYOUT_BLOCKED && p->block_col)
        return fail(p, p->block_col, "field 'block': only meaningful with layout=blocked");
    p->eps[p->n_eps++] = ep;
    return PC_OK;
}

static pc_status parse_opset(parser *p, const token *v, pc_ep_op *op)
{
    const char *dots = NULL;
    for (size_t i = 0; i + 1 < v->len && !dots; i++)
        if (v->s[i] == '.' && v->s[i + 1] == '.') dots = v->s + i;
    size_t a_len = dots ? (size_t)(dots - v->s) : v->len;
    if (!parse_i64(v->s, a_len, &op->opset_min) || op->opset_min < 1)
        return fail(p, v->col, "field 'opset': expected A..B, A.. or A with A >= 1, got '%.*s'", (int)v->len,
                    v->s);
    if (!dots) {
        op->opset_max = op->opset_min;
        return PC_OK;
    }
    const char *b = dots + 2;
    size_t b_len = v->len - a_len - 2;
    uint32_t b_col = v->col + (uint32_t)(a_len + 2);
    if (b_len == 0) {
        op->opset_max = INT64_MAX;
        return PC_OK;
    }
    if (!parse_i64(b, b_len, &op->opset_max) || op->opset_max < 1)
        return fail(p, b_col, "field 'opset': bad maximum '%.*s'", (int)b_len, b);
    if (op->opset_min > op->opset_max)
        return fail(p, v->col, "field 'opset': minimum %lld > maximum %lld", (long long)op->opset_min,
                    (long long)op->opset_max);
    return PC_OK;
}

static pc_status parse_types(parser *p, const token *v, uint64_t *mask)
{
    *mask = 0;
    size_t i = 0;
    while (i <= v->len) {
        size_t j = i;
        while (j < v->len && v->s[j] != ',')
            j++;
        pc_dtype t;
        if (j == i) return fail(p, v->col + (uint32_t)i, "field 'types': empty type name");
        if (!pc_ep_dtype_from_name(v->s + i, j - i, &t))
            return fail(p, v->col + (uint32_t)i, "field 'types': unknown element type '%.*s'", (int)(j - i),
                        v->s + i);
        if (*mask >> t & 1u)
            return fail(p, v->col + (uint32_t)i, "field 'types': '%.*s' listed twice", (int)(j - i),
                        v->s + i);
        *mask |= UINT64_C(1) << t;
        i = j + 1;
    }
    return PC_OK;
}

static pc_status parse_op_line(parser *p, const token *tk, uint32_t n)
{
    if (!p->cur_ep) return fail(p, tk[0].col, "an 'op' line before any 'ep' line");
    if (n < 2 || memchr(tk[1].s, '=', tk[1].len))
        return fail(p, n < 2 ? tk[0].col + 2 : tk[1].col, "field 'op': missing op type");
    if (!tok_is(&tk[1], "*") && !valid_name(&tk[1]))
        return fail(p, tk[1].col, "field 'op': bad op type '%.*s'", (int)tk[1].len, tk[1].s);
    pc_ep *ep = p->cur_ep;
    pc_ep_op *ops = arena_grow(&p->reg->arena, (void *)ep->ops, ep->n_ops, &p->cap_ops, sizeof *ops);
    if (!ops) return nomem(p);
    ep->ops = ops;
    pc_ep_op *op = &ops[ep->n_ops];
    memset(op, 0, sizeof *op);
    op->domain = "";
    op->op_type = pc_arena_strndup(&p->reg->arena, tk[1].s, tk[1].len);
    if (!op->op_type) return nomem(p);
    op->opset_min = 1;
    op->opset_max = INT64_MAX;
    unsigned seen = 0;
    pc_status st;
    for (uint32_t i = 2; i < n; i++) {
        token key, v;
        if (!split_kv(&tk[i], &key, &v))
            return fail(p, tk[i].col, "expected key=value, got '%.*s'", (int)tk[i].len, tk[i].s);
        if (tok_is(&key, "domain")) {
            if ((st = check_once(p, &key, &seen, 1u)) != PC_OK) return st;
            if (tok_is(&v, "ai.onnx")) v.len = 0; /* the default domain has two spellings */
            op->domain = pc_arena_strndup(&p->reg->arena, v.s, v.len);
            if (!op->domain) return nomem(p);
        } else if (tok_is(&key, "opset")) {
            if ((st = check_once(p, &key, &seen, 2u)) != PC_OK) return st;
            if ((st = parse_opset(p, &v, op)) != PC_OK) return st;
        } else if (tok_is(&key, "types")) {
            if ((st = check_once(p, &key, &seen, 4u)) != PC_OK) return st;
            if ((st = parse_types(p, &v, &op->dtypes)) != PC_OK) return st;
        } else if (tok_is(&key, "rank")) {
            if ((st = check_once(p, &key, &seen, 16u)) != PC_OK) return st;
            int64_t r;
            if (!parse_i64(v.s, v.len, &r) || r < 1 || r > PC_MAX_RANK)
                return fail(p, v.col, "field 'rank': expected 1..%d, got '%.*s'", PC_MAX_RANK, (int)v.len,
                            v.s);
            op->rank = (int32_t)r;
        } else if (tok_is(&key, "group")) {
            if ((st = check_once(p, &key, &seen, 8u)) != PC_OK) return st;
            if (!tok_is(&v, "dq-relu-q"))
                return fail(p, v.col, "field 'group': expected dq-relu-q, got '%.*s'", (int)v.len, v.s);
            op->group = PC_EP_GROUP_DQ_RELU_Q;
        } else {
            return fail(p, key.col,
                        "unknown field '%.*s' on an op line (known: domain, opset, types, rank, group)",
                        (int)key.len, key.s);
        }
    }
    ep->n_ops++;
    p->cur_op = op;
    p->cap_rules = 0;
    return PC_OK;
}

/* Counts comma-separated int64s; fills values when non-NULL. */
static pc_status parse_int_list(parser *p, const token *key, const token *v, int64_t *values, uint32_t *n)
{
    uint32_t k = 0;
    size_t i = 0;
    while (i <= v->len) {
        size_t j = i;
        while (j < v->len && v->s[j] != ',')
            j++;
        int64_t x;
        if (!parse_i64(v->s + i, j - i, &x))
            return fail(p, v->col + (uint32_t)i, "field '%.*s': bad number '%.*s'", (int)key->len, key->s,
                        (int)(j - i), v->s + i);
        if (values) values[k] = x;
        k++;
        i = j + 1;
    }
    *n = k;
    return PC_OK;
}

static pc_status parse_attr_line(parser *p, const token *tk, uint32_t n)
{
    if (!p->cur_op) return fail(p, tk[0].col, "an 'attr' line before any 'op' line of its EP");
    if (n < 2 || memchr(tk[1].s, '=', tk[1].len))
        return fail(p, n < 2 ? tk[0].col + 4 : tk[1].col, "field 'attr': missing attribute name");
    if (!valid_name(&tk[1]))
        return fail(p, tk[1].col, "field 'attr': bad attribute name '%.*s'", (int)tk[1].len, tk[1].s);
    pc_ep_op *op = p->cur_op;
    for (uint32_t r = 0; r < op->n_attr_rules; r++)
        if (tok_is(&tk[1], op->attr_rules[r].name))
            return fail(p, tk[1].col, "field 'attr': '%s' constrained twice for op %s",
                        op->attr_rules[r].name, op->op_type);
    pc_ep_attr_rule *rules =
        arena_grow(&p->reg->arena, (void *)op->attr_rules, op->n_attr_rules, &p->cap_rules, sizeof *rules);
    if (!rules) return nomem(p);
    op->attr_rules = rules;
    pc_ep_attr_rule *rule = &rules[op->n_attr_rules];
    memset(rule, 0, sizeof *rule);
    rule->name = pc_arena_strndup(&p->reg->arena, tk[1].s, tk[1].len);
    if (!rule->name) return nomem(p);
    unsigned seen = 0;
    pc_status st;
    for (uint32_t i = 2; i < n; i++) {
        token key, v;
        if (!split_kv(&tk[i], &key, &v))
            return fail(p, tk[i].col, "expected key=value, got '%.*s'", (int)tk[i].len, tk[i].s);
        if (tok_is(&key, "values")) {
            if ((st = check_once(p, &key, &seen, 1u)) != PC_OK) return st;
            uint32_t count = 0;
            if ((st = parse_int_list(p, &key, &v, NULL, &count)) != PC_OK) return st;
            int64_t *vals = pc_arena_array(&p->reg->arena, count, sizeof *vals);
            if (!vals) return nomem(p);
            if ((st = parse_int_list(p, &key, &v, vals, &count)) != PC_OK) return st;
            rule->values = vals;
            rule->n_values = count;
        } else if (tok_is(&key, "default")) {
            if ((st = check_once(p, &key, &seen, 2u)) != PC_OK) return st;
            if (!parse_i64(v.s, v.len, &rule->default_value))
                return fail(p, v.col, "field 'default': bad number '%.*s'", (int)v.len, v.s);
            rule->has_default = true;
        } else {
            return fail(p, key.col, "unknown field '%.*s' on an attr line (known: values, default)",
                        (int)key.len, key.s);
        }
    }
    if (!(seen & 1u))
        return fail(p, tk[1].col, "field 'values': missing (attr %s needs values=V,...)", rule->name);
    op->n_attr_rules++;
    return PC_OK;
}

static pc_status parse_line(parser *p, const char *line, size_t len)
{
    token tk[MAX_TOKENS];
    uint32_t n = 0;
    size_t i = 0;
    while (i < len) {
        while (i < len && (line[i] == ' ' || line[i] == '\t'))
            i++;
        if (i == len || line[i] == '#') break;
        size_t j = i;
        while (j < len && line[j] != ' ' && line[j] != '\t' && line[j] != '#')
            j++;
        if (n == MAX_TOKENS) return fail(p, (uint32_t)i + 1, "too many fields (at most %d)", MAX_TOKENS);
        tk[n++] = (token){line + i, j - i, (uint32_t)i + 1};
        i = j;
    }
    if (n == 0) return PC_OK;
    if (tok_is(&tk[0], "ep")) return parse_ep_line(p, tk, n);
    if (tok_is(&tk[0], "op")) return parse_op_line(p, tk, n);
    if (tok_is(&tk[0], "attr")) return parse_attr_line(p, tk, n);
    return fail(p, tk[0].col, "unknown line kind '%.*s' (expected ep, op or attr)", (int)tk[0].len, tk[0].s);
}

pc_status pc_ep_registry_load_text(pc_ep_registry *reg, const char *text, const char *source_name,
                                   pc_error *err)
{
    parser p = {.reg = reg, .source = source_name ? source_name : "<text>", .err = err};
    if (!text) return pc_error_set(err, PC_ERR_USAGE, "%s: no text", p.source);
    const char *s = text;
    pc_status st = PC_OK;
    while (*s && st == PC_OK) {
        p.line++;
        const char *end = strchr(s, '\n');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        size_t l = len;
        if (l && s[l - 1] == '\r') l--;
        st = parse_line(&p, s, l);
        s += len + (end ? 1 : 0);
    }
    if (st == PC_OK && p.n_eps == 0)
        st = pc_error_set(err, PC_ERR_USAGE, "%s: no 'ep' line: the file defines no EP", p.source);
    if (st != PC_OK) return st;
    return pc_ep_registry_add(reg, (const pc_ep *const *)p.eps, p.n_eps, err);
}

/* An EP description is a few kilobytes; the limit keeps a wrong file (a model, a log) from being read whole.
 * Kept as the reader always had it: a file is refused from 32 MiB - 1 bytes on. */
enum { EP_FILE_MAX_BYTES = (1 << 25) - 2 };

pc_status pc_ep_registry_load_file(pc_ep_registry *reg, const char *path, pc_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    pc_status st = pc_file_read_all(path, EP_FILE_MAX_BYTES, &buf, &len, err);
    if (st == PC_ERR_BUDGET)
        st = pc_error_set(err, PC_ERR_BUDGET, "%s: 32 MiB or larger: not an EP description", path);
    if (st == PC_OK) {
        const char *nul = memchr(buf, '\0', len);
        if (nul)
            st = pc_error_set(err, PC_ERR_USAGE, "%s: NUL byte at offset %zu: not a text file", path,
                              (size_t)(nul - buf));
        else
            st = pc_ep_registry_load_text(reg, buf, path, err);
    }
    free(buf);
    return st;
}
