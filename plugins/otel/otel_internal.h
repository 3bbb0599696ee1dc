/* otel plugin internals: configuration, the queued items, the loss counters, and the
 * functions each file offers the others.
 *
 * Threads: the sink (otel_sink.c) runs on Jäger's collector thread and only copies records
 * into bounded queues under st->lock (held for a few pointer moves); the exporter thread
 * (otel_export.c) takes batches out under the same lock, then encodes and sends with no
 * lock held. The program's own threads never run plugin code. */
#ifndef JAGER_OTEL_INTERNAL_H
#define JAGER_OTEL_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "jager_plugin.h"

enum { OT_SPANS = 0, OT_LOGS = 1, OT_METRICS = 2, OT_NSIG = 3 };
enum { OT_PROTO_PB = 0, OT_PROTO_JSON = 1 };

/** One export destination (per signal). */
typedef struct ot_endpoint {
    char *url;            /**< full URL, /v1/<signal> included */
    char **headers;       /**< "Key: value" lines */
    size_t nheaders;
    uint64_t timeout_ms;  /**< OTEL_EXPORTER_OTLP_*TIMEOUT: one batch, retries included */
    int gzip;             /**< OTEL_EXPORTER_OTLP_*COMPRESSION=gzip */
    int protocol;         /**< OT_PROTO_* */
} ot_endpoint;

/** A resource attribute (string or integer). */
typedef struct ot_kv {
    char *key;
    char *s;     /**< string value, or NULL for an integer */
    int64_t i;
} ot_kv;

typedef struct ot_config {
    ot_endpoint ep[OT_NSIG];
    uint64_t delay_ms[2];     /**< OTEL_BSP_SCHEDULE_DELAY, OTEL_BLRP_SCHEDULE_DELAY */
    uint32_t queue_cap[2];    /**< OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BLRP_MAX_QUEUE_SIZE */
    uint32_t batch[2];        /**< OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BLRP_... */
    uint64_t bsp_export_timeout_ms[2]; /**< OTEL_BSP_EXPORT_TIMEOUT, OTEL_BLRP_EXPORT_TIMEOUT */
    uint64_t metric_interval_ms; /**< OTEL_METRIC_EXPORT_INTERVAL */
    uint64_t metric_timeout_ms;  /**< OTEL_METRIC_EXPORT_TIMEOUT */
    uint32_t attr_count[2];   /**< OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT / OTEL_LOGRECORD_... (else OTEL_ATTRIBUTE_COUNT_LIMIT) */
    uint32_t attr_len[2];     /**< ..._ATTRIBUTE_VALUE_LENGTH_LIMIT; 0 = none */
    uint32_t site_rate;       /**< JAGER_OTEL_SITE_RATE: spans per site per second; 0 = all */
    uint64_t shutdown_ms;     /**< JAGER_OTEL_SHUTDOWN_TIMEOUT: the final flush */
    uint32_t response_cap;    /**< bytes of a response body kept */
    uint64_t backoff_ms;      /**< JAGER_OTEL_RETRY_INITIAL_BACKOFF: first retry wait */
    ot_kv *res;               /**< resource attributes */
    size_t nres;
    int disabled;             /**< OTEL_SDK_DISABLED=true */
} ot_config;

/** A span ready to export. */
typedef struct ot_span {
    uint8_t trace_id[16], span_id[8], parent[8];
    int has_parent;
    uint64_t start, end;      /**< Unix ns */
    const char *name, *file;  /**< site strings (live until jager_shutdown) */
    uint32_t line, thread;
    uint64_t os_tid;
    uint64_t task;            /**< the task that ran it (jager_task_set), 0 none: jager.task.id */
    uint8_t *attrs;           /**< Jäger attribute-list encoding (owned), or NULL */
    uint32_t attrs_len, nattrs;
    char *error;              /**< failure message (owned); failed != 0 when marked */
    int failed;
    uint64_t error_time;      /**< Unix ns */
    int root;                 /**< the process span */
} ot_span;

/** A log record ready to export. */
typedef struct ot_log {
    uint64_t time;            /**< Unix ns */
    uint32_t severity;
    uint8_t trace_id[16], span_id[8];
    int has_trace, has_span;
    char *body;               /**< owned, body_len bytes */
    uint32_t body_len;
    uint8_t *attrs;           /**< owned attribute list */
    uint32_t attrs_len, nattrs;
} ot_log;

/** Per-site aggregates for the duration histograms. */
typedef struct ot_site {
    uint64_t calls, sum_ns, min_ns, max_ns, errors;
    uint64_t hist[JAGER_HIST_BUCKETS];
} ot_site;

/** A counter of the program (Jäger counters): its latest sample, from any thread (a
 *  monotonic counter's is the process's running total, a gauge's its level). */
typedef struct ot_ctr {
    uint32_t id;
    double value;
    uint64_t time;
} ot_ctr;

/** Events of one plugin type (GC pauses, …): count and the sum of its first duration field. */
typedef struct ot_ptype {
    uint64_t count;
    uint64_t dur_ns;
    int dur_field;       /**< index of the DURATION_NS field flagged JAGER_FIELD_FLAG_EXTENT, -1 none, -2 not looked up */
    int mpi_kind;        /**< ot_mpi_kind() of the type's name */
} ot_ptype;

/** Where every item of one signal went. */
typedef struct ot_counts {
    _Atomic uint64_t seen;             /**< offered to the plugin */
    _Atomic uint64_t sampled_out;      /**< over the per-site rate (not a loss: by policy) */
    _Atomic uint64_t queue_full;       /**< processor: queue full */
    _Atomic uint64_t already_shutdown; /**< processor: arrived after the exporter stopped */
    _Atomic uint64_t enqueued;         /**< processor: accepted */
    _Atomic uint64_t exported;         /**< exporter: accepted by the endpoint */
    _Atomic uint64_t rejected;         /**< exporter: partial_success rejected */
    _Atomic uint64_t timeout;          /**< exporter: the export timeout ran out */
    _Atomic uint64_t connection;       /**< exporter: no connection / lost connection */
    _Atomic uint64_t other;            /**< exporter: encoding or client errors */
    _Atomic uint64_t shutdown;         /**< left in the queue when the final flush ended */
    _Atomic uint64_t http[600];        /**< exporter: failed with this HTTP status */
    _Atomic uint64_t requests, retries;
} ot_counts;

typedef struct ot_pending ot_pending;
typedef struct ot_ctx_thread ot_ctx_thread;
typedef struct ot_state ot_state;

/** An exporter thread's argument. */
typedef struct ot_worker {
    ot_state *st;
    int sig;
} ot_worker;

struct ot_state {
    const jager_host_api *host;
    jager_plugin_handle *self;
    ot_config cfg;

    pthread_mutex_t lock;  /**< queues and flags */
    pthread_cond_t cond;   /**< exporter wake-up */
    void **q[2];
    uint32_t qhead[2], qn[2];
    int stopping, flush_req, closed, thread_started;
    _Atomic int active;        /**< start succeeded: the sink takes records */
    _Atomic uint64_t hard_deadline_ns; /**< final flush ends here (0: none) */
    _Atomic int abort_io;      /**< cut the request in flight */
    pthread_t thread[OT_NSIG]; /**< one exporter thread per signal: a hung endpoint holds up only its own */

    uint64_t anchor_ns, anchor_unix; /**< time base → Unix ns */
    uint8_t trace_id[16], root_id[8], root_parent[8];
    uint8_t own_trace_id[16];  /**< the trace chosen at init (trace_id until an MPI job's is adopted) */
    _Atomic int mpi_adopted;   /**< trace_id is the MPI job's (otel_mpi.c) */
    int has_root_parent;
    char *tracestate;        /**< TRACESTATE of the caller, or NULL */
    char root_name[128];     /**< the process span's name */
    uint64_t salt, start_ns;

    pthread_mutex_t agg_lock;  /**< sites, counters (sink writes, exporter reads) */
    ot_site **sites;
    size_t nsites;
    ot_ctr *ctrs;
    size_t nctrs, cctrs;
    ot_ptype *ptypes;      /**< by type id - JAGER_EV_FIRST_PLUGIN */
    size_t nptypes;
    uint64_t *rate_window; /**< per site: second of the current window */
    uint32_t *rate_count;

    ot_pending *pend;       /**< span attributes/errors waiting for their span's end */
    size_t pend_cap, pend_n;
    ot_ctx_thread *ctx;     /**< per thread: trace contexts adopted while recording (otel_context.c) */
    size_t nctx;
    uint64_t *task;         /**< per thread index: its current task (JAGER_EV_TASK records), collector only */
    size_t ntask;

    ot_counts cnt[OT_NSIG];
    _Atomic uint64_t metric_exports;
    uint16_t self_type;
    void *curl[OT_NSIG];
    uint64_t rng[OT_NSIG];
    ot_worker work[OT_NSIG];
    int busy;                 /**< batches being sent (under lock) */
    /** The core's exact per-site aggregates (jager_site_stats), when the core exports it:
     *  histograms then count every span, sampled into events or not. */
    jager_status (*site_stats)(jager_site site, jager_site_stat *out);
};

/* otel_config.c */
void ot_config_load(ot_state *st);
void ot_config_free(ot_config *c);

/* otel_sink.c */
jager_status ot_sink_write(void *ctx, const jager_batch *b);
void ot_sink_flush(void *ctx);
void ot_sink_close(void *ctx);
void ot_span_free(ot_span *s);
void ot_log_free(ot_log *l);
uint64_t ot_unix(const ot_state *st, uint64_t t);
void ot_span_id(const ot_state *st, uint32_t thread, uint32_t id, uint8_t out[8]);
void ot_pending_free(ot_state *st);
/** Remember a JAGER_EV_CONTEXT record of \p thread (otel_context.c). */
void ot_context_record(ot_state *st, uint32_t thread, const jager_rec_context *r);
/** The trace of span \p span_id of \p thread when the thread adopted another trace: 0 the
 *  run's own; 1 the adopted trace (\p trace_id set), parent in it; 2 also a child of the
 *  remote parent (\p remote_parent set). */
int ot_context_of_span(const ot_state *st, uint32_t thread, uint32_t span_id, uint32_t parent_id,
                       uint8_t trace_id[16], uint8_t remote_parent[8]);
/** Free what ot_context_record kept. */
void ot_context_free(ot_state *st);

/** A queued item: 1 taken, 0 dropped and counted (otel_sink.c). */
int ot_enqueue(ot_state *st, int sig, void *item);

/* otel_mpi.c: the MPI job as one trace */
/** Adopt the job's trace when the mpi plugin has set mpi.trace_id (no-op until then). */
void ot_mpi_adopt(ot_state *st);
/** 1 for the type "mpi.rank", 2 for "mpi.job", else 0. */
int ot_mpi_kind(const char *type_name);
/** The span of an mpi.rank / mpi.job record, or NULL. */
ot_span *ot_mpi_span(ot_state *st, int kind, const jager_record *r, size_t rbytes, uint64_t os_tid);

/* otel_export.c */
int ot_export_start(ot_state *st);
void ot_export_stop(ot_state *st);

/* otel_http.c */
int ot_http_init(ot_state *st, int sig);
void ot_http_free(ot_state *st, int sig);
/** POST one request, retrying per the OTLP spec until \p deadline_ns. Returns 0 and sets
 *  *rejected on success; else the cause in \p cause ("timeout", "connection", "503", …). */
int ot_http_send(ot_state *st, int sig, const uint8_t *body, size_t len, uint64_t deadline_ns,
                 uint64_t *rejected, char *cause, size_t causecap);
uint64_t ot_now(void);
/** Parse Retry-After: delta-seconds or an HTTP date; ms to wait, or -1. */
int64_t ot_retry_after_ms(const char *v, int64_t now_unix_s);

/* A growing byte buffer. */
typedef struct ot_buf {
    uint8_t *p;
    size_t n, cap;
    int oom;
} ot_buf;
void ot_buf_put(ot_buf *b, const void *s, size_t n);
void ot_buf_str(ot_buf *b, const char *s);
void ot_buf_fmt(ot_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One decoded attribute of a Jäger attribute list. */
typedef struct ot_attr {
    const char *key;
    uint32_t key_len, kind, value_len;
    const uint8_t *value;
} ot_attr;
/** Next attribute at *off of a list of len bytes; 0 at the end or on a malformed entry. */
int ot_attr_next(const uint8_t *p, uint32_t len, uint32_t *off, ot_attr *out);
/** Where ot_attr_next() finds the text of an interned string attribute (JAGER_ATTR_STR_ID). */
void ot_attr_strings(const char *(*string_of)(uint32_t id));

/* Shared by both encoders: severity text, resource. */
const char *ot_severity_text(uint32_t sev);

/* otel_pb.c / otel_json.c: one request body per batch. n items; 0 on success. */
int ot_pb_spans(ot_state *st, ot_span **v, size_t n, ot_buf *out);
int ot_pb_logs(ot_state *st, ot_log **v, size_t n, ot_buf *out);
int ot_pb_metrics(ot_state *st, uint64_t now_unix, ot_buf *out, uint64_t *points);
int ot_json_spans(ot_state *st, ot_span **v, size_t n, ot_buf *out);
int ot_json_logs(ot_state *st, ot_log **v, size_t n, ot_buf *out);
int ot_json_metrics(ot_state *st, uint64_t now_unix, ot_buf *out, uint64_t *points);

/* A snapshot of the metrics for one export (otel_export.c builds it, encoders read it). */
typedef struct ot_point {
    const char *name, *unit, *desc;
    int type;               /**< 0 sum (monotonic, cumulative), 1 gauge, 2 histogram */
    int is_int;
    double value;
    const char *akey[3];    /**< up to 3 attributes */
    const char *aval[3];
    int64_t aint[3];        /**< used when aval is NULL */
    int nattr;
    const ot_site *hist;    /**< histogram data (type 2) */
} ot_point;
/** The points of one metrics export, built under agg_lock; free with ot_points_free. */
size_t ot_points_build(ot_state *st, ot_point **out, ot_site **copies);
void ot_points_free(ot_point *p, ot_site *copies);
const char *ot_signal_name(int sig);
void ot_hex(const uint8_t *p, size_t n, char *out);
/** Histogram bucket range [lo, hi) of bucket b, in ns (Jäger's log histogram). */
uint64_t ot_bucket_lower(uint32_t b);

#endif
