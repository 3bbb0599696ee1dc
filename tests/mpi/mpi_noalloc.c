/* Allocations on the MPI call path after warm-up (tests/mpi/test_mpi_noalloc.js). This
 * program defines malloc, calloc, realloc and the aligned forms itself (an executable's
 * definitions come before every shared object's, the preloaded ones included), counts the
 * calls made on the main thread (the collector thread's are its own business) and hands
 * them to glibc's; those called from Jäger's own libraries (libjager*.so: the wrappers and
 * the core they emit through, by the caller's address) are counted apart, exactly.
 * Each rank posts 32 MPI_Irecv and 32 MPI_Isend to its partner and completes the 64
 * requests with one MPI_Waitall (MPI_STATUSES_IGNORE): more than the 32 request handles a
 * wrapper keeps on its stack. After WARM rounds, ROUNDS rounds through the PMPI_ entry
 * points (MPICH's own allocations, if any) and ROUNDS through the MPI_ ones (the wrappers,
 * when preloaded) are counted apart; each rank prints
 *   rank R pmpi A mpi B jager C segments S
 * C: allocations called from libjager*.so in the wrapped rounds (0: none on the call path);
 * B − A also catches ones made through libc helpers (strdup, …) on the wrappers' behalf. */
#define _GNU_SOURCE
#include <link.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static __thread unsigned long n_alloc, n_jager;

/* The loaded segments of libjager*.so, found once after MPI_Init (never from malloc). */
static struct { uintptr_t lo, hi; } seg[16];
static int nseg;

static int find_jager(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    const char *base = strrchr(info->dlpi_name, '/');
    if (!strstr(base ? base : info->dlpi_name, "libjager")) return 0;
    for (int i = 0; i < info->dlpi_phnum && nseg < 16; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            seg[nseg].lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            seg[nseg].hi = seg[nseg].lo + info->dlpi_phdr[i].p_memsz;
            nseg++;
        }
    return 0;
}

static inline void counted(const void *ret)
{
    n_alloc++;
    for (int i = 0; i < nseg; i++)
        if ((uintptr_t)ret >= seg[i].lo && (uintptr_t)ret < seg[i].hi) n_jager++;
}

/* A sanitizer's runtime owns malloc: counting through glibc's would mix two allocators. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NOALLOC_SKIP 1
#else
#define NOALLOC_SKIP 0
__attribute__((visibility("default"))) void *malloc(size_t n)
{
    counted(__builtin_return_address(0));
    return __libc_malloc(n);
}
__attribute__((visibility("default"))) void *calloc(size_t a, size_t b)
{
    counted(__builtin_return_address(0));
    return __libc_calloc(a, b);
}
__attribute__((visibility("default"))) void *realloc(void *p, size_t n)
{
    counted(__builtin_return_address(0));
    return __libc_realloc(p, n);
}
__attribute__((visibility("default"))) void *memalign(size_t al, size_t n)
{
    counted(__builtin_return_address(0));
    return __libc_memalign(al, n);
}
__attribute__((visibility("default"))) void *aligned_alloc(size_t al, size_t n)
{
    counted(__builtin_return_address(0));
    return __libc_memalign(al, n);
}
__attribute__((visibility("default"))) int posix_memalign(void **p, size_t al, size_t n)
{
    counted(__builtin_return_address(0));
    *p = __libc_memalign(al, n);
    return *p ? 0 : 12; /* ENOMEM */
}
#endif

#define HALF 32
#define WARM 50
#define ROUNDS 200

/* noinline (and no tail call): the warm-up and the counted rounds make their MPI calls
 * from the same call sites (a caller is interned once, the first time it is seen) */
__attribute__((noinline)) static void round_mpi(int peer, double *in, double *out, MPI_Request *rq)
{
    for (int i = 0; i < HALF; i++) MPI_Irecv(&in[i], 1, MPI_DOUBLE, peer, i, MPI_COMM_WORLD, &rq[i]);
    for (int i = 0; i < HALF; i++) MPI_Isend(&out[i], 1, MPI_DOUBLE, peer, i, MPI_COMM_WORLD, &rq[HALF + i]);
    MPI_Waitall(2 * HALF, rq, MPI_STATUSES_IGNORE);
    __asm__ volatile("" ::: "memory"); /* no tail call: Waitall's caller stays round_mpi */
}

__attribute__((noinline)) static void round_pmpi(int peer, double *in, double *out, MPI_Request *rq)
{
    for (int i = 0; i < HALF; i++) PMPI_Irecv(&in[i], 1, MPI_DOUBLE, peer, i, MPI_COMM_WORLD, &rq[i]);
    for (int i = 0; i < HALF; i++) PMPI_Isend(&out[i], 1, MPI_DOUBLE, peer, i, MPI_COMM_WORLD, &rq[HALF + i]);
    PMPI_Waitall(2 * HALF, rq, MPI_STATUSES_IGNORE);
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    int rank, size;
    double in[HALF], out[HALF];
    MPI_Request rq[2 * HALF];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;
    if (peer >= size) peer = rank;
    for (int i = 0; i < HALF; i++) out[i] = rank + i;
    dl_iterate_phdr(find_jager, NULL);
    for (int w = 0; w < WARM; w++) {
        round_pmpi(peer, in, out, rq);
        round_mpi(peer, in, out, rq);
    }
    unsigned long a0 = n_alloc;
    for (int w = 0; w < ROUNDS; w++) round_pmpi(peer, in, out, rq);
    unsigned long a1 = n_alloc, j1 = n_jager;
    for (int w = 0; w < ROUNDS; w++) round_mpi(peer, in, out, rq);
    unsigned long a2 = n_alloc, j2 = n_jager;
    if (NOALLOC_SKIP) printf("rank %d skip: sanitizer build\n", rank);
    else printf("rank %d pmpi %lu mpi %lu jager %lu segments %d\n", rank, a1 - a0, a2 - a1, j2 - j1, nseg);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
