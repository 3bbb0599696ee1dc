/*
 * roles_rec.c — a recording where waits are known only by role:
 *   roles_rec OUT MODE      MODE: roles | none | misnamed
 * Three threads, 5 rounds: work at site WORK (thread t sleeps (t+1)·4 ms), then a
 * pthread barrier inside site "gather" (its name says nothing about waiting).
 *   roles:    gather has role barrier_wait, WORK = "rows" has role work
 *   none:     no roles (names only: nothing marks gather as a wait)
 *   misnamed: WORK = "barrier_rows" (a wait word in its name) with role work
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "jager.h"

typedef struct rolestub_ext {
    void (*emit_role)(jager_site site, const char *role, const char *kind);
} rolestub_ext;

static pthread_barrier_t bar;
static jager_site s_work, s_gather;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
    int t = (int)(size_t)arg;
    for (int r = 0; r < 5; r++) {
        jager_span w = jager_span_begin(s_work);
        sleep_ms((t + 1) * 4);
        jager_span_end(w);
        jager_span g = jager_span_begin(s_gather);
        pthread_barrier_wait(&bar);
        jager_span_end(g);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    const char *mode = argv[2];
    jager_config c;
    jager_config_init(&c);
    c.quiet = 1;
    c.output = argv[1];
    c.plugins = strcmp(mode, "none") ? "rolestub" : NULL;
    c.plugin_path = ROLESTUB_DIR;
    if (jager_init(&c) != JAGER_OK) return 1;
    s_work = jager_site_register(strcmp(mode, "misnamed") ? "rows" : "barrier_rows", "roles_rec.c", 1);
    s_gather = jager_site_register("gather", "roles_rec.c", 2);
    if (strcmp(mode, "none")) {
        const rolestub_ext *x = jager_extension_get("jager.rolestub/1");
        if (!x) {
            fprintf(stderr, "rolestub plugin not loaded\n");
            return 1;
        }
        x->emit_role(s_gather, "barrier_wait", "explicit");
        x->emit_role(s_work, "work", "implicit_task");
    }
    pthread_barrier_init(&bar, NULL, 3);
    pthread_t th[3];
    for (int t = 0; t < 3; t++) pthread_create(&th[t], NULL, worker, (void *)(size_t)t);
    for (int t = 0; t < 3; t++) pthread_join(th[t], NULL);
    jager_shutdown();
    return 0;
}
