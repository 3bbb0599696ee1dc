#include "strdict.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_bytes(const char *s, uint32_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (uint32_t i = 0; i < n; i++) {
        h ^= (uint8_t)s[i];
        h *= 1099511628211ull;
    }
    return h ^ (h >> 29);
}

static int entry_equals(const tu_strdict *d, uint32_t idx, const char *s, uint32_t n)
{
    const uint8_t *p = d->plain.data + d->offs[idx];
    uint32_t len;
    memcpy(&len, p, 4);
    return len == n && memcmp(p + 4, s, n) == 0;
}

static int rehash(tu_strdict *d, uint32_t nslots)
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

int64_t tu_strdict_put(tu_strdict *d, const char *s, uint32_t n)
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

const char *tu_strdict_get(const tu_strdict *d, uint32_t i, uint32_t *len)
{
    const uint8_t *p = d->plain.data + d->offs[i];
    memcpy(len, p, 4);
    return (const char *)p + 4;
}

void tu_strdict_clear(tu_strdict *d)
{
    d->plain.len = 0;
    d->count = 0;
    if (d->slots) memset(d->slots, 0, d->nslots * sizeof *d->slots);
}

void tu_strdict_free(tu_strdict *d)
{
    tu_buf_free(&d->plain);
    free(d->offs);
    free(d->slots);
    memset(d, 0, sizeof *d);
}
