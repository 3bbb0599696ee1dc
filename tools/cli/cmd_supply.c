/* cmd_supply.c — `jager lock` and `jager verify` (docs/supply-chain.md): write a lock file of
 * the shared objects a program maps and of a Julia environment's packages, and check what
 * is on disk against one. The Julia side (the Manifest through Pkg's API, the registries
 * of the depot) is bindings/julia/src/supply.jl run by julia ($JAGER_JULIA or julia on the
 * PATH); the files, shared objects and tree hashes are checked here (sdk/src/supply/). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "supply.h"

#ifndef JAGER_SUPPLY_JL
#define JAGER_SUPPLY_JL ""
#endif

#ifndef JAGER_SUPPLY_JL_REL
#define JAGER_SUPPLY_JL_REL "../share/jager/julia/supply_main.jl"
#endif

/* $JAGER_SUPPLY_JL; the installed script beside an installed jager (JAGER_SUPPLY_JL_REL from
 * the executable's folder); the source tree's (a build-tree jager). */
static const char *supply_jl(void)
{
    const char *e = getenv("JAGER_SUPPLY_JL");
    if (e && *e) return e;
    static char installed[PATH_MAX];
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0) {
        exe[k] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            char rel[PATH_MAX + 64];
            snprintf(rel, sizeof rel, "%s/%s", exe, JAGER_SUPPLY_JL_REL);
            if (access(rel, R_OK) == 0 && realpath(rel, installed)) return installed;
        }
    }
    return JAGER_SUPPLY_JL;
}

/* julia supply.jl MODE PROJECT OUT: the environment as a lock-format JSON file. */
static json_t *julia_environment(const char *cmd, const char *mode, const char *project, char *err, size_t errlen)
{
    const char *julia = getenv("JAGER_JULIA");
    if (!julia || !*julia) julia = "julia";
    const char *script = supply_jl();
    if (!*script || access(script, R_OK) != 0) {
        snprintf(err, errlen, "the Julia side (supply.jl) is not found: set JAGER_SUPPLY_JL");
        return NULL;
    }
    char tmpl[] = "/tmp/jager-supply-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0) return snprintf(err, errlen, "mkstemp: %s", strerror(errno)), NULL;
    close(fd);
    pid_t pid = fork();
    if (pid < 0) {
        unlink(tmpl);
        return snprintf(err, errlen, "fork: %s", strerror(errno)), NULL;
    }
    if (pid == 0) {
        char *argv[] = {(char *)julia, "--startup-file=no", "--history-file=no", (char *)script, (char *)mode,
                        (char *)project, tmpl, NULL};
        dup2(2, 1); /* julia's chatter to stderr */
        execvp(julia, argv);
        fprintf(stderr, "jager %s: cannot run %s: %s (set JAGER_JULIA)\n", cmd, julia, strerror(errno));
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        unlink(tmpl);
        snprintf(err, errlen, "julia could not read the environment %s (exit %d)", project,
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return NULL;
    }
    json_error_t je;
    json_t *doc = json_load_file(tmpl, 0, &je);
    unlink(tmpl);
    json_t *jl = doc ? json_incref(json_object_get(doc, "julia")) : NULL;
    json_decref(doc);
    if (!jl) snprintf(err, errlen, "julia wrote no environment: %s", doc ? "no \"julia\" object" : je.text);
    return jl;
}

static void lock_usage(FILE *out)
{
    fputs("usage: jager lock [--julia-project DIR] [--pid PID] -o FILE [-- PROGRAM [ARGS…]]\n"
          "  writes a lock file (docs/supply-chain.md): the shared objects PROGRAM maps at start-up\n"
          "  (the dynamic loader's list; the program is not run) or process PID maps now, with their\n"
          "  build ids and SHA-256, and every package of the Julia environment DIR with the SHA-256 of\n"
          "  each file and its git tree hash\n"
          "  --threads N  hash on N threads (default: the available cores)\n"
          "  --no-cache   hash every file (default: files unchanged since the last lock, by device,\n"
          "               inode, size, mtime and ctime, are taken from the cache $JAGER_SUPPLY_CACHE,\n"
          "               else ~/.cache/jager/supply-cache.json; never used by verify or JAGER_LOCK)\n",
          out);
}

/* The packages' files and tree hashes, hashed here (the lock step's cache applies): julia
 * read the environment without them. What the walk meets (escaping symlinks, unreadable
 * files) is printed as warnings; unreadable files are left out of the lock. */
static void hash_packages(json_t *jl, unsigned threads)
{
    js_report r = {0};
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(jl, "packages"), i, p) {
        const char *src = json_string_value(json_object_get(p, "source")), *name = json_string_value(json_object_get(p, "name"));
        if (!src || !*src) continue;
        json_t *files = js_dir_files(src, name ? name : "", threads, &r);
        if (!files) continue;
        const char *k;
        json_t *v;
        void *tmp;
        json_object_foreach_safe(files, tmp, k, v) if (!strcmp(json_string_value(v), "unreadable")) json_object_del(files, k);
        json_object_set_new(p, "files", files);
        char hex[41];
        if (js_tree_hash(src, hex) == 0) json_object_set_new(p, "tree_hash", json_string(hex));
    }
    if (r.n || r.oom) {
        fprintf(stderr, "jager lock: warning: %zu problem%s met while hashing:\n", r.n, r.n == 1 ? "" : "s");
        js_report_print(&r, stderr);
    }
    js_report_free(&r);
}

static int by_path(const void *x, const void *y)
{
    return strcmp(json_string_value(json_object_get(*(json_t *const *)x, "path")),
                  json_string_value(json_object_get(*(json_t *const *)y, "path")));
}

int cmd_lock(int argc, char **argv)
{
    const char *outp = NULL, *project = NULL;
    uint64_t pid = 0, threads = 0;
    int no_cache = 0;
    const cli_opt opts[] = {
        CLI_STRING_OPT("--output", "-o", &outp),
        CLI_STRING_OPT("--julia-project", NULL, &project),
        {.name = "--pid", .kind = CLI_UINT, .dest = &pid, .min = 1, .max = 4194304, .bad = "--pid: '%s' is not a process id"},
        {.name = "--threads", .kind = CLI_UINT, .dest = &threads, .min = 1, .max = 16, .bad = "--threads: '%s' is not 1 to 16"},
        {.name = "--no-cache", .kind = CLI_FLAG, .dest = &no_cache, .flag_value = 1},
    };
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    if (!pos) return JAGER_EXIT_INPUT;
    const cli_spec spec = {"lock", lock_usage, opts, sizeof opts / sizeof opts[0], 0, (size_t)argc, 1, "program"};
    size_t npos = 0;
    int a = cli_parse(&spec, argc, argv, pos, &npos);
    if (a != 0) {
        free(pos);
        return cli_parse_exit(a);
    }
    int rc = JAGER_EXIT_INPUT;
    json_t *doc = NULL;
    char err[1024];
    if (!outp || (!project && !pid && !npos)) {
        fprintf(stderr, "jager lock: -o FILE and at least one of --julia-project, --pid, PROGRAM are required\n");
        lock_usage(stderr);
        rc = JAGER_EXIT_USAGE;
        goto out;
    }
    doc = js_lock_new();
    if (!no_cache) {
        js_lock_cache = js_cache_open(NULL, err, sizeof err);
        if (!js_lock_cache && strcmp(err, "off (JAGER_SUPPLY_CACHE)")) fprintf(stderr, "jager lock: cache: %s: every file hashed\n", err);
        else if (js_lock_cache && *err) fprintf(stderr, "jager lock: cache: %s\n", err);
    }
    if (npos || pid) {
        json_t *objs = json_array();
        if (npos) {
            json_t *p = js_objects_program((char *const *)pos, (unsigned)threads, err, sizeof err);
            if (!p) {
                fprintf(stderr, "jager lock: %s\n", err);
                json_decref(objs);
                goto out;
            }
            json_array_extend(objs, p);
            json_decref(p);
        }
        if (pid) {
            json_t *p = js_objects_pid((int)pid, (unsigned)threads, err, sizeof err);
            if (!p) {
                fprintf(stderr, "jager lock: %s\n", err);
                json_decref(objs);
                goto out;
            }
            size_t i;
            json_t *o;
            json_array_foreach(p, i, o) {
                size_t k;
                json_t *q;
                int dup = 0;
                json_array_foreach(objs, k, q) dup |= !strcmp(json_string_value(json_object_get(o, "path")),
                                                             json_string_value(json_object_get(q, "path")));
                if (!dup) json_array_append(objs, o);
            }
            json_decref(p);
        }
        /* one list sorted by path (each object hashed once) */
        size_t n = json_array_size(objs);
        json_t **v = calloc(n ? n : 1, sizeof *v);
        if (!v) {
            json_decref(objs);
            goto out;
        }
        for (size_t i = 0; i < n; i++) v[i] = json_array_get(objs, i);
        qsort(v, n, sizeof *v, by_path);
        json_t *sorted = json_array();
        for (size_t i = 0; i < n; i++) json_array_append(sorted, v[i]);
        free(v);
        json_decref(objs);
        objs = sorted;
        json_object_set_new(doc, "shared_objects", objs);
    }
    if (project) {
        json_t *jl = julia_environment("lock", "environment", project, err, sizeof err);
        if (!jl) {
            fprintf(stderr, "jager lock: %s\n", err);
            goto out;
        }
        hash_packages(jl, (unsigned)threads);
        json_object_set_new(doc, "julia", jl);
    }
    if (js_lock_check(doc, err, sizeof err) || js_lock_save(outp, doc, err, sizeof err)) {
        fprintf(stderr, "jager lock: %s\n", err);
        goto out;
    }
    json_t *objs = json_object_get(doc, "shared_objects"), *jl = json_object_get(doc, "julia");
    size_t nfiles = 0, i;
    json_t *p;
    json_array_foreach(json_object_get(jl, "packages"), i, p) nfiles += json_object_size(json_object_get(p, "files"));
    fprintf(stderr, "jager lock: %s: %zu shared object%s, %zu package%s (%zu files)\n", outp, json_array_size(objs),
            json_array_size(objs) == 1 ? "" : "s", json_array_size(json_object_get(jl, "packages")),
            json_array_size(json_object_get(jl, "packages")) == 1 ? "" : "s", nfiles);
    if (js_lock_cache) {
        js_cache_stats cs = js_cache_get_stats(js_lock_cache);
        fprintf(stderr, "jager lock: cache %s: %zu file%s unchanged, %zu hashed (%zu stored, %zu too recent to store), %zu entr%s rejected\n",
                js_cache_path(js_lock_cache), cs.hits, cs.hits == 1 ? "" : "s", cs.misses, cs.stored, cs.racy, cs.rejected,
                cs.rejected == 1 ? "y" : "ies");
        if (js_cache_save(js_lock_cache, err, sizeof err) != 0) fprintf(stderr, "jager lock: cache: %s\n", err);
    }
    rc = JAGER_EXIT_OK;
out:
    js_cache_close(js_lock_cache);
    js_lock_cache = NULL;
    json_decref(doc);
    free(pos);
    return rc;
}

static void verify_usage(FILE *out)
{
    fputs("usage: jager verify LOCK [--julia-project DIR] [--no-environment]\n"
          "  checks what is on disk against the lock file: every locked shared object and package file\n"
          "  rehashed (modified, added, removed, unreadable, symlinks escaping a package), each package's\n"
          "  git tree hash against the Manifest's and the registry's, and (with julia) the environment's\n"
          "  Manifest now against the locked one (version and UUID drift, packages added or removed).\n"
          "  Exit 0: no difference; 1: differences (a table on stdout); 2: the lock cannot be read.\n"
          "  --julia-project DIR  the environment to compare (default: the one locked)\n"
          "  --no-environment     do not run julia: files, objects and tree hashes only\n",
          out);
}

int cmd_verify(int argc, char **argv)
{
    const char *project = NULL;
    int no_env = 0;
    uint64_t threads = 0;
    const cli_opt opts[] = {
        CLI_STRING_OPT("--julia-project", NULL, &project),
        {.name = "--no-environment", .kind = CLI_FLAG, .dest = &no_env, .flag_value = 1},
        {.name = "--threads", .kind = CLI_UINT, .dest = &threads, .min = 1, .max = 16, .bad = "--threads: '%s' is not 1 to 16"},
    };
    const char *pos[4] = {0};
    const cli_spec spec = {"verify", verify_usage, opts, sizeof opts / sizeof opts[0], 1, 1, 0, "lock file"};
    size_t npos = 0;
    int a = cli_parse(&spec, argc, argv, pos, &npos);
    if (a != 0) return cli_parse_exit(a);
    char err[1024];
    json_t *doc = js_lock_load(pos[0], err, sizeof err);
    if (!doc) {
        fprintf(stderr, "jager verify: %s\n", err);
        return JAGER_EXIT_INPUT;
    }
    js_report r = {0};
    json_t *objs = json_object_get(doc, "shared_objects"), *jl = json_object_get(doc, "julia");
    if (objs) js_compare_objects(objs, NULL, 0, (unsigned)threads, &r);
    int env_checked = 0;
    if (jl) {
        js_verify_packages(jl, (unsigned)threads, &r);
        const char *proj = project ? project : json_string_value(json_object_get(jl, "project"));
        if (!no_env && proj) {
            json_t *now = julia_environment("verify", "environment", proj, err, sizeof err);
            if (!now) js_report_add(&r, "unverified", "(environment)", proj, "%s", err);
            else {
                js_compare_environment(jl, now, &r);
                env_checked = 1;
                json_decref(now);
            }
        }
    }
    int rc;
    if (r.n || r.oom) {
        printf("jager verify: %s: %zu difference%s\n", pos[0], r.n, r.n == 1 ? "" : "s");
        js_report_print(&r, stdout);
        rc = 1;
    } else {
        size_t nfiles = 0, i;
        json_t *p;
        json_array_foreach(json_object_get(jl, "packages"), i, p) nfiles += json_object_size(json_object_get(p, "files"));
        printf("jager verify: %s: no differences (%zu shared objects, %zu packages, %zu files%s)\n", pos[0],
               json_array_size(objs), json_array_size(json_object_get(jl, "packages")), nfiles,
               jl && !env_checked ? "; environment not compared" : "");
        rc = 0;
    }
    js_report_free(&r);
    json_decref(doc);
    return rc;
}
