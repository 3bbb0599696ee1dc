/*
 * span_hooks.c — host->span_hook_add/span_hook_remove (plugin ABI 1.3): a plugin asks to
 * be told when spans begin and end on the sites it names (what Kokkos Tools' and Score-P's
 * region callbacks give a tool), at no cost to other sites.
 *
 * A hook is a slot (64 in the process) holding the site name, the callbacks and the
 * owner's handle. registry.c keeps each site's mask of hook slots and the state that
 * jager_span_begin reads (JG_SITE_HOOKED); span.c calls jg_span_hooks_call on the cold
 * ways of hooked spans. A call counts itself in the slot's `active` before it checks
 * `live`, and removal clears `live` before it waits for `active` to drain (both seq_cst),
 * so once span_hook_remove returns no call of the hook runs: a plugin's hooks are removed
 * before its stop, so none runs into a stopped or unloaded plugin. The wait is bounded by
 * JAGER_PLUGIN_TIMEOUT_MS: a hook that never returns disables its plugin like any hung
 * callback.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "plugin_handle.h"

#define JG_MAX_HOOKS 64
#define HOOK_SLOT_BITS 6

typedef struct jg_hook {
    const jager_plugin_handle *owner; /* under hooks_lock; NULL: free */
    uint32_t id;                      /* generation << 6 | slot, under hooks_lock */
    /* written before live is set (release), read only after live is seen (acquire) */
    uint32_t name_id;
    jager_span_hook_fn begin, end;
    void *arg;
    _Atomic(int) live;
    _Atomic(int) active; /* calls in flight */
} jg_hook;

static pthread_mutex_t hooks_lock = PTHREAD_MUTEX_INITIALIZER;
static jg_hook hooks[JG_MAX_HOOKS];
static uint32_t hook_generation = 1;
static __thread int running_hook __attribute__((tls_model("initial-exec"))); /* slot + 1 of the hook running here */

void jg_span_hooks_call(uint64_t mask, int end, const jager_span_event *ev)
{
    const jg_site_info *si = jg_site_get(ev->site);
    for (; mask; mask &= mask - 1) {
        int slot = __builtin_ctzll(mask);
        jg_hook *h = &hooks[slot];
        atomic_fetch_add(&h->active, 1);
        if (atomic_load(&h->live) && si && h->name_id == si->name) {
            jager_span_hook_fn fn = end ? h->end : h->begin;
            if (fn) {
                int outer = running_hook;
                running_hook = slot + 1;
                jg_plugins_callback_enter();
                fn(h->arg, ev);
                jg_plugins_callback_leave();
                running_hook = outer;
            }
        }
        atomic_fetch_sub(&h->active, 1);
    }
}

static int slot_of(uint32_t id)
{
    uint32_t slot = id & ((1u << HOOK_SLOT_BITS) - 1);
    return id && slot < JG_MAX_HOOKS ? (int)slot : -1;
}

/* Take slot \p i out of service: no new call starts; waits (bounded) until none runs. The
 * caller holds hooks_lock and owns the slot. Returns 0, or -1 when a call did not return
 * in time (its plugin is then disabled as hung). */
static int retire_locked(int i)
{
    jg_hook *h = &hooks[i];
    const jager_plugin_handle *owner = h->owner;
    atomic_store(&h->live, 0);
    jg_sites_hook((uint32_t)i, NULL);
    int rc = 0;
    /* From the hook's own callback: the running call is this thread's; no later one starts. */
    int self = running_hook == i + 1;
    long ms = jg_plugin_timeout_ms();
    struct timespec nap = {0, 200000};
    for (long waited_us = 0; atomic_load(&h->active) > self; waited_us += 200) {
        if (ms > 0 && waited_us / 1000 >= ms) {
            rc = -1;
            break;
        }
        nanosleep(&nap, NULL);
    }
    h->owner = NULL;
    h->id = 0;
    if (rc) {
        pthread_mutex_unlock(&hooks_lock);
        jg_plugin_mark_hung(owner, "span hook", ms);
        pthread_mutex_lock(&hooks_lock);
    }
    return rc;
}

jager_status jg_span_hook_add(jager_plugin_handle *self, const char *site_name, jager_span_hook_fn begin,
                              jager_span_hook_fn end, void *arg, uint32_t *hook_out)
{
    char plugin[JG_PLUGIN_NAME_MAX + 1];
    if (!jg_plugin_handle_name(self, plugin))
        return jg_error(JAGER_E_STATE, "span_hook_add: the plugin handle is not (or no longer) loaded");
    if (!site_name || !*site_name || (!begin && !end))
        return jg_error(JAGER_E_INVALID, "plugin '%s': span_hook_add: empty site name or no callback", plugin);
    pthread_mutex_lock(&hooks_lock);
    int i = 0;
    while (i < JG_MAX_HOOKS && hooks[i].owner) i++;
    if (i == JG_MAX_HOOKS) {
        pthread_mutex_unlock(&hooks_lock);
        return jg_error(JAGER_E_FULL, "plugin '%s': span_hook_add: more than %d span hooks in the process", plugin,
                        JG_MAX_HOOKS);
    }
    jg_hook *h = &hooks[i];
    h->owner = self;
    h->id = (hook_generation++ << HOOK_SLOT_BITS) | (uint32_t)i;
    h->begin = begin;
    h->end = end;
    h->arg = arg;
    h->name_id = jg_sites_hook((uint32_t)i, site_name);
    if (!h->name_id) {
        h->owner = NULL;
        h->id = 0;
        pthread_mutex_unlock(&hooks_lock);
        return jg_error(JAGER_E_NOMEM, "plugin '%s': span_hook_add: out of memory", plugin);
    }
    atomic_store(&h->live, 1);
    if (hook_out) *hook_out = h->id;
    pthread_mutex_unlock(&hooks_lock);
    return JAGER_OK;
}

jager_status jg_span_hook_remove(jager_plugin_handle *self, uint32_t hook)
{
    char plugin[JG_PLUGIN_NAME_MAX + 1];
    if (!jg_plugin_handle_name(self, plugin))
        return jg_error(JAGER_E_STATE, "span_hook_remove: the plugin handle is not (or no longer) loaded");
    int i = slot_of(hook);
    pthread_mutex_lock(&hooks_lock);
    if (i < 0 || hooks[i].id != hook || hooks[i].owner != self) {
        pthread_mutex_unlock(&hooks_lock);
        return jg_error(JAGER_E_NOTFOUND, "plugin '%s': span_hook_remove: no such hook %u", plugin, hook);
    }
    (void)retire_locked(i);
    pthread_mutex_unlock(&hooks_lock);
    return JAGER_OK;
}

void jg_span_hooks_remove_owner(const jager_plugin_handle *owner)
{
    pthread_mutex_lock(&hooks_lock);
    for (int i = 0; i < JG_MAX_HOOKS; i++)
        if (owner && hooks[i].owner == owner) (void)retire_locked(i);
    pthread_mutex_unlock(&hooks_lock);
}
