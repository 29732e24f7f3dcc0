#include "kernel_stub/dxgkrnl/vidsch.h"

namespace gpumodel {

KEvent& VidSch::interrupt_event(uint32_t vector) {
  auto& e = events_[vector];
  if (!e) e = std::make_unique<KEvent>();
  return *e;
}

void VidSch::DxgkCbNotifyInterrupt(const DxgkInterruptData& d) {
  pending_.push_back(d);
  ++notifications_;
}

void VidSch::DxgkCbQueueDpc(std::function<void()> kmd_dpc) {
  kmd_dpc_ = std::move(kmd_dpc);
  if (dpc_queued_) return;  // a DPC object is queued at most once
  dpc_queued_ = true;
  cpu_.queue_dpc([this] { dpc(); });
}

void VidSch::dpc() {
  dpc_queued_ = false;
  if (kmd_dpc_) kmd_dpc_();  // DxgkDdiDpcRoutine
  while (!pending_.empty()) {
    const DxgkInterruptData d = pending_.front();
    pending_.pop_front();
    cpu_.signal(interrupt_event(d.vector));
  }
}

}  // namespace gpumodel
