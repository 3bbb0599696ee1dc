/* supply_write.c — writing an output file of the supply layer (`jager lock -o`) the way the
 * tools write theirs (tools/util/outfile.c, which this layer may not include): "-" is
 * standard output; a device, FIFO, socket or symbolic link is written straight, as it is
 * (never replaced by a regular file); a regular file or a missing path is written into a
 * temporary PATH.XXXXXX made with O_CREAT|O_EXCL|O_NOFOLLOW (mode 0600, then the old file's
 * mode or 0666 & ~umask), fsync'ed and renamed onto the path only once complete. Why: a
 * fixed "PATH.tmp<pid>" written with fopen followed a symbolic link planted there, and the
 * rename replaced /dev/null (as root) with a regular file. */
#include "supply.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void say(char *err, size_t errlen, const char *path, int e)
{
    if (err && errlen) snprintf(err, errlen, "%s: %s", path, strerror(e ? e : EIO));
}

static int give_up(js_out *o, char *err, size_t errlen, const char *path, int e)
{
    say(err, errlen, path, e);
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
    return -1;
}

int js_out_open(js_out *o, const char *path, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (!path || !*path) {
        if (err && errlen) snprintf(err, errlen, "no output path");
        return -1;
    }
    if (!(o->path = strdup(path))) return give_up(o, err, errlen, path, ENOMEM);
    if (!strcmp(path, "-")) {
        o->f = stdout;
        return 0;
    }
    struct stat ls;
    int exists = lstat(path, &ls) == 0;
    if (exists && !S_ISREG(ls.st_mode)) {
        /* as it is; O_NOCTTY: a terminal never becomes ours; a link to a regular file is
         * truncated through the link, nothing else is */
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
            return give_up(o, err, errlen, path, e);
        }
        return 0;
    }
    size_t n = strlen(path) + 8;
    if (!(o->tmp = malloc(n))) return give_up(o, err, errlen, path, ENOMEM);
    snprintf(o->tmp, n, "%s.XXXXXX", path); /* same folder: the rename never crosses devices */
    /* glibc's mkostemp opens with O_RDWR|O_CREAT|O_EXCL, 0600, and the flags given */
    int fd = mkostemp(o->tmp, O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return give_up(o, err, errlen, path, errno);
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, exists ? (ls.st_mode & 07777) : (0666 & ~mask)) != 0 || !(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        return give_up(o, err, errlen, path, e);
    }
    return 0;
}

int js_out_close(js_out *o, int ok, char *err, size_t errlen)
{
    int e = 0;
    if (o->f == stdout) {
        if (fflush(stdout) != 0) e = errno ? errno : EIO;
    } else if (o->f) {
        errno = 0;
        if (fflush(o->f) != 0 || ferror(o->f)) e = errno ? errno : EIO;
        if (!e && o->tmp && fsync(fileno(o->f)) != 0) e = errno; /* on disk before the rename */
        if (fclose(o->f) != 0 && !e) e = errno ? errno : EIO;
    }
    o->f = NULL;
    int rc = e || !ok ? -1 : 0;
    if (o->tmp) {
        if (rc == 0 && rename(o->tmp, o->path) != 0) {
            e = errno;
            rc = -1;
        }
        if (rc != 0) unlink(o->tmp);
    }
    if (rc != 0 && e) say(err, errlen, o->path ? o->path : "-", e);
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
    return rc;
}
