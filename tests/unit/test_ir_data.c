/* Runtime values (core/ir/data.c): a new tensor's shape, zeroed data and dims held in the value's own block;
 * a wrapped tensor reads the initializer in place; a clone owns its copy; and each refused shape or type
 * returns its named status with a message naming the limit. */
#include <string.h>

#include "core/internal.h"
#include "tests/test_util.h"

static void test_values(void)
{
    pc_error err;
    int64_t dims[3] = {2, 3, 4};
    pc_data *d = pc_data_new_tensor(PC_DTYPE_FLOAT, 3, dims, &err);
    CHECK_OK(d ? PC_OK : err.status, &err);
    if (!d) return;
    CHECK(d->rank == 3 && d->dims[0] == 2 && d->dims[1] == 3 && d->dims[2] == 4);
    CHECK(d->n_elements == 24 && d->n_bytes == 96 && !d->borrowed);
    dims[0] = 9; /* the value keeps its own copy of the dims */
    CHECK(d->dims[0] == 2);
    const float *f = d->data;
    for (int i = 0; i < 24; i++)
        CHECK(f[i] == 0.0f);
    ((float *)d->data)[5] = 1.5f;
    pc_data *c = pc_data_clone(d, &err);
    CHECK(c && c != d && c->data != d->data && c->dims != d->dims && c->n_bytes == 96 &&
          memcmp(c->data, d->data, 96) == 0 && memcmp(c->dims, d->dims, 3 * sizeof *c->dims) == 0);
    pc_data_unref(c);
    pc_data_unref(d);

    float payload[6] = {1, 2, 3, 4, 5, 6};
    int64_t tdims[2] = {2, 3};
    pc_tensor t = {.name = "w",
                   .dtype = PC_DTYPE_FLOAT,
                   .rank = 2,
                   .dims = tdims,
                   .n_elements = 6,
                   .n_bytes = sizeof payload,
                   .data = payload};
    pc_data *w = pc_data_wrap_tensor(&t, &err);
    CHECK(w && w->borrowed && w->data == payload && w->rank == 2 && w->dims[0] == 2 && w->dims[1] == 3 &&
          w->dims != tdims);
    pc_data_unref(w);
}

static void test_refusals(void)
{
    pc_error err;
    int64_t dims[PC_MAX_RANK + 1] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    CHECK(pc_data_new_tensor(PC_DTYPE_FLOAT, PC_MAX_RANK + 1, dims, &err) == NULL &&
          err.status == PC_ERR_ARITY);
    CHECK(pc_data_new_tensor((pc_dtype)999, 1, dims, &err) == NULL && err.status == PC_ERR_DTYPE);
    int64_t neg[1] = {-1};
    CHECK(pc_data_new_tensor(PC_DTYPE_FLOAT, 1, neg, &err) == NULL && err.status == PC_ERR_NEGATIVE_DIM);
    /* a tensor of more dims than a value holds is refused by name, not copied past the value's block */
    float one = 1;
    pc_tensor t = {.name = "deep",
                   .dtype = PC_DTYPE_FLOAT,
                   .rank = PC_MAX_RANK + 1,
                   .dims = dims,
                   .n_elements = 1,
                   .n_bytes = sizeof one,
                   .data = &one};
    CHECK(pc_data_wrap_tensor(&t, &err) == NULL && err.status == PC_ERR_ARITY);
    CHECK_MSG(strstr(err.message, "'deep'") && strstr(err.message, "rank 65"), "%s", err.message);
}

int main(void)
{
    test_values();
    test_refusals();
    return pc_test_finish("test_ir_data");
}
