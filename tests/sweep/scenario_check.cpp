#include "tests/sweep/scenario_check.h"

#include <algorithm>

#include "app/cli.h"
#include "kernel_stub/dxgkrnl/adapter_start.h"
#include "kernel_stub/kmd/kmd.h"
#include "platform/platform.h"
#include "scenarios/common/implied.h"
#include "scenarios/common/scenario.h"

namespace sweep {

using gpumodel::ConfigError;

namespace {

// Dxgkrnl's adapter start (kernel_stub/dxgkrnl/adapter_start.h) as the driver answers of each adapter
// the platform has decide it: "" when every one starts.
std::string start_refusal(const gpumodel::ParamSet& ps) {
  std::vector<std::string> adapters = {"gpu"};
  if (gpumodel::Platform::topology_of(ps) == gpumodel::Topology::Hybrid) adapters.push_back("igpu");
  for (auto& a : adapters) {
    const gpumodel::DriverAnswers d = gpumodel::driver_answers_from(ps, a);
    if (d.native_gpu_fence == gpumodel::NativeGpuFenceAnswer::Always &&
        ps.get_enum("os.native_fence_feature") == "disabled")
      return a + ": the driver advertises NativeGpuFence and the OS did not enable the feature";
    const std::string why = gpumodel::check_driver_caps(d.caps);
    if (!why.empty()) return a + ": " + why;
  }
  return "";
}

}  // namespace

ScenarioCheck::ScenarioCheck(const std::string& file, const std::string& scenario)
    : scenario_(scenario), reduced_(reduced_overrides(file, scenario)) {
  gpumodel::declare_all_params(loaded_);
  gpumodel::load_scenario_text(read_text(file), file, loaded_);
  baseline_ = loaded_;
  std::vector<std::string> seen;
  for (auto& [k, v] : reduced_) gpumodel::apply_override(baseline_, scenario_, k, v, seen);
}

std::string ScenarioCheck::base_value(const std::string& key) const { return gpumodel::value_text(baseline_, key); }

KeyValues ScenarioCheck::overrides(const KeyValues& assigned) const {
  KeyValues passed;
  for (auto& kv : assigned)
    if (base_value(kv.first) != kv.second) passed.push_back(kv);
  return passed;
}

std::string ScenarioCheck::refusal(const KeyValues& assigned) const {
  // As on the command line: the row's overrides, then the reduced run's that it leaves. Many rows pass
  // the same overrides (a key at the file's value is not passed): each is run once.
  const KeyValues passed = overrides(assigned);
  std::string key;
  for (auto& [k, v] : passed) key += k + "=" + v + "\n";
  auto it = said_.find(key);
  if (it == said_.end()) {
    Said said;
    gpumodel::ParamSet ps = loaded_;
    std::vector<std::string> seen;
    try {
      for (auto& [k, v] : passed) gpumodel::apply_override(ps, scenario_, k, v, seen);
      for (auto& kv : reduced_) {
        const bool overridden = std::any_of(passed.begin(), passed.end(), [&](auto& p) { return p.first == kv.first; });
        if (!overridden) gpumodel::apply_override(ps, scenario_, kv.first, kv.second, seen);
      }
      said.implied = gpumodel::apply_implications(ps, scenario_);
      gpumodel::validate_scenario(ps, scenario_);
      const std::string start = start_refusal(ps);
      if (!start.empty()) said.refusal = kStart + start;
    } catch (const ConfigError& e) {
      said.refusal = e.what();
    } catch (const std::exception&) {
      // Not a refusal: the binary, which runs the row, shows what it does with it.
    }
    it = said_.emplace(key, said).first;
  }
  if (!it->second.refusal.empty()) return it->second.refusal;
  for (auto& i : it->second.implied)
    for (auto& [k, v] : assigned)
      if (i.key == k && i.value != v)
        return kImplied + k + " = " + v + " is implied to " + i.value + " by " + i.because;
  return "";
}

}  // namespace sweep
