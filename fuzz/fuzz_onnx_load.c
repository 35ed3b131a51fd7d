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
#include "fuzz/fuzz_roundtrip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_load_roundtrip("fuzz_onnx_load", data, size, false);
}
