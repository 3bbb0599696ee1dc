#include "args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

void cli_put_safe(FILE *out, const char *s)
{
    if (!s) s = "";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) fprintf(out, "\\x%02x", *p);
        else fputc(*p, out);
    }
}

/* "jager <cmd>: " + fmt with the (escaped) value, one line. */
static void say(const cli_spec *s, const char *fmt, const char *value)
{
    fprintf(stderr, "jager %s: ", s->cmd);
    const char *at = strstr(fmt, "%s");
    if (!at) {
        fputs(fmt, stderr);
    } else {
        fwrite(fmt, 1, (size_t)(at - fmt), stderr);
        cli_put_safe(stderr, value);
        fputs(at + 2, stderr);
    }
    fputc('\n', stderr);
}

static const cli_opt *find(const cli_spec *s, const char *arg, size_t len)
{
    for (size_t i = 0; i < s->nopts; i++) {
        const cli_opt *o = &s->opts[i];
        if (strlen(o->name) == len && !strncmp(o->name, arg, len)) return o;
        if (o->alias && strlen(o->alias) == len && !strncmp(o->alias, arg, len)) return o;
    }
    return NULL;
}

static int refuse(const cli_spec *s, const cli_opt *o, const char *val)
{
    if (o->bad) {
        say(s, o->bad, val);
    } else {
        fprintf(stderr, "jager %s: %s: '", s->cmd, o->name);
        cli_put_safe(stderr, val);
        fputs("' is not accepted\n", stderr);
    }
    return -1;
}

static int store(const cli_spec *s, const cli_opt *o, const char *val)
{
    char *end;
    switch (o->kind) {
    case CLI_FLAG: *(int *)o->dest = o->flag_value; return 0;
    case CLI_STRING: *(const char **)o->dest = val; return 0;
    case CLI_CHOICE:
        for (const cli_choice *c = o->choices; c && c->name; c++)
            if (!strcmp(c->name, val)) {
                *(int *)o->dest = c->value;
                return 0;
            }
        return refuse(s, o, val);
    case CLI_UINT: {
        errno = 0;
        unsigned long long v = strtoull(val, &end, 10);
        if (errno || end == val || *end || val[0] == '-' || val[0] == '+' || (double)v < o->min || (double)v > o->max)
            return refuse(s, o, val);
        *(uint64_t *)o->dest = v;
        return 0;
    }
    case CLI_DOUBLE: {
        double v = strtod(val, &end);
        if (end == val || *end || !(v >= o->min && v <= o->max)) return refuse(s, o, val);
        *(double *)o->dest = v;
        return 0;
    }
    }
    return -1;
}

static int unknown(const cli_spec *s, const char *arg)
{
    fprintf(stderr, "jager %s: unknown option '", s->cmd);
    cli_put_safe(stderr, arg);
    fputs("'\n", stderr);
    s->usage(stderr);
    return -1;
}

int cli_parse(const cli_spec *s, int argc, char **argv, const char **pos, size_t *npos)
{
    const char *what = s->pos_what ? s->pos_what : "recording";
    int options = 1;
    *npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options && !strcmp(a, "--")) {
            options = 0;
            continue;
        }
        if (!options || a[0] != '-' || !a[1]) {
            if (*npos >= s->max_pos) {
                if (s->max_pos == 1) {
                    fprintf(stderr, "jager %s: one %s at a time ('", s->cmd, what);
                    cli_put_safe(stderr, pos[0]);
                    fputs("' and '", stderr);
                    cli_put_safe(stderr, a);
                    fputs("')\n", stderr);
                } else {
                    fprintf(stderr, "jager %s: at most %zu %ss\n", s->cmd, s->max_pos, what);
                }
                return -1;
            }
            pos[(*npos)++] = a;
            if (s->names_end_options) options = 0;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            s->usage(stdout);
            return 1;
        }
        const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
        const cli_opt *o = find(s, a, eq ? (size_t)(eq - a) : strlen(a));
        if (!o || (eq && o->kind == CLI_FLAG)) return unknown(s, a);
        const char *val = NULL;
        if (o->kind != CLI_FLAG) {
            if (eq) val = eq + 1;
            else if (i + 1 < argc) val = argv[++i];
            else {
                fprintf(stderr, "jager %s: %s needs a value\n", s->cmd, o->name);
                return -1;
            }
        }
        if (store(s, o, val) != 0) return -1;
    }
    if (*npos < s->min_pos) {
        fprintf(stderr, "jager %s: no %s given\n", s->cmd, what);
        s->usage(stderr);
        return -1;
    }
    return 0;
}

int cli_parse_exit(int parsed) { return parsed > 0 ? JAGER_EXIT_OK : JAGER_EXIT_USAGE; }
