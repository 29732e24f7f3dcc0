#include "app/progress.h"

#include <chrono>
#include <cstdio>

namespace gpumodel {

using namespace sc_core;

// The slices are sized to take about a fifth of a wall second each (a test compares results and
// waveforms with and without them).
void advance(Platform& p, const sc_time& duration) {
  RuntimePm& pm = p.runtime_pm();
  const sc_time until = sc_time_stamp() + duration;
  for (;;) {
    const sc_time now = sc_time_stamp();
    sc_time due;
    const bool timer = pm.deadline(&due) && due < until;
    const sc_time stop = timer ? std::max(due, now) : until;
    pm.set_loop_stop(stop);
    sc_start(stop - now, SC_EXIT_ON_STARVATION);  // returns early when nothing is left before `stop`
    pm.set_loop_stop(SC_ZERO_TIME);
    if (sc_get_status() == SC_STOPPED) return;     // sc_stop (a bug check): the run is over
    if (pm.take_pause()) continue;                 // a deadline armed meanwhile
    if (!timer || !sc_pending_activity()) return;  // the window done, or nothing left: the run is over
    // The run goes on past the deadline: time reaches it (nothing happens before), and the timer expires.
    if (sc_time_stamp() < stop) sc_start(stop - sc_time_stamp(), SC_RUN_TO_TIME);
    pm.expire();
  }
}

void run_with_progress(Platform& p, const ScenarioDriver& driver, const sc_time& limit) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  sc_time slice(1, SC_US);
  auto line = [&](bool last) {
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    const double sim_ms = sc_time_stamp().to_seconds() * 1e3;
    std::string what = driver.progress(p);
    if (what.empty()) {
      uint64_t packets = 0, signals = 0;
      for (auto& n : p.gpu.nodes) packets += n->packets_executed(), signals += n->signals();
      what = std::to_string(packets) + " packets, " + std::to_string(signals) + " signals";
    }
    char buf[160];
    std::snprintf(buf, sizeof buf, "\r  simulated %.3f ms  %.3g sim-ms per wall-s  %s", sim_ms,
                  wall > 0 ? sim_ms / wall : 0.0, what.c_str());
    std::fprintf(stderr, "%-100s%s", buf, last ? "\n" : "");
    std::fflush(stderr);
  };
  bool started = false;
  do {  // the first slice starts the simulation (nothing is pending before it)
    const auto s0 = Clock::now();
    const sc_time left = limit - sc_time_stamp();
    sc_time window = slice;
    if (started) {
      // A window must reach the next event, or a starved window would not advance time (a TDR delay of
      // seconds, a run cut by sim.limit_ms with its next event past the limit).
      const sc_time next = sc_time_to_pending_activity();
      if (next > left) break;  // nothing left before the limit: the run ends here, as one sc_start(limit) does
      if (next > window) window = next;
    }
    started = true;
    advance(p, window < left ? window : left);
    const double took = std::chrono::duration<double>(Clock::now() - s0).count();
    if (took < 0.1 && slice < sc_time(1, SC_SEC))
      slice = slice * 2.0;
    else if (took > 0.4 && slice > sc_time(1, SC_NS))
      slice = slice / 2.0;
    line(false);
  } while (sc_time_stamp() < limit && sc_pending_activity());
  line(true);
}

}  // namespace gpumodel
