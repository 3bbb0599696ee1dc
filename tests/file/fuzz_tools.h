/* The tools' fuzz target (fuzz_tools.c), shared by libFuzzer and the corpus replay. */
#ifndef JAGER_TEST_FUZZ_TOOLS_H
#define JAGER_TEST_FUZZ_TOOLS_H
#include <stddef.h>
#include <stdint.h>

/** The commands fuzz_tools_run() runs on each input, in order. */
#define FUZZ_TOOLS_COMMANDS 18

/** Run \p data (\p size bytes) through every command; their exit codes into \p codes (at
 *  most \p max). Returns how many ran (FUZZ_TOOLS_COMMANDS), or -1 when the input cannot
 *  be written to the private folder. */
int fuzz_tools_run(const uint8_t *data, size_t size, int *codes, int max);

/** Remove the private folder and everything in it (the replay's end). */
void fuzz_tools_cleanup(void);

#endif
