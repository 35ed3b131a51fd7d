/* The property registry and the case runner: a copy of the case goes through the pass pipeline, and after
 * every pass that changed it (and after partitioning) every selected property compares the graph before and
 * after that pass; at the end the final functions compare the original with the fully optimized graph. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "properties/property.h"
#include "properties/runner/util.h"
#include "reference/reference.h"

/* The catalogue, in report order. ort-oracle runs only with --oracle ort. */
static const pc_property *const properties[] = {
    &pc_prop_numerics,   &pc_prop_annotations,    &pc_prop_ep_assignment, &pc_prop_transpose_minimal,
    &pc_prop_validity,   &pc_prop_idempotence,    &pc_prop_roundtrip,     &pc_prop_determinism,
    &pc_prop_ort_oracle, &pc_prop_fusion_sources, &pc_prop_rewrite_fired, &pc_prop_alloc_failure,
    &pc_prop_evaluator,  &pc_prop_ep_file,        &pc_prop_layer_rules,   &pc_prop_runtime,
};
#define N_PROPERTIES (sizeof properties / sizeof properties[0])
_Static_assert(N_PROPERTIES < (size_t)PC_MAX_PROPERTIES,
               "property table (and the extra slot) fits the result arrays");

size_t pc_property_count(void)
{
    return N_PROPERTIES;
}
const pc_property *pc_property_at(size_t i)
{
    return i < N_PROPERTIES ? properties[i] : NULL;
}

const pc_property *pc_property_find(const char *name)
{
    for (size_t i = 0; name && i < N_PROPERTIES; i++)
        if (strcmp(properties[i]->name, name) == 0) return properties[i];
    return NULL;
}

static size_t property_index(const pc_property *p)
{
    for (size_t i = 0; i < N_PROPERTIES; i++)
        if (properties[i] == p) return i;
    return N_PROPERTIES;
}

const char *pc_prop_outcome_name(pc_prop_outcome o)
{
    static const char *const names[] = {"pass", "fail", "skip", "error"};
    _Static_assert(sizeof names / sizeof names[0] == PC_PROP_OUTCOME_COUNT, "outcome names");
    return (unsigned)o < PC_PROP_OUTCOME_COUNT ? names[o] : "?";
}

void pc_check_config_default(pc_check_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < N_PROPERTIES; i++)
        cfg->enabled[i] = properties[i] != &pc_prop_ort_oracle;
    cfg->level = PC_LEVEL_MAX;
    cfg->exact_oracle_max_nodes = 12;
}

pc_status pc_check_config_select(pc_check_config *cfg, const char *list, pc_error *err)
{
    bool enabled[PC_MAX_PROPERTIES] = {0};
    const char *p = list ? list : "";
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        size_t found = N_PROPERTIES;
        for (size_t i = 0; i < N_PROPERTIES; i++)
            if (strlen(properties[i]->name) == len && memcmp(properties[i]->name, p, len) == 0) found = i;
        if (found == N_PROPERTIES)
            return pc_error_set(err, PC_ERR_USAGE,
                                "unknown property '%.*s' (passcheck suite --list-properties)", (int)len, p);
        enabled[found] = true;
        p = end ? end + 1 : p + len;
    }
    memcpy(cfg->enabled, enabled, sizeof enabled);
    if (enabled[property_index(&pc_prop_ort_oracle)]) cfg->oracle_ort = true;
    return PC_OK;
}

bool pc_failure_same(const pc_failure *a, const pc_failure *b)
{
    return strcmp(a->property, b->property) == 0 && strcmp(a->pass, b->pass) == 0 &&
           strcmp(a->kind, b->kind) == 0;
}

void pc_failure_signature(const pc_failure *f, char *buf, size_t size)
{
    snprintf(buf, size, "%s@%s%s%s", f->property, f->pass[0] ? f->pass : "-", f->kind[0] ? "/" : "", f->kind);
}

void pc_check_result_free(pc_check_result *r)
{
    if (!r) return;
    free(r->before_bytes);
    free(r->after_bytes);
    r->before_bytes = r->after_bytes = NULL;
    r->before_size = r->after_size = 0;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Reference-output caches: one slot each for the original, the graph before the current pass and after it.
 * Each run also records the type of every value its nodes make (pc_check_ref_types), so that the validity
 * property judges the declared types on the run numerics already made instead of running the graph again.
 */

/* The node-output types of one run. Entries point at the run's model's nodes, so they are only as good as
 * that model object. */
typedef struct ref_record {
    const pc_graph *main; /* the run's main graph: only subgraph nodes run more than once */
    pc_check_ref_type *types;
    size_t *dim_at; /* per entry: where its dims start in `dims` (which moves while it grows) */
    uint32_t n_types, cap_types;
    int64_t *dims;
    size_t n_dims, cap_dims;
    /* subgraph nodes: (node, output) -> index of its newest entry, so that a Loop body running a thousand
     * times with the same types records one entry per value, not a thousand; open addressing, UINT32_MAX
     * empty */
    uint32_t *last;
    uint32_t n_last, cap_last;
    bool recorded; /* the types belong to the slot's model (false: not recorded, or carried over) */
    bool oom;
} ref_record;

typedef struct ref_slot {
    const pc_model *model; /* the model the outputs belong to; NULL: empty */
    pc_data **outputs;
    uint32_t n_outputs;
    pc_status status;
    char message[1024];
    bool done;
    ref_record rec;
} ref_slot;

typedef struct runner {
    const pc_case *kase;
    const pc_check_config *cfg;
    pc_check_result *res;
    pc_check_ctx ctx;
    pc_model *original;
    pc_model *before;      /* loaded from before_bytes when a pass changes the graph */
    pc_model *reloaded;    /* this pass's after_bytes as they load (pc_check_after_loaded), or NULL */
    pc_error reload_error; /* status PC_OK, or why loading after_bytes failed (reloaded stays NULL) */
    /* allocation bookkeeping of the checked run: its count at the start, after the previous step, and what
     * the hooks themselves allocated in the model (not the pipeline's: a fresh run without hooks lacks it) */
    uint64_t allocs_start, allocs_step, allocs_hooks;
    uint8_t *before_bytes;
    size_t before_size;
    uint64_t before_fp; /* pc_model_change_stamp of the graph before_bytes holds */
    ref_slot slot_original, slot_before, slot_after;
    bool stop; /* a property failed, or stop_after_pass was reached: the hook stops the pipeline */
    char last_pass[64];
} runner;

static void record_free(ref_record *rec)
{
    free(rec->types);
    free(rec->dim_at);
    free(rec->dims);
    free(rec->last);
    memset(rec, 0, sizeof *rec);
}

static bool record_same(const ref_record *rec, uint32_t index, const pc_data *d)
{
    const pc_check_ref_type *t = &rec->types[index];
    if (t->kind != d->kind || t->dtype != d->dtype) return false;
    if (d->kind != PC_TYPE_TENSOR) return true;
    return t->rank == d->rank && (!d->rank || memcmp(rec->dims + rec->dim_at[index], d->dims,
                                                     (size_t)d->rank * sizeof *d->dims) == 0);
}

static uint32_t record_hash(const pc_node *node, uint32_t output, uint32_t cap)
{
    uint64_t h = ((uint64_t)(uintptr_t)node >> 3) * 0x9E3779B97F4A7C15u + output * 0xC2B2AE3D27D4EB4Fu;
    return (uint32_t)(h >> 32) & (cap - 1);
}

/* The bucket of (node, output) in `last`: its entry, or the empty bucket it would take. NULL on OOM. */
static uint32_t *record_bucket(ref_record *rec, const pc_node *node, uint32_t output)
{
    if (2 * (rec->n_last + 1) > rec->cap_last) {
        uint32_t cap = rec->cap_last ? 2 * rec->cap_last : 64;
        size_t bytes;
        if (cap < rec->cap_last || !pc_size_mul(cap, sizeof *rec->last, &bytes)) return NULL;
        uint32_t *grown = malloc(bytes);
        if (!grown) return NULL;
        memset(grown, 0xff, bytes);
        for (uint32_t i = 0; i < rec->cap_last; i++) {
            uint32_t e = rec->last[i];
            if (e == UINT32_MAX) continue;
            uint32_t b = record_hash(rec->types[e].node, rec->types[e].output, cap);
            while (grown[b] != UINT32_MAX)
                b = (b + 1) & (cap - 1);
            grown[b] = e;
        }
        free(rec->last);
        rec->last = grown;
        rec->cap_last = cap;
    }
    uint32_t b = record_hash(node, output, rec->cap_last);
    while (rec->last[b] != UINT32_MAX &&
           (rec->types[rec->last[b]].node != node || rec->types[rec->last[b]].output != output))
        b = (b + 1) & (rec->cap_last - 1);
    return &rec->last[b];
}

static bool record_append(ref_record *rec, const pc_node *node, uint32_t output, const pc_data *d)
{
    if (rec->n_types == rec->cap_types) {
        uint32_t cap = rec->cap_types ? 2 * rec->cap_types : 32;
        size_t bytes_types, bytes_at;
        if (cap < rec->cap_types || !pc_size_mul(cap, sizeof *rec->types, &bytes_types) ||
            !pc_size_mul(cap, sizeof *rec->dim_at, &bytes_at))
            return false;
        pc_check_ref_type *types = realloc(rec->types, bytes_types);
        if (!types) return false;
        rec->types = types;
        size_t *at = realloc(rec->dim_at, bytes_at);
        if (!at) return false;
        rec->dim_at = at;
        rec->cap_types = cap;
    }
    size_t rank = d->kind == PC_TYPE_TENSOR && d->rank > 0 ? (size_t)d->rank : 0;
    if (rank > rec->cap_dims - rec->n_dims) {
        size_t cap = rec->cap_dims ? rec->cap_dims : 64;
        while (cap - rec->n_dims < rank) {
            if (!pc_size_mul(cap, 2, &cap)) return false;
        }
        size_t bytes;
        if (!pc_size_mul(cap, sizeof *rec->dims, &bytes)) return false;
        int64_t *dims = realloc(rec->dims, bytes);
        if (!dims) return false;
        rec->dims = dims;
        rec->cap_dims = cap;
    }
    if (rank) memcpy(rec->dims + rec->n_dims, d->dims, rank * sizeof *d->dims);
    rec->dim_at[rec->n_types] = rec->n_dims;
    rec->n_dims += rank;
    rec->types[rec->n_types++] = (pc_check_ref_type){
        .node = node, .output = output, .kind = d->kind, .dtype = d->dtype, .rank = (int32_t)rank};
    return true;
}

/* The run's node hook: one entry per node output it made. A subgraph node's output that has the type its
 * newest entry has is skipped: a Loop body makes the same types iteration after iteration, and a body value
 * is judged by its type alone (no symbols bind across a body's iterations). */
static void record_node(void *vctx, const pc_node *node, pc_data *const *inputs, pc_data *const *outputs)
{
    (void)inputs;
    ref_record *rec = vctx;
    for (uint32_t i = 0; i < node->n_outputs && !rec->oom; i++) {
        const pc_data *d = outputs[i];
        if (!d) continue; /* an omitted optional output */
        uint32_t *bucket = NULL;
        if (node->graph != rec->main) {
            if (!(bucket = record_bucket(rec, node, i))) {
                rec->oom = true;
                break;
            }
            if (*bucket != UINT32_MAX && record_same(rec, *bucket, d)) continue;
        }
        if (!record_append(rec, node, i, d)) {
            rec->oom = true;
            break;
        }
        if (bucket) {
            if (*bucket == UINT32_MAX) rec->n_last++;
            *bucket = rec->n_types - 1;
        }
    }
}

/* Runs the reference on m, recording into rec; rec->recorded once every type is in. */
static pc_status record_run(pc_check_ctx *ctx, const pc_model *m, ref_record *rec, pc_data ***outputs,
                            pc_error *err)
{
    record_free(rec);
    rec->main = m->graph;
    pc_ref_options ro = {.on_node = record_node, .on_node_ctx = rec};
    pc_status st = pc_ref_run_with_options(m, &ro, ctx->kase->n_inputs, ctx->kase->inputs, outputs, err);
    ctx->stats->ref_runs++;
    if (st == PC_OK && !rec->oom) {
        /* the dims array has stopped moving */
        for (uint32_t i = 0; i < rec->n_types; i++)
            rec->types[i].dims = rec->dims ? rec->dims + rec->dim_at[i] : NULL; /* none: every value rank 0 */
        rec->recorded = true;
    }
    free(rec->last); /* only needed while the run goes on */
    rec->last = NULL;
    rec->n_last = rec->cap_last = 0;
    return st;
}

static void slot_clear(ref_slot *s)
{
    for (uint32_t i = 0; s->outputs && i < s->n_outputs; i++)
        pc_data_unref(s->outputs[i]);
    free(s->outputs);
    record_free(&s->rec);
    memset(s, 0, sizeof *s);
}

static ref_slot *slot_of(pc_check_ctx *ctx, const pc_model *m)
{
    runner *r = ctx->priv;
    return m == ctx->original ? &r->slot_original
           : m == ctx->before ? &r->slot_before
           : m == ctx->after  ? &r->slot_after
                              : NULL;
}

pc_status pc_check_ref_outputs(pc_check_ctx *ctx, const pc_model *m, pc_data ***outputs, pc_error *err)
{
    ref_slot *s = slot_of(ctx, m);
    *outputs = NULL;
    if (!s)
        return pc_error_set(err, PC_ERR_INTERNAL, "pc_check_ref_outputs: not one of the context's models");
    if (!s->done || s->model != m) {
        slot_clear(s);
        pc_error rerr;
        s->model = m;
        s->done = true;
        s->status = record_run(ctx, m, &s->rec, &s->outputs, &rerr);
        s->n_outputs = s->status == PC_OK ? m->graph->n_outputs : 0;
        if (s->status != PC_OK) {
            snprintf(s->message, sizeof s->message, "%s", rerr.message);
            s->outputs = NULL;
        }
    }
    if (s->status != PC_OK) return pc_error_set(err, s->status, "%s", s->message);
    *outputs = s->outputs;
    return PC_OK;
}

pc_status pc_check_ref_types(pc_check_ctx *ctx, const pc_model *m, const pc_check_ref_type **types,
                             uint32_t *n_types, pc_error *err)
{
    *types = NULL;
    *n_types = 0;
    pc_data **outputs;
    pc_status st = pc_check_ref_outputs(ctx, m, &outputs, err);
    if (st != PC_OK) return st;
    ref_slot *s = slot_of(ctx, m);
    if (s->rec.oom)
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory recording the types of the reference run");
    if (!s->rec.recorded) {
        /* Outputs carried over from the previous pass's graph: their types pointed into the live graph the
         * pass went on to rewrite, so run this model again for its own (the outputs already handed out stay).
         */
        pc_data **again = NULL;
        if ((st = record_run(ctx, m, &s->rec, &again, err)) != PC_OK) return st;
        pc_ref_free_outputs(m, again);
        if (s->rec.oom)
            return pc_error_set(err, PC_ERR_NOMEM, "out of memory recording the types of the reference run");
    }
    *types = s->rec.types;
    *n_types = s->rec.n_types;
    return PC_OK;
}

static void record_failure(runner *r, const pc_property *p, pc_prop_outcome o, const char *msg,
                           const char *kind)
{
    pc_check_result *res = r->res;
    if (res->failed) return;
    res->failed = true;
    pc_failure *f = &res->failure;
    snprintf(f->property, sizeof f->property, "%s", p ? p->name : "pipeline");
    snprintf(f->pass, sizeof f->pass, "%s", r->ctx.pass ? r->ctx.pass : "");
    snprintf(f->kind, sizeof f->kind, "%s", kind ? kind : "");
    f->outcome = o;
    snprintf(f->message, sizeof f->message, "%s", msg && msg[0] ? msg : "(no message)");
    if (!r->ctx.is_final && r->ctx.before_bytes && r->ctx.after_bytes) {
        res->before_bytes = malloc(r->ctx.before_size ? r->ctx.before_size : 1);
        res->after_bytes = malloc(r->ctx.after_size ? r->ctx.after_size : 1);
        if (res->before_bytes && res->after_bytes) {
            memcpy(res->before_bytes, r->ctx.before_bytes, r->ctx.before_size);
            memcpy(res->after_bytes, r->ctx.after_bytes, r->ctx.after_size);
            res->before_size = r->ctx.before_size;
            res->after_size = r->ctx.after_size;
        } else {
            pc_check_result_free(res);
        }
    }
}

static void report_outcome(runner *r, const pc_property *p, pc_prop_outcome o, const char *msg,
                           const char *kind, double seconds)
{
    if (!r->cfg->on_outcome) return;
    pc_check_outcome out = {
        r->ctx.pass ? r->ctx.pass : "", r->ctx.provider, p, o, kind ? kind : "", msg ? msg : "", seconds};
    r->cfg->on_outcome(r->cfg->on_outcome_ctx, &out);
}

/* Calls one stage's functions of every enabled property; false when one failed (FAIL or ERROR). Without
 * keep_going the first failure ends the stage. */
static bool run_properties(runner *r, bool final)
{
    char msg[2048];
    bool ok = true;
    for (size_t i = 0; i <= N_PROPERTIES; i++) {
        if (i < N_PROPERTIES && !r->cfg->enabled[i]) continue;
        const pc_property *p = i < N_PROPERTIES ? properties[i] : r->cfg->extra;
        if (!p) continue;
        pc_prop_fn fn = final ? p->final : p->per_pass;
        if (!fn) continue;
        const char *kind = NULL;
        msg[0] = 0;
        double t0 = r->cfg->on_outcome ? pc_now_seconds() : 0;
        pc_prop_outcome o = fn(&r->ctx, msg, sizeof msg, &kind);
        if ((unsigned)o >= PC_PROP_OUTCOME_COUNT) {
            snprintf(msg, sizeof msg, "property returned the invalid outcome %d", (int)o);
            o = PC_PROP_ERROR;
        }
        r->res->counts[i][o]++;
        report_outcome(r, p, o, msg, kind, r->cfg->on_outcome ? pc_now_seconds() - t0 : 0);
        if (o == PC_PROP_FAIL || o == PC_PROP_ERROR) {
            record_failure(r, p, o, msg, kind);
            ok = false;
            if (!r->cfg->keep_going) return false;
        }
    }
    return ok;
}

static pc_status load_copy(const uint8_t *bytes, size_t size, pc_model **out, pc_error *err)
{
    pc_load_options lo;
    pc_load_options_default(&lo);
    return pc_model_load_bytes(bytes, size, &lo, out, err);
}

pc_status pc_check_after_loaded(pc_check_ctx *ctx, const pc_model **out, pc_error *err)
{
    runner *r = ctx->priv;
    *out = NULL;
    if (!ctx->after_bytes) return pc_error_set(err, PC_ERR_INTERNAL, "no graph bytes at this point");
    if (!r->reloaded && r->reload_error.status == PC_OK)
        load_copy(ctx->after_bytes, ctx->after_size, &r->reloaded, &r->reload_error);
    if (!r->reloaded) {
        *err = r->reload_error;
        return err->status;
    }
    *out = r->reloaded;
    return PC_OK;
}

pc_status pc_check_after_copy(pc_check_ctx *ctx, pc_model **out, pc_error *err)
{
    const pc_model *m;
    *out = NULL;
    pc_status st = pc_check_after_loaded(ctx, &m, err);
    return st == PC_OK ? pc_model_clone(m, out, err) : st;
}

/* The loaded "after" of one judgment is not the next one's. */
static void reloaded_reset(runner *r)
{
    pc_model_free(r->reloaded);
    r->reloaded = NULL;
    pc_error_clear(&r->reload_error);
}

static pc_status after_pass_checks(runner *r, const char *pass, const char *provider, pc_model *model,
                                   bool changed, pc_error *err);

static pc_status after_pass(void *vctx, const char *pass, const char *provider, pc_model *model, bool changed,
                            pc_error *err)
{
    runner *r = vctx;
    snprintf(r->last_pass, sizeof r->last_pass, "%s", pass);
    /* the step's allocations, 1-based within the run without the hooks' own */
    uint64_t now = model->mem.n_allocs, first = r->allocs_step + 1 - r->allocs_hooks - r->allocs_start;
    uint64_t last = now - r->allocs_hooks - r->allocs_start;
    pc_check_ctx *ctx = &r->ctx;
    if (changed && last >= first && ctx->n_rewrite_ranges < PC_MAX_REWRITE_RANGES) {
        ctx->rewrite_ranges[ctx->n_rewrite_ranges][0] = first;
        ctx->rewrite_ranges[ctx->n_rewrite_ranges][1] = last;
        ctx->n_rewrite_ranges++;
    }
    pc_status st = after_pass_checks(r, pass, provider, model, changed, err);
    r->allocs_hooks += model->mem.n_allocs - now;
    r->allocs_step = model->mem.n_allocs;
    if (r->cfg->on_pass) r->cfg->on_pass(r->cfg->on_pass_ctx, pass);
    return st;
}

/* A pass that left the graph as it was: nothing to check; a stop_after_pass stops here all the same. */
static pc_status nothing_changed(runner *r, bool stop_here, pc_error *err)
{
    if (!stop_here) return PC_OK;
    r->stop = true;
    return pc_error_set(err, PC_ERR_CHECK_FAILED, "stop");
}

static pc_status after_pass_checks(runner *r, const char *pass, const char *provider, pc_model *model,
                                   bool changed, pc_error *err)
{
    pc_check_ctx *ctx = &r->ctx;
    uint8_t *bytes = NULL;
    size_t size = 0;
    pc_error serr;
    bool stop_here = r->cfg->stop_after_pass && strcmp(r->cfg->stop_after_pass, pass) == 0;
    /* Most passes change nothing: the change stamp (which differs whenever the saved bytes would) says so
     * without serializing the model. */
    uint64_t fp = pc_model_change_stamp(model);
    if (!changed && fp == r->before_fp) return nothing_changed(r, stop_here, err);
    if (pc_model_save_bytes(model, &bytes, &size, &serr) != PC_OK) {
        ctx->pass = pass;
        char msg[700];
        snprintf(msg, sizeof msg, "cannot serialize the graph after pass '%.60s': %.500s", pass,
                 serr.message);
        record_failure(r, pc_property_find("roundtrip"), PC_PROP_FAIL, msg, "save-failed");
        report_outcome(r, pc_property_find("roundtrip"), PC_PROP_FAIL, msg, "save-failed", 0);
        r->stop = true;
        return pc_error_set(err, PC_ERR_CHECK_FAILED, "property failure");
    }
    bool bytes_changed = size != r->before_size || memcmp(bytes, r->before_bytes, size) != 0;
    if (!changed && !bytes_changed) {
        /* Nothing happened: the graph is the one already checked after the previous pass. */
        r->before_fp = fp;
        free(bytes);
        return nothing_changed(r, stop_here, err);
    }
    r->res->stats.passes_changed++;
    /* The graph before this pass, as an object, for properties that compare structure. */
    if (!r->before) {
        pc_status st = load_copy(r->before_bytes, r->before_size, &r->before, &serr);
        if (st != PC_OK) {
            free(bytes);
            return pc_error_set(err, st, "reloading the graph before pass '%s': %s", pass, serr.message);
        }
    }
    /* outputs carried over from the previous pass's "after" belong to this graph */
    if (r->slot_before.done && !r->slot_before.model) r->slot_before.model = r->before;
    const pc_pass_info *info = pc_pass_find(pass);
    ctx->pass = pass;
    ctx->provider = provider;
    /* a level 0/1 clean-up run again after partitioning has level-2 rules (EPs, no annotations) */
    ctx->level = !info                                       ? PC_LEVEL_LAYOUT
                 : provider && info->level < PC_LEVEL_LAYOUT ? PC_LEVEL_LAYOUT
                                                             : info->level;
    ctx->is_final = false;
    ctx->changed = changed;
    ctx->bytes_changed = bytes_changed;
    ctx->before = r->before;
    ctx->after = model;
    ctx->before_bytes = r->before_bytes;
    ctx->before_size = r->before_size;
    ctx->after_bytes = bytes;
    ctx->after_size = size;
    slot_clear(&r->slot_after);
    bool ok = run_properties(r, false);
    /* This pass's result becomes the next pass's "before": bytes, and outputs when they were computed. The
     * object is reloaded lazily (only a pass that changes the graph needs it). */
    free(r->before_bytes);
    r->before_bytes = bytes;
    r->before_size = size;
    r->before_fp = fp;
    pc_model_free(r->before);
    r->before = r->reloaded;
    r->reloaded = NULL;
    reloaded_reset(r);
    slot_clear(&r->slot_before);
    if (r->slot_after.done) {
        r->slot_before = r->slot_after;
        r->slot_before.model = NULL;      /* the live model keeps changing: only the outputs carry over */
        record_free(&r->slot_before.rec); /* its entries point at nodes the next pass may free */
        memset(&r->slot_after, 0, sizeof r->slot_after);
    }
    ctx->before = ctx->after = NULL;
    ctx->before_bytes = ctx->after_bytes = NULL;
    if ((!ok && !r->cfg->keep_going) || stop_here) {
        r->stop = true;
        return pc_error_set(err, PC_ERR_CHECK_FAILED, "stop");
    }
    return PC_OK;
}

/* Extracts the pass a pipeline error names ("pass 'X': ...", "partitioning: ..."). */
static void pass_from_error(const char *msg, const char *fallback, char *out, size_t size)
{
    const char *p = strstr(msg, "pass '");
    if (p) {
        p += 6;
        const char *q = strchr(p, '\'');
        if (q) {
            snprintf(out, size, "%.*s", (int)(q - p), p);
            return;
        }
    }
    if (strncmp(msg, "partitioning: ", 14) == 0 || strstr(msg, "after pass 'partition'")) {
        snprintf(out, size, "partition");
        return;
    }
    if (strncmp(msg, "shape inference: ", 17) == 0) {
        snprintf(out, size, "shape-inference");
        return;
    }
    snprintf(out, size, "%s", fallback);
}

pc_status pc_case_check(const pc_case *c, const pc_check_config *cfg, pc_check_result *res, pc_error *err)
{
    memset(res, 0, sizeof *res);
    runner r = {.kase = c, .cfg = cfg, .res = res};
    pc_ep_registry *reg = NULL;
    const pc_ep **eps = NULL;
    uint32_t n_eps = 0;
    pc_layer_rules *rules = NULL;
    pc_model *work = NULL;
    pc_status st = pc_ep_registry_create(&reg, err);
    if (st != PC_OK) goto done;
    if (c->ep_text && (st = pc_ep_registry_load_text(reg, c->ep_text, "generated EPs", err)) != PC_OK)
        goto done;
    const char *ep_list = cfg->ep_override ? cfg->ep_override : c->ep_list ? c->ep_list : "cpu";
    if ((st = pc_ep_registry_parse_list(reg, ep_list, &eps, &n_eps, err)) != PC_OK) goto done;
    if (c->layer_assignment && (st = pc_layer_rules_parse(c->layer_assignment, (const pc_ep *const *)eps,
                                                          n_eps, &rules, err)) != PC_OK)
        goto done;

    /* Two private copies: the original (never touched) and the working graph the pipeline rewrites. */
    uint8_t *bytes = NULL;
    size_t size = 0;
    if ((st = pc_model_save_bytes(c->model, &bytes, &size, err)) != PC_OK) goto done;
    st = load_copy(bytes, size, &r.original, err);
    /* every run of the case starts from a replica of the original, this one as the fresh runs of
     * determinism and alloc-failure do: the same allocations, the same bytes */
    if (st == PC_OK) st = pc_model_clone(r.original, &work, err);
    free(bytes);
    if (st != PC_OK) goto done;
    /* The pipeline infers shapes first; the first "before" is the graph after that, so that step is not
     * blamed on the first pass. */
    if ((st = pc_graph_infer_shapes(work->graph, err)) != PC_OK) {
        pc_error_prefix(err, "shape inference on the case: ");
        goto done;
    }
    if ((st = pc_model_save_bytes(work, &r.before_bytes, &r.before_size, err)) != PC_OK) goto done;
    r.before_fp = pc_model_change_stamp(work);

    pc_check_ctx *ctx = &r.ctx;
    ctx->kase = c;
    ctx->config = cfg;
    ctx->eps = (const pc_ep *const *)eps;
    ctx->n_eps = n_eps;
    ctx->rules = rules;
    ctx->original = r.original;
    ctx->stats = &res->stats;
    ctx->rewrites = &res->rewrites;
    ctx->priv = &r;

    pc_optimize_options oo;
    pc_optimize_options_default(&oo);
    oo.level = cfg->level;
    oo.eps = (const pc_ep *const *)eps;
    oo.n_eps = n_eps;
    oo.layer_assignment = c->layer_assignment;
    oo.after_pass = after_pass;
    oo.after_pass_ctx = &r;
    oo.rewrites = &res->rewrites; /* rewrite coverage: observed only */
    /* The validity property verifies after every pass itself (and names the pass); without it, keep the
     * pipeline's own verifier so an invalid graph never reaches the next pass. */
    oo.verify_each_pass = !cfg->enabled[property_index(&pc_prop_validity)];
    pc_error perr;
    r.allocs_start = r.allocs_step = work->mem.n_allocs;
    pc_status pst = pc_model_optimize(work, &oo, NULL, &perr);
    ctx->pipeline_allocs = work->mem.n_allocs - r.allocs_start - r.allocs_hooks;
    if (pst != PC_OK && !r.stop) {
        /* A pass (or partitioning) failed on a valid graph: that is a bug in the pipeline, reported as a
         * failure. */
        char pass[64];
        pass_from_error(perr.message, r.last_pass, pass, sizeof pass);
        ctx->pass = pass;
        ctx->is_final = false;
        char msg[2048];
        snprintf(msg, sizeof msg, "the pipeline failed: %s: %s", pc_status_name(perr.status), perr.message);
        record_failure(&r, NULL, PC_PROP_FAIL, msg, pc_status_name(perr.status));
        report_outcome(&r, NULL, PC_PROP_FAIL, msg, pc_status_name(perr.status), 0);
        ctx->pass = NULL;
    } else if (pst == PC_OK && !r.stop) {
        ctx->pass = "end-to-end";
        ctx->provider = NULL;
        ctx->level = -1;
        ctx->is_final = true;
        ctx->changed = true;
        ctx->before = r.original;
        ctx->after = work;
        uint8_t *after_bytes = NULL;
        size_t after_size = 0;
        pc_error serr;
        if (pc_model_save_bytes(work, &after_bytes, &after_size, &serr) == PC_OK) {
            uint8_t *orig_bytes = NULL;
            size_t orig_size = 0;
            if (pc_model_save_bytes(r.original, &orig_bytes, &orig_size, &serr) == PC_OK) {
                ctx->before_bytes = orig_bytes;
                ctx->before_size = orig_size;
                ctx->after_bytes = after_bytes;
                ctx->after_size = after_size;
                ctx->bytes_changed =
                    orig_size != after_size || memcmp(orig_bytes, after_bytes, orig_size) != 0;
                /* the original's outputs double as "before" outputs */
                slot_clear(&r.slot_before);
                slot_clear(&r.slot_after);
                run_properties(&r, true);
                free(orig_bytes);
            } else {
                record_failure(&r, pc_property_find("roundtrip"), PC_PROP_ERROR, serr.message, "save-failed");
                report_outcome(&r, pc_property_find("roundtrip"), PC_PROP_ERROR, serr.message, "save-failed",
                               0);
            }
            free(after_bytes);
        } else {
            record_failure(&r, pc_property_find("roundtrip"), PC_PROP_FAIL, serr.message, "save-failed");
            report_outcome(&r, pc_property_find("roundtrip"), PC_PROP_FAIL, serr.message, "save-failed", 0);
        }
        ctx->before_bytes = ctx->after_bytes = NULL;
    }
    st = PC_OK;
done:
    slot_clear(&r.slot_original);
    slot_clear(&r.slot_before);
    slot_clear(&r.slot_after);
    pc_model_free(r.before);
    pc_model_free(r.reloaded);
    pc_model_free(r.original);
    pc_model_free(work);
    free(r.before_bytes);
    pc_layer_rules_free(rules);
    pc_ep_registry_free(reg);
    return st;
}
