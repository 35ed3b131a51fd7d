/* fusion-sources on a recorded pass (tests/properties-data/fusion-sources-kept-transpose: the graphs before
 * and after eliminate_slice's per-EP run on a seed-22 annotated case). A Slice on nhwc went and its output
 * now comes from a Transpose the layout transformer made earlier: it is named after the cpu Softmax it wraps
 * (`Softmax_pc10/Transpose_pc14`) but partitioning gave it to nhwc. The pass made nothing from the Softmax,
 * so the name's declared source must not count for a kept node; before the fix the property failed with
 * mixed-eps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "properties/property.h"
#include "tests/test_util.h"

static pc_model *load(const char *name)
{
    const char *src = getenv("PC_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/properties-data/fusion-sources-kept-transpose/%s", src ? src : ".",
             name);
    pc_model *m = NULL;
    pc_error err;
    CHECK_MSG(pc_model_load_file(path, NULL, &m, &err) == PC_OK, "%s: %s", path, err.message);
    return m;
}

int main(void)
{
    pc_model *before = load("before.onnx"), *after = load("after.onnx");
    if (before && after) {
        pc_check_ctx ctx = {.pass = "eliminate_slice",
                            .provider = "nhwc",
                            .level = PC_LEVEL_LAYOUT,
                            .changed = true,
                            .bytes_changed = true,
                            .before = before,
                            .after = after};
        char msg[1024] = "";
        const char *kind = NULL;
        pc_prop_outcome o = pc_prop_fusion_sources.per_pass(&ctx, msg, sizeof msg, &kind);
        CHECK_MSG(o == PC_PROP_PASS, "%s: %s", kind ? kind : "-", msg);
        /* the same pass judged as a level-0/1 run compares annotations: none here, so it passes too */
        ctx.level = PC_LEVEL_BASIC;
        ctx.provider = NULL;
        CHECK(pc_prop_fusion_sources.per_pass(&ctx, msg, sizeof msg, &kind) == PC_PROP_PASS);
    }
    pc_model_free(before);
    pc_model_free(after);
    return pc_test_finish("test_properties_fusion_sources");
}
