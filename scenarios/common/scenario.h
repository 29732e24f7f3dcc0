// Scenario drivers: each builds its workload on the platform (app threads on the CPU model) and names
// its metrics. A scenario's own parameters are declared with the scenario as their owner.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hw_model/core/params.h"
#include "monitors/results.h"
#include "platform/platform.h"

namespace gpumodel {

class ScenarioDriver {
 public:
  virtual ~ScenarioDriver() = default;
  // Elaboration: spawn the app threads that drive the workload.
  virtual void build(Platform& p, Results& r) = 0;
  // After the run: compute what is left of the metrics.
  virtual void finish(Platform& p, Results& r) { (void)p, (void)r; }
  // While it runs, for the progress line: what the workload has done so far ("frame 12 of 600").
  // Empty: the line shows the engines' packets and signals.
  virtual std::string progress(const Platform& p) const {
    (void)p;
    return "";
  }
};

struct ScenarioInfo {
  std::string name;
  std::string summary;
  std::function<void(ParamSet&, const std::string& owner)> declare;
  std::function<std::unique_ptr<ScenarioDriver>(const ParamSet&)> make;
  // Refuses a combination of parameters the scenario cannot run (throws ConfigError: exit 2), before
  // anything is elaborated. Optional.
  std::function<void(const ParamSet&)> validate = nullptr;
  // F9: with these parameters the scenario runs with adapters that have no native fences
  // (os.native_fence_feature = disabled, <key>.kmd_native_gpu_fence = never or always) and reports what
  // follows. Null, or false for the parameters: the scenario uses native fences and refuses those settings
  // before elaboration.
  std::function<bool(const ParamSet&)> runs_without_native_fences = nullptr;
};

const std::vector<ScenarioInfo>& scenario_registry();
const ScenarioInfo* find_scenario(const std::string& name);

// Refuses, before elaboration, a platform with fewer engines (gpu.nodes) or HW queues (gpu.hw_queues)
// than `scenario` uses; `why` says what it uses them for. ConfigError names the key and the minimum.
void require_platform(const ParamSet& ps, const std::string& scenario, int64_t nodes, int64_t queues,
                      const std::string& why);

// Refuses (ConfigError: exit 2) what `scenario` cannot run with `ps`: its own checks, the native-fence
// settings it needs, the platform's. The CLI calls it before it prints anything; run_scenario again.
void validate_scenario(const ParamSet& ps, const std::string& scenario);

// Scenario registrations (one per driver file).
ScenarioInfo copy_bandwidth_scenario();
ScenarioInfo mmio_roundtrip_scenario();
ScenarioInfo fence_signal_scenario();
ScenarioInfo conditional_interrupt_scenario();
ScenarioInfo gpu_wait_scenario();
ScenarioInfo fence_race_scenario();
ScenarioInfo fence_stress_scenario();
ScenarioInfo hybrid_present_scenario();
ScenarioInfo scanout_underflow_scenario();
ScenarioInfo caso_caps_scenario();
ScenarioInfo tdr_engine_reset_scenario();
ScenarioInfo tdr_paging_hit_scenario();
ScenarioInfo tdr_reset_fails_scenario();
ScenarioInfo tdr_race_window_scenario();
ScenarioInfo tdr_bad_fence_id_scenario();
ScenarioInfo tdr_limit_scenario();
ScenarioInfo eviction_notify_scenario();
ScenarioInfo iommu_unmap_notify_scenario();
ScenarioInfo paging_va_size_scenario();
ScenarioInfo fence_log_scan_scenario();
ScenarioInfo cross_adapter_fence_scenario();

}  // namespace gpumodel
