#include "scenarios/common/implied.h"

#include <set>

namespace gpumodel {

// Only pairs that can fire: xfence.gpu_doorbell = true needs xfence.scenario = 1, but that is the
// default, so a user who did not set xfence.scenario has it already.
const std::vector<Implication>& implications() {
  static const std::vector<Implication> table = {
      // cross_adapter_fence's validate: scenarios 2a and 2b have an iGPU without native fences (Native
      // GPU fence object, 'Cross-adapter wait/signal combinations'), unless its queue is kernel-mode.
      {{{"xfence.scenario", "2a"}, {"xfence.igpu_queue", "user"}},
       "igpu.kmd_native_gpu_fence",
       "never",
       "cross_adapter_fence: scenario 2a has an iGPU without native fences"},
      {{{"xfence.scenario", "2b"}, {"xfence.igpu_queue", "user"}},
       "igpu.kmd_native_gpu_fence",
       "never",
       "cross_adapter_fence: scenario 2b has an iGPU without native fences"},
      // Platform::validate: kmd.paging_va_mb is the driver's answer only under override (A4).
      {{{"kmd.paging_va_mb", "*"}},
       "kmd.paging_va_answer",
       "override",
       "platform: kmd.paging_va_mb is the answer only under kmd.paging_va_answer = override"},
      // PcieLink::validate: L1 PM substates are substates of L1 (Linux aspm.c: 'L1 PM substates require L1').
      {{{"link.l1_substates", "*"}, {"link.l1_substates", "l1_1"}},
       "link.aspm",
       "l1",
       "link: L1 PM substates need ASPM L1"},
      {{{"link.l1_substates", "*"}, {"link.l1_substates", "l1_2"}},
       "link.aspm",
       "l1",
       "link: L1 PM substates need ASPM L1"},
      // Platform::validate: only the hybrid platform has the integrated adapter.
      {{{"display.adapter", "igpu"}},
       "platform.topology",
       "hybrid",
       "platform: display.adapter = igpu needs the integrated adapter"},
  };
  return table;
}

std::string value_text(const ParamSet& ps, const std::string& key) {
  switch (ps.spec(key).kind) {
    case ParamKind::Int: return std::to_string(ps.get_int(key));
    case ParamKind::Real: return format_number(ps.get_real(key));
    case ParamKind::Bool: return ps.get_bool(key) ? "true" : "false";
    case ParamKind::Enum:
    case ParamKind::NamedOrForm: return ps.get_enum(key);
    case ParamKind::Path: return ps.get_path(key);
    case ParamKind::Text: return ps.get_text(key);
  }
  return "";
}

std::vector<Implied> apply_implications(ParamSet& ps, const std::string& scenario) {
  std::vector<Implied> done;
  auto has = [&](const std::string& k) { return ps.known(k) && ps.visible_to(ps.spec(k), scenario); };
  auto implied = [&](const std::string& k) {
    for (const Implied& i : done)
      if (i.key == k) return true;
    return false;
  };
  // Until nothing changes: an implied key may make another rule hold. Each key is implied at most
  // once (the first rule wins), so this ends after at most one pass per rule. "The user set it" is
  // decided before any is implied.
  std::set<std::string> user_set = ps.set_keys();
  for (bool changed = true; changed;) {
    changed = false;
    for (const Implication& rule : implications()) {
      if (!has(rule.key) || user_set.count(rule.key) || implied(rule.key)) continue;
      bool holds = true;
      std::string because;
      for (const auto& [k, v] : rule.when) {
        holds = holds && has(k) && (v == "*" ? user_set.count(k) != 0 : value_text(ps, k) == v);
        if (!holds) break;
        because += (because.empty() ? "" : ", ") + k + " = " + value_text(ps, k);
      }
      if (!holds || value_text(ps, rule.key) == rule.value) continue;  // already so: nothing to say
      ps.set(rule.key, rule.value, "implied by " + because);           // was_set from here on; `done` tells them apart
      done.push_back({rule.key, rule.value, because});
      changed = true;
    }
  }
  return done;
}

}  // namespace gpumodel
