/* Configuration: defaults, the JAGER_* environment (documented in docs/configuration.md),
 * and the private copy the running core uses. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

jg_config jg_cfg;

jager_status jager_config_init(jager_config *cfg)
{
    if (!cfg) return jg_error(JAGER_E_INVALID, "jager_config_init: cfg is NULL");
    memset(cfg, 0, sizeof *cfg);
    cfg->struct_size = sizeof *cfg;
    cfg->ring_bytes = 1u << 20;
    cfg->ring_mode = JAGER_RING_DISCARD;
    cfg->flush_interval_ms = 50;
    /* Thinning on purpose by default: a site hotter than the recording can keep is sampled
     * rather than dropped at random (docs/configuration.md, "Thinning on purpose"). */
    cfg->sample_mode = JAGER_SAMPLE_AUTO;
    cfg->sample_n = 1000;
    cfg->sample_interval_ns = 1000000u;
    cfg->max_threads = 1024;
    return JAGER_OK;
}

/* Parse "123", "64K", "1M", "2G" (binary units). Digits first: strtoull would take "-1"
 * (and " -1", "+1") and wrap it to 2^64 - 1. */
static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    if (!isdigit((unsigned char)*s)) return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s) return -1;
    uint64_t mul = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': mul = 1u << 10; end++; break;
    case 'M': mul = 1u << 20; end++; break;
    case 'G': mul = 1u << 30; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'I') end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end) return -1;
    if (v > UINT64_MAX / mul) return -1;
    *out = v * mul;
    return 0;
}

static int parse_u32(const char *s, uint32_t *out)
{
    char *end;
    if (!isdigit((unsigned char)*s)) return -1; /* "-1" is not 4294967295 */
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v > UINT32_MAX) return -1;
    *out = (uint32_t)v;
    return 0;
}

static int truthy(const char *s)
{
    return !strcmp(s, "1") || !strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcasecmp(s, "on");
}

/* JAGER_SAMPLE=auto[:BUDGET]: every span of a site until it passes BUDGET spans (default
 * 1000) in a 1 ms window on a thread, then one span per site and thread per window
 * (span.c's sample_auto). 0 when \p v is such a value (then set in \p cfg), -1 otherwise. */
static int parse_sample_auto(const char *v, jager_config *cfg)
{
    uint32_t budget = 1000;
    if (strncmp(v, "auto", 4)) return -1;
    if (v[4] == ':') {
        if (parse_u32(v + 5, &budget) || budget == 0) return -1;
    } else if (v[4]) {
        return -1;
    }
    cfg->sample_mode = JAGER_SAMPLE_AUTO;
    cfg->sample_n = budget;
    cfg->sample_interval_ns = 1000000u;
    return 0;
}

static int falsy(const char *s)
{
    return !strcmp(s, "0") || !strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcasecmp(s, "off");
}

jager_status jager_config_from_env(jager_config *cfg)
{
    if (!cfg || cfg->struct_size < sizeof(jager_config))
        return jg_error(JAGER_E_INVALID, "jager_config_from_env: cfg is NULL or not initialised");
    const char *v;
    jager_status st = JAGER_OK;
#define BAD(var) (st = jg_error(JAGER_E_INVALID, "%s: cannot parse '%s'", var, v))
    /* A switch is 1/true/yes/on or 0/false/no/off; anything else is reported and the
     * default (off) stays, as for every other malformed value. */
    if ((v = getenv("JAGER_DISABLE")) && *v) {
        if (truthy(v)) cfg->disable = 1;
        else if (falsy(v)) cfg->disable = 0;
        else BAD("JAGER_DISABLE");
    }
    if ((v = getenv("JAGER_OUTPUT")) && *v) cfg->output = v;
    if ((v = getenv("JAGER_PLUGINS"))) cfg->plugins = v;
    if ((v = getenv("JAGER_PLUGIN_PATH"))) cfg->plugin_path = v;
    if ((v = getenv("JAGER_FILTER")) && *v) cfg->filter = v;
    if ((v = getenv("JAGER_QUIET")) && *v) {
        if (truthy(v)) cfg->quiet = 1;
        else if (falsy(v)) cfg->quiet = 0;
        else BAD("JAGER_QUIET");
    }
    if ((v = getenv("JAGER_RING_BYTES")) && *v) {
        uint64_t b;
        if (parse_size(v, &b)) BAD("JAGER_RING_BYTES");
        else if (b < 4096 || b > (1ull << 32)) /* parsed: say what is wrong with the value */
            st = jg_error(JAGER_E_INVALID, "JAGER_RING_BYTES: '%s' is %s (4K to 4G)", v, b < 4096 ? "below the minimum 4096" : "above the maximum 4G");
        else cfg->ring_bytes = b;
    }
    if ((v = getenv("JAGER_RING_MODE")) && *v) {
        if (!strcmp(v, "discard")) cfg->ring_mode = JAGER_RING_DISCARD;
        else if (!strcmp(v, "overwrite")) cfg->ring_mode = JAGER_RING_OVERWRITE;
        else BAD("JAGER_RING_MODE");
    }
    if ((v = getenv("JAGER_FLUSH_MS")) && *v) {
        uint32_t ms;
        if (parse_u32(v, &ms) || ms == 0) BAD("JAGER_FLUSH_MS");
        else cfg->flush_interval_ms = ms;
    }
    if ((v = getenv("JAGER_MAX_THREADS")) && *v) {
        uint32_t n;
        if (parse_u32(v, &n) || n == 0) BAD("JAGER_MAX_THREADS");
        else cfg->max_threads = n;
    }
    if ((v = getenv("JAGER_SAMPLE")) && *v) {
        uint32_t n;
        uint64_t ms;
        if (!strcmp(v, "all")) cfg->sample_mode = JAGER_SAMPLE_ALL;
        else if (!strncmp(v, "1/", 2) && !parse_u32(v + 2, &n) && n > 0) {
            cfg->sample_mode = JAGER_SAMPLE_ONE_IN_N;
            cfg->sample_n = n;
        } else if (!strncmp(v, "interval:", 9) && !parse_size(v + 9, &ms) && ms > 0 && ms <= UINT64_MAX / 1000000u) {
            cfg->sample_mode = JAGER_SAMPLE_INTERVAL;
            cfg->sample_interval_ns = ms * 1000000u;
        } else if (parse_sample_auto(v, cfg)) BAD("JAGER_SAMPLE");
    }
#undef BAD
    return st;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void jg_config_free(void);

jager_status jg_config_copy(const jager_config *src)
{
    jager_config c;
    jager_config_init(&c);
    /* Read only what the caller's struct holds: an older caller's struct is shorter. */
    size_t n = src->struct_size < sizeof c ? src->struct_size : sizeof c;
    memcpy(&c, src, n);
    c.struct_size = sizeof c;
    jg_config_free();
    /* Strings are read by init alone; the scalars also by threads still finishing an event
     * of the previous run, so each is published with an atomic store (JG_CFG reads). */
    jg_cfg.c.output = dup_or_null(c.output);
    jg_cfg.c.plugins = dup_or_null(c.plugins);
    jg_cfg.c.plugin_path = dup_or_null(c.plugin_path);
    jg_cfg.c.filter = dup_or_null(c.filter);
    if ((c.output && !jg_cfg.c.output) || (c.plugins && !jg_cfg.c.plugins) ||
        (c.plugin_path && !jg_cfg.c.plugin_path) || (c.filter && !jg_cfg.c.filter)) {
        jg_config_free();
        return jg_error(JAGER_E_NOMEM, "jager_init: out of memory copying the configuration");
    }
    /* Rings are powers of two between 4 KiB and 4 GiB. */
    uint64_t rb = 4096;
    while (rb < c.ring_bytes && rb < (1ull << 32)) rb <<= 1;
    JG_CFG_SET(struct_size, c.struct_size);
    JG_CFG_SET(disable, c.disable);
    JG_CFG_SET(ring_bytes, rb);
    JG_CFG_SET(ring_mode, c.ring_mode);
    JG_CFG_SET(flush_interval_ms, c.flush_interval_ms ? c.flush_interval_ms : 50);
    JG_CFG_SET(sample_mode, c.sample_mode);
    JG_CFG_SET(sample_n, c.sample_n ? c.sample_n : 1);
    JG_CFG_SET(sample_interval_ns, c.sample_interval_ns);
    JG_CFG_SET(max_threads, c.max_threads ? c.max_threads : 1024);
    JG_CFG_SET(quiet, c.quiet);
    return JAGER_OK;
}

static void jg_config_free(void)
{
    free((char *)jg_cfg.c.output);
    free((char *)jg_cfg.c.plugins);
    free((char *)jg_cfg.c.plugin_path);
    free((char *)jg_cfg.c.filter);
    jg_cfg.c.output = jg_cfg.c.plugins = jg_cfg.c.plugin_path = jg_cfg.c.filter = NULL;
    /* the scalars keep their values until the next copy replaces them, atomically */
}
