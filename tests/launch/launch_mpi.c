/* launch_mpi — the MPI program of the launch tests: rank r makes 100 × (r + 1) spans of
 * site "launch.mpi.work" between MPI_Init and MPI_Finalize (instrumented, no jager_init:
 * zero-code mode starts it, before MPI_Init). */
#include <mpi.h>

#include "jager.h"

static volatile double sink;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    jager_site site = jager_site_register("launch.mpi.work", __FILE__, __LINE__);
    for (int i = 0; i < 100 * (rank + 1); i++) {
        jager_span s = jager_span_begin(site);
        for (int k = 0; k < 100; k++) sink += k * 0.5;
        jager_span_end(s);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
