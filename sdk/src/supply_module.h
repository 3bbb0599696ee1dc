/* supply_module.h — the interface between the core and libjager-supply.so, the JAGER_LOCK
 * checker (docs/supply-chain.md). The checker needs a JSON library and libcrypto; the core
 * loads it only when JAGER_LOCK is set, so no other process that maps libjager (every
 * process of a job, in zero-code mode) pays for those libraries. Internal to one build: the
 * core and the module are built together and the struct's size is checked. */
#ifndef JAGER_SUPPLY_MODULE_H
#define JAGER_SUPPLY_MODULE_H

#include <pthread.h>
#include <stddef.h>

#include "jager.h"

/** What the core lends the checker. */
typedef struct jg_supply_host {
    size_t struct_size;
    void (*log)(jager_severity severity, const char *body, const jager_attr *attrs, size_t nattrs);
    /** Start a thread with the program's signals blocked (jg_host_thread_start). */
    int (*thread_start)(pthread_t *out, int detached, void *(*fn)(void *), void *arg);
} jg_supply_host;

/** The checker's entry points (supply/module/supply_module.c). */
typedef struct jg_supply_module {
    size_t struct_size;
    /** Before recording: 0 fine (strict and clean, or not strict: checked later), 1 strict and
     *  something differs (\p why says what; the table went to stderr unless \p quiet), -1 out
     *  of memory. With JAGER_STRICT=abort it exits the process (status 78) instead of 1. */
    int (*check_init)(const jg_supply_host *host, const char *lock, int quiet, char *why, size_t size);
    /** Once recording is on: the watcher thread starts (not strict: it checks what is mapped
     *  first), then checks each object mapped later (dlopen, a plugin's libraries) when the
     *  dynamic loader's count of loaded objects moves. */
    void (*check_start)(void);
    /** Strict mode, before a plugin is loaded: 1 allowed, 0 refused (\p why filled). */
    int (*plugin_allowed)(const char *path, char *why, size_t size);
    /** At shutdown, recording still on: stop the watcher, then check objects mapped since its
     *  last look. */
    void (*check_finish)(void);
} jg_supply_module;

#define JG_SUPPLY_MODULE_ENTRY "jg_supply_module_v1"
typedef const jg_supply_module *(*jg_supply_module_fn)(void);

#endif
