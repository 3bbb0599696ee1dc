/* Parquet value encodings (formats.md §1.5–1.6): the RLE/bit-packed hybrid used for
 * definition levels and dictionary indices, and bit-packed PLAIN booleans. The string
 * dictionary of RLE_DICTIONARY pages is util's tu_strdict (its buffer is the PLAIN page). */
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

#endif
