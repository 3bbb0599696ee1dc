/* A pprof Profile built in protobuf-c's generated structs (profile.pb-c.h) and packed by
 * protobuf-c. Each sample, location and function is one allocation holding the message
 * and its arrays, so freeing is one free() per entry. */
#include "export_pprof_profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int pp_profile_init(pp_profile *p)
{
    memset(p, 0, sizeof *p);
    perftools__profiles__profile__init(&p->msg);
    for (int i = 0; i <= PP_MAX_SAMPLE_TYPES; i++) perftools__profiles__value_type__init(&p->types[i]);
    p->msg.sample_type = p->type_ptrs;
    return tu_strdict_put(&p->strings, "", 0) == 0 ? 0 : -1;
}

int64_t pp_str(pp_profile *p, const char *s)
{
    int64_t i = tu_strdict_put(&p->strings, s ? s : "", s ? (uint32_t)strlen(s) : 0);
    if (i < 0) {
        p->oom = 1;
        return 0;
    }
    return i;
}

void pp_sample_type(pp_profile *p, const char *type, const char *unit)
{
    if (p->msg.n_sample_type == PP_MAX_SAMPLE_TYPES) {
        p->oom = 1; /* a programming error, reported like the others */
        return;
    }
    Perftools__Profiles__ValueType *t = &p->types[p->msg.n_sample_type];
    t->type = pp_str(p, type);
    t->unit = pp_str(p, unit);
    p->type_ptrs[p->msg.n_sample_type++] = t;
}

void pp_period(pp_profile *p, const char *type, const char *unit, int64_t period)
{
    Perftools__Profiles__ValueType *t = &p->types[PP_MAX_SAMPLE_TYPES];
    t->type = pp_str(p, type);
    t->unit = pp_str(p, unit);
    p->msg.period_type = t;
    p->msg.period = period;
}

/* Room for one more entry in one of msg's arrays. 0 or -1 (oom set). */
static int reserve(pp_profile *p, void ***arr, size_t n, size_t *cap, size_t elem)
{
    if (p->oom) return -1;
    if (n < *cap) return 0;
    size_t c = *cap ? *cap * 2 : 64;
    void *v = realloc(*arr, c * elem);
    if (!v) {
        p->oom = 1;
        return -1;
    }
    *arr = v;
    *cap = c;
    return 0;
}

void pp_add_sample(pp_profile *p, const uint64_t *loc, size_t nloc, const int64_t *val, size_t nval)
{
    Perftools__Profiles__Profile *m = &p->msg;
    if (reserve(p, (void ***)&m->sample, m->n_sample, &p->samples_cap, sizeof *m->sample)) return;
    Perftools__Profiles__Sample *s = malloc(sizeof *s + nloc * sizeof *loc + nval * sizeof *val);
    if (!s) {
        p->oom = 1;
        return;
    }
    perftools__profiles__sample__init(s);
    s->location_id = (uint64_t *)(s + 1);
    s->value = (int64_t *)(s->location_id + nloc);
    if (nloc) memcpy(s->location_id, loc, nloc * sizeof *loc);
    if (nval) memcpy(s->value, val, nval * sizeof *val);
    s->n_location_id = nloc;
    s->n_value = nval;
    m->sample[m->n_sample++] = s;
}

void pp_add_sample_labelled(pp_profile *p, const uint64_t *loc, size_t nloc, const int64_t *val, size_t nval,
                            const char *key, const char *value)
{
    Perftools__Profiles__Profile *m = &p->msg;
    if (reserve(p, (void ***)&m->sample, m->n_sample, &p->samples_cap, sizeof *m->sample)) return;
    /* one block: the sample, its label pointer and label, then locations and values */
    Perftools__Profiles__Sample *s = malloc(sizeof *s + sizeof(Perftools__Profiles__Label *) +
                                            sizeof(Perftools__Profiles__Label) + nloc * sizeof *loc + nval * sizeof *val);
    if (!s) {
        p->oom = 1;
        return;
    }
    perftools__profiles__sample__init(s);
    Perftools__Profiles__Label **lp = (Perftools__Profiles__Label **)(s + 1);
    Perftools__Profiles__Label *l = (Perftools__Profiles__Label *)(lp + 1);
    perftools__profiles__label__init(l);
    l->key = pp_str(p, key);
    l->str = pp_str(p, value);
    *lp = l;
    s->label = lp;
    s->n_label = 1;
    s->location_id = (uint64_t *)(l + 1);
    s->value = (int64_t *)(s->location_id + nloc);
    if (nloc) memcpy(s->location_id, loc, nloc * sizeof *loc);
    if (nval) memcpy(s->value, val, nval * sizeof *val);
    s->n_location_id = nloc;
    s->n_value = nval;
    m->sample[m->n_sample++] = s;
}

void pp_add_location(pp_profile *p, uint64_t id, uint64_t address, const pp_line *lines, size_t nlines)
{
    Perftools__Profiles__Profile *m = &p->msg;
    if (reserve(p, (void ***)&m->location, m->n_location, &p->locations_cap, sizeof *m->location)) return;
    Perftools__Profiles__Location *l =
        malloc(sizeof *l + nlines * (sizeof(Perftools__Profiles__Line *) + sizeof(Perftools__Profiles__Line)));
    if (!l) {
        p->oom = 1;
        return;
    }
    perftools__profiles__location__init(l);
    l->id = id;
    l->address = address;
    l->n_line = nlines;
    l->line = (Perftools__Profiles__Line **)(l + 1);
    Perftools__Profiles__Line *body = (Perftools__Profiles__Line *)(l->line + nlines);
    for (size_t i = 0; i < nlines; i++) {
        perftools__profiles__line__init(&body[i]);
        body[i].function_id = lines[i].function_id;
        body[i].line = lines[i].line;
        l->line[i] = &body[i];
    }
    m->location[m->n_location++] = l;
}

void pp_add_function(pp_profile *p, uint64_t id, const char *name, const char *file, int64_t start_line)
{
    Perftools__Profiles__Profile *m = &p->msg;
    int64_t sname = pp_str(p, name), sfile = pp_str(p, file);
    if (reserve(p, (void ***)&m->function, m->n_function, &p->functions_cap, sizeof *m->function)) return;
    Perftools__Profiles__Function *f = malloc(sizeof *f);
    if (!f) {
        p->oom = 1;
        return;
    }
    perftools__profiles__function__init(f);
    f->id = id;
    f->name = sname;
    f->system_name = sname;
    f->filename = sfile;
    f->start_line = start_line;
    m->function[m->n_function++] = f;
}

void pp_comment(pp_profile *p, const char *text)
{
    Perftools__Profiles__Profile *m = &p->msg;
    int64_t s = pp_str(p, text);
    if (p->oom) return;
    if (m->n_comment == p->comments_cap) {
        size_t c = p->comments_cap ? p->comments_cap * 2 : 4;
        int64_t *v = realloc(m->comment, c * sizeof *v);
        if (!v) {
            p->oom = 1;
            return;
        }
        m->comment = v;
        p->comments_cap = c;
    }
    m->comment[m->n_comment++] = s;
}

static int gzip_to_file(const uint8_t *data, size_t len, const char *path)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "wb") : stdout;
    if (!f) {
        fprintf(stderr, "jager export: cannot create %s: %s\n", path, strerror(errno));
        return -1;
    }
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 31 /* gzip wrapper */, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        fprintf(stderr, "jager export: zlib: deflateInit2 failed\n");
        if (f != stdout) fclose(f);
        return -1;
    }
    unsigned char out[65536];
    int rc = 0, zr;
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len; /* profiles stay far below 4 GiB */
    do {
        z.next_out = out;
        z.avail_out = sizeof out;
        zr = deflate(&z, Z_FINISH);
        size_t n = sizeof out - z.avail_out;
        if (zr == Z_STREAM_ERROR || fwrite(out, 1, n, f) != n) {
            rc = -1;
            break;
        }
    } while (zr != Z_STREAM_END);
    deflateEnd(&z);
    if (f != stdout ? fclose(f) != 0 : fflush(f) != 0) rc = -1;
    if (rc) fprintf(stderr, "jager export: writing %s failed: %s\n", path, strerror(errno));
    return rc;
}

/* protobuf-c wants NUL-terminated strings; the dictionary keeps lengths. One buffer holds
 * every string with its terminator, \p ptrs points into it. */
static char *string_table(const tu_strdict *d, char **ptrs)
{
    size_t total = 0;
    for (uint32_t i = 0; i < d->count; i++) {
        uint32_t len;
        tu_strdict_get(d, i, &len);
        total += len + 1u;
    }
    char *buf = malloc(total ? total : 1), *w = buf;
    if (!buf) return NULL;
    for (uint32_t i = 0; i < d->count; i++) {
        uint32_t len;
        const char *e = tu_strdict_get(d, i, &len);
        memcpy(w, e, len);
        w[len] = 0;
        ptrs[i] = w;
        w += len + 1u;
    }
    return buf;
}

int pp_profile_write(pp_profile *p, const char *path)
{
    int rc = -1;
    char **ptrs = NULL, *strings = NULL;
    uint8_t *packed = NULL;
    if (p->oom || !(ptrs = malloc((p->strings.count ? p->strings.count : 1) * sizeof *ptrs)) ||
        !(strings = string_table(&p->strings, ptrs)))
        goto oom;
    p->msg.string_table = ptrs;
    p->msg.n_string_table = p->strings.count;
    size_t n = perftools__profiles__profile__get_packed_size(&p->msg);
    if (!(packed = malloc(n ? n : 1))) goto oom;
    if (perftools__profiles__profile__pack(&p->msg, packed) != n) {
        fprintf(stderr, "jager export: protobuf-c packed a profile of an unexpected size\n");
        goto done;
    }
    rc = gzip_to_file(packed, n, path);
    goto done;
oom:
    fprintf(stderr, "jager export: out of memory\n");
done:
    p->msg.string_table = NULL; /* the table lives only for the pack */
    p->msg.n_string_table = 0;
    free(packed);
    free(strings);
    free(ptrs);
    return rc;
}

void pp_profile_free(pp_profile *p)
{
    Perftools__Profiles__Profile *m = &p->msg;
    for (size_t i = 0; i < m->n_sample; i++) free(m->sample[i]);
    for (size_t i = 0; i < m->n_location; i++) free(m->location[i]);
    for (size_t i = 0; i < m->n_function; i++) free(m->function[i]);
    free(m->sample);
    free(m->location);
    free(m->function);
    free(m->comment);
    memset(m, 0, sizeof *m);
    tu_strdict_free(&p->strings);
}
