/* runtime (end to end): the runtime (core/runtime, OpenBLAS and its own kernels) runs the fully optimized
 * graph as the pipeline left it — EP assignments, NHWC forms, fusions — on the case inputs, and its outputs
 * must agree with the reference executor's on the same graph (which numerics already ties to the original):
 * integers and bools exactly (QuantizeLinear's outputs within one step: they quantize a float computed in
 * another order), floats within rtol 1e-3, atol 1e-4 after NaN positions and infinity signs. The
 * float bound: the runtime sums in float32 in another order than the reference's double sums, an error of
 * about K * 2^-24 * sum|terms| for a K-term sum; the generators keep K <= a few hundred and values near 1, so
 * 1e-3 relative holds with room, while a wrong index, stride or padding moves an element by far more.
 * Where that fails, the bound is widened by the worst such sum the graph could hold — K * 2^-23 * M, K the
 * largest tensor a node reads (no sum has more terms), M the largest finite magnitude any node reads or
 * writes (a probe run of the reference) — so cancellation among huge values (a special-value case: +-2.3e38
 * in one GlobalAveragePool, summed in other orders by each) is not a finding, while values near 1 keep the
 * tight bound. A graph the runtime has no kernel for is a SKIP naming the node; any other failure to create
 * or run is a FAIL (kind create-failed / run-failed). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/passcheck.h"
#include "properties/property.h"
#include "reference/reference.h"

enum { RUNTIME_RTOL_E6 = 1000, RUNTIME_ATOL_E6 = 100 }; /* 1e-3, 1e-4 */

/* The probe: the largest tensor a node reads and the largest finite float magnitude read or written. */
typedef struct magnitude {
    uint64_t max_terms;
    double max_abs;
} magnitude;

static void probe_tensor(magnitude *m, const pc_data *d, bool read)
{
    if (!d || d->kind != PC_TYPE_TENSOR) return;
    if (read && d->n_elements > m->max_terms) m->max_terms = d->n_elements;
    if (d->dtype != PC_DTYPE_FLOAT) return;
    const float *x = d->data;
    for (uint64_t i = 0; i < d->n_elements; i++)
        if (isfinite(x[i]) && fabs((double)x[i]) > m->max_abs) m->max_abs = fabs((double)x[i]);
}

static void probe_node(void *ctx, const pc_node *node, pc_data *const *inputs, pc_data *const *outputs)
{
    for (uint32_t i = 0; i < node->n_inputs; i++)
        probe_tensor(ctx, inputs[i], true);
    for (uint32_t i = 0; i < node->n_outputs; i++)
        probe_tensor(ctx, outputs[i], false);
}

/* A QuantizeLinear output: the runtime quantizes its own float32 result, the reference its double one; where
 * the two straddle a rounding boundary the integer moves by one step (fuzz_pipeline's first runtime finding:
 * Conv -> QuantizeLinear, -120 against -121). Same shape and type, every element within one step. */
static bool quantized_within_step(const pc_graph *g, uint32_t i, const pc_data *want, const pc_data *got)
{
    const pc_node *p = g->outputs[i]->producer;
    if (!p || strcmp(p->op_type, "QuantizeLinear") != 0 || p->domain[0]) return false;
    if (!want || !got || want->kind != PC_TYPE_TENSOR || got->kind != PC_TYPE_TENSOR ||
        want->dtype != got->dtype || want->rank != got->rank || want->n_elements != got->n_elements)
        return false;
    for (int32_t d = 0; d < want->rank; d++)
        if (want->dims[d] != got->dims[d]) return false;
    for (uint64_t k = 0; k < want->n_elements; k++) {
        int a, b;
        if (want->dtype == PC_DTYPE_INT8)
            a = ((const int8_t *)want->data)[k], b = ((const int8_t *)got->data)[k];
        else if (want->dtype == PC_DTYPE_UINT8)
            a = ((const uint8_t *)want->data)[k], b = ((const uint8_t *)got->data)[k];
        else
            return false;
        if (a - b > 1 || b - a > 1) return false;
    }
    return true;
}

/* The first output out of tolerance (atol widened by extra), described in msg; PC_PROP_PASS when none. */
static pc_prop_outcome compare_all(const pc_graph *g, pc_data *const *want, pc_data *const *got, double extra,
                                   char *msg, size_t msg_size, const char **kind)
{
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        pc_compare_result cr;
        pc_compare_outcome c =
            pc_data_compare(want[i], got[i], RUNTIME_RTOL_E6 * 1e-6, RUNTIME_ATOL_E6 * 1e-6 + extra, &cr);
        if (c == PC_COMPARE_EQUAL ||
            (c == PC_COMPARE_DIFFERS && quantized_within_step(g, i, want[i], got[i])))
            continue;
        char ws[96], gs[96];
        *kind = c == PC_COMPARE_DIFFERS ? "differs" : c == PC_COMPARE_SHAPE ? "shape" : "type";
        snprintf(msg, msg_size,
                 "output %u '%s': the runtime gives %s, the reference %s: %s (element %llu: %.9g, reference "
                 "%.9g)",
                 i, g->outputs[i]->name, pc_data_describe(got[i], gs, sizeof gs),
                 pc_data_describe(want[i], ws, sizeof ws), cr.detail, (unsigned long long)cr.worst_index,
                 cr.worst_actual, cr.worst_expected);
        return PC_PROP_FAIL;
    }
    return PC_PROP_PASS;
}

static pc_prop_outcome runtime_final(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    pc_error err;
    pc_data **want = NULL;
    pc_status st = pc_check_ref_outputs(ctx, ctx->after, &want, &err);
    if (st == PC_ERR_UNSUPPORTED) {
        snprintf(msg, msg_size, "the reference cannot run the optimized graph: %s", err.message);
        return PC_PROP_SKIP;
    }
    if (st != PC_OK) {
        /* numerics reports an optimized graph that fails where the original ran */
        snprintf(msg, msg_size, "no reference outputs for the optimized graph (%s): %s", pc_status_name(st),
                 err.message);
        return PC_PROP_SKIP;
    }
    pc_session_options so;
    pc_session_options_default(&so);
    so.optimize = false; /* the graph as the pipeline left it */
    pc_session *s = NULL;
    st = pc_session_create(ctx->after, &so, &s, &err);
    if (st == PC_ERR_UNSUPPORTED) {
        snprintf(msg, msg_size, "the runtime cannot run the optimized graph: %s", err.message);
        return PC_PROP_SKIP;
    }
    if (st == PC_ERR_NOMEM) {
        *kind = "out-of-memory";
        snprintf(msg, msg_size, "out of memory creating the session: %s", err.message);
        return PC_PROP_ERROR;
    }
    if (st != PC_OK) {
        *kind = "create-failed";
        snprintf(msg, msg_size, "the runtime could not create a session for the optimized graph: %s: %s",
                 pc_status_name(st), err.message);
        return PC_PROP_FAIL;
    }
    pc_data **got = NULL;
    st = pc_session_run(s, ctx->kase->n_inputs, ctx->kase->inputs, &got, &err);
    pc_prop_outcome o = PC_PROP_PASS;
    if (st == PC_ERR_UNSUPPORTED) {
        snprintf(msg, msg_size, "the runtime cannot run the optimized graph with these inputs: %s",
                 err.message);
        o = PC_PROP_SKIP;
    } else if (st == PC_ERR_NOMEM) {
        *kind = "out-of-memory";
        snprintf(msg, msg_size, "out of memory running the session: %s", err.message);
        o = PC_PROP_ERROR;
    } else if (st != PC_OK) {
        *kind = "run-failed";
        snprintf(msg, msg_size, "the runtime failed on the optimized graph: %s: %s", pc_status_name(st),
                 err.message);
        o = PC_PROP_FAIL;
    }
    const pc_graph *g = ctx->after->graph;
    if (o == PC_PROP_PASS) o = compare_all(g, want, got, 0.0, msg, msg_size, kind);
    if (o == PC_PROP_FAIL && strcmp(*kind, "differs") == 0) {
        /* only a failing comparison pays for the probe */
        magnitude mg = {0, 0.0};
        pc_ref_options ro = {.on_node = probe_node, .on_node_ctx = &mg};
        pc_data **outs = NULL;
        if (pc_ref_run_with_options(ctx->after, &ro, ctx->kase->n_inputs, ctx->kase->inputs, &outs, &err) ==
            PC_OK) {
            pc_ref_free_outputs(ctx->after, outs);
            double extra = (double)mg.max_terms * ldexp(1.0, -23) * mg.max_abs;
            char wide[1024];
            const char *wkind = NULL;
            if (compare_all(g, want, got, extra, wide, sizeof wide, &wkind) == PC_PROP_PASS) {
                o = PC_PROP_PASS;
                *kind = NULL;
                msg[0] = '\0';
            }
        }
        ctx->stats->ref_runs++;
    }
    if (got) pc_session_free_outputs(s, got);
    pc_session_free(s);
    return o;
}

const pc_property pc_prop_runtime = {
    "runtime",
    "the runtime (OpenBLAS and its own kernels) runs the optimized graph and agrees with the reference on it "
    "(integers exact, floats rtol 1e-3, atol 1e-4); a graph without kernels is a skip",
    NULL,
    runtime_final,
};
