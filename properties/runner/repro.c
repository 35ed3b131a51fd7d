/* Repro folders (pc_repro_write in shrink.h) and reading their case.txt back (repro.h). A folder is built
 * under DIR.tmp.<pid> and renamed into place only when every file is written, so a crash or a full disk never
 * leaves a half-written repro, and an older repro at DIR is replaced only by a complete new one. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "properties/runner/repro.h"
#include "properties/runner/util.h"

/* ---------------------------------------------------------------------------------------------------------------
 * Small helpers: escaping into a growable string (pc_strbuf, core/internal.h), paths, files.
 */
/* case.txt value escaping (repro.h) */
static void sb_escaped(pc_strbuf *b, const char *s)
{
    for (const char *p = s ? s : ""; *p; p++) {
        switch (*p) {
        case '\\':
            pc_strbuf_printf(b, "\\\\");
            break;
        case '\n':
            pc_strbuf_printf(b, "\\n");
            break;
        case '\r':
            pc_strbuf_printf(b, "\\r");
            break;
        case '\t':
            pc_strbuf_printf(b, "\\t");
            break;
        default:
            pc_strbuf_printf(b, "%c", *p);
            break;
        }
    }
}

/* A POSIX-shell single-quoted word (for the replay commands in README.md). */
static void sb_shell(pc_strbuf *b, const char *s)
{
    bool plain = *s != '\0';
    for (const char *p = s; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:@=+", *p))
            plain = false;
    if (plain) {
        pc_strbuf_printf(b, "%s", s);
        return;
    }
    pc_strbuf_printf(b, "'");
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            pc_strbuf_printf(b, "'\\''");
        else
            pc_strbuf_printf(b, "%c", *p);
    }
    pc_strbuf_printf(b, "'");
}

static pc_status write_bytes(const char *dir, const char *name, const void *data, size_t size, pc_error *err)
{
    char *path = pc_path_join(dir, name);
    if (!path) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    pc_status st = PC_OK;
    FILE *f = fopen(path, "wb");
    if (!f) {
        st = pc_error_set(err, PC_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    } else {
        if (size && fwrite(data, 1, size, f) != size)
            st = pc_error_set(err, PC_ERR_IO, "%s: write failed", path);
        if (fclose(f) != 0 && st == PC_OK)
            st = pc_error_set(err, PC_ERR_IO, "%s: close failed: %s", path, strerror(errno));
    }
    free(path);
    return st;
}

/* Removes a folder we wrote (files and nested folders; symlinks are unlinked, never followed). */
static int remove_tree(const char *path, int depth)
{
    DIR *d = opendir(path);
    if (!d) return unlink(path);
    if (depth > 8) {
        closedir(d);
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char *p = pc_path_join(path, e->d_name);
        if (!p) {
            rc = -1;
            continue;
        }
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            rc |= remove_tree(p, depth + 1);
        else
            rc |= unlink(p);
        free(p);
    }
    closedir(d);
    return rmdir(path) | rc;
}

/* mkdir -p of the folder that will hold DIR. */
static pc_status make_parents(const char *dir, pc_error *err)
{
    char *p = strdup(dir);
    if (!p) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        p[--n] = '\0';
    char *slash = strrchr(p, '/');
    if (!slash || slash == p) {
        free(p);
        return PC_OK;
    }
    *slash = '\0';
    for (char *q = p + 1; *q; q++) {
        if (*q != '/') continue;
        *q = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            pc_status st = pc_error_set(err, PC_ERR_IO, "%s: cannot create folder: %s", p, strerror(errno));
            free(p);
            return st;
        }
        *q = '/';
    }
    pc_status st = PC_OK;
    if (mkdir(p, 0755) != 0 && errno != EEXIST)
        st = pc_error_set(err, PC_ERR_IO, "%s: cannot create folder: %s", p, strerror(errno));
    free(p);
    return st;
}

static bool find_on_path(const char *prog, char *out, size_t size)
{
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        if (n && n + strlen(prog) + 2 <= size) {
            snprintf(out, size, "%.*s/%s", (int)n, path, prog);
            if (access(out, X_OK) == 0) return true;
        }
        if (!colon) break;
        path = colon + 1;
    }
    return false;
}

/* `dot -Tsvg IN -o OUT`, with a time limit (a huge graph must not hang a suite). Returns "" on success,
 * otherwise why there is no SVG (for the README). */
static const char *run_graphviz(const char *dot_path, const char *svg_path, char *why, size_t why_size)
{
    char dot[PATH_MAX];
    if (!find_on_path("dot", dot, sizeof dot)) {
        snprintf(why, why_size, "graphviz `dot` is not installed");
        return why;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, why_size, "cannot fork graphviz: %s", strerror(errno));
        return why;
    }
    if (pid == 0) {
        FILE *devnull = freopen("/dev/null", "w", stdout);
        (void)devnull;
        devnull = freopen("/dev/null", "w", stderr);
        (void)devnull;
        execl(dot, dot, "-Tsvg", dot_path, "-o", svg_path, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    for (int waited_ms = 0;; waited_ms += 10) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) {
            snprintf(why, why_size, "waiting for graphviz failed: %s", strerror(errno));
            return why;
        }
        if (waited_ms > 30000) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            unlink(svg_path);
            snprintf(why, why_size, "graphviz took longer than 30 s");
            return why;
        }
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        unlink(svg_path);
        snprintf(why, why_size, "graphviz `dot` failed (status %d)", status);
        return why;
    }
    why[0] = '\0';
    return why;
}

/* DIR/NAME.dot and DIR/NAME.svg, malloc'ed; false when out of memory (both freed). */
static bool picture_paths(const char *dir, const char *name, char **dot_path, char **svg_path)
{
    char file[64];
    snprintf(file, sizeof file, "%s.dot", name);
    *dot_path = pc_path_join(dir, file);
    snprintf(file, sizeof file, "%s.svg", name);
    *svg_path = pc_path_join(dir, file);
    if (*dot_path && *svg_path) return true;
    free(*dot_path);
    free(*svg_path);
    *dot_path = *svg_path = NULL;
    return false;
}

/* Closes a picture's stream after writing it ended with st; a close failure is the error when st was OK. */
static pc_status picture_close(FILE *f, const char *dot_path, pc_status st, pc_error *err)
{
    if (fclose(f) != 0 && st == PC_OK) st = pc_error_set(err, PC_ERR_IO, "%s: close failed", dot_path);
    return st;
}

/* NAME.dot (and NAME.svg when graphviz works) for a model. */
static pc_status write_picture(const char *dir, const char *name, const pc_model *m, char *svg_why,
                               size_t why_size, pc_error *err)
{
    char *dot_path, *svg_path;
    if (!picture_paths(dir, name, &dot_path, &svg_path))
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    pc_status st;
    FILE *f = fopen(dot_path, "w");
    if (!f) {
        st = pc_error_set(err, PC_ERR_IO, "%s: cannot create: %s", dot_path, strerror(errno));
    } else {
        st = pc_model_write_dot(m, f, err);
        if (st != PC_OK) pc_error_prefix(err, "%s: ", dot_path);
        st = picture_close(f, dot_path, st, err);
        if (st == PC_OK) run_graphviz(dot_path, svg_path, svg_why, why_size);
    }
    free(dot_path);
    free(svg_path);
    return st;
}

/* before.dot and after.dot (and their SVGs) drawn as one pair: the pass's added, changed and removed nodes
 * outlined (pc_model_write_dot_pair matches the two graphs once). */
static pc_status write_pair_pictures(const char *dir, pc_model *const m[2], char *svg_why, size_t why_size,
                                     pc_error *err)
{
    const char *names[2] = {"before", "after"};
    char *dot_path[2] = {NULL, NULL}, *svg_path[2] = {NULL, NULL};
    FILE *f[2] = {NULL, NULL};
    pc_status st = PC_OK;
    for (int k = 0; k < 2 && st == PC_OK; k++) {
        if (!picture_paths(dir, names[k], &dot_path[k], &svg_path[k]))
            st = pc_error_set(err, PC_ERR_NOMEM, "out of memory");
        else if (!(f[k] = fopen(dot_path[k], "w")))
            st = pc_error_set(err, PC_ERR_IO, "%s: cannot create: %s", dot_path[k], strerror(errno));
    }
    if (st == PC_OK && (st = pc_model_write_dot_pair(m[0], m[1], f[0], f[1], err)) != PC_OK)
        pc_error_prefix(err, "%s, %s: ", dot_path[0], dot_path[1]);
    for (int k = 0; k < 2; k++)
        if (f[k]) st = picture_close(f[k], dot_path[k], st, err);
    for (int k = 0; k < 2 && st == PC_OK; k++) {
        char why[256] = "";
        run_graphviz(dot_path[k], svg_path[k], why, sizeof why);
        if (why[0] && !svg_why[0]) snprintf(svg_why, why_size, "%s", why);
    }
    for (int k = 0; k < 2; k++) {
        free(dot_path[k]);
        free(svg_path[k]);
    }
    return st;
}

static uint32_t live_nodes(const pc_model *m)
{
    return m && m->graph ? m->graph->n_nodes : 0;
}

static void format_signature(const pc_failure *f, char *buf, size_t size)
{
    pc_failure_signature(f, buf, size);
}

/* ---------------------------------------------------------------------------------------------------------------
 * case.txt
 */

/* The EPs the failure was found with: a check configuration's override (suite --ep) wins over the case's own
 * list, so replaying case.txt (which has no override) runs the same EPs. */
static const char *effective_ep_list(const pc_shrink_result *r, const pc_repro_info *info)
{
    if (info->check && info->check->ep_override) return info->check->ep_override;
    return r->kase.ep_list ? r->kase.ep_list : "cpu";
}
static void write_case_txt(pc_strbuf *b, const pc_shrink_result *r, const pc_repro_info *info,
                           bool has_ep_file)
{
    const pc_failure *f = &r->check.failure;
    char sig[160];
    format_signature(f, sig, sizeof sig);
    pc_strbuf_printf(b, "# passcheck repro case: read back by `passcheck suite --replay DIR` (format: "
                        "properties/runner/repro.h)\n");
    pc_strbuf_printf(b, "version=%d\nsignature=", PC_REPRO_CASE_VERSION);
    sb_escaped(b, sig);
    pc_strbuf_printf(b, "\nproperty=");
    sb_escaped(b, f->property);
    pc_strbuf_printf(b, "\npass=");
    sb_escaped(b, f->pass);
    pc_strbuf_printf(b, "\nkind=");
    sb_escaped(b, f->kind);
    pc_strbuf_printf(b, "\noutcome=%s\nmessage=", f->outcome == PC_PROP_ERROR ? "error" : "fail");
    sb_escaped(b, f->message);
    pc_strbuf_printf(b, "\nseed=%" PRIu64 "\ncase_index=%" PRIu64 "\n", info->seed, info->case_index);
    const pc_gen_config *g = info->gen;
    pc_strbuf_printf(b, "family=");
    sb_escaped(b, g && g->family ? g->family : "");
    pc_strbuf_printf(b, "\n");
    if (g) {
        pc_strbuf_printf(b, "max_nodes=%" PRIu32 "\nmax_elements=%" PRIu64 "\nmax_rank=%" PRId32 "\n",
                         g->max_nodes, g->max_elements, g->max_rank);
        pc_strbuf_printf(b, "allow_special=%d\nannotate=%d\nrandom_eps=%d\n", g->allow_special, g->annotate,
                         g->random_eps);
        char *ch = pc_choices_format(r->choices, r->n_choices);
        if (!ch && r->n_choices) b->oom = true;
        pc_strbuf_printf(b, "choices=%s\n", ch ? ch : "");
        free(ch);
        pc_strbuf_printf(b, "graph_edited=%d\n", r->graph_edited);
    }
    pc_strbuf_printf(b, "ep_list=");
    sb_escaped(b, effective_ep_list(r, info));
    pc_strbuf_printf(b, "\n");
    if (has_ep_file) pc_strbuf_printf(b, "ep_file=eps.txt\n");
    if (r->kase.layer_assignment) {
        pc_strbuf_printf(b, "layer_assignment=");
        sb_escaped(b, r->kase.layer_assignment);
        pc_strbuf_printf(b, "\n");
    }
    const pc_check_config *cc = info->check;
    if (cc) {
        pc_strbuf_printf(b, "properties=");
        bool first = true;
        for (size_t i = 0; i < pc_property_count() && i < PC_MAX_PROPERTIES; i++) {
            if (!cc->enabled[i]) continue;
            pc_strbuf_printf(b, "%s%s", first ? "" : ",", pc_property_at(i)->name);
            first = false;
        }
        pc_strbuf_printf(b, "\nlevel=%d\noracle_ort=%d\n", cc->level, cc->oracle_ort);
        if (cc->ort_dir) {
            pc_strbuf_printf(b, "ort_dir=");
            sb_escaped(b, cc->ort_dir);
            pc_strbuf_printf(b, "\n");
        }
        if (cc->stop_after_pass) {
            pc_strbuf_printf(b, "stop_after_pass=");
            sb_escaped(b, cc->stop_after_pass);
            pc_strbuf_printf(b, "\n");
        }
        pc_strbuf_printf(b, "exact_oracle_max_nodes=%" PRIu32 "\n", cc->exact_oracle_max_nodes);
        if (cc->alloc_every || r->alloc_every) pc_strbuf_printf(b, "alloc_every=1\n");
    }
    if (info->inject && *info->inject) {
        pc_strbuf_printf(b, "inject=");
        sb_escaped(b, info->inject);
        pc_strbuf_printf(b, "\n");
    }
    pc_strbuf_printf(b, "model=repro.onnx\ninputs=%" PRIu32 "\n", r->kase.n_inputs);
}

/* ---------------------------------------------------------------------------------------------------------------
 * README.md
 */
static void write_replay_shrink(pc_strbuf *b, const char *dir, const pc_shrink_result *r,
                                const pc_repro_info *info, bool has_ep_file)
{
    const pc_failure *f = &r->check.failure;
    char *model = pc_path_join(dir, "repro.onnx");
    pc_strbuf_printf(b, "passcheck shrink ");
    sb_shell(b, model ? model : "repro.onnx");
    free(model);
    pc_strbuf_printf(b, " --property ");
    sb_shell(b, f->property);
    if (f->pass[0]) {
        pc_strbuf_printf(b, " --pass ");
        sb_shell(b, f->pass);
    }
    pc_strbuf_printf(b, " --inputs ");
    sb_shell(b, dir);
    pc_strbuf_printf(b, " --ep ");
    sb_shell(b, effective_ep_list(r, info));
    if (has_ep_file) {
        char *eps = pc_path_join(dir, "eps.txt");
        pc_strbuf_printf(b, " --ep-file ");
        sb_shell(b, eps ? eps : "eps.txt");
        free(eps);
    }
    if (r->kase.layer_assignment) {
        pc_strbuf_printf(b, " --layer-assignment ");
        sb_shell(b, r->kase.layer_assignment);
    }
    if (info->check) pc_strbuf_printf(b, " --level %d", info->check->level);
    if (info->inject && *info->inject) {
        pc_strbuf_printf(b, " --inject ");
        sb_shell(b, info->inject);
    }
    pc_strbuf_printf(b, "\n");
}

static void write_readme(pc_strbuf *b, const char *dir, const pc_shrink_result *r, const pc_repro_info *info,
                         bool has_ep_file, bool has_before_after, const char *svg_why)
{
    const pc_failure *f = &r->check.failure;
    char sig[160], osig[160];
    format_signature(f, sig, sizeof sig);
    const pc_failure *orig = info->original ? info->original : f;
    format_signature(orig, osig, sizeof osig);
    pc_strbuf_printf(b, "# passcheck repro: `%s`\n\n", sig);
    pc_strbuf_printf(b, "Property **%s** %s", f->property,
                     f->outcome == PC_PROP_ERROR ? "broke (harness error)" : "failed");
    bool isolation = strcmp(f->property, "crash") == 0 || strcmp(f->property, "timeout") == 0;
    if (isolation && f->pass[0])
        pc_strbuf_printf(
            b,
            ": the checking process died after pass **%s** finished (in the pass that followed or "
            "in a property's check of it)",
            f->pass);
    else if (!r->check.before_bytes && f->pass[0])
        pc_strbuf_printf(b, " at the final (%s) check", f->pass);
    else if (f->pass[0])
        pc_strbuf_printf(b, " after pass **%s**", f->pass);
    if (f->kind[0]) pc_strbuf_printf(b, " (kind `%s`)", f->kind);
    pc_strbuf_printf(b, ":\n\n> ");
    for (const char *p = f->message; *p; p++)
        pc_strbuf_printf(b, *p == '\n' ? "\n> " : "%c", *p);
    pc_strbuf_printf(b, "\n\n| | signature | nodes |\n|---|---|---|\n");
    pc_strbuf_printf(b, "| found | `%s` | %" PRIu32 " |\n", osig,
                     info->original_nodes ? info->original_nodes : r->nodes_before);
    pc_strbuf_printf(b, "| shrunk (repro.onnx) | `%s` | %" PRIu32 " |\n\n", sig, live_nodes(r->kase.model));
    pc_strbuf_printf(b, "Shrinking: %" PRIu32 " candidate checks, %" PRIu32 " accepted, %.2f s%s.\n\n",
                     r->checks, r->accepted, r->seconds,
                     r->budget_exhausted ? " (budget exhausted: a smaller repro may exist)" : "");

    pc_strbuf_printf(b, "## Case\n\n");
    if (info->gen) {
        const pc_gen_config *g = info->gen;
        pc_strbuf_printf(b, "- suite seed %" PRIu64 ", case index %" PRIu64 ", family `%s`\n", info->seed,
                         info->case_index, g->family ? g->family : "");
        pc_strbuf_printf(b,
                         "- generator: max_nodes %" PRIu32 ", max_elements %" PRIu64 ", max_rank %" PRId32
                         ", allow_special %d, annotate %d, random_eps %d\n",
                         g->max_nodes, g->max_elements, g->max_rank, g->allow_special, g->annotate,
                         g->random_eps);
        char *ch = pc_choices_format(r->choices, r->n_choices);
        pc_strbuf_printf(
            b, "- choice sequence (%zu values)%s:\n\n  ```\n  %s\n  ```\n", r->n_choices,
            r->graph_edited ? "; the shrinker's graph phase edited the model afterwards, so these choices "
                              "regenerate a larger case (`passcheck suite --replay` checks repro.onnx itself)"
                            : "",
            ch ? ch : "");
        free(ch);
    } else {
        pc_strbuf_printf(b, "- an outside model (no generator, no seed)\n");
    }
    pc_strbuf_printf(b, "- EPs: `%s`%s\n", effective_ep_list(r, info),
                     has_ep_file ? " (described in eps.txt)" : " (built-in EPs only)");
    if (r->kase.layer_assignment) pc_strbuf_printf(b, "- layer assignment: `%s`\n", r->kase.layer_assignment);
    if (info->check) {
        pc_strbuf_printf(b, "- properties:");
        for (size_t i = 0; i < pc_property_count() && i < PC_MAX_PROPERTIES; i++)
            if (info->check->enabled[i]) pc_strbuf_printf(b, " %s", pc_property_at(i)->name);
        pc_strbuf_printf(b, "; pipeline level %d%s%s\n", info->check->level,
                         info->check->oracle_ort ? "; ONNX Runtime oracle on" : "",
                         info->check->alloc_every || r->alloc_every
                             ? "; alloc-failure tries every allocation (case.txt alloc_every)"
                             : "");
    }
    pc_strbuf_printf(b, "- injected faults: %s\n\n", info->inject && *info->inject ? info->inject : "none");

    pc_strbuf_printf(b, "## Files\n\n");
    pc_strbuf_printf(b, "- `repro.onnx`: the minimal failing model");
    if (r->kase.n_inputs == 1)
        pc_strbuf_printf(b, "; `input_0.pb`: its input (TensorProto)\n");
    else if (r->kase.n_inputs > 1)
        pc_strbuf_printf(
            b, "; `input_0.pb` ... `input_%" PRIu32 ".pb`: its inputs (TensorProto, graph-input order)\n",
            r->kase.n_inputs - 1);
    else
        pc_strbuf_printf(b, " (it has no inputs to feed)\n");
    if (has_before_after)
        pc_strbuf_printf(b, "- `before.onnx`, `after.onnx`: the graph just before and just after pass `%s`\n",
                         f->pass);
    else if (isolation)
        pc_strbuf_printf(b,
                         "- no before/after graphs: the process died before it could send them; the replay "
                         "runs the whole pipeline on repro.onnx\n");
    else
        pc_strbuf_printf(
            b, "- no before/after graphs: a final (end-to-end) property compares repro.onnx with its fully "
               "optimized form (`passcheck optimize repro.onnx -o out.onnx`)\n");
    pc_strbuf_printf(b,
                     "- `*.dot`%s: pictures of each graph (op, name, the attributes that decide layouts and "
                     "types, EP, layer_ann "
                     "per node; in before/after, what the pass added, changed or removed outlined green, "
                     "orange, red; edges "
                     "labelled with "
                     "types)\n",
                     svg_why[0] ? "" : " and `*.svg`");
    if (svg_why[0])
        pc_strbuf_printf(b, "- no SVG pictures: %s (`dot -Tsvg repro.dot -o repro.svg` makes one)\n",
                         svg_why);
    pc_strbuf_printf(b, "- `eps.txt`: the EP description%s; `case.txt`: everything replay reads\n\n",
                     has_ep_file ? "" : " (none: built-in EPs)");

    pc_strbuf_printf(b, "## Replay\n\n```sh\npasscheck suite --replay ");
    sb_shell(b, dir);
    pc_strbuf_printf(b, "\n");
    write_replay_shrink(b, dir, r, info, has_ep_file);
    pc_strbuf_printf(b, "```\n");
}

/* before.onnx and after.onnx with their pictures, the pass's added, changed and removed nodes outlined. The
 * graphs are loaded without verification: a pass may have broken the graph, and that is what is drawn. */
static pc_status write_pair_bytes(const char *dir, const pc_check_result *cr, char *svg_why, size_t why_size,
                                  pc_error *err)
{
    const char *names[2] = {"before", "after"};
    const uint8_t *bytes[2] = {cr->before_bytes, cr->after_bytes};
    size_t sizes[2] = {cr->before_size, cr->after_size};
    pc_model *m[2] = {NULL, NULL};
    pc_status st = PC_OK;
    for (int k = 0; k < 2 && st == PC_OK; k++) {
        char file[64];
        snprintf(file, sizeof file, "%s.onnx", names[k]);
        if ((st = write_bytes(dir, file, bytes[k], sizes[k], err)) != PC_OK) break;
        pc_load_options o;
        pc_load_options_default(&o);
        o.skip_verify = true;
        if ((st = pc_model_load_bytes(bytes[k], sizes[k], &o, &m[k], err)) != PC_OK)
            pc_error_prefix(err, "%s/%s: ", dir, file);
    }
    if (st == PC_OK) st = write_pair_pictures(dir, m, svg_why, why_size, err);
    pc_model_free(m[0]);
    pc_model_free(m[1]);
    return st;
}

/* full: the whole repro folder; otherwise only what replay reads (repro.onnx, inputs, eps.txt, case.txt). */
static pc_status write_contents(const char *tmp, const char *dir, const pc_shrink_result *r,
                                const pc_repro_info *info, bool full, pc_error *err)
{
    const pc_case *c = &r->kase;
    char *path = pc_path_join(tmp, "repro.onnx");
    if (!path) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    pc_status st = pc_model_save_file(c->model, path, err);
    free(path);
    if (st != PC_OK) return st;

    const pc_graph *g = c->model->graph;
    uint32_t k = 0;
    for (uint32_t i = 0; i < g->n_inputs && k < c->n_inputs; i++) {
        if (g->inputs[i]->initializer) continue;
        char file[32];
        snprintf(file, sizeof file, "input_%" PRIu32 ".pb", k);
        path = pc_path_join(tmp, file);
        if (!path) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
        st = pc_data_save_file(c->inputs[k], g->inputs[i]->name, path, err);
        free(path);
        if (st != PC_OK) return st;
        k++;
    }
    if (k != c->n_inputs)
        return pc_error_set(err, PC_ERR_INTERNAL,
                            "the case has %" PRIu32 " inputs but repro.onnx feeds %" PRIu32, c->n_inputs, k);

    char svg_why[256] = "", why[256];
    if (full) {
        st = write_picture(tmp, "repro", c->model, why, sizeof why, err);
        if (st != PC_OK) return st;
        if (why[0]) snprintf(svg_why, sizeof svg_why, "%s", why);
    }
    bool has_before_after = full && r->check.before_bytes && r->check.after_bytes;
    if (has_before_after) {
        st = write_pair_bytes(tmp, &r->check, svg_why, sizeof svg_why, err);
        if (st != PC_OK) return st;
    }

    bool has_ep_file = c->ep_text != NULL;
    if (has_ep_file) {
        st = write_bytes(tmp, "eps.txt", c->ep_text, strlen(c->ep_text), err);
    } else {
        char note[256];
        int n =
            snprintf(note, sizeof note, "# no EP description file: this case uses the built-in EPs (%s)\n",
                     c->ep_list ? c->ep_list : "cpu");
        st = write_bytes(tmp, "eps.txt", note, n > 0 && (size_t)n < sizeof note ? (size_t)n : 0, err);
    }
    if (st != PC_OK) return st;

    pc_strbuf b = {0};
    write_case_txt(&b, r, info, has_ep_file);
    if (b.oom) st = pc_error_set(err, PC_ERR_NOMEM, "out of memory writing case.txt");
    if (st == PC_OK) st = write_bytes(tmp, "case.txt", b.s, b.len, err);
    pc_strbuf_free(&b);
    if (st == PC_OK && full) {
        write_readme(&b, dir, r, info, has_ep_file, has_before_after, svg_why);
        if (b.oom) st = pc_error_set(err, PC_ERR_NOMEM, "out of memory writing README.md");
        if (st == PC_OK) st = write_bytes(tmp, "README.md", b.s, b.len, err);
    }
    pc_strbuf_free(&b);
    return st;
}

static pc_status repro_write(const char *dir, const pc_shrink_result *r, const pc_repro_info *info, bool full,
                             pc_error *err)
{
    pc_error_clear(err);
    if (!dir || !*dir) return pc_error_set(err, PC_ERR_USAGE, "no repro folder given");
    if (!r || !r->kase.model || !r->kase.model->graph)
        return pc_error_set(err, PC_ERR_USAGE, "%s: the shrink result has no model", dir);
    pc_repro_info none = {0};
    if (!info) info = &none;
    pc_status st = make_parents(dir, err);
    if (st != PC_OK) return st;

    char suffix[48];
    snprintf(suffix, sizeof suffix, ".tmp.%ld", (long)getpid());
    size_t n = strlen(dir) + sizeof suffix;
    char *tmp = malloc(n), *old = malloc(n);
    if (!tmp || !old) {
        free(tmp);
        free(old);
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    }
    snprintf(tmp, n, "%s%s", dir, suffix);
    snprintf(old, n, "%s.old.%ld", dir, (long)getpid());
    remove_tree(tmp, 0); /* left by an earlier crashed writer with our pid */
    if (mkdir(tmp, 0755) != 0) {
        st = pc_error_set(err, PC_ERR_IO, "%s: cannot create folder: %s", tmp, strerror(errno));
        goto out;
    }
    st = write_contents(tmp, dir, r, info, full, err);
    if (st != PC_OK) {
        remove_tree(tmp, 0);
        goto out;
    }
    /* swap in: a folder cannot be renamed over a non-empty one, so the old repro steps aside first and comes
     * back if the new one cannot take its place */
    struct stat sst;
    bool had_old = lstat(dir, &sst) == 0;
    if (had_old && rename(dir, old) != 0) {
        st = pc_error_set(err, PC_ERR_IO, "%s: cannot move the previous repro aside: %s", dir,
                          strerror(errno));
        remove_tree(tmp, 0);
        goto out;
    }
    if (rename(tmp, dir) != 0) {
        st = pc_error_set(err, PC_ERR_IO, "%s: cannot rename %s into place: %s", dir, tmp, strerror(errno));
        if (had_old) rename(old, dir);
        remove_tree(tmp, 0);
        goto out;
    }
    if (had_old) remove_tree(old, 0);
out:
    free(tmp);
    free(old);
    return st;
}

pc_status pc_repro_write(const char *dir, const pc_shrink_result *r, const pc_repro_info *info, pc_error *err)
{
    return repro_write(dir, r, info, true, err);
}

pc_status pc_repro_write_replay_files(const char *dir, const pc_shrink_result *r, const pc_repro_info *info,
                                      pc_error *err)
{
    return repro_write(dir, r, info, false, err);
}

/* ---------------------------------------------------------------------------------------------------------------
 * pc_repro_case_load
 */
static char *read_text(const char *path, pc_error *err)
{
    char *text = NULL;
    size_t size = 0;
    if (pc_file_read_all(path, 64u << 20, &text, &size, err) != PC_OK) return NULL;
    if (memchr(text, '\0', size)) {
        free(text);
        pc_error_set(err, PC_ERR_EMBEDDED_NUL, "%s: holds a NUL byte (not a text file)", path);
        return NULL;
    }
    return text;
}

/* Unescapes in place; false on a bad escape. */
static bool unescape(char *s)
{
    char *w = s;
    for (char *p = s; *p; p++) {
        if (*p != '\\') {
            *w++ = *p;
            continue;
        }
        p++;
        switch (*p) {
        case '\\':
            *w++ = '\\';
            break;
        case 'n':
            *w++ = '\n';
            break;
        case 'r':
            *w++ = '\r';
            break;
        case 't':
            *w++ = '\t';
            break;
        default:
            return false;
        }
    }
    *w = '\0';
    return true;
}

static bool parse_bool(const char *s, bool *out)
{
    if (strcmp(s, "0") && strcmp(s, "1")) return false;
    *out = *s == '1';
    return true;
}

static pc_status set_string(char **dst, const char *v, pc_error *err)
{
    free(*dst);
    *dst = strdup(v);
    return *dst ? PC_OK : pc_error_set(err, PC_ERR_NOMEM, "out of memory");
}

static void copy_field(char *dst, size_t size, const char *v)
{
    snprintf(dst, size, "%s", v);
}

void pc_repro_case_free(pc_repro_case *rc)
{
    if (!rc) return;
    free(rc->choices);
    free(rc->ep_list);
    free(rc->ep_text);
    free(rc->layer_assignment);
    free(rc->properties);
    free(rc->ort_dir);
    free(rc->stop_after_pass);
    free(rc->inject);
    free(rc->model_path);
    for (uint32_t i = 0; i < rc->n_inputs; i++)
        if (rc->input_paths) free(rc->input_paths[i]);
    free(rc->input_paths);
    free(rc->family_storage);
    memset(rc, 0, sizeof *rc);
}

/* A number in case.txt, read as this reader always has (leading white space allowed: util.h). */
static bool case_u64(const char *s, uint64_t max, uint64_t *out)
{
    return pc_parse_u64_as(s, 0, max, PC_PARSE_U64_LEADING_SPACE, out);
}

/* One key=value line. */
static pc_status case_field(pc_repro_case *rc, const char *dir, const char *key, const char *v,
                            bool *has_ep_file, bool *seen_version, pc_error *err)
{
    uint64_t u;
#define BAD() pc_error_set(err, PC_ERR_VALUE, "bad value for '%s': '%s'", key, v)
    if (!strcmp(key, "version")) {
        if (!case_u64(v, INT32_MAX, &u)) return BAD();
        if (u != PC_REPRO_CASE_VERSION)
            return pc_error_set(err, PC_ERR_UNSUPPORTED, "case format version %s (this passcheck reads %d)",
                                v, PC_REPRO_CASE_VERSION);
        rc->version = (int)u;
        *seen_version = true;
    } else if (!strcmp(key, "signature")) {
        /* informative: property, pass and kind are authoritative */
    } else if (!strcmp(key, "property")) {
        copy_field(rc->failure.property, sizeof rc->failure.property, v);
    } else if (!strcmp(key, "pass")) {
        copy_field(rc->failure.pass, sizeof rc->failure.pass, v);
    } else if (!strcmp(key, "kind")) {
        copy_field(rc->failure.kind, sizeof rc->failure.kind, v);
    } else if (!strcmp(key, "outcome")) {
        if (!strcmp(v, "fail"))
            rc->failure.outcome = PC_PROP_FAIL;
        else if (!strcmp(v, "error"))
            rc->failure.outcome = PC_PROP_ERROR;
        else
            return BAD();
    } else if (!strcmp(key, "message")) {
        copy_field(rc->failure.message, sizeof rc->failure.message, v);
    } else if (!strcmp(key, "seed")) {
        if (!case_u64(v, UINT64_MAX, &rc->seed)) return BAD();
    } else if (!strcmp(key, "case_index")) {
        if (!case_u64(v, UINT64_MAX, &rc->case_index)) return BAD();
    } else if (!strcmp(key, "family")) {
        if (*v) {
            rc->has_gen = true;
            if (set_string(&rc->family_storage, v, err) != PC_OK) return err->status;
            rc->gen.family = rc->family_storage;
        }
    } else if (!strcmp(key, "max_nodes")) {
        if (!case_u64(v, UINT32_MAX, &u)) return BAD();
        rc->gen.max_nodes = (uint32_t)u;
    } else if (!strcmp(key, "max_elements")) {
        if (!case_u64(v, UINT64_MAX, &rc->gen.max_elements)) return BAD();
    } else if (!strcmp(key, "max_rank")) {
        if (!case_u64(v, 5, &u)) return BAD();
        rc->gen.max_rank = (int32_t)u;
    } else if (!strcmp(key, "allow_special")) {
        if (!parse_bool(v, &rc->gen.allow_special)) return BAD();
    } else if (!strcmp(key, "annotate")) {
        if (!parse_bool(v, &rc->gen.annotate)) return BAD();
    } else if (!strcmp(key, "random_eps")) {
        if (!parse_bool(v, &rc->gen.random_eps)) return BAD();
    } else if (!strcmp(key, "choices")) {
        free(rc->choices);
        rc->choices = NULL;
        rc->n_choices = 0;
        if (*v && pc_choices_parse(v, &rc->choices, &rc->n_choices, err) != PC_OK) {
            pc_error_prefix(err, "choices: ");
            return err->status;
        }
    } else if (!strcmp(key, "graph_edited")) {
        if (!parse_bool(v, &rc->graph_edited)) return BAD();
    } else if (!strcmp(key, "ep_list")) {
        return set_string(&rc->ep_list, v, err);
    } else if (!strcmp(key, "ep_file")) {
        if (strcmp(v, "eps.txt"))
            return BAD(); /* only the folder's own file: replay must not read elsewhere */
        *has_ep_file = true;
    } else if (!strcmp(key, "layer_assignment")) {
        return set_string(&rc->layer_assignment, v, err);
    } else if (!strcmp(key, "properties")) {
        return set_string(&rc->properties, v, err);
    } else if (!strcmp(key, "level")) {
        if (!case_u64(v, 99, &u)) return BAD();
        rc->level = (int)u;
    } else if (!strcmp(key, "oracle_ort")) {
        if (!parse_bool(v, &rc->oracle_ort)) return BAD();
    } else if (!strcmp(key, "ort_dir")) {
        return set_string(&rc->ort_dir, v, err);
    } else if (!strcmp(key, "stop_after_pass")) {
        return set_string(&rc->stop_after_pass, v, err);
    } else if (!strcmp(key, "exact_oracle_max_nodes")) {
        if (!case_u64(v, UINT32_MAX, &u)) return BAD();
        rc->exact_oracle_max_nodes = (uint32_t)u;
    } else if (!strcmp(key, "alloc_every")) {
        if (!parse_bool(v, &rc->alloc_every)) return BAD();
    } else if (!strcmp(key, "inject")) {
        return set_string(&rc->inject, v, err);
    } else if (!strcmp(key, "model")) {
        if (strcmp(v, "repro.onnx")) return BAD();
        free(rc->model_path);
        rc->model_path = pc_path_join(dir, v);
        if (!rc->model_path) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    } else if (!strcmp(key, "inputs")) {
        if (!case_u64(v, 1u << 20, &u)) return BAD();
        if (rc->input_paths) return pc_error_set(err, PC_ERR_DUPLICATE_NAME, "'inputs' given twice");
        rc->input_paths = calloc(u ? (size_t)u : 1, sizeof *rc->input_paths);
        if (!rc->input_paths) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
        rc->n_inputs = (uint32_t)u;
        for (uint32_t i = 0; i < rc->n_inputs; i++) {
            char file[32];
            snprintf(file, sizeof file, "input_%" PRIu32 ".pb", i);
            rc->input_paths[i] = pc_path_join(dir, file);
            if (!rc->input_paths[i]) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
        }
    } else {
        return pc_error_set(err, PC_ERR_USAGE, "unknown key '%s'", key);
    }
#undef BAD
    return PC_OK;
}

pc_status pc_repro_case_load(const char *dir, pc_repro_case *out, pc_error *err)
{
    pc_error_clear(err);
    memset(out, 0, sizeof *out);
    pc_gen_config_default(&out->gen);
    out->gen.family = NULL;
    out->level = -1;
    char *path = pc_path_join(dir, "case.txt");
    if (!path) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    char *text = read_text(path, err);
    if (!text) {
        free(path);
        return err->status;
    }
    pc_status st = PC_OK;
    bool has_ep_file = false, seen_version = false;
    uint32_t line_no = 0;
    for (char *line = text; line && st == PC_OK;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        line_no++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r') line[--len] = '\0';
        if (len && line[0] != '#') {
            char *eq = strchr(line, '=');
            if (!eq) {
                st = pc_error_set(err, PC_ERR_USAGE, "expected key=value");
            } else {
                *eq = '\0';
                if (!unescape(eq + 1))
                    st = pc_error_set(err, PC_ERR_VALUE, "bad escape in the value of '%s'", line);
                else
                    st = case_field(out, dir, line, eq + 1, &has_ep_file, &seen_version, err);
            }
            if (st != PC_OK) pc_error_prefix(err, "%s:%" PRIu32 ": ", path, line_no);
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    if (st == PC_OK && !seen_version)
        st = pc_error_set(err, PC_ERR_MISSING_FIELD, "%s: no 'version' line", path);
    if (st == PC_OK && !out->failure.property[0])
        st = pc_error_set(err, PC_ERR_MISSING_FIELD, "%s: no 'property' line", path);
    if (st == PC_OK && !out->model_path)
        st = pc_error_set(err, PC_ERR_MISSING_FIELD, "%s: no 'model' line", path);
    if (st == PC_OK && !out->input_paths)
        st = pc_error_set(err, PC_ERR_MISSING_FIELD, "%s: no 'inputs' line", path);
    if (st == PC_OK && !out->ep_list) st = set_string(&out->ep_list, "cpu", err);
    if (st == PC_OK && has_ep_file) {
        char *eps = pc_path_join(dir, "eps.txt");
        if (!eps) {
            st = pc_error_set(err, PC_ERR_NOMEM, "out of memory");
        } else {
            out->ep_text = read_text(eps, err);
            if (!out->ep_text) st = err->status;
            free(eps);
        }
    }
    free(path);
    if (st != PC_OK) pc_repro_case_free(out);
    return st;
}

pc_status pc_repro_case_check_config(const pc_repro_case *rc, pc_check_config *cc, pc_error *err)
{
    pc_error_clear(err);
    pc_check_config_default(cc);
    if (rc->properties && pc_check_config_select(cc, rc->properties, err) != PC_OK) return err->status;
    if (rc->level >= 0) cc->level = rc->level;
    if (rc->oracle_ort) cc->oracle_ort = true;
    cc->ort_dir = rc->ort_dir;
    cc->stop_after_pass = rc->stop_after_pass;
    if (rc->exact_oracle_max_nodes) cc->exact_oracle_max_nodes = rc->exact_oracle_max_nodes;
    cc->alloc_every = rc->alloc_every;
    return PC_OK;
}

static char *dup_or_null(const char *s, bool *oom)
{
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) *oom = true;
    return d;
}

pc_status pc_repro_case_load_case(const pc_repro_case *rc, pc_case *out, pc_error *err)
{
    pc_error_clear(err);
    memset(out, 0, sizeof *out);
    pc_status st = pc_model_load_file(rc->model_path, NULL, &out->model, err);
    if (st != PC_OK) return st;
    bool oom = false;
    out->ep_text = dup_or_null(rc->ep_text, &oom);
    out->ep_list = dup_or_null(rc->ep_list ? rc->ep_list : "cpu", &oom);
    out->layer_assignment = dup_or_null(rc->layer_assignment, &oom);
    const pc_gen_family *fam = rc->gen.family ? pc_gen_family_find(rc->gen.family) : NULL;
    out->family = fam ? fam->name : "outside";
    if (rc->n_inputs) out->inputs = calloc(rc->n_inputs, sizeof *out->inputs);
    if (oom || (rc->n_inputs && !out->inputs)) {
        pc_case_free(out);
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    }
    /* each input file against the type its graph input declares */
    const pc_graph *g = out->model->graph;
    uint32_t n_fed = 0, k = 0;
    for (uint32_t i = 0; i < g->n_inputs; i++)
        n_fed += g->inputs[i]->initializer == NULL;
    if (n_fed != rc->n_inputs) {
        pc_case_free(out);
        return pc_error_set(err, PC_ERR_ARITY, "%s: %" PRIu32 " input files for %" PRIu32 " graph inputs",
                            rc->model_path, rc->n_inputs, n_fed);
    }
    for (uint32_t i = 0; i < g->n_inputs && k < rc->n_inputs && st == PC_OK; i++) {
        if (g->inputs[i]->initializer) continue;
        st = pc_data_load_file(rc->input_paths[k], &g->inputs[i]->type, &out->inputs[k], err);
        if (st != PC_OK) {
            pc_error_prefix(err, "%s: ", rc->input_paths[k]);
            break;
        }
        out->n_inputs = ++k;
    }
    if (st != PC_OK) pc_case_free(out);
    return st;
}

/* Where an outside model's repro folder goes (pc_repro_write_in, shrink.h): a content-addressed name below
 * the
 * --out folder, then pc_repro_write. */
/* "<out>/<signature>-<FNV-1a of the repro model's bytes>" with characters unfit for a folder name replaced by
 * '-'. */
static char *repro_dir(const char *out, const pc_shrink_result *r, pc_error *err)
{
    char sig[160];
    pc_failure_signature(&r->check.failure, sig, sizeof sig);
    pc_name_sanitize(sig, sig, sizeof sig);
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (pc_model_save_bytes(r->kase.model, &bytes, &size, err) != PC_OK) return NULL;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size; i++)
        h = (h ^ bytes[i]) * 16777619u;
    free(bytes);
    size_t len = strlen(out) + strlen(sig) + 16;
    char *dir = malloc(len);
    if (!dir) {
        pc_error_set(err, PC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    snprintf(dir, len, "%s/%s-%08x", out, sig, h);
    return dir;
}

pc_status pc_repro_write_in(const char *out, const pc_shrink_result *r, const pc_repro_info *info, char **dir,
                            pc_error *err)
{
    *dir = NULL;
    struct stat st;
    if (stat(out, &st) != 0 && mkdir(out, 0777) != 0 && errno != EEXIST)
        return pc_error_set(err, PC_ERR_IO, "--out: %s: cannot create the folder: %s", out, strerror(errno));
    char *path = repro_dir(out, r, err);
    if (!path) return err->status;
    pc_status s = pc_repro_write(path, r, info, err);
    if (s != PC_OK) {
        free(path);
        return s;
    }
    *dir = path;
    return PC_OK;
}
