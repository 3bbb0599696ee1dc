/* Building one pprof Profile message (formats.md §6): the string table, ValueTypes, and
 * the gzip'd file. The exporters add samples, locations and functions to `body` with
 * export_proto's writers; pp_profile_write() appends the string table and gzips. */
#ifndef JAGER_TOOLS_EXPORT_PPROF_PROFILE_H
#define JAGER_TOOLS_EXPORT_PPROF_PROFILE_H
#include <stdint.h>

#include "strdict.h"
#include "toolutil.h"

typedef struct pp_profile {
    tu_buf body;      /**< Profile fields other than the string table */
    tu_strdict strings;  /**< string_table, index 0 = "" */
    int oom;          /**< sticky out-of-memory flag */
} pp_profile;

/** 0 or -1 (OOM). */
int pp_profile_init(pp_profile *p);
/** The string table index of \p s (interned). */
uint64_t pp_str(pp_profile *p, const char *s);
/** A ValueType {type, unit} as field \p field of the Profile (1 sample_type, 11 period_type). */
void pp_value_type(pp_profile *p, uint32_t field, const char *type, const char *unit);
/** Append the string table, gzip (zlib, windowBits 31) and write to \p path ("-": stdout).
 *  0, or -1 with a message printed. */
int pp_profile_write(pp_profile *p, const char *path);
void pp_profile_free(pp_profile *p);
#endif
