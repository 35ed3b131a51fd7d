/* The peer for bench/bench_suite.sh: the same cases the suite runs (same case seeds and families as
 * `passcheck suite --seed S`), each only generated and run once on the reference executor, in one process
 * without forks, the pass pipeline or any property. The suite's cases/second divided by this one is how much
 * of the bare "generate and evaluate" speed the whole harness keeps.
 *
 *   bench_suite_peer SEED CASES SHARD_INDEX SHARD_COUNT   ->  "peer SHARD cases N failed F seconds S"
 * Case i is run when i % SHARD_COUNT == SHARD_INDEX (run one process per core for the --jobs comparison). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "generators/gen.h"
#include "reference/reference.h"
#include "properties/runner/suite.h"
#include "properties/runner/util.h"

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: bench_suite_peer SEED CASES SHARD_INDEX SHARD_COUNT\n");
        return 2;
    }
    uint64_t seed = strtoull(argv[1], NULL, 0), n = strtoull(argv[2], NULL, 10);
    uint64_t si = strtoull(argv[3], NULL, 10), sn = strtoull(argv[4], NULL, 10);
    if (sn == 0 || si >= sn) {
        fprintf(stderr, "bench_suite_peer: bad shard %" PRIu64 "/%" PRIu64 "\n", si, sn);
        return 2;
    }
    uint32_t n_fam = (uint32_t)pc_gen_family_count();
    uint64_t done = 0, failed = 0;
    double t0 = pc_now_seconds();
    for (uint64_t i = si; i < n; i += sn) {
        uint64_t cs = pc_suite_case_seed(seed, i);
        pc_gen_config cfg;
        pc_gen_config_default(&cfg);
        cfg.family = pc_gen_family_at(pc_suite_case_family(cs, n_fam))->name;
        pc_choices ch;
        pc_choices_init_random(&ch, cs);
        pc_case c;
        pc_error err;
        pc_data **outs = NULL;
        if (pc_case_generate(&cfg, &ch, &c, &err) != PC_OK) {
            failed++;
        } else {
            if (pc_ref_run(c.model, c.n_inputs, c.inputs, &outs, &err) == PC_OK)
                pc_ref_free_outputs(c.model, outs);
            else
                failed++;
            pc_case_free(&c);
        }
        pc_choices_free(&ch);
        done++;
    }
    printf("peer %" PRIu64 "/%" PRIu64 " cases %" PRIu64 " failed %" PRIu64 " seconds %.6f\n", si, sn, done,
           failed, pc_now_seconds() - t0);
    return 0;
}
