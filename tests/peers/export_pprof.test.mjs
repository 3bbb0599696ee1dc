// `jager export --format pprof` read by `go tool pprof` (Debian golang-go): the profile
// parses, -top lists the hottest site (by exclusive wall time) first, and the raw samples
// carry exactly the recording's span counts, exclusive times and bytes per span path.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';

import { exclusiveBySite, jager, outPath, recording, run, TMP } from '../export/peer_common.mjs';

function pprof(...args) {
  const env = { ...process.env, HOME: TMP, PPROF_TMPDIR: TMP, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' };
  let r;
  try {
    r = run('go', ['tool', 'pprof', '-symbolize=none', ...args], { env });
  } catch (e) {
    throw new Error(`'go tool pprof' is not available (${e.message}): run scripts/install-deps.sh (golang-go)`);
  }
  assert.equal(r.status, 0, `go tool pprof ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

test('pprof: go tool pprof reads our profile; hottest site first; exact samples', () => {
  const { jgr, tables } = recording();
  const out = outPath('profile.pb.gz');
  const r = jager('export', '--format', 'pprof', jgr, '-o', out);
  assert.equal(r.status, 0, r.stderr);
  const head = fs.readFileSync(out).subarray(0, 2);
  assert.deepEqual([...head], [0x1f, 0x8b], 'gzip');

  const spans = tables.get('span');
  const excl = exclusiveBySite(spans);
  const hottest = [...excl.entries()].sort((a, b) => (b[1] > a[1] ? 1 : b[1] < a[1] ? -1 : 0))[0][0];
  assert.equal(hottest, 'inner', 'the driver makes inner the hottest site');

  // -top: rows sorted by flat value of the default sample type (wall)
  const top = pprof('-top', '-nodecount=20', out);
  const rows = top.split('\n').filter((l) => /^\s*[\d.]+\w*\s+[\d.]+%/.test(l));
  assert.ok(rows.length >= 3, top);
  assert.match(rows[0], /\binner$/, `hottest first:\n${top}`);
  assert.match(top, /Type: wall/);

  // -raw: every sample with its values and location ids (leaf first)
  const raw = pprof('-raw', out);
  const types = raw.match(/Samples:\n(.*)\n/)[1].replace('[dflt]', '').trim().split(/\s+/);
  assert.deepEqual(types, ['spans/count', 'wall/nanoseconds', 'alloc_space/bytes']);
  const locs = new Map();
  // names may hold spaces and newlines (the hostile site): match lazily up to " file:line s=N"
  const locSection = raw.split(/\nLocations\n/)[1].split(/\nMappings/)[0];
  for (const m of locSection.matchAll(/^\s+(\d+): 0x[0-9a-f]+ (?:M=\d+ )?([\s\S]*?) (\S*):(\d+) s=\d+$/gm))
    locs.set(m[1], { name: m[2], file: m[3], line: Number(m[4]) });
  assert.equal(locs.size, new Set(spans.map((s) => s.site)).size, 'one location per site');
  assert.deepEqual(locs.get([...locs.keys()].find((k) => locs.get(k).name === 'outer')), { name: 'outer', file: 'tests/export/driver.c', line: 10 });
  const sampleSection = raw.split('Samples:\n')[1].split(/\nLocations/)[0];
  let count = 0n, wall = new Map(), bytes = 0n, paths = new Map();
  for (const m of sampleSection.matchAll(/^\s*(\d+)\s+(\d+)\s+(\d+): ([\d ]+)$/gm)) {
    const ids = m[4].trim().split(' ');
    const leaf = locs.get(ids[0]).name;
    count += BigInt(m[1]);
    wall.set(leaf, (wall.get(leaf) ?? 0n) + BigInt(m[2]));
    bytes += BigInt(m[3]);
    paths.set(ids.map((i) => locs.get(i).name).join('<'), BigInt(m[1]));
  }
  assert.equal(count, BigInt(spans.length), 'one count per span');
  assert.deepEqual(wall, excl, 'exclusive wall time per site equals the recording');
  // middle's bytes are its own (inner spans allocate nothing), outer's its own (0)
  assert.equal(bytes, spans.reduce((a, s) => a + (s.name === 'middle' ? BigInt(s.bytes) : 0n), 0n));
  // paths: leaf first, with the exact number of spans on each
  const perThread = (n) => BigInt(spans.filter((s) => s.name === n).length);
  assert.equal(paths.get('inner<middle<outer'), perThread('inner'));
  assert.equal(paths.get('middle<outer'), perThread('middle'));
  assert.equal(paths.get('outer'), perThread('outer'));
});

test('pprof: GC pauses by triggering stack in a second profile', () => {
  const { jgr, tables } = recording();
  const out = outPath('run.pb.gz');
  assert.equal(jager('export', '--format', 'pprof', jgr, '-o', out).status, 0);
  const gcOut = out.replace(/\.pb\.gz$/, '.gc.pb.gz');
  assert.ok(fs.existsSync(gcOut), 'the GC profile sits next to the span profile');
  const pauses = tables.get('gc.pause');
  const raw = pprof('-raw', gcOut);
  assert.match(raw, /pauses\/count gc\/nanoseconds/);
  const samples = [...raw.split('Samples:\n')[1].split(/\nLocations/)[0].matchAll(/^\s*(\d+)\s+(\d+): ([\d ]+)$/gm)];
  assert.equal(samples.length, 1, 'one distinct trigger stack');
  assert.equal(BigInt(samples[0][1]), BigInt(pauses.length));
  assert.equal(BigInt(samples[0][2]), pauses.reduce((a, p) => a + BigInt(p.duration_ns), 0n));
  // leaf first: 0x1000 (alloc_array with inlined_helper inlined into it), 0x2000, 0x3000
  const top = pprof('-top', '-sample_index=pauses', gcOut);
  assert.match(top, /Type: pauses/);
  const traces = pprof('-traces', gcOut);
  const frames = traces.split('-----------+-------------------------------------------------------')[1]
    .split('\n').map((l) => l.replace('(inline)', '').trim().split(/\s+/).at(-1)).filter(Boolean);
  assert.match(traces, /inlined_helper \(inline\)/, 'the inlined frame is marked as such');
  assert.deepEqual(frames.filter((f) => /^[a-z_]+$/.test(f)), ['inlined_helper', 'alloc_array', 'assemble', 'main']);
});
