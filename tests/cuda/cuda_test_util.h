/* cuda_test_util.h — shared by the cuda plugin tests: the test double's paths, record
 * builders from the real CUDA 13 structs, and readers of the memsink's cuda.* records. */
#ifndef JAGER_CUDA_TEST_UTIL_H
#define JAGER_CUDA_TEST_UTIL_H
#include <stdint.h>
#include <string.h>

#include <cupti.h>

#include "jager_plugin.h"
#include "memsink.h"

/* Point the plugin at the test double (or at \p cupti / \p driver when not NULL). */
void ct_env(const char *cupti, const char *driver);
void ct_env_clear(void);
/* jager_init with the cuda plugin and a memsink; returns the sink. */
memsink *ct_start(void);
/* The id of a registered type, 0 when absent (valid until the next jager_init). */
uint16_t ct_type(const char *name);
/* The i-th field of the n-th record of \p type; NULL when there are fewer. */
const jager_rec_plugin *ct_rec(const memsink *m, uint16_t type, size_t n);
size_t ct_count(const memsink *m, uint16_t type);
/* Diagnostics from \p source containing \p needle. */
size_t ct_diags(const memsink *m, const char *source, const char *needle);

CUpti_ActivityKernel10 ct_kernel(uint32_t corr, uint64_t start, uint64_t end, const char *name);
CUpti_ActivityExternalCorrelation ct_ext(uint32_t corr, uint64_t ext);
CUpti_ActivityMemcpy6 ct_memcpy(uint32_t corr, uint64_t start, uint64_t end, uint64_t bytes, uint8_t kind);
CUpti_ActivityMemset4 ct_memset(uint32_t corr, uint64_t start, uint64_t end, uint64_t bytes);
CUpti_ActivitySynchronization2 ct_sync(uint32_t corr, uint64_t start, uint64_t end);
#endif
