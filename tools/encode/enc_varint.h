/* LEB128 varints, the integer encoding Thrift compact, protobuf and Parquet's RLE runs share
 * (formats.md §1.2, §2.6): 7 bits a byte, least significant group first. */
#ifndef JAGER_TOOLS_ENC_VARINT_H
#define JAGER_TOOLS_ENC_VARINT_H
#include <stdint.h>

#include "toolutil.h"

/** Unsigned LEB128 of \p v appended to \p b (1..10 bytes). 0 or -1 (OOM). */
int enc_uvarint(tu_buf *b, uint64_t v);
/** Bytes enc_uvarint() writes for \p v. */
size_t enc_uvarint_len(uint64_t v);
/** ZigZag: signed to unsigned so small magnitudes stay short (0,-1,1,-2 → 0,1,2,3). */
static inline uint64_t enc_zigzag64(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
#endif
