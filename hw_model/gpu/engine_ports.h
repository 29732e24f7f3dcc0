// The two narrow interfaces between an engine (Node) and the CMP, so that neither reaches into the
// other's state and each can be tested alone against a stub of the other (tests/test_engine_node.cpp).
//
//  * CmpPort: what an engine asks of the CMP. The queue an engine runs is the CMP's: the engine reads it
//    (a const HwQueue) and changes it only through the operations below, each of which keeps the CMP's
//    run lists in step, so no caller has to remember to re-list a queue. The fence table is read-only.
//  * EnginePort: what the CMP (and through it BAR0) asks of an engine: new work, a preemption, a reset,
//    the barrier's flush of the engine's writes (F7), the OS's flush of its log entries (F17), a TLB
//    invalidation.
#pragma once
#include <cstdint>
#include <vector>

#include <systemc>

#include "hw_model/gpu/fence_table.h"
#include "hw_model/gpu/hw_queue.h"
#include "hw_model/gpu/write_buffer.h"

namespace gpumodel {

// A WAIT the engine found unresolved (CV < value): the queue blocks on the GPU (F5). `logged`: its
// logged form, whose WAIT_UNBLOCKED entry the CMP writes when it unblocks the queue (F16).
struct BlockedWait {
  uint32_t slot = 0;
  uint64_t value = 0;
  bool logged = false;
  uint32_t seq = 0, handle = 0;
  uint64_t observed = 0;  // GPU timestamp when the engine saw the wait unresolved
};

class CmpPort {
 public:
  // The run list of engine `node`. pick: the next queue for the idle engine (null: none runnable).
  // should_switch: the running queue gives way at this packet boundary (a higher priority is runnable,
  // or its time slice, counted from `since`, is over with an equal one waiting). other_runnable: a
  // queue other than `running` could run on the engine.
  virtual const HwQueue* pick(int node) = 0;
  virtual bool should_switch(int node, const HwQueue& running, const sc_core::sc_time& since) const = 0;
  virtual bool other_runnable(int node, const HwQueue& running) const = 0;
  // What an engine does to a queue; each re-lists it. executed: `bytes` more of the ring ran (rptr).
  // set_context: a SET_PAGE_TABLE installed `root` as the running context's space. fault_queue: the
  // engine stopped the queue at its packet. block: an unresolved WAIT; the CMP re-checks the fence and
  // unblocks the queue on the GPU (F5). drop_rest: a preemption gives back the rest of the ring (the
  // KMD resubmits it; a blocked WAIT is forgotten). reset_queue: an engine reset empties the queue
  // (as drop_rest, and clears a fault).
  virtual void executed(const HwQueue& q, uint64_t bytes) = 0;
  virtual void set_context(const HwQueue& q, uint64_t root) = 0;
  virtual void fault_queue(const HwQueue& q) = 0;
  virtual void block(const HwQueue& q, const BlockedWait& w) = 0;
  virtual void drop_rest(const HwQueue& q) = 0;
  virtual void reset_queue(const HwQueue& q) = 0;
  virtual std::vector<const HwQueue*> queues_of(int node) const = 0;  // the queues mapped to the engine
  // An engine's interrupt (INTERRUPT, FENCE, a preemption, a page fault): an event entry and MSI.
  virtual void raise_interrupt(uint32_t vector, int node) = 0;
  virtual void invalidate_tlbs(uint64_t root) = 0;  // FLUSH_TLB: every TLB of the adapter
  // Native fences. fence: a slot's entry (null: none). system_root: the GPU VA space of the fence's
  // addresses (F10). check_mv_addr: the MV an engine's conditional check reads (F3): the CMP's shadow,
  // or, with cmp.mv_source = memory, the OS's own. fence_written: an engine wrote the fence's CV and
  // checked it, `interrupt` its verdict; `logged_by`: the queue whose signal log holds it (F19).
  virtual const FenceEntry* fence(uint32_t slot) const = 0;
  virtual uint64_t system_root() const = 0;
  virtual bool mv_from_memory() const = 0;
  virtual uint64_t check_mv_addr(uint32_t slot) const = 0;
  virtual void fence_written(uint32_t slot, uint64_t value, bool interrupt, const HwQueue* logged_by = nullptr) = 0;

 protected:
  ~CmpPort() = default;
};

class EnginePort {
 public:
  virtual void kick(const HwQueue& q) = 0;  // the queue has new work (a doorbell)
  virtual void request_preempt() = 0;       // taken at the next DMA-packet boundary or preemption point
  // An engine reset (`adapter`: part of an adapter reset, which takes `duration` and cannot fail).
  virtual void request_reset(bool adapter, const sc_core::sc_time& duration) = 0;
  virtual uint32_t status() const = 0;  // regs::kNSt* bits
  virtual const sc_core::sc_event& reset_done_event() const = 0;
  // The CMP's barrier (F7): snapshot the writes posted so far into `f` (done when the last leaves the
  // buffer; flush_event() is notified), and when the DMA writes issued so far are visible.
  virtual void request_flush(WriteBuffer::Flush& f) = 0;
  virtual const sc_core::sc_event& flush_event() const = 0;
  virtual sc_core::sc_time dma_visible() const = 0;
  virtual void flush_logs() = 0;                   // push out the log entries; returns once visible
  virtual void invalidate_tlb(uint64_t root) = 0;  // root 0: every entry

 protected:
  ~EnginePort() = default;
};

}  // namespace gpumodel
