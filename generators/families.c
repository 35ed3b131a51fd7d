/* The family table and pc_case_generate: family, then finish (outputs, input data), then the annotation and
 * EP layers the configuration asks for. */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "generators/gen.h"

static pc_status gen_layered(pc_gen *g, pc_error *err);

static const pc_gen_family families[] = {
    {"float",
     "CNN-like NCHW float graphs (Conv, pools, BN, activations, elementwise, Concat/Split, Reshape, "
     "Softmax, Reduce*, MatMul/Gemm, Pad/Slice, Resize; 30% on blocked,cpu)",
     pc_gen_float, "cpu", 10, "blocked,cpu", 30},
    {"nhwc", "TF-style NHWC graphs: Transposes around layout-sensitive ops, long layout-agnostic chains",
     pc_gen_nhwc, "nhwc,cpu", 10, NULL, 0},
    {"qdq", "quantized graphs in QDQ form (per-tensor and per-axis, int8 and uint8)", pc_gen_qdq, "cpu", 10,
     NULL, 0},
    {"qlinear",
     "QLinearConv / QLinearMatMul / QLinearAdd graphs as the Systolic quantizer produces them (40% on "
     "systolic,cpu)",
     pc_gen_qlinear, "cpu", 10, "systolic,cpu", 40},
    {"patterns",
     "the pattern library: each rewrite kind's input pattern with random variation, or one of its near "
     "misses (one constant, attribute, consumer, annotation off); canonical units must fire",
     pc_gen_patterns, "cpu", 0, NULL, 0},
    {"annotated",
     "a base family (float, nhwc, qdq, qlinear, patterns) with layer_ann on random nodes and a random "
     "layer-assignment string",
     gen_layered, "nhwc,cpu", 0, NULL, 0},
    {"eps",
     "a base family run with a random EP configuration (op subsets, layout preferences) from the EP "
     "description format",
     gen_layered, "cpu", 0, NULL, 0},
};
enum { N_FAMILIES = sizeof families / sizeof families[0], N_BASE_FAMILIES = 5 };

size_t pc_gen_family_count(void)
{
    return N_FAMILIES;
}
const pc_gen_family *pc_gen_family_at(size_t i)
{
    return i < N_FAMILIES ? &families[i] : NULL;
}

const pc_gen_family *pc_gen_family_find(const char *name)
{
    for (size_t i = 0; name && i < N_FAMILIES; i++)
        if (strcmp(families[i].name, name) == 0) return &families[i];
    return NULL;
}

void pc_gen_config_default(pc_gen_config *cfg)
{
    *cfg = (pc_gen_config){.family = "float", .max_nodes = 12, .max_elements = 256, .max_rank = 5};
}

void pc_case_free(pc_case *c)
{
    if (!c) return;
    for (uint32_t i = 0; i < c->n_inputs; i++)
        pc_data_unref(c->inputs[i]);
    free(c->inputs);
    free(c->ep_text);
    free(c->ep_list);
    free(c->layer_assignment);
    pc_model_free(c->model);
    memset(c, 0, sizeof *c);
}

/* "annotated" and "eps": the first draw picks the base family (0: float); the layers run after finish. */
static pc_status gen_layered(pc_gen *g, pc_error *err)
{
    const pc_gen_family *base = &families[pc_draw(g->ch, N_BASE_FAMILIES)];
    g->family_state = (void *)base;
    return base->build(g, err);
}

static pc_status expect_fired_write(pc_gen *g, pc_error *err)
{
    pc_strbuf b = {0};
    for (int k = 0; k < PC_RW_COUNT; k++) {
        const char *kind = pc_rewrite_kind_name((pc_rewrite_kind)k);
        if (g->expect.fired[k]) pc_strbuf_printf(&b, "%s%s=%u", b.len ? " " : "", kind, g->expect.fired[k]);
        for (int r = 0; r < PC_MISS_COUNT; r++)
            if (g->expect.near[k][r])
                pc_strbuf_printf(&b, "%s%s~%s=%u", b.len ? " " : "", kind,
                                 pc_miss_reason_name((pc_miss_reason)r), g->expect.near[k][r]);
    }
    pc_status st = PC_OK;
    if (b.oom)
        st = pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (rewrite guarantees)");
    else if (b.len)
        st = pc_model_set_metadata(g->model, PC_EXPECT_FIRED_KEY, b.s, err);
    pc_strbuf_free(&b);
    return st;
}

/* The index of the name of length len among count names, or count. */
static int name_index(const char *s, size_t len, int count, const char *(*name)(int))
{
    int k = 0;
    while (k < count && !(strlen(name(k)) == len && memcmp(name(k), s, len) == 0))
        k++;
    return k;
}

static const char *kind_name(int k)
{
    return pc_rewrite_kind_name((pc_rewrite_kind)k);
}

static const char *reason_name(int r)
{
    return pc_miss_reason_name((pc_miss_reason)r);
}

pc_status pc_expect_fired_read(const pc_model *m, pc_expect_fired *e, bool *present, pc_error *err)
{
    memset(e, 0, sizeof *e);
    const char *v = pc_model_metadata(m, PC_EXPECT_FIRED_KEY);
    *present = v != NULL;
    for (const char *p = v; p && *p;) {
        while (*p == ' ')
            p++;
        if (!*p) break;
        size_t len = strcspn(p, " ");
        const char *eq = memchr(p, '=', len);
        const char *tilde = eq ? memchr(p, '~', (size_t)(eq - p)) : NULL;
        const char *kind_end = tilde ? tilde : eq;
        int k = eq ? name_index(p, (size_t)(kind_end - p), PC_RW_COUNT, kind_name) : PC_RW_COUNT;
        int r = tilde ? name_index(tilde + 1, (size_t)(eq - tilde - 1), PC_MISS_COUNT, reason_name) : -1;
        char *end = NULL;
        unsigned long n = eq ? strtoul(eq + 1, &end, 10) : 0;
        if (!eq || k == PC_RW_COUNT || r == PC_MISS_COUNT || end != p + len || eq + 1 == end ||
            n > UINT32_MAX)
            return pc_error_set(err, PC_ERR_VALUE,
                                "model metadata %s: bad entry '%.*s' (want pass/kind=N or "
                                "pass/kind~reason=N with a kind of PC_REWRITE_KINDS and a reason of "
                                "PC_MISS_REASONS)",
                                PC_EXPECT_FIRED_KEY, (int)len, p);
        if (r < 0)
            e->fired[k] += (uint32_t)n;
        else
            e->near[k][r] += (uint32_t)n;
        p += len;
    }
    return PC_OK;
}

pc_status pc_case_generate(const pc_gen_config *cfg_in, pc_choices *ch, pc_case *out, pc_error *err)
{
    memset(out, 0, sizeof *out);
    const pc_gen_family *fam = pc_gen_family_find(cfg_in->family);
    if (!fam)
        return pc_error_set(err, PC_ERR_USAGE,
                            "unknown generator family '%s' (passcheck suite --list-families)",
                            cfg_in->family ? cfg_in->family : "(null)");
    pc_gen_config cfg = *cfg_in;
    cfg.family = fam->name;
    if (cfg.max_rank > 5) cfg.max_rank = 5;
    if (cfg.max_rank < 1) cfg.max_rank = 1;
    if (cfg.max_nodes < 1) cfg.max_nodes = 1;
    if (cfg.max_elements < 1) cfg.max_elements = 1;
    if (strcmp(fam->name, "annotated") == 0) cfg.annotate = true;
    if (strcmp(fam->name, "eps") == 0) cfg.random_eps = true;

    out->family = fam->name;
    pc_status st = pc_model_create(&out->model, err);
    if (st != PC_OK) return st;
    out->model->producer_name = "passcheck-gen";
    pc_gen g = {.ch = ch, .cfg = &cfg, .model = out->model, .graph = out->model->graph, .out = out};
    st = fam->build(&g, err);
    const pc_gen_family *base = g.family_state && fam->build == gen_layered ? g.family_state : fam;
    /* the family's weight for the pattern library: one unit on fresh inputs, drawn last (0: none) */
    if (st == PC_OK && base->pattern_percent && pc_draw_bool(ch, base->pattern_percent))
        st = pc_gen_pattern_unit(&g, err);
    if (st == PC_OK) st = pc_gen_finish(&g, err);
    if (st == PC_OK && cfg.annotate) st = pc_gen_annotate(&g, err);
    if (st == PC_OK && cfg.random_eps) st = pc_gen_random_eps(&g, err);
    /* The units guarantee their rewrites on the cpu EP alone: another EP may rightly refuse a fused node (the
     * nhwc EP runs no QLinearConv), and annotations may rightly keep nodes apart. */
    bool guaranteed = !cfg.annotate && !cfg.random_eps && strcmp(base->default_eps, "cpu") == 0;
    bool any = false;
    for (int k = 0; k < PC_RW_COUNT && !any; k++) {
        any = g.expect.fired[k] != 0;
        for (int r = 0; r < PC_MISS_COUNT; r++)
            any = any || g.expect.near[k][r] != 0;
    }
    guaranteed = guaranteed && any;
    /* a unit's guarantee may rest on its constants' values (an Add of zeros is pruned, not pushed) */
    if (st == PC_OK && !guaranteed && cfg.allow_special) st = pc_gen_zero_constants(&g, err);
    if (st == PC_OK && !guaranteed) st = pc_gen_empty_inputs(&g, err);
    /* drawn last (0: static shapes); a case's written guarantees may rest on known dims */
    if (st == PC_OK && !guaranteed && pc_draw_bool(ch, 20)) st = pc_gen_symbolic_dims(&g, err);
    if (st == PC_OK && guaranteed) st = expect_fired_write(&g, err);
    bool alt = st == PC_OK && !guaranteed && !cfg.annotate && !out->ep_list && base->alt_eps &&
               pc_draw_bool(ch, base->alt_eps_percent);
    if (st == PC_OK && !out->ep_list) {
        /* annotated cases use the base family's EPs, plus nhwc so layer rules have two EPs to choose from */
        const char *eps = alt                                                     ? base->alt_eps
                          : cfg.annotate && strcmp(base->default_eps, "cpu") == 0 ? "nhwc,cpu"
                                                                                  : base->default_eps;
        out->ep_list = strdup(eps);
        if (!out->ep_list) st = pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (EP list)");
    }
    if (st == PC_OK && ch->oom)
        st = pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (choice record)");
    if (st == PC_OK) {
        pc_error verr;
        if (pc_model_verify(out->model, &verr) != PC_OK)
            st = pc_error_set(err, PC_ERR_INTERNAL, "generator (%s family) made an invalid graph: %s: %s",
                              fam->name, pc_status_name(verr.status), verr.message);
    }
    free(g.pool);
    free(g.range_lo);
    free(g.range_hi);
    if (st != PC_OK) pc_case_free(out);
    return st;
}
