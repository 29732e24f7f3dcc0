// The host CPU's package (uncore, memory controller, I/O): its package C-state follows the core and
// what holds it awake. PC0 while the core runs; PC2 while the core idles but the package is held (the
// core shallower than C6, a PCIe link not in L1, a display fetching from system memory); PC8 when the
// core idles in C6 and nothing holds it: system DRAM in self-refresh. Leaving PC8, for the core or for a
// device (the link waking for a DMA or an MSI), takes the package's exit latency (cpu.package_exit_ns);
// a core woken meanwhile starts its own exit only once the package is up.
//
// The holds are the platform's (platform.cpp wires the link's L1 and the display's fetch to them), the
// package's way of honouring its devices' latency tolerance: a client package enters its deep states
// only with its PCIe links in L1 and its display not streaming from memory.
// Trace: cpu.package (PC0 / PC2 / PC8).
#pragma once
#include <cstdint>
#include <vector>

#include <systemc>

#include "hw_model/core/power.h"
#include "hw_model/core/vcd.h"

namespace gpumodel {

class Package {
 public:
  enum State : size_t { kPC0, kPC2, kPC8, kStates };
  enum Hold : unsigned { kLink = 1u << 0, kDisplay = 1u << 1 };
  static const char* name(size_t s) { return s == kPC0 ? "PC0" : s == kPC2 ? "PC2" : "PC8"; }

  Package(Vcd& vcd, const sc_core::sc_time& exit) : vcd_(vcd), id_(vcd.add_ascii("cpu.package", "PC0")), exit_(exit) {}

  // The package's cores (cpu.cores): every one starts running.
  void set_cores(size_t n) {
    active_.assign(n, true);
    deep_.assign(n, false);
  }
  // Core `k`: running (C0, an exit, an ISR...), or idle and whether in C6. PC0 while any core runs, PC8
  // only with every core in C6.
  void set_core(bool active, bool deep) { set_core(0, active, deep); }
  void set_core(size_t k, bool active, bool deep) {
    active_[k] = active;
    deep_[k] = deep;
    update();
  }
  void hold(Hold who, bool on) {
    holds_ = on ? holds_ | who : holds_ & ~unsigned(who);
    update();
  }
  unsigned holds() const { return holds_; }
  size_t state() const { return clock_.state(); }
  const StateClock& clock() const { return clock_; }
  // Leaving PC8 (for the core or for a device) takes the exit latency: until then the core cannot run.
  const sc_core::sc_time& ready_at() const { return ready_at_; }
  uint64_t exits() const { return exits_; }

 private:
  void update() {
    bool active = false, deep = true;
    for (size_t k = 0; k < active_.size(); ++k) active = active || active_[k], deep = deep && deep_[k];
    const size_t s = active ? kPC0 : (deep && holds_ == 0) ? kPC8 : kPC2;
    if (s == clock_.state()) return;
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    if (clock_.state() == kPC8) {
      ready_at_ = now + exit_;
      ++exits_;
    }
    clock_.set(s, now);
    vcd_.set_ascii(id_, name(s));
  }
  Vcd& vcd_;
  Vcd::Id id_;
  StateClock clock_{kStates, kPC0};
  std::vector<bool> active_{true}, deep_{false};
  unsigned holds_ = 0;
  sc_core::sc_time exit_, ready_at_ = sc_core::SC_ZERO_TIME;
  uint64_t exits_ = 0;
};

}  // namespace gpumodel
