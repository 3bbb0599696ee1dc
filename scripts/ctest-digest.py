#!/usr/bin/env python3
"""ctest-digest.py LOG: for each test that failed in a `ctest --output-on-failure` log, the
lines of its output that say what failed (cmocka's [  ERROR  ]/[  FAILED  ], assertion and
FAIL lines, sanitizer headlines, timeouts), at most a few each. CI shows only the end of a
long log: this puts the cause next to the summary instead of thousands of lines above it."""
import re
import sys

CAUSE = re.compile(r"\[\s*(ERROR|FAILED)\s*\]|FAIL\b|[Aa]ssert|error:|ERROR: \w+Sanitizer|"
                   r"runtime error:|Timeout|timed out|not ok|Error:|Traceback|panic:|Test Failed at|Evaluated:")
HEAD = re.compile(r"^\s*\d+/\d+ Test\s+#\d+: (\S+) \.+\s*(\*\*\*\w+|Passed|Not Run|Skipped|\w+)")


def main(path):
    failed, cur, out = [], None, {}
    with open(path, errors="replace") as f:
        for line in f:
            m = HEAD.match(line)
            if m:
                cur = m.group(1) if "Passed" not in m.group(2) else None
                if cur:
                    failed.append((cur, m.group(2).strip("*")))
                    out[cur] = []
                continue
            if re.match(r"^\s*Start\s+\d+:", line):
                continue
            if cur and CAUSE.search(line):
                out[cur].append(line.rstrip()[:300])
    if not failed:
        return
    print("failure digest (the lines of each failed test's output that name the cause):")
    for name, why in failed:
        lines = out.get(name, [])
        print(f"  {name} ({why}):")
        for l in lines[:8]:
            print(f"    {l}")
        if len(lines) > 8:
            print(f"    … {len(lines) - 8} more")


if __name__ == "__main__":
    main(sys.argv[1])
