/*
 * job.h — the recordings of one job as a set of parts: one part per process (an MPI rank),
 * from a job file (several ranks gathered into one, docs/mpi.md "Aggregation"), from
 * several .jgr files (`jager summary run.jgr.*`), or from a folder of them. A single plain
 * recording is a job of one part, so the commands read every input the same way.
 *
 * Part of the model layer (tools/README.md).
 */
#ifndef JAGER_TOOLS_JOB_H
#define JAGER_TOOLS_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "jager_reader.h"

/** One process's recording. */
typedef struct jm_part {
    int64_t rank;        /**< MPI rank (job file, or metadata mpi.rank), -1 when not known */
    char *label;         /**< where it came from: "run.jgr" or "job.jgr[rank 3]" */
    jager_reader *r;     /**< streaming from \p path, or open on \p data */
    const uint8_t *data; /**< a job file's part: its bytes (mapped by jm_job); NULL for a plain file */
    char *path;          /**< a plain file: its path (read again by jm_job_write) */
    size_t size;
} jm_part;

/** A job: its parts sorted by rank (unknown ranks last, in input order). */
typedef struct jm_job {
    jm_part *parts;
    size_t n;
    int64_t world_size;  /**< from a job file or metadata mpi.world_size; 0 unknown */
    uint32_t *missing;   /**< ranks the job file names as missing, and ranks below world_size without a part */
    size_t nmissing;
    int from_job_file;   /**< 1 if some input was a job file */
    struct jm_map *maps; /**< private: the job files, mapped */
    size_t nmaps;
} jm_job;

/** Magic of the job file's skippable frames (LZ4 skippable frame 0x184D2A51). */
#define JM_JOB_FRAME_MAGIC 0x184D2A51u

/**
 * \brief Open every input: a .jgr, a job file, or a folder (its files whose name contains
 *        ".jgr", not descending). Fails if nothing could be opened or two parts claim one rank.
 * \param paths the inputs (borrowed)
 * \param npaths how many
 * \param out receives the job (free with jm_job_free)
 * \param err receives a message on failure ("path: why")
 * \param errsize size of \p err
 * \return 0, or -1 with \p err set.
 */
int jm_job_open(const char *const *paths, size_t npaths, jm_job **out, char *err, size_t errsize);

/** Free a job and close its readers. NULL is allowed. */
void jm_job_free(jm_job *j);

/**
 * \brief Write \p j as one job file (the same bytes the mpi plugin gathers at MPI_Finalize).
 * \return 0, or -1 (errno set by stdio).
 */
int jm_job_write(const jm_job *j, const char *path);

#endif
