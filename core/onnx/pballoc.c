/* protobuf-c allocations go through the model's pc_mem: unpacking is bounded by the same byte budget as the
 * rest of the model, and tensor payloads allocated here can be adopted by the IR without a second copy. */
#include "onnx_internal.h"

static void *pballoc_alloc(void *data, size_t size)
{
    return pc_mem_alloc(data, size);
}

static void pballoc_free(void *data, void *ptr)
{
    pc_mem_free(data, ptr);
}

void pc_pb_allocator_init(ProtobufCAllocator *allocator, pc_mem *mem)
{
    allocator->alloc = pballoc_alloc;
    allocator->free = pballoc_free;
    allocator->allocator_data = mem;
}
