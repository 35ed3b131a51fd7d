/* Shape inference for the control-flow ops If, Loop and Scan, from the types their bodies give their outputs
 * (ONNX 1.12 operator definitions): an output takes what every way of computing it agrees on — the element
 * type, the rank, and each dim both sides give the same size or symbol; anything else is left unknown. The
 * bodies' own values are not re-inferred here: their declared (or earlier inferred) output types are read. */
#include <string.h>

#include "core/shape/shape_internal.h"

/* The type of body output k, or NULL when the body has no such output or gives it no tensor type. */
static const pc_type *body_out(const pc_graph *g, uint32_t k)
{
    if (!g || k >= g->n_outputs || !g->outputs[k]) return NULL;
    const pc_type *t = &g->outputs[k]->type;
    return t->kind == PC_TYPE_TENSOR ? t : NULL;
}

static const pc_graph *body_attr(const sh_ctx *c, const char *name)
{
    const pc_attr *a = pc_node_attr(c->node, name);
    return a && a->type == PC_ATTR_GRAPH ? a->g : NULL;
}

static void shape_of(const pc_type *t, sh_shape *s)
{
    s->rank = t && t->shape.rank >= 0 && t->shape.rank <= PC_MAX_RANK ? t->shape.rank : -1;
    for (int32_t d = 0; d < s->rank; d++) {
        s->dims[d] = t->shape.dims[d];
        s->dims[d].denotation = NULL;
    }
}

static bool same_dim(const pc_dim *a, const pc_dim *b)
{
    if (a->kind != b->kind) return false;
    if (a->kind == PC_DIM_KNOWN) return a->size == b->size;
    return a->kind == PC_DIM_SYMBOLIC && a->symbol && b->symbol && strcmp(a->symbol, b->symbol) == 0;
}

/* a := what a and b agree on (ranks differ or either unknown: rank unknown) */
static void shape_meet(sh_shape *a, const sh_shape *b)
{
    if (a->rank < 0 || b->rank != a->rank) {
        a->rank = -1;
        return;
    }
    for (int32_t d = 0; d < a->rank; d++)
        if (!same_dim(&a->dims[d], &b->dims[d])) sh_dim_unknown(&a->dims[d]);
}

/* Output i from two candidate types (either may be NULL: then the other alone decides). */
static pc_status set_meet(sh_ctx *c, uint32_t i, const pc_type *a, const pc_type *b, const char *what)
{
    if (!a && !b) return PC_OK;
    pc_dtype ea = a ? a->elem : PC_DTYPE_UNDEFINED, eb = b ? b->elem : PC_DTYPE_UNDEFINED;
    if (ea != PC_DTYPE_UNDEFINED && eb != PC_DTYPE_UNDEFINED && ea != eb)
        return sh_fail(c, "output %u: %s give element types %s and %s", i, what, pc_dtype_name(ea),
                       pc_dtype_name(eb));
    sh_shape s;
    shape_of(a ? a : b, &s);
    if (a && b) {
        sh_shape t;
        shape_of(b, &t);
        shape_meet(&s, &t);
    }
    sh_set_out(c, i, ea != PC_DTYPE_UNDEFINED ? ea : eb, &s);
    return PC_OK;
}

static const pc_type *input_type(const sh_ctx *c, uint32_t i)
{
    const pc_value *v = i < c->node->n_inputs ? c->node->inputs[i] : NULL;
    return v && v->type.kind == PC_TYPE_TENSOR ? &v->type : NULL;
}

pc_status sh_infer_if(sh_ctx *c)
{
    const pc_graph *then_g = body_attr(c, "then_branch"), *else_g = body_attr(c, "else_branch");
    if (!then_g || !else_g) return sh_fail(c, "needs graph attributes then_branch and else_branch");
    for (uint32_t i = 0; i < c->n_out; i++) {
        /* both branches must give the output: one without a type leaves it unknown */
        const pc_type *a = body_out(then_g, i), *b = body_out(else_g, i);
        if (!a || !b) continue;
        pc_status st = set_meet(c, i, a, b, "the branches");
        if (st != PC_OK) return st;
    }
    return PC_OK;
}

/* The one-element tensor a value always holds (sh_value_tensor), through a body's references to outer names.
 */
static const pc_tensor *const_scalar(const pc_value *v)
{
    while (v && v->outer)
        v = v->outer;
    const pc_tensor *t = sh_value_tensor(v);
    return t && t->n_elements == 1 && t->data ? t : NULL;
}

static bool const_int(const pc_value *v, int64_t *out)
{
    const pc_tensor *t = const_scalar(v);
    return t && sh_tensor_int(t, 0, out);
}

static bool always_true(const pc_value *v)
{
    const pc_tensor *t = const_scalar(v);
    return t && t->dtype == PC_DTYPE_BOOL && ((const uint8_t *)t->data)[0];
}

static bool is_op(const pc_node *n, const char *op)
{
    return n && !n->domain[0] && strcmp(n->op_type, op) == 0;
}

/* How many iterations the loop runs when that is fixed: the initial condition is absent or always true, and
 * the body's condition output is its condition input passed on (directly or through Identity: the trip count
 * M alone decides) or Less(iteration number, K) for a constant K (iteration i runs when i - 1 < K: K + 1 of
 * them, at least 1), in both cases capped by a constant M when given. */
static bool loop_trip_count(const sh_ctx *c, const pc_graph *body, int64_t *trips)
{
    if (sh_has_input(c, 1) && !always_true(c->node->inputs[1])) return false;
    if (body->n_inputs < 2 || body->n_outputs < 1 || !body->outputs[0]) return false;
    int64_t m = -1, k;
    if (sh_has_input(c, 0) && (!const_int(c->node->inputs[0], &m) || m < 0)) return false;
    const pc_value *out = body->outputs[0], *iter = body->inputs[0], *cond_in = body->inputs[1];
    const pc_node *p = out->producer;
    if (out == cond_in || (is_op(p, "Identity") && p->n_inputs == 1 && p->inputs[0] == cond_in)) {
        if (m < 0) return false; /* no limit at all */
        *trips = m;
        return true;
    }
    if (is_op(p, "Less") && p->n_inputs == 2 && p->inputs[0] == iter && const_int(p->inputs[1], &k)) {
        if (k == INT64_MAX) return false;
        int64_t n = k < 0 ? 1 : k + 1;
        *trips = m >= 0 && m < n ? m : n;
        return true;
    }
    return false;
}

pc_status sh_infer_loop(sh_ctx *c)
{
    const pc_graph *body = body_attr(c, "body");
    if (!body) return sh_fail(c, "needs the graph attribute body");
    /* inputs M, cond, v_initial[N]; body (iter, cond, v[N]) -> (cond, v[N], scan[K]); outputs v_final[N],
     * scan[K] each stacked along a new first axis */
    uint32_t n_carried = c->node->n_inputs >= 2 ? c->node->n_inputs - 2 : 0;
    for (uint32_t i = 0; i < n_carried && i < c->n_out; i++) {
        pc_status st =
            set_meet(c, i, input_type(c, 2 + i), body_out(body, 1 + i), "the initial value and the body");
        if (st != PC_OK) return st;
    }
    int64_t trips = 0;
    bool known = loop_trip_count(c, body, &trips);
    for (uint32_t k = n_carried; k < c->n_out; k++) {
        const pc_type *t = body_out(body, 1 + k);
        if (!t) continue;
        sh_shape s;
        shape_of(t, &s);
        if (s.rank >= 0 && s.rank < PC_MAX_RANK) {
            memmove(&s.dims[1], &s.dims[0], (size_t)s.rank * sizeof s.dims[0]);
            s.rank++;
            if (known)
                sh_dim_known(&s.dims[0], trips);
            else
                sh_dim_unknown(&s.dims[0]);
        } else {
            s.rank = -1;
        }
        sh_set_out(c, k, t->elem, &s);
    }
    return PC_OK;
}

pc_status sh_infer_scan(sh_ctx *c)
{
    if (c->opset < 9) return PC_OK; /* Scan-8 has a batch axis and sequence_lens: not inferred */
    const pc_graph *body = body_attr(c, "body");
    if (!body) return sh_fail(c, "needs the graph attribute body");
    int64_t n_scan_in = sh_attr_int(c, "num_scan_inputs", -1);
    if (n_scan_in < 1 || n_scan_in > (int64_t)c->node->n_inputs)
        return sh_fail(c, "num_scan_inputs %lld does not fit its %u inputs", (long long)n_scan_in,
                       c->node->n_inputs);
    uint32_t n_state = c->node->n_inputs - (uint32_t)n_scan_in;
    for (uint32_t i = 0; i < n_state && i < c->n_out; i++) {
        pc_status st = set_meet(c, i, input_type(c, i), body_out(body, i), "the initial state and the body");
        if (st != PC_OK) return st;
    }
    /* the scan length: the first scan input's dim along its scan axis */
    pc_dim len;
    sh_dim_unknown(&len);
    sh_shape x;
    size_t n_in_axes = 0, n_out_axes = 0;
    const int64_t *in_axes = sh_attr_ints(c, "scan_input_axes", &n_in_axes);
    const int64_t *out_axes = sh_attr_ints(c, "scan_output_axes", &n_out_axes);
    if (sh_in_shape(c, n_state, &x) && x.rank > 0) {
        int32_t ax;
        pc_status st = sh_axis(c, in_axes && n_in_axes ? in_axes[0] : 0, x.rank, "scan_input_axes", &ax);
        if (st != PC_OK) return st;
        len = x.dims[ax];
        len.denotation = NULL;
    }
    for (uint32_t k = n_state; k < c->n_out; k++) {
        const pc_type *t = body_out(body, k);
        if (!t) continue;
        sh_shape s;
        shape_of(t, &s);
        if (s.rank < 0 || s.rank >= PC_MAX_RANK) {
            sh_set_out(c, k, t->elem, NULL);
            continue;
        }
        uint32_t j = k - n_state;
        int32_t ax;
        pc_status st =
            sh_axis(c, out_axes && j < n_out_axes ? out_axes[j] : 0, s.rank + 1, "scan_output_axes", &ax);
        if (st != PC_OK) return st;
        memmove(&s.dims[ax + 1], &s.dims[ax], (size_t)(s.rank - ax) * sizeof s.dims[0]);
        s.dims[ax] = len;
        s.rank++;
        sh_set_out(c, k, t->elem, &s);
    }
    return PC_OK;
}
