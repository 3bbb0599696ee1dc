/* bench_doc.c — the "jager-bench" JSON document: validation on load, stable order on save. */
#include "bench_doc.h"
#include "outfile.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *jb_strdup(const char *s)
{
    return strdup(s ? s : "");
}

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return p;
    size_t n = *cap ? *cap * 2 : 8;
    while (n < need) n *= 2;
    void *q = realloc(p, n * elem);
    if (!q) return NULL;
    memset((char *)q + *cap * elem, 0, (n - *cap) * elem);
    *cap = n;
    return q;
}

/* ---------------------------------------------------------------------------------- */
/* Building                                                                           */

jb_result *jb_doc_add_result(jb_doc *d)
{
    jb_result *r = grow(d->results, &d->cap, d->nresults + 1, sizeof *r);
    if (!r) return NULL;
    d->results = r;
    r = &d->results[d->nresults];
    memset(r, 0, sizeof *r);
    r->threshold = -1;
    char **text[] = {&r->machine_class, &r->cpu_model, &r->arch, &r->os, &r->kernel_release,
                     &r->cpu_flags_hash, &r->jager_version, &r->compiler, &r->julia_version,
                     &r->commit, &r->date, &r->command, &r->counters};
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
        if (!(*text[i] = jb_strdup(""))) { jb_result_free(r); return NULL; }
    d->nresults++;
    return r;
}

jb_kernel *jb_result_kernel(jb_result *r, const char *name, const char *file, uint32_t line)
{
    for (size_t i = 0; i < r->nkernels; i++)
        if (!strcmp(r->kernels[i].name, name) && !strcmp(r->kernels[i].file, file ? file : "")
            && r->kernels[i].line == line)
            return &r->kernels[i];
    jb_kernel *k = grow(r->kernels, &r->cap, r->nkernels + 1, sizeof *k);
    if (!k) return NULL;
    r->kernels = k;
    k = &r->kernels[r->nkernels];
    memset(k, 0, sizeof *k);
    k->threshold = -1;
    k->name = jb_strdup(name);
    k->file = jb_strdup(file);
    k->line = line;
    if (!k->name || !k->file) { free(k->name); free(k->file); return NULL; }
    r->nkernels++;
    return k;
}

int jb_kernel_add_run(jb_kernel *k, const jb_run *run)
{
    jb_run *p = grow(k->runs, &k->cap, k->nruns + 1, sizeof *p);
    if (!p) return -1;
    k->runs = p;
    k->runs[k->nruns++] = *run;
    return 0;
}

void jb_result_free(jb_result *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nkernels; i++) {
        free(r->kernels[i].name); free(r->kernels[i].file); free(r->kernels[i].runs);
    }
    free(r->kernels);
    char *text[] = {r->machine_class, r->cpu_model, r->arch, r->os, r->kernel_release,
                    r->cpu_flags_hash, r->jager_version, r->compiler, r->julia_version,
                    r->commit, r->date, r->command, r->counters};
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++) free(text[i]);
    memset(r, 0, sizeof *r);
}

void jb_doc_free(jb_doc *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->nresults; i++) jb_result_free(&d->results[i]);
    free(d->results);
    memset(d, 0, sizeof *d);
}

const jb_result *jb_doc_find(const jb_doc *d, const char *cls)
{
    for (size_t i = 0; i < d->nresults; i++)
        if (!strcmp(d->results[i].machine_class, cls)) return &d->results[i];
    return NULL;
}

int jb_doc_store(jb_doc *d, jb_result *r)
{
    for (size_t i = 0; i < d->nresults; i++)
        if (!strcmp(d->results[i].machine_class, r->machine_class)) {
            jb_result_free(&d->results[i]);
            d->results[i] = *r;
            memset(r, 0, sizeof *r);
            return 0;
        }
    jb_result *slot = grow(d->results, &d->cap, d->nresults + 1, sizeof *slot);
    if (!slot) return -1;
    d->results = slot;
    d->results[d->nresults++] = *r;
    memset(r, 0, sizeof *r);
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Loading                                                                            */

typedef struct ctx {
    const char *name;
    char *err;
    size_t errsize;
} ctx;

__attribute__((format(printf, 2, 3))) static int fail(ctx *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->err, c->errsize, "%s: %s", c->name, msg);
    return -1;
}

/* Copy an optional string member (absent or null: ""); a present non-string is an error. */
static int get_text(ctx *c, json_t *obj, const char *key, const char *where, char **out)
{
    json_t *v = json_object_get(obj, key);
    const char *s = "";
    if (v && !json_is_null(v)) {
        if (!json_is_string(v)) return fail(c, "%s.%s: expected a string", where, key);
        s = json_string_value(v);
    }
    char *dup = jb_strdup(s);
    if (!dup) return fail(c, "out of memory");
    free(*out);
    *out = dup;
    return 0;
}

static int get_number(ctx *c, json_t *obj, const char *key, const char *where, double *out, int required)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) return required ? fail(c, "%s: missing \"%s\"", where, key) : 0;
    if (!json_is_number(v)) return fail(c, "%s.%s: expected a number", where, key);
    *out = json_number_value(v);
    if (!isfinite(*out)) return fail(c, "%s.%s: not a finite number", where, key);
    return 0;
}

/* The per-run columns of a kernel: equal lengths, times positive, counts whole and ≥ 0. */
static int load_runs(ctx *c, json_t *runs, const char *where, jb_kernel *k)
{
    static const char *cols[] = {"median_ns", "mean_ns", "min_ns", "calls", "bytes", "gc_ns"};
    json_t *col[6];
    size_t n = 0;
    if (!json_is_object(runs)) return fail(c, "%s.runs: expected an object of columns", where);
    for (int i = 0; i < 6; i++) {
        col[i] = json_object_get(runs, cols[i]);
        if (!json_is_array(col[i])) return fail(c, "%s.runs.%s: expected an array", where, cols[i]);
        if (i == 0) n = json_array_size(col[i]);
        else if (json_array_size(col[i]) != n)
            return fail(c, "%s.runs.%s: %zu values, but median_ns has %zu", where, cols[i], json_array_size(col[i]), n);
    }
    json_t *exact = json_object_get(runs, "median_exact");
    if (exact && (!json_is_array(exact) || json_array_size(exact) != n))
        return fail(c, "%s.runs.median_exact: expected an array of %zu booleans", where, n);
    for (size_t j = 0; j < n; j++) {
        double v[6];
        for (int i = 0; i < 6; i++) {
            json_t *x = json_array_get(col[i], j);
            if (!json_is_number(x)) return fail(c, "%s.runs.%s[%zu]: expected a number", where, cols[i], j);
            v[i] = json_number_value(x);
            if (!isfinite(v[i]) || v[i] < 0) return fail(c, "%s.runs.%s[%zu]: must be finite and >= 0", where, cols[i], j);
        }
        if (!(v[0] > 0)) return fail(c, "%s.runs.median_ns[%zu]: must be > 0", where, j);
        jb_run r = {v[0], v[1], v[2], (uint64_t)v[3], (uint64_t)v[4], (uint64_t)v[5],
                    exact ? json_is_true(json_array_get(exact, j)) : 0};
        if (jb_kernel_add_run(k, &r)) return fail(c, "out of memory");
    }
    return 0;
}

static int load_kernel(ctx *c, json_t *kj, const char *where, jb_result *r)
{
    if (!json_is_object(kj)) return fail(c, "%s: expected an object", where);
    json_t *name = json_object_get(kj, "name");
    if (!json_is_string(name) || !json_string_length(name)) return fail(c, "%s: missing \"name\"", where);
    json_t *file = json_object_get(kj, "file");
    if (file && !json_is_null(file) && !json_is_string(file)) return fail(c, "%s.file: expected a string", where);
    double line = 0;
    if (get_number(c, kj, "line", where, &line, 0)) return -1;
    if (line < 0 || line > UINT32_MAX) return fail(c, "%s.line: out of range", where);
    size_t before = r->nkernels;
    jb_kernel *k = jb_result_kernel(r, json_string_value(name), file ? json_string_value(file) : "", (uint32_t)line);
    if (!k) return fail(c, "out of memory");
    if (r->nkernels == before) return fail(c, "%s: kernel \"%s\" appears twice", where, k->name);
    if (get_number(c, kj, "threshold", where, &k->threshold, 0) || get_number(c, kj, "noise", where, &k->noise, 0)) return -1;
    if (json_object_get(kj, "threshold") && !(k->threshold > 0 && k->threshold < 10))
        return fail(c, "%s.threshold: must be in (0, 10)", where);
    if (k->noise < 0) return fail(c, "%s.noise: must be >= 0", where);
    return load_runs(c, json_object_get(kj, "runs"), where, k);
}

static int load_result(ctx *c, json_t *rj, size_t idx, jb_doc *d)
{
    char where[64];
    snprintf(where, sizeof where, "results[%zu]", idx);
    if (!json_is_object(rj)) return fail(c, "%s: expected an object", where);
    jb_result *r = jb_doc_add_result(d);
    if (!r) return fail(c, "out of memory");
    json_t *m = json_object_get(rj, "machine"), *t = json_object_get(rj, "toolchain");
    if (!json_is_object(m)) return fail(c, "%s.machine: expected an object", where);
    json_t *cls = json_object_get(m, "class");
    if (!json_is_string(cls) || !json_string_length(cls)) return fail(c, "%s.machine.class: missing", where);
    if (t && !json_is_object(t)) return fail(c, "%s.toolchain: expected an object", where);
    char mw[80], tw[80];
    snprintf(mw, sizeof mw, "%s.machine", where);
    snprintf(tw, sizeof tw, "%s.toolchain", where);
    double cores = 0, threshold = -1, warmup = 0;
    if (get_text(c, m, "class", mw, &r->machine_class) || get_text(c, m, "cpu_model", mw, &r->cpu_model)
        || get_text(c, m, "arch", mw, &r->arch) || get_text(c, m, "os", mw, &r->os)
        || get_text(c, m, "kernel", mw, &r->kernel_release) || get_text(c, m, "cpu_flags_hash", mw, &r->cpu_flags_hash)
        || get_number(c, m, "cores", mw, &cores, 0)
        || (t && (get_text(c, t, "jager", tw, &r->jager_version) || get_text(c, t, "compiler", tw, &r->compiler)
                  || get_text(c, t, "julia", tw, &r->julia_version)))
        || get_text(c, rj, "commit", where, &r->commit) || get_text(c, rj, "date", where, &r->date)
        || get_text(c, rj, "command", where, &r->command) || get_text(c, rj, "counters", where, &r->counters)
        || get_number(c, rj, "threshold", where, &threshold, 0) || get_number(c, rj, "warmup", where, &warmup, 0))
        return -1;
    if (json_object_get(rj, "threshold") && !(threshold > 0 && threshold < 10))
        return fail(c, "%s.threshold: must be in (0, 10)", where);
    r->cores = cores > 0 && cores < 1e6 ? (uint32_t)cores : 0;
    r->threshold = threshold;
    r->warmup = warmup > 0 && warmup < 1e6 ? (uint32_t)warmup : 0;
    r->budget_exhausted = json_is_true(json_object_get(rj, "budget_exhausted"));
    json_t *ks = json_object_get(rj, "kernels");
    if (!json_is_array(ks)) return fail(c, "%s.kernels: expected an array", where);
    for (size_t i = 0; i < json_array_size(ks); i++) {
        char kw[96];
        snprintf(kw, sizeof kw, "%s.kernels[%zu]", where, i);
        if (load_kernel(c, json_array_get(ks, i), kw, r)) return -1;
    }
    return 0;
}

static int load_doc(ctx *c, json_t *root, jb_doc *out)
{
    if (!json_is_object(root)) return fail(c, "not a jager-bench document (the top level is not an object)");
    json_t *schema = json_object_get(root, "schema"), *version = json_object_get(root, "version");
    if (!json_is_string(schema) || strcmp(json_string_value(schema), JB_SCHEMA))
        return fail(c, "not a jager-bench document (\"schema\" is not \"%s\")", JB_SCHEMA);
    if (!json_is_integer(version)) return fail(c, "\"version\" must be an integer");
    json_int_t v = json_integer_value(version);
    if (v != JB_VERSION)
        return fail(c, "schema version %lld is not supported (this jager reads version %d)", (long long)v, JB_VERSION);
    json_t *rs = json_object_get(root, "results");
    if (!json_is_array(rs) || !json_array_size(rs)) return fail(c, "\"results\": expected a non-empty array");
    for (size_t i = 0; i < json_array_size(rs); i++)
        if (load_result(c, json_array_get(rs, i), i, out)) return -1;
    for (size_t i = 0; i < out->nresults; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(out->results[i].machine_class, out->results[j].machine_class))
                return fail(c, "results[%zu] and results[%zu] have the same machine class \"%s\"", j, i,
                            out->results[i].machine_class);
    return 0;
}

int jb_doc_parse(const char *text, size_t len, const char *name, jb_doc *out, char *err, size_t errsize)
{
    ctx c = {name, err, errsize};
    memset(out, 0, sizeof *out);
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) return fail(&c, "malformed JSON at line %d, column %d: %s", je.line, je.column, je.text);
    int rc = load_doc(&c, root, out);
    json_decref(root);
    if (rc) jb_doc_free(out);
    return rc;
}

int jb_doc_load(const char *path, jb_doc *out, char *err, size_t errsize)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) { snprintf(err, errsize, "%s: %s", path, strerror(errno)); return -1; }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 65536 > cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, ncap);
            if (!nb) { free(buf); fclose(f); snprintf(err, errsize, "%s: out of memory", path); return -1; }
            buf = nb; cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) { free(buf); snprintf(err, errsize, "%s: read error", path); return -1; }
    int rc = jb_doc_parse(buf, len, path, out, err, errsize);
    free(buf);
    return rc;
}

/* ---------------------------------------------------------------------------------- */
/* Saving (keys in a fixed order so baselines diff well)                              */

static json_t *runs_json(const jb_kernel *k)
{
    json_t *o = json_object();
    json_t *col[7];
    static const char *cols[] = {"median_ns", "mean_ns", "min_ns", "calls", "bytes", "gc_ns", "median_exact"};
    for (int i = 0; i < 7; i++) { col[i] = json_array(); json_object_set_new(o, cols[i], col[i]); }
    for (size_t j = 0; j < k->nruns; j++) {
        const jb_run *r = &k->runs[j];
        json_array_append_new(col[0], json_real(r->median_ns));
        json_array_append_new(col[1], json_real(r->mean_ns));
        json_array_append_new(col[2], json_real(r->min_ns));
        json_array_append_new(col[3], json_integer((json_int_t)r->calls));
        json_array_append_new(col[4], json_integer((json_int_t)r->bytes));
        json_array_append_new(col[5], json_integer((json_int_t)r->gc_ns));
        json_array_append_new(col[6], json_boolean(r->median_exact));
    }
    return o;
}

static json_t *kernel_json(const jb_kernel *k)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(k->name));
    json_object_set_new(o, "file", json_string(k->file));
    json_object_set_new(o, "line", json_integer(k->line));
    if (k->threshold > 0) json_object_set_new(o, "threshold", json_real(k->threshold));
    if (k->noise > 0) json_object_set_new(o, "noise", json_real(k->noise));
    json_object_set_new(o, "runs", runs_json(k));
    return o;
}

static json_t *result_json(const jb_result *r)
{
    json_t *o = json_object(), *m = json_object(), *t = json_object(), *ks = json_array();
    json_object_set_new(m, "class", json_string(r->machine_class));
    json_object_set_new(m, "arch", json_string(r->arch));
    json_object_set_new(m, "cpu_model", json_string(r->cpu_model));
    json_object_set_new(m, "cpu_flags_hash", json_string(r->cpu_flags_hash));
    json_object_set_new(m, "cores", json_integer(r->cores));
    json_object_set_new(m, "os", json_string(r->os));
    json_object_set_new(m, "kernel", json_string(r->kernel_release));
    json_object_set_new(t, "jager", json_string(r->jager_version));
    json_object_set_new(t, "compiler", json_string(r->compiler));
    if (*r->julia_version) json_object_set_new(t, "julia", json_string(r->julia_version));
    json_object_set_new(o, "machine", m);
    json_object_set_new(o, "toolchain", t);
    json_object_set_new(o, "commit", *r->commit ? json_string(r->commit) : json_null());
    json_object_set_new(o, "date", json_string(r->date));
    json_object_set_new(o, "command", json_string(r->command));
    if (r->threshold > 0) json_object_set_new(o, "threshold", json_real(r->threshold));
    json_object_set_new(o, "warmup", json_integer(r->warmup));
    if (*r->counters) json_object_set_new(o, "counters", json_string(r->counters));
    if (r->budget_exhausted) json_object_set_new(o, "budget_exhausted", json_true());
    for (size_t i = 0; i < r->nkernels; i++) json_array_append_new(ks, kernel_json(&r->kernels[i]));
    json_object_set_new(o, "kernels", ks);
    return o;
}

int jb_doc_save(const jb_doc *d, const char *path, char *err, size_t errsize)
{
    json_t *root = json_object(), *rs = json_array();
    json_object_set_new(root, "schema", json_string(JB_SCHEMA));
    json_object_set_new(root, "version", json_integer(JB_VERSION));
    for (size_t i = 0; i < d->nresults; i++) json_array_append_new(rs, result_json(&d->results[i]));
    json_object_set_new(root, "results", rs);
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(root);
    if (!text) { snprintf(err, errsize, "%s: out of memory", path); return -1; }
    /* "-", devices and pipes are written straight; only regular files (or new paths) are
     * replaced atomically, so a crash never leaves half a baseline behind (outfile.h). */
    tu_outfile o;
    if (tu_outfile_open(&o, path, err, errsize) != 0) {
        free(text);
        return -1;
    }
    int ok = fputs(text, o.f) >= 0 && fputc('\n', o.f) != EOF;
    int rc = tu_outfile_close(&o, ok, err, errsize);
    if (rc && !err[0]) snprintf(err, errsize, "%s: write failed", path);
    free(text);
    return rc;
}
