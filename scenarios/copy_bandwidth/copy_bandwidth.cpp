// copy_bandwidth: one COPY over the link, timed by GPU timestamps around it.
//   d2h: VRAM -> system memory, the link's posted-write direction (device -> host).
//   h2d: system memory -> VRAM, DMA reads: request TLPs up, completions with data down.
// Metrics: bytes, duration_ns (GPU timestamp after the copy and a barrier minus the one before),
// effective_gbps (payload bytes per ns = decimal GB/s), link_limit_gbps (the link's derived payload
// rate for this direction, for comparison).
#include <cinttypes>

#include "hw_model/gpu/regs.h"
#include "scenarios/common/scenario.h"

namespace gpumodel {
namespace {

// The copy is checked at eight qwords spread over it: the source holds a distinct value there and zero
// elsewhere. The CPU still writes every byte (the same traffic), but memory keeps no page that holds only
// zeros, so a 4 GiB copy costs the host a few pages instead of twice the copy.
uint64_t checked_qword(uint64_t bytes, uint64_t k) { return (bytes / 8 - 1) * k / 7; }
uint64_t pattern(uint64_t bytes, uint64_t i) {
  if (bytes < 8) return i == 0 ? 0x9E3779B97F4A7C15ull : 0;
  for (uint64_t k = 0; k < 8; ++k)
    if (checked_qword(bytes, k) == i) return (i + 1) * 0x9E3779B97F4A7C15ull;
  return 0;
}

class CopyBandwidth : public ScenarioDriver {
 public:
  explicit CopyBandwidth(const ParamSet& ps)
      : bytes_(uint64_t(ps.get_int("copy.bytes"))), h2d_(ps.get_enum("copy.direction") == "h2d") {}

  void build(Platform& p, Results& r) override {
    p.cpu.spawn_thread("app", [this, &p, &r] { app(p, r); });
  }

 private:
  void app(Platform& p, Results& r) {
    DxgkAdapterInfo info;
    if (!r.check(p.kmd.DxgkDdiStartDevice(&info), "adapter start: BAR0 did not identify the adapter")) return;
    const int copy_node = int(info.nodes) - 1;  // the last node serves as the copy engine
    KmdHwQueue* q = p.vidsch.CreateHwQueue(copy_node, 0, 0, 1);
    if (!r.check(q != nullptr, "DxgkDdiCreateHwQueue failed: no free HW queue")) return;
    const uint64_t sys = p.vidmm.allocate(Segment::System, bytes_);
    const uint64_t vid = p.vidmm.allocate(Segment::Local, bytes_);
    const uint64_t src = h2d_ ? sys : vid, dst = h2d_ ? vid : sys;

    // The CPU fills the source (VRAM through the BAR2 aperture), 64 KiB at a time.
    std::vector<uint64_t> piece;
    for (uint64_t off = 0; off < bytes_; off += 65536) {
      const uint64_t n = std::min<uint64_t>(65536, bytes_ - off);
      piece.resize((n + 7) / 8);
      for (uint64_t i = 0; i < piece.size(); ++i) piece[i] = pattern(bytes_, off / 8 + i);
      p.cpu.mem_write(src + off, piece.data(), unsigned(n));
    }

    const uint64_t ts = p.kmd.scratch();
    PacketWriter w;
    w.timestamp(ts).copy(src, dst, bytes_).barrier().timestamp(ts + 8).barrier().interrupt(1);
    KEvent& done = p.vidsch.interrupt_event(1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    p.cpu.wait_for(done);

    const uint64_t t0 = p.cpu.mem_read64(ts), t1 = p.cpu.mem_read64(ts + 8);
    // Check the data: eight qwords spread over the destination.
    bool ok = true;
    for (uint64_t k = 0; k < 8 && bytes_ >= 8; ++k) {
      const uint64_t qi = checked_qword(bytes_, k);
      uint64_t v = 0;
      const unsigned n = unsigned(std::min<uint64_t>(8, bytes_ - qi * 8));
      p.cpu.mem_read(dst + qi * 8, &v, n);
      uint64_t want = pattern(bytes_, qi);
      if (n < 8) want &= (1ull << (8 * n)) - 1;
      ok = ok && v == want;
    }
    r.check(ok, "copied data differs from the source pattern");
    r.check(t1 > t0, "GPU timestamps did not advance across the copy");
    // GPU timestamps count ticks of the copying adapter's <key>.timestamp_tick_ps, not nanoseconds.
    const double tick_ns = double(p.params.get_int(p.gpu.config.key + ".timestamp_tick_ps")) / 1000.0;
    const double dur = double(t1 - t0) * tick_ns;
    const double gbps = dur > 0 ? double(bytes_) / dur : 0.0;
    r.metric("bytes", bytes_);
    r.metric("duration_ns", dur);
    // The copy's two GPU timestamps (duration_ns's ends), for the waveform's markers and view.
    const uint64_t tick_ps = uint64_t(p.params.get_int(p.gpu.config.key + ".timestamp_tick_ps"));
    r.event("copy start", t0 * tick_ps);
    r.event("copy end", t1 * tick_ps);
    if (dur > 0)
      r.metric("effective_gbps", gbps);
    else
      r.metric_absent("effective_gbps", "the GPU timestamps did not advance across the copy");
    const double rate = p.link.bytes_per_ns();
    const double mps = p.link.max_payload();
    const double cpl = double(p.params.get_int("link.completion_bytes"));
    const double limit =
        h2d_ ? rate * cpl / (cpl + PcieLink::kCplOverhead) : rate * mps / (mps + PcieLink::kMwrOverhead);
    r.metric("link_limit_gbps", limit);
    // The copy cannot beat the link: its bytes take at least D >= bytes / limit between the two
    // TIMESTAMPs (at times a and b = a + D). Each TIMESTAMP reads floor(time / T) for the tick T, so the
    // measured duration T * (floor(b / T) - floor(a / T)) is more than D - T, and at least T (t1 > t0):
    // the measured rate is at most bytes / max(T, bytes / limit - T). That is the whole allowance, the
    // timestamps' quantisation: at the default 1 ns tick 0.00015 % of the 16 MiB copy's 647.65 us.
    const double least_ns = std::max(tick_ns, double(bytes_) / limit - tick_ns);
    if (t1 > t0)
      r.check(gbps <= double(bytes_) / least_ns * (1 + 1e-12),
              "the measured bandwidth exceeds the link's payload rate (" + std::to_string(gbps) + " > " +
                  std::to_string(limit) + " GB/s, one timestamp tick of " + std::to_string(tick_ns) + " ns allowed)");
    r.metric("link_up_busy_ns", to_ns(p.link.up().busy_total));
    r.metric("link_down_busy_ns", to_ns(p.link.down().busy_total));
  }

  uint64_t bytes_;
  bool h2d_;
};

}  // namespace

ScenarioInfo copy_bandwidth_scenario() {
  return {"copy_bandwidth", "a DMA copy over the link; effective payload bandwidth",
          [](ParamSet& ps, const std::string& o) {
            ps.declare_int("copy.bytes", 16 << 20, "bytes", 8, int64_t(1) << 32,
                           "A: 16 MiB, long enough that the ~1 us start-up is < 0.2 % of the transfer", o);
            ps.declare_enum("copy.direction", "d2h", {"h2d", "d2h"},
                            "A: d2h, the posted-write direction docs/calibration.md derives its effective "
                            "bandwidth figures for",
                            o);
          },
          [](const ParamSet& ps) { return std::make_unique<CopyBandwidth>(ps); },
          [](const ParamSet& ps) {
            require_engine_runs(ps, "copy_bandwidth", "gpu", int(ps.get_int("gpu.nodes")) - 1, Op::Copy, "COPY",
                                "the copy on the last node");
            require_platform(ps, "copy_bandwidth", 1, 1, "one queue on the last node, the copy engine");
          }};
}

namespace {
const ScenarioRegistration kCopyBandwidthScenario{copy_bandwidth_scenario, 1};
}  // namespace

}  // namespace gpumodel
