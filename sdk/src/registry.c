/* Registries: interned strings, sites, counters, event types, threads and run metadata.
 * Writers take one mutex (none of this is on a hot path); readers of published entries
 * need no lock because the tables only grow and entries never move. Ids stay valid for the
 * life of the process, across jager_shutdown()/jager_init() cycles. */
#include <fnmatch.h>
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
    atomic_store_explicit(&s->enabled, (uint32_t)jg_filter_match(active_filter, name), memory_order_relaxed);
    jg_table_publish(&jg_sites, id + 1);
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
        atomic_store_explicit(&s->enabled, (uint32_t)jg_filter_match(active_filter, *name), memory_order_relaxed);
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

/* ---- event types ---- */
#define MAX_TYPES 65536
static _Atomic(jager_type_desc *) types[MAX_TYPES];
static _Atomic(uint32_t) type_limit;   /* largest id + 1 */
static uint16_t next_plugin_type = JAGER_EV_FIRST_PLUGIN;

static int same_fields(const jager_type_desc *t, const jager_field_desc *f, uint32_t n)
{
    if (t->nfields != n) return 0;
    for (uint32_t i = 0; i < n; i++)
        if (t->fields[i].kind != f[i].kind || strcmp(t->fields[i].name, f[i].name) != 0) return 0;
    return 1;
}

jager_status jg_type_register(const char *name, const jager_field_desc *fields, uint32_t nfields,
                              uint16_t builtin_id, uint16_t *type_out)
{
    if (!name || !*name || nfields > JAGER_MAX_FIELDS || (nfields && !fields))
        return jg_error(JAGER_E_INVALID, "register_type: bad name or field list");
    for (uint32_t i = 0; i < nfields; i++)
        if (!fields[i].name || !*fields[i].name || fields[i].kind < JAGER_FIELD_U64 || fields[i].kind > JAGER_FIELD_BOOL)
            return jg_error(JAGER_E_INVALID, "register_type '%s': field %u has no name or an unknown kind", name, i);
    jager_status st = JAGER_OK;
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
                {JAGER_EV_SPAN_ATTR, "span_attr"}, {JAGER_EV_SPAN_ERROR, "span_error"}};
    for (size_t i = 0; i < sizeof core / sizeof core[0]; i++) jg_type_register(core[i].name, NULL, 0, core[i].id, NULL);
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
static jg_vec grave; /* char *: replaced values stay alive until reset, readers hold pointers */
static _Atomic(uint64_t) meta_gen;

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
    meta_entry *m = meta.data;
    for (size_t i = 0; i < meta.n; i++) {
        if (strcmp(m[i].key, key) != 0) continue;
        if (jg_vec_reserve(&grave, sizeof(char *), grave.n)) {
            free(v);
            st = jg_error(JAGER_E_NOMEM, "metadata: out of memory");
            goto out;
        }
        ((char **)grave.data)[grave.n++] = m[i].value;
        m[i].value = v;
        goto bump;
    }
    char *k = strdup(key);
    if (!k || jg_vec_reserve(&meta, sizeof(meta_entry), meta.n)) {
        free(k);
        free(v);
        st = jg_error(JAGER_E_NOMEM, "metadata: out of memory");
        goto out;
    }
    m = meta.data;
    m[meta.n].key = k;
    m[meta.n++].value = v;
bump:
    atomic_fetch_add_explicit(&meta_gen, 1, memory_order_release);
out:
    pthread_mutex_unlock(&reg_lock);
    return st;
}

const char *jg_meta_get(const char *key)
{
    const char *v = NULL;
    pthread_mutex_lock(&reg_lock);
    const meta_entry *m = meta.data;
    for (size_t i = 0; i < meta.n && key; i++)
        if (!strcmp(m[i].key, key)) v = m[i].value;
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
    jg_vec_free(&grave);
    atomic_fetch_add_explicit(&meta_gen, 1, memory_order_release);
    pthread_mutex_unlock(&reg_lock);
}

jager_status jager_metadata_set(const char *key, const char *value)
{
    if (key && !strncmp(key, "jager.", 6)) return jg_error(JAGER_E_INVALID, "metadata: keys 'jager.*' are reserved");
    return jg_meta_set(key, value);
}
