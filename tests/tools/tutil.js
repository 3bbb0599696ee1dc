// Helpers shared by the tools tests: run commands, make recordings, assert.
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const JAGER = process.env.JAGER_BIN;
const DRIVER = process.env.REC_DRIVER;
const EXAMPLES = process.env.EXAMPLES_BIN;
if (!JAGER || !DRIVER || !EXAMPLES) {
  console.error('set JAGER_BIN, REC_DRIVER and EXAMPLES_BIN (ctest does)');
  process.exit(2);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jager-tools-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
const tmp = (name) => path.join(dir, name);

let failures = 0;
function check(cond, what) {
  if (cond) console.log('ok   ' + what);
  else {
    console.log('FAIL ' + what);
    failures++;
  }
}
function done() {
  if (failures) {
    console.log(`${failures} check(s) failed`);
    process.exit(1);
  }
  console.log('all checks passed');
}

function run(cmd, args, env) {
  const r = spawnSync(cmd, args, {
    env: Object.assign({}, process.env, { JAGER_QUIET: '1' }, env || {}),
    encoding: 'utf8',
    maxBuffer: 256 << 20,
  });
  if (r.error) throw r.error;
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function jager(args) { return run(JAGER, args); }

function jagerJson(args, wantCode = 0) {
  const r = jager(args.concat(['--format', 'json']));
  if (r.code !== wantCode) {
    console.log(`jager ${args.join(' ')}: exit ${r.code}, wanted ${wantCode}\n${r.err}`);
    failures++;
  }
  try {
    return { json: JSON.parse(r.out), res: r };
  } catch (e) {
    console.log(`FAIL jager ${args.join(' ')} printed invalid JSON: ${e.message}\n${r.out.slice(0, 400)}`);
    failures++;
    return { json: null, res: r };
  }
}

// Record with the driver (scenario, args...) into a fresh file; returns its path.
function record(scenario, ...args) {
  const out = tmp(`${scenario}-${Math.random().toString(36).slice(2)}.jgr`);
  const r = run(DRIVER, [scenario, out, ...args]);
  if (r.code !== 0) throw new Error(`rec_driver ${scenario} failed (${r.code}): ${r.err}`);
  return out;
}

// Two workers meeting at a barrier (rec_barrier): 'balanced' or 'skewed'.
function recordBarrier(mode) {
  const out = tmp(`barrier-${mode}.jgr`);
  const r = run(process.env.REC_BARRIER, [out, mode]);
  if (r.code !== 0) throw new Error(`rec_barrier ${mode} failed (${r.code}): ${r.err}`);
  return out;
}

// Record an example program (examples/c) into a fresh file.
function recordExample(name, ...args) {
  const out = tmp(`${name}.jgr`);
  const r = run(path.join(EXAMPLES, name), args, { JAGER_OUTPUT: out });
  if (r.code !== 0) throw new Error(`${name} failed (${r.code}): ${r.err}`);
  return out;
}

// Every node of a nested summary tree, with its parent.
function* walk(nodes, parent = null) {
  for (const n of nodes) {
    yield { node: n, parent };
    yield* walk(n.children, n);
  }
}

// Julia 1.5.3 for the julia-labelled tests (scripts/install-julia.sh; exits with a FAIL line
// when it cannot be had) and a depot next to the build, so the binding precompiles once, not
// on every run: { julia, depot, lib } with lib the build's libjager.so.
function juliaSetup() {
  const src = process.env.JAGER_SOURCE_DIR;
  const inst = run(path.join(src, 'scripts', 'install-julia.sh'), ['--print']);
  if (inst.code !== 0) {
    console.log('FAIL Julia could not be installed (scripts/install-julia.sh --print):\n' + inst.err);
    process.exit(1);
  }
  const depot = path.join(path.dirname(process.env.JAGER_BIN), '..', 'tests', 'tools', 'julia-depot');
  fs.mkdirSync(depot, { recursive: true });
  return {
    julia: inst.out.trim().split('\n').pop(),
    depot,
    lib: path.join(path.dirname(process.env.JAGER_BIN), '..', 'lib', 'libjager.so'),
  };
}

module.exports = { tmp, check, done, run, jager, jagerJson, record, recordBarrier, recordExample, walk, dir, juliaSetup };
