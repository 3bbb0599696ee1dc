/* jacobi.c — a 1-D Jacobi solver split over the ranks, with a deliberate imbalance: the
 * last rank owns twice the rows, so the others wait for it in every halo exchange and at
 * every residual Allreduce. Plain MPI, no Jäger in it: record it unchanged with
 *
 *   mpiexec -n 2 -genv LD_PRELOAD "$PWD/build/lib/libjager.so:$PWD/build/plugins/libjager-mpi.so" \
 *           -genv JAGER_OUTPUT "$PWD/jacobi.jgr" build/bin/jacobi 200
 *
 * then `jager hunt jacobi.jgr` (rank 0 gathered every rank into that one file at
 * MPI_Finalize): a collective_wait in MPI_Allreduce names the last rank. Use no more ranks
 * than cores: 4 ranks busy-polling on 2 cores wait ~24 ms per Allreduce for a 1-2 ms
 * imbalance, which the rule does not call a wait state (docs/mpi.md, "Judged on real
 * code"). `jager summary jacobi.jgr` has the per-rank MPI table. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 200;
    const int base = 20000;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = rank == size - 1 ? 2 * base : base; /* the imbalance */
    double *u = calloc((size_t)n + 2, sizeof *u), *v = calloc((size_t)n + 2, sizeof *v);
    if (!u || !v) MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank == 0) u[0] = 1.0; /* a fixed boundary value */
    int up = rank + 1 < size ? rank + 1 : MPI_PROC_NULL, down = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    double res = 0;
    for (int it = 0; it < iters; it++) {
        MPI_Request rq[4];
        MPI_Irecv(&u[0], 1, MPI_DOUBLE, down, 1, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(&u[n + 1], 1, MPI_DOUBLE, up, 2, MPI_COMM_WORLD, &rq[1]);
        MPI_Isend(&u[n], 1, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &rq[2]);
        MPI_Isend(&u[1], 1, MPI_DOUBLE, down, 2, MPI_COMM_WORLD, &rq[3]);
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
        if (rank == 0) u[0] = 1.0;
        double local = 0;
        for (int r = 0; r < 20; r++) /* the computation: 20 sweeps per exchange */
            for (int i = 1; i <= n; i++) {
                v[i] = 0.5 * (u[i - 1] + u[i + 1]);
                local += fabs(v[i] - u[i]);
                u[i] = v[i];
            }
        MPI_Allreduce(&local, &res, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 0) printf("residual after %d iterations: %g\n", iters, res);
    free(u);
    free(v);
    MPI_Finalize();
    return 0;
}
