/* Two processes joined into one trace over a socket, with the core's own propagation
 * helpers and the otel plugin in each:
 *   parent: jager_init() (the plugin makes its process span the thread's context), span
 *           "request", jager_context_inject() → the traceparent goes down a socket;
 *   child:  forked before the parent started recording, reads the traceparent, puts it in
 *           TRACEPARENT, jager_init(), span "handle": its process span is the parent's
 *           child, and all its spans are in the parent's trace.
 * With OTEL_PROPAGATE_LATE set, the child adopts the context after it started recording
 * (jager_context_extract), see late_child().
 * With arguments, the child instead runs them as a command (a Julia program, say) with the
 * socket as its standard input.
 * JAGER_OUTPUT should contain %p (one recording per process). Prints nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jager.h"

static char carried[128];

static void set(void *carrier, const char *key, const char *value)
{
    (void)carrier;
    if (!strcmp(key, "traceparent")) snprintf(carried, sizeof carried, "%s", value);
}

static int read_line(int fd, char *buf, size_t size)
{
    ssize_t n = read(fd, buf, size - 1);
    if (n <= 0) return -1;
    buf[n] = 0;
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}

static const char *get(void *carrier, const char *key) { return strcmp(key, "traceparent") ? NULL : (const char *)carrier; }

/* OTEL_PROPAGATE_LATE: the child records first and adopts the parent's context afterwards,
 * as a server thread does per request: "before" stays in its own trace, "handle" (and
 * "inner" under it) join the parent's, and after clearing the context "after" is back in
 * the child's own trace. */
static int late_child(int fd)
{
    if (jager_init(NULL) != JAGER_OK) return 3;
    jager_site before = jager_site_register("before", __FILE__, __LINE__);
    jager_site handle = jager_site_register("handle", __FILE__, __LINE__);
    jager_site inner = jager_site_register("inner", __FILE__, __LINE__);
    jager_site after = jager_site_register("after", __FILE__, __LINE__);
    jager_span b = jager_span_begin(before);
    char buf[128] = "";
    if (read_line(fd, buf, sizeof buf)) return 2;
    jager_span_end(b);
    if (jager_context_extract(buf, get) != JAGER_OK) return 8;
    jager_span h = jager_span_begin(handle);
    jager_span i = jager_span_begin(inner);
    jager_log(JAGER_SEV_INFO, "handled", NULL, 0);
    jager_span_end(i);
    jager_span_end(h);
    jager_context_set(NULL);
    jager_span a = jager_span_begin(after);
    jager_span_end(a);
    jager_shutdown();
    return 0;
}

int main(int argc, char **argv)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) return 1;
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        close(sv[0]);
        if (argc > 1) {
            if (dup2(sv[1], 0) < 0) return 2;
            execvp(argv[1], argv + 1);
            return 2;
        }
        if (getenv("OTEL_PROPAGATE_LATE")) return late_child(sv[1]);
        char buf[128] = "";
        if (read_line(sv[1], buf, sizeof buf)) return 2;
        setenv("TRACEPARENT", buf, 1);
        if (jager_init(NULL) != JAGER_OK) return 3;
        jager_site s = jager_site_register("handle", __FILE__, __LINE__);
        jager_span sp = jager_span_begin(s);
        jager_log(JAGER_SEV_INFO, "handled", NULL, 0);
        jager_span_end(sp);
        jager_shutdown();
        return 0;
    }
    close(sv[1]);
    if (jager_init(NULL) != JAGER_OK) return 4;
    jager_site s = jager_site_register("request", __FILE__, __LINE__);
    jager_span sp = jager_span_begin(s);
    if (jager_context_inject(NULL, set) != JAGER_OK || !carried[0]) return 5;
    if (write(sv[0], carried, strlen(carried)) != (ssize_t)strlen(carried) || write(sv[0], "\n", 1) != 1) return 6;
    shutdown(sv[0], SHUT_WR);
    int status = 0;
    waitpid(pid, &status, 0);
    jager_span_end(sp);
    jager_shutdown();
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 7;
}
