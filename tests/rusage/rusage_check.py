#!/usr/bin/env python3
"""The rusage plugin through the real file and the real `jager hunt`/`jager summary`:

  page_faults   a region that mallocs, touches and frees 8 MiB a call is a page_faults
                finding at its site, with ~2048 faults a call (8 MiB / 4 KiB), and the faults
                the plugin attributes to the loop agree with getrusage's; the same loop on one
                buffer allocated once gives no such finding.
  descheduled   a region spinning on CPU 0 beside three busy processes pinned to CPU 0 (more
                runnable threads than cores, started here) is `descheduled` with most of its
                wall time waiting for the CPU, and no slow_region is said about it; alone, it
                is not descheduled.
  desched_barrier
                two threads work between barriers, one pinned to CPU 0 beside three busy
                processes, the other to CPU 1 (CPU 0 too on a one-CPU box); the crowded one
                also has twice the CPU work, so it arrives late even on a machine loaded
                as a whole, and without rusage the hunt says load_imbalance at the wait. With
                it: `descheduled` at the work, and the load_imbalance withheld (the wall
                times were the machine's; it cannot tell how much was the code's) — none in
                the list, and the descheduled finding counts and names it.

usage: rusage_check.py JAGER_CLI WORKLOAD PLUGIN_DIR OUT_DIR CASE"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from machine import machine_wait_share  # noqa: E402

cli, workload, plugins, out, case = sys.argv[1:6]
os.makedirs(out, exist_ok=True)


def record(name, args, pin=None):
    path = os.path.join(out, name + ".jgr")
    env = dict(os.environ, JAGER_OUTPUT=path, JAGER_PLUGINS="rusage", JAGER_PLUGIN_PATH=plugins, JAGER_QUIET="1")
    cmd = ([ "taskset", "-c", pin] if pin is not None else []) + [workload] + args
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, (cmd, r.returncode, r.stderr)
    return path, r.stdout


def hunt(path):
    r = subprocess.run([cli, "hunt", "--format", "json", "--min-pct", "0", path], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["findings"]


def of(findings, kind, func):
    return [f for f in findings if f["kind"] == kind and f["location"].get("function") == func]


def ev(f, key):
    return f["evidence"][key]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


if case == "page_faults":
    path, stdout = record("fault", ["fault", "40"])
    got = hunt(path)
    pf = of(got, "page_faults", "step")
    if len(pf) != 1:
        fail(f"one page_faults finding at step expected, got {[(f['kind'], f['location'].get('function')) for f in got]}")
    per_call = ev(pf[0], "faults_per_call")
    if not 1700 <= per_call <= 2400:
        fail(f"faults a call {per_call}, expected ~2048 (8 MiB of 4 KiB pages)")
    loop = int(stdout.split()[1])
    total = ev(pf[0], "faults")
    if not 0.8 * loop <= total <= 1.05 * loop:
        fail(f"faults attributed {total} against getrusage's {loop} in the loop")
    clean, _ = record("reuse", ["reuse", "40"])
    if of(hunt(clean), "page_faults", "step"):
        fail("page_faults on a loop that reuses one buffer")
    print(f"ok: page_faults step {per_call:.0f} a call, {total:.0f} of getrusage's {loop}")
elif case == "descheduled":
    hogs = [subprocess.Popen(["taskset", "-c", "0", sys.executable, "-c", "while True: pass"]) for _ in range(3)]
    try:
        path, _ = record("crowded", ["spin", "15", "20"], pin="0")
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    got = hunt(path)
    d = of(got, "descheduled", "compute")
    if len(d) != 1:
        fail(f"one descheduled finding at compute expected, got {[(f['kind'], f['location'].get('function')) for f in got]}")
    share = ev(d[0], "runq_share")
    cpu, wall = ev(d[0], "cpu_ns"), ev(d[0], "wall_ns")
    if share < 50 or cpu > 0.5 * wall:
        fail(f"run-queue share {share:.0f} %, CPU {cpu / 1e6:.0f} ms of wall {wall / 1e6:.0f} ms: expected mostly waiting")
    covered = ev(d[0], "spans_covered")
    if covered != 15 or not 0.8 * 15 * 20e6 <= cpu <= 1.3 * 15 * 20e6:
        fail(f"CPU time {cpu / 1e6:.0f} ms over {covered} of 15 spans, the program spun 300 ms")
    if of(got, "slow_region", "compute"):
        fail("a slow_region was said about a descheduled region")
    # The clean half needs a machine that is not crowded already (a developer's busy box):
    # measured the same way, a spinning thread's run-queue wait over 300 ms.
    busy = machine_wait_share()
    if busy > 0.10:
        print(f"note: the machine itself is crowded ({busy:.0%} run-queue wait): the uncrowded half is not judged")
    else:
        quiet, _ = record("quiet", ["spin", "15", "20"])
        if of(hunt(quiet), "descheduled", "compute"):
            fail("descheduled without any competition")
    print(f"ok: descheduled compute, {share:.0f} % of its wall time waiting, CPU {cpu / 1e6:.0f} ms of {wall / 1e6:.0f} ms")
elif case == "desched_barrier":
    cpus = os.sched_getaffinity(0)
    if 0 not in cpus:
        print("skip: CPU 0 is not ours")
        sys.exit(0)
    other = "1" if 1 in cpus else "0"
    hogs = [subprocess.Popen(["taskset", "-c", "0", sys.executable, "-c", "while True: pass"]) for _ in range(3)]
    try:
        path, _ = record("barrier", ["barrier", "15", "40", "20", "0", other])
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    got = hunt(path)
    kinds = [(f["kind"], f["location"].get("function")) for f in got]
    if [f for f in got if f["kind"] == "load_imbalance"]:
        fail(f"a load_imbalance was said about threads that waited for a CPU: {kinds}")
    d = of(got, "descheduled", "work")
    if len(d) != 1:
        fail(f"one descheduled finding at work expected, got {kinds}")
    share = ev(d[0], "runq_share")
    if share < 25:
        fail(f"run-queue share {share:.0f} % at work: the crowding did not take")
    withheld = [x for x in d[0]["details"] if x.startswith("withheld: load_imbalance")]
    if ev(d[0], "withheld_load_imbalance") < 1 or not withheld:
        fail(f"the imbalance the wait showed is not named as withheld: {d[0]['evidence']} {d[0]['details']}")
    # spans before the plugin's first reading of a thread or after its last are not covered
    if not 15 <= ev(d[0], "spans_covered") <= 30:
        fail(f"{ev(d[0], 'spans_covered')} of 30 work spans covered by the readings")
    print(f"ok: descheduled work ({share:.0f} % waiting for a CPU), {withheld[0]}")
else:
    fail("unknown case " + case)
