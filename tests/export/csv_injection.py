#!/usr/bin/env python3
"""CSV formula injection (issue 16 item 8): `jager export --format csv` writes a text cell
that starts with = + - @ tab or CR quoted after an apostrophe (OWASP), so a spreadsheet shows
it as text; Python's csv module reads the neutralised value back exactly; other cells are
unchanged; `--csv-raw` writes every value as recorded.

usage: csv_injection.py JAGER CSV_NAMES OUT_DIR"""
import csv
import os
import shutil
import subprocess
import sys

jager, prog, out = sys.argv[1:4]
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
jgr = os.path.join(out, "names.jgr")
subprocess.run([prog, jgr], check=True, env=dict(os.environ, JAGER_QUIET="1"))
NAMES = ["=cmd|' /C calc'!A0", '+HYPERLINK("http://x","y")', "-2+3", "@SUM(A1:A2)", "\tTAB", "\rCR", "plain_name", "a=b"]
fails = 0


def names(folder):
    with open(os.path.join(folder, "span.csv"), newline="") as f:
        return [row["name"] for row in csv.DictReader(f)]


def check(ok, msg):
    global fails
    print(("ok   " if ok else "FAIL ") + msg)
    fails += not ok


safe = os.path.join(out, "safe")
subprocess.run([jager, "export", "--format", "csv", jgr, "-o", safe], check=True)
got = names(safe)
want = ["'" + n if n[0] in "=+-@\t\r" else n for n in NAMES]
check(sorted(got) == sorted(want), f"neutralised names read back: {got!r}")
check(not any(n[0] in "=+-@\t\r" for n in got), "no cell starts with a formula character")
raw = os.path.join(out, "raw")
subprocess.run([jager, "export", "--format", "csv", "--csv-raw", jgr, "-o", raw], check=True)
check(sorted(names(raw)) == sorted(NAMES), "--csv-raw: every name as recorded")
# numbers stay numbers: negative integers are not text cells
with open(os.path.join(safe, "span.csv"), newline="") as f:
    rows = list(csv.DictReader(f))
check(all(r["duration_ns"].lstrip("-").isdigit() for r in rows), "numeric cells unchanged")
sys.exit(1 if fails else 0)
