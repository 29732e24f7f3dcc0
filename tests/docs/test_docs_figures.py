#!/usr/bin/env python3
"""The figure check itself: a page quoting a figure the binary does not give fails, the right figure
passes, a metric the run does not have is bad input, and the rewrite puts the binary's figure in.

    tests/docs/test_docs_figures.py --gpumodel BIN
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "workbench", "docs_figures.py")


def run(binary, page, *extra):
    return subprocess.run([sys.executable, TOOL, "--gpumodel", binary, *extra, page], capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpumodel", required=True)
    a = ap.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "page.markdown")

        def write(text):
            with open(page, "w", encoding="utf-8") as f:
                f.write(text)

        # The rewrite fills in the binary's figure; --check then passes.
        write("x <!-- fig: mmio_roundtrip | cpu_mmio_read_ns -->?<!-- /fig --> y\n")
        r = run(a.gpumodel, page)
        text = open(page, encoding="utf-8").read()
        if r.returncode != 0 or "-->?<" in text:
            failures.append(f"the rewrite did not fill the figure in (exit {r.returncode}): {text!r} {r.stderr}")
        good = text
        r = run(a.gpumodel, page, "--check")
        if r.returncode != 0:
            failures.append(f"a current figure failed the check: {r.stdout} {r.stderr}")
        # One digit changed: stale, named with the page's and the binary's text.
        figure = good.split("-->")[1].split("<")[0]
        wrong = figure.replace(figure.strip()[0], "9" if figure.strip()[0] != "9" else "8", 1)
        write(good.replace("-->" + figure + "<", "-->" + wrong + "<"))
        r = run(a.gpumodel, page, "--check")
        if r.returncode != 1 or wrong not in r.stdout or figure not in r.stdout:
            failures.append(f"a wrong figure '{wrong}' (binary: '{figure}') was not reported: exit {r.returncode} {r.stdout}")
        # Only the last digit changed (a figure that drifted in its fourth significant digit): stale too.
        digits = [i for i, c in enumerate(figure) if c.isdigit()]
        last = digits[-1]
        drift = figure[:last] + ("1" if figure[last] != "1" else "2") + figure[last + 1:]
        write(good.replace("-->" + figure + "<", "-->" + drift + "<"))
        r = run(a.gpumodel, page, "--check")
        if r.returncode != 1 or drift not in r.stdout:
            failures.append(f"a figure '{drift}' off in its last digit (binary: '{figure}') passed: exit {r.returncode}")
        # The same figure in another unit is another text: stale too.
        write(good.replace("cpu_mmio_read_ns -->", "cpu_mmio_read_ns us -->"))
        r = run(a.gpumodel, page, "--check")
        if r.returncode != 1:
            failures.append(f"a figure in ns under a µs marker passed: exit {r.returncode}")
        # The µs marker shows the ns figure divided by 1000 (the unit scales the value, not only the label).
        write(good.replace("cpu_mmio_read_ns -->", "cpu_mmio_read_ns us -->"))
        run(a.gpumodel, page)
        in_us = open(page, encoding="utf-8").read().split("-->")[1].split("<")[0]
        ns_value = float(figure.split()[0].replace(",", ""))
        us_value = float(in_us.split()[0].replace(",", ""))
        if not in_us.endswith(" µs") or abs(us_value * 1000 - ns_value) > 1.0:
            failures.append(f"the µs figure '{in_us}' is not the ns figure '{figure}' / 1000")
        # A metric the run does not have: bad input, exit 2, named.
        write("<!-- fig: mmio_roundtrip | no_such_metric_ns -->1 ns<!-- /fig -->\n")
        r = run(a.gpumodel, page, "--check")
        if r.returncode != 2 or "no_such_metric_ns" not in r.stderr:
            failures.append(f"an unknown metric was not refused: exit {r.returncode} {r.stderr}")
        # A difference of two metrics is the first less the second, in the first one's unit (from the
        # binary's own two figures in ns: a sum, or the first alone, would give another text).
        write("<!-- fig: mmio_roundtrip | gpu_read_tlb_miss_ns ns -->?<!-- /fig --> "
              "<!-- fig: mmio_roundtrip | gpu_read_roundtrip_ns ns -->?<!-- /fig --> "
              "<!-- fig: mmio_roundtrip | gpu_read_tlb_miss_ns - gpu_read_roundtrip_ns ns -->?<!-- /fig -->\n")
        run(a.gpumodel, page)
        texts = [t.split("<")[0] for t in open(page, encoding="utf-8").read().split("-->")[1::2]]
        miss, hit, diff = (float(t.split()[0].replace(",", "")) for t in texts)
        if not texts[2].endswith(" ns") or abs((miss - hit) - diff) > 0.15:
            failures.append(f"'{texts[2]}' is not '{texts[0]}' less '{texts[1]}'")
        # A number term, and another run's metric: mmio_roundtrip with a 1,000 ns slower BAR0 read against
        # the defaults differs by the 1,000 ns (the read's one crossing of the BAR: the parameter itself),
        # and the default read less 1000 is what the binary gives less 1000.
        write("<!-- fig: mmio_roundtrip --gpu.bar0_read_latency_ns=1540 | cpu_mmio_read_ns - [mmio_roundtrip]cpu_mmio_read_ns ns -->?<!-- /fig --> "
              "<!-- fig: mmio_roundtrip | cpu_mmio_read_ns - 1000 ns -->?<!-- /fig -->\n")
        r = run(a.gpumodel, page)
        texts = [t.split("<")[0] for t in open(page, encoding="utf-8").read().split("-->")[1::2]]
        if r.returncode != 0 or texts[0] != "1,000 ns" or abs(float(texts[1].split()[0]) - (float(figure.split()[0].replace(",", "")) - 1000)) > 0.5:
            failures.append(f"another run's metric or a number as a term: {texts} (exit {r.returncode}, {r.stderr})")
        # Precedence and parentheses: (miss - hit) * 2 / 4 is half the difference; miss - hit * 2 is not.
        write("<!-- fig: mmio_roundtrip | ( gpu_read_tlb_miss_ns - gpu_read_roundtrip_ns ) * 2 / 4 ns -->?<!-- /fig --> "
              "<!-- fig: mmio_roundtrip | gpu_read_tlb_miss_ns - gpu_read_roundtrip_ns * 2 ns -->?<!-- /fig -->\n")
        r = run(a.gpumodel, page)
        texts = [t.split("<")[0] for t in open(page, encoding="utf-8").read().split("-->")[1::2]]
        half, mixed = (float(t.split()[0].replace(",", "")) for t in texts)
        if r.returncode != 0 or abs(half - (miss - hit) / 2) > 0.15 or abs(mixed - (miss - 2 * hit)) > 0.5:
            failures.append(f"precedence or parentheses: {texts} for miss {miss}, hit {hit} (exit {r.returncode}, {r.stderr})")
        # A word between metrics that is no operator, an unclosed parenthesis, a division by zero, an
        # operator where a term belongs, a parenthesis closed by a metric instead of ')', a text in an
        # expression: bad input, exit 2, named.
        for bad_spec, why in (("gpu_read_tlb_miss_ns ^ gpu_read_roundtrip_ns", "+ - * /"),
                              ("( gpu_read_tlb_miss_ns - gpu_read_roundtrip_ns", "+ - * /"),
                              ("gpu_read_tlb_miss_ns / 0", "division by zero"),
                              ("gpu_read_tlb_miss_ns - * gpu_read_roundtrip_ns", "+ - * /"),
                              ("( gpu_read_tlb_miss_ns - gpu_read_roundtrip_ns gpu_read_roundtrip_ns", "+ - * /"),
                              ("verdict - 1", "'verdict' is not a number")):
            write(f"<!-- fig: mmio_roundtrip | {bad_spec} -->1<!-- /fig -->\n")
            r = run(a.gpumodel, page, "--check")
            if r.returncode != 2 or why not in r.stderr:
                failures.append(f"'{bad_spec}' was not refused: exit {r.returncode} {r.stderr}")
        # A run only another figure's term names, its overrides joined by commas: run too (1,000 ns slower).
        write("<!-- fig: mmio_roundtrip | [mmio_roundtrip,--gpu.bar0_read_latency_ns=1540,--gpu.bar0_write_latency_ns=20]"
              "cpu_mmio_read_ns - cpu_mmio_read_ns ns -->?<!-- /fig -->\n")
        r = run(a.gpumodel, page)
        texts = [t.split("<")[0] for t in open(page, encoding="utf-8").read().split("-->")[1::2]]
        if r.returncode != 0 or texts != ["1,000 ns"]:
            failures.append(f"a run named only in brackets: {texts} (exit {r.returncode}, {r.stderr})")
        # Members of structured metrics, two deep (throughput.node1.during_pct, in %), and a unit from the
        # structure's name (present_to_display_ms.mean in ms, alone or in parentheses), each the results' own.
        results = os.path.join(tmp, "r.json")
        want = {}
        for name, args in (("tdr_engine_reset", []), ("frame_loop", ["--workload.frames=3"])):
            subprocess.run([a.gpumodel, os.path.join(ROOT, "scenarios", name + ".ini"), *args, "--quiet", "--results",
                            results], capture_output=True, check=False)
            with open(results, encoding="utf-8") as f:
                want[name] = json.load(f)["metrics"]
        write("<!-- fig: tdr_engine_reset | throughput.node1.during_pct -->?<!-- /fig --> "
              "<!-- fig: frame_loop --workload.frames=3 | present_to_display_ms.mean -->?<!-- /fig --> "
              "<!-- fig: frame_loop --workload.frames=3 | ( present_to_display_ms.mean + frame_time_ms.mean ) / 2 -->?<!-- /fig -->\n")
        r = run(a.gpumodel, page)
        texts = [t.split("<")[0] for t in open(page, encoding="utf-8").read().split("-->")[1::2]]
        fl = want["frame_loop"]
        expect = ((want["tdr_engine_reset"]["throughput"]["node1"]["during_pct"], " %"),
                  (fl["present_to_display_ms"]["mean"], " ms"),
                  ((fl["present_to_display_ms"]["mean"] + fl["frame_time_ms"]["mean"]) / 2, " ms"))
        if r.returncode != 0 or len(texts) != 3 or any(
                not t.endswith(unit) or abs(float(t.split()[0].replace(",", "")) - v) > abs(v) * 1e-3
                for t, (v, unit) in zip(texts, expect)):
            failures.append(f"structured metrics: {texts} for {expect} (exit {r.returncode}, {r.stderr})")
        # A path in a run's overrides is the repository root's, wherever the check runs from; the binary's
        # path is the caller's (here relative to another directory than the root).
        elsewhere = os.path.join(tmp, "elsewhere")
        os.makedirs(elsewhere)
        write("<!-- fig: presentmon_replay --workload.presentmon=workloads/captures/test_case_5.csv | frame_time_ms.n int -->?<!-- /fig -->\n")
        r = subprocess.run([sys.executable, TOOL, "--gpumodel", os.path.relpath(os.path.abspath(a.gpumodel), elsewhere), page],
                           capture_output=True, text=True, cwd=elsewhere)
        texts = [t.split("<")[0] for t in open(page, encoding="utf-8").read().split("-->")[1::2]]
        if r.returncode != 0 or not texts[0].isdigit():
            failures.append(f"a run with a relative path, checked from elsewhere: {texts} (exit {r.returncode}, {r.stderr[-400:]})")
        # A block: generated rows, stale when one changes.
        write("<!-- figures: mmio_roundtrip | cpu_mmio_read_ns gpu_read_roundtrip_ns -->\n<!-- /figures -->\n")
        run(a.gpumodel, page)
        block = open(page, encoding="utf-8").read()
        if block.count("| `") != 2:
            failures.append(f"the block did not get one row per metric: {block!r}")
        # A block's metric may be another run's, too: that run is run.
        write("<!-- figures: mmio_roundtrip | [mmio_roundtrip,--gpu.bar0_read_latency_ns=1540]cpu_mmio_read_ns -->\n<!-- /figures -->\n")
        r = run(a.gpumodel, page)
        other = open(page, encoding="utf-8").read()
        if r.returncode != 0 or "| `[mmio_roundtrip,--gpu.bar0_read_latency_ns=1540]cpu_mmio_read_ns` | " not in other:
            failures.append(f"a block row of another run: exit {r.returncode} {r.stderr} {other!r}")
        write(block.replace("| `gpu_read_roundtrip_ns` | ", "| `gpu_read_roundtrip_ns` | 1"))
        if run(a.gpumodel, page, "--check").returncode != 1:
            failures.append("a changed row of a block passed the check")
    for f in failures:
        print("FAIL: " + f)
    print(f"test_docs_figures: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
