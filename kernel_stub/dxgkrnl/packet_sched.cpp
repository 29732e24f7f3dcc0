#include "kernel_stub/dxgkrnl/packet_sched.h"

#include <algorithm>

#include "kernel_stub/kmd/kmd.h"

namespace gpumodel {

using namespace sc_core;

namespace {
// Runtime D3cold's use (power_ref) held for a scope: the adapter is powered on before and may power off only
// after it.
struct PowerUse {
  const std::function<void(bool)>& f;
  explicit PowerUse(const std::function<void(bool)>& ref) : f(ref) {
    if (f) f(true);
  }
  ~PowerUse() {
    if (f) f(false);
  }
  PowerUse(const PowerUse&) = delete;
  PowerUse& operator=(const PowerUse&) = delete;
};
}  // namespace

const char* to_string(TdrStep s) {  // at most 8 characters: the VCD shows them as text
  switch (s) {
    case TdrStep::Preempt: return "preempt";
    case TdrStep::Timeout: return "timeout";
    case TdrStep::Snapshot: return "snapshot";
    case TdrStep::ExitEmpty: return "exit";
    case TdrStep::FlushDpc: return "flushdpc";
    case TdrStep::Prepare: return "prepare";
    case TdrStep::ResetEngine: return "reset";
    case TdrStep::ResetReturned: return "returned";
    case TdrStep::Validate: return "validate";
    case TdrStep::Recovered: return "run";
    case TdrStep::ResetFailed: return "failed";
    case TdrStep::Unresponsive: return "noresp";
    case TdrStep::AdapterReset: return "adreset";
    case TdrStep::AdapterRecovered: return "adrun";
    case TdrStep::VramRestored: return "vramrst";
  }
  return "?";
}

void PacketScheduler::declare_params(ParamSet& ps) {
  ps.declare_int("vidsch.hw_queue_depth", 2, "packets", 1, 64,
                 "A: VidSch keeps two DMA packets per node in the hardware queue (one running, one ready), "
                 "the rest in its software queue");
  ps.declare_real("vidsch.quantum_ms", 2, "ms", 0.001, 1e5,
                  "A: the scheduler asks a node to preempt a packet that has run 2 ms (a scheduling "
                  "quantum; Windows does not document its GPU quantum)");
  ps.declare_real("vidsch.tdr_delay_ms", 2000, "ms", 0.001, 1e6,
                  "Q: docs/calibration.md TdrDelay 2 s (Microsoft 'TDR registry keys'): a preemption not done "
                  "within it is a timeout; scenarios shorten it");
  ps.declare_real("vidsch.tdr_prepare_us", 50, "us", 0, 1e6,
                  "A: T3 step 6, suspending the node's scheduling and preparing the reset, 50 us");
  ps.declare_bool(
      "vidsch.validate_aborted_fence_id", true,
      "Q: TDR in Windows 8 and later T3 step 8 / T4, the OS checks LastAbortedFenceId against its snapshot; false is a "
      "test setting that leaves the monitor tdr_rules as the only guard");
  ps.declare_int("vidsch.tdr_limit_count", 5, "timeouts", 1, 1000,
                 "Q: docs/calibration.md TdrLimitCount 5 within TdrLimitTime, then bug check 0x116");
  ps.declare_real("vidsch.tdr_limit_time_ms", 60000, "ms", 1, 1e7, "Q: docs/calibration.md TdrLimitTime 60 s");
  // The registry values these stand for (Microsoft, "TDR registry keys"), as a user may type them.
  ps.declare_documented_name("TdrDelay", "the registry's TdrDelay, in seconds there", "vidsch.tdr_delay_ms");
  ps.declare_documented_name("TdrLimitCount", "the registry's TdrLimitCount", "vidsch.tdr_limit_count");
  ps.declare_documented_name("TdrLimitTime", "the registry's TdrLimitTime, in seconds there",
                             "vidsch.tdr_limit_time_ms");
}

PacketScheduler::PacketScheduler(const ParamSet& ps, Cpu& cpu, Vcd& vcd, const std::string& adapter,
                                 std::function<void(uint32_t, std::vector<uint64_t>)> bug_check)
    : cpu_(cpu),
      vcd_(vcd),
      adapter_(adapter),
      bug_check_(std::move(bug_check)),
      depth_(size_t(ps.get_int("vidsch.hw_queue_depth"))),
      quantum_(sc_time(ps.get_real("vidsch.quantum_ms"), SC_MS)),
      tdr_delay_(sc_time(ps.get_real("vidsch.tdr_delay_ms"), SC_MS)),
      prepare_(sc_time(ps.get_real("vidsch.tdr_prepare_us"), SC_US)),
      limit_time_(sc_time(ps.get_real("vidsch.tdr_limit_time_ms"), SC_MS)),
      limit_count_(uint64_t(ps.get_int("vidsch.tdr_limit_count"))),
      validate_aborted_(ps.get_bool("vidsch.validate_aborted_fence_id")) {}

void PacketScheduler::start() {
  if (started_) return;
  started_ = true;
  per_engine_ = kmd_->nodes_per_engine();
  nodes_.resize(kmd_->info().nodes);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    nodes_[i].hw = int(i);
    nodes_[i].engine_ordinal = uint32_t(i) / per_engine_;
    nodes_[i].node_ordinal = uint32_t(i) % per_engine_;
  }
  cpu_.spawn_thread(adapter_ + ".vidsch.scheduler", [this] { worker(); });
  cpu_.spawn_thread(adapter_ + ".vidsch.tdr", [this] { tdr_worker(); });
}

uint32_t PacketScheduler::engine_of(const SchedContext* c) {
  uint32_t e = 0;  // EngineOrdinal: the highest set bit of EngineAffinity (T2)
  while ((c->engine_affinity >> (e + 1)) != 0) ++e;
  return e;
}

SchedDevice* PacketScheduler::CreateDevice(bool system, int process) {
  devices_.push_back(std::make_unique<SchedDevice>());
  devices_.back()->id = int(devices_.size()) - 1;
  devices_.back()->system = system;
  devices_.back()->process = system ? 0 : process;
  return devices_.back().get();
}

SchedContext* PacketScheduler::CreateContext(SchedDevice* d, uint32_t node_ordinal, uint32_t engine_ordinal) {
  start();
  if (engine_ordinal >= kmd_->engines() || node_ordinal >= per_engine_) return nullptr;
  contexts_.push_back(std::make_unique<SchedContext>());
  SchedContext* c = contexts_.back().get();
  c->id = int(contexts_.size()) - 1;
  c->device = d;
  c->node_ordinal = node_ordinal;
  c->engine_affinity = 1u << engine_ordinal;
  return c;
}

void PacketScheduler::DestroyDevice(SchedDevice* d) {
  d->destroyed = true;
  cpu_.signal(wake_);  // the scheduler drops its queued packets on its next pass
}

const Allocation* PacketScheduler::CreateAllocation(SchedDevice* owner, uint64_t address, uint64_t bytes) {
  allocations_.push_back(std::make_unique<Allocation>());
  Allocation* a = allocations_.back().get();
  a->handle = uint32_t(allocations_.size());
  a->owner = owner;
  a->address = address;
  a->bytes = bytes;
  return a;
}

bool PacketScheduler::SubmitRender(SchedContext* c, const PacketWriter& commands,
                                   std::function<void(const DmaPacket&)> done) {
  const PowerUse use(power_ref);
  if (c->device->lost() || bugchecked_) return false;
  auto p = std::make_shared<DmaPacket>();
  p->seq = next_seq_++;
  p->ctx = c;
  p->commands = commands;
  p->done = std::move(done);
  node_of(c).sw.push_back(p);
  cpu_.signal(wake_);
  return true;
}

void PacketScheduler::SubmitPaging(SchedContext* c, const std::vector<DxgkPagingOp>& ops,
                                   std::vector<const Allocation*> refs, std::function<void(const DmaPacket&)> done,
                                   bool first) {
  const PowerUse use(power_ref);
  auto p = std::make_shared<DmaPacket>();
  p->seq = next_seq_++;
  p->ctx = c;
  p->paging = true;
  p->first = first;
  for (const DxgkPagingOp& op : ops) kmd_->DxgkDdiBuildPagingBuffer(op, p->commands);
  p->refs = std::move(refs);
  p->done = std::move(done);
  std::deque<Pkt>& q = node_of(c).sw;
  if (first)  // after the other `first` packets, in their order
    q.insert(std::find_if(q.begin(), q.end(), [](const Pkt& x) { return !x->first; }), p);
  else
    q.push_back(p);
  cpu_.signal(wake_);
}

bool PacketScheduler::ignoring(int node) const {
  return size_t(node) < nodes_.size() && nodes_[size_t(node)].ignore_irq;
}

void PacketScheduler::set_completed(Node& n, uint64_t to, const char* why) {
  if (to == n.last_completed) return;
  const uint64_t from = n.last_completed;
  n.last_completed = to;
  if (observer.completed_moved) observer.completed_moved(n.hw, from, to, why);
}

void PacketScheduler::isr_completed(int node, uint64_t fence_id) {
  if (size_t(node) >= nodes_.size()) return;  // a KMD used the ring before any context existed
  Node& n = nodes_[size_t(node)];
  if (fence_id > n.last_completed) set_completed(n, fence_id, "a packet completed");
}

void PacketScheduler::retire(Node&, const Pkt& p, DmaPacket::State s) {
  p->state = s;
  if (s == DmaPacket::Aborted) ++aborted_;
  if (p->done) p->done(*p);
  if (observer.retired) observer.retired(*p);
}

void PacketScheduler::on_completed(int node, uint64_t fence_id) {
  if (size_t(node) >= nodes_.size()) return;
  Node& n = nodes_[size_t(node)];
  bool moved = false;
  while (!n.inhw.empty() && n.inhw.front()->fence_id <= fence_id) {
    Pkt p = n.inhw.front();
    n.inhw.pop_front();
    retire(n, p, DmaPacket::Completed);
    moved = true;
  }
  if (moved) n.head_since = sc_time_stamp();  // the next packet starts now
  cpu_.signal(wake_);
}

void PacketScheduler::on_preempted(int node, uint64_t last_completed) {
  if (size_t(node) >= nodes_.size()) return;
  Node& n = nodes_[size_t(node)];
  if (observer.preempted) observer.preempted(node, last_completed, n.last_completed);
  ++preemptions_;
  std::vector<Pkt> rest;
  for (const Pkt& p : n.inhw) {
    if (p->fence_id <= last_completed)
      retire(n, p, DmaPacket::Completed);
    else
      rest.push_back(p);  // preempted, not completed (T5): back to the software queue
  }
  n.inhw.clear();
  requeue(n, rest, true);
  n.preempting = false;
  n.head_seq = 0;
  cpu_.signal(wake_);
}

void PacketScheduler::requeue(Node& n, std::vector<Pkt> late, bool keep_paging_ids) {
  // T6: paging packets first, in their order (with their IDs after an engine reset), then render
  // packets (new IDs), then what was never submitted. A device in error state loses its packets.
  std::deque<Pkt> front;
  for (const Pkt& p : late)
    if (p->paging && p->ctx->device->lost()) {
      retire(n, p, DmaPacket::Dropped);
    } else if (p->paging) {
      p->reuse_id = keep_paging_ids;
      p->state = DmaPacket::Queued;
      front.push_back(p);
    }
  for (const Pkt& p : late)
    if (!p->paging) {
      if (p->ctx->device->lost()) {
        retire(n, p, DmaPacket::Dropped);
        continue;
      }
      p->state = DmaPacket::Queued;
      front.push_back(p);
    }
  n.sw.insert(n.sw.begin(), front.begin(), front.end());
}

void PacketScheduler::put_in_error(SchedDevice* d) {
  if (d->error) return;
  d->error = true;
  if (observer.device_error) observer.device_error(*d);
}

uint64_t PacketScheduler::devices_in_error() const {
  uint64_t n = 0;
  for (auto& d : devices_) n += d->error;
  return n;
}

std::set<SchedDevice*> PacketScheduler::app_devices() const {
  std::set<SchedDevice*> s;
  for (auto& d : devices_)
    if (!d->system) s.insert(d.get());
  return s;
}

void PacketScheduler::record(Node* n, TdrStep s) {
  const TdrStepRecord r{n ? n->hw : -1, s, sc_time_stamp()};
  steps_.push_back(r);
  if (observer.step) observer.step(r);
  if (!vcd_.enabled()) return;
  Vcd::Id* id = n ? &n->trace : &adapter_trace_;
  if (*id == Vcd::kNone)
    *id = vcd_.add_ascii(adapter_ + ".vidsch.tdr" + (n ? "_node" + std::to_string(n->hw) : std::string("_adapter")),
                         "run");
  vcd_.set_ascii(*id, to_string(s));
}

void PacketScheduler::pump(Node& n) {
  if (n.in_tdr || n.preempting || adapter_resetting_ || bugchecked_) return;
  pumping_ = true;
  while (n.inhw.size() < depth_ && !n.sw.empty() && !n.in_tdr && !n.preempting && !adapter_resetting_ &&
         (!restoring_ || n.sw.front()->paging)) {
    // A member, not a local: the KMD's ring write waits, and a run stopped meanwhile never unwinds this
    // thread (a local reference would keep the packet alive past the scheduler).
    Pkt& p = submitting_;
    p = n.sw.front();
    n.sw.pop_front();
    if (p->ctx->device->lost()) {
      retire(n, p, DmaPacket::Dropped);
      continue;
    }
    const bool resubmission = p->submissions > 0;
    if (!p->reuse_id) p->fence_id = n.next_fence++;
    p->reuse_id = false;
    if (!p->original_fence_id) p->original_fence_id = p->fence_id;
    ++p->submissions;
    if (resubmission) ++resubmitted_;
    n.last_submitted = std::max(n.last_submitted, p->fence_id);
    if (n.inhw.empty()) n.head_since = sc_time_stamp();
    p->state = DmaPacket::InHardware;
    n.inhw.push_back(p);
    if (observer.submitted) observer.submitted(*p, resubmission);
    DxgkSubmitCommandArgs a;
    a.node = uint32_t(n.hw);
    a.submission_fence_id = p->fence_id;
    a.commands = &p->commands;
    a.process = p->ctx->device->process;
    kmd_->DxgkDdiSubmitCommand(a);
    p.reset();
  }
  pumping_ = false;
  pump_done_ev_.notify(SC_ZERO_TIME);
}

void PacketScheduler::watch(Node& n) {
  const sc_time now = sc_time_stamp();
  if (n.in_tdr || adapter_resetting_) {
    n.deadline = sc_max_time();
    return;
  }
  if (n.preempting) {
    if (now < n.deadline) return;
    // T3 step 2: the preemption was not done within TdrDelay.
    record(&n, TdrStep::Timeout);
    ++timeouts_;
    n.in_tdr = true;
    n.deadline = sc_max_time();
    timeout_times_.push_back(now);
    while (now - timeout_times_.front() > limit_time_) timeout_times_.pop_front();
    if (timeout_times_.size() > limit_count_) {  // TdrLimitCount exceeded within TdrLimitTime
      bugchecked_ = true;
      bug_check_(kBugCheckTdrFailure, {uint64_t(timeout_times_.size()), uint64_t(n.hw), 0, 0});
      return;
    }
    tdr_queue_.push_back(n.hw);
    cpu_.signal(tdr_wake_);
    return;
  }
  if (n.inhw.empty()) {
    n.deadline = sc_max_time();
    n.head_seq = 0;
    return;
  }
  if (n.inhw.front()->seq != n.head_seq) {  // a new packet at the head: its quantum starts when it did
    n.head_seq = n.inhw.front()->seq;
    n.deadline = n.head_since + quantum_;
  }
  if (now < n.deadline) return;
  // T3 step 1: the packet has run a quantum: ask the node to preempt it.
  record(&n, TdrStep::Preempt);
  n.preempting = true;
  n.deadline = now + tdr_delay_;
  kmd_->DxgkDdiPreemptCommand(uint32_t(n.hw), n.next_preemption_fence++);
}

void PacketScheduler::worker() {
  for (;;) {
    if (bugchecked_) return;
    for (Node& n : nodes_) {
      for (auto it = n.sw.begin(); it != n.sw.end();) {  // a destroyed device's queued packets go
        if ((*it)->ctx->device->destroyed) {
          retire(n, *it, DmaPacket::Dropped);
          it = n.sw.erase(it);
        } else {
          ++it;
        }
      }
      pump(n);
    }
    sc_time next = sc_max_time();
    for (Node& n : nodes_) {
      watch(n);
      if (bugchecked_) return;
      next = std::min(next, n.deadline);
    }
    // The watchdog is an event: sleep until the earliest deadline or new work, never poll.
    if (next == sc_max_time())
      cpu_.wait_for(wake_);
    else if (next > sc_time_stamp())
      cpu_.wait_for(wake_, next - sc_time_stamp());
  }
}

void PacketScheduler::tdr_worker() {
  for (;;) {
    while (tdr_queue_.empty()) cpu_.wait_for(tdr_wake_);
    const int hw = tdr_queue_.front();
    tdr_queue_.pop_front();
    // The whole sequence holds a use: a power-off between its steps (the engine idle after its reset, the
    // queues emptied) would lose the resubmission and the restore behind it.
    const PowerUse use(power_ref);
    tdr(nodes_[size_t(hw)]);
    if (bugchecked_) return;
  }
}

void PacketScheduler::tdr(Node& hung) {
  // The dependent engine group (DxgkDdiQueryDependentEngineGroup, asked before step 3 so the snapshot covers it):
  // the nodes of the hung node's engine that reset with it; every step runs on each of them.
  const uint32_t mask = kmd_->support_per_engine_tdr()
                            ? kmd_->DxgkDdiQueryDependentEngineGroup(hung.node_ordinal, hung.engine_ordinal)
                            : 1u << hung.node_ordinal;
  group_.clear();
  auto add = [this](Node* n) {
    group_.emplace_back();
    group_.back().n = n;
  };
  add(&hung);
  for (uint32_t o = 0; o < per_engine_; ++o)
    if ((mask >> o & 1) && o != hung.node_ordinal) add(&nodes_[hung.engine_ordinal * per_engine_ + o]);
  // Step 3, one atomic step at device IRQL: the snapshot, and the group's interrupts ignored from now.
  cpu_.raise_device_irql();
  for (Member& g : group_) {
    g.snap_submitted = g.n->last_submitted, g.snap_completed = g.n->last_completed;
    g.n->ignore_irq = true;
    g.n->in_tdr = true;
    record(g.n, TdrStep::Snapshot);
    tdr_queue_.erase(std::remove(tdr_queue_.begin(), tdr_queue_.end(), g.n->hw), tdr_queue_.end());
  }
  const bool empty = hung.inhw.empty();
  cpu_.lower_device_irql();
  auto resume = [this](Node& n) {
    n.ignore_irq = false;
    n.in_tdr = false;
    n.preempting = false;
    n.head_seq = 0;
    cpu_.signal(wake_);
  };
  if (empty) {  // step 4: every packet completed between steps 2 and 3
    for (Member& g : group_) {
      record(g.n, TdrStep::ExitEmpty);
      resume(*g.n);
    }
    return;
  }
  if (!kmd_->support_per_engine_tdr()) {  // before Windows 8: the adapter resets (T1)
    adapter_reset(0, "no_per_engine_tdr", app_devices(), hung.inhw.front().get());
    return;
  }
  cpu_.flush_dpcs();  // step 5
  for (Member& g : group_) record(g.n, TdrStep::FlushDpc);
  // Step 6: prepare. An engine the driver reports not responsive (DXGK_ENGINESTATUS: it cannot be reset) is
  // not asked to reset: the adapter resets instead, as after a failed engine reset (T9).
  (void)kmd_->DxgkDdiCollectDbgInfo(0);
  bool responsive = true;
  for (Member& g : group_)
    responsive = kmd_->DxgkDdiQueryEngineStatus(g.n->node_ordinal, g.n->engine_ordinal).responsive && responsive;
  if (!responsive) {
    record(&hung, TdrStep::Unresponsive);
    adapter_reset(kTdrReasonPromoted, "engine_unresponsive", app_devices(), hung.inhw.front().get());
    return;
  }
  wait(prepare_);
  for (Member& g : group_) record(g.n, TdrStep::Prepare);
  // Step 7, on each node of the group.
  for (Member& g : group_) {
    Node& n = *g.n;
    record(&n, TdrStep::ResetEngine);
    g.a = DxgkResetEngineArgs();
    g.a.node_ordinal = n.node_ordinal;
    g.a.engine_ordinal = n.engine_ordinal;
    if (!kmd_->DxgkDdiResetEngine(g.a)) {  // T9: the driver could not reset the node
      record(&n, TdrStep::ResetFailed);
      adapter_reset(kTdrReasonPromoted, "reset_failed", app_devices(), hung.inhw.front().get());
      return;
    }
    ++engine_resets_;
    record(&n, TdrStep::ResetReturned);
    if (observer.reset_returned) observer.reset_returned(n.hw, g.a, g.snap_completed, g.snap_submitted);
  }
  // Step 8 (T4): within [last completed, last submitted] of the snapshot, and an ID still in the hardware queue
  // or the last completed one (TDR in Windows 8 and later: "one of" those two).
  for (Member& g : group_) {
    const uint64_t id = g.a.last_aborted_fence_id;
    const bool queued =
        std::any_of(g.n->inhw.begin(), g.n->inhw.end(), [id](const Pkt& p) { return p->fence_id == id; });
    if (validate_aborted_ && (id < g.snap_completed || id > g.snap_submitted || (!queued && id != g.snap_completed))) {
      bugchecked_ = true;
      bug_check_(kBugCheckSchedulerFault, {kBadAbortedFenceId, id, g.snap_completed, uint64_t(g.n->hw)});
      return;
    }
    record(g.n, TdrStep::Validate);
  }
  last_aborted_ = group_.front().a.last_aborted_fence_id;
  last_reset_completed_ = group_.front().a.last_completed_fence_id;
  // Step 9 on each node. T5: the last completed ID is the one the reset returned. Completed: up to it, unless
  // the queue was empty to the driver (T8: LastAbortedFenceId = last completed), when what completed after the
  // snapshot counts as aborted. The hung node's aborted packets put their devices in error state; another node
  // of the group was reset only because it shares the pipe: its aborted render packets are resubmitted (new IDs).
  std::set<SchedDevice*> paging_owners;
  bool paging_hit = false;
  for (Member& g : group_) {
    Node& n = *g.n;
    const DxgkResetEngineArgs& a = g.a;
    set_completed(n, a.last_completed_fence_id, "engine reset returned LastCompletedFenceId");
    const uint64_t completed_up_to =
        a.last_aborted_fence_id > a.last_completed_fence_id ? a.last_completed_fence_id : g.snap_completed;
    std::vector<Pkt> late;  // gone before the adapter reset's long waits
    for (const Pkt& p : n.inhw) {
      if (p->fence_id <= completed_up_to) {
        retire(n, p, DmaPacket::Completed);
      } else if (p->fence_id <= a.last_aborted_fence_id && (&n == &hung || p->paging)) {
        if (p->paging) {  // T7
          paging_hit = true;
          for (const Allocation* al : p->refs)
            if (al->owner && !al->owner->system) paging_owners.insert(al->owner);
        } else {
          put_in_error(p->ctx->device);
        }
        retire(n, p, DmaPacket::Aborted);
      } else {
        late.push_back(p);  // submitted too late to be affected (T6), or a pipe neighbour's victim
      }
    }
    n.inhw.clear();
    requeue(n, late, true);
  }
  if (paging_hit) {
    adapter_reset(kTdrReasonPromoted, "paging_hit", std::move(paging_owners), nullptr);
    return;
  }
  for (Member& g : group_) {
    record(g.n, TdrStep::Recovered);
    resume(*g.n);
  }
}

void PacketScheduler::adapter_reset(uint32_t reason, const char* cause, std::set<SchedDevice*> error,
                                    const DmaPacket* hung) {
  // What the reset needs across its waits lives in members (a run that ends meanwhile never unwinds
  // this thread, and its locals would leak).
  reset_error_ = std::move(error);
  reset_hung_ = hung;
  adapter_resetting_ = true;
  ++adapter_resets_;
  tdr_reason_ = reason;
  adapter_cause_ = cause;
  while (pumping_) wait(pump_done_ev_);  // the scheduler thread finishes the submission it is in
  cpu_.raise_device_irql();
  for (Node& n : nodes_) {
    n.in_tdr = true;
    n.ignore_irq = true;
  }
  cpu_.lower_device_irql();
  cpu_.flush_dpcs();
  record(nullptr, TdrStep::AdapterReset);
  kmd_->DxgkDdiResetFromTimeout();
  if (vram_lost) vram_lost();  // BACO: the local memory's contents are gone
  kmd_->DxgkDdiRestartFromTimeout();
  for (SchedDevice* d : reset_error_) put_in_error(d);
  reset_error_.clear();
  hung = reset_hung_;
  if (hung) {  // the packet that timed out is aborted, never resubmitted (a paging one: T7's owners too)
    if (hung->paging) {
      for (const Allocation* al : hung->refs)
        if (al->owner && !al->owner->system) put_in_error(al->owner);
    } else {
      put_in_error(hung->ctx->device);
    }
  }
  for (Node& n : nodes_) {
    set_completed(n, n.last_submitted, "adapter reset: last submitted");  // T5
    std::vector<Pkt> late;
    for (const Pkt& p : n.inhw) {
      if (p.get() == hung || p->ctx->device->error)
        retire(n, p, DmaPacket::Aborted);
      else
        late.push_back(p);
    }
    n.inhw.clear();
    // Their IDs are spent (the completed ID moved past them): every packet gets a new one, also those an
    // engine reset or preemption had put back to keep theirs.
    for (const Pkt& p : n.sw) p->reuse_id = false;
    requeue(n, late, false);
    n.ignore_irq = false;
    n.in_tdr = false;
    n.preempting = false;
    n.head_seq = 0;
    n.deadline = sc_max_time();
  }
  tdr_queue_.clear();  // a timeout still waiting for the TDR worker was handled by this reset
  record(nullptr, TdrStep::AdapterRecovered);
  adapter_resetting_ = false;
  if (restore) {  // VidMm restores the local memory first: the apps' packets wait for it
    restoring_ = true;
    cpu_.signal(wake_);
    if (restore()) record(nullptr, TdrStep::VramRestored);
    restoring_ = false;
  }
  cpu_.signal(wake_);
}

}  // namespace gpumodel
