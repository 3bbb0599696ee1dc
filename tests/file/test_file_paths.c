/* Exact call paths through the real core (paths.c → PATHS blocks → reader): every span
 * is counted on its path whatever the ring dropped, threads keep their own tables, the
 * per-thread limit sends the rest to an honest overflow bucket (nothing lost: calls add up
 * to spans_total), spans nested deeper than the fixed stack get their own paths, tasks
 * interleaved on one thread (jager_task_set) keep a tree each, and a second run in the same
 * process starts from empty tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "jager_reader.h"
#include "testutil.h"

typedef struct paths {
    jager_path_stat *v;
    size_t n;
    jager_stat st;
} paths;

static paths read_paths(const char *file)
{
    paths p = {0};
    jager_reader *r;
    assert_int_equal(jager_reader_open(file, &r), JAGER_OK);
    assert_int_equal(jager_reader_load_tables(r), JAGER_OK);
    p.n = jager_reader_path_count(r);
    p.v = calloc(p.n ? p.n : 1, sizeof *p.v);
    for (size_t i = 0; i < p.n; i++) {
        p.v[i].struct_size = sizeof p.v[i];
        assert_int_equal(jager_reader_path(r, i, &p.v[i]), JAGER_OK);
    }
    p.st.struct_size = sizeof p.st;
    assert_int_equal(jager_reader_stats(r, &p.st), JAGER_OK);
    jager_reader_close(r);
    return p;
}

/* The path of sites root → … → site on \p thread (sites[0] outermost), or -1. */
static long find(const paths *p, uint32_t thread, const jager_site *sites, int n)
{
    long at = -1;
    for (int k = 0; k < n; k++) {
        long found = -1;
        for (size_t i = 0; i < p->n; i++) {
            const jager_path_stat *x = &p->v[i];
            uint32_t want = at < 0 ? JAGER_PATH_TOP : (uint32_t)at;
            if (x->thread == thread && x->site == sites[k] && x->parent == want) found = (long)i;
        }
        if (found < 0) return -1;
        at = found;
    }
    return at;
}

static uint64_t sum_calls(const paths *p)
{
    uint64_t c = 0;
    for (size_t i = 0; i < p->n; i++) c += p->v[i].calls;
    return c;
}

static jager_site s_a, s_b, s_c;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 300; i++) {
        jager_span a = jager_span_begin(s_c);
        jager_span b = jager_span_begin(s_a);
        jager_span_end(b);
        jager_span_end(a);
    }
    return NULL;
}

/* A 4 KiB ring drops most events; the paths still hold every call, per thread. */
static void test_exact_under_drops(void **state)
{
    (void)state;
    const char *file = tu_tmp_path(".jgr");
    jager_config c = tu_config(4096);
    c.output = file;
    assert_int_equal(jager_init(&c), JAGER_OK);
    s_a = jager_site_register("pa", "p.c", 1);
    s_b = jager_site_register("pb", "p.c", 2);
    s_c = jager_site_register("pc", "p.c", 3);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, worker, NULL), 0);
    for (int i = 0; i < 1000; i++) {
        jager_span a = jager_span_begin(s_a);
        for (int k = 0; k < 3; k++) { /* b and c take turns under a: both ways of the cache */
            jager_span b = jager_span_begin(s_b);
            jager_span_end_bytes(b, 8);
            jager_span cc = jager_span_begin(s_c);
            jager_span_end(cc);
        }
        jager_span_end(a);
    }
    jager_span b = jager_span_begin(s_b); /* b at the top level too */
    jager_span_end(b);
    assert_int_equal(pthread_join(th, NULL), 0);
    jager_stat st = {.struct_size = sizeof st};
    assert_int_equal(jager_stats(&st), JAGER_OK);
    jager_shutdown();
    assert_true(st.events_dropped > 0);

    paths p = read_paths(file);
    uint32_t main_thread = 0, other = 0;
    for (size_t i = 0; i < p.n; i++) {
        if (p.v[i].site == s_b && p.v[i].parent == JAGER_PATH_TOP) main_thread = p.v[i].thread;
    }
    assert_int_not_equal(main_thread, 0);
    for (size_t i = 0; i < p.n; i++)
        if (p.v[i].thread != main_thread) other = p.v[i].thread;
    assert_int_not_equal(other, 0);
    long a = find(&p, main_thread, (jager_site[]){s_a}, 1);
    long ab = find(&p, main_thread, (jager_site[]){s_a, s_b}, 2);
    long ac = find(&p, main_thread, (jager_site[]){s_a, s_c}, 2);
    long top_b = find(&p, main_thread, (jager_site[]){s_b}, 1);
    long wc = find(&p, other, (jager_site[]){s_c}, 1);
    long wca = find(&p, other, (jager_site[]){s_c, s_a}, 2);
    assert_true(a >= 0 && ab >= 0 && ac >= 0 && top_b >= 0 && wc >= 0 && wca >= 0);
    assert_int_equal(p.v[a].calls, 1000);
    assert_int_equal(p.v[ab].calls, 3000);
    assert_int_equal(p.v[ab].bytes, 3000 * 8);
    assert_int_equal(p.v[ac].calls, 3000);
    assert_int_equal(p.v[top_b].calls, 1);
    assert_int_equal(p.v[wc].calls, 300);
    assert_int_equal(p.v[wca].calls, 300);
    assert_int_equal(find(&p, main_thread, (jager_site[]){s_a, s_a}, 2), -1); /* no path that never ran */
    /* self = total − children's totals */
    assert_int_equal(p.v[a].self_ns, p.v[a].total_ns - p.v[ab].total_ns - p.v[ac].total_ns);
    /* every span counted once: the paths' calls are spans_total, as the STATS block says */
    assert_int_equal(sum_calls(&p), p.st.spans_total);
    assert_int_equal(p.st.spans_total, 1000 + 6000 + 1 + 600);
    /* and they agree with the exact per-site totals */
    jager_site_stat ss = {.struct_size = sizeof ss};
    assert_int_equal(jager_site_stats(s_b, &ss), JAGER_OK);
    free(p.v);
}

/* More distinct paths than a thread's table holds, and spans deeper than the fixed stack: the
 * overflow bucket takes them, counted, nothing lost. */
static void test_overflow_bucket(void **state)
{
    (void)state;
    const char *file = tu_tmp_path(".jgr");
    jager_config c = tu_config(1u << 20);
    c.output = file;
    assert_int_equal(jager_init(&c), JAGER_OK);
    enum { NSITES = JG_PATHS_MAX + 100 };
    static jager_site sites[NSITES];
    char name[32];
    for (int i = 0; i < NSITES; i++) {
        snprintf(name, sizeof name, "s%d", i);
        sites[i] = jager_site_register(name, "o.c", (uint32_t)i + 1);
    }
    /* 200 deep on s0 first: every depth gets its path (the 72 below JG_MAX_DEPTH from the
     * overflow stack) */
    jager_span stack[200];
    for (int d = 0; d < 200; d++) stack[d] = jager_span_begin(sites[0]);
    for (int d = 199; d >= 0; d--) jager_span_end(stack[d]);
    /* then NSITES top-level sites: s0's path exists; of the table's JG_PATHS_MAX slots the
     * root, the bucket and the 200-deep chain take 202, so 16182 more sites get a path and
     * the other 301 go to the bucket */
    for (int i = 0; i < NSITES; i++) {
        jager_span s = jager_span_begin(sites[i]);
        jager_span_end(s);
    }
    jager_stat st = {.struct_size = sizeof st};
    assert_int_equal(jager_stats(&st), JAGER_OK);
    jager_shutdown();
    paths p = read_paths(file);
    assert_int_equal(st.spans_total, NSITES + 200);
    assert_int_equal(sum_calls(&p), st.spans_total); /* nothing lost */
    assert_int_equal(p.n, JG_PATHS_MAX - 1);         /* full: every slot but the root's */
    uint64_t overflow = 0;
    for (size_t i = 0; i < p.n; i++)
        if (!p.v[i].site) overflow += p.v[i].calls;
    assert_int_equal(overflow, NSITES - 1 - (JG_PATHS_MAX - 202)); /* s0 has its path */
    long top = find(&p, p.v[0].thread, (jager_site[]){sites[0]}, 1);
    assert_true(top >= 0);
    assert_int_equal(p.v[top].calls, 2);
    uint64_t deep = 0;
    for (long at = top; at >= 0;) {
        deep++;
        long next = -1;
        for (size_t i = 0; i < p.n; i++)
            if (p.v[i].parent == (uint32_t)at && p.v[i].site == sites[0]) next = (long)i;
        at = next;
    }
    assert_int_equal(deep, 200);
    free(p.v);
}

/* A second run in the same process: tables start empty, no path of the first run. */
static void test_second_run_starts_empty(void **state)
{
    (void)state;
    for (int run = 0; run < 2; run++) {
        const char *file = tu_tmp_path(".jgr");
        jager_config c = tu_config(1u << 20);
        c.output = file;
        assert_int_equal(jager_init(&c), JAGER_OK);
        jager_site s = jager_site_register(run ? "second" : "first", "r.c", 1);
        for (int i = 0; i < 10 + run; i++) jager_span_end(jager_span_begin(s));
        jager_shutdown();
        paths p = read_paths(file);
        assert_int_equal(sum_calls(&p), 10 + run);
        for (size_t i = 0; i < p.n; i++)
            if (p.v[i].calls) assert_int_equal(p.v[i].site, s);
        free(p.v);
    }
}

/* Two tasks interleaved on one thread, as Julia's @async tasks yielding inside spans: task 1
 * runs solve → step, task 2 io → step, switching while both are open. Each span's path is
 * its own task's chain (the parent the core records), so the paths are solve, solve → step,
 * io and io → step, never io under solve or step under io under solve; a task's span ended
 * out of order (task 1's solve while task 2's io is open above it) keeps the others' paths. */
static void test_tasks_keep_their_trees(void **state)
{
    (void)state;
    const char *file = tu_tmp_path(".jgr");
    jager_config c = tu_config(0);
    c.output = file;
    assert_int_equal(jager_init(&c), JAGER_OK);
    jager_site solve = jager_site_register("solve", "t.jl", 1), io = jager_site_register("io", "t.jl", 2),
               step = jager_site_register("step", "t.jl", 3);
    for (int i = 0; i < 50; i++) {
        jager_task_set(1);
        jager_span a = jager_span_begin(solve);
        jager_task_set(2);
        jager_span b = jager_span_begin(io);
        jager_task_set(1);
        jager_span a1 = jager_span_begin(step); /* under solve, above io on the thread */
        jager_span_end(a1);
        jager_task_set(2);
        jager_span b1 = jager_span_begin(step); /* under io */
        jager_span_end(b1);
        if (i % 2) {
            jager_task_set(1);
            jager_span_end(a); /* out of order: io is still open above it */
            jager_task_set(2);
            jager_span_end(b);
        } else {
            jager_span_end(b);
            jager_task_set(1);
            jager_span_end(a);
        }
    }
    jager_task_set(0);
    jager_shutdown();
    paths p = read_paths(file);
    uint32_t th = 0;
    for (size_t i = 0; i < p.n; i++)
        if (p.v[i].site == solve) th = p.v[i].thread;
    const jager_site p_solve[] = {solve}, p_solve_step[] = {solve, step}, p_io[] = {io}, p_io_step[] = {io, step};
    const jager_site wrong1[] = {solve, io}, wrong2[] = {solve, step, step}, wrong3[] = {io, step, step};
    long ps = find(&p, th, p_solve, 1), pss = find(&p, th, p_solve_step, 2), pi = find(&p, th, p_io, 1),
         pis = find(&p, th, p_io_step, 2);
    assert_true(ps >= 0 && pss >= 0 && pi >= 0 && pis >= 0);
    assert_int_equal(p.v[ps].calls, 50);
    assert_int_equal(p.v[pss].calls, 50);
    assert_int_equal(p.v[pi].calls, 50);
    assert_int_equal(p.v[pis].calls, 50);
    assert_true(find(&p, th, wrong1, 2) < 0);
    assert_true(find(&p, th, wrong2, 3) < 0 && find(&p, th, wrong3, 3) < 0);
    assert_int_equal(sum_calls(&p), 200);
    assert_int_equal(p.st.spans_total, 200);
    free(p.v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_under_drops),
        cmocka_unit_test(test_overflow_bucket),
        cmocka_unit_test(test_tasks_keep_their_trees),
        cmocka_unit_test(test_second_run_starts_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
