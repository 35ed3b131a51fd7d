/* Reference ops: text family (being written). */
#include "ref_internal.h"

const ref_op ref_ops_text[1] = {{"", "", NULL}};
const size_t ref_ops_text_count = 0;
