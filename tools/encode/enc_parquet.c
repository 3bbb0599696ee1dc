#include "enc_parquet.h"

#include <stdlib.h>
#include <string.h>

#include "enc_varint.h"

int pq_bit_width(uint32_t max_value)
{
    int w = 1;
    while (w < 32 && (max_value >> w)) w++;
    return w;
}

static uint32_t value_at(const void *v, size_t elem, size_t i)
{
    return elem == 1 ? ((const uint8_t *)v)[i] : ((const uint32_t *)v)[i];
}

static int zeros(tu_buf *b, size_t n)
{
    static const uint8_t zero[256];
    while (n) {
        size_t c = n < sizeof zero ? n : sizeof zero;
        if (tu_buf_put(b, zero, c)) return -1;
        n -= c;
    }
    return 0;
}

static int hybrid(tu_buf *b, const void *v, size_t elem, size_t n, int width)
{
    if (n == 0) return 0;
    uint32_t first = value_at(v, elem, 0);
    size_t i = 1;
    while (i < n && value_at(v, elem, i) == first) i++;
    if (i == n) {
        /* rle-run: uvarint(count << 1), then the value in ceil(width / 8) bytes LE */
        uint8_t val[4];
        int nb = (width + 7) / 8;
        for (int k = 0; k < nb; k++) val[k] = (uint8_t)(first >> (8 * k));
        return enc_uvarint(b, (uint64_t)n << 1) || tu_buf_put(b, val, (size_t)nb) ? -1 : 0;
    }
    /* bit-packed run: uvarint((groups << 1) | 1), groups * width bytes */
    size_t groups = (n + 7) / 8;
    if (enc_uvarint(b, ((uint64_t)groups << 1) | 1)) return -1;
    size_t at = b->len;
    if (zeros(b, groups * (size_t)width)) return -1;
    uint8_t *out = b->data + at;
    uint64_t bit = 0;
    for (i = 0; i < n; i++) {
        uint32_t x = value_at(v, elem, i);
        for (int k = 0; k < width; k++, bit++)
            if ((x >> k) & 1) out[bit >> 3] |= (uint8_t)(1u << (bit & 7));
    }
    return 0;
}

int pq_hybrid_u8(tu_buf *b, const uint8_t *v, size_t n, int width) { return hybrid(b, v, 1, n, width); }
int pq_hybrid_u32(tu_buf *b, const uint32_t *v, size_t n, int width) { return hybrid(b, v, 4, n, width); }

int pq_plain_bools(tu_buf *b, const uint8_t *v, size_t n)
{
    size_t at = b->len;
    if (zeros(b, (n + 7) / 8)) return -1;
    for (size_t i = 0; i < n; i++)
        if (v[i]) b->data[at + i / 8] |= (uint8_t)(1u << (i % 8));
    return 0;
}
