/* model_map.c — the analysis model's hash map: (a, b) → uint32, open addressing with
 * linear probing, load ≤ 1/2. Keys are ids (site, stack, string, thread), so a cheap
 * multiplicative mix spreads them well enough. */
#include <stdlib.h>
#include <string.h>

#include "model_priv.h"

static size_t slot_of(uint64_t a, uint64_t b, size_t mask)
{
    uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    return (size_t)h & mask;
}

uint32_t jm_map_get(const jm_map *m, uint64_t a, uint64_t b)
{
    if (!m->cap) return JM_NONE;
    size_t mask = m->cap - 1;
    for (size_t i = slot_of(a, b, mask);; i = (i + 1) & mask) {
        if (m->val[i] == JM_NONE) return JM_NONE;
        if (m->ka[i] == a && m->kb[i] == b) return m->val[i];
    }
}

static int rehash(jm_map *m, size_t cap)
{
    uint64_t *ka = malloc(cap * sizeof *ka), *kb = malloc(cap * sizeof *kb);
    uint32_t *val = malloc(cap * sizeof *val);
    if (!ka || !kb || !val) goto fail;
    memset(val, 0xFF, cap * sizeof *val);
    size_t mask = cap - 1;
    for (size_t j = 0; j < m->cap; j++) {
        if (m->val[j] == JM_NONE) continue;
        size_t i = slot_of(m->ka[j], m->kb[j], mask);
        while (val[i] != JM_NONE) i = (i + 1) & mask;
        ka[i] = m->ka[j];
        kb[i] = m->kb[j];
        val[i] = m->val[j];
    }
    free(m->ka);
    free(m->kb);
    free(m->val);
    m->ka = ka;
    m->kb = kb;
    m->val = val;
    m->cap = cap;
    return 0;
fail:
    free(ka);
    free(kb);
    free(val);
    return -1;
}

int jm_map_put(jm_map *m, uint64_t a, uint64_t b, uint32_t v)
{
    if ((m->count + 1) * 2 > m->cap && rehash(m, m->cap ? m->cap * 2 : 16) != 0) return -1;
    size_t mask = m->cap - 1;
    size_t i = slot_of(a, b, mask);
    while (m->val[i] != JM_NONE) i = (i + 1) & mask;
    m->ka[i] = a;
    m->kb[i] = b;
    m->val[i] = v;
    m->count++;
    return 0;
}

int jm_map_del(jm_map *m, uint64_t a, uint64_t b)
{
    if (!m->cap) return -1;
    size_t mask = m->cap - 1, i = slot_of(a, b, mask);
    for (;; i = (i + 1) & mask) {
        if (m->val[i] == JM_NONE) return -1;
        if (m->ka[i] == a && m->kb[i] == b) break;
    }
    /* Backward shift: move later entries of the probe run into the hole when their home
     * slot does not lie (cyclically) between the hole and them. */
    for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
        if (m->val[j] == JM_NONE) break;
        size_t home = slot_of(m->ka[j], m->kb[j], mask);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->ka[i] = m->ka[j];
            m->kb[i] = m->kb[j];
            m->val[i] = m->val[j];
            i = j;
        }
    }
    m->val[i] = JM_NONE;
    m->count--;
    return 0;
}

void jm_map_clear(jm_map *m)
{
    if (m->cap > 4096) { /* a subtree that grew large once: give the memory back */
        jm_map_free(m);
        return;
    }
    if (m->cap) memset(m->val, 0xFF, m->cap * sizeof *m->val);
    m->count = 0;
}

void jm_map_free(jm_map *m)
{
    free(m->ka);
    free(m->kb);
    free(m->val);
    memset(m, 0, sizeof *m);
}

void *jm_pool_get(const jm_pool *p, uint64_t a, uint64_t b)
{
    uint32_t i = jm_map_get(&p->ix, a, b);
    return i == JM_NONE ? NULL : jm_pool_at(p, i);
}

void *jm_pool_add(jm_pool *p, uint64_t a, uint64_t b)
{
    if (jm_grow(&p->rec, &p->cap, p->n + 1, p->size) || jm_grow((void **)&p->key, &p->kcap, p->n + 1, 2 * sizeof *p->key)
        || jm_map_put(&p->ix, a, b, p->n))
        return NULL;
    p->key[2 * p->n] = a;
    p->key[2 * p->n + 1] = b;
    return jm_pool_at(p, p->n++);
}

void jm_pool_del(jm_pool *p, void *rec)
{
    uint32_t i = (uint32_t)(((char *)rec - (char *)p->rec) / p->size), last = p->n - 1;
    jm_map_del(&p->ix, p->key[2 * i], p->key[2 * i + 1]);
    if (i != last) {
        memcpy(rec, jm_pool_at(p, last), p->size);
        p->key[2 * i] = p->key[2 * last];
        p->key[2 * i + 1] = p->key[2 * last + 1];
        jm_map_del(&p->ix, p->key[2 * i], p->key[2 * i + 1]);
        jm_map_put(&p->ix, p->key[2 * i], p->key[2 * i + 1], i); /* cannot fail: no growth below the old count */
    }
    memset(jm_pool_at(p, last), 0, p->size);
    p->n--;
}

void jm_pool_free(jm_pool *p)
{
    size_t size = p->size;
    jm_map_free(&p->ix);
    free(p->key);
    free(p->rec);
    memset(p, 0, sizeof *p);
    p->size = size;
}

int jm_grow(void **arr, uint32_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    uint64_t n = *cap ? *cap : 8;
    while (n < need) n *= 2;
    if (n > UINT32_MAX) n = UINT32_MAX;
    if (n < need) return -1;
    void *p = realloc(*arr, (size_t)n * elem);
    if (!p) return -1;
    memset((char *)p + (size_t)*cap * elem, 0, (size_t)(n - *cap) * elem);
    *arr = p;
    *cap = (uint32_t)n;
    return 0;
}
