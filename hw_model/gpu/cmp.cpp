#include "hw_model/gpu/cmp.h"

#include <algorithm>

#include "hw_model/gpu/fence_log.h"
#include "hw_model/gpu/regs.h"

namespace gpumodel {

using namespace sc_core;

void Cmp::declare_params(ParamSet& ps) {
  ps.declare_real("cmp.clock_mhz", 1000, "MHz", 1, 1e5,
                  "A: docs/calibration.md GPU, CMP clock 1.0 GHz (microcontroller-class scheduler)");
  ps.declare_int("cmp.doorbell_cycles", 64, "cycles", 0, 1 << 24,
                 "A: firmware path doorbell -> run-list update -> node kick, 64 CMP cycles");
  ps.declare_int("cmp.interrupt_cycles", 32, "cycles", 0, 1 << 24,
                 "A: firmware path engine request -> MSI write issued, 32 CMP cycles");
  ps.declare_int("cmp.decision_cycles", 20, "cycles", 0, 1 << 24,
                 "A: firmware handling of an engine's fence signal (GPU waiter scan, interrupt "
                 "decision), 20 CMP cycles");
  ps.declare_int("cmp.mv_update_cycles", 40, "cycles", 0, 1 << 24,
                 "A: firmware decode of a MonitoredValue update command, 40 CMP cycles");
  ps.declare_real("cmp.barrier_ns", 200, "ns", 0, 1e6,
                  "Q (low confidence): docs/calibration.md memory barrier, system scope ~200 ns (the CMP "
                  "synchronises with engine writes that may target system memory)");
  ps.declare_bool("cmp.barrier", true,
                  "Q: F7, Native GPU fence object 'Synchronization within the GPU between the engine and CMP': the "
                  "barrier between writing the "
                  "shadow MV and reading CV; false reproduces the lost interrupt");
  ps.declare_bool("cmp.mv_update_check", true,
                  "Q: F7 step 3, Native GPU fence object: after the barrier the CMP reads CV and interrupts iff CV > "
                  "MV; false is a test setting that leaves the OS's F8 re-read as the only report of a "
                  "signal racing an MV update");
  ps.declare_enum("cmp.mv_source", "shadow", {"shadow", "memory"},
                  "Q: Native GPU fence object 'Synchronization within the GPU between the engine and CMP': shadow = "
                  "the CMP keeps a shadow MV in "
                  "local memory that the engines check (what many discrete GPUs do; MV updates go "
                  "through the CMP in the F7 order); memory = the engine reads the MonitoredValue the "
                  "OS writes, after its CV write, and the CMP keeps no shadow");
  ps.declare_bool("cmp.report_fence_set", true,
                  "Q: F12: the interrupt names the signaled fences (pSignaledNativeFenceArray); false "
                  "reports NULL, so the OS scans every waiter");
  ps.declare_enum(
      "cmp.fence_irq_queue", "running", {"running", "null"},
      "Q: F19, Native GPU fence object 'Optimized native fence signaled interrupt': with the optimized interrupt "
      "the CMP names the HW queue whose logged signal raised it (running); null = a CMP that cannot "
      "tell ('it should specify a NULL HWQueue handle'): the OS rescans every queue of the engine");
  ps.declare_enum("cmp.fence_event_kinds", "distinct", {"distinct", "combined"},
                  "Q: Native GPU fence object 'Native fence signaled interrupt': hardware may not tell a monitored "
                  "fence's signal from a native fence's. A: distinct, a command processor that tells them apart "
                  "(two event kinds); combined = one that raises one kind for every fence signal (a NULL native "
                  "fence event) and says so in CAPS, so its KMD raises only the native interrupt with a NULL "
                  "array and EvaluateLegacyMonitoredFences = 1");
  ps.declare_enum(
      "cmp.unexplained_irq_scope", "signaller_node", {"signaller_node", "all_nodes"},
      "A: signaller_node, a design choice (no vendor documents its CMP): with the optimized interrupt, a raise no "
      "queue's log explains (F7 step 3 after an MV update) names a NULL queue with the NodeOrdinal and "
      "EngineOrdinal of the node whose logged signal last raised the fence (the CMP keeps it per fence), so the OS "
      "rescans that engine's queues (Native GPU fence object 'Optimized native fence signaled interrupt': 'it falls "
      "back to rescan the log buffer of all HWQueues on this engine'); all_nodes: a CMP that keeps no such "
      "record names every node and the OS rescans every queue of the adapter");
  ps.declare_real("cmp.timeslice_us", 100, "us", 0.001, 1e7,
                  "A: run-list time slice between queues of equal priority on one node");
  ps.declare_real("cmp.adapter_reset_ms", 3100, "ms", 1000, 4000,
                  "F: docs/calibration.md adapter-wide reset 1-4 s; a BACO reset took 3.1 s (pop-os cosmic-epoch "
                  "issue 3764 log timestamps)");
}

Cmp::Cmp(sc_module_name name, const ParamSet& ps, Vcd& vcd, int queues, const std::string& adapter)
    : sc_module(name),
      isock("isock"),
      tm_(isock, ps),
      bus_(tm_.bus()),
      vcd_(vcd),
      queues_(size_t(queues)),
      listed_(size_t(queues)),
      fences_(kFenceSlots),
      fence_names_(kFenceSlots),
      period_(cycles(1, ps.get_real("cmp.clock_mhz"))),
      timeslice_(sc_time(ps.get_real("cmp.timeslice_us"), SC_US)),
      barrier_cost_(ps.get_ns("cmp.barrier_ns")),
      doorbell_cycles_(uint64_t(ps.get_int("cmp.doorbell_cycles"))),
      interrupt_cycles_(uint64_t(ps.get_int("cmp.interrupt_cycles"))),
      mv_update_cycles_(uint64_t(ps.get_int("cmp.mv_update_cycles"))),
      decision_cycles_(uint64_t(ps.get_int("cmp.decision_cycles"))),
      use_barrier_(ps.get_bool("cmp.barrier")),
      step3_(ps.get_bool("cmp.mv_update_check")),
      mv_from_memory_(ps.get_enum("cmp.mv_source") == "memory"),
      report_set_(ps.get_bool("cmp.report_fence_set")),
      null_queue_(ps.get_enum("cmp.fence_irq_queue") == "null"),
      scope_signaller_(ps.get_enum("cmp.unexplained_irq_scope") == "signaller_node"),
      combined_events_(ps.get_enum("cmp.fence_event_kinds") == "combined"),
      adapter_reset_time_(sc_time(ps.get_real("cmp.adapter_reset_ms"), SC_MS)) {
  tick_ps_ = uint64_t(ps.get_int(adapter + ".timestamp_tick_ps"));
  for (int i = 0; i < queues; ++i) queues_[size_t(i)].id = i;
  adapter_ = adapter;
  busy_id_ = vcd_.add_ascii(adapter + ".cmp.state", "idle");
  decision_id_ = vcd_.add_ascii(adapter + ".cmp.decision", "");
  SC_HAS_PROCESS(Cmp);
  SC_THREAD(firmware);
  SC_THREAD(adapter_resetter);
}

void Cmp::node_control(int node, uint32_t v) {
  if (node < 0 || size_t(node) >= nodes_.size()) return;
  if (v & regs::kNCtlReset) nodes_[size_t(node)]->request_reset(false, SC_ZERO_TIME);
  if (v & regs::kNCtlPreempt) push({Work::Preempt, uint32_t(node), 0, nullptr, false});
}

void Cmp::adapter_reset() {
  if (adapter_resetting_) return;
  adapter_resetting_ = true;
  adapter_reset_ev_.notify(SC_ZERO_TIME);
}

void Cmp::adapter_resetter() {
  for (;;) {
    wait(adapter_reset_ev_);
    fifo_.clear();  // the firmware's pending work is lost with its state
    for (EnginePort* n : nodes_) n->request_reset(true, adapter_reset_time_);
    wait(adapter_reset_time_);
    for (EnginePort* n : nodes_)
      while (n->status() & regs::kNStResetting) wait(n->reset_done_event());
    adapter_resetting_ = false;
  }
}

bool Cmp::busy() const {
  if (!fifo_.empty() || in_work_ || adapter_resetting_) return true;
  for (const EnginePort* n : nodes_)
    if (n->status() & (regs::kNStBusy | regs::kNStPreemptPending | regs::kNStResetting)) return true;
  for (const HwQueue& q : queues_)
    if (q.enabled && !q.faulted && q.rptr < q.wptr) return true;  // runnable, or blocked on a fence
  return false;
}

std::vector<const HwQueue*> Cmp::queues_of(int node) const {
  std::vector<const HwQueue*> v;
  for (const HwQueue& q : queues_)
    if (q.node == node) v.push_back(&q);
  return v;
}

void Cmp::executed(const HwQueue& q, uint64_t bytes) {
  HwQueue& w = own(q);
  w.rptr += bytes;
  runnable_changed(w);
}

void Cmp::set_context(const HwQueue& q, uint64_t root) { own(q).ctx_root = root; }

void Cmp::fault_queue(const HwQueue& q) {
  HwQueue& w = own(q);
  w.faulted = true;
  runnable_changed(w);
}

void Cmp::block(const HwQueue& q, const BlockedWait& b) {
  HwQueue& w = own(q);
  w.blocked = true;
  w.wait_slot = b.slot;
  w.wait_value = b.value;
  w.wait_logged = b.logged;
  w.wait_seq = b.seq;
  w.wait_handle = b.handle;
  w.wait_observed = b.observed;
  runnable_changed(w);
  push({Work::QueueWait, w.wait_slot, w.wait_value, &w, false});  // re-checked, then unblocked on the GPU (F5)
}

void Cmp::drop_rest(const HwQueue& q) {
  HwQueue& w = own(q);
  w.rptr = w.wptr;
  if (w.blocked) {
    w.blocked = false;
    forget_waiter(w);
  }
  runnable_changed(w);
}

void Cmp::reset_queue(const HwQueue& q) {
  own(q).faulted = false;
  drop_rest(q);
}

void Cmp::forget_waiter(HwQueue& q) {
  if (FenceEntry* f = slot_entry(q.wait_slot)) {
    f->gpu_waiters.remove(&q);
  }
}

void Cmp::doorbell(int q, uint64_t wptr) { push({Work::Doorbell, uint32_t(q), wptr, nullptr, false}); }

void Cmp::queue_enabled(int q) {
  const HwQueue& hq = queues_.at(size_t(q));
  if (hq.node < 0 || size_t(hq.node) >= nodes_.size()) {
    SC_REPORT_ERROR("gpumodel/cmp", "HW queue enabled on a node the adapter does not have");
  }
}

void Cmp::runnable_changed(HwQueue& q) {
  Listed& l = listed_[size_t(q.id)];
  const int node = q.runnable() && q.node >= 0 && size_t(q.node) < run_lists_.size() ? q.node : -1;
  if (node == l.node && (node < 0 || q.priority == l.priority)) return;  // the hot path: nothing moved
  if (l.node >= 0) {
    RunList& rl = run_lists_[size_t(l.node)];
    auto it = rl.by_priority.find(l.priority);
    it->second.erase(q.id);
    if (it->second.empty()) rl.by_priority.erase(it);
    --rl.count;
  }
  l = {node, q.priority};
  if (node >= 0) {
    RunList& rl = run_lists_[size_t(node)];
    rl.by_priority[q.priority].insert(q.id);
    ++rl.count;
  }
}

const HwQueue* Cmp::pick(int node) {
  // Highest priority first; among equals, round robin after the last queue picked on this node.
  const RunList& rl = run_lists_[size_t(node)];
  if (rl.by_priority.empty()) return nullptr;
  const std::set<int>& ids = rl.by_priority.begin()->second;
  auto it = ids.upper_bound(last_pick_[size_t(node)]);
  if (it == ids.end()) it = ids.begin();
  last_pick_[size_t(node)] = *it;
  return &queues_[size_t(*it)];
}

bool Cmp::should_switch(int node, const HwQueue& current, const sc_time& since) const {
  const RunList& rl = run_lists_[size_t(node)];
  if (rl.by_priority.empty()) return false;
  if (rl.by_priority.begin()->first > current.priority) return true;  // a higher priority is runnable
  auto it = rl.by_priority.find(current.priority);
  if (it == rl.by_priority.end() || it->second.size() == it->second.count(current.id)) return false;
  return sc_time_stamp() - since >= timeslice_;  // another of equal priority waits for the slice's end
}

bool Cmp::other_runnable(int node, const HwQueue& current) const {
  const RunList& rl = run_lists_[size_t(node)];
  const Listed& l = listed_[size_t(current.id)];
  return rl.count > (l.node == node ? 1u : 0u);
}

void Cmp::push(const Work& w) {
  fifo_.push_back(w);
  fw_ev_.notify(SC_ZERO_TIME);
}

void Cmp::raise_interrupt(uint32_t vector, int node) { push({Work::Vector, uint32_t(node), vector, nullptr, true}); }
void Cmp::mv_update(uint32_t slot, uint64_t mv) {
  if (on_mv_update_queued) on_mv_update_queued(slot);
  push({Work::MvUpdate, slot, mv, nullptr, false});
}
void Cmp::cpu_notify(uint32_t slot) { push({Work::CpuNotify, slot, 0, nullptr, false}); }
void Cmp::xdoorbell(uint32_t xid) { push({Work::XDoorbell, xid, 0, nullptr, false}); }

void Cmp::set_fence_xid(uint32_t slot, uint32_t xid) {
  FenceEntry* f = slot_entry(slot);
  if (!f || f->xid == xid) return;
  if (f->xid) {
    auto& v = xid_slots_[f->xid];
    v.erase(std::remove(v.begin(), v.end(), slot), v.end());
    if (v.empty()) xid_slots_.erase(f->xid);
  }
  f->xid = xid;
  if (xid) xid_slots_[xid].push_back(slot);
}

void Cmp::fence_written(uint32_t slot, uint64_t value, bool interrupt, const HwQueue* logged_by) {
  // The engine's signal carries the value: a GPU wait registered after this, while the CV write is still
  // on its way, must not miss it (see QueueWait).
  // The node an unexplained raise names (F19): kept only where raises name queues and that scope is chosen.
  if (track_signaller_ && value >= fences_[slot].last_signaled)
    fence_names_[slot].signaller_node = logged_by ? logged_by->node : -1;
  if (value > fences_[slot].last_signaled) fences_[slot].last_signaled = value;
  decision(interrupt);
  if (on_fence_decision) on_fence_decision(slot, value, interrupt, false);
  if (!interrupt) {
    ++suppressed_;
    // Nothing for the firmware to do unless a queue waits on this fence on the GPU, or (F20) a peer
    // adapter's CMP is to hear of the signal.
    if (fences_[slot].gpu_waiters.empty() && !(fences_[slot].xid && cfg.xdoorbell_target)) return;
  }
  push({Work::FenceWritten, slot, value, logged_by ? &own(*logged_by) : nullptr, interrupt});
}

void Cmp::flush_logs(HwQueue& q) {
  ++log_flushes_;
  if (q.node >= 0 && size_t(q.node) < nodes_.size()) nodes_[size_t(q.node)]->flush_logs();
  if (log_visible_ > sc_time_stamp()) wait(log_visible_ - sc_time_stamp());
}

void Cmp::write_wait_log(HwQueue& q) {
  q.wait_logged = false;
  fence_log::Entry e{};
  e.fence_value = q.wait_value;
  e.h_native_fence = q.wait_handle;
  e.operation_type = fence_log::kWaitUnblocked;
  e.fence_observed_gpu_timestamp = q.wait_observed;
  e.fence_end_gpu_timestamp = sc_time_stamp().value() / tick_ps_;
  const uint32_t idx = fence_log::entry_index(q.wait_seq, q.log_entries);
  log_visible_ = max_time(log_visible_, post_va(q.wait_log + fence_log::entry_offset(idx), &e, sizeof e));
  if (on_log_entry) on_log_entry(q.id, fence_log::kWaits, q.wait_seq, &e);
  const uint64_t h = fence_log::header_after(q.wait_seq, q.log_entries);
  log_visible_ = max_time(log_visible_, post_va(q.wait_log, &h, 8));
}

void Cmp::decision(bool raise) {
  if (!vcd_.enabled()) return;
  vcd_.set_ascii(decision_id_, raise ? "raise" : "suppress");
  vcd_.set_ascii(decision_id_, "", sc_time_stamp() + sc_time(2, SC_NS));
}

void Cmp::firmware() {
  for (;;) {
    while (fifo_.empty()) {
      vcd_.set_ascii(busy_id_, "idle");
      wait(fw_ev_);
    }
    vcd_.set_ascii(busy_id_, "busy");
    const Work w = fifo_.front();
    fifo_.pop_front();
    in_work_ = true;
    run(w);
    in_work_ = false;
  }
}

void Cmp::run(const Work& w) {
  FenceEntry* f =
      w.kind == Work::Vector || w.kind == Work::Doorbell || w.kind == Work::Preempt ? nullptr : slot_entry(w.slot);
  switch (w.kind) {
    case Work::Preempt:
      wait(period_ * double(doorbell_cycles_));
      nodes_[w.slot]->request_preempt();
      break;
    case Work::Doorbell: {
      wait(period_ * double(doorbell_cycles_));
      HwQueue& hq = queues_.at(w.slot);
      if (w.value > hq.wptr) hq.wptr = w.value;
      runnable_changed(hq);
      if (hq.enabled && size_t(hq.node) < nodes_.size()) nodes_[size_t(hq.node)]->kick(hq);
      break;
    }
    case Work::Vector:
      if (w.value == regs::kMonitoredFenceSignalVector) {  // the engine's write before it is visible (its BARRIER)
        // A command processor of one event kind reports it as it reports any fence signal: a NULL one.
        raise_event(combined_events_ ? Event{regs::kEventNativeFence, 0, 0}
                                     : Event{regs::kEventMonitoredFence, 0, w.slot});
        break;
      }
      wait(period_ * double(interrupt_cycles_));
      send_msi(uint32_t(w.value));
      break;
    case Work::MvUpdate: {
      wait(period_ * double(mv_update_cycles_));
      ++mv_updates_;
      // F7: (1) write the shadow MV, (2) barrier against the engines' writes, (3) read CV.
      const sc_time vis = post_va(shadow_mv_addr(w.slot), &w.value, 8);
      if (vis > own_last_visible_) own_last_visible_ = vis;
      if (use_barrier_) barrier();
      uint64_t cv = 0;
      bool raise = false;
      if (step3_ && f && f->valid()) {
        cv = read64_va(f->cv_addr);
        raise = cv > w.value;
        decision(raise);
        if (raise) raise_fence_interrupt(w.slot, cv);
      }
      if (on_fence_decision) on_fence_decision(w.slot, cv, raise, true);
      // F8: tell the KMD this update is complete.
      if (cfg.ack_addr) {
        ++acks_;
        post_va(cfg.ack_addr, &acks_, 8);
      }
      break;
    }
    case Work::QueueWait: {
      wait(period_ * double(decision_cycles_));
      // F5: re-read CV: a signal that landed between the engine's read and this registration counts.
      if (!f || !f->valid()) break;
      uint64_t cv = read64_va(f->cv_addr);
      f->gpu_waiters.push_back(w.q);
      last_wait_registered_ = sc_time_stamp();
      if (cv < w.value && f->last_signaled >= w.value) {
        // An engine signalled past the value before this registration, its CV write not visible yet
        // (its notification found no waiter): release as a signal does, once its writes are visible.
        barrier();
        cv = f->last_signaled;
      }
      unblock_satisfied(*f, w.slot, cv);
      break;
    }
    case Work::FenceWritten:
      wait(period_ * double(decision_cycles_));
      if (!f) break;
      // A signal releases: the engine's writes (the CV and what it produced before) are visible
      // before a waiting queue runs or the CPU hears of it.
      barrier();
      unblock_satisfied(*f, w.slot, w.value);
      if (w.irq) raise_fence_interrupt(w.slot, w.value, w.q);
      if (f->xid && cfg.xdoorbell_target) {
        // F20: ring the peer's doorbell with the fence's cross-adapter id, a posted write behind the CV
        // (visible since the barrier above): the peer CMP rescans its queues waiting on that fence.
        ++xdoorbells_sent_;
        bus_.post32(cfg.xdoorbell_target, f->xid);
      }
      break;
    case Work::XDoorbell: {
      wait(period_ * double(decision_cycles_));
      ++xdoorbells_received_;
      auto it = xid_slots_.find(w.slot);
      if (it == xid_slots_.end()) break;  // no fence of this adapter has that id: nothing waits here
      for (uint32_t slot : std::vector<uint32_t>(it->second)) {
        FenceEntry& x = fences_[slot];
        if (!x.valid()) continue;
        const uint64_t cv = read64_va(x.cv_addr);
        unblock_satisfied(x, slot, cv);
        // This adapter's own CPU waiters: the conditional interrupt against its MV, as an engine's
        // signal here would check it (F3); the peer's signal was never checked against this MV.
        const uint64_t mv = read64_va(check_mv_addr(slot));
        const bool raise = cv > mv;
        decision(raise);
        if (raise) raise_fence_interrupt(slot, cv);
      }
      break;
    }
    case Work::CpuNotify:
      wait(period_ * double(decision_cycles_));
      if (f && f->valid() && !f->gpu_waiters.empty()) unblock_satisfied(*f, w.slot, read64_va(f->cv_addr));
      break;
  }
}

void Cmp::unblock_satisfied(FenceEntry& f, uint32_t slot, uint64_t cv) {
  for (size_t i = 0; i < f.gpu_waiters.size();) {
    HwQueue* q = f.gpu_waiters[i];
    if (q->blocked && q->wait_slot == slot && q->wait_value <= cv) {
      if (vcd_.timeline())  // the key and track strings only when a timeline is written (a hot path)
        vcd_.flow_end(fence_flow_key(adapter_, slot), q->wait_value, adapter_ + ".cmp.state", sc_time_stamp());
      if (q->wait_logged) write_wait_log(*q);
      q->blocked = false;
      runnable_changed(*q);
      ++unblocks_;
      nodes_[size_t(q->node)]->kick(*q);
      f.gpu_waiters.swap_remove(i);
    } else {
      ++i;
    }
  }
}

void Cmp::barrier() {
  // Begins once the CMP's own writes are visible (an engine that read the old shadow MV issued its CV
  // write before then) and completes when every engine write issued before it began is visible: those
  // still in a write buffer or held by a full link included, later ones not (F7: "no pending write to
  // CV from a command that did not see step 1").
  if (own_last_visible_ > sc_time_stamp()) wait(own_last_visible_ - sc_time_stamp());
  flushes_.resize(nodes_.size());
  sc_time t = sc_time_stamp();
  for (size_t i = 0; i < nodes_.size(); ++i) {
    nodes_[i]->request_flush(flushes_[i]);
    t = max_time(t, nodes_[i]->dma_visible());
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    while (!flushes_[i].done) wait(nodes_[i]->flush_event());
    t = max_time(t, flushes_[i].visible);
  }
  wait(t + barrier_cost_ - sc_time_stamp());
}

void Cmp::raise_fence_interrupt(uint32_t slot, uint64_t value, const HwQueue* logged_by) {
  Event e{regs::kEventNativeFence, report_set_ ? fence_names_[slot].handle : 0, value};
  // F19: the queue whose log holds the signal, never the fence. A raise no queue's log explains (F7 step 3
  // after an MV update, a peer's doorbell) names a NULL queue: on the node whose logged signal last raised
  // the fence (cmp.unexplained_irq_scope = signaller_node), else, or when no logged signal did, every node.
  if (combined_events_) {
    e = Event{regs::kEventNativeFence, 0, value};  // one kind: no fence, no queue named
  } else if (cfg.names_queue) {
    const int32_t node = track_signaller_ ? fence_names_[slot].signaller_node : -1;
    if (!logged_by) {
      ++unexplained_;
      unexplained_node_ += node >= 0;
    }
    e = logged_by ? Event{regs::kEventNativeFenceQueue, null_queue_ ? 0u : uint32_t(logged_by->id + 1),
                          uint64_t(logged_by->node)}
                  : Event{regs::kEventNativeFenceQueue, 0u, node >= 0 ? uint64_t(node) : regs::kEventAllNodes};
  }
  raise_event(e);
}

void Cmp::raise_event(const Event& e) {
  wait(period_ * double(interrupt_cycles_));
  if (cfg.ring_base && cfg.ring_size) {
    if (ring_wptr_ - cfg.ring_rptr >= cfg.ring_size) {
      // The KMD sees the drop counts: a NULL scan, of the monitored fences' waiters too if one of theirs
      // was dropped (F12).
      ++(e.type == regs::kEventMonitoredFence ? monitored_dropped_ : native_dropped_);
    } else {
      post_va(cfg.ring_base + 16ull * (ring_wptr_ & (cfg.ring_size - 1)), &e, 16);
      ++ring_wptr_;
    }
    const uint64_t wptr = uint64_t(monitored_dropped_) << 48 | uint64_t(native_dropped_) << 32 | ring_wptr_;
    post_va(cfg.ring_wptr_addr, &wptr, 8);
  }
  ++fence_irqs_;
  send_msi(regs::kFenceEventVector);
}

void Cmp::invalidate_tlbs(uint64_t root) {
  for (EnginePort* n : nodes_) n->invalidate_tlb(root);
  tm_.mmu().invalidate(root);
}

void Cmp::send_msi(uint32_t vector) {
  if (!msi_addr_) {
    SC_REPORT_ERROR("gpumodel/cmp", "interrupt raised before the KMD programmed the MSI address");
    return;
  }
  ++msi_sent_;
  last_msi_ = sc_time_stamp();
  bus_.post32(msi_addr_, msi_data_ + vector);  // MSI: a 4-byte posted write (PCIe MSI definition)
}

}  // namespace gpumodel
