/* Reference ops: misc family (being written). */
#include "ref_internal.h"

const ref_op ref_ops_misc[1] = {{"", "", NULL}};
const size_t ref_ops_misc_count = 0;
