// The kernel-mode driver of the modelled adapter. Every DxgkDdi* function here touches the hardware
// only through the CPU: MMIO to BAR0 and stores/loads to memory. Must be called from a CPU context
// (an app thread, the ISR or a DPC), since hardware access takes simulated time.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "hw_model/core/params.h"
#include "hw_model/gpu/packets.h"
#include "kernel_stub/cpu/cpu.h"
#include "kernel_stub/dxgkrnl/vidmm.h"
#include "kernel_stub/dxgkrnl/vidsch.h"

namespace gpumodel {

struct DxgkAdapterInfo {  // what DxgkDdiStartDevice learns from the hardware (capabilities)
  uint32_t id = 0;
  uint32_t nodes = 0;
  uint32_t hw_queues = 0;
};

struct KmdHwQueue {  // the driver's view of one HW queue
  int id = 0;
  int node = 0;
  uint64_t ring_base = 0;
  uint32_t ring_size = 0;
  uint64_t rptr_addr = 0;    // where the hardware writes back its read pointer
  uint64_t wptr = 0;         // bytes written, monotonic
  uint64_t rptr_cached = 0;  // last read pointer the driver read back
};

class Kmd {
 public:
  static constexpr uint32_t kMsiDataBase = 0x40;  // vectors below are reserved by the platform

  static void declare_params(ParamSet& ps);
  Kmd(const ParamSet& ps, Cpu& cpu, VidMm& mm, VidSch& sch);

  // Returns false (adapter start fails) when BAR0 does not identify the adapter.
  bool DxgkDdiStartDevice(DxgkAdapterInfo* info);
  KmdHwQueue* DxgkDdiCreateHwQueue(int node, uint32_t priority = 0);
  // Writes the packets into the queue's ring in memory, then rings the doorbell (MMIO).
  void DxgkDdiSubmitCommandToHwQueue(KmdHwQueue* q, const PacketWriter& packets);
  bool DxgkDdiInterruptRoutine(uint32_t msi_data);  // ISR
  void DxgkDdiDpcRoutine();

  const DxgkAdapterInfo& info() const { return info_; }
  uint64_t scratch() const { return scratch_; }  // a driver-owned page of system memory

 private:
  Cpu& cpu_;
  VidMm& mm_;
  VidSch& sch_;
  uint32_t ring_bytes_;
  DxgkAdapterInfo info_;
  std::vector<std::unique_ptr<KmdHwQueue>> queues_;
  uint64_t scratch_ = 0;
};

}  // namespace gpumodel
