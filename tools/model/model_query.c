/* model_query.c — lookups on a finished model: sites by id, display names, and the frame
 * that names a GC trigger stack for people (the program's frame, not the allocator's). */
#include <stdio.h>
#include <string.h>

#include "toolutil.h"

#include "model.h"

const jm_site *jm_site_get(const jm_model *m, uint32_t site)
{
    if (!m || site == 0 || site >= m->nsites) return NULL;
    return &m->sites[site];
}

const char *jm_site_name(const jm_model *m, uint32_t site)
{
    if (site == 0) return "(root)";
    if (site == JM_SITE_OTHER) return "(other)";
    if (site == JM_SITE_UNRECORDED) return "(unrecorded)";
    const jm_site *s = jm_site_get(m, site);
    return s ? s->name : "?";
}

/* Frames of the runtime, the allocator and Jäger itself: a GC is "triggered from" the
 * first frame above these. Prefixes of function names, and substrings of file names. */
static const char *const runtime_funcs[] = {
    "jl_", "ijl_", "_jl_", "gc_", "jlgc_", "maybe_collect", "julia_gc", "malloc", "calloc", "realloc",
    "__libc_", "_int_malloc", "operator new", "jager_", "jg_", "japi1_", "jlcall_", "allocobj",
    "_new_array", "new_array", "array_grow", "_growend", "jl_alloc", "Core.", "Base.GC.", "jfptr_",
};
static const char *const runtime_files[] = {
    "libjulia", "/src/gc", "julia_internal", "libc.so", "libc-", "libjager", "libjager-gc", "boot.jl", "/julia/sys.so",
};

/* Julia's own library (Base, the compiler): its files are recorded relative ("./array.jl")
 * or under share/julia/base. The program's frame is above them. */
static int is_julia_library(const jager_frame *f)
{
    const char *file = f->file;
    if (!strncmp(file, "./", 2) || strstr(file, "/share/julia/base/") || strstr(file, "/share/julia/stdlib/")) return 1;
    size_t n = strlen(file);
    /* A bare "array.jl" with no directory is Base too (user files carry their path). */
    return n > 3 && !strcmp(file + n - 3, ".jl") && !strchr(file, '/');
}

static int is_runtime(const jager_frame *f)
{
    for (size_t i = 0; i < sizeof runtime_funcs / sizeof runtime_funcs[0]; i++)
        if (!strncmp(f->func, runtime_funcs[i], strlen(runtime_funcs[i]))) return 1;
    for (size_t i = 0; i < sizeof runtime_files / sizeof runtime_files[0]; i++)
        if (strstr(f->file, runtime_files[i])) return 1;
    return !strcmp(f->func, "??");
}

int jm_stack_pick_frame(const jm_model *m, jager_stack_id stack, jm_frame_pick *out)
{
    out->func = "??";
    out->file = "";
    out->line = 0;
    out->ip = 0;
    out->program = 0;
    const uint64_t *ips = NULL;
    uint32_t n = 0;
    if (!m || !stack || jager_reader_stack(m->reader, stack, &ips, &n) != JAGER_OK || !ips) return 0;
    int have_fallback = 0;
    for (uint32_t i = 0; i < n && i < 256; i++) {
        jager_frame fr[8];
        uint32_t k = jager_reader_symbolize(m->reader, ips[i], fr, 8);
        /* Innermost inlined frame first: it is the code that allocated. */
        for (uint32_t j = k; j-- > 0;) {
            if (!fr[j].func) continue;
            if (!have_fallback && strcmp(fr[j].func, "??") != 0) {
                out->func = fr[j].func;
                out->file = fr[j].file ? fr[j].file : "";
                out->line = fr[j].line;
                out->ip = ips[i];
                have_fallback = 1;
            }
            if (fr[j].file && !is_runtime(&fr[j]) && !is_julia_library(&fr[j])) {
                out->func = fr[j].func;
                out->file = fr[j].file;
                out->line = fr[j].line;
                out->ip = ips[i];
                out->program = 1;
                return 1;
            }
        }
    }
    return have_fallback;
}

int jm_stack_has_func(const jm_model *m, jager_stack_id stack, const char *func)
{
    const uint64_t *ips = NULL;
    uint32_t n = 0;
    if (!m || !stack || !func || jager_reader_stack(m->reader, stack, &ips, &n) != JAGER_OK || !ips) return 0;
    size_t k = strlen(func);
    for (uint32_t i = 0; i < n && i < 256; i++) {
        jager_frame fr[8];
        uint32_t nf = jager_reader_symbolize(m->reader, ips[i], fr, 8);
        for (uint32_t j = 0; j < nf && j < 8; j++) {
            const char *f = fr[j].func;
            if (!f) continue;
            size_t n2 = strlen(f);
            if (!strcmp(f, func) || (n2 > k && f[n2 - k - 1] == '.' && !strcmp(f + n2 - k, func))) return 1;
        }
    }
    return 0;
}

const char *jm_sev_name(int bucket)
{
    static const char *const names[JM_SEV_COUNT] = {"trace", "debug", "info", "warn", "error", "fatal"};
    return bucket >= 0 && bucket < JM_SEV_COUNT ? names[bucket] : "?";
}

/* A valid UTF-8 sequence's length, C1 controls treated like invalid bytes. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    size_t len = tu_utf8_len(s, n);
    if (len == 2 && s[0] == 0xC2 && s[1] < 0xA0) return 0; /* U+0080..U+009F */
    return len;
}

/* One display piece of \p s at byte \p i: its safe bytes in \p piece, its width; returns
 * the source bytes it covers. */
static size_t text_piece(const unsigned char *p, size_t n, size_t i, char piece[8], size_t *plen, uint32_t *pw)
{
    size_t l = utf8_seq(p + i, n - i);
    if (!l) {
        piece[0] = '?';
        *plen = 1;
        l = 1;
    } else if (l == 1 && (p[i] < 0x20 || p[i] == 0x7f)) {
        *plen = (size_t)snprintf(piece, 8, "\\x%02x", p[i]);
    } else {
        memcpy(piece, p + i, l);
        *plen = l;
    }
    *pw = (l == 1 && *plen > 1) ? (uint32_t)*plen : 1;
    return l;
}

/* Append pieces of s[from, to) to buf while they fit \p cols columns and the buffer. */
static void text_copy(char *buf, size_t size, size_t *o, uint32_t *w, const unsigned char *p, size_t from, size_t to,
                      uint32_t cols)
{
    for (size_t i = from; i < to;) {
        char piece[8];
        size_t plen;
        uint32_t pw;
        size_t l = text_piece(p, to, i, piece, &plen, &pw);
        if ((cols && *w + pw > cols) || *o + plen >= size) return;
        memcpy(buf + *o, piece, plen);
        *o += plen;
        *w += pw;
        i += l;
    }
}

/* Text wider than its column is cut in the middle, keeping the end: sibling names often
 * differ only there ("Kernel.omp" and "Kernel.omp_barrier", "src/a/solver.c" and
 * "src/b/solver.c"). */
uint32_t jm_text_fit(char *buf, size_t size, const char *s, uint32_t cols)
{
    if (!size) return 0;
    if (!s) s = "";
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), o = 0;
    uint32_t w = 0, total = 0;
    for (size_t i = 0; i < n;) {
        char piece[8];
        size_t plen;
        uint32_t pw;
        i += text_piece(p, n, i, piece, &plen, &pw);
        total += pw;
    }
    if (!cols || total <= cols) {
        text_copy(buf, size, &o, &w, p, 0, n, 0);
        buf[o] = 0;
        return w;
    }
    /* head + "…" + tail = cols; the tail gets the larger half */
    uint32_t tail_cols = (cols - 1 + 1) / 2, head_cols = cols - 1 - tail_cols;
    /* where the tail starts: skip pieces from the front until what is left fits */
    size_t tail_at = 0;
    uint32_t left = total;
    while (tail_at < n && left > tail_cols) {
        char piece[8];
        size_t plen;
        uint32_t pw;
        tail_at += text_piece(p, n, tail_at, piece, &plen, &pw);
        left -= pw;
    }
    text_copy(buf, size, &o, &w, p, 0, tail_at, head_cols);
    if (o + 3 < size) {
        memcpy(buf + o, "\xE2\x80\xA6", 3);
        o += 3;
        w++;
    }
    text_copy(buf, size, &o, &w, p, tail_at, n, w + left);
    buf[o] = 0;
    return w;
}

int jm_thread_is_helper(const char *name) { return name && !strncmp(name, "jager-", 6); }
