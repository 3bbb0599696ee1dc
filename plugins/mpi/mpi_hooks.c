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

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlopen_fn)(const char *, int);
static dlsym_fn real_dlsym_p;
static dlopen_fn real_dlopen_p;

static void resolve(void)
{
    if (real_dlsym_p) return;
    static const char *const vers[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", NULL};
    for (int i = 0; vers[i] && !real_dlsym_p; i++) real_dlsym_p = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", vers[i]);
    for (int i = 0; vers[i] && !real_dlopen_p; i++) real_dlopen_p = (dlopen_fn)dlvsym(RTLD_NEXT, "dlopen", vers[i]);
}

void *jm_real_dlsym(void *h, const char *name)
{
    resolve();
    return real_dlsym_p ? real_dlsym_p(h, name) : NULL;
}

JM_EXPORT void *dlsym(void *h, const char *name)
{
    void *p = jm_real_dlsym(h, name);
    if (p && !strncmp(name, "MPI_", 4) && !jm_g.no_hooks) {
        void *w = jm_got_own(name);
        if (w) return w;
    }
    return p;
}

JM_EXPORT void *dlopen(const char *file, int mode)
{
    resolve();
    if (!real_dlopen_p) return NULL;
    void *h = real_dlopen_p(file, mode);
    if (h && file && !jm_g.no_hooks) jm_got_patch(2);
    return h;
}
