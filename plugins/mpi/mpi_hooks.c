/* mpi_hooks.c — MPI calls that bypass symbol interposition, seen anyway (preload or link
 * mode only: these hooks are in the global scope then):
 *
 *  - dlsym("MPI_Send") — Julia's ccall((:MPI_Send, libmpi), …), Python's ctypes, any
 *    dlopen+dlsym caller — returns the wrapper instead of the MPI library's function;
 *  - dlopen(…) — a library opened later, in particular with RTLD_DEEPBIND (which binds it
 *    to its own MPI dependency first), gets its MPI_ GOT slots pointed at the wrappers.
 *
 * dlsym(RTLD_NEXT, …) is answered relative to this library rather than to its caller
 * (glibc finds "next" from the return address); every other handle behaves as before. */
#include <dlfcn.h>
#include <string.h>

#include "mpi_internal.h"

#define JM_EXPORT __attribute__((visibility("default")))
/* A sanitizer runtime resolves its own interceptors through dlsym before its shadow
 * memory exists: the code on that path must not be instrumented. */
#define JM_NOSAN __attribute__((no_sanitize("address", "undefined", "thread")))

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlopen_fn)(const char *, int);
static dlsym_fn real_dlsym_p;
static dlopen_fn real_dlopen_p;

JM_NOSAN static void resolve(void)
{
    if (real_dlsym_p) return;
#define JM_TRY(p, T, name)                                                                                         \
    do {                                                                                                           \
        if (!p) p = (T)dlvsym(RTLD_NEXT, name, "GLIBC_2.34");                                                      \
        if (!p) p = (T)dlvsym(RTLD_NEXT, name, "GLIBC_2.2.5");                                                     \
        if (!p) p = (T)dlvsym(RTLD_NEXT, name, "GLIBC_2.17");                                                      \
    } while (0)
    JM_TRY(real_dlsym_p, dlsym_fn, "dlsym");
    JM_TRY(real_dlopen_p, dlopen_fn, "dlopen");
#undef JM_TRY
}

JM_NOSAN void *jm_real_dlsym(void *h, const char *name)
{
    resolve();
    return real_dlsym_p ? real_dlsym_p(h, name) : NULL;
}

JM_EXPORT JM_NOSAN void *dlsym(void *h, const char *name)
{
    void *p = jm_real_dlsym(h, name);
    if (p && !strncmp(name, "MPI_", 4) && !jm_g.no_hooks) {
        void *w = jm_got_own(name);
        if (w) return w;
    }
    return p;
}

JM_EXPORT JM_NOSAN void *dlopen(const char *file, int mode)
{
    resolve();
    if (!real_dlopen_p) return NULL;
    void *h = real_dlopen_p(file, mode);
    if (h && file && !jm_g.no_hooks) jm_got_patch(2);
    return h;
}
