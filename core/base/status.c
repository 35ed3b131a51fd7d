/* Status names, exit codes and the error record. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/passcheck.h"

static const char *const status_names[] = {
#define PC_X_NAME(code, name, exit_code) name,
    PC_STATUS_LIST(PC_X_NAME)
#undef PC_X_NAME
};
static const unsigned char status_exit_codes[] = {
#define PC_X_EXIT(code, name, exit_code) exit_code,
    PC_STATUS_LIST(PC_X_EXIT)
#undef PC_X_EXIT
};
_Static_assert(sizeof status_names / sizeof status_names[0] == PC_STATUS_COUNT, "status name table");
_Static_assert(sizeof status_exit_codes == PC_STATUS_COUNT, "status exit-code table");

const char *pc_status_name(pc_status status)
{
    if ((unsigned)status >= PC_STATUS_COUNT) return "invalid-status";
    return status_names[status];
}

int pc_status_exit_code(pc_status status)
{
    if ((unsigned)status >= PC_STATUS_COUNT) return PC_EXIT_INTERNAL;
    return status_exit_codes[status];
}

pc_status pc_error_set(pc_error *err, pc_status status, const char *fmt, ...)
{
    if (err) {
        err->status = status;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return status;
}

void pc_error_prefix(pc_error *err, const char *fmt, ...)
{
    if (!err) return;
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    if (n <= 0) return;
    size_t plen = strlen(prefix);
    size_t mlen = strnlen(err->message, sizeof err->message - 1);
    if (plen >= sizeof err->message - 1) return;
    if (plen + mlen > sizeof err->message - 1) mlen = sizeof err->message - 1 - plen;
    memmove(err->message + plen, err->message, mlen);
    memcpy(err->message, prefix, plen);
    err->message[plen + mlen] = '\0';
}

void pc_error_clear(pc_error *err)
{
    if (!err) return;
    err->status = PC_OK;
    err->message[0] = '\0';
}
