/* evaluator (end to end): core's constant evaluator (core/eval, what fold_constants and the transpose
 * optimizer fold with) against the reference executor on every node of the original the evaluator supports,
 * not only on the constant subgraphs fold_constants happens to meet. The reference runs a private copy of the
 * original on the case inputs; after each node its actual input values go through pc_eval_node, and every
 * output must equal the reference's: same type and shape, the same values bit for bit (floats included: both
 * round each IEEE operation once), NaN where the reference has NaN. An evaluator error on inputs the
 * reference ran is a failure too; PC_ERR_UNSUPPORTED and PC_ERR_BUDGET (an output over the fold limit) are
 * the evaluator declining, as fold_constants treats them. */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "properties/match.h"
#include "properties/property.h"
#include "reference/reference.h"

enum { EVAL_MAX_INPUTS = 64, EVAL_MAX_ELEMENTS = 1 << 16 };

typedef struct eval_check {
    bool failed, oom;
    const char *kind;
    char msg[1536]; /* room for the evaluator's whole message (1024) after the node's name */
} eval_check;

/* A tensor view of a reference value: no copy, valid while the value lives (the hook's call). */
static bool view_of(const pc_data *d, pc_tensor *t)
{
    if (!d || d->kind != PC_TYPE_TENSOR) return false;
    memset(t, 0, sizeof *t);
    t->name = "";
    t->dtype = d->dtype;
    t->rank = d->rank;
    t->dims = d->dims;
    t->n_elements = d->n_elements;
    t->n_bytes = d->n_bytes;
    t->data = d->data;
    return true;
}

static void check_node(void *vctx, const pc_node *node, pc_data *const *inputs, pc_data *const *outputs)
{
    eval_check *ec = vctx;
    if (ec->failed || ec->oom || node->n_inputs > EVAL_MAX_INPUTS || !pc_eval_supports(node)) return;
    pc_tensor views[EVAL_MAX_INPUTS];
    const pc_tensor *ins[EVAL_MAX_INPUTS];
    for (uint32_t i = 0; i < node->n_inputs; i++) {
        ins[i] = NULL;
        if (inputs[i] && !view_of(inputs[i], &views[i]))
            return; /* a sequence or optional: not the evaluator's */
        if (inputs[i]) ins[i] = &views[i];
    }
    pc_tensor *outs[16] = {NULL};
    if (node->n_outputs > sizeof outs / sizeof outs[0]) return;
    pc_error err;
    pc_status st = pc_eval_node(node, ins, node->n_inputs, outs, EVAL_MAX_ELEMENTS, &err);
    const char *label = node->name[0] ? node->name : node->op_type;
    if (st == PC_ERR_UNSUPPORTED || st == PC_ERR_BUDGET) return;
    if (st == PC_ERR_NOMEM) {
        ec->oom = true;
        return;
    }
    if (st != PC_OK) {
        ec->failed = true;
        ec->kind = "eval-error";
        snprintf(ec->msg, sizeof ec->msg, "%s '%s': the evaluator failed on inputs the reference ran: %s: %s",
                 node->op_type, label, pc_status_name(st), err.message);
        return;
    }
    for (uint32_t i = 0; i < node->n_outputs && !ec->failed; i++) {
        if (!outputs[i] || outputs[i]->kind != PC_TYPE_TENSOR) continue;
        if (!outs[i]) {
            ec->failed = true;
            ec->kind = "eval-missing-output";
            snprintf(ec->msg, sizeof ec->msg, "%s '%s': the evaluator made no output %u", node->op_type,
                     label, i);
            break;
        }
        pc_data *got = pc_data_wrap_tensor(outs[i], &err);
        if (!got) {
            ec->oom = true;
            break;
        }
        pc_compare_result cr;
        if (pc_data_compare_exact(outputs[i], got, &cr) != PC_COMPARE_EQUAL) {
            char want_s[96], got_s[96];
            ec->failed = true;
            ec->kind = "eval-differs";
            snprintf(ec->msg, sizeof ec->msg,
                     "%s '%s' output %u: the evaluator gives %s, the reference %s: %s (element %llu: %.9g, "
                     "reference %.9g)",
                     node->op_type, label, i, pc_data_describe(got, got_s, sizeof got_s),
                     pc_data_describe(outputs[i], want_s, sizeof want_s), cr.detail,
                     (unsigned long long)cr.worst_index, cr.worst_actual, cr.worst_expected);
        }
        pc_data_unref(got);
    }
}

static pc_prop_outcome evaluator_final(pc_check_ctx *ctx, char *msg, size_t msg_size, const char **kind)
{
    pc_model *m = NULL;
    /* a private copy: the evaluator creates its outputs in the node's model */
    pc_prop_outcome loaded = match_copy_original(ctx, &m, msg, msg_size, kind);
    if (loaded != PC_PROP_PASS) return loaded;
    pc_error err;
    eval_check ec = {0};
    pc_ref_options ro = {.on_node = check_node, .on_node_ctx = &ec};
    pc_data **outs = NULL;
    pc_status st = pc_ref_run_with_options(m, &ro, ctx->kase->n_inputs, ctx->kase->inputs, &outs, &err);
    ctx->stats->ref_runs++;
    if (st == PC_OK) pc_ref_free_outputs(m, outs);
    pc_model_free(m);
    pc_prop_outcome o = PC_PROP_PASS;
    if (ec.failed) {
        *kind = ec.kind;
        snprintf(msg, msg_size, "%s", ec.msg);
        o = PC_PROP_FAIL;
    } else if (ec.oom) {
        *kind = "out-of-memory";
        snprintf(msg, msg_size, "out of memory comparing the evaluator with the reference");
        o = PC_PROP_ERROR;
    } else if (st == PC_ERR_UNSUPPORTED) {
        *kind = "reference-unsupported";
        snprintf(msg, msg_size, "the reference cannot run the original: %s", err.message);
        o = PC_PROP_SKIP;
    }
    /* another reference failure on the original is numerics' finding (run-failed); the nodes before it were
     * judged */
    return o;
}

const pc_property pc_prop_evaluator = {
    "evaluator",
    "core's constant evaluator agrees bit for bit with the reference on every node of the original it "
    "supports "
    "(the reference's actual inputs)",
    NULL,
    evaluator_final,
};
