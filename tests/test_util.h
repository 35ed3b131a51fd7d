/* Minimal test helpers: every CHECK failure prints file:line and the expression and makes the test exit 1. */
#ifndef PC_TEST_UTIL_H
#define PC_TEST_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/passcheck.h"

static int pc_test_failures;
static int pc_test_checks;

#define CHECK(cond)                                                                                          \
    do {                                                                                                     \
        pc_test_checks++;                                                                                    \
        if (!(cond)) {                                                                                       \
            pc_test_failures++;                                                                              \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                         \
        }                                                                                                    \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                                 \
    do {                                                                                                     \
        pc_test_checks++;                                                                                    \
        if (!(cond)) {                                                                                       \
            pc_test_failures++;                                                                              \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);                         \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fputc('\n', stderr);                                                                             \
        }                                                                                                    \
    } while (0)

static inline const char *pc_test_errmsg(const pc_error *e)
{
    return e ? e->message : "";
}

/* Asserts a status; on mismatch prints both names and the error message. */
#define CHECK_STATUS(expr, expected, errp)                                                                   \
    do {                                                                                                     \
        pc_status got_ = (expr);                                                                             \
        pc_test_checks++;                                                                                    \
        if (got_ != (expected)) {                                                                            \
            pc_test_failures++;                                                                              \
            fprintf(stderr, "%s:%d: %s: expected %s, got %s (%s)\n", __FILE__, __LINE__, #expr,              \
                    pc_status_name(expected), pc_status_name(got_), pc_test_errmsg(errp));                   \
        }                                                                                                    \
    } while (0)

#define CHECK_OK(expr, errp) CHECK_STATUS(expr, PC_OK, errp)

/* Prints the closing line CI reads and returns the exit code. */
/* Appends printf-style text to the NUL-terminated buf of `size` bytes (truncating; a test label). */
static inline void pc_test_appendf(char *buf, size_t size, const char *fmt, ...) PC_PRINTF(3, 4);
static inline void pc_test_appendf(char *buf, size_t size, const char *fmt, ...)
{
    size_t len = strlen(buf);
    if (len >= size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
}

static inline int pc_test_finish(const char *name)
{
    printf("%s: %d checks, %d passed, %d failed\n", name, pc_test_checks, pc_test_checks - pc_test_failures,
           pc_test_failures);
    return pc_test_failures ? 1 : 0;
}

#endif
