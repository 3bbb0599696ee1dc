/* rusage_proc.c — what the kernel says about each thread of this process: its CPU-time clock,
 * /proc/self/task/TID/stat (faults, system time), .../status (context switches) and
 * .../schedstat (time spent runnable but waiting for a CPU). Plain reads, no allocation. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "rusage_internal.h"

/* A thread's CPU-time clock (the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)). */
static clockid_t thread_clock(int tid) { return (clockid_t)((~(unsigned)tid << 3) | 6u); }

static ssize_t slurp(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n < 0) return -1;
    buf[n] = 0;
    return n;
}

/* Field k (1-based, as proc(5) numbers them) of a stat line; the command name (field 2) may
 * hold spaces and parentheses, so counting starts after its last ')'. */
static uint64_t stat_field(const char *line, int k)
{
    const char *p = strrchr(line, ')');
    if (!p) return 0;
    p++;
    for (int f = 3; f < k && *p; f++) {
        while (*p == ' ') p++;
        while (*p && *p != ' ') p++;
    }
    return strtoull(p, NULL, 10);
}

static uint64_t status_value(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

int ru_read(int tid, int has_schedstat, ru_sample *out)
{
    memset(out, 0, sizeof *out);
    struct timespec ts;
    if (clock_gettime(thread_clock(tid), &ts) != 0) return 0;
    out->cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    if (slurp(path, buf, sizeof buf) <= 0) return 0;
    static long tck;
    if (!tck) tck = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
    out->minflt = stat_field(buf, 10);
    out->majflt = stat_field(buf, 12);
    out->sys_ns = stat_field(buf, 15) * (1000000000u / (uint64_t)tck);
    snprintf(path, sizeof path, "/proc/self/task/%d/status", tid);
    if (slurp(path, buf, sizeof buf) > 0) {
        out->vcsw = status_value(buf, "voluntary_ctxt_switches:");
        out->ivcsw = status_value(buf, "nonvoluntary_ctxt_switches:");
    }
    if (has_schedstat) {
        snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", tid);
        if (slurp(path, buf, sizeof buf) > 0) {
            char *e = NULL;
            strtoull(buf, &e, 10); /* run time: the CPU clock above says the same */
            out->runq_ns = strtoull(e, NULL, 10);
        }
    }
    return 1;
}

int ru_has_schedstat(void)
{
    char path[64], buf[128];
    snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)gettid());
    return slurp(path, buf, sizeof buf) > 0;
}

uint32_t ru_tasks(int *tids, uint32_t cap)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    uint32_t n = 0;
    struct dirent *e;
    while (n < cap && (e = readdir(d)))
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9') tids[n++] = atoi(e->d_name);
    closedir(d);
    return n;
}

uint64_t ru_fault_cost_ns(void)
{
    enum { PAGES = 512 };
    long page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
    uint64_t best = UINT64_MAX;
    for (int round = 0; round < 3; round++) {
        volatile char *p = mmap(NULL, (size_t)page * PAGES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) break;
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int i = 0; i < PAGES; i++) p[(size_t)i * (size_t)page] = 1;
        clock_gettime(CLOCK_MONOTONIC, &b);
        munmap((void *)p, (size_t)page * PAGES);
        uint64_t ns = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec;
        if (ns / PAGES < best) best = ns / PAGES;
    }
    return best == UINT64_MAX || best == 0 ? 1 : best;
}
