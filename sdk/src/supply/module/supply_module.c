/* supply_module.c — libjager-supply.so, loaded by the core (supply_check.c) only when
 * JAGER_LOCK is set. JAGER_LOCK at jager_init (docs/supply-chain.md): the shared objects this
 * process maps (dl_iterate_phdr, the executable included) against the lock file's. Each
 * difference is a log event (severity error, security=true, kind/package/file/detail) in
 * the recording. Not strict: the watcher thread does the first check after recording
 * starts. JAGER_STRICT=1: the first check runs before recording starts and jager_init
 * returns JAGER_E_SUPPLY_CHAIN on any difference; JAGER_STRICT=abort: the process exits (78).
 * In strict mode a plugin is loaded only if the lock lists it unchanged.
 * Objects mapped later (dlopen, the libraries a plugin pulls in): the watcher looks at the
 * dynamic loader's count of objects loaded and unloaded (dlpi_adds, dlpi_subs: one
 * dl_iterate_phdr call that stops at the first object) every JS_WATCH_MS, and when it moved,
 * stats every mapped object and hashes those it has not seen with that (dev, inode, size,
 * mtime, ctime). The host is never blocked: the loader's lock is held only to copy the
 * paths. jager_shutdown stops the watcher and checks what was mapped since its last look.
 * A late object that differs is a security event with supply.late=true; strict: also a line
 * on stderr (the object is already mapped: the run goes on); abort: the process exits (78). */
#include "supply.h"
#include "supply_module.h"

#include <errno.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#define JG_SUPPLY_EXIT 78
#ifndef JS_WATCH_MS
#define JS_WATCH_MS 100 /* how often the watcher reads the loader's counters */
#endif

static pthread_t watcher;
static int watcher_running;
static pthread_mutex_t watch_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watch_cv;
static int watch_stop;
static json_t *seen;           /* path -> "dev:ino:size:mtime:ctime" of each object checked */
static json_t *locked_objects; /* the lock's shared_objects (NULL: the lock has none) */
static int lock_unusable;      /* the first check found the lock unusable: nothing to watch */
static char *lock_path;
static json_t *strict_objects; /* strict: the lock's shared_objects, for plugins before they load */
static jg_supply_host host;    /* the core's jager_log */
static int strict_at_init, quiet_at_init;

static void log_problems(const js_report *r, int late)
{
    for (size_t i = 0; i < r->n; i++) {
        const js_problem *p = &r->v[i];
        char body[2600];
        snprintf(body, sizeof body, "supply chain: %s: %s%s%s: %s%s", p->kind, p->package, *p->file ? " " : "", p->file, p->detail,
                 late ? " (mapped after start)" : "");
        jager_attr a[6] = {
            {.key = "security", .kind = JAGER_ATTR_BOOL, .value.boolean = 1},
            {.key = "supply.kind", .kind = JAGER_ATTR_STR, .value.str = p->kind},
            {.key = "supply.package", .kind = JAGER_ATTR_STR, .value.str = p->package},
            {.key = "supply.file", .kind = JAGER_ATTR_STR, .value.str = p->file},
            {.key = "supply.detail", .kind = JAGER_ATTR_STR, .value.str = p->detail},
            {.key = "supply.late", .kind = JAGER_ATTR_BOOL, .value.boolean = 1},
        };
        host.log(JAGER_SEV_ERROR, body, a, late ? 6 : 5);
    }
    if (r->oom) {
        jager_attr a[2] = {{.key = "security", .kind = JAGER_ATTR_BOOL, .value.boolean = 1},
                           {.key = "supply.kind", .kind = JAGER_ATTR_STR, .value.str = "incomplete"}};
        host.log(JAGER_SEV_ERROR, "supply chain: out of memory: not every difference was recorded", a, 2);
    }
}

/* "dev:ino:size:mtime_ns:ctime_ns" of \p path ("" when it cannot be stat'ed). */
static void stat_key(const char *path, char *buf, size_t size)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        buf[0] = 0;
        return;
    }
    snprintf(buf, size, "%llu:%llu:%lld:%lld.%09ld:%lld.%09ld", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
             (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec,
             st.st_ctim.tv_nsec);
}

/* Remember the objects of \p objs (an objects array) as checked. */
static void mark_seen(json_t *objs)
{
    if (!seen && !(seen = json_object())) return;
    size_t i;
    json_t *o;
    json_array_foreach(objs, i, o) {
        const char *p = json_string_value(json_object_get(o, "path"));
        char key[160];
        if (!p) continue;
        stat_key(p, key, sizeof key);
        json_object_set_new_nocheck(seen, p, json_string(key)); /* paths need not be UTF-8 */
    }
}

/* The check itself: 0 clean, 1 differences (in \p r), -1 the lock is unusable (\p r holds why).
 * Keeps the lock's shared objects for the watcher. */
static int check(const char *path, js_report *r)
{
    char err[1024];
    json_t *lock = js_lock_load(path, err, sizeof err);
    if (!lock) {
        js_report_add(r, "lock-unreadable", "(lock)", path, "%s", err);
        lock_unusable = 1;
        return -1;
    }
    json_t *locked = json_object_get(lock, "shared_objects");
    json_decref(locked_objects);
    locked_objects = json_incref(locked);
    if (locked) {
        json_t *now = js_objects_self(0);
        if (!now) r->oom = 1;
        else {
            js_compare_objects(locked, now, 1, 0, r);
            mark_seen(now);
            json_decref(now);
        }
    }
    json_decref(lock);
    return r->n || r->oom ? 1 : 0;
}

/* ---- the watcher: objects mapped after start ---- */
typedef struct loader_count {
    unsigned long long adds, subs;
    int known;
} loader_count;

static int count_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    loader_count *c = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c->adds = info->dlpi_adds;
        c->subs = info->dlpi_subs;
        c->known = 1;
    }
    return 1; /* the counters are the same in every entry: the first is enough */
}

static int paths_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    if (info->dlpi_name && strchr(info->dlpi_name, '/')) json_array_append_new(data, json_string_nocheck(info->dlpi_name));
    return 0;
}

/* Check the objects mapped now that the watcher has not seen as they are: hashed (off the
 * program's threads), compared with the lock, each difference an event at once. */
static void check_new_objects(void)
{
    if (!locked_objects) return;
    json_t *names = json_array(), *fresh = json_array();
    if (!names || !fresh) goto out;
    dl_iterate_phdr(paths_cb, names); /* only copies the names under the loader's lock */
    size_t i;
    json_t *v;
    json_array_foreach(names, i, v) {
        char real[PATH_MAX], key[160];
        const char *p = realpath(json_string_value(v), real) ? real : json_string_value(v);
        stat_key(p, key, sizeof key);
        const char *was = json_string_value(json_object_get(seen, p));
        if (was && !strcmp(was, key)) continue;
        size_t k;
        json_t *f;
        int dup = 0;
        json_array_foreach(fresh, k, f) dup |= !strcmp(json_string_value(f), p);
        if (!dup) json_array_append_new(fresh, json_string_nocheck(p));
    }
    if (!json_array_size(fresh)) goto out;
    json_t *objs = js_objects_from_paths(fresh, 1);
    js_report r = {0};
    if (!objs) r.oom = 1;
    else {
        js_compare_objects(locked_objects, objs, 1, 1, &r); /* each new one: locked and unchanged, or a problem */
        mark_seen(objs);
    }
    json_decref(objs);
    log_problems(&r, 1);
    if ((r.n || r.oom) && strict_at_init) {
        if (!quiet_at_init || strict_at_init == 2) {
            fprintf(stderr, "jager: supply chain: an object mapped after start differs from the lock %s:\n", lock_path);
            js_report_print(&r, stderr);
        }
        if (strict_at_init == 2) {
            fprintf(stderr, "jager: supply chain: JAGER_STRICT=abort: exiting (status %d)\n", JG_SUPPLY_EXIT);
            fflush(stderr);
            _exit(JG_SUPPLY_EXIT);
        }
        if (!quiet_at_init)
            fprintf(stderr, "jager: supply chain: JAGER_STRICT: it is mapped already; recorded as a security event, the run goes on\n");
    }
    js_report_free(&r);
out:
    json_decref(names);
    json_decref(fresh);
}

static void *watcher_main(void *arg)
{
    (void)arg;
    /* The counters first: whatever is loaded after this read moves them, so nothing mapped
     * after the look below waits for jager_shutdown. */
    loader_count last = {0};
    dl_iterate_phdr(count_cb, &last);
    if (!strict_at_init) { /* the first check, off the program's threads */
        js_report r = {0};
        check(lock_path, &r);
        log_problems(&r, 0);
        js_report_free(&r);
    } else {
        check_new_objects(); /* mapped since jager_init's check */
    }
    pthread_mutex_lock(&watch_mu);
    while (!watch_stop && !lock_unusable && locked_objects) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += (long)JS_WATCH_MS * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&watch_cv, &watch_mu, &until);
        if (watch_stop) break;
        pthread_mutex_unlock(&watch_mu);
        loader_count now = {0};
        dl_iterate_phdr(count_cb, &now);
        if (!now.known || !last.known || now.adds != last.adds || now.subs != last.subs) check_new_objects();
        last = now;
        pthread_mutex_lock(&watch_mu);
    }
    pthread_mutex_unlock(&watch_mu);
    return NULL;
}

static int strict_mode(void)
{
    const char *s = getenv("JAGER_STRICT");
    if (!s || !*s || !strcmp(s, "0") || !strcasecmp(s, "false")) return 0;
    return !strcasecmp(s, "abort") ? 2 : 1;
}

static void reset_state(void)
{
    json_decref(seen);
    seen = NULL;
    json_decref(locked_objects);
    locked_objects = NULL;
    json_decref(strict_objects);
    strict_objects = NULL;
    free(lock_path);
    lock_path = NULL;
    lock_unusable = 0;
}

static int check_init(const jg_supply_host *h, const char *path, int quiet, char *why, size_t size)
{
    memset(&host, 0, sizeof host);
    memcpy(&host, h, h->struct_size < sizeof host ? h->struct_size : sizeof host);
    int strict = strict_mode();
    reset_state();
    strict_at_init = strict;
    quiet_at_init = quiet;
    if (!(lock_path = strdup(path))) {
        snprintf(why, size, "JAGER_LOCK: out of memory");
        return -1;
    }
    if (!strict) return 0; /* check_start, once recording is on */
    js_report r = {0};
    int rc = check(path, &r);
    if (rc == 0) {
        js_report_free(&r);
        strict_objects = json_incref(locked_objects);
        return 0;
    }
    if (!quiet || strict == 2) {
        fprintf(stderr, "jager: supply chain: %s differs from the lock %s:\n", rc < 0 ? "the lock cannot be used;" : "what this process maps",
                path);
        js_report_print(&r, stderr);
    }
    size_t n = r.n;
    js_report_free(&r);
    if (strict == 2) {
        fprintf(stderr, "jager: supply chain: JAGER_STRICT=abort: exiting before the program runs (status %d)\n", JG_SUPPLY_EXIT);
        fflush(stderr);
        _exit(JG_SUPPLY_EXIT);
    }
    snprintf(why, size, "jager_init: supply chain: %zu difference%s from the lock %s (JAGER_STRICT): not recording", n,
             n == 1 ? "" : "s", path);
    return 1;
}

static int plugin_allowed(const char *path, char *why, size_t size)
{
    if (!strict_objects || !lock_path) return 1; /* not strict, or the lock has no shared objects */
    char real[PATH_MAX];
    if (realpath(path, real)) path = real; /* the lock holds real paths */
    json_t *paths = json_array();
    json_array_append_new(paths, json_string(path));
    json_t *now = js_objects_from_paths(paths, 1);
    json_decref(paths);
    js_report r = {0};
    if (!now || !json_array_size(now)) js_report_add(&r, "unreadable", "(shared objects)", path, "the plugin cannot be read");
    else js_compare_objects(strict_objects, now, 1, 1, &r);
    json_decref(now);
    int ok = r.n == 0 && !r.oom;
    if (!ok) {
        snprintf(why, size, "%s: %s (JAGER_STRICT: not loaded)", r.n ? r.v[0].kind : "incomplete", r.n ? r.v[0].detail : "out of memory");
        log_problems(&r, 0);
    }
    js_report_free(&r);
    return ok;
}

/* A forked child has no watcher: what it inherited is the parent's. */
static void forget_in_child(void)
{
    watcher_running = 0;
    pthread_mutex_init(&watch_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&watch_cv, &ca);
    pthread_condattr_destroy(&ca);
}

static void cv_init(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&watch_cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_atfork(NULL, NULL, forget_in_child);
}

static void check_finish(void);

/* OpenSSL frees its global state (locks, algorithm tables) in an atexit handler, which runs
 * before libjager's shutdown when the program returns from main: a check thread still
 * hashing then used freed locks (a SIGSEGV in CRYPTO_THREAD_read_lock, 3 % of `basename`
 * runs under JAGER_LOCK in zero-code mode). So OpenSSL is asked not to clean up at exit
 * (honoured when this is the process's first use of it; the process is ending anyway),
 * and, for a program that initialised OpenSSL before us, the check is finished by a handler
 * registered after OpenSSL's, which atexit runs before it (last in, first out). */
static void finish_before_openssl_cleanup(void) { check_finish(); }
static void openssl_at_exit_once(void)
{
    OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
    atexit(finish_before_openssl_cleanup);
}

static void check_start(void)
{
    if (!lock_path || watcher_running) return;
    static pthread_once_t cv_once = PTHREAD_ONCE_INIT, ssl_once = PTHREAD_ONCE_INIT;
    pthread_once(&cv_once, cv_init);
    pthread_once(&ssl_once, openssl_at_exit_once);
    watch_stop = 0;
    int rc = host.thread_start ? host.thread_start(&watcher, 0, watcher_main, NULL) : pthread_create(&watcher, NULL, watcher_main, NULL);
    if (rc == 0) watcher_running = 1;
    else if (!strict_at_init) { /* no thread: the first check now, later objects at shutdown */
        js_report r = {0};
        check(lock_path, &r);
        log_problems(&r, 0);
        js_report_free(&r);
    }
}

static void check_finish(void)
{
    if (!lock_path) return;
    if (watcher_running) {
        pthread_mutex_lock(&watch_mu);
        watch_stop = 1;
        pthread_cond_signal(&watch_cv);
        pthread_mutex_unlock(&watch_mu);
        pthread_join(watcher, NULL);
        watcher_running = 0;
    }
    /* Objects mapped since the watcher's last look: checked now, while recording. */
    if (!lock_unusable) check_new_objects();
    reset_state();
}

__attribute__((visibility("default"))) const jg_supply_module *jg_supply_module_v1(void);
const jg_supply_module *jg_supply_module_v1(void)
{
    static const jg_supply_module m = {
        .struct_size = sizeof m,
        .check_init = check_init,
        .check_start = check_start,
        .plugin_allowed = plugin_allowed,
        .check_finish = check_finish,
    };
    return &m;
}
