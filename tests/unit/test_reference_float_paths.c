/* The reference's float paths of the broadcasting arithmetic ops (Add, Sub, Mul, Div: the element type and
 * the op dispatched once, the broadcast walked by strides) and of MatMul (rows accumulated k-outermost)
 * against oracles written here the plainest way: numpy's broadcast rule index by index, and one dot product
 * per output element summed in k order, each in double and rounded once to the element type. Bits must be
 * equal. Random shapes of rank 0..4 with missing and size-1 axes on either side, empty tensors, float and
 * double; MatMul with 1-D operands and broadcast batch axes. Values are small integers plus a fraction, so a
 * different summation order or an extra rounding shows in the last bits. */
#include <string.h>

#include "tests/pass_test_util.h"
#include "reference/reference.h"
#include "tests/test_util.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint32_t draw(uint32_t bound)
{
    return (uint32_t)(pc_splitmix64(&rng_state) % bound);
}

static pc_data *values(pc_dtype dt, int32_t rank, const int64_t *dims)
{
    pc_error err;
    pc_data *d = pc_data_new_tensor(dt, rank, dims, &err);
    if (!d) pt_die("tensor", &err);
    for (uint64_t i = 0; i < d->n_elements; i++) {
        double v = (double)draw(17) - 8.0 + (double)(1 + draw(7)) / 7.0; /* never 0: Div stays finite */
        if (dt == PC_DTYPE_FLOAT)
            ((float *)d->data)[i] = (float)v;
        else
            ((double *)d->data)[i] = v;
    }
    return d;
}

static double get(const pc_data *d, uint64_t i)
{
    return d->dtype == PC_DTYPE_FLOAT ? (double)((const float *)d->data)[i] : ((const double *)d->data)[i];
}

/* Runs one node of op_type on inputs a and b; its output or NULL. */
static pc_data *run2(const char *op_type, pc_data *a, pc_data *b)
{
    pc_error err;
    pc_model *m = pt_model(13);
    pc_value *ins[2];
    const char *names[2] = {"a", "b"};
    for (int i = 0; i < 2; i++) {
        pc_type t = {.kind = PC_TYPE_TENSOR, .elem = a->dtype, .shape = {.rank = -1}};
        ins[i] = pc_graph_add_value(m->graph, names[i], NULL, &err);
        if (!ins[i] || pc_value_set_type(ins[i], &t, &err) != PC_OK ||
            pc_graph_add_input(m->graph, ins[i], &err) != PC_OK)
            pt_die("input", &err);
    }
    pc_node *n = pc_graph_add_node(m->graph, op_type, "", 2, ins, 1, NULL, &err);
    if (!n || pc_graph_add_output(m->graph, n->outputs[0], &err) != PC_OK) pt_die(op_type, &err);
    pc_data *feed[2] = {a, b}, **outs = NULL, *y = NULL;
    pc_status s = pc_ref_run(m, 2, feed, &outs, &err);
    CHECK_OK(s, &err);
    if (s == PC_OK) {
        y = pc_data_ref(outs[0]);
        pc_ref_free_outputs(m, outs);
    }
    pc_model_free(m);
    return y;
}

static bool same_bits(const pc_data *y, const double *want, uint64_t n)
{
    if (y->n_elements != n) return false;
    for (uint64_t i = 0; i < n; i++) {
        if (y->dtype == PC_DTYPE_FLOAT) {
            float w = (float)want[i];
            if (memcmp(&((const float *)y->data)[i], &w, sizeof w) != 0) return false;
        } else if (memcmp(&((const double *)y->data)[i], &want[i], sizeof want[i]) != 0) {
            return false;
        }
    }
    return true;
}

/* One broadcasting case: the output shape, then each operand drops leading axes or sets some to 1. */
static int broadcast_case(int t)
{
    static const char *const ops[4] = {"Add", "Sub", "Mul", "Div"};
    const char *op = ops[draw(4)];
    pc_dtype dt = draw(2) ? PC_DTYPE_FLOAT : PC_DTYPE_DOUBLE;
    int32_t r = (int32_t)draw(5);
    int64_t od[4], ad[4], bd[4];
    for (int32_t d = 0; d < r; d++)
        od[d] = draw(12) == 0 ? 0 : 1 + draw(4);
    int32_t ra = r - (int32_t)(r ? draw((uint32_t)r + 1) : 0),
            rb = r - (int32_t)(r ? draw((uint32_t)r + 1) : 0);
    for (int32_t d = 0; d < ra; d++)
        ad[d] = draw(3) == 0 ? 1 : od[r - ra + d];
    for (int32_t d = 0; d < rb; d++)
        bd[d] = draw(3) == 0 ? 1 : od[r - rb + d];
    /* the output has the longer operand's rank and is the broadcast of the two (an axis both set to 1 is 1)
     */
    r = ra > rb ? ra : rb;
    uint64_t n = 1;
    for (int32_t d = 0; d < r; d++) {
        int64_t xa = d >= r - ra ? ad[d - (r - ra)] : 1, xb = d >= r - rb ? bd[d - (r - rb)] : 1;
        od[d] = xa == 1 ? xb : xa;
        n *= (uint64_t)od[d];
    }
    pc_data *a = values(dt, ra, ad), *b = values(dt, rb, bd);
    double want[4 * 4 * 4 * 4 + 1];
    for (uint64_t i = 0; i < n; i++) {
        /* numpy: the output index, each operand's index with broadcast axes pinned to 0 */
        uint64_t rest = i, ia = 0, ib = 0, sa = 1, sb = 1;
        for (int32_t d = r - 1; d >= 0; d--) {
            uint64_t c = rest % (uint64_t)od[d];
            rest /= (uint64_t)od[d];
            if (d >= r - ra) {
                int64_t dim = ad[d - (r - ra)];
                ia += (dim == 1 ? 0 : c) * sa;
                sa *= (uint64_t)dim;
            }
            if (d >= r - rb) {
                int64_t dim = bd[d - (r - rb)];
                ib += (dim == 1 ? 0 : c) * sb;
                sb *= (uint64_t)dim;
            }
        }
        double u = get(a, ia), v = get(b, ib);
        want[i] = op[0] == 'A' ? u + v : op[0] == 'S' ? u - v : op[0] == 'M' ? u * v : u / v;
    }
    pc_data *y = run2(op, a, b);
    int ok = y && y->rank == r && same_bits(y, want, n);
    CHECK_MSG(ok, "case %d: %s %s rank %d (%d, %d): the float path differs from numpy's rule", t, op,
              pc_dtype_name(dt), (int)r, (int)ra, (int)rb);
    pc_data_unref(y);
    pc_data_unref(a);
    pc_data_unref(b);
    return ok;
}

/* One MatMul case: batch axes (0..2, broadcast), or a 1-D A (a row) or B (a column). */
static int matmul_case(int t, int *batched)
{
    pc_dtype dt = draw(2) ? PC_DTYPE_FLOAT : PC_DTYPE_DOUBLE;
    int64_t M = 1 + draw(5), K = draw(10) == 0 ? 0 : 1 + draw(9), N = 1 + draw(6);
    int32_t nb = (int32_t)draw(3);
    bool a1 = draw(6) == 0, b1 = !a1 && draw(6) == 0;
    int64_t bdims[2], ad[4], bd[4];
    int32_t ra = 0, rb = 0;
    for (int32_t d = 0; d < nb; d++)
        bdims[d] = 1 + draw(3);
    /* A: some leading batch axes, each its size or 1 */
    int32_t nba = a1 ? 0 : (int32_t)draw((uint32_t)nb + 1), nbb = b1 ? 0 : (int32_t)draw((uint32_t)nb + 1);
    for (int32_t d = 0; d < nba; d++)
        ad[ra++] = draw(3) == 0 ? 1 : bdims[nb - nba + d];
    if (!a1) ad[ra++] = M;
    ad[ra++] = K;
    for (int32_t d = 0; d < nbb; d++)
        bd[rb++] = draw(3) == 0 ? 1 : bdims[nb - nbb + d];
    bd[rb++] = K;
    if (!b1) bd[rb++] = N;
    if (a1) M = 1;
    if (b1) N = 1;
    /* the batch shape is the broadcast of A's and B's batch axes */
    int32_t nbo = nba > nbb ? nba : nbb;
    int64_t bo[2];
    for (int32_t d = 0; d < nbo; d++) {
        int32_t da = d - (nbo - nba), db = d - (nbo - nbb);
        int64_t xa = da >= 0 ? ad[da] : 1, xb = db >= 0 ? bd[db] : 1;
        bo[d] = xa == 1 ? xb : xa;
    }
    uint64_t nbatch = 1;
    for (int32_t d = 0; d < nbo; d++)
        nbatch *= (uint64_t)bo[d];
    pc_data *a = values(dt, ra, ad), *b = values(dt, rb, bd);
    static double want[3 * 3 * 5 * 6];
    uint64_t yi = 0;
    for (uint64_t s = 0; s < nbatch; s++) {
        /* the batch index, then each operand's matrix offset with broadcast batch axes pinned to 0 */
        uint64_t rest = s, offa = 0, offb = 0, sa = (uint64_t)(M * K) * (a1 ? 0 : 1), sb = (uint64_t)(K * N);
        if (a1) sa = 0;
        for (int32_t d = nbo - 1; d >= 0; d--) {
            uint64_t c = rest % (uint64_t)bo[d];
            rest /= (uint64_t)bo[d];
            int32_t da = d - (nbo - nba), db = d - (nbo - nbb);
            if (da >= 0) {
                offa += (ad[da] == 1 ? 0 : c) * sa;
                sa *= (uint64_t)ad[da];
            }
            if (db >= 0) {
                offb += (bd[db] == 1 ? 0 : c) * sb;
                sb *= (uint64_t)bd[db];
            }
        }
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double sum = 0.0;
                for (int64_t k = 0; k < K; k++)
                    sum += get(a, offa + (uint64_t)(i * K + k)) * get(b, offb + (uint64_t)(k * N + j));
                want[yi++] = sum;
            }
    }
    pc_data *y = run2("MatMul", a, b);
    int ok = y && same_bits(y, want, yi);
    CHECK_MSG(ok,
              "case %d: MatMul %s A rank %d B rank %d (M %lld K %lld N %lld): differs from the dot products",
              t, pc_dtype_name(dt), (int)ra, (int)rb, (long long)M, (long long)K, (long long)N);
    *batched += nbo > 0;
    pc_data_unref(y);
    pc_data_unref(a);
    pc_data_unref(b);
    return ok;
}

int main(void)
{
    enum { N_CASES = 600 };
    int bc = 0, mm = 0, batched = 0;
    for (int t = 0; t < N_CASES; t++)
        bc += broadcast_case(t);
    for (int t = 0; t < N_CASES; t++)
        mm += matmul_case(t, &batched);
    CHECK_MSG(batched > N_CASES / 4, "only %d MatMul cases had batch axes", batched);
    printf(
        "test_reference_float_paths: %d broadcast arithmetic and %d MatMul cases bit-identical to the plain "
        "oracles\n",
        bc, mm);
    return pc_test_finish("test_reference_float_paths");
}
