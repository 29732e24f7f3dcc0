// GPU MMU: per-process GPU virtual address spaces, translated by a TLB in front of each engine and of
// the CMP, with a page walk through the owner's memory port (TLM reads) on a miss.
//
// Page-table format (pt::), in memory (the dGPU's VRAM; the iGPU's stolen memory), 48-bit GPU VA:
//   root (L3) VA[47:39] -> L2 VA[38:30] -> L1 VA[29:21]: 512 eight-byte entries per 4 KiB table;
//   an L1 entry is a dual PDE (16 bytes, so L1 tables are 8 KiB): [+0] a 4 KiB-page table (512 PTEs,
//   VA[20:12]), [+8] a 64 KiB-page table (32 PTEs, VA[20:16]), either or both present (as NVIDIA's
//   dual PDEs: small and big pages share a 2 MiB region). The walk reads the small PTE when the small
//   table exists, and the big PTE when there is no valid small one: 4 reads, 5 on that fallback.
//   An entry: bit 0 valid, bit 1 read-only (a GPU write to the page faults: a native fence's MonitoredValue,
//   which the document makes readable to the GPU with no write access), bit 2 system (the address is a bus address in
//   system memory: the DMA goes up to the host, through the IOMMU under an IOMMU addressing model), bits [51:12] the
//   page (a PTE) or bits [51:8] the next table (a PDE; a 64 KiB-page table is 256 B).
// A translation is (root, VA) -> address; the root is the physical address of a process's L3 table
// (the HW queue's, or one a SET_PAGE_TABLE packet installs); root 0 = the MMU is off (bring-up: VAs
// are physical; the KMD always programs roots).
//
// TLB: mmu.tlb_entries entries, mmu.tlb_ways-way set associative, LRU, tagged by (root, page), so a
// process switch needs no flush. A hit adds no time; a miss walks (each level one TLM read, waiting
// for it), except that a page-walk cache (mmu.pwc_entries, LRU) keeps the dual PDEs of recent 2 MiB
// regions: a miss in such a region reads only its PTE (and the 64 KiB one on the fallback); a miss in a 64 KiB region
// another walk of the unit is already fetching waits for that walk and looks again (miss coalescing). Invalidation: by
// root or all (BAR0 kMmuInvalidate, or a FLUSH_TLB packet).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <systemc>

#include "hw_model/core/params.h"

namespace gpumodel {

namespace pt {
constexpr uint64_t kValid = 1, kReadOnly = 2, kSystem = 4;
constexpr uint64_t kAddrMask = 0x000F'FFFF'FFFF'F000ull;   // a page (PTE)
constexpr uint64_t kTableMask = 0x000F'FFFF'FFFF'FF00ull;  // a table (PDE): tables are 256 B aligned at least
constexpr uint64_t kSmallPage = 4096, kBigPage = 65536;
constexpr uint64_t kTableBytes = 4096;       // L3, L2, small PT
constexpr uint64_t kL1TableBytes = 8192;     // dual PDEs
constexpr uint64_t kBigTableBytes = 32 * 8;  // 64 KiB-page table
constexpr uint64_t kPdeSpan = 1ull << 21;    // what one L1 entry covers (2 MiB)
constexpr uint64_t kVaBits = 48;
inline unsigned index(uint64_t va, int level) { return unsigned(va >> (12 + 9 * level)) & 511; }  // level 3..0
inline unsigned big_index(uint64_t va) { return unsigned(va >> 16) & 31; }
}  // namespace pt

class GpuMmu {
 public:
  static void declare_params(ParamSet& ps);
  // `read`: the owner's memory port (a blocking TLM read, called from the owner's thread).
  using Read = std::function<void(uint64_t addr, void* dst, unsigned len)>;
  GpuMmu(const ParamSet& ps, Read read);

  struct Result {
    bool ok = false;
    uint64_t addr = 0;       // the translated address
    uint64_t page_left = 0;  // bytes from va to the end of its page (an access must not cross it)
    bool system = false;     // the address is in system memory (a bus address)
    bool read_only = false;  // the page is read-only (a write to it is a protection fault)
  };
  // Translates `va` in the space `root`; may block for a walk (a miss). !ok: a page fault.
  Result translate(uint64_t root, uint64_t va);
  // Only the TLB (no walk, no time): for a method that cannot wait. !ok: a miss (or root 0 is not).
  Result lookup(uint64_t root, uint64_t va);
  void invalidate(uint64_t root);  // root 0: every entry

  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  uint64_t walk_reads() const { return walk_reads_; }
  uint64_t faults() const { return faults_; }
  uint64_t invalidations() const { return invalidations_; }
  uint64_t pwc_hits() const { return pwc_hits_; }

 private:
  struct Entry {
    uint64_t root = 0, vpn = 0, frame = 0;  // vpn / frame: va / page size
    uint64_t lru = 0;
    bool valid = false, big = false, system = false, read_only = false;
  };
  Entry* find(uint64_t root, uint64_t va, bool big);
  // Walks in flight, by (root, 64 KiB region): a second miss in the region waits for the first walk
  // and looks again (miss coalescing), instead of walking the same tables twice.
  std::vector<std::pair<uint64_t, uint64_t>> walking_;
  sc_core::sc_event walk_done_;
  uint64_t coalesced_ = 0;

 public:
  uint64_t coalesced() const { return coalesced_; }  // misses that waited for another walk
 private:
  void insert(uint64_t root, uint64_t va, bool big, uint64_t frame, bool system, bool read_only);
  uint64_t read64(uint64_t addr);
  Result walk(uint64_t root, uint64_t va);
  unsigned sets_, ways_;
  std::vector<Entry> tlb_;
  struct Pde {
    uint64_t root = 0, region = 0, lru = 0;  // region: va / 2 MiB
    uint64_t pde[2] = {0, 0};
    bool valid = false;
  };
  std::vector<Pde> pwc_;
  uint64_t pwc_hits_ = 0;
  uint64_t tick_ = 0;
  Read read_;
  uint64_t hits_ = 0, misses_ = 0, walk_reads_ = 0, faults_ = 0, invalidations_ = 0;
};

}  // namespace gpumodel
