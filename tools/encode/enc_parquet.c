#include "enc_parquet.h"

#include <stdlib.h>
#include <string.h>

#include "enc_thrift.h"

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
        return th_uvarint(b, (uint64_t)n << 1) || tu_buf_put(b, val, (size_t)nb) ? -1 : 0;
    }
    /* bit-packed run: uvarint((groups << 1) | 1), groups * width bytes */
    size_t groups = (n + 7) / 8;
    if (th_uvarint(b, ((uint64_t)groups << 1) | 1)) return -1;
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

static uint64_t hash_bytes(const char *s, uint32_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (uint32_t i = 0; i < n; i++) {
        h ^= (uint8_t)s[i];
        h *= 1099511628211ull;
    }
    return h ^ (h >> 29);
}

static int entry_equals(const pq_dict *d, uint32_t idx, const char *s, uint32_t n)
{
    const uint8_t *p = d->plain.data + d->offs[idx];
    uint32_t len;
    memcpy(&len, p, 4);
    return len == n && memcmp(p + 4, s, n) == 0;
}

static int rehash(pq_dict *d, uint32_t nslots)
{
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots) return -1;
    for (uint32_t i = 0; i < d->count; i++) {
        const uint8_t *p = d->plain.data + d->offs[i];
        uint32_t len;
        memcpy(&len, p, 4);
        uint64_t h = hash_bytes((const char *)p + 4, len);
        uint32_t k = (uint32_t)h & (nslots - 1);
        while (slots[k]) k = (k + 1) & (nslots - 1);
        slots[k] = i + 1;
    }
    free(d->slots);
    d->slots = slots;
    d->nslots = nslots;
    return 0;
}

int64_t pq_dict_put(pq_dict *d, const char *s, uint32_t n)
{
    if ((uint64_t)(d->count + 1) * 2 > d->nslots && rehash(d, d->nslots ? d->nslots * 2 : 1024)) return -1;
    uint64_t h = hash_bytes(s, n);
    uint32_t k = (uint32_t)h & (d->nslots - 1);
    while (d->slots[k]) {
        uint32_t idx = d->slots[k] - 1;
        if (entry_equals(d, idx, s, n)) return idx;
        k = (k + 1) & (d->nslots - 1);
    }
    if (d->count == d->offs_cap) {
        uint32_t cap = d->offs_cap ? d->offs_cap * 2 : 1024;
        uint64_t *o = realloc(d->offs, cap * sizeof *o);
        if (!o) return -1;
        d->offs = o;
        d->offs_cap = cap;
    }
    uint64_t off = d->plain.len;
    if (tu_buf_put(&d->plain, &n, 4) || tu_buf_put(&d->plain, s, n)) {
        d->plain.len = off;
        return -1;
    }
    d->offs[d->count] = off;
    d->slots[k] = d->count + 1;
    return d->count++;
}

void pq_dict_clear(pq_dict *d)
{
    d->plain.len = 0;
    d->count = 0;
    if (d->slots) memset(d->slots, 0, d->nslots * sizeof *d->slots);
}

void pq_dict_free(pq_dict *d)
{
    tu_buf_free(&d->plain);
    free(d->offs);
    free(d->slots);
    memset(d, 0, sizeof *d);
}
