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
 * its path, load address and GNU build id, so `jager` can resolve later.
 *
 * With symbolize=end (the default outside Julia) the drain only notes each new address, and
 * they are named at stop (in Julia at flush, before the binding pulls the rest), once each,
 * in address order: naming is the plugin thread's
 * main cost (the first address of a module makes libdw read, and with Debian's debug
 * files decompress, its DWARF), and at the end it no longer competes with the program for
 * the CPU. symbolize=run (the default in Julia, whose flush the core bounds) names them as
 * they are found. */
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

/* One module's function symbols, sorted by address: dwfl_module_addrname scans the whole
 * symbol table for every address (26 % of a Julia run's naming time was that scan, over
 * the system image's and libjulia's tables), this is built once per module and searched. */
typedef struct smp_fsym {
    uint64_t lo, hi;
    const char *name; /* in the module's string table: lives as long as the Dwfl */
    int rank;         /* 2 global, 1 weak, 0 local: the preferred of aliases sorts last */
} smp_fsym;
typedef struct smp_symtab {
    Dwfl_Module *mod;
    smp_fsym *f;
    size_t n;
} smp_symtab;

typedef struct smp_sym {
    Dwfl *dwfl;
    Dwfl_Callbacks cb;
    char *debuginfo_path;
    symbol_add_fn add;
    uint64_t *seen; /* open addressing, 0 empty */
    size_t cap, used;
    uint64_t named, unnamed, modules;
    time_t last_report;
    int defer;          /* name at flush and stop (option symbolize=end), not as found */
    uint64_t *pending;  /* new addresses not named yet (defer) */
    size_t npending, cap_pending;
    uint64_t name_ns;   /* time spent naming */
    smp_symtab *tabs;   /* per module, built on its first address */
    size_t ntabs, cap_tabs;
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
    y->defer = st->symbolize_end;
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

static int cmp_fsym(const void *a, const void *b)
{
    const smp_fsym *x = a, *y = b;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return (x->hi > y->hi) - (x->hi < y->hi);
}

static smp_symtab *symtab_of(smp_sym *y, Dwfl_Module *mod)
{
    for (size_t i = 0; i < y->ntabs; i++)
        if (y->tabs[i].mod == mod) return &y->tabs[i];
    if (y->ntabs == y->cap_tabs) {
        size_t cap = y->cap_tabs ? y->cap_tabs * 2 : 32;
        smp_symtab *t = realloc(y->tabs, cap * sizeof *t);
        if (!t) return NULL;
        y->tabs = t;
        y->cap_tabs = cap;
    }
    smp_symtab *t = &y->tabs[y->ntabs++];
    t->mod = mod;
    t->f = NULL;
    t->n = 0;
    int ns = dwfl_module_getsymtab(mod);
    if (ns <= 1) return t;
    t->f = malloc((size_t)ns * sizeof *t->f);
    if (!t->f) return t;
    for (int i = 1; i < ns; i++) {
        GElf_Sym sym;
        GElf_Addr addr = 0;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
        if (!name || !*name || !addr || sym.st_shndx == SHN_UNDEF) continue;
        if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
        smp_fsym *f = &t->f[t->n++];
        f->lo = addr;
        f->hi = addr + (sym.st_size ? sym.st_size : 1);
        f->name = name;
        f->rank = bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0;
    }
    qsort(t->f, t->n, sizeof *t->f, cmp_fsym);
    return t;
}

/* The function symbol holding \p a (a sizeless one holds only its own address); NULL
 * when none does. */
static const char *symtab_name(smp_symtab *t, uint64_t a)
{
    if (!t || !t->n || a < t->f[0].lo) return NULL;
    size_t lo = 0, hi = t->n; /* last entry with f.lo <= a */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->f[mid].lo <= a) lo = mid;
        else hi = mid;
    }
    for (size_t k = 0; k < 16 && k <= lo; k++) /* an enclosing symbol a little earlier */
        if (a < t->f[lo - k].hi) return t->f[lo - k].name;
    return NULL;
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
    smp_symtab *tab = symtab_of(y, mod);
    const char *sym = symtab_name(tab, a);
    /* libdwfl's own scan only where the module's table could not be built: an address in
     * no function symbol of a stripped library (libjulia's static functions) would scan
     * the whole table every time, to find nothing or a sizeless neighbour */
    if (!sym && (!tab || !tab->f)) sym = dwfl_module_addrname(mod, a);

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

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void smp_symbols_add(smp_state *st, const uint64_t *ips, uint32_t n)
{
    smp_sym *y = st->sym;
    if (!y || !y->dwfl) return;
    uint64_t t0 = y->defer ? 0 : mono_ns();
    for (uint32_t i = 0; i < n; i++) {
        if (!ips[i] || seen_insert(y, ips[i]) != 1) continue;
        if (!y->defer) {
            name_ip(st, y, ips[i]);
            continue;
        }
        if (y->npending == y->cap_pending) {
            size_t cap = y->cap_pending ? y->cap_pending * 2 : 1024;
            uint64_t *p = realloc(y->pending, cap * sizeof *p);
            if (!p) { /* out of memory: name it now rather than lose it */
                name_ip(st, y, ips[i]);
                continue;
            }
            y->pending = p;
            y->cap_pending = cap;
        }
        y->pending[y->npending++] = ips[i];
    }
    if (!y->defer) y->name_ns += mono_ns() - t0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void smp_symbols_settle(smp_state *st)
{
    smp_sym *y = st->sym;
    if (!y || !y->dwfl || !y->npending) return;
    uint64_t t0 = mono_ns();
    /* in address order: one module, and within it one compile unit, after the other */
    qsort(y->pending, y->npending, sizeof *y->pending, cmp_u64);
    for (size_t i = 0; i < y->npending; i++) name_ip(st, y, y->pending[i]);
    y->npending = 0;
    y->name_ns += mono_ns() - t0;
}

uint64_t smp_symbols_ns(smp_state *st)
{
    smp_sym *y = st->sym;
    return y ? y->name_ns : 0;
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
    free(y->pending);
    for (size_t i = 0; i < y->ntabs; i++) free(y->tabs[i].f);
    free(y->tabs);
    free(y);
    st->sym = NULL;
}
