/* The export layer's registry of formats and what several formats share. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "export.h"

static const exporter *const all[] = {&export_chrome, &export_speedscope, &export_pprof, &export_parquet,
                                      &export_csv, &export_folded};
#define NALL (sizeof all / sizeof all[0])

const exporter *export_find(const char *name)
{
    for (size_t i = 0; i < NALL; i++)
        if (!strcmp(all[i]->name, name)) return all[i];
    return NULL;
}

/* Built from the table, so no message or help line can miss a format. */
const char *export_format_names(void)
{
    static char names[128];
    if (names[0]) return names;
    size_t at = 0;
    for (size_t i = 0; i < NALL && at < sizeof names; i++)
        at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", i ? ", " : "", all[i]->name);
    return names;
}

int export_mkdirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
        buf[i] = c;
    }
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}
