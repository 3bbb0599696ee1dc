/* dispatch_api.c — the "jager.dispatch/1" functions: validate, keep the books, emit.
 *
 * Every call runs entirely under dp_lock: a hash lookup, maybe an intern and an emit (a
 * ring store), never I/O, so the lock is held for microseconds. Emitting under the lock
 * keeps a call that races with shutdown from touching freed state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch_internal.h"

dp_state *dp_global = NULL;
pthread_mutex_t dp_lock = PTHREAD_MUTEX_INITIALIZER;

void dp_say_once(dp_state *s, enum dp_said kind, const char *message)
{
    s->rejected++;
    if (s->said[kind])
        return;
    s->said[kind] = 1;
    char buf[512];
    snprintf(buf, sizeof buf, "%s (call ignored; further calls like it are not reported)", message);
    s->host->log(s->self, JAGER_DIAG_WARN, buf);
}

/* The state if the plugin is live, else a status: E_STATE before init / after shutdown
 * (nobody to tell), or after stop (told once). */
static jager_status dp_live(dp_state *s, const char *fn)
{
    if (!s)
        return JAGER_E_STATE;
    if (s->stopped) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s called after stop: the sensor must stop feeding before jager_shutdown()", fn);
        dp_say_once(s, DP_SAID_STOPPED, msg);
        return JAGER_E_STATE;
    }
    return JAGER_OK;
}

static jager_status dp_check_site(dp_state *s, uint32_t site, const char *fn)
{
    const char *name = NULL, *file = NULL;
    uint32_t line = 0;
    if (site != 0 && s->host->site_info(site, &name, &file, &line) == JAGER_OK)
        return JAGER_OK;
    char msg[160];
    snprintf(msg, sizeof msg, "%s: site %u is not a registered site", fn, (unsigned)site);
    dp_say_once(s, DP_SAID_SITE, msg);
    return JAGER_E_INVALID;
}

static jager_status dp_check_string(dp_state *s, const char *str, const char *what, const char *fn)
{
    if (str && str[0])
        return JAGER_OK;
    char msg[160];
    snprintf(msg, sizeof msg, "%s: %s is %s", fn, what, str ? "empty" : "NULL");
    dp_say_once(s, DP_SAID_STRING, msg);
    return JAGER_E_INVALID;
}

static jager_status dp_nomem(dp_state *s, const char *fn)
{
    char msg[128];
    snprintf(msg, sizeof msg, "%s: out of memory", fn);
    dp_say_once(s, DP_SAID_NOMEM, msg);
    return JAGER_E_NOMEM;
}

/* Intern \p str (NULL or "" → id 0), cut to string_max bytes at a UTF-8 boundary with "…"
 * appended, so one runaway type name cannot bloat the string table. */
static jager_status dp_intern(dp_state *s, const char *str, uint32_t *id, const char *fn)
{
    *id = 0;
    if (!str || !str[0])
        return JAGER_OK;
    size_t len = strlen(str);
    char *cut = NULL;
    if (len > s->string_max) {
        size_t keep = s->string_max - 3;
        while (keep > 0 && ((unsigned char)str[keep] & 0xC0) == 0x80)
            keep--; /* str[keep] must start a character: cut before it */
        cut = malloc(keep + 4);
        if (!cut)
            return dp_nomem(s, fn);
        memcpy(cut, str, keep);
        memcpy(cut + keep, "\xE2\x80\xA6", 4); /* "…" and the NUL */
        str = cut;
    }
    *id = s->host->intern(str);
    free(cut);
    return *id ? JAGER_OK : dp_nomem(s, fn);
}

static uint64_t dp_pair(uint32_t site, uint32_t sig)
{
    return (uint64_t)site << 32 | sig;
}

/* The site's record, created on first use; NULL on OOM. */
static dp_site *dp_site_get(dp_state *s, uint32_t site)
{
    uint32_t idx;
    if (dp_map_find(&s->site_map, site, &idx))
        return dp_vec_at(&s->sites, idx);
    dp_site *e = dp_vec_push(&s->sites);
    if (!e)
        return NULL;
    if (dp_map_put(&s->site_map, site, (uint32_t)(s->sites.n - 1)) != JAGER_OK) {
        s->sites.n--;
        return NULL;
    }
    e->site = site;
    return e;
}

/* Shared by signature_seen (has_calls 0) and signature_count. */
static int32_t dp_signature_note(uint32_t site, const char *signature, int has_calls, uint64_t calls,
                                 const char *fn)
{
    pthread_mutex_lock(&dp_lock);
    dp_state *s = dp_global;
    uint32_t sid = 0, idx;
    jager_status st = dp_live(s, fn);
    if (st == JAGER_OK)
        st = dp_check_site(s, site, fn);
    if (st == JAGER_OK)
        st = dp_check_string(s, signature, "signature", fn);
    if (st == JAGER_OK)
        st = dp_intern(s, signature, &sid, fn);
    if (st != JAGER_OK)
        goto out;

    uint64_t key = dp_pair(site, sid);
    if (dp_map_find(&s->sig_map, key, &idx)) {
        dp_sig *e = dp_vec_at(&s->sigs, idx);
        if (has_calls)
            e->calls = calls;
        goto out;
    }
    if (s->sigs.n >= s->max_signatures) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s: more than %llu signatures (JAGER_DISPATCH_MAX_SIGNATURES)", fn,
                 (unsigned long long)s->max_signatures);
        dp_say_once(s, DP_SAID_FULL, msg);
        st = JAGER_E_FULL;
        goto out;
    }
    dp_site *ps = dp_site_get(s, site);
    dp_sig *e = ps ? dp_vec_push(&s->sigs) : NULL;
    if (!e) {
        st = dp_nomem(s, fn);
        goto out;
    }
    if (dp_map_put(&s->sig_map, key, (uint32_t)(s->sigs.n - 1)) != JAGER_OK) {
        s->sigs.n--;
        st = dp_nomem(s, fn);
        goto out;
    }
    e->site = site;
    e->sig = sid;
    e->calls = has_calls ? calls : 0;
    ps->distinct++;
    /* First sight: calls = 0 by definition (the exact count comes in the summary). */
    uint64_t f[5] = {site, sid, 0, ps->distinct, 0};
    s->host->emit(s->types.signature, 0, f, 5);
out:
    pthread_mutex_unlock(&dp_lock);
    return st;
}

static int32_t dp_signature_seen(uint32_t site, const char *signature)
{
    return dp_signature_note(site, signature, 0, 0, "signature_seen");
}

static int32_t dp_signature_count(uint32_t site, const char *signature, uint64_t calls)
{
    return dp_signature_note(site, signature, 1, calls, "signature_count");
}

static int32_t dp_compile(uint64_t time_ns, uint64_t codegen_ns, uint64_t inference_ns, const char *signature)
{
    pthread_mutex_lock(&dp_lock);
    dp_state *s = dp_global;
    uint32_t sid = 0;
    jager_status st = dp_live(s, "compile");
    if (st == JAGER_OK)
        st = dp_check_string(s, signature, "signature", "compile");
    if (st == JAGER_OK)
        st = dp_intern(s, signature, &sid, "compile");
    if (st != JAGER_OK)
        goto out;
    s->compiles++;
    s->codegen_ns += codegen_ns;
    s->inference_ns += inference_ns;
    uint64_t f[3] = {codegen_ns, inference_ns, sid};
    s->host->emit(s->types.compile, time_ns, f, 3);
out:
    pthread_mutex_unlock(&dp_lock);
    return st;
}

static int32_t dp_specializations(const char *method, const char *file, uint32_t line, uint64_t count)
{
    pthread_mutex_lock(&dp_lock);
    dp_state *s = dp_global;
    uint32_t mid = 0, fid = 0, idx;
    dp_method *m = NULL;
    jager_status st = dp_live(s, "specializations");
    if (st == JAGER_OK)
        st = dp_check_string(s, method, "method", "specializations");
    if (st == JAGER_OK)
        st = dp_intern(s, method, &mid, "specializations");
    if (st != JAGER_OK)
        goto out;

    uint64_t now = s->host->now_ns();
    if (dp_map_find(&s->method_map, mid, &idx)) {
        m = dp_vec_at(&s->methods, idx);
    } else {
        if (s->methods.n >= s->max_methods) {
            char msg[160];
            snprintf(msg, sizeof msg, "specializations: more than %llu methods (JAGER_DISPATCH_MAX_METHODS)",
                     (unsigned long long)s->max_methods);
            dp_say_once(s, DP_SAID_FULL, msg);
            st = JAGER_E_FULL;
            goto out;
        }
        st = dp_intern(s, file, &fid, "specializations");
        if (st != JAGER_OK)
            goto out;
        m = dp_vec_push(&s->methods);
        if (!m) {
            st = dp_nomem(s, "specializations");
            goto out;
        }
        if (dp_map_put(&s->method_map, mid, (uint32_t)(s->methods.n - 1)) != JAGER_OK) {
            s->methods.n--;
            st = dp_nomem(s, "specializations");
            goto out;
        }
        m->name = mid;
        m->file = fid;
        m->line = line;
        m->first_count = count;
        m->first_ns = now;
    }
    uint64_t previous = m->count;
    int changed = m->censuses == 0 || count != m->count;
    m->censuses++;
    m->count = count;
    /* A census that found the same count adds nothing to the step function. */
    if (changed) {
        uint64_t f[9] = {m->name, count, m->file, m->line, m->censuses == 1 ? 0 : previous,
                         m->censuses, m->first_count, m->first_ns, 0};
        s->host->emit(s->types.specializations, now, f, 9);
    }
out:
    pthread_mutex_unlock(&dp_lock);
    return st;
}

static int32_t dp_instability(uint32_t site, const char *signature, uint64_t flags, const char *reason,
                              const char *chain)
{
    pthread_mutex_lock(&dp_lock);
    dp_state *s = dp_global;
    uint32_t sid = 0, rid = 0, cid = 0, seen;
    jager_status st = dp_live(s, "instability");
    if (st == JAGER_OK)
        st = dp_check_site(s, site, "instability");
    if (st == JAGER_OK)
        st = dp_check_string(s, signature, "signature", "instability");
    if (st == JAGER_OK && (flags == 0 || !reason)) {
        dp_say_once(s, DP_SAID_FLAGS, "instability: a verdict needs non-zero flags and a reason");
        st = JAGER_E_INVALID;
    }
    if (st == JAGER_OK)
        st = dp_intern(s, signature, &sid, "instability");
    if (st != JAGER_OK)
        goto out;
    uint64_t key = dp_pair(site, sid);
    if (dp_map_find(&s->unstable, key, &seen))
        goto out; /* one verdict per (site, signature) */
    st = dp_intern(s, reason, &rid, "instability");
    if (st == JAGER_OK)
        st = dp_intern(s, chain, &cid, "instability");
    if (st == JAGER_OK && dp_map_put(&s->unstable, key, (uint32_t)flags) != JAGER_OK)
        st = dp_nomem(s, "instability");
    if (st != JAGER_OK)
        goto out;
    s->unstable_count++;
    uint64_t f[5] = {site, sid, flags, rid, cid};
    s->host->emit(s->types.instability, 0, f, 5);
out:
    pthread_mutex_unlock(&dp_lock);
    return st;
}

static int32_t dp_site_signatures(uint32_t site, uint64_t *out)
{
    if (!out)
        return JAGER_E_INVALID;
    pthread_mutex_lock(&dp_lock);
    dp_state *s = dp_global;
    jager_status st = s ? JAGER_OK : JAGER_E_STATE;
    uint32_t idx;
    *out = 0;
    if (s && dp_map_find(&s->site_map, site, &idx))
        *out = ((dp_site *)dp_vec_at(&s->sites, idx))->distinct;
    pthread_mutex_unlock(&dp_lock);
    return st;
}

static int32_t dp_signature_calls(uint32_t site, const char *signature, uint64_t *out)
{
    if (!out || !signature || !signature[0])
        return JAGER_E_INVALID;
    pthread_mutex_lock(&dp_lock);
    dp_state *s = dp_global;
    uint32_t sid = 0, idx;
    jager_status st = s ? dp_intern(s, signature, &sid, "signature_calls") : JAGER_E_STATE;
    if (st == JAGER_OK) {
        st = JAGER_E_NOTFOUND;
        if (dp_map_find(&s->sig_map, dp_pair(site, sid), &idx)) {
            *out = ((dp_sig *)dp_vec_at(&s->sigs, idx))->calls;
            st = JAGER_OK;
        }
    }
    pthread_mutex_unlock(&dp_lock);
    return st;
}

static int32_t dp_method_specializations(const char *method, uint64_t *out, uint64_t *censuses)
{
    if (!out || !method || !method[0])
        return JAGER_E_INVALID;
    pthread_mutex_lock(&dp_lock);
    dp_state *s = dp_global;
    uint32_t mid = 0, idx;
    jager_status st = s ? dp_intern(s, method, &mid, "method_specializations") : JAGER_E_STATE;
    if (st == JAGER_OK) {
        st = JAGER_E_NOTFOUND;
        if (dp_map_find(&s->method_map, mid, &idx)) {
            dp_method *m = dp_vec_at(&s->methods, idx);
            *out = m->count;
            if (censuses)
                *censuses = m->censuses;
            st = JAGER_OK;
        }
    }
    pthread_mutex_unlock(&dp_lock);
    return st;
}

static const jager_dispatch_api dp_table = {
    .struct_size = sizeof(jager_dispatch_api),
    .signature_seen = dp_signature_seen,
    .signature_count = dp_signature_count,
    .compile = dp_compile,
    .specializations = dp_specializations,
    .instability = dp_instability,
    .site_signatures = dp_site_signatures,
    .signature_calls = dp_signature_calls,
    .method_specializations = dp_method_specializations,
};

const jager_dispatch_api *dp_api_table(void)
{
    return &dp_table;
}

void dp_state_clear(dp_state *s)
{
    dp_map_free(&s->sig_map);
    dp_map_free(&s->site_map);
    dp_map_free(&s->method_map);
    dp_map_free(&s->unstable);
    dp_vec_free(&s->sigs);
    dp_vec_free(&s->sites);
    dp_vec_free(&s->methods);
}
