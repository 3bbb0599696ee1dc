/*
 * jager plugins — list the plugins JAGER_PLUGINS could load, in the loader's search order,
 * with what each descriptor says about itself (name, version, ABI, description, options).
 *
 * Each plugin is dlopen'ed and its entry symbol called, but it is never initialised: no
 * callback of the descriptor runs. The checks mirror the core's loader (sdk/src/loader.c),
 * so a plugin the core would refuse is shown with the same reason. Each plugin is read in
 * a child process: one whose constructor aborts, or whose descriptor lies (an option count
 * past its table), is reported as refused and the listing goes on.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "commands.h"
#include "jager_plugin.h"

#define NAME_MAX_LEN 63
#define MAX_FOLDERS 64
#define MAX_FOUND 512

typedef struct folder {
    char path[PATH_MAX];
    const char *origin; /* "JAGER_PLUGIN_PATH", "installed", "build tree", "--path" */
} folder;

typedef struct found {
    char name[NAME_MAX_LEN + 1];
    char path[PATH_MAX];
    int shadowed; /* an earlier folder has the same name: the loader would not load this one */
} found;

/* Text a plugin controls may hold anything: print control bytes as \xNN. */
static int name_is_valid(const char *s, size_t n)
{
    if (n == 0 || n > NAME_MAX_LEN) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return 0;
    }
    return 1;
}

static void add_folder(folder *f, int *n, const char *dir, size_t len, const char *origin)
{
    if (len == 0 || *n == MAX_FOLDERS || len >= sizeof f->path) return;
    memcpy(f[*n].path, dir, len);
    f[*n].path[len] = 0;
    while (len > 1 && f[*n].path[len - 1] == '/') f[*n].path[--len] = 0;
    f[*n].origin = origin;
    (*n)++;
}

/* The loader's order: the colon list, then the install's plugin folder, then the build tree's. */
static int search_folders(folder *f, const char *list, const char *origin)
{
    int n = 0;
    for (const char *p = list; p && *p;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        add_folder(f, &n, p, len, origin);
        p = colon ? colon + 1 : p + len;
    }
    /* The loader's own list: the same folders the core searches, nothing compiled in here. */
    const char *dir, *from;
    for (uint32_t i = 0; (dir = jager_plugin_default_folder(i, &from)); i++) add_folder(f, &n, dir, strlen(dir), from);
    return n;
}

static int by_name(const void *a, const void *b) { return strcmp(((const found *)a)->name, ((const found *)b)->name); }

/* Every libjager-<name>.so in \p dir, sorted by name, appended to \p out. */
static int scan_folder(const char *dir, found *out, int n)
{
    DIR *d = opendir(dir);
    if (!d) return n;
    int first = n;
    struct dirent *e;
    while ((e = readdir(d)) && n < MAX_FOUND) {
        size_t len = strlen(e->d_name);
        if (len <= 12 || strncmp(e->d_name, "libjager-", 9) != 0 || strcmp(e->d_name + len - 3, ".so") != 0) continue;
        size_t nlen = len - 12;
        if (!name_is_valid(e->d_name + 9, nlen)) continue;
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) continue;
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        memcpy(out[n].name, e->d_name + 9, nlen);
        out[n].name[nlen] = 0;
        snprintf(out[n].path, sizeof out[n].path, "%s", path);
        out[n].shadowed = 0;
        for (int i = 0; i < first; i++)
            if (!strcmp(out[i].name, out[n].name)) out[n].shadowed = 1;
        n++;
    }
    closedir(d);
    qsort(out + first, (size_t)(n - first), sizeof *out, by_name);
    return n;
}

#define DESC_HAS(size, field) \
    ((size) >= offsetof(jager_plugin_descriptor, field) + sizeof(((jager_plugin_descriptor *)0)->field))

/* Open one plugin, print its descriptor (or why the core would refuse it). 0 if loadable. */
static int describe(FILE *out, const found *f)
{
    int rc = 1;
    fprintf(out, "%s", f->name);
    dlerror();
    void *dl = dlopen(f->path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        fprintf(out, "  REFUSED: cannot load: ");
        cli_put_safe(out, e ? e : "unknown dlopen error");
        fprintf(out, "\n  %s\n", f->path);
        return 1;
    }
    jager_plugin_entry_fn entry = (jager_plugin_entry_fn)dlsym(dl, JAGER_PLUGIN_ENTRY_SYMBOL);
    const jager_plugin_descriptor *d = entry ? entry(JAGER_PLUGIN_ABI_MAJOR, JAGER_PLUGIN_ABI_MINOR) : NULL;
    const size_t min_size = offsetof(jager_plugin_descriptor, init) + sizeof d->init;
    if (!entry) {
        fprintf(out, "  REFUSED: no entry symbol %s\n", JAGER_PLUGIN_ENTRY_SYMBOL);
    } else if (!d) {
        fprintf(out, "  REFUSED: the entry point returned no descriptor\n");
    } else if (d->struct_size >= offsetof(jager_plugin_descriptor, name) && d->abi_major != JAGER_PLUGIN_ABI_MAJOR) {
        fprintf(out, "  REFUSED: built for plugin ABI %u.%u, this jager speaks %d.%d\n", d->abi_major, d->abi_minor,
                JAGER_PLUGIN_ABI_MAJOR, JAGER_PLUGIN_ABI_MINOR);
    } else if (d->struct_size < min_size) {
        fprintf(out, "  REFUSED: descriptor struct_size %u is too small (at least %zu)\n", d->struct_size, min_size);
    } else if (!d->name || strcmp(d->name, f->name) != 0) {
        fprintf(out, "  REFUSED: the descriptor names itself \"");
        cli_put_safe(out, d->name ? d->name : "(null)");
        fprintf(out, "\"\n");
    } else if (!d->init) {
        fprintf(out, "  REFUSED: no init callback\n");
    } else {
        rc = 0;
        fprintf(out, "  ");
        cli_put_safe(out, d->version);
        fprintf(out, "  ABI %u.%u\n  ", d->abi_major, d->abi_minor);
        cli_put_safe(out, d->description);
        fputc('\n', out);
        /* Options are read only where the plugin's struct_size covers them. */
        uint32_t nopt = DESC_HAS(d->struct_size, noptions) && d->options ? d->noptions : 0;
        if (nopt) fprintf(out, "  options:\n");
        char var[160];
        for (uint32_t i = 0; i < nopt; i++) {
            const jager_option_desc *o = &d->options[i];
            size_t k = (size_t)snprintf(var, sizeof var, "JAGER_");
            for (const char *p = f->name; *p && k + 1 < sizeof var; p++)
                var[k++] = *p == '-' ? '_' : (*p >= 'a' && *p <= 'z' ? (char)(*p - 32) : *p);
            if (k + 1 < sizeof var) var[k++] = '_';
            for (const char *p = o->key ? o->key : "?"; *p && k + 1 < sizeof var; p++)
                var[k++] = *p == '-' ? '_' : (*p >= 'a' && *p <= 'z' ? (char)(*p - 32) : *p);
            var[k] = 0;
            fprintf(out, "    ");
            cli_put_safe(out, var);
            fprintf(out, "  (");
            cli_put_safe(out, o->type ? o->type : "string");
            fprintf(out, ", default \"");
            cli_put_safe(out, o->default_value);
            fprintf(out, "\")  ");
            cli_put_safe(out, o->help);
            fputc('\n', out);
        }
    }
    fprintf(out, "  %s\n", f->path);
    dlclose(dl);
    return rc;
}

/* describe() in a child process, its text passed on: a plugin that crashes, aborts or
 * hangs (for DESCRIBE_TIMEOUT_MS) while it is opened or read is REFUSED, and only it. */
#define DESCRIBE_TIMEOUT_MS 10000
static int describe_isolated(FILE *out, const found *f)
{
    int p[2];
    fflush(out);
    if (pipe(p) != 0) return describe(out, f);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return describe(out, f);
    }
    if (pid == 0) {
        close(p[0]);
        FILE *w = fdopen(p[1], "w");
        int rc = w ? describe(w, f) : 1;
        if (w) fclose(w);
        _exit(rc);
    }
    close(p[1]);
    char *text = NULL;
    size_t len = 0, cap = 0;
    int timed_out = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        long left = DESCRIBE_TIMEOUT_MS - (long)((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd pf = {p[0], POLLIN, 0};
        int r = poll(&pf, 1, (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) continue;
        if (len + 4096 > cap) {
            char *b = realloc(text, cap ? cap * 2 : 8192);
            if (!b) break;
            text = b;
            cap = cap ? cap * 2 : 8192;
        }
        ssize_t k = read(p[0], text + len, cap - len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        len += (size_t)k;
    }
    close(p[0]);
    if (timed_out) kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    int rc;
    if (!timed_out && WIFEXITED(st)) {
        if (len) fwrite(text, 1, len, out);
        rc = WEXITSTATUS(st) ? 1 : 0;
    } else {
        fprintf(out, "%s  REFUSED: ", f->name);
        if (timed_out) fprintf(out, "no answer within %d s while it was opened and read", DESCRIBE_TIMEOUT_MS / 1000);
        else if (WIFSIGNALED(st)) fprintf(out, "it crashed while it was opened and read (%s)", strsignal(WTERMSIG(st)));
        else fprintf(out, "it could not be read");
        fprintf(out, "\n  %s\n", f->path);
        rc = 1;
    }
    free(text);
    return rc;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: jager plugins [--path DIR[:DIR...]] [NAME...]\n"
            "\n"
            "Lists the plugins JAGER_PLUGINS=NAME,... would load, in the loader's search order:\n"
            "the JAGER_PLUGIN_PATH folders (or --path), the installed plugin folder, then the\n"
            "build tree's. Each plugin's descriptor is read without initialising it: name,\n"
            "version, plugin ABI, description and options (as environment variables).\n"
            "With NAMEs, shows only those and exits 2 if one is missing or would be refused.\n");
}

int cmd_plugins(int argc, char **argv)
{
    const char *path = getenv("JAGER_PLUGIN_PATH");
    const char *origin = "JAGER_PLUGIN_PATH";
    const char *cli_path = NULL;
    const cli_opt opts[] = {CLI_STRING_OPT("--path", NULL, &cli_path)};
    const char **names = calloc((size_t)argc, sizeof *names);
    if (!names) {
        fprintf(stderr, "jager plugins: out of memory\n");
        return JAGER_EXIT_INPUT;
    }
    size_t nnames = 0;
    const cli_spec spec = {"plugins", usage, opts, 1, 0, (size_t)argc, 1, "name"};
    int parsed = cli_parse(&spec, argc, argv, names, &nnames);
    if (parsed) {
        free(names);
        return cli_parse_exit(parsed);
    }
    if (cli_path) {
        path = cli_path;
        origin = "--path";
    }

    static folder folders[MAX_FOLDERS];
    static found all[MAX_FOUND];
    int nf = search_folders(folders, path, origin);
    printf("search order:\n");
    for (int i = 0; i < nf; i++) {
        struct stat st;
        int exists = stat(folders[i].path, &st) == 0 && S_ISDIR(st.st_mode);
        printf("  %d. ", i + 1);
        cli_put_safe(stdout, folders[i].path);
        printf("  (%s%s)\n", folders[i].origin, exists ? "" : ", missing");
    }
    int n = 0;
    for (int i = 0; i < nf; i++) n = scan_folder(folders[i].path, all, n);

    int status = JAGER_EXIT_OK;
    if (nnames) {
        for (size_t a = 0; a < nnames; a++) {
            const char *want = names[a];
            printf("\n");
            if (!name_is_valid(want, strlen(want))) {
                printf("\"");
                cli_put_safe(stdout, want);
                printf("\"  REFUSED: plugin names are 1 to %d characters of a-z, 0-9, '_' and '-'\n", NAME_MAX_LEN);
                status = JAGER_EXIT_INPUT;
                continue;
            }
            int shown = 0;
            for (int i = 0; i < n && !shown; i++) {
                if (strcmp(all[i].name, want) != 0 || all[i].shadowed) continue;
                if (describe_isolated(stdout, &all[i]) != 0) status = JAGER_EXIT_INPUT;
                shown = 1;
            }
            if (!shown) {
                printf("%s  NOT FOUND: no libjager-%s.so in the folders above\n", want, want);
                status = JAGER_EXIT_INPUT;
            }
        }
        free(names);
        return status;
    }
    free(names);
    if (n == 0) printf("\nno plugins found\n");
    for (int i = 0; i < n; i++) {
        printf("\n");
        if (all[i].shadowed) {
            printf("%s  (shadowed by an earlier folder: not loaded)\n  %s\n", all[i].name, all[i].path);
            continue;
        }
        describe_isolated(stdout, &all[i]);
    }
    return status;
}
