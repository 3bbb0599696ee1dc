/* summary_mpi.h — the MPI section of `jager summary` (summary_mpi.c). */
#ifndef JAGER_TOOLS_SUMMARY_MPI_H
#define JAGER_TOOLS_SUMMARY_MPI_H

#include "job.h"
#include "model_mpi.h"

/** Print the MPI table of \p m (nothing when it has no calls). \return 0, or -1 on out of memory. */
int summary_mpi_text(const jm_mpi *m, const jm_job *j);
/** Print the same as one JSON object. \return 0, or -1 on out of memory. */
int summary_mpi_json(const jm_mpi *m, const jm_job *j);

#endif
