/* Matching and rewriting helpers shared by the level 0/1 passes and the Conv+activation fusion (static inline
 * so each pass file stays self-contained): node tests, constant reads as doubles, attribute copies, a
 * snapshot of the node list (passes remove nodes while walking it), and "make the uses of this output read
 * that value" with graph output names kept. */
#ifndef PC_PASS_MATCH_H
#define PC_PASS_MATCH_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/half.h"
#include "core/base/strmap.h"
#include "core/passes/pass.h"

static inline const char *pm_label(const pc_node *n)
{
    return n->name && *n->name ? n->name : n->op_type;
}

/* An ai.onnx node of this op type that is still in the graph. */
static inline bool pm_is_op(const pc_node *n, const char *op_type)
{
    return n && !n->removed && n->domain[0] == '\0' && pc_name_eq(n->op_type, op_type);
}

static inline int64_t pm_onnx_opset(const pc_node *n)
{
    return pc_model_opset(n->graph->model, "");
}

/* Element type of a tensor value: the initializer's dtype, the declared element type, or UNDEFINED. */
static inline pc_dtype pm_elem(const pc_value *v)
{
    if (!v) return PC_DTYPE_UNDEFINED;
    if (v->initializer) return v->initializer->dtype;
    return v->type.kind == PC_TYPE_TENSOR ? v->type.elem : PC_DTYPE_UNDEFINED;
}

static inline bool pm_dtype_is_float(pc_dtype d)
{
    return d == PC_DTYPE_FLOAT || d == PC_DTYPE_DOUBLE || d == PC_DTYPE_FLOAT16 || d == PC_DTYPE_BFLOAT16;
}

/* Element i of a floating-point tensor as a double (exact for every supported type). */
static inline bool pm_get_f64(const pc_tensor *t, uint64_t i, double *out)
{
    const uint8_t *p = t->data;
    switch (t->dtype) {
    case PC_DTYPE_FLOAT: {
        float f;
        memcpy(&f, p + i * 4, 4);
        *out = f;
        return true;
    }
    case PC_DTYPE_DOUBLE:
        memcpy(out, p + i * 8, 8);
        return true;
    case PC_DTYPE_FLOAT16: {
        uint16_t h;
        memcpy(&h, p + i * 2, 2);
        *out = pc_half_to_double(h);
        return true;
    }
    case PC_DTYPE_BFLOAT16: {
        uint16_t h;
        memcpy(&h, p + i * 2, 2);
        *out = pc_bfloat16_to_double(h);
        return true;
    }
    default:
        return false;
    }
}

/* Stores v rounded once to the tensor's element type (float or double tensors only). */
static inline bool pm_set_f64(pc_tensor *t, uint64_t i, double v)
{
    uint8_t *p = t->data;
    if (t->dtype == PC_DTYPE_FLOAT) {
        float f = (float)v;
        memcpy(p + i * 4, &f, 4);
        return true;
    }
    if (t->dtype == PC_DTYPE_DOUBLE) {
        memcpy(p + i * 8, &v, 8);
        return true;
    }
    return false;
}

/* The single element of a one-element float tensor (scalar or [1], [1,1], ...). */
static inline bool pm_scalar_f64(const pc_tensor *t, double *out)
{
    return t && t->n_elements == 1 && pm_get_f64(t, 0, out);
}

/* Shallow copy of every attribute of src onto dst (attribute payloads live in the model's arena and are never
 * edited in place, so sharing them is safe). */
static inline pc_status pm_copy_attrs(pc_node *dst, const pc_node *src, pc_error *err)
{
    pc_status st = pc_node_copy_attrs(dst, src, err);
    if (st != PC_OK) pc_error_prefix(err, "copying the attributes of node '%s': ", pm_label(src));
    return st;
}

/* The live nodes in order, so a pass can remove nodes while it walks (a removed node loses its links). Every
 * pass takes one per graph per round: a small graph's list lives in the struct (not to be copied), a larger
 * one on the heap. */
typedef struct pm_nodes {
    pc_mem *mem; /* the model's heap (an OOM-injection point) when items is not `few` */
    pc_node **items;
    uint32_t n;
    pc_node *few[32];
} pm_nodes;

static inline pc_status pm_nodes_snapshot(pc_graph *g, pm_nodes *out, pc_error *err)
{
    out->n = 0;
    out->mem = &g->model->mem;
    if (g->n_nodes <= sizeof out->few / sizeof out->few[0])
        out->items = out->few;
    else if (!(out->items = pc_mem_alloc(out->mem, g->n_nodes * sizeof *out->items)))
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory listing the nodes of a graph");
    for (pc_node *n = g->first; n && out->n < g->n_nodes; n = n->next)
        out->items[out->n++] = n;
    return PC_OK;
}

static inline void pm_nodes_free(pm_nodes *s)
{
    if (s->items != s->few) pc_mem_free(s->mem, s->items);
    s->items = NULL;
}

/* Every use of node->outputs[out_index] reads x instead, then node (and whatever only fed it) is removed. A
 * graph output or an outer-scope-referenced output keeps its value: an Identity(x) made from `node` takes it
 * over and is bypassed when pc_pass_bypass_node_for can (then *added stays false); when it stays, *added is
 * set (sort the graph). */
static inline pc_status pm_replace_output(pc_graph *g, const pc_pass_options *opts, pc_node *node,
                                          uint32_t out_index, pc_value *x, bool *added, pc_error *err)
{
    pc_value *out = node->outputs[out_index];
    if (!out->is_graph_output && !out->n_subgraph_refs) {
        pc_status st = pc_value_replace_uses(out, x);
        if (st != PC_OK) return pc_error_set(err, st, "rewiring the uses of '%s'", out->name);
        return pc_pass_remove_dead(g, node, err);
    }
    pc_node *id = pc_pass_add_node(g, opts, "Identity", "", 1, &x, 1, node, err);
    if (!id) return err->status;
    if (pc_graph_move_output(node, out_index, id, 0) != PC_OK)
        return pc_error_set(err, PC_ERR_INTERNAL, "moving output '%s' of node '%s'", out->name,
                            pm_label(node));
    pc_status st = pc_pass_remove_dead(g, node, err);
    if (st != PC_OK) return st;
    bool done = false;
    st = pc_pass_bypass_node_for(g, opts, id, 0, 0, &done, err); /* the takeover obeys the run's rules */
    if (st != PC_OK) return st;
    if (!done) *added = true;
    return PC_OK;
}

/* pm_replace_output for the eliminations and prunes: refused (*done false, nothing changed) when this run may
 * not remove node with what dies with it (pc_pass_may_remove), or when the Identity a graph output needs
 * would run on an EP that refuses it. The Identity's own bypass keeps to the same rules
 * (pc_pass_bypass_node_for). */
static inline pc_status pm_replace_output_for(pc_graph *g, const pc_pass_options *opts, pc_node *node,
                                              uint32_t out_index, pc_value *x, bool *added, bool *done,
                                              pc_error *err)
{
    *done = false;
    bool ok = false;
    pc_status st = pc_pass_may_remove(opts, node, x, &ok, err);
    if (st != PC_OK || !ok) return st;
    pc_value *out = node->outputs[out_index];
    if (!out->is_graph_output && !out->n_subgraph_refs) {
        st = pc_value_replace_uses(out, x);
        if (st != PC_OK) return pc_error_set(err, st, "rewiring the uses of '%s'", out->name);
        *done = true;
        return pc_pass_remove_dead(g, node, err);
    }
    pc_node *id = pc_pass_add_node(g, opts, "Identity", "", 1, &x, 1, node, err);
    if (!id) return err->status;
    if (!pc_pass_ep_accepts(opts, id)) return pc_pass_remove_dead(g, id, err);
    if (pc_graph_move_output(node, out_index, id, 0) != PC_OK)
        return pc_error_set(err, PC_ERR_INTERNAL, "moving output '%s' of node '%s'", out->name,
                            pm_label(node));
    *done = true;
    if ((st = pc_pass_remove_dead(g, node, err)) != PC_OK) return st;
    bool bypassed = false;
    if ((st = pc_pass_bypass_node_for(g, opts, id, 0, 0, &bypassed, err)) != PC_OK) return st;
    if (!bypassed) *added = true;
    return PC_OK;
}

/* Removes v's initializer when nothing uses it any more (a pass orphaned it). */
static inline pc_status pm_drop_unused_const(pc_graph *g, pc_value *v, pc_error *err)
{
    if (!v || !v->initializer || v->graph != g || v->is_graph_input || pc_value_is_used(v)) return PC_OK;
    return pc_graph_remove_initializer(g, v, err);
}

/* pc_pass_bypass_node_for(node, 0, 0), then the initializers only node read are removed too (when the graph
 * output path detaches the inputs, pc_pass_remove_dead cannot see them). */
static inline pc_status pm_bypass(pc_graph *g, const pc_pass_options *opts, pc_node *node, bool *done,
                                  pc_error *err)
{
    uint32_t n = node->n_inputs;
    pc_value *few[8], **ins = few; /* the model's heap (an OOM-injection point) past a few */
    if (n > sizeof few / sizeof few[0] && !(ins = pc_mem_alloc(&g->model->mem, n * sizeof *ins)))
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory removing node '%s'", pm_label(node));
    if (n) memcpy(ins, node->inputs, n * sizeof *ins);
    pc_status st = pc_pass_bypass_node_for(g, opts, node, 0, 0, done, err);
    for (uint32_t i = 1; st == PC_OK && *done && i < n; i++)
        st = pm_drop_unused_const(g, ins[i], err);
    if (ins != few) pc_mem_free(&g->model->mem, ins);
    return st;
}

/* Near misses (pc_pass_near_miss): whether counting is on, and whether v, which has no single consumer, is
 * read by an ai.onnx `op` (the pattern is there but the value is shared or a graph output). */
static inline bool pm_counting(const pc_pass_options *opts)
{
    return opts && opts->rewrites;
}

static inline bool pm_shared_into(const pc_value *v, const char *op)
{
    for (uint32_t k = 0; v && k < v->n_consumers; k++)
        if (pm_is_op(v->consumers[k].node, op)) return true;
    return false;
}

/* ---- Conv folding (fuse_conv_bn, fuse_conv_add, fuse_conv_mul) ---- */

/* A Conv with constant float/double weights W [M, C/group, k...] and an optional constant bias [M]. */
typedef struct pm_conv {
    pc_node *node;
    const pc_tensor *w, *b; /* b may be NULL */
    int64_t m;              /* output channels */
    pc_node *next;          /* the single consumer of the output */
} pm_conv;

static inline bool pm_match_conv(const pc_pass_options *opts, pc_node *n, pm_conv *c)
{
    if (!pm_is_op(n, "Conv") || n->n_inputs < 2 || n->n_inputs > 3 || n->n_outputs != 1 || !n->inputs[0] ||
        !n->outputs[0] || !pc_pass_can_modify(opts, n))
        return false;
    c->node = n;
    c->w = pc_value_const(n->inputs[1]);
    c->b = n->n_inputs == 3 && n->inputs[2] ? pc_value_const(n->inputs[2]) : NULL;
    if (!c->w || (c->w->dtype != PC_DTYPE_FLOAT && c->w->dtype != PC_DTYPE_DOUBLE) || c->w->rank < 3)
        return false;
    c->m = c->w->dims[0];
    if (c->m <= 0) return false;
    if (n->n_inputs == 3 && n->inputs[2] &&
        (!c->b || c->b->dtype != c->w->dtype || c->b->rank != 1 || c->b->dims[0] != c->m))
        return false;
    c->next = pc_value_single_consumer(n->outputs[0]);
    return c->next && !c->next->removed && pc_pass_can_modify(opts, c->next) && pc_nodes_fusable(n, c->next);
}

/* After pm_match_conv refused n: notes a near miss of `kind` when n is a Conv whose output reaches an `op`
 * (shared, non-constant weights, or a consumer of another annotation/EP). */
static inline void pm_conv_near_miss(const pc_pass_options *opts, const pc_node *n, const char *op,
                                     pc_rewrite_kind kind)
{
    if (!pm_counting(opts) || !pm_is_op(n, "Conv") || n->n_outputs != 1 || !n->outputs[0] ||
        n->n_inputs < 2 || !pc_pass_can_modify(opts, n))
        return;
    const pc_value *y = n->outputs[0];
    pc_node *next = pc_value_single_consumer(y);
    if (!next) {
        if (pm_shared_into(y, op)) pc_pass_near_miss(opts, kind, PC_MISS_SHARED);
        return;
    }
    if (!pm_is_op(next, op) || next->removed) return;
    const pc_tensor *w = pc_value_const(n->inputs[1]);
    if (!w)
        pc_pass_near_miss(opts, kind, PC_MISS_NOT_CONSTANT);
    else if (w->dtype != PC_DTYPE_FLOAT && w->dtype != PC_DTYPE_DOUBLE)
        pc_pass_near_miss(opts, kind, PC_MISS_TYPE);
    else if (!pc_pass_can_modify(opts, next) || !pc_nodes_fusable(n, next))
        pc_pass_near_miss(opts, kind, PC_MISS_ANNOTATION);
    else
        pc_pass_near_miss(opts, kind, PC_MISS_OTHER); /* bias or weight shape */
}

/* Whether t broadcasts per output channel against a Conv output of rank `rank` with m channels: rank <= the
 * output's, every dim 1 except the channel dim (axis 1 after right alignment), which is 1 or m. */
static inline bool pm_per_channel(const pc_tensor *t, int32_t rank, int64_t m)
{
    if (t->rank > rank) return false;
    for (int32_t k = 0; k < t->rank; k++) {
        int32_t axis = rank - t->rank + k;
        int64_t d = t->dims[k];
        if (d != 1 && !(axis == 1 && d == m)) return false;
    }
    return true;
}

/* Element for channel ch of a per-channel tensor (pm_per_channel true): the only non-1 dim is the channel's.
 */
static inline double pm_channel_value(const pc_tensor *t, int64_t ch)
{
    double v = 0;
    pm_get_f64(t, t->n_elements == 1 ? 0 : (uint64_t)ch, &v);
    return v;
}

/* A zeroed tensor shaped like `like` (or [m] when like is NULL), with c's dtype. */
static inline pc_tensor *pm_new_param(pc_graph *g, const pm_conv *c, const pc_tensor *like, pc_error *err)
{
    return like ? pc_tensor_create(g->model, NULL, c->w->dtype, like->rank, like->dims, err)
                : pc_tensor_create(g->model, NULL, c->w->dtype, 1, &c->m, err);
}

/* Replaces c->node and `last` (the node whose output survives) with Conv(X, w, b) made from c->node
 * (annotation, EP, attributes). The new weights are new initializers; the old ones go when nothing else reads
 * them. Refused (*done false, the new node and weights dropped again) when the EP this run is for would not
 * run the new Conv. */
static inline pc_status pm_emit_conv(pc_graph *g, const pc_pass_options *opts, const pm_conv *c,
                                     pc_node *last, pc_tensor *w, pc_tensor *b, const char *what, bool *done,
                                     pc_error *err)
{
    *done = false;
    pc_value *wv = pc_pass_add_initializer(g, c->node->inputs[1]->name, w, err);
    if (!wv) return err->status;
    pc_value *bv = pc_pass_add_initializer(
        g, c->node->n_inputs > 2 && c->node->inputs[2] ? c->node->inputs[2]->name : "bias", b, err);
    if (!bv) return err->status;
    pc_value *ins[3] = {c->node->inputs[0], wv, bv};
    pc_node *conv = pc_pass_add_node(g, opts, "Conv", "", 3, ins, 1, c->node, err);
    if (!conv) return err->status;
    pc_status st = pm_copy_attrs(conv, c->node, err);
    if (st != PC_OK) return st;
    if (!pc_pass_ep_accepts(opts, conv)) return pc_pass_remove_dead(g, conv, err);
    if (pc_graph_move_output(last, 0, conv, 0) != PC_OK)
        return pc_error_set(err, PC_ERR_INTERNAL, "moving output 0 of node '%s'", pm_label(last));
    pc_pass_explain(opts, "fused Conv '%s' + %s '%s' -> Conv '%s'", pm_label(c->node), what, pm_label(last),
                    conv->name);
    *done = true;
    return pc_pass_remove_dead(g, last, err);
}

#endif
