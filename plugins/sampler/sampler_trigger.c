/* sampler_trigger.c — one trigger per thread, and the thread list.
 *
 * perf mode: a CPU-clock software event per thread (perf_event_open, user space only, so
 * perf_event_paranoid ≤ 2 allows it), its fd set to signal that thread (F_SETOWN_EX
 * F_OWNER_TID, F_SETSIG) at every overflow. timer mode: a POSIX timer on the thread's own
 * CPU-time clock (timer_create, SIGEV_THREAD_ID), the slot in the signal's value; a timer
 * queues at most one instance and counts overruns, which the sample's weight carries.
 * Both count CPU time, so a sleeping thread costs nothing and gets no samples.
 *
 * Threads are found by listing /proc/self/task at start and every scan_ms, so threads that
 * never emit an event (Julia's, a BLAS pool) are sampled too; a thread that lives shorter
 * than one scan may be missed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler_internal.h"

/* A thread's CPU-time clock (the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)). */
static clockid_t thread_clock(int tid) { return (clockid_t)((~(unsigned)tid << 3) | 6u); }

uint64_t smp_thread_cpu_ns(int tid)
{
    struct timespec ts;
    if (clock_gettime(thread_clock(tid), &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int perf_open(smp_state *st, int tid)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.sample_period = st->period_ns;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.wakeup_events = 1;
    return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int read_int_file(const char *path, int def)
{
    FILE *f = fopen(path, "re");
    int v = def;
    if (f) {
        if (fscanf(f, "%d", &v) != 1) v = def;
        fclose(f);
    }
    return v;
}

void smp_trigger_choose(smp_state *st)
{
    int paranoid = read_int_file("/proc/sys/kernel/perf_event_paranoid", 99);
    if (st->mode_wanted == SMP_MODE_TIMER) {
        st->mode = SMP_MODE_TIMER;
        snprintf(st->mode_reason, sizeof st->mode_reason, "asked for (JAGER_SAMPLER_MODE=timer)");
        return;
    }
    int fd = perf_open(st, 0);
    if (fd >= 0) {
        close(fd);
        st->mode = SMP_MODE_PERF;
        snprintf(st->mode_reason, sizeof st->mode_reason, "perf_event_open permitted (perf_event_paranoid=%d)", paranoid);
        return;
    }
    int e = errno;
    st->mode = SMP_MODE_TIMER;
    snprintf(st->mode_reason, sizeof st->mode_reason, "perf_event_open refused: %s (perf_event_paranoid=%d)%s",
             strerror(e), paranoid, st->mode_wanted == SMP_MODE_PERF ? "; JAGER_SAMPLER_MODE=perf cannot be honoured" : "");
}

/* Arm the trigger of a fresh slot for tid; 0 on success, else an errno. */
static int arm(smp_state *st, smp_slot *s, int tid)
{
    s->tid = tid;
    s->fd = -1;
    s->has_timer = 0;
    s->cpu_start_ns = smp_thread_cpu_ns(tid);
    s->cpu_last_ns = s->cpu_start_ns;
    if (st->mode == SMP_MODE_PERF) {
        int fd = perf_open(st, tid);
        if (fd < 0) return errno;
        struct f_owner_ex own = {.type = F_OWNER_TID, .pid = tid};
        if (fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) != 0 || fcntl(fd, F_SETSIG, st->signo) != 0 ||
            fcntl(fd, F_SETOWN_EX, &own) != 0) {
            int e = errno;
            close(fd);
            return e;
        }
        s->fd = fd;
        if ((unsigned)fd < SMP_FD_TABLE) atomic_store_explicit(&st->by_fd[fd], s, memory_order_release);
        atomic_store_explicit(&s->live, 1, memory_order_release);
        if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
            int e = errno;
            smp_slot_disarm(st, s);
            return e;
        }
        return 0;
    }
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = st->signo;
    sev.sigev_value.sival_ptr = s;
    sev._sigev_un._tid = tid;
    if (timer_create(thread_clock(tid), &sev, &s->timer) != 0) return errno;
    s->has_timer = 1;
    atomic_store_explicit(&s->live, 1, memory_order_release);
    struct itimerspec its;
    its.it_interval.tv_sec = (time_t)(st->period_ns / 1000000000u);
    its.it_interval.tv_nsec = (long)(st->period_ns % 1000000000u);
    its.it_value = its.it_interval;
    if (timer_settime(s->timer, 0, &its, NULL) != 0) {
        int e = errno;
        smp_slot_disarm(st, s);
        return e;
    }
    return 0;
}

void smp_slot_disarm(smp_state *st, smp_slot *s)
{
    if (s->fd >= 0) {
        ioctl(s->fd, PERF_EVENT_IOC_DISABLE, 0);
        if ((unsigned)s->fd < SMP_FD_TABLE) atomic_store_explicit(&st->by_fd[s->fd], NULL, memory_order_release);
        atomic_store_explicit(&s->live, 0, memory_order_release);
        close(s->fd);
        s->fd = -1;
    }
    if (s->has_timer) {
        timer_delete(s->timer);
        s->has_timer = 0;
    }
    atomic_store_explicit(&s->live, 0, memory_order_release);
}

/* A free slot with its buffer (allocated and touched once, reused after). Slots whose
 * samples the plugin thread has not drained yet are not free. */
static smp_slot *slot_take(smp_state *st)
{
    for (uint32_t i = 0; i < st->max_threads; i++) {
        smp_slot *s = &st->slots[i];
        if (s->tid || atomic_load(&s->live)) continue;
        if (!s->buf) {
            s->buf = calloc(st->buffer, st->entry_bytes);
            if (!s->buf) return NULL;
            memset(s->buf, 0, (size_t)st->buffer * st->entry_bytes);
            s->cap = st->buffer;
        }
        s->index = i;
        atomic_store(&s->fired, 0);
        atomic_store(&s->lost, 0);
        atomic_store(&s->truncated, 0);
        atomic_store(&s->broken, 0);
        atomic_store(&s->no_bounds, 0);
        atomic_store(&s->leaf_only, 0);
        atomic_store(&s->handler_ns, 0);
        atomic_store(&s->slow_walks, 0);
        atomic_store(&s->head, 0);
        atomic_store(&s->tail, 0);
        s->drained = 0;
        return s;
    }
    return NULL;
}

void smp_threads_scan(smp_state *st)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return;
    for (uint32_t i = 0; i < st->max_threads; i++) st->slots[i].seen = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char *end = NULL;
        long tid = strtol(de->d_name, &end, 10);
        if (!end || *end || tid <= 0 || tid == st->own_tid) continue;
        smp_slot *s = NULL;
        for (uint32_t i = 0; i < st->max_threads; i++)
            if (st->slots[i].tid == (int32_t)tid) {
                s = &st->slots[i];
                break;
            }
        if (s) {
            s->seen = 1;
            uint64_t c = smp_thread_cpu_ns((int)tid);
            if (c) s->cpu_last_ns = c;
            continue;
        }
        s = slot_take(st);
        if (!s) {
            st->threads_failed++;
            continue;
        }
        int e = arm(st, s, (int)tid);
        if (e == 0) {
            s->seen = 1;
            st->threads_seen++;
        } else if (e != ESRCH) { /* ESRCH: it exited between the listing and now */
            st->threads_failed++;
            st->trigger_errno = e;
        }
        if (e) s->tid = 0;
    }
    closedir(d);
    /* Threads gone: disarm, drain what they left, report them, free the slot. */
    for (uint32_t i = 0; i < st->max_threads; i++) {
        smp_slot *s = &st->slots[i];
        if (!s->tid || s->seen) continue;
        /* the thread's clock is gone with it: its CPU time as the last scan read it */
        uint64_t cpu = s->cpu_last_ns > s->cpu_start_ns ? s->cpu_last_ns - s->cpu_start_ns : 0;
        smp_slot_disarm(st, s);
        smp_drain(st);
        pthread_mutex_lock(&st->drain_lock);
        smp_emit_thread(st, s, cpu);
        st->retired_fired += atomic_load(&s->fired);
        st->retired_lost += atomic_load(&s->lost);
        st->retired_truncated += atomic_load(&s->truncated);
        st->retired_broken += atomic_load(&s->broken);
        st->retired_no_bounds += atomic_load(&s->no_bounds);
        st->retired_leaf_only += atomic_load(&s->leaf_only);
        st->retired_handler_ns += atomic_load(&s->handler_ns);
        st->retired_slow_walks += atomic_load(&s->slow_walks);
        s->tid = 0;
        pthread_mutex_unlock(&st->drain_lock);
    }
}

void smp_threads_disarm_all(smp_state *st)
{
    for (uint32_t i = 0; i < st->max_threads; i++)
        if (st->slots[i].tid) smp_slot_disarm(st, &st->slots[i]);
}
