/*
 * dispatch_internal.h — what the dispatch plugin's files share. Never installed.
 *
 *   dispatch_plugin.c   descriptor, init (event types, options), stop summary, shutdown
 *   dispatch_api.c      the "jager.dispatch/1" functions (validation, bookkeeping, events)
 *   dispatch_map.c      a u64 → u32 open-addressing map and a growable array
 *
 * One process holds at most one dispatch plugin, and the extension functions carry no
 * state argument, so the state is a process global guarded by one static mutex (static so
 * that a call racing with shutdown finds NULL instead of freed memory).
 */
#ifndef DISPATCH_INTERNAL_H
#define DISPATCH_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "jager_plugin.h"
#include "jager_dispatch.h"

#define DP_HIDDEN __attribute__((visibility("hidden")))

/* ---- dispatch_map.c ---- */

/** Open-addressing map from non-zero u64 keys to u32 values (linear probing). */
typedef struct dp_map {
    uint64_t *keys; /* 0 = empty slot */
    uint32_t *vals;
    size_t cap;     /* power of two, or 0 */
    size_t count;
} dp_map;

/** 1 and *val set if \p key is present, else 0. */
DP_HIDDEN int dp_map_find(const dp_map *m, uint64_t key, uint32_t *val);
/** Insert or replace. JAGER_E_NOMEM leaves the map unchanged. \p key must be non-zero. */
DP_HIDDEN jager_status dp_map_put(dp_map *m, uint64_t key, uint32_t val);
DP_HIDDEN void dp_map_free(dp_map *m);

/** A growable array of fixed-size elements. */
typedef struct dp_vec {
    uint8_t *data;
    size_t n, cap, elem;
} dp_vec;

/** Append one zeroed element; its address (valid until the next push), or NULL on OOM. */
DP_HIDDEN void *dp_vec_push(dp_vec *v);
DP_HIDDEN void *dp_vec_at(const dp_vec *v, size_t i);
DP_HIDDEN void dp_vec_free(dp_vec *v);

/* ---- bookkeeping records ---- */

/** One (site, signature) pair. */
typedef struct dp_sig {
    uint32_t site;
    uint32_t sig;      /* string id */
    uint64_t calls;    /* last absolute count sent */
} dp_sig;

/** One call site that saw at least one signature. */
typedef struct dp_site {
    uint32_t site;
    uint32_t distinct; /* signatures seen */
} dp_site;

/** One method counted by a census. */
typedef struct dp_method {
    uint32_t name, file; /* string ids */
    uint32_t line;
    uint32_t reserved;
    uint64_t count;       /* at the last census */
    uint64_t first_count; /* at the first census */
    uint64_t first_ns;    /* time of the first census */
    uint64_t censuses;
} dp_method;

/* ---- the plugin state ---- */

/** Kinds of misuse, each reported once. */
enum dp_said {
    DP_SAID_SITE,      /* site 0 or unknown */
    DP_SAID_STRING,    /* NULL or empty string */
    DP_SAID_STOPPED,   /* call after stop */
    DP_SAID_FULL,      /* a limit reached */
    DP_SAID_NOMEM,
    DP_SAID_FLAGS,     /* instability without flags */
    DP_SAID_KINDS
};

/** Registered event type ids. */
typedef struct dp_types {
    uint16_t signature, compile, specializations, instability, summary;
} dp_types;

typedef struct dp_state {
    const jager_host_api *host;
    jager_plugin_handle *self;
    dp_types types;
    int stopped;
    uint64_t max_signatures, max_methods;
    size_t string_max; /* bytes kept of one string */
    dp_map sig_map;    /* (site << 32 | sig id) → index in sigs */
    dp_map site_map;   /* site → index in sites */
    dp_map method_map; /* method name id → index in methods */
    dp_map unstable;   /* (site << 32 | sig id) → flags reported */
    dp_vec sigs, sites, methods;
    uint64_t compiles, codegen_ns, inference_ns, unstable_count;
    uint64_t rejected; /* calls refused (misuse, limits, OOM) */
    int said[DP_SAID_KINDS];
} dp_state;

/** The one live state (NULL outside init..shutdown) and the lock that guards it. */
extern dp_state *dp_global DP_HIDDEN;
extern pthread_mutex_t dp_lock DP_HIDDEN;

/** Fill the extension table (struct_size and functions). */
DP_HIDDEN const jager_dispatch_api *dp_api_table(void);
/** Reset bookkeeping (free tables) without touching host/types/limits. [under dp_lock] */
DP_HIDDEN void dp_state_clear(dp_state *s);
/** Report a misuse once per kind and count the refused call. [under dp_lock] */
DP_HIDDEN void dp_say_once(dp_state *s, enum dp_said kind, const char *message);

#endif /* DISPATCH_INTERNAL_H */
