/* compare_jgr.h — `jager compare BASE.jgr HEAD.jgr`: the sites whose time changed most
 * between two recordings (one run each, so no verdict: a pointer to where to look). */
#ifndef JAGER_COMPARE_JGR_H
#define JAGER_COMPARE_JGR_H
#include <stdio.h>
/** \return the exit code: 0, or 2 when a recording cannot be read. */
int jc_compare_recordings(const char *base_path, const char *head_path, FILE *out);
#endif
