/* Reference ops: nn family (being written). */
#include "ref_internal.h"

const ref_op ref_ops_nn[1] = {{"", "", NULL}};
const size_t ref_ops_nn_count = 0;
