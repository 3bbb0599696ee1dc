// The linear drift correction (docs/mpi.md, "Clocks when reading"): rank 1 of mpi_waits
// `late` records its MPI_Finalize offset 20 ms off its MPI_Init one (JAGER_MPI_TEST_DRIFT_NS,
// as a clock drifting from rank 0's would). On the job's clock (the CSV export) its calls
// between the two measurements move by an amount that grows linearly from the first call
// to the last, by nearly the 20 ms —
// not a step, not a constant — and with no drift recorded they move by a constant.
'use strict';
const fs = require('fs');
const path = require('path');
const u = require('./mpiutil');
const { check, E, csv } = u;

const J = (args) => u.run(E.JAGER_BIN, args);
const DRIFT = -20e6;

// rank 1's mpi.call times: its own clock (dump) and the job's (CSV), in call order
function shifts(tag, extra) {
  const job = u.tmp(`${tag}.jgr`);
  const r = u.mpiexec(2, Object.assign({ LD_PRELOAD: u.preload(), JAGER_MPI_AGGREGATE: '1', JAGER_OUTPUT: job }, extra),
    u.bin('mpi_waits'), ['late']);
  if (!check(r.code === 0 && fs.existsSync(job), `${tag}: the job file (${r.err.slice(0, 200)})`)) return null;
  // the calls between the two measurements (the end of MPI_Init, inside MPI_Finalize)
  const between = (f) => f !== 'MPI_Init' && f !== 'MPI_Finalize';
  const own = u.dump(job).filter((e) => e.rank === 1 && e.type === 'mpi.call' && between(e.fields.func))
    .map((e) => BigInt(e.time_ns));
  const dir = u.tmp(`${tag}.csv`);
  const x = J(['export', '--format', 'csv', job, '-o', dir]);
  if (!check(x.code === 0, `${tag}: export csv (${x.err.trim()})`)) return null;
  const onJob = csv(path.join(dir, 'mpi.call.csv')).filter((c) => c.rank === '1' && between(c.func)).map((c) => BigInt(c.time_ns));
  own.sort((a, b) => (a < b ? -1 : a > b)); onJob.sort((a, b) => (a < b ? -1 : a > b));
  if (!check(own.length >= 5 && own.length === onJob.length, `${tag}: rank 1's ${own.length} calls in both`)) return null;
  return own.map((t, i) => ({ t: Number(t - own[0]), d: Number(onJob[i] - t) }));
}

const s = shifts('drift', { JAGER_MPI_TEST_DRIFT_NS: String(DRIFT) });
if (s) {
  const first = s[0], last = s[s.length - 1];
  const grown = last.d - first.d;
  // the calls cover most of the time between the two measurements, never more
  check(grown / DRIFT > 0.7 && grown / DRIFT <= 1.0,
    `drift: rank 1's shift grows by ${(grown / 1e6).toFixed(2)} ms from its first call to its last (${DRIFT / 1e6} ms between the two measurements)`);
  const worst = Math.max(...s.map((p) => Math.abs(p.d - (first.d + (grown * p.t) / last.t))));
  check(worst < 100e3, `drift: every call's shift on the line between the first and the last (worst ${(worst / 1e3).toFixed(1)} us off)`);
}
const c = shifts('nodrift', {});
if (c) {
  const spread = Math.max(...c.map((p) => p.d)) - Math.min(...c.map((p) => p.d));
  check(spread < 1e6, `no drift recorded: one constant shift for every call (spread ${(spread / 1e3).toFixed(1)} us)`);
}
u.done();
