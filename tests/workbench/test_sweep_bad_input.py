#!/usr/bin/env python3
"""gpumodel sweep refuses bad sweep input: exit 2, one line on stderr naming the key (or option or
file) and what is allowed, nothing on stdout, nothing run, no output directory made."""

import os

from wbtest import Test

t = Test("workbench_sweep_bad_input")
fence = t.scenario("fence_signal")
ok_head = f"[sweep]\nscenario = {fence}\n"

# (name, sweep file text or None for no file, extra argv, fragments the one stderr line must hold)
CASES = [
    ("unknown section", ok_head + "[axis]\ncpu.idle_state = C1\n", [], ["[axis]", "unknown section", "did you mean '[axes]'?"]),
    ("unknown sweep key", ok_head + "seed = 1\n", [], ["sweep.seed", "unknown key", "seeds"]),
    ("no [sweep]", "[axes]\ncpu.idle_state = C1\n", [], ["[sweep]", "missing"]),
    ("no scenario", "[sweep]\nseeds = 1\n", [], ["sweep.scenario", "missing"]),
    ("unreadable scenario", "[sweep]\nscenario = no_such_dir/x.ini\n", [], ["sweep.scenario", "cannot read", "x.ini"]),
    ("misspelt scenario name", "[sweep]\nscenario = fence_signl\n", [], ["sweep.scenario", "cannot read",
                                                                         "did you mean 'fence_signal'?"]),
    ("bad mode", ok_head + "mode = grid\n", [], ["sweep.mode", "'grid'", "cartesian", "zip"]),
    ("misspelt mode", ok_head + "mode = zpi\n", [], ["sweep.mode", "'zpi'", "did you mean 'zip'?"]),
    ("seed not an integer", ok_head + "seeds = 1, two\n", [], ["sweep.seeds", "'two'", "unsigned"]),
    ("seed with a leading zero", ok_head + "seeds = 01\n", [], ["sweep.seeds", "'01'"]),
    ("seed as an axis", ok_head + "[axes]\nseed = 1, 2\n", [], ["axes.seed", "[sweep]"]),
    ("empty axis", ok_head + "[axes]\ncpu.idle_state =\n", [], ["axes.cpu.idle_state", "empty"]),
    ("empty list item", ok_head + "[axes]\ncpu.idle_state = C1, , C6\n", [], ["axes.cpu.idle_state", "empty value"]),
    ("value twice", ok_head + "[axes]\ncpu.idle_state = C1, C1\n", [], ["axes.cpu.idle_state", "'C1'", "twice"]),
    ("zip lengths", ok_head + "mode = zip\n[axes]\ncpu.idle_state = C1, C6\ncpu.thread_wake_ns = 1, 2, 3\n",
     [], ["zip", "cpu.idle_state has 2", "cpu.thread_wake_ns has 3"]),
    ("range step 0", ok_head + "[axes]\ncpu.thread_wake_ns = 1..5 step 0\n", [], ["axes.cpu.thread_wake_ns", "bad range", "step"]),
    ("range backwards", ok_head + "[axes]\ncpu.thread_wake_ns = 5..1\n", [], ["axes.cpu.thread_wake_ns", "bad range", "below"]),
    ("range not numbers", ok_head + "[axes]\ncpu.thread_wake_ns = a..b\n", [], ["axes.cpu.thread_wake_ns", "bad range", "'a'"]),
    ("range open", ok_head + "[axes]\ncpu.thread_wake_ns = 1..\n", [], ["axes.cpu.thread_wake_ns", "bad range"]),
    ("range too long", ok_head + "[axes]\ncpu.thread_wake_ns = 0..1e9\n", [], ["axes.cpu.thread_wake_ns", "bad range", "at most"]),
    ("range in a list", ok_head + "[axes]\ncpu.thread_wake_ns = 1, 2..4\n", [], ["axes.cpu.thread_wake_ns", "range"]),
    ("seed range bad", ok_head.replace("\n", "\nseeds = 4..1\n", 1), [], ["sweep.seeds", "bad range"]),
    ("not a key", ok_head + "[axes]\nidle_state = C1\n", [], ["axes.idle_state", "section.key"]),
    ("unknown parameter", ok_head + "[axes]\ncpu.idel_state = C1, C6\n", [], ["axes.cpu.idel_state", "not a parameter", "fence_signal",
                                                                             "did you mean 'cpu.idle_state'?"]),
    ("another scenario's key", ok_head + "[fixed]\npresent.path = one_copy\n", [], ["fixed.present.path", "not a parameter",
                                                                                  "belongs to scenario hybrid_present"]),
    ("a key by a shared word", ok_head + "[axes]\ndisplay.fifo_size = 1, 2\n", [],
     ["axes.display.fifo_size", "did you mean 'display.fifo_bytes' or 'node.fifo_bytes'?"]),
    ("a key by a prefix", ok_head + "[fixed]\nvidsch.tdr_del = 2\n", [], ["did you mean 'vidsch.tdr_delay_ms'?"]),
    ("misspelt key of another scenario", ok_head + "[fixed]\npresent.pth = one_copy\n", [],
     ["fixed.present.pth", "did you mean 'present.path' (scenario hybrid_present, scanout_underflow)?"]),
    ("axis and fixed", ok_head + "[axes]\ncpu.idle_state = C1\n[fixed]\ncpu.idle_state = C6\n", [], ["fixed.cpu.idle_state", "also an axis"]),
    ("key twice", ok_head + "[axes]\ncpu.idle_state = C1\ncpu.idle_state = C6\n", [], ["axes.cpu.idle_state", "twice"]),
    ("section twice", ok_head + "[axes]\ncpu.idle_state = C1\n[axes]\n", [], ["[axes]", "twice"]),
    ("no equals", ok_head + "[axes]\ncpu.idle_state C1\n", [], ["cpu.idle_state C1", "key = value"]),
    ("outside a section", f"scenario = {fence}\n", [], ["scenario", "outside a section"]),
    ("NUL byte", ok_head + "\0\n", [], ["NUL"]),
    ("control byte shown as \\xNN", ok_head + "[ax\x01es]\n", [], ["[ax\\x01es]", "unknown section"]),
    ("missing sweep file", None, [], ["nonexistent.ini", "cannot read"]),
    ("--jobs 0", ok_head, ["--jobs", "0"], ["--jobs", "at least 1"]),
    ("--jobs word", ok_head, ["--jobs", "many"], ["--jobs", "'many'"]),
    ("--sbatch-arg without --slurm", ok_head, ["--sbatch-arg=--time=5"], ["--sbatch-arg", "--slurm"]),
    ("unknown option", ok_head, ["--bogus"], ["--bogus"]),
    ("--out is a file", ok_head, ["--out", "@FILE"], ["--out", "not a directory"]),
    ("--out is someone else's", ok_head, ["--out", "@FOREIGN"], ["--out", "not a sweep's output"]),
    ("no binary", ok_head, ["--gpumodel", "/nonexistent/gpumodel"], ["/nonexistent/gpumodel", "--gpumodel"]),
    ("a 300,000-character line", ok_head + "g" * 300000 + "\n", [],
     ["'" + "g" * 200 + "... (300000 characters)': expected 'key = value'"]),
    ("--out in no folder", ok_head, ["--out", "@NODIR"], ["--out", "no such directory", "make it first"]),
    ("--out over the sweep file", ok_head, ["--out", "@EARLIER"], ["--out", "would replace the sweep file",
                                                                   "which the sweep reads"]),
]

a_file = t.write("plain_file", "x")
foreign = os.path.join(t.tmp, "foreign")
os.makedirs(foreign)
t.write("foreign/notes.txt", "mine")
# An earlier sweep's directory whose merged.json is where the user keeps this sweep's file: re-running
# into it would delete the sweep file (H4: an output never replaces an input).
earlier = os.path.join(t.tmp, "earlier")
os.makedirs(earlier)
t.write("earlier/points.json", "{}")
nodir = os.path.join(t.tmp, "no_such_folder", "out")
for i, (name, text, extra, fragments) in enumerate(CASES):
    path = t.write(f"case{i}.ini", text) if text is not None else os.path.join(t.tmp, "nonexistent.ini")
    if "@EARLIER" in extra:
        path = t.write("earlier/merged.json", text)
    out = os.path.join(t.tmp, f"out{i}")
    extra = [a_file if a == "@FILE" else foreign if a == "@FOREIGN" else earlier if a == "@EARLIER"
             else nodir if a == "@NODIR" else a for a in extra]
    argv = [path, "--dry-run"] + (["--out", out] if "--out" not in extra else []) + extra
    p = t.tool("sweep", *argv)
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    line = lines[-1] if lines else ""
    t.check(p.returncode == 2, f"{name}: exit 2 (got {p.returncode}; stderr {p.stderr.strip()!r})")
    t.check(len(lines) == 1, f"{name}: one line on stderr (got {len(lines)}: {p.stderr.strip()!r})")
    t.check(all(f in line for f in fragments), f"{name}: stderr names {fragments}: {line!r}")
    t.check(p.stdout == "", f"{name}: nothing on stdout (got {p.stdout!r})")
    t.check(not os.path.exists(out), f"{name}: no output directory made")
t.check(os.listdir(foreign) == ["notes.txt"], "a foreign --out directory is left as it was")
# Every input is a bounded regular file: a device or a FIFO is refused before it is read (a FIFO with no
# writer would block forever, /dev/zero would fill the memory).
fifo = os.path.join(t.tmp, "fifo.ini")
os.mkfifo(fifo)
for path in ("/dev/zero", fifo):
    p = t.tool("sweep", path, "--dry-run", "--out", os.path.join(t.tmp, "never"))
    t.check(p.returncode == 2 and "not a regular file" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
            f"sweep {path}: exit 2, not a regular file (got {p.returncode}: {p.stderr.strip()!r})")
big = t.write("big.ini", ok_head + "#" * (1 << 20))
p = t.tool("sweep", big, "--dry-run", "--out", os.path.join(t.tmp, "never"))
t.check(p.returncode == 2 and "allowed: at most 1048576" in p.stderr,
        f"a sweep file over 1 MiB: exit 2 ({p.stderr.strip()!r})")
t.check(sorted(os.listdir(earlier)) == ["merged.json", "points.json"], "the sweep file in an earlier sweep is kept")
t.check(not os.path.exists(os.path.dirname(nodir)), "a --out in no folder makes none")

# A bare scenario name: the source tree's scenarios/NAME.ini.
p = t.tool("sweep", t.write("byname.ini", "[sweep]\nscenario = fence_signal\n"), "--dry-run", "--out",
           os.path.join(t.tmp, "byname"))
t.check(p.returncode == 0 and fence in p.stdout, f"scenario = fence_signal runs {fence} ({p.stderr.strip()!r})")

# Without --out: build/sweeps/<stem> under the working directory, never in the source tree.
work = os.path.join(t.tmp, "work")
os.makedirs(work)
p = t.tool("sweep", t.write("plain.ini", ok_head), "--dry-run", cwd=work)
t.check(p.returncode == 0 and os.path.isfile(os.path.join(work, "build", "sweeps", "plain", "jobs.txt")),
        f"default --out is ./build/sweeps/plain (exit {p.returncode}: {p.stderr.strip()!r})")
inside = os.path.join(os.path.dirname(fence), "build")  # scenarios/build: in the source tree
p = t.tool("sweep", t.write("inside.ini", ok_head), "--dry-run", cwd=os.path.dirname(fence))
t.check(p.returncode == 2 and "source tree" in p.stderr and not os.path.exists(inside),
        f"a default --out in the source tree is refused (exit {p.returncode}: {p.stderr.strip()!r})")

t.done()
