/* pipeline_seed — writes a seed input for fuzz_pipeline (fuzz/fuzz_pipeline.c) from a case the suite knows.
 *
 *     fuzz_pipeline_seed OUT suite SEED INDEX     case INDEX of `passcheck suite --seed SEED` (its family
 * too) fuzz_pipeline_seed OUT random FAMILY SEED   a fresh case of FAMILY drawn from SEED fuzz_pipeline_seed
 * OUT db FILE.case         a failure database entry (passcheck-failures/.db/) fuzz_pipeline_seed OUT repro
 * DIR            a repro folder's case.txt (its choices: the case they regenerate, which is not repro.onnx
 * when graph_edited=1)
 *
 * The input is byte 0 = the family's index, then pc_choices_to_bytes of the choices. The tool regenerates the
 * case from the written bytes and checks it is the same model before writing OUT (atomically). The generator
 * config must be the fuzzer's: at most PC_FUZZ_MAX_NODES (default 12) ops, 256 elements, rank 5, no special
 * values; an entry with another config is refused. Exit status: 0 written, 2 usage error, 3 bad input, 4
 * internal error. corpus/README.md shows how corpus/pipeline/ is made with it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/passcheck.h"
#include "generators/gen.h"
#include "properties/runner/repro.h"
#include "properties/runner/suite.h"
#include "properties/runner/util.h"

static int usage(void)
{
    fprintf(stderr,
            "usage: fuzz_pipeline_seed OUT suite SEED INDEX | OUT random FAMILY SEED | OUT db FILE.case | "
            "OUT repro DIR\n");
    return 2;
}

static int fail(const char *what, const pc_error *err)
{
    fprintf(stderr, "fuzz_pipeline_seed: %s: %s\n", what, err->message);
    return err->status == PC_ERR_NOMEM || err->status == PC_ERR_INTERNAL ? 4 : 3;
}

static size_t family_index(const char *name)
{
    for (size_t i = 0; i < pc_gen_family_count(); i++)
        if (strcmp(pc_gen_family_at(i)->name, name) == 0) return i;
    return 0;
}

/* The model the bytes generate, serialized; NULL on failure (err set). */
static uint8_t *model_bytes(const pc_gen_config *gen, pc_choices *ch, size_t *n, pc_error *err)
{
    pc_case c;
    uint8_t *b = NULL;
    *n = 0;
    if (pc_case_generate(gen, ch, &c, err) != PC_OK) return NULL;
    if (pc_model_save_bytes(c.model, &b, n, err) != PC_OK) b = NULL;
    pc_case_free(&c);
    return b;
}

int main(int argc, char **argv)
{
    if (argc < 4) return usage();
    const char *out = argv[1], *mode = argv[2];
    pc_error err;
    pc_error_clear(&err);
    pc_gen_config gen;
    pc_gen_config_default(&gen);
    const char *mn = getenv("PC_FUZZ_MAX_NODES");
    uint64_t v = 0;
    if (mn && *mn) {
        if (!pc_parse_u64(mn, 1, 64, &v)) return usage();
        gen.max_nodes = (uint32_t)v;
    }
    pc_gen_config fuzz_gen = gen;
    uint32_t *choices = NULL;
    size_t n_choices = 0;
    pc_choices rec;
    memset(&rec, 0, sizeof rec);
    int rc = 0;

    if (strcmp(mode, "suite") == 0 || strcmp(mode, "random") == 0) {
        if (argc != 5) return usage();
        uint64_t seed, index = 0;
        bool suite = mode[0] == 's';
        if (!pc_parse_u64(argv[suite ? 3 : 4], 0, UINT64_MAX, &seed) ||
            (suite && !pc_parse_u64(argv[4], 0, UINT64_MAX, &index)))
            return usage();
        if (suite) {
            seed = pc_suite_case_seed(seed, index);
            gen.family = pc_gen_family_at(pc_suite_case_family(seed, (uint32_t)pc_gen_family_count()))->name;
        } else {
            const pc_gen_family *fam = pc_gen_family_find(argv[3]);
            if (!fam) {
                fprintf(stderr, "fuzz_pipeline_seed: unknown family '%s'\n", argv[3]);
                return 2;
            }
            gen.family = fam->name;
        }
        pc_choices_init_random(&rec, seed);
        pc_case c;
        if (pc_case_generate(&gen, &rec, &c, &err) != PC_OK) return fail("generating the case", &err);
        pc_case_free(&c);
        choices = rec.values;
        n_choices = rec.n;
    } else if (strcmp(mode, "db") == 0 || strcmp(mode, "repro") == 0) {
        if (argc != 4) return usage();
        pc_db_entry e;
        pc_repro_case r;
        bool db = mode[0] == 'd';
        if (db ? pc_db_entry_read_file(argv[3], &e, &err) != PC_OK
               : pc_repro_case_load(argv[3], &r, &err) != PC_OK)
            return fail(argv[3], &err);
        const pc_gen_config *g = db ? &e.gen : r.has_gen ? &r.gen : NULL;
        if (g && g->family && g->max_nodes == fuzz_gen.max_nodes &&
            g->max_elements == fuzz_gen.max_elements && g->max_rank == fuzz_gen.max_rank &&
            !g->allow_special) {
            gen.family = pc_gen_family_find(g->family)->name;
            const uint32_t *src = db ? e.choices : r.choices;
            n_choices = db ? e.n_choices : r.n_choices;
            choices = malloc((n_choices ? n_choices : 1) * sizeof *choices);
            if (choices && n_choices) memcpy(choices, src, n_choices * sizeof *choices);
            if (!choices) rc = 4;
        } else {
            fprintf(stderr,
                    "fuzz_pipeline_seed: %s: %s (the fuzzer generates with max_nodes %u, max_elements 256, "
                    "max_rank 5, no special values)\n",
                    argv[3], g ? "another generator config" : "not a generated case", fuzz_gen.max_nodes);
            rc = 3;
        }
        if (db)
            pc_db_entry_free(&e);
        else
            pc_repro_case_free(&r);
        if (rc) return rc;
    } else {
        return usage();
    }

    /* encode, then prove the bytes give the same model */
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (pc_choices_to_bytes(&gen, choices, n_choices, &bytes, &size, &err) != PC_OK) {
        rc = fail("encoding the choices", &err);
    } else {
        pc_choices a, b;
        pc_choices_init_replay(&a, choices, n_choices);
        pc_choices_init_bytes(&b, bytes, size);
        size_t na = 0, nb = 0;
        uint8_t *ma = model_bytes(&gen, &a, &na, &err);
        uint8_t *mb = ma ? model_bytes(&gen, &b, &nb, &err) : NULL;
        if (!ma || !mb) {
            rc = fail("regenerating the case", &err);
        } else if (na != nb || memcmp(ma, mb, na) != 0) {
            fprintf(stderr, "fuzz_pipeline_seed: BUG: the bytes do not regenerate the same model\n");
            rc = 4;
        } else {
            uint8_t *file = malloc(size + 1);
            if (!file) return 4;
            file[0] = (uint8_t)family_index(gen.family);
            if (size) memcpy(file + 1, bytes, size);
            if (pc_file_write_atomic_bytes(out, 0, file, size + 1, &err) != PC_OK) {
                rc = fail("writing the seed", &err);
            } else {
                printf("%s: family %s, %zu choices, %zu bytes\n", out, gen.family, n_choices, size + 1);
            }
            free(file);
        }
        free(ma);
        free(mb);
        pc_choices_free(&a);
        pc_choices_free(&b);
    }
    free(bytes);
    if (choices != rec.values) free(choices);
    pc_choices_free(&rec);
    return rc;
}
