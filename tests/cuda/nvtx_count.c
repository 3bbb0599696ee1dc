/* nvtx_count.c — a second NVTX injection (standing in for Nsight Systems) that counts what
 * reaches it and checks that every domain, string and range handle it is given is one of its
 * own. The cuda plugin chains to it when it was NVTX_INJECTION64_PATH before Jäger started. */
#include <stdint.h>
#include <string.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#define EXPORT __attribute__((visibility("default")))

static int inits, bad;
static int core_calls[NVTX_CBID_CORE_SIZE], core2_calls[NVTX_CBID_CORE2_SIZE];
typedef struct handle {
    uint32_t magic;
    char text[64];
} handle;
static handle domains[16], strings[16];
static int ndomains, nstrings;
static uint64_t next_range = 1000;

static void check_domain(nvtxDomainHandle_t d)
{
    const handle *h = (const handle *)d;
    if (!h || h->magic != 0xD0D0) bad++;
}
static void check_attr(const nvtxEventAttributes_t *a)
{
    if (a && a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
        const handle *h = (const handle *)a->message.registered;
        if (!h || h->magic != 0x5757) bad++;
    }
}

static void NVTX_API c_MarkA(const char *m) { (void)m; core_calls[NVTX_CBID_CORE_MarkA]++; }
static int NVTX_API c_PushA(const char *m) { (void)m; return core_calls[NVTX_CBID_CORE_RangePushA]++; }
static int NVTX_API c_Pop(void) { return core_calls[NVTX_CBID_CORE_RangePop]++; }
static nvtxRangeId_t NVTX_API c_StartA(const char *m)
{
    (void)m;
    core_calls[NVTX_CBID_CORE_RangeStartA]++;
    return next_range++;
}
static void NVTX_API c_End(nvtxRangeId_t id)
{
    core_calls[NVTX_CBID_CORE_RangeEnd]++;
    if (id < 1000 || id >= next_range) bad++;
}
static nvtxDomainHandle_t NVTX_API c_DomainCreateA(const char *n)
{
    core2_calls[NVTX_CBID_CORE2_DomainCreateA]++;
    handle *h = &domains[ndomains++ % 16];
    h->magic = 0xD0D0;
    strncpy(h->text, n, sizeof h->text - 1);
    return (nvtxDomainHandle_t)h;
}
static nvtxStringHandle_t NVTX_API c_RegisterStringA(nvtxDomainHandle_t d, const char *s)
{
    check_domain(d);
    core2_calls[NVTX_CBID_CORE2_DomainRegisterStringA]++;
    handle *h = &strings[nstrings++ % 16];
    h->magic = 0x5757;
    strncpy(h->text, s, sizeof h->text - 1);
    return (nvtxStringHandle_t)h;
}
static int NVTX_API c_DomainPushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    check_domain(d);
    check_attr(a);
    return core2_calls[NVTX_CBID_CORE2_DomainRangePushEx]++;
}
static int NVTX_API c_DomainPop(nvtxDomainHandle_t d)
{
    check_domain(d);
    return core2_calls[NVTX_CBID_CORE2_DomainRangePop]++;
}
static void NVTX_API c_DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    check_domain(d);
    check_attr(a);
    core2_calls[NVTX_CBID_CORE2_DomainMarkEx]++;
}

static void put(NvtxFunctionTable t, unsigned size, unsigned id, NvtxFunctionPointer f)
{
    if (t && id < size && t[id]) *t[id] = f;
}

EXPORT int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
    if (!cb) return 0;
    NvtxFunctionTable t = NULL;
    unsigned size = 0;
    inits++;
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &size)) {
        put(t, size, NVTX_CBID_CORE_MarkA, (NvtxFunctionPointer)c_MarkA);
        put(t, size, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)c_PushA);
        put(t, size, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)c_Pop);
        put(t, size, NVTX_CBID_CORE_RangeStartA, (NvtxFunctionPointer)c_StartA);
        put(t, size, NVTX_CBID_CORE_RangeEnd, (NvtxFunctionPointer)c_End);
    }
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &size)) {
        put(t, size, NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)c_DomainCreateA);
        put(t, size, NVTX_CBID_CORE2_DomainRegisterStringA, (NvtxFunctionPointer)c_RegisterStringA);
        put(t, size, NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)c_DomainPushEx);
        put(t, size, NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)c_DomainPop);
        put(t, size, NVTX_CBID_CORE2_DomainMarkEx, (NvtxFunctionPointer)c_DomainMarkEx);
    }
    return 1;
}

EXPORT int nvtx_count_inits(void) { return inits; }
EXPORT int nvtx_count_bad(void) { return bad; }
EXPORT int nvtx_count_core(int cbid) { return cbid > 0 && cbid < NVTX_CBID_CORE_SIZE ? core_calls[cbid] : -1; }
EXPORT int nvtx_count_core2(int cbid) { return cbid > 0 && cbid < NVTX_CBID_CORE2_SIZE ? core2_calls[cbid] : -1; }
