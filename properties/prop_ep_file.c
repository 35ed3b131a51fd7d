/* ep-file (end to end, cases with an EP file): core's parser (core/ep/ep_file.c) reads the case's EP file,
 * and EPF_MUTANTS mutants of it drawn from the case, as the independent oracle
 * (properties/oracles/ep_file_oracle.h, written from docs/ep.md) does: both accept or both reject; a
 * rejection is PC_ERR_USAGE naming the line and column of the oracle's first error; an accepted file
 * registers every EP with the fields the oracle read. The mutants (a byte deleted, a separator or character
 * inserted, a number replaced by a bound, a field given twice, a line repeated or two swapped) are the
 * malformed files the parser's guards exist for, which no valid case reaches; a case without an EP file
 * passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "properties/oracles/ep_file_oracle.h"
#include "properties/match.h"
#include "properties/property.h"

enum { EPF_MUTANTS = 16 };

/* The built-in EPs (docs/ep.md, "Built-in EPs"): a file may not reuse their names. */
static const char *const builtin_names[] = {"cpu", "nhwc"};

/* Bounds of the file's numbers: block (1..1024), opsets (>= 1), int64 and past it, empty, long. */
static const char *const bounds[] = {
    "0",
    "1",
    "-1",
    "1023",
    "1024",
    "1025",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "",
    "18446744073709551616000",
    "007",
};
static const char inserts[] = " \t=,.#\nx-09";

static uint64_t next(uint64_t *s)
{
    return pc_splitmix64(s);
}

/* The start of line k (0-based) and its length with the '\n'; false when there is no such line. */
static bool line_at(const char *text, size_t k, size_t *start, size_t *len)
{
    const char *p = text;
    for (size_t i = 0; i < k; i++) {
        p = strchr(p, '\n');
        if (!p || !p[1]) return false;
        p++;
    }
    const char *e = strchr(p, '\n');
    *start = (size_t)(p - text);
    *len = e ? (size_t)(e - p) + 1 : strlen(p);
    return *len > 0;
}

static size_t count_lines(const char *text)
{
    size_t n = 0;
    for (size_t s, l; line_at(text, n, &s, &l);)
        n++;
    return n;
}

/* Whether a maximal run of digits starts at text[i]. */
static bool run_starts(const char *text, size_t i)
{
    return text[i] >= '0' && text[i] <= '9' && (i == 0 || text[i - 1] < '0' || text[i - 1] > '9');
}

/* One mutant of text. */
static char *mutate(const char *text, uint64_t *seed)
{
    size_t n = strlen(text);
    uint64_t r = next(seed);
    switch (r % 6) {
    case 0: /* delete a byte */
        if (n > 0) return match_text_splice(text, (size_t)(next(seed) % n), 1, "", 0);
        break;
    case 5: { /* a key=value field given again on its line (each field may appear once) */
        size_t fields = 0;
        for (size_t i = 1; i < n; i++)
            fields += text[i - 1] == ' ' && text[i] != ' ' && memchr(text + i, '=', strcspn(text + i, " \n"));
        if (fields == 0) break;
        size_t pick = (size_t)(next(seed) % fields), at = 0;
        for (size_t i = 1, k = 0; i < n; i++)
            if (text[i - 1] == ' ' && text[i] != ' ' && memchr(text + i, '=', strcspn(text + i, " \n")) &&
                k++ == pick) {
                at = i;
                break;
            }
        size_t len = strcspn(text + at, " \n");
        char put[128];
        if (len + 1 > sizeof put) break;
        put[0] = ' ';
        memcpy(put + 1, text + at, len);
        return match_text_splice(text, at + len, 0, put, len + 1);
    }
    case 2:
    case 3: { /* a number (a maximal digit run) replaced by a bound: twice as often, bounds are what break */
        size_t runs = 0;
        for (size_t i = 0; i < n; i++)
            runs += run_starts(text, i);
        if (runs == 0) break;
        size_t pick = (size_t)(next(seed) % runs), at = 0;
        for (size_t i = 0, k = 0; i < n; i++)
            if (run_starts(text, i) && k++ == pick) {
                at = i;
                break;
            }
        size_t len = 0;
        while (at + len < n && text[at + len] >= '0' && text[at + len] <= '9')
            len++;
        const char *b = bounds[next(seed) % (sizeof bounds / sizeof bounds[0])];
        return match_text_splice(text, at, len, b, strlen(b));
    }
    case 4: { /* a line repeated, or swapped with the next */
        size_t lines = count_lines(text), s1, l1, s2, l2;
        if (lines == 0) break;
        size_t k = (size_t)(next(seed) % lines);
        if (!line_at(text, k, &s1, &l1) || text[s1 + l1 - 1] != '\n') break;
        if (next(seed) % 2 == 0 || !line_at(text, k + 1, &s2, &l2) || text[s2 + l2 - 1] != '\n')
            return match_text_splice(text, s1, 0, text + s1, l1);
        char *swapped = malloc(n + 1);
        if (!swapped) return NULL;
        memcpy(swapped, text, n + 1);
        memcpy(swapped + s1, text + s2, l2);
        memcpy(swapped + s1 + l2, text + s1, l1);
        return swapped;
    }
    default:
        break;
    }
    /* insert a separator or character */
    char c = inserts[next(seed) % (sizeof inserts - 1)];
    return match_text_splice(text, (size_t)(next(seed) % (n + 1)), 0, &c, 1);
}

/* The text for a message: escaped, cut to fit. */
static void show(const char *text, char *out, size_t size)
{
    size_t o = 0;
    for (const char *p = text; *p && o + 8 < size; p++) {
        if (*p == '\n')
            o += (size_t)snprintf(out + o, size - o, "\\n");
        else if (*p == '\t')
            o += (size_t)snprintf(out + o, size - o, "\\t");
        else
            out[o++] = *p;
    }
    if (o < size) out[o] = '\0';
}

static pc_prop_outcome judge(const char *text, const char *what, char *msg, size_t msg_size,
                             const char **kind)
{
    pc_ep_registry *reg = NULL;
    pc_error ce, oe;
    pc_error_clear(&ce);
    pc_error_clear(&oe);
    if (pc_ep_registry_create(&reg, &ce) != PC_OK) {
        snprintf(msg, msg_size, "creating a registry: %s", ce.message);
        return PC_PROP_ERROR;
    }
    pc_status cst = pc_ep_registry_load_text(reg, text, "ep-file", &ce);
    pc_efo_file *f = NULL;
    pc_status ost = pc_efo_parse(text, builtin_names, 2, &f, &oe);
    pc_prop_outcome o = PC_PROP_PASS;
    char shown[700];
    show(text, shown, sizeof shown);
    if (ost == PC_ERR_UNSUPPORTED) {
        snprintf(msg, msg_size, "the %s: the oracle does not judge it: %s", what, oe.message);
        o = PC_PROP_SKIP; /* a line of more fields than the oracle takes */
    } else if (ost == PC_ERR_NOMEM || cst == PC_ERR_NOMEM) {
        snprintf(msg, msg_size, "out of memory parsing the %s", what);
        o = PC_PROP_ERROR;
    } else if ((cst == PC_OK) != (ost == PC_OK)) {
        *kind = cst == PC_OK ? "accepts-bad" : "rejects-good";
        if (cst == PC_OK)
            snprintf(msg, msg_size,
                     "the %s: core accepts it, the documented grammar rejects it (line %.300s): \"%s\"", what,
                     oe.message, shown);
        else
            snprintf(msg, msg_size,
                     "the %s: core rejects it (%.400s), the documented grammar accepts it: \"%s\"", what,
                     ce.message, shown);
        o = PC_PROP_FAIL;
    } else if (cst != PC_OK) {
        unsigned line = 0, col = 0;
        (void)sscanf(oe.message, "%u:%u:", &line, &col);
        char want[48];
        snprintf(want, sizeof want, "ep-file:%u:%u:", line, col);
        if (cst != PC_ERR_USAGE || (line > 0 && strncmp(ce.message, want, strlen(want)) != 0)) {
            *kind = "error-position";
            snprintf(
                msg, msg_size,
                "the %s: core rejects it with %s '%.400s', the oracle's first error is at line %u column "
                "%u (%.200s): \"%s\"",
                what, pc_status_name(cst), ce.message, line, col, oe.message, shown);
            o = PC_PROP_FAIL;
        }
    } else {
        char why[300];
        if (!pc_efo_same(f, reg, why, sizeof why)) {
            *kind = "fields";
            snprintf(msg, msg_size, "the %s: core registered it differently: %s: \"%s\"", what, why, shown);
            o = PC_PROP_FAIL;
        }
    }
    pc_efo_free(f);
    pc_ep_registry_free(reg);
    return o;
}

static pc_prop_outcome ep_file_final(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    const char *text = ctx->kase ? ctx->kase->ep_text : NULL;
    if (!text) return PC_PROP_PASS;
    pc_prop_outcome o = judge(text, "case's EP file", msg, msg_size, kind);
    if (o == PC_PROP_SKIP) return o; /* the case's own file: nothing judged */
    uint64_t seed = match_text_seed(text, 0x6570662d66696c65ull);
    for (int i = 0; i < EPF_MUTANTS && o == PC_PROP_PASS; i++) {
        char *m = mutate(text, &seed);
        if (!m) {
            snprintf(msg, msg_size, "out of memory mutating the EP file");
            return PC_PROP_ERROR;
        }
        char what[48];
        snprintf(what, sizeof what, "EP file mutant %d", i + 1);
        o = judge(m, what, msg, msg_size, kind);
        if (o == PC_PROP_SKIP) o = PC_PROP_PASS; /* this mutant only: the file and the others were judged */
        free(m);
    }
    return o;
}

const pc_property pc_prop_ep_file = {
    "ep-file",
    "the case's EP file and mutants of it parse as the documented grammar says: same accept/reject, the "
    "error's line, the registered fields",
    NULL,
    ep_file_final,
};
