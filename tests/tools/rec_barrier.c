/* rec_barrier — a recording of threads meeting at a barrier, for the load_imbalance rule.
 *
 *   rec_barrier OUT.jgr balanced   two workers, 40 rounds of 2 ms of `work` each, then
 *                                  `barrier_wait`: nobody waits long
 *   rec_barrier OUT.jgr skewed     the same, but the worker named "slow-worker" works 6 ms a
 *                                  round: "fast-worker" waits ≈ 4 ms a round (160 ms in all)
 *
 * Work is a sleep of that length (see work_ns).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "jager.h"

#define ROUNDS 40
#define FAST_NS 2000000ull
#define SLOW_NS 6000000ull

static jager_site s_work, s_wait;
static pthread_barrier_t barrier;

typedef struct worker {
    const char *name;
    uint64_t work_ns;
} worker;

/* Work is a sleep: its length holds when other tests keep both CPUs busy (a spin would be
 * descheduled and stretched), and sleeping threads never compete with each other. */
static void work_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void *run(void *arg)
{
    const worker *w = arg;
    pthread_setname_np(pthread_self(), w->name);
    pthread_barrier_wait(&barrier); /* start together */
    for (int i = 0; i < ROUNDS; i++) {
        jager_span sp = jager_span_begin(s_work);
        work_ns(w->work_ns);
        jager_span_end(sp);
        jager_span b = jager_span_begin(s_wait);
        pthread_barrier_wait(&barrier);
        jager_span_end(b);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[2], "balanced") && strcmp(argv[2], "skewed"))) {
        fprintf(stderr, "usage: rec_barrier OUT.jgr balanced|skewed\n");
        return 2;
    }
    jager_config cfg;
    jager_config_init(&cfg);
    cfg.output = argv[1];
    cfg.quiet = 1;
    if (jager_init(&cfg) != JAGER_OK) {
        fprintf(stderr, "rec_barrier: jager_init: %s\n", jager_last_error());
        return 1;
    }
    s_work = jager_site_register("work", "barrier.c", 10);
    s_wait = jager_site_register("barrier_wait", "barrier.c", 20);
    int skewed = !strcmp(argv[2], "skewed");
    worker ws[2] = {{"slow-worker", skewed ? SLOW_NS : FAST_NS}, {"fast-worker", FAST_NS}};
    pthread_barrier_init(&barrier, NULL, 2);
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&th[i], NULL, run, &ws[i]) != 0) return 1;
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&barrier);
    jager_shutdown();
    return 0;
}
