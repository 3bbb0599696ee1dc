// A 4-rank job of mpi_kill.c in which one rank kills itself (SIGKILL) before MPI_Finalize,
// kept alive the way a launcher that keeps the other ranks would (Slurm's --no-kill, a
// resilient runtime). MPICH's Hydra tears the whole job down the moment a rank dies
// (docs/mpi.md, "Clocks"), so each rank runs under `sh -c 'prog; sleep'`: Hydra sees its
// child, the shell, live on. Once the job file appears (or a generous deadline passes) the
// launcher is torn down here: the survivors' MPI_Finalize cannot complete without the dead
// rank. Used by test_mpi_kill.js (direct gather) and test_mpi_kill_tree.js (gather tree).
'use strict';
const fs = require('fs');
const { spawn } = require('child_process');
const u = require('./mpiutil');

const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

// Resolves to whether `job` appeared; extraEnv goes to every rank (-genv).
async function runKilled(job, killRank, extraEnv) {
  const env = Object.assign({ JAGER_OUTPUT: job, JAGER_MPI_AGGREGATE: '1', JAGER_MPI_TIMEOUT_MS: '2000',
    JM_PRE: u.preload() }, extraEnv || {});
  const args = ['-n', '4'];
  for (const [k, v] of Object.entries(env)) args.push('-genv', k, v);
  args.push('sh', '-c', 'LD_PRELOAD="$JM_PRE" "$0" "$@"; sleep 300', u.bin('mpi_kill'), String(killRank));
  const child = spawn(u.E.MPIEXEC, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: Object.assign({}, u.E, { JAGER_QUIET: '1' }) });
  child.stderr.on('data', () => {});
  child.stdout.on('data', () => {});
  let exited = false;
  child.on('exit', () => { exited = true; });
  const tearDown = () => { try { process.kill(-child.pid, 'SIGKILL'); } catch (e) { /* gone */ } };
  process.on('exit', tearDown);

  // the job file is renamed into place once rank 0 has every part that came
  const t0 = Date.now();
  while (!fs.existsSync(job) && !exited && Date.now() - t0 < 180000) await sleep(200);
  const appeared = fs.existsSync(job);
  u.check(appeared, `the job file appears although rank ${killRank} was killed (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  await sleep(500); // the survivors also act on the acknowledgements; the file itself is complete at rename
  try { process.kill(-child.pid, 'SIGTERM'); } catch (e) { /* gone */ }
  for (let i = 0; i < 100 && !exited; i++) await sleep(100);
  tearDown();
  return appeared;
}

// Calls of one function by one rank in `jager dump` events.
const count = (evs, rank, f) => evs.filter((e) => e.rank === rank && e.type === 'mpi.call' && e.fields.func === f).length;

module.exports = { runKilled, count };
