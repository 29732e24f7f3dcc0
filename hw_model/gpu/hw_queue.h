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
  uint32_t ring_size = 0;   // bytes, power of two
  uint64_t rptr_addr = 0;   // write-back address of the read pointer (0: none)
  uint32_t priority = 0;
  uint64_t pt_root = 0;     // page-table root of the ring's GPU VA space (GPU MMU; BAR0 kQPageTable)
  uint64_t ctx_root = 0;    // the running context's space: pt_root until a SET_PAGE_TABLE packet changes it
  uint64_t wptr = 0;        // bytes ever written (from the doorbell), monotonic
  uint64_t rptr = 0;        // bytes ever executed, monotonic
  bool blocked = false;     // waiting on a fence on the GPU (F5)
  bool faulted = false;     // its engine stopped it on a malformed packet; re-enabling clears it
  uint32_t wait_slot = 0;
  uint64_t wait_value = 0;
  bool runnable() const { return enabled && !blocked && !faulted && rptr < wptr; }
};

}  // namespace gpumodel
