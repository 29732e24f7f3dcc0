// dgpu_runtime_d3: the discrete GPU powered off when idle and on again at its next use (runtime D3cold,
// gpu.runtime_d3; kernel_stub/dxgkrnl/runtime_pm.h). An app submits a small packet (a TIMESTAMP and an
// INTERRUPT) and waits for it: once in D0 (warm), once after a gap longer than the idle time (the adapter
// powered off meanwhile: the submission waits for the power-on), and once after a gap shorter than it (no
// power-off). Figures: resume_ms (the power-on, from the use that found the adapter off to the adapter
// ready), cold_submit_to_done_ms, power_off_after_ms (from the last use), the dGPU's power (engines, its
// command processor, its local memory and the link) in D0 idle and while off.
// Verdict: exactly one power-off and one power-on; the power-off no earlier than the idle time after the
// last use; the power-on no shorter than its stages' parameters (slot power-on, link training, the
// configuration wait, the driver's re-initialisation) and no longer than them plus one Link Status poll
// period and the restore's copies; the restore no faster than the link; the dGPU's draw while off what the
// video memory's state alone costs; every request to the dGPU found its link up (the link counts those that
// did not). With gpu.runtime_d3 = off, or a dGPU that drives the display, no power-off at all.
#include "platform/energy.h"
#include "scenarios/common/fence_common.h"

namespace gpumodel {
namespace {

class RuntimeD3 : public ScenarioDriver {
  struct Round {
    sc_core::sc_time submit = sc_core::SC_ZERO_TIME, done = sc_core::SC_ZERO_TIME;
  };

 public:
  explicit RuntimeD3(const ParamSet& ps)
      : idle_(ps.get_ns("gpu.runtime_d3_idle_ms") * 1e6),
        long_gap_(ps.get_ns("workload.long_gap_ms") * 1e6),
        short_gap_(ps.get_ns("workload.short_gap_ms") * 1e6),
        local_bytes_(uint64_t(ps.get_int("workload.local_mb")) << 20),
        work_(ps.get_ns("workload.work_us") * 1000) {}

  void build(Platform& p, Results& r) override {
    // Probes (they read, never drive): the energy at each change of the slot's power.
    // The first power-off and power-on, the long gap's (the verdict checks there is no other).
    chain(p.link.on_slot_power, [this, &p](bool on) {
      if (on ? ++ons_ != 1 : ++offs_ != 1) return;
      (on ? at_on_ : at_off_) = EnergyModel(p).read();
      if (!on) before_off_use_ = p.runtime_pm().last_use();
    });
    p.cpu.spawn_thread("app", [this, &p, &r] {
      if (!start_adapter(p, r)) return;
      if (local_bytes_) {  // the app's resources in local memory: what decides self refresh or off
        DxgkCreateAllocationArgs a;
        a.bytes = local_bytes_;
        if (!r.check(p.vidmm.CreateAllocation(1, Segment::Local, a), "the local allocation failed")) return;
      }
      KmdHwQueue* q = p.vidsch.CreateHwQueue(0, 0, 0, 1);
      if (!r.check(q, "DxgkDdiCreateHwQueue failed: no free HW queue")) return;
      auto round = [&](Round& x, int i) {
        PacketWriter w;
        if (work_ > sc_core::SC_ZERO_TIME) w.compute(engine_cycles(p.params, to_ns(work_)));
        w.timestamp(p.kmd.scratch() + 8 * uint64_t(i)).interrupt(3);
        x.submit = sc_core::sc_time_stamp();
        p.vidsch.SubmitInOrder(q, w);
        p.cpu.wait_for(p.vidsch.interrupt_event(3));
        x.done = sc_core::sc_time_stamp();
      };
      round(round_[0], 1);
      at_idle_ = EnergyModel(p).read();
      p.cpu.sleep(long_gap_);
      round(round_[1], 2);
      p.cpu.sleep(short_gap_);
      round(round_[2], 3);
    });
    (void)r;
  }

  // The power-on's least time: the slot's ramp and PERST# and the training happen in the hardware while the
  // OS sleeps 20 ms and then polls; then the configuration wait and the driver's re-initialisation.
  static sc_core::sc_time resume_floor(const Platform& p) {
    auto ms = [&p](const char* k) { return p.params.get_real(k); };
    const double floor = std::max(20.0, ms("link.power_on_ms") + ms("link.training_ms")) +
                         ms("gpu.runtime_d3_config_wait_ms") + ms("kmd.d0_init_ms");
    return sc_core::sc_time(floor, sc_core::SC_MS);
  }

  // The dGPU's own parts (its engines, command processor and local memory) and the link, in mJ.
  static double dgpu_mj(const EnergyReading& e) {
    double mj = e.part("vram") + e.part("link");
    for (auto& [n, v] : e.parts_mj)
      if (n.rfind("gpu_", 0) == 0) mj += v;
    return mj;
  }

  void finish(Platform& p, Results& r) override {
    const RuntimePm& pm = p.runtime_pm();
    for (int i = 0; i < 3; ++i)
      if (!r.check(round_[i].done != sc_core::SC_ZERO_TIME, "a submission never completed")) return;
    auto ms = [](const sc_core::sc_time& t) { return t.to_seconds() * 1e3; };
    r.metric("warm_submit_to_done_ns", ns_between(round_[0].submit, round_[0].done));
    r.metric("cold_submit_to_done_ms", ms(round_[1].done - round_[1].submit));
    r.metric("short_gap_submit_to_done_ns", ns_between(round_[2].submit, round_[2].done));
    r.metric("power_offs", pm.power_offs());
    r.metric("power_ons", pm.power_ons());
    r.metric("link_down_requests", p.link.aborts());
    r.metric("cancelled_power_offs", pm.cancelled());
    // NVIDIA's rule: a dGPU that drives a display stays on; so does an integrated one (never enabled).
    r.check(!(pm.enabled() && p.gpu.display), "runtime D3cold was enabled on a dGPU that drives a display");
    if (!pm.enabled()) {
      const std::string why = p.params.get_enum("gpu.runtime_d3") == "off"
                                  ? "gpu.runtime_d3 = off: the dGPU stays in D0"
                                  : "the dGPU drives the display (display.adapter = gpu): it stays in D0";
      r.metric_absent("resume_ms", why);
      r.check(pm.power_offs() == 0 && p.link.slot_on(), "the dGPU powered off though runtime D3cold does not apply");
      return;
    }
    // A submission that comes while VidMm still saves the video memory cancels the power-off (the dGPU
    // stays on): then no power-off and no power-on, and the submission waits for the save's copies only.
    if (pm.cancelled() > 0 && pm.power_offs() == 0) {
      r.check(pm.power_ons() == 0, "a power-on without a power-off");
      r.check(round_[1].done - round_[1].submit < resume_floor(p),
              "the submission that cancelled the power-off waited as long as a power-on");
      r.metric_absent("resume_ms", "the power-off was cancelled: a submission came while VidMm saved VRAM");
      return;
    }
    // One power-off in the long gap, one power-on at the next use, none in the short gap; the run ends with
    // its last submission's work (the idle timer does not keep it going: runtime_pm.h).
    if (!r.check(pm.power_offs() == 1 && pm.power_ons() == 1,
                 "not exactly one power-off (in the long gap) and one power-on (at the submission after it): " +
                     std::to_string(pm.power_offs()) + " and " + std::to_string(pm.power_ons())))
      return;
    const double off_ms = ms(at_on_.at - at_off_.at);
    r.metric("resume_ms", ms(pm.last_resume()));
    r.metric("restore_ms", ms(pm.last_restore()));
    r.metric("power_off_after_ms", ms(at_off_.at - round_[0].submit));
    r.metric("d3cold_ms", off_ms);
    r.metric("vram_restored_bytes", pm.last_restored_bytes());
    r.metric("vram_while_off", pm.vram_saves() ? "off" : "self_refresh");
    // The dGPU's draw in D0 idle: from the warm round's end to the power-off.
    const double idle_mw = (dgpu_mj(at_off_) - dgpu_mj(at_idle_)) / ms(at_off_.at - at_idle_.at) * 1000;
    const double off_mw = (dgpu_mj(at_on_) - dgpu_mj(at_off_)) / off_ms * 1000;
    r.metric("dgpu_d0_idle_mw", idle_mw);
    r.metric("dgpu_off_mw", off_mw);
    auto ns = [&p](const char* k) { return p.params.get_real(k); };
    // The power-off comes after the work and the idle time: never earlier than the first submission plus
    // its work (workload.work_us) plus gpu.runtime_d3_idle_ms, nor than the OS's own last use plus the latter.
    r.check(at_off_.at >= round_[0].submit + work_ + idle_ && at_off_.at >= before_off_use_ + idle_,
            "the dGPU powered off before its work and gpu.runtime_d3_idle_ms had passed");
    // The power-on: the slot's ramp and PERST# (link.power_on_ms) and training (link.training_ms) happen in
    // the hardware while the OS sleeps 20 ms and polls every 1 ms; then the configuration wait and the
    // driver's re-initialisation. Its least cost is max(20 ms, ramp + training) + wait + re-init; at most one
    // poll period (and the MMIO accesses' microseconds, within 1 ms) more, plus the restore's copies.
    const double least = to_ns(resume_floor(p)) / 1e6;
    const double resume = ms(pm.last_resume()), restore = ms(pm.last_restore());
    r.check(resume >= least, "resume_ms = " + std::to_string(resume) + " is below its stages' parameters (" +
                                 std::to_string(least) + " ms): a stage was skipped");
    r.check(resume <= least + 1 + 1 + restore, "resume_ms = " + std::to_string(resume) + " exceeds its stages (" +
                                                   std::to_string(least) + " ms), one poll, and the restore (" +
                                                   std::to_string(restore) + " ms)");
    // The restore moves what the save did, over the link: no faster than the link's rate.
    const double link_ms = double(pm.last_restored_bytes()) / p.link.bytes_per_ns() / 1e6;
    r.check(restore >= link_ms, "the VRAM restore (" + std::to_string(restore) + " ms) beat the link's rate (" +
                                    std::to_string(link_ms) + " ms for " + std::to_string(pm.last_restored_bytes()) +
                                    " bytes)");
    // Video memory off exactly when what was in use fit the threshold (NVIDIA's rule), and then every
    // byte in use was restored.
    const bool fits = local_bytes_ <= uint64_t(p.params.get_int("gpu.runtime_d3_vram_threshold_mb")) << 20;
    r.check(fits == (pm.vram_saves() > 0), fits ? "the video memory in use fit the threshold, yet it was kept in "
                                                  "self refresh"
                                                : "the video memory in use exceeded the threshold, yet it was "
                                                  "turned off");
    r.check(!fits || pm.last_restored_bytes() >= local_bytes_,
            "the power-on restored " + std::to_string(pm.last_restored_bytes()) + " bytes of the " +
                std::to_string(local_bytes_) + " in use");
    // While off, the dGPU draws what its video memory's state costs and nothing else (the rail's residual is
    // taken as zero): self refresh at power.vram_self_refresh_mw_per_gib, or nothing.
    const double gib = double(p.gpu.vram.size()) / double(uint64_t(1) << 30);
    const double want = pm.vram_saves() ? 0.0 : ns("power.vram_self_refresh_mw_per_gib") * gib;
    r.check(std::abs(off_mw - want) <= 1e-6 * std::max(1.0, want),
            "the dGPU drew " + std::to_string(off_mw) + " mW while powered off; its video memory's state costs " +
                std::to_string(want) + " mW");
    r.check(off_mw < idle_mw, "powering the dGPU off saved nothing against D0 idle");
    r.event("power_off", at_off_.at.value());
    r.event("power_on", at_on_.at.value());
  }

 private:
  sc_core::sc_time idle_, long_gap_, short_gap_;
  uint64_t local_bytes_;
  sc_core::sc_time work_;
  Round round_[3];
  sc_core::sc_time before_off_use_ = sc_core::SC_ZERO_TIME;
  EnergyReading at_idle_, at_off_, at_on_;
  int offs_ = 0, ons_ = 0;
};

}  // namespace

ScenarioInfo runtime_d3_scenario() {
  return {"dgpu_runtime_d3",
          "the dGPU powered off when idle (runtime D3cold) and on at its next use: resume latency and power",
          [](ParamSet& ps, const std::string& o) {
            ps.declare_real("workload.long_gap_ms", 8000, "ms", 0, 600000,
                            "A: the app idles 8 s between its first and second submission: longer than the 5 s "
                            "idle time, so the dGPU powers off meanwhile",
                            o);
            ps.declare_real("workload.short_gap_ms", 1000, "ms", 0, 600000,
                            "A: then 1 s before its third: shorter than the idle time, no power-off", o);
            ps.declare_real("workload.work_us", 0, "us", 0, 1e7,
                            "A: each submission's COMPUTE before its TIMESTAMP (0: none); longer than the idle "
                            "time, it shows the adapter kept on while busy",
                            o);
            ps.declare_int("workload.local_mb", 64, "MiB", 0, 1 << 20,
                           "A: the app's resources in local memory, 64 MiB: below the 200 MB threshold, so the "
                           "video memory is turned off (saved and restored); above it, kept in self refresh",
                           o);
          },
          [](const ParamSet& ps) { return std::make_unique<RuntimeD3>(ps); },
          [](const ParamSet& ps) {
            const int64_t local_mb = ps.get_int("workload.local_mb");
            // With local memory in use, VidMm's save and restore copies run on the KMD's paging ring: a
            // second HW queue.
            require_platform(ps, "dgpu_runtime_d3", 1, local_mb > 0 ? 2 : 1,
                             local_mb > 0 ? "the app submits to one queue on node 0, VidMm's copies to the "
                                            "KMD's paging ring"
                                          : "the app submits to one queue on node 0");
            const int64_t half = ps.get_int("vram.size_bytes") / 2 >> 20;
            if (local_mb > half)
              throw ConfigError("workload.local_mb = " + std::to_string(local_mb) +
                                " does not fit the dGPU's local memory beside VidMm's page tables; allowed: "
                                "workload.local_mb <= " +
                                std::to_string(half) + " (half of vram.size_bytes)");
            if (ps.get_real("workload.work_us") > 0)
              require_engine_runs(ps, "dgpu_runtime_d3", "gpu", 0, Op::Compute, "workload.work_us's COMPUTE",
                                  "each submission computes first");
            const double idle = ps.get_real("gpu.runtime_d3_idle_ms"), lg = ps.get_real("workload.long_gap_ms"),
                         sg = ps.get_real("workload.short_gap_ms");
            if (ps.get_enum("gpu.runtime_d3") == "d3cold" && lg <= idle)
              throw ConfigError("workload.long_gap_ms = " + std::to_string(lg) +
                                " does not exceed gpu.runtime_d3_idle_ms = " + std::to_string(idle) +
                                ": the dGPU would never power off; allowed: workload.long_gap_ms > "
                                "gpu.runtime_d3_idle_ms");
            if (ps.get_enum("gpu.runtime_d3") == "d3cold" && sg >= idle)
              throw ConfigError("workload.short_gap_ms = " + std::to_string(sg) +
                                " is not below gpu.runtime_d3_idle_ms = " + std::to_string(idle) +
                                ": the third submission would find the dGPU off; allowed: workload.short_gap_ms < "
                                "gpu.runtime_d3_idle_ms");
          }};
}

namespace {
const ScenarioRegistration kRuntimeD3Scenario{runtime_d3_scenario};
}  // namespace

}  // namespace gpumodel
