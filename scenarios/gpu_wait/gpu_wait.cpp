// gpu_wait: node A signals a fence that a queue on node B waits on (same adapter). Native: B's WAIT
// blocks on the GPU and the CMP unblocks it (F5). Legacy: the OS holds B's work on the CPU and submits
// it after the signal interrupt. Metric: signal_to_unblock_ns, from A's SIGNAL starting to B's next
// packet starting. Verdict: native unblocks B on the GPU with no CPU fence interrupt; legacy through
// the CPU (no GPU unblock, one fence interrupt). With workload.cpu_waiter a CPU thread waits for the
// value too (signal_to_cpu_wake_ns): scenarios/monitored_fence.ini runs both waits on a monitored fence
// with the native fence feature disabled (F9).
#include "scenarios/common/fence_common.h"

namespace gpumodel {
namespace {

class GpuWait : public ScenarioDriver {
 public:
  explicit GpuWait(const ParamSet& ps)
      : kind_(ps),
        delay_us_(ps.get_real("workload.signal_delay_us")),
        cpu_waiter_(ps.get_bool("workload.cpu_waiter")) {}

  void build(Platform& p, Results& r) override {
    p.cpu.spawn_thread("app", [this, &p, &r] {
      DxgkAdapterInfo info;
      if (!start_adapter(p, r, &info) || !r.check(info.nodes >= 2, "fewer than 2 nodes")) return;
      KmdHwQueue* qa = p.vidsch.CreateHwQueue(0, 0, 0, 1);
      KmdHwQueue* qb = p.vidsch.CreateHwQueue(1, 0, 0, 1);
      if (!r.check(qa && qb, "DxgkDdiCreateHwQueue failed: no free HW queue")) return;
      NativeFence* f = p.vidsch.CreateNativeFence(1, kind_.storage, false, kind_.legacy);
      Memory& m = kind_.storage == Segment::System ? p.sysmem : p.gpu.vram;
      m.watch(f->cv_addr, 8, [this, &m, f](uint64_t, unsigned) {  // a probe, for the verdict
        if (cv_visible_ == sc_core::SC_ZERO_TIME && m.peek64(f->cv_addr) >= 1) cv_visible_ = sc_core::sc_time_stamp();
      });
      ts_ = p.kmd.scratch();
      PacketWriter b, a;
      b.timestamp(ts_).interrupt(3);  // B's work after the wait: note when it starts, then tell the app
      a.compute(engine_cycles(p.params, delay_us_ * 1000));
      VidSch::gpu_signal(a, *f, 1, 1);
      p.vidsch.SubmitAfterWait(qb, f, 1, b);
      p.kmd.DxgkDdiSubmitCommandToHwQueue(qa, a);
      if (cpu_waiter_)
        p.cpu.spawn_thread("waiter", [this, &p, &r, f] {
          r.check(p.vidsch.WaitFromCpu(f, 1), "the CPU wait did not complete");
          cpu_woke_ = sc_core::sc_time_stamp();
        });
      p.cpu.wait_for(p.vidsch.interrupt_event(3));
    });
    (void)r;
  }

  void finish(Platform& p, Results& r) override {
    // B's TIMESTAMP counts ticks of gpu.timestamp_tick_ps, rounded down, taken after B's decode; its
    // packet started one decode earlier. The figure puts A's signal start on the same clock (rounded
    // down to a tick like a TIMESTAMP), so the two ends share one resolution: exact when both fall on a
    // tick (the default 1 ns tick), within one tick and unbiased otherwise.
    const uint64_t tick = uint64_t(p.params.get_int(p.gpu.config.key + ".timestamp_tick_ps"));  // node B's adapter
    const uint64_t b_ticks = p.sysmem.peek64(ts_);
    const sc_core::sc_time decode = p.gpu.nodes[1]->engine_period() * double(p.params.get_int("node.decode_cycles"));
    auto ticks = [tick](const sc_core::sc_time& t) { return t.value() / tick; };  // as a TIMESTAMP reads t
    const sc_core::sc_time signal_start = kind_.signal_start(*p.gpu.nodes[0]);
    if (b_ticks == 0) {  // B's TIMESTAMP was never written: B never ran (a run cut by sim.limit_ms)
      r.metric_absent("signal_to_unblock_ns", "node B never ran its work after the wait");
      r.check(false, "node B never ran its work after the wait");
    } else {
      const double unblock =
          (double(b_ticks * tick) - double(decode.value()) - double(ticks(signal_start) * tick)) / 1000.0;
      r.metric("signal_to_unblock_ns", unblock);
      // The figure against what its parameters alone cost, a lower bound (the tests derive it exactly):
      // native (the shadow MV), when the CMP had registered B's wait before A signalled (the scenario's
      // premise; else the registration's own re-read of CV releases B): the engine's check reads VRAM,
      // the CMP decides and, with cmp.barrier, barriers before it unblocks B (F5, F7); legacy: A's CV
      // write crosses its write buffer to its memory, the CMP's interrupt firmware, the MSI up the link
      // and root complex, interrupt entry, the ISR and the DPC that submits B's work (held until then).
      // A figure below it skipped a cost.
      auto ns = [&p](const char* k) { return p.params.get_real(k); };
      const double cycle = 1000.0 / ns("cmp.clock_mhz");
      double least = 0;
      if (!kind_.legacy && p.params.get_enum("cmp.mv_source") == "shadow" &&
          p.gpu.cmp.last_wait_registered() <= signal_start)
        least = ns("vram.read_latency_ns") + ns("cmp.decision_cycles") * cycle +
                (p.params.get_bool("cmp.barrier") ? ns("cmp.barrier_ns") : 0);
      if (kind_.legacy)
        least =
            ns("node.write_buffer_ns") +
            (kind_.storage == Segment::System ? ns("link.hop_ns") + ns("rc.latency_ns") + ns("sysmem.write_latency_ns")
                                              : ns("vram.write_latency_ns")) +
            ns("cmp.interrupt_cycles") * cycle + ns("link.hop_ns") + ns("rc.latency_ns") +
            ns("cpu.interrupt_entry_ns") + ns("cpu.isr_ns") + ns("cpu.dpc_ns");
      const double slack = double(tick) / 1000.0;  // the two ends are read on the TIMESTAMP's clock
      r.check(unblock >= least - slack, "signal_to_unblock_ns = " + std::to_string(unblock) +
                                            " ns is below what its parameters alone cost (" + std::to_string(least) +
                                            " ns): the model skipped a cost");
      // B's work started after A's signal started, and (F5; the CMP barriers before it unblocks) after
      // A's CV write (and what A wrote before it) was visible: B's TIMESTAMP, one decode later, cannot
      // read an earlier tick than either time plus that decode would. (A comparison of the rounded
      // timestamp with an exact time would fail a right order whenever both fall in one tick.)
      r.check(b_ticks >= ticks(signal_start + decode) && unblock >= 0 - double(tick) / 1000.0,
              "node B ran before node A signalled");
      r.check(cv_visible_ != sc_core::SC_ZERO_TIME && b_ticks >= ticks(cv_visible_ + decode),
              "node B ran before node A's CurrentValue write was visible");
    }
    if (cpu_waiter_) {
      if (cpu_woke_ == sc_core::SC_ZERO_TIME)
        r.metric_absent("signal_to_cpu_wake_ns", "the CPU waiter was never woken");
      else
        r.metric("signal_to_cpu_wake_ns", ns_between(kind_.signal_start(*p.gpu.nodes[0]), cpu_woke_));
    }
    const uint64_t fence_irqs = p.gpu.cmp.fence_interrupts(), unblocks = p.gpu.cmp.gpu_unblocks();
    r.metric("cpu_interrupts", p.cpu.interrupts());
    r.metric("fence_interrupts", fence_irqs);
    r.metric("gpu_unblocks", unblocks);
    if (kind_.legacy) {  // F5: no GPU wait; the OS releases B's work after the signal interrupt
      r.check(unblocks == 0, "legacy fence: node B was unblocked on the GPU");
      // One interrupt for the one signal: its DPC releases B's work and wakes the CPU waiter alike.
      r.check(fence_irqs == 1, "legacy fence: not exactly one fence interrupt for the one signal");
      // A monitored fence is the OS's alone (F9): the driver was never asked to create a native fence.
      r.check(p.kmd.native_fences_created() == 0, "legacy fence: the KMD was asked for a native fence");
    } else {  // F5: unblocked on the GPU, no CPU round trip; F3: an interrupt only for a CPU waiter
      r.check(unblocks == 1, "native fence: node B was not unblocked on the GPU");
      r.check(fence_irqs == (cpu_waiter_ ? 1u : 0u), cpu_waiter_
                                                         ? "native fence: not exactly one interrupt for the CPU waiter"
                                                         : "native fence: the signal raised a CPU fence interrupt");
    }
  }

 private:
  FenceKind kind_;
  double delay_us_;
  bool cpu_waiter_;
  sc_core::sc_time cpu_woke_ = sc_core::SC_ZERO_TIME;
  uint64_t ts_ = 0;
  sc_core::sc_time cv_visible_ = sc_core::SC_ZERO_TIME;
};

}  // namespace

ScenarioInfo gpu_wait_scenario() {
  return {"gpu_wait",
          "node A signals, node B waits: on the GPU (native) or through the CPU (legacy)",
          [](ParamSet& ps, const std::string& o) {
            declare_fence_params(ps, o);
            ps.declare_real("workload.signal_delay_us", 50, "us", 0, 1e6,
                            "A: node A computes 50 us before it signals, so B is already waiting", o);
            ps.declare_bool("workload.cpu_waiter", false,
                            "A: false, B's wait alone; true: a CPU thread waits for the same value too, as an "
                            "app's frame wait beside the GPU's",
                            o);
          },
          [](const ParamSet& ps) { return std::make_unique<GpuWait>(ps); },
          [](const ParamSet& ps) {
            require_platform(ps, "gpu_wait", 2, 2, "node A signals on one queue, node B waits on another");
          },
          /*runs_without_native_fences=*/legacy_fence_kind};
}

namespace {
const ScenarioRegistration kGpuWaitScenario{gpu_wait_scenario, 5};
}  // namespace

}  // namespace gpumodel
