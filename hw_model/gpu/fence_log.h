// The native fence log buffer (Native GPU fence object 'Native fence log buffer design', F16): the byte layout the GPU
// writes and Dxgkrnl reads, DXGK_NATIVE_FENCE_LOG_HEADER / _ENTRY / _BUFFER of d3dukmdt.h (public WDK
// header mirrors; docs/calibration.md: a 4096-B buffer, a 40-B header, 48-B entries, so 84 entries).
#pragma once
#include <cstddef>
#include <cstdint>

namespace gpumodel::fence_log {

enum Type : uint32_t { kWaits = 1, kSignals = 2 };                      // DXGK_NATIVE_FENCE_LOG_TYPE
enum Operation : uint32_t { kSignalExecuted = 0, kWaitUnblocked = 1 };  // DXGK_NATIVE_FENCE_LOG_OPERATION

struct Header {                     // DXGK_NATIVE_FENCE_LOG_HEADER
  uint32_t first_free_entry_index;  // together with the next field: AtomicWraparoundAndEntryIndex, one
  uint32_t wraparound_count;        // 64-bit value the GPU writes at once (never torn)
  uint32_t type;                    // Type
  uint32_t pad0;
  uint64_t number_of_entries;  // NumberOfEntries
  uint64_t reserved[2];
};
struct Entry {              // DXGK_NATIVE_FENCE_LOG_ENTRY
  uint64_t fence_value;     // FenceValue (UMD payload)
  uint32_t h_native_fence;  // hNativeFence (UMD payload: the fence's user-mode handle)
  uint32_t operation_type;  // OperationType (UMD payload)
  uint64_t reserved0;
  uint64_t fence_observed_gpu_timestamp;  // WAIT_UNBLOCKED: when the engine saw the unresolved wait and stalled
  uint64_t reserved1;
  uint64_t fence_end_gpu_timestamp;  // when the operation completed on the GPU
};
static_assert(sizeof(Header) == 40 && offsetof(Header, number_of_entries) == 16, "DXGK_NATIVE_FENCE_LOG_HEADER");
static_assert(sizeof(Entry) == 48 && offsetof(Entry, fence_observed_gpu_timestamp) == 24 &&
                  offsetof(Entry, fence_end_gpu_timestamp) == 40,
              "DXGK_NATIVE_FENCE_LOG_ENTRY");

constexpr uint64_t kBufferBytes = 4096;  // the document: "two dedicated 4-KB log buffers per HWQueue"
constexpr uint32_t kEntries = uint32_t((kBufferBytes - sizeof(Header)) / sizeof(Entry));  // 84
static_assert(kEntries == 84, "docs/calibration.md: 84 entries");

// The entries a log of `bytes` holds (a log enlarged for tracing: more than 84).
constexpr uint32_t entries_in(uint64_t bytes) { return uint32_t((bytes - sizeof(Header)) / sizeof(Entry)); }

inline uint64_t entry_offset(uint32_t index) { return sizeof(Header) + uint64_t(index) * sizeof(Entry); }

// Where the UMD's entry sequence number `seq` lands and what the header says after it: the entry index
// wraps at NumberOfEntries and every wrap counts in WraparoundCount.
inline uint32_t entry_index(uint64_t seq, uint32_t entries) { return uint32_t(seq % entries); }
inline uint64_t header_after(uint64_t seq, uint32_t entries) {
  const uint64_t next = seq + 1;
  return (next % entries) | ((next / entries) << 32);  // AtomicWraparoundAndEntryIndex
}
// The position a header names: entries written since the log was set (WraparoundCount * N + index).
inline uint64_t position(uint64_t atomic_wrap_and_index, uint32_t entries) {
  return (atomic_wrap_and_index >> 32) * entries + uint32_t(atomic_wrap_and_index);
}

}  // namespace gpumodel::fence_log
