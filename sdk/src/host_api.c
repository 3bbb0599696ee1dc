/*
 * host_api.c — the jager_host_api table handed to every plugin's init.
 *
 * One static table, filled at compile time, so a plugin's calls dispatch through
 * constant pointers. Each entry is a thin adapter over the core's internal modules that
 * adds the checks a plugin boundary needs (NULL outputs, the plugin's own name prefix).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "plugin_handle.h"

/* Event types of a plugin are named "<plugin>.<event>": the prefix keeps plugins from
 * colliding and lets tools group types by plugin. */
static jager_status host_register_type(jager_plugin_handle *self, const char *name, const jager_field_desc *fields,
                                       uint32_t nfields, uint16_t *type_out)
{
    const char *plugin = jg_plugin_handle_name(self);
    size_t n = strlen(plugin);
    if (!self || !name || !type_out)
        return jg_error(JAGER_E_INVALID, "plugin '%s': register_type: NULL argument", plugin);
    if (strncmp(name, plugin, n) != 0 || name[n] != '.' || name[n + 1] == 0)
        return jg_error(JAGER_E_INVALID, "plugin '%s': event type \"%.64s\" must be named \"%s.<event>\"", plugin, name,
                        plugin);
    return jg_type_register(name, fields, nfields, 0, type_out);
}

/* JAGER_<PLUGIN>_<KEY>, upper-cased, '-' as '_'. Keys use the characters plugin names
 * use, so every key maps to a valid environment variable name. */
static const char *host_config(jager_plugin_handle *self, const char *key)
{
    const char *plugin = jg_plugin_handle_name(self);
    char var[6 + JG_PLUGIN_NAME_MAX + 1 + 64 + 1];
    size_t o = 0;
    if (!self || !key || !*key || strlen(key) > 64) return NULL;
    memcpy(var, "JAGER_", 6);
    o = 6;
    for (const char *p = plugin; *p; p++) var[o++] = *p == '-' ? '_' : (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    var[o++] = '_';
    for (const char *p = key; *p; p++) {
        char c = *p;
        if (c >= 'a' && c <= 'z') c = (char)(c - 32);
        else if (c == '-') c = '_';
        else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return NULL;
        var[o++] = c;
    }
    var[o] = 0;
    return getenv(var);
}

static void host_log(jager_plugin_handle *self, jager_severity level, const char *message)
{
    if (level < JAGER_SEV_TRACE) level = JAGER_SEV_TRACE;
    if (level > 24) level = 24;
    jg_diag(self ? jg_plugin_handle_name(self) : "plugin", level, message ? message : "");
}

static jager_status host_register_sink(jager_plugin_handle *self, const jager_sink *sink)
{
    return jg_plugin_handle_add_sink(self, sink);
}

static const jager_type_desc *host_type_info(uint16_t type) { return jg_type_get(type); }

static jager_status host_site_info(jager_site site, const char **name, const char **file, uint32_t *line)
{
    const jg_site_info *s = jg_site_get(site);
    if (!s) return JAGER_E_NOTFOUND;
    if (name) *name = jg_string(s->name);
    if (file) *file = s->file ? jg_string(s->file) : NULL;
    if (line) *line = s->line;
    return JAGER_OK;
}

static jager_status host_thread_info(uint32_t thread, uint64_t *os_tid, const char **name)
{
    const jg_thread_info *t = jg_thread_get(thread);
    if (!t) return JAGER_E_NOTFOUND;
    if (os_tid) *os_tid = t->os_tid;
    if (name) *name = t->name;
    return JAGER_OK;
}

static const char *host_metadata_get(const char *key) { return key ? jg_meta_get(key) : NULL; }

static jager_status host_counter_info(jager_counter counter, const char **name, const char **unit, uint32_t *kind)
{
    const jg_counter_info *c = jg_counter_get(counter);
    if (!c) return JAGER_E_NOTFOUND;
    if (name) *name = jg_string(c->name);
    if (unit) *unit = c->unit ? jg_string(c->unit) : NULL;
    if (kind) *kind = c->kind;
    return JAGER_OK;
}

static jager_status host_stack_get(jager_stack_id id, const uint64_t **ips, uint32_t *n)
{
    return jg_stack_get(id, ips, n) ? JAGER_OK : JAGER_E_NOTFOUND;
}

/* Read from the calling thread's own state, so no lock is needed: only this thread
 * writes its span stack. Spans nested deeper than JG_MAX_DEPTH are not on the stack. */
static uint32_t host_open_sites(jager_site *out, uint32_t cap)
{
    jg_tls *t = jg_tls_peek();
    /* A state not re-armed since the last jager_init() holds a finished run's stack. */
    if (!t || !out || t->generation != atomic_load_explicit(&jg_generation, memory_order_relaxed)) return 0;
    uint32_t depth = t->depth < JG_MAX_DEPTH ? t->depth : JG_MAX_DEPTH;
    uint32_t n = depth < cap ? depth : cap;
    for (uint32_t i = 0; i < n; i++) out[i] = t->stack_site[depth - 1 - i];
    return n;
}

void jg_span_end_ns(jager_span span, uint64_t end_ns); /* span.c */

static const jager_host_api host_api = {
    .struct_size = sizeof(jager_host_api),
    .abi_major = JAGER_PLUGIN_ABI_MAJOR,
    .abi_minor = JAGER_PLUGIN_ABI_MINOR,
    .register_type = host_register_type,
    .emit = jg_emit_plugin,
    .now_ns = jager_now_ns,
    .intern = jg_intern,
    .string = jg_string,
    .config = host_config,
    .log = host_log,
    .register_sink = host_register_sink,
    .stack_intern = jager_stack_intern,
    .type_info = host_type_info,
    .site_info = host_site_info,
    .thread_info = host_thread_info,
    .metadata_set = jager_metadata_set,
    .metadata_get = host_metadata_get,
    .counter_info = host_counter_info,
    .stack_get = host_stack_get,
    .open_sites = host_open_sites,
    .site_register = jager_site_register,
    .span_begin = jager_span_begin,
    .span_end = jager_span_end,
    .span_set_attrs = jager_span_set_attrs,
    .span_end_ns = jg_span_end_ns,
};

const jager_host_api *jg_host_api(void) { return &host_api; }
