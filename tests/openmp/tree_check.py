#!/usr/bin/env python3
"""Workers under their region in the tools' tree (issue 11): omp_regions R=3 T=3 recorded with
the openmp plugin; in `jager summary --format json`'s merged tree the `omp parallel` node has
R calls and, under it, `omp work` and `omp join barrier` with R x T calls each — the primary's
R and the R x (T-1) of the worker threads, placed there by site_role's region field — and no
`omp work` or join-barrier row is left at the top level.

usage: tree_check.py PROG LIBJAGER PLUGIN_DIR JAGER_CLI OUT"""
import json
import os
import subprocess
import sys

prog, lib, plugins, cli, out = sys.argv[1:6]
R, T = 3, 3


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


env = dict(os.environ, OMP_WAIT_POLICY="passive", OMP_DYNAMIC="false", JAGER_QUIET="1", JAGER_PLUGINS="openmp",
           JAGER_PLUGIN_PATH=plugins, JAGER_OUTPUT=out, LD_PRELOAD=f"{lib} {plugins}/libjager-openmp.so")
r = subprocess.run([prog, str(R), str(T), "1"], env=env, capture_output=True, text=True, timeout=120)
if r.returncode != 0:
    fail(f"{prog}: exit {r.returncode}: {r.stderr}")
s = subprocess.run([cli, "summary", "--format", "json", out], capture_output=True, text=True, timeout=120)
if s.returncode != 0:
    fail(f"jager summary: {s.stderr}")
top = json.loads(s.stdout)["trees"][0]["nodes"]
regions = [n for n in top if n["name"].startswith("omp parallel")]
strays = [n["name"] for n in top if n["name"].startswith(("omp work", "omp join barrier"))]
if len(regions) != 1 or regions[0]["calls"] != R:
    fail(f"one top-level `omp parallel` row of {R} calls expected: {[(n['name'], n['calls']) for n in top]}")
if strays:
    fail(f"worker rows left at the top level: {strays}")
kids = {n["name"].split(" @")[0]: n["calls"] for n in regions[0]["children"]}
if kids.get("omp work") != R * T or kids.get("omp join barrier") != R * T:
    fail(f"under the region, omp work and omp join barrier with {R * T} calls each ({R} primary + {R * (T - 1)} workers) "
         f"expected: {kids}")
print(f"ok: omp parallel {R} calls; under it omp work and omp join barrier {R * T} each, {R * (T - 1)} from the workers")
