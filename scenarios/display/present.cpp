#include "scenarios/display/present.h"

#include <algorithm>
#include <cmath>

#include "hw_model/display/display_timing.h"
#include "kernel_stub/umd/d3d12_device.h"

namespace gpumodel {

using namespace sc_core;

void require_hybrid(const ParamSet& ps, const std::string& scenario, bool either_display) {
  if (Platform::topology_of(ps) != Topology::Hybrid)
    throw ConfigError("platform.topology = dgpu: scenario '" + scenario +
                      "' renders on one adapter of the hybrid laptop and displays on the other; allowed: "
                      "platform.topology = hybrid");
  const std::string da = ps.get_enum("display.adapter");
  if (da == "none" || (!either_display && da == "gpu"))
    throw ConfigError("display.adapter = " + da + ": scenario '" + scenario + "' scans out on the iGPU" +
                      (either_display ? " or the dGPU" : "") + "; allowed: display.adapter = auto or igpu" +
                      (either_display ? " or gpu" : ""));
  const bool igpu_renders = da == "gpu";
  const std::string rk = igpu_renders ? "igpu" : "gpu", dk = igpu_renders ? "gpu" : "igpu";
  for (const std::string& k : {rk, dk})
    if (ps.get_int(k + ".hw_queues") < 2)
      throw ConfigError(k + ".hw_queues = " + std::to_string(ps.get_int(k + ".hw_queues")) + " is too few: scenario '" +
                        scenario + "' uses 2 HW queues on the " +
                        (k == rk ? "render adapter (render and copy 1)" : "display adapter (copy 2 and composition)") +
                        "; allowed: " + k + ".hw_queues >= 2");
  if (!igpu_renders) require_platform(ps, scenario, 1, 2, "a render queue and a copy queue on the dGPU");
}

void assign_roles(Platform& p, PresentSetup& s) {
  AdapterRole dgpu{"dGPU", "gpu", &p.kmd, &p.vidsch, &p.vidmm, p.gpu.display.get()};
  AdapterRole igpu{
      "iGPU", "igpu", &p.igpu_driver->kmd, &p.igpu_driver->vidsch, &p.igpu_driver->vidmm, p.igpu->display.get()};
  const bool igpu_renders = p.params.get_enum("display.adapter") == "gpu";
  s.render = igpu_renders ? igpu : dgpu;
  s.display = igpu_renders ? dgpu : igpu;
  s.display_kmd = s.display.kmd;
}

DisplayGeometry display_geometry(const ParamSet& ps) {
  const DisplayMode m = display_mode(ps.get_enum("display.mode"));
  DisplayGeometry g;
  g.width = m.h_active;
  g.height = m.v_active;
  g.format = ps.get_enum("display.format");
  g.bytes_per_pixel = bytes_per_pixel(g.format);
  return g;
}

void report_conformance(Results& r, const std::vector<std::pair<std::string, const AdapterStart*>>& adapters) {
  // The HLK's findings (hlk_conformance): the adapters run and the scenario measures, and the monitor's
  // violations fail the verdict, as a driver failing the HLK is not a certifiable one.
  nlohmann::ordered_json findings = nlohmann::ordered_json::array();
  for (const auto& [name, a] : adapters)
    for (const std::string& f : a->conformance) findings.push_back(name + ": " + f);
  r.monitors["hlk_conformance"] = findings.size();
  r.metric("hlk_conformance", findings);
}

bool start_hybrid(Platform& p, Results& r, PresentSetup& s) {
  assign_roles(p, s);
  s.render_start = DxgkrnlStartAdapter(*s.render.kmd, s.render.name);
  s.display_start = DxgkrnlStartAdapter(*s.display.kmd, s.display.name);
  bool ok = true;
  if (!s.render_start.started) ok = r.check(false, s.render_start.reason);
  if (!s.display_start.started) ok = r.check(false, s.display_start.reason);
  if (!ok) return false;
  report_conformance(r, {{s.render.name, &s.render_start}, {s.display.name, &s.display_start}});
  // The app's D3D12 device on the render adapter (CASO support, tier 2: the UMD cap needs the kernel's).
  const D3D12Device dev = D3D12CreateDevice(
      *s.render.sch, D3D12UmdCaps{s.render.kmd->driver_answers().umd_row_major_texture}, s.render.name);
  return r.check(dev.created, dev.reason);
}

bool create_present_surfaces(Platform& p, Results& r, const DisplayGeometry& g, unsigned buffers, PresentSetup& s,
                             uint64_t frames) {
  VidMm& dmm = *s.display.mm;
  VidSch &rsch = *s.render.sch, &dsch = *s.display.sch;
  const int rnodes = int(s.render_start.info.nodes), dnodes = int(s.display_start.info.nodes);
  s.render_q = rsch.CreateHwQueue(0, 0, 0, 1);
  s.copy_q = rsch.CreateHwQueue(rnodes - 1, 0, 0, 1);  // the last node serves as the copy engine
  s.copy2_q = dsch.CreateHwQueue(dnodes - 1, 0, 0, 1);
  s.compose_q = dsch.CreateHwQueue(0, 0, 0, 1);
  if (!r.check(s.render_q && s.copy_q && s.copy2_q && s.compose_q, "DxgkDdiCreateHwQueue failed: no free HW queue"))
    return false;
  s.render_fence = rsch.CreateNativeFence(1, Segment::System, false);
  s.copy1_fence = rsch.CreateNativeFence(1, Segment::System, false);
  s.copy2_fence = dsch.CreateNativeFence(1, Segment::System, false);
  if (!r.check(s.render_fence && s.copy1_fence && s.copy2_fence, "native fence creation failed")) return false;
  s.render_fence_slot = VidSch::va(*s.render_fence, 1);
  s.copy1_fence_slot = VidSch::va(*s.copy1_fence, 1);
  s.copy2_fence_slot = VidSch::va(*s.copy2_fence, 1);
  for (unsigned b = 0; b < buffers; ++b) {
    s.xsurf.push_back(p.vidmm.allocate_cross_adapter(g.width, g.height, g.bytes_per_pixel));
    const uint64_t bytes = s.xsurf.back().bytes();
    s.rt.push_back(s.render.mm->allocate(Segment::Local, bytes));
    s.primary.push_back(dmm.allocate(Segment::Local, bytes));
    s.dwm.push_back(dmm.allocate(Segment::Local, bytes));
  }
  s.blank = dmm.allocate(Segment::Local, s.xsurf[0].bytes());
  s.ts_base = p.vidmm.allocate(Segment::System, (frames + 1) * PresentSetup::kTsPerFrame * 8);
  return true;
}

void commit_display(Platform& p, PresentSetup& s, const DisplayGeometry& g) {
  (void)g;
  (void)p;
  s.display_kmd->DxgkDdiCommitVidPn(s.xsurf[0].pitch, s.blank);
}

TrafficSnapshot TrafficSnapshot::take(const Platform& p, const DisplayEngine* d) {
  TrafficSnapshot t;
  t.link_bytes = p.link.up().payload_bytes + p.link.down().payload_bytes;
  t.sysmem_bytes = p.sysmem.bytes_read() + p.sysmem.bytes_written();
  t.vram_bytes = p.gpu.vram.bytes_read() + p.gpu.vram.bytes_written();
  if (d) {
    t.scanout_bytes = d->bytes_fetched();
    t.consumed_bytes = d->timing().consumed(sc_time_stamp());
  }
  t.at = sc_time_stamp();
  return t;
}

TrafficSnapshot TrafficSnapshot::operator-(const TrafficSnapshot& o) const {
  TrafficSnapshot t;
  t.link_bytes = link_bytes - o.link_bytes;
  t.sysmem_bytes = sysmem_bytes - o.sysmem_bytes;
  t.vram_bytes = vram_bytes - o.vram_bytes;
  t.scanout_bytes = scanout_bytes - o.scanout_bytes;
  t.consumed_bytes = consumed_bytes - o.consumed_bytes;
  t.at = at - o.at;
  return t;
}

nlohmann::ordered_json summary(std::vector<double> v) {
  nlohmann::ordered_json j;
  if (v.empty()) {
    j["mean"] = 0.0, j["p50"] = 0.0, j["p99"] = 0.0, j["max"] = 0.0, j["n"] = 0;
    return j;
  }
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  auto pct = [&](double q) {  // nearest rank
    const size_t k = size_t(std::ceil(q * double(v.size())));
    return v[std::min(v.size() - 1, k == 0 ? 0 : k - 1)];
  };
  j["mean"] = sum / double(v.size());
  j["p50"] = pct(0.50);
  j["p99"] = pct(0.99);
  j["max"] = v.back();
  j["n"] = v.size();
  return j;
}

void report_scanout(const DisplayEngine& d, const TrafficSnapshot& window, Results& r) {
  r.metric("underflows", d.underflows());
  r.metric("min_fifo_bytes", d.min_fifo_bytes());
  // Measured: the bytes the scan-out DMA fetched over the window, against the window's length and
  // against the time the beam spent on active pixels in it (the window's consumed bytes at the pixel
  // rate: bytes / bpp pixels of 1 / pixel clock each).
  const double seconds = window.at.to_seconds();
  const double active_s = double(window.consumed_bytes) / d.timing().bpp() / double(d.timing().mode().pixel_clock_hz);
  r.metric("scanout_gbps_avg", seconds > 0 ? double(window.scanout_bytes) / seconds / 1e9 : 0.0);
  r.metric("scanout_gbps_active", active_s > 0 ? double(window.scanout_bytes) / active_s / 1e9 : 0.0);
}

}  // namespace gpumodel
