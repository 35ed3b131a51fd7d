/* Reference ops: signal family (being written). */
#include "ref_internal.h"

const ref_op ref_ops_signal[1] = {{"", "", NULL}};
const size_t ref_ops_signal_count = 0;
