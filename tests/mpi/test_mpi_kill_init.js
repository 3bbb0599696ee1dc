// A rank that dies before MPI_Init (mpi_kill_jager 2 init: rank 2 kills itself 2 s after
// start, while the others wait in MPI_Init for it). Nothing hangs: MPICH's Hydra tears the
// job down when the rank dies (bounded here by the launch timeout, 120 s, with a finish
// well inside it). The files stay apart: each rank's JAGER_OUTPUT run.%r.jgr was named at
// jager_init from PMI_RANK, before any MPI call, so there are exactly 4, each with its own
// mpi.rank (from PMI_RANK) and the span it recorded before MPI_Init — and no MPI_Init,
// which never returned.
'use strict';
const fs = require('fs');
const path = require('path');
const u = require('./mpiutil');
const { check, E } = u;

const dir = u.tmp('out');
fs.mkdirSync(dir);
const t0 = Date.now();
const r = u.mpiexec(4, { JAGER_PLUGINS: 'mpi', JAGER_PLUGIN_PATH: path.dirname(E.LIBJAGER_MPI),
  JAGER_OUTPUT: path.join(dir, 'run.%r.jgr') }, u.bin('mpi_kill_jager'), ['2', 'init'], 120000);
const secs = (Date.now() - t0) / 1000;
check(r.signal === null && r.code !== 0 && secs < 60,
  `mpiexec ends by itself once rank 2 dies before MPI_Init (exit ${r.code}, signal ${r.signal}, ${secs.toFixed(1)} s)`);
const files = fs.readdirSync(dir).sort();
check(JSON.stringify(files) === '["run.0.jgr","run.1.jgr","run.2.jgr","run.3.jgr"]',
  `one file per rank, named by the launcher's rank before MPI_Init (${files})`);
for (let k = 0; k < 4; k++) {
  const f = path.join(dir, `run.${k}.jgr`);
  if (!fs.existsSync(f)) continue;
  const inf = u.run(E.JAGER_BIN, ['info', f]);
  const rank = (inf.out.match(/^ {2}"mpi\.rank": "(\d+)"$/m) || [])[1];
  const from = (inf.out.match(/^ {2}"mpi\.rank_from": "(\w+)"$/m) || [])[1];
  check(rank === String(k) && from === 'PMI_RANK' && /status: truncated/.test(inf.out),
    `run.${k}.jgr: metadata mpi.rank ${rank} from ${from}, cut short (killed)`);
  const d = u.run(E.JAGER_BIN, ['dump', f]).out.split('\n').filter((l) => l).map((l) => JSON.parse(l));
  const spans = d.filter((e) => e.type === 'span' && e.site === 'before_init').length;
  const inits = d.filter((e) => e.type === 'mpi.call').length;
  check(spans === 1 && inits === 0, `run.${k}.jgr: its before_init span (${spans}), no MPI call recorded (${inits})`);
}
u.done();
