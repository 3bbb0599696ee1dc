#include "sample_events.h"

#include <inttypes.h>
#include <stdio.h>

#include "plugin_events.h"

static void resolve(jm_sample_reader *sr, const jager_reader *r)
{
    static const int which[5] = {JP_SMP_STACK, JP_SMP_OS_TID, JP_SMP_SITE, JP_SMP_WEIGHT, JP_SMP_CPU_NS};
    sr->resolved = 1;
    sr->type = jager_reader_type_by_name(r, jp_name(&jp_sampler, JP_SAMPLER_SAMPLE));
    const jager_type_desc *d = sr->type ? jager_reader_type(r, sr->type) : NULL;
    for (int i = 0; i < 5; i++) {
        uint32_t k = jp_field_index(d, &jp_sampler, JP_SAMPLER_SAMPLE, which[i]);
        sr->f[i] = k == UINT32_MAX ? -1 : (int)k;
    }
    if (sr->f[0] < 0 || d->fields[sr->f[0]].kind != JAGER_FIELD_STACK) sr->type = 0;
}

int jm_sample_decode(jm_sample_reader *sr, const jager_reader *r, const jager_event *ev, jm_sample_ev *out)
{
    if (ev->type < JAGER_EV_FIRST_PLUGIN) return 0;
    if (!sr->resolved) resolve(sr, r);
    if (!sr->type || ev->type != sr->type) return 0;
    const jager_rec_plugin *p = (const void *)ev->rec;
    size_t total = (size_t)ev->rec->words * 8u;
    size_t have = total >= sizeof *p ? (total - sizeof *p) / 8u : 0;
    uint64_t v[5];
    for (int i = 0; i < 5; i++) v[i] = sr->f[i] >= 0 && (size_t)sr->f[i] < have ? p->fields[sr->f[i]] : 0;
    *out = (jm_sample_ev){p->time_ns, v[0], v[1], v[2], v[3] ? v[3] : 1, v[4]};
    return 1;
}

int jm_stack_frames(const jager_reader *r, uint64_t stack, jm_frame_fn fn, void *ctx)
{
    const uint64_t *ips = NULL;
    uint32_t n = 0;
    if (!stack || jager_reader_stack(r, stack, &ips, &n) != JAGER_OK) return 0;
    for (uint32_t k = n; k-- > 0;) { /* the reader keeps them innermost first */
        jager_frame fr[16];
        char hex[32];
        uint32_t nf = jager_reader_symbolize(r, ips[k], fr, 16);
        if (nf == 0) { /* unnamed: the address itself (a return address points after its call) */
            snprintf(hex, sizeof hex, "0x%" PRIx64, ips[k] - 1);
            fr[0] = (jager_frame){.func = hex, .file = ""};
            nf = 1;
        }
        for (uint32_t j = 0; j < nf; j++) { /* the containing function, then what is inlined into it */
            int rc = fn(ctx, &fr[j]);
            if (rc) return rc;
        }
    }
    return 0;
}
