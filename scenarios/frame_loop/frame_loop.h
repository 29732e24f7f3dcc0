// The frame loop: runs a Workload (workload.h) on the platform as an application's threads and the
// runtime under them would, and measures what an architect asks of an application: frame times,
// present-to-display latency, dropped frames, engine busy time, the CPU's interrupts, wake-ups and idle
// residency, and how GPU waits were resolved (on the GPU, or through a CPU round trip).
//
// The app thread runs each frame's steps in order. GPU steps are batched per queue (the UMD's command
// buffer) and submitted at the queue's next signal, at a wait (the work before it goes first), at the
// present and at a CPU wait (a flush). A native fence's GPU wait is a WAIT packet; a legacy monitored
// fence's holds the queue's later work on the CPU until the signal interrupt (VidSch). The present writes
// the frame's number into its back buffer and signals the swap chain's present fence; then:
//   dgpu:   the dGPU's display engine flips to the back buffer;
//   hybrid: the dGPU's copy engine copies it into a cross-adapter surface (one copy, CASO) after the
//           present fence (a GPU wait), signals, and the iGPU's display engine flips to that surface.
// Dxgkrnl's present thread waits (CPU wait) for the last fence of the frame, waits until the previous
// flip latched, and programs the flip; a flip-complete interrupt tells the app a buffer is free. The app
// starts frame n at its pace (1 / fps) once at most max_frame_latency frames are presented and not yet on
// screen. The display engine reports which frame it scans out by the number it reads (hardware
// observation): present-to-display is measured to the first line of the first refresh that shows it.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hw_model/display/display_engine.h"
#include "scenarios/common/scenario.h"
#include "scenarios/frame_loop/workload.h"
#include "scenarios/presentmon/presentmon.h"

namespace gpumodel {

// Per frame, what the loop measured (sim time in ns).
struct FrameTimes {
  double cpu_start = 0, present = 0, present_return = 0;
  std::optional<double> gpu_start, gpu_end, gpu_busy, video_busy;
  // On screen from: the vblank start its flip latched at, before its first refresh; an immediate flip's
  // tear (the beam reaching the first line scanned from it, mid-refresh).
  std::optional<double> displayed;
  double flip_programmed = 0;
  bool immediate = false;  // flipped immediately (tearing), not at a vblank
};

// The run's key events for the waveform's save file (Results::event): one frame's way from Present() to the
// panel (frame_events.cpp). `ft` is indexed by frame number, from 1.
void frame_events(Results& r, const std::vector<FrameTimes>& ft);

// What a frame loop needs beyond the workload: the parameters frame_loop and presentmon_replay share.
void declare_frame_loop_params(ParamSet& ps, const std::string& owner);
// Refuses (ConfigError) a workload the platform cannot run: engines missing, the display, topology; and
// a paced workload (fps > 0) whose frames cannot all run within sim.limit_ms.
void validate_frame_loop(const ParamSet& ps, const Workload& w, const std::string& scenario);
// Refuses (ConfigError naming sim.limit_ms) a run whose last frame starts `last_start_ms` after its
// first when sim.limit_ms cannot hold that and `tail_ms` (the set-up before the first frame and the last
// frame's way to the panel): `what` says why it starts then ("workload.frames = 600 at 60 fps"),
// `tail_what` what the tail is made of, naming the key its refresh comes from ("three refreshes at
// display.mode = 1920x1080@60, and 10 ms"); `frames_within(budget_ms)` is how many frames start within a
// budget, for the message's other way out.
void require_time_for_frames(const ParamSet& ps, double last_start_ms, double tail_ms, const std::string& what,
                             const std::string& tail_what, const std::function<uint64_t(double)>& frames_within);

// Runs `w` and reports. `per_frame` (optional) is called for each frame before it starts (replay's
// per-frame CPU and GPU amounts); `rows_app` names the application in PresentMon rows.
class FrameLoopDriver : public ScenarioDriver {
 public:
  FrameLoopDriver(const ParamSet& ps, Workload w);
  void build(Platform& p, Results& r) override;
  void finish(Platform& p, Results& r) override;
  std::string progress(const Platform& p) const override;

  // Replay hooks: frame n's start time (ms from the first frame; nullopt: the workload's pace), and its
  // own CPU and GPU amounts overriding the steps' (a replay's workload has one cpu and one gpu step),
  // and whether it asks for an immediate flip (sync interval 0 with tearing allowed; the display driver
  // takes it where its DXGK_FLIPCAPS has FlipImmediateMmio, gpu.kmd_flip_immediate).
  struct FrameOverride {
    double start_ms = -1, cpu_us = -1, gpu_us = -1;
    bool immediate = false;
  };
  std::vector<FrameOverride> overrides;
  std::string application = "gpumodel.exe";
  uint32_t process_id = 1;  // the PresentMon rows' ProcessID and SwapChainAddress (a replay: the capture's)
  std::string swap_chain = "0x0000000000001000";
  // Replay: the display's refresh (0: the mode's), and when the first frame starts given the display's
  // timing (null: as soon as the loop is set up).
  double refresh_hz = 0;
  bool expect_all_displayed = true;  // the verdict fails a frame that never reached the panel
  // Where the swap chain's limits (max_frame_latency, buffers) hold the app: before the frame starts (a
  // frame-latency waitable object), or inside Present(), as DXGI's maximum frame latency blocks an app
  // that does not wait on that object (a replay: the capture's start times already hold any wait the
  // real app made before its frame).
  bool throttle_in_present = false;
  std::function<sc_core::sc_time(const sc_core::sc_time& now, const DisplayEngine& d)> choose_t0;
  const std::vector<FrameTimes>& frames() const { return ft_; }
  double refresh_ms() const { return refresh_ms_; }
  sc_core::sc_time t0() const;  // when the first frame started
  struct Impl;                  // the run's state (frame_loop.cpp)

 protected:
  void write_presentmon(Results& r);
  const ParamSet& ps_;
  Workload w_;
  std::vector<FrameTimes> ft_;
  double refresh_ms_ = 0;
  std::shared_ptr<Impl> impl_;
};

}  // namespace gpumodel
