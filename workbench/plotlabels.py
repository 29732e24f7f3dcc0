"""Axis labels and units for `gpumodel plot`: a column name becomes words a reader understands and a
unit, and the values a scale chosen by their range.

    signal_to_wake_ns           -> "signal to wake", time in ns  (plotted in µs when the values are 1e3..1e6)
    present_to_scanout_ns.mean  -> "present to scan-out, mean", time in ns
    display.fifo_bytes          -> "display FIFO", bytes         (plotted in KiB, MiB ... by range)
    energy.avg_power_mw         -> "energy average power", power in mW
    link.gen                    -> "link generation", no unit

The unit comes from the name's suffix, the model's own convention: metric names and parameter keys
end in the unit they are given in (_ps _ns _us _ms _s, _bytes _kb _mb (KiB, MiB: the model's _mb
parameters are MiB), _mbps _gbps (decimal MB/s, GB/s: bytes per ns), _mj, _mw, _hz _mhz, _pct,
fps, pJ/bit, mW/GiB). tests/workbench/test_plot_labels.py checks the table against every parameter's
unit in `gpumodel --list-params-json`. Python 3 standard library only."""

import math
import re

# Unit families, each (symbol, size in the family's base unit) from small to large.
TIME = [("ps", 1e-3), ("ns", 1.0), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)]
BYTES = [("B", 1.0), ("KiB", 1024.0), ("MiB", 1024.0**2), ("GiB", 1024.0**3), ("TiB", 1024.0**4)]
RATE = [("B/s", 1.0), ("kB/s", 1e3), ("MB/s", 1e6), ("GB/s", 1e9), ("TB/s", 1e12)]
ENERGY = [("nJ", 1e-9), ("µJ", 1e-6), ("mJ", 1e-3), ("J", 1.0), ("kJ", 1e3)]
POWER = [("µW", 1e-6), ("mW", 1e-3), ("W", 1.0), ("kW", 1e3)]
FREQUENCY = [("Hz", 1.0), ("kHz", 1e3), ("MHz", 1e6), ("GHz", 1e9)]
COUNT = [("", 1.0), ("thousands", 1e3), ("millions", 1e6), ("billions", 1e9)]


class Unit:
    """A column's unit: a family it scales within (or None: fixed, such as % or fps), the size of
    the column's own unit in the family's base, the symbol, and a noun for a name that is only a unit."""

    def __init__(self, family, size, symbol, noun):
        self.family, self.size, self.symbol, self.noun = family, size, symbol, noun

    def __eq__(self, other):
        return isinstance(other, Unit) and (self.family, self.size, self.symbol) == (
            other.family, other.size, other.symbol)

    def __repr__(self):
        return f"Unit({self.symbol!r})"


def _in(family, symbol, noun):
    return Unit(family, dict(family)[symbol], symbol, noun)


# Suffix token (after the last '_') -> the unit.
SUFFIXES = {
    "ps": _in(TIME, "ps", "time"), "ns": _in(TIME, "ns", "time"), "us": _in(TIME, "µs", "time"),
    "ms": _in(TIME, "ms", "time"), "s": _in(TIME, "s", "time"),
    "bytes": _in(BYTES, "B", "bytes"), "kb": _in(BYTES, "KiB", "size"), "mb": _in(BYTES, "MiB", "size"),
    "gb": _in(BYTES, "GiB", "size"),
    "mbps": _in(RATE, "MB/s", "bandwidth"), "gbps": _in(RATE, "GB/s", "bandwidth"),
    "uj": _in(ENERGY, "µJ", "energy"), "mj": _in(ENERGY, "mJ", "energy"), "j": _in(ENERGY, "J", "energy"),
    "mw": _in(POWER, "mW", "power"), "w": _in(POWER, "W", "power"),
    "hz": _in(FREQUENCY, "Hz", "frequency"), "khz": _in(FREQUENCY, "kHz", "frequency"),
    "mhz": _in(FREQUENCY, "MHz", "frequency"), "ghz": _in(FREQUENCY, "GHz", "frequency"),
    "pct": Unit(None, 1.0, "%", "share"),
    "fps": Unit(None, 1.0, "fps", "frame rate"),
}
PER_SECOND = Unit(None, 1.0, "/s", "rate")
# UNIT_per_THING pairs that are a unit of their own (not a UNIT per something counted).
COMPOUND = {("pj", "bit"): Unit(None, 1.0, "pJ/bit", "energy per bit"),
            ("mw", "gib"): Unit(None, 1.0, "mW/GiB", "power per GiB")}
# One-letter units are a unit only as the last of several tokens (fence_s, not s_count or w).
AMBIGUOUS = {"s", "j", "w"}
# A unit token followed by these is a count of the samples, not a value in the unit (copy1_ns.n).
SAMPLE_COUNTS = {"n": "samples", "frames": "frames"}
STATS = {"mean": "mean", "avg": "average", "p50": "median", "p95": "95th percentile",
         "p99": "99th percentile", "max": "max", "min": "min"}
WORDS = {
    "cpu": "CPU", "gpu": "GPU", "dgpu": "dGPU", "igpu": "iGPU", "psr": "PSR", "fifo": "FIFO", "vram": "VRAM",
    "dram": "DRAM", "sysmem": "system memory", "mmu": "MMU", "iommu": "IOMMU", "iotlb": "IOTLB", "tlb": "TLB",
    "pwc": "PWC", "dma": "DMA", "cmp": "CMP", "kmd": "KMD", "tdr": "TDR", "mv": "MV", "cv": "CV",
    "pcie": "PCIe", "mmio": "MMIO", "irq": "IRQ", "isr": "ISR", "dpc": "DPC", "aspm": "ASPM", "va": "VA",
    "bar0": "BAR0", "msi": "MSI", "hw": "HW", "l0s": "L0s", "l1": "L1", "c1": "C1", "c1e": "C1E",
    "c3": "C3", "c6": "C6", "pc0": "PC0", "pc2": "PC2", "pc8": "PC8", "avg": "average", "gen": "generation",
    "scanout": "scan-out", "vidmm": "VidMm", "vidsch": "VidSch", "id": "ID", "rc": "root complex",
    "kb": "KiB", "mb": "MiB", "gib": "GiB", "fps": "frame rate", "s": "second",
}


def _words(tokens):
    return " ".join(WORDS.get(t.lower(), t) for t in tokens if t)


def _split_unit(component):
    """One dotted component's words and unit: 'signal_to_wake_ns' -> ('signal to wake', ns);
    'copy_sysmem_bytes_per_frame' -> ('copy system memory per frame', bytes);
    'cpu_interrupts_per_s' -> ('CPU interrupts', /s); 'scanout_gbps_avg' ->
    ('scan-out average', GB/s); 'underflows' -> ('underflows', None)."""
    tokens = component.split("_")
    lower = [t.lower() for t in tokens]
    if len(tokens) >= 3 and lower[-2] == "per":  # UNIT_per_THING, or a count per THING
        pair = (lower[-3], lower[-1])
        if pair in COMPOUND:
            unit = COMPOUND[pair]
            return _words(tokens[:-3]) or unit.noun, unit
        unit = SUFFIXES.get(lower[-3])
        if unit is not None and lower[-3] != "s":
            return _words((tokens[:-3] or [unit.noun]) + tokens[-2:]), unit
        if lower[-1] == "s":  # a count per second: cpu_interrupts_per_s
            return _words(tokens[:-2]), PER_SECOND
        return _words(tokens), None
    for i in range(len(tokens) - 1, -1, -1):
        unit = SUFFIXES.get(lower[i])
        if unit is None or (lower[i] in AMBIGUOUS and (i != len(tokens) - 1 or i == 0)):
            continue
        words = tokens[:i] + tokens[i + 1:]
        if lower[i] == "fps":  # the frame rate's words name what it is
            return _words(tokens[:i] + ["fps"] + tokens[i + 1:]), unit
        if not tokens[:i]:  # the name starts with its unit: bytes_moved -> "bytes moved"
            return _words([unit.noun] + tokens[i + 1:]), unit
        return _words(words), unit
    return _words(tokens), None


def describe(name):
    """(label, Unit or None) for a column: the words, without the unit, which the caller appends
    as scaled. Dotted components: those before the one carrying the unit join with a space
    (display.fifo_bytes -> 'display FIFO'), those after it are qualifiers after a comma
    (present_to_scanout_ns.mean -> 'present to scan-out, mean'; engine_busy_pct.node 1 (copy) ->
    'engine busy, node 1 (copy)'); a count of the samples (.n) has no unit."""
    parts = name.split(".")
    at, unit = None, None
    for i in range(len(parts) - 1, -1, -1):
        if _split_unit(parts[i])[1] is not None:
            at, unit = i, _split_unit(parts[i])[1]
            break
    if at is None:
        head, tail = [_split_unit(p)[0] for p in parts], []
        last = parts[-1].lower()
        if len(parts) > 1 and (last in STATS or last == "n"):
            head, tail = head[:-1], [STATS.get(last, SAMPLE_COUNTS["n"])]
        return ", ".join([" ".join(head)] + tail), None
    head = " ".join([_split_unit(p)[0] for p in parts[:at]] + [_split_unit(parts[at])[0]])
    after = parts[at + 1:]
    if len(after) == 1 and after[0].lower() in SAMPLE_COUNTS:
        return f"{head}, {SAMPLE_COUNTS[after[0].lower()]}", None
    tail = [STATS.get(p.lower(), _split_unit(p)[0]) for p in after]
    return ", ".join([head] + tail), unit


def choose_scale(unit, values):
    """(symbol, divisor): the unit to plot values in (given in the column's unit) and what to divide
    them by. Within a family, the largest unit the biggest magnitude is at least 1 of, so tick labels
    keep to at most four digits before the point (14,949 ns -> 14.9 µs; 8192 B -> 8 KiB; 999 ns stays
    ns). A fixed unit (%, fps) does not scale; a count (no unit) is shown in thousands, millions ...
    from 10,000 on. All zero (or no values): the column's own unit."""
    magnitude = max((abs(v) for v in values), default=0.0)
    if unit is None:
        if magnitude < 1e4:
            return "", 1.0
        symbol, size = [(s, f) for s, f in COUNT if magnitude >= f][-1]
        return symbol, size
    if unit.family is None or magnitude == 0:
        return unit.symbol, 1.0
    base = magnitude * unit.size
    fits = [(s, f) for s, f in unit.family if base >= f]
    symbol, size = fits[-1] if fits else unit.family[0]
    return symbol, size / unit.size


def axis_label(words, symbol):
    return f"{words} ({symbol})".strip() if symbol else words


def number(x):
    """A scaled value as a tick or legend shows it: up to 4 significant digits, no trailing zeros."""
    text = f"{x:.4g}"
    if "e" in text:
        return f"{x:.6g}"
    return text


def value_text(unit, text):
    """One value as a legend shows it (link.gen = 4, cpu.thread_wake_ns = 3 µs, display.fifo_bytes =
    16 KiB): a number in the unit its own magnitude calls for; anything else as written."""
    try:
        x = float(text)
    except ValueError:
        return text
    if unit is None or not re.fullmatch(r"[-+0-9.eE]+", text.strip()):
        return text
    symbol, divisor = choose_scale(unit, [x])
    return f"{number(x / divisor)} {symbol}".strip()


def log_tics(lo, hi):
    """Tic positions a reader can read on a log axis over [lo, hi] (both above 0): over three decades or
    more, None (gnuplot's 1, 10, 100 ...); over one to three, 1, 2 and 5 in each decade; within one
    decade, round numbers about a sixth of the range apart (4.7 .. 7.0 W: 5, 5.5, 6, 6.5, 7), where
    gnuplot alone would label no tic at all."""
    if hi / lo >= 1000:
        return None
    if hi / lo >= 10:
        return [m * 10.0**k for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
                for m in (1, 2, 5) if lo <= m * 10.0**k <= hi]
    rough = (hi - lo) / 6 or lo
    decade = 10.0 ** math.floor(math.log10(rough))
    step = [m * decade for m in (1, 2, 5, 10) if m * decade >= rough][0]
    first = math.ceil(lo / step - 1e-9)
    return [float(f"{i * step:.12g}") for i in range(first, math.floor(hi / step + 1e-9) + 1)]
