/* outfile.c — a command's output file: straight onto devices, pipes, links and "-",
 * atomically (mkstemp in the same folder, then rename) onto regular files and new paths.
 * Why: renaming a temporary onto `/dev/null` replaced the device node (as root), and a
 * fixed "OUT.tmp" name followed a symbolic link planted there. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkostemp */
#endif
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void say(char *err, size_t errsize, const char *path, int e)
{
    if (err && errsize) snprintf(err, errsize, "%s: %s", path, strerror(e ? e : EIO));
}

int tu_outfile_open(tu_outfile *o, const char *path, char *err, size_t errsize)
{
    memset(o, 0, sizeof *o);
    if (!path || !*path) {
        if (err && errsize) snprintf(err, errsize, "no output path");
        return -1;
    }
    if (!(o->path = strdup(path))) {
        say(err, errsize, path, ENOMEM);
        return -1;
    }
    if (!strcmp(path, "-")) {
        o->f = stdout;
        return 0;
    }
    struct stat ls;
    int exists = lstat(path, &ls) == 0;
    if (exists && !S_ISREG(ls.st_mode)) {
        /* A device, FIFO, socket or link: as it is. O_NOCTTY: a terminal never becomes
         * ours; no O_TRUNC on what is not a regular file (a link to one is truncated). */
        int fd = open(path, O_WRONLY | O_CREAT | O_NOCTTY | O_CLOEXEC, 0666);
        struct stat fs;
        if (fd >= 0 && fstat(fd, &fs) == 0 && S_ISREG(fs.st_mode) && ftruncate(fd, 0) != 0) {
            int e = errno;
            close(fd);
            errno = e;
            fd = -1;
        }
        if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
            int e = errno;
            if (fd >= 0) close(fd);
            say(err, errsize, path, e);
            free(o->path);
            o->path = NULL;
            return -1;
        }
        return 0;
    }
    size_t n = strlen(path) + 16;
    if (!(o->tmp = malloc(n))) {
        say(err, errsize, path, ENOMEM);
        free(o->path);
        o->path = NULL;
        return -1;
    }
    snprintf(o->tmp, n, "%s.XXXXXX", path); /* same folder: rename never crosses devices */
    int fd = mkostemp(o->tmp, O_CLOEXEC);
    if (fd < 0) {
        say(err, errsize, path, errno);
        free(o->tmp);
        free(o->path);
        memset(o, 0, sizeof *o);
        return -1;
    }
    /* mkstemp makes 0600; the file keeps the old one's mode, or gets what fopen would give */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, exists ? (ls.st_mode & 07777) : (0666 & ~mask));
    if (!(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        say(err, errsize, path, e);
        free(o->tmp);
        free(o->path);
        memset(o, 0, sizeof *o);
        return -1;
    }
    return 0;
}

int tu_outfile_close(tu_outfile *o, int ok, char *err, size_t errsize)
{
    int rc = 0, e = 0;
    if (o->f == stdout) {
        if (fflush(stdout) != 0) e = errno ? errno : EIO;
    } else if (o->f) {
        errno = 0;
        if (ferror(o->f)) e = EIO;
        if (fclose(o->f) != 0 && !e) e = errno ? errno : EIO;
    }
    o->f = NULL;
    if (e) rc = -1;
    if (!ok) rc = -1;
    if (o->tmp) {
        if (rc == 0 && rename(o->tmp, o->path) != 0) {
            e = errno;
            rc = -1;
        }
        if (rc != 0) unlink(o->tmp);
    }
    if (rc != 0 && e) say(err, errsize, o->path ? o->path : "-", e);
    else if (rc != 0 && err && errsize) err[0] = 0;
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
    return rc;
}
