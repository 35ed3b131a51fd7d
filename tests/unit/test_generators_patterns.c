/* The pattern library's value and type reach (generators/gen_patterns.c, issue 14): over generated patterns
 * cases,
 * - every case verifies and runs on the reference executor, and replays byte-identically from its choices;
 * - every (from, to) pair of the Cast matrix (float, double, float16, int8, uint8, int16, int32, int64,
 * uint32, uint64, bool, same type included) occurs, and chains A -> B -> A occur;
 * - every Cast from a float type to an integer type reads only finite values whose truncation fits the target
 *   (ONNX leaves the rest undefined), watched on the reference run;
 * - integer Div and Mod (fmod 0 and 1) on int32 and int64 read negative dividends and divisors, quotients
 *   where truncation and flooring differ, and never a zero divisor;
 * - the canonical units guarantee cast_removed and node_folded, and the full property check passes;
 * - with each of the two planted faults of these units (cast-same-width-removed, fold-int-div-floor) some
 *   case fails, and no case fails without them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/half.h"
#include "generators/gen.h"
#include "properties/property.h"
#include "reference/reference.h"
#include "tests/test_util.h"

enum { N_CASES = 6000, N_CHECKED = 400 };

static const pc_dtype matrix[] = {
    PC_DTYPE_FLOAT, PC_DTYPE_DOUBLE, PC_DTYPE_FLOAT16, PC_DTYPE_INT8,   PC_DTYPE_UINT8, PC_DTYPE_INT16,
    PC_DTYPE_INT32, PC_DTYPE_INT64,  PC_DTYPE_UINT32,  PC_DTYPE_UINT64, PC_DTYPE_BOOL,
};
enum { N_TYPES = sizeof matrix / sizeof matrix[0] };

static int type_index(pc_dtype t)
{
    for (int i = 0; i < N_TYPES; i++)
        if (matrix[i] == t) return i;
    return -1;
}

static bool is_float(pc_dtype t)
{
    return t == PC_DTYPE_FLOAT || t == PC_DTYPE_DOUBLE || t == PC_DTYPE_FLOAT16;
}

static double get_f(const pc_data *d, uint64_t i)
{
    switch (d->dtype) {
    case PC_DTYPE_FLOAT:
        return ((const float *)d->data)[i];
    case PC_DTYPE_DOUBLE:
        return ((const double *)d->data)[i];
    case PC_DTYPE_FLOAT16:
        return pc_half_to_double(((const uint16_t *)d->data)[i]);
    default:
        return NAN;
    }
}

static int64_t get_i(const pc_data *d, uint64_t i)
{
    return d->dtype == PC_DTYPE_INT32 ? ((const int32_t *)d->data)[i] : ((const int64_t *)d->data)[i];
}

static void int_bounds(pc_dtype t, double *lo, double *hi)
{
    switch (t) {
    case PC_DTYPE_INT8:
        *lo = -128, *hi = 127;
        break;
    case PC_DTYPE_UINT8:
        *lo = 0, *hi = 255;
        break;
    case PC_DTYPE_INT16:
        *lo = -32768, *hi = 32767;
        break;
    case PC_DTYPE_INT32:
        *lo = -2147483648.0, *hi = 2147483647.0;
        break;
    case PC_DTYPE_UINT32:
        *lo = 0, *hi = 4294967295.0;
        break;
    case PC_DTYPE_INT64:
        *lo = -9223372036854775808.0, *hi = 9223372036854775807.0;
        break;
    default: /* uint64 */
        *lo = 0, *hi = 18446744073709551615.0;
        break;
    }
}

typedef struct reach {
    int pairs[N_TYPES][N_TYPES]; /* Cast nodes by (input type, to) */
    int chains;                  /* Cast(Cast(x, B), A) with x of type A != B */
    /* integer Div / Mod (index 0: Div, 1: Mod fmod 0, 2: Mod fmod 1) elements, by what they read */
    int int_nodes[3][2]; /* [op][int64?] nodes */
    int neg_dividend[3], neg_divisor[3];
    int trunc_ne_floor; /* Div elements of opposite signs with a remainder */
    int zero_divisor, bad_float_cast;
    int expect_cast_removed, expect_folded;
    const char *what;
} reach;

/* The reference run's node hook: what integer Div/Mod and float -> integer Casts read. */
static void on_node(void *ctx, const pc_node *n, pc_data *const *ins, pc_data *const *outs)
{
    (void)outs;
    reach *r = ctx;
    if (strcmp(n->op_type, "Cast") == 0 && ins[0] && is_float(ins[0]->dtype)) {
        pc_dtype to = (pc_dtype)pc_node_attr_int(n, "to", 0);
        if (is_float(to) || to == PC_DTYPE_BOOL || type_index(to) < 0) return;
        double lo, hi;
        int_bounds(to, &lo, &hi);
        for (uint64_t i = 0; i < ins[0]->n_elements; i++) {
            double v = trunc(get_f(ins[0], i));
            if (!(v >= lo && v <= hi)) {
                r->bad_float_cast++;
                fprintf(stderr, "%s: Cast '%s' %s -> %s reads %g\n", r->what, n->name,
                        pc_dtype_name(ins[0]->dtype), pc_dtype_name(to), get_f(ins[0], i));
                return;
            }
        }
        return;
    }
    bool div = strcmp(n->op_type, "Div") == 0, mod = strcmp(n->op_type, "Mod") == 0;
    if ((!div && !mod) || !ins[0] || !ins[1]) return;
    pc_dtype t = ins[0]->dtype;
    if (t != PC_DTYPE_INT32 && t != PC_DTYPE_INT64) return;
    int op = div ? 0 : 1 + (pc_node_attr_int(n, "fmod", 0) != 0);
    r->int_nodes[op][t == PC_DTYPE_INT64]++;
    /* the output's shape is the inputs' broadcast; both inputs of these units broadcast from trailing dims,
     * so walking the output with right-aligned indices reads each pair */
    const pc_data *a = ins[0], *b = ins[1];
    int32_t rank = a->rank > b->rank ? a->rank : b->rank;
    int64_t dims[PC_MAX_RANK], idx[PC_MAX_RANK] = {0};
    uint64_t total = 1;
    for (int32_t k = 0; k < rank; k++) {
        int32_t ka = k - (rank - a->rank), kb = k - (rank - b->rank);
        int64_t da = ka >= 0 ? a->dims[ka] : 1, db = kb >= 0 ? b->dims[kb] : 1;
        dims[k] = da > db ? da : db;
        total *= (uint64_t)dims[k];
    }
    for (uint64_t e = 0; e < total; e++) {
        uint64_t ia = 0, ib = 0;
        for (int32_t k = 0; k < rank; k++) {
            int32_t ka = k - (rank - a->rank), kb = k - (rank - b->rank);
            if (ka >= 0) ia = ia * (uint64_t)a->dims[ka] + (uint64_t)(a->dims[ka] == 1 ? 0 : idx[k]);
            if (kb >= 0) ib = ib * (uint64_t)b->dims[kb] + (uint64_t)(b->dims[kb] == 1 ? 0 : idx[k]);
        }
        int64_t x = get_i(a, ia), y = get_i(b, ib);
        if (y == 0) {
            r->zero_divisor++;
            fprintf(stderr, "%s: %s '%s' divides by zero\n", r->what, n->op_type, n->name);
        }
        r->neg_dividend[op] += x < 0;
        r->neg_divisor[op] += y < 0;
        r->trunc_ne_floor += div && y != 0 && x % y != 0 && (x < 0) != (y < 0);
        for (int32_t k = rank - 1; k >= 0; k--) {
            if (++idx[k] < dims[k]) break;
            idx[k] = 0;
        }
    }
}

static void note_casts(reach *r, const pc_model *m)
{
    for (const pc_node *n = m->graph->first; n; n = n->next) {
        if (strcmp(n->op_type, "Cast") != 0 || !n->inputs[0]) continue;
        int from = type_index(n->inputs[0]->type.elem),
            to = type_index((pc_dtype)pc_node_attr_int(n, "to", 0));
        if (from < 0 || to < 0) continue;
        r->pairs[from][to]++;
        const pc_node *p = n->inputs[0]->producer;
        if (p && strcmp(p->op_type, "Cast") == 0 && p->inputs[0] && p->inputs[0]->type.elem == matrix[to] &&
            from != to)
            r->chains++;
    }
}

static bool save(const pc_model *m, uint8_t **bytes, size_t *size)
{
    pc_error err;
    return pc_model_save_bytes(m, bytes, size, &err) == PC_OK;
}

/* Whether the case has one of this units in it: an integer Div/Mod, or a Cast to something other
 * than float (share() Casts to float, the quantized units only from int8/uint8). */
static bool has_new_units(const pc_model *m)
{
    for (const pc_node *n = m->graph->first; n; n = n->next) {
        if ((strcmp(n->op_type, "Div") == 0 || strcmp(n->op_type, "Mod") == 0) && n->inputs[0] &&
            (n->inputs[0]->type.elem == PC_DTYPE_INT32 || n->inputs[0]->type.elem == PC_DTYPE_INT64))
            return true;
        if (strcmp(n->op_type, "Cast") == 0 && n->inputs[0] &&
            (pc_node_attr_int(n, "to", 0) != PC_DTYPE_FLOAT ||
             (n->inputs[0]->type.elem != PC_DTYPE_INT8 && n->inputs[0]->type.elem != PC_DTYPE_UINT8)))
            return true;
    }
    return false;
}

/* Checks a case with every property (the suite's default), under `fault` (NULL: none); true when it fails.
 * *sig gets the failure signature. */
static bool check_fails(const pc_case *c, const char *fault, char *sig, size_t sig_size)
{
    pc_error err;
    pc_fault_reset();
    if (fault) CHECK_OK(pc_fault_enable_list(fault, &err), &err);
    pc_check_config cc;
    pc_check_config_default(&cc);
    pc_check_result res;
    bool failed = false;
    if (pc_case_check(c, &cc, &res, &err) == PC_OK) {
        failed = res.failed;
        if (failed) pc_failure_signature(&res.failure, sig, sig_size);
        pc_check_result_free(&res);
    } else {
        CHECK_MSG(0, "pc_case_check: %s", err.message);
    }
    pc_fault_reset();
    return failed;
}

int main(void)
{
    static reach r;
    pc_gen_config cfg;
    pc_gen_config_default(&cfg);
    cfg.family = "patterns";
    int checked = 0, caught_cast = 0, caught_div = 0;
    for (uint64_t seed = 1; seed <= N_CASES; seed++) {
        char what[64];
        snprintf(what, sizeof what, "patterns seed %llu", (unsigned long long)seed);
        r.what = what;
        pc_choices ch;
        pc_choices_init_random(&ch, seed);
        pc_case c;
        pc_error err;
        pc_status st = pc_case_generate(&cfg, &ch, &c, &err);
        CHECK_MSG(st == PC_OK, "%s: generate: %s", what, err.message);
        if (st != PC_OK) {
            pc_choices_free(&ch);
            continue;
        }
        CHECK_OK(pc_model_verify(c.model, &err), &err);
        note_casts(&r, c.model);
        pc_expect_fired e;
        bool present;
        CHECK_OK(pc_expect_fired_read(c.model, &e, &present, &err), &err);
        r.expect_cast_removed += (int)e.fired[PC_RW_CAST_REMOVED];
        r.expect_folded += (int)e.fired[PC_RW_CONST_FOLDED];

        pc_ref_options o = {.on_node = on_node, .on_node_ctx = &r};
        pc_data **outs = NULL;
        st = pc_ref_run_with_options(c.model, &o, c.n_inputs, c.inputs, &outs, &err);
        CHECK_MSG(st == PC_OK, "%s: reference: %s", what, err.message);
        if (outs) pc_ref_free_outputs(c.model, outs);

        /* replay: the same bytes */
        pc_choices again;
        pc_choices_init_replay(&again, ch.values, ch.n);
        pc_case rc;
        CHECK_OK(pc_case_generate(&cfg, &again, &rc, &err), &err);
        uint8_t *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        CHECK(rc.model && save(c.model, &a, &na) && save(rc.model, &b, &nb));
        CHECK_MSG(a && b && na == nb && memcmp(a, b, na) == 0, "%s: replay differs", what);
        free(a);
        free(b);
        pc_case_free(&rc);
        pc_choices_free(&again);

        /* the full check on the first cases with a new unit: clean without faults; each fault is caught */
        if (checked < N_CHECKED && has_new_units(c.model)) {
            checked++;
            char sig[160] = "";
            CHECK_MSG(!check_fails(&c, NULL, sig, sizeof sig), "%s fails without faults: %s", what, sig);
            caught_cast += check_fails(&c, "cast-same-width-removed", sig, sizeof sig);
            if (check_fails(&c, "fold-int-div-floor", sig, sizeof sig)) {
                caught_div++;
                /* numerics where a Div of constants was folded; the evaluator property on any int Div */
                CHECK_MSG(strncmp(sig, "numerics@fold_constants", 23) == 0 ||
                              strcmp(sig, "evaluator@end-to-end/eval-differs") == 0,
                          "%s: fold-int-div-floor caught as %s", what, sig);
            }
        }
        pc_case_free(&c);
        pc_choices_free(&ch);
    }

    int missing = 0;
    for (int i = 0; i < N_TYPES; i++)
        for (int j = 0; j < N_TYPES; j++)
            if (!r.pairs[i][j]) {
                missing++;
                fprintf(stderr, "no Cast %s -> %s in %d cases\n", pc_dtype_name(matrix[i]),
                        pc_dtype_name(matrix[j]), N_CASES);
            }
    CHECK_MSG(missing == 0, "%d of %d Cast pairs never generated", missing, N_TYPES * N_TYPES);
    CHECK_MSG(r.chains >= 20, "only %d Cast chains", r.chains);
    static const char *const op_names[3] = {"Div", "Mod fmod=0", "Mod fmod=1"};
    for (int op = 0; op < 3; op++) {
        CHECK_MSG(r.int_nodes[op][0] > 0 && r.int_nodes[op][1] > 0, "integer %s: %d int32, %d int64 nodes",
                  op_names[op], r.int_nodes[op][0], r.int_nodes[op][1]);
        CHECK_MSG(r.neg_dividend[op] > 0 && r.neg_divisor[op] > 0,
                  "integer %s: %d negative dividends, %d negative divisors", op_names[op], r.neg_dividend[op],
                  r.neg_divisor[op]);
    }
    CHECK_MSG(r.trunc_ne_floor > 0, "no integer Div where truncation and flooring differ");
    CHECK_MSG(r.zero_divisor == 0, "%d integer divisions by zero", r.zero_divisor);
    CHECK_MSG(r.bad_float_cast == 0, "%d float -> integer Casts read values out of the target's range",
              r.bad_float_cast);
    CHECK_MSG(r.expect_cast_removed >= 20 && r.expect_folded >= 20,
              "guarantees: cast_removed %d, node_folded %d", r.expect_cast_removed, r.expect_folded);
    CHECK_MSG(checked >= 100, "only %d cases with a new unit checked", checked);
    CHECK_MSG(caught_cast > 0 && caught_div > 0,
              "of %d checked cases, cast-same-width-removed fails %d, "
              "fold-int-div-floor %d",
              checked, caught_cast, caught_div);
    printf("patterns: %d cases; Cast pairs covered %d/%d; %d chains; integer Div/Mod0/Mod1 nodes %d/%d/%d, "
           "trunc != floor %d; guarantees cast_removed %d, node_folded %d; %d checked: "
           "cast-same-width-removed caught on %d, fold-int-div-floor on %d\n",
           N_CASES, N_TYPES * N_TYPES - missing, N_TYPES * N_TYPES, r.chains,
           r.int_nodes[0][0] + r.int_nodes[0][1], r.int_nodes[1][0] + r.int_nodes[1][1],
           r.int_nodes[2][0] + r.int_nodes[2][1], r.trunc_ne_floor, r.expect_cast_removed, r.expect_folded,
           checked, caught_cast, caught_div);
    return pc_test_finish("test_generators_patterns");
}
