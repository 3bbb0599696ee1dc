#!/usr/bin/env python3
"""`jager hunt` on real OpenMP recordings (issue 11): omp_imbalance recorded with the openmp
plugin, skewed (thread 1 does 4x the CPU work of thread 0 in every region) and balanced.
The skewed run has exactly one load_imbalance, whose wait is the region's join barrier (known
by its role) and whose work is the region's `omp work`; the balanced run has none (judged
when the machine is not crowded already, as rusage_check.py's quiet half); neither run has
a slow_region at a join barrier, nor has a team whose thread 1 does 1.1x the work (LULESH's
loops had four such, one per barrier: every wait of the early thread is "4x the median").

usage: imbalance_check.py PROG LIBJAGER PLUGIN_DIR JAGER_CLI OUT_PREFIX"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from machine import machine_wait_share  # noqa: E402

prog, lib, plugins, cli, out = sys.argv[1:6]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def hunt(mode, regions):
    path = f"{out}-{mode}.jgr"
    env = dict(os.environ, OMP_WAIT_POLICY="passive", OMP_DYNAMIC="false", OMP_NUM_THREADS="2", JAGER_QUIET="1",
               JAGER_PLUGINS="openmp", JAGER_PLUGIN_PATH=plugins, JAGER_OUTPUT=path,
               LD_PRELOAD=f"{lib} {plugins}/libjager-openmp.so")
    r = subprocess.run([prog, mode, str(regions), "10"], env=env, capture_output=True, text=True, timeout=240)
    if r.returncode != 0 or r.stdout.strip() != "2":
        fail(f"{prog} {mode}: exit {r.returncode}, team {r.stdout.strip()!r}: {r.stderr}")
    h = subprocess.run([cli, "hunt", "--format", "json", "--min-pct", "0", path], capture_output=True, text=True, timeout=120)
    if h.returncode != 0:
        fail(f"jager hunt {path}: {h.stderr}")
    return json.loads(h.stdout)["findings"]


def of_kind(findings, kind):
    return [f for f in findings if f["kind"] == kind]


def barrier_tails(findings):
    """slow_region findings at a barrier the plugin names as such: a barrier's waits are a
    tail by nature (every thread but the last waits), load_imbalance judges them."""
    return [f for f in of_kind(findings, "slow_region") if f["location"]["function"].startswith("omp ")
            and "barrier" in f["location"]["function"]]


all_skewed = hunt("skewed", 12)
skewed = of_kind(all_skewed, "load_imbalance")
if len(skewed) != 1:
    fail(f"one load_imbalance on the skewed run expected, got {[f['title'] for f in skewed]}")
f = skewed[0]
waits = [d for d in f["details"] if d.startswith("wait site: omp join barrier")]
if not waits or not f["location"]["function"].startswith("omp work"):
    fail(f"the imbalance is not the join barrier's wait for `omp work`: {f['location']} {f['details']}")
ev = f["evidence"]
if ev["threads"] != 2 or ev.get("work_ratio", 0) < 1.5:
    fail(f"2 threads and the critical one's work well above the other's expected: {ev}")
# The balanced half needs a machine that is not crowded already: there, one thread of a
# balanced team preempted more than the other looks 1.2x slower (seen at load 10 on 2
# cores). Measured as rusage_check.py does; 30 regions so that preemption evens out.
all_balanced = hunt("balanced", 30)
all_uneven = hunt("uneven", 30)
for name, fs in (("skewed", all_skewed), ("balanced", all_balanced), ("uneven", all_uneven)):
    if barrier_tails(fs):
        fail(f"a slow_region at a join barrier on the {name} run: {[x['title'] for x in barrier_tails(fs)]}")
busy = machine_wait_share()
if busy > 0.10:
    print(f"note: the machine itself is crowded ({busy:.0%} run-queue wait): the balanced half is not judged")
    print(f"ok: skewed: load_imbalance at the join barrier (work {ev['work_ratio']:.1f}x)")
    sys.exit(0)
balanced = of_kind(all_balanced, "load_imbalance")
if balanced:
    fail(f"load_imbalance on the balanced run: {[x['title'] for x in balanced]}")
print(f"ok: skewed: load_imbalance at the join barrier (work {ev['work_ratio']:.1f}x); balanced: none")
