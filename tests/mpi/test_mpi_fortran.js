// Fortran: the same ring program with `use mpi` and with `use mpi_f08`, built with
// mpif90, unmodified, preloaded. MPICH's f08 layer calls PMPI_ directly: the plugin
// points libmpichfort's PMPI_ slots at its wrappers, so both are captured in full.
'use strict';
const u = require('./mpiutil');
const { check } = u;

const want = { MPI_Allreduce: 2, MPI_Barrier: 1, MPI_Finalize: 1, MPI_Init: 1, MPI_Irecv: 1, MPI_Isend: 1,
  MPI_Recv: 4, MPI_Send: 4, MPI_Waitall: 1 };
for (const prog of ['fortran_mpi', 'fortran_f08']) {
  const r = u.mpiexec(2, { LD_PRELOAD: u.preload(), JAGER_OUTPUT: u.tmp(`${prog}.%r.jgr`) }, u.bin(prog));
  check(r.code === 0, `${prog}: mpiexec -n 2 exits 0 ${r.err.slice(0, 200)}`);
  const all = [[], []];
  for (let k = 0; k < 2; k++) {
    const evs = u.dump(u.tmp(`${prog}.${k}.jgr`)), got = {};
    for (const c of u.calls(evs)) got[c.func] = (got[c.func] || 0) + 1;
    const sorted = Object.fromEntries(Object.entries(got).sort());
    check(JSON.stringify(sorted) === JSON.stringify(want), `${prog}: rank ${k} recorded exactly ${JSON.stringify(want)}` +
      ` (got ${JSON.stringify(sorted)})`);
    const m = u.messages(k, evs);
    check(m.sends.length === 5 && m.recvs.length === 5 && [...m.sends, ...m.recvs].every((x) => x.bytes === 20) &&
      m.sends.every((x) => x.to === 1 - k) && m.recvs.every((x) => x.from === 1 - k),
      `${prog}: rank ${k}: 5 sends and 5 receives of 20 bytes with the peer's world rank`);
    all[0].push(...m.sends);
    all[1].push(...m.recvs);
  }
  const ids = new Set(all[0].map(u.msgId));
  check(all[1].length === 10 && all[1].every((x) => ids.has(u.msgId(x))), `${prog}: every send matched to its receive`);
}
u.done();
