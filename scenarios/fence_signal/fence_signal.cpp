// fence_signal: an engine signals a native fence that a CPU thread waits on, twice; the end-to-end latency
// from the SIGNAL's execution to the thread running again: signal_to_wake_cold_ns for the first (its
// translations cold), signal_to_wake_ns for the second (warm: a driver's steady state), and the warm
// one's parts, which sum to it:
//   fence_write_ns   SIGNAL starts -> CurrentValue visible (write buffer, fabric/link, memory)
//   cmp_decision_ns  CV visible -> MSI issued (engine's MV check, CMP decision, barrier, event entry)
//   msi_delivery_ns  MSI issued -> MSI at the interrupt controller
//   idle_exit_ns     MSI arrival -> ISR starts (the core's idle-state exit, 0 if it was busy)
//   isr_ns           ISR (interrupt entry, KMD ISR reading the event ring)
//   dpc_ns           ISR end -> DPC end (DPC, CV read, waking the waiter, moving MV)
//   thread_wake_ns   DPC end -> the waiting thread runs
#include <iomanip>
#include <sstream>
#include <vector>

#include "scenarios/common/fence_common.h"

namespace gpumodel {
namespace {

class FenceSignal : public ScenarioDriver {
 public:
  explicit FenceSignal(const ParamSet& ps) : kind_(ps), delay_(ps.get_real("workload.signal_delay_us")) {}

  void build(Platform& p, Results& r) override {
    p.cpu.spawn_thread("app", [this, &p, &r] { app(p, r); });
  }

 private:
  // One signal-to-wake: the GPU computes, signals `value`, the CPU thread waits for it. Fills the stages.
  struct Round {
    bool ok = false;
    sc_core::sc_time start, cv_visible, msi, woke;
    sc_core::sc_time link_exits;  // what link power-state exits cost the round's TLPs (ASPM), submit to wake
    Cpu::Stamps irq;
  };
  Round rounds_[2];
  Round* cur_ = nullptr;  // the round whose CV the watch waits for
  uint64_t cur_value_ = 0;
  void round(Platform& p, Results& r, KmdHwQueue* q, NativeFence* f, Round& x, uint64_t value) {
    cur_ = &x, cur_value_ = value;
    PacketWriter w;
    w.compute(engine_cycles(p.params, delay_ * 1000));  // the GPU works, then signals
    VidSch::gpu_signal(w, *f, value, 1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    const sc_core::sc_time asked = sc_core::sc_time_stamp();
    const sc_core::sc_time exits_before = p.link.exit_time();
    const bool woke = p.vidsch.WaitFromCpu(f, value);
    x.link_exits = p.link.exit_time() - exits_before;
    if (!r.check(woke, "the CPU wait for " + std::to_string(value) + " did not complete")) return;
    x.woke = sc_core::sc_time_stamp();
    x.start = kind_.signal_start(*p.gpu.nodes[0]);
    const sc_core::sc_time armed = p.vidsch.last_wait_armed();
    // The breakdown is of the interrupt path: the waiter armed (MV lowered) before the SIGNAL runs.
    // A shorter delay races the arming (F8's re-read or a second interrupt wakes the thread); the
    // stages would then come from different interrupts, so none is reported.
    if (armed < asked || x.start < armed) {
      auto num = [](double v) {
        std::ostringstream os;
        os << std::setprecision(10) << v;
        return os.str();
      };
      r.check(false, "workload.signal_delay_us = " + num(delay_) + " is too short: the SIGNAL started at " +
                         num(to_ns(x.start)) + " ns, before the CPU wait was armed (" +
                         (armed < asked ? std::string("never: CV had already reached the value")
                                        : "at " + num(to_ns(armed)) + " ns") +
                         "), so the wake did not take the interrupt path this scenario measures");
      return;
    }
    x.msi = p.gpu.cmp.last_msi_issued();
    x.irq = p.cpu.last_interrupt();
    x.ok = true;
  }

  // The parts of one round; checked: in order, and each at least what its parameters alone cost.
  std::vector<double> parts(Platform& p, Results& r, const Round& x, const char* which) {
    const auto& s = x.irq;
    const std::vector<double> v = {ns_between(x.start, x.cv_visible),  ns_between(x.cv_visible, x.msi),
                                   ns_between(x.msi, s.msi_arrival),   ns_between(s.msi_arrival, s.isr_start),
                                   ns_between(s.isr_start, s.isr_end), ns_between(s.isr_end, s.dpc_end),
                                   ns_between(s.dpc_end, x.woke)};
    // The parts are consecutive differences of the same stamps, so they sum to the total by
    // construction; what can fail is their order: a negative part means the stages ran out of order.
    for (int i = 0; i < 7; ++i)
      r.check(v[size_t(i)] >= 0,
              std::string(which) + " " + kNames[i] + " is negative: the stages happened out of order");
    // Each part against what its parameters alone cost, a lower bound (the exact derivations, with the
    // walks, transfers and register accesses on the way, are the tests'): a part below it skipped a cost.
    //  fence_write: the CV write waits node.write_buffer_ns, then reaches the fence's memory: system
    //    memory across the link (a hop and the root complex) and DRAM's write latency, or VRAM's;
    //  cmp_decision: the CMP's interrupt firmware, cmp.interrupt_cycles at cmp.clock_mhz (a native
    //    fence's path adds its decision and barrier, a monitored fence's the BARRIER's drain);
    //  msi_delivery: the MSI crosses the link (a hop) and the root complex;
    //  isr: interrupt entry and the ISR's cost; dpc: the DPC's cost; thread_wake: the wake's cost.
    const ParamSet& ps = p.params;
    auto ns = [&ps](const char* k) { return ps.get_real(k); };
    const bool sys = kind_.storage == Segment::System;
    const double least[] = {
        ns("node.write_buffer_ns") + (sys ? ns("link.hop_ns") + ns("rc.latency_ns") + ns("sysmem.write_latency_ns")
                                          : ns("vram.write_latency_ns")),
        ns("cmp.interrupt_cycles") * 1000.0 / ns("cmp.clock_mhz"),
        ns("link.hop_ns") + ns("rc.latency_ns"),
        0,  // idle_exit: the state the CPU idled in decides it (none if it was busy)
        ns("cpu.interrupt_entry_ns") + ns("cpu.isr_ns"),
        ns("cpu.dpc_ns"),
        ns("cpu.thread_wake_ns")};
    for (int i = 0; i < 7; ++i)
      r.check(v[size_t(i)] >= least[i] - 1e-6, std::string(which) + " " + kNames[i] + " = " +
                                                   std::to_string(v[size_t(i)]) +
                                                   " ns is below what its parameters alone cost (" +
                                                   std::to_string(least[i]) + " ns): the model skipped a cost");
    return v;
  }

  void app(Platform& p, Results& r) {
    if (!start_adapter(p, r)) return;
    KmdHwQueue* q = p.vidsch.CreateHwQueue(0, 0, 0, 1);
    if (!r.check(q != nullptr, "DxgkDdiCreateHwQueue failed: no free HW queue")) return;
    NativeFence* f = p.vidsch.CreateNativeFence(1, kind_.storage, false, kind_.legacy);
    Memory& m = kind_.storage == Segment::System ? p.sysmem : p.gpu.vram;
    // Two rounds on the same queue and fence: the first signal's translations are cold (its engine walks
    // the page tables for the fence's pages, the CMP for the event ring's); the second's are warm, as in
    // a driver's steady state. The breakdown is the warm round's; the cold total is reported beside it.
    m.watch(f->cv_addr, 8, [this, &m, f](uint64_t, unsigned) {
      if (cur_ && cur_->cv_visible == sc_core::SC_ZERO_TIME && m.peek64(f->cv_addr) >= cur_value_)
        cur_->cv_visible = sc_core::sc_time_stamp();
    });
    const Round &cold = rounds_[0], &warm = rounds_[1];
    round(p, r, q, f, rounds_[0], 1);
    if (!cold.ok) return;
    round(p, r, q, f, rounds_[1], 2);
    if (!warm.ok) return;
    // The woken thread goes back to sleep for 5 us before the run ends (gpu_wait's and monitored_fence's
    // runs also go on 7-8 us past their last event): the waveform shows the core back at idle, and the
    // save file's view can show the wake with a margin (GTKWave draws nothing past a dump's end, where
    // the wake would otherwise sit). Nothing measured is in this tail.
    p.cpu.sleep(sc_core::sc_time(5, sc_core::SC_US));
    const std::vector<double> c = parts(p, r, cold, "cold");
    const std::vector<double> v = parts(p, r, warm, "warm");
    r.metric("signal_to_wake_ns", ns_between(warm.start, warm.woke));
    r.metric("signal_to_wake_cold_ns", ns_between(cold.start, cold.woke));
    for (int i = 0; i < 7; ++i) r.metric(kNames[i], v[size_t(i)]);
    // The warm round's ends and its interrupt, for the waveform's markers and view.
    r.event("signal", warm.start.value());
    r.event("MSI", warm.msi.value());
    r.event("wake", warm.woke.value());
    // The cold signal's GPU stages pay what the warm one's do plus their walks: never less. (The CPU's
    // stages may differ either way: an idle governor picks each round's state from its history.) With
    // link.aspm, the warm round can find the link in a low-power state the cold one (right after the
    // set-up's traffic) did not: its GPU stages then also pay that exit, which is no translation. So the
    // warm side is bounded by its stages less every exit the round's TLPs paid (0 with ASPM off).
    r.check(c[0] + c[1] >= v[0] + v[1] - to_ns(warm.link_exits) - 1e-6,
            "the cold signal's GPU stages were faster than the warm one's: a translation cost nothing");
    r.metric("interrupts_raised", p.gpu.cmp.fence_interrupts());
    r.metric("spurious_interrupts", spurious_interrupts(p));
    // One waiter per round, one signal past its MV each: exactly one interrupt per round, and each woke
    // its waiter (F3); after the wake no CPU waiter is left, so MV is back at UINT64_MAX (F2, F4).
    r.check(p.gpu.cmp.fence_interrupts() == 2,
            "the two signals past MV raised " + std::to_string(p.gpu.cmp.fence_interrupts()) + " interrupts, not 2");
    r.check(spurious_interrupts(p) == 0, "an interrupt woke no waiter");
    if (!kind_.legacy)  // a monitored fence has no MV
      r.check(f->mv == UINT64_MAX && m.peek64(f->mv_addr) == UINT64_MAX, "MV did not return to UINT64_MAX");
  }

  static constexpr const char* kNames[7] = {"fence_write_ns", "cmp_decision_ns", "msi_delivery_ns", "idle_exit_ns",
                                            "isr_ns",         "dpc_ns",          "thread_wake_ns"};
  FenceKind kind_;
  double delay_;
};

}  // namespace

ScenarioInfo fence_signal_scenario() {
  return {"fence_signal",
          "an engine signals a fence a CPU thread waits on: signal-to-wake latency and its parts",
          [](ParamSet& ps, const std::string& o) {
            declare_fence_params(ps, o);
            ps.declare_real("workload.signal_delay_us", 50, "us", 0, 1e6,
                            "A: the GPU computes 50 us before it signals, so the waiter is registered "
                            "and the CPU idle, as in a frame wait",
                            o);
          },
          [](const ParamSet& ps) { return std::make_unique<FenceSignal>(ps); },
          [](const ParamSet& ps) { require_platform(ps, "fence_signal", 1, 1, "one queue on node 0 signals"); },
          /*runs_without_native_fences=*/legacy_fence_kind};
}

namespace {
const ScenarioRegistration kFenceSignalScenario{fence_signal_scenario, 3};
}  // namespace

}  // namespace gpumodel
