/* Reference ops: rnn family (being written). */
#include "ref_internal.h"

const ref_op ref_ops_rnn[1] = {{"", "", NULL}};
const size_t ref_ops_rnn_count = 0;
