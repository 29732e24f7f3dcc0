// VidMm, the OS memory manager, one per adapter: hands out physical ranges of system memory and of the
// adapter's local memory segment (bump-pointer), and owns the adapter's GPU VA spaces (gpu_va.h): the
// system (paging) process's, space 0, which the CMP uses (F10), and one per app process.
// System memory is one heap shared by every adapter's VidMm (one machine, one DRAM), so allocations
// of two adapters never overlap; a cross-adapter resource (seed 004) is allocated there.
//
// Global allocations (allocate(): the driver's rings, fence pages, event ring, and what scenarios
// allocate as shared resources) are mapped into every GPU VA space of every adapter that can reach
// them, at a VA equal to their physical address (a layout choice: VA ranges of two segments then never
// collide; the VA stays when the pages move). Their page tables are written straight into page-table
// memory when they are created (the pages were never mapped, so no TLB can hold them).
// Page tables live in the top vidmm.page_table_mb of the local segment.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernel_stub/dxgkrnl/gpu_va.h"

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
  std::vector<class VidMm*> users;  // the VidMms that map this heap's allocations (system memory)

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

class Memory;

class VidMm {
 public:
  // `table_memory`: the memory that holds the local segment (page tables are written into it);
  // `page_table_bytes`: carved from the top of the local segment.
  VidMm(PhysHeap& system, uint64_t local_base, uint64_t local_size, std::string local_what, Memory* table_memory,
        uint64_t page_table_bytes);
  ~VidMm();
  // A global allocation: returns its physical address, which is also its GPU VA in every space; a request
  // that does not fit is a model fault (reported).
  uint64_t allocate(Segment seg, uint64_t bytes, uint64_t align = 4096);
  // GPU VA spaces: 0 = the system (paging) process, n > 0 an app process (created at first use).
  GpuVaSpace& space(int process);
  uint64_t system_root() { return space(0).root(); }
  uint64_t page_table_bytes() const;  // page-table memory in use, every space
  // Writes entries straight into page-table memory (new mappings; see above).
  void write_entries(const std::vector<PteWrite>& w);
  // D3D11/12 CrossAdapter resource (seed 004, C1-C3): in system memory, visible to every adapter.
  CrossAdapterSurface allocate_cross_adapter(uint32_t width, uint32_t height, uint32_t bytes_per_pixel);
  uint64_t local_base() const { return local_.base(); }
  uint64_t local_size() const { return local_.size(); }

 private:
  struct Global {
    uint64_t addr, bytes;
    bool system;
  };
  void map_global(const Global& g);
  PhysHeap& sys_;
  PhysHeap local_;
  PhysHeap tables_;
  Memory* table_mem_;
  std::vector<Global> globals_;
  std::map<int, std::unique_ptr<GpuVaSpace>> spaces_;
};

}  // namespace gpumodel
