#include "hw_model/gpu/bar0.h"

#include <cstring>

#include "hw_model/core/tlm_check.h"
#include "hw_model/gpu/cmp.h"
#include "hw_model/gpu/node.h"
#include "hw_model/gpu/regs.h"

namespace gpumodel {

using namespace sc_core;

void Bar0::declare_params(ParamSet& ps) {
  ps.declare_real("gpu.bar0_read_latency_ns", 540, "ns", 0, 1e6,
                  "D: CPU MMIO read 1.0 us (middle of gdrcopy copylat's 0.9-1.1 us) minus "
                  "2 x (200 link hop + 30 root complex) = 540 ns register-bus latency");
  ps.declare_real("gpu.bar0_write_latency_ns", 20, "ns", 0, 1e6,
                  "A: posted register write lands 20 ns after it reaches the adapter");
}

Bar0::Bar0(sc_module_name name, const ParamSet& ps, Cmp& cmp, std::vector<Node*> nodes, const std::string& adapter,
           uint64_t base)
    : sc_module(name),
      tsock("tsock"),
      cmp_(cmp),
      nodes_(std::move(nodes)),
      deferred_("deferred"),
      base_(base),
      read_latency_(ps.get_ns(adapter + ".bar0_read_latency_ns")),
      write_latency_(ps.get_ns(adapter + ".bar0_write_latency_ns")),
      tick_ps_(uint64_t(ps.get_int(adapter + ".timestamp_tick_ps"))),
      engines_(adapter == "gpu" ? uint32_t(ps.get_int("gpu.linked_engines")) : 1) {
  tsock.register_b_transport(this, &Bar0::b_transport);
}

void Bar0::b_transport(tlm::tlm_generic_payload& t, sc_time& delay) {
  checked_target(t, delay, name(), tlm_check::TargetCaps{},
                 [this](tlm::tlm_generic_payload& tt, sc_time& d) { serve(tt, d); });
}

void Bar0::serve(tlm::tlm_generic_payload& t, sc_time& delay) {
  const uint64_t off = t.get_address() - base_;
  const unsigned len = t.get_data_length();
  if (!t.is_read() && !t.is_write()) {
    t.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);  // an IGNORE is not a register write
    return;
  }
  if (t.get_byte_enable_ptr()) {
    t.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);  // whole registers only, no byte lanes
    return;
  }
  if (t.get_streaming_width() < len || (len != 4 && len != 8) || off % len) {
    t.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);  // registers take aligned 32/64-bit access
    return;
  }
  if (t.is_read()) {
    wait(delay + read_latency_);  // sampled when the request has crossed the register bus
    uint64_t v = read_reg(off);
    using namespace regs;
    if (off >= kQueueBase && off < kQueueBase + kQueueStride * uint64_t(cmp_.queue_count()) &&
        (off - kQueueBase) % kQueueStride == kQLogFlush) {
      // Read-to-flush (F17's barrier on the OS side): the completion leaves once the queue's log writes
      // issued so far are visible.
      cmp_.flush_logs(cmp_.queue(int((off - kQueueBase) / kQueueStride)));
      v = 1;
    }
    std::memcpy(t.get_data_ptr(), &v, len);
    delay = SC_ZERO_TIME;
  } else {
    uint64_t v = 0;
    std::memcpy(&v, t.get_data_ptr(), len);
    delay += write_latency_;
    deferred_.after(delay, [this, off, v, len] { write_reg(off, v, len); });
  }
  t.set_response_status(tlm::TLM_OK_RESPONSE);
}

uint64_t Bar0::read_reg(uint64_t off) const {
  using namespace regs;
  if (off == kId) return kIdValue;
  if (off == kCaps)
    return uint64_t(nodes_.size()) | (cmp_.mv_from_memory() ? kCapsMvFromMemory : 0) | kCapsFenceIrqNamesQueue |
           (uint64_t(engines_ - 1) << kCapsEnginesShift) | (uint64_t(cmp_.queue_count() - 1) << kCapsQueuesShift);
  if (off == kTimestamp) return sc_time_stamp().value() / tick_ps_;
  if (off == kMsiAddr) return msi_addr_;
  if (off == kMsiData) return msi_data_;
  if (off == kFenceIrqMode) return cmp_.cfg.names_queue ? kFenceIrqNamesQueue : 0;
  if (off == kAdapterStatus) return cmp_.adapter_resetting() ? 1 : 0;
  if (off == kMmuSystemRoot) return cmp_.cfg.system_root;
  if (off == kXDoorbellTarget) return cmp_.cfg.xdoorbell_target;
  if (off >= kQueueBase && off < kQueueBase + kQueueStride * uint64_t(cmp_.queue_count())) {
    const HwQueue& q = const_cast<Cmp&>(cmp_).queue(int((off - kQueueBase) / kQueueStride));
    switch ((off - kQueueBase) % kQueueStride) {
      case kQRingBase: return q.ring_base;
      case kQRingSize: return q.ring_size;
      case kQNode: return uint64_t(q.node);
      case kQRptrAddr: return q.rptr_addr;
      case kQPriority: return q.priority;
      case kQEnable: return q.enabled;
      case kQPageTable: return q.pt_root;
      case kQSignalLog: return q.signal_log;
      case kQWaitLog: return q.wait_log;
      case kQLogEntries: return q.log_entries;
    }
  }
  if (off >= kNodeBase && off < kNodeBase + kNodeStride * nodes_.size()) {
    const Node& n = *nodes_[(off - kNodeBase) / kNodeStride];
    switch ((off - kNodeBase) % kNodeStride) {
      case kNDmaReadLastPs: return n.last_dma_read().value();
      case kNPackets: return n.packets_executed();
      case kNLastFence: return n.last_fence();
      case kNStatus: return n.status();
      case kNPreemptVector: return n.preempt_vector();
      case kNFaultVa: return n.last_fault_va();
      case kNFaultVector: return n.fault_vector();
      case kNPageFaults: return uint32_t(n.page_faults());
    }
  }
  return 0;  // unimplemented registers read as zero, as on hardware
}

void Bar0::write_reg(uint64_t off, uint64_t v, unsigned len) {
  using namespace regs;
  if (off == kMsiAddr) {
    msi_addr_ = len == 8 ? v : (msi_addr_ & ~0xffffffffull) | v;
    cmp_.set_msi(msi_addr_, msi_data_);
    return;
  }
  if (off == kMsiData) {
    msi_data_ = uint32_t(v);
    cmp_.set_msi(msi_addr_, msi_data_);
    return;
  }
  if (off == kAdapterReset) {
    if (v & 1) cmp_.adapter_reset();
    return;
  }
  if (off >= kNodeBase && off < kNodeBase + kNodeStride * nodes_.size()) {
    const int n = int((off - kNodeBase) / kNodeStride);
    switch ((off - kNodeBase) % kNodeStride) {
      case kNControl: cmp_.node_control(n, uint32_t(v)); break;
      case kNPreemptVector: nodes_[size_t(n)]->set_preempt_vector(uint32_t(v)); break;
      case kNFaultVector: nodes_[size_t(n)]->set_fault_vector(uint32_t(v)); break;
    }
    return;
  }
  auto& cfg = cmp_.cfg;
  switch (off) {
    case kFenceSelect: cmp_.select_fence(uint32_t(v)); return;
    case kFenceCvAddr:
      if (auto* f = cmp_.fence(cmp_.selected_fence())) f->cv_addr = v;
      return;
    case kFenceMvAddr:
      if (cmp_.fence(cmp_.selected_fence())) cmp_.fence_names(cmp_.selected_fence()).mv_addr = v;
      return;
    case kFenceHandle:
      if (cmp_.fence(cmp_.selected_fence())) cmp_.fence_names(cmp_.selected_fence()).handle = uint32_t(v);
      return;
    case kFenceFlags:
      if (auto* f = cmp_.fence(cmp_.selected_fence())) {
        f->flags = uint32_t(v);
        f->last_signaled = 0;  // a (re)created or destroyed fence starts with no signal history
        if (!f->valid()) {
          f->gpu_waiters.clear();
          cmp_.set_fence_xid(cmp_.selected_fence(), 0);  // F20: a destroyed slot answers no doorbell
        }
      }
      return;
    case kFenceXid: cmp_.set_fence_xid(cmp_.selected_fence(), uint32_t(v)); return;
    case kXDoorbellTarget: cfg.xdoorbell_target = v; return;
    case kXDoorbell: cmp_.xdoorbell(uint32_t(v)); return;
    case kFenceMvUpdate: cmp_.mv_update(cmp_.selected_fence(), v); return;
    case kFenceNotify: cmp_.cpu_notify(uint32_t(v)); return;
    case kFenceAckAddr: cfg.ack_addr = v; return;
    case kShadowMvBase: cfg.shadow_base = v; return;
    case kEventRingBase: cfg.ring_base = v; return;
    case kEventRingSize: cfg.ring_size = uint32_t(v); return;
    case kEventRingWptrAddr: cfg.ring_wptr_addr = v; return;
    case kEventRingRptr: cfg.ring_rptr = uint32_t(v); return;
    case kFenceIrqMode: cfg.names_queue = (v & kFenceIrqNamesQueue) != 0; return;
    case kMmuSystemRoot: cfg.system_root = v; return;
    case kMmuInvalidate: cmp_.invalidate_tlbs(v); return;
  }
  if (off >= kQueueBase && off < kQueueBase + kQueueStride * uint64_t(cmp_.queue_count())) {
    const int qi = int((off - kQueueBase) / kQueueStride);
    HwQueue& q = cmp_.queue(qi);
    switch ((off - kQueueBase) % kQueueStride) {
      case kQRingBase: q.ring_base = v; break;
      case kQRingSize: q.ring_size = uint32_t(v); break;
      case kQNode:
        q.node = int(v);
        cmp_.runnable_changed(q);
        break;
      case kQRptrAddr: q.rptr_addr = v; break;
      case kQPriority:
        q.priority = uint32_t(v);
        cmp_.runnable_changed(q);
        break;
      case kQPageTable: q.pt_root = q.ctx_root = v; break;
      case kQSignalLog: q.signal_log = v; break;
      case kQWaitLog: q.wait_log = v; break;
      case kQLogEntries: q.log_entries = uint32_t(v); break;
      case kQEnable:
        q.enabled = v & 1;
        q.rptr = q.wptr = 0;
        q.faulted = false;
        cmp_.runnable_changed(q);
        if (q.enabled) cmp_.queue_enabled(qi);
        break;
    }
    return;
  }
  if (off >= kDoorbellBase && off < kDoorbellBase + 8 * uint64_t(cmp_.queue_count())) {
    cmp_.doorbell(int((off - kDoorbellBase) / 8), v);
    return;
  }
}

}  // namespace gpumodel
