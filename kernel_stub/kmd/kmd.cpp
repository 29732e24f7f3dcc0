#include "kernel_stub/kmd/kmd.h"

#include <algorithm>

#include "hw_model/gpu/regs.h"
#include "hw_model/interconnect/interrupt_controller.h"

namespace gpumodel {

using namespace sc_core;

void Kmd::declare_params(ParamSet& ps) {
  ps.declare_int_choices("kmd.ring_bytes", 65536, "bytes", {4096, 16384, 65536, 262144, 1048576},
                         "A: 64 KiB ring per HW queue");
}

Kmd::Kmd(const ParamSet& ps, Cpu& cpu, VidMm& mm, VidSch& sch)
    : cpu_(cpu), mm_(mm), sch_(sch), ring_bytes_(uint32_t(ps.get_int("kmd.ring_bytes"))) {
  cpu_.connect_interrupt([this](uint32_t data) { return DxgkDdiInterruptRoutine(data); });
}

bool Kmd::DxgkDdiStartDevice(DxgkAdapterInfo* info) {
  using namespace regs;
  info_.id = cpu_.mmio_read32(kBar0Base + kId);
  if (info_.id != kIdValue) return false;
  const uint32_t caps = cpu_.mmio_read32(kBar0Base + kCaps);
  info_.nodes = caps & 0xff;
  info_.hw_queues = (caps >> 8) & 0xff;
  // MSI capability: target address in the APIC window, data carries the vector.
  cpu_.mmio_write64(kBar0Base + kMsiAddr, InterruptController::kMsiBase);
  cpu_.mmio_write32(kBar0Base + kMsiData, kMsiDataBase);
  scratch_ = mm_.allocate(Segment::System, 4096);
  if (info) *info = info_;
  return true;
}

KmdHwQueue* Kmd::DxgkDdiCreateHwQueue(int node, uint32_t priority) {
  using namespace regs;
  if (queues_.size() >= info_.hw_queues || node < 0 || uint32_t(node) >= info_.nodes) return nullptr;
  auto q = std::make_unique<KmdHwQueue>();
  q->id = int(queues_.size());
  q->node = node;
  q->ring_size = ring_bytes_;
  q->ring_base = mm_.allocate(Segment::System, ring_bytes_);
  q->rptr_addr = mm_.allocate(Segment::System, 64, 64);
  const uint64_t r = kBar0Base + kQueueBase + uint64_t(q->id) * kQueueStride;
  cpu_.mmio_write64(r + kQRingBase, q->ring_base);
  cpu_.mmio_write32(r + kQRingSize, q->ring_size);
  cpu_.mmio_write32(r + kQNode, uint32_t(node));
  cpu_.mmio_write64(r + kQRptrAddr, q->rptr_addr);
  cpu_.mmio_write32(r + kQPriority, priority);
  cpu_.mmio_write32(r + kQEnable, 1);
  queues_.push_back(std::move(q));
  return queues_.back().get();
}

void Kmd::DxgkDdiSubmitCommandToHwQueue(KmdHwQueue* q, const PacketWriter& packets) {
  const auto& dw = packets.dwords();
  const uint64_t bytes = dw.size() * 4;
  if (bytes > q->ring_size) {
    SC_REPORT_ERROR("gpumodel/kmd", "submission larger than the ring: raise kmd.ring_bytes");
    return;
  }
  // Wait for ring space: re-read the hardware's written-back read pointer until it fits.
  while (q->wptr + bytes - q->rptr_cached > q->ring_size) {
    q->rptr_cached = cpu_.mem_read64(q->rptr_addr);
    if (q->wptr + bytes - q->rptr_cached > q->ring_size) wait(sc_time(1, SC_US));
  }
  uint64_t done = 0;
  while (done < bytes) {  // the ring wraps: write in at most two pieces
    const uint64_t off = (q->wptr + done) & (q->ring_size - 1);
    const uint64_t n = std::min<uint64_t>(bytes - done, q->ring_size - off);
    cpu_.mem_write(q->ring_base + off, reinterpret_cast<const unsigned char*>(dw.data()) + done, unsigned(n));
    done += n;
  }
  q->wptr += bytes;
  cpu_.mmio_write64(regs::kBar0Base + regs::kDoorbellBase + uint64_t(q->id) * 8, q->wptr);
}

bool Kmd::DxgkDdiInterruptRoutine(uint32_t msi_data) {
  if (msi_data < kMsiDataBase) return false;  // not ours
  DxgkInterruptData d;
  d.type = DxgkInterruptData::DmaCompleted;
  d.vector = msi_data - kMsiDataBase;
  sch_.DxgkCbNotifyInterrupt(d);
  sch_.DxgkCbQueueDpc([this] { DxgkDdiDpcRoutine(); });
  return true;
}

void Kmd::DxgkDdiDpcRoutine() {
  // Nothing to acknowledge in hardware: MSI is edge-like, each message is one interrupt.
}

}  // namespace gpumodel
