#include "enc_protobuf.h"

#include "enc_varint.h"

static int tag(tu_buf *b, uint32_t field, uint32_t wire) { return enc_uvarint(b, ((uint64_t)field << 3) | wire); }

int pb_varint(tu_buf *b, uint32_t field, uint64_t v) { return tag(b, field, 0) || enc_uvarint(b, v) ? -1 : 0; }

int pb_bytes(tu_buf *b, uint32_t field, const void *p, size_t n)
{
    return tag(b, field, 2) || enc_uvarint(b, n) || tu_buf_put(b, p, n) ? -1 : 0;
}

int pb_packed(tu_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++) len += enc_uvarint_len(v[i]);
    if (tag(b, field, 2) || enc_uvarint(b, len)) return -1;
    for (size_t i = 0; i < n; i++)
        if (enc_uvarint(b, v[i])) return -1;
    return 0;
}
