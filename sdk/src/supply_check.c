/* supply_check.c — JAGER_LOCK in the core: nothing at all without it; with it, the checker
 * (libjager-supply.so, supply/module/supply_module.c) is loaded and does the work. The
 * checker needs jansson and libcrypto, which a recorder mapped into every process of a job
 * must not drag in. Found beside the loaded libjager (the build tree's lib/, or the
 * installed libdir), or at JAGER_SUPPLY_MODULE; a program linked with the static core finds
 * the installed one. A lock that cannot be checked is never silently passed: strict mode
 * refuses to record (or exits), otherwise one diagnostic and one security event. */
#include "internal.h"
#include "supply_check.h"
#include "supply_module.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#ifndef JAGER_SUPPLY_INSTALL_PATH
#define JAGER_SUPPLY_INSTALL_PATH "/usr/local/lib/libjager-supply.so"
#endif
#define JG_SUPPLY_MODULE_FILE "libjager-supply.so"

static const jg_supply_module *mod; /* loaded while JAGER_LOCK is being checked */
static char unchecked[2 * PATH_MAX + 512]; /* why the lock could not be checked, for the event */

static int strict_mode(void)
{
    const char *s = getenv("JAGER_STRICT");
    if (!s || !*s || !strcmp(s, "0") || !strcasecmp(s, "false")) return 0;
    return !strcasecmp(s, "abort") ? 2 : 1;
}

/* Where the checker is: JAGER_SUPPLY_MODULE, beside the loaded libjager, or installed. */
static void module_path(char *out, size_t size)
{
    const char *env = getenv("JAGER_SUPPLY_MODULE");
    if (env && *env) {
        snprintf(out, size, "%s", env);
        return;
    }
    Dl_info info;
    if (dladdr((void *)(uintptr_t)&jg_supply_check_init, &info) && info.dli_fname) {
        const char *slash = strrchr(info.dli_fname, '/');
        const char *base = slash ? slash + 1 : info.dli_fname;
        if (slash && strncmp(base, "libjager.so", 11) == 0) {
            snprintf(out, size, "%.*s/" JG_SUPPLY_MODULE_FILE, (int)(slash - info.dli_fname), info.dli_fname);
            return;
        }
    }
    snprintf(out, size, "%s", JAGER_SUPPLY_INSTALL_PATH);
}

static const jg_supply_module *load_module(char *why, size_t size)
{
    char path[PATH_MAX];
    module_path(path, sizeof path);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h) {
        snprintf(why, size, "the checker %s cannot be loaded: %s", path, dlerror());
        return NULL;
    }
    jg_supply_module_fn entry;
    void *sym = dlsym(h, JG_SUPPLY_MODULE_ENTRY);
    memcpy(&entry, &sym, sizeof entry);
    const jg_supply_module *m = sym ? entry() : NULL;
    if (!m || m->struct_size < sizeof *m) {
        snprintf(why, size, "%s is not this build's supply-chain checker", path);
        return NULL;
    }
    return m;
}

static void host_log(jager_severity sev, const char *body, const jager_attr *attrs, size_t n) { jager_log(sev, body, attrs, n); }

jager_status jg_supply_check_init(int quiet)
{
    mod = NULL;
    unchecked[0] = 0;
    const char *path = getenv("JAGER_LOCK");
    if (!path || !*path) return JAGER_OK;
    int strict = strict_mode();
    char why[PATH_MAX + 256];
    if (!(mod = load_module(why, sizeof why))) {
        if (strict == 2) {
            fprintf(stderr, "jager: supply chain: JAGER_LOCK=%s: %s; JAGER_STRICT=abort: exiting before the program runs (status 78)\n",
                    path, why);
            fflush(stderr);
            _exit(78);
        }
        if (strict) return jg_error(JAGER_E_SUPPLY_CHAIN, "jager_init: supply chain: JAGER_LOCK=%s: %s (JAGER_STRICT): not recording", path, why);
        if (!quiet) fprintf(stderr, "jager: supply chain: JAGER_LOCK=%s not checked: %s\n", path, why);
        snprintf(unchecked, sizeof unchecked, "supply chain: JAGER_LOCK=%s not checked: %s", path, why);
        return JAGER_OK;
    }
    jg_supply_host host = {.struct_size = sizeof host, .log = host_log, .thread_start = jg_host_thread_start};
    int rc = mod->check_init(&host, path, quiet, why, sizeof why);
    if (rc == 0) return JAGER_OK;
    mod = NULL;
    return rc < 0 ? jg_error(JAGER_E_NOMEM, "%s", why) : jg_error(JAGER_E_SUPPLY_CHAIN, "%s", why);
}

int jg_supply_plugin_allowed(const char *path, char *why, size_t size) { return mod ? mod->plugin_allowed(path, why, size) : 1; }

void jg_supply_check_start(void)
{
    if (unchecked[0]) {
        jager_attr a[2] = {{.key = "security", .kind = JAGER_ATTR_BOOL, .value.boolean = 1},
                           {.key = "supply.kind", .kind = JAGER_ATTR_STR, .value.str = "unchecked"}};
        jager_log(JAGER_SEV_ERROR, unchecked, a, 2);
        unchecked[0] = 0;
    }
    if (mod) mod->check_start();
}

void jg_supply_check_finish(void)
{
    if (mod) mod->check_finish();
    mod = NULL;
}
