#include "app/run.h"

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "app/gtkw.h"
#include "app/progress.h"
#include "hw_model/core/tlm_check.h"
#include "monitors/monitor.h"
#include "platform/energy.h"

namespace gpumodel {

using namespace sc_core;

void declare_all_params(ParamSet& ps) {
  Platform::declare_params(ps);
  declare_monitor_params(ps);
  for (auto& s : scenario_registry()) s.declare(ps, s.name);
}

void report_engine_faults(const Platform& p, Results& r) {
  // An engine fault (a malformed packet) stopped a queue: the run is not a pass, and says where; on either
  // adapter (the iGPU's engines fault as the dGPU's do).
  for (const GpuAdapter* a : std::array<const GpuAdapter*, 2>{&p.gpu, p.igpu}) {
    if (!a) continue;
    for (auto& n : a->nodes) {
      for (auto& m : n->fault_messages()) r.failures.push_back("engine fault: " + m);
      if (n->faults() > n->fault_messages().size())
        r.failures.push_back("engine fault: " + std::string(n->name()) + ": " +
                             std::to_string(n->faults() - n->fault_messages().size()) + " more");
    }
  }
}

void report_link_down_requests(const Platform& p, Results& r) {
  // A request that found the dGPU's link down (its slot powered off by runtime D3cold, or still training)
  // completed as Unsupported Request: reads returned all ones, writes were lost. A path that reached the
  // adapter without runtime PM's use first (kernel_stub/dxgkrnl/runtime_pm.h); the real OS would read
  // garbage and fail the adapter.
  r.monitors["link_down_requests"] = p.link.aborts();
  if (p.link.aborts()) {
    char addr[32];
    std::snprintf(addr, sizeof addr, "0x%llx", static_cast<unsigned long long>(p.link.first_abort_addr()));
    r.failures.push_back(std::to_string(p.link.aborts()) +
                         " requests reached the dGPU while its link was down (slot powered off by runtime "
                         "D3cold, or training), the first to " +
                         addr + ": a path to the adapter without runtime power management's use");
  }
}

sc_time run_scenario(const ParamSet& ps, const RunOptions& opt, Results& r) {
  validate_scenario(ps, opt.scenario);
  const ScenarioInfo* info = find_scenario(opt.scenario);
  Vcd vcd;
  if (!opt.vcd_path.empty()) vcd.enable();
  if (!opt.timeline_path.empty()) vcd.enable_timeline();
  const auto wall0 = std::chrono::steady_clock::now();

  Platform platform(ps, vcd, opt.seed);
  const auto monitors = attach_monitors(platform);
  auto driver = info->make(ps);
  driver->presentmon_path = opt.presentmon_path;
  driver->build(platform, r);

  const sc_time limit(ps.get_real("sim.limit_ms"), SC_MS);
  const auto run0 = std::chrono::steady_clock::now();
  try {
    if (opt.progress) {
      run_with_progress(platform, *driver, limit);
    } else {
      advance(platform, limit);
    }
  } catch (const sc_report& e) {
    r.failures.push_back(std::string("model fault: ") + e.what());
  } catch (const std::exception& e) {
    r.failures.push_back(std::string("model fault: ") + e.what());
  }
  r.host["sim_wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - run0).count();
  const sc_time end = sc_time_stamp();
  report_engine_faults(platform, r);
  report_link_down_requests(platform, r);
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
    if (r.failures.empty()) {
      // Runtime D3cold's idle timer keeps a run going until the dGPU powers off, the idle time after its
      // last use: say so rather than suggest a hang.
      const RuntimePm& pm = platform.runtime_pm();
      if (pm.enabled() && pm.state() == RuntimePm::State::On)
        r.failures.push_back(
            "simulation still busy at sim.limit_ms: the dGPU's runtime D3cold idle timer runs "
            "until gpu.runtime_d3_idle_ms after its last use; raise sim.limit_ms past it, lower "
            "gpu.runtime_d3_idle_ms, or set gpu.runtime_d3 = off");
      else
        r.failures.push_back("simulation still busy at sim.limit_ms; raise it or look for a hang");
    }
  }
  for (auto& m : monitors) m->finish(r);
  // Energy (platform/energy.h): read at the end, a pure function of the power states; the balance monitor
  // checks that every component's states cover the run.
  const EnergyModel energy(platform);
  const EnergyReading reading = energy.read();
  const auto unbalanced = energy.balance(reading);
  r.monitors["energy_balance"] = unbalanced.size();
  for (auto& m : unbalanced) r.failures.push_back("energy balance: " + m);
  // Every socket hop's TLM-2.0 base-protocol checks (Debug builds): a violation fails the verdict.
  if constexpr (kTlmChecks) r.monitors["tlm_base_protocol"] = tlm_check::violations();
  if ((r.failures.empty() || !r.incomplete.empty()) && (r.bugcheck.is_null() || r.expected_bugcheck()))
    driver->finish(platform, r);
  r.metrics["energy"] = energy.results(reading);
  r.metrics["power_states"] = energy.residencies();

  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  r.host["wall_s"] = wall;
  r.host["sim_ns_per_wall_s"] = wall > 0 ? to_ns(end) / wall : 0.0;
  // Each output whole or not at all; the first that cannot be written is the run's output error (exit 2).
  auto output_failed = [&r](const std::string& why) {
    if (r.output_error.empty()) r.output_error = why;
  };
  if (!opt.vcd_path.empty()) {
    const std::time_t now = std::time(nullptr);
    char date[64];
    std::strftime(date, sizeof date, "%a %b %d %H:%M:%S %Y", std::gmtime(&now));
    if (const std::string why = vcd.write(opt.vcd_path, date, end.value()); !why.empty())
      output_failed("--vcd: cannot write '" + opt.vcd_path + "': " + why);
    else if (writes_gtkw(opt.vcd_path))
      if (const std::string why = write_gtkw(gtkw_path_for(opt.vcd_path), opt.vcd_path, vcd, r); !why.empty())
        output_failed("--vcd: cannot write its save file '" + gtkw_path_for(opt.vcd_path) + "': " + why);
  }
  if (!opt.timeline_path.empty())
    if (const std::string why = vcd.write_timeline(opt.timeline_path, end); !why.empty())
      output_failed("--timeline: cannot write '" + opt.timeline_path + "': " + why);
  return end;
}

}  // namespace gpumodel
