/* summary_by.h — `jager summary --by KEY`: each site's calls grouped by a span attribute. */
#ifndef JAGER_SUMMARY_BY_H
#define JAGER_SUMMARY_BY_H

#include "model.h"

/** Print (text or JSON member `,"by":{…}`) every site's calls grouped by the value of span
 *  attribute \p key (the model's attribute groups). \return 0. */
int summary_by(const jm_model *m, const char *key, int json);

#endif
