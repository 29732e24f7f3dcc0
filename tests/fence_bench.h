// A platform with the monitors attached, for the native fence tests (one per TEST_CASE/process).
#pragma once
#include <map>
#include <string>

#include "scenarios/monitors.h"
#include "tb.h"

namespace tb {

struct FenceBench {
  ParamSet ps;
  Vcd vcd;
  Platform p;
  Monitors mon;
  explicit FenceBench(std::map<std::string, std::string> o = {})
      : ps(params(with_fine_ticks(std::move(o)))), p(ps, vcd, 1), mon(p) {}
  uint64_t shadow(const NativeFence* f) { return p.gpu.vram.peek64(p.gpu.cmp.shadow_mv_addr(p.vidsch.slot(*f))); }
  uint64_t os_mv(const NativeFence* f) { return p.sysmem.peek64(f->mv_addr); }
  // GPU timestamps in ps, so a TIMESTAMP packet records an exact simulated time.
  static std::map<std::string, std::string> with_fine_ticks(std::map<std::string, std::string> o) {
    o.emplace("gpu.timestamp_tick_ps", "1");
    return o;
  }
};


}  // namespace tb
