#!/usr/bin/env python3
"""Self-cost measured on the run (issue 11 item 8): with the sampler at 1 kHz on a loop of
dense spans, samples land in the recorder's own code, and `jager summary` turns them into a
per-span cost on the program's thread. It must be there, come from enough samples, and agree
in magnitude with the span cost the core timed at start (within 0.25x..8x: one is measured
on the run, under whatever load, the other in a quiet loop at init).

usage: selfcost_check.py JAGER PROGRAM PLUGIN_DIR OUT"""
import json
import os
import subprocess
import sys

jager, prog, plugins, out = sys.argv[1:5]
env = dict(os.environ, JAGER_OUTPUT=out, JAGER_PLUGINS="sampler", JAGER_PLUGIN_PATH=plugins, JAGER_SAMPLER_HZ="1000",
           JAGER_QUIET="1", JAGER_RING_BYTES="64M")
subprocess.run([prog], env=env, check=True, timeout=120)
s = json.loads(subprocess.run([jager, "summary", "--format", "json", out], capture_output=True, text=True, check=True).stdout)
run = s["run"]
sc = run.get("sampled_self_cost")
if not sc:
    print("FAIL: no sampled self-cost in the summary")
    sys.exit(1)
timed = run["span_cost_ns"]
per = sc["cpu_ns_per_span"]
print(f"recorder samples {sc['recorder_samples']} of {sc['samples']}, {per:.1f} ns per span measured on the run, "
      f"{timed:.1f} ns timed at start")
ok = sc["recorder_samples"] >= 20 and timed > 0 and 0.25 * timed <= per <= 8 * timed
text = subprocess.run([jager, "summary", out], capture_output=True, text=True, check=True).stdout
ok = ok and "self-cost measured on the run (sampler)" in text
print("ok" if ok else "FAIL")
sys.exit(0 if ok else 1)
