// The MPI findings the aggregate test does not cover — late_receiver, mpi_time and
// small_messages — each on a program with the wait or the volume injected
// (tests/mpi/mpi_waits.c: latercv, stairs, small) with the right ranks and a time close to
// the injected sleeps, and none of them on the balanced program; and the per-rank MPI table
// of `jager summary` (min / mean / max over ranks per function, the rank that took longest)
// on a job with a known imbalance (stairs), in JSON and in text.
'use strict';
const u = require('./mpiutil');
const { check, E } = u;

const J = (args) => u.run(E.JAGER_BIN, args);
const waits = u.bin('mpi_waits');
const MS = 1e6;
const job = (mode, n) => {
  const out = u.tmp(`${mode}.jgr`);
  const r = u.mpiexec(n, { LD_PRELOAD: u.preload(), JAGER_MPI_AGGREGATE: '1', JAGER_OUTPUT: out }, waits, [mode]);
  check(r.code === 0, `mpi_waits ${mode} on ${n} ranks exits 0 (${r.code} ${r.err.slice(0, 300)})`);
  return out;
};
const hunt = (file, ...opts) => {
  const r = J(['hunt', '--format', 'json', ...opts, file]);
  if (r.code !== 0) throw new Error(`jager hunt ${file}: ${r.code} ${r.err}`);
  return JSON.parse(r.out).findings;
};
const summary = (file) => {
  const r = J(['summary', '--format', 'json', file]);
  if (r.code !== 0) throw new Error(`jager summary ${file}: ${r.code} ${r.err}`);
  return JSON.parse(r.out).mpi;
};
const ofKind = (f, k) => f.filter((x) => x.kind === k);
const titles = (f) => JSON.stringify(f.map((x) => x.title));
const fn = (s, name) => s.functions.find((x) => x.function === name);

// 1. late_receiver: rank 1 blocks in MPI_Ssend until rank 0, after 50 ms of work, posts the
//    receive: ~5 × 50 ms, waiting rank 1, late rank 0 (the other way round from late_sender)
{
  const f = hunt(job('latercv', 2));
  const lr = ofKind(f, 'late_receiver');
  const x = lr[0];
  check(lr.length === 1 && x.evidence.waiting_rank === 1 && x.evidence.late_rank === 0,
    `latercv: one late_receiver, rank 1 waiting for rank 0 (${titles(f)})`);
  if (x) {
    const w = x.evidence.wait_ns / MS;
    check(w > 200 && w < 300, `latercv: the wait is close to the injected 5 × 50 ms (${w.toFixed(1)} ms)`);
    check(x.evidence.messages === 5 && x.evidence.late_messages === 5, `latercv: 5 of 5 messages late (${x.evidence.late_messages}/${x.evidence.messages})`);
    check(/MPI_Ssend/.test(x.title) && x.location.function === 'main', `latercv: in MPI_Ssend, called from main (${x.location.function}: ${x.title})`);
    const work = x.evidence.late_rank_work_ns / MS;
    check(work > 45 && work < 80, `latercv: the late rank's work before each receive is named (${work.toFixed(1)} ms of the 50)`);
  }
  check(ofKind(f, 'late_sender').length === 0, `latercv: no late_sender (the receives found their message waiting)`);
}

// 2. stairs: rank k works 30·k ms before each of 5 MPI_Allreduce on 3 ranks: in the
//    allreduce rank 0 waits ~5 × 60 ms, rank 1 ~5 × 30 ms, rank 2 ~0
const stairs = job('stairs', 3);
{
  // the summary's table
  const s = summary(stairs);
  const ar = fn(s, 'MPI_Allreduce');
  check(ar && ar.calls === 15, `stairs summary: MPI_Allreduce 15 calls over 3 ranks (${ar && ar.calls})`);
  if (ar) {
    check(ar.max_rank === 0, `stairs summary: the rank that took longest in MPI_Allreduce is rank 0 (${ar.max_rank})`);
    check(ar.max_ns / MS > 270 && ar.max_ns / MS < 360, `stairs summary: max close to rank 0's 5 × 60 ms (${(ar.max_ns / MS).toFixed(1)} ms)`);
    check(ar.min_ns / MS < 30, `stairs summary: min is rank 2's, which never waits (${(ar.min_ns / MS).toFixed(1)} ms)`);
    check(ar.mean_ns / MS > 130 && ar.mean_ns / MS < 190, `stairs summary: mean close to (300 + 150 + 0) / 3 ms (${(ar.mean_ns / MS).toFixed(1)} ms)`);
  }
  const rk = s.ranks.map((x) => [x.rank, x.mpi_ns / MS]);
  // ordered as injected, rank 0 ~300 ms more than rank 2 (loaded cores wake sleepers late:
  // the absolute figures drift by tens of ms, the order and the spread do not)
  check(s.ranks.length === 3 && rk[0][1] > rk[1][1] && rk[1][1] > rk[2][1] && rk[0][1] - rk[2][1] > 200 &&
    rk[0][1] - rk[2][1] < 420,
    `stairs summary: per rank in MPI ~300, ~150, ~0 ms (${rk.map(([r, v]) => `rank ${r} ${v.toFixed(1)} ms`).join(', ')})`);
  // the same table in text: the MPI_Allreduce row names rank 0, and the per-rank line
  const t = J(['summary', stairs]);
  const row = t.out.split('\n').find((l) => /^\s+MPI_Allreduce\s/.test(l));
  // columns: function, calls, min, mean, max (each "<number> <unit>"), rank, bytes
  const m = row && row.trim().match(/^MPI_Allreduce\s+(\d+)\s+(\S+ \S+)\s+(\S+ \S+)\s+(\S+ \S+)\s+(\d+)\s+\S/);
  check(t.code === 0 && m && m[1] === '15' && m[5] === '0',
    `stairs summary text: MPI_Allreduce row, 15 calls, rank 0 took longest (${row && row.trim()}) ${t.err}`);
  check(/per rank: rank 0 \S+ ms in MPI/.test(t.out) && /rank 2 /.test(t.out), 'stairs summary text: the per-rank line names the 3 ranks');
}
{
  // mpi_time: (300 + 150) ms in MPI of ~3 × 300 ms of rank time: about half
  const f = hunt(stairs);
  const mt = ofKind(f, 'mpi_time');
  const x = mt[0];
  check(mt.length === 1, `stairs: one mpi_time finding (${titles(f)})`);
  if (x) {
    const ms = x.evidence.mpi_ns / MS, pct = x.evidence.mpi_pct;
    // MPI_Allreduce's share is the injected wait; the total adds the barriers' (ranks leave MPI_Init apart)
    const arMs = Number(((x.details[0] || '').match(/^MPI_Allreduce: ([\d.]+) ms/) || [])[1]);
    check(arMs > 400 && arMs < 560 && ms >= arMs, `stairs mpi_time: MPI_Allreduce's time close to the injected 5 × (60 + 30) ms (${arMs} ms of ${ms.toFixed(1)} ms in MPI)`);
    check(pct > 35 && pct < 65 && x.severity === 2, `stairs mpi_time: about half of the job's rank time, a problem (${pct.toFixed(1)} %, ${x.severity})`);
    check(x.evidence.ranks === 3 && /^MPI_Allreduce: /.test(x.details[0] || ''),
      `stairs mpi_time: 3 ranks, MPI_Allreduce first of the functions (${x.details[0]})`);
  }
  const cw = ofKind(f, 'collective_wait');
  check(cw.length === 1 && cw[0].evidence.late_rank === 2, `stairs: collective_wait names rank 2 late (${cw.map((y) => y.title)})`);
  check(ofKind(f, 'small_messages').length === 0, 'stairs: no small_messages (15 allreduces, no point-to-point)');
}

// 3. small_messages: rank 0 sends rank 1 2000 messages of 8 bytes from one MPI_Send
const smallFile = job('small', 3);
{
  const file = smallFile;
  // --min-pct 0: 2000 sends of 8 bytes cost ~2 ms on free cores (under 1 % of the run, the
  // default filter) and ~1 s on loaded ones; the finding's content is what is checked here
  const f = hunt(file, '--min-pct', '0');
  const sm = ofKind(f, 'small_messages');
  const x = sm[0];
  check(sm.length === 1 && x.evidence.rank === 0 && x.evidence.peer === 1,
    `small: one small_messages, rank 0 to rank 1 (${titles(f)})`);
  if (x) {
    check(x.evidence.messages === 2000 && x.evidence.mean_bytes === 8,
      `small: 2000 messages of 8 bytes (${x.evidence.messages}, ${x.evidence.mean_bytes} B)`);
    check(/MPI_Send/.test(x.details.concat([x.title]).join(' ')) || x.location.function === 'main',
      `small: at the send in main (${x.location.function})`);
    // its cost: the sends' time plus the receives' own time (their late-sender waits out)
    const s = summary(file);
    const send = fn(s, 'MPI_Send'), recv = fn(s, 'MPI_Recv');
    const cost = x.cost_ns !== undefined ? x.cost_ns : x.evidence.per_message_ns * 2000;
    check(send && recv && send.max_rank === 0 && recv.max_rank === 1 && send.calls === 2000 && recv.calls === 2000,
      `small summary: 2000 MPI_Send on rank 0, 2000 MPI_Recv on rank 1 (${send && send.calls}, ${recv && recv.calls})`);
    if (send && recv)
      check(cost >= send.max_ns * 0.999 && cost <= (send.max_ns + recv.max_ns) * 1.001,
        `small: cost between the sends' time and the sends' + receives' (${(send.max_ns / MS).toFixed(2)} ≤ ${(cost / MS).toFixed(2)} ≤ ${((send.max_ns + recv.max_ns) / MS).toFixed(2)} ms)`);
  }
}

// 3b. mpi_time by message size: the small run's MPI time is all in the <=1 KiB class (8-byte
//     messages, the barriers' 0 bytes); with 5 messages of 1 MiB the larger-than-64-KiB class
//     holds exactly the sends' and receives' time, the rest (barriers) the smallest
{
  const f = hunt(smallFile);
  const mt = ofKind(f, 'mpi_time')[0];
  check(mt && mt.evidence.small_msg_ns === mt.evidence.mpi_ns && mt.evidence.medium_msg_ns === 0 &&
    mt.evidence.large_msg_ns === 0 && /^by message size: <=1 KiB \S+ \S+, <=64 KiB 0 ns, larger 0 ns$/.test(mt.details.slice(-1)[0]),
    `small mpi_time: 100 % of the MPI time in the <=1 KiB class (${mt && JSON.stringify(mt.evidence)} ${mt && mt.details.slice(-1)[0]})`);
  const big = job('big', 2);
  const b = ofKind(hunt(big), 'mpi_time')[0];
  const s = summary(big), send = fn(s, 'MPI_Send'), recv = fn(s, 'MPI_Recv');
  const sr = send && recv ? send.max_ns + recv.max_ns : NaN;
  check(send && recv && send.calls === 5 && recv.calls === 5, `big: 5 MPI_Send and 5 MPI_Recv of 1 MiB (${send && send.calls}, ${recv && recv.calls})`);
  check(b && b.evidence.medium_msg_ns === 0 && Math.abs(b.evidence.large_msg_ns - sr) <= 0.01 * sr &&
    Math.abs(b.evidence.small_msg_ns + b.evidence.large_msg_ns - b.evidence.mpi_ns) <= 1,
    `big mpi_time: the >64 KiB class is the sends' + receives' ${(sr / MS).toFixed(2)} ms ` +
    `(${b && (b.evidence.large_msg_ns / MS).toFixed(2)} ms), <=64 KiB none, the rest <=1 KiB`);
}

// 3b'. a Waitall of several messages from a late rank, with eager Isends in it (PRK PIC's
//     exchange): one late_sender whose wait is counted once per Waitall (~5 × 50 ms, not
//     once per message, ~750 ms), 15 of 15 messages late, and no late_receiver
{
  const f = hunt(job('halo', 2));
  const ls = ofKind(f, 'late_sender');
  const w = ls[0] ? ls[0].evidence.wait_ns / MS : NaN;
  check(ls.length === 1 && ls[0].evidence.waiting_rank === 0 && ls[0].evidence.late_rank === 1 && w > 200 && w < 400 &&
    ls[0].evidence.late_messages === 15 && ls[0].evidence.messages === 15,
    `halo: one late_sender, rank 0 waits for rank 1 ${w.toFixed(1)} ms (5 × 50 injected), 15 of 15 late (${titles(f)})`);
  check(ofKind(f, 'late_receiver').length === 0, 'halo: no late_receiver (the Waitall waited for the late messages)');
}

// 3b''. sends that returned before their receives were posted (eager; rank 1 works 0.1 ms
//      before each of 3000 receives, PRK p2p's pipeline): the sender did not wait for the
//      receiver, so no late_receiver (it was named with the sends' own time before)
{
  const f = hunt(job('eager', 2));
  check(ofKind(f, 'late_receiver').length === 0, `eager: no late_receiver (${titles(f)})`);
}

// 3b'''. lateness that varies (ranks 0 and 1 take turns working 50 ms before a Sendrecv:
//       late at 3 and 2 of 5 exchanges): each direction is a note (severity 0, "varying"),
//       not a problem — a fixed imbalance makes the same rank late nearly every time
//       (balanced PRK Stencil on a VM: late at 75 of 101, reported as a problem before)
{
  const f = hunt(job('alternate', 2));
  const ls = ofKind(f, 'late_sender');
  const dir = (w) => ls.find((x) => x.evidence.waiting_rank === w);
  const a = dir(0), b = dir(1);
  check(ls.length === 2 && a && b && a.evidence.late_messages === 3 && b.evidence.late_messages === 2 &&
    a.evidence.messages === 5 && b.evidence.messages === 5,
    `alternate: a late_sender each way, late at 3 and 2 of 5 (${titles(f)})`);
  check(ls.every((x) => x.severity === 0 && /^late sender \(varying\):/.test(x.title) &&
    x.details.some((l) => /^a note, not a problem: rank \d was late at only [23] of 5/.test(l)) && /rerun/.test(x.hint)),
    `alternate: both are notes that say the lateness varied (${ls.map((x) => x.severity + ' ' + x.details.join(' | '))})`);
  const w = a ? a.evidence.wait_ns / MS : NaN;
  check(w > 120 && w < 260, `alternate: rank 0's wait is its 3 × 50 ms (${w.toFixed(1)} ms)`);
  // the Sendrecv's eager send half did not wait: its receive half did (counted once, as above)
  check(ofKind(f, 'late_receiver').length === 0, `alternate: no late_receiver for the Sendrecvs (${titles(f)})`);
}

// 3b''''. a collective's own completion order is not an imbalance: rank 1 leaves an
//        MPI_Reduce (root 1, a user op sleeping 40 ms there) 40 ms after rank 0, then works
//        15 ms more before a barrier; rank 0 waits ~55 ms per barrier, of which only the
//        15 ms of work counts (PRK Reduce: the sender left late, the root "waited")
{
  const f = hunt(job('skew', 2));
  const cw = ofKind(f, 'collective_wait');
  const x = cw.find((y) => /MPI_Barrier/.test(y.title));
  const w = x ? x.evidence.wait_ns / MS : NaN, sk = x ? x.evidence.exit_skew_ns / MS : NaN;
  check(x && x.evidence.late_rank === 1 && x.severity > 0, `skew: a collective_wait at MPI_Barrier naming rank 1 (${titles(f)})`);
  check(w > 50 && w < 150, `skew: its wait is the 5 × 15 ms of extra work, not 5 × 55 ms (${w.toFixed(1)} ms)`);
  check(sk > 170 && sk < 300 && x.details.some((l) => /^not counted: .* left the previous collective here later/.test(l)),
    `skew: the 5 × 40 ms of the Reduce's completion order is named and not counted (${sk.toFixed(1)} ms)`);
  check(cw.every((y) => !/MPI_Reduce/.test(y.title)), `skew: no wait at the Reduce (${titles(f)})`);
}

// 3b'''''. a collective_wait per call site: two MPI_Allreduce calls in one loop, the
//         second after the imbalance — the finding is at the second call's line (HPCCG's
//         ddot() Allreduce was shown at its set-up's Allreduce in make_local_matrix())
{
  const src = require('fs').readFileSync(require('path').join(__dirname, 'mpi_waits.c'), 'utf8').split('\n');
  const line = src.findIndex((l) => /twosites: the last rank late/.test(l)) + 1;
  const f = hunt(job('twosites', 3));
  const cw = ofKind(f, 'collective_wait');
  const x = cw[0];
  const w = x ? x.evidence.wait_ns / MS : NaN;
  check(cw.length === 1 && x.evidence.late_rank === 2 && x.location.function === 'main' && x.location.line === line,
    `twosites: one collective_wait, rank 2 late, at mpi_waits.c:${line} (${titles(f)} at ${x && x.location.file}:${x && x.location.line})`);
  check(w > 350 && w < 700, `twosites: the others' 2 × 5 × 50 ms (${w.toFixed(1)} ms)`);
}

// 3c. the computation that made the late rank late, by its spans: mpi_waits_jager wraps each
//     stretch of work in a span "solve_block" after a 1 ms "pack_halo"; late_sender,
//     late_receiver and collective_wait name solve_block with its time per late call (the
//     injected 50, 50, 60 ms), pack_halo (below a tenth) not; the plain program names none
{
  const jobJ = (mode, n) => {
    const out = u.tmp(`j-${mode}.jgr`);
    const r = u.mpiexec(n, { LD_PRELOAD: u.preload(), JAGER_MPI_AGGREGATE: '1', JAGER_OUTPUT: out }, u.bin('mpi_waits_jager'), [mode]);
    check(r.code === 0, `mpi_waits_jager ${mode} on ${n} ranks exits 0 (${r.code} ${r.err.slice(0, 300)})`);
    return out;
  };
  for (const [mode, n, kind, who, ms] of [['late', 2, 'late_sender', 'rank 1', 50], ['latercv', 2, 'late_receiver', 'rank 0', 50],
    ['imbalance', 3, 'collective_wait', 'rank 2', 60]]) {
    const x = ofKind(hunt(jobJ(mode, n)), kind)[0];
    const re = new RegExp(`^${who}'s computation before each late call \\(self time of its spans\\): solve_block ([\\d.]+) ms$`);
    const d = x && x.details.find((l) => /computation before each late call/.test(l));
    const m = d && d.match(re);
    check(m && Number(m[1]) > ms * 0.9 && Number(m[1]) < ms * 1.6 &&
      Math.abs(x.evidence.late_rank_top_site_ns / MS - Number(m[1])) < 0.01,
      `${mode}: ${kind} names ${who}'s solve_block, ~${ms} ms per late call, pack_halo left out (${d})`);
  }
  // more calls, or as many calls each longer: the finding says which (HPCCG: an injected
  // second HPC_sparsemv on rank 1 was 299 calls against 150; a balanced run's rank 0 had
  // 150 calls each 24 % slower, where "rebalance the decomposition" alone misled)
  {
    const more = ofKind(hunt(jobJ('morecalls', 3)), 'collective_wait')[0];
    const d = more && more.details.find((l) => /^rank 2 called solve_block \d+ times/.test(l));
    check(d && /called solve_block 30 times, the other ranks 5 on average: more work given to it/.test(d) &&
      /rebalance the decomposition/.test(more.hint), `morecalls: rank 2 called solve_block 30 times against 5 (${d})`);
    const same = ofKind(hunt(jobJ('imbalance', 3)), 'collective_wait')[0];
    const e = same && same.details.find((l) => /as often as the others/.test(l));
    const m = e && /as often as the others \(5 times\) but each call took ([\d.]+) ms against ([\d.]+) ms/.exec(e);
    check(m && Number(m[1]) > 55 && Number(m[2]) < 30 && /the rank ran slower/.test(same.hint),
      `imbalance: as many calls of solve_block, each ~60 ms against ~10 ms, and a hint that names both causes (${e} | ${same && same.hint})`);
  }
  const plain = ofKind(hunt(job('late', 2)), 'late_sender')[0];
  check(plain && !plain.details.some((l) => /computation before/.test(l)) && plain.evidence.late_rank_top_site_ns === undefined,
    'late (no spans): the late_sender names no computation');
}

// 3d. per-rank region findings in a job (mpi_regions.c): shares are of the time the spans
//     cover when the outermost span is still open at MPI_Finalize (HPCCG under
//     -finstrument-functions: every per-rank finding was "100% of the run", a 0.9 ms timer
//     tail included), and a function whose slow calls are its own MPI_Allreduce waiting for
//     another rank is the collective_wait's, not a slow_region of the waiting rank
{
  const out = u.tmp('regions.jgr');
  const r = u.mpiexec(2, { LD_PRELOAD: u.preload(), JAGER_MPI_AGGREGATE: '1', JAGER_OUTPUT: out }, u.bin('mpi_regions'), []);
  check(r.code === 0, `mpi_regions on 2 ranks exits 0 (${r.code} ${r.err.slice(0, 300)})`);
  const f = hunt(out);
  const slow = (rank, fn) => f.filter((x) => x.kind === 'slow_region' && x.title.startsWith(`rank ${rank}: slow calls in \`${fn}\``));
  check(f.every((x) => !/tiny_op/.test(x.title)), `regions: no finding on tiny_op's 0.6 ms tail (${titles(f)})`);
  check(slow(0, 'exchange_step').length === 0, `regions: rank 0's exchange_step waits are no slow_region (${titles(f)})`);
  const cw = ofKind(f, 'collective_wait');
  check(cw.length === 1 && cw[0].evidence.late_rank === 1 && cw[0].location.function === 'exchange_step',
    `regions: the collective_wait in exchange_step names rank 1 (${titles(f)})`);
}

// 4. balanced (100 ms of work per step on every rank, a ring exchange and an allreduce):
//    none of the three
{
  const b = job('balanced', 3);
  const f = hunt(b);
  check(['late_receiver', 'small_messages'].every((k) => ofKind(f, k).length === 0),
    `balanced: no late_receiver or small_messages (${titles(f)})`);
  // the start-up barrier (ranks leave MPI_Init one by one) is not counted as MPI time; on a
  // loaded host the ranks still wake from their sleeps at different times, so mpi_time may
  // note 10-15 % here, never as a problem
  check(ofKind(f, 'mpi_time').every((x) => x.severity < 2 && x.evidence.mpi_pct < 30),
    `balanced: no mpi_time problem (${ofKind(f, 'mpi_time').map((x) => x.evidence.mpi_pct.toFixed(1) + ' %')})`);
  const ar = fn(summary(b), 'MPI_Allreduce');
  check(ar && ar.calls === 15 && ar.max_ns - ar.min_ns < 100 * MS,
    `balanced summary: MPI_Allreduce max − min over ranks small (${ar && ((ar.max_ns - ar.min_ns) / MS).toFixed(1)} ms)`);
}
u.done();
