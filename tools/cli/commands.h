/* The `jager` command's subcommands, one file each (cmd_*.c), and what they share:
 * exit codes and opening a recording with uniform messages (recording.c). */
#ifndef JAGER_TOOLS_COMMANDS_H
#define JAGER_TOOLS_COMMANDS_H

/* Each returns the process exit code: 0 success, 1 bad usage, 2 bad input (corrupt or
 * unreadable file), 3 partial result (truncated file: output written for the good prefix). */
#define JAGER_EXIT_OK 0
#define JAGER_EXIT_USAGE 1
#define JAGER_EXIT_INPUT 2
#define JAGER_EXIT_PARTIAL 3

#include "jager_reader.h"

/** Open \p path; on failure print "jager <cmd>: <path>: <why>" and return NULL. */
jager_reader *cli_open(const char *cmd, const char *path);
/** Map the final jager_reader_next() result to an exit code, printing the reader's error
 *  ("<path>: truncated after N events (partial results)") when rc < 0. */
int cli_finish(const char *cmd, const char *path, jager_reader *r, int rc);

struct jm_job;
/** Open the recordings of a job (job.h: files, job files, folders); on failure print
 *  "jager <cmd>: <why>" and return NULL. */
struct jm_job *cli_open_job(const char *cmd, const char *const *paths, size_t n);

int cmd_summary(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_hunt(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_plugins(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_plugin_check(int argc, char **argv);
int cmd_lock(int argc, char **argv);
int cmd_verify(int argc, char **argv);

#endif
