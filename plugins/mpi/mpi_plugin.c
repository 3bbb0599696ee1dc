/* mpi_plugin.c — the mpi plugin: descriptor, event types, the rank known before MPI_Init,
 * turning recording on at MPI_Init and off at MPI_Finalize.
 *
 * libjager-mpi.so is two things in one file: a PMPI wrapper library (MPI_* symbols,
 * mpi_wrap.c) that must sit in the program's global scope — preloaded, or linked before
 * -lmpi — and a Jäger plugin (jager_plugin_entry) the core's loader opens by name. The
 * loader's dlopen of the same file returns the copy already mapped, so wrappers and
 * plugin share this state. Event types and fields: docs/mpi.md. */
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "mpi_internal.h"

jm_state jm_g = {.rank = -1, .size = 0, .env_rank = -1};

static const jager_field_desc call_fields[] = {
    {"func", JAGER_FIELD_STRING, 0},        /* MPI_Send, … (the site) */
    {"duration_ns", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT},
    {"bytes", JAGER_FIELD_BYTES, 0},        /* sent: count × type size (collectives: this rank's part) */
    {"recv_bytes", JAGER_FIELD_BYTES, 0},   /* received */
    {"dest", JAGER_FIELD_I64, 0},           /* world rank sent to, -1 none */
    {"tag", JAGER_FIELD_I64, 0},            /* send tag, -1 none */
    {"seq", JAGER_FIELD_U64, 0},            /* n-th message to (dest, comm, tag), 0 none */
    {"source", JAGER_FIELD_I64, 0},         /* world rank received from, -1 none, -2 any (not yet known) */
    {"recv_tag", JAGER_FIELD_I64, 0},       /* tag received (or asked for, on Irecv) */
    {"recv_seq", JAGER_FIELD_U64, 0},       /* n-th message from (source, comm, tag), 0 none */
    {"post", JAGER_FIELD_U64, 0},           /* Irecv: the receive's post order on this rank */
    {"root", JAGER_FIELD_I64, 0},           /* world rank of a collective's root, -1 none */
    {"comm", JAGER_FIELD_U64, 0},           /* communicator id (1 world, 2 self) */
    {"comm_size", JAGER_FIELD_U64, 0},
    {"req", JAGER_FIELD_U64, 0},            /* request id started (I*) or last completed (Wait or Test) */
    {"completed", JAGER_FIELD_U64, 0},      /* tracked requests a Wait or Test completed */
    {"caller", JAGER_FIELD_STACK, 0},       /* the calling address */
};
static const jager_field_desc req_fields[] = {
    {"req", JAGER_FIELD_U64, 0},          {"func", JAGER_FIELD_STRING, 0},
    {"done_by", JAGER_FIELD_STRING, 0},   {"kind", JAGER_FIELD_U64, 0}, /* 1 send, 2 receive, 3 collective */
    {"done", JAGER_FIELD_TIME_NS, 0},     {"duration_ns", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT},
    {"bytes", JAGER_FIELD_BYTES, 0},      {"dest", JAGER_FIELD_I64, 0},
    {"tag", JAGER_FIELD_I64, 0},          {"source", JAGER_FIELD_I64, 0},
    {"recv_tag", JAGER_FIELD_I64, 0},     {"recv_bytes", JAGER_FIELD_BYTES, 0},
    {"comm", JAGER_FIELD_U64, 0},         {"seq", JAGER_FIELD_U64, 0}, /* send seq, or receive seq */
    {"post", JAGER_FIELD_U64, 0},
};
static const jager_field_desc comm_fields[] = {
    {"comm", JAGER_FIELD_U64, 0}, {"size", JAGER_FIELD_U64, 0},
    {"parent", JAGER_FIELD_U64, 0}, {"name", JAGER_FIELD_STRING, 0},
};
static const jager_field_desc clock_fields[] = {
    {"phase", JAGER_FIELD_U64, 0},          /* 0 at MPI_Init, 1 at MPI_Finalize */
    {"offset_ns", JAGER_FIELD_I64, 0},      /* rank 0's clock = this rank's + offset */
    {"error_ns", JAGER_FIELD_DURATION_NS, 0}, /* bound: half round trips summed up the tree */
    {"rtt_ns", JAGER_FIELD_DURATION_NS, 0}, /* minimum round trip to the parent */
    {"parent", JAGER_FIELD_I64, 0},         /* the rank measured against, -1 for rank 0 */
    {"ok", JAGER_FIELD_BOOL, 0},            /* 0: a step timed out, the offset is unknown */
};
static const jager_field_desc rank_fields[] = {
    {"rank", JAGER_FIELD_U64, 0},        {"size", JAGER_FIELD_U64, 0},
    {"duration_ns", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT},
    {"span_id", JAGER_FIELD_U64, 0},     {"parent_span_id", JAGER_FIELD_U64, 0},
    {"pid", JAGER_FIELD_U64, 0},
};
static const jager_field_desc job_fields[] = {
    {"size", JAGER_FIELD_U64, 0},
    {"duration_ns", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT},
    {"span_id", JAGER_FIELD_U64, 0},
    {"parent_span_id", JAGER_FIELD_U64, 0},
};
#define JM_N(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

static const char *const fn_names[JM_FN_COUNT] = {
#define JM_CALL(NAME, PARAMS, ARGS, PRE, POST) #NAME,
#include "mpi_calls.def"
#undef JM_CALL
};

void jm_log(int level, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (jm_g.host && jm_g.self) jm_g.host->log(jm_g.self, level, buf);
    else if (!getenv("JAGER_QUIET") || strcmp(getenv("JAGER_QUIET"), "1"))
        fprintf(stderr, "jager: mpi: %s\n", buf);
}

void jm_emit_call(const jm_call *c)
{
    uint64_t f[17] = {jm_g.fn_name[c->fn],
                      c->end > c->start ? c->end - c->start : 0,
                      c->bytes,
                      c->recv_bytes,
                      (uint64_t)c->dest,
                      (uint64_t)c->tag,
                      c->seq,
                      (uint64_t)c->source,
                      (uint64_t)c->recv_tag,
                      c->recv_seq,
                      c->post,
                      (uint64_t)c->root,
                      c->comm,
                      c->comm_size,
                      c->req,
                      c->count,
                      c->caller};
    jm_g.host->emit(jm_g.t_call, c->start, f, 17);
}

/* ---- before MPI_Init: who am I, and where does my file go ---- */
static const char *const rank_vars[] = {"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK",
                                        "SLURM_PROCID", "PALS_RANKID", "ALPS_APP_PE", NULL};
static const char *const size_vars[] = {"PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_NTASKS",
                                        NULL};

static int env_int(const char *name)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v) return -1;
    long x = strtol(v, &end, 10);
    return (*end || x < 0 || x > INT_MAX) ? -1 : (int)x;
}

static int truthy(const char *v) { return v && (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on")); }

/* "%r" in JAGER_OUTPUT becomes the launcher's rank (before the core opens the file), or
 * "p<pid>" when no launcher variable names one. */
static void expand_rank_in_output(void)
{
    const char *out = getenv("JAGER_OUTPUT");
    if (!out || !strstr(out, "%r")) return;
    char rank[32], buf[4096];
    size_t o = 0;
    if (jm_g.env_rank >= 0) snprintf(rank, sizeof rank, "%d", jm_g.env_rank);
    else snprintf(rank, sizeof rank, "p%d", (int)getpid());
    for (const char *p = out; *p && o + 32 < sizeof buf; p++) {
        if (p[0] == '%' && p[1] == 'r') {
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s", rank);
            p++;
        } else {
            buf[o++] = *p;
        }
    }
    buf[o] = 0;
    setenv("JAGER_OUTPUT", buf, 1);
}

/* Preloaded or linked: name this plugin in JAGER_PLUGINS and put this file's folder first
 * in JAGER_PLUGIN_PATH, so the core's loader finds this very copy. */
static void announce_self(void)
{
    Dl_info di;
    const char *pl = getenv("JAGER_PLUGINS");
    int listed = 0;
    if (pl) {
        char tmp[1024];
        snprintf(tmp, sizeof tmp, "%s", pl);
        for (char *save = NULL, *t = strtok_r(tmp, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
            if (!strcmp(t, "mpi")) listed = 1;
    }
    if (!listed) {
        char buf[1100];
        snprintf(buf, sizeof buf, "%s%smpi", pl && *pl ? pl : "", pl && *pl ? "," : "");
        setenv("JAGER_PLUGINS", buf, 1);
    }
    if (dladdr((void *)&announce_self, &di) && di.dli_fname && strchr(di.dli_fname, '/')) {
        char dir[2048], buf[6144];
        snprintf(dir, sizeof dir, "%s", di.dli_fname);
        *strrchr(dir, '/') = 0;
        const char *pp = getenv("JAGER_PLUGIN_PATH");
        snprintf(buf, sizeof buf, "%s%s%s", dir, pp && *pp ? ":" : "", pp && *pp ? pp : "");
        setenv("JAGER_PLUGIN_PATH", buf, 1);
    }
}

/* What the program's own calls bind to: the global scope (the main program, what it
 * links, preloads and RTLD_GLOBAL objects). dlsym(RTLD_DEFAULT) from here would also
 * search this library's own (local) dependencies, so it is not the question. */
static void *global_sym(const char *name)
{
    void *main_h = dlopen(NULL, RTLD_NOW | RTLD_NOLOAD);
    void *p = main_h ? jm_real_dlsym(main_h, name) : NULL;
    if (main_h) dlclose(main_h);
    return p;
}

__attribute__((constructor)) static void jm_ctor(void)
{
    for (int i = 0; rank_vars[i]; i++)
        if ((jm_g.env_rank = env_int(rank_vars[i])) >= 0) {
            jm_g.env_rank_var = rank_vars[i];
            break;
        }
    for (int i = 0; size_vars[i]; i++)
        if ((jm_g.size = env_int(size_vars[i])) > 0) break;
    if (jm_g.size < 0) jm_g.size = 0;
    jm_g.rank = jm_g.env_rank;
    jm_g.no_hooks = truthy(getenv("JAGER_MPI_NO_PATCH"));
    if (truthy(getenv("JAGER_DISABLE"))) return;
    /* In the global scope (preloaded, or linked before -lmpi) our MPI_Send is the one the
     * program calls; opened RTLD_LOCAL by the loader it is not, and the env is left alone. */
    int global = global_sym("MPI_Send") == (void *)&jm_own_MPI_Send;
    jm_gather_setup(global); /* before %r is replaced below */
    expand_rank_in_output();
    if (global) {
        announce_self();
        if (!jm_g.no_hooks) jm_got_patch(0); /* Fortran layers that call PMPI_ directly */
    }
}

/* Linked or preloaded without libjager, or libjager without jager_init(): start the core
 * at MPI_Init (as its own LD_PRELOAD autostart would) and stop it at exit. */
static void jm_autostart(void)
{
    typedef jager_status (*init_fn)(const void *);
    typedef int (*enabled_fn)(void);
    if (truthy(getenv("JAGER_DISABLE"))) return;
    void *init = dlsym(RTLD_DEFAULT, "jager_init");
    if (!init) {
        Dl_info di;
        char path[4096];
        if (dladdr((void *)&jm_autostart, &di) && di.dli_fname && strchr(di.dli_fname, '/')) {
            static const char *const rel[] = {"/../lib/libjager.so.1", "/../../libjager.so.1"};
            for (int i = 0; i < 2 && !init; i++) {
                snprintf(path, sizeof path, "%s", di.dli_fname);
                *strrchr(path, '/') = 0;
                strncat(path, rel[i], sizeof path - strlen(path) - 1);
                void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
                if (h) init = dlsym(h, "jager_init");
            }
        }
        if (!init) {
            void *h = dlopen("libjager.so.1", RTLD_NOW | RTLD_GLOBAL);
            if (h) init = dlsym(h, "jager_init");
        }
        if (!init) {
            jm_log(JAGER_DIAG_WARN, "libjager is not in this process and could not be opened: nothing is recorded "
                                    "(preload libjager.so too, or link it)");
            return;
        }
    }
    enabled_fn en = (enabled_fn)dlsym(RTLD_DEFAULT, "jager_is_enabled");
    if (en && en()) {
        jm_log(JAGER_DIAG_WARN, "Jäger is running without the mpi plugin: add mpi to JAGER_PLUGINS to record MPI");
        return;
    }
    if (((init_fn)init)(NULL) == JAGER_OK && jm_g.plugin_up) {
        void (*sd)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "jager_shutdown");
        if (sd) atexit(sd);
    }
}

static void activate(void)
{
    if (jm_g.mpi_up || !jm_g.plugin_up) return;
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (jm_g.env_rank >= 0 && jm_g.env_rank != rank)
        jm_log(JAGER_DIAG_WARN, "%s says rank %d but MPI_COMM_WORLD says %d: the file names use %d", jm_g.env_rank_var,
               jm_g.env_rank, rank, jm_g.env_rank);
    jm_g.rank = rank;
    jm_g.size = size;
    jm_tables_world(size);
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &jm_g.pcomm) != MPI_SUCCESS) {
        jm_log(JAGER_DIAG_ERROR, "cannot duplicate MPI_COMM_WORLD: MPI calls are not recorded");
        return;
    }
    jm_g.mpi_up = 1;
    jm_sync_job();
    jm_sync_nodes();
    jm_sync_clocks(0);
    atomic_store(&jm_g.active, 1);
}

void jm_after_init(void)
{
    jm_g.init_start = jm_g.host ? jm_g.host->now_ns() : 0;
    if (!jm_g.plugin_up) jm_autostart();
    activate();
}

void jm_before_finalize(void)
{
    if (!atomic_load(&jm_g.active)) return;
    jm_sync_clocks(1);
    jm_census();
    jm_sync_finish();
    jm_callers_name();
    jm_gather();
    PMPI_Comm_free(&jm_g.pcomm);
}

/* ---- plugin callbacks ---- */
static jager_status mpi_init(const jager_host_api *host, jager_plugin_handle *self, void **state)
{
    jager_status st;
    jm_g.host = host;
    jm_g.self = self;
    void *init = global_sym("MPI_Init");
    if (!init) {
        jm_log(JAGER_DIAG_INFO, "this program does not use MPI (no MPI_Init in its global symbols): nothing to record");
        goto aside;
    }
    {
        /* Never unmapped: patched GOT slots, hooked dlsym results and atexit handlers may
         * point into this library after jager_shutdown() closes the plugin. */
        Dl_info di;
        if (dladdr((void *)&mpi_init, &di) && di.dli_fname) dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    }
    if (init != (void *)&jm_own_MPI_Init && !truthy(host->config(self, "no_patch"))) {
        /* opened after the MPI library: point the program's MPI_ slots at the wrappers */
        int n = jm_got_patch(1);
        jm_log(JAGER_DIAG_INFO, "not preloaded: %d MPI call sites of the loaded objects now reach the wrappers "
                                "(GOT patching; MPI calls of objects opened later are not seen)", n);
        if (n > 0) init = (void *)&jm_own_MPI_Init;
    }
    if (init != (void *)&jm_own_MPI_Init) {
        jm_log(JAGER_DIAG_WARN, "this program's MPI calls do not reach the plugin's wrappers (it was opened after "
                                "the MPI library): preload it (LD_PRELOAD=libjager.so:libjager-mpi.so) or link "
                                "libjager-mpi.so before -lmpi; nothing is recorded");
        goto aside;
    }
    if ((st = host->register_type(self, "mpi.call", call_fields, JM_N(call_fields), &jm_g.t_call)) ||
        (st = host->register_type(self, "mpi.request", req_fields, JM_N(req_fields), &jm_g.t_req)) ||
        (st = host->register_type(self, "mpi.comm", comm_fields, JM_N(comm_fields), &jm_g.t_comm)) ||
        (st = host->register_type(self, "mpi.clock", clock_fields, JM_N(clock_fields), &jm_g.t_clock)) ||
        (st = host->register_type(self, "mpi.rank", rank_fields, JM_N(rank_fields), &jm_g.t_rank)) ||
        (st = host->register_type(self, "mpi.job", job_fields, JM_N(job_fields), &jm_g.t_job)))
        goto fail;
    for (int i = 0; i < JM_FN_COUNT; i++)
        if (!(jm_g.fn_name[i] = host->intern(fn_names[i]))) {
            st = JAGER_E_NOMEM;
            goto fail;
        }
    if (jm_tables_init()) {
        st = JAGER_E_NOMEM;
        goto fail;
    }
    if (jm_g.env_rank >= 0) {
        char v[32];
        snprintf(v, sizeof v, "%d", jm_g.env_rank);
        host->metadata_set("mpi.rank", v);
        host->metadata_set("mpi.rank_from", jm_g.env_rank_var);
    }
    jm_g.req_next = jm_g.post_next = jm_g.lost_reqs = jm_g.lost_pairs = 0;
    jm_g.plugin_up = 1;
    *state = &jm_g;
    return JAGER_OK;
fail:
    jm_g.host = NULL;
    jm_g.self = NULL;
    return st;
aside:
    jm_g.host = NULL;
    jm_g.self = NULL;
    return JAGER_E_UNSUPPORTED;
}

static jager_status mpi_start(void *state)
{
    int inited = 0, fin = 0;
    (void)state;
    PMPI_Initialized(&inited);
    PMPI_Finalized(&fin);
    if (inited && !fin) { /* jager_init() after MPI_Init: every rank is expected to do the same */
        int d = jm_depth;
        jm_depth = 1;
        activate();
        jm_depth = d;
    }
    return JAGER_OK;
}

static void mpi_stop(void *state)
{
    (void)state;
    if (atomic_exchange(&jm_g.active, 0) && jm_g.mpi_up)
        jm_log(JAGER_DIAG_INFO, "recording stopped before MPI_Finalize: the finalize clock offsets are not measured");
    if (jm_g.lost_reqs || jm_g.lost_pairs)
        jm_log(JAGER_DIAG_WARN, "tables full: %llu requests and %llu messages recorded without their ids",
               (unsigned long long)jm_g.lost_reqs, (unsigned long long)jm_g.lost_pairs);
}

static void mpi_shutdown(void *state)
{
    (void)state;
    atomic_store(&jm_g.active, 0);
    jm_tables_free();
    free(jm_g.missing);
    jm_g.missing = NULL;
    jm_g.plugin_up = 0;
    jm_g.mpi_up = 0;
    jm_g.host = NULL;
    jm_g.self = NULL;
}

static const jager_option_desc mpi_options[] = {
    {"clock_rounds", "int", "10", "ping-pongs per clock offset measurement (the minimum round trip wins)"},
    {"timeout_ms", "int", "10000", "bound on each step of the job-wide exchanges at MPI_Init/MPI_Finalize"},
    {"aggregate", "bool", "1", "at MPI_Finalize gather every rank's recording into one job file (0: one file per rank)"},
    {"keep_parts", "bool", "0", "keep each rank's own file after the gather succeeded"},
    {"no_patch", "bool", "0", "never rewrite GOT slots (then only a preload or linking before -lmpi intercepts)"},
};

static const jager_plugin_descriptor mpi_desc = {
    .struct_size = sizeof mpi_desc,
    .abi_major = JAGER_PLUGIN_ABI_MAJOR,
    .abi_minor = JAGER_PLUGIN_ABI_MINOR,
    .name = "mpi",
    .version = "1.0.0",
    .description = "MPI calls as events (PMPI), messages matched by id, one trace id per job, clock offsets to rank 0",
    .init = mpi_init,
    .start = mpi_start,
    .stop = mpi_stop,
    .shutdown = mpi_shutdown,
    .options = mpi_options,
    .noptions = JM_N(mpi_options),
    .flags = JAGER_PLUGIN_FLAG_CALLER_THREAD, /* its runtime is called from the program's thread */
};
JAGER_PLUGIN_DEFINE_ENTRY(&mpi_desc)
