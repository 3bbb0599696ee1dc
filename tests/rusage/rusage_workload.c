/* The rusage plugin's test subject: C regions whose cost is the machine's, not the code's.
 *   fault N      "step" ×N: mallocs 8 MiB, touches every page, frees it (glibc returns blocks
 *                above its mmap threshold to the kernel, so every call faults 2048 fresh pages)
 *   reuse N      the same arithmetic on one buffer allocated once (few faults)
 *   spin N MS    "compute" ×N: spins MS ms of CPU each (a test runs it on a crowded CPU)
 *   barrier N MS_A MS_B CPU_A CPU_B
 *                two threads, pinned to CPU_A and CPU_B, each N times: "work" spinning MS_A
 *                (MS_B) ms of its own CPU time, then "barrier_wait" at a pthread barrier; a
 *                test crowds CPU_A so that thread arrives later still for want of a CPU
 * JAGER_OUTPUT names the recording; prints the faults getrusage saw in the loop. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
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

static void spin_ms(double ms)
{
    double t0 = now_ms(CLOCK_THREAD_CPUTIME_ID);
    while (now_ms(CLOCK_THREAD_CPUTIME_ID) - t0 < ms) sink++;
}

typedef struct peer {
    int cpu, n;
    double ms;
    pthread_barrier_t *bar;
} peer;

static void *barrier_peer(void *arg)
{
    const peer *p = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(p->cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) return (void *)1;
    jager_site work = jager_site_register("work", __FILE__, __LINE__);
    jager_site wait = jager_site_register("barrier_wait", __FILE__, __LINE__);
    for (int i = 0; i < p->n; i++) {
        jager_span s = jager_span_begin(work);
        spin_ms(p->ms);
        jager_span_end(s);
        s = jager_span_begin(wait);
        pthread_barrier_wait(p->bar);
        jager_span_end(s);
    }
    return NULL;
}

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
            spin_ms(ms);
            jager_span_end(s);
        }
    } else if (!strcmp(argv[1], "barrier") && argc > 6) {
        pthread_barrier_t bar;
        pthread_barrier_init(&bar, NULL, 2);
        peer p[2] = {{atoi(argv[5]), n, atof(argv[3]), &bar}, {atoi(argv[6]), n, atof(argv[4]), &bar}};
        pthread_t th[2];
        for (int t = 0; t < 2; t++)
            if (pthread_create(&th[t], NULL, barrier_peer, &p[t]) != 0) return 5;
        int bad = 0;
        for (int t = 0; t < 2; t++) {
            void *r;
            pthread_join(th[t], &r);
            bad |= r != NULL;
        }
        pthread_barrier_destroy(&bar);
        if (bad) return 6;
    } else {
        return 2;
    }
    getrusage(RUSAGE_SELF, &b);
    printf("minflt %ld\n", b.ru_minflt - a.ru_minflt);
    jager_shutdown();
    return 0;
}
