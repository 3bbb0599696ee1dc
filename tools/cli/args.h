/* The argument parser every `jager` command shares: a table of options per command.
 *
 *   long names ("--format", also "--format=json"), one alias each ("-f"); "-h"/"--help"
 *   print the command's usage to stdout; "--" ends the options; "-" alone is a positional
 *   argument (stdin/stdout where a command allows it).
 *
 * Errors print one line "jager <cmd>: …" (and the usage for an unknown option or a missing
 * recording) to stderr; option text from the command line is printed with control bytes
 * escaped. */
#ifndef JAGER_TOOLS_CLI_ARGS_H
#define JAGER_TOOLS_CLI_ARGS_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum cli_kind {
    CLI_FLAG,   /**< no value: stores flag_value into an int */
    CLI_STRING, /**< stores the value's pointer into a const char * */
    CLI_CHOICE, /**< the value must name one of choices: stores its value into an int */
    CLI_UINT,   /**< a decimal integer in [min, max]: stores into a uint64_t */
    CLI_DOUBLE, /**< a number in [min, max]: stores into a double */
} cli_kind;

typedef struct cli_choice {
    const char *name;
    int value;
} cli_choice;

typedef struct cli_opt {
    const char *name;            /**< "--format" */
    const char *alias;           /**< "-f", or NULL */
    cli_kind kind;
    void *dest;
    int flag_value;              /**< CLI_FLAG */
    const cli_choice *choices;   /**< CLI_CHOICE: ends with a NULL name */
    double min, max;             /**< CLI_UINT, CLI_DOUBLE: the accepted range */
    const char *bad;             /**< message for a refused value: a printf format taking the value
                                      (%s), printed after "jager <cmd>: " */
} cli_opt;

/** A string option: `CLI_STRING_OPT("--output", "-o", &out)`. */
#define CLI_STRING_OPT(n, al, d) {.name = (n), .alias = (al), .kind = CLI_STRING, .dest = (d)}

typedef struct cli_spec {
    const char *cmd;             /**< "export" */
    void (*usage)(FILE *out);
    const cli_opt *opts;
    size_t nopts;
    size_t min_pos, max_pos;     /**< positional arguments accepted (recordings, names) */
    int names_end_options;       /**< 1: everything from the first positional on is positional */
    const char *pos_what;        /**< what a positional is, for messages ("recording") */
} cli_spec;

/** Parse argv[1..argc) by \p spec; positionals go to \p pos (room for argc entries), their
 *  number to \p npos. \return 0 to go on; 1 when the usage was printed for --help (exit 0);
 *  -1 on bad usage, already reported (exit JAGER_EXIT_USAGE). */
int cli_parse(const cli_spec *spec, int argc, char **argv, const char **pos, size_t *npos);

/** The exit code for a cli_parse() result other than 0. */
int cli_parse_exit(int parsed);

/** Write \p s with control bytes as \\xNN (for names taken from the command line or a file). */
void cli_put_safe(FILE *out, const char *s);
#endif
