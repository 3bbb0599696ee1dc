/* rusage_plugin.c — the rusage plugin's descriptor, options, event types and sampling thread.
 *
 * Every interval (JAGER_RUSAGE_INTERVAL_MS, default 5) one helper thread, "jager-rusage",
 * reads each thread of the process and emits one rusage.thread event with its cumulative
 * counters: CPU time, system time, time runnable but waiting for a CPU, minor and major page
 * faults, voluntary and involuntary context switches. The tools difference those counters
 * over each span (docs/rusage.md), so a region slowed by an oversubscribed machine reads
 * "descheduled", not "slow code", and a region that first-touches fresh memory every call
 * shows its page faults. The program's threads do nothing extra. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "rusage_internal.h"

#define RU_MAX_TASKS 4096u

static ru_state ru_g;

static const jager_field_desc thread_fields[] = {
    {"os_tid", JAGER_FIELD_U64, 0},  /* the thread read */
    {"cpu_ns", JAGER_FIELD_U64, 0},  /* cumulative (U64, not DURATION_NS: a reading, not an interval) */
    {"sys_ns", JAGER_FIELD_U64, 0},  /* cumulative system time, 1/CLK_TCK resolution */
    {"runq_ns", JAGER_FIELD_U64, 0}, /* cumulative time runnable but not running (0 without schedstat) */
    {"minflt", JAGER_FIELD_U64, 0},
    {"majflt", JAGER_FIELD_U64, 0},
    {"vcsw", JAGER_FIELD_U64, 0},
    {"ivcsw", JAGER_FIELD_U64, 0},
};
static const jager_field_desc info_fields[] = {
    {"interval_ns", JAGER_FIELD_U64, 0}, /* the sampling period */
    {"fault_ns", JAGER_FIELD_U64, 0},    /* one minor fault's cost, measured at start */
    {"schedstat", JAGER_FIELD_BOOL, 0},  /* run-queue wait is known */
    {"samples", JAGER_FIELD_U64, 0},
    {"threads", JAGER_FIELD_U64, 0},
};
#define RU_N(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

static const jager_option_desc ru_options[] = {
    {"interval_ms", "int", "5", "milliseconds between readings of every thread (1..1000)"},
};

/* Read every thread (but the caller when \p skip_self: the helper thread). One caller at a
 * time: start, then the helper thread, then stop after joining it. */
static void sample_all(ru_state *st, int skip_self)
{
    static int tids[RU_MAX_TASKS];
    int self = skip_self ? (int)gettid() : -1;
    uint32_t n = ru_tasks(tids, RU_MAX_TASKS);
    for (uint32_t i = 0; i < n; i++) {
        if (tids[i] == self) continue;
        ru_sample s;
        if (!ru_read(tids[i], st->has_schedstat, &s)) {
            st->read_errors++;
            continue;
        }
        uint64_t f[8] = {(uint64_t)tids[i], s.cpu_ns, s.sys_ns, s.runq_ns, s.minflt, s.majflt, s.vcsw, s.ivcsw};
        st->host->emit(st->t_thread, 0, f, 8);
        st->samples++;
    }
    if (n > st->threads_seen) st->threads_seen = n;
}

static void *thread_main(void *arg)
{
    ru_state *st = arg;
    prctl(PR_SET_NAME, "jager-rusage", 0, 0, 0);
    struct pollfd p = {.fd = st->wake_fd, .events = POLLIN};
    while (!atomic_load(&st->stop)) {
        sample_all(st, 1);
        (void)poll(&p, 1, (int)st->interval_ms);
    }
    return NULL;
}

static jager_status ru_init(const jager_host_api *host, jager_plugin_handle *self, void **state)
{
    ru_state *st = &ru_g;
    if (st->host) return JAGER_E_STATE;
    memset(st, 0, sizeof *st);
    st->host = host;
    st->self = self;
    st->wake_fd = -1;
    st->interval_ms = 5;
    const char *v = host->config(self, "interval_ms");
    if (v && *v) {
        char *end = NULL;
        unsigned long x = strtoul(v, &end, 10);
        if (*end || v[0] == '-' || x < 1 || x > 1000) {
            char msg[160];
            snprintf(msg, sizeof msg, "option interval_ms=\"%.32s\" is not an integer in [1, 1000]; using 5", v);
            host->log(self, JAGER_DIAG_WARN, msg);
        } else {
            st->interval_ms = (uint32_t)x;
        }
    }
    jager_status s;
    if ((s = host->register_type(self, "rusage.thread", thread_fields, RU_N(thread_fields), &st->t_thread)) != JAGER_OK ||
        (s = host->register_type(self, "rusage.info", info_fields, RU_N(info_fields), &st->t_info)) != JAGER_OK) {
        st->host = NULL;
        return s;
    }
    *state = st;
    return JAGER_OK;
}

static jager_status ru_start(void *state)
{
    ru_state *st = state;
    st->has_schedstat = ru_has_schedstat();
    st->fault_ns = ru_fault_cost_ns();
    atomic_store(&st->stop, 0);
    /* The first reading now, on the caller's thread: the program's first spans begin as soon
     * as jager_init returns, maybe before the helper thread is ever scheduled (a crowded CPU). */
    sample_all(st, 0);
    st->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (st->wake_fd < 0 || pthread_create(&st->thread, NULL, thread_main, st) != 0) {
        st->host->log(st->self, JAGER_DIAG_WARN, "cannot start the sampling thread: rusage off");
        return JAGER_OK; /* the program runs on without it */
    }
    st->running = 1;
    char msg[200];
    snprintf(msg, sizeof msg, "reading every thread each %u ms (run-queue wait %s); a minor fault costs %llu ns here",
             st->interval_ms, st->has_schedstat ? "known" : "unknown: no schedstat", (unsigned long long)st->fault_ns);
    st->host->log(st->self, JAGER_DIAG_INFO, msg);
    return JAGER_OK;
}

static void ru_stop(void *state)
{
    ru_state *st = state;
    if (!st->running) return;
    atomic_store(&st->stop, 1);
    uint64_t one = 1;
    ssize_t w = write(st->wake_fd, &one, sizeof one);
    (void)w;
    pthread_join(st->thread, NULL);
    st->running = 0;
    sample_all(st, 0); /* the last reading: spans that end now are covered to their end */
    uint64_t f[5] = {(uint64_t)st->interval_ms * 1000000u, st->fault_ns, (uint64_t)st->has_schedstat, st->samples,
                     st->threads_seen};
    st->host->emit(st->t_info, 0, f, 5);
}

static void ru_shutdown(void *state)
{
    ru_state *st = state;
    if (st->wake_fd >= 0) close(st->wake_fd);
    st->wake_fd = -1;
    st->host = NULL;
}

static const jager_plugin_descriptor ru_descriptor = {
    .struct_size = sizeof(jager_plugin_descriptor),
    .abi_major = JAGER_PLUGIN_ABI_MAJOR,
    .abi_minor = JAGER_PLUGIN_ABI_MINOR,
    .name = "rusage",
    .version = "1.0.0",
    .description = "per-thread CPU time, run-queue wait, context switches and page faults, read every few ms",
    .init = ru_init,
    .start = ru_start,
    .stop = ru_stop,
    .shutdown = ru_shutdown,
    .options = ru_options,
    .noptions = RU_N(ru_options),
};

JAGER_PLUGIN_DEFINE_ENTRY(&ru_descriptor)
