/* summary_plugins.h — `jager summary`'s plugin-event section (summary_plugins.c). */
#ifndef JAGER_CLI_SUMMARY_PLUGINS_H
#define JAGER_CLI_SUMMARY_PLUGINS_H
#include "jager_reader.h"

/** Print the plugin event types of \p r (rewound and read again) as text; 0, or -1 out of memory. */
int summary_plugins_text(jager_reader *r);
/** The same as a JSON member `,"plugin_types":[…]` of the summary object; 0, or -1. */
int summary_plugins_json(jager_reader *r);
#endif
