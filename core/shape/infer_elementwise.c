/* Shape inference: elementwise ops. Unary ops keep the shape (symbols included); broadcasting ops take the
 * multidirectional broadcast of all inputs. */
#include "core/shape/shape_internal.h"

/* Output 0 = input 0 (Relu, Softmax, Clip, Identity, InstanceNormalization, LRN, ...). */
pc_status sh_infer_same(sh_ctx *c)
{
    sh_shape s;
    sh_in_shape(c, 0, &s);
    sh_set_out(c, 0, sh_in_elem(c, 0), &s);
    return PC_OK;
}

/* IsNaN, IsInf. */
pc_status sh_infer_same_bool(sh_ctx *c)
{
    sh_shape s;
    sh_in_shape(c, 0, &s);
    sh_set_out(c, 0, PC_DTYPE_BOOL, &s);
    return PC_OK;
}

pc_status sh_infer_cast(sh_ctx *c)
{
    int64_t to = sh_attr_int(c, "to", 0);
    if (!pc_dtype_is_valid((int32_t)to) || to != (int32_t)to)
        return sh_fail_status(c, PC_ERR_ATTRIBUTE, "attribute 'to' = %lld is not an element type",
                              (long long)to);
    sh_shape s;
    sh_in_shape(c, 0, &s);
    sh_set_out(c, 0, (pc_dtype)to, &s);
    return PC_OK;
}

pc_status sh_infer_cast_like(sh_ctx *c)
{
    sh_shape s;
    sh_in_shape(c, 0, &s);
    sh_set_out(c, 0, sh_in_elem(c, 1), &s);
    return PC_OK;
}

/* Dropout: output 1 is the mask (bool from opset 10; the data type before). */
pc_status sh_infer_dropout(sh_ctx *c)
{
    sh_shape s;
    sh_in_shape(c, 0, &s);
    sh_set_out(c, 0, sh_in_elem(c, 0), &s);
    if (c->n_out > 1) sh_set_out(c, 1, c->opset >= 10 ? PC_DTYPE_BOOL : sh_in_elem(c, 0), &s);
    return PC_OK;
}

static pc_status broadcast_all(sh_ctx *c, uint32_t first, sh_shape *out)
{
    out->rank = -1;
    bool started = false;
    for (uint32_t i = first; i < c->node->n_inputs; i++) {
        sh_shape s;
        if (!sh_has_input(c, i)) continue;
        sh_in_shape(c, i, &s);
        if (!started) {
            *out = s;
            started = true;
            continue;
        }
        pc_status st = sh_broadcast(c, out, &s, out);
        if (st != PC_OK) return st;
    }
    return PC_OK;
}

/* Add Sub Mul Div Pow Mod Max Min Mean Sum BitShift PRelu: element type of input 0. */
pc_status sh_infer_broadcast(sh_ctx *c)
{
    sh_shape s;
    pc_status st = broadcast_all(c, 0, &s);
    if (st == PC_OK) sh_set_out(c, 0, sh_in_elem(c, 0), &s);
    return st;
}

/* Equal Less Greater LessOrEqual GreaterOrEqual And Or Xor: bool. */
pc_status sh_infer_compare(sh_ctx *c)
{
    sh_shape s;
    pc_status st = broadcast_all(c, 0, &s);
    if (st == PC_OK) sh_set_out(c, 0, PC_DTYPE_BOOL, &s);
    return st;
}

/* Where(cond, x, y): broadcast of all three, element type of x. */
pc_status sh_infer_where(sh_ctx *c)
{
    sh_shape s;
    pc_status st = broadcast_all(c, 0, &s);
    if (st == PC_OK) sh_set_out(c, 0, sh_in_elem(c, 1), &s);
    return st;
}
