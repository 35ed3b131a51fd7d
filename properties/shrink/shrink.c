/*
 * shrink.c — the shrinker's driver and its first phase, on the choice sequence (docs/shrinking.md).
 *
 * Phase 1 edits the recorded choices and regenerates, so every candidate is a case the generator could have
 * made (valid by construction). Simpler means fewer nodes, then shortlex on the normalized sequence (the
 * draws the generator actually made, trailing zeros dropped): shorter, then lexicographically smaller. A
 * candidate is kept only when it is simpler than the best and still fails the same way. Each pass makes one
 * sweep; the passes repeat while any of them made progress (Hypothesis's rule: no pass loops to a fixpoint on
 * its own). Successful edits are grown geometrically (delete 2k, 4k, ... after k worked), so m removable
 * spans cost O(log m) checks rather than m.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "properties/shrink/shrink_internal.h"
#include "properties/runner/util.h"

void pc_shrink_options_default(pc_shrink_options *o)
{
    memset(o, 0, sizeof *o);
    o->max_seconds = 5.0;
    o->max_checks = 5000;
    o->graph_phase = true;
    o->isolate = true;
    o->case_timeout = 10.0;
    o->log = NULL;
}

void pc_shrink_result_free(pc_shrink_result *r)
{
    if (!r) return;
    free(r->choices);
    pc_case_free(&r->kase);
    pc_check_result_free(&r->check);
    memset(r, 0, sizeof *r);
}

/* ---- state shared with the graph phase
 * ---------------------------------------------------------------------- */

uint32_t pc_shrink_case_nodes(const pc_case *c)
{
    return c->model && c->model->graph ? c->model->graph->n_nodes : 0;
}

bool pc_shrink_budget_left(pc_shrink_state *s)
{
    if (s->exhausted) return false;
    double t = pc_now_seconds() - s->t_start;
    if (s->checks >= s->opts->max_checks || t >= s->opts->max_seconds) s->exhausted = true;
    return !s->exhausted && !(s->phase_limit > 0 && t >= s->phase_limit);
}

static char *strdup_or_null(const char *s, bool *oom)
{
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) *oom = true;
    return d;
}

pc_status pc_shrink_case_copy(const pc_case *src, pc_case *dst, pc_error *err)
{
    memset(dst, 0, sizeof *dst);
    uint8_t *bytes = NULL;
    size_t size = 0;
    pc_status st = pc_model_save_bytes(src->model, &bytes, &size, err);
    if (st != PC_OK) return st;
    pc_load_options lo;
    pc_load_options_default(&lo);
    lo.skip_verify = true; /* every candidate is verified after its edit */
    st = pc_model_load_bytes(bytes, size, &lo, &dst->model, err);
    free(bytes);
    if (st != PC_OK) {
        pc_error_prefix(err, "shrink: reloading the case's model: ");
        return st;
    }
    /* the saver keeps only declared value_info: inferred types of intermediate values (which reconnecting a
     * consumer and replacing a value need) come back by inference; a model it rejects keeps what it declared
     */
    pc_error ierr;
    (void)pc_graph_infer_shapes(dst->model->graph, &ierr);
    bool oom = false;
    if (src->n_inputs) {
        dst->inputs = calloc(src->n_inputs, sizeof *dst->inputs);
        if (!dst->inputs) oom = true;
        for (uint32_t i = 0; !oom && i < src->n_inputs; i++) {
            dst->inputs[i] = src->inputs[i] ? pc_data_ref(src->inputs[i]) : NULL;
            dst->n_inputs = i + 1;
        }
    }
    dst->ep_text = strdup_or_null(src->ep_text, &oom);
    dst->ep_list = strdup_or_null(src->ep_list, &oom);
    dst->layer_assignment = strdup_or_null(src->layer_assignment, &oom);
    dst->family = src->family;
    if (oom) {
        pc_case_free(dst);
        return pc_error_set(err, PC_ERR_NOMEM, "shrink: out of memory copying a case");
    }
    return PC_OK;
}

pc_status pc_shrink_try(pc_shrink_state *s, pc_case *cand, const char *step, bool *accepted, pc_error *err)
{
    (void)err;
    *accepted = false;
    pc_check_result res;
    memset(&res, 0, sizeof res);
    bool interesting = false;
    pc_error cerr;
    pc_error_clear(&cerr);
    s->checks++;
    /* a candidate that cannot be checked is just not interesting: the shrink goes on with the others */
    if (s->check(s->check_ctx, cand, &res, &interesting, &cerr) != PC_OK) interesting = false;
    if (!interesting) {
        pc_check_result_free(&res);
        pc_case_free(cand);
        return PC_OK;
    }
    pc_case_free(&s->best);
    pc_check_result_free(&s->best_res);
    s->best = *cand;
    s->best_res = res;
    memset(cand, 0, sizeof *cand);
    s->accepted++;
    s->best_version++;
    *accepted = true;
    if (s->opts->log)
        fprintf(s->opts->log, "shrink: check %u: %s: %u nodes (%.2f s)\n", s->checks, step,
                pc_shrink_case_nodes(&s->best), pc_now_seconds() - s->t_start);
    return PC_OK;
}

/* ---- phase 1: the choice sequence
 * --------------------------------------------------------------------------- */

typedef struct choice_phase {
    pc_shrink_state *s;
    const pc_gen_config *gen;
    uint32_t *cur; /* the best case's normalized choices (malloc'ed) */
    size_t n;
    uint32_t *cand; /* scratch for a candidate, n + 1 entries */
    size_t cap_cand;
    uint64_t
        *seen; /* open-addressing set of hashes of normalized sequences already checked (0 = empty slot) */
    size_t cap_seen, n_seen;
} choice_phase;

/* shortlex: shorter first, then lexicographically smaller */
static int shortlex_cmp(const uint32_t *a, size_t na, const uint32_t *b, size_t nb)
{
    if (na != nb) return na < nb ? -1 : 1;
    for (size_t i = 0; i < na; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

static uint64_t choices_hash(const uint32_t *v, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= v[i];
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    h ^= (uint64_t)n * 0x9e3779b97f4a7c15ull;
    return h ? h : 1;
}

/* Inserts h; false when it was already there. OOM is reported through *oom (the set then just stops growing).
 */
static bool seen_insert(choice_phase *cp, uint64_t h, bool *oom)
{
    if ((cp->n_seen + 1) * 2 > cp->cap_seen) {
        size_t ncap = cp->cap_seen ? cp->cap_seen * 2 : 1024;
        uint64_t *ns = calloc(ncap, sizeof *ns);
        if (!ns) {
            *oom = true;
            return true;
        }
        for (size_t i = 0; i < cp->cap_seen; i++) {
            uint64_t x = cp->seen[i];
            if (!x) continue;
            size_t j = (size_t)(x % ncap);
            while (ns[j])
                j = (j + 1) % ncap;
            ns[j] = x;
        }
        free(cp->seen);
        cp->seen = ns;
        cp->cap_seen = ncap;
    }
    size_t j = (size_t)(h % cp->cap_seen);
    while (cp->seen[j]) {
        if (cp->seen[j] == h) return false;
        j = (j + 1) % cp->cap_seen;
    }
    cp->seen[j] = h;
    cp->n_seen++;
    return true;
}

/* Regenerates from `cand`, and checks the result when its normalized choices are new and it is simpler than
 * the best's. A generation error rejects the candidate (the generator could not make a case of those
 * choices). */
static pc_status try_choices(choice_phase *cp, const uint32_t *cand, size_t n, const char *step,
                             bool *accepted, pc_error *err)
{
    *accepted = false;
    if (!pc_shrink_budget_left(cp->s)) return PC_OK;
    pc_choices ch;
    pc_choices_init_replay(&ch, cand, n);
    pc_case c;
    memset(&c, 0, sizeof c);
    pc_error gerr;
    pc_error_clear(&gerr);
    pc_status st = pc_case_generate(cp->gen, &ch, &c, &gerr);
    if (st != PC_OK) {
        pc_case_free(&c);
        pc_choices_free(&ch);
        if (st == PC_ERR_NOMEM) {
            *err = gerr;
            return st;
        }
        return PC_OK;
    }
    size_t m = ch.n;
    while (m && ch.values[m - 1] == 0)
        m--;
    bool oom = false;
    /* simpler = fewer nodes, then shortlex: a shorter sequence alone may make a bigger graph (fewer data
     * draws, more ops), and the node count is what a repro's reader sees */
    uint32_t nodes = pc_shrink_case_nodes(&c), best_nodes = pc_shrink_case_nodes(&cp->s->best);
    bool simpler =
        nodes < best_nodes || (nodes == best_nodes && shortlex_cmp(ch.values, m, cp->cur, cp->n) < 0);
    if (!simpler || !seen_insert(cp, choices_hash(ch.values, m), &oom)) {
        pc_case_free(&c);
        pc_choices_free(&ch);
        return PC_OK;
    }
    uint32_t *norm = malloc((m ? m : 1) * sizeof *norm);
    if (!norm || oom) {
        free(norm);
        pc_case_free(&c);
        pc_choices_free(&ch);
        return pc_error_set(err, PC_ERR_NOMEM, "shrink: out of memory recording a candidate's choices");
    }
    if (m) memcpy(norm, ch.values, m * sizeof *norm);
    pc_choices_free(&ch);
    st = pc_shrink_try(cp->s, &c, step, accepted, err);
    if (st != PC_OK || !*accepted) {
        free(norm);
        return st;
    }
    free(cp->cur);
    cp->cur = norm;
    cp->n = m;
    return PC_OK;
}

static bool cand_reserve(choice_phase *cp, size_t n, pc_error *err)
{
    if (n <= cp->cap_cand) return true;
    uint32_t *nc = realloc(cp->cand, n * sizeof *nc);
    if (!nc) {
        pc_error_set(err, PC_ERR_NOMEM, "shrink: out of memory");
        return false;
    }
    cp->cand = nc;
    cp->cap_cand = n;
    return true;
}

/* The best sequence without [i, i+k). */
static pc_status try_delete(choice_phase *cp, size_t i, size_t k, const char *step, bool *accepted,
                            pc_error *err)
{
    *accepted = false;
    if (i + k > cp->n || k == 0) return PC_OK;
    if (!cand_reserve(cp, cp->n + 1, err)) return PC_ERR_NOMEM;
    memcpy(cp->cand, cp->cur, i * sizeof *cp->cand);
    memcpy(cp->cand + i, cp->cur + i + k, (cp->n - i - k) * sizeof *cp->cand);
    return try_choices(cp, cp->cand, cp->n - k, step, accepted, err);
}

/* The best sequence with [i, i+k) set to `value`... for a span: zeroed. */
static pc_status try_zero(choice_phase *cp, size_t i, size_t k, bool *accepted, pc_error *err)
{
    *accepted = false;
    if (i >= cp->n) return PC_OK;
    if (k > cp->n - i) k = cp->n - i;
    if (!cand_reserve(cp, cp->n + 1, err)) return PC_ERR_NOMEM;
    memcpy(cp->cand, cp->cur, cp->n * sizeof *cp->cand);
    memset(cp->cand + i, 0, k * sizeof *cp->cand);
    return try_choices(cp, cp->cand, cp->n, "choices: zero span", accepted, err);
}

static pc_status try_set(choice_phase *cp, size_t i, uint32_t v, const char *step, bool *accepted,
                         pc_error *err)
{
    *accepted = false;
    if (i >= cp->n || v >= cp->cur[i]) return PC_OK;
    if (!cand_reserve(cp, cp->n + 1, err)) return PC_ERR_NOMEM;
    memcpy(cp->cand, cp->cur, cp->n * sizeof *cp->cand);
    cp->cand[i] = v;
    return try_choices(cp, cp->cand, cp->n, step, accepted, err);
}

/* Drops the tail: keep the first n/2, 3n/4, 7n/8, ... choices; restarts on the shorter sequence after a
 * success (FX minifier's suffix truncation; past the end every draw is 0, so this is "zero the rest"). */
static pc_status pass_truncate(choice_phase *cp, pc_error *err)
{
    bool again = true;
    while (again && pc_shrink_budget_left(cp->s)) {
        again = false;
        size_t n = cp->n;
        for (size_t cut = n / 2; cut >= 1 && !again; cut /= 2) {
            bool acc;
            pc_status st = try_choices(cp, cp->cur, n - cut, "choices: truncate", &acc, err);
            if (st != PC_OK) return st;
            if (acc) again = true;
            if (!pc_shrink_budget_left(cp->s)) break;
        }
    }
    return PC_OK;
}

static pc_status pass_delete(choice_phase *cp, pc_error *err)
{
    static const size_t sizes[] = {8, 4, 2, 1};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t k = sizes[si];
        for (size_t i = 0; i + k <= cp->n && pc_shrink_budget_left(cp->s);) {
            bool acc;
            pc_status st = try_delete(cp, i, k, "choices: delete span", &acc, err);
            if (st != PC_OK) return st;
            if (!acc) {
                i++;
                continue;
            }
            /* adaptive: a span went; try twice as much at the same place until that fails */
            for (size_t sz = 2 * k; i + sz <= cp->n && pc_shrink_budget_left(cp->s); sz *= 2) {
                st = try_delete(cp, i, sz, "choices: delete span", &acc, err);
                if (st != PC_OK) return st;
                if (!acc) break;
            }
        }
    }
    return PC_OK;
}

static bool span_is_zero(const uint32_t *v, size_t i, size_t k, size_t n)
{
    for (size_t j = i; j < i + k && j < n; j++)
        if (v[j]) return false;
    return true;
}

static pc_status pass_zero(choice_phase *cp, pc_error *err)
{
    static const size_t sizes[] = {8, 4, 2, 1};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t k = sizes[si];
        size_t step = k > 1 ? k / 2 : 1;
        for (size_t i = 0; i < cp->n && pc_shrink_budget_left(cp->s); i += step) {
            if (span_is_zero(cp->cur, i, k, cp->n)) continue;
            bool acc;
            pc_status st = try_zero(cp, i, k, &acc, err);
            if (st != PC_OK) return st;
            for (size_t sz = 2 * k; acc && i + k < cp->n && pc_shrink_budget_left(cp->s); sz *= 2) {
                if (span_is_zero(cp->cur, i, sz, cp->n)) continue;
                st = try_zero(cp, i, sz, &acc, err);
                if (st != PC_OK) return st;
                if (i + sz >= cp->n) break;
            }
        }
    }
    return PC_OK;
}

/* Each value: 0, then halving while that works, then minus one, then a binary search below what is left (at
 * most 16 probes: seeds are 32-bit and rarely matter bit by bit). */
static pc_status pass_lower(choice_phase *cp, pc_error *err)
{
    for (size_t i = 0; i < cp->n && pc_shrink_budget_left(cp->s); i++) {
        if (cp->cur[i] == 0) continue;
        bool acc;
        pc_status st = try_set(cp, i, 0, "choices: value to 0", &acc, err);
        if (st != PC_OK) return st;
        if (acc) continue;
        do {
            if (i >= cp->n || cp->cur[i] < 2) break;
            st = try_set(cp, i, cp->cur[i] / 2, "choices: halve value", &acc, err);
            if (st != PC_OK) return st;
        } while (acc && pc_shrink_budget_left(cp->s));
        if (i >= cp->n || cp->cur[i] == 0) continue;
        st = try_set(cp, i, cp->cur[i] - 1, "choices: value minus 1", &acc, err);
        if (st != PC_OK) return st;
        /* the smallest value that still fails lies in (lo, hi]: 0 failed to be interesting, cur[i] is */
        uint32_t lo = 0;
        for (int probe = 0; probe < 16 && i < cp->n && pc_shrink_budget_left(cp->s); probe++) {
            uint32_t hi = cp->cur[i];
            if (hi <= lo + 1) break;
            uint32_t mid = lo + (hi - lo) / 2;
            st = try_set(cp, i, mid, "choices: lower value", &acc, err);
            if (st != PC_OK) return st;
            if (!acc) lo = mid;
        }
    }
    return PC_OK;
}

/* Swaps adjacent spans of k values when the later one is lexicographically smaller (moves small values
 * first). */
static pc_status pass_sort(choice_phase *cp, pc_error *err)
{
    for (size_t k = 1; k <= 2; k++) {
        for (size_t i = 0; i + 2 * k <= cp->n && pc_shrink_budget_left(cp->s); i++) {
            if (shortlex_cmp(cp->cur + i + k, k, cp->cur + i, k) >= 0) continue;
            if (!cand_reserve(cp, cp->n + 1, err)) return PC_ERR_NOMEM;
            memcpy(cp->cand, cp->cur, cp->n * sizeof *cp->cand);
            memcpy(cp->cand + i, cp->cur + i + k, k * sizeof *cp->cand);
            memcpy(cp->cand + i + k, cp->cur + i, k * sizeof *cp->cand);
            bool acc;
            pc_status st = try_choices(cp, cp->cand, cp->n, "choices: sort spans", &acc, err);
            if (st != PC_OK) return st;
        }
    }
    return PC_OK;
}

static pc_status choice_phase_run(choice_phase *cp, pc_error *err)
{
    typedef pc_status (*pass_fn)(choice_phase *, pc_error *);
    static const pass_fn passes[] = {pass_truncate, pass_delete, pass_zero, pass_lower, pass_sort};
    for (;;) {
        uint32_t before = cp->s->accepted;
        for (size_t p = 0; p < sizeof passes / sizeof passes[0] && pc_shrink_budget_left(cp->s); p++) {
            pc_status st = passes[p](cp, err);
            if (st != PC_OK) return st;
        }
        if (cp->s->accepted == before || !pc_shrink_budget_left(cp->s)) return PC_OK;
    }
}

/* ---- drivers
 * ------------------------------------------------------------------------------------------------- */

static void state_init(pc_shrink_state *s, pc_shrink_check_fn check, void *ctx, const pc_shrink_options *opts)
{
    memset(s, 0, sizeof *s);
    s->check = check;
    s->check_ctx = ctx;
    s->opts = opts;
    s->t_start = pc_now_seconds();
}

/* Checks the starting case (always, whatever the budget): it must be interesting. Takes ownership of *c. */
static pc_status state_start(pc_shrink_state *s, pc_case *c, pc_error *err)
{
    pc_check_result res;
    memset(&res, 0, sizeof res);
    bool interesting = false;
    s->checks++;
    pc_status st = s->check(s->check_ctx, c, &res, &interesting, err);
    if (st != PC_OK) {
        pc_check_result_free(&res);
        pc_case_free(c);
        pc_error_prefix(err, "shrink: checking the starting case: ");
        return st;
    }
    if (!interesting) {
        char sig[128] = "";
        bool failed = res.failed;
        if (failed) pc_failure_signature(&res.failure, sig, sizeof sig);
        pc_check_result_free(&res);
        pc_case_free(c);
        return pc_error_set(err, PC_ERR_CHECK_FAILED,
                            "shrink: the starting case does not fail the same way on replay (%s%s)",
                            failed ? "it fails as " : "it passes", sig);
    }
    s->best = *c;
    s->best_res = res;
    memset(c, 0, sizeof *c);
    return PC_OK;
}

static void state_finish(pc_shrink_state *s, pc_shrink_result *out)
{
    out->kase = s->best;
    out->check = s->best_res;
    memset(&s->best, 0, sizeof s->best);
    memset(&s->best_res, 0, sizeof s->best_res);
    out->graph_edited = s->graph_edited;
    out->checks = s->checks;
    out->accepted = s->accepted;
    out->seconds = pc_now_seconds() - s->t_start;
    out->nodes_after = pc_shrink_case_nodes(&out->kase);
    out->budget_exhausted = s->exhausted;
}

static void state_free(pc_shrink_state *s)
{
    pc_case_free(&s->best);
    pc_check_result_free(&s->best_res);
}

pc_status pc_shrink_case_fn(const pc_gen_config *gen, const uint32_t *choices, size_t n_choices,
                            pc_shrink_check_fn check, void *check_ctx, const pc_shrink_options *opts,
                            pc_shrink_result *out, pc_error *err)
{
    memset(out, 0, sizeof *out);
    pc_shrink_options defaults;
    if (!opts) {
        pc_shrink_options_default(&defaults);
        opts = &defaults;
    }
    pc_shrink_state s;
    state_init(&s, check, check_ctx, opts);
    choice_phase cp = {.s = &s, .gen = gen};

    /* the starting case, regenerated from its choices (replay must reproduce it) */
    pc_choices ch;
    pc_choices_init_replay(&ch, choices, n_choices);
    pc_case c;
    memset(&c, 0, sizeof c);
    pc_status st = pc_case_generate(gen, &ch, &c, err);
    if (st != PC_OK) {
        pc_case_free(&c);
        pc_choices_free(&ch);
        pc_error_prefix(err, "shrink: regenerating the starting case: ");
        return st;
    }
    cp.n = ch.n;
    while (cp.n && ch.values[cp.n - 1] == 0)
        cp.n--;
    cp.cur = malloc((cp.n ? cp.n : 1) * sizeof *cp.cur);
    if (!cp.cur) {
        pc_case_free(&c);
        pc_choices_free(&ch);
        return pc_error_set(err, PC_ERR_NOMEM, "shrink: out of memory");
    }
    if (cp.n) memcpy(cp.cur, ch.values, cp.n * sizeof *cp.cur);
    pc_choices_free(&ch);
    uint32_t nodes_before = pc_shrink_case_nodes(&c);
    st = state_start(&s, &c, err);
    if (st == PC_OK) {
        bool oom = false;
        seen_insert(&cp, choices_hash(cp.cur, cp.n), &oom);
        /* the choice phase gets half the time when the graph phase follows: on large graphs whose failure
         * needs one particular spot, regenerating from edited choices rarely keeps it and could eat the whole
         * budget, while the graph phase's cuts and removals still shrink them (a 200-node case stayed at 110
         * nodes) */
        if (opts->graph_phase) s.phase_limit = opts->max_seconds / 2;
        st = oom ? pc_error_set(err, PC_ERR_NOMEM, "shrink: out of memory") : choice_phase_run(&cp, err);
        s.phase_limit = 0;
    }
    if (st == PC_OK) {
        out->choices = cp.cur;
        out->n_choices = cp.n;
        cp.cur = NULL;
        if (opts->graph_phase) st = pc_shrink_graph_phase(&s, err);
    }
    free(cp.cur);
    free(cp.cand);
    free(cp.seen);
    if (st != PC_OK) {
        free(out->choices);
        out->choices = NULL;
        out->n_choices = 0;
        state_free(&s);
        return st;
    }
    state_finish(&s, out);
    out->nodes_before = nodes_before;
    return PC_OK;
}

pc_status pc_shrink_model_fn(const pc_case *c, pc_shrink_check_fn check, void *check_ctx,
                             const pc_shrink_options *opts, pc_shrink_result *out, pc_error *err)
{
    memset(out, 0, sizeof *out);
    pc_shrink_options defaults;
    if (!opts) {
        pc_shrink_options_default(&defaults);
        opts = &defaults;
    }
    pc_shrink_state s;
    state_init(&s, check, check_ctx, opts);
    pc_case copy;
    pc_status st = pc_shrink_case_copy(c, &copy, err);
    if (st != PC_OK) return st;
    uint32_t nodes_before = pc_shrink_case_nodes(&copy);
    st = state_start(&s, &copy, err);
    if (st == PC_OK) st = pc_shrink_graph_phase(&s, err);
    if (st != PC_OK) {
        state_free(&s);
        return st;
    }
    state_finish(&s, out);
    out->nodes_before = nodes_before;
    return PC_OK;
}

/* ---- the property-check predicate
 * ----------------------------------------------------------------------------- */

typedef struct target_ctx {
    const pc_check_config *cc;
    const pc_failure *target;
    bool isolate;
    double timeout;
    pc_iso_worker *worker; /* isolated checks of a property-failure target go through one worker */
} target_ctx;

static pc_status target_check(void *ctx, const pc_case *c, pc_check_result *res, bool *interesting,
                              pc_error *err)
{
    const target_ctx *t = ctx;
    pc_status st = t->worker    ? pc_iso_worker_check(t->worker, c, res, err)
                   : t->isolate ? pc_case_check_isolated(c, t->cc, t->timeout, res, err)
                                : pc_case_check(c, t->cc, res, err);
    if (st != PC_OK) return st;
    *interesting = res->failed && pc_failure_same(&res->failure, t->target);
    return PC_OK;
}

/* Isolated candidates of a property failure are checked by one worker process (shrink_internal.h): the same
 * outcomes as a child per candidate, without a fork and a leak check per candidate. A crash or timeout target
 * keeps a child per candidate: its interesting candidates kill the worker anyway, and a crash found by a
 * sanitizer at exit (crash@PASS/exit-N) only shows at a child's exit. */
static pc_status target_init(target_ctx *t, const pc_check_config *cc, const pc_failure *target,
                             const pc_shrink_options *opts, pc_error *err)
{
    *t = (target_ctx){cc, target, opts->isolate, opts->case_timeout, NULL};
    if (!opts->isolate || strcmp(target->property, "crash") == 0 || strcmp(target->property, "timeout") == 0)
        return PC_OK;
    return pc_iso_worker_create(cc, NULL, opts->case_timeout, &t->worker, err);
}

static void target_finish(target_ctx *t)
{
    if (!t->worker) return;
    int status = pc_iso_worker_destroy(t->worker, NULL);
    t->worker = NULL;
    if (status != 0) /* its sanitizer report (a leak in a checked case) is just above on stderr */
        fprintf(stderr, "shrink: the candidate worker ended with %s %d (a sanitizer report above?)\n",
                WIFSIGNALED(status) ? "signal" : "status",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/* One shrink of `target` (a generated case when `c` is NULL, else an outside model) judged with `cc`. */
static pc_status shrink_judged(const pc_gen_config *gen, const uint32_t *choices, size_t n_choices,
                               const pc_case *c, const pc_check_config *cc, const pc_failure *target,
                               const pc_shrink_options *opts, pc_shrink_result *out, pc_error *err)
{
    target_ctx t;
    pc_status st = target_init(&t, cc, target, opts, err);
    if (st != PC_OK) return st;
    st = c ? pc_shrink_model_fn(c, target_check, &t, opts, out, err)
           : pc_shrink_case_fn(gen, choices, n_choices, target_check, &t, opts, out, err);
    target_finish(&t);
    return st;
}

/* An alloc-failure target is judged at every allocation (alloc_every): with the one point each candidate's
 * fingerprint draws, a smaller graph with the bug passes by luck of the draw and shrinking stalls (a
 * fold-skips-errors catch stayed at 10 nodes; judged at every point it shrank to 2). When the starting case
 * fails otherwise at an earlier point (another kind), the target is shrunk as the run judged it. */
static pc_status shrink_target(const pc_gen_config *gen, const uint32_t *choices, size_t n_choices,
                               const pc_case *c, const pc_check_config *cc, const pc_failure *target,
                               const pc_shrink_options *opts, pc_shrink_result *out, pc_error *err)
{
    pc_shrink_options defaults;
    if (!opts) {
        pc_shrink_options_default(&defaults);
        opts = &defaults;
    }
    memset(out, 0, sizeof *out);
    /* an ERROR says the property could not judge (an oracle missing, the reference refusing the graph): a
     * smaller case that "fails the same way" would be one it still cannot judge, not a repro of a bug */
    if (target->outcome == PC_PROP_ERROR)
        return pc_error_set(err, PC_ERR_USAGE,
                            "%s could not judge the case (ERROR, not FAIL): nothing to shrink: %s",
                            target->property, target->message);
    if (!cc->alloc_every && strcmp(target->property, pc_prop_alloc_failure.name) == 0) {
        pc_check_config every = *cc;
        every.alloc_every = true;
        pc_status st = shrink_judged(gen, choices, n_choices, c, &every, target, opts, out, err);
        if (st != PC_ERR_CHECK_FAILED) {
            out->alloc_every = st == PC_OK;
            return st;
        }
        pc_error_clear(err);
    }
    pc_status st = shrink_judged(gen, choices, n_choices, c, cc, target, opts, out, err);
    if (st == PC_OK) out->alloc_every = cc->alloc_every;
    return st;
}

pc_status pc_shrink_case(const pc_gen_config *gen, const uint32_t *choices, size_t n_choices,
                         const pc_check_config *cc, const pc_failure *target, const pc_shrink_options *opts,
                         pc_shrink_result *out, pc_error *err)
{
    return shrink_target(gen, choices, n_choices, NULL, cc, target, opts, out, err);
}

pc_status pc_shrink_model(const pc_case *c, const pc_check_config *cc, const pc_failure *target,
                          const pc_shrink_options *opts, pc_shrink_result *out, pc_error *err)
{
    return shrink_target(NULL, NULL, 0, c, cc, target, opts, out, err);
}
