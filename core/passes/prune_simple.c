/* prune_simple (level 0, ngraph's SimplePrune limited to rewrites that are exact under IEEE 754):
 *   x*1, 1*x, x/1                     any numeric type;
 *   x-(+0)                            floats: +0 only (x-(-0) turns -0 into +0); integers: 0;
 *   x+(-0), (-0)+x                    floats: -0 only (x+(+0) turns -0 into +0, so it is NOT done);
 *   x+0, 0+x                          integers only;
 *   Neg(Neg(x))                       (integers wrap identically).
 * The constant must hold only that value, its broadcast must not change x's shape (x's rank known, every
 * constant dim 1 or equal to x's known dim) and the output's element type must be x's. Never x*0 (NaN, inf)
 * and never log(exp(x)) (overflow). */
#include "core/passes/pass_match.h"

typedef enum neutral {
    NEUTRAL_ONE,      /* 1 */
    NEUTRAL_ZERO,     /* integer 0 or float +0 */
    NEUTRAL_NEG_ZERO, /* float -0 (integers: 0) */
} neutral;

/* Whether element i equals the neutral value, compared by bits for floats so +0 and -0 differ. */
static bool elem_is(const pc_tensor *t, uint64_t i, neutral want)
{
    const uint8_t *p = (const uint8_t *)t->data;
    switch (t->dtype) {
    case PC_DTYPE_FLOAT: {
        uint32_t b;
        memcpy(&b, p + i * 4, 4);
        return b == (want == NEUTRAL_ONE ? 0x3f800000u : want == NEUTRAL_ZERO ? 0u : 0x80000000u);
    }
    case PC_DTYPE_DOUBLE: {
        uint64_t b;
        memcpy(&b, p + i * 8, 8);
        return b == (want == NEUTRAL_ONE ? 0x3ff0000000000000ull : want == NEUTRAL_ZERO ? 0ull : 1ull << 63);
    }
    case PC_DTYPE_FLOAT16:
    case PC_DTYPE_BFLOAT16: {
        uint16_t b;
        memcpy(&b, p + i * 2, 2);
        uint16_t one = t->dtype == PC_DTYPE_FLOAT16 ? 0x3c00u : 0x3f80u;
        return b == (want == NEUTRAL_ONE ? one : want == NEUTRAL_ZERO ? 0u : 0x8000u);
    }
    default:
        break;
    }
    int64_t v;
    switch (t->dtype) {
    case PC_DTYPE_INT8:
        v = (int8_t)p[i];
        break;
    case PC_DTYPE_UINT8:
        v = p[i];
        break;
    case PC_DTYPE_INT16: {
        int16_t x;
        memcpy(&x, p + i * 2, 2);
        v = x;
        break;
    }
    case PC_DTYPE_UINT16: {
        uint16_t x;
        memcpy(&x, p + i * 2, 2);
        v = x;
        break;
    }
    case PC_DTYPE_INT32: {
        int32_t x;
        memcpy(&x, p + i * 4, 4);
        v = x;
        break;
    }
    case PC_DTYPE_UINT32: {
        uint32_t x;
        memcpy(&x, p + i * 4, 4);
        v = x;
        break;
    }
    case PC_DTYPE_INT64:
    case PC_DTYPE_UINT64:
        memcpy(&v, p + i * 8, 8);
        break;
    default:
        return false; /* bool, strings, sub-byte and 8-bit floats: not handled */
    }
    return v == (want == NEUTRAL_ONE ? 1 : 0);
}

static bool tensor_all(const pc_tensor *t, neutral want)
{
    if (!t || t->n_elements == 0) return false;
    for (uint64_t i = 0; i < t->n_elements; i++)
        if (!elem_is(t, i, want)) return false;
    return true;
}

/* Broadcasting c against x leaves x's shape unchanged. */
static bool broadcast_keeps_shape(const pc_value *x, const pc_tensor *c)
{
    int32_t rx = pc_value_rank(x);
    if (rx < 0 || c->rank > rx) return false;
    for (int32_t k = 1; k <= c->rank; k++) {
        int64_t cd = c->dims[c->rank - k];
        if (cd == 1) continue;
        int32_t ax = rx - k;
        int64_t xd = x->initializer                                ? x->initializer->dims[ax]
                     : x->type.shape.dims[ax].kind == PC_DIM_KNOWN ? x->type.shape.dims[ax].size
                                                                   : -1;
        if (xd != cd) return false;
    }
    return true;
}

/* One rule: op, which operand is the constant (0 or 1), the neutral value, whether it applies to floats and
 * to integers. */
typedef struct prune_rule {
    const char *op;
    uint32_t const_index;
    neutral value;
    bool floats, ints;
    const char *what;
} prune_rule;

static const prune_rule rules[] = {
    {"Mul", 1, NEUTRAL_ONE, true, true, "x*1"},          {"Mul", 0, NEUTRAL_ONE, true, true, "1*x"},
    {"Div", 1, NEUTRAL_ONE, true, true, "x/1"},          {"Sub", 1, NEUTRAL_ZERO, true, true, "x-0"},
    {"Add", 1, NEUTRAL_NEG_ZERO, true, false, "x+(-0)"}, {"Add", 0, NEUTRAL_NEG_ZERO, true, false, "(-0)+x"},
    {"Add", 1, NEUTRAL_ZERO, false, true, "x+0"},        {"Add", 0, NEUTRAL_ZERO, false, true, "0+x"},
};

static pc_rewrite_kind rule_kind(const prune_rule *rule)
{
    return rule->value == NEUTRAL_ONE ? PC_RW_PRUNE_MUL_DIV_ONE : PC_RW_PRUNE_ADD_SUB_ZERO;
}

/* The rule that removes n, or NULL; then *near is the rule whose neutral constant is there but one condition
 * refused (*why), or NULL. */
static const prune_rule *match_binary(const pc_node *n, const prune_rule **near, pc_miss_reason *why)
{
    *near = NULL;
    if (n->n_inputs != 2 || n->n_outputs != 1 || !n->inputs[0] || !n->inputs[1] || !n->outputs[0])
        return NULL;
    for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
        const prune_rule *rule = &rules[r];
        if (!pm_is_op(n, rule->op)) continue;
        const pc_value *x = n->inputs[1 - rule->const_index];
        const pc_tensor *c = pc_value_const(n->inputs[rule->const_index]);
        pc_dtype dt = pm_elem(x);
        bool is_float = pm_dtype_is_float(dt);
        if (!c || c->dtype != dt || dt == PC_DTYPE_UNDEFINED) continue;
        if (!(is_float ? rule->floats : rule->ints)) {
            /* x + (+0) on floats: not done (-0 + +0 is +0) */
            if (is_float && rule->value == NEUTRAL_ZERO && !*near && tensor_all(c, NEUTRAL_ZERO)) {
                *near = rule;
                *why = PC_MISS_NOT_CONSTANT;
            }
            continue;
        }
        if (!tensor_all(c, rule->value)) continue;
        pc_dtype out = pm_elem(n->outputs[0]);
        if ((out != PC_DTYPE_UNDEFINED && out != dt) || !broadcast_keeps_shape(x, c)) {
            *near = rule;
            *why = PC_MISS_TYPE;
            continue;
        }
        return rule;
    }
    return NULL;
}

pc_status pc_pass_prune_simple(pc_graph *graph, const pc_pass_options *opts, bool *changed, pc_error *err)
{
    *changed = false;
    bool added = false;
    pm_nodes nodes;
    pc_status st = pm_nodes_snapshot(graph, &nodes, err);
    for (uint32_t i = 0; st == PC_OK && i < nodes.n; i++) {
        pc_node *n = nodes.items[i];
        if (n->removed || !pc_pass_can_modify(opts, n)) continue;
        const char *label = pm_label(n);
        const prune_rule *near;
        pc_miss_reason why = PC_MISS_OTHER;
        const prune_rule *rule = match_binary(n, &near, &why);
        if (!rule && near) pc_pass_near_miss(opts, rule_kind(near), why);
        if (rule) {
            pc_value *c = n->inputs[rule->const_index];
            bool done = false;
            st = pm_replace_output_for(graph, opts, n, 0, n->inputs[1 - rule->const_index], &added, &done,
                                       err);
            if (st == PC_OK && done) st = pm_drop_unused_const(graph, c, err);
            if (done) {
                pc_pass_explain(opts, "removed %s '%s' (%s)", rule->op, label, rule->what);
                pc_pass_note(opts, rule_kind(rule));
                *changed = true;
            } else if (st == PC_OK) {
                pc_pass_near_miss(opts, rule_kind(rule), PC_MISS_SHARED);
            }
            continue;
        }
        /* Neg(Neg(x)): the outer Neg's uses read x; the inner one goes when nothing else reads it. Planted
         * bug
         * (--inject neg-neg-skipped): the rule is skipped; the rewrite-fired property catches it */
        if (pc_fault_active(PC_FAULT_NEG_NEG_SKIPPED)) continue;
        if (!pm_is_op(n, "Neg") || n->n_inputs != 1 || n->n_outputs != 1 || !n->inputs[0] || !n->outputs[0])
            continue;
        pc_node *inner = n->inputs[0]->producer;
        if (!inner || inner->graph != graph || !pm_is_op(inner, "Neg") || !inner->inputs[0]) continue;
        if (!pc_pass_can_modify(opts, inner) || !pc_nodes_fusable(inner, n)) {
            pc_pass_near_miss(opts, PC_RW_PRUNE_NEG_NEG, PC_MISS_ANNOTATION);
            continue;
        }
        const char *inner_label = pm_label(inner);
        bool done = false;
        st = pm_replace_output_for(graph, opts, n, 0, inner->inputs[0], &added, &done, err);
        if (!done) {
            if (st == PC_OK) pc_pass_near_miss(opts, PC_RW_PRUNE_NEG_NEG, PC_MISS_SHARED);
            continue;
        }
        pc_pass_explain(opts, "removed Neg '%s' of Neg '%s' (-(-x))", label, inner_label);
        pc_pass_note(opts, PC_RW_PRUNE_NEG_NEG);
        *changed = true;
    }
    pm_nodes_free(&nodes);
    if (st == PC_OK && added) st = pc_graph_sort(graph, err);
    return st;
}
