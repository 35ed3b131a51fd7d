/* Layout transformer (pc_layout_transform), one case per layout-sensitive op: the exact structure afterwards
 * (Transpose perms around input 0 / output 0, the node in com.ms.internal.nhwc with its EP, new Transposes
 * unassigned and carrying the node's annotation, types permuted, output names kept) and bit-exact equivalence
 * with the original on the reference executor (layout moves are pure data movement). Also: the internal ops
 * added to the reference's composite table (NHWC op vs Transpose∘standard op∘Transpose, both on the
 * reference), and nodes the transformer must leave alone (among them nodes whose NHWC form the EP would not
 * claim). */
#include <string.h>

#include "tests/pass_test_util.h"
#include "tests/test_util.h"

static const pc_ep *nhwc_ep;

static const char *test_ann = "encoder.block0";

static pc_node *producer_of(pc_model *m, const char *value)
{
    pc_value *v = pc_graph_find_value(m->graph, value);
    return v ? v->producer : NULL;
}

static bool perm_is(const pc_node *t, int32_t rank, bool to_last)
{
    if (!t || strcmp(t->op_type, "Transpose") != 0) return false;
    const pc_attr *a = pc_node_attr(t, "perm");
    if (!a || a->type != PC_ATTR_INTS || a->n != (size_t)rank) return false;
    for (int32_t i = 0; i < rank; i++) {
        int64_t want = to_last ? (i == 0          ? 0
                                  : i == rank - 1 ? 1
                                                  : i + 1)
                               : (i == 0   ? 0
                                  : i == 1 ? rank - 1
                                           : i - 1);
        if (a->ints[i] != want) return false;
    }
    return true;
}

/* Tags the producer of "y" for the nhwc EP, transforms, and checks structure and numbers. */
static void run_case(const char *label, pc_model *m, int32_t rank, int64_t seed)
{
    pc_error err;
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    pc_node *n = producer_of(m, "y");
    CHECK(n != NULL);
    if (!n) return;
    const char *op = n->op_type;
    CHECK_OK(pc_node_set_metadata(n, PC_LAYER_ANN_KEY, test_ann, &err), &err);
    n->ep = "nhwc";
    pc_value *y = n->outputs[0];
    pc_type y_type;
    CHECK_OK(pc_type_copy(m, &y_type, &y->type, &err), &err);
    uint32_t nodes_before = m->graph->n_nodes;
    pc_model *before = pt_clone(m);

    bool changed = false;
    CHECK_OK(pc_layout_transform(m->graph, nhwc_ep, NULL, &changed, &err), &err);
    CHECK_MSG(changed, "%s: not moved", label);
    CHECK_OK(pc_graph_verify(m->graph, &err), &err);
    CHECK_MSG(strcmp(n->domain, "com.ms.internal.nhwc") == 0 && strcmp(n->op_type, op) == 0, "%s: %s:%s",
              label, n->domain, n->op_type);
    CHECK(n->ep && strcmp(n->ep, "nhwc") == 0);
    CHECK(pc_model_opset(m, "com.ms.internal.nhwc") == pc_model_opset(m, ""));
    CHECK(m->graph->n_nodes == nodes_before + 2);
    CHECK(pt_count_op(m, "Transpose") == 2);
    pc_node *tin = n->inputs[0]->producer;
    CHECK_MSG(perm_is(tin, rank, true), "%s: input Transpose perm", label);
    /* the output value keeps its name and now comes from the closing Transpose */
    pc_node *tout = y->producer;
    CHECK_MSG(perm_is(tout, rank, false), "%s: output Transpose perm", label);
    CHECK(tout && tout->inputs[0] == n->outputs[0] && n->outputs[0] != y);
    CHECK(y->is_graph_output && strcmp(y->name, "y") == 0);
    CHECK(pc_type_equal(&y->type, &y_type));
    for (int k = 0; k < 2; k++) {
        pc_node *t = k ? tout : tin;
        if (!t) continue;
        CHECK_MSG(t->ep == NULL, "%s: new Transpose is assigned to '%s'", label, t->ep);
        CHECK(pc_node_annotation(t) && strcmp(pc_node_annotation(t), test_ann) == 0);
    }
    /* types carried: NHWC value dims are the NCHW dims permuted */
    const pc_value *yn = n->outputs[0];
    if (y_type.kind == PC_TYPE_TENSOR && y_type.shape.rank == rank) {
        CHECK(yn->type.kind == PC_TYPE_TENSOR && yn->type.elem == y_type.elem && yn->type.shape.rank == rank);
        for (int32_t i = 0; yn->type.shape.rank == rank && i < rank; i++) {
            int32_t src = i == 0 ? 0 : i == rank - 1 ? 1 : i + 1;
            CHECK_MSG(yn->type.shape.dims[i].kind == y_type.shape.dims[src].kind &&
                          yn->type.shape.dims[i].size == y_type.shape.dims[src].size,
                      "%s: dim %d", label, i);
        }
    } else {
        CHECK_MSG(false, "%s: shape inference did not type y", label);
    }
    char why[PT_WHY_SIZE];
    int eq = pt_equiv(before, m, (uint64_t)seed, 0, 0, why, sizeof why);
    CHECK_MSG(eq == 1, "%s: %s", label, why);
    pc_model_free(before);
    pc_model_free(m);
}

static pc_model *model_x(int64_t opset, pc_dtype dt, int32_t rank, const int64_t *dims)
{
    pc_model *m = pt_model(opset);
    pt_input(m, "x", dt, rank, dims);
    return m;
}

static void set_ints(pc_node *n, const char *name, size_t k, const int64_t *v)
{
    pc_error err;
    if (pc_node_set_attr_ints(n, name, k, v, &err) != PC_OK) pt_die(name, &err);
}

static void set_int(pc_node *n, const char *name, int64_t v)
{
    pc_error err;
    if (pc_node_set_attr_int(n, name, v, &err) != PC_OK) pt_die(name, &err);
}

static float ramp(int i)
{
    return (float)((i * 37) % 17 - 8) / 8.0f;
}

static pc_value *const_ramp(pc_model *m, const char *name, int32_t rank, const int64_t *dims, float offset)
{
    float v[512];
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= dims[i];
    for (int64_t i = 0; i < n && i < 512; i++)
        v[i] = ramp((int)i) + offset;
    return pt_const_f(m, name, rank, dims, v);
}

static void test_conv_family(void)
{
    pc_model *m = model_x(17, PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 5, 5});
    const_ramp(m, "w", 4, (int64_t[]){4, 3, 3, 3}, 0);
    const_ramp(m, "b", 1, (int64_t[]){4}, 0.5f);
    pc_node *n = pt_node(m, "Conv", "", "x,w,b", "y", NULL);
    set_ints(n, "pads", 4, (int64_t[]){1, 1, 1, 1});
    pt_output(m, "y");
    run_case("Conv 2D", m, 4, 1);

    m = model_x(17, PC_DTYPE_FLOAT, 5, (int64_t[]){1, 2, 3, 4, 3});
    const_ramp(m, "w", 5, (int64_t[]){4, 1, 2, 2, 2}, 0);
    n = pt_node(m, "Conv", "", "x,w", "y", NULL);
    set_int(n, "group", 2);
    pt_output(m, "y");
    run_case("Conv 3D grouped", m, 5, 2);

    m = model_x(17, PC_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 7});
    const_ramp(m, "w", 3, (int64_t[]){2, 3, 3}, 0);
    n = pt_node(m, "Conv", "", "x,w", "y", NULL);
    set_ints(n, "strides", 1, (int64_t[]){2});
    pt_output(m, "y");
    run_case("Conv 1D", m, 3, 3);

    m = model_x(17, PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 4});
    const_ramp(m, "w", 4, (int64_t[]){3, 2, 3, 3}, 0);
    n = pt_node(m, "ConvTranspose", "", "x,w", "y", NULL);
    set_ints(n, "strides", 2, (int64_t[]){2, 2});
    pt_output(m, "y");
    run_case("ConvTranspose", m, 4, 4);

    m = model_x(17, PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 5, 5});
    const_ramp(m, "w", 4, (int64_t[]){2, 3, 3, 3}, 0);
    n = pt_node(m, "FusedConv", "com.microsoft", "x,w", "y", NULL);
    pc_error err;
    CHECK_OK(pc_node_set_attr_string(n, "activation", "Relu", &err), &err);
    pt_output(m, "y");
    /* shape inference does not know the contrib op: give y its type */
    CHECK_OK(pt_set_tensor_type(pc_graph_find_value(m->graph, "y"), PC_DTYPE_FLOAT, 4,
                                (int64_t[]){1, 2, 3, 3}, &err),
             &err);
    run_case("com.microsoft FusedConv", m, 4, 5);
}

static void test_pools(void)
{
    static const struct {
        const char *op;
        int32_t rank;
        int64_t dims[5];
    } cases[] = {
        {"MaxPool", 4, {1, 3, 4, 4}},
        {"AveragePool", 4, {1, 2, 5, 5}},
        {"LpPool", 4, {1, 2, 4, 5}},
        {"MaxPool", 5, {1, 2, 4, 4, 4}},
        {"GlobalAveragePool", 4, {2, 3, 3, 2}},
        {"GlobalMaxPool", 3, {2, 3, 5}},
        {"GlobalLpPool", 4, {1, 3, 3, 3}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pc_model *m = model_x(17, PC_DTYPE_FLOAT, cases[i].rank, cases[i].dims);
        pc_node *n = pt_node(m, cases[i].op, "", "x", "y", NULL);
        if (strncmp(cases[i].op, "Global", 6) != 0) {
            int64_t k[3] = {2, 2, 2}, pads[6] = {1, 0, 1, 0, 1, 0};
            set_ints(n, "kernel_shape", (size_t)cases[i].rank - 2, k);
            if (strcmp(cases[i].op, "AveragePool") == 0)
                set_ints(n, "pads", (size_t)(cases[i].rank - 2) * 2, pads);
            if (strcmp(cases[i].op, "LpPool") == 0) set_int(n, "p", 3);
        }
        pt_output(m, "y");
        char label[64];
        snprintf(label, sizeof label, "%s rank %d", cases[i].op, cases[i].rank);
        run_case(label, m, cases[i].rank, 10 + (int64_t)i);
    }

    /* MaxUnpool: indices from a MaxPool (left NCHW: its Indices output is used) */
    pc_model *m = model_x(17, PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 4, 4});
    pc_node *mp = pt_node(m, "MaxPool", "", "x", "p,idx", NULL);
    set_ints(mp, "kernel_shape", 2, (int64_t[]){2, 2});
    set_ints(mp, "strides", 2, (int64_t[]){2, 2});
    pc_node *n = pt_node(m, "MaxUnpool", "", "p,idx", "y", NULL);
    set_ints(n, "kernel_shape", 2, (int64_t[]){2, 2});
    set_ints(n, "strides", 2, (int64_t[]){2, 2});
    pt_output(m, "y");
    mp->ep = "nhwc"; /* tagged, but not movable: its indices are NCHW positions */
    run_case("MaxUnpool", m, 4, 20);
}

static void test_norms_and_moves(void)
{
    pc_model *m = model_x(17, PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 3, 2});
    const_ramp(m, "s", 1, (int64_t[]){3}, 0);
    const_ramp(m, "b", 1, (int64_t[]){3}, 0.25f);
    const_ramp(m, "mean", 1, (int64_t[]){3}, 0);
    pt_const_f(m, "var", 1, (int64_t[]){3}, (float[]){0.5f, 1.0f, 2.0f});
    pt_node(m, "BatchNormalization", "", "x,s,b,mean,var", "y", NULL);
    pt_output(m, "y");
    run_case("BatchNormalization", m, 4, 30);

    m = model_x(17, PC_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 3, 2});
    const_ramp(m, "s", 1, (int64_t[]){3}, 0);
    const_ramp(m, "b", 1, (int64_t[]){3}, 0.25f);
    pt_node(m, "InstanceNormalization", "", "x,s,b", "y", NULL);
    pt_output(m, "y");
    run_case("InstanceNormalization", m, 4, 31);

    m = model_x(17, PC_DTYPE_FLOAT, 4, (int64_t[]){1, 5, 2, 3});
    set_int(pt_node(m, "LRN", "", "x", "y", NULL), "size", 3);
    pt_output(m, "y");
    run_case("LRN", m, 4, 32);

    for (int mode = 0; mode < 2; mode++) {
        m = model_x(17, PC_DTYPE_FLOAT, 4, (int64_t[]){1, 8, 2, 3});
        pc_node *n = pt_node(m, "DepthToSpace", "", "x", "y", NULL);
        set_int(n, "blocksize", 2);
        pc_error err;
        CHECK_OK(pc_node_set_attr_string(n, "mode", mode ? "CRD" : "DCR", &err), &err);
        pt_output(m, "y");
        run_case(mode ? "DepthToSpace CRD" : "DepthToSpace DCR", m, 4, 33 + mode);
    }

    m = model_x(17, PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 4, 6});
    set_int(pt_node(m, "SpaceToDepth", "", "x", "y", NULL), "blocksize", 2);
    pt_output(m, "y");
    run_case("SpaceToDepth", m, 4, 35);

    m = model_x(16, PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 4, 4});
    pt_input(m, "grid", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 2, 2});
    pt_node(m, "GridSample", "", "x,grid", "y", NULL);
    pt_output(m, "y");
    run_case("GridSample", m, 4, 36);
}

static void test_quant_and_resize(void)
{
    pc_model *m = model_x(17, PC_DTYPE_UINT8, 4, (int64_t[]){1, 2, 4, 4});
    pt_const_f(m, "xs", 0, NULL, (float[]){0.05f});
    pt_const(m, "xz", PC_DTYPE_UINT8, 0, NULL, (uint8_t[]){128});
    pt_const(m, "w", PC_DTYPE_UINT8, 4, (int64_t[]){3, 2, 1, 1}, (uint8_t[]){1, 200, 30, 128, 77, 5});
    pt_const_f(m, "ws", 0, NULL, (float[]){0.02f});
    pt_const(m, "wz", PC_DTYPE_UINT8, 0, NULL, (uint8_t[]){100});
    pt_const_f(m, "ys", 0, NULL, (float[]){0.1f});
    pt_const(m, "yz", PC_DTYPE_UINT8, 0, NULL, (uint8_t[]){120});
    pt_node(m, "QLinearConv", "", "x,xs,xz,w,ws,wz,ys,yz", "y", NULL);
    pt_output(m, "y");
    run_case("QLinearConv", m, 4, 40);

    m = model_x(13, PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 3});
    pt_const_f(m, "scales", 1, (int64_t[]){4}, (float[]){1, 1, 2, 1.5f});
    pt_node(m, "Resize", "", "x,,scales", "y", NULL);
    pt_output(m, "y");
    run_case("Resize scales", m, 4, 41);

    m = model_x(13, PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 3});
    pt_const_i64(m, "sizes", 4, (int64_t[]){1, 2, 5, 4});
    pc_node *n = pt_node(m, "Resize", "", "x,,,sizes", "y", NULL);
    pc_error err;
    CHECK_OK(pc_node_set_attr_string(n, "mode", "linear", &err), &err);
    pt_output(m, "y");
    run_case("Resize sizes linear", m, 4, 42);

    /* Resize whose scales are not constant: left alone (nothing to permute ahead of time) */
    m = model_x(13, PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 3});
    pt_input(m, "sc", PC_DTYPE_FLOAT, 1, (int64_t[]){4});
    n = pt_node(m, "Resize", "", "x,,sc", "y", NULL);
    pt_output(m, "y");
    n->ep = "nhwc";
    bool changed = true;
    CHECK_OK(pc_layout_transform(m->graph, nhwc_ep, NULL, &changed, &err), &err);
    CHECK(!changed && n->domain[0] == '\0' && pt_count_op(m, "Transpose") == 0);
    pc_model_free(m);
}

/* Nodes the transformer must not touch: other EPs, unknown rank, rank < 3, ops that are not layout-sensitive.
 */
static void test_left_alone(void)
{
    pc_error err;
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 4, 4});
    pt_input(m, "u", PC_DTYPE_FLOAT, -1, NULL);
    pt_input(m, "v", PC_DTYPE_FLOAT, 2, (int64_t[]){3, 4});
    const_ramp(m, "w", 4, (int64_t[]){2, 3, 1, 1}, 0);
    pc_node *cpu_conv = pt_node(m, "Conv", "", "x,w", "a", NULL);
    pc_node *unknown_pool = pt_node(m, "MaxPool", "", "u", "b", NULL);
    set_ints(unknown_pool, "kernel_shape", 2, (int64_t[]){1, 1});
    pc_node *relu = pt_node(m, "Relu", "", "x", "c", NULL);
    pc_node *lrn2 = pt_node(m, "LRN", "", "v", "d", NULL);
    set_int(lrn2, "size", 1);
    cpu_conv->ep = "cpu";
    unknown_pool->ep = relu->ep = lrn2->ep = "nhwc";
    for (const char *o = "abcd"; *o; o++) {
        char name[2] = {*o, 0};
        pt_output(m, name);
    }
    bool changed = true;
    CHECK_OK(pc_layout_transform(m->graph, nhwc_ep, NULL, &changed, &err), &err);
    CHECK(!changed && pt_count_op(m, "Transpose") == 0);
    CHECK(pc_model_opset(m, "com.ms.internal.nhwc") < 0);
    for (pc_node *n = m->graph->first; n; n = n->next)
        CHECK(n->domain[0] == '\0');

    /* unknown input rank, known weight rank (Conv): moved, with the rank taken from the weight */
    pc_node *conv_u = pt_node(m, "Conv", "", "u,w", "e", NULL);
    pt_output(m, "e");
    conv_u->ep = "nhwc";
    CHECK_OK(pc_layout_transform(m->graph, nhwc_ep, NULL, &changed, &err), &err);
    CHECK(changed && strcmp(conv_u->domain, "com.ms.internal.nhwc") == 0);
    CHECK(perm_is(conv_u->inputs[0]->producer, 4, true));
    CHECK(conv_u->inputs[0]->type.shape.rank == -1);
    CHECK(pt_count_op(m, "Transpose") == 2);
    CHECK_OK(pc_graph_verify(m->graph, &err), &err);
    /* EP names given and new nodes assigned when the caller does not ask for unassigned nodes */
    pc_node *conv2 = pt_node(m, "Conv", "", "x,w", "f", NULL);
    pt_output(m, "f");
    conv2->ep = "nhwc";
    pc_pass_options po = {.new_nodes_unassigned = false};
    CHECK_OK(pc_layout_transform(m->graph, nhwc_ep, &po, &changed, &err), &err);
    CHECK(changed && conv2->inputs[0]->producer && conv2->inputs[0]->producer->ep &&
          strcmp(conv2->inputs[0]->producer->ep, "nhwc") == 0);
    pc_model_free(m);
}

/* An EP that claims a node but not its NHWC form at the NHWC domain's opset (the model's import, else its
 * ai.onnx opset): the node stays in NCHW form on the EP, since once moved nothing could run it. The finding:
 * AveragePool at ai.onnx 18 moved for an EP whose NHWC rows end at 17, then refused by it. */
static void test_nhwc_form_refused(pc_ep_registry *reg)
{
    pc_error err;
    CHECK_OK(pc_ep_registry_load_text(reg,
                                      "ep pool17 layout=nhwc transpose=yes\n"
                                      "op AveragePool\n"
                                      "op AveragePool domain=com.ms.internal.nhwc opset=1..17\n",
                                      "pool17.ep", &err),
             &err);
    const pc_ep *ep = pc_ep_registry_find(reg, "pool17");
    CHECK(ep != NULL);
    if (!ep) return;
    /* a model that already imports the NHWC domain at 17 gets its nodes moved there; an import at 0 is the
     * domain's opset too (nothing claims it: the node stays), not a reason to fall back to ai.onnx's 17 */
    static const struct {
        int64_t opset, imported; /* imported: the NHWC domain's import, -1 none */
        bool moved;
    } cases[] = {{18, -1, false}, {18, 17, true}, {17, 0, false}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        bool moved = cases[c].moved;
        pc_model *m = model_x(cases[c].opset, PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 5, 5});
        pc_node *n = pt_node(m, "AveragePool", "", "x", "y", NULL);
        set_ints(n, "kernel_shape", 2, (int64_t[]){2, 2});
        pt_output(m, "y");
        n->ep = "pool17";
        if (cases[c].imported >= 0)
            CHECK_OK(pc_model_set_opset(m, "com.ms.internal.nhwc", cases[c].imported, &err), &err);
        CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
        pc_model *before = pt_clone(m);
        bool changed = !moved;
        CHECK_OK(pc_layout_transform(m->graph, ep, NULL, &changed, &err), &err);
        CHECK_OK(pc_graph_verify(m->graph, &err), &err);
        CHECK_MSG(changed == moved, "case %zu: changed %d", c, changed);
        CHECK_MSG(strcmp(n->domain, moved ? "com.ms.internal.nhwc" : "") == 0, "case %zu: domain '%s'", c,
                  n->domain);
        CHECK(pt_count_op(m, "Transpose") == (moved ? 2 : 0));
        CHECK(pc_model_opset(m, "com.ms.internal.nhwc") == cases[c].imported);
        CHECK(n->ep && strcmp(n->ep, "pool17") == 0);
        CHECK(pc_ep_claims_node(ep, n, NULL, 0));
        char why[PT_WHY_SIZE];
        CHECK_MSG(pt_equiv(before, m, 40 + (uint64_t)c, 0, 0, why, sizeof why) == 1, "%s", why);
        pc_model_free(before);
        pc_model_free(m);
    }
}

/* Suite finding (random EP layer, an NHWC EP claiming FusedConv in both domains but Conv only in NCHW): Conv
 * -> Relu stays NCHW at the layout step and level 2 fuses it into com.microsoft FusedConv on that EP;
 * optimizing the result again moved the FusedConv into the NHWC domain (not idempotent). An assignment
 * partitioning keeps from an earlier run keeps the node's form too. Checked: the second run's bytes equal the
 * first's, the fused node stays NCHW on the EP, and both compute what the original does (reference). */
static void test_kept_assignment_keeps_form(pc_ep_registry *reg)
{
    pc_error err;
    CHECK_OK(pc_ep_registry_load_text(reg,
                                      "ep fc layout=nhwc compiles=no transpose=no\n"
                                      "op Relu\n"
                                      "op Conv\n"
                                      "op FusedConv domain=com.microsoft\n"
                                      "op FusedConv domain=com.ms.internal.nhwc\n",
                                      "fc.ep", &err),
             &err);
    const pc_ep *ep = pc_ep_registry_find(reg, "fc");
    const pc_ep *cpu = pc_ep_registry_find(reg, "cpu");
    CHECK(ep != NULL && cpu != NULL);
    if (!ep || !cpu) return;
    pc_model *m = model_x(17, PC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 5, 5});
    const_ramp(m, "w", 4, (int64_t[]){3, 2, 3, 3}, 0.25f);
    pt_node(m, "Conv", "", "x,w", "c", NULL);
    pt_node(m, "Relu", "", "c", "y", NULL);
    pt_output(m, "y");
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    pc_model *original = pt_clone(m);
    const pc_ep *eps[2] = {ep, cpu};
    pc_optimize_options oo;
    pc_optimize_options_default(&oo);
    oo.level = 3;
    oo.eps = eps;
    oo.n_eps = 2;
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t s1 = 0, s2 = 0;
    CHECK_OK(pc_model_optimize(m, &oo, NULL, &err), &err);
    CHECK_OK(pc_model_save_bytes(m, &b1, &s1, &err), &err);
    pc_model *once = pt_clone(m);
    CHECK_OK(pc_model_optimize(m, &oo, NULL, &err), &err);
    CHECK_OK(pc_model_save_bytes(m, &b2, &s2, &err), &err);
    CHECK_MSG(s1 == s2 && b1 && b2 && memcmp(b1, b2, s1) == 0,
              "optimizing twice changed the model (%zu -> %zu bytes)", s1, s2);
    CHECK(pt_count_op(m, "FusedConv") == 1 && pt_count_op(m, "Transpose") == 0);
    for (const pc_node *n = m->graph->first; n; n = n->next)
        if (strcmp(n->op_type, "FusedConv") == 0)
            CHECK_MSG(strcmp(n->domain, "com.microsoft") == 0 && n->ep && strcmp(n->ep, "fc") == 0,
                      "FusedConv in '%s' on '%s'", n->domain, n->ep ? n->ep : "(none)");
    char why[PT_WHY_SIZE];
    CHECK_MSG(pt_equiv(original, once, 51, 1e-4, 1e-5, why, sizeof why) == 1, "%s", why);
    CHECK_MSG(pt_equiv(original, m, 51, 1e-4, 1e-5, why, sizeof why) == 1, "%s", why);
    free(b1);
    free(b2);
    pc_model_free(once);
    pc_model_free(original);
    pc_model_free(m);
}

/* The composite rows added for the transformer: NHWC op fed channels-last data equals Transpose → standard op
 * → Transpose, both run on the reference. */
static void composite_case(const char *op, int32_t rank, const int64_t *dims, void (*attrs)(pc_node *),
                           int seed)
{
    int64_t nhwc_dims[5];
    nhwc_dims[0] = dims[0];
    for (int32_t i = 1; i < rank - 1; i++)
        nhwc_dims[i] = dims[i + 1];
    nhwc_dims[rank - 1] = dims[1];
    int64_t to_first[5] = {0, rank - 1, 1, 2, 3}, to_last[5] = {0, 2, 3, 4, 5};
    to_last[rank - 1] = 1;
    pc_model *a = pt_model(17), *b = pt_model(17);
    pt_input(a, "x", PC_DTYPE_FLOAT, rank, nhwc_dims);
    pt_input(b, "x", PC_DTYPE_FLOAT, rank, nhwc_dims);
    attrs(pt_node(a, op, "com.ms.internal.nhwc", "x", "y", NULL));
    set_ints(pt_node(b, "Transpose", "", "x", "xt", NULL), "perm", (size_t)rank, to_first);
    attrs(pt_node(b, op, "", "xt", "yt", NULL));
    set_ints(pt_node(b, "Transpose", "", "yt", "y", NULL), "perm", (size_t)rank, to_last);
    pt_output(a, "y");
    pt_output(b, "y");
    pc_error err;
    CHECK_OK(pc_model_set_opset(a, "com.ms.internal.nhwc", 17, &err), &err);
    char why[PT_WHY_SIZE];
    CHECK_MSG(pt_equiv(b, a, (uint64_t)seed, 0, 0, why, sizeof why) == 1, "%s: %s", op, why);
    pc_model_free(a);
    pc_model_free(b);
}

static void attrs_lppool(pc_node *n)
{
    set_ints(n, "kernel_shape", 2, (int64_t[]){2, 2});
    set_int(n, "p", 2);
}

static void attrs_none(pc_node *n)
{
    (void)n;
}

static void test_composites(void)
{
    composite_case("LpPool", 4, (int64_t[]){1, 3, 4, 4}, attrs_lppool, 50);
    composite_case("GlobalLpPool", 4, (int64_t[]){2, 3, 2, 3}, attrs_none, 51);
    composite_case("GlobalLpPool", 5, (int64_t[]){1, 2, 2, 3, 2}, attrs_none, 52);

    /* com.microsoft Gelu = ai.onnx Gelu (opset 20, exact form) */
    pc_model *a = pt_model(20), *b = pt_model(20);
    pt_input(a, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){3, 5});
    pt_input(b, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){3, 5});
    pt_node(a, "Gelu", "com.microsoft", "x", "y", NULL);
    pt_node(b, "Gelu", "", "x", "y", NULL);
    pt_output(a, "y");
    pt_output(b, "y");
    char why[PT_WHY_SIZE];
    CHECK_MSG(pt_equiv(b, a, 53, 0, 0, why, sizeof why) == 1, "Gelu: %s", why);
    /* and against the formula x/2 (1 + erf(x/sqrt 2)) on a few points */
    pc_data *in = pc_data_new_tensor(PC_DTYPE_FLOAT, 2, (int64_t[]){3, 5}, NULL);
    CHECK(in != NULL);
    if (in) {
        float *x = in->data;
        for (int i = 0; i < 15; i++)
            x[i] = (float)(i - 7) * 0.5f;
        pc_data **outs = NULL;
        pc_error err;
        CHECK_OK(pc_ref_run(a, 1, &in, &outs, &err), &err);
        if (outs) {
            const float *y = outs[0]->data;
            for (int i = 0; i < 15; i++) {
                double want = 0.5 * x[i] * (1.0 + erf(x[i] / sqrt(2.0)));
                CHECK_MSG(fabs(y[i] - want) <= 1e-6 * (1 + fabs(want)), "Gelu(%g) = %g, want %g", x[i], y[i],
                          want);
            }
            pc_ref_free_outputs(a, outs);
        }
        pc_data_unref(in);
    }
    pc_model_free(a);
    pc_model_free(b);
}

int main(void)
{
    pc_ep_registry *reg = NULL;
    pc_error err;
    if (pc_ep_registry_create(&reg, &err) != PC_OK) pt_die("registry", &err);
    nhwc_ep = pc_ep_registry_find(reg, "nhwc");
    test_conv_family();
    test_pools();
    test_norms_and_moves();
    test_quant_and_resize();
    test_left_alone();
    test_composites();
    test_nhwc_form_refused(reg);
    test_kept_assignment_keeps_form(reg);
    pc_ep_registry_free(reg);
    return pc_test_finish("test_ep_layout");
}
