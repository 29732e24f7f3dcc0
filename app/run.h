// One run of a scenario: the platform elaborated, every monitor attached, the scenario's driver built,
// the simulation run, the verdict and the outputs (waveform, timeline) written. The application's own
// layer: it knows the platform, the monitors and the scenarios.
#pragma once
#include <cstdint>
#include <string>

#include "monitors/results.h"
#include "platform/platform.h"
#include "scenarios/common/scenario.h"

namespace gpumodel {

struct RunOptions {
  std::string scenario;
  uint64_t seed = 1;
  std::string vcd_path;         // empty: no waveform
  std::string timeline_path;    // empty: no timeline (Trace Event JSON)
  bool progress = false;        // a progress line on stderr while the simulation runs
  std::string presentmon_path;  // empty: none; else one PresentMon CSV row per present (scenarios that present)
};

// Every parameter: the platform's, the monitors' and every scenario's.
void declare_all_params(ParamSet& ps);

// Adds every engine fault of the run (a malformed packet stopped a queue) to the failures.
void report_engine_faults(const Platform& p, Results& r);
// Requests that found the dGPU's link down (runtime D3cold): counted in the monitors, a failure when any.
void report_link_down_requests(const Platform& p, Results& r);

// Elaborates the platform and the scenario, simulates, fills `r` and returns the simulated time.
// Call once per process (SystemC elaborates once). Refuses (ConfigError) what validate_scenario refuses.
sc_core::sc_time run_scenario(const ParamSet& ps, const RunOptions& opt, Results& r);

}  // namespace gpumodel
