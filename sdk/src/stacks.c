/* The stack table (deduplicated return-address stacks) and the symbol table (address →
 * source frames). Native frames are named with dladdr at the end of a run; a language
 * binding names its JIT frames by pulling unresolved addresses and adding frames. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static pthread_mutex_t stack_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct jg_stack {
    uint64_t *ips;
    uint32_t n;
    uint64_t hash;
} jg_stack;

static jg_table stacks = {.elem_size = sizeof(jg_stack)};
static jg_table symbols = {.elem_size = sizeof(jg_symbol)};

/* Open-addressing maps: stack hash → stack id, ip → state slot. */
static uint64_t *smap_hash;
static uint32_t *smap_id;
static size_t smap_cap, smap_used;

enum { IP_NEW = 0, IP_HANDED_OUT = 1, IP_RESOLVED = 2 };
typedef struct ip_slot {
    uint64_t ip; /* 0 = empty (address 0 is never a return address) */
    uint32_t state;
} ip_slot;
static ip_slot *ipmap;
static size_t ipmap_cap, ipmap_used;

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static int smap_grow(void)
{
    size_t cap = smap_cap ? smap_cap * 2 : 1024;
    uint64_t *h = calloc(cap, sizeof *h);
    uint32_t *id = calloc(cap, sizeof *id);
    if (!h || !id) {
        free(h);
        free(id);
        return -1;
    }
    for (size_t i = 0; i < smap_cap; i++) {
        if (!smap_id[i]) continue;
        size_t j = smap_hash[i] & (cap - 1);
        while (id[j]) j = (j + 1) & (cap - 1);
        h[j] = smap_hash[i];
        id[j] = smap_id[i];
    }
    free(smap_hash);
    free(smap_id);
    smap_hash = h;
    smap_id = id;
    smap_cap = cap;
    return 0;
}

static int ipmap_grow(void)
{
    size_t cap = ipmap_cap ? ipmap_cap * 2 : 4096;
    ip_slot *m = calloc(cap, sizeof *m);
    if (!m) return -1;
    for (size_t i = 0; i < ipmap_cap; i++) {
        if (!ipmap[i].ip) continue;
        size_t j = mix(0, ipmap[i].ip) & (cap - 1);
        while (m[j].ip) j = (j + 1) & (cap - 1);
        m[j] = ipmap[i];
    }
    free(ipmap);
    ipmap = m;
    ipmap_cap = cap;
    return 0;
}

/* The slot of ip, inserting it as IP_NEW; NULL on out of memory. Caller holds stack_lock. */
static ip_slot *ip_lookup(uint64_t ip, int insert)
{
    if (ipmap_cap) {
        size_t j = mix(0, ip) & (ipmap_cap - 1);
        while (ipmap[j].ip) {
            if (ipmap[j].ip == ip) return &ipmap[j];
            j = (j + 1) & (ipmap_cap - 1);
        }
    }
    if (!insert) return NULL;
    /* Grow only when inserting, so callers iterating the map while re-marking present
     * addresses never see it move. */
    if ((ipmap_used + 1) * 2 >= ipmap_cap && ipmap_grow()) return NULL;
    size_t j = mix(0, ip) & (ipmap_cap - 1);
    while (ipmap[j].ip) j = (j + 1) & (ipmap_cap - 1);
    ipmap[j].ip = ip;
    ipmap[j].state = IP_NEW;
    ipmap_used++;
    return &ipmap[j];
}

jager_stack_id jager_stack_intern(const uint64_t *ips, uint32_t n)
{
    if (!ips || n == 0) return 0;
    uint64_t h = 1469598103934665603ull;
    for (uint32_t i = 0; i < n; i++) h = mix(h, ips[i]);
    h = mix(h, n);
    jager_stack_id result = 0;
    pthread_mutex_lock(&stack_lock);
    if (jg_table_count(&stacks) == 0) { /* id 0 is "no stack" */
        uint32_t i0;
        if (!jg_table_append(&stacks, &i0)) goto out;
        jg_table_publish(&stacks, 1);
    }
    if ((smap_used + 1) * 2 >= smap_cap && smap_grow()) goto out;
    size_t j = h & (smap_cap - 1);
    while (smap_id[j]) {
        if (smap_hash[j] == h) {
            const jg_stack *s = jg_table_get(&stacks, smap_id[j]);
            if (s->n == n && memcmp(s->ips, ips, n * sizeof *ips) == 0) {
                result = smap_id[j];
                goto out;
            }
        }
        j = (j + 1) & (smap_cap - 1);
    }
    uint64_t *copy = malloc(n * sizeof *copy);
    if (!copy) goto out;
    for (uint32_t i = 0; i < n; i++) {
        if (ips[i] && !ip_lookup(ips[i], 1)) {
            free(copy);
            goto out;
        }
        copy[i] = ips[i];
    }
    uint32_t id;
    jg_stack *s = jg_table_append(&stacks, &id);
    if (!s) {
        free(copy);
        goto out;
    }
    s->ips = copy;
    s->n = n;
    s->hash = h;
    jg_table_publish(&stacks, id + 1);
    smap_hash[j] = h;
    smap_id[j] = id;
    smap_used++;
    result = id;
out:
    pthread_mutex_unlock(&stack_lock);
    if (!result) jg_error(JAGER_E_NOMEM, "jager_stack_intern: out of memory");
    return result;
}

uint64_t jg_stack_count(void) { return jg_table_count(&stacks); }

int jg_stack_get(jager_stack_id id, const uint64_t **ips, uint32_t *n)
{
    if (!id || id > UINT32_MAX) return 0;
    const jg_stack *s = jg_table_get(&stacks, (uint32_t)id);
    if (!s) return 0;
    if (ips) *ips = s->ips;
    if (n) *n = s->n;
    return 1;
}

size_t jager_symbols_unresolved(uint64_t *ips, size_t cap)
{
    size_t k = 0;
    if (!ips) return 0;
    pthread_mutex_lock(&stack_lock);
    for (size_t i = 0; i < ipmap_cap && k < cap; i++) {
        if (ipmap[i].ip && ipmap[i].state == IP_NEW) {
            ipmap[i].state = IP_HANDED_OUT;
            ips[k++] = ipmap[i].ip;
        }
    }
    pthread_mutex_unlock(&stack_lock);
    return k;
}

/* Caller holds stack_lock. */
static jager_status symbol_add_locked(uint64_t ip, uint32_t depth, const char *func, const char *file, uint32_t line)
{
    uint32_t f = jg_intern(func && *func ? func : "??");
    uint32_t fl = jg_intern(file ? file : "");
    if (!f || !fl) return jg_error(JAGER_E_NOMEM, "jager_symbol_add: out of memory");
    uint32_t idx;
    jg_symbol *s = jg_table_append(&symbols, &idx);
    if (!s) return jg_error(JAGER_E_NOMEM, "jager_symbol_add: out of memory");
    s->ip = ip;
    s->inline_depth = depth;
    s->line = line;
    s->func = f;
    s->file = fl;
    jg_table_publish(&symbols, idx + 1);
    ip_slot *slot = ip_lookup(ip, 1);
    if (slot) slot->state = IP_RESOLVED;
    return JAGER_OK;
}

jager_status jager_symbol_add(uint64_t ip, uint32_t inline_depth, const char *func, const char *file, uint32_t line)
{
    if (!ip) return jg_error(JAGER_E_INVALID, "jager_symbol_add: address 0");
    pthread_mutex_lock(&stack_lock);
    jager_status st = symbol_add_locked(ip, inline_depth, func, file, line);
    pthread_mutex_unlock(&stack_lock);
    return st;
}

uint32_t jg_symbol_count(void) { return jg_table_count(&symbols); }
const jg_symbol *jg_symbol_at(uint32_t i) { return jg_table_get(&symbols, i); }

void jg_symbols_resolve_native(void)
{
    pthread_mutex_lock(&stack_lock);
    for (size_t i = 0; i < ipmap_cap; i++) {
        if (!ipmap[i].ip || ipmap[i].state == IP_RESOLVED) continue;
        Dl_info info;
        uint64_t ip = ipmap[i].ip;
        /* ip is a return address: look up ip - 1 so a call at a function's end names it. */
        if (dladdr((void *)(uintptr_t)(ip - 1), &info) && (info.dli_sname || info.dli_fname)) {
            symbol_add_locked(ip, 0, info.dli_sname ? info.dli_sname : "??", info.dli_fname ? info.dli_fname : "", 0);
        }
    }
    pthread_mutex_unlock(&stack_lock);
}
