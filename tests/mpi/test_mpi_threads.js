// MPI_THREAD_MULTIPLE: 4 threads per rank in MPI at once (mpi_threads.c). Exact counts,
// each worker thread's calls on its own lane, every message matched by id.
'use strict';
const u = require('./mpiutil');
const { check } = u;

const r = u.mpiexec(2, { LD_PRELOAD: u.preload(), JAGER_OUTPUT: u.tmp('th.%r.jgr'), JAGER_RING_BYTES: '4M' },
  u.bin('mpi_threads'));
check(r.code === 0, `mpi_threads on 2 ranks: exit 0 ${r.err.slice(0, 200)}`);
const sends = [], recvs = [];
for (let k = 0; k < 2; k++) {
  const f = u.tmp(`th.${k}.jgr`), evs = u.dump(f);
  check(/dropped: 0/.test(u.info(f).text), `rank ${k}: nothing dropped`);
  const got = {};
  for (const c of u.calls(evs)) got[c.func] = (got[c.func] || 0) + 1;
  const want = { MPI_Init_thread: 1, MPI_Irecv: 100, MPI_Isend: 100, MPI_Wait: 200, MPI_Sendrecv: 4, MPI_Barrier: 1,
    MPI_Finalize: 1 };
  const ok = Object.keys(want).length === Object.keys(got).length && Object.keys(want).every((f) => got[f] === want[f]);
  check(ok, `rank ${k}: exact counts ${JSON.stringify(want)} (got ${JSON.stringify(got)})`);
  // each worker's 25 Isends with its tag on one thread, 4 worker threads
  const byTag = {};
  for (const e of evs.filter((x) => x.type === 'mpi.call' && x.fields.func === 'MPI_Isend'))
    (byTag[e.fields.tag] = byTag[e.fields.tag] || new Set()).add(e.thread);
  check(Object.keys(byTag).length === 4 && Object.values(byTag).every((s) => s.size === 1) &&
    new Set(Object.values(byTag).map((s) => [...s][0])).size === 4, `rank ${k}: each worker's calls on its own thread`);
  const m = u.messages(k, evs);
  sends.push(...m.sends);
  recvs.push(...m.recvs);
}
const ids = new Set(sends.map(u.msgId));
check(sends.length === 208 && recvs.length === 208 && recvs.every((x) => ids.has(u.msgId(x))) &&
  new Set(recvs.map(u.msgId)).size === 208, `all ${sends.length} messages of the 8 threads matched by id`);
u.done();
