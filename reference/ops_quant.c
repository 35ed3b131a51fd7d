/* Reference ops: quant family (being written). */
#include "ref_internal.h"

const ref_op ref_ops_quant[1] = {{"", "", NULL}};
const size_t ref_ops_quant_count = 0;
