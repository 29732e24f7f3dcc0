// scanout_underflow (CASO support: C6): does scan-out from system memory across the link keep up with the
// refresh while the link is loaded? The dGPU's display engine (display.adapter = gpu) scans a
// cross-adapter surface in system memory, so every scan-out request crosses the link: the request up,
// the completion with its pixels down. Meanwhile the dGPU's copy engine runs bulk copies over the same
// link (workload.bulk_direction: h2d = system memory -> VRAM, whose completions share the down direction
// with the display's; d2h = VRAM -> system memory, whose posted writes the display's read requests queue
// behind). display.fifo_bytes is the knob; workload.copy_nodes puts copies on more engines than the copy
// engine (a 3D or compute engine copying too), the load a budget of the copy engines alone does not see.
//
// The surface goes through the swap chain's path choice (C5), as any cross-adapter scan-out does: the
// dGPU's driver must be tier 3, and its StaticCheck derives from its scan-out budget (kmd.h) whether the
// link keeps the refresh. Passed (or present.path = one_copy, forced): the engine scans the cross-adapter
// surface across the link. Failed: two copies, the copy engine copies the surface into VRAM once and the
// engine scans that. The verdict holds the check to its word: a StaticCheck that passed on a scan-out
// that underflowed is a failure of the check (static_check_kept); one that failed where a forced one copy
// kept the refresh is reported as conservative (static_check_conservative), not as a failure.
//
// Metrics: underflows (the engine's count; the monitor scanout_underflow fails the run when there is
// one: the refresh was not kept), min_fifo_bytes, max_request_latency_ns (issue to arrival of a scan-out
// request, measured), and fifo_needed_bytes: the smallest FIFO the measured worst latency calls for.
// Derivation: a request is issued when the level falls below the watermark (watermark_pct of the FIFO),
// so the bytes still buffered then, FIFO x pct, must last the worst latency at the pixel rate:
// FIFO >= latency x bpp x pixel clock / pct, and at least one request plus that drain.
#include <cmath>

#include "kernel_stub/umd/swapchain.h"
#include "scenarios/display/present.h"

namespace gpumodel {
namespace {

class ScanoutUnderflow : public ScenarioDriver {
 public:
  explicit ScanoutUnderflow(const ParamSet& ps)
      : frames_(uint64_t(ps.get_int("workload.frames"))),
        bulk_bytes_(uint64_t(ps.get_int("workload.bulk_bytes"))),
        h2d_(ps.get_enum("workload.bulk_direction") == "h2d"),
        copy_nodes_(int(ps.get_int("workload.copy_nodes"))),
        forced_(ps.get_enum("present.path")) {}

  void build(Platform& p, Results& r) override {
    d_ = p.gpu.display.get();
    d_->on_request = [this](const DisplayEngine::RequestRecord& q) {
      if (q.arrival - q.issue > max_latency_) max_latency_ = q.arrival - q.issue;
    };
    p.cpu.spawn_thread("app", [this, &p, &r] { app(p, r); });
  }

  void finish(Platform& p, Results& r) override {
    (void)p;
    report_scanout(*d_, window_, r);
    r.metric("max_request_latency_ns", to_ns(max_latency_));
    const double drain_bytes_per_ns = double(d_->timing().bpp()) * double(d_->timing().mode().pixel_clock_hz) / 1e9;
    const double pct = double(p.params.get_int("display.watermark_pct")) / 100.0;
    const double drained = to_ns(max_latency_) * drain_bytes_per_ns;
    const double needed = std::max(drained + double(d_->request_bytes()), pct > 0 ? drained / pct : drained);
    r.metric("fifo_needed_bytes", uint64_t(std::ceil(needed)));
    r.metric("fifo_bytes", d_->fifo_bytes());
    r.metric("refresh_kept", d_->underflows() == 0);
    const ScanoutBudget& b = budget_;  // the derivation's answer, whether or not the path was forced
    r.metric("path", std::string(to_string(choice_.path)) + ": " + choice_.reason);
    r.metric("static_check_passed", b.ok);
    r.metric("static_check_latency_ns", b.latency_ns);
    r.metric("static_check_fifo_needed_bytes", b.fifo_needed_bytes);
    r.metric("static_check_share_mbps", b.share_bytes_per_ns * 1000.0);
    const bool crossed = choice_.path == PresentPath::OneCopy;
    // The check's promise: where it passed, the scan-out across the link keeps the refresh. And its own
    // latency bound must hold: no request waited longer than the budget allowed for.
    r.check(!(b.ok && crossed && d_->underflows() != 0),
            "the StaticCheck passed (" + b.why + ") but the scan-out underflowed " + std::to_string(d_->underflows()) +
                " times: the driver's budget promised what the link could not keep");
    r.check(!(b.ok && crossed && to_ns(max_latency_) > b.latency_ns),
            "a scan-out request waited " + format_number(to_ns(max_latency_)) + " ns, beyond the " +
                format_number(b.latency_ns) + " ns worst case the StaticCheck's budget derived");
    r.metric("static_check_kept", !(b.ok && crossed && d_->underflows() != 0));
    r.metric("static_check_conservative", !b.ok && crossed && d_->underflows() == 0);
    r.metric("bulk_copies", copies_);
    r.metric("link_down_busy_pct", 100.0 * to_ns(p.link.down().busy_total) / to_ns(sc_core::sc_time_stamp()));
    r.metric("link_up_busy_pct", 100.0 * to_ns(p.link.up().busy_total) / to_ns(sc_core::sc_time_stamp()));
    // The waveform's view: the first underflow, from when the beam needed the bytes to when the late
    // request's data arrived; with none, one refresh's active lines, the window's second (the bulk copies
    // load the link from the first's start on).
    if (!d_->underflow_records().empty()) {
      const DisplayEngine::UnderflowRecord& u = d_->underflow_records().front();
      r.event("underflow", u.need.value());
      r.event("data late", u.time.value());
    } else if (window_.at > sc_core::SC_ZERO_TIME) {  // the measurement ran
      const uint64_t n = frames_ > 1 ? 1 : 0;
      r.event("refresh", d_->timing().frame_start(n).value());
      r.event("vblank", d_->timing().vblank_start(n).value());
    }
  }

 private:
  void app(Platform& p, Results& r) {
    const AdapterStart s = DxgkrnlStartAdapter(p.kmd, "dGPU");
    if (!r.check(s.started, s.reason)) return;
    report_conformance(r, {{"dGPU", &s}});
    const DisplayGeometry g = display_geometry(p.params);
    const CrossAdapterSurface surf = p.vidmm.allocate_cross_adapter(g.width, g.height, g.bytes_per_pixel);
    // A bulk-copy queue on each of the last workload.copy_nodes nodes, each with its own source and target.
    std::vector<KmdHwQueue*> qs;
    std::vector<std::pair<uint64_t, uint64_t>> bufs;
    for (int i = 0; i < copy_nodes_; ++i) {
      qs.push_back(p.vidsch.CreateHwQueue(int(s.info.nodes) - 1 - i, 0, 0, 1));
      if (!r.check(qs.back() != nullptr, "DxgkDdiCreateHwQueue failed: no free HW queue")) return;
      bufs.push_back({p.vidmm.allocate(Segment::System, bulk_bytes_), p.vidmm.allocate(Segment::Local, bulk_bytes_)});
    }
    KmdHwQueue* q = qs.front();
    budget_ = p.kmd.scanout_budget(surf.address);
    choice_ = choose_present_path(s, p.kmd, PrimaryDesc{g.width, g.height, g.format}, surf.address, forced_);
    if (!choice_.defect.empty()) r.failures.push_back(choice_.defect);
    uint64_t scanned = surf.address;
    if (choice_.path != PresentPath::OneCopy) {  // two copies: the surface into VRAM once, scanned there
      scanned = p.vidmm.allocate(Segment::Local, surf.bytes());
      PacketWriter w;
      w.copy(surf.address, scanned, surf.bytes()).interrupt(1);
      p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
      p.cpu.wait_for(p.vidsch.interrupt_event(1));
    }
    p.kmd.DxgkDdiCommitVidPn(surf.pitch, scanned);
    // Wait for the first frame's prefetch to settle, then measure over whole refreshes while copying.
    p.cpu.sleep(d_->timing().frame_start(0) - sc_core::sc_time_stamp());
    const sc_core::sc_time end = d_->timing().frame_start(frames_);
    const TrafficSnapshot t0 = TrafficSnapshot::take(p, d_);
    // Rounds of one copy per queue, at once; each queue's copy raises its own vector (1, 2, ...).
    while (sc_core::sc_time_stamp() < end) {
      for (size_t i = 0; i < qs.size(); ++i) {
        const auto [sys, vid] = bufs[i];
        PacketWriter w;
        w.copy(h2d_ ? sys : vid, h2d_ ? vid : sys, bulk_bytes_).interrupt(uint32_t(i + 1));
        p.kmd.DxgkDdiSubmitCommandToHwQueue(qs[i], w);
      }
      for (size_t i = 0; i < qs.size(); ++i) p.cpu.wait_for(p.vidsch.interrupt_event(uint32_t(i + 1)));
      copies_ += qs.size();
    }
    if (end > sc_core::sc_time_stamp()) p.cpu.sleep(end - sc_core::sc_time_stamp());
    window_ = TrafficSnapshot::take(p, d_) - t0;
    p.kmd.DxgkDdiSetVidPnSourceVisibility(false);
  }

  const uint64_t frames_, bulk_bytes_;
  const bool h2d_;
  const int copy_nodes_;
  const std::string forced_;
  PathChoice choice_;
  ScanoutBudget budget_;
  DisplayEngine* d_ = nullptr;
  sc_core::sc_time max_latency_ = sc_core::SC_ZERO_TIME;
  TrafficSnapshot window_;
  uint64_t copies_ = 0;
};

}  // namespace

ScenarioInfo scanout_underflow_scenario() {
  return {"scanout_underflow", "a dGPU display engine scans out of system memory across a link loaded by bulk copies",
          [](ParamSet& ps, const std::string& o) {
            ps.declare_int("workload.frames", 3, "frames", 1, 100000, "A: three refreshes measured", o);
            ps.declare_int("workload.bulk_bytes", 16 << 20, "bytes", 4096, int64_t(1) << 32,
                           "A: 16 MiB per bulk copy, back to back for the whole measurement", o);
            ps.declare_enum("workload.bulk_direction", "h2d", {"h2d", "d2h"},
                            "A: h2d, whose completions share the down direction with the scan-out's", o);
            ps.declare_int("workload.copy_nodes", 1, "nodes", 1, 64,
                           "A: the bulk copies run on the last node (its copy engine); n: on each of the last n "
                           "nodes at once (a 3D or compute engine copying too, which a budget of the copy engines "
                           "alone does not count)",
                           o);
            ps.declare_enum("present.path", "auto", {"auto", "one_copy", "two_copy"},
                            "Q: CASO support C5: auto = what the dGPU driver's tier and StaticCheck allow; one_copy "
                            "forces the scan-out across the link (the check's answer is still reported)",
                            o);
          },
          [](const ParamSet& ps) { return std::make_unique<ScanoutUnderflow>(ps); },
          [](const ParamSet& ps) {
            const int nodes = int(ps.get_int("gpu.nodes")), copying = int(ps.get_int("workload.copy_nodes"));
            if (copying > nodes)
              throw ConfigError("workload.copy_nodes = " + std::to_string(copying) +
                                " is more than gpu.nodes = " + std::to_string(nodes) + "; allowed: 1 to gpu.nodes");
            for (int n = nodes - copying; n < nodes; ++n)
              require_engine_runs(ps, "scanout_underflow", "gpu", n, Op::Copy, "COPY", "the bulk copies");
            if (ps.get_enum("display.adapter") != "gpu")
              throw ConfigError("display.adapter = " + ps.get_enum("display.adapter") +
                                ": scenario 'scanout_underflow' scans out on the dGPU across the link; allowed: "
                                "display.adapter = gpu");
            require_platform(ps, "scanout_underflow", 1, int(ps.get_int("workload.copy_nodes")),
                             "a bulk-copy queue on each of the last workload.copy_nodes nodes");
          }};
}

namespace {
const ScenarioRegistration kScanoutUnderflowScenario{scanout_underflow_scenario, 9};
}  // namespace

}  // namespace gpumodel
