// MPI calls that bypass symbol interposition: a library opened with RTLD_DEEPBIND (binds
// to its own libmpich first) and Julia 1.5 calling MPICH through ccall (dlsym). The
// plugin's dlopen and dlsym hooks catch both; with JAGER_MPI_NO_PATCH=1 (hooks off) the
// same runs miss them, which shows the hooks are what sees them.
'use strict';
const u = require('./mpiutil');
const { check } = u;

function counts(file) {
  const got = {};
  for (const c of u.calls(u.dump(file))) got[c.func] = (got[c.func] || 0) + 1;
  return JSON.stringify(Object.fromEntries(Object.entries(got).sort()));
}

// RTLD_DEEPBIND (AddressSanitizer refuses to dlopen with RTLD_DEEPBIND: not in ASan builds)
if (u.E.JAGER_MPI_TEST_ASAN) console.log('note: ASan build, the RTLD_DEEPBIND case is left out (ASan refuses it)');
const deep = JSON.stringify({ MPI_Barrier: 1, MPI_Finalize: 1, MPI_Init: 1, MPI_Sendrecv: 3 });
let r;
if (!u.E.JAGER_MPI_TEST_ASAN) {
  r = u.mpiexec(2, { LD_PRELOAD: u.preload(), JAGER_OUTPUT: u.tmp('deep.%r.jgr') }, u.bin('mpi_deep_main'),
    [u.E.DEEP_LIB]);
  check(r.code === 0, `RTLD_DEEPBIND program: exit 0 ${r.err.slice(0, 200)}`);
  for (let k = 0; k < 2; k++)
    check(counts(u.tmp(`deep.${k}.jgr`)) === deep, `RTLD_DEEPBIND: rank ${k} recorded the library's calls ${deep}` +
      ` (got ${counts(u.tmp(`deep.${k}.jgr`))})`);
  r = u.mpiexec(2, { LD_PRELOAD: u.preload(), JAGER_OUTPUT: u.tmp('deep0.%r.jgr'), JAGER_MPI_NO_PATCH: '1' },
    u.bin('mpi_deep_main'), [u.E.DEEP_LIB]);
  check(r.code === 0 && counts(u.tmp('deep0.0.jgr')) === JSON.stringify({ MPI_Finalize: 1, MPI_Init: 1 }),
    `hooks off: the deep-bound library's calls are missed (${counts(u.tmp('deep0.0.jgr'))})`);
}

// Julia ccall (Julia itself dlopens libpcre2 with RTLD_DEEPBIND: not in ASan builds either)
if (u.E.JAGER_MPI_TEST_ASAN) {
  console.log('note: ASan build, the Julia case is left out (Julia dlopens with RTLD_DEEPBIND, which ASan refuses)');
} else if (!u.E.JULIA) {
  console.log('FAIL no Julia (scripts/install-julia.sh): the ccall case is not checked');
  process.exitCode = 1;
} else {
  const jl = JSON.stringify({ MPI_Allreduce: 2, MPI_Barrier: 1, MPI_Finalize: 1, MPI_Init: 1, MPI_Recv: 4, MPI_Send: 4 });
  r = u.mpiexec(2, { LD_PRELOAD: u.preload(), JAGER_OUTPUT: u.tmp('jl.%r.jgr') }, u.E.JULIA,
    ['--startup-file=no', u.E.CCALL_JL], 600000);
  check(r.code === 0, `Julia ccall program: exit 0 ${r.err.slice(0, 300)}`);
  for (let k = 0; k < 2; k++) {
    const f = u.tmp(`jl.${k}.jgr`);
    check(counts(f) === jl, `Julia ccall: rank ${k} recorded ${jl} (got ${counts(f)})`);
    const m = u.messages(k, u.dump(f));
    check(m.sends.length === 4 && m.recvs.length === 4 && m.recvs.every((x) => x.from === 1 - k && x.bytes === 8),
      `Julia ccall: rank ${k}: 4 sends and 4 receives of 8 bytes`);
  }
  r = u.mpiexec(2, { LD_PRELOAD: u.preload(), JAGER_OUTPUT: u.tmp('jl0.%r.jgr'), JAGER_MPI_NO_PATCH: '1' }, u.E.JULIA,
    ['--startup-file=no', u.E.CCALL_JL], 600000);
  check(r.code === 0 && counts(u.tmp('jl0.0.jgr')) === '{}', `hooks off: ccall's MPI calls are missed (${counts(u.tmp('jl0.0.jgr'))})`);
}
u.done();
