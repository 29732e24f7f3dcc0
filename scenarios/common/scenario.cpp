#include "scenarios/common/scenario.h"

#include <algorithm>

#include "hw_model/gpu/engine_kind.h"

namespace gpumodel {

using namespace sc_core;

namespace {
struct Registered {
  ScenarioInfo (*info)();
  int list_position;
};
// Filled by the registrations' static initialisers and read after main starts: a function-local static,
// so no order of initialisation between files is relied on.
std::vector<Registered>& registered() {
  static std::vector<Registered> all;
  return all;
}
}  // namespace

ScenarioRegistration::ScenarioRegistration(ScenarioInfo (*info)(), int list_position) {
  registered().push_back({info, list_position});
}

const std::vector<ScenarioInfo>& scenario_registry() {
  // The link order of the files that register is not part of the program's meaning: sorted.
  static const std::vector<ScenarioInfo> all = [] {
    std::vector<std::pair<int, ScenarioInfo>> v;
    for (auto& r : registered()) v.emplace_back(r.list_position, r.info());
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second.name < b.second.name;
    });
    std::vector<ScenarioInfo> sorted;
    for (auto& [position, info] : v) sorted.push_back(std::move(info));
    return sorted;
  }();
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

void require_engine_runs(const ParamSet& ps, const std::string& scenario, const std::string& adapter, int node, Op op,
                         const std::string& what, const std::string& why) {
  const EngineKind k = engine_kind(ps, adapter, node, int(ps.get_int(adapter + ".nodes")));
  if (engine_runs(k, op)) return;
  // Name the key the user set: the node's own, or the class key node.kind that set every node.
  const std::string own = adapter + ".node" + std::to_string(node) + ".kind";
  const std::string key = ps.was_set(own) || !ps.was_set("node.kind") ? own : "node.kind";
  throw ConfigError(key + " = " + to_string(k) + (key == own ? "" : " (so " + own + ")") + " cannot run " + what +
                    ": scenario '" + scenario + "' runs it there (" + why + "); allowed: " + key + " = " +
                    (op == Op::Compute ? "graphics, compute or video" : "graphics, compute or copy") +
                    (key == own ? "" : ", or " + own + " set apart"));
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
