// Monitor of the native fence log promises (F16-F18), independent of Dxgkrnl's own reading: it observes
// the entries the GPU writes (the engines' signal entries, the CMP's wait entries) and the entries
// Dxgkrnl reads; it never drives the model. Reported when vidsch.native_fence_logs is on.
//  * log_timestamps: in the order Dxgkrnl reads a log, an entry's FenceEndGpuTimestamp is below the last
//    non-zero one before it (the document: "timestamps can never go backwards"; zero is allowed, a skipped write).
//  * log_entry_stale: Dxgkrnl read an entry at a position the log's index had passed whose content is
//    not what the GPU wrote there: it read before the entry's write was visible (F17: the KMD's barrier
//    in DxgkDdiUpdateNativeFenceLogs is what prevents it). An overwritten (overrun) position is not
//    read, since Dxgkrnl detects the overrun first (F18).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hw_model/gpu/fence_log.h"
#include "monitors/monitor.h"
#include "monitors/results.h"
#include "platform/platform.h"

namespace gpumodel {

class FenceLogMonitor : public Monitor {
 public:
  explicit FenceLogMonitor(Platform& p);
  void finish(Results& r) override;
  uint64_t backwards() const { return backwards_; }
  uint64_t stale() const { return stale_; }

 private:
  // The last 2 * N entries written (N: a log's entries, more while tracing), by sequence number: slot
  // seq % (2 * N) holds seq's (sequence numbers run one by one, so a slot holding another is an entry not
  // kept).
  size_t kept_;
  struct Slot {
    uint64_t seq = ~uint64_t(0);  // none
    fence_log::Entry e{};
  };
  struct Log {
    std::vector<Slot> written;  // kept_ slots, from the first entry written
    uint64_t last_end = 0;      // the last non-zero end timestamp read
  };
  void written(int queue, uint32_t type, uint64_t seq, const void* entry);
  void read(int queue, uint32_t type, uint64_t pos, const fence_log::Entry& e);
  Platform& p_;
  std::map<std::pair<int, uint32_t>, Log> logs_;
  uint64_t backwards_ = 0, stale_ = 0;
  std::vector<std::string> messages_;
};

}  // namespace gpumodel
