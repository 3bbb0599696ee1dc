// `jager bench run` + `jager compare` end to end, as a CI job uses them, on programs built
// here: bench_kernels_{base,slow,alloc} (C; slow does 10 % more arithmetic in `dot`, alloc
// reports 64 more bytes per call in `scale`) and kernels.jl (Julia, @jäger sites, work from
// its argument). The Markdown is read by a real Markdown parser (marked, GitHub-flavoured)
// and examples/ci by GitHub's own action and workflow schemas (@action-validator/core).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { validateAction, validateWorkflow } from '@action-validator/core';
import { marked } from 'marked';

const JAGER = process.env.JAGER_BIN;
const KDIR = process.env.KERNELS_DIR;
const SRC = process.env.JAGER_SOURCE_DIR;
assert.ok(JAGER && KDIR && SRC, 'run under ctest (JAGER_BIN, KERNELS_DIR, JAGER_SOURCE_DIR)');
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'jager-compare-'));
process.on('exit', () => fs.rmSync(TMP, { recursive: true, force: true }));
const tmp = (f) => path.join(TMP, f);
const kernels = (v) => path.join(KDIR, `bench_kernels_${v}`);

function jager(args, env = {}) {
  const r = spawnSync(JAGER, args, { encoding: 'utf8', env: { ...process.env, GITHUB_ACTIONS: '', GITHUB_STEP_SUMMARY: '', ...env } });
  if (r.error) throw r.error;
  return r;
}

// Base and head interleaved on this machine, as the action does; `dot` must come out
// regressed. A loaded machine can leave 15 runs inconclusive ("noisy": more runs decide),
// so an inconclusive first try is followed by one with more runs — what a user would do.
function benchAB(base, head, runs, extra = []) {
  const b = tmp(`base-${path.basename(base)}-${runs}.json`), h = tmp(`head-${path.basename(head)}-${runs}.json`);
  const r = jager(['bench', 'run', '-n', String(runs), '-w', '1', '--base-cmd', `${base} 200`, '--base-out', b, '-o', h, ...extra, '--', head, '200']);
  assert.equal(r.status, 0, r.stderr);
  return { b, h };
}

// The table's first column is 10 wide ("no verdict" has a space), then the kernel.
const rowKernel = (l) => l.slice(12).split(/\s+/)[0];
function verdictRow(stdout, kernel) {
  const line = stdout.split('\n').find((l) => rowKernel(l) === kernel);
  assert.ok(line, `no row for ${kernel} in:\n${stdout}`);
  return line.slice(0, 10).trim();
}

test('a dot doing 20 % more work is caught: exit 1, Markdown table, annotation on its file and line', () => {
  let md = tmp('slow.md'), comment = tmp('comment.md'), summary = tmp('summary.md');
  let r;
  // 15 runs, and while the verdict is "noisy" twice as many (a clean-clone CI run once left
  // 30 inconclusive while a neighbour shared the core: dot and scale, the kernels that
  // stream y, spread by ±10 %, reduce_max by ±1 %).
  for (const runs of [15, 30, 60]) {
    const { b, h } = benchAB(kernels('base'), kernels('slow'), runs);
    fs.writeFileSync(summary, '# earlier step\n');   /* one comparison in the summary, as in a fresh job */
    r = jager(['compare', '--markdown', md, '--comment', comment, b, h], { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary });
    if (verdictRow(r.stdout, 'dot') !== 'noisy') break;
  }
  assert.equal(r.status, 1, `expected a regression:\n${r.stdout}${r.stderr}`);
  assert.equal(verdictRow(r.stdout, 'dot'), 'regressed');
  // The change is about +20 %: the interval printed must be a clear rise consistent with it
  // (on a shared CI machine the measured shift has come out anywhere from +15 to +30 %).
  const dotLine = r.stdout.split('\n').find((l) => rowKernel(l) === 'dot');
  const m = dotLine.match(/\[([+-][\d.]+), ([+-][\d.]+)\]/);
  assert.ok(m && Number(m[1]) > 3 && Number(m[1]) < 40 && Number(m[2]) > 15, dotLine);
  // Annotation with the kernel's source file and line (where JAGER site registration sits).
  const src = fs.readFileSync(path.join(SRC, 'tests/compare/bench_kernels.c'), 'utf8').split('\n');
  const dotLineNo = src.findIndex((l) => l.includes('jager_site_register("dot"')) + 1;
  const ann = r.stdout.split('\n').find((l) => l.startsWith('::error '));
  assert.ok(ann, r.stdout);
  assert.match(ann, new RegExp(`^::error file=[^,]*tests/compare/bench_kernels\\.c,line=${dotLineNo},title=dot regressed::`));
  // The Markdown as GitHub would render it: a table whose dot row says regressed.
  for (const f of [md, summary, comment]) {
    const html = marked.parse(fs.readFileSync(f, 'utf8'), { gfm: true });
    assert.match(html, /<table>/, f);
    const rows = [...html.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((x) => [...x[1].matchAll(/<t[dh][^>]*>([\s\S]*?)<\/t[dh]>/g)].map((c) => c[1]));
    assert.deepEqual(rows[0].slice(0, 2), ['verdict', 'kernel']);
    const dot = rows.find((c) => c[1] === 'dot');
    assert.ok(dot && dot[0] === '<strong>regressed</strong>', JSON.stringify(rows));
    assert.equal(rows.length, 4, 'header + 3 kernels');
  }
  assert.ok(fs.readFileSync(summary, 'utf8').startsWith('# earlier step\n'), 'the step summary is appended to');
  assert.ok(fs.readFileSync(comment, 'utf8').startsWith('<!-- jager-compare -->\n'));
});

test('an unchanged build passes (exit 0) and an added allocation fails the exact gate', () => {
  const aa = benchAB(kernels('base'), kernels('base'), 8);
  let r = jager(['compare', aa.b, aa.h]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  for (const k of ['dot', 'scale', 'reduce_max']) assert.notEqual(verdictRow(r.stdout, k), 'regressed');
  assert.match(r.stdout, /0 regressed/);

  const al = benchAB(kernels('base'), kernels('alloc'), 5);
  r = jager(['compare', '--annotations', al.b, al.h]);
  assert.equal(r.status, 1, r.stdout);
  assert.equal(verdictRow(r.stdout, 'scale'), 'alloc+');
  assert.match(r.stdout, /4\.0 KiB -> 4\.1 KiB/);
  assert.match(r.stdout, /::error file=[^,]*bench_kernels\.c,line=\d+,title=scale allocates more::scale: bytes per call/);
  assert.match(r.stdout, /1 with more bytes per call/);
});

test('few runs give no verdict; A/A calibration stores noise floors the gate then uses', () => {
  const few = benchAB(kernels('base'), kernels('slow'), 4);
  let r = jager(['compare', few.b, few.h]);
  assert.equal(r.status, 0, r.stdout);
  assert.equal(verdictRow(r.stdout, 'dot'), 'no verdict');
  assert.match(r.stdout, /3 without verdict/);

  const aa = benchAB(kernels('base'), kernels('base'), 6);
  const calibrated = tmp('calibrated.json');
  r = jager(['compare', '--calibrate', aa.b, aa.h, '-o', calibrated]);
  assert.equal(r.status, 0, r.stderr);
  const doc = JSON.parse(fs.readFileSync(calibrated, 'utf8'));
  const dot = doc.results[0].kernels.find((k) => k.name === 'dot');
  assert.ok(dot.noise > 0 && dot.noise < 1, JSON.stringify(dot.noise));
  assert.match(r.stdout, /dot\s+\d+\.\d+%/);
});

test('baselines keyed by machine class; a foreign class is refused unless asked', () => {
  const { b, h } = benchAB(kernels('base'), kernels('base'), 5);
  const baseline = tmp('baseline.json');
  let r = jager(['bench', 'store', b, baseline]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /added "/);
  // A second machine's result in the same file.
  const other = JSON.parse(fs.readFileSync(b, 'utf8'));
  other.results[0].machine.class = 'riscv64 Imaginary Core';
  fs.writeFileSync(tmp('other.json'), JSON.stringify(other));
  r = jager(['bench', 'store', tmp('other.json'), baseline]);
  assert.equal(r.status, 0, r.stderr);
  r = jager(['bench', 'store', b, baseline]);
  assert.match(r.stdout, /replaced "/);
  const doc = JSON.parse(fs.readFileSync(baseline, 'utf8'));
  assert.equal(doc.results.length, 2);
  // Which counter mode ran is said, never assumed (this project's VMs have no PMU).
  assert.match(doc.results[0].counters, /^(instructions|none: perf_event_open: .+)$/);
  // Compared (a verdict: exit 0, or 1 when a loaded machine made an A/A pair differ — the
  // verdicts themselves are judged elsewhere), never refused (2): the class is this machine's.
  const compared = (res) => (res.status === 0 || res.status === 1) && /3 kernels:/.test(res.stdout);
  r = jager(['compare', baseline, h]);
  assert.ok(compared(r), r.stdout + r.stderr);
  // Head from "another machine": refused (exit 2) with the classes listed, or compared with --any-machine.
  const foreign = JSON.parse(fs.readFileSync(h, 'utf8'));
  foreign.results[0].machine.class = 'x86_64 Some Other CPU';
  fs.writeFileSync(tmp('foreign.json'), JSON.stringify(foreign));
  r = jager(['compare', b, tmp('foreign.json')]);
  assert.ok(compared(r), r.stdout + r.stderr);   // one base result: compared, with a warning
  assert.match(r.stdout, /warning: different machines/);
  r = jager(['compare', baseline, tmp('foreign.json')]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /no result for this machine class "x86_64 Some Other CPU" \(it has: "/);
  r = jager(['compare', '--any-machine', baseline, tmp('foreign.json')]);
  assert.ok(compared(r), r.stdout + r.stderr);
});

test('malformed, truncated and version-mismatched files exit 2 with a clear message', () => {
  const { h } = benchAB(kernels('base'), kernels('base'), 5);
  const good = fs.readFileSync(h, 'utf8');
  const cases = [
    ['truncated.json', good.slice(0, good.length / 2), /malformed JSON at line \d+/],
    ['future.json', good.replace('"version": 1', '"version": 2'), /schema version 2 is not supported/],
    ['notours.json', '{"hello": 1}', /not a jager-bench document/],
    ['negative.json', good.replace(/"median_ns": \[\s*[\d.e+]+/, '"median_ns": [-1'), /median_ns\[0\]: must be finite and >= 0/],
  ];
  for (const [name, text, want] of cases) {
    fs.writeFileSync(tmp(name), text);
    const r = jager(['compare', tmp(name), h]);
    assert.equal(r.status, 2, `${name}: ${r.stdout}`);
    assert.match(r.stderr, want, name);
    assert.ok(r.stderr.includes(tmp(name)), 'the message names the file');
  }
  let r = jager(['compare', '--threshold', 'lots', h, h]);
  assert.equal(r.status, 2);
  r = jager(['compare', h]);
  assert.equal(r.status, 2);
  r = jager(['bench', 'run', '-n', '3', '-o', tmp('x.json'), '--', 'false']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /'false' exited with status 1 \(run 1 of 4\)/);
});

test('history: a step in the main branch\'s stored results is found, without a gate', () => {
  const { h } = benchAB(kernels('base'), kernels('base'), 5);
  const doc = JSON.parse(fs.readFileSync(h, 'utf8'));
  const files = [];
  for (let i = 0; i < 12; i++) {
    const d = JSON.parse(JSON.stringify(doc));
    d.results[0].commit = `c${i}`;
    for (const k of d.results[0].kernels) {
      // 1 % deterministic wobble everywhere; dot 8 % slower from result 6 on.
      const f = (1 + 0.01 * Math.sin(i * 1.7 + k.name.length)) * (k.name === 'dot' && i >= 6 ? 1.08 : 1);
      k.runs.median_ns = k.runs.median_ns.map((x) => x * f);
    }
    const f = tmp(`hist-${i}.json`);
    fs.writeFileSync(f, JSON.stringify(d));
    files.push(f);
  }
  const r = jager(['compare', '--history', ...files]);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.split('\n');
  const dot = lines.filter((l) => l.startsWith('dot '));
  assert.equal(dot.length, 1, r.stdout);
  assert.match(dot[0], /\+8\.\d % from .*hist-6\.json \(commit c6,/);
  assert.ok(!lines.some((l) => l.startsWith('scale ') || l.startsWith('reduce_max ')), r.stdout);
  assert.match(r.stdout, /1 change points in 3 kernels/);
});

test('two recordings: the sites whose time moved most', () => {
  const a = tmp('a.jgr'), b = tmp('b.jgr');
  for (const [exe, out] of [[kernels('base'), a], [kernels('slow'), b]]) {
    const r = spawnSync(exe, ['60'], { env: { ...process.env, JAGER_OUTPUT: out } });
    assert.equal(r.status, 0);
  }
  const r = jager(['compare', a, b]);
  assert.equal(r.status, 0, r.stderr);
  const rows = r.stdout.split('\n').slice(2).filter(Boolean).map((l) => l.split(/\s+/)[0]);
  assert.deepEqual([...rows].sort(), ['dot', 'reduce_max', 'scale']);
});

test('examples/ci: the action and both workflows pass GitHub\'s schemas; a broken one does not', () => {
  const action = fs.readFileSync(path.join(SRC, 'examples/ci/action.yml'), 'utf8');
  assert.deepEqual(validateAction(action).errors, []);
  for (const w of ['bench.yml', 'bench-comment.yml']) {
    const text = fs.readFileSync(path.join(SRC, 'examples/ci/workflows', w), 'utf8');
    assert.deepEqual(validateWorkflow(text).errors, [], w);
    assert.ok(!/pull_request_target/.test(text), `${w}: the two-workflow pattern, not pull_request_target`);
  }
  assert.ok(validateAction(action.replace('using: "composite"', 'using: "bogus"')).errors.length > 0);
});

// Julia: an ordinary script with @jäger sites, its kernel given more work in "head".
const julia = (() => {
  const r = spawnSync(path.join(SRC, 'scripts/install-julia.sh'), ['--print'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim().split('\n').pop() : null;
})();

test('Julia: a kernel given 25 % more work is caught', { skip: !julia && 'no Julia (scripts/install-julia.sh)' }, () => {
  const script = path.join(SRC, 'tests/compare/kernels.jl');
  const cmd = (work) => `${julia} --startup-file=no --project=${path.join(SRC, 'bindings/julia')} ${script} ${work}`;
  const b = tmp('jl-base.json'), h = tmp('jl-head.json');
  const ab = (n) => {
    const r = jager(['bench', 'run', '-n', String(n), '-w', '0', '--base-cmd', cmd(100), '--base-out', b, '-o', h, '--', 'sh', '-c', cmd(125)]);
    assert.equal(r.status, 0, r.stderr);
    return jager(['compare', b, h]);
  };
  let r = ab(7);
  if (verdictRow(r.stdout, 'smooth!') === 'noisy') r = ab(14);   // more runs decide
  assert.equal(verdictRow(r.stdout, 'smooth!'), 'regressed', r.stdout);
  assert.notEqual(verdictRow(r.stdout, 'norm2'), 'regressed', r.stdout);
  assert.equal(r.status, 1);
  const doc = JSON.parse(fs.readFileSync(h, 'utf8'));
  const k = doc.results[0].kernels.find((x) => x.name === 'smooth!');
  assert.ok(k.file.endsWith('kernels.jl') && k.line > 0, JSON.stringify(k));
});
