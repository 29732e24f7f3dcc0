#include "scenarios/tdr/tdr_monitor.h"

#include <algorithm>
#include <vector>

namespace gpumodel {

TdrRulesMonitor::TdrRulesMonitor(Platform& p) : p_(p) {
  PacketSchedObserver& o = p.vidsch.packets().observer;
  chain(o.submitted, [this](const DmaPacket& pk, bool resubmission) {
    Track& t = track(pk);
    const std::string where =
        " (node " + std::to_string(pk.ctx->node_ordinal) + ", fence ID " + std::to_string(pk.fence_id) + ")";
    if (pk.fence_id <= t.completed)
      violation("T6: a packet submitted with a fence ID not above the node's last completed " +
                std::to_string(t.completed) + where);
    if (!t.paging_first.empty()) {
      const auto [seq, fence] = t.paging_first.front();
      if (pk.seq != seq || pk.fence_id != fence) {
        violation("T6: after the engine reset the paging packet with fence ID " + std::to_string(fence) +
                  " had to be resubmitted next, with that ID" + where);
        t.paging_first.clear();
      } else {
        t.paging_first.pop_front();
      }
    } else if (resubmission && !pk.paging && last_fence_.count(pk.seq) && last_fence_[pk.seq] == pk.fence_id) {
      violation("T6: a render packet resubmitted with its old fence ID" + where);
    }
    last_fence_[pk.seq] = pk.fence_id;
    t.inhw[pk.seq] = {pk.fence_id, pk.paging};
    t.max_submitted = std::max(t.max_submitted, pk.fence_id);
  });
  chain(o.retired, [this](const DmaPacket& pk) { track(pk).inhw.erase(pk.seq); });
  chain(o.completed_moved, [this](int node, uint64_t from, uint64_t to, const char* why) {
    Track& t = nodes_[node];
    const std::string w = why, where = " on node " + std::to_string(node) + " (" + std::to_string(from) + " -> " +
                                       std::to_string(to) + ")";
    if (w == "a packet completed") {
      if (t.ignoring) violation("T3: a completion moved the last completed fence ID after the snapshot" + where);
      if (to < from) violation("T5: the last completed fence ID went back" + where);
      if (to > t.max_submitted) violation("T5: the last completed fence ID passed the last submitted one" + where);
    } else if (w.rfind("engine reset", 0) == 0) {
      if (to != t.reset_completed)
        violation("T5: after an engine reset the last completed fence ID is not the one the reset returned" + where);
    } else if (w.rfind("adapter reset", 0) == 0) {
      if (to != t.max_submitted)
        violation("T5: after an adapter reset the last completed fence ID is not the last submitted" + where);
    } else {
      violation("T5: the last completed fence ID moved for a reason T5 does not allow (" + w + ")" + where);
    }
    t.completed = to;
  });
  chain(o.reset_returned,
        [this](int node, const DxgkResetEngineArgs& a, uint64_t snap_completed, uint64_t snap_submitted) {
          Track& t = nodes_[node];
          if (a.last_aborted_fence_id < snap_completed || a.last_aborted_fence_id > snap_submitted)
            violation("T4: LastAbortedFenceId " + std::to_string(a.last_aborted_fence_id) + " outside [" +
                      std::to_string(snap_completed) + ", " + std::to_string(snap_submitted) + "] on node " +
                      std::to_string(node));
          // The scheduler ensures the ID is one still in the hardware queue or the last completed one.
          const bool queued = std::any_of(t.inhw.begin(), t.inhw.end(),
                                          [&](const auto& e) { return e.second.fence == a.last_aborted_fence_id; });
          if (!queued && a.last_aborted_fence_id != snap_completed)
            violation("T4: LastAbortedFenceId " + std::to_string(a.last_aborted_fence_id) +
                      " is neither in the hardware queue nor the last completed " + std::to_string(snap_completed) +
                      " on node " + std::to_string(node));
          t.reset_completed = a.last_completed_fence_id;
          // T6: the paging packets in hardware past the aborted one come back first, in ID order.
          std::vector<std::pair<uint64_t, uint64_t>> late;
          for (auto& [seq, h] : t.inhw)
            if (h.paging && h.fence > a.last_aborted_fence_id) late.push_back({h.fence, seq});
          std::sort(late.begin(), late.end());
          t.paging_first.clear();
          for (auto& [fence, seq] : late) t.paging_first.push_back({seq, fence});
        });
  chain(o.step, [this](const TdrStepRecord& s) {
    const std::string at =
        " (" + std::string(to_string(s.step)) + (s.node >= 0 ? ", node " + std::to_string(s.node) : "") + ")";
    if ((s.step == TdrStep::FlushDpc || s.step == TdrStep::AdapterReset) && p_.cpu.dpcs_pending())
      violation("T3 step 5: a DPC is still pending after the flush" + at);
    if (s.step == TdrStep::Snapshot) nodes_[s.node].ignoring = true;
    if (s.step == TdrStep::Recovered || s.step == TdrStep::ExitEmpty) {
      Track& t = nodes_[s.node];
      t.ignoring = false;
      if (s.step == TdrStep::Recovered && t.completed != t.reset_completed)
        violation("T5: the node recovered with its last completed fence ID " + std::to_string(t.completed) +
                  ", not the reset's " + std::to_string(t.reset_completed) + at);
    }
    if (s.step == TdrStep::AdapterReset)  // every ID is spent: the engine-reset order no longer applies
      for (auto& [n, t] : nodes_) t.paging_first.clear();
    if (s.step == TdrStep::AdapterRecovered)
      for (auto& [n, t] : nodes_) {
        t.ignoring = false;
        if (t.completed != t.max_submitted)
          violation("T5: after the adapter reset node " + std::to_string(n) + "'s last completed fence ID " +
                    std::to_string(t.completed) + " is not its last submitted " + std::to_string(t.max_submitted));
      }
  });
  chain(o.preempted, [this](int node, uint64_t reported, uint64_t os_completed) {
    if (reported < os_completed)
      violation("T5: DMA_PREEMPTED's LastCompletedFenceId " + std::to_string(reported) +
                " is below the node's last completed " + std::to_string(os_completed) + " on node " +
                std::to_string(node) + " (the driver must report the value it keeps)");
  });
  chain(o.device_error, [this](const SchedDevice& d) {
    if (d.system) violation("T7: the system device was put in error state");
  });
  // VidMm's own paging (T7) and the local memory BACO loses.
  auto vidmm_packet = [this](const DmaPacket& pk) { return pk.paging && pk.ctx == p_.vidmm.paging_context(); };
  chain(o.retired, [this, vidmm_packet](const DmaPacket& pk) {
    if (vidmm_packet(pk) && pk.state == DmaPacket::Aborted) ++vidmm_aborted_;
  });
  chain(p_.vidmm.observer.paging_done, [this](const DmaPacket& pk) {
    if (pk.state != DmaPacket::Completed)
      violation("T7: VidMm counted a paging packet done that did not complete (fence ID " +
                std::to_string(pk.fence_id) + ")");
  });
  chain(o.submitted, [this](const DmaPacket& pk, bool) {
    if (awaiting_restore_ && !pk.paging)
      violation("BACO: a render packet was submitted before VidMm restored the local memory (fence ID " +
                std::to_string(pk.fence_id) + ")");
  });
  chain(o.step, [this](const TdrStepRecord& s) {
    if (s.step == TdrStep::AdapterRecovered) awaiting_restore_ = !vram_before_.empty();
    if (s.step != TdrStep::AdapterReset) return;
    vram_before_.clear();
    for (auto& a : p_.vidmm.all())
      if (a->resident && a->segment == Segment::Local) {
        std::vector<uint8_t>& b = vram_before_[a->addr];
        b.resize(a->bytes);
        p_.gpu.vram.peek(a->addr, b.data(), unsigned(a->bytes));
      }
  });
  chain(p_.vidmm.observer.vram_lost, [this] { vram_lost_ = true; });
  chain(p_.vidmm.observer.vram_restored, [this] {
    vram_lost_ = awaiting_restore_ = false;
    std::vector<uint8_t> now;
    for (auto& [addr, before] : vram_before_) {
      now.resize(before.size());
      p_.gpu.vram.peek(addr, now.data(), unsigned(now.size()));
      if (now != before)
        violation("BACO: the local allocation at " + std::to_string(addr) +
                  " does not hold after VidMm's restore what it held before the adapter reset");
    }
    vram_before_.clear();
  });
}

TdrRulesMonitor::Track& TdrRulesMonitor::track(const DmaPacket& pk) {
  return nodes_[int(PacketScheduler::engine_of(pk.ctx) * p_.kmd.nodes_per_engine() + pk.ctx->node_ordinal)];
}

void TdrRulesMonitor::violation(const std::string& what) {
  if (violations_++ == 0) first_ = what;
}

void TdrRulesMonitor::finish(Results& r) {
  if (!p_.vidsch.packets().active()) return;
  if (p_.vidmm.paging_redone() < vidmm_aborted_)
    violation("T7: " + std::to_string(vidmm_aborted_ - p_.vidmm.paging_redone()) +
              " paging packet(s) of VidMm's aborted by a reset were never submitted again");
  if (vram_lost_ && !vram_before_.empty())
    violation("BACO: the adapter reset lost the local memory and VidMm never restored its resident allocations");
  r.monitors["tdr_rules"] = violations_;
  if (violations_) r.metric("tdr_rules_first_violation", first_);
}

namespace {
const MonitorRegistration kRegistered{"tdr_rules", attach_monitor<TdrRulesMonitor>};
}  // namespace

}  // namespace gpumodel
