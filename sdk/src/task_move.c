/* Tasks that move between threads (jager_task_set): a span a task began on one thread may
 * end on another after the task migrated. Nothing here is on a span's hot path: only a task
 * switch that leaves open spans behind, or resumes a task that did, comes here.
 *
 *   - Publish at switch-out: the thread's open entries of the task it leaves (stack order:
 *     site, the thread that began each and its id there) go into the task directory, a
 *     small hash under one mutex keyed by task id. A task with no open spans publishes
 *     nothing, so tasks that interleave on one thread without open spans take no lock.
 *   - Adopt at resume: a thread that resumes a task another thread published pushes the
 *     entries onto its own stack as foreign entries (JG_SITE_FOREIGN in the site half, ~task
 *     in stack_task: the span end's fast path never matches them) with a local id each, and
 *     remembers where each was begun. Their call-path nodes resolve in this thread's tree by
 *     the same site chain (paths.c walks a task's entries, foreign ones included). A task
 *     that resumes on the thread that published it just takes its directory entry back.
 *   - The drop mailbox: the adopter never writes another thread's stack; it posts "drop
 *     task X" for the publisher, which takes X's entries off its own stack in its next cold
 *     path (jager_task_set, an odd span end), so a task that comes back finds no stale
 *     parent there.
 * Entries carry the run's generation: what an earlier run left is ignored. */
#include <stdlib.h>
#include <string.h>

#include "containers.h"
#include "internal.h"

#define DIR_CAP 1024u  /* power of two; at most 3/4 full */
#define MAIL_CAP 1024u

typedef struct xentry {
    uint32_t site, thread, id;
} xentry;

typedef struct published {
    uint64_t task;
    uint32_t gen, publisher, n;
    xentry e[];
} published;

typedef struct post {
    uint64_t task;
    uint32_t thread, gen;
} post;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static published *dir[DIR_CAP];  /* linear probing, deletion by backward shift */
static uint32_t ndir;
static post mail[MAIL_CAP];
static uint32_t nmail;
/* read without the lock: nothing published, nothing posted (the common case) */
static _Atomic(uint32_t) dir_any, mail_any;
static _Atomic(uint64_t) failed;

uint64_t jg_task_moves_failed(void) { return atomic_load_explicit(&failed, memory_order_relaxed); }

static uint32_t slot_of(uint64_t task) { return (uint32_t)((task * 0x9E3779B97F4A7C15ull) >> 32) & (DIR_CAP - 1); }

static uint32_t gen_now(void) { return atomic_load_explicit(&jg_generation, memory_order_relaxed); }

/* Under the lock: the slot holding \p task, or DIR_CAP. */
static uint32_t dir_find(uint64_t task)
{
    for (uint32_t s = slot_of(task); dir[s]; s = (s + 1) & (DIR_CAP - 1))
        if (dir[s]->task == task) return s;
    return DIR_CAP;
}

/* Under the lock: empty slot \p s, moving later entries of its probe run back. */
static void dir_take(uint32_t s)
{
    dir[s] = NULL;
    ndir--;
    for (uint32_t i = (s + 1) & (DIR_CAP - 1); dir[i]; i = (i + 1) & (DIR_CAP - 1)) {
        uint32_t h = slot_of(dir[i]->task);
        /* the entry at i may move to s when its home h is not cyclically in (s, i] */
        int stays = s < i ? (h > s && h <= i) : (h > s || h <= i);
        if (stays) continue;
        dir[s] = dir[i];
        dir[i] = NULL;
        s = i;
    }
    atomic_store_explicit(&dir_any, ndir, memory_order_relaxed);
}

/* Under the lock: put \p p in, replacing an older entry of its task; 0 when full. */
static int dir_put(published *p)
{
    uint32_t s = dir_find(p->task);
    if (s != DIR_CAP) {
        free(dir[s]);
        dir[s] = p;
        return 1;
    }
    if (ndir + 1 > DIR_CAP / 4 * 3) return 0;
    for (s = slot_of(p->task); dir[s]; s = (s + 1) & (DIR_CAP - 1)) {
    }
    dir[s] = p;
    ndir++;
    atomic_store_explicit(&dir_any, ndir, memory_order_relaxed);
    return 1;
}

const jg_foreign *jg_foreign_of(const jg_tls *t, uint32_t local_id)
{
    for (uint32_t i = t->nforeign; i-- > 0;)
        if (t->foreign[i].local_id == local_id) return &t->foreign[i];
    return NULL;
}

uint32_t jg_task_top_span(const jg_tls *t, jager_site *site, uint32_t *begin_thread)
{
    int64_t top = jg_stack_top_of_task_x(t, jg_stack_top(t), t->task);
    *site = 0;
    *begin_thread = t->thread;
    if (top < 0) return 0;
    uint32_t d = (uint32_t)top;
    *site = jg_stack_site(t, d) & ~JG_SITE_FOREIGN;
    if (!jg_stack_foreign(t, d)) return jg_stack_id(t, d);
    const jg_foreign *f = jg_foreign_of(t, jg_stack_id(t, d));
    if (!f) return *site = 0, 0;
    *begin_thread = f->thread;
    return f->id;
}

uint32_t jg_span_ref_aux(const jg_tls *t, jager_site site, uint32_t id)
{
    if (!t->nforeign) return site; /* nothing adopted: every span it names is its own */
    /* Its own open span first (as a span end looks), then an adopted one. */
    for (uint32_t k = t->depth; k-- > 0;)
        if (jg_stack_has(t, k) && !jg_stack_foreign(t, k) && jg_stack_site(t, k) == site && jg_stack_id(t, k) == id)
            return site;
    for (uint32_t k = t->depth; k-- > 0;) {
        if (!jg_stack_has(t, k) || !jg_stack_foreign(t, k)) continue;
        if ((jg_stack_site(t, k) & ~JG_SITE_FOREIGN) != site) continue;
        const jg_foreign *f = jg_foreign_of(t, jg_stack_id(t, k));
        if (!f || f->id != id) continue;
        /* a begin thread the aux bits cannot hold: keyed as before (the recording thread) */
        return f->thread <= 0x1FFu && site <= 0x3FFFFFu ? site | JAGER_SPAN_REF_MOVED | f->thread << 22 : site;
    }
    return site;
}

void jg_foreign_forget(jg_tls *t, uint32_t local_id)
{
    for (uint32_t i = t->nforeign; i-- > 0;) {
        if (t->foreign[i].local_id != local_id) continue;
        t->foreign[i] = t->foreign[--t->nforeign];
        return;
    }
}

/* Take every open entry of \p task (its own and foreign ones) off \p t's stack. */
static void drop_task(jg_tls *t, uint64_t task)
{
    for (int64_t k = jg_stack_top(t); k >= 0; k--) {
        if (jg_stack_task_real(t, (uint32_t)k) != task) continue;
        if (jg_stack_foreign(t, (uint32_t)k)) jg_foreign_forget(t, jg_stack_id(t, (uint32_t)k));
        jg_stack_remove(t, (uint32_t)k);
    }
}

void jg_task_mail(jg_tls *t)
{
    if (!atomic_load_explicit(&mail_any, memory_order_acquire)) return;
    uint64_t mine[16];
    uint32_t n = 0, gen = gen_now();
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < nmail;) {
        if (mail[i].gen != gen || (mail[i].thread == t->thread && n < 16)) {
            if (mail[i].gen == gen) mine[n++] = mail[i].task;
            mail[i] = mail[--nmail];
        } else {
            i++;
        }
    }
    atomic_store_explicit(&mail_any, nmail, memory_order_release);
    pthread_mutex_unlock(&lock);
    for (uint32_t i = 0; i < n; i++) drop_task(t, mine[i]);
    if (n == 16) jg_task_mail(t); /* more than one batch */
}

/* The open entries of \p task on \p t, into the directory. */
static void publish(jg_tls *t, uint64_t task)
{
    int64_t top = jg_stack_top(t);
    if (jg_stack_top_of_task_x(t, top, task) < 0) return; /* nothing open: nothing to do */
    uint32_t n = 0;
    for (int64_t i = 0; i <= top; i++) n += jg_stack_task_real(t, (uint32_t)i) == task;
    published *p = t->deep_hole ? NULL : malloc(sizeof *p + n * sizeof p->e[0]);
    if (!p) {
        atomic_fetch_add_explicit(&failed, 1, memory_order_relaxed);
        return;
    }
    p->task = task;
    p->gen = gen_now();
    p->publisher = t->thread;
    p->n = 0;
    for (int64_t i = 0; i <= top; i++) {
        uint32_t d = (uint32_t)i;
        if (jg_stack_task_real(t, d) != task) continue;
        xentry *e = &p->e[p->n++];
        e->site = jg_stack_site(t, d) & ~JG_SITE_FOREIGN;
        const jg_foreign *f = jg_stack_foreign(t, d) ? jg_foreign_of(t, jg_stack_id(t, d)) : NULL;
        e->thread = f ? f->thread : t->thread;
        e->id = f ? f->id : jg_stack_id(t, d);
    }
    pthread_mutex_lock(&lock);
    int ok = dir_put(p);
    pthread_mutex_unlock(&lock);
    if (!ok) {
        free(p);
        atomic_fetch_add_explicit(&failed, 1, memory_order_relaxed);
    }
}

/* Push \p p's entries onto \p t's stack (task \p task): its own spans back as they were,
 * the others' as foreign entries. 0 when they do not fit (memory, depth). */
static int adopt(jg_tls *t, uint64_t task, const published *p)
{
    uint32_t nx = 0;
    for (uint32_t i = 0; i < p->n; i++) nx += p->e[i].thread != t->thread;
    if (t->deep_hole || t->depth + p->n > JG_MAX_DEPTH) return 0;
    if (t->nforeign + nx > t->foreign_cap) {
        size_t cap = t->foreign_cap;
        jg_foreign *g = jg_grow(t->foreign, &cap, (size_t)t->nforeign + nx, sizeof *g, 8);
        if (!g) return 0;
        t->foreign = g;
        t->foreign_cap = (uint32_t)cap;
    }
    for (uint32_t i = 0; i < p->n; i++) {
        const xentry *e = &p->e[i];
        uint32_t d = t->depth++;
        if (e->thread == t->thread) {
            t->stack_sid[d] = (uint64_t)e->site | (uint64_t)e->id << 32;
            t->stack_task[d] = task;
        } else {
            uint32_t id = ++t->next_span;
            if (id == 0) id = ++t->next_span;
            t->stack_sid[d] = (uint64_t)(e->site | JG_SITE_FOREIGN) | (uint64_t)id << 32;
            t->stack_task[d] = ~task;
            t->foreign[t->nforeign++] = (jg_foreign){id, e->thread, e->id};
        }
        t->stack_node_id[d] = 0; /* its node resolves anew, by the site chain */
    }
    return 1;
}

/* \p task resumes on \p t: take its directory entry; adopt it when another thread
 * published it, and tell that thread to drop its entries. */
static void resume(jg_tls *t, uint64_t task)
{
    if (!atomic_load_explicit(&dir_any, memory_order_relaxed)) return;
    pthread_mutex_lock(&lock);
    uint32_t s = dir_find(task);
    published *p = s != DIR_CAP ? dir[s] : NULL;
    if (p) dir_take(s);
    int posted = 0;
    if (p && p->gen == gen_now() && p->publisher != t->thread && nmail < MAIL_CAP) {
        mail[nmail++] = (post){task, p->publisher, p->gen};
        atomic_store_explicit(&mail_any, nmail, memory_order_release);
        posted = 1;
    }
    pthread_mutex_unlock(&lock);
    if (!p) return;
    if (p->gen == gen_now() && p->publisher != t->thread) {
        jg_task_mail(t); /* this thread's own stale entries of the task first */
        if (!posted || !adopt(t, task, p)) atomic_fetch_add_explicit(&failed, 1, memory_order_relaxed);
    }
    free(p);
}

void jg_task_switch(jg_tls *t, uint64_t to)
{
    jg_task_mail(t);
    if (t->task) publish(t, t->task);
    if (to) resume(t, to);
}

void jg_task_moves_reset(void)
{
    pthread_mutex_lock(&lock);
    for (uint32_t s = 0; s < DIR_CAP; s++) {
        free(dir[s]);
        dir[s] = NULL;
    }
    ndir = 0;
    nmail = 0;
    atomic_store_explicit(&dir_any, 0, memory_order_relaxed);
    atomic_store_explicit(&mail_any, 0, memory_order_relaxed);
    pthread_mutex_unlock(&lock);
}
