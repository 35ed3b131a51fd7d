/* layer-rules (end to end, cases with a layer assignment): core's parser and matcher (core/ep/layer_rules.c)
 * read the case's --layer-assignment string, and LR_MUTANTS mutants of it drawn from the text, as the
 * independent oracle (properties/oracles/layer_rules_oracle.h, written from docs/ep.md) does: both accept or
 * both reject; a rejection is PC_ERR_USAGE naming the oracle's character position; an accepted string pins
 * every annotation of the graph (and each prefix of it at a '.', and each with a character appended) to the
 * same EP. The mutants (a character deleted, a special character inserted, a pattern given twice, the rules
 * swapped) are the malformed and reordered strings no valid case reaches: the parser's error paths, their
 * frees and their positions, and the leftmost-pattern precedence. A case without one passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "properties/oracles/layer_rules_oracle.h"
#include "properties/match.h"
#include "properties/property.h"

enum { LR_MUTANTS = 12, LR_MAX_EPS = 64 };

static const char inserts[] = " ();,=.x\t";

static uint64_t next(uint64_t *s)
{
    return pc_splitmix64(s);
}

/* One mutant of text (never empty-handed: an insertion is the fallback). */
static char *mutate(const char *text, uint64_t *seed)
{
    size_t n = strlen(text);
    switch (next(seed) % 4) {
    case 0: /* delete a character */
        if (n > 0) return match_text_splice(text, (size_t)(next(seed) % n), 1, "", 0);
        break;
    case 1: { /* a pattern given again: the text after a '(' or ',' up to the next ',' or ')', repeated */
        size_t starts[64], k = 0;
        for (size_t i = 0; i < n && k < 64; i++)
            if (text[i] == '(' || text[i] == ',') starts[k++] = i + 1;
        if (k == 0) break;
        size_t at = starts[next(seed) % k], len = strcspn(text + at, ",)");
        char put[256];
        if (len + 2 > sizeof put) break;
        memcpy(put, text + at, len);
        put[len] = ',';
        return match_text_splice(text, at, 0, put, len + 1);
    }
    case 2: { /* the rules swapped around the first ';' (the leftmost matching pattern decides) */
        const char *semi = strchr(text, ';');
        if (!semi) break;
        size_t a = (size_t)(semi - text), b = n - a - 1;
        char *m = malloc(n + 1);
        if (!m) return NULL;
        memcpy(m, semi + 1, b);
        m[b] = ';';
        memcpy(m + b + 1, text, a);
        m[n] = '\0';
        return m;
    }
    default:
        break;
    }
    char c = inserts[next(seed) % (sizeof inserts - 1)];
    return match_text_splice(text, (size_t)(next(seed) % (n + 1)), 0, &c, 1);
}

/* The number after "position " in an error message; 0 when there is none. */
static size_t position_of(const char *message)
{
    const char *p = strstr(message, "position ");
    return p ? (size_t)strtoull(p + 9, NULL, 10) : 0;
}

/* Core's and the oracle's EP for one annotation; false with the message written when they differ. */
static bool same_pin(const pc_layer_rules *core, const pc_lro_rules *oracle, const char *ann,
                     const char *what, const char *text, char *msg, size_t msg_size)
{
    const pc_ep *ep = pc_layer_rules_match(core, ann);
    const char *c = ep ? ep->name : NULL, *o = pc_lro_ep_for(oracle, ann);
    if ((c == NULL) == (o == NULL) && (!c || strcmp(c, o) == 0)) return true;
    snprintf(msg, msg_size,
             "the %s '%.300s': core pins annotation '%.100s' to %s, the documented precedence to %s", what,
             text, ann, c ? c : "no EP", o ? o : "no EP");
    return false;
}

/* Every annotation of g's nodes, each prefix of it ending before a '.', and each with an 'x' appended. */
static bool same_pins(const pc_graph *g, const pc_layer_rules *core, const pc_lro_rules *oracle,
                      const char *what, const char *text, char *msg, size_t msg_size)
{
    for (const pc_node *n = g->first; n; n = n->next) {
        const char *ann = pc_node_annotation(n);
        if (!ann) continue;
        char buf[256];
        size_t len = strlen(ann);
        if (len + 2 > sizeof buf) continue;
        memcpy(buf, ann, len + 1);
        if (!same_pin(core, oracle, buf, what, text, msg, msg_size)) return false;
        for (size_t i = 0; i < len; i++) {
            if (ann[i] != '.') continue;
            buf[i] = '\0';
            bool same = same_pin(core, oracle, buf, what, text, msg, msg_size);
            buf[i] = '.';
            if (!same) return false;
        }
        buf[len] = 'x';
        buf[len + 1] = '\0';
        if (!same_pin(core, oracle, buf, what, text, msg, msg_size)) return false;
    }
    return true;
}

static pc_prop_outcome judge(const pc_check_ctx *ctx, const char *text, const char *what, char *msg,
                             size_t msg_size, const char **kind)
{
    const char *names[LR_MAX_EPS];
    for (uint32_t j = 0; j < ctx->n_eps; j++)
        names[j] = ctx->eps[j]->name;
    pc_layer_rules *core = NULL;
    pc_lro_rules *oracle = NULL;
    pc_error ce, oe;
    pc_error_clear(&ce);
    pc_error_clear(&oe);
    pc_status cst = pc_layer_rules_parse(text, ctx->eps, ctx->n_eps, &core, &ce);
    pc_status ost = pc_lro_parse(text, names, ctx->n_eps, &oracle, &oe);
    pc_prop_outcome o = PC_PROP_PASS;
    if (cst == PC_ERR_NOMEM || ost == PC_ERR_NOMEM) {
        snprintf(msg, msg_size, "out of memory parsing the %s", what);
        o = PC_PROP_ERROR;
    } else if ((cst == PC_OK) != (ost == PC_OK)) {
        *kind = cst == PC_OK ? "accepts-bad" : "rejects-good";
        if (cst == PC_OK)
            snprintf(msg, msg_size,
                     "the %s '%.300s': core accepts it, the documented grammar rejects it (%.300s)", what,
                     text, oe.message);
        else
            snprintf(msg, msg_size,
                     "the %s '%.300s': core rejects it (%.300s), the documented grammar accepts it", what,
                     text, ce.message);
        o = PC_PROP_FAIL;
    } else if (cst != PC_OK) {
        size_t want = position_of(oe.message);
        if (cst != PC_ERR_USAGE || position_of(ce.message) != want) {
            *kind = "error-position";
            snprintf(
                msg, msg_size,
                "the %s '%.300s': core rejects it with %s '%.300s', the oracle's first error is at position "
                "%zu (%.200s)",
                what, text, pc_status_name(cst), ce.message, want, oe.message);
            o = PC_PROP_FAIL;
        }
    } else if (!same_pins(ctx->original->graph, core, oracle, what, text, msg, msg_size)) {
        *kind = "pins";
        o = PC_PROP_FAIL;
    }
    pc_layer_rules_free(core);
    pc_lro_free(oracle);
    return o;
}

static pc_prop_outcome layer_rules_final(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    const char *text = ctx->kase ? ctx->kase->layer_assignment : NULL;
    if (!text || !*text) return PC_PROP_PASS;
    if (ctx->n_eps > LR_MAX_EPS) {
        snprintf(msg, msg_size, "%u EPs, the layer-rule oracle takes at most %d", ctx->n_eps, LR_MAX_EPS);
        return PC_PROP_SKIP;
    }
    pc_prop_outcome o = judge(ctx, text, "case's layer assignment", msg, msg_size, kind);
    uint64_t seed = match_text_seed(text, 0x6c617965722d7275ull);
    for (int i = 0; i < LR_MUTANTS && o == PC_PROP_PASS; i++) {
        char *m = mutate(text, &seed);
        if (!m) {
            snprintf(msg, msg_size, "out of memory mutating the layer assignment");
            return PC_PROP_ERROR;
        }
        char what[48];
        snprintf(what, sizeof what, "layer assignment mutant %d", i + 1);
        o = judge(ctx, m, what, msg, msg_size, kind);
        free(m);
    }
    return o;
}

const pc_property pc_prop_layer_rules = {
    "layer-rules",
    "the case's layer assignment and mutants of it parse and match as the documented grammar says: same "
    "accept/reject, the error's position, the EP each annotation is pinned to",
    NULL,
    layer_rules_final,
};
