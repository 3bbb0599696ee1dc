/* libcurl, loaded at run time. The plugin does not link libcurl: a process may already hold
 * an incompatible copy of one of its dependencies (Julia 1.5 ships its own libnghttp2, older
 * than the one Debian's libcurl needs), and a plugin that fails to load exports nothing. So
 * ot_curl_load() tries dlopen of libcurl.so.4, libcurl-gnutls.so.4 and libcurl-nss.so.4 (one
 * API), and when all fail, dlmopen() into a fresh link-map namespace. Every curl call
 * of the plugin goes through the table below (the macros keep the code readable). */
#ifndef JAGER_OTEL_CURL_H
#define JAGER_OTEL_CURL_H

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

typedef struct ot_curl_api {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *c);
    void (*easy_reset)(CURL *c);
    CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
    CURLcode (*easy_perform)(CURL *c);
    CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
    void (*slist_free_all)(struct curl_slist *l);
    time_t (*getdate)(const char *p, const time_t *unused);
} ot_curl_api;

extern ot_curl_api ot_curl;

/** Load libcurl once per process; 0 on success, else -1 with the reason in \p why. */
int ot_curl_load(char *why, size_t whycap);

#endif
