/* cuda_test_util.c — see cuda_test_util.h. */
#include <stdlib.h>
#include <string.h>

#include "cuda_test_util.h"
#include "internal.h"
#include "testutil.h"

void ct_env(const char *cupti, const char *driver)
{
    setenv("JAGER_CUDA_CUPTI_LIB", cupti ? cupti : JAGER_FAKE_CUDA_LIB, 1);
    setenv("JAGER_CUDA_DRIVER_LIB", driver ? driver : JAGER_FAKE_CUDA_LIB, 1);
}

void ct_env_clear(void)
{
    unsetenv("JAGER_CUDA_CUPTI_LIB");
    unsetenv("JAGER_CUDA_DRIVER_LIB");
}

memsink *ct_start(void)
{
    jager_sink sink;
    memsink *m = memsink_new(&sink);
    if (!m || jager_sink_add(&sink) != JAGER_OK) return NULL;
    jager_config cfg = tu_config(1u << 22);
    cfg.plugins = "cuda";
    cfg.plugin_path = JAGER_TEST_PLUGIN_DIR;
    if (jager_init(&cfg) != JAGER_OK) return NULL;
    return m;
}

uint16_t ct_type(const char *name)
{
    for (uint32_t id = JAGER_EV_FIRST_PLUGIN; id < jg_type_count(); id++) {
        const jager_type_desc *d = jg_type_get((uint16_t)id);
        if (d && d->name && strcmp(d->name, name) == 0) return (uint16_t)id;
    }
    return 0;
}

const jager_rec_plugin *ct_rec(const memsink *m, uint16_t type, size_t n)
{
    if (!type) return NULL;
    for (size_t k = 0; k < m->nrecs; k++) {
        const jager_record *r = memsink_at(m, k).rec;
        if (r->type == type && n-- == 0) return (const jager_rec_plugin *)r;
    }
    return NULL;
}

size_t ct_count(const memsink *m, uint16_t type) { return type ? memsink_count(m, type, 0, 0) : 0; }

size_t ct_diags(const memsink *m, const char *source, const char *needle)
{
    uint32_t src = jg_intern(source);
    size_t n = 0;
    for (size_t k = 0; k < m->nrecs; k++) {
        const jager_record *rec = memsink_at(m, k).rec;
        if (rec->type != JAGER_EV_DIAG) continue;
        const jager_rec_diag *d = (const jager_rec_diag *)rec;
        if (d->source == src && (!needle || memmem(d + 1, d->text_len, needle, strlen(needle)))) n++;
    }
    return n;
}

CUpti_ActivityKernel10 ct_kernel(uint32_t corr, uint64_t start, uint64_t end, const char *name)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = start;
    k.end = end;
    k.deviceId = 0;
    k.contextId = 1;
    k.streamId = 7;
    k.gridX = 4;
    k.gridY = 1;
    k.gridZ = 1;
    k.blockX = 128;
    k.blockY = 1;
    k.blockZ = 1;
    k.registersPerThread = 32;
    k.staticSharedMemory = 1024;
    k.dynamicSharedMemory = 0;
    k.correlationId = corr;
    k.name = name;
    return k;
}

CUpti_ActivityExternalCorrelation ct_ext(uint32_t corr, uint64_t ext)
{
    CUpti_ActivityExternalCorrelation e;
    memset(&e, 0, sizeof e);
    e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    e.externalId = ext;
    e.correlationId = corr;
    return e;
}

CUpti_ActivityMemcpy6 ct_memcpy(uint32_t corr, uint64_t start, uint64_t end, uint64_t bytes, uint8_t kind)
{
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = kind;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = bytes;
    m.start = start;
    m.end = end;
    m.contextId = 1;
    m.streamId = 7;
    m.correlationId = corr;
    return m;
}

CUpti_ActivityMemset4 ct_memset(uint32_t corr, uint64_t start, uint64_t end, uint64_t bytes)
{
    CUpti_ActivityMemset4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.value = 0;
    m.bytes = bytes;
    m.start = start;
    m.end = end;
    m.contextId = 1;
    m.streamId = 7;
    m.correlationId = corr;
    return m;
}

CUpti_ActivitySynchronization2 ct_sync(uint32_t corr, uint64_t start, uint64_t end)
{
    CUpti_ActivitySynchronization2 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    s.start = start;
    s.end = end;
    s.contextId = 1;
    s.streamId = 0xffffffffu;
    s.correlationId = corr;
    return s;
}
