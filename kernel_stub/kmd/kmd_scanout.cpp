// The display driver's scan-out decisions (CASO support C4, C5): its declared caps and answers, pfnCreateResource of a
// cross-adapter primary, the overlay checks, and the scan-out budget the StaticCheck derives its answer from (kmd.h,
// ScanoutBudget, has the derivation).
#include <algorithm>
#include <cmath>

#include "hw_model/display/display_timing.h"
#include "hw_model/gpu/engine_kind.h"
#include "hw_model/gpu/regs.h"
#include "hw_model/interconnect/pcie_link.h"
#include "kernel_stub/cpu/cpu.h"
#include "kernel_stub/dxgkrnl/vidmm.h"
#include "kernel_stub/kmd/kmd.h"

namespace gpumodel {

DxgkDriverCaps driver_caps_from(const std::string& tiers, const std::string& role) {
  DxgkDriverCaps c;
  auto has = [&](const char* w) {
    size_t p = 0;
    for (;;) {  // '+'-separated words
      const size_t e = tiers.find('+', p);
      if (tiers.compare(p, e == std::string::npos ? std::string::npos : e - p, w) == 0) return true;
      if (e == std::string::npos) return false;
      p = e + 1;
    }
  };
  c.cross_adapter_resource = has("resource");
  c.cross_adapter_resource_texture = has("texture");
  c.cross_adapter_resource_scanout = has("scanout");
  c.hybrid_discrete = role == "discrete";
  c.hybrid_integrated = role == "integrated";
  return c;
}

DriverAnswers driver_answers_from(const ParamSet& ps, const std::string& key) {
  DriverAnswers a;
  a.caps = driver_caps_from(ps.get_enum(key + ".kmd_cross_adapter_caps"), ps.get_enum(key + ".kmd_hybrid_role"));
  const std::string& ns = ps.get_enum(key + ".kmd_primary_no_scanout");
  a.no_scanout = ns == "never"            ? DriverAnswers::NoScanout::Never
                 : ns == "always"         ? DriverAnswers::NoScanout::Always
                 : ns == "beyond_minimum" ? DriverAnswers::NoScanout::BeyondMinimum
                                          : DriverAnswers::NoScanout::Derived;
  const std::string& sc = ps.get_enum(key + ".kmd_mpo_static_check");
  a.static_check = sc == "pass"   ? DriverAnswers::StaticCheck::Pass
                   : sc == "fail" ? DriverAnswers::StaticCheck::Fail
                                  : DriverAnswers::StaticCheck::Derived;
  a.mpo_mutates = ps.get_bool(key + ".kmd_mpo_check_mutates_state");
  a.present_check_fails_at = uint64_t(ps.get_int(key + ".kmd_present_check_fails_at"));
  a.umd_row_major_texture = ps.get_bool(key + ".umd_cross_adapter_row_major_texture");
  a.caps.flip_immediate_mmio = ps.get_bool(key + ".kmd_flip_immediate");
  const std::string& nf = ps.get_enum(key + ".kmd_native_gpu_fence");
  a.native_gpu_fence = nf == "always"  ? NativeGpuFenceAnswer::Always
                       : nf == "never" ? NativeGpuFenceAnswer::Never
                                       : NativeGpuFenceAnswer::IfEnabled;
  return a;
}

void Kmd::init_scanout(const ParamSet& ps, const std::string& key) {
  ScanoutHw& h = scanout_hw_;
  const DisplayMode m = display_mode(ps.get_enum("display.mode"));
  h.need_bytes_per_ns = double(bytes_per_pixel(ps.get_enum("display.format"))) * double(m.pixel_clock_hz) / 1e9;
  h.fifo = uint64_t(ps.get_int("display.fifo_bytes"));
  h.request = uint64_t(ps.get_int("display.request_bytes"));
  h.outstanding = uint64_t(ps.get_int("display.outstanding"));
  h.watermark_pct = uint64_t(ps.get_int("display.watermark_pct"));
  h.rotation = unsigned(ps.get_int("display.rotation"));
  h.max_plane_width = uint32_t(ps.get_int("display.max_plane_width"));
  h.max_plane_height = uint32_t(ps.get_int("display.max_plane_height"));
  h.other_outputs = unsigned(ps.get_int("display.other_outputs"));
  h.integrated = key == "igpu";
  h.hop_ns = ps.get_real("link.hop_ns");
  h.rc_ns = ps.get_real("rc.latency_ns");
  h.completion_bytes = unsigned(ps.get_int("link.completion_bytes"));
  h.max_payload = unsigned(ps.get_int("link.max_payload_bytes"));
  h.posted_buffer = unsigned(ps.get_int("link.posted_buffer_bytes"));
  h.sysmem_read_ns = ps.get_real("sysmem.read_latency_ns");
  h.sysmem_bytes_per_ns = ps.get_real("sysmem.bandwidth_gbps");
  h.local_read_ns = h.integrated ? h.sysmem_read_ns : ps.get_real("vram.read_latency_ns");
  h.local_bytes_per_ns = h.integrated ? h.sysmem_bytes_per_ns : ps.get_real("vram.bandwidth_gbps");
  // The adapter's engines that load the link beside scan-out: each may keep its full DMA depth of reads
  // outstanding. <key>.kmd_scanout_budget_masters = copy_engines counts the copy engines (the default);
  // all_engines every engine that runs COPY (a 3D or compute engine does too; a video engine does not).
  const bool all = ps.get_enum(key + ".kmd_scanout_budget_masters") == "all_engines";
  const int nodes = int(ps.get_int(key + ".nodes"));
  for (int n = 0; n < nodes; ++n) {
    const EngineKind k = engine_kind(ps, key, n, nodes);
    if (all ? !engine_runs(k, Op::Copy) : k != EngineKind::Copy) continue;
    const std::string inst = key + ".node" + std::to_string(n);
    h.engine_bytes +=
        uint64_t(ps.get_int(inst, "node.dma_outstanding")) * uint64_t(ps.get_int(inst, "node.dma_chunk_bytes"));
  }
}

ScanoutBudget Kmd::scanout_budget(uint64_t surface) {
  const ScanoutHw& h = scanout_hw_;
  ScanoutBudget b;
  if (link_status_ < 0) link_status_ = int64_t(cpu_.mmio_read32(bar0_ + regs::kLinkStatus));  // once
  const bool local = surface >= mm_.local_base() && surface < mm_.local_base() + mm_.local_size();
  const unsigned gen = unsigned(link_status_) & 0xf, lanes = (unsigned(link_status_) >> regs::kLinkWidthShift) & 0x3f;
  const uint64_t slots = std::max<uint64_t>(1, std::min(h.outstanding, h.fifo / h.request));
  b.own_bytes = slots * h.request;
  b.need_bytes_per_ns = h.need_bytes_per_ns;
  b.fifo_bytes = h.fifo;
  double base_ns = 0, queue_ns = 0;
  if (local || h.integrated || gen == 0) {
    b.path = local && !h.integrated ? "local" : "fabric";
    b.path_bytes_per_ns = local ? h.local_bytes_per_ns : h.sysmem_bytes_per_ns;
    b.share_bytes_per_ns = b.path_bytes_per_ns;  // the memory's bandwidth: the display's own requests only
    base_ns = local ? h.local_read_ns : h.sysmem_read_ns;
    queue_ns = double(b.own_bytes) / b.path_bytes_per_ns;
  } else {
    b.path = "link";
    const double gts = gen == 3 ? 8.0 : gen == 4 ? 16.0 : 32.0;
    const double rate =
        gts * lanes * (128.0 / 130.0) / 8.0 * (1.0 - PcieLink::dll_overhead(int(gen), int(lanes), h.max_payload));
    b.path_bytes_per_ns = rate * h.completion_bytes / (h.completion_bytes + PcieLink::kCplOverhead);
    b.other_bytes = h.engine_bytes;
    b.share_bytes_per_ns = b.path_bytes_per_ns * double(b.own_bytes) / double(b.own_bytes + b.other_bytes);
    base_ns = 2 * h.hop_ns + 2 * h.rc_ns + h.sysmem_read_ns;
    // Up: the read request behind a full posted buffer; down: every outstanding completion before its own.
    queue_ns = (double(h.posted_buffer) + PcieLink::kMrdOverhead) / rate +
               double(b.own_bytes + b.other_bytes) / b.path_bytes_per_ns;
  }
  b.latency_ns = base_ns + queue_ns;
  const double drained = b.latency_ns * b.need_bytes_per_ns, pct = double(h.watermark_pct) / 100.0;
  b.fifo_needed_bytes = uint64_t(std::ceil(std::max(drained + double(h.request), pct > 0 ? drained / pct : drained)));
  auto fmt = [](double v) { return std::to_string(int64_t(std::llround(v))); };
  if (h.rotation != 0)
    b.why = "the source is rotated " + std::to_string(h.rotation) +
            " degrees (a bandwidth-limited configuration the driver fails: CASO support)";
  else if (h.other_outputs != 0)
    b.why = std::to_string(h.other_outputs) +
            " other display(s) active on this adapter (a bandwidth-limited configuration the driver fails: CASO "
            "support)";
  else if (b.share_bytes_per_ns < b.need_bytes_per_ns)
    b.why = "the " + b.path + " delivers " + fmt(b.share_bytes_per_ns * 1000) + " MB/s to scan-out under load, " +
            fmt(b.need_bytes_per_ns * 1000) + " MB/s needed";
  else if (h.fifo < b.fifo_needed_bytes)
    b.why = "a " + fmt(b.latency_ns) + " ns worst request latency on the " + b.path + " needs a " +
            std::to_string(b.fifo_needed_bytes) + " B fetch buffer, " + std::to_string(h.fifo) + " B fitted";
  else {
    b.ok = true;
    b.why = "the " + b.path + " delivers " + fmt(b.share_bytes_per_ns * 1000) + " of " +
            fmt(b.need_bytes_per_ns * 1000) + " MB/s needed; " + std::to_string(b.fifo_needed_bytes) + " of " +
            std::to_string(h.fifo) + " B buffer needed";
  }
  return b;
}

bool Kmd::CreatePrimaryScanout(const PrimaryDesc& d) const {
  // C4: the tier-3 minimum is up to 1920x1080 in the listed formats (display.format offers only those).
  const bool within_minimum = d.width <= 1920 && d.height <= 1080;
  switch (answers_.no_scanout) {
    case DriverAnswers::NoScanout::Derived:  // what one plane of the display engine scans
      return d.width <= scanout_hw_.max_plane_width && d.height <= scanout_hw_.max_plane_height;
    case DriverAnswers::NoScanout::Never: return true;
    case DriverAnswers::NoScanout::BeyondMinimum: return within_minimum;
    case DriverAnswers::NoScanout::Always: return false;
  }
  return true;
}

bool Kmd::DxgkDdiCheckMultiPlaneOverlaySupport3(const MpoCheck& c) {
  // C5: exactly one plane flagged and no post-composition plane, or the configuration is refused.
  const uint64_t before = mpo_state_;
  bool ok = c.planes_flagged == 1 && !c.post_composition;
  // The document's bandwidth-limited configurations: the driver fails the present-time check continually.
  const bool limited = scanout_hw_.rotation != 0 || scanout_hw_.other_outputs != 0;
  if (c.static_check) {
    last_budget_ = scanout_budget(c.surface);
    switch (answers_.static_check) {
      case DriverAnswers::StaticCheck::Derived: ok = ok && last_budget_.ok; break;
      case DriverAnswers::StaticCheck::Pass: break;
      case DriverAnswers::StaticCheck::Fail: ok = false; break;
    }
    if (answers_.mpo_mutates) mpo_state_ = c.surface;  // the defect: a static check commits what it checked
  } else {
    ++present_checks_;
    if (answers_.present_check_fails_at != 0 && present_checks_ >= answers_.present_check_fails_at) ok = false;
    if (limited) ok = false;
    if (ok) mpo_state_ = c.surface;  // a real check caches the configuration it accepted
  }
  if (on_mpo_check) on_mpo_check(c, before, mpo_state_);
  return ok;
}

}  // namespace gpumodel
