/* summary_rusage.h — what the machine did to each region (rusage plugin) in `jager summary`. */
#ifndef JAGER_SUMMARY_RUSAGE_H
#define JAGER_SUMMARY_RUSAGE_H

#include "model.h"

/** The regions with the most wall time the readings covered: wall, CPU, waiting for a CPU,
 *  system time, page faults a call. Prints nothing without rusage readings. */
void summary_rusage_text(const jm_model *m);
/** The same as a JSON member `,"rusage":[…]` (or `,"rusage":null`). */
void summary_rusage_json(const jm_model *m);

#endif
