/* supply_objects.c — which shared objects a process maps (dl_iterate_phdr, /proc/PID/maps)
 * or a program would map at start-up (the dynamic loader's LD_TRACE_LOADED_OBJECTS list,
 * the program itself never run), each with its build id and SHA-256. */
#include "supply.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

unsigned js_threads(unsigned threads);

static void add_path(json_t *paths, const char *p)
{
    char real[PATH_MAX];
    if (!p || !*p) return;
    const char *use = realpath(p, real) ? real : p;
    if (use[0] != '/') return; /* "linux-vdso.so.1" and other names without a file */
    size_t i;
    json_t *v;
    json_array_foreach(paths, i, v) if (!strcmp(json_string_value(v), use)) return;
    json_array_append_new(paths, json_string_nocheck(use)); /* a path need not be UTF-8: it is checked all the same */
}

typedef struct objjob {
    json_t *paths;
    json_t **out;
    atomic_size_t next;
} objjob;

static void *obj_worker(void *arg)
{
    objjob *j = arg;
    size_t n = json_array_size(j->paths);
    for (;;) {
        size_t i = atomic_fetch_add(&j->next, 1);
        if (i >= n) break;
        const char *p = json_string_value(json_array_get(j->paths, i));
        char hex[65], bid[129];
        int e = 0;
        char blob[41];
        int st = js_hash_file(p, 0, hex, js_lock_cache ? blob : NULL, &e);
        js_elf_build_id_file(p, bid, sizeof bid);
        json_t *o = json_object();
        if (o) { /* not json_pack: it refuses a path that is not UTF-8, and the object would go unchecked */
            json_object_set_new(o, "path", json_string_nocheck(p));
            json_object_set_new(o, "build_id", json_string(bid));
            json_object_set_new(o, "sha256", json_string(st == JS_HASH_UNREADABLE ? "unreadable" : hex));
        }
        j->out[i] = o;
    }
    return NULL;
}

static int by_path(const void *x, const void *y)
{
    return strcmp(json_string_value(json_object_get(*(json_t *const *)x, "path")),
                  json_string_value(json_object_get(*(json_t *const *)y, "path")));
}

json_t *js_objects_from_paths(json_t *paths, unsigned threads)
{
    size_t n = json_array_size(paths);
    objjob j = {.paths = paths, .out = calloc(n ? n : 1, sizeof(json_t *))};
    if (!j.out) return NULL;
    atomic_init(&j.next, 0);
    threads = js_threads(threads);
    if (threads > n) threads = n ? (unsigned)n : 1;
    pthread_t tid[16];
    unsigned started = 0;
    for (unsigned t = 1; t < threads && t < 16; t++)
        if (pthread_create(&tid[started], NULL, obj_worker, &j) == 0) started++;
    obj_worker(&j);
    for (unsigned t = 0; t < started; t++) pthread_join(tid[t], NULL);
    json_t *arr = json_array();
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (j.out[i]) j.out[k++] = j.out[i];
    qsort(j.out, k, sizeof *j.out, by_path);
    for (size_t i = 0; i < k; i++) json_array_append_new(arr, j.out[i]);
    free(j.out);
    return arr;
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    if (info->dlpi_name && strchr(info->dlpi_name, '/')) add_path(data, info->dlpi_name); /* a relative LD_PRELOAD too */
    return 0;
}

json_t *js_objects_self(unsigned threads)
{
    json_t *paths = json_array();
    if (!paths) return NULL;
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0) {
        exe[k] = 0;
        add_path(paths, exe);
    }
    dl_iterate_phdr(phdr_cb, paths);
    json_t *arr = js_objects_from_paths(paths, threads);
    json_decref(paths);
    return arr;
}

static int find_in_path(const char *prog, char *out, size_t size)
{
    if (strchr(prog, '/')) return snprintf(out, size, "%s", prog), access(out, X_OK);
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    while (*path) {
        const char *c = strchr(path, ':');
        size_t len = c ? (size_t)(c - path) : strlen(path);
        snprintf(out, size, "%.*s/%s", (int)len, path, prog);
        if (access(out, X_OK) == 0) return 0;
        path += len + (c ? 1 : 0);
    }
    return -1;
}

/* Run \p exe with \p argv under the dynamic loader's listing mode (the program itself never
 * runs) and add every object it lists to \p paths; the loader's own path into \p interp
 * when seen. 0, or -1 when the listing failed. */
static int trace_objects(const char *exe, char *const argv[], json_t *paths, char *interp, size_t isize)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]), close(fds[1]);
        return -1;
    }
    if (pid == 0) { /* the dynamic loader lists the objects and exits before main */
        dup2(fds[1], 1);
        setenv("LD_TRACE_LOADED_OBJECTS", "1", 1);
        execv(exe, argv);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    char line[PATH_MAX + 128];
    while (f && fgets(line, sizeof line, f)) {
        /* "\tlibx.so.1 => /path/libx.so.1 (0x…)" or "\t/lib64/ld-linux-x86-64.so.2 (0x…)" */
        char *arrow = strstr(line, "=> ");
        char *p = arrow ? arrow + 3 : line;
        while (*p == '\t' || *p == ' ') p++;
        char *e = strstr(p, " (0x");
        if (e) *e = 0;
        else p[strcspn(p, "\n")] = 0;
        if (!arrow && interp && *p == '/' && strstr(p, "/ld-") && strlen(p) < isize) memcpy(interp, p, strlen(p) + 1);
        add_path(paths, p);
    }
    if (f) fclose(f);
    else close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* A program that maps libjager maps the supply-chain checker beside it, and what that needs,
 * when it runs with JAGER_LOCK (the core loads it only then): they belong in its lock. */
static void add_checker(json_t *paths, const char *interp)
{
    size_t i;
    json_t *v;
    char module[PATH_MAX];
    module[0] = 0;
    json_array_foreach(paths, i, v) {
        const char *p = json_string_value(v);
        const char *slash = p ? strrchr(p, '/') : NULL;
        if (slash && !strncmp(slash + 1, "libjager.so", 11))
            snprintf(module, sizeof module, "%.*s/libjager-supply.so", (int)(slash - p), p);
    }
    if (!module[0] || access(module, R_OK) != 0) return;
    add_path(paths, module);
    if (!*interp) return;
    char *const largv[] = {(char *)interp, "--list", module, NULL};
    json_t *deps = json_array();
    if (deps && trace_objects(interp, largv, deps, NULL, 0) == 0) json_array_foreach(deps, i, v) add_path(paths, json_string_value(v));
    json_decref(deps);
}

json_t *js_objects_program(char *const argv[], unsigned threads, char *err, size_t errlen)
{
    char exe[PATH_MAX];
    if (find_in_path(argv[0], exe, sizeof exe) != 0) {
        snprintf(err, errlen, "%s: not found or not executable", argv[0]);
        return NULL;
    }
    json_t *paths = json_array();
    if (!paths) return snprintf(err, errlen, "out of memory"), NULL;
    add_path(paths, exe);
    char interp[PATH_MAX] = "";
    if (trace_objects(exe, argv, paths, interp, sizeof interp) != 0) {
        snprintf(err, errlen, "%s: the dynamic loader could not list its shared objects (is it a dynamic executable?)", exe);
        json_decref(paths);
        return NULL;
    }
    add_checker(paths, interp);
    json_t *arr = js_objects_from_paths(paths, threads);
    json_decref(paths);
    return arr;
}

json_t *js_objects_pid(int pid, unsigned threads, char *err, size_t errlen)
{
    char mp[64];
    snprintf(mp, sizeof mp, "/proc/%d/maps", pid);
    FILE *f = fopen(mp, "re");
    if (!f) return snprintf(err, errlen, "%s: %s", mp, strerror(errno)), NULL;
    json_t *paths = json_array();
    char line[PATH_MAX + 256];
    while (fgets(line, sizeof line, f)) {
        char perms[8] = "";
        int off = 0;
        if (sscanf(line, "%*s %7s %*s %*s %*s %n", perms, &off) < 1 || !off || !strchr(perms, 'x')) continue;
        char *p = line + off;
        p[strcspn(p, "\n")] = 0;
        if (strstr(p, " (deleted)")) continue;
        add_path(paths, p);
    }
    fclose(f);
    json_t *arr = js_objects_from_paths(paths, threads);
    json_decref(paths);
    return arr;
}
