// conditional_interrupt: N GPU signals of one fence, signal_interval_ns apart, with a CPU waiter on
// every K-th value (K = 0: no CPU waiter). A native fence interrupts only for a signal that passes a
// waiter's value (F3); a legacy monitored fence interrupts on every signal (F5). The CPU's wake-ups
// and idle-state residency show what the suppressed interrupts buy.
#include "scenarios/fence_common.h"

namespace gpumodel {
namespace {

class ConditionalInterrupt : public ScenarioDriver {
 public:
  explicit ConditionalInterrupt(const ParamSet& ps)
      : kind_(ps),
        n_(uint64_t(ps.get_int("workload.signals"))),
        interval_ns_(ps.get_real("workload.signal_interval_ns")),
        k_(uint64_t(ps.get_int("workload.wait_every"))) {}

  void build(Platform& p, Results& r) override {
    p.cpu.spawn_thread("submitter", [this, &p, &r] {
      if (!r.check(p.kmd.DxgkDdiStartDevice(nullptr), "adapter start failed")) return;
      fence_ = p.vidsch.CreateNativeFence(1, kind_.storage, false, kind_.legacy);
      ready_ = true;
      p.cpu.signal(ready_ev_);
      KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
      const uint64_t cycles = engine_cycles(p.params, interval_ns_);
      const uint32_t slot = p.vidsch.slot(*fence_);
      // The whole stream, in submissions of half a ring; between them the thread sleeps for the time
      // the GPU needs, so the CPU is idle unless an interrupt wakes it.
      const uint64_t per = (q->ring_size / 2) / 28;
      for (uint64_t i = 1; i <= n_;) {
        PacketWriter w;
        const uint64_t first = i;
        for (; i <= n_ && i - first < per; ++i) w.compute(cycles).signal(slot, i);
        p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
        if (i <= n_) p.cpu.sleep(sc_core::sc_time(interval_ns_ * double(i - first), sc_core::SC_NS));
      }
    });
    if (k_ == 0) return;
    p.cpu.spawn_thread("waiter", [this, &p, &r] {
      if (!ready_) p.cpu.wait_for(ready_ev_);
      for (uint64_t v = k_; v <= n_; v += k_)
        r.check(p.vidsch.WaitFromCpu(fence_, v), "a CPU wait did not complete");
    });
  }

  void finish(Platform& p, Results& r) override {
    uint64_t signals = 0;
    for (auto& n : p.gpu.nodes) signals += n->signals();
    r.metric("signals", signals);
    r.metric("interrupts_raised", p.gpu.cmp.fence_interrupts());
    r.metric("interrupts_suppressed", p.gpu.cmp.suppressed());
    r.metric("spurious_interrupts", spurious_interrupts(p));
    r.metric("waiters_woken", p.vidsch.waiters_woken());
    r.metric("null_array_interrupts", p.vidsch.null_array_interrupts());
    r.metric("cpu_wakeups", p.cpu.wakeups());
    r.metric("cpu_idle_residency", idle_residency(p.cpu, sc_core::sc_time_stamp()));
    r.check(signals == n_, "not every signal executed");
  }

 private:
  FenceKind kind_;
  uint64_t n_;
  double interval_ns_;
  uint64_t k_;
  NativeFence* fence_ = nullptr;
  bool ready_ = false;
  KEvent ready_ev_;
};

}  // namespace

ScenarioInfo conditional_interrupt_scenario() {
  return {"conditional_interrupt", "N GPU signals, a CPU waiter on every K-th: interrupts raised and suppressed",
          [](ParamSet& ps, const std::string& o) {
            declare_fence_params(ps, o);
            ps.declare_int("workload.signals", 100, "signals", 1, 100000000, "A: 100 signals", o);
            ps.declare_real("workload.signal_interval_ns", 50000, "ns", 0, 1e9,
                            "A: 50 us apart, far beyond the ~10 us signal-to-wake path, so every "
                            "interrupt is handled before the next signal",
                            o);
            ps.declare_int("workload.wait_every", 10, "signals", 0, 100000000,
                           "A: a CPU waiter on every 10th value (0: none)", o);
          },
          [](const ParamSet& ps) { return std::make_unique<ConditionalInterrupt>(ps); }};
}

}  // namespace gpumodel
