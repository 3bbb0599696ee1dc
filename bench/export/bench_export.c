/* bench_export [SPANS] — how fast `jager export` writes each format, and how much memory
 * it holds, compared in the same run with a bare reader pass over the same recording.
 *
 * It records SPANS spans (default 1,000,000; trees of 37 spans, depth 3, on 2 threads, plus a
 * counter sample every ~100 spans and a log every ~1000) with the real core, then runs
 * `jager export --format F` for every format as a child process and prints CPU time,
 * events per second, the ratio to the bare read, and the child's peak RSS. Run it with
 * two sizes to see that memory stays flat while the input grows. Asserts nothing.
 * `bench_export SPANS KEEP.jgr` keeps the recording (on the same file system as /tmp). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jager.h"
#include "jager_reader.h"

static jager_site s_a, s_b, s_c;
static jager_counter c_n;
static uint64_t per_thread;

static void *worker(void *arg)
{
    (void)arg;
    uint64_t n = 0;
    for (uint64_t tree = 1; n < per_thread; tree++) {
        jager_span a = jager_span_begin(s_a);
        for (int i = 0; i < 4; i++) {
            jager_span b = jager_span_begin(s_b);
            for (int k = 0; k < 8; k++) {
                jager_span c = jager_span_begin(s_c);
                jager_span_end(c);
            }
            jager_span_end_bytes(b, 64);
        }
        jager_span_end(a);
        n += 37;
        if (tree % 3 == 0) jager_counter_add(c_n, 1);
        if (tree % 27 == 0) jager_log(JAGER_SEV_INFO, "progress, \"quoted\" message", NULL, 0);
        if (tree % 1000 == 0) jager_flush(); /* keep the rings from overflowing */
    }
    return NULL;
}

static int record(const char *path, uint64_t spans)
{
    jager_config c;
    jager_config_init(&c);
    c.output = path;
    c.quiet = 1;
    c.ring_bytes = 8u << 20;
    if (jager_init(&c) != JAGER_OK) return -1;
    s_a = jager_site_register("step", "bench.c", 1);
    s_b = jager_site_register("assemble", "bench.c", 2);
    s_c = jager_site_register("kernel", "bench.c", 3);
    c_n = jager_counter_register("bench.progress", NULL, JAGER_COUNTER_MONOTONIC);
    per_thread = spans / 2;
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    jager_stat st = {.struct_size = sizeof st};
    jager_stats(&st);
    jager_shutdown();
    printf("recorded %" PRIu64 " events (%" PRIu64 " dropped)\n", st.events_recorded, st.events_dropped);
    return 0;
}

static uint64_t bare_read(const char *path)
{
    jager_reader *r;
    if (jager_reader_open(path, &r) != JAGER_OK) return 0;
    jager_event ev;
    uint64_t n = 0, sum = 0;
    while (jager_reader_next(r, &ev) > 0) {
        n++;
        sum += ev.time_ns;
    }
    jager_reader_close(r);
    return n + (sum == 1); /* keep the loop honest */
}

static double cpu_s(const struct rusage *ru)
{
    return ru->ru_utime.tv_sec + ru->ru_utime.tv_usec * 1e-6 + ru->ru_stime.tv_sec + ru->ru_stime.tv_usec * 1e-6;
}

/* Run a command; its CPU seconds (user + system: wall time is meaningless on a shared,
 * loaded machine) and peak RSS in KiB. */
static int run(char *const argv[], double *secs, long *rss_kib)
{
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) return -1;
    *secs = cpu_s(&ru);
    *rss_kib = ru.ru_maxrss;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(int argc, char **argv)
{
    uint64_t spans = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    char dir[] = "/tmp/jager-bench-export-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char jgr[512], out[512];
    snprintf(jgr, sizeof jgr, "%s/run.jgr", dir);
    /* Record and read in child processes, so this process stays small: a child's peak RSS
     * (ru_maxrss) starts from its parent's size at fork. */
    pid_t pid = fork();
    if (pid == 0) {
        int rc = record(jgr, spans);
        fflush(stdout);
        _exit(rc ? 1 : 0);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) return 1;
    FILE *f = fopen(jgr, "rb");
    fseek(f, 0, SEEK_END);
    long bytes = ftell(f);
    fclose(f);

    int fds[2];
    if (pipe(fds)) return 1;
    pid = fork();
    if (pid == 0) {
        uint64_t n = bare_read(jgr);
        _exit(write(fds[1], &n, sizeof n) == sizeof n ? 0 : 1);
    }
    uint64_t events = 0;
    if (pid < 0 || read(fds[0], &events, sizeof events) != sizeof events) return 1;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) return 1;
    double base = cpu_s(&ru);
    long base_rss = ru.ru_maxrss;
    printf("file %.1f MiB, %" PRIu64 " events; bare reader pass %.3f CPU s (%.2f M events/s), peak RSS %.1f MiB\n\n",
           bytes / 1048576.0, events, base, events / base / 1e6, base_rss / 1024.0);
    printf("%-28s %9s %12s %14s %12s %10s\n", "format", "CPU s", "M events/s", "x bare read", "peak RSS", "output");
    static const char *const fmts[][3] = {{"chrome", NULL, NULL},
                                          {"speedscope", NULL, NULL},
                                          {"pprof", NULL, NULL},
                                          {"csv", NULL, NULL},
                                          {"parquet", "none", "never"},
                                          {"parquet", "none", "auto"},
                                          {"parquet", "zstd", "auto"}};
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
        snprintf(out, sizeof out, "%s/out-%zu", dir, i);
        char *args[16];
        int k = 0;
        args[k++] = (char *)JAGER_CLI_PATH;
        args[k++] = "export";
        args[k++] = "--format";
        args[k++] = (char *)fmts[i][0];
        args[k++] = jgr;
        args[k++] = "-o";
        args[k++] = out;
        if (fmts[i][1]) {
            args[k++] = "--parquet-codec";
            args[k++] = (char *)fmts[i][1];
            args[k++] = "--parquet-dict";
            args[k++] = (char *)fmts[i][2];
        }
        args[k] = NULL;
        double secs = 0;
        long rss = 0;
        int rc = run(args, &secs, &rss);
        char cmd[1100], label[64], size[32] = "?";
        snprintf(cmd, sizeof cmd, "du -sk '%s'", out);
        FILE *p = popen(cmd, "r");
        long kib = 0;
        if (p && fscanf(p, "%ld", &kib) == 1) snprintf(size, sizeof size, "%.1f MiB", kib / 1024.0);
        if (p) pclose(p);
        snprintf(label, sizeof label, "%s%s%s%s%s", fmts[i][0], fmts[i][1] ? " " : "", fmts[i][1] ? fmts[i][1] : "",
                 fmts[i][2] ? "/dict=" : "", fmts[i][2] ? fmts[i][2] : "");
        printf("%-28s %9.3f %12.2f %14.2f %9.1f MiB %10s%s\n", label, secs, events / secs / 1e6, secs / base,
               rss / 1024.0, size, rc ? " (failed)" : "");
    }
    if (argc > 2 && rename(jgr, argv[2]) == 0) printf("\nrecording kept as %s\n", argv[2]);
    snprintf(out, sizeof out, "rm -rf '%s'", dir);
    return system(out) == 0 ? 0 : 1;
}
