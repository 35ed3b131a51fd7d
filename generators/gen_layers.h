/* gen_layers.h — what the annotation and EP layers (gen_annotated.c, gen_eps.c) share beyond gen.h. */
#ifndef PC_GEN_LAYERS_H
#define PC_GEN_LAYERS_H

#include "generators/gen.h"

/* After the EP layer replaced g->out->ep_list: redraws the EP of every layer rule over the new list, so the
 * assignment string only names EPs the case has (the parser rejects others). No-op without rules. */
pc_status pc_gen_retarget_rules(pc_gen *g, pc_error *err);

#endif
