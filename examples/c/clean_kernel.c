/* clean_kernel — a well-behaved solver loop, for checking that `jager hunt` stays quiet.
 *
 *   JAGER_OUTPUT=clean.jgr ./clean_kernel [iterations]
 *   jager hunt clean.jgr      # no findings
 *
 * A 2-D Jacobi relaxation with buffers allocated once up front, a residual every
 * iteration, no allocation in the loop, no error path, steady per-call cost. Calls are
 * short (tens of µs) on purpose: on a busy machine, a call that loses the CPU to another
 * process for a time slice looks slow, and short calls rarely do.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "jager.h"

#define N 128

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 400;
    if (iters < 1) iters = 1;
    jager_init(NULL);
    jager_site s_solve = jager_site_register("solve", __FILE__, __LINE__);
    jager_site s_sweep = jager_site_register("sweep", __FILE__, __LINE__);
    jager_site s_resid = jager_site_register("residual", __FILE__, __LINE__);

    double *u = calloc((size_t)N * N, sizeof *u), *v = calloc((size_t)N * N, sizeof *v);
    if (!u || !v) {
        fprintf(stderr, "clean_kernel: out of memory\n");
        free(u);
        free(v);
        jager_shutdown();
        return 1;
    }
    for (int j = 0; j < N; j++) u[j] = v[j] = 1.0; /* hot top edge */

    double r = 0;
    jager_span solve = jager_span_begin(s_solve);
    for (int it = 0; it < iters; it++) {
        jager_span sw = jager_span_begin(s_sweep);
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                v[i * N + j] = 0.25 * (u[(i - 1) * N + j] + u[(i + 1) * N + j] + u[i * N + j - 1] + u[i * N + j + 1]);
        double *t = u;
        u = v;
        v = t;
        jager_span_end(sw);

        jager_span rs = jager_span_begin(s_resid);
        r = 0;
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++) r += fabs(u[i * N + j] - v[i * N + j]);
        jager_span_end(rs);
    }
    jager_span_end(solve);
    printf("clean_kernel: %d iterations, residual %.3e\n", iters, r);
    free(u);
    free(v);
    jager_shutdown();
    return 0;
}
