/* launch_prog — the program of the launch tests: N spans of site "launch.work" on the main
 * thread (instrumented, no jager_init: zero-code mode starts it), then exit 0.
 *   launch_prog N                 the program
 *   launch_prog workers K N       spawns K workers (fork + exec of itself with N), waits
 *                                 for them, and records nothing itself
 *   launch_prog wrap fork|exec CMD ARGS…   an unknown wrapper (not on the launcher list):
 *                                 runs CMD as a child and waits, or becomes it
 *   launch_prog forkwork K HOW    workers made by fork() WITHOUT exec: a thread records 5000
 *                                 spans of "launch.bg" meanwhile; the parent records 100 of
 *                                 "launch.parent", forks K workers — worker i records
 *                                 100 × (i + 1) of "launch.work" and leaves by exit(0)
 *                                 (HOW "exit"), _exit(0) ("_exit") or, in "nested", worker 0
 *                                 first forks a grandchild that records 50 of "launch.grand"
 *                                 and leaves by _exit(0), waits for it, and leaves by exit(0)
 *                                 —, waits for them, records 100 more of "launch.parent",
 *                                 joins the thread and returns 0
 *   launch_prog forkstorm K       K workers forked one after another (each records 10 of
 *                                 "launch.work" and leaves by _exit, or exit every other one)
 *                                 while a thread registers sites and records spans without a
 *                                 pause (the recorder's locks busy at every fork); the parent
 *                                 records 100 + 100 of "launch.parent" around them
 * JAGER_LAUNCH_TEST_SLEEP_MS: sleep that long after the spans (a writer that holds its file).
 * JAGER_LAUNCH_TEST_INIT=1: call jager_init(NULL) first (run without the preload). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jager.h"

static volatile double sink;

static int work_at(const char *name, long n)
{
    jager_site site = jager_site_register(name, __FILE__, __LINE__);
    for (long i = 0; i < n; i++) {
        jager_span s = jager_span_begin(site);
        for (int k = 0; k < 100; k++) sink += k * 0.5;
        jager_span_end(s);
    }
    return 0;
}

static int work(long n) { return work_at("launch.work", n); }

static void *background(void *arg)
{
    (void)arg;
    work_at("launch.bg", 5000);
    return NULL;
}

static int wait_ok(pid_t pid)
{
    int st = 0;
    return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* forkwork K HOW (above) */
static int fork_workers(int k, const char *how)
{
    pthread_t bg;
    if (pthread_create(&bg, NULL, background, NULL) != 0) return 1;
    work_at("launch.parent", 100);
    pid_t pids[16];
    if (k > 16) k = 16;
    for (int i = 0; i < k; i++) {
        pid_t pid = fork();
        if (pid < 0) return 1;
        if (pid == 0) {
            if (!strcmp(how, "nested") && i == 0) {
                pid_t g = fork();
                if (g < 0) _exit(1);
                if (g == 0) {
                    work_at("launch.grand", 50);
                    _exit(0);
                }
                work(100L * (i + 1));
                exit(wait_ok(g) ? 0 : 1);
            }
            work(100L * (i + 1));
            if (!strcmp(how, "_exit")) _exit(0);
            exit(0);
        }
        pids[i] = pid;
    }
    int rc = 0;
    for (int i = 0; i < k; i++)
        if (!wait_ok(pids[i])) rc = 1;
    work_at("launch.parent", 100);
    pthread_join(bg, NULL);
    return rc;
}

static atomic_int storm_stop;

static void *storm(void *arg)
{
    (void)arg;
    char name[32];
    for (unsigned i = 0; !atomic_load(&storm_stop); i++) {
        snprintf(name, sizeof name, "launch.reg.%u", i % 4096);
        jager_site site = jager_site_register(name, __FILE__, __LINE__);
        jager_span_end(jager_span_begin(site));
    }
    return NULL;
}

/* forkstorm K (above) */
static int fork_storm(int k)
{
    pthread_t bg;
    if (pthread_create(&bg, NULL, storm, NULL) != 0) return 1;
    work_at("launch.parent", 100);
    int rc = 0;
    for (int i = 0; i < k; i++) {
        pid_t pid = fork();
        if (pid < 0) return 1;
        if (pid == 0) {
            work(10);
            if (i % 2) exit(0);
            _exit(0);
        }
        if (!wait_ok(pid)) rc = 1;
    }
    atomic_store(&storm_stop, 1);
    pthread_join(bg, NULL);
    work_at("launch.parent", 100);
    return rc;
}

static int run_child(char **argv)
{
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        execvp(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) != pid) return 1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int main(int argc, char **argv)
{
    const char *init = getenv("JAGER_LAUNCH_TEST_INIT");
    if (init && !strcmp(init, "1") && jager_init(NULL) != JAGER_OK) {
        fprintf(stderr, "launch_prog: jager_init: %s\n", jager_last_error());
        return 65;
    }
    if (argc >= 4 && !strcmp(argv[1], "forkwork")) return fork_workers(atoi(argv[2]), argv[3]);
    if (argc >= 3 && !strcmp(argv[1], "forkstorm")) return fork_storm(atoi(argv[2]));
    if (argc >= 4 && !strcmp(argv[1], "workers")) {
        int k = atoi(argv[2]), rc = 0;
        for (int i = 0; i < k; i++) {
            char *args[] = {argv[0], argv[3], NULL};
            pid_t pid = fork();
            if (pid < 0) return 1;
            if (pid == 0) {
                execv("/proc/self/exe", args);
                _exit(127);
            }
        }
        for (int i = 0; i < k; i++) {
            int st = 0;
            if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) rc = 1;
        }
        return rc;
    }
    if (argc >= 4 && !strcmp(argv[1], "wrap")) {
        if (!strcmp(argv[2], "exec")) {
            execvp(argv[3], argv + 3);
            return 127;
        }
        return run_child(argv + 3);
    }
    work(argc > 1 ? atol(argv[1]) : 1000);
    /* the concurrent-writer test: hold the file (recorded, still running) for a while */
    const char *ms = getenv("JAGER_LAUNCH_TEST_SLEEP_MS");
    if (ms) usleep((useconds_t)atoi(ms) * 1000u);
    return 0;
}
