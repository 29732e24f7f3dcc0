// A platform with the monitors attached, for the native fence tests (one per TEST_CASE/process), and
// the default fence paths derived from the parameters (independently of the model's code).
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

namespace dflt {
// A GPU posted write of `bytes` to system memory on an idle link: one TLP up, hop, root complex, the
// DRAM port transfer and write latency.
inline sc_time up_write(double bytes) { return ser(bytes + 24, kRate) + kHop + kRc + dram_xfer(bytes) + kDram; }
// A CPU load from system memory: root complex, DRAM transfer and latency, root complex back.
inline sc_time cpu_read(double bytes) { return kRc + dram_xfer(bytes) + kDram + kRc; }
// An engine's conditional check: its read of the shadow MV in VRAM (250 ns + 8 B at 1008 GB/s).
const sc_time kShadowCheck = sc_time(250, SC_NS) + vram_xfer(8);
const sc_time kCmpBarrier(200, SC_NS);    // cmp.barrier_ns
const sc_time kCmpInterrupt(32, SC_NS);   // cmp.interrupt_cycles at 1 GHz
const sc_time kCmpDecision(20, SC_NS);    // cmp.decision_cycles at 1 GHz
// From the CMP issuing an interrupt to the MSI at the interrupt controller: the 16-byte event entry,
// the 8-byte write index and the 4-byte MSI leave back to back on the idle up direction; then hop and
// root complex.
inline sc_time msi_delivery() {
  return ser(16 + 24, kRate) + ser(8 + 24, kRate) + ser(4 + 24, kRate) + kHop + kRc;
}
}  // namespace dflt

}  // namespace tb
