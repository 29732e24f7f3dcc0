"""What the workbench's tools (sweep.py, plot.py, compare.py) share: how a refusal is reported, where
the gpumodel binary is, how a results file's nested values become flat columns, and the merged CSV's
layout. Python 3 standard library only (Debian 12's python3)."""

import math
import os
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
