#!/usr/bin/env python3
"""Where the time of a test run goes (issue 28): reads `go test -json`.

Usage:
  go test -race -count=1 -json ./... > run.json
  python3 tests/tools/testtime.py run.json [-n 25] [-p PACKAGE_SUFFIX]

Prints the run's span (first to last event), each package's wall time (its
pass/fail Elapsed) and, for the packages chosen by -p (default: all), the
sum of their top-level tests' Elapsed, the parallel tests' share, the time
from the package's start to its first test (for ./tests: the gateway
build in harness.Main) and the -n slowest top-level tests.
"""
import json
import sys
from datetime import datetime


def ts(s):
    # 2026-12-02T09:05:48.553416018Z: keep microseconds for fromisoformat.
    head, _, frac = s.rstrip("Z").partition(".")
    return datetime.fromisoformat(head + "." + (frac + "000000")[:6])


def main(argv):
    path, n, only = None, 25, None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-n":
            n = int(argv[i + 1])
            i += 1
        elif a == "-p":
            only = argv[i + 1]
            i += 1
        else:
            path = a
        i += 1
    if path is None:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    pkgs, tests, first, last = {}, {}, None, None
    started, first_run, paused = {}, {}, {}
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line.startswith("{"):
            continue
        ev = json.loads(line)
        t = ts(ev["Time"]) if "Time" in ev else None
        if t is not None:
            first = t if first is None or t < first else first
            last = t if last is None or t > last else last
        pkg, test, act = ev.get("Package", ""), ev.get("Test"), ev.get("Action")
        if act == "start" and not test:
            started[pkg] = t
        if test and "/" not in test:
            if act == "run" and pkg not in first_run:
                first_run[pkg] = t
            if act == "pause":
                paused[(pkg, test)] = True
            if act in ("pass", "fail", "skip"):
                tests[(pkg, test)] = (ev.get("Elapsed", 0.0), act)
        elif not test and act in ("pass", "fail", "skip"):
            pkgs[pkg] = (ev.get("Elapsed", 0.0), act)
    if first and last:
        print(f"run span: {(last - first).total_seconds():.0f} s (first to last event)")
    print("packages by wall time:")
    for pkg, (el, act) in sorted(pkgs.items(), key=lambda kv: -kv[1][0]):
        if only and not pkg.endswith(only):
            continue
        print(f"  {el:8.1f} s  {act:4}  {pkg}")
    for pkg in sorted(pkgs, key=lambda p: -pkgs[p][0]):
        if only and not pkg.endswith(only):
            continue
        mine = [(el, act, name) for (p, name), (el, act) in tests.items() if p == pkg]
        if len(mine) < 2:
            continue
        total = sum(el for el, _, _ in mine)
        par = sum(el for el, _, name in mine if paused.get((pkg, name)))
        lead = ""
        if pkg in started and pkg in first_run:
            lead = f", {(first_run[pkg] - started[pkg]).total_seconds():.0f} s before the first test"
        print(f"\n{pkg}: {len(mine)} tests, sum of elapsed {total:.0f} s "
              f"({par:.0f} s in parallel tests), wall {pkgs[pkg][0]:.0f} s{lead}")
        for el, act, name in sorted(mine, reverse=True)[:n]:
            mark = " (parallel)" if paused.get((pkg, name)) else ""
            print(f"  {el:7.1f} s  {act:4}  {name}{mark}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
