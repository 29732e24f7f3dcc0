#!/usr/bin/env python3
"""House style, checked: every C++ source within 700 lines (--lengths), or formatted as the committed
.clang-format says (--format; exit 77, reported as skipped, when clang-format is not installed: CI
installs it and checks that this test ran)."""
import argparse
import os
import shutil
import subprocess
import sys

DIRS = ["app", "bench", "fuzz", "hw_model", "kernel_stub", "monitors", "platform", "scenarios", "tests"]
MAX_LINES = 700


def sources(root):
    for d in DIRS:
        for dirpath, dirnames, files in os.walk(os.path.join(root, d)):
            dirnames[:] = sorted(n for n in dirnames if not n.startswith("build"))
            for f in sorted(files):
                if f.endswith((".cpp", ".h")):
                    yield os.path.join(dirpath, f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--lengths", action="store_true")
    ap.add_argument("--format", action="store_true")
    a = ap.parse_args()
    files = list(sources(a.root))
    if not files:
        print("no sources found under", a.root)
        return 1
    bad = 0
    if a.lengths:
        for f in files:
            with open(f, encoding="utf-8") as fh:
                n = sum(1 for _ in fh)
            if n > MAX_LINES:
                print(f"{os.path.relpath(f, a.root)}: {n} lines, more than {MAX_LINES}: split it by what its parts do")
                bad += 1
    if a.format:
        cf = shutil.which("clang-format")
        if not cf:
            print("clang-format is not installed (apt-get install clang-format): skipped")
            return 77
        r = subprocess.run([cf, "--dry-run", "--Werror", "--style=file"] + files, cwd=a.root,
                           capture_output=True, text=True)
        if r.returncode:
            print(r.stderr[:4000])
            print("not formatted: run clang-format -i on the files named above")
            bad += 1
    print(f"{len(files)} sources checked, {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
