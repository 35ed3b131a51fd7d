/* fuzz_onnx_load — libFuzzer target for the ONNX loader and saver.
 *
 * Property checked for every input:
 *   1. pc_model_load_bytes never crashes, leaks or trips a sanitizer, whatever the bytes;
 *   2. if it accepts the input, the model round-trips: save -> reload succeeds -> the reloaded model is
 *      pc_model_equal to the first one -> saving the reloaded model gives byte-identical output.
 * A violated round-trip property is a bug in passcheck (the loader accepts what the saver cannot express, or
 * the saver writes what the loader rejects), so it aborts with a message; libFuzzer then records the input.
 *
 * Deterministic, no I/O, no state carried between inputs. Built two ways: with -fsanitize=fuzzer (libFuzzer's
 * main) and with fuzz/standalone_main.c (replays files; used by ctest in every build configuration).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/passcheck.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Limits that keep one input well inside libFuzzer's -rss_limit_mb (2048 by default). */
static void fuzz_options(pc_load_options *opts)
{
    pc_load_options_default(opts);
    opts->memory_budget = (size_t)256 << 20;
    opts->max_messages = (uint64_t)1 << 20;
}

static void die(const char *what, const pc_error *err, size_t size)
{
    fprintf(stderr, "fuzz_onnx_load: BUG: %s (input %zu bytes)", what, size);
    if (err) fprintf(stderr, ": %s: %s", pc_status_name(err->status), err->message);
    fputc('\n', stderr);
    fflush(stderr);
    abort();
}

/* An allocation failure while saving is a resource problem, not a round-trip bug. */
static int save_or_die(const pc_model *m, uint8_t **out, size_t *out_size, const char *what, size_t size)
{
    pc_error err;
    pc_error_clear(&err);
    *out = NULL;
    *out_size = 0;
    pc_status st = pc_model_save_bytes(m, out, out_size, &err);
    if (st == PC_ERR_NOMEM) return 0;
    if (st != PC_OK) die(what, &err, size);
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pc_load_options opts;
    fuzz_options(&opts);
    pc_error err;
    pc_error_clear(&err);

    pc_model *m1 = NULL;
    if (pc_model_load_bytes(data, size, &opts, &m1, &err) != PC_OK) {
        if (m1) die("load failed but returned a model", &err, size);
        if (err.status == PC_OK) die("load failed without setting an error status", NULL, size);
        return 0; /* rejected input: fine, as long as nothing above tripped a sanitizer */
    }
    if (!m1) die("load returned PC_OK without a model", NULL, size);

    uint8_t *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0;
    pc_model *m2 = NULL;
    if (!save_or_die(m1, &b1, &n1, "saving an accepted model failed", size)) goto done;

    pc_error_clear(&err);
    if (pc_model_load_bytes(b1, n1, &opts, &m2, &err) != PC_OK)
        die("a saved model does not reload", &err, size);

    char diff[1024];
    diff[0] = '\0';
    if (!pc_model_equal(m1, m2, diff, sizeof diff)) {
        fprintf(stderr, "fuzz_onnx_load: BUG: the reloaded model differs from the loaded one: %s\n", diff);
        die("round trip changed the model", NULL, size);
    }

    if (!save_or_die(m2, &b2, &n2, "saving a reloaded model failed", size)) goto done;
    if (n1 != n2 || (n1 && memcmp(b1, b2, n1) != 0)) {
        size_t at = 0;
        while (at < n1 && at < n2 && b1[at] == b2[at])
            at++;
        fprintf(stderr,
                "fuzz_onnx_load: BUG: save is not stable: %zu bytes then %zu bytes, first difference at "
                "offset %zu\n",
                n1, n2, at);
        die("saving the reloaded model gave different bytes", NULL, size);
    }

done:
    free(b2);
    free(b1);
    pc_model_free(m2);
    pc_model_free(m1);
    return 0;
}
