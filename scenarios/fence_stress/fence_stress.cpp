// fence_stress: the simulator's own speed on the fence hot path. Many signals on many fences, spread
// round robin over workload.hw_queues HW queues across the nodes (queue k on node k mod gpu.nodes,
// fence i on queue i mod queues, the j-th signal on queue j mod queues), back to back, no CPU waiter.
// Simulated metrics are deterministic; the speed figures go under `host`. The run has two phases and
// the speed is the second's alone: setup (adapter start, every fence created, every queue created)
// and signalling (from the moment the last queue exists to the moment the last submitter's work is
// done). setup_wall_s and setup_us_per_fence (setup over workload.fences) time the first, so creating
// 60,000 fences does not count in a signal's cost; signals_per_wall_s and ns_per_signal time the
// second over the signals executed in it, and, from a bare SystemC thread-switch loop run in the same
// process afterwards, bare_switch_ns and cost_ratio = ns_per_signal / bare_switch_ns.
#include <array>
#include <chrono>

#include "hw_model/gpu/regs.h"
#include "scenarios/common/fence_common.h"

namespace gpumodel {
namespace {

class FenceStress : public ScenarioDriver {
 public:
  explicit FenceStress(const ParamSet& ps)
      : signals_(uint64_t(ps.get_int("workload.signals"))),
        fences_(uint64_t(ps.get_int("workload.fences"))),
        queues_(uint64_t(ps.get_int("workload.hw_queues"))),
        switches_(uint64_t(ps.get_int("bench.switches"))) {}

  void build(Platform& p, Results& r) override {
    p.cpu.spawn_thread("setup", [this, &p, &r] {
      start_ = Clock::now();
      DxgkAdapterInfo info;
      if (!r.check(p.kmd.DxgkDdiStartDevice(&info), "adapter start failed")) return;
      std::vector<NativeFence*> fence;
      for (uint64_t i = 0; i < fences_; ++i) fence.push_back(p.vidsch.CreateNativeFence(1, Segment::Local, false));
      // For the waveform's key events: when each of the first four fences (the VCD's f0-f3, on the first four
      // queues by default) took its second value (a watch on memory: it costs the model no time). Only
      // when the run writes a waveform: a watched memory looks up every write, which would add about 2 %
      // to the signal this scenario measures the cost of (bench/instr.py).
      for (size_t i = 0; p.vcd.enabled() && i < second_.size() && i < fence.size(); ++i) {
        const uint64_t cv = fence[i]->cv_addr;
        p.gpu.vram.watch(cv, 8, [this, &p, cv, i](uint64_t, unsigned) {
          if (second_[i] == sc_core::SC_ZERO_TIME && p.gpu.vram.peek64(cv) >= 2) second_[i] = sc_core::sc_time_stamp();
        });
      }
      const uint64_t nodes = info.nodes, queues = queues_ ? queues_ : nodes;
      submitters_ = int(std::min(queues, nodes));
      for (uint64_t n = 0; n < uint64_t(submitters_); ++n) {
        p.cpu.spawn_thread("submit" + std::to_string(n), [this, &p, n, nodes, queues, fence] {
          // This node's queues k = n, n + nodes, ...: each with its fences and its share of the signals.
          struct Feed {
            StreamQueue s;
            std::vector<FenceVa> mine;
            std::vector<uint64_t> value;
            uint64_t count = 0, next = 0;
          };
          std::vector<Feed> feeds;
          for (uint64_t k = n; k < queues; k += nodes) {
            Feed f;
            f.s = make_stream_queue(p, int(n), 1);
            for (uint64_t i = k; i < fences_; i += queues) f.mine.push_back(VidSch::va(*fence[i], 1));
            f.value.assign(f.mine.size(), 0);
            f.count = signals_ / queues + (k < signals_ % queues);
            feeds.push_back(std::move(f));
          }
          if (++ready_ == submitters_) mark(p, setup_end_, signalled_at_setup_);
          // A batch for each queue in turn (one queue per node: the whole stream on it, batch by batch).
          for (bool more = true; more;) {
            more = false;
            for (Feed& f : feeds) {
              if (f.next >= f.count) continue;
              f.next = submit_batch(p, f.s, f.next, f.count, [&f](uint64_t i, PacketWriter& w) {
                const size_t k = i % f.mine.size();
                w.signal(f.mine[k], ++f.value[k]);
              });
              more = more || f.next < f.count;
            }
          }
          for (Feed& f : feeds) p.vidsch.WaitFromCpu(f.s.progress, f.s.q->submissions);
          if (++done_ == submitters_) mark(p, end_, signalled_at_end_);
        });
      }
    });
  }

  std::string progress(const Platform& p) const override {
    uint64_t executed = 0;
    for (auto& n : p.gpu.nodes) executed += n->signals();
    return std::to_string(executed) + " signals executed (" + std::to_string(signals_) +
           " asked, plus progress fences)";
  }

  void finish(Platform& p, Results& r) override {
    uint64_t executed = 0;
    for (auto& n : p.gpu.nodes) executed += n->signals();
    // The progress fences' own signals are part of the work but not of the count asked for.
    r.check(executed >= signals_, "not every signal executed");
    r.metric("signals", signals_);
    r.metric("signals_executed", executed);
    r.metric("interrupts_raised", p.gpu.cmp.fence_interrupts());
    r.metric("interrupts_suppressed", p.gpu.cmp.suppressed());
    // The waveform's view: the first fences' second signals (the first signals pay the cold translations),
    // back to back on their nodes with no waiter, so no interrupt.
    for (size_t i = 0; i < second_.size(); ++i)
      if (second_[i] != sc_core::SC_ZERO_TIME) r.event("signal f" + std::to_string(i), second_[i].value());
    // Both phase marks are set once every submitter is done (the checks above say why not).
    const uint64_t signalled = signalled_at_end_ - signalled_at_setup_;
    if (done_ < submitters_ || signalled == 0) return;
    const double setup = std::chrono::duration<double>(setup_end_ - start_).count();
    const double wall = std::chrono::duration<double>(end_ - setup_end_).count();
    r.host["setup_wall_s"] = setup;
    r.host["setup_us_per_fence"] = setup * 1e6 / double(fences_);
    r.host["signalling_wall_s"] = wall;
    r.host["signals_per_wall_s"] = double(signalled) / wall;
    r.host["ns_per_signal"] = wall * 1e9 / double(signalled);
    const double bare = bare_switch_ns();
    r.host["bare_switch_ns"] = bare;
    r.host["cost_ratio"] = (wall * 1e9 / double(signalled)) / bare;
  }

 private:
  // Two SystemC threads handing control back and forth through events: each hand-over is one
  // thread switch, the floor any model's event costs are held against. They park at the end instead of
  // returning: a thread that ends after the simulation has stopped leaves LeakSanitizer's idea of the
  // main thread's stack on the dead thread's freed stack, and its exit-time scan then faults (about
  // half the sanitizer runs of fence_stress did).
  double bare_switch_ns() {
    sc_core::sc_event a, b;
    const uint64_t rounds = switches_ / 2;
    sc_core::sc_spawn([&] {
      for (uint64_t i = 0; i < rounds; ++i) {
        b.notify(sc_core::SC_ZERO_TIME);
        sc_core::wait(a);
      }
      sc_core::wait(parked_);
    });
    sc_core::sc_spawn([&] {
      for (uint64_t i = 0; i < rounds; ++i) {
        sc_core::wait(b);
        a.notify(sc_core::SC_ZERO_TIME);
      }
      sc_core::wait(parked_);
    });
    const auto t0 = std::chrono::steady_clock::now();
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // deltas only: runs until the loops end
    while (sc_core::sc_pending_activity_at_current_time()) sc_core::sc_start(sc_core::SC_ZERO_TIME);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return s * 1e9 / double(2 * rounds);
  }

  using Clock = std::chrono::steady_clock;
  // A phase mark: the host's clock and the signals the nodes have executed so far.
  static void mark(Platform& p, Clock::time_point& at, uint64_t& signalled) {
    at = Clock::now();
    signalled = 0;
    for (auto& n : p.gpu.nodes) signalled += n->signals();
  }

  uint64_t signals_, fences_, queues_, switches_;
  sc_core::sc_event parked_;  // never notified: where the switch loop's threads end
  int submitters_ = 0, ready_ = 0, done_ = 0;
  Clock::time_point start_, setup_end_, end_;
  uint64_t signalled_at_setup_ = 0, signalled_at_end_ = 0;
  std::array<sc_core::sc_time, 4> second_{};  // when fence i's CV reached 2 (zero: never)
};

}  // namespace

ScenarioInfo fence_stress_scenario() {
  return {"fence_stress", "simulator speed: many signals on many fences across nodes, no waiter",
          [](ParamSet& ps, const std::string& o) {
            ps.declare_int("workload.signals", 100000, "signals", 1, 1000000000,
                           "A: 100,000 signals measure the cost per signal past start-up; scenarios/fence_stress.ini "
                           "asks for 1,000,000",
                           o);
            ps.declare_int(
                "workload.fences", 1024, "fences", 1, 60000,
                "A: over a thousand fences, where a per-fence structure starts to show in the cost per signal", o);
            ps.declare_int("workload.hw_queues", 0, "queues", 0, regs::kMaxHwQueues,
                           "A: 0 = one streaming queue per node (gpu.nodes), as before the parameter; N = N "
                           "queues, queue k on node k mod gpu.nodes (the cost of a signal measured "
                           "from 1 to 1,024 queues); at most gpu.hw_queues",
                           o);
            ps.declare_int("bench.switches", 2000000, "switches", 2, 100000000,
                           "A: length of the bare thread-switch loop that calibrates cost_ratio; at most "
                           "1e8 (~10 s of host time: the loop is host work no sim.limit_ms bounds)",
                           o);
          },
          [](const ParamSet& ps) { return std::make_unique<FenceStress>(ps); },
          [](const ParamSet& ps) {
            const int64_t queues = ps.get_int("workload.hw_queues"), nodes = ps.get_int("gpu.nodes");
            if (queues == 0) {
              require_fence_per_node(ps, nodes);
              require_platform(ps, "fence_stress", 1, nodes,
                               "a streaming queue on every node of gpu.nodes = " + std::to_string(nodes));
              return;
            }
            const int64_t have = ps.get_int("gpu.hw_queues"), fences = ps.get_int("workload.fences");
            if (queues > have)
              throw ConfigError("workload.hw_queues = " + std::to_string(queues) +
                                " is more than gpu.hw_queues = " + std::to_string(have) +
                                ": scenario 'fence_stress' streams into that many HW queues; "
                                "allowed: workload.hw_queues <= gpu.hw_queues (at most " +
                                std::to_string(regs::kMaxHwQueues) + ")");
            if (fences < queues)
              throw ConfigError("workload.fences = " + std::to_string(fences) +
                                " is fewer than workload.hw_queues = " + std::to_string(queues) +
                                ": each queue signals fences of its own (so their values only "
                                "grow); allowed: workload.fences >= workload.hw_queues");
          }};
}

namespace {
const ScenarioRegistration kFenceStressScenario{fence_stress_scenario, 7};
}  // namespace

}  // namespace gpumodel
