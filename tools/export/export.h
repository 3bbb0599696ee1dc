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

/** What a sampled profile's weights are (speedscope): each sample's CPU time, or 1 per sample. */
enum export_sample_weight { EXPORT_SAMPLE_WEIGHT_TIME = 0, EXPORT_SAMPLE_WEIGHT_SAMPLES = 1 };

struct jm_mpi;

/** One part (an MPI rank) of a job exported into a single output (exporter.part). */
typedef struct export_part {
    uint32_t index;            /**< the part's index in the job (jm_job.parts) */
    uint32_t nparts;           /**< parts in the job */
    int64_t rank;              /**< its MPI rank, -1 when not known */
    const char *label;         /**< where it came from ("job.jgr[rank 3]") */
    const struct jm_mpi *mpi;  /**< the job's MPI view (job clock, matched messages); NULL: none */
    uint64_t base_ns;          /**< the job's time origin on the job's clock (jm_mpi_job_time) */
    const uint32_t *missing;   /**< ranks the job names missing (jm_job.missing) */
    size_t nmissing;
} export_part;

/** Options from the command line. */
typedef struct export_opts {
    const char *input;        /**< the recording's path (for messages and metadata) */
    const char *out;          /**< output file, or folder for per-type formats (parquet, csv) */
    int parquet_codec;        /**< 0 uncompressed, 6 ZSTD (Parquet CompressionCodec values) */
    int zstd_level;           /**< ZSTD level (default 3) */
    int dict_mode;            /**< an export_dict_mode */
    uint32_t row_group_rows;  /**< Parquet rows per row group (bounds memory) */
    int sample_weight;        /**< an export_sample_weight (speedscope's sampled profiles) */
    int csv_raw;              /**< 1: CSV text cells as recorded, formula-like ones not neutralised */
    int job;                  /**< 1: one output for a whole job: open() gets the first part's reader,
                                   part() is called before each part's events (the first included) */
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
    /** Job mode (export_opts.job): the next part's events follow, read from \p r. NULL: the
     *  format writes one output per part instead. 0 or -1 (printed). */
    int (*part)(void *state, jager_reader *r, const export_part *p);
} exporter;

extern const exporter export_chrome;
extern const exporter export_speedscope;
extern const exporter export_pprof;
extern const exporter export_parquet;
extern const exporter export_csv;
extern const exporter export_folded;

/** The format named \p name ("chrome", "pprof", …), or NULL. */
const exporter *export_find(const char *name);
/** Every format's name, comma-separated in the registry's order ("chrome, speedscope, …"),
 *  for messages and help; a static string. */
const char *export_format_names(void);

/** Create \p path and its missing parents as folders; 0 or -1 (errno set). */
int export_mkdirs(const char *path);

#endif
