# Writes tests/golden/dgpu_results.json: each dGPU scenario's results and VCD hash (FNV-1a 64 without
# the $date section) from the current build, for tests/test_golden.cpp. Run from the repository root after
# building (./build/gpumodel); only for a deliberate change of results.
import json, subprocess, hashlib, sys
cases = {
 "copy_bandwidth": [], "mmio_roundtrip": [], "fence_signal": [], "conditional_interrupt": [],
 "gpu_wait": [], "fence_race": ["--workload.signals=4000"], "fence_race_no_barrier": ["--workload.signals=4000"],
 "fence_stress": ["--workload.signals=20000"],
}
out = {}
for n, extra in cases.items():
    subprocess.run(["./build/gpumodel", f"scenarios/{n}.ini", *extra, "--results", f"/tmp/gold_{n}.json", "--vcd", f"/tmp/gold_{n}.vcd"], check=False, stdout=subprocess.DEVNULL)
    d = json.load(open(f"/tmp/gold_{n}.json"))
    h = 0xcbf29ce484222325
    data = open(f"/tmp/gold_{n}.vcd", "rb").read()
    a = data.index(b"$date"); b = data.index(b"$end", a)
    for c in data[:a] + data[b + 4:]:
        h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
    out[n] = {"args": extra, "parameters": d["parameters"], "sim_time_ns": d["sim_time_ns"], "metrics": d["metrics"],
              "monitors": d["monitors"], "verdict": d["verdict"], "checks_failed": d["checks_failed"], "vcd_fnv1a64": "%016x" % h}
json.dump(out, open("tests/golden/dgpu_results.json", "w"), indent=1, sort_keys=True)
