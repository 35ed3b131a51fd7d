/* test_schema: the operator schema table against facts from the ONNX operator specification (Operators.md,
 * Changelog.md), written down here independently of the generated table, plus the lookup rules (largest
 * since_version <= opset, "ai.onnx" alias, unknown ops and domains) and the table's sort invariant. */
#include "tests/test_util.h"

#include "core/schema/schema.h"
#include "tests/pass_test_util.h"

static int since(const char *domain, const char *op, int64_t opset)
{
    const pc_op_schema *s = pc_schema_lookup(domain, op, opset);
    return s ? (int)s->since_version : -1;
}

/* The attribute exists with this type and required flag. */
static bool has_attr(const pc_op_schema *s, const char *name, pc_attr_type type, bool required)
{
    const pc_attr_schema *a = pc_schema_attr(s, name);
    return a != NULL && a->type == type && a->required == required;
}

/* Every since_version the table holds for (domain, op), in order, written as "1,11,13". */
static void versions_of(const char *domain, const char *op, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < pc_schema_count(); i++) {
        const pc_op_schema *s = pc_schema_at(i);
        if (strcmp(s->domain, domain) != 0 || strcmp(s->op_type, op) != 0) continue;
        int n = snprintf(buf + len, size - len, "%s%d", len ? "," : "", (int)s->since_version);
        if (n < 0 || (size_t)n >= size - len) break;
        len += (size_t)n;
    }
}

#define CHECK_VERSIONS(domain, op, expected)                                                                 \
    do {                                                                                                     \
        char got_[128];                                                                                      \
        versions_of(domain, op, got_, sizeof got_);                                                          \
        CHECK_MSG(strcmp(got_, expected) == 0, "%s versions: got %s, want %s", op, got_, expected);          \
    } while (0)

#define CHECK_SINCE(domain, op, opset, expected)                                                             \
    do {                                                                                                     \
        int got_ = since(domain, op, opset);                                                                 \
        CHECK_MSG(got_ == (expected), "%s at opset %d: since %d, want %d", op, (int)(opset), got_,           \
                  (int)(expected));                                                                          \
    } while (0)

static void test_table_invariants(void)
{
    char diag[256];
    bool ok = pc_schema_check_table(diag, sizeof diag);
    CHECK_MSG(ok, "%s", diag);
    CHECK(pc_schema_check_table(NULL, 0));

    /* Sorted, checked again here through the public listing API. */
    size_t n = pc_schema_count();
    CHECK(n > 400); /* ai.onnx alone has well over 150 ops, most with several versions */
    size_t unsorted = 0;
    for (size_t i = 1; i < n; i++) {
        const pc_op_schema *a = pc_schema_at(i - 1), *b = pc_schema_at(i);
        int c = strcmp(a->domain, b->domain);
        if (c == 0) c = strcmp(a->op_type, b->op_type);
        if (c == 0) c = (a->since_version > b->since_version) - (a->since_version < b->since_version);
        if (c >= 0) unsorted++;
    }
    CHECK(unsorted == 0);
    CHECK(pc_schema_at(n) == NULL);
    CHECK(pc_schema_at((size_t)-1) == NULL);

    /* Every entry is found by lookup at its own since_version, and lookup_any finds its op. */
    size_t missed = 0;
    for (size_t i = 0; i < n; i++) {
        const pc_op_schema *s = pc_schema_at(i);
        if (pc_schema_lookup(s->domain, s->op_type, s->since_version) != s) missed++;
        const pc_op_schema *first = pc_schema_lookup_any(s->domain, s->op_type);
        if (!first || first->since_version > s->since_version || strcmp(first->op_type, s->op_type) != 0)
            missed++;
    }
    CHECK(missed == 0);

    /* The hashed lookup against a linear scan of the table, for every op at every opset 0..30 (the rule: the
     * newest entry of that domain and op with since_version <= opset). */
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++) {
        const pc_op_schema *s = pc_schema_at(i);
        for (int64_t opset = 0; opset <= 30; opset++) {
            const pc_op_schema *want = NULL;
            for (size_t j = 0; j < n; j++) {
                const pc_op_schema *t = pc_schema_at(j);
                if (strcmp(t->domain, s->domain) == 0 && strcmp(t->op_type, s->op_type) == 0 &&
                    t->since_version <= opset && (!want || t->since_version > want->since_version))
                    want = t;
            }
            if (pc_schema_lookup(s->domain, s->op_type, opset) != want) wrong++;
        }
    }
    CHECK(wrong == 0);
}

static void test_version_resolution(void)
{
    /* Softmax: 1, 11 (axis semantics kept, opset bump), 13 (axis default -1, no coercion to 2-D). */
    CHECK_VERSIONS("", "Softmax", "1,11,13");
    CHECK_SINCE("", "Softmax", 1, 1);
    CHECK_SINCE("", "Softmax", 10, 1);
    CHECK_SINCE("", "Softmax", 11, 11);
    CHECK_SINCE("", "Softmax", 12, 11);
    CHECK_SINCE("", "Softmax", 13, 13);

    /* Relu: 1 (consumed_inputs), 6, 13 (bfloat16), 14 (int8..int64). */
    CHECK_VERSIONS("", "Relu", "1,6,13,14");
    CHECK_SINCE("", "Relu", 5, 1);
    CHECK_SINCE("", "Relu", 6, 6);
    CHECK_SINCE("", "Relu", 12, 6);
    CHECK_SINCE("", "Relu", 13, 13);
    CHECK_SINCE("", "Relu", 14, 14);
    CHECK_SINCE("", "Relu", 17, 14);
    /* opsets 18..21 are accepted but newer than the onnx 1.12 data: the newest known version applies */
    CHECK_SINCE("", "Relu", 21, 14);
    CHECK_SINCE("", "Relu", 0, -1);
    CHECK_SINCE("", "Relu", -5, -1);
    CHECK(pc_schema_attr(pc_schema_lookup("", "Relu", 1), "consumed_inputs") != NULL);
    CHECK(pc_schema_lookup("", "Relu", 6)->n_attrs == 0);
    CHECK(pc_schema_lookup("", "Relu", 6)->attrs == NULL);

    CHECK_VERSIONS("", "Gemm", "1,6,7,9,11,13");
    CHECK_VERSIONS("", "Conv", "1,11");
    CHECK_VERSIONS("", "Reshape", "1,5,13,14");
    CHECK_VERSIONS("", "Concat", "1,4,11,13");

    /* "ai.onnx" is the default domain under its other name: same entries, same pointers. */
    CHECK(pc_schema_lookup("ai.onnx", "Softmax", 12) == pc_schema_lookup("", "Softmax", 12));
    CHECK(pc_schema_lookup("ai.onnx", "Softmax", 12) != NULL);
    CHECK(pc_schema_lookup_any("ai.onnx", "Conv") == pc_schema_lookup_any("", "Conv"));
    CHECK(pc_schema_lookup(NULL, "Conv", 11) == pc_schema_lookup("", "Conv", 11));
    CHECK(pc_schema_domain("ai.onnx") == pc_schema_domain(""));

    /* Unknown op, op in the wrong domain, op not yet defined at the opset. */
    CHECK(pc_schema_lookup("", "NoSuchOp", 17) == NULL);
    CHECK(pc_schema_lookup_any("", "NoSuchOp") == NULL);
    CHECK(pc_schema_lookup("", "conv", 11) == NULL); /* op types are case-sensitive */
    CHECK(pc_schema_lookup("", NULL, 11) == NULL);
    CHECK(pc_schema_lookup_any("", NULL) == NULL);
    CHECK(pc_schema_lookup("ai.onnx.ml", "Conv", 11) == NULL);
    CHECK(pc_schema_lookup("com.microsoft", "Conv", 1) == NULL);
    CHECK(pc_schema_lookup("ai.onnx.ml", "Softmax", 3) == NULL);
    CHECK(pc_schema_lookup("", "LabelEncoder", 17) == NULL);
    /* LayerNormalization entered the default domain at opset 17. */
    CHECK(pc_schema_lookup("", "LayerNormalization", 16) == NULL);
    const pc_op_schema *ln = pc_schema_lookup_any("", "LayerNormalization");
    CHECK(ln != NULL && ln->since_version == 17);
    CHECK(pc_schema_lookup("", "LayerNormalization", 17) == ln);
    /* lookup_any gives the oldest version */
    const pc_op_schema *any = pc_schema_lookup_any("", "Softmax");
    CHECK(any != NULL && any->since_version == 1);
    /* first and last ops in the table resolve (binary search edges) */
    CHECK(pc_schema_lookup("", "Abs", 1) == pc_schema_at(0));
    const pc_op_schema *last = pc_schema_at(pc_schema_count() - 1);
    CHECK(pc_schema_lookup(last->domain, last->op_type, 1000) == last);
    CHECK(pc_schema_lookup("zzz", "Zzz", 1) == NULL);
    CHECK(pc_schema_lookup("", "", 1) == NULL);
}

static void test_arity_and_attributes(void)
{
    /* Conv: X, W, optional B -> Y. */
    const pc_op_schema *conv = pc_schema_lookup("", "Conv", 11);
    CHECK(conv != NULL);
    if (conv) {
        CHECK(conv->min_inputs == 2 && conv->max_inputs == 3);
        CHECK(conv->min_outputs == 1 && conv->max_outputs == 1);
        CHECK(has_attr(conv, "kernel_shape", PC_ATTR_INTS, false));
        CHECK(has_attr(conv, "auto_pad", PC_ATTR_STRING, false));
        CHECK(has_attr(conv, "group", PC_ATTR_INT, false));
        CHECK(has_attr(conv, "dilations", PC_ATTR_INTS, false));
        CHECK(has_attr(conv, "pads", PC_ATTR_INTS, false));
        CHECK(has_attr(conv, "strides", PC_ATTR_INTS, false));
        CHECK(pc_schema_attr(conv, "kernel") == NULL);
        CHECK(pc_schema_attr(conv, "") == NULL);
        CHECK(pc_schema_attr(conv, NULL) == NULL);
        CHECK(!conv->deprecated);
    }
    CHECK(pc_schema_attr(NULL, "group") == NULL);

    /* Gemm: alpha/beta FLOAT, transA/transB INT; C became optional in 11. */
    const pc_op_schema *gemm = pc_schema_lookup("", "Gemm", 13);
    CHECK(gemm && has_attr(gemm, "alpha", PC_ATTR_FLOAT, false) &&
          has_attr(gemm, "beta", PC_ATTR_FLOAT, false));
    CHECK(gemm && has_attr(gemm, "transA", PC_ATTR_INT, false) &&
          has_attr(gemm, "transB", PC_ATTR_INT, false));
    CHECK(gemm && gemm->min_inputs == 2 && gemm->max_inputs == 3);
    const pc_op_schema *gemm9 = pc_schema_lookup("", "Gemm", 10);
    CHECK(gemm9 && gemm9->since_version == 9 && gemm9->min_inputs == 3 && gemm9->max_inputs == 3);

    /* Reshape: the shape moved from an attribute (1) to a second input (5). */
    const pc_op_schema *r1 = pc_schema_lookup("", "Reshape", 4);
    CHECK(r1 && r1->since_version == 1 && r1->min_inputs == 1 && r1->max_inputs == 1);
    CHECK(r1 && has_attr(r1, "shape", PC_ATTR_INTS, false));
    const pc_op_schema *r5 = pc_schema_lookup("", "Reshape", 5);
    CHECK(r5 && r5->since_version == 5 && r5->min_inputs == 2 && r5->max_inputs == 2);
    CHECK(r5 && r5->min_outputs == 1 && r5->max_outputs == 1 && r5->n_attrs == 0);
    const pc_op_schema *r14 = pc_schema_lookup("", "Reshape", 14);
    CHECK(r14 && has_attr(r14, "allowzero", PC_ATTR_INT, false));

    /* Concat: one or more inputs, axis required since 4. */
    const pc_op_schema *cat = pc_schema_lookup("", "Concat", 13);
    CHECK(cat && cat->min_inputs == 1 && cat->max_inputs == PC_SCHEMA_VARIADIC);
    CHECK(cat && has_attr(cat, "axis", PC_ATTR_INT, true));
    const pc_op_schema *cat1 = pc_schema_lookup("", "Concat", 3);
    CHECK(cat1 && cat1->since_version == 1 && has_attr(cat1, "axis", PC_ATTR_INT, false));
    /* Sum, Max: variadic inputs; Split: variadic outputs, `split` an optional input since 13. */
    const pc_op_schema *sum = pc_schema_lookup("", "Sum", 13);
    CHECK(sum && sum->min_inputs == 1 && sum->max_inputs == PC_SCHEMA_VARIADIC);
    const pc_op_schema *split = pc_schema_lookup("", "Split", 13);
    CHECK(split && split->min_inputs == 1 && split->max_inputs == 2);
    CHECK(split && split->min_outputs == 1 && split->max_outputs == PC_SCHEMA_VARIADIC);
    CHECK(split && has_attr(split, "axis", PC_ATTR_INT, false) && pc_schema_attr(split, "split") == NULL);
    const pc_op_schema *split11 = pc_schema_lookup("", "Split", 12);
    CHECK(split11 && split11->since_version == 11 && has_attr(split11, "split", PC_ATTR_INTS, false));

    /* Constant: no inputs; at 12 exactly one of eight optional value attributes. */
    const pc_op_schema *k = pc_schema_lookup("", "Constant", 12);
    CHECK(k && k->since_version == 12 && k->min_inputs == 0 && k->max_inputs == 0);
    CHECK(k && k->min_outputs == 1 && k->max_outputs == 1 && k->n_attrs == 8);
    CHECK(k && has_attr(k, "value", PC_ATTR_TENSOR, false));
    CHECK(k && has_attr(k, "sparse_value", PC_ATTR_SPARSE_TENSOR, false));
    CHECK(k && has_attr(k, "value_float", PC_ATTR_FLOAT, false));
    CHECK(k && has_attr(k, "value_floats", PC_ATTR_FLOATS, false));
    CHECK(k && has_attr(k, "value_int", PC_ATTR_INT, false));
    CHECK(k && has_attr(k, "value_ints", PC_ATTR_INTS, false));
    CHECK(k && has_attr(k, "value_string", PC_ATTR_STRING, false));
    CHECK(k && has_attr(k, "value_strings", PC_ATTR_STRINGS, false));
    const pc_op_schema *k1 = pc_schema_lookup("", "Constant", 8);
    CHECK(k1 && k1->since_version == 1 && k1->n_attrs == 1 && has_attr(k1, "value", PC_ATTR_TENSOR, true));

    /* Dropout 12: data, optional ratio, optional training_mode -> output, optional mask. */
    const pc_op_schema *drop = pc_schema_lookup("", "Dropout", 12);
    CHECK(drop && drop->min_inputs == 1 && drop->max_inputs == 3);
    CHECK(drop && drop->min_outputs == 1 && drop->max_outputs == 2 &&
          has_attr(drop, "seed", PC_ATTR_INT, false));
    /* Resize: roi and scales required at 11 (sizes optional), all three optional at 13. */
    const pc_op_schema *rs11 = pc_schema_lookup("", "Resize", 11);
    CHECK(rs11 && rs11->min_inputs == 3 && rs11->max_inputs == 4);
    const pc_op_schema *rs13 = pc_schema_lookup("", "Resize", 13);
    CHECK(rs13 && rs13->min_inputs == 1 && rs13->max_inputs == 4);
    CHECK(rs13 && has_attr(rs13, "mode", PC_ATTR_STRING, false));

    /* Graph-valued attributes. */
    const pc_op_schema *iff = pc_schema_lookup("", "If", 16);
    CHECK(iff && has_attr(iff, "then_branch", PC_ATTR_GRAPH, true) &&
          has_attr(iff, "else_branch", PC_ATTR_GRAPH, true));
    CHECK(iff && iff->min_inputs == 1 && iff->max_inputs == 1 && iff->max_outputs == PC_SCHEMA_VARIADIC);
    const pc_op_schema *loop = pc_schema_lookup("", "Loop", 16);
    CHECK(loop && has_attr(loop, "body", PC_ATTR_GRAPH, true) && loop->max_inputs == PC_SCHEMA_VARIADIC);

    /* Deprecations: Upsample at 10 (use Resize), Scatter at 11 (use ScatterElements). */
    const pc_op_schema *up = pc_schema_lookup("", "Upsample", 10);
    CHECK(up && up->since_version == 10 && up->deprecated);
    const pc_op_schema *up9 = pc_schema_lookup("", "Upsample", 9);
    CHECK(up9 && up9->since_version == 9 && !up9->deprecated);
    const pc_op_schema *sc = pc_schema_lookup("", "Scatter", 13);
    CHECK(sc && sc->since_version == 11 && sc->deprecated);
}

static void test_other_domains(void)
{
    /* ai.onnx.ml */
    CHECK_VERSIONS("ai.onnx.ml", "LabelEncoder", "1,2");
    CHECK_VERSIONS("ai.onnx.ml", "TreeEnsembleClassifier", "1,3");
    CHECK_SINCE("ai.onnx.ml", "TreeEnsembleClassifier", 2, 1);
    CHECK_SINCE("ai.onnx.ml", "TreeEnsembleClassifier", 3, 3);
    CHECK_SINCE("ai.onnx.ml", "TreeEnsembleClassifier", 5, 3);
    const pc_op_schema *zip = pc_schema_lookup("ai.onnx.ml", "ZipMap", 1);
    CHECK(zip && has_attr(zip, "classlabels_int64s", PC_ATTR_INTS, false));
    const pc_op_schema *fv = pc_schema_lookup("ai.onnx.ml", "FeatureVectorizer", 1);
    CHECK(fv && fv->min_inputs == 1 && fv->max_inputs == PC_SCHEMA_VARIADIC);

    /* ai.onnx.preview.training */
    const pc_op_schema *adam = pc_schema_lookup("ai.onnx.preview.training", "Adam", 1);
    CHECK(adam && adam->max_inputs == PC_SCHEMA_VARIADIC && has_attr(adam, "alpha", PC_ATTR_FLOAT, false));
    const pc_op_schema *grad = pc_schema_lookup("ai.onnx.preview.training", "Gradient", 1);
    CHECK(grad && has_attr(grad, "xs", PC_ATTR_STRINGS, true) && has_attr(grad, "y", PC_ATTR_STRING, true));

    /* Domain table. */
    const pc_domain_info *d = pc_schema_domain("");
    CHECK(d && strcmp(d->domain, "") == 0 && d->min_opset == 1 && d->max_opset == 21 && d->has_schemas);
    CHECK(pc_schema_domain(NULL) == d);
    d = pc_schema_domain("ai.onnx.ml");
    CHECK(d && d->min_opset == 1 && d->max_opset == 5 && d->has_schemas);
    d = pc_schema_domain("ai.onnx.preview.training");
    CHECK(d && d->min_opset == 1 && d->max_opset == 1 && d->has_schemas);
    d = pc_schema_domain("com.microsoft");
    CHECK(d && d->min_opset == 1 && d->max_opset == 1 && !d->has_schemas);
    d = pc_schema_domain("com.ms.internal.nhwc");
    CHECK(d && d->max_opset == 21 && !d->has_schemas);
    d = pc_schema_domain("com.passcheck");
    CHECK(d && d->max_opset == 1 && !d->has_schemas);
    CHECK(pc_schema_domain("com.example") == NULL);
    CHECK(pc_schema_domain("AI.ONNX") == NULL);
    CHECK(pc_schema_domain("ai.onnx.") == NULL);
}

/* The formal parameter of input (output) i, as schema.h lays them out. */
static const pc_formal_schema *formal(const pc_op_schema *s, bool output, uint16_t i)
{
    return s && s->formals ? &s->formals[(output ? s->n_formal_inputs : 0) + i] : NULL;
}

static uint32_t elems_of(const pc_dtype *d, size_t n)
{
    uint32_t m = 0;
    for (size_t i = 0; i < n; i++)
        m |= 1u << d[i];
    return m;
}

/* Type constraints as Operators.md states them. */
static void test_type_constraint_table(void)
{
    const pc_op_schema *s = pc_schema_lookup("", "Concat", 13);
    CHECK(s && s->n_formal_inputs == 1 && s->n_formal_outputs == 1);
    const pc_formal_schema *in = formal(s, false, 0), *out = formal(s, true, 0);
    CHECK(in && out && in->group == out->group && in->homogeneous && in->kinds == PC_KIND_TENSOR);
    /* T: all tensor types of opset 13 (uint8 .. complex128, bfloat16, string, bool) */
    CHECK(in && in->elems == elems_of((const pc_dtype[]){PC_DTYPE_FLOAT, PC_DTYPE_UINT8, PC_DTYPE_INT8,
                                                         PC_DTYPE_UINT16, PC_DTYPE_INT16, PC_DTYPE_INT32,
                                                         PC_DTYPE_INT64, PC_DTYPE_STRING, PC_DTYPE_BOOL,
                                                         PC_DTYPE_FLOAT16, PC_DTYPE_DOUBLE, PC_DTYPE_UINT32,
                                                         PC_DTYPE_UINT64, PC_DTYPE_COMPLEX64,
                                                         PC_DTYPE_COMPLEX128, PC_DTYPE_BFLOAT16},
                                      16));
    s = pc_schema_lookup("", "Relu", 14); /* T: float, float16, double, bfloat16, and the signed ints */
    in = formal(s, false, 0);
    CHECK(in && !(in->elems >> PC_DTYPE_UINT8 & 1) && (in->elems >> PC_DTYPE_INT8 & 1) &&
          (in->elems >> PC_DTYPE_FLOAT & 1));
    s = pc_schema_lookup("", "Relu", 13); /* T: float types only */
    in = formal(s, false, 0);
    CHECK(in && in->elems == elems_of((const pc_dtype[]){PC_DTYPE_FLOAT, PC_DTYPE_FLOAT16, PC_DTYPE_DOUBLE,
                                                         PC_DTYPE_BFLOAT16},
                                      4));
    /* QuantizeLinear-13: x T1 (float, int32), y_scale float, y_zero_point and y T2 (int8, uint8) */
    s = pc_schema_lookup("", "QuantizeLinear", 13);
    CHECK(s && s->n_formal_inputs == 3 && s->n_formal_outputs == 1);
    CHECK(formal(s, false, 0)->elems == elems_of((const pc_dtype[]){PC_DTYPE_FLOAT, PC_DTYPE_INT32}, 2));
    CHECK(formal(s, false, 1)->elems == 1u << PC_DTYPE_FLOAT);
    CHECK(formal(s, false, 2)->group == formal(s, true, 0)->group &&
          formal(s, false, 2)->group != formal(s, false, 0)->group);
    CHECK(formal(s, false, 2)->elems == elems_of((const pc_dtype[]){PC_DTYPE_INT8, PC_DTYPE_UINT8}, 2));
    /* Slice-13: starts, ends, axes, steps share Tind (int32, int64) */
    s = pc_schema_lookup("", "Slice", 13);
    CHECK(s && s->n_formal_inputs == 5 && formal(s, false, 1)->group == formal(s, false, 4)->group &&
          formal(s, false, 1)->elems == elems_of((const pc_dtype[]){PC_DTYPE_INT32, PC_DTYPE_INT64}, 2));
    /* Loop-16: M int64, cond bool, v_initial V heterogeneous over tensors, sequences and optionals */
    s = pc_schema_lookup("", "Loop", 16);
    CHECK(s && !formal(s, false, 2)->homogeneous &&
          formal(s, false, 2)->kinds == (PC_KIND_TENSOR | PC_KIND_SEQUENCE | PC_KIND_OPTIONAL) &&
          formal(s, false, 0)->elems == 1u << PC_DTYPE_INT64 &&
          formal(s, false, 1)->elems == 1u << PC_DTYPE_BOOL);
    /* SequenceAt-11: input_sequence S is a sequence, position I, tensor T */
    s = pc_schema_lookup("", "SequenceAt", 11);
    CHECK(s && formal(s, false, 0)->kinds == PC_KIND_SEQUENCE && formal(s, true, 0)->kinds == PC_KIND_TENSOR);
    /* Clip-13: input required, min and max optional */
    s = pc_schema_lookup("", "Clip", 13);
    CHECK(s && formal(s, false, 0)->single && !formal(s, false, 1)->single && !formal(s, false, 2)->single);
}

static pc_status verify(pc_model *m, pc_error *err)
{
    pc_status st = pc_model_verify(m, err);
    pc_model_free(m);
    return st;
}

#define EXPECT_TYPE_ERROR(m, needle)                                                                         \
    do {                                                                                                     \
        pc_error err_;                                                                                       \
        pc_error_clear(&err_);                                                                               \
        pc_status st_ = verify(m, &err_);                                                                    \
        CHECK_MSG(st_ == PC_ERR_TYPE && strstr(err_.message, needle), "%s: %s", pc_status_name(st_),         \
                  err_.message);                                                                             \
    } while (0)

#define EXPECT_VALID(m)                                                                                      \
    do {                                                                                                     \
        pc_error err_;                                                                                       \
        pc_error_clear(&err_);                                                                               \
        pc_status st_ = verify(m, &err_);                                                                    \
        CHECK_MSG(st_ == PC_OK, "%s: %s", pc_status_name(st_), err_.message);                                \
    } while (0)

/* The verifier applies the constraints as ONNX Runtime does at load: inputs against the allowed types and
 * each other, outputs against the inputs that bind their type parameter. */
static void test_type_constraints_verified(void)
{
    static const int64_t d2[] = {2};
    /* Concat of float and int64: T bound twice */
    pc_model *m = pt_model(13);
    pt_input(m, "a", PC_DTYPE_FLOAT, 1, d2);
    pt_input(m, "b", PC_DTYPE_INT64, 1, d2);
    pc_error err;
    CHECK(pc_node_set_attr_int(pt_node(m, "Concat", "", "a,b", "y", NULL), "axis", 0, &err) == PC_OK);
    pt_output(m, "y");
    EXPECT_TYPE_ERROR(m, "input 1 'b' is tensor(int64), but its type parameter is bound to tensor(float) by "
                         "input 0 'a'");
    /* the same with matching types is valid */
    m = pt_model(13);
    pt_input(m, "a", PC_DTYPE_INT64, 1, d2);
    pt_input(m, "b", PC_DTYPE_INT64, 1, d2);
    CHECK(pc_node_set_attr_int(pt_node(m, "Concat", "", "a,b", "y", NULL), "axis", 0, &err) == PC_OK);
    pt_output(m, "y");
    EXPECT_VALID(m);
    /* Relu-13 of uint8: not among T's types */
    m = pt_model(13);
    pt_input(m, "a", PC_DTYPE_UINT8, 1, d2);
    pt_node(m, "Relu", "", "a", "y", NULL);
    pt_output(m, "y");
    EXPECT_TYPE_ERROR(m, "(Relu-13) input 0 'a' is tensor(uint8), which the operator does not allow there "
                         "(allowed: tensor(float), tensor(float16), tensor(double), tensor(bfloat16))");
    /* an output its inputs contradict: Gemm of int32 declared float */
    m = pt_model(13);
    pt_input(m, "a", PC_DTYPE_INT32, 2, (const int64_t[]){2, 2});
    pt_input(m, "b", PC_DTYPE_INT32, 2, (const int64_t[]){2, 2});
    pt_node(m, "Gemm", "", "a,b", "y", NULL);
    pt_output(m, "y");
    CHECK(pt_set_tensor_type(pc_graph_find_value(m->graph, "y"), PC_DTYPE_FLOAT, 2, (const int64_t[]){2, 2},
                             &err) == PC_OK);
    EXPECT_TYPE_ERROR(m, "output 0 'y' is tensor(float), but its type parameter is bound to tensor(int32)");
    /* Slice-13 with int64 starts and int32 ends: Tind bound twice */
    m = pt_model(13);
    pt_input(m, "x", PC_DTYPE_FLOAT, 1, (const int64_t[]){4});
    pt_const_i64(m, "st", 1, (const int64_t[]){1});
    pt_const(m, "en", PC_DTYPE_INT32, 1, (const int64_t[]){1}, (const int32_t[]){3});
    pt_node(m, "Slice", "", "x,st,en", "y", NULL);
    pt_output(m, "y");
    EXPECT_TYPE_ERROR(m, "input 2 'en' is tensor(int32), but its type parameter is bound to tensor(int64)");
    /* an output outside its allowed types that no input binds is kept, as ORT keeps it: legacy exporters
     * wrote int64 Constant-1 outputs (float types only in the schema); ONNX's test data has such models */
    int64_t one = 1;
    m = pt_model(6);
    pc_node *c = pt_node(m, "Constant", "", "", "y", NULL);
    pc_tensor *t = pc_tensor_create(m, "value", PC_DTYPE_INT64, 0, NULL, &err);
    CHECK(c && t);
    if (c && t) {
        memcpy(t->data, &one, sizeof one);
        CHECK(pc_node_set_attr_tensor(c, "value", t, &err) == PC_OK);
        CHECK(pt_set_tensor_type(pc_graph_find_value(m->graph, "y"), PC_DTYPE_INT64, 0, NULL, &err) == PC_OK);
    }
    pt_output(m, "y");
    EXPECT_VALID(m);
    /* a tensor where the operator takes a sequence */
    m = pt_model(13);
    pt_input(m, "s", PC_DTYPE_FLOAT, 1, d2);
    pt_const(m, "p", PC_DTYPE_INT64, 0, NULL, &one);
    pt_node(m, "SequenceAt", "", "s,p", "y", NULL);
    pt_output(m, "y");
    EXPECT_TYPE_ERROR(m,
                      "input 0 's' is tensor(float), which the operator does not allow there (allowed: seq)");
    /* an empty name where the schema has a single (required) parameter; an omitted optional one is fine */
    m = pt_model(13);
    pt_input(m, "a", PC_DTYPE_FLOAT, 1, d2);
    pt_node(m, "Add", "", ",a", "y", NULL);
    pt_output(m, "y");
    pc_error_clear(&err);
    CHECK_MSG(verify(m, &err) == PC_ERR_ARITY &&
                  strstr(err.message, "(Add-13) input 0 is required but empty"),
              "%s", err.message);
    m = pt_model(13);
    pt_input(m, "a", PC_DTYPE_FLOAT, 1, d2);
    pt_const_f(m, "hi", 0, NULL, (const float[]){6});
    pt_node(m, "Clip", "", "a,,hi", "y", NULL);
    pt_output(m, "y");
    EXPECT_VALID(m);
    /* a value without a type is not judged: Relu of a Cast to uint8 passes until inference types it */
    m = pt_model(13);
    pt_input(m, "a", PC_DTYPE_FLOAT, 1, d2);
    CHECK(pc_node_set_attr_int(pt_node(m, "Cast", "", "a", "c", NULL), "to", PC_DTYPE_UINT8, &err) == PC_OK);
    pt_node(m, "Relu", "", "c", "y", NULL);
    pt_output(m, "y");
    pc_error_clear(&err);
    CHECK_MSG(pc_model_verify(m, &err) == PC_OK, "%s", err.message);
    CHECK(pc_graph_infer_shapes(m->graph, &err) == PC_OK);
    EXPECT_TYPE_ERROR(m, "input 0 'c' is tensor(uint8)");
}

int main(void)
{
    test_table_invariants();
    test_version_resolution();
    test_arity_and_attributes();
    test_other_domains();
    test_type_constraint_table();
    test_type_constraints_verified();
    return pc_test_finish("test_schema");
}
