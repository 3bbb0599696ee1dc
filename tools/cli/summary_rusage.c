/* summary_rusage.c — per region, what the rusage plugin's readings say it cost the machine:
 * CPU against wall time (the rest was waiting: for a CPU, I/O or locks), time runnable but
 * off the CPU, system time and minor page faults a call (model_rusage.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "summary_rusage.h"
#include "toolutil.h"

#define ROWS 12

static const jm_model *sort_model;

static int by_wall(const void *a, const void *b)
{
    double x = sort_model->rusage.sites[*(const uint32_t *)a].wall_ns;
    double y = sort_model->rusage.sites[*(const uint32_t *)b].wall_ns;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Sites with covered spans, most wall time first; returns how many (≤ cap). */
static uint32_t top_sites(const jm_model *m, uint32_t *out, uint32_t cap)
{
    uint32_t n = 0;
    uint32_t *all = malloc((size_t)m->nsites * sizeof *all);
    if (!all) return 0;
    for (uint32_t s = 1; s < m->nsites; s++)
        if (m->rusage.sites[s].spans) all[n++] = s;
    sort_model = m;
    qsort(all, n, sizeof *all, by_wall);
    if (n > cap) n = cap;
    for (uint32_t i = 0; i < n; i++) out[i] = all[i];
    free(all);
    return n;
}

void summary_rusage_text(const jm_model *m)
{
    if (!m->rusage.present) return;
    uint32_t top[ROWS];
    uint32_t n = top_sites(m, top, ROWS);
    if (!n) return;
    printf("\nMachine per region (rusage plugin, readings every %.0f ms; inclusive)\n", (double)m->rusage.interval_ns / 1e6);
    printf("%-36s %10s %10s %10s %10s %12s\n", "site", "wall", "cpu", m->rusage.has_runq ? "cpu wait" : "(no wait)", "system",
           "faults/call");
    for (uint32_t i = 0; i < n; i++) {
        const jm_site_rusage *u = &m->rusage.sites[top[i]];
        char name[160], w[32], c[32], q[32], s[32];
        jm_text_fit(name, sizeof name, jm_site_name(m, top[i]), 36);
        printf("%-36s %10s %10s %10s %10s %12.0f\n", name, tu_fmt_ns(w, sizeof w, u->wall_ns),
               tu_fmt_ns(c, sizeof c, u->incl[JM_RU_CPU]), m->rusage.has_runq ? tu_fmt_ns(q, sizeof q, u->incl[JM_RU_RUNQ]) : "-",
               tu_fmt_ns(s, sizeof s, u->incl[JM_RU_SYS]), u->incl[JM_RU_MINFLT] / (double)u->spans);
    }
}

void summary_rusage_json(const jm_model *m)
{
    printf(",\"rusage\":");
    if (!m->rusage.present) {
        printf("null");
        return;
    }
    printf("{\"interval_ns\":%" PRIu64 ",\"fault_ns\":%" PRIu64 ",\"runq_known\":%s,\"sites\":[", m->rusage.interval_ns,
           m->rusage.fault_ns, m->rusage.has_runq ? "true" : "false");
    int first = 1;
    for (uint32_t s = 1; s < m->nsites; s++) {
        const jm_site_rusage *u = &m->rusage.sites[s];
        if (!u->spans) continue;
        printf("%s{\"site\":%u,\"name\":", first ? "" : ",", s);
        tu_json_str(stdout, jm_site_name(m, s), (size_t)-1);
        printf(",\"spans\":%" PRIu64 ",\"wall_ns\":%.0f,\"cpu_ns\":%.0f,\"runq_ns\":%.0f,\"sys_ns\":%.0f,\"minflt\":%.1f,"
               "\"majflt\":%.1f,\"ivcsw\":%.1f,\"self_minflt\":%.1f}",
               u->spans, u->wall_ns, u->incl[JM_RU_CPU], u->incl[JM_RU_RUNQ], u->incl[JM_RU_SYS], u->incl[JM_RU_MINFLT],
               u->incl[JM_RU_MAJFLT], u->incl[JM_RU_IVCSW], u->self[JM_RU_MINFLT]);
        first = 0;
    }
    printf("]}");
}
