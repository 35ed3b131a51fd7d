/* Reference ops: text family (TfIdfVectorizer).
 *
 * TfIdfVectorizer (ai.onnx 9) counts pool n-grams in each row of an int32/int64/string input. Counting rule,
 * as the spec's examples, the backend cases and ONNX Runtime agree: an n-gram is the items at start, start +
 * d, ..., start + (n - 1) * d for a distance d = skip + 1, skip in [0, max_skip_count]; every (start, d) pair
 * that fits in the row counts once. Unigrams have no distance, so they are counted once per position, not
 * once per skip. */
#include <stdlib.h>
#include <string.h>

#include "reference/ref_internal.h"

enum { TFIDF_TF, TFIDF_IDF, TFIDF_TFIDF };

typedef struct tfidf {
    int64_t min_n, max_n, max_skip;
    int mode;
    const int64_t *counts; /* ngram_counts: start of the (k+1)-grams in the pool */
    size_t n_counts;
    const int64_t *indexes; /* ngram_indexes: output coordinate of pool n-gram g */
    size_t n_grams;
    const int64_t *pool_i; /* exactly one of pool_i / pool_s */
    const pc_bytes *pool_s;
    size_t pool_len;
    const float *weights; /* NULL = all ones (or mode TF, where weights do not apply) */
    int64_t out_size;     /* max(ngram_indexes) + 1 */
} tfidf;

/* End (exclusive) of the pool items of the (k+1)-grams. */
static size_t seg_end(const tfidf *p, size_t k)
{
    return k + 1 < p->n_counts ? (size_t)p->counts[k + 1] : p->pool_len;
}

/* An integer-list attribute that must be present with the INTS type. */
static pc_status req_ints(ref_ctx *ctx, const char *name, const int64_t **v, size_t *n)
{
    const pc_attr *a = pc_node_attr(ctx->node, name);
    if (!a) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute %s is required", name);
    if (a->type != PC_ATTR_INTS)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute %s must be a list of ints, got %s", name,
                        pc_attr_type_name(a->type));
    *v = a->ints;
    *n = a->n;
    return PC_OK;
}

static pc_status req_int(ref_ctx *ctx, const char *name, int64_t *v)
{
    const pc_attr *a = pc_node_attr(ctx->node, name);
    if (!a) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute %s is required", name);
    if (a->type != PC_ATTR_INT)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute %s must be an int, got %s", name,
                        pc_attr_type_name(a->type));
    *v = a->i;
    return PC_OK;
}

static bool bytes_is(const pc_bytes *b, const char *s)
{
    size_t n = strlen(s);
    return b->len == n && (n == 0 || memcmp(b->data, s, n) == 0);
}

static bool item_equal(const tfidf *p, const pc_data *x, uint64_t xi, size_t pi)
{
    if (p->pool_s) {
        const pc_bytes *a = &((const pc_bytes *)x->data)[xi], *b = &p->pool_s[pi];
        return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
    }
    return ref_get_i64(x, xi) == p->pool_i[pi];
}

/* Do pool n-grams at item offsets a and b (both of length n) hold the same items? */
static bool pool_gram_equal(const tfidf *p, size_t a, size_t b, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        if (p->pool_s) {
            const pc_bytes *u = &p->pool_s[a + j], *v = &p->pool_s[b + j];
            if (u->len != v->len || (u->len && memcmp(u->data, v->data, u->len) != 0)) return false;
        } else if (p->pool_i[a + j] != p->pool_i[b + j]) {
            return false;
        }
    }
    return true;
}

/* Reads and checks every attribute; the pool layout (ngram_counts as CSR starts, ngram_indexes parallel to
 * the pool's n-grams) must be consistent before any row is read. */
static pc_status tfidf_params(ref_ctx *ctx, const pc_data *x, tfidf *p)
{
    memset(p, 0, sizeof *p);
    pc_status st;
    if ((st = req_int(ctx, "min_gram_length", &p->min_n)) != PC_OK) return st;
    if ((st = req_int(ctx, "max_gram_length", &p->max_n)) != PC_OK) return st;
    if ((st = req_int(ctx, "max_skip_count", &p->max_skip)) != PC_OK) return st;
    if (p->min_n < 1)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute min_gram_length must be >= 1, got %lld",
                        (long long)p->min_n);
    if (p->max_n < p->min_n)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "attribute max_gram_length (%lld) must be >= min_gram_length (%lld)",
                        (long long)p->max_n, (long long)p->min_n);
    if (p->max_skip < 0)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute max_skip_count must be >= 0, got %lld",
                        (long long)p->max_skip);

    const pc_attr *m = pc_node_attr(ctx->node, "mode");
    if (!m) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute mode is required");
    if (m->type != PC_ATTR_STRING)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute mode must be a string, got %s",
                        pc_attr_type_name(m->type));
    if (bytes_is(&m->s, "TF"))
        p->mode = TFIDF_TF;
    else if (bytes_is(&m->s, "IDF"))
        p->mode = TFIDF_IDF;
    else if (bytes_is(&m->s, "TFIDF"))
        p->mode = TFIDF_TFIDF;
    else
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute mode must be TF, IDF or TFIDF, got \"%.*s\"",
                        (int)(m->s.len > 64 ? 64 : m->s.len), m->s.data ? (const char *)m->s.data : "");

    const pc_attr *pi = pc_node_attr(ctx->node, "pool_int64s"), *ps = pc_node_attr(ctx->node, "pool_strings");
    if (pi && ps)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attributes pool_int64s and pool_strings are both set");
    if (!pi && !ps)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "one of the attributes pool_int64s or pool_strings is required");
    if (pi) {
        if (pi->type != PC_ATTR_INTS)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute pool_int64s must be a list of ints, got %s",
                            pc_attr_type_name(pi->type));
        p->pool_i = pi->ints;
        p->pool_len = pi->n;
        if (x->dtype != PC_DTYPE_INT32 && x->dtype != PC_DTYPE_INT64)
            return ref_fail(ctx, PC_ERR_TYPE, "input 0 must be int32 or int64 with pool_int64s, got %s",
                            pc_dtype_name(x->dtype));
    } else {
        if (ps->type != PC_ATTR_STRINGS)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute pool_strings must be a list of strings, got %s",
                            pc_attr_type_name(ps->type));
        p->pool_s = ps->strings;
        p->pool_len = ps->n;
        if (x->dtype != PC_DTYPE_STRING)
            return ref_fail(ctx, PC_ERR_TYPE, "input 0 must be a string tensor with pool_strings, got %s",
                            pc_dtype_name(x->dtype));
    }
    if (p->pool_len == 0)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute %s is empty", pi ? "pool_int64s" : "pool_strings");

    if ((st = req_ints(ctx, "ngram_counts", &p->counts, &p->n_counts)) != PC_OK) return st;
    if (p->n_counts == 0) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute ngram_counts is empty");
    if (p->counts[0] != 0)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "attribute ngram_counts must start at 0 (the 1-grams), got %lld",
                        (long long)p->counts[0]);
    size_t n_grams = 0;
    for (size_t k = 0; k < p->n_counts; k++) {
        int64_t lo = p->counts[k];
        int64_t hi = k + 1 < p->n_counts ? p->counts[k + 1] : (int64_t)p->pool_len;
        if (lo < 0 || (uint64_t)lo > p->pool_len || hi < lo)
            return ref_fail(
                ctx, PC_ERR_ATTRIBUTE,
                "attribute ngram_counts[%zu] = %lld is out of order or outside the pool (%zu items)", k,
                (long long)lo, p->pool_len);
        if ((uint64_t)(hi - lo) % (k + 1) != 0)
            return ref_fail(
                ctx, PC_ERR_ATTRIBUTE,
                "attribute ngram_counts: the %zu-gram section (pool items %lld..%lld) is not a whole "
                "number of %zu-grams",
                k + 1, (long long)lo, (long long)hi, k + 1);
        n_grams += (size_t)(hi - lo) / (k + 1);
    }

    if ((st = req_ints(ctx, "ngram_indexes", &p->indexes, &p->n_grams)) != PC_OK) return st;
    if (p->n_grams != n_grams)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "attribute ngram_indexes has %zu entries but the pool holds %zu n-grams", p->n_grams,
                        n_grams);
    int64_t hi = -1;
    for (size_t g = 0; g < p->n_grams; g++) {
        if (p->indexes[g] < 0)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute ngram_indexes[%zu] = %lld is negative", g,
                            (long long)p->indexes[g]);
        if (p->indexes[g] > hi) hi = p->indexes[g];
    }
    if ((uint64_t)hi >= REF_MAX_ELEMENTS)
        return ref_fail(ctx, PC_ERR_BUDGET, "attribute ngram_indexes: output size %lld + 1 is too large",
                        (long long)hi);
    p->out_size = hi + 1;

    size_t n_w = 0;
    const pc_attr *w = pc_node_attr(ctx->node, "weights");
    if (w) {
        if (w->type != PC_ATTR_FLOATS)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute weights must be a list of floats, got %s",
                            pc_attr_type_name(w->type));
        n_w = w->n;
        if (n_w != p->n_grams)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute weights has %zu entries, ngram_indexes has %zu",
                            n_w, p->n_grams);
        if (p->mode != TFIDF_TF) p->weights = w->floats; /* weights only scale IDF and TFIDF */
    }

    return PC_OK;
}

/* A pool n-gram for the duplicate check: sorted by length, then items. */
typedef struct gram_ref {
    const tfidf *p;
    size_t off, n;
} gram_ref;

static int gram_cmp(const void *va, const void *vb)
{
    const gram_ref *a = va, *b = vb;
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    for (size_t j = 0; j < a->n; j++) {
        if (a->p->pool_s) {
            const pc_bytes *u = &a->p->pool_s[a->off + j], *v = &a->p->pool_s[b->off + j];
            size_t m = u->len < v->len ? u->len : v->len;
            int c = m ? memcmp(u->data, v->data, m) : 0;
            if (c) return c;
            if (u->len != v->len) return u->len < v->len ? -1 : 1;
        } else {
            int64_t u = a->p->pool_i[a->off + j], v = a->p->pool_i[b->off + j];
            if (u != v) return u < v ? -1 : 1;
        }
    }
    return a->off < b->off ? -1 : a->off > b->off; /* stable order: the report names the first two copies */
}

/* Rejects a pool holding the same counted n-gram twice (which entry gets the count would be undefined; ONNX
 * Runtime rejects such pools too), and in IDF/TFIDF two n-grams sharing an output coordinate (TF adds their
 * counts, but the spec truncates and scales per pool n-gram while ONNX Runtime truncates the summed
 * coordinate and scales by coordinate: ambiguous, so unsupported). Sort and marker based: pools can hold 10^5
 * n-grams. */
static pc_status tfidf_check_unique(ref_ctx *ctx, const tfidf *p)
{
    gram_ref *refs = malloc(p->n_grams * sizeof *refs);
    if (!refs) return ref_fail(ctx, PC_ERR_NOMEM, "out of memory checking %zu pool n-grams", p->n_grams);
    size_t m = 0;
    for (size_t k = 0; k < p->n_counts; k++) {
        size_t n = k + 1, lo = (size_t)p->counts[k], end = seg_end(p, k);
        if ((int64_t)n < p->min_n || (int64_t)n > p->max_n) continue; /* never counted: duplicates harmless */
        for (size_t a = lo; a < end; a += n)
            refs[m++] = (gram_ref){p, a, n};
    }
    qsort(refs, m, sizeof *refs, gram_cmp);
    for (size_t i = 1; i < m; i++) {
        if (refs[i].n == refs[i - 1].n && pool_gram_equal(p, refs[i - 1].off, refs[i].off, refs[i].n)) {
            size_t n = refs[i].n, a = refs[i - 1].off, b = refs[i].off;
            free(refs);
            return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                            "attribute %s holds the same %zu-gram twice (at items %zu and %zu)",
                            p->pool_s ? "pool_strings" : "pool_int64s", n, a, b);
        }
    }
    free(refs);
    if (p->mode == TFIDF_TF) return PC_OK;

    /* first[j]: 1 + the n-gram that owns coordinate j (0 = none yet). out_size is bounded like the output. */
    size_t *first = calloc((size_t)p->out_size, sizeof *first);
    if (!first) return ref_fail(ctx, PC_ERR_NOMEM, "out of memory checking ngram_indexes");
    for (size_t g = 0; g < p->n_grams; g++) {
        size_t j = (size_t)p->indexes[g];
        if (first[j]) {
            size_t a = first[j] - 1;
            free(first);
            return ref_unsupported(
                ctx,
                "mode IDF/TFIDF with two n-grams at output coordinate %zu (ngram_indexes[%zu] "
                "and [%zu]): the spec and ONNX Runtime weigh them differently",
                j, a, g);
        }
        first[j] = g + 1;
    }
    free(first);
    return PC_OK;
}

/* Counts, into cnt[n-gram], the pool n-grams found in row r (items x[r*c .. r*c + c)). */
static void count_row(const tfidf *p, const pc_data *x, uint64_t row0, uint64_t c, const size_t *base,
                      double *cnt)
{
    /* Longest length worth trying: the pool has none longer than n_counts, the row none longer than c. */
    uint64_t max_n = (uint64_t)p->max_n;
    if (max_n > p->n_counts) max_n = p->n_counts;
    if (max_n > c) max_n = c;
    for (uint64_t n = (uint64_t)p->min_n; n <= max_n; n++) {
        size_t k = (size_t)(n - 1), lo = (size_t)p->counts[k], end = seg_end(p, k);
        if (lo == end) continue;
        /* A unigram has no distance: once per position. Longer n-grams: distances up to max_skip_count + 1
         * whose span (n - 1) * d still fits in the row (bounded by division, so no overflow). */
        uint64_t d_hi = 1;
        if (n > 1) {
            d_hi = (c - 1) / (n - 1);
            if ((uint64_t)p->max_skip < d_hi) d_hi = (uint64_t)p->max_skip + 1;
        }
        for (uint64_t d = 1; d <= d_hi; d++) {
            uint64_t span = (n - 1) * d;
            for (uint64_t s = 0; s + span < c; s++) {
                for (size_t a = lo; a < end; a += n) {
                    uint64_t j = 0;
                    while (j < n && item_equal(p, x, row0 + s + j * d, a + j))
                        j++;
                    if (j == n) cnt[base[k] + (a - lo) / n] += 1.0;
                }
            }
        }
    }
}

static pc_status op_TfIdfVectorizer(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                    uint32_t n_out)
{
    (void)n_out;
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if (x->dtype != PC_DTYPE_INT32 && x->dtype != PC_DTYPE_INT64 && x->dtype != PC_DTYPE_STRING)
        return ref_fail(ctx, PC_ERR_TYPE, "input 0 must be int32, int64 or string, got %s",
                        pc_dtype_name(x->dtype));
    if (x->rank != 1 && x->rank != 2)
        return ref_fail(ctx, PC_ERR_SHAPE, "input 0 must have rank 1 [C] or 2 [N, C], got rank %d",
                        (int)x->rank);
    tfidf p;
    if ((st = tfidf_params(ctx, x, &p)) != PC_OK || (st = tfidf_check_unique(ctx, &p)) != PC_OK) return st;

    uint64_t rows = x->rank == 2 ? (uint64_t)x->dims[0] : 1, c = (uint64_t)x->dims[x->rank - 1];
    int64_t ydims[2] = {x->rank == 2 ? x->dims[0] : p.out_size, p.out_size};
    pc_data *y = ref_new_tensor(ctx, PC_DTYPE_FLOAT, x->rank, ydims);
    if (!y) return ctx->err->status;

    /* base[k]: index of the first (k+1)-gram among the pool's n-grams; cnt: one row's count per pool n-gram.
     */
    size_t *base = malloc(p.n_counts * sizeof *base);
    double *cnt = malloc(p.n_grams * sizeof *cnt);
    if (!base || !cnt) {
        free(base);
        free(cnt);
        pc_data_unref(y);
        return ref_fail(ctx, PC_ERR_NOMEM, "out of memory for %zu n-gram counts", p.n_grams);
    }
    for (size_t k = 0, g = 0; k < p.n_counts; k++) {
        base[k] = g;
        g += (seg_end(&p, k) - (size_t)p.counts[k]) / (k + 1);
    }

    for (uint64_t r = 0; r < rows; r++) {
        memset(cnt, 0, p.n_grams * sizeof *cnt);
        count_row(&p, x, r * c, c, base, cnt);
        uint64_t y0 = r * (uint64_t)p.out_size;
        for (size_t g = 0; g < p.n_grams; g++) {
            double w = p.weights ? (double)p.weights[g] : 1.0; /* spec: weight i belongs to pool n-gram i */
            double v = p.mode == TFIDF_TF    ? cnt[g]
                       : p.mode == TFIDF_IDF ? (cnt[g] > 0 ? w : 0.0)
                                             : cnt[g] * w;
            uint64_t yi = y0 + (uint64_t)p.indexes[g];
            /* TF adds counts of n-grams sharing a coordinate; in IDF/TFIDF coordinates are unique (checked).
             */
            ref_set_f64(y, yi, ref_get_f64(y, yi) + v);
        }
    }
    free(base);
    free(cnt);
    out[0] = y;
    return PC_OK;
}

REF_OP_TABLE_DEFINE(ref_ops_text, {"", "TfIdfVectorizer", op_TfIdfVectorizer})
