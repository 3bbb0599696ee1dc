// `jager hunt` on recordings of the bundled Julia examples (label julia): each known
// problem is named with the right kind and function; clean kernels and the fixed variants
// next to each bug are not flagged. Julia 1.5.3 comes from scripts/install-julia.sh.
'use strict';
const fs = require('fs');
const path = require('path');
const { tmp, check, done, run, jagerJson, walk } = require('./tutil');

const src = process.env.JAGER_SOURCE_DIR;
const plugins = process.env.JAGER_PLUGIN_DIR;
const lib = path.join(path.dirname(process.env.JAGER_BIN), '..', 'lib', 'libjager.so');
const inst = run(path.join(src, 'scripts', 'install-julia.sh'), ['--print']);
if (inst.code !== 0) {
  console.log('FAIL Julia could not be installed (scripts/install-julia.sh --print):\n' + inst.err);
  process.exit(1);
}
const julia = inst.out.trim().split('\n').pop();
// A depot next to the build: the binding precompiles once, not on every run.
const depot = path.join(path.dirname(process.env.JAGER_BIN), '..', 'tests', 'tools', 'julia-depot');
fs.mkdirSync(depot, { recursive: true });
const env = { JULIA_DEPOT_PATH: depot, JAGER_LIB: lib, JAGER_PLUGIN_PATH: plugins, JAGER_QUIET: '1' };

function recordJulia(script, args, extraEnv) {
  const out = tmp(path.basename(script, '.jl') + '.jgr');
  const r = run(julia, ['--startup-file=no', `--project=${path.join(src, 'bindings', 'julia')}`, path.join(src, script), ...args(out)],
    Object.assign({}, env, extraEnv(out)));
  check(r.code === 0, `julia ${script} ran (exit ${r.code})${r.code ? '\n' + r.err.slice(-2000) : ''}`);
  return out;
}
const withDispatch = (script) => recordJulia(script, () => [], (out) => ({ JAGER_PLUGINS: 'dispatch', JAGER_OUTPUT: out }));
function hunt(file) {
  const { json } = jagerJson(['hunt', file]);
  return json ? json.findings : [];
}
const has = (fs_, kind, fn) => fs_.find((f) => f.kind === kind && f.location.function === fn);
const none = (fs_, fn) => !fs_.some((f) => f.location.function === fn);

const acc = hunt(withDispatch('examples/julia/unstable_accumulator.jl'));
const ua = has(acc, 'type_instability', 'unstable_sum');
check(!!ua && ua.title.includes('give the variable one type'), `unstable accumulator: ${ua && ua.title}`);
check(none(acc, 'stable_sum'), 'stable_sum not flagged');

const fld = hunt(withDispatch('examples/julia/abstract_field_loop.jl'));
const af = has(fld, 'type_instability', 'moments!');
check(!!af && af.title.includes('make the field concrete'), `abstract-field loop: ${af && af.title}`);
check(!fld.some((f) => f.kind === 'type_instability' && f.location.function !== 'moments!'), 'moments_typed! not flagged');

const val = hunt(withDispatch('examples/julia/val_specializations.jl'));
const vs = has(val, 'specialization_explosion', 'hk');
check(!!vs && vs.evidence.specializations >= 300 && vs.cost_ns > 0, `Val{N} loop: ${vs && vs.title}`);
check(!!has(val, 'type_instability', 'sum_vals'), 'sum_vals: runtime dispatch on Val(i)');

const glob = hunt(withDispatch('examples/julia/nonconst_global.jl'));
const ng = has(glob, 'type_instability', 'scaled_sum');
check(!!ng && ng.title.includes('const'), `non-constant global: ${ng && ng.title}`);
check(!has(glob, 'type_instability', 'scaled_sum_arg'), 'scaled_sum_arg not flagged');

const pic = hunt(withDispatch('examples/pic.jl'));
const pd = has(pic, 'type_instability', 'deposit!');
check(!!pd && pd.title.includes('Float32 and Float64 seen') && pd.title.includes('make the field concrete'), `pic.jl: ${pd && pd.title}`);
check(!pic.some((f) => f.kind === 'type_instability' && f.location.function !== 'deposit!'), 'other pic.jl kernels not flagged');

const churnFile = recordJulia('examples/julia_gc/churn.jl', (out) => [out], () => ({}));
const churn = hunt(churnFile);
const ah = has(churn, 'allocation_hotspot', 'step');
check(!!ah, `allocation-heavy loop: ${ah && ah.title}`);
const gp = has(churn, 'gc_pressure', 'step');
check(!gp || gp.title.includes('triggered from `step`'), `GC trigger named in the program: ${gp && gp.title}`);
check(none(churn, 'step!'), 'the in-place step! is not flagged');
// GC time per call path: `step` is a short span inside `solve`; the gc plugin's gc.stall
// records reach the file before the spans they stalled, so the path solve → step carries
// the same GC time as the plugin's exact per-site figure (gc.site_time).
const { json: cs } = jagerJson(['summary', churnFile]);
if (cs) {
  const stepSite = cs.sites.find((x) => x.name === 'step');
  const stepNode = [...walk(cs.trees[0].nodes)].find((x) => x.node.name === 'step' && x.parent && x.parent.name === 'solve');
  check(!!stepSite && !!stepNode && stepSite.gc_ns > 0, `churn: step has GC time (${stepSite && stepSite.gc_ns} ns)`);
  if (stepSite && stepNode) {
    const ratio = stepNode.node.gc_ns / stepSite.gc_ns;
    check(ratio > 0.9 && ratio <= 1.0001, `churn: solve → step GC ${stepNode.node.gc_ns} ns = ${(100 * ratio).toFixed(1)}% of the site's exact ${stepSite.gc_ns} ns`);
    check(stepNode.node.gc_pauses >= 0.9 * stepSite.gc_pauses, `churn: ${stepNode.node.gc_pauses} of ${stepSite.gc_pauses} pauses on the path`);
  }
}

const clean = hunt(withDispatch('examples/julia/clean_kernels.jl'));
const bad = clean.filter((f) => !['compile_time', 'plugin_events', 'dropped_events'].includes(f.kind));
check(bad.length === 0, `clean kernels: no findings (${bad.map((f) => f.title).join('; ')})`);
done();
