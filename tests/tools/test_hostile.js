// Hostile ids and many threads (issue 16 items 5 and 13): a small file whose EVENTS blocks
// name a thread index its thread table lacks (2^31, 10^8, 2^32 - 1) must not make any command
// loop or size memory by the index; `export speedscope` of 2,000 threads works with 64 file
// descriptors and says the real error when its temporary file cannot be made.
// Each command runs under `ulimit -v` (1 GiB) and a generous time limit (120 s; they take
// well under a second): a loop or a GB-sized table fails the check, not the machine.
'use strict';
const fs = require('fs');
const { spawnSync } = require('child_process');
const { tmp, check, done } = require('./tutil');

const JAGER = process.env.JAGER_BIN;
const HOSTILE = process.env.REC_HOSTILE;

// Run `jager args...` under sh with limits (ulimit lines before exec); code null = killed.
function limited(limits, args, env) {
  const q = (a) => `'${String(a).replace(/'/g, `'\\''`)}'`;
  const r = spawnSync('sh', ['-c', `${limits}; exec ${q(JAGER)} ${args.map(q).join(' ')}`], {
    env: Object.assign({}, process.env, { JAGER_QUIET: '1' }, env || {}),
    encoding: 'utf8',
    maxBuffer: 256 << 20,
    timeout: 120000,
    killSignal: 'SIGKILL',
  });
  return { code: r.status, signal: r.signal, out: r.stdout || '', err: r.stderr || '' };
}
const MEM = 'ulimit -v 1048576';

function makeRec(args) {
  const r = spawnSync(HOSTILE, args, { env: Object.assign({}, process.env, { JAGER_QUIET: '1' }), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`rec_hostile ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

// ---- item 5: thread indexes the file's tables lack ----
for (const index of [2147483648, 100000000, 4294967295]) {
  const file = tmp(`ids-${index}.jgr`);
  const ex = makeRec(['ids', file, String(index)]); // thread 1's blocks now name `index`
  const per = ex.spans / 2; // spans per thread
  const out = (s) => tmp(`ids-${index}${s}`);
  const cmds = [
    ['summary', file],
    ['summary', file, '--format', 'json'],
    ['hunt', file, '--format', 'json'],
    ['info', file],
    ['dump', file],
    ['report', file, '-o', out('.html')],
    ['export', '--format', 'chrome', '-o', out('.chrome.json'), file],
    ['export', '--format', 'speedscope', '-o', out('.speedscope.json'), file],
    ['export', '--format', 'pprof', '-o', out('.pb.gz'), file],
    ['export', '--format', 'parquet', '-o', out('-parquet'), file],
    ['export', '--format', 'csv', '-o', out('-csv'), file],
    ['export', '--format', 'folded', '-o', out('.folded'), file],
  ];
  const res = {};
  for (const c of cmds) {
    const r = limited(MEM, c);
    res[c.join(' ')] = r;
    check(r.code === 0, `thread ${index}: jager ${c[0]} ${c[0] === 'export' ? c[2] : ''} exits 0 within 120 s under ulimit -v 1 GiB` +
      ` (got ${r.code}${r.signal ? ' ' + r.signal : ''}) ${r.err.trim().slice(0, 200)}`);
  }
  // The views keyed by a hash map keep that thread, under its own index.
  try {
    const ss = JSON.parse(fs.readFileSync(out('.speedscope.json'), 'utf8'));
    const names = ss.profiles.map((p) => p.name);
    const hostile = ss.profiles.find((p) => p.name === `thread ${index}`);
    check(ss.profiles.length === 2 && hostile && hostile.events.length === 2 * per,
      `thread ${index}: speedscope has both threads, ${2 * per} O/C events on thread ${index} (${names.join(', ')}: ` +
      `${ss.profiles.map((p) => p.events.length).join(', ')})`);
    check(ss.profiles.every((p) => p.events.length === 2 * per), `thread ${index}: speedscope: ${2 * per} events on each thread`);
  } catch (e) {
    check(false, `thread ${index}: speedscope output parses: ${e.message}`);
  }
  try {
    const ch = JSON.parse(fs.readFileSync(out('.chrome.json'), 'utf8'));
    const evs = Array.isArray(ch) ? ch : ch.traceEvents;
    const spans = evs.filter((e) => e.ph === 'X' && e.cat === 'span');
    check(spans.filter((e) => e.tid === index).length === per && spans.length === 2 * per,
      `thread ${index}: chrome keeps ${per} spans on tid ${index}, ${2 * per} in all (got ${spans.filter((e) => e.tid === index).length}, ${spans.length})`);
  } catch (e) {
    check(false, `thread ${index}: chrome output parses: ${e.message}`);
  }
  // The views indexed by thread (model, report) leave that thread's spans out and count them.
  try {
    const s = JSON.parse(res[`summary ${file} --format json`].out);
    check(s.run.malformed === per, `thread ${index}: summary counts the ${per} spans of the unknown thread as malformed (got ${s.run.malformed})`);
  } catch (e) {
    check(false, `thread ${index}: summary JSON parses: ${e.message}`);
  }
  const html = fs.existsSync(out('.html')) ? fs.statSync(out('.html')).size : 0;
  check(html > 10000, `thread ${index}: report written (${html} bytes)`);
}

// ---- item 13: 2,000 threads, 64 descriptors ----
{
  const file = tmp('threads-2000.jgr');
  const ex = makeRec(['threads', file, '2000', '20000']); // two threads of 60,000 spans spill many chunks
  const out = tmp('threads-2000.speedscope.json');
  const r = limited('ulimit -n 64', ['export', '--format', 'speedscope', '-o', out, file]);
  check(r.code === 0, `2,000 threads: export speedscope exits 0 at ulimit -n 64 (got ${r.code}): ${r.err.trim().slice(0, 300)}`);
  try {
    const ss = JSON.parse(fs.readFileSync(out, 'utf8'));
    const lens = ss.profiles.map((p) => p.events.length);
    check(ss.profiles.length === 2000, `2,000 threads: 2,000 profiles (got ${ss.profiles.length})`);
    check(lens.filter((n) => n === 2 * ex.small_spans).length === 1998 && lens.filter((n) => n === 2 * ex.big_spans).length === 2,
      `2,000 threads: 1,998 profiles of ${2 * ex.small_spans} events and 2 of ${2 * ex.big_spans}`);
    check(lens.reduce((a, b) => a + b, 0) === 2 * ex.spans, `2,000 threads: ${2 * ex.spans} O/C events in all`);
    // Each profile's events balance like a stack, at non-decreasing times (the chunks came back in order).
    let ok = true;
    for (const p of ss.profiles) {
      const st = [];
      let at = 0;
      for (const e of p.events) {
        if (e.at < at) ok = false;
        at = e.at;
        if (e.type === 'O') st.push(e.frame);
        else if (st.pop() !== e.frame) ok = false;
      }
      if (st.length) ok = false;
    }
    check(ok, '2,000 threads: every profile balanced, times non-decreasing');
    const ids = new Set(ss.profiles.map((p) => p.name));
    check(ids.size === 2000, '2,000 threads: one profile per thread');
  } catch (e) {
    check(false, `2,000 threads: speedscope output parses: ${e.message}`);
  }
  // A temporary file that cannot be made: the real reason, exit 1 (output), no file left.
  const bad = tmp('threads-bad.speedscope.json');
  const b = limited('true', ['export', '--format', 'speedscope', '-o', bad, file], { TMPDIR: tmp('no-such-folder') });
  check(b.code === 1 && /cannot create a temporary file in .*no-such-folder: No such file or directory/.test(b.err) &&
    !/out of memory/.test(b.err), `no temporary folder: exit 1 and the real error (got ${b.code}: ${b.err.trim()})`);
  const left = fs.readdirSync(require('path').dirname(bad)).filter((n) => n.startsWith('threads-bad'));
  check(left.length === 0, `no temporary folder: no output or temporary left (${left.join(', ')})`);
}

// ---- item 12: a chain of 2,000 nested spans (each the parent of the next) ----
// Once quadratic (each level's subtree copied into its parent's; every pprof sample listing
// its whole path; the text tree indented 2 columns a level: 1.6 GB of spaces at 40,000). Correct output on the big input;
// the speed is bench/quadratic's measure.
{
  const N = 2000;
  const file = tmp('chain.jgr');
  makeRec(['chain', file, String(N)]);
  const s = limited(MEM, ['summary', file, '--format', 'json']);
  check(s.code === 0, `chain: summary --format json exits 0 (got ${s.code}) ${s.err.trim().slice(0, 200)}`);
  try {
    const j = JSON.parse(s.out);
    let n = j.trees[0].nodes[0], depth = 1, names = true;
    check(j.trees[0].nodes.length === 1 && n.name === `link_${N - 1}`, `chain: one root, link_${N - 1} (got ${n && n.name})`);
    while (n.children && n.children.length) {
      if (n.children.length !== 1) names = false;
      n = n.children[0];
      depth++;
      if (n.name !== `link_${N - depth}` || n.calls !== 1) names = false;
    }
    check(depth === N && names, `chain: the tree is one path ${N} deep, link_${N - 1} … link_0, one call each (depth ${depth})`);
  } catch (e) {
    check(false, `chain: summary JSON parses: ${e.message}`);
  }
  const t = limited(MEM, ['summary', file]);
  const rows = t.out.split('\n').filter((l) => /lin(k_|…)\d/.test(l)); // deep rows' names are cut in the middle
  const widest = Math.max(...t.out.split('\n').map((l) => l.length));
  check(t.code === 0 && rows.length === N && /^ {64}\[2000\] link_0 /.test(rows[N - 1]) && widest < 250,
    `chain: text summary has ${N} rows, indentation stops at 64 columns ([2000] link_0), widest line ${widest} columns`);
  const ssOut = tmp('chain.speedscope.json');
  const ss = limited(MEM, ['export', '--format', 'speedscope', '-o', ssOut, file]);
  try {
    const p = JSON.parse(fs.readFileSync(ssOut, 'utf8')).profiles[0];
    let d = 0, max = 0, ok = true;
    for (const e of p.events) { d += e.type === 'O' ? 1 : -1; if (d < 0) ok = false; max = Math.max(max, d); }
    check(ss.code === 0 && p.events.length === 2 * N && ok && d === 0 && max === N, `chain: speedscope ${2 * N} events, balanced, ${N} deep (max ${max})`);
  } catch (e) {
    check(false, `chain: speedscope parses: ${e.message}`);
  }
  const pp = limited(MEM, ['export', '--format', 'pprof', '-o', tmp('chain.pb.gz'), file]);
  check(pp.code === 0 && pp.err.includes(`${N - 255} span paths deeper than 255 sites cut to the innermost 255`),
    `chain: pprof exits 0 and says ${N - 255} paths were cut: ${pp.err.trim()}`);
  const rp = limited(MEM, ['report', file, '-o', tmp('chain.html')]);
  check(rp.code === 0, `chain: report exits 0 (got ${rp.code})`);
}

done();
