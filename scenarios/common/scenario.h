// Scenario drivers: each builds its workload on the platform (app threads on the CPU model) and names
// its metrics. A scenario's own parameters are declared with the scenario as their owner.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hw_model/core/params.h"
#include "hw_model/gpu/packets.h"
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
  // --presentmon: where the scenario writes one PresentMon CSV row per present (empty: nowhere). Only
  // scenarios registered with `presents` are given one.
  std::string presentmon_path;
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
  // The scenario presents frames and can write them as PresentMon rows (--presentmon).
  bool presents = false;
};

// Every registered scenario, by list position, then by name.
const std::vector<ScenarioInfo>& scenario_registry();
const ScenarioInfo* find_scenario(const std::string& name);

// Refuses, before elaboration, a platform with fewer engines (gpu.nodes) or HW queues (gpu.hw_queues)
// than `scenario` uses; `why` says what it uses them for. ConfigError names the key and the minimum.
void require_platform(const ParamSet& ps, const std::string& scenario, int64_t nodes, int64_t queues,
                      const std::string& why);

// Refuses (ConfigError: exit 2) what `scenario` cannot run with `ps`: its own checks, the native-fence
// settings it needs, the platform's. The CLI calls it before it prints anything; run_scenario again.
void validate_scenario(const ParamSet& ps, const std::string& scenario);

// Refuses (ConfigError naming <adapter>.nodeN.kind) an engine whose kind does not run `op` (Op::Compute or
// Op::Copy) where `scenario` runs `what` on it; `why` says what for.
void require_engine_runs(const ParamSet& ps, const std::string& scenario, const std::string& adapter, int node, Op op,
                         const std::string& what, const std::string& why);

// A scenario registers itself: one static object beside its driver, in its own folder's file:
//   namespace { const ScenarioRegistration kRegistered{my_scenario}; }
// Nothing else names it: the registry (--list-scenarios, --list-params, scenario = NAME) is every
// registration. The scenarios library is linked whole, so the object is kept.
// `list_position` keeps the order the scenarios had when they were one hand-written list (simplest
// first): users see it in the listings and messages, and a key several scenarios share takes its base
// default from the first that declares it. A new scenario leaves it out and comes after them, by name.
class ScenarioRegistration {
 public:
  static constexpr int kAfterTheListed = 1 << 30;
  explicit ScenarioRegistration(ScenarioInfo (*info)(), int list_position = kAfterTheListed);
};

}  // namespace gpumodel
