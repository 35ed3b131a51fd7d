/* The loader fuzz targets' shared property (fuzz_onnx_load.c, fuzz_ort_load.c): whatever the bytes,
 * pc_model_load_bytes never crashes, leaks or trips a sanitizer, and an accepted model round-trips through
 * the ONNX saver (save -> reload -> pc_model_equal -> the second save byte-identical); with ort_too, also
 * through the ORT saver (save -> reload -> the second ORT save byte-identical; a model the format cannot
 * hold, UNSUPPORTED, is not judged). A violated property aborts with a message naming the step, so libFuzzer
 * records the input. Deterministic, no I/O, no state between inputs. */
#ifndef PC_FUZZ_ROUNDTRIP_H
#define PC_FUZZ_ROUNDTRIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/passcheck.h"

/* Limits that keep one input well inside libFuzzer's -rss_limit_mb (2048 by default). */
static void fuzz_options(pc_load_options *opts)
{
    pc_load_options_default(opts);
    opts->memory_budget = (size_t)256 << 20;
    opts->max_messages = (uint64_t)1 << 20;
}

static void fuzz_die(const char *target, const char *what, const pc_error *err, size_t size)
{
    fprintf(stderr, "%s: BUG: %s (input %zu bytes)", target, what, size);
    if (err) fprintf(stderr, ": %s: %s", pc_status_name(err->status), err->message);
    fputc('\n', stderr);
    fflush(stderr);
    abort();
}

/* Saves m (ONNX, or ORT with ort); 0 when the save fails for want of memory (a resource problem, not a round
 * trip bug) or, for ORT, when the format cannot hold the model. */
static int fuzz_save(const char *target, const pc_model *m, bool ort, uint8_t **out, size_t *out_size,
                     const char *what, size_t size)
{
    pc_error err;
    pc_error_clear(&err);
    *out = NULL;
    *out_size = 0;
    pc_status st =
        ort ? pc_model_save_ort_bytes(m, out, out_size, &err) : pc_model_save_bytes(m, out, out_size, &err);
    if (st == PC_ERR_NOMEM || (ort && st == PC_ERR_UNSUPPORTED)) return 0;
    if (st != PC_OK) fuzz_die(target, what, &err, size);
    return 1;
}

static void fuzz_same_bytes(const char *target, const uint8_t *b1, size_t n1, const uint8_t *b2, size_t n2,
                            const char *what, size_t size)
{
    if (n1 == n2 && (!n1 || memcmp(b1, b2, n1) == 0)) return;
    size_t at = 0;
    while (at < n1 && at < n2 && b1[at] == b2[at])
        at++;
    fprintf(stderr, "%s: BUG: save is not stable: %zu bytes then %zu bytes, first difference at offset %zu\n",
            target, n1, n2, at);
    fuzz_die(target, what, NULL, size);
}

static int fuzz_load_roundtrip(const char *target, const uint8_t *data, size_t size, bool ort_too)
{
    pc_load_options opts;
    fuzz_options(&opts);
    pc_error err;
    pc_error_clear(&err);
    pc_model *m1 = NULL;
    if (pc_model_load_bytes(data, size, &opts, &m1, &err) != PC_OK) {
        if (m1) fuzz_die(target, "load failed but returned a model", &err, size);
        if (err.status == PC_OK) fuzz_die(target, "load failed without setting an error status", NULL, size);
        return 0; /* rejected input: fine, as long as nothing above tripped a sanitizer */
    }
    if (!m1) fuzz_die(target, "load returned PC_OK without a model", NULL, size);
    uint8_t *b1 = NULL, *b2 = NULL, *o1 = NULL, *o2 = NULL;
    size_t n1 = 0, n2 = 0, k1 = 0, k2 = 0;
    pc_model *m2 = NULL, *r = NULL;
    if (!fuzz_save(target, m1, false, &b1, &n1, "saving an accepted model failed", size)) goto done;
    pc_error_clear(&err);
    if (pc_model_load_bytes(b1, n1, &opts, &m2, &err) != PC_OK)
        fuzz_die(target, "a saved model does not reload", &err, size);
    char diff[1024];
    diff[0] = '\0';
    if (!pc_model_equal(m1, m2, diff, sizeof diff)) {
        fprintf(stderr, "%s: BUG: the reloaded model differs from the loaded one: %s\n", target, diff);
        fuzz_die(target, "round trip changed the model", NULL, size);
    }
    if (!fuzz_save(target, m2, false, &b2, &n2, "saving a reloaded model failed", size)) goto done;
    fuzz_same_bytes(target, b1, n1, b2, n2, "saving the reloaded model gave different bytes", size);
    if (!ort_too || !fuzz_save(target, m1, true, &o1, &k1, "saving an accepted model as ORT failed", size))
        goto done;
    pc_error_clear(&err);
    if (pc_model_load_bytes(o1, k1, &opts, &r, &err) != PC_OK)
        fuzz_die(target, "a model saved as ORT does not reload", &err, size);
    if (!fuzz_save(target, r, true, &o2, &k2, "saving a model reloaded from ORT failed", size)) goto done;
    fuzz_same_bytes(target, o1, k1, o2, k2, "saving the model reloaded from ORT gave other ORT bytes", size);
done:
    free(o2);
    free(o1);
    free(b2);
    free(b1);
    pc_model_free(r);
    pc_model_free(m2);
    pc_model_free(m1);
    return 0;
}

#endif
