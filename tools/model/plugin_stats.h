/*
 * plugin_stats.h — every plugin event type of a recording, whatever the plugin: how many
 * events, and for each numeric field its minimum, mean and maximum. What `jager summary`
 * shows for plugins no tool knows by name (plugin events are self-describing, so no tool
 * may ignore them). One pass over the file's events; memory bounded by the types present.
 */
#ifndef JAGER_TOOLS_PLUGIN_STATS_H
#define JAGER_TOOLS_PLUGIN_STATS_H

#include <stdint.h>

#include "jager_reader.h"

/** One numeric field's statistics over the events of its type. */
typedef struct jm_field_stat {
    const char *name;  /**< the field's name (the reader's, lives with it) */
    uint32_t kind;     /**< jager_field_kind */
    uint32_t flags;    /**< JAGER_FIELD_FLAG_* */
    double min, max, sum; /**< over the events that carry the field */
    uint64_t n;        /**< events that carry the field */
} jm_field_stat;

/** One plugin event type. */
typedef struct jm_type_stat {
    uint16_t type;          /**< the type id */
    const char *name;       /**< "<plugin>.<event>" (the reader's) */
    uint64_t events;        /**< events of this type */
    uint32_t nfields;       /**< numeric fields in \p fields */
    jm_field_stat fields[JAGER_MAX_FIELDS]; /**< numeric fields, in declaration order */
} jm_type_stat;

/** Plugin event types with at least one event, sorted by name. */
typedef struct jm_plugin_stats {
    jm_type_stat *types; /**< ntypes entries */
    uint32_t ntypes;     /**< entries in types */
} jm_plugin_stats;

/**
 * \brief Rewind \p r and gather every plugin type's counts and numeric field statistics.
 * \return 0 and \p out filled (free with jm_plugin_stats_free()); -1 out of memory.
 */
int jm_plugin_stats_build(jager_reader *r, jm_plugin_stats *out);
/** Free what jm_plugin_stats_build() allocated. */
void jm_plugin_stats_free(jm_plugin_stats *s);
/** 1 when fields of \p kind are numbers that min/mean/max describe. */
int jm_field_is_numeric(uint32_t kind);

#endif
