// gpu_wait: node A signals a fence that a queue on node B waits on (same adapter). Native: B's WAIT
// blocks on the GPU and the CMP unblocks it (F5). Legacy: the OS holds B's work on the CPU and submits
// it after the signal interrupt. Metric: signal_to_unblock_ns, from A's SIGNAL starting to B's next
// packet starting, for a second signal and wait (warm translations); signal_to_unblock_cold_ns for the
// first. Verdict: native unblocks B on the GPU with no CPU fence interrupt; legacy through
// the CPU (no GPU unblock, one fence interrupt). With workload.cpu_waiter a CPU thread waits for the
// value too (signal_to_cpu_wake_ns): scenarios/monitored_fence.ini runs both waits on a monitored fence
// with the native fence feature disabled (F9).
#include "scenarios/common/fence_common.h"

namespace gpumodel {
namespace {

class GpuWait : public ScenarioDriver {
  struct Round {
    uint64_t ts = 0;  // where B's TIMESTAMP goes
    sc_core::sc_time cv_visible = sc_core::SC_ZERO_TIME, signal_start = sc_core::SC_ZERO_TIME;
    sc_core::sc_time wait_registered = sc_core::SC_ZERO_TIME;
    uint64_t unblock_ps = 0;  // B's next packet started (its TIMESTAMP's tick less one decode), ps
  };

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
        const uint64_t v = m.peek64(f->cv_addr);
        for (uint64_t i = 1; i <= 2; ++i)
          if (v >= i && round_[i - 1].cv_visible == sc_core::SC_ZERO_TIME)
            round_[i - 1].cv_visible = sc_core::sc_time_stamp();
      });
      // Two rounds: the first signal and wait pay cold TLBs (the fence's pages, the CMP's), the second
      // is warm, a driver's steady state. The headline figure is the warm one's.
      for (uint64_t v = 1; v <= 2; ++v) {
        Round& x = round_[v - 1];
        x.ts = p.kmd.scratch() + 8 * v;
        PacketWriter b, a;
        b.timestamp(x.ts).interrupt(3);  // B's work after the wait: note when it starts, then tell the app
        a.compute(engine_cycles(p.params, delay_us_ * 1000));
        VidSch::gpu_signal(a, *f, v, 1);
        p.vidsch.SubmitAfterWait(qb, f, v, b);
        p.kmd.DxgkDdiSubmitCommandToHwQueue(qa, a);
        if (cpu_waiter_ && v == 2)
          p.cpu.spawn_thread("waiter", [this, &p, &r, f] {
            r.check(p.vidsch.WaitFromCpu(f, 2), "the CPU wait did not complete");
            cpu_woke_ = sc_core::sc_time_stamp();
          });
        p.cpu.wait_for(p.vidsch.interrupt_event(3));
        x.signal_start = kind_.signal_start(*p.gpu.nodes[0]);
        x.wait_registered = p.gpu.cmp.last_wait_registered();
      }
    });
    (void)r;
  }

  // One round's signal_to_unblock_ns (from A's SIGNAL starting to B's next packet starting), checked
  // against its parameters' cost and its order; negative: B never ran.
  double unblock_of(Platform& p, Results& r, Round& x, const char* which) {
    // B's TIMESTAMP counts ticks of gpu.timestamp_tick_ps, rounded down, taken after B's decode; its
    // packet started one decode earlier. The figure puts A's signal start on the same clock (rounded
    // down to a tick like a TIMESTAMP), so the two ends share one resolution: exact when both fall on a
    // tick (the default 1 ns tick), within one tick and unbiased otherwise.
    const uint64_t tick = uint64_t(p.params.get_int(p.gpu.config.key + ".timestamp_tick_ps"));  // node B's adapter
    const uint64_t b_ticks = p.sysmem.peek64(x.ts);
    const sc_core::sc_time decode = p.gpu.nodes[1]->engine_period() * double(p.params.get_int("node.decode_cycles"));
    auto ticks = [tick](const sc_core::sc_time& t) { return t.value() / tick; };  // as a TIMESTAMP reads t
    if (b_ticks == 0) {  // B's TIMESTAMP was never written: B never ran (a run cut by sim.limit_ms)
      r.check(false, std::string("node B never ran its ") + which + " work after the wait");
      return -1;
    }
    x.unblock_ps = b_ticks * tick - decode.value();
    const double unblock = (double(x.unblock_ps) - double(ticks(x.signal_start) * tick)) / 1000.0;
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
    if (!kind_.legacy && p.params.get_enum("cmp.mv_source") == "shadow" && x.wait_registered <= x.signal_start)
      least = ns("vram.read_latency_ns") + ns("cmp.decision_cycles") * cycle +
              (p.params.get_bool("cmp.barrier") ? ns("cmp.barrier_ns") : 0);
    if (kind_.legacy)
      least =
          ns("node.write_buffer_ns") +
          (kind_.storage == Segment::System ? ns("link.hop_ns") + ns("rc.latency_ns") + ns("sysmem.write_latency_ns")
                                            : ns("vram.write_latency_ns")) +
          ns("cmp.interrupt_cycles") * cycle + ns("link.hop_ns") + ns("rc.latency_ns") + ns("cpu.interrupt_entry_ns") +
          ns("cpu.isr_ns") + ns("cpu.dpc_ns");
    const double slack = double(tick) / 1000.0;  // the two ends are read on the TIMESTAMP's clock
    r.check(unblock >= least - slack, std::string(which) + " signal_to_unblock_ns = " + std::to_string(unblock) +
                                          " ns is below what its parameters alone cost (" + std::to_string(least) +
                                          " ns): the model skipped a cost");
    // B's work started after A's signal started, and (F5; the CMP barriers before it unblocks) after
    // A's CV write (and what A wrote before it) was visible: B's TIMESTAMP, one decode later, cannot
    // read an earlier tick than either time plus that decode would. (A comparison of the rounded
    // timestamp with an exact time would fail a right order whenever both fall in one tick.)
    r.check(b_ticks >= ticks(x.signal_start + decode) && unblock >= 0 - double(tick) / 1000.0,
            std::string("node B ran before node A signalled (") + which + ")");
    r.check(x.cv_visible != sc_core::SC_ZERO_TIME && b_ticks >= ticks(x.cv_visible + decode),
            std::string("node B ran before node A's CurrentValue write was visible (") + which + ")");
    return unblock;
  }

  void finish(Platform& p, Results& r) override {
    const double cold = unblock_of(p, r, round_[0], "cold"), warm = unblock_of(p, r, round_[1], "warm");
    // The warm round's ends, for the waveform's markers and view: A's SIGNAL starts, B's next packet
    // starts (the figure's two ends, B's as its TIMESTAMP read it).
    if (warm >= 0) {
      r.event("signal", round_[1].signal_start.value());
      r.event("unblock", round_[1].unblock_ps);
    }
    if (warm < 0)
      r.metric_absent("signal_to_unblock_ns", "node B never ran its work after the wait");
    else
      r.metric("signal_to_unblock_ns", warm);
    if (cold < 0)
      r.metric_absent("signal_to_unblock_cold_ns", "node B never ran its work after the first wait");
    else
      r.metric("signal_to_unblock_cold_ns", cold);
    const Round& x = round_[1];
    if (cpu_waiter_) {
      if (cpu_woke_ == sc_core::SC_ZERO_TIME)
        r.metric_absent("signal_to_cpu_wake_ns", "the CPU waiter was never woken");
      else
        r.metric("signal_to_cpu_wake_ns", ns_between(x.signal_start, cpu_woke_));
    }
    const uint64_t fence_irqs = p.gpu.cmp.fence_interrupts(), unblocks = p.gpu.cmp.gpu_unblocks();
    r.metric("cpu_interrupts", p.cpu.interrupts());
    r.metric("fence_interrupts", fence_irqs);
    r.metric("gpu_unblocks", unblocks);
    if (kind_.legacy) {  // F5: no GPU wait; the OS releases B's work after the signal interrupt
      r.check(unblocks == 0, "legacy fence: node B was unblocked on the GPU");
      // One interrupt per signal: its DPC releases B's work and wakes the CPU waiter alike.
      r.check(fence_irqs == 2, "legacy fence: not exactly one fence interrupt for each of the two signals");
      // A monitored fence is the OS's alone (F9): the driver was never asked to create a native fence.
      r.check(p.kmd.native_fences_created() == 0, "legacy fence: the KMD was asked for a native fence");
    } else {  // F5: unblocked on the GPU, no CPU round trip; F3: an interrupt only for a CPU waiter
      r.check(unblocks == 2, "native fence: node B was not unblocked on the GPU for each signal");
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
  Round round_[2];
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
