// The CMP's registers in BAR0: the native fence table's window, the firmware's configuration (event
// ring, acknowledgements, shadow MVs, the system process's page tables), the HW queue blocks and their
// doorbells. Each register's write goes through an operation of the CMP that keeps its state whole: a
// queue's node, priority or enable re-lists it on its node's run list.
#include "hw_model/gpu/cmp.h"
#include "hw_model/gpu/regs.h"

namespace gpumodel {

namespace {
using A = RegisterTable;
// A configuration register backed by one field of Cmp::Config.
template <typename T>
void config_reg(RegisterTable::Block& b, uint64_t off, const char* name, T& field) {
  b.reg(
      off, name, A::RW, [&field](unsigned) { return uint64_t(field); },
      [&field](unsigned, uint64_t v, unsigned) { field = T(v); });
}
}  // namespace

void Cmp::edit_queue(unsigned q, const std::function<void(HwQueue&)>& edit) {
  HwQueue& hq = queues_.at(q);
  edit(hq);
  runnable_changed(hq);
}

void Cmp::set_fence_flags(uint32_t slot, uint32_t flags) {
  FenceEntry* f = slot_entry(slot);
  if (!f) return;
  f->flags = flags;
  f->last_signaled = 0;  // a (re)created or destroyed fence starts with no signal history
  fence_names_[slot].signaller_node = -1;
  if (!f->valid()) {
    f->gpu_waiters.clear();
    set_fence_xid(slot, 0);
  }
}

void Cmp::map_registers(RegisterTable& t) {
  using namespace regs;
  auto& fences = t.single();
  fences.reg(
      kFenceSelect, "FENCE_SELECT", A::RW, [this](unsigned) { return uint64_t(select_); },
      [this](unsigned, uint64_t v, unsigned) { select_ = uint32_t(v); });
  fences.reg(
      kFenceCvAddr, "FENCE_CV_ADDR", A::RW,
      [this](unsigned) {
        const FenceEntry* f = fence(select_);
        return f ? f->cv_addr : 0;
      },
      [this](unsigned, uint64_t v, unsigned) {
        if (FenceEntry* f = slot_entry(select_)) f->cv_addr = v;
      });
  fences.reg(
      kFenceMvAddr, "FENCE_MV_ADDR", A::RW,
      [this](unsigned) { return fence(select_) ? fence_names_[select_].mv_addr : 0; },
      [this](unsigned, uint64_t v, unsigned) {
        if (fence(select_)) fence_names_[select_].mv_addr = v;
      });
  fences.reg(kFenceHandle, "FENCE_HANDLE", A::W, nullptr, [this](unsigned, uint64_t v, unsigned) {
    if (fence(select_)) fence_names_[select_].handle = uint32_t(v);
  });
  fences.reg(
      kFenceFlags, "FENCE_FLAGS", A::RW,
      [this](unsigned) {
        const FenceEntry* f = fence(select_);
        return uint64_t(f ? f->flags : 0);
      },
      [this](unsigned, uint64_t v, unsigned) { set_fence_flags(select_, uint32_t(v)); });
  fences.reg(kFenceXid, "FENCE_XID", A::W, nullptr,
             [this](unsigned, uint64_t v, unsigned) { set_fence_xid(select_, uint32_t(v)); });
  fences.reg(kFenceMvUpdate, "FENCE_MV_UPDATE", A::W, nullptr,
             [this](unsigned, uint64_t v, unsigned) { mv_update(select_, v); });
  fences.reg(kFenceNotify, "FENCE_NOTIFY", A::W, nullptr,
             [this](unsigned, uint64_t v, unsigned) { cpu_notify(uint32_t(v)); });
  fences.reg(kXDoorbell, "XDOORBELL", A::W, nullptr,
             [this](unsigned, uint64_t v, unsigned) { xdoorbell(uint32_t(v)); });
  fences.reg(kMmuInvalidate, "MMU_INVALIDATE", A::W, nullptr,
             [this](unsigned, uint64_t v, unsigned) { invalidate_tlbs(v); });
  config_reg(fences, kFenceAckAddr, "FENCE_ACK_ADDR", cfg.ack_addr);
  config_reg(fences, kShadowMvBase, "SHADOW_MV_BASE", cfg.shadow_base);
  config_reg(fences, kEventRingBase, "EVENT_RING_BASE", cfg.ring_base);
  config_reg(fences, kEventRingSize, "EVENT_RING_SIZE", cfg.ring_size);
  config_reg(fences, kEventRingWptrAddr, "EVENT_RING_WPTR_ADDR", cfg.ring_wptr_addr);
  config_reg(fences, kEventRingRptr, "EVENT_RING_RPTR", cfg.ring_rptr);
  config_reg(fences, kMmuSystemRoot, "MMU_SYSTEM_ROOT", cfg.system_root);
  config_reg(fences, kXDoorbellTarget, "XDOORBELL_TARGET", cfg.xdoorbell_target);
  fences.reg(
      kFenceIrqMode, "FENCE_IRQ_MODE", A::RW,
      [this](unsigned) { return uint64_t(cfg.names_queue ? kFenceIrqNamesQueue : 0); },
      [this](unsigned, uint64_t v, unsigned) {
        cfg.names_queue = (v & kFenceIrqNamesQueue) != 0;
        // Signallers are recorded from here on (none was while raises named no queue).
        track_signaller_ = scope_signaller_ && cfg.names_queue;
        for (FenceNames& n : fence_names_) n.signaller_node = -1;
      });

  const unsigned n = unsigned(queues_.size());
  // A queue register backed by one field of HwQueue; every write re-lists the queue (a no-op unless what
  // HwQueue::runnable() reads, its node or its priority moved).
  auto& qb = t.block(kQueueBase, kQueueStride, n);
  auto field = [&](uint64_t off, const char* name, auto member) {
    qb.reg(
        off, name, A::RW, [this, member](unsigned q) { return uint64_t(queues_[q].*member); },
        [this, member](unsigned q, uint64_t v, unsigned) {
          edit_queue(q, [&](HwQueue& h) { h.*member = std::remove_reference_t<decltype(h.*member)>(v); });
        });
  };
  field(kQRingBase, "Q_RING_BASE", &HwQueue::ring_base);
  field(kQRingSize, "Q_RING_SIZE", &HwQueue::ring_size);
  field(kQNode, "Q_NODE", &HwQueue::node);
  field(kQRptrAddr, "Q_RPTR_ADDR", &HwQueue::rptr_addr);
  field(kQPriority, "Q_PRIORITY", &HwQueue::priority);
  field(kQSignalLog, "Q_SIGNAL_LOG", &HwQueue::signal_log);
  field(kQWaitLog, "Q_WAIT_LOG", &HwQueue::wait_log);
  field(kQLogEntries, "Q_LOG_ENTRIES", &HwQueue::log_entries);
  qb.reg(
      kQPageTable, "Q_PAGE_TABLE", A::RW, [this](unsigned q) { return queues_[q].pt_root; },
      [this](unsigned q, uint64_t v, unsigned) {
        edit_queue(q, [v](HwQueue& h) { h.pt_root = h.ctx_root = v; });  // a new context starts in its space
      });
  qb.reg(
      kQEnable, "Q_ENABLE", A::RW, [this](unsigned q) { return uint64_t(queues_[q].enabled); },
      [this](unsigned q, uint64_t v, unsigned) {
        edit_queue(q, [v](HwQueue& h) {
          h.enabled = v & 1;
          h.rptr = h.wptr = 0;
          h.faulted = false;
        });
        if (v & 1) queue_enabled(int(q));
      });
  // Read-to-flush (F17's barrier on the OS side): the completion leaves once the queue's log writes
  // issued so far are visible.
  qb.reg(kQLogFlush, "Q_LOG_FLUSH", A::R, [this](unsigned q) {
    flush_logs(queues_[q]);
    return uint64_t(1);
  });
  t.block(kDoorbellBase, kDoorbellStride, n)
      .reg(0, "DOORBELL", A::W, nullptr, [this](unsigned q, uint64_t v, unsigned) { doorbell(int(q), v); });
}

}  // namespace gpumodel
