"""What the workbench tests share: the gpumodel binary under test (--gpumodel, as CTest passes
$<TARGET_FILE:gpumodel>), running a workbench tool as a user does, and checks that count failures
and say what broke. A test exits 1 if any check failed, so CTest reports it."""

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKBENCH = os.path.join(SOURCE_DIR, "workbench")


class Test:
    def __init__(self, name):
        ap = argparse.ArgumentParser()
        ap.add_argument("--gpumodel", required=True, help="the gpumodel binary under test")
        self.args = ap.parse_args()
        self.gpumodel = os.path.abspath(self.args.gpumodel)
        if not os.access(self.gpumodel, os.X_OK):
            print(f"{name}: gpumodel binary '{self.gpumodel}' is not executable (build it first)")
            sys.exit(1)
        self.name = name
        self.failures = 0
        self.checks = 0
        self.t0 = time.monotonic()
        self._tmp = tempfile.TemporaryDirectory(prefix=f"gpumodel-{name}-")
        self.tmp = self._tmp.name

    def check(self, ok, what):
        self.checks += 1
        if not ok:
            self.failures += 1
            print(f"FAIL: {what}")
        return ok

    def tool(self, tool, *args, env_bin=True, cwd=None):
        """python3 workbench/TOOL.py args..., with GPUMODEL_BIN as `gpumodel TOOL` sets it."""
        env = dict(os.environ)
        env.pop("GPUMODEL_BIN", None)
        if env_bin:
            env["GPUMODEL_BIN"] = self.gpumodel
        return subprocess.run([sys.executable, os.path.join(WORKBENCH, tool + ".py"), *args],
                              capture_output=True, text=True, env=env, cwd=cwd or self.tmp)

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def scenario(self, stem):
        return os.path.join(SOURCE_DIR, "scenarios", stem + ".ini")

    def done(self):
        took = time.monotonic() - self.t0
        if self.failures:
            print(f"{self.name}: {self.failures} of {self.checks} checks failed ({took:.1f} s)")
            sys.exit(1)
        print(f"{self.name}: {self.checks} checks passed ({took:.1f} s)")
        sys.exit(0)


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], [dict(zip(rows[0], r)) for r in rows[1:]]


def without_host(path):
    """A merged CSV's rows with the host_ columns dropped: what must be identical between sweeps."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    keep = [i for i, c in enumerate(rows[0]) if not c.startswith("host_")]
    return [[r[i] for i in keep] for r in rows]
