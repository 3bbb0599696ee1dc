/* mpi_kill.c — a rank killed by SIGKILL before MPI_Finalize: 5 × Allreduce on every rank,
 * then rank K (argv[1]) waits 3 s (its events are written after 1 s, docs/file-format.md
 * "Durability") and kills itself; the others make 3 MPI_Sendrecv to themselves and reach
 * MPI_Finalize, where the job file is gathered without rank K. With argv[2] "init" rank K
 * kills itself before MPI_Init instead, after 2 s (the others are in MPI_Init by then).
 * Built WITH_JAGER (mpi_kill_jager) it starts Jäger itself (JAGER_PLUGINS=mpi: the file is
 * opened at jager_init, named by the rank the launcher's variables give) and records one
 * span, "before_init", before MPI_Init: what a rank stuck in MPI_Init has in its file. */
#include <mpi.h>
#ifdef WITH_JAGER
#include <jager.h>
#endif
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank;
    double v = 1, w;
#ifdef WITH_JAGER
    jager_init(NULL);
    jager_span_end(jager_span_begin(jager_site_register("before_init", __FILE__, __LINE__)));
#endif
    if (argc > 2 && !strcmp(argv[2], "init")) {
        const char *r = getenv("PMI_RANK"); /* no MPI yet: the launcher's variable */
        if (r && atoi(r) == atoi(argv[1])) {
            sleep(2);
            raise(SIGKILL);
        }
    }
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
