/* The annotation layer (pc_gen_annotate): `layer_ann` on random subsets of the nodes, with nested prefixes
 * (`encoder`, `encoder.block1`, `encoder.block1.attn`), and a random layer-assignment string over the case's
 * EPs (grammar in docs/ep.md). Runs of consecutive nodes often share an annotation, as exported models do, so
 * fusions meet annotated pairs and rules pin whole groups.
 *
 * The rules overlap the way real settings do: a prefix pattern of one annotation is often a prefix of another
 * (`encoder` and `encoder.block1`), an exact pattern names an annotation that is also the prefix of a longer
 * one, a prefix may end inside a component (`enc`, `encoder.blo`: the grammar matches text, not components),
 * and a pattern may be a later component or a suffix of an annotation (`block1`, `attn`, `coder`), which
 * contains it without starting with it and so must not match. Rules come in a drawn order, and an EP's
 * patterns are sometimes split over two rules: the leftmost matching pattern decides, so order matters.
 *
 * Draws, in order: annotate at all (0: no annotation and no rules: the simplest case); per node none / same
 * as the previous / a new one (top, depth, block, leaf); rules at all; per pattern which annotation, its form
 * (component prefix, exact, a prefix ending inside a component, an inner part), its length, which EP, and
 * whether it opens a rule of its own; then the order of the rules; then whitespace: none (0) or 1-4
 * characters of every kind C's isspace knows, each at a drawn position, inside names and patterns too
 * (docs/ep.md: ignored anywhere). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "generators/gen.h"
#include "generators/gen_layers.h"

static const char *const tops[] = {"encoder", "decoder", "head", "stem"};
static const char *const leaves[] = {"attn", "mlp", "norm", "conv"};
enum { N_TOPS = 4, N_BLOCKS = 3, N_LEAVES = 4, MAX_PATTERNS = 3, ANN_SIZE = 64 };

static void draw_annotation(pc_choices *ch, char *out, size_t size)
{
    uint32_t top = pc_draw(ch, N_TOPS), depth = pc_draw(ch, 3);
    if (depth == 0) {
        snprintf(out, size, "%s", tops[top]);
        return;
    }
    uint32_t block = pc_draw(ch, N_BLOCKS);
    if (depth == 1) {
        snprintf(out, size, "%s.block%u", tops[top], block);
        return;
    }
    snprintf(out, size, "%s.block%u.%s", tops[top], block, leaves[pc_draw(ch, N_LEAVES)]);
}

/* The first `keep` dot-separated components of ann. */
static void prefix_of(const char *ann, uint32_t keep, char *out, size_t size)
{
    size_t i = 0;
    for (uint32_t parts = 0; ann[i]; i++)
        if (ann[i] == '.' && ++parts == keep) break;
    snprintf(out, size, "%.*s", (int)i, ann);
}

static uint32_t components(const char *ann)
{
    uint32_t c = 1;
    for (; *ann; ann++)
        c += *ann == '.';
    return c;
}

/* The EP names of a list "a,b,c" (malloc'ed copy in *buf, pointers into it). */
static uint32_t split_eps(const char *list, char **buf, const char **names, uint32_t cap)
{
    size_t len = strlen(list);
    *buf = malloc(len + 1);
    if (!*buf) return 0;
    memcpy(*buf, list, len + 1);
    uint32_t n = 0;
    for (char *p = *buf; p && *p && n < cap;) {
        char *c = strchr(p, ',');
        if (c) *c = '\0';
        names[n++] = p;
        p = c ? c + 1 : NULL;
    }
    return n;
}

typedef struct pattern {
    char text[ANN_SIZE];
    bool exact;
    uint32_t ep;
    uint32_t rule; /* the rule it is written in (patterns of one rule share the EP) */
} pattern;

/* Writes "ep(p, =q); ep2(r); ep(s)": one rule per distinct `rule` number, in the order of `order` (a
 * permutation of the rule numbers 0..n_rules-1), each with its patterns in drawn order. */
static char *format_rules(const pattern *pats, uint32_t n, const uint32_t *order, uint32_t n_rules,
                          const char *const *eps)
{
    pc_strbuf b = {0};
    for (uint32_t k = 0; k < n_rules; k++) {
        bool open = false;
        for (uint32_t i = 0; i < n; i++) {
            if (pats[i].rule != order[k]) continue;
            if (!open) {
                if (b.len) pc_strbuf_puts(&b, "; ");
                pc_strbuf_puts(&b, eps[pats[i].ep]);
                pc_strbuf_puts(&b, "(");
                open = true;
            } else {
                pc_strbuf_puts(&b, ", ");
            }
            if (pats[i].exact) pc_strbuf_puts(&b, "=");
            pc_strbuf_puts(&b, pats[i].text);
        }
        if (open) pc_strbuf_puts(&b, ")");
    }
    return pc_strbuf_take(&b); /* NULL when out of memory */
}

/* Inserts the drawn whitespace into *text (see the header); false when out of memory (*text unchanged). */
static bool sprinkle_whitespace(pc_choices *ch, char **text)
{
    static const char ws[] = {' ', '\t', '\n', '\r', '\f', '\v'};
    if (!pc_draw_bool(ch, 25)) return true;
    uint32_t n = 1 + pc_draw(ch, 4);
    size_t len = strlen(*text);
    char *out = malloc(len + n + 1);
    if (!out) return false;
    memcpy(out, *text, len + 1);
    for (uint32_t k = 0; k < n; k++, len++) {
        size_t at = (size_t)pc_draw(ch, (uint32_t)len + 1);
        memmove(out + at + 1, out + at, len - at + 1);
        out[at] = ws[pc_draw(ch, sizeof ws)];
    }
    free(*text);
    *text = out;
    return true;
}

/* A pattern's text from annotation `ann` in one of four forms (draw 0: a prefix of whole components). */
static void draw_pattern_text(pc_choices *ch, const char *ann, pattern *p)
{
    static const uint32_t form_weights[] = {55, 20, 10,
                                            15}; /* components, exact, inside a component, inner */
    size_t len = strlen(ann);
    switch (pc_draw_weighted(ch, form_weights, 4)) {
    case 0:
        prefix_of(ann, 1 + pc_draw(ch, components(ann)), p->text, sizeof p->text);
        break;
    case 1:
        p->exact = true;
        snprintf(p->text, sizeof p->text, "%s", ann);
        break;
    case 2: /* 1..len-1 characters: ends inside a component or on a dot */
        snprintf(p->text, sizeof p->text, "%.*s", (int)(len > 1 ? 1 + pc_draw(ch, (uint32_t)(len - 1)) : len),
                 ann);
        break;
    default: { /* a later component, or a suffix of the first: contained, not a prefix */
        const char *dot = strchr(ann, '.');
        if (dot && pc_draw_bool(ch, 70)) {
            uint32_t skip = pc_draw(ch, components(ann) - 1);
            const char *start = dot + 1;
            for (uint32_t k = 0; k < skip; k++)
                start = strchr(start, '.') + 1; /* components(ann) - 1 dots follow the first */
            const char *end = strchr(start, '.');
            snprintf(p->text, sizeof p->text, "%.*s", (int)(end ? (size_t)(end - start) : strlen(start)),
                     start);
        } else {
            size_t first = dot ? (size_t)(dot - ann) : len;
            size_t from = first > 1 ? 1 + pc_draw(ch, (uint32_t)(first - 1)) : 0;
            snprintf(p->text, sizeof p->text, "%.*s", (int)(first - from), ann + from);
        }
    }
    }
}

pc_status pc_gen_annotate(pc_gen *g, pc_error *err)
{
    pc_choices *ch = g->ch;
    if (!pc_draw_bool(ch, 85)) return PC_OK;
    /* the EPs the rules may name: the case's list, or the one pc_case_generate gives annotated cases */
    if (!g->out->ep_list) {
        g->out->ep_list = malloc(sizeof "nhwc,cpu");
        if (!g->out->ep_list) return pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (EP list)");
        memcpy(g->out->ep_list, "nhwc,cpu", sizeof "nhwc,cpu");
    }

    uint32_t n_anns = 0, cap_anns = 0;
    char(*anns)[ANN_SIZE] = NULL; /* distinct annotations in order of first use */
    char prev[ANN_SIZE] = "";
    pc_status st = PC_OK;
    static const uint32_t weights[] = {20, 55, 25}; /* none, same as the previous node, a new one */
    for (pc_node *n = g->graph->first; n && st == PC_OK; n = n->next) {
        uint32_t what = pc_draw_weighted(ch, weights, 3);
        if (what == 0) continue;
        char ann[ANN_SIZE];
        if (what == 1 && prev[0])
            snprintf(ann, sizeof ann, "%s", prev);
        else
            draw_annotation(ch, ann, sizeof ann);
        snprintf(prev, sizeof prev, "%s", ann);
        if ((st = pc_node_set_metadata(n, PC_LAYER_ANN_KEY, ann, err)) != PC_OK) break;
        bool seen = false;
        for (uint32_t i = 0; i < n_anns && !seen; i++)
            seen = strcmp(anns[i], ann) == 0;
        if (seen) continue;
        if (n_anns == cap_anns) {
            uint32_t cap = cap_anns ? cap_anns * 2 : 8;
            void *p = realloc(anns, (size_t)cap * sizeof *anns);
            if (!p) {
                st = pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (annotations)");
                break;
            }
            anns = p;
            cap_anns = cap;
        }
        memcpy(anns[n_anns++], ann, ANN_SIZE);
    }
    if (st != PC_OK || !pc_draw_bool(ch, 70)) {
        free(anns);
        return st;
    }

    char *ep_buf = NULL;
    const char *eps[16];
    uint32_t n_eps = split_eps(g->out->ep_list, &ep_buf, eps, 16);
    pattern pats[MAX_PATTERNS];
    uint32_t n_pats = 0, n_rules = 0, want = 1 + pc_draw(ch, MAX_PATTERNS);
    for (uint32_t k = 0; k < want && n_eps; k++) {
        char ann[ANN_SIZE];
        if (n_anns)
            memcpy(ann, anns[pc_draw(ch, n_anns)], ANN_SIZE);
        else
            draw_annotation(ch, ann, sizeof ann);
        pattern p = {.exact = false};
        draw_pattern_text(ch, ann, &p);
        p.ep = pc_draw(ch, n_eps);
        /* the rule of an earlier pattern of this EP (draw 0), or one of its own */
        p.rule = n_rules;
        for (uint32_t i = n_pats; i-- > 0;)
            if (pats[i].ep == p.ep) {
                p.rule = pats[i].rule;
                break;
            }
        if (p.rule != n_rules && pc_draw_bool(ch, 25)) p.rule = n_rules;
        bool dup = !p.text[0]; /* the grammar rejects empty patterns and a pattern given twice */
        for (uint32_t i = 0; i < n_pats && !dup; i++)
            dup = pats[i].exact == p.exact && !strcmp(pats[i].text, p.text);
        if (dup) continue;
        if (p.rule == n_rules) n_rules++;
        pats[n_pats++] = p;
    }
    free(anns);
    if (n_pats) {
        uint32_t order[MAX_PATTERNS];
        for (uint32_t k = 0; k < n_rules; k++)
            order[k] = k;
        for (uint32_t k = 0; k + 1 < n_rules; k++) { /* draw 0 everywhere: the rules in order of first use */
            uint32_t j = k + pc_draw(ch, n_rules - k), t = order[k];
            order[k] = order[j];
            order[j] = t;
        }
        free(g->out->layer_assignment);
        g->out->layer_assignment = format_rules(pats, n_pats, order, n_rules, eps);
        if (!g->out->layer_assignment || !sprinkle_whitespace(ch, &g->out->layer_assignment))
            st = pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (layer rules)");
    }
    free(ep_buf);
    return st;
}

pc_status pc_gen_retarget_rules(pc_gen *g, pc_error *err)
{
    const char *text = g->out->layer_assignment;
    if (!text || !g->out->ep_list) return PC_OK;
    char *ep_buf = NULL;
    const char *eps[16];
    uint32_t n_eps = split_eps(g->out->ep_list, &ep_buf, eps, 16);
    if (!n_eps) {
        free(ep_buf);
        return pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (EP list)");
    }
    /* rules are "EP(patterns)" separated by ';': redraw each EP over the new list, merging rules that land on
     * the same EP would need a re-parse; two rules naming one EP are valid, so they are simply kept apart */
    pc_strbuf b = {0};
    const char *p = text;
    while (*p) {
        const char *open = strchr(p, '(');
        const char *close = open ? strchr(open, ')') : NULL;
        if (!open || !close) break;
        if (b.len) pc_strbuf_puts(&b, "; ");
        pc_strbuf_puts(&b, eps[pc_draw(g->ch, n_eps)]);
        pc_strbuf_append(&b, open, (size_t)(close - open) + 1);
        p = close + 1;
        while (*p == ';' || *p == ' ')
            p++;
    }
    free(ep_buf);
    if (b.oom) {
        pc_strbuf_free(&b);
        return pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (layer rules)");
    }
    free(g->out->layer_assignment);
    g->out->layer_assignment = pc_strbuf_take(&b); /* NULL when there was nothing to keep */
    return PC_OK;
}
