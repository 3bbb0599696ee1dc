// `jager hunt` load_imbalance: threads waiting at a barrier for the slowest one. Present with
// the right culprit and amounts on a skewed run and on the stencil example's serial
// residual; absent on a balanced run.
'use strict';
const { check, done, jagerJson, recordBarrier, recordExample } = require('./tutil');

const imbalance = (h) => h.findings.filter((f) => f.kind === 'load_imbalance');
const near = (x, want, tol) => Math.abs(x - want) <= tol * want;

// Skewed: "slow-worker" works 6 ms a round, "fast-worker" 2 ms; 40 rounds.
const { json: sk } = jagerJson(['hunt', recordBarrier('skewed')]);
if (sk) {
  const f = imbalance(sk);
  check(f.length === 1, `skewed: one load_imbalance finding (${f.length})`);
  const x = f[0];
  if (x) {
    check(x.location.function === 'work' && x.location.file === 'barrier.c', `skewed: located at the work (${x.location.function})`);
    check(x.evidence.threads === 2, 'skewed: two threads wait at the barrier');
    // Sleeps only overshoot: the slow worker's work is at least 40 × 6 ms, and the fast one
    // waits for the difference each round.
    const ev = x.evidence;
    check(ev.work_ratio >= 2.4 && ev.work_ratio <= 4.5, `skewed: the slow worker does ~3x the work (${ev.work_ratio.toFixed(2)})`);
    check(ev.critical_work_ns >= 40 * 6e6 && ev.critical_work_ns <= 40 * 9e6,
      `skewed: its work totals 240 ms or a little more (${(ev.critical_work_ns / 1e6).toFixed(1)})`);
    const diff = ev.critical_work_ns - ev.others_mean_work_ns;
    check(near(ev.wait_excess_ns, diff, 0.25) && ev.wait_excess_ns >= 0.75 * 40 * 4e6,
      `skewed: the fast worker waits the work's difference (${(ev.wait_excess_ns / 1e6).toFixed(1)} vs ${(diff / 1e6).toFixed(1)} ms)`);
    check(x.title.includes('"slow-worker"') && x.title.includes('barrier_wait'), 'skewed: the title names the slow thread and the wait');
    check(x.details.some((d) => d.includes('"fast-worker"') && d.includes('waits')), 'skewed: details list each thread');
    check(x.cost_ns === x.evidence.wait_excess_ns && x.severity === 2, 'skewed: cost is the excess wait, severity problem');
  }
  check(!sk.findings.some((f) => f.kind === 'slow_region' && f.location.function === 'barrier_wait'),
    'skewed: the wait is not reported twice as a slow region');
}

// Balanced: nobody waits long.
const { json: ba } = jagerJson(['hunt', recordBarrier('balanced')]);
if (ba) check(imbalance(ba).length === 0, `balanced: no load_imbalance (${imbalance(ba).map((f) => f.title).join('; ')})`);

// The stencil example: workers idle while the main thread computes the residual alone.
const { json: st } = jagerJson(['hunt', recordExample('stencil', '256', '60', '2')]);
if (st) {
  const x = imbalance(st)[0];
  check(!!x, 'stencil: load_imbalance found');
  if (x) {
    check(x.location.function === 'residual' && x.evidence.others_mean_work_ns === 0, 'stencil: the serial residual is the culprit');
    check(x.evidence.threads === 3 && /serial section/.test(x.title), 'stencil: three threads, a serial section');
    check(x.pct_of_run >= 5, `stencil: costing ${x.pct_of_run.toFixed(0)}% of the run (about a third on a quiet machine)`);
  }
}
done();
