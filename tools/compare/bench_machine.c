/* bench_machine.c — what machine and toolchain a result was measured on, and its class. */
#include "bench_run.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "jager.h"

/* The value of "key : value" lines in /proc/cpuinfo or "KEY=value" in os-release, trimmed
 * and unquoted, copied into buf; "" when absent. */
static void file_value(const char *path, const char *key, char sep, char *buf, size_t size)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[8192];
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen)) continue;
        char *p = line + klen;
        while (*p == ' ' || *p == '\t') p++;
        if (*p != sep) continue;
        p++;
        while (*p == ' ' || *p == '\t' || *p == '"') p++;
        size_t n = strcspn(p, "\"\n");
        if (n >= size) n = size - 1;
        memcpy(buf, p, n);
        buf[n] = 0;
        break;
    }
    fclose(f);
}

/* Runs of spaces folded to one, so "Intel(R)  Xeon(R)" and "Intel(R) Xeon(R)" are one class. */
static void fold_spaces(char *s)
{
    char *w = s;
    int space = 1;
    for (char *r = s; *r; r++) {
        if (isspace((unsigned char)*r)) {
            if (!space) *w++ = ' ';
            space = 1;
        } else {
            *w++ = *r;
            space = 0;
        }
    }
    if (w > s && w[-1] == ' ') w--;
    *w = 0;
}

/* FNV-1a 64 of the CPU flags: equal flags, equal hash (the instruction sets a build may use). */
static void flags_hash(char *buf, size_t size)
{
    char flags[8192];
    file_value("/proc/cpuinfo", "flags", ':', flags, sizeof flags);
    if (!flags[0]) file_value("/proc/cpuinfo", "Features", ':', flags, sizeof flags);
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)flags; *p; p++) { h ^= *p; h *= 0x100000001b3ull; }
    snprintf(buf, size, "%016llx", (unsigned long long)h);
}

static int set(char **field, const char *value)
{
    char *d = jb_strdup(value);
    if (!d) return -1;
    free(*field);
    *field = d;
    return 0;
}

/* `git rev-parse HEAD` in the current folder, when it is a work tree. */
static void git_head(char *buf, size_t size)
{
    buf[0] = 0;
    FILE *p = popen("git rev-parse HEAD 2>/dev/null", "r");
    if (!p) return;
    if (fgets(buf, (int)size, p)) buf[strcspn(buf, "\n")] = 0;
    if (pclose(p) != 0) buf[0] = 0;
}

int jb_describe_machine(jb_result *r)
{
    struct utsname u;
    char model[512], os[512], cls[1100], hash[32], date[32], commit[128];
    if (uname(&u) != 0) memset(&u, 0, sizeof u);
    file_value("/proc/cpuinfo", "model name", ':', model, sizeof model);
    if (!model[0]) file_value("/proc/cpuinfo", "uarch", ':', model, sizeof model);
    if (!model[0]) file_value("/proc/cpuinfo", "CPU part", ':', model, sizeof model);
    if (!model[0]) snprintf(model, sizeof model, "unknown");
    fold_spaces(model);
    file_value("/etc/os-release", "PRETTY_NAME", '=', os, sizeof os);
    snprintf(cls, sizeof cls, "%s %s", u.machine[0] ? u.machine : "unknown", model);
    flags_hash(hash, sizeof hash);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    git_head(commit, sizeof commit);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    r->cores = cores > 0 ? (uint32_t)cores : 0;
#ifdef __VERSION__
    const char *cc = "cc " __VERSION__;
#else
    const char *cc = "";
#endif
    return set(&r->machine_class, cls) || set(&r->cpu_model, model) || set(&r->arch, u.machine)
        || set(&r->os, os) || set(&r->kernel_release, u.release) || set(&r->cpu_flags_hash, hash)
        || set(&r->jager_version, jager_version_string()) || set(&r->compiler, cc)
        || set(&r->date, date) || set(&r->commit, commit) ? -1 : 0;
}
