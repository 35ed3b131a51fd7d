/* IR mutation API: annotation inheritance, EP copy, use-list consistency after every edit, sorting, cycles,
 * initializers, subgraph outer references, save/load of IR-only state, OOM injection. */
#include "tests/test_util.h"

#include "core/ir/ir_internal.h"

/* Independent recount of use lists: every (node, input) edge appears exactly once in its value's consumers
 * and no consumer entry is stale. Written without the verifier so the two check each other. */
static int uses_consistent(const pc_graph *g)
{
    for (uint32_t v = 0; v < g->n_values; v++) {
        const pc_value *val = g->values[v];
        uint32_t edges = 0;
        for (const pc_node *n = g->first; n; n = n->next)
            for (uint32_t i = 0; i < n->n_inputs; i++)
                if (n->inputs[i] == val) {
                    edges++;
                    uint32_t found = 0;
                    for (uint32_t k = 0; k < val->n_consumers; k++)
                        found += val->consumers[k].node == n && val->consumers[k].index == i;
                    if (found != 1) return 0;
                }
        if (edges != val->n_consumers) return 0;
    }
    return 1;
}

static void check_graph(const pc_graph *g, const char *step)
{
    pc_error err;
    pc_status st = pc_graph_verify(g, &err);
    CHECK_MSG(st == PC_OK, "%s: verify: %s", step, err.message);
    CHECK_MSG(uses_consistent(g), "%s: use lists inconsistent", step);
}

static pc_type float_type(int32_t rank, const int64_t *dims, pc_dim *storage)
{
    pc_type t = {.kind = PC_TYPE_TENSOR, .elem = PC_DTYPE_FLOAT, .shape.rank = rank, .shape.dims = storage};
    for (int32_t i = 0; i < rank; i++)
        storage[i] = (pc_dim){.kind = PC_DIM_KNOWN, .size = dims[i]};
    return t;
}

/* x -> Relu(r) -> Sigmoid(s) -> y, with r annotated "encoder.block0" and on EP "nhwc". */
static pc_model *build_chain(pc_node **relu, pc_node **sig)
{
    pc_error err;
    pc_model *m;
    CHECK_OK(pc_model_create(&m, &err), &err);
    pc_graph *g = m->graph;
    pc_value *x = pc_graph_add_value(g, "x", NULL, &err);
    int64_t dims[2] = {2, 3};
    pc_dim st[2];
    pc_type t = float_type(2, dims, st);
    CHECK_OK(pc_value_set_type(x, &t, &err), &err);
    CHECK_OK(pc_graph_add_input(g, x, &err), &err);
    *relu = pc_graph_add_node(g, "Relu", "", 1, &x, 1, NULL, &err);
    CHECK(*relu != NULL);
    CHECK_OK(pc_node_set_metadata(*relu, PC_LAYER_ANN_KEY, "encoder.block0", &err), &err);
    (*relu)->ep = "nhwc";
    pc_value *r = (*relu)->outputs[0];
    *sig = pc_graph_add_node(g, "Sigmoid", "", 1, &r, 1, NULL, &err);
    CHECK(*sig != NULL);
    CHECK_OK(pc_graph_add_output(g, (*sig)->outputs[0], &err), &err);
    return m;
}

static void test_annotation_and_ep(void)
{
    pc_node *relu, *sig;
    pc_model *m = build_chain(&relu, &sig);
    pc_graph *g = m->graph;
    pc_error err;
    check_graph(g, "chain");
    CHECK(pc_node_annotation(relu) && strcmp(pc_node_annotation(relu), "encoder.block0") == 0);
    CHECK(pc_node_annotation(sig) == NULL);

    /* A replacement node made with annotation_source inherits layer_ann; one from an unannotated source
     * doesn't. */
    pc_value *in = relu->inputs[0];
    pc_node *repl = pc_graph_add_node(g, "Clip", "", 1, &in, 1, relu, &err);
    CHECK(repl && pc_node_annotation(repl) && strcmp(pc_node_annotation(repl), "encoder.block0") == 0);
    pc_node *plain = pc_graph_add_node(g, "Neg", "", 1, &in, 1, sig, &err);
    CHECK(plain && pc_node_annotation(plain) == NULL);
    /* conditional copy: NULL source is allowed and changes nothing */
    CHECK_OK(pc_node_copy_annotation(plain, NULL, &err), &err);
    CHECK(pc_node_annotation(plain) == NULL);
    CHECK_OK(pc_node_copy_annotation(plain, relu, &err), &err);
    CHECK(pc_node_annotation(plain) && strcmp(pc_node_annotation(plain), "encoder.block0") == 0);
    /* setting again replaces rather than duplicating the key */
    CHECK_OK(pc_node_set_metadata(plain, PC_LAYER_ANN_KEY, "decoder", &err), &err);
    CHECK(plain->n_metadata == 1 && strcmp(pc_node_annotation(plain), "decoder") == 0);
    CHECK(pc_node_remove_metadata(plain, PC_LAYER_ANN_KEY) && !pc_node_annotation(plain));

    /* EP copy */
    CHECK(repl->ep == NULL);
    pc_node_copy_ep(repl, relu);
    CHECK(repl->ep && strcmp(repl->ep, "nhwc") == 0);
    pc_node_copy_ep(plain, NULL);
    CHECK(plain->ep == NULL);
    check_graph(g, "after adding replacement nodes");

    /* replace_uses_except: Neg reads x; make Clip read Neg's output instead, leaving Neg itself alone */
    CHECK_OK(pc_value_replace_uses_except(in, plain->outputs[0], plain), NULL);
    CHECK(repl->inputs[0] == plain->outputs[0] && plain->inputs[0] == in);
    CHECK(relu->inputs[0] == plain->outputs[0]);
    CHECK_STATUS(pc_graph_verify(g, &err), PC_ERR_CYCLE, &err); /* Neg comes after its readers now */
    CHECK_OK(pc_graph_sort(g, &err), &err);
    check_graph(g, "after replace_uses_except + sort");

    /* Swap Relu for Clip the ORT way: move Relu's output (name, consumers) to Clip, then drop Relu. */
    pc_value *relu_out = relu->outputs[0];
    CHECK_OK(pc_graph_move_output(relu, 0, repl, 0), NULL);
    CHECK(repl->outputs[0] == relu_out && relu_out->producer == repl && relu_out->producer_output == 0);
    CHECK(sig->inputs[0] == relu_out);         /* Sigmoid now reads Clip, under the same name */
    CHECK(relu->outputs[0]->n_consumers == 0); /* Relu got Clip's unused value */
    CHECK_STATUS(pc_graph_verify(g, &err), PC_ERR_CYCLE, &err); /* Clip was appended after Sigmoid */
    CHECK_OK(pc_graph_sort(g, &err), &err);
    check_graph(g, "after move_output");
    CHECK_OK(pc_graph_remove_node(g, relu, &err), &err);
    CHECK(relu->removed && g->n_nodes == 3);
    check_graph(g, "after removing Relu");
    /* Neg is still read by Clip */
    CHECK_STATUS(pc_graph_remove_node(g, plain, &err), PC_ERR_INTERNAL, &err);
    CHECK(strstr(err.message, "still used") != NULL);
    CHECK_OK(pc_node_set_input(repl, 0, in, &err), &err);
    CHECK_OK(pc_graph_remove_node(g, plain, &err), &err);
    check_graph(g, "after removing Neg");
    CHECK_STATUS(pc_graph_remove_node(g, plain, &err), PC_ERR_INTERNAL, &err);

    /* a node whose output is still used or is a graph output cannot be removed */
    CHECK_STATUS(pc_graph_remove_node(g, repl, &err), PC_ERR_INTERNAL, &err);
    CHECK(strstr(err.message, "still used") != NULL);
    CHECK_STATUS(pc_graph_remove_node(g, sig, &err), PC_ERR_INTERNAL, &err);
    CHECK(strstr(err.message, "still used") != NULL);
    pc_model_free(m);
}

static void test_sort_and_cycles(void)
{
    pc_node *relu, *sig;
    pc_model *m = build_chain(&relu, &sig);
    pc_graph *g = m->graph;
    pc_error err;
    /* Insert a node *between* relu and sig but appended at the end: order is now invalid until sorted. */
    pc_value *r = relu->outputs[0];
    pc_node *mid = pc_graph_add_node(g, "Abs", "", 1, &r, 1, relu, &err);
    CHECK_OK(pc_node_set_input(sig, 0, mid->outputs[0], &err), &err);
    CHECK_STATUS(pc_graph_verify(g, &err), PC_ERR_CYCLE, &err);
    CHECK(strstr(err.message, "Sigmoid") != NULL || strstr(err.message, sig->name) != NULL);
    CHECK_OK(pc_graph_sort(g, &err), &err);
    CHECK(g->first == relu && relu->next == mid && mid->next == sig && g->last == sig);
    check_graph(g, "after sort");

    /* Make a real cycle: relu reads sig's output. */
    CHECK_OK(pc_node_set_input(relu, 0, sig->outputs[0], &err), &err);
    CHECK(uses_consistent(g));
    CHECK_STATUS(pc_graph_sort(g, &err), PC_ERR_CYCLE, &err);
    CHECK(strstr(err.message, "cycle") != NULL);
    CHECK_STATUS(pc_graph_verify(g, &err), PC_ERR_CYCLE, &err);
    pc_model_free(m);
}

/* The verifier catches broken use lists in both directions: a missing entry and a duplicated one. */
static void test_verify_use_lists(void)
{
    pc_node *relu, *sig;
    pc_model *m = build_chain(&relu, &sig);
    pc_error err;
    pc_value *r = relu->outputs[0];
    CHECK(r->n_consumers == 1);
    r->n_consumers = 0; /* sig's use of r is no longer listed */
    CHECK_STATUS(pc_graph_verify(m->graph, &err), PC_ERR_INTERNAL, &err);
    CHECK(strstr(err.message, "misses") && strstr(err.message, r->name));
    r->n_consumers = 1;
    check_graph(m->graph, "restored use list");
    pc_use dup[2] = {r->consumers[0], r->consumers[0]};
    r->consumers = dup;
    r->n_consumers = 2;
    CHECK_STATUS(pc_graph_verify(m->graph, &err), PC_ERR_INTERNAL, &err);
    CHECK(strstr(err.message, "twice") != NULL);
    r->n_consumers = 1;
    pc_model_free(m);
}

static void test_dangling_and_outputs(void)
{
    pc_node *relu, *sig;
    pc_model *m = build_chain(&relu, &sig);
    pc_graph *g = m->graph;
    pc_error err;
    pc_value *ghost = pc_graph_add_value(g, "ghost", NULL, &err);
    CHECK(ghost != NULL);
    CHECK(pc_graph_add_value(g, "ghost", NULL, &err) == NULL && err.status == PC_ERR_DUPLICATE_NAME);
    CHECK_OK(pc_node_set_input(sig, 0, ghost, &err), &err);
    CHECK_STATUS(pc_graph_verify(g, &err), PC_ERR_DANGLING_INPUT, &err);
    CHECK(strstr(err.message, "ghost") && strstr(err.message, "Sigmoid"));
    CHECK_OK(pc_node_set_input(sig, 0, relu->outputs[0], &err), &err);
    check_graph(g, "restored");
    CHECK_OK(pc_graph_add_output(g, ghost, &err), &err);
    CHECK_STATUS(pc_graph_verify(g, &err), PC_ERR_UNPRODUCED_OUTPUT, &err);
    CHECK(strstr(err.message, "ghost") != NULL);
    pc_model_free(m);
}

static void test_initializers_and_names(void)
{
    pc_node *relu, *sig;
    pc_model *m = build_chain(&relu, &sig);
    pc_graph *g = m->graph;
    pc_error err;
    int64_t dims[2] = {2, 3};
    pc_tensor *t = pc_tensor_create(m, NULL, PC_DTYPE_FLOAT, 2, dims, &err);
    CHECK(t && t->n_elements == 6 && t->n_bytes == 24);
    pc_value *w = pc_graph_add_value(g, "w", NULL, &err);
    CHECK_OK(pc_graph_set_initializer(g, w, t, &err), &err);
    CHECK(w->type.kind == PC_TYPE_TENSOR && w->type.shape.rank == 2 && w->type.shape.dims[1].size == 3);
    CHECK_STATUS(pc_graph_set_initializer(g, w, t, &err), PC_ERR_DUPLICATE_INITIALIZER, &err);
    pc_value *ins[2] = {sig->outputs[0], w};
    pc_node *add = pc_graph_add_node(g, "Add", "", 2, ins, 1, NULL, &err);
    CHECK(add != NULL);
    check_graph(g, "with initializer");
    CHECK_STATUS(pc_graph_remove_initializer(g, w, &err), PC_ERR_INTERNAL, &err);
    pc_tensor *t2 = pc_tensor_create(m, NULL, PC_DTYPE_FLOAT, 2, dims, &err);
    ((float *)t2->data)[0] = 1.5f;
    CHECK_OK(pc_graph_replace_initializer(w, t2, &err), &err);
    CHECK(w->initializer == t2 && strcmp(t2->name, "w") == 0);
    CHECK_OK(pc_graph_remove_node(g, add, &err), &err);
    CHECK_OK(pc_graph_remove_initializer(g, w, &err), &err);
    CHECK(g->n_initializers == 0 && !w->initializer);
    check_graph(g, "initializer removed");

    /* generated names never collide, with user names or each other */
    pc_value *taken = pc_graph_add_value(g, "Relu_pc0", NULL, &err);
    (void)taken;
    for (int i = 0; i < 50; i++) {
        pc_value *v = pc_graph_add_value(g, NULL, "Relu", &err);
        CHECK(v != NULL);
        CHECK(pc_graph_find_value(g, v->name) == v);
    }
    /* bad tensors */
    int64_t neg[1] = {-1};
    CHECK(pc_tensor_create(m, "n", PC_DTYPE_FLOAT, 1, neg, &err) == NULL &&
          err.status == PC_ERR_NEGATIVE_DIM);
    int64_t huge[2] = {INT64_MAX, 4};
    CHECK(pc_tensor_create(m, "h", PC_DTYPE_FLOAT, 2, huge, &err) == NULL && err.status == PC_ERR_OVERFLOW);
    CHECK(pc_tensor_create(m, "u", PC_DTYPE_UNDEFINED, 0, NULL, &err) == NULL && err.status == PC_ERR_DTYPE);
    int64_t odd[1] = {3};
    pc_tensor *i4 = pc_tensor_create(m, "i4", PC_DTYPE_INT4, 1, odd, &err);
    CHECK(i4 && i4->n_bytes == 2); /* 3 nibbles round up to 2 bytes */
    pc_model_free(m);
}

static void test_attributes(void)
{
    pc_node *relu, *sig;
    pc_model *m = build_chain(&relu, &sig);
    pc_error err;
    CHECK_OK(pc_node_set_attr_int(sig, "k", 7, &err), &err);
    CHECK_OK(pc_node_set_attr_float(sig, "f", 0.5f, &err), &err);
    CHECK_OK(pc_node_set_attr_string(sig, "s", "same_upper", &err), &err);
    int64_t ints[3] = {1, 2, 3};
    CHECK_OK(pc_node_set_attr_ints(sig, "is", 3, ints, &err), &err);
    CHECK(pc_node_attr_int(sig, "k", -1) == 7);
    CHECK(pc_node_attr_int(sig, "f", -1) == -1); /* wrong type gives the fallback */
    CHECK(pc_node_attr_float(sig, "f", 0) == 0.5f);
    CHECK(strcmp(pc_node_attr_string(sig, "s", ""), "same_upper") == 0);
    CHECK(pc_node_attr(sig, "is")->n == 3 && pc_node_attr(sig, "is")->ints[2] == 3);
    CHECK_OK(pc_node_set_attr_int(sig, "k", 9, &err), &err);
    CHECK(sig->n_attrs == 4 && pc_node_attr_int(sig, "k", -1) == 9);
    CHECK(pc_node_remove_attr(sig, "k") && !pc_node_attr(sig, "k") && sig->n_attrs == 3);
    /* Sigmoid has no attributes: the verifier names the node and the attribute */
    CHECK_STATUS(pc_graph_verify(m->graph, &err), PC_ERR_ATTRIBUTE, &err);
    CHECK(strstr(err.message, "'f'") || strstr(err.message, "'s'") || strstr(err.message, "'is'"));
    pc_model_free(m);
}

/* If node whose branches read an outer value produced by a node that comes later in the list: sort must put
 * the producer first (implicit input), and the verifier must see the dependency. */
static void test_subgraph_outer_refs(void)
{
    pc_error err;
    pc_model *m;
    CHECK_OK(pc_model_create(&m, &err), &err);
    pc_graph *g = m->graph;
    pc_value *cond = pc_graph_add_value(g, "cond", NULL, &err);
    pc_value *x = pc_graph_add_value(g, "x", NULL, &err);
    CHECK_OK(pc_graph_add_input(g, cond, &err), &err);
    CHECK_OK(pc_graph_add_input(g, x, &err), &err);
    pc_node *iff = pc_graph_add_node(g, "If", "", 1, &cond, 1, NULL, &err);
    pc_node *prod = pc_graph_add_node(g, "Neg", "", 1, &x, 1, NULL, &err);
    CHECK(iff && prod);
    CHECK_OK(pc_graph_add_output(g, iff->outputs[0], &err), &err);
    const char *names[2] = {"then_branch", "else_branch"};
    for (int b = 0; b < 2; b++) {
        pc_graph *sub = pc_graph_create(m, g, iff);
        CHECK(sub != NULL);
        pc_value *ref = pc_graph_add_value(sub, prod->outputs[0]->name, NULL, &err);
        ref->outer = prod->outputs[0];
        prod->outputs[0]->n_subgraph_refs++;
        pc_node *id = pc_graph_add_node(sub, b ? "Abs" : "Identity", "", 1, &ref, 1, NULL, &err);
        CHECK_OK(pc_graph_add_output(sub, id->outputs[0], &err), &err);
        pc_attr a = {.name = names[b], .type = PC_ATTR_GRAPH, .g = sub};
        pc_attr *arr = pc_arena_array(&m->arena, 2, sizeof *arr);
        if (iff->n_attrs) arr[0] = iff->attrs[0];
        arr[iff->n_attrs] = a;
        iff->attrs = arr;
        iff->n_attrs++;
        iff->cap_attrs = 2;
    }
    /* If comes before Neg in the list: an ordering error the verifier must name */
    CHECK_STATUS(pc_graph_verify(g, &err), PC_ERR_CYCLE, &err);
    CHECK(strstr(err.message, "subgraph") != NULL);
    CHECK_OK(pc_graph_sort(g, &err), &err);
    CHECK(g->first == prod && g->last == iff);
    check_graph(g, "subgraph after sort");
    /* the producer cannot be removed while a subgraph reads it */
    CHECK(prod->outputs[0]->n_consumers == 0 && prod->outputs[0]->n_subgraph_refs == 2);
    CHECK_STATUS(pc_graph_remove_node(g, prod, &err), PC_ERR_INTERNAL, &err);
    /* once the If is gone (its output no longer a graph output), the references are released */
    g->n_outputs = 0;
    iff->outputs[0]->is_graph_output = false;
    CHECK_OK(pc_graph_remove_node(g, iff, &err), &err);
    CHECK(prod->outputs[0]->n_subgraph_refs == 0);
    CHECK_OK(pc_graph_remove_node(g, prod, &err), &err);
    pc_model_free(m);
}

/* EP assignments and annotations survive save + load (EP travels as node metadata "pc_ep"). */
static void test_save_load_ir_state(void)
{
    pc_node *relu, *sig;
    pc_model *m = build_chain(&relu, &sig);
    pc_error err;
    uint8_t *bytes;
    size_t size;
    CHECK_OK(pc_model_save_bytes(m, &bytes, &size, &err), &err);
    pc_model *back;
    CHECK_OK(pc_model_load_bytes(bytes, size, NULL, &back, &err), &err);
    if (back) {
        char diff[256];
        CHECK_MSG(pc_model_equal(m, back, diff, sizeof diff), "%s", diff);
        const pc_node *r = back->graph->first;
        CHECK(r && r->ep && strcmp(r->ep, "nhwc") == 0 && !pc_node_metadata(r, "pc_ep"));
        CHECK(r && pc_node_annotation(r) && strcmp(pc_node_annotation(r), "encoder.block0") == 0);
        /* changing the EP makes the models differ, and the diff says so */
        relu->ep = "cpu";
        CHECK(!pc_model_equal(m, back, diff, sizeof diff) && strstr(diff, "EP") != NULL);
        pc_model_free(back);
    }
    free(bytes);
    pc_model_free(m);
}

/* value_info is written in its canonical order (node outputs in node order, then the rest by name), not in
 * creation order: a producer created after its consumer's input value (as a pass re-creating a node does)
 * must not make save(load(save)) differ from save (issue 14: roundtrip@prune_simple/bytes-differ with
 * control-flow bodies). */
static void test_value_info_order(void)
{
    pc_error err;
    pc_model *m;
    CHECK_OK(pc_model_create(&m, &err), &err);
    pc_model_set_opset(m, "", 17, &err);
    pc_graph *g = m->graph;
    g->name = "g"; /* a loaded graph always has one ("" when the file has none) */
    pc_value *x = pc_graph_add_value(g, "x", NULL, &err);
    pc_type t = {.kind = PC_TYPE_TENSOR, .elem = PC_DTYPE_FLOAT, .shape = {.rank = 0}};
    pc_value_set_type(x, &t, &err);
    pc_graph_add_input(g, x, &err);
    pc_node *relu = pc_graph_add_node(g, "Relu", "", 1, &x, 1, NULL, &err);
    pc_node *neg = pc_graph_add_node(g, "Neg", "", 1, &relu->outputs[0], 1, NULL, &err);
    pc_graph_add_output(g, neg->outputs[0], &err);
    /* a producer created last, then moved in front of the Relu by the sort */
    pc_node *abs_ = pc_graph_add_node(g, "Abs", "", 1, &x, 1, NULL, &err);
    CHECK_OK(pc_node_set_input(relu, 0, abs_->outputs[0], &err), &err);
    CHECK_OK(pc_graph_sort(g, &err), &err);
    pc_value *vi[2] = {relu->outputs[0], abs_->outputs[0]};
    for (int i = 0; i < 2; i++) {
        CHECK_OK(pc_value_set_type(vi[i], &t, &err), &err);
        vi[i]->has_value_info = true;
    }
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0;
    pc_model *back = NULL;
    CHECK_OK(pc_model_save_bytes(m, &b1, &n1, &err), &err);
    CHECK_OK(pc_model_load_bytes(b1, n1, NULL, &back, &err), &err);
    if (back) CHECK_OK(pc_model_save_bytes(back, &b2, &n2, &err), &err);
    /* and the reload equals the model: equality walks value_info in the saver's order, not creation order
     * (corpus/ort/crash-loop-body-value-order: a file whose nodes the loader sorted) */
    char diff[256];
    CHECK_MSG(back && pc_model_equal(m, back, diff, sizeof diff), "reload differs: %s", diff);
    CHECK_MSG(b2 && n1 == n2 && memcmp(b1, b2, n1) == 0, "save(load(save)) differs: %zu vs %zu bytes", n1,
              n2);
    free(b1);
    free(b2);
    pc_model_free(back);
    pc_model_free(m);
}

/* Values that no node produces (graph-level, outer-scope, orphan) with value_info compare and save by name,
 * whatever order they were created in: a loader creates them in the order of the file it read (the fuzz find
 * corpus/ort/crash-body-outer-value-order: a Loop body's outer-scope values x1, x0 in ORT file order, x0, x1
 * after the ONNX round trip). Two models differing only in that order are equal and save to the same bytes.
 */
static pc_model *orphans_in_order(const char *const *names, int n)
{
    pc_error err;
    pc_model *m;
    CHECK_OK(pc_model_create(&m, &err), &err);
    pc_model_set_opset(m, "", 17, &err);
    pc_graph *g = m->graph;
    g->name = "g";
    pc_type t = {.kind = PC_TYPE_TENSOR, .elem = PC_DTYPE_FLOAT, .shape = {.rank = 0}};
    pc_value *x = pc_graph_add_value(g, "x", NULL, &err);
    pc_value_set_type(x, &t, &err);
    pc_graph_add_input(g, x, &err);
    pc_node *relu = pc_graph_add_node(g, "Relu", "", 1, &x, 1, NULL, &err);
    pc_graph_add_output(g, relu->outputs[0], &err);
    for (int i = 0; i < n; i++) {
        pc_value *v = pc_graph_add_value(g, names[i], NULL, &err);
        CHECK(v != NULL);
        if (!v) continue;
        CHECK_OK(pc_value_set_type(v, &t, &err), &err);
        v->has_value_info = true;
    }
    return m;
}

static void test_value_info_order_by_name(void)
{
    static const char *const ab[] = {"a", "b", "c"}, *const ba[] = {"c", "b", "a"};
    pc_model *m1 = orphans_in_order(ab, 3), *m2 = orphans_in_order(ba, 3);
    char diff[256];
    CHECK_MSG(pc_model_equal(m1, m2, diff, sizeof diff), "creation order made models differ: %s", diff);
    pc_error err;
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0;
    CHECK_OK(pc_model_save_bytes(m1, &b1, &n1, &err), &err);
    CHECK_OK(pc_model_save_bytes(m2, &b2, &n2, &err), &err);
    CHECK_MSG(b1 && b2 && n1 == n2 && memcmp(b1, b2, n1) == 0, "saves differ: %zu vs %zu bytes", n1, n2);
    /* a different type still makes them differ */
    pc_value *c = pc_graph_find_value(m2->graph, "c");
    pc_type d = {.kind = PC_TYPE_TENSOR, .elem = PC_DTYPE_DOUBLE, .shape = {.rank = 0}};
    if (c) CHECK_OK(pc_value_set_type(c, &d, &err), &err);
    CHECK(!pc_model_equal(m1, m2, diff, sizeof diff) && strstr(diff, "'c'"));
    free(b1);
    free(b2);
    pc_model_free(m1);
    pc_model_free(m2);
}

/* OOM injection: fail the N-th allocation of an edit sequence for every N; each call must report NOMEM (or
 * succeed) and leave nothing leaked (ASan's leak check runs at exit). */
static void test_oom_injection(void)
{
    for (uint64_t n = 1; n < 200; n++) {
        pc_error err;
        pc_model *m;
        if (pc_model_create(&m, &err) != PC_OK) continue;
        m->mem.fail_after = m->mem.n_allocs + n;
        pc_graph *g = m->graph;
        bool failed = false;
        pc_value *x = pc_graph_add_value(g, "x", NULL, &err);
        failed |= !x;
        for (int i = 0; i < 30 && !failed; i++) {
            pc_node *node = pc_graph_add_node(g, "Relu", "", 1, &x, 1, NULL, &err);
            if (!node) {
                failed = true;
                CHECK(err.status == PC_ERR_NOMEM);
                break;
            }
            if (pc_node_set_metadata(node, PC_LAYER_ANN_KEY, "a.b", &err) != PC_OK) {
                failed = true;
                CHECK(err.status == PC_ERR_NOMEM);
            }
            x = node->outputs[0];
        }
        pc_model_free(m);
    }
}

/* pc_value_set_type under every allocation failure: NOMEM, or a copy equal to the source (a dim's symbol,
 * a denotation, a tensor's name lost to a failed copy would read as a different type: the symbolic-dims
 * generator found it through the alloc-failure property). */
static void test_type_copy_oom(void)
{
    pc_dim dims[2] = {{.kind = PC_DIM_SYMBOLIC, .symbol = "batch", .denotation = "DATA_BATCH"},
                      {.kind = PC_DIM_KNOWN, .size = 3}};
    pc_type src = {.kind = PC_TYPE_TENSOR,
                   .elem = PC_DTYPE_FLOAT,
                   .denotation = "TENSOR",
                   .shape = {.rank = 2, .dims = dims}};
    bool completed = false;
    for (uint64_t n = 1; n < 100 && !completed; n++) {
        pc_error err;
        pc_model *m;
        if (pc_model_create(&m, &err) != PC_OK) continue;
        pc_value *x = pc_graph_add_value(m->graph, "x", NULL, &err);
        if (!x) {
            pc_model_free(m);
            continue;
        }
        m->mem.fail_after = m->mem.n_allocs + n;
        pc_status st = pc_value_set_type(x, &src, &err);
        if (st == PC_OK && !m->mem.failed) completed = true;
        CHECK_MSG(st == PC_ERR_NOMEM || (st == PC_OK && pc_type_equal(&x->type, &src)),
                  "allocation %llu failing: %s, and the copy %s the source", (unsigned long long)n,
                  pc_status_name(st),
                  st == PC_OK && !pc_type_equal(&x->type, &src) ? "differs from" : "equals");
        m->mem.fail_after = 0;
        pc_tensor *t = pc_tensor_create(m, "w", PC_DTYPE_FLOAT, 0, NULL, &err);
        CHECK(t && t->name && strcmp(t->name, "w") == 0);
        pc_model_free(m);
    }
    CHECK(completed);
    /* a tensor's name: NOMEM, never a nameless tensor */
    for (uint64_t n = 1; n < 20; n++) {
        pc_error err;
        pc_model *m;
        if (pc_model_create(&m, &err) != PC_OK) continue;
        m->mem.fail_after = m->mem.n_allocs + n;
        pc_tensor *t = pc_tensor_create(m, "weights", PC_DTYPE_FLOAT, 0, NULL, &err);
        CHECK_MSG(t ? t->name && strcmp(t->name, "weights") == 0 : err.status == PC_ERR_NOMEM,
                  "allocation %llu failing: tensor %s", (unsigned long long)n,
                  t ? "without its name" : "error");
        pc_model_free(m);
    }
}

int main(void)
{
    test_annotation_and_ep();
    test_sort_and_cycles();
    test_dangling_and_outputs();
    test_verify_use_lists();
    test_initializers_and_names();
    test_attributes();
    test_subgraph_outer_refs();
    test_save_load_ir_state();
    test_value_info_order();
    test_value_info_order_by_name();
    test_oom_injection();
    test_type_copy_oom();
    return pc_test_finish("test_ir");
}
