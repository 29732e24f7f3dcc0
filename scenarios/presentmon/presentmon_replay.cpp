// presentmon_replay: a PresentMon capture of a real application replayed on the platform. Each captured
// present of one swap chain of one process (workload.presentmon_pid and workload.presentmon_swapchain, or
// the process's name as a shortcut; default: the process and swap chain with the most hardware flips,
// swap_chain_choice.h) drives one frame: it starts when the capture's frame started (its Present() time
// less its CPU busy time), computes its CPU busy time, runs its GPU busy time on the graphics engine and
// presents on the display the platform has (the dGPU's, or the iGPU's through one copy on the hybrid
// laptop): at sync interval 1, or as an immediate flip where the capture's present tore (sync interval 0
// with AllowsTearing: DXGI_PRESENT_ALLOW_TEARING, Microsoft Learn, "Variable refresh rate displays"),
// which shows it from the scan-out's next line, mid-refresh. The display's refresh period and vblank
// phase come from the capture's own vsync'd display times, fitted over its whole span (refresh_fit.h);
// a capture whose frames all tore shows no refresh, and the replay runs at display.mode's with a vblank
// at the first frame's start (an assumption the results name: refresh_source).
//
// The swap chain is DXGI's flip model (Microsoft Learn, "DXGI flip model"): a present joins the flip
// queue, and the display takes one flip a vblank, so a burst of presents drains one a refresh. Present()
// blocks while the default maximum frame latency, 3 frames presented and not yet on screen, is reached
// (Microsoft Learn, "IDXGIDevice1::SetMaximumFrameLatency"); the capture's own start times already hold
// any wait the real application made. The present modes that flip the application's own buffer at a
// vblank are replayed (replayed_present_modes()); composed and copy modes are counted by mode and
// reported, not replayed.
//
// Results compare model and capture per frame both displayed: frames_compared, frames_same_refresh_pct
// (the model shows the frame at the refresh the capture did), beside baseline_same_refresh_pct (the naive
// rule: each frame on the first vblank after its render completed, Present() plus the capture's
// MsRenderPresentLatency or MsUntilRenderComplete, knowing no tearing), until_displayed_error_ms (|model - capture| of
// Present() to screen: p50, p95), dropped_agreement_pct (both displayed it, or both did not), beside the
// model's own frame-loop figures. The verdict fails an agreement below workload.presentmon_min_agreement_pct
// or below the baseline's.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "hw_model/core/input_file.h"
#include "hw_model/core/printable.h"
#include "hw_model/display/display_timing.h"
#include "scenarios/common/fence_common.h"
#include "scenarios/display/present.h"
#include "scenarios/frame_loop/frame_loop.h"
#include "scenarios/presentmon/presentmon.h"
#include "scenarios/presentmon/refresh_fit.h"
#include "scenarios/presentmon/replay_comparison.h"
#include "scenarios/presentmon/swap_chain_choice.h"

namespace gpumodel {
namespace {

using sc_core::sc_time;

struct Chosen {
  std::string process, swap_chain;
  uint32_t process_id = 0;
  uint64_t other_swap_chains = 0;  // the process's presents to its other swap chains (not replayed)
  std::vector<CapturedPresent> replayed;
  std::map<std::string, uint64_t> not_replayed;  // by present mode
  uint64_t presents = 0, sync0 = 0, immediate = 0;
  RefreshFit fit;
  bool fitted = false;  // the refresh is the capture's (else display.mode's: every frame tore)
  std::string format;
};

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

// A present the real display showed from the moment it was flipped, mid-refresh: sync interval 0 with
// tearing allowed (an immediate flip). Sync interval 0 without it is replayed at sync interval 1.
bool tears(const CapturedPresent& p) { return p.sync_interval == 0 && p.allows_tearing; }

Chosen choose(const ParamSet& ps) {
  const std::string& file = ps.get_path("workload.presentmon");
  const Capture& cap = capture(file);
  Chosen c;
  c.format = cap.format;
  const SwapChainChoice sc =
      choose_swap_chain(cap, uint64_t(ps.get_int("workload.presentmon_pid")),
                        ps.get_text("workload.presentmon_process"), ps.get_text("workload.presentmon_swapchain"), file);
  c.process = cap.name(sc.application);
  c.process_id = sc.process_id;
  c.swap_chain = cap.name(sc.swap_chain);
  for (auto& p : cap.presents) {
    if (p.process_id != sc.process_id) continue;
    if (p.swap_chain != sc.swap_chain) {
      ++c.other_swap_chains;
      continue;
    }
    ++c.presents;
    if (!replayed_present_mode(cap.name(p.present_mode))) {
      ++c.not_replayed[cap.name(p.present_mode)];
      continue;
    }
    c.immediate += tears(p);
    c.sync0 += p.sync_interval == 0 && !tears(p);
    c.replayed.push_back(p);
  }
  const std::string who = "process " + std::to_string(c.process_id) + " ('" + echo_input(printable(c.process)) +
                          "'), swap chain " + echo_input(printable(c.swap_chain));
  if (c.replayed.empty()) {
    std::string modes;
    for (auto& [m, n] : c.not_replayed) modes += (modes.empty() ? "" : ", ") + echo_input(printable(m));
    throw ConfigError(who + ": none of its presents uses a present mode the model replays (" +
                      replayed_present_modes_text() + "); it has " + modes +
                      "; allowed: another process (workload.presentmon_pid) or swap chain "
                      "(workload.presentmon_swapchain) of the capture");
  }
  if (const int64_t keep = ps.get_int("workload.frames"); keep > 0 && c.replayed.size() > uint64_t(keep))
    c.replayed.resize(size_t(keep));  // the capture's first N replayable presents
  std::vector<double> screen;         // the vsync'd flips' screen times: a torn frame's lies between vblanks
  for (auto& p : c.replayed)
    if (p.until_displayed_ms && !tears(p)) screen.push_back(p.present_ms + *p.until_displayed_ms);
  c.fit = fit_refresh(screen);
  c.fitted = c.fit.period_ms > 0;
  if (!c.fitted && c.immediate < c.replayed.size())  // display.mode's refresh only when every frame tore
    throw ConfigError("workload.presentmon = '" + echo_input(file) + "': " + who +
                      " has too few displayed frames to find the display's refresh; allowed: a capture with "
                      "displayed frames");
  return c;
}

Workload replay_workload(const Chosen& c) {
  Workload w;
  w.name = "presentmon_replay";
  w.file = "(capture)";
  w.frames = c.replayed.size();
  w.fps = 0;
  // DXGI's default maximum frame latency (Microsoft Learn, "IDXGIDevice1::SetMaximumFrameLatency": 3).
  // The capture does not record the swap chain's buffer count: one per frame the latency lets queue and
  // the one on screen, so the latency is what bounds the queue.
  w.max_frame_latency = 3;
  w.buffers = 4;
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
    process_id = c_.process_id;
    swap_chain = c_.swap_chain;                                // the capture's text as it wrote it ("0x19D7EF5E390")
    refresh_hz = c_.fitted ? 1000.0 / c_.fit.period_ms : 0.0;  // 0: display.mode's
    expect_all_displayed = false;
    throttle_in_present = true;
    min_agreement_pct_ = ps.get_real("workload.presentmon_min_agreement_pct");
    const CapturedPresent& f0 = c_.replayed[0];
    c0_ = f0.present_ms - f0.cpu_busy_ms;
    std::optional<double> prev_done;  // the previous frame's render complete, capture time
    for (auto& p : c_.replayed) {
      FrameOverride o;
      o.start_ms = p.present_ms - p.cpu_busy_ms - c0_;
      o.cpu_us = p.cpu_busy_ms * 1000.0;
      o.immediate = tears(p);
      // GPU work: its busy time (2.x), msGPUActive; else (1.x) the GPU's time on it from Present() to its
      // render complete, less the part of that spent after the previous frame's work, which the engine
      // ran first: render complete - max(Present(), previous render complete). A GPU-bound game's frames
      // queue (Metro Exodus: 11 ms from Present() to render complete at 10.3 ms a frame), and counting
      // the queue as work would run each frame longer than the real GPU did.
      double gpu = p.render_done_ms.value_or(0.0);
      if (p.render_done_ms) {
        const double done = p.present_ms + *p.render_done_ms;
        if (prev_done) gpu = done - std::max(p.present_ms, *prev_done);
        prev_done = std::max(done, prev_done.value_or(done));
      }
      o.gpu_us = 1000.0 * std::max(0.0, p.gpu_busy_ms.value_or(gpu));
      overrides.push_back(o);
    }
    // The model's vblank grid on the capture's: capture time tau is model time t0 + (tau - c0). A capture
    // that shows no refresh (every frame tore) gets a vblank at its first frame's start.
    if (!c_.fitted) c_.fit.phase_ms = c0_;
    const double phase = c_.fit.phase_ms, c0 = c0_;
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
    r.metric("capture_pid", uint64_t(c_.process_id));
    r.metric("capture_swap_chain", printable(c_.swap_chain));
    r.metric("capture_presents", c_.presents);
    r.metric("presents_to_other_swap_chains", c_.other_swap_chains);
    r.metric("presents_replayed", uint64_t(c_.replayed.size()));
    nlohmann::ordered_json nr = nlohmann::ordered_json::object();
    for (auto& [mode, n] : c_.not_replayed) nr[printable(mode)] = n;
    r.metric("presents_not_replayed", nr);
    r.metric("immediate_flips_replayed", c_.immediate);
    r.metric("sync_interval_0_replayed_as_1", c_.sync0);
    // The capture's refresh, fitted over its vsync'd flips (0: it has none, every frame tore), and the
    // refresh the replay ran at.
    r.metric("capture_refresh_hz", c_.fitted ? 1000.0 / c_.fit.period_ms : 0.0);
    r.metric("capture_display_times_on_grid_pct", c_.fit.on_grid_pct);
    // 0: the run stopped before the display was set up (an adapter that did not start, memory too small).
    r.metric("refresh_hz", refresh_ms() > 0 ? 1000.0 / refresh_ms() : 0.0);
    r.metric("refresh_source", c_.fitted ? std::string("the capture's vsync'd flips")
                                         : std::string("display.mode (assumed: every frame of the capture "
                                                       "tore, so its display times show no refresh)"));
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
      // PresentMon's screen time for an immediate flip is Dxgkrnl's MMIO flip event (the flip completed
      // at once: PresentMon's PresentMonTraceConsumer.cpp, HandleDxgkMMIOFlipMPO), not the beam reaching
      // the tear: the model's is when its present thread programmed the flip. A vsync'd flip's is the
      // vblank it latched at (the VSync DPC), the model's too.
      if (f.displayed) x.model_screen_ms = ((f.immediate ? f.flip_programmed : *f.displayed) - t0) / 1e6 + c0_;
      x.capture_present_ms = cp.present_ms;
      x.capture_until_ms = cp.until_displayed_ms;
      x.capture_render_ms = cp.render_done_ms;
      x.capture_immediate = tears(cp);
      x.model_immediate = f.immediate;
    }
    // The grid the frames are compared on: the capture's; with none (every frame tore), the refresh the
    // replay ran at, or display.mode's when the run stopped before the display was set up.
    const double period_ms = c_.fitted          ? c_.fit.period_ms
                             : refresh_ms() > 0 ? refresh_ms()
                                                : 1000.0 / display_mode(ps_.get_enum("display.mode")).refresh_hz();
    const ReplayComparison cmp = compare_replay(rf, period_ms, c_.fit.phase_ms);
    r.metric("frames_compared", cmp.compared);
    r.metric("frames_same_refresh_pct", cmp.same_refresh_pct());
    // The naive rule beside it: each frame on the first vblank after Present() + its render time.
    r.metric("baseline_frames_compared", cmp.baseline_compared);
    r.metric("baseline_same_refresh_pct", cmp.baseline_pct());
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
    r.check(!c_.fitted || c_.fit.on_grid_pct >= 90.0,
            "only " + format_number(c_.fit.on_grid_pct) +
                " % of the capture's display times lie within 0.5 ms of a refresh at " +
                format_number(1000.0 / c_.fit.period_ms) + " Hz");
    const std::optional<std::string> why = replay_verdict(cmp, min_agreement_pct_);
    r.check(!why, why.value_or(""));
  }

 private:
  static double pct(std::vector<double> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const size_t k = size_t(std::ceil(q * double(v.size())));
    return v[std::min(v.size() - 1, k == 0 ? 0 : k - 1)];
  }
  Chosen c_;
  double c0_ = 0, min_agreement_pct_ = 95;
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
        ps.declare_int("workload.presentmon_pid", 0, "", 0, 4294967295,
                       "A: the ProcessID whose presents are replayed (PresentMon's ProcessID column); 0 = by "
                       "workload.presentmon_process, else the process with the most presents in a mode the model "
                       "replays (PID 0, the idle process, never presents)",
                       o);
        ps.declare_text("workload.presentmon_process", "",
                        "A: the Application whose presents are replayed, compared byte for byte (a name that is "
                        "not UTF-8 is reported with \\xNN escapes), a shortcut for its PID: refused when more than "
                        "one process has the name; empty = by workload.presentmon_pid",
                        o);
        ps.declare_text("workload.presentmon_swapchain", "",
                        "A: the SwapChainAddress replayed (0x1927FEB15A0; leading zeros and case do not matter); "
                        "empty = the process's swap chain with the most presents in a mode the model replays",
                        o);
        ps.declare_real("workload.presentmon_min_agreement_pct", 95.0, "%", 0.001, 100.0,
                        "A: a design choice, not a measurement: the verdict fails a replay that shows fewer of the "
                        "frames at the capture's refresh than this (and one below the naive rule of each frame on "
                        "the first vblank after its render completed, whatever this is)",
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
        const double period_ms =
            c.fitted ? c.fit.period_ms : 1000.0 / display_mode(ps.get_enum("display.mode")).refresh_hz();
        require_time_for_frames(
            ps, start(c.replayed.back()), 4 * period_ms + 10,
            "the " + std::to_string(c.replayed.size()) + " presents of '" + echo_input(c.process) +
                "' that workload.presentmon replays",
            std::string("four refreshes of ") +
                (c.fitted ? "the capture's " : "display.mode's (every frame of the capture tore) ") +
                format_number(std::round(100000.0 / period_ms) / 100) + " Hz, and 10 ms",
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
