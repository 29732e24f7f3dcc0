// What the display scenarios share: starting both adapters of the hybrid platform (C1), the swap
// chain's surfaces, the display commit, traffic snapshots and the scan-out figures.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw_model/display/display_engine.h"
#include "kernel_stub/dxgkrnl/adapter_start.h"
#include "kernel_stub/umd/swapchain.h"
#include "scenarios/common/scenario.h"

namespace gpumodel {

// Refuses (ConfigError, exit 2) a platform a hybrid scenario cannot run on. `either_display`: the
// scenario can also render on the iGPU while the dGPU drives the panel (display.adapter = gpu).
void require_hybrid(const ParamSet& ps, const std::string& scenario, bool either_display = false);

// One adapter's driver stack as a hybrid scenario uses it: the one that renders or the one that displays.
struct AdapterRole {
  std::string name, key;  // "dGPU" / "gpu", "iGPU" / "igpu"
  Kmd* kmd = nullptr;
  VidSch* sch = nullptr;
  VidMm* mm = nullptr;
  DisplayEngine* display = nullptr;  // the display adapter's engine
};

struct DisplayGeometry {
  uint32_t width = 0, height = 0, bytes_per_pixel = 0;
  std::string format;
};
DisplayGeometry display_geometry(const ParamSet& ps);

// The adapters, queues, fences and surfaces of one swap chain: by default the dGPU renders and the iGPU
// displays; with display.adapter = gpu the iGPU renders and the dGPU displays.
struct PresentSetup {
  AdapterStart render_start, display_start;
  AdapterRole render, display;
  Kmd* display_kmd = nullptr;
  PathChoice choice;
  KmdHwQueue *render_q = nullptr, *copy_q = nullptr;    // render adapter: 3D engine, copy engine
  KmdHwQueue *copy2_q = nullptr, *compose_q = nullptr;  // display adapter: copy engine, 3D engine
  NativeFence *render_fence = nullptr, *copy1_fence = nullptr, *copy2_fence = nullptr;
  FenceVa render_fence_slot, copy1_fence_slot, copy2_fence_slot;  // as process 1's packets name them
  std::vector<uint64_t> rt;                // render targets (the render adapter's local memory), one per buffer
  std::vector<CrossAdapterSurface> xsurf;  // cross-adapter surfaces (system memory)
  std::vector<uint64_t> primary, dwm;      // the display adapter's primaries and DWM surfaces (its local memory)
  uint64_t blank = 0;                      // what the panel shows before the first flip
  uint64_t ts_base = 0;                    // GPU timestamps: 6 qwords a frame
  static constexpr unsigned kTsPerFrame = 6;
  uint64_t ts(uint64_t frame, unsigned k) const { return ts_base + (frame * kTsPerFrame + k) * 8; }
  uint64_t read_ts(Platform& p, uint64_t frame, unsigned k) const { return p.sysmem.peek64(ts(frame, k)); }
};

// The render and display roles display.adapter gives (auto and igpu: the dGPU renders).
void assign_roles(Platform& p, PresentSetup& s);
// The HLK's conformance findings of the started adapters (AdapterStart::conformance) as the monitor
// hlk_conformance (its violations fail the verdict) and the metric of the same name (the findings).
void report_conformance(Results& r, const std::vector<std::pair<std::string, const AdapterStart*>>& adapters);
// Starts both adapters through Dxgkrnl (C1). A failed start is a failure in `r` with its reason.
bool start_hybrid(Platform& p, Results& r, PresentSetup& s);
// Queues, fences and surfaces for `buffers` buffers of `g` and `frames` frames of timestamps.
bool create_present_surfaces(Platform& p, Results& r, const DisplayGeometry& g, unsigned buffers, PresentSetup& s,
                             uint64_t frames);
// The display KMD's DxgkDdiCommitVidPn: mode (the engine's display.* straps), pitch, a blank primary.
void commit_display(Platform& p, PresentSetup& s, const DisplayGeometry& g);

// Counters, to take differences over a measurement window.
struct TrafficSnapshot {
  uint64_t link_bytes = 0, sysmem_bytes = 0, vram_bytes = 0, scanout_bytes = 0;
  uint64_t consumed_bytes = 0;  // what the beam consumed (the display timing's count)
  sc_core::sc_time at;
  static TrafficSnapshot take(const Platform& p, const DisplayEngine* d);
  TrafficSnapshot operator-(const TrafficSnapshot& o) const;
};

// {mean, p50, p99, max, n} of a sample (all zero when empty).
nlohmann::ordered_json summary(std::vector<double> v);
// The display engine's figures: underflows, min_fifo_bytes, and scanout_gbps_avg / _active measured
// over `window` (a difference of two snapshots).
void report_scanout(const DisplayEngine& d, const TrafficSnapshot& window, Results& r);

}  // namespace gpumodel
