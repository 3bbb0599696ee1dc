/* Tasks that move between threads (jager_task_set, sdk/src/task_move.c), through the real
 * core and the file: task A begins P and S under it on thread 1 and yields (thread 1 runs
 * task B); A resumes on thread 2, begins and ends C there, ends S; A moves on to thread 3
 * and ends P; later A comes back to thread 1 and begins Q (R inside). Every span is read
 * back with its true parent across threads (JAGER_EV_SPAN_X), none is lost, two ends count
 * as cross-thread, Q finds no stale entry on thread 1, B's spans are untouched, and the
 * merged call paths equal node for node those of the same program run on thread 1 only.
 * With no memory to publish A's spans, A's move falls back to the old way (its spans end as
 * roots on the ending thread, counted), without a crash. A log A writes on thread 2 inside S
 * carries S (its id on thread 1, JAGER_LOG_SPAN_MOVED with thread 1), as jager_span_current
 * names it; one inside C carries C plainly. An attribute and an error set on S on thread 2
 * (as Jager.jl does when a migrated span throws) name S in thread 1's numbering
 * (JAGER_SPAN_REF_MOVED), so they reach S and no other span. Threads are pthreads; the test
 * drives each step on its thread in turn, so nothing depends on timing. */
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

/* The next malloc on this thread fails (the task directory's entry, allocated by the
 * thread that publishes: -Wl,--wrap=malloc). */
void *__real_malloc(size_t n);
static __thread int fail_malloc_here;
void *__wrap_malloc(size_t n)
{
    if (fail_malloc_here) {
        fail_malloc_here = 0;
        return NULL;
    }
    return __real_malloc(n);
}

/* ---- a worker thread that runs one step at a time, when told ---- */
typedef struct worker {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    void (*step)(void);
    int quit;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->step && !w->quit) pthread_cond_wait(&w->cv, &w->mu);
        if (w->step) {
            void (*f)(void) = w->step;
            pthread_mutex_unlock(&w->mu);
            f();
            pthread_mutex_lock(&w->mu);
            w->step = NULL;
            pthread_cond_broadcast(&w->cv);
        } else {
            break;
        }
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static void worker_start(worker *w)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    assert_int_equal(pthread_create(&w->th, NULL, worker_main, w), 0);
}

static void run_on(worker *w, void (*f)(void))
{
    pthread_mutex_lock(&w->mu);
    w->step = f;
    pthread_cond_broadcast(&w->cv);
    while (w->step) pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

static void worker_stop(worker *w)
{
    pthread_mutex_lock(&w->mu);
    w->quit = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
}

/* ---- the program ---- */
enum { SP, SS, SC, SB, SQ, SR, NSITES };
static const char *const names[NSITES] = {"mig.P", "mig.S", "mig.C", "mig.B", "mig.Q", "mig.R"};
static jager_site site[NSITES];
static jager_span P, S, C, Q, R;
static int fail_publish;
static uint32_t cur_in_s, cur_in_c; /* jager_span_current on thread 2 inside S, inside C */
static jager_site cur_site_s;
#define TASK_A 0xA1u
#define TASK_B 0xB2u

static void step_begin_yield(void) /* thread 1 */
{
    jager_task_set(TASK_A);
    P = jager_span_begin(site[SP]);
    S = jager_span_begin(site[SS]);
    if (fail_publish) fail_malloc_here = 1;
    jager_task_set(TASK_B); /* A yields inside S */
    fail_malloc_here = 0;
    jager_span_end(jager_span_begin(site[SB]));
}
static void step_child(void) /* thread 2 */
{
    jager_task_set(TASK_A);
    cur_in_s = jager_span_current(&cur_site_s);
    jager_log(JAGER_SEV_INFO, "in S", NULL, 0);
    C = jager_span_begin(site[SC]);
    cur_in_c = jager_span_current(NULL);
    jager_log(JAGER_SEV_INFO, "in C", NULL, 0);
    /* as Jager.jl when a migrated span's body throws: S (thread 1's id) gets an attribute
     * and an error here; C gets one of its own */
    jager_attr as = {.key = "who", .kind = JAGER_ATTR_STR, .value.str = "S"};
    jager_attr ac = {.key = "who", .kind = JAGER_ATTR_STR, .value.str = "C"};
    jager_span_set_attrs(S, &as, 1);
    jager_span_error(S, "S failed");
    jager_span_set_attrs(C, &ac, 1);
    jager_span_end(C);
    jager_span_end(S);
    jager_task_set(0);
}
static void step_end_p(void) /* thread 3 */
{
    jager_task_set(TASK_A);
    jager_span_end(P);
    jager_task_set(0);
}
static void step_back(void) /* thread 1 again */
{
    jager_task_set(TASK_A);
    Q = jager_span_begin(site[SQ]);
    R = jager_span_begin(site[SR]);
    jager_span_end(R);
    jager_span_end(Q);
    jager_task_set(TASK_B);
    jager_span_end(jager_span_begin(site[SB]));
    jager_task_set(0);
}

/* Run the program; \p migrate 0 runs every step on thread 1. */
static void record(const char *file, int migrate, jager_stat *st)
{
    jager_config c = tu_config(1u << 20);
    c.output = file;
    assert_int_equal(jager_init(&c), JAGER_OK);
    for (int i = 0; i < NSITES; i++) site[i] = jager_site_register(names[i], "mig.c", (uint32_t)i + 1);
    worker w[3];
    for (int i = 0; i < 3; i++) worker_start(&w[i]);
    run_on(&w[0], step_begin_yield);
    run_on(&w[migrate ? 1 : 0], step_child);
    run_on(&w[migrate ? 2 : 0], step_end_p);
    run_on(&w[0], step_back);
    for (int i = 0; i < 3; i++) worker_stop(&w[i]);
    jager_shutdown();
    st->struct_size = sizeof *st;
    assert_int_equal(jager_stats(st), JAGER_OK);
}

/* One span read back: its site index, recording thread, and the (thread, id) pairs of
 * itself and its parent, as a reader places it. */
typedef struct got {
    int site;
    uint32_t rec_thread, thread, id, parent_thread, parent_id;
    uint16_t type;
} got;

static int read_spans(const char *file, got *g, int cap)
{
    jager_reader *r;
    assert_int_equal(jager_reader_open(file, &r), JAGER_OK);
    jager_event ev;
    int n = 0;
    while (jager_reader_next(r, &ev) > 0) {
        if (ev.type != JAGER_EV_SPAN && ev.type != JAGER_EV_SPAN_X) continue;
        const jager_rec_span *sp = (const jager_rec_span *)ev.rec;
        int s = -1;
        for (int i = 0; i < NSITES; i++)
            if (site[i] == sp->h.aux) s = i;
        assert_true(s >= 0 && n < cap);
        got x = {s, ev.thread, ev.thread, sp->span_id, ev.thread, sp->parent_id, ev.type};
        if (ev.type == JAGER_EV_SPAN_X) {
            const jager_rec_span_x *sx = (const jager_rec_span_x *)ev.rec;
            x.thread = sx->begin_thread;
            x.parent_thread = sx->parent_thread;
        }
        g[n++] = x;
    }
    jager_reader_close(r);
    return n;
}

/* The log with body \p body: its recording thread, span id, site and aux. */
typedef struct got_log {
    uint32_t thread, span_id, site, aux;
} got_log;

static got_log read_log(const char *file, const char *body)
{
    jager_reader *r;
    assert_int_equal(jager_reader_open(file, &r), JAGER_OK);
    jager_event ev;
    got_log out = {0, 0, 0, 0};
    int found = 0;
    while (jager_reader_next(r, &ev) > 0) {
        if (ev.type != JAGER_EV_LOG) continue;
        const jager_rec_log *l = (const jager_rec_log *)ev.rec;
        const char *b;
        uint32_t len;
        assert_int_equal(jager_log_body(l, &b, &len, NULL, NULL), JAGER_OK);
        if (len != strlen(body) || memcmp(b, body, len)) continue;
        out = (got_log){ev.thread, l->span_id, l->site, l->h.aux};
        found++;
    }
    jager_reader_close(r);
    assert_int_equal(found, 1);
    return out;
}

/* An attribute or error record: its recording thread, the span it names as (thread that
 * numbers the id, id, site) and the first attribute's string value or the message. */
typedef struct got_ref {
    uint16_t type;
    uint32_t rec_thread, thread, id, site;
    int moved;
    char text[32];
} got_ref;

static int read_refs(const char *file, got_ref *g, int cap)
{
    jager_reader *r;
    assert_int_equal(jager_reader_open(file, &r), JAGER_OK);
    jager_event ev;
    int n = 0;
    while (jager_reader_next(r, &ev) > 0) {
        if (ev.type != JAGER_EV_SPAN_ATTR && ev.type != JAGER_EV_SPAN_ERROR) continue;
        assert_true(n < cap);
        uint32_t aux = ev.rec->aux, id;
        got_ref x = {ev.type, ev.thread, ev.thread, 0, aux, 0, ""};
        if (aux & JAGER_SPAN_REF_MOVED) {
            x.moved = 1;
            x.thread = JAGER_SPAN_REF_THREAD(aux);
            x.site = JAGER_SPAN_REF_SITE(aux);
        }
        if (ev.type == JAGER_EV_SPAN_ATTR) {
            const jager_rec_span_attr *a = (const jager_rec_span_attr *)ev.rec;
            const uint8_t *cur = (const uint8_t *)(a + 1), *end = (const uint8_t *)a + a->h.words * 8u;
            jager_attr_view v;
            assert_int_equal(jager_attr_next(&cur, end, &v), 1);
            assert_int_equal(v.kind, JAGER_ATTR_STR);
            snprintf(x.text, sizeof x.text, "%.*s", (int)v.str_len, v.str);
            id = a->span_id;
        } else {
            const jager_rec_span_error *e = (const jager_rec_span_error *)ev.rec;
            snprintf(x.text, sizeof x.text, "%.*s", (int)e->msg_len, (const char *)(e + 1));
            id = e->span_id;
        }
        x.id = id;
        g[n++] = x;
    }
    jager_reader_close(r);
    return n;
}

/* The spans keyed (thread, id) as \p ref names: exactly one, of site index \p want. */
static void names_only(const got *g, int n, const got_ref *ref, int want)
{
    int hits = 0;
    for (int i = 0; i < n; i++) {
        if (g[i].thread != ref->thread || g[i].id != ref->id) continue;
        hits++;
        assert_int_equal(g[i].site, want);
    }
    assert_int_equal(hits, 1);
}

static const got *one(const got *g, int n, int s, int nth)
{
    for (int i = 0; i < n; i++)
        if (g[i].site == s && nth-- == 0) return &g[i];
    fail_msg("no span %d of site %s", nth, names[s]);
    return NULL;
}

/* The merged call paths as site-index chains ("0/1/2") with their calls, sorted. */
typedef struct chain {
    char key[64];
    uint64_t calls;
} chain;

static int chain_cmp(const void *a, const void *b) { return strcmp(((const chain *)a)->key, ((const chain *)b)->key); }

static int merged_paths(const char *file, chain *out, int cap)
{
    jager_reader *r;
    assert_int_equal(jager_reader_open(file, &r), JAGER_OK);
    assert_int_equal(jager_reader_load_tables(r), JAGER_OK);
    size_t np = jager_reader_path_count(r);
    assert_true(np > 0 && np < 64);
    jager_path_stat v[64];
    char keys[64][64];
    int n = 0;
    for (size_t i = 0; i < np; i++) {
        v[i].struct_size = sizeof v[i];
        assert_int_equal(jager_reader_path(r, i, &v[i]), JAGER_OK);
        int s = -1;
        for (int k = 0; k < NSITES; k++)
            if (site[k] == v[i].site) s = k;
        if (s < 0) { /* the root or the overflow bucket: never used here */
            assert_int_equal(v[i].calls, 0);
            keys[i][0] = 0;
            continue;
        }
        keys[i][0] = 0;
        if (v[i].parent != JAGER_PATH_TOP) {
            assert_true(v[i].parent < i && strlen(keys[v[i].parent]) < 48);
            strcpy(keys[i], keys[v[i].parent]);
            strcat(keys[i], "/");
        }
        size_t at = strlen(keys[i]);
        keys[i][at] = (char)('0' + s);
        keys[i][at + 1] = 0;
        if (!v[i].calls) continue;
        int j = 0;
        while (j < n && strcmp(out[j].key, keys[i]) != 0) j++;
        if (j == n) {
            assert_true(n < cap);
            strcpy(out[n].key, keys[i]);
            out[n++].calls = 0;
        }
        out[j].calls += v[i].calls;
    }
    jager_reader_close(r);
    qsort(out, (size_t)n, sizeof *out, chain_cmp);
    return n;
}

static void test_migrated_parents(void **state)
{
    (void)state;
    const char *file = tu_tmp_path(".jgr");
    jager_stat st;
    record(file, 1, &st);
    assert_int_equal(st.spans_cross_thread, 2); /* S (on thread 2), P (on thread 3) */
    assert_int_equal(st.spans_total, 7);
    assert_int_equal(jg_task_moves_failed(), 0);

    got g[16];
    int n = read_spans(file, g, 16);
    assert_int_equal(n, 7); /* P S C Q R, B twice: none lost (and P counted once) */
    const got *b1 = one(g, n, SB, 0), *b2 = one(g, n, SB, 1), *p = one(g, n, SP, 0), *s = one(g, n, SS, 0),
              *c = one(g, n, SC, 0), *q = one(g, n, SQ, 0), *r = one(g, n, SR, 0);
    uint32_t t1 = b1->rec_thread;
    /* B's spans: plain roots of thread 1 */
    assert_int_equal(b1->type, JAGER_EV_SPAN);
    assert_int_equal(b1->parent_id, 0);
    assert_int_equal(b2->rec_thread, t1);
    assert_int_equal(b2->parent_id, 0);
    /* S: begun on thread 1 with its id there, ended on thread 2, under P of thread 1 */
    assert_int_equal(s->type, JAGER_EV_SPAN_X);
    assert_int_not_equal(s->rec_thread, t1);
    assert_int_equal(s->thread, t1);
    assert_int_equal(s->id, S.id);
    assert_int_equal(s->parent_thread, t1);
    assert_int_equal(s->parent_id, P.id);
    /* C: begun and ended on thread 2, under S of thread 1 */
    assert_int_equal(c->type, JAGER_EV_SPAN_X);
    assert_int_equal(c->rec_thread, s->rec_thread);
    assert_int_equal(c->thread, c->rec_thread);
    assert_int_equal(c->id, C.id);
    assert_int_equal(c->parent_thread, t1);
    assert_int_equal(c->parent_id, S.id);
    /* P: begun on thread 1, ended on thread 3, a root of its task */
    assert_int_equal(p->type, JAGER_EV_SPAN_X);
    assert_int_not_equal(p->rec_thread, t1);
    assert_int_not_equal(p->rec_thread, s->rec_thread);
    assert_int_equal(p->thread, t1);
    assert_int_equal(p->id, P.id);
    assert_int_equal(p->parent_id, 0);
    /* Q back on thread 1: a root (no stale P or S there), R under it */
    assert_int_equal(q->type, JAGER_EV_SPAN);
    assert_int_equal(q->rec_thread, t1);
    assert_int_equal(q->parent_id, 0);
    assert_int_equal(r->type, JAGER_EV_SPAN);
    assert_int_equal(r->parent_id, Q.id);

    /* A's log on thread 2 inside the adopted S names S as thread 1 numbers it (today's span
     * record's id), with thread 1 in aux; the one inside C, C plainly. */
    got_log ls = read_log(file, "in S"), lc = read_log(file, "in C");
    assert_int_equal(ls.thread, s->rec_thread);
    assert_int_equal(ls.span_id, S.id);
    assert_int_equal(ls.site, site[SS]);
    assert_true(ls.aux & JAGER_LOG_SPAN_MOVED);
    assert_int_equal(JAGER_LOG_SPAN_THREAD(ls.aux), t1);
    assert_int_equal(ls.aux & 0xffu, JAGER_SEV_INFO);
    assert_int_equal(lc.span_id, C.id);
    assert_int_equal(lc.site, site[SC]);
    assert_false(lc.aux & JAGER_LOG_SPAN_MOVED);
    assert_int_equal(cur_in_s, S.id);
    assert_int_equal(cur_site_s, site[SS]);
    assert_int_equal(cur_in_c, C.id);

    /* The attribute and the error set on thread 2 for S name S as thread 1 numbers it
     * (JAGER_SPAN_REF_MOVED, thread 1): keyed so, they reach S's span_x and no other span
     * (keyed by thread 2 they named no span at all). C's own attribute names C plainly. */
    got_ref refs[8];
    int nr = read_refs(file, refs, 8);
    assert_int_equal(nr, 3);
    for (int i = 0; i < nr; i++) {
        const got_ref *x = &refs[i];
        assert_int_equal(x->rec_thread, s->rec_thread);
        int of_s = strcmp(x->text, "C") != 0;
        if (of_s) {
            assert_true(!strcmp(x->text, x->type == JAGER_EV_SPAN_ATTR ? "S" : "S failed"));
            assert_int_equal(x->moved, 1);
            assert_int_equal(x->thread, t1);
            assert_int_equal(x->id, S.id);
            assert_int_equal(x->site, site[SS]);
        } else {
            assert_int_equal(x->type, JAGER_EV_SPAN_ATTR);
            assert_int_equal(x->moved, 0);
            assert_int_equal(x->thread, c->rec_thread);
            assert_int_equal(x->id, C.id);
            assert_int_equal(x->site, site[SC]);
        }
        names_only(g, n, x, of_s ? SS : SC);
    }

    /* The merged call paths equal those of the same program on one thread. */
    chain moved[16], still[16];
    int nm = merged_paths(file, moved, 16);
    const char *file1 = tu_tmp_path(".jgr");
    jager_stat st1;
    record(file1, 0, &st1);
    assert_int_equal(st1.spans_cross_thread, 0);
    int ns = merged_paths(file1, still, 16);
    assert_int_equal(nm, ns);
    assert_int_equal(nm, 6); /* P, P/S, P/S/C, B, Q, Q/R */
    for (int i = 0; i < nm; i++) {
        assert_string_equal(moved[i].key, still[i].key);
        assert_int_equal(moved[i].calls, still[i].calls);
    }
    assert_string_equal(moved[2].key, "0/1/2"); /* C under S under P */
    /* and without the move, every span is a plain one of thread 1 */
    n = read_spans(file1, g, 16);
    assert_int_equal(n, 7);
    for (int i = 0; i < n; i++) assert_int_equal(g[i].type, JAGER_EV_SPAN);
    remove(file);
    remove(file1);
}

/* No memory for the directory entry when A yields: its spans end as they did before the
 * directory existed (roots on the ending thread), the failure is counted, and thread 1's
 * stack keeps A's entries, so Q back there sits under S as before. */
static void test_migrate_no_memory(void **state)
{
    (void)state;
    const char *file = tu_tmp_path(".jgr");
    jager_stat st;
    uint64_t failed0 = jg_task_moves_failed();
    fail_publish = 1;
    record(file, 1, &st);
    fail_publish = 0;
    assert_int_equal(jg_task_moves_failed() - failed0, 1);
    assert_int_equal(st.spans_cross_thread, 2);
    got g[16];
    int n = read_spans(file, g, 16);
    assert_int_equal(n, 7);
    for (int i = 0; i < n; i++) assert_int_equal(g[i].type, JAGER_EV_SPAN);
    const got *s = one(g, n, SS, 0), *p = one(g, n, SP, 0), *c = one(g, n, SC, 0), *q = one(g, n, SQ, 0);
    assert_int_equal(s->parent_id, 0);
    assert_int_equal(p->parent_id, 0);
    assert_int_equal(c->parent_id, 0); /* A's first span on thread 2: a root of its task */
    assert_int_equal(q->parent_id, S.id);
    /* nothing adopted: A's log on thread 2 before C has no span of A there */
    got_log ls = read_log(file, "in S");
    assert_int_equal(ls.span_id, 0);
    assert_false(ls.aux & JAGER_LOG_SPAN_MOVED);
    assert_int_equal(cur_in_s, 0);
    /* nothing adopted: S's attribute and error on thread 2 are written as before (no flag) */
    got_ref refs[8];
    int nr = read_refs(file, refs, 8);
    assert_int_equal(nr, 3);
    for (int i = 0; i < nr; i++) assert_int_equal(refs[i].moved, 0);
    remove(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_migrated_parents),
        cmocka_unit_test(test_migrate_no_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
