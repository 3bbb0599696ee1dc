/* The core's growable array and open-addressing hash map (containers.h). */
#include <stdlib.h>
#include <string.h>

#include "containers.h"

void *jg_grow(void *data, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap) return data;
    size_t c = *cap ? *cap : (first ? first : 1);
    while (c < need) {
        if (c > SIZE_MAX / 2) return NULL;
        c *= 2;
    }
    if (c > SIZE_MAX / elem) return NULL;
    uint8_t *d = realloc(data, c * elem);
    if (!d) return NULL;
    memset(d + *cap * elem, 0, (c - *cap) * elem);
    *cap = c;
    return d;
}

int jg_vec_reserve(jg_vec *v, size_t elem, size_t i)
{
    if (i < v->cap) return 0;
    if (i == SIZE_MAX) return -1;
    void *d = jg_grow(v->data, &v->cap, i + 1, elem, 64);
    if (!d) return -1;
    v->data = d;
    return 0;
}

void jg_vec_free(jg_vec *v)
{
    free(v->data);
    v->data = NULL;
    v->n = v->cap = 0;
}

uint64_t jg_hash_bytes(const void *p, size_t n, uint64_t h)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ull;
    }
    return h;
}

int jg_idmap_reserve(jg_idmap *m)
{
    if ((m->used + 1) * 2 <= m->cap) return 0;
    size_t cap = m->cap ? m->cap * 2 : 1024;
    uint64_t *h = calloc(cap, sizeof *h);
    uint32_t *id = calloc(cap, sizeof *id);
    if (!h || !id) {
        free(h);
        free(id);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->id[i]) continue;
        size_t j = m->hash[i] & (cap - 1);
        while (id[j]) j = (j + 1) & (cap - 1);
        h[j] = m->hash[i];
        id[j] = m->id[i];
    }
    free(m->hash);
    free(m->id);
    m->hash = h;
    m->id = id;
    m->cap = cap;
    return 0;
}

size_t jg_idmap_find(const jg_idmap *m, uint64_t h, jg_idmap_eq eq, const void *key, void *ctx)
{
    if (!m->cap) return 0;
    size_t j = h & (m->cap - 1);
    while (m->id[j]) {
        if (m->hash[j] == h && eq(m->id[j], key, ctx)) return j;
        j = (j + 1) & (m->cap - 1);
    }
    return j;
}

void jg_idmap_put(jg_idmap *m, size_t slot, uint64_t h, uint32_t id)
{
    m->hash[slot] = h;
    m->id[slot] = id;
    m->used++;
}

void jg_idmap_free(jg_idmap *m)
{
    free(m->hash);
    free(m->id);
    memset(m, 0, sizeof *m);
}
