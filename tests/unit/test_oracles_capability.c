/* The capability oracle (properties/oracles/capability_oracle.c) on hand-written cases from docs/ep.md, and
 * differentially against core's pc_ep_claims_node: every node of generated cases of every family (their
 * random EP files included) against every EP of the case plus the built-ins must get the same verdict, and a
 * refusal core's wording of the same first failing rule. */
#include <string.h>

#include "generators/gen.h"
#include "properties/oracles/capability_oracle.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

static const pc_ep *ep_named(pc_ep_registry *reg, const char *name)
{
    const pc_ep *ep = pc_ep_registry_find(reg, name);
    if (!ep) pt_die(name, NULL);
    return ep;
}

/* The documented rules, one at a time, on a registry with the built-ins and a test EP. */
static void test_rules(void)
{
    static const char *text = "ep npu layout=nhwc compiles=yes transpose=no\n"
                              "op Relu opset=13..17 types=float\n"
                              "op MaxPool opset=11..17\n"
                              "attr storage_order values=0 default=0\n"
                              "op Sigmoid opset=18..\n"
                              "op * domain=com.example opset=1\n";
    pc_error err;
    pc_ep_registry *reg = NULL;
    CHECK_OK(pc_ep_registry_create(&reg, &err), &err);
    pc_status st = pc_ep_registry_load_text(reg, text, "test EPs", &err);
    CHECK_OK(st, &err);
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 4});
    pt_input(m, "i", PC_DTYPE_INT32, 1, (int64_t[]){4});
    pt_input(m, "u", PC_DTYPE_FLOAT, -1, NULL)->type.elem = PC_DTYPE_UNDEFINED;
    pc_node *relu = pt_node(m, "Relu", "", "x", "r", NULL);
    pc_node *relu_int = pt_node(m, "Relu", "", "i", "ri", NULL);
    pc_node *tr = pt_node(m, "Transpose", "", "x", "t", NULL);
    pc_node *neg_unknown = pt_node(m, "Neg", "", "u", "nu", NULL);
    pc_node *pool = pt_node(m, "MaxPool", "", "x", "p", NULL);
    pc_node *sig = pt_node(m, "Sigmoid", "", "x", "s", NULL);
    const pc_ep *cpu = ep_named(reg, "cpu"), *nhwc = ep_named(reg, "nhwc");
    /* cpu: every ai.onnx op the schema knows at opset 17, Transpose included */
    CHECK(pc_capo_claims(cpu, relu) && pc_capo_claims(cpu, tr) && pc_capo_claims(cpu, relu_int));
    /* nhwc: unary float ops, runs Transpose, not int32 Relu */
    CHECK(pc_capo_claims(nhwc, relu) && pc_capo_claims(nhwc, tr) && !pc_capo_claims(nhwc, relu_int));
    /* a typed row does not claim a node whose type is unknown; cpu's blanket claim does */
    CHECK(!pc_capo_claims(nhwc, neg_unknown) && pc_capo_claims(cpu, neg_unknown));
    const pc_ep *npu = ep_named(reg, "npu");
    /* rows: types, Transpose refused, opset range (Sigmoid from 18 only) */
    CHECK(pc_capo_claims(npu, relu) && !pc_capo_claims(npu, relu_int) && !pc_capo_claims(npu, tr));
    CHECK(!pc_capo_claims(npu, sig));
    /* attribute rules: absent takes the default (0, listed); 1 is not listed; a non-int value fails */
    CHECK(pc_capo_claims(npu, pool));
    pc_error aerr;
    CHECK_OK(pc_node_set_attr_int(pool, "storage_order", 1, &aerr), &aerr);
    CHECK(!pc_capo_claims(npu, pool));
    CHECK_OK(pc_node_set_attr_int(pool, "storage_order", 0, &aerr), &aerr);
    CHECK(pc_capo_claims(npu, pool));
    /* an op the schema does not know at the opset: not a standard claim */
    pc_node *unknown = pt_node(m, "NoSuchOp", "", "x", "ns", NULL);
    CHECK(!pc_capo_claims(cpu, unknown) && !pc_ep_claims_node(cpu, unknown, NULL, 0));
    /* reasons: the first rule that fails, and core's wording of it */
    pc_node *other = pt_node(m, "Thing", "com.example", "x", "th", NULL);
    for (uint32_t i = 0; i < m->n_opsets; i++) /* pt_node imported com.example: un-import it */
        if (strcmp(m->opsets[i].domain, "com.example") == 0) m->opsets[i].domain = "com.elsewhere";
    CHECK_OK(pc_node_set_attr_int(pool, "storage_order", 1, &aerr), &aerr);
    const struct {
        const pc_ep *ep;
        const pc_node *n;
        pc_capo_reason why;
    } reasons[] = {
        {npu, relu, PC_CAPO_CLAIMS},        {npu, tr, PC_CAPO_TRANSPOSE},
        {npu, relu_int, PC_CAPO_DTYPE},     {npu, neg_unknown, PC_CAPO_NOT_LISTED},
        {npu, sig, PC_CAPO_OPSET},          {npu, pool, PC_CAPO_ATTRIBUTE},
        {npu, other, PC_CAPO_NOT_IMPORTED}, {cpu, unknown, PC_CAPO_NOT_LISTED},
        {nhwc, relu_int, PC_CAPO_DTYPE},
    };
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
        char why[256];
        pc_capo_reason got = pc_capo_decide(reasons[i].ep, reasons[i].n);
        bool core = pc_ep_claims_node(reasons[i].ep, reasons[i].n, why, sizeof why);
        CHECK_MSG(got == reasons[i].why, "row %zu: reason %d, want %d", i, (int)got, (int)reasons[i].why);
        CHECK_MSG(core == (got == PC_CAPO_CLAIMS) && strstr(why, pc_capo_reason_phrase(got)),
                  "row %zu: core %d says '%s', want '%s'", i, core, why, pc_capo_reason_phrase(got));
    }
    pc_model_free(m);
    pc_ep_registry_free(reg);
}

static void test_against_core(void)
{
    size_t pairs = 0, claimed = 0, disagree = 0, refused_by[PC_CAPO_REASON_COUNT] = {0};
    for (size_t f = 0; f < pc_gen_family_count(); f++)
        for (uint64_t seed = 1; seed <= 60; seed++) {
            const char *family = pc_gen_family_at(f)->name;
            pc_case c;
            if (!pt_generate(family, seed * 131 + f, &c)) continue;
            pc_error err;
            pc_ep_registry *reg = NULL;
            CHECK_OK(pc_ep_registry_create(&reg, &err), &err);
            if (c.ep_text) CHECK_OK(pc_ep_registry_load_text(reg, c.ep_text, "case EPs", &err), &err);
            const pc_ep **eps = NULL;
            uint32_t n_eps = 0;
            char list[512];
            snprintf(list, sizeof list, "%s%s", c.ep_list ? c.ep_list : "cpu",
                     c.ep_list && strstr(c.ep_list, "nhwc") ? "" : ",nhwc");
            CHECK_OK(pc_ep_registry_parse_list(reg, list, &eps, &n_eps, &err), &err);
            CHECK_OK(pc_graph_infer_shapes(c.model->graph, &err), &err);
            for (const pc_node *n = c.model->graph->first; n; n = n->next)
                for (uint32_t e = 0; e < n_eps; e++) {
                    char why[256];
                    pc_capo_reason reason = pc_capo_decide(eps[e], n);
                    bool core = pc_ep_claims_node(eps[e], n, why, sizeof why),
                         oracle = reason == PC_CAPO_CLAIMS;
                    pairs++;
                    claimed += oracle;
                    refused_by[reason]++;
                    if ((core != oracle || !strstr(why, pc_capo_reason_phrase(reason))) && disagree++ < 10)
                        CHECK_MSG(false, "%s seed %llu: EP %s, node %s (%s): core %d ('%s'), oracle %d (%s)",
                                  family, (unsigned long long)seed, eps[e]->name, n->name ? n->name : "",
                                  n->op_type, core, why, oracle, pc_capo_reason_phrase(reason));
                }
            pc_ep_registry_free(reg);
            pc_case_free(&c);
        }
    CHECK(disagree == 0 && pairs > 5000 && claimed > 1000 && claimed < pairs);
    printf("test_oracles_capability: %zu node x EP pairs, %zu claimed, %zu disagreements; refused:", pairs,
           claimed, disagree);
    for (int r = 1; r < PC_CAPO_REASON_COUNT; r++)
        printf(" '%s' %zu", pc_capo_reason_phrase((pc_capo_reason)r), refused_by[r]);
    printf("\n");
}

int main(void)
{
    test_rules();
    test_against_core();
    return pc_test_finish("test_oracles_capability");
}
