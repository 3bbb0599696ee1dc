/* cmd_info.c — `jager info FILE`: what a recording holds. One pass over every event gives
 * exact counts per type and per thread; the tables read on the way give the metadata,
 * threads, event types (with their fields), counters, drops and the core's statistics;
 * the end says whether the file was closed cleanly or cut short. Strings from the file are
 * printed JSON-quoted (tu_json_str), so control characters and markup stay inert. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "commands.h"
#include "job.h"
#include "toolutil.h"

static void usage(FILE *out)
{
    fputs("usage: jager info FILE.jgr | JOB.jgr | FOLDER\n"
          "  metadata, threads, event types with counts, drops, and whether the file ended cleanly\n",
          out);
}

static const char *field_kind_name(uint32_t kind)
{
    static const char *names[] = {"?", "u64", "i64", "f64", "string", "stack", "time_ns", "duration_ns",
                                  "bytes", "site", "bool"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

static const char *drop_reason_name(int reason)
{
    static const char *names[] = {"ring_full", "overwritten", "no_ring", "too_large", "sink", "bad_emit", "after_stop"};
    return reason < (int)(sizeof names / sizeof names[0]) ? names[reason] : "other";
}

/* Per-thread event counts, grown as thread indexes appear. */
typedef struct counts {
    uint64_t *by_type;   /* 65536 entries */
    uint64_t *by_thread;
    uint32_t nthreads;   /* capacity of by_thread */
    uint64_t other_thread; /* events of thread indexes too large to keep */
    uint64_t drop_records, dropped_in_records;
} counts;

static int count_event(counts *c, const jager_event *ev)
{
    c->by_type[ev->type]++;
    if (ev->type == JAGER_EV_DROP) {
        c->drop_records++;
        c->dropped_in_records += ((const jager_rec_drop *)ev->rec)->count;
    }
    if (ev->thread >= c->nthreads) {
        if (ev->thread >= (1u << 20)) {
            c->other_thread++;
            return 0;
        }
        uint32_t n = c->nthreads ? c->nthreads : 64;
        while (n <= ev->thread) n *= 2;
        uint64_t *t = realloc(c->by_thread, n * sizeof *t);
        if (!t) return -1;
        memset(t + c->nthreads, 0, (n - c->nthreads) * sizeof *t);
        c->by_thread = t;
        c->nthreads = n;
    }
    c->by_thread[ev->thread]++;
    return 0;
}

static void print_time(FILE *out, uint64_t unix_ns)
{
    time_t s = (time_t)(unix_ns / 1000000000u);
    struct tm tm;
    char buf[64];
    if (unix_ns && gmtime_r(&s, &tm) && strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm))
        fprintf(out, "%s.%09" PRIu64 "Z", buf, unix_ns % 1000000000u);
    else fputs("unknown", out);
}

static void print_header(FILE *out, const char *path, const jager_reader *r, const jager_reader_info *in, int rc)
{
    fputs("file: ", out);
    tu_json_str(out, path, (size_t)-1);
    fprintf(out, "\nformat: %u.%u\nbytes: %" PRIu64 "\nframes: %" PRIu64 "\n", in->format_major, in->format_minor,
            in->file_bytes, in->frames);
    if (rc == 0 && in->clean_end) fputs("status: complete\n", out);
    else {
        fprintf(out, "status: %s\nerror: ", rc == JAGER_E_TRUNCATED ? "truncated" : "damaged");
        tu_json_str(out, jager_reader_error(r), (size_t)-1);
        fprintf(out, "\nreadable_bytes: %" PRIu64 "\n", in->bytes_consumed);
    }
    fputs("start: ", out);
    print_time(out, in->start_unix_ns);
    fputc('\n', out);
    if (in->clean_end && in->end_ns >= in->start_ns && in->start_ns)
        fprintf(out, "duration_ns: %" PRIu64 "\n", in->end_ns - in->start_ns);
    if (in->ticks_per_ns > 0) fprintf(out, "clock_ticks_per_ns: %.6f\n", in->ticks_per_ns);
    fprintf(out, "events: %" PRIu64 "\n", in->events);
}

static void print_tables(FILE *out, const jager_reader *r, const counts *c)
{
    size_t nm = jager_reader_meta_count(r);
    fprintf(out, "metadata: %zu\n", nm);
    for (size_t i = 0; i < nm; i++) {
        const char *k, *v;
        if (jager_reader_meta_at(r, i, &k, &v) != JAGER_OK) continue;
        fputs("  ", out);
        tu_json_str(out, k, (size_t)-1);
        fputs(": ", out);
        tu_json_str(out, v, (size_t)-1);
        fputc('\n', out);
    }
    uint32_t nt = jager_reader_thread_count(r);
    fprintf(out, "threads: %" PRIu32 "\n", nt);
    for (uint32_t t = 1; t <= nt; t++) {
        uint64_t tid = 0;
        const char *name = NULL;
        jager_reader_thread(r, t, &tid, &name);
        fprintf(out, "  %" PRIu32 ": tid %" PRIu64 " name ", t, tid);
        tu_json_str(out, name ? name : "", (size_t)-1);
        fprintf(out, " events %" PRIu64 "\n", t < c->nthreads ? c->by_thread[t] : 0);
    }
    uint32_t ntypes = 0;
    for (uint32_t id = 1; id < 65536; id++) ntypes += jager_reader_type(r, (uint16_t)id) != NULL && (id > 8 || c->by_type[id]);
    fprintf(out, "types: %" PRIu32 "\n", ntypes);
    for (uint32_t id = 1; id < 65536; id++) {
        const jager_type_desc *td = jager_reader_type(r, (uint16_t)id);
        if (!td || (id <= 8 && !c->by_type[id])) continue; /* unused core types stay quiet */
        fprintf(out, "  %" PRIu32 " ", id);
        tu_json_str(out, td->name, (size_t)-1);
        fprintf(out, " %s events %" PRIu64, td->builtin ? "core" : "plugin", c->by_type[id]);
        if (!td->builtin) {
            fputs(" fields", out);
            for (uint32_t f = 0; f < td->nfields; f++) {
                fputc(' ', out);
                tu_json_str(out, td->fields[f].name, (size_t)-1);
                fprintf(out, ":%s", field_kind_name(td->fields[f].kind));
            }
        }
        fputc('\n', out);
    }
    uint32_t nc = jager_reader_counter_count(r);
    fprintf(out, "counters: %" PRIu32 "\n", nc);
    for (uint32_t i = 1; i <= nc; i++) {
        const char *name = NULL, *unit = NULL;
        uint32_t kind = 0;
        jager_reader_counter(r, i, &name, &unit, &kind);
        fprintf(out, "  %" PRIu32 " ", i);
        tu_json_str(out, name, (size_t)-1);
        fputs(" unit ", out);
        tu_json_str(out, unit, (size_t)-1);
        fprintf(out, " %s\n", kind == JAGER_COUNTER_GAUGE ? "gauge" : "monotonic");
    }
    fprintf(out, "sites: %" PRIu32 "\n", jager_reader_site_count(r));
}

static void print_drops(FILE *out, const jager_reader *r, const counts *c)
{
    jager_stat st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    if (jager_reader_stats(r, &st) == JAGER_OK) {
        fprintf(out, "stats: emitted %" PRIu64 " recorded %" PRIu64 " written %" PRIu64 " spans %" PRIu64
                     " span_cost_ns %.3f ring_bytes %" PRIu64 "\n",
                st.events_emitted, st.events_recorded, st.events_written, st.spans_total,
                (double)st.span_cost_ns_x1000 / 1000.0, st.ring_bytes);
        fprintf(out, "dropped: %" PRIu64, st.events_dropped);
        for (int i = 0; i < JAGER_DROP_REASONS; i++)
            if (st.dropped[i]) fprintf(out, " %s %" PRIu64, drop_reason_name(i), st.dropped[i]);
        fputc('\n', out);
        if (st.sinks || st.events_pending || st.drop_reports || st.spans_cross_thread) /* 1.1 */
            fprintf(out, "accounting: pending %" PRIu64 " drop_reports %" PRIu64 " spans_cross_thread %" PRIu64 "\n",
                    st.events_pending, st.drop_reports, st.spans_cross_thread);
        for (uint32_t i = 0; i < st.sinks; i++) {
            jager_sink_stat ks = {.struct_size = sizeof ks};
            if (jager_reader_sink_stats(r, i, &ks) != JAGER_OK) continue;
            fprintf(out, "sink %u ", i);
            tu_json_str(out, ks.name, (size_t)-1);
            fprintf(out, " delivered %" PRIu64 " failed %" PRIu64 " batches_failed %" PRIu64 "\n", ks.events_delivered,
                    ks.events_failed, ks.batches_failed);
        }
    } else {
        fputs("stats: none\n", out);
    }
    fprintf(out, "drop_records: %" PRIu64 " events_lost %" PRIu64 "\n", c->drop_records, c->dropped_in_records);
}

/* One recording: its header, tables and drops. */
static int info_one(const char *path, jager_reader *r)
{
    counts c;
    memset(&c, 0, sizeof c);
    if (!(c.by_type = calloc(65536, sizeof *c.by_type))) {
        fprintf(stderr, "jager info: out of memory\n");
        return JAGER_EXIT_INPUT;
    }
    jager_event ev;
    int rc;
    while ((rc = jager_reader_next(r, &ev)) > 0)
        if (count_event(&c, &ev) != 0) {
            fprintf(stderr, "jager info: out of memory\n");
            break;
        }
    jager_reader_info in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    jager_reader_get_info(r, &in);
    FILE *out = stdout;
    print_header(out, path, r, &in, rc);
    print_tables(out, r, &c);
    print_drops(out, r, &c);
    fflush(out);
    int code = rc > 0 ? JAGER_EXIT_INPUT : cli_finish("info", path, r, rc);
    free(c.by_type);
    free(c.by_thread);
    return code;
}

int cmd_info(int argc, char **argv)
{
    const char **paths = calloc((size_t)argc + 1, sizeof *paths);
    if (!paths) return JAGER_EXIT_INPUT;
    /* one input: a recording, a job file or a folder of one job's rank files */
    const cli_spec spec = {"info", usage, NULL, 0, 1, 1, 0, NULL};
    size_t npos;
    int parsed = cli_parse(&spec, argc, argv, paths, &npos);
    if (parsed) {
        free(paths);
        return cli_parse_exit(parsed);
    }
    jm_job *j = cli_open_job("info", paths, npos);
    free(paths);
    if (!j) return JAGER_EXIT_INPUT;
    int code = JAGER_EXIT_OK, job = j->n > 1 || j->from_job_file;
    for (size_t p = 0; p < j->n; p++) {
        if (job) { /* "rank N: " only for a rank's recording (not a worker's, another process's) */
            printf("%s== ", p ? "\n" : "");
            if (j->parts[p].rank >= 0) printf("rank %lld: ", (long long)j->parts[p].rank);
            cli_put_safe(stdout, j->parts[p].label); /* a name read from a folder may hold control bytes */
            printf(" ==\n");
        }
        int c = info_one(j->parts[p].label, j->parts[p].r);
        if (c > code) code = c;
    }
    if (job && j->nmissing) {
        printf("\nmissing rank(s):");
        for (size_t i = 0; i < j->nmissing; i++) printf("%s%u", i ? "," : " ", j->missing[i]);
        printf("\n");
    }
    jm_job_free(j);
    return code;
}
