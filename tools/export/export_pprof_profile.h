/* Building one pprof Profile (formats.md §6) with the C that protoc-c generates from
 * tools/encode/profile.proto: the exporters add sample types, samples, locations and
 * functions; pp_profile_write() fills the string table, packs the message with protobuf-c
 * and gzips it (zlib). Strings are interned as they come (index 0 is ""), so a name used
 * by many functions is stored once. Every add is sticky on out of memory: it sets `oom`,
 * later adds do nothing, and pp_profile_write() fails with one message. */
#ifndef JAGER_TOOLS_EXPORT_PPROF_PROFILE_H
#define JAGER_TOOLS_EXPORT_PPROF_PROFILE_H
#include <stddef.h>
#include <stdint.h>

#include "profile.pb-c.h"
#include "strdict.h"

#define PP_MAX_SAMPLE_TYPES 4

/** A profile under construction. Zero it, then pp_profile_init(). */
typedef struct pp_profile {
    Perftools__Profiles__Profile msg;          /**< the message; its arrays point into the fields below */
    Perftools__Profiles__ValueType types[PP_MAX_SAMPLE_TYPES + 1]; /**< sample types, then the period type */
    Perftools__Profiles__ValueType *type_ptrs[PP_MAX_SAMPLE_TYPES];
    size_t samples_cap, locations_cap, functions_cap, comments_cap; /**< room in msg's arrays */
    tu_strdict strings;                        /**< string_table, index 0 = "" */
    int oom;                                   /**< sticky out-of-memory flag */
} pp_profile;

/** One line of a location: a function id and its source line. */
typedef struct pp_line {
    uint64_t function_id;
    int64_t line;
} pp_line;

/** Start an empty profile (string 0 = ""). \return 0 or -1 (OOM). */
int pp_profile_init(pp_profile *p);
/** The string table index of \p s (NULL reads as ""), interned. */
int64_t pp_str(pp_profile *p, const char *s);
/** Append a sample type {\p type, \p unit} (at most PP_MAX_SAMPLE_TYPES). */
void pp_sample_type(pp_profile *p, const char *type, const char *unit);
/** Set the period type {\p type, \p unit} and the period. */
void pp_period(pp_profile *p, const char *type, const char *unit, int64_t period);
/** A sample: \p nloc location ids (innermost first, copied) and \p nval values (copied;
 *  as many as sample types). */
void pp_add_sample(pp_profile *p, const uint64_t *loc, size_t nloc, const int64_t *val, size_t nval);
/** The same with one string label {\p key: \p value} (pprof's tag: `-tagfocus=rank=3`; a
 *  string, since a numeric label of 0 is proto3's default and would not be written). */
void pp_add_sample_labelled(pp_profile *p, const uint64_t *loc, size_t nloc, const int64_t *val, size_t nval,
                            const char *key, const char *value);
/** A location with id \p id (non-zero, unique), address \p address and \p nlines lines
 *  (copied; inlined callee first, the containing function last). */
void pp_add_location(pp_profile *p, uint64_t id, uint64_t address, const pp_line *lines, size_t nlines);
/** A function with id \p id (non-zero, unique); strings are interned. */
void pp_add_function(pp_profile *p, uint64_t id, const char *name, const char *file, int64_t start_line);
/** A comment line shown by pprof (interned). */
void pp_comment(pp_profile *p, const char *text);
/** Fill the string table, pack, gzip (zlib, windowBits 31) and write to \p path ("-":
 *  stdout). \return 0, or -1 with a message printed. */
int pp_profile_write(pp_profile *p, const char *path);
/** Free what the profile holds (NULL-safe on a zeroed profile). */
void pp_profile_free(pp_profile *p);
#endif
