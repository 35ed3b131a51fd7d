/* The transpose optimizer's plan and solve steps (docs/transpose.md, "Plan, solve, apply").
 *
 * Plan. Every value is stored in some layout: a perm L with canonical = Transpose(L)(stored). A Transpose
 * this run may edit is a relabeling, not an op: its output is its input seen through its perm, so the
 * values joined by such Transposes form one class whose root is the value something else made, and a member
 * m is Transpose(Q_m)(root). Every other node either
 *  - is a variable: its handler (transpose_handlers.c, asked to plan: it checks and edits nothing) accepts
 * running it in a layout sigma — its carrying inputs read stored in sigma, its outputs come out in the perm
 * the handler reports — for some candidate sigma besides the identity (the node as it is); or
 *  - is pinned: it reads its inputs and makes its outputs as they are. So are graph inputs and outputs,
 *    values subgraphs read, and every node this run may not edit.
 * A reader of member m that reads it stored in L needs the root as Transpose(Q_m . L^-1)(root), a perm
 * relative to the root's canonical tensor; the root's maker makes it as Transpose(L_out^-1). A class costs
 * one Transpose per distinct perm its readers need other than the one made (readers that agree share one);
 * a constant makes any layout for free (it is permuted), but a graph output or a subgraph keeps reading it
 * by name. A lower-rank input of a broadcasting op that is no constant costs one Transpose of its own after
 * an Unsqueeze when sigma is not the identity. The objective is (Transposes, ORT's rank metric), in that
 * order; a region never ends above the metric it starts at.
 *
 * Candidates of rank r: the group the rank-r Transposes' perms generate (capped), closed under the rank
 * changes the variables make (their outputs' perms, and the lift of a rank-reducing op's output perm that
 * keeps the dropped axes in place).
 *
 * Solve. Variables that share a class form a region; regions are independent. Each region starts from the
 * identity (the graph as it is), descends (one variable at a time, strictly lower cost only), then runs a
 * branch and bound over every assignment under a step budget: a class's cost never falls as readers are
 * added, and its maker can only take one off, so max(0, distinct - 1) bounds an undecided class. Within
 * the budget the result is the model's optimum (proven); beyond it, the best found, never above the start.
 * Ties keep the current layout, so a second run changes nothing. */
#include <stdlib.h>
#include <string.h>

#include "core/transpose/transpose_internal.h"

enum {
    PLAN_MAX_RANK = 15,    /* perms are packed 4 bits an entry into a 64-bit key */
    PLAN_GROUP_CAP = 48,   /* candidates per rank */
    PLAN_CLOSE_ROUNDS = 4, /* rank-change closure rounds */
    PLAN_REGION_STEPS = 200000,
    PLAN_DESCENT_ROUNDS = 8,
};

#define NONE UINT32_MAX

/* ---- perms, interned ---------------------------------------------------------------------------------- */

typedef struct perm_table {
    pc_mem *mem;    /* the model's heap: every table and array of the plan is an OOM-injection point */
    uint64_t *keys; /* id -> key */
    uint32_t n, cap;
    uint32_t *slots; /* open addressing: id + 1, 0 empty */
    uint32_t n_slots;
} perm_table;

static uint64_t perm_key(const int64_t *p, size_t rank)
{
    uint64_t k = rank;
    for (size_t i = 0; i < rank; i++)
        k |= (uint64_t)p[i] << (4 + 4 * i);
    return k;
}

static size_t perm_decode(uint64_t k, int64_t *p)
{
    size_t rank = k & 15;
    for (size_t i = 0; i < rank; i++)
        p[i] = (int64_t)((k >> (4 + 4 * i)) & 15);
    return rank;
}

static uint32_t slot_of(uint64_t k, uint32_t n_slots)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (uint32_t)(k & (n_slots - 1));
}

/* The id of perm p (interned on first sight); NONE when out of memory. */
static uint32_t perm_id(perm_table *t, const int64_t *p, size_t rank)
{
    uint64_t k = perm_key(p, rank);
    if (t->n_slots) {
        for (uint32_t s = slot_of(k, t->n_slots);; s = (s + 1) & (t->n_slots - 1)) {
            if (!t->slots[s]) break;
            if (t->keys[t->slots[s] - 1] == k) return t->slots[s] - 1;
        }
    }
    if (2 * (t->n + 1) > t->n_slots) {
        uint32_t ns = t->n_slots ? 2 * t->n_slots : 64;
        uint32_t *slots = pc_mem_calloc(t->mem, ns, sizeof *slots);
        if (!slots) return NONE;
        for (uint32_t id = 0; id < t->n; id++) {
            uint32_t s = slot_of(t->keys[id], ns);
            while (slots[s])
                s = (s + 1) & (ns - 1);
            slots[s] = id + 1;
        }
        pc_mem_free(t->mem, t->slots);
        t->slots = slots;
        t->n_slots = ns;
    }
    if (t->n == t->cap) {
        uint32_t nc = t->cap ? 2 * t->cap : 32;
        uint64_t *keys = pc_mem_realloc(t->mem, t->keys, nc * sizeof *keys);
        if (!keys) return NONE;
        t->keys = keys;
        t->cap = nc;
    }
    t->keys[t->n] = k;
    uint32_t s = slot_of(k, t->n_slots);
    while (t->slots[s])
        s = (s + 1) & (t->n_slots - 1);
    t->slots[s] = t->n + 1;
    return t->n++;
}

static size_t perm_get(const perm_table *t, uint32_t id, int64_t *p)
{
    return perm_decode(t->keys[id], p);
}

static uint32_t perm_identity_id(perm_table *t, size_t rank)
{
    int64_t p[PLAN_MAX_RANK];
    for (size_t i = 0; i < rank; i++)
        p[i] = (int64_t)i;
    return perm_id(t, p, rank);
}

/* Transpose(b) after Transpose(a). */
static uint32_t perm_then(perm_table *t, uint32_t a, uint32_t b)
{
    int64_t pa[PLAN_MAX_RANK], pb[PLAN_MAX_RANK], c[PLAN_MAX_RANK];
    size_t r = perm_get(t, a, pa);
    perm_get(t, b, pb);
    tp_perm_compose(pa, pb, r, c);
    return perm_id(t, c, r);
}

static uint32_t perm_inverse(perm_table *t, uint32_t a)
{
    int64_t pa[PLAN_MAX_RANK], inv[PLAN_MAX_RANK];
    size_t r = perm_get(t, a, pa);
    tp_perm_invert(pa, r, inv);
    return perm_id(t, inv, r);
}

/* ---- the model ---------------------------------------------------------------------------------------- */

typedef struct need {
    uint32_t cls, pid;
} need;

typedef struct option {
    uint32_t sigma;               /* perm id; option 0 of every variable is the identity */
    uint32_t first_need, n_needs; /* into plan.needs: what its carrying inputs need */
    uint32_t first_prod, n_prods; /* into plan.needs: (class, perm) its outputs make */
    uint32_t priv_count;          /* Transposes of its own (after an Unsqueeze) */
    uint64_t priv_weight;
} option;

typedef struct var {
    pc_node *node;
    const tp_handler *h;
    uint32_t rank;
    uint32_t first_opt, n_opts;
    uint32_t chosen; /* option index; NONE while undecided */
} var;

typedef struct slot {
    uint32_t pid, count;
} slot;

typedef struct cls {
    uint32_t weight;   /* ORT's metric of one Transpose of the class (the root's non-1 dims) */
    bool constant;     /* made in any layout for free */
    uint32_t made_by;  /* var index, NONE when fixed */
    uint32_t made;     /* the perm made (NONE: undecided) */
    uint32_t identity; /* the identity perm of the class's rank */
    uint32_t rank;
    slot *slots; /* needs with their counts (count 0 entries stay) */
    uint32_t n_slots, cap_slots;
    uint32_t distinct; /* slots with count > 0 */
    uint32_t region;   /* the first variable seen touching it (union-find: solve's region anchor) */
} cls;

typedef struct plan {
    tp_ctx *ctx;
    perm_table perms;
    /* per value id */
    uint32_t n_values;
    uint32_t *val_cls, *val_q; /* class and Q (perm id); NONE: not looked at yet */
    cls *classes;
    uint32_t n_classes, cap_classes;
    var *vars;
    uint32_t n_vars, cap_vars;
    option *opts;
    uint32_t n_opts, cap_opts;
    need *needs;
    uint32_t n_needs, cap_needs;
    /* candidates per rank (perm ids), index = rank */
    uint32_t *cand[PLAN_MAX_RANK + 1];
    uint32_t n_cand[PLAN_MAX_RANK + 1];
    /* search state */
    uint64_t count, weight; /* the bound (exact when every variable is decided) */
    uint64_t steps;
    bool oom;
} plan;

static bool grow(pc_mem *mem, void **arr, uint32_t *cap, uint32_t need_n, size_t elem)
{
    if (need_n <= *cap) return true;
    uint32_t nc = *cap ? *cap : 16;
    while (nc < need_n) {
        if (nc > UINT32_MAX / 2) return false;
        nc *= 2;
    }
    if ((size_t)nc > SIZE_MAX / elem) return false;
    void *p = pc_mem_realloc(mem, *arr, (size_t)nc * elem);
    if (!p) return false;
    *arr = p;
    *cap = nc;
    return true;
}

/* A class's part of the objective: distinct needs other than the one made; an undecided maker can take at
 * most one off. Constant classes count only the needs that keep reading by name (see model_build). */
static uint32_t cls_cost(const cls *c)
{
    if (c->made == NONE) return c->distinct ? c->distinct - 1 : 0;
    uint32_t cost = c->distinct;
    for (uint32_t i = 0; i < c->n_slots; i++)
        if (c->slots[i].pid == c->made && c->slots[i].count) return cost - 1;
    return cost;
}

static void cost_sub(plan *pl, const cls *c)
{
    uint32_t k = cls_cost(c);
    pl->count -= k;
    pl->weight -= (uint64_t)k * c->weight;
}

static void cost_add(plan *pl, const cls *c)
{
    uint32_t k = cls_cost(c);
    pl->count += k;
    pl->weight += (uint64_t)k * c->weight;
}

static bool slot_add(plan *pl, cls *c, uint32_t pid, int delta)
{
    for (uint32_t i = 0; i < c->n_slots; i++) {
        if (c->slots[i].pid != pid) continue;
        if (delta > 0 && c->slots[i].count++ == 0) c->distinct++;
        if (delta < 0 && --c->slots[i].count == 0) c->distinct--;
        return true;
    }
    if (delta < 0) return true; /* not reached: every removal follows its addition */
    if (!grow(pl->perms.mem, (void **)&c->slots, &c->cap_slots, c->n_slots + 1, sizeof *c->slots)) {
        pl->oom = true;
        return false;
    }
    c->slots[c->n_slots++] = (slot){pid, 1};
    c->distinct++;
    return true;
}

static void need_add(plan *pl, uint32_t ci, uint32_t pid, int delta)
{
    cls *c = &pl->classes[ci];
    cost_sub(pl, c);
    slot_add(pl, c, pid, delta);
    cost_add(pl, c);
}

static void made_set(plan *pl, uint32_t ci, uint32_t pid)
{
    cls *c = &pl->classes[ci];
    cost_sub(pl, c);
    c->made = pid;
    cost_add(pl, c);
}

static void option_apply(plan *pl, var *v, uint32_t o)
{
    const option *op = &pl->opts[v->first_opt + o];
    for (uint32_t k = 0; k < op->n_needs; k++)
        need_add(pl, pl->needs[op->first_need + k].cls, pl->needs[op->first_need + k].pid, 1);
    for (uint32_t k = 0; k < op->n_prods; k++)
        made_set(pl, pl->needs[op->first_prod + k].cls, pl->needs[op->first_prod + k].pid);
    pl->count += op->priv_count;
    pl->weight += op->priv_weight;
    v->chosen = o;
}

static void option_undo(plan *pl, var *v)
{
    const option *op = &pl->opts[v->first_opt + v->chosen];
    for (uint32_t k = 0; k < op->n_needs; k++)
        need_add(pl, pl->needs[op->first_need + k].cls, pl->needs[op->first_need + k].pid, -1);
    for (uint32_t k = 0; k < op->n_prods; k++)
        made_set(pl, pl->needs[op->first_prod + k].cls, NONE);
    pl->count -= op->priv_count;
    pl->weight -= op->priv_weight;
    v->chosen = NONE;
}

/* A Transpose this run moves as a relabeling: ai.onnx, editable, a valid perm of a known rank. */
static bool movable_transpose(const plan *pl, const pc_node *n, int64_t *perm, size_t *rank)
{
    return tp_transpose_perm(n, perm, rank) && *rank <= PLAN_MAX_RANK && n->graph == pl->ctx->graph &&
           pc_pass_can_modify(pl->ctx->opts, n);
}

static pc_status oom(plan *pl, const char *what)
{
    return pc_error_set(pl->ctx->err, PC_ERR_NOMEM, "transpose plan: %s", what);
}

/* A constant a reader may take in any layout: what tp_transpose_input permutes (byte-sized elements). */
static bool value_free_const(const pc_value *v)
{
    const pc_tensor *t = pc_value_const(v);
    unsigned bits = t ? pc_dtype_bits(t->dtype) : 0;
    return t && t->dtype != PC_DTYPE_STRING && bits && bits % 8 == 0;
}

static uint32_t class_new(plan *pl, const pc_value *root, size_t rank)
{
    if (!grow(pl->perms.mem, (void **)&pl->classes, &pl->cap_classes, pl->n_classes + 1, sizeof *pl->classes))
        return NONE;
    uint32_t id = perm_identity_id(&pl->perms, rank);
    if (id == NONE) return NONE;
    cls *c = &pl->classes[pl->n_classes];
    memset(c, 0, sizeof *c);
    c->weight = (uint32_t)tp_value_cost_rank(root);
    c->constant = value_free_const(root);
    c->made_by = NONE;
    c->made = id;
    c->identity = id;
    c->rank = (uint32_t)rank;
    c->region = NONE;
    return pl->n_classes++;
}

/* The class and Q of v (roots get a class on first sight, of v's rank, else of rank `hint` when that is not
 * negative: what the handler or the Transpose reading it says); false when out of memory or no rank is known
 * (such a value is in no class: whoever reads it is pinned). Shapes may be missing (a model saved without
 * value_info): a Transpose's perm gives its ranks. */
static bool value_class(plan *pl, const pc_value *v, int32_t hint, uint32_t *ci, uint32_t *q)
{
    if (v->id >= pl->n_values) return false; /* made after the plan started: not modelled */
    if (pl->val_cls[v->id] != NONE) {
        *ci = pl->val_cls[v->id];
        *q = pl->val_q[v->id];
        return true;
    }
    int64_t perm[PC_MAX_RANK];
    size_t rank;
    const pc_node *p = v->producer;
    int32_t vr = pc_value_rank(v);
    if (p && movable_transpose(pl, p, perm, &rank)) {
        uint32_t pc_, pq;
        if (!value_class(pl, p->inputs[0], (int32_t)rank, &pc_, &pq)) return false;
        uint32_t tid = perm_id(&pl->perms, perm, rank);
        *ci = pc_;
        if (tid == NONE || (*q = perm_then(&pl->perms, pq, tid)) == NONE) return !(pl->oom = true);
    } else {
        if (vr < 0) vr = hint;
        if (vr < 0 || vr > PLAN_MAX_RANK) return false;
        if ((*ci = class_new(pl, v, (size_t)vr)) == NONE) return !(pl->oom = true);
        *q = pl->classes[*ci].identity;
    }
    pl->val_cls[v->id] = *ci;
    pl->val_q[v->id] = *q;
    return true;
}

static bool cand_has(const plan *pl, size_t r, uint32_t pid)
{
    for (uint32_t i = 0; i < pl->n_cand[r]; i++)
        if (pl->cand[r][i] == pid) return true;
    return false;
}

/* Adds pid and closes the rank's set under composition (capped); *added when it grew. */
static bool cand_add(plan *pl, size_t r, uint32_t pid, bool *added)
{
    if (cand_has(pl, r, pid)) return true;
    for (uint32_t work = pl->n_cand[r];;) {
        if (pl->n_cand[r] >= PLAN_GROUP_CAP) return true;
        uint32_t *arr = pc_mem_realloc(pl->perms.mem, pl->cand[r], (pl->n_cand[r] + 1) * sizeof *arr);
        if (!arr) return false;
        pl->cand[r] = arr;
        arr[pl->n_cand[r]++] = pid;
        *added = true;
        /* products of everything with everything, until nothing new (or the cap) */
        bool grew = false;
        for (; work < pl->n_cand[r] && !grew; work++)
            for (uint32_t j = 0; j <= work && !grew; j++) {
                uint32_t a = pl->cand[r][work], b = pl->cand[r][j];
                uint32_t ab = perm_then(&pl->perms, a, b), ba = perm_then(&pl->perms, b, a);
                if (ab == NONE || ba == NONE) return false;
                if (!cand_has(pl, r, ab)) {
                    pid = ab;
                    grew = true;
                } else if (!cand_has(pl, r, ba)) {
                    pid = ba;
                    grew = true;
                }
            }
        if (!grew) return true;
        work = 0;
    }
}

/* A node the plan left as it is although it could have moved (PC_MISS_COST: no layout lowers the cost) or
 * whose handler refused every candidate layout (PC_MISS_OTHER): a near miss of its handler's kind, and of the
 * per-axis remap for a per-axis Q/DQ. */
static void near_miss(plan *pl, const pc_node *n, const tp_handler *h, pc_miss_reason why)
{
    pc_pass_near_miss(pl->ctx->opts, tp_handler_kind(h), why);
    bool per_axis = false;
    if (tp_handler_kind(h) == PC_RW_TP_PUSH_QDQ && tp_qdq_kind(pl->ctx, n, &per_axis) && per_axis)
        pc_pass_near_miss(pl->ctx->opts, PC_RW_TP_QDQ_AXIS, why);
}

static bool has_subgraph(const pc_node *n)
{
    for (uint32_t a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].type == PC_ATTR_GRAPH || n->attrs[a].type == PC_ATTR_GRAPHS) return true;
    return false;
}

/* v's rank: its shape's, else its class's (a Transpose's output); -1 when neither is known. */
static int32_t value_rank(plan *pl, const pc_value *v)
{
    uint32_t ci, q;
    int32_t r = pc_value_rank(v);
    if (r >= 0 || !value_class(pl, v, -1, &ci, &q)) return r;
    return (int32_t)pl->classes[ci].rank;
}

/* The working rank of a node under h: its carrying inputs' largest (every one known); 0 when it cannot be a
 * variable. carry gets the carrying inputs. */
static uint32_t var_rank(plan *pl, const pc_node *n, const tp_handler *h, uint32_t *carry, uint32_t *n_carry)
{
    *n_carry = tp_handler_inputs(h, n, carry, n->n_inputs);
    int32_t rank = 0;
    for (uint32_t k = 0; k < *n_carry; k++) {
        int32_t r = value_rank(pl, n->inputs[carry[k]]);
        if (r < 0) return 0;
        if (r > rank) rank = r;
    }
    return rank < 2 || rank > PLAN_MAX_RANK || *n_carry == 0 ? 0 : (uint32_t)rank;
}

/* Asks the handler whether node runs in sigma; the report has its outputs' perm. */
static bool handler_accepts(plan *pl, pc_node *n, const tp_handler *h, const uint32_t *carry,
                            uint32_t n_carry, uint32_t sigma, tp_plan_report *rep)
{
    int64_t perm[PC_MAX_RANK], inv[PC_MAX_RANK];
    size_t r = perm_get(&pl->perms, sigma, perm);
    tp_perm_invert(perm, r, inv);
    tp_push push = {pl->ctx, n, perm, inv, r, n_carry, carry, rep};
    bool done = false;
    if (h->fn(&push, &done) != PC_OK) { /* planning edits nothing and allocates nothing: no failure */
        pc_error_clear(pl->ctx->err);
        return false;
    }
    return done;
}

/* Candidates from the Transposes' perms, then closed under the variables' rank changes. */
static pc_status candidates_build(plan *pl, uint32_t *carry)
{
    int64_t perm[PC_MAX_RANK];
    size_t rank;
    bool added = false;
    for (pc_node *n = pl->ctx->graph->first; n; n = n->next) {
        if (!movable_transpose(pl, n, perm, &rank)) continue;
        uint32_t id = perm_id(&pl->perms, perm, rank);
        if (id == NONE || !cand_add(pl, rank, id, &added)) return oom(pl, "candidate layouts");
    }
    for (int round = 0; round < PLAN_CLOSE_ROUNDS; round++) {
        added = false;
        for (pc_node *n = pl->ctx->graph->first; n; n = n->next) {
            const tp_handler *h = tp_handler_find(n, pl->ctx->opset);
            if (!h || has_subgraph(n) || !pc_pass_can_modify(pl->ctx->opts, n)) continue;
            uint32_t n_carry, r = var_rank(pl, n, h, carry, &n_carry);
            if (!r) continue;
            for (uint32_t i = 0; i < pl->n_cand[r]; i++) {
                tp_plan_report rep;
                if (!handler_accepts(pl, n, h, carry, n_carry, pl->cand[r][i], &rep) || !rep.has_out)
                    continue;
                if (rep.out_rank != r && rep.out_rank >= 2 && rep.out_rank <= PLAN_MAX_RANK) {
                    uint32_t id = perm_id(&pl->perms, rep.out_perm, rep.out_rank);
                    if (id == NONE || !cand_add(pl, rep.out_rank, id, &added))
                        return oom(pl, "candidate layouts");
                }
            }
            /* a rank-reducing op: the lift of each output candidate that keeps the dropped axes in place */
            bool removed[PC_MAX_RANK] = {false};
            int64_t ident[PC_MAX_RANK];
            for (uint32_t i = 0; i < r; i++)
                ident[i] = (int64_t)i;
            tp_push probe = {pl->ctx, n, ident, ident, r, n_carry, carry, NULL};
            if (!h->dropped_axes || !h->dropped_axes(&probe, removed)) continue;
            uint32_t out_r = 0, kept[PC_MAX_RANK];
            for (uint32_t i = 0; i < r; i++)
                if (!removed[i]) kept[out_r++] = i;
            if (out_r < 2) continue;
            for (uint32_t i = 0; i < pl->n_cand[out_r]; i++) {
                int64_t tau[PC_MAX_RANK], lift[PC_MAX_RANK];
                perm_get(&pl->perms, pl->cand[out_r][i], tau);
                for (uint32_t a = 0; a < r; a++)
                    lift[a] = (int64_t)a;
                for (uint32_t a = 0; a < out_r; a++)
                    lift[kept[a]] = (int64_t)kept[tau[a]];
                uint32_t id = perm_id(&pl->perms, lift, r);
                if (id == NONE || !cand_add(pl, r, id, &added)) return oom(pl, "candidate layouts");
            }
        }
        if (!added) break;
    }
    return PC_OK;
}

static bool need_push(plan *pl, uint32_t ci, uint32_t pid)
{
    if (!grow(pl->perms.mem, (void **)&pl->needs, &pl->cap_needs, pl->n_needs + 1, sizeof *pl->needs))
        return false;
    pl->needs[pl->n_needs++] = (need){ci, pid};
    return true;
}

/* A reader that reads v as it is: a fixed need (constants: only when it keeps reading by name). */
static bool fixed_read(plan *pl, const pc_value *v, bool by_name)
{
    uint32_t ci, q;
    if (!value_class(pl, v, -1, &ci, &q)) return !pl->oom;
    cls *c = &pl->classes[ci];
    if (c->constant && !by_name) return true;
    return slot_add(pl, c, q, 1); /* the totals are summed once the model is built */
}

/* The option of variable v for sigma: needs of its carrying inputs, what its outputs make. */
static bool option_build(plan *pl, var *v, const uint32_t *carry, uint32_t n_carry, uint32_t sigma,
                         const tp_plan_report *rep)
{
    if (!grow(pl->perms.mem, (void **)&pl->opts, &pl->cap_opts, pl->n_opts + 1, sizeof *pl->opts))
        return false;
    option *op = &pl->opts[pl->n_opts];
    memset(op, 0, sizeof *op);
    op->sigma = sigma;
    op->first_need = pl->n_needs;
    uint32_t inv = perm_inverse(&pl->perms, sigma);
    if (inv == NONE) return false;
    bool identity = sigma == perm_identity_id(&pl->perms, v->rank);
    for (uint32_t k = 0; k < n_carry; k++) {
        bool seen = false; /* an input read twice needs one layout */
        for (uint32_t j = 0; j < k; j++)
            seen = seen || v->node->inputs[carry[j]] == v->node->inputs[carry[k]];
        if (seen) continue;
        const pc_value *x = v->node->inputs[carry[k]];
        uint32_t ci, q;
        if (!value_class(pl, x, -1, &ci, &q)) return false;
        const cls *c = &pl->classes[ci];
        if ((uint32_t)value_rank(pl, x) == v->rank) {
            if (c->constant) continue;
            uint32_t need_pid = perm_then(&pl->perms, q, inv);
            if (need_pid == NONE || !need_push(pl, ci, need_pid)) return false;
        } else { /* a broadcast input of lower rank: read as it is, by an Unsqueeze when sigma moves it */
            if (c->constant) continue;
            if (!need_push(pl, ci, q)) return false;
            if (!identity) {
                op->priv_count++;
                op->priv_weight += (uint64_t)tp_value_cost_rank(x);
            }
        }
    }
    op->n_needs = pl->n_needs - op->first_need;
    op->first_prod = pl->n_needs;
    for (uint32_t k = 0; k < v->node->n_outputs; k++) {
        const pc_value *y = v->node->outputs[k];
        if (!y) continue;
        uint32_t ci, q;
        if (!value_class(pl, y, rep->has_out ? (int32_t)rep->out_rank : -1, &ci, &q)) {
            if (pl->oom) return false;
            continue; /* no rank known: in no class, its readers are pinned */
        }
        cls *c = &pl->classes[ci];
        uint32_t made = c->identity;
        if (rep->has_out && rep->out_rank == c->rank) {
            uint32_t lid = perm_id(&pl->perms, rep->out_perm, rep->out_rank);
            if (lid == NONE || (made = perm_inverse(&pl->perms, lid)) == NONE) return false;
        }
        c->made_by = (uint32_t)(v - pl->vars);
        if (!need_push(pl, ci, made)) return false;
    }
    op->n_prods = pl->n_needs - op->first_prod;
    pl->n_opts++;
    return true;
}

static pc_status model_build(plan *pl)
{
    pc_graph *g = pl->ctx->graph;
    pl->n_values = g->n_values;
    pl->val_cls = pc_mem_alloc(pl->perms.mem, (pl->n_values ? pl->n_values : 1) * sizeof *pl->val_cls);
    pl->val_q = pc_mem_alloc(pl->perms.mem, (pl->n_values ? pl->n_values : 1) * sizeof *pl->val_q);
    uint32_t max_in = 1;
    for (pc_node *n = g->first; n; n = n->next)
        if (n->n_inputs > max_in) max_in = n->n_inputs;
    uint32_t *carry = pc_mem_alloc(pl->perms.mem, max_in * sizeof *carry);
    if (!pl->val_cls || !pl->val_q || !carry) {
        pc_mem_free(pl->perms.mem, carry);
        return oom(pl, "value arrays");
    }
    memset(pl->val_cls, 0xff, (pl->n_values ? pl->n_values : 1) * sizeof *pl->val_cls);
    int64_t perm[PC_MAX_RANK];
    size_t rank;
    /* classes along Transpose chains in graph order, so value_class never recurses more than one level (a
     * chain of a million Transposes would otherwise be a million frames deep) */
    for (pc_node *n = g->first; n; n = n->next) {
        uint32_t ci, q;
        if (movable_transpose(pl, n, perm, &rank) && !value_class(pl, n->outputs[0], -1, &ci, &q) &&
            pl->oom) {
            pc_mem_free(pl->perms.mem, carry);
            return oom(pl, "value classes");
        }
    }
    pc_status st = candidates_build(pl, carry);
    for (pc_node *n = g->first; n && st == PC_OK; n = n->next) {
        if (movable_transpose(pl, n, perm, &rank)) continue; /* a relabeling */
        const tp_handler *h = tp_handler_find(n, pl->ctx->opset);
        uint32_t n_carry = 0, r = 0;
        if (h && !has_subgraph(n) && pc_pass_can_modify(pl->ctx->opts, n))
            r = var_rank(pl, n, h, carry, &n_carry);
        uint32_t id = r ? perm_identity_id(&pl->perms, r) : NONE;
        /* options: the identity, then every candidate the handler accepts */
        if (r && pl->n_cand[r]) {
            if (!grow(pl->perms.mem, (void **)&pl->vars, &pl->cap_vars, pl->n_vars + 1, sizeof *pl->vars))
                goto nomem;
            var *v = &pl->vars[pl->n_vars];
            *v = (var){.node = n, .h = h, .rank = r, .first_opt = pl->n_opts, .chosen = NONE};
            /* the identity's outputs have the ranks the handler reports for any layout it accepts: the first
             * accepted one's report serves both, and the handler is asked once per candidate */
            tp_plan_report rep, ident;
            uint32_t first = 0;
            while (first < pl->n_cand[r] &&
                   (pl->cand[r][first] == id ||
                    !handler_accepts(pl, n, h, carry, n_carry, pl->cand[r][first], &rep)))
                first++;
            if (first < pl->n_cand[r]) {
                ident = rep;
                for (size_t i = 0; i < ident.out_rank; i++)
                    ident.out_perm[i] = (int64_t)i;
                if (id == NONE || !option_build(pl, v, carry, n_carry, id, &ident) ||
                    !option_build(pl, v, carry, n_carry, pl->cand[r][first], &rep))
                    goto nomem;
            }
            for (uint32_t i = first + 1; i < pl->n_cand[r]; i++) {
                if (pl->cand[r][i] == id || !handler_accepts(pl, n, h, carry, n_carry, pl->cand[r][i], &rep))
                    continue;
                if (!option_build(pl, v, carry, n_carry, pl->cand[r][i], &rep)) goto nomem;
            }
            v->n_opts = pl->n_opts - v->first_opt;
            if (v->n_opts > 1) {
                /* inputs it does not carry are read as they are */
                for (uint32_t i = 0; i < n->n_inputs; i++) {
                    bool carried = false;
                    for (uint32_t k = 0; k < n_carry; k++)
                        carried = carried || carry[k] == i;
                    if (!carried && n->inputs[i] && !fixed_read(pl, n->inputs[i], false)) goto nomem;
                }
                pl->n_vars++;
                continue;
            }
            /* no layout but the identity: pinned after all (its outputs' classes are made as they are) */
            if (pl->n_cand[r] > 1 || pl->cand[r][0] != id) near_miss(pl, n, h, PC_MISS_OTHER);
            pl->n_opts = v->first_opt;
            for (uint32_t k = 0; k < n->n_outputs; k++) {
                uint32_t ci, q;
                if (n->outputs[k] && value_class(pl, n->outputs[k], -1, &ci, &q)) {
                    pl->classes[ci].made_by = NONE;
                    pl->classes[ci].made = pl->classes[ci].identity;
                }
            }
        }
        for (uint32_t i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] && !fixed_read(pl, n->inputs[i], false)) goto nomem;
    }
    /* graph outputs and values subgraphs read keep their name and content */
    for (uint32_t i = 0; i < g->n_outputs && st == PC_OK; i++)
        if (g->outputs[i] && !fixed_read(pl, g->outputs[i], true)) goto nomem;
    for (uint32_t i = 0; i < g->n_values && st == PC_OK; i++) {
        const pc_value *v = g->values[i];
        if (v && v->n_subgraph_refs && !fixed_read(pl, v, true)) goto nomem;
    }
    pc_mem_free(pl->perms.mem, carry);
    return st;
nomem:
    pc_mem_free(pl->perms.mem, carry);
    return oom(pl, "the layout model");
}

/* ---- solve -------------------------------------------------------------------------------------------- */

typedef struct best {
    uint64_t count, weight, limit; /* limit: the weight the region starts at */
    uint32_t *choice;              /* per region variable */
    bool exhausted;
} best;

static bool better(const plan *pl, const best *b)
{
    return pl->weight <= b->limit &&
           (pl->count < b->count || (pl->count == b->count && pl->weight < b->weight));
}

static void best_take(const plan *pl, best *b, const uint32_t *vs, uint32_t n)
{
    b->count = pl->count;
    b->weight = pl->weight;
    for (uint32_t k = 0; k < n; k++)
        b->choice[k] = pl->vars[vs[k]].chosen;
}

/* Depth-first over the region's variables (at most PLAN_BB_MAX_VARS deep). */
static void branch_and_bound(plan *pl, const uint32_t *vs, uint32_t n, uint32_t k, best *b, uint64_t budget)
{
    if (pl->oom || b->exhausted) return;
    if (++pl->steps > budget) {
        b->exhausted = true;
        return;
    }
    /* the bound: no class's cost falls as more is decided, but for the one its maker takes off */
    if (!better(pl, b)) return;
    if (k == n) {
        best_take(pl, b, vs, n);
        return;
    }
    var *v = &pl->vars[vs[k]];
    for (uint32_t o = 0; o < v->n_opts && !b->exhausted; o++) {
        option_apply(pl, v, o);
        branch_and_bound(pl, vs, n, k + 1, b, budget);
        option_undo(pl, v);
    }
}

/* From b's assignment, one variable at a time to any option that strictly lowers the cost. */
static void descend(plan *pl, const uint32_t *vs, uint32_t n, best *b)
{
    for (uint32_t k = 0; k < n; k++)
        option_apply(pl, &pl->vars[vs[k]], b->choice[k]);
    for (int round = 0; round < PLAN_DESCENT_ROUNDS; round++) {
        bool moved = false;
        for (uint32_t k = 0; k < n; k++) {
            var *v = &pl->vars[vs[k]];
            for (uint32_t o = 0; o < v->n_opts; o++) {
                uint32_t was = v->chosen;
                if (o == was) continue;
                option_undo(pl, v);
                option_apply(pl, v, o);
                if (better(pl, b)) { /* only variable k changed: the rest of b's assignment stands */
                    b->count = pl->count;
                    b->weight = pl->weight;
                    b->choice[k] = o;
                    moved = true;
                } else {
                    option_undo(pl, v);
                    option_apply(pl, v, was);
                }
            }
        }
        if (!moved) break;
    }
    for (uint32_t k = n; k-- > 0;)
        option_undo(pl, &pl->vars[vs[k]]);
}

static uint32_t uf_find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

enum { PLAN_BB_MAX_VARS = 256 };

/* Solves every region; each variable ends with its chosen option (decided). */
static pc_status solve(plan *pl, uint32_t *n_regions, uint32_t *n_proven)
{
    *n_regions = *n_proven = 0;
    uint32_t nv = pl->n_vars;
    pc_mem *mem = pl->perms.mem;
    uint32_t *parent = pc_mem_alloc(mem, (nv ? nv : 1) * sizeof *parent);
    uint32_t *order = pc_mem_alloc(mem, (nv ? nv : 1) * sizeof *order);
    uint32_t *start = pc_mem_calloc(mem, (size_t)nv + 1, sizeof *start);
    uint32_t *choice = pc_mem_alloc(mem, (nv ? nv : 1) * sizeof *choice);
    pc_status st = PC_OK;
    if (!parent || !order || !start || !choice) {
        st = oom(pl, "regions");
        goto out;
    }
    for (uint32_t i = 0; i < nv; i++)
        parent[i] = i;
    for (uint32_t i = 0; i < nv; i++) {
        const var *v = &pl->vars[i];
        for (uint32_t o = 0; o < v->n_opts; o++) {
            const option *op = &pl->opts[v->first_opt + o];
            for (uint32_t k = 0; k < op->n_needs + op->n_prods; k++) {
                cls *c = &pl->classes[pl->needs[op->first_need + k].cls];
                if (c->region == NONE)
                    c->region = i;
                else
                    parent[uf_find(parent, i)] = uf_find(parent, c->region);
            }
        }
    }
    /* variables grouped by region, each region in graph (topological) order: a counting sort by root */
    for (uint32_t i = 0; i < nv; i++)
        start[uf_find(parent, i) + 1]++;
    for (uint32_t i = 0; i < nv; i++)
        start[i + 1] += start[i];
    for (uint32_t i = 0; i < nv; i++)
        order[start[uf_find(parent, i)]++] = i;
    for (uint32_t i = nv; i > 0; i--)
        start[i] = start[i - 1];
    start[0] = 0;
    for (uint32_t root = 0; root < nv && st == PC_OK; root++) {
        uint32_t n = start[root + 1] - start[root];
        if (!n) continue;
        const uint32_t *vs = order + start[root];
        (*n_regions)++;
        best b = {.choice = choice};
        for (uint32_t k = 0; k < n; k++)
            option_apply(pl, &pl->vars[vs[k]], 0);
        b.count = pl->count;
        b.weight = b.limit = pl->weight;
        for (uint32_t k = n; k-- > 0;) {
            option_undo(pl, &pl->vars[vs[k]]);
            choice[k] = 0;
        }
        descend(pl, vs, n, &b);
        if (n <= PLAN_BB_MAX_VARS) {
            pl->steps = 0;
            branch_and_bound(pl, vs, n, 0, &b, PLAN_REGION_STEPS);
            if (!b.exhausted) (*n_proven)++;
        }
        if (pl->oom) st = oom(pl, "the search");
        for (uint32_t k = 0; k < n; k++)
            option_apply(pl, &pl->vars[vs[k]], choice[k]);
    }
out:
    pc_mem_free(mem, parent);
    pc_mem_free(mem, order);
    pc_mem_free(mem, start);
    pc_mem_free(mem, choice);
    return st;
}

/* ---- apply -------------------------------------------------------------------------------------------- */

/* Runs each variable's handler for its chosen layout, in graph order: the Transposes a push puts on the
 * inputs compose with (and cancel) those its producers' pushes put on their outputs. */
static pc_status apply(plan *pl, uint32_t *n_applied)
{
    *n_applied = 0;
    uint32_t max_in = 1;
    for (uint32_t i = 0; i < pl->n_vars; i++)
        if (pl->vars[i].node->n_inputs > max_in) max_in = pl->vars[i].node->n_inputs;
    uint32_t *carry = pc_mem_alloc(pl->perms.mem, max_in * sizeof *carry);
    if (!carry) return oom(pl, "apply");
    pc_status st = PC_OK;
    for (uint32_t i = 0; i < pl->n_vars && st == PC_OK; i++) {
        var *v = &pl->vars[i];
        if (!v->chosen) near_miss(pl, v->node, v->h, PC_MISS_COST);
        if (!v->chosen || v->node->removed) continue;
        int64_t perm[PC_MAX_RANK], inv[PC_MAX_RANK];
        size_t r = perm_get(&pl->perms, pl->opts[v->first_opt + v->chosen].sigma, perm);
        tp_perm_invert(perm, r, inv);
        uint32_t n_carry = tp_handler_inputs(v->h, v->node, carry, max_in);
        tp_push push = {pl->ctx, v->node, perm, inv, r, n_carry, carry, NULL};
        const char *name = v->node->name, *op = v->node->op_type;
        bool done = false;
        if ((st = v->h->fn(&push, &done)) != PC_OK) break;
        if (!done) { /* the same checks accepted this layout when asked to plan: the model and the rewrite
                        disagree (the graph is intact, but the plan's count no longer holds) */
            st = pc_error_set(pl->ctx->err, PC_ERR_INTERNAL,
                              "transpose plan: the %s handler refused node '%s' at apply after accepting its "
                              "layout when planning",
                              op, name ? name : "");
            break;
        }
        (*n_applied)++;
        pc_pass_explain(pl->ctx->opts, "plan: %s '%s' runs in a permuted layout", op, name);
        pc_pass_note(pl->ctx->opts, tp_handler_kind(v->h));
    }
    pc_mem_free(pl->perms.mem, carry);
    return st;
}

static void plan_free(plan *pl)
{
    pc_mem *mem = pl->perms.mem;
    pc_mem_free(mem, pl->perms.keys);
    pc_mem_free(mem, pl->perms.slots);
    pc_mem_free(mem, pl->val_cls);
    pc_mem_free(mem, pl->val_q);
    for (uint32_t i = 0; i < pl->n_classes; i++)
        pc_mem_free(mem, pl->classes[i].slots);
    pc_mem_free(mem, pl->classes);
    pc_mem_free(mem, pl->vars);
    pc_mem_free(mem, pl->opts);
    pc_mem_free(mem, pl->needs);
    for (size_t r = 0; r <= PLAN_MAX_RANK; r++)
        pc_mem_free(mem, pl->cand[r]);
}

pc_status tp_plan_run(tp_ctx *ctx, bool *changed)
{
    *changed = false;
    plan pl = {.ctx = ctx, .perms = {.mem = &ctx->graph->model->mem}};
    pc_status st = model_build(&pl);
    if (st == PC_OK) {
        /* the variables start undecided; the totals are the bound of that state */
        for (uint32_t i = 0; i < pl.n_classes; i++)
            if (pl.classes[i].made_by != NONE) pl.classes[i].made = NONE;
        for (uint32_t i = 0; i < pl.n_classes; i++)
            cost_add(&pl, &pl.classes[i]);
        uint32_t n_regions, n_proven, n_applied = 0;
        st = solve(&pl, &n_regions, &n_proven);
        if (st == PC_OK) st = apply(&pl, &n_applied);
        if (st == PC_OK && n_applied)
            pc_pass_explain(ctx->opts,
                            "plan: %u variables in %u regions (%u solved exactly), %u Transposes predicted "
                            "(rank metric %llu), %u nodes moved",
                            pl.n_vars, n_regions, n_proven, (unsigned)pl.count, (unsigned long long)pl.weight,
                            n_applied);
        *changed = n_applied > 0;
    }
    plan_free(&pl);
    return st;
}
