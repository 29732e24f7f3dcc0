"""What the workbench's tools (sweep.py, plot.py, compare.py) share: how a refusal is reported, where
the gpumodel binary is, how a results file's nested values become flat columns, and the merged CSV's
layout. Python 3 standard library only (Debian 12's python3)."""

import json
import math
import os
import subprocess
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The merged CSV's fixed columns. Between SEED and EXIT_CODE come the sweep's axes (one column each,
# named by the parameter key), after WHY the run's figures; host timings last, prefixed host_.
RUN, POINT, SEED = "run", "point", "seed"
EXIT_CODE, VERDICT, WHY = "exit_code", "verdict", "why"
HOST_PREFIX = "host_"


class BadInput(Exception):
    """Bad input to a tool: one line naming the key, option or file and what is allowed; exit 2."""


def printable(text):
    """Control characters as \\xNN, so a message stays one readable line (as the model's own)."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
                   for c in text)


def echo(text, shown=200):
    """Input as a message shows it: cut after 200 characters, with the whole length (as the model's)."""
    return text if len(text) <= shown else f"{text[:shown]}... ({len(text)} characters)"


MAX_INPUT_BYTES = 1 << 20  # a sweep file or a tolerances file is text of kilobytes; 1 MiB is no typo
# A merged.csv, merged.json or results file: a sweep's runs at a few kilobytes each (the largest sweep a
# sweep file allows, 100,000 runs, stays under it); a bigger file is not one of them.
MAX_DATA_BYTES = 1 << 30


def read_bounded(path, what, limit=MAX_INPUT_BYTES):
    """An input's bytes: a regular file of at most `limit` bytes, else BadInput naming it (a FIFO
    would block, a device or a runaway file would fill the memory)."""
    try:
        st = os.stat(path)
        if not os.path.isfile(path):
            raise BadInput(f"{what} '{echo(path)}': cannot read: not a regular file")
        if st.st_size > limit:
            raise BadInput(f"{what} '{echo(path)}': holds {st.st_size} bytes; allowed: at most {limit}")
        with open(path, "rb") as f:
            raw = f.read(limit + 1)
    except OSError as e:
        raise BadInput(f"{what} '{echo(path)}': cannot read: {e.strerror}")
    if len(raw) > limit:
        raise BadInput(f"{what} '{echo(path)}': holds more than {limit} bytes; allowed: at most {limit}")
    return raw


def fail_bad_input(tool, message):
    print(f"gpumodel {tool}: {printable(message)}", file=sys.stderr)
    sys.exit(2)


def find_gpumodel(option_value):
    """The gpumodel binary: --gpumodel PATH, else $GPUMODEL_BIN (set by `gpumodel sweep`), else
    build/gpumodel under the repository root. An explicit option wins over the environment, so
    `gpumodel sweep --gpumodel OTHER` runs OTHER and not the binary that dispatched."""
    if option_value:
        path, origin = option_value, "--gpumodel"
    elif os.environ.get("GPUMODEL_BIN"):
        path, origin = os.environ["GPUMODEL_BIN"], "GPUMODEL_BIN"
    else:
        path, origin = os.path.join(REPO_ROOT, "build", "gpumodel"), "the default build/gpumodel"
    path = os.path.abspath(path)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise BadInput(f"gpumodel binary '{path}' ({origin}) is not an executable file; build it, "
                       f"or give --gpumodel PATH or GPUMODEL_BIN")
    return path


def flatten(value, prefix, out):
    """Nested objects and arrays become flat keys: {"a": {"mean": 1}} -> "a.mean", [x, y] -> ".0", ".1"."""
    if isinstance(value, dict):  # an empty object or array gives no column
        for k, v in value.items():
            flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            flatten(v, f"{prefix}.{i}" if prefix else str(i), out)
    else:
        out[prefix] = value
    return out


def cell(value):
    """A value as the CSV writes it: JSON's spelling for booleans and null, the shortest repr that
    reads back to the same double for numbers (deterministic: the same results give the same bytes)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def as_number(text):
    """A CSV cell as a float, or None when it is not a number (empty, a word, true/false)."""
    if text is None:
        return None
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return float(text)
    try:
        x = float(text)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def axis_columns(header):
    """The axis columns of a merged CSV: those between `seed` and `exit_code`."""
    try:
        return header[header.index(SEED) + 1:header.index(EXIT_CODE)]
    except ValueError:
        return None


# ----------------------------------------------------------------------------------------------
# "Did you mean": the same matcher as the model's command line (app/suggest.cpp), so a misspelt key
# gets the same suggestion from `gpumodel` and from `gpumodel sweep`.

_STOP_WORDS = {"ns", "us", "ms", "ps", "s", "mw", "mb", "mib", "gib", "kb", "gbps", "mhz", "bytes", "size", "pct",
               "pj", "per", "bit", "count"}


def edit_distance(a, b):
    """Optimal string alignment (Damerau-Levenshtein): insert, delete, substitute, swap neighbours."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def _norm(s):
    return s.lower().replace("-", "_")


def _words(s):
    return [w for w in s.replace(".", " ").replace("_", " ").replace("=", " ").split() if w]


def _section(s):
    return s.split(".", 1)[0] if "." in s else ""


def suggest(word, candidates, limit=3):
    """At most `limit` candidates close to `word`, best first (app/suggest.h says how); [] when none."""
    w, sec = _norm(word), _section(_norm(word))
    all_words = _words(w)
    mine = [x for x in all_words[1 if sec else 0:] if x not in _STOP_WORDS]
    max_edits = 0 if len(w) <= 2 else 1 if len(w) <= 5 else 2 if len(w) <= 10 else 3
    found = []
    for name in dict.fromkeys(candidates):
        n = _norm(name)
        other = 0 if _section(n) == sec else 1
        if n == w:
            found.append((0, 0, 0, other, len(name), name))
            continue
        d = abs(len(w) - len(n))  # at least the difference in length: no table for a long word
        d = d if d > max_edits else edit_distance(w, n)
        if d <= max_edits:
            found.append((1, 0, d, other, len(name), name))
            continue
        past = n.index(".") + 1 if "." in n else 0
        if (n.startswith(w) and len(w) >= 3 and len(w) > past) or (w.startswith(n) and len(n) >= 3 and len(n) > past):
            found.append((1, 1, abs(len(w) - len(n)), other, len(name), name))
            continue
        if not mine:
            continue
        theirs = set(_words(n))
        shared = sum(1 for x in mine if x in theirs)
        if shared and (shared == len(mine) or (sec and not other and 2 * shared >= len(mine))):
            found.append((2, 0, -shared, other, len(name), name))
    if not found:
        return []
    found.sort()
    best, out = found[0], []
    for f in found:
        if len(out) == limit or f[0] != best[0]:
            break
        if f[0] == 1 and f[1] == 0 and best[1] == 0 and f[2] > best[2] + 1:
            continue
        if f[0] == 2 and f[2] > best[2]:
            continue
        out.append(f[5])
    return out


def did_you_mean(names, notes=None):
    """'; did you mean 'a', 'b' or 'c'?' (with a note after a name, from `notes`), '' for none."""
    if not names:
        return ""
    shown = [f"'{n}'" + ((notes or {}).get(n, "")) for n in names]
    return "; did you mean " + (shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]) + "?"


# ----------------------------------------------------------------------------------------------
# Where outputs go by default: under the working directory's build/, never into the source tree.

def in_source_tree(path):
    """`path`'s place in the source tree (relative), or None outside it or in a build directory."""
    rel = os.path.relpath(os.path.realpath(path), os.path.realpath(REPO_ROOT))
    first = rel.split(os.sep, 1)[0]
    if rel == "." or first == ".." or first.startswith("build"):
        return None
    return rel


def default_out(option, *parts):
    """./build/PARTS under the working directory, refused when that is inside the source tree."""
    path = os.path.join(os.getcwd(), "build", *parts)
    rel = in_source_tree(path)
    if rel is not None:
        raise BadInput(f"{option}: the default {os.path.join('build', *parts)} would be in the source tree ({rel}); "
                       f"run from the repository's root or elsewhere, or give {option}")
    return path


# ----------------------------------------------------------------------------------------------
# Outputs: never an input, never each other, in a folder that exists, written whole or not at all.
# The same rules as the model's own outputs (app/cli_files.cpp, hw_model/core/output_file.h).

def same_file(a, b):
    """Whether two paths name one file: the same file (device and inode, links followed) if both
    exist, else the same path once absolute with its links resolved."""
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.realpath(a) == os.path.realpath(b)


def check_outputs(outputs, inputs, may_create=()):
    """Refuses (BadInput) before anything is written: an output (option, path) that is one of the
    inputs (what, path), another output, a directory, or in a folder that does not exist or cannot take
    a new file. `may_create`: folders the tool makes itself (its default under build/)."""
    import tempfile
    seen = []
    for option, path in outputs:
        for what, src in inputs:
            if src and same_file(path, src):
                raise BadInput(f"{option} {path}: is {what} ({src}), which the run reads; name another file")
        for other, earlier in seen:
            if same_file(path, earlier):
                raise BadInput(f"{option} and {other} name the same file {path}; name two files")
        seen.append((option, path))
        if os.path.isdir(path):
            raise BadInput(f"{option} {path}: cannot write: it is a directory")
        folder = os.path.dirname(os.path.abspath(path))
        if any(same_file(folder, d) for d in may_create) and not os.path.exists(folder):
            continue
        if not os.path.isdir(folder):
            raise BadInput(f"{option} {path}: cannot write: no such directory '{os.path.dirname(path) or '.'}'")
        if os.path.exists(path) and not os.path.isfile(path):
            continue  # a device or a pipe: written in place
        try:
            fd, probe = tempfile.mkstemp(prefix=".gpumodel-probe-", dir=folder)
            os.close(fd)
            os.unlink(probe)
        except OSError as e:
            raise BadInput(f"{option} {path}: cannot write: {e.strerror}")


def temp_beside(path):
    """A new empty file beside `path` (same folder, so a rename puts it in place), for an output that
    another program (gnuplot) writes; its path."""
    import tempfile
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".part-", dir=folder)
    os.close(fd)
    return tmp


def put_in_place(tmp, path):
    """Renames a finished temporary file over `path`, with the mode the file had, or a new file's."""
    if os.path.isfile(path):
        mode = os.stat(path).st_mode & 0o7777
    else:
        mask = os.umask(0)
        os.umask(mask)
        mode = 0o666 & ~mask
    os.chmod(tmp, mode)
    os.replace(tmp, os.path.realpath(path) if os.path.islink(path) else path)


def write_whole(option, path, text):
    """Writes `text` to `path` whole or not at all: a temporary file beside it, renamed into place.
    A device or a pipe is written in place. A write error is BadInput naming the option."""
    try:
        if os.path.exists(path) and not os.path.isfile(path):
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            return
        tmp = temp_beside(path)
        try:
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            put_in_place(tmp, path)
        finally:
            if os.path.lexists(tmp):
                os.unlink(tmp)
    except OSError as e:
        raise BadInput(f"{option} {path}: cannot write: {e.strerror}")


# ----------------------------------------------------------------------------------------------
# What the tools that run sweeps share: their run options, and the binary's parameter catalogue.


def add_run_options(ap):
    """--out, --jobs, --slurm, --sbatch-arg, --runs-per-task, --dry-run, --gpumodel: as gpumodel sweep's."""
    ap.add_argument("--out")
    ap.add_argument("--jobs", type=int)
    ap.add_argument("--slurm", action="store_true")
    ap.add_argument("--sbatch-arg", action="append", default=[])
    ap.add_argument("--runs-per-task", type=int)
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--gpumodel")


def check_run_options(ap, a):
    if a.jobs is not None and a.jobs < 1:
        ap.error(f"argument --jobs: {a.jobs} is not allowed; at least 1")
    if a.sbatch_arg and not a.slurm:
        ap.error("argument --sbatch-arg: only with --slurm")
    if a.runs_per_task is not None and not a.slurm:
        ap.error("argument --runs-per-task: only with --slurm")
    if a.runs_per_task is not None and a.runs_per_task < 1:
        ap.error(f"argument --runs-per-task: {a.runs_per_task} is not allowed; at least 1")


def param_catalogue(gpumodel):
    """`gpumodel --list-params-json`: {"platform": [...], "scenarios": [{"name", "params"}, ...]}."""
    try:
        out = subprocess.run([gpumodel, "--list-params-json"], capture_output=True, timeout=60)
        return json.loads(out.stdout)
    except (OSError, subprocess.TimeoutExpired, ValueError) as e:
        raise BadInput(f"'{gpumodel} --list-params-json' did not answer ({e}); is it a gpumodel binary?")
