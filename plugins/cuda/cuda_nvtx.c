/* cuda_nvtx.c — the NVTX injection: InitializeInjectionNvtx2, exported by this plugin only.
 *
 * Each shared library that includes the NVTX3 headers calls it once (on its first NVTX
 * call) with its own export table; we fill that library's CORE and CORE2 slots. Ranges
 * pushed and popped become Jäger spans (through the public jager.h API found in the process),
 * marks become Jäger marks, start/end ranges become cuda.nvtx_range events. Every call is
 * also forwarded to the injection configured before Jäger (NVTX_INJECTION64_PATH when the
 * plugin started, or JAGER_CUDA_NVTX_CHAIN): it is initialised with an export table of ours
 * whose CORE/CORE2 slots we call after our handler, and whose other modules (CUDA, CUDART,
 * OpenCL, SYNC) are the library's own, so it sees those untouched. Domain, string and range
 * handles are ours; the chained injection's handles are kept inside them and passed to it. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "cuda_internal.h"

/* ---- the Jäger side (public API of the libjager in this process) ---- */
static jager_site (*j_site_register)(const char *, const char *, uint32_t);
static jager_span (*j_span_begin)(jager_site);
static void (*j_span_end)(jager_span);
static void (*j_mark)(const char *);
static uint64_t (*j_now)(void);

static void find_jager(void)
{
    if (j_span_begin) return;
    *(void **)&j_site_register = dlsym(RTLD_DEFAULT, "jager_site_register");
    *(void **)&j_span_end = dlsym(RTLD_DEFAULT, "jager_span_end");
    *(void **)&j_mark = dlsym(RTLD_DEFAULT, "jager_mark");
    *(void **)&j_now = dlsym(RTLD_DEFAULT, "jager_now_ns");
    void *b = dlsym(RTLD_DEFAULT, "jager_span_begin");
    if (!j_site_register || !j_span_end || !j_mark || !j_now) b = NULL;
    *(void **)&j_span_begin = b;
}

#define NVTX_STACK 64
static __thread jager_span tl_spans[NVTX_STACK];
static __thread int tl_depth; /* may exceed NVTX_STACK: those levels are counted, not spans */

/* Domain and string handles live for the process, as NVTX's do; every one stays on a list
 * so that it remains reachable (leak checkers see no leak). */
typedef struct nv_domain {
    char *name;
    nvtxDomainHandle_t chained;
    struct nv_domain *next;
} nv_domain;
typedef struct nv_string {
    char *text;
    nvtxStringHandle_t chained;
    struct nv_string *next;
} nv_string;
static nv_domain *all_domains;
static nv_string *all_strings;
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;

static void keep_domain(nv_domain *d)
{
    pthread_mutex_lock(&handles_lock);
    d->next = all_domains;
    all_domains = d;
    pthread_mutex_unlock(&handles_lock);
}
static void keep_string(nv_string *s)
{
    pthread_mutex_lock(&handles_lock);
    s->next = all_strings;
    all_strings = s;
    pthread_mutex_unlock(&handles_lock);
}

static const char *message_of(const nvtxEventAttributes_t *a, char *buf, size_t len)
{
    if (!a) return "(nvtx)";
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return a->message.ascii ? a->message.ascii : "(nvtx)";
    case NVTX_MESSAGE_TYPE_REGISTERED: {
        const nv_string *s = (const nv_string *)a->message.registered;
        return s && s->text ? s->text : "(nvtx)";
    }
    case NVTX_MESSAGE_TYPE_UNICODE: snprintf(buf, len, "(nvtx unicode)"); return buf;
    default: return "(nvtx)";
    }
}

/* The attributes as the chained injection must see them (its own string handle). */
static const nvtxEventAttributes_t *for_chain(const nvtxEventAttributes_t *a, nvtxEventAttributes_t *copy)
{
    if (!a || a->messageType != NVTX_MESSAGE_TYPE_REGISTERED) return a;
    size_t n = a->size < sizeof *copy ? a->size : sizeof *copy;
    memset(copy, 0, sizeof *copy);
    memcpy(copy, a, n);
    const nv_string *s = (const nv_string *)a->message.registered;
    copy->message.registered = s ? s->chained : NULL;
    return copy;
}

static void push_named(const char *name)
{
    find_jager();
    int d = tl_depth++;
    if (!j_span_begin || d >= NVTX_STACK) return;
    tl_spans[d] = j_span_begin(j_site_register(name, "nvtx", 0));
}

static void pop_one(void)
{
    if (tl_depth <= 0) return;
    int d = --tl_depth;
    if (j_span_end && d < NVTX_STACK) j_span_end(tl_spans[d]);
}

/* start/end ranges: our ids, the chained injection's ids kept beside them */
#define NV_RANGES 4096u
typedef struct nv_range {
    uint64_t id, chained, start_ns;
    uint32_t name, domain, category;
} nv_range;
static nv_range ranges[NV_RANGES];
static _Atomic uint64_t next_range;
static pthread_mutex_t nv_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t range_start(const char *name, const char *domain, uint32_t category, uint64_t chained)
{
    uint64_t id = atomic_fetch_add(&next_range, 1) + 1;
    cu_state *st = &cu_g;
    find_jager();
    nv_range *r = &ranges[id % NV_RANGES];
    pthread_mutex_lock(&nv_lock);
    r->id = id;
    r->chained = chained;
    r->start_ns = j_now ? j_now() : 0;
    r->name = st->active ? st->host->intern(name) : 0;
    r->domain = st->active && domain ? st->host->intern(domain) : 0;
    r->category = category;
    pthread_mutex_unlock(&nv_lock);
    return id;
}

static uint64_t range_end(uint64_t id)
{
    cu_state *st = &cu_g;
    nv_range r;
    pthread_mutex_lock(&nv_lock);
    r = ranges[id % NV_RANGES];
    if (r.id == id) ranges[id % NV_RANGES].id = 0;
    pthread_mutex_unlock(&nv_lock);
    if (r.id != id) return 0;
    if (st->active && j_now) {
        uint64_t now = j_now();
        uint64_t f[] = {now - r.start_ns, r.name, r.domain, r.category};
        st->host->emit(st->t_nvtx_range, r.start_ns, f, CU_N(f));
    }
    return r.chained;
}

/* ---- forward tables (filled by the chained injection) ---- */
static NvtxFunctionPointer fwd_core[NVTX_CBID_CORE_SIZE];
static NvtxFunctionPointer fwd_core2[NVTX_CBID_CORE2_SIZE];
#define FWD(tab, id, type) ((type)(tab)[id])

/* ---- CORE handlers ---- */
static void NVTX_API h_MarkEx(const nvtxEventAttributes_t *a)
{
    char buf[32];
    find_jager();
    if (j_mark) j_mark(message_of(a, buf, sizeof buf));
    nvtxEventAttributes_t c;
    if (fwd_core[NVTX_CBID_CORE_MarkEx]) FWD(fwd_core, NVTX_CBID_CORE_MarkEx, nvtxMarkEx_impl_fntype)(for_chain(a, &c));
}
static void NVTX_API h_MarkA(const char *m)
{
    find_jager();
    if (j_mark && m) j_mark(m);
    if (fwd_core[NVTX_CBID_CORE_MarkA]) FWD(fwd_core, NVTX_CBID_CORE_MarkA, nvtxMarkA_impl_fntype)(m);
}
static void NVTX_API h_MarkW(const wchar_t *m)
{
    find_jager();
    if (j_mark) j_mark("(nvtx unicode)");
    if (fwd_core[NVTX_CBID_CORE_MarkW]) FWD(fwd_core, NVTX_CBID_CORE_MarkW, nvtxMarkW_impl_fntype)(m);
}
static nvtxRangeId_t NVTX_API h_RangeStartEx(const nvtxEventAttributes_t *a)
{
    char buf[32];
    nvtxEventAttributes_t c;
    uint64_t ch = fwd_core[NVTX_CBID_CORE_RangeStartEx]
                      ? FWD(fwd_core, NVTX_CBID_CORE_RangeStartEx, nvtxRangeStartEx_impl_fntype)(for_chain(a, &c))
                      : 0;
    return range_start(message_of(a, buf, sizeof buf), NULL, a ? a->category : 0, ch);
}
static nvtxRangeId_t NVTX_API h_RangeStartA(const char *m)
{
    uint64_t ch = fwd_core[NVTX_CBID_CORE_RangeStartA]
                      ? FWD(fwd_core, NVTX_CBID_CORE_RangeStartA, nvtxRangeStartA_impl_fntype)(m)
                      : 0;
    return range_start(m ? m : "(nvtx)", NULL, 0, ch);
}
static nvtxRangeId_t NVTX_API h_RangeStartW(const wchar_t *m)
{
    uint64_t ch = fwd_core[NVTX_CBID_CORE_RangeStartW]
                      ? FWD(fwd_core, NVTX_CBID_CORE_RangeStartW, nvtxRangeStartW_impl_fntype)(m)
                      : 0;
    return range_start("(nvtx unicode)", NULL, 0, ch);
}
static void NVTX_API h_RangeEnd(nvtxRangeId_t id)
{
    uint64_t ch = range_end(id);
    if (fwd_core[NVTX_CBID_CORE_RangeEnd]) FWD(fwd_core, NVTX_CBID_CORE_RangeEnd, nvtxRangeEnd_impl_fntype)(ch);
}
static int NVTX_API h_RangePushEx(const nvtxEventAttributes_t *a)
{
    char buf[32];
    nvtxEventAttributes_t c;
    push_named(message_of(a, buf, sizeof buf));
    if (fwd_core[NVTX_CBID_CORE_RangePushEx])
        FWD(fwd_core, NVTX_CBID_CORE_RangePushEx, nvtxRangePushEx_impl_fntype)(for_chain(a, &c));
    return tl_depth - 1;
}
static int NVTX_API h_RangePushA(const char *m)
{
    push_named(m ? m : "(nvtx)");
    if (fwd_core[NVTX_CBID_CORE_RangePushA]) FWD(fwd_core, NVTX_CBID_CORE_RangePushA, nvtxRangePushA_impl_fntype)(m);
    return tl_depth - 1;
}
static int NVTX_API h_RangePushW(const wchar_t *m)
{
    push_named("(nvtx unicode)");
    if (fwd_core[NVTX_CBID_CORE_RangePushW]) FWD(fwd_core, NVTX_CBID_CORE_RangePushW, nvtxRangePushW_impl_fntype)(m);
    return tl_depth - 1;
}
static int NVTX_API h_RangePop(void)
{
    int was = tl_depth - 1;
    pop_one();
    if (fwd_core[NVTX_CBID_CORE_RangePop]) FWD(fwd_core, NVTX_CBID_CORE_RangePop, nvtxRangePop_impl_fntype)();
    return was < 0 ? -1 : was;
}
static void NVTX_API h_NameCategoryA(uint32_t c, const char *n)
{
    if (fwd_core[NVTX_CBID_CORE_NameCategoryA])
        FWD(fwd_core, NVTX_CBID_CORE_NameCategoryA, nvtxNameCategoryA_impl_fntype)(c, n);
}
static void NVTX_API h_NameCategoryW(uint32_t c, const wchar_t *n)
{
    if (fwd_core[NVTX_CBID_CORE_NameCategoryW])
        FWD(fwd_core, NVTX_CBID_CORE_NameCategoryW, nvtxNameCategoryW_impl_fntype)(c, n);
}
static void NVTX_API h_NameOsThreadA(uint32_t t, const char *n)
{
    if (fwd_core[NVTX_CBID_CORE_NameOsThreadA])
        FWD(fwd_core, NVTX_CBID_CORE_NameOsThreadA, nvtxNameOsThreadA_impl_fntype)(t, n);
}
static void NVTX_API h_NameOsThreadW(uint32_t t, const wchar_t *n)
{
    if (fwd_core[NVTX_CBID_CORE_NameOsThreadW])
        FWD(fwd_core, NVTX_CBID_CORE_NameOsThreadW, nvtxNameOsThreadW_impl_fntype)(t, n);
}

/* ---- CORE2 (domains) ---- */
#define DCH(d) ((d) ? ((nv_domain *)(d))->chained : NULL)
#define DNAME(d) ((d) ? ((nv_domain *)(d))->name : NULL)

static void NVTX_API h_DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    char buf[32];
    nvtxEventAttributes_t c;
    find_jager();
    if (j_mark) j_mark(message_of(a, buf, sizeof buf));
    if (fwd_core2[NVTX_CBID_CORE2_DomainMarkEx])
        FWD(fwd_core2, NVTX_CBID_CORE2_DomainMarkEx, nvtxDomainMarkEx_impl_fntype)(DCH(d), for_chain(a, &c));
}
static nvtxRangeId_t NVTX_API h_DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    char buf[32];
    nvtxEventAttributes_t c;
    uint64_t ch = fwd_core2[NVTX_CBID_CORE2_DomainRangeStartEx]
                      ? FWD(fwd_core2, NVTX_CBID_CORE2_DomainRangeStartEx,
                            nvtxDomainRangeStartEx_impl_fntype)(DCH(d), for_chain(a, &c))
                      : 0;
    return range_start(message_of(a, buf, sizeof buf), DNAME(d), a ? a->category : 0, ch);
}
static void NVTX_API h_DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    uint64_t ch = range_end(id);
    if (fwd_core2[NVTX_CBID_CORE2_DomainRangeEnd])
        FWD(fwd_core2, NVTX_CBID_CORE2_DomainRangeEnd, nvtxDomainRangeEnd_impl_fntype)(DCH(d), ch);
}
static int NVTX_API h_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    char buf[32];
    nvtxEventAttributes_t c;
    push_named(message_of(a, buf, sizeof buf));
    if (fwd_core2[NVTX_CBID_CORE2_DomainRangePushEx])
        FWD(fwd_core2, NVTX_CBID_CORE2_DomainRangePushEx, nvtxDomainRangePushEx_impl_fntype)(DCH(d), for_chain(a, &c));
    return tl_depth - 1;
}
static int NVTX_API h_DomainRangePop(nvtxDomainHandle_t d)
{
    int was = tl_depth - 1;
    pop_one();
    if (fwd_core2[NVTX_CBID_CORE2_DomainRangePop])
        FWD(fwd_core2, NVTX_CBID_CORE2_DomainRangePop, nvtxDomainRangePop_impl_fntype)(DCH(d));
    return was < 0 ? -1 : was;
}
static nvtxResourceHandle_t NVTX_API h_DomainResourceCreate(nvtxDomainHandle_t d, nvtxResourceAttributes_t *a)
{
    return fwd_core2[NVTX_CBID_CORE2_DomainResourceCreate]
               ? FWD(fwd_core2, NVTX_CBID_CORE2_DomainResourceCreate, nvtxDomainResourceCreate_impl_fntype)(DCH(d), a)
               : NULL;
}
static void NVTX_API h_DomainResourceDestroy(nvtxResourceHandle_t r)
{
    if (fwd_core2[NVTX_CBID_CORE2_DomainResourceDestroy])
        FWD(fwd_core2, NVTX_CBID_CORE2_DomainResourceDestroy, nvtxDomainResourceDestroy_impl_fntype)(r);
}
static void NVTX_API h_DomainNameCategoryA(nvtxDomainHandle_t d, uint32_t c, const char *n)
{
    if (fwd_core2[NVTX_CBID_CORE2_DomainNameCategoryA])
        FWD(fwd_core2, NVTX_CBID_CORE2_DomainNameCategoryA, nvtxDomainNameCategoryA_impl_fntype)(DCH(d), c, n);
}
static void NVTX_API h_DomainNameCategoryW(nvtxDomainHandle_t d, uint32_t c, const wchar_t *n)
{
    if (fwd_core2[NVTX_CBID_CORE2_DomainNameCategoryW])
        FWD(fwd_core2, NVTX_CBID_CORE2_DomainNameCategoryW, nvtxDomainNameCategoryW_impl_fntype)(DCH(d), c, n);
}
static nvtxStringHandle_t NVTX_API h_DomainRegisterStringA(nvtxDomainHandle_t d, const char *s)
{
    nv_string *r = calloc(1, sizeof *r); /* lives for the process, as NVTX string handles do */
    if (!r) return NULL;
    r->text = strdup(s ? s : "");
    keep_string(r);
    if (fwd_core2[NVTX_CBID_CORE2_DomainRegisterStringA])
        r->chained =
            FWD(fwd_core2, NVTX_CBID_CORE2_DomainRegisterStringA, nvtxDomainRegisterStringA_impl_fntype)(DCH(d), s);
    return (nvtxStringHandle_t)r;
}
static nvtxStringHandle_t NVTX_API h_DomainRegisterStringW(nvtxDomainHandle_t d, const wchar_t *s)
{
    nv_string *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->text = strdup("(nvtx unicode)");
    keep_string(r);
    if (fwd_core2[NVTX_CBID_CORE2_DomainRegisterStringW])
        r->chained =
            FWD(fwd_core2, NVTX_CBID_CORE2_DomainRegisterStringW, nvtxDomainRegisterStringW_impl_fntype)(DCH(d), s);
    return (nvtxStringHandle_t)r;
}
static nvtxDomainHandle_t NVTX_API h_DomainCreateA(const char *n)
{
    nv_domain *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->name = strdup(n ? n : "");
    keep_domain(r);
    if (fwd_core2[NVTX_CBID_CORE2_DomainCreateA])
        r->chained = FWD(fwd_core2, NVTX_CBID_CORE2_DomainCreateA, nvtxDomainCreateA_impl_fntype)(n);
    return (nvtxDomainHandle_t)r;
}
static nvtxDomainHandle_t NVTX_API h_DomainCreateW(const wchar_t *n)
{
    nv_domain *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->name = strdup("(nvtx unicode)");
    keep_domain(r);
    if (fwd_core2[NVTX_CBID_CORE2_DomainCreateW])
        r->chained = FWD(fwd_core2, NVTX_CBID_CORE2_DomainCreateW, nvtxDomainCreateW_impl_fntype)(n);
    return (nvtxDomainHandle_t)r;
}
static void NVTX_API h_DomainDestroy(nvtxDomainHandle_t d)
{
    if (fwd_core2[NVTX_CBID_CORE2_DomainDestroy])
        FWD(fwd_core2, NVTX_CBID_CORE2_DomainDestroy, nvtxDomainDestroy_impl_fntype)(DCH(d));
    /* the handle itself stays valid: other threads may still hold it */
}
static void NVTX_API h_Initialize(const void *reserved)
{
    if (fwd_core2[NVTX_CBID_CORE2_Initialize])
        FWD(fwd_core2, NVTX_CBID_CORE2_Initialize, nvtxInitialize_impl_fntype)(reserved);
}

#define H(f) ((NvtxFunctionPointer)(f))
static const NvtxFunctionPointer ours_core[NVTX_CBID_CORE_SIZE] = {
    [NVTX_CBID_CORE_MarkEx] = H(h_MarkEx),           [NVTX_CBID_CORE_MarkA] = H(h_MarkA),
    [NVTX_CBID_CORE_MarkW] = H(h_MarkW),             [NVTX_CBID_CORE_RangeStartEx] = H(h_RangeStartEx),
    [NVTX_CBID_CORE_RangeStartA] = H(h_RangeStartA), [NVTX_CBID_CORE_RangeStartW] = H(h_RangeStartW),
    [NVTX_CBID_CORE_RangeEnd] = H(h_RangeEnd),       [NVTX_CBID_CORE_RangePushEx] = H(h_RangePushEx),
    [NVTX_CBID_CORE_RangePushA] = H(h_RangePushA),   [NVTX_CBID_CORE_RangePushW] = H(h_RangePushW),
    [NVTX_CBID_CORE_RangePop] = H(h_RangePop),       [NVTX_CBID_CORE_NameCategoryA] = H(h_NameCategoryA),
    [NVTX_CBID_CORE_NameCategoryW] = H(h_NameCategoryW), [NVTX_CBID_CORE_NameOsThreadA] = H(h_NameOsThreadA),
    [NVTX_CBID_CORE_NameOsThreadW] = H(h_NameOsThreadW),
};
static const NvtxFunctionPointer ours_core2[NVTX_CBID_CORE2_SIZE] = {
    [NVTX_CBID_CORE2_DomainMarkEx] = H(h_DomainMarkEx),
    [NVTX_CBID_CORE2_DomainRangeStartEx] = H(h_DomainRangeStartEx),
    [NVTX_CBID_CORE2_DomainRangeEnd] = H(h_DomainRangeEnd),
    [NVTX_CBID_CORE2_DomainRangePushEx] = H(h_DomainRangePushEx),
    [NVTX_CBID_CORE2_DomainRangePop] = H(h_DomainRangePop),
    [NVTX_CBID_CORE2_DomainResourceCreate] = H(h_DomainResourceCreate),
    [NVTX_CBID_CORE2_DomainResourceDestroy] = H(h_DomainResourceDestroy),
    [NVTX_CBID_CORE2_DomainNameCategoryA] = H(h_DomainNameCategoryA),
    [NVTX_CBID_CORE2_DomainNameCategoryW] = H(h_DomainNameCategoryW),
    [NVTX_CBID_CORE2_DomainRegisterStringA] = H(h_DomainRegisterStringA),
    [NVTX_CBID_CORE2_DomainRegisterStringW] = H(h_DomainRegisterStringW),
    [NVTX_CBID_CORE2_DomainCreateA] = H(h_DomainCreateA),
    [NVTX_CBID_CORE2_DomainCreateW] = H(h_DomainCreateW),
    [NVTX_CBID_CORE2_DomainDestroy] = H(h_DomainDestroy),
    [NVTX_CBID_CORE2_Initialize] = H(h_Initialize),
};

/* ---- chaining ---- */
static NvtxGetExportTableFunc_t cur_lib_table; /* the calling library's, during its init */
static NvtxFunctionPointer *chain_core_ptrs[NVTX_CBID_CORE_SIZE + 1];
static NvtxFunctionPointer *chain_core2_ptrs[NVTX_CBID_CORE2_SIZE + 1];

static int NVTX_API chain_get_module(NvtxCallbackModule m, NvtxFunctionTable *out, unsigned int *size)
{
    if (m == NVTX_CB_MODULE_CORE || m == NVTX_CB_MODULE_CORE2) {
        int core = m == NVTX_CB_MODULE_CORE;
        NvtxFunctionPointer **ptrs = core ? chain_core_ptrs : chain_core2_ptrs;
        unsigned n = core ? NVTX_CBID_CORE_SIZE : NVTX_CBID_CORE2_SIZE;
        for (unsigned i = 0; i < n; i++) ptrs[i] = i ? (core ? &fwd_core[i] : &fwd_core2[i]) : NULL;
        ptrs[n] = NULL;
        if (out) *out = ptrs;
        if (size) *size = n;
        return 1;
    }
    /* other modules: the library's own slots, which we leave to the chained injection */
    const NvtxExportTableCallbacks *cb = cur_lib_table ? cur_lib_table(NVTX_ETID_CALLBACKS) : NULL;
    return cb && cb->GetModuleFunctionTable ? cb->GetModuleFunctionTable(m, out, size) : 0;
}

static const NvtxExportTableCallbacks chain_callbacks = {sizeof(NvtxExportTableCallbacks), chain_get_module};

static const void *NVTX_API chain_get_export_table(uint32_t id)
{
    if (id == NVTX_ETID_CALLBACKS) return &chain_callbacks;
    return cur_lib_table ? cur_lib_table(id) : NULL;
}

static void *chain_lib;
static NvtxInitializeInjectionNvtxFunc_t chain_init;
static int chain_tried;
_Atomic uint64_t cu_nvtx_inits;       /* InitializeInjectionNvtx2 calls (one per library) */
_Atomic uint64_t cu_nvtx_chain_inits; /* of which forwarded to the chained injection */

static int is_self(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    return strcmp(b, "libjager-cuda.so") == 0;
}

static void open_chain(void)
{
    if (chain_tried) return;
    chain_tried = 1;
    const char *p = getenv("JAGER_CUDA_NVTX_CHAIN");
    if (!p || !*p || is_self(p)) return;
    chain_lib = dlopen(p, RTLD_NOW | RTLD_LOCAL);
    if (!chain_lib) {
        if (cu_g.active) {
            char msg[600];
            snprintf(msg, sizeof msg, "cannot load the NVTX injection to chain (%s): NVTX reaches Jäger only",
                     dlerror());
            cu_g.host->log(cu_g.self, JAGER_DIAG_WARN, msg);
        }
        return;
    }
    *(void **)&chain_init = dlsym(chain_lib, "InitializeInjectionNvtx2");
}

static void fill(NvtxGetExportTableFunc_t get, NvtxCallbackModule m, const NvtxFunctionPointer *ours, unsigned n)
{
    const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable t = NULL;
    unsigned size = 0;
    if (!cb || !cb->GetModuleFunctionTable || !cb->GetModuleFunctionTable(m, &t, &size) || !t) return;
    for (unsigned i = 1; i < size && i < n; i++)
        if (t[i] && ours[i]) *t[i] = ours[i];
}

JAGER_PLUGIN_EXPORT int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    if (!get) return 0;
    pthread_mutex_lock(&nv_lock);
    atomic_fetch_add(&cu_nvtx_inits, 1);
    find_jager();
    open_chain();
    if (chain_init) {
        cur_lib_table = get;
        if (chain_init(chain_get_export_table)) atomic_fetch_add(&cu_nvtx_chain_inits, 1);
        cur_lib_table = NULL;
    }
    fill(get, NVTX_CB_MODULE_CORE, ours_core, NVTX_CBID_CORE_SIZE);
    fill(get, NVTX_CB_MODULE_CORE2, ours_core2, NVTX_CBID_CORE2_SIZE);
    pthread_mutex_unlock(&nv_lock);
    return 1;
}

/* At init: remember the injection configured before us and become the process's. */
void cu_nvtx_attach(cu_state *st)
{
    Dl_info di;
    if (!dladdr((void *)InitializeInjectionNvtx2, &di) || !di.dli_fname) return;
    const char *prev = getenv("NVTX_INJECTION64_PATH");
    const char *chain = st->host->config(st->self, "nvtx_chain");
    if (!chain && prev && *prev && !is_self(prev)) setenv("JAGER_CUDA_NVTX_CHAIN", prev, 1);
    if (prev && *prev && !is_self(prev)) {
        char msg[700];
        snprintf(msg, sizeof msg, "NVTX: chaining to the injection configured before Jäger (%s)", prev);
        st->host->log(st->self, JAGER_DIAG_INFO, msg);
    }
    setenv("NVTX_INJECTION64_PATH", di.dli_fname, 1);
}

void cu_nvtx_detach(cu_state *st)
{
    (void)st; /* NVTX keeps our handlers for the process: they run on without the plugin */
}
