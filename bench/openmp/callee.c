/* The measured function, compiled three times: BENCH_FN = f_plain (no instrumentation),
 * f_inst and f_excl (both -finstrument-functions; f_excl is filtered out at run time). */
__attribute__((noinline)) double BENCH_FN(double x) { return x * 1.0000001 + 1e-9; }
