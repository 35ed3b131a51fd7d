/* Element-type facts: names and storage widths, one table indexed by the ONNX DataType value. */
#include "core/passcheck.h"

static const struct {
    const char *name;
    unsigned bits;
} dtype_info[] = {
#define PC_X_INFO(code, value, name, bits) [value] = {name, bits},
    PC_DTYPE_LIST(PC_X_INFO)
#undef PC_X_INFO
};
_Static_assert(sizeof dtype_info / sizeof dtype_info[0] == PC_DTYPE_COUNT, "dtype table covers every type");

bool pc_dtype_is_valid(int32_t value)
{
    return value > 0 && value < PC_DTYPE_COUNT;
}

const char *pc_dtype_name(pc_dtype dtype)
{
    if ((unsigned)dtype >= PC_DTYPE_COUNT) return "?";
    return dtype_info[dtype].name;
}

unsigned pc_dtype_bits(pc_dtype dtype)
{
    if ((unsigned)dtype >= PC_DTYPE_COUNT) return 0;
    return dtype_info[dtype].bits;
}

bool pc_dtype_storage_bytes(pc_dtype dtype, uint64_t n_elements, size_t *out)
{
    unsigned bits = pc_dtype_bits(dtype);
    if (bits == 0) return false;
    uint64_t total_bits;
    if (!pc_u64_mul(n_elements, bits, &total_bits)) return false;
    uint64_t bytes = total_bits / 8 + (total_bits % 8 != 0);
    if (bytes > SIZE_MAX) return false;
    *out = (size_t)bytes;
    return true;
}
