/* The stack table (deduplicated return-address stacks) and the symbol table (address →
 * source frames). Native frames are named with dladdr at the end of a run; a language
 * binding names its JIT frames by pulling unresolved addresses and adding frames. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "containers.h"
#include "internal.h"

static pthread_mutex_t stack_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct jg_stack {
    uint64_t *ips;
    uint32_t n;
    uint64_t hash;
} jg_stack;

static jg_table stacks = {.elem_size = sizeof(jg_stack)};
static jg_table symbols = {.elem_size = sizeof(jg_symbol)};

/* Maps into the two tables: stack hash → stack id, and address → entry + 1 of ips (every
 * address of an interned stack, with whether it is symbolized yet). */
static jg_idmap stack_map;

enum { IP_NEW = 0, IP_HANDED_OUT = 1, IP_RESOLVED = 2 };
typedef struct ip_entry {
    uint64_t ip; /* address 0 is never a return address, so never stored */
    uint32_t state;
} ip_entry;
static jg_vec ips_seen; /* ip_entry, insertion order */
static jg_idmap ip_map;

static int ip_eq(uint32_t id, const void *key, void *ctx)
{
    return ((const ip_entry *)ips_seen.data)[id - 1].ip == *(const uint64_t *)key;
}

/* The entry of ip, inserting it as IP_NEW when \p insert; NULL when absent or out of
 * memory. Caller holds stack_lock. Only an insertion grows ips_seen, so callers iterating
 * it by index while re-marking present addresses never see it move. */
static ip_entry *ip_lookup(uint64_t ip, int insert)
{
    uint64_t h = jg_hash_mix(0, ip);
    uint32_t id = jg_idmap_id(&ip_map, jg_idmap_find(&ip_map, h, ip_eq, &ip, NULL));
    if (id) return (ip_entry *)ips_seen.data + (id - 1);
    if (!insert) return NULL;
    if (jg_idmap_reserve(&ip_map) || jg_vec_reserve(&ips_seen, sizeof(ip_entry), ips_seen.n)) return NULL;
    size_t j = jg_idmap_find(&ip_map, h, ip_eq, &ip, NULL);
    ip_entry *e = (ip_entry *)ips_seen.data + ips_seen.n;
    e->ip = ip;
    e->state = IP_NEW;
    jg_idmap_put(&ip_map, j, h, (uint32_t)++ips_seen.n);
    return e;
}

typedef struct stack_key {
    const uint64_t *ips;
    uint32_t n;
} stack_key;

static int stack_eq(uint32_t id, const void *key, void *ctx)
{
    const stack_key *k = key;
    const jg_stack *s = jg_table_get(&stacks, id);
    return s && s->n == k->n && memcmp(s->ips, k->ips, k->n * sizeof *k->ips) == 0;
}

jager_stack_id jager_stack_intern(const uint64_t *ips, uint32_t n)
{
    if (!ips || n == 0) return 0;
    uint64_t h = 1469598103934665603ull;
    for (uint32_t i = 0; i < n; i++) h = jg_hash_mix(h, ips[i]);
    h = jg_hash_mix(h, n);
    jager_stack_id result = 0;
    pthread_mutex_lock(&stack_lock);
    if (jg_table_count(&stacks) == 0) { /* id 0 is "no stack" */
        uint32_t i0;
        if (!jg_table_append(&stacks, &i0)) goto out;
        jg_table_publish(&stacks, 1);
    }
    if (jg_idmap_reserve(&stack_map)) goto out;
    stack_key k = {ips, n};
    size_t j = jg_idmap_find(&stack_map, h, stack_eq, &k, NULL);
    if ((result = jg_idmap_id(&stack_map, j))) goto out;
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
    jg_idmap_put(&stack_map, j, h, id);
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
    ip_entry *e = ips_seen.data;
    for (size_t i = 0; i < ips_seen.n && k < cap; i++) {
        if (e[i].state == IP_NEW) {
            e[i].state = IP_HANDED_OUT;
            ips[k++] = e[i].ip;
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
    ip_entry *slot = ip_lookup(ip, 1);
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
    for (size_t i = 0; i < ips_seen.n; i++) {
        const ip_entry *e = (const ip_entry *)ips_seen.data + i;
        if (e->state == IP_RESOLVED) continue;
        Dl_info info;
        uint64_t ip = e->ip;
        /* ip is a return address: look up ip - 1 so a call at a function's end names it. */
        if (dladdr((void *)(uintptr_t)(ip - 1), &info) && (info.dli_sname || info.dli_fname)) {
            symbol_add_locked(ip, 0, info.dli_sname ? info.dli_sname : "??", info.dli_fname ? info.dli_fname : "", 0);
        }
    }
    pthread_mutex_unlock(&stack_lock);
}

/* ---- fork ---- */
int jg_stacks_fork_trylock(void) { return pthread_mutex_trylock(&stack_lock) == 0; }
void jg_stacks_fork_unlock(void) { pthread_mutex_unlock(&stack_lock); }
void jg_stacks_fork_child(void)
{
    static const pthread_mutex_t m0 = PTHREAD_MUTEX_INITIALIZER;
    stack_lock = m0;
}
