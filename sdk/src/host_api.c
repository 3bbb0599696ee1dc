/*
 * host_api.c — the jager_host_api table handed to every plugin's init.
 *
 * One static table, filled at compile time, so a plugin's calls dispatch through
 * constant pointers. Each entry is a thin adapter over the core's internal modules that
 * adds the checks a plugin boundary needs (NULL outputs, the plugin's own name prefix).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "plugin_handle.h"

/* Event types of a plugin are named "<plugin>.<event>": the prefix keeps plugins from
 * colliding and lets tools group types by plugin. The rest of the name is checked by
 * jg_type_register (snake_case, fields unique). */
static jager_status host_register_type(jager_plugin_handle *self, const char *name, const jager_field_desc *fields,
                                       uint32_t nfields, uint16_t *type_out)
{
    char plugin[JG_PLUGIN_NAME_MAX + 1];
    if (!jg_plugin_handle_name(self, plugin))
        return jg_error(JAGER_E_STATE, "register_type: the plugin handle is not (or no longer) loaded");
    size_t n = strlen(plugin);
    if (!name || !type_out)
        return jg_error(JAGER_E_INVALID, "plugin '%s': register_type: NULL argument", plugin);
    jager_status st;
    if (strncmp(name, plugin, n) != 0 || name[n] != '.' || name[n + 1] == 0) {
        char q[96];
        st = jg_error(JAGER_E_INVALID, "plugin '%s': event type \"%s\" must be named \"%s.<event>\"", plugin,
                      jg_quote(q, sizeof q, name), plugin);
    } else {
        st = jg_type_register(name, fields, nfields, 0, type_out);
    }
    /* A refused type is said, not only returned: a plugin that ignores the status would
     * otherwise lose every event of it without a word. */
    if (st != JAGER_OK) {
        char why[256];
        snprintf(why, sizeof why, "%s", jager_last_error());
        jg_diag(plugin, JAGER_SEV_WARN, why);
        jg_error(st, "%s", why);
    }
    return st;
}

/* JAGER_<PLUGIN>_<KEY>, upper-cased, '-' as '_'. Keys use the characters plugin names
 * use, so every key maps to a valid environment variable name. */
static const char *host_config(jager_plugin_handle *self, const char *key)
{
    char plugin[JG_PLUGIN_NAME_MAX + 1];
    char var[6 + JG_PLUGIN_NAME_MAX + 1 + 64 + 1];
    size_t o = 0;
    if (!jg_plugin_handle_name(self, plugin) || !key || !*key || strlen(key) > 64) return NULL;
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

/* A stale handle's message still reaches stderr (it may explain a bug), never a recording
 * that has ended. */
static void host_log(jager_plugin_handle *self, jager_severity level, const char *message)
{
    char plugin[JG_PLUGIN_NAME_MAX + 1];
    if (level < JAGER_SEV_TRACE) level = JAGER_SEV_TRACE;
    if (level > 24) level = 24;
    if (!jg_plugin_handle_name(self, plugin)) {
        static _Atomic(int) said; /* once per process: a stray thread may log in a loop */
        if (!JG_CFG(quiet) && !atomic_exchange_explicit(&said, 1, memory_order_relaxed))
            fprintf(stderr, "jager: plugin (unloaded): %.200s (a log through a handle of an unloaded plugin; "
                            "later ones are dropped)\n", message ? message : "");
        return;
    }
    jg_diag(plugin, level, message ? message : "");
}

static void host_set_error(jager_plugin_handle *self, const char *reason)
{
    char plugin[JG_PLUGIN_NAME_MAX + 1];
    if (!jg_plugin_handle_name(self, plugin)) return;
    jg_error(JAGER_E_PLUGIN, "%.200s", reason ? reason : "");
}

static const void *host_extension(jager_plugin_handle *self, const char *id)
{
    return jg_plugin_handle_extension(self, id);
}

static jager_counter host_counter_register(jager_plugin_handle *self, const char *name, const char *unit, uint32_t kind)
{
    char plugin[JG_PLUGIN_NAME_MAX + 1], full[JG_PLUGIN_NAME_MAX + 2 + 64];
    if (!jg_plugin_handle_name(self, plugin)) {
        jg_error(JAGER_E_STATE, "counter_register: the plugin handle is not (or no longer) loaded");
        return 0;
    }
    if (!jg_name_is_snake(name, 63)) {
        char q[96];
        jg_error(JAGER_E_INVALID, "plugin '%s': counter name \"%s\" must be snake_case ([a-z][a-z0-9_]*, at most 63 bytes)",
                 plugin, name ? jg_quote(q, sizeof q, name) : "(null)");
        return 0;
    }
    snprintf(full, sizeof full, "%s.%s", plugin, name);
    return jager_counter_register(full, unit, kind);
}

static jager_status host_timer_start(jager_plugin_handle *self, uint64_t interval_ns, jager_timer_fn fn, void *arg,
                                     uint32_t *timer_out)
{
    return jg_plugin_timer_start(self, interval_ns, fn, arg, timer_out);
}

/* A stale handle is refused as by every function taking one (JAGER_E_STATE), before its
 * timers (all stopped at its unload) are looked at. */
static jager_status host_timer_stop(jager_plugin_handle *self, uint32_t timer)
{
    if (!jg_plugin_handle_live(self))
        return jg_error(JAGER_E_STATE, "timer_stop: the plugin handle is not (or no longer) loaded");
    return jg_plugin_timer_stop(self, timer);
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
 * writes its span stack. */
static uint32_t host_open_sites(jager_site *out, uint32_t cap)
{
    jg_tls *t = jg_tls_peek();
    /* A state not re-armed since the last jager_init() holds a finished run's stack. */
    if (!t || !out || t->generation != atomic_load_explicit(&jg_generation, memory_order_relaxed)) return 0;
    uint32_t depth = (uint32_t)(jg_stack_top(t) + 1); /* the spans on the stack */
    uint32_t n = depth < cap ? depth : cap;
    for (uint32_t i = 0; i < n; i++) out[i] = jg_stack_site(t, depth - 1 - i);
    return n;
}

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
    .emit_status = jg_emit_plugin_status,
    .set_error = host_set_error,
    .extension = host_extension,
    .timer_start = host_timer_start,
    .timer_stop = host_timer_stop,
    .counter_register = host_counter_register,
    .counter_add = jager_counter_add,
    .counter_set = jager_counter_set,
    .span_hook_add = jg_span_hook_add,
    .span_hook_remove = jg_span_hook_remove,
};

const jager_host_api *jg_host_api(void) { return &host_api; }
