// The KMD's part of runtime D3cold (dxgkrnl/runtime_pm.h): whether the adapter has work, and
// DxgkDdiSetPowerState's D3 and D0 sides.
#include "hw_model/gpu/regs.h"
#include "hw_model/interconnect/interrupt_controller.h"
#include "kernel_stub/kmd/kmd.h"

namespace gpumodel {

bool Kmd::adapter_busy() { return cpu_.mmio_read32(bar0_ + regs::kAdapterStatus) & regs::kAdapterBusy; }

void Kmd::DxgkDdiSetPowerState(bool d0, bool vram_self_refresh) {
  if (!d0) {
    // Going to D3cold: the video memory kept in self refresh, or left to lose power (VidMm saved it).
    cpu_.mmio_write32(bar0_ + regs::kVramSelfRefresh, vram_self_refresh ? 1 : 0);
    // Read back: the posted write reaches the GPU before the OS cuts the slot's power (a write to the root
    // port takes a shorter way and is not ordered behind it).
    cpu_.mmio_read32(bar0_ + regs::kVramSelfRefresh);
    return;
  }
  // Back in D0: the firmware boots and the driver restores its state (timed, kmd.d0_init_ms), then the
  // interrupt routing is programmed again.
  cpu_.sleep(d0_init_);
  cpu_.mmio_write32(bar0_ + regs::kVramSelfRefresh, 0);
  cpu_.mmio_write64(bar0_ + regs::kMsiAddr, InterruptController::kMsiBase);
  cpu_.mmio_write32(bar0_ + regs::kMsiData, msi_data_base_);
}

}  // namespace gpumodel
