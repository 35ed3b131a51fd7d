/* Runtime values (pc_data): reference-counted tensors, sequences and optionals that executors pass around. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/passcheck.h"

/* A value and its rank's dims in one allocation: the reference executor makes a value per node output per
 * run, and the harness runs it several times per case. dims points into the block (never freed alone). rank
 * is at most PC_MAX_RANK (checked by the callers). */
typedef struct data_block {
    pc_data d;
    int64_t dims[];
} data_block;

static pc_data *data_alloc(pc_type_kind kind, int32_t rank, pc_error *err)
{
    data_block *b = calloc(1, sizeof *b + (size_t)rank * sizeof b->dims[0]);
    if (!b) {
        pc_error_set(err, PC_ERR_NOMEM, "out of memory allocating a runtime value");
        return NULL;
    }
    pc_data *d = &b->d;
    d->kind = kind;
    d->refs = 1;
    d->dims = b->dims;
    return d;
}

pc_data *pc_data_new_tensor(pc_dtype dtype, int32_t rank, const int64_t *dims, pc_error *err)
{
    if (!pc_dtype_is_valid((int32_t)dtype)) {
        pc_error_set(err, PC_ERR_DTYPE, "cannot create a tensor of element type %d", (int)dtype);
        return NULL;
    }
    if (rank < 0 || rank > PC_MAX_RANK) {
        pc_error_set(err, PC_ERR_ARITY, "cannot create a tensor of rank %d (limit %d)", (int)rank,
                     PC_MAX_RANK);
        return NULL;
    }
    uint64_t n = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] < 0) {
            pc_error_set(err, PC_ERR_NEGATIVE_DIM, "cannot create a tensor with dimension %d = %" PRId64,
                         (int)i, dims[i]);
            return NULL;
        }
        if (dims[i] && n > UINT64_MAX / (uint64_t)dims[i]) {
            pc_error_set(err, PC_ERR_OVERFLOW, "tensor element count overflows");
            return NULL;
        }
        n *= (uint64_t)dims[i];
    }
    size_t bytes;
    if (dtype == PC_DTYPE_STRING) {
        if (n > SIZE_MAX / sizeof(pc_bytes)) {
            pc_error_set(err, PC_ERR_OVERFLOW, "string tensor of %" PRIu64 " elements is too large", n);
            return NULL;
        }
        bytes = (size_t)n * sizeof(pc_bytes);
    } else if (!pc_dtype_storage_bytes(dtype, n, &bytes)) {
        pc_error_set(err, PC_ERR_OVERFLOW, "tensor of %" PRIu64 " %s elements is too large", n,
                     pc_dtype_name(dtype));
        return NULL;
    }
    pc_data *d = data_alloc(PC_TYPE_TENSOR, rank, err);
    if (!d) return NULL;
    d->dtype = dtype;
    d->rank = rank;
    d->n_elements = n;
    d->n_bytes = bytes;
    d->data = calloc(bytes ? bytes : 1, 1);
    if (!d->data) {
        pc_data_unref(d);
        pc_error_set(err, PC_ERR_NOMEM, "out of memory allocating a %s tensor of %zu bytes",
                     pc_dtype_name(dtype), bytes);
        return NULL;
    }
    if (rank) memcpy(d->dims, dims, (size_t)rank * sizeof *dims);
    return d;
}

pc_data *pc_data_wrap_tensor(const pc_tensor *t, pc_error *err)
{
    if (t->rank < 0 || t->rank > PC_MAX_RANK) {
        pc_error_set(err, PC_ERR_ARITY, "cannot wrap tensor '%s' of rank %d (limit %d)",
                     t->name ? t->name : "", (int)t->rank, PC_MAX_RANK);
        return NULL;
    }
    pc_data *d = data_alloc(PC_TYPE_TENSOR, t->rank, err);
    if (!d) return NULL;
    d->dtype = t->dtype;
    d->rank = t->rank;
    d->n_elements = t->n_elements;
    d->n_bytes = t->n_bytes;
    d->data = t->data;
    d->borrowed = true;
    if (t->rank) memcpy(d->dims, t->dims, (size_t)t->rank * sizeof *t->dims);
    return d;
}

pc_data *pc_data_clone(const pc_data *src, pc_error *err)
{
    if (src->kind != PC_TYPE_TENSOR) {
        pc_data *d = data_alloc(src->kind, 0, err);
        if (!d) return NULL;
        d->dtype = src->dtype;
        d->item_kind = src->item_kind;
        if (src->n_items) {
            d->items = calloc(src->n_items, sizeof *d->items);
            if (!d->items) {
                pc_data_unref(d);
                pc_error_set(err, PC_ERR_NOMEM, "out of memory copying a sequence");
                return NULL;
            }
        }
        for (uint32_t i = 0; i < src->n_items; i++) {
            d->items[i] = pc_data_clone(src->items[i], err);
            if (!d->items[i]) {
                pc_data_unref(d);
                return NULL;
            }
            d->n_items = i + 1;
        }
        return d;
    }
    pc_data *d = pc_data_new_tensor(src->dtype, src->rank, src->dims, err);
    if (!d) return NULL;
    if (src->dtype != PC_DTYPE_STRING) {
        if (src->n_bytes) memcpy(d->data, src->data, src->n_bytes);
        return d;
    }
    const pc_bytes *from = src->data;
    pc_bytes *to = d->data;
    for (uint64_t i = 0; i < src->n_elements; i++) {
        if (!from[i].len) continue;
        to[i].data = malloc(from[i].len);
        if (!to[i].data) {
            pc_data_unref(d);
            pc_error_set(err, PC_ERR_NOMEM, "out of memory copying a string tensor");
            return NULL;
        }
        memcpy(to[i].data, from[i].data, from[i].len);
        to[i].len = from[i].len;
    }
    return d;
}

static pc_data *container_new(pc_type_kind kind, pc_type_kind item_kind, pc_dtype dtype, uint32_t n,
                              pc_data *const *items, pc_error *err)
{
    pc_data *d = data_alloc(kind, 0, err);
    if (!d) return NULL;
    d->item_kind = item_kind;
    d->dtype = dtype;
    if (n) {
        d->items = calloc(n, sizeof *d->items);
        if (!d->items) {
            pc_data_unref(d);
            pc_error_set(err, PC_ERR_NOMEM, "out of memory allocating a sequence of %u items", n);
            return NULL;
        }
        for (uint32_t i = 0; i < n; i++)
            d->items[i] = pc_data_ref(items[i]);
        d->n_items = n;
    }
    return d;
}

pc_data *pc_data_new_sequence(pc_type_kind item_kind, pc_dtype dtype, uint32_t n, pc_data *const *items,
                              pc_error *err)
{
    return container_new(PC_TYPE_SEQUENCE, item_kind, dtype, n, items, err);
}

pc_data *pc_data_new_optional(pc_type_kind item_kind, pc_dtype dtype, pc_data *item, pc_error *err)
{
    return container_new(PC_TYPE_OPTIONAL, item_kind, dtype, item ? 1 : 0, item ? &item : NULL, err);
}

pc_data *pc_data_ref(pc_data *d)
{
    if (d) d->refs++;
    return d;
}

void pc_data_unref(pc_data *d)
{
    if (!d || --d->refs) return;
    for (uint32_t i = 0; i < d->n_items; i++)
        pc_data_unref(d->items[i]);
    free(d->items);
    if (!d->borrowed) {
        if (d->dtype == PC_DTYPE_STRING && d->kind == PC_TYPE_TENSOR && d->data) {
            pc_bytes *s = d->data;
            for (uint64_t i = 0; i < d->n_elements; i++)
                free(s[i].data);
        }
        free(d->data);
    }
    free((data_block *)d);
}

const char *pc_data_describe(const pc_data *d, char *buf, size_t size)
{
    if (!size) return buf;
    buf[0] = 0;
    size_t used = 0;
#define PUT(...)                                                                                             \
    do {                                                                                                     \
        if (used < size) {                                                                                   \
            int k = snprintf(buf + used, size - used, __VA_ARGS__);                                          \
            if (k > 0) used += (size_t)k;                                                                    \
        }                                                                                                    \
    } while (0)
    if (!d) {
        PUT("(missing)");
        return buf;
    }
    switch (d->kind) {
    case PC_TYPE_TENSOR:
        PUT("%s[", pc_dtype_name(d->dtype));
        for (int32_t i = 0; i < d->rank; i++)
            PUT("%s%" PRId64, i ? "," : "", d->dims[i]);
        PUT("]");
        break;
    case PC_TYPE_SEQUENCE:
        PUT("seq(%s)[%u]", d->item_kind == PC_TYPE_SEQUENCE ? "seq" : pc_dtype_name(d->dtype), d->n_items);
        break;
    case PC_TYPE_OPTIONAL:
        if (d->n_items) {
            char inner[96];
            PUT("optional(%s)", pc_data_describe(d->items[0], inner, sizeof inner));
        } else {
            PUT("optional(none)");
        }
        break;
    default:
        PUT("(kind %d)", (int)d->kind);
    }
#undef PUT
    return buf;
}

bool pc_data_int_at(const pc_data *d, uint64_t k, int64_t *v)
{
    if (!d || d->kind != PC_TYPE_TENSOR || k >= d->n_elements) return false;
    switch (d->dtype) {
    case PC_DTYPE_INT8:
        *v = ((const int8_t *)d->data)[k];
        return true;
    case PC_DTYPE_UINT8:
        *v = ((const uint8_t *)d->data)[k];
        return true;
    case PC_DTYPE_INT16:
        *v = ((const int16_t *)d->data)[k];
        return true;
    case PC_DTYPE_UINT16:
        *v = ((const uint16_t *)d->data)[k];
        return true;
    case PC_DTYPE_INT32:
        *v = ((const int32_t *)d->data)[k];
        return true;
    case PC_DTYPE_UINT32:
        *v = ((const uint32_t *)d->data)[k];
        return true;
    case PC_DTYPE_INT64:
        *v = ((const int64_t *)d->data)[k];
        return true;
    case PC_DTYPE_INT4: { /* two per byte, the low nibble first */
        int x = (((const uint8_t *)d->data)[k / 2] >> (4 * (k % 2))) & 15;
        *v = x >= 8 ? x - 16 : x;
        return true;
    }
    case PC_DTYPE_UINT4:
        *v = (((const uint8_t *)d->data)[k / 2] >> (4 * (k % 2))) & 15;
        return true;
    default:
        return false;
    }
}
