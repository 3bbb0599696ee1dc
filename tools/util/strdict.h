/* An insertion-ordered, hashed dictionary of byte strings: each distinct string gets the
 * next index. The entries are kept in one buffer as u32 length (little-endian) + bytes, in
 * index order — Parquet's PLAIN BYTE_ARRAY layout, so the Parquet exporter writes the
 * buffer as its dictionary page; pprof's string table reads the entries back by index. */
#ifndef JAGER_TOOLS_STRDICT_H
#define JAGER_TOOLS_STRDICT_H
#include <stddef.h>
#include <stdint.h>

#include "toolutil.h"

typedef struct tu_strdict {
    tu_buf plain;      /**< entries in index order: u32 len + bytes */
    uint32_t count;
    uint64_t *offs;    /**< offset of each entry in plain (its length prefix) */
    uint32_t offs_cap;
    uint32_t *slots;   /**< open addressing: index + 1, 0 = empty */
    uint32_t nslots;   /**< power of two */
} tu_strdict;

/** Index of \p s (n bytes) in the dictionary, adding it if new; -1 on out of memory. */
int64_t tu_strdict_put(tu_strdict *d, const char *s, uint32_t n);
/** Entry \p i (< count): its bytes (not NUL-terminated), length in \p len. */
const char *tu_strdict_get(const tu_strdict *d, uint32_t i, uint32_t *len);
/** Forget all entries, keeping the memory. */
void tu_strdict_clear(tu_strdict *d);
void tu_strdict_free(tu_strdict *d);
#endif
