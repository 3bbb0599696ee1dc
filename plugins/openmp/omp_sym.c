/* omp_sym.c — see omp_sym.h. */
#include <dlfcn.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "omp_sym.h"

#define NOINST __attribute__((no_instrument_function))

static pthread_mutex_t sym_lock = PTHREAD_MUTEX_INITIALIZER;
static Dwfl *dwfl;
static char *debuginfo_path;
static const Dwfl_Callbacks dwfl_cb = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfo_path,
};

/* (Re)read the process's modules: a library dlopen'ed since the last report is new. */
NOINST static int dwfl_refresh(void)
{
    if (!dwfl) {
        dwfl = dwfl_begin(&dwfl_cb);
        if (!dwfl) return 0;
    }
    dwfl_report_begin(dwfl);
    int rc = dwfl_linux_proc_report(dwfl, getpid());
    dwfl_report_end(dwfl, NULL, NULL);
    return rc == 0;
}

/* Without .debug_aranges (clang's default) libdw 0.188 does not find the unit of an
 * address in DWARF 5: ask each unit. */
NOINST static const char *cu_scan(Dwfl_Module *m, Dwarf_Addr a, int *ln)
{
    Dwarf_Die *cu = NULL;
    Dwarf_Addr bias = 0;
    while ((cu = dwfl_module_nextcu(m, cu, &bias))) {
        if (dwarf_haspc(cu, a - bias) <= 0) continue;
        Dwarf_Line *l = dwarf_getsrc_die(cu, a - bias);
        if (!l || dwarf_lineno(l, ln) != 0) return NULL;
        return dwarf_linesrc(l, NULL, NULL);
    }
    return NULL;
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

NOINST static void put_name(char *out, size_t cap, const char *name)
{
    static demangle_fn demangle;
    static int looked;
    if (!looked) {
        demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
        looked = 1;
    }
    if (demangle && name[0] == '_' && name[1] == 'Z') {
        int st = 0;
        char *d = demangle(name, NULL, NULL, &st);
        if (d && st == 0) {
            snprintf(out, cap, "%s", d);
            free(d);
            return;
        }
        free(d);
    }
    snprintf(out, cap, "%s", name);
}

NOINST int jgx_symbolize(const void *addr, char *func, size_t fcap, char *file, size_t filecap, uint32_t *line)
{
    int named = 0;
    *line = 0;
    if (filecap) file[0] = 0;
    pthread_mutex_lock(&sym_lock);
    Dl_info di;
    memset(&di, 0, sizeof di);
    if (dladdr(addr, &di) && di.dli_sname && di.dli_saddr) {
        put_name(func, fcap, di.dli_sname);
        named = 1;
    }
    Dwarf_Addr a = (Dwarf_Addr)(uintptr_t)addr;
    Dwfl_Module *m = NULL;
    if ((dwfl || dwfl_refresh()) && !(m = dwfl_addrmodule(dwfl, a)) && dwfl_refresh()) m = dwfl_addrmodule(dwfl, a);
    if (m) {
        if (!named) {
            const char *n = dwfl_module_addrname(m, a);
            if (n) {
                put_name(func, fcap, n);
                named = 1;
            }
        }
        Dwfl_Line *l = dwfl_module_getsrc(m, a);
        int ln = 0;
        const char *src = l ? dwfl_lineinfo(l, NULL, &ln, NULL, NULL, NULL) : NULL;
        if (!src) src = cu_scan(m, a, &ln);
        if (src) {
            const char *base = strrchr(src, '/');
            snprintf(file, filecap, "%s", base ? base + 1 : src);
            *line = ln > 0 ? (uint32_t)ln : 0;
        }
    }
    if (!named) snprintf(func, fcap, "%p", addr);
    pthread_mutex_unlock(&sym_lock);
    return named;
}

NOINST void jgx_symbolize_end(void)
{
    pthread_mutex_lock(&sym_lock);
    if (dwfl) dwfl_end(dwfl);
    dwfl = NULL;
    pthread_mutex_unlock(&sym_lock);
}
