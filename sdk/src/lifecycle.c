/* jager_init / jager_shutdown: configuration, clock, metadata, the SDK's own cost, the
 * collector, the file sink and plugins — and zero-code mode when preloaded. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

_Atomic(int) jg_enabled;
int jager_active; /* the exported mirror of jg_enabled, for inline tests in the macros */

static void set_enabled(int on)
{
    atomic_store_explicit(&jg_enabled, on, memory_order_release);
    __atomic_store_n(&jager_active, on, __ATOMIC_RELEASE);
}
_Atomic(uint32_t) jg_generation;
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
static _Atomic(pid_t) owner_pid; /* the process that called jager_init: a forked child is not it */

static void life_wrlock(void)
{
    pthread_rwlock_wrlock(&life_lock);
    in_life = 1;
}

static void life_unlock(void)
{
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
    }
    jg_site_agg *a = jg_tls_site_agg(t, site);
    if (a) {
        atomic_store_explicit(&a->calls, 0, memory_order_relaxed);
        atomic_store_explicit(&a->total_ns, 0, memory_order_relaxed);
        atomic_store_explicit(&a->min_ns, UINT64_MAX, memory_order_relaxed);
        atomic_store_explicit(&a->max_ns, 0, memory_order_relaxed);
        atomic_store_explicit(&a->sampled_at, 0, memory_order_relaxed);
        for (int b = 0; b < JAGER_HIST_BUCKETS; b++) atomic_store_explicit(&a->hist[b], 0, memory_order_relaxed);
    }
    atomic_store_explicit(&t->spans_ended, 0, memory_order_relaxed);
    t->next_span = 0;
    char b[32];
    snprintf(b, sizeof b, "%.3f", (double)jg_span_cost_x1000 / 1000.0);
    jg_meta_set("jager.span_cost_ns", b);
}

/* "%p" in the output path becomes the pid, so preloaded children do not share one file. */
static void expand_output(char *out, size_t size, const char *pattern)
{
    size_t o = 0;
    for (const char *p = pattern; *p && o + 1 < size; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            o += (size_t)snprintf(out + o, size - o, "%d", (int)getpid());
            if (o >= size) o = size - 1;
            p++;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = 0;
}

/* A forked child has the parent's rings and sinks but no collector thread (and maybe a lock
 * held by a thread that does not exist there): it stops recording, and never touches what
 * it inherited — its jager_shutdown(), exit handler and signal handler are no-ops (they
 * compare getpid() with owner_pid), so the parent's file stays the parent's. */
static void after_fork_in_child(void) { set_enabled(0); }

/* ---- the end of the process: exit(), quick_exit(), return from main, SIGINT, SIGTERM ---- */
static void at_exit_finish(void)
{
    if (getpid() == owner_pid) jager_shutdown();
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
    pthread_atfork(NULL, NULL, after_fork_in_child);
    atexit(at_exit_finish);
#if defined(__GLIBC__) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__APPLE__))
    at_quick_exit(at_exit_finish);
#endif
}

jager_status jager_init(const jager_config *cfg)
{
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
    if (!clock_done) { /* once per process: threads may read the clock at any time */
        jg_clock_calibrate(0);
        clock_done = 1;
    }
    jg_types_register_core();
    jg_sites_apply_filter(jg_cfg.c.filter);
    atomic_fetch_add_explicit(&jg_generation, 1, memory_order_release);
    collect_metadata();

    set_enabled(1);
    measure_span_cost();
    set_enabled(0);

    if (jg_cfg.c.output && *jg_cfg.c.output) {
        char path[PATH_MAX];
        expand_output(path, sizeof path, jg_cfg.c.output);
        jager_sink fs;
        if ((st = jg_file_sink_create(path, &fs)) != JAGER_OK || (st = jg_sink_add_self_reporting(&fs)) != JAGER_OK) {
            if (!JG_CFG(quiet)) fprintf(stderr, "jager: %s\n", jager_last_error());
            goto out;
        }
        jg_meta_set("jager.output", path);
    }
    if ((st = jg_collector_start()) != JAGER_OK) goto out;
    jg_retired_reset();
    owner_pid = getpid();
    set_enabled(1);
    initialized = 1;
    install_signal_handlers();
    if (jg_cfg.c.plugins && *jg_cfg.c.plugins) {
        jg_plugins_load(jg_cfg.c.plugins, jg_cfg.c.plugin_path);
        jg_meta_set("jager.plugins", jg_plugins_loaded_names());
        jg_plugins_start();
    }
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
    life_wrlock();
    if (!initialized) {
        life_unlock();
        return;
    }
    jg_plugins_stop();   /* plugins emit their summaries while recording is still on */
    set_enabled(0);
    jg_collector_stop(); /* final drain, statistics, sinks closed */
    jg_plugins_unload();
    jg_registry_reset_meta();
    initialized = 0;
    life_unlock();
}

jager_status jager_flush(void)
{
    if (owner_pid && getpid() != owner_pid) return jg_error(JAGER_E_STATE, "jager_flush: a forked child does not record");
    int lock = !in_life;
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
    uint64_t no_ring, spans;
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
    s->no_ring += atomic_load_explicit(&t->no_ring_drops, memory_order_relaxed);
    s->spans += atomic_load_explicit(&t->spans_ended, memory_order_relaxed) + agg_dir_calls(t->agg_dir);
}

jager_status jager_stats(jager_stat *out)
{
    if (!out || out->struct_size < sizeof(jager_stat))
        return jg_error(JAGER_E_INVALID, "jager_stats: out is NULL or struct_size too small");
    uint32_t size = out->struct_size;
    memset(out, 0, sizeof *out);
    out->struct_size = size;
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
    for (jg_ring *r = jg_rings_head(); r; r = r->next) {
        emitted += atomic_load_explicit(&r->emitted, memory_order_relaxed);
        full += atomic_load_explicit(&r->dropped_full, memory_order_relaxed);
        large += atomic_load_explicit(&r->dropped_large, memory_order_relaxed);
        over += atomic_load_explicit(&r->overwritten, memory_order_relaxed);
    }
    jg_rings_unlock();
    stat_sum s = {rc.no_ring, rc.spans + retired_calls};
    jg_tls_foreach(sum_thread, &s);
    out->threads = jg_thread_count() ? jg_thread_count() - 1 : 0;
    out->events_emitted = emitted + s.no_ring;
    out->events_recorded = emitted - full - large;
    out->dropped[JAGER_DROP_RING_FULL] = full;
    out->dropped[JAGER_DROP_TOO_LARGE] = large;
    out->dropped[JAGER_DROP_OVERWRITTEN] = over;
    out->dropped[JAGER_DROP_NO_RING] = s.no_ring;
    out->dropped[JAGER_DROP_SINK] = jg_collector_sink_drops();
    for (int i = 0; i < JAGER_DROP_REASONS; i++) out->events_dropped += out->dropped[i];
    out->events_written = jg_collector_written();
    out->spans_total = s.spans;
    out->span_cost_ns_x1000 = jg_span_cost_x1000;
    out->ring_bytes = JG_CFG(ring_bytes);
    return JAGER_OK;
}

/* ---- zero-code mode ----
 * `LD_PRELOAD=libjager.so JAGER_PLUGINS=gc julia app.jl`: start from the environment when
 * preloaded, stop at exit. Children inherit LD_PRELOAD: unless JAGER_OUTPUT names one file
 * per process ("%p"), only the first process of a tree starts, so a child never overwrites
 * its parent's file. */
__attribute__((constructor)) static void jg_preload_autostart(void)
{
    const char *pre = getenv("LD_PRELOAD");
    if (!pre || !strstr(pre, "libjager")) return;
    const char *started = getenv("JAGER_AUTOSTARTED");
    const char *out = getenv("JAGER_OUTPUT");
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    /* Our own pid means a wrapper (a shell script) exec'd the real program: start again,
     * the wrapper's recording ended with its image. */
    if (started && *started && strcmp(started, pid) != 0 && !(out && strstr(out, "%p"))) return;
    setenv("JAGER_AUTOSTARTED", pid, 1);
    jager_init(NULL); /* which registers the exit handler */
}
