/* The runtime's internals: the tensor view kernels see, the one kernel signature, and the kernel tables.
 *
 * A session (session.c) binds every node of an optimized graph to a row of the kernel tables at creation,
 * resolves every value's shape (core's shape inference with the inputs' sizes fixed), plans one arena for
 * all intermediate values (plan.c) and then runs the nodes in order. A kernel never allocates tensors: its
 * outputs arrive with dtype, dims and data set (data in the arena, sized from the inferred shape); it reads
 * attributes through the node and scratch memory it asked for in `prepare`.
 *
 *     static pc_status relu_run(pc_rt_kernel_ctx *k)
 *     {
 *         const float *x = k->in[0]->data;
 *         float *y = k->out[0]->data;
 *         for (uint64_t i = 0; i < k->out[0]->n; i++)
 *             y[i] = x[i] > 0 ? x[i] : 0;
 *         return PC_OK;
 *     }
 *     const pc_rt_kernel pc_rt_kernels_unary[] = {{"", "Relu", 6, 21, RT_F32, NULL, relu_run, true}, ...};
 *
 * The runtime shares nothing with the reference executor (reference/): its kernels are written for speed
 * (OpenBLAS for gemm), the reference's for obviousness, and the `runtime` property compares the two. */
#ifndef PC_RT_INTERNAL_H
#define PC_RT_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/internal.h"

/* A tensor as a kernel sees it: dense, row-major, little-endian raw form (as pc_tensor). */
typedef struct pc_rt_tensor {
    pc_dtype dtype;
    int32_t rank;
    int64_t dims[PC_MAX_RANK];
    uint64_t n; /* elements */
    void *data; /* inputs: read only (initializers are referenced in place); outputs: the planned buffer */
} pc_rt_tensor;

typedef struct pc_rt_pool pc_rt_pool;

typedef struct pc_rt_kernel_ctx {
    const pc_node *node; /* attributes: pc_node_attr_int/float/string, pc_node_attr for lists */
    int64_t opset;       /* the model's opset for the node's domain */
    uint32_t n_in, n_out;
    const pc_rt_tensor *const *in; /* NULL entry: omitted optional input */
    pc_rt_tensor *const *out;      /* NULL entry: omitted optional output */
    void *scratch;                 /* `scratch_bytes` bytes, 64-byte aligned, asked for by prepare */
    size_t scratch_bytes;
    int threads; /* the session's thread count (>= 1) */
    pc_error *err;
    pc_rt_pool *pool; /* the session's workers (threads > 1), else NULL: see pc_rt_parallel_for */
} pc_rt_kernel_ctx;

/* The thread pool (pool.c). A kernel splits independent work — channels, rows, elements — with
 *
 *     pc_rt_parallel_for(k, n, grain, fn, arg);   // fn(arg, lo, hi, part) over a fixed split of [0, n)
 *
 * which runs the chunks on the session's threads (the caller takes the first) and returns when all are done;
 * with no pool, or fewer than two chunks of `grain` items, it calls fn(arg, 0, n, 0) itself. `part` (0 ..
 * threads - 1) numbers the chunk, so a kernel can give each its own slice of scratch. The split depends
 * only on n, grain and the thread count, so a kernel whose items do not interact gives the same bits every
 * run, for any thread count. */
typedef void (*pc_rt_task_fn)(void *arg, int64_t lo, int64_t hi, int part);
pc_rt_pool *pc_rt_pool_create(int threads); /* NULL when threads < 2 or the threads cannot start */
void pc_rt_pool_free(pc_rt_pool *p);
void pc_rt_parallel_for(const pc_rt_kernel_ctx *k, int64_t n, int64_t grain, pc_rt_task_fn fn, void *arg);
/* cblas_sgemm (row-major) split over the session's threads: by columns of C when N >= M, else by rows, each
 * chunk a single-threaded sgemm (the session runs OpenBLAS on one thread: the pool is the only parallelism,
 * so OpenBLAS's spinning workers never compete with it). Small products run whole. */
void pc_rt_sgemm(const pc_rt_kernel_ctx *k, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t kk,
                 float alpha, const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                 int64_t ldc);

/* At session creation, with the shapes known (data not yet: in[i]->data is NULL unless the input is an
 * initializer): refuses what the kernel cannot run (PC_ERR_UNSUPPORTED, or PC_ERR_ATTRIBUTE / PC_ERR_SHAPE
 * naming the attribute or input) and says how much scratch memory run needs. */
typedef pc_status (*pc_rt_prepare_fn)(pc_rt_kernel_ctx *k, size_t *scratch_bytes);
/* Computes the outputs. Errors name what was wrong (k->err); the session prefixes the node. */
typedef pc_status (*pc_rt_run_fn)(pc_rt_kernel_ctx *k);

/* Element-type sets of input 0 (a row claims a node when input 0's type is in the set). */
#define RT_TYPE(t) (UINT64_C(1) << (t))
#define RT_F32     RT_TYPE(PC_DTYPE_FLOAT)
#define RT_I64     RT_TYPE(PC_DTYPE_INT64)
#define RT_I32     RT_TYPE(PC_DTYPE_INT32)
#define RT_U8      RT_TYPE(PC_DTYPE_UINT8)
#define RT_I8      RT_TYPE(PC_DTYPE_INT8)
#define RT_BOOL    RT_TYPE(PC_DTYPE_BOOL)
#define RT_F64     RT_TYPE(PC_DTYPE_DOUBLE)
#define RT_F16     RT_TYPE(PC_DTYPE_FLOAT16)
#define RT_BF16    RT_TYPE(PC_DTYPE_BFLOAT16)
#define RT_I16     RT_TYPE(PC_DTYPE_INT16)
#define RT_U16     RT_TYPE(PC_DTYPE_UINT16)
#define RT_U32     RT_TYPE(PC_DTYPE_UINT32)
#define RT_U64     RT_TYPE(PC_DTYPE_UINT64)
/* every integer type, and every numeric type (the backend tests run the arithmetic ops on all of them) */
#define RT_ALL_INT (RT_I8 | RT_I16 | RT_I32 | RT_I64 | RT_U8 | RT_U16 | RT_U32 | RT_U64)
#define RT_ALL_NUM (RT_ALL_INT | RT_F32 | RT_F64 | RT_F16)
/* every fixed-width type (data movement copies bytes) */
#define RT_ANY_FIXED (RT_ALL_NUM | RT_BOOL | RT_BF16)

/* Kernel flags. RT_SLICEABLE: elementwise from input 0 to output 0 (flat index to flat index, equal counts;
 * other inputs read whole, no scratch): the session may run it on slices of those two, one per thread
 * (session.c). RT_INPLACE: output 0's element i is made from element i of every input of its element count
 * (each read before it is written), the others read whole: the planner may give output 0 the buffer of such
 * an input that dies at this node (session.c, plan_inplace). Sliceable kernels are in place on input 0. */
enum { RT_SLICEABLE = 1u << 0, RT_INPLACE = 1u << 1 };

typedef struct pc_rt_kernel {
    const char *domain; /* "" for ai.onnx */
    const char *op_type;
    int64_t min_opset, max_opset;
    uint64_t types;           /* input 0's element types; 0: any */
    pc_rt_prepare_fn prepare; /* NULL: nothing to check, no scratch */
    pc_rt_run_fn run;
    unsigned flags; /* RT_SLICEABLE, RT_INPLACE */
} pc_rt_kernel;

/* The kernel tables, one per file of core/runtime/kernels (a family per file). */
extern const pc_rt_kernel pc_rt_kernels_elementwise[];
extern const size_t pc_rt_n_kernels_elementwise;
extern const pc_rt_kernel pc_rt_kernels_conv[];
extern const size_t pc_rt_n_kernels_conv;
extern const pc_rt_kernel pc_rt_kernels_nn[];
extern const size_t pc_rt_n_kernels_nn;
extern const pc_rt_kernel pc_rt_kernels_movement[];
extern const size_t pc_rt_n_kernels_movement;
extern const pc_rt_kernel pc_rt_kernels_resize[];
extern const size_t pc_rt_n_kernels_resize;
extern const pc_rt_kernel pc_rt_kernels_reduce[];
extern const size_t pc_rt_n_kernels_reduce;
extern const pc_rt_kernel pc_rt_kernels_quant[];
extern const size_t pc_rt_n_kernels_quant;
extern const pc_rt_kernel pc_rt_kernels_blocked[];
extern const size_t pc_rt_n_kernels_blocked;

/* The row that runs `node` (domain, op, the model's opset for the domain, input 0's type), or NULL. */
const pc_rt_kernel *pc_rt_kernel_find(const pc_node *node, int64_t opset, pc_dtype in0);

/* The memory plan (plan.c): buffers live from the step that writes them (def) to the last step that reads
 * them (last, inclusive); two buffers whose lives overlap never share a byte. */
typedef struct pc_rt_buffer {
    uint32_t def, last;
    size_t bytes;  /* rounded up to PC_RT_ALIGN by the planner */
    size_t offset; /* out: the buffer's place in the arena */
} pc_rt_buffer;
enum { PC_RT_ALIGN = 64 };
/* Places every buffer (largest first, each at the lowest offset free for its whole life) and returns the
 * arena size, or SIZE_MAX when the sizes overflow. */
size_t pc_rt_plan_place(pc_rt_buffer *b, uint32_t n);
/* Whether no two buffers alive at the same step overlap and all fit in arena_bytes (the planner's invariant;
 * the session asserts it in Debug builds, tests check it on random lifetimes). */
bool pc_rt_plan_valid(const pc_rt_buffer *b, uint32_t n, size_t arena_bytes);

/* Shared helpers for kernels (core/runtime/kernels/util.c). */
/* numpy broadcast of a and b to out: per-axis strides of a and b over out's axes (0 where broadcast). */
void pc_rt_broadcast_strides(const pc_rt_tensor *t, const pc_rt_tensor *out, int64_t *strides);
/* An ints attribute (NULL and *n = 0 when absent). */
const int64_t *pc_rt_attr_ints(const pc_node *node, const char *name, size_t *n);
/* Bound on kernel, stride, dilation, pad and size attributes: keeps the kernels' index arithmetic in int64.
 */
#define PC_RT_ATTR_LIMIT ((int64_t)1 << 31)
/* An int attribute (fallback when absent); PC_ERR_ATTRIBUTE when it is of another type. */
pc_status pc_rt_read_int(pc_rt_kernel_ctx *k, const char *name, int64_t fallback, int64_t *out);
/* An ints attribute of exactly n values in [lo, PC_RT_ATTR_LIMIT) into dst (left as is when absent and not
 * required); PC_ERR_ATTRIBUTE naming it otherwise. */
pc_status pc_rt_read_ints(pc_rt_kernel_ctx *k, const char *name, size_t n, int64_t lo, bool required,
                          int64_t *dst);
/* A float attribute (fallback when absent); PC_ERR_ATTRIBUTE when it is of another type. */
pc_status pc_rt_read_float(pc_rt_kernel_ctx *k, const char *name, float fallback, float *out);
/* LRN's attributes: size (required, >= 1), alpha, beta, bias (floats, ONNX's defaults), and the window
 * around a channel: [c - before, c + after] with before = floor((size - 1) / 2). */
typedef struct pc_rt_lrn {
    int64_t size, before, after;
    float alpha, beta, bias;
} pc_rt_lrn;
pc_status pc_rt_read_lrn(pc_rt_kernel_ctx *k, pc_rt_lrn *p);
/* auto_pad, read and checked (a string of the four values; "" is NOTSET). */
typedef enum pc_rt_auto_pad {
    PC_RT_PAD_NOTSET,
    PC_RT_PAD_VALID,
    PC_RT_PAD_SAME_UPPER,
    PC_RT_PAD_SAME_LOWER
} pc_rt_auto_pad;
pc_status pc_rt_read_auto_pad(pc_rt_kernel_ctx *k, pc_rt_auto_pad *mode);
/* Output 0 has exactly rank and dims (the session sized it from shape inference: a disagreement is a bug
 * somewhere, never something to compute through). */
pc_status pc_rt_require_out_dims(pc_rt_kernel_ctx *k, int32_t rank, const int64_t *dims);
/* The fused activation of FusedConv/FusedGemm (`activation`, `activation_params`) applied in place to n
 * floats; PC_ERR_UNSUPPORTED for an activation it does not know (checked in prepare via
 * pc_rt_activation_check). */
pc_status pc_rt_activation_check(const pc_node *node, pc_error *err);
/* The activation read once (kernels apply it row by row: looking the attributes up per row cost more than
 * the rows), then applied to runs of floats. */
typedef enum pc_rt_act_kind {
    PC_RT_ACT_NONE,
    PC_RT_ACT_RELU,
    PC_RT_ACT_SIGMOID,
    PC_RT_ACT_TANH,
    PC_RT_ACT_LEAKY_RELU,
    PC_RT_ACT_CLIP,
    PC_RT_ACT_HARD_SIGMOID
} pc_rt_act_kind;
typedef struct pc_rt_act {
    pc_rt_act_kind kind;
    float a, b; /* LeakyRelu alpha; Clip min, max; HardSigmoid alpha, beta */
} pc_rt_act;
pc_rt_act pc_rt_activation_get(const pc_node *node);
void pc_rt_act_apply(const pc_rt_act *act, float *x, uint64_t n);
void pc_rt_activation_apply(const pc_node *node, float *x, uint64_t n); /* get, then apply */

/* PC_RT_WIDE before a hot loop's function compiles it twice, for baseline x86-64 (SSE2, 4 lanes) and for
 * AVX2 (8 lanes), the loader picking one by the CPU. The build targets baseline x86-64, so without it every
 * vectorized loop runs 4 lanes wide. FMA is not asked for and -std=c11 keeps contraction off, so both clones
 * compute the same bits. Static functions only (clang 14 makes no dispatcher for a clone called from
 * another file). Not under the sanitizers (their runtime is not up when ifunc resolvers run). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PC_RT_SANITIZED
#endif
#endif
#if defined(__x86_64__) && defined(__has_attribute) && !defined(__SANITIZE_ADDRESS__) &&                     \
    !defined(PC_RT_SANITIZED)
#if __has_attribute(target_clones)
#define PC_RT_WIDE __attribute__((target_clones("default", "avx2")))
#endif
#endif
#ifndef PC_RT_WIDE
#define PC_RT_WIDE
#endif

/* Branch-free float math for kernels whose loops must vectorize (libm's calls do not). */
static inline float pc_rt_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint32_t pc_rt_bits_from_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* exp(x) = 2^n exp(r), n = round(x / ln 2), r = x - n ln 2 in [-ln2/2, ln2/2], exp(r) by Cephes' degree-5
 * polynomial. Branch-free so that loops over it vectorize; NaN propagates, +inf gives inf, -inf 0. The
 * rounding uses the 1.5 * 2^23 trick (no float-to-int conversion, which is undefined for NaN), and 2^n is
 * built in two halves so that subnormal results and n = 128 stay representable. */
static inline float pc_rt_expf(float x)
{
    const float hi = 88.7228394f, lo = -103.972084f, magic = 12582912.0f;
    float xc = x > hi ? hi : x; /* comparisons written so that NaN falls through */
    xc = xc < lo ? lo : xc;
    float t = xc * 1.44269504088896341f + magic;
    float n = t - magic;
    int32_t ni = (int32_t)(pc_rt_bits_from_f32(t) - pc_rt_bits_from_f32(magic));
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    int32_t n1 = ni / 2, n2 = ni - n1;
    float y =
        p * pc_rt_f32_from_bits((uint32_t)(n1 + 127) << 23) * pc_rt_f32_from_bits((uint32_t)(n2 + 127) << 23);
    y = x > hi ? INFINITY : y;
    return x < lo ? 0.0f : y;
}

/* erf(x), branch-free so that loops over it vectorize (Gelu, Erf): |x| < 1: x P(x^2), P of degree 6 fitted
 * to erf(x)/x (relative error 1.4e-9 in double); 1 <= |x| < 4: 1 - exp(-x^2) Q(1/|x|), Q of degree 9 fitted
 * to erfcx (3.1e-8); beyond, +-1 (erfc(4) is below half an ulp of 1). In float about 2 ulp near 0 and
 * 2e-7 absolute at worst (exp(-x^2) inherits x^2's rounding); NaN propagates. */
static inline float pc_rt_erff(float x)
{
    float a = x < 0 ? -x : x, u = x * x;
    float p = 7.882497216642604e-05f;
    p = p * u + -8.018855022995126e-04f;
    p = p * u + 5.189311945793715e-03f;
    p = p * u + -2.685432879743431e-02f;
    p = p * u + 1.1283597463509794e-01f;
    p = p * u + -3.761262690358043e-01f;
    p = p * u + 1.1283791658815017f;
    float small = x * p;
    float t = 1.0f / (a > 1.0f ? a : 1.0f);
    float q = 2.60252332143135e-02f;
    q = q * t + -1.5349855561177536e-01f;
    q = q * t + 3.745883097721276e-01f;
    q = q * t + -4.4898904672283546e-01f;
    q = q * t + 1.6222162173198762e-01f;
    q = q * t + 2.730973459400266e-01f;
    q = q * t + -3.913748789024806e-01f;
    q = q * t + 2.4049762393521166e-02f;
    q = q * t + 5.613178839776126e-01f;
    q = q * t + 1.4590342908016345e-04f;
    float big = 1.0f - pc_rt_expf(-u) * q;
    big = a >= 4.0f ? 1.0f : big;
    big = x < 0 ? -big : big;
    return a < 1.0f ? small : a >= 1.0f ? big : x; /* NaN: neither comparison holds */
}

#endif
