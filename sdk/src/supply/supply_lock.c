/* supply_lock.c — the lock file (docs/supply-chain.md): a versioned JSON document read and
 * written with jansson, keys sorted and arrays kept in a stable order so diffs review well;
 * and the problem report every check fills. */
#include "supply.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef JAGER_SUPPLY_CREATOR
#define JAGER_SUPPLY_CREATOR "jager"
#endif

void js_escape(const char *s, char *buf, size_t size)
{
    size_t o = 0;
    if (!size) return;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && o + 5 < size; p++) {
        if (*p < 0x20 || *p == 0x7f) o += (size_t)snprintf(buf + o, size - o, "\\x%02x", *p);
        else buf[o++] = (char)*p;
    }
    buf[o] = 0;
}

void js_report_add(js_report *r, const char *kind, const char *package, const char *file, const char *fmt, ...)
{
    if (r->n == r->cap) {
        size_t c = r->cap ? 2 * r->cap : 16;
        js_problem *nv = realloc(r->v, c * sizeof *nv);
        if (!nv) {
            r->oom = 1;
            return;
        }
        r->v = nv;
        r->cap = c;
    }
    char detail[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    js_problem *p = &r->v[r->n];
    p->kind = strdup(kind);
    p->package = strdup(package ? package : "");
    p->file = strdup(file ? file : "");
    p->detail = strdup(detail);
    if (!p->kind || !p->package || !p->file || !p->detail) {
        free(p->kind), free(p->package), free(p->file), free(p->detail);
        r->oom = 1;
        return;
    }
    r->n++;
}

void js_report_free(js_report *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].kind), free(r->v[i].package), free(r->v[i].file), free(r->v[i].detail);
    }
    free(r->v);
    r->v = NULL;
    r->n = r->cap = 0;
}

static int by_package_file(const void *x, const void *y)
{
    const js_problem *a = *(const js_problem *const *)x, *b = *(const js_problem *const *)y;
    int c = strcmp(a->package, b->package);
    if (!c) c = strcmp(a->file, b->file);
    if (!c) c = strcmp(a->kind, b->kind);
    return c;
}

/* The table, sorted by package, file and kind (a stable order whatever readdir gave). */
void js_report_print(const js_report *r, FILE *out)
{
    const js_problem **o = malloc((r->n ? r->n : 1) * sizeof *o);
    if (!o) {
        fprintf(out, "(out of memory printing %zu problems)\n", r->n);
        return;
    }
    for (size_t i = 0; i < r->n; i++) o[i] = &r->v[i];
    qsort(o, r->n, sizeof *o, by_package_file);
    size_t wk = 4, wp = 7, wf = 4;
    char a[1024], b[1024], c[1024], d[2048];
    for (size_t i = 0; i < r->n; i++) {
        js_escape(o[i]->kind, a, 64);
        js_escape(o[i]->package, b, 64);
        js_escape(o[i]->file, c, 96);
        if (strlen(a) > wk) wk = strlen(a);
        if (strlen(b) > wp) wp = strlen(b);
        if (strlen(c) > wf) wf = strlen(c);
    }
    fprintf(out, "%-*s  %-*s  %-*s  %s\n", (int)wk, "KIND", (int)wp, "PACKAGE", (int)wf, "FILE", "DETAIL");
    for (size_t i = 0; i < r->n; i++) {
        js_escape(o[i]->kind, a, 64);
        js_escape(o[i]->package, b, 64);
        js_escape(o[i]->file, c, 96);
        js_escape(o[i]->detail, d, sizeof d);
        fprintf(out, "%-*s  %-*s  %-*s  %s\n", (int)wk, a, (int)wp, b, (int)wf, c, d);
    }
    if (r->oom) fprintf(out, "(more problems could not be recorded: out of memory)\n");
    free(o);
}

json_t *js_lock_new(void)
{
    return json_pack("{s:s, s:i, s:s}", "format", JS_LOCK_FORMAT, "version", JS_LOCK_VERSION, "created_by", JAGER_SUPPLY_CREATOR);
}

static int check_objects(json_t *objs, char *err, size_t errlen)
{
    if (!json_is_array(objs)) return snprintf(err, errlen, "\"shared_objects\" is not an array"), -1;
    size_t i;
    json_t *o;
    json_array_foreach(objs, i, o) {
        if (!json_is_object(o) || !json_is_string(json_object_get(o, "path")) || !json_is_string(json_object_get(o, "sha256")))
            return snprintf(err, errlen, "shared_objects[%zu] needs string fields \"path\" and \"sha256\"", i), -1;
    }
    return 0;
}

static int check_julia(json_t *jl, char *err, size_t errlen)
{
    if (!json_is_object(jl)) return snprintf(err, errlen, "\"julia\" is not an object"), -1;
    json_t *pk = json_object_get(jl, "packages");
    if (!json_is_array(pk)) return snprintf(err, errlen, "julia.packages is not an array"), -1;
    size_t i;
    json_t *p;
    json_array_foreach(pk, i, p) {
        if (!json_is_object(p) || !json_is_string(json_object_get(p, "name")) || !json_is_string(json_object_get(p, "uuid")))
            return snprintf(err, errlen, "julia.packages[%zu] needs string fields \"name\" and \"uuid\"", i), -1;
        json_t *files = json_object_get(p, "files");
        if (files && !json_is_object(files) && !json_is_null(files))
            return snprintf(err, errlen, "julia.packages[%zu].files is not an object", i), -1;
        const char *k;
        json_t *v;
        if (json_is_object(files))
            json_object_foreach(files, k, v) {
                if (!json_is_string(v)) return snprintf(err, errlen, "julia.packages[%zu].files[\"%s\"] is not a string", i, k), -1;
            }
    }
    return 0;
}

int js_lock_check(json_t *doc, char *err, size_t errlen)
{
    if (!json_is_object(doc)) return snprintf(err, errlen, "not a lock file: the top level is not a JSON object"), -1;
    json_t *f = json_object_get(doc, "format"), *v = json_object_get(doc, "version");
    if (!json_is_string(f) || strcmp(json_string_value(f), JS_LOCK_FORMAT))
        return snprintf(err, errlen, "not a lock file: \"format\" is not \"%s\"", JS_LOCK_FORMAT), -1;
    if (!json_is_integer(v) || json_integer_value(v) < 1)
        return snprintf(err, errlen, "lock file without a valid \"version\""), -1;
    if (json_integer_value(v) > JS_LOCK_VERSION)
        return snprintf(err, errlen, "lock file version %lld is newer than this jager reads (%d): upgrade jager",
                        (long long)json_integer_value(v), JS_LOCK_VERSION), -1;
    json_t *o = json_object_get(doc, "shared_objects");
    if (o && check_objects(o, err, errlen)) return -1;
    json_t *j = json_object_get(doc, "julia");
    if (j && check_julia(j, err, errlen)) return -1;
    return 0;
}

json_t *js_lock_load(const char *path, char *err, size_t errlen)
{
    json_error_t je;
    FILE *f = fopen(path, "rbe");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    json_t *doc = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    fclose(f);
    if (!doc) {
        snprintf(err, errlen, "%s: malformed or truncated lock file: %s (line %d, column %d)", path, je.text, je.line, je.column);
        return NULL;
    }
    char why[512];
    if (js_lock_check(doc, why, sizeof why)) {
        snprintf(err, errlen, "%s: %s", path, why);
        json_decref(doc);
        return NULL;
    }
    return doc;
}

int js_lock_save(const char *path, json_t *doc, char *err, size_t errlen)
{
    js_out o;
    if (js_out_open(&o, path, err, errlen) != 0) return -1;
    int ok = json_dumpf(doc, o.f, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENSURE_ASCII) == 0 && fputc('\n', o.f) != EOF;
    if (errlen) err[0] = 0;
    if (js_out_close(&o, ok, err, errlen) == 0) return 0;
    if (errlen && !err[0]) snprintf(err, errlen, "%s: cannot write", path);
    return -1;
}
