/* passcheck check MODEL [--inputs DIR|FILES | --seed S] [--dim NAME=SIZE]... [--ep LIST] [--ep-file F]
 * [--layer-assignment S] [--level N] [--property P,...|all] [--shrink] [--out DIR] [--json F]: run the pass
 * pipeline on a user's model with every property after every pass and print a pass x property table, the
 * time per pass and per property, and a verdict. The case comes from properties/runner/model_case.h, the
 * checks from properties/property.h (pc_check_config.keep_going and on_outcome: every judgment, not only the
 * first failure), run in a forked child (pc_case_check_isolated: a crash or a hang in a pass or a property is
 * a failure in the table, not a dead command), the shrinking and repro folders from
 * properties/shrink/shrink.h. */
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"
#include "properties/property.h"
#include "properties/runner/model_case.h"
#include "properties/shrink/shrink.h"

#define CHECK_CMD "check"
/* seconds the whole check may take by default (--timeout): a hang is reported, never waited out */
#define CHECK_TIMEOUT 3600.0

typedef struct check_args {
    const char *model;
    const char *inputs;
    const char *seed_text;
    pc_cli_list dims;
    const char *ep_list;
    const char *ep_file;
    const char *layer_assignment;
    const char *level_text;
    const char *property;
    bool shrink;
    const char *out;
    const char *json;
    const char *junit;
    const char *time_text;
    const char *timeout_text;
    const char *inject;
    int level;
    uint64_t seed;
    double shrink_seconds;
    double timeout;
} check_args;

static const pc_cli_opt opt_specs[] = {
    {"--inputs", NULL, PC_CLI_STRING, offsetof(check_args, inputs)},
    {"--seed", NULL, PC_CLI_STRING, offsetof(check_args, seed_text)},
    {"--dim", NULL, PC_CLI_LIST, offsetof(check_args, dims)},
    {"--ep", NULL, PC_CLI_STRING, offsetof(check_args, ep_list)},
    {"--ep-file", NULL, PC_CLI_STRING, offsetof(check_args, ep_file)},
    {"--layer-assignment", NULL, PC_CLI_STRING, offsetof(check_args, layer_assignment)},
    {"--level", NULL, PC_CLI_STRING, offsetof(check_args, level_text)},
    {"--property", NULL, PC_CLI_STRING, offsetof(check_args, property)},
    {"--shrink", NULL, PC_CLI_FLAG, offsetof(check_args, shrink)},
    {"--out", NULL, PC_CLI_STRING, offsetof(check_args, out)},
    {"--json", NULL, PC_CLI_STRING, offsetof(check_args, json)},
    {"--junit", NULL, PC_CLI_STRING, offsetof(check_args, junit)},
    {"--shrink-time", NULL, PC_CLI_STRING, offsetof(check_args, time_text)},
    {"--timeout", NULL, PC_CLI_STRING, offsetof(check_args, timeout_text)},
    {"--inject", NULL, PC_CLI_STRING, offsetof(check_args, inject)},
};

static const pc_cli_positional model_arg = {"MODEL", PC_CLI_STRING, offsetof(check_args, model)};

static int args_parse(int argc, char **argv, check_args *a)
{
    int rc = pc_cli_parse_args(CHECK_CMD, argc, argv, opt_specs, sizeof opt_specs / sizeof opt_specs[0], a,
                               &model_arg);
    if (rc != PC_EXIT_OK) return rc;
    if (a->level_text && (rc = pc_cli_parse_level(CHECK_CMD, a->level_text, &a->level)) != PC_EXIT_OK)
        return rc;
    if (a->seed_text) {
        if ((rc = pc_cli_parse_u64(CHECK_CMD, "--seed", a->seed_text, 0, UINT64_MAX, &a->seed)) != PC_EXIT_OK)
            return rc;
        if (a->inputs) return pc_cli_usage_error(CHECK_CMD, "--seed draws random inputs: not with --inputs");
    }
    if (a->time_text) {
        if ((rc = pc_cli_parse_seconds(CHECK_CMD, "--shrink-time", a->time_text, 86400,
                                       &a->shrink_seconds)) != PC_EXIT_OK)
            return rc;
        if (!a->shrink) return pc_cli_usage_error(CHECK_CMD, "--shrink-time without --shrink");
    }
    if (a->timeout_text && (rc = pc_cli_parse_seconds(CHECK_CMD, "--timeout", a->timeout_text, 86400,
                                                      &a->timeout)) != PC_EXIT_OK)
        return rc;
    if (a->out && !a->shrink)
        return pc_cli_usage_error(CHECK_CMD, "--out is where --shrink writes: give --shrink");
    if (a->out && a->out[0] == '\0') return pc_cli_usage_error(CHECK_CMD, "empty --out DIR");
    if (a->inputs && a->inputs[0] == '\0') return pc_cli_usage_error(CHECK_CMD, "empty --inputs");
    if (a->json && a->json[0] == '\0') return pc_cli_usage_error(CHECK_CMD, "empty --json FILE");
    if (a->junit && a->junit[0] == '\0') return pc_cli_usage_error(CHECK_CMD, "empty --junit FILE");
    if (a->dims.n && a->inputs)
        return pc_cli_usage_error(CHECK_CMD, "--dim sizes random inputs: not with --inputs");
    if (!a->ep_list) a->ep_list = "cpu";
    if (!a->out) a->out = "passcheck-failures";
    return PC_EXIT_OK;
}

/* ---- the judgments, as the runner makes them ----------------------------------------------------------- */

enum { CELL_NONE = 0 };                     /* else 1 + pc_prop_outcome */
enum { N_COLUMNS = PC_MAX_PROPERTIES + 1 }; /* the catalogue, then "pipeline" (the pipeline's own failure) */

typedef struct check_row {
    char pass[64];
    char provider[64];
    uint8_t cell[N_COLUMNS];
    uint32_t detail[N_COLUMNS]; /* a FAIL or ERROR: 1 + its index in fails; a SKIP: 1 + in skips; else 0 */
} check_row;

typedef struct check_failure {
    pc_failure f;
    uint32_t count; /* judgments with this signature */
} check_failure;

typedef struct check_skip {
    char property[32];
    char message[256];
    uint32_t count;
} check_skip;

typedef struct check_pass_time {
    char pass[64];
    double seconds;
    uint32_t runs;
} check_pass_time;

typedef struct check_log {
    check_row *rows;
    size_t n_rows, cap_rows;
    check_failure *fails;
    size_t n_fails, cap_fails;
    check_skip *skips;
    size_t n_skips, cap_skips;
    check_pass_time *times;
    size_t n_times, cap_times;
    double prop_seconds[N_COLUMNS];
    uint32_t judged[N_COLUMNS][PC_PROP_OUTCOME_COUNT];
    double checks_since_pass; /* property time since the last on_pass */
    double last_mark;         /* pc_now_seconds at the last on_pass (or the start) */
    bool oom;
} check_log;

static bool grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t nc = *cap ? 2 * *cap : 16, bytes;
    if (nc < need || !pc_size_mul(nc, elem, &bytes)) return false;
    void *p = realloc(*arr, bytes);
    if (!p) return false;
    *arr = p;
    *cap = nc;
    return true;
}

static size_t column_of(const pc_property *p)
{
    for (size_t i = 0; p && i < pc_property_count() && i < PC_MAX_PROPERTIES; i++)
        if (pc_property_at(i) == p) return i;
    return PC_MAX_PROPERTIES;
}

static const char *column_name(size_t c)
{
    return c < PC_MAX_PROPERTIES ? pc_property_at(c)->name : "pipeline";
}

/* 1 + the index of the failure's signature entry, 0 when out of memory. */
static uint32_t note_failure(check_log *l, const pc_check_outcome *o, size_t col)
{
    pc_failure f;
    memset(&f, 0, sizeof f);
    snprintf(f.property, sizeof f.property, "%s", column_name(col));
    snprintf(f.pass, sizeof f.pass, "%s", o->pass);
    snprintf(f.kind, sizeof f.kind, "%s", o->kind);
    f.outcome = o->outcome;
    snprintf(f.message, sizeof f.message, "%s", o->message[0] ? o->message : "(no message)");
    for (size_t i = 0; i < l->n_fails; i++)
        if (pc_failure_same(&l->fails[i].f, &f)) {
            l->fails[i].count++;
            return (uint32_t)i + 1;
        }
    if (!grow((void **)&l->fails, &l->cap_fails, l->n_fails + 1, sizeof *l->fails)) {
        l->oom = true;
        return 0;
    }
    l->fails[l->n_fails++] = (check_failure){f, 1};
    return (uint32_t)l->n_fails;
}

/* 1 + the index of the skip's (property, reason) entry, 0 when out of memory. */
static uint32_t note_skip(check_log *l, const pc_check_outcome *o, size_t col)
{
    char msg[256];
    snprintf(msg, sizeof msg, "%s", o->message[0] ? o->message : "(no reason given)");
    for (size_t i = 0; i < l->n_skips; i++)
        if (strcmp(l->skips[i].property, column_name(col)) == 0 && strcmp(l->skips[i].message, msg) == 0) {
            l->skips[i].count++;
            return (uint32_t)i + 1;
        }
    if (!grow((void **)&l->skips, &l->cap_skips, l->n_skips + 1, sizeof *l->skips)) {
        l->oom = true;
        return 0;
    }
    check_skip *s = &l->skips[l->n_skips++];
    snprintf(s->property, sizeof s->property, "%s", column_name(col));
    snprintf(s->message, sizeof s->message, "%s", msg);
    s->count = 1;
    return (uint32_t)l->n_skips;
}

static void on_outcome(void *ctx, const pc_check_outcome *o)
{
    check_log *l = ctx;
    size_t col = column_of(o->property);
    const char *prov = o->provider ? o->provider : "";
    check_row *row = l->n_rows ? &l->rows[l->n_rows - 1] : NULL;
    /* a new row for each run of a pass: another pass or EP, or the same one judged again */
    if (!row || strcmp(row->pass, o->pass) != 0 || strcmp(row->provider, prov) != 0 || row->cell[col]) {
        if (!grow((void **)&l->rows, &l->cap_rows, l->n_rows + 1, sizeof *l->rows)) {
            l->oom = true;
            return;
        }
        row = &l->rows[l->n_rows++];
        memset(row, 0, sizeof *row);
        snprintf(row->pass, sizeof row->pass, "%s", o->pass);
        snprintf(row->provider, sizeof row->provider, "%s", prov);
    }
    row->cell[col] = (uint8_t)(1 + o->outcome);
    l->judged[col][o->outcome]++;
    l->prop_seconds[col] += o->seconds;
    l->checks_since_pass += o->seconds;
    if (o->outcome == PC_PROP_FAIL || o->outcome == PC_PROP_ERROR) row->detail[col] = note_failure(l, o, col);
    if (o->outcome == PC_PROP_SKIP) row->detail[col] = note_skip(l, o, col);
}

/* After every pass (changed or not, after its checks): its time without the checks. */
static void on_pass(void *ctx, const char *pass)
{
    check_log *l = ctx;
    double now = pc_now_seconds(), t = now - l->last_mark - l->checks_since_pass;
    l->last_mark = now;
    l->checks_since_pass = 0;
    for (size_t i = 0; i < l->n_times; i++)
        if (strcmp(l->times[i].pass, pass) == 0) {
            l->times[i].seconds += t > 0 ? t : 0;
            l->times[i].runs++;
            return;
        }
    if (!grow((void **)&l->times, &l->cap_times, l->n_times + 1, sizeof *l->times)) {
        l->oom = true;
        return;
    }
    check_pass_time *pt = &l->times[l->n_times++];
    snprintf(pt->pass, sizeof pt->pass, "%s", pass);
    pt->seconds = t > 0 ? t : 0;
    pt->runs = 1;
}

/* A crash or hang of the check's child (pc_failure property "crash" or "timeout", pass = the last pass it
 * finished): a row of its own, "crash after PASS", with an F in the pipeline column, and the failure under
 * the isolation's signature (crash@PASS/SIGSEGV), as the suite reports one. */
static void note_isolation_failure(check_log *l, const pc_failure *f)
{
    if (!grow((void **)&l->rows, &l->cap_rows, l->n_rows + 1, sizeof *l->rows) ||
        !grow((void **)&l->fails, &l->cap_fails, l->n_fails + 1, sizeof *l->fails)) {
        l->oom = true;
        return;
    }
    check_row *row = &l->rows[l->n_rows++];
    memset(row, 0, sizeof *row);
    char label[sizeof f->property + sizeof f->pass + 16];
    snprintf(label, sizeof label, "%s after %s", f->property, f->pass[0] ? f->pass : "(no pass)");
    snprintf(row->pass, sizeof row->pass, "%.*s", (int)sizeof row->pass - 1, label); /* cut to the column */
    row->cell[PC_MAX_PROPERTIES] = (uint8_t)(1 + PC_PROP_FAIL);
    l->fails[l->n_fails++] = (check_failure){*f, 1};
    row->detail[PC_MAX_PROPERTIES] = (uint32_t)l->n_fails;
    l->judged[PC_MAX_PROPERTIES][PC_PROP_FAIL]++;
}

static void log_free(check_log *l)
{
    free(l->rows);
    free(l->fails);
    free(l->skips);
    free(l->times);
}

/* ---- output ------------------------------------------------------------------------------------------- */

static const char cell_glyph[] = {' ', '.', 'F', 's', 'E'}; /* none, pass, fail, skip, error */
_Static_assert(sizeof cell_glyph == 1 + PC_PROP_OUTCOME_COUNT, "a glyph per outcome");
_Static_assert(PC_PROP_PASS == 0 && PC_PROP_FAIL == 1 && PC_PROP_SKIP == 2 && PC_PROP_ERROR == 3,
               "cell_glyph follows pc_prop_outcome");

static bool column_used(const check_log *l, size_t c)
{
    for (int o = 0; o < PC_PROP_OUTCOME_COUNT; o++)
        if (l->judged[c][o]) return true;
    return false;
}

static void first_line(const char *s, char *buf, size_t size)
{
    size_t n = strcspn(s, "\n");
    if (n >= size) n = size - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
}

static void print_table(const check_log *l, const bool *enabled)
{
    size_t cols[N_COLUMNS], n_cols = 0;
    for (size_t c = 0; c < N_COLUMNS; c++)
        if ((c < PC_MAX_PROPERTIES && c < pc_property_count() && enabled[c]) || column_used(l, c))
            cols[n_cols++] = c;
    printf("properties:");
    for (size_t k = 0; k < n_cols; k++)
        printf("%s %c=%s", k % 6 == 5 ? "\n           " : "", (int)('a' + k), column_name(cols[k]));
    printf("\ncells: . pass  F fail  E error (could not judge)  s skip  (blank) not checked after that "
           "pass\n\n");
    printf("%-40s ", "pass (EP)");
    for (size_t k = 0; k < n_cols; k++)
        printf("%c", (int)('a' + k));
    printf("\n");
    for (size_t i = 0; i < l->n_rows; i++) {
        const check_row *r = &l->rows[i];
        char label[160];
        snprintf(label, sizeof label, "%s%s%s%s", r->pass, r->provider[0] ? " (" : "", r->provider,
                 r->provider[0] ? ")" : "");
        printf("%-40.40s ", label);
        for (size_t k = 0; k < n_cols; k++)
            printf("%c", cell_glyph[r->cell[cols[k]]]);
        printf("\n");
    }
}

static int cmp_time_desc(const void *a, const void *b)
{
    double x = ((const check_pass_time *)a)->seconds, y = ((const check_pass_time *)b)->seconds;
    return (x < y) - (x > y);
}

static void print_times(check_log *l)
{
    qsort(l->times, l->n_times, sizeof *l->times, cmp_time_desc);
    printf("\ntime per pass (the runner's bookkeeping included, the checks not):");
    for (size_t i = 0; i < l->n_times; i++)
        printf("%s %s %.1f ms", i % 4 == 0 ? "\n " : ",", l->times[i].pass, 1e3 * l->times[i].seconds);
    printf("\ntime per property:");
    size_t k = 0;
    for (size_t c = 0; c < N_COLUMNS; c++)
        if (column_used(l, c))
            printf("%s %s %.1f ms", k++ % 4 == 0 ? "\n " : ",", column_name(c), 1e3 * l->prop_seconds[c]);
    printf("\n");
}

typedef struct json_ctx {
    const check_args *a;
    const check_log *l;
    const char *verdict;
    double seconds;
} json_ctx;

static void json_write(FILE *out, const void *vctx)
{
    const json_ctx *j = vctx;
    const check_log *l = j->l;
    fprintf(out, "{\n  \"model\": ");
    pc_json_string(out, j->a->model);
    fprintf(out, ",\n  \"eps\": ");
    pc_json_string(out, j->a->ep_list);
    fprintf(out, ",\n  \"level\": %d,\n  \"verdict\": ", j->a->level);
    pc_json_string(out, j->verdict);
    fprintf(out, ",\n  \"seconds\": %.3f,\n  \"judgments\": {", j->seconds);
    bool first = true;
    for (size_t c = 0; c < N_COLUMNS; c++) {
        if (!column_used(l, c)) continue;
        fprintf(out, "%s\n    ", first ? "" : ",");
        first = false;
        pc_json_string(out, column_name(c));
        fprintf(out, ": {\"pass\": %u, \"fail\": %u, \"skip\": %u, \"error\": %u, \"seconds\": %.3f}",
                l->judged[c][PC_PROP_PASS], l->judged[c][PC_PROP_FAIL], l->judged[c][PC_PROP_SKIP],
                l->judged[c][PC_PROP_ERROR], l->prop_seconds[c]);
    }
    fprintf(out, "\n  },\n  \"rows\": [");
    for (size_t i = 0; i < l->n_rows; i++) {
        const check_row *r = &l->rows[i];
        fprintf(out, "%s\n    {\"pass\": ", i ? "," : "");
        pc_json_string(out, r->pass);
        fprintf(out, ", \"ep\": ");
        pc_json_string(out, r->provider[0] ? r->provider : NULL);
        fprintf(out, ", \"outcomes\": {");
        bool f1 = true;
        for (size_t c = 0; c < N_COLUMNS; c++) {
            if (!r->cell[c]) continue;
            fprintf(out, "%s", f1 ? "" : ", ");
            f1 = false;
            pc_json_string(out, column_name(c));
            fprintf(out, ": ");
            pc_json_string(out, pc_prop_outcome_name((pc_prop_outcome)(r->cell[c] - 1)));
        }
        fprintf(out, "}}");
    }
    fprintf(out, "\n  ],\n  \"failures\": [");
    for (size_t i = 0; i < l->n_fails; i++) {
        const check_failure *f = &l->fails[i];
        char sig[160];
        pc_failure_signature(&f->f, sig, sizeof sig);
        fprintf(out, "%s\n    {\"signature\": ", i ? "," : "");
        pc_json_string(out, sig);
        fprintf(out, ", \"outcome\": ");
        pc_json_string(out, pc_prop_outcome_name(f->f.outcome));
        fprintf(out, ", \"count\": %u, \"message\": ", f->count);
        pc_json_string(out, f->f.message);
        fprintf(out, "}");
    }
    fprintf(out, "\n  ],\n  \"skips\": [");
    for (size_t i = 0; i < l->n_skips; i++) {
        fprintf(out, "%s\n    {\"property\": ", i ? "," : "");
        pc_json_string(out, l->skips[i].property);
        fprintf(out, ", \"count\": %u, \"reason\": ", l->skips[i].count);
        pc_json_string(out, l->skips[i].message);
        fprintf(out, "}");
    }
    fprintf(out, "\n  ],\n  \"pass_seconds\": {");
    for (size_t i = 0; i < l->n_times; i++) {
        fprintf(out, "%s\n    ", i ? "," : "");
        pc_json_string(out, l->times[i].pass);
        fprintf(out, ": %.4f", l->times[i].seconds);
    }
    fprintf(out, "\n  }\n}\n");
}

/* JUnit XML for CI: one testsuite per property that judged, one testcase per pass run it judged
 * ("pass (EP)"), with a failure, error or skipped element carrying the signature or reason and the message.
 */
static void junit_write(FILE *out, const void *vctx)
{
    const json_ctx *j = vctx;
    const check_log *l = j->l;
    uint32_t total[PC_PROP_OUTCOME_COUNT] = {0};
    for (size_t c = 0; c < N_COLUMNS; c++)
        for (int o = 0; o < PC_PROP_OUTCOME_COUNT; o++)
            total[o] += l->judged[c][o];
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"passcheck check ", out);
    pc_xml_escape(out, j->a->model, PC_XML_ATTRIBUTE);
    fprintf(out, "\" tests=\"%u\" failures=\"%u\" errors=\"%u\" skipped=\"%u\" time=\"%.3f\">\n",
            total[PC_PROP_PASS] + total[PC_PROP_FAIL] + total[PC_PROP_SKIP] + total[PC_PROP_ERROR],
            total[PC_PROP_FAIL], total[PC_PROP_ERROR], total[PC_PROP_SKIP], j->seconds);
    for (size_t c = 0; c < N_COLUMNS; c++) {
        if (!column_used(l, c)) continue;
        const uint32_t *n = l->judged[c];
        fputs("  <testsuite name=\"", out);
        pc_xml_escape(out, column_name(c), PC_XML_ATTRIBUTE);
        fprintf(out, "\" tests=\"%u\" failures=\"%u\" errors=\"%u\" skipped=\"%u\" time=\"%.3f\">\n",
                n[PC_PROP_PASS] + n[PC_PROP_FAIL] + n[PC_PROP_SKIP] + n[PC_PROP_ERROR], n[PC_PROP_FAIL],
                n[PC_PROP_ERROR], n[PC_PROP_SKIP], l->prop_seconds[c]);
        for (size_t i = 0; i < l->n_rows; i++) {
            const check_row *r = &l->rows[i];
            if (!r->cell[c]) continue;
            char label[160];
            snprintf(label, sizeof label, "%s%s%s%s", r->pass, r->provider[0] ? " (" : "", r->provider,
                     r->provider[0] ? ")" : "");
            fputs("    <testcase classname=\"", out);
            pc_xml_escape(out, column_name(c), PC_XML_ATTRIBUTE);
            fputs("\" name=\"", out);
            pc_xml_escape(out, label, PC_XML_ATTRIBUTE);
            pc_prop_outcome o = (pc_prop_outcome)(r->cell[c] - 1);
            uint32_t d = r->detail[c];
            if (o == PC_PROP_PASS || !d) {
                fputs("\"/>\n", out);
            } else if (o == PC_PROP_SKIP) {
                fputs("\">\n      <skipped message=\"", out);
                pc_xml_escape(out, l->skips[d - 1].message, PC_XML_ATTRIBUTE);
                fputs("\"/>\n    </testcase>\n", out);
            } else {
                const char *tag = o == PC_PROP_ERROR ? "error" : "failure";
                const pc_failure *f = &l->fails[d - 1].f;
                char sig[160];
                pc_failure_signature(f, sig, sizeof sig);
                fprintf(out, "\">\n      <%s message=\"", tag);
                pc_xml_escape(out, sig, PC_XML_ATTRIBUTE);
                fputs("\">", out);
                pc_xml_escape(out, f->message, PC_XML_TEXT);
                fprintf(out, "</%s>\n    </testcase>\n", tag);
            }
        }
        fputs("  </testsuite>\n", out);
    }
    fputs("</testsuites>\n", out);
}

/* ---- shrinking each distinct failure ---------------------------------------------------------------- */

/* Shrinks f (one property, stopping after its pass) into a repro folder under out; false when it could not.
 */
static bool shrink_one(const pc_case *kase, const check_args *a, const pc_failure *f)
{
    pc_error err;
    pc_error_clear(&err);
    char sig[160];
    pc_failure_signature(f, sig, sizeof sig);
    pc_check_config cc;
    pc_check_config_default(&cc);
    cc.level = a->level;
    /* a crash or hang happened after f->pass, in the next pass or in some property's check of it: the
     * shrinker keeps the check's properties and runs the whole pipeline (isolated: crashes shrink) */
    bool isolation = strcmp(f->property, "crash") == 0 || strcmp(f->property, "timeout") == 0;
    if (isolation) {
        if (a->property && strcmp(a->property, "all") != 0 &&
            pc_check_config_select(&cc, a->property, &err) != PC_OK)
            return false;
    } else if (strcmp(f->property, "pipeline") != 0) {
        if (pc_check_config_select(&cc, f->property, &err) != PC_OK) return false;
        if (strcmp(f->property, "alloc-failure") == 0) cc.alloc_every = true;
    }
    if (!isolation && strcmp(f->pass, "end-to-end") != 0) cc.stop_after_pass = f->pass;
    pc_shrink_options so;
    pc_shrink_options_default(&so);
    so.max_seconds = a->shrink_seconds;
    pc_shrink_result sr;
    memset(&sr, 0, sizeof sr);
    char *dir = NULL;
    bool ok = false;
    if (pc_shrink_model(kase, &cc, f, &so, &sr, &err) == PC_OK) {
        pc_repro_info info = {
            .check = &cc, .inject = a->inject, .original = f, .original_nodes = sr.nodes_before};
        if (pc_repro_write_in(a->out, &sr, &info, &dir, &err) == PC_OK) {
            printf("  %s: nodes %u -> %u in %.2f s: %s\n", sig, sr.nodes_before, sr.nodes_after, sr.seconds,
                   dir);
            ok = true;
        }
    }
    if (!ok) printf("  %s: not shrunk: %s: %s\n", sig, pc_status_name(err.status), err.message);
    free(dir);
    pc_shrink_result_free(&sr);
    return ok;
}

int pc_cmd_check(int argc, char **argv)
{
    check_args args = {
        .level = PC_LEVEL_MAX, .seed = PC_MODEL_CASE_SEED, .shrink_seconds = 10.0, .timeout = CHECK_TIMEOUT};
    int rc = args_parse(argc, argv, &args);
    if (rc != PC_EXIT_OK) {
        pc_cli_list_free(&args.dims);
        return rc;
    }
    pc_error err;
    pc_error_clear(&err);
    pc_check_config cc;
    pc_check_config_default(&cc);
    if (args.property && strcmp(args.property, "all") != 0 &&
        pc_check_config_select(&cc, args.property, &err) != PC_OK) {
        pc_cli_list_free(&args.dims);
        return pc_cli_usage_error(CHECK_CMD, "--property: %s", err.message);
    }
    cc.level = args.level;
    cc.keep_going = true;
    if (args.inject && pc_fault_enable_list(args.inject, &err) != PC_OK) {
        pc_cli_list_free(&args.dims);
        return pc_cli_usage_error(CHECK_CMD, "--inject: %s", err.message);
    }
    check_log log;
    memset(&log, 0, sizeof log);
    cc.on_outcome = on_outcome;
    cc.on_outcome_ctx = &log;
    cc.on_pass = on_pass;
    cc.on_pass_ctx = &log;

    pc_ep_registry *reg = NULL;
    const pc_ep **eps = NULL;
    uint32_t n_eps = 0;
    pc_case kase;
    memset(&kase, 0, sizeof kase);
    pc_check_result res;
    memset(&res, 0, sizeof res);
    char *dims = NULL;

    if ((args.json && (rc = pc_cli_check_writable(CHECK_CMD, "--json", args.json)) != PC_EXIT_OK) ||
        (args.junit && (rc = pc_cli_check_writable(CHECK_CMD, "--junit", args.junit)) != PC_EXIT_OK))
        goto done;
    rc = pc_cli_resolve_eps(CHECK_CMD, args.ep_file, args.ep_list, args.layer_assignment, &reg, &eps, &n_eps,
                            NULL);
    if (rc != PC_EXIT_OK) goto done;
    if ((rc = pc_cli_join_dims(CHECK_CMD, &args.dims, &dims)) != PC_EXIT_OK) goto done;
    pc_model_case_options mo;
    pc_model_case_options_default(&mo);
    mo.ep_list = args.ep_list;
    mo.ep_file = args.ep_file;
    mo.layer_assignment = args.layer_assignment;
    mo.inputs = args.inputs;
    mo.seed = args.seed;
    mo.dims = dims;
    mo.require_dims = true;
    if (pc_case_from_model(args.model, &mo, &kase, &err) != PC_OK) {
        /* the loader's and model_case's messages name the file or the graph input already */
        rc = err.status == PC_ERR_USAGE ? pc_cli_usage_error(CHECK_CMD, "%s: %s", args.model, err.message)
                                        : pc_cli_report(CHECK_CMD, &err);
        goto done;
    }
    printf("check: %s (%u nodes), EPs %s, level %d, inputs %s\n", args.model, kase.model->graph->n_nodes,
           args.ep_list, args.level, args.inputs ? args.inputs : "random");
    fflush(stdout);
    double t0 = pc_now_seconds();
    log.last_mark = t0;
    if (pc_case_check_isolated(&kase, &cc, args.timeout, &res, &err) != PC_OK) {
        pc_error_prefix(&err, "%s: ", args.model);
        rc = pc_cli_report(CHECK_CMD, &err);
        goto done;
    }
    if (res.failed &&
        (strcmp(res.failure.property, "crash") == 0 || strcmp(res.failure.property, "timeout") == 0))
        note_isolation_failure(&log, &res.failure);
    double seconds = pc_now_seconds() - t0;
    if (log.oom) {
        rc =
            pc_cli_report(CHECK_CMD, &(pc_error){.status = PC_ERR_NOMEM, .message = "out of memory logging"});
        goto done;
    }
    printf("\n");
    print_table(&log, cc.enabled);
    print_times(&log);
    uint32_t n_fail = 0, n_error = 0;
    for (size_t i = 0; i < log.n_fails; i++)
        *(log.fails[i].f.outcome == PC_PROP_ERROR ? &n_error : &n_fail) += log.fails[i].count;
    if (log.n_skips) {
        printf("\nskipped:\n");
        for (size_t i = 0; i < log.n_skips; i++)
            printf("  %s (%u): %s\n", log.skips[i].property, log.skips[i].count, log.skips[i].message);
    }
    if (log.n_fails) {
        printf("\nfailures:\n");
        for (size_t i = 0; i < log.n_fails; i++) {
            char sig[160], line[400];
            pc_failure_signature(&log.fails[i].f, sig, sizeof sig);
            first_line(log.fails[i].f.message, line, sizeof line);
            printf("  %s%s (%u): %s\n", log.fails[i].f.outcome == PC_PROP_ERROR ? "ERROR " : "", sig,
                   log.fails[i].count, line);
        }
    }
    char verdict[200];
    uint32_t total = 0;
    for (size_t c = 0; c < N_COLUMNS; c++)
        for (int o = 0; o < PC_PROP_OUTCOME_COUNT; o++)
            total += log.judged[c][o];
    if (n_fail)
        snprintf(verdict, sizeof verdict, "FAIL: %u failed and %u could not be judged of %u judgments",
                 n_fail, n_error, total);
    else if (n_error)
        snprintf(verdict, sizeof verdict, "ERROR: %u of %u judgments could not be made (no failure found)",
                 n_error, total);
    else if (!total)
        snprintf(verdict, sizeof verdict, "ERROR: nothing was judged (no pass changed the graph)");
    else
        snprintf(verdict, sizeof verdict, "PASS: %u judgments, none failed", total);
    printf("\nverdict: %s (%.2f s)\n", verdict, seconds);
    fflush(stdout);
    rc = n_fail || n_error || !total ? PC_EXIT_CHECK_FAILED : PC_EXIT_OK;
    if (args.shrink && n_fail) {
        printf("\nshrinking %zu distinct failure(s) into %s/:\n", log.n_fails, args.out);
        for (size_t i = 0; i < log.n_fails; i++) {
            const pc_failure *f = &log.fails[i].f;
            if (f->outcome != PC_PROP_FAIL) continue;
            /* a shrink judges its property up to the first failure: a later one of the same property is
             * reached only through the earlier one */
            size_t e = 0;
            while (e < i && strcmp(log.fails[e].f.property, f->property) != 0)
                e++;
            char sig[160], first[160];
            pc_failure_signature(f, sig, sizeof sig);
            if (e < i) {
                pc_failure_signature(&log.fails[e].f, first, sizeof first);
                printf("  %s: not shrunk: the same property fails first as %s (its repro is that one's)\n",
                       sig, first);
                continue;
            }
            shrink_one(&kase, &args, f);
        }
    }
    json_ctx j = {&args, &log, verdict, seconds};
    if (args.json) {
        int jrc = pc_cli_write_file_atomic(CHECK_CMD, "--json", args.json, json_write, &j);
        if (jrc != PC_EXIT_OK) rc = jrc;
    }
    if (args.junit) {
        int jrc = pc_cli_write_file_atomic(CHECK_CMD, "--junit", args.junit, junit_write, &j);
        if (jrc != PC_EXIT_OK) rc = jrc;
    }

done:
    fflush(stdout);
    free(dims);
    log_free(&log);
    pc_check_result_free(&res);
    pc_case_free(&kase);
    pc_ep_registry_free(reg);
    pc_cli_list_free(&args.dims);
    pc_fault_reset();
    return rc;
}

void pc_cmd_check_help(FILE *out)
{
    fprintf(
        out,
        "usage: passcheck check MODEL [--inputs DIR|FILES | --seed S] [--dim NAME=SIZE]... [--ep LIST]\n"
        "                       [--ep-file F] [--layer-assignment S] [--level N] [--property P,...|all]\n"
        "                       [--shrink] [--out DIR] [--shrink-time SEC] [--timeout SEC] [--json FILE]\n"
        "                       [--junit FILE] [--inject F]\n"
        "\n"
        "Runs the pass pipeline on MODEL with every property after every pass that changes the graph and\n"
        "at the end (the suite's properties and failure signatures), and prints a pass x property table,\n"
        "the time per pass and per property, the reasons for skipped checks, each distinct failure and a\n"
        "verdict. A failure does not stop the run: later passes are judged on the graph they were given.\n"
        "\n"
        "  --inputs DIR|FILES      input data: a folder of input_0.pb, input_1.pb, ... or comma-separated "
        ".pb\n"
        "                          files, one per graph input that is not an initializer\n"
        "  --seed S                random inputs from seed S (default %llu): floats in [-2, 2), integers in\n"
        "                          [0, 4)\n"
        "  --dim NAME=SIZE         the size of symbolic dim NAME for random inputs (repeatable; a symbolic\n"
        "                          dim without one is a usage error)\n"
        "  --ep LIST               EPs in priority order, e.g. nhwc,cpu (default cpu)\n"
        "  --ep-file F             add the EPs described in F (docs/ep.md)\n"
        "  --layer-assignment S    pin annotated nodes to EPs: 'nhwc(enc, =head); cpu(post)'\n"
        "  --level N               pipeline level 0..3 (default 3)\n"
        "  --property P,...|all    the properties to check (default all; passcheck suite "
        "--list-properties)\n"
        "  --shrink                shrink each distinct failure into a repro folder (as passcheck shrink)\n"
        "  --out DIR               where --shrink writes (default passcheck-failures)\n"
        "  --shrink-time SEC       shrink budget per failure in seconds (default 10)\n"
        "  --timeout SEC           the check runs in a child process: a crash is a failure "
        "(crash@PASS/SIGNAL,\n"
        "                          PASS the last pass finished) and so is running past SEC (default 3600)\n"
        "  --json FILE             the table, failures, skips and times as JSON\n"
        "  --junit FILE            JUnit XML: a testsuite per property, a testcase per pass run it judged\n"
        "  --inject FAULTS         enable planted faults, comma-separated (passcheck suite --list-faults):\n"
        "                          see what the checks catch on this model\n"
        "\n"
        "exit codes: 0 every judgment passed, 1 a property failed or could not judge (or nothing was\n"
        "judged), 2 usage error (a symbolic dim without --dim included), 3 bad or unreadable MODEL,\n"
        "--inputs (wrong count, type or shape) or --ep-file, 4 internal error\n",
        (unsigned long long)PC_MODEL_CASE_SEED);
}
