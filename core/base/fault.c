/* Fault injection: a bit per planted bug, set from the CLI (--inject) or tests. */
#include <string.h>

#include "core/passcheck.h"

#define PC_FAULT_NAME_ROW(id, name, description) name,
#define PC_FAULT_DESC_ROW(id, name, description) description,
static const char *const fault_names[] = {PC_FAULT_LIST(PC_FAULT_NAME_ROW)};
static const char *const fault_descriptions[] = {PC_FAULT_LIST(PC_FAULT_DESC_ROW)};
_Static_assert(sizeof fault_names / sizeof fault_names[0] == PC_FAULT_COUNT, "fault name table");
_Static_assert(sizeof fault_descriptions / sizeof fault_descriptions[0] == PC_FAULT_COUNT,
               "fault description table");
_Static_assert(PC_FAULT_COUNT <= 32, "faults fit one mask");

static uint32_t fault_mask;

const char *pc_fault_name(pc_fault f)
{
    return (unsigned)f < PC_FAULT_COUNT ? fault_names[f] : "?";
}
const char *pc_fault_description(pc_fault f)
{
    return (unsigned)f < PC_FAULT_COUNT ? fault_descriptions[f] : "?";
}
void pc_fault_reset(void)
{
    fault_mask = 0;
}
bool pc_fault_active(pc_fault f)
{
    return (unsigned)f < PC_FAULT_COUNT && (fault_mask >> f & 1u);
}

pc_status pc_fault_enable_list(const char *list, pc_error *err)
{
    uint32_t mask = 0;
    const char *p = list ? list : "";
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        bool found = false;
        for (int f = 0; f < PC_FAULT_COUNT; f++)
            if (strlen(fault_names[f]) == len && memcmp(fault_names[f], p, len) == 0) {
                mask |= 1u << f;
                found = true;
            }
        if (!found)
            return pc_error_set(err, PC_ERR_USAGE,
                                "unknown fault '%.*s' (passcheck suite --list-faults lists them)", (int)len,
                                p);
        p = end ? end + 1 : p + len;
    }
    fault_mask |= mask;
    return PC_OK;
}
