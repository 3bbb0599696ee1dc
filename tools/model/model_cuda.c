/* model_cuda.c — the cuda plugin's events in the model (plugins/cuda, docs/cuda.md): GPU
 * time per kernel name and per launching site, launches and their host time, copies per
 * direction, synchronisation time, drops. Read by `jager summary` and the GPU rules of
 * `jager hunt` (hunt_rules_gpu.c). */
#include <stdlib.h>

#include "model_priv.h"
#include "plugin_events.h"

static jm_cuda_site *cuda_site(jm_model *m, uint64_t site)
{
    jm_priv *p = m->priv;
    jm_cuda *c = &m->cuda;
    uint32_t k = jm_map_get(&p->cuda_site_map, site, 0);
    if (k != JM_NONE) return &c->sites[k];
    if (c->nsites >= 65536) return NULL;
    if (jm_grow((void **)&c->sites, &p->cap_cuda_sites, c->nsites + 1, sizeof *c->sites) != 0 ||
        jm_map_put(&p->cuda_site_map, site, 0, c->nsites) != 0) {
        p->oom = 1;
        return NULL;
    }
    jm_cuda_site *s = &c->sites[c->nsites++];
    *s = (jm_cuda_site){.site = site <= UINT32_MAX ? (jager_site)site : 0};
    return s;
}

static jm_cuda_kernel *cuda_name(jm_model *m, uint64_t name)
{
    jm_priv *p = m->priv;
    jm_cuda *c = &m->cuda;
    uint32_t k = jm_map_get(&p->cuda_name_map, name, 0);
    if (k != JM_NONE) return &c->names[k];
    if (c->nnames >= 65536) return NULL;
    if (jm_grow((void **)&c->names, &p->cap_cuda_names, c->nnames + 1, sizeof *c->names) != 0 ||
        jm_map_put(&p->cuda_name_map, name, 0, c->nnames) != 0) {
        p->oom = 1;
        return NULL;
    }
    jm_cuda_kernel *e = &c->names[c->nnames++];
    const char *s = name <= UINT32_MAX ? jager_reader_string(m->reader, (uint32_t)name) : NULL;
    *e = (jm_cuda_kernel){.name = s ? s : "?"};
    return e;
}

void jm_cuda_add(jm_model *m, int role, const jager_event *ev, const uint64_t *v)
{
    jm_cuda *c = &m->cuda;
    switch (role) {
    case JM_ROLE_CUDA_KERNEL: {
        uint64_t dur = v[JP_KERNEL_DURATION_NS];
        uint64_t threads = v[JP_KERNEL_GRID_X] * v[JP_KERNEL_GRID_Y] * v[JP_KERNEL_GRID_Z] * v[JP_KERNEL_BLOCK_X] *
                           v[JP_KERNEL_BLOCK_Y] * v[JP_KERNEL_BLOCK_Z];
        int small = threads < JM_CUDA_SMALL_THREADS;
        c->kernels++;
        c->gpu_ns += dur;
        if (small) {
            c->small++;
            c->small_gpu_ns += dur;
        }
        if (!c->first_kernel_ns || ev->time_ns < c->first_kernel_ns) c->first_kernel_ns = ev->time_ns;
        if (ev->time_ns + dur > c->last_kernel_end_ns) c->last_kernel_end_ns = ev->time_ns + dur;
        jm_cuda_kernel *k = cuda_name(m, v[JP_KERNEL_NAME]);
        if (k) {
            if (!k->count) {
                k->block_threads = v[JP_KERNEL_BLOCK_X] * v[JP_KERNEL_BLOCK_Y] * v[JP_KERNEL_BLOCK_Z];
                k->grid_blocks = v[JP_KERNEL_GRID_X] * v[JP_KERNEL_GRID_Y] * v[JP_KERNEL_GRID_Z];
                k->registers = v[JP_KERNEL_REGISTERS];
                k->shared_bytes = v[JP_KERNEL_STATIC_SHARED] + v[JP_KERNEL_DYNAMIC_SHARED];
            }
            k->count++;
            k->total_ns += dur;
            if (dur > k->max_ns) k->max_ns = dur;
            if (small) k->small++;
        }
        jm_cuda_site *s = cuda_site(m, v[JP_KERNEL_LAUNCH_SITE]);
        if (s) {
            s->kernels++;
            s->gpu_ns += dur;
            if (small) {
                s->small++;
                s->small_gpu_ns += dur;
            }
            if (!s->stack) s->stack = v[JP_KERNEL_LAUNCH_STACK];
        }
        break;
    }
    case JM_ROLE_CUDA_LAUNCH: {
        uint64_t kind = v[JP_LAUNCH_KIND], dur = v[JP_LAUNCH_DURATION_NS];
        if (kind == 1 || kind == 2) {
            c->launches++;
            c->launch_ns += dur;
            jm_cuda_site *s = cuda_site(m, v[JP_LAUNCH_SITE]);
            if (s) {
                s->launches++;
                s->launch_ns += dur;
            }
        } else if (kind == 5) {
            c->sync_calls++;
            c->sync_ns += dur;
            jm_cuda_site *s = cuda_site(m, v[JP_LAUNCH_SITE]);
            if (s) s->sync_ns += dur;
        }
        break;
    }
    case JM_ROLE_CUDA_MEMCPY: {
        uint64_t kind = v[JP_MEMCPY_COPY_KIND];
        int d = kind == 1 ? JM_COPY_HTOD : kind == 2 ? JM_COPY_DTOH : kind == 8 ? JM_COPY_DTOD : JM_COPY_OTHER;
        c->copies[d]++;
        c->copy_bytes[d] += v[JP_MEMCPY_BYTES];
        c->copy_ns[d] += v[JP_MEMCPY_DURATION_NS];
        if (v[JP_MEMCPY_SRC_KIND] == 1 || v[JP_MEMCPY_DST_KIND] == 1) { /* CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE */
            c->pageable_copies++;
            c->pageable_bytes += v[JP_MEMCPY_BYTES];
        }
        break;
    }
    case JM_ROLE_CUDA_DEVICE:
        if (!c->sm_count) {
            c->sm_count = v[JP_DEV_SM_COUNT];
            c->max_threads_per_sm = v[JP_DEV_MAX_THREADS_PER_SM];
            c->registers_per_sm = v[JP_DEV_REGISTERS_PER_SM];
            c->shared_per_sm = v[JP_DEV_SHARED_PER_SM];
        }
        break;
    case JM_ROLE_CUDA_SUMMARY:
        c->have_summary = 1;
        c->dropped += v[JP_CSUM_DROPPED];
        c->pool_exhausted += v[JP_CSUM_POOL_EXHAUSTED];
        c->misses += v[JP_CSUM_MISSES];
        if (v[JP_CSUM_SUGGESTED] > c->suggested_memory_bytes) c->suggested_memory_bytes = v[JP_CSUM_SUGGESTED];
        break;
    default:
        break;
    }
}

static int by_total(const void *a, const void *b)
{
    const jm_cuda_kernel *x = a, *y = b;
    return x->total_ns > y->total_ns ? -1 : x->total_ns < y->total_ns;
}

static int by_cost(const void *a, const void *b)
{
    const jm_cuda_site *x = a, *y = b;
    uint64_t cx = x->gpu_ns + x->launch_ns, cy = y->gpu_ns + y->launch_ns;
    return cx > cy ? -1 : cx < cy;
}

void jm_cuda_finish(jm_model *m)
{
    jm_cuda *c = &m->cuda;
    if (c->nnames) qsort(c->names, c->nnames, sizeof *c->names, by_total);
    if (c->nsites) qsort(c->sites, c->nsites, sizeof *c->sites, by_cost);
    jm_map_clear(&((jm_priv *)m->priv)->cuda_name_map); /* indices are stale after sorting */
    jm_map_clear(&((jm_priv *)m->priv)->cuda_site_map);
}
