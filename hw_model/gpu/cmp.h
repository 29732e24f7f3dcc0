// Context management processor: owns the HW queues and the run list of every node, reacts to
// doorbells, arbitrates between the queues of a node (priority, then round robin with a time slice),
// and runs the native-fence firmware:
//  * a shadow MonitoredValue per fence in VRAM that the engines read for their conditional interrupt;
//  * MV updates in the F7 order: write the shadow MV, barrier against the engines' writes
//    (`cmp.barrier`), read CurrentValue, interrupt iff CV > MV; then acknowledge in memory (F8);
//  * GPU waits (F5): a queue blocked on (fence, value) is unblocked when an engine signals the fence
//    past the value, or the CPU notifies a change; no CPU round trip;
//  * interrupts: an entry in the event ring in system memory naming the fence by the global handle
//    the KMD programmed for its slot (or NULL), then MSI.
// A microcontroller: one firmware loop handles its work items in order, each costing CMP cycles.
//
// Parameters: cmp.*. Ports: isock (through the GPU fabric: VRAM, and up the link).
// Trace: gpu.cmp.state, gpu.cmp.decision (raise / suppress, from the engines' checks and MV updates).
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>

#include "hw_model/core/bus.h"
#include "hw_model/core/params.h"
#include "hw_model/core/register_table.h"
#include "hw_model/core/vcd.h"
#include "hw_model/gpu/engine_ports.h"
#include "hw_model/gpu/fence_table.h"
#include "hw_model/gpu/hw_queue.h"
#include "hw_model/gpu/mmu.h"
#include "hw_model/gpu/translating_master.h"

namespace gpumodel {

// The engines reach the CMP through CmpPort, and the CMP each engine through EnginePort (engine_ports.h).
class Cmp final : public sc_core::sc_module, public CmpPort {
 public:
  tlm_utils::simple_initiator_socket<Cmp> isock;
  static constexpr unsigned kFenceSlots = 65536;

  static void declare_params(ParamSet& ps);
  Cmp(sc_core::sc_module_name name, const ParamSet& ps, Vcd& vcd, int queues, const std::string& adapter = "gpu");

  void attach(EnginePort* n) {
    nodes_.push_back(n);
    last_pick_.push_back(-1);
    run_lists_.emplace_back();
  }
  const HwQueue& queue(int q) const { return queues_.at(size_t(q)); }
  int queue_count() const { return int(queues_.size()); }

  // Register side effects, called by BAR0 when the write arrives.
  void doorbell(int q, uint64_t wptr);
  void queue_enabled(int q);
  void set_msi(uint64_t addr, uint32_t data_base) {
    msi_addr_ = addr;
    msi_data_ = data_base;
  }
  // BAR0: the CMP's registers (fence table window, firmware configuration, HW queue blocks, doorbells),
  // each write an operation that keeps the CMP's state whole (cmp_registers.cpp).
  void map_registers(RegisterTable& t);
  // The fence table as the KMD programmed it (read-only: it changes through the registers).
  const FenceEntry* fence(uint32_t slot) const override { return slot < fences_.size() ? &fences_[slot] : nullptr; }
  // The slot's MV address and handle (KMD: kFenceMvAddr, kFenceHandle); slot < kFenceSlots.
  const FenceNames& fence_names(uint32_t slot) const { return fence_names_.at(slot); }
  void mv_update(uint32_t slot, uint64_t mv);  // KMD: DxgkDdiUpdateMonitoredValues, per fence
  void cpu_notify(uint32_t slot);              // KMD: CV changed by the CPU (F13 NotificationOnly)
  // F20: the KMD names a slot's cross-adapter fence id (0: none); a peer CMP rings the doorbell with one.
  void set_fence_xid(uint32_t slot, uint32_t xid);
  void xdoorbell(uint32_t xid);
  // KMD: a node's control register (regs::kNCtl*). A preemption request goes through the firmware, in
  // order with the doorbells before it (a ring's last doorbell is taken before its preemption); a reset
  // goes straight to the node's reset line.
  void node_control(int node, uint32_t v);
  // KMD: an adapter-wide reset: every node reset (none can refuse), every HW queue emptied; takes
  // cmp.adapter_reset_ms. Status: adapter_resetting().
  void adapter_reset();
  bool adapter_resetting() const { return adapter_resetting_; }
  // BAR0 kAdapterStatus kAdapterBusy: a node busy, preempting or resetting, a HW queue with commands not yet
  // executed (runnable or blocked on a fence), the firmware running or holding work (an interrupt on its
  // way), or an adapter reset under way.
  bool busy() const;
  // CmpPort: the engines' requests (see engine_ports.h).
  const HwQueue* pick(int node) override;
  bool should_switch(int node, const HwQueue& current, const sc_core::sc_time& since) const override;
  bool other_runnable(int node, const HwQueue& current) const override;
  void executed(const HwQueue& q, uint64_t bytes) override;
  void set_context(const HwQueue& q, uint64_t root) override;
  void fault_queue(const HwQueue& q) override;
  void block(const HwQueue& q, const BlockedWait& w) override;
  void drop_rest(const HwQueue& q) override;
  void reset_queue(const HwQueue& q) override;
  std::vector<const HwQueue*> queues_of(int node) const override;
  // An engine's INTERRUPT packet. regs::kMonitoredFenceSignalVector is a monitored fence's signal
  // interrupt: an event-ring entry naming the node, like a native fence's event (F12).
  void raise_interrupt(uint32_t vector, int node) override;
  // An engine wrote a fence (SIGNAL): `interrupt` is its conditional check's verdict (F3). `logged_by`:
  // the queue whose signal log holds the signal (a logged SIGNAL), so that with kFenceIrqNamesQueue the
  // event names that queue (F19); an unlogged signal's event names the fence (F12).
  void fence_written(uint32_t slot, uint64_t value, bool interrupt, const HwQueue* logged_by = nullptr) override;
  uint64_t check_mv_addr(uint32_t slot) const override {
    return mv_from_memory_ ? fence_names_[slot].mv_addr : shadow_mv_addr(slot);  // a slot fence() found valid
  }
  // GPU MMU: the firmware's addresses (fence CV/MV, shadow MVs, acknowledgements, event ring) are GPU VAs
  // of the system process (F10), cfg.system_root; a FLUSH_TLB or BAR0 kMmuInvalidate invalidates every
  // TLB of the adapter. A firmware page fault drops the access and is counted.
  uint64_t system_root() const override { return cfg.system_root; }
  void invalidate_tlbs(uint64_t root) override;
  GpuMmu& mmu() { return tm_.mmu(); }
  const GpuMmu& mmu() const { return tm_.mmu(); }
  uint64_t page_faults() const { return tm_.page_faults(); }
  uint64_t last_fault_va() const { return tm_.last_fault_va(); }
  // The firmware's configuration as the KMD programmed it through BAR0.
  struct Config {
    uint64_t system_root = 0;
    uint64_t ack_addr = 0, shadow_base = 0, ring_base = 0, ring_wptr_addr = 0;
    uint32_t ring_size = 0, ring_rptr = 0;
    bool names_queue = false;       // kFenceIrqMode: fence events of logged signals name the HW queue (F19)
    uint64_t xdoorbell_target = 0;  // F20: the peer's doorbell register (kXDoorbellTarget)
  };
  const Config& config() const { return cfg; }

  // BAR0 kQLogFlush: returns once every log write of queue `q` issued so far, the engine's and ours, is
  // visible (blocks the calling thread: the register read's completion).
  void flush_logs(HwQueue& q);
  uint64_t log_flushes() const { return log_flushes_; }
  // Observer (monitors only): the interrupt decision for a fence slot and value: an engine's signal
  // (`mv_check` false: raise iff its value > MV, F3) or the firmware's re-read of CV after an MV update
  // (`mv_check` true, F7 step 3).
  // After an MV update the firmware reports (mv_check true) once, raising or not (F7 step 3 off: no raise).
  std::function<void(uint32_t slot, uint64_t value, bool raise, bool mv_check)> on_fence_decision;
  std::function<void(uint32_t slot)> on_mv_update_queued;  // an MV update reached the firmware's queue
  // Observer (monitors only): a WAIT_UNBLOCKED entry the CMP wrote (as Node::on_log_entry).
  std::function<void(int queue, uint32_t type, uint64_t seq, const void* entry)> on_log_entry;
  uint64_t shadow_mv_addr(uint32_t slot) const { return cfg.shadow_base + 8ull * slot; }
  // cmp.mv_source = memory: the engines read the OS's MV location, there is no shadow (caps bit).
  bool mv_from_memory() const override { return mv_from_memory_; }
  bool combined_fence_events() const { return combined_events_; }  // cmp.fence_event_kinds = combined

  // Counters for results.
  uint64_t msi_sent() const { return msi_sent_; }
  uint64_t fence_interrupts() const { return fence_irqs_; }
  // F19: raises no queue's log explains, and those of them that named the signalling node (not every node).
  uint64_t unexplained_raises() const { return unexplained_; }
  uint64_t unexplained_named_node() const { return unexplained_node_; }
  bool events_dropped() const { return native_dropped_ || monitored_dropped_; }  // the event ring overflowed
  uint64_t suppressed() const { return suppressed_; }
  uint64_t mv_updates() const { return mv_updates_; }
  uint64_t gpu_unblocks() const { return unblocks_; }
  uint64_t xdoorbells_sent() const { return xdoorbells_sent_; }  // F20
  uint64_t xdoorbells_received() const { return xdoorbells_received_; }
  sc_core::sc_time last_msi_issued() const { return last_msi_; }
  // Probe: when the firmware last registered a queue blocked on a WAIT (after its re-read of CV).
  sc_core::sc_time last_wait_registered() const { return last_wait_registered_; }

 private:
  Config cfg;
  // Whoever changes what HwQueue::runnable() reads, or a queue's node or priority (BAR0's registers, the
  // engines' requests, the firmware), calls this after the change: it keeps the node's run list (below)
  // in step. Only the CMP's own code changes a queue.
  void runnable_changed(HwQueue& q);
  // An engine's queue, writable: one the CMP gave it (pick), so its id is in range (no check on the hot path).
  HwQueue& own(const HwQueue& q) { return queues_[size_t(q.id)]; }
  void forget_waiter(HwQueue& q);  // a reset or preemption dropped a queue blocked on a WAIT
  FenceEntry* slot_entry(uint32_t slot) { return slot < fences_.size() ? &fences_[slot] : nullptr; }
  // A BAR0 write to a queue's block: `edit` changes its fields, then the queue is re-listed.
  void edit_queue(unsigned q, const std::function<void(HwQueue&)>& edit);
  // kFenceFlags: (re)creates or destroys the selected slot; a destroyed slot loses its waiters and its
  // cross-adapter id (F20: it answers no doorbell).
  void set_fence_flags(uint32_t slot, uint32_t flags);
  struct Work {
    enum Kind { Doorbell, MvUpdate, QueueWait, FenceWritten, CpuNotify, Vector, Preempt, XDoorbell } kind;
    uint32_t slot;
    uint64_t value;
    HwQueue* q;
    bool irq;
  };
  void push(const Work& w);
  void firmware();  // SC_THREAD
  void run(const Work& w);
  void barrier();  // F7 step 2: every engine write issued before it began, and ours, is visible
  // Event entry + MSI. The caller has made `value` visible: the MV update read it from memory, a
  // signal's path barriers first.
  void raise_fence_interrupt(uint32_t slot, uint64_t value, const HwQueue* logged_by = nullptr);
  struct Event {  // an event-ring entry (regs: kEvent*)
    uint32_t type, handle;
    uint64_t value;
  };
  void raise_event(const Event& e);  // the entry (or a drop, counted by kind), the write index, MSI
  void write_wait_log(HwQueue& q);   // WAIT_UNBLOCKED, as the queue unblocks
  uint64_t tick_ps_;
  sc_core::sc_time log_visible_ = sc_core::SC_ZERO_TIME;
  uint64_t log_flushes_ = 0;
  void send_msi(uint32_t vector);
  void unblock_satisfied(FenceEntry& f, uint32_t slot, uint64_t cv);
  void decision(bool raise);

  // The firmware's bus master: its addresses are GPU VAs of the system process (cfg.system_root).
  TranslatingMaster<Cmp> tm_;
  BusMaster<Cmp>& bus_;
  sc_core::sc_time post_va(uint64_t va, const void* src, unsigned len) {  // the visibility time
    return tm_.post(cfg.system_root, va, src, len);
  }
  uint64_t read64_va(uint64_t va) {
    bool ok = false;
    return tm_.read64(cfg.system_root, va, ok);
  }
  Vcd& vcd_;
  std::string adapter_;  // "gpu", "igpu": the traces' prefix
  std::vector<HwQueue> queues_;
  std::vector<EnginePort*> nodes_;
  std::vector<int> last_pick_;  // per node, for round robin
  // Per node, the runnable queues: by priority (highest first), the ids of each priority in id order
  // (round robin takes the first id after the last pick, wrapping). A priority with none is erased.
  struct RunList {
    std::map<uint32_t, std::set<int>, std::greater<uint32_t>> by_priority;
    size_t count = 0;
  };
  std::vector<RunList> run_lists_;
  // Where each queue is listed: node (-1: not listed) and the priority it is listed under.
  struct Listed {
    int node = -1;
    uint32_t priority = 0;
  };
  std::vector<Listed> listed_;
  std::vector<FenceEntry> fences_;
  std::vector<FenceNames> fence_names_;  // by slot, beside fences_
  uint32_t select_ = 0;
  std::deque<Work> fifo_;
  sc_core::sc_event fw_ev_;
  sc_core::sc_time period_, timeslice_, barrier_cost_;
  sc_core::sc_time own_last_visible_ = sc_core::SC_ZERO_TIME;
  uint64_t doorbell_cycles_, interrupt_cycles_, mv_update_cycles_, decision_cycles_;
  bool use_barrier_, step3_, mv_from_memory_, report_set_, null_queue_, scope_signaller_, combined_events_;
  bool track_signaller_ = false;             // scope_signaller_ and raises name queues: fence_written keeps the node
  std::vector<WriteBuffer::Flush> flushes_;  // the barrier's, one per node
  uint64_t msi_addr_ = 0;
  uint32_t msi_data_ = 0;
  std::map<uint32_t, std::vector<uint32_t>> xid_slots_;  // F20: cross-adapter fence id -> slots
  uint64_t xdoorbells_sent_ = 0, xdoorbells_received_ = 0;
  uint64_t unexplained_ = 0, unexplained_node_ = 0;
  uint64_t msi_sent_ = 0, fence_irqs_ = 0, suppressed_ = 0, mv_updates_ = 0, unblocks_ = 0, acks_ = 0;
  uint32_t ring_wptr_ = 0;
  uint16_t native_dropped_ = 0, monitored_dropped_ = 0;  // regs::kEventRingWptrAddr's drop counts
  sc_core::sc_time last_msi_ = sc_core::SC_ZERO_TIME, last_wait_registered_ = sc_core::SC_ZERO_TIME;
  Vcd::Id busy_id_, decision_id_;
  sc_core::sc_time adapter_reset_time_;
  bool adapter_resetting_ = false;
  bool in_work_ = false;  // the firmware is running a work item (taken from fifo_)
  sc_core::sc_event adapter_reset_ev_;
  void adapter_resetter();  // SC_THREAD
};

}  // namespace gpumodel
