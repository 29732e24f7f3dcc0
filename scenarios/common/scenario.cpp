#include "scenarios/common/scenario.h"

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

}  // namespace gpumodel
