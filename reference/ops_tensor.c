/* Reference ops: tensor family (being written). */
#include "ref_internal.h"

const ref_op ref_ops_tensor[1] = {{"", "", NULL}};
const size_t ref_ops_tensor_count = 0;
