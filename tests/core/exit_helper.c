/* exit_helper MODE OUTPUT N — a program that records N spans of site "exit.span" into
 * OUTPUT (JAGER_OUTPUT) and then ends the way MODE says, for test_exit.c:
 *   exit          exit(3)
 *   quick_exit    quick_exit(4)
 *   return        return 5 from main
 *   signal        print "ready", then wait for SIGINT/SIGTERM (default action)
 *   chained       install a SIGINT handler of its own first; after the signal record N
 *                 more spans and return 0 (the program's handler is chained, it goes on)
 *   fork-exit     fork after N spans: the child records N spans and calls exit(0); the
 *                 parent waits, records N more and returns 0
 *   fork-shutdown the same, but the child calls jager_shutdown() before exit(0)
 *   fork-_exit    the same, but the child leaves by _exit(0)
 *   pipe          print "ready", wait for a line on stdin (the reader has left), then record
 *                 N spans with a jager_flush() after each 100; exit 0 when the sink's lost
 *                 events were counted (dropped[SINK] > 0), else 1
 *   plain         record N spans and return 0 (a FIFO with no reader)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jager.h"

static jager_site site;
static volatile sig_atomic_t got_signal;

static void spans(long n)
{
    for (long i = 0; i < n; i++) {
        jager_span s = jager_span_begin(site);
        jager_span_end(s);
    }
}

static void on_int(int sig) { got_signal = sig; }

/* LeakSanitizer's check at exit takes its allocator's lock, and a child forked while another
 * thread (the collector) was inside malloc inherits that lock held: libasan has no fork
 * handler for it, so the check would wait forever in the child (seen in the sanitizer run).
 * The forked child skips the check; the parent, which owns every allocation, keeps it. */
static volatile int forked_child;
__attribute__((visibility("default"), used)) int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) { return forked_child; }

int main(int argc, char **argv)
{
    if (argc < 4) return 64;
    const char *mode = argv[1];
    long n = atol(argv[3]);
    if (!strcmp(mode, "chained")) signal(SIGINT, on_int);
    setenv("JAGER_OUTPUT", argv[2], 1);
    if (jager_init(NULL) != JAGER_OK) {
        fprintf(stderr, "exit_helper: jager_init: %s\n", jager_last_error());
        return 65;
    }
    site = jager_site_register("exit.span", __FILE__, __LINE__);
    spans(n);
    if (!strcmp(mode, "exit")) exit(3);
    if (!strcmp(mode, "quick_exit")) quick_exit(4);
    if (!strcmp(mode, "return")) return 5;
    if (!strcmp(mode, "signal") || !strcmp(mode, "chained")) {
        printf("ready\n");
        fflush(stdout);
        while (!got_signal) pause();
        spans(n);
        return 0;
    }
    if (!strncmp(mode, "fork-", 5)) {
        pid_t pid = fork();
        if (pid < 0) return 66;
        if (pid == 0) {
            forked_child = 1;
            spans(n); /* recorded by the child itself only when OUTPUT names the pid (%p) */
            if (!strcmp(mode, "fork-shutdown")) jager_shutdown();
            if (!strcmp(mode, "fork-_exit")) _exit(0);
            exit(0);
        }
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 67;
        spans(n);
        jager_shutdown();
        return 0;
    }
    if (!strcmp(mode, "pipe")) {
        printf("ready\n");
        fflush(stdout);
        char line[16];
        if (!fgets(line, sizeof line, stdin)) return 68;
        for (long i = 0; i < n; i += 100) {
            spans(100);
            jager_flush();
        }
        jager_stat st = {.struct_size = sizeof st};
        jager_stats(&st);
        jager_shutdown();
        return st.dropped[JAGER_DROP_SINK] > 0 ? 0 : 1;
    }
    return 0; /* plain: the exit handler finishes */
}
