/* The ORT-format unit tests' fixtures: files ONNX Runtime 1.30 wrote, in tests/ort/data (PC_SOURCE_DIR, which
 * ctest sets, or the working directory). */
#ifndef PC_TESTS_ORT_FIXTURE_H
#define PC_TESTS_ORT_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/internal.h"

typedef struct ort_buf {
    uint8_t *data;
    size_t size;
} ort_buf;

/* The fixture's bytes (the caller frees data); exits the test when it cannot be read. */
static inline ort_buf ort_fixture(const char *name)
{
    const char *src = getenv("PC_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/ort/data/%s", src ? src : ".", name);
    pc_error err;
    char *data = NULL;
    size_t size = 0;
    if (pc_file_read_all(path, 1 << 20, &data, &size, &err) != PC_OK) {
        fprintf(stderr, "%s\n", err.message);
        exit(1);
    }
    return (ort_buf){(uint8_t *)data, size};
}

#endif
