/* Layer assignment settings: `nhwc(encoder, =head); cpu(post)` maps `layer_ann` annotations to EPs.
 *
 *     settings := rule (';' rule)*        whitespace anywhere is ignored
 *     rule     := EP '(' pattern (',' pattern)* ')'
 *     pattern  := ['='] text              '=': exact match; otherwise a prefix of the annotation
 *
 * The leftmost matching pattern wins (rule order, then pattern order), whatever its kind: this is the issue's
 * rule, not ORT's (which prefers prefix matches over exact ones). An empty string gives no rules. Errors name
 * the 1-based character position in the original text. */
#include <stdlib.h>
#include <string.h>

#include "core/passcheck.h"

typedef struct layer_pattern {
    char *text;
    bool exact;
    const pc_ep *ep;
} layer_pattern;

struct pc_layer_rules {
    uint32_t n, cap;
    layer_pattern *patterns; /* in text order */
};

void pc_layer_rules_free(pc_layer_rules *rules)
{
    if (!rules) return;
    for (uint32_t i = 0; i < rules->n; i++)
        free(rules->patterns[i].text);
    free(rules->patterns);
    free(rules);
}

typedef struct scanner {
    const char *text;
    size_t pos; /* index of the next significant character */
    pc_error *err;
} scanner;

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_special(char c)
{
    return c == '(' || c == ')' || c == ',' || c == ';' || c == '=';
}

static void skip_ws(scanner *s)
{
    while (s->text[s->pos] && is_ws(s->text[s->pos]))
        s->pos++;
}

static char peek(scanner *s)
{
    skip_ws(s);
    return s->text[s->pos];
}

static pc_status bad(scanner *s, size_t pos, const char *what)
{
    return pc_error_set(s->err, PC_ERR_USAGE, "layer assignment '%s': position %zu: %s", s->text, pos + 1,
                        what);
}

/* A word: characters up to a special character or the end, whitespace removed. *start is its first position.
 */
static char *read_word(scanner *s, size_t *start, bool *oom)
{
    *oom = false;
    skip_ws(s);
    *start = s->pos;
    size_t n = 0;
    size_t i = s->pos;
    for (; s->text[i] && !is_special(s->text[i]); i++)
        n += !is_ws(s->text[i]);
    char *w = malloc(n + 1);
    if (!w) {
        *oom = true;
        return NULL;
    }
    size_t k = 0;
    for (size_t j = s->pos; j < i; j++)
        if (!is_ws(s->text[j])) w[k++] = s->text[j];
    w[k] = '\0';
    s->pos = i;
    return w;
}

static pc_status add_pattern(pc_layer_rules *r, char *text, bool exact, const pc_ep *ep)
{
    if (r->n == r->cap) {
        uint32_t cap = r->cap ? r->cap * 2 : 8;
        layer_pattern *grown = cap > r->cap ? realloc(r->patterns, (size_t)cap * sizeof *grown) : NULL;
        if (!grown) return PC_ERR_NOMEM;
        r->patterns = grown;
        r->cap = cap;
    }
    r->patterns[r->n++] = (layer_pattern){text, exact, ep};
    return PC_OK;
}

static pc_status parse_rule(scanner *s, const pc_ep *const *eps, uint32_t n_eps, pc_layer_rules *r)
{
    size_t name_pos;
    bool oom;
    char *name = read_word(s, &name_pos, &oom);
    if (oom) return pc_error_set(s->err, PC_ERR_NOMEM, "out of memory parsing layer assignment");
    if (!name[0]) {
        free(name);
        char c = s->text[s->pos];
        return bad(s, s->pos, c ? "expected an EP name" : "expected an EP name, got the end of the text");
    }
    const pc_ep *ep = NULL;
    for (uint32_t i = 0; i < n_eps && !ep; i++)
        if (strcmp(eps[i]->name, name) == 0) ep = eps[i];
    if (!ep) {
        pc_status st = pc_error_set(
            s->err, PC_ERR_USAGE, "layer assignment '%s': position %zu: unknown EP '%s' (not in the EP list)",
            s->text, name_pos + 1, name);
        free(name);
        return st;
    }
    free(name);
    if (peek(s) != '(') return bad(s, s->pos, "expected '(' after the EP name");
    s->pos++;
    for (;;) {
        bool exact = false;
        size_t pat_pos = s->pos;
        if (peek(s) == '=') {
            pat_pos = s->pos;
            exact = true;
            s->pos++;
        }
        size_t text_pos;
        char *text = read_word(s, &text_pos, &oom);
        if (oom) return pc_error_set(s->err, PC_ERR_NOMEM, "out of memory parsing layer assignment");
        if (!exact) pat_pos = text_pos;
        if (!text[0]) {
            free(text);
            char c = s->text[s->pos];
            if (c == '=') return bad(s, s->pos, "'=' may only start a pattern");
            /* named where it starts: at its '=' when it has one */
            return bad(s, exact ? pat_pos : s->pos,
                       c ? "empty pattern" : "empty pattern, then the end of the text (missing ')')");
        }
        for (uint32_t i = 0; i < r->n; i++)
            if (r->patterns[i].exact == exact && strcmp(r->patterns[i].text, text) == 0) {
                pc_status st =
                    pc_error_set(s->err, PC_ERR_USAGE,
                                 "layer assignment '%s': position %zu: pattern '%s%s' is given twice",
                                 s->text, pat_pos + 1, exact ? "=" : "", text);
                free(text);
                return st;
            }
        if (add_pattern(r, text, exact, ep) != PC_OK) {
            free(text);
            return pc_error_set(s->err, PC_ERR_NOMEM, "out of memory parsing layer assignment");
        }
        char c = peek(s);
        if (c == ',') {
            s->pos++;
            continue;
        }
        if (c == ')') {
            s->pos++;
            return PC_OK;
        }
        if (c == '=') return bad(s, s->pos, "'=' may only start a pattern");
        if (c == '\0') return bad(s, s->pos, "missing ')' (unbalanced parenthesis)");
        return bad(s, s->pos, "expected ',' or ')'"); /* '(' or ';' inside a pattern list */
    }
}

pc_status pc_layer_rules_parse(const char *text, const pc_ep *const *eps, uint32_t n_eps,
                               pc_layer_rules **out, pc_error *err)
{
    *out = NULL;
    if (!text) return pc_error_set(err, PC_ERR_USAGE, "layer assignment: missing text");
    pc_layer_rules *r = calloc(1, sizeof *r);
    if (!r) return pc_error_set(err, PC_ERR_NOMEM, "out of memory parsing layer assignment");
    scanner s = {text, 0, err};
    pc_status st = PC_OK;
    if (peek(&s) != '\0') {
        for (;;) {
            if ((st = parse_rule(&s, eps, n_eps, r)) != PC_OK) break;
            char c = peek(&s);
            if (c == '\0') break;
            if (c != ';') {
                st = bad(&s, s.pos, c == ')' ? "unbalanced ')'" : "expected ';' between rules");
                break;
            }
            size_t semi = s.pos++;
            if (peek(&s) == '\0') {
                st = bad(&s, semi, "a trailing ';' (expected a rule after it)");
                break;
            }
        }
    }
    if (st != PC_OK) {
        pc_layer_rules_free(r);
        return st;
    }
    *out = r;
    return PC_OK;
}

const pc_ep *pc_layer_rules_match(const pc_layer_rules *rules, const char *annotation)
{
    if (!rules || !annotation) return NULL;
    for (uint32_t i = 0; i < rules->n; i++) {
        const layer_pattern *p = &rules->patterns[i];
        /* planted bug (--inject layer-rule-contains): containment instead of prefix; the annotations
         * property's own layer-rule oracle catches it */
        bool hit = p->exact ? strcmp(p->text, annotation) == 0
                   : pc_fault_active(PC_FAULT_LAYER_RULE_CONTAINS)
                       ? strstr(annotation, p->text) != NULL
                       : strncmp(p->text, annotation, strlen(p->text)) == 0;
        if (hit) return p->ep;
    }
    return NULL;
}
