/* Reference ops: control family (being written). */
#include "ref_internal.h"

const ref_op ref_ops_control[1] = {{"", "", NULL}};
const size_t ref_ops_control_count = 0;
