/*
 * plugin_handle.h — what the loader (loader.c) tells the host API (host_api.c) about one
 * loaded plugin. Never installed; plugins see only the opaque jager_plugin_handle.
 */
#ifndef JAGER_PLUGIN_HANDLE_H
#define JAGER_PLUGIN_HANDLE_H

#include "internal.h"

/** Longest plugin name (the part between "libjager-" and ".so"). */
#define JG_PLUGIN_NAME_MAX 63

/** The plugin's name ("gc"); "" for NULL. Lives as long as the handle. [any-thread] */
JG_HIDDEN const char *jg_plugin_handle_name(const jager_plugin_handle *h);

/**
 * host->register_sink for \p h: during init the sink is held back and added only once
 * init succeeds (so a plugin refused at init leaves no callbacks into unloaded code);
 * during start it is added at once; later it is JAGER_E_STATE.
 */
JG_HIDDEN jager_status jg_plugin_handle_add_sink(jager_plugin_handle *h, const jager_sink *sink);

#endif /* JAGER_PLUGIN_HANDLE_H */
