/* runtime (end to end): the runtime (core/runtime, OpenBLAS and its own kernels) runs the fully optimized
 * graph as the pipeline left it — EP assignments, NHWC forms, fusions — on the case inputs, and its outputs
 * must agree with the reference executor's on the same graph (which numerics already ties to the original):
 * integers and bools exactly, floats within rtol 1e-3, atol 1e-4 after NaN positions and infinity signs. The
 * float bound: the runtime sums in float32 in another order than the reference's double sums, an error of
 * about K * 2^-24 * sum|terms| for a K-term sum; the generators keep K <= a few hundred and values near 1, so
 * 1e-3 relative holds with room, while a wrong index, stride or padding moves an element by far more.
 * Where that fails, the bound is widened by the worst such sum the graph could hold — K * 2^-23 * M, K the
 * largest tensor a node reads (no sum has more terms), M the largest finite magnitude any node reads or
 * writes (a probe run of the reference) — so cancellation among huge values (a special-value case: +-2.3e38
 * in one GlobalAveragePool, summed in other orders by each) is not a finding, while values near 1 keep the
 * tight bound. A difference a QuantizeLinear rounding tie explains (run_pinned) is not a finding either.
 * A graph the runtime has no kernel for is a SKIP naming the node; any other failure to create
 * or run is a FAIL (kind create-failed / run-failed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Quantization ties. A QuantizeLinear rounds a float the runtime computed in float32 and another order, the
 * reference in double: where the two straddle a rounding boundary the integer moves by one step, and so does
 * everything computed from it (fuzz_pipeline's runtime findings: Conv -> QuantizeLinear, -120 against -121;
 * then Conv -> Relu -> QuantizeLinear -> DequantizeLinear, 1.505 against 1.620, one step of 0.116). Both are
 * right: the spec fixes float results only to rounding. So a failing comparison is re-judged once with every
 * QuantizeLinear pinned: the graph gets each QuantizeLinear result as an extra output, the runtime runs it,
 * and the reference runs it with each QuantizeLinear result that is within one step of its own replaced by
 * the runtime's (pc_ref_options.replace_outputs). Agreement then is the same verdict the float tolerance
 * gives anywhere else; a result more than one step off stays the reference's, and a wrong kernel still
 * differs. */
/* The outputs of both engines with every QuantizeLinear pinned (see above), in *want and *got (the original
 * graph's outputs first); false when the graph has no QuantizeLinear or something could not run. */
static bool run_pinned(pc_check_ctx *ctx, pc_model **model, pc_data ***want, pc_data ***got, pc_session **s)
{
    pc_error err;
    *model = NULL;
    *want = *got = NULL;
    *s = NULL;
    if (pc_model_clone(ctx->after, model, &err) != PC_OK) return false;
    pc_graph *g = (*model)->graph;
    uint32_t added = 0;
    for (pc_node *n = g->first; n; n = n->next) {
        if (strcmp(n->op_type, "QuantizeLinear") != 0 || n->domain[0] || !n->outputs[0]) continue;
        bool listed = false;
        for (uint32_t i = 0; i < g->n_outputs && !listed; i++)
            listed = g->outputs[i] == n->outputs[0];
        if (!listed && pc_graph_add_output(g, n->outputs[0], &err) != PC_OK) return false;
        added += !listed;
    }
    bool any = added > 0;
    for (uint32_t i = 0; i < g->n_outputs && !any; i++) /* a QuantizeLinear graph output */
        any = g->outputs[i]->producer && strcmp(g->outputs[i]->producer->op_type, "QuantizeLinear") == 0;
    if (!any) return false;
    pc_session_options so;
    pc_session_options_default(&so);
    so.optimize = false;
    if (pc_session_create(*model, &so, s, &err) != PC_OK ||
        pc_session_run(*s, ctx->kase->n_inputs, ctx->kase->inputs, got, &err) != PC_OK) {
        *got = NULL;
        return false;
    }
    pc_pin *pins = calloc(g->n_outputs, sizeof *pins);
    if (!pins) return false;
    uint32_t n_pins = 0, pinned = 0;
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        const pc_node *p = g->outputs[i]->producer;
        if (p && strcmp(p->op_type, "QuantizeLinear") == 0 && !p->domain[0] && g->outputs[i]->name)
            pins[n_pins++] = (pc_pin){g->outputs[i]->name, (*got)[i]};
    }
    pc_status st = pc_check_ref_pinned(ctx, *model, pins, n_pins, 1, want, &pinned, &err);
    free(pins);
    return st == PC_OK && pinned > 0;
}

/* The first output out of tolerance (atol widened by extra), described in msg; PC_PROP_PASS when none. */
static pc_prop_outcome compare_all(const pc_graph *g, pc_data *const *want, pc_data *const *got, double extra,
                                   char *msg, size_t msg_size, const char **kind)
{
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        pc_compare_result cr;
        pc_compare_outcome c =
            pc_data_compare(want[i], got[i], RUNTIME_RTOL_E6 * 1e-6, RUNTIME_ATOL_E6 * 1e-6 + extra, &cr);
        if (c == PC_COMPARE_EQUAL) continue;
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
        /* only a failing comparison pays for the probe and the pinned runs */
        magnitude mg = {0, 0.0};
        pc_ref_options ro = {.on_node = probe_node, .on_node_ctx = &mg};
        pc_data **outs = NULL;
        double extra = 0;
        if (pc_ref_run_with_options(ctx->after, &ro, ctx->kase->n_inputs, ctx->kase->inputs, &outs, &err) ==
            PC_OK) {
            pc_ref_free_outputs(ctx->after, outs);
            extra = (double)mg.max_terms * ldexp(1.0, -23) * mg.max_abs;
        }
        ctx->stats->ref_runs++;
        char wide[1024];
        const char *wkind = NULL;
        bool explained = compare_all(g, want, got, extra, wide, sizeof wide, &wkind) == PC_PROP_PASS;
        if (!explained) {
            pc_model *pm;
            pc_data **pw, **pg;
            pc_session *ps;
            if (run_pinned(ctx, &pm, &pw, &pg, &ps))
                explained = compare_all(g, pw, pg, extra, wide, sizeof wide, &wkind) == PC_PROP_PASS;
            if (pw) pc_ref_free_outputs(pm, pw);
            if (pg) pc_session_free_outputs(ps, pg);
            pc_session_free(ps);
            pc_model_free(pm);
        }
        if (explained) {
            o = PC_PROP_PASS;
            *kind = NULL;
            msg[0] = '\0';
        }
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
