// The ways in: libjager-mpi.so linked before -lmpi (with libjager, and without it),
// JAGER_PLUGINS=mpi without preload (steps aside, says why), a program without MPI (says
// so once, runs on), JAGER_DISABLE=1, and TRACEPARENT continued by the job's trace.
'use strict';
const fs = require('fs');
const u = require('./mpiutil');
const { check } = u;

const want = { MPI_Init: 1, MPI_Sendrecv: 10, MPI_Allreduce: 3, MPI_Barrier: 1, MPI_Finalize: 1 };
function ringOk(prefix, what) {
  for (let k = 0; k < 2; k++) {
    const f = u.tmp(`${prefix}.${k}.jgr`);
    if (!check(fs.existsSync(f), `${what}: rank ${k} wrote its file`)) continue;
    const evs = u.dump(f), got = {};
    for (const c of u.calls(evs)) got[c.func] = (got[c.func] || 0) + 1;
    check(JSON.stringify(got) === JSON.stringify(want), `${what}: rank ${k} recorded exactly ${JSON.stringify(want)}` +
      ` (got ${JSON.stringify(got)})`);
    const { sends, recvs } = u.messages(k, evs);
    check(sends.length === 10 && recvs.length === 10 && sends.every((m) => m.to === 1 - k && m.bytes === 64) &&
      recvs.every((m) => m.from === 1 - k && m.bytes === 64), `${what}: rank ${k}: 10 sends and 10 receives of 64 bytes`);
  }
}

// 1. linked before -lmpi, with libjager linked too: nothing else set
let r = u.mpiexec(2, { JAGER_OUTPUT: u.tmp('linked.%r.jgr') }, u.bin('mpi_ring_linked'));
check(r.code === 0, `linked (-ljager-mpi -ljager -lmpi): exit 0 ${r.err.slice(0, 200)}`);
ringOk('linked', 'linked');
// 2. linked before -lmpi, libjager not linked: the wrapper opens it at MPI_Init
r = u.mpiexec(2, { JAGER_OUTPUT: u.tmp('only.%r.jgr') }, u.bin('mpi_ring_linked_only'));
check(r.code === 0, `linked without libjager: exit 0 ${r.err.slice(0, 200)}`);
ringOk('only', 'linked without libjager');

// 3. JAGER_PLUGINS=mpi, jager_init() in the program, nothing preloaded or linked: the
//    plugin points the loaded objects' MPI slots at its wrappers (GOT patching)
r = u.mpiexec(2, { JAGER_OUTPUT: u.tmp('plugins.%p.jgr'), JAGER_PLUGINS: 'mpi', JAGER_QUIET: '0' }, u.bin('mpi_ring_jager'));
check(r.code === 0, `JAGER_PLUGINS=mpi without preload: exit 0 ${r.err.slice(0, 200)}`);
{
  const files = fs.readdirSync(u.dir).filter((f) => f.startsWith('plugins.'));
  check(files.length === 2, `JAGER_PLUGINS=mpi without preload: one file per rank (%p) (${files})`);
  const ranksSeen = new Set();
  for (const f of files) {
    const evs = u.dump(u.tmp(f)), got = {};
    for (const c of u.calls(evs)) got[c.func] = (got[c.func] || 0) + 1;
    ranksSeen.add(u.info(u.tmp(f)).meta['mpi.rank']);
    check(JSON.stringify(got) === JSON.stringify(want), `JAGER_PLUGINS=mpi without preload: ${f} recorded exactly the calls`);
    const d = evs.filter((e) => e.type === 'diag' && e.source === 'mpi');
    check(d.length === 1 && d[0].severity === 9 && /GOT patching/.test(d[0].text), 'it says how it intercepts (INFO, once)');
  }
  check(ranksSeen.size === 2, 'JAGER_PLUGINS=mpi without preload: both ranks recorded');
}
// 3b. the same with patching off: one warning that says how to preload or link, no events
r = u.mpiexec(1, { JAGER_OUTPUT: u.tmp('nopatch.jgr'), JAGER_PLUGINS: 'mpi', JAGER_MPI_NO_PATCH: '1', JAGER_QUIET: '0' },
  u.bin('mpi_ring_jager'));
check(r.code === 0, 'JAGER_MPI_NO_PATCH=1: the program runs on (exit 0)');
{
  const evs = u.dump(u.tmp('nopatch.jgr'));
  const d = evs.filter((e) => e.type === 'diag' && e.source === 'mpi');
  check(d.length === 2 && d[0].severity === 13 && /preload it \(LD_PRELOAD=libjager.so:libjager-mpi.so\) or link/.test(d[0].text) &&
    /stepped aside/.test(d[1].text), `JAGER_MPI_NO_PATCH=1: says how to preload or link, steps aside`);
  check(u.calls(evs).length === 0, 'JAGER_MPI_NO_PATCH=1: no mpi.call events');
  check((r.err.match(/do not reach the plugin's wrappers/g) || []).length === 1, 'the warning is printed once');
}

// 3c. a rank that stops recording before MPI_Finalize: the others' finalize clock exchange
//     is bounded by JAGER_MPI_TIMEOUT_MS; they finish and mark what they could not measure
{
  const t0 = Date.now();
  r = u.mpiexec(4, { JAGER_OUTPUT: u.tmp('stop.%p.jgr'), JAGER_PLUGINS: 'mpi', RING_STOP_RANK: '1',
    JAGER_MPI_TIMEOUT_MS: '1500' }, u.bin('mpi_ring_jager'), [], 60000);
  const secs = (Date.now() - t0) / 1000;
  check(r.code === 0 && secs < 30, `a rank that stops early: the job finishes (exit ${r.code}, ${secs.toFixed(1)} s)`);
  const files = fs.readdirSync(u.dir).filter((f) => f.startsWith('stop.'));
  const byRank = {};
  for (const f of files) byRank[u.info(u.tmp(f)).meta['mpi.rank']] = u.dump(u.tmp(f));
  const fin = (k) => (byRank[k] || []).filter((e) => e.type === 'mpi.clock' && e.fields.phase === 1).map((e) => e.fields);
  check(files.length === 4 && fin(1).length === 0, 'the stopped rank measured nothing at MPI_Finalize');
  check(fin(0).length === 1 && fin(0)[0].ok && fin(2).length === 1 && fin(2)[0].ok,
    'ranks 0 and 2 (not below rank 1 in the tree) measured their finalize offsets');
  check(fin(3).length === 1 && !fin(3)[0].ok, 'rank 3 (measured through rank 1) marks its finalize offset unknown');
  check([0, 2, 3].every((k) => u.calls(byRank[k]).filter((c) => c.func === 'MPI_Finalize').length === 1),
    'ranks 0, 2, 3 recorded their MPI_Finalize');
  const f0 = files.find((f) => u.info(u.tmp(f)).meta['mpi.rank'] === '0');
  const m0 = f0 ? u.info(u.tmp(f0)).meta : {};
  const warn = (byRank[0] || []).filter((e) => e.type === 'diag' && /did not reach MPI_Finalize/.test(e.text));
  check(m0['mpi.missing_ranks'] === '1' && warn.length === 1 && /: 1 /.test(warn[0].text),
    `rank 0 names the missing rank (mpi.missing_ranks "${m0['mpi.missing_ranks']}", one warning)`);
}

// 4. a program without MPI
r = u.run(u.bin('mpi_no_mpi'), [], { JAGER_PLUGINS: 'mpi', JAGER_OUTPUT: u.tmp('nompi.jgr'), JAGER_QUIET: '0',
  JAGER_PLUGIN_PATH: require('path').dirname(u.E.LIBJAGER_MPI) });
check(r.code === 0 && r.out === 'ran\n', 'a program without MPI runs on with JAGER_PLUGINS=mpi');
{
  const evs = u.dump(u.tmp('nompi.jgr'));
  const d = evs.filter((e) => e.type === 'diag' && e.source === 'mpi');
  check(d.length === 2 && d[0].severity === 9 && /does not use MPI/.test(d[0].text) && /stepped aside/.test(d[1].text),
    'a program without MPI: the plugin says so once (INFO) and steps aside');
  check(evs.filter((e) => e.type === 'span').length === 1, "a program without MPI: the program's own span is recorded");
  check((r.err.match(/does not use MPI/g) || []).length === 1, 'the message is printed once');
}

// 5. JAGER_DISABLE=1 with the preload: no file, the job runs
r = u.mpiexec(2, { LD_PRELOAD: u.preload(), JAGER_OUTPUT: u.tmp('off.%r.jgr'), JAGER_DISABLE: '1' }, u.bin('mpi_ring'));
check(r.code === 0 && !fs.existsSync(u.tmp('off.0.jgr')) && !fs.existsSync(u.tmp('off.%r.jgr')),
  'JAGER_DISABLE=1: the job runs, nothing is written');

// 6. TRACEPARENT: the job continues the caller's trace
const tid = '4bf92f3577b34da6a3ce929d0e0e4736', sid = '00f067aa0ba902b7';
r = u.mpiexec(2, { LD_PRELOAD: u.preload(), JAGER_OUTPUT: u.tmp('tp.%r.jgr'), TRACEPARENT: `00-${tid}-${sid}-01` },
  u.bin('mpi_ring'));
check(r.code === 0, 'TRACEPARENT job: exit 0');
for (let k = 0; k < 2; k++) {
  const m = u.info(u.tmp(`tp.${k}.jgr`)).meta;
  check(m['mpi.trace_id'] === tid && m['mpi.parent_span_id'] === sid,
    `rank ${k}: the job's trace is the TRACEPARENT's (${m['mpi.trace_id']}), its root's parent the caller's span`);
}
ringOk('tp', 'preloaded');
u.done();
