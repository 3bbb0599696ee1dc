/* supply_late.c — a program that dlopens a library mid-run, for the JAGER_LOCK watcher test:
 *   supply_late LIB [HOLD]
 * jager_init from the environment, a log "late: dlopen" just before dlopen(LIB), then
 * "late N" on stdout (LIB's victim_value), then (with HOLD) HOLD.ready is created and the
 * program waits up to 60 s for HOLD to exist (so `jager lock --pid` can see it), or else
 * sleeps 3 s, a log "late: shutdown", jager_shutdown and "done". */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jager.h"

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    jager_status st = jager_init(NULL);
    printf("init %d\n", (int)st);
    fflush(stdout);
    jager_log(JAGER_SEV_INFO, "late: dlopen", NULL, 0);
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 4;
    }
    int (*fn)(void);
    void *sym = dlsym(h, "victim_value");
    memcpy(&fn, &sym, sizeof fn);
    printf("late %d\n", fn ? fn() : -1);
    fflush(stdout);
    if (argc > 2) {
        char ready[4096];
        snprintf(ready, sizeof ready, "%s.ready", argv[2]);
        FILE *f = fopen(ready, "w");
        if (f) fclose(f);
        for (int i = 0; i < 600 && access(argv[2], F_OK) != 0; i++) nap_ms(100);
    } else {
        nap_ms(3000);
    }
    jager_log(JAGER_SEV_INFO, "late: shutdown", NULL, 0);
    jager_shutdown();
    printf("done\n");
    return 0;
}
