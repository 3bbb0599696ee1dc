/* A minimal protocol-buffers writer (formats.md §2.6): varint, length-delimited and packed
 * fields appended to a tu_buf. Nested messages are built in their own buffer and added
 * with pb_bytes(). */
#ifndef JAGER_TOOLS_EXPORT_PROTO_H
#define JAGER_TOOLS_EXPORT_PROTO_H
#include <stddef.h>
#include <stdint.h>

#include "toolutil.h"

/** Field \p field as a varint (int64/uint64/bool/enum; negative int64 as 10 bytes). 0 or -1. */
int pb_varint(tu_buf *b, uint32_t field, uint64_t v);
/** Field \p field as length-delimited bytes (string, bytes, message). 0 or -1. */
int pb_bytes(tu_buf *b, uint32_t field, const void *p, size_t n);
/** Field \p field as a packed repeated varint. 0 or -1. */
int pb_packed(tu_buf *b, uint32_t field, const uint64_t *v, size_t n);
#endif
