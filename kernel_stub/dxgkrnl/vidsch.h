// VidSch, the OS GPU scheduler (the part the platform needs so far): it receives the KMD's interrupt
// notifications (DxgkCbNotifyInterrupt) at device IRQL, runs the KMD's DPC (DxgkCbQueueDpc), and wakes
// the threads waiting on what the interrupt reported.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <memory>

#include "kernel_stub/cpu/cpu.h"

namespace gpumodel {

// DXGKARGCB_NOTIFY_INTERRUPT_DATA, reduced to what the model reports so far.
struct DxgkInterruptData {
  enum Type { DmaCompleted } type = DmaCompleted;
  uint32_t vector = 0;  // the INTERRUPT packet's operand
  uint32_t node = 0;
};

class VidSch {
 public:
  explicit VidSch(Cpu& cpu) : cpu_(cpu) {}

  KEvent& interrupt_event(uint32_t vector);  // what an app thread waits on
  void DxgkCbNotifyInterrupt(const DxgkInterruptData& d);  // from the KMD's ISR
  void DxgkCbQueueDpc(std::function<void()> kmd_dpc);       // from the KMD's ISR

  uint64_t notifications() const { return notifications_; }

 private:
  void dpc();
  Cpu& cpu_;
  std::map<uint32_t, std::unique_ptr<KEvent>> events_;
  std::deque<DxgkInterruptData> pending_;
  std::function<void()> kmd_dpc_;
  bool dpc_queued_ = false;
  uint64_t notifications_ = 0;
};

}  // namespace gpumodel
