/* The random EP layer (pc_gen_random_eps): one or two EPs described in the EP file format (docs/ep.md,
 * core/ep/ep_file.c) that claim random subsets of the ops the graph uses, with a random layout preference,
 * compile flag, Transpose support, element types, opset ranges, sometimes a first row of the op for other
 * opsets, and attribute rules (Conv's `group`, or one on a node's int attribute, or on one it lacks); the EP
 * list puts them first and `cpu` last, so every node still has an EP that can run it.
 *
 * An NHWC EP that claims a layout-sensitive op mostly also claims its com.ms.internal.nhwc form with the same
 * limits, so the layout transformer moves such a node it owns into that domain; now and then (15%) it claims
 * the NCHW form only, and the node must stay in NCHW form (tests/unit/test_ep_layout.c covers that path by
 * hand too).
 *
 * A blocked EP (block 4, 8 or 16) lists its compiled form (the com.passcheck.blocked ops) 70% of the time,
 * so level 3 compiles its subgraphs. A graph with QLinearConv or
 * QLinearMatMul puts the built-in `systolic` EP first now and then (40%), so its level-3 rewrite runs in the
 * suite's random configurations.
 *
 * Draws: how many EPs (0: none, the list is "cpu"); per EP layout, compiles, transpose, block size; per
 * distinct op in graph order include, types, opset range, an earlier row for other opsets, Conv's group rule
 * or an attribute rule, NHWC form refused, FusedConv; last, for a graph with integer ops systolic claims,
 * whether it leads the list (one draw, none for other graphs, so their streams are unchanged). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "generators/gen.h"
#include "generators/gen_layers.h"

/* Distinct (domain, op) of the graph in order of first appearance, with the first node of each. */
typedef struct op_use {
    const pc_node *node;
} op_use;

static uint32_t distinct_ops(const pc_graph *g, op_use *out, uint32_t cap)
{
    uint32_t n = 0;
    for (const pc_node *x = g->first; x && n < cap; x = x->next) {
        bool seen = false;
        for (uint32_t i = 0; i < n && !seen; i++)
            seen =
                strcmp(out[i].node->op_type, x->op_type) == 0 && strcmp(out[i].node->domain, x->domain) == 0;
        if (!seen) out[n++].node = x;
    }
    return n;
}

static pc_dtype first_elem(const pc_node *n)
{
    const pc_value *v = n->n_inputs ? n->inputs[0] : n->n_outputs ? n->outputs[0] : NULL;
    return v && v->type.kind == PC_TYPE_TENSOR ? v->type.elem : PC_DTYPE_UNDEFINED;
}

/* One `op` line (and its NHWC twin for NHWC EPs). types/opset are the already formatted fields ("" for none).
 */
static void op_line(pc_strbuf *b, const char *domain, const char *op, const char *types, const char *opset)
{
    pc_strbuf_printf(b, "op %s%s%s%s%s\n", op, domain[0] ? " domain=" : "", domain, opset, types);
}

/* An `attr` rule line on one of n's int attributes (the first int attribute from a drawn start), or, when it
 * has none, on an attribute it lacks: the node's value listed (claims), its value + 1 only (refuses), or,
 * when absent, a default listed or none (refuses: absent without a default). Names come from the node, so
 * they fit the EP file's name rules. */
static void attr_rule(pc_choices *ch, const pc_node *n, char *out, size_t size)
{
    const pc_attr *a = NULL;
    uint32_t start = n->n_attrs ? pc_draw(ch, n->n_attrs) : 0;
    for (uint32_t k = 0; k < n->n_attrs && !a; k++) {
        const pc_attr *c = &n->attrs[(start + k) % n->n_attrs];
        if (c->type == PC_ATTR_INT && c->i > -1000000 && c->i < 1000000 && strlen(c->name) < 40) a = c;
    }
    uint32_t form = pc_draw(ch, 2); /* 0 claims, 1 refuses */
    if (!a) {
        snprintf(out, size, "attr pc_absent values=0%s\n", form == 0 ? " default=0" : "");
        return;
    }
    long long v = (long long)a->i;
    if (form == 0)
        snprintf(out, size, "attr %s values=%lld,%lld\n", a->name, v, v + 7);
    else
        snprintf(out, size, "attr %s values=%lld\n", a->name, v + 1);
}

enum { MAX_OPS = 64, MAX_EPS = 2 };

/* The last draw: "systolic," leads the list (a graph with an integer op it claims, 40% of the time). */
static const char *systolic_prefix(pc_gen *g)
{
    bool integer_ops = false;
    for (const pc_node *n = g->graph->first; n && !integer_ops; n = n->next)
        integer_ops = n->domain[0] == '\0' &&
                      (strcmp(n->op_type, "QLinearConv") == 0 || strcmp(n->op_type, "QLinearMatMul") == 0);
    return integer_ops && pc_draw_bool(g->ch, 40) ? "systolic," : "";
}

pc_status pc_gen_random_eps(pc_gen *g, pc_error *err)
{
    pc_choices *ch = g->ch;
    uint32_t n_eps = pc_draw(ch, MAX_EPS + 1);
    if (n_eps == 0) {
        pc_strbuf list = {0};
        pc_strbuf_printf(&list, "%scpu", systolic_prefix(g));
        if (list.oom) {
            pc_strbuf_free(&list);
            return pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (EP list)");
        }
        free(g->out->ep_list);
        g->out->ep_list = pc_strbuf_take(&list);
        return pc_gen_retarget_rules(g, err);
    }
    op_use ops[MAX_OPS];
    uint32_t n_ops = distinct_ops(g->graph, ops, MAX_OPS);
    pc_strbuf text = {0}, names = {0};
    pc_strbuf_printf(&text, "# generated by passcheck (random EP layer)\n");
    for (uint32_t e = 0; e < n_eps; e++) {
        static const uint32_t layout_w[] = {50, 40, 10};
        uint32_t layout = pc_draw_weighted(ch, layout_w, 3); /* 0 nchw (the simplest), 1 nhwc, 2 blocked */
        bool compiles = pc_draw_bool(ch, 50), transpose = pc_draw_bool(ch, 50);
        char block[24] = "";
        if (layout == 2) snprintf(block, sizeof block, " block=%u", 4u << pc_draw(ch, 3));
        pc_strbuf_printf(&text, "ep gen%u layout=%s%s compiles=%s transpose=%s\n", e,
                         layout == 0   ? "nchw"
                         : layout == 1 ? "nhwc"
                                       : "blocked",
                         block, compiles ? "yes" : "no", transpose ? "yes" : "no");
        if (transpose) pc_strbuf_printf(&text, "op Transpose\n");
        for (uint32_t i = 0; i < n_ops; i++) {
            const pc_node *n = ops[i].node;
            if (!pc_draw_bool(ch, 60)) continue;
            char types[64] = "", opset[48] = "";
            uint32_t tk = pc_draw(ch, 3); /* any / the graph's type / float,float16 */
            pc_dtype dt = first_elem(n);
            if (tk == 1 && dt != PC_DTYPE_UNDEFINED)
                snprintf(types, sizeof types, " types=%s", pc_dtype_name(dt));
            else if (tk == 2)
                snprintf(types, sizeof types, " types=float,float16");
            int64_t v = pc_model_opset(g->model, n->domain);
            if (v < 1) v = 1;
            switch (pc_draw(ch, 4)) { /* default / from the model's / around it / excluding it */
            case 1:
                snprintf(opset, sizeof opset, " opset=%lld..", (long long)v);
                break;
            case 2:
                snprintf(opset, sizeof opset, " opset=%lld..%lld", (long long)(v > 1 ? v - 1 : 1),
                         (long long)v + 1);
                break;
            case 3:
                if (v > 1)
                    snprintf(opset, sizeof opset, " opset=1..%lld", (long long)v - 1);
                else
                    snprintf(opset, sizeof opset, " opset=%lld..", (long long)v + 1);
                break;
            default:
                break;
            }
            /* now and then a first row of the op for other opsets only: it refuses, the next row decides, and
             * a refusal names the first row's reason (docs/ep.md) */
            if (pc_draw_bool(ch, 15)) {
                char other[48];
                if (v > 1)
                    snprintf(other, sizeof other, " opset=1..%lld", (long long)v - 1);
                else
                    snprintf(other, sizeof other, " opset=%lld..", (long long)v + 1);
                op_line(&text, n->domain, n->op_type, "", other);
            }
            op_line(&text, n->domain, n->op_type, types, opset);
            bool conv = strcmp(n->op_type, "Conv") == 0 && n->domain[0] == '\0';
            bool group_rule = conv && pc_draw_bool(ch, 20);
            char rule[96] = "";
            if (group_rule)
                snprintf(rule, sizeof rule, "attr group values=1 default=1\n");
            else if (pc_draw_bool(ch, 15))
                attr_rule(ch, n, rule, sizeof rule);
            pc_strbuf_printf(&text, "%s", rule);
            /* now and then an NHWC EP claims only the NCHW form: the layout transformer must keep such a node
             * in NCHW (and the EP still runs it) */
            if (layout == 1 && pc_op_is_layout_sensitive(n->domain, n->op_type) && !pc_draw_bool(ch, 15)) {
                op_line(&text, PC_NHWC_DOMAIN, n->op_type, types, opset);
                pc_strbuf_printf(&text, "%s", rule);
            }
            if (conv && pc_draw_bool(ch, 50)) {
                /* level 2 fuses Conv + activation into FusedConv only where the EP claims it */
                op_line(&text, PC_MS_DOMAIN, "FusedConv", types, "");
                if (layout == 1) op_line(&text, PC_NHWC_DOMAIN, "FusedConv", types, opset);
            }
        }
        /* a blocked EP mostly lists its compiled form too (docs/ep.md): its subgraphs then compile at level 3
         * into Subgraph nodes running the blocked primitives and, inside, the layout-blind ops on rank 5 */
        if (layout == 2 && pc_draw_bool(ch, 70)) {
            static const char *const own[] = {
                "ToBlocked", "FromBlocked", "Conv",          "BatchNormalization",
                "MaxPool",   "AveragePool", "GlobalMaxPool", "GlobalAveragePool",
                "LRN",       "Subgraph"};
            for (size_t k = 0; k < sizeof own / sizeof own[0]; k++)
                pc_strbuf_printf(&text, "op %s domain=%s\n", own[k], PC_BLOCKED_DOMAIN);
            static const char *const blind[] = {"Relu", "Add", "Sum"};
            for (size_t k = 0; k < sizeof blind / sizeof blind[0]; k++)
                pc_strbuf_printf(&text, "op %s rank=5 types=float\n", blind[k]);
            pc_strbuf_printf(&text, "op Concat rank=5 types=float\nattr axis values=1\n");
        }
        pc_strbuf_printf(&names, "gen%u,", e);
    }
    pc_strbuf_printf(&names, "cpu");
    const char *sys = systolic_prefix(g);
    if (*sys && !names.oom) { /* systolic leads: the list is rebuilt with it first */
        pc_strbuf lead = {0};
        pc_strbuf_printf(&lead, "%s%s", sys, names.s ? names.s : "");
        pc_strbuf_free(&names);
        names = lead;
    }
    if (text.oom || names.oom) {
        pc_strbuf_free(&text);
        pc_strbuf_free(&names);
        return pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (EP description)");
    }
    free(g->out->ep_text);
    free(g->out->ep_list);
    g->out->ep_text = pc_strbuf_take(&text);
    g->out->ep_list = pc_strbuf_take(&names);
    return pc_gen_retarget_rules(g, err);
}
