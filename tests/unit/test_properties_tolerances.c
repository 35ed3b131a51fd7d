/* The numerics property's tolerance table matches the pipeline: every pass of the pipeline table (and
 * partitioning, which runs between levels 1 and 2) has its own row, so no pass is judged by the default float
 * tolerance by accident; and every row names a pass that exists, so no row is left behind by a renamed pass.
 */
#include <string.h>

#include "core/passcheck.h"
#include "properties/property.h"
#include "tests/test_util.h"

static bool tolerance_listed(const char *pass)
{
    for (size_t i = 0; i < pc_numerics_tolerance_count(); i++)
        if (strcmp(pc_numerics_tolerance_pass(i), pass) == 0) return true;
    return false;
}

static bool pass_exists(const char *pass)
{
    return strcmp(pass, "partition") == 0 || pc_pass_find(pass) != NULL;
}

int main(void)
{
    CHECK(pc_pass_count() > 0);
    for (size_t i = 0; i < pc_pass_count(); i++) {
        const char *name = pc_pass_at(i)->name;
        CHECK_MSG(tolerance_listed(name),
                  "pipeline pass '%s' has no row in prop_numerics.c's pass_tolerances", name);
    }
    CHECK_MSG(tolerance_listed("partition"), "partitioning has no row in prop_numerics.c's pass_tolerances");
    for (size_t i = 0; i < pc_numerics_tolerance_count(); i++) {
        const char *name = pc_numerics_tolerance_pass(i);
        CHECK_MSG(pass_exists(name), "tolerance row '%s' names no pipeline pass", name);
        for (size_t j = 0; j < i; j++)
            CHECK_MSG(strcmp(pc_numerics_tolerance_pass(j), name) != 0, "tolerance row '%s' is listed twice",
                      name);
    }
    CHECK(pc_numerics_tolerance_pass(pc_numerics_tolerance_count()) == NULL);
    return pc_test_finish("test_properties_tolerances");
}
