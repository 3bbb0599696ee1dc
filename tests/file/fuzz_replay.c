/* test_file_fuzz_corpus: the committed fuzz corpus (tests/file/fuzz-corpus) through the
 * tools' fuzz target (fuzz_tools.c) without libFuzzer, so every build checks it — also the
 * ASan/UBSan and valgrind re-runs, and where clang is missing.
 *
 *   test_file_fuzz_corpus [CORPUS_DIR MIN_FILES]   (default: the source tree's, and its count)
 *
 * Each file runs through every command; each command's exit code must be one the commands
 * document (0..3), and where CORPUS_DIR/expect.txt lists the file ("NAME c1 c2 …", one
 * code per command in fuzz_tools.c's order) exactly those: a valid recording exits 0
 * everywhere, a cut one 3 (partial) where a command reads it. Fails when fewer than
 * MIN_FILES files were replayed (a corpus lost by a bad copy). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_tools.h"
#include "testutil.h"

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The codes expect.txt gives \p name: how many (0: not listed). */
static int expected(const char *dir, const char *name, int *codes)
{
    char path[4200], line[1024];
    snprintf(path, sizeof path, "%s/expect.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int n = 0;
    while (!n && fgets(line, sizeof line, f)) {
        char *save, *tok = strtok_r(line, " \t\n", &save);
        if (!tok || tok[0] == '#' || strcmp(tok, name)) continue;
        while (n < FUZZ_TOOLS_COMMANDS && (tok = strtok_r(NULL, " \t\n", &save))) codes[n++] = atoi(tok);
    }
    fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    char *def[3] = {argv[0], FUZZ_CORPUS_DIR, NULL};
    char min[32];
    snprintf(min, sizeof min, "%d", FUZZ_CORPUS_MIN);
    def[2] = min;
    if (argc == 1) argv = def;
    else if (argc != 3) {
        fprintf(stderr, "usage: %s [CORPUS_DIR MIN_FILES]\n", argv[0]);
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        perror(argv[1]);
        return 1;
    }
    char *names[4096];
    size_t nn = 0;
    for (struct dirent *e; (e = readdir(d)) && nn < 4096;)
        if (e->d_name[0] != '.' && strcmp(e->d_name, "expect.txt")) names[nn++] = strdup(e->d_name);
    closedir(d);
    qsort(names, nn, sizeof *names, by_name);
    int failed = 0;
    size_t replayed = 0;
    for (size_t i = 0; i < nn; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", argv[1], names[i]);
        size_t size;
        uint8_t *data = tu_read_file(path, &size);
        if (!data) {
            fprintf(stderr, "FAIL %s: cannot read\n", names[i]);
            failed = 1;
            free(names[i]);
            continue;
        }
        int codes[FUZZ_TOOLS_COMMANDS], want[FUZZ_TOOLS_COMMANDS];
        int n = fuzz_tools_run(data, size, codes, FUZZ_TOOLS_COMMANDS);
        free(data);
        int nw = expected(argv[1], names[i], want);
        int bad = n != FUZZ_TOOLS_COMMANDS || (nw && nw != n);
        for (int k = 0; k < n && k < FUZZ_TOOLS_COMMANDS; k++)
            bad |= codes[k] < 0 || codes[k] > 3 || (nw && codes[k] != want[k]);
        fprintf(stderr, "%s %s:", bad ? "FAIL" : "ok", names[i]);
        for (int k = 0; k < n; k++) fprintf(stderr, " %d", codes[k]);
        if (nw) {
            fprintf(stderr, "   (expect.txt:");
            for (int k = 0; k < nw; k++) fprintf(stderr, " %d", want[k]);
            fprintf(stderr, ")");
        }
        fprintf(stderr, "\n");
        failed |= bad;
        replayed++;
        free(names[i]);
    }
    fuzz_tools_cleanup();
    fprintf(stderr, "fuzz_replay: %zu file(s) through %d commands each\n", replayed, FUZZ_TOOLS_COMMANDS);
    if (replayed < (size_t)atoi(argv[2])) {
        fprintf(stderr, "FAIL: fewer than %s files in %s\n", argv[2], argv[1]);
        failed = 1;
    }
    return failed;
}
