/* summary_counters.h — the program's counters (jager_counter_register) in `jager summary`. */
#ifndef JAGER_SUMMARY_COUNTERS_H
#define JAGER_SUMMARY_COUNTERS_H

#include "model.h"

/** One row per counter with samples: name, unit, kind, samples, the total (monotonic: the
 *  process's running total at its latest sample) or last level (gauge), min and max.
 *  Prints nothing when the recording has no counter samples. */
void summary_counters_text(const jm_model *m);
/** The same as a JSON member `,"counters":[…]` (`[]` when there are none). */
void summary_counters_json(const jm_model *m);

#endif
