/* The exact transpose oracle (model in transpose_oracle.h) and the structural leftover checks. The op
 * semantics here are written from the ONNX definitions, not read from the optimizer's handler table, so a
 * handler that drops out of the table or refuses a push it could make shows up as a gap instead of moving the
 * oracle with it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "properties/oracles/transpose_oracle.h"

enum { TPO_RANK_CAP = 8, TPO_FREE_RANK = 5 };
#define TPO_NONE          UINT32_MAX
#define TPO_UNSPLIT       (UINT32_MAX - 1) /* entry_cls: the value's readers all see its own class */
#define TPO_DEFAULT_STEPS 400000u

/* ---------------------------------------------------------------------------------------------------------------
 * Op classes (ai.onnx). Layout-agnostic ops only; everything else is pinned.
 */
typedef enum tpo_kind {
    K_PINNED = 0,
    K_UNARY, /* one carrying input, same rank out */
    K_FIRST, /* input 0 carries; the others are scalars or types (Clip, CastLike) */
    K_BCAST, /* every input of rank > 0 carries, lower ranks broadcast */
    K_CONCAT,
    K_SPLIT,
    K_SOFTMAX,
    K_REDUCE,
    K_ARG,
    K_SQUEEZE,
    K_UNSQUEEZE,
    K_SLICE,
    K_PAD,
    K_TILE,
    K_GATHER,
    K_QDQ,
} tpo_kind;

static const struct {
    const char *op;
    tpo_kind kind;
} op_kinds[] = {
    {"Abs", K_UNARY},
    {"Acos", K_UNARY},
    {"Acosh", K_UNARY},
    {"Asin", K_UNARY},
    {"Asinh", K_UNARY},
    {"Atan", K_UNARY},
    {"Atanh", K_UNARY},
    {"Cast", K_UNARY},
    {"Ceil", K_UNARY},
    {"Celu", K_UNARY},
    {"Cos", K_UNARY},
    {"Cosh", K_UNARY},
    {"Elu", K_UNARY},
    {"Erf", K_UNARY},
    {"Exp", K_UNARY},
    {"Floor", K_UNARY},
    {"Gelu", K_UNARY},
    {"HardSigmoid", K_UNARY},
    {"HardSwish", K_UNARY},
    {"Identity", K_UNARY},
    {"IsInf", K_UNARY},
    {"IsNaN", K_UNARY},
    {"LeakyRelu", K_UNARY},
    {"Log", K_UNARY},
    {"Neg", K_UNARY},
    {"Not", K_UNARY},
    {"Reciprocal", K_UNARY},
    {"Relu", K_UNARY},
    {"Round", K_UNARY},
    {"Selu", K_UNARY},
    {"Shrink", K_UNARY},
    {"Sigmoid", K_UNARY},
    {"Sign", K_UNARY},
    {"Sin", K_UNARY},
    {"Sinh", K_UNARY},
    {"Softplus", K_UNARY},
    {"Softsign", K_UNARY},
    {"Sqrt", K_UNARY},
    {"Tan", K_UNARY},
    {"Tanh", K_UNARY},
    {"ThresholdedRelu", K_UNARY},
    {"Clip", K_FIRST},
    {"CastLike", K_FIRST},
    {"Add", K_BCAST},
    {"And", K_BCAST},
    {"BitShift", K_BCAST},
    {"Div", K_BCAST},
    {"Equal", K_BCAST},
    {"Greater", K_BCAST},
    {"GreaterOrEqual", K_BCAST},
    {"Less", K_BCAST},
    {"LessOrEqual", K_BCAST},
    {"Max", K_BCAST},
    {"Mean", K_BCAST},
    {"Min", K_BCAST},
    {"Mod", K_BCAST},
    {"Mul", K_BCAST},
    {"Or", K_BCAST},
    {"Pow", K_BCAST},
    {"PRelu", K_BCAST},
    {"Sub", K_BCAST},
    {"Sum", K_BCAST},
    {"Where", K_BCAST},
    {"Xor", K_BCAST},
    {"Concat", K_CONCAT},
    {"Split", K_SPLIT},
    {"Softmax", K_SOFTMAX},
    {"LogSoftmax", K_SOFTMAX},
    {"Hardmax", K_SOFTMAX},
    {"ReduceL1", K_REDUCE},
    {"ReduceL2", K_REDUCE},
    {"ReduceLogSum", K_REDUCE},
    {"ReduceLogSumExp", K_REDUCE},
    {"ReduceMax", K_REDUCE},
    {"ReduceMean", K_REDUCE},
    {"ReduceMin", K_REDUCE},
    {"ReduceProd", K_REDUCE},
    {"ReduceSum", K_REDUCE},
    {"ReduceSumSquare", K_REDUCE},
    {"ArgMax", K_ARG},
    {"ArgMin", K_ARG},
    {"Squeeze", K_SQUEEZE},
    {"Unsqueeze", K_UNSQUEEZE},
    {"Slice", K_SLICE},
    {"Pad", K_PAD},
    {"Tile", K_TILE},
    {"Gather", K_GATHER},
    {"QuantizeLinear", K_QDQ},
    {"DequantizeLinear", K_QDQ},
};

static tpo_kind op_kind(const pc_node *n)
{
    if (n->domain[0]) return K_PINNED;
    for (size_t i = 0; i < sizeof op_kinds / sizeof op_kinds[0]; i++)
        if (pc_name_eq(op_kinds[i].op, n->op_type)) return op_kinds[i].kind;
    return K_PINNED;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Perms: out.shape[i] = in.shape[p[i]]; Transpose(b) after Transpose(a) is Transpose(c), c[i] = a[b[i]].
 */
typedef struct tpo_perm {
    uint8_t rank;
    uint8_t p[TPO_RANK_CAP];
} tpo_perm;

static tpo_perm perm_identity(uint32_t rank)
{
    tpo_perm q = {(uint8_t)rank, {0}};
    for (uint32_t i = 0; i < rank; i++)
        q.p[i] = (uint8_t)i;
    return q;
}

static bool perm_is_identity(const tpo_perm *q)
{
    for (uint32_t i = 0; i < q->rank; i++)
        if (q->p[i] != i) return false;
    return true;
}

static tpo_perm perm_compose(const tpo_perm *a, const tpo_perm *b)
{
    tpo_perm c = {a->rank, {0}};
    for (uint32_t i = 0; i < a->rank; i++)
        c.p[i] = a->p[b->p[i]];
    return c;
}

/* The layout of a rank-reduced output when the input runs in q and the logical axes `removed` go. */
static tpo_perm perm_squeeze(const tpo_perm *q, const bool *removed)
{
    uint8_t below[TPO_RANK_CAP];
    uint8_t k = 0;
    for (uint32_t a = 0; a < q->rank; a++) {
        below[a] = k;
        k = (uint8_t)(k + (removed[a] ? 1 : 0));
    }
    tpo_perm out = {0, {0}};
    for (uint32_t j = 0; j < q->rank; j++)
        if (!removed[q->p[j]]) out.p[out.rank++] = (uint8_t)(q->p[j] - below[q->p[j]]);
    return out;
}

/* The layout of a rank-raised output (inserted: flags over out_rank) when the input runs in q: inserted axes
 * stay in place, the others follow q. */
static tpo_perm perm_widen(const tpo_perm *q, const bool *inserted, uint32_t out_rank)
{
    uint8_t pos[TPO_RANK_CAP];
    uint32_t k = 0;
    for (uint32_t a = 0; a < out_rank; a++)
        if (!inserted[a]) pos[k++] = (uint8_t)a;
    tpo_perm out = {(uint8_t)out_rank, {0}};
    for (uint32_t a = 0; a < out_rank; a++)
        out.p[a] = (uint8_t)a;
    for (uint32_t j = 0; j < q->rank && j < k; j++)
        out.p[pos[j]] = pos[q->p[j]];
    return out;
}

static void perm_format(const tpo_perm *q, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "[");
    for (uint32_t i = 0; i < q->rank && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, i ? ",%u" : "%u", q->p[i]);
    if (n < size) snprintf(buf + n, size - n, "]");
}

/* A Transpose node's perm when it is one the optimizer can move: ai.onnx, a permutation of its input's known
 * rank (the reversed dims when the attribute is absent). */
static bool transpose_perm(const pc_node *n, tpo_perm *out)
{
    if (strcmp(n->op_type, "Transpose") != 0 || n->domain[0] || n->n_inputs < 1 || !n->inputs[0] ||
        n->n_outputs < 1 || !n->outputs[0])
        return false;
    int32_t r = pc_value_rank(n->inputs[0]);
    if (r < 0 || r > TPO_RANK_CAP) return false;
    const pc_attr *a = pc_node_attr(n, "perm");
    out->rank = (uint8_t)r;
    if (!a) {
        for (int32_t i = 0; i < r && i < TPO_RANK_CAP; i++) /* the cap again: gcc -O3 cannot see r <= it */
            out->p[i] = (uint8_t)(r - 1 - i);
        return true;
    }
    if (a->type != PC_ATTR_INTS || a->n != (size_t)r) return false;
    bool seen[TPO_RANK_CAP] = {false};
    for (int32_t i = 0; i < r; i++) {
        if (a->ints[i] < 0 || a->ints[i] >= r || seen[a->ints[i]]) return false;
        seen[a->ints[i]] = true;
        out->p[i] = (uint8_t)a->ints[i];
    }
    return true;
}

static bool is_transpose_node(const pc_node *n)
{
    return strcmp(n->op_type, "Transpose") == 0 && !n->domain[0];
}

static bool str_same(const char *a, const char *b)
{
    return (!a || !b) ? a == b : strcmp(a, b) == 0;
}

/* Whether one optimizer run may edit both nodes: after partitioning, one EP's run (unassigned nodes are any
 * run's); before it, one annotation group's run (the pipeline scopes level-0/1 passes by layer_ann,
 * pc_pass_options.scoped). */
static bool region_same(const pc_node *a, const pc_node *b)
{
    if (a->ep || b->ep) return str_same(a->ep, b->ep);
    return str_same(pc_node_annotation(a), pc_node_annotation(b));
}

static bool has_subgraph(const pc_node *n)
{
    for (uint32_t a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].type == PC_ATTR_GRAPH || n->attrs[a].type == PC_ATTR_GRAPHS) return true;
    return false;
}

/* A constant the optimizer permutes for free: a local, non-overridable initializer with byte-sized elements.
 */
static bool value_free_const(const pc_value *v)
{
    const pc_tensor *t = pc_value_const(v);
    if (!t) return false;
    unsigned bits = pc_dtype_bits(t->dtype);
    return bits && bits % 8 == 0 && t->dtype != PC_DTYPE_STRING;
}

static bool axis_normalize(int64_t axis, uint32_t rank, uint32_t *out)
{
    if (axis < -(int64_t)rank || axis >= (int64_t)rank) return false;
    *out = (uint32_t)(axis < 0 ? axis + (int64_t)rank : axis);
    return true;
}

/* Constant ints of input i (at most TPO_RANK_CAP * 2). */
static bool const_ints(const pc_node *n, uint32_t i, int64_t *out, size_t *count)
{
    if (i >= n->n_inputs || !n->inputs[i]) return false;
    const pc_tensor *t = pc_value_const(n->inputs[i]);
    return t && t->rank <= 1 && pc_tensor_read_ints(t, out, 2 * TPO_RANK_CAP, count);
}

/* Input i is computed (not a constant) and 1-D: an int vector whose entries follow the axes (pads, repeats,
 * axes, scales) can then be reordered or remapped at run time by a Gather on the perm, so it does not pin the
 * node. *len is its static length, or -1 when unknown. */
static bool computed_vector(const pc_node *n, uint32_t i, int64_t *len)
{
    if (i >= n->n_inputs || !n->inputs[i] || pc_value_const(n->inputs[i])) return false;
    const pc_value *v = n->inputs[i];
    if (v->type.kind != PC_TYPE_TENSOR || v->type.shape.rank != 1) return false;
    *len = v->type.shape.dims[0].kind == PC_DIM_KNOWN ? v->type.shape.dims[0].size : -1;
    return true;
}

/* Axes as flags over `rank` from the attribute (from_input false) or a constant input 1. *present false when
 * the node gives none. false when they cannot be known or are invalid (duplicates, out of range). */
static bool read_axes(const pc_node *n, bool from_input, uint32_t rank, bool *flags, size_t *count,
                      bool *present)
{
    int64_t axes[2 * TPO_RANK_CAP];
    size_t k = 0;
    *present = false;
    *count = 0;
    if (from_input) {
        if (n->n_inputs < 2 || !n->inputs[1]) return true;
        if (!const_ints(n, 1, axes, &k)) return false;
    } else {
        const pc_attr *a = pc_node_attr(n, "axes");
        if (!a) return true;
        if (a->type != PC_ATTR_INTS || a->n > TPO_RANK_CAP) return false;
        k = a->n;
        if (k) memcpy(axes, a->ints, k * sizeof *axes);
    }
    *present = true;
    for (size_t j = 0; j < k; j++) {
        uint32_t ax;
        if (!axis_normalize(axes[j], rank, &ax) || flags[ax]) return false;
        flags[ax] = true;
    }
    *count = k;
    return true;
}

/* ---------------------------------------------------------------------------------------------------------------
 * The model.
 */
typedef enum tpo_shape { S_SAME, S_SQUEEZE, S_WIDEN, S_IDENTITY_OUT } tpo_shape;

typedef struct tpo_desc {
    const pc_node *node;
    tpo_kind kind;
    uint32_t rank;     /* working rank: the carrying inputs' (and same-shape outputs') rank */
    uint32_t out_rank; /* S_SQUEEZE, S_WIDEN, S_IDENTITY_OUT */
    tpo_shape shape;
    bool axes[TPO_RANK_CAP]; /* removed (over rank) or inserted (over out_rank) */
    int64_t side_axis;       /* >= 0: Softmax < 13, sigma must keep every axis on its side */
    bool row_fixed; /* Hardmax < 13 also keeps the axes from side_axis on in place: each coerced row's first
                       maximum wins, so a row read in another order picks another element among ties */
} tpo_desc;

typedef struct tpo_ref {
    uint32_t cls, slot;
} tpo_ref;

typedef struct tpo_choice {
    uint32_t sigma; /* perm id */
    uint32_t n_req, n_out;
    tpo_ref *req, *out;
} tpo_choice;

typedef struct tpo_free {
    const pc_node *node;
    uint32_t n_choices;
    tpo_choice *choices; /* choice 0 is the identity */
} tpo_free;

typedef struct tpo_class {
    const pc_value *root;
    uint32_t rank;
    bool free_layout; /* a constant */
    bool virt;        /* the Unsqueeze of a lower-rank broadcast input */
    uint32_t n_slots, cap_slots;
    uint32_t *slot_perm;    /* distinct layouts (perm ids) needed or made */
    int64_t fixed_produced; /* slot made by a pinned producer, -1 when a free node chooses */
    /* search state */
    uint32_t *count; /* per slot: requirements */
    uint32_t n_distinct;
    int64_t produced;
} tpo_class;

typedef struct tpo_model {
    const pc_graph *g;
    const pc_tpo_options *opts;
    int64_t opset;
    pc_error *err;
    tpo_perm *perms;
    uint32_t n_perms, cap_perms;
    tpo_class *classes;
    uint32_t n_classes, cap_classes;
    uint32_t *vcls, *vperm; /* per value id: class and layout relative to the class root */
    uint32_t *entry_cls;    /* per value id: the class readers of another EP see it in (value_class_at) */
    uint32_t n_boundaries;  /* values split that way */
    tpo_desc *descs;        /* free candidates, in graph order */
    uint32_t n_descs;
    tpo_free *frees;
    uint32_t n_free;
    tpo_ref *fixed_req; /* requirements that do not depend on any choice */
    uint32_t n_fixed, cap_fixed;
    uint32_t *virt_value, *virt_rank, *virt_cls; /* virtual classes by (value id, rank) */
    uint32_t n_virt, cap_virt;
    uint32_t *group[TPO_FREE_RANK + 1]; /* candidate perms per rank */
    uint32_t n_group[TPO_FREE_RANK + 1];
    uint32_t pinned_transposes; /* Transposes the oracle cannot move (malformed perms, unknown ranks) */
    uint32_t name_copies;       /* names that need a node of their own (name_needs_copy) */
    uint32_t transposes;
} tpo_model;

static pc_status oom(tpo_model *m, const char *what)
{
    return pc_error_set(m->err, PC_ERR_NOMEM, "transpose oracle: %s", what);
}

/* Grows *arr (of elem bytes) to hold need elements. */
static bool grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap) return true;
    uint32_t nc = *cap ? *cap : 8;
    while (nc < need) {
        if (nc > UINT32_MAX / 2) return false;
        nc *= 2;
    }
    size_t bytes;
    if (!pc_size_mul(nc, elem, &bytes)) return false;
    void *p = realloc(*arr, bytes);
    if (!p) return false;
    *arr = p;
    *cap = nc;
    return true;
}

static uint32_t perm_id(tpo_model *m, const tpo_perm *q)
{
    for (uint32_t i = 0; i < m->n_perms; i++)
        if (m->perms[i].rank == q->rank && memcmp(m->perms[i].p, q->p, q->rank) == 0) return i;
    if (!grow((void **)&m->perms, &m->cap_perms, m->n_perms + 1, sizeof *m->perms)) return TPO_NONE;
    m->perms[m->n_perms] = *q;
    return m->n_perms++;
}

static uint32_t class_slot(tpo_model *m, uint32_t cls, uint32_t pid)
{
    tpo_class *c = &m->classes[cls];
    for (uint32_t s = 0; s < c->n_slots; s++)
        if (c->slot_perm[s] == pid) return s;
    if (!grow((void **)&c->slot_perm, &c->cap_slots, c->n_slots + 1, sizeof *c->slot_perm)) return TPO_NONE;
    c->slot_perm[c->n_slots] = pid;
    return c->n_slots++;
}

static uint32_t class_new(tpo_model *m, const pc_value *root, uint32_t rank, bool free_layout, bool fixed)
{
    if (!grow((void **)&m->classes, &m->cap_classes, m->n_classes + 1, sizeof *m->classes)) return TPO_NONE;
    tpo_class *c = &m->classes[m->n_classes];
    memset(c, 0, sizeof *c);
    c->root = root;
    c->rank = rank;
    c->free_layout = free_layout;
    c->fixed_produced = -1;
    uint32_t cls = m->n_classes++;
    if (fixed) {
        tpo_perm id = perm_identity(rank);
        uint32_t pid = perm_id(m, &id);
        uint32_t s = pid == TPO_NONE ? TPO_NONE : class_slot(m, cls, pid);
        if (s == TPO_NONE) return TPO_NONE;
        m->classes[cls].fixed_produced = s;
    }
    return cls;
}

/* Class and layout of a value; roots (anything not made by a movable Transpose) get a class on first sight
 * with a fixed identity producer (graph inputs, pinned nodes) or none (constants). */
static pc_status value_class(tpo_model *m, const pc_value *v, uint32_t *cls, uint32_t *pid)
{
    if (m->vcls[v->id] == TPO_NONE) {
        int32_t r = pc_value_rank(v);
        uint32_t rank = r < 0 || r > TPO_RANK_CAP ? 0 : (uint32_t)r;
        bool fc = value_free_const(v);
        uint32_t c = class_new(m, v, rank, fc, !fc);
        tpo_perm id = perm_identity(rank);
        uint32_t p = c == TPO_NONE ? TPO_NONE : perm_id(m, &id);
        if (p == TPO_NONE) return oom(m, "classes");
        m->vcls[v->id] = c;
        m->vperm[v->id] = p;
    }
    *cls = m->vcls[v->id];
    *pid = m->vperm[v->id];
    return PC_OK;
}

static pc_status value_class_at(tpo_model *m, const pc_value *v, const pc_node *reader, uint32_t *cls,
                                uint32_t *pid);

/* Layout pid of class cls is needed whatever the search chooses. */
static pc_status req_fixed(tpo_model *m, uint32_t cls, uint32_t pid)
{
    uint32_t s = class_slot(m, cls, pid);
    if (s == TPO_NONE || !grow((void **)&m->fixed_req, &m->cap_fixed, m->n_fixed + 1, sizeof *m->fixed_req))
        return oom(m, "requirements");
    m->fixed_req[m->n_fixed++] = (tpo_ref){cls, s};
    return PC_OK;
}

/* A requirement no choice changes: v is read as it is, by a pinned node `reader` (keeps_name false) or as a
 * graph output or a value a subgraph reads by name (keeps_name true, reader NULL). A constant's class is free
 * for nodes (the optimizer permutes the data), but a value that keeps its name must still be made by a node:
 * the optimizer never folds a Transpose whose output is a graph output or read by a subgraph
 * (tp_fold_const_transpose), and neither does constant folding. Such a value costs nothing when it is the
 * initializer itself or the constant's own layout (an Identity can make it), else one Transpose per distinct
 * layout. */
static pc_status fixed_add(tpo_model *m, const pc_value *v, const pc_node *reader, bool keeps_name)
{
    uint32_t cls = 0, pid = 0;
    pc_status st = value_class_at(m, v, reader, &cls, &pid);
    if (st != PC_OK) return st;
    if (m->classes[cls].free_layout &&
        (!keeps_name || m->classes[cls].root == v || perm_is_identity(&m->perms[pid])))
        return PC_OK;
    return req_fixed(m, cls, pid);
}

/* Does input i carry the layout under the node's class? */
static bool carries(const tpo_desc *d, uint32_t i)
{
    const pc_value *v = d->node->inputs[i];
    if (!v) return false;
    switch (d->kind) {
    case K_UNARY:
    case K_CONCAT:
        return true;
    case K_BCAST:
        return pc_value_rank(v) > 0;
    default:
        return i == 0;
    }
}

/* Outputs: every present one must have the rank the op's semantics give (unknown ranks pin the node). */
static bool outputs_ranked(const pc_node *n, uint32_t rank)
{
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] && pc_value_rank(n->outputs[k]) != (int32_t)rank) return false;
    return true;
}

/* Can a node op_type (first input of type dt) be added next to n and take n's EP? Unassigned: yes
 * (partitioning decides later); assigned: when that EP, looked up in the options, claims it; `unlisted` when
 * the options do not list it. */
static bool ep_runs(const pc_tpo_options *o, const pc_graph *g, const pc_node *n, const char *op_type,
                    pc_dtype dt, bool unlisted)
{
    if (!n->ep) return true;
    for (uint32_t k = 0; o && o->eps && k < o->n_eps; k++)
        if (o->eps[k] && strcmp(o->eps[k]->name, n->ep) == 0)
            return pc_ep_claims_new_node(o->eps[k], (pc_graph *)g, op_type, dt);
    return unlisted;
}

/* Can node n get the Gather its computed input i of that element type needs? (An unlisted EP's node is
 * pinned.) */
static bool gather_runs(const tpo_model *m, const pc_node *n, uint32_t i)
{
    return ep_runs(m->opts, m->g, n, "Gather", n->inputs[i]->type.elem, false);
}

/* Does the name of v, a graph output or a value a subgraph reads, made by a Transpose, need a node of its
 * own whatever layouts are picked? The optimizer keeps such a name with an Identity, or hands it to the maker
 * of the value the Transpose would read; an EP that runs no Identity leaves only the latter, which the model
 * does not follow (which value that is depends on the choice), so each such name is charged one node: a
 * Transpose, or the identity Transpose the optimizer leaves as the copy. An upper bound where a hand-over
 * was possible. */
static bool name_needs_copy(const tpo_model *m, const pc_value *v)
{
    const pc_node *t = v->producer;
    if (!t || t->graph != m->g || !is_transpose_node(t) || !t->inputs[0]) return false;
    if (!v->is_graph_output && !v->n_subgraph_refs) return false;
    /* only a relabeling Transpose: a pinned one is counted as it is (pinned_transposes) */
    if (m->vcls[v->id] == TPO_NONE || m->classes[m->vcls[v->id]].root == v) return false;
    return !ep_runs(m->opts, m->g, t, "Identity", t->inputs[0]->type.elem, true);
}

/* Fills d for a layout-agnostic node whose preconditions hold (the ones the optimizer's handlers check). */
static bool desc_make(tpo_model *m, const pc_node *n, tpo_desc *d)
{
    memset(d, 0, sizeof *d);
    d->node = n;
    d->kind = op_kind(n);
    d->side_axis = -1;
    /* a node next to another EP's node stays free: its own EP's run reorders it, reading a foreign value
     * through a new Transpose of its own and feeding foreign readers through one (EP boundaries are modelled
     * on the values Transposes make, value_class_at) */
    if (d->kind == K_PINNED || has_subgraph(n) || n->n_inputs < 1 || !n->inputs[0] || n->n_outputs < 1)
        return false;
    int32_t r0 = pc_value_rank(n->inputs[0]);
    if (d->kind == K_BCAST) r0 = pc_value_rank(n->outputs[0]);
    if (r0 < 2 || r0 > TPO_FREE_RANK) return false; /* ranks 0, 1 have one layout; unknown ranks block */
    uint32_t r = (uint32_t)r0;
    d->rank = r;
    d->shape = S_SAME;
    int64_t opset = m->opset;
    switch (d->kind) {
    case K_UNARY:
    case K_FIRST:
        break;
    case K_BCAST:
        for (uint32_t i = 0; i < n->n_inputs; i++) {
            int32_t ri = n->inputs[i] ? pc_value_rank(n->inputs[i]) : 0;
            if (ri < 0 || ri > r0) return false;
        }
        break;
    case K_CONCAT: {
        const pc_attr *a = pc_node_attr(n, "axis");
        uint32_t ax;
        if (!a || a->type != PC_ATTR_INT || !axis_normalize(a->i, r, &ax)) return false;
        for (uint32_t i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] && pc_value_rank(n->inputs[i]) != r0) return false;
        break;
    }
    case K_SPLIT: {
        uint32_t ax;
        if (!axis_normalize(pc_node_attr_int(n, "axis", 0), r, &ax)) return false;
        break;
    }
    case K_SOFTMAX: {
        uint32_t ax;
        if (!axis_normalize(pc_node_attr_int(n, "axis", opset >= 13 ? -1 : 1), r, &ax)) return false;
        if (opset < 13) d->side_axis = ax;
        d->row_fixed = opset < 13 && strcmp(n->op_type, "Hardmax") == 0;
        break;
    }
    case K_REDUCE: {
        bool from_input = strcmp(n->op_type, "ReduceSum") == 0 ? opset >= 13 : opset >= 18;
        size_t cnt;
        bool present;
        if (!read_axes(n, from_input, r, d->axes, &cnt, &present)) return false;
        bool keep = pc_node_attr_int(n, "keepdims", 1) != 0;
        if (cnt == 0) {
            if (from_input && pc_node_attr_int(n, "noop_with_empty_axes", 0)) break; /* an identity */
            d->shape = S_IDENTITY_OUT; /* reduce-all: nothing left to lay out */
            d->out_rank = keep ? r : 0;
            memset(d->axes, 0, sizeof d->axes);
        } else if (!keep) {
            d->shape = S_SQUEEZE;
            d->out_rank = r - (uint32_t)cnt;
        }
        break;
    }
    case K_ARG: {
        uint32_t ax;
        if (!axis_normalize(pc_node_attr_int(n, "axis", 0), r, &ax)) return false;
        if (!pc_node_attr_int(n, "keepdims", 1)) {
            d->shape = S_SQUEEZE;
            d->axes[ax] = true;
            d->out_rank = r - 1;
        }
        break;
    }
    case K_SQUEEZE: {
        size_t cnt;
        bool present;
        if (!read_axes(n, opset >= 13, r, d->axes, &cnt, &present)) return false;
        if (!present) {
            int64_t dims[PC_MAX_RANK];
            if (!pc_value_dims(n->inputs[0], dims)) return false;
            cnt = 0;
            for (uint32_t i = 0; i < r; i++)
                if (dims[i] == 1) {
                    d->axes[i] = true;
                    cnt++;
                }
        }
        d->shape = S_SQUEEZE;
        d->out_rank = r - (uint32_t)cnt;
        break;
    }
    case K_UNSQUEEZE: {
        size_t cnt = 0;
        if (opset >= 13) {
            int64_t axes[2 * TPO_RANK_CAP];
            if (!const_ints(n, 1, axes, &cnt)) return false;
        } else {
            const pc_attr *a = pc_node_attr(n, "axes");
            if (!a || a->type != PC_ATTR_INTS) return false;
            cnt = a->n;
        }
        if (r + cnt > TPO_FREE_RANK) return false;
        bool present;
        size_t got;
        if (!read_axes(n, opset >= 13, r + (uint32_t)cnt, d->axes, &got, &present) || !present || got != cnt)
            return false;
        d->shape = S_WIDEN;
        d->out_rank = r + (uint32_t)cnt;
        break;
    }
    case K_SLICE: {
        bool seen[TPO_RANK_CAP] = {false};
        int64_t axes[2 * TPO_RANK_CAP];
        size_t cnt = 0;
        if (opset < 10) {
            const pc_attr *s = pc_node_attr(n, "starts"), *a = pc_node_attr(n, "axes");
            if (!s || s->type != PC_ATTR_INTS || s->n > r) return false;
            if (a && (a->type != PC_ATTR_INTS || a->n != s->n)) return false;
            cnt = s->n;
            for (size_t k = 0; k < cnt; k++)
                axes[k] = a ? a->ints[k] : (int64_t)k;
        } else if (n->n_inputs > 3 && n->inputs[3]) {
            int64_t len;
            /* computed axes: Gather(perm, axes), negative ones included from Gather-11 */
            if (computed_vector(n, 3, &len)) {
                if (opset < 11 || !gather_runs(m, n, 3)) return false;
                cnt = 0; /* unknown here; the Gather maps whichever they are */
            } else if (!const_ints(n, 3, axes, &cnt)) {
                return false;
            }
        } else {
            /* the default axes are 0..len(starts)-1: the starts' length, computed or not */
            int64_t starts[2 * TPO_RANK_CAP], len;
            if (computed_vector(n, 1, &len)) {
                if (len < 0 || len > (int64_t)r) return false;
                cnt = (size_t)len;
            } else if (!const_ints(n, 1, starts, &cnt) || cnt > r) {
                return false;
            }
            for (size_t k = 0; k < cnt; k++)
                axes[k] = (int64_t)k;
        }
        for (size_t k = 0; k < cnt; k++) {
            uint32_t ax;
            if (!axis_normalize(axes[k], r, &ax) || seen[ax]) return false;
            seen[ax] = true;
        }
        break;
    }
    case K_PAD: {
        int64_t pads[2 * TPO_RANK_CAP], len;
        size_t cnt;
        if (opset < 11) {
            const pc_attr *a = pc_node_attr(n, "pads");
            if (!a || a->type != PC_ATTR_INTS || a->n != 2 * (size_t)r) return false;
        } else if (n->n_inputs > 3 && n->inputs[3]) {
            return false; /* Pad-18 axes */
        } else if (computed_vector(n, 1, &len)) {
            if ((len >= 0 && len != 2 * (int64_t)r) || !gather_runs(m, n, 1)) return false;
        } else if (!const_ints(n, 1, pads, &cnt) || cnt != 2 * (size_t)r) {
            return false;
        }
        break;
    }
    case K_TILE: {
        int64_t reps[2 * TPO_RANK_CAP], len;
        size_t cnt;
        if (computed_vector(n, 1, &len)) {
            if ((len >= 0 && len != (int64_t)r) || !gather_runs(m, n, 1)) return false;
        } else if (!const_ints(n, 1, reps, &cnt) || cnt != r) {
            return false;
        }
        break;
    }
    case K_GATHER: {
        const pc_tensor *t = n->n_inputs > 1 && n->inputs[1] ? pc_value_const(n->inputs[1]) : NULL;
        uint32_t ax;
        if (!t || t->rank != 0 || !axis_normalize(pc_node_attr_int(n, "axis", 0), r, &ax)) return false;
        d->shape = S_SQUEEZE;
        d->axes[ax] = true;
        d->out_rank = r - 1;
        break;
    }
    case K_QDQ: {
        int32_t rs = n->n_inputs > 1 && n->inputs[1] ? pc_value_rank(n->inputs[1]) : -1;
        if (rs == 1) {
            uint32_t ax;
            if (opset < 13 || pc_node_attr_int(n, "block_size", 0) != 0 ||
                !axis_normalize(pc_node_attr_int(n, "axis", 1), r, &ax))
                return false;
        } else if (rs != 0) {
            return false;
        }
        break;
    }
    case K_PINNED:
        return false;
    }
    uint32_t want = d->shape == S_SAME ? r : d->out_rank;
    if (d->kind == K_QDQ || d->kind == K_ARG || d->kind == K_REDUCE || d->kind == K_GATHER ||
        d->kind == K_SQUEEZE || d->kind == K_UNSQUEEZE || d->kind == K_SLICE || d->kind == K_PAD ||
        d->kind == K_TILE || d->kind == K_FIRST || d->kind == K_SOFTMAX) {
        if (n->outputs[0] && pc_value_rank(n->outputs[0]) != (int32_t)want) return false;
        for (uint32_t k = 1; k < n->n_outputs; k++)
            if (n->outputs[k]) return false; /* optional extra outputs: not modelled */
    } else if (!outputs_ranked(n, want)) {
        return false;
    }
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (carries(d, i) && d->kind != K_BCAST && pc_value_rank(n->inputs[i]) != r0) return false;
    return true;
}

/* Does input `index` of `reader` read its value as it is, whatever layouts the search picks? */
static bool reads_fixed(tpo_model *m, const pc_node *reader, uint32_t index)
{
    tpo_perm q;
    if (is_transpose_node(reader)) return !transpose_perm(reader, &q);
    tpo_desc d;
    return !desc_make(m, reader, &d) || !carries(&d, index);
}

/* The class and layout `reader` (NULL: a graph output or a subgraph) sees v in. After partitioning each run
 * removes, edits or creates only its EP's nodes (rewiring another EP's node to a value of the same content is
 * allowed) and leaves no other EP's node dead (docs/passes.md: another EP's dead producer is that EP's to
 * remove, and no pass removes dead nodes on their own). Where v's maker M runs on EP A and `reader` on EP B:
 *  - A's run may change M (its layout, or a Transpose's perm) only while feeding the reader v's content as
 *    it is now, through a Transpose of A's: B's run cannot then cancel that Transpose, it is A's and would
 *    be left dead;
 *  - B's run may make the reader read another layout only through a Transpose of its own reading v (so M
 *    keeps a reader) or from a layout A's side makes anyway;
 * and the two can never meet in one run. So v's class must keep v's present layout (a requirement no choice
 * changes), and the readers of other EPs see v as the root of a class of its own (an entry), whose other
 * layouts their runs make with Transposes reading v. Not modelled: such a reader reading a layout A's side
 * makes for its own readers (the optimum is then an upper bound). When something keeps v read as it is
 * whatever the search picks (a graph output, a subgraph, a reader pinned to v), that layout stays in the
 * class anyway and every reader may read any layout of it: no boundary. Constants have no maker (each run
 * folds its own Transposes of one). Before partitioning the regions are the annotation groups (region_same).
 */
static pc_status value_class_at(tpo_model *m, const pc_value *v, const pc_node *reader, uint32_t *cls,
                                uint32_t *pid)
{
    pc_status st = value_class(m, v, cls, pid);
    const pc_node *t = v->producer;
    if (st != PC_OK || !reader || !t || region_same(t, reader) || m->classes[*cls].free_layout) return st;
    if (m->entry_cls[v->id] == TPO_NONE) {
        bool kept = v->is_graph_output || v->n_subgraph_refs;
        for (uint32_t u = 0; u < v->n_consumers && !kept; u++)
            kept = reads_fixed(m, v->consumers[u].node, v->consumers[u].index);
        uint32_t parent = *cls, rank = m->classes[*cls].rank;
        uint32_t entry = kept ? TPO_UNSPLIT : class_new(m, v, rank, false, true);
        if (entry == TPO_NONE) return oom(m, "classes");
        if (!kept) {
            if ((st = req_fixed(m, parent, *pid)) != PC_OK) return st;
            m->n_boundaries++;
        }
        m->entry_cls[v->id] = entry;
    }
    if (m->entry_cls[v->id] == TPO_UNSPLIT) return PC_OK;
    *cls = m->entry_cls[v->id];
    tpo_perm id = perm_identity(m->classes[*cls].rank);
    *pid = perm_id(m, &id);
    return *pid == TPO_NONE ? oom(m, "perms") : PC_OK;
}

/* The output layout of a free node run in sigma. */
static tpo_perm desc_out_perm(const tpo_desc *d, const tpo_perm *sigma)
{
    switch (d->shape) {
    case S_SAME:
        return *sigma;
    case S_SQUEEZE:
        return perm_squeeze(sigma, d->axes);
    case S_WIDEN:
        return perm_widen(sigma, d->axes, d->out_rank);
    case S_IDENTITY_OUT:
        break;
    }
    return perm_identity(d->out_rank);
}

static bool desc_allows(const tpo_desc *d, const tpo_perm *sigma)
{
    if (d->side_axis < 0) return true;
    for (uint32_t i = 0; i < sigma->rank; i++) {
        if (((int64_t)i < d->side_axis) != ((int64_t)sigma->p[i] < d->side_axis)) return false;
        if (d->row_fixed && (int64_t)i >= d->side_axis && sigma->p[i] != i) return false;
    }
    return true;
}

/* Group closure of the generators already in group[r] (perm ids). */
static pc_status group_close(tpo_model *m, uint32_t r, uint32_t *cap)
{
    uint32_t n_gen = m->n_group[r];
    uint32_t *gens = malloc((n_gen ? n_gen : 1) * sizeof *gens);
    if (!gens) return oom(m, "generators");
    if (n_gen) memcpy(gens, m->group[r], n_gen * sizeof *gens);
    tpo_perm id = perm_identity(r);
    uint32_t idp = perm_id(m, &id);
    if (idp == TPO_NONE) {
        free(gens);
        return oom(m, "perms");
    }
    m->n_group[r] = 0;
    if (!grow((void **)&m->group[r], cap, 1, sizeof *m->group[r])) {
        free(gens);
        return oom(m, "group");
    }
    m->group[r][m->n_group[r]++] = idp;
    for (uint32_t i = 0; i < m->n_group[r]; i++) {
        for (uint32_t k = 0; k < n_gen; k++) {
            tpo_perm c = perm_compose(&m->perms[m->group[r][i]], &m->perms[gens[k]]);
            uint32_t pid = perm_id(m, &c);
            if (pid == TPO_NONE) {
                free(gens);
                return oom(m, "perms");
            }
            bool have = false;
            for (uint32_t j = 0; j < m->n_group[r] && !have; j++)
                have = m->group[r][j] == pid;
            if (have) continue;
            if (!grow((void **)&m->group[r], cap, m->n_group[r] + 1, sizeof *m->group[r])) {
                free(gens);
                return oom(m, "group");
            }
            m->group[r][m->n_group[r]++] = pid;
        }
    }
    free(gens);
    return PC_OK;
}

static bool group_has(const tpo_model *m, uint32_t r, uint32_t pid)
{
    for (uint32_t j = 0; j < m->n_group[r]; j++)
        if (m->group[r][j] == pid) return true;
    return false;
}

static pc_status group_add(tpo_model *m, uint32_t r, const tpo_perm *q, uint32_t *cap, bool *added)
{
    uint32_t pid = perm_id(m, q);
    if (pid == TPO_NONE) return oom(m, "perms");
    if (group_has(m, r, pid)) return PC_OK;
    if (!grow((void **)&m->group[r], cap, m->n_group[r] + 1, sizeof *m->group[r])) return oom(m, "group");
    m->group[r][m->n_group[r]++] = pid;
    *added = true;
    return PC_OK;
}

/* Candidate layouts: the groups generated by the Transposes' perms, carried across the rank changes of free
 * nodes in both directions until nothing new appears. */
static pc_status groups_build(tpo_model *m)
{
    uint32_t cap[TPO_FREE_RANK + 1] = {0};
    pc_status st = PC_OK;
    for (const pc_node *n = m->g->first; n && st == PC_OK; n = n->next) {
        tpo_perm q;
        bool added = false;
        if (transpose_perm(n, &q) && q.rank <= TPO_FREE_RANK)
            st = group_add(m, q.rank, &q, &cap[q.rank], &added);
    }
    for (int round = 0; round < 8 && st == PC_OK; round++) {
        for (uint32_t r = 0; r <= TPO_FREE_RANK && st == PC_OK; r++)
            st = group_close(m, r, &cap[r]);
        bool added = false;
        for (uint32_t k = 0; k < m->n_descs && st == PC_OK; k++) {
            const tpo_desc *d = &m->descs[k];
            if (d->shape != S_SQUEEZE && d->shape != S_WIDEN) continue;
            uint32_t in_r = d->rank, out_r = d->out_rank;
            /* forward: what each input layout makes of the output */
            for (uint32_t j = 0; j < m->n_group[in_r] && st == PC_OK; j++) {
                tpo_perm o = desc_out_perm(d, &m->perms[m->group[in_r][j]]);
                st = group_add(m, out_r, &o, &cap[out_r], &added);
            }
            /* backward: an input layout that gives each output layout */
            for (uint32_t j = 0; j < m->n_group[out_r] && st == PC_OK; j++) {
                tpo_perm o = m->perms[m->group[out_r][j]];
                tpo_perm back =
                    d->shape == S_SQUEEZE ? perm_widen(&o, d->axes, in_r) : perm_squeeze(&o, d->axes);
                st = group_add(m, in_r, &back, &cap[in_r], &added);
            }
        }
        if (!added) break;
    }
    return st;
}

static uint32_t virt_class(tpo_model *m, const pc_value *v, uint32_t rank)
{
    for (uint32_t i = 0; i < m->n_virt; i++)
        if (m->virt_value[i] == v->id && m->virt_rank[i] == rank) return m->virt_cls[i];
    uint32_t cap = m->cap_virt;
    if (!grow((void **)&m->virt_value, &cap, m->n_virt + 1, sizeof(uint32_t))) return TPO_NONE;
    cap = m->cap_virt;
    if (!grow((void **)&m->virt_rank, &cap, m->n_virt + 1, sizeof(uint32_t))) return TPO_NONE;
    cap = m->cap_virt;
    if (!grow((void **)&m->virt_cls, &cap, m->n_virt + 1, sizeof(uint32_t))) return TPO_NONE;
    m->cap_virt = cap;
    uint32_t c = class_new(m, v, rank, false, true);
    if (c == TPO_NONE) return TPO_NONE;
    m->classes[c].virt = true;
    m->virt_value[m->n_virt] = v->id;
    m->virt_rank[m->n_virt] = rank;
    m->virt_cls[m->n_virt++] = c;
    return c;
}

typedef struct ref_list {
    tpo_ref *v;
    uint32_t n, cap;
} ref_list;

static bool ref_push(ref_list *l, uint32_t cls, uint32_t slot)
{
    if (slot == TPO_NONE || !grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v)) return false;
    l->v[l->n++] = (tpo_ref){cls, slot};
    return true;
}

/* One choice of a free node: the requirements on its carrying inputs and the layouts of its outputs. */
static pc_status choice_build(tpo_model *m, const tpo_desc *d, uint32_t sigma_id, tpo_choice *ch)
{
    const pc_node *n = d->node;
    tpo_perm sigma = m->perms[sigma_id];
    bool ident = perm_is_identity(&sigma);
    ref_list req = {0}, out = {0};
    ch->sigma = sigma_id;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        const pc_value *v = n->inputs[i];
        if (!carries(d, i)) continue;
        uint32_t cls, pid;
        pc_status st = value_class_at(m, v, n, &cls, &pid);
        if (st != PC_OK) goto fail;
        if (m->classes[cls].free_layout) continue;
        if (pc_value_rank(v) == (int32_t)d->rank) {
            tpo_perm need = perm_compose(&m->perms[pid], &sigma);
            uint32_t np = perm_id(m, &need);
            if (np == TPO_NONE || !ref_push(&req, cls, class_slot(m, cls, np))) goto oom_fail;
        } else {
            /* lower rank, not constant: read as it is, then Unsqueeze + Transpose(sigma) unless sigma is the
             * identity */
            if (!ref_push(&req, cls, class_slot(m, cls, pid))) goto oom_fail;
            if (!ident) {
                uint32_t vc = virt_class(m, v, d->rank);
                if (vc == TPO_NONE || !ref_push(&req, vc, class_slot(m, vc, sigma_id))) goto oom_fail;
            }
        }
    }
    tpo_perm op = desc_out_perm(d, &sigma);
    uint32_t opid = perm_id(m, &op);
    if (opid == TPO_NONE) goto oom_fail;
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        const pc_value *v = n->outputs[k];
        if (!v) continue;
        uint32_t cls = m->vcls[v->id];
        if (!ref_push(&out, cls, class_slot(m, cls, opid))) goto oom_fail;
    }
    ch->req = req.v;
    ch->n_req = req.n;
    ch->out = out.v;
    ch->n_out = out.n;
    return PC_OK;
oom_fail:
    oom(m, "choices");
fail:
    free(req.v);
    free(out.v);
    return m->err->status ? m->err->status : PC_ERR_NOMEM;
}

static pc_status model_build(tpo_model *m)
{
    const pc_graph *g = m->g;
    pc_status st;
    size_t bytes;
    uint32_t nv = g->n_values ? g->n_values : 1;
    if (!pc_size_mul(nv, sizeof(uint32_t), &bytes)) return oom(m, "value table");
    m->vcls = malloc(bytes);
    m->vperm = malloc(bytes);
    m->entry_cls = malloc(bytes);
    m->descs = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *m->descs);
    if (!m->vcls || !m->vperm || !m->entry_cls || !m->descs) return oom(m, "value table");
    memset(m->vcls, 0xff, bytes);
    memset(m->vperm, 0xff, bytes);
    memset(m->entry_cls, 0xff, bytes);

    /* classes: Transposes relabel, every other node is a root maker; free candidates are described */
    for (const pc_node *n = g->first; n; n = n->next) {
        tpo_perm q;
        if (is_transpose_node(n)) m->transposes++;
        if (transpose_perm(n, &q)) {
            uint32_t cls, pid;
            if ((st = value_class_at(m, n->inputs[0], n, &cls, &pid)) != PC_OK) return st;
            if (m->classes[cls].rank != q.rank) {
                m->pinned_transposes++; /* an unknown-rank class: cannot relabel */
                if ((st = fixed_add(m, n->inputs[0], n, false)) != PC_OK) return st;
                continue;
            }
            tpo_perm c = perm_compose(&m->perms[pid], &q);
            uint32_t cp = perm_id(m, &c);
            if (cp == TPO_NONE) return oom(m, "perms");
            m->vcls[n->outputs[0]->id] = cls;
            m->vperm[n->outputs[0]->id] = cp;
            continue;
        }
        if (is_transpose_node(n)) m->pinned_transposes++;
        tpo_desc *d = &m->descs[m->n_descs];
        bool is_free = desc_make(m, n, d);
        for (uint32_t i = 0; i < n->n_inputs; i++) {
            const pc_value *v = n->inputs[i];
            if (!v) continue;
            if (is_free && carries(d, i)) {
                uint32_t cls, pid;
                if ((st = value_class_at(m, v, n, &cls, &pid)) != PC_OK) return st;
                continue;
            }
            if ((st = fixed_add(m, v, n, false)) != PC_OK) return st;
        }
        for (uint32_t k = 0; k < n->n_outputs; k++) {
            const pc_value *v = n->outputs[k];
            if (!v) continue;
            uint32_t rank = is_free ? (d->shape == S_SAME ? d->rank : d->out_rank) : 0;
            if (!is_free) {
                int32_t r = pc_value_rank(v);
                rank = r < 0 || r > TPO_RANK_CAP ? 0 : (uint32_t)r;
            }
            uint32_t c = class_new(m, v, rank, false, !is_free);
            tpo_perm id = perm_identity(rank);
            uint32_t p = c == TPO_NONE ? TPO_NONE : perm_id(m, &id);
            if (p == TPO_NONE) return oom(m, "classes");
            m->vcls[v->id] = c;
            m->vperm[v->id] = p;
        }
        if (is_free) m->n_descs++;
    }
    /* graph outputs and values subgraphs read stay as they are */
    for (uint32_t i = 0; i < g->n_outputs; i++)
        if (!name_needs_copy(m, g->outputs[i]) && (st = fixed_add(m, g->outputs[i], NULL, true)) != PC_OK)
            return st;
    for (const pc_node *n = g->first; n; n = n->next) {
        for (uint32_t i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] && n->inputs[i]->n_subgraph_refs && !name_needs_copy(m, n->inputs[i]) &&
                (st = fixed_add(m, n->inputs[i], NULL, true)) != PC_OK)
                return st;
        if (is_transpose_node(n) && n->outputs[0] && name_needs_copy(m, n->outputs[0])) m->name_copies++;
    }

    if ((st = groups_build(m)) != PC_OK) return st;
    m->frees = calloc(m->n_descs ? m->n_descs : 1, sizeof *m->frees);
    if (!m->frees) return oom(m, "free nodes");
    for (uint32_t k = 0; k < m->n_descs; k++) {
        const tpo_desc *d = &m->descs[k];
        tpo_free *f = &m->frees[m->n_free++];
        f->node = d->node;
        uint32_t nc = m->n_group[d->rank];
        f->choices = calloc(nc ? nc : 1, sizeof *f->choices);
        if (!f->choices) return oom(m, "choices");
        /* group[r][0] is the identity: choice 0 is the graph as it is */
        for (uint32_t j = 0; j < nc; j++) {
            if (!desc_allows(d, &m->perms[m->group[d->rank][j]])) continue;
            if ((st = choice_build(m, d, m->group[d->rank][j], &f->choices[f->n_choices])) != PC_OK)
                return st;
            f->n_choices++;
        }
    }
    for (uint32_t c = 0; c < m->n_classes; c++) {
        tpo_class *cl = &m->classes[c];
        cl->count = calloc(cl->n_slots ? cl->n_slots : 1, sizeof *cl->count);
        if (!cl->count) return oom(m, "class counts");
        cl->produced = cl->fixed_produced;
    }
    return PC_OK;
}

static void model_free(tpo_model *m)
{
    free(m->perms);
    for (uint32_t c = 0; c < m->n_classes; c++) {
        free(m->classes[c].slot_perm);
        free(m->classes[c].count);
    }
    free(m->classes);
    free(m->vcls);
    free(m->vperm);
    free(m->entry_cls);
    free(m->descs);
    for (uint32_t k = 0; k < m->n_free; k++) {
        for (uint32_t j = 0; j < m->frees[k].n_choices; j++) {
            free(m->frees[k].choices[j].req);
            free(m->frees[k].choices[j].out);
        }
        free(m->frees[k].choices);
    }
    free(m->frees);
    free(m->fixed_req);
    free(m->virt_value);
    free(m->virt_rank);
    free(m->virt_cls);
    for (uint32_t r = 0; r <= TPO_FREE_RANK; r++)
        free(m->group[r]);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Branch and bound. A class's bound is the Transposes it needs given what is decided: distinct needed layouts
 * other than the one made (or all but one while the maker is undecided). Deciding more never lowers it, so
 * the sum bounds every completion.
 */
typedef struct tpo_search {
    tpo_model *m;
    int64_t total, best;
    uint64_t steps, max_steps;
    bool out_of_steps;
    uint32_t *cur, *best_choice;
    uint32_t *order; /* per depth: choice order (max_choices each) */
    int64_t *delta;  /* same layout */
    uint32_t max_choices;
} tpo_search;

static int64_t class_bound(const tpo_class *c)
{
    /* a constant is made in every layout nodes read; only graph outputs' layouts count (fixed_add) */
    if (c->free_layout) return c->n_distinct;
    int64_t d = c->n_distinct;
    if (c->produced >= 0) return d - (c->count[c->produced] > 0 ? 1 : 0);
    return d ? d - 1 : 0;
}

static void req_add(tpo_search *s, const tpo_ref *r, int delta)
{
    tpo_class *c = &s->m->classes[r->cls];
    int64_t old = class_bound(c);
    if (delta > 0) {
        if (c->count[r->slot]++ == 0) c->n_distinct++;
    } else {
        if (--c->count[r->slot] == 0) c->n_distinct--;
    }
    s->total += class_bound(c) - old;
}

static void produced_set(tpo_search *s, const tpo_ref *r, int64_t slot)
{
    tpo_class *c = &s->m->classes[r->cls];
    int64_t old = class_bound(c);
    c->produced = slot;
    s->total += class_bound(c) - old;
}

static void choice_apply(tpo_search *s, const tpo_choice *ch)
{
    for (uint32_t k = 0; k < ch->n_req; k++)
        req_add(s, &ch->req[k], 1);
    for (uint32_t k = 0; k < ch->n_out; k++)
        produced_set(s, &ch->out[k], ch->out[k].slot);
}

static void choice_undo(tpo_search *s, const tpo_choice *ch)
{
    for (uint32_t k = ch->n_out; k-- > 0;)
        produced_set(s, &ch->out[k], -1);
    for (uint32_t k = ch->n_req; k-- > 0;)
        req_add(s, &ch->req[k], -1);
}

static void search(tpo_search *s, uint32_t depth)
{
    tpo_model *m = s->m;
    if (++s->steps > s->max_steps) {
        s->out_of_steps = true;
        return;
    }
    if (depth == m->n_free) {
        if (s->total < s->best) {
            s->best = s->total;
            memcpy(s->best_choice, s->cur, m->n_free * sizeof *s->cur);
        }
        return;
    }
    const tpo_free *f = &m->frees[depth];
    uint32_t *order = s->order + (size_t)depth * s->max_choices;
    int64_t *delta = s->delta + (size_t)depth * s->max_choices;
    for (uint32_t j = 0; j < f->n_choices; j++) {
        choice_apply(s, &f->choices[j]);
        delta[j] = s->total;
        choice_undo(s, &f->choices[j]);
        /* insertion by bound, stable: the identity first among equals */
        uint32_t k = j;
        while (k > 0 && delta[order[k - 1]] > delta[j]) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = j;
    }
    for (uint32_t k = 0; k < f->n_choices; k++) {
        uint32_t j = order[k];
        if (delta[j] >= s->best) break;
        choice_apply(s, &f->choices[j]);
        s->cur[depth] = j;
        search(s, depth + 1);
        choice_undo(s, &f->choices[j]);
        if (s->out_of_steps) return;
    }
}

static pc_status assignment_describe(tpo_search *s, char **out)
{
    tpo_model *m = s->m;
    for (uint32_t k = 0; k < m->n_free; k++)
        choice_apply(s, &m->frees[k].choices[s->best_choice[k]]);
    pc_strbuf b = {0};
    char pbuf[64], item[512];
    pc_strbuf_puts(&b, ""); /* "" when nothing is moved */
    bool any = false;
    for (uint32_t k = 0; k < m->n_free; k++) {
        const tpo_choice *ch = &m->frees[k].choices[s->best_choice[k]];
        for (uint32_t o = 0; o < ch->n_out; o++) {
            const tpo_class *c = &m->classes[ch->out[o].cls];
            const tpo_perm *q = &m->perms[c->slot_perm[ch->out[o].slot]];
            if (perm_is_identity(q)) continue;
            perm_format(q, pbuf, sizeof pbuf);
            snprintf(item, sizeof item, "%s%s=%s", any ? " " : "layouts: ", c->root->name, pbuf);
            pc_strbuf_puts(&b, item);
            any = true;
        }
    }
    bool any_t = false;
    for (uint32_t c = 0; c < m->n_classes; c++) {
        const tpo_class *cl = &m->classes[c];
        for (uint32_t sl = 0; sl < cl->n_slots; sl++) {
            if (!cl->count[sl] || (int64_t)sl == cl->produced) continue;
            perm_format(&m->perms[cl->slot_perm[sl]], pbuf, sizeof pbuf);
            snprintf(
                item, sizeof item, "%s%s%s%s,%s)", any_t ? " " : (any ? "; transposes: " : "transposes: "),
                cl->virt ? "Transpose(Unsqueeze(" : "Transpose(", cl->root->name, cl->virt ? ")" : "", pbuf);
            pc_strbuf_puts(&b, item);
            any_t = true;
        }
    }
    for (uint32_t k = m->n_free; k-- > 0;)
        choice_undo(s, &m->frees[k].choices[s->best_choice[k]]);
    if (b.oom) {
        pc_strbuf_free(&b);
        return oom(m, "assignment text");
    }
    *out = pc_strbuf_take(&b);
    return PC_OK;
}

pc_status pc_tpo_solve(const pc_graph *g, const pc_tpo_options *opts, pc_tpo_result *res, pc_error *err)
{
    memset(res, 0, sizeof *res);
    tpo_model m = {.g = g, .opts = opts, .err = err, .opset = pc_model_opset(g->model, "")};
    tpo_search s = {.m = &m};
    pc_status st = model_build(&m);
    if (st != PC_OK) goto done;
    s.max_steps = opts && opts->max_steps ? opts->max_steps : TPO_DEFAULT_STEPS;
    for (uint32_t k = 0; k < m.n_free; k++)
        if (m.frees[k].n_choices > s.max_choices) s.max_choices = m.frees[k].n_choices;
    size_t cells;
    if (!pc_size_mul(m.n_free ? m.n_free : 1, s.max_choices ? s.max_choices : 1, &cells)) {
        st = oom(&m, "search tables");
        goto done;
    }
    s.cur = calloc(m.n_free ? m.n_free : 1, sizeof *s.cur);
    s.best_choice = calloc(m.n_free ? m.n_free : 1, sizeof *s.best_choice);
    s.order = calloc(cells, sizeof *s.order);
    s.delta = calloc(cells, sizeof *s.delta);
    if (!s.cur || !s.best_choice || !s.order || !s.delta) {
        st = oom(&m, "search tables");
        goto done;
    }
    for (uint32_t c = 0; c < m.n_classes; c++)
        s.total += class_bound(&m.classes[c]);
    for (uint32_t k = 0; k < m.n_fixed; k++)
        req_add(&s, &m.fixed_req[k], 1);
    /* the graph as it is (every free node in identity) is the first incumbent */
    for (uint32_t k = 0; k < m.n_free; k++)
        choice_apply(&s, &m.frees[k].choices[0]);
    s.best = s.total;
    for (uint32_t k = m.n_free; k-- > 0;)
        choice_undo(&s, &m.frees[k].choices[0]);
    search(&s, 0);
    res->transposes = m.transposes;
    res->optimum = (uint32_t)s.best + m.pinned_transposes + m.name_copies;
    res->proven = !s.out_of_steps;
    res->n_free = m.n_free;
    res->n_classes = m.n_classes;
    res->n_boundaries = m.n_boundaries;
    res->steps = s.steps;
    st = assignment_describe(&s, &res->assignment);
done:
    free(s.cur);
    free(s.best_choice);
    free(s.order);
    free(s.delta);
    model_free(&m);
    return st;
}

void pc_tpo_result_free(pc_tpo_result *res)
{
    if (!res) return;
    free(res->assignment);
    res->assignment = NULL;
}

uint32_t pc_tpo_count_transposes(const pc_graph *g)
{
    uint32_t n = 0;
    for (const pc_node *x = g->first; x; x = x->next)
        n += is_transpose_node(x);
    return n;
}

uint32_t pc_tpo_count_layout_moved(const pc_graph *g)
{
    uint32_t n = 0;
    for (const pc_node *x = g->first; x; x = x->next)
        n +=
            strcmp(x->domain, "com.ms.internal.nhwc") == 0 ||
            (strcmp(x->domain, "com.passcheck.systolic") == 0 && strcmp(x->op_type, "QLinearConv_nhwc") == 0);
    return n;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Structural leftovers.
 */

/* A chain link a Transpose passes through unchanged: a unary op, or a broadcasting op whose other inputs are
 * constants or scalars of known rank at most the chain's. */
static bool chain_link(const pc_node *n, const pc_value *from, uint32_t rank)
{
    tpo_kind k = op_kind(n);
    if (n->n_outputs != 1 || !n->outputs[0] || has_subgraph(n)) return false;
    if (pc_value_rank(n->outputs[0]) != (int32_t)rank) return false;
    if (k == K_UNARY) return n->n_inputs == 1;
    if (k == K_FIRST) return n->inputs[0] == from;
    if (k != K_BCAST) return false;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        const pc_value *v = n->inputs[i];
        if (!v || v == from) continue;
        int32_t r = pc_value_rank(v);
        if (r < 0 || r > (int32_t)rank || (r > 0 && !value_free_const(v))) return false;
    }
    return true;
}

/* An identity Transpose n is the copy its output's name needs: that name (a graph output's, or one a subgraph
 * reads) cannot go to n's input's maker (none; another run's node; a value that is itself named, or read by
 * anything else), and n's EP runs no Identity to copy with. */
static bool identity_is_copy(const pc_node *n, const pc_tpo_options *opts)
{
    const pc_value *out = n->outputs[0], *in = n->inputs[0];
    if (!out->is_graph_output && !out->n_subgraph_refs) return false;
    if (ep_runs(opts, n->graph, n, "Identity", in->type.elem, true)) return false;
    bool handed = !out->n_subgraph_refs && in->producer && in->producer->graph == n->graph &&
                  region_same(in->producer, n) && !in->is_graph_output && !in->is_graph_input &&
                  !in->initializer && !in->n_subgraph_refs && in->n_consumers == 1;
    return !handed;
}

bool pc_tpo_leftover_find(const pc_graph *g, const pc_tpo_options *opts, char *msg, size_t msg_size)
{
    for (const pc_node *n = g->first; n; n = n->next) {
        tpo_perm p;
        if (!transpose_perm(n, &p)) continue;
        char pb[64], qb[64];
        perm_format(&p, pb, sizeof pb);
        if (perm_is_identity(&p) && !identity_is_copy(n, opts)) {
            snprintf(msg, msg_size, "Transpose '%s' has the identity perm %s", n->name ? n->name : "", pb);
            return true;
        }
        const pc_node *a = n->inputs[0]->producer;
        tpo_perm q;
        if (a && region_same(a, n) && transpose_perm(a, &q) && q.rank == p.rank) {
            perm_format(&q, qb, sizeof qb);
            snprintf(msg, msg_size, "Transpose '%s' %s reads Transpose '%s' %s (they merge into one)",
                     n->name ? n->name : "", pb, a->name ? a->name : "", qb);
            return true;
        }
        /* a single-consumer chain of elementwise ops from n's output into a Transpose that cancels n */
        const pc_value *v = n->outputs[0];
        uint32_t links = 0;
        while (v->n_consumers == 1 && !v->is_graph_output && !v->n_subgraph_refs) {
            const pc_node *c = v->consumers[0].node;
            if (!region_same(c, n)) break;
            if (transpose_perm(c, &q) && q.rank == p.rank) {
                tpo_perm comp = perm_compose(&p, &q);
                if (links > 0 && perm_is_identity(&comp)) {
                    perm_format(&q, qb, sizeof qb);
                    snprintf(msg, msg_size,
                             "Transpose '%s' %s and Transpose '%s' %s cancel across %u single-consumer "
                             "elementwise op(s) from '%s'",
                             n->name ? n->name : "", pb, c->name ? c->name : "", qb, links,
                             n->outputs[0]->name);
                    return true;
                }
                break;
            }
            if (!chain_link(c, v, p.rank)) break;
            links++;
            v = c->outputs[0];
        }
    }
    return false;
}
