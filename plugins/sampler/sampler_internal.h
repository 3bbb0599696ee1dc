/*
 * sampler_internal.h — what the sampler plugin's files offer each other. Never installed.
 *
 * Files (one concern each):
 *   sampler_plugin.c   descriptor, options, event types, init/start/flush/stop/shutdown
 *   sampler_signal.c   the signal: choosing it, installing the handler, chaining, removal;
 *                      the handler itself (frame-pointer walk into the thread's slot)
 *   sampler_trigger.c  per-thread triggers (perf_event_open, else POSIX CPU-time timers)
 *                      and the thread list (/proc/self/task)
 *   sampler_maps.c     the readable-memory snapshot the handler bounds its walk with
 *   sampler_drain.c    off the handler: samples → stack_intern + emit; the plugin thread
 *   sampler_symbols.c  native frames (libdw, else dladdr) and module build ids
 *
 * Data flow: trigger fires on thread T → signal handler on T walks T's frame pointers into
 * T's own slot buffer (single producer: the signal is blocked while its handler runs) →
 * the plugin thread drains every slot (single consumer), interns the stacks, names new
 * addresses and emits sampler.sample records from its own ring. The handler never touches
 * a ring, so it cannot interleave with a record T was writing when the signal came.
 */
#ifndef JAGER_SAMPLER_INTERNAL_H
#define JAGER_SAMPLER_INTERNAL_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "jager_plugin.h"

#define SMP_MAX_DEPTH 256u      /* deepest walk kept (option depth) */
#define SMP_MAX_SLOTS 1024u     /* threads sampled at once (option threads) */
#define SMP_FD_TABLE 4096u      /* perf fds below this map straight to their slot */
#define SMP_UNW_EXTRA 16u       /* room for the handler's own frames in a libunwind fast trace */

/* Walk outcomes, in smp_entry.flags. */
#define SMP_F_TRUNCATED 1u   /* depth limit reached with the chain still going */
#define SMP_F_BROKEN 2u      /* frame pointer left the stack (no frame pointers, or garbage) */
#define SMP_F_NO_BOUNDS 4u   /* the stack was not in the memory snapshot: leaf only */
#define SMP_F_LEAF_ONLY 8u   /* no return address recovered: the interrupted code keeps no frame pointer */
#define SMP_F_NOT_CODE 16u   /* cut by the drain at a return address in no executable mapping (sampler_code.c) */

enum smp_mode { SMP_MODE_PERF = 1, SMP_MODE_TIMER = 2 };

/** One sample as the handler leaves it; ips[] innermost first (ips[0] = interrupted pc + 1,
 *  so that every entry reads like a return address: symbolizers look up ip - 1). */
typedef struct smp_entry {
    uint64_t time_ns;
    uint32_t site;      /* innermost open Jäger site on the thread, 0 if none */
    uint16_t n;         /* ips filled */
    uint16_t flags;     /* SMP_F_* */
    uint32_t weight;    /* trigger periods this sample stands for (1 + timer overruns) */
    uint32_t reserved;
    uint64_t ips[];     /* depth entries */
} smp_entry;

/** Per-thread state: the trigger and a single-producer/single-consumer sample buffer. */
typedef struct smp_slot {
    _Atomic(int) live;          /* 1 while the trigger is armed for tid */
    int32_t tid;
    int fd;                     /* perf event fd, -1 in timer mode */
    timer_t timer;
    int has_timer;
    uint32_t index;             /* position in the slot table */
    uint8_t *buf;               /* cap entries of entry_bytes each, touched at creation */
    uint32_t cap;
    _Atomic(uint64_t) head;     /* entries written (handler) */
    _Atomic(uint64_t) tail;     /* entries drained (plugin thread) */
    /* counters written by the handler on the owning thread, read by the plugin thread */
    _Atomic(uint64_t) fired, lost, truncated, broken, no_bounds, leaf_only, handler_ns;
    _Atomic(uint64_t) slow_walks;   /* libunwind walks the fast trace could not take (handler-owned) */
    uint64_t ok_lo, ok_hi;      /* the stack mapping the handler last found readable to its end… */
    uint32_t ok_gen;            /* …in this snapshot generation (handler-owned) */
    uint64_t cpu_start_ns;      /* thread CPU time when sampling began */
    uint64_t cpu_last_ns;       /* its CPU time at the last scan that saw it */
    uint64_t drained;           /* samples emitted (plugin thread) */
    int seen;                   /* scan mark */
} smp_slot;

/** A readable anonymous or file mapping, merged with its neighbours when contiguous. */
typedef struct smp_region {
    uint64_t lo, hi;
} smp_region;

/** A published snapshot of /proc/self/maps' readable regions, sorted. */
typedef struct smp_maps {
    uint32_t n, cap;
    uint32_t gen;               /* bumped by every refresh */
    uint32_t reserved;
    smp_region r[];
} smp_maps;

typedef struct smp_state {
    const jager_host_api *host;
    jager_plugin_handle *self;
    uint16_t t_sample, t_thread, t_module, t_summary;

    /* options */
    uint32_t hz, depth, max_threads, buffer, scan_ms;
    int mode_wanted;            /* 0 auto, else enum smp_mode */
    int signo_wanted;           /* 0 auto */
    int unwind_wanted;          /* 0 auto, 1 frame pointers, 2 libunwind */
    int use_libunwind;          /* chosen at init */
    int fast_trace;             /* libunwind walks through unw_backtrace's cached trace (option) */
    int symbolize_end;          /* name native frames at stop (in Julia: flush) (option symbolize) */
    int in_julia;               /* jl_is_initialized is there */

    /* chosen at start */
    int mode;
    int signo;
    char mode_reason[200];
    uint64_t period_ns;
    size_t entry_bytes;

    /* threads */
    smp_slot *slots;            /* max_threads entries */
    _Atomic(smp_slot *) by_fd[SMP_FD_TABLE];
    int own_tid;                /* the plugin thread: not sampled */
    uint64_t threads_seen, threads_failed;
    int trigger_errno;

    /* memory snapshot, double-buffered: the handler reads maps[cur] */
    smp_maps *maps[2];
    _Atomic(int) maps_cur;      /* -1: none yet */
    _Atomic(int) maps_stale;    /* a handler missed: refresh soon */

    /* the plugin thread */
    pthread_t thread;
    int thread_running;
    _Atomic(int) stop_requested;
    int wake_fd;
    pthread_mutex_t drain_lock; /* drain + symbols: plugin thread, flush, stop */
    uint64_t *ips_tmp;          /* depth entries */

    /* totals (drain side) */
    uint64_t emitted, weight_total;
    uint64_t retired_fired, retired_lost, retired_truncated, retired_broken, retired_no_bounds, retired_leaf_only, retired_handler_ns;
    uint64_t retired_slow_walks;

    /* symbols (sampler_symbols.c) */
    void *sym;

    /* executable mappings (sampler_code.c), drain side under drain_lock */
    smp_region *code;
    uint32_t code_n, code_cap;
    int code_read;              /* read at least once */
    uint64_t code_read_ms;      /* CLOCK_MONOTONIC ms of the last read */
} smp_state;

extern smp_state smp_g;

/* ---- sampler_signal.c ---- */
/** Pick and install the signal (chaining any earlier handler). */
jager_status smp_signal_install(smp_state *st);
/** Discard pending instances, restore the earlier disposition, wait for running handlers. */
void smp_signal_remove(smp_state *st);
/** Before the first fast trace: create libunwind's trace key on this thread, and turn the
 *  fast trace off where the key or the build make it unsafe in a handler. */
void smp_fast_trace_prime(smp_state *st);
/** Handlers entered since install (for the summary). */
uint64_t smp_signal_chained(void);

/* ---- sampler_trigger.c ---- */
/** Decide perf or timer (one probe on the calling thread); fills mode and mode_reason. */
void smp_trigger_choose(smp_state *st);
/** Scan /proc/self/task: arm new threads, retire gone ones. [plugin thread or start] */
void smp_threads_scan(smp_state *st);
/** Disarm every trigger. Slots stay allocated (a late handler may still write). */
void smp_threads_disarm_all(smp_state *st);
/** CPU time of a thread of this process in ns (0 on error). */
uint64_t smp_thread_cpu_ns(int tid);
/** Disarm one slot (thread gone or at stop). */
void smp_slot_disarm(smp_state *st, smp_slot *s);

/* ---- sampler_maps.c ---- */
void smp_maps_refresh(smp_state *st);
void smp_maps_free(smp_state *st);
/** The end of the mapping holding \p addr (its start in *lo, the snapshot's generation in
 *  *gen), or 0 when the snapshot has none. [async-signal-safe] */
uint64_t smp_maps_find(smp_state *st, uint64_t addr, uint64_t *lo, uint32_t *gen);

/* ---- sampler_code.c (drain side, under drain_lock) ---- */
/** Re-read the executable mappings. */
void smp_code_refresh(smp_state *st);
/** The length to keep of \p ips (\p n entries, innermost first): up to its first return
 *  address outside every executable mapping (then SMP_F_NOT_CODE is set in \p flags). On
 *  a miss the mappings are re-read first if \p *refreshed is 0 (then set) and the last
 *  read is scan_ms old. */
uint32_t smp_code_cut(smp_state *st, const uint64_t *ips, uint32_t n, int *refreshed, uint16_t *flags);
void smp_code_free(smp_state *st);

/* ---- sampler_drain.c ---- */
void smp_drain(smp_state *st);
/** Emit sampler.thread for a slot (at retirement and at stop). Caller holds drain_lock. */
void smp_emit_thread(smp_state *st, smp_slot *s, uint64_t cpu_ns);
jager_status smp_thread_start(smp_state *st);
void smp_thread_stop(smp_state *st);

/* ---- sampler_symbols.c ---- */
jager_status smp_symbols_init(smp_state *st);
/** Name every address of \p ips not named before (native frames); JIT frames are left to
 *  the language binding. Caller holds drain_lock. */
void smp_symbols_add(smp_state *st, const uint64_t *ips, uint32_t n);
void smp_symbols_free(smp_state *st);
/** Name the addresses noted since the last call (symbolize=end). Caller holds drain_lock. */
void smp_symbols_settle(smp_state *st);
/** Time spent naming native frames so far, ns. */
uint64_t smp_symbols_ns(smp_state *st);
/** Addresses named / left for the binding (no module). */
void smp_symbols_counts(smp_state *st, uint64_t *named, uint64_t *unnamed, uint64_t *modules);

#endif
