/* sampler_symbols.c — names for native frames, found on the plugin thread (never in the
 * handler), and the build ids of the modules they lie in.
 *
 * elfutils' libdwfl reports the process's modules from /proc/self/maps and finds their
 * DWARF (in the file or a separate debug file): function, file and line, inlined frames
 * included, go into the recording's symbol table through jager_symbol_add (found with
 * dlsym, so the plugin links no libjager). Without DWARF the ELF symbol table gives the
 * function; an address in no module (Julia's JIT code) is left to the language binding,
 * which names it from inside the process before exit (Jager.symbolize!), and otherwise to
 * the core's dladdr. Each module a sample touched is written once as sampler.module with
 * its path, load address and GNU build id, so `jager` can resolve later. */
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sampler_internal.h"

typedef jager_status (*symbol_add_fn)(uint64_t ip, uint32_t inline_depth, const char *func, const char *file,
                                      uint32_t line);

typedef struct smp_sym {
    Dwfl *dwfl;
    Dwfl_Callbacks cb;
    char *debuginfo_path;
    symbol_add_fn add;
    uint64_t *seen; /* open addressing, 0 empty */
    size_t cap, used;
    uint64_t named, unnamed, modules;
    time_t last_report;
} smp_sym;

static uint64_t mix(uint64_t v)
{
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdull;
    v ^= v >> 33;
    return v;
}

/* 1 when ip was new (and is now recorded), 0 when seen, -1 on out of memory. */
static int seen_insert(smp_sym *y, uint64_t ip)
{
    if ((y->used + 1) * 2 >= y->cap) {
        size_t cap = y->cap ? y->cap * 2 : 4096;
        uint64_t *m = calloc(cap, sizeof *m);
        if (!m) return -1;
        for (size_t i = 0; i < y->cap; i++) {
            if (!y->seen[i]) continue;
            size_t j = mix(y->seen[i]) & (cap - 1);
            while (m[j]) j = (j + 1) & (cap - 1);
            m[j] = y->seen[i];
        }
        free(y->seen);
        y->seen = m;
        y->cap = cap;
    }
    size_t j = mix(ip) & (y->cap - 1);
    while (y->seen[j]) {
        if (y->seen[j] == ip) return 0;
        j = (j + 1) & (y->cap - 1);
    }
    y->seen[j] = ip;
    y->used++;
    return 1;
}

static int report(smp_sym *y)
{
    dwfl_report_begin(y->dwfl);
    int rc = dwfl_linux_proc_report(y->dwfl, getpid());
    dwfl_report_end(y->dwfl, NULL, NULL);
    y->last_report = time(NULL);
    return rc;
}

jager_status smp_symbols_init(smp_state *st)
{
    smp_sym *y = calloc(1, sizeof *y);
    if (!y) return JAGER_E_NOMEM;
    y->cb.find_elf = dwfl_linux_proc_find_elf;
    y->cb.find_debuginfo = dwfl_standard_find_debuginfo;
    y->cb.debuginfo_path = &y->debuginfo_path;
    y->dwfl = dwfl_begin(&y->cb);
    if (y->dwfl) report(y);
    y->add = (symbol_add_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "jager_symbol_add");
    st->sym = y;
    return JAGER_OK;
}

static void emit_module(smp_state *st, Dwfl_Module *mod)
{
    void **user = NULL;
    Dwarf_Addr lo = 0, hi = 0;
    const char *main_file = NULL;
    const char *name = dwfl_module_info(mod, &user, &lo, &hi, NULL, NULL, &main_file, NULL);
    if (!user || *user) return;
    *user = (void *)1;
    GElf_Addr elf_bias = 0;
    dwfl_module_getelf(mod, &elf_bias); /* the build id and the file name need the ELF */
    dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &main_file, NULL);
    const unsigned char *bits = NULL;
    GElf_Addr vaddr = 0;
    int nb = dwfl_module_build_id(mod, &bits, &vaddr);
    char hex[2 * 64 + 1] = "";
    for (int i = 0; i < nb && i < 64; i++) snprintf(hex + 2 * i, 3, "%02x", bits[i]);
    uint64_t f[4] = {st->host->intern(main_file ? main_file : name ? name : ""), st->host->intern(hex), lo, hi};
    st->host->emit(st->t_module, 0, f, 4);
    ((smp_sym *)st->sym)->modules++;
}

/* The name of a subprogram or inlined-subroutine DIE (following abstract origins). */
static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *n = NULL;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a)) n = dwarf_formstring(&a);
    if (!n && dwarf_attr_integrate(die, DW_AT_name, &a)) n = dwarf_formstring(&a);
    return n;
}

#define SMP_MAX_INLINE 16

/* Name one address (ip is a return address, or a leaf pc + 1: ip - 1 lies in the code). */
static void name_ip(smp_state *st, smp_sym *y, uint64_t ip)
{
    Dwarf_Addr a = ip - 1;
    Dwfl_Module *mod = dwfl_addrmodule(y->dwfl, a);
    if (!mod && time(NULL) != y->last_report) { /* a library loaded since the last report */
        report(y);
        mod = dwfl_addrmodule(y->dwfl, a);
    }
    GElf_Addr elf_bias = 0;
    if (!mod || !dwfl_module_getelf(mod, &elf_bias)) {
        /* no module, or one that is no ELF file (Julia's JIT code lives in a memfd mapping) */
        y->unnamed++;
        return;
    }
    emit_module(st, mod);
    const char *file = NULL;
    int line = 0;
    Dwfl_Line *dl = dwfl_module_getsrc(mod, a);
    if (dl) file = dwfl_lineinfo(dl, NULL, &line, NULL, NULL, NULL);
    const char *sym = dwfl_module_addrname(mod, a);

    /* Inlined frames: scopes innermost first; each inlined subroutine's call site is the
     * line in the frame around it. */
    const char *names[SMP_MAX_INLINE];
    const char *files[SMP_MAX_INLINE];
    int lines[SMP_MAX_INLINE];
    int nf = 0;
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, a, &bias);
    Dwarf_Die *scopes = NULL;
    int ns = cu ? dwarf_getscopes(cu, a - bias, &scopes) : 0;
    Dwarf_Files *srcfiles = NULL;
    size_t nsrc = 0;
    if (cu && dwarf_getsrcfiles(cu, &srcfiles, &nsrc) != 0) srcfiles = NULL;
    const char *cur_file = file;
    int cur_line = line;
    for (int i = 0; i < ns && nf < SMP_MAX_INLINE; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
        names[nf] = die_name(&scopes[i]);
        files[nf] = cur_file;
        lines[nf] = cur_line;
        nf++;
        if (tag == DW_TAG_subprogram) break;
        Dwarf_Attribute at;
        Dwarf_Word w;
        if (dwarf_attr(&scopes[i], DW_AT_call_line, &at) && dwarf_formudata(&at, &w) == 0) cur_line = (int)w;
        if (srcfiles && dwarf_attr(&scopes[i], DW_AT_call_file, &at) && dwarf_formudata(&at, &w) == 0 && w < nsrc) {
            const char *f = dwarf_filesrc(srcfiles, w, NULL, NULL);
            if (f) cur_file = f;
        }
    }
    if (nf == 0) {
        names[0] = NULL;
        files[0] = file;
        lines[0] = line;
        nf = 1;
    }
    /* depth 0: the function whose code holds the address — prefer the ELF symbol */
    if (sym) names[nf - 1] = sym;
    if (!names[nf - 1] && nf == 1 && !file) { /* nothing known: leave it to the binding or dladdr */
        free(scopes);
        y->unnamed++;
        return;
    }
    if (y->add) {
        const char *mf = NULL;
        dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mf, NULL);
        for (int d = 0; d < nf; d++) {
            int k = nf - 1 - d;
            const char *fn = names[k] ? names[k] : "??";
            const char *fl = files[k] ? files[k] : (mf ? mf : "");
            y->add(ip, (uint32_t)d, fn, fl, lines[k] > 0 ? (uint32_t)lines[k] : 0);
        }
    }
    free(scopes);
    y->named++;
}

void smp_symbols_add(smp_state *st, const uint64_t *ips, uint32_t n)
{
    smp_sym *y = st->sym;
    if (!y || !y->dwfl) return;
    for (uint32_t i = 0; i < n; i++) {
        if (!ips[i] || seen_insert(y, ips[i]) != 1) continue;
        name_ip(st, y, ips[i]);
    }
}

void smp_symbols_counts(smp_state *st, uint64_t *named, uint64_t *unnamed, uint64_t *modules)
{
    smp_sym *y = st->sym;
    *named = y ? y->named : 0;
    *unnamed = y ? y->unnamed : 0;
    *modules = y ? y->modules : 0;
}

void smp_symbols_free(smp_state *st)
{
    smp_sym *y = st->sym;
    if (!y) return;
    if (y->dwfl) dwfl_end(y->dwfl);
    free(y->seen);
    free(y);
    st->sym = NULL;
}
