/* Reference ops: reduce family (being written). */
#include "ref_internal.h"

const ref_op ref_ops_reduce[1] = {{"", "", NULL}};
const size_t ref_ops_reduce_count = 0;
