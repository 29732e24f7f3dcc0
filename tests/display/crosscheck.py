#!/usr/bin/env python3
"""The model's display modes against independent implementations (docs/display.md, Modes).

  crosscheck.py --cvt-modes PATH [--full]

Compares what `cvt_modes` prints with:
  * edid-decode --vic N for every named CTA-861 mode,
  * edid-decode --cvt w=,h=,fps=,rb=1|2 for every named CVT mode and a grid of formats and rates
    (--full: 60 formats x 35 rates x both versions, 4,200 cases; else 20 x 10 x 2),
  * edid-decode --dmt ID for every VESA DMT CVT reduced-blanking timing,
  * xcvt's `cvt -r` for the named RBv1 mode at 60 Hz (where xcvt is installed).
The known differences (docs/display.md) are expected, each where it must show and nowhere else:
1360x768 RBv1's 5-line sync (DMT 0x28; edid-decode gives 10), and RBv2 clocks that are a whole number
of kHz, which edid-decode's floating point floors 1 kHz lower. Exit 0: all agree; 1: a difference;
77: edid-decode is not installed (skipped).
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys

CVT_NAMED = {  # name -> edid-decode rb
    "1280x720@144": 2, "1920x1080@144": 2, "2560x1440@30": 2, "2560x1440@60": 1,
    "2560x1440@120": 1, "2560x1440@144": 2, "3840x2160@144": 2,
}
DMT_IDS = [0x0d, 0x14, 0x16, 0x1a, 0x1b, 0x1f, 0x22, 0x26, 0x28, 0x29, 0x2d, 0x2e, 0x32, 0x38, 0x39, 0x3d,
           0x40, 0x43, 0x44, 0x48, 0x4b, 0x4c, 0x50, 0x57]
COMMON = [(1280, 720), (1920, 1080), (2560, 1440), (3840, 2160), (3440, 1440), (1280, 768), (1280, 1024),
          (1600, 1200), (1920, 1200), (320, 200), (640, 480), (7680, 4320), (5120, 2160), (2560, 1080),
          (1024, 768), (1400, 1050), (1680, 1050), (1360, 768), (2560, 1600), (800, 600)]


ENV = dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE")  # no SystemC banner on cvt_modes' output


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=True, env=ENV).stdout


def model(cvt_modes, modes, timings=None):
    """mode -> (clock, h front, sync, back, v front, sync, back), None where refused; `timings` gets
    each mode's source ("CTA-861 VIC 16", "CVT-RBv1")."""
    out = {}
    for line in run([cvt_modes] + modes).splitlines():
        f = line.split()
        if f[1] == "refused:":
            out[f[0]] = None
        else:
            out[f[0]] = tuple(int(x) for x in f[1:8])
            if timings is not None:
                timings[f[0]] = " ".join(f[8:])
    return out


def edid_decode(args):
    o = run(["edid-decode"] + args)
    clk = round(float(re.search(r"([\d.]+) MHz", o).group(1)) * 1e6)
    h = re.search(r"Hfront\s+(\d+) Hsync\s+(\d+) Hback\s+(\d+)", o).groups()
    v = re.search(r"Vfront\s+(\d+) Vsync\s+(\d+) Vback\s+(\d+)", o).groups()
    w, hh = map(int, re.search(r"\s(\d+)x(\d+)\s", o).groups())
    return (w, hh), (clk,) + tuple(int(x) for x in h + v)


# edid-decode's DMT table differs by a line from Linux drm_edid.c's (drm_dmt_modes) for these two; the
# model agrees with drm_edid.c: 0x43 V 3/4/75 (1474 lines; edid-decode 3/4/74), 0x4b V 3/4/78 (edid-decode
# 2/3/78). Both are 120 Hz RBv1 timings whose clock (356.5, 380.5 MHz) only drm_edid.c's totals give.
DMT_TABLE_DIFFERS = {"1856x1392@120-rb1": (356500000, 48, 32, 80, 3, 4, 74),
                     "1920x1440@120-rb1": (380500000, 48, 32, 80, 2, 3, 78)}


def expected_difference(mode, ours, theirs):
    """A documented difference, or None."""
    if DMT_TABLE_DIFFERS.get(mode) == theirs:
        return "edid-decode's DMT table (0x43, 0x4b)"
    w, rest = mode.split("x")
    h = rest.split("@")[0]
    if (w, h) == ("1360", "768") and mode.endswith("-rb1") and ours[5] == 5 and theirs[5] == 10:
        return "1360x768 RBv1 sync"
    if mode.endswith("-rb2") and ours[1:] == theirs[1:] and ours[0] - theirs[0] == 1000 and ours[0] % 1000 == 0:
        return "RBv2 whole-kHz clock"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cvt-modes", required=True)
    ap.add_argument("--full", action="store_true")
    a = ap.parse_args()
    if not shutil.which("edid-decode"):
        print("edid-decode is not installed (Debian package edid-decode): skipped")
        return 77
    bad, counts, n = [], {}, 0

    def compare(mode, ours, theirs, what):
        nonlocal n
        n += 1
        if ours == theirs:
            return
        why = expected_difference(mode, ours, theirs)
        if why:
            counts[why] = counts.get(why, 0) + 1
        else:
            bad.append(f"{mode}: model {ours}, {what} {theirs}")

    timings = {}
    named = model(a.cvt_modes, [], timings)
    for name, ours in named.items():
        timing = timings[name]
        if timing.startswith("CTA-861 VIC "):
            vic = timing.split()[-1]
            compare(name, ours, edid_decode(["--vic", vic])[1], f"edid-decode --vic {vic}")
        else:
            w, rest = name.split("x")
            h, r = rest.split("@")
            rb = CVT_NAMED[name]
            if timing != f"CVT-RBv{rb}":
                bad.append(f"{name}: model {timing}, expected CVT-RBv{rb}")
            compare(name, ours, edid_decode(["--cvt", f"w={w},h={h},fps={r},rb={rb}"])[1], "edid-decode --cvt")
    missing = set(CVT_NAMED) - set(named)
    if missing:
        bad.append(f"named CVT modes missing: {sorted(missing)}")

    for i in DMT_IDS:
        (w, h), theirs = edid_decode(["--dmt", hex(i)])
        o = run(["edid-decode", "--dmt", hex(i)])
        r = round(float(re.search(r"([\d.]+) Hz", o).group(1)))
        mode = f"{w}x{h}@{r}-rb{2 if theirs[1] == 8 else 1}"
        compare(mode, model(a.cvt_modes, [mode])[mode], theirs, f"edid-decode --dmt {hex(i)}")

    formats = list(COMMON)
    rates = list(range(24, 241, 24)) if not a.full else list(range(24, 241, 7)) + [60, 120, 144, 240]
    if a.full:
        rnd = random.Random(7)
        formats += [(rnd.randrange(40, 960) * 8, rnd.randrange(200, 4321)) for _ in range(40)]
    grid = [f"{w}x{h}@{r}-rb{v}" for w, h in formats for r in rates for v in (1, 2)]
    ours = model(a.cvt_modes, grid)
    for mode in grid:
        if ours[mode] is None:  # refused: the 32-bit pixel clock (8K at the top rates)
            continue
        w, rest = mode.split("x")
        h, rr = rest.split("@")
        r, v = rr.split("-rb")
        compare(mode, ours[mode], edid_decode(["--cvt", f"w={w},h={h},fps={r},rb={v}"])[1], "edid-decode --cvt")

    if shutil.which("cvt"):
        o = run(["cvt", "-r", "2560", "1440", "60"])
        f = re.search(r'Modeline "\S+"\s+([\d.]+)\s+(\d+) (\d+) (\d+) (\d+)\s+(\d+) (\d+) (\d+) (\d+)', o).groups()
        clk, hd, hss, hse, ht, vd, vss, vse, vt = float(f[0]), *map(int, f[1:])
        theirs = (round(clk * 1e6), hss - hd, hse - hss, ht - hse, vss - vd, vse - vss, vt - vse)
        compare("2560x1440@60", named["2560x1440@60"], theirs, "xcvt cvt -r")
    else:
        print("xcvt's cvt is not installed: its check skipped")

    for why, k in counts.items():
        print(f"expected difference, {why}: {k}")
    for b in bad:
        print("DIFFERENT", b)
    print(f"{n} compared, {len(bad)} unexpected differences")
    if counts.get("1360x768 RBv1 sync", 0) == 0:
        print("DIFFERENT the 1360x768 RBv1 sync difference did not show: is the grid still covering it?")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
