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

/* pc_data_int_at: each integer type read back with its sign (int4 nibbles, low first), uint64 and floats
 * refused, an index past the end refused. */
static void test_int_at(void)
{
    pc_error err;
    int64_t v = 0, d3[1] = {3};
    pc_data *i8 = pc_data_new_tensor(PC_DTYPE_INT8, 1, d3, &err);
    ((int8_t *)i8->data)[2] = -128;
    CHECK(pc_data_int_at(i8, 2, &v) && v == -128);
    CHECK(!pc_data_int_at(i8, 3, &v));
    pc_data *u16 = pc_data_new_tensor(PC_DTYPE_UINT16, 1, d3, &err);
    ((uint16_t *)u16->data)[1] = 65535;
    CHECK(pc_data_int_at(u16, 1, &v) && v == 65535);
    pc_data *u32 = pc_data_new_tensor(PC_DTYPE_UINT32, 1, d3, &err);
    ((uint32_t *)u32->data)[0] = UINT32_MAX;
    CHECK(pc_data_int_at(u32, 0, &v) && v == (int64_t)UINT32_MAX);
    pc_data *i4 = pc_data_new_tensor(PC_DTYPE_INT4, 1, d3, &err);
    ((uint8_t *)i4->data)[0] = 0x9f; /* element 0 = 0xf = -1, element 1 = 0x9 = -7 */
    CHECK(pc_data_int_at(i4, 0, &v) && v == -1);
    CHECK(pc_data_int_at(i4, 1, &v) && v == -7);
    pc_data *u64 = pc_data_new_tensor(PC_DTYPE_UINT64, 1, d3, &err),
            *f = pc_data_new_tensor(PC_DTYPE_FLOAT, 1, d3, &err);
    CHECK(!pc_data_int_at(u64, 0, &v) && !pc_data_int_at(f, 0, &v) && !pc_data_int_at(NULL, 0, &v));
    pc_data *all[] = {i8, u16, u32, i4, u64, f};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        pc_data_unref(all[i]);
}

int main(void)
{
    test_values();
    test_int_at();
    test_refusals();
    return pc_test_finish("test_ir_data");
}
