/* sampler_selfcost: spans as dense as a real hot loop gets (a tiny body between them) for
 * about 400 ms of CPU, so the sampler sees the recorder's own code on this thread; the tools
 * turn those samples into a per-span cost measured on the run (summary's self-cost). */
#include <time.h>

#include "jager.h"

static volatile unsigned long sink;

static __attribute__((noinline)) void body(void)
{
    for (int i = 0; i < 20; i++) sink += (unsigned long)i;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(void)
{
    if (jager_init(NULL) != JAGER_OK) return 3;
    jager_site tiny = jager_site_register("tiny", __FILE__, __LINE__);
    double t0 = cpu_s();
    while (cpu_s() - t0 < 0.4)
        for (int k = 0; k < 1000; k++) {
            jager_span s = jager_span_begin(tiny);
            body();
            jager_span_end(s);
        }
    jager_shutdown();
    return 0;
}
