/*
 * outfile.h — writing a command's output file safely (every command that writes one).
 *
 * "-" is standard output. A device, FIFO, socket or a symbolic link (to anything) is
 * written straight, as it is: never replaced by a regular file, never renamed over. A
 * regular file or a missing path is written atomically: into a temporary made with
 * mkstemp() (O_CREAT|O_EXCL, so an existing file or symbolic link of that name is never
 * followed or overwritten) in the same folder, renamed onto the path only once the whole
 * output was written; a failed run leaves the old file as it was and no temporary.
 */
#ifndef JAGER_TOOLS_OUTFILE_H
#define JAGER_TOOLS_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

/** An output being written (fill with tu_outfile_open). */
typedef struct tu_outfile {
    FILE *f;     /**< write here */
    char *path;  /**< the destination (owned copy) */
    char *tmp;   /**< the temporary when atomic, else NULL */
} tu_outfile;

/**
 * \brief Open \p path for writing as described above.
 * \param o filled in; o->f is the stream to write
 * \param path destination, or "-" for standard output
 * \param err receives the reason on failure ("PATH: No such file or directory")
 * \param errsize size of \p err
 * \return 0, or -1 with \p err set (nothing created)
 */
int tu_outfile_open(tu_outfile *o, const char *path, char *err, size_t errsize);

/**
 * \brief Finish: flush and close; when \p ok and atomic, rename the temporary onto the
 * path; when not \p ok (or the close or rename fails) remove the temporary.
 * \param o from tu_outfile_open (released, whatever the result)
 * \param ok 0 when the caller's writing failed: nothing replaces the destination
 * \param err receives the reason when a close or rename fails
 * \param errsize size of \p err
 * \return 0 when the output is complete at its path, -1 otherwise
 */
int tu_outfile_close(tu_outfile *o, int ok, char *err, size_t errsize);

#endif /* JAGER_TOOLS_OUTFILE_H */
