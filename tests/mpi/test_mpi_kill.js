// A rank killed by SIGKILL before MPI_Finalize (mpi_kill.c, rank 2 of 4): the other ranks
// finish, the job file holds their data and names rank 2 missing, rank 2's own file keeps
// what it recorded before it died, and `jager merge` puts it back as a rank cut short.
//
// The launch is killed_job.js's (each rank under `sh -c 'prog; sleep'`, so Hydra keeps the
// survivors); the gather here is the direct one (every rank to rank 0).
'use strict';
const fs = require('fs');
const u = require('./mpiutil');
const { runKilled, count } = require('./killed_job');
const { check, E } = u;

const J = (args) => u.run(E.JAGER_BIN, args);

(async () => {
  const job = u.tmp('run.jgr');
  if (!(await runKilled(job, 2))) u.done();

  // the job file: ranks 0, 1, 3 with all their calls, rank 2 named missing
  const inf = J(['info', job]);
  check(/missing rank\(s\): 2\b/.test(inf.out), `jager info names rank 2 missing (${(inf.out.match(/missing rank.*/) || [''])[0]})`);
  const dj = J(['dump', job]).out.trim().split('\n').map((l) => JSON.parse(l));
  const ranks = [...new Set(dj.map((e) => e.rank))].sort();
  check(JSON.stringify(ranks) === '[0,1,3]', `the job file holds ranks 0, 1, 3 (${ranks})`);
  const exact = [0, 1, 3].every((k) => count(dj, k, 'MPI_Init') === 1 && count(dj, k, 'MPI_Allreduce') === 5 &&
    count(dj, k, 'MPI_Sendrecv') === 3 && count(dj, k, 'MPI_Finalize') === 1);
  check(exact, 'each survivor: exactly 1 MPI_Init, 5 MPI_Allreduce, 3 MPI_Sendrecv, 1 MPI_Finalize');
  const sum = JSON.parse(J(['summary', '--format', 'json', job]).out);
  check(JSON.stringify(sum.mpi.missing_ranks) === '[2]' && sum.mpi.messages === 9,
    `summary: missing_ranks [2], the survivors' 9 messages matched (${JSON.stringify(sum.mpi.missing_ranks)}, ${sum.mpi.messages})`);
  const hunt = (files) => JSON.parse(J(['hunt', '--format', 'json', ...files]).out).findings;
  const inc = hunt([job]).filter((f) => f.kind === 'job_incomplete');
  check(inc.length === 1 && inc[0].evidence.first_missing_rank === 2 && inc[0].evidence.missing_ranks === 1 &&
    inc[0].evidence.ranks === 3 && inc[0].rank === 1, `hunt: one job_incomplete warning first, rank 2 missing (${inc.map((f) => f.title)})`);
  const html = u.tmp('run.html');
  J(['report', job, '-o', html]);
  const data = JSON.parse(fs.readFileSync(html, 'utf8').match(/<script type="application\/json"[^>]*>([\s\S]*?)<\/script>/)[1]);
  check(data.findings.some((f) => f.kind === 'job_incomplete' && /rank\(s\) 2 of 4 missing/.test(f.title)),
    'the report says rank 2 of 4 is missing');

  const tj = u.tmp('run.trace.json');
  J(['export', '--format', 'chrome', job, '-o', tj]);
  const tr = JSON.parse(fs.readFileSync(tj, 'utf8'));
  const pids = [...new Set(tr.traceEvents.filter((e) => e.ph === 'M' && e.name === 'process_name').map((e) => e.pid))];
  check(tr.otherData['mpi.missing_ranks'] === '2' && JSON.stringify(pids) === '[0,1,3]',
    `the Chrome export: processes 0, 1, 3, otherData mpi.missing_ranks "2" (${tr.otherData['mpi.missing_ranks']})`);

  // rank 2's own file: never acknowledged, so kept, cut short, with what it recorded
  const own = `${job}.2`;
  check(fs.existsSync(own), 'rank 2\'s own file is left (no gather acknowledged it)');
  const oi = J(['info', own]);
  check(/status: truncated/.test(oi.out), 'rank 2\'s file ends without its END block (killed)');
  const od = J(['dump', own]).out.trim().split('\n').filter((l) => l).map((l) => Object.assign({ rank: 2 }, JSON.parse(l)));
  check(count(od, 2, 'MPI_Init') === 1 && count(od, 2, 'MPI_Allreduce') === 5 && count(od, 2, 'MPI_Finalize') === 0,
    `rank 2's file holds its MPI_Init and 5 MPI_Allreduce, written before the kill (${count(od, 2, 'MPI_Allreduce')})`);

  // jager merge puts it back: 4 ranks, rank 2 cut short
  const all = u.tmp('all.jgr');
  const m = J(['merge', job, own, '-o', all]);
  check(m.code === 3 && /4 rank\(s\)/.test(m.out), `jager merge JOB run.jgr.2: 4 ranks, exit 3 (a part cut short) (${m.code} ${m.out.trim()})`);
  const inc2 = hunt([all]).filter((f) => f.kind === 'job_incomplete');
  check(inc2.length === 1 && inc2[0].evidence.missing_ranks === 0 && inc2[0].evidence.cut_short_ranks === 1 &&
    /rank\(s\) 2 is cut short/.test(inc2[0].title), `hunt of the merge: rank 2's recording cut short, none missing (${inc2.map((f) => f.title)})`);
  const s2 = JSON.parse(J(['summary', '--format', 'json', all]).out);
  check(s2.parts.length === 4 && s2.mpi.missing_ranks.length === 0, 'the merged job: 4 parts, none missing');
  u.done();
})().catch((e) => {
  console.log('FAIL ' + (e.stack || e));
  process.exit(1);
});
