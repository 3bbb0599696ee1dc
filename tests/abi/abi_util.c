#include "abi_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testutil.h"

void abi_start(abi_run *r, const char *plugins, const char *path)
{
    memset(r, 0, sizeof *r);
    r->m = memsink_new(&r->sink);
    jager_sink_add(&r->sink);
    jager_config c = tu_config(0);
    c.plugins = plugins;
    c.plugin_path = path;
    r->init_status = jager_init(&c);
}

void abi_finish(abi_run *r)
{
    jager_shutdown();
    memsink_free(r->m);
    r->m = NULL;
}

size_t abi_diags(const memsink *m, const char *source, abi_diag *out, size_t max)
{
    size_t n = 0;
    for (size_t off = 0; off < m->bytes;) {
        const jager_record *rec = (const jager_record *)(m->data + off);
        off += (size_t)rec->words * 8u;
        if (rec->type != JAGER_EV_DIAG) continue;
        const jager_rec_diag *d = (const jager_rec_diag *)rec;
        const char *src = jg_string(d->source);
        if (source && (!src || strcmp(src, source) != 0)) continue;
        if (n < max) {
            snprintf(out[n].source, sizeof out[n].source, "%s", src ? src : "");
            out[n].level = (int)rec->aux;
            size_t len = d->text_len < sizeof out[n].text - 1 ? d->text_len : sizeof out[n].text - 1;
            memcpy(out[n].text, d + 1, len);
            out[n].text[len] = 0;
        }
        n++;
    }
    return n;
}

size_t abi_count(const memsink *m, uint16_t type) { return memsink_count(m, type, 0, 0); }

const char *abi_journal_for(const char *names)
{
    const char *path = tu_tmp_path(".journal");
    remove(path);
    char var[128];
    for (const char *p = names; *p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        size_t o = (size_t)snprintf(var, sizeof var, "JAGER_");
        for (size_t i = 0; i < n && o + 10 < sizeof var; i++) var[o++] = (char)(p[i] >= 'a' && p[i] <= 'z' ? p[i] - 32 : p[i]);
        snprintf(var + o, sizeof var - o, "_JOURNAL");
        setenv(var, path, 1);
        p = comma ? comma + 1 : p + n;
    }
    return path;
}

const char *abi_journal_read(const char *path)
{
    static char buf[4096];
    size_t n = 0;
    uint8_t *d = tu_read_file(path, &n);
    buf[0] = 0;
    if (d) {
        if (n >= sizeof buf) n = sizeof buf - 1;
        memcpy(buf, d, n);
        buf[n] = 0;
        free(d);
    }
    return buf;
}
