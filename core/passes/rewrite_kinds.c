/* The rewrite-kind table (PC_REWRITE_KINDS in passcheck.h): name ("pass/kind"), pass and description per
 * kind, and the near-miss reasons. Passes report through pc_pass_note / pc_pass_near_miss (pass.h). */
#include "core/passes/pass.h"

#define PC_RW_NAME_ROW(id, pass, kind, near, description) pass "/" kind,
#define PC_RW_PASS_ROW(id, pass, kind, near, description) pass,
#define PC_RW_NEAR_ROW(id, pass, kind, near, description) near,
#define PC_RW_DESC_ROW(id, pass, kind, near, description) description,
static const char *const rw_names[] = {PC_REWRITE_KINDS(PC_RW_NAME_ROW)};
static const char *const rw_passes[] = {PC_REWRITE_KINDS(PC_RW_PASS_ROW)};
static const bool rw_near[] = {PC_REWRITE_KINDS(PC_RW_NEAR_ROW)};
static const char *const rw_descriptions[] = {PC_REWRITE_KINDS(PC_RW_DESC_ROW)};
#undef PC_RW_NAME_ROW
#undef PC_RW_PASS_ROW
#undef PC_RW_NEAR_ROW
#undef PC_RW_DESC_ROW
_Static_assert(sizeof rw_names / sizeof rw_names[0] == PC_RW_COUNT, "rewrite kind name table");
_Static_assert(sizeof rw_passes / sizeof rw_passes[0] == PC_RW_COUNT, "rewrite kind pass table");
_Static_assert(sizeof rw_near / sizeof rw_near[0] == PC_RW_COUNT, "rewrite kind near-miss table");
_Static_assert(sizeof rw_descriptions / sizeof rw_descriptions[0] == PC_RW_COUNT,
               "rewrite kind descriptions");

#define PC_MISS_NAME_ROW(id, name, description) name,
static const char *const miss_names[] = {PC_MISS_REASONS(PC_MISS_NAME_ROW)};
#undef PC_MISS_NAME_ROW
_Static_assert(sizeof miss_names / sizeof miss_names[0] == PC_MISS_COUNT, "near-miss reason table");

const char *pc_rewrite_kind_name(pc_rewrite_kind k)
{
    return (unsigned)k < PC_RW_COUNT ? rw_names[k] : "?";
}

const char *pc_rewrite_kind_pass(pc_rewrite_kind k)
{
    return (unsigned)k < PC_RW_COUNT ? rw_passes[k] : "?";
}

bool pc_rewrite_kind_has_near_miss(pc_rewrite_kind k)
{
    return (unsigned)k < PC_RW_COUNT && rw_near[k];
}

const char *pc_rewrite_kind_description(pc_rewrite_kind k)
{
    return (unsigned)k < PC_RW_COUNT ? rw_descriptions[k] : "?";
}

const char *pc_miss_reason_name(pc_miss_reason r)
{
    return (unsigned)r < PC_MISS_COUNT ? miss_names[r] : "?";
}
