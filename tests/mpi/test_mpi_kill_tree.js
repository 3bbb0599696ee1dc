// A rank killed by SIGKILL before MPI_Finalize while the job is gathered through node
// leaders (the gather tree; nodes faked with JAGER_MPI_TEST_NODE_SIZE=2: {0,1} {2,3}):
//  - a node's other rank (3) dies: its leader (2) bundles itself alone, the job file holds
//    ranks 0, 1, 2 and names 3 missing; 2's file is removed after the acknowledgement that
//    reaches it through its leader, 3's own file keeps what it recorded;
//  - a leader (2) dies: it takes its node with it (docs/mpi.md, "The gather tree"): the job
//    file holds ranks 0 and 1 and names 2 and 3 missing; rank 3, which finished, keeps its
//    whole file, and `jager merge` of the job and both kept files gives all 4 ranks.
'use strict';
const fs = require('fs');
const u = require('./mpiutil');
const { runKilled, count } = require('./killed_job');
const { check, E } = u;

const J = (args) => u.run(E.JAGER_BIN, args);
const tree = { JAGER_MPI_TEST_NODE_SIZE: '2' };
const survivorExact = (evs, k) => count(evs, k, 'MPI_Init') === 1 && count(evs, k, 'MPI_Allreduce') === 5 &&
  count(evs, k, 'MPI_Sendrecv') === 3 && count(evs, k, 'MPI_Finalize') === 1;
const ranksOf = (evs) => [...new Set(evs.map((e) => e.rank))].sort();
// `jager dump` of a file cut short exits non-zero after printing every whole event
const dumpAny = (file, rank) => J(['dump', file]).out.split('\n').filter((l) => l).map((l) => Object.assign({ rank }, JSON.parse(l)));
const missingOf = (job) => (J(['info', job]).out.match(/missing rank\(s\): ([0-9,]+)/) || ['', ''])[1].trim();

async function nodeRankDies() {
  const job = u.tmp('member.jgr');
  if (!(await runKilled(job, 3, tree))) return;
  check(missingOf(job) === '3', `a node rank died: jager info names rank 3 missing (${missingOf(job)})`);
  const dj = u.dump(job);
  check(JSON.stringify(ranksOf(dj)) === '[0,1,2]', `the job file holds ranks 0, 1, 2 (${ranksOf(dj)})`);
  check([0, 1, 2].every((k) => survivorExact(dj, k)), 'each survivor: exactly 1 MPI_Init, 5 MPI_Allreduce, 3 MPI_Sendrecv, 1 MPI_Finalize');
  const meta = u.info(job).meta;
  check(!fs.existsSync(`${job}.2`), `rank 2 (the leader, acknowledged by rank 0) removed its file (leader ${meta['mpi.node_leader']})`);
  check(!fs.existsSync(`${job}.1`), 'rank 1 (rank 0\'s node) removed its file');
  const own = `${job}.3`;
  check(fs.existsSync(own) && /status: truncated/.test(J(['info', own]).out), 'rank 3 keeps its own file, cut short by the kill');
  const od = fs.existsSync(own) ? dumpAny(own, 3) : [];
  check(count(od, 3, 'MPI_Allreduce') === 5 && count(od, 3, 'MPI_Finalize') === 0,
    `rank 3's file holds the 5 MPI_Allreduce it made before the kill (${count(od, 3, 'MPI_Allreduce')})`);
}

async function leaderDies() {
  const job = u.tmp('leader.jgr');
  if (!(await runKilled(job, 2, tree))) return;
  check(missingOf(job) === '2,3', `a leader died: its node (ranks 2 and 3) is named missing (${missingOf(job)})`);
  const dj = u.dump(job);
  check(JSON.stringify(ranksOf(dj)) === '[0,1]', `the job file holds ranks 0 and 1 (${ranksOf(dj)})`);
  check([0, 1].every((k) => survivorExact(dj, k)), 'ranks 0 and 1: every call');
  const own3 = `${job}.3`, own2 = `${job}.2`;
  check(fs.existsSync(own3) && /status: complete/.test(J(['info', own3]).out),
    'rank 3, whose leader died, keeps its whole file (never acknowledged)');
  const o3 = fs.existsSync(own3) ? dumpAny(own3, 3) : [];
  check(survivorExact(o3, 3), 'rank 3\'s own file: every call, MPI_Finalize included');
  check(fs.existsSync(own2) && /status: truncated/.test(J(['info', own2]).out), 'rank 2 keeps its own file, cut short by the kill');
  const all = u.tmp('leader-all.jgr');
  const m = J(['merge', job, own2, own3, '-o', all]);
  check(m.code === 3 && /4 rank\(s\)/.test(m.out), `jager merge JOB .2 .3: 4 ranks, exit 3 (rank 2 cut short) (${m.code} ${m.out.trim()})`);
  const s = JSON.parse(J(['summary', '--format', 'json', all]).out);
  check(s.parts.length === 4 && s.mpi.missing_ranks.length === 0, `the merged job: 4 parts, none missing (${s.parts.length})`);
}

(async () => {
  await nodeRankDies();
  await leaderDies();
  u.done();
})().catch((e) => {
  console.log('FAIL ' + (e.stack || e));
  process.exit(1);
});
