// VidMm, the OS memory manager (minimal), one per adapter: hands out physical ranges of system memory
// and of the adapter's local memory segment. Allocation is bump-pointer; nothing is evicted yet.
// System memory is one heap shared by every adapter's VidMm (one machine, one DRAM), so allocations
// of two adapters never overlap; a cross-adapter resource (seed 004) is allocated there.
#pragma once
#include <cstdint>
#include <string>

namespace gpumodel {

enum class Segment { System, Local };

// A physical range handed out bump-pointer style.
class PhysHeap {
 public:
  PhysHeap(uint64_t base, uint64_t size, std::string what) : base_(base), size_(size), next_(base), what_(std::move(what)) {}
  // A request that does not fit is a model fault (reported; returns the base).
  uint64_t allocate(uint64_t bytes, uint64_t align);
  uint64_t base() const { return base_; }
  uint64_t size() const { return size_; }
  uint64_t used() const { return next_ - base_; }

 private:
  uint64_t base_, size_, next_;
  std::string what_;  // names the parameter that sizes it, for the fault message
};

// A cross-adapter resource's layout (d3dukmdt.h: D3DKMT_CROSS_ADAPTER_RESOURCE_PITCH_ALIGNMENT 128,
// D3DKMT_CROSS_ADAPTER_RESOURCE_HEIGHT_ALIGNMENT 4; PARAMETERS.md).
struct CrossAdapterSurface {
  static constexpr uint32_t kPitchAlignment = 128;
  static constexpr uint32_t kHeightAlignment = 4;
  uint64_t address = 0;
  uint32_t width = 0, height = 0, bytes_per_pixel = 0;
  uint32_t pitch = 0;  // bytes per row, a multiple of kPitchAlignment
  uint32_t rows = 0;   // allocated rows, a multiple of kHeightAlignment
  uint64_t bytes() const { return uint64_t(pitch) * rows; }
};

class VidMm {
 public:
  VidMm(PhysHeap& system, uint64_t local_base, uint64_t local_size, std::string local_what);
  // Returns the physical address; a request that does not fit is a model fault (reported).
  uint64_t allocate(Segment seg, uint64_t bytes, uint64_t align = 4096);
  // D3D11/12 CrossAdapter resource (seed 004, C1-C3): in system memory, visible to every adapter.
  CrossAdapterSurface allocate_cross_adapter(uint32_t width, uint32_t height, uint32_t bytes_per_pixel);
  uint64_t local_base() const { return local_.base(); }
  uint64_t local_size() const { return local_.size(); }

 private:
  PhysHeap& sys_;
  PhysHeap local_;
};

}  // namespace gpumodel
