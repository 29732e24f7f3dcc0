// The modelled machine, assembled from a topology (platform.topology):
//  * dgpu: CPU, root complex, system memory and interrupt controller on the host side; a PCIe-like
//    link; the discrete adapter behind it.
//  * hybrid: the same, plus an integrated adapter (iGPU) on the host side of the root complex: its
//    engines and CMP reach system memory through the SoC fabric without crossing the link, and its
//    local segment is stolen from the top of system memory.
// Each adapter is a stack: its hardware, its own KMD instance and Dxgkrnl's per-adapter state (VidSch,
// VidMm), all on the one CPU and interrupt controller, each with its own BAR0 and MSI vectors.
//
//   cpu ──► rc (router) ──► sysmem [.. | iGPU stolen]
//            │   ▲  │  └──► intc (MSI window)
//            │   │  └─────► igpu.host_if ──► bar0        igpu nodes, cmp ──► igpu.fabric ──► rc
//            ▼   │
//          link.down / link.up
//            │   ▲
//            ▼   │
//   gpu.host_if ──► bar0 | vram        nodes, cmp ──► gpu.fabric ──► vram | link.up
#pragma once
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include <systemc>

#include "hw_model/core/params.h"
#include "hw_model/core/vcd.h"
#include "hw_model/gpu/adapter.h"
#include "hw_model/interconnect/interrupt_controller.h"
#include "hw_model/interconnect/iommu.h"
#include "hw_model/interconnect/pcie_link.h"
#include "hw_model/interconnect/router.h"
#include "hw_model/memory/memory.h"
#include "kernel_stub/cpu/cpu.h"
#include "kernel_stub/dxgkrnl/cross_adapter_fence.h"
#include "kernel_stub/dxgkrnl/runtime_pm.h"
#include "kernel_stub/dxgkrnl/vidmm.h"
#include "kernel_stub/dxgkrnl/vidsch.h"
#include "kernel_stub/kmd/kmd.h"

namespace gpumodel {

enum class Topology { Dgpu, Hybrid };

// Dxgkrnl's per-adapter state and the adapter's KMD instance.
struct AdapterDriver {
  // `iommu_port`: the adapter's requester port on the IOMMU.
  AdapterDriver(const ParamSet& ps, Cpu& cpu, Vcd& vcd, PhysHeap& system, Memory& sysmem, const GpuAdapter& hw,
                const KmdConfig& cfg, unsigned iommu_port);
  VidMm vidmm;
  VidSch vidsch;
  Kmd kmd;
  RuntimePm pm;  // runtime D3cold: enabled for a discrete adapter that drives no display
};

class Platform {
 public:
  static void declare_params(ParamSet& ps);
  // Refuses a combination of platform parameters that cannot be built or cannot run (ConfigError
  // naming the keys), before anything is elaborated.
  static void validate(const ParamSet& ps);
  // T2: gpu.nodes splits evenly over gpu.linked_engines (ConfigError naming both keys).
  static void validate_linked_engines(const ParamSet& ps);
  static Topology topology_of(const ParamSet& ps);
  Platform(const ParamSet& ps, Vcd& vcd, uint64_t seed);

  const ParamSet& params;
  Vcd& vcd;
  std::mt19937_64 rng;
  const Topology topology;

  Memory sysmem;
  InterruptController intc;
  Router rc;
  Iommu iommu;  // between the adapters' DMA and the root complex (iommu.model)
  PcieLink link;

 private:
  std::vector<std::unique_ptr<GpuAdapter>> hw_;  // [0] the dGPU, [1] the iGPU (hybrid)
  std::vector<std::unique_ptr<GpuAdapter>> make_hardware();

 public:
  GpuAdapter& gpu;         // the discrete adapter
  GpuAdapter* const igpu;  // the integrated adapter (hybrid), else null
  Cpu cpu;

 private:
  PhysHeap system_heap_;  // system memory less the iGPU's stolen range: one heap for every adapter
  std::vector<std::unique_ptr<AdapterDriver>> drivers_;
  std::vector<std::unique_ptr<AdapterDriver>> make_drivers();

 public:
  // The discrete adapter's driver stack (the names every dGPU scenario uses).
  VidMm& vidmm;
  VidSch& vidsch;
  Kmd& kmd;
  AdapterDriver* const igpu_driver;                    // hybrid, else null
  RuntimePm& runtime_pm() { return drivers_[0]->pm; }  // the dGPU's
  const RuntimePm& runtime_pm() const { return drivers_[0]->pm; }
  // The dGPU while its slot's power is off (runtime D3cold), for the energy model: its local memory's
  // state (0 powered, 1 self refresh, 2 off); per engine and state of its clock, the time the engine's
  // clock spent in that state while the slot was off (its clock runs on; the energy model takes that time
  // out), and the clock's times when the current off began.
  struct DgpuPower {
    StateClock vram{3};
    std::vector<std::vector<sc_core::sc_time>> node_off, node_at_off;
    // Engine i's time in state s while the slot was off, up to `now` (the current off included).
    sc_core::sc_time off_in(size_t i, size_t s, const StateClock& c, bool off_now, const sc_core::sc_time& now) const {
      return node_off[i][s] + (off_now ? c.time_in(s, now) - node_at_off[i][s] : sc_core::SC_ZERO_TIME);
    }
  } dgpu_power;
  // Dxgkrnl's cross-adapter fences (F15): [0] the dGPU, [1] the iGPU (hybrid).
  CrossAdapterFences xfences;
  PhysHeap& system_heap() { return system_heap_; }
};

}  // namespace gpumodel
