#!/usr/bin/env python3
"""Counts time.Sleep calls and wall-clock assertions in the tests (issue 33).

Usage: python3 tests/tools/sleepcount.py [ROOT] [-v]

A sleep is "in a loop" when a for statement encloses it (or it is the post
statement of a for header: polling). A sleep outside loops is a "kept" one
when its line carries a `// sleep: <reason>` comment (it waits for
something that must not happen, or elapsed time is what is tested, or it
only lets a goroutine reach a blocking call); the rest are synchronising
sleeps to replace with a wait on the event. Duration assertions are a
measured duration compared with a bound. -v lists the file:line of each
sleep outside loops and of each duration assertion.
"""
import os
import re
import sys

DUR = re.compile(r"(\b(took|elapsed|el|waited|dur|d)\b|time\.Since\([^)]*\))\s*(>|<|>=|<=)\s*[0-9a-zA-Z(]")


def files(root):
    for dp, dn, fn in os.walk(root):
        dn[:] = [d for d in dn if d not in (".git", "node_modules")]
        for f in fn:
            p = os.path.join(dp, f)
            if f.endswith(".go") and (f.endswith("_test.go") or "/tests/" in p):
                yield p


def in_loop(lines, i):
    line = lines[i]
    if re.match(r"\s*for .*;\s*time\.Sleep\(", line):
        return True
    m = len(line) - len(line.lstrip("\t"))
    for j in range(i - 1, -1, -1):
        s = lines[j]
        if not s.strip():
            continue
        k = len(s) - len(s.lstrip("\t"))
        if k < m:
            m = k
            st = s.strip()
            if st.startswith("for ") or st == "for {":
                return True
            if st.startswith("func ") or re.search(r"func\(.*\{$", st) or st.startswith("go func"):
                return False
    return False


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    root = args[0] if args else "."
    total = loops = 0
    kept, sync, durs = [], [], []
    for p in sorted(files(root)):
        lines = open(p, encoding="utf-8").read().split("\n")
        for i, l in enumerate(lines):
            if l.strip().startswith("//"):
                continue
            if p.endswith("_test.go") and DUR.search(l):
                durs.append(f"{p}:{i+1}")
            if "time.Sleep(" not in l:
                continue
            total += 1
            if in_loop(lines, i):
                loops += 1
            elif "// sleep:" in l:
                kept.append(f"{p}:{i+1}: {l.split('// sleep:', 1)[1].strip()}")
            else:
                sync.append(f"{p}:{i+1}")
    print(f"time.Sleep: {total} total, {loops} in loops, {len(kept) + len(sync)} outside loops "
          f"({len(kept)} kept with a reason, {len(sync)} unexplained); {len(durs)} duration assertions")
    if "-v" in sys.argv:
        print("unexplained:\n  " + "\n  ".join(sync))
        print("kept:\n  " + "\n  ".join(kept))
        print("duration assertions:\n  " + "\n  ".join(durs))


if __name__ == "__main__":
    main()
