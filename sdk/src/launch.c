/*
 * launch.c — which process of a tree records, and where (docs/configuration.md, "Zero-code
 * mode: which process records").
 *
 * Children inherit LD_PRELOAD, so in zero-code mode every process of a job runs our
 * constructor: `timeout`, `env`, shells, `mpiexec`, `hydra_pmi_proxy`, valgrind's launcher,
 * the program, and whatever the program spawns. The rule, decided by what a process is and
 * not by its place in the tree:
 *
 *  1. A known launcher (by the name of its executable) never records.
 *  2. Every other process starts, but in zero-code mode its file is claimed only when its
 *     first event reaches the file sink: a process with no events of its own (an unknown
 *     wrapper that execs or forks and waits) leaves no file, so the recording passes to
 *     the process that has events.
 *  3. An MPI rank (launcher variables, read before MPI_Init) writes OUTPUT.<rank> unless
 *     JAGER_OUTPUT names the rank or pid itself (%r, %p).
 *  4. Claiming a regular file takes a POSIX write lock on it (without truncating first),
 *     so two live processes never share a file: the second says once where it would have
 *     written and records nothing. A process of the same tree that comes later (a shell's
 *     second command) finds the file changed since the tree began — the first process of
 *     the tree noted the output's identity (device, inode, size, mtime) in
 *     JAGER_AUTOSTARTED — and does not overwrite it either: the first wins.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* ---- 1. launchers ---- */
/* Programs that only run another one: shells, the coreutils and util-linux wrappers,
 * MPI and batch launchers, and tools that run a program under them. */
static const char *const launchers[] = {
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "csh", "tcsh", "fish", "busybox",
    "env", "time", "timeout", "nice", "ionice", "chrt", "taskset", "numactl", "nohup", "setsid",
    "stdbuf", "xargs", "flock", "unshare", "nsenter", "chroot", "runuser", "su", "sudo", "doas",
    "mpiexec", "mpirun", "mpiexec.hydra", "mpiexec.mpich", "mpirun.mpich", "mpiexec.openmpi",
    "mpirun.openmpi", "orterun", "prterun", "prte", "hydra_pmi_proxy", "hydra_nameserver", "srun",
    "aprun", "jsrun", "flux", "valgrind", "valgrind.bin", "perf", "strace", "ltrace", "gdb",
    "catchsegv", NULL};

/* The basename of this process's executable (/proc/self/exe, else argv[0] as the kernel
 * has it), in \p out. */
static void exe_name(char *out, size_t size)
{
    char exe[PATH_MAX];
    out[0] = 0;
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) {
        FILE *f = fopen("/proc/self/comm", "r");
        if (!f) return;
        if (!fgets(exe, sizeof exe, f)) exe[0] = 0;
        fclose(f);
        exe[strcspn(exe, "\n")] = 0;
        k = (ssize_t)strlen(exe);
    }
    exe[k] = 0;
    const char *b = strrchr(exe, '/');
    snprintf(out, size, "%s", b ? b + 1 : exe);
}

/* Is \p name in the comma list \p list? */
static int in_list(const char *list, const char *name, int minus)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        while (*p == ',' || *p == ' ') p++;
        const char *e = p + strcspn(p, ", ");
        int neg = *p == '-';
        if (neg == minus && (size_t)(e - p - neg) == n && !strncmp(p + neg, name, n)) return 1;
        p = e;
    }
    return 0;
}

int jg_launch_is_launcher(const char *name)
{
    char own[256];
    if (!name) {
        exe_name(own, sizeof own);
        name = own;
    }
    if (!*name) return 0;
    const char *extra = getenv("JAGER_LAUNCHERS"); /* "name,…" adds, "-name" removes */
    if (in_list(extra, name, 1)) return 0;
    if (in_list(extra, name, 0)) return 1;
    for (int i = 0; launchers[i]; i++)
        if (!strcmp(launchers[i], name)) return 1;
    return 0;
}

/* ---- 3. ranks ---- */
/* The launcher's rank variable and the job-size variable that goes with it. SLURM_PROCID
 * counts only inside a job step (srun sets SLURM_STEP_NUM_TASKS; a batch script has
 * SLURM_PROCID=0 and is not rank 0 of anything). */
static const struct {
    const char *rank, *size;
    int need_size;
} rank_vars[] = {{"PMI_RANK", "PMI_SIZE", 0},
                 {"PMIX_RANK", NULL, 0},
                 {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", 0},
                 {"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", 0},
                 {"SLURM_PROCID", "SLURM_STEP_NUM_TASKS", 1},
                 {"PALS_RANKID", "PALS_SIZE", 0},
                 {"ALPS_APP_PE", NULL, 0}};

static long env_long(const char *name)
{
    const char *v = name ? getenv(name) : NULL;
    char *end;
    if (!v || !*v) return -1;
    errno = 0;
    long x = strtol(v, &end, 10);
    return (*end || errno || x < 0 || x > INT_MAX) ? -1 : x;
}

int jg_launch_rank(int *size)
{
    for (size_t i = 0; i < sizeof rank_vars / sizeof rank_vars[0]; i++) {
        long r = env_long(rank_vars[i].rank);
        if (r < 0) continue;
        long s = env_long(rank_vars[i].size);
        if (rank_vars[i].need_size && s < 0) continue;
        if (size) *size = (int)s;
        return (int)r;
    }
    if (size) *size = -1;
    return -1;
}

/* ---- the environment, as jager_init saw it ----
 * The claim runs on the collector thread (the first event) and the empty-recording rule
 * at exit, while the program may setenv() at any time: getenv there would race it. So the
 * values they need are copied on the thread that calls jager_init (or the constructor). */
static struct {
    char mark[192], out[PATH_MAX];
    int have_mark, have_out;
} snap;

void jg_launch_snapshot_env(void)
{
    const char *m = getenv("JAGER_AUTOSTARTED"), *o = getenv("JAGER_OUTPUT");
    snap.have_mark = m && strlen(m) < sizeof snap.mark;
    snap.have_out = o && strlen(o) < sizeof snap.out;
    snprintf(snap.mark, sizeof snap.mark, "%s", snap.have_mark ? m : "");
    snprintf(snap.out, sizeof snap.out, "%s", snap.have_out ? o : "");
}

/* ---- the output path ---- */
/* JAGER_OUTPUT as the process was started with it: a preloaded mpi plugin's constructor
 * may already have replaced its %r (setenv), and whether the user asked for one file per
 * rank or process is a question about what they wrote. */
static int exec_output_has_pattern(const char *now)
{
    if (strstr(now, "%p") || strstr(now, "%r")) return 1;
    int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    static const char key[] = "JAGER_OUTPUT=";
    char buf[8192];
    size_t have = 0, keep = 0;
    int found = 0;
    for (;;) { /* entries split across reads are kept at the front of buf */
        ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
        if (n <= 0) break;
        have += (size_t)n;
        size_t i = 0;
        while (i < have) {
            size_t len = strnlen(buf + i, have - i);
            if (i + len == have) break; /* incomplete */
            if (!strncmp(buf + i, key, sizeof key - 1))
                found = strstr(buf + i, "%p") || strstr(buf + i, "%r") ? 2 : 1;
            i += len + 1;
        }
        keep = have - i;
        if (keep == sizeof buf - 1) keep = 0; /* one entry longer than buf: skip it */
        memmove(buf, buf + i, keep);
        have = keep;
        if (found) break;
    }
    close(fd);
    return found == 2;
}

void jg_launch_output_path(char *out, size_t size, const char *pattern, int from_env)
{
    jg_launch_snapshot_env();
    size_t o = 0;
    int size_ = -1, rank = jg_launch_rank(&size_);
    for (const char *p = pattern; *p && o + 1 < size; p++) {
        if (p[0] == '%' && (p[1] == 'p' || p[1] == 'r')) {
            if (p[1] == 'p' || rank < 0) o += (size_t)snprintf(out + o, size - o, "%s%d", p[1] == 'r' ? "p" : "", (int)getpid());
            else o += (size_t)snprintf(out + o, size - o, "%d", rank);
            if (o >= size) o = size - 1;
            p++;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = 0;
    /* One file per rank: a job of several ranks never puts them on one file. Whether the
     * user named the rank or pid: in the pattern, in the environment this image was started
     * with, or in the tree's mark (a wrapper script whose preloaded mpi plugin expanded %r
     * before it exec'd this image). */
    const char *state = snap.have_mark ? strchr(snap.mark, ':') : NULL;
    int patterned = strstr(pattern, "%p") || strstr(pattern, "%r") || /* named here (or by the mpi plugin's setenv) */
                    (from_env && (exec_output_has_pattern(pattern) || (state && !strcmp(state, ":p"))));
    if (rank >= 0 && size_ != 1 && !patterned && o + 12 < size)
        snprintf(out + o, size - o, ".%d", rank);
}

/* ---- 4. the tree's mark and the claim ---- */
/* JAGER_AUTOSTARTED=<root pid>:<state>, set by the first process of the tree that runs our
 * constructor (launcher or not): state "none" (no output file when the tree began), "p"
 * (JAGER_OUTPUT names %p or %r: one file per process or rank), "-" (no output set) or
 * "dev:ino:size:sec:nsec" of the file then. */
void jg_launch_mark_tree(void)
{
    if (getenv("JAGER_AUTOSTARTED")) return;
    const char *out = getenv("JAGER_OUTPUT");
    char v[160];
    struct stat sb;
    int n = snprintf(v, sizeof v, "%d:", (int)getpid());
    if (!out || !*out) snprintf(v + n, sizeof v - (size_t)n, "-");
    else if (exec_output_has_pattern(out)) snprintf(v + n, sizeof v - (size_t)n, "p");
    else if (stat(out, &sb) != 0) snprintf(v + n, sizeof v - (size_t)n, "none");
    else
        snprintf(v + n, sizeof v - (size_t)n, "%llu:%llu:%lld:%lld:%ld", (unsigned long long)sb.st_dev,
                 (unsigned long long)sb.st_ino, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
                 (long)sb.st_mtim.tv_nsec);
    setenv("JAGER_AUTOSTARTED", v, 1);
    jg_launch_snapshot_env();
}

/* The file this process claimed last (a re-init in the same process may take it again). */
static struct {
    pid_t pid;
    dev_t dev;
    ino_t ino;
} last_claim;

/* Did an earlier process of this tree write \p sb? Only for the tree's single output. */
static int written_by_tree(const char *path, const struct stat *sb)
{
    const char *mark = snap.have_mark ? snap.mark : NULL, *out = snap.have_out ? snap.out : NULL;
    if (!mark || !out || strcmp(out, path) != 0) return 0;
    const char *state = strchr(mark, ':');
    if (!state || !strcmp(++state, "-") || !strcmp(state, "p")) return 0;
    if (last_claim.pid == getpid() && last_claim.dev == sb->st_dev && last_claim.ino == sb->st_ino) return 0;
    if (sb->st_size == 0) return 0; /* nothing to lose */
    if (!strcmp(state, "none")) return 1;
    unsigned long long dev, ino;
    long long fsize, sec;
    long nsec;
    if (sscanf(state, "%llu:%llu:%lld:%lld:%ld", &dev, &ino, &fsize, &sec, &nsec) != 5) return 0;
    return !(dev == (unsigned long long)sb->st_dev && ino == (unsigned long long)sb->st_ino &&
             fsize == (long long)sb->st_size && sec == (long long)sb->st_mtim.tv_sec && nsec == (long)sb->st_mtim.tv_nsec);
}

int jg_launch_claim(const char *path, char *why, size_t why_size)
{
    why[0] = 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd < 0) {
        snprintf(why, why_size, "cannot open output '%s': %s", path, strerror(errno));
        return -1;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) return fd; /* a device: written straight */
    struct flock lk;
    memset(&lk, 0, sizeof lk);
    lk.l_type = F_WRLCK;
    lk.l_whence = SEEK_SET;
    char exe[256];
    exe_name(exe, sizeof exe);
    /* An open-file-description lock where there is one: a classic POSIX lock would go
     * away when this process closes any other descriptor of the file (a reader in the
     * same program), an OFD lock only with the sink's own descriptor. */
#ifdef F_OFD_SETLK
    int set = F_OFD_SETLK, get = F_OFD_GETLK;
#else
    int set = F_SETLK, get = F_GETLK;
#endif
    int locked = fcntl(fd, set, &lk) == 0;
#ifdef F_OFD_SETLK
    if (!locked && errno == EINVAL) { /* a kernel before 3.15 */
        set = F_SETLK;
        get = F_GETLK;
        locked = fcntl(fd, set, &lk) == 0;
    }
#endif
    if (!locked) {
        if (errno == EACCES || errno == EAGAIN) {
            struct flock q = lk;
            long holder = fcntl(fd, get, &q) == 0 && q.l_type != F_UNLCK ? (long)q.l_pid : -1;
            char who[40] = "another process";
            if (holder > 0) snprintf(who, sizeof who, "process %ld", holder);
            snprintf(why, why_size,
                     "%s is being recorded by %s; process %d (%s) records nothing (put %%p in JAGER_OUTPUT for one file per process)",
                     path, who, (int)getpid(), exe);
            close(fd);
            return -2;
        }
        /* no locks on this file system (ENOLCK, some network mounts): first come, as before */
    }
    if (written_by_tree(path, &sb)) {
        snprintf(why, why_size,
                 "%s was recorded by an earlier process of this run; process %d (%s) records nothing (put %%p in JAGER_OUTPUT for one file per process)",
                 path, (int)getpid(), exe);
        close(fd); /* which drops the lock */
        return -2;
    }
    if (ftruncate(fd, 0) != 0) {
        snprintf(why, why_size, "cannot truncate output '%s': %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    last_claim.pid = getpid();
    last_claim.dev = sb.st_dev;
    last_claim.ino = sb.st_ino;
    return fd;
}

/* ---- 2. a recording with no events ---- */
static _Atomic(int) forked; /* this process made a child with fork() */
static void on_fork_parent(void) { atomic_store_explicit(&forked, 1, memory_order_relaxed); }
__attribute__((constructor)) static void launch_hooks(void) { pthread_atfork(NULL, on_fork_parent, NULL); }

int jg_launch_keep_empty(void)
{
    if (atomic_load_explicit(&forked, memory_order_relaxed)) return 0; /* it handed on */
    const char *mark = snap.have_mark ? snap.mark : NULL;
    char *end;
    long root = mark ? strtol(mark, &end, 10) : -1;
    return mark && end != mark && *end == ':' && root == (long)getpid();
}
