/* The property suite runner: replays the failure database, runs cases in forked children (up to --jobs at a
 * time), sums their results, keeps the first failing case of every signature, shrinks it and writes its
 * repro.
 *
 * Determinism: a case depends only on (seed, index); counts are sums; each signature's representative is the
 * failing case with the smallest order (replays first, then case index), whatever order the children finish
 * in; the lists are sorted before anything is printed. So every report is the same for any --jobs. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/internal.h"
#include "properties/runner/repro.h"
#include "properties/oracles/ort_oracle.h"
#include "properties/runner/suite.h"
#include "properties/runner/util.h"

uint64_t pc_suite_case_seed(uint64_t seed, uint64_t index)
{
    /* output index of splitmix64 seeded with `seed` (the generator adds the gamma before mixing) */
    uint64_t state = seed + index * 0x9e3779b97f4a7c15ull;
    return pc_splitmix64(&state);
}

uint32_t pc_suite_case_family(uint64_t case_seed, uint32_t n_families)
{
    /* splitmix64's output mix of the salted seed (the state is pre-decremented by the gamma it adds) */
    uint64_t state = (case_seed ^ 0xd1b54a32d192ed03ull) - 0x9e3779b97f4a7c15ull;
    return n_families ? (uint32_t)(pc_splitmix64(&state) % n_families) : 0;
}

bool pc_suite_case_special(uint64_t case_seed, uint32_t percent)
{
    uint64_t state = (case_seed ^ 0x8cb92ba72f3d8dd7ull) - 0x9e3779b97f4a7c15ull;
    return percent && pc_splitmix64(&state) % 100 < percent;
}

bool pc_suite_in_shard(uint64_t index, uint32_t shard_index, uint32_t shard_count)
{
    return shard_count <= 1 || index % shard_count == shard_index;
}

void pc_suite_options_default(pc_suite_options *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->n_cases = 2000;
    o->jobs = 1;
    o->shard_count = 1;
    pc_gen_config_default(&o->gen);
    pc_check_config_default(&o->check);
    o->case_timeout = 60;
    o->shrink = true;
    pc_shrink_options_default(&o->shrink_opts);
}

/* ---------------------------------------------------------------------------------------------------------------
 * The report.
 */
static void failure_free(pc_suite_failure *f)
{
    free(f->choices);
    free(f->replay_repro_dir);
    pc_check_result_free(&f->res);
    free(f->repro_dir);
    memset(f, 0, sizeof *f);
}

void pc_suite_report_free(pc_suite_report *r)
{
    free(r->family_selected);
    free(r->family_cases);
    free(r->family_failed);
    free(r->failed);
    for (size_t i = 0; i < r->n_signatures; i++)
        failure_free(&r->signatures[i].rep);
    free(r->signatures);
    memset(r, 0, sizeof *r);
}

/* Property slots: the catalogue (pc_property_at) and, when the config has one, its extra property right after
 * it, as pc_check_result.counts numbers them. */
size_t pc_suite_n_slots(const pc_suite_options *o)
{
    size_t n = pc_property_count() + (o->check.extra ? 1 : 0);
    return n < PC_MAX_PROPERTIES ? n : PC_MAX_PROPERTIES;
}

const char *pc_suite_slot_name(const pc_suite_options *o, size_t i)
{
    return i < pc_property_count() ? pc_property_at(i)->name : o->check.extra->name;
}

bool pc_suite_slot_enabled(const pc_suite_options *o, size_t i)
{
    return i < pc_property_count() ? o->check.enabled[i] : true;
}

bool pc_suite_is_property_name(const pc_suite_options *o, const char *name, size_t *index)
{
    for (size_t i = 0; i < pc_suite_n_slots(o); i++)
        if (strcmp(pc_suite_slot_name(o, i), name) == 0) {
            if (index) *index = i;
            return true;
        }
    return false;
}

void pc_known_list_free(pc_known_list *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->items[i]);
    free(k->items);
    memset(k, 0, sizeof *k);
}

bool pc_known_list_has(const pc_known_list *k, const char *signature)
{
    for (size_t i = 0; i < k->n; i++)
        if (strcmp(k->items[i], signature) == 0) return true;
    return false;
}

static pc_status known_add(pc_known_list *k, const char *sig, size_t len, pc_error *err)
{
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 16, bytes;
        char **grown = pc_size_mul(cap, sizeof *grown, &bytes) ? realloc(k->items, bytes) : NULL;
        if (!grown) return pc_error_set(err, PC_ERR_NOMEM, "out of memory reading known findings");
        k->items = grown;
        k->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) return pc_error_set(err, PC_ERR_NOMEM, "out of memory reading known findings");
    memcpy(copy, sig, len);
    copy[len] = '\0';
    k->items[k->n++] = copy;
    return PC_OK;
}

pc_status pc_known_list_load(pc_known_list *k, const char *path, pc_error *err)
{
    enum { MAX_FILE = 1 << 24, MAX_SIGNATURE = 159 };
    char *text = NULL;
    size_t size = 0;
    pc_status st = pc_file_read_all(path, MAX_FILE, &text, &size, err);
    if (st != PC_OK) return st;
    size_t line = 0;
    for (size_t at = 0; at < size && st == PC_OK;) {
        size_t end = at;
        while (end < size && text[end] != '\n')
            end++;
        line++;
        size_t b = at, e = end;
        while (b < e && (text[b] == ' ' || text[b] == '\t'))
            b++;
        while (e > b && (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\r'))
            e--;
        at = end + 1;
        if (b == e || text[b] == '#') continue;
        const char *sig = text + b;
        size_t len = e - b;
        const char *atsign = memchr(sig, '@', len);
        bool blank = false;
        for (size_t i = 0; i < len; i++)
            blank |= sig[i] == ' ' || sig[i] == '\t' || sig[i] == '\0';
        if (!atsign || atsign == sig || atsign == sig + len - 1 || blank || len > MAX_SIGNATURE)
            st = pc_error_set(err, PC_ERR_VALUE,
                              "%s:%zu: '%.*s' is not a failure signature (property@pass[/kind], at most %d "
                              "characters)",
                              path, line, (int)(len > 80 ? 80 : len), sig, MAX_SIGNATURE);
        else
            st = known_add(k, sig, len, err);
    }
    free(text);
    return st;
}

bool pc_suite_is_known(const pc_suite_options *o, const char *signature)
{
    return o->known && pc_known_list_has(o->known, signature);
}

static uint32_t family_index(const char *name)
{
    for (size_t i = 0; i < pc_gen_family_count(); i++)
        if (name && strcmp(pc_gen_family_at(i)->name, name) == 0) return (uint32_t)i;
    return UINT32_MAX;
}

/* One finished case (or replay), as the scheduler hands it over. */
typedef struct case_done {
    uint64_t index, case_seed, order;
    bool replayed;
    const pc_db_entry *entry; /* replays: the entry replayed */
    const pc_gen_config *gen;
    pc_iso_outcome *out;
} case_done;

static int failed_case_cmp(const void *a, const void *b)
{
    const pc_suite_failed_case *x = a, *y = b;
    if (x->replayed != y->replayed) return x->replayed ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static bool rep_before(const pc_suite_failure *a, bool replayed, uint64_t order)
{
    if (a->replayed != replayed) return a->replayed;
    return a->order < order;
}

/* The failure a case ended with, when it failed: the child's own, or one made from a generator or harness
 * error. */
static bool case_failure(const pc_iso_outcome *out, pc_failure *f)
{
    memset(f, 0, sizeof *f);
    if (out->gen_failed || out->status != PC_OK) {
        snprintf(f->property, sizeof f->property, "%s", out->gen_failed ? "generator" : "harness");
        snprintf(f->kind, sizeof f->kind, "%s", pc_status_name(out->status));
        f->outcome = PC_PROP_ERROR;
        snprintf(f->message, sizeof f->message, "%s: %s",
                 out->gen_failed ? "pc_case_generate failed" : "the case could not be checked", out->message);
        return true;
    }
    if (!out->res.failed) return false;
    *f = out->res.failure;
    return true;
}

static pc_status record_case(const pc_suite_options *o, pc_suite_report *r, const case_done *d, pc_error *err)
{
    pc_iso_outcome *out = d->out;
    uint32_t fam = family_index(d->gen->family);
    if (!d->replayed) {
        r->cases++;
        if (fam < r->n_families) r->family_cases[fam]++;
        for (size_t p = 0; p < PC_MAX_PROPERTIES; p++)
            for (int k = 0; k < PC_PROP_OUTCOME_COUNT; k++)
                r->counts[p][k] += out->res.counts[p][k];
        r->transpose_oracle_cases += out->res.stats.transpose_oracle_cases;
        r->transpose_at_optimum += out->res.stats.transpose_at_optimum;
        r->ref_runs += out->res.stats.ref_runs;
        r->passes_changed += out->res.stats.passes_changed;
        const pc_rewrite_counts *rw = &out->res.rewrites;
        for (size_t k = 0; k < PC_RW_COUNT; k++) {
            r->rw_fired_cases[k] += rw->fired[k] != 0;
            r->rw_near_cases[k] += rw->near[k] != 0;
            for (size_t m = 0; m < PC_MISS_COUNT; m++)
                r->rw_near_reason_cases[k][m] += rw->near_reason[k][m] != 0;
        }
    }
    pc_failure f;
    if (!case_failure(out, &f)) return PC_OK;
    char sig[160];
    pc_failure_signature(&f, sig, sizeof sig);
    if (!d->replayed) {
        r->failed_cases++;
        if (fam < r->n_families) r->family_failed[fam]++;
        size_t p;
        if (pc_suite_is_property_name(o, f.property, &p))
            r->property_failed_cases[p]++;
        else
            r->other_failed_cases++;
    }
    size_t s = 0;
    while (s < r->n_signatures && strcmp(r->signatures[s].signature, sig) != 0)
        s++;
    if (s == r->n_signatures) {
        size_t bytes;
        pc_suite_signature *ns =
            pc_size_mul(s + 1, sizeof *ns, &bytes) ? realloc(r->signatures, bytes) : NULL;
        if (!ns) return pc_error_set(err, PC_ERR_NOMEM, "out of memory recording failure %s", sig);
        r->signatures = ns;
        memset(&ns[s], 0, sizeof ns[s]);
        snprintf(ns[s].signature, sizeof ns[s].signature, "%s", sig);
        ns[s].known = pc_suite_is_known(o, sig);
        r->n_signatures++;
    }
    pc_suite_signature *sg = &r->signatures[s];
    /* Keep the representative with the smallest order, so the choice does not depend on completion order. */
    if (sg->cases == 0 || rep_before(&sg->rep, d->replayed, d->order) == false) {
        failure_free(&sg->rep);
        pc_suite_failure *rep = &sg->rep;
        rep->index = d->index;
        rep->case_seed = d->case_seed;
        rep->replayed = d->replayed;
        rep->order = d->order;
        if (d->entry) snprintf(rep->db_name, sizeof rep->db_name, "%s", d->entry->name);
        if (d->entry && d->entry->repro_dir) {
            rep->replay_repro_dir = strdup(d->entry->repro_dir);
            if (!rep->replay_repro_dir)
                return pc_error_set(err, PC_ERR_NOMEM, "out of memory recording %s", sig);
            rep->replay_repro_settings = d->entry->repro_settings;
        }
        rep->gen = *d->gen;
        rep->failure = f;
        rep->have_choices = out->have_choices;
        rep->choices = out->choices;
        rep->n_choices = out->n_choices;
        out->choices = NULL;
        out->n_choices = 0;
        rep->res = out->res;
        memset(&out->res, 0, sizeof out->res);
    }
    sg->cases++;
    if (r->n_failed % 256 == 0) {
        size_t bytes;
        pc_suite_failed_case *nf =
            pc_size_mul(r->n_failed + 256, sizeof *nf, &bytes) ? realloc(r->failed, bytes) : NULL;
        if (!nf) return pc_error_set(err, PC_ERR_NOMEM, "out of memory recording failure %s", sig);
        r->failed = nf;
    }
    r->failed[r->n_failed++] =
        (pc_suite_failed_case){d->index, d->case_seed, d->replayed, d->order, fam, (uint32_t)s};
    r->known_failed += sg->known;
    return PC_OK;
}

/* Signatures in order of their representative; the failed list sorted and re-pointed. */
static pc_status finish_order(pc_suite_report *r, pc_error *err)
{
    size_t n = r->n_signatures;
    if (n > 1) {
        size_t *perm = calloc(n, sizeof *perm), *where = calloc(n, sizeof *where);
        pc_suite_signature *sorted = calloc(n, sizeof *sorted);
        if (!perm || !where || !sorted) {
            free(perm);
            free(where);
            free(sorted);
            return pc_error_set(err, PC_ERR_NOMEM, "out of memory sorting failures");
        }
        for (size_t i = 0; i < n; i++)
            perm[i] = i;
        for (size_t i = 1; i < n; i++) /* insertion sort: signatures are few */
            for (size_t j = i; j > 0; j--) {
                const pc_suite_failure *a = &r->signatures[perm[j - 1]].rep, *b = &r->signatures[perm[j]].rep;
                if (!rep_before(b, a->replayed, a->order)) break;
                size_t t = perm[j];
                perm[j] = perm[j - 1];
                perm[j - 1] = t;
            }
        for (size_t i = 0; i < n; i++) {
            sorted[i] = r->signatures[perm[i]];
            where[perm[i]] = i;
        }
        for (size_t i = 0; i < r->n_failed; i++)
            r->failed[i].signature = (uint32_t)where[r->failed[i].signature];
        free(r->signatures);
        r->signatures = sorted;
        free(perm);
        free(where);
    }
    if (r->n_failed > 1) qsort(r->failed, r->n_failed, sizeof *r->failed, failed_case_cmp);
    return PC_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * The scheduler: up to `jobs` children at a time, fed by a work source.
 */
typedef struct work {
    pc_iso_case_ctx ctx;
    pc_gen_config gen;
    uint64_t order;
    bool replayed;
    const pc_db_entry *entry;
    /* a saved repro (entry->repro_dir), loaded in the parent: the child checks this case, not a regenerated
     * one */
    bool model;
    pc_repro_case rc;
    pc_case kase;
    pc_check_config cc; /* the folder's case.txt settings, or the run's */
} work;

static void work_free(work *w)
{
    if (!w->model) return;
    pc_case_free(&w->kase);
    pc_repro_case_free(&w->rc);
    w->model = false;
}

/* Loads a saved repro for replay: the case from repro.onnx and its input files, and the check configuration
 * (the folder's own settings for a repro folder given to --replay, the run's for a database entry). */
static pc_status work_load_repro(const pc_suite_options *o, const pc_db_entry *e, work *w, pc_error *err)
{
    pc_status st = pc_repro_case_load(e->repro_dir, &w->rc, err);
    if (st != PC_OK) return st;
    if (e->repro_settings)
        st = pc_repro_case_check_config(&w->rc, &w->cc, err);
    else
        w->cc = o->check;
    if (st == PC_OK) st = pc_repro_case_load_case(&w->rc, &w->kase, err);
    if (st != PC_OK) {
        pc_repro_case_free(&w->rc);
        return st;
    }
    w->model = true;
    return PC_OK;
}

/* The child of a saved-repro replay: the same stream as pc_iso_case_child (choices, passes, result), for the
 * loaded case. The entry's choices are sent back only so the failure keeps them (they regenerate nothing
 * here). */
static void model_case_child(void *vctx, int fd)
{
    const work *w = vctx;
    pc_error err;
    pc_error_clear(&err);
    pc_status st = PC_OK;
    if (w->ctx.inject) st = pc_fault_enable_list(w->ctx.inject, &err);
    pc_iso_send_choices(fd, w->ctx.replay, w->ctx.n_replay);
    if (st != PC_OK) {
        pc_iso_send_result(fd, st, false, err.message, NULL);
        return;
    }
    pc_suite_check_fn check = w->ctx.check_fn ? w->ctx.check_fn : pc_case_check;
    pc_check_config cc = w->cc;
    cc.on_pass = pc_iso_on_pass;
    cc.on_pass_ctx = &fd;
    pc_check_result res;
    memset(&res, 0, sizeof res);
    st = check(&w->kase, &cc, &res, &err);
    pc_iso_send_result(fd, st, false, st == PC_OK ? "" : err.message, &res);
    pc_check_result_free(&res);
}

typedef struct run_state {
    const pc_suite_options *o;
    pc_suite_report *rep;
    const uint32_t *families; /* selected family indices */
    uint32_t n_families;
    /* cases */
    uint64_t next_index;
    double deadline; /* 0: none */
    /* replays */
    pc_db_entry *entries;
    size_t n_entries, next_entry;
    bool entries_from_db; /* remove entries that pass */
    bool replaying;
    bool stop; /* --fail-fast: a case failed with a new signature */
    uint64_t done, total, failed;
    double t0;
    pc_status status; /* next_work's own failure (out of memory loading a repro), reported by run_batch */
    pc_error err;
} run_state;

static bool replay_wanted(const run_state *st, const pc_db_entry *e)
{
    if (!st->entries_from_db) return true; /* --replay: everything it names */
    uint32_t fam = family_index(e->gen.family);
    bool selected = false;
    for (uint32_t i = 0; i < st->n_families; i++)
        selected |= st->families[i] == fam;
    if (!selected) return false;
    /* a failure of a property this run does not check would "pass" and be dropped: leave it for a run that
     * does */
    char prop[64];
    snprintf(prop, sizeof prop, "%.63s", e->signature);
    char *at = strchr(prop, '@');
    if (at) *at = '\0';
    size_t p;
    if (pc_suite_is_property_name(st->o, prop, &p)) return pc_suite_slot_enabled(st->o, p);
    return true;
}

static bool next_work(run_state *st, work *w)
{
    const pc_suite_options *o = st->o;
    memset(w, 0, sizeof *w);
    if (st->stop) return false;
    if (st->replaying) {
        while (st->next_entry < st->n_entries) {
            const pc_db_entry *e = &st->entries[st->next_entry++];
            if (!replay_wanted(st, e)) {
                st->rep->replay_skipped++;
                continue;
            }
            if (e->repro_dir) {
                pc_error lerr;
                pc_error_clear(&lerr);
                pc_status ls = work_load_repro(o, e, w, &lerr);
                if (ls == PC_ERR_NOMEM) {
                    st->status = pc_error_set(&st->err, ls, "%s", lerr.message);
                    return false;
                }
                if (ls != PC_OK) { /* an unreadable repro is reported like an unreadable entry */
                    if (st->rep->db_bad_entries++ == 0)
                        snprintf(st->rep->db_bad_first, sizeof st->rep->db_bad_first, "%s", lerr.message);
                    continue;
                }
            }
            w->gen = e->gen;
            w->order = st->next_entry - 1;
            w->replayed = true;
            w->entry = e;
            w->ctx.case_seed = e->seed;
            w->ctx.index = e->case_index;
            w->ctx.replaying = true;
            w->ctx.replay = e->choices;
            w->ctx.n_replay = e->n_choices;
            /* --replay reproduces a failure as found, faults included; the database replay runs under this
             * run's faults only, so a failure found with --inject is dropped by the first run without it */
            w->ctx.inject = st->entries_from_db ? NULL : e->inject;
            return true;
        }
        return false;
    }
    if (st->deadline > 0 && pc_now_seconds() >= st->deadline) {
        if (st->next_index < o->n_cases) st->rep->stopped_by_time = true;
        return false;
    }
    while (st->next_index < o->n_cases && !pc_suite_in_shard(st->next_index, o->shard_index, o->shard_count))
        st->next_index++;
    if (st->next_index >= o->n_cases) return false;
    uint64_t i = st->next_index++;
    uint64_t seed = pc_suite_case_seed(o->seed, i);
    w->gen = o->gen;
    w->gen.family = pc_gen_family_at(st->families[pc_suite_case_family(seed, st->n_families)])->name;
    w->gen.allow_special = o->gen.allow_special || pc_suite_case_special(seed, o->special_percent);
    w->order = i;
    w->ctx.case_seed = seed;
    w->ctx.index = i;
    return true;
}

static void report_progress(run_state *st, const char *phase)
{
    const pc_suite_options *o = st->o;
    if (!o->progress) return;
    pc_suite_progress p = {st->done, st->total, st->failed, pc_now_seconds() - st->t0, o->seconds, phase};
    o->progress(o->progress_ctx, &p);
}

/* Whether (replayed, order) comes before the failure --fail-fast stopped at. */
static bool rep_order_before(bool replayed, uint64_t order, const pc_suite_report *r)
{
    if (replayed != r->stopped_replayed) return replayed;
    return order < r->stopped_order;
}

static pc_status handle_done(run_state *st, work *w, pc_iso_outcome *out, pc_error *err)
{
    case_done d = {w->ctx.index, w->ctx.case_seed, w->order, w->replayed, w->entry, &w->gen, out};
    pc_failure f;
    bool failed = case_failure(out, &f);
    char sig[160] = "";
    if (failed) pc_failure_signature(&f, sig, sizeof sig);
    pc_status s = record_case(st->o, st->rep, &d, err);
    if (s != PC_OK) return s;
    st->done++;
    st->failed += failed;
    if (failed && st->o->fail_fast && !pc_suite_is_known(st->o, sig) &&
        (!st->stop || rep_order_before(w->replayed, w->order, st->rep))) {
        st->stop = true;
        st->rep->stopped_early = true;
        st->rep->stopped_replayed = w->replayed;
        st->rep->stopped_order = w->order;
    }
    if (w->replayed) {
        st->rep->replayed++;
        if (failed) {
            st->rep->replay_still_failing++;
            bool same = strcmp(sig, w->entry->signature) == 0;
            if (same)
                st->rep->replay_same_signature++;
            else
                st->rep->replay_other_signature++;
            if (!same && st->o->log)
                fprintf(st->o->log, "passcheck suite: %s was recorded as %s but now fails as %s\n",
                        w->entry->repro_dir ? w->entry->repro_dir : w->entry->name, w->entry->signature, sig);
        } else if (st->entries_from_db && st->o->db_dir) {
            pc_error rerr;
            if (pc_failure_db_remove(st->o->db_dir, w->entry->name, &rerr) == PC_OK) {
                st->rep->replay_removed++;
                if (st->o->log)
                    fprintf(st->o->log, "passcheck suite: %s (%s) passes now; removed from the database\n",
                            w->entry->name, w->entry->signature);
            } else if (st->o->log) {
                fprintf(st->o->log, "passcheck suite: warning: %s\n", rerr.message);
            }
        }
    }
    report_progress(st, w->replayed ? "replay" : "cases");
    return PC_OK;
}

static pc_status run_batch(run_state *st, pc_error *err)
{
    const pc_suite_options *o = st->o;
    uint32_t jobs = o->jobs ? o->jobs : 1;
    pc_proc *slots = calloc(jobs, sizeof *slots);
    work *works = calloc(jobs, sizeof *works);
    if (!slots || !works) {
        free(slots);
        free(works);
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory starting %u jobs", jobs);
    }
    for (uint32_t j = 0; j < jobs; j++)
        slots[j].fd = -1;
    pc_status status = PC_OK;
    bool more = true, have_pending = false;
    work pending;
    size_t running = 0;
    for (;;) {
        for (uint32_t j = 0; j < jobs && status == PC_OK && (more || have_pending); j++) {
            if (slots[j].pid) continue;
            if (!have_pending) {
                more = next_work(st, &pending);
                if (!more) break;
                have_pending = true;
            }
            works[j] = pending;
            works[j].ctx.gen = &works[j].gen;
            works[j].ctx.check = &o->check;
            works[j].ctx.generate = o->generate;
            works[j].ctx.check_fn = o->check_fn;
            pc_error serr;
            pc_status ss =
                works[j].model
                    ? pc_iso_start(&slots[j], model_case_child, &works[j], o->case_timeout, &serr)
                    : pc_iso_start(&slots[j], pc_iso_case_child, &works[j].ctx, o->case_timeout, &serr);
            if (ss != PC_OK) {
                /* out of processes: wait for a running child to finish and try again (`pending` still owns
                 * what it loaded); with none, give up */
                if (!running) status = pc_error_set(err, serr.status, "%s", serr.message);
                break;
            }
            have_pending = false;
            running++;
        }
        if (status == PC_OK && st->status != PC_OK)
            status = pc_error_set(err, st->status, "%s", st->err.message);
        if (!running || status != PC_OK) break;
        if (!pc_proc_poll(slots, jobs, 200)) continue;
        for (uint32_t j = 0; j < jobs; j++) {
            if (!slots[j].pid || !pc_proc_done(&slots[j])) continue;
            pc_iso_outcome out;
            pc_iso_finish(&slots[j], &out);
            running--;
            if (status == PC_OK) status = handle_done(st, &works[j], &out, err);
            pc_iso_outcome_free(&out);
            work_free(&works[j]);
        }
    }
    if (have_pending) work_free(&pending);
    /* only after an error: children still running are stopped */
    for (uint32_t j = 0; j < jobs; j++)
        if (slots[j].pid) {
            slots[j].timed_out = true;
            pc_iso_outcome out;
            pc_iso_finish(&slots[j], &out);
            pc_iso_outcome_free(&out);
            work_free(&works[j]);
        }
    free(slots);
    free(works);
    return status;
}

/* ---------------------------------------------------------------------------------------------------------------
 * --replay DIR: a database folder, a repro folder, or a --out folder holding both.
 */
static pc_status append_entries(pc_db_entry **all, size_t *n, pc_db_entry *more, size_t n_more, pc_error *err)
{
    size_t total, bytes;
    if (!n_more) {
        free(more);
        return PC_OK;
    }
    pc_db_entry *na = pc_size_add(*n, n_more, &total) && pc_size_mul(total, sizeof *na, &bytes)
                          ? realloc(*all, bytes)
                          : NULL;
    if (!na) {
        pc_db_entries_free(more, n_more);
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory reading failures");
    }
    for (size_t i = 0; i < n_more; i++) {
        bool dup = false;
        for (size_t k = 0; k < *n && !dup; k++)
            dup = strcmp(na[k].name, more[i].name) == 0;
        if (dup)
            pc_db_entry_free(&more[i]);
        else
            na[(*n)++] = more[i];
    }
    free(more);
    *all = na;
    return PC_OK;
}

/* A repro folder given to --replay: replay checks its repro.onnx with its input files and its case.txt
 * settings and faults (what the folder's README promises), never the case its choices regenerate. Outside
 * models (no generator settings) replay the same way. A folder that does not load is counted as unreadable
 * with the reason. */
static pc_status load_repro_folder(const char *dir, pc_db_entry **all, size_t *n, pc_suite_report *r,
                                   pc_error *err)
{
    pc_repro_case rc;
    pc_error rerr;
    pc_error_clear(&rerr);
    pc_status st = pc_repro_case_load(dir, &rc, &rerr);
    const pc_gen_family *fam = st == PC_OK && rc.has_gen ? pc_gen_family_find(rc.gen.family) : NULL;
    if (st == PC_OK && rc.has_gen && !fam) {
        st = pc_error_set(&rerr, PC_ERR_VALUE, "%s/case.txt: unknown family '%s'", dir, rc.gen.family);
        pc_repro_case_free(&rc);
    }
    uint64_t digest = 0;
    if (st == PC_OK && (st = pc_db_digest_file(rc.model_path, &digest, &rerr)) != PC_OK)
        pc_repro_case_free(&rc);
    if (st != PC_OK) {
        if (rerr.status == PC_ERR_NOMEM) return pc_error_set(err, PC_ERR_NOMEM, "%s", rerr.message);
        if (r->db_bad_entries++ == 0) snprintf(r->db_bad_first, sizeof r->db_bad_first, "%s", rerr.message);
        return PC_OK;
    }
    pc_db_entry *e = calloc(1, sizeof *e);
    if (e) e->repro_dir = strdup(dir);
    if (!e || !e->repro_dir) {
        free(e);
        pc_repro_case_free(&rc);
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory reading %s", dir);
    }
    pc_failure_signature(&rc.failure, e->signature, sizeof e->signature);
    e->gen = rc.gen;
    e->gen.family = fam ? fam->name : NULL;
    e->seed = rc.seed;
    e->case_index = rc.case_index;
    e->choices = rc.choices; /* taken over */
    e->n_choices = rc.n_choices;
    e->inject = rc.inject;
    e->repro_settings = true;
    /* named as the database names the same failure, so --replay of an --out folder replays it once: by its
     * choices when they regenerate repro.onnx, by choices and model when the graph phase edited it */
    if (!fam || rc.graph_edited) e->repro_digest = digest ? digest : 1;
    rc.choices = NULL;
    rc.n_choices = 0;
    rc.inject = NULL;
    pc_repro_case_free(&rc);
    snprintf(e->name, sizeof e->name, "%016" PRIx64, pc_db_entry_hash(e));
    return append_entries(all, n, e, 1, err);
}

static pc_status load_dir_entries(const char *dir, pc_db_entry **all, size_t *n, pc_suite_report *r,
                                  pc_error *err)
{
    pc_db_entry *more = NULL;
    size_t n_more = 0, n_bad = 0;
    pc_error bad;
    pc_status st = pc_failure_db_load(dir, &more, &n_more, &n_bad, &bad, err);
    if (st != PC_OK) return st;
    if (n_bad && r->db_bad_entries == 0) snprintf(r->db_bad_first, sizeof r->db_bad_first, "%s", bad.message);
    r->db_bad_entries += n_bad;
    return append_entries(all, n, more, n_more, err);
}

static pc_status load_replay_dir(const char *dir, pc_db_entry **all, size_t *n, pc_suite_report *r,
                                 pc_error *err)
{
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return pc_error_set(err, PC_ERR_USAGE, "--replay: '%s' is not a folder", dir);
    /* Repro folders first: a failure that is both a repro folder and a database entry (an --out folder holds
     * both) is replayed once, from the folder, with the settings it was found with. */
    pc_status st = PC_OK;
    char *own = pc_path_join(dir, "case.txt");
    if (!own) st = pc_error_set(err, PC_ERR_NOMEM, "out of memory reading %s", dir);
    if (st == PC_OK && stat(own, &sb) == 0) st = load_repro_folder(dir, all, n, r, err);
    free(own);
    DIR *d = st == PC_OK ? opendir(dir) : NULL;
    struct dirent *de;
    /* repro folders under an --out folder, in name order for a stable replay order (a database's own
     * NAME.repro folders come with their entries) */
    pc_str_list subs = {0};
    while (d && st == PC_OK && (de = readdir(d)) != NULL) {
        size_t dl = strlen(de->d_name);
        if (de->d_name[0] == '.' || (dl > 6 && strcmp(de->d_name + dl - 6, ".repro") == 0)) continue;
        char *sub = pc_path_join(dir, de->d_name);
        char *file = sub ? pc_path_join(sub, "case.txt") : NULL;
        bool ok = file && (stat(file, &sb) != 0 || pc_str_list_push(&subs, sub));
        free(file);
        free(sub);
        if (!ok) st = pc_error_set(err, PC_ERR_NOMEM, "out of memory reading %s", dir);
    }
    if (d) closedir(d);
    pc_str_list_sort(&subs, 0);
    for (size_t i = 0; i < subs.n && st == PC_OK; i++)
        st = load_repro_folder(subs.items[i], all, n, r, err);
    pc_str_list_free(&subs);
    char *db = pc_path_join(dir, ".db");
    if (!db && st == PC_OK) st = pc_error_set(err, PC_ERR_NOMEM, "out of memory reading %s", dir);
    if (st == PC_OK) st = load_dir_entries(dir, all, n, r, err);
    if (st == PC_OK) st = load_dir_entries(db, all, n, r, err);
    free(db);
    if (st == PC_OK && *n == 0 && r->db_bad_entries == 0)
        st = pc_error_set(err, PC_ERR_USAGE,
                          "--replay: no failures in '%s' (no *.case files, .db/ folder, case.txt or repro "
                          "folders)",
                          dir);
    return st;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Shrinking, repros and the database, one signature at a time in order.
 */
static void entry_of(const pc_suite_options *o, const pc_suite_failure *f, const char *signature,
                     const uint32_t *choices, size_t n, pc_db_entry *e)
{
    memset(e, 0, sizeof *e);
    snprintf(e->signature, sizeof e->signature, "%s", signature);
    e->gen = f->gen;
    e->seed = o->seed;
    e->case_index = f->index;
    e->inject = (char *)o->inject; /* borrowed: never freed through this entry */
    e->choices = (uint32_t *)choices;
    e->n_choices = n;
}

static uint32_t node_count(const pc_case *c)
{
    return c->model && c->model->graph ? c->model->graph->n_nodes : 0;
}

/* The repro of a case that was not shrunk: regenerated from its choices, with the child's check result. */
static pc_status unshrunk_result(const pc_suite_options *o, pc_suite_failure *f, pc_shrink_result *sr,
                                 pc_error *err)
{
    memset(sr, 0, sizeof *sr);
    pc_suite_generate_fn generate = o->generate ? o->generate : pc_case_generate;
    pc_choices ch;
    pc_choices_init_replay(&ch, f->choices, f->n_choices);
    pc_status st = generate(&f->gen, &ch, &sr->kase, err);
    pc_choices_free(&ch);
    if (st != PC_OK) return st;
    size_t bytes;
    if (f->n_choices) {
        if (!pc_size_mul(f->n_choices, sizeof *sr->choices, &bytes) || !(sr->choices = malloc(bytes))) {
            pc_case_free(&sr->kase);
            return pc_error_set(err, PC_ERR_NOMEM, "out of memory copying choices");
        }
        memcpy(sr->choices, f->choices, bytes);
    }
    sr->n_choices = f->n_choices;
    sr->check = f->res; /* moved: the repro writer reads the graphs around the failing pass from it */
    memset(&f->res, 0, sizeof f->res);
    sr->check.failed = true;
    sr->check.failure = f->failure;
    sr->nodes_before = sr->nodes_after = node_count(&sr->kase);
    return PC_OK;
}

/* The repro of a replayed saved repro: its folder's case, loaded again (what the child checked), with the
 * child's check result. rc keeps the folder's settings for the new repro's case.txt. */
static pc_status replayed_repro_result(pc_suite_failure *f, pc_repro_case *rc, pc_shrink_result *sr,
                                       pc_error *err)
{
    memset(sr, 0, sizeof *sr);
    pc_status st = pc_repro_case_load(f->replay_repro_dir, rc, err);
    if (st != PC_OK) return st;
    if ((st = pc_repro_case_load_case(rc, &sr->kase, err)) != PC_OK) {
        pc_repro_case_free(rc);
        return st;
    }
    size_t bytes;
    if (f->n_choices) {
        if (!pc_size_mul(f->n_choices, sizeof *sr->choices, &bytes) || !(sr->choices = malloc(bytes))) {
            pc_case_free(&sr->kase);
            pc_repro_case_free(rc);
            return pc_error_set(err, PC_ERR_NOMEM, "out of memory copying choices");
        }
        memcpy(sr->choices, f->choices, bytes);
    }
    sr->n_choices = f->n_choices;
    sr->graph_edited = rc->graph_edited;
    sr->check = f->res; /* moved, as in unshrunk_result */
    memset(&f->res, 0, sizeof f->res);
    sr->check.failed = true;
    sr->check.failure = f->failure;
    sr->nodes_before = sr->nodes_after = node_count(&sr->kase);
    return PC_OK;
}

static void process_signature(const pc_suite_options *o, pc_suite_report *r, pc_suite_signature *sg)
{
    pc_suite_failure *f = &sg->rep;
    FILE *log = o->log;
    if (sg->known) {
        snprintf(f->note, sizeof f->note, "a known finding (--known): not shrunk or saved");
        return;
    }
    if (!f->have_choices) {
        snprintf(f->note, sizeof f->note, "the case died during generation; rerun it with its seed to debug");
        return;
    }
    bool generator_error = strcmp(f->failure.property, "generator") == 0;
    bool harness_error = strcmp(f->failure.property, "harness") == 0;
    /* a property that could not judge (ERROR) is not shrunk: a smaller case it still cannot judge is no repro
     */
    bool not_judged = f->failure.outcome == PC_PROP_ERROR;
    if (not_judged && !f->replayed)
        snprintf(f->note, sizeof f->note, "the property could not judge the case (ERROR): not shrunk");
    pc_shrink_result sr;
    memset(&sr, 0, sizeof sr);
    bool have_sr = false;
    pc_error err;
    pc_error_clear(&err);
    if (o->shrink && !f->replayed && !generator_error && !harness_error && !not_judged) {
        if (log)
            fprintf(log, "passcheck suite: shrinking %s (case %" PRIu64 ")...\n", sg->signature, f->index);
        double t0 = pc_now_seconds();
        pc_status st = pc_shrink_case(&f->gen, f->choices, f->n_choices, &o->check, &f->failure,
                                      &o->shrink_opts, &sr, &err);
        f->shrink_seconds = pc_now_seconds() - t0;
        r->shrink_seconds += f->shrink_seconds;
        if (st == PC_OK) {
            have_sr = true;
            f->shrunk = true;
            f->nodes_before = sr.nodes_before;
            f->nodes_after = sr.nodes_after;
            f->shrink_checks = sr.checks;
            if (log)
                fprintf(log, "passcheck suite: %s: %u -> %u nodes in %.2f s (%u checks%s)\n", sg->signature,
                        sr.nodes_before, sr.nodes_after, f->shrink_seconds, sr.checks,
                        sr.budget_exhausted ? ", budget exhausted" : "");
        } else {
            snprintf(f->note, sizeof f->note, "not shrunk: %.400s", err.message);
            if (log) fprintf(log, "passcheck suite: %s: not shrunk: %s\n", sg->signature, err.message);
        }
    }
    if (!o->out_dir && !o->db_dir) {
        if (have_sr) pc_shrink_result_free(&sr);
        return;
    }
    /* the settings the repro records: the run's, or a replayed repro folder's own */
    pc_repro_case rc;
    memset(&rc, 0, sizeof rc);
    pc_check_config rcc;
    pc_repro_info info = {o->seed,     f->index, f->gen.family ? &f->gen : NULL, &o->check, o->inject,
                          &f->failure, 0};
    if (f->replayed) info.seed = f->case_seed; /* the entry's suite seed */
    if (!have_sr && !generator_error) {
        pc_error_clear(&err);
        if (f->replay_repro_dir) {
            /* a saved repro replays as itself: never regenerate its (larger) choice case */
            if (replayed_repro_result(f, &rc, &sr, &err) == PC_OK) {
                have_sr = true;
                f->nodes_before = f->nodes_after = sr.nodes_after;
                if (f->replay_repro_settings && pc_repro_case_check_config(&rc, &rcc, &err) == PC_OK) {
                    info.gen = rc.has_gen ? &rc.gen : NULL;
                    info.check = &rcc;
                    info.inject = rc.inject;
                }
            } else if (!f->note[0]) {
                snprintf(f->note, sizeof f->note, "cannot reload the replayed repro: %.400s", err.message);
            }
        } else if (unshrunk_result(o, f, &sr, &err) == PC_OK) {
            have_sr = true;
            f->nodes_before = f->nodes_after = sr.nodes_after;
        } else if (!f->note[0]) {
            snprintf(f->note, sizeof f->note, "cannot regenerate the case for its repro: %.400s",
                     err.message);
        }
    }
    info.original_nodes = f->nodes_before;
    /* Repro folder named by signature and the case's content, so the same failure lands in the same folder (a
     * replayed entry: by the entry's name, which covers a saved repro's model too). */
    pc_db_entry key;
    entry_of(o, f, sg->signature, f->choices, f->n_choices, &key);
    char name[200];
    pc_name_sanitize(sg->signature, name, sizeof name - 10);
    size_t len = strlen(name);
    if (f->replayed && strlen(f->db_name) >= 8)
        snprintf(name + len, sizeof name - len, "-%.8s", f->db_name);
    else
        snprintf(name + len, sizeof name - len, "-%08" PRIx32, (uint32_t)(pc_db_entry_hash(&key) >> 32));
    /* What the database keeps: the shrunk choices (they regenerate a case failing the same way), else the
     * original; when the graph phase edited the case, the minimal repro itself as well (replay checks that).
     */
    const uint32_t *keep = have_sr && f->shrunk && sr.choices ? sr.choices : f->choices;
    size_t n_keep = have_sr && f->shrunk && sr.choices ? sr.n_choices : f->n_choices;
    pc_db_entry entry;
    entry_of(o, f, sg->signature, keep, n_keep, &entry);
    if (o->out_dir && have_sr) {
        char *dir = pc_path_join(o->out_dir, name);
        pc_error_clear(&err);
        if (!dir) {
            snprintf(f->note, sizeof f->note, "out of memory naming the repro folder");
        } else if (pc_repro_write(dir, &sr, &info, &err) != PC_OK) {
            snprintf(f->note, sizeof f->note, "repro not written: %.400s", err.message);
            if (log) fprintf(log, "passcheck suite: %s: repro not written: %s\n", sg->signature, err.message);
        } else {
            f->repro_dir = dir;
            dir = NULL;
        }
        free(dir);
    }
    if (o->db_dir && !o->replay_dir && !f->replayed) {
        pc_error_clear(&err);
        pc_status ds = have_sr && f->shrunk && sr.graph_edited
                           ? pc_failure_db_save_repro(o->db_dir, &entry, &sr, &info, &err)
                           : pc_failure_db_save(o->db_dir, &entry, &err);
        if (ds == PC_OK) {
            snprintf(f->db_name, sizeof f->db_name, "%s", entry.name);
            r->db_saved++;
        } else if (log) {
            fprintf(log, "passcheck suite: warning: failure %s not saved in the database: %s\n",
                    sg->signature, err.message);
        }
    }
    if (have_sr) pc_shrink_result_free(&sr);
    pc_repro_case_free(&rc);
}

/* ---------------------------------------------------------------------------------------------------------------
 * The run.
 */
static pc_status select_families(const pc_suite_options *o, uint32_t **out, uint32_t *n, pc_error *err)
{
    size_t count = o->families ? o->n_families : pc_gen_family_count();
    if (!count) return pc_error_set(err, PC_ERR_USAGE, "no generator families to run");
    uint32_t *fams = calloc(count, sizeof *fams);
    if (!fams) return pc_error_set(err, PC_ERR_NOMEM, "out of memory selecting families");
    for (size_t i = 0; i < count; i++) {
        if (!o->families) {
            fams[i] = (uint32_t)i;
            continue;
        }
        fams[i] = family_index(o->families[i]);
        if (fams[i] == UINT32_MAX) {
            free(fams);
            return pc_error_set(err, PC_ERR_USAGE, "unknown family '%s' (passcheck suite --list-families)",
                                o->families[i]);
        }
    }
    *out = fams;
    *n = (uint32_t)count;
    return PC_OK;
}

pc_status pc_suite_run(const pc_suite_options *o, pc_suite_report *rep, pc_error *err)
{
    memset(rep, 0, sizeof *rep);
    if (o->shard_count == 0 || o->shard_index >= o->shard_count)
        return pc_error_set(err, PC_ERR_USAGE, "shard %u of %u does not exist", o->shard_index + 1,
                            o->shard_count);
    if (!(o->case_timeout > 0)) return pc_error_set(err, PC_ERR_USAGE, "case timeout must be positive");
    run_state st;
    memset(&st, 0, sizeof st);
    st.o = o;
    st.rep = rep;
    uint32_t *fams = NULL;
    pc_status s = select_families(o, &fams, &st.n_families, err);
    if (s != PC_OK) return s;
    /* one ORT server for the whole run, started before the cases fork so they share it */
    if (o->check.oracle_ort && (s = pc_ort_server_start(o->check.ort_dir, err)) != PC_OK) {
        free(fams);
        return s;
    }
    st.families = fams;
    rep->n_families = (uint32_t)pc_gen_family_count();
    size_t nf = rep->n_families ? rep->n_families : 1;
    rep->family_selected = calloc(nf, sizeof *rep->family_selected);
    rep->family_cases = calloc(nf, sizeof *rep->family_cases);
    rep->family_failed = calloc(nf, sizeof *rep->family_failed);
    if (!rep->family_selected || !rep->family_cases || !rep->family_failed) {
        free(fams);
        pc_suite_report_free(rep);
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory starting the suite");
    }
    for (uint32_t i = 0; i < st.n_families; i++)
        rep->family_selected[fams[i]] = true;
    st.t0 = pc_now_seconds();

    /* 1. Saved failures first (Hypothesis's reuse phase): a known bug shows up at once, not after N cases. */
    if (o->replay_dir)
        s = load_replay_dir(o->replay_dir, &st.entries, &st.n_entries, rep, err);
    else if (o->db_dir)
        s = load_dir_entries(o->db_dir, &st.entries, &st.n_entries, rep, err);
    st.entries_from_db = !o->replay_dir;
    if (s == PC_OK && st.n_entries) {
        st.replaying = true;
        st.total = st.n_entries;
        s = run_batch(&st, err);
        st.replaying = false;
    }
    /* 2. The cases. */
    if (s == PC_OK && !o->replay_dir && !st.stop) {
        st.done = 0;
        st.failed = 0;
        st.total = 0;
        if (o->seconds <= 0) /* indices i < n_cases with i % count == index */
            st.total = o->n_cases / o->shard_count + (o->shard_index < o->n_cases % o->shard_count);
        st.deadline = o->seconds > 0 ? st.t0 + o->seconds : 0;
        s = run_batch(&st, err);
    }
    rep->seconds = pc_now_seconds() - st.t0;
    if (s == PC_OK) s = finish_order(rep, err);
    /* 3. One repro (and database entry) per signature, in order. */
    for (size_t i = 0; s == PC_OK && i < rep->n_signatures; i++) {
        if (o->progress) {
            pc_suite_progress p = {i, rep->n_signatures, rep->n_signatures, pc_now_seconds() - st.t0,
                                   0, "shrink"};
            o->progress(o->progress_ctx, &p);
        }
        process_signature(o, rep, &rep->signatures[i]);
    }
    pc_db_entries_free(st.entries, st.n_entries);
    free(fams);
    if (s != PC_OK) pc_suite_report_free(rep);
    return s;
}
