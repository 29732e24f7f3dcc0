#include "tests/sweep/reduced_runs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "app/cli.h"
#include "scenarios/common/scenario.h"
#include "tests/sweep/sweep_options.h"

namespace fs = std::filesystem;
using gpumodel::ParamSet;
using gpumodel::ParamSpec;

namespace sweep {

namespace {

// The reduced workload: overrides that shrink each scenario's run so a whole sweep takes minutes, by
// scenario name or scenario file stem ("*": every file; a later entry replaces an earlier one's key).
// sim.limit_ms bounds every run in simulated time (a run still busy there fails with "still busy",
// a verdict with a reason); 20 ms is about 3x the longest reduced run (fence_race, 7 ms). An override
// is dropped when its key is the one being swept.
const std::map<std::string, std::vector<std::pair<std::string, std::string>>> kReduced = {
    {"*", {{"sim.limit_ms", "20"}}},
    {"copy_bandwidth", {{"copy.bytes", "65536"}}},            // 16 MiB -> 64 KiB
    {"conditional_interrupt", {{"workload.signals", "20"}}},  // 100 -> 20: still two waiters
    {"fence_race", {{"workload.signals", "2000"}}},           // 100,000 -> 2,000; the bulk copy stays on
    // Without the barrier the file expects lost interrupts, and its verdict fails a run that loses none. At
    // its 64 fences the losses are rare (seed 1: 5,000 signals lose none, 15,000 lose 4, 0.57 s a run, a
    // sixth of the whole sweep's time); 3,000 signals over 8 fences lose 18 to 31 at seeds 1 to 6 in a
    // quarter of the time, so its baseline passes with a margin.
    {"fence_race_no_barrier", {{"workload.signals", "3000"}, {"workload.fences", "8"}, {"sim.limit_ms", "80"}}},
    {"fence_stress", {{"workload.signals", "10000"}, {"bench.switches", "2000"}}},  // 1 M -> 10 k; 2 M switches -> 2 k
    // 120 -> 4 frames; hybrid_present refuses a limit shorter than 4 x (interval + jitter + 2 refreshes)
    // + 100 ms = 367 ms at 60 Hz.
    {"hybrid_present", {{"workload.frames", "4"}, {"sim.limit_ms", "400"}}},
    // 3 -> 2 refreshes measured, after the first frame's start: 34.0 ms simulated at 60 Hz.
    {"scanout_underflow", {{"workload.frames", "2"}, {"sim.limit_ms", "100"}}},
    // 20 -> 3 wait/signal pairs, 1 ms apart: 4 ms simulated.
    {"cross_adapter_fence", {{"workload.signals", "3"}}},
    // 5 s idle time and 8 s gap -> 5 ms and 10 ms; the power-on's 260 ms stays (its verdict checks its stages).
    {"dgpu_runtime_d3",
     {{"gpu.runtime_d3_idle_ms", "5"},
      {"workload.long_gap_ms", "10"},
      {"workload.short_gap_ms", "1"},
      {"sim.limit_ms", "1000"}}},
    // TdrDelay 20 ms -> 2 ms and 1 ms of load after the sequence: about 5 ms of sequence per hang; the
    // limit leaves room for an adapter reset at its longest (cmp.adapter_reset_ms = 4 s), which the
    // adapter-reset files shorten to its shortest, 1 s.
    {"tdr_engine_reset", {{"vidsch.tdr_delay_ms", "2"}, {"workload.after_ms", "1"}, {"sim.limit_ms", "5000"}}},
    {"tdr_paging_hit",
     {{"vidsch.tdr_delay_ms", "2"},
      {"workload.after_ms", "1"},
      {"cmp.adapter_reset_ms", "1000"},
      {"sim.limit_ms", "5000"}}},
    {"tdr_reset_fails",
     {{"vidsch.tdr_delay_ms", "2"},
      {"workload.after_ms", "1"},
      {"cmp.adapter_reset_ms", "1000"},
      {"sim.limit_ms", "5000"}}},
    {"tdr_race_window", {{"vidsch.tdr_delay_ms", "2"}, {"workload.after_ms", "1"}, {"sim.limit_ms", "5000"}}},
    {"tdr_bad_fence_id", {{"vidsch.tdr_delay_ms", "2"}, {"workload.after_ms", "1"}, {"sim.limit_ms", "5000"}}},
    {"tdr_limit", {{"vidsch.tdr_delay_ms", "2"}, {"workload.after_ms", "1"}, {"sim.limit_ms", "5000"}}},
    // Allocation notifications scenarios: 4 MiB allocations (the budget holds two), 1 MiB of paging VA: still four
    // chunks.
    {"eviction_notify",
     {{"workload.alloc_mb", "4"},
      {"vidmm.system_budget_mb", "8"},
      {"kmd.paging_va_answer", "override"},
      {"kmd.paging_va_mb", "1"},
      {"sim.limit_ms", "5000"}}},
    {"iommu_unmap_notify", {{"workload.alloc_mb", "4"}, {"vidmm.system_budget_mb", "8"}, {"sim.limit_ms", "5000"}}},
    {"paging_va_size",
     {{"workload.alloc_mb", "16"},
      {"kmd.paging_va_answer", "override"},
      {"kmd.paging_va_mb", "4"},
      {"sim.limit_ms", "5000"}}},
    // 32 -> 4 rounds; creating 60,000 fences (the maximum) takes about 0.4 s simulated.
    {"fence_log_scan", {{"workload.rounds", "4"}, {"sim.limit_ms", "2000"}}},
    // The frame loops (frame_loop, video_playback, hybrid_game): 3 frames; 200 ms holds three at the
    // slowest shipped rate (video_playback's 24 fps: 125 ms) with the display's latch after them.
    {"frame_loop", {{"workload.frames", "3"}, {"sim.limit_ms", "200"}}},
    // The idle desktop repaints once a second: its third frame starts at 2 s, and three refreshes and 10 ms
    // follow (2023 ms at the laptop's 240 Hz, 2135 ms at the slowest mode's 24 Hz).
    {"idle_desktop", {{"workload.frames", "3"}, {"sim.limit_ms", "2200"}}},
    // The capture's first 6 presents (about 50 ms of dwm's frames at 119.84 Hz).
    {"presentmon_replay", {{"workload.frames", "6"}, {"sim.limit_ms", "200"}}},
};

// Files that run the same scenario driver as another file (the TDR scenarios share one; tdr_engine_reset
// sweeps every key): each sweeps only its scenario's own keys and those of the TDR machinery (the packet
// scheduler, the KMD, the nodes, the adapter reset, the sim limit), not the whole platform again.
const std::map<std::string, std::vector<std::string>> kFocus = {
    {"tdr_paging_hit", {"vidsch.", "kmd.", "node.", "cmp.adapter_reset_ms", "gpu.", "sim."}},
    {"tdr_reset_fails", {"vidsch.", "kmd.", "node.", "cmp.adapter_reset_ms", "gpu.", "sim."}},
    {"tdr_race_window", {"vidsch.", "kmd.", "node.", "cmp.adapter_reset_ms", "gpu.", "sim."}},
    {"tdr_bad_fence_id", {"vidsch.", "kmd.", "node.", "cmp.adapter_reset_ms", "gpu.", "sim."}},
    {"tdr_limit", {"vidsch.", "kmd.", "node.", "cmp.adapter_reset_ms", "gpu.", "sim."}},
    // The Allocation notifications scenarios' files: the platform's other keys are swept by the scenarios before them.
    {"eviction_notify",
     {"iommu.", "vidmm.", "kmd.notify_", "kmd.paging_va_", "kmd.largest_allocation_mb", "mmu.",
      "node.translate_ahead_bytes", "vidsch.quantum_ms", "vidsch.hw_queue_depth", "workload.", "sim."}},
    {"iommu_unmap_notify", {"iommu.", "vidmm.", "kmd.notify_iommu_unmap", "workload.", "sim."}},
    {"paging_va_size",
     {"vidmm.", "kmd.paging_va_", "kmd.largest_allocation_mb", "kmd.notify_", "mmu.", "workload.", "sim."}},
    // The log machinery's keys; the fence path's others are swept by the fence scenarios.
    {"fence_log_scan",
     {"vidsch.native_fence_logs", "vidsch.log_segment", "kmd.optimized_native_fence", "kmd.native_fence_log_barrier",
      "node.log_", "cmp.fence_irq_queue", "cmp.report_fence_set", "gpu.hw_queues", "workload.", "sim."}},
};
// Keys only the packet-scheduling path reads (the TDR machinery): a scenario that never submits a DMA
// packet cannot be moved by them, so only the TDR files sweep them.
const std::vector<std::string> kPacketPathOnly = {"vidsch.hw_queue_depth",
                                                  "vidsch.quantum_ms",
                                                  "vidsch.tdr_",
                                                  "vidsch.validate_aborted_fence_id",
                                                  "node.preempt_",
                                                  "node.reset_",
                                                  "cmp.adapter_reset_ms",
                                                  "kmd.support_per_engine_tdr",
                                                  "kmd.reset_poll_us",
                                                  "kmd.adapter_reset_poll_ms",
                                                  "kmd.tdr_report_aborted",
                                                  "gpu.linked_engines"};

}  // namespace

bool in_focus(const std::string& scenario, const ParamSpec& s) {
  // The TDR scenarios and the allocation notifications document's (VidMm's paging packets) run the packet path.
  const bool packets = scenario.rfind("tdr_", 0) == 0 || scenario == "eviction_notify" ||
                       scenario == "iommu_unmap_notify" || scenario == "paging_va_size";
  if (!packets)
    for (auto& k : kPacketPathOnly)
      if (s.name.rfind(k, 0) == 0) return false;
  const auto it = kFocus.find(scenario);
  if (it == kFocus.end() || !s.owners.empty()) return true;  // every key, or the scenario's own
  for (auto& prefix : it->second)
    if (s.name.rfind(prefix, 0) == 0) return true;
  return false;
}

KeyValues reduced_overrides(const std::string& file, const std::string& scenario) {
  KeyValues merged;
  const std::string stem = fs::path(file).stem().string();
  for (const std::string& who : {std::string("*"), scenario, stem == scenario ? std::string() : stem}) {
    auto it = kReduced.find(who);
    if (it == kReduced.end()) continue;
    for (auto& kv_new : it->second) {  // not a structured binding: clang 14 cannot capture one
      const auto& k = kv_new.first;
      auto old = std::find_if(merged.begin(), merged.end(), [&](auto& kv) { return kv.first == k; });
      if (old != merged.end())
        old->second = kv_new.second;
      else
        merged.push_back(kv_new);
    }
  }
  return merged;
}

std::vector<std::string> reduced_args(const std::string& file, const std::string& scenario,
                                      const std::set<std::string>& swept) {
  std::vector<std::string> args;
  for (auto& [k, v] : reduced_overrides(file, scenario))
    if (!swept.count(k)) args.push_back("--" + k + "=" + v);
  return args;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every scenario file with its scenario; each registered scenario must have at least one.
KeyValues scenario_files(const std::string& dir) {
  KeyValues files;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".ini") files.push_back({e.path().string(), ""});
  if (ec) usage("cannot list scenario directory '" + dir + "': " + ec.message());
  std::sort(files.begin(), files.end());
  std::set<std::string> covered;
  for (auto& [path, scenario] : files) {
    ParamSet ps;
    gpumodel::declare_all_params(ps);
    try {
      scenario = gpumodel::load_scenario_text(read_text(path), path, ps);
    } catch (const gpumodel::ConfigError& e) {
      std::cerr << "extremes_sweep: " << e.what() << "\n";
      std::exit(2);
    }
    covered.insert(scenario);
  }
  bool missing = false;
  for (auto& s : gpumodel::scenario_registry())
    if (!covered.count(s.name)) {
      std::cerr << "extremes_sweep: scenario '" << s.name << "' has no .ini file in " << dir << "\n";
      missing = true;
    }
  if (missing) std::exit(2);
  return files;
}

}  // namespace sweep
