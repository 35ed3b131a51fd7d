/*
 * match.h — which nodes of the graph after a pass are the nodes of the graph before it (private to the
 * properties; prefix match_, type node_match, apart from core's pass matcher core/passes/pass_match.h).
 *
 * Identity: a node keeps its name through a pass (passes never rename nodes; pc_pass_add_node names new nodes
 * "<source>/<op>_pc<N>"). Unnamed nodes are identified by their first output's value name instead. Names are
 * compared within a scope: the main graph, or one body of one node (names need not be unique model-wide). An
 * after-node whose identity exists before with the same op type and domain is "kept" (maybe modified); with a
 * different op or domain (the layout transformer's move into the NHWC domain) it is "new", derived from the
 * node it replaced. Before-nodes no after-node claims are "removed".
 *
 *     node_match m;
 *     if (match_build(before->graph, after->graph, &m, &err) != PC_OK) ...
 *     for (uint32_t i = 0; i < m.n_after; i++)
 *         if (m.after_to_before[i] < 0) ... m.after[i] is new ...
 *     match_free(&m);
 */
#ifndef PC_PROPERTIES_MATCH_H
#define PC_PROPERTIES_MATCH_H

#include "core/passcheck.h"
#include "properties/property.h"

typedef struct node_match {
    uint32_t n_before, n_after;
    const pc_node **before, **after;          /* every node in graph order, each body's after its node */
    const char **before_scope, **after_scope; /* per node: "" in the main graph, else the path to its body */
    char **owned_before, **owned_after;       /* the scope strings */
    uint32_t n_owned_before, n_owned_after;
    int32_t *after_to_before; /* index into before of the kept node, -1 for new nodes */
    int32_t *after_replaces;  /* for new nodes: the before-node with the same identity (op changed), or -1 */
    bool *before_kept;        /* some after-node kept it (same op and domain) */
    bool *before_changed;     /* kept but its inputs, outputs or attributes differ */
    uint32_t *before_sorted, *after_sorted; /* indices sorted by name, for lookups */
} node_match;

pc_status match_build(const pc_graph *before, const pc_graph *after, node_match *m, pc_error *err);
void match_free(node_match *m);

/* The before-node / after-node with this (non-empty) name in this scope ("": the main graph), or -1 (also
 * when the name is not unique there). */
int32_t match_find_before(const node_match *m, const char *scope, const char *name);
int32_t match_find_after(const node_match *m, const char *scope, const char *name);

/* The source a pass declared for new node m->after[after_index] through its name ("<source>/<op>_pc<N>", a
 * node of the same graph): sets *before_index or *after_index_out (the other is -1) and returns true when
 * such a node exists. */
bool match_declared_source(const node_match *m, uint32_t after_index, int32_t *before_index,
                           int32_t *after_index_out);

/* Does before-node b share a value name (input or output) with after-node a? */
bool match_nodes_adjacent(const pc_node *b, const pc_node *a);

/* Same inputs (by name), outputs (by name) and attributes. */
bool match_node_same(const pc_node *a, const pc_node *b);

/* "'name' (Op)" or "#id (Op)" for messages; buf of any size. */
const char *match_node_label(const pc_node *n, char *buf, size_t size);

/* NULL and "" are the same (absent) string. */
bool match_str_eq(const char *a, const char *b);

/* Runs pc_model_optimize on m with the options the case runner used (level, the case's EPs, its layer
 * assignment), plus an optional after_pass hook; `verify` keeps the pipeline's verifier after every pass.
 * Used by idempotence, determinism and alloc-failure. */
pc_status match_optimize_like_case(const pc_check_ctx *ctx, pc_model *m, pc_after_pass_fn hook,
                                   void *hook_ctx, bool verify, pc_error *err);

/* Loads a model from bytes (verification skipped: the caller judges the graph). */
/* text with [at, at + cut) replaced by put[0, put_len): the mutants ep-file and layer-rules draw; NULL when
 * out of memory. The caller frees it. */
char *match_text_splice(const char *text, size_t at, size_t cut, const char *put, size_t put_len);
/* The mutants' seed, drawn from the text alone (FNV-1a over its bytes from `salt`): shrinking the graph keeps
 * a failing mutant. */
uint64_t match_text_seed(const char *text, uint64_t salt);
pc_status match_load_bytes(const uint8_t *bytes, size_t size, pc_model **out, pc_error *err);

/* A final property's private copy of the original: a replica of ctx->original (pc_model_clone), as the
 * checked run's working copy was made. PC_PROP_PASS with *out set, or PC_PROP_ERROR of kind "copy-failed"
 * with the reason in msg. */
pc_prop_outcome match_copy_original(const pc_check_ctx *ctx, pc_model **out, char *msg, size_t msg_size,
                                    const char **kind);

#endif
