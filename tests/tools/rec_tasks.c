/* rec_tasks FILE: a Julia-like recording made with the C API alone (no Julia needed) — tasks
 * interleaving on a thread (jager_task_set), a task that migrates to a second thread (its
 * solve span and the one nested in it begun on thread 1 and ended on thread 2, the inner one
 * keeping its parent: JAGER_EV_SPAN_X), log records and marks carrying the
 * Julia binding's GC counters (gc.* i64 attributes) and code.method, a span error whose span
 * carries code.method, and hostile task and method names. Prints one JSON line: what it
 * recorded (tasks with their span counts and threads, the GC counter samples in time order,
 * the logs and span errors per method; code.method both plain and interned with
 * jager_string_intern, which the tools must count as one), for the report, summary and export tests to
 * compare against. The second thread starts after the first is done, so the thread
 * indexes are 1 (main) and 2. `rec_tasks FILE many`: 500 tasks (more than the report's lanes). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jager.h"

#define M_SOLVE "Tuple{typeof(solve!), Vector{Float64}}"
#define M_STEP "Tuple{typeof(step!), Int64}"
#define M_HOSTILE "</script><img src=x onerror=window.__pwned=5>"
#define T3_NAME "\"><svg onload=window.__pwned=4>"

static jager_site s_main, s_solve, s_step, s_io, s_other;
static jager_span migrating, solve; /* begun by task 2 on thread 1 (migrating inside solve), ended by it on thread 2 */
static int64_t gc_bytes = 1000000, gc_pauses = 0, gc_time = 0, gc_full = 0;
static int nsamples;
static char samples[4096]; /* JSON of the GC counter samples */
static volatile double sink;

static void work(int n)
{
    for (int i = 0; i < n * 1000; i++) sink += (double)i * 1e-9;
}

/* The GC counters as the binding records them, advanced a little at every event. */
static size_t gc_attrs(jager_attr *a)
{
    gc_bytes += 4096 * (nsamples + 1);
    gc_pauses += nsamples % 2;
    gc_time += 1500 * (nsamples % 3);
    gc_full += nsamples == 3;
    a[0] = (jager_attr){.key = "gc.allocated_bytes", .kind = JAGER_ATTR_I64, .value.i64 = gc_bytes};
    a[1] = (jager_attr){.key = "gc.pauses", .kind = JAGER_ATTR_I64, .value.i64 = gc_pauses};
    a[2] = (jager_attr){.key = "gc.time_ns", .kind = JAGER_ATTR_I64, .value.i64 = gc_time};
    a[3] = (jager_attr){.key = "gc.full_sweeps", .kind = JAGER_ATTR_I64, .value.i64 = gc_full};
    size_t o = strlen(samples);
    snprintf(samples + o, sizeof samples - o, "%s[%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "]", nsamples ? "," : "",
             gc_bytes, gc_pauses, gc_time, gc_full);
    nsamples++;
    return 4;
}

/* code.method as a plain string, or interned (JAGER_ATTR_STR_ID: the text once in the file). */
static void log_at(int severity, const char *body, const char *method, int interned)
{
    jager_attr a[6];
    size_t n = gc_attrs(a);
    if (method && interned)
        a[n++] = (jager_attr){.key = "code.method", .kind = JAGER_ATTR_STR_ID, .value.i64 = jager_string_intern(method)};
    else if (method)
        a[n++] = (jager_attr){.key = "code.method", .kind = JAGER_ATTR_STR, .value.str = method};
    jager_log(severity, body, a, n);
}

static void mark_at(const char *name)
{
    jager_attr a[4];
    size_t n = gc_attrs(a);
    jager_mark_attrs(name, a, n);
}

static void *second_thread(void *arg)
{
    (void)arg;
    jager_task_set(3); /* task 3 migrated here */
    jager_span s = jager_span_begin(s_io);
    work(40); /* long enough to be 2 px or more on the page's timeline, even when a loaded host stretches the run */
    log_at(JAGER_SEV_ERROR, "io failed", M_HOSTILE, 1);
    jager_span_end(s);
    jager_task_set(2); /* task 2 resumes here and ends the spans it began on thread 1 */
    work(1);
    log_at(JAGER_SEV_INFO, "resumed", NULL, 0); /* inside migrating, adopted from thread 1 */
    /* as Jager.jl when a migrated span's body throws: attributes and an error set here for
     * a span thread 1 numbers (its id collides with none of this thread's open spans) */
    jager_attr ph = {.key = "phase", .kind = JAGER_ATTR_STR, .value.str = "late"};
    jager_span_set_attrs(migrating, &ph, 1);
    jager_span_error(migrating, "migrated failure");
    jager_span_end(migrating);
    jager_span_end(solve);
    mark_at("checkpoint");
    jager_task_set(4);
    s = jager_span_begin(s_other);
    work(40); /* likewise */
    jager_span_end(s);
    jager_task_set(0);
    return NULL;
}

/* rec_tasks FILE many: 500 tasks on one thread, one span each, task 7 three: more tasks than
 * the report draws as lanes. */
static int many(void)
{
    jager_site t = jager_site_register("t", __FILE__, __LINE__);
    for (uint64_t k = 1; k <= 500; k++) {
        jager_task_set(k);
        for (int i = 0; i < (k == 7 ? 3 : 1); i++) jager_span_end(jager_span_begin(t));
    }
    jager_task_set(0);
    jager_shutdown();
    printf("{\"tasks\":500,\"spans\":502}\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    setenv("JAGER_OUTPUT", argv[1], 1);
    setenv("JAGER_SAMPLE", "all", 1);
    if (jager_init(NULL) != JAGER_OK) return 3;
    if (argc > 2 && !strcmp(argv[2], "many")) return many();
    s_main = jager_site_register("main", __FILE__, __LINE__);
    s_solve = jager_site_register("solve", __FILE__, __LINE__);
    s_step = jager_site_register("step", __FILE__, __LINE__);
    s_io = jager_site_register("io", __FILE__, __LINE__);
    s_other = jager_site_register("other", __FILE__, __LINE__);
    jager_metadata_set("julia.task.2.name", "solver");
    jager_metadata_set("julia.task.3.name", T3_NAME);

    jager_task_set(1);
    jager_span m = jager_span_begin(s_main);
    jager_task_set(2);
    solve = jager_span_begin(s_solve);
    jager_task_set(3);
    jager_span io = jager_span_begin(s_io); /* task 3 yields inside its span */
    work(1);
    jager_task_set(2);
    for (int k = 0; k < 3; k++) {
        jager_span st = jager_span_begin(s_step);
        work(1);
        log_at(JAGER_SEV_INFO, "step done", M_SOLVE, k > 0); /* the first plain, two interned */
        if (k == 2) {
            jager_attr a = {.key = "code.method", .kind = JAGER_ATTR_STR, .value.str = M_STEP};
            jager_span_set_attrs(st, &a, 1);
            jager_span_error(st, "DomainError");
        }
        jager_span_end(st);
    }
    mark_at("halfway");
    jager_task_set(3);
    log_at(JAGER_SEV_WARN, "io slow", M_HOSTILE, 0);
    jager_span_end(io);
    jager_task_set(2);
    migrating = jager_span_begin(s_solve); /* inside solve: its true parent, on thread 1 */
    work(1);
    jager_task_set(1);
    log_at(JAGER_SEV_INFO, "no method here", NULL, 0);
    jager_span_end(m);

    pthread_t t;
    if (pthread_create(&t, NULL, second_thread, NULL)) return 4;
    pthread_join(t, NULL);
    jager_shutdown();

    /* task 1: main; task 2: solve (ended on thread 2) holding 3 × step and solve (migrating,
     * ended on thread 2); task 3: io (thread 1), io (thread 2); task 4: other */
    printf("{\"tasks\":[{\"id\":1,\"spans\":1,\"threads\":[1]},{\"id\":2,\"name\":\"solver\",\"spans\":5,\"threads\":[1,2]},"
           "{\"id\":3,\"name\":");
    fputs("\"\\\"><svg onload=window.__pwned=4>\"", stdout);
    printf(",\"spans\":2,\"threads\":[1,2]},{\"id\":4,\"spans\":1,\"threads\":[2]}],"
           "\"gc_keys\":[\"gc.allocated_bytes\",\"gc.pauses\",\"gc.time_ns\",\"gc.full_sweeps\"],\"gc\":[%s],"
           "\"methods\":{\"%s\":{\"logs\":3,\"warnings\":0,\"errors\":0,\"span_errors\":0},"
           "\"%s\":{\"logs\":0,\"warnings\":0,\"errors\":0,\"span_errors\":1},"
           "\"hostile\":{\"logs\":2,\"warnings\":1,\"errors\":1,\"span_errors\":0}},\"hostile_method\":\"%s\"}\n",
           samples, M_SOLVE, M_STEP, "<\\/script><img src=x onerror=window.__pwned=5>");
    return 0;
}
