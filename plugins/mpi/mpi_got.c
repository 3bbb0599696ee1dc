/* mpi_got.c — interposition where symbol order cannot do it: rewrite the GOT slots of
 * loaded objects that point at MPI entry points the plugin wraps.
 *
 * Two cases need it:
 *  - MPI Fortran layers that call PMPI_ directly (MPICH's `use mpi_f08` bindings in
 *    libmpichfort: mpi_send_f08ts_ → PMPI_Send; pmodels/mpich#2209): their PMPI_<f>
 *    slots are pointed at our MPI_<f> wrapper, which calls the real PMPI_<f>.
 *  - the plugin opened by the core's loader (JAGER_PLUGINS=mpi, nothing preloaded or
 *    linked): the program already binds MPI_<f> to the MPI library; every object's
 *    MPI_<f> slot but the MPI library's and ours is pointed at the wrapper.
 * x86-64 and AArch64 ELF (JUMP_SLOT and GLOB_DAT relocations); slots in RELRO are made
 * writable for the store and read-only again. Objects dlopened later are not patched. */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mpi_internal.h"

/* Our wrappers by hidden alias (see mpi_wrap.c), in table order. */
#define JM_CALL(NAME, PARAMS, ARGS, PRE, POST) extern JM_HIDDEN __typeof(NAME) jm_own_##NAME;
#include "mpi_calls.def"
#undef JM_CALL
static void *const own[JM_FN_COUNT] = {
#define JM_CALL(NAME, PARAMS, ARGS, PRE, POST) (void *)&jm_own_##NAME,
#include "mpi_calls.def"
#undef JM_CALL
};
static const char *const names[JM_FN_COUNT] = {
#define JM_CALL(NAME, PARAMS, ARGS, PRE, POST) #NAME,
#include "mpi_calls.def"
#undef JM_CALL
};

#if defined(__x86_64__)
#define JM_R_JUMP R_X86_64_JUMP_SLOT
#define JM_R_GLOB R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define JM_R_JUMP R_AARCH64_JUMP_SLOT
#define JM_R_GLOB R_AARCH64_GLOB_DAT
#endif

static const char *const fortran_libs[] = {"libmpichfort", "libmpi_mpifh", "libmpi_usempif08",
                                           "libmpi_usempi_ignore_tkr", "libmpifort", NULL};

typedef struct {
    int mode; /* 1: Fortran layers' PMPI_ slots; 2: also every other object's MPI_ slots;
                 3: as 2, objects already seen skipped (after a dlopen) */
    int patched;
    const char *self, *mpilib;
} walk;

/* Objects already patched in mode 2/3 (by load address), so a dlopen walks only new ones. */
#define JM_SEEN 1024
static uintptr_t seen[JM_SEEN];
static unsigned nseen;
static int seen_before(uintptr_t base, int skip_seen)
{
    for (unsigned i = 0; i < nseen; i++)
        if (seen[i] == base) return skip_seen;
    if (nseen < JM_SEEN) seen[nseen++] = base;
    return 0;
}

static int lookup(const char *sym, int pmpi)
{
    if (pmpi) {
        if (strncmp(sym, "PMPI_", 5)) return -1;
        sym++;
    } else if (strncmp(sym, "MPI_", 4)) {
        return -1;
    }
    for (int i = 0; i < JM_FN_COUNT; i++)
        if (!strcmp(names[i], sym)) return i;
    return -1;
}

#if defined(JM_R_JUMP)
static void patch_relocs(struct dl_phdr_info *info, const ElfW(Rela) * rel, size_t n, const ElfW(Sym) * symtab,
                         const char *strtab, uintptr_t relro_lo, uintptr_t relro_hi, int pmpi, walk *w)
{
    long pg = sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < n; i++) {
        unsigned t = (unsigned)ELF64_R_TYPE(rel[i].r_info);
        if (t != JM_R_JUMP && t != JM_R_GLOB) continue;
        const char *sym = strtab + symtab[ELF64_R_SYM(rel[i].r_info)].st_name;
        int f = lookup(sym, pmpi);
        if (f < 0) continue;
        void **slot = (void **)(info->dlpi_addr + rel[i].r_offset);
        if (*slot == own[f]) continue;
        uintptr_t a = (uintptr_t)slot, page = a & ~(uintptr_t)(pg - 1);
        int ro = a >= relro_lo && a < relro_hi;
        if (ro && mprotect((void *)page, (size_t)pg, PROT_READ | PROT_WRITE)) continue;
        *slot = own[f];
        if (ro) mprotect((void *)page, (size_t)pg, PROT_READ);
        w->patched++;
    }
}
#endif

static int patch_one(struct dl_phdr_info *info, size_t size, void *data)
{
    walk *w = data;
    (void)size;
#if defined(JM_R_JUMP)
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    int fortran = 0;
    for (int i = 0; fortran_libs[i]; i++)
        if (strstr(name, fortran_libs[i])) fortran = 1;
    if ((w->self && *name && !strcmp(name, w->self)) || (w->mpilib && *name && !strcmp(name, w->mpilib))) return 0;
    if (!fortran && w->mode < 2) return 0;
    if (strstr(name, "linux-vdso") || strstr(name, "ld-linux")) return 0;
    if (seen_before(info->dlpi_addr, w->mode == 3)) return 0;
    const ElfW(Dyn) *dyn = NULL;
    uintptr_t relro_lo = 0, relro_hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)(info->dlpi_addr + p->p_vaddr);
        if (p->p_type == PT_GNU_RELRO) {
            relro_lo = info->dlpi_addr + p->p_vaddr;
            relro_hi = relro_lo + p->p_memsz;
        }
    }
    if (!dyn) return 0;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) *jmprel = NULL, *rela = NULL;
    size_t jmpsz = 0, relasz = 0;
#define ADDR(v) ((v) < info->dlpi_addr ? info->dlpi_addr + (v) : (v)) /* glibc relocates most d_ptr */
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)ADDR(dyn->d_un.d_ptr); break;
        case DT_STRTAB: strtab = (const char *)ADDR(dyn->d_un.d_ptr); break;
        case DT_JMPREL: jmprel = (const ElfW(Rela) *)ADDR(dyn->d_un.d_ptr); break;
        case DT_PLTRELSZ: jmpsz = dyn->d_un.d_val; break;
        case DT_RELA: rela = (const ElfW(Rela) *)ADDR(dyn->d_un.d_ptr); break;
        case DT_RELASZ: relasz = dyn->d_un.d_val; break;
        default: break;
        }
    }
#undef ADDR
    if (!symtab || !strtab) return 0;
    for (int pmpi = 0; pmpi < 2; pmpi++) {
        if (pmpi == 0 && w->mode < 2) continue; /* MPI_ slots: only when not interposed */
        if (pmpi == 1 && !fortran) continue;    /* PMPI_ slots: only in Fortran layers */
        if (jmprel) patch_relocs(info, jmprel, jmpsz / sizeof *jmprel, symtab, strtab, relro_lo, relro_hi, pmpi, w);
        if (rela) patch_relocs(info, rela, relasz / sizeof *rela, symtab, strtab, relro_lo, relro_hi, pmpi, w);
    }
#endif
    return 0;
}

void *jm_got_own(const char *name)
{
    int f = lookup(name, 0);
    return f < 0 ? NULL : own[f];
}

/* mode 0: the Fortran layers' PMPI_ slots; 1: every object's MPI_ slots too; 2: as 1 for
 * objects not seen by an earlier call of mode 1 or 2. */
int jm_got_patch(int mode)
{
    static int busy;
    if (__atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE)) return 0; /* a dlopen from a dlopen */
    walk w = {.mode = mode + 1};
    Dl_info di;
    char self[4096] = "", mpilib[4096] = "";
    if (dladdr((void *)&jm_got_patch, &di) && di.dli_fname) snprintf(self, sizeof self, "%s", di.dli_fname);
    if (dladdr((void *)&PMPI_Send, &di) && di.dli_fname) snprintf(mpilib, sizeof mpilib, "%s", di.dli_fname);
    w.self = self;
    w.mpilib = mpilib;
    dl_iterate_phdr(patch_one, &w);
    __atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
    return w.patched;
}
