/* libjager-benchhooks.so: the span hooks benchmark's plugin. It hooks the site named by
 * JAGER_BENCHHOOKS_SITE (default "bench.hooked") with begin and end callbacks that only
 * count, so the benchmark measures the host's side of a hook. */
#include <stdatomic.h>
#include <stddef.h>

#include "jager_plugin.h"

static const jager_host_api *host;
static jager_plugin_handle *self;
static _Atomic(unsigned long) begins, ends;

static void on_begin(void *arg, const jager_span_event *ev)
{
    (void)arg;
    (void)ev;
    atomic_fetch_add_explicit(&begins, 1, memory_order_relaxed);
}

static void on_end(void *arg, const jager_span_event *ev)
{
    (void)arg;
    (void)ev;
    atomic_fetch_add_explicit(&ends, 1, memory_order_relaxed);
}

static jager_status bh_init(const jager_host_api *h, jager_plugin_handle *s, void **state)
{
    host = h;
    self = s;
    *state = NULL;
    if (h->abi_minor < 3 || !h->span_hook_add) return JAGER_E_UNSUPPORTED;
    const char *site = h->config(s, "site");
    return h->span_hook_add(s, site && *site ? site : "bench.hooked", on_begin, on_end, NULL, NULL);
}

static const jager_plugin_descriptor desc = {
    .struct_size = sizeof(jager_plugin_descriptor),
    .abi_major = JAGER_PLUGIN_ABI_MAJOR,
    .abi_minor = JAGER_PLUGIN_ABI_MINOR,
    .name = "benchhooks",
    .version = "1",
    .description = "span hooks benchmark: counts begin/end on one site",
    .init = bh_init,
};

JAGER_PLUGIN_DEFINE_ENTRY(&desc)
