/* passcheck report DIR [-o FILE]: one self-contained HTML page for a failure folder (what `passcheck suite`,
 * `check --shrink` and `shrink` write): a summary table of its repro folders, then each repro with its
 * message, where it came from, its replay and shrink commands and its before/after picture. The pictures are
 * embedded as data: URIs of the SVG files graphviz wrote (images never run scripts, whatever a model's names
 * hold), so the page can be mailed or attached to a CI run as one file. */
#include <dirent.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "properties/runner/repro.h"
#include "tools/cli.h"

#define REPORT_CMD "report"

enum { REPORT_MAX_SVG = 16 << 20 }; /* a picture larger than this is linked, not embedded */

typedef struct report_args {
    const char *dir;
    const char *out;
} report_args;

static const pc_cli_opt report_opts[] = {
    {"--out", "-o", PC_CLI_STRING, offsetof(report_args, out)},
};

void pc_cmd_report_help(FILE *out)
{
    fprintf(
        out,
        "usage: passcheck report DIR [-o FILE]\n\n"
        "Renders a failure folder (passcheck suite --out, check --shrink --out, shrink --out) as one\n"
        "self-contained HTML page: a summary table of its repro folders (signature, family, seed and case,\n"
        "EPs, message), then each repro with its replay and shrink commands and its pictures, embedded:\n"
        "before.svg and after.svg side by side where the folder has them, else repro.svg. Folders without a\n"
        "case.txt are not repros and are left out.\n\n"
        "  -o, --out FILE   where to write the page (default: DIR/report.html)\n\n"
        "Exit: 0 written; 2 usage; 3 DIR unreadable, a repro folder's case.txt malformed, FILE "
        "unwritable.\n");
}

typedef struct repro_entry {
    char *name; /* the folder's name in DIR */
    pc_repro_case rc;
    char signature[160];
    /* before.svg and after.svg (a failure after a pass: the graph either side of it, what changed outlined),
     * else repro.svg (the repro's model); NULL where missing */
    char *svg[2];
    size_t svg_size[2];
    bool pair;
} repro_entry;

typedef struct report {
    const char *dir;
    repro_entry *items;
    size_t n, cap;
} report;

static void report_free(report *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->items[i].name);
        pc_repro_case_free(&r->items[i].rc);
        free(r->items[i].svg[0]);
        free(r->items[i].svg[1]);
    }
    free(r->items);
    memset(r, 0, sizeof *r);
}

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const repro_entry *)a)->name, ((const repro_entry *)b)->name);
}

/* Every subfolder of r->dir with a case.txt, loaded and sorted by name. Returns an exit code. */
static int report_collect(report *r)
{
    DIR *d = opendir(r->dir);
    if (!d) {
        pc_error err;
        pc_error_set(&err, PC_ERR_IO, "cannot read DIR '%s'", r->dir);
        return pc_cli_report(REPORT_CMD, &err);
    }
    int rc = PC_EXIT_OK;
    struct dirent *e;
    while (rc == PC_EXIT_OK && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char *sub = pc_path_join(r->dir, e->d_name), *case_txt = sub ? pc_path_join(sub, "case.txt") : NULL;
        FILE *probe = case_txt ? fopen(case_txt, "rb") : NULL;
        if (probe) fclose(probe);
        if (!sub || !case_txt) {
            rc = pc_cli_report(REPORT_CMD, &(pc_error){.status = PC_ERR_NOMEM, .message = "out of memory"});
        } else if (probe) {
            size_t bytes;
            if (r->n == r->cap) {
                size_t cap = r->cap ? 2 * r->cap : 16;
                repro_entry *grown =
                    pc_size_mul(cap, sizeof *grown, &bytes) ? realloc(r->items, bytes) : NULL;
                if (!grown) {
                    rc = pc_cli_report(REPORT_CMD,
                                       &(pc_error){.status = PC_ERR_NOMEM, .message = "out of memory"});
                    goto next;
                }
                r->items = grown;
                r->cap = cap;
            }
            repro_entry *it = &r->items[r->n];
            memset(it, 0, sizeof *it);
            pc_error err;
            pc_error_clear(&err);
            if (!(it->name = strdup(e->d_name))) {
                rc = pc_cli_report(REPORT_CMD,
                                   &(pc_error){.status = PC_ERR_NOMEM, .message = "out of memory"});
                goto next;
            }
            r->n++;
            if (pc_repro_case_load(sub, &it->rc, &err) != PC_OK) {
                /* the loader serves --replay, where the folder is an argument; here it is an input file */
                if (err.status == PC_ERR_USAGE) err.status = PC_ERR_VALUE;
                rc = pc_cli_report(REPORT_CMD, &err);
                goto next;
            }
            pc_failure_signature(&it->rc.failure, it->signature, sizeof it->signature);
            /* a missing picture (graphviz was not installed) or one too large is left out, not an error */
            static const char *const files[3] = {"before.svg", "after.svg", "repro.svg"};
            for (int k = 0; k < 3; k++) {
                if (k == 2 && it->svg[0] && it->svg[1]) break;
                char *svg_path = pc_path_join(sub, files[k]);
                int slot = k == 2 ? 0 : k;
                free(it->svg[slot]);
                it->svg[slot] = NULL;
                if (svg_path && pc_file_read_all(svg_path, REPORT_MAX_SVG, &it->svg[slot],
                                                 &it->svg_size[slot], &err) != PC_OK)
                    it->svg[slot] = NULL;
                free(svg_path);
            }
            it->pair = it->svg[0] && it->svg[1];
            if (!it->pair) {
                free(it->svg[1]);
                it->svg[1] = NULL;
            }
        }
    next:
        free(case_txt);
        free(sub);
    }
    closedir(d);
    if (rc == PC_EXIT_OK && r->n) qsort(r->items, r->n, sizeof *r->items, entry_cmp);
    return rc;
}

/* Text in the page: the project's XML escaper (markup characters as entities, malformed UTF-8 and control
 * bytes replaced), which HTML5 reads the same. */
static void text(FILE *out, const char *s)
{
    pc_xml_escape(out, s, PC_XML_TEXT);
}

/* DIR/NAME of a repro folder, as the commands on the page name it. */
static void repro_dir(FILE *out, const report *r, const repro_entry *it)
{
    text(out, r->dir);
    fputc('/', out);
    text(out, it->name);
}

static void base64(FILE *out, const unsigned char *p, size_t n)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        unsigned v =
            (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        fputc(digits[v >> 18 & 63], out);
        fputc(digits[v >> 12 & 63], out);
        fputc(i + 1 < n ? digits[v >> 6 & 63] : '=', out);
        fputc(i + 2 < n ? digits[v & 63] : '=', out);
    }
}

static void write_page(FILE *out, const void *vctx)
{
    const report *r = vctx;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>passcheck report: ",
          out);
    text(out, r->dir);
    fputs("</title>\n<style>\n"
          "body{font-family:sans-serif;margin:1.5em;color:#222}\n"
          "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:.25em .5em;text-align:left;"
          "vertical-align:top}\n"
          "th{background:#eee}code,pre{background:#f4f4f4}pre{padding:.5em;white-space:pre-wrap}\n"
          "section{border-top:2px solid #888;margin-top:2em}img{max-width:100%;border:1px solid #ddd}\n"
          ".fail{color:#a00}.error{color:#a60}\n"
          "</style>\n</head>\n<body>\n<h1>passcheck report</h1>\n<p>Folder <code>",
          out);
    text(out, r->dir);
    fprintf(out, "</code>: %zu repro%s.</p>\n", r->n, r->n == 1 ? "" : "s");
    if (r->n) {
        fputs("<table id=\"summary\">\n<tr><th>#</th><th>signature</th><th>outcome</th><th>family</th>"
              "<th>seed / case</th><th>EPs</th><th>message</th></tr>\n",
              out);
        for (size_t i = 0; i < r->n; i++) {
            const repro_entry *it = &r->items[i];
            const pc_repro_case *rc = &it->rc;
            const char *outcome = pc_prop_outcome_name(rc->failure.outcome);
            fprintf(out, "<tr class=\"repro\"><td>%zu</td><td><a href=\"#r%zu\">", i + 1, i + 1);
            text(out, it->signature);
            fprintf(out, "</a></td><td class=\"%s\">%s</td><td>", outcome, outcome);
            text(out, rc->has_gen ? rc->gen.family : "(a model)");
            fputs("</td><td>", out);
            if (rc->has_gen)
                fprintf(out, "%llu / %llu", (unsigned long long)rc->seed, (unsigned long long)rc->case_index);
            fputs("</td><td>", out);
            text(out, rc->ep_list);
            fputs("</td><td>", out);
            text(out, rc->failure.message);
            fputs("</td></tr>\n", out);
        }
        fputs("</table>\n", out);
    }
    for (size_t i = 0; i < r->n; i++) {
        const repro_entry *it = &r->items[i];
        const pc_repro_case *rc = &it->rc;
        fprintf(out, "<section id=\"r%zu\">\n<h2>%zu. ", i + 1, i + 1);
        text(out, it->signature);
        fputs("</h2>\n<p>Property <b>", out);
        text(out, rc->failure.property);
        fputs("</b> after pass <b>", out);
        text(out, rc->failure.pass);
        fputs("</b>", out);
        if (rc->inject) {
            fputs(", planted fault <code>", out);
            text(out, rc->inject);
            fputs("</code>", out);
        }
        fputs(". Folder <code>", out);
        text(out, it->name);
        fputs("</code>.</p>\n<pre class=\"message\">", out);
        text(out, rc->failure.message);
        fputs("</pre>\n<p>Replay (checks the same case again, writes nothing):</p>\n<pre class=\"replay\">"
              "passcheck suite --replay ",
              out);
        repro_dir(out, r, it);
        fputs("</pre>\n<p>Shrink the model further:</p>\n<pre class=\"shrink\">passcheck shrink ", out);
        text(out, rc->model_path);
        fputs(" --property ", out);
        text(out, rc->failure.property);
        fputs(" --pass ", out);
        text(out, rc->failure.pass);
        fputs(" --ep ", out);
        text(out, rc->ep_list);
        if (rc->ep_text) {
            fputs(" --ep-file ", out);
            repro_dir(out, r, it);
            fputs("/eps.txt", out);
        }
        if (rc->layer_assignment) {
            fputs(" --layer-assignment '", out);
            text(out, rc->layer_assignment);
            fputc('\'', out);
        }
        for (uint32_t k = 0; k < rc->n_inputs; k++) {
            fputs(k ? "," : " --inputs ", out);
            text(out, rc->input_paths[k]);
        }
        fputs(" --out DIR</pre>\n", out);
        if (it->pair) {
            fputs("<p>The graph before and after the pass (what it added, changed or removed outlined):</p>\n"
                  "<table class=\"pair\"><tr><th>before</th><th>after</th></tr><tr>",
                  out);
            for (int k = 0; k < 2; k++) {
                fprintf(out, "<td><img class=\"picture\" alt=\"%s\" src=\"data:image/svg+xml;base64,",
                        k ? "after" : "before");
                base64(out, (const unsigned char *)it->svg[k], it->svg_size[k]);
                fputs("\"></td>", out);
            }
            fputs("</tr></table>\n", out);
        } else if (it->svg[0]) {
            fputs("<p>The repro's graph:</p>\n"
                  "<img class=\"picture\" alt=\"repro\" src=\"data:image/svg+xml;base64,",
                  out);
            base64(out, (const unsigned char *)it->svg[0], it->svg_size[0]);
            fputs("\">\n", out);
        } else {
            fputs(
                "<p class=\"nopicture\">No picture (repro.svg missing: graphviz was not installed, or it is "
                "too large to embed); repro.dot holds the graph.</p>\n",
                out);
        }
        fputs("</section>\n", out);
    }
    fputs("</body>\n</html>\n", out);
}

int pc_cmd_report(int argc, char **argv)
{
    report_args args = {0};
    static const pc_cli_positional pos = {"DIR", PC_CLI_STRING, offsetof(report_args, dir)};
    int rc = pc_cli_parse_args(REPORT_CMD, argc, argv, report_opts,
                               sizeof report_opts / sizeof report_opts[0], &args, &pos);
    if (rc != PC_EXIT_OK) return rc;
    if (args.out && !*args.out) return pc_cli_usage_error(REPORT_CMD, "empty --out");
    report r = {.dir = args.dir};
    rc = report_collect(&r);
    char *out = NULL;
    if (rc == PC_EXIT_OK) {
        out = args.out ? strdup(args.out) : pc_path_join(args.dir, "report.html");
        if (!out)
            rc = pc_cli_report(REPORT_CMD, &(pc_error){.status = PC_ERR_NOMEM, .message = "out of memory"});
    }
    if (rc == PC_EXIT_OK) rc = pc_cli_write_file_atomic(REPORT_CMD, "--out", out, write_page, &r);
    if (rc == PC_EXIT_OK) printf("report: %zu repro%s -> %s\n", r.n, r.n == 1 ? "" : "s", out);
    free(out);
    report_free(&r);
    return rc;
}
