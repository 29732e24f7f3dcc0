// The one whole-platform bench of the tests: every parameter at its default (GPU timestamps in ps, so a
// TIMESTAMP packet records an exact simulated time) with a test's overrides, the platform, and every
// interrupt the KMD reported to the OS (DxgkCbNotifyInterrupt), in order and with its time. One per
// TEST_CASE: SystemC elaborates once per process.
#pragma once
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tb.h"

namespace tb {

struct Bench {
  ParamSet ps;
  Vcd vcd;
  Platform p;
  std::vector<DxgkInterruptData> notified;  // every DxgkCbNotifyInterrupt the OS got, in order...
  std::vector<sc_time> notified_at;         // ...and when
  std::vector<DxgkInterruptData> irqs;      // the engines' packet interrupts (a node named) only...
  std::vector<sc_time> irq_at;              // ...and when

  explicit Bench(std::map<std::string, std::string> o = {}) : ps(params(with_fine_ticks(std::move(o)))), p(ps, vcd, 1) {
    p.vidsch.observer.interrupt_notified = [this](const DxgkInterruptData& d) {
      notified.push_back(d);
      notified_at.push_back(sc_core::sc_time_stamp());
      if (d.node < 0) return;
      irqs.push_back(d);
      irq_at.push_back(sc_core::sc_time_stamp());
    };
  }
  // GPU timestamps in ps, unless the test sets its own tick.
  static std::map<std::string, std::string> with_fine_ticks(std::map<std::string, std::string> o) {
    o.emplace("gpu.timestamp_tick_ps", "1");
    return o;
  }
  // The time a TIMESTAMP packet wrote at `addr` in system memory.
  sc_time ts(uint64_t addr) const { return sc_time(double(p.sysmem.peek64(addr)), sc_core::SC_PS); }
  // A DMA packet to `node` through DxgkDdiSubmitCommand with submission fence `id`.
  void submit(uint32_t node, uint64_t id, const PacketWriter& w) {
    DxgkSubmitCommandArgs a;
    a.node = node;
    a.submission_fence_id = id;
    a.commands = &w;
    p.kmd.DxgkDdiSubmitCommand(a);
  }
  // Whether the engine reported packet `id` completed (DMA_COMPLETED).
  bool completed(uint64_t id) const {
    return std::any_of(irqs.begin(), irqs.end(), [id](const DxgkInterruptData& d) {
      return d.type == DxgkInterruptData::DmaCompleted && d.fence_id == id;
    });
  }
};

}  // namespace tb
