/*
 * plugin_handle.h — what the loader (loader.c), the host API (host_api.c), plugin events
 * (plugin_events.c) and plugin timers (plugin_timer.c) tell each other about loaded
 * plugins. Never installed; plugins see only the opaque jager_plugin_handle, which is a
 * token (slot and generation), never a pointer: every use resolves it, so a stale one is
 * refused rather than read.
 */
#ifndef JAGER_PLUGIN_HANDLE_H
#define JAGER_PLUGIN_HANDLE_H

#include "internal.h"

/** Longest plugin name (the part between "libjager-" and ".so"). */
#define JG_PLUGIN_NAME_MAX 63

/** The file written beside the build tree's libjager (never installed) naming the build
 *  tree's plugin folder: its presence is what lets the loader search the build tree. */
#define JAGER_BUILD_TREE_MARKER "jager-build-tree-plugins"

/** Copy the name of the plugin \p h names into \p out; 1 when \p h is a loaded plugin's
 *  handle, else 0 with out = "plugin". [any-thread] */
JG_HIDDEN int jg_plugin_handle_name(const jager_plugin_handle *h, char out[JG_PLUGIN_NAME_MAX + 1]);

/** 1 when \p h names a loaded plugin (between its init and the end of its shutdown). */
JG_HIDDEN int jg_plugin_handle_live(const jager_plugin_handle *h);

/**
 * host->register_sink for \p h: during init the sink is held back and added only once
 * init succeeds (so a plugin refused at init leaves no callbacks into unloaded code);
 * during start it is added at once; later, or with a stale handle, it is JAGER_E_STATE.
 */
JG_HIDDEN jager_status jg_plugin_handle_add_sink(jager_plugin_handle *h, const jager_sink *sink);

/** host->extension: another loaded plugin's extension table \p id, or NULL. */
JG_HIDDEN const void *jg_plugin_handle_extension(const jager_plugin_handle *h, const char *id);

/** 1 while a plugin callback (init, start, flush, stop, shutdown) runs on this thread. */
JG_HIDDEN int jg_plugins_in_callback(void);
/** Mark this thread as running a plugin callback (a timer's) until the matching leave. */
JG_HIDDEN void jg_plugins_callback_enter(void);
JG_HIDDEN void jg_plugins_callback_leave(void); /**< see jg_plugins_callback_enter() */

/* ---- plugin_events.c (the emit side is declared in internal.h) ---- */

/** Every plugin's stop has returned: later plugin events are lost, counted after_stop. */
JG_HIDDEN void jg_plugin_events_closing(void);

/* ---- plugin_timer.c: host-owned periodic callbacks ---- */

/** host->timer_start. */
JG_HIDDEN jager_status jg_plugin_timer_start(jager_plugin_handle *h, uint64_t interval_ns,
                                             void (*fn)(void *arg), void *arg, uint32_t *timer_out);
/** host->timer_stop: returns once the timer's callback no longer runs. */
JG_HIDDEN jager_status jg_plugin_timer_stop(jager_plugin_handle *h, uint32_t timer);
/** Stop every timer of \p h (before its stop, and when it fails or unloads). */
JG_HIDDEN void jg_plugin_timers_stop(const jager_plugin_handle *h);
/** In a child made by fork(): every timer slot freed (the threads are the parent's). */
JG_HIDDEN void jg_plugin_timers_fork_child(void);

/* ---- plugin_call.c: bounded calls into plugin code (issue 16 item 11) ---- */

/** JAGER_PLUGIN_TIMEOUT_MS when unset or unreadable. */
#define JG_PLUGIN_TIMEOUT_DEFAULT_MS 10000L
/** JAGER_PLUGIN_TIMEOUT_MS: the longest one call into a plugin may take (0: unbounded,
 *  called inline on the calling thread). */
JG_HIDDEN long jg_plugin_timeout_ms(void);

/** A host-owned thread that runs one plugin call at a time for a waiting caller. */
typedef struct jg_worker jg_worker;
/** A new worker, or NULL when no thread could start (the caller then calls inline). */
JG_HIDDEN jg_worker *jg_worker_new(void);
/** The submitter acts with the life lock held (jager_flush from the job does not take it). */
#define JG_PROXY_LIFE 1
/** The submitter is the collector (jager_flush from the job drains on the job's thread). */
#define JG_PROXY_COLLECTOR 2
/** Run fn(arg) on \p w, waiting at most \p timeout_ms: 0 when it returned, -1 when not —
 *  the worker is then stuck in it: abandon it, and leave \p arg to it. */
JG_HIDDEN int jg_worker_call(jg_worker *w, void (*fn)(void *arg), void *arg, int proxy, long timeout_ms);
/** Give up \p w (stuck or idle): it ends when its call returns, then frees \p keep with
 *  \p keep_free (both may be NULL); with \p w NULL, frees \p keep now. */
JG_HIDDEN void jg_worker_abandon(jg_worker *w, void (*keep_free)(void *), void *keep);
/** Done with an idle worker: it is kept for the next jg_worker_new (its thread never ends). */
JG_HIDDEN void jg_worker_free(jg_worker *w);
/** The JG_PROXY_* flags of the job running on this thread (0 elsewhere). */
JG_HIDDEN int jg_call_proxy(void);

/** Disable the plugin \p h names after one of its callbacks (\p what: "flush", "sink 'x'
 *  write") did not return in time: reported once, no callback of it (nor its sinks') runs
 *  again, not even shutdown. [any-thread] */
JG_HIDDEN void jg_plugin_mark_hung(const jager_plugin_handle *h, const char *what, long ms);
/** 1 when the plugin \p h names was disabled as hung. */
JG_HIDDEN int jg_plugin_is_hung(const jager_plugin_handle *h);

/** 1 when this thread holds the life lock (inside jager_init/jager_shutdown). lifecycle.c */
JG_HIDDEN int jg_life_held(void);
/** 1 on the collector thread. collector.c */
JG_HIDDEN int jg_collector_is_self(void);

/* ---- span_hooks.c: host->span_hook_add/span_hook_remove (1.3) ---- */
JG_HIDDEN jager_status jg_span_hook_add(jager_plugin_handle *self, const char *site_name, jager_span_hook_fn begin,
                                        jager_span_hook_fn end, void *arg, uint32_t *hook_out);
JG_HIDDEN jager_status jg_span_hook_remove(jager_plugin_handle *self, uint32_t hook);
/** Remove every hook of \p owner (before its stop, when it fails, hangs or unloads). */
JG_HIDDEN void jg_span_hooks_remove_owner(const jager_plugin_handle *owner);

/* ---- collector.c: the sinks a plugin registered ---- */
/** jg_sink_add for a sink of plugin \p owner: its callbacks are bounded calls. */
JG_HIDDEN jager_status jg_sink_add_owned(const jager_sink *sink, const jager_plugin_handle *owner);
/** No callback of \p owner's sinks runs again; their batches count as sink drops. */
JG_HIDDEN void jg_sinks_disable_owner(const jager_plugin_handle *owner);

#endif /* JAGER_PLUGIN_HANDLE_H */
