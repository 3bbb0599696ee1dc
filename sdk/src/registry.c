/* Registries: interned strings, sites, counters, event types, threads and run metadata.
 * Writers take one mutex (none of this is on a hot path); readers of published entries
 * need no lock because the tables only grow and entries never move. Ids stay valid for the
 * life of the process, across jager_shutdown()/jager_init() cycles. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "containers.h"
#include "internal.h"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- strings ---- */
static jg_table strings = {.elem_size = sizeof(char *)};
static jg_idmap string_map;

typedef struct str_key {
    const char *s;
    size_t n;
} str_key;

static int string_eq(uint32_t id, const void *key, void *ctx)
{
    const str_key *k = key;
    char **e = jg_table_get(&strings, id);
    return e && strlen(*e) == k->n && memcmp(*e, k->s, k->n) == 0;
}

/* Caller holds reg_lock. */
static uint32_t intern_locked(const char *s, size_t n)
{
    if (jg_table_count(&strings) == 0) { /* id 0 is "no string" */
        uint32_t i0;
        char **e = jg_table_append(&strings, &i0);
        if (!e) return 0;
        *e = NULL;
        jg_table_publish(&strings, 1);
    }
    if (jg_idmap_reserve(&string_map)) return 0;
    uint64_t h = jg_hash_bytes(s, n, JG_HASH_SEED);
    str_key k = {s, n};
    size_t slot = jg_idmap_find(&string_map, h, string_eq, &k, NULL);
    if (jg_idmap_id(&string_map, slot)) return jg_idmap_id(&string_map, slot);
    char *copy = malloc(n + 1);
    if (!copy) return 0;
    memcpy(copy, s, n);
    copy[n] = 0;
    uint32_t id;
    char **e = jg_table_append(&strings, &id);
    if (!e) {
        free(copy);
        return 0;
    }
    *e = copy;
    jg_table_publish(&strings, id + 1);
    jg_idmap_put(&string_map, slot, h, id);
    return id;
}

static uint32_t jg_intern_n(const char *s, size_t n)
{
    if (!s) return 0;
    pthread_mutex_lock(&reg_lock);
    uint32_t id = intern_locked(s, n);
    pthread_mutex_unlock(&reg_lock);
    return id;
}

uint32_t jg_intern(const char *s) { return s ? jg_intern_n(s, strlen(s)) : 0; }

uint32_t jager_string_intern(const char *s) { return jg_intern(s); }

const char *jg_string(uint32_t id)
{
    char **e = id ? jg_table_get(&strings, id) : NULL;
    return e ? *e : NULL;
}

uint32_t jg_string_count(void) { return jg_table_count(&strings); }

/* ---- sites ---- */
jg_table jg_sites = {.elem_size = sizeof(jg_site_info)};
static jg_idmap site_map;
static char *active_filter; /* owned copy, under reg_lock */

typedef struct site_key {
    uint32_t name, file, line;
} site_key;

static int site_eq(uint32_t id, const void *key, void *ctx)
{
    const site_key *k = key;
    const jg_site_info *s = jg_table_get(&jg_sites, id);
    return s && s->name == k->name && s->file == k->file && s->line == k->line;
}

int jg_filter_match(const char *filter, const char *name)
{
    if (!filter || !*filter) return 1;
    int have_include = 0, included = 0;
    const char *p = filter;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char pat[256];
        if (len >= sizeof pat) len = sizeof pat - 1;
        memcpy(pat, p, len);
        pat[len] = 0;
        char *q = pat;
        while (*q == ' ') q++;
        int exclude = (*q == '-');
        if (exclude) q++;
        if (*q) {
            int m = fnmatch(q, name, 0) == 0;
            if (exclude && m) return 0;
            if (!exclude) {
                have_include = 1;
                included |= m;
            }
        }
        if (!end) break;
        p = end + 1;
    }
    return have_include ? included : 1;
}

/* Span hook slots by site name (string id, 0: free), under reg_lock: a site registered
 * later is hooked by name without asking span_hooks.c (whose lock is taken before this
 * one). */
#define HOOK_SLOTS 64
static uint32_t hook_name[HOOK_SLOTS];

_Atomic(uint8_t) jg_site_state[JG_SITE_MAX];

/* Caller holds reg_lock, and site \p id is published. What jager_span_begin reads, from the
 * filter and the hooks. */
static void site_restate(jg_site_info *s, jager_site id)
{
    uint64_t hooks = atomic_load_explicit(&s->hooks, memory_order_relaxed);
    uint32_t state = !s->filter_on ? JG_SITE_OFF : hooks ? JG_SITE_HOOKED : JG_SITE_ON;
    atomic_store_explicit(&s->enabled, state, memory_order_release);
    atomic_store_explicit(&jg_site_state[id], (uint8_t)state, memory_order_release);
}

uint32_t jg_sites_hook(uint32_t slot, const char *name)
{
    if (slot >= HOOK_SLOTS) return 0;
    pthread_mutex_lock(&reg_lock);
    uint32_t id = name ? intern_locked(name, strlen(name)) : 0;
    hook_name[slot] = id;
    uint64_t bit = 1ull << slot;
    uint32_t n = jg_table_count(&jg_sites);
    for (uint32_t i = 1; i < n; i++) {
        jg_site_info *s = jg_table_get(&jg_sites, i);
        uint64_t h = atomic_load_explicit(&s->hooks, memory_order_relaxed);
        uint64_t want = id && s->name == id ? h | bit : h & ~bit;
        if (want == h) continue;
        atomic_store_explicit(&s->hooks, want, memory_order_relaxed);
        site_restate(s, i);
    }
    pthread_mutex_unlock(&reg_lock);
    return id;
}

jager_site jager_site_register(const char *name, const char *file, uint32_t line)
{
    if (!name || !*name) {
        jg_error(JAGER_E_INVALID, "jager_site_register: empty name");
        return 0;
    }
    pthread_mutex_lock(&reg_lock);
    jager_site id = 0;
    site_key k = {intern_locked(name, strlen(name)), file ? intern_locked(file, strlen(file)) : 0, line};
    if (!k.name || (file && !k.file)) goto out;
    if (jg_table_count(&jg_sites) == 0) { /* site 0 is "no site" */
        uint32_t i0;
        if (!jg_table_append(&jg_sites, &i0)) goto out;
        jg_table_publish(&jg_sites, 1);
    }
    if (jg_idmap_reserve(&site_map)) goto out;
    uint64_t h = jg_hash_bytes(&k, sizeof k, JG_HASH_SEED);
    size_t slot = jg_idmap_find(&site_map, h, site_eq, &k, NULL);
    if (jg_idmap_id(&site_map, slot)) {
        id = jg_idmap_id(&site_map, slot);
        goto out;
    }
    jg_site_info *s = jg_table_append(&jg_sites, &id);
    if (!s) goto out;
    s->name = k.name;
    s->file = k.file;
    s->line = line;
    s->filter_on = (uint32_t)jg_filter_match(active_filter, name);
    uint64_t hooks = 0;
    for (uint32_t i = 0; i < HOOK_SLOTS; i++)
        if (hook_name[i] && hook_name[i] == k.name) hooks |= 1ull << i;
    atomic_store_explicit(&s->hooks, hooks, memory_order_relaxed);
    jg_table_publish(&jg_sites, id + 1);
    site_restate(s, id); /* after the publish: a begin that sees its state finds the site */
    jg_idmap_put(&site_map, slot, h, id);
out:
    pthread_mutex_unlock(&reg_lock);
    if (!id) jg_error(JAGER_E_NOMEM, "jager_site_register: out of memory");
    return id;
}


uint32_t jg_site_count(void) { return jg_table_count(&jg_sites); }

void jg_sites_apply_filter(const char *filter)
{
    pthread_mutex_lock(&reg_lock);
    free(active_filter);
    active_filter = (filter && *filter) ? strdup(filter) : NULL;
    uint32_t n = jg_table_count(&jg_sites);
    for (uint32_t i = 1; i < n; i++) {
        jg_site_info *s = jg_table_get(&jg_sites, i);
        char **name = jg_table_get(&strings, s->name);
        s->filter_on = (uint32_t)jg_filter_match(active_filter, *name);
        site_restate(s, i);
    }
    pthread_mutex_unlock(&reg_lock);
}

/* ---- counters ---- */
static jg_table counters = {.elem_size = sizeof(jg_counter_info)};

jager_counter jager_counter_register(const char *name, const char *unit, uint32_t kind)
{
    if (!name || !*name || kind > JAGER_COUNTER_GAUGE) {
        jg_error(JAGER_E_INVALID, "jager_counter_register: bad name or kind");
        return 0;
    }
    pthread_mutex_lock(&reg_lock);
    jager_counter id = 0;
    uint32_t nid = intern_locked(name, strlen(name));
    uint32_t uid = unit ? intern_locked(unit, strlen(unit)) : 0;
    if (!nid) goto out;
    if (jg_table_count(&counters) == 0) {
        uint32_t i0;
        if (!jg_table_append(&counters, &i0)) goto out;
        jg_table_publish(&counters, 1);
    }
    uint32_t n = jg_table_count(&counters);
    for (uint32_t i = 1; i < n; i++) {
        jg_counter_info *c = jg_table_get(&counters, i);
        if (c->name == nid) {
            id = i;
            goto out;
        }
    }
    jg_counter_info *c = jg_table_append(&counters, &id);
    if (!c) goto out;
    c->name = nid;
    c->unit = uid;
    c->kind = kind;
    jg_table_publish(&counters, id + 1);
out:
    pthread_mutex_unlock(&reg_lock);
    return id;
}

const jg_counter_info *jg_counter_get(jager_counter id) { return id ? jg_table_get(&counters, id) : NULL; }
uint32_t jg_counter_count(void) { return jg_table_count(&counters); }

void jg_counters_reset_totals(void)
{
    pthread_mutex_lock(&reg_lock);
    uint32_t n = jg_table_count(&counters);
    for (uint32_t i = 1; i < n; i++) atomic_store_explicit(&((jg_counter_info *)jg_table_get(&counters, i))->total_bits, 0, memory_order_relaxed);
    pthread_mutex_unlock(&reg_lock);
}

/* ---- event types ---- */
#define MAX_TYPES 65536
static _Atomic(jager_type_desc *) types[MAX_TYPES];
static _Atomic(uint32_t) type_limit;   /* largest id + 1 */
static uint16_t next_plugin_type = JAGER_EV_FIRST_PLUGIN;

static int same_fields(const jager_type_desc *t, const jager_field_desc *f, uint32_t n)
{
    if (t->nfields != n) return 0;
    for (uint32_t i = 0; i < n; i++)
        if (t->fields[i].kind != f[i].kind || t->fields[i].flags != f[i].flags || strcmp(t->fields[i].name, f[i].name) != 0)
            return 0;
    return 1;
}

int jg_name_is_snake(const char *s, size_t max)
{
    if (!s || !(*s >= 'a' && *s <= 'z')) return 0;
    size_t n = 0;
    for (; s[n]; n++) {
        char c = s[n];
        if (n >= max || !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return 0;
    }
    return 1;
}

const char *jg_quote(char *buf, size_t size, const char *s)
{
    size_t o = 0;
    for (size_t i = 0; s && s[i] && o + 8 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') buf[o++] = (char)c;
        else o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
        if (s[i + 1] && o + 8 >= size) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
    }
    buf[o < size ? o : size - 1] = 0;
    return buf;
}

/* A plugin type: "<plugin>.<event>", the plugin part as plugin names go ([a-z0-9_-]), the
 * event part snake_case; names become file names (CSV/Parquet tables), JSON keys and
 * report labels, so nothing else passes. Fields: snake_case, unique, known flags. One
 * message names the first thing wrong. */
#define JG_TYPE_NAME_MAX 127
static jager_status check_plugin_type(const char *name, const jager_field_desc *fields, uint32_t nfields)
{
    char q[160];
    const char *dot = strchr(name, '.');
    int ok = dot && dot > name && strlen(name) <= JG_TYPE_NAME_MAX && jg_name_is_snake(dot + 1, JG_TYPE_NAME_MAX);
    for (const char *p = name; ok && p < dot; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-';
    if (!ok)
        return jg_error(JAGER_E_INVALID,
                        "register_type \"%s\": a type is named <plugin>.<event>, the event part snake_case "
                        "([a-z][a-z0-9_]*), at most %d bytes",
                        jg_quote(q, sizeof q, name), JG_TYPE_NAME_MAX);
    int extent = -1;
    for (uint32_t i = 0; i < nfields; i++) {
        const jager_field_desc *f = &fields[i];
        if (!jg_name_is_snake(f->name, 63))
            return jg_error(JAGER_E_INVALID, "register_type '%s': field %u \"%s\" is not snake_case ([a-z][a-z0-9_]*, at most 63 bytes)",
                            name, i, f->name ? jg_quote(q, sizeof q, f->name) : "(null)");
        for (uint32_t k = 0; k < i; k++)
            if (strcmp(fields[k].name, f->name) == 0)
                return jg_error(JAGER_E_INVALID, "register_type '%s': fields %u and %u are both named \"%s\"", name, k, i,
                                f->name);
        if (f->flags & ~(JAGER_FIELD_FLAG_EXTENT | JAGER_FIELD_FLAG_COUNTER | JAGER_FIELD_FLAG_GAUGE))
            return jg_error(JAGER_E_INVALID, "register_type '%s': field \"%s\" has unknown flags 0x%x", name, f->name, f->flags);
        if ((f->flags & JAGER_FIELD_FLAG_EXTENT) && (f->kind != JAGER_FIELD_DURATION_NS || extent >= 0))
            return jg_error(JAGER_E_INVALID, "register_type '%s': field \"%s\": JAGER_FIELD_FLAG_EXTENT needs a DURATION_NS field, one per type",
                            name, f->name);
        if (f->flags & JAGER_FIELD_FLAG_EXTENT) extent = (int)i;
        int numeric = f->kind == JAGER_FIELD_U64 || f->kind == JAGER_FIELD_I64 || f->kind == JAGER_FIELD_F64 ||
                      f->kind == JAGER_FIELD_BYTES || f->kind == JAGER_FIELD_DURATION_NS;
        if ((f->flags & (JAGER_FIELD_FLAG_COUNTER | JAGER_FIELD_FLAG_GAUGE)) &&
            (!numeric || (f->flags & JAGER_FIELD_FLAG_COUNTER && f->flags & JAGER_FIELD_FLAG_GAUGE)))
            return jg_error(JAGER_E_INVALID, "register_type '%s': field \"%s\": COUNTER or GAUGE (not both) needs a numeric field",
                            name, f->name);
    }
    return JAGER_OK;
}

jager_status jg_type_register(const char *name, const jager_field_desc *fields, uint32_t nfields,
                              uint16_t builtin_id, uint16_t *type_out)
{
    if (!name || !*name || nfields > JAGER_MAX_FIELDS || (nfields && !fields))
        return jg_error(JAGER_E_INVALID, "register_type: bad name or field list");
    for (uint32_t i = 0; i < nfields; i++)
        if (!fields[i].name || !*fields[i].name || fields[i].kind < JAGER_FIELD_U64 || fields[i].kind > JAGER_FIELD_BOOL)
            return jg_error(JAGER_E_INVALID, "register_type '%s': field %u has no name or an unknown kind", name, i);
    jager_status st = builtin_id ? JAGER_OK : check_plugin_type(name, fields, nfields);
    if (st != JAGER_OK) return st;
    pthread_mutex_lock(&reg_lock);
    uint32_t lim = atomic_load_explicit(&type_limit, memory_order_relaxed);
    for (uint32_t i = 0; i < lim; i++) {
        jager_type_desc *t = atomic_load_explicit(&types[i], memory_order_relaxed);
        if (!t || strcmp(t->name, name) != 0) continue;
        if (builtin_id == 0 && !same_fields(t, fields, nfields)) {
            st = jg_error(JAGER_E_INVALID, "register_type '%s': already registered with other fields", name);
        } else if (type_out) {
            *type_out = t->id;
        }
        goto out;
    }
    uint16_t id = builtin_id;
    if (!id || builtin_id >= JAGER_EV_FIRST_PLUGIN) {
        if (next_plugin_type == 0) { /* wrapped past 65535 */
            st = jg_error(JAGER_E_FULL, "register_type '%s': no type ids left", name);
            goto out;
        }
        id = next_plugin_type++;
    }
    jager_type_desc *t = calloc(1, sizeof *t);
    jager_field_desc *f = nfields ? calloc(nfields, sizeof *f) : NULL;
    char *nm = strdup(name);
    if (!t || (nfields && !f) || !nm) {
        free(t);
        free(f);
        free(nm);
        st = jg_error(JAGER_E_NOMEM, "register_type: out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < nfields; i++) {
        f[i].name = strdup(fields[i].name);
        f[i].kind = fields[i].kind;
        f[i].flags = fields[i].flags;
        if (!f[i].name) {
            for (uint32_t k = 0; k < i; k++) free((char *)f[k].name);
            free(t);
            free(f);
            free(nm);
            st = jg_error(JAGER_E_NOMEM, "register_type: out of memory");
            goto out;
        }
    }
    t->struct_size = sizeof *t;
    t->id = id;
    t->builtin = builtin_id && builtin_id < JAGER_EV_FIRST_PLUGIN;
    t->name = nm;
    t->nfields = nfields;
    t->fields = f;
    atomic_store_explicit(&types[id], t, memory_order_release);
    if ((uint32_t)id + 1 > lim) atomic_store_explicit(&type_limit, (uint32_t)id + 1, memory_order_release);
    if (type_out) *type_out = id;
out:
    pthread_mutex_unlock(&reg_lock);
    return st;
}

const jager_type_desc *jg_type_get(uint16_t type) { return atomic_load_explicit(&types[type], memory_order_acquire); }
uint32_t jg_type_count(void) { return atomic_load_explicit(&type_limit, memory_order_acquire); }

void jg_types_register_core(void)
{
    static const struct {
        uint16_t id;
        const char *name;
    } core[] = {{JAGER_EV_SPAN, "span"},   {JAGER_EV_LOG, "log"},   {JAGER_EV_COUNTER, "counter"},
                {JAGER_EV_MARK, "mark"},   {JAGER_EV_DROP, "drop"}, {JAGER_EV_DIAG, "diag"},
                {JAGER_EV_SPAN_ATTR, "span_attr"}, {JAGER_EV_SPAN_ERROR, "span_error"},
                {JAGER_EV_CONTEXT, "context"}, {JAGER_EV_TASK, "task"},
                {JAGER_EV_SPAN_X, "span_x"}};
    for (size_t i = 0; i < sizeof core / sizeof core[0]; i++) jg_type_register(core[i].name, NULL, 0, core[i].id, NULL);
    jg_plugin_events_reset(); /* a new run: its refused and late plugin events count from 0 */
}

/* ---- threads ---- */
static jg_table threads = {.elem_size = sizeof(jg_thread_info)};

uint32_t jg_thread_register(uint64_t os_tid, const char *name)
{
    pthread_mutex_lock(&reg_lock);
    uint32_t id = 0;
    if (jg_table_count(&threads) == 0) {
        uint32_t i0;
        if (!jg_table_append(&threads, &i0)) goto out;
        jg_table_publish(&threads, 1);
    }
    jg_thread_info *t = jg_table_append(&threads, &id);
    if (!t) {
        id = 0;
        goto out;
    }
    t->os_tid = os_tid;
    if (name) {
        strncpy(t->name, name, sizeof t->name - 1);
        t->name[sizeof t->name - 1] = 0;
    }
    jg_table_publish(&threads, id + 1);
out:
    pthread_mutex_unlock(&reg_lock);
    return id;
}

const jg_thread_info *jg_thread_get(uint32_t index) { return index ? jg_table_get(&threads, index) : NULL; }
uint32_t jg_thread_count(void) { return jg_table_count(&threads); }

/* ---- run metadata ---- */
typedef struct meta_entry {
    char *key, *value;
} meta_entry;
static jg_vec meta;  /* meta_entry, insertion order */
static jg_idmap meta_map; /* key hash -> index + 1 in meta: a set or get is O(1), not a scan */
static jg_vec meta_log;   /* uint32_t: the index of each set, in order (a repeat of the last one once) */
static jg_vec grave; /* char *: replaced values stay alive until reset, readers hold pointers */
static _Atomic(uint64_t) meta_gen;
static int meta_log_lost; /* an append failed (out of memory): the log is incomplete */

static int meta_eq(uint32_t id, const void *key, void *ctx)
{
    (void)ctx;
    return !strcmp(((const meta_entry *)meta.data)[id - 1].key, key);
}

/* Caller holds reg_lock. The slot of \p key (jg_idmap_id() 0 when absent). */
static size_t meta_find(const char *key, uint64_t *h)
{
    *h = jg_hash_bytes(key, strlen(key), JG_HASH_SEED);
    return jg_idmap_find(&meta_map, *h, meta_eq, key, NULL);
}

jager_status jg_meta_set(const char *key, const char *value)
{
    if (!key || !*key || !value) return jg_error(JAGER_E_INVALID, "metadata: empty key or NULL value");
    jager_status st = JAGER_OK;
    pthread_mutex_lock(&reg_lock);
    char *v = strdup(value);
    if (!v) {
        st = jg_error(JAGER_E_NOMEM, "metadata: out of memory");
        goto out;
    }
    if (jg_idmap_reserve(&meta_map)) {
        free(v);
        st = jg_error(JAGER_E_NOMEM, "metadata: out of memory");
        goto out;
    }
    uint64_t h;
    size_t slot = meta_find(key, &h);
    uint32_t id = jg_idmap_id(&meta_map, slot);
    meta_entry *m = meta.data;
    if (id) {
        if (jg_vec_reserve(&grave, sizeof(char *), grave.n)) {
            free(v);
            st = jg_error(JAGER_E_NOMEM, "metadata: out of memory");
            goto out;
        }
        ((char **)grave.data)[grave.n++] = m[id - 1].value;
        m[id - 1].value = v;
        goto bump;
    }
    char *k = strdup(key);
    if (!k || meta.n >= UINT32_MAX - 1 || jg_vec_reserve(&meta, sizeof(meta_entry), meta.n)) {
        free(k);
        free(v);
        st = jg_error(JAGER_E_NOMEM, "metadata: out of memory");
        goto out;
    }
    m = meta.data;
    m[meta.n].key = k;
    m[meta.n++].value = v;
    jg_idmap_put(&meta_map, slot, h, (uint32_t)meta.n);
bump:
    {
        uint32_t idx = id ? id - 1 : (uint32_t)meta.n - 1;
        const uint32_t *lg = meta_log.data;
        if (!(meta_log.n && lg[meta_log.n - 1] == idx)) {
            if (jg_vec_reserve(&meta_log, sizeof(uint32_t), meta_log.n)) {
                meta_log_lost = 1; /* the file sinks then write every entry again */
            } else {
                ((uint32_t *)meta_log.data)[meta_log.n++] = idx;
            }
        }
    }
    atomic_fetch_add_explicit(&meta_gen, 1, memory_order_release);
out:
    pthread_mutex_unlock(&reg_lock);
    return st;
}

const char *jg_meta_get(const char *key)
{
    const char *v = NULL;
    if (!key) return NULL;
    pthread_mutex_lock(&reg_lock);
    uint64_t h;
    uint32_t id = jg_idmap_id(&meta_map, meta_find(key, &h));
    if (id) v = ((const meta_entry *)meta.data)[id - 1].value;
    pthread_mutex_unlock(&reg_lock);
    return v;
}

uint32_t jg_meta_count(void)
{
    pthread_mutex_lock(&reg_lock);
    uint32_t n = (uint32_t)meta.n;
    pthread_mutex_unlock(&reg_lock);
    return n;
}

int jg_meta_at(uint32_t i, const char **key, const char **value)
{
    int ok = 0;
    pthread_mutex_lock(&reg_lock);
    if (i < meta.n) {
        const meta_entry *m = meta.data;
        *key = m[i].key;
        *value = m[i].value;
        ok = 1;
    }
    pthread_mutex_unlock(&reg_lock);
    return ok;
}

int jg_meta_log_at(uint32_t pos, const char **key, const char **value)
{
    int ok = 0;
    pthread_mutex_lock(&reg_lock);
    if (pos < meta_log.n) {
        const meta_entry *m = meta.data;
        uint32_t i = ((const uint32_t *)meta_log.data)[pos];
        *key = m[i].key;
        *value = m[i].value;
        ok = 1;
    }
    pthread_mutex_unlock(&reg_lock);
    return ok;
}

uint32_t jg_meta_log_count(int *complete)
{
    pthread_mutex_lock(&reg_lock);
    uint32_t n = (uint32_t)meta_log.n;
    if (complete) *complete = !meta_log_lost;
    pthread_mutex_unlock(&reg_lock);
    return n;
}

uint64_t jg_meta_generation(void) { return atomic_load_explicit(&meta_gen, memory_order_acquire); }

void jg_registry_reset_meta(void)
{
    pthread_mutex_lock(&reg_lock);
    meta_entry *m = meta.data;
    for (size_t i = 0; i < meta.n; i++) {
        free(m[i].key);
        free(m[i].value);
    }
    for (size_t i = 0; i < grave.n; i++) free(((char **)grave.data)[i]);
    jg_vec_free(&meta);
    jg_idmap_free(&meta_map);
    jg_vec_free(&meta_log);
    meta_log_lost = 0;
    jg_vec_free(&grave);
    atomic_fetch_add_explicit(&meta_gen, 1, memory_order_release);
    pthread_mutex_unlock(&reg_lock);
}

jager_status jager_metadata_set(const char *key, const char *value)
{
    if (key && !strncmp(key, "jager.", 6)) return jg_error(JAGER_E_INVALID, "metadata: keys 'jager.*' are reserved");
    return jg_meta_set(key, value);
}

/* ---- fork: the registry is whole in the child when the fork held its lock ---- */
int jg_registry_fork_trylock(void) { return pthread_mutex_trylock(&reg_lock) == 0; }
void jg_registry_fork_unlock(void) { pthread_mutex_unlock(&reg_lock); }
void jg_registry_fork_child(void)
{
    static const pthread_mutex_t m0 = PTHREAD_MUTEX_INITIALIZER;
    reg_lock = m0;
}
