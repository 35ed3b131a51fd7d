/* Quantization ties, judged by pinning (property.h, pc_check_ref_pinned). Two computations of a quantized
 * value — the runtime's float32 and the reference's double, or a QDQ pair and the QLinear node a rewrite made
 * of it — round different floats, and where those straddle a rounding boundary the integers differ by one
 * step. Both are right (the spec fixes float results only to rounding), and the step travels: a
 * DequantizeLinear scales it, a Conv multiplies it by its weights. So instead of a tolerance per kind of
 * path, the property re-runs the reference with each rounding site's result taken the other computation's
 * way, when it is within the allowed steps of its own, and compares again with the plain rule: a difference
 * the ties explain disappears, anything else stays. */
#include <string.h>

#include "properties/property.h"
#include "reference/reference.h"

/* Same type and shape, every element within max_steps. */
static bool within_steps(const pc_data *a, const pc_data *b, uint32_t max_steps)
{
    if (!a || !b || a->kind != PC_TYPE_TENSOR || b->kind != PC_TYPE_TENSOR || a->dtype != b->dtype ||
        a->rank != b->rank || a->n_elements != b->n_elements)
        return false;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    for (uint64_t k = 0; k < a->n_elements; k++) {
        int64_t x, y;
        if (!pc_data_int_at(a, k, &x) || !pc_data_int_at(b, k, &y) || x - y > (int64_t)max_steps ||
            y - x > (int64_t)max_steps)
            return false;
    }
    return true;
}

typedef struct pin_run {
    const pc_pin *pins;
    uint32_t n_pins, max_steps, pinned;
} pin_run;

static void replace_pinned(void *vctx, const pc_node *node, pc_data **outputs)
{
    pin_run *r = vctx;
    for (uint32_t o = 0; o < node->n_outputs; o++) {
        if (!node->outputs[o] || !outputs[o] || !node->outputs[o]->name) continue;
        for (uint32_t i = 0; i < r->n_pins; i++)
            if (r->pins[i].value && strcmp(r->pins[i].name, node->outputs[o]->name) == 0) {
                if (within_steps(outputs[o], r->pins[i].value, r->max_steps)) {
                    pc_data_unref(outputs[o]);
                    outputs[o] = pc_data_ref((pc_data *)r->pins[i].value);
                    r->pinned++;
                }
                break;
            }
    }
}

pc_status pc_check_ref_pinned(pc_check_ctx *ctx, const pc_model *m, const pc_pin *pins, uint32_t n_pins,
                              uint32_t max_steps, pc_data ***outputs, uint32_t *n_pinned, pc_error *err)
{
    pin_run r = {pins, n_pins, max_steps, 0};
    pc_ref_options ro = {.replace_outputs = replace_pinned, .replace_ctx = &r};
    ctx->stats->ref_runs++;
    *outputs = NULL;
    pc_status st = pc_ref_run_with_options(m, &ro, ctx->kase->n_inputs, ctx->kase->inputs, outputs, err);
    if (st != PC_OK) *outputs = NULL;
    *n_pinned = r.pinned;
    return st;
}

typedef struct capture_run {
    const char *const *names;
    uint32_t n;
    pc_data **values;
} capture_run;

static void capture_named(void *vctx, const pc_node *node, pc_data *const *inputs, pc_data *const *outputs)
{
    (void)inputs;
    capture_run *c = vctx;
    for (uint32_t o = 0; o < node->n_outputs; o++) {
        if (!node->outputs[o] || !outputs[o] || !node->outputs[o]->name) continue;
        for (uint32_t i = 0; i < c->n; i++)
            if (!c->values[i] && strcmp(c->names[i], node->outputs[o]->name) == 0) {
                c->values[i] = pc_data_ref(outputs[o]);
                break;
            }
    }
}

pc_status pc_check_ref_capture(pc_check_ctx *ctx, const pc_model *m, const char *const *names, uint32_t n,
                               pc_data **values, pc_error *err)
{
    memset(values, 0, (size_t)n * sizeof *values);
    capture_run c = {names, n, values};
    pc_ref_options ro = {.on_node = capture_named, .on_node_ctx = &c};
    pc_data **outs = NULL;
    ctx->stats->ref_runs++;
    pc_status st = pc_ref_run_with_options(m, &ro, ctx->kase->n_inputs, ctx->kase->inputs, &outs, err);
    if (st == PC_OK) pc_ref_free_outputs(m, outs);
    return st;
}
