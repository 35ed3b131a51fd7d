/* The independent layer-rule oracle (layer_rules_oracle.h): written from docs/ep.md's grammar. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "properties/oracles/layer_rules_oracle.h"

typedef struct lro_pattern {
    const char *ep; /* borrowed from the caller's ep_names */
    bool exact;
    char *text;
} lro_pattern;

struct pc_lro_rules {
    lro_pattern *patterns; /* every pattern of every rule, in text order */
    uint32_t n;
};

void pc_lro_free(pc_lro_rules *rules)
{
    if (!rules) return;
    for (uint32_t i = 0; i < rules->n; i++)
        free(rules->patterns[i].text);
    free(rules->patterns);
    free(rules);
}

uint32_t pc_lro_pattern_count(const pc_lro_rules *rules)
{
    return rules ? rules->n : 0;
}

const char *pc_lro_ep_for(const pc_lro_rules *rules, const char *annotation)
{
    if (!rules || !annotation) return NULL;
    for (uint32_t i = 0; i < rules->n; i++) {
        const lro_pattern *p = &rules->patterns[i];
        bool hit =
            p->exact ? strcmp(p->text, annotation) == 0 : strncmp(p->text, annotation, strlen(p->text)) == 0;
        if (hit) return p->ep;
    }
    return NULL;
}

/* The text without whitespace, with each kept character's 1-based position in the original. */
typedef struct lro_scan {
    char *s;
    size_t *pos;
    size_t n, i;
    size_t end_pos; /* position just past the original text */
} lro_scan;

static size_t scan_pos(const lro_scan *sc)
{
    return sc->i < sc->n ? sc->pos[sc->i] : sc->end_pos;
}

static pc_status add_pattern(pc_lro_rules *r, const char *ep, bool exact, const char *text, size_t len,
                             size_t at, pc_error *err)
{
    for (uint32_t i = 0; i < r->n; i++)
        if (r->patterns[i].exact == exact && strlen(r->patterns[i].text) == len &&
            memcmp(r->patterns[i].text, text, len) == 0)
            return pc_error_set(err, PC_ERR_USAGE,
                                "layer assignment: position %zu: pattern '%s%.*s' given twice", at,
                                exact ? "=" : "", (int)len, text);
    lro_pattern *grown = realloc(r->patterns, (r->n + 1) * sizeof *grown);
    if (!grown) return pc_error_set(err, PC_ERR_NOMEM, "layer assignment: out of memory");
    r->patterns = grown;
    char *copy = malloc(len + 1);
    if (!copy) return pc_error_set(err, PC_ERR_NOMEM, "layer assignment: out of memory");
    memcpy(copy, text, len);
    copy[len] = 0;
    r->patterns[r->n++] = (lro_pattern){.ep = ep, .exact = exact, .text = copy};
    return PC_OK;
}

/* rule := EP '(' pattern (',' pattern)* ')' at sc->i */
static pc_status parse_rule(lro_scan *sc, const char *const *ep_names, uint32_t n_eps, pc_lro_rules *r,
                            pc_error *err)
{
    size_t start = sc->i;
    while (sc->i < sc->n && !strchr("(),;=", sc->s[sc->i]))
        sc->i++;
    size_t name_len = sc->i - start;
    /* the leftmost error is the one reported: a bad name before a missing '(' */
    const char *ep = NULL;
    for (uint32_t k = 0; k < n_eps && !ep; k++)
        if (strlen(ep_names[k]) == name_len && memcmp(ep_names[k], sc->s + start, name_len) == 0)
            ep = ep_names[k];
    if (!ep && name_len > 0)
        return pc_error_set(err, PC_ERR_USAGE,
                            "layer assignment: position %zu: EP '%.*s' is not in the EP list", sc->pos[start],
                            (int)name_len, sc->s + start);
    if (sc->i >= sc->n || sc->s[sc->i] != '(')
        return pc_error_set(err, PC_ERR_USAGE,
                            "layer assignment: position %zu: expected '(' after the EP name", scan_pos(sc));
    if (!ep)
        return pc_error_set(err, PC_ERR_USAGE, "layer assignment: position %zu: EP '' is not in the EP list",
                            scan_pos(sc));
    sc->i++; /* '(' */
    for (;;) {
        size_t at = scan_pos(sc);
        bool exact = sc->i < sc->n && sc->s[sc->i] == '=';
        if (exact) sc->i++;
        size_t t0 = sc->i;
        while (sc->i < sc->n && !strchr("(),;=", sc->s[sc->i]))
            sc->i++;
        /* leftmost first: an empty or repeated pattern is named at its start, what follows it after */
        if (sc->i == t0 && !(sc->i < sc->n && sc->s[sc->i] == '='))
            return pc_error_set(err, PC_ERR_USAGE, "layer assignment: position %zu: empty pattern", at);
        if (sc->i > t0) {
            pc_status st = add_pattern(r, ep, exact, sc->s + t0, sc->i - t0, at, err);
            if (st != PC_OK) return st;
        }
        if (sc->i < sc->n && sc->s[sc->i] == '=')
            return pc_error_set(err, PC_ERR_USAGE, "layer assignment: position %zu: '=' inside a pattern",
                                scan_pos(sc));
        if (sc->i >= sc->n || sc->s[sc->i] == '(' || sc->s[sc->i] == ';')
            return pc_error_set(err, PC_ERR_USAGE, "layer assignment: position %zu: expected ',' or ')'",
                                scan_pos(sc));
        char c = sc->s[sc->i++];
        if (c == ')') return PC_OK;
    }
}

pc_status pc_lro_parse(const char *text, const char *const *ep_names, uint32_t n_eps, pc_lro_rules **out,
                       pc_error *err)
{
    *out = NULL;
    size_t len = text ? strlen(text) : 0;
    lro_scan sc = {.end_pos = len + 1};
    pc_lro_rules *r = calloc(1, sizeof *r);
    sc.s = malloc(len + 1);
    sc.pos = malloc((len + 1) * sizeof *sc.pos);
    pc_status st = PC_OK;
    if (!r || !sc.s || !sc.pos) {
        st = pc_error_set(err, PC_ERR_NOMEM, "layer assignment: out of memory");
        goto done;
    }
    for (size_t k = 0; k < len; k++)
        if (!isspace((unsigned char)text[k])) {
            sc.s[sc.n] = text[k];
            sc.pos[sc.n++] = k + 1;
        }
    while (sc.n > 0) {
        if ((st = parse_rule(&sc, ep_names, n_eps, r, err)) != PC_OK) goto done;
        if (sc.i >= sc.n) break;
        if (sc.s[sc.i] != ';') {
            st = pc_error_set(err, PC_ERR_USAGE, "layer assignment: position %zu: expected ';' between rules",
                              scan_pos(&sc));
            goto done;
        }
        sc.i++;
        if (sc.i >= sc.n) {
            st = pc_error_set(err, PC_ERR_USAGE, "layer assignment: position %zu: trailing ';'",
                              sc.pos[sc.i - 1]);
            goto done;
        }
    }
done:
    free(sc.s);
    free(sc.pos);
    if (st != PC_OK) {
        pc_lro_free(r);
        return st;
    }
    *out = r;
    return PC_OK;
}
