// Robustness: unreadable files exit 2 with a clear message; files cut short give partial
// results and exit 3; bad usage exits 1; a large file is summarised with bounded memory.
'use strict';
const fs = require('fs');
const { tmp, check, done, run, jager, jagerJson, record } = require('./tutil');

// Many frames (the flood driver flushes often), so cuts land after whole frames of spans.
const file = record('flood', '200000');
const bytes = fs.readFileSync(file);
const full = jagerJson(['summary', file]).json;

// Garbage, empty, missing: exit 2 and a message naming the file.
const garbage = tmp('garbage.jgr');
fs.writeFileSync(garbage, Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) & 0xff)));
const empty = tmp('empty.jgr');
fs.writeFileSync(empty, '');
for (const [label, p] of [['garbage', garbage], ['empty', empty], ['missing', tmp('nope.jgr')]]) {
  for (const cmd of ['summary', 'hunt']) {
    const r = jager([cmd, p]);
    check(r.code === 2, `${cmd} ${label}: exit 2 (got ${r.code})`);
    check(r.err.includes(`jager ${cmd}: ${p}:`) && r.err.trim().length > p.length + 14, `${cmd} ${label}: says why: ${r.err.trim()}`);
    check(r.out === '', `${cmd} ${label}: prints no results`);
  }
}

// Cut short: every whole frame is used, exit 3, the output is still valid.
for (const frac of [0.35, 0.7, 0.95]) {
  const cut = tmp(`cut-${frac}.jgr`);
  fs.writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length * frac)));
  const { json: s, res } = jagerJson(['summary', cut], 3);
  check(res.code === 3, `summary of a file cut at ${frac * 100}%: exit 3`);
  check(/partial results/.test(res.err), `summary cut ${frac}: says the results are partial: ${res.err.trim()}`);
  if (s && full) {
    check(s.run.truncated === true && s.run.spans > 0 && s.run.spans < full.run.spans, `cut ${frac}: ${s.run.spans} of ${full.run.spans} spans`);
    check(s.run.spans > full.run.spans * frac * 0.5, `cut ${frac}: most spans before the cut kept`);
  }
  const h = jagerJson(['hunt', cut], 3);
  check(h.res.code === 3 && h.json && h.json.truncated === true, `hunt of a file cut at ${frac * 100}%: exit 3, truncated: true`);
  const t = jager(['hunt', cut]);
  check(t.code === 3 && /TRUNCATED/.test(t.out), `hunt text on a cut file says so`);
}
// A late cut keeps the early spans: the partial tree is non-empty.
const late = tmp('late.jgr');
fs.writeFileSync(late, bytes.subarray(0, Math.floor(bytes.length * 0.95)));
const ls = jagerJson(['summary', late], 3).json;
check(ls && ls.run.spans > 0 && ls.trees[0].nodes.length > 0, `a late cut keeps ${ls && ls.run.spans} spans`);

// A flipped byte in the middle: a clear error; the frames before it are used. The byte is the
// content checksum of the frame that holds the file's middle: a byte flipped at random in
// compressed data can leave the decoded content unchanged (a match offset in periodic data
// pointing at equal bytes: `lz4 -t` accepts such a file too), which is no corruption at all.
function frameEndAt(buf, pos) {
  let off = 0;
  while (off < buf.length) {
    const magic = buf.readUInt32LE(off);
    let end;
    if ((magic & 0xfffffff0) >>> 0 === 0x184d2a50) {
      end = off + 8 + buf.readUInt32LE(off + 4);
    } else {
      let p = off + 15; // magic, FLG, BD, u64 content size, HC
      for (;;) {
        const bs = buf.readUInt32LE(p);
        p += 4;
        if (bs === 0) break;
        p += bs & 0x7fffffff;
      }
      end = p + 4;
      if (pos >= off && pos < end) return end;
    }
    off = end;
  }
  throw new Error('no LZ4 frame holds the middle of the file');
}
const flip = Buffer.from(bytes);
flip[frameEndAt(flip, Math.floor(flip.length / 2)) - 2] ^= 0x5a;
const flipped = tmp('flipped.jgr');
fs.writeFileSync(flipped, flip);
const fr = jager(['summary', flipped, '--format', 'json']);
check(fr.code === 3, `corrupt byte after good frames: exit ${fr.code} (3, partial)`);
check(fr.err.includes(flipped) && fr.err.trim().length > 0, `corrupt byte: message: ${fr.err.trim()}`);
let partialOk = true;
try { JSON.parse(fr.out); } catch (e) { partialOk = false; }
check(partialOk, 'corrupt byte: partial JSON still parses');
// Every command reading the file says the same (one exit-code rule).
for (const args of [['hunt', flipped], ['export', flipped, '--format', 'csv', '-o', tmp('flipped.csv')],
  ['report', flipped, '-o', tmp('flipped.html')]]) {
  const r = jager(args);
  check(r.code === 3 && r.err.includes(flipped), `${args[0]} on the corrupt file: exit ${r.code} (3)`);
}

// Usage errors.
check(jager(['summary']).code === 1, 'summary without a file: exit 1');
check(jager(['hunt', file, '--format', 'xml']).code === 1, 'unknown format: exit 1');
check(jager(['hunt', file, '--min-pct', 'lots']).code === 1, 'bad --min-pct: exit 1');
check(jager(['summary', file, '--bogus']).code === 1, 'unknown option: exit 1');

// Memory stays bounded: 4x the events, about the same peak memory (aggregates only).
function peakKiB(p) {
  const r = run('/usr/bin/time', ['-f', '%M', process.env.JAGER_BIN, 'summary', p, '--format', 'json']);
  const lines = r.err.trim().split('\n');
  return { code: r.code, kib: parseInt(lines[lines.length - 1], 10), out: r.out };
}
if (fs.existsSync('/usr/bin/time')) {
  const small = record('flood', '250000');
  const big = record('flood', '1000000');
  const a = peakKiB(small), b = peakKiB(big);
  const spans = JSON.parse(b.out).run.spans;
  check(a.code === 0 && b.code === 0 && spans === 1000000, `1M-span file summarised (${spans} spans)`);
  check(b.kib < a.kib * 1.5 + 4096, `peak memory ${a.kib} KiB for 250k spans, ${b.kib} KiB for 1M spans`);
}
done();
