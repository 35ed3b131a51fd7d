/*
 * gen.h — random valid ONNX graphs drawn from a choice sequence.
 *
 * Worked example: generate one float-family case from seed 7, replay it from its recorded choices.
 *
 *     pc_gen_config cfg;
 *     pc_gen_config_default(&cfg);                  // family "float", <= 12 nodes, <= 256 elements per
 * tensor pc_choices ch; pc_choices_init_random(&ch, 7); pc_case c; pc_error err; if (pc_case_generate(&cfg,
 * &ch, &c, &err) != PC_OK) ...   // a generator bug: the message names the op
 *     // c.model is valid by construction; c.inputs feed its non-initializer graph inputs
 *     pc_choices again;
 *     pc_choices_init_replay(&again, ch.values, ch.n);          // same choices -> byte-identical model
 *     ...
 *     pc_case_free(&c);
 *     pc_choices_free(&ch);
 *
 * Every decision a generator makes (how many nodes, which op, which value it consumes, ranks, dims,
 * attributes, scales, annotations, EP configurations, the seed of the tensor data) goes through pc_draw*. A
 * fresh run records each draw; a replay reads the recorded values back, and reads 0 past the end. The
 * shrinker edits the recorded values (deletes spans, zeroes them, lowers them) and regenerates, so every
 * shrink candidate is a graph the generator could have produced. The contract that makes this work: a draw of
 * 0 is always the simplest choice (no more nodes, the first op of a list, rank 0/1, dim 1, default attribute,
 * no annotation, scale 1, zero point 0), so an all-zero sequence gives the minimal case (one node, smallest
 * shapes), and smaller values give simpler cases.
 */
#ifndef PC_GEN_H
#define PC_GEN_H

#include "core/passcheck.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------------------------
 * The choice sequence.
 */
typedef struct pc_choices {
    uint32_t *values; /* every draw made so far, in order (values[i] < the bound of draw i) */
    size_t n, cap;
    bool replaying;         /* false: fresh draws from rng */
    const uint32_t *replay; /* may be NULL with n_replay 0: all zeros */
    size_t n_replay;
    uint64_t rng;
    /* pc_choices_init_bytes: draws read from these bytes (replaying is also set); NULL otherwise */
    const uint8_t *bytes;
    size_t n_bytes, byte_pos;
    /* pc_choices_to_bytes: while replaying, every draw is also written in the byte form (malloc'ed) */
    bool encode;
    uint8_t *encoded;
    size_t n_encoded, cap_encoded;
    bool
        oom; /* a recording allocation failed: the case is unusable (pc_case_generate reports PC_ERR_NOMEM) */
} pc_choices;

/* splitmix64 (Steele, Lea, Flood 2014): the generator behind fresh draws, tensor data and suite case seeds.
 */
uint64_t pc_splitmix64(uint64_t *state);

void pc_choices_init_random(pc_choices *c, uint64_t seed);
/* Replays `values` (not copied: they must outlive the generation). Past the end every draw is 0. */
void pc_choices_init_replay(pc_choices *c, const uint32_t *values, size_t n);
/* Draws from raw bytes (the libFuzzer pipeline target, fuzz/fuzz_pipeline.c): each draw of bound b reads the
 * fewest little-endian bytes that can express b - 1 (none for b <= 1; 1 for b <= 256, 2 for b <= 65536, 3 for
 * b <= 2^24, else 4) and reduces the value modulo b; bytes past the end read as 0, so empty or all-zero input
 * gives the minimal case. Not copied: they must outlive the generation. The recorded values (c->values) are
 * ordinary choices: pc_choices_init_replay on them regenerates the same case. */
void pc_choices_init_bytes(pc_choices *c, const uint8_t *bytes, size_t n);
void pc_choices_free(pc_choices *c);

/* A value in [0, bound); bound 0 or 1 gives 0 (and still records a 0, so spans stay aligned). A replayed
 * value
 * >= bound is reduced modulo bound. */
uint32_t pc_draw(pc_choices *c, uint32_t bound);
/* lo + pc_draw(hi - lo + 1): 0 gives lo. hi < lo gives lo. */
int64_t pc_draw_range(pc_choices *c, int64_t lo, int64_t hi);
/* True with probability percent/100 on fresh draws; the value 0 is false. */
bool pc_draw_bool(pc_choices *c, uint32_t percent);
/* An index in [0, n) drawn with the given weights on fresh draws; the value 0 is index 0 (list the simplest
 * option first). Replay maps the value back through the same cumulative weights. */
uint32_t pc_draw_weighted(pc_choices *c, const uint32_t *weights, uint32_t n);
/* A 64-bit seed for bulk data (tensor values) as two draws. */
uint64_t pc_draw_seed(pc_choices *c);

/* Text form, for READMEs, the failure database and --choices: "v0 v1 v2 ..." in decimal. parse returns a
 * malloc'ed array; errors name the 1-based token. */
char *pc_choices_format(const uint32_t *values, size_t n);
pc_status pc_choices_parse(const char *text, uint32_t **values, size_t *n, pc_error *err);

/* ---------------------------------------------------------------------------------------------------------------
 * Generator configuration and the generated case.
 */
typedef struct pc_gen_config {
    const char *family;    /* a pc_gen_family name; "float" by default */
    uint32_t max_nodes;    /* upper bound on generated ops (default 12) */
    uint64_t max_elements; /* per tensor (default 256) */
    int32_t max_rank;      /* <= 5 (default 5) */
    bool allow_special; /* inputs may hold NaN/Inf/huge values where an op gives them meaning (default false)
                         */
    bool annotate; /* add layer_ann metadata and a layer-assignment string (the "annotated" family sets it) */
    bool random_eps; /* draw an EP configuration (ep_text/ep_list) instead of the family's default */
} pc_gen_config;

void pc_gen_config_default(pc_gen_config *cfg);

typedef struct pc_case {
    pc_model *model;
    uint32_t n_inputs;
    pc_data **inputs; /* one per graph input that is not an initializer, in graph order */
    char *ep_text;    /* EP description file text (docs/ep.md) for generated EPs; NULL: built-ins only */
    char *ep_list;    /* EPs in priority order, e.g. "nhwc,cpu"; never NULL */
    char *layer_assignment; /* NULL: none */
    const char *family;     /* static string */
} pc_case;

/* Rewrites a model's canonical pattern units guarantee (the patterns family, gen_patterns.c) travel in the
 * model itself, so repro folders, replays and the choice-sequence shrinker keep them: model metadata key
 * PC_EXPECT_FIRED_KEY, value "pass/kind=N ..." (PC_REWRITE_KINDS names): kind fires at least N times in a
 * pipeline run on the case's own EPs (the rewrite-fired property); "pass/kind~reason=N" (PC_MISS_REASONS
 * names): the pass reports at least N near misses of kind for that reason (a near-miss unit's guarantee).
 * Never set by the annotated/eps layers; the shrinker's graph edits drop it (an edited graph no longer
 * carries the guarantee). */
#define PC_EXPECT_FIRED_KEY "passcheck.expect_fired"
typedef struct pc_expect_fired {
    uint32_t fired[PC_RW_COUNT];
    uint32_t near[PC_RW_COUNT][PC_MISS_COUNT];
} pc_expect_fired;
/* *e from m's key (all 0 when absent; *present says which); PC_ERR_VALUE naming the token when the value is
 * malformed or names an unknown kind or reason. */
pc_status pc_expect_fired_read(const pc_model *m, pc_expect_fired *e, bool *present, pc_error *err);

void pc_case_free(pc_case *c); /* NULL members are fine; leaves *c zeroed */

/* Runs the family named by cfg->family (plus the annotation and EP layers the config asks for). A failure is
 * a generator bug or OOM, never "the draw was unlucky": generators only add ops whose rules hold. */
pc_status pc_case_generate(const pc_gen_config *cfg, pc_choices *ch, pc_case *out, pc_error *err);

/* The inverse of pc_choices_init_bytes, for seed corpora: the bytes it reads as `values` (a choice sequence
 * of a cfg case: recorded, from the failure database or a repro), found by regenerating the case. Trailing
 * zero bytes are dropped (they read the same as the end of input). *bytes is malloc'ed (NULL when *size is
 * 0). */
pc_status pc_choices_to_bytes(const pc_gen_config *cfg, const uint32_t *values, size_t n, uint8_t **bytes,
                              size_t *size, pc_error *err);

/* ---------------------------------------------------------------------------------------------------------------
 * Families. Each family is one .c under generators/ and one row in the table (generators/families.c).
 */
typedef struct pc_gen pc_gen;
typedef pc_status (*pc_gen_family_fn)(pc_gen *g, pc_error *err);

typedef struct pc_gen_family {
    const char *name;
    const char *summary;
    pc_gen_family_fn build;  /* grows g->graph; pc_gen_finish is called after it */
    const char *default_eps; /* ep_list when the config does not draw one, e.g. "cpu" or "nhwc,cpu" */
    /* Percent of the family's cases that also get one unit of the pattern library (pc_gen_pattern_unit) on
     * fresh inputs after the family's own graph: the family's weight for the library (the patterns family
     * itself is all library). Drawn last, so draw 0 (no unit) keeps the family's minimal case. */
    uint32_t pattern_percent;
    /* Percent of the family's cases (neither annotated nor with random EPs, and without a unit's guarantee on
     * cpu) whose EP list is alt_eps instead: an EP the family's graphs are made for (qlinear: systolic). The
     * case's last draw, so draw 0 (default_eps) changes nothing else. */
    const char *alt_eps;
    uint32_t alt_eps_percent;
} pc_gen_family;

/* The families' build functions (one .c each). "annotated" and "eps" are layers over a base family drawn from
 * float/nhwc/qdq/qlinear/patterns (families.c). */
pc_status pc_gen_float(pc_gen *g, pc_error *err);    /* gen_float.c */
pc_status pc_gen_nhwc(pc_gen *g, pc_error *err);     /* gen_nhwc.c */
pc_status pc_gen_qdq(pc_gen *g, pc_error *err);      /* gen_qdq.c */
pc_status pc_gen_qlinear(pc_gen *g, pc_error *err);  /* gen_qlinear.c */
pc_status pc_gen_patterns(pc_gen *g, pc_error *err); /* gen_patterns.c: the pattern library */
/* One unit of the pattern library, drawn among those the model's opset and cfg->max_rank allow, canonical or
 * (40%) a near miss, on fresh inputs (gen_patterns.c). */
pc_status pc_gen_pattern_unit(pc_gen *g, pc_error *err);

size_t pc_gen_family_count(void);
const pc_gen_family *pc_gen_family_at(size_t i);
const pc_gen_family *pc_gen_family_find(const char *name);

/* ---------------------------------------------------------------------------------------------------------------
 * The graph builder families share (generators/gen_build.c). It keeps a pool of the values a new op may
 * consume, with the closed interval their elements lie in (for domain-limited ops: Log and Sqrt want lo > 0,
 * Div wants a divisor interval excluding 0, Exp wants hi <= 10) and whether they are constant.
 */
typedef struct pc_gen_value {
    pc_value *value;
    double lo, hi; /* every element lies in [lo, hi]; +-INFINITY when unknown */
    bool is_const; /* an initializer (or computed only from initializers) */
    uint32_t uses; /* consumers added by the generator */
} pc_gen_value;

struct pc_gen {
    pc_choices *ch;
    const pc_gen_config *cfg;
    pc_model *model;
    pc_graph *graph;
    pc_case *out;
    uint32_t n_ops; /* ops added so far (counted against cfg->max_nodes) */
    uint32_t n_pool, cap_pool;
    pc_gen_value **pool; /* entries in the model's arena: pointers to them stay valid */
    uint32_t pick_floor; /* operands are picked from pool[pick_floor..] only (a pattern unit's own values) */
    /* data ranges of graph inputs, parallel to the non-initializer inputs in creation order */
    uint32_t n_ranges, cap_ranges;
    double *range_lo, *range_hi;
    void *family_state;     /* free for the family's own use */
    pc_expect_fired expect; /* pattern units' guarantees (PC_EXPECT_FIRED_KEY) */
};

/* A new graph input with a static shape; its data will be drawn from [lo, hi] (integer types: rounded). */
pc_gen_value *pc_gen_input(pc_gen *g, pc_dtype dtype, int32_t rank, const int64_t *dims, double lo, double hi,
                           pc_error *err);
/* A new initializer with values drawn from [lo, hi] (from a seed drawn from the choices). */
pc_gen_value *pc_gen_const(pc_gen *g, pc_dtype dtype, int32_t rank, const int64_t *dims, double lo, double hi,
                           pc_error *err);
/* An initializer with the given values (int64 or float data, converted to dtype). */
pc_gen_value *pc_gen_const_i64(pc_gen *g, pc_dtype dtype, int32_t rank, const int64_t *dims,
                               const int64_t *values, pc_error *err);
pc_gen_value *pc_gen_const_f32(pc_gen *g, pc_dtype dtype, int32_t rank, const int64_t *dims,
                               const float *values, pc_error *err);
/* Adds a node (named "<op>_<k>") reading `inputs` (NULL entries: omitted optional inputs), runs shape
 * inference on it and puts its outputs in the pool with interval [lo, hi]. Fails (PC_ERR_INTERNAL naming the
 * op and the inference error) when shape inference rejects it or leaves an output without a full static
 * shape: the family broke its own rules. Attributes are set by the caller on the returned node *before* this
 * call inferred shapes, so use pc_gen_node_begin/pc_gen_node_end when attributes matter. */
pc_node *pc_gen_node_begin(pc_gen *g, const char *op_type, const char *domain, uint32_t n_inputs,
                           pc_value *const *inputs, uint32_t n_outputs, pc_error *err);
pc_status pc_gen_node_end(pc_gen *g, pc_node *node, double lo, double hi, pc_error *err);
/* The pool entry of a value (NULL when not pooled). */
pc_gen_value *pc_gen_lookup(pc_gen *g, const pc_value *value);
/* Picks a pooled value satisfying `accept` (NULL: any) by a draw over the candidates, the most recent first
 * (so draw 0 extends the newest value: chains before branches). NULL when none qualifies. */
typedef bool (*pc_gen_accept_fn)(const pc_gen_value *v, void *ctx);
pc_gen_value *pc_gen_pick(pc_gen *g, pc_gen_accept_fn accept, void *ctx);
/* Element count of a static shape; false on overflow or when above cfg->max_elements. */
bool pc_gen_shape_fits(const pc_gen *g, int32_t rank, const int64_t *dims);
/* Static dims of a value (rank returned; -1 when not fully static). dims must hold PC_MAX_RANK entries. */
int32_t pc_gen_value_dims(const pc_value *v, int64_t *dims);
/* Whether another op may be added (n_ops < max_nodes), and a draw deciding to stop early: draw 0 stops, so
 * the all-zero sequence makes exactly one op. Families call it in their main loop after the first op. */
bool pc_gen_continue(pc_gen *g);

/* Called by pc_case_generate after the family: every pooled value no generated node consumes becomes a graph
 * output (so the graph has no dead ends and may have several outputs); input data is drawn for every graph
 * input. */
pc_status pc_gen_finish(pc_gen *g, pc_error *err);

/* The annotation and EP layers (generators/gen_annotated.c, generators/gen_eps.c), applied by
 * pc_case_generate after pc_gen_finish when the config asks for them. */
pc_status pc_gen_annotate(pc_gen *g, pc_error *err);
pc_status pc_gen_random_eps(pc_gen *g, pc_error *err);
/* The zeros layer (cases with special values and no pattern guarantees): some float initializers that only
 * plain-data ops read (Add, Min, Concat, ...) get +0 or -0 in about half their elements, so a Min or Max of
 * a zero-heavy input and a constant meets ties of opposite zeros, and `x + 0` / `x * 0` forms appear. */
pc_status pc_gen_zero_constants(pc_gen *g, pc_error *err);
/* The empty-inputs layer (cases without pattern guarantees): now and then a node of the main graph whose
 * schema takes more (optional) inputs than it has gets one or more trailing inputs named "" — absent, as an
 * exporter writes Squeeze(x, "") — so every pass must read an empty name as no input. */
pc_status pc_gen_empty_inputs(pc_gen *g, pc_error *err);
/* The symbolic-dims layer (last; cases without pattern guarantees): some dims of the graph inputs become
 * dim_params named by their size ("s3": every symbolic dim of size 3 is one symbol, which holds for the
 * case's inputs), the node outputs' shapes are erased and inferred again from them, as a model exported with
 * a dynamic batch arrives. The case inputs keep their sizes. */
pc_status pc_gen_symbolic_dims(pc_gen *g, pc_error *err);

#ifdef __cplusplus
}
#endif

#endif
