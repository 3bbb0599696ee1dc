/* stencil — a multi-threaded 2-D Jacobi solver instrumented with jager.h.
 *
 *   JAGER_OUTPUT=stencil.jgr ./stencil [n] [steps] [threads]
 *   jager summary stencil.jgr
 *
 * Each step: every worker sweeps its band of rows (span "sweep"), the main thread computes
 * the residual (span "residual") and logs it every 10 steps; a barrier separates phases
 * (span "barrier_wait", where load imbalance shows up). Band 0 is made deliberately slower
 * (it sweeps twice), so the summary and the timeline show one thread making the others wait.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jager.h"

typedef struct shared {
    int n, steps, nthreads;
    double *u, *v;
    pthread_barrier_t barrier;
} shared;

typedef struct worker {
    shared *s;
    int id;
} worker;

static jager_site site_sweep, site_wait, site_step, site_residual, site_solve;

static void sweep(shared *s, int r0, int r1)
{
    int n = s->n;
    for (int i = r0; i < r1; i++) {
        if (i == 0 || i == n - 1) continue;
        for (int j = 1; j < n - 1; j++)
            s->v[i * n + j] = 0.25 * (s->u[(i - 1) * n + j] + s->u[(i + 1) * n + j] + s->u[i * n + j - 1] + s->u[i * n + j + 1]);
    }
}

static void wait_all(shared *s)
{
    jager_span w = jager_span_begin(site_wait);
    pthread_barrier_wait(&s->barrier);
    jager_span_end(w);
}

static void *work(void *arg)
{
    worker *w = arg;
    shared *s = w->s;
    int band = (s->n + s->nthreads - 1) / s->nthreads;
    int r0 = w->id * band, r1 = r0 + band < s->n ? r0 + band : s->n;
    for (int step = 0; step < s->steps; step++) {
        jager_span sp = jager_span_begin(site_sweep);
        sweep(s, r0, r1);
        if (w->id == 0) sweep(s, r0, r1); /* the imbalance the report should show */
        jager_span_end(sp);
        wait_all(s); /* sweeps done */
        wait_all(s); /* main swapped the grids */
    }
    return NULL;
}

static double residual(const shared *s)
{
    double r = 0;
    for (int i = 0; i < s->n * s->n; i++) r = fmax(r, fabs(s->v[i] - s->u[i]));
    return r;
}

int main(int argc, char **argv)
{
    shared s = {.n = argc > 1 ? atoi(argv[1]) : 512, .steps = argc > 2 ? atoi(argv[2]) : 200,
                .nthreads = argc > 3 ? atoi(argv[3]) : 2};
    if (s.n < 8 || s.steps < 1 || s.nthreads < 1 || s.nthreads > 64) {
        fprintf(stderr, "usage: stencil [n>=8] [steps>=1] [threads 1..64]\n");
        return 1;
    }
    if (jager_init(NULL) != JAGER_OK && jager_is_enabled() == 0 && *jager_last_error())
        fprintf(stderr, "stencil: not recording (%s)\n", jager_last_error());
    site_solve = jager_site_register("solve", __FILE__, __LINE__);
    site_step = jager_site_register("step", __FILE__, __LINE__);
    site_sweep = jager_site_register("sweep", __FILE__, __LINE__);
    site_wait = jager_site_register("barrier_wait", __FILE__, __LINE__);
    site_residual = jager_site_register("residual", __FILE__, __LINE__);
    jager_counter c_res = jager_counter_register("residual", NULL, JAGER_COUNTER_GAUGE);

    size_t cells = (size_t)s.n * (size_t)s.n;
    s.u = calloc(cells, sizeof(double));
    s.v = calloc(cells, sizeof(double));
    if (!s.u || !s.v) return 1;
    for (int j = 0; j < s.n; j++) s.u[j] = s.v[j] = 1.0; /* hot top edge */
    pthread_barrier_init(&s.barrier, NULL, (unsigned)s.nthreads + 1);
    pthread_t *th = calloc((size_t)s.nthreads, sizeof *th);
    worker *ws = calloc((size_t)s.nthreads, sizeof *ws);
    for (int t = 0; t < s.nthreads; t++) {
        ws[t] = (worker){&s, t};
        pthread_create(&th[t], NULL, work, &ws[t]);
    }
    jager_span solve = jager_span_begin(site_solve);
    double r = 0;
    for (int step = 0; step < s.steps; step++) {
        jager_span st = jager_span_begin(site_step);
        wait_all(&s); /* workers swept */
        jager_span rs = jager_span_begin(site_residual);
        r = residual(&s);
        jager_span_end(rs);
        jager_counter_set(c_res, r);
        double *tmp = s.u;
        s.u = s.v;
        s.v = tmp;
        if (step % 10 == 0) {
            char msg[96];
            snprintf(msg, sizeof msg, "step %d: residual %.3e", step, r);
            jager_attr a[2] = {{.key = "step", .kind = JAGER_ATTR_I64, .value.i64 = step},
                               {.key = "residual", .kind = JAGER_ATTR_F64, .value.f64 = r}};
            jager_log(JAGER_SEV_INFO, msg, a, 2);
        }
        wait_all(&s); /* grids swapped */
        jager_span_end(st);
    }
    jager_span_end(solve);
    for (int t = 0; t < s.nthreads; t++) pthread_join(th[t], NULL);
    printf("stencil: n=%d steps=%d threads=%d final residual %.3e\n", s.n, s.steps, s.nthreads, r);
    jager_shutdown();
    free(th);
    free(ws);
    free(s.u);
    free(s.v);
    return 0;
}
