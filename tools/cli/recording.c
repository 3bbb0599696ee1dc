/* Opening recordings for the commands: uniform messages and exit codes (commands.h). */
#include <stdio.h>

#include "commands.h"
#include "job.h"

jager_reader *cli_open(const char *cmd, const char *path)
{
    jager_reader *r = NULL;
    if (!path) {
        fprintf(stderr, "jager %s: no recording given\n", cmd);
        return NULL;
    }
    if (jager_reader_open(path, &r) != JAGER_OK) {
        fprintf(stderr, "jager %s: %s: %s\n", cmd, path, jager_last_error());
        return NULL;
    }
    return r;
}

int cli_finish(const char *cmd, const char *path, jager_reader *r, int rc)
{
    if (rc >= 0) return JAGER_EXIT_OK;
    jager_reader_info info = {.struct_size = sizeof info};
    jager_reader_get_info(r, &info);
    if (rc == JAGER_E_TRUNCATED) {
        fprintf(stderr, "jager %s: %s: %s (partial results: %llu events from %llu whole frames)\n", cmd, path,
                jager_reader_error(r), (unsigned long long)info.events, (unsigned long long)info.frames);
        return JAGER_EXIT_PARTIAL;
    }
    fprintf(stderr, "jager %s: %s: %s\n", cmd, path, jager_reader_error(r));
    return info.events ? JAGER_EXIT_PARTIAL : JAGER_EXIT_INPUT;
}

jm_job *cli_open_job(const char *cmd, const char *const *paths, size_t n)
{
    jm_job *j = NULL;
    char err[4400];
    if (!n) {
        fprintf(stderr, "jager %s: no recording given\n", cmd);
        return NULL;
    }
    if (jm_job_open(paths, n, &j, err, sizeof err)) {
        fprintf(stderr, "jager %s: %s\n", cmd, err);
        return NULL;
    }
    return j;
}
