/* compare_out.c — a comparison for people: terminal table, GitHub Markdown, workflow annotations. */
#include "compare.h"

#include <math.h>
#include <string.h>

#include "model.h"
#include "toolutil.h"

static const char *kernel_name(const jc_row *row) { return (row->head ? row->head : row->base)->name; }
static const jb_kernel *kernel_of(const jc_row *row) { return row->head ? row->head : row->base; }

static const char *row_verdict(const jc_row *row)
{
    if (!row->base) return "new";
    if (!row->head) return "removed";
    return jc_verdict_name(row->verdict);
}

/* "+4.2 % [+1.0, +7.9]" into buf, or "" without a shift. */
static const char *fmt_change(char *buf, size_t size, const jc_row *row)
{
    if (!row->have_shift) { snprintf(buf, size, "-"); return buf; }
    snprintf(buf, size, "%+.1f %% [%+.1f, %+.1f]", (row->shift.ratio - 1) * 100, (row->shift.lo - 1) * 100,
             (row->shift.hi - 1) * 100);
    return buf;
}

static const char *fmt_bytes_change(char *buf, size_t size, const jc_row *row)
{
    char a[32], b[32];
    if (!row->base || !row->head) snprintf(buf, size, "-");
    else if (row->base_bytes == row->head_bytes) snprintf(buf, size, "%s", tu_fmt_bytes(a, sizeof a, row->head_bytes));
    else snprintf(buf, size, "%s -> %s", tu_fmt_bytes(a, sizeof a, row->base_bytes), tu_fmt_bytes(b, sizeof b, row->head_bytes));
    return buf;
}

static void fmt_ns_or_dash(char *buf, size_t size, const jb_kernel *k, double ns)
{
    if (!k) snprintf(buf, size, "-");
    else tu_fmt_ns(buf, size, ns);
}

static void summary_line(char *buf, size_t size, const jc_report *r)
{
    snprintf(buf, size, "%zu kernels: %zu regressed, %zu improved, %zu noisy, %zu without verdict, %zu with more "
             "bytes per call, %zu new, %zu removed",
             r->nrows, r->regressed, r->improved, r->noisy, r->no_verdict, r->alloc_regressed, r->added, r->removed);
}

void jc_print_table(FILE *out, const jc_report *r)
{
    char line[512];
    for (int i = 0; i < 4; i++)
        if (r->warnings[i][0]) fprintf(out, "warning: %s\n", r->warnings[i]);
    fprintf(out, "%-10s  %-32s %10s %10s  %-26s %8s  %s\n", "verdict", "kernel", "base", "head", "change [95% CI]",
            "p(Holm)", "bytes/call");
    for (size_t i = 0; i < r->nrows; i++) {
        const jc_row *row = &r->rows[i];
        char name[160], b[32], h[32], ch[64], p[16], by[64];
        jm_text_fit(name, sizeof name, kernel_name(row), 32);
        fmt_ns_or_dash(b, sizeof b, row->base, row->base_ns);
        fmt_ns_or_dash(h, sizeof h, row->head, row->head_ns);
        if (row->have_shift) snprintf(p, sizeof p, "%.3g", row->shift.p); else snprintf(p, sizeof p, "-");
        const char *v = row->alloc_regressed && row->verdict != JC_REGRESSED ? "alloc+" : row_verdict(row);
        fprintf(out, "%-10s  %-32s %10s %10s  %-26s %8s  %s\n", v, name, b, h, fmt_change(ch, sizeof ch, row), p,
                fmt_bytes_change(by, sizeof by, row));
    }
    summary_line(line, sizeof line, r);
    fprintf(out, "%s\n", line);
}

/* Markdown text: every ASCII punctuation character that Markdown or HTML may read is
 * backslash-escaped or written as an entity, '|' cannot end a cell, control bytes vanish. */
static void md_text(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if (c < 0x20 || c == 0x7f) { fputc(' ', out); continue; }
        switch (c) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        case '|': case '\\': case '`': case '*': case '_': case '[': case ']': case '(': case ')':
        case '#': case '!': case '~': case '{': case '}': case '+': case '-': case '.': case '\'':
            fputc('\\', out); fputc(c, out); break;
        default: fputc(c, out);
        }
    }
}

void jc_print_markdown(FILE *out, const jc_report *r)
{
    char line[512];
    int failed = jc_report_failed(r);
    fprintf(out, "### Jäger benchmark comparison: %s\n\n", failed ? "regression" : "no regression");
    summary_line(line, sizeof line, r);
    md_text(out, line);
    fputs("\n\n", out);
    for (int i = 0; i < 4; i++)
        if (r->warnings[i][0]) { fputs("> **Warning:** ", out); md_text(out, r->warnings[i]); fputs("\n\n", out); }
    fputs("| verdict | kernel | location | base | head | change [95% CI] | p (Holm) | bytes/call |\n", out);
    fputs("|---|---|---|---:|---:|---|---:|---|\n", out);
    for (size_t i = 0; i < r->nrows; i++) {
        const jc_row *row = &r->rows[i];
        const jb_kernel *k = kernel_of(row);
        char b[32], h[32], ch[64], by[64], loc[64];
        fmt_ns_or_dash(b, sizeof b, row->base, row->base_ns);
        fmt_ns_or_dash(h, sizeof h, row->head, row->head_ns);
        const char *v = row_verdict(row);
        int bad = row->verdict == JC_REGRESSED || row->alloc_regressed;
        fprintf(out, "| %s%s%s | ", bad ? "**" : "", row->alloc_regressed && row->verdict != JC_REGRESSED ? "more bytes" : v,
                bad ? "**" : "");
        md_text(out, k->name);
        fputs(" | ", out);
        snprintf(loc, sizeof loc, ":%u", k->line);
        md_text(out, k->file);
        if (k->line) md_text(out, loc);
        fprintf(out, " | %s | %s | ", b, h);
        md_text(out, fmt_change(ch, sizeof ch, row));
        if (row->have_shift) fprintf(out, " | %.3g | ", row->shift.p); else fputs(" | \\- | ", out);
        md_text(out, fmt_bytes_change(by, sizeof by, row));
        fputs(" |\n", out);
    }
    fputs("\nTime per call: the median over runs of each run's median call; verdicts need the 95 % interval beyond the threshold and "
          "p < 0.05 after Holm's correction. Bytes per call gate exactly.\n", out);
}

/* Workflow-command escaping: data escapes % CR LF; property values also ':' and ','. */
static void gh_escape(FILE *out, const char *s, int property)
{
    for (const char *p = s; *p; p++) {
        switch (*p) {
        case '%': fputs("%25", out); break;
        case '\r': fputs("%0D", out); break;
        case '\n': fputs("%0A", out); break;
        case ':': if (property) { fputs("%3A", out); break; } fputc(*p, out); break;
        case ',': if (property) { fputs("%2C", out); break; } fputc(*p, out); break;
        default: fputc(*p, out);
        }
    }
}

static void annotation(FILE *out, const char *level, const jb_kernel *k, const char *title, const char *msg)
{
    fprintf(out, "::%s ", level);
    if (k->file[0]) {
        fputs("file=", out);
        gh_escape(out, k->file, 1);
        if (k->line) fprintf(out, ",line=%u", k->line);
        fputs(",", out);
    }
    fputs("title=", out);
    gh_escape(out, title, 1);
    fputs("::", out);
    gh_escape(out, msg, 0);
    fputc('\n', out);
}

void jc_print_annotations(FILE *out, const jc_report *r)
{
    for (size_t i = 0; i < r->nrows; i++) {
        const jc_row *row = &r->rows[i];
        if (!row->base || !row->head) continue;
        char title[256], msg[512], ch[64], b[32], h[32];
        fmt_change(ch, sizeof ch, row);
        tu_fmt_ns(b, sizeof b, row->base_ns);
        tu_fmt_ns(h, sizeof h, row->head_ns);
        if (row->verdict == JC_REGRESSED) {
            snprintf(title, sizeof title, "%s regressed", row->head->name);
            snprintf(msg, sizeof msg, "%s per call: %s -> %s, %s (threshold %.1f %%, p = %.3g after Holm)",
                     row->head->name, b, h, ch, row->threshold * 100, row->shift.p);
            annotation(out, "error", row->head, title, msg);
        }
        if (row->alloc_regressed) {
            char x[32], y[32];
            snprintf(title, sizeof title, "%s allocates more", row->head->name);
            snprintf(msg, sizeof msg, "%s: bytes per call %s -> %s", row->head->name,
                     tu_fmt_bytes(x, sizeof x, row->base_bytes), tu_fmt_bytes(y, sizeof y, row->head_bytes));
            annotation(out, "error", row->head, title, msg);
        }
        if (row->verdict == JC_NOISY) {
            snprintf(title, sizeof title, "%s: inconclusive", row->head->name);
            snprintf(msg, sizeof msg, "%s per call: %s -> %s, %s: the interval is wider than the %.1f %% threshold; "
                     "more runs would decide", row->head->name, b, h, ch, row->threshold * 100);
            annotation(out, "notice", row->head, title, msg);
        }
    }
}
