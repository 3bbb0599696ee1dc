/* gc_julia.c — finding the Julia runtime in the running process and reading its counters.
 *
 * Everything is looked up with dlsym(RTLD_DEFAULT): the plugin links against no Julia, so
 * it loads in any process and steps aside where the symbols are absent. Each counter is
 * optional; only the two callback setters are required. jl_gc_num returns a struct whose
 * layout changes between versions, so it is used only on versions whose layout was
 * checked (1.5, whose 1.6 is identical); elsewhere the plugin does without it. */
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

#include "gc_internal.h"

/* POSIX guarantees a function pointer survives the round trip through void *; the
 * memcpy keeps -Wpedantic quiet about the conversion. */
static void *sym(const char *name) { return dlsym(RTLD_DEFAULT, name); }
#define GC_SYM(dst, name)                    \
    do {                                     \
        void *p_ = sym(name);                \
        memcpy(&(dst), &p_, sizeof(dst));    \
    } while (0)

int gc_julia_find(gc_julia *jl)
{
    memset(jl, 0, sizeof *jl);
    jl->major = jl->minor = jl->patch = -1;
    GC_SYM(jl->set_cb_pre, "jl_gc_set_cb_pre_gc");
    GC_SYM(jl->set_cb_post, "jl_gc_set_cb_post_gc");
    if (!jl->set_cb_pre || !jl->set_cb_post) {
        memset(jl, 0, sizeof *jl);
        return 0;
    }
    GC_SYM(jl->is_initialized, "jl_is_initialized");
    GC_SYM(jl->live_bytes, "jl_gc_live_bytes");
    GC_SYM(jl->get_total_bytes, "jl_gc_get_total_bytes");
    GC_SYM(jl->total_hrtime, "jl_gc_total_hrtime");

    int (*vmaj)(void) = NULL, (*vmin)(void) = NULL, (*vpat)(void) = NULL;
    GC_SYM(vmaj, "jl_ver_major");
    GC_SYM(vmin, "jl_ver_minor");
    GC_SYM(vpat, "jl_ver_patch");
    if (vmaj && vmin) {
        jl->major = vmaj();
        jl->minor = vmin();
        jl->patch = vpat ? vpat() : -1;
    }
    /* jl_gc_num_t layout checked on 1.5.3 (and unchanged in 1.6). */
    if (jl->major == 1 && (jl->minor == 5 || jl->minor == 6)) GC_SYM(jl->num, "jl_gc_num");
    return 1;
}

int gc_julia_ready(const gc_julia *jl) { return !jl->is_initialized || jl->is_initialized() != 0; }

int64_t gc_julia_live(const gc_julia *jl) { return jl->live_bytes ? jl->live_bytes() : -1; }

int64_t gc_julia_total(const gc_julia *jl)
{
    int64_t b = -1;
    if (jl->get_total_bytes) jl->get_total_bytes(&b);
    return b;
}

int gc_julia_counts(const gc_julia *jl, uint64_t *collections, uint64_t *full_sweeps)
{
    if (!jl->num) return 0;
    gc_jl_num n = jl->num();
    *collections = n.pause < 0 ? 0 : (uint64_t)n.pause;
    *full_sweeps = n.full_sweep < 0 ? 0 : (uint64_t)n.full_sweep;
    return 1;
}

uint64_t gc_rss_bytes(int statm_fd)
{
    char buf[128];
    if (statm_fd < 0) return 0;
    ssize_t n = pread(statm_fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return 0;
    buf[n] = 0;
    /* "size resident shared text lib data dt", in pages */
    const char *p = buf;
    while (*p && *p != ' ') p++;
    uint64_t pages = 0;
    while (*p == ' ') p++;
    while (*p >= '0' && *p <= '9') pages = pages * 10 + (uint64_t)(*p++ - '0');
    long ps = sysconf(_SC_PAGESIZE);
    return pages * (uint64_t)(ps > 0 ? ps : 4096);
}
