/* victim.c — the shared library the supply tests lock, then rebuild with another value. */
#ifndef VICTIM_VALUE
#define VICTIM_VALUE 1
#endif
__attribute__((visibility("default"))) int victim_value(void) { return VICTIM_VALUE; }
