#include "monitors/fence_monitors.h"

#include <algorithm>

namespace gpumodel {

using namespace sc_core;

void Monitors::declare_params(ParamSet& ps) {
  ps.declare_real("monitor.wake_bound_ns", 100000, "ns", 1, 1e12,
                  "A: 100 us, ten times the 5-10 us signal-to-wake path (docs/calibration.md), so queueing "
                  "behind other DPCs does not count, a lost interrupt (rescued only by a later signal "
                  "or never) does");
  ps.declare_int("trace.fences", 4, "fences", 0, 64, "A: the first four fences are traced in the VCD");
}

Monitors::Monitors(Platform& p)
    : p_(p), bound_(p.params.get_ns("monitor.wake_bound_ns")), trace_limit_(int(p.params.get_int("trace.fences"))) {
  waiters_id_ = p_.vcd.add("os.waiters", 16);
  lost_id_ = p_.vcd.add("monitor.lost_interrupt", 1);
  lost_fence_id_ = p_.vcd.add("monitor.lost_fence", 16, 0xffff);
  p_.vidsch.observer.fence_created = [this](const NativeFence& f) { on_fence(f); };
  p_.gpu.cmp.on_fence_decision = [this](uint32_t slot, uint64_t value, bool raise, bool mv_check) {
    on_decision(slot, value, raise, mv_check);
  };
  p_.gpu.cmp.on_mv_update_queued = [this](uint32_t slot) { ++mv_updates_[slot].first; };
  p_.vidsch.observer.waiter_added = [this](const CpuWaiter& w) {
    Pending& pw = waiting_[w.id];
    pw.cv_addr = w.fence->cv_addr;
    pw.value = w.value;
    pw.added_at = sc_time_stamp();
    // A monitored fence has no slot and no conditional check: every GPU signal of it interrupts, so its
    // waiters are covered (kNoSlot finds no decision).
    pw.slot = w.fence->handle ? p_.vidsch.slot(*w.fence) : kNoSlot;
    by_cv_addr_[pw.cv_addr].push_back(w.id);
    Memory& m = w.fence->storage == Segment::System ? p_.sysmem : p_.gpu.vram;
    if (const uint64_t cv = m.peek64(pw.cv_addr); cv >= pw.value) reach(pw, cv);
    p_.vcd.set(waiters_id_, p_.vidsch.waiter_count());
  };
  auto gone = [this](const CpuWaiter& w, bool woken) {
    auto it = waiting_.find(w.id);
    if (it != waiting_.end() && it->second.reached) {
      Pending& pw = it->second;
      if (woken && p_.vidsch.resampling()) pw.covered = true;  // F8: the OS's re-read found it
      judge(pw, sc_time_stamp());                              // a quiet CPU past the bound before it left
      if (woken) {
        const sc_time late = sc_time_stamp() - pw.reached_at;
        if (late > max_reach_to_wake_) max_reach_to_wake_ = late;
        if (!pw.covered && !pw.reported) pw.awaits_check = std::max(pw.awaits_check, checks_to_come(pw.slot));
        if (!pw.covered && !pw.reported && pw.awaits_check) {
          // Woken by another signal's interrupt while an MV update of its fence is still to be checked
          // (F7 step 3): that check says whether its own signal would have been reported.
          undecided_[pw.slot].push_back({pw, sc_time_stamp()});
        } else {
          settle(pw, sc_time_stamp());
        }
      }
    }
    waiting_.erase(w.id);
    auto& ids = by_cv_addr_[w.fence->cv_addr];
    for (size_t i = 0; i < ids.size(); ++i)
      if (ids[i] == w.id) {
        ids[i] = ids.back();
        ids.pop_back();
        break;
      }
    p_.vcd.set(waiters_id_, p_.vidsch.waiter_count());
  };
  // Every interrupt handled (the CPU has caught up) ... until the next MSI is latched.
  p_.cpu.on_interrupts_drained = [this] {
    quiet_ = true;
    quiet_since_ = sc_time_stamp();
  };
  p_.intc.on_latched = [this] {
    if (quiet_)
      for (auto& [id, w] : waiting_) judge(w, sc_time_stamp());
    quiet_ = false;
  };
  p_.vidsch.observer.waiter_woken = [gone](const CpuWaiter& w) { gone(w, true); };
  p_.vidsch.observer.waiter_cancelled = [gone](const CpuWaiter& w) { gone(w, false); };
}

void Monitors::on_fence(const NativeFence& f) {
  Memory& m = f.storage == Segment::System ? p_.sysmem : p_.gpu.vram;
  const uint64_t cv = f.cv_addr, mv = f.mv_addr;
  watch_value(cv, m, true);
  if (!f.handle) return;  // a monitored fence: its CV alone (no MV, no slot to trace)
  cv_of_slot_[p_.vidsch.slot(f)] = {cv, &m};
  watch_value(mv, m, false);
  traced_slot_.erase(p_.vidsch.slot(f));  // a reused slot: the fence traced before is not this one
  if (traced_ >= trace_limit_ || !p_.vcd.enabled()) return;
  const std::string base = "fences.f" + std::to_string(traced_++);
  traced_slot_[p_.vidsch.slot(f)] = base;
  const uint64_t sh = p_.gpu.cmp.shadow_mv_addr(p_.vidsch.slot(f));
  // Traced from the values memory holds now (the fence may have been created a while ago).
  const Vcd::Id cv_id = p_.vcd.add(base + ".cv", 64), mv_id = p_.vcd.add(base + ".mv", 64),
                sh_id = p_.vcd.add(base + ".shadow_mv", 64);
  p_.vcd.set(cv_id, m.peek64(cv));
  p_.vcd.set(mv_id, m.peek64(mv));
  p_.vcd.set(sh_id, p_.gpu.vram.peek64(sh));
  m.watch(cv, 8, [this, cv_id, cv, &m](uint64_t, unsigned) { p_.vcd.set(cv_id, m.peek64(cv)); });
  m.watch(mv, 8, [this, mv_id, mv, &m](uint64_t, unsigned) { p_.vcd.set(mv_id, m.peek64(mv)); });
  p_.gpu.vram.watch(sh, 8, [this, sh_id, sh](uint64_t, unsigned) { p_.vcd.set(sh_id, p_.gpu.vram.peek64(sh)); });
}

void Monitors::on_cv_write(uint64_t cv_addr, const Memory& m) {
  if (by_cv_addr_.empty()) return;
  auto it = by_cv_addr_.find(cv_addr);
  if (it == by_cv_addr_.end()) return;
  const uint64_t cv = m.peek64(cv_addr);
  for (uint64_t id : it->second) {
    Pending& w = waiting_.at(id);
    if (!w.reached && cv >= w.value) reach(w, cv);
  }
}

void Monitors::on_decision(uint32_t slot, uint64_t value, bool raise, bool mv_check) {
  // With no CPU waiter anywhere nothing is judged (fence_stress's millions of signals cost one test).
  // A waiter added later, while this signal's CV write is in flight, finds no decision and counts as
  // covered: the one window where a loss could go unseen, and it needs a waiter added after every
  // other waiter left.
  auto c = cv_of_slot_.find(slot);
  if (mv_check) {
    // F7 step 3: the CMP read CV after an MV update and raised for it: every waiter that CV satisfies
    // has its interrupt, and so had those another interrupt woke first.
    if (raise && c != cv_of_slot_.end())
      for (uint64_t id : by_cv_addr_[c->second.first]) {
        Pending& w = waiting_.at(id);
        if (w.value <= value) w.covered = true;
      }
    const uint64_t checked = ++mv_updates_[slot].second;
    if (c != cv_of_slot_.end())
      for (uint64_t id : by_cv_addr_[c->second.first]) {
        Pending& w = waiting_.at(id);
        if (w.awaits_check && w.awaits_check <= checked) w.awaits_check = 0;
      }
    auto u = undecided_.find(slot);
    if (u != undecided_.end()) {
      std::vector<Undecided> still;
      for (Undecided& x : u->second) {
        if (raise && x.w.value <= value) x.w.covered = true;
        if (x.w.covered || x.w.awaits_check <= checked)
          settle(x.w, x.woken_at);
        else
          still.push_back(x);
      }
      if (still.empty())
        undecided_.erase(u);
      else
        u->second = std::move(still);
    }
    return;
  }
  if (waiting_.empty() || c == cv_of_slot_.end()) return;
  auto& d = decisions_[slot];
  // What memory shows already no waiter reaches any more: kept only while its write is in flight.
  d.erase(d.begin(), d.lower_bound(c->second.second->peek64(c->second.first)));
  d[value] = {raise, mv_updates_[slot].first};
}

// A woken waiter's verdict: lost (and rescued) if no interrupt of its own signal, nor F7's or F8's catch
// of it, was on its way; else late if its wake came past the bound, by where the time went.
void Monitors::settle(Pending& w, const sc_time& woken_at) {
  if (!w.covered && !w.reported) violation(w, woken_at);
  if (w.reported) {
    ++overdue_woken_;  // lost, then rescued by an unrelated interrupt
    return;
  }
  if (woken_at - w.reached_at > bound_) {
    if (w.cpu_quiet_past_bound)
      ++late_link_;  // the CPU waited for the interrupt: the GPU or the link
    else
      ++late_busy_;  // the CPU had interrupts to handle all along
  }
}

uint64_t Monitors::checks_to_come(uint32_t slot) {
  const auto& [queued, checked] = mv_updates_[slot];
  return queued > checked ? queued : 0;
}

void Monitors::reach(Pending& w, uint64_t cv) {
  w.reached = true;
  w.reached_at = sc_time_stamp();
  // The signal whose write made CV reach the value: did it raise an interrupt (F3)? A value no engine
  // signalled (a CPU write) is the OS's own to satisfy.
  auto d = decisions_.find(w.slot);
  auto v = d == decisions_.end() ? std::map<uint64_t, Decision>::iterator() : d->second.find(cv);
  w.covered = d == decisions_.end() || v == d->second.end() || v->second.raise;
  // Suppressed while MV updates of the fence are on their way to the CMP: their checks (F7 step 3) are
  // the protocol's catch, still to come.
  if (!w.covered) w.awaits_check = checks_to_come(w.slot);
}

void Monitors::judge(Pending& w, const sc_time& end) {
  if (!w.reached || w.reported || !quiet_) return;
  // The CPU has been quiet since quiet_since_; was it quiet at some moment past the bound?
  const sc_time due = w.reached_at + bound_;
  if (end <= due) return;
  if (!w.covered) w.awaits_check = std::max(w.awaits_check, checks_to_come(w.slot));
  if (w.covered || w.awaits_check) {  // its interrupt, or the check that catches it, is on its way
    w.cpu_quiet_past_bound = true;
    return;
  }
  violation(w, max_time(due, quiet_since_));
}

void Monitors::violation(Pending& w, const sc_time& overdue_at) {
  w.reported = true;
  ++lost_;
  // Mark the window in the waveform: from the moment CV reached the waited value to the moment the
  // waiter became overdue (or the end of the run, for one never woken).
  p_.vcd.set(lost_id_, 1, w.reached_at);
  p_.vcd.set(lost_fence_id_, w.slot, w.reached_at);
  p_.vcd.set(lost_id_, 0, overdue_at);
  const auto t = traced_slot_.find(w.slot);
  lost_list_.push_back({w.slot, t == traced_slot_.end() ? "" : t->second, w.added_at, w.reached_at, overdue_at});
}

void Monitors::watch_value(uint64_t addr, Memory& m, bool cv) {
  const uint64_t page = addr / 4096;
  auto [it, fresh] = fence_pages_.try_emplace(page);
  ValuePage* vp = &it->second;
  if (fresh) {
    vp->base = page * 4096;
    vp->mem = &m;
    // One watch per page: the state a signal's CV write touches is this page's, not a word's, so
    // 16,384 fences stay in the host's caches.
    m.watch_page(vp->base, [this, vp](uint64_t a, unsigned len) { value_page_written(*vp, a, len); });
  }
  const unsigned i = unsigned(addr % 4096) / 8;
  vp->partial.reset(i);                // what the word holds now counts as written whole
  if (vp->cv[i] || vp->mv[i]) return;  // seen before (a reused fence slot): already watched
  (cv ? vp->cv : vp->mv).set(i);
  m.watch_reads(addr, [this, vp, i](uint64_t) {
    // A read returns what memory holds at that moment (Memory samples and calls back at once): torn if
    // the word's last write covered only part of it.
    if (vp->partial[i]) ++torn_;
  });
}

void Monitors::value_page_written(ValuePage& vp, uint64_t a, unsigned len) {
  const uint64_t lo = std::max(a, vp.base) & ~7ull, hi = std::min(a + len, vp.base + 4096);
  for (uint64_t q = lo; q < hi; q += 8) {
    const unsigned i = unsigned(q - vp.base) / 8;
    if (!vp.cv[i] && !vp.mv[i]) continue;
    // Only a write covering the whole word stores a value whole; a partial one is what F1 forbids.
    vp.partial.set(i, !(a <= q && a + len >= q + 8));
    if (vp.cv[i]) on_cv_write(q, *vp.mem);
  }
}

void Monitors::finish(Results& r) {
  // Still waiting at the end: judged against the last quiet stretch; and lost if the model has nothing
  // left to do (nothing will wake it). A run cut short by sim.limit_ms does not judge the rest.
  const sc_time now = sc_time_stamp();
  const bool idle = !sc_pending_activity();
  for (auto& [slot, list] : undecided_)  // their fence's MV updates never got checked
    for (Undecided& x : list) settle(x.w, x.woken_at);
  undecided_.clear();
  for (auto& [id, w] : waiting_) {
    judge(w, now);
    // Nothing left to happen and still waiting on a value CV reached: nothing will wake it, whatever
    // was on its way.
    if (w.reached && !w.reported && idle) {
      ++lost_at_idle_;
      violation(w, std::min(now, w.reached_at + bound_));
    }
  }
  r.monitors["lost_interrupt"] = lost_;
  // Each lost interrupt as events (its fence's traced scope, if traced), by the time CV reached the
  // waited value: the waiter added (MV lowered), CV reached, judged overdue. The waveform's view is the
  // first one's race, added to reached (when they lie within 50 us; else around reached).
  std::stable_sort(lost_list_.begin(), lost_list_.end(),
                   [](const Lost& a, const Lost& b) { return a.reached < b.reached; });
  for (size_t i = 0; i < lost_list_.size(); ++i) {
    const Lost& l = lost_list_[i];
    const std::string fence = l.slot == kNoSlot ? std::string("monitored fence") : "slot " + std::to_string(l.slot);
    const bool race = l.reached - l.added <= sc_time(50, SC_US);
    r.event("armed " + fence, l.added.value(), i == 0 && race, l.trace);
    r.event("lost " + fence, l.reached.value(), i == 0, l.trace);
    r.event("overdue " + fence, l.overdue.value(), false, l.trace);
  }
  r.metric("max_reach_to_wake_ns", to_ns(max_reach_to_wake_));
  // Of the violations, how many waiters were woken after all (rescued by a later signal or the F8
  // re-read, or an interrupt that came past the bound while the CPU sat idle: a CMP or link too slow
  // to keep it), the rest never or given up.
  r.metric("overdue_woken_later", overdue_woken_);
  // Waiters past the bound while the CPU never caught up with its interrupts: late (an interrupt storm
  // the CPU cannot keep up with), not lost; woken or given up in the end.
  r.metric("late_cpu_busy", late_busy_);
  // Waiters whose interrupt came, but past the bound while the CPU waited for it: the GPU or the link
  // delayed the signal or its interrupt (a CMP too slow, a narrow link).
  r.metric("late_gpu_or_link", late_link_);
  // Of the lost, those still waiting when the run went idle (an untimed wait nothing will end).
  r.metric("lost_at_idle", lost_at_idle_);
  r.monitors["torn_value"] = torn_;
}

namespace {
const MonitorRegistration kRegistered{"fence_values", attach_monitor<Monitors>, Monitors::declare_params};
}  // namespace

}  // namespace gpumodel
