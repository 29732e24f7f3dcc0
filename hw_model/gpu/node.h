// A GPU engine (node): fetches command packets from the ring of the HW queue the CMP gives it, decodes
// and executes them. Two processes: a fetcher that prefetches ring bytes into a FIFO through TLM reads
// (overlapping with execution), and an executor. A DMA unit with a fixed number of outstanding chunk
// transfers serves COPY. The node's posted writes go through its write buffer: BARRIER waits until
// every earlier write is visible.
//
// A malformed packet (decode_packet's errors) or one naming a fence slot the CMP does not hold is a
// fault, as a real engine raises one: the node stops the queue at that packet (its read pointer stays
// there; re-enabling the queue clears it), counts the fault and keeps a message naming the node, queue,
// ring offset and reason for the results; the model runs on.
//
// Packet scheduling (TDR in Windows 8 and later): a FENCE ends each DMA packet. A preemption request (BAR0 kNControl)
// is taken at the next DMA-packet boundary, or, with node.preemption = mid_command, also at the next preemption point
// inside a COMPUTE (every node.preempt_point_cycles from its start, unless the dispatch disabled preemption) and on a
// blocked WAIT: the node saves its state (node.preempt_save_ns), drops the rest of its ring (the KMD resubmits it), and
// raises its preemption vector. A reset request stops the node wherever it is (a COMPUTE, a blocked WAIT, a copy),
// empties every HW queue mapped to it and takes node.reset_ns; the last completed fence ID stays readable.
// A node whose node.reset_fails_on resets have succeeded fails the next ones: its reset leaves it hung
// (status reset-failed) until an adapter reset.
//
// Parameters: node.decode_cycles, node.fetch_bytes, node.fifo_bytes, node.dma_chunk_bytes,
// node.dma_outstanding, node.barrier_ns, node.barrier_system_ns, node.preemption, node.preempt_*,
// node.reset_ns, node.reset_fails_on, gpu.engine_clock_mhz. Each is read per instance: gpu.node1.reset_ns,
// where set, before node.reset_ns; gpu.node1.engine_clock_mhz before gpu.engine_clock_mhz.
// Ports: isock (to the GPU fabric). Trace: gpu.nodeN.state (idle / fetch / execute / wait / fault /
// preempt / reset / hung: Node::State), queue, faults, fence (last completed fence ID).
//
// The engine's state is two enumerations: State, what the executor does (the waveform's), and Life,
// where a reset has it (running, stopping, stopped, hung). Beside them stand requests that are latched
// until taken (a preemption, a reset, a page fault to report) and the packet position (inside a DMA
// packet or at its boundary), not states of their own. Its parts: the write buffer, the log
// write-combiner and the DMA engine are classes of their own (write_buffer.h, log_combiner.h,
// dma_engine.h), each tested alone; the bus master behind the GPU MMU is shared with the CMP
// (translating_master.h); the CMP is reached only through CmpPort (engine_ports.h).
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>

#include "hw_model/core/bus.h"
#include "hw_model/core/params.h"
#include "hw_model/core/power.h"
#include "hw_model/core/vcd.h"
#include "hw_model/gpu/dma_engine.h"
#include "hw_model/gpu/engine_kind.h"
#include "hw_model/gpu/engine_ports.h"
#include "hw_model/gpu/hw_queue.h"
#include "hw_model/gpu/log_combiner.h"
#include "hw_model/gpu/mmu.h"
#include "hw_model/gpu/packets.h"
#include "hw_model/gpu/regs.h"
#include "hw_model/gpu/ring_fetcher.h"
#include "hw_model/gpu/translating_master.h"
#include "hw_model/gpu/write_buffer.h"

namespace gpumodel {

// The engine reaches the CMP only through CmpPort, and the CMP the engine only through EnginePort
// (engine_ports.h): the queue it runs is the CMP's, read here and changed through the port.
class Node : public sc_core::sc_module, public EnginePort {
 public:
  tlm_utils::simple_initiator_socket<Node> isock;

  static void declare_params(ParamSet& ps);
  // `adapter`: the adapter's key ("gpu", "igpu"): its own <adapter>.engine_clock_mhz and
  // <adapter>.timestamp_tick_ps, and the prefix of its trace names.
  Node(sc_core::sc_module_name name, const ParamSet& ps, Vcd& vcd, int ordinal, CmpPort& cmp,
       const std::string& adapter = "gpu");

  int ordinal() const { return ordinal_; }
  EngineKind engine_kind() const { return kind_; }                     // (sc_object::kind() is the SystemC class name)
  std::string label() const { return engine_label(ordinal_, kind_); }  // "node 2 (copy)"
  // EnginePort: the CMP's requests (see engine_ports.h).
  void kick(const HwQueue& q) override;
  void request_preempt() override;
  void request_reset(bool adapter = false, const sc_core::sc_time& duration = sc_core::SC_ZERO_TIME) override;
  uint32_t status() const override;
  uint32_t pipe() const { return uint32_t(pipe_ < 0 ? ordinal_ + 16 : pipe_); }  // own pipe: above node.pipe's range
  uint64_t last_fence() const { return last_fence_; }
  void set_preempt_vector(uint32_t v) { preempt_vector_ = v; }
  uint32_t preempt_vector() const { return preempt_vector_; }
  // Performance counters (probes): time spent executing COMPUTE so far (the partial one included),
  // preemptions taken, resets completed.
  sc_core::sc_time compute_time() const;
  // Time the engine was busy so far (fetching or executing; not idle, blocked on a WAIT, faulted, preempting,
  // resetting or hung), the present state's share included.
  sc_core::sc_time busy_time() const {
    const bool busy = state_ == State::Fetch || state_ == State::Execute;
    return busy_acc_ + (busy ? sc_core::sc_time_stamp() - state_since_ : sc_core::SC_ZERO_TIME);
  }
  // Power (energy model): time in each executor state; power-gated stretches and the wakes they cost.
  const StateClock& clock() const { return clock_; }
  static const char* state_name(size_t s) { return kStateNames[s]; }
  static bool active_state(size_t s) {
    return s == size_t(State::Fetch) || s == size_t(State::Execute) || s == size_t(State::Wake);
  }
  static bool gated_state(size_t s) { return s == size_t(State::Gated); }
  static size_t idle_state() { return size_t(State::Idle); }
  static size_t gated_state() { return size_t(State::Gated); }
  static size_t states() { return kStates; }
  uint64_t gate_wakes() const { return gate_wakes_; }
  uint64_t preemptions() const { return preemptions_; }
  uint64_t resets() const { return resets_; }
  // When the node first started a queue after its last successful reset (zero: not since).
  sc_core::sc_time resumed_at() const { return resumed_at_; }
  const sc_core::sc_event& reset_done_event() const override { return reset_done_ev_; }

  // Performance counters (readable through BAR0).
  uint64_t packets_executed() const { return packets_; }
  sc_core::sc_time last_dma_read() const { return dma_.last_read(); }
  sc_core::sc_time engine_period() const { return period_; }
  // For the CMP's barrier (F7), scoped to the writes issued before it began: how many writes have
  // entered the write buffer so far; (blocking the calling thread until the first `seq` of them have
  // left it) the time by which all of them are visible; and when the DMA writes issued so far are.
  using WriteFlush = WriteBuffer::Flush;
  // Snapshots the writes posted so far into `f`; done at once if they have all left the buffer, else
  // when the last of them leaves (flush_event() is notified). `f` must live until done.
  void request_flush(WriteFlush& f) override { wb_.request_flush(f); }
  const sc_core::sc_event& flush_event() const override { return wb_.flush_event(); }
  sc_core::sc_time dma_visible() const override { return dma_.visible(); }
  // The OS side of F17 (BAR0 kQLogFlush, DxgkDdiUpdateNativeFenceLogs): push the log entries still in
  // the write-combining buffer out now and return once every log write issued so far is visible.
  void flush_logs() override;
  void invalidate_tlb(uint64_t root) override { tm_.mmu().invalidate(root); }
  // Observer (monitors only): a log entry the engine wrote (queue, log type, the UMD's sequence number,
  // the entry as a fence_log::Entry).
  std::function<void(int queue, uint32_t type, uint64_t seq, const void* entry)> on_log_entry;
  uint64_t signals() const { return signals_; }
  // Probes, per opcode: packets executed, and when the last one's execution began (decoded). A monitored
  // fence's signal is a WRITE64 of its value (no SIGNAL): the scenarios time it from here.
  uint64_t executed(Op op) const { return by_op_[size_t(op) & 15].count; }
  sc_core::sc_time last_start(Op op) const { return by_op_[size_t(op) & 15].start; }
  sc_core::sc_time last_signal_start() const { return last_signal_; }  // probe: SIGNAL execution start
  sc_core::sc_time last_wait_read() const { return last_wait_read_; }  // probe: a WAIT's CV read issued
  // Faults raised (each stopped a queue), and the messages of the first kFaultMessages of them.
  uint64_t faults() const { return faults_; }
  const std::vector<std::string>& fault_messages() const { return fault_messages_; }
  static constexpr size_t kFaultMessages = 16;
  // GPU MMU: the node's TLB; page faults (each also a fault that stopped a queue, unless it was the
  // read-pointer write-back of a queue the node was not running), the last one's VA, and the MSI vector
  // the node raises for one (DMA_FAULTED; BAR0 kNFaultVector).
  GpuMmu& mmu() { return tm_.mmu(); }
  const GpuMmu& mmu() const { return tm_.mmu(); }
  uint64_t page_faults() const { return tm_.page_faults(); }
  uint64_t last_fault_va() const { return tm_.last_fault_va(); }
  static constexpr uint32_t kNoVector = ~0u;  // no fault vector programmed: a page fault raises no MSI
  // Observer (monitors only, it must not drive the model): every translation the node makes, with its
  // result (ok false: a page fault).
  std::function<void(uint64_t root, uint64_t va, uint64_t addr, bool ok)>& on_translate() { return tm_.on_translate; }
  void set_fault_vector(uint32_t v) { fault_vector_ = v; }
  uint32_t fault_vector() const { return fault_vector_; }

 private:
  struct OpProbe {
    uint64_t count = 0;
    sc_core::sc_time start = sc_core::SC_ZERO_TIME;
  };
  std::array<OpProbe, 16> by_op_{};
  void executor();
  struct Aborted {};    // thrown inside the executor when a reset stops it mid-packet
  struct Preempted {};  // thrown when a mid-command preemption was taken inside a COMPUTE
  void check_abort() const {
    if (life_ != Life::Running) throw Aborted{};
  }
  void park();             // the executor's side of a reset: stop, wait until the reset completes
  void resetter();         // SC_THREAD: runs each reset request
  void take_preemption();  // at a boundary or preemption point: save, drop the ring, interrupt
  void compute(uint64_t operand);
  void fence(uint64_t addr, uint64_t id, uint32_t vector);
  void execute(const DecodedPacket& d);
  void fault(const std::string& reason);  // stops q_ at its current packet
  // What the executor is doing: gpu.nodeN.state in the waveform (kStateNames).
  enum class State : uint8_t { Idle, Fetch, Execute, Wait, Fault, Preempt, Reset, Hung, Gated, Wake };
  static constexpr const char* kStateNames[] = {"idle",    "fetch", "execute", "wait",  "fault",
                                                "preempt", "reset", "hung",    "gated", "wake"};
  static constexpr size_t kStates = 10;
  StateClock clock_{kStates};
  bool gating_ = false;
  bool release_blocked_ = false;  // node.fence_wait = release: a blocked WAIT gives the engine up
  sc_core::sc_time gate_delay_, gate_wake_;
  uint64_t gate_wakes_ = 0;
  void set_state(State s);
  State state_ = State::Idle;
  // Where a reset has the engine: Running; Stopping (a reset asked the executor to stop, it is finishing
  // a bounded step such as a bus access); Stopped (parked while the reset runs); Hung (a failed reset
  // left it stopped until an adapter reset, whose reset then takes it back to Running).
  enum class Life : uint8_t { Running, Stopping, Stopped, Hung };
  Life life_ = Life::Running;
  sc_core::sc_time stopping_at_ = sc_core::SC_ZERO_TIME;  // when a reset last stopped the running engine
  // Through the write buffer; `offset`: issued that long after now (still executing the packet).
  // `addr` is a GPU VA in `root` (kCurrentRoot: the running context's); false: a page fault (recorded).
  static constexpr uint64_t kCurrentRoot = ~uint64_t(0);
  bool post(uint64_t addr, const void* src, unsigned len, const sc_core::sc_time& offset = sc_core::SC_ZERO_TIME,
            uint64_t root = kCurrentRoot, bool stop = true);
  // A page fault (tm_'s handler): recorded in the node's fault registers and reported (DMA_FAULTED);
  // `stop`: the executor stops the queue at its next check.
  void page_fault(uint64_t root, uint64_t va, const char* what, bool stop);
  bool take_page_fault();  // executor: a pending page fault stops the queue (true)
  // BARRIER: every earlier write visible, the log entries in the write-combining buffer too (`logs`);
  // without them it is F17's barrier after FirstFreeEntryIndex (the entry is the OS's to flush).
  void drain_write_buffer(bool logs = true);
  void barrier_done();  // the write buffer's on_empty: ends a pending device-side barrier
  bool barrier_pending_ = false;
  sc_core::sc_event barrier_ev_;
  // A log entry (48 B, a partial-line write): it waits in the write-combining buffer for
  // node.log_entry_wc_ns, or until a full barrier or the OS's flush, then goes out as one posted write.
  bool post_log_entry(uint64_t root, uint64_t va, const void* entry, const sc_core::sc_time& offset);
  void write_log(bool signal_log, uint64_t seq, uint32_t handle, uint64_t value, uint64_t observed,
                 const sc_core::sc_time& offset);  // an entry, then FirstFreeEntryIndex (F17)
  void copy(uint64_t src, uint64_t dst, uint64_t bytes);
  void start_queue(const HwQueue* q);
  void finish_queue();

  TranslatingMaster<Node> tm_;  // the node's bus master, behind its GPU MMU
  BusMaster<Node>& bus_;
  CmpPort& cmp_;
  Vcd& vcd_;
  const int ordinal_;
  const EngineKind kind_;
  sc_core::sc_time busy_acc_, state_since_;
  const std::string instance_;  // "gpu.node1": the prefix of this node's own parameter keys
  sc_core::sc_time period_, decode_, barrier_, barrier_sys_;
  uint64_t tick_ps_;               // GPU timestamp tick
  sc_core::sc_time write_buffer_;  // a posted write waits this long in the engine before it leaves
  WriteBuffer wb_;                 // the node's posted writes (not DMA, not log entries)
  LogCombiner wc_;                 // log entries in the write-combining buffer
  int log_barriers_ = 1;           // node.log_barriers
  uint64_t signals_ = 0;
  sc_core::sc_time last_signal_ = sc_core::SC_ZERO_TIME, last_wait_read_ = sc_core::SC_ZERO_TIME;
  // `log`: the logged form's payload (seq | hNativeFence << 32), or null.
  void signal(const DecodedPacket& d, const sc_core::sc_time& decode);
  void wait_fence(const DecodedPacket& d);
  void hold_blocked_queue();

  const HwQueue* q_ = nullptr;  // the queue this node runs (the CMP's: changed through cmp_)
  sc_core::sc_time q_since_;    // when it started running it
  sc_core::sc_event work_ev_;

  // When the last write to system memory becomes visible (BARRIER's scope): raised by every write
  // that leaves the write buffer, the log write-combiner or the DMA.
  sc_core::sc_time last_visible_system_ = sc_core::SC_ZERO_TIME;
  void wrote(uint64_t addr, const sc_core::sc_time& visible) {
    if (addr < regs::kVramBase && visible > last_visible_system_) last_visible_system_ = visible;
  }

  DmaEngine dma_;        // COPY's transfers
  RingFetcher fetcher_;  // the ring's prefetch into the FIFO the executor decodes from

  // Preemption and reset.
  enum class Preemption { Packet, MidCommand } preemption_;
  sc_core::sc_time preempt_save_, preempt_point_, reset_time_;
  int64_t reset_fails_on_;            // engine resets that succeed before they fail (-1: never fail)
  int pipe_ = -1;                     // node.pipe (-1: its own)
  uint64_t engine_resets_tried_ = 0;  // engine resets requested so far (adapter resets not counted)
  bool preempt_req_ = false, in_packet_ = false;
  uint32_t preempt_vector_ = 0;
  bool resetting_ = false;  // the reset unit is busy (BAR0 status kNStResetting)
  struct ResetRequest {
    bool adapter = false;  // part of an adapter reset: takes `duration`, cannot fail
    sc_core::sc_time duration;
  };
  std::optional<ResetRequest> reset_req_;  // taken by the resetter
  sc_core::sc_event preempt_ev_, abort_ev_, parked_ev_, resume_ev_, reset_req_ev_, reset_done_ev_;
  uint64_t last_fence_ = 0, preemptions_ = 0, resets_ = 0;
  sc_core::sc_time compute_acc_ = sc_core::SC_ZERO_TIME, compute_since_ = sc_core::SC_ZERO_TIME;
  bool computing_ = false, resume_pending_ = false;
  sc_core::sc_time resumed_at_ = sc_core::SC_ZERO_TIME;

  uint64_t root_ = 0;                         // the running context's GPU VA space (its queue's ctx_root)
  std::optional<std::string> pending_fault_;  // a page fault's message, until the executor stops the queue
  uint32_t fault_vector_ = 0;
  sc_core::sc_time invalidate_;
  uint64_t packets_ = 0;
  uint64_t faults_ = 0;
  std::vector<std::string> fault_messages_;
  Vcd::Id state_id_, queue_id_, faults_id_, fence_id_ = Vcd::kNone;
  std::string trace_base_;
  void trace_fence();  // the node's fence signal, added at the first FENCE (packet scheduling only)
};

}  // namespace gpumodel
