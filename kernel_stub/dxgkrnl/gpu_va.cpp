#include "kernel_stub/dxgkrnl/gpu_va.h"

#include "hw_model/gpu/mmu.h"

namespace gpumodel {

GpuVaSpace::GpuVaSpace(TableAlloc alloc) : alloc_(std::move(alloc)) {
  root_ = alloc_(pt::kTableBytes);
  table_bytes_ = pt::kTableBytes;
}

void GpuVaSpace::write(uint64_t addr, uint64_t value, std::vector<PteWrite>& out) {
  auto it = entries_.find(addr);
  const uint64_t old = it == entries_.end() ? 0 : it->second;
  if (old == value) return;  // already so (a page shared by two small allocations)
  entries_[addr] = value;
  out.push_back({addr, value});
}

uint64_t GpuVaSpace::table(uint64_t entry, uint64_t bytes, std::vector<PteWrite>& out) {
  auto it = entries_.find(entry);
  if (it != entries_.end() && (it->second & pt::kValid)) return it->second & pt::kTableMask;
  const uint64_t t = alloc_(bytes);
  table_bytes_ += bytes;
  write(entry, t | pt::kValid, out);
  return t;
}

uint64_t GpuVaSpace::l1_entry(uint64_t va, std::vector<PteWrite>& out) {
  const uint64_t l2 = table(root_ + 8ull * pt::index(va, 3), pt::kTableBytes, out);
  const uint64_t l1 = table(l2 + 8ull * pt::index(va, 2), pt::kL1TableBytes, out);
  return l1 + 16ull * pt::index(va, 1);
}

void GpuVaSpace::map(uint64_t va, uint64_t addr, uint64_t bytes, bool system, std::vector<PteWrite>& out,
                     bool read_only) {
  const uint64_t flags = pt::kValid | (system ? pt::kSystem : 0) | (read_only ? pt::kReadOnly : 0);
  // Whole 4 KiB pages covering the range.
  const uint64_t start = va & ~(pt::kSmallPage - 1), end = (va + bytes + pt::kSmallPage - 1) & ~(pt::kSmallPage - 1);
  addr -= va - start;
  for (uint64_t v = start, a = addr; v < end;) {
    const uint64_t pde = l1_entry(v, out);
    if (v % pt::kBigPage == 0 && a % pt::kBigPage == 0 && end - v >= pt::kBigPage) {
      const uint64_t big = table(pde + 8, pt::kBigTableBytes, out);
      write(big + 8ull * pt::big_index(v), (a & pt::kAddrMask) | flags, out);
      v += pt::kBigPage, a += pt::kBigPage, mapped_ += pt::kBigPage;
    } else {
      const uint64_t small = table(pde, pt::kTableBytes, out);
      write(small + 8ull * pt::index(v, 0), (a & pt::kAddrMask) | flags, out);
      v += pt::kSmallPage, a += pt::kSmallPage, mapped_ += pt::kSmallPage;
    }
  }
}

void GpuVaSpace::reserve(uint64_t va, uint64_t bytes, std::vector<PteWrite>& out) {
  for (uint64_t v = va & ~(pt::kPdeSpan - 1); v < va + bytes; v += pt::kPdeSpan) {
    const uint64_t pde = l1_entry(v, out);
    table(pde, pt::kTableBytes, out);
    table(pde + 8, pt::kBigTableBytes, out);
  }
}

void GpuVaSpace::unmap(uint64_t va, uint64_t bytes, std::vector<PteWrite>& out) {
  const uint64_t start = va & ~(pt::kSmallPage - 1), end = (va + bytes + pt::kSmallPage - 1) & ~(pt::kSmallPage - 1);
  for (uint64_t v = start; v < end;) {
    const uint64_t pde = l1_entry(v, out);
    auto small = entries_.find(pde);
    if (small != entries_.end() && (small->second & pt::kValid)) {
      const uint64_t e = (small->second & pt::kTableMask) + 8ull * pt::index(v, 0);
      auto it = entries_.find(e);
      if (it != entries_.end() && (it->second & pt::kValid)) {
        write(e, 0, out);
        mapped_ -= pt::kSmallPage;
        v += pt::kSmallPage;
        continue;
      }
    }
    auto big = entries_.find(pde + 8);
    if (big != entries_.end() && (big->second & pt::kValid) && v % pt::kBigPage == 0) {
      const uint64_t e = (big->second & pt::kTableMask) + 8ull * pt::big_index(v);
      auto it = entries_.find(e);
      if (it != entries_.end() && (it->second & pt::kValid)) {
        write(e, 0, out);
        mapped_ -= pt::kBigPage;
        v += pt::kBigPage;
        continue;
      }
    }
    v += pt::kSmallPage;
  }
}

}  // namespace gpumodel
