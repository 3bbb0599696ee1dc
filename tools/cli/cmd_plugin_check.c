/*
 * cmd_plugin_check.c — `jager plugin-check libjager-x.so`: what a plugin author runs
 * before shipping. The plugin is loaded in a scratch process (a fork of this one, so a
 * crash or a hang costs nothing), its lifecycle runs twice under a short recording, and
 * every rule it breaks is reported: it loads and initialises, its emits are well formed
 * (no bad_emit), nothing is emitted after stop (after_stop), no thread it started
 * outlives shutdown, its type names and fields pass the host's checks, no callback
 * hangs (the scratch process is bounded), it does not crash. Every warning it causes is
 * shown. Exit 0: no rule broken; 2: some rule broken (or the plugin could not be run);
 * 3: it stepped aside in the scratch process (not a Julia process, no GPU), so its
 * lifecycle was not checked; 1: usage.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "jager.h"
#include "model.h"

#define CYCLES 2
#define RUN_MS 150
#define LIMIT_MS 20000 /* default: the scratch process is killed past this (a callback never returned) */

typedef struct cycle_result {
    int init_status, loaded;
    uint64_t bad_emit, after_stop, events;
    int threads_left;
} cycle_result;

/* Threads of this process, the host's idle plugin workers ("jager-plugin", kept for
 * reuse once a plugin is unloaded) left out. */
static int count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[300], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f) {
            if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
            fclose(f);
        }
        n += strcmp(comm, "jager-plugin\n") != 0;
    }
    closedir(d);
    return n;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {}
}

/* The scratch process: two recordings with only this plugin; results as binary structs
 * on \p out, diagnostics on stderr (a pipe to the parent). */
static void scratch(const char *dir, const char *name, int out)
{
    char path[128];
    /* Callbacks unbounded here: a hang is this check's to find (by the time limit), not
     * the host's to cut off and hide. */
    setenv("JAGER_PLUGIN_TIMEOUT_MS", "0", 1);
    for (int c = 0; c < CYCLES; c++) {
        cycle_result r = {0};
        snprintf(path, sizeof path, "/tmp/jager-plugin-check-%d-%d.jgr", (int)getpid(), c);
        int before = count_threads();
        jager_config cfg;
        jager_config_init(&cfg);
        cfg.plugins = name;
        cfg.plugin_path = dir;
        cfg.output = path;
        cfg.quiet = 0;
        r.init_status = jager_init(&cfg);
        if (r.init_status == JAGER_OK) {
            nap_ms(RUN_MS / 2);
            jager_flush();
            nap_ms(RUN_MS / 2);
            jager_stat st = {.struct_size = sizeof st};
            jager_shutdown();
            nap_ms(100); /* a thread its shutdown asked to end has ended by now */
            if (jager_stats(&st) == JAGER_OK) {
                r.bad_emit = st.dropped[JAGER_DROP_BAD_EMIT];
                r.after_stop = st.dropped[JAGER_DROP_AFTER_STOP];
            }
            r.threads_left = count_threads() - before;
            jager_reader *rd = NULL;
            if (jager_reader_open(path, &rd) == JAGER_OK) {
                const char *loaded = jager_reader_meta(rd, "jager.plugins");
                r.loaded = loaded && strcmp(loaded, name) == 0;
                jager_event ev;
                while (jager_reader_next(rd, &ev) == 1)
                    if (ev.type >= JAGER_EV_FIRST_PLUGIN) r.events++;
                jager_reader_close(rd);
            }
        }
        unlink(path);
        if (write(out, &r, sizeof r) != (ssize_t)sizeof r) _exit(3);
    }
    _exit(0);
}

static int failures;
static void rule(int ok, const char *what, const char *detail)
{
    printf("%s  %s%s%s\n", ok ? "ok  " : "FAIL", what, detail && *detail ? ": " : "", detail ? detail : "");
    if (!ok) failures++;
}

static void usage(FILE *out)
{
    fputs("usage: jager plugin-check [--timeout-ms N] PATH/libjager-NAME.so\n"
          "Loads the plugin in a scratch process, runs its lifecycle twice under a short\n"
          "recording and reports every rule it breaks (exit 2), or none (exit 0).\n"
          "--timeout-ms: kill the scratch process after N ms (default 20000): a hang.\n",
          out);
}

int cmd_plugin_check(int argc, char **argv)
{
    uint64_t timeout_ms = LIMIT_MS;
    const cli_opt opts[] = {
        {.name = "--timeout-ms", .kind = CLI_UINT, .dest = &timeout_ms, .min = 100, .max = 3600000,
         .bad = "--timeout-ms takes 100 to 3600000"},
    };
    const cli_spec spec = {"plugin-check", usage, opts, sizeof opts / sizeof opts[0], 1, 1, 0, "plugin"};
    const char *pos[1] = {0};
    size_t npos = 0;
    int parsed = cli_parse(&spec, argc, argv, pos, &npos);
    if (parsed) return cli_parse_exit(parsed);
    long limit_ms = (long)timeout_ms;
    const char *file = pos[0];
    const char *slash = strrchr(file, '/');
    const char *base = slash ? slash + 1 : file;
    size_t bl = strlen(base);
    if (strncmp(base, "libjager-", 9) != 0 || bl < 13 || strcmp(base + bl - 3, ".so") != 0 || bl - 12 > 63) {
        fprintf(stderr, "jager plugin-check: %s: a plugin file is named libjager-NAME.so\n", file);
        return JAGER_EXIT_USAGE;
    }
    char name[64], dir[4096];
    snprintf(name, sizeof name, "%.*s", (int)(bl - 12), base + 9);
    if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - file), file);
    else snprintf(dir, sizeof dir, ".");
    if (access(file, R_OK) != 0) {
        fprintf(stderr, "jager plugin-check: %s: %s\n", file, strerror(errno));
        return JAGER_EXIT_INPUT;
    }
    int res[2], err[2];
    if (pipe(res) || pipe(err)) {
        fprintf(stderr, "jager plugin-check: pipe: %s\n", strerror(errno));
        return JAGER_EXIT_INPUT;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "jager plugin-check: fork: %s\n", strerror(errno));
        return JAGER_EXIT_INPUT;
    }
    if (pid == 0) {
        close(res[0]);
        close(err[0]);
        dup2(err[1], 2);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, 1);
        unsetenv("JAGER_PLUGINS");
        setenv("JAGER_SIGNALS", "0", 1);
        scratch(dir, name, res[1]);
    }
    close(res[1]);
    close(err[1]);
    /* Collect results and diagnostics until the scratch process ends or the limit passes. */
    cycle_result r[CYCLES];
    size_t got = 0;
    char diag[65536];
    size_t dl = 0;
    int res_open = 1, err_open = 1, hung = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (res_open || err_open) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left = limit_ms - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
        if (left <= 0) {
            hung = 1;
            kill(pid, SIGKILL);
            break;
        }
        struct pollfd p[2] = {{res_open ? res[0] : -1, POLLIN, 0}, {err_open ? err[0] : -1, POLLIN, 0}};
        if (poll(p, 2, (int)left) < 0 && errno != EINTR) break;
        if (p[0].revents) {
            ssize_t n = read(res[0], (char *)r + got, sizeof r - got);
            if (n <= 0) res_open = 0;
            else got += (size_t)n;
        }
        if (p[1].revents) {
            char buf[4096];
            ssize_t n = read(err[0], buf, sizeof buf);
            if (n <= 0) err_open = 0;
            else {
                size_t k = (size_t)n < sizeof diag - 1 - dl ? (size_t)n : sizeof diag - 1 - dl;
                memcpy(diag + dl, buf, k);
                dl += k;
            }
        }
    }
    diag[dl] = 0;
    int status = 0;
    waitpid(pid, &status, 0);
    close(res[0]);
    close(err[0]);

    char q[512], d[256];
    printf("plugin-check %s (plugin '%s'), %d recordings of %d ms\n", file, name, CYCLES, RUN_MS);
    uint32_t cycles = (uint32_t)(got / sizeof r[0]);
    snprintf(d, sizeof d, "the scratch process did not finish within %ld ms and was killed (a callback never returned)", limit_ms);
    rule(!hung, "no callback hangs", hung ? d : NULL);
    if (!hung && WIFSIGNALED(status)) {
        snprintf(d, sizeof d, "the scratch process died of signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
        rule(0, "does not crash", d);
    } else if (!hung) {
        rule(1, "does not crash", NULL);
    }
    /* A scratch process that hung or died before both recordings ended leaves the other
     * rules unjudged: said as such rather than counted as passed or broken. */
    int stepped = 0;
    if ((hung || WIFSIGNALED(status)) && cycles < CYCLES) {
        printf("skip  the other rules: not reached (the scratch process %s during recording %u)\n",
               hung ? "was killed" : "died", cycles + 1);
        goto diagnostics;
    }
    int loads = cycles == CYCLES;
    for (uint32_t c = 0; c < cycles; c++) loads &= r[c].init_status == JAGER_OK && r[c].loaded;
    /* A plugin that steps aside here (not a Julia process, no GPU) breaks no rule, but its
     * lifecycle could not be checked: said, and exit 3. */
    char aside[96];
    snprintf(aside, sizeof aside, "plugin '%s' stepped aside", name);
    stepped = !loads && strstr(diag, aside) != NULL;
    if (stepped)
        printf("skip  loads, initialises and starts: it stepped aside in the scratch process (below); run the check where "
               "it applies\n");
    else
        rule(loads, "loads, initialises and starts in both recordings",
             loads ? NULL : "see its diagnostics below (refused, init or start failed)");
    uint64_t bad = 0, late = 0, ev[CYCLES] = {0};
    int threads = 0;
    for (uint32_t c = 0; c < cycles; c++) {
        bad += r[c].bad_emit;
        late += r[c].after_stop;
        ev[c] = r[c].events;
        if (r[c].threads_left > threads) threads = r[c].threads_left;
    }
    snprintf(d, sizeof d, "%" PRIu64 " refused (wrong field count, unknown or core type id): counted as bad_emit", bad);
    rule(bad == 0, "every emit matches its registered type", bad ? d : NULL);
    snprintf(d, sizeof d, "%" PRIu64 " events emitted after stop returned (lost, counted as after_stop): end threads in stop", late);
    rule(late == 0, "nothing emitted after stop", late ? d : NULL);
    snprintf(d, sizeof d, "%d thread%s still running after shutdown: join every thread in stop (or use host->timer_start)",
             threads, threads == 1 ? "" : "s");
    rule(threads <= 0, "no thread outlives shutdown", threads > 0 ? d : NULL);
    int names_ok = !strstr(diag, "register_type") && !strstr(diag, "must be named");
    rule(names_ok, "event types named <plugin>.<snake_case>, fields snake_case and unique",
         names_ok ? NULL : "the host refused a registration (below)");
    snprintf(d, sizeof d, "%" PRIu64 " plugin events in the first recording, %" PRIu64 " in the second", ev[0], ev[1]);
    printf("info  %s\n", d);
diagnostics:
    if (dl) { /* each distinct line once, with how often it came */
        printf("diagnostics of the scratch process:\n");
        char *lines[256];
        unsigned times[256];
        size_t nl_ = 0;
        for (char *line = diag, *nl; *line; line = nl + 1) {
            nl = strchr(line, '\n');
            if (nl) *nl = 0;
            size_t k = 0;
            while (k < nl_ && strcmp(lines[k], line) != 0) k++;
            if (k == nl_ && nl_ < 256) {
                lines[nl_] = line;
                times[nl_++] = 0;
            }
            if (k < nl_) times[k]++;
            if (!nl) break;
        }
        for (size_t k = 0; k < nl_; k++) {
            jm_text_fit(q, sizeof q, lines[k], 200); /* control bytes escaped, long lines cut */
            if (times[k] > 1) printf("  %s  (×%u)\n", q, times[k]);
            else printf("  %s\n", q);
        }
    }
    printf("%s: %d rule%s broken%s\n", failures ? "FAIL" : "ok", failures, failures == 1 ? "" : "s",
           stepped ? " (not checked: it stepped aside)" : "");
    return failures ? JAGER_EXIT_INPUT : stepped ? JAGER_EXIT_PARTIAL : JAGER_EXIT_OK;
}
