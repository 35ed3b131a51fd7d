/* The reference's Conv and ConvTranspose over one and two spatial axes (conv_planes and convt_planes in
 * reference/ops_conv.c: the sums in a double plane, row by row; four channels per pass for 1x1 Conv kernels)
 * against their general loops over any number of axes, which three spatial axes still take: a 2-D
 * convolution equals, bit for bit, the same one with a third spatial axis of size 1 (kernel 1, stride 1, no
 * pads), and a 1-D one the same with two. Random shapes, groups (up to 6 channels per group, so the 4-channel
 * passes run with and without a remainder), strides, dilations, pads (asymmetric, up to the kernel), with and
 * without bias, float and double; the values are small integers plus a fraction so that the order of the sums
 * shows in the last bits. */
#include <string.h>

#include "tests/pass_test_util.h"
#include "reference/reference.h"
#include "tests/test_util.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t draw(uint32_t bound)
{
    return (uint32_t)(pc_splitmix64(&rng_state) % bound);
}

typedef struct conv_case {
    bool transpose; /* ConvTranspose: W is [C, M/group, k...] */
    pc_dtype dt;
    int nsp; /* 1 or 2 */
    int64_t n, group, cg, mg, in[2], k[2], s[2], d[2], pb[2], pe[2];
    bool bias;
} conv_case;

/* Fills a float or double input with values v[i] = (draw - 8) + draw / 7 (rounded to float for floats). */
static pc_data *values(pc_dtype dt, int32_t rank, const int64_t *dims)
{
    pc_error err;
    pc_data *d = pc_data_new_tensor(dt, rank, dims, &err);
    if (!d) pt_die("tensor", &err);
    for (uint64_t i = 0; i < d->n_elements; i++) {
        double v = (double)draw(17) - 8.0 + (double)draw(7) / 7.0;
        if (dt == PC_DTYPE_FLOAT)
            ((float *)d->data)[i] = (float)v;
        else
            ((double *)d->data)[i] = v;
    }
    return d;
}

/* Runs the case's Conv with `extra` trailing spatial axes of size 1 on the reference; the output or NULL. */
static pc_data *run(const conv_case *c, int extra, pc_data *x0, pc_data *w0, pc_data *b0)
{
    pc_error err;
    int nsp = c->nsp + extra;
    int64_t xd[PC_MAX_RANK], wd[PC_MAX_RANK], ks[PC_MAX_RANK], st[PC_MAX_RANK], dl[PC_MAX_RANK],
        pads[2 * PC_MAX_RANK];
    xd[0] = c->n;
    xd[1] = c->group * c->cg;
    wd[0] = c->transpose ? c->group * c->cg : c->group * c->mg;
    wd[1] = c->transpose ? c->mg : c->cg;
    for (int i = 0; i < nsp; i++) {
        bool real = i < c->nsp;
        xd[2 + i] = real ? c->in[i] : 1;
        wd[2 + i] = ks[i] = real ? c->k[i] : 1;
        st[i] = real ? c->s[i] : 1;
        dl[i] = real ? c->d[i] : 1;
        pads[i] = real ? c->pb[i] : 0;
        pads[nsp + i] = real ? c->pe[i] : 0;
    }
    /* the same data reshaped: one more size-1 axis changes no element's position */
    pc_data *x = pc_data_new_tensor(c->dt, 2 + nsp, xd, &err),
            *w = pc_data_new_tensor(c->dt, 2 + nsp, wd, &err);
    if (!x || !w) pt_die("tensor", &err);
    size_t es = c->dt == PC_DTYPE_FLOAT ? 4 : 8;
    memcpy(x->data, x0->data, (size_t)x0->n_elements * es);
    memcpy(w->data, w0->data, (size_t)w0->n_elements * es);

    pc_model *m = pt_model(13);
    pc_type tx = {.kind = PC_TYPE_TENSOR, .elem = c->dt, .shape = {.rank = -1}};
    pc_value *ins[3];
    const char *names[3] = {"x", "w", "b"};
    for (int i = 0; i < (c->bias ? 3 : 2); i++) {
        ins[i] = pc_graph_add_value(m->graph, names[i], NULL, &err);
        if (!ins[i] || pc_value_set_type(ins[i], &tx, &err) != PC_OK ||
            pc_graph_add_input(m->graph, ins[i], &err) != PC_OK)
            pt_die("input", &err);
    }
    pc_node *n = pc_graph_add_node(m->graph, c->transpose ? "ConvTranspose" : "Conv", "", c->bias ? 3 : 2,
                                   ins, 1, NULL, &err);
    if (!n || pc_node_set_attr_ints(n, "kernel_shape", (size_t)nsp, ks, &err) != PC_OK ||
        pc_node_set_attr_ints(n, "strides", (size_t)nsp, st, &err) != PC_OK ||
        pc_node_set_attr_ints(n, "dilations", (size_t)nsp, dl, &err) != PC_OK ||
        pc_node_set_attr_ints(n, "pads", (size_t)(2 * nsp), pads, &err) != PC_OK ||
        pc_node_set_attr_int(n, "group", c->group, &err) != PC_OK ||
        pc_graph_add_output(m->graph, n->outputs[0], &err) != PC_OK)
        pt_die("conv", &err);
    pc_data *feed[3] = {x, w, b0};
    pc_data **outs = NULL, *y = NULL;
    pc_status s = pc_ref_run(m, c->bias ? 3 : 2, feed, &outs, &err);
    CHECK_OK(s, &err);
    if (s == PC_OK) {
        y = pc_data_ref(outs[0]);
        pc_ref_free_outputs(m, outs);
    }
    pc_model_free(m);
    pc_data_unref(x);
    pc_data_unref(w);
    return y;
}

int main(void)
{
    enum { N_CASES = 400 };
    int compared = 0, padded = 0, strided = 0, transposed = 0, pointwise4 = 0;
    for (int t = 0; t < N_CASES; t++) {
        conv_case c = {.transpose = draw(3) == 0,
                       .dt = draw(2) ? PC_DTYPE_FLOAT : PC_DTYPE_DOUBLE,
                       .nsp = 1 + (int)draw(2)};
        c.n = 1 + draw(2);
        c.group = 1 + draw(3);
        c.cg = 1 + draw(6);
        c.mg = 1 + draw(3);
        c.bias = draw(2);
        bool ok = true;
        for (int i = 0; i < c.nsp; i++) {
            c.in[i] = 1 + draw(8);
            c.k[i] = 1 + draw(3);
            c.s[i] = 1 + draw(3);
            c.d[i] = 1 + draw(2);
            c.pb[i] = draw((uint32_t)c.k[i] + 1);
            c.pe[i] = draw((uint32_t)c.k[i] + 1);
            int64_t ext = (c.k[i] - 1) * c.d[i] + 1;
            /* at least one output */
            ok = ok && (c.transpose ? c.s[i] * (c.in[i] - 1) + ext - c.pb[i] - c.pe[i] >= 1
                                    : c.in[i] + c.pb[i] + c.pe[i] >= ext);
            padded += c.pb[i] || c.pe[i];
            strided += c.s[i] > 1;
        }
        if (!ok) continue;
        int64_t xd[4] = {c.n, c.group * c.cg, c.in[0], c.in[1]};
        int64_t wd[4] = {c.transpose ? c.group * c.cg : c.group * c.mg, c.transpose ? c.mg : c.cg, c.k[0],
                         c.k[1]};
        int64_t bd[1] = {c.group * c.mg};
        pc_data *x = values(c.dt, 2 + c.nsp, xd), *w = values(c.dt, 2 + c.nsp, wd);
        pc_data *b = c.bias ? values(c.dt, 1, bd) : NULL;
        pc_data *fast = run(&c, 0, x, w, b), *general = run(&c, 3 - c.nsp, x, w, b);
        if (fast && general) {
            CHECK_MSG(fast->n_elements == general->n_elements &&
                          memcmp(fast->data, general->data,
                                 (size_t)fast->n_elements * (c.dt == PC_DTYPE_FLOAT ? 4 : 8)) == 0,
                      "case %d (%s %d-D, %s, group %lld): the plane loop differs from the general loop", t,
                      c.transpose ? "ConvTranspose" : "Conv", c.nsp, pc_dtype_name(c.dt), (long long)c.group);
            compared++;
            transposed += c.transpose;
            pointwise4 += !c.transpose && c.k[0] == 1 && (c.nsp == 1 || c.k[1] == 1) && c.cg >= 4;
        }
        pc_data_unref(fast);
        pc_data_unref(general);
        pc_data_unref(x);
        pc_data_unref(w);
        pc_data_unref(b);
    }
    CHECK_MSG(compared > N_CASES / 2 && padded > 100 && strided > 100 && transposed > 50 && pointwise4 > 5,
              "%d compared, %d padded, %d strided, %d transposed, %d 1x1 with 4+ channels a group", compared,
              padded, strided, transposed, pointwise4);
    printf("test_reference_conv: %d convolutions (%d transposed, %d 1x1 with 4+ channels a group) "
           "bit-identical to "
           "the general loop\n",
           compared, transposed, pointwise4);
    return pc_test_finish("test_reference_conv");
}
