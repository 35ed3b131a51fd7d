/* Internals of core/ep: the registry's layout (shared by the built-ins, the EP-file reader and the list
 * parser) and the partition bookkeeping the partitioner and its tests share. */
#ifndef PC_EP_INTERNAL_H
#define PC_EP_INTERNAL_H

#include "core/internal.h"

struct pc_ep_registry {
    pc_mem mem;
    pc_arena arena; /* every EP, op table and string the registry hands out */
    uint32_t n_eps, cap_eps;
    const pc_ep **eps; /* registration order: built-ins first */
};

/* Appends eps to the registry (malloc'ed list grows; the EPs themselves live in the arena). */
pc_status pc_ep_registry_add(pc_ep_registry *reg, const pc_ep *const *eps, uint32_t n, pc_error *err);

/* The built-in EPs (static data, never freed). */
const pc_ep *pc_ep_builtin_cpu(void);
const pc_ep *pc_ep_builtin_nhwc(void);

/* "float" → PC_DTYPE_FLOAT; false for unknown names. */
bool pc_ep_dtype_from_name(const char *name, size_t len, pc_dtype *out);
/* "nchw" / "nhwc" / "blocked". */
const char *pc_layout_name(pc_layout layout);

/* pc_ep_claims_node as if the node were in `domain`, imported by the model at `opset` (-1: not imported): the
 * layout transformer asks whether the EP would claim a node's NHWC form before moving it. */
bool pc_ep_claims_node_as(const pc_ep *ep, const pc_node *node, const char *domain, int64_t opset, char *why,
                          size_t why_size);

#endif
