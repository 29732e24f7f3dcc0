// Monitor tdr_rules (TDR in Windows 8 and later): watches the packet scheduler's notifications, never drives it, and
// counts every break of the sequence's rules:
//  * T4: the LastAbortedFenceId a reset returned lies within [last completed, last submitted] of the
//    snapshot, and is an ID still in the node's hardware queue or the last completed one;
//  * T5: a DMA_PREEMPTED's LastCompletedFenceId is not below the node's last completed ID (the driver reports
//    the value it keeps, not a register an adapter reset cleared);
//  * T5: a node's last completed fence ID moves only when a packet completes (forward, to an ID that was
//    submitted), to the LastCompletedFenceId an engine reset returned, or to the last submitted ID in an
//    adapter reset;
//  * T6: after an engine reset, the paging packets that were submitted too late are resubmitted first,
//    with their original IDs, in their original order, before any other packet of that node; a render
//    packet is never resubmitted with its old ID; every submitted ID lies above the last completed one;
//  * T7: the system device is never put in error state; a paging packet of VidMm's that a reset aborted is never
//    counted done, and each is submitted again after the adapter reset (by the end of the run);
//  * BACO: after an adapter reset that lost the local memory, VidMm restored it: every local allocation resident at
//    the reset holds after the restore what it held before the reset, and no render packet is submitted before it;
//  * T3: from a node's snapshot to the end of its sequence, no completion of that node moves its last
//    completed ID (its interrupts are ignored); no DPC is pending when step 5 (and an adapter reset's
//    flush) is done; when the node recovers its completed ID is the reset's LastCompletedFenceId, and
//    after an adapter reset every node's is its last submitted ID (T5).
// Its count goes into the results as monitor tdr_rules (present when the packet path ran), with the first
// violation's text as the metric tdr_rules_first_violation.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "monitors/monitor.h"
#include "monitors/results.h"
#include "platform/platform.h"

namespace gpumodel {

class TdrRulesMonitor : public Monitor {
 public:
  explicit TdrRulesMonitor(Platform& p);
  void finish(Results& r) override;
  uint64_t violations() const { return violations_; }

 private:
  struct InHw {
    uint64_t fence;
    bool paging;
  };
  struct Track {
    std::map<uint64_t, InHw> inhw;  // by packet seq
    uint64_t completed = 0, max_submitted = 0, reset_completed = 0;
    std::deque<std::pair<uint64_t, uint64_t>> paging_first;  // (seq, fence) expected next, in order (T6)
    bool ignoring = false;                                   // between its snapshot and the end of its sequence (T3)
  };
  void violation(const std::string& what);
  Track& track(const DmaPacket& p);

  Platform& p_;
  std::map<int, Track> nodes_;
  std::map<uint64_t, uint64_t> last_fence_;               // packet seq -> the ID it was last submitted with
  uint64_t vidmm_aborted_ = 0;                            // VidMm's paging packets a reset aborted
  std::map<uint64_t, std::vector<uint8_t>> vram_before_;  // at the adapter reset: local allocation address -> bytes
  bool vram_lost_ = false, awaiting_restore_ = false;
  uint64_t violations_ = 0;
  std::string first_;
};

}  // namespace gpumodel
