/* EPs: the built-ins as data, GetCapability on single nodes (op, domain, opset, dtype, attribute rules,
 * reasons), the EP description file (a good file and every error, with file:line:column), the --ep list, and
 * the layer assignment grammar (prefix, exact, leftmost wins, errors with positions). */
#include <string.h>

#include "tests/pass_test_util.h"
#include "tests/test_util.h"

static pc_ep_registry *new_registry(void)
{
    pc_ep_registry *reg = NULL;
    pc_error err;
    if (pc_ep_registry_create(&reg, &err) != PC_OK) pt_die("registry", &err);
    return reg;
}

static void test_builtins(void)
{
    pc_ep_registry *reg = new_registry();
    const pc_ep *cpu = pc_ep_registry_find(reg, "cpu"), *nhwc = pc_ep_registry_find(reg, "nhwc");
    CHECK(cpu && nhwc);
    CHECK(pc_ep_registry_find(reg, "gpu") == NULL);
    CHECK(cpu->layout == PC_LAYOUT_NCHW && !cpu->compiles && cpu->runs_transpose && cpu->all_standard_ops);
    CHECK(nhwc->layout == PC_LAYOUT_NHWC && nhwc->compiles && nhwc->runs_transpose &&
          !nhwc->all_standard_ops);

    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 4});
    pt_input(m, "i", PC_DTYPE_INT32, 4, (int64_t[]){1, 3, 4, 4});
    pt_input(m, "u", PC_DTYPE_FLOAT, -1, NULL);
    pt_const_f(m, "w", 4, (int64_t[]){2, 3, 1, 1}, NULL);
    pc_node *conv = pt_node(m, "Conv", "", "x,w", "c", NULL);
    pc_node *relu_i = pt_node(m, "Relu", "", "i", "ri", NULL);
    pc_node *topk = pt_node(m, "TopK", "", "x", "tv,ti", NULL);
    pc_node *fused = pt_node(m, "FusedConv", "com.microsoft", "x,w", "fc", NULL);
    pc_node *nconv = pt_node(m, "Conv", "com.ms.internal.nhwc", "x,w", "nc", NULL);
    pc_node *mp1 = pt_node(m, "MaxPool", "", "x", "mp1", NULL);
    pc_node *mp2 = pt_node(m, "MaxPool", "", "x", "mp2", NULL);
    pc_error err;
    CHECK_OK(pc_node_set_attr_int(mp2, "storage_order", 1, &err), &err);
    char why[PT_WHY_SIZE];
    /* cpu: every standard op, contrib fusions, never the NHWC domain */
    CHECK(pc_ep_claims_node(cpu, conv, why, sizeof why));
    CHECK(pc_ep_claims_node(cpu, relu_i, why, sizeof why));
    CHECK(pc_ep_claims_node(cpu, topk, why, sizeof why));
    CHECK(pc_ep_claims_node(cpu, fused, why, sizeof why));
    CHECK(!pc_ep_claims_node(cpu, nconv, why, sizeof why));
    CHECK_MSG(strstr(why, "com.ms.internal.nhwc:Conv is not in the EP's op list") != NULL, "%s", why);
    /* nhwc: float Conv yes, int32 Relu no (dtype), TopK no (op), NHWC Conv yes, storage_order rule */
    CHECK(pc_ep_claims_node(nhwc, conv, why, sizeof why));
    CHECK(!pc_ep_claims_node(nhwc, relu_i, why, sizeof why));
    CHECK_MSG(strcmp(why, "element type int32 of 'i' is not supported") == 0, "%s", why);
    CHECK(!pc_ep_claims_node(nhwc, topk, why, sizeof why));
    CHECK_MSG(strcmp(why, "op ai.onnx:TopK is not in the EP's op list") == 0, "%s", why);
    CHECK(pc_ep_claims_node(nhwc, nconv, why, sizeof why));
    CHECK(pc_ep_claims_node(nhwc, mp1, why, sizeof why));
    CHECK(!pc_ep_claims_node(nhwc, mp2, why, sizeof why));
    CHECK_MSG(strcmp(why, "attribute 'storage_order' = 1 is not supported") == 0, "%s", why);
    /* unknown element type: not claimed by an EP with a dtype list */
    pc_node *relu_u = pt_node(m, "Relu", "", "u", "ru", NULL);
    relu_u->inputs[0]->type.elem = PC_DTYPE_UNDEFINED;
    CHECK(!pc_ep_claims_node(nhwc, relu_u, why, sizeof why));
    CHECK_MSG(strcmp(why, "element type of 'u' is unknown") == 0, "%s", why);
    CHECK(pc_ep_claims_node(cpu, relu_u, why, sizeof why)); /* cpu has no dtype constraint */
    pc_model_free(m);

    /* opset range: nhwc claims ai.onnx from opset 7 (the transpose optimizer's first); opset 7-8
     * BatchNormalization only in its per-channel form (spatial = 1, the default) */
    m = pt_model(6);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 4});
    pc_node *r6 = pt_node(m, "Relu", "", "x", "y", NULL);
    CHECK(!pc_ep_claims_node(nhwc, r6, why, sizeof why));
    CHECK_MSG(strcmp(why, "opset 6 of 'ai.onnx' is outside 7..21") == 0, "%s", why);
    CHECK(pc_ep_claims_node(cpu, r6, why, sizeof why));
    pc_model_free(m);
    m = pt_model(7);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 4});
    pt_const_f(m, "s", 1, (int64_t[]){3}, NULL);
    pc_node *bn = pt_node(m, "BatchNormalization", "", "x,s,s,s,s", "bn", NULL);
    CHECK(pc_ep_claims_node(nhwc, bn, why, sizeof why));
    CHECK_OK(pc_node_set_attr_int(bn, "spatial", 0, &err), &err);
    CHECK(!pc_ep_claims_node(nhwc, bn, why, sizeof why));
    CHECK_MSG(strcmp(why, "attribute 'spatial' = 0 is not supported") == 0, "%s", why);
    pc_model_free(m);
    m = pt_model(9);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 4});
    pc_node *r = pt_node(m, "Relu", "", "x", "y", NULL);
    CHECK(pc_ep_claims_node(nhwc, r, why, sizeof why));
    CHECK(pc_ep_claims_node(cpu, r, why, sizeof why));
    /* a range without a maximum is shown as written (A..), not with INT64_MAX */
    {
        pc_ep_registry *reg2 = NULL;
        pc_error e2;
        CHECK(pc_ep_registry_create(&reg2, &e2) == PC_OK);
        CHECK(pc_ep_registry_load_text(reg2, "ep open\nop Relu opset=13..\n", "open.ep", &e2) == PC_OK);
        CHECK(!pc_ep_claims_node(pc_ep_registry_find(reg2, "open"), r, why, sizeof why));
        CHECK_MSG(strcmp(why, "opset 9 of 'ai.onnx' is below 13..") == 0, "%s", why);
        pc_ep_registry_free(reg2);
    }
    /* an op the schema does not know at opset 9 (Gelu is opset 20): cpu refuses it */
    pc_node *g = pt_node(m, "Gelu", "", "x", "g", NULL);
    CHECK(!pc_ep_claims_node(cpu, g, why, sizeof why));
    /* the other standard domains are cpu's too; nhwc does not list them */
    pc_node *adagrad = pt_node(m, "Adagrad", "ai.onnx.preview.training", "x,x,x,x,x", "a1,a2,a3", NULL);
    pc_node *label = pt_node(m, "LabelEncoder", "ai.onnx.ml", "x", "l", NULL);
    pc_node *bogus = pt_node(m, "NoSuchOp", "ai.onnx.ml", "x", "nso", NULL);
    CHECK(pc_ep_claims_node(cpu, adagrad, why, sizeof why));
    CHECK(pc_ep_claims_node(cpu, label, why, sizeof why));
    CHECK(!pc_ep_claims_node(cpu, bogus, why, sizeof why));
    CHECK_MSG(strcmp(why, "op ai.onnx.ml:NoSuchOp is not in the EP's op list") == 0, "%s", why);
    CHECK(!pc_ep_claims_node(nhwc, adagrad, why, sizeof why));
    pc_model_free(m);
    pc_ep_registry_free(reg);
}

/* systolic: the integer ops and quantized Transposes in ai.onnx, its own QLinearConv_nhwc, nothing float */
static void test_systolic(void)
{
    pc_ep_registry *reg = new_registry();
    const pc_ep *sys = pc_ep_registry_find(reg, "systolic");
    CHECK(sys && sys->layout == PC_LAYOUT_NCHW && !sys->compiles && sys->runs_transpose &&
          !sys->all_standard_ops);
    pc_model *m = pt_model(13);
    pt_input(m, "q", PC_DTYPE_UINT8, 4, (int64_t[]){1, 2, 3, 3});
    pt_input(m, "f", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 3});
    pt_input(m, "s", PC_DTYPE_FLOAT, 0, NULL);
    pt_input(m, "z", PC_DTYPE_UINT8, 0, NULL);
    pt_input(m, "wz", PC_DTYPE_INT8, 0, NULL);
    pt_input(m, "w", PC_DTYPE_INT8, 4, (int64_t[]){2, 2, 1, 1});
    pc_node *qconv = pt_node(m, "QLinearConv", "", "q,s,z,w,s,wz,s,z", "y", NULL);
    pc_node *qmm = pt_node(m, "QLinearMatMul", "", "q,s,z,q,s,z,s,z", "mm", NULL);
    pc_node *tq = pt_node(m, "Transpose", "", "q", "tq", NULL);
    pc_node *tf = pt_node(m, "Transpose", "", "f", "tf", NULL);
    pc_node *conv = pt_node(m, "Conv", "", "f,f", "c", NULL);
    pc_node *relu = pt_node(m, "Relu", "", "f", "r", NULL);
    pc_node *nhwc = pt_node(m, "QLinearConv_nhwc", PC_SYSTOLIC_DOMAIN, "q,s,z,w,s,wz,s,z", "yn", NULL);
    char why[256];
    CHECK(pc_ep_claims_node(sys, qconv, why, sizeof why) && pc_ep_claims_node(sys, qmm, why, sizeof why));
    CHECK(pc_ep_claims_node(sys, tq, why, sizeof why) && pc_ep_claims_node(sys, nhwc, why, sizeof why));
    CHECK(!pc_ep_claims_node(sys, tf, why, sizeof why) && !pc_ep_claims_node(sys, conv, why, sizeof why));
    /* a float Relu only as part of a DQ -> Relu -> Q group (test_passes_systolic has the groups) */
    CHECK_MSG(!pc_ep_claims_node(sys, relu, why, sizeof why) && strstr(why, "not part of a DQ -> Relu -> Q"),
              "%s", why);
    /* nothing else runs its domain: cpu refuses QLinearConv_nhwc */
    CHECK(!pc_ep_claims_node(pc_ep_registry_find(reg, "cpu"), nhwc, why, sizeof why));
    pc_model_free(m);
    pc_ep_registry_free(reg);
}

/* blocked: a compiling EP with nChw16c; 4-D float activations of MKL-DNN's ops, its own domain */
static void test_blocked(void)
{
    pc_ep_registry *reg = new_registry();
    const pc_ep *blk = pc_ep_registry_find(reg, "blocked");
    CHECK(blk && blk->layout == PC_LAYOUT_BLOCKED && blk->block_size == 16 && blk->compiles &&
          !blk->runs_transpose && !blk->all_standard_ops);
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 5, 5});
    pt_input(m, "x3", PC_DTYPE_FLOAT, 3, (int64_t[]){1, 3, 5});
    pt_input(m, "w", PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 1, 1});
    pt_input(m, "w3", PC_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 1});
    pc_node *conv = pt_node(m, "Conv", "", "x,w", "c", NULL);
    pc_node *conv3 = pt_node(m, "Conv", "", "x3,w3", "c3", NULL);
    pc_node *grouped = pt_node(m, "Conv", "", "x,w", "g", NULL);
    pc_error err;
    CHECK_OK(pc_node_set_attr_int(grouped, "group", 3, &err), &err);
    pc_node *relu = pt_node(m, "Relu", "", "x", "r", NULL);
    pc_node *tanh = pt_node(m, "Tanh", "", "x", "t", NULL);
    char why[256];
    CHECK(pc_ep_claims_node(blk, conv, why, sizeof why) && pc_ep_claims_node(blk, relu, why, sizeof why));
    CHECK_MSG(!pc_ep_claims_node(blk, conv3, why, sizeof why) && strstr(why, "rank 3 of 'x3' is not 4"), "%s",
              why);
    CHECK_MSG(!pc_ep_claims_node(blk, grouped, why, sizeof why) && strstr(why, "'group' = 3"), "%s", why);
    CHECK(!pc_ep_claims_node(blk, tanh, why, sizeof why));
    pc_model_free(m);
    pc_ep_registry_free(reg);
}

static void test_parse_list(void)
{
    pc_ep_registry *reg = new_registry();
    pc_error err;
    const pc_ep **eps = NULL;
    uint32_t n = 0;
    CHECK_OK(pc_ep_registry_parse_list(reg, "nhwc,cpu", &eps, &n, &err), &err);
    CHECK(n == 2 && strcmp(eps[0]->name, "nhwc") == 0 && strcmp(eps[1]->name, "cpu") == 0);
    CHECK_OK(pc_ep_registry_parse_list(reg, " cpu ", &eps, &n, &err), &err);
    CHECK(n == 1 && strcmp(eps[0]->name, "cpu") == 0);
    CHECK_STATUS(pc_ep_registry_parse_list(reg, "nhwc,,cpu", &eps, &n, &err), PC_ERR_USAGE, &err);
    CHECK_MSG(strstr(err.message, "entry 2 is empty") != NULL, "%s", err.message);
    CHECK_STATUS(pc_ep_registry_parse_list(reg, "nhwc,gpu", &eps, &n, &err), PC_ERR_USAGE, &err);
    CHECK_MSG(strstr(err.message, "entry 2: unknown EP 'gpu'") != NULL, "%s", err.message);
    CHECK_STATUS(pc_ep_registry_parse_list(reg, "cpu,nhwc,cpu", &eps, &n, &err), PC_ERR_USAGE, &err);
    CHECK_MSG(strstr(err.message, "entry 3: EP 'cpu' is listed twice") != NULL, "%s", err.message);
    CHECK_STATUS(pc_ep_registry_parse_list(reg, "", &eps, &n, &err), PC_ERR_USAGE, &err);
    /* only spaces and tabs are trimmed: another control character is part of the name */
    CHECK_OK(pc_ep_registry_parse_list(reg, "\tnhwc ,\t cpu", &eps, &n, &err), &err);
    CHECK(n == 2 && strcmp(eps[1]->name, "cpu") == 0);
    CHECK_STATUS(pc_ep_registry_parse_list(reg, "nhwc,\ncpu", &eps, &n, &err), PC_ERR_USAGE, &err);
    CHECK_MSG(strstr(err.message, "entry 2: unknown EP '\ncpu'") != NULL, "%s", err.message);
    CHECK_STATUS(pc_ep_registry_parse_list(reg, "cpu\x1f", &eps, &n, &err), PC_ERR_USAGE, &err);
    pc_ep_registry_free(reg);
}

static const char good_file[] = "# a test accelerator\n"
                                "ep npu layout=nhwc compiles=yes transpose=no\n"
                                "op Conv domain= opset=11..21 types=float,float16\n"
                                "attr group values=1 default=1\n"
                                "op Conv domain=com.ms.internal.nhwc opset=1.. types=float   # NHWC form\n"
                                "op Relu\r\n"
                                "\n"
                                "ep blk layout=blocked block=8\n"
                                "op * domain=ai.onnx opset=13\n";

static void test_ep_file_good(void)
{
    pc_ep_registry *reg = new_registry();
    pc_error err;
    CHECK_OK(pc_ep_registry_load_text(reg, good_file, "good.ep", &err), &err);
    const pc_ep *npu = pc_ep_registry_find(reg, "npu"), *blk = pc_ep_registry_find(reg, "blk");
    CHECK(npu && blk);
    if (!npu || !blk) {
        pc_ep_registry_free(reg);
        return;
    }
    CHECK(npu->layout == PC_LAYOUT_NHWC && npu->compiles && !npu->runs_transpose && !npu->all_standard_ops);
    CHECK(npu->n_ops == 3);
    CHECK(strcmp(npu->ops[0].op_type, "Conv") == 0 && npu->ops[0].domain[0] == '\0');
    CHECK(npu->ops[0].opset_min == 11 && npu->ops[0].opset_max == 21);
    CHECK(npu->ops[0].dtypes == ((UINT64_C(1) << PC_DTYPE_FLOAT) | (UINT64_C(1) << PC_DTYPE_FLOAT16)));
    CHECK(npu->ops[0].n_attr_rules == 1 && strcmp(npu->ops[0].attr_rules[0].name, "group") == 0);
    CHECK(npu->ops[0].attr_rules[0].n_values == 1 && npu->ops[0].attr_rules[0].values[0] == 1);
    CHECK(npu->ops[0].attr_rules[0].has_default && npu->ops[0].attr_rules[0].default_value == 1);
    CHECK(strcmp(npu->ops[1].domain, "com.ms.internal.nhwc") == 0 && npu->ops[1].opset_min == 1 &&
          npu->ops[1].opset_max == INT64_MAX);
    CHECK(strcmp(npu->ops[2].op_type, "Relu") == 0 && npu->ops[2].dtypes == 0 && npu->ops[2].opset_min == 1);
    CHECK(blk->layout == PC_LAYOUT_BLOCKED && blk->block_size == 8 && !blk->compiles && !blk->runs_transpose);
    CHECK(blk->n_ops == 1 && strcmp(blk->ops[0].op_type, "*") == 0 && blk->ops[0].opset_min == 13 &&
          blk->ops[0].opset_max == 13);

    /* the file's EP at work: group rule with default, wildcard op, opset exact */
    pc_model *m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 4, 4, 4});
    pt_const_f(m, "w", 4, (int64_t[]){4, 2, 1, 1}, NULL);
    pc_node *c1 = pt_node(m, "Conv", "", "x,w", "c1", NULL);
    pc_node *c2 = pt_node(m, "Conv", "", "x,w", "c2", NULL);
    CHECK_OK(pc_node_set_attr_int(c2, "group", 2, &err), &err);
    pc_node *t = pt_node(m, "Transpose", "", "x", "t", NULL);
    char why[PT_WHY_SIZE];
    CHECK(pc_ep_claims_node(npu, c1, why, sizeof why));
    CHECK(!pc_ep_claims_node(npu, c2, why, sizeof why));
    CHECK_MSG(strcmp(why, "attribute 'group' = 2 is not supported") == 0, "%s", why);
    CHECK(!pc_ep_claims_node(npu, t, why, sizeof why));
    CHECK_MSG(strcmp(why, "EP does not run Transpose") == 0, "%s", why);
    /* a rule on an int attribute refuses one of another type (a malformed node), naming the type */
    pc_node *c3 = pt_node(m, "Conv", "", "x,w", "c3", NULL);
    CHECK_OK(pc_node_set_attr_float(c3, "group", 1.0f, &err), &err);
    CHECK(!pc_ep_claims_node(npu, c3, why, sizeof why));
    CHECK_MSG(strcmp(why, "attribute 'group' is not an int (FLOAT)") == 0, "%s", why);
    CHECK(pc_ep_claims_node(blk, c2, why, sizeof why));
    pc_model_free(m);

    /* loading the same file again: every name is now a duplicate, nothing more is added */
    CHECK_STATUS(pc_ep_registry_load_text(reg, good_file, "good.ep", &err), PC_ERR_USAGE, &err);
    CHECK_MSG(strcmp(err.message, "good.ep:2:4: field 'name': EP 'npu' already exists") == 0, "%s",
              err.message);
    pc_ep_registry_free(reg);
}

typedef struct bad_case {
    const char *text;
    const char *message; /* exact */
} bad_case;

static const bad_case bad_files[] = {
    {"op Conv\n", "f.ep:1:1: an 'op' line before any 'ep' line"},
    {"ep a\nattr group values=1\n", "f.ep:2:1: an 'attr' line before any 'op' line of its EP"},
    {"ep a\nop Conv colour=red\n",
     "f.ep:2:9: unknown field 'colour' on an op line (known: domain, opset, types, rank, group)"},
    {"ep a\nop Relu rank=0\n", "f.ep:2:14: field 'rank': expected 1..64, got '0'"},
    {"ep a\nop Relu group=relu\n", "f.ep:2:15: field 'group': expected dq-relu-q, got 'relu'"},
    {"ep a speed=9\n",
     "f.ep:1:6: unknown field 'speed' on an ep line (known: layout, block, compiles, transpose, "
     "standard)"},
    {"ep a\nop Conv opset=x..3\n",
     "f.ep:2:15: field 'opset': expected A..B, A.. or A with A >= 1, got 'x..3'"},
    {"ep a\nop Conv opset=12..11\n", "f.ep:2:15: field 'opset': minimum 12 > maximum 11"},
    {"ep a\nop Conv opset=1..2x\n", "f.ep:2:18: field 'opset': bad maximum '2x'"},
    {"ep a\nop Conv types=float,floot\n", "f.ep:2:21: field 'types': unknown element type 'floot'"},
    {"ep a\nop Conv types=float,float\n", "f.ep:2:21: field 'types': 'float' listed twice"},
    {"ep a\nop Conv types=\n", "f.ep:2:15: field 'types': empty type name"},
    {"ep cpu\n", "f.ep:1:4: field 'name': EP 'cpu' already exists"},
    {"ep nhwc layout=nhwc\n", "f.ep:1:4: field 'name': EP 'nhwc' already exists"},
    {"ep a\nop Relu\nep a\n", "f.ep:3:4: field 'name': EP 'a' is defined twice in this file"},
    {"ep a layout=blocked\nop Relu\n", "f.ep:1:6: field 'layout': layout=blocked needs block=N"},
    {"ep a block=8\n", "f.ep:1:6: field 'block': only meaningful with layout=blocked"},
    {"ep a layout=blocked block=0\n", "f.ep:1:27: field 'block': expected a number in 1..1024, got '0'"},
    {"ep a layout=nhcw\n", "f.ep:1:13: field 'layout': expected nchw, nhwc or blocked, got 'nhcw'"},
    {"ep a compiles=maybe\n", "f.ep:1:15: field 'compiles': expected yes or no, got 'maybe'"},
    {"ep a compiles=yes compiles=no\n", "f.ep:1:19: field 'compiles' given twice"},
    {"ep\n", "f.ep:1:3: field 'name': missing EP name"},
    {"ep layout=nhwc\n", "f.ep:1:4: field 'name': missing EP name before fields"},
    {"ep a(b)\n", "f.ep:1:4: field 'name': 'a(b)' has characters other than letters, digits, '_', '-', '.'"},
    {"ep a\nop\n", "f.ep:2:3: field 'op': missing op type"},
    {"ep a\nop Conv\nattr group\n", "f.ep:3:6: field 'values': missing (attr group needs values=V,...)"},
    {"ep a\nop Conv\nattr group values=1,x\n", "f.ep:3:21: field 'values': bad number 'x'"},
    {"ep a\nop Conv\nattr group values=1\nattr group values=2\n",
     "f.ep:4:6: field 'attr': 'group' constrained twice for op Conv"},
    {"ep a\nop Conv\nattr group values=1 default=one\n", "f.ep:3:29: field 'default': bad number 'one'"},
    {"ep a\nop Conv domain\n", "f.ep:2:9: expected key=value, got 'domain'"},
    {"ep a\nkernel Conv\n", "f.ep:2:1: unknown line kind 'kernel' (expected ep, op or attr)"},
    {"# nothing\n", "f.ep: no 'ep' line: the file defines no EP"},
    /* 17 fields: the error names the 17th's column */
    {"ep a\nop Conv k1=1 k2=1 k3=1 k4=1 k5=1 k6=1 k7=1 k8=1 k9=1 k10=1 k11=1 k12=1 k13=1 k14=1 k15=1\n",
     "f.ep:2:84: too many fields (at most 16)"},
};

static void test_ep_file_errors(void)
{
    for (size_t i = 0; i < sizeof bad_files / sizeof bad_files[0]; i++) {
        pc_ep_registry *reg = new_registry();
        pc_error err;
        /* a good EP first: nothing of the file may be added when a later line is bad */
        char text[512];
        snprintf(text, sizeof text, "%s", bad_files[i].text);
        CHECK_STATUS(pc_ep_registry_load_text(reg, text, "f.ep", &err), PC_ERR_USAGE, &err);
        CHECK_MSG(strcmp(err.message, bad_files[i].message) == 0, "case %zu: got '%s', want '%s'", i,
                  err.message, bad_files[i].message);
        CHECK(pc_ep_registry_find(reg, "a") == NULL);
        pc_ep_registry_free(reg);
    }
    /* all or nothing: a good EP before the bad line is not registered either */
    pc_ep_registry *reg = new_registry();
    pc_error err;
    CHECK_STATUS(pc_ep_registry_load_text(reg, "ep good\nop Relu\nep bad layout=x\n", "f.ep", &err),
                 PC_ERR_USAGE, &err);
    CHECK(pc_ep_registry_find(reg, "good") == NULL);
    CHECK_STATUS(pc_ep_registry_load_file(reg, "/nonexistent/dir/x.ep", &err), PC_ERR_IO, &err);
    CHECK_MSG(strstr(err.message, "/nonexistent/dir/x.ep: cannot open") != NULL, "%s", err.message);
    pc_ep_registry_free(reg);
}

/* ---- layer rules ---- */

static void test_layer_rules(void)
{
    pc_ep_registry *reg = new_registry();
    pc_error err;
    const pc_ep **eps = NULL;
    uint32_t n = 0;
    CHECK_OK(pc_ep_registry_parse_list(reg, "nhwc,cpu", &eps, &n, &err), &err);
    const pc_ep *nhwc = eps[0], *cpu = eps[1];
    pc_layer_rules *r = NULL;
    CHECK_OK(pc_layer_rules_parse(" nhwc ( enc , =head ) ; cpu(post, encoder.block1, he) ", eps, n, &r, &err),
             &err);
    /* prefix: 'enc' matches encoder.*; leftmost wins: encoder.block1 matches nhwc's 'enc' before cpu's
     * pattern */
    CHECK(pc_layer_rules_match(r, "encoder.block0") == nhwc);
    CHECK(pc_layer_rules_match(r, "encoder.block1") == nhwc);
    CHECK(pc_layer_rules_match(r, "enc") == nhwc);
    /* exact: '=head' matches only 'head'; 'header' falls to cpu's prefix 'he' */
    CHECK(pc_layer_rules_match(r, "head") == nhwc);
    CHECK(pc_layer_rules_match(r, "header") == cpu);
    CHECK(pc_layer_rules_match(r, "postproc") == cpu);
    CHECK(pc_layer_rules_match(r, "decoder") == NULL);
    CHECK(pc_layer_rules_match(r, "en") ==
          NULL); /* a pattern must be a prefix of the annotation, not vice versa */
    CHECK(pc_layer_rules_match(r, NULL) == NULL);
    pc_layer_rules_free(r);
    /* leftmost wins even when the exact rule comes second (ORT would prefer... the rule is leftmost)
     */
    CHECK_OK(pc_layer_rules_parse("cpu(dec);nhwc(=decoder)", eps, n, &r, &err), &err);
    CHECK(pc_layer_rules_match(r, "decoder") == cpu);
    pc_layer_rules_free(r);
    CHECK_OK(pc_layer_rules_parse("nhwc(=decoder);cpu(dec)", eps, n, &r, &err), &err);
    CHECK(pc_layer_rules_match(r, "decoder") == nhwc);
    CHECK(pc_layer_rules_match(r, "decoder2") == cpu);
    pc_layer_rules_free(r);
    /* the same text with different match kinds is not a duplicate */
    CHECK_OK(pc_layer_rules_parse("nhwc(a, =a)", eps, n, &r, &err), &err);
    pc_layer_rules_free(r);
    CHECK_OK(pc_layer_rules_parse("   ", eps, n, &r, &err), &err);
    CHECK(pc_layer_rules_match(r, "x") == NULL);
    pc_layer_rules_free(r);
    pc_ep_registry_free(reg);
}

static const bad_case bad_rules[] = {
    {"nhwc(a);cpu(a)", "layer assignment 'nhwc(a);cpu(a)': position 13: pattern 'a' is given twice"},
    {"nhwc(=a, b, =a)", "layer assignment 'nhwc(=a, b, =a)': position 13: pattern '=a' is given twice"},
    {"gpu(a)", "layer assignment 'gpu(a)': position 1: unknown EP 'gpu' (not in the EP list)"},
    {"cpu(a); npu (b)",
     "layer assignment 'cpu(a); npu (b)': position 9: unknown EP 'npu' (not in the EP list)"},
    {"cpu(a", "layer assignment 'cpu(a': position 6: missing ')' (unbalanced parenthesis)"},
    {"cpu(a))", "layer assignment 'cpu(a))': position 7: unbalanced ')'"},
    {"cpu()", "layer assignment 'cpu()': position 5: empty pattern"},
    {"cpu(a,,b)", "layer assignment 'cpu(a,,b)': position 7: empty pattern"},
    {"cpu(=)", "layer assignment 'cpu(=)': position 5: empty pattern"},
    {"cpu(a=b)", "layer assignment 'cpu(a=b)': position 6: '=' may only start a pattern"},
    {"cpu", "layer assignment 'cpu': position 4: expected '(' after the EP name"},
    /* whitespace is ignored everywhere, also inside names: "cpu a" is the EP name "cpua" */
    {"cpu a(x)", "layer assignment 'cpu a(x)': position 1: unknown EP 'cpua' (not in the EP list)"},
    {"cpu(a) nhwc(b)", "layer assignment 'cpu(a) nhwc(b)': position 8: expected ';' between rules"},
    {"cpu(a);", "layer assignment 'cpu(a);': position 7: a trailing ';' (expected a rule after it)"},
    {";cpu(a)", "layer assignment ';cpu(a)': position 1: expected an EP name"},
    {"cpu(a(b))", "layer assignment 'cpu(a(b))': position 6: expected ',' or ')'"},
    {"(a)", "layer assignment '(a)': position 1: expected an EP name"},
};

static void test_layer_rule_errors(void)
{
    pc_ep_registry *reg = new_registry();
    pc_error err;
    const pc_ep **eps = NULL;
    uint32_t n = 0;
    CHECK_OK(pc_ep_registry_parse_list(reg, "nhwc,cpu", &eps, &n, &err), &err);
    for (size_t i = 0; i < sizeof bad_rules / sizeof bad_rules[0]; i++) {
        pc_layer_rules *r = (pc_layer_rules *)&err; /* must be reset to NULL on failure */
        CHECK_STATUS(pc_layer_rules_parse(bad_rules[i].text, eps, n, &r, &err), PC_ERR_USAGE, &err);
        CHECK(r == NULL);
        CHECK_MSG(strcmp(err.message, bad_rules[i].message) == 0, "case %zu: got '%s', want '%s'", i,
                  err.message, bad_rules[i].message);
    }
    /* an EP known to the registry but not in the list passed is unknown to the rules */
    pc_layer_rules *r = NULL;
    CHECK_STATUS(pc_layer_rules_parse("nhwc(a)", eps + 1, 1, &r, &err), PC_ERR_USAGE, &err);
    CHECK_MSG(strstr(err.message, "position 1: unknown EP 'nhwc'") != NULL, "%s", err.message);
    pc_ep_registry_free(reg);
}

int main(void)
{
    test_builtins();
    test_systolic();
    test_blocked();
    test_parse_list();
    test_ep_file_good();
    test_ep_file_errors();
    test_layer_rules();
    test_layer_rule_errors();
    return pc_test_finish("test_ep_registry");
}
