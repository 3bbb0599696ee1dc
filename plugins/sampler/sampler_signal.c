/* sampler_signal.c — the sampling signal and its handler.
 *
 * The signal is a real-time one (never SIGUSR1/SIGUSR2, which Julia uses to profile and
 * to suspend threads, nor SIGSEGV, its GC safepoint): by default the first of
 * SIGRTMIN+4 … SIGRTMAX that nobody has a handler for, or the one option `signal` names.
 * An earlier handler of that signal is kept and called for every instance that is not
 * ours (not from one of our timers, not from one of our perf fds).
 *
 * The handler is async-signal-safe: no lock, no allocation, no call but the host's
 * now_ns (TSC or clock_gettime) and open_sites (reads the thread's own span stack). It
 * writes one entry into the interrupted thread's slot — a buffer only that thread's
 * handler writes (the signal is blocked while its handler runs, and each trigger signals
 * one thread) and only the plugin thread reads — so whatever the thread was doing, a
 * half-written ring record included, is left untouched.
 *
 * The walk follows the frame-pointer chain from the interrupted registers. Every load is
 * bounded to the anonymous readable region that holds the interrupted stack pointer (the
 * snapshot of sampler_maps.c), above the stack pointer, with frames strictly increasing,
 * so a chain broken by code built without frame pointers ends the walk instead of
 * faulting. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "sampler_internal.h"

static struct sigaction g_prev;
static int g_installed;
static _Atomic(int) g_armed;
static _Atomic(int) g_active;
static _Atomic(uint64_t) g_chained;
static int g_pinned;
static pid_t g_pid;

/* 1 when [addr, addr+16) can be read now: one process_vm_readv of this process, which
 * fails with EFAULT instead of faulting. Called once per stack and snapshot generation on
 * the last bytes of the stack's mapping, so a mapping that shrank, went away or lost
 * PROT_READ since the snapshot ends the walk cleanly instead of faulting. */
static int readable16(uint64_t addr, uint64_t out[2])
{
    struct iovec local = {.iov_base = out, .iov_len = 16};
    struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = 16};
    return process_vm_readv(g_pid, &local, 1, &remote, 1, 0) == 16;
}

static inline void bump(_Atomic(uint64_t) *c, uint64_t by)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + by, memory_order_relaxed);
}

static void chain(int sig, siginfo_t *si, void *uc)
{
    bump(&g_chained, 1);
    if (g_prev.sa_flags & SA_SIGINFO) {
        if (g_prev.sa_sigaction) g_prev.sa_sigaction(sig, si, uc);
    } else if (g_prev.sa_handler != SIG_DFL && g_prev.sa_handler != SIG_IGN && g_prev.sa_handler) {
        g_prev.sa_handler(sig);
    }
    /* SIG_DFL of a real-time signal would end the process: an instance that is not ours
     * arriving while we own the signal is dropped instead (docs/sampler.md). */
}

/* The slot an instance belongs to, or NULL when it is not ours. */
static smp_slot *slot_of(smp_state *st, const siginfo_t *si)
{
    if (si->si_code == SI_TIMER) {
        uintptr_t p = (uintptr_t)si->si_value.sival_ptr, lo = (uintptr_t)st->slots;
        uintptr_t hi = lo + (uintptr_t)st->max_threads * sizeof(smp_slot);
        if (!lo || p < lo || p >= hi || (p - lo) % sizeof(smp_slot)) return NULL;
        return (smp_slot *)p;
    }
    if (si->si_code > 0 && si->si_code <= POLL_HUP) { /* F_SETSIG from a perf fd: si_fd is set */
        int fd = si->si_fd;
        if (fd >= 0 && (unsigned)fd < SMP_FD_TABLE) {
            smp_slot *s = atomic_load_explicit(&st->by_fd[fd], memory_order_acquire);
            return s && s->fd == fd ? s : NULL;
        }
        for (uint32_t i = 0; i < st->max_threads; i++)
            if (st->slots[i].fd == fd && atomic_load_explicit(&st->slots[i].live, memory_order_acquire)) return &st->slots[i];
    }
    return NULL;
}

/* Walk with libunwind's local unwinder from the signal's context (Julia processes: Julia 1.5
 * compiles without frame pointers and registers its JIT code's unwind tables with this same
 * libunwind, and its own profiler unwinds with it from a signal handler too). */
static uint32_t walk_unw(smp_state *st, ucontext_t *uc, smp_entry *e)
{
    unw_cursor_t c;
    uint32_t n = 0, depth = st->depth, flags = 0;
    if (unw_init_local2(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) != 0) {
#if defined(__x86_64__)
        e->ips[0] = (uint64_t)uc->uc_mcontext.gregs[REG_RIP] + 1;
#endif
        e->n = 1;
        return SMP_F_BROKEN | SMP_F_LEAF_ONLY;
    }
    for (;;) {
        unw_word_t ip = 0;
        unw_get_reg(&c, UNW_REG_IP, &ip);
        if (!ip) break;
        e->ips[n] = n == 0 ? (uint64_t)ip + 1 : (uint64_t)ip;
        n++;
        if (n >= depth) {
            flags |= SMP_F_TRUNCATED;
            break;
        }
        int r = unw_step(&c);
        if (r == 0) break;
        if (r < 0) {
            flags |= SMP_F_BROKEN;
            break;
        }
    }
    if (n == 0) e->ips[n++] = 1;
    if (n == 1) flags |= SMP_F_LEAF_ONLY;
    e->n = (uint16_t)n;
    return flags;
}

/* Walk with libunwind's fast trace (Julia processes by default): unw_backtrace from the
 * handler itself, through the kernel's signal frame (the trace reads the interrupted
 * registers from the ucontext there) into the interrupted code. Each frame's unwind rule
 * is looked up once per address and kept in libunwind's per-thread trace cache, so a walk
 * over code seen before costs a few loads per frame instead of a DWARF lookup and CFA
 * evaluation in every unw_step (30-35 µs for a Julia stack with unw_step, docs/sampler.md).
 * libunwind documents unw_backtrace as usable in a signal handler; where a frame is not
 * of a kind the trace knows, unw_backtrace itself falls back to unw_step for that walk.
 * The frames above the interrupted one (this handler, the signal trampoline) are cut at
 * the interrupted pc; a trace where it does not appear returns 0 and the caller walks
 * with unw_step from the signal context instead. */
static int walk_bt(smp_state *st, smp_slot *s, const ucontext_t *uc, smp_entry *e, uint32_t *flags_out)
{
#if defined(__x86_64__)
    uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    uint64_t pc = (uint64_t)uc->uc_mcontext.pc;
#endif
    uint32_t depth = st->depth, room = depth + SMP_UNW_EXTRA;
    void **buf = (void **)(void *)e->ips; /* room entries: entry_bytes has SMP_UNW_EXTRA more */
    int n = unw_backtrace(buf, (int)room);
    if (n <= 0) return 0;
    uint32_t k = 0;
    while (k < (uint32_t)n && k < SMP_UNW_EXTRA && (uint64_t)(uintptr_t)buf[k] != pc) k++;
    if (k >= (uint32_t)n || k >= SMP_UNW_EXTRA) {
        bump(&s->slow_walks, 1);
        return 0;
    }
    uint32_t m = (uint32_t)n - k, flags = 0;
    if (m > depth) {
        m = depth;
        flags |= SMP_F_TRUNCATED;
    } else if ((uint32_t)n == room) {
        flags |= SMP_F_TRUNCATED;
    }
    memmove(e->ips, e->ips + k, (size_t)m * sizeof(uint64_t));
    e->ips[0] = pc + 1;
    if (m == 1) flags |= SMP_F_LEAF_ONLY;
    e->n = (uint16_t)m;
    *flags_out = flags;
    return 1;
}

#if !defined(__SANITIZE_THREAD__) /* TSan builds never trace (smp_fast_trace_prime) */
/* Where libunwind's thread-local trace cache lives. The trace reads it through
 * __tls_get_addr; when libunwind came in with a dlopen (this plugin's, or Julia 1.6+'s
 * loader opening libjulia) that block is allocated with malloc on each thread's first
 * access, so a first trace in a handler that interrupted malloc deadlocks on malloc's lock
 * (seen: the collector thread sampled inside realloc). A fresh thread that never touched
 * libunwind tells which: dl_iterate_phdr gives the calling thread's block of each module,
 * or NULL while it is not allocated (static TLS, loaded at start-up, always is). */
typedef struct tls_probe {
    uintptr_t fn;
    int found, has_tls, allocated;
} tls_probe;

static int tls_probe_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    tls_probe *p = arg;
    for (int k = 0; k < info->dlpi_phnum; k++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[k];
        uintptr_t lo = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
        if (ph->p_type != PT_LOAD || p->fn < lo || p->fn >= lo + (uintptr_t)ph->p_memsz) continue;
        p->found = 1;
        p->has_tls = info->dlpi_tls_modid != 0;
        p->allocated = info->dlpi_tls_data != NULL;
        return 1;
    }
    return 0;
}

static void *tls_probe_main(void *arg)
{
    dl_iterate_phdr(tls_probe_cb, arg);
    return NULL;
}

/* 1 when every thread has libunwind's thread-local block from its start (or libunwind has
 * none), 0 when a thread's first trace may allocate it, -1 when the probe could not run. */
static int unwind_tls_static(void)
{
    tls_probe p = {.fn = (uintptr_t)(void *)unw_backtrace};
    pthread_t t;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* the probe takes no signal, sampling or other */
    int e = pthread_create(&t, NULL, tls_probe_main, &p);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0) return -1;
    pthread_join(t, NULL);
    if (!p.found) return -1;
    return !p.has_tls || p.allocated;
}

#endif

void smp_fast_trace_prime(smp_state *st)
{
#if defined(__SANITIZE_THREAD__)
    /* libunwind's per-thread trace cache is freed by a thread-exit destructor that crashes
     * inside TSan's mutex interceptor (plugins/gc says the same): unw_step walks there */
    st->fast_trace = 0;
#else
    /* The trace creates its pthread key once per process (pthread_once) and, on each
     * thread's first trace, sets it: here, not first in a handler that may have
     * interrupted the same pthread_once on its thread. */
    int tls = unwind_tls_static();
    if (tls != 1) {
        st->fast_trace = 0;
        st->host->log(st->self, JAGER_DIAG_INFO,
                      tls == 0 ? "libunwind's fast trace is off (libunwind was loaded with dlopen: a thread's first trace "
                                 "allocates its thread-local cache, which a signal handler must not): unw_step walks"
                               : "libunwind's fast trace is off (libunwind's thread-local storage could not be probed): "
                                 "unw_step walks");
        return;
    }
    void *b[4];
    (void)unw_backtrace(b, 4);
    /* glibc keeps keys 0..31 in the thread itself; a higher key's first pthread_setspecific
     * on a thread callocs its block, which a signal handler must not risk (the interrupted
     * code may hold malloc's lock). libunwind's key was made before this one: below 32
     * when this one is at most 32. */
    pthread_key_t k;
    if (pthread_key_create(&k, NULL) == 0) {
        if ((unsigned long)k > 32) {
            st->fast_trace = 0;
            st->host->log(st->self, JAGER_DIAG_INFO,
                          "libunwind's fast trace is off (its thread key may need an allocation in the handler): unw_step walks");
        }
        pthread_key_delete(k);
    }
#endif
}

/* A stack walk reads whatever words the frame-pointer chain leads to, red zones between
 * another frame's locals included (a frame of uninstrumented code whose rbp is no frame
 * pointer): the bounds checks above keep it on the stack, AddressSanitizer must not. */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize_address)
#define SMP_NO_ASAN __attribute__((no_sanitize_address))
#endif
#endif
#ifndef SMP_NO_ASAN
#define SMP_NO_ASAN
#endif

/* Walk into \p e; returns the flags. */
SMP_NO_ASAN static uint32_t walk(smp_state *st, smp_slot *s, const ucontext_t *uc, smp_entry *e)
{
#if defined(__x86_64__)
    uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    uint64_t sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
    uint64_t fp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
#elif defined(__aarch64__)
    uint64_t pc = (uint64_t)uc->uc_mcontext.pc;
    uint64_t sp = (uint64_t)uc->uc_mcontext.sp;
    uint64_t fp = (uint64_t)uc->uc_mcontext.regs[29];
#else
#error "sampler: frame-pointer walk for this architecture is not written"
#endif
    uint32_t n = 0, depth = st->depth, flags = 0;
    e->ips[n++] = pc + 1;
    uint64_t rlo = 0;
    uint32_t gen = 0;
    uint64_t end = smp_maps_find(st, sp, &rlo, &gen);
    if (end && g_pid && (s->ok_gen != gen || s->ok_lo != rlo || s->ok_hi != end)) {
        uint64_t w[2];
        if (readable16(end - 16, w)) {
            s->ok_lo = rlo;
            s->ok_hi = end;
            s->ok_gen = gen;
        } else {
            end = 0;
        }
    }
    if (!end) {
        e->n = (uint16_t)n;
        return SMP_F_NO_BOUNDS | SMP_F_LEAF_ONLY;
    }
    uint64_t lo = sp;
    for (;;) {
        if (fp == 0) { /* the outermost frame cleared it (clone, _start) — or no frame at all */
            if (n == 1) flags |= SMP_F_BROKEN;
            break;
        }
        if (fp < lo || fp + 16 > end || (fp & 7)) {
            flags |= SMP_F_BROKEN;
            break;
        }
        if (n >= depth) {
            flags |= SMP_F_TRUNCATED;
            break;
        }
        const uint64_t *f = (const uint64_t *)(uintptr_t)fp;
        uint64_t next = f[0], ret = f[1];
        if (ret == 0) break;
        e->ips[n++] = ret;
        if (next == 0) break;
        if (next <= fp) {
            flags |= SMP_F_BROKEN;
            break;
        }
        lo = fp + 16;
        fp = next;
    }
    if (n == 1) flags |= SMP_F_LEAF_ONLY;
    e->n = (uint16_t)n;
    return flags;
}

static void take_sample(smp_state *st, smp_slot *s, const siginfo_t *si, const ucontext_t *uc)
{
    uint64_t t0 = st->host->now_ns();
    bump(&s->fired, 1);
    uint64_t h = atomic_load_explicit(&s->head, memory_order_relaxed);
    uint64_t tl = atomic_load_explicit(&s->tail, memory_order_acquire);
    if (h - tl >= s->cap) {
        bump(&s->lost, 1);
        goto done;
    }
    smp_entry *e = (smp_entry *)(void *)(s->buf + (size_t)(h % s->cap) * st->entry_bytes);
    uint32_t flags = 0;
    if (!st->use_libunwind) flags = walk(st, s, uc, e);
    else if (!st->fast_trace || !walk_bt(st, s, uc, e, &flags)) flags = walk_unw(st, (ucontext_t *)(uintptr_t)uc, e);
    jager_site site = 0;
    e->site = st->host->open_sites(&site, 1) ? site : 0;
    e->time_ns = t0;
    e->flags = (uint16_t)flags;
    e->weight = 1u + (si->si_code == SI_TIMER && si->si_overrun > 0 ? (uint32_t)si->si_overrun : 0u);
    e->reserved = 0;
    if (flags & SMP_F_TRUNCATED) bump(&s->truncated, 1);
    if (flags & SMP_F_BROKEN) bump(&s->broken, 1);
    if (flags & SMP_F_LEAF_ONLY) bump(&s->leaf_only, 1);
    if (flags & SMP_F_NO_BOUNDS) {
        bump(&s->no_bounds, 1);
        atomic_store_explicit(&st->maps_stale, 1, memory_order_relaxed);
    }
    atomic_store_explicit(&s->head, h + 1, memory_order_release);
done:
    bump(&s->handler_ns, st->host->now_ns() - t0);
}

static void handler(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    atomic_fetch_add(&g_active, 1);
    smp_state *st = &smp_g;
    smp_slot *s = atomic_load(&g_armed) ? slot_of(st, si) : NULL;
    if (s) {
        if (atomic_load_explicit(&s->live, memory_order_acquire)) take_sample(st, s, si, uc);
    } else if (!atomic_load(&g_armed) && (si->si_code == SI_TIMER || (si->si_code > 0 && si->si_code <= POLL_HUP))) {
        /* a late instance of ours after disarming: drop it */
    } else {
        chain(sig, si, uc);
    }
    atomic_fetch_sub(&g_active, 1);
    errno = saved;
}

/* Keep the library mapped after dlclose: an instance already queued when the handler is
 * removed must still find its code. */
static void pin_self(void)
{
    if (g_pinned) return;
    Dl_info info;
    if (dladdr((void *)handler, &info) && info.dli_fname && dlopen(info.dli_fname, RTLD_NOW | RTLD_NODELETE | RTLD_NOLOAD))
        g_pinned = 1;
}

static int signal_free(int sig)
{
    struct sigaction cur;
    if (sigaction(sig, NULL, &cur) != 0) return 0;
    return !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL;
}

jager_status smp_signal_install(smp_state *st)
{
    int sig = st->signo_wanted;
    if (sig) {
        if (sig < SIGRTMIN || sig > SIGRTMAX) return JAGER_E_INVALID;
    } else {
        for (int s = SIGRTMIN + 4; s <= SIGRTMAX; s++)
            if (signal_free(s)) {
                sig = s;
                break;
            }
        if (!sig) return JAGER_E_UNSUPPORTED;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    pin_self();
    /* The page check needs process_vm_readv on ourselves (seccomp may refuse it): probe. */
    uint64_t probe_w[2], here[2] = {1, 2};
    g_pid = getpid();
    if (!readable16((uint64_t)(uintptr_t)here, probe_w)) {
        g_pid = 0;
        st->host->log(st->self, JAGER_DIAG_WARN,
                      "process_vm_readv refused: stack walks rely on the memory snapshot alone");
    }
    atomic_store(&g_armed, 1);
    if (sigaction(sig, &sa, &g_prev) != 0) {
        atomic_store(&g_armed, 0);
        return JAGER_E_UNSUPPORTED;
    }
    g_installed = 1;
    st->signo = sig;
    /* The signal may be blocked in this thread (inherited mask): make sure it is not in
     * threads started from here on, and not here. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    return JAGER_OK;
}

void smp_signal_remove(smp_state *st)
{
    if (!g_installed) return;
    atomic_store(&g_armed, 0);
    /* SIG_IGN discards instances still pending on any thread, then the earlier
     * disposition comes back. */
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(st->signo, &ign, NULL);
    sigaction(st->signo, &g_prev, NULL);
    g_installed = 0;
    while (atomic_load(&g_active) > 0) sched_yield();
}

uint64_t smp_signal_chained(void) { return atomic_load(&g_chained); }
