# Writes tests/golden/scenario_results.json: each scenario's results and VCD hash (FNV-1a 64 without
# the $date section) from the current build, for tests/test_golden.cpp. Run from the repository root after
# building (./build/gpumodel, or the binary given as the first argument); only for a deliberate change of results.
import json, subprocess, hashlib, sys
# Every scenario file, each with its own INI (a shorter workload where the default takes seconds).
cases = {
 "copy_bandwidth": [], "mmio_roundtrip": [], "fence_signal": [], "conditional_interrupt": [],
 "gpu_wait": [], "fence_race": ["--workload.signals=4000"], "fence_race_no_barrier": ["--workload.signals=4000"],
    "fence_race_log_barrier": ["--workload.signals=4000"],
 "fence_stress": ["--workload.signals=20000", "--vidsch.native_fence_logs=false"],
 "monitored_fence": [], "cross_adapter_fence": [], "fence_log_scan": [],
 "hybrid_present": [], "scanout_underflow": [], "caso_caps": [],
 "eviction_notify": [], "iommu_unmap_notify": [], "paging_va_size": [],
 "tdr_engine_reset": [], "tdr_bad_fence_id": [], "tdr_limit": [], "tdr_paging_hit": [], "tdr_race_window": [],
 "tdr_reset_fails": [], "tdr_shared_pipe": [], "tdr_vidmm_hit": [],
 "frame_loop": ["--workload.frames=120"], "video_playback": ["--workload.frames=60"],
 "hybrid_game": ["--workload.frames=60"], "presentmon_replay": ["--workload.frames=600"],
 "dgpu_runtime_d3": [], "idle_desktop": [],
 "video_playback_laptop": ["--workload.frames=60"], "game_laptop": ["--workload.frames=60"],
}
binary = sys.argv[1] if len(sys.argv) > 1 else "./build/gpumodel"
out = {}
for n, extra in cases.items():
    subprocess.run([binary, f"scenarios/{n}.ini", *extra, "--results", f"/tmp/gold_{n}.json", "--vcd", f"/tmp/gold_{n}.vcd"], check=False, stdout=subprocess.DEVNULL)
    d = json.load(open(f"/tmp/gold_{n}.json"))
    h = 0xcbf29ce484222325
    data = open(f"/tmp/gold_{n}.vcd", "rb").read()
    a = data.index(b"$date"); b = data.index(b"$end", a)
    for c in data[:a] + data[b + 4:]:
        h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
    # Path parameters hold where the checkout is: not part of a result.
    params = {k: v for k, v in d["parameters"].items() if k not in ("workload.file", "workload.presentmon")}
    out[n] = {"args": extra, "parameters": params, "sim_time_ns": d["sim_time_ns"], "metrics": d["metrics"],
              "monitors": d["monitors"], "verdict": d["verdict"], "checks_failed": d["checks_failed"], "vcd_fnv1a64": "%016x" % h}
json.dump(out, open("tests/golden/scenario_results.json", "w"), indent=1, sort_keys=True)
