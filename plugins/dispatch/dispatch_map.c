/* dispatch_map.c — a u64 → u32 open-addressing map and a growable array, both failing
 * with JAGER_E_NOMEM / NULL instead of aborting, and leaving their contents intact then. */
#include <stdlib.h>
#include <string.h>

#include "dispatch_internal.h"

/* splitmix64's finaliser: keys are (site << 32 | id) pairs, so the low bits alone would
 * cluster badly. */
static uint64_t dp_hash(uint64_t k)
{
    k ^= k >> 30;
    k *= 0xbf58476d1ce4e5b9ull;
    k ^= k >> 27;
    k *= 0x94d049bb133111ebull;
    k ^= k >> 31;
    return k;
}

int dp_map_find(const dp_map *m, uint64_t key, uint32_t *val)
{
    if (m->cap == 0 || key == 0)
        return 0;
    size_t mask = m->cap - 1;
    for (size_t i = dp_hash(key) & mask;; i = (i + 1) & mask) {
        if (m->keys[i] == key) {
            *val = m->vals[i];
            return 1;
        }
        if (m->keys[i] == 0)
            return 0;
    }
}

/* Insert without growing; the caller guarantees a free slot. */
static void dp_map_place(uint64_t *keys, uint32_t *vals, size_t cap, uint64_t key, uint32_t val, int *added)
{
    size_t mask = cap - 1;
    size_t i = dp_hash(key) & mask;
    while (keys[i] != 0 && keys[i] != key)
        i = (i + 1) & mask;
    *added = keys[i] == 0;
    keys[i] = key;
    vals[i] = val;
}

static jager_status dp_map_grow(dp_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = calloc(cap, sizeof *keys);
    uint32_t *vals = calloc(cap, sizeof *vals);
    if (!keys || !vals)
        goto fail_alloc;
    for (size_t i = 0; i < m->cap; i++) {
        int added;
        if (m->keys[i] != 0)
            dp_map_place(keys, vals, cap, m->keys[i], m->vals[i], &added);
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return JAGER_OK;

fail_alloc:
    free(keys);
    free(vals);
    return JAGER_E_NOMEM;
}

jager_status dp_map_put(dp_map *m, uint64_t key, uint32_t val)
{
    if (key == 0)
        return JAGER_E_INVALID;
    /* Keep the load under 3/4 so probes stay short and a free slot always exists. */
    if ((m->count + 1) * 4 > m->cap * 3) {
        jager_status st = dp_map_grow(m);
        if (st != JAGER_OK)
            return st;
    }
    int added;
    dp_map_place(m->keys, m->vals, m->cap, key, val, &added);
    m->count += (size_t)added;
    return JAGER_OK;
}

void dp_map_free(dp_map *m)
{
    if (!m)
        return;
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

void *dp_vec_push(dp_vec *v)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        uint8_t *data = realloc(v->data, cap * v->elem);
        if (!data)
            return NULL;
        v->data = data;
        v->cap = cap;
    }
    void *e = v->data + v->n * v->elem;
    memset(e, 0, v->elem);
    v->n++;
    return e;
}

void *dp_vec_at(const dp_vec *v, size_t i)
{
    return i < v->n ? v->data + i * v->elem : NULL;
}

void dp_vec_free(dp_vec *v)
{
    if (!v)
        return;
    free(v->data);
    v->data = NULL;
    v->n = v->cap = 0;
}
