/* summary_otel.h — the otel plugin's export accounting in `jager summary`. */
#ifndef JAGER_SUMMARY_OTEL_H
#define JAGER_SUMMARY_OTEL_H

#include "jager_reader.h"

/** A table "signal, seen, exported, not exported by cause" when the file has otel.export
 *  events (rewinds \p r); prints nothing otherwise. */
void summary_otel_text(jager_reader *r);
/** The same as a JSON member `,"otel":{…}` (or `,"otel":null`), for the summary's object. */
void summary_otel_json(jager_reader *r);

#endif
