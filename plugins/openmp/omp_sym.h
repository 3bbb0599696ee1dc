/*
 * omp_sym.h — code address → function, file, line for the openmp plugin and the
 * instrument library (each links its own hidden copy). dladdr first; for functions that
 * are not in .dynsym (static functions, executables built without -rdynamic) libdw reads
 * .symtab and the line table. C++ names are demangled when libstdc++ is in the process.
 * Slow (first use reads /proc/self/maps and ELF files): call once per address and cache.
 */
#ifndef JAGER_OMP_SYM_H
#define JAGER_OMP_SYM_H
#include <stddef.h>
#include <stdint.h>

/* Fills func (never empty: "0x…" when nothing names the address), file ("" if unknown)
 * and line (0 if unknown). Returns 1 when a symbol named it, 0 otherwise. Thread-safe. */
__attribute__((visibility("hidden"), no_instrument_function)) int jgx_symbolize(const void *addr, char *func,
                                                                                 size_t fcap, char *file,
                                                                                 size_t filecap, uint32_t *line);
/* Frees libdw's state. */
__attribute__((visibility("hidden"), no_instrument_function)) void jgx_symbolize_end(void);
#endif
