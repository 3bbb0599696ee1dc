/*
 * containers.h — the core's two containers, shared by the recorder and the reader. Never
 * installed.
 *
 *   jg_grow / jg_vec   a growable array: capacity doubles, new space is zeroed, and out of
 *                      memory leaves the array as it was (callers retry or report).
 *   jg_idmap           an open-addressing (linear probing) map from a 64-bit hash to a
 *                      dense id, 0 meaning empty. It stores only hash and id: the caller
 *                      keeps the keys in its own table and passes an equality test, so
 *                      one map serves strings, sites, stacks, addresses and the reader's
 *                      symbols. Load stays at most 1/2. Not thread-safe: callers lock.
 */
#ifndef JAGER_CONTAINERS_H
#define JAGER_CONTAINERS_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

/** Grow \p data, an array of \p elem-byte entries with room for *cap, to hold at least
 *  \p need entries (capacity doubling from \p first); the new entries are zeroed. Returns
 *  the array (moved or not) and updates *cap, or NULL on out of memory or overflow, when
 *  \p data and *cap are unchanged. */
JG_HIDDEN void *jg_grow(void *data, size_t *cap, size_t need, size_t elem, size_t first);

/** A growable array of fixed-size entries: n used (the owner's count), cap allocated. */
typedef struct jg_vec {
    void *data;
    size_t n, cap;
} jg_vec;

/** Room for entry \p i (entries of \p elem bytes; new ones zeroed): 0, or -1 on out of memory. */
JG_HIDDEN int jg_vec_reserve(jg_vec *v, size_t elem, size_t i);
/** Free the array; the vec is empty again. */
JG_HIDDEN void jg_vec_free(jg_vec *v);

/** FNV-1a of \p n bytes, continuing from \p h (start with JG_HASH_SEED). */
#define JG_HASH_SEED 1469598103934665603ull
JG_HIDDEN uint64_t jg_hash_bytes(const void *p, size_t n, uint64_t h);
/** Mix one 64-bit value into \p h (for addresses and stacks). */
static inline uint64_t jg_hash_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

typedef struct jg_idmap {
    uint64_t *hash;
    uint32_t *id; /* 0 = empty slot */
    size_t cap, used;
} jg_idmap;

/** Does the entry \p id have the key \p key? */
typedef int (*jg_idmap_eq)(uint32_t id, const void *key, void *ctx);

/** Make room for one more entry: 0, or -1 on out of memory (the map is unchanged). */
JG_HIDDEN int jg_idmap_reserve(jg_idmap *m);
/** The slot of the first entry with hash \p h for which \p eq holds, or the empty slot
 *  where such an entry goes (jg_idmap_id() is 0 there). Call jg_idmap_reserve() first
 *  when you may insert; on an empty map (cap 0) returns 0 and jg_idmap_id() is 0. */
JG_HIDDEN size_t jg_idmap_find(const jg_idmap *m, uint64_t h, jg_idmap_eq eq, const void *key, void *ctx);
/** The id at \p slot (0: empty). */
static inline uint32_t jg_idmap_id(const jg_idmap *m, size_t slot) { return m->cap ? m->id[slot] : 0; }
/** Store \p id with hash \p h at the empty \p slot that jg_idmap_find() returned. */
JG_HIDDEN void jg_idmap_put(jg_idmap *m, size_t slot, uint64_t h, uint32_t id);
/** Free the map; it is empty again. */
JG_HIDDEN void jg_idmap_free(jg_idmap *m);

#endif /* JAGER_CONTAINERS_H */
