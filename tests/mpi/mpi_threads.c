/* mpi_threads.c — MPI_THREAD_MULTIPLE: on each of 2 ranks, 4 threads exchange 25
 * messages each with the other rank at once (thread t uses tag 100 + t), by Isend/Irecv +
 * Wait, and one Sendrecv each. The recording must hold every call on its own thread, and
 * every message matched. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#define T 4
#define N 25
static int rank;

static void *worker(void *arg)
{
    int t = (int)(long)arg, peer = 1 - rank, v = t, w = 0;
    for (int i = 0; i < N; i++) {
        MPI_Request r[2];
        MPI_Irecv(&w, 1, MPI_INT, peer, 100 + t, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(&v, 1, MPI_INT, peer, 100 + t, MPI_COMM_WORLD, &r[1]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    }
    MPI_Sendrecv(&v, 1, MPI_INT, peer, 200 + t, &w, 1, MPI_INT, peer, 200 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "no MPI_THREAD_MULTIPLE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    pthread_t th[T];
    for (long t = 0; t < T; t++) pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < T; t++) pthread_join(th[t], NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
