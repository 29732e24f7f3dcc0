// A process's GPU virtual address space as VidMm manages it: the page tables of the GPU MMU
// (hw_model/gpu/mmu.h, format pt::) in the adapter's page-table memory, and VidMm's own copy of every
// entry it wrote (as a real memory manager keeps one), so a map or unmap knows what to write without
// reading the GPU's memory. map()/unmap() return the entry writes to make; the caller applies them:
// before the adapter runs, directly into memory (the boot image); at run time as a paging operation
// (DXGK_OPERATION_UPDATE_PAGE_TABLE: WRITE64 packets on the paging engine, then FLUSH_TLB).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace gpumodel {

struct PteWrite {
  uint64_t addr;  // where the entry lives (physical, page-table memory)
  uint64_t value;
};

class GpuVaSpace {
 public:
  // `alloc_table(bytes)`: zeroed page-table memory (physical), aligned to its size.
  using TableAlloc = std::function<uint64_t(uint64_t bytes)>;
  explicit GpuVaSpace(TableAlloc alloc);
  uint64_t root() const { return root_; }

  // Maps [va, va + bytes) to [addr, addr + bytes): 64 KiB pages where va and addr are both 64 KiB
  // aligned and a whole 64 KiB page fits, 4 KiB pages elsewhere. `system`: addr is a bus address in
  // system memory. Appends the entry writes (new tables' links included) to `out`.
  void map(uint64_t va, uint64_t addr, uint64_t bytes, bool system, std::vector<PteWrite>& out, bool read_only = false);
  // Creates every table [va, va + bytes) needs (4 KiB-page tables), entries invalid: a window whose
  // tables are always resident (the paging process's, A4).
  void reserve(uint64_t va, uint64_t bytes, std::vector<PteWrite>& out);
  // Invalidates the entries of [va, va + bytes) (tables stay).
  void unmap(uint64_t va, uint64_t bytes, std::vector<PteWrite>& out);
  uint64_t table_bytes() const { return table_bytes_; }  // page-table memory this space holds
  uint64_t mapped_bytes() const { return mapped_; }

 private:
  uint64_t table(uint64_t parent_entry_addr, uint64_t bytes, std::vector<PteWrite>& out);
  void write(uint64_t addr, uint64_t value, std::vector<PteWrite>& out);
  uint64_t l1_entry(uint64_t va, std::vector<PteWrite>& out);  // the dual PDE's address (allocating tables)
  TableAlloc alloc_;
  uint64_t root_;
  uint64_t table_bytes_ = 0, mapped_ = 0;
  std::map<uint64_t, uint64_t> entries_;  // VidMm's copy: entry address -> value
};

}  // namespace gpumodel
