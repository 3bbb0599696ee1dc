/* The `jager` command's subcommands. Each lives in its own file; a command whose file is
 * not built is a weak symbol left NULL, and the dispatcher says it is unavailable. */
#ifndef JAGER_TOOLS_COMMANDS_H
#define JAGER_TOOLS_COMMANDS_H

/* Each returns the process exit code: 0 success, 1 bad usage, 2 bad input (corrupt or
 * unreadable file), 3 partial result (truncated file: output written for the good prefix). */
#define JAGER_EXIT_OK 0
#define JAGER_EXIT_USAGE 1
#define JAGER_EXIT_INPUT 2
#define JAGER_EXIT_PARTIAL 3

int cmd_summary(int argc, char **argv) __attribute__((weak));
int cmd_dump(int argc, char **argv) __attribute__((weak));
int cmd_hunt(int argc, char **argv) __attribute__((weak));
int cmd_report(int argc, char **argv) __attribute__((weak));
int cmd_export(int argc, char **argv) __attribute__((weak));
int cmd_info(int argc, char **argv) __attribute__((weak));
int cmd_plugins(int argc, char **argv) __attribute__((weak));

#endif
