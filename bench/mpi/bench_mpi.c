/* bench_mpi.c — what one wrapped MPI call costs on top of MPI itself.
 *
 * Run on 2 ranks with libjager-mpi.so preloaded (bench/mpi/run.sh). Each measurement
 * alternates blocks of the same work through PMPI_<f> (MPI itself, never recorded) and
 * MPI_<f> (the wrapper: timing, ids, one mpi.call event), so both see the same machine
 * state; the median block of each is compared. Two workloads:
 *   - MPI_Iprobe loop on rank 0 (nothing to find): the wrapper around the cheapest call;
 *   - 0-byte ping-pong between ranks 0 and 1 (Send + Recv on each side per round trip).
 * Prints ns per call both ways, the difference, and the ratio. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

#define BLOCKS 15

static double iprobe_block(int wrapped, int n)
{
    int flag;
    MPI_Status st;
    double t = now_s();
    if (wrapped)
        for (int i = 0; i < n; i++) MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, &st);
    else
        for (int i = 0; i < n; i++) PMPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, &st);
    return (now_s() - t) / n * 1e9;
}

static double pingpong_block(int wrapped, int rank, int n)
{
    char b = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t = now_s();
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            if (wrapped) {
                MPI_Send(&b, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(&b, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                PMPI_Send(&b, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                PMPI_Recv(&b, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        } else if (rank == 1) {
            if (wrapped) {
                MPI_Recv(&b, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&b, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            } else {
                PMPI_Recv(&b, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                PMPI_Send(&b, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            }
        }
    }
    /* per wrapped call: a round trip is 2 calls on each side, in series with the other's */
    return (now_s() - t) / n * 1e9;
}

int main(int argc, char **argv)
{
    int rank, size, n_probe = argc > 1 ? atoi(argv[1]) : 0, n_pp = argc > 2 ? atoi(argv[2]) : 0;
    if (n_probe <= 0) n_probe = 2000;
    if (n_pp <= 0) n_pp = 500;
    double plain[BLOCKS], wrapped[BLOCKS];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "run on 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0) {
        iprobe_block(0, n_probe); /* warm-up both paths */
        iprobe_block(1, n_probe);
        for (int b = 0; b < BLOCKS; b++) {
            plain[b] = iprobe_block(0, n_probe);
            wrapped[b] = iprobe_block(1, n_probe);
        }
        double p = median(plain, BLOCKS), w = median(wrapped, BLOCKS);
        printf("MPI_Iprobe loop      %8.1f ns/call plain  %8.1f ns/call wrapped  +%6.1f ns/call  ratio %.2f\n", p, w,
               w - p, w / p);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    pingpong_block(0, rank, n_pp / 4);
    pingpong_block(1, rank, n_pp / 4);
    for (int b = 0; b < BLOCKS; b++) {
        plain[b] = pingpong_block(0, rank, n_pp);
        wrapped[b] = pingpong_block(1, rank, n_pp);
    }
    if (rank == 0) {
        double p = median(plain, BLOCKS), w = median(wrapped, BLOCKS);
        printf("0-byte ping-pong     %8.1f ns/rtt  plain  %8.1f ns/rtt  wrapped  +%6.1f ns per wrapped call "
               "(4 per round trip)  ratio %.2f\n",
               p, w, (w - p) / 4, w / p);
    }
    MPI_Finalize();
    return 0;
}
