/* model_map.h — the tools' hash map: (a, b) → uint32, open addressing with linear
 * probing (model_map.c). Keys are ids (site, stack, string, thread, node index); JM_NONE
 * (model.h) is never a value. The model builds its tables with it, and the export and
 * report layers key their stacks and call paths with it, instead of a table each. */
#ifndef JAGER_TOOLS_MODEL_MAP_H
#define JAGER_TOOLS_MODEL_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/** A map; zero it before first use. */
typedef struct jm_map {
    uint64_t *ka, *kb;
    uint32_t *val;   /* JM_NONE marks an empty slot */
    size_t cap;      /* power of two, 0 before first insert */
    size_t count;
} jm_map;

/** The value for (a, b), or JM_NONE. */
uint32_t jm_map_get(const jm_map *m, uint64_t a, uint64_t b);
/** Insert (a, b) → v (the key must be absent). \return 0, or -1 on out of memory. */
int jm_map_put(jm_map *m, uint64_t a, uint64_t b, uint32_t v);
/** Remove (a, b). \return 0, or -1 when it was absent. */
int jm_map_del(jm_map *m, uint64_t a, uint64_t b);
/** Forget every entry; keeps the storage unless it is large. */
void jm_map_clear(jm_map *m);
/** Free its storage (a zeroed map is fine). */
void jm_map_free(jm_map *m);

/** The tools' growable array: grow \p arr (elements of \p elem bytes, \p cap of them) by
 *  doubling so that it holds at least \p need; new elements are zeroed. \return 0, or -1 on
 *  out of memory or past UINT32_MAX elements (\p arr and \p cap unchanged then). */
int jm_grow(void **arr, uint32_t *cap, size_t need, size_t elem);

/** A keyed pool: records of \p size bytes found by (a, b) through a jm_map and kept
 *  densely in rec (index 0 .. n-1); removing one moves the last into its place. For
 *  the state of open spans waiting for their end. Zero it and set size before first use. */
typedef struct jm_pool {
    jm_map ix;         /* (a, b) → index */
    uint64_t *key;     /* the key of record i: key[2i], key[2i + 1] */
    void *rec;
    uint32_t n, cap, kcap;
    size_t size;
} jm_pool;

/** The record of (a, b), or NULL. */
void *jm_pool_get(const jm_pool *p, uint64_t a, uint64_t b);
/** A new zeroed record for (a, b) (the key must be absent), or NULL on out of memory. */
void *jm_pool_add(jm_pool *p, uint64_t a, uint64_t b);
/** Record \p i (< n) and its key. */
static inline void *jm_pool_at(const jm_pool *p, uint32_t i) { return (char *)p->rec + (size_t)i * p->size; }
/** Remove record \p rec (from jm_pool_get/add/at); the caller has freed what it owns. */
void jm_pool_del(jm_pool *p, void *rec);
/** Free its storage; keeps size. */
void jm_pool_free(jm_pool *p);

#endif
