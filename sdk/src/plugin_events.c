/*
 * plugin_events.c — the plugin events that never reach a ring through no fault of the
 * ring: refused as malformed (JAGER_DROP_BAD_EMIT: type 0, an unknown or core type id, a
 * wrong field count) and emitted after the plugins' stop returned, when no drain will
 * ever see them (JAGER_DROP_AFTER_STOP). Both are counted, so recorded + dropped ==
 * emitted holds for plugin events too, and each is said once per type and run, naming
 * the plugin and what was wrong, so a plugin author sees the cause rather than a gap.
 *
 * Off the hot path: only refused events come here; the counters are relaxed atomics.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "plugin_handle.h"

static _Atomic(uint64_t) bad_emits, late_emits;
static _Atomic(int) closing;
/* Types already reported this run, one bit per type id, per kind of loss. */
static _Atomic(uint8_t) said_bad[65536 / 8], said_late[65536 / 8];

static int first_time(_Atomic(uint8_t) *bits, uint16_t type)
{
    uint8_t bit = (uint8_t)(1u << (type & 7));
    return !(atomic_fetch_or_explicit(&bits[type >> 3], bit, memory_order_relaxed) & bit);
}

/* "procstat" of "procstat.sample"; "plugin" when the name has no prefix. */
static void plugin_of(const jager_type_desc *td, char *out, size_t size)
{
    const char *dot = td && td->name ? strchr(td->name, '.') : NULL;
    if (!dot || (size_t)(dot - td->name) >= size) {
        snprintf(out, size, "plugin");
        return;
    }
    memcpy(out, td->name, (size_t)(dot - td->name));
    out[dot - td->name] = 0;
}

jager_status jg_plugin_event_refused(uint16_t type, const jager_type_desc *td, uint32_t nfields, int have_fields)
{
    (void)have_fields; /* the message tells NULL values from a count mismatch by nfields */
    atomic_fetch_add_explicit(&bad_emits, 1, memory_order_relaxed);
    char msg[256], src[JG_PLUGIN_NAME_MAX + 1];
    if (!first_time(said_bad, type)) return JAGER_E_INVALID;
    plugin_of(td && !td->builtin ? td : NULL, src, sizeof src);
    if (type == 0)
        snprintf(msg, sizeof msg, "emit refused: type 0 is no event type (use the id register_type returned); counted as bad_emit");
    else if (!td)
        snprintf(msg, sizeof msg, "emit refused: type %u is not registered; counted as bad_emit", type);
    else if (td->builtin)
        snprintf(msg, sizeof msg, "emit refused: type %u is the core type \"%s\", not a plugin type; counted as bad_emit",
                 type, td->name);
    else if (td->nfields != nfields)
        snprintf(msg, sizeof msg, "emit refused: %s has %u field%s, got %u; counted as bad_emit", td->name, td->nfields,
                 td->nfields == 1 ? "" : "s", nfields);
    else
        snprintf(msg, sizeof msg, "emit refused: %s: %u field%s but the values are NULL; counted as bad_emit", td->name,
                 nfields, nfields == 1 ? "" : "s");
    jg_diag(src, JAGER_SEV_WARN, msg);
    return JAGER_E_INVALID;
}

jager_status jg_plugin_event_lost(uint16_t type)
{
    if (!atomic_load_explicit(&closing, memory_order_acquire))
        return jg_error(JAGER_E_STATE, "emit: not recording");
    atomic_fetch_add_explicit(&late_emits, 1, memory_order_relaxed);
    if (first_time(said_late, type)) {
        const jager_type_desc *td = jg_type_get(type);
        char src[JG_PLUGIN_NAME_MAX + 1], msg[320];
        plugin_of(td && !td->builtin ? td : NULL, src, sizeof src);
        snprintf(msg, sizeof msg,
                 "%s emitted after the plugins' stop returned: lost, counted as after_stop. Stop the plugin's "
                 "threads in stop (or use host->timer_start); its code stays loaded, so a late thread cannot crash the process",
                 td && td->name ? td->name : "an event");
        jg_diag(src, JAGER_SEV_WARN, msg);
    }
    return JAGER_E_STATE;
}

void jg_plugin_events_closing(void) { atomic_store_explicit(&closing, 1, memory_order_release); }

void jg_plugin_events_reset(void)
{
    atomic_store_explicit(&closing, 0, memory_order_release);
    atomic_store_explicit(&bad_emits, 0, memory_order_relaxed);
    atomic_store_explicit(&late_emits, 0, memory_order_relaxed);
    for (size_t i = 0; i < sizeof said_bad; i++) {
        atomic_store_explicit(&said_bad[i], 0, memory_order_relaxed);
        atomic_store_explicit(&said_late[i], 0, memory_order_relaxed);
    }
}

void jg_plugin_events_drops(uint64_t *bad_emit, uint64_t *after_stop)
{
    *bad_emit = atomic_load_explicit(&bad_emits, memory_order_relaxed);
    *after_stop = atomic_load_explicit(&late_emits, memory_order_relaxed);
}
