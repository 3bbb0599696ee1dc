/*
 * loader.c — plugin discovery, dlopen, descriptor checks and the plugins' lifecycle.
 *
 * JAGER_PLUGINS=a,b loads libjager-a.so from the first folder that has it: the
 * JAGER_PLUGIN_PATH folders in order, then the install's plugin folder, then the build
 * tree's. Every way a plugin can be unfit (bad name, not found, dlopen error, no entry
 * symbol, other ABI major, malformed descriptor, failing init) ends in one diagnostic and
 * the library closed again; the program runs on without it.
 *
 * Threads: load/start/stop/unload run on the thread calling jager_init/jager_shutdown;
 * flush runs on the collector thread while the others may run, so the plugin table is
 * published with release stores and the flush/stop hand-over is serialised by a mutex.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "plugin_handle.h"

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
    JG_PHASE_STOPPED      /* stop called */
};

struct jager_plugin_handle {
    char name[JG_PLUGIN_NAME_MAX + 1];
    char path[PATH_MAX];
    void *dl;                     /* dlopen handle */
    void *state;                  /* what init returned */
    jager_plugin_descriptor desc; /* the plugin's descriptor, fields beyond its struct_size NULL */
    _Atomic(int) phase;
    jager_sink pending[JG_PENDING_SINKS]; /* sinks registered during init */
    uint32_t npending;
};

static jager_plugin_handle *plugins[JG_MAX_PLUGINS];
static _Atomic(uint32_t) nplugins; /* published with release after the handle is complete */
static pthread_mutex_t phase_lock = PTHREAD_MUTEX_INITIALIZER; /* flush vs stop */
static char loaded_names[JG_MAX_PLUGINS * (JG_PLUGIN_NAME_MAX + 1) + 1];

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
#ifdef JAGER_PLUGIN_INSTALL_DIR
    if (try_folder(JAGER_PLUGIN_INSTALL_DIR, strlen(JAGER_PLUGIN_INSTALL_DIR), name, out, size, looked, lsize))
        return 1;
#endif
#ifdef JAGER_PLUGIN_BUILD_DIR
    if (try_folder(JAGER_PLUGIN_BUILD_DIR, strlen(JAGER_PLUGIN_BUILD_DIR), name, out, size, looked, lsize))
        return 1;
#endif
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

static void free_handle(jager_plugin_handle *h)
{
    if (!h) return;
    if (h->dl) dlclose(h->dl);
    free(h);
}

/* Open, check and initialise plugin \p name; on success it is appended to the table. */
static void load_one(const char *name, const char *search_path)
{
    char looked[768];
    jager_plugin_handle *h = calloc(1, sizeof *h);
    if (!h) {
        refuse(name, JAGER_SEV_WARN, "plugin '%s': out of memory", name);
        return;
    }
    snprintf(h->name, sizeof h->name, "%s", name);
    if (!find_plugin(name, search_path, h->path, sizeof h->path, looked, sizeof looked)) {
        refuse(name, JAGER_SEV_WARN, "plugin '%s': libjager-%s.so not found (looked in: %s)", name, name,
               looked[0] ? looked : "no folders: set JAGER_PLUGIN_PATH");
        goto unload;
    }
    dlerror();
    h->dl = dlopen(h->path, RTLD_NOW | RTLD_LOCAL);
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
    jg_error(JAGER_OK, "%s", ""); /* so a failing init's own message is told apart from older ones */
    jager_status st = h->desc.init(jg_host_api(), h, &h->state);
    if (st == JAGER_E_UNSUPPORTED) {
        refuse(name, JAGER_SEV_INFO, "plugin '%s' stepped aside (init: %s)", name, jager_strerror(st));
        goto unload;
    }
    if (st != JAGER_OK) {
        char why[256];
        snprintf(why, sizeof why, "%s", jager_last_error());
        refuse(name, JAGER_SEV_WARN, "plugin '%s': init failed: %s (%d)%s%s", name, jager_strerror(st), (int)st,
               why[0] ? ": " : "", why);
        goto unload;
    }
    /* Init succeeded: the sinks it registered may now receive batches. */
    for (uint32_t i = 0; i < h->npending; i++) {
        jager_status s = jg_sink_add(&h->pending[i]);
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
    free_handle(h);
}

/* ---- the module's interface ---- */

void jg_plugins_load(const char *list, const char *search_path)
{
    if (!list) return;
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
        jager_plugin_handle *h = plugins[i];
        if (atomic_load_explicit(&h->phase, memory_order_relaxed) != JG_PHASE_STARTING) continue;
        jager_status st = h->desc.start ? h->desc.start(h->state) : JAGER_OK;
        if (st != JAGER_OK) {
            char why[256];
            snprintf(why, sizeof why, "%s", jager_last_error());
            refuse(h->name, JAGER_SEV_WARN, "plugin '%s': start failed: %s (%d)%s%s; it stays inactive", h->name,
                   jager_strerror(st), (int)st, why[0] ? ": " : "", why);
        }
        pthread_mutex_lock(&phase_lock);
        atomic_store_explicit(&h->phase, st == JAGER_OK ? JG_PHASE_RUNNING : JG_PHASE_FAILED, memory_order_release);
        pthread_mutex_unlock(&phase_lock);
    }
}

void jg_plugins_flush(void)
{
    uint32_t n = atomic_load_explicit(&nplugins, memory_order_acquire);
    if (n == 0) return;
    pthread_mutex_lock(&phase_lock);
    for (uint32_t i = 0; i < n; i++) {
        jager_plugin_handle *h = plugins[i];
        if (atomic_load_explicit(&h->phase, memory_order_acquire) == JG_PHASE_RUNNING && h->desc.flush)
            h->desc.flush(h->state);
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
        jager_plugin_handle *h = plugins[i];
        /* Marked stopped under the lock: a flush already running finishes first, and none
         * starts on this plugin afterwards. */
        pthread_mutex_lock(&phase_lock);
        int was = atomic_load_explicit(&h->phase, memory_order_relaxed);
        if (was == JG_PHASE_RUNNING) atomic_store_explicit(&h->phase, JG_PHASE_STOPPED, memory_order_release);
        pthread_mutex_unlock(&phase_lock);
        if (was == JG_PHASE_RUNNING && h->desc.stop) h->desc.stop(h->state);
    }
}

void jg_plugins_unload(void)
{
    uint32_t n = atomic_load_explicit(&nplugins, memory_order_acquire);
    atomic_store_explicit(&nplugins, 0, memory_order_release);
    /* Reverse load order: a plugin loaded later may use an earlier one's extension. */
    for (uint32_t i = n; i-- > 0;) {
        jager_plugin_handle *h = plugins[i];
        plugins[i] = NULL;
        if (h->desc.shutdown) h->desc.shutdown(h->state);
        free_handle(h);
    }
    loaded_names[0] = 0;
}

static const void *jg_plugins_extension(const char *id)
{
    if (!id) return NULL;
    uint32_t n = atomic_load_explicit(&nplugins, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        jager_plugin_handle *h = plugins[i];
        int ph = atomic_load_explicit(&h->phase, memory_order_acquire);
        if (ph == JG_PHASE_FAILED || !h->desc.get_extension) continue;
        const void *x = h->desc.get_extension(h->state, id);
        if (x) return x;
    }
    return NULL;
}

uint32_t jg_plugins_count(void) { return atomic_load_explicit(&nplugins, memory_order_acquire); }

const char *jg_plugins_loaded_names(void) { return loaded_names; }

JAGER_API const void *jager_extension_get(const char *id) { return jg_plugins_extension(id); }

/* ---- for host_api.c ---- */

const char *jg_plugin_handle_name(const jager_plugin_handle *h) { return h ? h->name : ""; }

jager_status jg_plugin_handle_add_sink(jager_plugin_handle *h, const jager_sink *sink)
{
    if (!h || !sink || sink->struct_size < offsetof(jager_sink, write) + sizeof sink->write || !sink->write)
        return jg_error(JAGER_E_INVALID, "plugin '%s': register_sink: NULL sink, no write callback or struct_size too small",
                        jg_plugin_handle_name(h));
    switch (atomic_load_explicit(&h->phase, memory_order_acquire)) {
    case JG_PHASE_INIT:
        if (h->npending == JG_PENDING_SINKS)
            return jg_error(JAGER_E_FULL, "plugin '%s': register_sink: more than %d sinks", h->name, JG_PENDING_SINKS);
        /* Copied as jager_sink_add would: only the whole fields the plugin's struct_size
         * covers (every field after the first 8 bytes is 8 bytes wide); the rest NULL. */
        size_t n = sink->struct_size < sizeof(jager_sink) ? sink->struct_size & ~(size_t)7 : sizeof(jager_sink);
        memset(&h->pending[h->npending], 0, sizeof(jager_sink));
        memcpy(&h->pending[h->npending], sink, n);
        h->pending[h->npending].struct_size = sizeof(jager_sink);
        h->npending++;
        return JAGER_OK;
    case JG_PHASE_STARTING:
        return jg_sink_add(sink);
    default:
        return jg_error(JAGER_E_STATE, "plugin '%s': register_sink is only allowed from init or start", h->name);
    }
}
