#include "enc_varint.h"

int enc_uvarint(tu_buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        uint8_t byte = v & 0x7F;
        v >>= 7;
        tmp[n++] = byte | (v ? 0x80 : 0);
    } while (v);
    return tu_buf_put(b, tmp, n);
}

size_t enc_uvarint_len(uint64_t v)
{
    size_t n = 0;
    do { n++; v >>= 7; } while (v);
    return n;
}
