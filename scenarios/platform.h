// The modelled machine: CPU, root complex, system memory and interrupt controller on the host side; a
// PCIe-like link; the GPU adapter behind it; and the OS/KMD stub running on the CPU.
//
//   cpu ──► rc (router) ──► sysmem
//            │   ▲     └──► intc (MSI window)
//            ▼   │
//          link.down / link.up
//            │   ▲
//            ▼   │
//   gpu.host_if ──► bar0 | vram        nodes, cmp ──► gpu.fabric ──► vram | link.up
#pragma once
#include <cstdint>
#include <memory>
#include <random>

#include <systemc>

#include "hw_model/core/params.h"
#include "hw_model/core/vcd.h"
#include "hw_model/gpu/adapter.h"
#include "hw_model/interconnect/interrupt_controller.h"
#include "hw_model/interconnect/pcie_link.h"
#include "hw_model/interconnect/router.h"
#include "hw_model/memory/memory.h"
#include "kernel_stub/cpu/cpu.h"
#include "kernel_stub/dxgkrnl/vidmm.h"
#include "kernel_stub/dxgkrnl/vidsch.h"
#include "kernel_stub/kmd/kmd.h"

namespace gpumodel {

class Platform {
 public:
  static void declare_params(ParamSet& ps);
  // Refuses a combination of platform parameters that cannot be built or cannot run (ConfigError
  // naming the keys), before anything is elaborated.
  static void validate(const ParamSet& ps);
  Platform(const ParamSet& ps, Vcd& vcd, uint64_t seed);

  const ParamSet& params;
  Vcd& vcd;
  std::mt19937_64 rng;

  Memory sysmem;
  InterruptController intc;
  Router rc;
  PcieLink link;
  GpuAdapter gpu;
  Cpu cpu;
  VidMm vidmm;
  VidSch vidsch;
  Kmd kmd;
};

}  // namespace gpumodel
