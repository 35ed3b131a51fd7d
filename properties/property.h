/*
 * property.h — the properties checked on every pass, the case runner that checks them, and failure
 * signatures.
 *
 * Worked example: check one generated case against every property.
 *
 *     pc_check_config cc;
 *     pc_check_config_default(&cc);          // every property, pipeline level 3, the case's EPs
 *     pc_check_result res;
 *     if (pc_case_check(&kase, &cc, &res, &err) != PC_OK) ...   // the harness itself broke (ERROR)
 *     if (res.failed)
 *         printf("%s failed after pass %s: %s\n", res.failure.property, res.failure.pass,
 * res.failure.message); pc_check_result_free(&res);
 *
 * How a case is checked: the case's model is copied and run through pc_model_optimize with an after_pass
 * hook. After every pass (and after "partition") every selected property's per_pass function sees the graph
 * before and after that pass; at the end every final function sees the original and the fully optimized
 * graph. The first FAIL stops the case and becomes its failure, so a failure names the first pass that broke
 * a property. The failure signature (property, pass, kind) is what the shrinker preserves.
 */
#ifndef PC_PROPERTY_H
#define PC_PROPERTY_H

#include <stdio.h>

#include "generators/gen.h"
#include "core/passcheck.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pc_prop_outcome {
    PC_PROP_PASS = 0,
    PC_PROP_FAIL,  /* the property does not hold: a bug in a pass (or in the reference, for the ORT oracle) */
    PC_PROP_SKIP,  /* the oracle cannot judge (NaN in the reference output, an op the reference lacks, ...) */
    PC_PROP_ERROR, /* the harness itself broke (OOM, a save that failed, ...) */
    PC_PROP_OUTCOME_COUNT
} pc_prop_outcome;

const char *pc_prop_outcome_name(pc_prop_outcome o); /* "pass", "fail", "skip", "error" */

/* Statistics a property may add to (summed over cases by the suite). */
typedef struct pc_check_stats {
    uint32_t transpose_oracle_cases; /* cases the exact transpose oracle judged */
    uint32_t transpose_at_optimum;   /* of those, how many the optimizer solved optimally */
    uint32_t ref_runs;               /* reference executor runs */
    uint32_t passes_changed;         /* passes that changed the graph */
} pc_check_stats;

typedef struct pc_check_config pc_check_config;

/* One judgment, as the runner makes it (pc_check_config.on_outcome): a property's call after a pass or at the
 * end, or the pipeline's own failure (property NULL). */
typedef struct pc_check_outcome {
    const char *pass;     /* the pass just run, "end-to-end", or the pass a pipeline error names */
    const char *provider; /* the EP the pass ran for, or NULL */
    const struct pc_property *property; /* NULL: the pipeline failed (message says how) */
    pc_prop_outcome outcome;
    const char *kind;    /* "" when none */
    const char *message; /* "" when none */
    double seconds;      /* the call's time */
} pc_check_outcome;

/* alloc_every tries every allocation of runs of up to PC_ALLOC_EVERY_MAX (each a whole pipeline run: a
 * 12-node case makes ~130, a 200-node one thousands, which would spend a shrink budget on one check); above
 * it, the drawn point */
enum { PC_MAX_REWRITE_RANGES = 32, PC_ALLOC_EVERY_MAX = 256 };

/* What a property sees. `before`/`after` are private copies: properties must not modify them. */
typedef struct pc_check_ctx {
    const pc_case *kase;
    const pc_check_config *config;
    const pc_ep *const *eps; /* the case's EPs, priority order */
    uint32_t n_eps;
    const pc_layer_rules *rules; /* NULL without a layer-assignment string */
    /* per pass: the pass just run ("partition" for partitioning); final: "end-to-end" */
    const char *pass;
    const char *provider; /* the EP the pass ran for (levels 2+); NULL before partitioning, for "partition"
                             and final */
    int level;            /* the pass's level; 2 for "partition"; -1 final */
    bool is_final;
    bool changed;                              /* what the pass reported */
    bool bytes_changed;                        /* whether its serialized graph differs from before */
    const pc_model *original;                  /* the case as generated */
    const pc_model *before;                    /* per pass: the graph before it; final: the original */
    const pc_model *after;                     /* per pass: the graph after it; final: fully optimized */
    const uint8_t *before_bytes, *after_bytes; /* pc_model_save_bytes of before/after */
    size_t before_size, after_size;
    pc_check_stats *stats;
    const pc_rewrite_counts *rewrites; /* the rewrites of this run's passes so far */
    uint64_t pipeline_allocs;          /* final: model allocations the checked pipeline run made */
    /* final: the allocations (1-based, as counted in pipeline_allocs) of the steps that changed the graph,
     * one [first, last] range per step, the first PC_MAX_REWRITE_RANGES of them: where rewrites ran */
    uint32_t n_rewrite_ranges;
    uint64_t rewrite_ranges[PC_MAX_REWRITE_RANGES][2];
    void *priv; /* the runner's caches */
} pc_check_ctx;

/* Reference outputs of `m` (one of ctx->original/before/after) on the case inputs, cached per model: do not
 * free. PC_ERR_UNSUPPORTED when the reference cannot run it (an op it lacks: properties SKIP on it); other
 * codes are run failures the message explains. */
pc_status pc_check_ref_outputs(pc_check_ctx *ctx, const pc_model *m, pc_data ***outputs, pc_error *err);
/* Quantization ties (properties/pin.c): a quantized value two computations round from slightly different
 * floats may differ by a step, and that step travels downstream. A property re-judges a failing comparison
 * with the reference run on m where every node output named by a pin is replaced by the pinned value, if
 * each element is within max_steps of the reference's own (same type and shape; else the reference's stays).
 * *n_pinned counts the replacements; free *outputs with pc_ref_free_outputs(m, ...). */
typedef struct pc_pin {
    const char *name;     /* a value name of m */
    const pc_data *value; /* the other computation's result for it; NULL: no pin */
} pc_pin;
pc_status pc_check_ref_pinned(pc_check_ctx *ctx, const pc_model *m, const pc_pin *pins, uint32_t n_pins,
                              uint32_t max_steps, pc_data ***outputs, uint32_t *n_pinned, pc_error *err);
/* The reference's values of the node outputs of m named in names (values[i]: a new reference, NULL when no
 * node made it), from one run on the case inputs. Unref every values[i] whatever the status. */
pc_status pc_check_ref_capture(pc_check_ctx *ctx, const pc_model *m, const char *const *names, uint32_t n,
                               pc_data **values, pc_error *err);

/* ctx->after_bytes as they load (default options, so verified), loaded once per judgment and shared: do not
 * modify or free. After a pass it becomes the next pass's `before`, which the runner would otherwise load
 * from the same bytes. A load that fails gives its status and message (to every caller). */
pc_status pc_check_after_loaded(pc_check_ctx *ctx, const pc_model **out, pc_error *err);
/* A private copy of that (pc_model_clone): what loading ctx->after_bytes again would give, without the parse.
 * The caller may change it and frees it. */
pc_status pc_check_after_copy(pc_check_ctx *ctx, pc_model **out, pc_error *err);

/* What the cached reference run of a model made for one node output (subgraph nodes included). */
typedef struct pc_check_ref_type {
    const pc_node *node; /* the node that ran; node->outputs[output] is the value */
    uint32_t output;     /* omitted optional outputs are never recorded */
    pc_type_kind kind;   /* PC_TYPE_TENSOR, PC_TYPE_SEQUENCE or PC_TYPE_OPTIONAL, as pc_data */
    pc_dtype dtype;      /* as pc_data: a sequence's or optional's element type when known */
    int32_t rank;        /* tensors; 0 otherwise */
    const int64_t *dims; /* rank of them */
} pc_check_ref_type;

/* The element type and shape of every node output the reference made in the run pc_check_ref_outputs
 * caches for `m` (the same run: asking for both runs the reference once), in the order the nodes ran. A
 * subgraph node that ran many times (a Loop body) gets a new entry only when an output's type differs from
 * the one it made the time before. Cached per model like the outputs: do not free. Fails with the run's
 * status when the run failed (pc_check_ref_outputs tells the run's failure); PC_ERR_NOMEM when recording ran
 * out of memory. */
pc_status pc_check_ref_types(pc_check_ctx *ctx, const pc_model *m, const pc_check_ref_type **types,
                             uint32_t *n_types, pc_error *err);

/* One property: each function writes a one-paragraph reason into msg (always on FAIL/SKIP/ERROR) and may set
 * a short `kind` that refines the signature (e.g. "nan-position", "ort-disagrees"; static strings). Either
 * function may be NULL. */
typedef pc_prop_outcome (*pc_prop_fn)(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind);

typedef struct pc_property {
    const char *name;    /* "numerics" */
    const char *summary; /* one line for --list-properties */
    pc_prop_fn per_pass; /* after every pass */
    pc_prop_fn final;    /* original vs fully optimized */
} pc_property;

size_t pc_property_count(void);
const pc_property *pc_property_at(size_t i);
const pc_property *pc_property_find(const char *name);

/* The properties (one .c each under properties/). */
extern const pc_property pc_prop_numerics, pc_prop_annotations, pc_prop_ep_assignment,
    pc_prop_transpose_minimal, pc_prop_validity, pc_prop_idempotence, pc_prop_roundtrip, pc_prop_determinism,
    pc_prop_ort_oracle, pc_prop_fusion_sources, pc_prop_rewrite_fired, pc_prop_alloc_failure,
    pc_prop_evaluator, pc_prop_ep_file, pc_prop_layer_rules, pc_prop_runtime;

/* The numerics property's per-pass tolerance table (prop_numerics.c), for the test that every pipeline pass
 * and partitioning has a row of its own: a pass without one would silently get the default float tolerance.
 */
size_t pc_numerics_tolerance_count(void);
const char *pc_numerics_tolerance_pass(size_t index);

/* ---------------------------------------------------------------------------------------------------------------
 * Running a case.
 */
enum { PC_MAX_PROPERTIES = 32 };

struct pc_check_config {
    bool enabled[PC_MAX_PROPERTIES]; /* by pc_property_at index */
    int level;                       /* pipeline level (default 3) */
    const char *ep_override;         /* NULL: the case's ep_list */
    bool oracle_ort;                 /* also run the original on ONNX Runtime (pc_prop_ort_oracle) */
    const char *ort_dir;             /* node_modules holding onnxruntime-node (NULL: default cache) */
    const char *stop_after_pass;     /* NULL: whole pipeline; else stop checking after this pass */
    uint32_t exact_oracle_max_nodes; /* transpose-minimality exact search bound (default 12) */
    /* alloc-failure tries every allocation of the run in turn (up to PC_ALLOC_EVERY_MAX), not the one point
     * the case draws above ALLOC_EXHAUSTIVE_MAX. Off by default (it multiplies the property's cost by the
     * allocation count); the shrinker turns it on for an alloc-failure target — each candidate draws another
     * point, so a smaller graph with the bug passed by luck of the draw and shrinking stalled — and the repro
     * records it, so replay judges the same way. */
    bool alloc_every;
    /* alloc-failure tries only the point the case draws, also on runs small enough that it would try every
     * allocation (ALLOC_EXHAUSTIVE_MAX): fuzz_pipeline's setting, where libFuzzer varies the case and so the
     * point, and each input pays for one extra run instead of up to sixteen. A failure it finds is found
     * again by a replay with the default policy, which tries that point among the others. */
    bool alloc_one;
    /* Checked after the enabled catalogue properties, counted in counts[pc_property_count()]: custom checks,
     * and tests' synthetic failure predicates (e.g. "the graph still has a Conv followed by a Relu") for the
     * shrinker. */
    const pc_property *extra;
    /* Called after every pass the pipeline runs (changed or not, after its checks): the isolated runner
     * reports progress to its parent so a crash or hang names the last pass finished. NULL: none. */
    void (*on_pass)(void *ctx, const char *pass);
    void *on_pass_ctx;
    /* Every judgment as it is made (passcheck check's table); NULL: none. */
    void (*on_outcome)(void *ctx, const pc_check_outcome *o);
    void *on_outcome_ctx;
    /* A FAIL or ERROR does not end the run: later passes and the end-to-end checks still run, each judging
     * the graph it was given (pc_check_result.failure stays the first failure). Off: the suite's and the
     * shrinker's first-failure runs. */
    bool keep_going;
};

void pc_check_config_default(pc_check_config *cfg);
/* Enables only the comma-separated properties in `list` ("numerics,validity"); unknown names are
 * PC_ERR_USAGE. */
pc_status pc_check_config_select(pc_check_config *cfg, const char *list, pc_error *err);

typedef struct pc_failure {
    char property[32];
    char pass[64];
    char kind[32];           /* "" when the property gave none */
    pc_prop_outcome outcome; /* FAIL or ERROR */
    char message[2048];
} pc_failure;

typedef struct pc_check_result {
    uint32_t counts[PC_MAX_PROPERTIES]
                   [PC_PROP_OUTCOME_COUNT]; /* per property (pc_property_at index; the extra
                                              property at pc_property_count()): calls by outcome */
    bool failed;                            /* a FAIL or an ERROR was recorded in `failure` */
    pc_failure failure;                     /* the first one */
    pc_check_stats stats;
    pc_rewrite_counts rewrites; /* the rewrites and near misses of the case's pipeline run (passcheck.h) */
    /* when failed: the graphs around the failing pass (pc_model_save_bytes form, malloc'ed; NULL when final)
     */
    uint8_t *before_bytes, *after_bytes;
    size_t before_size, after_size;
} pc_check_result;

void pc_check_result_free(pc_check_result *r);

/* Checks one case. Returns non-OK only when the case could not be checked at all (its EP configuration does
 * not parse, OOM); a property's FAIL/ERROR is a result, not a status. */
pc_status pc_case_check(const pc_case *c, const pc_check_config *cfg, pc_check_result *res, pc_error *err);

/* Same failure? (property, pass, kind all equal.) The shrinker keeps only candidates for which this holds. */
bool pc_failure_same(const pc_failure *a, const pc_failure *b);
/* "numerics@fuse_conv_bn" or "numerics@fuse_conv_bn/nan-position" */
void pc_failure_signature(const pc_failure *f, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
