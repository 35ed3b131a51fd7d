/* Shape inference against an independent oracle: each case is a one-node model written in a small spec
 * language; shapes and element types are inferred, then the model runs on the reference executor with random
 * inputs and every inferred output type must equal the actual output's dtype and dims (all dims known). Then
 * the merge rules: symbolic dims, contradictions, unknown ops, the table's order.
 *
 * Spec: "OP[@domain][>n_outputs] OPSET | inputs | attributes"
 *   input:  name:T[d0,d1,...]            a graph input fed random data
 *           name:T[dims]=v0,v1,...       a constant with these values;  =r: random constant
 *           -                            an omitted optional input
 *   T: f float, d double, h float16, i int64, j int32, b bool, u uint8, s int8
 *   attribute: key=3 (int), key=[1,2] (ints), key=2.5f (float), key='TEXT' (string) */
#include <dirent.h>
#include <math.h>

#include "tests/pass_test_util.h"
#include "core/shape/shape_internal.h"
#include "tests/test_util.h"

static uint64_t seed = 777;

static pc_dtype dtype_of(char c)
{
    switch (c) {
    case 'f':
        return PC_DTYPE_FLOAT;
    case 'd':
        return PC_DTYPE_DOUBLE;
    case 'h':
        return PC_DTYPE_FLOAT16;
    case 'i':
        return PC_DTYPE_INT64;
    case 'j':
        return PC_DTYPE_INT32;
    case 'b':
        return PC_DTYPE_BOOL;
    case 'u':
        return PC_DTYPE_UINT8;
    case 's':
        return PC_DTYPE_INT8;
    default:
        return PC_DTYPE_UNDEFINED;
    }
}

static void fill_random(pc_dtype dt, void *data, uint64_t n)
{
    for (uint64_t k = 0; k < n; k++) {
        uint64_t r = pt_rand(&seed);
        double f = (double)(r % 1000) / 250.0 - 2.0;
        switch (dt) {
        case PC_DTYPE_FLOAT:
            ((float *)data)[k] = (float)f;
            break;
        case PC_DTYPE_DOUBLE:
            ((double *)data)[k] = f;
            break;
        case PC_DTYPE_FLOAT16:
            ((uint16_t *)data)[k] = (uint16_t)(0x3800 | (r & 0x3ff));
            break; /* [0.5, 1) */
        case PC_DTYPE_INT64:
            ((int64_t *)data)[k] = (int64_t)(r % 3);
            break;
        case PC_DTYPE_INT32:
            ((int32_t *)data)[k] = (int32_t)(r % 3);
            break;
        case PC_DTYPE_BOOL:
            ((uint8_t *)data)[k] = (uint8_t)(r & 1);
            break;
        case PC_DTYPE_UINT8:
            ((uint8_t *)data)[k] = (uint8_t)(r % 256);
            break;
        case PC_DTYPE_INT8:
            ((int8_t *)data)[k] = (int8_t)(r % 256);
            break;
        default:
            break;
        }
    }
}

static void store_value(pc_dtype dt, void *data, uint64_t k, double v)
{
    switch (dt) {
    case PC_DTYPE_FLOAT:
        ((float *)data)[k] = (float)v;
        break;
    case PC_DTYPE_DOUBLE:
        ((double *)data)[k] = v;
        break;
    case PC_DTYPE_INT64:
        ((int64_t *)data)[k] = (int64_t)v;
        break;
    case PC_DTYPE_INT32:
        ((int32_t *)data)[k] = (int32_t)v;
        break;
    case PC_DTYPE_UINT8:
        ((uint8_t *)data)[k] = (uint8_t)v;
        break;
    case PC_DTYPE_INT8:
        ((int8_t *)data)[k] = (int8_t)v;
        break;
    case PC_DTYPE_BOOL:
        ((uint8_t *)data)[k] = v != 0;
        break;
    default:
        break;
    }
}

typedef struct built {
    pc_model *m;
    pc_node *n;
    uint32_t n_feeds;
    pc_data *feeds[8];
    char error[256];
} built;

/* "[2,3,4]" → dims; returns the rank or -1 */
static int32_t parse_dims(const char **p, int64_t *dims)
{
    if (**p != '[') return -1;
    (*p)++;
    int32_t r = 0;
    while (**p && **p != ']') {
        char *end;
        dims[r++] = strtoll(*p, &end, 10);
        *p = end;
        if (**p == ',') (*p)++;
    }
    if (**p == ']') (*p)++;
    return r;
}

static bool build(const char *spec, built *b)
{
    memset(b, 0, sizeof *b);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    char *parts[3] = {buf, NULL, NULL};
    for (int i = 1; i < 3; i++) {
        char *bar = parts[i - 1] ? strchr(parts[i - 1], '|') : NULL;
        if (bar) *bar = 0, parts[i] = bar + 1;
    }
    char op[128] = "", domain[128] = "";
    long long opset = 17;
    unsigned n_out = 1;
    char head[128];
    if (sscanf(parts[0], "%127s %lld", head, &opset) < 1)
        return snprintf(b->error, sizeof b->error, "bad head"), false;
    char *gt = strchr(head, '>');
    if (gt) n_out = (unsigned)atoi(gt + 1), *gt = 0;
    char *at = strchr(head, '@');
    if (at) snprintf(domain, sizeof domain, "%s", at + 1), *at = 0;
    snprintf(op, sizeof op, "%s", head);
    b->m = pt_model(opset);
    pc_error err;
    if (*domain) pc_model_set_opset(b->m, domain, strcmp(domain, PC_NHWC_DOMAIN) == 0 ? opset : 1, &err);
    char inputs[512] = "";
    unsigned n_names = 0;
    char *save = NULL;
    for (char *tok = parts[1] ? strtok_r(parts[1], " ", &save) : NULL; tok;
         tok = strtok_r(NULL, " ", &save)) {
        size_t len = strlen(inputs);
        if (strcmp(tok, "-") == 0) { /* an empty name: pt_node leaves the slot empty */
            snprintf(inputs + len, sizeof inputs - len, "%s", n_names++ ? "," : "");
            continue;
        }
        char *colon = strchr(tok, ':');
        if (!colon) return snprintf(b->error, sizeof b->error, "bad input '%s'", tok), false;
        *colon = 0;
        pc_dtype dt = dtype_of(colon[1]);
        const char *p = colon + 2;
        int64_t dims[PC_MAX_RANK];
        int32_t rank = parse_dims(&p, dims);
        if (rank < 0) return snprintf(b->error, sizeof b->error, "bad dims in '%s'", tok), false;
        if (*p == '=') {
            pc_value *v = pt_const(b->m, tok, dt, rank, dims, NULL);
            pc_tensor *t = v->initializer;
            if (p[1] == 'r')
                fill_random(dt, t->data, t->n_elements);
            else {
                const char *q = p + 1;
                for (uint64_t k = 0; k < t->n_elements && *q; k++) {
                    char *end;
                    double x = strtod(q, &end);
                    if (strncmp(q, "MAX", 3) == 0) x = 9.2e18, end = (char *)q + 3;
                    if (strncmp(q, "-MAX", 4) == 0) x = -9.2e18, end = (char *)q + 4;
                    store_value(dt, t->data, k, x);
                    q = end;
                    if (*q == ',') q++;
                }
            }
        } else {
            pt_input(b->m, tok, dt, rank, dims);
            pc_data *d = pc_data_new_tensor(dt, rank, dims, &err);
            if (!d) return snprintf(b->error, sizeof b->error, "%.200s", err.message), false;
            fill_random(dt, d->data, d->n_elements);
            b->feeds[b->n_feeds++] = d;
        }
        len = strlen(inputs);
        snprintf(inputs + len, sizeof inputs - len, "%s%s", n_names++ ? "," : "", tok);
    }
    char outs[128] = "";
    for (unsigned i = 0; i < n_out; i++) {
        size_t len = strlen(outs);
        snprintf(outs + len, sizeof outs - len, "%sy%u", i ? "," : "", i);
    }
    b->n = pt_node(b->m, op, domain, inputs, outs, NULL);
    for (unsigned i = 0; i < n_out; i++) {
        char name[16];
        snprintf(name, sizeof name, "y%u", i);
        pt_output(b->m, name);
    }
    for (char *tok = parts[2] ? strtok_r(parts[2], " ", &save) : NULL; tok;
         tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) return snprintf(b->error, sizeof b->error, "bad attribute '%s'", tok), false;
        *eq = 0;
        const char *v = eq + 1;
        pc_status st;
        if (*v == '[') {
            int64_t vals[PC_MAX_RANK];
            const char *p = v;
            int32_t n = parse_dims(&p, vals);
            st = pc_node_set_attr_ints(b->n, tok, (size_t)n, vals, &err);
        } else if (*v == '\'') {
            char s[64];
            snprintf(s, sizeof s, "%s", v + 1);
            char *q = strchr(s, '\'');
            if (q) *q = 0;
            st = pc_node_set_attr_string(b->n, tok, s, &err);
        } else if (v[strlen(v) - 1] == 'f') {
            st = pc_node_set_attr_float(b->n, tok, strtof(v, NULL), &err);
        } else {
            st = pc_node_set_attr_int(b->n, tok, strtoll(v, NULL, 10), &err);
        }
        if (st != PC_OK) return snprintf(b->error, sizeof b->error, "%.200s", err.message), false;
    }
    return true;
}

static void built_free(built *b)
{
    for (uint32_t i = 0; i < b->n_feeds; i++)
        pc_data_unref(b->feeds[i]);
    pc_model_free(b->m);
}

static int n_oracle_outputs;

/* Infers, runs on the reference, and requires every output's inferred type to be exactly the actual one. */
/* "float[2,?,3]" / "float[rank unknown]" / "none" */
static const char *type_text(const pc_type *t, char *got, size_t size)
{
    if (t->kind != PC_TYPE_TENSOR) return snprintf(got, size, "none"), got;
    if (t->shape.rank < 0) return snprintf(got, size, "%s[rank unknown]", pc_dtype_name(t->elem)), got;
    size_t len = (size_t)snprintf(got, size, "%s[", pc_dtype_name(t->elem));
    for (int32_t k = 0; k < t->shape.rank && len + 24 < size; k++) {
        if (t->shape.dims[k].kind == PC_DIM_KNOWN)
            len += (size_t)snprintf(got + len, size - len, "%s%lld", k ? "," : "",
                                    (long long)t->shape.dims[k].size);
        else
            len += (size_t)snprintf(got + len, size - len, "%s?", k ? "," : "");
    }
    snprintf(got + len, size - len, "]");
    return got;
}

/* Runs the (already inferred) model on the reference; every graph output's inferred type must be exactly the
 * actual one. */
static void compare_with_reference(const char *what, pc_model *m, uint32_t n_feeds, pc_data *const *feeds)
{
    pc_error err;
    pc_data **outs = NULL;
    pc_data *none[1] = {NULL};
    pc_status rst = pc_ref_run(m, n_feeds, n_feeds ? feeds : none, &outs, &err);
    CHECK_MSG(rst == PC_OK, "%s: reference: %s", what, err.message);
    if (rst != PC_OK) return;
    for (uint32_t i = 0; i < m->graph->n_outputs; i++) {
        const pc_value *v = m->graph->outputs[i];
        const pc_data *d = outs[i];
        if (!d || d->kind != PC_TYPE_TENSOR) continue;
        const pc_type *t = &v->type;
        bool same = t->kind == PC_TYPE_TENSOR && t->elem == d->dtype && t->shape.rank == d->rank;
        for (int32_t k = 0; same && k < d->rank; k++)
            same = t->shape.dims[k].kind == PC_DIM_KNOWN && t->shape.dims[k].size == d->dims[k];
        char got[256], want[128];
        CHECK_MSG(same, "%s: output %u inferred %s, actual %s", what, i, type_text(t, got, sizeof got),
                  pc_data_describe(d, want, sizeof want));
        n_oracle_outputs++;
    }
    pc_ref_free_outputs(m, outs);
}

static void check_spec(const char *spec)
{
    built b;
    if (!build(spec, &b)) {
        CHECK_MSG(false, "%s: spec: %s", spec, b.error);
        if (b.m) built_free(&b);
        return;
    }
    pc_error err;
    pc_status st = pc_graph_infer_shapes(b.m->graph, &err);
    CHECK_MSG(st == PC_OK, "%s: inference: %s", spec, err.message);
    if (st == PC_OK) compare_with_reference(spec, b.m, b.n_feeds, b.feeds);
    built_free(&b);
}

/* Shape arithmetic as exporters write it: the values are propagated, so Reshape/Expand get concrete dims. */
static void test_value_propagation(void)
{
    pc_error err;
    pc_model *m = pt_model(13);
    int64_t xd[3] = {2, 3, 4};
    pt_input(m, "x", PC_DTYPE_FLOAT, 3, xd);
    pt_const_i64(m, "zero", 1, (int64_t[]){0});
    pt_const_i64(m, "minus1", 1, (int64_t[]){-1});
    pt_const_i64(m, "one", 1, (int64_t[]){1});
    pt_const_i64(m, "big", 1, (int64_t[]){INT64_MAX});
    pt_const(m, "i0", PC_DTYPE_INT64, 0, NULL, (int64_t[]){0});
    pt_node(m, "Shape", "", "x", "s", NULL);
    pt_node(m, "Gather", "", "s,i0", "n", NULL);            /* scalar 2 */
    pt_node(m, "Unsqueeze", "", "n,zero", "n1", NULL);      /* [2] */
    pt_node(m, "Concat", "", "n1,minus1", "shape_a", NULL); /* [2, -1] */
    pc_node_set_attr_int(m->graph->last, "axis", 0, &err);
    pt_node(m, "Reshape", "", "x,shape_a", "flat", NULL);   /* [2, 12] */
    pt_node(m, "Slice", "", "s,one,big", "tail", NULL);     /* [3, 4] */
    pt_node(m, "ReduceProd", "", "tail", "prod", NULL);     /* [12] */
    pt_node(m, "Mul", "", "prod,n1", "total", NULL);        /* [24] */
    pt_node(m, "Concat", "", "total,one", "shape_b", NULL); /* [24, 1] */
    pc_node_set_attr_int(m->graph->last, "axis", 0, &err);
    pt_node(m, "Reshape", "", "x,shape_b", "col", NULL);
    pt_node(m, "Cast", "", "shape_b", "shape_c", NULL);
    pc_node_set_attr_int(m->graph->last, "to", PC_DTYPE_INT64, &err);
    pt_node(m, "Squeeze", "", "n1", "n0", NULL); /* scalar 2 */
    pt_node(m, "Unsqueeze", "", "n0,zero", "n2", NULL);
    pt_node(m, "Concat", "", "n2,shape_c", "shape_d", NULL); /* [2, 24, 1] */
    pc_node_set_attr_int(m->graph->last, "axis", 0, &err);
    pt_node(m, "Expand", "", "col,shape_d", "big_e", NULL); /* [2, 24, 1] */
    /* LayerNormalization's function body: ConstantOfShape(Neg(axis)) gives the reduced axes' ones */
    pt_node(m, "Neg", "", "minus1", "n_red", NULL);           /* [1] */
    pt_node(m, "ConstantOfShape", "", "n_red", "ones", NULL); /* a [1] tensor */
    pt_output(m, "flat");
    pt_output(m, "col");
    pt_output(m, "big_e");
    pt_output(m, "ones");
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    pc_data *x = pc_data_new_tensor(PC_DTYPE_FLOAT, 3, xd, &err);
    compare_with_reference("shape arithmetic", m, 1, &x);
    pc_data_unref(x);
    const pc_value *ones = pc_graph_find_value(m->graph, "ones");
    CHECK(ones->type.shape.rank == 1 && ones->type.shape.dims[0].kind == PC_DIM_KNOWN &&
          ones->type.shape.dims[0].size == 1);
    /* one node at a time there is no walk: the Reshape's dims stay unknown */
    pc_value *flat = pc_graph_find_value(m->graph, "flat");
    flat->type = (pc_type){.kind = PC_TYPE_NONE};
    CHECK_OK(pc_node_infer_shapes(flat->producer, &err), &err);
    CHECK(flat->type.shape.rank == 2 && flat->type.shape.dims[0].kind == PC_DIM_UNKNOWN);
    pc_model_free(m);
}

/* ---- the cases, by family ---- */

static const char *const elementwise_specs[] = {
    "Relu 17 | x:f[2,3]",
    "Sigmoid 17 | x:d[0,4]",
    "Tanh 17 | x:f[]",
    "Exp 13 | x:h[3]",
    "Abs 13 | x:i[2,2]",
    "Neg 13 | x:j[4,1]",
    "Not 13 | x:b[3]",
    "LeakyRelu 16 | x:f[1,2,3] | alpha=0.2f",
    "Elu 13 | x:f[2,3]",
    "Selu 13 | x:f[2,3]",
    "Celu 13 | x:f[2,3]",
    "HardSigmoid 13 | x:f[2,3]",
    "HardSwish 14 | x:f[2,3]",
    "Softplus 13 | x:f[2,3]",
    "Softsign 13 | x:f[2,3]",
    "ThresholdedRelu 13 | x:f[2,3]",
    "Gelu 20 | x:f[2,3]",
    "Gelu@com.microsoft 17 | x:f[2,3]",
    "Erf 13 | x:f[2,3]",
    "Sin 13 | x:f[5]",
    "Atan 13 | x:f[5]",
    "Floor 13 | x:f[5]",
    "Round 13 | x:f[5]",
    "Sign 13 | x:f[5]",
    "IsNaN 13 | x:f[2,3]",
    "IsInf 13 | x:d[2,3]",
    "Clip 13 | x:f[2,3] lo:f[]=0 hi:f[]=1",
    "Identity 16 | x:u[2,0]",
    "Dropout>2 13 | x:f[2,3]",
    "Cast 13 | x:f[2,3] | to=7",
    "CastLike 15 | x:f[2,3] y:j[]=0",
    "Softmax 13 | x:f[2,3,4] | axis=1",
    "LogSoftmax 11 | x:f[2,3]",
    "Hardmax 13 | x:f[2,3]",
    "Add 14 | a:f[2,3] b:f[3]",
    "Sub 14 | a:f[2,1,4] b:f[3,1]",
    "Mul 14 | a:i[] b:i[2,0]",
    "Div 14 | a:d[1] b:d[4,1]",
    "Pow 15 | a:f[2,3] b:f[]",
    "Mod 13 | a:j[2,3] b:j[3]=1,2,3",
    "Max 13 | a:f[2,3] b:f[3] c:f[4,1,1]",
    "Min 13 | a:f[2,3]",
    "Sum 13 | a:f[2,3] b:f[1,3]",
    "Mean 13 | a:f[2,3] b:f[2,1]",
    "And 7 | a:b[2,3] b:b[3]",
    "Or 7 | a:b[2,1] b:b[3]",
    "Xor 7 | a:b[2,3] b:b[2,3]",
    "Equal 13 | a:i[2,3] b:i[3]",
    "Less 13 | a:f[2,3] b:f[1]",
    "Greater 13 | a:f[2,3] b:f[2,1]",
    "LessOrEqual 16 | a:f[4] b:f[2,1]",
    "GreaterOrEqual 16 | a:f[4] b:f[]",
    "PRelu 16 | x:f[2,3,4] s:f[3,1]=r",
    "Where 16 | c:b[2,1] x:i[3] y:i[1,1,1]",
    "BitShift 11 | a:u[3] b:u[]=1 | direction='LEFT'",
};

static const char *const tensor_specs[] = {
    "Transpose 13 | x:f[2,3,4]",
    "Transpose 13 | x:f[2,3,4] | perm=[1,2,0]",
    "Transpose 13 | x:f[] ",
    "Reshape 13 | x:f[2,3,4] s:i[2]=-1,4",
    "Reshape 13 | x:f[2,3,4] s:i[3]=0,0,-1",
    "Reshape 14 | x:f[2,0,4] s:i[3]=0,4,0 | allowzero=1",
    "Reshape 13 | x:f[1,1,1] s:i[0]=",
    "Reshape 13 | x:f[1] s:i[0]=",
    "Flatten 13 | x:f[2,3,4] | axis=2",
    "Flatten 13 | x:f[2,3,4] | axis=0",
    "Flatten 13 | x:f[2,3,4] | axis=-1",
    "Squeeze 11 | x:f[1,3,1,2] | axes=[0,-2]",
    "Squeeze 13 | x:f[1,3,1,2] a:i[1]=2",
    "Squeeze 13 | x:f[1,3,1,2]",
    "Unsqueeze 11 | x:f[3,2] | axes=[0,3]",
    "Unsqueeze 13 | x:f[3,2] a:i[2]=-1,1",
    "Unsqueeze 13 | x:f[] a:i[1]=0",
    "Concat 13 | a:f[2,3] b:f[2,5] c:f[2,0] | axis=1",
    "Concat 13 | a:i[1,3] b:i[4,3] | axis=-2",
    "Split>3 13 | x:f[6,2]",
    "Split>2 13 | x:f[2,7] s:i[2]=3,4 | axis=1",
    "Split>2 11 | x:f[2,7] | axis=-1 split=[5,2]",
    "Split>3 18 | x:f[7,2] | num_outputs=3",
    "Slice 13 | x:f[4,5,6] s:i[2]=1,-1 e:i[2]=3,-100 a:i[2]=0,2 p:i[2]=1,-2",
    "Slice 13 | x:f[4,5,6] s:i[1]=-MAX e:i[1]=MAX a:i[1]=1 p:i[1]=2",
    "Slice 13 | x:f[4,5,6] s:i[1]=MAX e:i[1]=-MAX a:i[1]=-1 p:i[1]=-3",
    "Slice 13 | x:f[4,5,6] s:i[1]=3 e:i[1]=1",
    "Slice 9 | x:f[4,5] | starts=[1,0] ends=[1000,-2]",
    "Pad 13 | x:f[2,3] p:i[4]=1,0,2,3",
    "Pad 13 | x:f[2,3] p:i[4]=-1,1,0,-2 | mode='constant'",
    "Pad 18 | x:f[2,3,4] p:i[2]=1,2 v:f[]=0 a:i[1]=-1",
    "Pad 7 | x:f[2,3] | pads=[0,1,1,0]",
    "Tile 13 | x:f[2,3] r:i[2]=3,0",
    "Expand 13 | x:f[3,1] s:i[3]=2,1,4",
    "Expand 13 | x:f[2,3] s:i[1]=1",
    "Gather 13 | x:f[3,4,5] i:i[2,2]=0,1,2,-1 | axis=1",
    "Gather 13 | x:f[3,4] i:i[]=2",
    "GatherElements 13 | x:f[3,4] i:i[3,2]=0,1,2,3,0,1 | axis=1",
    "Shape 13 | x:f[2,3,4]",
    "Shape 15 | x:f[2,3,4] | start=1",
    "Shape 15 | x:f[2,3,4] | start=-1 end=-5",
    "Size 13 | x:f[2,3,4]",
    "ConstantOfShape 13 | s:i[3]=2,0,3",
    "ConstantOfShape 13 | s:i[0]=",
    "Range 13 | a:i[]=2 b:i[]=11 c:i[]=3",
    "Range 13 | a:j[]=10 b:j[]=2 c:j[]=-3",
    "Range 13 | a:f[]=0 b:f[]=1 c:f[]=0.3",
    "Range 13 | a:d[]=5 b:d[]=1 c:d[]=1",
    "DepthToSpace 13 | x:f[1,8,2,3] | blocksize=2",
    "DepthToSpace 13 | x:f[1,8,2,3] | blocksize=2 mode='CRD'",
    "SpaceToDepth 13 | x:f[1,2,4,6] | blocksize=2",
    "Resize 13 | x:f[1,2,4,5] - s:f[4]=1,1,2,0.5",
    "Resize 13 | x:f[1,2,4,5] - - z:i[4]=1,2,3,9",
    "Resize 11 | x:f[1,2,4,5] r:f[0]= s:f[4]=1,1,1.5,1.7",
    "Resize 10 | x:f[1,2,4,5] s:f[4]=1,1,0.6,2.5",
    "Resize 18 | x:f[1,2,4,5] - s:f[2]=3,0.5 | axes=[2,3]",
};

static const char *const reduce_specs[] = {
    "ReduceSum 11 | x:f[2,3,4] | axes=[1]",
    "ReduceSum 11 | x:f[2,3,4] | axes=[0,-1] keepdims=0",
    "ReduceSum 13 | x:f[2,3,4] a:i[1]=-2",
    "ReduceSum 13 | x:f[2,3,4] a:i[2]=0,2 | keepdims=0",
    "ReduceSum 13 | x:f[2,3,4]",
    "ReduceSum 13 | x:f[2,3,4] | noop_with_empty_axes=1",
    "ReduceMean 13 | x:f[2,3,4] | axes=[2]",
    "ReduceMean 18 | x:f[2,3,4] a:i[1]=1 | keepdims=0",
    "ReduceMax 13 | x:f[2,3,4] | keepdims=0",
    "ReduceMax 18 | x:f[2,3,4] a:i[1]=0",
    "ReduceMin 18 | x:i[2,3,4]",
    "ReduceProd 13 | x:f[2,3,4] | axes=[1,2]",
    "ReduceL1 13 | x:f[2,3,4] | axes=[0]",
    "ReduceL2 18 | x:f[2,3,4] a:i[1]=2 | keepdims=0",
    "ReduceLogSum 13 | x:f[2,3,4] | axes=[1]",
    "ReduceLogSumExp 18 | x:f[2,3,4] a:i[2]=0,1",
    "ReduceSumSquare 13 | x:f[2,3,4] | axes=[-1] keepdims=0",
    "ReduceSumSquare 18 | x:f[2,3,4] | noop_with_empty_axes=1",
    "ArgMax 13 | x:f[2,3,4] | axis=1",
    "ArgMin 13 | x:f[2,3,4] | axis=-1 keepdims=0",
};

static const char *const nn_specs[] = {
    "MatMul 13 | a:f[2,3] b:f[3,4]",
    "MatMul 13 | a:f[3] b:f[3,4]",
    "MatMul 13 | a:f[2,3] b:f[3]",
    "MatMul 13 | a:f[3] b:f[3]",
    "MatMul 13 | a:f[5,1,2,3] b:f[4,3,2]",
    "MatMul 13 | a:f[2,2,3] b:f[3]",
    "Gemm 13 | a:f[3,2] b:f[4,3] | transA=1 transB=1",
    "Gemm 13 | a:f[2,3] b:f[3,4] c:f[4]",
    "FusedGemm@com.microsoft 13 | a:f[2,3] b:f[4,3] | transB=1 activation='Relu'",
    "BatchNormalization 15 | x:f[2,3,4,4] s:f[3]=r b:f[3]=r m:f[3]=r v:f[3]=1,1,1",
    "InstanceNormalization 13 | x:f[2,3,4] s:f[3]=r b:f[3]=r",
    "LRN 13 | x:f[1,5,3,3] | size=3",
    "LayerNormalization>3 17 | x:f[2,3,4] s:f[4]=r",
    "LayerNormalization>3 17 | x:f[2,3,4] s:f[3,4]=r | axis=1",
    "GlobalAveragePool 13 | x:f[2,3,5,4]",
    "GlobalMaxPool 13 | x:f[2,3,5]",
    "GlobalLpPool 13 | x:f[1,2,3,3,3]",
    "GridSample 16 | x:f[1,2,4,5] g:f[1,3,6,2]",
    "GridSample 20 | x:f[1,3,4,5] g:f[1,2,7,2]",
    "MaxUnpool 11 | x:f[1,1,2,2] i:i[1,1,2,2]=0,3,10,15 | kernel_shape=[2,2] strides=[2,2]",
    "MaxUnpool 11 | x:f[1,1,2,2] i:i[1,1,2,2]=0,3,10,15 s:i[4]=1,1,5,5 | kernel_shape=[2,2] strides=[2,2]",
    "QuantizeLinear 13 | x:f[2,3] s:f[]=0.1",
    "QuantizeLinear 13 | x:f[2,3] s:f[]=0.1 z:s[]=1",
    "QuantizeLinear 21 | x:f[2,3] s:f[]=0.1 | output_dtype=3",
    "DequantizeLinear 13 | x:u[2,3] s:f[]=0.1 z:u[]=3",
    "DequantizeLinear 19 | x:u[2,3] s:f[]=0.1",
    "DequantizeLinear 13 | x:u[2,3] s:f[3]=0.1,0.2,0.3 z:u[3]=1,2,3",
    "QuantizeLinear 13 | x:f[2,3] s:f[2]=0.1,0.2 z:s[2]=1,-2 | axis=0",
    "QuantizeLinear 13 | x:f[2,3] s:f[1]=0.1 z:u[1]=4 | axis=0",
    "QuantizeLinear 13 | x:f[2,3] s:f[1]=0.1 z:u[]=4",
    "DequantizeLinear 13 | x:u[2,3] s:f[]=0.1 z:u[1]=4",
    "QLinearMatMul 13 | a:u[2,3] as:f[]=0.1 az:u[]=1 b:u[3,4]=r bs:f[]=0.2 bz:u[]=2 ys:f[]=0.3 yz:u[]=4",
    ("QLinearConv 13 | x:u[1,2,5,5] xs:f[]=0.1 xz:u[]=1 w:u[3,2,3,3]=r ws:f[]=0.01 wz:u[]=2 ys:f[]=0.5 "
     "yz:u[]=4 | pads=[1,1,1,1]"),
    ("QLinearConvRelu@com.microsoft 13 | x:u[1,2,5,5] xs:f[]=0.1 xz:u[]=1 w:u[3,2,3,3]=r ws:f[]=0.01 "
     "wz:u[]=2 "
     "ys:f[]=0.5 yz:u[]=4 | strides=[2,2]"),
    "FusedConv@com.microsoft 13 | x:f[1,2,5,5] w:f[4,2,3,3]=r | activation='Relu'",
    "DynamicQuantizeLinear>3 11 | x:f[2,3]",
    "MatMulInteger 10 | a:u[2,3] b:u[3,4]=r",
    "ConvInteger 10 | x:u[1,2,5,5] w:u[3,2,3,3]=r | pads=[1,0,1,0]",
    "Trilu 14 | x:f[3,4]",
    "CumSum 14 | x:f[2,3] a:i[]=1",
    "TopK>2 11 | x:f[3,5] k:i[1]=2 | axis=1",
    "TopK>2 1 | x:f[3,5] | k=3",
    "EyeLike 9 | x:f[3,4] | dtype=7",
    "OneHot 11 | i:i[2,3]=0,1,2,0,1,2 d:i[]=4 v:f[2]=0,1 | axis=1",
    "OneHot 11 | i:i[2]=0,1 d:f[]=3 v:i[2]=0,1",
};

/* Sliding windows: one template per op, many geometries. */
static const char *const window_attrs[] = {
    "",
    "strides=[2,2]",
    "pads=[1,1,1,1]",
    "pads=[0,1,2,0] strides=[2,3]",
    "dilations=[2,1]",
    "dilations=[2,2] pads=[2,1,2,1] strides=[1,2]",
    "auto_pad='SAME_UPPER' strides=[2,2]",
    "auto_pad='SAME_LOWER' strides=[3,2]",
    "auto_pad='VALID' strides=[2,2]",
    "auto_pad='SAME_UPPER'",
};

static const char *const pool_attrs[] = {
    "",
    "ceil_mode=1 strides=[2,2]",
    "ceil_mode=1 strides=[3,3] pads=[1,1,1,1]",
    "ceil_mode=1 strides=[2,2] pads=[1,0,1,0]",
    "strides=[2,1] pads=[1,1,0,0]",
    "auto_pad='SAME_UPPER' strides=[2,2]",
    "auto_pad='SAME_LOWER' strides=[2,3]",
    "auto_pad='VALID' strides=[2,2]",
};

static const char *const convt_attrs[] = {
    "",
    "strides=[2,2]",
    "strides=[2,2] output_padding=[1,0]",
    "pads=[1,1,1,1] strides=[2,2]",
    "dilations=[2,1] strides=[1,2]",
    "auto_pad='SAME_UPPER' strides=[2,2]",
    "auto_pad='SAME_LOWER' strides=[3,2]",
    "output_shape=[11,10] strides=[2,2]",
    "group=2",
};

static void check_windows(void)
{
    char spec[512];
    static const char *const conv_inputs[] = {"x:f[1,4,7,8] w:f[3,4,3,2]=r",
                                              "x:f[2,4,9,6] w:f[6,2,2,3]=r b:f[6]=r"};
    for (size_t a = 0; a < sizeof window_attrs / sizeof window_attrs[0]; a++)
        for (size_t i = 0; i < 2; i++) {
            const char *group = i ? " group=2" : "";
            snprintf(spec, sizeof spec, "Conv 13 | %s | %s%s", conv_inputs[i], window_attrs[a], group);
            check_spec(spec);
            /* channels-last: (N, H, W, C); weights stay (M, C/group, kH, kW) */
            snprintf(spec, sizeof spec, "Conv@%s 13 | x:f[%s] %s | %s%s", PC_NHWC_DOMAIN,
                     i ? "2,9,6,4" : "1,7,8,4", strchr(conv_inputs[i], ' ') + 1, window_attrs[a], group);
            check_spec(spec);
            snprintf(spec, sizeof spec, "FusedConv@%s 13 | x:f[%s] %s | %s%s activation='Relu'",
                     PC_NHWC_DOMAIN, i ? "2,9,6,4" : "1,7,8,4", strchr(conv_inputs[i], ' ') + 1,
                     window_attrs[a], group);
            check_spec(spec);
        }
    static const char *const pools[] = {"MaxPool", "AveragePool", "LpPool"};
    for (size_t p = 0; p < 3; p++)
        for (size_t a = 0; a < sizeof pool_attrs / sizeof pool_attrs[0]; a++) {
            if (p == 2 && strstr(pool_attrs[a], "ceil_mode") && false) continue;
            snprintf(spec, sizeof spec, "%s 18 | x:f[1,2,7,8] | kernel_shape=[3,2] %s", pools[p],
                     pool_attrs[a]);
            check_spec(spec);
            snprintf(spec, sizeof spec, "%s@%s 18 | x:f[1,7,8,2] | kernel_shape=[3,2] %s", pools[p],
                     PC_NHWC_DOMAIN, pool_attrs[a]);
            check_spec(spec);
        }
    snprintf(spec, sizeof spec, "MaxPool>2 13 | x:f[1,2,7,8] | kernel_shape=[2,2] strides=[2,2] ceil_mode=1");
    check_spec(spec);
    snprintf(spec, sizeof spec, "MaxPool 12 | x:f[1,2,9] | kernel_shape=[3] dilations=[2] strides=[2]");
    check_spec(spec);
    for (size_t a = 0; a < sizeof convt_attrs / sizeof convt_attrs[0]; a++) {
        snprintf(spec, sizeof spec, "ConvTranspose 13 | x:f[1,4,5,4] w:f[4,3,3,2]=r | %s", convt_attrs[a]);
        check_spec(spec);
        snprintf(spec, sizeof spec, "ConvTranspose@%s 13 | x:f[1,5,4,4] w:f[4,3,3,2]=r | %s", PC_NHWC_DOMAIN,
                 convt_attrs[a]);
        check_spec(spec);
    }
    /* the other NHWC ops */
    static const char *const nhwc[] = {
        "GlobalAveragePool@" PC_NHWC_DOMAIN " 13 | x:f[2,5,4,3]",
        "GlobalMaxPool@" PC_NHWC_DOMAIN " 13 | x:f[2,5,3]",
        "BatchNormalization@" PC_NHWC_DOMAIN " 15 | x:f[2,4,4,3] s:f[3]=r b:f[3]=r m:f[3]=r v:f[3]=1,1,1",
        "InstanceNormalization@" PC_NHWC_DOMAIN " 13 | x:f[2,4,3] s:f[3]=r b:f[3]=r",
        "LRN@" PC_NHWC_DOMAIN " 13 | x:f[1,3,3,5] | size=3",
        "DepthToSpace@" PC_NHWC_DOMAIN " 13 | x:f[1,2,3,8] | blocksize=2",
        "SpaceToDepth@" PC_NHWC_DOMAIN " 13 | x:f[1,4,6,2] | blocksize=2",
        "Resize@" PC_NHWC_DOMAIN " 13 | x:f[1,4,5,2] - s:f[4]=1,1,2,0.5",
        "Resize@" PC_NHWC_DOMAIN " 13 | x:f[1,4,5,2] - - z:i[4]=1,2,3,9",
        ("QLinearConv@" PC_NHWC_DOMAIN " 13 | x:u[1,5,5,2] xs:f[]=0.1 xz:u[]=1 w:u[3,2,3,3]=r ws:f[]=0.01 "
         "wz:u[]=2 ys:f[]=0.5 yz:u[]=4 | pads=[1,1,1,1]"),
        "GlobalLpPool@" PC_NHWC_DOMAIN " 13 | x:f[2,5,4,3]",
        "GridSample@" PC_NHWC_DOMAIN " 16 | x:f[1,4,5,2] g:f[1,3,6,2]",
        "MaxUnpool@" PC_NHWC_DOMAIN
        " 11 | x:f[1,2,2,1] i:i[1,1,2,2]=0,3,10,15 | kernel_shape=[2,2] strides=[2,2]",
    };
    for (size_t k = 0; k < sizeof nhwc / sizeof nhwc[0]; k++)
        check_spec(nhwc[k]);
}

#define RUN_SPECS(list)                                                                                      \
    for (size_t k = 0; k < sizeof list / sizeof list[0]; k++)                                                \
    check_spec(list[k])

/* ---- merge rules, symbols, contradictions ---- */

static pc_value *sym_input(pc_model *m, const char *name, int32_t rank, const char *const *syms,
                           const int64_t *dims)
{
    pc_error err;
    pc_value *v = pc_graph_add_value(m->graph, name, NULL, &err);
    pc_dim d[8];
    for (int32_t i = 0; i < rank; i++) {
        if (syms && syms[i])
            d[i] = (pc_dim){.kind = PC_DIM_SYMBOLIC, .symbol = syms[i]};
        else if (dims[i] < 0)
            d[i] = (pc_dim){.kind = PC_DIM_UNKNOWN};
        else
            d[i] = (pc_dim){.kind = PC_DIM_KNOWN, .size = dims[i]};
    }
    pc_type t = {.kind = PC_TYPE_TENSOR, .elem = PC_DTYPE_FLOAT, .shape = {.rank = rank, .dims = d}};
    pc_value_set_type(v, &t, &err);
    pc_graph_add_input(m->graph, v, &err);
    return v;
}

static bool dim_is_sym(const pc_value *v, int32_t k, const char *sym)
{
    return v->type.shape.rank > k && v->type.shape.dims[k].kind == PC_DIM_SYMBOLIC &&
           strcmp(v->type.shape.dims[k].symbol, sym) == 0;
}

static bool dim_is(const pc_value *v, int32_t k, int64_t size)
{
    return v->type.shape.rank > k && v->type.shape.dims[k].kind == PC_DIM_KNOWN &&
           v->type.shape.dims[k].size == size;
}

static void test_symbols(void)
{
    pc_error err;
    pc_model *m = pt_model(17);
    sym_input(m, "x", 3, (const char *[]){"N", NULL, "T"}, (int64_t[]){0, 3, 0});
    sym_input(m, "b", 1, NULL, (int64_t[]){-1});
    pt_node(m, "Relu", "", "x", "r", NULL);
    pc_node *tr = pt_node(m, "Transpose", "", "r", "t", NULL);
    pc_node_set_attr_ints(tr, "perm", 3, (int64_t[]){2, 0, 1}, &err);
    pt_node(m, "Add", "", "t,b", "s", NULL); /* [T, N, 3] + [?] → [T, N, 3] */
    pt_node(m, "Shape", "", "s", "sh", NULL);
    pt_node(m, "Unknown", "", "s", "u", NULL);
    pt_output(m, "u");
    pt_output(m, "sh");
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    pc_value *r = pc_graph_find_value(m->graph, "r"), *t = pc_graph_find_value(m->graph, "t");
    pc_value *s = pc_graph_find_value(m->graph, "s"), *sh = pc_graph_find_value(m->graph, "sh");
    pc_value *u = pc_graph_find_value(m->graph, "u");
    CHECK(r->type.elem == PC_DTYPE_FLOAT && dim_is_sym(r, 0, "N") && dim_is(r, 1, 3) &&
          dim_is_sym(r, 2, "T"));
    CHECK(dim_is_sym(t, 0, "T") && dim_is_sym(t, 1, "N") && dim_is(t, 2, 3));
    CHECK(s->type.shape.rank == 3 && dim_is_sym(s, 0, "T") && dim_is_sym(s, 1, "N") && dim_is(s, 2, 3));
    CHECK(sh->type.elem == PC_DTYPE_INT64 && dim_is(sh, 0, 3));
    CHECK(u->type.kind == PC_TYPE_NONE); /* unknown op: untouched */
    pc_model_free(m);

    /* broadcasting symbols: equal symbols stay, 1 gives way, different symbols become unknown */
    m = pt_model(17);
    sym_input(m, "a", 3, (const char *[]){"B", "S", NULL}, (int64_t[]){0, 0, 1});
    sym_input(m, "c", 3, (const char *[]){"B", "Q", "D"}, (int64_t[]){0, 0, 0});
    pt_node(m, "Mul", "", "a,c", "y", NULL);
    pt_output(m, "y");
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    pc_value *y = pc_graph_find_value(m->graph, "y");
    CHECK(dim_is_sym(y, 0, "B") && y->type.shape.dims[1].kind == PC_DIM_UNKNOWN && dim_is_sym(y, 2, "D"));
    pc_model_free(m);
}

static void test_merge(void)
{
    pc_error err;
    /* a declared output with unknown and symbolic dims is refined by the inferred known ones */
    pc_model *m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    pt_node(m, "Relu", "", "x", "y", NULL);
    pt_output(m, "y");
    pc_value *y = pc_graph_find_value(m->graph, "y");
    pc_dim d[2] = {{.kind = PC_DIM_SYMBOLIC, .symbol = "N"}, {.kind = PC_DIM_UNKNOWN}};
    pc_type t = {.kind = PC_TYPE_TENSOR, .elem = PC_DTYPE_FLOAT, .shape = {.rank = 2, .dims = d}};
    pc_value_set_type(y, &t, &err);
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    CHECK(dim_is(y, 0, 2) && dim_is(y, 1, 3));
    /* inference is idempotent */
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    CHECK(dim_is(y, 0, 2) && dim_is(y, 1, 3));
    pc_model_free(m);

    /* a declared known dim the op contradicts */
    m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    pt_node(m, "Relu", "", "x", "y", NULL);
    pt_output(m, "y");
    pt_set_tensor_type(pc_graph_find_value(m->graph, "y"), PC_DTYPE_FLOAT, 2, (int64_t[]){2, 4}, &err);
    CHECK_STATUS(pc_graph_infer_shapes(m->graph, &err), PC_ERR_SHAPE, &err);
    CHECK_MSG(strstr(err.message, "'y'") && strstr(err.message, "dim 1") && strstr(err.message, "4") &&
                  strstr(err.message, "Relu"),
              "message: %s", err.message);
    pc_model_free(m);

    /* declared rank contradicts */
    m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    pt_node(m, "Relu", "", "x", "y", NULL);
    pt_output(m, "y");
    pt_set_tensor_type(pc_graph_find_value(m->graph, "y"), PC_DTYPE_FLOAT, 1, (int64_t[]){6}, &err);
    CHECK_STATUS(pc_graph_infer_shapes(m->graph, &err), PC_ERR_SHAPE, &err);
    CHECK(strstr(err.message, "rank") != NULL);
    pc_model_free(m);

    /* declared element type contradicts */
    m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    pt_node(m, "Shape", "", "x", "y", NULL);
    pt_output(m, "y");
    pt_set_tensor_type(pc_graph_find_value(m->graph, "y"), PC_DTYPE_INT32, 1, (int64_t[]){2}, &err);
    CHECK_STATUS(pc_graph_infer_shapes(m->graph, &err), PC_ERR_TYPE, &err);
    CHECK(strstr(err.message, "int32") && strstr(err.message, "int64"));
    pc_model_free(m);

    /* shape errors in the inputs, each naming the node */
    static const char *const bad[] = {
        "Add 17 | a:f[2,3] b:f[4]",
        "MatMul 17 | a:f[2,3] b:f[4,5]",
        "Conv 17 | x:f[1,3,5,5] w:f[2,4,3,3]=r",
        "Reshape 17 | x:f[2,3] s:i[2]=4,-1",
        "Reshape 17 | x:f[2,3] s:i[2]=-1,-1",
        "Concat 17 | a:f[2,3] b:f[3,3] | axis=1",
        "Squeeze 17 | x:f[2,3] a:i[1]=0",
        "Split>2 17 | x:f[5] s:i[2]=2,2",
        "MaxPool 17 | x:f[1,1,2,2] | kernel_shape=[3,3]",
        "Gemm 17 | a:f[2,3] b:f[2,3]",
        /* quantization parameters: scalar or 1-D, the zero point shaped like the scale, per axis as long as
         * the axis; QLinear ops' per-tensor ones a single value (ONNX Runtime refuses these when it runs
         * them) */
        "QuantizeLinear 13 | x:f[2,3] s:f[]=0.1 z:u[0]",
        "QuantizeLinear 13 | x:f[2,3] s:f[1,1]=0.1",
        "DequantizeLinear 13 | x:u[2,3] s:f[2]=0.1,0.2 z:u[2]=1,2",
        "DequantizeLinear 13 | x:u[2,3] s:f[3]=0.1,0.2,0.3 z:u[]=1",
        ("QLinearConv 13 | x:u[1,2,5,5] xs:f[]=0.1 xz:u[]=1 w:u[3,2,3,3]=r ws:f[]=0.01 wz:u[]=2 ys:f[]=0.5 "
         "yz:u[0]"),
        ("QLinearConv 13 | x:u[1,2,5,5] xs:f[2]=0.1,0.2 xz:u[]=1 w:u[3,2,3,3]=r ws:f[]=0.01 wz:u[]=2 "
         "ys:f[]=0.5 yz:u[]=4"),
        ("QLinearConv 13 | x:u[1,2,5,5] xs:f[]=0.1 xz:u[]=1 w:u[3,2,3,3]=r ws:f[2]=0.01,0.02 wz:u[]=2 "
         "ys:f[]=0.5 yz:u[]=4"),
        "QLinearMatMul 13 | a:u[2,3] as:f[]=0.1 az:u[]=1 b:u[3,4]=r bs:f[]=0.2 bz:u[]=2 ys:f[]=0.3 "
        "yz:u[2]=4,5",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        built b;
        if (!build(bad[k], &b)) {
            CHECK_MSG(false, "%s: %s", bad[k], b.error);
            continue;
        }
        pc_status st = pc_graph_infer_shapes(b.m->graph, &err);
        CHECK_MSG(st == PC_ERR_SHAPE && strstr(err.message, "node 'y0'"), "%s: %s (%s)", bad[k],
                  pc_status_name(st), err.message);
        built_free(&b);
    }
    static const char *const bad_attr[] = {
        "Transpose 17 | x:f[2,3] | perm=[0,0]",
        "Gather 17 | x:f[2,3] i:i[1]=0 | axis=2",
        "Unsqueeze 11 | x:f[2,3] | axes=[0,0]",
        "Conv 17 | x:f[1,3,5,5] w:f[2,3,3,3]=r | auto_pad='SOMETIMES'",
        "Flatten 17 | x:f[2,3] | axis=3",
        /* kernel_shape must repeat W's spatial dims (the reference and ORT reject this Conv) and have one
         * value per spatial axis */
        "Conv 17 | x:f[1,3,5,5] w:f[2,3,3,3]=r | kernel_shape=[2,3]",
        "Conv 17 | x:f[1,3,5,5] w:f[2,3,3,3]=r | kernel_shape=[3]",
        "ConvTranspose 17 | x:f[1,2,5,5] w:f[2,3,3,3]=r | kernel_shape=[3,1]",
    };
    for (size_t k = 0; k < sizeof bad_attr / sizeof bad_attr[0]; k++) {
        built b;
        if (!build(bad_attr[k], &b)) continue;
        pc_status st = pc_graph_infer_shapes(b.m->graph, &err);
        CHECK_MSG(st == PC_ERR_ATTRIBUTE && strstr(err.message, "node 'y0'"), "%s: %s (%s)", bad_attr[k],
                  pc_status_name(st), err.message);
        built_free(&b);
    }

    /* a value-dependent shape whose input is not constant: rank known, dims unknown */
    m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    pt_input(m, "s", PC_DTYPE_INT64, 1, (int64_t[]){3});
    pt_node(m, "Reshape", "", "x,s", "y", NULL);
    pt_output(m, "y");
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    y = pc_graph_find_value(m->graph, "y");
    CHECK(y->type.elem == PC_DTYPE_FLOAT && y->type.shape.rank == 3 &&
          y->type.shape.dims[0].kind == PC_DIM_UNKNOWN);
    pc_model_free(m);

    /* a Constant node's value feeds a value-dependent shape */
    m = pt_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 6});
    pc_node *cn = pt_node(m, "Constant", "", "", "s", NULL);
    pc_node_set_attr_ints(cn, "value_ints", 3, (int64_t[]){3, 2, -1}, &err);
    pt_node(m, "Reshape", "", "x,s", "y", NULL);
    pt_output(m, "y");
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    y = pc_graph_find_value(m->graph, "y");
    CHECK(dim_is(y, 0, 3) && dim_is(y, 1, 2) && dim_is(y, 2, 2));
    CHECK(dim_is(pc_graph_find_value(m->graph, "s"), 0, 3));
    pc_model_free(m);
}

/* Absurd sizes from a file: inference answers or refuses, never overflows (run under UBSan). */
static void test_huge_dims(void)
{
    static const char *const ops[][2] = {
        {"Conv", "strides=[3,3] dilations=[1099511627776,1099511627776]"},
        {"Conv", "pads=[1099511627776,1099511627776,1099511627776,1099511627776]"},
        {"ConvTranspose", "strides=[1099511627776,1099511627776] output_padding=[5,5]"},
        {"MaxPool", "kernel_shape=[2,2] ceil_mode=1 strides=[1099511627776,3] pads=[1099511627776,1,1,1]"},
        {"Pad", ""},
        {"DepthToSpace", "blocksize=1048576"},
        {"SpaceToDepth", "blocksize=1048576"},
        {"Concat", "axis=2"},
        {"Tile", ""},
        {"Slice", ""},
        {"MaxUnpool", "kernel_shape=[5,5] strides=[1099511627776,7]"},
        {"Flatten", "axis=2"},
        {"Reshape", ""},
        {"Resize", ""},
    };
    const int64_t big = INT64_MAX / 3;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        pc_error err;
        pc_model *m = pt_model(18);
        pt_input(m, "x", PC_DTYPE_FLOAT, 4, (int64_t[]){big, 3, big, big});
        pt_input(m, "w", PC_DTYPE_FLOAT, 4, (int64_t[]){big, big, 3, 3});
        pt_const_i64(m, "ints", 8, (int64_t[]){big, big, 1, INT64_MIN, big, big, big, big});
        pt_const_i64(m, "four", 4, (int64_t[]){big, big, big, big});
        pt_const_i64(m, "step", 4, (int64_t[]){INT64_MIN, INT64_MAX, -1, 2});
        pt_const(m, "scales", PC_DTYPE_FLOAT, 1, (int64_t[]){4}, (float[]){1e30f, 3.0f, 2.0f, 1.0f});
        const char *in = "x,w";
        if (!strcmp(ops[k][0], "Pad") || !strcmp(ops[k][0], "Tile"))
            in = !strcmp(ops[k][0], "Pad") ? "x,ints" : "x,four";
        if (!strcmp(ops[k][0], "Concat")) in = "x,x,x,x";
        if (!strcmp(ops[k][0], "Slice")) in = "x,four,four,,step";
        if (!strcmp(ops[k][0], "MaxUnpool")) in = "x,x";
        if (!strcmp(ops[k][0], "Flatten") || !strcmp(ops[k][0], "DepthToSpace") ||
            !strcmp(ops[k][0], "SpaceToDepth"))
            in = "x";
        if (!strcmp(ops[k][0], "Reshape")) in = "x,four";
        if (!strcmp(ops[k][0], "Resize")) in = "x,,scales";
        pc_node *n = pt_node(m, ops[k][0], "", in, "y", NULL);
        char attrs[256];
        snprintf(attrs, sizeof attrs, "%s", ops[k][1]);
        char *save = NULL;
        for (char *tok = strtok_r(attrs, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
            char *eq = strchr(tok, '=');
            *eq = 0;
            if (eq[1] == '[') {
                int64_t vals[8];
                const char *p = eq + 1;
                int32_t r = parse_dims(&p, vals);
                pc_node_set_attr_ints(n, tok, (size_t)r, vals, &err);
            } else {
                pc_node_set_attr_int(n, tok, strtoll(eq + 1, NULL, 10), &err);
            }
        }
        pc_status st = pc_graph_infer_shapes(m->graph, &err);
        CHECK_MSG(st == PC_OK || st == PC_ERR_SHAPE || st == PC_ERR_ATTRIBUTE || st == PC_ERR_VALUE,
                  "%s with huge dims: %s (%s)", ops[k][0], pc_status_name(st), err.message);
        pc_model_free(m);
    }
}

static void test_table(void)
{
    char why[PT_WHY_SIZE] = "";
    CHECK_MSG(pc_shape_table_check(why, sizeof why), "%s", why);
    CHECK(pc_shape_rule_count() >= 140);
    CHECK(pc_shape_rule_find("", "Conv") && pc_shape_rule_find("ai.onnx", "Conv"));
    CHECK(pc_shape_rule_find(PC_NHWC_DOMAIN, "MaxPool") &&
          pc_shape_rule_find(PC_NHWC_DOMAIN, "MaxPool")->nhwc);
    CHECK(!pc_shape_rule_find("", "NoSuchOp") && !pc_shape_rule_find("com.example", "Conv"));
    /* every row can be found (the order bsearch relies on) */
    size_t found = 0;
    for (size_t i = 0; i < pc_shape_rule_count(); i++) {
        const sh_rule *r = pc_shape_rule_at(i);
        found += pc_shape_rule_find(r->domain, r->op_type) == r;
    }
    CHECK(found == pc_shape_rule_count());
}

/* ---- the ONNX backend test models: declared types of produced values are erased, inference runs, and each
 * graph output is compared with the recorded output tensor of test_data_set_0 (an independent oracle: ONNX's
 * own data). */

typedef struct backend_stats {
    int models, skipped, outputs, full, partial, none, wrong, errors;
} backend_stats;

static void backend_case(const char *dir, const char *name, backend_stats *st)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/model.onnx", dir, name);
    pc_model *m = NULL;
    pc_error err;
    if (pc_model_load_file(path, NULL, &m, &err) != PC_OK) {
        st->skipped++;
        return;
    }
    st->models++;
    pc_graph *g = m->graph;
    for (uint32_t i = 0; i < g->n_values; i++) {
        pc_value *v = g->values[i];
        if (v && v->producer && v->type.kind == PC_TYPE_TENSOR) v->type = (pc_type){.kind = PC_TYPE_NONE};
    }
    if (pc_graph_infer_shapes(g, &err) != PC_OK) {
        st->errors++;
        CHECK_MSG(false, "backend %s: inference failed: %s", name, err.message);
        pc_model_free(m);
        return;
    }
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        const pc_value *v = g->outputs[i];
        pc_tensor *t = NULL;
        snprintf(path, sizeof path, "%s/%s/test_data_set_0/output_%u.pb", dir, name, i);
        if (!v->producer || pc_tensor_load_file(m, path, &t, &err) != PC_OK) continue;
        st->outputs++;
        const char *list = getenv("PC_SHAPE_LIST"); /* "1": name every output not fully inferred */
        if (v->type.kind != PC_TYPE_TENSOR) {
            st->none++;
            if (list) printf("not inferred: %s output %u (%s)\n", name, i, v->producer->op_type);
            continue;
        }
        bool ok = v->type.elem == PC_DTYPE_UNDEFINED || v->type.elem == t->dtype;
        bool full = v->type.elem == t->dtype && v->type.shape.rank == t->rank;
        if (v->type.shape.rank >= 0) {
            ok = ok && v->type.shape.rank == t->rank;
            for (int32_t k = 0; ok && k < t->rank; k++) {
                const pc_dim *d = &v->type.shape.dims[k];
                if (d->kind == PC_DIM_KNOWN)
                    ok = d->size == t->dims[k];
                else
                    full = false;
            }
        }
        if (!ok && v->type.elem == PC_DTYPE_BFLOAT16 && t->dtype == PC_DTYPE_UINT16) {
            /* ONNX 1.12's data stores bfloat16 outputs as uint16 (tests/conformance/errata.txt) */
            st->partial++;
        } else if (!ok) {
            st->wrong++;
            CHECK_MSG(false,
                      "backend %s: output %u '%s' inferred wrongly (dtype %s rank %d; actual %s rank %d)",
                      name, i, v->name, pc_dtype_name(v->type.elem), (int)v->type.shape.rank,
                      pc_dtype_name(t->dtype), (int)t->rank);
        } else if (full) {
            st->full++;
        } else {
            st->partial++;
            if (getenv("PC_SHAPE_LIST")) printf("partly: %s output %u (%s)\n", name, i, v->producer->op_type);
        }
    }
    pc_model_free(m);
}

static void test_backend_data(void)
{
    const char *root = getenv("PC_TESTDATA_DIR");
    if (!root) root = "/usr/share/libonnx-testdata/data";
    static const char *const sets[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
    backend_stats st = {0};
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/%s", root, sets[s]);
        struct dirent **list = NULL;
        int n = scandir(dir, &list, NULL, alphasort);
        for (int i = 0; i < n; i++) {
            if (list[i]->d_name[0] != '.') backend_case(dir, list[i]->d_name, &st);
            free(list[i]);
        }
        free(list);
    }
    printf("test_shape: backend data: %d models (%d not loadable), %d outputs: %d fully inferred, %d partly, "
           "%d not inferred, %d wrong; %d inference errors\n",
           st.models, st.skipped, st.outputs, st.full, st.partial, st.none, st.wrong, st.errors);
    CHECK(st.models == 0 || st.full > 0);
}

/* If: an output takes what both branches agree on (a dim they give differently is unknown); branches giving
 * different element types are an error naming the node. Each branch returns a graph input of the main graph
 * (an outer reference) through Identity. */
static pc_model *if_of(pc_dtype then_elem, const int64_t *then_dims, pc_dtype else_elem,
                       const int64_t *else_dims)
{
    pc_error err;
    pc_model *m = pt_model(17);
    pt_input(m, "c", PC_DTYPE_BOOL, 0, NULL);
    pt_input(m, "a", then_elem, 2, then_dims);
    pt_input(m, "b", else_elem, 2, else_dims);
    pc_node *iff = pt_node(m, "If", "", "c", "y", NULL);
    pc_attr *attrs = pc_arena_array(&m->arena, 2, sizeof *attrs);
    static const char *const names[2] = {"then_branch", "else_branch"}, *const ins[2] = {"a", "b"};
    for (int k = 0; k < 2; k++) {
        pc_graph *g = pc_graph_create(m, m->graph, iff);
        pc_value *ref = pc_graph_add_value(g, ins[k], NULL, &err), *o = pc_graph_find_value(m->graph, ins[k]);
        if (!g || !ref || !o) pt_die("body", &err);
        ref->outer = o;
        o->n_subgraph_refs++;
        pc_node *id = pc_graph_add_node(g, "Identity", "", 1, &ref, 1, NULL, &err);
        if (!id || pc_value_set_type(id->outputs[0], &ref->outer->type, &err) != PC_OK ||
            pc_graph_add_output(g, id->outputs[0], &err) != PC_OK)
            pt_die("body node", &err);
        attrs[k] = (pc_attr){.name = names[k], .type = PC_ATTR_GRAPH, .g = g};
    }
    iff->attrs = attrs;
    iff->n_attrs = iff->cap_attrs = 2;
    pt_output(m, "y");
    return m;
}

static void test_control_flow_if(void)
{
    pc_error err;
    pc_model *m = if_of(PC_DTYPE_FLOAT, (int64_t[]){2, 3}, PC_DTYPE_FLOAT, (int64_t[]){2, 5});
    CHECK_OK(pc_graph_infer_shapes(m->graph, &err), &err);
    const pc_type *t = &pc_graph_find_value(m->graph, "y")->type;
    CHECK(t->kind == PC_TYPE_TENSOR && t->elem == PC_DTYPE_FLOAT && t->shape.rank == 2 &&
          sh_dim_is(&t->shape.dims[0], 2) && t->shape.dims[1].kind == PC_DIM_UNKNOWN);
    pc_model_free(m);
    m = if_of(PC_DTYPE_FLOAT, (int64_t[]){2, 3}, PC_DTYPE_INT64, (int64_t[]){2, 3});
    CHECK_STATUS(pc_graph_infer_shapes(m->graph, &err), PC_ERR_SHAPE, &err);
    CHECK_MSG(strstr(err.message, "'y'") && strstr(err.message, "float") && strstr(err.message, "int64"),
              "names the node and both types: %s", err.message);
    pc_model_free(m);
}

/* Control-flow nodes inference cannot read: each error names the node and what is wrong (the verifier
 * normally refuses such nodes first; inference must not trust that). */
static void test_control_flow_errors(void)
{
    pc_error err;
    pc_model *m = pt_model(17);
    pt_input(m, "c", PC_DTYPE_BOOL, 0, NULL);
    pt_input(m, "x", PC_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    pc_node *iff = pt_node(m, "If", "", "c", "y", NULL); /* no branches */
    CHECK_STATUS(pc_node_infer_shapes(iff, &err), PC_ERR_SHAPE, &err);
    CHECK_MSG(strstr(err.message, "'y'") && strstr(err.message, "then_branch"), "%s", err.message);
    pc_node *loop = pt_node(m, "Loop", "", ",,x", "l", NULL); /* no body */
    CHECK_STATUS(pc_node_infer_shapes(loop, &err), PC_ERR_SHAPE, &err);
    CHECK_MSG(strstr(err.message, "'l'") && strstr(err.message, "body"), "%s", err.message);
    pc_node *scan = pt_node(m, "Scan", "", "x", "s", NULL);
    pc_graph *body = pc_graph_create(m, m->graph, scan);
    pc_attr *attrs = pc_arena_array(&m->arena, 1, sizeof *attrs);
    if (!body || !attrs) pt_die("scan body", NULL);
    attrs[0] = (pc_attr){.name = "body", .type = PC_ATTR_GRAPH, .g = body};
    scan->attrs = attrs;
    scan->n_attrs = scan->cap_attrs = 1;
    CHECK_OK(pc_node_set_attr_int(scan, "num_scan_inputs", 5, &err), &err); /* 5 of its 1 input */
    CHECK_STATUS(pc_node_infer_shapes(scan, &err), PC_ERR_SHAPE, &err);
    CHECK_MSG(strstr(err.message, "'s'") && strstr(err.message, "num_scan_inputs 5"), "%s", err.message);
    pc_model_free(m);
}

/* Slice's element count on every bound and step over small axes, against a plain walk of the ONNX definition
 * (clamp, then step from start while inside): the size-0 axis with a negative step once counted 1. */
static void test_slice_count_exhaustive(void)
{
    int checked = 0;
    for (int64_t dim = 0; dim <= 4; dim++)
        for (int64_t start = -7; start <= 7; start++)
            for (int64_t end = -7; end <= 7; end++)
                for (int64_t step = -3; step <= 3; step++) {
                    if (!step) continue;
                    int64_t s = start < 0 ? start + dim : start, e = end < 0 ? end + dim : end;
                    if (step > 0) {
                        s = s < 0 ? 0 : s > dim ? dim : s;
                        e = e < 0 ? 0 : e > dim ? dim : e;
                    } else {
                        /* the spec's [0, dim - 1] for starts and [-1, dim - 1] for ends (empty for dim 0) */
                        s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
                        e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
                    }
                    int64_t want = 0, first = -1;
                    for (int64_t i = s; dim > 0 && (step > 0 ? i < e : i > e); i += step)
                        want++;
                    int64_t got = sh_slice_count(dim, start, end, step, &first);
                    CHECK_MSG(got == want, "Slice dim %lld [%lld:%lld:%lld]: %lld elements, want %lld",
                              (long long)dim, (long long)start, (long long)end, (long long)step,
                              (long long)got, (long long)want);
                    checked++;
                }
    CHECK(checked > 2000);
}

int main(void)
{
    test_slice_count_exhaustive();
    test_table();
    test_control_flow_errors();
    test_control_flow_if();
    RUN_SPECS(elementwise_specs);
    RUN_SPECS(tensor_specs);
    RUN_SPECS(reduce_specs);
    RUN_SPECS(nn_specs);
    check_windows();
    test_symbols();
    test_merge();
    test_value_propagation();
    test_huge_dims();
    test_backend_data();
    printf("test_shape: %zu ops in the table; %d inferred outputs checked against the reference\n",
           pc_shape_rule_count(), n_oracle_outputs);
    return pc_test_finish("test_shape");
}
