/* pc_arena (core/base/arena.c): blocks are 16-byte aligned, zeroed by pc_arena_alloc, distinct and intact
 * across chunk growth and large requests; strings copy exactly. Under AddressSanitizer the chunk memory not
 * yet handed out is poisoned, so the byte after the newest block is (a read past a node's input list is
 * reported instead of served from unused memory), and the block itself is not. */
#include <stdint.h>
#include <string.h>

#include "core/base/base_internal.h"
#include "tests/test_util.h"

static void test_blocks(void)
{
    pc_mem mem;
    memset(&mem, 0, sizeof mem);
    pc_arena a;
    pc_arena_init(&a, &mem);
    enum { N = 3000 };
    static unsigned char *blocks[N];
    for (int i = 0; i < N; i++) {
        size_t size = (size_t)(i % 61) + (i % 997 == 0 ? 20000 : 0); /* some larger than a chunk */
        blocks[i] = pc_arena_alloc(&a, size);
        CHECK_MSG(blocks[i] != NULL, "block %d of %zu bytes", i, size);
        if (!blocks[i]) break;
        CHECK_MSG((uintptr_t)blocks[i] % 16 == 0, "block %d is not 16-byte aligned", i);
        for (size_t k = 0; k < size; k++)
            CHECK_MSG(blocks[i][k] == 0, "block %d byte %zu not zeroed", i, k);
        memset(blocks[i], i & 0xff, size);
#ifdef PC_ARENA_ASAN
        CHECK_MSG(!__asan_region_is_poisoned(blocks[i], size), "block %d is poisoned", i);
        CHECK_MSG(__asan_address_is_poisoned(blocks[i] + size),
                  "the byte after block %d (%zu bytes) is readable", i, size);
#endif
    }
    for (int i = 0; i < N; i++) {
        size_t size = (size_t)(i % 61) + (i % 997 == 0 ? 20000 : 0);
        for (size_t k = 0; k < size; k++)
            if (blocks[i][k] != (unsigned char)(i & 0xff)) {
                CHECK_MSG(0, "block %d byte %zu overwritten", i, k);
                break;
            }
    }
    char *s = pc_arena_strndup(&a, "layer_ann", 5);
    CHECK(s && strcmp(s, "layer") == 0);
    char *p = pc_arena_printf(&a, "%s.%d", "block", 12);
    CHECK(p && strcmp(p, "block.12") == 0);
#ifdef PC_ARENA_ASAN
    CHECK(s && __asan_address_is_poisoned(s + 6));
    printf("test_base_arena: AddressSanitizer build, poisoning checked\n");
#endif
    pc_arena_free(&a);
    CHECK(mem.used == 0);
}

int main(void)
{
    test_blocks();
    return pc_test_finish("test_base_arena");
}
