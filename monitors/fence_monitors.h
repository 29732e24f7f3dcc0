// Independent monitors of the documents' promises. They observe memory (writes and reads of fence
// values) and the OS's waiter list (VidSch notifications); they never drive the model. Their verdicts
// go into the results; a violation fails the run unless the scenario expects it.
//  * lost_interrupt: a CPU waiter whose value CurrentValue reached and that is still waiting when,
//    more than monitor.wake_bound_ns later, the CPU has handled every interrupt it received (no MSI
//    latched, no ISR or DPC pending): the interrupt that should wake it did not come (F3, F7, F8). Also
//    one still waiting when the model has nothing left to do. A waiter woken late because the CPU is
//    still working through earlier interrupts (an interrupt storm) is late, not lost: counted in
//    late_cpu_busy. The monitor judges when MSIs arrive, waiters leave and the run ends; it schedules
//    nothing, so it cannot change the run. Limit: under a storm that never lets the CPU catch up, a
//    loss rescued by a later interrupt of the same fence before the CPU catches up is not told from
//    lateness.
//  * torn_value: a read of a fence's 64-bit CurrentValue or MonitoredValue whose last write covered only
//    part of it (F1): the read returns bytes of two writes. A read returns what memory holds when it
//    samples, and the monitor judges it then.
// They also trace the first trace.fences fences (CV, OS MV, shadow MV) and the waiter count.
#pragma once
#include <bitset>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "monitors/monitor.h"
#include "monitors/results.h"
#include "platform/platform.h"

namespace gpumodel {

class Monitors : public Monitor {
 public:
  static void declare_params(ParamSet& ps);
  explicit Monitors(Platform& p);
  void finish(Results& r) override;

  uint64_t lost_interrupts() const { return lost_; }
  uint64_t torn_values() const { return torn_; }
  uint64_t overdue_woken_later() const { return overdue_woken_; }

 private:
  struct Pending {
    uint64_t cv_addr, value;
    uint32_t slot = 0;  // kNoSlot: a monitored fence's
    bool reached = false, reported = false;
    // An interrupt is on its way for it: the signal that reached its value raised one (F3), or the
    // CMP's re-read after an MV update did (F7 step 3), or the OS's re-read after the update woke it (F8).
    bool covered = false;
    bool cpu_quiet_past_bound = false;  // the CPU had handled every interrupt past the bound: a GPU or link delay
    // Its signal raised nothing while MV updates of its fence were queued at the CMP: their checks
    // (F7 step 3), up to this count of the fence's updates, decide whether it is caught. 0: none.
    uint64_t awaits_check = 0;
    sc_core::sc_time reached_at;
    sc_core::sc_time added_at;  // the OS added it (and lowered MV)
  };
  static constexpr uint32_t kNoSlot = ~0u;
  void on_decision(uint32_t slot, uint64_t value, bool raise, bool mv_check);
  void on_fence(const NativeFence& f);
  void on_cv_write(uint64_t cv_addr, const Memory& m);
  void reach(Pending& w, uint64_t cv);
  void judge(Pending& w, const sc_core::sc_time& end);
  void violation(Pending& w, const sc_core::sc_time& overdue_at);
  struct ValuePage;
  void watch_value(uint64_t addr, Memory& m, bool cv);
  void value_page_written(ValuePage& vp, uint64_t a, unsigned len);

  Platform& p_;
  sc_core::sc_time bound_;
  std::unordered_map<uint64_t, Pending> waiting_;                   // by waiter id
  std::unordered_map<uint64_t, std::vector<uint64_t>> by_cv_addr_;  // cv address -> waiter ids
  // A page holding fence values (CVs or MVs, packed at the caps' stride) and what the monitors know of
  // its words: which are fences' values, and which were last written only in part (torn_value).
  struct ValuePage {
    uint64_t base = 0;
    const Memory* mem = nullptr;
    std::bitset<512> cv, mv, partial;
  };
  std::unordered_map<uint64_t, ValuePage> fence_pages_;  // by page number (elements stay put)
  uint64_t lost_ = 0, torn_ = 0, overdue_woken_ = 0, late_busy_ = 0, late_link_ = 0, lost_at_idle_ = 0;
  // Per fence slot with CPU waiters, the interrupt decisions of signals whose CV writes may not be
  // visible yet (value -> raised), trimmed to the values above what memory holds.
  struct Decision {
    bool raise;
    uint64_t queued;  // the fence's MV updates queued at the CMP by then
  };
  std::unordered_map<uint32_t, std::map<uint64_t, Decision>> decisions_;
  std::unordered_map<uint32_t, std::pair<uint64_t, const Memory*>> cv_of_slot_;
  // MV updates queued at the CMP and not yet checked (F7 step 3), per slot; and the waiters woken, before
  // that check, by an interrupt that was not their signal's: the check decides whether they were lost.
  std::unordered_map<uint32_t, std::pair<uint64_t, uint64_t>> mv_updates_;  // per slot: queued, checked
  struct Undecided {
    Pending w;
    sc_core::sc_time woken_at;
  };
  std::unordered_map<uint32_t, std::vector<Undecided>> undecided_;
  void settle(Pending& w, const sc_core::sc_time& woken_at);
  uint64_t checks_to_come(uint32_t slot);  // the fence's queued MV updates if some are unchecked, else 0
  bool quiet_ = true;                      // every interrupt received so far handled, since quiet_since_
  sc_core::sc_time quiet_since_ = sc_core::SC_ZERO_TIME;
  sc_core::sc_time max_reach_to_wake_ = sc_core::SC_ZERO_TIME;
  int traced_ = 0, trace_limit_;
  std::unordered_map<uint32_t, std::string> traced_slot_;  // fence slot -> its traced scope ("fences.f3")
  struct Lost {  // a violation, for the results' events: the fence's slot, its traced scope, the window
    uint32_t slot;
    std::string trace;
    sc_core::sc_time added, reached, overdue;
  };
  std::vector<Lost> lost_list_;
  Vcd::Id waiters_id_, lost_id_, lost_fence_id_;
};

}  // namespace gpumodel
