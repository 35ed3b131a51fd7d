/* The one clock (pc_now_seconds, core/passcheck.h): deadlines, durations and the runtime's profiler. */
#include <time.h>

#include "core/passcheck.h"

double pc_now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
