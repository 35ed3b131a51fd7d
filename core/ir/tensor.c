/* Tensors: creation with checked sizes, and equality. */
#include <string.h>

#include "core/ir/ir_internal.h"

pc_tensor *pc_tensor_create(pc_model *model, const char *name, pc_dtype dtype, int32_t rank,
                            const int64_t *dims, pc_error *err)
{
    if (!pc_dtype_is_valid((int32_t)dtype)) {
        pc_error_set(err, PC_ERR_DTYPE, "tensor '%s': invalid element type %d", name ? name : "", (int)dtype);
        return NULL;
    }
    if (rank < 0 || rank > PC_MAX_RANK) {
        pc_error_set(err, PC_ERR_BUDGET, "tensor '%s': rank %d outside 0..%d", name ? name : "", (int)rank,
                     PC_MAX_RANK);
        return NULL;
    }
    uint64_t count = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] < 0) {
            pc_error_set(err, PC_ERR_NEGATIVE_DIM, "tensor '%s': dimension %d is negative (%lld)",
                         name ? name : "", (int)i, (long long)dims[i]);
            return NULL;
        }
        if (!pc_u64_mul(count, (uint64_t)dims[i], &count)) {
            pc_error_set(err, PC_ERR_OVERFLOW, "tensor '%s': element count overflows 64 bits",
                         name ? name : "");
            return NULL;
        }
    }
    size_t bytes;
    if (dtype == PC_DTYPE_STRING) {
        if (count > SIZE_MAX || !pc_size_mul((size_t)count, sizeof(pc_bytes), &bytes)) {
            pc_error_set(err, PC_ERR_OVERFLOW, "tensor '%s': size overflows", name ? name : "");
            return NULL;
        }
    } else if (!pc_dtype_storage_bytes(dtype, count, &bytes)) {
        pc_error_set(err, PC_ERR_OVERFLOW, "tensor '%s': byte size overflows", name ? name : "");
        return NULL;
    }
    pc_tensor *t = pc_arena_alloc(&model->arena, sizeof *t);
    int64_t *d = rank ? pc_arena_array(&model->arena, (size_t)rank, sizeof *d) : NULL;
    if (!t || (rank && !d)) {
        pc_model_alloc_error(model, err, "a tensor");
        return NULL;
    }
    if (rank) memcpy(d, dims, (size_t)rank * sizeof *d);
    t->name = pc_arena_strdup(&model->arena, name);
    if (name && !t->name) {
        pc_model_alloc_error(model, err, "a tensor's name");
        return NULL;
    }
    t->dtype = dtype;
    t->rank = rank;
    t->dims = d;
    t->n_elements = count;
    t->n_bytes = bytes;
    t->data = pc_mem_calloc(&model->mem, bytes ? bytes : 1, 1);
    if (!t->data) {
        pc_model_alloc_error(model, err, "tensor data");
        return NULL;
    }
    if (pc_model_track_tensor(model, t, err) != PC_OK) {
        pc_mem_free(&model->mem, t->data);
        t->data = NULL;
        return NULL;
    }
    return t;
}

bool pc_tensor_equal(const pc_tensor *a, const pc_tensor *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank || a->n_elements != b->n_elements) return false;
    if ((a->name == NULL) != (b->name == NULL) || (a->name && strcmp(a->name, b->name) != 0)) return false;
    for (int32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    if (a->dtype == PC_DTYPE_STRING) {
        const pc_bytes *x = a->data, *y = b->data;
        for (uint64_t i = 0; i < a->n_elements; i++)
            if (x[i].len != y[i].len || (x[i].len && memcmp(x[i].data, y[i].data, x[i].len) != 0))
                return false;
        return true;
    }
    return a->n_bytes == b->n_bytes && (a->n_bytes == 0 || memcmp(a->data, b->data, a->n_bytes) == 0);
}
