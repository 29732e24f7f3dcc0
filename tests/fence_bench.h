// The shared bench (bench.h) with the monitors attached, for the native fence tests.
#pragma once
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "bench.h"
#include "monitors/fence_monitors.h"

namespace tb {

struct FenceBench : Bench {
  Monitors mon;
  explicit FenceBench(std::map<std::string, std::string> o = {}) : Bench(std::move(o)), mon(p) {}
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
};

}  // namespace tb
