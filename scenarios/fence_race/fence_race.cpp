// fence_race: randomised stress of the engine <-> CMP race of F7. Several nodes signal many native
// fences (each fence owned by one node, so its values only grow) at random gaps, while CPU threads add
// and remove waiters at random times (random fence, its next value, random timeout), so MonitoredValue
// updates keep landing next to signals. Meanwhile the last node streams a bulk device-to-host copy
// (workload.bulk_copy_bytes per COPY) that keeps the link's posted egress full: an engine's CV write to
// a system-memory fence then waits in its write buffer behind the copy's chunks for microseconds, while
// the CMP's reads and acknowledgements pass it. With cmp.barrier = true no interrupt is lost. With
// cmp.barrier = false a signal whose CurrentValue write is still held when the CMP reads CV, and still
// when the OS re-reads it after the acknowledgement, goes unreported: the lost_interrupt monitor fires,
// and the scenario, told to expect it (monitor.expect_lost_interrupt), passes and reports the count;
// the VCD marks each window.
#include <algorithm>
#include <random>

#include "scenarios/common/fence_common.h"

namespace gpumodel {
namespace {

class FenceRace : public ScenarioDriver {
 public:
  explicit FenceRace(const ParamSet& ps)
      : storage_(fence_storage(ps)),
        signals_(uint64_t(ps.get_int("workload.signals"))),
        fences_(uint64_t(ps.get_int("workload.fences"))),
        gap_ns_(ps.get_real("workload.signal_gap_ns")),
        threads_(int(ps.get_int("workload.waiter_threads"))),
        timeout_us_(ps.get_real("workload.wait_timeout_us")),
        expect_lost_(ps.get_bool("monitor.expect_lost_interrupt")),
        copy_bytes_(uint64_t(ps.get_int("workload.bulk_copy_bytes"))) {}

  void build(Platform& p, Results& r) override {
    r.monitors_expected["lost_interrupt"] = expect_lost_;
    nodes_ = int(p.params.get_int("gpu.nodes")) - (copy_bytes_ ? 1 : 0);  // the last node copies
    p.cpu.spawn_thread("setup", [this, &p, &r] { setup(p, r); });
    for (int t = 0; t < threads_; ++t)
      p.cpu.spawn_thread("waiter" + std::to_string(t), [this, &p, t] { waiter(p, t); });
  }

  void finish(Platform& p, Results& r) override {
    uint64_t executed = 0;
    for (auto& n : p.gpu.nodes) executed += n->signals();
    r.metric("signals", signals_);
    r.metric("cpu_waits", waits_);
    r.metric("cpu_wait_timeouts", timeouts_);
    r.metric("mv_updates", p.vidsch.mv_updates());  // DxgkDdiUpdateMonitoredValues elements
    r.metric("interrupts_raised", p.gpu.cmp.fence_interrupts());
    r.metric("interrupts_suppressed", p.gpu.cmp.suppressed());
    r.metric("spurious_interrupts", spurious_interrupts(p));
    r.metric("lost_interrupts", r.monitors["lost_interrupt"]);
    r.metric("bulk_copies", copies_);
    r.metric("link_up_utilisation", to_ns(p.link.up().busy_total) / to_ns(sc_core::sc_time_stamp()));
    r.metric("link_up_refusals", p.link.up().refusals);  // posted writes held in their source
    // What the OS's interrupts cost (F19 with the optimized interrupt): the log headers its DPCs read (two
    // per queue scanned: a raise no log explains rescans the queues cmp.unexplained_irq_scope names) and
    // its ISR and DPC time, per interrupt taken.
    const uint64_t taken = p.cpu.interrupts();
    auto in = [&p](const char* c) {
      const auto it = p.cpu.residency().find(c);
      return it == p.cpu.residency().end() ? 0.0 : to_ns(it->second);
    };
    r.metric("log_headers_read", p.vidsch.log_headers_read());
    r.metric("unexplained_interrupts", p.gpu.cmp.unexplained_raises());
    r.metric("unexplained_naming_node", p.gpu.cmp.unexplained_named_node());
    if (p.kmd.DxgkDdiQueryAdapterInfoVidSchCaps().optimized_native_fence_signaled_interrupt &&
        p.vidsch.native_fence_logs() && !p.gpu.cmp.events_dropped()) {
      // F19's scan, derived: every raise is one notification. One a log explains names its queue, and one
      // naming the signalling node rescans that node's one queue (a streaming queue per node): two headers.
      // One naming every node rescans all gpu.nodes queues.
      const uint64_t q = uint64_t(p.params.get_int("gpu.nodes"));
      const uint64_t all = p.gpu.cmp.unexplained_raises() - p.gpu.cmp.unexplained_named_node();
      r.check(p.vidsch.log_headers_read() == 2 * p.gpu.cmp.fence_interrupts() + 2 * (q - 1) * all,
              "F19: the DPCs read other log headers than the interrupts' payloads name");
    }
    if (taken) {
      r.metric("log_headers_per_interrupt", double(p.vidsch.log_headers_read()) / double(taken));
      r.metric("os_interrupt_ns", (in("ISR") + in("DPC")) / double(taken));
    } else {
      r.metric_absent("log_headers_per_interrupt", "no interrupt was taken");
      r.metric_absent("os_interrupt_ns", "no interrupt was taken");
    }
    r.check(executed >= signals_, "not every signal executed");
    // The waveform's view: one signal and the wake it caused, its fence's values shown (fence i is the
    // VCD's fences.fi: the fences are created first, in order). A run that lost interrupts (cmp.barrier =
    // false) has the lost_interrupt monitor's events instead: the loss is its point.
    if (shown_.fence >= 0 && r.monitors["lost_interrupt"] == 0) {
      const std::string f = "f" + std::to_string(shown_.fence);
      const std::string trace = shown_.fence < p.params.get_int("trace.fences") ? "fences." + f : "";
      r.event("signal " + f, shown_.signal.value(), true, trace);
      r.event("wake " + f, shown_.wake.value(), true, trace);
    }
  }

 private:
  void setup(Platform& p, Results& r) {
    DxgkAdapterInfo info;
    if (!r.check(p.kmd.DxgkDdiStartDevice(&info), "adapter start failed")) return;
    for (uint64_t i = 0; i < fences_; ++i) fence_.push_back(p.vidsch.CreateNativeFence(1, storage_, false));
    // For the waveform's key events: each fence's latest CV and when it became visible (a watch on memory:
    // it costs the model no time). Only when the run writes a waveform: a watched memory looks up every
    // write, host work the run would otherwise not do (as in fence_stress).
    Memory& m = storage_ == Segment::System ? p.sysmem : p.gpu.vram;
    if (p.vcd.enabled()) latest_.assign(fences_, {0, sc_core::SC_ZERO_TIME});
    for (uint64_t i = 0; i < latest_.size(); ++i) {
      const uint64_t cv = fence_[i]->cv_addr;
      m.watch(cv, 8, [this, &m, cv, i](uint64_t, unsigned) { latest_[i] = {m.peek64(cv), sc_core::sc_time_stamp()}; });
    }
    ready_ = true;
    p.cpu.signal(ready_ev_);
    // One submitter per node; each streams its share of the signals.
    for (int n = 0; n < nodes_; ++n) {
      p.cpu.spawn_thread("submit" + std::to_string(n), [this, &p, n] {
        std::mt19937_64 rng(p.rng() + uint64_t(n));
        std::uniform_real_distribution<double> gap(0, 2 * gap_ns_);
        StreamQueue s = make_stream_queue(p, n, 1);
        std::vector<NativeFence*> mine;
        for (uint64_t i = uint64_t(n); i < fences_; i += uint64_t(nodes_)) mine.push_back(fence_[i]);
        std::vector<uint64_t> value(mine.size(), 0);
        const uint64_t count = signals_ / uint64_t(nodes_) + (uint64_t(n) < signals_ % uint64_t(nodes_));
        submit_stream(p, s, count, [&](uint64_t i, PacketWriter& w) {
          const size_t k = i % mine.size();
          w.compute(engine_cycles(p.params, gap(rng))).signal(VidSch::va(*mine[k], 1), ++value[k]);
        });
        p.vidsch.WaitFromCpu(s.progress, s.q->submissions);
        ++done_;
      });
    }
    if (copy_bytes_) p.cpu.spawn_thread("bulk_copy", [this, &p] { bulk_copy(p); });
  }

  // Back-to-back device-to-host copies on the last node until every signal has executed. A submission
  // carries at least 1 MiB of copies (as many COPY packets as that takes, within half the ring), so its
  // progress-fence wait costs the CPU one interrupt per ~40 us of copying whatever the copy size: the
  // load is on the link, not the CPU.
  void bulk_copy(Platform& p) {
    const uint64_t src = p.vidmm.allocate(Segment::Local, copy_bytes_);
    const uint64_t dst = p.vidmm.allocate(Segment::System, copy_bytes_);
    StreamQueue s = make_stream_queue(p, nodes_, 2);
    const uint64_t copy_packet_bytes = PacketWriter().copy(0, 0, 0).bytes();
    const uint64_t per = std::max<uint64_t>(1, std::min<uint64_t>(((uint64_t(1) << 20) + copy_bytes_ - 1) / copy_bytes_,
                                                                  (s.q->ring_size / 2 - 64) / copy_packet_bytes));
    while (done_ < nodes_) {
      PacketWriter w;
      for (uint64_t i = 0; i < per; ++i) w.copy(src, dst, copy_bytes_);
      if (s.q->submissions >= 2) p.vidsch.WaitFromCpu(s.progress, s.q->submissions - 1);
      p.kmd.DxgkDdiSubmitCommandToHwQueue(s.q, w);
      copies_ += per;
    }
  }

  void waiter(Platform& p, int t) {
    if (!ready_) p.cpu.wait_for(ready_ev_);
    std::mt19937_64 rng(p.rng() ^ (0x9E3779B97F4A7C15ull * uint64_t(t + 1)));
    std::uniform_int_distribution<uint64_t> pick(0, fences_ - 1);
    std::uniform_real_distribution<double> timeout(0.1 * timeout_us_, timeout_us_);
    while (done_ < nodes_) {
      const uint64_t i = pick(rng);
      NativeFence* f = fence_[i];
      const uint64_t cv = p.cpu.mem_read64(f->cv_addr);
      ++waits_;
      const sc_core::sc_time asked = sc_core::sc_time_stamp();
      if (!p.vidsch.WaitFromCpu(f, cv + 1, sc_core::sc_time(timeout(rng), sc_core::SC_US))) {
        ++timeouts_;
        continue;
      }
      // The waveform's instance: the first wake by a signal that landed while its waiter waited, past each
      // fence's first value (the set-up's cold translations); the latest CV is that signal's (none after it).
      if (shown_.fence < 0 && !latest_.empty() && cv + 1 >= 2 && latest_[i].first == cv + 1 &&
          latest_[i].second >= asked)
        shown_ = {int64_t(i), latest_[i].second, sc_core::sc_time_stamp()};
    }
  }

  Segment storage_;
  uint64_t signals_, fences_;
  double gap_ns_;
  int threads_;
  double timeout_us_;
  bool expect_lost_;
  uint64_t copy_bytes_, copies_ = 0;
  int nodes_ = 1, done_ = 0;
  std::vector<NativeFence*> fence_;
  bool ready_ = false;
  KEvent ready_ev_;
  uint64_t waits_ = 0, timeouts_ = 0;
  std::vector<std::pair<uint64_t, sc_core::sc_time>> latest_;  // per fence: its latest CV, when visible
  struct Shown {
    int64_t fence = -1;  // -1: no wake qualified
    sc_core::sc_time signal, wake;
  } shown_;
};

}  // namespace

ScenarioInfo fence_race_scenario() {
  return {"fence_race", "randomised engine/CMP/CPU race on many fences; no lost interrupt with the F7 barrier",
          [](ParamSet& ps, const std::string& o) {
            ps.declare_enum("fence.storage", "system", {"system", "local"},
                            "Q: F1/F6: fence values in system memory or the local segment", o);
            ps.declare_int("workload.signals", 100000, "signals", 1, 1000000000,
                           "A: 100,000 signals: enough random interleavings of signals and MV updates to show a race "
                           "the barrier closes",
                           o);
            ps.declare_int("workload.fences", 64, "fences", 1, 60000, "A: 64 fences", o);
            ps.declare_real("workload.signal_gap_ns", 12500, "ns", 0, 1e9,
                            "A: mean gap between two signals of one node (uniform in [0, 2x]); with 16 "
                            "fences a node, one fence is signalled about every 200 us, beyond "
                            "monitor.wake_bound_ns, so a lost interrupt is not hidden by the next signal",
                            o);
            ps.declare_int("workload.waiter_threads", 8, "threads", 0, 256, "A: eight CPU threads wait", o);
            ps.declare_real("workload.wait_timeout_us", 400, "us", 0.001, 1e9,
                            "A: each CPU wait times out after a random 10-100 % of this", o);
            ps.declare_bool("monitor.expect_lost_interrupt", false,
                            "A: the run fails if the lost_interrupt monitor fires; set true with "
                            "cmp.barrier = false, where the scenario expects it",
                            o);
            ps.declare_int("workload.bulk_copy_bytes", 1 << 20, "bytes", 0, int64_t(1) << 32,
                           "A: a 1 MiB device-to-host COPY at a time on the last node (0: none), back to "
                           "back for the whole run: read-back traffic that saturates the link's up "
                           "direction, the path a system-memory fence's CV write takes",
                           o);
          },
          [](const ParamSet& ps) { return std::make_unique<FenceRace>(ps); },
          [](const ParamSet& ps) {
            const int64_t nodes = ps.get_int("gpu.nodes");
            const bool copy = ps.get_int("workload.bulk_copy_bytes") > 0;
            if (copy && nodes < 2)
              throw ConfigError("gpu.nodes = " + std::to_string(nodes) +
                                " is not allowed with workload.bulk_copy_bytes > 0: the last node copies, "
                                "so at least 2 nodes are needed (or set workload.bulk_copy_bytes = 0)");
            require_fence_per_node(ps, nodes - (copy ? 1 : 0));
            require_platform(ps, "fence_race", 1, nodes,
                             "a streaming queue on every node of gpu.nodes = " + std::to_string(nodes) +
                                 ": the signallers' and the bulk copy's");
          }};
}

namespace {
const ScenarioRegistration kFenceRaceScenario{fence_race_scenario, 6};
}  // namespace

}  // namespace gpumodel
