/* rusage_internal.h — the rusage plugin's state and its /proc readers. */
#ifndef JAGER_RUSAGE_INTERNAL_H
#define JAGER_RUSAGE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "jager_plugin.h"

/** One thread's cumulative counters at one instant. */
typedef struct ru_sample {
    uint64_t cpu_ns;      /**< CPU time (user + system), the thread's CPU-time clock */
    uint64_t sys_ns;      /**< system time (clock ticks from /proc, so 1/CLK_TCK resolution) */
    uint64_t runq_ns;     /**< time runnable but waiting for a CPU (schedstat); 0 when the kernel has none */
    uint64_t minflt, majflt;
    uint64_t vcsw, ivcsw; /**< voluntary / involuntary context switches */
} ru_sample;

typedef struct ru_state {
    const jager_host_api *host;
    jager_plugin_handle *self;
    uint16_t t_thread, t_info;
    uint32_t interval_ms;
    int has_schedstat;
    uint64_t fault_ns;        /**< measured cost of one minor fault (first touch of a fresh page) */
    pthread_t thread;
    int running, wake_fd;
    _Atomic int stop;
    uint64_t samples, threads_seen, read_errors;
} ru_state;

/** Read thread \p tid of this process; returns 0 when it is gone. */
int ru_read(int tid, int has_schedstat, ru_sample *out);
/** Whether /proc/self/task/TID/schedstat exists here (CONFIG_SCHED_INFO). */
int ru_has_schedstat(void);
/** Measure a minor fault's cost: map, touch and unmap fresh pages (ns per page, ≥ 1). */
uint64_t ru_fault_cost_ns(void);
/** Every thread of the process, each as a TID; returns how many (≤ cap). */
uint32_t ru_tasks(int *tids, uint32_t cap);

#endif
