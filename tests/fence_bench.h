// A platform with the monitors attached, for the native fence tests (one per TEST_CASE/process).
#pragma once
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "monitors/fence_monitors.h"
#include "tb.h"

namespace tb {

struct FenceBench {
  ParamSet ps;
  Vcd vcd;
  Platform p;
  Monitors mon;
  std::vector<DxgkInterruptData> notified;  // every DxgkCbNotifyInterrupt the OS got, in order...
  std::vector<sc_time> notified_at;         // ...and when
  explicit FenceBench(std::map<std::string, std::string> o = {})
      : ps(params(with_fine_ticks(std::move(o)))), p(ps, vcd, 1), mon(p) {
    p.vidsch.observer.interrupt_notified = [this](const DxgkInterruptData& d) {
      notified.push_back(d);
      notified_at.push_back(sc_core::sc_time_stamp());
    };
  }
  uint64_t shadow(const NativeFence* f) { return p.gpu.vram.peek64(p.gpu.cmp.shadow_mv_addr(p.vidsch.slot(*f))); }
  uint64_t os_mv(const NativeFence* f) { return p.sysmem.peek64(f->mv_addr); }
  size_t count_notified(bool (*what)(const DxgkInterruptData&)) const {
    return size_t(std::count_if(notified.begin(), notified.end(), what));
  }
  sc_time first_native_notification() const {  // the first NativeFenceSignaled, from the ISR
    for (size_t i = 0; i < notified.size(); ++i)
      if (notified[i].type == DxgkInterruptData::NativeFenceSignaled) return notified_at[i];
    return sc_core::sc_max_time();
  }
  // GPU timestamps in ps, so a TIMESTAMP packet records an exact simulated time.
  static std::map<std::string, std::string> with_fine_ticks(std::map<std::string, std::string> o) {
    o.emplace("gpu.timestamp_tick_ps", "1");
    return o;
  }
};

}  // namespace tb
