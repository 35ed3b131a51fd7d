/* Constant evaluator: every op on random small tensors (several shapes, rank 0, empty dims, broadcasting,
 * every handled dtype) is compared bit-exactly with the reference executor running the same one-node model;
 * then the evaluator's own errors (float16 rounding: test_base_half). */
#include <math.h>

#include "core/eval/eval.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

static uint64_t seed = 12345;

typedef struct tcase {
    pc_model *m;
    char inputs[256];
    uint32_t n_in;
    pc_node *n;
} tcase;

enum { FILL_ANY, FILL_NONZERO, FILL_NONNEG };

static tcase tc_new(int64_t opset)
{
    tcase t = {.m = pt_model(opset)};
    return t;
}

static void tc_add_name(tcase *t, const char *name)
{
    size_t len = strlen(t->inputs);
    snprintf(t->inputs + len, sizeof t->inputs - len, "%s%s", t->n_in ? "," : "", name);
    t->n_in++;
}

/* A random constant input. Floats are multiples of 1/8 in [-8, 8) with occasional +-0; float16 draws normal
 * bit patterns; integers [-5, 5] (unsigned [0, 10]); bools. */
static void tc_rand(tcase *t, pc_dtype dt, int32_t rank, const int64_t *dims, int mode)
{
    char name[16];
    snprintf(name, sizeof name, "x%u", t->n_in);
    pc_value *v = pt_const(t->m, name, dt, rank, dims, NULL);
    pc_tensor *x = v->initializer;
    for (uint64_t k = 0; k < x->n_elements; k++) {
        uint64_t r = pt_rand(&seed);
        double f = (double)((int64_t)(r % 128) - 64) / 8.0;
        int64_t iv = (int64_t)(r % 11) - 5;
        if (mode == FILL_NONNEG) f = fabs(f) + (double)(r >> 60), iv = iv < 0 ? -iv : iv;
        if (mode == FILL_NONZERO && iv == 0) iv = 3;
        if (mode == FILL_NONZERO && f == 0) f = 0.5;
        if ((r >> 20) % 7 == 0 && mode == FILL_ANY)
            f = (double)(r >> 40) / 1048576.0 - 8.0; /* inexact values */
        uint64_t u = (uint64_t)(iv + 5);
        switch (dt) {
        case PC_DTYPE_FLOAT:
            ((float *)x->data)[k] = (float)f;
            break;
        case PC_DTYPE_DOUBLE:
            ((double *)x->data)[k] = f;
            break;
        case PC_DTYPE_FLOAT16: {
            uint16_t e = (uint16_t)(10 + (r >> 32) % 10),
                     s = mode == FILL_NONNEG ? 0 : (uint16_t)((r >> 50) & 1);
            ((uint16_t *)x->data)[k] = (uint16_t)(s << 15 | e << 10 | (r >> 8 & 0x3ff));
            break;
        }
        case PC_DTYPE_INT8:
            ((int8_t *)x->data)[k] = (int8_t)iv;
            break;
        case PC_DTYPE_INT16:
            ((int16_t *)x->data)[k] = (int16_t)iv;
            break;
        case PC_DTYPE_INT32:
            ((int32_t *)x->data)[k] = (int32_t)iv;
            break;
        case PC_DTYPE_INT64:
            ((int64_t *)x->data)[k] = iv;
            break;
        case PC_DTYPE_UINT8:
            ((uint8_t *)x->data)[k] = (uint8_t)(mode == FILL_NONZERO ? u + 1 : u);
            break;
        case PC_DTYPE_UINT16:
            ((uint16_t *)x->data)[k] = (uint16_t)(mode == FILL_NONZERO ? u + 1 : u);
            break;
        case PC_DTYPE_UINT32:
            ((uint32_t *)x->data)[k] = (uint32_t)(mode == FILL_NONZERO ? u + 1 : u);
            break;
        case PC_DTYPE_UINT64:
            ((uint64_t *)x->data)[k] = mode == FILL_NONZERO ? u + 1 : u;
            break;
        case PC_DTYPE_BOOL:
            ((uint8_t *)x->data)[k] = (uint8_t)(r >> 33 & 1);
            break;
        default:
            break;
        }
    }
    tc_add_name(t, name);
}

/* An int constant input: n values (rank 1, or rank 0 when scalar). */
static void tc_ints(tcase *t, pc_dtype dt, size_t n, const int64_t *vals, bool scalar)
{
    char name[16];
    snprintf(name, sizeof name, "x%u", t->n_in);
    int64_t d = (int64_t)n;
    pc_value *v = pt_const(t->m, name, dt, scalar ? 0 : 1, &d, NULL);
    for (size_t k = 0; k < n; k++) {
        if (dt == PC_DTYPE_INT32)
            ((int32_t *)v->initializer->data)[k] = (int32_t)vals[k];
        else if (dt == PC_DTYPE_FLOAT)
            ((float *)v->initializer->data)[k] = (float)vals[k];
        else if (dt == PC_DTYPE_DOUBLE)
            ((double *)v->initializer->data)[k] = (double)vals[k];
        else
            ((int64_t *)v->initializer->data)[k] = vals[k];
    }
    tc_add_name(t, name);
}

static void tc_skip(tcase *t)
{
    tc_add_name(t, "");
}

static pc_node *tc_node(tcase *t, const char *op, uint32_t n_out)
{
    char outs[64] = "";
    for (uint32_t i = 0; i < n_out; i++) {
        size_t len = strlen(outs);
        snprintf(outs + len, sizeof outs - len, "%sy%u", i ? "," : "", i);
    }
    t->n = pt_node(t->m, op, "", t->inputs, outs, NULL);
    for (uint32_t i = 0; i < n_out; i++) {
        char name[16];
        snprintf(name, sizeof name, "y%u", i);
        pt_output(t->m, name);
    }
    return t->n;
}

static pc_status tc_eval(tcase *t, pc_tensor **outs, uint64_t max, pc_error *err)
{
    const pc_tensor *ins[8] = {0};
    for (uint32_t i = 0; i < t->n->n_inputs; i++)
        ins[i] = t->n->inputs[i] ? t->n->inputs[i]->initializer : NULL;
    return pc_eval_node(t->n, ins, t->n->n_inputs, outs, max, err);
}

static int n_compared;

/* Reference and evaluator must both succeed and agree bit for bit. */
static void tc_check(tcase *t, const char *what)
{
    pc_error err, rerr;
    pc_tensor *outs[4] = {0};
    pc_data **ref = NULL;
    CHECK_MSG(pc_eval_supports(t->n), "%s: pc_eval_supports is false", what);
    pc_data *none[1] = {NULL}; /* not NULL: the reference memcpy's from it even for zero inputs */
    pc_status rst = pc_ref_run(t->m, 0, none, &ref, &rerr);
    pc_status est = tc_eval(t, outs, 1 << 20, &err);
    CHECK_MSG(rst == PC_OK, "%s: reference: %s", what, rerr.message);
    CHECK_MSG(est == PC_OK, "%s: evaluator: %s", what, err.message);
    if (rst == PC_OK && est == PC_OK) {
        for (uint32_t i = 0; i < t->n->n_outputs; i++) {
            pc_data *e = pc_data_wrap_tensor(outs[i], &err);
            pc_compare_result res;
            pc_compare_outcome o = pc_data_compare_exact(ref[i], e, &res);
            char a[96], b[96];
            CHECK_MSG(o == PC_COMPARE_EQUAL, "%s: output %u: %s (reference %s, evaluator %s)", what, i,
                      res.detail, pc_data_describe(ref[i], a, sizeof a), pc_data_describe(e, b, sizeof b));
            bool has_float =
                e->dtype == PC_DTYPE_FLOAT || e->dtype == PC_DTYPE_DOUBLE || e->dtype == PC_DTYPE_FLOAT16;
            if (o == PC_COMPARE_EQUAL && !has_float)
                CHECK_MSG(memcmp(ref[i]->data, e->data, e->n_bytes) == 0, "%s: output %u bytes differ", what,
                          i);
            pc_data_unref(e);
            n_compared++;
        }
    }
    if (rst == PC_OK) pc_ref_free_outputs(t->m, ref);
    pc_model_free(t->m);
}

static void tc_expect(tcase *t, const char *what, uint64_t max, pc_status want, const char *needle)
{
    pc_error err;
    pc_tensor *outs[4] = {0};
    pc_status st = tc_eval(t, outs, max, &err);
    CHECK_MSG(st == want, "%s: got %s (%s), want %s", what, pc_status_name(st), err.message,
              pc_status_name(want));
    CHECK_MSG(st == PC_OK || strstr(err.message, needle), "%s: message '%s' lacks '%s'", what, err.message,
              needle);
    CHECK_MSG(st == PC_OK || outs[0] == NULL, "%s: an output was left behind", what);
    pc_model_free(t->m);
}

/* ---- shapes used throughout ---- */

typedef struct shp {
    int32_t rank;
    int64_t dims[4];
} shp;

static const shp unary_shapes[] = {{2, {2, 3}}, {0, {0}}, {2, {0, 3}}, {3, {2, 1, 4}}};

/* pairs that broadcast */
static const shp bin_shapes[][2] = {
    {{2, {2, 3}}, {2, {2, 3}}}, {{2, {2, 3}}, {1, {3}}},       {{0, {0}}, {2, {2, 1}}},
    {{2, {2, 0}}, {1, {1}}},    {{3, {3, 1, 2}}, {2, {4, 1}}}, {{0, {0}}, {0, {0}}},
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const pc_dtype all_types[] = {PC_DTYPE_FLOAT,  PC_DTYPE_DOUBLE, PC_DTYPE_FLOAT16, PC_DTYPE_INT8,
                                     PC_DTYPE_UINT8,  PC_DTYPE_INT16,  PC_DTYPE_INT32,   PC_DTYPE_INT64,
                                     PC_DTYPE_UINT32, PC_DTYPE_UINT64, PC_DTYPE_BOOL};

static void test_elementwise(void)
{
    static const char *arith[] = {"Add", "Sub", "Mul", "Div"};
    static const pc_dtype num[] = {PC_DTYPE_FLOAT, PC_DTYPE_DOUBLE, PC_DTYPE_FLOAT16, PC_DTYPE_INT8,
                                   PC_DTYPE_UINT8, PC_DTYPE_INT32,  PC_DTYPE_INT64,   PC_DTYPE_UINT64};
    char what[128];
    for (size_t o = 0; o < N_OF(arith); o++)
        for (size_t d = 0; d < N_OF(num); d++)
            for (size_t s = 0; s < N_OF(bin_shapes); s++) {
                tcase t = tc_new(17);
                tc_rand(&t, num[d], bin_shapes[s][0].rank, bin_shapes[s][0].dims, FILL_ANY);
                tc_rand(&t, num[d], bin_shapes[s][1].rank, bin_shapes[s][1].dims,
                        o == 3 ? FILL_NONZERO : FILL_ANY);
                tc_node(&t, arith[o], 1);
                snprintf(what, sizeof what, "%s %s shapes#%zu", arith[o], pc_dtype_name(num[d]), s);
                tc_check(&t, what);
            }
    /* Mod: fmod 0 (integers only) and 1, every sign combination the random fills give */
    static const pc_dtype mod_types[] = {PC_DTYPE_INT8,   PC_DTYPE_UINT8, PC_DTYPE_INT32, PC_DTYPE_INT64,
                                         PC_DTYPE_UINT64, PC_DTYPE_FLOAT, PC_DTYPE_DOUBLE};
    for (int fm = 0; fm < 2; fm++)
        for (size_t d = 0; d < N_OF(mod_types); d++)
            for (size_t s = 0; s < N_OF(bin_shapes); s++) {
                bool is_float = mod_types[d] == PC_DTYPE_FLOAT || mod_types[d] == PC_DTYPE_DOUBLE;
                tcase t = tc_new(17);
                tc_rand(&t, mod_types[d], bin_shapes[s][0].rank, bin_shapes[s][0].dims, FILL_ANY);
                tc_rand(&t, mod_types[d], bin_shapes[s][1].rank, bin_shapes[s][1].dims, FILL_NONZERO);
                pc_node *n = tc_node(&t, "Mod", 1);
                pc_node_set_attr_int(n, "fmod", fm, NULL);
                snprintf(what, sizeof what, "Mod fmod=%d %s shapes#%zu", fm, pc_dtype_name(mod_types[d]), s);
                if (is_float && !fm)
                    tc_expect(&t, what, 1 << 20, PC_ERR_UNSUPPORTED, "fmod 0");
                else
                    tc_check(&t, what);
            }
    static const char *cmp[] = {"Equal", "Less", "Greater", "Min", "Max"};
    static const pc_dtype cnum[] = {PC_DTYPE_FLOAT, PC_DTYPE_FLOAT16, PC_DTYPE_INT32, PC_DTYPE_INT64,
                                    PC_DTYPE_UINT64};
    for (size_t o = 0; o < N_OF(cmp); o++)
        for (size_t d = 0; d < N_OF(cnum); d++)
            for (size_t s = 0; s < N_OF(bin_shapes); s++) {
                tcase t = tc_new(17);
                tc_rand(&t, cnum[d], bin_shapes[s][0].rank, bin_shapes[s][0].dims, FILL_ANY);
                tc_rand(&t, cnum[d], bin_shapes[s][1].rank, bin_shapes[s][1].dims, FILL_ANY);
                tc_node(&t, cmp[o], 1);
                snprintf(what, sizeof what, "%s %s shapes#%zu", cmp[o], pc_dtype_name(cnum[d]), s);
                tc_check(&t, what);
            }
    /* variadic Min/Max with one and three inputs */
    for (int k = 0; k < 2; k++) {
        tcase t = tc_new(13);
        tc_rand(&t, PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, FILL_ANY);
        if (k) {
            tc_rand(&t, PC_DTYPE_FLOAT, 1, (int64_t[]){3}, FILL_ANY);
            tc_rand(&t, PC_DTYPE_FLOAT, 3, (int64_t[]){2, 1, 1}, FILL_ANY);
        }
        tc_node(&t, k ? "Max" : "Min", 1);
        tc_check(&t, k ? "Max of three" : "Min of one");
    }
    /* Equal on bools, logic */
    static const char *logic[] = {"Equal", "And", "Or"};
    for (size_t o = 0; o < N_OF(logic); o++)
        for (size_t s = 0; s < N_OF(bin_shapes); s++) {
            tcase t = tc_new(17);
            tc_rand(&t, PC_DTYPE_BOOL, bin_shapes[s][0].rank, bin_shapes[s][0].dims, FILL_ANY);
            tc_rand(&t, PC_DTYPE_BOOL, bin_shapes[s][1].rank, bin_shapes[s][1].dims, FILL_ANY);
            tc_node(&t, logic[o], 1);
            snprintf(what, sizeof what, "%s bool shapes#%zu", logic[o], s);
            tc_check(&t, what);
        }
    /* unary */
    static const struct {
        const char *op;
        pc_dtype types[6];
    } un[] = {
        {"Neg",
         {PC_DTYPE_FLOAT, PC_DTYPE_FLOAT16, PC_DTYPE_INT8, PC_DTYPE_INT32, PC_DTYPE_INT64, PC_DTYPE_DOUBLE}},
        {"Abs",
         {PC_DTYPE_FLOAT, PC_DTYPE_FLOAT16, PC_DTYPE_INT8, PC_DTYPE_UINT8, PC_DTYPE_INT64, PC_DTYPE_DOUBLE}},
        {"Sqrt", {PC_DTYPE_FLOAT, PC_DTYPE_FLOAT16, PC_DTYPE_DOUBLE}},
        {"Reciprocal", {PC_DTYPE_FLOAT, PC_DTYPE_FLOAT16, PC_DTYPE_DOUBLE}},
        {"Not", {PC_DTYPE_BOOL}},
        {"Identity", {PC_DTYPE_FLOAT, PC_DTYPE_FLOAT16, PC_DTYPE_INT32, PC_DTYPE_BOOL, PC_DTYPE_UINT64}},
    };
    for (size_t o = 0; o < N_OF(un); o++)
        for (size_t d = 0; d < 6 && un[o].types[d]; d++)
            for (size_t s = 0; s < N_OF(unary_shapes); s++) {
                tcase t = tc_new(17);
                tc_rand(&t, un[o].types[d], unary_shapes[s].rank, unary_shapes[s].dims,
                        strcmp(un[o].op, "Sqrt") == 0 ? FILL_NONNEG : FILL_ANY);
                tc_node(&t, un[o].op, 1);
                snprintf(what, sizeof what, "%s %s shape#%zu", un[o].op, pc_dtype_name(un[o].types[d]), s);
                tc_check(&t, what);
            }
    /* Where: three-way broadcast */
    static const pc_dtype wt[] = {PC_DTYPE_FLOAT, PC_DTYPE_INT64, PC_DTYPE_FLOAT16, PC_DTYPE_BOOL};
    for (size_t d = 0; d < N_OF(wt); d++)
        for (size_t s = 0; s < N_OF(bin_shapes); s++) {
            tcase t = tc_new(17);
            tc_rand(&t, PC_DTYPE_BOOL, bin_shapes[s][0].rank, bin_shapes[s][0].dims, FILL_ANY);
            tc_rand(&t, wt[d], bin_shapes[s][1].rank, bin_shapes[s][1].dims, FILL_ANY);
            tc_rand(&t, wt[d], 1, (int64_t[]){1}, FILL_ANY);
            tc_node(&t, "Where", 1);
            snprintf(what, sizeof what, "Where %s shapes#%zu", pc_dtype_name(wt[d]), s);
            tc_check(&t, what);
        }
}

static void test_cast(void)
{
    char what[128];
    for (size_t a = 0; a < N_OF(all_types); a++)
        for (size_t b = 0; b < N_OF(all_types); b++)
            for (size_t s = 0; s < 2; s++) {
                tcase t = tc_new(19);
                tc_rand(&t, all_types[a], unary_shapes[s * 2].rank, unary_shapes[s * 2].dims, FILL_NONNEG);
                pc_node_set_attr_int(tc_node(&t, "Cast", 1), "to", all_types[b], NULL);
                snprintf(what, sizeof what, "Cast %s -> %s shape#%zu", pc_dtype_name(all_types[a]),
                         pc_dtype_name(all_types[b]), s * 2);
                tc_check(&t, what);
            }
    /* values with fractions, negative: float -> signed ints truncate toward zero */
    static const pc_dtype to[] = {PC_DTYPE_INT8, PC_DTYPE_INT32, PC_DTYPE_INT64, PC_DTYPE_FLOAT16,
                                  PC_DTYPE_BOOL};
    for (size_t b = 0; b < N_OF(to); b++) {
        tcase t = tc_new(19);
        tc_rand(&t, PC_DTYPE_FLOAT, 2, (int64_t[]){4, 8}, FILL_ANY);
        pc_node_set_attr_int(tc_node(&t, "Cast", 1), "to", to[b], NULL);
        snprintf(what, sizeof what, "Cast float -> %s (negative, fractional)", pc_dtype_name(to[b]));
        tc_check(&t, what);
    }
}

static void test_shape_ops(void)
{
    char what[128];
    /* Shape with start/end (opset 15) and without */
    static const int64_t se[][2] = {{0, 99}, {1, 99}, {-2, 99}, {0, -1}, {2, 1}, {-9, 9}};
    for (size_t k = 0; k < N_OF(se); k++) {
        tcase t = tc_new(15);
        tc_rand(&t, PC_DTYPE_FLOAT, 3, (int64_t[]){2, 0, 5}, FILL_ANY);
        pc_node *n = tc_node(&t, "Shape", 1);
        pc_node_set_attr_int(n, "start", se[k][0], NULL);
        if (se[k][1] != 99) pc_node_set_attr_int(n, "end", se[k][1], NULL);
        snprintf(what, sizeof what, "Shape start %lld end %lld", (long long)se[k][0], (long long)se[k][1]);
        tc_check(&t, what);
    }
    for (size_t s = 0; s < N_OF(unary_shapes); s++) {
        tcase t = tc_new(13);
        tc_rand(&t, PC_DTYPE_INT32, unary_shapes[s].rank, unary_shapes[s].dims, FILL_ANY);
        tc_node(&t, "Shape", 1);
        tc_check(&t, "Shape opset 13");
        t = tc_new(13);
        tc_rand(&t, PC_DTYPE_BOOL, unary_shapes[s].rank, unary_shapes[s].dims, FILL_ANY);
        tc_node(&t, "Size", 1);
        tc_check(&t, "Size");
    }
    /* Shape and Size read only dims: any element type, strings included */
    {
        tcase t = tc_new(13);
        char name[] = "x0";
        pt_const(t.m, name, PC_DTYPE_STRING, 2, (int64_t[]){2, 3}, NULL);
        tc_add_name(&t, name);
        tc_node(&t, "Shape", 1);
        pc_tensor *outs[1] = {0};
        pc_error err;
        CHECK(pc_eval_supports(t.n));
        CHECK_OK(tc_eval(&t, outs, 16, &err), &err);
        CHECK(outs[0] && outs[0]->n_elements == 2 && ((int64_t *)outs[0]->data)[0] == 2 &&
              ((int64_t *)outs[0]->data)[1] == 3);
        pc_model_free(t.m);
    }
    /* Gather: axes, negative indices, scalar indices, empty */
    static const struct {
        int64_t axis;
        int32_t irank;
        int64_t idims[2];
        int64_t vals[6];
    } g[] = {
        {0, 1, {3}, {0, -1, 1}}, {1, 2, {2, 2}, {-3, 2, 0, 1}}, {-1, 0, {0}, {-1}},
        {0, 1, {0}, {0}},        {2, 1, {2}, {3, -4}},
    };
    for (size_t k = 0; k < N_OF(g); k++) {
        static const pc_dtype gt[] = {PC_DTYPE_FLOAT, PC_DTYPE_INT64, PC_DTYPE_FLOAT16, PC_DTYPE_UINT8};
        for (size_t d = 0; d < N_OF(gt); d++)
            for (int it = 0; it < 2; it++) {
                tcase t = tc_new(13);
                tc_rand(&t, gt[d], 3, (int64_t[]){2, 3, 4}, FILL_ANY);
                size_t n =
                    g[k].irank == 0 ? 1 : (size_t)(g[k].idims[0] * (g[k].irank > 1 ? g[k].idims[1] : 1));
                char name[16];
                snprintf(name, sizeof name, "x%u", t.n_in);
                pc_value *iv =
                    pt_const(t.m, name, it ? PC_DTYPE_INT32 : PC_DTYPE_INT64, g[k].irank, g[k].idims, NULL);
                for (size_t j = 0; j < n; j++) {
                    if (it)
                        ((int32_t *)iv->initializer->data)[j] = (int32_t)g[k].vals[j];
                    else
                        ((int64_t *)iv->initializer->data)[j] = g[k].vals[j];
                }
                tc_add_name(&t, name);
                pc_node_set_attr_int(tc_node(&t, "Gather", 1), "axis", g[k].axis, NULL);
                snprintf(what, sizeof what, "Gather case %zu %s idx %s", k, pc_dtype_name(gt[d]),
                         it ? "i32" : "i64");
                tc_check(&t, what);
            }
    }
    /* Concat */
    static const int64_t cax[] = {0, 1, -1, 2};
    for (size_t k = 0; k < N_OF(cax); k++) {
        tcase t = tc_new(13);
        int64_t d0[3] = {2, 3, 2}, d1[3] = {2, 3, 2}, d2[3] = {2, 3, 2};
        int32_t a = (int32_t)(cax[k] < 0 ? cax[k] + 3 : cax[k]);
        d0[a] = 1, d1[a] = 0, d2[a] = 3;
        tc_rand(&t, PC_DTYPE_INT64, 3, d0, FILL_ANY);
        tc_rand(&t, PC_DTYPE_INT64, 3, d1, FILL_ANY);
        tc_rand(&t, PC_DTYPE_INT64, 3, d2, FILL_ANY);
        pc_node_set_attr_int(tc_node(&t, "Concat", 1), "axis", cax[k], NULL);
        snprintf(what, sizeof what, "Concat axis %lld", (long long)cax[k]);
        tc_check(&t, what);
    }
    /* Reshape */
    static const struct {
        size_t n;
        int64_t v[4];
    } rs[] = {{2, {3, -1}}, {2, {0, -1}}, {1, {-1}}, {3, {2, 3, 2}}, {4, {1, 12, 1, 1}}, {3, {0, 0, -1}}};
    for (size_t k = 0; k < N_OF(rs); k++) {
        tcase t = tc_new(14);
        tc_rand(&t, PC_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 2}, FILL_ANY);
        tc_ints(&t, PC_DTYPE_INT64, rs[k].n, rs[k].v, false);
        tc_node(&t, "Reshape", 1);
        snprintf(what, sizeof what, "Reshape case %zu", k);
        tc_check(&t, what);
    }
    {
        tcase t = tc_new(14); /* allowzero: a 0 is a real 0 */
        tc_rand(&t, PC_DTYPE_FLOAT, 2, (int64_t[]){0, 3}, FILL_ANY);
        tc_ints(&t, PC_DTYPE_INT64, 3, (int64_t[]){3, 0, 5}, false);
        pc_node_set_attr_int(tc_node(&t, "Reshape", 1), "allowzero", 1, NULL);
        tc_check(&t, "Reshape allowzero");
    }
    /* Flatten */
    static const int64_t fax[] = {0, 1, 2, 3, -1, -3};
    for (size_t k = 0; k < N_OF(fax); k++) {
        tcase t = tc_new(13);
        tc_rand(&t, PC_DTYPE_FLOAT16, 3, (int64_t[]){2, 3, 4}, FILL_ANY);
        pc_node_set_attr_int(tc_node(&t, "Flatten", 1), "axis", fax[k], NULL);
        snprintf(what, sizeof what, "Flatten axis %lld", (long long)fax[k]);
        tc_check(&t, what);
    }
    /* Squeeze / Unsqueeze: attribute form (11) and input form (13) */
    static const struct {
        size_t n;
        int64_t v[3];
    } sq[] = {{0, {0}}, {1, {0}}, {2, {-1, 2}}, {1, {2}}};
    for (size_t k = 0; k < N_OF(sq); k++)
        for (int form = 0; form < 2; form++) {
            tcase t = tc_new(form ? 13 : 11);
            tc_rand(&t, PC_DTYPE_INT32, 4, (int64_t[]){1, 3, 1, 1}, FILL_ANY);
            if (form && sq[k].n) tc_ints(&t, PC_DTYPE_INT64, sq[k].n, sq[k].v, false);
            pc_node *n = tc_node(&t, "Squeeze", 1);
            if (!form && sq[k].n) pc_node_set_attr_ints(n, "axes", sq[k].n, sq[k].v, NULL);
            snprintf(what, sizeof what, "Squeeze case %zu opset %d", k, form ? 13 : 11);
            tc_check(&t, what);
        }
    static const struct {
        size_t n;
        int64_t v[3];
    } us[] = {{1, {0}}, {2, {0, -1}}, {3, {1, 3, 5}}, {1, {-2}}};
    for (size_t k = 0; k < N_OF(us); k++)
        for (int form = 0; form < 2; form++) {
            tcase t = tc_new(form ? 13 : 11);
            tc_rand(&t, PC_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 2}, FILL_ANY);
            if (form) tc_ints(&t, PC_DTYPE_INT64, us[k].n, us[k].v, false);
            pc_node *n = tc_node(&t, "Unsqueeze", 1);
            if (!form) pc_node_set_attr_ints(n, "axes", us[k].n, us[k].v, NULL);
            snprintf(what, sizeof what, "Unsqueeze case %zu opset %d", k, form ? 13 : 11);
            tc_check(&t, what);
        }
    {
        tcase t = tc_new(13);
        tc_rand(&t, PC_DTYPE_FLOAT, 0, NULL, FILL_ANY);
        tc_ints(&t, PC_DTYPE_INT64, 1, (int64_t[]){0}, false);
        tc_node(&t, "Unsqueeze", 1);
        tc_check(&t, "Unsqueeze of a scalar");
    }
    /* Transpose */
    static const struct {
        size_t n;
        int64_t p[4];
    } tp[] = {{0, {0}}, {3, {0, 2, 1}}, {3, {2, 0, 1}}, {3, {1, 2, 0}}};
    for (size_t k = 0; k < N_OF(tp); k++)
        for (size_t s = 0; s < 2; s++) {
            tcase t = tc_new(13);
            tc_rand(&t, PC_DTYPE_DOUBLE, 3, s ? (int64_t[]){2, 0, 3} : (int64_t[]){2, 3, 4}, FILL_ANY);
            pc_node *n = tc_node(&t, "Transpose", 1);
            if (tp[k].n) pc_node_set_attr_ints(n, "perm", tp[k].n, tp[k].p, NULL);
            snprintf(what, sizeof what, "Transpose case %zu shape %zu", k, s);
            tc_check(&t, what);
        }
    /* Slice: negative, clamped, stepped (opset 13) and the attribute form (opset 9) */
    static const struct {
        size_t n;
        int64_t st[2], en[2], ax[2], sp[2];
        bool axes, steps;
    } sl[] = {
        {1, {1}, {3}, {0}, {1}, false, false},
        {2, {-1, 0}, {-100, 100}, {1, 0}, {-1, 2}, true, true},
        {1, {INT64_MAX}, {INT64_MIN}, {-1}, {-2}, true, true},
        {2, {0, 1}, {INT64_MAX, -1}, {2, 1}, {3, 1}, true, true},
        {1, {2}, {1}, {0}, {1}, true, false},
        {1, {-5}, {5}, {1}, {1}, true, false},
    };
    for (size_t k = 0; k < N_OF(sl); k++) {
        tcase t = tc_new(13);
        tc_rand(&t, PC_DTYPE_INT64, 3, (int64_t[]){3, 4, 5}, FILL_ANY);
        tc_ints(&t, PC_DTYPE_INT64, sl[k].n, sl[k].st, false);
        tc_ints(&t, PC_DTYPE_INT64, sl[k].n, sl[k].en, false);
        if (sl[k].axes || sl[k].steps) {
            if (sl[k].axes)
                tc_ints(&t, PC_DTYPE_INT64, sl[k].n, sl[k].ax, false);
            else
                tc_skip(&t);
        }
        if (sl[k].steps) tc_ints(&t, PC_DTYPE_INT32, sl[k].n, sl[k].sp, false);
        tc_node(&t, "Slice", 1);
        snprintf(what, sizeof what, "Slice case %zu", k);
        tc_check(&t, what);
    }
    {
        tcase t = tc_new(9);
        tc_rand(&t, PC_DTYPE_FLOAT, 2, (int64_t[]){4, 5}, FILL_ANY);
        pc_node *n = tc_node(&t, "Slice", 1);
        pc_node_set_attr_ints(n, "starts", 2, (int64_t[]){1, -3}, NULL);
        pc_node_set_attr_ints(n, "ends", 2, (int64_t[]){1000, -1}, NULL);
        pc_node_set_attr_ints(n, "axes", 2, (int64_t[]){0, 1}, NULL);
        tc_check(&t, "Slice opset 9 attributes");
    }
    /* Range */
    static const struct {
        pc_dtype dt;
        int64_t s, l, d;
    } rg[] = {{PC_DTYPE_INT64, 0, 5, 1}, {PC_DTYPE_INT32, 10, -3, -4}, {PC_DTYPE_INT64, 3, 3, 1},
              {PC_DTYPE_FLOAT, 1, 9, 3}, {PC_DTYPE_DOUBLE, -2, 7, 2},  {PC_DTYPE_INT64, 5, 0, 1}};
    for (size_t k = 0; k < N_OF(rg); k++) {
        tcase t = tc_new(13);
        tc_ints(&t, rg[k].dt, 1, &rg[k].s, true);
        tc_ints(&t, rg[k].dt, 1, &rg[k].l, true);
        tc_ints(&t, rg[k].dt, 1, &rg[k].d, true);
        tc_node(&t, "Range", 1);
        snprintf(what, sizeof what, "Range case %zu", k);
        tc_check(&t, what);
    }
    /* ConstantOfShape: default float zero, an int64 value, an empty shape */
    for (int k = 0; k < 3; k++) {
        tcase t = tc_new(13);
        tc_ints(&t, PC_DTYPE_INT64, k == 2 ? 0 : 2, (int64_t[]){2, 3}, false);
        pc_node *n = tc_node(&t, "ConstantOfShape", 1);
        if (k == 1) {
            pc_tensor *v = pc_tensor_create(t.m, "v", PC_DTYPE_INT64, 1, (int64_t[]){1}, NULL);
            ((int64_t *)v->data)[0] = -7;
            pc_node_set_attr_tensor(n, "value", v, NULL);
        }
        snprintf(what, sizeof what, "ConstantOfShape case %d", k);
        tc_check(&t, what);
    }
    /* Expand */
    static const struct {
        shp x;
        size_t n;
        int64_t v[3];
    } ex[] = {{{2, {3, 1}}, 3, {2, 3, 4}}, {{1, {1}}, 0, {0}}, {{2, {2, 3}}, 1, {1}}, {{0, {0}}, 2, {0, 2}}};
    for (size_t k = 0; k < N_OF(ex); k++) {
        tcase t = tc_new(13);
        tc_rand(&t, PC_DTYPE_FLOAT16, ex[k].x.rank, ex[k].x.dims, FILL_ANY);
        tc_ints(&t, PC_DTYPE_INT64, ex[k].n, ex[k].v, false);
        tc_node(&t, "Expand", 1);
        snprintf(what, sizeof what, "Expand case %zu", k);
        tc_check(&t, what);
    }
    /* Constant forms */
    for (int k = 0; k < 4; k++) {
        tcase t = tc_new(13);
        pc_node *n = tc_node(&t, "Constant", 1);
        if (k == 0) pc_node_set_attr_int(n, "value_int", -3, NULL);
        if (k == 1) pc_node_set_attr_ints(n, "value_ints", 3, (int64_t[]){4, 5, 6}, NULL);
        if (k == 2) pc_node_set_attr_float(n, "value_float", 0.1f, NULL);
        if (k == 3) {
            pc_tensor *v = pc_tensor_create(t.m, "v", PC_DTYPE_INT32, 2, (int64_t[]){2, 2}, NULL);
            for (int i = 0; i < 4; i++)
                ((int32_t *)v->data)[i] = i * 7 - 5;
            pc_node_set_attr_tensor(n, "value", v, NULL);
        }
        snprintf(what, sizeof what, "Constant form %d", k);
        tc_check(&t, what);
    }
}

static void test_reduce(void)
{
    static const char *ops[] = {"ReduceSum", "ReduceProd", "ReduceMin", "ReduceMax"};
    static const struct {
        size_t n;
        int64_t axes[2];
        int keepdims;
    } cfg[] = {{0, {0}, 1}, {0, {0}, 0}, {1, {1}, 1}, {2, {0, -1}, 0}, {1, {-2}, 0}};
    static const int64_t opsets[] = {11, 13, 18};
    static const pc_dtype types[] = {PC_DTYPE_INT64, PC_DTYPE_INT32};
    char what[128];
    for (size_t o = 0; o < N_OF(ops); o++)
        for (size_t k = 0; k < N_OF(cfg); k++)
            for (size_t v = 0; v < N_OF(opsets); v++)
                for (size_t d = 0; d < N_OF(types); d++) {
                    bool input_form = opsets[v] >= (strcmp(ops[o], "ReduceSum") == 0 ? 13 : 18);
                    tcase t = tc_new(opsets[v]);
                    tc_rand(&t, types[d], 3, (int64_t[]){2, 3, 2}, FILL_ANY);
                    if (input_form && cfg[k].n) tc_ints(&t, PC_DTYPE_INT64, cfg[k].n, cfg[k].axes, false);
                    pc_node *n = tc_node(&t, ops[o], 1);
                    if (!input_form && cfg[k].n)
                        pc_node_set_attr_ints(n, "axes", cfg[k].n, cfg[k].axes, NULL);
                    pc_node_set_attr_int(n, "keepdims", cfg[k].keepdims, NULL);
                    snprintf(what, sizeof what, "%s cfg %zu opset %lld %s", ops[o], k, (long long)opsets[v],
                             pc_dtype_name(types[d]));
                    tc_check(&t, what);
                }
    /* noop_with_empty_axes, and an empty reduction of a sum/product */
    {
        tcase t = tc_new(18);
        tc_rand(&t, PC_DTYPE_INT64, 2, (int64_t[]){2, 3}, FILL_ANY);
        pc_node_set_attr_int(tc_node(&t, "ReduceMax", 1), "noop_with_empty_axes", 1, NULL);
        tc_check(&t, "ReduceMax noop_with_empty_axes");
        t = tc_new(13);
        tc_rand(&t, PC_DTYPE_INT64, 2, (int64_t[]){0, 3}, FILL_ANY);
        tc_ints(&t, PC_DTYPE_INT64, 1, (int64_t[]){0}, false);
        tc_node(&t, "ReduceSum", 1);
        tc_check(&t, "ReduceSum over an empty axis");
        t = tc_new(13);
        tc_rand(&t, PC_DTYPE_INT32, 2, (int64_t[]){2, 0}, FILL_ANY);
        pc_node_set_attr_ints(tc_node(&t, "ReduceProd", 1), "axes", 1, (int64_t[]){1}, NULL);
        tc_check(&t, "ReduceProd over an empty axis");
    }
}

static void test_errors(void)
{
    tcase t = tc_new(13);
    tc_rand(&t, PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, FILL_ANY);
    tc_ints(&t, PC_DTYPE_INT64, 2, (int64_t[]){1, 2}, false);
    tc_node(&t, "Gather", 1);
    tc_expect(&t, "Gather index 2 of 2", 1 << 20, PC_ERR_VALUE, "y0");

    t = tc_new(13);
    tc_rand(&t, PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, FILL_ANY);
    tc_ints(&t, PC_DTYPE_INT64, 1, (int64_t[]){-3}, false);
    tc_node(&t, "Gather", 1);
    tc_expect(&t, "Gather index -3 of 2", 1 << 20, PC_ERR_VALUE, "outside");

    t = tc_new(13);
    tc_rand(&t, PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, FILL_ANY);
    tc_ints(&t, PC_DTYPE_INT64, 1, (int64_t[]){0}, false);
    pc_node_set_attr_int(tc_node(&t, "Gather", 1), "axis", 2, NULL);
    tc_expect(&t, "Gather axis 2 of rank 2", 1 << 20, PC_ERR_ATTRIBUTE, "axis 2");

    t = tc_new(13);
    tc_rand(&t, PC_DTYPE_INT32, 2, (int64_t[]){2, 3}, FILL_ANY);
    tc_ints(&t, PC_DTYPE_INT64, 1, (int64_t[]){1}, false);
    tc_node(&t, "Squeeze", 1);
    tc_expect(&t, "Squeeze of a dim of 3", 1 << 20, PC_ERR_SHAPE, "squeeze axis 1");

    t = tc_new(13);
    tc_rand(&t, PC_DTYPE_INT32, 2, (int64_t[]){1, 3}, FILL_ANY);
    tc_ints(&t, PC_DTYPE_INT64, 1, (int64_t[]){5}, false);
    tc_node(&t, "Unsqueeze", 1);
    tc_expect(&t, "Unsqueeze axis 5 of rank 3", 1 << 20, PC_ERR_ATTRIBUTE, "axis 5");

    t = tc_new(18);
    tc_rand(&t, PC_DTYPE_INT64, 2, (int64_t[]){2, 3}, FILL_ANY);
    tc_ints(&t, PC_DTYPE_INT64, 1, (int64_t[]){-3}, false);
    tc_node(&t, "ReduceSum", 1);
    tc_expect(&t, "ReduceSum axis -3 of rank 2", 1 << 20, PC_ERR_ATTRIBUTE, "axis -3");

    t = tc_new(13);
    tc_rand(&t, PC_DTYPE_FLOAT, 2, (int64_t[]){1, 1}, FILL_ANY);
    tc_ints(&t, PC_DTYPE_INT64, 2, (int64_t[]){1000, 1000}, false);
    tc_node(&t, "Expand", 1);
    tc_expect(&t, "Expand past the budget", 1000, PC_ERR_BUDGET, "1000000 elements");

    t = tc_new(13);
    tc_ints(&t, PC_DTYPE_INT64, 3, (int64_t[]){INT64_MAX / 2, 4, 4}, false);
    tc_node(&t, "ConstantOfShape", 1);
    tc_expect(&t, "ConstantOfShape overflowing", 1 << 20, PC_ERR_BUDGET, "limit");

    t = tc_new(13);
    tc_ints(&t, PC_DTYPE_INT64, 1, (int64_t[]){0}, true);
    tc_ints(&t, PC_DTYPE_INT64, 1, (int64_t[]){INT64_MAX}, true);
    tc_ints(&t, PC_DTYPE_INT64, 1, (int64_t[]){1}, true);
    tc_node(&t, "Range", 1);
    tc_expect(&t, "Range past the budget", 1 << 20, PC_ERR_BUDGET, "Range");

    t = tc_new(13);
    tc_ints(&t, PC_DTYPE_INT32, 2, (int64_t[]){7, 8}, false);
    tc_ints(&t, PC_DTYPE_INT32, 2, (int64_t[]){2, 0}, false);
    tc_node(&t, "Div", 1);
    tc_expect(&t, "integer division by zero", 1 << 20, PC_ERR_UNSUPPORTED, "division by zero");

    t = tc_new(13);
    tc_ints(&t, PC_DTYPE_FLOAT, 2, (int64_t[]){100, 300}, false);
    pc_node_set_attr_int(tc_node(&t, "Cast", 1), "to", PC_DTYPE_INT8, NULL);
    tc_expect(&t, "Cast 300.0 to int8", 1 << 20, PC_ERR_UNSUPPORTED, "outside the range of int8");

    t = tc_new(13);
    tc_ints(&t, PC_DTYPE_DOUBLE, 1, (int64_t[]){-1}, false);
    pc_node_set_attr_int(tc_node(&t, "Cast", 1), "to", PC_DTYPE_UINT32, NULL);
    tc_expect(&t, "Cast -1.0 to uint32", 1 << 20, PC_ERR_UNSUPPORTED, "outside");

    t = tc_new(13);
    tc_rand(&t, PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, FILL_ANY);
    tc_rand(&t, PC_DTYPE_FLOAT, 1, (int64_t[]){4}, FILL_ANY);
    tc_node(&t, "Add", 1);
    tc_expect(&t, "Add [2,3] + [4]", 1 << 20, PC_ERR_SHAPE, "broadcast");

    t = tc_new(13);
    tc_rand(&t, PC_DTYPE_FLOAT, 1, (int64_t[]){2}, FILL_ANY);
    tc_rand(&t, PC_DTYPE_INT32, 1, (int64_t[]){2}, FILL_ANY);
    tc_node(&t, "Mul", 1);
    tc_expect(&t, "Mul float * int32", 1 << 20, PC_ERR_TYPE, "int32");

    t = tc_new(13);
    tc_rand(&t, PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, FILL_ANY);
    tc_ints(&t, PC_DTYPE_INT64, 2, (int64_t[]){-1, -1}, false);
    tc_node(&t, "Reshape", 1);
    tc_expect(&t, "Reshape with two -1", 1 << 20, PC_ERR_SHAPE, "-1");

    t = tc_new(13);
    tc_rand(&t, PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, FILL_ANY);
    pc_node_set_attr_ints(tc_node(&t, "Transpose", 1), "perm", 2, (int64_t[]){0, 0}, NULL);
    tc_expect(&t, "Transpose perm 0,0", 1 << 20, PC_ERR_ATTRIBUTE, "permutation");

    /* the fold budget is inclusive: exactly max elements folds, one fewer allowed does not */
    for (int k = 0; k < 2; k++) {
        t = tc_new(13);
        tc_rand(&t, PC_DTYPE_FLOAT, 1, (int64_t[]){6}, FILL_ANY);
        tc_rand(&t, PC_DTYPE_FLOAT, 1, (int64_t[]){6}, FILL_ANY);
        tc_node(&t, "Add", 1);
        tc_expect(&t, k ? "Add of 6 over a budget of 5" : "Add of 6 within a budget of 6", k ? 5 : 6,
                  k ? PC_ERR_BUDGET : PC_OK, "6");
    }

    /* what the verifier would refuse, handed to the evaluator directly: refused, never read */
    t = tc_new(13);
    tc_ints(&t, PC_DTYPE_FLOAT, 2, (int64_t[]){1, 2}, false);
    pc_node_set_attr_int(tc_node(&t, "Cast", 1), "to", 999, NULL);
    tc_expect(&t, "Cast to 999", 1 << 20, PC_ERR_ATTRIBUTE, "999");

    t = tc_new(13);
    tc_rand(&t, PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, FILL_ANY);
    tc_rand(&t, PC_DTYPE_INT8, 1, (int64_t[]){2}, FILL_NONNEG);
    tc_node(&t, "Gather", 1);
    tc_expect(&t, "Gather with int8 indices", 1 << 20, PC_ERR_TYPE, "int8");

    t = tc_new(13);
    tc_rand(&t, PC_DTYPE_FLOAT, 1, (int64_t[]){2}, FILL_ANY);
    tc_rand(&t, PC_DTYPE_INT64, 1, (int64_t[]){2}, FILL_ANY);
    pc_node_set_attr_int(tc_node(&t, "Concat", 1), "axis", 0, NULL);
    tc_expect(&t, "Concat of float and int64", 1 << 20, PC_ERR_TYPE, "int64");

    /* index inputs the evaluator cannot read: more values than any rank, or not integers (a bad status
     * must stop the op: its counts are unset) */
    {
        int64_t zeros[PC_MAX_RANK + 1] = {0}, ones[PC_MAX_RANK + 1];
        for (int i = 0; i <= PC_MAX_RANK; i++)
            ones[i] = 1;
        t = tc_new(13);
        tc_rand(&t, PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, FILL_ANY);
        tc_ints(&t, PC_DTYPE_INT64, PC_MAX_RANK + 1, zeros, false);
        tc_ints(&t, PC_DTYPE_INT64, PC_MAX_RANK + 1, ones, false);
        tc_node(&t, "Slice", 1);
        char needle[40];
        snprintf(needle, sizeof needle, "starts has %d values", PC_MAX_RANK + 1);
        tc_expect(&t, "Slice with more starts than any rank", 1 << 20, PC_ERR_SHAPE, needle);
    }

    t = tc_new(13);
    tc_rand(&t, PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, FILL_ANY);
    tc_ints(&t, PC_DTYPE_INT64, 1, (int64_t[]){0}, false);
    tc_ints(&t, PC_DTYPE_FLOAT, 1, (int64_t[]){1}, false);
    tc_node(&t, "Slice", 1);
    tc_expect(&t, "Slice with float ends", 1 << 20, PC_ERR_TYPE, "ends must be int32 or int64");

    /* a negative output dim is refused where outputs are made, naming it */
    t = tc_new(13);
    tc_ints(&t, PC_DTYPE_INT64, 2, (int64_t[]){2, -1}, false);
    tc_node(&t, "ConstantOfShape", 1);
    tc_expect(&t, "ConstantOfShape [2, -1]", 1 << 20, PC_ERR_SHAPE, "dim 1 would be -1");

    /* what pc_eval_supports refuses before reading inputs */
    t = tc_new(13);
    tc_rand(&t, PC_DTYPE_INT32, 1, (int64_t[]){2}, FILL_ANY);
    CHECK(!pc_eval_supports(tc_node(&t, "Sqrt", 1)));
    pc_model_free(t.m);
    t = tc_new(13);
    tc_rand(&t, PC_DTYPE_FLOAT, 1, (int64_t[]){2}, FILL_ANY);
    CHECK(!pc_eval_supports(tc_node(&t, "Relu", 1)));
    tc_expect(&t, "Relu", 1 << 20, PC_ERR_UNSUPPORTED, "Relu");
    t = tc_new(13);
    tc_rand(&t, PC_DTYPE_FLOAT, 1, (int64_t[]){2}, FILL_ANY);
    CHECK(!pc_eval_supports(tc_node(&t, "ReduceSum", 1)));
    tc_expect(&t, "ReduceSum of floats", 1 << 20, PC_ERR_UNSUPPORTED, "only integers");
    t = tc_new(13);
    tc_rand(&t, PC_DTYPE_FLOAT, 1, (int64_t[]){2}, FILL_ANY);
    pc_node *bf = tc_node(&t, "Cast", 1);
    pc_node_set_attr_int(bf, "to", PC_DTYPE_BFLOAT16, NULL);
    CHECK(!pc_eval_supports(bf));
    tc_expect(&t, "Cast to bfloat16", 1 << 20, PC_ERR_UNSUPPORTED, "bfloat16");
}

int main(void)
{
    test_elementwise();
    test_cast();
    test_shape_ops();
    test_reduce();
    test_errors();
    printf("test_eval: %d outputs compared bit-exactly with the reference\n", n_compared);
    return pc_test_finish("test_eval");
}
