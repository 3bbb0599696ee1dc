/* The rusage plugin's test subject: C regions whose cost is the machine's, not the code's.
 *   fault N      "step" ×N: mallocs 8 MiB, touches every page, frees it (glibc returns blocks
 *                above its mmap threshold to the kernel, so every call faults 2048 fresh pages)
 *   reuse N      the same arithmetic on one buffer allocated once (few faults)
 *   spin N MS    "compute" ×N: spins MS ms of CPU each (a test runs it on a crowded CPU)
 * JAGER_OUTPUT names the recording; prints the faults getrusage saw in the loop. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "jager.h"

#define BYTES (8u << 20)

static double now_ms(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static volatile unsigned long sink;

static void touch(char *p)
{
    for (size_t i = 0; i < BYTES; i += 4096) p[i] = (char)i;
    sink += (unsigned char)p[BYTES / 2];
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    int n = atoi(argv[2]);
    /* A fixed threshold: glibc would otherwise raise it after the first free and keep the
     * block in the heap, which is the fix this test must not apply by accident. */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    if (jager_init(NULL) != JAGER_OK) return 3;
    struct rusage a, b;
    getrusage(RUSAGE_SELF, &a);
    if (!strcmp(argv[1], "fault") || !strcmp(argv[1], "reuse")) {
        int reuse = !strcmp(argv[1], "reuse");
        char *keep = reuse ? malloc(BYTES) : NULL;
        jager_site step = jager_site_register("step", __FILE__, __LINE__);
        for (int i = 0; i < n; i++) {
            jager_span s = jager_span_begin(step);
            char *p = reuse ? keep : malloc(BYTES);
            if (!p) return 4;
            touch(p);
            if (!reuse) free(p);
            jager_span_end(s);
        }
        free(keep);
    } else if (!strcmp(argv[1], "spin") && argc > 3) {
        double ms = atof(argv[3]);
        jager_site compute = jager_site_register("compute", __FILE__, __LINE__);
        for (int i = 0; i < n; i++) {
            jager_span s = jager_span_begin(compute);
            double t0 = now_ms(CLOCK_THREAD_CPUTIME_ID);
            while (now_ms(CLOCK_THREAD_CPUTIME_ID) - t0 < ms) sink++;
            jager_span_end(s);
        }
    } else {
        return 2;
    }
    getrusage(RUSAGE_SELF, &b);
    printf("minflt %ld\n", b.ru_minflt - a.ru_minflt);
    jager_shutdown();
    return 0;
}
