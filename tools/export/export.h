/* `jager export`: the interface every output format implements, and the options they share.
 *
 * The export layer (tools/README.md): uses model, encode and util. The cli's cmd_export.c
 * opens the recording, streams its events once through one exporter and
 * maps the reader's end state to an exit code. An exporter writes as it goes (memory is
 * bounded per format, see each file) and finishes what it has when the input stops early,
 * so a truncated recording still yields a valid file for its good prefix. */
#ifndef JAGER_TOOLS_EXPORT_H
#define JAGER_TOOLS_EXPORT_H
#include <stdint.h>

#include "jager_reader.h"

/** Parquet string columns: dictionary-encode when it pays (auto), never, or always. */
enum export_dict_mode { EXPORT_DICT_AUTO = 0, EXPORT_DICT_NEVER = 1, EXPORT_DICT_ALWAYS = 2 };

/** Options from the command line. */
typedef struct export_opts {
    const char *input;        /**< the recording's path (for messages and metadata) */
    const char *out;          /**< output file, or folder for per-type formats (parquet, csv) */
    int parquet_codec;        /**< 0 uncompressed, 6 ZSTD (Parquet CompressionCodec values) */
    int zstd_level;           /**< ZSTD level (default 3) */
    int dict_mode;            /**< an export_dict_mode */
    uint32_t row_group_rows;  /**< Parquet rows per row group (bounds memory) */
} export_opts;

/** One output format. */
typedef struct exporter {
    const char *name;
    const char *default_suffix; /**< appended to the input's stem when -o is absent */
    int needs_tables;           /**< 1: read stacks/symbols (written late) before streaming */
    /** Create the output; on failure print "jager export: …" and return NULL. */
    void *(*open)(jager_reader *r, const export_opts *o);
    /** Consume one event; 0 or -1 on a write error (already printed). */
    int (*event)(void *state, const jager_event *ev);
    /** Write what remains (trailers, footers); 0 or -1 (printed). */
    int (*finish)(void *state);
    /** Free the state (also after a failed finish). NULL-safe. */
    void (*free)(void *state);
} exporter;

extern const exporter export_chrome;
extern const exporter export_speedscope;
extern const exporter export_pprof;
extern const exporter export_parquet;
extern const exporter export_csv;
extern const exporter export_folded;

/** The format named \p name ("chrome", "pprof", …), or NULL. */
const exporter *export_find(const char *name);

/** Create \p path and its missing parents as folders; 0 or -1 (errno set). */
int export_mkdirs(const char *path);

#endif
