/* dispatch_fixture.h — start the core with the real dispatch plugin and a memory sink,
 * and read the plugin's events back by type name. */
#ifndef DISPATCH_FIXTURE_H
#define DISPATCH_FIXTURE_H
#include <stddef.h>
#include <stdint.h>

#include "jager_dispatch.h"
#include "jager_plugin.h"
#include "memsink.h"

typedef struct dfx {
    memsink *ms;
    const jager_dispatch_api *d;
    uint16_t t_signature, t_compile, t_specializations, t_instability, t_summary;
} dfx;

/** jager_init with plugins "dispatch" from the build tree and a memsink; 0 on success.
 *  \p env: optional "KEY=VALUE" set before init (NULL for none). */
int dfx_start(dfx *f, const char *env);
/** jager_shutdown (the plugin's summary is emitted at its stop). */
void dfx_stop(dfx *f);
void dfx_free(dfx *f);

/** The i-th record of \p type in the sink, or NULL. */
const jager_rec_plugin *dfx_nth(const dfx *f, uint16_t type, size_t i);
size_t dfx_count(const dfx *f, uint16_t type);
/** Records of \p type whose field \p field equals \p value. */
size_t dfx_count_where(const dfx *f, uint16_t type, uint32_t field, uint64_t value);
/** The text of a string id carried in a record. */
const char *dfx_str(uint64_t id);
/** Diagnostic records (JAGER_EV_DIAG) in the sink. */
size_t dfx_diags(const dfx *f);
#endif
