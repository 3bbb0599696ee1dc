/* Known wait states for the hunt rules (tests/mpi/test_mpi_aggregate.js). The "work" is
 * sleeping, so the shares do not depend on how loaded the test machine's cores are.
 *   late       rank 1 works 50 ms before each of 5 sends to rank 0, which receives at once:
 *              late_sender, rank 0 waits ~250 ms in MPI_Recv for rank 1
 *   balanced   every rank works 100 ms, then a ring exchange and an allreduce: no wait findings
 *   imbalance  the last rank works 60 ms, the others 10 ms, before each of 5 MPI_Allreduce:
 *              collective_wait, the others wait ~250 ms each for the last rank
 *   latercv    rank 0 works 50 ms before each of 5 MPI_Recv from rank 1, which sends with
 *              MPI_Ssend at once: late_receiver, rank 1 waits ~250 ms in MPI_Ssend for rank 0
 *   stairs     rank k works 30·k ms before each of 5 MPI_Allreduce: on 3 ranks rank 0 waits
 *              ~300 ms, rank 1 ~150 ms, rank 2 ~0 in MPI_Allreduce (tests/mpi/test_mpi_findings.js:
 *              the summary's per-rank table, mpi_time: about half of the job's rank time in MPI)
 *   small [K]  rank 0 sends 5 × K (default 400) messages of 8 bytes to rank 1 from one MPI_Send:
 *              small_messages, rank 0 to rank 1, 2000 messages
 *   halo       rank 1 works 50 ms, then both post 3 MPI_Irecv and 3 MPI_Isend (1 int each) to the
 *              other and complete the 6 with one MPI_Waitall: late_sender, rank 0 waits ~250 ms
 *              once per Waitall (not once per message: ~750), and no late_receiver (its eager
 *              Isends were not what its Waitall waited for; PRK PIC's exchange)
 *   eager      (once, not 5 times) rank 0 sends 3000 messages of 1 int to rank 1 at once; rank
 *              1 works 0.1 ms before each receive: the sends went eagerly and returned before
 *              their receives were posted, so no late_receiver (PRK p2p's pipeline pattern)
 *   big        rank 0 sends 5 messages of 1 MiB to rank 1 (MPI_Send, MPI_Recv): mpi_time's
 *              larger-than-64-KiB class holds exactly the sends' and receives' time
 *   alternate  ranks 0 and 1 take turns working 50 ms before an MPI_Sendrecv with each other
 *              (rank 1 in steps 0, 2, 4, rank 0 in 1, 3): each waits for the other, late at
 *              3 and 2 of 5 exchanges — varying lateness, two late_sender notes, no problem
 *   twosites   an MPI_Allreduce every rank reaches together, then the last rank works 60 ms,
 *              the others 10 ms, before a second MPI_Allreduce: one collective_wait, at the
 *              second call's line (a finding per call site, not per function)
 *   morecalls  the last rank does its 10 ms of work 6 times, the others once, before each of 5
 *              MPI_Allreduce: collective_wait; built WITH_JAGER the finding says the late rank
 *              called solve_block 30 times against 5 (more work given to it), where in
 *              "imbalance" it called it as often, each call longer
 *   skew       an MPI_Reduce to rank 1 whose user op sleeps 40 ms there, then rank 0 works 10 ms
 *              and rank 1 25 ms before an MPI_Barrier: rank 0 waits ~55 ms per barrier, of
 *              which 40 ms is rank 1 leaving the Reduce late (its completion order) and 15 ms
 *              the imbalance: collective_wait counts ~5 × 15 ms */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Built WITH_JAGER (mpi_waits_jager, run preloaded like the plain one) the work is a span,
 * "solve_block", after a 1 ms span "pack_halo": the findings name the late rank's
 * computation by its spans (the larger first, the 1 ms one below a tenth left out). */
#ifdef WITH_JAGER
#include <jager.h>
static void work_ms(int ms)
{
    static jager_site pack, solve;
    if (!solve) {
        pack = jager_site_register("pack_halo", __FILE__, __LINE__);
        solve = jager_site_register("solve_block", __FILE__, __LINE__);
    }
    jager_span p = jager_span_begin(pack);
    sleep_ms(1);
    jager_span_end(p);
    jager_span s = jager_span_begin(solve);
    sleep_ms(ms);
    jager_span_end(s);
}
#else
static void work_ms(int ms) { sleep_ms(ms); }
#endif

/* The skew mode's reduction: the root applies it, 40 ms at a time. */
static void slow_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    sleep_ms(40);
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

__attribute__((visibility("default"))) int main(int argc, char **argv) /* named by dladdr in the findings */
{
    MPI_Init(&argc, &argv);
    int rank, size, x = 1, y = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "balanced";
    int per = argc > 2 ? atoi(argv[2]) : 400;
    MPI_Barrier(MPI_COMM_WORLD); /* start together: ranks leave MPI_Init at different times */
    for (int it = 0; it < 5; it++) {
        if (!strcmp(mode, "late")) {
            if (rank == 1) {
                work_ms(50);
                MPI_Send(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
            } else if (rank == 0) {
                MPI_Recv(&y, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        } else if (!strcmp(mode, "latercv")) {
            if (rank == 0) {
                work_ms(50);
                MPI_Recv(&y, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Ssend(&x, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
            }
        } else if (!strcmp(mode, "stairs")) {
            work_ms(30 * rank);
            MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        } else if (!strcmp(mode, "small")) {
            double v[1] = {1.0};
            for (int i = 0; i < per; i++) {
                if (rank == 0) MPI_Send(v, 1, MPI_DOUBLE, 1, 9, MPI_COMM_WORLD);
                else if (rank == 1) MPI_Recv(v, 1, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        } else if (!strcmp(mode, "eager")) {
            if (it == 0 && rank == 0)
                for (int i = 0; i < 3000; i++) MPI_Send(&x, 1, MPI_INT, 1, 11, MPI_COMM_WORLD);
            if (it == 0 && rank == 1)
                for (int i = 0; i < 3000; i++) {
                    struct timespec ts = {0, 100000};
                    nanosleep(&ts, NULL);
                    MPI_Recv(&y, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                }
        } else if (!strcmp(mode, "halo")) {
            int in[3], out[3] = {1, 2, 3};
            MPI_Request rq[6];
            if (rank == 1) work_ms(50);
            if (rank < 2) {
                for (int i = 0; i < 3; i++) MPI_Irecv(&in[i], 1, MPI_INT, 1 - rank, i, MPI_COMM_WORLD, &rq[i]);
                for (int i = 0; i < 3; i++) MPI_Isend(&out[i], 1, MPI_INT, 1 - rank, i, MPI_COMM_WORLD, &rq[3 + i]);
                MPI_Waitall(6, rq, MPI_STATUSES_IGNORE);
            }
        } else if (!strcmp(mode, "big")) {
            static double b[131072];
            if (rank == 0) MPI_Send(b, 131072, MPI_DOUBLE, 1, 10, MPI_COMM_WORLD);
            else if (rank == 1) MPI_Recv(b, 131072, MPI_DOUBLE, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (!strcmp(mode, "alternate")) {
            if (rank == (it % 2 == 0 ? 1 : 0)) work_ms(50);
            if (rank < 2)
                MPI_Sendrecv(&x, 1, MPI_INT, 1 - rank, 12, &y, 1, MPI_INT, 1 - rank, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (!strcmp(mode, "twosites")) {
            /* distinct arguments and uses, so the compiler cannot share one call for both */
            static volatile int seen_a, seen_b;
            int ya = 0, yb = 0;
            MPI_Allreduce(&x, &ya, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD); /* twosites: together */
            seen_a += ya;
            work_ms(rank == size - 1 ? 60 : 10);
            MPI_Allreduce(&x, &yb, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD); /* twosites: the last rank late */
            seen_b -= yb;
        } else if (!strcmp(mode, "morecalls")) {
            for (int k = 0; k < (rank == size - 1 ? 6 : 1); k++) work_ms(10);
            MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        } else if (!strcmp(mode, "skew")) {
            static MPI_Op op = MPI_OP_NULL;
            if (op == MPI_OP_NULL) MPI_Op_create(slow_sum, 1, &op);
            MPI_Reduce(&x, &y, 1, MPI_INT, op, 1, MPI_COMM_WORLD);
            work_ms(rank == 1 ? 25 : 10);
            MPI_Barrier(MPI_COMM_WORLD);
        } else if (!strcmp(mode, "imbalance")) {
            work_ms(rank == size - 1 ? 60 : 10);
            MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        } else {
            work_ms(100);
            MPI_Sendrecv(&x, 1, MPI_INT, (rank + 1) % size, 3, &y, 1, MPI_INT, (rank + size - 1) % size, 3,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
