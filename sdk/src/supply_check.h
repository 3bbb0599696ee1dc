/* supply_check.h — the JAGER_LOCK check at jager_init/jager_shutdown (supply_check.c). */
#ifndef JAGER_SUPPLY_CHECK_H
#define JAGER_SUPPLY_CHECK_H

#include "status.h"

/** Before recording starts: strict mode checks now (JAGER_OK, JAGER_E_SUPPLY_CHAIN, or exits). */
JG_HIDDEN jager_status jg_supply_check_init(int quiet);
/** Once recording is on: the non-strict check starts on a background thread. */
JG_HIDDEN void jg_supply_check_start(void);
/** Strict mode, before a plugin is dlopen'ed: 1 if the lock lists \p path unchanged (or
 *  nothing is to be checked); 0 with \p why filled and a security event recorded. */
JG_HIDDEN int jg_supply_plugin_allowed(const char *path, char *why, size_t size);
/** At shutdown, recording still on: wait for the check, then check objects mapped since. */
JG_HIDDEN void jg_supply_check_finish(void);

#endif
