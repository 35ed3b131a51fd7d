/* Shape inference: Reduce* (axes as an attribute before opset 13 for ReduceSum and 18 for the others, as an
 * input after; keepdims; noop_with_empty_axes) and ArgMax/ArgMin. */
#include <string.h>

#include "core/shape/shape_internal.h"

pc_status sh_infer_reduce(sh_ctx *c)
{
    sh_shape x, y;
    pc_dtype elem = sh_in_elem(c, 0);
    bool keep = sh_attr_int(c, "keepdims", 1) != 0;
    int64_t input_from = strcmp(c->node->op_type, "ReduceSum") == 0 ? 13 : 18;
    int64_t axes[PC_MAX_RANK];
    size_t n = 0;
    bool given, known;
    if (c->opset < input_from) {
        const int64_t *a = sh_attr_ints(c, "axes", &n);
        given = known = a != NULL && n <= PC_MAX_RANK;
        if (known) memcpy(axes, a, n * sizeof *a);
    } else {
        given = sh_has_input(c, 1);
        known = given && sh_const_ints(c, 1, axes, PC_MAX_RANK, &n);
    }
    bool x_known = sh_in_shape(c, 0, &x);
    if (given && known && n == 0) given = false; /* an empty axes list means "no axes" */
    bool noop = c->opset >= input_from && sh_attr_int(c, "noop_with_empty_axes", 0) != 0;
    if (!given && noop) {
        sh_set_out(c, 0, elem, &x);
        return PC_OK;
    }
    if (!x_known || (given && !known)) {
        if (x_known && keep) {
            y.rank = x.rank;
            for (int32_t i = 0; i < x.rank; i++)
                sh_dim_unknown(&y.dims[i]);
            sh_set_out(c, 0, elem, &y);
        } else {
            sh_set_out(c, 0, elem, NULL);
        }
        return PC_OK;
    }
    bool red[PC_MAX_RANK] = {false};
    if (given) {
        for (size_t i = 0; i < n; i++) {
            int32_t a;
            pc_status st = sh_axis(c, axes[i], x.rank, "axis", &a);
            if (st != PC_OK) return st;
            red[a] = true;
        }
    } else {
        for (int32_t i = 0; i < x.rank; i++)
            red[i] = true;
    }
    y.rank = 0;
    for (int32_t i = 0; i < x.rank; i++) {
        if (!red[i])
            y.dims[y.rank++] = x.dims[i];
        else if (keep)
            sh_dim_known(&y.dims[y.rank++], 1);
    }
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}

pc_status sh_infer_arg_reduce(sh_ctx *c)
{
    sh_shape x, y;
    if (!sh_in_shape(c, 0, &x)) {
        sh_set_out(c, 0, PC_DTYPE_INT64, NULL);
        return PC_OK;
    }
    int32_t a;
    pc_status st = sh_axis(c, sh_attr_int(c, "axis", 0), x.rank, "axis", &a);
    if (st != PC_OK) return st;
    bool keep = sh_attr_int(c, "keepdims", 1) != 0;
    y.rank = 0;
    for (int32_t i = 0; i < x.rank; i++) {
        if (i != a)
            y.dims[y.rank++] = x.dims[i];
        else if (keep)
            sh_dim_known(&y.dims[y.rank++], 1);
    }
    sh_set_out(c, 0, PC_DTYPE_INT64, &y);
    return PC_OK;
}
