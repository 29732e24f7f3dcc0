#!/usr/bin/env python3
"""Regenerates the generated blocks of the pages in docs/ and docs/scenarios/.

    workbench/gen_docs.py [--gpumodel BIN] [--check]

Two kinds of block, each between an opening and a closing HTML comment that the author writes:

  <!-- params: PREFIX ... -->  ...  <!-- /params -->
      A table of the platform parameters (`gpumodel --list-params-json`, "platform") whose names start
      with one of the prefixes, in the order of the prefixes, then by name. A parameter belongs to the
      block with its longest matching prefix, so a page may claim `gpu.kmd_` while another claims `gpu.`.

  <!-- scenario-keys: NAME -->  ...  <!-- /scenario-keys -->
      A table of scenario NAME's own keys (`gpumodel --list-params-json`, "scenarios"): every scenario
      has a page docs/scenarios/<name>.md with this block.

  <!-- regs: FILE NAME ... -->  ...  <!-- /regs -->
      A table of register constants of FILE (a header under the source tree, e.g.
      hw_model/gpu/regs.h): offset, name and the header's comment on it.

  <!-- platform: NAME -->  ...  <!-- /platform -->
      A table of the platform file platforms/NAME.ini (`gpumodel --list-platforms-json`, the binary's
      own reader): every key it sets, in file order, with its value and the source written above it.

Rules, checked on every run: every platform parameter is in exactly one block; every prefix matches a
parameter; no prefix is claimed twice; every named register exists; every register of a file some
block names (a constant whose comment starts with its access, RO/RW/W/R and a width) is in exactly
one block; every platform file is in exactly one platform block, and every platform block names one.

Without --check the blocks are rewritten in place. With --check nothing is written: the script names
every page whose blocks are stale and every rule broken, and exits 1 if there is any. Exit 2: the
binary or a page could not be read.
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")

BLOCK = re.compile(r"(<!-- (params|regs|scenario-keys|platform):([^>]*?)-->\n)(.*?)(<!-- /\2 -->)", re.S)
# `constexpr uint64_t kName = 0x0100;  // RW 64: ...` (also `static constexpr`, other integer types)
CONST = re.compile(r"^\s*(?:static\s+)?constexpr\s+[\w:]+\s+(k\w+)\s*=\s*([^;]+);\s*(?://\s?(.*))?$")
COMMENT_ONLY = re.compile(r"^(\s*)//\s?(.*)$")
ACCESS = re.compile(r"^(RO|RW|W|R) ?(8|16|32|64)\b")


def fail(message):
    print("gen_docs: " + message, file=sys.stderr)
    sys.exit(2)


def cell(text):
    """A Markdown table cell: no pipe or line break splits it, no `<word` reads as an HTML tag, no `*`
    starts emphasis."""
    text = " ".join(str(text).split())
    text = text.replace("|", "\\|").replace("*", "\\*")
    return re.sub(r"<(?=[A-Za-z/!?])", "&lt;", text)


def load_params(binary):
    try:
        out = subprocess.run([binary, "--list-params-json"], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        fail(f"cannot run '{binary} --list-params-json': {e}")
    try:
        doc = json.loads(out)
        return doc["platform"], {s["name"]: s["params"] for s in doc["scenarios"]}
    except (ValueError, KeyError) as e:
        fail(f"'{binary} --list-params-json' did not print the expected JSON: {e}")


def load_platforms(binary):
    """name -> its entries [{key, value, source}], as the binary reads platforms/NAME.ini."""
    try:
        out = subprocess.run([binary, "--list-platforms-json"], check=True, capture_output=True, text=True).stdout
        return {p["name"]: p["entries"] for p in json.loads(out)}
    except (OSError, subprocess.CalledProcessError) as e:
        fail(f"cannot run '{binary} --list-platforms-json': {e}")
    except (ValueError, KeyError) as e:
        fail(f"'{binary} --list-platforms-json' did not print the expected JSON: {e}")


def platform_table(entries):
    rows = ["| key | value | source |", "| --- | --- | --- |"]
    for e in entries:
        rows.append(f"| `{e['key']}` | `{cell(e['value'])}` | {cell(e['source'])} |")
    return "\n".join(rows) + "\n"


_registers = {}  # header path -> its register constants, read once


def load_registers(path):
    """name -> (value as written, comment) for the register constants of a header, in file order."""
    if path in _registers:
        return _registers[path]
    try:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail(f"cannot read {path}: {e}")
    regs = {}
    i = 0
    while i < len(lines):
        m = CONST.match(lines[i])
        i += 1
        if not m:
            continue
        name, value, comment = m.group(1), m.group(2).strip(), (m.group(3) or "").strip()
        if comment:
            # A comment carried on below, aligned with the first line's `//`, belongs to this constant.
            column = lines[i - 1].index("//")
            while i < len(lines):
                c = COMMENT_ONLY.match(lines[i])
                if not c or len(c.group(1)) != column:
                    break
                comment += " " + c.group(2).strip()
                i += 1
        regs[name] = (value, comment)
    _registers[path] = regs
    return regs


def params_table(params):
    rows = ["| parameter | default | allowed | source |", "| --- | --- | --- | --- |"]
    for p in params:
        default = f"`{p['default']}`" + (f" {p['unit']}" if p["unit"] else "")
        rows.append(f"| `{p['name']}` | {cell(default)} | {cell(p['allowed'])} | {cell(p['source'])} |")
    return "\n".join(rows) + "\n"


def regs_table(path, names, problems, where):
    regs = load_registers(path)
    rows = ["| offset | register | access and meaning |", "| --- | --- | --- |"]
    for n in names:
        if n not in regs:
            problems.append(f"{where}: {path} has no register {n}")
            continue
        value, comment = regs[n]
        value = re.sub(r"(?<=[0-9A-Fa-f])[uUlL]+$", "", value)  # 0xF000'0000ull -> 0xF000'0000
        rows.append(f"| {cell(value)} | `{n}` | {cell(comment) or '—'} |")
    return "\n".join(rows) + "\n"


def main():
    ap = argparse.ArgumentParser(description="Regenerate the parameter and register tables of docs/*.md.")
    ap.add_argument("--gpumodel", default=os.environ.get("GPUMODEL_BIN", os.path.join(ROOT, "build", "gpumodel")),
                    help="the gpumodel binary (default: $GPUMODEL_BIN, else build/gpumodel)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page is stale or a rule is broken")
    args = ap.parse_args()

    params, scenarios = load_params(args.gpumodel)
    platforms = load_platforms(args.gpumodel)
    try:
        pages = sorted(f for f in os.listdir(DOCS) if f.endswith(".md"))
        pages += sorted("scenarios/" + f for f in os.listdir(os.path.join(DOCS, "scenarios")) if f.endswith(".md"))
        texts = {}
        for page in pages:
            with open(os.path.join(DOCS, page), encoding="utf-8") as f:
                texts[page] = f.read()
    except OSError as e:
        fail(f"cannot read the pages: {e}")

    problems = []
    # Every params block's prefixes: (page, block index) -> prefixes; prefix -> its blocks.
    blocks, claims = {}, {}
    for page in pages:
        for k, m in enumerate(b for b in BLOCK.finditer(texts[page]) if b.group(2) == "params"):
            prefixes = m.group(3).split()
            if not prefixes:
                problems.append(f"docs/{page}: a params block names no prefix")
            blocks[(page, k)] = prefixes
            for p in prefixes:
                claims.setdefault(p, []).append((page, k))
    for p, owners in sorted(claims.items()):
        if len(owners) > 1:
            problems.append(f"prefix '{p}' is claimed by more than one block: " +
                            ", ".join(f"docs/{pg}" for pg, _ in owners))

    # Each parameter to the block of its longest matching prefix.
    members = {b: [] for b in blocks}
    used = set()
    for prm in params:
        matching = [p for p in claims if prm["name"].startswith(p)]
        if not matching:
            problems.append(f"parameter {prm['name']} is on no page (no params block claims a prefix of it)")
            continue
        best = max(matching, key=len)
        used.add(best)
        members[claims[best][0]].append((blocks[claims[best][0]].index(best), prm["name"], prm))
    for p in sorted(set(claims) - used):
        problems.append(f"prefix '{p}' ({', '.join('docs/' + pg for pg, _ in claims[p])}) matches no parameter "
                        "(or only parameters a longer prefix claims)")

    # Registers: every one of a named file in exactly one block.
    reg_owner = {}
    for page in pages:
        for m in BLOCK.finditer(texts[page]):
            if m.group(2) != "regs":
                continue
            words = m.group(3).split()
            if not words:
                problems.append(f"docs/{page}: a regs block names no file")
                continue
            for n in words[1:]:
                reg_owner.setdefault((words[0], n), []).append(page)
    for path in sorted({f for f, _ in reg_owner}):
        for n, (_, comment) in load_registers(path).items():
            owners = reg_owner.get((path, n), [])
            if not owners and ACCESS.match(comment):
                problems.append(f"register {n} of {path} is on no page")
            if len(owners) > 1:
                problems.append(f"register {n} of {path} is on more than one page: " +
                                ", ".join(f"docs/{pg}" for pg in owners))

    # Every scenario has its page, with its keys block.
    for name in scenarios:
        page = f"scenarios/{name}.md"
        if page not in texts or f"<!-- scenario-keys: {name} -->" not in texts[page]:
            problems.append(f"scenario {name} has no page docs/{page} with a '<!-- scenario-keys: {name} -->' block")

    # Which adapter drives the panel, and why, is said where a user reads a scenario: on its page (a
    # "**The panel.**" paragraph) and in every shipped scenario file's header comment ("# The panel:").
    for name in scenarios:
        page = f"scenarios/{name}.md"
        if page in texts and "**The panel.**" not in texts[page]:
            problems.append(f"docs/{page}: no '**The panel.**' paragraph (which adapter drives the panel, why, "
                            "and what naming another changes)")
    for ini in sorted(glob.glob(os.path.join(ROOT, "scenarios", "*.ini"))):
        with open(ini, encoding="utf-8") as f:
            header = []
            for line in f:
                if not line.startswith("#"):
                    break
                header.append(line)
        if not any(line.startswith("# The panel:") and len(line.strip()) > len("# The panel:") + 20 for line in header):
            problems.append(f"scenarios/{os.path.basename(ini)}: no '# The panel:' line in its header comment "
                            "(which adapter drives the panel, why, and what naming another changes)")

    # Every platform file in exactly one platform block.
    platform_blocks = {}
    for page in pages:
        for m in BLOCK.finditer(texts[page]):
            if m.group(2) == "platform":
                platform_blocks.setdefault(" ".join(m.group(3).split()), []).append(page)
    for name in sorted(platforms):
        if name not in platform_blocks:
            problems.append(f"platform {name} (platforms/{name}.ini) is on no page: add a "
                            f"'<!-- platform: {name} -->' block to docs/calibration.md")
        elif len(platform_blocks[name]) > 1:
            problems.append(f"platform {name} has more than one block: " +
                            ", ".join(f"docs/{pg}" for pg in platform_blocks[name]))

    stale = []
    for page in pages:
        counter = [0]

        def render(m, page=page, counter=counter):
            kind, words = m.group(2), m.group(3).split()
            if kind == "scenario-keys":
                name = words[0] if words else ""
                if name not in scenarios:
                    problems.append(f"docs/{page}: no scenario '{name}' (scenario-keys block)")
                    return m.group(0)
                body = params_table(scenarios[name]) if scenarios[name] else "(no keys of its own)\n"
            elif kind == "platform":
                name = " ".join(words)
                if name not in platforms:
                    problems.append(f"docs/{page}: no platform '{name}' (platform block)")
                    return m.group(0)
                body = platform_table(platforms[name])
            elif kind == "params":
                key = (page, counter[0])
                counter[0] += 1
                body = params_table([prm for _, _, prm in sorted(members[key], key=lambda t: t[:2])])
            else:
                body = regs_table(words[0], words[1:], problems, f"docs/{page}") if words else ""
            return m.group(1) + body + m.group(5)

        new = BLOCK.sub(render, texts[page])
        if new != texts[page]:
            stale.append(page)
            if not args.check:
                with open(os.path.join(DOCS, page), "w", encoding="utf-8") as f:
                    f.write(new)

    for page in stale:
        print(f"docs/{page}: " + ("stale: its generated tables differ from the declarations "
                                  "(run workbench/gen_docs.py)" if args.check else "rewritten"))
    for p in problems:
        print("gen_docs: " + p)
    if problems or (args.check and stale):
        return 1
    if args.check:
        print(f"gen_docs: {len(pages)} pages current; {len(params)} platform parameters, each on one page; "
              f"{len(platforms)} platform files, each on one page")
    return 0


if __name__ == "__main__":
    sys.exit(main())
