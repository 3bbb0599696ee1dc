/*
 * instr_check.c — checks the function spans of a call_tree recording:
 *   instr_check FILE EXPECT...
 *   EXPECT: name=N      exactly N spans (events) and N calls (exact statistics) of "name"
 *           name<parent every span of "name" is a child of a span of "parent" ("-": top level)
 * Any function with spans that no name=N names fails the check (the filter is honoured,
 * the library records none of its own functions).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jager_reader.h"

#define MAXS 4096
typedef struct span {
    uint32_t thread, id, parent, site;
} span;
static span spans[MAXS];
static size_t nspans;

static const char *site_name(jager_reader *r, uint32_t site)
{
    const char *name = NULL, *file = NULL;
    uint32_t line = 0;
    return jager_reader_site(r, site, &name, &file, &line) == JAGER_OK && name ? name : "?";
}

int main(int argc, char **argv)
{
    int fails = 0;
    jager_reader *r = NULL;
    if (argc < 2 || jager_reader_open(argv[1], &r) != JAGER_OK) {
        fprintf(stderr, "usage: instr_check FILE EXPECT... (cannot open the file)\n");
        return 2;
    }
    jager_event ev;
    int rc;
    while ((rc = jager_reader_next(r, &ev)) == 1)
        if (ev.type == JAGER_EV_SPAN && nspans < MAXS) {
            const jager_rec_span *s = (const jager_rec_span *)ev.rec;
            spans[nspans++] = (span){ev.thread, s->span_id, s->parent_id, s->h.aux};
        }
    if (rc != 0) {
        fprintf(stderr, "FAIL: reading: %s\n", jager_reader_error(r));
        fails++;
    }
    /* Every recorded function is expected. */
    for (size_t i = 0; i < nspans; i++) {
        const char *n = site_name(r, spans[i].site);
        int known = 0;
        for (int a = 2; a < argc; a++) {
            size_t l = strcspn(argv[a], "=<");
            if (argv[a][l] == '=' && strlen(n) == l && strncmp(argv[a], n, l) == 0) known = 1;
        }
        if (!known) {
            fprintf(stderr, "FAIL: unexpected function span \"%s\"\n", n);
            fails++;
            break;
        }
    }
    for (int a = 2; a < argc; a++) {
        char name[128];
        size_t l = strcspn(argv[a], "=<");
        snprintf(name, sizeof name, "%.*s", (int)l, argv[a]);
        if (argv[a][l] == '=') {
            unsigned long want = strtoul(argv[a] + l + 1, NULL, 10), n = 0;
            uint32_t site = 0;
            for (size_t i = 0; i < nspans; i++)
                if (strcmp(site_name(r, spans[i].site), name) == 0) n++, site = spans[i].site;
            jager_site_stat st = {.struct_size = sizeof st};
            unsigned long calls = site && jager_reader_site_stats(r, site, &st) == JAGER_OK ? (unsigned long)st.calls : 0;
            printf("%s: %lu spans, %lu calls\n", name, n, calls);
            if (n != want || calls != want) {
                fprintf(stderr, "FAIL: %s: %lu spans, %lu calls, expected %lu\n", name, n, calls, want);
                fails++;
            }
        } else if (argv[a][l] == '<') {
            const char *parent = argv[a] + l + 1;
            for (size_t i = 0; i < nspans; i++) {
                if (strcmp(site_name(r, spans[i].site), name) != 0) continue;
                const char *pn = "-";
                if (spans[i].parent)
                    for (size_t k = 0; k < nspans; k++)
                        if (spans[k].thread == spans[i].thread && spans[k].id == spans[i].parent)
                            pn = site_name(r, spans[k].site);
                if (strcmp(pn, parent) != 0) {
                    fprintf(stderr, "FAIL: a %s span's parent is %s, expected %s\n", name, pn, parent);
                    fails++;
                    break;
                }
            }
        }
    }
    jager_reader_close(r);
    return fails ? 1 : 0;
}
