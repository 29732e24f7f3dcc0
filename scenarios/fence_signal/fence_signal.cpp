// fence_signal: an engine signals a native fence that a CPU thread waits on; the end-to-end latency
// from the SIGNAL's execution to the thread running again, and its parts, which sum to it:
//   fence_write_ns   SIGNAL starts -> CurrentValue visible (write buffer, fabric/link, memory)
//   cmp_decision_ns  CV visible -> MSI issued (engine's MV check, CMP decision, barrier, event entry)
//   msi_delivery_ns  MSI issued -> MSI at the interrupt controller
//   idle_exit_ns     MSI arrival -> ISR starts (the core's idle-state exit, 0 if it was busy)
//   isr_ns           ISR (interrupt entry, KMD ISR reading the event ring)
//   dpc_ns           ISR end -> DPC end (DPC, CV read, waking the waiter, moving MV)
//   thread_wake_ns   DPC end -> the waiting thread runs
#include <iomanip>
#include <sstream>

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
  void app(Platform& p, Results& r) {
    if (!start_adapter(p, r)) return;
    KmdHwQueue* q = p.vidsch.CreateHwQueue(0, 0, 0, 1);
    if (!r.check(q != nullptr, "DxgkDdiCreateHwQueue failed: no free HW queue")) return;
    NativeFence* f = p.vidsch.CreateNativeFence(1, kind_.storage, false, kind_.legacy);
    Memory& m = kind_.storage == Segment::System ? p.sysmem : p.gpu.vram;
    sc_core::sc_time cv_visible = sc_core::SC_ZERO_TIME;
    m.watch(f->cv_addr, 8, [&](uint64_t, unsigned) {
      if (cv_visible == sc_core::SC_ZERO_TIME && m.peek64(f->cv_addr) >= 1) cv_visible = sc_core::sc_time_stamp();
    });
    PacketWriter w;
    w.compute(engine_cycles(p.params, delay_ * 1000));  // the GPU works, then signals
    VidSch::gpu_signal(w, *f, 1, 1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    const sc_core::sc_time asked = sc_core::sc_time_stamp();
    r.check(p.vidsch.WaitFromCpu(f, 1), "the CPU wait did not complete");
    const sc_core::sc_time woke = sc_core::sc_time_stamp();

    const sc_core::sc_time start = kind_.signal_start(*p.gpu.nodes[0]);
    const sc_core::sc_time armed = p.vidsch.last_wait_armed();
    r.metric("signal_to_wake_ns", ns_between(start, woke));
    // The breakdown is of the interrupt path: the waiter armed (MV lowered) before the SIGNAL runs.
    // A shorter delay races the arming (F8's re-read or a second interrupt wakes the thread); the
    // stages would then come from different interrupts, so none is reported.
    if (armed < asked || start < armed) {
      auto num = [](double v) {
        std::ostringstream os;
        os << std::setprecision(10) << v;
        return os.str();
      };
      r.check(false, "workload.signal_delay_us = " + num(delay_) + " is too short: the SIGNAL started at " +
                         num(to_ns(start)) + " ns, before the CPU wait was armed (" +
                         (armed < asked ? std::string("never: CV had already reached the value")
                                        : "at " + num(to_ns(armed)) + " ns") +
                         "), so the wake did not take the interrupt path this scenario measures");
      return;
    }
    const sc_core::sc_time msi = p.gpu.cmp.last_msi_issued();
    const auto& s = p.cpu.last_interrupt();
    const double parts[] = {ns_between(start, cv_visible),      ns_between(cv_visible, msi),
                            ns_between(msi, s.msi_arrival),     ns_between(s.msi_arrival, s.isr_start),
                            ns_between(s.isr_start, s.isr_end), ns_between(s.isr_end, s.dpc_end),
                            ns_between(s.dpc_end, woke)};
    const char* names[] = {"fence_write_ns", "cmp_decision_ns", "msi_delivery_ns", "idle_exit_ns",
                           "isr_ns",         "dpc_ns",          "thread_wake_ns"};
    // The parts are consecutive differences of the same stamps, so they sum to the total by
    // construction; what can fail is their order: a negative part means the stages ran out of order.
    for (int i = 0; i < 7; ++i) {
      r.metric(names[i], parts[i]);
      r.check(parts[i] >= 0, std::string(names[i]) + " is negative: the stages happened out of order");
    }
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
      r.check(parts[i] >= least[i] - 1e-6, std::string(names[i]) + " = " + std::to_string(parts[i]) +
                                               " ns is below what its parameters alone cost (" +
                                               std::to_string(least[i]) + " ns): the model skipped a cost");
    r.metric("interrupts_raised", p.gpu.cmp.fence_interrupts());
    r.metric("spurious_interrupts", spurious_interrupts(p));
    // One waiter, one signal past its MV: exactly one interrupt, and it woke the waiter (F3); after
    // the wake no CPU waiter is left, so MV is back at UINT64_MAX (F2, F4).
    r.check(p.gpu.cmp.fence_interrupts() == 1,
            "the signal past MV raised " + std::to_string(p.gpu.cmp.fence_interrupts()) + " interrupts, not 1");
    r.check(spurious_interrupts(p) == 0, "an interrupt woke no waiter");
    if (!kind_.legacy)  // a monitored fence has no MV
      r.check(f->mv == UINT64_MAX && m.peek64(f->mv_addr) == UINT64_MAX, "MV did not return to UINT64_MAX");
  }

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
