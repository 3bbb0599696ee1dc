/* rec_counters MANY.jgr RUN2.jgr RUN3.jgr: three recordings, one after the other, in one
 * process, of one monotonic counter "work.items" (unit "items"):
 *   MANY  4 threads, released together by a barrier, each jager_counter_add(c, 1) 1000
 *         times (the process's running total ends at 4000), and the gauge "work.queue"
 *         set to 7, 2, 5 from the main thread;
 *   RUN2  jager_counter_add(c, 10) once (a new recording: its total is 10, not 4010);
 *   RUN3  jager_counter_add(c, 5) once (5). A negative delta is ignored there.
 * test_counters.js reads them back through summary, report and the Chrome export. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#include "jager.h"

#define THREADS 4
#define ADDS 1000

static jager_counter items;
static pthread_barrier_t go;
static volatile double spin;

static void *adder(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&go);
    for (int i = 0; i < ADDS; i++) {
        jager_counter_add(items, 1);
        /* a little work and a yield now and then, so the threads' adds interleave (1000 bare
         * adds finish before the next thread wakes); the totals do not depend on it */
        for (int k = 0; k < 200; k++) spin += (double)k;
        if (i % 50 == 49) sched_yield();
    }
    return NULL;
}

static int start(const char *path)
{
    jager_config c;
    jager_config_init(&c);
    c.output = path;
    c.quiet = 1;
    if (jager_init(&c) != JAGER_OK) {
        fprintf(stderr, "jager_init(%s): %s\n", path, jager_last_error());
        return -1;
    }
    items = jager_counter_register("work.items", "items", JAGER_COUNTER_MONOTONIC);
    return items ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: rec_counters MANY.jgr RUN2.jgr RUN3.jgr\n");
        return 2;
    }
    if (start(argv[1])) return 3;
    jager_counter queue = jager_counter_register("work.queue", NULL, JAGER_COUNTER_GAUGE);
    jager_counter_set(queue, 7);
    pthread_t t[THREADS];
    pthread_barrier_init(&go, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, adder, NULL)) return 4;
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&go);
    jager_counter_set(queue, 2);
    jager_counter_set(queue, 5);
    jager_shutdown();

    if (start(argv[2])) return 3;
    jager_counter_add(items, 10);
    jager_shutdown();

    if (start(argv[3])) return 3;
    jager_counter_add(items, -3);
    jager_counter_add(items, 5);
    jager_shutdown();
    printf("{\"threads\":%d,\"adds\":%d}\n", THREADS, ADDS);
    return 0;
}
