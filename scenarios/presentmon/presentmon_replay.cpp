// presentmon_replay: a PresentMon capture of a real application replayed on the platform. Each captured
// present of the chosen process (workload.presentmon_process; default: the process with the most
// presents) drives one frame: it starts when the capture's frame started (its Present() time less its CPU
// busy time), computes its CPU busy time, runs its GPU busy time on the graphics engine and presents
// (sync interval 1) on the display the platform has (the dGPU's, or the iGPU's through one copy on the
// hybrid laptop). The display's refresh period and vblank phase come from the capture's own display
// times. Present modes the model has (hardware legacy or independent flip) are replayed; the others
// (composed, copy) are counted by mode and reported, not replayed.
//
// Results compare model and capture per frame both displayed: frames_compared, frames_same_refresh_pct
// (the model shows the frame at the refresh the capture did), until_displayed_error_ms (|model -
// capture| of Present() to screen: p50, p95), dropped_agreement_pct (both displayed it, or both did
// not), beside the model's own frame-loop figures.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "hw_model/core/input_file.h"
#include "hw_model/core/printable.h"
#include "scenarios/common/fence_common.h"
#include "scenarios/display/present.h"
#include "scenarios/frame_loop/frame_loop.h"
#include "scenarios/presentmon/presentmon.h"
#include "scenarios/presentmon/replay_comparison.h"

namespace gpumodel {
namespace {

using sc_core::sc_time;

bool replayable(const std::string& mode) {
  return mode == "Hardware: Legacy Flip" || mode == "Hardware: Independent Flip" ||
         mode == "Hardware Composed: Independent Flip";
}

struct Chosen {
  std::string process, swap_chain;
  uint64_t other_swap_chains = 0;  // the process's presents to its other swap chains (not replayed)
  std::vector<CapturedPresent> replayed;
  std::map<std::string, uint64_t> not_replayed;  // by present mode
  uint64_t presents = 0, sync0 = 0;
  double period_ms = 0, phase_ms = 0, fit_pct = 0;
  std::string format;
};

// The capture's refresh period from its display times: the smallest common step of the intervals
// between successive screen changes (their 10th percentile, refined by least squares over the
// intervals' whole multiples), and the vblank phase as the circular mean of the screen times.
void fit_refresh(Chosen& c) {
  std::vector<double> screen;
  for (auto& p : c.replayed)
    if (p.until_displayed_ms) screen.push_back(p.present_ms + *p.until_displayed_ms);
  std::sort(screen.begin(), screen.end());
  std::vector<double> d;
  for (size_t i = 1; i < screen.size(); ++i)
    if (screen[i] - screen[i - 1] > 1.0) d.push_back(screen[i] - screen[i - 1]);
  if (d.size() < 2) return;
  std::vector<double> s = d;
  std::sort(s.begin(), s.end());
  const double p0 = s[s.size() / 10];
  double num = 0, den = 0;
  for (double x : d) {
    const double k = std::round(x / p0);
    if (k >= 1 && k <= 16 && std::fabs(x - k * p0) < 0.25 * p0) num += x * k, den += k * k;
  }
  c.period_ms = den > 0 ? num / den : p0;
  double sx = 0, sy = 0;
  for (double t : screen) {
    const double a = 2 * M_PI * std::fmod(t, c.period_ms) / c.period_ms;
    sx += std::cos(a), sy += std::sin(a);
  }
  c.phase_ms = std::fmod(std::atan2(sy, sx) / (2 * M_PI) * c.period_ms + c.period_ms, c.period_ms);
  uint64_t fit = 0;
  for (double t : screen) {
    const double k = std::round((t - c.phase_ms) / c.period_ms);
    fit += std::fabs(t - c.phase_ms - k * c.period_ms) < 0.5;
  }
  c.fit_pct = 100.0 * double(fit) / double(screen.size());
}

// The capture, read once per process while the file stays the same (device, inode, size, modification
// time): the command line validates a run before it starts it, and each validation and the run choose
// from it; a capture of 10^6 rows takes seconds to read.
const Capture& capture(const std::string& path) {
  static std::string cached_path;
  static struct stat cached_st {};
  static std::unique_ptr<Capture> cached;
  struct stat st {};
  const bool known = ::stat(path.c_str(), &st) == 0;
  if (!(known && cached && path == cached_path && st.st_dev == cached_st.st_dev && st.st_ino == cached_st.st_ino &&
        st.st_size == cached_st.st_size && st.st_mtim.tv_sec == cached_st.st_mtim.tv_sec &&
        st.st_mtim.tv_nsec == cached_st.st_mtim.tv_nsec)) {
    cached.reset();
    cached = std::make_unique<Capture>(read_presentmon(path, "workload.presentmon"));
    cached_path = path, cached_st = st;
  }
  return *cached;
}

Chosen choose(const ParamSet& ps) {
  const Capture& cap = capture(ps.get_path("workload.presentmon"));
  Chosen c;
  c.format = cap.format;
  c.process = ps.get_text("workload.presentmon_process");
  // Names are compared as the capture's bytes (they need not be UTF-8); each is one index of cap.names.
  uint32_t app = uint32_t(cap.names.size());
  if (c.process.empty()) {  // the process with the most presents (the first such in the file)
    std::map<uint32_t, uint64_t> n;
    std::vector<uint32_t> order;
    for (auto& p : cap.presents)
      if (n[p.application]++ == 0) order.push_back(p.application);
    for (uint32_t a : order)
      if (app == cap.names.size() || n[a] > n[app]) app = a;
    c.process = cap.name(app);
  } else {
    for (uint32_t i = 0; i < cap.names.size(); ++i)
      if (cap.names[i] == c.process) app = i;
  }
  // Its swap chain with the most presents (a process may present to several, one per monitor).
  std::map<uint32_t, uint64_t> per_chain;
  for (auto& p : cap.presents)
    if (p.application == app) ++per_chain[p.swap_chain];
  uint64_t best = 0;
  uint32_t chain = 0;
  for (auto& [ch, n] : per_chain)
    if (n > best) best = n, chain = ch;
  if (best) c.swap_chain = cap.name(chain);
  for (auto& p : cap.presents) {
    if (p.application != app) continue;
    if (p.swap_chain != chain) {
      ++c.other_swap_chains;
      continue;
    }
    ++c.presents;
    if (!replayable(cap.name(p.present_mode))) {
      ++c.not_replayed[cap.name(p.present_mode)];
      continue;
    }
    c.sync0 += p.sync_interval == 0;
    c.replayed.push_back(p);
  }
  if (c.presents == 0)
    throw ConfigError("workload.presentmon_process = '" + echo_input(c.process) +
                      "' presents nothing in workload.presentmon = '" + echo_input(ps.get_path("workload.presentmon")) +
                      "'; allowed: an Application of the capture");
  if (c.replayed.empty())
    throw ConfigError("workload.presentmon_process = '" + echo_input(c.process) +
                      "': none of its presents uses a present mode the model has (Hardware: Legacy Flip, Hardware: "
                      "Independent Flip); allowed: another process of the capture");
  if (const int64_t keep = ps.get_int("workload.frames"); keep > 0 && c.replayed.size() > uint64_t(keep))
    c.replayed.resize(size_t(keep));  // the capture's first N replayable presents
  fit_refresh(c);
  if (c.period_ms <= 0)
    throw ConfigError("workload.presentmon = '" + echo_input(ps.get_path("workload.presentmon")) + "': process '" +
                      echo_input(c.process) +
                      "' has too few displayed frames to find the display's refresh; allowed: a capture with "
                      "displayed frames");
  return c;
}

Workload replay_workload(const Chosen& c) {
  Workload w;
  w.name = "presentmon_replay";
  w.file = "(capture)";
  w.frames = c.replayed.size();
  w.fps = 0;
  w.max_frame_latency = 2;
  w.buffers = 3;
  w.queues.push_back({"gfx", EngineKind::Graphics});
  WorkloadStep cpu, gpu, present;
  cpu.kind = WorkloadStep::Kind::Cpu;
  gpu.kind = WorkloadStep::Kind::Gpu, gpu.queue = 0;
  present.kind = WorkloadStep::Kind::Present, present.queue = 0;
  w.frame = {cpu, gpu, present};
  w.present_queue = 0;
  return w;
}

class Replay : public FrameLoopDriver {
 public:
  Replay(const ParamSet& ps, Chosen c) : FrameLoopDriver(ps, replay_workload(c)), c_(std::move(c)) {
    w_.frames = c_.replayed.size();  // workload.frames already cut the capture to its first N
    application = c_.process;
    refresh_hz = 1000.0 / c_.period_ms;
    expect_all_displayed = false;
    const CapturedPresent& f0 = c_.replayed[0];
    c0_ = f0.present_ms - f0.cpu_busy_ms;
    for (auto& p : c_.replayed) {
      FrameOverride o;
      o.start_ms = p.present_ms - p.cpu_busy_ms - c0_;
      o.cpu_us = p.cpu_busy_ms * 1000.0;
      // GPU work: its busy time (2.x), msGPUActive, else (1.x) Present() to render complete.
      o.gpu_us = 1000.0 * std::max(0.0, p.gpu_busy_ms.value_or(p.render_done_ms.value_or(0.0)));
      overrides.push_back(o);
    }
    // The model's vblank grid on the capture's: capture time tau is model time t0 + (tau - c0).
    const double phase = c_.phase_ms, c0 = c0_;
    choose_t0 = [phase, c0](const sc_time& now, const DisplayEngine& d) {
      const sc_time period = d.timing().frame_period();
      const double p_ns = to_ns(period);
      const double off = std::fmod(std::fmod((phase - c0) * 1e6, p_ns) + p_ns, p_ns);
      sc_time t = d.timing().vblank_start(0) - sc_time(off, sc_core::SC_NS);
      while (t < now) t += period;
      return t;
    };
  }

  void finish(Platform& p, Results& r) override {
    FrameLoopDriver::finish(p, r);
    // Names are the capture's bytes: escaped (\xNN) where they are not UTF-8, as JSON must be.
    r.metric("capture_format", c_.format);
    r.metric("capture_process", printable(c_.process));
    r.metric("capture_swap_chain", printable(c_.swap_chain));
    r.metric("capture_presents", c_.presents);
    r.metric("presents_to_other_swap_chains", c_.other_swap_chains);
    r.metric("presents_replayed", uint64_t(c_.replayed.size()));
    nlohmann::ordered_json nr = nlohmann::ordered_json::object();
    for (auto& [mode, n] : c_.not_replayed) nr[printable(mode)] = n;
    r.metric("presents_not_replayed", nr);
    r.metric("sync_interval_0_replayed_as_1", c_.sync0);
    r.metric("capture_refresh_hz", 1000.0 / c_.period_ms);
    r.metric("capture_display_times_on_grid_pct", c_.fit_pct);
    // Each frame on the capture's clock (capture time tau is model time t0 + (tau - c0)). A run cut short
    // is compared over the frames it settled: those on screen, and those a later frame on screen overtook.
    const double t0 = to_ns(FrameLoopDriver::t0());
    size_t last_shown = 0;
    for (size_t i = 0; i < c_.replayed.size(); ++i)
      if (frames()[i + 1].displayed) last_shown = i + 1;
    std::vector<ReplayFrame> rf(c_.replayed.size());
    for (size_t i = 0; i < c_.replayed.size(); ++i) {
      const CapturedPresent& cp = c_.replayed[i];
      const FrameTimes& f = frames()[i + 1];
      ReplayFrame& x = rf[i];
      x.settled = f.present > 0 && (f.displayed || i + 1 < last_shown);
      x.model_present_ms = (f.present - t0) / 1e6 + c0_;
      if (f.displayed) x.model_screen_ms = (*f.displayed - t0) / 1e6 + c0_;
      x.capture_present_ms = cp.present_ms;
      x.capture_until_ms = cp.until_displayed_ms;
    }
    const ReplayComparison cmp = compare_replay(rf, c_.period_ms, c_.phase_ms);
    r.metric("frames_compared", cmp.compared);
    r.metric("frames_same_refresh_pct", cmp.same_refresh_pct());
    nlohmann::ordered_json e = summary(cmp.until_error_ms);
    nlohmann::ordered_json ue;
    ue["p50"] = e["p50"];
    ue["p95"] = pct(cmp.until_error_ms, 0.95);
    r.metric("until_displayed_error_ms", ue);
    r.metric("dropped_agreement_pct", cmp.dropped_agreement_pct());
    r.metric("model_until_displayed_ms", summary(cmp.model_until_ms));
    r.metric("capture_until_displayed_ms", summary(cmp.capture_until_ms));
    // The capture's own consistency: its display times sit on one refresh grid, or the refresh the
    // replay runs at (and every same-refresh comparison) means nothing.
    r.check(c_.fit_pct >= 90.0, "only " + format_number(c_.fit_pct) +
                                    " % of the capture's display times lie within 0.5 ms of a refresh at " +
                                    format_number(1000.0 / c_.period_ms) + " Hz");
    r.check(cmp.compared > 0, "no frame was displayed in both the capture and the model");
  }

 private:
  static double pct(std::vector<double> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const size_t k = size_t(std::ceil(q * double(v.size())));
    return v[std::min(v.size() - 1, k == 0 ? 0 : k - 1)];
  }
  Chosen c_;
  double c0_ = 0;
};

}  // namespace

ScenarioInfo presentmon_replay_scenario() {
  ScenarioInfo info{
      "presentmon_replay",
      "a PresentMon capture's frames replayed on the platform, compared frame by frame",
      [](ParamSet& ps, const std::string& o) {
        ps.declare_path("workload.presentmon", "workloads/captures/PresentMon-2019-09-29T145535.csv",
                        "A: the capture (PresentMon 1.x or 2.x CSV, RFC 4180); workloads/captures/SOURCES.md says "
                        "where each shipped one comes from. A regular file of at most " +
                            format_bytes(kCaptureMaxBytes) + " and " + std::to_string(kCaptureMaxRows) +
                            " rows (10^6 replayed beside as many of other processes); refused, with the row and "
                            "column: a value that is not a finite number or NA, a negative time, a swap chain's "
                            "rows out of time order",
                        o);
        ps.declare_text("workload.presentmon_process", "",
                        "A: the Application whose presents are replayed, compared byte for byte (a name that is "
                        "not UTF-8 is reported with \\xNN escapes); empty = the one with the most presents",
                        o);
        declare_frame_loop_params(ps, o);
      },
      [](const ParamSet& ps) { return std::make_unique<Replay>(ps, choose(ps)); },
      [](const ParamSet& ps) {
        const Chosen c = choose(ps);
        validate_frame_loop(ps, replay_workload(c), "presentmon_replay");
        // The replay starts each frame when the capture did: the last must start within sim.limit_ms.
        const double c0 = c.replayed[0].present_ms - c.replayed[0].cpu_busy_ms;
        auto start = [&](const CapturedPresent& p) { return p.present_ms - p.cpu_busy_ms - c0; };
        // After the last start, as frame_loop's (three refreshes and 10 ms), and up to a refresh of waiting
        // for the capture's vblank phase before the first frame: 33.8 ms on the shipped capture (dwm.exe at
        // 119.84 Hz, 6 presents).
        require_time_for_frames(ps, start(c.replayed.back()), 4 * c.period_ms + 10,
                                "the " + std::to_string(c.replayed.size()) + " presents of '" + echo_input(c.process) +
                                    "' that workload.presentmon replays",
                                "four refreshes of the capture's " +
                                    format_number(std::round(100000.0 / c.period_ms) / 100) + " Hz, and 10 ms",
                                [&](double budget_ms) {
                                  uint64_t n = 0;
                                  while (n < c.replayed.size() && start(c.replayed[n]) <= budget_ms) ++n;
                                  return n;
                                });
      },
      /*runs_without_native_fences=*/legacy_fence_kind};
  info.presents = true;
  return info;
}

namespace {
const ScenarioRegistration kPresentMonReplay{presentmon_replay_scenario};
}  // namespace

}  // namespace gpumodel
