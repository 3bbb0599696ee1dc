/* bench_task_switch: the cost of one jager_task_set switch (sdk/src/task_move.c), side by
 * side in one run:
 *   none       two tasks alternate on one thread, neither with an open span
 *   stay 3     task A leaves 3 open spans at each switch-out and resumes on the same thread
 *              (publish into the task directory, take its own entry back)
 *   migrate 3  task A, 3 spans open, resumes on the other of two threads at every switch
 *              (publish; adopt as foreign entries and post "drop A" to the other thread,
 *              which reads its mailbox at its next switch)
 * Only the jager_task_set calls are timed (CLOCK_MONOTONIC around each, the timer's own
 * cost measured and subtracted), so the two threads' hand-off in "migrate 3" is not
 * counted. ns per switch: the median over ROUNDS rounds of each round's mean. Prints;
 * asserts nothing.
 *
 *   bench_task_switch [switches_per_round]
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "jager.h"

#define ROUNDS 9
#define TASK_A 1u
#define TASK_B 2u

static long N = 20000; /* switches per round */
static jager_site site;

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

/* One timed jager_task_set: its ns, timer included. */
static inline uint64_t timed_set(uint64_t task)
{
    uint64_t t0 = now_ns();
    jager_task_set(task);
    return now_ns() - t0;
}

static double timer_cost(void)
{
    double r[ROUNDS];
    for (int k = 0; k < ROUNDS; k++) {
        uint64_t sum = 0;
        for (long i = 0; i < N; i++) {
            uint64_t t0 = now_ns();
            sum += now_ns() - t0;
        }
        r[k] = (double)sum / (double)N;
    }
    return median(r, ROUNDS);
}

static void start(void)
{
    jager_config cfg;
    jager_config_init(&cfg);
    cfg.ring_bytes = 4u << 20; /* every switch writes a task record (the collector drains them) */
    cfg.quiet = 1;
    cfg.output = NULL;
    if (jager_init(&cfg) != JAGER_OK) {
        fprintf(stderr, "bench_task_switch: jager_init: %s\n", jager_last_error());
        exit(1);
    }
    site = jager_site_register("bench.task", __FILE__, __LINE__);
}

/* none / stay 3: A and B alternate on this thread; A holds \p open spans. */
static double one_thread(int open)
{
    start();
    jager_task_set(TASK_A);
    for (int i = 0; i < open; i++) jager_span_begin(site);
    double r[ROUNDS];
    for (int k = 0; k < ROUNDS; k++) {
        uint64_t sum = 0;
        for (long i = 0; i < N / 2; i++) {
            sum += timed_set(TASK_B); /* A leaves (publishes its open spans) */
            sum += timed_set(TASK_A); /* A resumes here (takes them back) */
        }
        r[k] = (double)sum / (double)(N / 2 * 2);
    }
    jager_task_set(0);
    jager_shutdown();
    return median(r, ROUNDS);
}

/* migrate 3: A runs on thread 0 and 1 in turn; each turn resumes A (adopt) and leaves it (publish). */
static _Atomic int turn;
static uint64_t sums[2];
static long turns_per_round;

static void *mover(void *arg)
{
    int me = (int)(intptr_t)arg;
    for (long i = 0; i < turns_per_round; i++) {
        while (atomic_load_explicit(&turn, memory_order_acquire) != me) sched_yield();
        sums[me] += timed_set(TASK_A); /* resume: adopt, post "drop A" to the other thread */
        sums[me] += timed_set(0);      /* leave: publish A's 3 spans */
        atomic_store_explicit(&turn, !me, memory_order_release);
    }
    return NULL;
}

static double migrating(int open)
{
    start();
    jager_task_set(TASK_A); /* the spans begin on the main thread, which then steps aside */
    for (int i = 0; i < open; i++) jager_span_begin(site);
    jager_task_set(0);
    turns_per_round = N / 4; /* two switches a turn, two threads */
    double r[ROUNDS];
    for (int k = 0; k < ROUNDS; k++) {
        sums[0] = sums[1] = 0;
        atomic_store(&turn, 0);
        pthread_t th[2];
        for (int t = 0; t < 2; t++) pthread_create(&th[t], NULL, mover, (void *)(intptr_t)t);
        for (int t = 0; t < 2; t++) pthread_join(th[t], NULL);
        r[k] = (double)(sums[0] + sums[1]) / (double)(turns_per_round * 2 * 2);
    }
    jager_shutdown();
    return median(r, ROUNDS);
}

int main(int argc, char **argv)
{
    if (argc > 1) N = atol(argv[1]) > 4 ? atol(argv[1]) : N;
    double timer = timer_cost();
    double none = one_thread(0), stay = one_thread(3), move = migrating(3);
    printf("bench_task_switch: ns per jager_task_set (median of %d rounds of %ld switches; timer %.1f ns subtracted)\n",
           ROUNDS, N, timer);
    printf("%-12s %10s %8s\n", "case", "ns/switch", "ratio");
    printf("%-12s %10.1f %8.2f\n", "none", none - timer, 1.0);
    printf("%-12s %10.1f %8.2f\n", "stay 3", stay - timer, (stay - timer) / (none - timer));
    printf("%-12s %10.1f %8.2f\n", "migrate 3", move - timer, (move - timer) / (none - timer));
    return 0;
}
