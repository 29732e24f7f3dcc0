// fence_stress: the simulator's own speed on the fence hot path. Many signals on many fences across
// several nodes, back to back, no CPU waiter. Simulated metrics are deterministic; the speed figures go
// under `host`: signals_per_wall_s, ns_per_signal, and, from a bare SystemC thread-switch loop run in
// the same process afterwards, bare_switch_ns and cost_ratio = ns_per_signal / bare_switch_ns.
#include <chrono>

#include "scenarios/fence_common.h"

namespace gpumodel {
namespace {

class FenceStress : public ScenarioDriver {
 public:
  explicit FenceStress(const ParamSet& ps)
      : signals_(uint64_t(ps.get_int("workload.signals"))),
        fences_(uint64_t(ps.get_int("workload.fences"))),
        switches_(uint64_t(ps.get_int("bench.switches"))) {}

  void build(Platform& p, Results& r) override {
    p.cpu.spawn_thread("setup", [this, &p, &r] {
      DxgkAdapterInfo info;
      if (!r.check(p.kmd.DxgkDdiStartDevice(&info), "adapter start failed")) return;
      std::vector<NativeFence*> fence;
      for (uint64_t i = 0; i < fences_; ++i) fence.push_back(p.vidsch.CreateNativeFence(1, Segment::Local, false));
      const int nodes = int(info.nodes);
      for (int n = 0; n < nodes; ++n) {
        p.cpu.spawn_thread("submit" + std::to_string(n), [this, &p, n, nodes, fence] {
          StreamQueue s = make_stream_queue(p, n, 1);
          std::vector<uint32_t> mine;
          for (uint64_t i = uint64_t(n); i < fences_; i += uint64_t(nodes)) mine.push_back(p.vidsch.slot(*fence[i]));
          std::vector<uint64_t> value(mine.size(), 0);
          const uint64_t count = signals_ / uint64_t(nodes) + (uint64_t(n) < signals_ % uint64_t(nodes));
          submit_stream(p, s, count, [&](uint64_t i, PacketWriter& w) {
            const size_t k = i % mine.size();
            w.signal(mine[k], ++value[k]);
          });
          p.vidsch.WaitFromCpu(s.progress, s.q->submissions);
        });
      }
    });
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
    if (executed == 0) return;  // nothing to take the speed of (the check above says why)
    const double wall = r.host["sim_wall_s"].get<double>();
    r.host["signals_per_wall_s"] = double(executed) / wall;
    r.host["ns_per_signal"] = wall * 1e9 / double(executed);
    const double bare = bare_switch_ns();
    r.host["bare_switch_ns"] = bare;
    r.host["cost_ratio"] = (wall * 1e9 / double(executed)) / bare;
  }

 private:
  // Two SystemC threads handing control back and forth through events: each hand-over is one
  // thread switch, the floor any model's event costs are held against.
  double bare_switch_ns() {
    sc_core::sc_event a, b;
    const uint64_t rounds = switches_ / 2;
    sc_core::sc_spawn([&] {
      for (uint64_t i = 0; i < rounds; ++i) {
        b.notify(sc_core::SC_ZERO_TIME);
        sc_core::wait(a);
      }
    });
    sc_core::sc_spawn([&] {
      for (uint64_t i = 0; i < rounds; ++i) {
        sc_core::wait(b);
        a.notify(sc_core::SC_ZERO_TIME);
      }
    });
    const auto t0 = std::chrono::steady_clock::now();
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // deltas only: runs until the loops end
    while (sc_core::sc_pending_activity_at_current_time()) sc_core::sc_start(sc_core::SC_ZERO_TIME);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return s * 1e9 / double(2 * rounds);
  }

  uint64_t signals_, fences_, switches_;
};

}  // namespace

ScenarioInfo fence_stress_scenario() {
  return {"fence_stress", "simulator speed: many signals on many fences across nodes, no waiter",
          [](ParamSet& ps, const std::string& o) {
            ps.declare_int("workload.signals", 100000, "signals", 1, 1000000000,
                           "A: scenarios/fence_stress.ini asks for the issue's 1,000,000", o);
            ps.declare_int("workload.fences", 1024, "fences", 1, 60000, "A: the issue's minimum, 1,000+", o);
            ps.declare_int("bench.switches", 2000000, "switches", 2, 100000000,
                           "A: length of the bare thread-switch loop that calibrates cost_ratio; at most "
                           "1e8 (~10 s of host time: the loop is host work no sim.limit_ms bounds)", o);
          },
          [](const ParamSet& ps) { return std::make_unique<FenceStress>(ps); },
          [](const ParamSet& ps) {
            require_fence_per_node(ps, ps.get_int("gpu.nodes"));
            require_platform(ps, "fence_stress", 1, ps.get_int("gpu.nodes"),
                             "a streaming queue on every node of gpu.nodes = " + std::to_string(ps.get_int("gpu.nodes")));
          }};
}

}  // namespace gpumodel
