// A hardware queue: a ring buffer in memory that the KMD fills and a node consumes. The CMP owns the
// queue state; the KMD reaches it only through BAR0 registers and doorbells.
#pragma once
#include <cstdint>

#include "hw_model/core/vcd.h"

namespace gpumodel {

struct HwQueue {
  int id = 0;
  int node = 0;
  bool enabled = false;
  uint64_t ring_base = 0;
  uint32_t ring_size = 0;  // bytes, power of two
  uint64_t rptr_addr = 0;  // write-back address of the read pointer (0: none)
  uint32_t priority = 0;
  uint64_t pt_root = 0;   // page-table root of the ring's GPU VA space (GPU MMU; BAR0 kQPageTable)
  uint64_t ctx_root = 0;  // the running context's space: pt_root until a SET_PAGE_TABLE packet changes it
  uint64_t wptr = 0;      // bytes ever written (from the doorbell), monotonic
  uint64_t rptr = 0;      // bytes ever executed, monotonic
  bool blocked = false;   // waiting on a fence on the GPU (F5)
  bool faulted = false;   // its engine stopped it on a malformed packet; re-enabling clears it
  uint32_t wait_slot = 0;
  uint64_t wait_value = 0;
  // Native fence logs (F16), as the KMD programmed them from DxgkDdiSetNativeFenceLogBuffer: the signal
  // log at its GPU VA in the process's space (the engine writes it), the wait log at its system-process
  // GPU VA (the CMP writes it when it unblocks the queue); 0: no log. log_entries: NumberOfEntries.
  uint64_t signal_log = 0, wait_log = 0;
  uint32_t log_entries = 0;
  // The blocked WAIT's log payload (its logged form), written when the queue unblocks.
  bool wait_logged = false;
  uint32_t wait_seq = 0, wait_handle = 0;
  uint64_t wait_observed = 0;  // GPU timestamp when the engine saw the unresolved wait and stalled
  bool runnable() const { return enabled && !blocked && !faulted && rptr < wptr; }
};

}  // namespace gpumodel
