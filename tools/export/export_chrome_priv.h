/* Shared by export_chrome.c (the state, core events, metadata) and export_chrome_plugins.c
 * (plugin events). */
#ifndef JAGER_TOOLS_EXPORT_CHROME_PRIV_H
#define JAGER_TOOLS_EXPORT_CHROME_PRIV_H
#include <stdint.h>
#include <stdio.h>

#include "export.h"
#include "toolutil.h"

/* Extra lanes (tids): lane key 0 = GC, 1 = Compiler, 2 + type = a plugin type; each key
 * has up to LANE_SUBS sub-lanes so that slices which overlap without nesting (compiles on
 * two threads) never share one (Perfetto requires strict nesting per thread). */
#define LANE_BASE 1000000000u
#define LANE_SUBS 64u
#define LANE_KEY_GC 0u
#define LANE_KEY_COMPILER 1u
#define LANE_KEYS (2u + 65536u)
#define PENDING_MAX 65536u /* attribute sets of open spans kept at most */

typedef struct pending {
    uint64_t key; /* thread << 32 | span id; 0 = empty */
    tu_buf attrs; /* JSON members "k":v,… without braces */
    tu_buf error; /* JSON string of the last error message */
} pending;

enum type_style { STYLE_UNSET = 0, STYLE_INSTANT, STYLE_COMPLETE, STYLE_COUNTER };

typedef struct chrome_state {
    jager_reader *r;
    const export_opts *o;
    FILE *f;
    uint64_t base_ns;
    long long pid;
    uint64_t events;
    tu_buf b, tmp;
    pending *pend;
    uint32_t npend_slots, npend;
    uint8_t style[65536];
    uint64_t *lane_end[LANE_KEYS]; /* per lane key: end of the last slice of each sub-lane */
    uint8_t lane_subs[LANE_KEYS];  /* sub-lanes in use */
    int failed;
} chrome_state;

/* Output helpers (export_chrome.c). */
void ch_put_time(tu_buf *b, int64_t ns);
void ch_put_ts(chrome_state *s, uint64_t t);
void ch_begin_event(chrome_state *s, const char *name, size_t name_len, const char *cat, const char *ph, uint64_t t,
                    uint64_t tid);
int ch_end_event(chrome_state *s);
const char *ch_site_name(chrome_state *s, uint32_t site, char *buf, size_t size);
void ch_put_stack(chrome_state *s, jager_stack_id id);
/** One plugin record (export_chrome_plugins.c). */
void ch_on_plugin(chrome_state *s, const jager_event *ev);
#endif
