#!/usr/bin/env python3
"""check_quotes.py fails each kind of misquotation and passes the forms a faithful quotation takes.

Each case is a one-page guide (a README and one page under docs/) in a temporary folder, checked
against the repository's tests/docs/documents.json: a faithful page must pass, and each mutation of it
must fail: one word of a passage changed or added, a letter's case changed inside it, a passage cut at
a word's middle, the parts of an elision swapped, a section that is no heading, a heading cut short, a
passage put in the mouth of another document. Then the list itself against a document's text: a
passage or a heading the text lacks fails, and an unknown title is bad input.
usage: test_check_quotes.py
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "check_quotes.py")

FAITHFUL = """# Page

The *Native GPU fence object* document sells conditional interrupts as "substantial power savings by
enabling the CPU to enter a low power state when all GPU work is queued"; *Supporting cross-adapter
resource scan-out (CASO)* sells one copy as less "processing, bandwidth, power and latency".

| key | source |
| --- | --- |
| `a` | Q: Native GPU fence object 'Log buffer mechanism': the logs; A: 'always' is the model's own |
| `b` | Q: Native GPU fence object 'Cross-adapter native fences': 'Each GPU gets its own copy of MonitoredValue ... can be allocated in system memory or local memory' |
| `c` | Q: Native GPU fence object: 'upon return from DxgkDdiUpdateMonitoredValue, the OS resamples CurrentValue' |

The CASO support document lets a driver declare its tier "regardless of device configuration". A quotation
in a later sentence is not the document's. "Anything at all" is fine here.
"""

MUTATIONS = {
    "a word of a passage changed": ('"processing, bandwidth, power and latency"',
                                     '"processing, bandwidth, energy and latency"'),
    "a word added to a passage": ('"regardless of device configuration"', '"regardless of the device configuration"'),
    "an elision's parts swapped": ("'Each GPU gets its own copy of MonitoredValue ... can be allocated in system memory "
                                   "or local memory'",
                                   "'can be allocated in system memory or local memory ... Each GPU gets its own copy of "
                                   "MonitoredValue'"),
    "a section that is no heading": ("'Log buffer mechanism'", "'Log buffer mechanisms'"),
    "another document's passage": ('*Supporting cross-adapter\nresource scan-out (CASO)* sells one copy',
                                   '*Allocation notification* sells one copy'),
    "a passage cut at a word's middle": ("the OS resamples CurrentValue'", "the OS resamples CurrentVal'"),
    "a letter's case changed inside": ("the OS resamples CurrentValue'", "the OS resamples currentValue'"),
    "a heading cut short": ("'Log buffer mechanism'", "'Synchronization within the GPU'"),
}


def run(root, *extra):
    return subprocess.run([sys.executable, CHECK, "--root", root, *extra], capture_output=True, text=True)


def page_root(tmp, text):
    root = tempfile.mkdtemp(dir=tmp)
    os.makedirs(os.path.join(root, "docs"))
    with open(os.path.join(root, "README.md"), "w") as f:
        f.write("# Readme\n")
    with open(os.path.join(root, "docs", "guide" + ".md"), "w") as f:  # a page the temporary guide has
        f.write(text)
    return root


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        r = run(page_root(tmp, FAITHFUL))
        if r.returncode != 0 or "6 quotations" not in r.stdout:
            failures.append(f"the faithful page: exit {r.returncode}, wanted 0 and 6 quotations\n{r.stdout}")
        for what, (old, new) in MUTATIONS.items():
            assert old in FAITHFUL, what
            r = run(page_root(tmp, FAITHFUL.replace(old, new)))
            if r.returncode != 1:
                failures.append(f"{what}: exit {r.returncode}, wanted 1\n{r.stdout}")
        # The list against a document's text: the faithful text passes, one without a listed passage fails.
        doc = os.path.join(tmp, "caso.txt")
        text = ("# Supporting cross-adapter resource scan-out (CASO)\n## Pre-CASO performance (2-copy path)\n"
                "Drivers are required to declare support for this feature based on their own adapter capability, "
                "regardless of device configuration, such that the feature value scales across all applicable "
                "hardware configurations, including but not limited to, a single GPU device with dynamic attaching "
                "of additional external GPUs.\nIf the display adapter supports CASO, the system will only undergo "
                "the first copy from render adapter surface to cross-adapter surface, and then scan out from the "
                "cross-adapter surface directly, resulting in reduced processing, bandwidth, power and latency.\n"
                "To mitigate the negative fallback experience, DXGI will call **pfnCheckMultiplaneOverlaySupport** "
                "during buffer creation with the cross-adapter resource as a plane marked with the **StaticCheck** "
                "flag, to verify with high accuracy whether the driver can perform scan-out given the existing known "
                "bandwidth characteristics.\n")
        headings = ["Using CASO to optimize flip presentation model (1-copy path)", "DDI changes and additions for CASO",
                    "Indicating tier support for cross-adapter resources", "Tier 1 support requirements",
                    "Tier 2 support requirements", "Tier 3 support requirements",
                    "Supporting StaticCheck flag for DXGKDDI_CHECKMULTIPLANEOVERLAYSUPPORT3",
                    "HybridIntegrated special case", "Graphics Kernel changes",
                    "DDI impact to presentation optimization", "HLK Testing"]
        text += "".join(f"### {h}\n" for h in headings)
        root = page_root(tmp, FAITHFUL)
        for body, want in ((text, 0), (text.replace("power and latency", "power, latency"), 1),
                           (text.replace("### HLK Testing\n", ""), 1)):
            with open(doc, "w") as f:
                f.write(body)
            r = run(root, "--document", f"Supporting cross-adapter resource scan-out (CASO)={doc}")
            if r.returncode != want:
                failures.append(f"--document: exit {r.returncode}, wanted {want}\n{r.stdout}")
        r = run(root, "--document", f"No such document={doc}")
        if r.returncode != 2:
            failures.append(f"--document with an unknown title: exit {r.returncode}, wanted 2")
    for f in failures:
        print("FAIL " + f)
    print(f"test_check_quotes: {len(MUTATIONS) + 5} cases, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
