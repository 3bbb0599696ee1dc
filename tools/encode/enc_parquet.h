/* Parquet value encodings (formats.md §1.5–1.6): the RLE/bit-packed hybrid used for
 * definition levels and dictionary indices, bit-packed PLAIN booleans, and a string
 * dictionary (insertion-ordered, hashed) for RLE_DICTIONARY pages. */
#ifndef JAGER_TOOLS_EXPORT_PQENC_H
#define JAGER_TOOLS_EXPORT_PQENC_H
#include <stddef.h>
#include <stdint.h>

#include "toolutil.h"

/** Bits needed for values 0..max_value (at least 1). */
int pq_bit_width(uint32_t max_value);

/** RLE/bit-packed hybrid of n values of \p width bits (≤ 32), without a length prefix:
 *  one RLE run when all values are equal, else one bit-packed run (LSB first, the last
 *  group of 8 padded with zeros). 0 or -1. */
int pq_hybrid_u8(tu_buf *b, const uint8_t *v, size_t n, int width);
int pq_hybrid_u32(tu_buf *b, const uint32_t *v, size_t n, int width);

/** PLAIN booleans: one bit per value, LSB first (v holds 0/1 per byte). 0 or -1. */
int pq_plain_bools(tu_buf *b, const uint8_t *v, size_t n);

/** A dictionary of byte strings; the plain buffer is the dictionary page body. */
typedef struct pq_dict {
    tu_buf plain;      /**< PLAIN BYTE_ARRAY values in index order: u32 len + bytes */
    uint32_t count;
    uint64_t *offs;    /**< offset of each entry in plain (its length prefix) */
    uint32_t offs_cap;
    uint32_t *slots;   /**< open addressing: index + 1, 0 = empty */
    uint32_t nslots;   /**< power of two */
} pq_dict;

/** Index of \p s in the dictionary, adding it if new; -1 on out of memory. */
int64_t pq_dict_put(pq_dict *d, const char *s, uint32_t n);
/** Forget all entries, keeping the memory. */
void pq_dict_clear(pq_dict *d);
void pq_dict_free(pq_dict *d);
#endif
