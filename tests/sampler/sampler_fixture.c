/* sampler_fixture.c — see sampler_fixture.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jager_plugin.h"
#include "jager_reader.h"
#include "sampler_fixture.h"
#include "testutil.h"

uint64_t fx_gettid(void) { return (uint64_t)syscall(SYS_gettid); }

int fx_perf_available(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.sample_period = 1000000;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) return 0;
    close(fd);
    return 1;
}

const char *fx_start(unsigned hz, const char *mode, uint64_t ring_bytes)
{
    static char path[512];
    snprintf(path, sizeof path, "%s", tu_tmp_path(".jgr"));
    char v[32];
    snprintf(v, sizeof v, "%u", hz);
    setenv("JAGER_SAMPLER_HZ", v, 1);
    setenv("JAGER_SAMPLER_MODE", mode, 1);
    setenv("JAGER_SAMPLER_SCAN_MS", "10", 1);
    jager_config cfg = tu_config(ring_bytes);
    cfg.plugins = "sampler";
    cfg.plugin_path = JAGER_TEST_PLUGIN_DIR;
    cfg.output = path;
    assert_int_equal(jager_init(&cfg), JAGER_OK);
    return path;
}

static void fn_of(const jager_reader *r, uint64_t ip, char *out, size_t cap)
{
    jager_frame fr[8];
    uint32_t n = jager_reader_symbolize(r, ip, fr, 8);
    snprintf(out, cap, "%s", n ? fr[0].func : "??");
}

void fx_stop(const char *path, fx_run *out)
{
    memset(out, 0, sizeof *out);
    out->stats.struct_size = sizeof out->stats;
    assert_int_equal(jager_stats(&out->stats), JAGER_OK);
    jager_shutdown();
    jager_reader *r = NULL;
    assert_int_equal(jager_reader_open(path, &r), JAGER_OK);
    assert_int_equal(jager_reader_load_tables(r), JAGER_OK);
    uint16_t t_sample = jager_reader_type_by_name(r, "sampler.sample");
    uint16_t t_thread = jager_reader_type_by_name(r, "sampler.thread");
    uint16_t t_module = jager_reader_type_by_name(r, "sampler.module");
    uint16_t t_summary = jager_reader_type_by_name(r, "sampler.summary");
    assert_true(t_sample && t_thread && t_module && t_summary);
    size_t cap = 1024;
    out->s = calloc(cap, sizeof *out->s);
    assert_non_null(out->s);
    jager_event ev;
    int rc;
    while ((rc = jager_reader_next(r, &ev)) > 0) {
        const jager_rec_plugin *p = (const jager_rec_plugin *)ev.rec;
        if (ev.type == JAGER_EV_SPAN) {
            out->spans++;
        } else if (ev.type == t_sample) {
            if (out->ns == cap) {
                cap *= 2;
                out->s = realloc(out->s, cap * sizeof *out->s);
                assert_non_null(out->s);
            }
            fx_sample *s = &out->s[out->ns++];
            memset(s, 0, sizeof *s);
            s->os_tid = p->fields[1];
            s->site = p->fields[2];
            s->weight = p->fields[3];
            s->flags = p->fields[5];
            const uint64_t *ips = NULL;
            uint32_t n = 0;
            assert_int_equal(jager_reader_stack(r, p->fields[0], &ips, &n), JAGER_OK);
            s->n = n;
            fn_of(r, ips[0], s->leaf, sizeof s->leaf);
            if (n > 1) fn_of(r, ips[1], s->caller, sizeof s->caller);
        } else if (ev.type == t_thread) {
            if (out->nt < 64) {
                fx_thread *t = &out->t[out->nt++];
                memcpy(t, p->fields, sizeof *t);
            }
        } else if (ev.type == t_module) {
            out->modules++;
            const char *bid = jager_reader_string(r, (uint32_t)p->fields[1]);
            if (bid && strlen(bid) >= 16) out->modules_with_build_id++;
        } else if (ev.type == t_summary) {
            memcpy(out->summary, p->fields, sizeof out->summary);
            out->have_summary = 1;
            snprintf(out->mode, sizeof out->mode, "%s", jager_reader_string(r, (uint32_t)p->fields[0]));
        } else if (ev.type == JAGER_EV_DIAG) {
            const jager_rec_diag *d = (const jager_rec_diag *)ev.rec;
            const char *src = jager_reader_string(r, d->source);
            if (src && strcmp(src, "sampler") == 0) {
                size_t len = strlen(out->diags);
                snprintf(out->diags + len, sizeof out->diags - len, "%.*s\n", (int)d->text_len, (const char *)(d + 1));
            }
        }
    }
    if (rc < 0) fail_msg("reading %s: %s", path, jager_reader_error(r));
    assert_int_equal(rc, 0);
    jager_reader_close(r);
    unlink(path);
    unsetenv("JAGER_SAMPLER_HZ");
    unsetenv("JAGER_SAMPLER_MODE");
    unsetenv("JAGER_SAMPLER_SCAN_MS");
}

void fx_free(fx_run *r)
{
    free(r->s);
    r->s = NULL;
}

size_t fx_count(const fx_run *r, const char *func, uint64_t site, uint64_t tid)
{
    size_t n = 0;
    for (size_t i = 0; i < r->ns; i++) {
        const fx_sample *s = &r->s[i];
        if (func && strcmp(s->leaf, func) != 0) continue;
        if (site != UINT64_MAX && s->site != site) continue;
        if (tid && s->os_tid != tid) continue;
        n++;
    }
    return n;
}
