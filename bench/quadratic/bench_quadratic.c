/* bench_quadratic — the inputs that once cost quadratic time (issue 16 item 12), each at
 * size N and 2N in the same run, side by side: a time ratio near 2 is linear, near 4
 * quadratic. Asserts nothing, unless --check.
 *
 *   bench_quadratic [case ...] [--scale F] [--keep]   (--keep: leave the recordings in $TMPDIR)
 *   bench_quadratic --check R [--scale F] [case ...]
 *
 * --check R (the quadratic_bound test): CPU time only (the child's user + system, from
 * wait4/RUSAGE_CHILDREN: not disturbed by other work on a loaded machine as wall time is),
 * the least of 2 runs of each side, every command of the check list below (more commands
 * than the bench rows: the metadata keys through every command). N doubles until the N run
 * takes 50 ms of CPU (a ratio of smaller times is noise). Exit 1 when some 2N/N ratio
 * exceeds R on two measurements in a row (linear: ~2, quadratic: ~4).
 *
 * cases (default: all), with N at scale 1:
 *   meta_host  N = 30000  jager_metadata_set of N distinct keys in the host while recording (a
 *                         span after each, jager_flush every 1024: the file's META blocks)
 *   meta       N = 100000 `jager info` of a recording with N metadata keys
 *   symbols    N = 100000 `jager export pprof` of a recording with N inline frames (symbols)
 *                         for one address, a sampled stack through it
 *   chain      N = 20000  `jager summary`, `jager report` and `jager export speedscope|pprof` of
 *                         a chain of N spans (N sites) each the parent of the next (no PATHS
 *                         block: the tree is built from the events, as for a 1.0 file)
 *   stack      N = 500000 `jager export pprof` of one sampled stack of N frames
 *   sites      N = 100000 `jager report` (the page's data) and `jager compare A.jgr A.jgr` of N
 *                         sites with one call each (bench/quadratic/sites.mjs: the page itself)
 *
 * Recordings are written through the real core (linked statically, for the sampler's event
 * type), the chain rewritten block by block from N sibling spans (tests/support/jgr_edit).
 * Tool times are wall times of the real `jager` command (the build's, or $JAGER_BIN: an
 * older build, to compare), best of 2, with that run's CPU time (steadier on a loaded
 * machine). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "jager.h"
#include "jgr_edit.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *dir = "/tmp";

static int start(const char *path)
{
    jager_config c;
    jager_config_init(&c);
    c.output = path;
    c.quiet = 1;
    c.ring_bytes = 64u << 20; /* 400k spans fit: the collector drains it, no jager_flush needed */
    c.sample_mode = JAGER_SAMPLE_ALL; /* every span an event, whatever the default thinning */
    if (jager_init(&c) != JAGER_OK) {
        fprintf(stderr, "bench_quadratic: jager_init: %s\n", jager_last_error());
        return -1;
    }
    return 0;
}

/* ---- the recordings (each made in a child process: one recording per process) ---- */

static double rec_meta(const char *path, unsigned n)
{
    if (start(path)) return -1;
    char k[64], v[64];
    jager_site s = jager_site_register("work", "meta.c", 1);
    double t0 = now_s();
    for (unsigned i = 0; i < n; i++) { /* keys set while recording: a span each, a flush every 1024 */
        snprintf(k, sizeof k, "bench.key.%u", i);
        snprintf(v, sizeof v, "value %u", i);
        jager_metadata_set(k, v);
        jager_span_end(jager_span_begin(s));
        if (i % 1024 == 1023) jager_flush();
    }
    double t = now_s() - t0;
    jager_shutdown();
    return t;
}

static uint16_t sample_type(void)
{
    static const jager_field_desc f[6] = {{"stack", JAGER_FIELD_STACK, 0},   {"os_tid", JAGER_FIELD_U64, 0},
                                          {"site", JAGER_FIELD_U64, 0},      {"weight", JAGER_FIELD_U64, 0},
                                          {"cpu_ns", JAGER_FIELD_DURATION_NS, 0}, {"flags", JAGER_FIELD_U64, 0}};
    uint16_t t = 0;
    jg_type_register("sampler.sample", f, 6, 0, &t);
    return t;
}

static void emit_samples(uint16_t type, jager_stack_id st, int count)
{
    for (int i = 0; i < count; i++) {
        uint64_t fields[6] = {st, 0, 0, 1, 1000000, 0};
        jg_emit_plugin(type, 0, fields, 6);
    }
}

static double rec_symbols(const char *path, unsigned n)
{
    if (start(path)) return -1;
    uint16_t type = sample_type();
    uint64_t ips[3] = {0x7000100, 0x7000200, 0x7000300};
    jager_stack_id st = jager_stack_intern(ips, 3);
    char fn[64];
    double t0 = now_s();
    for (unsigned i = 0; i < n; i++) {
        snprintf(fn, sizeof fn, "inlined_%u", i);
        jager_symbol_add(ips[1], i, fn, "deep.h", i + 1);
    }
    double t = now_s() - t0;
    jager_symbol_add(ips[0], 0, "main", "main.c", 1);
    jager_symbol_add(ips[2], 0, "leaf", "leaf.c", 1);
    emit_samples(type, st, 100);
    jager_shutdown();
    return t;
}

static double rec_stack(const char *path, unsigned n)
{
    if (start(path)) return -1;
    uint16_t type = sample_type();
    uint64_t *ips = malloc(n * sizeof *ips);
    for (unsigned i = 0; i < n; i++) ips[i] = 0x10000000ull + 16ull * i;
    jager_stack_id st = jager_stack_intern(ips, n);
    free(ips);
    emit_samples(type, st, 10);
    jager_shutdown();
    return 0;
}

static double rec_siblings(const char *path, unsigned n)
{
    if (start(path)) return -1;
    char name[64];
    for (unsigned i = 0; i < n; i++) { /* a site per link: a chain of one site would fold as recursion */
        snprintf(name, sizeof name, "link_%u", i);
        jager_span_end(jager_span_begin(jager_site_register(name, "chain.c", i + 1)));
        /* no jager_flush: each writes a STATS block of every site (F flushes × S sites) */
    }
    jager_shutdown();
    return 0;
}

static double rec_sites(const char *path, unsigned n)
{
    if (start(path)) return -1;
    char name[64];
    for (unsigned i = 0; i < n; i++) {
        snprintf(name, sizeof name, "kernel_%u", i);
        jager_span_end(jager_span_begin(jager_site_register(name, "sites.c", i + 1)));
    }
    jager_shutdown();
    return 0;
}

static double rec_chain(const char *path, unsigned n)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.siblings", path);
    if (rec_siblings(tmp, n) < 0) return -1;
    tu_jgr_chain c = {n, 0, 0};
    int rc = tu_jgr_edit_file(tmp, path, tu_jgr_to_chain, &c);
    remove(tmp);
    return rc == 0 && c.k == n ? 0 : -1;
}

static double ru_cpu(const struct rusage *ru)
{
    return (double)ru->ru_utime.tv_sec + (double)ru->ru_stime.tv_sec +
           1e-6 * (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec);
}

/* Make a recording in a child; returns the host time it measured (or -1), and the
 * child's whole CPU time (its threads: the collector's work on the keys included) in *cpu. */
static double record(double (*fn)(const char *, unsigned), const char *path, unsigned n, double *cpu)
{
    int p[2];
    if (pipe(p)) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        double t = fn(path, n);
        if (write(p[1], &t, sizeof t) != sizeof t) _exit(1);
        _exit(t < 0);
    }
    close(p[1]);
    double t = -1;
    if (read(p[0], &t, sizeof t) != sizeof t) t = -1;
    close(p[0]);
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) != pid) return -1;
    *cpu = ru_cpu(&ru);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? t : -1;
}

static double children_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return ru_cpu(&ru);
}

/* Wall time of the command, best of 2; its CPU time (user + system) in *cpu, of that run.
 * On a loaded machine the CPU ratio is the steadier one. */
static double run_tool(const char *args, double *cpu)
{
    char cmd[8192];
    const char *cli = getenv("JAGER_BIN") && *getenv("JAGER_BIN") ? getenv("JAGER_BIN") : JAGER_CLI;
    snprintf(cmd, sizeof cmd, "JAGER_QUIET=1 %s %s >/dev/null 2>&1", cli, args);
    double best = 1e30;
    for (int i = 0; i < 2; i++) {
        double c0 = children_cpu(), t0 = now_s();
        int rc = system(cmd);
        double t = now_s() - t0, c = children_cpu() - c0;
        if (rc != 0) {
            fprintf(stderr, "bench_quadratic: `%s` failed (%d)\n", cmd, rc);
            return -1;
        }
        if (t < best) {
            best = t;
            *cpu = c;
        }
        if (t > 20) break; /* slow enough: once */
    }
    return best;
}

static void row(const char *what, unsigned n, double a, double b, double ca, double cb)
{
    printf("%-38s N=%-8u %9.3f s   2N=%-8u %9.3f s   ratio %5.2f", what, n, a, 2 * n, b, a > 0 ? b / a : 0);
    if (ca >= 0) printf("   cpu %7.3f / %7.3f s  ratio %5.2f", ca, cb, ca > 0 ? cb / ca : 0);
    printf("\n");
    fflush(stdout);
}

typedef struct bcase {
    const char *name;
    unsigned n;
    double (*rec)(const char *, unsigned);
    const char *tools[4]; /* "%s" is the recording (and %s.out an output) */
} bcase;

/* ---- --check: the quadratic_bound test ---- */

typedef struct ccase {
    const char *name;
    unsigned n; /* the first N at scale 1; doubled until the N run is long enough to judge */
    double (*rec)(const char *, unsigned);
    int host;   /* 1: the recording child's CPU is judged too (the host's jager_*_set/add) */
    const char *tools[10];
} ccase;

static const ccase checks[] = {
    {"meta", 200000, rec_meta, 1, /* the keys set in the host, then read by every command */
     {"info %s", "summary %s", "hunt %s", "dump %s", "report -o %s.html %s",
      "export --format chrome -o %s.trace.json %s", "export --format pprof -o %s.pb.gz %s", "merge -o %s.job.jgr %s",
      "compare %s %s"}},
    {"symbols", 200000, rec_symbols, 1, {"export --format pprof -o %s.pb.gz %s"}},
    {"chain", 50000, rec_chain, 0,
     {"summary %s", "report -o %s.html %s", "export --format speedscope -o %s.ss.json %s", "export --format pprof -o %s.pb.gz %s"}},
    {"stack", 100000, rec_stack, 0, {"export --format pprof -o %s.pb.gz %s"}},
    {"sites", 25000, rec_sites, 0, {"report -o %s.html %s", "compare %s %s"}},
};

static void check_cleanup(char path[2][4096])
{
    static const char *suf[] = {"", ".pb.gz", ".cpu.pb.gz", ".ss.json", ".html", ".trace.json", ".job.jgr"};
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < sizeof suf / sizeof suf[0]; i++) {
            char o[4200];
            snprintf(o, sizeof o, "%s%s", path[s], suf[i]);
            remove(o);
        }
}

/* The least CPU time of \p runs runs of `jager ARGS` (the command's exit status ignored beyond
 * 0..3: a compare of a recording with itself may exit 1, "nothing to compare"). */
static double tool_cpu(const char *args, int runs)
{
    char cmd[8192];
    const char *cli = getenv("JAGER_BIN") && *getenv("JAGER_BIN") ? getenv("JAGER_BIN") : JAGER_CLI;
    snprintf(cmd, sizeof cmd, "JAGER_QUIET=1 exec %s %s >/dev/null 2>&1", cli, args);
    double best = 1e30;
    for (int i = 0; i < runs; i++) {
        double c0 = children_cpu();
        int rc = system(cmd);
        double c = children_cpu() - c0;
        if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) > 3) {
            fprintf(stderr, "quadratic_bound: `%s` failed (%d)\n", cmd, rc);
            return -1;
        }
        if (c < best) best = c;
    }
    return best;
}

/* One item's CPU at N and 2N: the host's (tool NULL: the recordings are made again) or a
 * command's. */
static int measure(const ccase *k, const char *tool, char path[2][4096], unsigned n, double cpu[2])
{
    for (int s = 0; s < 2; s++) {
        if (!tool) {
            double best = 1e30, c;
            for (int i = 0; i < 2; i++) {
                if (record(k->rec, path[s], n << s, &c) < 0) return -1;
                if (c < best) best = c;
            }
            cpu[s] = best;
            continue;
        }
        char args[8192];
        snprintf(args, sizeof args, tool, path[s], path[s]);
        if ((cpu[s] = tool_cpu(args, 2)) < 0) return -1;
    }
    return 0;
}

/* Whether case \p name is to run: all of them, or those named on the command line. */
static int wanted(const char *name, const char **only, int nonly)
{
    for (int i = 0; i < nonly; i++)
        if (!strcmp(only[i], name)) return 1;
    return !nonly;
}

/* A case's N at \p scale, at least 2. */
static unsigned scaled(unsigned n, double scale)
{
    unsigned v = (unsigned)(n * scale);
    return v < 2 ? 2 : v;
}

static int check(double bound, double scale, const char **only, int nonly)
{
    const double min_cpu = 0.05; /* s at N: below, fixed costs and clock ticks blur the ratio */
    int failed = 0;
    printf("quadratic_bound: CPU time at N and 2N, least of 2 runs; fails above a ratio of %.2f\n", bound);
    for (size_t c = 0; c < sizeof checks / sizeof checks[0]; c++) {
        const ccase *k = &checks[c];
        if (!wanted(k->name, only, nonly)) continue;
        unsigned n = scaled(k->n, scale);
        char path[2][4096];
        for (int grow = 0;; grow++) {
            double cpu[2], least = 1e30;
            for (int s = 0; s < 2; s++) {
                snprintf(path[s], sizeof path[s], "%s/quadratic-bound-%d-%s-%u.jgr", dir, (int)getpid(), k->name, n << s);
                if (record(k->rec, path[s], n << s, &cpu[s]) < 0) {
                    fprintf(stderr, "quadratic_bound: %s: cannot record %u\n", k->name, n << s);
                    check_cleanup(path);
                    return 2;
                }
            }
            /* the smallest N-run CPU of the items decides whether N is large enough */
            if (k->host && cpu[0] < least) least = cpu[0];
            for (int t = 0; t < 10 && k->tools[t] && least >= min_cpu; t++) {
                char args[8192];
                snprintf(args, sizeof args, k->tools[t], path[0], path[0]);
                double ct = tool_cpu(args, 1);
                if (ct < 0) {
                    check_cleanup(path);
                    return 2;
                }
                if (ct < least) least = ct;
            }
            if (least >= min_cpu || grow == 6) break;
            check_cleanup(path);
            n *= 2;
        }
        for (int t = -1; t < 10; t++) {
            const char *tool = t < 0 ? NULL : k->tools[t];
            if (t >= 0 && !tool) break;
            if (t < 0 && !k->host) continue;
            char what[128];
            snprintf(what, sizeof what, "%s: %s%.*s", k->name, tool ? "jager " : "", tool ? (int)strcspn(tool, "%-") : 4,
                     tool ? tool : "host");
            char *e = what + strlen(what);
            while (e > what && e[-1] == ' ') *--e = 0;
            if (tool && strstr(tool, "--format ")) {
                const char *f = strstr(tool, "--format ") + 9;
                snprintf(e, sizeof what - (size_t)(e - what), " %.*s", (int)strcspn(f, " "), f);
            }
            double cpu[2], ratio = 0;
            for (int attempt = 0; attempt < 2; attempt++) { /* a real quadratic fails twice */
                if (measure(k, tool, path, n, cpu)) {
                    fprintf(stderr, "quadratic_bound: %s: cannot measure\n", what);
                    check_cleanup(path);
                    return 2;
                }
                ratio = cpu[0] > 0 ? cpu[1] / cpu[0] : 1e9;
                if (ratio <= bound) break;
            }
            int bad = ratio > bound;
            printf("%-40s N=%-8u cpu %7.3f s  2N cpu %7.3f s  ratio %5.2f  %s\n", what, n, cpu[0], cpu[1], ratio,
                   bad ? "FAIL (quadratic?)" : "ok");
            fflush(stdout);
            failed |= bad;
        }
        check_cleanup(path);
    }
    return failed;
}

int main(int argc, char **argv)
{
    double scale = 1, bound = 0;
    int keep = 0;
    const char *only[16];
    int nonly = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--scale") && i + 1 < argc) scale = atof(argv[++i]);
        else if (!strcmp(argv[i], "--check") && i + 1 < argc) bound = atof(argv[++i]);
        else if (!strcmp(argv[i], "--keep")) keep = 1;
        else if (nonly < 16) only[nonly++] = argv[i];
    }
    if (getenv("TMPDIR")) dir = getenv("TMPDIR");
    if (bound > 0) return check(bound, scale, only, nonly);
    static const bcase cases[] = {
        {"meta_host", 30000, rec_meta, {NULL}},
        {"meta", 100000, rec_meta, {"info %s"}},
        {"symbols", 100000, rec_symbols, {"export --format pprof -o %s.pb.gz %s"}},
        {"chain", 20000, rec_chain,
         {"summary %s", "report -o %s.html %s", "export --format speedscope -o %s.ss.json %s", "export --format pprof -o %s.pb.gz %s"}},
        {"stack", 500000, rec_stack, {"export --format pprof -o %s.pb.gz %s"}},
        {"sites", 100000, rec_sites, {"report -o %s.html %s", "compare %s %s"}},
    };
    printf("bench_quadratic: each input at N and 2N (ratio ~2: linear, ~4: quadratic)\n");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const bcase *k = &cases[c];
        if (!wanted(k->name, only, nonly)) continue;
        unsigned n = scaled(k->n, scale);
        char path[2][4096];
        double host[2], hcpu;
        for (int s = 0; s < 2; s++) {
            snprintf(path[s], sizeof path[s], "%s/bench-quadratic-%s-%u.jgr", dir, k->name, n << s);
            host[s] = record(k->rec, path[s], n << s, &hcpu);
            if (host[s] < 0) {
                fprintf(stderr, "bench_quadratic: %s: cannot record %u\n", k->name, n << s);
                return 1;
            }
        }
        if (!k->tools[0]) row("jager_metadata_set (host)", n, host[0], host[1], -1, -1);
        if (!strcmp(k->name, "symbols")) row("jager_symbol_add, one address (host)", n, host[0], host[1], -1, -1);
        for (int t = 0; t < 4 && k->tools[t]; t++) {
            double tt[2], cpu[2] = {0, 0};
            char args[2][8192];
            for (int s = 0; s < 2; s++) {
                snprintf(args[s], sizeof args[s], k->tools[t], path[s], path[s]);
                tt[s] = run_tool(args[s], &cpu[s]);
            }
            char what[128];
            snprintf(what, sizeof what, "%s: jager %.*s", k->name, (int)strcspn(k->tools[t], "%-"), k->tools[t]);
            char *e = what + strlen(what);
            while (e > what && e[-1] == ' ') *--e = 0;
            if (strstr(k->tools[t], "--format")) {
                const char *f = strstr(k->tools[t], "--format ") + 9;
                snprintf(e, sizeof what - (size_t)(e - what), " %.*s", (int)strcspn(f, " "), f);
            }
            row(what, n, tt[0], tt[1], cpu[0], cpu[1]);
        }
        for (int s = 0; s < 2 && !keep; s++) {
            char o[8400];
            remove(path[s]);
            static const char *suf[] = {".pb.gz", ".cpu.pb.gz", ".ss.json", ".html"};
            for (int i = 0; i < 4; i++) {
                snprintf(o, sizeof o, "%s%s", path[s], suf[i]);
                remove(o);
            }
        }
    }
    return 0;
}
