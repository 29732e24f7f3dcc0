// hybrid_present (CASO support: C2, C3, C5, C6): on a hybrid laptop an app renders on the dGPU and the iGPU
// drives the panel. Each frame: the dGPU's 3D engine renders (workload.render_us of engine work, then
// the frame's number written into the render target's first qword as its tag), the app presents, and
// the frame travels one of three paths to the iGPU's display engine:
//   one_copy (CASO, C3): the dGPU's copy engine copies the render target into a cross-adapter surface in
//     system memory (copy 1, across the link); the iGPU flips to that surface and scans it out;
//   two_copy (C2): copy 1, then the iGPU's copy engine copies it into the iGPU's own primary in stolen
//     memory (copy 2, never on the link), then the flip;
//   compose: copy 1, then DWM composes it into its own surface on the iGPU (3D engine), then the flip.
// The path is chosen at swap-chain creation from the display driver's answers (C5) or forced by
// present.path; a failing present-time check turns one present into a composition.
//
// Cross-adapter synchronisation: native fences, each signalled by the GPU that did the work and waited
// on by the CPU (an interrupt, then Dxgkrnl's present thread issues the next step). The dGPU cannot
// wake the iGPU's engines (no GPU-to-GPU doorbell; Native GPU fence object names that as the future design), so each
// cross-adapter step costs one interrupt and one CPU hop; within one adapter, the copy engine waits on
// the render fence on the GPU (a WAIT packet, no CPU).
//
// The display engine reports which frame it scans out by the tag it reads at the top of each frame:
// present_to_scanout_ns is measured from the app's Present call to the first scanned line of the first
// refresh that shows that frame's tag: hardware observation, not the driver's bookkeeping.
//
// The other arrangement (display.adapter = gpu: an external monitor on the laptop's dGPU outputs): the
// iGPU renders and copies into the cross-adapter surface in system memory (copy 1, never on the link),
// and the dGPU displays. One copy then means the dGPU scans the system-memory surface across the link
// every refresh; two copies means its copy engine brings each frame into VRAM (copy 2, across the link)
// and it scans VRAM. Which one the swap chain gets is the dGPU driver's StaticCheck, from its scan-out
// budget for the link (kmd.h ScanoutBudget).
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <deque>
#include <random>

#include "hw_model/display/display_timing.h"
#include "kernel_stub/umd/swapchain.h"
#include "platform/energy.h"
#include "scenarios/display/present.h"
#include "scenarios/presentmon/presentmon.h"

namespace gpumodel {
namespace {

// The app's pace: workload.frame_interval_us, or (0, the default) one refresh of display.mode, so the
// app runs at the panel's rate at any mode; the CPU work before each submit, workload.start_jitter_us, or
// (-1, the default) up to one frame interval, so the present's phase to the vblank covers the period.
double frame_interval_us(const ParamSet& ps) {
  const double set = ps.get_real("workload.frame_interval_us");
  return set > 0 ? set : 1e6 / display_mode(ps.get_enum("display.mode")).refresh_hz();
}
double start_jitter_us(const ParamSet& ps) {
  const double set = ps.get_real("workload.start_jitter_us");
  return set >= 0 ? set : frame_interval_us(ps);
}

class HybridPresent : public ScenarioDriver {
 public:
  explicit HybridPresent(const ParamSet& ps)
      : frames_(uint64_t(ps.get_int("workload.frames"))),
        render_us_(ps.get_real("workload.render_us")),
        interval_(sc_core::sc_time(frame_interval_us(ps), sc_core::SC_US)),
        jitter_us_(start_jitter_us(ps)),
        compose_us_(ps.get_real("present.compose_us")),
        forced_(ps.get_enum("present.path")),
        buffers_(unsigned(ps.get_int("present.buffers"))),
        latency_(unsigned(ps.get_int("present.max_frame_latency"))),
        sweep_(ps.get_enum("workload.jitter") == "sweep"),
        tearing_(ps.get_int("present.sync_interval") == 0) {}

  void build(Platform& p, Results& r) override {
    p_ = &p;
    assign_roles(p, s_);
    display_ = s_.display.display;
    energy_ = std::make_unique<EnergyProbe>(p, p.vcd);
    display_->on_tear = [this](const DisplayEngine::TearRecord& t) { tears_.push_back(t); };
    display_->on_frame = [this](const DisplayEngine::FrameRecord& f) {
      seen_.push_back(f);
      if (f.first_qword > newest_) {  // a new frame on the panel: the energy since the previous one
        newest_ = f.first_qword;
        energy_->frame();
      }
    };
    p.cpu.spawn_thread("app", [this, &p, &r] { app(p, r); });
  }

  void finish(Platform& p, Results& r) override;
  std::string progress(const Platform&) const override {
    return "frame " + std::to_string(flips_done_) + " of " + std::to_string(frames_) + " flipped";
  }

 private:
  void app(Platform& p, Results& r);
  void present_thread(Platform& p, Results& r);
  void flip_listener(Platform& p);
  // `shown_ns`: when each frame first reached the panel (its first scanned line; an immediate flip's
  // tear line), from the display's records.
  void write_presentmon(Platform& p, Results& r, const std::vector<std::optional<double>>& shown_ns);

  struct Stamp {  // per frame (1-based)
    sc_core::sc_time start, present, present_return, copy1_seen, flip_programmed, flip_done;
    PresentPath path = PresentPath::OneCopy;
    uint64_t surface = 0;    // what the flip pointed the display at
    bool immediate = false;  // an immediate flip (tearing): shown from its tear line, not the next vblank
  };

  const uint64_t frames_;
  const double render_us_;
  const sc_core::sc_time interval_;
  const double jitter_us_, compose_us_;
  const std::string forced_;
  const unsigned buffers_, latency_;
  const bool sweep_, tearing_;
  std::vector<DisplayEngine::TearRecord> tears_;  // the immediate flips taking effect, in order
  std::vector<uint64_t> immediate_frames_;        // the frames flipped immediately, in order

  Platform* p_ = nullptr;
  DisplayEngine* display_ = nullptr;
  PresentSetup s_;
  std::vector<Stamp> st_;
  std::vector<DisplayEngine::FrameRecord> seen_;
  std::unique_ptr<EnergyProbe> energy_;
  uint64_t newest_ = 0;
  std::deque<uint64_t> queue_;  // presents the present thread has not taken
  KEvent queued_ev_, buffer_ev_, flip_ev_worker_, all_flipped_ev_;
  uint64_t flips_done_ = 0, c2_ = 0, throttled_ = 0;
  bool started_ = false;
  TrafficSnapshot t0_, t1_;
};

void HybridPresent::app(Platform& p, Results& r) {
  if (!start_hybrid(p, r, s_)) return;
  const DisplayGeometry g = display_geometry(p.params);
  if (!r.check(create_present_surfaces(p, r, g, buffers_, s_, frames_), "present surfaces could not be set up")) return;
  s_.choice = choose_present_path(s_.display_start, *s_.display_kmd, PrimaryDesc{g.width, g.height, g.format},
                                  s_.xsurf[0].address, forced_);
  if (!s_.choice.defect.empty()) r.failures.push_back(s_.choice.defect);
  commit_display(p, s_, g);
  st_.resize(frames_ + 1);
  started_ = true;
  p.cpu.spawn_thread("present", [this, &p, &r] { present_thread(p, r); });
  p.cpu.spawn_thread("flip_listener", [this, &p] { flip_listener(p); });

  std::mt19937_64 rng(p.rng());
  std::uniform_real_distribution<double> jitter(0.0, jitter_us_);
  const sc_core::sc_time t0 = sc_core::sc_time_stamp();
  const uint64_t render_cycles = uint64_t(render_us_ * p.params.get_real(s_.render.key + ".engine_clock_mhz"));
  Kmd& rkmd = *s_.render.kmd;
  for (uint64_t n = 1; n <= frames_; ++n) {
    // The game loop: not before the app's own pace (frame n at t0 + (n - 1) x interval)...
    const sc_core::sc_time due = t0 + interval_ * double(n - 1);
    if (due > sc_core::sc_time_stamp()) p.cpu.sleep(due - sc_core::sc_time_stamp());
    // ...and, through the swap chain's frame-latency waitable object, only while at most L - 1 earlier
    // frames are not yet on screen (flips done >= n - L). Frame n also renders into buffer n % B, whose
    // last user (frame n - B) left the screen when the flip of frame n - B + 1 completed.
    const uint64_t need_flips =
        std::max<uint64_t>(n > buffers_ ? n - buffers_ + 1 : 0, n > latency_ ? n - latency_ : 0);
    if (flips_done_ < need_flips) ++throttled_;
    while (flips_done_ < need_flips) p.cpu.wait_for(buffer_ev_);
    // The frame's CPU work (input, simulation, recording) before it submits: its phase to the vblank.
    // sweep: frame n takes J x (n - 1) / frames, every phase in [0, J) equally represented, so a mean
    // is the phase average without sampling noise; random: uniform in [0, J), seeded.
    st_[n].start = sc_core::sc_time_stamp();
    const double cpu_us = sweep_ ? jitter_us_ * double(n - 1) / double(frames_) : jitter(rng);
    if (cpu_us > 0) p.cpu.sleep(sc_core::sc_time(cpu_us, sc_core::SC_US));
    const unsigned b = unsigned(n % buffers_);
    PacketWriter render;
    render.timestamp(s_.ts(n, 0)).compute(render_cycles).write64(s_.rt[b], n).barrier().timestamp(s_.ts(n, 1));
    render.signal(s_.render_fence_slot, n);
    rkmd.DxgkDdiSubmitCommandToHwQueue(s_.render_q, render);
    // Present(): the UMD queues copy 1 behind the render on the dGPU's copy engine (a GPU wait).
    st_[n].present = sc_core::sc_time_stamp();
    if (n == 1) t0_ = TrafficSnapshot::take(p, display_);
    PacketWriter copy1;
    copy1.wait(s_.render_fence_slot, n).timestamp(s_.ts(n, 2)).copy(s_.rt[b], s_.xsurf[b].address, s_.xsurf[b].bytes());
    copy1.barrier().timestamp(s_.ts(n, 3)).signal(s_.copy1_fence_slot, n);
    rkmd.DxgkDdiSubmitCommandToHwQueue(s_.copy_q, copy1);
    queue_.push_back(n);
    p.cpu.signal(queued_ev_);
    st_[n].present_return = sc_core::sc_time_stamp();
  }
  while (flips_done_ < frames_) p.cpu.wait_for(all_flipped_ev_);
  t1_ = TrafficSnapshot::take(p, display_);
  // Let the last frame reach the panel, then turn the source off so the run ends.
  p.cpu.sleep(display_->timing().frame_period() * 2.0);
  s_.display_kmd->DxgkDdiSetVidPnSourceVisibility(false);
}

void HybridPresent::present_thread(Platform& p, Results& r) {
  Kmd& ikmd = *s_.display_kmd;
  VidSch& isch = *s_.display.sch;
  for (;;) {
    while (queue_.empty()) p.cpu.wait_for(queued_ev_);
    const uint64_t n = queue_.front();
    queue_.pop_front();
    const unsigned b = unsigned(n % buffers_);
    // Cross-adapter sync: copy 1 done (the dGPU's fence interrupt wakes this thread).
    if (!r.check(s_.render.sch->WaitFromCpu(s_.copy1_fence, n), "copy 1 fence wait failed")) return;
    st_[n].copy1_seen = sc_core::sc_time_stamp();
    PresentPath path = s_.choice.path;
    uint64_t surface = s_.xsurf[b].address;
    if (path == PresentPath::OneCopy && !present_time_check(ikmd, surface)) path = PresentPath::Compose;
    if (path != PresentPath::OneCopy) {
      // Copy 2 on the iGPU's copy engine, or DWM's composition on its 3D engine: both read the
      // cross-adapter surface in system memory and write a surface in the iGPU's stolen memory.
      const bool compose = path == PresentPath::Compose;
      const uint64_t dst = compose ? s_.dwm[b] : s_.primary[b];
      PacketWriter w;
      w.timestamp(s_.ts(n, 4));
      if (compose) w.compute(uint64_t(compose_us_ * p.params.get_real(s_.display.key + ".engine_clock_mhz")));
      w.copy(s_.xsurf[b].address, dst, s_.xsurf[b].bytes()).barrier().timestamp(s_.ts(n, 5));
      w.signal(s_.copy2_fence_slot, ++c2_);
      ikmd.DxgkDdiSubmitCommandToHwQueue(compose ? s_.compose_q : s_.copy2_q, w);
      if (!r.check(isch.WaitFromCpu(s_.copy2_fence, c2_), "copy 2 fence wait failed")) return;
      surface = dst;
    }
    st_[n].path = path;
    st_[n].surface = surface;
    // The display's flip register holds one pending flip: the next waits for the previous to latch.
    while (flips_done_ < n - 1) p.cpu.wait_for(flip_ev_worker_);
    st_[n].flip_programmed = sc_core::sc_time_stamp();
    // SyncInterval 0 with DXGI_PRESENT_ALLOW_TEARING asks for an immediate flip; the driver takes it where it
    // declared DXGK_FLIPCAPS FlipImmediateMmio, else the flip waits for the vsync.
    st_[n].immediate = ikmd.DxgkDdiSetVidPnSourceAddress(surface, tearing_);
    if (st_[n].immediate) immediate_frames_.push_back(n);
  }
}

void HybridPresent::flip_listener(Platform& p) {
  // Dxgkrnl's flip-complete handling: the display engine's MSI, the iGPU KMD's ISR and DPC.
  (void)p;
  KEvent& done = s_.display.sch->interrupt_event(Kmd::kDisplayFlipVector);
  for (;;) {
    p.cpu.wait_for(done);
    ++flips_done_;
    if (flips_done_ < st_.size()) st_[flips_done_].flip_done = sc_core::sc_time_stamp();
    p.cpu.signal(buffer_ev_);
    p.cpu.signal(flip_ev_worker_);
    if (flips_done_ == frames_) p.cpu.signal(all_flipped_ev_);
  }
}

void HybridPresent::finish(Platform& p, Results& r) {
  if (!started_) return;
  r.metric("path", std::string(to_string(s_.choice.path)) + ": " + s_.choice.reason);
  // Frame n's first refresh: the first scanned frame whose tag is n (vsync'd flips), or the tear line of
  // its immediate flip (the k-th tear is the k-th immediate flip: the present thread programs a flip only
  // once the previous one completed, so no immediate flip supersedes another unseen).
  std::vector<double> p2s, flip_wait, tear_lines;
  std::vector<std::optional<double>> shown_ns(frames_ + 1);
  const sc_core::sc_time vblank =
      display_->timing().frame_period() - display_->timing().line_period() * double(display_->timing().mode().v_active);
  const VidMm& dmm = *s_.display.mm;
  for (auto& f : seen_) {
    if (f.first_qword == 0 || f.first_qword > frames_ || shown_ns[f.first_qword] || st_[f.first_qword].immediate)
      continue;
    const uint64_t n = f.first_qword;
    shown_ns[n] = to_ns(f.first_line_time);
    // The scenario's own invariants: no frame before its flip was programmed and latched at a vblank
    // start (a vertical blank before its first line)...
    if (!r.check(f.first_line_time >= st_[n].flip_programmed + vblank,
                 "frame " + std::to_string(n) + " was scanned out before its flip could latch"))
      continue;
    // ...and from the surface its path flipped to: the cross-adapter surface (one copy), the display
    // adapter's primary (two copies) or DWM's surface (composition), both in its local memory.
    const bool local = f.surface >= dmm.local_base() && f.surface < dmm.local_base() + dmm.local_size();
    r.check(f.surface == st_[n].surface && local == (st_[n].path != PresentPath::OneCopy),
            "frame " + std::to_string(n) + " (" + to_string(st_[n].path) + ") was scanned out of " +
                (local ? "the " + s_.display.name + "'s local memory" : std::string("the cross-adapter surface")) +
                ", not its path's surface");
    flip_wait.push_back(to_ns(f.first_line_time - vblank - st_[n].flip_programmed));
  }
  r.check(tears_.size() == immediate_frames_.size(), std::to_string(immediate_frames_.size()) +
                                                         " immediate flip(s) programmed, " +
                                                         std::to_string(tears_.size()) + " took effect");
  for (size_t k = 0; k < std::min(tears_.size(), immediate_frames_.size()); ++k) {
    const uint64_t n = immediate_frames_[k];
    const DisplayEngine::TearRecord& t = tears_[k];
    r.check(t.surface == st_[n].surface && t.time >= st_[n].flip_programmed,
            "frame " + std::to_string(n) + "'s immediate flip showed another surface or before it was programmed");
    shown_ns[n] = to_ns(t.time);
    tear_lines.push_back(double(t.line));
  }
  // Frames reach the panel in present order.
  double last = -1;
  for (uint64_t n = 1; n <= frames_; ++n) {
    if (!shown_ns[n]) continue;
    r.check(*shown_ns[n] > last, "frame " + std::to_string(n) + " reached the panel before an earlier frame");
    last = *shown_ns[n];
    p2s.push_back(*shown_ns[n] - to_ns(st_[n].present));
  }
  // The waveform's view (its save file): the second frame's way from Present() to the panel, past start-up.
  if (const uint64_t k = std::min<uint64_t>(2, frames_); k >= 1 && shown_ns[k]) {
    r.event("present", st_[k].present.value());
    if (st_[k].copy1_seen != sc_core::SC_ZERO_TIME) r.event("copy done", st_[k].copy1_seen.value());
    if (st_[k].flip_programmed != sc_core::SC_ZERO_TIME) r.event("flip", st_[k].flip_programmed.value());
    r.event("on screen", uint64_t(std::llround(*shown_ns[k] * 1000)));
  }
  uint64_t displayed = uint64_t(p2s.size()), composed = 0;
  std::vector<double> render, copy1, copy2, forward, ready;
  const double dtick = double(p.params.get_int(s_.render.key + ".timestamp_tick_ps")) / 1000.0;
  const double itick = double(p.params.get_int(s_.display.key + ".timestamp_tick_ps")) / 1000.0;
  // A run cut by sim.limit_ms has frames whose later steps never ran: each figure takes the frames
  // whose two ends it measures happened (a TIMESTAMP not yet written reads 0).
  for (uint64_t n = 1; n <= frames_; ++n) {
    if (s_.read_ts(p, n, 1)) render.push_back(double(s_.read_ts(p, n, 1) - s_.read_ts(p, n, 0)) * dtick);
    if (s_.read_ts(p, n, 3)) copy1.push_back(double(s_.read_ts(p, n, 3) - s_.read_ts(p, n, 2)) * dtick);
    if (st_[n].path != PresentPath::OneCopy && s_.read_ts(p, n, 5))
      copy2.push_back(double(s_.read_ts(p, n, 5) - s_.read_ts(p, n, 4)) * itick);
    if (st_[n].path == PresentPath::Compose) ++composed;
    if (st_[n].copy1_seen != sc_core::SC_ZERO_TIME && s_.read_ts(p, n, 3))
      forward.push_back(to_ns(st_[n].copy1_seen) - double(s_.read_ts(p, n, 3)) * dtick);
    if (st_[n].flip_programmed != sc_core::SC_ZERO_TIME)
      ready.push_back(to_ns(st_[n].flip_programmed - st_[n].present));
  }
  r.metric("present_to_scanout_ns", summary(p2s));
  r.metric("frames_torn", uint64_t(tear_lines.size()));
  r.metric("tear_line", summary(tear_lines));
  write_presentmon(p, r, shown_ns);
  r.metric("render_ns", summary(render));
  r.metric("copy1_ns", summary(copy1));
  r.metric("copy2_ns", summary(copy2));
  r.metric("copy1_to_cpu_ns", summary(forward));
  r.metric("present_to_flip_ns", summary(ready));
  r.metric("flip_to_latch_ns", summary(flip_wait));
  r.metric("latch_to_scanout_ns", to_ns(vblank));
  // Counts are of what happened: a run cut by sim.limit_ms presented fewer frames than workload.frames
  // asked for, and its traffic is measured up to the cut, per frame presented.
  const bool complete = flips_done_ >= frames_;
  if (!complete) t1_ = TrafficSnapshot::take(p, display_);
  uint64_t presented = 0, last_shown = 0, dropped = 0;
  for (uint64_t n = 1; n <= frames_; ++n) {
    presented += st_[n].present != sc_core::SC_ZERO_TIME;
    if (shown_ns[n]) last_shown = n;
  }
  for (uint64_t n = 1; n < last_shown; ++n) dropped += !shown_ns[n];
  const TrafficSnapshot d = t1_ - t0_;
  const double fr = double(std::max<uint64_t>(presented, 1));
  r.metric("link_bytes_per_frame", double(d.link_bytes) / fr);
  r.metric("dram_bytes_per_frame", double(d.sysmem_bytes + d.vram_bytes) / fr);
  r.metric("sysmem_bytes_per_frame", double(d.sysmem_bytes) / fr);
  r.metric("vram_bytes_per_frame", double(d.vram_bytes) / fr);
  r.metric("scanout_bytes_per_frame", double(d.scanout_bytes) / fr);
  // System-memory traffic but scan-out: copy 1's writes into the cross-adapter surface, copy 2's (or the
  // composition's) read of it and write into the iGPU's stolen memory, and the control traffic.
  r.metric("copy_sysmem_bytes_per_frame", double(d.sysmem_bytes - d.scanout_bytes) / fr);
  r.metric("frames_requested", frames_);
  r.metric("frames_presented", presented);
  r.metric("frames_displayed", displayed);
  // Dropped: a later frame reached the panel first; pending: still on its way when the run was cut.
  r.metric("frames_dropped", dropped);
  r.metric("frames_pending", presented - displayed - dropped);
  r.metric("frames_composed", composed);
  // Frames whose start waited for the frame-latency waitable object or a free buffer
  // (present.max_frame_latency, present.buffers), and the rate the presents reached.
  r.metric("frames_throttled", throttled_);
  if (presented > 1 && st_[presented].present > st_[1].present)
    r.metric("fps", double(presented - 1) / (st_[presented].present - st_[1].present).to_seconds());
  else
    r.metric_absent("fps", "fewer than two frames presented");
  r.metric("frame_interval_us", to_ns(interval_) / 1000);
  r.metric("energy_per_frame_mj", energy_->summary());
  report_scanout(*display_, d, r);
  if (!complete) return;  // the checks below judge a whole run
  r.check(displayed == frames_, std::to_string(frames_ - displayed) + " presented frame(s) never reached the panel");
  // What must have crossed the link in the window: copy 1 of every frame when the dGPU renders; when it
  // displays, copy 2 (or the composition's read) of every copied frame, and, with every frame on one copy,
  // every byte the scan-out fetched (it reads the system-memory surface across the link).
  uint64_t copied = 0;
  for (uint64_t n = 1; n <= frames_; ++n) copied += st_[n].path != PresentPath::OneCopy;
  const uint64_t surface = s_.xsurf[0].bytes();
  // (The refreshes scanned wholly inside the window out of system memory: not the blank primary the panel
  // shows before the first flip, which is in the display adapter's local memory.)
  uint64_t system_refreshes = 0;
  const sc_core::sc_time active = display_->timing().line_period() * double(display_->timing().mode().v_active);
  for (auto& f : seen_) {
    const bool local = f.surface >= dmm.local_base() && f.surface < dmm.local_base() + dmm.local_size();
    if (!local && f.first_line_time >= t0_.at && f.first_line_time + active <= t1_.at) ++system_refreshes;
  }
  const uint64_t must =
      s_.render.key == "gpu"
          ? frames_ * surface
          : copied * surface + (copied == 0 ? system_refreshes * display_->timing().frame_bytes() : 0);
  r.check(d.link_bytes >= must, "the link carried " + std::to_string(d.link_bytes) + " B for " +
                                    std::to_string(frames_) + " frames, less than the " + std::to_string(must) +
                                    " B their copies and scan-out must move across it");
}

void HybridPresent::write_presentmon(Platform& p, Results& r, const std::vector<std::optional<double>>& shown_ns) {
  if (presentmon_path.empty()) return;
  PresentMonWriter out(presentmon_path);
  if (!out.ok()) return out.close(r);
  // Each frame on screen from the vblank start its flip latched at (a vertical blank before its first
  // line), or from its tear (an immediate flip); times from the first frame's start.
  const ScanTiming& dt = display_->timing();
  const double vblank_ns = to_ns(dt.frame_period() - dt.line_period() * double(dt.mode().v_active));
  std::vector<std::optional<double>> shown(frames_ + 2);
  for (uint64_t n = 1; n <= frames_; ++n)
    if (shown_ns[n]) shown[n] = *shown_ns[n] - (st_[n].immediate ? 0.0 : vblank_ns);
  const double t0 = to_ns(st_[1].start),
               dtick = double(p.params.get_int(s_.render.key + ".timestamp_tick_ps")) / 1000.0;
  auto ms = [t0](double ns) { return (ns - t0) / 1e6; };
  std::optional<double> next;
  std::vector<std::optional<double>> next_shown(frames_ + 2);
  for (uint64_t n = frames_; n >= 1; --n) {
    next_shown[n] = next;
    if (shown[n]) next = ms(*shown[n]);
  }
  for (uint64_t n = 1; n <= frames_; ++n) {
    PresentRow row;
    row.application = "hybrid_present.exe";
    row.cpu_start = ms(to_ns(st_[n].start));
    row.present = ms(to_ns(st_[n].present));
    row.present_return = ms(to_ns(st_[n].present_return));
    row.next_cpu_start = n < frames_ ? ms(to_ns(st_[n + 1].start)) : -1;
    const uint64_t a = s_.read_ts(p, n, 0), b = s_.read_ts(p, n, 3);  // render start, copy 1 end
    if (a && b) {
      row.gpu_start = ms(double(a) * dtick), row.gpu_end = ms(double(b) * dtick);
      row.gpu_busy = (double(s_.read_ts(p, n, 1) - a) + double(b - s_.read_ts(p, n, 2))) * dtick / 1e6;
    }
    if (shown[n]) row.displayed = ms(*shown[n]);
    row.next_displayed = next_shown[n];
    out.write(row);
  }
  out.close(r);
}

}  // namespace

ScenarioInfo hybrid_present_scenario() {
  ScenarioInfo info{
      "hybrid_present",
      "one adapter renders, the other scans out (the iGPU by default): present-to-scan-out with one copy (CASO), "
      "two copies or composition",
      [](ParamSet& ps, const std::string& o) {
        ps.declare_int("workload.frames", 120, "frames", 1, 1000000, "A: two seconds at 60 Hz", o);
        ps.declare_real("workload.render_us", 4000, "us", 0, 1e6,
                        "A: 4 ms of 3D-engine work a frame, a light game at 60 Hz", o);
        ps.declare_real("workload.frame_interval_us", 0, "us", 0, 1e7,
                        "A: the app paces itself at the panel's rate: 0 = one refresh of display.mode (16,667 us "
                        "at 60 Hz, 6,944 us at 144 Hz); a value in us sets another pace (the fps metric reports "
                        "the rate the run reached)",
                        o);
        ps.declare_real("workload.start_jitter_us", -1, "us", -1, 1e7,
                        "A: the frame's CPU work before it submits: -1 = up to one frame interval "
                        "(workload.frame_interval_us), so the present's phase to the vblank covers the whole "
                        "period and present_to_scanout is the phase-averaged latency; 0 or more: up to that "
                        "many us",
                        o);
        ps.declare_enum("workload.jitter", "sweep", {"sweep", "random"},
                        "A: sweep = frame n's CPU work is start_jitter_us x (n - 1) / frames (stratified: "
                        "every phase equally represented, no sampling noise); random = uniform, seeded",
                        o);
        ps.declare_enum("present.path", "auto", {"auto", "one_copy", "two_copy", "compose"},
                        "Q: CASO support C5: auto = what the display driver's caps and checks allow", o);
        ps.declare_int_choices("present.sync_interval", 1, "vblanks", {0, 1},
                               "Q: IDXGISwapChain::Present SyncInterval: 1 = the flip waits for the vsync; 0 with "
                               "DXGI_PRESENT_ALLOW_TEARING = an immediate flip (a tear) where the display driver "
                               "declares DXGK_FLIPCAPS FlipImmediateMmio, the latency-optimised app CASO support is "
                               "written for; A: 1, a vsync'd game",
                               o);
        ps.declare_int("present.buffers", 3, "buffers", 2, 8,
                       "A: a flip-model swap chain of three buffers (DXGI allows 2-16)", o);
        ps.declare_int("present.max_frame_latency", 1, "frames", 1, 16,
                       "A: IDXGISwapChain2::SetMaximumFrameLatency(1) with the frame-latency waitable object, "
                       "what a latency-minded game does (DXGI's default is 3): frame n starts only once frame "
                       "n - 1 is on screen, so no present queues behind another; frames_throttled counts the "
                       "frames that waited so (at 1, nearly every frame: the app's pace is the panel's)",
                       o);
        ps.declare_real("present.compose_us", 500, "us", 0, 1e6,
                        "A: DWM's composition pass on the iGPU's 3D engine before its copy", o);
      },
      [](const ParamSet& ps) { return std::make_unique<HybridPresent>(ps); },
      [](const ParamSet& ps) {
        require_hybrid(ps, "hybrid_present", true);
        const bool igpu_renders = ps.get_enum("display.adapter") == "gpu";
        for (const char* a : {"gpu", "igpu"}) {
          const int last = int(ps.get_int(std::string(a) + ".nodes")) - 1;
          const bool renders = (std::string(a) == "igpu") == igpu_renders;
          require_engine_runs(ps, "hybrid_present", a, 0, Op::Compute, "COMPUTE",
                              renders ? "the render" : "DWM's composition");
          require_engine_runs(ps, "hybrid_present", a, last, Op::Copy, "COPY",
                              renders ? "copy 1 on the last node" : "copy 2 on the last node");
          // DWM's composition copies the frame into its surface on the display adapter's node 0: with
          // present.path = compose, and whenever one_copy or auto can fall back to it at present time.
          if (!renders && ps.get_enum("present.path") != "two_copy")
            require_engine_runs(ps, "hybrid_present", a, 0, Op::Copy, "COPY",
                                "DWM's composition copies the frame there with present.path = " +
                                    ps.get_enum("present.path") + "; present.path = two_copy does not");
        }
        // The iGPU's stolen memory holds, beside its page-table memory (vidmm.page_table_mb, at most a
        // quarter of it), a primary and a DWM surface per buffer and a blank one, each a cross-adapter
        // surface's size (pitch to 128 B, rows to 4; from 1 MiB on, 64 KiB aligned): a mode whose
        // surfaces do not fit cannot present. (The driver's own allocations come on top: a size just
        // above this bound may still run out, and the run says so.)
        {
          const DisplayGeometry g = display_geometry(ps);
          const uint64_t pitch = (uint64_t(g.width) * g.bytes_per_pixel + 127) / 128 * 128;
          const uint64_t bytes = pitch * ((uint64_t(g.height) + 3) / 4 * 4);
          const uint64_t surface = bytes < (1u << 20) ? bytes : (bytes + 65535) / 65536 * 65536;  // 64 KiB pages
          // (With display.adapter = gpu the iGPU renders: its stolen memory holds the render targets.)
          const uint64_t buffers = uint64_t(ps.get_int("present.buffers"));
          const uint64_t surfaces = (igpu_renders ? buffers : 2 * buffers + 1) * surface;
          const uint64_t stolen = uint64_t(ps.get_int("igpu.stolen_bytes"));
          const uint64_t tables = std::min<uint64_t>(uint64_t(ps.get_int("vidmm.page_table_mb")) << 20, stolen / 4);
          if (surfaces > stolen - tables)
            throw ConfigError("igpu.stolen_bytes = " + std::to_string(stolen) +
                              " is too small for display.mode = " + ps.get_enum("display.mode") +
                              " with present.buffers = " + std::to_string(ps.get_int("present.buffers")) +
                              (igpu_renders ? ": a render target per buffer of " : ": 2 x buffers + 1 surfaces of ") +
                              std::to_string(surface) + " bytes need at least " + std::to_string(surfaces) +
                              " bytes beside " + std::to_string(tables) +
                              " bytes of page-table memory; allowed: igpu.stolen_bytes above " +
                              std::to_string(surfaces + tables) + ", or fewer buffers");
        }
        // -1 is the one sentinel below 0: a value between is no pace a user could mean.
        if (const double j = ps.get_real("workload.start_jitter_us"); j < 0 && j != -1)
          throw ConfigError("workload.start_jitter_us = " + format_number(j) +
                            " is neither -1 (up to one frame interval) nor a time; allowed: -1, or 0 to 1e7 us");
        // The app's last frame starts by frames x (interval + jitter); allow two refreshes a frame
        // beyond that for the present queue and 100 ms for start-up and the last scan-out.
        const double need_ms = double(ps.get_int("workload.frames")) *
                                   (frame_interval_us(ps) + start_jitter_us(ps) +
                                    2e6 / display_mode(ps.get_enum("display.mode")).refresh_hz()) /
                                   1000.0 +
                               100.0;
        if (ps.get_real("sim.limit_ms") < need_ms)
          throw ConfigError("sim.limit_ms = " + format_number(ps.get_real("sim.limit_ms")) +
                            " is too short for workload.frames = " + std::to_string(ps.get_int("workload.frames")) +
                            " of workload.frame_interval_us = " + format_number(frame_interval_us(ps)) +
                            " + workload.start_jitter_us = " + format_number(start_jitter_us(ps)) +
                            " + two refreshes of display.mode = " + ps.get_enum("display.mode") +
                            ", plus 100 ms; allowed: sim.limit_ms >= " + format_number(std::ceil(need_ms)));
      }};
  info.presents = true;
  return info;
}

namespace {
const ScenarioRegistration kHybridPresentScenario{hybrid_present_scenario, 8};
}  // namespace

}  // namespace gpumodel
