/* Reference ops: sequence family (being written). */
#include "ref_internal.h"

const ref_op ref_ops_sequence[1] = {{"", "", NULL}};
const size_t ref_ops_sequence_count = 0;
