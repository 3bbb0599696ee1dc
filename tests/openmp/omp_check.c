/*
 * omp_check.c — reads a recording of omp_regions and checks the openmp plugin's model:
 *
 *   omp_check FILE REGIONS THREADS SKEW_MS RUNTIME(gomp|ompt)
 *
 * exact span counts per role (openmp.site_role) and per site (exact statistics), every
 * work and join span linked to its region by omp.region with omp.thread 0..T-1 once each,
 * the primary's work span nested in the region span and the workers' on other threads,
 * loops/barriers/critical waits nested in their thread's work span, the join wait of
 * thread 0 longer than the last thread's by at least half the skew, and the runtime
 * named in openmp.summary. Prints what it counted; exit 0 when all holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jager_reader.h"

#define MAXS 4096
typedef struct span {
    uint32_t thread, id, parent, site;
    uint64_t start, end;
    int64_t region, tnum; /* -1 when absent */
} span;
static span spans[MAXS];
static size_t nspans;
static char role_of[1024][64]; /* site → "role/kind" */
static uint64_t region_of[1024]; /* site → its region site (openmp.site_role "region") */
static int fails;

#define CHECK(cond, ...)                                         \
    do {                                                         \
        if (!(cond)) {                                           \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fprintf(stderr, "\n");                               \
            fails++;                                             \
        }                                                        \
    } while (0)

static span *find(uint32_t thread, uint32_t id)
{
    for (size_t i = 0; i < nspans; i++)
        if (spans[i].thread == thread && spans[i].id == id) return &spans[i];
    return NULL;
}

/* Attributes arrive before their span ends: keep them until the span comes. */
typedef struct pend {
    uint32_t thread, id;
    int64_t region, tnum;
} pend;
static pend pends[MAXS];
static size_t npend;

static int is(const span *s, const char *rk) { return s->site < 1024 && strcmp(role_of[s->site], rk) == 0; }

static size_t count(const char *rk)
{
    size_t n = 0;
    for (size_t i = 0; i < nspans; i++) n += is(&spans[i], rk);
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: omp_check FILE REGIONS THREADS SKEW_MS RUNTIME\n");
        return 2;
    }
    long R = atol(argv[2]), T = atol(argv[3]);
    double skew_ms = atof(argv[4]);
    const char *runtime = argv[5];
    jager_reader *r = NULL;
    if (jager_reader_open(argv[1], &r) != JAGER_OK) {
        fprintf(stderr, "cannot open %s\n", argv[1]);
        return 1;
    }
    uint16_t t_role = jager_reader_type_by_name(r, "openmp.site_role");
    uint16_t t_sum = jager_reader_type_by_name(r, "openmp.summary");
    CHECK(t_role && t_sum, "the plugin's event types are in the schema");
    char summary_rt[32] = "";
    jager_event ev;
    int rc;
    while ((rc = jager_reader_next(r, &ev)) == 1) {
        if (ev.type == JAGER_EV_SPAN && nspans < MAXS) {
            const jager_rec_span *s = (const jager_rec_span *)ev.rec;
            span *o = &spans[nspans++];
            *o = (span){ev.thread, s->span_id, s->parent_id, s->h.aux, s->start_ns, s->end_ns, -1, -1};
            for (size_t i = 0; i < npend; i++)
                if (pends[i].thread == ev.thread && pends[i].id == s->span_id) {
                    o->region = pends[i].region;
                    o->tnum = pends[i].tnum;
                    pends[i] = pends[--npend];
                    break;
                }
        } else if (ev.type == JAGER_EV_SPAN_ATTR && npend < MAXS) {
            const jager_rec_span_attr *a = (const jager_rec_span_attr *)ev.rec;
            const uint8_t *cur = (const uint8_t *)(a + 1), *end = (const uint8_t *)a + a->h.words * 8u;
            pend p = {ev.thread, a->span_id, -1, -1};
            jager_attr_view v;
            while (jager_attr_next(&cur, end, &v) == 1) {
                if (v.key_len == 10 && memcmp(v.key, "omp.region", 10) == 0) p.region = v.i64;
                if (v.key_len == 10 && memcmp(v.key, "omp.thread", 10) == 0) p.tnum = v.i64;
            }
            if (p.region >= 0) pends[npend++] = p;
        } else if (t_role && ev.type == t_role) {
            const jager_rec_plugin *p = (const jager_rec_plugin *)ev.rec;
            if (p->fields[0] < 1024 && p->h.words >= 2 + 5) region_of[p->fields[0]] = p->fields[4];
            if (p->fields[0] < 1024)
                snprintf(role_of[p->fields[0]], sizeof role_of[0], "%s/%s",
                         jager_reader_string(r, (uint32_t)p->fields[1]), jager_reader_string(r, (uint32_t)p->fields[2]));
        } else if (t_sum && ev.type == t_sum) {
            const jager_rec_plugin *p = (const jager_rec_plugin *)ev.rec;
            snprintf(summary_rt, sizeof summary_rt, "%s", jager_reader_string(r, (uint32_t)p->fields[7]));
        }
    }
    CHECK(rc == 0, "the file reads to its end (%d: %s)", rc, jager_reader_error(r));
    CHECK(strcmp(summary_rt, runtime) == 0, "openmp.summary runtime '%s', expected '%s'", summary_rt, runtime);

    const int gomp = strcmp(runtime, "gomp") == 0;
    const char *explicit_rk = gomp ? "barrier_wait/barrier" : "barrier_wait/explicit";
    size_t n_region = count("region/parallel"), n_work = count("work/implicit_task"), n_loop = count("loop/loop"),
           n_join = count("barrier_wait/join"), n_impl = count("barrier_wait/implicit"), n_expl = count(explicit_rk),
           n_crit = count("lock_wait/critical");
    printf("regions %zu work %zu loops %zu joins %zu loop-barriers %zu barriers %zu criticals %zu (spans %zu)\n",
           n_region, n_work, n_loop, n_join, n_impl, n_expl, n_crit, nspans);
    CHECK(n_region == (size_t)R, "region spans %zu, expected %ld", n_region, R);
    CHECK(n_work == (size_t)(R * T), "work spans %zu, expected %ld", n_work, R * T);
    CHECK(n_loop == (size_t)(R * T), "loop spans %zu, expected %ld", n_loop, R * T);
    CHECK(n_join == (size_t)(R * T), "join waits %zu, expected %ld", n_join, R * T);
    CHECK(n_impl == (size_t)(R * T), "loop barrier waits %zu, expected %ld", n_impl, R * T);
    CHECK(n_expl == (size_t)(R * T), "explicit barrier waits %zu, expected %ld", n_expl, R * T);
    CHECK(n_crit == (size_t)(R * T), "critical waits %zu, expected %ld", n_crit, R * T);
    CHECK(nspans == n_region + n_work + n_loop + n_join + n_impl + n_expl + n_crit, "no other spans (%zu)", nspans);

    /* The exact statistics agree with the events, site by site. */
    for (uint32_t site = 1; site < 1024; site++) {
        if (!role_of[site][0]) continue;
        size_t n = 0;
        for (size_t i = 0; i < nspans; i++) n += spans[i].site == site;
        jager_site_stat st = {.struct_size = sizeof st};
        CHECK(jager_reader_site_stats(r, site, &st) == JAGER_OK && st.calls == n, "site %u: stats %llu calls, %zu events",
              site, (unsigned long long)st.calls, n);
    }

    /* Regions, and the team of each: one work and one join span per thread number. */
    for (size_t i = 0; i < nspans; i++) {
        span *g = &spans[i];
        if (!is(g, "region/parallel")) continue;
        CHECK(g->region > 0 && g->parent == 0, "region span with omp.region (%lld), top level",
              (long long)g->region);
        int seen_work[64] = {0}, seen_join[64] = {0};
        double join_ms[64] = {0};
        for (size_t k = 0; k < nspans; k++) {
            span *w = &spans[k];
            if (w == g || w->region != g->region) continue;
            int work = is(w, "work/implicit_task"), join = is(w, "barrier_wait/join");
            CHECK(work || join, "only work and join spans carry omp.region (site %u: %s)", w->site, role_of[w->site]);
            CHECK(w->tnum >= 0 && w->tnum < T && w->tnum < 64, "omp.thread %lld in 0..%ld", (long long)w->tnum, T - 1);
            if (w->tnum < 0 || w->tnum >= 64) continue;
            CHECK(w->start >= g->start && w->end <= g->end, "a worker span lies inside its region");
            CHECK(region_of[w->site] == g->site, "site_role names the region site of a work/join site (%llu, not %u)",
                  (unsigned long long)region_of[w->site], g->site);
            if (work) seen_work[w->tnum]++;
            if (join) {
                seen_join[w->tnum]++;
                join_ms[w->tnum] = (w->end - w->start) / 1e6;
            }
            if (w->tnum == 0) {
                CHECK(w->thread == g->thread, "the primary's spans are on the region's thread");
                if (work || join) CHECK(w->parent == g->id, "the primary's work/join spans are children of the region span");
            } else {
                CHECK(w->thread != g->thread, "a worker's span is on another thread");
            }
        }
        for (long t = 0; t < T; t++)
            CHECK(seen_work[t] == 1 && seen_join[t] == 1, "region %lld thread %ld: %d work, %d join spans",
                  (long long)g->region, t, seen_work[t], seen_join[t]);
        /* Thread T-1 works (T-1)·skew longer: thread 0 waits for it at the join. */
        CHECK(join_ms[0] > join_ms[T - 1] + skew_ms * (T - 1) / 2,
              "join wait of thread 0 (%.2f ms) exceeds thread %ld's (%.2f ms) by the skew", join_ms[0], T - 1,
              join_ms[T - 1]);
    }
    /* Loops, barriers and critical waits: children of their thread's work span. */
    for (size_t i = 0; i < nspans; i++) {
        span *s = &spans[i];
        if (!(is(s, "loop/loop") || is(s, "barrier_wait/implicit") || is(s, explicit_rk) || is(s, "lock_wait/critical")))
            continue;
        span *p = find(s->thread, s->parent);
        CHECK(p && is(p, "work/implicit_task"), "a %s span's parent is a work span", role_of[s->site]);
    }
    jager_reader_close(r);
    if (fails) fprintf(stderr, "%d check(s) failed\n", fails);
    return fails ? 1 : 0;
}
