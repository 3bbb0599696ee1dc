/* dispatch_fixture.c — see dispatch_fixture.h. */
#include "dispatch_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testutil.h"

static uint16_t type_by_name(const char *name)
{
    for (uint32_t id = JAGER_EV_FIRST_PLUGIN; id < jg_type_count(); id++) {
        const jager_type_desc *t = jg_type_get((uint16_t)id);
        if (t && t->name && strcmp(t->name, name) == 0)
            return (uint16_t)id;
    }
    return 0;
}

int dfx_start(dfx *f, const char *env)
{
    memset(f, 0, sizeof *f);
    unsetenv("JAGER_DISPATCH_MAX_SIGNATURES");
    unsetenv("JAGER_DISPATCH_MAX_METHODS");
    if (env) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", env);
        char *eq = strchr(buf, '=');
        if (!eq)
            return -1;
        *eq = '\0';
        setenv(buf, eq + 1, 1);
    }
    jager_sink sink;
    f->ms = memsink_new(&sink);
    if (!f->ms || jager_sink_add(&sink) != JAGER_OK)
        return -1;
    jager_config cfg = tu_config(0);
    cfg.plugins = "dispatch";
    cfg.plugin_path = JAGER_TEST_PLUGIN_DIR;
    if (jager_init(&cfg) != JAGER_OK)
        return -1;
    f->d = jager_extension_get(JAGER_DISPATCH_EXTENSION_ID);
    if (!f->d)
        return -1;
    f->t_signature = type_by_name("dispatch.signature");
    f->t_compile = type_by_name("dispatch.compile");
    f->t_specializations = type_by_name("dispatch.specializations");
    f->t_instability = type_by_name("dispatch.instability");
    f->t_summary = type_by_name("dispatch.summary");
    return f->t_signature && f->t_compile && f->t_specializations && f->t_instability && f->t_summary ? 0 : -1;
}

void dfx_stop(dfx *f)
{
    (void)f;
    jager_shutdown();
}

void dfx_free(dfx *f)
{
    memsink_free(f->ms);
    f->ms = NULL;
}

/* Walk the sink's records in one pass (memsink_at is linear per call). */
const jager_rec_plugin *dfx_nth(const dfx *f, uint16_t type, size_t i)
{
    size_t off = 0;
    for (size_t k = 0; k < f->ms->nrecs && off < f->ms->bytes; k++) {
        const jager_record *rec = (const jager_record *)(f->ms->data + off);
        if (rec->type == type && i-- == 0)
            return (const jager_rec_plugin *)rec;
        off += (size_t)rec->words * 8u;
    }
    return NULL;
}

size_t dfx_count(const dfx *f, uint16_t type)
{
    return memsink_count(f->ms, type, 0, 0);
}

size_t dfx_count_where(const dfx *f, uint16_t type, uint32_t field, uint64_t value)
{
    size_t n = 0, off = 0;
    for (size_t k = 0; k < f->ms->nrecs && off < f->ms->bytes; k++) {
        const jager_rec_plugin *r = (const jager_rec_plugin *)(f->ms->data + off);
        if (r->h.type == type)
            n += r->fields[field] == value;
        off += (size_t)r->h.words * 8u;
    }
    return n;
}

const char *dfx_str(uint64_t id)
{
    const char *s = jg_string((uint32_t)id);
    return s ? s : "(null)";
}

size_t dfx_diags(const dfx *f)
{
    return memsink_count(f->ms, JAGER_EV_DIAG, 0, 0);
}
