/* Shape inference: the blocked EP's reorders and its compiled Subgraph node (docs/ep.md, "The blocked EP").
 * Its primitives (Conv, BatchNormalization, the pools, LRN) use the standard rules through the driver's
 * blocked layout (infer.c). */
#include <string.h>

#include "core/shape/shape_internal.h"

/* ToBlocked(X) block=b: X (N, C, H, W) -> (N, ceil(C / b), H, W, b). */
pc_status sh_infer_to_blocked(sh_ctx *c)
{
    int64_t b = sh_attr_int(c, "block", 0);
    if (b < 1 || b > 1024)
        return sh_fail_status(c, PC_ERR_ATTRIBUTE, "attribute block is %lld, not in 1..1024", (long long)b);
    sh_shape x, y;
    if (!sh_in_shape(c, 0, &x)) {
        sh_set_out(c, 0, sh_in_elem(c, 0), NULL);
        return PC_OK;
    }
    if (x.rank != 4) return sh_fail(c, "input 0 must have rank 4 (N, C, H, W), has rank %d", (int)x.rank);
    y.rank = 5;
    y.dims[0] = x.dims[0];
    if (x.dims[1].kind == PC_DIM_KNOWN)
        sh_dim_known(&y.dims[1], x.dims[1].size / b + (x.dims[1].size % b != 0));
    else
        sh_dim_unknown(&y.dims[1]);
    y.dims[2] = x.dims[2];
    y.dims[3] = x.dims[3];
    sh_dim_known(&y.dims[4], b);
    sh_set_out(c, 0, sh_in_elem(c, 0), &y);
    return PC_OK;
}

/* FromBlocked(X) channels=C: X (N, Cb, H, W, b) with (Cb - 1) * b < C <= Cb * b -> (N, C, H, W). */
pc_status sh_infer_from_blocked(sh_ctx *c)
{
    int64_t ch = sh_attr_int(c, "channels", 0);
    if (ch < 1)
        return sh_fail_status(c, PC_ERR_ATTRIBUTE, "attribute channels is %lld, not >= 1", (long long)ch);
    sh_shape x, y;
    if (!sh_in_shape(c, 0, &x)) {
        sh_set_out(c, 0, sh_in_elem(c, 0), NULL);
        return PC_OK;
    }
    if (x.rank != 5)
        return sh_fail(c, "input 0 must have rank 5 (N, C/b, H, W, b), has rank %d", (int)x.rank);
    if (x.dims[1].kind == PC_DIM_KNOWN && x.dims[4].kind == PC_DIM_KNOWN) {
        int64_t cb = x.dims[1].size, b = x.dims[4].size, hi;
        if (!sh_mul(cb, b, &hi) || ch > hi || ch <= hi - b)
            return sh_fail_status(
                c, PC_ERR_ATTRIBUTE,
                "channels = %lld does not fit %lld blocks of %lld (it must be in %lld..%lld)", (long long)ch,
                (long long)cb, (long long)b, (long long)(hi - b + 1), (long long)hi);
    }
    y.rank = 4;
    y.dims[0] = x.dims[0];
    sh_dim_known(&y.dims[1], ch);
    y.dims[2] = x.dims[2];
    y.dims[3] = x.dims[3];
    sh_set_out(c, 0, sh_in_elem(c, 0), &y);
    return PC_OK;
}

/* Subgraph(inputs...) body=G: input i binds G's input i (same element type and rank where both are known);
 * output j is G's output j, of its declared type. */
pc_status sh_infer_blocked_subgraph(sh_ctx *c)
{
    const pc_attr *a = pc_node_attr(c->node, "body");
    if (!a || a->type != PC_ATTR_GRAPH || !a->g)
        return sh_fail_status(c, PC_ERR_ATTRIBUTE, "attribute body (a graph) is required");
    const pc_graph *g = a->g;
    if (g->n_inputs != c->node->n_inputs || g->n_outputs != c->n_out)
        return sh_fail_status(c, PC_ERR_ARITY, "the node has %u inputs and %u outputs, its body %u and %u",
                              c->node->n_inputs, c->n_out, g->n_inputs, g->n_outputs);
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        const pc_type *d = &g->inputs[i]->type;
        const pc_value *v = c->node->inputs[i];
        if (!v) return sh_fail_status(c, PC_ERR_ARITY, "input %u is missing", i);
        pc_dtype e = sh_in_elem(c, i);
        sh_shape s;
        bool known = sh_in_shape(c, i, &s);
        if (d->kind == PC_TYPE_TENSOR && e != PC_DTYPE_UNDEFINED && d->elem != PC_DTYPE_UNDEFINED &&
            e != d->elem)
            return sh_fail_status(c, PC_ERR_TYPE, "input %u is %s, the body's input '%s' %s", i,
                                  pc_dtype_name(e), g->inputs[i]->name, pc_dtype_name(d->elem));
        if (known && d->kind == PC_TYPE_TENSOR && d->shape.rank >= 0 && d->shape.rank != s.rank)
            return sh_fail(c, "input %u has rank %d, the body's input '%s' rank %d", i, (int)s.rank,
                           g->inputs[i]->name, (int)d->shape.rank);
    }
    for (uint32_t j = 0; j < g->n_outputs; j++) {
        const pc_type *t = &g->outputs[j]->type;
        if (t->kind != PC_TYPE_TENSOR) continue;
        if (t->shape.rank < 0 || t->shape.rank > PC_MAX_RANK) {
            sh_set_out(c, j, t->elem, NULL);
            continue;
        }
        sh_shape y;
        y.rank = t->shape.rank;
        for (int32_t d = 0; d < y.rank; d++)
            y.dims[d] = t->shape.dims[d];
        sh_set_out(c, j, t->elem, &y);
    }
    return PC_OK;
}
