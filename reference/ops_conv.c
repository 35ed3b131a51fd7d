/* Reference ops: conv family (being written). */
#include "ref_internal.h"

const ref_op ref_ops_conv[1] = {{"", "", NULL}};
const size_t ref_ops_conv_count = 0;
