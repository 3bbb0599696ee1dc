/* bench_run.c — the runner: fork/exec under JAGER_OUTPUT, then the recording's exact site totals. */
#include "bench_run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jager_reader.h"
#include "model.h"
#include "stats.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Per-site call durations of one recording, kept while the model is built in the same pass,
 * so each run's median call is exact whenever every call was recorded. */
typedef struct durations {
    double *v;
    size_t n, cap;
} durations;

static int durations_add(durations **tab, size_t *ntab, uint32_t site, double d)
{
    if (site >= *ntab) {
        size_t n = *ntab ? *ntab : 64;
        while (n <= site) n *= 2;
        durations *t = realloc(*tab, n * sizeof *t);
        if (!t) return -1;
        memset(t + *ntab, 0, (n - *ntab) * sizeof *t);
        *tab = t;
        *ntab = n;
    }
    durations *x = &(*tab)[site];
    if (x->n == x->cap) {
        size_t c = x->cap ? x->cap * 2 : 64;
        double *v = realloc(x->v, c * sizeof *v);
        if (!v) return -1;
        x->v = v;
        x->cap = c;
    }
    x->v[x->n++] = d;
    return 0;
}

/* Read every event once: into the model (exact totals, bytes, GC) and into the durations. */
static int read_recording(jager_reader *rd, jm_model **m, durations **tab, size_t *ntab, int *read_rc)
{
    if (jm_model_new(rd, NULL, m) != JAGER_OK) return -1;
    jager_event ev;
    int rc;
    while ((rc = jager_reader_next(rd, &ev)) > 0) {
        if (jm_model_add(*m, &ev) != JAGER_OK) return -1;
        /* the table is by site id: only ids the file's site table holds (a hostile one sizes nothing) */
        if ((ev.type == JAGER_EV_SPAN || ev.type == JAGER_EV_SPAN_X) && ev.end_ns >= ev.time_ns && ev.rec->aux <= jager_reader_site_count(rd)
            && durations_add(tab, ntab, ev.rec->aux, (double)(ev.end_ns - ev.time_ns)))
            return -1;
    }
    *read_rc = rc;
    return jm_model_finish(*m) == JAGER_OK ? 0 : -1;
}

int jb_absorb_recording(jb_result *r, const char *path, char *err, size_t errsize)
{
    jager_reader *rd;
    if (jager_reader_open(path, &rd) != JAGER_OK) {
        snprintf(err, errsize, "%s: %s", path, jager_last_error());
        return -1;
    }
    jm_model *m = NULL;
    durations *tab = NULL;
    size_t ntab = 0;
    int rc = 0, status = -1;
    if (read_recording(rd, &m, &tab, &ntab, &rc)) {
        snprintf(err, errsize, "%s: out of memory", path);
        goto out;
    }
    if (rc < 0) {
        snprintf(err, errsize, "%s: %s (a benchmark needs a whole recording)", path, jager_reader_error(rd));
        goto out;
    }
    if (!m->have_stats) {
        snprintf(err, errsize, "%s: the recording has no statistics block (did the program finish?)", path);
        goto out;
    }
    if (!*r->julia_version) {
        const char *jv = jager_reader_meta(rd, "julia.version");
        if (jv) { char *d = jb_strdup(jv); if (d) { free(r->julia_version); r->julia_version = d; } }
    }
    if (!*r->commit) {
        const char *gc = jager_reader_meta(rd, "git.commit");
        if (gc) { char *d = jb_strdup(gc); if (d) { free(r->commit); r->commit = d; } }
    }
    for (uint32_t i = 1; i < m->nsites; i++) {
        const jm_site *s = &m->sites[i];
        if (!s->calls || !s->total_ns) continue;
        jb_kernel *k = jb_result_kernel(r, s->name, s->file, s->line);
        /* The exact median when every call's span is in the file; else the histogram's. */
        const durations *d = i < ntab ? &tab[i] : NULL;
        int all = d && d->n == s->calls;
        jb_run run = {all ? jc_median(d->v, d->n) : (double)s->p50_ns, (double)s->total_ns / (double)s->calls,
                      (double)s->min_ns, s->calls, s->bytes, s->gc_ns, all};
        if (!(run.median_ns > 0)) run.median_ns = run.mean_ns;
        if (!k || jb_kernel_add_run(k, &run)) { snprintf(err, errsize, "out of memory"); goto out; }
    }
    status = 0;
out:
    for (size_t i = 0; i < ntab; i++) free(tab[i].v);
    free(tab);
    jm_model_free(m);
    jager_reader_close(rd);
    return status;
}

/* Hardware instruction counts, where the kernel offers them: user-space instructions of the
 * whole command (children included), counted from its exec. Virtual machines often expose
 * no PMU (ENOENT); then the comparison is on time alone and the result says why. */
static int counter_open(pid_t pid)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.inherit = 1;
    a.disabled = pid != 0;
    a.enable_on_exec = pid != 0;
    return (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int probe_counters(jb_result *r)
{
    int fd = counter_open(0);
    char mode[256];
    if (fd >= 0) snprintf(mode, sizeof mode, "instructions");
    else snprintf(mode, sizeof mode, "none: perf_event_open: %s", strerror(errno));
    if (fd >= 0) close(fd);
    char *d = jb_strdup(mode);
    if (d) { free(r->counters); r->counters = d; }
    return fd >= 0;
}

/* Run one command (argv, or "/bin/sh -c sh") with JAGER_OUTPUT=path; 0 when it exited 0.
 * With \p instructions, the child waits on a pipe until its counter is open, so the count
 * starts at its exec and covers nothing of jager's. */
static int run_once(char *const *argv, const char *sh, const char *path, int show_output, uint64_t *instructions,
                    char *err, size_t errsize)
{
    int gate[2] = {-1, -1};
    if (instructions && pipe2(gate, O_CLOEXEC) != 0) instructions = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) { snprintf(err, errsize, "fork: %s", strerror(errno)); return -1; }
    if (pid == 0) {
        if (instructions) {
            char c;
            close(gate[1]);
            while (read(gate[0], &c, 1) < 0 && errno == EINTR) {}
        }
        setenv("JAGER_OUTPUT", path, 1);
        if (!show_output) {
            int fd = open("/dev/null", O_WRONLY);
            if (fd >= 0) { dup2(fd, 1); close(fd); }
        }
        if (sh) execl("/bin/sh", "sh", "-c", sh, (char *)NULL);
        else execvp(argv[0], argv);
        fprintf(stderr, "jager bench: cannot run '%s': %s\n", sh ? "/bin/sh" : argv[0], strerror(errno));
        _exit(127);
    }
    int cfd = -1;
    if (instructions) {
        close(gate[0]);
        cfd = counter_open(pid);
        if (write(gate[1], "x", 1) < 0) {}
        close(gate[1]);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) { snprintf(err, errsize, "waitpid: %s", strerror(errno)); if (cfd >= 0) close(cfd); return -1; }
    if (instructions) {
        uint64_t n = 0;
        *instructions = cfd >= 0 && read(cfd, &n, sizeof n) == (ssize_t)sizeof n ? n : 0;
        if (cfd >= 0) close(cfd);
    }
    const char *what = sh ? sh : argv[0];
    if (WIFSIGNALED(st)) { snprintf(err, errsize, "'%s' was killed by signal %d", what, WTERMSIG(st)); return -1; }
    if (WEXITSTATUS(st) != 0) { snprintf(err, errsize, "'%s' exited with status %d", what, WEXITSTATUS(st)); return -1; }
    return 0;
}

/* The command's instruction count as one more kernel, "(instructions)": compared like the
 * others (its median_ns column holds the count). */
static int add_instructions(jb_result *r, uint64_t n)
{
    jb_kernel *k = jb_result_kernel(r, "(instructions)", "", 0);
    jb_run run = {(double)n, (double)n, (double)n, 1, 0, 0, 1};
    return !k || jb_kernel_add_run(k, &run) ? -1 : 0;
}

static int set_command(jb_result *r, char *const *argv, const char *sh)
{
    size_t len = 1;
    if (sh) len += strlen(sh);
    else for (size_t i = 0; argv[i]; i++) len += strlen(argv[i]) + 1;
    char *s = malloc(len);
    if (!s) return -1;
    s[0] = 0;
    if (sh) strcpy(s, sh);
    else for (size_t i = 0; argv[i]; i++) { if (i) strcat(s, " "); strcat(s, argv[i]); }
    free(r->command);
    r->command = s;
    return 0;
}

int jb_bench_run(const jb_run_opts *o, char *const *head_argv, const char *base_sh,
                 jb_result *head, jb_result *base, char *err, size_t errsize)
{
    char tmpl[] = "/tmp/jager-bench-XXXXXX";
    const char *dir = o->keep_dir;
    if (!dir) {
        const char *t = getenv("TMPDIR");
        static char buf[4096];
        if (t && *t && strlen(t) < sizeof buf - 24) { snprintf(buf, sizeof buf, "%s/jager-bench-XXXXXX", t); dir = mkdtemp(buf); }
        else dir = mkdtemp(tmpl);
        if (!dir) { snprintf(err, errsize, "cannot make a temporary folder: %s", strerror(errno)); return -1; }
    } else if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errsize, "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (jb_describe_machine(head) || set_command(head, head_argv, NULL)
        || (base_sh && (jb_describe_machine(base) || set_command(base, NULL, base_sh)))) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    head->warmup = o->warmup;
    if (base_sh) base->warmup = o->warmup;
    int counting = probe_counters(head);
    if (base_sh) probe_counters(base);
    fprintf(stderr, "jager bench: counters: %s\n", head->counters);
    double start = now_s();
    int status = 0;
    unsigned total = o->warmup + o->runs;
    for (unsigned i = 0; i < total && status == 0; i++) {
        if (i > o->warmup && o->budget_s > 0 && now_s() - start > o->budget_s) {
            head->budget_exhausted = 1;
            if (base_sh) base->budget_exhausted = 1;
            fprintf(stderr, "jager bench: time budget of %.0f s spent after %u measured runs\n", o->budget_s, i - o->warmup);
            break;
        }
        for (int side = base_sh ? 0 : 1; side < 2 && status == 0; side++) {
            char path[4200];
            snprintf(path, sizeof path, "%s/%s-%03u.jgr", dir, side ? "head" : "base", i);
            jb_result *r = side ? head : base;
            uint64_t ins = 0;
            if (run_once(side ? head_argv : NULL, side ? NULL : base_sh, path, o->show_output, counting ? &ins : NULL,
                         err, errsize)) {
                char tail[64];
                snprintf(tail, sizeof tail, " (run %u of %u)", i + 1, total);
                strncat(err, tail, errsize - strlen(err) - 1);
                status = -1;
                break;
            }
            if (i >= o->warmup) status = jb_absorb_recording(r, path, err, errsize);
            if (status == 0 && i >= o->warmup && counting && ins && add_instructions(r, ins)) {
                snprintf(err, errsize, "out of memory");
                status = -1;
            }
            if (!o->keep_dir) unlink(path);
        }
    }
    if (!o->keep_dir) rmdir(dir);
    return status;
}
