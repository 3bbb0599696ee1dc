/* Per-rank region findings inside an MPI job (tests/mpi/test_mpi_findings.js), with spans
 * named like -finstrument-functions names them (the function's own name), run on 2 ranks:
 *   - rank 0 opens a span "whole" after a short top-level span "setup" and never ends it:
 *     MPI_Finalize gathers the recording with it open (as `main` under the instrument
 *     library). Shares are of the time the spans cover, not of "setup" alone (HPCCG: every
 *     per-rank finding read "100% of the run").
 *   - inside it, 3,000 calls of tiny_op, every 5th spinning 1 µs: a tail of ~0.6 ms in a run
 *     of ~300 ms, below the 1% cut — no finding.
 *   - exchange_step (a span of its own name around an MPI_Allreduce) 6 times a step; in the
 *     first of them rank 1 works 20 ms inside it first: rank 0's exchange_step calls are slow
 *     only by waiting in the Allreduce (the collective_wait names rank 1, no slow_region on
 *     rank 0).
 *   - both ranks work 40 ms a step outside those. */
#include <jager.h>
#include <mpi.h>
#include <time.h>

static jager_site s_setup, s_whole, s_tiny, s_exchange;
static volatile double sink;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void spin_ns(long ns)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

__attribute__((noinline, visibility("default"))) void tiny_op(int i)
{
    jager_span s = jager_span_begin(s_tiny);
    if (i % 5 == 0) spin_ns(1000);
    else sink += i;
    jager_span_end(s);
}

__attribute__((noinline, visibility("default"))) void exchange_step(int rank, int j)
{
    jager_span s = jager_span_begin(s_exchange);
    int x = j, y = 0;
    if (rank == 1 && j == 0) sleep_ms(20);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    sink += y;
    jager_span_end(s);
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    s_setup = jager_site_register("setup", __FILE__, __LINE__);
    s_whole = jager_site_register("whole", __FILE__, __LINE__);
    s_tiny = jager_site_register("tiny_op", __FILE__, __LINE__);
    s_exchange = jager_site_register("exchange_step", __FILE__, __LINE__);
    jager_span_end(jager_span_begin(s_setup));
    jager_span whole = jager_span_begin(s_whole); /* never ended: open at MPI_Finalize */
    (void)whole;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int it = 0; it < 5; it++) {
        if (rank == 0)
            for (int i = 0; i < 600; i++) tiny_op(i);
        sleep_ms(40);
        for (int j = 0; j < 6; j++) exchange_step(rank, j);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
