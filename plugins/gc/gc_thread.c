/* gc_thread.c — the plugin thread.
 *
 * In zero-code mode (libjager preloaded) the plugin starts before Julia has initialised:
 * the thread polls jl_is_initialized every millisecond and registers the callbacks as
 * soon as it returns 1 (collections during Julia's start-up before that are missed).
 * Then it drains the pause queue whenever the post-GC callback wakes it (an eventfd:
 * one write(2), no lock, no allocation in the callback) and emits a gc.sample every
 * interval_ms, so pauses reach the recording, and their stacks the stack table, within
 * microseconds of each collection even if nobody calls jager_flush(). */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "gc_internal.h"

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Sleep up to \p ms or until woken; returns 1 when stop was requested. */
static int wait_or_stop(gc_state *st, uint64_t ms)
{
    if (atomic_load(&st->stop_requested)) return 1;
    struct pollfd p = {.fd = st->wake_fd, .events = POLLIN};
    int rc = poll(&p, 1, ms > 60000 ? 60000 : (int)ms);
    if (rc > 0 && (p.revents & POLLIN)) {
        uint64_t n;
        while (read(st->wake_fd, &n, sizeof n) < 0 && errno == EINTR) {}
    }
    return atomic_load(&st->stop_requested);
}

static void *thread_main(void *arg)
{
    gc_state *st = arg;
    pthread_setname_np(pthread_self(), "jager-gc");
    while (!atomic_load(&st->hooked)) {
        if (gc_julia_ready(&st->jl)) {
            gc_hooks_install(st);
            st->host->log(st->self, JAGER_DIAG_DEBUG, "Julia initialised: GC callbacks registered");
            break;
        }
        if (wait_or_stop(st, 1)) return NULL;
    }
    uint64_t next_sample = 0;
    for (;;) {
        uint64_t now = mono_ms();
        if (now >= next_sample) {
            gc_sample(st);
            next_sample = now + st->interval_ms;
            now = mono_ms();
        }
        gc_drain(st);
        if (wait_or_stop(st, next_sample > now ? next_sample - now : 0)) break;
    }
    return NULL;
}

void gc_thread_wake(gc_state *st)
{
    uint64_t one = 1;
    if (st->wake_fd >= 0 && (st->eager || atomic_load(&st->stop_requested))) {
        ssize_t w = write(st->wake_fd, &one, sizeof one); /* EAGAIN (counter full) still wakes */
        (void)w;
    }
}

jager_status gc_thread_start(gc_state *st)
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

void gc_thread_stop(gc_state *st)
{
    if (!st->thread_running) return;
    atomic_store(&st->stop_requested, 1);
    gc_thread_wake(st);
    pthread_join(st->thread, NULL);
    st->thread_running = 0;
}
