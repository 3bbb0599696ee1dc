/* jager_init / jager_shutdown: configuration, clock, metadata, the SDK's own cost, the
 * collector, the file sink and plugins — and zero-code mode when preloaded. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "plugin_handle.h"
#include "supply_check.h"

_Atomic(int) jg_enabled;
int jager_active; /* the exported mirror of jg_enabled, for inline tests in the macros */

_Atomic(uint32_t) jg_generation;
_Atomic(uint32_t) jg_live_generation;

static void set_enabled(int on)
{
    atomic_store_explicit(&jg_live_generation, on ? atomic_load_explicit(&jg_generation, memory_order_relaxed) : 0,
                          memory_order_release);
    atomic_store_explicit(&jg_enabled, on, memory_order_release);
    __atomic_store_n(&jager_active, on, __ATOMIC_RELEASE);
}
static uint64_t jg_span_cost_x1000; /* measured cost of one span in ns × 1000 (at init) */

/* The life lock: jager_init and jager_shutdown hold it for writing, jager_flush for reading,
 * so a flush never overlaps a run's start or end (rings reset or freed, sinks closed). A
 * plugin's callback that runs inside init or shutdown may call jager_flush: the thread
 * that holds the lock for writing is marked and does not take it again. Writers are
 * preferred: a thread that flushes in a loop must not starve a shutdown (glibc's readers-first
 * default lets it, for ever under valgrind's one-thread-at-a-time scheduler). Flush never
 * takes the lock twice, so the writer preference cannot deadlock a reader. */
#ifdef PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP
static pthread_rwlock_t life_lock = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
#else
static pthread_rwlock_t life_lock = PTHREAD_RWLOCK_INITIALIZER;
#endif
static __thread int in_life __attribute__((tls_model("initial-exec")));
static int initialized;
static int clock_done;
static int zero_code; /* started by the preload constructor: the file is claimed at the first event */
static _Atomic(pid_t) owner_pid; /* the process that called jager_init: a forked child is not it */

static _Atomic(int) life_busy; /* a thread is inside jager_init or jager_shutdown */
/* What a forked child needs to start a recording of its own (fork section below): set at
 * the end of a successful jager_init, cleared when jager_shutdown begins. */
static _Atomic(int) fork_ready;
static char own_path[PATH_MAX]; /* this recording's expanded output, "" for none */
static void *own_file_sink;     /* its file sink's context (forgotten in a child) */
static _Atomic(int) fork_child_recording; /* this process is a forked child that records */

static void life_wrlock(void)
{
    pthread_rwlock_wrlock(&life_lock);
    in_life = 1;
    atomic_store_explicit(&life_busy, 1, memory_order_relaxed);
}

int jg_life_held(void) { return in_life; }

static void life_unlock(void)
{
    atomic_store_explicit(&life_busy, 0, memory_order_relaxed);
    in_life = 0;
    pthread_rwlock_unlock(&life_lock);
}

uint32_t jager_version(void) { return JAGER_VERSION_NUMBER; }
const char *jager_version_string(void) { return JAGER_VERSION_STRING; }
int jager_is_enabled(void) { return atomic_load_explicit(&jg_enabled, memory_order_acquire); }

/* ---- run metadata ---- */
static void meta_u64(const char *key, uint64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%llu", (unsigned long long)v);
    jg_meta_set(key, b);
}

static void meta_cmdline(void)
{
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (!f) return;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    for (size_t i = 0; i + 1 < n; i++)
        if (buf[i] == 0) buf[i] = ' ';
    buf[n] = 0;
    jg_meta_set("process.command_line", buf);
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0) {
        exe[k] = 0;
        jg_meta_set("process.executable", exe);
    }
}

/* The commit of the repository around the working directory: JAGER_GIT_COMMIT wins, else
 * .git/HEAD resolved through refs/ or packed-refs. */
static int read_line(const char *path, char *out, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int ok = fgets(out, (int)size, f) != NULL;
    fclose(f);
    if (!ok) return -1;
    out[strcspn(out, "\r\n")] = 0;
    return 0;
}

static void meta_git(void)
{
    const char *env = getenv("JAGER_GIT_COMMIT");
    if (env && *env) {
        jg_meta_set("git.commit", env);
        return;
    }
    char dir[PATH_MAX];
    if (!getcwd(dir, sizeof dir - 16)) return;
    for (;;) {
        char path[PATH_MAX + 600], head[256];
        snprintf(path, sizeof path, "%s/.git/HEAD", dir);
        if (read_line(path, head, sizeof head) == 0) {
            if (strncmp(head, "ref: ", 5) != 0) {
                jg_meta_set("git.commit", head);
                return;
            }
            char val[256];
            snprintf(path, sizeof path, "%s/.git/%s", dir, head + 5);
            if (read_line(path, val, sizeof val) == 0) {
                jg_meta_set("git.commit", val);
                jg_meta_set("git.ref", head + 5);
                return;
            }
            snprintf(path, sizeof path, "%s/.git/packed-refs", dir);
            FILE *f = fopen(path, "r");
            if (!f) return;
            char line[512];
            while (fgets(line, sizeof line, f)) {
                line[strcspn(line, "\r\n")] = 0;
                char *sp = strchr(line, ' ');
                if (sp && !strcmp(sp + 1, head + 5)) {
                    *sp = 0;
                    jg_meta_set("git.commit", line);
                    jg_meta_set("git.ref", head + 5);
                    break;
                }
            }
            fclose(f);
            return;
        }
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir) return;
        *slash = 0;
    }
}

static void collect_metadata(void)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    jg_meta_set("host.name", host);
    meta_u64("process.pid", (uint64_t)getpid());
    meta_cmdline();
    meta_u64("process.start_unix_ns", jg_clock_state.unix_ns0 + (jg_now_ns() - jg_clock_state.ns0));
    char b[64];
    snprintf(b, sizeof b, "%.9f", jg_clock_state.ticks_per_ns);
    jg_meta_set("clock.ticks_per_ns", b);
    jg_meta_set("clock.source", jg_clock_state.use_tsc ? "tsc" : "clock_gettime");
    meta_u64("clock.start_ns", jg_now_ns());
    meta_u64("clock.anchor_ns", jg_clock_state.ns0);
    meta_u64("clock.anchor_unix_ns", jg_clock_state.unix_ns0);
    jg_meta_set("jager.version", JAGER_VERSION_STRING);
    meta_u64("jager.ring_bytes", JG_CFG(ring_bytes));
    jg_meta_set("jager.ring_mode", JG_CFG(ring_mode) == JAGER_RING_OVERWRITE ? "overwrite" : "discard");
    if (jg_cfg.c.filter) jg_meta_set("jager.filter", jg_cfg.c.filter);
    meta_u64("cpu.count", (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
    int job_size = -1, rank = jg_launch_rank(&job_size);
    if (rank >= 0) { /* the launcher's rank, before MPI_Init: the tools order a job's files by it */
        meta_u64("process.rank", (uint64_t)rank);
        if (job_size > 0) meta_u64("process.job_size", (uint64_t)job_size);
    }
    meta_git();
}

/* ---- the SDK's own cost ---- */
/* Time real span pairs on the calling thread before the collector starts, then erase them
 * (ring, aggregates — whose calls also make spans_total — counters), so every summary can
 * say what the instrumentation cost. */
static void measure_span_cost(void)
{
    jager_site site = jager_site_register("jager.calibration", NULL, 0);
    jg_tls *t = jg_tls_fast();
    if (!site || !t) return;
    uint64_t best = UINT64_MAX;
    enum { N = 2000 };
    for (int rep = 0; rep < 5; rep++) {
        uint64_t t0 = jg_now_ns();
        for (int i = 0; i < N; i++) jager_span_end(jager_span_begin(site));
        uint64_t dt = jg_now_ns() - t0;
        if (dt < best) best = dt;
        if (t->ring) /* keep the ring empty: the collector is not running yet */
            atomic_store_explicit(&t->ring->tail, atomic_load_explicit(&t->ring->head, memory_order_relaxed), memory_order_release);
    }
    jg_span_cost_x1000 = best * 1000u / N;
    if (t->ring) {
        atomic_store_explicit(&t->ring->emitted, 0, memory_order_relaxed);
        atomic_store_explicit(&t->ring->dropped_full, 0, memory_order_relaxed);
        t->ring->drop_left = 0; /* its tail moved under it: let the next span look again */
    }
    jg_site_agg *a = jg_tls_site_agg(t, site);
    if (a) {
        atomic_store_explicit(&a->calls, 0, memory_order_relaxed);
        atomic_store_explicit(&a->total_ns, 0, memory_order_relaxed);
        atomic_store_explicit(&a->min_ns, UINT64_MAX, memory_order_relaxed);
        atomic_store_explicit(&a->max_ns, 0, memory_order_relaxed);
        atomic_store_explicit(&a->sampled_at, 0, memory_order_relaxed);
        for (int b = 0; b < JAGER_HIST_BUCKETS; b++) atomic_store_explicit(&a->hist[b], 0, memory_order_relaxed);
        atomic_store_explicit(&a->thinned, 0, memory_order_relaxed);
        atomic_store_explicit(&a->dropped, 0, memory_order_relaxed);
        atomic_store_explicit(&a->auto_state, 0, memory_order_relaxed);
        atomic_store_explicit(&a->hot_until, 0, memory_order_relaxed);
    }
    atomic_store_explicit(&t->spans_ended, 0, memory_order_relaxed);
    jg_paths_rearm(t); /* and its call path */
    t->next_span = 0;
    char b[32];
    snprintf(b, sizeof b, "%.3f", (double)jg_span_cost_x1000 / 1000.0);
    jg_meta_set("jager.span_cost_ns", b);
}

/* ---- fork() without exec ----
 * A forked child has the parent's rings, sinks and plugins but none of its other threads
 * (no collector), and locks that a thread gone in the child may have held. It never
 * touches what it inherited: the parent's sinks and plugins are forgotten without a call
 * (the file sink's stdio buffer discarded, its descriptor closed), every lock is made anew.
 * Then, when JAGER_OUTPUT names the pid (%p, or %r outside a rank: the child's path is not
 * the parent's), the child starts a recording of its own: new rings (the parent's events
 * are not the child's), a new collector thread, its own file claimed at its first event
 * (a child that records nothing, or execs, leaves none), the configuration and the sites
 * of the parent. Otherwise it records nothing and its jager_shutdown(), exit handler and
 * signal handler are no-ops (they compare getpid() with owner_pid).
 *
 * The registry's, the stack table's and the threads' locks are taken by the prepare
 * handler, so the child's copies of those tables are whole; try-locks, given up after
 * 500 ms (a fork never deadlocks on them, and waits only while a thread holds one — an
 * instant, unless that thread is descheduled on a loaded machine): a child forked without
 * them records nothing and says so. */
static int fork_locks_held;  /* the prepare handler holds the three locks (forking thread) */
static pid_t fork_parent;    /* the recording process that forked, seen in the child */
/* A child (or a child's child) of a recording process whose JAGER_OUTPUT has no %p: it
 * records nothing, and says so once when it leaves by exit(), quick_exit() or _exit() —
 * a child that execs runs none of that and stays silent (docs/configuration.md, "fork()
 * without exec"). Set only in the child's copy of memory (a vfork() child sees 0). */
static pid_t unrecorded_parent;

static void fork_prepare(void)
{
    fork_locks_held = 0;
    fork_parent = 0;
    pid_t me = getpid();
    if (!owner_pid || owner_pid != me) return;
    fork_parent = me;
    /* Forking from inside the recorder (a plugin's callback, init, shutdown): this thread
     * may hold the locks itself. None is taken; the child records nothing. */
    if (in_life || jg_plugins_in_callback()) return;
    struct timespec pause = {0, 50000};
    uint64_t give_up = jg_clock_gettime_ns() + 500000000u; /* 500 ms, whatever the sleeps take */
    for (int i = 0; i == 0 || jg_clock_gettime_ns() < give_up; i++) {
        if (jg_stacks_fork_trylock()) {
            if (jg_registry_fork_trylock()) {
                if (jg_threads_fork_trylock()) {
                    fork_locks_held = 1;
                    return;
                }
                jg_registry_fork_unlock();
            }
            jg_stacks_fork_unlock();
        }
        nanosleep(&pause, NULL);
    }
}

static void fork_parent_done(void)
{
    if (!fork_locks_held) return;
    jg_threads_fork_unlock();
    jg_registry_fork_unlock();
    jg_stacks_fork_unlock();
    fork_locks_held = 0;
}

/* In the child: start its own recording (see above). 0 when it does. */
static int fork_child_start(int whole, const char **why)
{
    char path[PATH_MAX];
    const char *env_out = getenv("JAGER_OUTPUT");
    const char *out = jg_cfg.c.output;
    if (!out || !*out || !own_path[0]) return *why = NULL, -1;
    jg_launch_output_path(path, sizeof path, out, env_out && !strcmp(env_out, out));
    if (!strcmp(path, own_path)) return unrecorded_parent = fork_parent, *why = NULL, -1; /* no %p: the parent's file */
    if (!whole) return *why = "it was forked while another thread was starting or stopping the recording", -1;
    if (!fork_locks_held)
        return *why = in_life || jg_plugins_in_callback() ? "it was forked from inside the recorder (a plugin's callback)"
                                                          : "it forked while another thread held the recorder's tables",
               -1;
    jg_threads_fork_child(1);
    atomic_fetch_add_explicit(&jg_generation, 1, memory_order_release);
    jg_plugin_events_reset();
    collect_metadata();
    char b[32];
    snprintf(b, sizeof b, "%d", (int)fork_parent);
    jg_meta_set("process.parent_pid", b);
    if (jg_meta_get("jager.plugins")) jg_meta_set("jager.plugins", ""); /* the parent's: not started here */
    if (jg_meta_get("process.rank")) jg_meta_set("process.rank", ""); /* a rank's worker is not the rank */
    jager_sink fs;
    if (jg_file_sink_create(path, 1, &fs) != JAGER_OK || jg_sink_add_self_reporting(&fs) != JAGER_OK)
        return *why = "its file sink could not be made", -1;
    jg_meta_set("jager.output", path);
    if (jg_collector_start() != JAGER_OK) {
        jg_collector_fork_child(); /* the sink, never opened, is forgotten */
        return *why = "its collector thread could not start", -1;
    }
    jg_retired_reset();
    jg_task_moves_reset();
    jg_counters_reset_totals();
    snprintf(own_path, sizeof own_path, "%s", path);
    own_file_sink = fs.ctx;
    owner_pid = getpid();
    atomic_store_explicit(&fork_child_recording, 1, memory_order_relaxed);
    set_enabled(1);
    return 0;
}

static void after_fork_in_child(void)
{
    set_enabled(0);
    if (unrecorded_parent) unrecorded_parent = getppid(); /* a child of an unrecorded child: the same */
    atomic_store_explicit(&fork_child_recording, 0, memory_order_relaxed);
    /* The three locks: released when the prepare handler took them (this thread holds the
     * copies, and the tables behind them are whole), else made anew (a thread gone here
     * may hold them). */
    if (fork_locks_held) {
        jg_threads_fork_unlock();
        jg_registry_fork_unlock();
        jg_stacks_fork_unlock();
    } else {
        jg_threads_fork_child(0);
        jg_registry_fork_child();
        jg_stacks_fork_child();
    }
    if (!fork_parent) return; /* nothing recorded here when it forked */
    static const pthread_rwlock_t rw0 =
#ifdef PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP
        PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
#else
        PTHREAD_RWLOCK_INITIALIZER;
#endif
    /* Another thread inside init or shutdown: the recorder is half made or half undone. */
    int whole = initialized && atomic_load_explicit(&fork_ready, memory_order_relaxed) &&
                !atomic_load_explicit(&life_busy, memory_order_relaxed);
    life_lock = rw0;
    static void *volatile parent_file_sink; /* forgotten, kept reachable (a leak checker in the child) */
    if (own_file_sink) jg_file_sink_forget(own_file_sink);
    parent_file_sink = own_file_sink;
    (void)parent_file_sink; /* a volatile store: kept */
    own_file_sink = NULL;
    jg_collector_fork_child();
    jg_plugins_fork_child();
    const char *why = NULL;
    int started = initialized && fork_child_start(whole, &why) == 0;
    if (!started && why && !JG_CFG(quiet))
        fprintf(stderr, "jager: process %d, forked by %d, records nothing: %s\n", (int)getpid(), (int)fork_parent, why);
    fork_locks_held = 0;
    fork_parent = 0;
}

/* A forked child that records and leaves with _exit() (as worker pools do, to run none of
 * the parent's exit handlers) ends its recording first: _exit runs no handler of ours. Only
 * there — the program's own process, and a vfork() child sharing its memory, go straight
 * on — and not from inside the recorder (a callback, init or shutdown). Straight on is the
 * _exit that calls would reach without us (libc's, or a sanitizer's in front of it), found
 * once at load: never looked up in _exit, where a vfork() child must not take the loader's
 * locks. */
static void (*real_exit)(int);
__attribute__((constructor)) static void find_real_exit(void)
{
    void *f = dlsym(RTLD_NEXT, "_exit");
    memcpy(&real_exit, &f, sizeof f);
}

/* The once-only line of an unrecorded child (see unrecorded_parent). write(2), not stdio: a
 * thread of the parent may have held stdio's lock at the fork. */
static void say_unrecorded(void)
{
    pid_t parent = unrecorded_parent;
    if (!parent || getpid() == owner_pid || JG_CFG(quiet)) return;
    unrecorded_parent = 0;
    char line[PATH_MAX + 200];
    int n = snprintf(line, sizeof line,
                     "jager: process %d, forked by %d, recorded nothing: JAGER_OUTPUT (%s) has no %%p, so it names "
                     "the parent's file; put %%p in it to record each process\n",
                     (int)getpid(), (int)parent, own_path);
    if (n > 0) (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

__attribute__((noreturn)) static void exit_now(int status)
{
    say_unrecorded();
    if (atomic_load_explicit(&fork_child_recording, memory_order_relaxed) && getpid() == owner_pid && !in_life &&
        !jg_plugins_in_callback())
        jager_shutdown();
    if (real_exit) real_exit(status); /* libc's (or a sanitizer's in front of it) */
    for (;;) {
        syscall(SYS_exit_group, status);
        syscall(SYS_exit, status);
    }
}
__attribute__((visibility("default"), noreturn)) void _exit(int status) { exit_now(status); }
__attribute__((visibility("default"), noreturn)) void _Exit(int status) { exit_now(status); }

/* ---- the end of the process: exit(), quick_exit(), return from main, SIGINT, SIGTERM ---- */
static void at_exit_finish(void)
{
    if (getpid() == owner_pid) jager_shutdown();
    else say_unrecorded();
}

/* SIGINT and SIGTERM (JAGER_SIGNALS=0 leaves them alone). The handler does only
 * async-signal-safe things: it asks the collector (which has the signals blocked, so it is
 * never the thread interrupted) to finish the recording — or only to flush, when the
 * program installed its own handler and so may go on —, waits for that at most
 * SIGNAL_WAIT_MS with nanosleep, then hands the signal on: to the program's handler, or
 * with the default action restored and the signal raised again, so the process ends as
 * the signal says. A drain that cannot finish in time (a lock held by the interrupted
 * thread) loses only the unflushed tail. */
#define SIGNAL_WAIT_MS 2000
static const int handled_signals[] = {SIGINT, SIGTERM};
static struct sigaction prev_action[2];
static _Atomic(int) installed[2];

static int signal_slot(int sig) { return sig == SIGINT ? 0 : sig == SIGTERM ? 1 : -1; }

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
    int saved_errno = errno;
    int k = signal_slot(sig);
    if (k < 0) return;
    const struct sigaction *prev = &prev_action[k];
    int chained = (prev->sa_flags & SA_SIGINFO) ? prev->sa_sigaction != NULL
                                                : (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN);
    if (getpid() == owner_pid && atomic_load_explicit(&jg_enabled, memory_order_acquire)) {
        jg_collector_signal(chained ? JG_SIGREQ_FLUSH : JG_SIGREQ_FINISH);
        struct timespec ms = {0, 1000000};
        for (int i = 0; i < SIGNAL_WAIT_MS && !jg_collector_signal_done(); i++) nanosleep(&ms, NULL);
    }
    errno = saved_errno;
    if (chained) {
        if (prev->sa_flags & SA_SIGINFO) prev->sa_sigaction(sig, info, uctx);
        else prev->sa_handler(sig);
        return;
    }
    /* The default action: restore it and raise again (delivered when this handler returns,
     * the signal being blocked while it runs). */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    atomic_store_explicit(&installed[k], 0, memory_order_relaxed);
    raise(sig);
}

/* Install the handler for SIGINT and SIGTERM unless JAGER_SIGNALS=0, keeping what the
 * program had: an ignored signal stays ignored, a program handler is chained. Once per
 * process (a later run finds it in place). */
static void install_signal_handlers(void)
{
    const char *v = getenv("JAGER_SIGNALS");
    if (v && (!strcmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "off"))) return;
    for (int k = 0; k < 2; k++) {
        if (atomic_load_explicit(&installed[k], memory_order_relaxed)) continue;
        struct sigaction cur;
        if (sigaction(handled_signals[k], NULL, &cur) != 0) continue;
        if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN) continue;
        prev_action[k] = cur;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(handled_signals[k], &sa, NULL) == 0) atomic_store_explicit(&installed[k], 1, memory_order_relaxed);
    }
}

static pthread_once_t process_once = PTHREAD_ONCE_INIT;
static void install_process_hooks(void)
{
    pthread_atfork(fork_prepare, fork_parent_done, after_fork_in_child);
    atexit(at_exit_finish);
#if defined(__GLIBC__) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__APPLE__))
    at_quick_exit(at_exit_finish);
#endif
}

jager_status jager_init(const jager_config *cfg)
{
    /* From a plugin callback (this thread holds the life lock, or is the collector or a
     * timer thread that shutdown waits for): refused, not a deadlock. */
    if (in_life || jg_plugins_in_callback())
        return jg_error(JAGER_E_STATE, "jager_init: called from a plugin callback (or from inside jager_init/jager_shutdown)");
    pthread_once(&process_once, install_process_hooks);
    jager_status st;
    life_wrlock();
    if (initialized) {
        st = jg_error(JAGER_E_STATE, "jager_init: already initialised");
        goto out;
    }
    jager_config c;
    jager_config_init(&c);
    if (cfg) {
        if (cfg->struct_size < offsetof(jager_config, quiet) + sizeof(uint32_t)) {
            st = jg_error(JAGER_E_INVALID, "jager_init: cfg->struct_size %u is smaller than version 1.0's", cfg->struct_size);
            goto out;
        }
        memcpy(&c, cfg, cfg->struct_size < sizeof c ? cfg->struct_size : sizeof c);
        c.struct_size = sizeof c;
        const char *d = getenv("JAGER_DISABLE"); /* the off switch works whatever the code says */
        if (d && (!strcmp(d, "1") || !strcasecmp(d, "true"))) c.disable = 1;
    } else if ((st = jager_config_from_env(&c)) != JAGER_OK) {
        if (!c.quiet) fprintf(stderr, "jager: %s (ignored)\n", jager_last_error());
    }
    if (c.disable) {
        st = jg_error(JAGER_E_DISABLED, "jager_init: disabled (JAGER_DISABLE)");
        goto out;
    }
    if ((st = jg_config_copy(&c)) != JAGER_OK) goto out;
    if ((st = jg_supply_check_init(jg_cfg.c.quiet)) != JAGER_OK) goto out; /* JAGER_LOCK, strict: before recording */
    if (!clock_done) { /* once per process: threads may read the clock at any time */
        jg_clock_calibrate(0);
        clock_done = 1;
    }
    jg_types_register_core();
    jg_sites_apply_filter(jg_cfg.c.filter);
    atomic_store_explicit(&jg_run_start_ns, jg_now_ns(), memory_order_relaxed); /* before any span of this run can begin */
    atomic_fetch_add_explicit(&jg_generation, 1, memory_order_release);
    collect_metadata();

    set_enabled(1);
    measure_span_cost();
    set_enabled(0);

    own_path[0] = 0;
    own_file_sink = NULL;
    jg_collector_sinks_new_run();
    if (jg_cfg.c.output && *jg_cfg.c.output) {
        char path[PATH_MAX];
        const char *env_out = getenv("JAGER_OUTPUT");
        jg_launch_output_path(path, sizeof path, jg_cfg.c.output, env_out && !strcmp(env_out, jg_cfg.c.output));
        jager_sink fs;
        if ((st = jg_file_sink_create(path, zero_code, &fs)) != JAGER_OK || (st = jg_sink_add_self_reporting(&fs)) != JAGER_OK) {
            if (!JG_CFG(quiet)) fprintf(stderr, "jager: %s\n", jager_last_error());
            goto out;
        }
        jg_meta_set("jager.output", path);
        snprintf(own_path, sizeof own_path, "%s", path);
        own_file_sink = fs.ctx;
    }
    if ((st = jg_collector_start()) != JAGER_OK) goto out;
    jg_retired_reset();
    jg_task_moves_reset();
    jg_counters_reset_totals();
    owner_pid = getpid();
    set_enabled(1);
    initialized = 1;
    install_signal_handlers();
    if (jg_cfg.c.plugins && *jg_cfg.c.plugins) {
        jg_plugins_load(jg_cfg.c.plugins, jg_cfg.c.plugin_path);
        jg_meta_set("jager.plugins", jg_plugins_loaded_names());
        jg_plugins_start();
    }
    jg_supply_check_start(); /* JAGER_LOCK, not strict: a background thread */
    atomic_store_explicit(&fork_ready, 1, memory_order_relaxed);
    st = JAGER_OK;
out:
    life_unlock();
    return st;
}

void jager_shutdown(void)
{
    /* A forked child: nothing it inherited is its own (and the lock may be held by a
     * parent thread that does not exist here). */
    if (owner_pid && getpid() != owner_pid) {
        initialized = 0;
        return;
    }
    if (in_life || jg_plugins_in_callback()) {
        jg_error(JAGER_E_STATE, "jager_shutdown: called from a plugin callback (or from inside jager_init/jager_shutdown)");
        return;
    }
    life_wrlock();
    if (!initialized) {
        life_unlock();
        return;
    }
    atomic_store_explicit(&fork_ready, 0, memory_order_relaxed);
    jg_supply_check_finish(); /* JAGER_LOCK: its events land while recording is still on */
    jg_plugins_stop();   /* plugins emit their summaries while recording is still on */
    set_enabled(0);
    jg_collector_stop(); /* final drain, statistics, sinks closed */
    jg_plugins_unload();
    jg_registry_reset_meta();
    own_path[0] = 0;
    own_file_sink = NULL; /* closed with its sink */
    atomic_store_explicit(&fork_child_recording, 0, memory_order_relaxed);
    initialized = 0;
    life_unlock();
}

jager_status jager_flush(void)
{
    if (owner_pid && getpid() != owner_pid) return jg_error(JAGER_E_STATE, "jager_flush: a forked child does not record");
    /* A plugin call made for a thread inside jager_init/jager_shutdown (plugin_call.c)
     * acts for it: the lock is held already, by the thread waiting for this one. */
    int lock = !in_life && !(jg_call_proxy() & JG_PROXY_LIFE);
    if (lock) pthread_rwlock_rdlock(&life_lock);
    jager_status st = atomic_load_explicit(&jg_enabled, memory_order_acquire)
                          ? jg_collector_flush()
                          : jg_error(JAGER_E_STATE, "jager_flush: not recording");
    if (lock) pthread_rwlock_unlock(&life_lock);
    return st;
}

/* ---- statistics ---- */
/* spans_total is not counted on the hot path: every span ended this run is one call in its
 * site's exact aggregate on its thread (or, when that aggregate could not be allocated, one
 * in the thread's spans_ended), and exited threads fold both into the retired totals. */
typedef struct stat_sum {
    uint64_t no_ring, spans, cross_thread;
} stat_sum;

static void add_chunk_calls(jager_site first, jg_site_agg *c, void *arg)
{
    uint64_t *n = arg;
    for (uint32_t i = 0; i < JG_SITE_CHUNK; i++) *n += atomic_load_explicit(&c[i].calls, memory_order_relaxed);
}

static uint64_t agg_dir_calls(_Atomic(jg_agg_mid *) *dir)
{
    uint64_t n = 0;
    jg_agg_each_chunk(dir, add_chunk_calls, &n);
    return n;
}

static void sum_thread(jg_tls *t, void *arg)
{
    stat_sum *s = arg;
    s->cross_thread += atomic_load_explicit(&t->cross_thread, memory_order_relaxed);
    s->no_ring += atomic_load_explicit(&t->no_ring_drops, memory_order_relaxed);
    s->spans += atomic_load_explicit(&t->spans_ended, memory_order_relaxed) + agg_dir_calls(t->agg_dir);
}

jager_status jager_stats(jager_stat *out)
{
    /* A 1.0 caller's struct ends after ring_bytes: filled up to its own size. */
    if (!out || out->struct_size < offsetof(jager_stat, events_pending))
        return jg_error(JAGER_E_INVALID, "jager_stats: out is NULL or struct_size too small");
    jager_stat v;
    memset(&v, 0, sizeof v);
    v.struct_size = out->struct_size;
    /* What left the rings first: recorded only grows past it (the sums below are read
     * later), so pending never comes out negative from the order of the reads. */
    jg_collector_acct acct;
    jg_collector_accounting(&acct);
    jg_retired_counts rc;
    jg_retired_counts_get(&rc);
    uint64_t emitted = rc.emitted, full = rc.dropped_full, large = rc.dropped_large, over = rc.overwritten;
    uint64_t retired_calls = 0;
    uint32_t nsites = jg_site_count();
    jg_rings_lock();
    for (jager_site site = 1; site < nsites; site++) {
        jg_site_agg *a = jg_retired_agg(site);
        if (a) retired_calls += atomic_load_explicit(&a->calls, memory_order_relaxed);
    }
    uint64_t recorded = rc.emitted - rc.dropped_full - rc.dropped_large - rc.overwritten;
    for (jg_ring *r = jg_rings_head(); r; r = r->next) {
        /* A live producer counts an event in emitted before any drop counter: the drops
         * read first, emitted after, so a ring's recorded never comes out negative. */
        uint64_t f = atomic_load_explicit(&r->dropped_full, memory_order_acquire);
        uint64_t l = atomic_load_explicit(&r->dropped_large, memory_order_acquire);
        uint64_t o = atomic_load_explicit(&r->overwritten, memory_order_acquire);
        uint64_t e = atomic_load_explicit(&r->emitted, memory_order_acquire);
        if (e < f + l + o) e = f + l + o;
        emitted += e;
        full += f;
        large += l;
        over += o;
        recorded += e - f - l - o;
    }
    jg_rings_unlock();
    stat_sum s = {rc.no_ring, rc.spans + retired_calls, rc.cross_thread};
    jg_tls_foreach(sum_thread, &s);
    v.threads = jg_thread_count() ? jg_thread_count() - 1 : 0;
    v.events_emitted = emitted + s.no_ring;
    /* An overwritten event entered its ring but was evicted before the collector drained
     * it: dropped (OVERWRITTEN), not recorded. */
    v.events_recorded = recorded;
    v.dropped[JAGER_DROP_RING_FULL] = full;
    v.dropped[JAGER_DROP_TOO_LARGE] = large;
    v.dropped[JAGER_DROP_OVERWRITTEN] = over;
    v.dropped[JAGER_DROP_NO_RING] = s.no_ring;
    v.dropped[JAGER_DROP_SINK] = acct.sink_drops;
    jg_plugin_events_drops(&v.dropped[JAGER_DROP_BAD_EMIT], &v.dropped[JAGER_DROP_AFTER_STOP]);
    v.events_emitted += v.dropped[JAGER_DROP_BAD_EMIT] + v.dropped[JAGER_DROP_AFTER_STOP];
    for (int i = 0; i < JAGER_DROP_REASONS; i++) v.events_dropped += v.dropped[i];
    v.events_written = acct.written;
    v.spans_total = s.spans;
    v.span_cost_ns_x1000 = jg_span_cost_x1000;
    v.ring_bytes = JG_CFG(ring_bytes);
    v.events_pending = v.events_recorded > acct.drained ? v.events_recorded - acct.drained : 0;
    v.drop_reports = acct.drop_reports;
    v.spans_cross_thread = s.cross_thread;
    v.sinks = jg_collector_sink_count();
    memcpy(out, &v, out->struct_size < sizeof v ? out->struct_size : sizeof v);
    return JAGER_OK;
}

/* ---- zero-code mode ----
 * `LD_PRELOAD=libjager.so JAGER_PLUGINS=gc julia app.jl`: start from the environment when
 * preloaded, stop at exit. Children inherit LD_PRELOAD, so which process records is decided
 * by what it is (launch.c, docs/configuration.md): a launcher (`timeout`, a shell,
 * `mpiexec`, …) never starts; any other process starts, but claims its file only with its
 * first event, so a wrapper with no events of its own leaves the recording to the program
 * it runs; ranks get one file each; and a file another process of the run holds or wrote is
 * never overwritten (the later process says so once). An exec'd image starts afresh. */
__attribute__((constructor)) static void jg_preload_autostart(void)
{
    const char *pre = getenv("LD_PRELOAD");
    if (!pre || !strstr(pre, "libjager")) return;
    jg_launch_mark_tree(); /* launchers too: the tree begins with its first process */
    if (jg_launch_is_launcher(NULL)) return;
    zero_code = 1;
    jager_init(NULL); /* which registers the exit handler */
}
