// VidSch's packet-scheduling path (TDR in Windows 8 and later, SPEC T1-T10), beside the HW-queue path: per node a
// software queue of DMA packets, each with a SubmissionFenceId that grows per node; at most vidsch.hw_queue_depth of
// them in the node's hardware queue (the KMD's ring). The ISR reports DMA_COMPLETED with the fence ID the hardware
// wrote and the DPC retires packets up to it; DMA_PREEMPTED returns what did not complete to the software queue.
//
// The watchdog is an event, not a poll: one scheduler worker thread sleeps until the earliest deadline
// of any node. A packet that has run a quantum (vidsch.quantum_ms) gets a preemption request
// (DxgkDdiPreemptCommand, T3 step 1); a preemption not done within TdrDelay (vidsch.tdr_delay_ms) is a
// timeout (step 2), handed to the TDR worker thread, which runs the rest of the sequence on every node of the
// dependent engine group the driver reports (DxgkDdiQueryDependentEngineGroup: the nodes sharing the hung node's
// pipe, node.pipe; the hung node alone by default):
//   3 snapshot of last submitted / last completed and the group's interrupts ignored, at device IRQL
//   4 stop if no packet is outstanding       5 flush DPCs      6 prepare (level-0 DxgkDdiCollectDbgInfo,
//   DxgkDdiQueryEngineStatus: a node not responsive is not reset alone, the adapter is, T9)
//   7 DxgkDdiResetEngine      8 validate LastAbortedFenceId (T4: 0x119 when it is outside the snapshot's range,
//     or neither an ID still in the hardware queue nor the last completed one)
//   9 recover: completed ID from the reset (T5); the hung node's aborted packets' devices in error state (a
//     pipe neighbour's aborted render packets are resubmitted: A, its work did not hang); packets
//     submitted too late resubmitted, paging ones first with their IDs, render ones with new IDs (T6);
//     a paging packet aborted -> adapter-wide reset, the owners of its allocations in error (T7).
// A failed reset, or a driver without SupportPerEngineTDR, resets the adapter (DxgkDdiResetFromTimeout,
// DxgkDdiRestartFromTimeout; TdrReason 9 when an engine reset was promoted, T9); BACO loses the local memory, and
// VidMm restores it after the restart (`vram_lost`, `restore`: only paging packets run meanwhile). More than
// vidsch.tdr_limit_count timeouts within vidsch.tdr_limit_time_ms: bug check 0x116.
//
// Parameters: vidsch.hw_queue_depth, vidsch.quantum_ms, vidsch.tdr_delay_ms, vidsch.tdr_prepare_us,
// vidsch.tdr_limit_count, vidsch.tdr_limit_time_ms. Trace: <adapter>.vidsch.tdr_nodeN (the sequence's
// current step), added at a node's first step.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <systemc>

#include "hw_model/core/params.h"
#include "hw_model/core/vcd.h"
#include "hw_model/gpu/packets.h"
#include "kernel_stub/cpu/cpu.h"
#include "kernel_stub/dxgkrnl/vidmm.h"

namespace gpumodel {

class Kmd;

// DXGKARG_RESETENGINE: in NodeOrdinal, EngineOrdinal; out LastAbortedFenceId and (TDR in Windows 8 and later) the
// LastCompletedFenceId the driver keeps.
struct DxgkResetEngineArgs {
  uint32_t node_ordinal = 0, engine_ordinal = 0;
  uint64_t last_aborted_fence_id = 0, last_completed_fence_id = 0;
};

// Adds `g` after what `slot` already calls (monitors and scenarios observe the same notifications).
template <typename R, typename... A, typename G>
void chain(std::function<R(A...)>& slot, G g) {
  auto prev = slot;
  slot = [prev, g](A... a) {
    if (prev) prev(a...);
    g(a...);
  };
}

// A paging operation (DXGKARG_BUILDPAGINGBUFFER, the operations used): a transfer copies, a fill
// writes zeros (from a zero page); UpdatePageTable writes page-table entries (DXGK_OPERATION_UPDATE_PAGE_TABLE,
// followed by DXGK_OPERATION_FLUSH_TLB of `root`); NotifyAlloc (DXGK_OPERATION_NOTIFY_ALLOC, WDDM 3.2,
// Allocation notifications) tells the driver an allocation mapped at [dst, dst + bytes) of the paging process's VA is
// about to be evicted or unmapped from the IOMMU. `wait_fence`/`wait_value`: the operation waits on the
// GPU for a fence first (VidMm's dependency on the allocation's last writer); wait_value 0 = none.
struct DxgkPagingOp {
  enum Kind {
    Transfer,
    Fill,
    Timestamp,
    UpdatePageTable,
    NotifyAlloc
  } kind = Transfer;                                                         // Timestamp: the GPU time to dst
  enum Notify { NotifyEviction, NotifyIoMmuUnmap } notify = NotifyEviction;  // DXGK_BUILDPAGINGBUFFER_NOTIFYALLOC
  std::vector<PteWrite> entries;                                             // UpdatePageTable
  uint64_t root = 0;  // UpdatePageTable: the space whose TLBs are flushed
  uint64_t src = 0, dst = 0, bytes = 0;
  uint32_t fill_pattern = 0;  // Fill: DXGK_BUILDPAGINGBUFFER_FILL::FillPattern, repeated over `bytes`
  FenceVa wait_fence;         // as the paging process's packets name it
  uint64_t wait_value = 0;
};

struct SchedDevice {
  int id = 0;
  bool system = false;     // the system device (VidMm's paging): never put in error state (T7)
  bool error = false;      // DXGI_ERROR_DEVICE_REMOVED: its packets are dropped, new ones refused
  bool destroyed = false;  // closed by its process: its packets are dropped (not an error)
  int process = 1;         // its process's GPU VA space (VidMm::space): 0 for the system device
  bool lost() const { return error || destroyed; }
};

struct SchedContext {  // DXGKARG_CREATECONTEXT, the fields used
  int id = 0;
  SchedDevice* device = nullptr;
  uint32_t node_ordinal = 0;
  uint32_t engine_affinity = 1;  // 1 << EngineOrdinal (T2)
};

struct Allocation {  // what a paging packet references (VidMm), and which device owns it
  uint32_t handle = 0;
  SchedDevice* owner = nullptr;
  uint64_t address = 0, bytes = 0;
};

struct DmaPacket {
  uint64_t seq = 0;  // submission order (unique)
  SchedContext* ctx = nullptr;
  bool paging = false;
  PacketWriter commands;
  std::vector<const Allocation*> refs;  // paging: the allocations it references
  uint64_t fence_id = 0;                // the current SubmissionFenceId (0: never submitted)
  uint64_t original_fence_id = 0;       // its first one
  unsigned submissions = 0;
  bool reuse_id = false;  // resubmit with fence_id (a paging packet after an engine reset, T6)
  bool first = false;     // queued ahead of the others (SubmitPaging's `first`)
  enum State { Queued, InHardware, Completed, Aborted, Dropped } state = Queued;
  std::function<void(const DmaPacket&)> done;  // on completion, abort or drop (DPC or TDR worker)
};

// The sequence's steps, in order (T3), and the adapter-wide ones.
enum class TdrStep {
  Preempt,
  Timeout,
  Snapshot,
  ExitEmpty,
  FlushDpc,
  Prepare,
  ResetEngine,
  ResetReturned,
  Validate,
  Recovered,
  ResetFailed,
  Unresponsive,  // step 6: DxgkDdiQueryEngineStatus answered not responsive: no engine reset, the adapter's
  AdapterReset,
  AdapterRecovered,
  VramRestored  // after the adapter reset: VidMm restored the local memory's resident allocations (BACO lost them)
};
const char* to_string(TdrStep s);

struct TdrStepRecord {
  int node;  // the adapter's node index (-1: the adapter)
  TdrStep step;
  sc_core::sc_time at;
};

// Read-only notifications for monitors and scenarios (they must not drive the model).
struct PacketSchedObserver {
  std::function<void(const DmaPacket&, bool resubmission)> submitted;
  std::function<void(const DmaPacket&)> retired;  // completed, aborted or dropped
  // The scheduler's last completed fence ID of a node moved; `why` names the T5 rule.
  std::function<void(int node, uint64_t from, uint64_t to, const char* why)> completed_moved;
  std::function<void(const TdrStepRecord&)> step;
  // Step 8's inputs: what the KMD returned against the snapshot.
  std::function<void(int node, const DxgkResetEngineArgs& out, uint64_t snap_completed, uint64_t snap_submitted)>
      reset_returned;
  std::function<void(const SchedDevice&)> device_error;
  // A DMA_PREEMPTED's LastCompletedFenceId (from the DPC) beside the OS's last completed ID of the node then.
  std::function<void(int node, uint64_t reported, uint64_t os_completed)> preempted;
};

class PacketScheduler {
  using Pkt = std::shared_ptr<DmaPacket>;

 public:
  static void declare_params(ParamSet& ps);
  // `bug_check`: the OS's bug check (VidSch's; it stops the machine).
  PacketScheduler(const ParamSet& ps, Cpu& cpu, Vcd& vcd, const std::string& adapter,
                  std::function<void(uint32_t, std::vector<uint64_t>)> bug_check);
  void connect(Kmd& kmd) { kmd_ = &kmd; }
  PacketSchedObserver observer;
  // VidMm's part of an adapter reset (BACO loses the local memory): `vram_lost` right after DxgkDdiResetFromTimeout;
  // `restore` after the restart, while only paging packets run: it restores what was resident and redoes the paging
  // operations the reset aborted, and returns when they completed (false: nothing to restore).
  std::function<void()> vram_lost;
  std::function<bool()> restore;

  // Devices and contexts (D3DKMTCreateDevice / CreateContext). A context names a node of an engine.
  SchedDevice* CreateDevice(bool system = false, int process = 1);
  // D3DKMTDestroyDevice: what it has queued is dropped; a packet still in hardware is dropped when the
  // node gives it back (a completion, a preemption or a reset).
  void DestroyDevice(SchedDevice* d);
  SchedContext* CreateContext(SchedDevice* d, uint32_t node_ordinal, uint32_t engine_ordinal = 0);
  // VidMm: an allocation `owner` owns (referenced by paging packets).
  const Allocation* CreateAllocation(SchedDevice* owner, uint64_t address, uint64_t bytes);
  // A render packet from an app thread. False: the device is in error state (the packet is refused).
  bool SubmitRender(SchedContext* c, const PacketWriter& commands,
                    std::function<void(const DmaPacket&)> done = nullptr);
  // Around every submission (render or paging): runtime D3cold's held use (dxgkrnl/runtime_pm.h), which
  // powers a powered-off adapter on first. True before, false after.
  std::function<void(bool)> power_ref;
  // A paging packet of the system device on its context `c` (VidMm's transfer or fill, built by the KMD).
  // `first`: ahead of every queued packet not submitted `first` itself (VidMm's restore after an adapter reset).
  void SubmitPaging(SchedContext* c, const std::vector<DxgkPagingOp>& ops, std::vector<const Allocation*> refs,
                    std::function<void(const DmaPacket&)> done = nullptr, bool first = false);

  // From VidSch's ISR callback (DxgkCbNotifyInterrupt, device IRQL): the last completed ID moves at
  // once, so step 3's snapshot sees every completion the hardware reported before it.
  void isr_completed(int node, uint64_t fence_id);
  // From VidSch's DPC.
  void on_completed(int node, uint64_t fence_id);
  void on_preempted(int node, uint64_t last_completed);
  // From the ISR (DxgkCbNotifyInterrupt): the timed-out node's interrupts are ignored after step 3.
  bool ignoring(int node) const;

  // EngineOrdinal: the highest set bit of the context's EngineAffinity (T2).
  static uint32_t engine_of(const SchedContext* c);

  // Results.
  int nodes() const { return int(nodes_.size()); }
  uint64_t last_completed(int node) const { return nodes_.at(size_t(node)).last_completed; }
  uint64_t last_submitted(int node) const { return nodes_.at(size_t(node)).last_submitted; }
  const std::vector<TdrStepRecord>& steps() const { return steps_; }
  uint64_t timeouts() const { return timeouts_; }
  uint64_t engine_resets() const { return engine_resets_; }
  uint64_t adapter_resets() const { return adapter_resets_; }
  uint64_t packets_aborted() const { return aborted_; }
  uint64_t packets_resubmitted() const { return resubmitted_; }
  uint64_t preemptions() const { return preemptions_; }
  uint64_t ignored_interrupts() const { return ignored_; }
  uint64_t devices_in_error() const;
  uint32_t tdr_reason() const { return tdr_reason_; }  // 0 = none; 9 = TdrEngineTimeoutPromotedToAdapterReset
  uint64_t last_aborted_fence_id() const { return last_aborted_; }
  uint64_t last_reset_completed_fence_id() const { return last_reset_completed_; }
  bool active() const { return started_; }

  static constexpr uint32_t kTdrReasonPromoted = 9;  // TdrEngineTimeoutPromotedToAdapterReset (T9)
  // Why the adapter was reset: "" (never), "reset_failed" (T9), "paging_hit" (T7), "no_per_engine_tdr" (T1).
  const std::string& adapter_reset_cause() const { return adapter_cause_; }
  static constexpr uint32_t kBugCheckTdrFailure = 0x116;      // VIDEO_TDR_FAILURE
  static constexpr uint32_t kBugCheckSchedulerFault = 0x119;  // VIDEO_SCHEDULER_INTERNAL_ERROR
  static constexpr uint64_t kBadAbortedFenceId = 0xA;

 private:
  struct Node {
    int hw = 0;
    uint32_t node_ordinal = 0, engine_ordinal = 0;
    std::deque<Pkt> sw, inhw;
    uint64_t next_fence = 1, last_submitted = 0, last_completed = 0, next_preemption_fence = 1;
    bool ignore_irq = false, in_tdr = false, preempting = false;
    uint64_t head_seq = 0;
    sc_core::sc_time head_since = sc_core::SC_ZERO_TIME, deadline = sc_core::sc_max_time();
    Vcd::Id trace = Vcd::kNone;
  };
  void start();  // first use: the scheduler and TDR worker threads
  void worker();
  void tdr_worker();
  void pump(Node& n);
  void watch(Node& n);
  void rearm(Node& n);
  void tdr(Node& hung);
  struct Member {  // a node of the dependent engine group in the sequence
    Node* n = nullptr;
    uint64_t snap_submitted = 0, snap_completed = 0;
    DxgkResetEngineArgs a;
  };
  std::vector<Member> group_;  // a member: a run that stops meanwhile never unwinds the TDR thread
  // Adapter-wide reset: `error` devices go to error state; every other in-flight packet is resubmitted.
  // `hung`: the packet that timed out when no engine reset ran (it is aborted).
  void adapter_reset(uint32_t reason, const char* cause, std::set<SchedDevice*> error, const DmaPacket* hung);
  std::set<SchedDevice*> reset_error_;
  const DmaPacket* reset_hung_ = nullptr;
  Pkt submitting_;                             // the packet pump() is handing to the KMD
  std::set<SchedDevice*> app_devices() const;  // every device but the system device
  void record(Node* n, TdrStep s);
  void set_completed(Node& n, uint64_t to, const char* why);
  void retire(Node& n, const Pkt& p, DmaPacket::State s);
  void put_in_error(SchedDevice* d);
  // Puts `late` (in ring order) back at the front of the software queue as T6 says: paging packets first
  // (keeping their IDs when `keep_paging_ids`), then render packets of devices not in error.
  void requeue(Node& n, std::vector<Pkt> late, bool keep_paging_ids);
  Node& node_of(const SchedContext* c) { return nodes_.at(size_t(c->node_ordinal + (engine_of(c) * per_engine_))); }

  Cpu& cpu_;
  Vcd& vcd_;
  std::string adapter_;
  Kmd* kmd_ = nullptr;
  std::function<void(uint32_t, std::vector<uint64_t>)> bug_check_;
  bool bugchecked_ = false;
  size_t depth_;
  sc_core::sc_time quantum_, tdr_delay_, prepare_, limit_time_;
  uint64_t limit_count_;
  bool validate_aborted_;
  bool started_ = false;
  uint32_t per_engine_ = 1;
  std::vector<Node> nodes_;
  std::vector<std::unique_ptr<SchedDevice>> devices_;
  std::vector<std::unique_ptr<SchedContext>> contexts_;
  std::vector<std::unique_ptr<Allocation>> allocations_;
  uint64_t next_seq_ = 1;
  KEvent wake_, tdr_wake_;
  Vcd::Id adapter_trace_ = Vcd::kNone;
  std::deque<int> tdr_queue_;  // timed-out nodes waiting for the TDR worker
  bool adapter_resetting_ = false, pumping_ = false;
  bool restoring_ = false;  // VidMm restores after an adapter reset: only paging packets are submitted
  sc_core::sc_event pump_done_ev_;
  std::string adapter_cause_;
  std::deque<sc_core::sc_time> timeout_times_;  // within vidsch.tdr_limit_time_ms
  std::vector<TdrStepRecord> steps_;
  uint64_t timeouts_ = 0, engine_resets_ = 0, adapter_resets_ = 0, aborted_ = 0, resubmitted_ = 0, preemptions_ = 0;
  uint64_t ignored_ = 0;
  uint32_t tdr_reason_ = 0;
  uint64_t last_aborted_ = 0, last_reset_completed_ = 0;
  friend class VidSch;
};

}  // namespace gpumodel
