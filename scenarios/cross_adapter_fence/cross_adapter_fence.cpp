// cross_adapter_fence: the native fence document's cross-adapter native fence on the hybrid platform (F15), and the
// the document's future GPU-to-GPU signal as an exploration (F20). One fence, created on the dGPU with type
// DEFAULT and opened on the iGPU; a waiter on one adapter, a signaller on the other:
//   xfence.scenario = 1   both adapters native; the iGPU waits, the dGPU signals
//                     2a  the iGPU without native fences (a monitored fence there); the iGPU waits, the dGPU signals
//                     2b  the iGPU without native fences; the iGPU signals, the dGPU waits
//   xfence.pair = <waiter>_<signaller>, each gpu or cpu: gpu_gpu, gpu_cpu, cpu_gpu, cpu_cpu
//   xfence.igpu_queue = kernel: 2a/2b's variant where both GPUs support native fences but the iGPU's wait or
//                     signal goes to a kernel-mode queue: Dxgkrnl holds the wait and writes the signal on the CPU
//   xfence.mv_segment = system or local: where each native instance's own MonitoredValue lives
// A GPU waiter is a queue whose work after its wait is one WRITE64 to a probe word; a CPU waiter a thread
// in D3DKMTWaitForSynchronizationObjectFromCpu. A GPU signaller computes workload.signal_delay_us then
// signals; a CPU signaller sleeps as long, then D3DKMTSignalSynchronizationObjectFromCpu. workload.signals
// pairs, one every workload.signal_interval_us, value i for the i-th.
// signal_to_unblock_ns: from the signal's start (the signalling engine executing its SIGNAL, or on 2b the
// INTERRUPT that hands it to VidSch: that MSI's issue; a CPU signal: its call) to the waiter's first act
// after its wait: the probe write visible in memory (GPU) or the thread running after its wait (CPU).
// Verdict: every waiter unblocked, after CV reached its value; MV stayed 0 on every native instance (held
// by F15; with the doorbell, F20, the usual rule); the CPU interrupts in the window, and the values the OS
// forwarded to the other adapter, are the design's counts.
#include <cmath>

#include "kernel_stub/dxgkrnl/adapter_start.h"
#include "kernel_stub/dxgkrnl/cross_adapter_fence.h"
#include "scenarios/common/fence_common.h"

namespace gpumodel {
namespace {

using namespace sc_core;

enum { kDgpu = 0, kIgpu = 1 };

class CrossAdapterFenceScenario : public ScenarioDriver {
 public:
  explicit CrossAdapterFenceScenario(const ParamSet& ps)
      : scenario_(ps.get_enum("xfence.scenario")),
        waiter_gpu_(ps.get_enum("xfence.pair").rfind("gpu_", 0) == 0),
        signaller_gpu_(ps.get_enum("xfence.pair").size() > 4 && ps.get_enum("xfence.pair").substr(4) == "gpu"),
        doorbell_(ps.get_bool("xfence.gpu_doorbell")),
        igpu_kernel_queue_(ps.get_enum("xfence.igpu_queue") == "kernel"),
        mv_segment_(ps.get_enum("xfence.mv_segment") == "local" ? Segment::Local : Segment::System),
        signals_(uint64_t(ps.get_int("workload.signals"))),
        period_(sc_time(ps.get_real("workload.signal_interval_us"), SC_US)),
        delay_(sc_time(ps.get_real("workload.signal_delay_us"), SC_US)) {
    waiter_ = scenario_ == "2b" ? kDgpu : kIgpu;
    signaller_ = scenario_ == "2b" ? kIgpu : kDgpu;
    cv_visible_.assign(signals_ + 1, SC_ZERO_TIME);
    signalled_.assign(signals_ + 1, SC_ZERO_TIME);
    unblocked_.assign(signals_ + 1, SC_ZERO_TIME);
    cv_at_unblock_.assign(signals_ + 1, 0);
    msis_at_unblock_.assign(signals_ + 1, 0);
  }

  void build(Platform& p, Results& r) override {
    p.cpu.spawn_thread("app", [this, &p, &r] { app(p, r); });
  }

  void finish(Platform& p, Results& r) override;

 private:
  VidSch& sch(Platform& p, int a) { return a == kDgpu ? p.vidsch : p.igpu_driver->vidsch; }
  Kmd& kmd(Platform& p, int a) { return a == kDgpu ? p.kmd : p.igpu_driver->kmd; }
  GpuAdapter& hw(Platform& p, int a) { return a == kDgpu ? p.gpu : *p.igpu; }
  std::string engine_clock_key(int a) const { return a == kDgpu ? "gpu.engine_clock_mhz" : "igpu.engine_clock_mhz"; }

  void app(Platform& p, Results& r);
  void watch_mv(Platform& p, int a, NativeFence* f);
  struct Snapshot {
    uint64_t interrupts = 0, wakeups = 0;
    std::map<std::string, sc_time> residency;
    sc_time at;
  };
  static Snapshot snapshot(const Cpu& c) { return {c.interrupts(), c.wakeups(), c.residency(), sc_time_stamp()}; }

  const std::string scenario_;
  const bool waiter_gpu_, signaller_gpu_, doorbell_, igpu_kernel_queue_;
  const Segment mv_segment_;
  const uint64_t signals_;
  const sc_time period_, delay_;
  int waiter_ = kIgpu, signaller_ = kDgpu;
  CrossAdapterFence* x_ = nullptr;
  NativeFence* fw_ = nullptr;  // the waiter adapter's instance
  NativeFence* fs_ = nullptr;  // the signaller adapter's instance
  uint64_t probe_ = 0;
  bool started_ = false;
  std::vector<sc_time> cv_visible_, signalled_, unblocked_;
  std::vector<uint64_t> cv_at_unblock_, msis_at_unblock_;  // CV, and the signaller's MSIs sent, at each unblock
  uint64_t next_cv_ = 1;
  uint64_t waits_failed_ = 0;
  Snapshot begin_, end_;
  bool window_done_ = false;
  struct MvWatch {
    std::string what;
    Memory* mem = nullptr;
    uint64_t addr = 0;
    bool armed = false;              // the window began: creation's updates are long applied
    uint64_t at_begin = UINT64_MAX;  // the value when the window began
    uint64_t left_zero = 0;          // writes of a nonzero MV during the window
    uint64_t last = UINT64_MAX;
  };
  std::vector<std::unique_ptr<MvWatch>> mv_watches_;
};

void CrossAdapterFenceScenario::watch_mv(Platform& p, int a, NativeFence* f) {
  if (!f || !f->handle) return;  // a monitored-fence instance has no MV
  const std::string name = a == kDgpu ? "dGPU" : "iGPU";
  auto add = [&](Memory& m, uint64_t addr, const std::string& what) {
    mv_watches_.push_back(std::make_unique<MvWatch>());
    MvWatch* w = mv_watches_.back().get();
    w->what = name + " " + what;
    w->mem = &m;
    w->addr = addr;
    w->last = m.peek64(addr);
    m.watch(addr, 8, [w](uint64_t, unsigned) {
      w->last = w->mem->peek64(w->addr);
      if (w->armed && w->last != 0) ++w->left_zero;
    });
  };
  add(f->mv_addr >= regs::kVramBase ? p.gpu.vram : p.sysmem, f->mv_addr, "OS MonitoredValue");
  // The CMP's shadow MV: the dGPU's in VRAM, the iGPU's in its stolen system memory (cmp.mv_source = shadow).
  if (!p.params.get_enum("cmp.mv_source").compare("shadow")) {
    Cmp& cmp = hw(p, a).cmp;
    Memory& m = a == kDgpu ? p.gpu.vram : p.sysmem;
    add(m, cmp.shadow_mv_addr(f->slot), "shadow MonitoredValue");
  }
}

void CrossAdapterFenceScenario::app(Platform& p, Results& r) {
  const AdapterStart ds = DxgkrnlStartAdapter(p.kmd, "dGPU");
  const AdapterStart is = DxgkrnlStartAdapter(p.igpu_driver->kmd, "iGPU");
  const bool d_ok = r.check(ds.started, ds.reason);  // F9: a failed start is reported with its reason
  const bool i_ok = r.check(is.started, is.reason);
  if (!d_ok || !i_ok) return;
  if (doorbell_) {
    std::string why;
    if (!r.check(p.xfences.EnableGpuDoorbell(&why), "F20 GPU doorbell: " + why)) return;
  }
  std::string err;
  x_ = p.xfences.Create(1, kDgpu, NativeFenceType::Default, &err, mv_segment_);
  if (!r.check(x_ != nullptr, err)) return;
  p.xfences.Open(*x_, kIgpu, 1);
  fw_ = x_->instances[size_t(waiter_)];
  fs_ = x_->instances[size_t(signaller_)];
  if (!r.check(fw_ && fs_, "cross-adapter fence: an instance failed to open")) return;
  watch_mv(p, kDgpu, x_->instances[kDgpu]);
  watch_mv(p, kIgpu, x_->instances[kIgpu]);
  started_ = true;
  // When each value's CV write becomes visible (the one shared page).
  p.sysmem.watch(x_->cv_addr, 8, [this, &p](uint64_t, unsigned) {
    const uint64_t v = p.sysmem.peek64(x_->cv_addr);
    while (next_cv_ <= signals_ && v >= next_cv_) {
      cv_visible_[next_cv_] = sc_time_stamp();
      // A GPU signal starts when the signaller's engine executes it: its SIGNAL packet (native), or the
      // INTERRUPT whose MSI tells VidSch the signal reached the head (Native GPU fence object 2b): the CMP's last MSI.
      if (signaller_gpu_)
        signalled_[next_cv_] = fs_->handle && !(signaller_ == kIgpu && igpu_kernel_queue_)
                                   ? hw(p, signaller_).nodes[0]->last_signal_start()
                                   : hw(p, signaller_).cmp.last_msi_issued();
      ++next_cv_;
    }
  });
  KmdHwQueue* qw = nullptr;
  KmdHwQueue* qs = nullptr;
  if (waiter_gpu_) {
    qw = sch(p, waiter_).CreateHwQueue(0, 0, 0, 1);
    if (qw && waiter_ == kIgpu && igpu_kernel_queue_) qw->kernel_mode = true;
    probe_ = p.vidmm.allocate(Segment::System, 8 * (signals_ + 1), 64);
    for (uint64_t i = 1; i <= signals_; ++i)
      p.sysmem.watch(probe_ + 8 * i, 8, [this, &p, i](uint64_t, unsigned) {
        if (unblocked_[i] == SC_ZERO_TIME && p.sysmem.peek64(probe_ + 8 * i) == i) {
          unblocked_[i] = sc_time_stamp();
          cv_at_unblock_[i] = p.sysmem.peek64(x_->cv_addr);
          msis_at_unblock_[i] = hw(p, signaller_).cmp.msi_sent();
        }
      });
  }
  if (signaller_gpu_) qs = sch(p, signaller_).CreateHwQueue(0, 0, 0, 1);
  if (qs && signaller_ == kIgpu && igpu_kernel_queue_) qs->kernel_mode = true;
  if (!r.check((!waiter_gpu_ || qw) && (!signaller_gpu_ || qs), "DxgkDdiCreateHwQueue failed: no free HW queue"))
    return;
  const sc_time t0 = sc_time_stamp() + period_;
  if (!waiter_gpu_) {
    p.cpu.spawn_thread("waiter", [this, &p, t0] {
      VidSch& s = sch(p, waiter_);
      for (uint64_t i = 1; i <= signals_; ++i) {
        const sc_time t = t0 + period_ * double(i - 1);
        if (t > sc_time_stamp()) p.cpu.sleep(t - sc_time_stamp());
        if (!s.WaitFromCpu(fw_, i)) ++waits_failed_;
        unblocked_[i] = sc_time_stamp();
        cv_at_unblock_[i] = p.sysmem.peek64(x_->cv_addr);
        msis_at_unblock_[i] = hw(p, signaller_).cmp.msi_sent();
      }
    });
  }
  p.cpu.sleep(t0 - sc_time_stamp());
  begin_ = snapshot(p.cpu);
  for (auto& w : mv_watches_) {  // F15: from here on the MV must read 0 and never be written otherwise
    w->armed = true;
    w->at_begin = w->mem->peek64(w->addr);
  }
  const uint64_t cycles = uint64_t(to_ns(delay_) * p.params.get_real(engine_clock_key(signaller_)) / 1000.0);
  for (uint64_t i = 1; i <= signals_; ++i) {
    const sc_time t = t0 + period_ * double(i - 1);
    if (t > sc_time_stamp()) p.cpu.sleep(t - sc_time_stamp());
    if (waiter_gpu_) {
      PacketWriter after;
      after.write64(probe_ + 8 * i, i);
      sch(p, waiter_).SubmitAfterWait(qw, fw_, i, after);  // native: a WAIT on the GPU; monitored: held by VidSch
    }
    if (signaller_gpu_) {
      PacketWriter work;
      work.compute(cycles);
      sch(p, signaller_).SubmitSignal(qs, fs_, i, work);
    } else {
      p.cpu.sleep(delay_);
      signalled_[i] = sc_time_stamp();  // a CPU signal starts with the call
      sch(p, signaller_).SignalFromCpu(fs_, i);
    }
  }
  const sc_time t_end = t0 + period_ * double(signals_);
  if (t_end > sc_time_stamp()) p.cpu.sleep(t_end - sc_time_stamp());
  end_ = snapshot(p.cpu);
  window_done_ = true;
}

void CrossAdapterFenceScenario::finish(Platform& p, Results& r) {
  if (!started_) return;
  // What the run is.
  r.metric("scenario", scenario_);
  r.metric("waiter", std::string(waiter_ == kDgpu ? "dGPU " : "iGPU ") + (waiter_gpu_ ? "GPU" : "CPU"));
  r.metric("signaller", std::string(signaller_ == kDgpu ? "dGPU " : "iGPU ") + (signaller_gpu_ ? "GPU" : "CPU"));
  const bool igpu_native = p.igpu_driver->vidsch.native_fences();
  r.metric("igpu_native_fences", igpu_native);
  r.metric("gpu_doorbell", p.xfences.gpu_doorbell());
  // signal -> unblock, per signal.
  std::vector<double> d;
  uint64_t missing = 0, early = 0, wrong_value = 0;
  for (uint64_t i = 1; i <= signals_; ++i) {
    if (unblocked_[i] == SC_ZERO_TIME || cv_visible_[i] == SC_ZERO_TIME) {
      ++missing;
      continue;
    }
    // Never before its CV write was visible, nor before the signaller reached its signal (on 2b: the
    // work before it completed and its INTERRUPT was raised).
    if (unblocked_[i] < cv_visible_[i] || unblocked_[i] < signalled_[i]) ++early;
    if (cv_at_unblock_[i] < i) ++wrong_value;
    // 2b: the signalling iGPU's i-th MSI is the INTERRUPT after the i-th signal's work (its only MSIs):
    // VidSch may write CV only after it (the signal at the head of the software context).
    if (signaller_gpu_ && !fs_->handle && msis_at_unblock_[i] < i) ++early;
    d.push_back(ns_between(signalled_[i], unblocked_[i]));
  }
  double mean = 0, mx = 0, mn = d.empty() ? 0 : d[0];
  // The first signal pays the cold TLBs' page walks; the mean is over the rest (warm) when there are any.
  const size_t from = d.size() > 1 ? 1 : 0;
  for (size_t k = from; k < d.size(); ++k) mean += d[k] / double(d.size() - from);
  for (double v : d) mx = std::max(mx, v), mn = std::min(mn, v);
  r.metric("signal_to_unblock_ns", mean);
  // The first signal the mean counts (the second; the only one if one), for the waveform's markers.
  const uint64_t k = signals_ > 1 ? 2 : 1;
  if (k <= signals_ && unblocked_[k] != SC_ZERO_TIME) {
    r.event("signal", signalled_[k].value());
    r.event("unblock", unblocked_[k].value());
  }
  r.metric("signal_to_unblock_first_ns", d.empty() ? 0.0 : d[0]);
  r.metric("signal_to_unblock_min_ns", mn);
  r.metric("signal_to_unblock_max_ns", mx);
  r.metric("signals", signals_);
  r.metric("unblocked", d.size());
  // The measured window: workload.signals periods from the first pair's start.
  const uint64_t irqs = end_.interrupts - begin_.interrupts;
  r.metric("cpu_interrupts", irqs);
  if (signals_)
    r.metric("cpu_interrupts_per_signal", double(irqs) / double(signals_));
  else
    r.metric_absent("cpu_interrupts_per_signal", "no signal was made");
  r.metric("cpu_wakeups", end_.wakeups - begin_.wakeups);
  nlohmann::ordered_json res = nlohmann::ordered_json::object();
  const sc_time window = end_.at - begin_.at;
  std::string deepest;
  for (const char* st : {"C1", "C1E", "C3", "C6"}) {
    auto a = begin_.residency.find(st), b = end_.residency.find(st);
    const sc_time t0 = a == begin_.residency.end() ? SC_ZERO_TIME : a->second;
    const sc_time t1 = b == end_.residency.end() ? SC_ZERO_TIME : b->second;
    res[st] = window == SC_ZERO_TIME ? 0.0 : (t1 - t0) / window;
    if (t1 > t0) deepest = st;
  }
  r.metric("cpu_idle_residency", res);
  r.metric("cpu_deepest_idle_state", deepest);
  r.metric("dgpu_fence_interrupts", p.gpu.cmp.fence_interrupts());
  r.metric("igpu_fence_interrupts", p.igpu->cmp.fence_interrupts());
  r.metric("forwards", x_->forwards);
  r.metric("software_signals", sch(p, signaller_).software_signals());
  r.metric("waiter_gpu_unblocks", hw(p, waiter_).cmp.gpu_unblocks());
  r.metric("xdoorbells_sent", p.gpu.cmp.xdoorbells_sent() + p.igpu->cmp.xdoorbells_sent());
  r.metric("xdoorbells_received", p.gpu.cmp.xdoorbells_received() + p.igpu->cmp.xdoorbells_received());

  // Verdict: the invariants of the design.
  r.check(window_done_, "the signal loop did not finish");
  r.check(missing == 0, std::to_string(missing) + " of " + std::to_string(signals_) + " waiters never unblocked");
  r.check(early == 0, std::to_string(early) +
                          " waiters unblocked before the CV write of their value was visible or "
                          "before the signaller reached the signal");
  r.check(wrong_value == 0, std::to_string(wrong_value) + " waiters unblocked while CV was below their value");
  r.check(waits_failed_ == 0, "a CPU wait returned without its value");
  const bool held = x_->mv_held_at_zero();
  r.metric("mv_held_at_zero", held);
  for (auto& w : mv_watches_) {
    if (held) {
      r.check(w->at_begin == 0 && w->left_zero == 0 && w->last == 0,
              "F15: the " + w->what + " of the cross-adapter fence did not stay 0 (" + std::to_string(w->at_begin) +
                  " when the window began, " + std::to_string(w->left_zero) + " nonzero writes in it, last " +
                  std::to_string(w->last) + ")");
    }
  }
  // The design's interrupt count: a GPU signal interrupts the CPU once (F15: MV = 0 on the signalling
  // GPU, or on 2b the INTERRUPT after which VidSch writes CV); a CPU signal never. With the doorbell (F20)
  // a GPU signal interrupts only for a CPU waiter (the waiter adapter's conditional interrupt).
  const uint64_t expected = signaller_gpu_ && (!p.xfences.gpu_doorbell() || !waiter_gpu_) ? signals_ : 0;
  r.metric("cpu_interrupts_expected", expected);
  r.check(irqs == expected,
          "CPU interrupts in the window: " + std::to_string(irqs) + ", the design's count " + std::to_string(expected));
  // F15: each value reaches the other adapter as one forward, from the VidSch that learnt of it (the
  // signalling GPU's interrupt, a CPU signal, the signal VidSch wrote on 2b; with the doorbell, the CPU
  // waiter's own interrupt). Only a doorbell between two GPU sides keeps the CPU out: nothing to forward.
  const uint64_t forwards_expected =
      p.xfences.gpu_doorbell() && waiter_gpu_ && signaller_gpu_ ? 0 : signals_ * (p.xfences.adapters() - 1);
  r.check(x_->forwards == forwards_expected, "F15: " + std::to_string(x_->forwards) +
                                                 " values forwarded to the other adapter, the design's count " +
                                                 std::to_string(forwards_expected));
  if (waiter_gpu_) {
    const bool native_wait = fw_->handle != 0;
    // A native waiter is unblocked by its CMP (F5, after a NotificationOnly or a doorbell); a monitored
    // one by VidSch, which submits the held work.
    // (A WAIT that reads CV already at its value does not block: at most one CMP unblock per signal.)
    r.check(native_wait ? hw(p, waiter_).cmp.gpu_unblocks() <= signals_ : hw(p, waiter_).cmp.gpu_unblocks() == 0,
            "the GPU waiter was not unblocked where the design says (" +
                std::to_string(hw(p, waiter_).cmp.gpu_unblocks()) + " CMP unblocks)");
  }
  if (p.xfences.gpu_doorbell() && signaller_gpu_)
    r.check(p.gpu.cmp.xdoorbells_sent() + p.igpu->cmp.xdoorbells_sent() == signals_,
            "F20: not one doorbell per GPU signal");
}

}  // namespace

ScenarioInfo cross_adapter_fence_scenario() {
  return {
      "cross_adapter_fence",
      "the native fence document's cross-adapter native fence (F15): scenarios 1, 2a, 2b, each wait/signal pair; F20's "
      "GPU doorbell",
      [](ParamSet& ps, const std::string& o) {
        ps.declare_enum(
            "xfence.scenario", "1", {"1", "2a", "2b"},
            "Q: Native GPU fence object 'Cross-adapter wait/signal combinations': 1 = both GPUs native, the iGPU "
            "waits, the dGPU signals; 2a = the iGPU without native fences waits, the dGPU signals; "
            "2b = the iGPU without native fences signals, the dGPU waits (2a/2b imply "
            "igpu.kmd_native_gpu_fence = never unless it is set)",
            o);
        ps.declare_enum(
            "xfence.pair", "gpu_gpu", {"gpu_gpu", "gpu_cpu", "cpu_gpu", "cpu_cpu"},
            "Q: the native fence document's tables, one column pair: <waiter>_<signaller>, each from the GPU (a WAIT / "
            "a SIGNAL in a queue) or the CPU (WaitForSynchronizationObjectFromCpu / "
            "SignalSynchronizationObjectFromCpu)",
            o);
        ps.declare_bool(
            "xfence.gpu_doorbell", false,
            "Q: F20, Native GPU fence object 'Future GPU-to-GPU cross-adapter signal' (an exploration): each CMP "
            "rings the other adapter's doorbell register with the fence's cross-adapter id, so MV "
            "leaves 0; needs both adapters native (xfence.scenario = 1)",
            o);
        ps.declare_enum(
            "xfence.igpu_queue", "user", {"user", "kernel"},
            "Q: Native GPU fence object, 'Cross-adapter wait/signal combinations': user = the iGPU's wait or "
            "signal is a WAIT/SIGNAL in its HW queue; kernel = both GPUs native but the iGPU's goes to a "
            "kernel-mode queue (the document: 'similar to' scenario 2: Dxgkrnl holds the wait and "
            "writes the signal on the CPU); needs xfence.scenario = 2a or 2b",
            o);
        ps.declare_enum("xfence.mv_segment", "system", {"system", "local"},
                        "Q: Native GPU fence object 'Cross-adapter native fences': 'Each GPU gets its own copy of "
                        "MonitoredValue ... can be allocated in system memory or local memory'; A: system",
                        o);
        ps.declare_int("workload.signals", 20, "signals", 1, 100000,
                       "A: 20 wait/signal pairs: the first pays cold TLBs, the mean is over the rest", o);
        ps.declare_real("workload.signal_interval_us", 1000, "us", 100, 1e6,
                        "A: one pair a millisecond (a frame-paced producer/consumer), so the CPU idles between "
                        "pairs and its idle residency means something; at least 100 us so a pair ends before "
                        "the next",
                        o);
        ps.declare_real("workload.signal_delay_us", 50, "us", 10, 50,
                        "A: the signaller signals 50 us into its period, so the waiter is already waiting (its "
                        "submission or wait takes a few us); at most 50 us, within the shortest period",
                        o);
      },
      [](const ParamSet& ps) { return std::make_unique<CrossAdapterFenceScenario>(ps); },
      [](const ParamSet& ps) {
        if (Platform::topology_of(ps) != Topology::Hybrid)
          throw ConfigError(
              "platform.topology = dgpu: scenario 'cross_adapter_fence' needs two adapters (the iGPU "
              "and the dGPU); allowed: platform.topology = hybrid");
        const std::string& sc = ps.get_enum("xfence.scenario");
        const std::string& ga = ps.get_enum("gpu.kmd_native_gpu_fence");
        const std::string& ia = ps.get_enum("igpu.kmd_native_gpu_fence");
        const bool os_on = ps.get_enum("os.native_fence_feature") == "enabled";
        // A driver that advertises the cap while the OS disabled it is allowed: adapter start fails (F9),
        // reported in the results.
        if (ga == "never")
          throw ConfigError(
              "gpu.kmd_native_gpu_fence = never: every xfence.scenario has the dGPU support native "
              "fences (Native GPU fence object); allowed: gpu.kmd_native_gpu_fence = if_enabled or always");
        if (ga == "if_enabled" && !os_on)
          throw ConfigError(
              "os.native_fence_feature = disabled: the dGPU's driver (gpu.kmd_native_gpu_fence = "
              "if_enabled) then has no native fences, and every xfence.scenario has a native dGPU; "
              "allowed: os.native_fence_feature = enabled, or gpu.kmd_native_gpu_fence = always (its "
              "adapter start then fails, F9)");
        if (sc == "1" && ia == "never")
          throw ConfigError(
              "igpu.kmd_native_gpu_fence = never: xfence.scenario = 1 has both GPUs support native "
              "fences; allowed: igpu.kmd_native_gpu_fence = if_enabled or always, or xfence.scenario = "
              "2a or 2b");
        const bool kernel_queue = ps.get_enum("xfence.igpu_queue") == "kernel";
        if (kernel_queue && sc == "1")
          throw ConfigError(
              "xfence.igpu_queue = kernel: a kernel-mode queue on the iGPU is scenario 2's variant; allowed: "
              "xfence.igpu_queue = user, or xfence.scenario = 2a or 2b");
        if (kernel_queue && ia == "never")
          throw ConfigError(
              "xfence.igpu_queue = kernel: the variant has both GPUs support native fences; allowed: "
              "igpu.kmd_native_gpu_fence = if_enabled or always, or xfence.igpu_queue = user");
        if (sc != "1" && ia != "never" && !kernel_queue)
          throw ConfigError("igpu.kmd_native_gpu_fence = " + ia + ": xfence.scenario = " + sc +
                            " has an iGPU without native fences; allowed: igpu.kmd_native_gpu_fence = never, "
                            "xfence.igpu_queue = kernel (both native, the iGPU's queue kernel-mode), or "
                            "xfence.scenario = 1");
        if (ps.get_bool("xfence.gpu_doorbell") && sc != "1")
          throw ConfigError(
              "xfence.gpu_doorbell = true: the doorbell links two native GPUs, and xfence.scenario = " + sc +
              " has an iGPU without native fences; allowed: xfence.gpu_doorbell = false, or "
              "xfence.scenario = 1");
        // A GPU signaller computes workload.signal_delay_us on its node 0 before each SIGNAL.
        const std::string& pair = ps.get_enum("xfence.pair");
        if (pair.size() > 4 && pair.substr(4) == "gpu")
          require_engine_runs(ps, "cross_adapter_fence", sc == "2b" ? "igpu" : "gpu", 0, Op::Compute, "COMPUTE",
                              "the " + std::string(sc == "2b" ? "iGPU" : "dGPU") +
                                  " signals on node 0 after computing workload.signal_delay_us");
        if (ps.get_int("gpu.hw_queues") < 1 || ps.get_int("igpu.hw_queues") < 1)
          throw ConfigError(
              "gpu.hw_queues / igpu.hw_queues: scenario 'cross_adapter_fence' uses one HW queue on "
              "each adapter; allowed: >= 1");
      },
      /*runs_without_native_fences=*/[](const ParamSet&) { return true; }};
}

namespace {
const ScenarioRegistration kCrossAdapterFenceScenario{cross_adapter_fence_scenario, 21};
}  // namespace

}  // namespace gpumodel
