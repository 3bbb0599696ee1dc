/*
 * omp_plugin.c — the openmp plugin: descriptor, lifecycle, sites by (address, role),
 * region ids and the openmp.site_role / openmp.summary events.
 *
 * The plugin records through the host API's span functions (ABI 1.1), so OpenMP regions
 * are ordinary spans: summaries, trees and the hunt treat them like the application's own.
 * Worker spans (work, loops, waits on a team's other threads) carry the attribute
 * omp.region = the region's instance id, which the region span carries too: that is the
 * link from a worker row to the region that forked it (docs/openmp.md).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "omp_internal.h"
#include "omp_sym.h"

const jager_host_api *omp_host;
atomic_int omp_on;
omp_counts omp_n;
static jager_plugin_handle *omp_self;
static uint16_t ev_site_role, ev_summary;
static atomic_uint_fast64_t region_ids;

static const char *const role_name[OMP_ROLE_COUNT] = {"region",       "work",         "loop",        "barrier_wait",
                                                      "barrier_wait", "barrier_wait", "barrier_wait", "lock_wait"};
static const char *const role_kind[OMP_ROLE_COUNT] = {"parallel", "implicit_task", "loop",    "join",
                                                      "implicit", "explicit",      "barrier", "critical"};
static const char *const role_label[OMP_ROLE_COUNT] = {"omp parallel", "omp work",    "omp loop",    "omp join barrier",
                                                       "omp barrier",  "omp barrier", "omp barrier", "omp critical wait"};
static const char *const rt_name[2] = {"ompt", "gomp"};

/* ---- sites: an open-addressing table keyed by (address, role), insert under a lock ---- */
#define SITE_SLOTS 4096u
typedef struct site_slot {
    _Atomic(uintptr_t) key; /* address | role << 60 ... see site_key; 0 = empty */
    _Atomic(jager_site) site;
} site_slot;
static site_slot sites[SITE_SLOTS];
static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;

static uintptr_t site_key(const void *addr, omp_role role) { return ((uintptr_t)addr << 3 | (uintptr_t)role) + 1; }

static uint32_t site_hash(uintptr_t k)
{
    uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 40) & (SITE_SLOTS - 1);
}

/* A GCC outlined body is "main._omp_fn.0": the construct's function is "main". Clang's
 * ".omp_outlined." names no function: the file names the place instead. */
static void strip_outlined(char *f, const char *file)
{
    char *p = strstr(f, "._omp_fn.");
    if (p) *p = 0;
    if (strncmp(f, ".omp_outlined.", 14) == 0 && file[0]) snprintf(f, 256, "%s", file);
}

static jager_site site_locked(const void *addr, omp_role role, omp_runtime rt);

static jager_site site_new(const void *addr, omp_role role, omp_runtime rt)
{
    char func[256], file[256], name[600];
    uint32_t line = 0;
    if (addr) {
        jgx_symbolize(addr, func, sizeof func, file, sizeof file, &line);
        strip_outlined(func, file);
    } else {
        snprintf(func, sizeof func, "?");
        file[0] = 0;
    }
    if (line) snprintf(name, sizeof name, "%s @%s:%u", role_label[role], func, line);
    else snprintf(name, sizeof name, "%s @%s", role_label[role], func);
    jager_site s = omp_host->site_register(name, file[0] ? file : NULL, line);
    /* A thread's work and join wait belong to one construct: name its region site, so tools
     * can hang the workers' rows under the region. */
    jager_site region = role == OMP_ROLE_REGION ? s
                        : role == OMP_ROLE_WORK || role == OMP_ROLE_JOIN_WAIT ? site_locked(addr, OMP_ROLE_REGION, rt)
                                                                               : 0;
    if (s && ev_site_role) {
        uint64_t f[5] = {s, omp_host->intern(role_name[role]), omp_host->intern(role_kind[role]),
                         omp_host->intern(rt_name[rt]), region};
        omp_host->emit(ev_site_role, 0, f, 5);
    }
    return s;
}

jager_site omp_site(const void *addr, omp_role role, omp_runtime rt)
{
    if (!omp_host) return 0;
    uintptr_t k = site_key(addr, role);
    uint32_t i = site_hash(k);
    for (uint32_t n = 0; n < SITE_SLOTS; n++, i = (i + 1) & (SITE_SLOTS - 1)) {
        uintptr_t have = atomic_load_explicit(&sites[i].key, memory_order_acquire);
        if (have == k) return atomic_load_explicit(&sites[i].site, memory_order_relaxed);
        if (have == 0) break;
    }
    /* First sight: under the lock, probe again and insert. */
    pthread_mutex_lock(&site_lock);
    jager_site s = site_locked(addr, role, rt);
    pthread_mutex_unlock(&site_lock);
    /* A full table (4096 constructs) leaves further constructs unrecorded. */
    return s;
}

/* Lookup or insert with site_lock held (site_new calls it again for a region site, which
 * may take a slot: the free slot is looked for after it). */
static jager_site site_locked(const void *addr, omp_role role, omp_runtime rt)
{
    uintptr_t k = site_key(addr, role);
    uint32_t i = site_hash(k), n;
    for (n = 0; n < SITE_SLOTS; n++, i = (i + 1) & (SITE_SLOTS - 1)) {
        uintptr_t have = atomic_load_explicit(&sites[i].key, memory_order_relaxed);
        if (have == k) return atomic_load_explicit(&sites[i].site, memory_order_relaxed);
        if (have == 0) break;
    }
    if (n == SITE_SLOTS) return 0; /* full: 4096 (construct, role) pairs */
    jager_site s = site_new(addr, role, rt);
    if (!s) return 0;
    for (n = 0, i = site_hash(k); n < SITE_SLOTS; n++, i = (i + 1) & (SITE_SLOTS - 1)) {
        if (atomic_load_explicit(&sites[i].key, memory_order_relaxed) != 0) continue;
        atomic_store_explicit(&sites[i].site, s, memory_order_relaxed);
        atomic_store_explicit(&sites[i].key, k, memory_order_release);
        break;
    }
    return s;
}

uint64_t omp_region_next(void) { return atomic_fetch_add_explicit(&region_ids, 1, memory_order_relaxed) + 1; }

void omp_attrs_worker(jager_span s, uint64_t region, int64_t thread)
{
    if (!s.site) return;
    jager_attr a[2] = {{"omp.region", JAGER_ATTR_I64, 0, {.i64 = (int64_t)region}},
                       {"omp.thread", JAGER_ATTR_I64, 0, {.i64 = thread}}};
    omp_host->span_set_attrs(s, a, 2);
}

void omp_attrs_region(jager_span s, uint64_t region, int64_t threads)
{
    if (!s.site) return;
    jager_attr a[2] = {{"omp.region", JAGER_ATTR_I64, 0, {.i64 = (int64_t)region}},
                       {"omp.threads", JAGER_ATTR_I64, 0, {.i64 = threads}}};
    omp_host->span_set_attrs(s, a, 2);
}

/* ---- lifecycle ----
 * The copy of this library the program binds (the preloaded one) may not be the file the
 * core loads (JAGER_PLUGIN_PATH names another folder, an installed and a build copy):
 * then this copy hands every callback to the bound one, whose entry points see the calls. */
static const jager_plugin_descriptor *delegate;

static const jager_plugin_descriptor *bound_copy(void)
{
    static const char *const probes[] = {"GOMP_parallel", "ompt_start_tool"};
    Dl_info self, other;
    if (!dladdr((void *)bound_copy, &self)) return NULL;
    for (size_t i = 0; i < 2; i++) {
        void *p = dlsym(RTLD_DEFAULT, probes[i]);
        if (!p || !dladdr(p, &other) || other.dli_fbase == self.dli_fbase || !other.dli_fname) continue;
        void *h = dlopen(other.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
        if (!h) continue;
        jager_plugin_entry_fn e = (jager_plugin_entry_fn)dlsym(h, JAGER_PLUGIN_ENTRY_SYMBOL);
        const jager_plugin_descriptor *d = e ? e(JAGER_PLUGIN_ABI_MAJOR, JAGER_PLUGIN_ABI_MINOR) : NULL;
        dlclose(h); /* RTLD_NOLOAD took a reference on a library that stays loaded */
        if (d && d->name && strcmp(d->name, "openmp") == 0 && d->init) return d;
    }
    return NULL;
}

static jager_status omp_init_self(const jager_host_api *host, jager_plugin_handle *self, void **state);

static jager_status omp_init(const jager_host_api *host, jager_plugin_handle *self, void **state)
{
    delegate = bound_copy();
    if (delegate) return delegate->init(host, self, state);
    return omp_init_self(host, self, state);
}

static jager_status omp_init_self(const jager_host_api *host, jager_plugin_handle *self, void **state)
{
    static const jager_field_desc role_f[] = {{"site", JAGER_FIELD_SITE, 0},
                                              {"role", JAGER_FIELD_STRING, 0},
                                              {"kind", JAGER_FIELD_STRING, 0},
                                              {"runtime", JAGER_FIELD_STRING, 0},
                                              {"region", JAGER_FIELD_SITE, 0}};
    static const jager_field_desc sum_f[] = {{"regions", JAGER_FIELD_U64, 0},  {"workers", JAGER_FIELD_U64, 0},
                                             {"loops", JAGER_FIELD_U64, 0},    {"barriers", JAGER_FIELD_U64, 0},
                                             {"joins", JAGER_FIELD_U64, 0},    {"criticals", JAGER_FIELD_U64, 0},
                                             {"late_ends", JAGER_FIELD_U64, 0}, {"runtime", JAGER_FIELD_STRING, 0}};
    *state = NULL;
    if (host->abi_minor < 1 || host->struct_size < offsetof(jager_host_api, span_end_ns) + sizeof(void *) ||
        !host->span_begin || !host->span_end_ns) {
        host->log(self, JAGER_DIAG_WARN, "this core has no span functions for plugins (plugin ABI 1.1 needed)");
        return JAGER_E_UNSUPPORTED;
    }
    jager_status st = host->register_type(self, "openmp.site_role", role_f, 5, &ev_site_role);
    if (st == JAGER_OK) st = host->register_type(self, "openmp.summary", sum_f, 8, &ev_summary);
    if (st != JAGER_OK) return st;
    omp_self = self;
    /* Sites of an earlier init/shutdown cycle are still valid (site ids live as long as the
     * process), but their role events went into the earlier recording: start afresh. */
    memset(sites, 0, sizeof sites);
    memset(&omp_n, 0, sizeof omp_n);
    omp_host = host;
    return JAGER_OK;
}

static const char *runtime_seen(void)
{
    if (omp_ompt_ever_started()) return "ompt";
    if (omp_gomp_interposed()) return "gomp";
    return "none";
}

static jager_status omp_start(void *state)
{
    if (delegate) return delegate->start ? delegate->start(state) : JAGER_OK;
    atomic_store_explicit(&omp_on, 1, memory_order_release);
    /* Say once what will not be seen, and why. The runtime may not be loaded yet (a
     * program that dlopens its OpenMP code later): then nothing is said. */
    if (omp_gomp_present() && !omp_gomp_interposed())
        omp_host->log(omp_self, JAGER_DIAG_WARN,
                      "GCC's libgomp is loaded but its entry points are not interposed: preload the "
                      "plugin (LD_PRELOAD=\"libjager.so libjager-openmp.so\") to record its regions");
    return JAGER_OK;
}

static void omp_stop(void *state)
{
    if (delegate) {
        if (delegate->stop) delegate->stop(state);
        return;
    }
    const char *pause = omp_host->config(omp_self, "pause");
    if (!pause || strcmp(pause, "0") != 0) omp_ompt_quiesce();
    atomic_store_explicit(&omp_on, 0, memory_order_release);
    if (omp_ompt_present() && !omp_ompt_ever_started())
        omp_host->log(omp_self, JAGER_DIAG_WARN,
                      "LLVM's libomp is loaded but did not start the OMPT tool: preload the plugin or set "
                      "OMP_TOOL_LIBRARIES=/path/to/libjager-openmp.so (and not OMP_TOOL=disabled)");
    uint64_t f[8] = {atomic_load(&omp_n.regions), atomic_load(&omp_n.workers), atomic_load(&omp_n.loops),
                     atomic_load(&omp_n.barriers), atomic_load(&omp_n.joins), atomic_load(&omp_n.criticals),
                     atomic_load(&omp_n.late_ends), omp_host->intern(runtime_seen())};
    omp_host->emit(ev_summary, 0, f, 8);
}

static void omp_shutdown(void *state)
{
    if (delegate) {
        if (delegate->shutdown) delegate->shutdown(state);
        delegate = NULL;
        return;
    }
    /* omp_host stays: the core's table is static, and a runtime callback that read omp_on
     * just before stop may still be on its way through it. */
    atomic_store_explicit(&omp_on, 0, memory_order_release);
    jgx_symbolize_end();
}

static const jager_option_desc omp_options[] = {
    {"pause", "bool", "1",
     "at stop, pause libomp (omp_pause_resource_all) so its workers report the last region's join waits"},
};

static const jager_plugin_descriptor omp_desc = {
    .struct_size = sizeof omp_desc,
    .abi_major = JAGER_PLUGIN_ABI_MAJOR,
    .abi_minor = JAGER_PLUGIN_ABI_MINOR,
    .name = "openmp",
    .version = "1.0.0",
    .description = "OpenMP regions, per-thread work, loops and barrier waits (OMPT for libomp, libgomp interposition)",
    .init = omp_init,
    .start = omp_start,
    .stop = omp_stop,
    .shutdown = omp_shutdown,
    .options = omp_options,
    .noptions = sizeof omp_options / sizeof omp_options[0],
    .flags = JAGER_PLUGIN_FLAG_CALLER_THREAD, /* its runtime is called from the program's thread */
};

JAGER_PLUGIN_DEFINE_ENTRY(&omp_desc)
