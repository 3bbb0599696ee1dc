/* mpi_ring.c — a small MPI program: 10 messages around the ring (tag 5, 8 doubles),
 * 3 × Allreduce, 1 × Barrier. Built plain (zero-code preload), linked with
 * libjager-mpi.so before -lmpi (with and without libjager), and with WITH_JAGER it calls
 * jager_init()/jager_shutdown() itself (JAGER_PLUGINS=mpi without preload) and records two
 * spans, "ring" (the 10 exchanges) and "reduce" (the 3 allreduces), once each. */
#include <mpi.h>
#ifdef WITH_JAGER
#include <jager.h>
#include <stdlib.h>
#endif

int main(int argc, char **argv)
{
    int rank, size;
    double v[8] = {0}, w[8];
#ifdef WITH_JAGER
    jager_init(NULL);
#endif
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#ifdef WITH_JAGER
    jager_span ring = jager_span_begin(jager_site_register("ring", __FILE__, __LINE__));
#endif
    for (int i = 0; i < 10; i++) {
        MPI_Sendrecv(v, 8, MPI_DOUBLE, (rank + 1) % size, 5, w, 8, MPI_DOUBLE, (rank + size - 1) % size, 5,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
#ifdef WITH_JAGER
    jager_span_end(ring);
    jager_span reduce = jager_span_begin(jager_site_register("reduce", __FILE__, __LINE__));
#endif
    for (int i = 0; i < 3; i++) MPI_Allreduce(v, w, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#ifdef WITH_JAGER
    jager_span_end(reduce);
#endif
    MPI_Barrier(MPI_COMM_WORLD);
#ifdef WITH_JAGER
    /* RING_STOP_RANK=k: rank k stops recording before MPI_Finalize (the others must not
     * wait for it longer than JAGER_MPI_TIMEOUT_MS at each step) */
    const char *stop = getenv("RING_STOP_RANK");
    if (stop && atoi(stop) == rank) jager_shutdown();
#endif
    MPI_Finalize();
#ifdef WITH_JAGER
    jager_shutdown();
#endif
    return 0;
}
