/* job.c — the recordings of a job (job.h): job files split into their parts, plain
 * recordings and folders of them, sorted by rank. The layout of a job file is written by
 * plugins/mpi/mpi_gather.c and documented in docs/mpi.md ("Aggregation"). */
#include "job.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jager.h"
#include "outfile.h"
#include "plugin_events.h"

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* A job file mapped read-only: its parts are read in place (memory stays the page cache's). */
struct jm_map {
    void *p;
    size_t n;
};

typedef struct builder {
    jm_job *j;
    size_t cap, mcap, bcap;
    char *err;
    size_t errsize;
} builder;

static int add_missing(builder *b, uint32_t rank)
{
    for (size_t i = 0; i < b->j->nmissing; i++)
        if (b->j->missing[i] == rank) return 0;
    if (b->j->nmissing == b->mcap) {
        size_t c = b->mcap ? 2 * b->mcap : 16;
        uint32_t *m = realloc(b->j->missing, c * sizeof *m);
        if (!m) return -1;
        b->j->missing = m;
        b->mcap = c;
    }
    b->j->missing[b->j->nmissing++] = rank;
    return 0;
}

static int add_part(builder *b, const char *label, int64_t rank, const uint8_t *data, size_t size, const char *path)
{
    jm_job *j = b->j;
    if (j->n == b->cap) {
        size_t c = b->cap ? 2 * b->cap : 8;
        jm_part *p = realloc(j->parts, c * sizeof *p);
        if (!p) goto oom;
        j->parts = p;
        b->cap = c;
    }
    jm_part *p = &j->parts[j->n];
    memset(p, 0, sizeof *p);
    jager_status st = path ? jager_reader_open(path, &p->r) : jager_reader_open_memory(data, size, &p->r);
    if (st != JAGER_OK) {
        snprintf(b->err, b->errsize, "%s: %s", label, jager_last_error());
        return -1;
    }
    if (!(p->label = strdup(label)) || (path && !(p->path = strdup(path)))) {
        free(p->label);
        jager_reader_close(p->r);
        goto oom;
    }
    p->data = data;
    p->size = size;
    p->rank = rank;
    if (rank < 0) { /* a plain recording: its rank from the mpi plugin's metadata, else the core's
                     * (the launcher's rank variable, read before MPI_Init) */
        const char *v = jager_reader_meta(p->r, jp_mpi_meta[JP_MPI_META_RANK]);
        if (!v || !*v) v = jager_reader_meta(p->r, "process.rank");
        char *end;
        if (v && *v) {
            long long x = strtoll(v, &end, 10);
            if (!*end && x >= 0) p->rank = x;
        }
    }
    const char *ws = jager_reader_meta(p->r, jp_mpi_meta[JP_MPI_META_WORLD_SIZE]);
    if (ws && !j->world_size) j->world_size = strtoll(ws, NULL, 10);
    j->n++;
    return 0;
oom:
    snprintf(b->err, b->errsize, "%s: out of memory", label);
    return -1;
}

static int keep_map(builder *b, void *p, size_t n)
{
    if (b->j->nmaps == b->bcap) {
        size_t c = b->bcap ? 2 * b->bcap : 8;
        struct jm_map *v = realloc(b->j->maps, c * sizeof *v);
        if (!v) {
            munmap(p, n);
            snprintf(b->err, b->errsize, "out of memory");
            return -1;
        }
        b->j->maps = v;
        b->bcap = c;
    }
    b->j->maps[b->j->nmaps++] = (struct jm_map){p, n};
    return 0;
}

/* One skippable frame of a job file at p (n bytes left): its 8-byte name and body. */
static int job_frame(const uint8_t *p, size_t n, const char *name, const uint8_t **body, uint32_t *bodyn)
{
    if (n < 16 || rd32(p) != JM_JOB_FRAME_MAGIC) return -1;
    uint32_t s = rd32(p + 4);
    if (s < 8 || s - 8 > n - 16 || memcmp(p + 8, name, 8)) return -1;
    *body = p + 16;
    *bodyn = s - 8;
    return 0;
}

static int add_job_file(builder *b, const char *path, const uint8_t *d, size_t n)
{
    const uint8_t *body;
    uint32_t bn;
    char label[4200];
    if (job_frame(d, n, "JAGERJOB", &body, &bn) || bn < 8 || (rd32(body) & 0xffff) != 1) {
        snprintf(b->err, b->errsize, "%s: not a job file this version reads", path);
        return -1;
    }
    b->j->from_job_file = 1;
    int64_t ws = rd32(body + 4);
    if (ws > b->j->world_size) b->j->world_size = ws;
    size_t off = 16 + bn;
    while (off < n) {
        if (job_frame(d + off, n - off, "JAGERPRT", &body, &bn) == 0 && bn >= 16) {
            int64_t rank = (int64_t)rd64(body);
            uint64_t size = rd64(body + 8);
            off += 16 + bn;
            if (size > n - off) size = n - off; /* a job file cut short: the part's readable prefix */
            snprintf(label, sizeof label, "%s[rank %lld]", path, (long long)rank);
            if (size == 0) {
                if (rank >= 0 && add_missing(b, (uint32_t)rank)) return -1;
            } else if (add_part(b, label, rank, d + off, (size_t)size, NULL)) {
                return -1;
            }
            off += size;
        } else if (job_frame(d + off, n - off, "JAGEREND", &body, &bn) == 0 && bn >= 4) {
            uint32_t k = rd32(body);
            for (uint32_t i = 0; i < k && 4 + 4 * (size_t)i + 4 <= bn; i++)
                if (add_missing(b, rd32(body + 4 + 4 * i))) return -1;
            break;
        } else {
            snprintf(b->err, b->errsize, "%s: byte %zu: not a part of a job file", path, off);
            return -1;
        }
    }
    return 0;
}

/* A job file is mapped and split; a plain recording is read by the streaming reader
 * (bounded memory however large it is). */
static int add_file(builder *b, const char *path)
{
    uint8_t head[16];
    struct stat st;
    /* a pipe or device (`jager dump /dev/stdin`) is read strictly forward by the reader:
     * peeking would eat its first bytes, so it is taken as a plain recording */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) return add_part(b, path, -1, NULL, 0, path);
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    int is_job = got == 16 && rd32(head) == JM_JOB_FRAME_MAGIC && !memcmp(head + 8, "JAGERJOB", 8);
    if (!f || fstat(fileno(f), &st) != 0) {
        snprintf(b->err, b->errsize, "%s: %s", path, strerror(errno));
        if (f) fclose(f);
        return -1;
    }
    if (!is_job) {
        fclose(f);
        return add_part(b, path, -1, NULL, (size_t)st.st_size, path);
    }
    void *d = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fileno(f), 0);
    fclose(f);
    if (d == MAP_FAILED) {
        snprintf(b->err, b->errsize, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (keep_map(b, d, (size_t)st.st_size)) return -1;
    return add_job_file(b, path, d, (size_t)st.st_size);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int add_folder(builder *b, const char *path)
{
    DIR *dir = opendir(path);
    if (!dir) {
        snprintf(b->err, b->errsize, "%s: %s", path, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        if (e->d_name[0] == '.' || !strstr(e->d_name, ".jgr") || strstr(e->d_name, ".tmp")) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **v = realloc(names, cap * sizeof *v);
            if (!v) {
                rc = -1;
                break;
            }
            names = v;
        }
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        if (!(names[n] = malloc(len))) {
            rc = -1;
            break;
        }
        snprintf(names[n++], len, "%s/%s", path, e->d_name);
    }
    closedir(dir);
    if (rc) snprintf(b->err, b->errsize, "%s: out of memory", path);
    if (!rc && !n) {
        snprintf(b->err, b->errsize, "%s: no .jgr files in this folder", path);
        rc = -1;
    }
    if (!rc) qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (!rc) rc = add_file(b, names[i]);
        free(names[i]);
    }
    free(names);
    return rc;
}

static int cmp_part(const void *a, const void *b)
{
    const jm_part *x = a, *y = b;
    if ((x->rank < 0) != (y->rank < 0)) return x->rank < 0 ? 1 : -1;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return 0;
}

int jm_job_open(const char *const *paths, size_t npaths, jm_job **out, char *err, size_t errsize)
{
    jm_job *j = calloc(1, sizeof *j);
    builder b = {.j = j, .err = err, .errsize = errsize};
    *out = NULL;
    if (!j) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < npaths; i++) {
        struct stat st;
        int rc = stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode) ? add_folder(&b, paths[i]) : add_file(&b, paths[i]);
        if (rc) {
            jm_job_free(j);
            return -1;
        }
    }
    if (!j->n) {
        snprintf(err, errsize, "no recording given");
        jm_job_free(j);
        return -1;
    }
    /* stable order: ranks ascending, unknown ones last in input order (insertion sort keeps it) */
    for (size_t i = 1; i < j->n; i++)
        for (size_t k = i; k > 0 && cmp_part(&j->parts[k - 1], &j->parts[k]) > 0; k--) {
            jm_part t = j->parts[k];
            j->parts[k] = j->parts[k - 1];
            j->parts[k - 1] = t;
        }
    for (size_t i = 1; i < j->n; i++)
        if (j->parts[i].rank >= 0 && j->parts[i].rank == j->parts[i - 1].rank) {
            snprintf(err, errsize, "%s and %s are both rank %lld", j->parts[i - 1].label, j->parts[i].label,
                     (long long)j->parts[i].rank);
            jm_job_free(j);
            return -1;
        }
    /* ranks of the world that no part holds */
    for (int64_t r = 0; r < j->world_size && j->n > 1; r++) {
        int have = 0;
        for (size_t i = 0; i < j->n && !have; i++) have = j->parts[i].rank == r;
        if (!have && add_missing(&b, (uint32_t)r)) {
            snprintf(err, errsize, "out of memory");
            jm_job_free(j);
            return -1;
        }
    }
    /* a rank that has a part is not missing (a job file names a rank whose part was cut short) */
    size_t w = 0;
    for (size_t i = 0; i < j->nmissing; i++) {
        int have = 0;
        for (size_t k = 0; k < j->n && !have; k++) have = j->parts[k].rank == (int64_t)j->missing[i];
        if (!have) j->missing[w++] = j->missing[i];
    }
    j->nmissing = w;
    *out = j;
    return 0;
}

void jm_job_free(jm_job *j)
{
    if (!j) return;
    for (size_t i = 0; i < j->n; i++) {
        jager_reader_close(j->parts[i].r);
        free(j->parts[i].label);
        free(j->parts[i].path);
    }
    for (size_t i = 0; i < j->nmaps; i++) munmap(j->maps[i].p, j->maps[i].n);
    free(j->maps);
    free(j->parts);
    free(j->missing);
    free(j);
}

static int frame(FILE *f, const char *name, const void *body, uint32_t n)
{
    uint32_t h[2] = {JM_JOB_FRAME_MAGIC, 8 + n};
    return fwrite(h, 1, 8, f) == 8 && fwrite(name, 1, 8, f) == 8 && (!n || fwrite(body, 1, n, f) == n) ? 0 : -1;
}

int jm_job_write(const jm_job *j, const char *path)
{
    /* Through a temporary renamed at the end (outfile.h): `-o` may name one of the inputs,
     * read again below (fopen "wb" truncated it first), and a device, FIFO or link is
     * written as it is, never replaced. */
    tu_outfile o;
    char why[4400];
    if (tu_outfile_open(&o, path, why, sizeof why) != 0) return -1;
    FILE *f = o.f;
    int64_t ws = j->world_size;
    for (size_t i = 0; i < j->n; i++)
        if (j->parts[i].rank >= ws) ws = j->parts[i].rank + 1;
    uint32_t hdr[2] = {1u, (uint32_t)ws};
    int bad = frame(f, "JAGERJOB", hdr, 8);
    for (size_t i = 0; i < j->n && !bad; i++) {
        const jm_part *p = &j->parts[i];
        uint64_t ph[2] = {(uint64_t)p->rank, p->size};
        bad = frame(f, "JAGERPRT", ph, 16);
        if (!bad && p->data) {
            bad = fwrite(p->data, 1, p->size, f) != p->size;
        } else if (!bad) { /* a plain file: copied as it is now (its size was taken at open) */
            FILE *in = fopen(p->path, "rb");
            char buf[1 << 16];
            size_t left = p->size, k;
            bad = !in;
            while (!bad && left && (k = fread(buf, 1, left < sizeof buf ? left : sizeof buf, in)) > 0) {
                bad = fwrite(buf, 1, k, f) != k;
                left -= k;
            }
            bad |= left != 0;
            if (in) fclose(in);
        }
    }
    uint32_t *end = malloc(4 + 4 * j->nmissing);
    if (end) {
        end[0] = (uint32_t)j->nmissing;
        if (j->nmissing) memcpy(end + 1, j->missing, 4 * j->nmissing); /* missing is NULL when none */
        bad |= frame(f, "JAGEREND", end, (uint32_t)(4 + 4 * j->nmissing));
        free(end);
    } else {
        bad = 1;
    }
    bad |= ferror(f) != 0;
    return tu_outfile_close(&o, !bad, why, sizeof why) != 0 || bad ? -1 : 0;
}
