// The CMP's fence table as the engines read it: one entry per native fence slot, as the KMD programmed
// it through BAR0 (the CMP's registers). The engines never change it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "hw_model/gpu/hw_queue.h"

namespace gpumodel {

// The HW queues blocked on a fence's WAIT, usually none: a pointer in the entry, a list on the heap only
// once one has waited.
class WaitingQueues {
 public:
  bool empty() const { return !q_ || q_->empty(); }
  size_t size() const { return q_ ? q_->size() : 0; }
  HwQueue* operator[](size_t i) const { return (*q_)[i]; }
  void push_back(HwQueue* q) {
    if (!q_) q_ = std::make_unique<std::vector<HwQueue*>>();
    q_->push_back(q);
  }
  void swap_remove(size_t i) {  // removes the i-th (the last takes its place)
    (*q_)[i] = q_->back();
    q_->pop_back();
  }
  void remove(const HwQueue* q) {
    if (q_) q_->erase(std::remove(q_->begin(), q_->end(), q), q_->end());
  }
  void clear() { q_.reset(); }

 private:
  std::unique_ptr<std::vector<HwQueue*>> q_;
};

// What a signal reads and writes of a fence slot: 32 bytes, half a host cache line, so 16,384 fences'
// entries (512 KB) stay in a core's cache beside their values. The MV's address and
// the handle, read only off that path, sit in FenceNames.
struct alignas(32) FenceEntry {
  uint64_t cv_addr = 0;
  uint64_t last_signaled = 0;  // the highest value an engine reported signalling (its CV may be in flight)
  WaitingQueues gpu_waiters;
  uint32_t flags = 0;
  uint32_t xid = 0;  // F20: cross-adapter fence id (kFenceXid; 0: none)
  bool valid() const { return flags & 1; }
};
static_assert(sizeof(FenceEntry) == 32, "a fence entry is half a host cache line");
struct FenceNames {
  uint64_t mv_addr = 0;
  uint32_t handle = 0;  // hGlobalNativeFence: what an event entry names (F11: the slot is reused, it is not)
  // The node whose logged signal reported the fence's highest value (-1: none, or an unlogged signal):
  // the engine an interrupt no queue's log explains names (cmp.unexplained_irq_scope).
  int32_t signaller_node = -1;
};
static_assert(sizeof(FenceNames) == 16, "the node fits the entry's padding");

}  // namespace gpumodel
