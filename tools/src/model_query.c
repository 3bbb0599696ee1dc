/* model_query.c — lookups on a finished model: sites by id, display names, and the frame
 * that names a GC trigger stack for people (the program's frame, not the allocator's). */
#include <string.h>

#include "model.h"

const jm_site *jm_site_get(const jm_model *m, uint32_t site)
{
    if (!m || site == 0 || site >= m->nsites) return NULL;
    return &m->sites[site];
}

const char *jm_site_name(const jm_model *m, uint32_t site)
{
    if (site == 0) return "(root)";
    if (site == JM_SITE_OTHER) return "(other)";
    if (site == JM_SITE_UNRECORDED) return "(unrecorded)";
    const jm_site *s = jm_site_get(m, site);
    return s ? s->name : "?";
}

/* Frames of the runtime, the allocator and Jäger itself: a GC is "triggered from" the
 * first frame above these. Prefixes of function names, and substrings of file names. */
static const char *const runtime_funcs[] = {
    "jl_", "ijl_", "_jl_", "gc_", "jlgc_", "maybe_collect", "julia_gc", "malloc", "calloc", "realloc",
    "__libc_", "_int_malloc", "operator new", "jager_", "jg_", "japi1_", "jlcall_", "allocobj",
    "_new_array", "new_array", "array_grow", "_growend", "jl_alloc", "Core.", "Base.GC.",
};
static const char *const runtime_files[] = {
    "libjulia", "/src/gc", "julia_internal", "libc.so", "libc-", "libjager", "libjager-gc", "boot.jl",
};

static int is_runtime(const jager_frame *f)
{
    for (size_t i = 0; i < sizeof runtime_funcs / sizeof runtime_funcs[0]; i++)
        if (!strncmp(f->func, runtime_funcs[i], strlen(runtime_funcs[i]))) return 1;
    for (size_t i = 0; i < sizeof runtime_files / sizeof runtime_files[0]; i++)
        if (strstr(f->file, runtime_files[i])) return 1;
    return !strcmp(f->func, "??");
}

int jm_stack_pick_frame(const jm_model *m, jager_stack_id stack, jm_frame_pick *out)
{
    out->func = "??";
    out->file = "";
    out->line = 0;
    out->ip = 0;
    const uint64_t *ips = NULL;
    uint32_t n = 0;
    if (!m || !stack || jager_reader_stack(m->reader, stack, &ips, &n) != JAGER_OK || !ips) return 0;
    int have_fallback = 0;
    for (uint32_t i = 0; i < n && i < 256; i++) {
        jager_frame fr[8];
        uint32_t k = jager_reader_symbolize(m->reader, ips[i], fr, 8);
        /* Innermost inlined frame first: it is the code that allocated. */
        for (uint32_t j = k; j-- > 0;) {
            if (!fr[j].func) continue;
            if (!have_fallback && strcmp(fr[j].func, "??") != 0) {
                out->func = fr[j].func;
                out->file = fr[j].file ? fr[j].file : "";
                out->line = fr[j].line;
                out->ip = ips[i];
                have_fallback = 1;
            }
            if (fr[j].file && !is_runtime(&fr[j])) {
                out->func = fr[j].func;
                out->file = fr[j].file;
                out->line = fr[j].line;
                out->ip = ips[i];
                return 1;
            }
        }
    }
    return have_fallback;
}

const char *jm_sev_name(int bucket)
{
    static const char *const names[JM_SEV_COUNT] = {"trace", "debug", "info", "warn", "error", "fatal"};
    return bucket >= 0 && bucket < JM_SEV_COUNT ? names[bucket] : "?";
}
