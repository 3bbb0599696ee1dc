// `jager export --format speedscope` on a sampled recording (sampler_hot): one sampled
// profile per sampled thread whose samples are exactly the recording's sampler.sample
// events (read back with `jager dump`): same number per thread, same order (time), weights
// equal to each sample's cpu_ns (--sample-weight time) or 1 (samples); every stack id maps
// to one root-first frame path, and Σ weight per path equals the folded export's count.
// Usage: node check_speedscope.mjs JAGER_CLI HOT.jgr TMPDIR
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const [cli, jgr, tmp] = process.argv.slice(2);
const jager = (...a) => execFileSync(cli, a, { encoding: 'utf8', maxBuffer: 1 << 28 });

const dump = jager("dump", jgr, "--type", "sampler.sample").trim().split("\n").map((l) => JSON.parse(l));
const samples = dump.map((e) => ({ tid: e.fields.os_tid, time: BigInt(e.time_ns), stack: e.fields.stack, weight: e.fields.weight, cpu: e.fields.cpu_ns }));
assert.ok(samples.length > 100, `enough samples (${samples.length})`);
samples.sort((a, b) => (a.tid !== b.tid ? a.tid - b.tid : a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
const byTid = new Map();
for (const s of samples) (byTid.get(s.tid) ?? byTid.set(s.tid, []).get(s.tid)).push(s);

function load(weight) {
  const out = join(tmp, `hot.${weight}.speedscope.json`);
  jager('export', '--format', 'speedscope', '--sample-weight', weight, jgr, '-o', out);
  const j = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(j.$schema, 'https://www.speedscope.app/file-format-schema.json');
  return j;
}

const folded = new Map(readFileSync(join(tmp, 'hot.folded'), 'utf8').trim().split('\n').map((l) => {
  const i = l.lastIndexOf(' ');
  return [l.slice(0, i), BigInt(l.slice(i + 1))];
}));

for (const weight of ['time', 'samples']) {
  const j = load(weight);
  const sampled = j.profiles.filter((p) => p.type === 'sampled');
  assert.ok(j.profiles.some((p) => p.type === 'evented'), 'the spans stay as evented profiles');
  assert.equal(sampled.length, byTid.size, 'one sampled profile per sampled thread');
  const idText = new Map(), perText = new Map();
  for (const p of sampled) {
    const tid = Number(p.name.match(/tid (\d+)\)?$/)[1]);
    const want = byTid.get(tid);
    assert.ok(want, `profile ${p.name} names a sampled thread`);
    assert.equal(p.unit, weight === 'time' ? 'nanoseconds' : 'none');
    assert.equal(p.samples.length, want.length, `${p.name}: one stack per sample`);
    assert.equal(p.weights.length, want.length);
    let total = 0;
    for (let k = 0; k < want.length; k++) {
      assert.equal(p.weights[k], weight === 'time' ? want[k].cpu : 1, `${p.name} sample ${k} weight`);
      total += p.weights[k];
      const text = p.samples[k].map((f) => j.shared.frames[f].name).join(';');
      const seen = idText.get(want[k].stack);
      assert.ok(seen === undefined || seen === text, `stack ${want[k].stack} is one path (${seen} / ${text})`);
      idText.set(want[k].stack, text);
      perText.set(text, (perText.get(text) ?? 0n) + BigInt(want[k].weight));
    }
    assert.equal(p.endValue, total);
    assert.equal(total, want.reduce((a, s) => a + (weight === 'time' ? s.cpu : 1), 0));
  }
  // the same paths as the folded stacks, root first, with the same periods
  assert.deepEqual([...perText.entries()].sort(), [...folded.entries()].sort());
  assert.ok([...perText.keys()].some((t) => t.endsWith(';main;in_step')), 'main;in_step path');
  assert.ok([...perText.keys()].some((t) => t.endsWith(';main;hidden_hot')), 'main;hidden_hot path');
}
console.log(`speedscope: ${samples.length} samples on ${byTid.size} thread(s) match the recording`);
