/* mpi_kill.c — a rank killed by SIGKILL before MPI_Finalize: 5 × Allreduce on every rank,
 * then rank K (argv[1]) waits 3 s (its events are written after 1 s, docs/file-format.md
 * "Durability") and kills itself; the others make 3 MPI_Sendrecv to themselves and reach
 * MPI_Finalize, where the job file is gathered without rank K. */
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank;
    double v = 1, w;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 5; i++) MPI_Allreduce(&v, &w, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == (argc > 1 ? atoi(argv[1]) : 2)) {
        sleep(3);
        raise(SIGKILL);
    }
    for (int i = 0; i < 3; i++)
        MPI_Sendrecv(&v, 1, MPI_DOUBLE, 0, 7, &w, 1, MPI_DOUBLE, 0, 7, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
