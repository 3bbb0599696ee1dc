/* deep_lib.c — a library that calls MPI itself; deep_main opens it with RTLD_DEEPBIND,
 * which binds its MPI_ references to its own libmpich first (past any preload). */
#include <mpi.h>

__attribute__((visibility("default"))) int deep_work(void)
{
    int rank, size, v = 1, w = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < 3; i++)
        MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 9, &w, 1, MPI_INT, (rank + size - 1) % size, 9,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    return w;
}
