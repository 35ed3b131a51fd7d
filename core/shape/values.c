/* Shape-value propagation during a graph walk: small int vectors computed from shapes (Shape, Size) and
 * carried through the shape arithmetic exporters emit (Gather, Concat, Unsqueeze, Squeeze, Slice, Cast,
 * Identity, Add/Sub/Mul/Div, Neg, ReduceProd/ReduceSum), so `Shape -> Gather -> Concat -> Reshape` gets
 * concrete dims. Values live only for one pc_graph_infer_shapes call; an inference function reads them
 * through sh_const_ints. */
#include <stdlib.h>
#include <string.h>

#include "core/base/strmap.h"
#include "core/shape/shape_internal.h"

struct sh_values {
    uint32_t n;
    sh_ints **by_id; /* indexed by value id; NULL: not known */
};

sh_values *sh_values_create(const pc_graph *graph)
{
    sh_values *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->n = graph->n_values;
    t->by_id = calloc(t->n ? t->n : 1, sizeof *t->by_id);
    if (!t->by_id) {
        free(t);
        return NULL;
    }
    return t;
}

void sh_values_free(sh_values *t)
{
    if (!t) return;
    for (uint32_t i = 0; i < t->n; i++)
        free(t->by_id[i]);
    free(t->by_id);
    free(t);
}

const sh_ints *sh_values_get(const sh_values *t, const pc_value *v)
{
    return t && v && v->id < t->n ? t->by_id[v->id] : NULL;
}

static bool values_set(sh_values *t, const pc_value *v, const sh_ints *x)
{
    if (!v || v->id >= t->n || t->by_id[v->id]) return true;
    sh_ints *c = malloc(sizeof *c);
    if (!c) return false;
    *c = *x;
    t->by_id[v->id] = c;
    return true;
}

/* Input i as an int vector: a propagated value or an int constant (its rank from the tensor or the type). */
static bool input_ints(const sh_ctx *c, uint32_t i, sh_ints *out)
{
    size_t n;
    sh_shape s;
    if (!sh_const_ints(c, i, out->v, PC_MAX_RANK, &n)) return false;
    out->n = (int32_t)n;
    out->rank = sh_in_shape(c, i, &s) ? s.rank : 1;
    return out->rank <= 1 && (out->rank == 1 || n == 1);
}

typedef bool (*prop_fn)(sh_ctx *c, sh_ints *y);

static bool prop_shape(sh_ctx *c, sh_ints *y)
{
    sh_shape x;
    if (!sh_in_shape(c, 0, &x)) return false;
    int64_t r = x.rank, start = c->opset >= 15 ? sh_attr_int(c, "start", 0) : 0;
    int64_t end = c->opset >= 15 ? sh_attr_int(c, "end", r) : r;
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < 0 ? 0 : end > r ? r : end;
    y->rank = 1;
    y->n = 0;
    for (int64_t k = start; k < end; k++) {
        if (x.dims[k].kind != PC_DIM_KNOWN) return false;
        y->v[y->n++] = x.dims[k].size;
    }
    return true;
}

static bool prop_size(sh_ctx *c, sh_ints *y)
{
    sh_shape x;
    pc_dim d;
    if (!sh_in_shape(c, 0, &x)) return false;
    sh_dims_product(&x, 0, x.rank, &d);
    y->rank = 0;
    y->n = 1;
    y->v[0] = d.size;
    return d.kind == PC_DIM_KNOWN;
}

static bool prop_copy(sh_ctx *c, sh_ints *y)
{
    if (strcmp(c->node->op_type, "Cast") == 0) {
        int64_t to = sh_attr_int(c, "to", 0);
        if (to != PC_DTYPE_INT64 && to != PC_DTYPE_INT32) return false;
    }
    return input_ints(c, 0, y);
}

static bool prop_gather(sh_ctx *c, sh_ints *y)
{
    sh_ints x, idx;
    if (sh_attr_int(c, "axis", 0) != 0 || !input_ints(c, 0, &x) || x.rank != 1 || !input_ints(c, 1, &idx))
        return false;
    y->rank = idx.rank;
    y->n = idx.n;
    for (int32_t k = 0; k < idx.n; k++) {
        int64_t i = idx.v[k] < 0 ? idx.v[k] + x.n : idx.v[k];
        if (i < 0 || i >= x.n) return false;
        y->v[k] = x.v[i];
    }
    return true;
}

static bool prop_concat(sh_ctx *c, sh_ints *y)
{
    y->rank = 1;
    y->n = 0;
    for (uint32_t i = 0; i < c->node->n_inputs; i++) {
        sh_ints x;
        if (!input_ints(c, i, &x) || x.rank != 1 || y->n + x.n > PC_MAX_RANK) return false;
        memcpy(y->v + y->n, x.v, (size_t)x.n * sizeof x.v[0]);
        y->n += x.n;
    }
    return true;
}

/* scalar → [v] with axes [0]; [v] → scalar */
static bool prop_squeeze_like(sh_ctx *c, sh_ints *y)
{
    if (!input_ints(c, 0, y)) return false;
    bool unsq = strcmp(c->node->op_type, "Unsqueeze") == 0;
    int64_t axes[PC_MAX_RANK];
    size_t n = 0;
    if (c->opset < 13) {
        const int64_t *a = sh_attr_ints(c, "axes", &n);
        if (a && n == 1) axes[0] = a[0];
    } else if (sh_has_input(c, 1) && !sh_const_ints(c, 1, axes, PC_MAX_RANK, &n)) {
        return false;
    }
    if (unsq) {
        if (y->rank != 0 || n != 1 || (axes[0] != 0 && axes[0] != -1)) return false;
        y->rank = 1;
        return true;
    }
    if (y->rank != 1 || y->n != 1 || (n == 1 && axes[0] != 0 && axes[0] != -1) || n > 1) return false;
    y->rank = 0;
    return true;
}

static bool prop_slice(sh_ctx *c, sh_ints *y)
{
    sh_ints x;
    int64_t s[1], e[1], a[1] = {0}, p[1] = {1};
    size_t ns = 0, ne = 0, na = 1, np = 1;
    if (!input_ints(c, 0, &x) || x.rank != 1) return false;
    if (c->opset < 10) {
        /* opset 1-9: starts, ends and optional axes are attributes (no steps) */
        const int64_t *as = sh_attr_ints(c, "starts", &ns), *ae = sh_attr_ints(c, "ends", &ne),
                      *aa = sh_attr_ints(c, "axes", &na);
        if (!as || !ae || ns != 1 || ne != 1 || (aa && (na != 1 || (aa[0] != 0 && aa[0] != -1))))
            return false;
        s[0] = as[0];
        e[0] = ae[0];
    } else {
        if (!sh_const_ints(c, 1, s, 1, &ns) || !sh_const_ints(c, 2, e, 1, &ne) || ns != 1 || ne != 1)
            return false;
        if (sh_has_input(c, 3) && (!sh_const_ints(c, 3, a, 1, &na) || na != 1 || (a[0] != 0 && a[0] != -1)))
            return false;
        if (sh_has_input(c, 4) && (!sh_const_ints(c, 4, p, 1, &np) || np != 1 || p[0] == 0)) return false;
    }
    int64_t first, count = sh_slice_count(x.n, s[0], e[0], p[0], &first);
    y->rank = 1;
    y->n = (int32_t)count;
    for (int64_t k = 0; k < count; k++)
        y->v[k] = x.v[first + k * p[0]];
    return true;
}

static bool prop_arith(sh_ctx *c, sh_ints *y)
{
    sh_ints a, b;
    if (!input_ints(c, 0, &a) || !input_ints(c, 1, &b)) return false;
    if (a.n != b.n && a.n != 1 && b.n != 1) return false;
    char op = c->node->op_type[0];
    y->rank = a.rank > b.rank ? a.rank : b.rank;
    y->n = a.n > b.n ? a.n : b.n;
    for (int32_t k = 0; k < y->n; k++) {
        int64_t p = a.v[a.n == 1 ? 0 : k], q = b.v[b.n == 1 ? 0 : k];
        uint64_t up = (uint64_t)p, uq = (uint64_t)q;
        if (op == 'A')
            y->v[k] = (int64_t)(up + uq);
        else if (op == 'S')
            y->v[k] = (int64_t)(up - uq);
        else if (op == 'M')
            y->v[k] = (int64_t)(up * uq);
        else if (q == 0 || (p == INT64_MIN && q == -1))
            return false;
        else
            y->v[k] = p / q;
    }
    return true;
}

/* Neg: exported layer norms count the reduced axes as Neg(axis) (ONNX's LayerNormalization function body). */
static bool prop_neg(sh_ctx *c, sh_ints *y)
{
    if (!input_ints(c, 0, y)) return false;
    for (int32_t k = 0; k < y->n; k++)
        y->v[k] = (int64_t)(0 - (uint64_t)y->v[k]);
    return true;
}

/* ReduceProd / ReduceSum of a whole vector (flatten's shape arithmetic). */
static bool prop_reduce(sh_ctx *c, sh_ints *y)
{
    sh_ints x;
    int64_t axes[2];
    size_t n = 0;
    if (!input_ints(c, 0, &x) || x.rank != 1) return false;
    int64_t input_from = strcmp(c->node->op_type, "ReduceSum") == 0 ? 13 : 18;
    if (c->opset < input_from) {
        const int64_t *a = sh_attr_ints(c, "axes", &n);
        if (a && n == 1) axes[0] = a[0];
    } else if (sh_has_input(c, 1) && !sh_const_ints(c, 1, axes, 2, &n)) {
        return false;
    }
    if (n > 1 || (n == 1 && axes[0] != 0 && axes[0] != -1)) return false;
    if (n == 0 && c->opset >= input_from && sh_attr_int(c, "noop_with_empty_axes", 0)) return false;
    bool prod = strcmp(c->node->op_type, "ReduceProd") == 0;
    uint64_t acc = prod ? 1 : 0;
    for (int32_t k = 0; k < x.n; k++)
        acc = prod ? acc * (uint64_t)x.v[k] : acc + (uint64_t)x.v[k];
    bool keep = sh_attr_int(c, "keepdims", 1) != 0;
    y->rank = keep ? 1 : 0;
    y->n = 1;
    y->v[0] = (int64_t)acc;
    return true;
}

typedef struct prop_rule {
    const char *op_type;
    prop_fn fn;
} prop_rule;

/* sorted by op_type */
static const prop_rule props[] = {
    {"Add", prop_arith},         {"Cast", prop_copy},
    {"Concat", prop_concat},     {"Div", prop_arith},
    {"Gather", prop_gather},     {"Identity", prop_copy},
    {"Mul", prop_arith},         {"Neg", prop_neg},
    {"ReduceProd", prop_reduce}, {"ReduceSum", prop_reduce},
    {"Shape", prop_shape},       {"Size", prop_size},
    {"Slice", prop_slice},       {"Squeeze", prop_squeeze_like},
    {"Sub", prop_arith},         {"Unsqueeze", prop_squeeze_like},
};

static int prop_cmp(const void *key, const void *elem)
{
    return pc_name_cmp(key, ((const prop_rule *)elem)->op_type);
}

pc_status sh_values_propagate(sh_ctx *c, sh_values *t)
{
    const pc_node *n = c->node;
    if (!t || n->n_outputs < 1 || !n->outputs[0] || (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0))
        return PC_OK;
    const prop_rule *r =
        bsearch(n->op_type, props, sizeof props / sizeof props[0], sizeof props[0], prop_cmp);
    sh_ints y;
    if (r && r->fn(c, &y) && y.n <= PC_MAX_RANK && !values_set(t, n->outputs[0], &y))
        return pc_error_set(c->err, PC_ERR_NOMEM, "node '%s': out of memory propagating shape values",
                            n->name ? n->name : n->op_type);
    return PC_OK;
}
