/* Reference ops: internal family (being written). */
#include "ref_internal.h"

const ref_op ref_ops_internal[1] = {{"", "", NULL}};
const size_t ref_ops_internal_count = 0;
