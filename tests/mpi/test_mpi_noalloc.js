// No allocation on the MPI call path after warm-up: mpi_noalloc (a plain MPI program that
// counts its main thread's malloc/calloc/realloc calls itself) completes 64 requests per
// MPI_Waitall — more than the 32 handles a wrapper keeps on its stack — 200 times through
// the PMPI_ entry points and 200 times through the wrapped MPI_ ones, after 50 rounds of
// warm-up. In the wrapped rounds nothing may be allocated from Jäger's libraries (by the
// caller's address: exactly 0), nor more than the unwrapped rounds (MPICH's own, ~0-2)
// plus a wide margin of fewer than one per round (the old per-call malloc made 2), and the recording must hold the 200 + 50 wrapped Waitalls with their 64
// requests each (the handles really were saved and matched).
'use strict';
const u = require('./mpiutil');
const { check } = u;

const N = 2;
const out = u.tmp('na.%r.jgr');
const r = u.mpiexec(N, { LD_PRELOAD: u.preload(), JAGER_OUTPUT: out, JAGER_RING_BYTES: '16M' }, u.bin('mpi_noalloc'));
check(r.code === 0, `mpiexec -n 2 mpi_noalloc under LD_PRELOAD exits 0 (${r.code} ${r.signal || ''} ${r.err.slice(0, 300)})`);
if (/skip: sanitizer build/.test(r.out)) {
  console.log('skip: a sanitizer build (its runtime owns malloc; the counting is for plain builds)');
  u.done();
  process.exit(0);
}
const lines = [...r.out.matchAll(/^rank (\d+) pmpi (\d+) mpi (\d+) jager (\d+) segments (\d+)$/gm)].map((m) => m.slice(1).map(Number)).sort((a, b) => a[0] - b[0]);
check(lines.length === N, `both ranks counted their allocations (${r.out.trim()})`);
for (const [rank, pmpi, mpi, jager, segs] of lines) {
  check(segs >= 2 && jager === 0, `rank ${rank}: 200 wrapped rounds of 32 Irecv + 32 Isend + Waitall(64): ` +
    `${jager} allocations called from libjager*.so (${segs} segments watched)`);
  check(mpi < pmpi + 200, `rank ${rank}: the wrapped rounds allocate ${mpi} times in all, the PMPI rounds ${pmpi}`);
}
for (let k = 0; k < N; k++) {
  const evs = u.dump(u.tmp(`na.${k}.jgr`));
  const wa = u.calls(evs).filter((c) => c.func === 'MPI_Waitall');
  const done = u.reqs(evs).filter((q) => q.done_by === 'MPI_Waitall').length;
  check(wa.length === 250 && wa.every((c) => c.completed === 64) && done === 250 * 64,
    `rank ${k}: 250 MPI_Waitall recorded, each completing its 64 requests (${wa.length}, ${done} mpi.request)`);
}
u.done();
