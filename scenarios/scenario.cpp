#include "scenarios/scenario.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "hw_model/core/tlm_check.h"
#include "scenarios/display/display_monitors.h"
#include "scenarios/fence_log/log_monitor.h"
#include "scenarios/monitors.h"
#include "scenarios/tdr/tdr_monitor.h"
#include "scenarios/vidmm/vidmm_monitor.h"

namespace gpumodel {

using namespace sc_core;

const std::vector<ScenarioInfo>& scenario_registry() {
  static const std::vector<ScenarioInfo> all = {copy_bandwidth_scenario(),     mmio_roundtrip_scenario(),
                                                fence_signal_scenario(),       conditional_interrupt_scenario(),
                                                gpu_wait_scenario(),           fence_race_scenario(),
                                                fence_stress_scenario(),       hybrid_present_scenario(),
                                                scanout_underflow_scenario(),  caso_caps_scenario(),
                                                tdr_engine_reset_scenario(),   tdr_paging_hit_scenario(),
                                                tdr_reset_fails_scenario(),    tdr_race_window_scenario(),
                                                tdr_bad_fence_id_scenario(),   tdr_limit_scenario(),
                                                eviction_notify_scenario(),    iommu_unmap_notify_scenario(),
                                                paging_va_size_scenario(),     fence_log_scan_scenario(),
                                                cross_adapter_fence_scenario()};
  return all;
}

const ScenarioInfo* find_scenario(const std::string& name) {
  for (auto& s : scenario_registry())
    if (s.name == name) return &s;
  return nullptr;
}

void require_platform(const ParamSet& ps, const std::string& scenario, int64_t nodes, int64_t queues,
                      const std::string& why) {
  auto need = [&](const char* key, int64_t n, const char* what) {
    const int64_t have = ps.get_int(key);
    if (have < n)
      throw ConfigError(std::string(key) + " = " + std::to_string(have) + " is too few: scenario '" + scenario +
                        "' uses " + std::to_string(n) + " " + what + " (" + why + "); allowed: " + key +
                        " >= " + std::to_string(n));
  };
  need("gpu.nodes", nodes, "nodes");
  need("gpu.hw_queues", queues, "HW queues");
}

void declare_all_params(ParamSet& ps) {
  Platform::declare_params(ps);
  Monitors::declare_params(ps);
  for (auto& s : scenario_registry()) s.declare(ps, s.name);
}

void report_engine_faults(const Platform& p, Results& r) {
  // An engine fault (a malformed packet) stopped a queue: the run is not a pass, and says where.
  for (auto& n : p.gpu.nodes) {
    for (auto& m : n->fault_messages()) r.failures.push_back("engine fault: " + m);
    if (n->faults() > n->fault_messages().size())
      r.failures.push_back("engine fault: " + std::string(n->name()) + ": " +
                           std::to_string(n->faults() - n->fault_messages().size()) + " more");
  }
}

namespace {
// The simulation in slices, each sized to take about a fifth of a wall second, with a progress line on
// stderr after each. Slicing changes nothing simulated: every event still runs at its time, in order
// (a test compares results and waveforms with and without it).
void run_with_progress(const Platform& p, const ScenarioDriver& driver, const sc_time& limit) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  sc_time slice(1, SC_US);
  auto line = [&](bool last) {
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    const double sim_ms = sc_time_stamp().to_seconds() * 1e3;
    std::string what = driver.progress(p);
    if (what.empty()) {
      uint64_t packets = 0, signals = 0;
      for (auto& n : p.gpu.nodes) packets += n->packets_executed(), signals += n->signals();
      what = std::to_string(packets) + " packets, " + std::to_string(signals) + " signals";
    }
    char buf[160];
    std::snprintf(buf, sizeof buf, "\r  simulated %.3f ms  %.3g sim-ms per wall-s  %s", sim_ms,
                  wall > 0 ? sim_ms / wall : 0.0, what.c_str());
    std::fprintf(stderr, "%-100s%s", buf, last ? "\n" : "");
    std::fflush(stderr);
  };
  bool started = false;
  do {  // the first slice starts the simulation (nothing is pending before it)
    const auto s0 = Clock::now();
    const sc_time left = limit - sc_time_stamp();
    sc_time window = slice;
    if (started) {
      // A window must reach the next event, or a starved window would not advance time (a TDR delay of
      // seconds, a run cut by sim.limit_ms with its next event past the limit).
      const sc_time next = sc_time_to_pending_activity();
      if (next > left) break;  // nothing left before the limit: the run ends here, as one sc_start(limit) does
      if (next > window) window = next;
    }
    started = true;
    sc_start(window < left ? window : left, SC_EXIT_ON_STARVATION);
    const double took = std::chrono::duration<double>(Clock::now() - s0).count();
    if (took < 0.1 && slice < sc_time(1, SC_SEC))
      slice = slice * 2.0;
    else if (took > 0.4 && slice > sc_time(1, SC_NS))
      slice = slice / 2.0;
    line(false);
  } while (sc_time_stamp() < limit && sc_pending_activity());
  line(true);
}
}  // namespace

void validate_scenario(const ParamSet& ps, const std::string& scenario) {
  const ScenarioInfo* info = find_scenario(scenario);
  if (!info) throw ConfigError("unknown scenario '" + scenario + "'");
  // The scenario's own needs first: its message says what it runs on (hybrid_present on topology = dgpu
  // names the topology, not a display key the dGPU platform cannot take).
  if (info->validate) info->validate(ps);
  if (!info->runs_without_native_fences || !info->runs_without_native_fences(ps)) {
    // F9: these scenarios use native fences; without them the OS would give monitored fences instead and
    // the run would measure something else.
    auto refuse = [&](const std::string& key, const std::string& allowed) {
      throw ConfigError(key + " = " + ps.get_enum(key) + ": scenario '" + scenario +
                        "' uses native fences here (F9); allowed: " + key + " = " + allowed +
                        (info->runs_without_native_fences
                             ? ", or fence.kind = legacy (a monitored fence needs none)"
                             : " (cross_adapter_fence, and fence_signal, conditional_interrupt "
                               "and gpu_wait with fence.kind = legacy, run without them)"));
    };
    if (ps.get_enum("os.native_fence_feature") != "enabled") refuse("os.native_fence_feature", "enabled");
    if (ps.get_enum("gpu.kmd_native_gpu_fence") == "never") refuse("gpu.kmd_native_gpu_fence", "if_enabled or always");
    if (Platform::topology_of(ps) == Topology::Hybrid && ps.get_enum("igpu.kmd_native_gpu_fence") == "never")
      refuse("igpu.kmd_native_gpu_fence", "if_enabled or always");
  }
  Platform::validate(ps);
}

sc_time run_scenario(const ParamSet& ps, const RunOptions& opt, Results& r) {
  validate_scenario(ps, opt.scenario);
  const ScenarioInfo* info = find_scenario(opt.scenario);
  Vcd vcd;
  if (!opt.vcd_path.empty()) vcd.enable();
  if (!opt.timeline_path.empty()) vcd.enable_timeline();
  const auto wall0 = std::chrono::steady_clock::now();

  Platform platform(ps, vcd, opt.seed);
  Monitors monitors(platform);
  ScanoutUnderflowMonitor underflow_monitor(platform);
  MpoStaticCheckMonitor mpo_monitor(platform);
  TdrRulesMonitor tdr_monitor(platform);
  AllocationRulesMonitor vidmm_monitor(platform);
  FenceLogMonitor log_monitor(platform);
  auto driver = info->make(ps);
  driver->build(platform, r);

  const sc_time limit(ps.get_real("sim.limit_ms"), SC_MS);
  const auto run0 = std::chrono::steady_clock::now();
  try {
    if (opt.progress) {
      run_with_progress(platform, *driver, limit);
    } else {
      sc_start(limit, SC_EXIT_ON_STARVATION);
    }
  } catch (const sc_report& e) {
    r.failures.push_back(std::string("model fault: ") + e.what());
  } catch (const std::exception& e) {
    r.failures.push_back(std::string("model fault: ") + e.what());
  }
  r.host["sim_wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - run0).count();
  const sc_time end = sc_time_stamp();
  report_engine_faults(platform, r);
  if (platform.vidsch.bugchecked()) {
    r.bug_check(platform.vidsch.bugcheck_code(), platform.vidsch.bugcheck_params());
  } else if (sc_pending_activity()) {
    // Cut by the limit: what was measured so far is kept (the driver's finish runs on it), and the
    // results say the run is incomplete and why; the verdict fails.
    char at[64];
    std::snprintf(at, sizeof at, "%.6g", ps.get_real("sim.limit_ms"));
    r.incomplete = std::string("sim.limit_ms = ") + at +
                   " ms reached with the simulation still busy: the metrics are "
                   "what was measured until then";
    if (r.failures.empty()) r.failures.push_back("simulation still busy at sim.limit_ms; raise it or look for a hang");
  }
  monitors.finish(r);
  underflow_monitor.finish(r);
  mpo_monitor.finish(r);
  tdr_monitor.finish(r);
  vidmm_monitor.finish(r);
  log_monitor.finish(r);
  // Every socket hop's TLM-2.0 base-protocol checks (Debug builds): a violation fails the verdict.
  if constexpr (kTlmChecks) r.monitors["tlm_base_protocol"] = tlm_check::violations();
  if ((r.failures.empty() || !r.incomplete.empty()) && (r.bugcheck.is_null() || r.expected_bugcheck()))
    driver->finish(platform, r);

  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  r.host["wall_s"] = wall;
  r.host["sim_ns_per_wall_s"] = wall > 0 ? to_ns(end) / wall : 0.0;
  if (!opt.vcd_path.empty()) {
    const std::time_t now = std::time(nullptr);
    char date[64];
    std::strftime(date, sizeof date, "%a %b %d %H:%M:%S %Y", std::gmtime(&now));
    if (!vcd.write(opt.vcd_path, date))
      r.output_error = "--vcd: cannot write '" + opt.vcd_path + "': " + std::strerror(errno);
  }
  if (!opt.timeline_path.empty() && !vcd.write_timeline(opt.timeline_path, end))
    r.output_error = "--timeline: cannot write '" + opt.timeline_path + "': " + std::strerror(errno);
  return end;
}

}  // namespace gpumodel
