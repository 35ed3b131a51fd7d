/* The runtime's memory planner (core/runtime/plan.c) on random lifetimes: no two buffers alive at the same
 * step share a byte (checked pairwise, independently of pc_rt_plan_valid), every offset is aligned, the arena
 * is at least the largest step's live total (no plan can do better) and at most the sum of all buffers, and a
 * chain whose buffers die at once reuses memory (peak = the two largest neighbours, the optimum). Also:
 * overflowing sizes are refused, and pc_rt_plan_valid catches a planted overlap. */
#include <string.h>

#include "core/runtime/rt_internal.h"
#include "generators/gen.h"
#include "tests/test_util.h"

static uint64_t rng = 0x853c49e6748fea9bull;

static uint32_t draw(uint32_t bound)
{
    return (uint32_t)(pc_splitmix64(&rng) % bound);
}

static bool overlap(const pc_rt_buffer *a, const pc_rt_buffer *b)
{
    bool live = a->def <= b->last && b->def <= a->last;
    bool bytes = a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
    return live && bytes && a->bytes && b->bytes;
}

int main(void)
{
    enum { N_CASES = 300, MAX_BUFS = 60 };
    pc_rt_buffer b[MAX_BUFS];
    int reused = 0;
    for (int t = 0; t < N_CASES; t++) {
        uint32_t n = 1 + draw(MAX_BUFS), steps = 1 + draw(40);
        size_t sum = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t def = draw(steps), life = draw(4) == 0 ? draw(steps) : draw(3);
            b[i] = (pc_rt_buffer){def, def + life < steps ? def + life : steps - 1,
                                  draw(5) == 0 ? 0 : 1 + draw(5000), 0};
        }
        size_t peak = pc_rt_plan_place(b, n);
        for (uint32_t i = 0; i < n; i++)
            sum += b[i].bytes; /* rounded by the planner */
        bool ok = peak != SIZE_MAX && peak <= sum;
        for (uint32_t i = 0; i < n && ok; i++) {
            ok = b[i].offset % PC_RT_ALIGN == 0 && b[i].offset + b[i].bytes <= peak;
            for (uint32_t j = i + 1; j < n && ok; j++)
                ok = !overlap(&b[i], &b[j]);
        }
        /* the largest live total over the steps is a lower bound for any plan */
        size_t bound = 0;
        for (uint32_t s = 0; s < steps; s++) {
            size_t live = 0;
            for (uint32_t i = 0; i < n; i++)
                if (b[i].def <= s && s <= b[i].last) live += b[i].bytes;
            if (live > bound) bound = live;
        }
        CHECK_MSG(ok && peak >= bound && pc_rt_plan_valid(b, n, peak),
                  "case %d: %u buffers over %u steps: peak %zu, live bound %zu, sum %zu", t, n, steps, peak,
                  bound, sum);
        reused += peak < sum;
    }
    CHECK_MSG(reused > N_CASES / 2, "memory was reused in only %d of %d cases", reused, N_CASES);

    /* a chain: buffer i is written at step i and read at step i + 1 */
    for (uint32_t i = 0; i < 10; i++)
        b[i] = (pc_rt_buffer){i, i + 1, 1000 + 64 * i, 0};
    size_t peak = pc_rt_plan_place(b, 10);
    /* optimal: the two largest neighbours (1536 + 1600 after rounding) are alive together at step 9 */
    CHECK_MSG(peak == 1536 + 1600 && pc_rt_plan_valid(b, 10, peak), "chain peak %zu", peak);

    /* overflow is refused, a planted overlap is caught */
    b[0] = (pc_rt_buffer){0, 1, SIZE_MAX - 10, 0};
    CHECK(pc_rt_plan_place(b, 1) == SIZE_MAX);
    b[0] = (pc_rt_buffer){0, 2, 128, 0};
    b[1] = (pc_rt_buffer){1, 3, 128, 64};
    CHECK(!pc_rt_plan_valid(b, 2, 256));
    b[1].offset = 128;
    CHECK(pc_rt_plan_valid(b, 2, 256));
    return pc_test_finish("test_runtime_plan");
}
