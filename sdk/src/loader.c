/*
 * loader.c — plugin discovery, dlopen, descriptor checks and the plugins' lifecycle.
 *
 * JAGER_PLUGINS=a,b loads libjager-a.so from the first folder that has it: the
 * JAGER_PLUGIN_PATH folders in order, then the install's plugin folder (next to the
 * loaded libjager: <libdir>/jager/plugins, so a relocated install finds its own), then the
 * build tree's — only when libjager itself was loaded from the build tree, which a marker
 * file beside the build tree's libjager says (no build path is compiled into the
 * library). Every way a plugin can be unfit (bad name, not found, dlopen error, no entry
 * symbol, other ABI major, malformed descriptor, failing init) ends in one diagnostic and
 * the library closed again; the program runs on without it.
 *
 * Threads: load/start/stop/unload run on the thread calling jager_init/jager_shutdown;
 * flush runs on the collector thread while the others may run, so the plugin table is
 * published with release stores and the flush/stop hand-over is serialised by a mutex.
 *
 * Handles: a plugin holds a jager_plugin_handle * that is no pointer at all but a token
 * (slot index and generation), resolved under handle_lock by every host function. A
 * handle kept past jager_shutdown() resolves to nothing, so host calls made with it are
 * refused harmlessly instead of reading freed memory. Plugin code is opened with
 * RTLD_NODELETE: a thread a plugin forgot to stop may still run it after shutdown.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "plugin_handle.h"
#include "supply_check.h"

#define JG_MAX_PLUGINS 32
#define JG_PENDING_SINKS 8

/* The smallest descriptor accepted: everything up to the one required callback, init.
 * Later fields are optional, so a descriptor built with fewer of them (an older minor)
 * loads and its missing fields read as NULL. */
#define JG_DESC_MIN_SIZE (offsetof(jager_plugin_descriptor, init) + sizeof(((jager_plugin_descriptor *)0)->init))

/* Lifecycle phase of a handle. */
enum jg_phase {
    JG_PHASE_INIT = 1,    /* inside init: sinks are held back */
    JG_PHASE_STARTING,    /* inside start: sinks are added at once */
    JG_PHASE_RUNNING,     /* flush and extensions served */
    JG_PHASE_FAILED,      /* start failed: no flush/stop, still shut down and unloaded */
    JG_PHASE_STOPPED,     /* stop called */
    JG_PHASE_HUNG         /* a bounded callback never returned: no callback ever again (no shutdown) */
};

typedef struct jg_plugin {
    char name[JG_PLUGIN_NAME_MAX + 1];
    jager_plugin_handle *token;   /* what the plugin is given (slot and generation) */
    uint32_t slot;
    char path[PATH_MAX];
    void *dl;                     /* dlopen handle */
    void *state;                  /* what init returned */
    jager_plugin_descriptor desc; /* the plugin's descriptor, fields beyond its struct_size NULL */
    _Atomic(int) phase;
    jager_sink pending[JG_PENDING_SINKS]; /* sinks registered during init */
    uint32_t npending;
    jg_worker *worker;            /* runs its callbacks bounded (plugin_call.c); NULL: not yet, or inline */
} jg_plugin;

static jg_plugin *plugins[JG_MAX_PLUGINS];
static _Atomic(uint32_t) nplugins; /* published with release after the handle is complete */
static pthread_mutex_t phase_lock = PTHREAD_MUTEX_INITIALIZER; /* flush vs stop */
static char loaded_names[JG_MAX_PLUGINS * (JG_PLUGIN_NAME_MAX + 1) + 1];

/* ---- handles: tokens resolved under a lock ----
 * token = generation << 6 | slot; generations only grow, so a token of an unloaded plugin
 * never names the plugin loaded into its slot later. */
#define JG_SLOT_BITS 6
static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;
static jg_plugin *slot_plugin[JG_MAX_PLUGINS]; /* under handle_lock */
static uintptr_t slot_token[JG_MAX_PLUGINS];    /* under handle_lock */
static uintptr_t next_generation = 1;           /* under handle_lock */

static int slot_open(jg_plugin *h)
{
    pthread_mutex_lock(&handle_lock);
    int ok = 0;
    for (uint32_t i = 0; i < JG_MAX_PLUGINS; i++) {
        if (slot_plugin[i]) continue;
        slot_plugin[i] = h;
        slot_token[i] = (next_generation++ << JG_SLOT_BITS) | i;
        h->slot = i;
        h->token = (jager_plugin_handle *)slot_token[i];
        ok = 1;
        break;
    }
    pthread_mutex_unlock(&handle_lock);
    return ok;
}

static void slot_close(jg_plugin *h)
{
    pthread_mutex_lock(&handle_lock);
    if (h->token && slot_plugin[h->slot] == h) {
        slot_plugin[h->slot] = NULL;
        slot_token[h->slot] = 0;
    }
    pthread_mutex_unlock(&handle_lock);
}

/* Caller holds handle_lock. The live plugin a token names, or NULL. */
static jg_plugin *resolve_locked(const jager_plugin_handle *tok)
{
    uintptr_t t = (uintptr_t)tok;
    uint32_t slot = (uint32_t)(t & ((1u << JG_SLOT_BITS) - 1));
    if (!t || slot >= JG_MAX_PLUGINS || slot_token[slot] != t) return NULL;
    return slot_plugin[slot];
}

/* Plugin callbacks running on this thread (init, start, flush, stop, shutdown): the
 * lifecycle refuses jager_init/jager_shutdown from inside them. */
static __thread int in_callback __attribute__((tls_model("initial-exec")));
int jg_plugins_in_callback(void) { return in_callback; }
void jg_plugins_callback_enter(void) { in_callback++; }
void jg_plugins_callback_leave(void) { in_callback--; }

/* ---- names and messages ---- */

/* Plugin names become file names and environment variable names: [a-z0-9_-]+ only. */
static int name_is_valid(const char *s, size_t n)
{
    if (n == 0 || n > JG_PLUGIN_NAME_MAX) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return 0;
    }
    return 1;
}

/* Copy untrusted text (a rejected name, a descriptor's name) for a message: printable
 * ASCII kept, everything else as \xNN, cut with "..." when long. */
static const char *quote_untrusted(char *buf, size_t size, const char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 8 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
            buf[o++] = (char)c;
        } else {
            o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
        }
        if (i + 1 < n && o + 8 >= size) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
    }
    buf[o < size ? o : size - 1] = 0;
    return buf;
}

/* Report a refused plugin once: into the recording and stderr (jg_diag) and as the
 * calling thread's last error. */
static void refuse(const char *source, jager_severity level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void refuse(const char *source, jager_severity level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    jg_diag(source, level, msg);
    if (level >= JAGER_SEV_WARN) jg_error(JAGER_E_PLUGIN, "%s", msg);
}

/* ---- discovery ---- */

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Append " dir" to the "looked in" list for the not-found message. */
static void note_folder(char *looked, size_t size, const char *dir, size_t n)
{
    size_t used = strlen(looked);
    if (used + 4 >= size) return;
    snprintf(looked + used, size - used, "%s%.*s", used ? ", " : "", (int)n, dir);
}

/* Try folder \p dir (n bytes) for libjager-<name>.so; 1 and \p out filled when found. */
static int try_folder(const char *dir, size_t n, const char *name, char *out, size_t size, char *looked,
                      size_t lsize)
{
    if (n == 0) return 0; /* empty entries are skipped (not "the current folder") */
    note_folder(looked, lsize, dir, n);
    int w = snprintf(out, size, "%.*s%slibjager-%s.so", (int)n, dir, dir[n - 1] == '/' ? "" : "/", name);
    return w > 0 && (size_t)w < size && is_file(out);
}

/* The folder of the loaded libjager (or of the program, when linked statically) into
 * \p out; 0 when unknown. */
static int own_folder(char *out, size_t size, int *is_shared)
{
    Dl_info info;
    if (!dladdr((void *)(uintptr_t)&jg_plugins_load, &info) || !info.dli_fname || !info.dli_fname[0]) return 0;
    const char *slash = strrchr(info.dli_fname, '/');
    const char *base = slash ? slash + 1 : info.dli_fname;
    *is_shared = strncmp(base, "libjager.so", 11) == 0;
    if (!slash) return 0;
    size_t n = (size_t)(slash - info.dli_fname);
    if (n + 1 > size) return 0;
    memcpy(out, info.dli_fname, n);
    out[n] = 0;
    return 1;
}

/* The build tree's plugin folder, read from the marker file that the build writes beside
 * its libjager (JAGER_BUILD_TREE_MARKER, never installed); 0 when there is none. */
static int build_tree_folder(const char *own, char *out, size_t size)
{
    char marker[PATH_MAX];
    if (snprintf(marker, sizeof marker, "%s/" JAGER_BUILD_TREE_MARKER, own) >= (int)sizeof marker) return 0;
    FILE *f = fopen(marker, "r");
    if (!f) return 0;
    size_t n = fread(out, 1, size - 1, f);
    fclose(f);
    while (n && (out[n - 1] == '\n' || out[n - 1] == '\r')) n--;
    out[n] = 0;
    return n > 0 && out[0] == '/';
}

/* The folders searched after JAGER_PLUGIN_PATH, computed once (the library does not move). */
static char default_dirs[2][PATH_MAX + 16];
static const char *default_origin[2];
static uint32_t ndefault;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void find_default_folders(void)
{
    char own[PATH_MAX];
    int shared = 0;
    int have_own = own_folder(own, sizeof own, &shared);
    /* The installed plugin folder: beside the library that is running (follows
     * `cmake --install --prefix`); a program linking the core statically has no such
     * library and uses the folder configured at build time. */
    if (have_own && shared) {
        snprintf(default_dirs[ndefault], sizeof default_dirs[0], "%s/jager/plugins", own);
        default_origin[ndefault++] = "installed";
    }
#ifdef JAGER_PLUGIN_INSTALL_DIR
    else {
        snprintf(default_dirs[ndefault], sizeof default_dirs[0], "%s", JAGER_PLUGIN_INSTALL_DIR);
        default_origin[ndefault++] = "installed";
    }
#endif
    if (have_own && build_tree_folder(own, default_dirs[ndefault], sizeof default_dirs[0]))
        default_origin[ndefault++] = "build tree";
}

JAGER_API const char *jager_plugin_default_folder(uint32_t i, const char **origin)
{
    pthread_once(&default_once, find_default_folders);
    if (i >= ndefault) return NULL;
    if (origin) *origin = default_origin[i];
    return default_dirs[i];
}

/* Find the plugin file; the first folder holding it wins, like PATH. */
static int find_plugin(const char *name, const char *search_path, char *out, size_t size, char *looked,
                       size_t lsize)
{
    looked[0] = 0;
    for (const char *p = search_path; p && *p;) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        if (try_folder(p, n, name, out, size, looked, lsize)) return 1;
        p = colon ? colon + 1 : p + n;
    }
    const char *dir;
    for (uint32_t i = 0; (dir = jager_plugin_default_folder(i, NULL)); i++)
        if (try_folder(dir, strlen(dir), name, out, size, looked, lsize)) return 1;
    return 0;
}

/* ---- descriptor ---- */

#define DESC_HAS(size, field) \
    ((size) >= offsetof(jager_plugin_descriptor, field) + sizeof(((jager_plugin_descriptor *)0)->field))

/* Copy the fields the plugin's struct_size covers; the rest (and reserved[]) stay NULL. */
static void copy_descriptor(jager_plugin_descriptor *dst, const jager_plugin_descriptor *src)
{
    uint32_t size = src->struct_size;
    memset(dst, 0, sizeof *dst);
    dst->struct_size = size;
    dst->abi_major = src->abi_major;
    dst->abi_minor = src->abi_minor;
    dst->name = src->name;
    dst->version = src->version;
    dst->description = src->description;
    dst->init = src->init;
    if (DESC_HAS(size, start)) dst->start = src->start;
    if (DESC_HAS(size, flush)) dst->flush = src->flush;
    if (DESC_HAS(size, stop)) dst->stop = src->stop;
    if (DESC_HAS(size, shutdown)) dst->shutdown = src->shutdown;
    if (DESC_HAS(size, get_extension)) dst->get_extension = src->get_extension;
    if (DESC_HAS(size, noptions)) {
        dst->options = src->options;
        dst->noptions = src->options ? src->noptions : 0;
    }
    if (DESC_HAS(size, option_size)) dst->option_size = src->option_size;
    if (DESC_HAS(size, flags) && src->abi_minor >= 3) dst->flags = src->flags;
}

/* Check a descriptor; returns 0 and reports why when it is unfit. */
static int descriptor_ok(const char *name, const char *path, const jager_plugin_descriptor *d)
{
    if (!d) {
        refuse(name, JAGER_SEV_WARN,
               "plugin '%s': %s returned no descriptor (the plugin refuses plugin ABI %d.%d)", name,
               JAGER_PLUGIN_ENTRY_SYMBOL, JAGER_PLUGIN_ABI_MAJOR, JAGER_PLUGIN_ABI_MINOR);
        return 0;
    }
    /* The version fields come first and are read before anything else, so a plugin of
     * another major is named as such even when the rest of its layout differs. */
    if (d->struct_size < offsetof(jager_plugin_descriptor, name) || d->abi_major != JAGER_PLUGIN_ABI_MAJOR) {
        if (d->struct_size < offsetof(jager_plugin_descriptor, name))
            refuse(name, JAGER_SEV_WARN, "plugin '%s': descriptor struct_size %u is too small (at least %zu)", name,
                   d->struct_size, (size_t)JG_DESC_MIN_SIZE);
        else
            refuse(name, JAGER_SEV_WARN,
                   "plugin '%s': built for plugin ABI %u.%u, this core speaks %d.%d (the major must match): "
                   "rebuild it against this Jäger",
                   name, d->abi_major, d->abi_minor, JAGER_PLUGIN_ABI_MAJOR, JAGER_PLUGIN_ABI_MINOR);
        return 0;
    }
    if (d->struct_size < JG_DESC_MIN_SIZE) {
        refuse(name, JAGER_SEV_WARN, "plugin '%s': descriptor struct_size %u is too small (at least %zu)", name,
               d->struct_size, (size_t)JG_DESC_MIN_SIZE);
        return 0;
    }
    if (!d->name || strcmp(d->name, name) != 0) {
        char q[96];
        refuse(name, JAGER_SEV_WARN, "plugin '%s': %s names itself \"%s\"; the file must be libjager-<name>.so", name,
               path, d->name ? quote_untrusted(q, sizeof q, d->name, strnlen(d->name, 256)) : "(null)");
        return 0;
    }
    if (!d->init) {
        refuse(name, JAGER_SEV_WARN, "plugin '%s': descriptor has no init callback (required)", name);
        return 0;
    }
    return 1;
}

/* ---- bounded calls (issue 16 item 11) ----
 * Every callback of a plugin runs through plugin_call(): on the plugin's worker thread
 * (plugin_call.c) while the caller — the program's thread in jager_init/jager_shutdown or
 * at exit, the collector for flush — waits at most JAGER_PLUGIN_TIMEOUT_MS (default 10 s).
 * Past the limit the plugin is reported once and disabled — no callback of it or of its
 * sinks runs again, not even shutdown, since the stuck call may still use its state; its
 * code stays mapped (RTLD_NODELETE) and the worker is abandoned with the call's record,
 * which it frees if the call ever returns. */
enum { CALL_INIT, CALL_START, CALL_FLUSH, CALL_STOP, CALL_SHUTDOWN };
static const char *const call_names[] = {"init", "start", "flush", "stop", "shutdown"};

typedef struct plugin_job {
    int what;
    jager_status (*init)(const jager_host_api *host, jager_plugin_handle *self, void **state);
    jager_status (*start)(void *state);
    void (*other)(void *state);
    jager_plugin_handle *token;
    void *state;
    jager_status st;
    char err[256];
} plugin_job;

static void job_run(void *p)
{
    plugin_job *j = p;
    jg_error(JAGER_OK, "%s", ""); /* so a failing call's own message is told apart from older ones */
    switch (j->what) {
    case CALL_INIT: j->st = j->init(jg_host_api(), j->token, &j->state); break;
    case CALL_START: j->st = j->start(j->state); break;
    default: j->other(j->state); j->st = JAGER_OK;
    }
    snprintf(j->err, sizeof j->err, "%s", j->st != JAGER_OK ? jager_last_error() : "");
}

/* ---- a watch on a call that cannot be bounded (JAGER_PLUGIN_FLAG_CALLER_THREAD) ----
 * It still may not pass unnoticed: a watcher thread says once, when the call has run past
 * the bound, that it runs on and why it cannot be cut off (or the caller says it as the
 * call returns, when the watcher was not scheduled in time), so a hang names its plugin. */
typedef struct call_watch {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done, refs;
    long ms;
    _Atomic(int) said;
    char msg[256];
    char source[JG_PLUGIN_NAME_MAX + 1];
} call_watch;

static void watch_say(call_watch *w)
{
    if (!atomic_exchange(&w->said, 1)) jg_diag(w->source, JAGER_SEV_WARN, w->msg);
}

static void watch_release(call_watch *w)
{
    pthread_mutex_lock(&w->mu);
    int last = --w->refs == 0;
    pthread_mutex_unlock(&w->mu);
    if (!last) return;
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

static void *watch_main(void *p)
{
    call_watch *w = p;
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    long ms = w->ms;
    dl.tv_sec += ms / 1000;
    dl.tv_nsec += (ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->mu);
    int timed_out = 0;
    while (!w->done && !timed_out) timed_out = pthread_cond_timedwait(&w->cv, &w->mu, &dl) == ETIMEDOUT;
    int late = !w->done;
    pthread_mutex_unlock(&w->mu);
    if (late) watch_say(w);
    watch_release(w);
    return NULL;
}

static call_watch *watch_begin(const jg_plugin *h, const char *what, long ms)
{
    call_watch *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    pthread_mutex_init(&w->mu, NULL);
    jg_cond_init_monotonic(&w->cv);
    w->refs = 2;
    snprintf(w->source, sizeof w->source, "%s", h->name);
    snprintf(w->msg, sizeof w->msg,
             "plugin '%s': its %s has run for more than %ld ms (JAGER_PLUGIN_TIMEOUT_MS) on the program's thread; it "
             "cannot be cut off (JAGER_PLUGIN_FLAG_CALLER_THREAD)",
             h->name, what, ms);
    w->ms = ms;
    int rc = jg_host_thread_start(NULL, 1, watch_main, w);
    if (rc != 0) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return NULL;
    }
    return w;
}

static void watch_end(call_watch *w, uint64_t elapsed_ns, long ms)
{
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    w->done = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    if (elapsed_ns > (uint64_t)ms * 1000000u) watch_say(w);
    watch_release(w);
}

/* Call \p what of \p h (its callback is not NULL); 0 with *st_out and the failure's reason
 * (jager_last_error() of the call) when it returned, -1 when it hung: then the plugin is
 * disabled and reported. */
static int plugin_call(jg_plugin *h, int what, jager_status *st_out, char *why, size_t why_size)
{
    plugin_job local, *j = calloc(1, sizeof *j);
    int inline_call = !j;
    if (!j) j = memset(&local, 0, sizeof local);
    j->what = what;
    j->init = h->desc.init;
    j->start = h->desc.start;
    j->other = what == CALL_FLUSH ? h->desc.flush : what == CALL_STOP ? h->desc.stop : h->desc.shutdown;
    j->token = h->token;
    j->state = h->state;
    long ms = jg_plugin_timeout_ms();
    /* A plugin bound to the caller's thread: its lifecycle runs there, unbounded, watched. */
    long watch = 0;
    if (what != CALL_FLUSH && (h->desc.flags & JAGER_PLUGIN_FLAG_CALLER_THREAD)) {
        watch = ms;
        ms = 0;
    }
    if (!inline_call && ms > 0 && !h->worker) h->worker = jg_worker_new();
    if (inline_call || ms <= 0 || !h->worker) { /* unbounded, here, as before */
        call_watch *w = watch > 0 ? watch_begin(h, call_names[what], watch) : NULL;
        uint64_t t0 = w ? jg_now_ns() : 0;
        in_callback++;
        job_run(j);
        in_callback--;
        if (w) watch_end(w, jg_now_ns() - t0, watch);
    } else {
        int proxy = (jg_life_held() ? JG_PROXY_LIFE : 0) | (jg_collector_is_self() ? JG_PROXY_COLLECTOR : 0);
        if (jg_worker_call(h->worker, job_run, j, proxy, ms) != 0) {
            jg_worker *w = h->worker;
            h->worker = NULL;
            jg_worker_abandon(w, free, j);
            jg_plugin_mark_hung(h->token, call_names[what], ms);
            return -1;
        }
    }
    if (what == CALL_INIT) h->state = j->state;
    *st_out = j->st;
    if (why) snprintf(why, why_size, "%s", j->err);
    if (!inline_call) free(j);
    return 0;
}

void jg_plugin_mark_hung(const jager_plugin_handle *tok, const char *what, long ms)
{
    char name[JG_PLUGIN_NAME_MAX + 1];
    pthread_mutex_lock(&handle_lock);
    jg_plugin *h = resolve_locked(tok);
    int first = h && atomic_exchange_explicit(&h->phase, JG_PHASE_HUNG, memory_order_acq_rel) != JG_PHASE_HUNG;
    if (h) memcpy(name, h->name, sizeof name);
    pthread_mutex_unlock(&handle_lock);
    if (!first) return;
    jg_plugin_timers_stop(tok);
    jg_span_hooks_remove_owner(tok);
    jg_sinks_disable_owner(tok);
    refuse(name, JAGER_SEV_WARN,
           "plugin '%s': its %s has not returned after %ld ms (JAGER_PLUGIN_TIMEOUT_MS): the plugin is disabled, none of "
           "its callbacks runs again; the program runs on",
           name, what, ms);
}

int jg_plugin_is_hung(const jager_plugin_handle *tok)
{
    pthread_mutex_lock(&handle_lock);
    jg_plugin *h = resolve_locked(tok);
    int hung = h && atomic_load_explicit(&h->phase, memory_order_acquire) == JG_PHASE_HUNG;
    pthread_mutex_unlock(&handle_lock);
    return hung;
}

/* ---- loading one plugin ---- */

static int already_listed(const char *list, const char *upto, const char *name, size_t n)
{
    /* Was \p name already seen earlier in the same comma list? */
    for (const char *p = list; p < upto;) {
        const char *comma = memchr(p, ',', (size_t)(upto - p));
        const char *e = comma ? comma : upto;
        const char *a = p, *b = e;
        while (a < b && isspace((unsigned char)*a)) a++;
        while (b > a && isspace((unsigned char)b[-1])) b--;
        if ((size_t)(b - a) == n && memcmp(a, name, n) == 0) return 1;
        p = comma ? comma + 1 : upto;
    }
    return 0;
}

static int is_loaded(const char *name)
{
    uint32_t n = atomic_load_explicit(&nplugins, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(plugins[i]->name, name) == 0) return 1;
    return 0;
}

static void free_handle(jg_plugin *h)
{
    if (!h) return;
    slot_close(h);
    jg_worker_free(h->worker);
    /* RTLD_NODELETE keeps the code mapped: dlclose only drops the reference. */
    if (h->dl) dlclose(h->dl);
    free(h);
}

/* The refusal reported last while loading the list: a later plugin that loads fine must
 * not clear it from jager_last_error(). */
static char load_error[256];

/* Open, check and initialise plugin \p name; on success it is appended to the table. */
static void load_one(const char *name, const char *search_path)
{
    char looked[768];
    jg_plugin *h = calloc(1, sizeof *h);
    if (!h || !slot_open(h)) {
        free(h);
        refuse(name, JAGER_SEV_WARN, "plugin '%s': out of memory", name);
        return;
    }
    snprintf(h->name, sizeof h->name, "%s", name);
    if (!find_plugin(name, search_path, h->path, sizeof h->path, looked, sizeof looked)) {
        refuse(name, JAGER_SEV_WARN, "plugin '%s': libjager-%s.so not found (looked in: %s)", name, name,
               looked[0] ? looked : "no folders: set JAGER_PLUGIN_PATH");
        goto unload;
    }
    char supply_why[600];
    if (!jg_supply_plugin_allowed(h->path, supply_why, sizeof supply_why)) { /* JAGER_LOCK + JAGER_STRICT */
        refuse(name, JAGER_SEV_WARN, "plugin '%s': %s: supply chain: %s", name, h->path, supply_why);
        goto unload;
    }
    dlerror();
    /* NODELETE: a plugin thread that outlives the plugin's shutdown (a bug, reported when it
     * emits) must find its code still mapped rather than crash the process. */
    h->dl = dlopen(h->path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h->dl) {
        const char *e = dlerror();
        refuse(name, JAGER_SEV_WARN, "plugin '%s': cannot load %s: %s", name, h->path, e ? e : "unknown dlopen error");
        goto unload;
    }
    /* POSIX guarantees a function pointer survives the round trip through void *. */
    jager_plugin_entry_fn entry = (jager_plugin_entry_fn)dlsym(h->dl, JAGER_PLUGIN_ENTRY_SYMBOL);
    if (!entry) {
        refuse(name, JAGER_SEV_WARN, "plugin '%s': %s has no entry symbol %s (not a Jäger plugin?)", name, h->path,
               JAGER_PLUGIN_ENTRY_SYMBOL);
        goto unload;
    }
    const jager_plugin_descriptor *d = entry(JAGER_PLUGIN_ABI_MAJOR, JAGER_PLUGIN_ABI_MINOR);
    if (!descriptor_ok(name, h->path, d)) goto unload;
    copy_descriptor(&h->desc, d);

    atomic_store_explicit(&h->phase, JG_PHASE_INIT, memory_order_relaxed);
    char why[256];
    jager_status st;
    if (plugin_call(h, CALL_INIT, &st, why, sizeof why) != 0) {
        /* Hung in init: its stuck call may still use what it set up, so no shutdown; the
         * handle is closed, so its host calls are refused from now on. */
        jg_plugin_timers_stop(h->token);
        jg_span_hooks_remove_owner(h->token);
        goto unload;
    }
    if (st == JAGER_E_UNSUPPORTED) {
        refuse(name, JAGER_SEV_INFO, "plugin '%s' stepped aside (init: %s)", name, jager_strerror(st));
        goto unload;
    }
    if (st != JAGER_OK) {
        refuse(name, JAGER_SEV_WARN, "plugin '%s': init failed: %s (%d)%s%s", name, jager_strerror(st), (int)st,
               why[0] ? ": " : "", why);
        /* init may have started a timer before failing: none may outlive its code. */
        jg_plugin_timers_stop(h->token);
        jg_span_hooks_remove_owner(h->token);
        goto unload;
    }
    /* Init succeeded: the sinks it registered may now receive batches. */
    for (uint32_t i = 0; i < h->npending; i++) {
        jager_status s = jg_sink_add_owned(&h->pending[i], h->token);
        if (s != JAGER_OK)
            refuse(name, JAGER_SEV_WARN, "plugin '%s': its sink '%s' was not added: %s", name,
                   h->pending[i].name ? h->pending[i].name : "?", jager_strerror(s));
    }
    h->npending = 0;
    atomic_store_explicit(&h->phase, JG_PHASE_STARTING, memory_order_relaxed);
    uint32_t n = atomic_load_explicit(&nplugins, memory_order_relaxed);
    plugins[n] = h;
    atomic_store_explicit(&nplugins, n + 1, memory_order_release);
    return;
unload: /* dlclose (when opened) and free the handle */
    snprintf(load_error, sizeof load_error, "%s", jager_last_error());
    free_handle(h);
}

/* ---- the module's interface ---- */

void jg_plugins_load(const char *list, const char *search_path)
{
    if (!list) return;
    load_error[0] = 0;
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        const char *e = comma ? comma : p + strlen(p);
        const char *a = p, *b = e;
        while (a < b && isspace((unsigned char)*a)) a++;
        while (b > a && isspace((unsigned char)b[-1])) b--;
        size_t n = (size_t)(b - a);
        p = comma ? comma + 1 : e;
        if (n == 0 || already_listed(list, a, a, n)) continue;
        if (!name_is_valid(a, n)) {
            char q[96];
            refuse("core", JAGER_SEV_WARN,
                   "plugin name \"%s\" refused: names are 1 to %d characters of a-z, 0-9, '_' and '-'",
                   quote_untrusted(q, sizeof q, a, n), JG_PLUGIN_NAME_MAX);
            continue;
        }
        char name[JG_PLUGIN_NAME_MAX + 1];
        memcpy(name, a, n);
        name[n] = 0;
        if (is_loaded(name)) continue;
        if (atomic_load_explicit(&nplugins, memory_order_relaxed) >= JG_MAX_PLUGINS) {
            refuse(name, JAGER_SEV_WARN, "plugin '%s': more than %d plugins requested", name, JG_MAX_PLUGINS);
            continue;
        }
        load_one(name, search_path);
    }
    if (load_error[0]) jg_error(JAGER_E_PLUGIN, "%s", load_error);
    /* Names of the plugins that loaded, for metadata and messages. */
    size_t o = 0;
    uint32_t n = atomic_load_explicit(&nplugins, memory_order_relaxed);
    loaded_names[0] = 0;
    for (uint32_t i = 0; i < n; i++)
        o += (size_t)snprintf(loaded_names + o, sizeof loaded_names - o, "%s%s", i ? "," : "", plugins[i]->name);
}

void jg_plugins_start(void)
{
    uint32_t n = atomic_load_explicit(&nplugins, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        jg_plugin *h = plugins[i];
        if (atomic_load_explicit(&h->phase, memory_order_relaxed) != JG_PHASE_STARTING) continue;
        jager_status st = JAGER_OK;
        char why[256] = "";
        if (h->desc.start && plugin_call(h, CALL_START, &st, why, sizeof why) != 0) {
            snprintf(load_error, sizeof load_error, "%s", jager_last_error());
            continue; /* hung: disabled, reported */
        }
        if (st != JAGER_OK) {
            refuse(h->name, JAGER_SEV_WARN, "plugin '%s': start failed: %s (%d)%s%s; it stays inactive", h->name,
                   jager_strerror(st), (int)st, why[0] ? ": " : "", why);
            jg_plugin_timers_stop(h->token);
            jg_span_hooks_remove_owner(h->token);
            snprintf(load_error, sizeof load_error, "%s", jager_last_error());
        }
        pthread_mutex_lock(&phase_lock);
        if (atomic_load_explicit(&h->phase, memory_order_acquire) == JG_PHASE_STARTING)
            atomic_store_explicit(&h->phase, st == JAGER_OK ? JG_PHASE_RUNNING : JG_PHASE_FAILED, memory_order_release);
        pthread_mutex_unlock(&phase_lock);
    }
    /* The last refusal of this init stays the calling thread's last error. */
    if (load_error[0]) jg_error(JAGER_E_PLUGIN, "%s", load_error);
}

void jg_plugins_flush(void)
{
    uint32_t n = atomic_load_explicit(&nplugins, memory_order_acquire);
    if (n == 0) return;
    pthread_mutex_lock(&phase_lock);
    for (uint32_t i = 0; i < n; i++) {
        jg_plugin *h = plugins[i];
        jager_status st;
        if (atomic_load_explicit(&h->phase, memory_order_acquire) == JG_PHASE_RUNNING && h->desc.flush)
            (void)plugin_call(h, CALL_FLUSH, &st, NULL, 0);
    }
    pthread_mutex_unlock(&phase_lock);
}

void jg_plugins_stop(void)
{
    uint32_t n = atomic_load_explicit(&nplugins, memory_order_acquire);
    if (n == 0) return;
    /* Drain first (plugins get their flush): a plugin's sink then has seen every event
     * recorded before jager_shutdown() when its stop writes a summary from it. */
    jg_collector_flush();
    for (uint32_t i = 0; i < n; i++) {
        jg_plugin *h = plugins[i];
        /* Marked stopped under the lock: a flush already running finishes first, and none
         * starts on this plugin afterwards. */
        pthread_mutex_lock(&phase_lock);
        int was = atomic_load_explicit(&h->phase, memory_order_relaxed);
        if (was == JG_PHASE_RUNNING) atomic_store_explicit(&h->phase, JG_PHASE_STOPPED, memory_order_release);
        pthread_mutex_unlock(&phase_lock);
        /* The plugin's timers end before its stop: no callback runs after stop returns. */
        jg_plugin_timers_stop(h->token);
        jg_span_hooks_remove_owner(h->token);
        jager_status st;
        /* (a timer callback or hook that did not end in time disabled it just now) */
        if (was == JG_PHASE_RUNNING && h->desc.stop && atomic_load_explicit(&h->phase, memory_order_acquire) != JG_PHASE_HUNG)
            (void)plugin_call(h, CALL_STOP, &st, NULL, 0);
    }
    /* From here on a plugin event can no longer reach the file: it is counted as lost
     * (JAGER_DROP_AFTER_STOP) and its plugin named once. */
    jg_plugin_events_closing();
}

void jg_plugins_unload(void)
{
    uint32_t n = atomic_load_explicit(&nplugins, memory_order_acquire);
    atomic_store_explicit(&nplugins, 0, memory_order_release);
    /* Reverse load order: a plugin loaded later may use an earlier one's extension. */
    for (uint32_t i = n; i-- > 0;) {
        jg_plugin *h = plugins[i];
        plugins[i] = NULL;
        jg_plugin_timers_stop(h->token);
        jg_span_hooks_remove_owner(h->token);
        /* A hung plugin gets no shutdown: its stuck call may still use its state. */
        jager_status st;
        if (h->desc.shutdown && atomic_load_explicit(&h->phase, memory_order_acquire) != JG_PHASE_HUNG)
            (void)plugin_call(h, CALL_SHUTDOWN, &st, NULL, 0);
        free_handle(h);
    }
    loaded_names[0] = 0;
}

static const void *jg_plugins_extension(const char *id)
{
    if (!id) return NULL;
    uint32_t n = atomic_load_explicit(&nplugins, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        jg_plugin *h = plugins[i];
        int ph = atomic_load_explicit(&h->phase, memory_order_acquire);
        if (ph == JG_PHASE_FAILED || ph == JG_PHASE_HUNG || !h->desc.get_extension) continue;
        const void *x = h->desc.get_extension(h->state, id);
        if (x) return x;
    }
    return NULL;
}

uint32_t jg_plugins_count(void) { return atomic_load_explicit(&nplugins, memory_order_acquire); }

const char *jg_plugins_loaded_names(void) { return loaded_names; }

JAGER_API const void *jager_extension_get(const char *id) { return jg_plugins_extension(id); }

/* ---- for host_api.c ---- */

int jg_plugin_handle_name(const jager_plugin_handle *tok, char out[JG_PLUGIN_NAME_MAX + 1])
{
    pthread_mutex_lock(&handle_lock);
    jg_plugin *h = resolve_locked(tok);
    if (h) memcpy(out, h->name, sizeof h->name);
    pthread_mutex_unlock(&handle_lock);
    if (!h) snprintf(out, JG_PLUGIN_NAME_MAX + 1, "%s", "plugin");
    return h != NULL;
}

jager_status jg_plugin_handle_add_sink(jager_plugin_handle *tok, const jager_sink *sink)
{
    char name[JG_PLUGIN_NAME_MAX + 1];
    if (!jg_plugin_handle_name(tok, name))
        return jg_error(JAGER_E_STATE, "register_sink: the plugin handle is not (or no longer) loaded");
    if (!sink || sink->struct_size < offsetof(jager_sink, write) + sizeof sink->write || !sink->write)
        return jg_error(JAGER_E_INVALID, "plugin '%s': register_sink: NULL sink, no write callback or struct_size too small",
                        name);
    /* Sinks are registered from init or start, which run on the thread that also unloads:
     * the plugin cannot go away under this call. Another thread is refused by phase. */
    pthread_mutex_lock(&handle_lock);
    jg_plugin *h = resolve_locked(tok);
    int phase = h ? atomic_load_explicit(&h->phase, memory_order_acquire) : 0;
    jager_status st = JAGER_OK;
    switch (phase) {
    case JG_PHASE_INIT:
        if (h->npending == JG_PENDING_SINKS) {
            st = jg_error(JAGER_E_FULL, "plugin '%s': register_sink: more than %d sinks", name, JG_PENDING_SINKS);
            break;
        }
        /* Copied as jager_sink_add would: only the whole fields the plugin's struct_size
         * covers (every field after the first 8 bytes is 8 bytes wide); the rest NULL. */
        size_t n = sink->struct_size < sizeof(jager_sink) ? sink->struct_size & ~(size_t)7 : sizeof(jager_sink);
        memset(&h->pending[h->npending], 0, sizeof(jager_sink));
        memcpy(&h->pending[h->npending], sink, n);
        h->pending[h->npending].struct_size = sizeof(jager_sink);
        h->npending++;
        break;
    case JG_PHASE_STARTING:
        st = jg_sink_add(sink);
        break;
    default:
        st = jg_error(JAGER_E_STATE, "plugin '%s': register_sink is only allowed from init or start", name);
    }
    pthread_mutex_unlock(&handle_lock);
    return st;
}

int jg_plugin_handle_live(const jager_plugin_handle *tok)
{
    pthread_mutex_lock(&handle_lock);
    int live = resolve_locked(tok) != NULL;
    pthread_mutex_unlock(&handle_lock);
    return live;
}

const void *jg_plugin_handle_extension(const jager_plugin_handle *tok, const char *id)
{
    if (!id || !jg_plugin_handle_live(tok)) return NULL;
    return jg_plugins_extension(id);
}

/* A child made by fork(): the plugins are the parent's (their threads, timers and state
 * are the parent's or gone): forgotten without a call, never stopped or shut down here.
 * Their code stays mapped; an event one of them emits in the child is still recorded. */
void jg_plugins_fork_child(void)
{
    static const pthread_mutex_t m0 = PTHREAD_MUTEX_INITIALIZER;
    phase_lock = m0;
    handle_lock = m0;
    atomic_store_explicit(&nplugins, 0, memory_order_relaxed); /* plugins[] keeps the handles (reachable) */
    loaded_names[0] = 0;
    jg_plugin_timers_fork_child();
}
