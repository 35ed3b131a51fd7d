/* bench_load: loader speed benchmark (not a test; nothing here asserts a time).
 *
 *   bench_load gen DIR            writes DIR/nodes100k.onnx and DIR/weights500m.onnx, built with the IR API
 * and saved with pc_model_save_file (so the saver is exercised too) bench_load time FILE [REPEAT] loads FILE
 * with pc_model_load_file and default options (load + full verify) REPEAT times (default 5) and prints,
 * machine-readable: passcheck_load FILE median_s min_s passcheck_mem FILE maxrss_kib rss_after_load_kib
 * model_peak_bytes model_live_bytes file_bytes maxrss_kib: getrusage peak of the whole process (the file
 * mapping's pages count while they are mapped); rss_after_load_kib: VmRSS with the first loaded model alive
 * (file unmapped again); model_peak_bytes/model_live_bytes: the model's pc_mem accounting at its peak during
 * loading / after loading. bench_load phases FILE [REPEAT] diagnostic split of the same work: load with
 * skip_verify, then pc_model_verify passcheck_phases FILE load_median_s verify_median_s
 *
 * Only the load call is timed; pc_model_free runs outside the timed region (the Python peer's timing excludes
 * freeing as well). Default pc_load_options allow 8 GiB of model memory and 4 GiB files: both models stay far
 * below, so a budget error here means the loader regressed, and is reported as a failure (exit 1).
 *
 * The generator names nodes and values the way PyTorch's exporter does ("/blocks.12/mlp/Mul",
 * "/blocks.12/mlp/Mul_output_0"). The public API only creates nodes with generated output names, so the
 * named outputs are attached with pc_node_append_output from the IR's internal header. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "core/passcheck.h"
#include "core/internal.h"
#include "properties/runner/util.h"

enum {
    N_NODES = 100000,  /* nodes in nodes100k.onnx */
    ACT_WIDTH = 64,    /* activations are float [batch, 64] */
    N_SHARED_VECS = 4, /* scale/bias vector pairs shared by all blocks */
    N_BIG = 50,        /* 10 MiB weights in weights500m.onnx */
    BIG_IN = 1024,
    BIG_OUT = 2560, /* 1024 x 2560 floats = 10 MiB */
    DEFAULT_REPEAT = 5,
};

static void die_err(const char *what, const pc_error *err)
{
    fprintf(stderr, "bench_load: %s: %s: %s\n", what, pc_status_name(err->status), err->message);
    exit(1);
}

static void die_nomem(const char *what)
{
    fprintf(stderr, "bench_load: out of memory: %s\n", what);
    exit(1);
}

/* ---- generation -------------------------------------------------------------------------------------------
 */

typedef struct gen {
    pc_model *m;
    pc_graph *g;
    pc_error err;
    uint32_t n_ops;
    uint32_t lcg;
} gen;

static const char *gen_printf(gen *b, const char *fmt, ...) PC_PRINTF(2, 3);

static const char *gen_printf(gen *b, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf) die_nomem("name too long");
    char *s = pc_arena_strdup(&b->m->arena, buf);
    if (!s) die_nomem("a name");
    return s;
}

static float gen_rand(gen *b)
{
    b->lcg = b->lcg * 1664525u + 1013904223u;
    return (float)(int32_t)b->lcg * (0.05f / 2147483648.0f);
}

/* A float tensor type [batch, w] or [d0, d1]; symbol NULL for a known first dimension. */
static pc_type float_type(pc_dim *dims, int32_t rank, const char *symbol, const int64_t *sizes)
{
    for (int32_t i = 0; i < rank; i++) {
        if (i == 0 && symbol)
            dims[i] = (pc_dim){.kind = PC_DIM_SYMBOLIC, .symbol = symbol};
        else
            dims[i] = (pc_dim){.kind = PC_DIM_KNOWN, .size = sizes[i]};
    }
    return (pc_type){.kind = PC_TYPE_TENSOR, .elem = PC_DTYPE_FLOAT, .shape = {.rank = rank, .dims = dims}};
}

static pc_value *gen_initializer(gen *b, const char *name, int32_t rank, const int64_t *dims, bool random)
{
    pc_tensor *t = pc_tensor_create(b->m, name, PC_DTYPE_FLOAT, rank, dims, &b->err);
    if (!t) die_err("pc_tensor_create", &b->err);
    float *f = t->data;
    for (uint64_t i = 0; i < t->n_elements; i++)
        f[i] = random ? gen_rand(b) : 0.5f;
    pc_value *v = pc_graph_add_value(b->g, name, NULL, &b->err);
    if (!v) die_err("pc_graph_add_value", &b->err);
    if (pc_graph_set_initializer(b->g, v, t, &b->err) != PC_OK) die_err("pc_graph_set_initializer", &b->err);
    return v;
}

/* Adds `op` reading a (and bb when non-NULL); names it "<scope>/<op>[_k]" and its output "<name>_output_0".
 */
static pc_value *gen_op(gen *b, const char *scope, const char *op, unsigned k, pc_value *a, pc_value *bb)
{
    pc_value *ins[2] = {a, bb};
    pc_node *n = pc_graph_add_node(b->g, op, "", bb ? 2u : 1u, ins, 0, NULL, &b->err);
    if (!n) die_err("pc_graph_add_node", &b->err);
    n->name = k ? gen_printf(b, "%s/%s_%u", scope, op, k) : gen_printf(b, "%s/%s", scope, op);
    pc_value *v = pc_graph_add_value(b->g, gen_printf(b, "%s_output_0", n->name), NULL, &b->err);
    if (!v) die_err("pc_graph_add_value", &b->err);
    if (pc_node_append_output(n, v, &b->err) != PC_OK) die_err("pc_node_append_output", &b->err);
    b->n_ops++;
    return v;
}

static void gen_begin(gen *b)
{
    memset(b, 0, sizeof *b);
    b->lcg = 12345u;
    if (pc_model_create(&b->m, &b->err) != PC_OK) die_err("pc_model_create", &b->err);
    b->g = b->m->graph;
    b->m->ir_version = 8;
    if (pc_model_set_opset(b->m, "", 13, &b->err) != PC_OK) die_err("pc_model_set_opset", &b->err);
    b->m->producer_name = "passcheck-bench";
    b->m->producer_version = "1";
    b->g->name = "main_graph";
}

static void gen_finish(gen *b, const char *dir, const char *file)
{
    if (pc_model_verify(b->m, &b->err) != PC_OK) die_err("generated model does not verify", &b->err);
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s", dir, file);
    if (n < 0 || (size_t)n >= sizeof path) {
        fprintf(stderr, "bench_load: path too long\n");
        exit(1);
    }
    double t0 = pc_now_seconds();
    if (pc_model_save_file(b->m, path, &b->err) != PC_OK) die_err("pc_model_save_file", &b->err);
    double t1 = pc_now_seconds();
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "bench_load: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    printf("generated %s nodes=%u initializers=%u bytes=%lld save_s=%.3f\n", path, b->g->n_nodes,
           b->g->n_initializers, (long long)sb.st_size, t1 - t0);
    pc_model_free(b->m);
    b->m = NULL;
}

/* nodes100k.onnx: 10,000 residual blocks of 10 ops over float [batch, 64] activations:
 *   a = x * scale[k]; c = a + bias[k]; r = Relu(c); s = Sigmoid(x); gt = r * s; h = gt + x;
 *   q = h * half; y = Sigmoid(q); z = y * h; x' = z + eps
 * with k = block % 4: ten small initializers in all, each read by thousands of nodes (as exporters that
 * deduplicate constants produce). Every third activation carries a value_info. */
static void gen_nodes(const char *dir)
{
    gen b;
    gen_begin(&b);
    const int64_t act[2] = {1, ACT_WIDTH};
    const int64_t vec[1] = {ACT_WIDTH};
    pc_dim dims[2];
    pc_type act_type = float_type(dims, 2, "batch", act);

    pc_value *x = pc_graph_add_value(b.g, "input", NULL, &b.err);
    if (!x || pc_value_set_type(x, &act_type, &b.err) != PC_OK || pc_graph_add_input(b.g, x, &b.err) != PC_OK)
        die_err("graph input", &b.err);
    pc_value *scale[N_SHARED_VECS], *bias[N_SHARED_VECS];
    for (unsigned k = 0; k < N_SHARED_VECS; k++) {
        scale[k] = gen_initializer(&b, gen_printf(&b, "blocks.norm%u.weight", k), 1, vec, true);
        bias[k] = gen_initializer(&b, gen_printf(&b, "blocks.norm%u.bias", k), 1, vec, true);
    }
    pc_value *half = gen_initializer(&b, "onnx::Mul_half", 0, NULL, false);
    pc_value *eps = gen_initializer(&b, "onnx::Add_eps", 0, NULL, true);

    unsigned n_blocks = N_NODES / 10, n_values = 0;
    for (unsigned blk = 0; blk < n_blocks; blk++) {
        const char *scope = gen_printf(&b, "/blocks.%u/mlp", blk);
        unsigned k = blk % N_SHARED_VECS;
        pc_value *v[10];
        v[0] = gen_op(&b, scope, "Mul", 0, x, scale[k]);
        v[1] = gen_op(&b, scope, "Add", 0, v[0], bias[k]);
        v[2] = gen_op(&b, scope, "Relu", 0, v[1], NULL);
        v[3] = gen_op(&b, scope, "Sigmoid", 0, x, NULL);
        v[4] = gen_op(&b, scope, "Mul", 1, v[2], v[3]);
        v[5] = gen_op(&b, scope, "Add", 1, v[4], x);
        v[6] = gen_op(&b, scope, "Mul", 2, v[5], half);
        v[7] = gen_op(&b, scope, "Sigmoid", 1, v[6], NULL);
        v[8] = gen_op(&b, scope, "Mul", 3, v[7], v[5]);
        v[9] = gen_op(&b, scope, "Add", 2, v[8], eps);
        for (unsigned i = 0; i < 10; i++, n_values++) {
            if (n_values % 3 != 0) continue;
            if (pc_value_set_type(v[i], &act_type, &b.err) != PC_OK) die_err("pc_value_set_type", &b.err);
            v[i]->has_value_info = true;
        }
        x = v[9];
    }
    if (pc_value_set_type(x, &act_type, &b.err) != PC_OK || pc_graph_add_output(b.g, x, &b.err) != PC_OK)
        die_err("graph output", &b.err);
    gen_finish(&b, dir, "nodes100k.onnx");
}

/* weights500m.onnx: 50 MatMul + Add layers; each MatMul weight is 10 MiB of floats (1024x2560, then
 * 2560x1024, alternating), each Add bias a small vector: 500 MiB of initializers in all. */
static void gen_weights(const char *dir)
{
    gen b;
    gen_begin(&b);
    pc_dim dims[2];
    const int64_t in_dims[2] = {1, BIG_IN};
    pc_type in_type = float_type(dims, 2, "batch", in_dims);
    pc_value *x = pc_graph_add_value(b.g, "input", NULL, &b.err);
    if (!x || pc_value_set_type(x, &in_type, &b.err) != PC_OK || pc_graph_add_input(b.g, x, &b.err) != PC_OK)
        die_err("graph input", &b.err);
    int64_t width = BIG_IN;
    for (unsigned i = 0; i < N_BIG; i++) {
        int64_t out = width == BIG_IN ? BIG_OUT : BIG_IN;
        const int64_t wd[2] = {width, out};
        const int64_t bd[1] = {out};
        const char *scope = gen_printf(&b, "/layers.%u/fc", i);
        pc_value *w = gen_initializer(&b, gen_printf(&b, "layers.%u.fc.weight", i), 2, wd, true);
        pc_value *bias = gen_initializer(&b, gen_printf(&b, "layers.%u.fc.bias", i), 1, bd, true);
        pc_value *h = gen_op(&b, scope, "MatMul", 0, x, w);
        x = gen_op(&b, scope, "Add", 0, h, bias);
        const int64_t od[2] = {1, out};
        pc_dim odims[2];
        pc_type ot = float_type(odims, 2, "batch", od);
        if (pc_value_set_type(h, &ot, &b.err) != PC_OK) die_err("pc_value_set_type", &b.err);
        h->has_value_info = true;
        if (i + 1 == N_BIG && pc_value_set_type(x, &ot, &b.err) != PC_OK)
            die_err("pc_value_set_type", &b.err);
        width = out;
    }
    if (pc_graph_add_output(b.g, x, &b.err) != PC_OK) die_err("graph output", &b.err);
    gen_finish(&b, dir, "weights500m.onnx");
}

/* ---- timing -----------------------------------------------------------------------------------------------
 */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int parse_repeat(const char *s)
{
    char *end;
    errno = 0;
    long r = strtol(s, &end, 10);
    if (errno || *end || r < 1 || r > 1000) {
        fprintf(stderr, "bench_load: REPEAT must be an integer in 1..1000, got '%s'\n", s);
        exit(2);
    }
    return (int)r;
}

static long maxrss_kib(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
    return ru.ru_maxrss; /* KiB on Linux */
}

/* VmRSS from /proc/self/status in KiB, -1 if unavailable. */
static long current_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) {
            kib = strtol(line + 6, NULL, 10);
            break;
        }
    fclose(f);
    return kib;
}

static int cmd_time(const char *path, int repeat)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "bench_load: %s: %s\n", path, strerror(errno));
        return 1;
    }
    double *t = malloc((size_t)repeat * sizeof *t);
    if (!t) die_nomem("timings");
    size_t model_peak = 0, model_live = 0;
    long rss_after_load = -1;
    for (int i = 0; i < repeat; i++) {
        pc_error err;
        pc_model *m = NULL;
        double t0 = pc_now_seconds();
        pc_status st = pc_model_load_file(path, NULL, &m, &err); /* default options: load + full verify */
        t[i] = pc_now_seconds() - t0;
        if (st != PC_OK) die_err("pc_model_load_file", &err);
        if (m->mem.peak > model_peak) model_peak = m->mem.peak;
        if (i == 0) {
            model_live = m->mem.used;
            rss_after_load = current_rss_kib();
        }
        pc_model_free(m);
    }
    double min = t[0];
    for (int i = 1; i < repeat; i++)
        if (t[i] < min) min = t[i];
    printf("passcheck_load %s %.6f %.6f\n", path, median(t, repeat), min);
    printf("passcheck_mem %s %ld %ld %zu %zu %lld\n", path, maxrss_kib(), rss_after_load, model_peak,
           model_live, (long long)sb.st_size);
    free(t);
    return 0;
}

static int cmd_phases(const char *path, int repeat)
{
    double *tl = malloc((size_t)repeat * sizeof *tl), *tv = malloc((size_t)repeat * sizeof *tv);
    if (!tl || !tv) die_nomem("timings");
    pc_load_options opts;
    pc_load_options_default(&opts);
    opts.skip_verify = true;
    for (int i = 0; i < repeat; i++) {
        pc_error err;
        pc_model *m = NULL;
        double t0 = pc_now_seconds();
        if (pc_model_load_file(path, &opts, &m, &err) != PC_OK) die_err("pc_model_load_file", &err);
        double t1 = pc_now_seconds();
        if (pc_model_verify(m, &err) != PC_OK) die_err("pc_model_verify", &err);
        double t2 = pc_now_seconds();
        tl[i] = t1 - t0;
        tv[i] = t2 - t1;
        pc_model_free(m);
    }
    printf("passcheck_phases %s %.6f %.6f\n", path, median(tl, repeat), median(tv, repeat));
    free(tl);
    free(tv);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_load gen DIR\n"
                    "       bench_load time FILE [REPEAT]\n"
                    "       bench_load phases FILE [REPEAT]\n");
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "gen") == 0) {
        gen_nodes(argv[2]);
        gen_weights(argv[2]);
        return 0;
    }
    if ((argc == 3 || argc == 4) && (strcmp(argv[1], "time") == 0 || strcmp(argv[1], "phases") == 0)) {
        int repeat = argc == 4 ? parse_repeat(argv[3]) : DEFAULT_REPEAT;
        return strcmp(argv[1], "time") == 0 ? cmd_time(argv[2], repeat) : cmd_phases(argv[2], repeat);
    }
    usage();
    return 2;
}
