/*
 * skewed.c — an unmodified OpenMP program with one balanced and one skewed region, to
 * record with the openmp plugin (no Jäger code in it):
 *
 *   LD_PRELOAD="build/lib/libjager.so build/plugins/libjager-openmp.so" JAGER_PLUGINS=openmp \
 *     JAGER_OUTPUT=skewed.jgr build/bin/omp_skewed
 *   build/bin/jager summary skewed.jgr
 *
 * balanced(): every thread gets the same work (static schedule, equal rows): the join
 * barrier waits are short. skewed(): row i costs i units, so with schedule(static) the
 * last thread's block is the heaviest and the others wait for it at the join barrier —
 * the load imbalance a tool should find by the wait sites' role (barrier_wait/join), and
 * should not find in balanced().
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 256
static double grid[ROWS][512];

static void balanced(int steps)
{
    for (int s = 0; s < steps; s++) {
#pragma omp parallel for schedule(static)
        for (int i = 0; i < ROWS; i++)
            for (int k = 0; k < 200; k++)
                for (int j = 0; j < 512; j++) grid[i][j] = grid[i][j] * 0.999 + 0.001;
    }
}

static void skewed(int steps)
{
    for (int s = 0; s < steps; s++) {
#pragma omp parallel for schedule(static)
        for (int i = 0; i < ROWS; i++)
            for (int k = 0; k < (2 * 200 * i) / ROWS; k++) /* row i: i/ROWS of twice the work */
                for (int j = 0; j < 512; j++) grid[i][j] = grid[i][j] * 0.999 + 0.001;
    }
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 20;
    balanced(steps);
    skewed(steps);
    printf("threads %d, grid[7][7] = %f\n", omp_get_max_threads(), grid[7][7]);
    return 0;
}
