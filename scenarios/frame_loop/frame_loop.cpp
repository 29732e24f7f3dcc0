#include "scenarios/frame_loop/frame_loop.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <random>

#include "hw_model/display/display_timing.h"
#include "hw_model/gpu/regs.h"
#include "kernel_stub/dxgkrnl/engines.h"
#include "platform/energy.h"
#include "scenarios/common/fence_common.h"
#include "scenarios/display/present.h"
#include "scenarios/frame_loop/cpu_jobs.h"

namespace gpumodel {

using sc_core::sc_time;
using sc_core::sc_time_stamp;

struct FrameLoopDriver::Impl {
  Platform* p = nullptr;
  std::unique_ptr<EnergyProbe> energy;  // per frame: the energy between new frames on the panel
  VidSch* dsch = nullptr;               // the render adapter's (workload.adapter)
  Kmd* rkmd = nullptr;
  VidMm* rmm = nullptr;
  const GpuAdapter* radapter = nullptr;
  std::string rkey = "gpu";  // the render adapter's parameter prefix
  Kmd* disp_kmd = nullptr;
  VidSch* disp_sch = nullptr;
  DisplayEngine* display = nullptr;
  // hybrid: the dGPU renders for the iGPU's panel, one copy across the link a frame; igpu: the iGPU renders
  // and presents to its own panel (workload.adapter = igpu), the dGPU idles.
  bool hybrid = false, igpu = false, legacy = false, all_legacy = true, all_native = true;
  uint64_t legacy_signals = 0;
  uint64_t out_of_order = 0;  // frames whose last work on a queue ran before their first (read_stamps)
  std::vector<KmdHwQueue*> hq;
  std::vector<int> node_of;
  std::vector<double> mhz;
  std::vector<PacketWriter> pending;
  std::vector<bool> dirty;
  std::vector<std::pair<NativeFence*, uint64_t>> pending_wait;
  std::vector<int> first_gpu, last_gpu;  // per queue: the frame's first and last GPU step (-1: none)
  std::vector<uint64_t> copy_src, copy_dst;
  std::vector<NativeFence*> fence;
  std::vector<uint64_t> count;
  NativeFence *present_fence = nullptr, *copy_fence = nullptr;
  KmdHwQueue* copy_q = nullptr;
  std::vector<uint64_t> rt;
  std::vector<CrossAdapterSurface> xsurf;
  uint64_t surface_bytes = 0, ts_base = 0;
  static constexpr uint64_t kRing = 256;  // frames of GPU timestamps kept in memory
  std::deque<uint64_t> to_present;
  std::deque<uint64_t> tears_due;  // frames whose immediate flip is programmed and not yet in effect
  CpuJobs jobs;                    // the job threads of CPU steps with "threads" > 1
  KEvent queued_ev, flip_ev, buffer_ev, all_flipped_ev;
  uint64_t flips_done = 0, started = 0, throttled = 0, timeouts = 0;
  sc_time t0, t_end;
  bool running = false;
  struct Snap {
    uint64_t irqs = 0, wakeups = 0, fence_irqs = 0, flip_irqs = 0, unblocks = 0, held = 0;
    TrafficSnapshot traffic;
    std::vector<sc_time> busy;
    std::map<std::string, sc_time> residency;
  } s0, s1;
  // The counters the metrics are differences of: at the first frame's start and at the end.
  void snap(Snap& s) const {
    const Platform& p = *this->p;
    s.irqs = p.cpu.interrupts();
    s.wakeups = p.cpu.wakeups();
    // Interrupts by vector: the fence event ring's (native and monitored fence signals) on either adapter,
    // and the display's flip completions.
    s.fence_irqs =
        p.cpu.interrupts_of(p.kmd.msi_data_base() + regs::kFenceEventVector) +
        (p.igpu_driver ? p.cpu.interrupts_of(p.igpu_driver->kmd.msi_data_base() + regs::kFenceEventVector) : 0);
    s.flip_irqs = p.cpu.interrupts_of(disp_kmd->msi_data_base() + Kmd::kDisplayFlipVector);
    s.unblocks = radapter->cmp.gpu_unblocks();
    s.held = dsch->held_released();
    s.busy.clear();
    for (auto& n : radapter->nodes) s.busy.push_back(n->busy_time());
    s.residency = p.cpu.residency();
    s.traffic = TrafficSnapshot::take(p, display);
  }
  uint64_t ts(uint64_t n, size_t q, int k) const { return ts_base + (((n % kRing) * hq.size() + q) * 2 + k) * 8; }
};

void declare_frame_loop_params(ParamSet& ps, const std::string& o) {
  declare_fence_params(ps, o);
  ps.declare_enum("workload.adapter", "gpu", {"gpu", "igpu"},
                  "Q: the adapter that renders the workload: gpu, the discrete GPU (a game; on the hybrid "
                  "platform its frames are copied to the iGPU's panel); igpu, the integrated GPU, which renders "
                  "and presents to its own panel while the dGPU idles (Windows' graphics preference 'Power "
                  "saving', which the desktop and video playback use on a hybrid laptop); igpu needs "
                  "platform.topology = hybrid",
                  o);
  ps.declare_int("workload.frames", 0, "frames", 0, 1000000,
                 "A: 0 = the workload file's own frame count (a replay: every replayable present of the capture); "
                 "N = run N frames (a replay: the first N); at most 1,000,000 (4.6 h at 60 fps): the run keeps "
                 "about 100 bytes a frame for its percentiles and PresentMon rows. A run whose last frame cannot "
                 "start within sim.limit_ms (at most 2.8 h) is refused before it starts, naming the limit or the "
                 "frame count that fits",
                 o);
}

void validate_frame_loop(const ParamSet& ps, const Workload& w, const std::string& scenario) {
  CpuJobs::validate(ps, w);
  const bool on_igpu = ps.get_enum("workload.adapter") == "igpu";
  const bool hybrid = Platform::topology_of(ps) == Topology::Hybrid && !on_igpu;
  if (on_igpu) {
    if (Platform::topology_of(ps) != Topology::Hybrid)
      throw ConfigError("workload.adapter = igpu: scenario '" + scenario +
                        "' renders on the integrated GPU, which only platform.topology = hybrid has; allowed: "
                        "workload.adapter = gpu, or platform.topology = hybrid");
    const std::string& da = ps.get_enum("display.adapter");
    if (da != "auto" && da != "igpu")
      throw ConfigError("workload.adapter = igpu with display.adapter = " + da + ": scenario '" + scenario +
                        "' presents on the iGPU's own panel; allowed: display.adapter = auto or igpu");
  } else if (hybrid) {
    const std::string& da = ps.get_enum("display.adapter");
    if (da != "auto" && da != "igpu")
      throw ConfigError("platform.topology = hybrid with display.adapter = " + da + ": scenario '" + scenario +
                        "' presents on the hybrid laptop's panel, which the iGPU drives; allowed: display.adapter = "
                        "auto or igpu with platform.topology = hybrid, or platform.topology = dgpu");
    require_hybrid(ps, scenario);
  } else if (ps.get_enum("display.adapter") != "gpu") {
    throw ConfigError("display.adapter = " + ps.get_enum("display.adapter") + ": scenario '" + scenario +
                      "' presents on the dGPU's display on platform.topology = dgpu; allowed: display.adapter = gpu");
  }
  const std::string rk = on_igpu ? "igpu" : "gpu", rname = on_igpu ? "iGPU" : "dGPU";
  const int nodes = int(ps.get_int(rk + ".nodes"));
  auto has = [&](EngineKind k) {
    for (int n = 0; n < nodes; ++n)
      if (engine_kind(ps, rk, n, nodes) == k) return true;
    return false;
  };
  for (const WorkloadQueue& q : w.queues)
    if (!has(q.engine))
      throw ConfigError("workload.file '" + w.file + "': queue '" + q.name + "' runs on a " + to_string(q.engine) +
                        " engine and the " + rname + " (workload.adapter = " + rk + ") has none (" + rk +
                        ".nodes = " + std::to_string(nodes) +
                        (ps.get_enum("node.kind") != "auto"
                             ? ", node.kind = " + ps.get_enum("node.kind") + " for every node without its own kind"
                             : std::string()) +
                        "); allowed: name one with " + rk + ".nodeN.kind = " + to_string(q.engine));
  if (hybrid && !has(EngineKind::Copy))
    throw ConfigError("scenario '" + scenario +
                      "' on platform.topology = hybrid with workload.adapter = gpu copies each frame on the dGPU's "
                      "copy engine and it has none; allowed: gpu.nodeN.kind = copy for one node, or workload.adapter = "
                      "igpu (the iGPU renders on its own panel)");
  // A paced app starts frame n at (n - 1) / fps: the last one must start within the limit.
  const uint64_t frames = ps.get_int("workload.frames") > 0 ? uint64_t(ps.get_int("workload.frames")) : w.frames;
  // After it: its flip at a vblank and the two refreshes the loop shows it for (three refreshes), and the
  // set-up before the first frame: 50.3 ms at 60 Hz on each shipped workload file (3 frames: simulated
  // 83.6 ms, the last frame starting at 33.3 ms), so three refreshes and 10 ms.
  const double refresh_ms = 1000.0 / display_mode(ps.get_enum("display.mode")).refresh_hz();
  if (w.fps > 0)
    require_time_for_frames(ps, double(frames - 1) * 1000.0 / w.fps, 3 * refresh_ms + 10,
                            "workload.frames = " + std::to_string(frames) + " at " + format_number(w.fps) + " fps",
                            "three refreshes at display.mode = " + ps.get_enum("display.mode") + ", and 10 ms",
                            [&](double budget_ms) {
                              return budget_ms < 0 ? uint64_t(0) : uint64_t(std::floor(budget_ms * w.fps / 1000.0)) + 1;
                            });
  const size_t need = w.queues.size() + (hybrid ? 1 : 0);
  if (size_t(ps.get_int(rk + ".hw_queues")) < need)
    throw ConfigError(rk + ".hw_queues = " + std::to_string(ps.get_int(rk + ".hw_queues")) + " is too few: scenario '" +
                      scenario + "' uses " + std::to_string(need) +
                      " HW queues (the workload's, and the present copy on the hybrid platform); allowed: " + rk +
                      ".hw_queues >= " + std::to_string(need));
}

void require_time_for_frames(const ParamSet& ps, double last_start_ms, double tail_ms, const std::string& what,
                             const std::string& tail_what, const std::function<uint64_t(double)>& frames_within) {
  const double limit = ps.get_real("sim.limit_ms"), need = std::ceil(last_start_ms + tail_ms);
  if (limit >= need) return;
  const double most = ps.spec("sim.limit_ms").max;
  const uint64_t fit = frames_within(limit - tail_ms);
  throw ConfigError(
      "sim.limit_ms = " + format_number(limit) + " is too short for " + what + ": the last frame starts " +
      format_number(last_start_ms) + " ms after the first, and the set-up and its way to the panel (" + tail_what +
      ") take " + format_number(std::ceil(tail_ms)) +
      " ms more; allowed: " + (need <= most ? "sim.limit_ms >= " + format_number(need) + ", or " : std::string()) +
      "workload.frames <= " + std::to_string(fit) + " at sim.limit_ms = " + format_number(limit) +
      (need > most ? " (sim.limit_ms is at most " + format_number(most) + ")" : std::string()));
}

FrameLoopDriver::FrameLoopDriver(const ParamSet& ps, Workload w) : ps_(ps), w_(std::move(w)), impl_(new Impl) {
  if (ps.get_int("workload.frames") > 0) w_.frames = uint64_t(ps.get_int("workload.frames"));
  impl_->legacy = legacy_fence_kind(ps);
  impl_->igpu = ps.get_enum("workload.adapter") == "igpu";
  impl_->hybrid = Platform::topology_of(ps) == Topology::Hybrid && !impl_->igpu;
  impl_->rkey = impl_->igpu ? "igpu" : "gpu";
}

sc_time FrameLoopDriver::t0() const { return impl_->t0; }

std::string FrameLoopDriver::progress(const Platform&) const {
  return "frame " + std::to_string(impl_->flips_done) + " of " + std::to_string(w_.frames) + " on screen";
}

namespace {

struct Loop {
  FrameLoopDriver& d;
  FrameLoopDriver::Impl& m;
  const Workload& w;
  const ParamSet& ps;
  std::vector<FrameTimes>& ft;
  Results& r;
  std::mt19937_64 rng;

  double jitter(double base, double j) {
    if (j <= 0) return base;
    return std::max(0.0, base + std::uniform_real_distribution<double>(-j, j)(rng));
  }
  void flush(size_t q) {
    if (!m.dirty[q] && !m.pending_wait[q].first) return;
    if (m.pending_wait[q].first)
      m.dsch->SubmitAfterWait(m.hq[q], m.pending_wait[q].first, m.pending_wait[q].second, m.pending[q]);
    else
      m.dsch->SubmitInOrder(m.hq[q], m.pending[q]);
    m.pending[q] = PacketWriter();
    m.dirty[q] = false;
    m.pending_wait[q] = {nullptr, 0};
  }
  void flush_all() {
    for (size_t q = 0; q < m.hq.size(); ++q) flush(q);
  }
  bool setup();
  void frame(uint64_t n);
  void read_stamps(uint64_t n);
};

bool Loop::setup() {
  Platform& p = *m.p;
  if (m.hybrid) {
    PresentSetup s;
    if (!start_hybrid(p, r, s)) return false;
    m.disp_kmd = &p.igpu_driver->kmd;
    m.disp_sch = &p.igpu_driver->vidsch;
    m.display = p.igpu->display.get();
  } else if (m.igpu) {
    // The OS starts both adapters at boot; the app's device is on the iGPU, the dGPU idles.
    const AdapterStart is = DxgkrnlStartAdapter(p.igpu_driver->kmd, "iGPU"), ds = DxgkrnlStartAdapter(p.kmd, "dGPU");
    if (!r.check(is.started, is.reason) || !r.check(ds.started, ds.reason)) return false;
    report_conformance(r, {{"iGPU", &is}, {"dGPU", &ds}});
    m.disp_kmd = &p.igpu_driver->kmd;
    m.disp_sch = &p.igpu_driver->vidsch;
    m.display = p.igpu->display.get();
  } else {
    if (!start_adapter(p, r)) return false;
    m.disp_kmd = &p.kmd;
    m.disp_sch = &p.vidsch;
    m.display = p.gpu.display.get();
  }
  EngineDirectory dir(*m.rkmd);
  for (const WorkloadQueue& q : w.queues) {
    const int node = dir.node(q.engine, 0);
    KmdHwQueue* h = node < 0 ? nullptr : m.dsch->CreateHwQueue(node, 0, 0, 1);
    if (!r.check(h != nullptr, "no HW queue for '" + q.name + "'")) return false;
    m.hq.push_back(h);
    m.node_of.push_back(node);
    m.mhz.push_back(ps.get_real(m.rkey + ".node" + std::to_string(node), m.rkey + ".engine_clock_mhz"));
  }
  const size_t nq = m.hq.size();
  m.pending.assign(nq, PacketWriter());
  m.dirty.assign(nq, false);
  m.pending_wait.assign(nq, {nullptr, 0});
  m.first_gpu.assign(nq, -1);
  m.last_gpu.assign(nq, -1);
  std::vector<uint64_t> max_bytes(nq, 0);
  for (size_t i = 0; i < w.frame.size(); ++i) {
    const WorkloadStep& st = w.frame[i];
    if (st.kind != WorkloadStep::Kind::Gpu) continue;
    const size_t q = size_t(st.queue);
    if (m.first_gpu[q] < 0) m.first_gpu[q] = int(i);
    m.last_gpu[q] = int(i);
    max_bytes[q] = std::max(max_bytes[q], st.bytes);
  }
  for (size_t q = 0; q < nq; ++q) {  // a COPY step uploads: system memory to local memory
    m.copy_src.push_back(max_bytes[q] ? m.rmm->allocate(Segment::System, max_bytes[q]) : 0);
    m.copy_dst.push_back(max_bytes[q] ? m.rmm->allocate(Segment::Local, max_bytes[q]) : 0);
  }
  // Each fence's kind: the file's, unless the user set fence.kind (one sweep switches every fence). The
  // swap chain's own fences follow fence.kind.
  for (const WorkloadFence& f : w.fences) {
    const bool legacy = f.kind.empty() || ps.was_set("fence.kind") ? m.legacy : f.kind == "legacy";
    m.fence.push_back(
        m.dsch->CreateNativeFence(1, f.storage == "local" ? Segment::Local : Segment::System, false, legacy));
    m.legacy_signals += legacy ? uint64_t(f.signals_per_frame) : 0;
    m.all_legacy = m.all_legacy && legacy;
    m.all_native = m.all_native && !legacy;
  }
  m.legacy_signals += m.legacy ? (m.hybrid ? 2 : 1) : 0;  // the present fence, and the present copy's
  m.all_legacy = m.all_legacy && m.legacy;
  m.all_native = m.all_native && !m.legacy;
  m.count.assign(m.fence.size(), 0);
  m.present_fence = m.dsch->CreateNativeFence(1, Segment::System, false, m.legacy);
  for (NativeFence* f : m.fence)
    if (!r.check(f != nullptr, "fence creation failed")) return false;
  if (!r.check(m.present_fence != nullptr, "fence creation failed")) return false;
  const DisplayGeometry g = display_geometry(ps);
  for (int b = 0; b < w.buffers; ++b) {
    m.xsurf.push_back(m.rmm->allocate_cross_adapter(g.width, g.height, g.bytes_per_pixel));
    m.surface_bytes = m.xsurf.back().bytes();
    m.rt.push_back(m.rmm->allocate(Segment::Local, m.surface_bytes));
  }
  const DisplayMode dm = display_mode(ps.get_enum("display.mode"));
  // A capture's refresh on the mode's raster: the VidPN pixel clock, which kPixelClock holds in 32 bits.
  const double clock_hz = d.refresh_hz > 0 ? double(dm.h_total()) * double(dm.v_total()) * d.refresh_hz : 0;
  if (!r.check(clock_hz <= 4294967295.0,
               "a " + format_number(d.refresh_hz) + " Hz refresh on display.mode = " + dm.name + "'s raster needs a " +
                   format_number(clock_hz / 1e6) + " MHz pixel clock, above the 32-bit kPixelClock register's"))
    return false;
  const uint32_t clock = uint32_t(std::llround(clock_hz));
  if (m.hybrid) {
    m.copy_q = p.vidsch.CreateHwQueue(dir.node(EngineKind::Copy, 0), 0, 0, 1);
    m.copy_fence = p.vidsch.CreateNativeFence(1, Segment::System, false, m.legacy);
    if (!r.check(m.copy_q && m.copy_fence, "the present copy's queue or fence could not be created")) return false;
    m.disp_kmd->DxgkDdiCommitVidPn(m.xsurf[0].pitch, p.igpu_driver->vidmm.allocate(Segment::Local, m.surface_bytes),
                                   clock);
  } else {
    m.disp_kmd->DxgkDdiCommitVidPn(m.xsurf[0].pitch, m.rmm->allocate(Segment::Local, m.surface_bytes), clock);
  }
  m.ts_base = m.rmm->allocate(Segment::System, FrameLoopDriver::Impl::kRing * nq * 16);
  return true;
}

void Loop::read_stamps(uint64_t n) {
  // The frame's GPU span on each queue it used (TIMESTAMPs in a ring of kRing frames: read before reuse).
  const double tick = double(ps.get_int(m.rkey + ".timestamp_tick_ps")) / 1000.0;
  std::vector<std::pair<double, double>> spans, video;
  for (size_t q = 0; q < m.hq.size(); ++q) {
    if (m.first_gpu[q] < 0) continue;
    const uint64_t a = m.p->sysmem.peek64(m.ts(n, q, 0)), b = m.p->sysmem.peek64(m.ts(n, q, 1));
    // Not yet run (a run cut short), or still frame n - kRing's stamps: no span.
    if (!a || !b || double(a) * tick < ft[n].cpu_start || double(b) * tick < ft[n].cpu_start) continue;
    if (b < a) {  // the queue's last work of the frame ran before its first: the queue ran out of order
      ++m.out_of_order;
      continue;
    }
    spans.push_back({double(a) * tick, double(b) * tick});
    if (w.queues[q].engine == EngineKind::Video) video.push_back(spans.back());
  }
  auto union_len = [](std::vector<std::pair<double, double>> v) {
    std::sort(v.begin(), v.end());
    double len = 0, end = -1;
    for (auto& [a, b] : v) {
      if (a > end)
        len += b - a, end = b;
      else if (b > end)
        len += b - end, end = b;
    }
    return len;
  };
  if (spans.empty()) return;
  FrameTimes& f = ft[n];
  f.gpu_start = spans[0].first, f.gpu_end = spans[0].second;
  for (auto& s : spans) f.gpu_start = std::min(*f.gpu_start, s.first), f.gpu_end = std::max(*f.gpu_end, s.second);
  f.gpu_busy = union_len(spans);
  f.video_busy = union_len(video);
}

void Loop::frame(uint64_t n) {
  Platform& p = *m.p;
  const FrameLoopDriver::FrameOverride* o = n - 1 < d.overrides.size() ? &d.overrides[size_t(n - 1)] : nullptr;
  // Pace: the app's own rate, or the captured start.
  sc_time due = sc_time_stamp();
  if (o && o->start_ms >= 0)
    due = m.t0 + sc_time(o->start_ms, sc_core::SC_MS);
  else if (w.fps > 0)
    due = m.t0 + sc_time(double(n - 1) / w.fps, sc_core::SC_SEC);
  if (due > sc_time_stamp()) p.cpu.sleep(due - sc_time_stamp());
  // The swap chain: at most max_frame_latency frames presented and not on screen, and a free buffer.
  const uint64_t B = uint64_t(w.buffers), L = uint64_t(w.max_frame_latency);
  const uint64_t need = std::max<uint64_t>(n > B ? n - B + 1 : 0, n > L ? n - L : 0);
  auto throttle = [&] {
    if (m.flips_done < need) ++m.throttled;
    while (m.flips_done < need) p.cpu.wait_for(m.buffer_ev);
  };
  if (!d.throttle_in_present) throttle();
  if (n > FrameLoopDriver::Impl::kRing / 2) read_stamps(n - FrameLoopDriver::Impl::kRing / 2);
  ft[n].cpu_start = to_ns(sc_time_stamp());
  m.started = n;
  for (size_t i = 0; i < w.frame.size(); ++i) {
    const WorkloadStep& st = w.frame[i];
    const size_t q = size_t(std::max(st.queue, 0));
    switch (st.kind) {
      case WorkloadStep::Kind::Cpu: {
        if (o && o->cpu_us >= 0) {
          if (o->cpu_us > 0) p.cpu.work(sc_time(o->cpu_us, sc_core::SC_US));
          break;
        }
        if (st.threads == 1) {
          if (const double us = jitter(st.us, st.jitter_us); us > 0) p.cpu.work(sc_time(us, sc_core::SC_US));
          break;
        }
        std::vector<double> us(st.threads);
        for (double& u : us) u = jitter(st.us, st.jitter_us);
        m.jobs.run(p.cpu, us);
        break;
      }
      case WorkloadStep::Kind::Gpu: {
        PacketWriter& pw = m.pending[q];
        if (int(i) == m.first_gpu[q]) pw.timestamp(m.ts(n, q, 0));
        if (st.bytes)
          pw.copy(m.copy_src[q], m.copy_dst[q], st.bytes);
        else {
          const double us = o && o->gpu_us >= 0 ? o->gpu_us : jitter(st.us, st.jitter_us);
          pw.compute(st.cycles ? st.cycles : uint64_t(us * m.mhz[q]));
        }
        if (int(i) == m.last_gpu[q]) pw.timestamp(m.ts(n, q, 1));
        m.dirty[q] = true;
        break;
      }
      case WorkloadStep::Kind::Signal: {
        const size_t f = size_t(st.fence);
        VidSch::gpu_signal(m.pending[q], *m.fence[f], ++m.count[f], 1);
        m.dirty[q] = true;
        flush(q);
        break;
      }
      case WorkloadStep::Kind::Wait:
        flush(q);
        m.pending_wait[q] = {m.fence[size_t(st.fence)], m.count[size_t(st.fence)]};
        break;
      case WorkloadStep::Kind::CpuWait: {
        const size_t f = size_t(st.fence);
        const int64_t v = int64_t(m.count[f]) - int64_t(st.frames_back) * w.fences[f].signals_per_frame;
        if (v <= 0) break;
        flush_all();  // the UMD flushes before the CPU waits
        const sc_time timeout = st.timeout_ms > 0 ? sc_time(st.timeout_ms, sc_core::SC_MS) : sc_core::sc_max_time();
        if (!m.dsch->WaitFromCpu(m.fence[f], uint64_t(v), timeout)) ++m.timeouts;
        break;
      }
      case WorkloadStep::Kind::Present: {
        ft[n].present = to_ns(sc_time_stamp());
        if (d.throttle_in_present) throttle();  // Present() blocks while the queue is full
        const unsigned b = unsigned(n % B);
        m.pending[q].write64(m.rt[b], n).barrier();
        VidSch::gpu_signal(m.pending[q], *m.present_fence, n, 1);
        m.dirty[q] = true;
        flush_all();
        if (m.hybrid) {  // one copy: the dGPU's copy engine, after the render on the GPU
          PacketWriter c;
          c.copy(m.rt[b], m.xsurf[b].address, m.surface_bytes).barrier();
          VidSch::gpu_signal(c, *m.copy_fence, n, 1);
          m.dsch->SubmitAfterWait(m.copy_q, m.present_fence, n, c);
        }
        m.to_present.push_back(n);
        p.cpu.signal(m.queued_ev);
        ft[n].present_return = to_ns(sc_time_stamp());
        break;
      }
    }
  }
}

}  // namespace

void FrameLoopDriver::build(Platform& p, Results& r) {
  Impl& m = *impl_;
  m.p = &p;
  m.dsch = m.igpu ? &p.igpu_driver->vidsch : &p.vidsch;
  m.rkmd = m.igpu ? &p.igpu_driver->kmd : &p.kmd;
  m.rmm = m.igpu ? &p.igpu_driver->vidmm : &p.vidmm;
  m.radapter = m.igpu ? p.igpu : &p.gpu;
  ft_.assign(w_.frames + 1, FrameTimes{});
  m.energy = std::make_unique<EnergyProbe>(p, p.vcd);
  p.cpu.spawn_thread("app", [this, &p, &r] {
    Impl& m = *impl_;
    auto loop = std::make_shared<Loop>(Loop{*this, m, w_, ps_, ft_, r, std::mt19937_64(p.rng())});
    if (!loop->setup()) return;
    unsigned most = 1;
    for (const WorkloadStep& st : w_.frame) most = std::max(most, st.threads);
    m.jobs.start(p.cpu, most - 1);
    const ScanTiming& tm = m.display->timing();
    refresh_ms_ = to_ns(tm.frame_period()) / 1e6;
    const double vblank_ns = to_ns(tm.frame_period() - tm.line_period() * double(tm.mode().v_active));
    m.display->on_frame = [this, vblank_ns](const DisplayEngine::FrameRecord& f) {
      // The number the frame's back buffer carries, read by the scan-out: the frame is on screen since
      // the vblank start its flip latched at, a vertical blank before this first line.
      if (f.first_qword >= 1 && f.first_qword < ft_.size() && !ft_[f.first_qword].displayed) {
        ft_[f.first_qword].displayed = to_ns(f.first_line_time) - vblank_ns;
        impl_->energy->frame();
      }
    };
    // An immediate flip takes effect with the scan-out's next request; the present thread programs a flip
    // only once the previous one completed, so the k-th tear is the k-th immediate flip programmed.
    m.display->on_tear = [this](const DisplayEngine::TearRecord& t) {
      Impl& m = *impl_;
      if (m.tears_due.empty()) return;
      const uint64_t n = m.tears_due.front();
      m.tears_due.pop_front();
      ft_[n].displayed = to_ns(t.time);
      m.energy->frame();
    };
    p.cpu.spawn_thread("present", [this, &p, &r, loop] {
      Impl& m = *impl_;
      NativeFence* last = m.hybrid ? m.copy_fence : m.present_fence;
      for (;;) {
        while (m.to_present.empty()) p.cpu.wait_for(m.queued_ev);
        const uint64_t n = m.to_present.front();
        m.to_present.pop_front();
        if (!r.check(m.dsch->WaitFromCpu(last, n), "the present fence wait failed")) return;
        // The flip register holds one pending flip: the next waits for the previous to latch.
        while (m.flips_done < n - 1) p.cpu.wait_for(m.flip_ev);
        ft_[n].flip_programmed = to_ns(sc_time_stamp());
        const unsigned b = unsigned(n % uint64_t(w_.buffers));
        const bool ask = n - 1 < overrides.size() && overrides[size_t(n - 1)].immediate;
        if (ask) m.tears_due.push_back(n);
        ft_[n].immediate = m.disp_kmd->DxgkDdiSetVidPnSourceAddress(m.hybrid ? m.xsurf[b].address : m.rt[b], ask);
        if (ask && !ft_[n].immediate) m.tears_due.pop_back();  // the driver flips it at a vblank
      }
    });
    p.cpu.spawn_thread("flip_listener", [this, &p] {
      Impl& m = *impl_;
      KEvent& done = m.disp_sch->interrupt_event(Kmd::kDisplayFlipVector);
      for (;;) {
        p.cpu.wait_for(done);
        ++m.flips_done;
        p.cpu.signal(m.buffer_ev);
        p.cpu.signal(m.flip_ev);
        if (m.flips_done == w_.frames) p.cpu.signal(m.all_flipped_ev);
      }
    });
    if (choose_t0) {
      const sc_time t = choose_t0(sc_time_stamp(), *m.display);
      if (t > sc_time_stamp()) p.cpu.sleep(t - sc_time_stamp());
    }
    m.t0 = sc_time_stamp();
    m.snap(m.s0);
    m.running = true;
    for (uint64_t n = 1; n <= w_.frames; ++n) loop->frame(n);
    while (m.flips_done < w_.frames) p.cpu.wait_for(m.all_flipped_ev);
    m.t_end = sc_time_stamp();
    m.snap(m.s1);
    for (uint64_t n = w_.frames > FrameLoopDriver::Impl::kRing / 2 ? w_.frames - FrameLoopDriver::Impl::kRing / 2 + 1
                                                                   : 1;
         n <= w_.frames; ++n)
      loop->read_stamps(n);
    // Let the last frame reach the panel, then turn the source off so the run ends.
    p.cpu.sleep(m.display->timing().frame_period() * 2.0);
    m.disp_kmd->DxgkDdiSetVidPnSourceVisibility(false);
  });
}

void FrameLoopDriver::finish(Platform&, Results& r) {
  Impl& m = *impl_;
  if (!m.running) return;
  const uint64_t N = w_.frames;
  const bool complete = m.flips_done >= N;
  if (!complete) {  // a run cut short: measure up to now
    m.t_end = sc_time_stamp();
    m.snap(m.s1);
  }
  // Frames reach the panel in present order, each after its flip was programmed. Counts are of what
  // happened (a run cut by sim.limit_ms presented fewer than workload.frames asked for).
  std::vector<double> frame_time, p2d, cpu_busy, gpu_time;
  uint64_t presented = 0, displayed = 0, last_shown = 0;
  for (uint64_t n = 1; n <= N; ++n) {
    const FrameTimes& f = ft_[n];
    presented += f.present > 0;
    if (n > 1 && f.present > 0 && ft_[n - 1].present > 0) frame_time.push_back((f.present - ft_[n - 1].present) / 1e6);
    if (f.present > 0) cpu_busy.push_back((f.present - f.cpu_start) / 1e6);
    if (f.gpu_start && f.gpu_end) gpu_time.push_back((*f.gpu_end - *f.gpu_start) / 1e6);
    if (!f.displayed) continue;
    ++displayed;
    r.check(n > last_shown,
            "frame " + std::to_string(n) + " reached the panel after frame " + std::to_string(last_shown));
    // present -> display is the present thread's part (present -> flip programmed) plus the flip's wait for
    // the next vblank start, which is less than one refresh: a frame later than that was not latched at
    // the first vblank its flip could make.
    r.check(*f.displayed > f.flip_programmed, "frame " + std::to_string(n) + " was on screen before its flip");
    r.check(*f.displayed - f.flip_programmed <= refresh_ms_ * 1e6,
            "frame " + std::to_string(n) + " was latched more than a refresh after its flip was programmed");
    last_shown = std::max(last_shown, n);
    p2d.push_back((*f.displayed - f.present) / 1e6);
  }
  // A presented frame never on screen was dropped when a later frame reached the panel before it could;
  // one still waiting when the run was cut is pending (none in a run that ended on its own).
  uint64_t dropped = 0;
  for (uint64_t n = 1; n < last_shown; ++n) dropped += ft_[n].present > 0 && !ft_[n].displayed;
  const uint64_t pending = presented - displayed - dropped;
  // Rates are over the simulated time that ran, from the first frame's start.
  const double seconds = (m.t_end - m.t0).to_seconds();
  r.metric("workload", w_.name);
  r.metric("fence_kind", m.legacy ? "legacy" : "native");
  r.metric("frames_requested", N);
  r.metric("frames_presented", presented);
  r.metric("frames_displayed", displayed);
  r.metric("frames_dropped", dropped);
  r.metric("frames_pending", pending);
  r.metric("energy_per_frame_mj", m.energy->summary());
  r.metric("fps", seconds > 0 ? double(presented) / seconds : 0.0);
  r.metric("frame_time_ms", summary(frame_time));
  r.metric("present_to_display_ms", summary(p2d));
  r.metric("cpu_busy_ms", summary(cpu_busy));
  r.metric("gpu_time_ms", summary(gpu_time));
  r.metric("frames_throttled", m.throttled);
  r.metric("cpu_wait_timeouts", m.timeouts);
  nlohmann::ordered_json busy = nlohmann::ordered_json::object();
  for (size_t i = 0; i < m.radapter->nodes.size() && i < m.s1.busy.size(); ++i)
    busy[m.radapter->nodes[i]->label()] =
        seconds > 0 ? 100.0 * (m.s1.busy[i] - m.s0.busy[i]).to_seconds() / seconds : 0.0;
  r.metric("engine_busy_pct", busy);
  const double irqs = double(m.s1.irqs - m.s0.irqs), fence_irqs = double(m.s1.fence_irqs - m.s0.fence_irqs);
  const double flips = double(m.s1.flip_irqs - m.s0.flip_irqs);
  r.metric("cpu_interrupts_per_s", seconds > 0 ? irqs / seconds : 0.0);
  nlohmann::ordered_json causes;
  causes["fence"] = seconds > 0 ? fence_irqs / seconds : 0.0;
  causes["display_flip"] = seconds > 0 ? flips / seconds : 0.0;
  causes["other"] = seconds > 0 ? (irqs - fence_irqs - flips) / seconds : 0.0;
  r.metric("cpu_interrupt_causes_per_s", causes);
  nlohmann::ordered_json counts;
  counts["total"] = uint64_t(irqs), counts["fence"] = uint64_t(fence_irqs), counts["display_flip"] = uint64_t(flips);
  r.metric("cpu_interrupts", counts);
  r.metric("cpu_wakeups", m.s1.wakeups - m.s0.wakeups);
  r.metric("cpu_wakeups_per_s", seconds > 0 ? double(m.s1.wakeups - m.s0.wakeups) / seconds : 0.0);
  nlohmann::ordered_json idle = nlohmann::ordered_json::object();
  for (const char* st : {"C1", "C1E", "C3", "C6"}) {
    auto a = m.s1.residency.find(st), b = m.s0.residency.find(st);
    const sc_time t = (a == m.s1.residency.end() ? sc_core::SC_ZERO_TIME : a->second) -
                      (b == m.s0.residency.end() ? sc_core::SC_ZERO_TIME : b->second);
    idle[st] = seconds > 0 ? t.to_seconds() / seconds : 0.0;
  }
  r.metric("cpu_idle_residency", idle);
  const uint64_t unblocks = m.s1.unblocks - m.s0.unblocks, held = m.s1.held - m.s0.held;
  nlohmann::ordered_json waits;
  waits["per_frame"] = w_.gpu_waits + (m.hybrid ? 1 : 0);
  waits["unblocked_on_gpu"] = unblocks;
  waits["cpu_round_trips"] = held;
  r.metric("gpu_waits", waits);
  const TrafficSnapshot t = m.s1.traffic - m.s0.traffic;
  const double per_frame = double(std::max<uint64_t>(presented, 1));
  r.metric("link_bytes_per_frame", double(t.link_bytes) / per_frame);
  r.metric("sysmem_bytes_per_frame", double(t.sysmem_bytes) / per_frame);
  frame_events(r, ft_);
  if (!complete) return;
  if (expect_all_displayed)
    r.check(displayed == N, std::to_string(N - displayed) + " presented frame(s) never reached the panel");
  // The fence kind's promise, checked on the counts (F5): a monitored fence's every GPU signal raises an interrupt (the
  // workload's signals and the present fence's, and the present copy's on the hybrid platform), and none of its GPU
  // waits is resolved on the GPU; a native fence interrupts only for a CPU waiter: at most one per CPU wait of the
  // frame and one for the present thread's wait, and no GPU wait makes a CPU round trip.
  const uint64_t legacy_signals = N * m.legacy_signals, cpu_waits = N * uint64_t(w_.cpu_waits + 1);
  if (m.all_legacy) {
    r.check(fence_irqs == double(legacy_signals), "legacy fences: " + format_number(fence_irqs) +
                                                      " fence interrupts for " + std::to_string(legacy_signals) +
                                                      " GPU signals; every signal interrupts");
    r.check(unblocks == 0, "legacy fences: a GPU wait was resolved on the GPU");
  } else {
    r.check(fence_irqs >= double(legacy_signals) && fence_irqs <= double(legacy_signals + cpu_waits),
            format_number(fence_irqs) + " fence interrupts: not one per monitored fence signal (" +
                std::to_string(legacy_signals) + ") and at most one per CPU wait (" + std::to_string(cpu_waits) + ")");
  }
  r.check(m.out_of_order == 0, std::to_string(m.out_of_order) +
                                   " time(s) a queue ran a frame's last work before its first: a queue runs in order");
  if (m.all_native) r.check(held == 0, "native fences: a GPU wait made a CPU round trip");
  write_presentmon(r);
}

void FrameLoopDriver::write_presentmon(Results& r) {
  Impl& m = *impl_;
  const uint64_t N = w_.frames;
  if (presentmon_path.empty()) return;
  PresentMonWriter out(presentmon_path);
  if (!out.ok()) return out.close(r);
  const double t0 = to_ns(m.t0);
  auto rel = [t0](double ns) { return (ns - t0) / 1e6; };
  auto rel_opt = [&](const std::optional<double>& v) { return v ? std::optional<double>(rel(*v)) : std::nullopt; };
  std::optional<double> next_disp;
  std::vector<std::optional<double>> next_displayed(N + 2);
  for (uint64_t n = N; n >= 1; --n) {  // each displayed frame's successor on screen
    next_displayed[n] = next_disp;
    if (ft_[n].displayed) next_disp = rel(*ft_[n].displayed);
  }
  for (uint64_t n = 1; n <= N; ++n) {
    const FrameTimes& f = ft_[n];
    PresentRow row;
    row.application = application;
    row.process_id = process_id, row.swap_chain = swap_chain;
    row.present_mode = "Hardware: Legacy Flip";
    row.sync_interval = f.immediate ? 0 : 1;
    row.allows_tearing = f.immediate;
    row.cpu_start = rel(f.cpu_start);
    row.present = rel(f.present);
    row.present_return = rel(f.present_return);
    row.next_cpu_start = n < N ? rel(ft_[n + 1].cpu_start) : -1;
    row.gpu_start = rel_opt(f.gpu_start);
    row.gpu_end = rel_opt(f.gpu_end);
    if (f.gpu_busy) row.gpu_busy = *f.gpu_busy / 1e6;
    if (f.video_busy) row.video_busy = *f.video_busy / 1e6;
    row.displayed = rel_opt(f.displayed);
    row.next_displayed = next_displayed[n];
    out.write(row);
  }
  out.close(r);
}

}  // namespace gpumodel
