/* libcurl at run time: dlopen, or dlmopen into a new namespace (see otel_curl.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "otel_curl.h"

ot_curl_api ot_curl;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded;

static int bind_all(void *h)
{
    void *p[10];
    static const char *const names[10] = {"curl_global_init", "curl_easy_init", "curl_easy_cleanup", "curl_easy_reset",
                                          "curl_easy_setopt", "curl_easy_perform", "curl_easy_getinfo",
                                          "curl_slist_append", "curl_slist_free_all", "curl_getdate"};
    for (int i = 0; i < 10; i++)
        if (!(p[i] = dlsym(h, names[i]))) return -1;
    memcpy(&ot_curl.global_init, &p[0], sizeof p[0]);
    memcpy(&ot_curl.easy_init, &p[1], sizeof p[1]);
    memcpy(&ot_curl.easy_cleanup, &p[2], sizeof p[2]);
    memcpy(&ot_curl.easy_reset, &p[3], sizeof p[3]);
    memcpy(&ot_curl.easy_setopt, &p[4], sizeof p[4]);
    memcpy(&ot_curl.easy_perform, &p[5], sizeof p[5]);
    memcpy(&ot_curl.easy_getinfo, &p[6], sizeof p[6]);
    memcpy(&ot_curl.slist_append, &p[7], sizeof p[7]);
    memcpy(&ot_curl.slist_free_all, &p[8], sizeof p[8]);
    memcpy(&ot_curl.getdate, &p[9], sizeof p[9]);
    return 0;
}

int ot_curl_load(char *why, size_t whycap)
{
    pthread_mutex_lock(&load_lock);
    if (loaded) {
        pthread_mutex_unlock(&load_lock);
        return 0;
    }
    /* Debian ships the same libcurl API as libcurl.so.4 (OpenSSL), libcurl-gnutls.so.4 and
     * libcurl-nss.so.4; a process whose library path holds another distribution's
     * dependencies often loads one of them where another fails. */
    static const char *const names[] = {"libcurl.so.4", "libcurl-gnutls.so.4", "libcurl-nss.so.4"};
    char errs[768] = "";
    size_t el = 0;
    void *h = NULL;
    for (size_t i = 0; !h && i < sizeof names / sizeof names[0]; i++) {
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!h && el < sizeof errs) el += (size_t)snprintf(errs + el, sizeof errs - el, "%s%s", el ? "; " : "", dlerror());
        if (h && bind_all(h)) h = NULL;
    }
    if (!h) {
        h = dlmopen(LM_ID_NEWLM, "libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
        if (!h && el < sizeof errs) el += (size_t)snprintf(errs + el, sizeof errs - el, "; in a new namespace: %s", dlerror());
        if (h && bind_all(h)) h = NULL;
    }
    if (!h || ot_curl.global_init(CURL_GLOBAL_ALL) != CURLE_OK) {
        snprintf(why, whycap, "cannot load libcurl (%s)", h ? "curl_global_init failed" : errs);
        pthread_mutex_unlock(&load_lock);
        return -1;
    }
    loaded = 1; /* never unloaded: libcurl and its TLS library keep process-exit handlers */
    pthread_mutex_unlock(&load_lock);
    return 0;
}
