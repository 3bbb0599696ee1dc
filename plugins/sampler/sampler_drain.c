/* sampler_drain.c — off the handler: every slot's samples become sampler.sample records
 * (stack interned, new native addresses named), and the plugin thread that does it every
 * few milliseconds and rescans the thread list every scan_ms.
 *
 * The records are emitted from the plugin thread (its ring, its thread index), so each
 * carries the sampled thread's OS id; readers map it to the thread's Jäger index through
 * the thread table when that thread records too. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler_internal.h"

#define DRAIN_MS 10u

void smp_emit_thread(smp_state *st, smp_slot *s, uint64_t cpu_ns)
{
    uint64_t f[8] = {
        (uint64_t)s->tid,
        s->drained,
        atomic_load(&s->lost),
        cpu_ns,
        st->period_ns ? cpu_ns / st->period_ns : 0,
        atomic_load(&s->truncated),
        atomic_load(&s->broken),
        atomic_load(&s->handler_ns),
    };
    st->host->emit(st->t_thread, 0, f, 8);
}

static void drain_slot(smp_state *st, smp_slot *s, int *refreshed)
{
    uint64_t h = atomic_load_explicit(&s->head, memory_order_acquire);
    uint64_t t = atomic_load_explicit(&s->tail, memory_order_relaxed);
    for (; t < h; t++) {
        const smp_entry *e = (const smp_entry *)(const void *)(s->buf + (size_t)(t % s->cap) * st->entry_bytes);
        uint32_t n = e->n;
        if (n > st->depth) n = st->depth;
        memcpy(st->ips_tmp, e->ips, n * sizeof(uint64_t));
        uint16_t flags = e->flags;
        if (!st->use_libunwind) n = smp_code_cut(st, st->ips_tmp, n, refreshed, &flags);
        uint64_t f[6];
        f[0] = st->host->stack_intern(st->ips_tmp, n);
        f[1] = (uint64_t)s->tid;
        f[2] = e->site;
        f[3] = e->weight;
        f[4] = (uint64_t)e->weight * st->period_ns;
        f[5] = flags;
        uint64_t when = e->time_ns;
        /* the entry is copied: hand it back before the slower work below */
        atomic_store_explicit(&s->tail, t + 1, memory_order_release);
        st->host->emit(st->t_sample, when, f, 6);
        smp_symbols_add(st, st->ips_tmp, n);
        s->drained++;
        st->emitted++;
        st->weight_total += e->weight;
    }
}

void smp_drain(smp_state *st)
{
    pthread_mutex_lock(&st->drain_lock);
    int refreshed = 0; /* the code map is re-read at most once per drain */
    for (uint32_t i = 0; i < st->max_threads; i++) {
        smp_slot *s = &st->slots[i];
        if (s->buf && atomic_load_explicit(&s->head, memory_order_acquire) != atomic_load(&s->tail))
            drain_slot(st, s, &refreshed);
    }
    pthread_mutex_unlock(&st->drain_lock);
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void *thread_main(void *arg)
{
    smp_state *st = arg;
    pthread_setname_np(pthread_self(), "jager-sampler");
    st->own_tid = (int)syscall(SYS_gettid);
    /* This thread is never sampled, and never runs the handler for others. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, st->signo);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    uint64_t next_scan = mono_ms() + st->scan_ms;
    while (!atomic_load(&st->stop_requested)) {
        struct pollfd p = {.fd = st->wake_fd, .events = POLLIN};
        int rc = poll(&p, 1, (int)DRAIN_MS);
        if (rc > 0 && (p.revents & POLLIN)) {
            uint64_t n;
            while (read(st->wake_fd, &n, sizeof n) < 0 && errno == EINTR) {}
        }
        if (atomic_load(&st->stop_requested)) break;
        uint64_t now = mono_ms();
        if (now >= next_scan || atomic_load(&st->maps_stale)) {
            smp_maps_refresh(st);
            smp_threads_scan(st);
            next_scan = now + st->scan_ms;
        }
        smp_drain(st);
    }
    return NULL;
}

jager_status smp_thread_start(smp_state *st)
{
    atomic_store(&st->stop_requested, 0);
    if (st->wake_fd < 0) {
        st->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (st->wake_fd < 0) return JAGER_E_NOMEM;
    }
    if (pthread_create(&st->thread, NULL, thread_main, st) != 0) return JAGER_E_NOMEM;
    st->thread_running = 1;
    return JAGER_OK;
}

void smp_thread_stop(smp_state *st)
{
    if (!st->thread_running) return;
    atomic_store(&st->stop_requested, 1);
    uint64_t one = 1;
    ssize_t w = write(st->wake_fd, &one, sizeof one);
    (void)w;
    pthread_join(st->thread, NULL);
    st->thread_running = 0;
}
